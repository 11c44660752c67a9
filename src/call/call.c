/* kemu_call_run: runs a Pallas-style call (include/kemu/call.h). It checks
 * the spec's structure, then the interpret-mode limits in the backend's
 * order, then loads the PTX and the input files, lays out the operands as
 * the kernel ABI says (inputs, outputs, scratch; aliased outputs share
 * their input's buffer; smem scratch in the launch's dynamic shared
 * memory), launches once and reads the outputs back. This room builds on
 * the public API and never touches the interpreter. */
#include "call/call_gpu.h"
#include "call/call_internal.h"
#include "check/check_internal.h"
#include "exec/call_support.h"
#include "exec/exec.h"
#include "io/npy.h"
#include "util.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* smem scratch buffers start at shared-memory offsets aligned to this */
#define CALL_SCRATCH_ALIGN 128u

static uint64_t scratch_align(uint64_t x) { return (x + CALL_SCRATCH_ALIGN - 1) / CALL_SCRATCH_ALIGN * CALL_SCRATCH_ALIGN; }

/* One backend's operands: device addresses by operand, and the launch
 * arguments (64-bit values, or 32-bit ones for .u32 smem scratch). */
typedef struct call_side {
    uint64_t *input, *output, *scratch;
    uint64_t *values;
    uint32_t *values32;
    void **args;
} call_side;

static int side_alloc(call_side *d, const kemu_call_spec *s, int nparams)
{
    size_t np = (size_t)nparams + 1;
    d->input = calloc((size_t)s->ninputs + 1, sizeof *d->input);
    d->output = calloc((size_t)s->noutputs + 1, sizeof *d->output);
    d->scratch = calloc((size_t)s->nscratch + 1, sizeof *d->scratch);
    d->values = calloc(np, sizeof *d->values);
    d->values32 = calloc(np, sizeof *d->values32);
    d->args = calloc(np, sizeof *d->args);
    return d->input && d->output && d->scratch && d->values && d->values32 && d->args ? 0 : -1;
}

static void side_free(call_side *d)
{
    free(d->input);
    free(d->output);
    free(d->scratch);
    free(d->values);
    free(d->values32);
    free(d->args);
}

typedef struct call_state {
    kemu_device *dev;
    const kemu_call_spec *spec;
    kemu_call_result *result;
    kemu_error *err;
    kemu_module *mod;
    kemu_kernel *kernel;
    const char *kernel_path;     /* "kernel" or "mpmd[0].kernel" */
    io_array *inputs, *outputs;
    int *output_alias;           /* by output: the aliased input, or -1 */
    call_side on_emu;            /* operands on the emulator's device */
    int oob_shared_class;        /* 1 + fill class of the last smem scratch, 0 none */
    uint8_t *shared_image;       /* the smem scratch, filled by dtype (copied into every block) */
    uint64_t shared_image_size;
    io_array *scratch_host;      /* gmem scratch as filled on the host (for the GPU) */
    /* the GPU side (call_run_gpu) */
    call_gpu *gpu;
    cuda_backend *backend;
    call_side on_gpu;            /* operands on the GPU */
} call_state;

#define FAIL(st, path, ...) call_fail(c->result, c->err, st, path, __VA_ARGS__)

static kemu_status load_kernel(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    kemu_error *err = c->err;
    kemu_status st;
    if (s->ptx_text)
        st = kemu_module_load_ptx(c->dev, s->ptx_text, s->ptx_length ? s->ptx_length : strlen(s->ptx_text),
                                  s->ptx ? s->ptx : "<call>", &c->mod, err);
    else
        st = kemu_module_load_ptx_file(c->dev, s->ptx, &c->mod, err);
    if (st) {
        if (c->result)
            snprintf(c->result->path, sizeof c->result->path, "ptx");
        if (st == KEMU_ERR_NOT_FOUND || st == KEMU_ERR_IO) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err ? err->message : "");
            return FAIL(st, "ptx", "%s", msg);
        }
        return st; /* PTX errors name file, line and column themselves */
    }
    const char *name = s->has_mpmd ? s->mpmd[0].kernel : s->kernel;
    c->kernel_path = s->has_mpmd ? "mpmd[0].kernel" : "kernel";
    if (kemu_module_get_kernel(c->mod, name, &c->kernel, NULL)) {
        char have[1024] = "";
        size_t k = 0;
        for (int i = 0; i < kemu_module_kernel_count(c->mod) && k < sizeof have; i++)
            k += (size_t)snprintf(have + k, sizeof have - k, " %s", kemu_kernel_name(kemu_module_kernel_at(c->mod, i)));
        return FAIL(KEMU_ERR_NOT_FOUND, c->kernel_path, "no kernel named '%s' in %s; it has:%s", name,
                    s->ptx ? s->ptx : "<call>", have);
    }
    return KEMU_OK;
}

/* Fills a->ndim/shape/count from a spec shape. */
static kemu_status set_shape(call_state *c, io_array *a, int ndim, const unsigned long long *shape, const char *where)
{
    a->ndim = ndim;
    a->count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > SIZE_MAX || __builtin_mul_overflow(a->count, (size_t)shape[i], &a->count) ||
            a->count > SIZE_MAX / 8) {
            char path[96];
            snprintf(path, sizeof path, "%s.shape", where);
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "the array is too large");
        }
        a->shape[i] = (size_t)shape[i];
    }
    return KEMU_OK;
}

static int same_shape(const io_array *a, const io_array *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

/* "f32[2x3]" ("f32[scalar]" for 0-d) */
static void describe(const io_array *a, char *buf, size_t len)
{
    char shape[128];
    io_shape_format(a, shape, sizeof shape);
    snprintf(buf, len, "%s[%s]", io_dtype_name(a->dtype), shape);
}

static kemu_status load_inputs(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    for (int i = 0; i < s->ninputs; i++) {
        const kemu_call_array *in = &s->inputs[i];
        io_array *a = &c->inputs[i];
        char where[64], path[96], msg[1024];
        snprintf(where, sizeof where, "inputs[%d]", i);
        io_array want;
        memset(&want, 0, sizeof want);
        if (in->dtype) {
            call_dtype_parse(in->dtype, &want.dtype);
            kemu_status st = set_shape(c, &want, in->ndim, in->shape, where);
            if (st)
                return st;
        }
        if (in->npy) {
            snprintf(path, sizeof path, "%s.npy", where);
            if (io_npy_read(in->npy, a, msg, sizeof msg))
                return FAIL(access(in->npy, F_OK) ? KEMU_ERR_NOT_FOUND : KEMU_ERR_IO, path, "%s", msg);
            if (in->dtype && !same_shape(a, &want)) {
                char have_text[160], want_text[160];
                describe(a, have_text, sizeof have_text);
                describe(&want, want_text, sizeof want_text);
                snprintf(path, sizeof path, "%s.%s", where, a->dtype != want.dtype ? "dtype" : "shape");
                return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "%s holds %s but the spec says %s", in->npy, have_text,
                            want_text);
            }
            continue;
        }
        *a = want;
        if (io_array_alloc(a, msg, sizeof msg))
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, where, "%s", msg);
        if (in->data) {
            memcpy(a->data, in->data, a->count * io_dtype_size(a->dtype));
        } else if (io_array_generate(a, in->init, msg, sizeof msg)) {
            snprintf(path, sizeof path, "%s.init", where);
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "%s", msg);
        }
    }
    return KEMU_OK;
}

static kemu_status prepare_outputs(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    io_uninit_mode fill = s->interpret.uninitialized_memory == KEMU_UNINIT_ZERO ? IO_UNINIT_ZERO : IO_UNINIT_NAN;
    for (int o = 0; o < s->noutputs; o++)
        c->output_alias[o] = -1;
    for (int k = 0; k < s->naliases; k++)
        c->output_alias[s->input_output_aliases[k][1]] = s->input_output_aliases[k][0];
    for (int o = 0; o < s->noutputs; o++) {
        const kemu_call_array *out = &s->outputs[o];
        io_array *a = &c->outputs[o];
        char where[64], msg[1024];
        snprintf(where, sizeof where, "outputs[%d]", o);
        int in = c->output_alias[o];
        if (out->dtype) {
            call_dtype_parse(out->dtype, &a->dtype);
            kemu_status st = set_shape(c, a, out->ndim, out->shape, where);
            if (st)
                return st;
        } else { /* aliased: the input's dtype and shape */
            a->dtype = c->inputs[in].dtype;
            a->ndim = c->inputs[in].ndim;
            memcpy(a->shape, c->inputs[in].shape, sizeof a->shape);
            a->count = c->inputs[in].count;
        }
        if (in >= 0 && !same_shape(a, &c->inputs[in])) {
            char path[64], in_text[160], out_text[160];
            for (int k = 0; k < s->naliases; k++)
                if (s->input_output_aliases[k][1] == o)
                    snprintf(path, sizeof path, "input_output_aliases[%d]", k);
            describe(&c->inputs[in], in_text, sizeof in_text);
            describe(a, out_text, sizeof out_text);
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path,
                        "inputs[%d] is %s but outputs[%d] is %s; an aliased output has its input's dtype and shape",
                        in, in_text, o, out_text);
        }
        if (io_array_alloc(a, msg, sizeof msg))
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, where, "%s", msg);
        io_fill_uninit(a->data, a->count, a->dtype, fill);
    }
    return KEMU_OK;
}

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (realpath(a, ra) && realpath(b, rb))
        return strcmp(ra, rb) == 0;
    return strcmp(a, b) == 0;
}

/* Refuses output paths that cannot be written, that two outputs share,
 * or that name an input file the output is not aliased to. */
static kemu_status check_output_paths(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    for (int o = 0; o < s->noutputs; o++) {
        const char *p = s->outputs[o].npy;
        char path[64];
        snprintf(path, sizeof path, "outputs[%d].npy", o);
        if (!p)
            continue;
        for (int j = 0; j < o; j++)
            if (s->outputs[j].npy && same_file(p, s->outputs[j].npy))
                return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "outputs[%d] already writes %s", j, p);
        for (int i = 0; i < s->ninputs; i++)
            if (s->inputs[i].npy && i != c->output_alias[o] && same_file(p, s->inputs[i].npy))
                return FAIL(KEMU_ERR_INVALID_ARGUMENT, path,
                            "would overwrite %s, the file of inputs[%d]; alias the output to that input "
                            "(input_output_aliases [[%d, %d]]) to update it in place",
                            p, i, i, o);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            return FAIL(KEMU_ERR_IO, path, "cannot write %s: it is a directory", p);
        char *copy = strdup(p);
        if (!copy)
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, path, "out of memory");
        const char *dir = dirname(copy);
        int bad = access(dir, W_OK | X_OK) != 0;
        int e = errno;
        char dir_text[PATH_MAX];
        snprintf(dir_text, sizeof dir_text, "%s", dir);
        free(copy);
        if (bad)
            return FAIL(KEMU_ERR_IO, path, "cannot write %s: %s: %s", p, dir_text, strerror(e));
    }
    return KEMU_OK;
}

/* The operand (and its path) behind kernel parameter i. */
static void operand_of_param(const kemu_call_spec *s, int i, char *path, size_t len, int *smem_scratch)
{
    *smem_scratch = 0;
    if (i < s->ninputs)
        snprintf(path, len, "inputs[%d]", i);
    else if (i < s->ninputs + s->noutputs)
        snprintf(path, len, "outputs[%d]", i - s->ninputs);
    else {
        snprintf(path, len, "scratch[%d]", i - s->ninputs - s->noutputs);
        *smem_scratch = s->scratch[i - s->ninputs - s->noutputs].memory_space == KEMU_CALL_SMEM;
    }
}

static kemu_status check_params(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    int np = kemu_kernel_param_count(c->kernel);
    int nops = s->ninputs + s->noutputs + s->nscratch;
    if (np != nops)
        return FAIL(KEMU_ERR_INVALID_ARGUMENT, c->kernel_path,
                    "kernel '%s' takes %d parameter%s but the call has %d operand%s (%d input%s, %d output%s, %d "
                    "scratch); the kernel ABI is one pointer per operand",
                    kemu_kernel_name(c->kernel), np, np == 1 ? "" : "s", nops, nops == 1 ? "" : "s", s->ninputs,
                    s->ninputs == 1 ? "" : "s", s->noutputs, s->noutputs == 1 ? "" : "s", s->nscratch);
    for (int i = 0; i < np; i++) {
        kemu_param_info pi;
        char path[64];
        int smem;
        kemu_kernel_param(c->kernel, i, &pi);
        operand_of_param(s, i, path, sizeof path, &smem);
        int ok = !pi.is_array && (pi.size == 8 || (smem && pi.size == 4));
        if (!ok)
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path,
                        "kernel parameter %d '%s' is %s (%zu bytes), not a pointer (.u64%s)", i, pi.name,
                        pi.is_array ? ".b8 array" : pi.type, pi.size, smem ? " or a .u32 shared address" : "");
    }
    return KEMU_OK;
}

/* Grid, block and cluster of the launch. */
static kemu_status launch_geometry(call_state *c, kemu_launch_config *lc)
{
    const kemu_call_spec *s = c->spec;
    kemu_call_result *r = c->result;
    const kemu_call_mesh *m = call_launch_mesh(s);
    memset(lc, 0, sizeof *lc);
    if (m) {
        const char *where = s->has_mpmd ? "mpmd[0].mesh" : "mesh";
        char path[64];
        unsigned nt = m->num_threads ? m->num_threads : 1;
        if (nt > 8) {
            snprintf(path, sizeof path, "%s.num_threads", where);
            return FAIL(KEMU_ERR_LAUNCH_CONFIG, path,
                        "%u warpgroups of 128 threads make %llu threads per block; a block has at most 1024", nt,
                        128ull * nt);
        }
        lc->block[0] = 128 * nt;
        lc->block[1] = lc->block[2] = 1;
        for (int i = 0; i < 3; i++) {
            unsigned g = i < m->grid_ndim ? m->grid[i] : 1, cl = i < m->cluster_ndim ? m->cluster[i] : 1;
            unsigned long long blocks = (unsigned long long)g * cl;
            if (blocks > 0x7fffffffull) {
                snprintf(path, sizeof path, "%s.grid", where);
                return FAIL(KEMU_ERR_LAUNCH_CONFIG, path, "grid x cluster is %llu blocks in dimension %d; too many",
                            blocks, i);
            }
            lc->grid[i] = (unsigned)blocks;
            lc->cluster[i] = m->cluster_ndim ? cl : 0;
        }
    } else {
        int n = s->has_grid ? s->grid_ndim : 0;
        if (n > 3)
            return FAIL(KEMU_ERR_LAUNCH_CONFIG, "grid",
                        "a call without a mesh launches a CUDA grid of at most 3 dimensions, not %d", n);
        for (int i = 0; i < 3; i++)
            lc->grid[i] = i < n ? (unsigned)s->grid[i].size : 1;
        if (!s->block[0] && !s->block[1] && !s->block[2])
            lc->block[0] = 128;
        else
            memcpy(lc->block, s->block, sizeof lc->block);
        for (int i = 0; i < 3; i++)
            if (!lc->block[i])
                lc->block[i] = 1;
    }
    if (r) {
        memcpy(r->grid, lc->grid, sizeof r->grid);
        memcpy(r->block, lc->block, sizeof r->block);
        memcpy(r->cluster, lc->cluster, sizeof r->cluster);
    }
    return KEMU_OK;
}

/* Allocates a device buffer holding a's data. */
/* The VM_OOB_FILL class of a dtype's fill: bools true (5); floats and
 * signed integers the pattern of their width (1-4: 1, 2, 4, 8 bytes);
 * unsigned integers all bits set (0). */
static int fill_class(io_dtype dt)
{
    if (dt == IO_DT_BOOL)
        return 5;
    if (!io_dtype_is_float(dt) && !io_dtype_is_signed(dt))
        return 0;
    size_t n = io_dtype_size(dt);
    return n == 1 ? 1 : n == 2 ? 2 : n == 4 ? 3 : 4;
}

static kemu_status upload(call_state *c, const io_array *a, uint64_t *address, const char *path)
{
    size_t bytes = a->count * io_dtype_size(a->dtype);
    kemu_error e;
    if (kemu_malloc(c->dev, bytes, KEMU_UNINIT_ZERO, address, &e) ||
        kemu_memcpy_htod(c->dev, *address, a->data, bytes, &e))
        return FAIL(e.status, path, "%s", e.message);
    exec_set_fill_class(c->dev, *address, fill_class(a->dtype));
    return KEMU_OK;
}

/* The launch arguments: one value per kernel parameter (inputs, outputs,
 * scratch), stored 64-bit (values) or 32-bit (values32, for a .u32 smem
 * scratch address) as the parameter's size says. */
static void set_arguments(call_state *c, call_side *d)
{
    const kemu_call_spec *s = c->spec;
    int np = kemu_kernel_param_count(c->kernel);
    for (int i = 0; i < np; i++) {
        uint64_t v = i < s->ninputs ? d->input[i]
                   : i < s->ninputs + s->noutputs ? d->output[i - s->ninputs]
                   : d->scratch[i - s->ninputs - s->noutputs];
        kemu_param_info pi;
        kemu_kernel_param(c->kernel, i, &pi);
        d->values[i] = v;
        d->values32[i] = (uint32_t)v;
        d->args[i] = pi.size == 4 ? (void *)&d->values32[i] : (void *)&d->values[i];
    }
}

/* Lays the operands out and fills the parameter values. */
static kemu_status place_operands(call_state *c, kemu_launch_config *lc)
{
    const kemu_call_spec *s = c->spec;
    char path[64];
    kemu_status st;
    for (int i = 0; i < s->ninputs; i++) {
        snprintf(path, sizeof path, "inputs[%d]", i);
        if ((st = upload(c, &c->inputs[i], &c->on_emu.input[i], path)))
            return st;
    }
    for (int o = 0; o < s->noutputs; o++) {
        snprintf(path, sizeof path, "outputs[%d]", o);
        if (c->output_alias[o] >= 0)
            c->on_emu.output[o] = c->on_emu.input[c->output_alias[o]];
        else if ((st = upload(c, &c->outputs[o], &c->on_emu.output[o], path)))
            return st;
    }
    uint64_t base = exec_kernel_dynamic_shared_base(c->kernel), end = base;
    io_uninit_mode fill = s->interpret.uninitialized_memory == KEMU_UNINIT_ZERO ? IO_UNINIT_ZERO : IO_UNINIT_NAN;
    for (int i = 0; i < s->nscratch; i++) {
        const kemu_call_scratch *sc = &s->scratch[i];
        io_array a;
        memset(&a, 0, sizeof a);
        char where[64], msg[256];
        snprintf(where, sizeof where, "scratch[%d]", i);
        call_dtype_parse(sc->dtype, &a.dtype);
        if ((st = set_shape(c, &a, sc->ndim, sc->shape, where)))
            return st;
        size_t bytes = a.count * io_dtype_size(a.dtype);
        if (sc->memory_space == KEMU_CALL_GMEM) {
            if (io_array_alloc(&a, msg, sizeof msg))
                return FAIL(KEMU_ERR_OUT_OF_MEMORY, where, "%s", msg);
            io_fill_uninit(a.data, a.count, a.dtype, fill);
            st = upload(c, &a, &c->on_emu.scratch[i], where);
            if (c->gpu)
                c->scratch_host[i] = a; /* the GPU gets the same bytes */
            else
                io_array_free(&a);
            if (st)
                return st;
        } else {
            uint64_t at = scratch_align(end);
            c->on_emu.scratch[i] = at;
            end = at + bytes;
            if (end > 0xffffffffull)
                return FAIL(KEMU_ERR_LAUNCH_CONFIG, where, "scratch does not fit in shared memory");
        }
    }
    lc->shared_bytes = (size_t)(end - base);
    /* smem scratch starts filled like an output (NaN for floats, the largest
     * value for integers, true for bools, or zero), element by element: an
     * image of the dynamic shared memory that every block starts with */
    if (end > base) {
        c->shared_image_size = end - base;
        c->shared_image = malloc((size_t)c->shared_image_size);
        if (!c->shared_image)
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
        io_fill_uninit_bytes(c->shared_image, (size_t)c->shared_image_size, fill);
        for (int i = 0; i < s->nscratch; i++) {
            const kemu_call_scratch *sc = &s->scratch[i];
            if (sc->memory_space == KEMU_CALL_GMEM)
                continue;
            io_dtype dt;
            call_dtype_parse(sc->dtype, &dt);
            size_t count = 1;
            for (int d = 0; d < sc->ndim; d++)
                count *= (size_t)sc->shape[d];
            io_fill_uninit(c->shared_image + (c->on_emu.scratch[i] - base), count, dt, fill);
            /* reads past the end of shared memory are past the last smem scratch */
            c->oob_shared_class = 1 + fill_class(dt);
        }
    }
    if (c->result)
        c->result->shared_bytes = lc->shared_bytes;
    set_arguments(c, &c->on_emu);
    return KEMU_OK;
}

/* detect_races: racecheck on, keeping the checkers already enabled. */
static kemu_status enable_racecheck(call_state *c)
{
    kemu_check_config cfg;
    if (c->dev->checks) {
        if (c->dev->checks->cfg.tools & KEMU_TOOL_RACECHECK)
            return KEMU_OK;
        cfg = c->dev->checks->cfg;
    } else {
        memset(&cfg, 0, sizeof cfg);
        cfg.racecheck_warp = KEMU_CHECK_WARN;
        cfg.racecheck_benign = KEMU_CHECK_WARN;
    }
    cfg.tools |= KEMU_TOOL_RACECHECK;
    return kemu_device_set_checks(c->dev, &cfg, c->err);
}

/* The emulator's launch, with the call's fills. */
static kemu_status emu_launch(call_state *c, const kemu_launch_config *lc)
{
    const kemu_call_spec *s = c->spec;
    kemu_call_result *r = c->result;
    kemu_report local;
    kemu_report *report = r ? &r->report : &local;
    kemu_uninit saved = c->dev->cfg.uninit;
    c->dev->cfg.uninit = s->interpret.uninitialized_memory;
    c->dev->oob_reads_fill = s->interpret.out_of_bounds_reads == KEMU_CALL_OOB_UNINITIALIZED;
    c->dev->oob_shared_class = c->oob_shared_class;
    c->dev->shared_init = c->shared_image;
    c->dev->shared_init_size = c->shared_image_size;
    kemu_status st = kemu_launch(c->kernel, lc, c->on_emu.args, report, c->err);
    c->dev->cfg.uninit = saved;
    c->dev->oob_reads_fill = 0;
    c->dev->oob_shared_class = 0;
    c->dev->shared_init = NULL;
    c->dev->shared_init_size = 0;
    if (!r)
        kemu_report_free(&local);
    return st;
}

/* Reads the outputs back (from the emulator, or from the GPU when
 * from_gpu), writes the spec's files and moves the data into the result. */
static kemu_status collect_outputs(call_state *c, int from_gpu)
{
    const kemu_call_spec *s = c->spec;
    kemu_call_result *r = c->result;
    if (r) {
        r->outputs = calloc((size_t)s->noutputs + 1, sizeof *r->outputs);
        if (!r->outputs)
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
        r->noutputs = s->noutputs;
    }
    for (int o = 0; o < s->noutputs; o++) {
        io_array *a = &c->outputs[o];
        size_t bytes = a->count * io_dtype_size(a->dtype);
        char path[64], msg[2048];
        snprintf(path, sizeof path, "outputs[%d]", o);
        kemu_error e;
        if (from_gpu) {
            if (cuda_backend_copy_to_host(c->backend, a->data, c->on_gpu.output[o], bytes, msg, sizeof msg))
                return FAIL(KEMU_ERR_IO, path, "cuda: %s", msg);
        } else if (kemu_memcpy_dtoh(c->dev, a->data, c->on_emu.output[o], bytes, &e))
            return FAIL(e.status, path, "%s", e.message);
        if (s->outputs[o].npy && io_npy_write(s->outputs[o].npy, a, msg, sizeof msg)) {
            snprintf(path, sizeof path, "outputs[%d].npy", o);
            return FAIL(KEMU_ERR_IO, path, "%s", msg);
        }
        if (r) {
            kemu_call_output *out = &r->outputs[o];
            out->name = s->outputs[o].name;
            out->dtype = io_dtype_name(a->dtype);
            out->ndim = a->ndim;
            for (int i = 0; i < a->ndim; i++)
                out->shape[i] = a->shape[i];
            out->data = a->data; /* ownership moves to the result */
            out->nbytes = bytes;
            out->written = s->outputs[o].npy != NULL;
            a->data = NULL;
        }
    }
    return KEMU_OK;
}

/* The GPU side stops: status and message in gpu, the message in err. */
static kemu_status gpu_stop(call_state *c, cuda_status st)
{
    c->gpu->status = st;
    return FAIL(KEMU_ERR_UNSUPPORTED, NULL, "%s", c->gpu->message);
}

static kemu_status gpu_upload(call_state *c, const void *data, size_t bytes, uint64_t *address, const char *path)
{
    char msg[1024];
    if (cuda_backend_alloc(c->backend, bytes, address, msg, sizeof msg) ||
        cuda_backend_copy_to_device(c->backend, *address, data, bytes, msg, sizeof msg)) {
        snprintf(c->gpu->message, sizeof c->gpu->message, "%s: %s", path, msg);
        return gpu_stop(c, CUDA_STATUS_FAILED);
    }
    return KEMU_OK;
}

/* The PTX the GPU runs: the spec's, wrapped when there is smem scratch. */
static kemu_status gpu_ptx(call_state *c, char **text, size_t *len)
{
    const kemu_call_spec *s = c->spec;
    kemu_error e;
    if (s->ptx_text) {
        *len = s->ptx_length ? s->ptx_length : strlen(s->ptx_text);
        if (!(*text = malloc(*len + 1)))
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
        memcpy(*text, s->ptx_text, *len);
        (*text)[*len] = 0;
    } else if (util_read_file(s->ptx, text, len, &e))
        return FAIL(e.status, "ptx", "%s", e.message);
    int np = kemu_kernel_param_count(c->kernel), any_smem = 0;
    call_wrap_param *wp = calloc((size_t)np + 1, sizeof *wp);
    if (!wp)
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    /* the emulator's scratch offsets from the 128-aligned dynamic start */
    uint64_t start = scratch_align(exec_kernel_dynamic_shared_base(c->kernel));
    for (int i = 0; i < np; i++) {
        kemu_param_info pi;
        char path[64];
        int smem;
        kemu_kernel_param(c->kernel, i, &pi);
        operand_of_param(s, i, path, sizeof path, &smem);
        wp[i].name = pi.name;
        wp[i].size = pi.size;
        wp[i].smem = smem;
        if (smem)
            wp[i].smem_offset = c->on_emu.scratch[i - s->ninputs - s->noutputs] - start;
        any_smem |= smem;
    }
    kemu_status st = KEMU_OK;
    if (any_smem) {
        char *wrapped, msg[512];
        size_t wlen;
        if (call_wrap_smem_scratch(*text, *len, kemu_kernel_name(c->kernel), np, wp, &wrapped, &wlen, msg,
                                   sizeof msg))
            st = FAIL(KEMU_ERR_UNSUPPORTED, c->kernel_path, "cannot give the GPU the smem scratch: %s", msg);
        else {
            free(*text);
            *text = wrapped;
            *len = wlen;
            c->gpu->wrapped = 1;
        }
    }
    free(wp);
    return st;
}

/* Opens the GPU, JIT-loads the PTX and uploads the operands as the
 * emulator has them before its launch. */
static kemu_status gpu_prepare(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    call_gpu *g = c->gpu;
    cuda_status cst = cuda_backend_open(g->ordinal, &c->backend, g->message, sizeof g->message);
    if (cst)
        return gpu_stop(c, cst == CUDA_STATUS_UNAVAILABLE ? cst : CUDA_STATUS_FAILED);
    snprintf(g->device_name, sizeof g->device_name, "%s", cuda_backend_device_name(c->backend));
    g->sm = cuda_backend_device_sm(c->backend);
    int target = cuda_kernel_target_sm(c->kernel);
    if (target > g->sm) {
        snprintf(g->message, sizeof g->message, "CUDA device %d (%s) is sm_%d, but %s targets sm_%d", g->ordinal,
                 g->device_name, g->sm, s->ptx ? s->ptx : "the call's PTX", target);
        return gpu_stop(c, CUDA_STATUS_UNAVAILABLE);
    }
    char *text = NULL;
    size_t len = 0;
    kemu_status st = gpu_ptx(c, &text, &len);
    if (st) {
        free(text);
        return st;
    }
    cst = cuda_backend_load_ptx(c->backend, text, len, kemu_kernel_name(c->kernel), g->message, sizeof g->message);
    free(text);
    if (cst) {
        const char *log = cuda_backend_jit_log(c->backend);
        if (*log)
            g->jit_log = strdup(log);
        return gpu_stop(c, cst == CUDA_STATUS_UNAVAILABLE ? cst : CUDA_STATUS_FAILED);
    }
    if (side_alloc(&c->on_gpu, s, kemu_kernel_param_count(c->kernel)))
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    char path[64];
    for (int i = 0; i < s->ninputs; i++) {
        const io_array *a = &c->inputs[i];
        snprintf(path, sizeof path, "inputs[%d]", i);
        if ((st = gpu_upload(c, a->data, a->count * io_dtype_size(a->dtype), &c->on_gpu.input[i], path)))
            return st;
    }
    for (int o = 0; o < s->noutputs; o++) {
        const io_array *a = &c->outputs[o];
        snprintf(path, sizeof path, "outputs[%d]", o);
        if (c->output_alias[o] >= 0)
            c->on_gpu.output[o] = c->on_gpu.input[c->output_alias[o]];
        else if ((st = gpu_upload(c, a->data, a->count * io_dtype_size(a->dtype), &c->on_gpu.output[o], path)))
            return st;
    }
    for (int i = 0; i < s->nscratch; i++) {
        const io_array *a = &c->scratch_host[i];
        snprintf(path, sizeof path, "scratch[%d]", i);
        if (s->scratch[i].memory_space == KEMU_CALL_GMEM &&
            (st = gpu_upload(c, a->data, a->count * io_dtype_size(a->dtype), &c->on_gpu.scratch[i], path)))
            return st;
    }
    /* smem scratch arguments are 0 here: the wrapper finds the scratch */
    set_arguments(c, &c->on_gpu);
    return KEMU_OK;
}

/* --backend both: the GPU's outputs into gpu->outputs. */
static kemu_status gpu_copy_outputs(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    call_gpu *g = c->gpu;
    g->outputs = calloc((size_t)s->noutputs + 1, sizeof *g->outputs);
    if (!g->outputs)
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    g->noutputs = s->noutputs;
    for (int o = 0; o < s->noutputs; o++) {
        io_array *a = &g->outputs[o];
        char path[64], msg[2048];
        snprintf(path, sizeof path, "outputs[%d]", o);
        *a = c->outputs[o];
        a->data = NULL;
        if (io_array_alloc(a, msg, sizeof msg))
            return FAIL(KEMU_ERR_OUT_OF_MEMORY, path, "%s", msg);
        if (cuda_backend_copy_to_host(c->backend, a->data, c->on_gpu.output[o], a->count * io_dtype_size(a->dtype),
                                      msg, sizeof msg))
            return FAIL(KEMU_ERR_IO, path, "cuda: %s", msg);
    }
    return KEMU_OK;
}

/* The launch on the GPU (after the emulator's, with --backend both). */
static kemu_status gpu_run(call_state *c, const kemu_launch_config *lc)
{
    call_gpu *g = c->gpu;
    kemu_status st = gpu_prepare(c);
    if (st)
        return st;
    if (g->use_emulator) {
        if (g->user_tolerance)
            cuda_tolerance_from_user(g->user_tolerance, &g->tolerance);
        else
            cuda_tolerance_for_kernel(c->kernel, &g->tolerance);
        st = emu_launch(c, lc);
        if (st == KEMU_ERR_KERNEL_FAULT)
            g->emu_faulted = 1;
        else if (st || (st = collect_outputs(c, 0)))
            return st;
    }
    cuda_status cst = cuda_backend_launch(c->backend, lc, c->on_gpu.args, &g->seconds, g->message, sizeof g->message);
    if (cst == CUDA_STATUS_KERNEL_FAULT)
        g->faulted = 1;
    else if (cst)
        return gpu_stop(c, cst);
    if (g->emu_faulted)
        return KEMU_ERR_KERNEL_FAULT; /* err holds the emulator's report */
    if (g->faulted)
        return FAIL(KEMU_ERR_KERNEL_FAULT, NULL, "cuda: %s", g->message);
    return g->use_emulator ? gpu_copy_outputs(c) : collect_outputs(c, 1);
}

static void call_state_free(call_state *c)
{
    free(c->shared_image);
    const kemu_call_spec *s = c->spec;
    for (int i = 0; c->scratch_host && i < s->nscratch; i++)
        io_array_free(&c->scratch_host[i]);
    free(c->scratch_host);
    side_free(&c->on_gpu);
    cuda_backend_close(c->backend); /* frees the GPU's buffers */
    for (int i = 0; c->inputs && i < s->ninputs; i++) {
        io_array_free(&c->inputs[i]);
        if (c->on_emu.input[i])
            kemu_free(c->dev, c->on_emu.input[i], NULL);
    }
    for (int o = 0; c->outputs && o < s->noutputs; o++) {
        io_array_free(&c->outputs[o]);
        if (c->on_emu.output[o] && c->output_alias[o] < 0)
            kemu_free(c->dev, c->on_emu.output[o], NULL);
    }
    for (int i = 0; c->on_emu.scratch && i < s->nscratch; i++)
        if (s->scratch[i].memory_space == KEMU_CALL_GMEM && c->on_emu.scratch[i])
            kemu_free(c->dev, c->on_emu.scratch[i], NULL);
    free(c->inputs);
    free(c->outputs);
    free(c->output_alias);
    side_free(&c->on_emu);
    if (c->mod)
        kemu_module_unload(c->mod);
}

static kemu_status run_checked(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    kemu_status st;
    if ((st = call_validate(s, c->result, c->err)) || (st = call_limits_mpmd(s, c->result, c->err)))
        return st;
    if (s->has_mpmd) {
        if (s->nscratch > 0)
            return call_limit_mpmd_scratch(c->result, c->err);
        if ((st = load_kernel(c)))
            return st;
        if (kemu_kernel_param_count(c->kernel) > s->ninputs + s->noutputs)
            return call_limit_mpmd_scratch(c->result, c->err);
    }
    if ((st = call_limits_grid(s, c->result, c->err)))
        return st;
    if (!c->kernel && (st = load_kernel(c)))
        return st;
    if ((st = check_params(c)))
        return st;
    size_t ni = (size_t)s->ninputs + 1, no = (size_t)s->noutputs + 1, ns = (size_t)s->nscratch + 1;
    c->inputs = calloc(ni, sizeof *c->inputs);
    c->outputs = calloc(no, sizeof *c->outputs);
    c->output_alias = calloc(no, sizeof *c->output_alias);
    c->scratch_host = calloc(ns, sizeof *c->scratch_host);
    if (!c->inputs || !c->outputs || !c->output_alias || !c->scratch_host ||
        side_alloc(&c->on_emu, s, kemu_kernel_param_count(c->kernel)))
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    kemu_launch_config lc;
    if ((st = load_inputs(c)) || (st = prepare_outputs(c)) || (st = check_output_paths(c)) ||
        (st = launch_geometry(c, &lc)) || (st = place_operands(c, &lc)))
        return st;
    if (c->result)
        snprintf(c->result->kernel, sizeof c->result->kernel, "%s", kemu_kernel_name(c->kernel));
    int use_emulator = !c->gpu || c->gpu->use_emulator;
    if (use_emulator && s->interpret.detect_races && (st = enable_racecheck(c)))
        return st;
    if (c->gpu)
        return gpu_run(c, &lc);
    if ((st = emu_launch(c, &lc)))
        return st;
    return collect_outputs(c, 0);
}

static kemu_status call_run(kemu_device *dev, const kemu_call_spec *spec, call_gpu *gpu, kemu_call_result *result,
                            kemu_error *err)
{
    if (result)
        memset(result, 0, sizeof *result);
    if (!dev || !spec)
        return call_fail(result, err, KEMU_ERR_INVALID_ARGUMENT, NULL, "kemu_call_run: NULL device or spec");
    call_state c;
    memset(&c, 0, sizeof c);
    c.dev = dev;
    c.spec = spec;
    c.result = result;
    c.err = err;
    c.gpu = gpu;
    kemu_status st = run_checked(&c);
    call_state_free(&c);
    return st;
}

kemu_status kemu_call_run(kemu_device *dev, const kemu_call_spec *spec, kemu_call_result *result, kemu_error *err)
{
    return call_run(dev, spec, NULL, result, err);
}

kemu_status call_run_gpu(kemu_device *dev, const kemu_call_spec *spec, call_gpu *gpu, kemu_call_result *result,
                         kemu_error *err)
{
    gpu->status = CUDA_STATUS_OK;
    gpu->message[0] = 0;
    return call_run(dev, spec, gpu, result, err);
}

void call_gpu_free(call_gpu *gpu)
{
    if (!gpu)
        return;
    for (int o = 0; gpu->outputs && o < gpu->noutputs; o++)
        io_array_free(&gpu->outputs[o]);
    free(gpu->outputs);
    gpu->outputs = NULL;
    gpu->noutputs = 0;
    free(gpu->jit_log);
    gpu->jit_log = NULL;
}

void kemu_call_result_free(kemu_call_result *r)
{
    if (!r)
        return;
    for (int o = 0; o < r->noutputs; o++)
        free(r->outputs[o].data);
    free(r->outputs);
    r->outputs = NULL;
    r->noutputs = 0;
    kemu_report_free(&r->report);
}
