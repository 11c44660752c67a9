/* The checker options shared by `kemu run`, `kemu exec` and `kemu call`,
 * named as compute-sanitizer names them: --tool, --log-file,
 * --error-exitcode, --print-limit, --report-file, --leak-check, and
 * kemu's --racecheck-warp / --racecheck-benign. */
#ifndef KEMU_CLI_CHECKS_H
#define KEMU_CLI_CHECKS_H

#include "kemu/kemu.h"
#include "debug/debug.h"

typedef struct cli_checks {
    kemu_check_config config;
    const char *log_file;
    const char *report_file;
    int error_exitcode;     /* -1: keep the command's own exit status */
    int print_limit;
    const char *cmd;        /* "run", "call" or "exec": how usage errors name the command */
    /* --trace FILE and its filters (--trace-block, --trace-warp, --trace-lines) */
    const char *trace_file;
    dbg_trace_filter trace;
    const char *trace_texts[3]; /* the filters as given (block, warp, lines), for kemu exec's environment */
    dbg *tracer;            /* the tracer of this command, while it runs */
    int tracing;
} cli_checks;

void cli_checks_init(cli_checks *c, const char *cmd);
/* Starts --trace (when given) before the launches: 0, or 2 after a
 * usage error (the file cannot be written). cli_trace_end ends it. */
int cli_trace_begin(cli_checks *c);
void cli_trace_end(cli_checks *c);
/* Handles one option (name with "--", value). Returns 0 if handled, 2
 * after printing a usage error, -1 if the option is not a checker option. */
int cli_check_option(const char *name, const char *value, cli_checks *c);
/* Before the launches: a --log-file or --report-file that names a file
 * the command reads or writes (paths[0..n): the module, the spec, input
 * and output files; NULL entries are skipped) or each other would
 * overwrite it, and one that is a directory could not be written after the
 * launch. Prints an error and returns 2 (usage), or 0 when neither is so. Paths are compared as the files they resolve to,
 * also when they do not exist yet. */
int cli_checks_refuse_overwrite(const cli_checks *c, const char *const *paths, int n);
/* After the launches: prints the report (stderr or --log-file), writes
 * --report-file, and returns --error-exitcode when errors were found, -1
 * to keep the command's status, or -2 when a report file could not be
 * written. */
int cli_checks_finish(cli_checks *c, kemu_device *dev, const char *cmd);
/* The command's exit status after its launches: exit_code when no checker
 * is on, else cli_checks_finish's (--error-exitcode on errors, usage on a
 * report file that could not be written, exit_code otherwise). */
int cli_checks_exit_status(cli_checks *c, kemu_device *dev, const char *cmd, int exit_code);

#endif
