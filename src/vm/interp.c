/* The interpreter loop: executes the bytecode of one lane group of a warp
 * until it branches divergently, calls, returns, waits, yields, exits or
 * faults. Each op is applied to all active lanes in a tight loop over the
 * lane-contiguous register file; the op's type selects a specialized loop
 * outside the lanes, so there is no decoding inside them. */
#if defined(__GNUC__) && !defined(__clang__)
/* let GCC vectorize the lane loops even where it must check at run time
 * that the destination does not overlap the sources (-O2 alone does not) */
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "vm/approx.h"
#include "vm/mbarrier.h"
#include "vm/vm_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>



const uint8_t vm_type_size_table[PTX_T_COUNT] = {
    [PTX_T_B8] = 1, [PTX_T_U8] = 1, [PTX_T_S8] = 1, [PTX_T_E4M3] = 1, [PTX_T_E5M2] = 1, [PTX_T_U4] = 1,
    [PTX_T_S4] = 1, [PTX_T_B16] = 2, [PTX_T_U16] = 2, [PTX_T_S16] = 2, [PTX_T_F16] = 2, [PTX_T_BF16] = 2,
    [PTX_T_E4M3X2] = 2, [PTX_T_E5M2X2] = 2, [PTX_T_B32] = 4, [PTX_T_U32] = 4, [PTX_T_S32] = 4,
    [PTX_T_F32] = 4, [PTX_T_F16X2] = 4, [PTX_T_BF16X2] = 4, [PTX_T_TF32] = 4, [PTX_T_U16X2] = 4,
    [PTX_T_S16X2] = 4, [PTX_T_U8X4] = 4, [PTX_T_S8X4] = 4, [PTX_T_B64] = 8, [PTX_T_U64] = 8, [PTX_T_S64] = 8,
    [PTX_T_F64] = 8, [PTX_T_TEXREF] = 8, [PTX_T_SURFREF] = 8, [PTX_T_SAMPLERREF] = 8, [PTX_T_B128] = 16,
};
const uint8_t vm_type_signed_table[PTX_T_COUNT] = {
    [PTX_T_S8] = 1, [PTX_T_S16] = 1, [PTX_T_S32] = 1, [PTX_T_S64] = 1, [PTX_T_S16X2] = 1, [PTX_T_S8X4] = 1,
    [PTX_T_S4] = 1,
};

static inline float F32(uint64_t v) { return vm_f32_from_bits((uint32_t)v); }
static inline uint64_t BF32(float f) { return vm_f32_bits(f); }
static inline double F64(uint64_t v) { return vm_f64_from_bits(v); }
static inline uint64_t BF64(double d) { return vm_f64_bits(d); }

static inline int64_t sext(uint64_t v, unsigned bytes)
{
    switch (bytes) {
    case 1: return (int8_t)v;
    case 2: return (int16_t)v;
    case 4: return (int32_t)v;
    default: return (int64_t)v;
    }
}
static inline uint64_t zmask(uint64_t v, unsigned bytes)
{
    return bytes >= 8 ? v : v & ((1ull << (bytes * 8)) - 1);
}

/* ---- integer helpers ---------------------------------------------------- */

static uint64_t int_minmax(uint64_t a, uint64_t b, unsigned w, int sgn, int is_max)
{
    if (sgn) {
        int64_t x = sext(a, w), y = sext(b, w);
        return zmask((uint64_t)(is_max ? (x > y ? x : y) : (x < y ? x : y)), w);
    }
    a = zmask(a, w);
    b = zmask(b, w);
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

static uint64_t mul_hi(uint64_t a, uint64_t b, unsigned w, int sgn)
{
    if (w == 8) {
        if (sgn) {
            __int128 p = (__int128)(int64_t)a * (__int128)(int64_t)b;
            return (uint64_t)(p >> 64);
        }
        unsigned __int128 p = (unsigned __int128)a * b;
        return (uint64_t)(p >> 64);
    }
    if (sgn) {
        int64_t p = sext(a, w) * sext(b, w);
        return zmask((uint64_t)(p >> (w * 8)), w);
    }
    uint64_t p = zmask(a, w) * zmask(b, w);
    return zmask(p >> (w * 8), w);
}

static uint64_t bfe(uint64_t a, uint32_t pos, uint32_t len, unsigned w, int sgn)
{
    unsigned bits = w * 8, msb = bits - 1;
    pos &= 0xff;
    len &= 0xff;
    uint64_t d = 0;
    int sbit = 0;
    if (sgn && len) {
        unsigned sb = pos + len - 1;
        if (sb > msb) sb = msb;
        sbit = (int)((a >> sb) & 1);
    }
    for (unsigned i = 0; i < bits; i++) {
        uint64_t bit;
        if (i < len && pos + i <= msb)
            bit = (a >> (pos + i)) & 1;
        else
            bit = (uint64_t)sbit;
        d |= bit << i;
    }
    return zmask(d, w);
}

static uint64_t bfi(uint64_t a, uint64_t b, uint32_t pos, uint32_t len, unsigned w)
{
    unsigned bits = w * 8;
    pos &= 0xff;
    len &= 0xff;
    uint64_t f = b;
    for (unsigned i = 0; i < len && pos + i < bits; i++) {
        uint64_t bit = (a >> i) & 1;
        f = (f & ~(1ull << (pos + i))) | (bit << (pos + i));
    }
    return zmask(f, w);
}

static uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, int mode)
{
    uint8_t bytes[8];
    for (int i = 0; i < 4; i++) {
        bytes[i] = (uint8_t)(a >> (8 * i));
        bytes[4 + i] = (uint8_t)(b >> (8 * i));
    }
    uint32_t d = 0;
    if (mode == 0) {
        for (int i = 0; i < 4; i++) {
            unsigned sel = (c >> (4 * i)) & 0xf;
            uint8_t v = bytes[sel & 7];
            if (sel & 8)
                v = (v & 0x80) ? 0xff : 0;
            d |= (uint32_t)v << (8 * i);
        }
        return d;
    }
    unsigned s = c & 3;
    static const uint8_t f4e[4][4] = {{0,1,2,3},{1,2,3,4},{2,3,4,5},{3,4,5,6}};
    static const uint8_t b4e[4][4] = {{0,7,6,5},{1,0,7,6},{2,1,0,7},{3,2,1,0}};
    static const uint8_t rc8[4][4] = {{0,0,0,0},{1,1,1,1},{2,2,2,2},{3,3,3,3}};
    static const uint8_t ecl[4][4] = {{0,1,2,3},{1,1,2,3},{2,2,2,3},{3,3,3,3}};
    static const uint8_t ecr[4][4] = {{0,0,0,0},{0,1,1,1},{0,1,2,2},{0,1,2,3}};
    static const uint8_t rc16[4][4] = {{0,1,0,1},{2,3,2,3},{0,1,0,1},{2,3,2,3}};
    const uint8_t (*t)[4] = mode == 1 ? f4e : mode == 2 ? b4e : mode == 3 ? rc8 : mode == 4 ? ecl : mode == 5 ? ecr : rc16;
    for (int i = 0; i < 4; i++)
        d |= (uint32_t)bytes[t[s][i]] << (8 * i);
    return d;
}

static uint32_t shf(uint32_t a, uint32_t b, uint32_t c, int mode)
{
    uint32_t n = (mode & 2) ? (c & 31) : (c > 32 ? 32 : c);
    uint64_t v = ((uint64_t)b << 32) | a;
    if (mode & 1) /* right */
        return (uint32_t)(n >= 64 ? 0 : (v >> n));
    return (uint32_t)((n >= 64 ? 0 : (v << n)) >> 32);
}

/* ---- comparisons -------------------------------------------------------- */

static inline int cmp_int(uint64_t a, uint64_t b, unsigned w, int sgn, int cmp)
{
    if (sgn && cmp <= BC_CMP_GE) {
        int64_t x = sext(a, w), y = sext(b, w);
        switch (cmp) {
        case BC_CMP_EQ: return x == y;
        case BC_CMP_NE: return x != y;
        case BC_CMP_LT: return x < y;
        case BC_CMP_LE: return x <= y;
        case BC_CMP_GT: return x > y;
        default: return x >= y;
        }
    }
    a = zmask(a, w);
    b = zmask(b, w);
    switch (cmp) {
    case BC_CMP_EQ: return a == b;
    case BC_CMP_NE: return a != b;
    case BC_CMP_LT: case BC_CMP_LO: return a < b;
    case BC_CMP_LE: case BC_CMP_LS: return a <= b;
    case BC_CMP_GT: case BC_CMP_HI: return a > b;
    default: return a >= b;
    }
}

static inline int cmp_float(double x, double y, int cmp)
{
    int un = isnan(x) || isnan(y);
    switch (cmp) {
    case BC_CMP_EQ: return !un && x == y;
    case BC_CMP_NE: return !un && x != y;
    case BC_CMP_LT: return !un && x < y;
    case BC_CMP_LE: return !un && x <= y;
    case BC_CMP_GT: return !un && x > y;
    case BC_CMP_GE: return !un && x >= y;
    case BC_CMP_EQU: return un || x == y;
    case BC_CMP_NEU: return un || x != y;
    case BC_CMP_LTU: return un || x < y;
    case BC_CMP_LEU: return un || x <= y;
    case BC_CMP_GTU: return un || x > y;
    case BC_CMP_GEU: return un || x >= y;
    case BC_CMP_NUM: return !un;
    case BC_CMP_NAN: return un;
    default: return 0;
    }
}

/* A float operand as double, for comparisons. */
static inline double fval(uint64_t v, int type, int ftz)
{
    switch (type) {
    case PTX_T_F32: { float f = F32(v); if (ftz) f = vm_ftz_f32(f); return f; }
    case PTX_T_F64: return F64(v);
    case PTX_T_F16: return vm_f16_to_f32(ftz ? vm_ftz_f16((uint16_t)v) : (uint16_t)v);
    case PTX_T_BF16: return vm_bf16_to_f32((uint16_t)v);
    default: return 0;
    }
}

static int eval_cmp(int type, int cmp, uint64_t a, uint64_t b, int ftz)
{
    if (ptx_type_is_float((ptx_type)type))
        return cmp_float(fval(a, type, ftz), fval(b, type, ftz), cmp);
    return cmp_int(a, b, vm_type_bytes(type), vm_type_signed(type), cmp);
}

static inline int bool_combine(int r, int c, int bop)
{
    switch (bop) {
    case BC_BOOL_AND: return r && c;
    case BC_BOOL_OR: return r || c;
    case BC_BOOL_XOR: return r != c;
    default: return r;
    }
}

/* ---- float arithmetic --------------------------------------------------- */

static uint64_t f32_finish(float r, uint32_t flags)
{
    if (flags & BC_F_FTZ) r = vm_ftz_f32(r);
    if (flags & BC_F_SAT) r = vm_sat_f32(r);
    return BF32(vm_canon_f32(r));
}

static uint16_t h_finish(uint16_t r, uint32_t flags, int bf)
{
    if (!bf && (flags & BC_F_FTZ)) r = vm_ftz_f16(r);
    if (!bf && (flags & BC_F_SAT)) r = vm_sat_f16(r);
    if (flags & BC_F_RELU) r = bf ? vm_relu_bf16(r) : vm_relu_f16(r);
    return r;
}

/* op: 0 add, 1 sub, 2 mul, 3 fma */
static uint16_t half_arith(int opk, uint16_t a, uint16_t b, uint16_t c, vm_round r, uint32_t flags, int bf)
{
    if (!bf && (flags & BC_F_FTZ)) {
        a = vm_ftz_f16(a);
        b = vm_ftz_f16(b);
        c = vm_ftz_f16(c);
    }
    uint16_t v;
    if (bf) {
        v = opk == 0 ? vm_add_bf16(a, b, r) : opk == 1 ? vm_sub_bf16(a, b, r) :
            opk == 2 ? vm_mul_bf16(a, b, r) : vm_fma_bf16(a, b, c, r);
    } else {
        v = opk == 0 ? vm_add_f16(a, b, r) : opk == 1 ? vm_sub_f16(a, b, r) :
            opk == 2 ? vm_mul_f16(a, b, r) : vm_fma_f16(a, b, c, r);
    }
    return h_finish(v, flags, bf);
}

static uint64_t float_arith(int opk, int type, uint64_t a, uint64_t b, uint64_t c, int rnd, uint32_t flags)
{
    vm_round r = vm_rnd(rnd);
    switch (type) {
    case PTX_T_F32: {
        float x = F32(a), y = F32(b), z = F32(c);
        if (flags & BC_F_FTZ) {
            x = vm_ftz_f32(x);
            y = vm_ftz_f32(y);
            z = vm_ftz_f32(z);
        }
        float v = opk == 0 ? vm_add_f32(x, y, r) : opk == 1 ? vm_sub_f32(x, y, r) :
                  opk == 2 ? vm_mul_f32(x, y, r) : vm_fma_f32(x, y, z, r);
        return f32_finish(v, flags);
    }
    case PTX_T_F64: {
        double x = F64(a), y = F64(b), z = F64(c);
        double v = opk == 0 ? vm_add_f64(x, y, r) : opk == 1 ? vm_sub_f64(x, y, r) :
                   opk == 2 ? vm_mul_f64(x, y, r) : vm_fma_f64(x, y, z, r);
        if (flags & BC_F_SAT) v = vm_sat_f64(v);
        return BF64(v);
    }
    case PTX_T_F16:
    case PTX_T_BF16:
        return half_arith(opk, (uint16_t)a, (uint16_t)b, (uint16_t)c, r, flags, type == PTX_T_BF16);
    case PTX_T_F16X2:
    case PTX_T_BF16X2: {
        int bf = type == PTX_T_BF16X2;
        uint16_t lo = half_arith(opk, (uint16_t)a, (uint16_t)b, (uint16_t)c, r, flags, bf);
        uint16_t hi = half_arith(opk, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), r, flags, bf);
        return (uint64_t)lo | ((uint64_t)hi << 16);
    }
    default:
        return 0;
    }
}

/* PTX min/max.f32 without modifiers on bit patterns, branch-free so that
 * the lane loop vectorizes: a NaN operand yields the other one (both NaN:
 * the canonical NaN), and -0 orders below +0 (as vm_min_f32/vm_max_f32). */
static inline uint64_t minmax_f32_bits(uint32_t a, uint32_t b, int is_max)
{
    uint32_t mag_a = a & 0x7fffffffu, mag_b = b & 0x7fffffffu;
    int a_nan = mag_a > 0x7f800000u, b_nan = mag_b > 0x7f800000u;
    /* sign-magnitude to a signed total order: -0 -> -1 < +0 -> 0 */
    int32_t ka = (a >> 31) ? -(int32_t)mag_a - 1 : (int32_t)mag_a;
    int32_t kb = (b >> 31) ? -(int32_t)mag_b - 1 : (int32_t)mag_b;
    uint32_t r = is_max ? (ka > kb ? a : b) : (ka < kb ? a : b);
    r = a_nan ? (b_nan ? VM_F32_CANONICAL_NAN : b) : (b_nan ? a : r);
    return r;
}

static uint64_t float_minmax(int is_max, int type, uint64_t a, uint64_t b, uint32_t flags)
{
    unsigned mf = ((flags & BC_F_NAN) ? VM_MINMAX_NAN : 0) |
                  ((flags & BC_F_XORSIGN) ? VM_MINMAX_XORSIGN_ABS : (flags & BC_F_ABS) ? VM_MINMAX_ABS : 0);
    switch (type) {
    case PTX_T_F32: {
        float x = F32(a), y = F32(b);
        if (flags & BC_F_FTZ) { x = vm_ftz_f32(x); y = vm_ftz_f32(y); }
        return BF32(is_max ? vm_max_f32(x, y, mf) : vm_min_f32(x, y, mf));
    }
    case PTX_T_F64:
        return BF64(is_max ? vm_max_f64(F64(a), F64(b)) : vm_min_f64(F64(a), F64(b)));
    case PTX_T_F16:
        return is_max ? vm_max_f16((uint16_t)a, (uint16_t)b, mf) : vm_min_f16((uint16_t)a, (uint16_t)b, mf);
    case PTX_T_BF16:
        return is_max ? vm_max_bf16((uint16_t)a, (uint16_t)b, mf) : vm_min_bf16((uint16_t)a, (uint16_t)b, mf);
    case PTX_T_F16X2:
    case PTX_T_BF16X2: {
        int bf = type == PTX_T_BF16X2;
        uint16_t r[2];
        for (int h = 0; h < 2; h++) {
            uint16_t x = (uint16_t)(a >> (16 * h)), y = (uint16_t)(b >> (16 * h));
            r[h] = bf ? (is_max ? vm_max_bf16(x, y, mf) : vm_min_bf16(x, y, mf))
                      : (is_max ? vm_max_f16(x, y, mf) : vm_min_f16(x, y, mf));
        }
        return (uint64_t)r[0] | ((uint64_t)r[1] << 16);
    }
    default:
        return 0;
    }
}

static float funary_f32(int fn, float x, int rnd, uint32_t flags)
{
    if (flags & BC_F_FTZ) x = vm_ftz_f32(x);
    float r;
    int approx = rnd == BC_RND_APPROX || rnd == BC_RND_NONE;
    /* the .approx forms as an H200 computes them (src/vm/approx.c) */
    switch (fn) {
    case BC_FN_RCP: r = approx ? vm_approx_rcp(x) : vm_rcp_f32(x, vm_rnd(rnd)); break;
    case BC_FN_SQRT: r = approx ? sqrtf(x) : vm_sqrt_f32(x, vm_rnd(rnd)); break;
    case BC_FN_RSQRT: r = vm_approx_rsqrt(x); break;
    case BC_FN_EX2: r = vm_approx_ex2(x, 0); break;
    case BC_FN_LG2: r = vm_approx_lg2(x); break;
    case BC_FN_SIN: r = vm_approx_sin(x); break;
    case BC_FN_COS: r = vm_approx_cos(x); break;
    default: r = vm_approx_tanh(x); break;
    }
    if (flags & BC_F_FTZ) r = vm_ftz_f32(r);
    return vm_canon_f32(r);
}

static double funary_f64(int fn, double x, int rnd, uint32_t flags)
{
    double r;
    switch (fn) {
    case BC_FN_RCP: r = rnd == BC_RND_APPROX ? 1.0 / x : vm_rcp_f64(x, vm_rnd(rnd)); break;
    case BC_FN_SQRT: r = vm_sqrt_f64(x, vm_rnd(rnd)); break;
    case BC_FN_RSQRT: r = 1.0 / sqrt(x); break;
    case BC_FN_EX2: r = exp2(x); break;
    case BC_FN_LG2: r = log2(x); break;
    case BC_FN_SIN: r = sin(x); break;
    case BC_FN_COS: r = cos(x); break;
    default: r = tanh(x); break;
    }
    if (rnd == BC_RND_APPROX && (flags & BC_F_FTZ) && (fn == BC_FN_RCP || fn == BC_FN_RSQRT)) {
        /* the .approx.ftz.f64 forms are computed from the top 32 bits and
         * return zeros in the low 32 bits */
        if (isnan(r))
            return F64(0x7fffffff00000000ull);
        r = F64(BF64(r) & 0xffffffff00000000ull);
    }
    return r;
}

static uint64_t funary(int fn, int type, uint64_t a, int rnd, uint32_t flags)
{
    switch (type) {
    case PTX_T_F32: return BF32(funary_f32(fn, F32(a), rnd, flags));
    case PTX_T_F64: return BF64(funary_f64(fn, F64(a), rnd, flags));
    case PTX_T_F16: case PTX_T_BF16: {
        int bf = type == PTX_T_BF16;
        float x = bf ? vm_bf16_to_f32((uint16_t)a) : vm_f16_to_f32((uint16_t)a);
        float r = funary_f32(fn, x, BC_RND_APPROX, 0);
        return bf ? vm_f32_to_bf16(r, VM_RN) : vm_f32_to_f16(r, VM_RN);
    }
    case PTX_T_F16X2: case PTX_T_BF16X2: {
        int bf = type == PTX_T_BF16X2;
        uint64_t out = 0;
        for (int h = 0; h < 2; h++) {
            uint16_t v = (uint16_t)(a >> (16 * h));
            float x = bf ? vm_bf16_to_f32(v) : vm_f16_to_f32(v);
            float r = funary_f32(fn, x, BC_RND_APPROX, 0);
            out |= (uint64_t)(bf ? vm_f32_to_bf16(r, VM_RN) : vm_f32_to_f16(r, VM_RN)) << (16 * h);
        }
        return out;
    }
    default:
        return 0;
    }
}

/* ---- conversions -------------------------------------------------------- */

static uint64_t int_saturate(int64_t sv, uint64_t uv, int src_signed, unsigned dw, int dst_signed)
{
    unsigned bits = dw * 8;
    if (dst_signed) {
        int64_t lo = bits >= 64 ? INT64_MIN : -(1ll << (bits - 1));
        int64_t hi = bits >= 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
        if (src_signed) {
            if (sv < lo) sv = lo;
            if (sv > hi) sv = hi;
            return (uint64_t)sv;
        }
        if (uv > (uint64_t)hi) return (uint64_t)hi;
        return uv;
    }
    uint64_t hi = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
    if (src_signed) {
        if (sv < 0) return 0;
        if ((uint64_t)sv > hi) return hi;
        return (uint64_t)sv;
    }
    return uv > hi ? hi : uv;
}

static uint64_t cvt_value(const bc_op *op, uint64_t a)
{
    int dt = op->type, st = op->type2;
    unsigned dw = vm_type_bytes(dt), sw = vm_type_bytes(st);
    int dflt = ptx_type_is_float((ptx_type)dt), sflt = ptx_type_is_float((ptx_type)st);
    int dsg = vm_type_signed(dt), ssg = vm_type_signed(st);
    vm_round r = vm_rnd(op->mode);
    uint32_t fl = op->flags;
    int ftz = (fl & BC_F_FTZ) != 0;
    uint64_t res;
    if (!dflt && !sflt) {
        int64_t sv = sext(a, sw);
        uint64_t uv = zmask(a, sw);
        if (fl & BC_F_SAT)
            res = int_saturate(sv, uv, ssg, dw, dsg);
        else
            res = ssg ? (uint64_t)sv : uv;
        res = zmask(res, dw);
    } else if (!dflt && sflt) {
        int bits = (int)dw * 8;
        switch (st) {
        case PTX_T_F32: res = vm_cvt_f32_to_int(F32(a), bits, dsg, r, ftz); break;
        case PTX_T_F64: res = vm_cvt_f64_to_int(F64(a), bits, dsg, r); break;
        case PTX_T_F16: res = vm_cvt_f16_to_int((uint16_t)a, bits, dsg, r); break;
        default: res = vm_cvt_bf16_to_int((uint16_t)a, bits, dsg, r); break;
        }
        res = zmask(res, dw);
    } else if (dflt && !sflt) {
        uint64_t v = ssg ? (uint64_t)sext(a, sw) : zmask(a, sw);
        switch (dt) {
        case PTX_T_F32: res = BF32(vm_cvt_int_to_f32(v, ssg, r)); break;
        case PTX_T_F64: res = BF64(vm_cvt_int_to_f64(v, ssg, r)); break;
        case PTX_T_F16: res = vm_cvt_int_to_f16(v, ssg, r); break;
        default: res = vm_cvt_int_to_bf16(v, ssg, r); break;
        }
        if (fl & BC_F_SAT) {
            if (dt == PTX_T_F32) res = BF32(vm_sat_f32(F32(res)));
            else if (dt == PTX_T_F64) res = BF64(vm_sat_f64(F64(res)));
            else if (dt == PTX_T_F16) res = vm_sat_f16((uint16_t)res);
        }
    } else {
        unsigned nf = ((fl & BC_F_SATFINITE) ? VM_CVT_SATFINITE : 0) | ((fl & BC_F_RELU) ? VM_CVT_RELU : 0);
        int integral = op->mode >= BC_RND_RNI && op->mode <= BC_RND_RPI;
        if (dt == PTX_T_TF32) {
            res = vm_f32_to_tf32(F32(a), r, (fl & BC_F_SATFINITE) != 0, (fl & BC_F_RELU) != 0);
        } else if (st == PTX_T_F32 && dt == PTX_T_F32) {
            float x = F32(a);
            if (ftz) x = vm_ftz_f32(x);
            if (integral) x = vm_rint_f32(x, r, ftz);
            if (fl & BC_F_SAT) x = vm_sat_f32(x);
            if (ftz) x = vm_ftz_f32(x);
            res = BF32(x);
        } else if (st == PTX_T_F64 && dt == PTX_T_F64) {
            double x = F64(a);
            if (integral) x = vm_rint_f64(x, r);
            if (fl & BC_F_SAT) x = vm_sat_f64(x);
            res = BF64(x);
        } else if (st == PTX_T_F32 && dt == PTX_T_F64) {
            float x = F32(a);
            if (ftz) x = vm_ftz_f32(x);
            double y = vm_f32_to_f64(x);
            if (fl & BC_F_SAT) y = vm_sat_f64(y);
            res = BF64(y);
        } else if (st == PTX_T_F64 && dt == PTX_T_F32) {
            float y = vm_f64_to_f32(F64(a), r);
            if (ftz) y = vm_ftz_f32(y);
            if (fl & BC_F_SAT) y = vm_sat_f32(y);
            res = BF32(y);
        } else if (dt == PTX_T_F16 || dt == PTX_T_BF16) {
            int bf = dt == PTX_T_BF16;
            if (st == PTX_T_F32) {
                float x = F32(a);
                if (ftz) x = vm_ftz_f32(x);
                res = bf ? vm_f32_to_bf16_flags(x, r, nf) : vm_f32_to_f16_flags(x, r, nf);
            } else if (st == PTX_T_F64) {
                res = bf ? vm_f64_to_bf16_flags(F64(a), r, nf) : vm_f64_to_f16_flags(F64(a), r, nf);
            } else if (st == dt) {
                res = integral ? (bf ? vm_rint_bf16((uint16_t)a, r) : vm_rint_f16((uint16_t)a, r)) : (uint16_t)a;
            } else {
                res = bf ? vm_f16_to_bf16((uint16_t)a, r) : vm_bf16_to_f16((uint16_t)a, r);
            }
            if (!bf && (fl & BC_F_SAT)) res = vm_sat_f16((uint16_t)res);
        } else {
            /* f16/bf16 -> f32/f64 */
            double x = st == PTX_T_F16 ? vm_f16_to_f64((uint16_t)a) : vm_bf16_to_f64((uint16_t)a);
            if (dt == PTX_T_F32) {
                float y = (float)x;
                if (ftz) y = vm_ftz_f32(y);
                if (fl & BC_F_SAT) y = vm_sat_f32(y);
                res = BF32(y);
            } else {
                if (fl & BC_F_SAT) x = vm_sat_f64(x);
                res = BF64(x);
            }
        }
    }
    /* a wider destination register: sign-extend signed integer results */
    unsigned regw = op->mode2 ? op->mode2 : dw;
    if (regw > dw && !dflt && dsg)
        res = zmask((uint64_t)sext(res, dw), regw);
    return res;
}

/* Register slots are 32 lanes apart, so a destination either is one of
 * the sources or overlaps none of them: a lane loop has no dependence
 * between lanes, which `ivdep` tells GCC (else it versions the loop for
 * aliasing and runs `x = x + y` in the scalar copy). */
#if defined(__GNUC__) && !defined(__clang__)
#define VM_IVDEP _Pragma("GCC ivdep")
#else
#define VM_IVDEP
#endif

/* D[l] = EXPR for the lanes of m, where EXPR is safe to evaluate in every
 * lane (no division, call or side effect, no undefined behaviour for any
 * register contents), reading lane l of registers only: the loop
 * vectorizes, and a divergent group blends its lanes into D on the same
 * vector path instead of a loop over its lanes. */
#define LANES_D(m, EXPR)                                                     \
    do {                                                                     \
        uint32_t ld_ = (m);                                                  \
        if (ld_ == VM_FULL) {                                                \
            VM_IVDEP for (int l = 0; l < VM_WARP; l++)                       \
                D[l] = (EXPR);                                               \
        } else {                                                             \
            VM_IVDEP for (int l = 0; l < VM_WARP; l++) {                     \
                uint64_t v_ = (EXPR);                                        \
                D[l] = (ld_ >> l) & 1 ? v_ : D[l];                           \
            }                                                                \
        }                                                                    \
    } while (0)

/* The common conversions with the host's own instructions, in
 * round-to-nearest (the host's mode): integer to f32/f64 (.rn), f32/f64 to
 * a 32- or 64-bit integer (.rzi, .rni) and f32 <-> f64. Lanes whose value
 * needs PTX's rules (NaN, out of range) are checked first across the warp;
 * with any such lane, or flags these paths do not model, it returns 0 and
 * cvt_value does every lane. */
__attribute__((always_inline)) static inline int cvt_fast(const bc_op *op, const uint64_t *A, uint64_t *D, uint32_t m)
{
    int dt = op->type, st = op->type2;
    if (op->flags & (BC_F_SAT | BC_F_SATFINITE | BC_F_RELU))
        return 0;
    if ((dt == PTX_T_F32 || dt == PTX_T_F64) && op->mode == BC_RND_RN &&
        (st == PTX_T_S32 || st == PTX_T_U32 || st == PTX_T_S64 || st == PTX_T_U64)) {
        /* the host's conversion rounds to nearest even, as .rn does */
        if (dt == PTX_T_F32) {
            switch (st) {
            case PTX_T_S32: LANES_D(m, BF32((float)(int32_t)A[l])); break;
            case PTX_T_U32: LANES_D(m, BF32((float)(uint32_t)A[l])); break;
            case PTX_T_S64: LANES_D(m, BF32((float)(int64_t)A[l])); break;
            default: LANES_D(m, BF32((float)A[l])); break;
            }
        } else {
            switch (st) {
            case PTX_T_S32: LANES_D(m, BF64((double)(int32_t)A[l])); break;
            case PTX_T_U32: LANES_D(m, BF64((double)(uint32_t)A[l])); break;
            case PTX_T_S64: LANES_D(m, BF64((double)(int64_t)A[l])); break;
            default: LANES_D(m, BF64((double)A[l])); break;
            }
        }
        return 1;
    }
    if ((st == PTX_T_F32 || st == PTX_T_F64) && (op->mode == BC_RND_RZI || op->mode == BC_RND_RNI) &&
        (dt == PTX_T_S32 || dt == PTX_T_U32 || dt == PTX_T_S64 || dt == PTX_T_U64) &&
        op->mode2 <= vm_type_bytes(dt)) {
        /* rounded to an integral value first (exact), then in range of
         * the destination or not (NaN is not): .ftz changes nothing, as a
         * subnormal rounds to zero either way */
        double lo, hi; /* the destination's range: lo <= t < hi */
        switch (dt) {
        case PTX_T_S32: lo = -2147483648.0; hi = 2147483648.0; break;
        case PTX_T_U32: lo = 0.0; hi = 4294967296.0; break;
        case PTX_T_S64: lo = -9223372036854775808.0; hi = 9223372036854775808.0; break;
        default: lo = 0.0; hi = 18446744073709551616.0; break;
        }
        double t[VM_WARP];
        uint32_t out = 0;
        int rzi = op->mode == BC_RND_RZI;
        for (int l = 0; l < VM_WARP; l++) {
            double x = st == PTX_T_F32 ? (double)F32(A[l]) : F64(A[l]);
            t[l] = rzi ? __builtin_trunc(x) : __builtin_rint(x);
            out |= (uint32_t)!(t[l] >= lo && t[l] < hi) << l;
        }
        if (out & m)
            return 0;
        switch (dt) {
        case PTX_T_S32: LANES_D(m, (uint32_t)(int32_t)(t[l] >= lo && t[l] < hi ? t[l] : 0.0)); break;
        case PTX_T_U32: LANES_D(m, (uint32_t)(t[l] >= lo && t[l] < hi ? t[l] : 0.0)); break;
        case PTX_T_S64: LANES_D(m, (uint64_t)(int64_t)(t[l] >= lo && t[l] < hi ? t[l] : 0.0)); break;
        default: LANES_D(m, (uint64_t)(t[l] >= lo && t[l] < hi ? t[l] : 0.0)); break;
        }
        return 1;
    }
    if (!(op->flags & BC_F_FTZ) && ((st == PTX_T_F32 && dt == PTX_T_F64) ||
                                    (st == PTX_T_F64 && dt == PTX_T_F32 && op->mode == BC_RND_RN))) {
        /* exact (f32 -> f64) or rounded to nearest by the host; NaN takes
         * PTX's rules */
        uint32_t nan = 0;
        if (st == PTX_T_F32) {
            for (int l = 0; l < VM_WARP; l++)
                nan |= (uint32_t)(((uint32_t)A[l] & 0x7fffffffu) > 0x7f800000u) << l;
            if (nan & m)
                return 0;
            LANES_D(m, BF64((double)F32(A[l])));
        } else {
            for (int l = 0; l < VM_WARP; l++)
                nan |= (uint32_t)((A[l] & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) << l;
            if (nan & m)
                return 0;
            LANES_D(m, BF32((float)F64(A[l])));
        }
        return 1;
    }
    return 0;
}

/* r = the comparison's outcome in all 32 lanes as a bit mask (callers keep
 * the lanes of the active mask); vectorizes, with no per-lane branches. */
#define SETP_LANES(COND)                                                     \
    do {                                                                     \
        for (int l = 0; l < VM_WARP; l++)                                    \
            r |= (uint32_t)(COND) << l;                                      \
    } while (0)

/* ---- coalesced memory accesses -------------------------------------------- */

/* Whether lane l's address is A[0] + l * esz for every lane. */
__attribute__((always_inline)) static inline int lanes_contiguous(const uint64_t *A, unsigned esz)
{
    /* A[l] - A[0] == l * esz, with the step as a constant so that the
     * loop vectorizes (AVX2 has no 64-bit multiply) */
    uint64_t a0 = A[0], diff = 0;
    if (A[1] - a0 != esz || A[VM_WARP - 1] - a0 != (VM_WARP - 1) * (uint64_t)esz)
        return 0; /* the quick rejection of broadcasts and strides */
    switch (esz) {
    case 1: for (int l = 0; l < VM_WARP; l++) diff |= (A[l] - a0) ^ (uint64_t)l; break;
    case 2: for (int l = 0; l < VM_WARP; l++) diff |= (A[l] - a0) ^ ((uint64_t)l << 1); break;
    case 4: for (int l = 0; l < VM_WARP; l++) diff |= (A[l] - a0) ^ ((uint64_t)l << 2); break;
    default: for (int l = 0; l < VM_WARP; l++) diff |= (A[l] - a0) ^ ((uint64_t)l << 3); break;
    }
    return diff == 0;
}

/* The 32 consecutive elements of esz bytes (1, 2, 4 or 8) at p,
 * zero-extended into a register; and back, truncated. */
__attribute__((always_inline)) static inline void vm_widen(uint64_t *D, const void *p, unsigned esz)
{
    switch (esz) {
    case 1: { uint8_t v[VM_WARP]; memcpy(v, p, sizeof v); for (int l = 0; l < VM_WARP; l++) D[l] = v[l]; break; }
    case 2: { uint16_t v[VM_WARP]; memcpy(v, p, sizeof v); for (int l = 0; l < VM_WARP; l++) D[l] = v[l]; break; }
    case 4: { uint32_t v[VM_WARP]; memcpy(v, p, sizeof v); for (int l = 0; l < VM_WARP; l++) D[l] = v[l]; break; }
    default: memcpy(D, p, VM_WARP * 8); break;
    }
}
__attribute__((always_inline)) static inline void vm_narrow(void *p, const uint64_t *B, unsigned esz)
{
    switch (esz) {
    case 1: { uint8_t v[VM_WARP]; for (int l = 0; l < VM_WARP; l++) v[l] = (uint8_t)B[l]; memcpy(p, v, sizeof v); break; }
    case 2: { uint16_t v[VM_WARP]; for (int l = 0; l < VM_WARP; l++) v[l] = (uint16_t)B[l]; memcpy(p, v, sizeof v); break; }
    case 4: { uint32_t v[VM_WARP]; for (int l = 0; l < VM_WARP; l++) v[l] = (uint32_t)B[l]; memcpy(p, v, sizeof v); break; }
    default: memmove(p, B, VM_WARP * 8); break;
    }
}

/* ---- the group loop ----------------------------------------------------- */

/* The width and signedness of op->type, looked up where a case uses them
 * rather than for every op. */
#define w8 vm_type_bytes(op->type)
#define sg vm_type_signed(op->type)

/* The group loop is compiled twice on x86-64 GCC/Linux: for AVX2, where a
 * lane loop over 32 64-bit registers takes 8 vector steps, and for the
 * baseline; the loader picks one when the library loads (ifunc). No FMA in
 * the AVX2 copy, so float results cannot change by contraction. Each copy
 * starts on a 64-byte boundary: its speed depended on where it landed
 * (unchecked sgemm 12% slower after an unrelated 48-byte change elsewhere
 * in the library), and aligned it no longer moves with the rest. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VM_LANE_CLONES __attribute__((target_clones("avx2", "default"), aligned(64)))
#else
#define VM_LANE_CLONES
#endif

/* Superinstructions without new opcodes: at the end of a case, when the
 * next op is `next_code` with no guard, no checker watches and no other
 * group waits there, it runs at once (at label `next_case`, with its
 * operands), skipping the
 * dispatch through the loop's head. The idioms nvcc emits most are
 * chained so: mul.wide -> add (index scaling), add -> ld/st (address
 * arithmetic), setp -> bra (loop back edges). */
#define CHAIN(next_code, next_case)                                                     \
    do {                                                                         \
        if (pc + 1 < fn->ncode && op[1].code == (next_code) && op[1].guard == BC_NONE && \
            !L->hooks && pc + 1 != stop_pc) {                                    \
            pc++;                                                                \
            op++;                                                                \
            m = gm;                                                              \
            warp_count++;                                                        \
            thread_count += gm == VM_FULL ? VM_WARP : (uint64_t)__builtin_popcount(gm); \
            D = op->d != BC_NONE ? SLOT(R, op->d) : NULL;                        \
            A = op->a != BC_NONE ? SLOT(R, op->a) : NULL;                        \
            B = op->b != BC_NONE ? SLOT(R, op->b) : NULL;                        \
            C = op->c != BC_NONE ? SLOT(R, op->c) : NULL;                        \
            goto next_case;                                                      \
        }                                                                        \
    } while (0)

/* The same for any of the common straight-line ops: the end of a case
 * dispatches the next op itself when it can (a dispatch site per case,
 * which the branch predictor tells apart). */
#define CHAIN_ANY()                                                              \
    do {                                                                         \
        switch (pc + 1 < fn->ncode ? (bc_opcode)op[1].code : BC_NOP) {           \
        case BC_ADD: CHAIN(BC_ADD, add); break;                                  \
        case BC_LD: CHAIN(BC_LD, memory); break;                                 \
        case BC_ST: CHAIN(BC_ST, memory); break;                                 \
        case BC_SETP: CHAIN(BC_SETP, setp); break;                               \
        case BC_MOV: CHAIN(BC_MOV, mov); break;                                  \
        case BC_SHL: CHAIN(BC_SHL, shl); break;                                  \
        case BC_MUL_LO: CHAIN(BC_MUL_LO, mul_lo); break;                         \
        case BC_MUL_WIDE: CHAIN(BC_MUL_WIDE, mul_wide); break;                   \
        case BC_MAD_LO: CHAIN(BC_MAD_LO, mad_lo); break;                         \
        case BC_SZEXT: CHAIN(BC_SZEXT, szext); break;                            \
        case BC_ADD_F32: CHAIN(BC_ADD_F32, add_f32); break;                      \
        case BC_MUL_F32: CHAIN(BC_MUL_F32, mul_f32); break;                      \
        case BC_FMA_F32: CHAIN(BC_FMA_F32, fma_f32); break;                      \
        case BC_CVTA: CHAIN(BC_CVTA, cvta); break;                               \
        case BC_LD_KPARAM: CHAIN(BC_LD_KPARAM, ld_kparam); break;                \
        case BC_S2R: CHAIN(BC_S2R, s2r); break;                                  \
        default: break;                                                          \
        }                                                                        \
    } while (0)

/* Every way out of the group loop goes through its `leave` label. */
#define LEAVE(event) do { ev = (event); goto leave; } while (0)
#define EXIT_EVENT(event) do { g->pc = pc; LEAVE(event); } while (0)

static int warp_sync_ready(vm_warp *w, vm_group *g, uint32_t membermask)
{
    uint32_t need = membermask & w->valid & ~w->exited;
    if ((need & ~g->mask) == 0)
        return 1;
    g->state = VM_G_WAIT_SYNC;
    g->need = need;
    return 0;
}

/* The common shuffle: all 32 lanes take part, the lane operand b and the
 * clamp c are the same in every lane, and the shuffle is not segmented
 * (c's segment mask is 0: width 32). Then the source lane is a fixed
 * function of the lane, computed without a per-lane switch. Returns 0 (and
 * does nothing) when the shuffle is not of that shape. */
static inline int shfl_full_uniform(const bc_op *op, const uint64_t *B, const uint64_t *C, const uint64_t *src,
                                    uint64_t *D, uint32_t *pmask)
{
    uint32_t b0 = (uint32_t)B[0], c0 = (uint32_t)C[0], differ = 0;
    for (int l = 1; l < VM_WARP; l++)
        differ |= ((uint32_t)B[l] ^ b0) | ((uint32_t)C[l] ^ c0);
    if (differ || ((c0 >> 8) & 31))
        return 0;
    uint32_t bval = b0 & 31, cval = c0 & 31, ok = 0;
    switch (op->mode) {
    case BC_SHFL_BFLY:
        /* j = l ^ b: in range when j <= c */
        for (uint32_t l = 0; l < VM_WARP; l++) {
            uint32_t j = l ^ bval, in = j <= cval;
            D[l] = (uint32_t)src[in ? j : l];
            ok |= in << l;
        }
        break;
    case BC_SHFL_DOWN:
        for (uint32_t l = 0; l < VM_WARP; l++) {
            uint32_t j = l + bval, in = j <= cval;
            D[l] = (uint32_t)src[in ? j : l];
            ok |= in << l;
        }
        break;
    case BC_SHFL_UP:
        for (uint32_t l = 0; l < VM_WARP; l++) {
            uint32_t in = l >= bval && l - bval >= cval;
            D[l] = (uint32_t)src[in ? l - bval : l];
            ok |= in << l;
        }
        break;
    default: /* idx: every lane reads lane b when b <= c */
        if (bval <= cval) {
            uint64_t v = (uint32_t)src[bval];
            for (int l = 0; l < VM_WARP; l++)
                D[l] = v;
            ok = VM_FULL;
        } else {
            for (int l = 0; l < VM_WARP; l++)
                D[l] = (uint32_t)src[l];
        }
        break;
    }
    *pmask = ok;
    return 1;
}

/* A shuffle over a full warp whose lane operand k (0-31) is the same in
 * every lane and whose clamp puts every lane in range (31, or 0 for
 * shfl.up, no segments): S[l] = the low 32 bits of A at the source lane,
 * as a few vector moves (the fused SHFL_FOLD; S must not be A). */
__attribute__((always_inline)) static inline void shfl_full_fast(int mode, unsigned k, const uint64_t *A, uint64_t *S)
{
    const uint64_t lo = 0xffffffffu;
    switch (mode) {
    case BC_SHFL_BFLY: {
        /* lane l reads l ^ k: blocks of four lanes move whole (k's high
         * bits) and permute inside (its low two bits) */
        unsigned kb = k & ~3u;
        switch (k & 3) {
        case 0:
            for (unsigned l0 = 0; l0 < VM_WARP; l0 += 4) {
                const uint64_t *s = A + (l0 ^ kb);
                S[l0] = s[0] & lo; S[l0 + 1] = s[1] & lo; S[l0 + 2] = s[2] & lo; S[l0 + 3] = s[3] & lo;
            }
            break;
        case 1:
            for (unsigned l0 = 0; l0 < VM_WARP; l0 += 4) {
                const uint64_t *s = A + (l0 ^ kb);
                S[l0] = s[1] & lo; S[l0 + 1] = s[0] & lo; S[l0 + 2] = s[3] & lo; S[l0 + 3] = s[2] & lo;
            }
            break;
        case 2:
            for (unsigned l0 = 0; l0 < VM_WARP; l0 += 4) {
                const uint64_t *s = A + (l0 ^ kb);
                S[l0] = s[2] & lo; S[l0 + 1] = s[3] & lo; S[l0 + 2] = s[0] & lo; S[l0 + 3] = s[1] & lo;
            }
            break;
        default:
            for (unsigned l0 = 0; l0 < VM_WARP; l0 += 4) {
                const uint64_t *s = A + (l0 ^ kb);
                S[l0] = s[3] & lo; S[l0 + 1] = s[2] & lo; S[l0 + 2] = s[1] & lo; S[l0 + 3] = s[0] & lo;
            }
            break;
        }
        break;
    }
    case BC_SHFL_DOWN: /* lane l reads l + k while that is a lane, else itself */
        for (unsigned l = 0; l < VM_WARP - k; l++)
            S[l] = A[l + k] & lo;
        for (unsigned l = VM_WARP - k; l < VM_WARP; l++)
            S[l] = A[l] & lo;
        break;
    case BC_SHFL_UP: /* lane l reads l - k from lane k on, else itself */
        for (unsigned l = 0; l < k; l++)
            S[l] = A[l] & lo;
        for (unsigned l = k; l < VM_WARP; l++)
            S[l] = A[l - k] & lo;
        break;
    default: { /* idx: every lane reads lane k */
        uint64_t v = A[k] & lo;
        for (int l = 0; l < VM_WARP; l++)
            S[l] = v;
        break;
    }
    }
}

/* The fused pair SHFL_FOLD (optimize.c) over a full warp: the shuffle,
 * then the max, min or add at op[1] that reads its result. Out of the
 * group loop, so that its vector code does not change the loop's own. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static __attribute__((noinline)) void shfl_fold(const bc_op *op, uint64_t *R, uint32_t *P)
{
    uint64_t S[VM_WARP];
    const uint64_t *A = SLOT(R, op->a), *B = SLOT(R, op->b);
    uint64_t *D = SLOT(R, op->d);
    shfl_full_fast(op->mode, (unsigned)B[0] & 31, A, S);
    uint32_t sd = op->d;
    if (!(op->flags & BC_F_D_DEAD))
        memcpy(D, S, sizeof S);
    if (op->flags & BC_F_PRED_OUT) /* every lane in range but shfl.up's first k */
        P[op->list] = op->mode == BC_SHFL_UP ? ~((1u << ((unsigned)B[0] & 31)) - 1) : VM_FULL;
    op++;
    const uint64_t *X = op->a == sd ? S : SLOT(R, op->a), *Y = op->b == sd ? S : SLOT(R, op->b);
    D = SLOT(R, op->d);
    switch ((bc_opcode)op->code) {
    case BC_FMAX:
        VM_IVDEP for (int l = 0; l < VM_WARP; l++) D[l] = minmax_f32_bits((uint32_t)X[l], (uint32_t)Y[l], 1);
        break;
    case BC_FMIN:
        VM_IVDEP for (int l = 0; l < VM_WARP; l++) D[l] = minmax_f32_bits((uint32_t)X[l], (uint32_t)Y[l], 0);
        break;
    case BC_ADD_F32:
        VM_IVDEP for (int l = 0; l < VM_WARP; l++) D[l] = BF32(vm_canon_f32(F32(X[l]) + F32(Y[l])));
        break;
    case BC_ADD:
        VM_IVDEP for (int l = 0; l < VM_WARP; l++) D[l] = (uint32_t)(X[l] + Y[l]);
        break;
    case BC_MAX:
        if (sg)
            VM_IVDEP for (int l = 0; l < VM_WARP; l++) {
                int32_t x = (int32_t)X[l], y = (int32_t)Y[l];
                D[l] = (uint32_t)(x > y ? x : y);
            }
        else
            VM_IVDEP for (int l = 0; l < VM_WARP; l++) {
                uint32_t x = (uint32_t)X[l], y = (uint32_t)Y[l];
                D[l] = x > y ? x : y;
            }
        break;
    default: /* BC_MIN */
        if (sg)
            VM_IVDEP for (int l = 0; l < VM_WARP; l++) {
                int32_t x = (int32_t)X[l], y = (int32_t)Y[l];
                D[l] = (uint32_t)(x < y ? x : y);
            }
        else
            VM_IVDEP for (int l = 0; l < VM_WARP; l++) {
                uint32_t x = (uint32_t)X[l], y = (uint32_t)Y[l];
                D[l] = x < y ? x : y;
            }
        break;
    }
}

/* shfl, vote, elect, match or redux for the lanes `lanes`, which all name
 * membermask `member`: the op over the non-exited lanes of member among
 * `present` (the group's lanes at this instruction). src holds operand a
 * of every lane, and must not be D for shfl (D's lanes change while other
 * lanes still read); pv is vote's predicate operand (negation applied).
 * Writes d and the predicate outputs of `lanes` only. */
__attribute__((always_inline)) static inline void warp_sync_lanes(const vm_warp *w, const bc_op *op, uint32_t lanes,
                                                                  uint32_t member, uint32_t present,
                                                                  const uint64_t *src, uint32_t pv,
                                                                  const uint64_t *B, const uint64_t *C, uint64_t *D,
                                                                  uint32_t *P)
{
    uint32_t live = member & ~w->exited & w->valid & present;
    switch (op->code) {
    case BC_SHFL: {
        uint32_t pmask = 0;
        if (lanes == VM_FULL && shfl_full_uniform(op, B, C, src, D, &pmask)) {
            if (op->flags & BC_F_PRED_OUT)
                P[op->list] = (P[op->list] & ~lanes) | (pmask & lanes);
            break;
        }
        LANES(lanes, {
            uint32_t bval = (uint32_t)B[l] & 31, c = (uint32_t)C[l];
            uint32_t cval = c & 31, seg = (c >> 8) & 31;
            uint32_t maxl = ((uint32_t)l & seg) | (cval & ~seg), minl = (uint32_t)l & seg;
            int32_t j;
            int ok;
            switch (op->mode) {
            case BC_SHFL_UP: j = l - (int32_t)bval; ok = j >= (int32_t)maxl; break;
            case BC_SHFL_DOWN: j = l + (int32_t)bval; ok = j <= (int32_t)maxl; break;
            case BC_SHFL_BFLY: j = l ^ (int32_t)bval; ok = j <= (int32_t)maxl; break;
            default: j = (int32_t)(minl | (bval & ~seg)); ok = j <= (int32_t)maxl; break;
            }
            if (!ok || j < 0 || j > 31) j = l;
            D[l] = (uint32_t)src[j];
            if (ok) pmask |= 1u << l;
        });
        if (op->flags & BC_F_PRED_OUT)
            P[op->list] = (P[op->list] & ~lanes) | (pmask & lanes);
        break;
    }
    case BC_VOTE:
        if (op->mode == BC_VOTE_ELECT) {
            /* elect.sync: the lowest lane of membermask leads */
            uint32_t part = lanes & member;
            uint32_t leader = part ? (uint32_t)__builtin_ctz(part) : 0;
            LANES(lanes, D[l] = leader);
            P[op->e] = (P[op->e] & ~lanes) | (part ? (1u << leader) & lanes : 0);
        } else {
            uint32_t ballot = pv & live;
            if (op->mode == BC_VOTE_BALLOT) {
                LANES(lanes, D[l] = ballot);
            } else {
                int r = op->mode == BC_VOTE_ALL ? (ballot == live) : op->mode == BC_VOTE_ANY ? (ballot != 0)
                                                : (ballot == live || ballot == 0);
                P[op->d] = (P[op->d] & ~lanes) | (r ? lanes : 0);
            }
        }
        break;
    case BC_MATCH: {
        unsigned wb = vm_type_bytes(op->type);
        int all_same = 1;
        uint64_t first = zmask(src[__builtin_ctz(live ? live : lanes)], wb);
        LANES(live, if (zmask(src[l], wb) != first) all_same = 0);
        if (op->mode) {
            uint32_t r = all_same ? live : 0;
            LANES(lanes, D[l] = r);
        } else {
            /* every result before the first write: d may be a */
            uint32_t r[VM_WARP];
            LANES(lanes, {
                uint64_t v = zmask(src[l], wb);
                uint32_t same = 0;
                for (uint32_t k = live; k; k &= k - 1)
                    if (zmask(src[__builtin_ctz(k)], wb) == v)
                        same |= k & -k;
                r[l] = same;
            });
            LANES(lanes, D[l] = r[l]);
        }
        if (op->e != BC_NONE)
            P[op->e] = (P[op->e] & ~lanes) | (all_same ? lanes : 0);
        break;
    }
    case BC_REDUX: {
        uint64_t acc = 0;
        int first = 1;
        LANES(live, {
            uint32_t v = (uint32_t)src[l];
            if (first) { acc = v; first = 0; } else
            switch (op->mode) {
            case BC_REDUX_ADD: acc = (uint32_t)(acc + v); break;
            case BC_REDUX_MIN: acc = int_minmax(acc, v, 4, sg, 0); break;
            case BC_REDUX_MAX: acc = int_minmax(acc, v, 4, sg, 1); break;
            case BC_REDUX_AND: acc &= v; break;
            case BC_REDUX_OR: acc |= v; break;
            default: acc ^= v; break;
            }
        });
        LANES(lanes, D[l] = acc);
        break;
    }
    default: /* bar.warp.sync: the wait is all */
        break;
    }
}

/* A warp-synchronous op whose lanes m name different member masks in
 * membermask operand MM (one instruction reached by several groups of a
 * labeled partition, each with its mask). Every set of lanes naming one
 * mask runs as one op over that mask, once all the non-exited lanes of
 * the mask are in this group; the lanes still waiting for others are
 * split off into a group of their own at pc, in *waiting. Returns 0 when
 * every lane ran, 1 when none could (the group waits at pc, needing the
 * lanes its masks name) and 2 when some ran (the group goes on at pc + 1,
 * where this op's lanes are). */
static __attribute__((noinline, cold)) int warp_sync_mixed(vm_block *b, vm_warp *w, int gi, vm_frame *f,
                                                            uint32_t pc, const bc_op *op, uint32_t m,
                                                            const uint64_t *MM, uint32_t *waiting)
{
    vm_launch *L = b->launch;
    vm_group *g = &w->groups[gi];
    uint64_t *R = f->regs;
    uint32_t *P = f->preds;
    uint32_t live = w->valid & ~w->exited, present = g->mask;
    uint32_t ready = 0, need = 0;
    LANES(m, {
        uint32_t lane_need = (uint32_t)MM[l] & live;
        if (lane_need & ~present)
            need |= lane_need;
        else
            ready |= 1u << l;
    });
    *waiting = m & ~ready;
    if (!ready) {
        g->state = VM_G_WAIT_SYNC;
        g->need = need;
        return 1;
    }
    /* the sources of every lane before any lane's result: d may be a */
    uint64_t src[VM_WARP] = {0};
    uint32_t pv = 0;
    if (op->code == BC_SHFL || op->code == BC_MATCH || op->code == BC_REDUX)
        memcpy(src, SLOT(R, op->a), sizeof src);
    if (op->code == BC_VOTE && op->mode != BC_VOTE_ELECT)
        pv = (op->flags & BC_F_NEG_C) ? ~P[op->a] : P[op->a];
    uint64_t *D = op->d != BC_NONE ? SLOT(R, op->d) : NULL;
    const uint64_t *B = op->b != BC_NONE ? SLOT(R, op->b) : NULL;
    const uint64_t *C = op->c != BC_NONE ? SLOT(R, op->c) : NULL;
    for (uint32_t todo = ready; todo;) {
        uint32_t member = (uint32_t)MM[__builtin_ctz(todo)], lanes = 0;
        LANES(todo, if ((uint32_t)MM[l] == member) lanes |= 1u << l);
        todo &= ~lanes;
        if (L->hooks && L->hooks->warp_sync)
            L->hooks->warp_sync(L->hooks->ctx, b, w, f, pc, lanes, member);
        warp_sync_lanes(w, op, lanes, member, present, src, pv, B, C, D, P);
    }
    if (ready == m)
        return 0;
    vm_group_split(w, g, *waiting, pc);
    vm_group *n = &w->groups[w->ngroups - 1];
    n->state = VM_G_WAIT_SYNC;
    n->need = need;
    return 2;
}

/* shfl, vote, elect, match, redux or bar.warp.sync for the lanes m of
 * group gi at pc, out of the group loop. When every lane names one member
 * mask (checked first; the common case), the op runs once all the
 * non-exited lanes of that mask are in the group; otherwise as
 * warp_sync_mixed. Returns as warp_sync_mixed: 0 done, 1 the group waits
 * (*waiting = m), 2 some lanes went on and *waiting were split off. */
/* An indirect call (call through a register with a .callprototype) whose
 * prototype the callee does not match: other numbers of parameters or
 * results, or one of another size. The PTX ISA leaves such a call
 * undefined; kemu faults (status 719) naming both signatures. Returns 1
 * after the fault, 0 when they match. */
static __attribute__((noinline)) int indirect_call_mismatch(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc,
                                                            uint32_t m, const bc_call *call, const bc_function *callee)
{
    uint32_t lane = (uint32_t)__builtin_ctz(m);
    if (call->nargs != callee->nparams || call->nrets != callee->nrets) {
        vm_fault_at(b, w, f, pc, lane, 719,
                    "indirect call of '%s' does not match its prototype: the call passes %d argument%s and expects "
                    "%d result%s; '%s' takes %d and returns %d",
                    callee->name, call->nargs, call->nargs == 1 ? "" : "s", call->nrets, call->nrets == 1 ? "" : "s",
                    callee->name, callee->nparams, callee->nrets);
        return 1;
    }
    for (int i = 0; i < call->nargs; i++)
        if (call->args[i].size != callee->params[i].size) {
            vm_fault_at(b, w, f, pc, lane, 719,
                        "indirect call of '%s' does not match its prototype: argument %d is %u bytes; parameter "
                        "'%s' of '%s' is %llu bytes",
                        callee->name, i + 1, (unsigned)call->args[i].size, callee->params[i].name, callee->name,
                        (unsigned long long)callee->params[i].size);
            return 1;
        }
    for (int i = 0; i < call->nrets; i++)
        if (call->rets[i].size != callee->rets[i].size) {
            vm_fault_at(b, w, f, pc, lane, 719,
                        "indirect call of '%s' does not match its prototype: result %d is %u bytes; '%s' returns "
                        "%llu bytes",
                        callee->name, i + 1, (unsigned)call->rets[i].size, callee->name,
                        (unsigned long long)callee->rets[i].size);
            return 1;
        }
    return 0;
}

static __attribute__((noinline)) int warp_sync_op(vm_block *b, vm_warp *w, int gi, vm_frame *f, uint32_t pc,
                                                  const bc_op *op, uint32_t m, uint32_t *waiting)
{
    vm_launch *L = b->launch;
    vm_group *g = &w->groups[gi];
    uint64_t *R = f->regs;
    uint32_t *P = f->preds;
    if (op->code == BC_SHFL_FOLD) /* the fused pair's shuffle, as PTX wrote it */
        op = &f->fn->code[pc];
    const uint64_t *MM = SLOT(R, op->code == BC_SHFL ? op->e : op->code == BC_BAR_WARP ? op->a : op->b);
    uint32_t member = (uint32_t)MM[__builtin_ctz(m)], differ = 0;
    LANES(m, differ |= (uint32_t)MM[l] ^ member);
    if (__builtin_expect(differ != 0, 0))
        return warp_sync_mixed(b, w, gi, f, pc, op, m, MM, waiting);
    *waiting = m;
    if (!warp_sync_ready(w, g, member))
        return 1;
    *waiting = 0;
    if (L->hooks && L->hooks->warp_sync)
        L->hooks->warp_sync(L->hooks->ctx, b, w, f, pc, m, member);
    if (op->code == BC_BAR_WARP)
        return 0;
    uint64_t *D = op->d != BC_NONE ? SLOT(R, op->d) : NULL;
    const uint64_t *B = op->b != BC_NONE ? SLOT(R, op->b) : NULL;
    const uint64_t *C = op->c != BC_NONE ? SLOT(R, op->c) : NULL;
    if (op->code == BC_SHFL) {
        uint64_t src[VM_WARP];
        memcpy(src, SLOT(R, op->a), sizeof src);
        warp_sync_lanes(w, op, m, member, g->mask, src, 0, B, C, D, P);
    } else if (op->code == BC_VOTE) {
        uint32_t pv = op->mode == BC_VOTE_ELECT ? 0 : (op->flags & BC_F_NEG_C) ? ~P[op->a] : P[op->a];
        warp_sync_lanes(w, op, m, member, g->mask, NULL, pv, B, C, D, P);
    } else {
        warp_sync_lanes(w, op, m, member, g->mask, SLOT(R, op->a), 0, B, C, D, P);
    }
    return 0;
}

/* An mbarrier op for the lanes of m (the object's layout and each op's
 * step: vm/mbarrier.h). Returns 0, 1 when a test/try wait failed for some
 * lane (the warp should yield), or -1 after a fault. */
static int mbarrier_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    uint64_t *R = f->regs;
    uint32_t *P = f->preds;
    const uint64_t *A = SLOT(R, op->a), *B = op->b != BC_NONE ? SLOT(R, op->b) : NULL;
    uint64_t *D = op->d != BC_NONE ? SLOT(R, op->d) : NULL;
    uint8_t *ptrs[VM_WARP];
    int sub = op->mode2;
    if (sub != BC_MB_PENDING && vm_resolve_operand(b, w, f, pc, op, op->mode, m, A, op->imm, 8, VM_ACCESS_ATOMIC, ptrs))
        return -1;
    uint32_t failed = 0;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t v = 0, nv;
        uint64_t arg = B ? B[l] : 0; /* inval has none */
        if (sub == BC_MB_PENDING) {
            D[l] = vm_mbar_pending(arg);
            continue;
        }
        memcpy(&v, ptrs[l], 8);
        int completed, done;
        int e = vm_mbar_step(v, sub, arg, &nv, &completed, &done);
        if (e) {
            return vm_mbar_fault(b, w, f, pc, (uint32_t)l, e, sub, arg, v);
        }
        if (sub == BC_MB_ARRIVE || sub == BC_MB_ARRIVE_DROP || sub == BC_MB_ARRIVE_EXPECT_TX)
            D[l] = v; /* the state token */
        if (sub >= BC_MB_TEST_WAIT && sub <= BC_MB_TRY_PARITY) {
            P[op->d] = (P[op->d] & ~(1u << l)) | ((uint32_t)done << l);
            if (!done)
                failed |= 1u << l;
            continue;
        }
        memcpy(ptrs[l], &nv, 8);
    }
    return failed != 0;
}

VM_LANE_CLONES
int vm_group_run(vm_block *b, vm_warp *w, int gi)
{
    vm_launch *L = b->launch;
    vm_group *g = &w->groups[gi];
    vm_frame *f = g->frame;
    const bc_function *fn = f->fn;
    /* with fused pairs, unless a checker or the debugger watches: they
     * see the ops as the PTX wrote them */
    const bc_op *code = fn->xcode && !L->hooks ? fn->xcode : fn->code;
    uint64_t *R = f->regs;
    uint32_t *P = f->preds;
    uint32_t pc = g->pc;
    const uint32_t gm = g->mask;
    int ev = VM_EV_REPICK;
    /* instruction counts, kept out of memory that register stores might
     * alias, and added to the block's on the way out */
    uint64_t warp_count = 0, thread_count = 0;
    /* Reconvergence: stop where the nearest other group of this frame
     * waits, so that the groups merge there. */
    uint32_t stop_pc = UINT32_MAX;
    for (int k = 0; k < w->ngroups; k++)
        if (k != gi && w->groups[k].frame == f && w->groups[k].pc > pc && w->groups[k].pc < stop_pc)
            stop_pc = w->groups[k].pc;

    for (;;) {
        if (pc == stop_pc) {
            g->pc = pc;
            LEAVE(VM_EV_REPICK);
        }
        const bc_op *op = &code[pc];
        uint32_t m = gm;
        if (op->guard != BC_NONE) {
            uint32_t p = P[op->guard];
            m &= (op->flags & BC_F_GUARD_NEG) ? ~p : p;
        }
        if (m == 0) {
            pc++;
            continue;
        }
        warp_count++;
        thread_count += m == VM_FULL ? VM_WARP : (uint64_t)__builtin_popcount(m);
        if (L->hooks && L->hooks->op) {
            L->hooks->op(L->hooks->ctx, b, w, f, pc, m);
            if (__builtin_expect(L->debug_kill, 0)) {
                if (L->debug_kill == 2) {
                    /* the debugger holds this warp: run the op later */
                    L->debug_kill = 0;
                    warp_count--;
                    thread_count -= m == VM_FULL ? VM_WARP : (uint64_t)__builtin_popcount(m);
                    g->pc = pc;
                    LEAVE(VM_EV_YIELD);
                }
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "killed by the debugger");
                LEAVE(VM_EV_FAULT);
            }
        }
        uint64_t *D = op->d != BC_NONE ? SLOT(R, op->d) : NULL;
        const uint64_t *A = op->a != BC_NONE ? SLOT(R, op->a) : NULL;
        const uint64_t *B = op->b != BC_NONE ? SLOT(R, op->b) : NULL;
        const uint64_t *C = op->c != BC_NONE ? SLOT(R, op->c) : NULL;
        switch ((bc_opcode)op->code) {
        case BC_NOP:
            break;
        case BC_FENCE:
            if (L->hooks && L->hooks->fence)
                L->hooks->fence(L->hooks->ctx, b, w, f, pc, m, op->mode ? VM_SCOPE_ASYNC : op->n);
            break;
        case BC_MOV:
        mov:
            LANES_D(m, A[l]);
            CHAIN_ANY();
            break;
        case BC_MOV_PRED: {
            uint32_t v = P[op->a];
            if (op->flags & (1u << 20)) v = ~v;
            P[op->d] = (P[op->d] & ~m) | (v & m);
            break;
        }
        case BC_MOV_PRED_TO_REG:
            LANES_D(m, (P[op->a] >> l) & 1);
            break;
        case BC_MOV_REG_TO_PRED: {
            uint32_t r = 0;
            LANES(m, if (A[l] & 1) r |= 1u << l);
            P[op->d] = (P[op->d] & ~m) | r;
            break;
        }
        case BC_S2R:
        s2r: {
            /* per-lane registers first; the rest are warp-uniform: one
             * value, computed once and broadcast */
            int c = op->n;
            uint64_t v;
            uint64_t clock = b->warp_instructions + warp_count;
            switch (op->mode) {
            case BC_SR_TID:
                if (c < 3) {
                    const uint32_t *t = w->tid[c];
                    LANES_D(m, t[l]);
                } else {
                    LANES_D(m, 0);
                }
                goto s2r_done;
            case BC_SR_LANEID: LANES_D(m, (uint64_t)l); goto s2r_done;
            case BC_SR_LANEMASK_EQ: LANES_D(m, 1u << l); goto s2r_done;
            case BC_SR_LANEMASK_LE: LANES_D(m, (uint32_t)((2ull << l) - 1)); goto s2r_done;
            case BC_SR_LANEMASK_LT: LANES_D(m, (1u << l) - 1); goto s2r_done;
            case BC_SR_LANEMASK_GE: LANES_D(m, ~((1u << l) - 1)); goto s2r_done;
            case BC_SR_LANEMASK_GT: LANES_D(m, (uint32_t)~((2ull << l) - 1)); goto s2r_done;
            case BC_SR_NTID: v = c < 3 ? L->block[c] : 0; break;
            case BC_SR_WARPID: v = (uint64_t)w->index; break;
            case BC_SR_NWARPID: v = (uint64_t)b->nwarps; break;
            case BC_SR_CTAID: v = c < 3 ? b->ctaid[c] : 0; break;
            case BC_SR_NCTAID: v = c < 3 ? L->grid[c] : 0; break;
            case BC_SR_SMID: v = b->linear_id % 132; break;
            case BC_SR_NSMID: v = 132; break;
            case BC_SR_GRIDID: v = 1; break;
            case BC_SR_CLOCK: v = (uint32_t)clock; break;
            case BC_SR_CLOCK_HI: v = (uint32_t)(clock >> 32); break;
            case BC_SR_CLOCK64: v = clock; break;
            case BC_SR_GLOBALTIMER: v = clock * 1000; break;
            case BC_SR_GLOBALTIMER_LO: v = (uint32_t)(clock * 1000); break;
            case BC_SR_GLOBALTIMER_HI: v = (uint32_t)((clock * 1000) >> 32); break;
            case BC_SR_DYNAMIC_SMEM: v = (uint32_t)L->shared_dynamic; break;
            case BC_SR_TOTAL_SMEM:
            case BC_SR_AGGR_SMEM: {
                uint64_t t = L->shared_static + L->shared_dynamic;
                unsigned unit = L->arch_sm >= 80 ? 128 : 256;
                v = (uint32_t)((t + unit - 1) / unit * unit);
                break;
            }
            case BC_SR_CLUSTERID: {
                unsigned cl = L->cluster[c < 3 ? c : 0] ? L->cluster[c < 3 ? c : 0] : 1;
                v = c < 3 ? b->ctaid[c] / cl : 0;
                break;
            }
            case BC_SR_NCLUSTERID: {
                unsigned cl = L->cluster[c < 3 ? c : 0] ? L->cluster[c < 3 ? c : 0] : 1;
                v = c < 3 ? L->grid[c] / cl : 0;
                break;
            }
            case BC_SR_CLUSTER_CTAID: {
                unsigned cl = c < 3 && L->cluster[c] ? L->cluster[c] : 1;
                v = c < 3 ? b->ctaid[c] % cl : 0;
                break;
            }
            case BC_SR_CLUSTER_NCTAID:
                v = c < 3 ? (L->cluster[c] ? L->cluster[c] : 1) : 0;
                break;
            case BC_SR_CLUSTER_CTARANK: {
                unsigned cx = L->cluster[0] ? L->cluster[0] : 1, cy = L->cluster[1] ? L->cluster[1] : 1;
                unsigned cz = L->cluster[2] ? L->cluster[2] : 1;
                v = (b->ctaid[0] % cx) + (b->ctaid[1] % cy) * cx + (b->ctaid[2] % cz) * cx * cy;
                break;
            }
            case BC_SR_CLUSTER_NCTARANK:
                v = (uint64_t)(L->cluster[0] ? L->cluster[0] : 1) * (L->cluster[1] ? L->cluster[1] : 1) *
                    (L->cluster[2] ? L->cluster[2] : 1);
                break;
            case BC_SR_IS_EXPLICIT_CLUSTER: v = L->cluster[0] != 0; break;
            case BC_SR_ENVREG: v = L->envreg[c & 31]; break;
            default: v = 0; break;
            }
            LANES_D(m, v);
        s2r_done:
            CHAIN_ANY();
            break;
        }
        case BC_LOCALADDR: {
            uint64_t v = f->local_base + (uint64_t)op->imm;
            LANES_D(m, v);
            break;
        }
        case BC_PACK: {
            const uint32_t *lst = fn->lists + op->list;
            unsigned bits = op->mode;
            uint64_t emask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
            LANES(m, {
                uint64_t v = 0;
                for (int i = 0; i < op->n; i++)
                    v |= (SLOT(R, lst[i])[l] & emask) << (bits * (unsigned)i);
                D[l] = v;
            });
            break;
        }
        case BC_UNPACK: {
            const uint32_t *lst = fn->lists + op->list;
            unsigned bits = op->mode;
            uint64_t emask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
            uint64_t tmp[VM_WARP];
            LANES(m, tmp[l] = A[l]);
            for (int i = 0; i < op->n; i++) {
                uint64_t *E = SLOT(R, lst[i]);
                LANES(m, E[l] = (tmp[l] >> (bits * (unsigned)i)) & emask);
            }
            break;
        }
        /* ---- integer ---- */
        case BC_ADD:
        add:
            if (w8 == 4) {
                if ((op->flags & BC_F_SAT) && sg)
                    LANES(m, { int64_t s = (int64_t)(int32_t)A[l] + (int32_t)B[l];
                               D[l] = (uint32_t)(int32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s); });
                else
                    LANES_D(m, (uint32_t)(A[l] + B[l]));
            } else if (w8 == 8) LANES_D(m, A[l] + B[l]);
            else LANES_D(m, zmask(A[l] + B[l], w8));
            CHAIN_ANY();
            break;
        case BC_SUB:
            if (w8 == 4) {
                if ((op->flags & BC_F_SAT) && sg)
                    LANES(m, { int64_t s = (int64_t)(int32_t)A[l] - (int32_t)B[l];
                               D[l] = (uint32_t)(int32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s); });
                else
                    LANES_D(m, (uint32_t)(A[l] - B[l]));
            } else if (w8 == 8) LANES_D(m, A[l] - B[l]);
            else LANES_D(m, zmask(A[l] - B[l], w8));
            break;
        case BC_MUL_LO:
        mul_lo:
            if (w8 == 4) LANES_D(m, (uint32_t)(A[l] * B[l]));
            else LANES_D(m, zmask(A[l] * B[l], w8));
            CHAIN_ANY();
            break;
        case BC_MUL_HI:
            LANES(m, D[l] = mul_hi(A[l], B[l], w8, sg));
            break;
        case BC_MUL_WIDE:
        mul_wide:
            if (sg) LANES_D(m, zmask((uint64_t)sext(A[l], w8) * (uint64_t)sext(B[l], w8), w8 * 2));
            else LANES_D(m, zmask(A[l], w8) * zmask(B[l], w8));
            CHAIN_ANY();
            break;
        case BC_MAD_LO:
        mad_lo:
            if (w8 == 4) LANES_D(m, (uint32_t)(A[l] * B[l] + C[l]));
            else LANES_D(m, zmask(A[l] * B[l] + C[l], w8));
            CHAIN_ANY();
            break;
        case BC_MAD_HI:
            if ((op->flags & BC_F_SAT) && sg && w8 == 4)
                LANES(m, { int64_t s = (int64_t)(int32_t)mul_hi(A[l], B[l], 4, 1) + (int32_t)C[l];
                           D[l] = (uint32_t)(int32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s); });
            else
                LANES(m, D[l] = zmask(mul_hi(A[l], B[l], w8, sg) + C[l], w8));
            break;
        case BC_MAD_WIDE:
            if (sg) LANES_D(m, zmask((uint64_t)sext(A[l], w8) * (uint64_t)sext(B[l], w8) + C[l], w8 * 2));
            else LANES_D(m, zmask(zmask(A[l], w8) * zmask(B[l], w8) + C[l], w8 * 2));
            break;
        case BC_MUL24:
        case BC_MAD24:
            LANES(m, {
                int64_t x = sg ? sext(A[l] << 8, 4) >> 8 : (int64_t)(A[l] & 0xffffff);
                int64_t y = sg ? sext(B[l] << 8, 4) >> 8 : (int64_t)(B[l] & 0xffffff);
                uint64_t t = (uint64_t)(x * y);
                uint64_t r = op->mode ? (uint32_t)(t >> 16) : (uint32_t)t;
                if (op->code == BC_MAD24) r = (uint32_t)(r + C[l]);
                D[l] = r;
            });
            break;
        case BC_ADDC:
        case BC_SUBC:
        case BC_MADC: {
            uint32_t cc = w->cc, ncc = cc;
            int rd = op->mode & 1, wr = op->mode & 2, hi = op->mode & 4;
            LANES(m, {
                uint64_t cin = rd ? ((cc >> l) & 1) : 0;
                uint64_t a = zmask(A[l], w8), bb = zmask(B[l], w8), r, cout;
                if (op->code == BC_SUBC) {
                    unsigned __int128 full = (unsigned __int128)a - bb - cin;
                    r = zmask((uint64_t)full, w8);
                    cout = (unsigned __int128)bb + cin > a;
                } else {
                    uint64_t base = a;
                    if (op->code == BC_MADC)
                        base = hi ? mul_hi(a, bb, w8, sg) : zmask(a * bb, w8), bb = zmask(C[l], w8);
                    unsigned __int128 full = (unsigned __int128)base + bb + cin;
                    r = zmask((uint64_t)full, w8);
                    cout = (uint64_t)(full >> (w8 * 8)) & 1;
                }
                D[l] = r;
                if (wr) ncc = (ncc & ~(1u << l)) | ((uint32_t)cout << l);
            });
            w->cc = ncc;
            break;
        }
        case BC_DIV:
            if (sg) LANES(m, { int64_t x = sext(A[l], w8), y = sext(B[l], w8);
                               D[l] = y == 0 ? zmask(~0ull, w8) : (y == -1 ? zmask((uint64_t)0 - (uint64_t)x, w8) : zmask((uint64_t)(x / y), w8)); });
            else LANES(m, { uint64_t x = zmask(A[l], w8), y = zmask(B[l], w8); D[l] = y ? x / y : zmask(~0ull, w8); });
            break;
        case BC_REM:
            if (sg) LANES(m, { int64_t x = sext(A[l], w8), y = sext(B[l], w8);
                               D[l] = y == 0 ? zmask(~0ull, w8) : (y == -1 ? 0 : zmask((uint64_t)(x % y), w8)); });
            else LANES(m, { uint64_t x = zmask(A[l], w8), y = zmask(B[l], w8); D[l] = y ? x % y : zmask(~0ull, w8); });
            break;
        case BC_MIN:
        case BC_MAX: {
            int mx = op->code == BC_MAX;
            LANES(m, { uint64_t r = int_minmax(A[l], B[l], w8, sg, mx);
                       if (C) r = int_minmax(r, C[l], w8, sg, mx);
                       if ((op->flags & BC_F_RELU) && sext(r, w8) < 0) r = 0;
                       D[l] = r; });
            break;
        }
        case BC_ABS:
            LANES(m, { int64_t x = sext(A[l], w8); D[l] = zmask((uint64_t)(x < 0 ? -(uint64_t)x : (uint64_t)x), w8); });
            break;
        case BC_NEG:
            LANES_D(m, zmask((uint64_t)0 - A[l], w8));
            break;
        case BC_SAD:
            LANES(m, { uint64_t d; if (sg) { int64_t x = sext(A[l], w8), y = sext(B[l], w8); d = (uint64_t)(x < y ? y - x : x - y); }
                       else { uint64_t x = zmask(A[l], w8), y = zmask(B[l], w8); d = x < y ? y - x : x - y; }
                       D[l] = zmask(C[l] + d, w8); });
            break;
        case BC_AND: LANES_D(m, A[l] & B[l]); break;
        case BC_OR: LANES_D(m, A[l] | B[l]); break;
        case BC_XOR: LANES_D(m, A[l] ^ B[l]); break;
        case BC_NOT: LANES_D(m, zmask(~A[l], w8)); break;
        case BC_CNOT: LANES_D(m, zmask(A[l], w8) == 0); break;
        case BC_SHL:
        shl:
            LANES_D(m, (uint32_t)B[l] >= w8 * 8 ? 0 : zmask(A[l] << (uint32_t)B[l], w8));
            CHAIN_ANY();
            break;
        case BC_SHR:
            if (sg) LANES(m, { uint32_t s = (uint32_t)B[l]; int64_t x = sext(A[l], w8);
                               D[l] = zmask((uint64_t)(x >> (s >= w8 * 8 ? w8 * 8 - 1 : s)), w8); });
            else LANES(m, { uint32_t s = (uint32_t)B[l]; D[l] = s >= w8 * 8 ? 0 : zmask(A[l], w8) >> s; });
            break;
        case BC_POPC: LANES_D(m, (uint64_t)__builtin_popcountll(zmask(A[l], w8))); break;
        case BC_CLZ:
            LANES(m, { uint64_t x = zmask(A[l], w8); D[l] = x ? (uint64_t)(__builtin_clzll(x) - (64 - (int)w8 * 8)) : w8 * 8; });
            break;
        case BC_BREV:
            LANES(m, { uint64_t x = zmask(A[l], w8), r = 0; for (unsigned i = 0; i < w8 * 8; i++) r |= ((x >> i) & 1) << (w8 * 8 - 1 - i); D[l] = r; });
            break;
        case BC_BFIND:
            LANES(m, {
                uint64_t x = zmask(A[l], w8);
                if (sg && sext(x, w8) < 0) x = zmask(~x, w8);
                uint32_t r = x ? (uint32_t)(63 - __builtin_clzll(x)) : 0xffffffffu;
                if (op->mode && r != 0xffffffffu) r = w8 * 8 - 1 - r;
                D[l] = r;
            });
            break;
        case BC_FNS:
            LANES(m, {
                uint32_t mask = (uint32_t)A[l], base = (uint32_t)B[l] & 31;
                int32_t off = (int32_t)C[l];
                uint32_t r = 0xffffffffu;
                if (off == 0) { r = base; }
                else if (off > 0) { int k = 0; for (uint32_t i = base; i < 32; i++) if ((mask >> i) & 1 && ++k == off) { r = i; break; } }
                else { int k = 0; for (int i = (int)base; i >= 0; i--) if ((mask >> i) & 1 && --k == off) { r = (uint32_t)i; break; } }
                D[l] = r;
            });
            break;
        case BC_BFE: LANES(m, D[l] = bfe(A[l], (uint32_t)B[l], (uint32_t)C[l], w8, sg)); break;
        case BC_BFI: {
            const uint64_t *E = SLOT(R, op->e);
            LANES(m, D[l] = bfi(A[l], B[l], (uint32_t)C[l], (uint32_t)E[l], w8));
            break;
        }
        case BC_BMSK:
            LANES(m, { uint32_t a = (uint32_t)A[l], bb = (uint32_t)B[l];
                       if (op->mode) { a &= 31; bb &= 31; } else { if (a > 32) a = 32; if (bb > 32) bb = 32; }
                       uint64_t mk = bb >= 32 ? 0xffffffffull : ((1ull << bb) - 1);
                       D[l] = (uint32_t)((mk << a) & 0xffffffffull); });
            break;
        case BC_PRMT: LANES(m, D[l] = prmt((uint32_t)A[l], (uint32_t)B[l], (uint32_t)C[l], op->mode)); break;
        case BC_LOP3: {
            uint32_t lut = (uint32_t)op->imm;
            LANES(m, { uint64_t a = A[l], bb = B[l], c = C[l], r = 0;
                       for (int k = 0; k < 8; k++) if ((lut >> k) & 1) {
                           uint64_t t = ((k & 4) ? a : ~a) & ((k & 2) ? bb : ~bb) & ((k & 1) ? c : ~c);
                           r |= t; }
                       D[l] = zmask(r, w8 ? w8 : 4); });
            break;
        }
        case BC_SHF: LANES(m, D[l] = shf((uint32_t)A[l], (uint32_t)B[l], (uint32_t)C[l], op->mode)); break;
        case BC_SZEXT:
        szext: {
            /* integer cvt: sign-extend a narrower signed source, else keep the low bits */
            unsigned sw = vm_type_bytes(op->type2);
            if (vm_type_signed(op->type2) && sw < w8)
                LANES_D(m, zmask((uint64_t)sext(A[l], sw), w8));
            else if (sw < w8)
                LANES_D(m, zmask(A[l], sw));
            else
                LANES_D(m, zmask(A[l], w8));
            CHAIN_ANY();
            break;
        }
        /* ---- float ---- */
        case BC_ADD_F32:
        add_f32:
            LANES_D(m, BF32(vm_canon_f32(F32(A[l]) + F32(B[l]))));
            CHAIN_ANY();
            break;
        case BC_MUL_F32:
        mul_f32:
            LANES_D(m, BF32(vm_canon_f32(F32(A[l]) * F32(B[l]))));
            CHAIN_ANY();
            break;
        case BC_FMA_F32:
        fma_f32:
            vm_fma_f32_lanes(D, A, B, C, m);
            break;
        case BC_FADD: LANES(m, D[l] = float_arith(0, op->type, A[l], B[l], 0, op->mode, op->flags)); break;
        case BC_FSUB:
            if (op->type == PTX_T_F32 && (op->mode == BC_RND_NONE || op->mode == BC_RND_RN) &&
                !(op->flags & (BC_F_FTZ | BC_F_SAT)))
                LANES_D(m, BF32(vm_canon_f32(F32(A[l]) - F32(B[l])))); /* the common form, vectorized */
            else
                LANES(m, D[l] = float_arith(1, op->type, A[l], B[l], 0, op->mode, op->flags));
            break;
        case BC_FMUL: LANES(m, D[l] = float_arith(2, op->type, A[l], B[l], 0, op->mode, op->flags)); break;
        case BC_FFMA: LANES(m, D[l] = float_arith(3, op->type, A[l], B[l], C[l], op->mode, op->flags)); break;
        case BC_FDIV:
            if (op->type == PTX_T_F32) {
                int rnd = op->mode;
                LANES(m, { float x = F32(A[l]), y = F32(B[l]);
                           if (op->flags & BC_F_FTZ) { x = vm_ftz_f32(x); y = vm_ftz_f32(y); }
                           float r = rnd == BC_RND_APPROX ? vm_approx_div(x, y)
                                     : rnd == BC_RND_FULL ? x / y : vm_div_f32(x, y, vm_rnd(rnd));
                           D[l] = f32_finish(r, op->flags); });
            } else {
                LANES(m, D[l] = BF64(vm_div_f64(F64(A[l]), F64(B[l]), vm_rnd(op->mode))));
            }
            break;
        case BC_FMIN:
            if (op->type == PTX_T_F32 && !(op->flags & (BC_F_FTZ | BC_F_NAN | BC_F_ABS | BC_F_XORSIGN)))
                LANES_D(m, minmax_f32_bits((uint32_t)A[l], (uint32_t)B[l], 0));
            else
                LANES(m, D[l] = float_minmax(0, op->type, A[l], B[l], op->flags));
            break;
        case BC_FMAX:
            if (op->type == PTX_T_F32 && !(op->flags & (BC_F_FTZ | BC_F_NAN | BC_F_ABS | BC_F_XORSIGN)))
                LANES_D(m, minmax_f32_bits((uint32_t)A[l], (uint32_t)B[l], 1));
            else
                LANES(m, D[l] = float_minmax(1, op->type, A[l], B[l], op->flags));
            break;
        case BC_FABS:
            switch (op->type) {
            case PTX_T_F32: LANES(m, { float x = fabsf(F32(A[l])); if (op->flags & BC_F_FTZ) x = vm_ftz_f32(x); D[l] = BF32(vm_canon_f32(x)); }); break;
            case PTX_T_F64: LANES_D(m, A[l] & 0x7fffffffffffffffull); break;
            case PTX_T_F16X2: case PTX_T_BF16X2: LANES_D(m, A[l] & 0x7fff7fffu); break;
            default: LANES_D(m, A[l] & 0x7fffu); break;
            }
            break;
        case BC_FNEG:
            switch (op->type) {
            case PTX_T_F32: LANES(m, { float x = -F32(A[l]); if (op->flags & BC_F_FTZ) x = vm_ftz_f32(x); D[l] = BF32(vm_canon_f32(x)); }); break;
            case PTX_T_F64: LANES_D(m, A[l] ^ 0x8000000000000000ull); break;
            case PTX_T_F16X2: case PTX_T_BF16X2: LANES_D(m, A[l] ^ 0x80008000u); break;
            default: LANES_D(m, (A[l] ^ 0x8000u) & 0xffff); break;
            }
            break;
        case BC_FUNARY:
            if (op->type == PTX_T_F32 && op->mode == BC_FN_EX2) {
                /* exp() and softmax: ex2.approx(.ftz).f32 straight to the H200 model */
                if (op->flags & BC_F_FTZ)
                    LANES(m, D[l] = BF32(vm_approx_ex2(F32(A[l]), 1)));
                else
                    LANES(m, D[l] = BF32(vm_approx_ex2(F32(A[l]), 0)));
            } else if (op->type == PTX_T_F32) {
                LANES(m, D[l] = BF32(funary_f32(op->mode, F32(A[l]), op->mode2, op->flags)));
            } else {
                LANES(m, D[l] = funary(op->mode, op->type, A[l], op->mode2, op->flags));
            }
            break;
        case BC_COPYSIGN:
            if (op->type == PTX_T_F32)
                LANES(m, D[l] = (B[l] & 0x7fffffffu) | (A[l] & 0x80000000u));
            else
                LANES(m, D[l] = (B[l] & 0x7fffffffffffffffull) | (A[l] & 0x8000000000000000ull));
            break;
        case BC_TESTP: {
            uint32_t r = 0;
            if (op->type == PTX_T_F32) LANES(m, if (vm_testp_f32(F32(A[l]), (vm_testp_op)op->mode)) r |= 1u << l);
            else LANES(m, if (vm_testp_f64(F64(A[l]), (vm_testp_op)op->mode)) r |= 1u << l);
            P[op->d] = (P[op->d] & ~m) | r;
            break;
        }
        /* ---- compare / select ---- */
        case BC_SETP:
        case BC_SETP_BRA: /* its bra follows by the same test as a setp's */
        setp: {
            uint32_t r = 0;
            int ftz = (op->flags & BC_F_FTZ) != 0;
            if (op->type == PTX_T_F16X2 || op->type == PTX_T_BF16X2) {
                /* p from the low halves, q from the high halves */
                int ht = op->type == PTX_T_F16X2 ? PTX_T_F16 : PTX_T_BF16;
                uint32_t q = 0, c = op->mode2 ? P[op->c] : 0;
                if (op->flags & BC_F_NEG_C) c = ~c;
                LANES(m, {
                    int lo = eval_cmp(ht, op->mode, A[l] & 0xffff, B[l] & 0xffff, ftz);
                    int hi = eval_cmp(ht, op->mode, (A[l] >> 16) & 0xffff, (B[l] >> 16) & 0xffff, ftz);
                    if (bool_combine(lo, (c >> l) & 1, op->mode2)) r |= 1u << l;
                    if (bool_combine(hi, (c >> l) & 1, op->mode2)) q |= 1u << l;
                });
                P[op->d] = (P[op->d] & ~m) | (r & m);
                if (op->e != BC_NONE)
                    P[op->e] = (P[op->e] & ~m) | (q & m);
                break;
            }
            if (!ptx_type_is_float((ptx_type)op->type) && !sg && op->mode <= BC_CMP_GE && w8 == 4) {
                switch (op->mode) {
                case BC_CMP_EQ: SETP_LANES((uint32_t)A[l] == (uint32_t)B[l]); break;
                case BC_CMP_NE: SETP_LANES((uint32_t)A[l] != (uint32_t)B[l]); break;
                case BC_CMP_LT: SETP_LANES((uint32_t)A[l] < (uint32_t)B[l]); break;
                case BC_CMP_LE: SETP_LANES((uint32_t)A[l] <= (uint32_t)B[l]); break;
                case BC_CMP_GT: SETP_LANES((uint32_t)A[l] > (uint32_t)B[l]); break;
                default: SETP_LANES((uint32_t)A[l] >= (uint32_t)B[l]); break;
                }
            } else if (sg && w8 == 4) {
                switch (op->mode) {
                case BC_CMP_EQ: SETP_LANES((int32_t)A[l] == (int32_t)B[l]); break;
                case BC_CMP_NE: SETP_LANES((int32_t)A[l] != (int32_t)B[l]); break;
                case BC_CMP_LT: SETP_LANES((int32_t)A[l] < (int32_t)B[l]); break;
                case BC_CMP_LE: SETP_LANES((int32_t)A[l] <= (int32_t)B[l]); break;
                case BC_CMP_GT: SETP_LANES((int32_t)A[l] > (int32_t)B[l]); break;
                case BC_CMP_GE: SETP_LANES((int32_t)A[l] >= (int32_t)B[l]); break;
                default: LANES(m, if (eval_cmp(op->type, op->mode, A[l], B[l], ftz)) r |= 1u << l); break;
                }
            } else if (op->type == PTX_T_F32 && !ftz && op->mode <= BC_CMP_GEU) {
                /* C's comparisons are the ordered ones; !(x >= y) is ltu */
                switch (op->mode) {
                case BC_CMP_EQ: SETP_LANES(F32(A[l]) == F32(B[l])); break;
                case BC_CMP_NE: SETP_LANES(F32(A[l]) < F32(B[l]) || F32(A[l]) > F32(B[l])); break;
                case BC_CMP_LT: SETP_LANES(F32(A[l]) < F32(B[l])); break;
                case BC_CMP_LE: SETP_LANES(F32(A[l]) <= F32(B[l])); break;
                case BC_CMP_GT: SETP_LANES(F32(A[l]) > F32(B[l])); break;
                case BC_CMP_GE: SETP_LANES(F32(A[l]) >= F32(B[l])); break;
                case BC_CMP_EQU: SETP_LANES(!(F32(A[l]) < F32(B[l]) || F32(A[l]) > F32(B[l]))); break;
                case BC_CMP_NEU: SETP_LANES(!(F32(A[l]) == F32(B[l]))); break;
                case BC_CMP_LTU: SETP_LANES(!(F32(A[l]) >= F32(B[l]))); break;
                case BC_CMP_LEU: SETP_LANES(!(F32(A[l]) > F32(B[l]))); break;
                case BC_CMP_GTU: SETP_LANES(!(F32(A[l]) <= F32(B[l]))); break;
                default: SETP_LANES(!(F32(A[l]) < F32(B[l]))); break;
                }
            } else {
                LANES(m, if (eval_cmp(op->type, op->mode, A[l], B[l], ftz)) r |= 1u << l);
            }
            uint32_t q = ~r;
            if (op->mode2) {
                uint32_t c = P[op->c];
                if (op->flags & BC_F_NEG_C) c = ~c;
                switch (op->mode2) {
                case BC_BOOL_AND: r &= c; q &= c; break;
                case BC_BOOL_OR: r |= c; q |= c; break;
                default: r ^= c; q ^= c; break;
                }
            }
            P[op->d] = (P[op->d] & ~m) | (r & m);
            if (op->e != BC_NONE)
                P[op->e] = (P[op->e] & ~m) | (q & m);
            if (pc + 1 < fn->ncode && op[1].code == BC_BRA && op[1].guard != BC_NONE && !L->hooks &&
                pc + 1 != stop_pc) {
                /* compare and branch: the branch that follows runs here,
                 * without another trip through the loop's head */
                pc++;
                op++;
                uint32_t p = P[op->guard];
                m = gm & ((op->flags & BC_F_GUARD_NEG) ? ~p : p);
                if (m == 0)
                    break;
                warp_count++;
                thread_count += m == VM_FULL ? VM_WARP : (uint64_t)__builtin_popcount(m);
                goto branch;
            }
            break;
        }
        case BC_SET: {
            int ftz = (op->flags & BC_F_FTZ) != 0;
            uint32_t c = op->mode2 ? P[op->c] : 0;
            if (op->flags & BC_F_NEG_C) c = ~c;
            uint64_t tv = op->type2 == PTX_T_F32 ? 0x3f800000u : op->type2 == PTX_T_F16 ? 0x3c00u :
                          op->type2 == PTX_T_BF16 ? 0x3f80u : op->type2 == PTX_T_F16X2 ? 0x3c00u :
                          zmask(~0ull, vm_type_bytes(op->type2));
            if (op->type == PTX_T_F16X2 || op->type == PTX_T_BF16X2) {
                int ht = op->type == PTX_T_F16X2 ? PTX_T_F16 : PTX_T_BF16;
                uint64_t half = op->type2 == PTX_T_F16X2 ? 0x3c00u : 0xffffu;
                LANES(m, {
                    int lo = bool_combine(eval_cmp(ht, op->mode, A[l] & 0xffff, B[l] & 0xffff, ftz), (c >> l) & 1, op->mode2);
                    int hi = bool_combine(eval_cmp(ht, op->mode, (A[l] >> 16) & 0xffff, (B[l] >> 16) & 0xffff, ftz), (c >> l) & 1, op->mode2);
                    D[l] = (lo ? half : 0) | ((hi ? half : 0) << 16);
                });
                break;
            }
            LANES(m, { int r = bool_combine(eval_cmp(op->type, op->mode, A[l], B[l], ftz), (c >> l) & 1, op->mode2);
                       D[l] = r ? tv : 0; });
            break;
        }
        case BC_SELP: {
            uint32_t p = P[op->c];
            if (op->flags & BC_F_NEG_C) p = ~p;
            LANES_D(m, ((p >> l) & 1) ? A[l] : B[l]);
            break;
        }
        case BC_SLCT:
            if (op->type2 == PTX_T_F32)
                LANES(m, { float c = F32(C[l]); if (op->flags & BC_F_FTZ) c = vm_ftz_f32(c); D[l] = (c >= 0.0f) ? A[l] : B[l]; });
            else
                LANES(m, D[l] = (int32_t)C[l] >= 0 ? A[l] : B[l]);
            break;
        case BC_PSETP: {
            uint32_t a = op->a != BC_NONE ? P[op->a] : 0, bb = op->b != BC_NONE ? P[op->b] : 0, r;
            if (op->flags & (1u << 20)) a = ~a;
            if (op->flags & (1u << 21)) bb = ~bb;
            switch (op->mode) {
            case 1: r = a & bb; break;
            case 2: r = a | bb; break;
            case 3: r = a ^ bb; break;
            case 4: r = ~a; break;
            case 5: r = VM_FULL; break;
            default: r = 0; break;
            }
            P[op->d] = (P[op->d] & ~m) | (r & m);
            break;
        }
        case BC_CVT:
            if (!cvt_fast(op, A, D, m))
                LANES(m, D[l] = cvt_value(op, A[l]));
            break;
        case BC_CVT_PACK:
            if (op->mode == 0) {
                int bf = op->type == PTX_T_BF16X2;
                vm_round r = vm_rnd(op->mode2);
                unsigned nf = ((op->flags & BC_F_SATFINITE) ? VM_CVT_SATFINITE : 0) | ((op->flags & BC_F_RELU) ? VM_CVT_RELU : 0);
                LANES(m, { uint16_t hi = bf ? vm_f32_to_bf16_flags(F32(A[l]), r, nf) : vm_f32_to_f16_flags(F32(A[l]), r, nf);
                           uint16_t lo = bf ? vm_f32_to_bf16_flags(F32(B[l]), r, nf) : vm_f32_to_f16_flags(F32(B[l]), r, nf);
                           D[l] = ((uint64_t)hi << 16) | lo; });
            } else {
                unsigned bits = vm_type_bytes(op->type) * 8;
                int dsg = vm_type_signed(op->type);
                LANES(m, { uint64_t a = int_saturate((int32_t)A[l], 0, 1, bits / 8, dsg) & ((1ull << bits) - 1);
                           uint64_t bb = int_saturate((int32_t)B[l], 0, 1, bits / 8, dsg) & ((1ull << bits) - 1);
                           D[l] = (uint32_t)((C[l] << (2 * bits)) | (a << bits) | bb); });
            }
            break;
        case BC_CVTA:
        cvta:
            if (op->mode2) { /* to generic */
                uint64_t base = op->mode == BC_SPACE_SHARED || op->mode == BC_SPACE_SHARED_CLUSTER ? MEM_WINDOW_SHARED :
                                op->mode == BC_SPACE_LOCAL ? MEM_WINDOW_LOCAL : op->mode == BC_SPACE_CONST ? MEM_WINDOW_CONST :
                                op->mode == BC_SPACE_PARAM_KERNEL ? MEM_WINDOW_PARAM : 0;
                LANES_D(m, base ? base + (uint32_t)A[l] : A[l]);
            } else {
                uint64_t base = op->mode == BC_SPACE_SHARED || op->mode == BC_SPACE_SHARED_CLUSTER ? MEM_WINDOW_SHARED :
                                op->mode == BC_SPACE_LOCAL ? MEM_WINDOW_LOCAL : op->mode == BC_SPACE_CONST ? MEM_WINDOW_CONST :
                                op->mode == BC_SPACE_PARAM_KERNEL ? MEM_WINDOW_PARAM : 0;
                LANES_D(m, base ? A[l] - base : A[l]);
                if (op->type == PTX_T_U32 || op->type == PTX_T_B32) LANES(m, D[l] = (uint32_t)D[l]);
            }
            CHAIN_ANY();
            break;
        case BC_ISSPACEP: {
            uint32_t r = 0;
            LANES(m, {
                uint64_t a = A[l];
                int in;
                switch (op->mode) {
                case BC_SPACE_GLOBAL: in = a < MEM_WINDOW_SHARED; break;
                case BC_SPACE_SHARED: case BC_SPACE_SHARED_CLUSTER: in = a >= MEM_WINDOW_SHARED && a < MEM_WINDOW_SHARED + MEM_WINDOW_SIZE; break;
                case BC_SPACE_LOCAL: in = a >= MEM_WINDOW_LOCAL && a < MEM_WINDOW_LOCAL + MEM_WINDOW_SIZE; break;
                case BC_SPACE_CONST: in = a >= MEM_WINDOW_CONST && a < MEM_WINDOW_CONST + MEM_WINDOW_SIZE; break;
                case BC_SPACE_PARAM_KERNEL: in = a >= MEM_WINDOW_PARAM && a < MEM_WINDOW_PARAM + MEM_WINDOW_SIZE; break;
                default: in = 0; break;
                }
                if (in) r |= 1u << l;
            });
            P[op->d] = (P[op->d] & ~m) | r;
            break;
        }
        /* ---- memory ---- */
        case BC_LD_KPARAM:
        ld_kparam: {
            uint64_t v = 0;
            memcpy(&v, L->params + op->imm, op->src_size);
            if (op->flags & BC_F_SIGNED)
                v = zmask((uint64_t)sext(v, op->src_size), op->mode2 > op->src_size ? op->mode2 : op->src_size);
            LANES_D(m, v);
            CHAIN_ANY();
            break;
        }
        case BC_LD:
        case BC_ST:
        memory: {
            uint8_t *ptrs[VM_WARP];
            unsigned esz = op->src_size, n = op->n ? op->n : 1;
            const uint32_t *lst = n > 1 ? fn->lists + op->list : NULL;
            unsigned regw = op->mode2 > esz ? op->mode2 : esz;
            int sgn = (op->flags & BC_F_SIGNED) != 0;
            uintptr_t bp;
            if (m == VM_FULL && n == 1 && !sgn && (esz & (esz - 1)) == 0 && esz <= 8 && lanes_contiguous(A, esz) &&
                vm_resolve_span(b, op->mode, A[0] + (uint64_t)op->imm, VM_WARP * esz, esz, &bp)) {
                /* the coalesced idiom: lane l accesses A[0] + imm + l * esz */
                uintptr_t p0 = bp + (uintptr_t)A[0] + (uintptr_t)op->imm;
                if (op->code == BC_LD)
                    vm_widen(D, (const void *)p0, esz);
                else
                    vm_narrow((void *)p0, B, esz);
                CHAIN_ANY();
                break;
            }
            if (vm_resolve_fast(b, op->mode, m, A, op->imm, esz * n, &bp)) {
                /* every lane in bounds and aligned: plain host accesses */
            host:
                for (unsigned e = 0; e < n; e++) {
                    uintptr_t ep = bp + e * esz;
                    if (op->code == BC_LD) {
                        uint64_t *E = n > 1 ? SLOT(R, lst[e]) : D;
                        switch (esz | (sgn ? 0x100 : 0)) {
                        case 1: LANES(m, E[l] = *(const uint8_t *)(ep + (uintptr_t)A[l])); break;
                        case 2: LANES(m, { uint16_t v; memcpy(&v, (const void *)(ep + (uintptr_t)A[l]), 2); E[l] = v; }); break;
                        case 4: LANES(m, { uint32_t v; memcpy(&v, (const void *)(ep + (uintptr_t)A[l]), 4); E[l] = v; }); break;
                        case 8: LANES(m, memcpy(&E[l], (const void *)(ep + (uintptr_t)A[l]), 8)); break;
                        case 0x101: LANES(m, E[l] = zmask((uint64_t)(int64_t)*(const int8_t *)(ep + (uintptr_t)A[l]), regw)); break;
                        case 0x102: LANES(m, { int16_t v; memcpy(&v, (const void *)(ep + (uintptr_t)A[l]), 2); E[l] = zmask((uint64_t)(int64_t)v, regw); }); break;
                        case 0x104: LANES(m, { int32_t v; memcpy(&v, (const void *)(ep + (uintptr_t)A[l]), 4); E[l] = zmask((uint64_t)(int64_t)v, regw); }); break;
                        default: LANES(m, { uint64_t v = 0; memcpy(&v, (const void *)(ep + (uintptr_t)A[l]), esz);
                                            E[l] = sgn ? zmask((uint64_t)sext(v, esz), regw) : v; }); break;
                        }
                    } else {
                        const uint64_t *E = n > 1 ? SLOT(R, lst[e]) : B;
                        switch (esz) {
                        case 1: LANES(m, *(uint8_t *)(ep + (uintptr_t)A[l]) = (uint8_t)E[l]); break;
                        case 2: LANES(m, { uint16_t v = (uint16_t)E[l]; memcpy((void *)(ep + (uintptr_t)A[l]), &v, 2); }); break;
                        case 4: LANES(m, { uint32_t v = (uint32_t)E[l]; memcpy((void *)(ep + (uintptr_t)A[l]), &v, 4); }); break;
                        case 8: LANES(m, memcpy((void *)(ep + (uintptr_t)A[l]), &E[l], 8)); break;
                        default: LANES(m, memcpy((void *)(ep + (uintptr_t)A[l]), &E[l], esz)); break;
                        }
                    }
                }
                break;
            }
            /* watched by a checker (which saw the lanes), yet in bounds and aligned */
            if (vm_resolve_watched(b, w, f, pc, op->mode, m, A, op->imm, esz * n,
                                   op->code == BC_ST ? VM_ACCESS_STORE : VM_ACCESS_LOAD, &bp))
                goto host;
            if (vm_resolve_operand(b, w, f, pc, op, op->mode, m, A, op->imm, esz * n,
                                   op->code == BC_ST ? VM_ACCESS_STORE : VM_ACCESS_LOAD, ptrs))
                EXIT_EVENT(VM_EV_FAULT);
            for (unsigned e = 0; e < n; e++) {
                if (op->code == BC_LD) {
                    uint64_t *E = n > 1 ? SLOT(R, lst[e]) : D;
                    if (esz == 4 && !sgn)
                        LANES(m, { uint32_t v; memcpy(&v, ptrs[l] + e * 4, 4); E[l] = v; });
                    else
                        LANES(m, { uint64_t v = 0; memcpy(&v, ptrs[l] + e * esz, esz);
                                   E[l] = sgn ? zmask((uint64_t)sext(v, esz), regw) : v; });
                } else {
                    const uint64_t *E = n > 1 ? SLOT(R, lst[e]) : B;
                    LANES(m, memcpy(ptrs[l] + e * esz, &E[l], esz));
                }
            }
            break;
        }
        case BC_ATOM: {
            uint8_t *ptrs[VM_WARP];
            unsigned esz = op->src_size;
            int shared_only = op->mode == BC_SPACE_SHARED;
            int aop = op->mode2, ty = op->type;
            uintptr_t bp;
            if (vm_resolve_fast(b, op->mode, m, A, op->imm, esz, &bp)) {
                if (esz == 4 && aop == BC_ATOM_ADD && !ptx_type_is_float((ptx_type)ty)) {
                    /* integer add, the histogram idiom: lanes in lane order */
                    if (shared_only)
                        LANES(m, { uint32_t *q = (uint32_t *)(bp + (uintptr_t)A[l]); uint32_t o = *q;
                                   *q = o + (uint32_t)B[l]; D[l] = o; });
                    else
                        LANES(m, D[l] = __atomic_fetch_add((uint32_t *)(bp + (uintptr_t)A[l]), (uint32_t)B[l],
                                                           __ATOMIC_SEQ_CST));
                    break;
                }
                LANES(m, ptrs[l] = (uint8_t *)(bp + (uintptr_t)A[l]));
            } else if (vm_resolve_operand(b, w, f, pc, op, op->mode, m, A, op->imm, esz, VM_ACCESS_ATOMIC, ptrs)) {
                EXIT_EVENT(VM_EV_FAULT);
            }
            LANES(m, {
                uint8_t *p = ptrs[l];
                uint64_t bv = B[l], cv = C ? C[l] : 0, old = 0, nv;
                if (esz == 2) {
                    /* a 16-bit atomic is a compare-and-swap on its aligned 32-bit word */
                    uint32_t *q = (uint32_t *)((uintptr_t)p & ~(uintptr_t)3);
                    unsigned sh = ((uintptr_t)p & 2) ? 16 : 0;
                    uint32_t o = shared_only ? *q : __atomic_load_n(q, __ATOMIC_RELAXED);
                    for (;;) {
                        uint16_t x = (uint16_t)(o >> sh), y = (uint16_t)bv, r;
                        switch (aop) {
                        case BC_ATOM_ADD: r = (uint16_t)float_arith(0, ty, x, y, 0, BC_RND_RN, 0); break;
                        case BC_ATOM_MIN: r = (uint16_t)float_minmax(0, ty, x, y, 0); break;
                        case BC_ATOM_MAX: r = (uint16_t)float_minmax(1, ty, x, y, 0); break;
                        case BC_ATOM_CAS: r = x == y ? (uint16_t)cv : x; break;
                        case BC_ATOM_EXCH: r = y; break;
                        default: r = x; break;
                        }
                        uint32_t nw = (o & ~(0xffffu << sh)) | ((uint32_t)r << sh);
                        if (shared_only) { *q = nw; break; }
                        if (__atomic_compare_exchange_n(q, &o, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
                    }
                    old = (uint16_t)(o >> sh);
                } else if (esz == 4) {
                    uint32_t *q = (uint32_t *)p;
                    uint32_t o = shared_only ? *q : __atomic_load_n(q, __ATOMIC_RELAXED);
                    for (;;) {
                        uint32_t x = o, y = (uint32_t)bv;
                        uint32_t r;
                        switch (aop) {
                        case BC_ATOM_ADD:
                            if (ty == PTX_T_F32) {
                                float s = F32(x) + F32(y);
                                if (op->mode != BC_SPACE_SHARED) s = vm_ftz_f32(s);
                                r = (uint32_t)BF32(s);
                            } else if (ty == PTX_T_F16X2 || ty == PTX_T_BF16X2) {
                                r = (uint32_t)float_arith(0, ty, x, y, 0, BC_RND_RN, 0);
                            } else r = x + y;
                            break;
                        case BC_ATOM_MIN: r = (uint32_t)int_minmax(x, y, 4, vm_type_signed(ty), 0); break;
                        case BC_ATOM_MAX: r = (uint32_t)int_minmax(x, y, 4, vm_type_signed(ty), 1); break;
                        case BC_ATOM_INC: r = x >= y ? 0 : x + 1; break;
                        case BC_ATOM_DEC: r = (x == 0 || x > y) ? y : x - 1; break;
                        case BC_ATOM_CAS: r = x == y ? (uint32_t)cv : x; break;
                        case BC_ATOM_EXCH: r = y; break;
                        case BC_ATOM_AND: r = x & y; break;
                        case BC_ATOM_OR: r = x | y; break;
                        default: r = x ^ y; break;
                        }
                        if (shared_only) { *q = r; break; }
                        if (__atomic_compare_exchange_n(q, &o, r, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
                    }
                    old = o;
                } else {
                    uint64_t *q = (uint64_t *)p;
                    uint64_t o = shared_only ? *q : __atomic_load_n(q, __ATOMIC_RELAXED);
                    for (;;) {
                        uint64_t x = o, y = bv, r;
                        switch (aop) {
                        case BC_ATOM_ADD: r = ty == PTX_T_F64 ? BF64(F64(x) + F64(y)) : x + y; break;
                        case BC_ATOM_MIN: r = int_minmax(x, y, 8, vm_type_signed(ty), 0); break;
                        case BC_ATOM_MAX: r = int_minmax(x, y, 8, vm_type_signed(ty), 1); break;
                        case BC_ATOM_INC: r = x >= y ? 0 : x + 1; break;
                        case BC_ATOM_DEC: r = (x == 0 || x > y) ? y : x - 1; break;
                        case BC_ATOM_CAS: r = x == y ? cv : x; break;
                        case BC_ATOM_EXCH: r = y; break;
                        case BC_ATOM_AND: r = x & y; break;
                        case BC_ATOM_OR: r = x | y; break;
                        default: r = x ^ y; break;
                        }
                        if (shared_only) { *q = r; break; }
                        if (__atomic_compare_exchange_n(q, &o, r, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) break;
                    }
                    old = o;
                }
                nv = old;
                D[l] = nv;
            });
            break;
        }
        case BC_MAPA: {
            /* shared::cluster addresses carry the target rank + 1 above bit 24 */
            if (op->mode == BC_SPACE_SHARED_CLUSTER || op->mode == BC_SPACE_SHARED)
                LANES(m, D[l] = zmask((((uint64_t)(uint32_t)B[l] + 1) << 24) | (A[l] & 0xffffff), w8));
            else
                LANES(m, D[l] = A[l] >= MEM_WINDOW_SHARED && A[l] < MEM_WINDOW_SHARED + MEM_WINDOW_SIZE
                                    ? MEM_WINDOW_SHARED + ((((uint64_t)(uint32_t)B[l] + 1) << 24) | ((A[l] - MEM_WINDOW_SHARED) & 0xffffff))
                                    : A[l]);
            break;
        }
        case BC_CP_ASYNC: {
            uint8_t *dp[VM_WARP], *sp[VM_WARP];
            unsigned n = op->n;
            /* only the src-size bytes are read: a lane with src-size 0 (a
             * masked-off copy, as Triton emits) reads nothing, whatever
             * its source address */
            uint32_t whole = 0, partial = 0;
            LANES(m, {
                unsigned valid = C ? (uint32_t)C[l] : n;
                if (valid >= n) whole |= 1u << l;
                else if (valid) partial |= 1u << l;
            });
            if ((whole && vm_resolve(b, w, f, pc, BC_SPACE_GLOBAL, whole, B, 0, n, VM_ACCESS_LOAD, sp)) ||
                vm_resolve_operand(b, w, f, pc, op, op->mode, m, A, op->imm, n, VM_ACCESS_STORE, dp))
                EXIT_EVENT(VM_EV_FAULT);
            for (uint32_t pm = partial; pm; pm &= pm - 1) {
                int l = __builtin_ctz(pm);
                if (vm_resolve(b, w, f, pc, BC_SPACE_GLOBAL, 1u << l, B, 0, (uint32_t)C[l], VM_ACCESS_LOAD, sp))
                    EXIT_EVENT(VM_EV_FAULT);
            }
            LANES(m, {
                unsigned valid = C ? (uint32_t)C[l] : n;
                if (valid > n) valid = n;
                if (valid) memcpy(dp[l], sp[l], valid);
                memset(dp[l] + valid, 0, n - valid);
            });
            break;
        }
        case BC_TENSOR_COPY:
            if (vm_tensor_copy(b, w, f, pc, op, m))
                EXIT_EVENT(VM_EV_FAULT);
            break;
        case BC_BULK_COPY:
            if (vm_bulk_copy(b, w, f, pc, op, m))
                EXIT_EVENT(VM_EV_FAULT);
            break;
        case BC_MBARRIER: {
            int r = mbarrier_op(b, w, f, pc, op, m);
            if (r < 0)
                EXIT_EVENT(VM_EV_FAULT);
            if (r > 0) {
                /* let the warps that will complete the phase run */
                g->pc = pc + 1;
                LEAVE(VM_EV_YIELD);
            }
            break;
        }
        /* ---- control ---- */
        case BC_BRA:
        branch: {
            uint32_t target = (uint32_t)op->imm;
            if (m == gm) {
                if (target <= pc) {
                    ++w->backedges;
                    if (w->ngroups > 1 && (w->backedges & 15) == 0 && w->backedges < w->yield_at) {
                        /* independent thread scheduling: let the other lane
                         * groups of this warp run (round robin) */
                        g->pc = target;
                        w->rotate = 1;
                        LEAVE(VM_EV_REPICK);
                    }
                    if (w->backedges >= w->yield_at) {
                        w->backedges = 0;
                        g->pc = target;
                        if (vm_launch_expired(L, NULL)) {
                            vm_timeout_fault(b, w, f, pc, (uint32_t)__builtin_ctz(m));
                            LEAVE(VM_EV_FAULT);
                        }
                        if (__atomic_load_n(&L->abort_id, __ATOMIC_RELAXED) < b->linear_id)
                            LEAVE(VM_EV_FAULT);
                        /* to the other warps (of the block or its cluster), and to the
                         * livelock check between rounds */
                        LEAVE(w->ngroups > 1 || b->nwarps > 1 || (b->cluster && b->cluster->n > 1) ||
                                      L->livelock_check
                                  ? VM_EV_YIELD
                                  : VM_EV_REPICK);
                    }
                }
                if (target > stop_pc) {
                    /* jumping past another group: the lower pc runs first */
                    g->pc = target;
                    LEAVE(VM_EV_REPICK);
                }
                pc = target;
                continue;
            }
            /* divergence: the taken lanes form a new group */
            vm_group_split(w, g, m, target);
            pc++;
            EXIT_EVENT(VM_EV_REPICK);
        }
        case BC_BRX: {
            /* lanes may pick different targets: split per target */
            const uint32_t *lst = fn->lists + op->list;
            uint32_t left = m;
            while (left) {
                int l0 = __builtin_ctz(left);
                uint32_t idx = (uint32_t)A[l0];
                if (idx >= op->n) {
                    g->pc = pc;
                    vm_fault_at(b, w, f, pc, (uint32_t)l0, 719, "brx.idx index %u is outside the %u-entry target list", idx, op->n);
                    LEAVE(VM_EV_FAULT);
                }
                uint32_t same = 0;
                LANES(left, if ((uint32_t)A[l] == idx) same |= 1u << l);
                left &= ~same;
                if (same == g->mask) {
                    pc = lst[idx];
                    EXIT_EVENT(VM_EV_REPICK);
                }
                vm_group_split(w, g, same, lst[idx]);
            }
            pc++;
            EXIT_EVENT(VM_EV_REPICK);
        }
        case BC_CALL:
        case BC_CALL_INDIRECT: {
            const bc_function *callee;
            if (op->code == BC_CALL) {
                callee = L->mod->functions[op->imm];
            } else {
                uint64_t addr = A[__builtin_ctz(m)];
                uint32_t same = 0;
                LANES(m, if (A[l] == addr) same |= 1u << l);
                uint64_t idx = addr - MEM_WINDOW_FUNCTION;
                if (addr < MEM_WINDOW_FUNCTION || idx >= (uint64_t)L->mod->nfunctions ||
                    L->mod->functions[idx]->is_extern) {
                    g->pc = pc;
                    vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719,
                                "indirect call through 0x%llx, which is not a function address", (unsigned long long)addr);
                    LEAVE(VM_EV_FAULT);
                }
                callee = L->mod->functions[idx];
                if (same != m) {
                    /* lanes calling other functions take the call again as their own group */
                    vm_group_split(w, g, m & ~same, pc);
                    g = &w->groups[gi];
                }
                m = same;
            }
            if (callee->is_entry) {
                /* a kernel's parameters live in the launch's parameter
                 * block, not in a call frame: its code cannot run as a call */
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719,
                            "call of kernel '%s': a .entry function is launched, not called", callee->name);
                LEAVE(VM_EV_FAULT);
            }
            if (m != g->mask) {
                /* lanes that do not call continue after the call as their own group */
                vm_group_split(w, g, g->mask & ~m, pc + 1);
                g = &w->groups[gi];
            }
            if (f->depth >= L->max_call_depth) {
                /* frames without locals still take the return address's
                 * room on a GPU's stack: unbounded recursion must stop */
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719,
                            "call stack overflow calling '%s': more than %u nested calls (each call keeps its "
                            "return address on the thread's stack)", callee->name, L->max_call_depth);
                LEAVE(VM_EV_FAULT);
            }
            uint32_t base = f->local_base + (uint32_t)fn->local_size;
            if ((uint64_t)base + callee->local_size > L->local_stride) {
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719,
                            "stack overflow calling '%s' (%llu bytes of local memory per thread)", callee->name,
                            (unsigned long long)L->local_stride);
                LEAVE(VM_EV_FAULT);
            }
            const bc_call *call = &fn->calls[op->list];
            if (call->callee < 0 && indirect_call_mismatch(b, w, f, pc, m, call, callee)) {
                /* checked before the frame is made: nothing to free */
                g->pc = pc;
                LEAVE(VM_EV_FAULT);
            }
            vm_frame *nf = vm_frame_new(b, w, callee, base);
            if (!nf) {
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "out of host memory for a call frame");
                LEAVE(VM_EV_FAULT);
            }
            for (int i = 0; i < call->nargs; i++) {
                const bc_copy *cp = &call->args[i];
                /* an indirect call learns the callee's parameter layout now */
                uint32_t to = call->callee >= 0 ? cp->to : (uint32_t)callee->params[i].offset;
                uint32_t size = call->callee >= 0 || cp->size <= callee->params[i].size ? cp->size
                              : (uint32_t)callee->params[i].size;
                LANES(m, { uint8_t *lm = w->local + (size_t)l * L->local_stride;
                           memmove(lm + base + to, lm + f->local_base + cp->from, size); });
            }
            nf->parent = f;
            nf->depth = f->depth + 1;
            nf->ret_pc = pc + 1;
            nf->call_index = op->list;
            nf->lanes = m;
            g->frame = nf;
            g->pc = 0;
            g->mask = m;
            LEAVE(VM_EV_REPICK);
        }
        case BC_CALL_BUILTIN:
            if (vm_builtin(b, w, f, pc, op, m)) {
                g->pc = pc;
                LEAVE(VM_EV_FAULT);
            }
            break;
        case BC_RET:
            if (f->parent) {
                if (m != g->mask) {
                    vm_group_split(w, g, g->mask & ~m, pc + 1);
                    g = &w->groups[gi];
                }
                vm_frame *parent = f->parent;
                const bc_call *call = &parent->fn->calls[f->call_index];
                for (int i = 0; i < call->nrets && i < fn->nrets; i++) {
                    const bc_copy *cp = &call->rets[i];
                    uint32_t from = call->callee >= 0 ? cp->from : (uint32_t)fn->rets[i].offset;
                    uint32_t size = call->callee >= 0 || cp->size <= fn->rets[i].size ? cp->size
                                  : (uint32_t)fn->rets[i].size;
                    LANES(m, { uint8_t *lm = w->local + (size_t)l * L->local_stride;
                               memmove(lm + parent->local_base + cp->to, lm + f->local_base + from, size); });
                }
                g->frame = parent;
                g->pc = f->ret_pc;
                g->mask = m;
                f->lanes &= ~m;
                if (!f->lanes)
                    vm_frame_release(b, f);
                LEAVE(VM_EV_REPICK);
            }
            /* returning from the kernel exits */
            __attribute__((fallthrough));
        case BC_EXIT: {
            w->exited |= m;
            /* lanes that exit inside calls leave their frames: a frame no
             * lane is in any more (nor in a callee of it) is no group's,
             * so it goes back to the block's spare frames now */
            for (vm_frame *fr = f, *up; fr; fr = up) {
                up = fr->parent;
                fr->lanes &= ~m;
                if (up && !fr->lanes)
                    vm_frame_release(b, fr);
            }
            g->mask &= ~m;
            if (!g->mask)
                g->frame = w->root; /* its frame may be a spare one now */
            g->pc = pc + 1;
            LEAVE(VM_EV_REPICK);
        }
        case BC_BAR: {
            if (m != gm) {
                vm_group_split(w, g, g->mask & ~m, pc + 1);
                g = &w->groups[gi];
            }
            uint32_t id = (uint32_t)A[__builtin_ctz(m)];
            if (id >= VM_BARRIERS) {
                g->pc = pc;
                vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "barrier id %u is out of range (0-15)", id);
                LEAVE(VM_EV_FAULT);
            }
            if (w->ngroups == 1 && op->mode == 0 && !(op->flags & BC_F_HAS_COUNT) && !L->hooks &&
                !L->random_schedule) {
                /* a converged warp at a plain bar.sync: it arrives here,
                 * without the scheduler's round trip, and the last warp to
                 * arrive goes straight on */
                if (vm_barrier_arrive_converged(b, w, (int)id))
                    break;
                g->state = VM_G_WAIT_BAR;
                g->bar_id = (uint8_t)id;
                g->pc = pc;
                LEAVE(VM_EV_BLOCKED);
            }
            g->state = VM_G_WAIT_BAR;
            g->bar_id = (uint8_t)id;
            g->pc = pc;
            if (w->ngroups > 1 && L->hooks && L->hooks->divergent_barrier)
                L->hooks->divergent_barrier(L->hooks->ctx, b, w, f, pc, (int)id, g->mask,
                                            w->valid & ~w->exited & ~g->mask);
            LEAVE(VM_EV_REPICK);
        }
        case BC_SHFL_FOLD:
            /* a shuffle and the max/min/add that folds its result in
             * (optimize.c): when the whole warp is here and no other group
             * waits at the second op, both run at once; otherwise the
             * shuffle runs as PTX wrote it (fn->code, which warp_sync_op
             * looks up: an operand of its own here changed the loop's code
             * generation), then the second op */
            if (gm == VM_FULL && pc + 1 != stop_pc) {
                shfl_fold(op, R, P);
                pc++;
                warp_count++;
                thread_count += VM_WARP;
                break;
            }
            __attribute__((fallthrough));
        case BC_BAR_WARP:
        case BC_SHFL:
        case BC_VOTE:
        case BC_MATCH:
        case BC_REDUX: {
            uint32_t waiting;
            int r = warp_sync_op(b, w, gi, f, pc, op, m, &waiting);
            if (r == 0)
                break;
            /* the group waits at pc (1), or went on without the lanes
             * split off to wait (2) */
            g->pc = r == 1 ? pc : pc + 1;
            if (r == 1)
                warp_count--;
            thread_count -= (uint64_t)__builtin_popcount(waiting);
            LEAVE(VM_EV_REPICK);
        }
        case BC_ACTIVEMASK: LANES(m, D[l] = m); break;
        case BC_TEXTURE:
            if (vm_texture_op(b, w, f, pc, op, m)) {
                g->pc = pc;
                LEAVE(VM_EV_FAULT);
            }
            break;
        case BC_MATRIX:
            if (!warp_sync_ready(w, g, VM_FULL)) {
                g->pc = pc;
                warp_count--;
                thread_count -= (uint64_t)__builtin_popcount(m);
                LEAVE(VM_EV_REPICK);
            }
            if (vm_matrix_op(b, w, f, pc, op, m)) {
                g->pc = pc;
                LEAVE(VM_EV_FAULT);
            }
            break;
        case BC_NANOSLEEP:
            g->pc = pc + 1;
            LEAVE(VM_EV_YIELD);
        case BC_TRAP:
            if (op->mode && L->brkpt_resumes)
                break; /* the debugger stopped at it */
            g->pc = pc;
            vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, op->mode ? "brkpt reached" : "trap: the kernel executed a trap instruction");
            LEAVE(VM_EV_FAULT);
        case BC_BAR_CLUSTER:
            /* the whole warp arrives (mode 1), waits (mode 2) or both (0):
             * ids 0xfe arrive, 0xfd wait, 0xff arrive and wait */
            if (m != gm) {
                vm_group_split(w, g, g->mask & ~m, pc + 1);
                g = &w->groups[gi];
            }
            g->state = VM_G_WAIT_BAR;
            g->bar_id = op->mode == 1 ? 0xfe : op->mode == 2 ? 0xfd : 0xff;
            g->pc = pc;
            LEAVE(VM_EV_REPICK);
        default:
            g->pc = pc;
            vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "'%s' is not implemented yet",
                        bc_opcode_names[op->code]);
            LEAVE(VM_EV_FAULT);
        }
        pc++;
    }
leave:
    b->warp_instructions += warp_count;
    b->thread_instructions += thread_count;
    return ev;
}
#undef w8
#undef sg
