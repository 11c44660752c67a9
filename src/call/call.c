/* kemu_call_run: runs a Pallas-style call (include/kemu/call.h). It checks
 * the spec's structure, then the interpret-mode limits in the backend's
 * order, then loads the PTX and the input files and translates the call
 * into a launch plan (include/kemu/plan.h): inputs, outputs (aliased ones
 * share their input's buffer) and scratch in kernel-ABI order, smem scratch
 * as SHARED operands in the launch's dynamic shared memory. The plan lays
 * them out, launches (on the emulator, a GPU or both), reads the outputs
 * back and writes the spec's files; this file words its problems as paths
 * of the spec ("outputs[1].npy: ..."). */
#include "call/call_gpu.h"
#include "call/call_internal.h"
#include "check/check_internal.h"
#include "exec/exec.h"
#include "io/npy.h"
#include "kemu/plan.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    call_gpu *gpu;               /* --backend cuda|both (call_run_gpu), or NULL */
    kemu_plan *plan;
    kemu_tolerance tolerance;    /* the GPU's user tolerance, as the plan takes it */
    char (*labels)[32];          /* by output: "outputs[N]" for outputs with neither file nor name */
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
        cfg.racecheck_warp = KEMU_CHECK_AUTO;
        cfg.racecheck_benign = KEMU_CHECK_WARN;
    }
    cfg.tools |= KEMU_TOOL_RACECHECK;
    return kemu_device_set_checks(c->dev, &cfg, c->err);
}

/* The call's operands as a launch plan, in kernel-ABI order: inputs,
 * outputs (an aliased one shares its input's buffer), scratch (gmem as a
 * global buffer, smem as a SHARED operand). */
static kemu_status make_plan(call_state *c, const kemu_launch_config *lc)
{
    const kemu_call_spec *s = c->spec;
    kemu_plan_config pc;
    memset(&pc, 0, sizeof pc);
    pc.launch = *lc;
    pc.backends = !c->gpu ? KEMU_BACKEND_EMULATOR
                : c->gpu->use_emulator ? KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA : KEMU_BACKEND_CUDA;
    pc.cuda_device = c->gpu ? c->gpu->ordinal : 0;
    pc.ptx_path = s->ptx;
    pc.spec_file = s->spec_file;
    pc.ptx_text = s->ptx_text;
    pc.ptx_length = s->ptx_length;
    pc.uninit = s->interpret.uninitialized_memory;
    pc.oob_reads_fill = s->interpret.out_of_bounds_reads == KEMU_CALL_OOB_UNINITIALIZED;
    if (c->gpu && c->gpu->user_tolerance) {
        const io_compare_opts *t = c->gpu->user_tolerance;
        c->tolerance = (kemu_tolerance){t->ulps, t->rtol, t->atol};
        pc.tolerance = &c->tolerance;
    }
    kemu_error e;
    if (kemu_plan_create(c->kernel, &pc, &c->plan, &e))
        return FAIL(e.status, NULL, "%s", e.message);
    int np = kemu_kernel_param_count(c->kernel);
    for (int i = 0; i < np; i++) {
        kemu_operand op;
        memset(&op, 0, sizeof op);
        const io_array *a = NULL;
        io_array scratch;
        memset(&scratch, 0, sizeof scratch);
        char path[64];
        int smem;
        operand_of_param(s, i, path, sizeof path, &smem);
        if (i < s->ninputs) {
            a = &c->inputs[i];
            op.kind = KEMU_OPERAND_IN;
            op.source_file = s->inputs[i].npy;
        } else if (i < s->ninputs + s->noutputs) {
            int o = i - s->ninputs;
            a = &c->outputs[o];
            op.kind = KEMU_OPERAND_OUT;
            op.aliased = c->output_alias[o] >= 0;
            op.alias_input = c->output_alias[o];
            op.output_file = s->outputs[o].npy;
            /* comparisons name an output by its file, else its name */
            op.label = s->outputs[o].npy ? s->outputs[o].npy : s->outputs[o].name ? s->outputs[o].name : NULL;
            if (!op.label) {
                snprintf(c->labels[o], sizeof c->labels[o], "outputs[%d]", o);
                op.label = c->labels[o];
            }
        } else {
            const kemu_call_scratch *sc = &s->scratch[i - s->ninputs - s->noutputs];
            kemu_status st;
            call_dtype_parse(sc->dtype, &scratch.dtype);
            if ((st = set_shape(c, &scratch, sc->ndim, sc->shape, path)))
                return st;
            a = &scratch;
            op.kind = smem ? KEMU_OPERAND_SHARED : KEMU_OPERAND_SCRATCH;
        }
        op.dtype = io_dtype_name(a->dtype);
        op.ndim = a->ndim;
        memcpy(op.shape, a->shape, sizeof op.shape);
        op.data = a->data;
        if (kemu_plan_add(c->plan, &op, &e))
            return FAIL(e.status, path, "%s", e.message);
    }
    return KEMU_OK;
}

/* A plan that stopped, in the call's words: the spec path of the operand. */
static kemu_status plan_problem(call_state *c, const kemu_plan_result *pr, const kemu_error *e)
{
    const kemu_call_spec *s = c->spec;
    char path[64] = "";
    int smem, i = pr->operand, o = i - s->ninputs;
    if (i >= 0)
        operand_of_param(s, i, path, sizeof path, &smem);
    switch (pr->stage) {
    case KEMU_PLAN_STAGE_OUTPUT_FILE:
        snprintf(path, sizeof path, "outputs[%d].npy", o);
        if (pr->path_problem == KEMU_PLAN_PATH_IS_INPUT) {
            int in = pr->other_operand;
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path,
                        "would overwrite %s, the file of inputs[%d]; alias the output to that input "
                        "(input_output_aliases [[%d, %d]]) to update it in place",
                        s->outputs[o].npy, in, in, o);
        }
        if (pr->path_problem == KEMU_PLAN_PATH_IS_MODULE)
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "would overwrite %s, the call's PTX module", s->ptx);
        if (pr->path_problem == KEMU_PLAN_PATH_IS_SPEC)
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "would overwrite %s, the call spec itself", s->spec_file);
        if (pr->path_problem == KEMU_PLAN_PATH_SAME_OUTPUT)
            return FAIL(KEMU_ERR_INVALID_ARGUMENT, path, "outputs[%d] already writes %s",
                        pr->other_operand - s->ninputs, s->outputs[o].npy);
        return FAIL(e->status, path, "%s", e->message);
    case KEMU_PLAN_STAGE_GPU:
        if (!pr->gpu_message[0]) /* the PTX could not be read or wrapped */
            return FAIL(e->status, e->status == KEMU_ERR_UNSUPPORTED ? c->kernel_path : "ptx", "%s", e->message);
        c->gpu->status = pr->gpu_unavailable ? CUDA_STATUS_UNAVAILABLE : CUDA_STATUS_FAILED;
        if (i >= 0)
            snprintf(c->gpu->message, sizeof c->gpu->message, "%s: %.1900s", path, pr->gpu_message);
        else
            snprintf(c->gpu->message, sizeof c->gpu->message, "%s", pr->gpu_message);
        c->gpu->jit_log = pr->gpu_jit_log ? strdup(pr->gpu_jit_log) : NULL;
        return FAIL(KEMU_ERR_UNSUPPORTED, NULL, "%s", c->gpu->message);
    case KEMU_PLAN_STAGE_WRITE:
        snprintf(path, sizeof path, "outputs[%d].npy", o);
        return FAIL(e->status, path, "%s", e->message);
    default:
        if (i >= 0)
            return FAIL(e->status, path, "%s", e->message);
        if (c->err)
            *c->err = *e;
        return e->status;
    }
}

/* The outputs into the result (ownership of their data moves there). */
static kemu_status take_outputs(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    kemu_call_result *r = c->result;
    if (!r)
        return KEMU_OK;
    r->outputs = calloc((size_t)s->noutputs + 1, sizeof *r->outputs);
    if (!r->outputs)
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    r->noutputs = s->noutputs;
    for (int o = 0; o < s->noutputs; o++) {
        io_array *a = &c->outputs[o];
        kemu_call_output *out = &r->outputs[o];
        out->name = s->outputs[o].name;
        out->dtype = io_dtype_name(a->dtype);
        out->ndim = a->ndim;
        for (int i = 0; i < a->ndim; i++)
            out->shape[i] = a->shape[i];
        out->data = a->data;
        out->nbytes = a->count * io_dtype_size(a->dtype);
        out->written = s->outputs[o].npy != NULL;
        a->data = NULL;
    }
    return KEMU_OK;
}

/* Runs the plan and reports as kemu_call_run (and call_run_gpu) say. */
static kemu_status run_plan(call_state *c)
{
    kemu_plan_result pr;
    kemu_error e;
    memset(&e, 0, sizeof e);
    kemu_status st = kemu_plan_run(c->plan, &pr, &e);
    kemu_call_result *r = c->result;
    if (r) {
        r->shared_bytes = pr.shared_bytes;
        r->report = pr.report;
        memset(&pr.report, 0, sizeof pr.report);
    }
    call_gpu *g = c->gpu;
    if (g) {
        snprintf(g->device_name, sizeof g->device_name, "%s", pr.gpu_name);
        g->sm = pr.gpu_sm;
        g->wrapped = pr.gpu_wrapped;
        g->seconds = pr.gpu_seconds;
        g->faulted = pr.gpu_faulted;
        g->emu_faulted = pr.emulator_faulted;
        if (pr.gpu_faulted)
            snprintf(g->message, sizeof g->message, "%s", pr.gpu_message);
        snprintf(g->tolerance, sizeof g->tolerance, "%s", pr.tolerance);
        g->comparisons = pr.comparisons;
        pr.comparisons = NULL;
        g->differing = pr.differing;
        g->ncompared = pr.ncompared;
    }
    int use_emu = !g || g->use_emulator;
    if (st == KEMU_OK || st == KEMU_ERR_KERNEL_FAULT) {
        /* outputs were read back from the emulator unless it faulted, else from the GPU alone */
        int have = use_emu ? !pr.emulator_faulted : !pr.gpu_faulted;
        kemu_status ts = have ? take_outputs(c) : KEMU_OK;
        if (c->err && st)
            *c->err = e;
        if (!st)
            st = ts;
    } else {
        st = plan_problem(c, &pr, &e);
    }
    kemu_plan_result_free(&pr);
    return st;
}

static void call_state_free(call_state *c)
{
    const kemu_call_spec *s = c->spec;
    kemu_plan_destroy(c->plan); /* the buffers on both backends */
    for (int i = 0; c->inputs && i < s->ninputs; i++)
        io_array_free(&c->inputs[i]);
    for (int o = 0; c->outputs && o < s->noutputs; o++)
        io_array_free(&c->outputs[o]);
    free(c->inputs);
    free(c->outputs);
    free(c->output_alias);
    free(c->labels);
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
    size_t ni = (size_t)s->ninputs + 1, no = (size_t)s->noutputs + 1;
    c->inputs = calloc(ni, sizeof *c->inputs);
    c->outputs = calloc(no, sizeof *c->outputs);
    c->output_alias = calloc(no, sizeof *c->output_alias);
    c->labels = calloc(no, sizeof *c->labels);
    if (!c->inputs || !c->outputs || !c->output_alias || !c->labels)
        return FAIL(KEMU_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    kemu_launch_config lc;
    if ((st = load_inputs(c)) || (st = prepare_outputs(c)) || (st = launch_geometry(c, &lc)) ||
        (st = make_plan(c, &lc)))
        return st;
    if (c->result)
        snprintf(c->result->kernel, sizeof c->result->kernel, "%s", kemu_kernel_name(c->kernel));
    int use_emulator = !c->gpu || c->gpu->use_emulator;
    if (use_emulator && s->interpret.detect_races && (st = enable_racecheck(c)))
        return st;
    return run_plan(c);
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
    free(gpu->comparisons);
    gpu->comparisons = NULL;
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
