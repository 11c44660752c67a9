/* kt_ref.h - reference arithmetic for tests/unit/test_kernels.c.
 *
 * Independent C implementations of what the GPU computes, written for the
 * tests and sharing no code with kemu: rounding a real number into binary16,
 * bfloat16, tf32 or binary32 in every PTX rounding mode (done with exact
 * scaling and integer rounding, not with the host's conversions), decoding
 * f16/bf16, and correctly rounded f32/f64 add/mul/fma/div/sqrt in the
 * directed modes (done by the host FPU under fesetround; every operand
 * passes through a volatile so the compiler cannot fold or move it).
 * Included once, by test_kernels.c only.
 */
#ifndef KT_REF_H
#define KT_REF_H

#include <fenv.h>
#include <math.h>
#include <stdint.h>

/* PTX rounding modes: rn (nearest even), rz, rm (down), rp (up), rna
 * (nearest, ties away from zero). */
typedef enum { KT_RN = 0, KT_RZ, KT_RM, KT_RP, KT_RNA } kt_round;

/* A binary floating-point format: p significand bits (with the hidden
 * one), normal exponents emin..emax, total width and exponent width. */
typedef struct kt_format {
    int p, emin, emax, exp_bits, width;
} kt_format;

static const kt_format KT_F16 = {11, -14, 15, 5, 16};
static const kt_format KT_BF16 = {8, -126, 127, 8, 16};
static const kt_format KT_F32 = {24, -126, 127, 8, 32};
/* tf32 is kept as an f32 bit pattern whose low 13 significand bits are 0. */
static const kt_format KT_TF32 = {11, -126, 127, 8, 32};

/* Rounds the integer-plus-fraction pair (m, frac) of a non-negative
 * magnitude in mode r; `negative` is the sign of the value. */
static uint64_t kt_round_int(uint64_t m, double frac, int negative, kt_round r)
{
    switch (r) {
    case KT_RN: return m + (frac > 0.5 || (frac == 0.5 && (m & 1)));
    case KT_RNA: return m + (frac >= 0.5);
    case KT_RZ: return m;
    case KT_RM: return m + (negative && frac > 0);
    case KT_RP: return m + (!negative && frac > 0);
    }
    return m;
}

/* Rounds x (finite, not NaN, its value exact in a double) into format f in
 * mode r and returns the bit pattern (for KT_TF32, the f32 pattern).
 * Overflow gives infinity or the largest finite value as IEEE directs. */
static uint64_t kt_encode(double x, const kt_format *f, kt_round r)
{
    int neg = signbit(x) != 0;
    int man_bits = f->p - 1;
    uint64_t sign = (uint64_t)neg << (f->width - 1);
    uint64_t exp_all = ((1ull << f->exp_bits) - 1);
    int shift = 0; /* tf32: keep the pattern in the f32 layout */
    if (f == &KT_TF32)
        shift = 13;
    uint64_t inf = sign | (exp_all << (man_bits + shift));
    uint64_t maxf = sign | ((exp_all - 1) << (man_bits + shift)) | ((((1ull << man_bits) - 1)) << shift);
    double a = fabs(x);
    if (isinf(a))
        return inf;
    if (a == 0)
        return sign;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1) */
    int lead = e - 1 < f->emin ? f->emin : e - 1;
    int qexp = lead - man_bits; /* value of the last kept bit */
    double scaled = ldexp(a, -qexp);
    double whole = floor(scaled);
    uint64_t m = kt_round_int((uint64_t)whole, scaled - whole, neg, r);
    double v = ldexp((double)m, qexp);
    if (v >= ldexp(1.0, f->emax + 1)) {
        switch (r) {
        case KT_RN: case KT_RNA: return inf;
        case KT_RZ: return maxf;
        case KT_RM: return neg ? inf : maxf;
        case KT_RP: return neg ? maxf : inf;
        }
    }
    if (m == 0)
        return sign;
    /* encode v = m * 2^qexp */
    frexp(v, &e);
    if (e - 1 < f->emin) /* subnormal: m counts units of 2^(emin-man_bits) */
        return sign | (m << shift);
    uint64_t biased = (uint64_t)(e - 1 - f->emin + 1);
    uint64_t frac_bits = (uint64_t)ldexp(v, -(e - 1 - man_bits)) - (1ull << man_bits);
    return sign | (biased << (man_bits + shift)) | (frac_bits << shift);
}

/* Decodes an f16 or bf16 pattern (format f) into a double; NaN gives NaN. */
static double kt_decode16(uint16_t h, const kt_format *f)
{
    int man_bits = f->p - 1;
    unsigned expo = (h >> man_bits) & ((1u << f->exp_bits) - 1);
    unsigned frac = h & ((1u << man_bits) - 1);
    double s = (h & 0x8000) ? -1.0 : 1.0;
    if (expo == (1u << f->exp_bits) - 1)
        return frac ? NAN : s * INFINITY;
    if (expo == 0)
        return s * ldexp((double)frac, f->emin - man_bits);
    return s * ldexp((double)(frac | (1u << man_bits)), (int)expo - 1 + f->emin - man_bits);
}

static inline double kt_h2d(uint16_t h) { return kt_decode16(h, &KT_F16); }
static inline double kt_b2d(uint16_t h) { return kt_decode16(h, &KT_BF16); }

/* Rounds x into f16 / bf16 in mode r; NaN gives the canonical 0x7fff. */
static uint16_t kt_to_f16(double x, kt_round r)
{
    return isnan(x) ? 0x7fff : (uint16_t)kt_encode(x, &KT_F16, r);
}
static uint16_t kt_to_bf16(double x, kt_round r)
{
    return isnan(x) ? 0x7fff : (uint16_t)kt_encode(x, &KT_BF16, r);
}

static const int kt_fe_modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};

/* Correctly rounded f32 operations in PTX mode r (rn/rz/rm/rp): op is one
 * of '+', '*', 'f' (fma a*b+c), '/', 's' (sqrt a), 'r' (1/a). NaN results
 * are returned as the canonical 0x7fffffff, which is what the GPU writes. */
static float kt_f32_op(char op, float a, float b, float c, kt_round r)
{
    volatile float va = a, vb = b, vc = c, out = 0;
    fesetround(kt_fe_modes[r]);
    switch (op) {
    case '+': out = va + vb; break;
    case '*': out = va * vb; break;
    case 'f': out = fmaf(va, vb, vc); break;
    case '/': out = va / vb; break;
    case 's': out = sqrtf(va); break;
    case 'r': out = 1.0f / va; break;
    }
    fesetround(FE_TONEAREST);
    float res = out;
    if (isnan(res)) {
        uint32_t u = 0x7fffffffu;
        memcpy(&res, &u, 4);
    }
    return res;
}

/* As kt_f32_op for doubles. f64 NaN payloads are not canonicalized: the
 * caller compares f64 NaNs loosely. */
static double kt_f64_op(char op, double a, double b, double c, kt_round r)
{
    volatile double va = a, vb = b, vc = c, out = 0;
    fesetround(kt_fe_modes[r]);
    switch (op) {
    case '+': out = va + vb; break;
    case '*': out = va * vb; break;
    case 'f': out = fma(va, vb, vc); break;
    case '/': out = va / vb; break;
    case 's': out = sqrt(va); break;
    case 'r': out = 1.0 / va; break;
    }
    fesetround(FE_TONEAREST);
    return out;
}

/* Flushes an f32 subnormal to a zero of the same sign (PTX .ftz). */
static float kt_ftz(float x)
{
    if (x != 0 && fabsf(x) < 0x1p-126f)
        return copysignf(0.0f, x);
    return x;
}

/* Canonicalizes an f32 NaN to 0x7fffffff (the GPU's single quiet NaN). */
static float kt_canon(float x)
{
    if (isnan(x)) {
        uint32_t u = 0x7fffffffu;
        memcpy(&x, &u, 4);
    }
    return x;
}

#endif /* KT_REF_H */
