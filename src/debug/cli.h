/* The gdb-style command front end of the debugger (cmd.c): commands read
 * from scripts (-x) and from a line reader, cuda-gdb's focus commands and
 * reports, printed to one stream. The driver (src/cli/debug.c, or the
 * CUDA runtime for `kemu debug exec`) runs the target between calls. */
#ifndef KEMU_DEBUG_CLI_H
#define KEMU_DEBUG_CLI_H

#include <stdio.h>

#include "debug/debug.h"

typedef struct dbg_cli dbg_cli;

/* Reads one line (malloc'd, without the newline) after showing prompt, or
 * returns NULL at the end of input. */
typedef char *(*dbg_readline_fn)(void *ctx, const char *prompt);

typedef struct dbg_cli_config {
    FILE *out;                /* where everything is printed */
    dbg_readline_fn readline; /* interactive input, or NULL: none */
    void *readline_ctx;
    int batch;                /* -batch: quit when the scripts end */
    const char *target_name;  /* "kemu run", for the exit lines */
    int can_restart;          /* the driver can run the target again (run, reverse, queries) */
} dbg_cli_config;

dbg_cli *dbg_cli_create(const dbg_cli_config *cfg);
void dbg_cli_destroy(dbg_cli *c);
dbg *dbg_cli_debugger(dbg_cli *c);
/* Queues a script (-x FILE) or one command (-ex CMD). 0, or -1 when the
 * file cannot be read (a message was printed). */
int dbg_cli_add_script(dbg_cli *c, const char *path);
int dbg_cli_add_command(dbg_cli *c, const char *command);

/* Reads and runs commands while the target is not running. Returns
 * DBG_CLI_RUN when the target is to be started, DBG_CLI_QUIT to leave. */
enum { DBG_CLI_RUN = 1, DBG_CLI_QUIT = 2 };
int dbg_cli_idle(dbg_cli *c);
/* The target ended with exit status `status` (killed: it was killed). */
void dbg_cli_target_ended(dbg_cli *c, int status);
/* Whether a command failed (for the exit status of -batch runs). */
int dbg_cli_errors(const dbg_cli *c);
/* Whether the user asked to quit during a stop (the driver then ends). */
int dbg_cli_quitting(const dbg_cli *c);

#endif
