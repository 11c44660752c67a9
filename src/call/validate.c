/* The checks of a call that need no file: the structure of the spec (one
 * error naming the field's JSON path), then the interpret-mode limits of
 * the Mosaic GPU backend in its order, with its exact messages and one
 * hint each. Nothing here allocates device memory or reads files. */
#include "call/call_internal.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

kemu_status call_fail(kemu_call_result *result, kemu_error *err, kemu_status status, const char *path,
                      const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (result)
        snprintf(result->path, sizeof result->path, "%s", path ? path : "");
    if (path && *path)
        return util_error(err, status, "%s: %s", path, msg);
    return util_error(err, status, "%s", msg);
}

static const struct {
    const char *numpy;
    io_dtype dt;
} numpy_names[] = {
    {"bool", IO_DT_BOOL},       {"int8", IO_DT_I8},         {"int16", IO_DT_I16},     {"int32", IO_DT_I32},
    {"int64", IO_DT_I64},       {"uint8", IO_DT_U8},        {"uint16", IO_DT_U16},    {"uint32", IO_DT_U32},
    {"uint64", IO_DT_U64},      {"float16", IO_DT_F16},     {"bfloat16", IO_DT_BF16}, {"float32", IO_DT_F32},
    {"float64", IO_DT_F64},
};

int call_dtype_parse(const char *name, io_dtype *out)
{
    if (!name)
        return -1;
    if (io_dtype_parse(name, out) == 0)
        return 0;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(numpy_names); i++)
        if (!strcmp(name, numpy_names[i].numpy)) {
            *out = numpy_names[i].dt;
            return 0;
        }
    return -1;
}

const char *call_dtype_numpy_name(io_dtype dt)
{
    for (size_t i = 0; i < KEMU_ARRAY_LEN(numpy_names); i++)
        if (numpy_names[i].dt == dt)
            return numpy_names[i].numpy;
    return "?";
}

void call_format_tuple(const unsigned long long *dims, int n, char *buf, size_t len)
{
    size_t k = 0;
    if (!len)
        return;
    buf[0] = 0;
    k += (size_t)snprintf(buf + k, len - k, "(");
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%llu", i ? ", " : "", dims[i]);
    if (k < len)
        snprintf(buf + k, len - k, n == 1 ? ",)" : ")");
}

const kemu_call_mesh *call_launch_mesh(const kemu_call_spec *s)
{
    if (s->has_mpmd)
        return s->nmpmd > 0 && s->mpmd ? &s->mpmd[0].mesh : NULL;
    return s->mesh;
}

/* ---- structure ------------------------------------------------------------ */

#define FAIL(path, ...) call_fail(r, err, KEMU_ERR_INVALID_ARGUMENT, path, __VA_ARGS__)

static const char dtype_list[] = "f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool, or the NumPy names";

static kemu_status check_mesh(const kemu_call_mesh *m, const char *where, kemu_call_result *r, kemu_error *err)
{
    char path[256];
    if (m->grid_ndim < 0 || m->grid_ndim > 3) {
        snprintf(path, sizeof path, "%s.grid", where);
        return FAIL(path, "a mesh grid has 0 to 3 dimensions, not %d", m->grid_ndim);
    }
    for (int i = 0; i < m->grid_ndim; i++)
        if (m->grid[i] == 0) {
            snprintf(path, sizeof path, "%s.grid[%d]", where, i);
            return FAIL(path, "a mesh dimension must be at least 1");
        }
    if (m->cluster_ndim < 0 || m->cluster_ndim > 3) {
        snprintf(path, sizeof path, "%s.cluster", where);
        return FAIL(path, "a cluster has 0 to 3 dimensions, not %d", m->cluster_ndim);
    }
    for (int i = 0; i < m->cluster_ndim; i++)
        if (m->cluster[i] == 0) {
            snprintf(path, sizeof path, "%s.cluster[%d]", where, i);
            return FAIL(path, "a cluster dimension must be at least 1");
        }
    return KEMU_OK;
}

static kemu_status check_shape(int ndim, const char *where, kemu_call_result *r, kemu_error *err)
{
    char path[256];
    snprintf(path, sizeof path, "%s.shape", where);
    if (ndim < 0 || ndim > KEMU_CALL_MAX_DIMS)
        return FAIL(path, "an array has 0 to %d dimensions, not %d", KEMU_CALL_MAX_DIMS, ndim);
    return KEMU_OK;
}

static kemu_status check_dtype(const char *dtype, int required, const char *why, const char *where,
                               kemu_call_result *r, kemu_error *err)
{
    char path[256];
    io_dtype dt;
    snprintf(path, sizeof path, "%s.dtype", where);
    if (!dtype) {
        if (required)
            return FAIL(path, "missing (%s)", why);
        return KEMU_OK;
    }
    if (call_dtype_parse(dtype, &dt))
        return FAIL(path, "unknown dtype \"%s\" (%s)", dtype, dtype_list);
    return KEMU_OK;
}

/* Whether output o is aliased to some input. */
static int output_aliased(const kemu_call_spec *s, int o)
{
    for (int k = 0; k < s->naliases; k++)
        if (s->input_output_aliases[k][1] == o)
            return 1;
    return 0;
}

static kemu_status check_operands(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    char where[64], path[96];
    if (s->ninputs < 0 || (s->ninputs && !s->inputs))
        return FAIL("inputs", "bad input count %d", s->ninputs);
    if (s->noutputs < 0 || (s->noutputs && !s->outputs))
        return FAIL("outputs", "bad output count %d", s->noutputs);
    if (s->nscratch < 0 || (s->nscratch && !s->scratch))
        return FAIL("scratch", "bad scratch count %d", s->nscratch);
    for (int i = 0; i < s->ninputs; i++) {
        const kemu_call_array *a = &s->inputs[i];
        snprintf(where, sizeof where, "inputs[%d]", i);
        int sources = !!a->data + !!a->npy + !!a->init;
        if (sources == 0)
            return FAIL(where, "needs its data: \"npy\" (a .npy file) or \"init\" (a generator such as \"rand=1\")");
        if (sources > 1)
            return FAIL(where, "has more than one of \"npy\", \"init\" and data; give one");
        kemu_status st = check_dtype(a->dtype, !a->npy, a->init ? "required with \"init\"" : "required with data",
                                     where, r, err);
        if (st)
            return st;
        if (a->dtype && (st = check_shape(a->ndim, where, r, err)))
            return st;
    }
    for (int i = 0; i < s->noutputs; i++) {
        const kemu_call_array *a = &s->outputs[i];
        snprintf(where, sizeof where, "outputs[%d]", i);
        if (a->init) {
            snprintf(path, sizeof path, "%s.init", where);
            return FAIL(path, "outputs are not initialized; they are filled per interpret.uninitialized_memory");
        }
        if (a->data) {
            snprintf(path, sizeof path, "%s.data", where);
            return FAIL(path, "outputs take no input data; alias the output to an input to start from its data");
        }
        kemu_status st = check_dtype(a->dtype, !output_aliased(s, i),
                                     "required unless the output is aliased to an input", where, r, err);
        if (st)
            return st;
        if (a->dtype && (st = check_shape(a->ndim, where, r, err)))
            return st;
    }
    for (int i = 0; i < s->nscratch; i++) {
        const kemu_call_scratch *a = &s->scratch[i];
        snprintf(where, sizeof where, "scratch[%d]", i);
        kemu_status st = check_dtype(a->dtype, 1, "required", where, r, err);
        if (!st)
            st = check_shape(a->ndim, where, r, err);
        if (st)
            return st;
        if (a->memory_space != KEMU_CALL_SMEM && a->memory_space != KEMU_CALL_GMEM) {
            snprintf(path, sizeof path, "%s.memory_space", where);
            return FAIL(path, "unknown memory space %d (smem or gmem)", (int)a->memory_space);
        }
    }
    /* names are unique over inputs and outputs */
    int total = s->ninputs + s->noutputs;
    for (int i = 0; i < total; i++) {
        const kemu_call_array *a = i < s->ninputs ? &s->inputs[i] : &s->outputs[i - s->ninputs];
        if (!a->name)
            continue;
        for (int j = 0; j < i; j++) {
            const kemu_call_array *b = j < s->ninputs ? &s->inputs[j] : &s->outputs[j - s->ninputs];
            if (!b->name || strcmp(a->name, b->name))
                continue;
            snprintf(path, sizeof path, "%s[%d].name", i < s->ninputs ? "inputs" : "outputs",
                     i < s->ninputs ? i : i - s->ninputs);
            return FAIL(path, "the name \"%s\" is already used by %s[%d]", a->name, j < s->ninputs ? "inputs" : "outputs",
                        j < s->ninputs ? j : j - s->ninputs);
        }
    }
    return KEMU_OK;
}

static kemu_status check_aliases(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    char path[96];
    if (s->naliases < 0 || (s->naliases && !s->input_output_aliases))
        return FAIL("input_output_aliases", "bad alias count %d", s->naliases);
    for (int k = 0; k < s->naliases; k++) {
        int in = s->input_output_aliases[k][0], out = s->input_output_aliases[k][1];
        if (in < 0 || in >= s->ninputs) {
            snprintf(path, sizeof path, "input_output_aliases[%d][0]", k);
            return FAIL(path, "input index %d is out of range (the call has %d input%s)", in, s->ninputs,
                        s->ninputs == 1 ? "" : "s");
        }
        if (out < 0 || out >= s->noutputs) {
            snprintf(path, sizeof path, "input_output_aliases[%d][1]", k);
            return FAIL(path, "output index %d is out of range (the call has %d output%s)", out, s->noutputs,
                        s->noutputs == 1 ? "" : "s");
        }
        for (int j = 0; j < k; j++) {
            snprintf(path, sizeof path, "input_output_aliases[%d]", k);
            if (s->input_output_aliases[j][0] == in)
                return FAIL(path, "input %d is already aliased to output %d by input_output_aliases[%d]; an input "
                                  "buffer can be passed as one output only",
                            in, s->input_output_aliases[j][1], j);
            if (s->input_output_aliases[j][1] == out)
                return FAIL(path, "output %d is already aliased to input %d by input_output_aliases[%d]", out,
                            s->input_output_aliases[j][0], j);
        }
    }
    return KEMU_OK;
}

kemu_status call_validate(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    char path[96];
    kemu_status st;
    if (!s)
        return FAIL(NULL, "kemu_call_run: NULL spec");
    if (!s->ptx && !s->ptx_text)
        return FAIL("ptx", "missing (the PTX module holding the kernel)");
    if (s->has_mpmd && s->kernel)
        return FAIL("kernel", "a call has either \"kernel\" (a pallas_call) or \"mpmd\" (an mpmd_map), not both");
    if (!s->has_mpmd && !s->kernel)
        return FAIL("kernel", "missing (the entry to launch), or give \"mpmd\" mesh/function pairs");
    if (s->has_mpmd && s->mesh)
        return FAIL("mesh", "an mpmd call takes its mesh from each mesh/function pair");
    if (s->has_grid) {
        if (s->grid_ndim < 0 || s->grid_ndim > KEMU_CALL_MAX_DIMS)
            return FAIL("grid", "a grid has 0 to %d dimensions, not %d", KEMU_CALL_MAX_DIMS, s->grid_ndim);
        for (int i = 0; i < s->grid_ndim; i++) {
            const kemu_call_dim *d = &s->grid[i];
            if (d->dynamic) {
                int found = 0;
                for (int j = 0; j < s->ninputs && s->inputs && !found; j++)
                    found = s->inputs[j].name && !strcmp(s->inputs[j].name, d->dynamic);
                if (!found) {
                    snprintf(path, sizeof path, "grid[%d].dynamic", i);
                    return FAIL(path, "no input is named \"%s\"", d->dynamic);
                }
            } else if (d->size == 0 || d->size > 0x7fffffffull) {
                snprintf(path, sizeof path, "grid[%d]", i);
                return FAIL(path, "a grid dimension must be between 1 and 2147483647, not %llu", d->size);
            }
        }
    }
    if (s->mesh && (st = check_mesh(s->mesh, "mesh", r, err)))
        return st;
    if ((s->mesh || s->has_mpmd) && (s->block[0] || s->block[1] || s->block[2]))
        return FAIL("block", "a call with a mesh runs num_threads x 128 threads per block; leave \"block\" out");
    if ((st = check_aliases(s, r, err)) || (st = check_operands(s, r, err)))
        return st;
    if (s->nscalar_operands < 0 || (s->nscalar_operands && !s->scalar_operands))
        return FAIL("scalar_operands", "bad count %d", s->nscalar_operands);
    for (int i = 0; i < s->nscalar_operands; i++) {
        snprintf(path, sizeof path, "scalar_operands[%d]", i);
        if ((st = check_dtype(s->scalar_operands[i].dtype, 1, "required", path, r, err)))
            return st;
    }
    if (s->nmpmd < 0 || (s->nmpmd && !s->mpmd))
        return FAIL("mpmd", "bad pair count %d", s->nmpmd);
    for (int i = 0; i < s->nmpmd; i++) {
        snprintf(path, sizeof path, "mpmd[%d].mesh", i);
        if ((st = check_mesh(&s->mpmd[i].mesh, path, r, err)))
            return st;
        if (!s->mpmd[i].kernel) {
            snprintf(path, sizeof path, "mpmd[%d].kernel", i);
            return FAIL(path, "missing (the entry this mesh runs)");
        }
    }
    if (s->nexternal_meshes < 0 || (s->nexternal_meshes && !s->external_meshes))
        return FAIL("external_meshes", "bad count %d", s->nexternal_meshes);
    for (int i = 0; i < s->nexternal_meshes; i++) {
        snprintf(path, sizeof path, "external_meshes[%d]", i);
        if ((st = check_mesh(&s->external_meshes[i], path, r, err)))
            return st;
    }
    if (s->interpret.uninitialized_memory != KEMU_UNINIT_NAN && s->interpret.uninitialized_memory != KEMU_UNINIT_ZERO)
        return FAIL("interpret.uninitialized_memory", "interpret mode fills memory with \"nan\" or \"zero\"");
    if (s->interpret.out_of_bounds_reads != KEMU_CALL_OOB_RAISE &&
        s->interpret.out_of_bounds_reads != KEMU_CALL_OOB_UNINITIALIZED)
        return FAIL("interpret.out_of_bounds_reads", "\"raise\" or \"uninitialized\"");
    return KEMU_OK;
}

/* ---- interpret-mode limits --------------------------------------------------- */

static kemu_status limit(kemu_call_result *r, kemu_error *err, int number, const char *path, const char *hint,
                         const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static kemu_status limit(kemu_call_result *r, kemu_error *err, int number, const char *path, const char *hint,
                         const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = KEMU_ERR_UNSUPPORTED;
    }
    if (r) {
        r->limit = number;
        snprintf(r->exception, sizeof r->exception, "NotImplementedError");
        snprintf(r->hint, sizeof r->hint, "%s", hint);
        snprintf(r->path, sizeof r->path, "%s", path);
    }
    return KEMU_ERR_UNSUPPORTED;
}

/* ScratchType(dtype=float32, shape=(256,), memory_space=smem) */
static void scratch_repr(const kemu_call_scratch *sc, char *buf, size_t len)
{
    io_dtype dt = IO_DT_F32;
    char shape[256];
    call_dtype_parse(sc->dtype, &dt);
    call_format_tuple(sc->shape, sc->ndim, shape, sizeof shape);
    snprintf(buf, len, "ScratchType(dtype=%s, shape=%s, memory_space=%s)", call_dtype_numpy_name(dt), shape,
             sc->memory_space == KEMU_CALL_GMEM ? "gmem" : "smem");
}

kemu_status call_limits_mpmd(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    if (s->has_mpmd && s->nmpmd == 0)
        return limit(r, err, 1, "mpmd",
                     "give \"mpmd\" at least one {\"mesh\": ..., \"kernel\": ...} pair, or describe a single-kernel "
                     "call with \"kernel\"",
                     "At least one mesh/function pair is required");
    if (s->has_mpmd && s->nmpmd > 1) {
        for (int i = 0; i < s->nscratch; i++) {
            const kemu_call_scratch *sc = &s->scratch[i];
            if (sc->memory_space != KEMU_CALL_SMEM || sc->core_type)
                continue;
            char repr[512], path[64];
            scratch_repr(sc, repr, sizeof repr);
            snprintf(path, sizeof path, "scratch[%d].memory_space", i);
            return limit(r, err, 2, path,
                         "give the scratch a core-specific memory space, e.g. {\"space\": \"smem\", \"core_type\": "
                         "\"<core>\"}, or place it in \"gmem\"",
                         "MPMD map with more than one mesh requires scratch_type to have a `core_type` specified, "
                         "but scratch_type=%s is missing it.",
                         repr);
        }
        return limit(r, err, 3, "mpmd",
                     "split the map into separate single-kernel calls, one per mesh/function pair",
                     "Lowering multiple mesh/function pairs is not supported by the Mosaic GPU backend");
    }
    if (s->nexternal_meshes > 0)
        return limit(r, err, 4, "external_meshes",
                     "bind the mesh directly (the call's \"mesh\" or the mpmd pair's) instead of passing external "
                     "meshes",
                     "External meshes are not supported by the Mosaic GPU backend");
    return KEMU_OK;
}

kemu_status call_limit_mpmd_scratch(kemu_call_result *r, kemu_error *err)
{
    return limit(r, err, 5, "scratch",
                 "allocate scratch inside the kernel (shared memory declared in the PTX), or use a plain "
                 "single-kernel call with \"kernel\" and \"scratch\"",
                 "Scratch operands are not supported by the Mosaic GPU mpmd_map lowering");
}

/* a * b, saturating at UINT64_MAX */
static unsigned long long mul_saturating(unsigned long long a, unsigned long long b)
{
    unsigned long long p;
    return __builtin_mul_overflow(a, b, &p) ? ~0ull : p;
}

kemu_status call_limits_grid(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    if (s->has_grid)
        for (int i = 0; i < s->grid_ndim; i++)
            if (s->grid[i].dynamic) {
                char path[64];
                snprintf(path, sizeof path, "grid[%d]", i);
                return limit(r, err, 6, path,
                             "use a static grid: replace {\"dynamic\": ...} with the bound's value (one call per "
                             "grid size)",
                             "Dynamic grid bounds not (yet) supported in GPU interpret mode.");
            }
    const kemu_call_mesh *m = call_launch_mesh(s);
    if (m && s->has_grid) {
        unsigned long long recon[7], grid[KEMU_CALL_MAX_DIMS];
        int n = 0;
        for (int i = 0; i < m->grid_ndim; i++)
            recon[n++] = m->grid[i];
        for (int i = 0; i < m->cluster_ndim; i++)
            recon[n++] = m->cluster[i];
        recon[n++] = m->num_threads ? m->num_threads : 1;
        unsigned long long want = 1, have = 1;
        for (int i = 0; i < n; i++)
            want = mul_saturating(want, recon[i]);
        for (int i = 0; i < s->grid_ndim; i++) {
            grid[i] = s->grid[i].size;
            have = mul_saturating(have, grid[i]);
        }
        if (want != have) {
            char gt[256], rt[256], hint[512];
            call_format_tuple(grid, s->grid_ndim, gt, sizeof gt);
            call_format_tuple(recon, n, rt, sizeof rt);
            snprintf(hint, sizeof hint,
                     "make the grid's size the product of the mesh's grid, cluster and num_threads (%llu), or leave "
                     "\"grid\" out",
                     want);
            return limit(r, err, 7, "grid", hint,
                         "Invalid grid %s in grid_mapping: expected grid to have the same size as %s", gt, rt);
        }
    }
    if (s->nscalar_operands > 0)
        return limit(r, err, 8, "scalar_operands",
                     "bake scalar values into the kernel, or pass them as 0-d input arrays",
                     "Scalar arguments not (yet) supported on GPU");
    return KEMU_OK;
}
