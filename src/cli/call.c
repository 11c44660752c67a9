/* `kemu call`: runs a Pallas-style call spec (JSON, docs/call-spec.md):
 * reads it, checks it against the Mosaic GPU interpret-mode limits
 * (refusals print "kemu: error: NotImplementedError: ..." and a hint, exit
 * 2), launches the kernel through kemu_call_run, writes the outputs and
 * prints a summary. Checker options are those of `kemu run`. */
#include "config.h"
#include "call/call_gpu.h"
#include "call/spec.h"
#include "cli/checks.h"
#include "cli/cli.h"
#include "cli/outputs.h"
#include "io/array.h"
#include "io/npy.h"
#include "kemu/call.h"
#include "kemu/kemu.h"
#include "kemu/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_call_main(int argc, char **argv);

const char cli_call_usage[] =
    "usage: kemu call SPEC.json [--threads N] [--arch sm_XX] [--schedule MODE] [--timeout SECONDS]\n"
    "                 [--progress|--no-progress] [--fidelity-report]\n"
    "                 [--out-dir DIR] [--tool TOOL[,TOOL...]] [checker options]\n"
    "                 [--backend emu|cuda|both] [--device N] [--ulps N] [--rtol X] [--atol X]\n"
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
    "--backend cuda runs the same PTX, operands and launch on CUDA device N (--device,\n"
    "default 0) through the driver (libcuda.so.1, loaded at run time); --backend both\n"
    "runs the emulator and the GPU from identical operands, writes the GPU's outputs\n"
    "as NAME.cuda.npy and compares every output (integers exactly, floats by ULP\n"
    "distance: 0 unless the kernel uses approximate instructions; --ulps, --rtol and\n"
    "--atol override). smem scratch reaches the kernel on the GPU through a wrapper\n"
    "entry (docs/call-spec.md).\n"
    "Exit status: 0 success, 1 the kernel faulted or the backends disagree, 2 usage,\n"
    "spec, PTX or input error, or a call interpret mode refuses, 3 no usable GPU.\n";

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

/* The summary line's launch part: "kernel K: grid (..) block (..)[ cluster
 * (..)][ scratch N B shared]". */
static void launch_text(const kemu_call_result *r, char *buf, size_t len)
{
    char cluster[64] = "", scratch[64] = "";
    if (r->cluster[0] || r->cluster[1] || r->cluster[2])
        snprintf(cluster, sizeof cluster, " cluster (%u,%u,%u)", r->cluster[0] ? r->cluster[0] : 1,
                 r->cluster[1] ? r->cluster[1] : 1, r->cluster[2] ? r->cluster[2] : 1);
    if (r->shared_bytes)
        snprintf(scratch, sizeof scratch, " scratch %zu B shared", r->shared_bytes);
    snprintf(buf, len, "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s%s", r->kernel, r->grid[0], r->grid[1],
             r->grid[2], r->block[0], r->block[1], r->block[2], cluster, scratch);
}

static void print_summary(const call_spec_doc *doc, const kemu_call_result *r)
{
    char launch[512];
    launch_text(r, launch, sizeof launch);
    printf("%s, %.3f s, %llu warp-instructions, %llu thread-instructions\n", launch, r->report.seconds,
           (unsigned long long)r->report.warp_instructions, (unsigned long long)r->report.thread_instructions);
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

/* A call that failed before it ran: an interpret-mode limit (the backend's
 * message and a hint), a PTX error (file:line:col, as is) or another error. */
static void print_call_error(kemu_status st, const kemu_call_result *result, const kemu_error *err)
{
    if (result->limit)
        fprintf(stderr, "kemu: error: %s: %s\nhint: %s\n", result->exception, err->message, result->hint);
    else if (st == KEMU_ERR_PARSE)
        fprintf(stderr, "%s%s", err->message,
                err->message[0] && err->message[strlen(err->message) - 1] != '\n' ? "\n" : "");
    else
        fprintf(stderr, "kemu call: error: %s\n", err->message);
}

/* How an output is named in comparison lines: its file, else its name. */
static void output_label(const call_spec_doc *doc, int o, char *buf, size_t len)
{
    const kemu_call_array *a = &doc->spec.outputs[o];
    if (a->npy)
        snprintf(buf, len, "%s", a->npy);
    else if (a->name)
        snprintf(buf, len, "%s", a->name);
    else
        snprintf(buf, len, "outputs[%d]", o);
}

/* --backend cuda|both: runs the call on the GPU (and the emulator), prints
 * the summary and the comparison, and returns the exit status. */
static int call_on_gpu(const call_spec_doc *doc, kemu_device *dev, int use_emu, int ordinal,
                       const io_compare_opts *user_tolerance, kemu_call_result *result, kemu_error *err)
{
    call_gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    gpu.ordinal = ordinal;
    gpu.use_emulator = use_emu;
    gpu.user_tolerance = user_tolerance;
    kemu_status st = call_run_gpu(dev, &doc->spec, &gpu, result, err);
    if (result->report.printf_length)
        fwrite(result->report.printf_output, 1, result->report.printf_length, stdout);
    fflush(stdout);
    int exit_code = CLI_EXIT_USAGE;
    char launch[512];
    launch_text(result, launch, sizeof launch);
    if (gpu.status == CUDA_STATUS_UNAVAILABLE) {
        fprintf(stderr, "kemu call: cuda backend unavailable: %s\n", gpu.message);
        exit_code = CLI_EXIT_UNAVAILABLE;
    } else if (gpu.status != CUDA_STATUS_OK) {
        fprintf(stderr, "kemu call: error: cuda: %s\n", gpu.message);
        cli_print_jit_log(gpu.jit_log);
    } else if (st == KEMU_ERR_KERNEL_FAULT) {
        if (gpu.emu_faulted)
            fprintf(stderr, "kemu: %s\n", err->message);
        if (gpu.faulted)
            fprintf(stderr, "kemu: cuda: %s\n", gpu.message);
        fprintf(stderr, "%s faulted on %s\n  no outputs written\n", launch,
                gpu.emu_faulted && gpu.faulted ? "both backends" : gpu.emu_faulted ? "the emulator" : "the GPU");
        exit_code = CLI_EXIT_FAIL;
    } else if (st != KEMU_OK) {
        print_call_error(st, result, err);
    } else if (!use_emu) {
        printf("%s, %.3f s on CUDA device %d (%s)\n", launch, gpu.seconds, ordinal, gpu.device_name);
        for (int o = 0; o < result->noutputs; o++) {
            io_array a;
            char label[1200], name[1024];
            if (output_view(&result->outputs[o], &a))
                continue;
            output_label(doc, o, name, sizeof name);
            snprintf(label, sizeof label, "%s %s", result->outputs[o].written ? "wrote" : "output", name);
            cli_print_array_summary(stdout, label, &a);
        }
        exit_code = CLI_EXIT_OK;
    } else {
        printf("%s, emu %.3f s, cuda %.3f s on CUDA device %d (%s)\n", launch, result->report.seconds, gpu.seconds,
               ordinal, gpu.device_name);
        printf("  tolerance %s\n", gpu.tolerance);
        int base = doc->spec.ninputs;
        for (int o = 0; o < result->noutputs; o++)
            if (gpu.comparisons && gpu.comparisons[base + o].compared)
                printf("  %s\n", gpu.comparisons[base + o].line);
        for (int o = 0; o < result->noutputs; o++) {
            io_array a;
            char label[2400], name[1024];
            if (output_view(&result->outputs[o], &a))
                continue;
            output_label(doc, o, name, sizeof name);
            if (!result->outputs[o].written) {
                snprintf(label, sizeof label, "output %s", name);
            } else {
                char *gpath = kemu_plan_gpu_output_file(doc->spec.outputs[o].npy);
                snprintf(label, sizeof label, "wrote %s (the GPU's: %s)", name, gpath ? gpath : "?");
                free(gpath);
            }
            cli_print_array_summary(stdout, label, &a);
        }
        exit_code = CLI_EXIT_OK;
        if (gpu.differing) {
            fprintf(stderr, "kemu call: the emulator and CUDA device %d disagree on %d of %d output buffer%s\n",
                    ordinal, gpu.differing, gpu.ncompared, gpu.ncompared == 1 ? "" : "s");
            exit_code = CLI_EXIT_FAIL;
        }
    }
    call_gpu_free(&gpu);
    return exit_code;
}

int cli_call_main(int argc, char **argv)
{
    cli_checks checks;
    cli_checks_init(&checks, "call");
    const char *file = NULL, *arch = NULL, *schedule = NULL, *out_dir = NULL;
    int threads = 0, dashdash = 0;
    int use_emu = 1, use_cuda = 0, device_ordinal = 0, have_device = 0, have_tolerance = 0;
    io_compare_opts user_tolerance;
    memset(&user_tolerance, 0, sizeof user_tolerance);
    double timeout = 0;
    int progress = -1; /* --progress 1, --no-progress 0, else: when stderr is a terminal */
    int fidelity = 0;
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
                                                "--leak-check", "--backend", "--device", "--ulps", "--rtol",
                                                "--atol", "--trace", "--trace-block", "--trace-warp",
                                                "--trace-lines", "--progress", "--no-progress", "--fidelity-report",
                                                NULL};
            int is_known = 0;
            for (int q = 0; known[q]; q++)
                is_known |= !strcmp(name, known[q]);
            if (!is_known)
                return cli_usage_error("call", "unknown option '%s'", name);
            if (!strcmp(name, "--progress") || !strcmp(name, "--no-progress")) {
                progress = !strcmp(name, "--progress");
                continue;
            }
            if (!strcmp(name, "--fidelity-report")) {
                fidelity = 1;
                continue;
            }
            const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!val)
                return cli_usage_error("call", "option %s needs a value", name);
            int rc = 0;
            if (!strcmp(name, "--threads")) rc = parse_threads(val, &threads);
            else if (!strcmp(name, "--arch")) arch = val;
            else if (!strcmp(name, "--schedule")) schedule = val;
            else if (!strcmp(name, "--out-dir")) out_dir = val;
            else if (!strcmp(name, "--backend"))
                rc = cli_parse_backend("call", val, &use_emu, &use_cuda);
            else if (!strcmp(name, "--device")) {
                rc = cli_parse_device("call", val, &device_ordinal);
                have_device = 1;
            } else if (!strcmp(name, "--ulps") || !strcmp(name, "--rtol") || !strcmp(name, "--atol")) {
                rc = cli_parse_tolerance("call", name, val, &user_tolerance);
                have_tolerance = 1;
            }
            else if (!strcmp(name, "--timeout")) {
                char *end;
                timeout = strtod(val, &end);
                if (*end || end == val || !isfinite(timeout) || timeout <= 0)
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
    if (have_tolerance && !(use_emu && use_cuda))
        return cli_usage_error("call", "--ulps, --rtol and --atol compare the backends; they need --backend both");
    if (have_device && !use_cuda)
        return cli_usage_error("call", "--device chooses a GPU; it needs --backend cuda or both");
    if (checks.config.tools && !use_emu)
        return cli_usage_error("call", "the checkers run on the emulator; --tool needs --backend emu or both");
    if (threads == 0 && getenv("KEMU_THREADS"))
        threads = atoi(getenv("KEMU_THREADS"));

    call_spec_doc doc;
    char msg[2048];
    if (call_spec_load(file, out_dir, &doc, msg, sizeof msg)) {
        fprintf(stderr, "kemu call: error: %s\n", msg);
        return CLI_EXIT_USAGE;
    }
    if (doc.spec.interpret.detect_races && use_emu)
        checks.config.tools |= KEMU_TOOL_RACECHECK;
    {
        /* the checkers' report files must not overwrite the spec or a file it names */
        int n = 2 + doc.spec.ninputs + doc.spec.noutputs;
        const char **paths = calloc((size_t)n, sizeof *paths);
        int refused = paths ? 0 : CLI_EXIT_USAGE;
        if (paths) {
            paths[0] = file;
            paths[1] = doc.spec.ptx;
            for (int i = 0; i < doc.spec.ninputs; i++)
                paths[2 + i] = doc.inputs[i].npy;
            for (int i = 0; i < doc.spec.noutputs; i++)
                paths[2 + doc.spec.ninputs + i] = doc.outputs[i].npy;
            refused = cli_checks_refuse_overwrite(&checks, paths, n);
            free(paths);
        }
        if (refused) {
            call_spec_free(&doc);
            return refused;
        }
    }

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
    kemu_device_set_progress(dev, cli_progress_interval(progress));
    if (checks.config.tools && kemu_device_set_checks(dev, &checks.config, &err)) {
        fprintf(stderr, "kemu call: error: %s\n", err.message);
        goto done;
    }
    if (fidelity && kemu_device_set_fidelity_report(dev, 1, &err)) {
        fprintf(stderr, "kemu call: error: %s\n", err.message);
        goto done;
    }
    if ((exit_code = cli_trace_begin(&checks)))
        goto done;
    exit_code = CLI_EXIT_USAGE;
    if (use_cuda) {
        exit_code = call_on_gpu(&doc, dev, use_emu, device_ordinal, have_tolerance ? &user_tolerance : NULL,
                                &result, &err);
        /* the checkers' report when the emulator ran */
        if (use_emu && fidelity && (exit_code == CLI_EXIT_OK || exit_code == CLI_EXIT_FAIL))
            cli_fidelity_print(dev, stdout);
        if (use_emu && (exit_code == CLI_EXIT_OK || exit_code == CLI_EXIT_FAIL))
            exit_code = cli_checks_exit_status(&checks, dev, "call", exit_code);
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
        print_call_error(st, &result, &err);
        goto done;
    } else {
        print_summary(&doc, &result);
        exit_code = CLI_EXIT_OK;
    }
    if (fidelity)
        cli_fidelity_print(dev, stdout);
    exit_code = cli_checks_exit_status(&checks, dev, "call", exit_code);
done:
    cli_trace_end(&checks);
    kemu_call_result_free(&result);
    kemu_device_destroy(dev);
    call_spec_free(&doc);
    return exit_code;
}
