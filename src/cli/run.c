/* `kemu run`: loads a PTX module, translates the command line (buffers
 * from .npy files or generators, scalars, tensor maps) into a launch plan
 * (include/kemu/plan.h), runs it on the emulator, a GPU (--backend cuda)
 * or both (--backend both: identical inputs, every output compared), and
 * prints a summary (or --json). Everything after the translation is the
 * plan's; this file only words its results as `kemu run` always has. */
#include "config.h"
#include "cli/cli.h"
#include "cli/args.h"
#include "cli/checks.h"
#include "cli/outputs.h"
#include "kemu/plan.h"
#include "io/npy.h"
#include "kemu/kemu.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int parse_dims(const char *opt, const char *s, unsigned d[3])
{
    d[0] = d[1] = d[2] = 1;
    int n = 0;
    const char *p = s;
    if (!*p)
        return cli_usage_error("run", "%s wants X[,Y[,Z]] with positive integers, got ''", opt);
    while (*p && n < 3) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno || v == 0 || v > 0xffffffffu || *p == '-')
            return cli_usage_error("run", "%s wants X[,Y[,Z]] with positive integers, got '%s'", opt, s);
        d[n++] = (unsigned)v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return cli_usage_error("run", "%s wants X[,Y[,Z]] with positive integers, got '%s'", opt, s);
    }
    if (*p)
        return cli_usage_error("run", "%s has more than 3 dimensions: '%s'", opt, s);
    return 0;
}

static const char *param_type_desc(const kemu_param_info *p, char *buf, size_t n)
{
    if (p->is_array)
        snprintf(buf, n, ".b8[%zu]", p->size);
    else
        snprintf(buf, n, "%s", p->type);
    return buf;
}

/* Prints why a plan stopped before its launch finished, in `kemu run`'s
 * words (arguments by number, as given), and returns the exit status. */
static int run_plan_error(const kemu_plan_result *r, const kemu_error *err, const cli_arg *args, kemu_kernel *k)
{
    int i = r->operand;
    kemu_param_info pi;
    memset(&pi, 0, sizeof pi);
    if (i >= 0)
        kemu_kernel_param(k, i, &pi);
    switch (r->stage) {
    case KEMU_PLAN_STAGE_OUTPUT_FILE:
        if (r->path_problem == KEMU_PLAN_PATH_IS_INPUT) {
            const char *src = args[r->other_operand].source_path;
            fprintf(stderr, "kemu run: error: argument %d would overwrite the input file %s of argument %d; "
                            "name it as the output explicitly with inout:%s:%s\n",
                    i, src, r->other_operand, src, src);
        } else if (r->path_problem == KEMU_PLAN_PATH_IS_MODULE) {
            fprintf(stderr, "kemu run: error: argument %d would overwrite the PTX module %s\n", i, args[i].out_path);
        } else if (r->path_problem == KEMU_PLAN_PATH_SAME_OUTPUT) {
            fprintf(stderr, "kemu run: error: arguments %d and %d both write %s\n", r->other_operand, i,
                    args[i].out_path);
        } else {
            fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, err->message);
        }
        return CLI_EXIT_USAGE;
    case KEMU_PLAN_STAGE_OPERANDS:
        if (i >= 0)
            fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, err->message);
        else
            fprintf(stderr, "kemu run: error: %s\n", err->message);
        return CLI_EXIT_USAGE;
    case KEMU_PLAN_STAGE_GPU:
        if (r->gpu_unavailable) {
            fprintf(stderr, "kemu run: cuda backend unavailable: %s\n", r->gpu_message);
            return CLI_EXIT_UNAVAILABLE;
        }
        if (!r->gpu_message[0])
            fprintf(stderr, "kemu run: error: %s\n", err->message);
        else if (i >= 0 && args[i].has_tmap)
            fprintf(stderr, "kemu run: error: cuda: argument %d: %s\n", i, r->gpu_message);
        else
            fprintf(stderr, "kemu run: error: cuda: %s\n", r->gpu_message);
        cli_print_jit_log(r->gpu_jit_log);
        return CLI_EXIT_USAGE;
    default:
        fprintf(stderr, "kemu run: error: %s\n", err->message);
        return CLI_EXIT_USAGE;
    }
}

int cli_run_main(int argc, char **argv)
{
    cli_checks checks;
    cli_checks_init(&checks, "run");
    const char *file = NULL, *kernel_name = NULL, *arch = NULL, *schedule = NULL;
    unsigned grid[3] = {1, 1, 1}, block[3] = {0, 0, 0}, cluster[3] = {0, 0, 0};
    int have_block = 0, json = 0, keep = 0, threads = 0, cooperative = 0, fidelity = 0;
    unsigned long long shared = 0;
    double timeout = 0;
    int progress = -1; /* --progress 1, --no-progress 0, else: when stderr is a terminal */
    io_uninit_mode uninit = IO_UNINIT_NAN;
    kemu_uninit kuninit = KEMU_UNINIT_NAN;
    int use_emu = 1, use_cuda = 0, device_ordinal = 0, have_device = 0, have_tolerance = 0;
    io_compare_opts user_tolerance = {0, 0.0, 0.0, 0};
    const char **argtexts = calloc((size_t)argc + 1, sizeof *argtexts);
    int nargs = 0, dashdash = 0;
    if (!argtexts)
        return CLI_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!dashdash && a[0] == '-' && a[1] == '-' && a[2]) {
            const char *val = NULL;
            const char *eq = strchr(a, '=');
            char name[64];
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            if (nl >= sizeof name) nl = sizeof name - 1;
            memcpy(name, a, nl);
            name[nl] = 0;
            static const char *const known[] = {"--kernel", "--grid", "--block", "--cluster", "--shared", "--arch",
                                                "--threads", "--schedule", "--uninit", "--timeout", "--json",
                                                "--keep-outputs", "--tool", "--log-file", "--error-exitcode",
                                                "--print-limit", "--report-file", "--racecheck-warp",
                                                "--racecheck-benign", "--leak-check", "--backend", "--device",
                                                "--ulps", "--rtol", "--atol", "--cooperative", "--trace",
                                                "--trace-block", "--trace-warp", "--trace-lines", "--progress",
                                                "--no-progress", "--fidelity-report", NULL};
            int is_known = 0;
            for (int q = 0; known[q]; q++)
                if (!strcmp(name, known[q]))
                    is_known = 1;
            if (!is_known) {
                free(argtexts);
                return cli_usage_error("run", "unknown option '%s'", name);
            }
            int flag = !strcmp(name, "--json") || !strcmp(name, "--keep-outputs") || !strcmp(name, "--cooperative") ||
                       !strcmp(name, "--progress") || !strcmp(name, "--no-progress") ||
                       !strcmp(name, "--fidelity-report");
            if (!flag) {
                if (eq) val = eq + 1;
                else if (i + 1 < argc) val = argv[++i];
                else { free(argtexts); return cli_usage_error("run", "option %s needs a value", name); }
            }
            int rc = 0;
            if (!strcmp(name, "--kernel")) kernel_name = val;
            else if (!strcmp(name, "--grid")) rc = parse_dims("--grid", val, grid);
            else if (!strcmp(name, "--block")) { rc = parse_dims("--block", val, block); have_block = 1; }
            else if (!strcmp(name, "--cluster")) rc = parse_dims("--cluster", val, cluster);
            else if (!strcmp(name, "--shared")) {
                char *end;
                errno = 0;
                shared = strtoull(val, &end, 0);
                if (*end || errno || val[0] == '-')
                    rc = cli_usage_error("run", "--shared wants a byte count, got '%s'", val);
            } else if (!strcmp(name, "--arch")) arch = val;
            else if (!strcmp(name, "--threads")) {
                char *end;
                long t = strtol(val, &end, 10);
                if (*end || t < 1 || t > 4096)
                    rc = cli_usage_error("run", "--threads wants a positive count, got '%s'", val);
                threads = (int)t;
            } else if (!strcmp(name, "--schedule")) schedule = val;
            else if (!strcmp(name, "--uninit")) {
                if (!strcmp(val, "nan")) { uninit = IO_UNINIT_NAN; kuninit = KEMU_UNINIT_NAN; }
                else if (!strcmp(val, "zero")) { uninit = IO_UNINIT_ZERO; kuninit = KEMU_UNINIT_ZERO; }
                else if (!strcmp(val, "pattern")) { uninit = IO_UNINIT_PATTERN; kuninit = KEMU_UNINIT_PATTERN; }
                else rc = cli_usage_error("run", "--uninit wants nan, zero or pattern, got '%s'", val);
            } else if (!strcmp(name, "--timeout")) {
                char *end;
                timeout = strtod(val, &end);
                if (*end || end == val || !isfinite(timeout) || timeout <= 0)
                    rc = cli_usage_error("run", "--timeout wants a positive number of seconds, got '%s'", val);
            } else if (!strcmp(name, "--json")) json = 1;
            else if (!strcmp(name, "--keep-outputs")) keep = 1;
            else if (!strcmp(name, "--cooperative")) cooperative = 1;
            else if (!strcmp(name, "--fidelity-report")) fidelity = 1;
            else if (!strcmp(name, "--progress")) progress = 1;
            else if (!strcmp(name, "--no-progress")) progress = 0;
            else if (!strcmp(name, "--backend"))
                rc = cli_parse_backend("run", val, &use_emu, &use_cuda);
            else if (!strcmp(name, "--device")) {
                rc = cli_parse_device("run", val, &device_ordinal);
                have_device = 1;
            } else if (!strcmp(name, "--ulps") || !strcmp(name, "--rtol") || !strcmp(name, "--atol")) {
                rc = cli_parse_tolerance("run", name, val, &user_tolerance);
                have_tolerance = 1;
            }
            else rc = cli_check_option(name, val, &checks);
            if (rc < 0)
                rc = cli_usage_error("run", "unknown option '%s'", name);
            if (rc) {
                free(argtexts);
                return rc;
            }
            continue;
        }
        if (!dashdash && !strcmp(a, "--")) {
            dashdash = 1;
            continue;
        }
        if (!file)
            file = a;
        else
            argtexts[nargs++] = a;
    }
    if (!file) {
        free(argtexts);
        return cli_usage_error("run", "no PTX file given");
    }
    if (!have_block) {
        free(argtexts);
        return cli_usage_error("run", "--block is required");
    }
    if (have_tolerance && !(use_emu && use_cuda)) {
        free(argtexts);
        return cli_usage_error("run", "--ulps, --rtol and --atol compare the backends; they need --backend both");
    }
    if (have_device && !use_cuda) {
        free(argtexts);
        return cli_usage_error("run", "--device chooses a GPU; it needs --backend cuda or both");
    }
    if (checks.config.tools && !use_emu) {
        free(argtexts);
        return cli_usage_error("run", "the checkers run on the emulator; --tool needs --backend emu or both");
    }
    if (fidelity && !use_emu) {
        free(argtexts);
        return cli_usage_error("run", "--fidelity-report is about the emulator's run; it needs --backend emu or both");
    }
    if (threads == 0 && getenv("KEMU_THREADS"))
        threads = atoi(getenv("KEMU_THREADS"));

    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_device_config cfg = {arch, threads, schedule, timeout, kuninit};
    kemu_device *dev = NULL;
    kemu_plan *plan = NULL;
    int exit_code = CLI_EXIT_USAGE;
    cli_arg *args = calloc((size_t)nargs + 1, sizeof *args);
    int parsed = 0;
    kemu_plan_result result;
    memset(&result, 0, sizeof result);
    if (!args)
        goto done;
    if (kemu_device_create(&cfg, &dev, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        goto done;
    }
    kemu_device_set_progress(dev, cli_progress_interval(progress));
    if (checks.config.tools && kemu_device_set_checks(dev, &checks.config, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        goto done;
    }
    if (fidelity && kemu_device_set_fidelity_report(dev, 1, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        goto done;
    }
    kemu_module *mod;
    if (kemu_module_load_ptx_file(dev, file, &mod, &err)) {
        fprintf(stderr, "%s", err.message);
        if (err.message[0] && err.message[strlen(err.message) - 1] != '\n')
            fputc('\n', stderr);
        goto done;
    }
    kemu_kernel *k = NULL;
    if (kernel_name) {
        if (kemu_module_get_kernel(mod, kernel_name, &k, &err)) {
            fprintf(stderr, "kemu run: error: %s; it has:", err.message);
            for (int i = 0; i < kemu_module_kernel_count(mod); i++)
                fprintf(stderr, " %s", kemu_kernel_name(kemu_module_kernel_at(mod, i)));
            fprintf(stderr, "\n");
            goto done;
        }
    } else {
        int n = kemu_module_kernel_count(mod);
        if (n != 1) {
            fprintf(stderr, "kemu run: error: %s has %d kernels; choose one with --kernel:", file, n);
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %s", kemu_kernel_name(kemu_module_kernel_at(mod, i)));
            fprintf(stderr, "\n");
            goto done;
        }
        k = kemu_module_kernel_at(mod, 0);
    }
    int np = kemu_kernel_param_count(k);
    if (nargs != np) {
        fprintf(stderr, "kemu run: error: kernel '%s' takes %d parameter%s but %d argument%s given\n",
                kemu_kernel_name(k), np, np == 1 ? "" : "s", nargs, nargs == 1 ? " was" : "s were");
        for (int i = 0; i < np; i++) {
            kemu_param_info pi;
            char tb[64];
            kemu_kernel_param(k, i, &pi);
            fprintf(stderr, "  parameter %d: %s %s\n", i, param_type_desc(&pi, tb, sizeof tb), pi.name);
        }
        goto done;
    }
    kemu_plan_config pc;
    memset(&pc, 0, sizeof pc);
    memcpy(pc.launch.grid, grid, sizeof grid);
    memcpy(pc.launch.block, block, sizeof block);
    memcpy(pc.launch.cluster, cluster, sizeof cluster);
    pc.launch.cooperative = cooperative;
    pc.launch.shared_bytes = (size_t)shared;
    pc.backends = (use_emu ? KEMU_BACKEND_EMULATOR : 0) | (use_cuda ? KEMU_BACKEND_CUDA : 0);
    pc.cuda_device = device_ordinal;
    pc.ptx_path = file;
    pc.uninit = kuninit;
    pc.keep_outputs = keep;
    kemu_tolerance tolerance = {user_tolerance.ulps, user_tolerance.rtol, user_tolerance.atol};
    pc.tolerance = have_tolerance ? &tolerance : NULL;
    pc.printf_stream = stdout;
    if (kemu_plan_create(k, &pc, &plan, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        goto done;
    }
    /* each ARG becomes an operand, checked against its parameter */
    for (int i = 0; i < nargs; i++) {
        char emsg[1024];
        kemu_param_info pi;
        char tb[64];
        kemu_kernel_param(k, i, &pi);
        parsed = i + 1;
        if (cli_arg_parse(argtexts[i], uninit, &args[i], emsg, sizeof emsg)) {
            fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, emsg);
            goto done;
        }
        cli_arg *a = &args[i];
        kemu_operand op;
        memset(&op, 0, sizeof op);
        if (cli_arg_is_buffer(a)) {
            if (a->has_tmap && pi.size != KEMU_TENSOR_MAP_BYTES) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes), not a tensor map (%d bytes); "
                                "'%s' passes one\n",
                        i, pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, KEMU_TENSOR_MAP_BYTES, a->text);
                goto done;
            }
            if (!a->has_tmap && (pi.size != 8 || pi.is_array)) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes), not a pointer; '%s' passes a buffer\n",
                        i, pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, a->text);
                goto done;
            }
            op.kind = a->kind == ARG_IN ? KEMU_OPERAND_IN : a->kind == ARG_OUT ? KEMU_OPERAND_OUT
                    : a->kind == ARG_INOUT ? KEMU_OPERAND_INOUT : KEMU_OPERAND_SCRATCH;
            op.dtype = io_dtype_name(a->array.dtype);
            op.ndim = a->array.ndim;
            memcpy(op.shape, a->array.shape, sizeof a->array.shape);
            op.data = a->array.data;
            op.source_file = a->source_path;
            op.output_file = a->out_path;
            op.tensor_map = a->has_tmap ? &a->tmap : NULL;
        } else {
            if (a->size != pi.size) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes) but '%s' is %zu bytes\n", i,
                        pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, a->text, a->size);
                goto done;
            }
            op.kind = KEMU_OPERAND_VALUE;
            op.value = a->kind == ARG_BYTES ? (const void *)a->bytes : (const void *)a->value;
            op.size = a->size;
        }
        if (kemu_plan_add(plan, &op, &err)) {
            fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, err.message);
            goto done;
        }
    }
    /* the checkers' report files must not overwrite what the run reads or writes */
    const char **paths = calloc((size_t)nargs * 2 + 1, sizeof *paths);
    if (!paths)
        goto done;
    int npaths = 0;
    paths[npaths++] = file;
    for (int i = 0; i < nargs; i++) {
        paths[npaths++] = args[i].source_path ? args[i].source_path
                          : args[i].kind == ARG_BYTES && !strncmp(args[i].text, "bytes@", 6) ? args[i].text + 6
                                                                                              : NULL;
        paths[npaths++] = args[i].out_path;
    }
    int refused = cli_checks_refuse_overwrite(&checks, paths, npaths);
    free(paths);
    if (refused) {
        exit_code = refused;
        goto done;
    }
    if ((exit_code = cli_trace_begin(&checks)))
        goto done;
    exit_code = CLI_EXIT_USAGE;
    kemu_status st = kemu_plan_run(plan, &result, &err);
    cli_trace_end(&checks);
    if (st && st != KEMU_ERR_KERNEL_FAULT) {
        exit_code = run_plan_error(&result, &err, args, k);
        goto done;
    }
    int faulted = use_emu ? result.emulator_faulted : result.gpu_faulted;
    if (result.emulator_faulted)
        fprintf(stderr, "kemu: %s\n", err.message);
    if (result.gpu_faulted)
        fprintf(stderr, "kemu: cuda: %s\n", result.gpu_message);
    int write_outputs = result.outputs_written, compared = result.compared;
    const kemu_report *report = &result.report;
    if (json) {
        json_t *o = json_object();
        json_t *jout = json_array();
        json_object_set_new(o, "kernel", json_string(kemu_kernel_name(k)));
        json_object_set_new(o, "grid", json_pack("[i,i,i]", grid[0], grid[1], grid[2]));
        json_object_set_new(o, "block", json_pack("[i,i,i]", block[0], block[1], block[2]));
        json_object_set_new(o, "cluster", json_pack("[i,i,i]", cluster[0], cluster[1], cluster[2]));
        json_object_set_new(o, "cooperative", json_boolean(cooperative));
        json_object_set_new(o, "shared_bytes", json_integer((json_int_t)shared));
        json_object_set_new(o, "seconds", json_real(report->seconds));
        json_object_set_new(o, "warp_instructions", json_integer((json_int_t)report->warp_instructions));
        json_object_set_new(o, "thread_instructions", json_integer((json_int_t)report->thread_instructions));
        json_object_set_new(o, "faulted", json_boolean(faulted));
        if (faulted && use_emu)
            json_object_set_new(o, "fault", json_string(report->fault_message));
        if (use_cuda) {
            json_object_set_new(o, "backend", json_string(use_emu ? "both" : "cuda"));
            json_object_set_new(o, "device", json_pack("{s:i,s:s,s:i}", "ordinal", device_ordinal, "name",
                                                       result.gpu_name, "sm", result.gpu_sm));
            json_object_set_new(o, "cuda_seconds", json_real(result.gpu_seconds));
            json_object_set_new(o, "cuda_faulted", json_boolean(result.gpu_faulted));
        }
        if (compared) {
            json_t *jc = json_array();
            for (int i = 0; i < nargs; i++) {
                const kemu_plan_comparison *c = &result.comparisons[i];
                if (!c->compared)
                    continue;
                json_t *e = json_pack("{s:s,s:I,s:I}", "path", args[i].out_path, "mismatches",
                                      (json_int_t)c->mismatches, "max_ulps", (json_int_t)c->max_ulps);
                if (c->first_mismatch >= 0)
                    json_object_set_new(e, "first_mismatch", json_integer((json_int_t)c->first_mismatch));
                json_array_append_new(jc, e);
            }
            json_object_set_new(o, "tolerance", json_string(result.tolerance));
            json_object_set_new(o, "comparison", jc);
        }
        for (int i = 0; i < nargs; i++) {
            cli_arg *a = &args[i];
            if (!a->out_path || !write_outputs)
                continue;
            io_stats s;
            io_array_stats(&a->array, &s);
            char shape[128];
            io_shape_format(&a->array, shape, sizeof shape);
            json_array_append_new(jout, json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:I}", "path", a->out_path, "dtype",
                                                  io_dtype_name(a->array.dtype), "shape", shape, "min", s.min,
                                                  "max", s.max, "mean", s.mean, "nan_count", (json_int_t)s.nan_count));
        }
        json_object_set_new(o, "outputs", jout);
        char *fjson = NULL;
        if (fidelity && !kemu_fidelity_report(dev, NULL, &fjson, &err))
            json_object_set_new(o, "fidelity", json_loads(fjson, 0, NULL));
        free(fjson);
        char *textj = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (textj)
            printf("%s\n", textj);
        free(textj);
        json_decref(o);
    } else {
        char cluster_text[64] = "";
        if (cluster[0] || cluster[1] || cluster[2])
            snprintf(cluster_text, sizeof cluster_text, " cluster (%u,%u,%u)", cluster[0] ? cluster[0] : 1,
                     cluster[1] ? cluster[1] : 1, cluster[2] ? cluster[2] : 1);
        if (cooperative)
            snprintf(cluster_text + strlen(cluster_text), sizeof cluster_text - strlen(cluster_text), " cooperative");
        if (!use_cuda)
            fprintf(faulted ? stderr : stdout,
                    "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s, %.3f s, %llu warp-instructions, %llu thread-instructions\n",
                    kemu_kernel_name(k), grid[0], grid[1], grid[2], block[0], block[1], block[2], cluster_text,
                    report->seconds, (unsigned long long)report->warp_instructions,
                    (unsigned long long)report->thread_instructions);
        else if (!use_emu)
            fprintf(faulted ? stderr : stdout, "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s, %.3f s on CUDA device %d (%s)\n",
                    kemu_kernel_name(k), grid[0], grid[1], grid[2], block[0], block[1], block[2], cluster_text,
                    result.gpu_seconds, device_ordinal, result.gpu_name);
        else
            fprintf(faulted || result.gpu_faulted ? stderr : stdout,
                    "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s, emu %.3f s, cuda %.3f s on CUDA device %d (%s)\n",
                    kemu_kernel_name(k), grid[0], grid[1], grid[2], block[0], block[1], block[2], cluster_text,
                    report->seconds, result.gpu_seconds, device_ordinal, result.gpu_name);
        if (compared) {
            printf("  tolerance %s\n", result.tolerance);
            for (int i = 0; i < nargs; i++)
                if (result.comparisons[i].compared)
                    printf("  %s\n", result.comparisons[i].line);
        }
        for (int i = 0; i < nargs && write_outputs; i++) {
            cli_arg *a = &args[i];
            if (!a->out_path)
                continue;
            char label[2400];
            char *gpath = compared && result.comparisons[i].compared ? kemu_plan_gpu_output_file(a->out_path) : NULL;
            snprintf(label, sizeof label, "wrote %s%s%s%s", a->out_path, gpath ? " (the GPU's: " : "",
                     gpath ? gpath : "", gpath ? ")" : "");
            free(gpath);
            cli_print_array_summary(stdout, label, &a->array);
        }
        if (!write_outputs && keep)
            fprintf(stderr, "  no outputs written (the GPU's memory cannot be read after a fault)\n");
        else if (faulted && !keep)
            fprintf(stderr, "  no outputs written (use --keep-outputs to write them anyway)\n");
        if (fidelity)
            cli_fidelity_print(dev, stdout);
    }
    if (use_emu && use_cuda) {
        if (result.emulator_faulted || result.gpu_faulted)
            fprintf(stderr, "kemu run: outputs not compared: the kernel faulted on %s\n",
                    result.emulator_faulted && result.gpu_faulted ? "both backends"
                    : result.emulator_faulted                     ? "the emulator"
                                                                  : "the GPU");
        else if (result.differing)
            fprintf(stderr, "kemu run: the emulator and CUDA device %d disagree on %d of %d output buffer%s\n",
                    device_ordinal, result.differing, result.ncompared, result.ncompared == 1 ? "" : "s");
    }
    exit_code = result.emulator_faulted || result.gpu_faulted || result.differing ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    exit_code = cli_checks_exit_status(&checks, dev, "run", exit_code);
done:
    kemu_plan_result_free(&result);
    kemu_plan_destroy(plan);
    for (int i = 0; i < parsed; i++)
        cli_arg_free(&args[i]);
    free(args);
    free(argtexts);
    kemu_device_destroy(dev);
    return exit_code;
}
