/* Output comparison for `kemu run --backend both`: which tolerance a
 * kernel gets by default (found by scanning its lowered bytecode for
 * approximate instructions, whose documented error bounds are listed in
 * the table below and in docs/fidelity.md), and the one line printed per
 * output buffer. The element comparison itself is io_array_compare's. */
#include "config.h"
#include "cuda/compare.h"
#include "bc/bc.h"
#include "exec/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One approximate instruction and the error its result may have, per the
 * PTX ISA (see docs/fidelity.md): ULPs of its result type, a relative error
 * or an absolute error. */
typedef struct approx_bound {
    const char *name;
    uint64_t ulps;
    double rtol, atol;
} approx_bound;

enum {
    APPROX_RCP_F32, APPROX_RCP_F64, APPROX_SQRT_F32, APPROX_RSQRT_F32, APPROX_RSQRT_F64, APPROX_EX2_F32,
    APPROX_LG2_F32, APPROX_SIN_F32, APPROX_COS_F32, APPROX_TANH_F32, APPROX_DIV_F32, APPROX_DIV_FULL_F32,
    APPROX_EX2_F16, APPROX_EX2_BF16, APPROX_TANH_F16, APPROX_TANH_BF16, APPROX_COUNT
};

static const approx_bound approx_bounds[APPROX_COUNT] = {
    [APPROX_RCP_F32] = {"rcp.approx.f32", 1, 0, 0},
    /* the f64 forms compute from the top 32 bits of the input */
    [APPROX_RCP_F64] = {"rcp.approx.ftz.f64", 0, 0x1p-19, 0},
    [APPROX_SQRT_F32] = {"sqrt.approx.f32", 2, 0, 0},       /* relative error 2^-23 */
    [APPROX_RSQRT_F32] = {"rsqrt.approx.f32", 3, 0, 0},     /* relative error 2^-22.9 */
    [APPROX_RSQRT_F64] = {"rsqrt.approx.f64", 0, 0x1p-19, 0},
    [APPROX_EX2_F32] = {"ex2.approx.f32", 2, 0, 0},
    [APPROX_LG2_F32] = {"lg2.approx.f32", 4, 0, 0x1p-22},   /* abs 2^-22 in (0.5, 2), else rel 2^-22 */
    [APPROX_SIN_F32] = {"sin.approx.f32", 0, 0, 0x1.6a09e6p-21}, /* abs 2^-20.5 in [-2pi, 2pi] */
    [APPROX_COS_F32] = {"cos.approx.f32", 0, 0, 0x1.6a09e6p-21},
    [APPROX_TANH_F32] = {"tanh.approx.f32", 0, 0x1p-11, 0},
    [APPROX_DIV_F32] = {"div.approx.f32", 2, 0, 0},
    [APPROX_DIV_FULL_F32] = {"div.full.f32", 2, 0, 0},
    [APPROX_EX2_F16] = {"ex2.approx.f16", 0, 0x1.1p-10, 0}, /* relative error 2^-9.9 */
    [APPROX_EX2_BF16] = {"ex2.approx.bf16", 0, 0x1p-7, 0},
    [APPROX_TANH_F16] = {"tanh.approx.f16", 0, 0, 0x1.01p-11}, /* abs 2^-10.987 */
    [APPROX_TANH_BF16] = {"tanh.approx.bf16", 0, 0, 0x1p-8},
};

static int is_half(int type)
{
    return type == PTX_T_F16 || type == PTX_T_F16X2;
}

static int is_bfloat(int type)
{
    return type == PTX_T_BF16 || type == PTX_T_BF16X2;
}

/* Which approximate instruction op is, or -1 for an exact one. */
static int approx_kind(const bc_op *op)
{
    if (op->code == BC_FDIV) {
        if (op->mode == BC_RND_APPROX)
            return APPROX_DIV_F32;
        if (op->mode == BC_RND_FULL)
            return APPROX_DIV_FULL_F32;
        return -1;
    }
    if (op->code != BC_FUNARY)
        return -1;
    int rounded = op->mode2 != BC_RND_NONE && op->mode2 != BC_RND_APPROX && op->mode2 != BC_RND_FULL;
    int f64 = op->type == PTX_T_F64;
    switch (op->mode) {
    case BC_FN_RCP: return rounded ? -1 : f64 ? APPROX_RCP_F64 : APPROX_RCP_F32;
    case BC_FN_SQRT: return rounded ? -1 : APPROX_SQRT_F32;
    case BC_FN_RSQRT: return f64 ? APPROX_RSQRT_F64 : APPROX_RSQRT_F32;
    case BC_FN_EX2: return is_half(op->type) ? APPROX_EX2_F16 : is_bfloat(op->type) ? APPROX_EX2_BF16 : APPROX_EX2_F32;
    case BC_FN_LG2: return APPROX_LG2_F32;
    case BC_FN_SIN: return APPROX_SIN_F32;
    case BC_FN_COS: return APPROX_COS_F32;
    case BC_FN_TANH:
        return is_half(op->type) ? APPROX_TANH_F16 : is_bfloat(op->type) ? APPROX_TANH_BF16 : APPROX_TANH_F32;
    default: return -1;
    }
}

/* Marks in used[] the approximate instructions of function `index` and of
 * every function it calls. */
static void scan_function(const bc_module *m, int index, unsigned char *visited, int used[APPROX_COUNT])
{
    if (index < 0 || index >= m->nfunctions || visited[index])
        return;
    visited[index] = 1;
    const bc_function *fn = m->functions[index];
    if (!fn)
        return;
    for (uint32_t i = 0; i < fn->ncode; i++) {
        int kind = approx_kind(&fn->code[i]);
        if (kind >= 0)
            used[kind] = 1;
    }
    for (uint32_t i = 0; i < fn->ncalls; i++)
        scan_function(m, fn->calls[i].callee, visited, used);
}

static void describe_numbers(const io_compare_opts *o, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%llu ULP%s", (unsigned long long)o->ulps, o->ulps == 1 ? "" : "s");
    if (o->rtol > 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, ", rtol %.3g", o->rtol);
    if (o->atol > 0 && n < len)
        snprintf(buf + n, len - n, ", atol %.3g", o->atol);
}

void cuda_tolerance_for_kernel(const kemu_kernel *k, cuda_tolerance *out)
{
    memset(out, 0, sizeof *out);
    int used[APPROX_COUNT] = {0};
    const bc_module *m = k && k->mod ? k->mod->bc : NULL;
    if (m && m->nfunctions > 0) {
        unsigned char *visited = calloc((size_t)m->nfunctions, 1);
        if (visited) {
            scan_function(m, k->fn->index, visited, used);
            free(visited);
        } else {
            /* no memory for the walk: scan the whole module instead */
            for (int f = 0; f < m->nfunctions; f++) {
                const bc_function *fn = m->functions[f];
                for (uint32_t i = 0; fn && i < fn->ncode; i++) {
                    int kind = approx_kind(&fn->code[i]);
                    if (kind >= 0)
                        used[kind] = 1;
                }
            }
        }
    }
    char names[320] = "";
    size_t n = 0;
    for (int kind = 0; kind < APPROX_COUNT; kind++) {
        if (!used[kind])
            continue;
        const approx_bound *b = &approx_bounds[kind];
        out->approximate = 1;
        if (b->ulps > out->opts.ulps)
            out->opts.ulps = b->ulps;
        out->opts.rtol = fmax(out->opts.rtol, b->rtol);
        out->opts.atol = fmax(out->opts.atol, b->atol);
        if (n < sizeof names)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", b->name);
    }
    char numbers[128];
    describe_numbers(&out->opts, numbers, sizeof numbers);
    if (out->approximate)
        snprintf(out->description, sizeof out->description, "%s (approximate: %s)", numbers, names);
    else
        snprintf(out->description, sizeof out->description, "%s (no approximate instructions)", numbers);
}

int cuda_kernel_target_sm(const kemu_kernel *k)
{
    return k && k->mod && k->mod->bc ? k->mod->bc->arch_sm : 0;
}

void cuda_tolerance_from_user(const io_compare_opts *opts, cuda_tolerance *out)
{
    memset(out, 0, sizeof *out);
    out->opts = *opts;
    char numbers[128];
    describe_numbers(opts, numbers, sizeof numbers);
    snprintf(out->description, sizeof out->description, "%s (given)", numbers);
}

static void format_index(const io_array *a, size_t flat, char *buf, size_t len)
{
    size_t idx[IO_MAX_DIMS];
    io_index_unflatten(a, flat, idx);
    size_t n = (size_t)snprintf(buf, len, "[");
    if (a->ndim == 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%zu", flat);
    for (int d = 0; d < a->ndim && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%zu", d ? "," : "", idx[d]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
}

int cuda_compare_buffer(const char *name, const io_array *emu, const io_array *gpu, const io_compare_opts *opts,
                        io_compare_result *res, char *line, size_t len)
{
    char err[256];
    memset(res, 0, sizeof *res);
    if (io_array_compare(gpu, emu, opts, res, err, sizeof err)) {
        snprintf(line, len, "%s: cannot compare: %s", name, err);
        return -1;
    }
    char shape[128];
    io_shape_format(emu, shape, sizeof shape);
    int is_float = io_dtype_is_float(emu->dtype);
    size_t n = (size_t)snprintf(line, len, "%s: %s[%s]: max %s %llu, %zu mismatch%s", name,
                                io_dtype_name(emu->dtype), shape, is_float ? "ULP distance" : "difference",
                                (unsigned long long)res->max_ulps, res->mismatches,
                                res->mismatches == 1 ? "" : "es");
    if (res->mismatches && res->n_first > 0 && n < len) {
        char where[160], a[64], b[64];
        size_t first = res->first_mismatch[0];
        format_index(emu, first, where, sizeof where);
        io_format_element(emu, first, a, sizeof a);
        io_format_element(gpu, first, b, sizeof b);
        snprintf(line + n, len - n, ", first at %s: emu %s != cuda %s", where, a, b);
    }
    return 0;
}
