/* Checker sessions: the finding list, memcheck's reports of kernel faults,
 * invalid frees and leaks, and the deterministic report in the format of
 * compute-sanitizer. The per-tool analyses that need hooks live in their
 * own files and register in check_launch_begin. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

check_session *check_session_create(const kemu_check_config *cfg)
{
    check_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cfg = *cfg;
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void check_session_destroy(check_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfindings; i++) {
        free(s->findings[i].text);
        free(s->findings[i].json);
    }
    free(s->findings);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void check_add(check_session *s, int tool, int severity, const uint64_t key[4], char *text, char *json)
{
    pthread_mutex_lock(&s->lock);
    if (util_grow(&s->findings, &s->capfindings, s->nfindings + 1, sizeof *s->findings) == 0) {
        check_finding *f = &s->findings[s->nfindings++];
        f->tool = tool;
        f->severity = severity;
        memcpy(f->key, key, sizeof f->key);
        f->text = text;
        f->json = json;
    } else {
        free(text);
        free(json);
    }
    pthread_mutex_unlock(&s->lock);
}

void check_describe_pc(const vm_launch *L, const vm_frame *f, uint32_t pc, char *buf, size_t n)
{
    const bc_function *fn = f ? f->fn : L->kernel;
    const bc_src *src = pc < fn->ncode && fn->code[pc].src < fn->nsrcs ? &fn->srcs[fn->code[pc].src] : NULL;
    int k = snprintf(buf, n, "%s+%u", fn->name, pc);
    if (src && k > 0 && (size_t)k < n) {
        k += snprintf(buf + k, n - (size_t)k, " (%s:%d", L->ptx_filename, src->line);
        if (src->loc_file > 0 && src->loc_file < L->nloc_files && L->loc_files[src->loc_file] && (size_t)k < n)
            k += snprintf(buf + k, n - (size_t)k, ", %s:%d", L->loc_files[src->loc_file], src->loc_line);
        if ((size_t)k < n)
            snprintf(buf + k, n - (size_t)k, ")");
    }
}

const vm_hooks *check_launch_begin(check_session *s, vm_launch *L)
{
    (void)L;
    pthread_mutex_lock(&s->lock);
    s->launches++;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

void check_launch_end(check_session *s, vm_launch *L, const vm_fault *fault)
{
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK) || !fault || !fault->faulted)
        return;
    /* memcheck reports the fault that stopped the kernel */
    const char *kind = fault->status == 700 ? "Invalid memory access" : fault->status == 716 ? "Misaligned address"
                     : fault->status == 710 ? "Device-side assertion failed" : "Kernel fault";
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: %s in kernel %s\n%s", kind, L->kernel->name, fault->message);
    uint64_t key[4] = {s->launches, 0, 0, 0};
    check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
}

void check_note_invalid_free(check_session *s, uint64_t address, const char *api)
{
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK))
        return;
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Invalid free of 0x%llx by %s: not the start of a live device allocation",
                       (unsigned long long)address, api);
    uint64_t key[4] = {s->launches, 1, address, 0};
    check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
}

void check_note_leaks(check_session *s, const mem_space *mem)
{
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK) || !s->cfg.leak_check)
        return;
    uint64_t total = 0, n = 0;
    for (size_t i = 0; i < mem->count; i++) {
        const mem_allocation *a = &mem->allocs[i];
        if (a->kind != MEM_KIND_USER)
            continue;
        util_buffer t = {0};
        util_buffer_printf(&t, "Error: Leaked %llu bytes at 0x%llx (allocation #%llu)", (unsigned long long)a->size,
                           (unsigned long long)a->base, (unsigned long long)a->id);
        uint64_t key[4] = {UINT64_MAX, 2, a->id, 0};
        check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
        total += a->size;
        n++;
    }
    if (n) {
        util_buffer t = {0};
        util_buffer_printf(&t, "LEAK SUMMARY: %llu bytes leaked in %llu allocations", (unsigned long long)total,
                           (unsigned long long)n);
        uint64_t key[4] = {UINT64_MAX, 3, 0, 0};
        check_add(s, KEMU_TOOL_MEMCHECK, CHECK_WARNING + 1, key, t.data, NULL);
    }
}

static int cmp_finding(const void *a, const void *b)
{
    const check_finding *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    return strcmp(x->text, y->text);
}

static void append_prefixed(util_buffer *b, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        util_buffer_printf(b, "========= %.*s\n", (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

static void json_escape(util_buffer *b, const char *s)
{
    util_buffer_append(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            util_buffer_printf(b, "\\%c", c);
        else if (c == '\n')
            util_buffer_append(b, "\\n", 2);
        else if (c < 0x20)
            util_buffer_printf(b, "\\u%04x", c);
        else
            util_buffer_append(b, s, 1);
    }
    util_buffer_append(b, "\"", 1);
}

void check_session_report(check_session *s, int print_limit, util_buffer *text, util_buffer *json, size_t *errors,
                          size_t *warnings)
{
    pthread_mutex_lock(&s->lock);
    qsort(s->findings, s->nfindings, sizeof *s->findings, cmp_finding);
    size_t ne = 0, nw = 0, printed = 0;
    static const char *const tool_names[] = {"", "memcheck", "racecheck", "", "initcheck", "", "", "", "synccheck"};
    if (text)
        util_buffer_printf(text, "========= KEMU\n");
    if (json)
        util_buffer_printf(json, "{\"findings\": [");
    size_t race_e = 0, race_w = 0;
    for (size_t i = 0; i < s->nfindings; i++) {
        const check_finding *f = &s->findings[i];
        if (f->severity == CHECK_ERROR) ne++;
        else if (f->severity == CHECK_WARNING) nw++;
        if (f->tool == KEMU_TOOL_RACECHECK) {
            if (f->severity == CHECK_ERROR) race_e++; else if (f->severity == CHECK_WARNING) race_w++;
        }
        if (text && (print_limit <= 0 || printed < (size_t)print_limit || f->severity > CHECK_WARNING)) {
            append_prefixed(text, f->text);
            if (f->severity <= CHECK_WARNING)
                printed++;
        }
        if (json) {
            util_buffer_printf(json, "%s\n  {\"tool\": \"%s\", \"severity\": \"%s\", \"text\": ", i ? "," : "",
                               f->tool < 9 ? tool_names[f->tool] : "", f->severity == CHECK_ERROR ? "error" : f->severity == CHECK_WARNING ? "warning" : "info");
            json_escape(json, f->text);
            if (f->json)
                util_buffer_printf(json, ", \"details\": %s", f->json);
            util_buffer_printf(json, "}");
        }
    }
    if (text) {
        if (print_limit > 0 && ne + nw > (size_t)print_limit)
            util_buffer_printf(text, "========= %zu more findings not printed (--print-limit %d)\n",
                               ne + nw - (size_t)print_limit, print_limit);
        if (s->cfg.tools & KEMU_TOOL_RACECHECK)
            util_buffer_printf(text, "========= RACECHECK SUMMARY: %zu hazard%s displayed (%zu error%s, %zu warning%s)\n",
                               race_e + race_w, race_e + race_w == 1 ? "" : "s", race_e, race_e == 1 ? "" : "s",
                               race_w, race_w == 1 ? "" : "s");
        util_buffer_printf(text, "========= ERROR SUMMARY: %zu error%s\n", ne, ne == 1 ? "" : "s");
    }
    if (json)
        util_buffer_printf(json, "\n], \"errors\": %zu, \"warnings\": %zu}\n", ne, nw);
    pthread_mutex_unlock(&s->lock);
    if (errors) *errors = ne;
    if (warnings) *warnings = nw;
}
