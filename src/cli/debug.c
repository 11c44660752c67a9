/* `kemu debug`: the gdb-style debugger in front of `kemu run` and
 * `kemu call` (in this process, so a run can be replayed), and of
 * `kemu exec` (in the program's process, through kemu's CUDA runtime).
 * The commands and the debugger core live in the library (src/debug/);
 * this file parses the options, reads lines (with libedit's editing and
 * history when it was built in and stdin is a terminal) and runs the
 * target between stops. */
#include "config.h"
#include "cli/cli.h"
#include "debug/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#ifdef HAVE_LIBEDIT
static char *edit_readline(void *ctx, const char *prompt)
{
    (void)ctx;
    char *line = readline(prompt);
    if (line && *line)
        add_history(line);
    return line;
}
#endif

/* The target's stderr goes to a temporary file while it runs; it is
 * copied out after a run that was not killed by the debugger (a killed or
 * replayed run's "killed by the debugger" error is noise). */
static int capture_begin(FILE **tmp, int *saved)
{
    fflush(stderr);
    *tmp = tmpfile();
    if (!*tmp)
        return -1;
    *saved = dup(2);
    if (*saved < 0 || dup2(fileno(*tmp), 2) < 0) {
        fclose(*tmp);
        *tmp = NULL;
        return -1;
    }
    return 0;
}

static void capture_end(FILE *tmp, int saved, int show)
{
    if (!tmp)
        return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (show) {
        fflush(stdout);
        rewind(tmp);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, tmp)) > 0)
            fwrite(buf, 1, n, stderr);
        fflush(stderr);
    }
    fclose(tmp);
}

static void on_sigint(int sig)
{
    (void)sig;
    dbg_interrupt_requested = 1;
}

const char cli_debug_usage[] =
    "usage: kemu debug [-x FILE]... [-ex COMMAND]... [-batch] run|call|exec|python ARGS...\n"
    "\n"
    "Runs `kemu run`, `kemu call` or `kemu exec` with ARGS (or a Python program\n"
    "using the kemu package: python SCRIPT ARGS, with $PYTHON or python3) under a gdb-style\n"
    "debugger: breakpoints (b kernel, b file.cu:12, b file.ptx:40, b *pc, if CONDITION),\n"
    "stepping (stepi, step, next, finish), cuda-gdb's focus (cuda block 1,0,0 thread 5,0,0)\n"
    "and reports (info cuda warps), registers per lane (p %r5@lanes), memory (x/8f),\n"
    "watchpoints, break on fault|race|memcheck|initcheck|synccheck, and replay\n"
    "(reverse-stepi, reverse-continue, info last-writer, info history). `help` at\n"
    "the prompt lists the commands; docs/debugger.md describes them.\n"
    "  -x FILE       run the commands in FILE first (echoed as they run)\n"
    "  -ex COMMAND   run one command (in order with -x)\n"
    "  -batch        quit when the commands are done (the kernel is killed)\n"
    "Exit status: 0; 1 when a command failed; 2 for usage errors.\n";
int cli_debug_main(int argc, char **argv)
{
    int batch = 0;
    int i = 1;
    const char **scripts = calloc((size_t)argc + 1, sizeof *scripts);
    int *is_cmd = calloc((size_t)argc + 1, sizeof *is_cmd);
    int nscripts = 0;
    if (!scripts || !is_cmd) {
        free(scripts);
        free(is_cmd);
        return CLI_EXIT_FAIL;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-x") || !strcmp(a, "--command") || !strcmp(a, "-ex") || !strcmp(a, "--eval-command")) {
            if (i + 1 >= argc) {
                free(scripts);
                free(is_cmd);
                return cli_usage_error("debug", "%s wants an argument", a);
            }
            is_cmd[nscripts] = a[1] == 'e' || a[2] == 'e';
            scripts[nscripts++] = argv[++i];
        } else if (!strcmp(a, "-batch") || !strcmp(a, "--batch")) {
            batch = 1;
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (a[0] == '-') {
            free(scripts);
            free(is_cmd);
            return cli_usage_error("debug", "unknown option '%s'", a);
        } else {
            break;
        }
    }
    if (i >= argc) {
        free(scripts);
        free(is_cmd);
        return cli_usage_error("debug", "want a launcher: kemu debug [options] run|call|exec|python ARGS...");
    }
    const char *launcher = argv[i];
    int (*target)(int, char **) = NULL;
    if (!strcmp(launcher, "run"))
        target = cli_run_main;
    else if (!strcmp(launcher, "call"))
        target = cli_call_main;
    else if (!strcmp(launcher, "exec") || !strcmp(launcher, "python")) {
        /* the debugger runs in the program's process (kemu's CUDA runtime
         * reads these); the program cannot be run again from inside */
        util_buffer list = {0};
        for (int k = 0; k < nscripts; k++)
            util_buffer_printf(&list, "%s%c%s", k ? "\n" : "", is_cmd[k] ? 'e' : 'x', scripts[k]);
        setenv("KEMU_DEBUG", batch ? "batch" : "1", 1);
        setenv("KEMU_DEBUG_TARGET", launcher[0] == 'e' ? "kemu exec" : "python", 1);
        if (list.data)
            setenv("KEMU_DEBUG_COMMANDS", list.data, 1);
        else
            unsetenv("KEMU_DEBUG_COMMANDS");
        util_buffer_free(&list);
        free(scripts);
        free(is_cmd);
        if (launcher[0] == 'e')
            return cli_exec_main(argc - i, argv + i);
        /* a Python program whose kernels run through the kemu package */
        const char *python = getenv("PYTHON");
        if (!python || !*python)
            python = "python3";
        argv[i] = (char *)python;
        execvp(python, argv + i);
        fprintf(stderr, "kemu debug: error: cannot run %s: %s\n", python, strerror(errno));
        return CLI_EXIT_USAGE;
    } else {
        free(scripts);
        free(is_cmd);
        return cli_usage_error("debug", "unknown launcher '%s' (want run, call, exec or python)", launcher);
    }
    char name[64];
    snprintf(name, sizeof name, "kemu %s", launcher);
    dbg_cli_config cfg = {stdout, NULL, NULL, batch, name, 1};
    if (!batch) {
#ifdef HAVE_LIBEDIT
        cfg.readline = isatty(0) ? edit_readline : dbg_read_line;
#else
        cfg.readline = dbg_read_line;
#endif
        cfg.readline_ctx = stdin;
    }
    dbg_cli *c = dbg_cli_create(&cfg);
    if (!c) {
        free(scripts);
        free(is_cmd);
        fprintf(stderr, "kemu debug: error: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < nscripts; k++) {
        if (is_cmd[k])
            dbg_cli_add_command(c, scripts[k]);
        else if (dbg_cli_add_script(c, scripts[k]) && batch)
            break;
    }
    free(scripts);
    free(is_cmd);
    dbg *d = dbg_cli_debugger(c);
    dbg_active = d;
    /* Ctrl-C stops a running kernel at its next instruction */
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    int targc = argc - i;
    char **targv = argv + i;
    while (dbg_cli_idle(c) == DBG_CLI_RUN) {
        int rc;
        int killed;
        do {
            dbg_run_begin(d);
            FILE *tmp = NULL;
            int saved = -1;
            capture_begin(&tmp, &saved);
            rc = target(targc, targv);
            killed = dbg_run_killed(d);
            capture_end(tmp, saved, !killed);
        } while (dbg_restart_pending(d) && !dbg_cli_quitting(c));
        dbg_cli_target_ended(c, killed ? -1 : rc);
        if (dbg_cli_quitting(c))
            break;
    }
    int errors = dbg_cli_errors(c);
    sigaction(SIGINT, &old_sa, NULL);
    dbg_active = NULL;
    dbg_cli_destroy(c);
    fflush(stdout);
    return errors ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
