/* The kemu command: shared declarations of the subcommands (one file per
 * subcommand under src/cli/). Exit codes: 0 success, 1 kernel fault or
 * mismatch, 2 usage/PTX/input error, 3 backend unavailable. */
#ifndef KEMU_CLI_H
#define KEMU_CLI_H

#include <stdio.h>

#include "kemu/kemu.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_UNAVAILABLE 3

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage;   /* full help text */
    int (*run)(int argc, char **argv);
} cli_command;

int cli_run_main(int argc, char **argv);
int cli_info_main(int argc, char **argv);
int cli_dis_main(int argc, char **argv);
int cli_compare_main(int argc, char **argv);
int cli_exec_main(int argc, char **argv);
int cli_call_main(int argc, char **argv);
extern const char cli_call_usage[]; /* defined in src/cli/call.c */
int cli_debug_main(int argc, char **argv);
extern const char cli_debug_usage[]; /* src/cli/debug.c */
int cli_dap_main(int argc, char **argv);
extern const char cli_dap_usage[];   /* src/cli/dap.c */

extern const cli_command cli_commands[];

/* Prints "kemu CMD: error: MSG" plus a usage hint and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Seconds between progress lines of a long launch: CLI_PROGRESS_SECONDS
 * for --progress (asked 1), none for --no-progress (asked 0), else
 * CLI_PROGRESS_SECONDS when stderr is a terminal (asked -1), so that pipes
 * and tests stay clean. */
#define CLI_PROGRESS_SECONDS 10.0
double cli_progress_interval(int asked);
/* --fidelity-report: prints the device's fidelity report (what the
 * launches executed, by how exactly kemu reproduces the hardware) on out. */
void cli_fidelity_print(kemu_device *dev, FILE *out);
/* Looks a subcommand up by name. */
const cli_command *cli_find_command(const char *name);

#endif
