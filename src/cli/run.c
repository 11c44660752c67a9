/* `kemu run`: load a PTX module, build the kernel's arguments from the
 * command line (buffers from .npy files or generators, scalars), launch it
 * on the emulator, write the outputs and print a summary (or --json).
 * With --backend cuda the same PTX text and launch run on a GPU through
 * src/cuda/ instead; with --backend both they run on both from identical
 * inputs and every output buffer is compared. */
#include "config.h"
#include "cli/cli.h"
#include "cli/args.h"
#include "cli/checks.h"
#include "cli/outputs.h"
#include "cuda/backend.h"
#include "cuda/compare.h"
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

/* Checks before the launch that an output can be written: its directory
 * exists and is writable, and the path is not a directory. Returns 0, or -1
 * with the problem in msg. */
static int output_writable(const char *path, char *msg, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(msg, len, "cannot write %s: it is a directory", path);
        return -1;
    }
    char *copy = strdup(path);
    if (!copy) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    const char *dir = dirname(copy);
    int rc = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(msg, len, "cannot write %s: %s: %s", path, dir, strerror(errno));
        rc = -1;
    }
    free(copy);
    return rc;
}

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!a || !b)
        return 0;
    if (realpath(a, ra) && realpath(b, rb))
        return strcmp(ra, rb) == 0;
    return strcmp(a, b) == 0;
}

/* The GPU side of a run: the backend, one device address and one launch
 * argument pointer per kernel argument, and (with --backend both) the GPU's
 * copy of each output buffer. */
typedef struct run_cuda {
    cuda_backend *backend;
    uint64_t *addresses;
    uint8_t *maps; /* tensor maps, KEMU_TENSOR_MAP_BYTES per argument */
    void **ptrs;
    io_array *results;
    double seconds;
    int faulted;
} run_cuda;

static void run_cuda_free(run_cuda *c, int nargs)
{
    if (c->results)
        for (int i = 0; i < nargs; i++)
            io_array_free(&c->results[i]);
    free(c->results);
    free(c->maps);
    free(c->addresses);
    free(c->ptrs);
    cuda_backend_close(c->backend);
    memset(c, 0, sizeof *c);
}

/* cli_tmap_encoder over the driver; ctx: the backend and its last status. */
typedef struct cuda_tmap_ctx {
    cuda_backend *backend;
    cuda_status status;
} cuda_tmap_ctx;

static int cuda_tmap_encode(void *ctx, void *map, int dtype, unsigned rank, uint64_t address, const uint64_t *dims,
                            const uint64_t *strides, const uint32_t *box, const uint32_t *estride, int swizzle,
                            int oob_fill, char *err, size_t errlen)
{
    cuda_tmap_ctx *t = ctx;
    t->status = cuda_backend_encode_tensor_map(t->backend, map, dtype, rank, address, dims, strides, box, estride,
                                               swizzle, oob_fill, err, errlen);
    return t->status == CUDA_STATUS_OK ? 0 : -1;
}

/* Prints why the GPU cannot be used (one line) and returns exit status 3. */
static int cuda_unavailable(const char *msg)
{
    fprintf(stderr, "kemu run: cuda backend unavailable: %s\n", msg);
    return CLI_EXIT_UNAVAILABLE;
}

/* Opens CUDA device `ordinal`, JIT-loads the PTX file's text and uploads
 * every buffer argument from the host arrays (before the emulator runs and
 * overwrites the outputs). Returns 0, or the exit status after printing
 * the problem. */
static int run_cuda_prepare(run_cuda *c, int ordinal, const char *file, kemu_kernel *k, cli_arg *args,
                            void **emu_ptrs, int nargs)
{
    char msg[2048];
    cuda_status st = cuda_backend_open(ordinal, &c->backend, msg, sizeof msg);
    if (st == CUDA_STATUS_UNAVAILABLE)
        return cuda_unavailable(msg);
    if (st != CUDA_STATUS_OK) {
        fprintf(stderr, "kemu run: error: cuda: %s\n", msg);
        return CLI_EXIT_USAGE;
    }
    int target = cuda_kernel_target_sm(k), sm = cuda_backend_device_sm(c->backend);
    if (target > sm) {
        snprintf(msg, sizeof msg, "CUDA device %d (%s) is sm_%d, but %s targets sm_%d", ordinal,
                 cuda_backend_device_name(c->backend), sm, file, target);
        return cuda_unavailable(msg);
    }
    char *text = NULL;
    size_t len = 0;
    kemu_error err;
    memset(&err, 0, sizeof err);
    if (util_read_file(file, &text, &len, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        return CLI_EXIT_USAGE;
    }
    st = cuda_backend_load_ptx(c->backend, text, len, kemu_kernel_name(k), msg, sizeof msg);
    free(text);
    if (st == CUDA_STATUS_UNAVAILABLE)
        return cuda_unavailable(msg);
    if (st != CUDA_STATUS_OK) {
        fprintf(stderr, "kemu run: error: cuda: %s\n", msg);
        cli_print_jit_log(cuda_backend_jit_log(c->backend));
        return CLI_EXIT_USAGE;
    }
    c->addresses = calloc((size_t)nargs + 1, sizeof *c->addresses);
    c->ptrs = calloc((size_t)nargs + 1, sizeof *c->ptrs);
    c->results = calloc((size_t)nargs + 1, sizeof *c->results);
    if (!c->addresses || !c->ptrs || !c->results) {
        fprintf(stderr, "kemu run: error: out of memory\n");
        return CLI_EXIT_USAGE;
    }
    for (int i = 0; i < nargs; i++) {
        cli_arg *a = &args[i];
        if (!cli_arg_is_buffer(a)) {
            c->ptrs[i] = emu_ptrs[i]; /* scalars and aggregates: the same host bytes */
            continue;
        }
        size_t bytes = a->array.count * io_dtype_size(a->array.dtype);
        if (cuda_backend_alloc(c->backend, bytes, &c->addresses[i], msg, sizeof msg) ||
            cuda_backend_copy_to_device(c->backend, c->addresses[i], a->array.data, bytes, msg, sizeof msg)) {
            fprintf(stderr, "kemu run: error: cuda: %s\n", msg);
            return CLI_EXIT_USAGE;
        }
        c->ptrs[i] = &c->addresses[i];
    }
    /* tensor maps: encoded by the driver over the GPU's buffers */
    for (int i = 0; i < nargs; i++) {
        cli_arg *a = &args[i];
        if (!cli_arg_is_buffer(a) || !a->tmap.enabled)
            continue;
        if (!c->maps && !(c->maps = aligned_alloc(64, (size_t)nargs * KEMU_TENSOR_MAP_BYTES))) {
            fprintf(stderr, "kemu run: error: out of memory\n");
            return CLI_EXIT_USAGE;
        }
        void *map = c->maps + (size_t)i * KEMU_TENSOR_MAP_BYTES;
        cuda_tmap_ctx tctx = {c->backend, CUDA_STATUS_OK};
        if (cli_tmap_encode(a, c->addresses[i], cuda_tmap_encode, &tctx, map, msg, sizeof msg)) {
            if (tctx.status == CUDA_STATUS_UNAVAILABLE)
                return cuda_unavailable(msg);
            fprintf(stderr, "kemu run: error: cuda: argument %d: %s\n", i, msg);
            return CLI_EXIT_USAGE;
        }
        c->ptrs[i] = map;
    }
    return 0;
}

int cli_run_main(int argc, char **argv)
{
    cli_checks checks;
    cli_checks_init(&checks);
    const char *file = NULL, *kernel_name = NULL, *arch = NULL, *schedule = NULL;
    unsigned grid[3] = {1, 1, 1}, block[3] = {0, 0, 0}, cluster[3] = {0, 0, 0};
    int have_block = 0, json = 0, keep = 0, threads = 0, cooperative = 0;
    unsigned long long shared = 0;
    double timeout = 0;
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
                                                "--ulps", "--rtol", "--atol", "--cooperative", NULL};
            int is_known = 0;
            for (int q = 0; known[q]; q++)
                if (!strcmp(name, known[q]))
                    is_known = 1;
            if (!is_known) {
                free(argtexts);
                return cli_usage_error("run", "unknown option '%s'", name);
            }
            int flag = !strcmp(name, "--json") || !strcmp(name, "--keep-outputs") || !strcmp(name, "--cooperative");
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
                if (*end || timeout <= 0)
                    rc = cli_usage_error("run", "--timeout wants a positive number of seconds, got '%s'", val);
            } else if (!strcmp(name, "--json")) json = 1;
            else if (!strcmp(name, "--keep-outputs")) keep = 1;
            else if (!strcmp(name, "--cooperative")) cooperative = 1;
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
    if (threads == 0 && getenv("KEMU_THREADS"))
        threads = atoi(getenv("KEMU_THREADS"));

    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_device_config cfg = {arch, threads, schedule, timeout, kuninit};
    kemu_device *dev = NULL;
    int exit_code = CLI_EXIT_USAGE;
    cli_arg *args = calloc((size_t)nargs + 1, sizeof *args);
    void **ptrs = calloc((size_t)nargs + 1, sizeof *ptrs);
    int parsed = 0;
    kemu_report report;
    memset(&report, 0, sizeof report);
    run_cuda cuda;
    memset(&cuda, 0, sizeof cuda);
    if (!args || !ptrs)
        goto done;
    if (kemu_device_create(&cfg, &dev, &err)) {
        fprintf(stderr, "kemu run: error: %s\n", err.message);
        goto done;
    }
    if (checks.config.tools && kemu_device_set_checks(dev, &checks.config, &err)) {
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
    for (int i = 0; i < nargs; i++) {
        char emsg[1024];
        kemu_param_info pi;
        char tb[64];
        kemu_kernel_param(k, i, &pi);
        if (cli_arg_parse(argtexts[i], uninit, &args[i], emsg, sizeof emsg)) {
            fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, emsg);
            parsed = i + 1;
            goto done;
        }
        parsed = i + 1;
        cli_arg *a = &args[i];
        if (cli_arg_is_buffer(a)) {
            if (a->tmap.enabled && pi.size != KEMU_TENSOR_MAP_BYTES) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes), not a tensor map (%d bytes); "
                                "'%s' passes one\n",
                        i, pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, KEMU_TENSOR_MAP_BYTES, a->text);
                goto done;
            }
            if (!a->tmap.enabled && (pi.size != 8 || pi.is_array)) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes), not a pointer; '%s' passes a buffer\n",
                        i, pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, a->text);
                goto done;
            }
            size_t bytes = a->array.count * io_dtype_size(a->array.dtype);
            /* out: and scratch: hold the uninitialized fill: initcheck sees them unwritten */
            int fresh = a->kind == ARG_OUT || a->kind == ARG_SCRATCH;
            if (use_emu && (kemu_malloc(dev, bytes, kuninit, &a->device, &err) ||
                            (fresh ? kemu_fill_uninit(dev, a->device, a->array.data, bytes, &err)
                                   : kemu_memcpy_htod(dev, a->device, a->array.data, bytes, &err)))) {
                fprintf(stderr, "kemu run: error: %s\n", err.message);
                goto done;
            }
            ptrs[i] = &a->device;
            if (a->tmap.enabled) {
                char emsg[1024];
                if (use_emu && cli_tmap_encode(a, a->device, cli_tmap_encode_emu, NULL, a->map, emsg, sizeof emsg)) {
                    fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, emsg);
                    goto done;
                }
                ptrs[i] = a->map;
            }
        } else {
            if (a->size != pi.size) {
                fprintf(stderr, "kemu run: error: parameter %d '%s' is %s (%zu bytes) but '%s' is %zu bytes\n", i,
                        pi.name, param_type_desc(&pi, tb, sizeof tb), pi.size, a->text, a->size);
                goto done;
            }
            ptrs[i] = a->kind == ARG_BYTES ? (void *)a->bytes : (void *)a->value;
        }
    }
    /* nothing the user gave is overwritten silently */
    for (int i = 0; i < nargs; i++) {
        if (!args[i].out_path)
            continue;
        for (int j = 0; j < nargs; j++) {
            if (!args[j].source_path || !same_file(args[i].out_path, args[j].source_path))
                continue;
            if (i == j)
                continue; /* inout:x.npy:x.npy (or :./x.npy) names the input as its output explicitly */
            fprintf(stderr, "kemu run: error: argument %d would overwrite the input file %s of argument %d; "
                            "name it as the output explicitly with inout:%s:%s\n",
                    i, args[j].source_path, j, args[j].source_path, args[j].source_path);
            goto done;
        }
        for (int j = 0; j < i; j++)
            if (args[j].out_path && same_file(args[i].out_path, args[j].out_path)) {
                fprintf(stderr, "kemu run: error: arguments %d and %d both write %s\n", j, i, args[i].out_path);
                goto done;
            }
    }
    for (int i = 0; i < nargs; i++) {
        char emsg[1024];
        kemu_param_info pi;
        if (!args[i].out_path || !output_writable(args[i].out_path, emsg, sizeof emsg))
            continue;
        kemu_kernel_param(k, i, &pi);
        fprintf(stderr, "kemu run: error: argument %d for parameter %d '%s': %s\n", i, i, pi.name, emsg);
        goto done;
    }
    kemu_launch_config lc;
    memset(&lc, 0, sizeof lc);
    memcpy(lc.grid, grid, sizeof grid);
    memcpy(lc.block, block, sizeof block);
    memcpy(lc.cluster, cluster, sizeof cluster);
    lc.cooperative = cooperative;
    lc.shared_bytes = (size_t)shared;
    if (use_cuda) {
        int rc = run_cuda_prepare(&cuda, device_ordinal, file, k, args, ptrs, nargs);
        if (rc) {
            exit_code = rc;
            goto done;
        }
    }
    int faulted = 0;
    if (use_emu) {
        kemu_status st = kemu_launch(k, &lc, ptrs, &report, &err);
        if (report.printf_length)
            fwrite(report.printf_output, 1, report.printf_length, stdout);
        fflush(stdout);
        if (st != KEMU_OK && st != KEMU_ERR_KERNEL_FAULT) {
            fprintf(stderr, "kemu run: error: %s\n", err.message);
            goto done;
        }
        faulted = st == KEMU_ERR_KERNEL_FAULT;
        if (faulted)
            fprintf(stderr, "kemu: %s\n", err.message);
    }
    if (use_cuda) {
        char cmsg[2048];
        cuda_status cst = cuda_backend_launch(cuda.backend, &lc, cuda.ptrs, &cuda.seconds, cmsg, sizeof cmsg);
        fflush(stdout);
        if (cst == CUDA_STATUS_UNAVAILABLE) {
            exit_code = cuda_unavailable(cmsg);
            goto done;
        }
        if (cst == CUDA_STATUS_FAILED) {
            fprintf(stderr, "kemu run: error: cuda: %s\n", cmsg);
            goto done;
        }
        cuda.faulted = cst == CUDA_STATUS_KERNEL_FAULT;
        if (cuda.faulted)
            fprintf(stderr, "kemu: cuda: %s\n", cmsg);
        if (!use_emu)
            faulted = cuda.faulted;
    }
    json_t *jout = json ? json_array() : NULL;
    /* a GPU's memory cannot be read after a fault, whatever --keep-outputs says */
    int write_outputs = (!faulted || keep) && !(!use_emu && cuda.faulted);
    if (write_outputs) {
        for (int i = 0; i < nargs; i++) {
            cli_arg *a = &args[i];
            if (!a->out_path)
                continue;
            size_t bytes = a->array.count * io_dtype_size(a->array.dtype);
            char emsg[2048];
            if (use_emu ? kemu_memcpy_dtoh(dev, a->array.data, a->device, bytes, &err) != KEMU_OK
                        : cuda_backend_copy_to_host(cuda.backend, a->array.data, cuda.addresses[i], bytes, emsg,
                                                    sizeof emsg) != CUDA_STATUS_OK) {
                fprintf(stderr, "kemu run: error: %s%s\n", use_emu ? "" : "cuda: ", use_emu ? err.message : emsg);
                goto done;
            }
            if (io_npy_write(a->out_path, &a->array, emsg, sizeof emsg)) {
                fprintf(stderr, "kemu run: error: %s\n", emsg);
                exit_code = CLI_EXIT_USAGE;
                goto done;
            }
        }
    }
    /* --backend both: the GPU's outputs next to the emulator's, and the comparison */
    int compared = use_emu && use_cuda && !faulted && !cuda.faulted, differing = 0, noutputs = 0;
    cuda_tolerance tolerance;
    memset(&tolerance, 0, sizeof tolerance);
    if (compared && have_tolerance)
        cuda_tolerance_from_user(&user_tolerance, &tolerance);
    else if (compared)
        cuda_tolerance_for_kernel(k, &tolerance);
    char **compare_lines = compared ? calloc((size_t)nargs + 1, sizeof *compare_lines) : NULL;
    io_compare_result *compare_results = compared ? calloc((size_t)nargs + 1, sizeof *compare_results) : NULL;
    if (compared && (!compare_lines || !compare_results)) {
        free(compare_lines);
        free(compare_results);
        fprintf(stderr, "kemu run: error: out of memory\n");
        goto done;
    }
    for (int i = 0; compared && i < nargs; i++) {
        cli_arg *a = &args[i];
        if (!a->out_path)
            continue;
        io_array *g = &cuda.results[i];
        char emsg[2048];
        *g = a->array;
        g->data = NULL;
        size_t bytes = a->array.count * io_dtype_size(a->array.dtype);
        char *gpath = cli_cuda_output_path(a->out_path);
        compare_lines[i] = malloc(2048);
        if (!gpath || !compare_lines[i] || io_array_alloc(g, emsg, sizeof emsg) ||
            cuda_backend_copy_to_host(cuda.backend, g->data, cuda.addresses[i], bytes, emsg, sizeof emsg) ||
            io_npy_write(gpath, g, emsg, sizeof emsg)) {
            fprintf(stderr, "kemu run: error: %s%s\n", gpath && compare_lines[i] ? "cuda: " : "",
                    gpath && compare_lines[i] ? emsg : "out of memory");
            free(gpath);
            for (int j = 0; j <= i; j++)
                free(compare_lines[j]);
            free(compare_lines);
            free(compare_results);
            goto done;
        }
        free(gpath);
        cuda_compare_buffer(a->out_path, &a->array, g, &tolerance.opts, &compare_results[i], compare_lines[i], 2048);
        noutputs++;
        if (compare_results[i].mismatches)
            differing++;
    }
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "kernel", json_string(kemu_kernel_name(k)));
        json_object_set_new(o, "grid", json_pack("[i,i,i]", grid[0], grid[1], grid[2]));
        json_object_set_new(o, "block", json_pack("[i,i,i]", block[0], block[1], block[2]));
        json_object_set_new(o, "cluster", json_pack("[i,i,i]", cluster[0], cluster[1], cluster[2]));
        json_object_set_new(o, "cooperative", json_boolean(cooperative));
        json_object_set_new(o, "shared_bytes", json_integer((json_int_t)shared));
        json_object_set_new(o, "seconds", json_real(report.seconds));
        json_object_set_new(o, "warp_instructions", json_integer((json_int_t)report.warp_instructions));
        json_object_set_new(o, "thread_instructions", json_integer((json_int_t)report.thread_instructions));
        json_object_set_new(o, "faulted", json_boolean(faulted));
        if (faulted && use_emu)
            json_object_set_new(o, "fault", json_string(report.fault_message));
        if (use_cuda) {
            json_object_set_new(o, "backend", json_string(use_emu ? "both" : "cuda"));
            json_object_set_new(o, "device", json_pack("{s:i,s:s,s:i}", "ordinal", device_ordinal, "name",
                                                       cuda_backend_device_name(cuda.backend), "sm",
                                                       cuda_backend_device_sm(cuda.backend)));
            json_object_set_new(o, "cuda_seconds", json_real(cuda.seconds));
            json_object_set_new(o, "cuda_faulted", json_boolean(cuda.faulted));
        }
        if (compared) {
            json_t *jc = json_array();
            for (int i = 0; i < nargs; i++) {
                if (!compare_lines[i])
                    continue;
                io_compare_result *r = &compare_results[i];
                json_t *e = json_pack("{s:s,s:I,s:I}", "path", args[i].out_path, "mismatches",
                                      (json_int_t)r->mismatches, "max_ulps", (json_int_t)r->max_ulps);
                if (r->mismatches && r->n_first > 0)
                    json_object_set_new(e, "first_mismatch", json_integer((json_int_t)r->first_mismatch[0]));
                json_array_append_new(jc, e);
            }
            json_object_set_new(o, "tolerance", json_string(tolerance.description));
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
                    report.seconds, (unsigned long long)report.warp_instructions,
                    (unsigned long long)report.thread_instructions);
        else if (!use_emu)
            fprintf(faulted ? stderr : stdout, "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s, %.3f s on CUDA device %d (%s)\n",
                    kemu_kernel_name(k), grid[0], grid[1], grid[2], block[0], block[1], block[2], cluster_text,
                    cuda.seconds, device_ordinal, cuda_backend_device_name(cuda.backend));
        else
            fprintf(faulted || cuda.faulted ? stderr : stdout,
                    "kernel %s: grid (%u,%u,%u) block (%u,%u,%u)%s, emu %.3f s, cuda %.3f s on CUDA device %d (%s)\n",
                    kemu_kernel_name(k), grid[0], grid[1], grid[2], block[0], block[1], block[2], cluster_text,
                    report.seconds, cuda.seconds, device_ordinal, cuda_backend_device_name(cuda.backend));
        if (compared) {
            printf("  tolerance %s\n", tolerance.description);
            for (int i = 0; i < nargs; i++)
                if (compare_lines[i])
                    printf("  %s\n", compare_lines[i]);
        }
        for (int i = 0; i < nargs && write_outputs; i++) {
            cli_arg *a = &args[i];
            if (!a->out_path)
                continue;
            io_stats s;
            io_array_stats(&a->array, &s);
            char shape[128];
            io_shape_format(&a->array, shape, sizeof shape);
            char min_text[40], max_text[40];
            cli_format_element_value(s.min, a->array.dtype, min_text, sizeof min_text);
            cli_format_element_value(s.max, a->array.dtype, max_text, sizeof max_text);
            char *gpath = compared && compare_lines[i] ? cli_cuda_output_path(a->out_path) : NULL;
            printf("  wrote %s%s%s%s: %s[%s]  min %s  max %s  mean %.9g  nan %zu\n", a->out_path,
                   gpath ? " (the GPU's: " : "", gpath ? gpath : "", gpath ? ")" : "", io_dtype_name(a->array.dtype),
                   shape, min_text, max_text, s.mean, s.nan_count);
            free(gpath);
        }
        if (!write_outputs && keep)
            fprintf(stderr, "  no outputs written (the GPU's memory cannot be read after a fault)\n");
        else if (faulted && !keep)
            fprintf(stderr, "  no outputs written (use --keep-outputs to write them anyway)\n");
    }
    if (use_emu && use_cuda) {
        if (faulted || cuda.faulted)
            fprintf(stderr, "kemu run: outputs not compared: the kernel faulted on %s\n",
                    faulted && cuda.faulted ? "both backends" : faulted ? "the emulator" : "the GPU");
        else if (differing)
            fprintf(stderr, "kemu run: the emulator and CUDA device %d disagree on %d of %d output buffer%s\n",
                    device_ordinal, differing, noutputs, noutputs == 1 ? "" : "s");
    }
    if (compare_lines)
        for (int i = 0; i < nargs; i++)
            free(compare_lines[i]);
    free(compare_lines);
    free(compare_results);
    exit_code = faulted || cuda.faulted || differing ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    if (checks.config.tools) {
        /* the buffers kemu run made are not leaks of the kernel's */
        for (int i = 0; i < parsed; i++)
            if (cli_arg_is_buffer(&args[i]) && args[i].device) {
                kemu_free(dev, args[i].device, NULL);
                args[i].device = 0;
            }
        int rc = cli_checks_finish(&checks, dev, "run");
        if (rc >= 0)
            exit_code = rc;
        else if (rc == -2)
            exit_code = CLI_EXIT_USAGE;
    }
done:
    kemu_report_free(&report);
    run_cuda_free(&cuda, nargs);
    for (int i = 0; i < parsed; i++)
        cli_arg_free(&args[i]);
    free(args);
    free(ptrs);
    free(argtexts);
    kemu_device_destroy(dev);
    return exit_code;
}
