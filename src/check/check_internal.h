/* Internal interface of the checker room: the session, finding records
 * and the per-tool entry points. */
#ifndef KEMU_CHECK_INTERNAL_H
#define KEMU_CHECK_INTERNAL_H

#include <pthread.h>
#include "check/check.h"

enum { CHECK_ERROR = 0, CHECK_WARNING = 1 };

/* One finding. `text` holds its report lines separated by '\n' (without
 * the "========= " prefix); `key` orders findings deterministically. */
typedef struct check_finding {
    int severity;
    int tool;               /* KEMU_TOOL_* */
    uint64_t key[4];        /* launch, then tool-defined (block id, pc, address ...) */
    char *text;
    char *json;             /* one JSON object, or NULL */
} check_finding;

struct check_session {
    kemu_check_config cfg;
    pthread_mutex_t lock;
    check_finding *findings;
    size_t nfindings, capfindings;
    uint64_t launches;      /* launch counter, the first sort key */
    vm_hooks hooks;
    void *race;             /* racecheck state of the current launch */
    void *init;             /* initcheck state */
    void *sync;             /* synccheck state */
};

/* Adds a finding (thread-safe; takes ownership of text and json). */
void check_add(check_session *s, int tool, int severity, const uint64_t key[4], char *text, char *json);

/* The "kernel+line (file.cu:N)" description of an op for reports. */
void check_describe_pc(const vm_launch *L, const vm_frame *f, uint32_t pc, char *buf, size_t n);

#endif
