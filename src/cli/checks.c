/* Checker options of the kemu command (see checks.h). */
#include "config.h"
#include "cli/checks.h"
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void cli_checks_init(cli_checks *c, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->config.racecheck_warp = KEMU_CHECK_AUTO;
    c->config.racecheck_benign = KEMU_CHECK_WARN;
    c->error_exitcode = -1;
    c->trace.warp = -1;
}

int cli_trace_begin(cli_checks *c)
{
    if (!c->trace_file)
        return 0;
    char msg[600];
    if (dbg_trace_start(c->trace_file, &c->trace, &c->tracer, msg, sizeof msg)) {
        fprintf(stderr, "kemu %s: error: %s\n", c->cmd, msg);
        return CLI_EXIT_USAGE;
    }
    c->tracing = 1;
    return 0;
}

void cli_trace_end(cli_checks *c)
{
    if (!c->tracing)
        return;
    c->tracing = 0;
    dbg_trace_stop(c->tracer);
    c->tracer = NULL;
}

/* A level option's value; `auto` only where allow_auto (--racecheck-warp). */
static int level(const char *cmd, const char *opt, const char *v, kemu_check_level *out, int allow_auto)
{
    if (!strcmp(v, "error")) *out = KEMU_CHECK_ERROR;
    else if (!strcmp(v, "warn")) *out = KEMU_CHECK_WARN;
    else if (!strcmp(v, "off")) *out = KEMU_CHECK_OFF;
    else if (allow_auto && !strcmp(v, "auto")) *out = KEMU_CHECK_AUTO;
    else if (allow_auto) return cli_usage_error(cmd, "%s wants auto, error, warn or off, got '%s'", opt, v);
    else return cli_usage_error(cmd, "%s wants error, warn or off, got '%s'", opt, v);
    return 0;
}

int cli_check_option(const char *name, const char *v, cli_checks *c)
{
    if (!strcmp(name, "--tool")) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            if (!strcmp(t, "memcheck")) c->config.tools |= KEMU_TOOL_MEMCHECK;
            else if (!strcmp(t, "racecheck")) c->config.tools |= KEMU_TOOL_RACECHECK;
            else if (!strcmp(t, "initcheck")) c->config.tools |= KEMU_TOOL_INITCHECK;
            else if (!strcmp(t, "synccheck")) c->config.tools |= KEMU_TOOL_SYNCCHECK;
            else return cli_usage_error(c->cmd, "unknown tool '%s' (memcheck, racecheck, initcheck, synccheck)", t);
        }
        return 0;
    }
    if (!strcmp(name, "--trace")) { c->trace_file = v; return 0; }
    if (!strcmp(name, "--trace-block") || !strcmp(name, "--trace-warp") || !strcmp(name, "--trace-lines")) {
        char msg[300];
        const char *what = name + 8;
        if (dbg_trace_filter_parse(what, v, &c->trace, msg, sizeof msg))
            return cli_usage_error(c->cmd, "%s", msg);
        c->trace_texts[what[0] == 'b' ? 0 : what[0] == 'w' ? 1 : 2] = v;
        return 0;
    }
    if (!strcmp(name, "--log-file")) { c->log_file = v; return 0; }
    if (!strcmp(name, "--report-file")) { c->report_file = v; return 0; }
    if (!strcmp(name, "--error-exitcode") || !strcmp(name, "--print-limit")) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        int exitcode = !strcmp(name, "--error-exitcode");
        if (*end || end == v || errno || n < 0 || n > (exitcode ? 255 : 255000000))
            return cli_usage_error(c->cmd, exitcode ? "%s wants an exit status from 0 to 255, got '%s'"
                                                    : "%s wants a count from 0 to 255000000, got '%s'",
                                   name, v);
        if (!strcmp(name, "--error-exitcode")) c->error_exitcode = (int)n; else c->print_limit = (int)n;
        return 0;
    }
    if (!strcmp(name, "--racecheck-warp")) return level(c->cmd, name, v, &c->config.racecheck_warp, 1);
    if (!strcmp(name, "--racecheck-benign")) return level(c->cmd, name, v, &c->config.racecheck_benign, 0);
    if (!strcmp(name, "--leak-check")) {
        if (!strcmp(v, "full")) c->config.leak_check = 1;
        else if (!strcmp(v, "no")) c->config.leak_check = 0;
        else return cli_usage_error(c->cmd, "--leak-check wants full or no, got '%s'", v);
        return 0;
    }
    return -1;
}

/* path made absolute and free of links and dots where it exists, else its
 * directory so and the last name appended; the text itself when neither
 * resolves */
static void resolve_path(const char *path, char *out, size_t size)
{
    char resolved[PATH_MAX];
    if (realpath(path, resolved)) {
        snprintf(out, size, "%s", resolved);
        return;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *name = slash ? path + (slash - dir) + 1 : path;
    if (slash == dir)
        snprintf(dir, sizeof dir, "/");
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    if (realpath(dir, resolved))
        snprintf(out, size, "%s/%s", strcmp(resolved, "/") ? resolved : "", name);
    else
        snprintf(out, size, "%s", path);
}

static int same_path(const char *a, const char *b)
{
    char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
    resolve_path(a, ra, sizeof ra);
    resolve_path(b, rb, sizeof rb);
    return !strcmp(ra, rb);
}

int cli_checks_refuse_overwrite(const cli_checks *c, const char *const *paths, int n)
{
    /* the checkers' reports (when a checker runs) and the --trace file */
    const char *files[3] = {c->config.tools ? c->log_file : NULL, c->config.tools ? c->report_file : NULL,
                            c->trace_file};
    const char *options[3] = {"--log-file", "--report-file", "--trace"};
    for (int r = 0; r < 3; r++) {
        if (!files[r])
            continue;
        struct stat st;
        if (stat(files[r], &st) == 0 && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "kemu %s: error: %s %s: cannot write: it is a directory\n", c->cmd, options[r], files[r]);
            return 2;
        }
        for (int i = 0; i < n; i++)
            if (paths[i] && same_path(files[r], paths[i])) {
                fprintf(stderr, "kemu %s: error: %s %s would overwrite %s, a file this command reads or writes\n",
                        c->cmd, options[r], files[r], paths[i]);
                return 2;
            }
        for (int q = 0; q < r; q++)
            if (files[q] && same_path(files[q], files[r])) {
                fprintf(stderr, "kemu %s: error: %s and %s both write %s\n", c->cmd, options[q], options[r], files[r]);
                return 2;
            }
    }
    return 0;
}

int cli_checks_finish(cli_checks *c, kemu_device *dev, const char *cmd)
{
    kemu_check_summary s;
    kemu_error err;
    if (kemu_check_results(dev, c->print_limit, &s, &err)) {
        fprintf(stderr, "kemu %s: error: %s\n", cmd, err.message);
        return -2;
    }
    FILE *log = stderr;
    if (c->log_file) {
        log = fopen(c->log_file, "w");
        if (!log) {
            fprintf(stderr, "kemu %s: error: %s: cannot write: %s\n", cmd, c->log_file, strerror(errno));
            kemu_check_summary_free(&s);
            return -2;
        }
    }
    fputs(s.text ? s.text : "", log);
    if (log != stderr)
        fclose(log);
    int rc = -1;
    if (c->report_file) {
        FILE *f = fopen(c->report_file, "w");
        if (!f || fputs(s.json ? s.json : "{}", f) < 0) {
            fprintf(stderr, "kemu %s: error: %s: cannot write: %s\n", cmd, c->report_file, strerror(errno));
            rc = -2;
        }
        if (f)
            fclose(f);
    }
    if (rc == -1 && s.errors && c->error_exitcode >= 0)
        rc = c->error_exitcode;
    kemu_check_summary_free(&s);
    return rc;
}

int cli_checks_exit_status(cli_checks *c, kemu_device *dev, const char *cmd, int exit_code)
{
    if (!c->config.tools)
        return exit_code;
    int rc = cli_checks_finish(c, dev, cmd);
    return rc >= 0 ? rc : rc == -2 ? CLI_EXIT_USAGE : exit_code;
}
