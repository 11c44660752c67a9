/* `kemu call`: runs a Pallas-style call spec (JSON, docs/call-spec.md):
 * reads it, checks it against the Mosaic GPU interpret-mode limits
 * (refusals print "kemu: error: NotImplementedError: ..." and a hint, exit
 * 2), launches the kernel through kemu_call_run, writes the outputs and
 * prints a summary. Checker options are those of `kemu run`. */
#include "config.h"
#include "call/spec.h"
#include "cli/checks.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "io/array.h"
#include "kemu/call.h"
#include "kemu/kemu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_call_main(int argc, char **argv);

const char cli_call_usage[] =
    "usage: kemu call SPEC.json [--threads N] [--arch sm_XX] [--schedule MODE] [--timeout SECONDS]\n"
    "                 [--out-dir DIR] [--tool TOOL[,TOOL...]] [checker options]\n"
    "\n"
    "Runs a Pallas-style kernel call described in JSON (docs/call-spec.md): inputs,\n"
    "outputs (optionally aliased to inputs) and scratch are the kernel's parameters in\n"
    "that order; the launch is a grid of blocks or a mesh (grid x cluster blocks of\n"
    "num_threads x 128 threads). Calls that the Mosaic GPU backend's interpret mode\n"
    "refuses are refused with its message (\"NotImplementedError: ...\") and a hint.\n"
    "Relative file names in the spec are relative to the spec's directory; --out-dir\n"
    "puts relative output files under DIR instead.\n"
    "Checker options: --tool memcheck,racecheck,initcheck,synccheck --log-file F\n"
    "  --error-exitcode N --print-limit N --report-file F --leak-check full|no\n"
    "  --racecheck-warp LEVEL --racecheck-benign LEVEL (interpret.detect_races adds racecheck).\n"
    "Exit status: 0 success, 1 the kernel faulted, 2 usage, spec, PTX or input error,\n"
    "or a call interpret mode refuses.\n";

static int parse_threads(const char *v, int *out)
{
    char *end;
    long t = strtol(v, &end, 10);
    if (*end || t < 1 || t > 4096)
        return cli_usage_error("call", "--threads wants a positive count, got '%s'", v);
    *out = (int)t;
    return 0;
}

/* The result's output o as an io_array view (no copy). */
static int output_view(const kemu_call_output *o, io_array *a)
{
    memset(a, 0, sizeof *a);
    if (io_dtype_parse(o->dtype, &a->dtype))
        return -1;
    a->ndim = o->ndim;
    a->count = 1;
    for (int i = 0; i < o->ndim; i++) {
        a->shape[i] = (size_t)o->shape[i];
        a->count *= a->shape[i];
    }
    a->data = o->data;
    return 0;
}

static void print_summary(const call_spec_doc *doc, const kemu_call_result *r)
{
    char cluster[64] = "", scratch[64] = "";
    if (r->cluster[0] || r->cluster[1] || r->cluster[2])
        snprintf(cluster, sizeof cluster, " cluster (%u,%u,%u)", r->cluster[0] ? r->cluster[0] : 1,
                 r->cluster[1] ? r->cluster[1] : 1, r->cluster[2] ? r->cluster[2] : 1);
    if (r->shared_bytes)
        snprintf(scratch, sizeof scratch, " scratch %zu B shared", r->shared_bytes);
    printf("kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s%s, %.3f s, %llu warp-instructions, %llu "
           "thread-instructions\n",
           r->kernel, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], cluster, scratch,
           r->report.seconds, (unsigned long long)r->report.warp_instructions,
           (unsigned long long)r->report.thread_instructions);
    for (int o = 0; o < r->noutputs; o++) {
        io_array a;
        char label[1200];
        if (output_view(&r->outputs[o], &a))
            continue;
        if (r->outputs[o].written)
            snprintf(label, sizeof label, "wrote %s", doc->spec.outputs[o].npy);
        else if (r->outputs[o].name)
            snprintf(label, sizeof label, "output %s", r->outputs[o].name);
        else
            snprintf(label, sizeof label, "outputs[%d]", o);
        cli_print_array_summary(stdout, label, &a);
    }
}

int cli_call_main(int argc, char **argv)
{
    cli_checks checks;
    cli_checks_init(&checks);
    const char *file = NULL, *arch = NULL, *schedule = NULL, *out_dir = NULL;
    int threads = 0, dashdash = 0;
    double timeout = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!dashdash && a[0] == '-' && a[1] == '-' && a[2]) {
            char name[64];
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            if (nl >= sizeof name)
                nl = sizeof name - 1;
            memcpy(name, a, nl);
            name[nl] = 0;
            static const char *const known[] = {"--threads", "--arch", "--schedule", "--timeout", "--out-dir",
                                                "--tool", "--log-file", "--error-exitcode", "--print-limit",
                                                "--report-file", "--racecheck-warp", "--racecheck-benign",
                                                "--leak-check", NULL};
            int is_known = 0;
            for (int q = 0; known[q]; q++)
                is_known |= !strcmp(name, known[q]);
            if (!is_known)
                return cli_usage_error("call", "unknown option '%s'", name);
            const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!val)
                return cli_usage_error("call", "option %s needs a value", name);
            int rc = 0;
            if (!strcmp(name, "--threads")) rc = parse_threads(val, &threads);
            else if (!strcmp(name, "--arch")) arch = val;
            else if (!strcmp(name, "--schedule")) schedule = val;
            else if (!strcmp(name, "--out-dir")) out_dir = val;
            else if (!strcmp(name, "--timeout")) {
                char *end;
                timeout = strtod(val, &end);
                if (*end || timeout <= 0)
                    rc = cli_usage_error("call", "--timeout wants a positive number of seconds, got '%s'", val);
            } else {
                rc = cli_check_option(name, val, &checks);
                if (rc < 0)
                    rc = cli_usage_error("call", "unknown option '%s'", name);
            }
            if (rc)
                return rc;
            continue;
        }
        if (!dashdash && !strcmp(a, "--")) {
            dashdash = 1;
            continue;
        }
        if (file)
            return cli_usage_error("call", "one spec file only (got '%s' and '%s')", file, a);
        file = a;
    }
    if (!file)
        return cli_usage_error("call", "no spec file given");
    if (threads == 0 && getenv("KEMU_THREADS"))
        threads = atoi(getenv("KEMU_THREADS"));

    call_spec_doc doc;
    char msg[2048];
    if (call_spec_load(file, out_dir, &doc, msg, sizeof msg)) {
        fprintf(stderr, "kemu call: error: %s\n", msg);
        return CLI_EXIT_USAGE;
    }
    if (doc.spec.interpret.detect_races)
        checks.config.tools |= KEMU_TOOL_RACECHECK;

    int exit_code = CLI_EXIT_USAGE;
    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_call_result result;
    memset(&result, 0, sizeof result);
    kemu_device_config cfg = {arch, threads, schedule, timeout, doc.spec.interpret.uninitialized_memory};
    kemu_device *dev = NULL;
    if (kemu_device_create(&cfg, &dev, &err)) {
        fprintf(stderr, "kemu call: error: %s\n", err.message);
        goto done;
    }
    if (checks.config.tools && kemu_device_set_checks(dev, &checks.config, &err)) {
        fprintf(stderr, "kemu call: error: %s\n", err.message);
        goto done;
    }
    kemu_status st = kemu_call_run(dev, &doc.spec, &result, &err);
    if (result.report.printf_length)
        fwrite(result.report.printf_output, 1, result.report.printf_length, stdout);
    fflush(stdout);
    if (st == KEMU_ERR_KERNEL_FAULT) {
        fprintf(stderr, "kemu: %s\n", err.message);
        fprintf(stderr, "kernel %s: grid (%u,%u,%u) block (%u,%u,%u) faulted\n", result.kernel, result.grid[0],
                result.grid[1], result.grid[2], result.block[0], result.block[1], result.block[2]);
        fprintf(stderr, "  no outputs written\n");
        exit_code = CLI_EXIT_FAIL;
    } else if (st != KEMU_OK) {
        if (result.limit)
            fprintf(stderr, "kemu: error: %s: %s\nhint: %s\n", result.exception, err.message, result.hint);
        else if (st == KEMU_ERR_PARSE)
            fprintf(stderr, "%s%s", err.message,
                    err.message[0] && err.message[strlen(err.message) - 1] != '\n' ? "\n" : "");
        else
            fprintf(stderr, "kemu call: error: %s\n", err.message);
        goto done;
    } else {
        print_summary(&doc, &result);
        exit_code = CLI_EXIT_OK;
    }
    if (checks.config.tools) {
        int rc = cli_checks_finish(&checks, dev, "call");
        if (rc >= 0)
            exit_code = rc;
        else if (rc == -2)
            exit_code = CLI_EXIT_USAGE;
    }
done:
    kemu_call_result_free(&result);
    kemu_device_destroy(dev);
    call_spec_free(&doc);
    return exit_code;
}
