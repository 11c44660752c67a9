/* test_numeric.c - Check suite for src/vm/numeric.{h,c}.
 *
 * Hand-picked corner cases with bit-exact expected values (ties, subnormal
 * halfway points, overflow boundaries, signed zeros, NaN, inf) for every
 * rounding mode, exhaustive f16/bf16 round trips, and deterministic random
 * cross-checks against references computed another way:
 *   - the host FPU in the matching fenv rounding mode (f32/f64 arithmetic);
 *   - exact __float128 values rounded by a brute-force binary search over
 *     all values of the target format (conversions, f16/bf16 arithmetic,
 *     f32 add/mul/fma, integer -> float).
 * The fenv reference changes the rounding mode only around volatile
 * operands; building this file with -frounding-math is still advised.
 */
#include <check.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vm/numeric.h"

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __float128 quad;

static const char *const mode_name[] = {"RN", "RZ", "RM", "RP", "RNA"};
static const int fe_mode[] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD,
                              FE_UPWARD};

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void rng_seed(uint64_t s) { rng_state = s; }

static uint64_t rng64(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rng32(void) { return (uint32_t)(rng64() >> 32); }

static float f32(uint32_t u) { return vm_f32_from_bits(u); }
static double f64(uint64_t u) { return vm_f64_from_bits(u); }
static uint32_t bits32(float x) { return vm_f32_bits(x); }
static uint64_t bits64(double x) { return vm_f64_bits(x); }

/* Failure accounting for big loops: keep the first message only. */
static long fail_count;
static char fail_msg[512];

static void fail_reset(void)
{
    fail_count = 0;
    fail_msg[0] = 0;
}

#define NOTE_FAIL(...)                                                      \
    do {                                                                    \
        if (fail_count++ == 0)                                              \
            snprintf(fail_msg, sizeof fail_msg, __VA_ARGS__);               \
    } while (0)

#define ASSERT_NO_FAIL()                                                    \
    ck_assert_msg(fail_count == 0, "%ld failures, first: %s", fail_count,   \
                  fail_msg)

/* quad helpers */
static quad q_pow2(int k)
{
    u128 u = (u128)(uint64_t)(16383 + k) << 112;
    quad q;
    memcpy(&q, &u, sizeof q);
    return q;
}

/* A binary format for the brute-force reference. */
typedef struct {
    int frac_bits;
    int exp_bits;
} fmt_t;

static const fmt_t FMT_F16 = {10, 5};
static const fmt_t FMT_BF16 = {7, 8};
static const fmt_t FMT_TF32 = {10, 8};
static const fmt_t FMT_F32 = {23, 8};
static const fmt_t FMT_F64 = {52, 11};

static uint64_t fmt_inf(fmt_t f)
{
    return ((1ull << f.exp_bits) - 1) << f.frac_bits;
}

/* Value of the positive pattern p (p == inf pattern gives 2^(emax+1),
 * the value the next binade would start at). */
static quad fmt_value(uint64_t p, fmt_t f)
{
    int bias = (1 << (f.exp_bits - 1)) - 1;
    uint64_t e = p >> f.frac_bits;
    uint64_t m = p & ((1ull << f.frac_bits) - 1);
    if (e == 0)
        return (quad)m * q_pow2(1 - bias - f.frac_bits);
    return (quad)(m | (1ull << f.frac_bits)) *
           q_pow2((int)e - bias - f.frac_bits);
}

/* Reference rounding of an exact (non-NaN) quad to format f in mode r,
 * by binary search over the format's positive patterns. */
static uint64_t ref_round(quad x, fmt_t f, vm_round r)
{
    int sign = x < 0 || (x == 0 && signbit((double)x));
    uint64_t sbit = (uint64_t)sign << (f.frac_bits + f.exp_bits);
    quad ax = sign ? -x : x;
    uint64_t inf = fmt_inf(f), lo, hi, res;
    quad vlo, vhi, mid;
    if (ax == (quad)INFINITY)
        return sbit | inf;
    /* largest finite pattern with value <= ax */
    lo = 0;
    hi = inf - 1;
    if (fmt_value(hi, f) <= ax) {
        lo = hi;
    } else {
        while (lo < hi) {
            uint64_t m = lo + (hi - lo + 1) / 2;
            if (fmt_value(m, f) <= ax)
                lo = m;
            else
                hi = m - 1;
        }
    }
    vlo = fmt_value(lo, f);
    if (vlo == ax)
        return sbit | lo;
    hi = lo + 1;
    vhi = fmt_value(hi, f);
    mid = (vlo + vhi) / 2;
    switch (r) {
    case VM_RN:
        res = ax < mid ? lo : ax > mid ? hi : ((lo & 1) ? hi : lo);
        break;
    case VM_RNA: res = ax < mid ? lo : hi; break;
    case VM_RZ: res = lo; break;
    case VM_RP: res = sign ? lo : hi; break;
    default: res = sign ? hi : lo; break;
    }
    return sbit | res;
}

/* Host FPU reference in fenv mode r (not RNA). */
enum { OP_ADD, OP_SUB, OP_MUL, OP_FMA, OP_DIV, OP_SQRT, OP_COUNT };
static const char *const op_name[] = {"add", "sub", "mul", "fma", "div",
                                      "sqrt"};

static float hw_f32(int op, float a, float b, float c, vm_round r)
{
    volatile float va = a, vb = b, vc = c, res = 0;
    int saved = fegetround();
    fesetround(fe_mode[r]);
    switch (op) {
    case OP_ADD: res = va + vb; break;
    case OP_SUB: res = va - vb; break;
    case OP_MUL: res = va * vb; break;
    case OP_FMA: res = fmaf(va, vb, vc); break;
    case OP_DIV: res = va / vb; break;
    default: res = sqrtf(va); break;
    }
    fesetround(saved);
    return res;
}

static double hw_f64(int op, double a, double b, double c, vm_round r)
{
    volatile double va = a, vb = b, vc = c, res = 0;
    int saved = fegetround();
    fesetround(fe_mode[r]);
    switch (op) {
    case OP_ADD: res = va + vb; break;
    case OP_SUB: res = va - vb; break;
    case OP_MUL: res = va * vb; break;
    case OP_FMA: res = fma(va, vb, vc); break;
    case OP_DIV: res = va / vb; break;
    default: res = sqrt(va); break;
    }
    fesetround(saved);
    return res;
}

static float vm_f32_op(int op, float a, float b, float c, vm_round r)
{
    switch (op) {
    case OP_ADD: return vm_add_f32(a, b, r);
    case OP_SUB: return vm_sub_f32(a, b, r);
    case OP_MUL: return vm_mul_f32(a, b, r);
    case OP_FMA: return vm_fma_f32(a, b, c, r);
    case OP_DIV: return vm_div_f32(a, b, r);
    default: return vm_sqrt_f32(a, r);
    }
}

static double vm_f64_op(int op, double a, double b, double c, vm_round r)
{
    switch (op) {
    case OP_ADD: return vm_add_f64(a, b, r);
    case OP_SUB: return vm_sub_f64(a, b, r);
    case OP_MUL: return vm_mul_f64(a, b, r);
    case OP_FMA: return vm_fma_f64(a, b, c, r);
    case OP_DIV: return vm_div_f64(a, b, r);
    default: return vm_sqrt_f64(a, r);
    }
}

/* Random f32 with a mix of shapes: any bits, moderate exponents,
 * subnormals, short significands (ties, exact results), specials. */
static uint32_t gen_f32(void)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
        0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x00000001u,
        0x80000001u, 0x007fffffu, 0x3f800000u, 0xbf800000u, 0x7fa00001u};
    uint32_t k = rng32() % 16, u = rng32();
    switch (k) {
    case 0: return u;
    case 1: case 2:
        return (u & 0x807fffffu) | ((100u + rng32() % 56u) << 23);
    case 3: return u & 0x807fffffu; /* subnormal */
    case 4: return special[rng32() % (sizeof special / sizeof special[0])];
    case 5: case 6:
        return (u & 0x80ff0000u); /* 7 fraction bits */
    case 7:
        return (u & 0x807fe000u) | ((110u + rng32() % 36u) << 23);
    default:
        return (u & 0x807fffffu) | ((64u + rng32() % 128u) << 23);
    }
}

static uint64_t gen_f64(void)
{
    static const uint64_t special[] = {
        0, 0x8000000000000000ull, 0x7ff0000000000000ull,
        0xfff0000000000000ull, 0x7ff8000000000000ull, 0x7fefffffffffffffull,
        0xffefffffffffffffull, 0x0010000000000000ull, 0x0000000000000001ull,
        0x8000000000000001ull, 0x000fffffffffffffull, 0x3ff0000000000000ull,
        0x7ff0000000000123ull};
    uint64_t k = rng64() % 16, u = rng64();
    switch (k) {
    case 0: return u;
    case 1: return u & 0x800fffffffffffffull; /* subnormal */
    case 2: return special[rng64() % (sizeof special / sizeof special[0])];
    case 3: case 4: /* short significand */
        return (u & 0x800fffff00000000ull) |
               ((uint64_t)(1000 + rng64() % 48) << 52);
    case 5: /* tiny: products and quotients land in the subnormal range */
        return (u & 0x800fffffffffffffull) | ((uint64_t)(1 + rng64() % 520) << 52);
    case 6: /* huge */
        return (u & 0x800fffffffffffffull) |
               ((uint64_t)(1540 + rng64() % 506) << 52);
    default:
        return (u & 0x800fffffffffffffull) |
               ((uint64_t)(960 + rng64() % 128) << 52);
    }
}

/* ------------------------------------------------------------------ */
/* Narrowing conversions: hand-picked corner cases                      */
/* ------------------------------------------------------------------ */

typedef struct {
    uint32_t in;
    uint16_t out[5]; /* RN RZ RM RP RNA */
} case32_16;

START_TEST(test_f32_to_f16_corners)
{
    static const case32_16 cases[] = {
        /* 1.0 */
        {0x3f800000u, {0x3c00, 0x3c00, 0x3c00, 0x3c00, 0x3c00}},
        /* 1 + 2^-11: tie between 0x3c00 (even) and 0x3c01 */
        {0x3f801000u, {0x3c00, 0x3c00, 0x3c00, 0x3c01, 0x3c01}},
        /* -(1 + 2^-11) */
        {0xbf801000u, {0xbc00, 0xbc00, 0xbc01, 0xbc00, 0xbc01}},
        /* 1 + 3*2^-11: tie between 0x3c01 (odd) and 0x3c02 */
        {0x3f803000u, {0x3c02, 0x3c01, 0x3c01, 0x3c02, 0x3c02}},
        /* just above the 1 + 2^-11 tie */
        {0x3f801001u, {0x3c01, 0x3c00, 0x3c00, 0x3c01, 0x3c01}},
        /* just below it */
        {0x3f800fffu, {0x3c00, 0x3c00, 0x3c00, 0x3c01, 0x3c00}},
        /* 65504 = max f16 */
        {0x477fe000u, {0x7bff, 0x7bff, 0x7bff, 0x7bff, 0x7bff}},
        /* 65519: below the overflow midpoint 65520 */
        {0x477fef00u, {0x7bff, 0x7bff, 0x7bff, 0x7c00, 0x7bff}},
        /* 65520: the midpoint, RN/RNA overflow to inf */
        {0x477ff000u, {0x7c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00}},
        {0xc77ff000u, {0xfc00, 0xfbff, 0xfc00, 0xfbff, 0xfc00}},
        /* 1e10 */
        {0x501502f9u, {0x7c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00}},
        {0xd01502f9u, {0xfc00, 0xfbff, 0xfc00, 0xfbff, 0xfc00}},
        /* FLT_MAX */
        {0x7f7fffffu, {0x7c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00}},
        /* infinities stay infinite in every mode */
        {0x7f800000u, {0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00}},
        {0xff800000u, {0xfc00, 0xfc00, 0xfc00, 0xfc00, 0xfc00}},
        /* NaNs (quiet, negative, signalling) -> canonical */
        {0x7fc00000u, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
        {0xffc00001u, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
        {0x7f800001u, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
        /* signed zeros */
        {0x00000000u, {0x0000, 0x0000, 0x0000, 0x0000, 0x0000}},
        {0x80000000u, {0x8000, 0x8000, 0x8000, 0x8000, 0x8000}},
        /* 2^-14 = smallest normal f16 */
        {0x38800000u, {0x0400, 0x0400, 0x0400, 0x0400, 0x0400}},
        /* 2^-14 - 2^-25: tie between 0x03ff (odd) and 0x0400 */
        {0x387fe000u, {0x0400, 0x03ff, 0x03ff, 0x0400, 0x0400}},
        /* 2^-24 = smallest subnormal f16 */
        {0x33800000u, {0x0001, 0x0001, 0x0001, 0x0001, 0x0001}},
        /* 2^-25: halfway between 0 and 2^-24 */
        {0x33000000u, {0x0000, 0x0000, 0x0000, 0x0001, 0x0001}},
        {0xb3000000u, {0x8000, 0x8000, 0x8001, 0x8000, 0x8001}},
        /* just above 2^-25 */
        {0x33000001u, {0x0001, 0x0000, 0x0000, 0x0001, 0x0001}},
        /* 3*2^-25: tie between 0x0001 and 0x0002 */
        {0x33c00000u, {0x0002, 0x0001, 0x0001, 0x0002, 0x0002}},
        /* 1e-10: far below the subnormal range */
        {0x2edbe6ffu, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {0xaedbe6ffu, {0x8000, 0x8000, 0x8001, 0x8000, 0x8000}},
        /* smallest f32 subnormal */
        {0x00000001u, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        /* 1/3 */
        {0x3eaaaaabu, {0x3555, 0x3555, 0x3555, 0x3556, 0x3555}},
    };
    size_t i;
    int r;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (r = 0; r < 5; r++) {
            uint16_t got = vm_f32_to_f16(f32(cases[i].in), (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f32 %08x -> f16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
            /* the f64 path must agree (f32 -> f64 is exact) */
            got = vm_f64_to_f16((double)f32(cases[i].in), (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f64(f32 %08x) -> f16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
        }
}
END_TEST

START_TEST(test_f32_to_bf16_corners)
{
    static const case32_16 cases[] = {
        {0x3f800000u, {0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f80}},
        /* 1 + 2^-8: tie between 0x3f80 (even) and 0x3f81 */
        {0x3f808000u, {0x3f80, 0x3f80, 0x3f80, 0x3f81, 0x3f81}},
        {0xbf808000u, {0xbf80, 0xbf80, 0xbf81, 0xbf80, 0xbf81}},
        /* 1 + 3*2^-8: tie between 0x3f81 (odd) and 0x3f82 */
        {0x3f818000u, {0x3f82, 0x3f81, 0x3f81, 0x3f82, 0x3f82}},
        {0x3f808001u, {0x3f81, 0x3f80, 0x3f80, 0x3f81, 0x3f81}},
        /* FLT_MAX is above the bf16 overflow midpoint 0x7f7f8000 */
        {0x7f7fffffu, {0x7f80, 0x7f7f, 0x7f7f, 0x7f80, 0x7f80}},
        {0xff7fffffu, {0xff80, 0xff7f, 0xff80, 0xff7f, 0xff80}},
        /* the midpoint itself: tie, 0x7f7f is odd -> inf */
        {0x7f7f8000u, {0x7f80, 0x7f7f, 0x7f7f, 0x7f80, 0x7f80}},
        {0x7f7f7fffu, {0x7f7f, 0x7f7f, 0x7f7f, 0x7f80, 0x7f7f}},
        {0x7f800000u, {0x7f80, 0x7f80, 0x7f80, 0x7f80, 0x7f80}},
        {0xff800000u, {0xff80, 0xff80, 0xff80, 0xff80, 0xff80}},
        {0x7fc00000u, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
        {0xff800001u, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
        {0x00000000u, {0x0000, 0x0000, 0x0000, 0x0000, 0x0000}},
        {0x80000000u, {0x8000, 0x8000, 0x8000, 0x8000, 0x8000}},
        /* subnormal tie between 0x0000 and 0x0001 */
        {0x00008000u, {0x0000, 0x0000, 0x0000, 0x0001, 0x0001}},
        {0x80008000u, {0x8000, 0x8000, 0x8001, 0x8000, 0x8001}},
        /* subnormal tie between 0x0001 and 0x0002 */
        {0x00018000u, {0x0002, 0x0001, 0x0001, 0x0002, 0x0002}},
        {0x00000001u, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {0x80000001u, {0x8000, 0x8000, 0x8001, 0x8000, 0x8000}},
        /* largest subnormal rounds up to the smallest normal */
        {0x007fffffu, {0x0080, 0x007f, 0x007f, 0x0080, 0x0080}},
    };
    size_t i;
    int r;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (r = 0; r < 5; r++) {
            uint16_t got = vm_f32_to_bf16(f32(cases[i].in), (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f32 %08x -> bf16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
            got = vm_f64_to_bf16((double)f32(cases[i].in), (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f64(f32 %08x) -> bf16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
        }
}
END_TEST

typedef struct {
    double in;
    uint16_t out[5];
} case64_16;

START_TEST(test_f64_to_f16_corners)
{
    /* values that double-round wrongly through f32, and f64-only ranges */
    const case64_16 cases[] = {
        /* 1 + 2^-11 + 2^-40: via f32 it would become the tie 1 + 2^-11 */
        {1.0 + 0x1p-11 + 0x1p-40, {0x3c01, 0x3c00, 0x3c00, 0x3c01, 0x3c01}},
        {-(1.0 + 0x1p-11 + 0x1p-40), {0xbc01, 0xbc00, 0xbc01, 0xbc00, 0xbc01}},
        /* exact tie in f64 */
        {1.0 + 0x1p-11, {0x3c00, 0x3c00, 0x3c00, 0x3c01, 0x3c01}},
        /* 1 + 2^-11 - 2^-50: just below the tie */
        {1.0 + 0x1p-11 - 0x1p-50, {0x3c00, 0x3c00, 0x3c00, 0x3c01, 0x3c00}},
        /* overflow boundary */
        {65520.0 - 0x1p-30, {0x7bff, 0x7bff, 0x7bff, 0x7c00, 0x7bff}},
        {65520.0, {0x7c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00}},
        {1e300, {0x7c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00}},
        {-1e300, {0xfc00, 0xfbff, 0xfc00, 0xfbff, 0xfc00}},
        /* subnormal halfway points */
        {0x1p-25, {0x0000, 0x0000, 0x0000, 0x0001, 0x0001}},
        {0x1p-25 + 0x1p-60, {0x0001, 0x0000, 0x0000, 0x0001, 0x0001}},
        {0x1p-25 - 0x1p-60, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {-0x1p-25, {0x8000, 0x8000, 0x8001, 0x8000, 0x8001}},
        {1e-300, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {-1e-300, {0x8000, 0x8000, 0x8001, 0x8000, 0x8000}},
        {0x0.0000000000001p-1022, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {-0.0, {0x8000, 0x8000, 0x8000, 0x8000, 0x8000}},
        {(double)INFINITY, {0x7c00, 0x7c00, 0x7c00, 0x7c00, 0x7c00}},
        {(double)NAN, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
    };
    size_t i;
    int r;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (r = 0; r < 5; r++) {
            uint16_t got = vm_f64_to_f16(cases[i].in, (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f64 %a -> f16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
        }
}
END_TEST

START_TEST(test_f64_to_bf16_corners)
{
    const case64_16 cases[] = {
        /* 1 + 2^-8 + 2^-40: via f32 it would become the tie 1 + 2^-8 */
        {1.0 + 0x1p-8 + 0x1p-40, {0x3f81, 0x3f80, 0x3f80, 0x3f81, 0x3f81}},
        {1.0 + 0x1p-8, {0x3f80, 0x3f80, 0x3f80, 0x3f81, 0x3f81}},
        {1e39, {0x7f80, 0x7f7f, 0x7f7f, 0x7f80, 0x7f80}},
        {-1e39, {0xff80, 0xff7f, 0xff80, 0xff7f, 0xff80}},
        /* 2^-134: halfway between 0 and the smallest bf16 subnormal */
        {0x1p-134, {0x0000, 0x0000, 0x0000, 0x0001, 0x0001}},
        {0x1p-134 + 0x1p-170, {0x0001, 0x0000, 0x0000, 0x0001, 0x0001}},
        {1e-300, {0x0000, 0x0000, 0x0000, 0x0001, 0x0000}},
        {-1e-300, {0x8000, 0x8000, 0x8001, 0x8000, 0x8000}},
        {(double)NAN, {0x7fff, 0x7fff, 0x7fff, 0x7fff, 0x7fff}},
    };
    size_t i;
    int r;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (r = 0; r < 5; r++) {
            uint16_t got = vm_f64_to_bf16(cases[i].in, (vm_round)r);
            ck_assert_msg(got == cases[i].out[r],
                          "f64 %a -> bf16 %s: got %04x want %04x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
        }
}
END_TEST

START_TEST(test_narrow_flags)
{
    /* .satfinite */
    ck_assert_uint_eq(vm_f32_to_f16_flags(1e10f, VM_RN, VM_CVT_SATFINITE), 0x7bff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(-1e10f, VM_RN, VM_CVT_SATFINITE), 0xfbff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(INFINITY, VM_RN, VM_CVT_SATFINITE), 0x7bff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(-INFINITY, VM_RZ, VM_CVT_SATFINITE), 0xfbff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(NAN, VM_RN, VM_CVT_SATFINITE), 0x7fff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(65519.0f, VM_RN, VM_CVT_SATFINITE), 0x7bff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(1.5f, VM_RN, VM_CVT_SATFINITE), 0x3e00);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(f32(0x7f7fffffu), VM_RN, VM_CVT_SATFINITE), 0x7f7f);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(-INFINITY, VM_RN, VM_CVT_SATFINITE), 0xff7f);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(NAN, VM_RZ, VM_CVT_SATFINITE), 0x7fff);
    ck_assert_uint_eq(vm_f64_to_f16_flags(1e300, VM_RN, VM_CVT_SATFINITE), 0x7bff);
    ck_assert_uint_eq(vm_f64_to_bf16_flags(-1e300, VM_RN, VM_CVT_SATFINITE), 0xff7f);
    /* .relu */
    ck_assert_uint_eq(vm_f32_to_f16_flags(-1.0f, VM_RN, VM_CVT_RELU), 0x0000);
    ck_assert_uint_eq(vm_f32_to_f16_flags(-0.0f, VM_RN, VM_CVT_RELU), 0x0000);
    ck_assert_uint_eq(vm_f32_to_f16_flags(-1e-10f, VM_RM, VM_CVT_RELU), 0x0000);
    ck_assert_uint_eq(vm_f32_to_f16_flags(2.0f, VM_RN, VM_CVT_RELU), 0x4000);
    ck_assert_uint_eq(vm_f32_to_f16_flags(f32(0xffc01234u), VM_RN, VM_CVT_RELU), 0x7fff);
    ck_assert_uint_eq(vm_f32_to_f16_flags(-INFINITY, VM_RN, VM_CVT_RELU | VM_CVT_SATFINITE), 0x0000);
    ck_assert_uint_eq(vm_f32_to_f16_flags(INFINITY, VM_RN, VM_CVT_RELU | VM_CVT_SATFINITE), 0x7bff);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(-3.0f, VM_RZ, VM_CVT_RELU), 0x0000);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(3.0f, VM_RZ, VM_CVT_RELU), 0x4040);
    ck_assert_uint_eq(vm_f32_to_bf16_flags(-NAN, VM_RZ, VM_CVT_RELU), 0x7fff);
    /* without flags, overflow follows the rounding mode */
    ck_assert_uint_eq(vm_f32_to_f16_flags(1e10f, VM_RN, 0), 0x7c00);
    ck_assert_uint_eq(vm_f32_to_f16_flags(1e10f, VM_RZ, 0), 0x7bff);
    /* f16 <-> bf16 */
    ck_assert_uint_eq(vm_f16_to_bf16(0x3c01, VM_RN), 0x3f80); /* 1+2^-10 */
    ck_assert_uint_eq(vm_f16_to_bf16(0x3c01, VM_RP), 0x3f81);
    ck_assert_uint_eq(vm_f16_to_bf16(0x7bff, VM_RN), 0x4780); /* 65504 -> 65536 */
    ck_assert_uint_eq(vm_f16_to_bf16(0x7e00, VM_RN), 0x7fff);
    ck_assert_uint_eq(vm_bf16_to_f16(0x4780, VM_RN), 0x7c00); /* 65536 */
    ck_assert_uint_eq(vm_bf16_to_f16(0x4780, VM_RZ), 0x7bff);
    ck_assert_uint_eq(vm_bf16_to_f16(0x3f81, VM_RN), 0x3c08);
}
END_TEST

START_TEST(test_tf32_corners)
{
    static const struct {
        uint32_t in;
        uint32_t out[5]; /* RN RZ RM RP RNA */
    } cases[] = {
        {0x3f800000u, {0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f800000u}},
        /* 1 + 2^-11: tie */
        {0x3f801000u, {0x3f800000u, 0x3f800000u, 0x3f800000u, 0x3f802000u, 0x3f802000u}},
        {0xbf801000u, {0xbf800000u, 0xbf800000u, 0xbf802000u, 0xbf800000u, 0xbf802000u}},
        /* 1 + 3*2^-11: tie with odd lower neighbour */
        {0x3f803000u, {0x3f804000u, 0x3f802000u, 0x3f802000u, 0x3f804000u, 0x3f804000u}},
        {0x3f801001u, {0x3f802000u, 0x3f800000u, 0x3f800000u, 0x3f802000u, 0x3f802000u}},
        /* FLT_MAX */
        {0x7f7fffffu, {0x7f800000u, 0x7f7fe000u, 0x7f7fe000u, 0x7f800000u, 0x7f800000u}},
        {0xff7fffffu, {0xff800000u, 0xff7fe000u, 0xff800000u, 0xff7fe000u, 0xff800000u}},
        /* just below the overflow midpoint 0x7f7ff000 */
        {0x7f7fefffu, {0x7f7fe000u, 0x7f7fe000u, 0x7f7fe000u, 0x7f800000u, 0x7f7fe000u}},
        {0x7f800000u, {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u}},
        /* subnormal tie */
        {0x00001000u, {0x00000000u, 0x00000000u, 0x00000000u, 0x00002000u, 0x00002000u}},
        {0x00000001u, {0x00000000u, 0x00000000u, 0x00000000u, 0x00002000u, 0x00000000u}},
        {0x80000000u, {0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u}},
        {0x7fc00000u, {0x7fffe000u, 0x7fffe000u, 0x7fffe000u, 0x7fffe000u, 0x7fffe000u}},
        {0xff800001u, {0x7fffe000u, 0x7fffe000u, 0x7fffe000u, 0x7fffe000u, 0x7fffe000u}},
    };
    size_t i;
    int r;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (r = 0; r < 5; r++) {
            uint32_t got = vm_f32_to_tf32(f32(cases[i].in), (vm_round)r, 0, 0);
            ck_assert_msg(got == cases[i].out[r],
                          "f32 %08x -> tf32 %s: got %08x want %08x",
                          cases[i].in, mode_name[r], got, cases[i].out[r]);
        }
    /* .satfinite and .relu */
    ck_assert_uint_eq(vm_f32_to_tf32(f32(0x7f7fffffu), VM_RN, 1, 0), 0x7f7fe000u);
    ck_assert_uint_eq(vm_f32_to_tf32(f32(0xff7fffffu), VM_RNA, 1, 0), 0xff7fe000u);
    ck_assert_uint_eq(vm_f32_to_tf32(INFINITY, VM_RZ, 1, 0), 0x7f7fe000u);
    ck_assert_uint_eq(vm_f32_to_tf32(NAN, VM_RNA, 1, 0), 0x7fffe000u);
    ck_assert_uint_eq(vm_f32_to_tf32(-1.5f, VM_RN, 0, 1), 0u);
    ck_assert_uint_eq(vm_f32_to_tf32(-0.0f, VM_RN, 0, 1), 0u);
    ck_assert_uint_eq(vm_f32_to_tf32(-INFINITY, VM_RN, 1, 1), 0u);
    ck_assert_uint_eq(vm_f32_to_tf32(2.5f, VM_RZ, 0, 1), 0x40200000u);
    ck_assert_uint_eq(vm_f32_to_tf32(-NAN, VM_RN, 0, 1), 0x7fffe000u);
}
END_TEST

/* Random conversions against the brute-force reference. */
static uint32_t gen_near_f16_f32(void)
{
    /* an f16 value (as f32) nudged by 0, +-1 ulp of f32, or to a tie */
    static const int32_t nudge[] = {0, 1, -1, 0x1000, 0x0fff, 0x1001, -0x1000};
    uint32_t h = rng32() & 0xffffu;
    uint32_t u;
    if ((h & 0x7c00u) == 0x7c00u)
        h &= 0xbfffu;
    u = bits32(vm_f16_to_f32((uint16_t)h));
    if ((u & 0x7fffffffu) == 0)
        return u | (rng32() & 0xffffu);
    return u + (uint32_t)nudge[rng32() % 7];
}

START_TEST(test_narrow_random_vs_reference)
{
    long i;
    int r;
    rng_seed(1);
    fail_reset();
    for (i = 0; i < 100000; i++) {
        uint32_t u = (i & 1) ? gen_near_f16_f32() : gen_f32();
        uint64_t d = gen_f64();
        float x = f32(u);
        double y = f64(d);
        if ((i & 3) == 2) { /* near bf16 boundaries too */
            u = (rng32() & 0xffff0000u) + (uint32_t)(rng32() % 3) * 0x7fffu +
                (rng32() & 1);
            x = f32(u);
        }
        for (r = 0; r < 5; r++) {
            uint64_t want;
            uint32_t got32;
            uint16_t got;
            if (x == x) {
                want = ref_round((quad)x, FMT_F16, (vm_round)r);
                got = vm_f32_to_f16(x, (vm_round)r);
                if (got != want)
                    NOTE_FAIL("f32 %08x -> f16 %s: got %04x want %04x", u,
                              mode_name[r], got, (unsigned)want);
                want = ref_round((quad)x, FMT_BF16, (vm_round)r);
                got = vm_f32_to_bf16(x, (vm_round)r);
                if (got != want)
                    NOTE_FAIL("f32 %08x -> bf16 %s: got %04x want %04x", u,
                              mode_name[r], got, (unsigned)want);
                want = ref_round((quad)x, FMT_TF32, (vm_round)r);
                want = ((want >> 18) << 31) | ((want & 0x3ffffu) << 13);
                got32 = vm_f32_to_tf32(x, (vm_round)r, 0, 0);
                if (got32 != want)
                    NOTE_FAIL("f32 %08x -> tf32 %s: got %08x want %08x", u,
                              mode_name[r], got32, (unsigned)want);
            }
            if (y == y) {
                want = ref_round((quad)y, FMT_F16, (vm_round)r);
                got = vm_f64_to_f16(y, (vm_round)r);
                if (got != want)
                    NOTE_FAIL("f64 %016llx -> f16 %s: got %04x want %04x",
                              (unsigned long long)d, mode_name[r], got,
                              (unsigned)want);
                want = ref_round((quad)y, FMT_BF16, (vm_round)r);
                got = vm_f64_to_bf16(y, (vm_round)r);
                if (got != want)
                    NOTE_FAIL("f64 %016llx -> bf16 %s: got %04x want %04x",
                              (unsigned long long)d, mode_name[r], got,
                              (unsigned)want);
                want = ref_round((quad)y, FMT_F32, (vm_round)r);
                got32 = bits32(vm_f64_to_f32(y, (vm_round)r));
                if (got32 != want)
                    NOTE_FAIL("f64 %016llx -> f32 %s: got %08x want %08x",
                              (unsigned long long)d, mode_name[r], got32,
                              (unsigned)want);
            }
        }
    }
    ASSERT_NO_FAIL();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Exhaustive widening round trips                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_f16_round_trip_exhaustive)
{
    uint32_t h;
    int r;
    fail_reset();
    for (h = 0; h < 0x10000u; h++) {
        float f = vm_f16_to_f32((uint16_t)h);
        double d = vm_f16_to_f64((uint16_t)h);
        if (vm_f16_is_nan((uint16_t)h)) {
            if (bits32(f) != VM_F32_CANONICAL_NAN)
                NOTE_FAIL("f16 NaN %04x -> f32 %08x", h, bits32(f));
            if (d == d)
                NOTE_FAIL("f16 NaN %04x -> f64 not NaN", h);
            for (r = 0; r < 5; r++)
                if (vm_f32_to_f16(f, (vm_round)r) != 0x7fff ||
                    vm_f64_to_f16(d, (vm_round)r) != 0x7fff)
                    NOTE_FAIL("f16 NaN %04x did not come back canonical", h);
            continue;
        }
        {
            /* value check against an independent decode */
            quad v = fmt_value(h & 0x7fffu, FMT_F16);
            if ((h & 0x7fffu) == 0x7c00u)
                v = (quad)INFINITY;
            if (h & 0x8000u)
                v = -v;
            if ((quad)f != v || (h & 0x8000u) != ((bits32(f) >> 16) & 0x8000u))
                NOTE_FAIL("f16 %04x -> f32 %08x has the wrong value", h,
                          bits32(f));
            if ((double)f != d || !signbit(d) != !signbit(f))
                NOTE_FAIL("f16 %04x -> f64 differs from f32", h);
        }
        for (r = 0; r < 5; r++) {
            uint16_t back = vm_f32_to_f16(f, (vm_round)r);
            if (back != h)
                NOTE_FAIL("f16 %04x -> f32 -> f16 %s gave %04x", h,
                          mode_name[r], back);
            back = vm_f64_to_f16(d, (vm_round)r);
            if (back != h)
                NOTE_FAIL("f16 %04x -> f64 -> f16 %s gave %04x", h,
                          mode_name[r], back);
        }
    }
    ASSERT_NO_FAIL();
}
END_TEST

START_TEST(test_bf16_round_trip_exhaustive)
{
    uint32_t h;
    int r;
    fail_reset();
    for (h = 0; h < 0x10000u; h++) {
        float f = vm_bf16_to_f32((uint16_t)h);
        double d = vm_bf16_to_f64((uint16_t)h);
        if (vm_bf16_is_nan((uint16_t)h)) {
            if (bits32(f) != VM_F32_CANONICAL_NAN || d == d)
                NOTE_FAIL("bf16 NaN %04x -> f32 %08x", h, bits32(f));
            if (vm_f32_to_bf16(f, VM_RN) != 0x7fff)
                NOTE_FAIL("bf16 NaN %04x not canonical on the way back", h);
            continue;
        }
        if (bits32(f) != h << 16)
            NOTE_FAIL("bf16 %04x -> f32 %08x", h, bits32(f));
        if ((double)f != d || !signbit(d) != !signbit(f))
            NOTE_FAIL("bf16 %04x -> f64 differs from f32", h);
        for (r = 0; r < 5; r++)
            if (vm_f32_to_bf16(f, (vm_round)r) != h ||
                vm_f64_to_bf16(d, (vm_round)r) != h)
                NOTE_FAIL("bf16 %04x did not round-trip in %s", h,
                          mode_name[r]);
    }
    ASSERT_NO_FAIL();
    /* NaN payload into f64 (f64 keeps payloads) */
    ck_assert_uint_eq(bits64(vm_f16_to_f64(0xfd01)), 0xfffc040000000000ull);
    ck_assert_uint_eq(bits64(vm_bf16_to_f64(0x7f81)), 0x7ff8200000000000ull);
}
END_TEST

/* ------------------------------------------------------------------ */
/* f32 arithmetic                                                       */
/* ------------------------------------------------------------------ */

START_TEST(test_f32_arith_corners)
{
    /* directed rounding of a sticky bit far below the last place */
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, 0x1p-30f, VM_RP)), 0x3f800001u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, 0x1p-30f, VM_RN)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, 0x1p-30f, VM_RZ)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, -0x1p-30f, VM_RZ)), 0x3f7fffffu);
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, -0x1p-30f, VM_RM)), 0x3f7fffffu);
    ck_assert_uint_eq(bits32(vm_add_f32(1.0f, -0x1p-30f, VM_RP)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_add_f32(-1.0f, -0x1p-149f, VM_RM)), 0xbf800001u);
    ck_assert_uint_eq(bits32(vm_sub_f32(1e30f, -1e-30f, VM_RP)),
                      bits32(1e30f) + 1);
    /* exact cancellation: +0, except -0 in RM */
    ck_assert_uint_eq(bits32(vm_add_f32(1.5f, -1.5f, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.5f, -1.5f, VM_RZ)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.5f, -1.5f, VM_RP)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(1.5f, -1.5f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_sub_f32(2.0f, 2.0f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(0.0f, -0.0f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(0.0f, -0.0f, VM_RP)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_add_f32(-0.0f, -0.0f, VM_RP)), 0x80000000u);
    /* overflow */
    ck_assert_uint_eq(bits32(vm_add_f32(FLT_MAX, FLT_MAX, VM_RN)), 0x7f800000u);
    ck_assert_uint_eq(bits32(vm_add_f32(FLT_MAX, FLT_MAX, VM_RZ)), 0x7f7fffffu);
    ck_assert_uint_eq(bits32(vm_add_f32(FLT_MAX, FLT_MAX, VM_RM)), 0x7f7fffffu);
    ck_assert_uint_eq(bits32(vm_add_f32(-FLT_MAX, -FLT_MAX, VM_RM)), 0xff800000u);
    ck_assert_uint_eq(bits32(vm_add_f32(-FLT_MAX, -FLT_MAX, VM_RP)), 0xff7fffffu);
    ck_assert_uint_eq(bits32(vm_mul_f32(FLT_MAX, 2.0f, VM_RZ)), 0x7f7fffffu);
    /* underflow into and below the subnormal range */
    ck_assert_uint_eq(bits32(vm_mul_f32(FLT_MIN, 0.5f, VM_RZ)), 0x00400000u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 0.5f, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 0.5f, VM_RP)), 0x00000001u);
    ck_assert_uint_eq(bits32(vm_mul_f32(-0x1p-149f, 0.5f, VM_RM)), 0x80000001u);
    ck_assert_uint_eq(bits32(vm_mul_f32(-0x1p-149f, 0.5f, VM_RZ)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 1.5f, VM_RN)), 0x00000002u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 1.5f, VM_RNA)), 0x00000002u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 2.5f, VM_RN)), 0x00000002u);
    ck_assert_uint_eq(bits32(vm_mul_f32(0x1p-149f, 2.5f, VM_RNA)), 0x00000003u);
    /* division and square root */
    ck_assert_uint_eq(bits32(vm_div_f32(1.0f, 3.0f, VM_RN)), 0x3eaaaaabu);
    ck_assert_uint_eq(bits32(vm_div_f32(1.0f, 3.0f, VM_RZ)), 0x3eaaaaaau);
    ck_assert_uint_eq(bits32(vm_div_f32(1.0f, 3.0f, VM_RP)), 0x3eaaaaabu);
    ck_assert_uint_eq(bits32(vm_div_f32(-1.0f, 3.0f, VM_RM)), 0xbeaaaaabu);
    ck_assert_uint_eq(bits32(vm_rcp_f32(3.0f, VM_RZ)), 0x3eaaaaaau);
    ck_assert_uint_eq(bits32(vm_rcp_f32(-0.0f, VM_RZ)), 0xff800000u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(2.0f, VM_RN)), 0x3fb504f3u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(2.0f, VM_RZ)), 0x3fb504f3u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(2.0f, VM_RP)), 0x3fb504f4u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(4.0f, VM_RP)), 0x40000000u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(-0.0f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_sqrt_f32(-1.0f, VM_RP)), VM_F32_CANONICAL_NAN);
    /* fused multiply-add: one rounding.  (1+2^-12)^2 - 1 = 2^-11 + 2^-24 */
    ck_assert_uint_eq(bits32(vm_fma_f32(1.0f + 0x1p-12f, 1.0f + 0x1p-12f,
                                        -1.0f, VM_RN)),
                      bits32(0x1p-11f + 0x1p-24f));
    /* (1+2^-23)(1-2^-23) - 1 = -2^-46, exact */
    ck_assert_uint_eq(bits32(vm_fma_f32(1.0f + 0x1p-23f, 1.0f - 0x1p-23f,
                                        -1.0f, VM_RZ)),
                      bits32(-0x1p-46f));
    /* a*b + c with c tiny: the sticky bit decides directed modes */
    ck_assert_uint_eq(bits32(vm_fma_f32(1.0f, 1.0f, 0x1p-149f, VM_RP)), 0x3f800001u);
    ck_assert_uint_eq(bits32(vm_fma_f32(1.0f, 1.0f, -0x1p-149f, VM_RZ)), 0x3f7fffffu);
    ck_assert_uint_eq(bits32(vm_fma_f32(1.0f, 1.0f, -0x1p-149f, VM_RN)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(2.0f, 3.0f, -6.0f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(2.0f, 3.0f, -6.0f, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(-0.0f, 3.0f, 0.0f, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(-0.0f, 3.0f, 0.0f, VM_RM)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(-0.0f, 3.0f, -0.0f, VM_RN)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_fma_f32(FLT_MAX, 2.0f, -FLT_MAX, VM_RZ)), 0x7f7fffffu);
    /* NaN results are canonical in every mode */
    {
        int r;
        for (r = 0; r < 4; r++) {
            ck_assert_uint_eq(bits32(vm_add_f32(INFINITY, -INFINITY, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_add_f32(f32(0x7fa01234u), 1.0f, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_mul_f32(0.0f, INFINITY, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_fma_f32(0.0f, INFINITY, 1.0f, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_fma_f32(1.0f, 1.0f, f32(0xffc00001u), (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_div_f32(0.0f, 0.0f, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_sub_f32(INFINITY, INFINITY, (vm_round)r)),
                              VM_F32_CANONICAL_NAN);
            ck_assert_uint_eq(bits32(vm_add_f32(INFINITY, 1.0f, (vm_round)r)),
                              0x7f800000u);
        }
    }
}
END_TEST

/* Random cross-check of f32 add/sub/mul/fma/div/sqrt in RN/RZ/RM/RP
 * against the host FPU, and add/mul/fma against exact quad values rounded
 * by the brute-force reference (also in RNA). */
START_TEST(test_f32_arith_random)
{
    long i, exact_checked = 0;
    int op, r;
    rng_seed(2);
    fail_reset();
    for (i = 0; i < 100000; i++) {
        uint32_t ua = gen_f32(), ub = gen_f32(), uc = gen_f32();
        float a, b, c;
        if (i % 5 == 1) /* near-cancellation */
            ub = (ua ^ 0x80000000u) + (rng32() % 5) - 2;
        if (i % 5 == 2) /* c close to -a*b */
            uc = bits32(-(f32(ua) * f32(ub))) + (rng32() % 5) - 2;
        a = f32(ua);
        b = f32(ub);
        c = f32(uc);
        for (op = 0; op < OP_COUNT; op++)
            for (r = 0; r < 4; r++) {
                float want = hw_f32(op, a, b, c, (vm_round)r);
                float got = vm_f32_op(op, a, b, c, (vm_round)r);
                uint32_t wb = want == want ? bits32(want) : VM_F32_CANONICAL_NAN;
                if (bits32(got) != wb)
                    NOTE_FAIL("%s.%s(%08x, %08x, %08x): got %08x want %08x",
                              op_name[op], mode_name[r], ua, ub, uc,
                              bits32(got), wb);
            }
        /* exact quad reference for add, mul and fma */
        if (isfinite(a) && isfinite(b) && isfinite(c)) {
            quad p = (quad)a * (quad)b; /* exact: 48 bits */
            quad exact[3];
            int k;
            exact[0] = (quad)a + (quad)b;
            exact[1] = p;
            exact[2] = p + (quad)c;
            for (k = 0; k < 3; k++) {
                quad x = exact[k], y = k == 0 ? (quad)a : p;
                quad z = k == 0 ? (quad)b : (quad)c;
                /* skip inexact quad sums and exact zeros (zero signs are
                 * covered by the FPU check above) */
                if (x == 0 || (k != 1 && ((x - y) != z || (x - z) != y)))
                    continue;
                exact_checked++;
                for (r = 0; r < 5; r++) {
                    float got = k == 0   ? vm_add_f32(a, b, (vm_round)r)
                                : k == 1 ? vm_mul_f32(a, b, (vm_round)r)
                                         : vm_fma_f32(a, b, c, (vm_round)r);
                    uint64_t want = ref_round(x, FMT_F32, (vm_round)r);
                    if (bits32(got) != want)
                        NOTE_FAIL("exact %s.%s(%08x, %08x, %08x): got %08x "
                                  "want %08x",
                                  k == 0 ? "add" : k == 1 ? "mul" : "fma",
                                  mode_name[r], ua, ub, uc, bits32(got),
                                  (unsigned)want);
                }
            }
        }
    }
    ASSERT_NO_FAIL();
    ck_assert_msg(exact_checked > 100000, "only %ld exact-reference checks",
                  exact_checked);
}
END_TEST

/* ------------------------------------------------------------------ */
/* f64 arithmetic                                                       */
/* ------------------------------------------------------------------ */

static uint64_t expected_nan64(int op, double a, double b, double c)
{
    uint64_t q = 0x0008000000000000ull;
    if (a != a)
        return bits64(a) | q;
    if (op != OP_SQRT && b != b)
        return bits64(b) | q;
    if (op == OP_FMA && c != c)
        return bits64(c) | q;
    return VM_F64_DEFAULT_NAN;
}

START_TEST(test_f64_arith_corners)
{
    const double dmin = DBL_MIN, tiny = 0x0.0000000000001p-1022;
    int r;
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, 0x1p-60, VM_RP)), 0x3ff0000000000001ull);
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, 0x1p-60, VM_RM)), 0x3ff0000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, -0x1p-60, VM_RZ)), 0x3fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_add_f64(-1.0, -0x1p-60, VM_RM)), 0xbff0000000000001ull);
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, 0x1p-1074, VM_RP)), 0x3ff0000000000001ull);
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, -1.0, VM_RM)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(1.0, -1.0, VM_RP)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_sub_f64(1.0, 1.0, VM_RM)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(0.0, -0.0, VM_RM)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(0.0, -0.0, VM_RZ)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(-0.0, -0.0, VM_RP)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, DBL_MAX, VM_RN)), 0x7ff0000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, DBL_MAX, VM_RZ)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, DBL_MAX, VM_RM)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_add_f64(-DBL_MAX, -DBL_MAX, VM_RP)), 0xffefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_add_f64(-DBL_MAX, -DBL_MAX, VM_RM)), 0xfff0000000000000ull);
    /* DBL_MAX + half an ulp: RN ties to even = inf; RZ stays */
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, 0x1p970, VM_RN)), 0x7ff0000000000000ull);
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, 0x1p970, VM_RZ)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_add_f64(DBL_MAX, 0x1p969, VM_RP)), 0x7ff0000000000000ull);
    /* subnormal results */
    ck_assert_uint_eq(bits64(vm_mul_f64(dmin, 0.5, VM_RZ)), 0x0008000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(dmin, 1.0 - 0x1p-53, VM_RN)), 0x0010000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(dmin, 1.0 - 0x1p-53, VM_RZ)), 0x000fffffffffffffull);
    ck_assert_uint_eq(bits64(vm_mul_f64(dmin, 1.0 - 0x1p-53, VM_RP)), 0x0010000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(tiny, 0.5, VM_RN)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(tiny, 0.5, VM_RP)), 0x0000000000000001ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(-tiny, 0.5, VM_RM)), 0x8000000000000001ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(-tiny, 0.5, VM_RZ)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(tiny, 1.5, VM_RN)), 0x0000000000000002ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(0x1p-600, 0x1p-600, VM_RP)), 0x0000000000000001ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(0x1p-600, -0x1p-600, VM_RZ)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_mul_f64(0x1p600, 0x1p600, VM_RZ)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_mul_f64(0x1p600, -0x1p600, VM_RP)), 0xffefffffffffffffull);
    /* division */
    ck_assert_uint_eq(bits64(vm_div_f64(1.0, 3.0, VM_RN)), 0x3fd5555555555555ull);
    ck_assert_uint_eq(bits64(vm_div_f64(1.0, 3.0, VM_RZ)), 0x3fd5555555555555ull);
    ck_assert_uint_eq(bits64(vm_div_f64(1.0, 3.0, VM_RP)), 0x3fd5555555555556ull);
    ck_assert_uint_eq(bits64(vm_div_f64(-1.0, 3.0, VM_RM)), 0xbfd5555555555556ull);
    ck_assert_uint_eq(bits64(vm_div_f64(tiny, 2.0, VM_RP)), 0x0000000000000001ull);
    ck_assert_uint_eq(bits64(vm_div_f64(3.0 * tiny, 2.0, VM_RN)), 0x0000000000000002ull);
    ck_assert_uint_eq(bits64(vm_div_f64(DBL_MAX, 0.5, VM_RZ)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_rcp_f64(3.0, VM_RP)), 0x3fd5555555555556ull);
    ck_assert_uint_eq(bits64(vm_rcp_f64(tiny, VM_RN)), 0x7ff0000000000000ull);
    ck_assert_uint_eq(bits64(vm_rcp_f64(tiny, VM_RZ)), 0x7fefffffffffffffull);
    /* square root */
    ck_assert_uint_eq(bits64(vm_sqrt_f64(2.0, VM_RN)), 0x3ff6a09e667f3bcdull);
    ck_assert_uint_eq(bits64(vm_sqrt_f64(2.0, VM_RZ)), 0x3ff6a09e667f3bccull);
    ck_assert_uint_eq(bits64(vm_sqrt_f64(2.0, VM_RM)), 0x3ff6a09e667f3bccull);
    ck_assert_uint_eq(bits64(vm_sqrt_f64(2.0, VM_RP)), 0x3ff6a09e667f3bcdull);
    ck_assert_uint_eq(bits64(vm_sqrt_f64(tiny, VM_RZ)), bits64(0x1p-537));
    ck_assert_uint_eq(bits64(vm_sqrt_f64(9.0, VM_RP)), bits64(3.0));
    ck_assert_uint_eq(bits64(vm_sqrt_f64(-0.0, VM_RP)), 0x8000000000000000ull);
    /* fma */
    ck_assert_uint_eq(bits64(vm_fma_f64(DBL_MAX, 2.0, -DBL_MAX, VM_RZ)), 0x7fefffffffffffffull);
    ck_assert_uint_eq(bits64(vm_fma_f64(0x1p-600, 0x1p-600, 0.0, VM_RP)), 0x0000000000000001ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(0x1p-600, 0x1p-600, -0.0, VM_RN)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(1.0, 1.0, -1.0, VM_RM)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(1.0, 1.0, -1.0, VM_RZ)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(0.0, 5.0, -0.0, VM_RM)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(0.0, 5.0, -0.0, VM_RP)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(-0.0, 5.0, -0.0, VM_RP)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(1.0, 1.0, 0x1p-1074, VM_RP)), 0x3ff0000000000001ull);
    ck_assert_uint_eq(bits64(vm_fma_f64(1.0, 1.0, -0x1p-1074, VM_RZ)), 0x3fefffffffffffffull);
    /* (1+2^-30)^2 - 1 - 2^-29 = 2^-60, only a fused op sees it */
    ck_assert_uint_eq(bits64(vm_fma_f64(1.0 + 0x1p-30, 1.0 + 0x1p-30,
                                        -(1.0 + 0x1p-29), VM_RZ)),
                      bits64(0x1p-60));
    /* NaN: first NaN input keeps its payload (quieted); generated NaN is
     * 0xfff8000000000000 */
    for (r = 0; r < 4; r++) {
        vm_round m = (vm_round)r;
        ck_assert_uint_eq(bits64(vm_add_f64(f64(0x7ff0000000000001ull), 1.0, m)),
                          0x7ff8000000000001ull);
        ck_assert_uint_eq(bits64(vm_add_f64(1.0, f64(0xfff8000000000123ull), m)),
                          0xfff8000000000123ull);
        ck_assert_uint_eq(bits64(vm_add_f64(f64(0x7ff8000000000005ull),
                                            f64(0x7ff8000000000006ull), m)),
                          0x7ff8000000000005ull);
        ck_assert_uint_eq(bits64(vm_sub_f64(1.0, f64(0x7ff0000000000007ull), m)),
                          0x7ff8000000000007ull);
        ck_assert_uint_eq(bits64(vm_add_f64(INFINITY, -INFINITY, m)), VM_F64_DEFAULT_NAN);
        ck_assert_uint_eq(bits64(vm_mul_f64(0.0, INFINITY, m)), VM_F64_DEFAULT_NAN);
        ck_assert_uint_eq(bits64(vm_div_f64(0.0, 0.0, m)), VM_F64_DEFAULT_NAN);
        ck_assert_uint_eq(bits64(vm_sqrt_f64(-1.0, m)), VM_F64_DEFAULT_NAN);
        ck_assert_uint_eq(bits64(vm_sqrt_f64(f64(0x7ff0000000000009ull), m)),
                          0x7ff8000000000009ull);
        ck_assert_uint_eq(bits64(vm_fma_f64(0.0, INFINITY, f64(0x7ff8000000000042ull), m)),
                          0x7ff8000000000042ull);
        ck_assert_uint_eq(bits64(vm_fma_f64(0.0, INFINITY, 1.0, m)), VM_F64_DEFAULT_NAN);
    }
}
END_TEST

START_TEST(test_f64_arith_random)
{
    long i;
    int op, r;
    rng_seed(3);
    fail_reset();
    for (i = 0; i < 100000; i++) {
        uint64_t ua = gen_f64(), ub = gen_f64(), uc = gen_f64();
        double a, b, c;
        if (i % 5 == 1)
            ub = (ua ^ 0x8000000000000000ull) + (rng64() % 5) - 2;
        if (i % 5 == 2)
            uc = bits64(-(f64(ua) * f64(ub))) + (rng64() % 5) - 2;
        if (i % 7 == 3) /* a*b near the subnormal range */
            ub = (ub & 0x800fffffffffffffull) |
                 ((uint64_t)((1024 - (int)((ua >> 52) & 0x7ff) - 55 +
                              (int)(rng64() % 60)) & 0x7ff) << 52);
        a = f64(ua);
        b = f64(ub);
        c = f64(uc);
        for (op = 0; op < OP_COUNT; op++)
            for (r = 0; r < 4; r++) {
                double want = hw_f64(op, a, b, c, (vm_round)r);
                double got = vm_f64_op(op, a, b, c, (vm_round)r);
                uint64_t wb = want == want ? bits64(want)
                                           : expected_nan64(op, a, b, c);
                if (bits64(got) != wb)
                    NOTE_FAIL("%s.%s.f64(%016llx, %016llx, %016llx): got "
                              "%016llx want %016llx",
                              op_name[op], mode_name[r],
                              (unsigned long long)ua, (unsigned long long)ub,
                              (unsigned long long)uc,
                              (unsigned long long)bits64(got),
                              (unsigned long long)wb);
            }
    }
    ASSERT_NO_FAIL();
}
END_TEST

/* ------------------------------------------------------------------ */
/* f16 / bf16 arithmetic                                                */
/* ------------------------------------------------------------------ */

START_TEST(test_half_arith_corners)
{
    /* 1 + 2^-11: a tie in f16 */
    ck_assert_uint_eq(vm_add_f16(0x3c00, 0x1000, VM_RN), 0x3c00);
    ck_assert_uint_eq(vm_add_f16(0x3c00, 0x1000, VM_RP), 0x3c01);
    ck_assert_uint_eq(vm_add_f16(0x3c00, 0x1000, VM_RNA), 0x3c01);
    ck_assert_uint_eq(vm_sub_f16(0x3c00, 0x3c00, VM_RN), 0x0000);
    ck_assert_uint_eq(vm_sub_f16(0x3c00, 0x3c00, VM_RM), 0x8000);
    ck_assert_uint_eq(vm_mul_f16(0x7bff, 0x4000, VM_RN), 0x7c00);
    ck_assert_uint_eq(vm_mul_f16(0x7bff, 0x4000, VM_RZ), 0x7bff);
    ck_assert_uint_eq(vm_mul_f16(0x0001, 0x3800, VM_RN), 0x0000); /* 2^-25 */
    ck_assert_uint_eq(vm_mul_f16(0x0001, 0x3800, VM_RP), 0x0001);
    ck_assert_uint_eq(vm_mul_f16(0x7c00, 0x0000, VM_RN), 0x7fff);
    /* fused: (1+2^-10)^2 - 1 = 2^-9 + 2^-20, a tie at 2^-9 */
    ck_assert_uint_eq(vm_fma_f16(0x3c01, 0x3c01, 0xbc00, VM_RN), 0x1800);
    ck_assert_uint_eq(vm_fma_f16(0x3c01, 0x3c01, 0xbc00, VM_RP), 0x1801);
    ck_assert_uint_eq(vm_fma_f16(0x3c01, 0x3c01, 0xbc00, VM_RNA), 0x1801);
    ck_assert_uint_eq(vm_fma_f16(0x7c00, 0x3c00, 0xfc00, VM_RN), 0x7fff);
    ck_assert_uint_eq(vm_fma_f16(0x0000, 0x3c00, 0x8000, VM_RM), 0x8000);
    ck_assert_uint_eq(vm_fma_f16(0x0000, 0x3c00, 0x8000, VM_RN), 0x0000);
    /* bf16 */
    ck_assert_uint_eq(vm_add_bf16(0x3f80, 0x3b80, VM_RN), 0x3f80); /* 1 + 2^-8 */
    ck_assert_uint_eq(vm_add_bf16(0x3f80, 0x3b80, VM_RP), 0x3f81);
    ck_assert_uint_eq(vm_add_bf16(0x7f7f, 0x0001, VM_RP), 0x7f80);
    ck_assert_uint_eq(vm_add_bf16(0x7f7f, 0x0001, VM_RN), 0x7f7f);
    ck_assert_uint_eq(vm_sub_bf16(0x3f80, 0x3f80, VM_RM), 0x8000);
    ck_assert_uint_eq(vm_mul_bf16(0x0001, 0x3f00, VM_RP), 0x0001);
    ck_assert_uint_eq(vm_mul_bf16(0x0001, 0x3f00, VM_RN), 0x0000);
    ck_assert_uint_eq(vm_fma_bf16(0x3f81, 0x3f81, 0xbf80, VM_RN), 0x3c80); /* 2^-6 + 2^-14, a tie */
    ck_assert_uint_eq(vm_fma_bf16(0x3f81, 0x3f81, 0xbf80, VM_RP), 0x3c81);
    ck_assert_uint_eq(vm_fma_bf16(0xff80, 0x3f80, 0x7f80, VM_RN), 0x7fff);
    /* .ftz / .sat / .relu on f16 */
    ck_assert_uint_eq(vm_ftz_f16(0x03ff), 0x0000);
    ck_assert_uint_eq(vm_ftz_f16(0x8001), 0x8000);
    ck_assert_uint_eq(vm_ftz_f16(0x0400), 0x0400);
    ck_assert_uint_eq(vm_ftz_f16(0x7e00), 0x7e00);
    ck_assert_uint_eq(vm_sat_f16(0x7e00), 0x0000);
    ck_assert_uint_eq(vm_sat_f16(0xbc00), 0x0000);
    ck_assert_uint_eq(vm_sat_f16(0x8000), 0x0000);
    ck_assert_uint_eq(vm_sat_f16(0x4000), 0x3c00);
    ck_assert_uint_eq(vm_sat_f16(0x3800), 0x3800);
    ck_assert_uint_eq(vm_sat_f16(0x7c00), 0x3c00);
    ck_assert_uint_eq(vm_relu_f16(0xbc00), 0x0000);
    ck_assert_uint_eq(vm_relu_f16(0x3c00), 0x3c00);
    ck_assert_uint_eq(vm_relu_f16(0xfe01), 0x7fff);
    ck_assert_uint_eq(vm_relu_bf16(0xbf80), 0x0000);
    ck_assert_uint_eq(vm_relu_bf16(0xffc1), 0x7fff);
}
END_TEST

static uint16_t gen_f16(void)
{
    uint16_t h = (uint16_t)rng32();
    switch (rng32() % 4) {
    case 0: return h;
    case 1: return (uint16_t)(h & 0x83ffu); /* subnormal */
    default: /* moderate exponents */
        return (uint16_t)((h & 0x83ffu) | ((8u + rng32() % 16u) << 10));
    }
}

static uint16_t gen_bf16(void)
{
    uint16_t h = (uint16_t)rng32();
    switch (rng32() % 4) {
    case 0: return h;
    case 1: return (uint16_t)(h & 0x807fu); /* subnormal */
    default:
        return (uint16_t)((h & 0x807fu) | ((100u + rng32() % 56u) << 7));
    }
}

/* exact x in quad for x = y + z, else 0 (skipped) */
static int quad_sum_exact(quad x, quad y, quad z)
{
    return (x - y) == z && (x - z) == y;
}

START_TEST(test_half_arith_random)
{
    long i, checked = 0;
    int r, k, bf;
    rng_seed(4);
    fail_reset();
    for (i = 0; i < 100000; i++) {
        for (bf = 0; bf < 2; bf++) {
            uint16_t a = bf ? gen_bf16() : gen_f16();
            uint16_t b = bf ? gen_bf16() : gen_f16();
            uint16_t c = bf ? gen_bf16() : gen_f16();
            fmt_t f = bf ? FMT_BF16 : FMT_F16;
            double da = bf ? vm_bf16_to_f64(a) : vm_f16_to_f64(a);
            double db = bf ? vm_bf16_to_f64(b) : vm_f16_to_f64(b);
            double dc = bf ? vm_bf16_to_f64(c) : vm_f16_to_f64(c);
            quad p = (quad)da * (quad)db;
            quad ex[3];
            ex[0] = (quad)da + (quad)db;
            ex[1] = p;
            ex[2] = p + (quad)dc;
            for (k = 0; k < 3; k++) {
                quad x = ex[k];
                int isnan_x = x != x;
                if (!isnan_x && x == 0)
                    continue; /* zero signs: see the corner tests */
                if (!isnan_x && isfinite((double)x) && k != 1 &&
                    !quad_sum_exact(x, k == 0 ? (quad)da : p,
                                    k == 0 ? (quad)db : (quad)dc))
                    continue;
                checked++;
                for (r = 0; r < 5; r++) {
                    vm_round m = (vm_round)r;
                    uint16_t got;
                    uint64_t want = isnan_x ? 0x7fff : ref_round(x, f, m);
                    if (bf)
                        got = k == 0 ? vm_add_bf16(a, b, m)
                              : k == 1 ? vm_mul_bf16(a, b, m)
                                       : vm_fma_bf16(a, b, c, m);
                    else
                        got = k == 0 ? vm_add_f16(a, b, m)
                              : k == 1 ? vm_mul_f16(a, b, m)
                                       : vm_fma_f16(a, b, c, m);
                    if (got != want)
                        NOTE_FAIL("%s.%s.%s(%04x, %04x, %04x): got %04x "
                                  "want %04x",
                                  k == 0 ? "add" : k == 1 ? "mul" : "fma",
                                  mode_name[r], bf ? "bf16" : "f16", a, b, c,
                                  got, (unsigned)want);
                }
            }
        }
    }
    ASSERT_NO_FAIL();
    ck_assert_msg(checked > 400000, "only %ld checks", checked);
}
END_TEST

/* ------------------------------------------------------------------ */
/* .ftz / .sat / min / max / testp                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_ftz_sat)
{
    ck_assert_uint_eq(bits32(vm_ftz_f32(1e-40f)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(-1e-40f)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(f32(0x007fffffu))), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(FLT_MIN)), 0x00800000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(-2.0f)), 0xc0000000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(f32(0x7fc00001u))), 0x7fc00001u);
    ck_assert_uint_eq(bits32(vm_sat_f32(NAN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(-NAN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(-0.0f)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(-5.0f)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(-INFINITY)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(0.25f)), bits32(0.25f));
    ck_assert_uint_eq(bits32(vm_sat_f32(1e-40f)), bits32(1e-40f));
    ck_assert_uint_eq(bits32(vm_sat_f32(2.0f)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(INFINITY)), 0x3f800000u);
    ck_assert_uint_eq(bits64(vm_sat_f64(NAN)), 0ull);
    ck_assert_uint_eq(bits64(vm_sat_f64(-0.0)), 0ull);
    ck_assert_uint_eq(bits64(vm_sat_f64(-1e300)), 0ull);
    ck_assert_uint_eq(bits64(vm_sat_f64(0.75)), bits64(0.75));
    ck_assert_uint_eq(bits64(vm_sat_f64(1.0 + 0x1p-52)), bits64(1.0));
    /* .ftz composed with an operation: subnormal inputs and results */
    ck_assert_uint_eq(bits32(vm_ftz_f32(vm_add_f32(vm_ftz_f32(1e-40f),
                                                   vm_ftz_f32(1.0f), VM_RP))),
                      0x3f800000u);
    ck_assert_uint_eq(bits32(vm_ftz_f32(vm_mul_f32(FLT_MIN, -0.5f, VM_RN))),
                      0x80000000u);
    /* .sat composed with an operation */
    ck_assert_uint_eq(bits32(vm_sat_f32(vm_add_f32(INFINITY, -INFINITY, VM_RN))),
                      0x00000000u);
}
END_TEST

START_TEST(test_minmax)
{
    const float qnan = f32(0x7fc00000u), nnan = f32(0xffc00001u);
    /* signed zeros: -0 < +0 */
    ck_assert_uint_eq(bits32(vm_min_f32(-0.0f, 0.0f, 0)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_min_f32(0.0f, -0.0f, 0)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_max_f32(-0.0f, 0.0f, 0)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_max_f32(0.0f, -0.0f, 0)), 0x00000000u);
    /* ordinary values, infinities, subnormals */
    ck_assert_uint_eq(bits32(vm_min_f32(-1.0f, 2.0f, 0)), bits32(-1.0f));
    ck_assert_uint_eq(bits32(vm_max_f32(-1.0f, -2.0f, 0)), bits32(-1.0f));
    ck_assert_uint_eq(bits32(vm_max_f32(-INFINITY, -FLT_MAX, 0)), bits32(-FLT_MAX));
    ck_assert_uint_eq(bits32(vm_min_f32(INFINITY, FLT_MAX, 0)), bits32(FLT_MAX));
    ck_assert_uint_eq(bits32(vm_min_f32(f32(1), f32(2), 0)), 1u);
    ck_assert_uint_eq(bits32(vm_max_f32(f32(0x80000001u), f32(0x80000002u), 0)), 0x80000001u);
    /* minNum: one NaN gives the other operand */
    ck_assert_uint_eq(bits32(vm_min_f32(qnan, 1.0f, 0)), bits32(1.0f));
    ck_assert_uint_eq(bits32(vm_min_f32(1.0f, nnan, 0)), bits32(1.0f));
    ck_assert_uint_eq(bits32(vm_max_f32(nnan, -3.0f, 0)), bits32(-3.0f));
    ck_assert_uint_eq(bits32(vm_min_f32(qnan, nnan, 0)), VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_max_f32(nnan, nnan, 0)), VM_F32_CANONICAL_NAN);
    /* .NaN */
    ck_assert_uint_eq(bits32(vm_min_f32(qnan, 1.0f, VM_MINMAX_NAN)), VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_max_f32(1.0f, nnan, VM_MINMAX_NAN)), VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_max_f32(1.0f, 2.0f, VM_MINMAX_NAN)), bits32(2.0f));
    /* .xorsign.abs */
    ck_assert_uint_eq(bits32(vm_min_f32(-3.0f, 2.0f, VM_MINMAX_XORSIGN_ABS)), bits32(-2.0f));
    ck_assert_uint_eq(bits32(vm_max_f32(-3.0f, 2.0f, VM_MINMAX_XORSIGN_ABS)), bits32(-3.0f));
    ck_assert_uint_eq(bits32(vm_max_f32(-3.0f, -2.0f, VM_MINMAX_XORSIGN_ABS)), bits32(3.0f));
    ck_assert_uint_eq(bits32(vm_min_f32(-0.0f, 0.0f, VM_MINMAX_XORSIGN_ABS)), 0x80000000u);
    /* the NaN operand's sign still counts; result 2 with sign 1^1 = 0 */
    ck_assert_uint_eq(bits32(vm_min_f32(nnan, -2.0f, VM_MINMAX_XORSIGN_ABS)), bits32(2.0f));
    ck_assert_uint_eq(bits32(vm_min_f32(nnan, -2.0f, VM_MINMAX_XORSIGN_ABS | VM_MINMAX_NAN)),
                      VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_min_f32(nnan, nnan, VM_MINMAX_XORSIGN_ABS)),
                      VM_F32_CANONICAL_NAN);
    /* .abs alone (three-input form) */
    ck_assert_uint_eq(bits32(vm_max_f32(-3.0f, 2.0f, VM_MINMAX_ABS)), bits32(3.0f));
    ck_assert_uint_eq(bits32(vm_min_f32(-3.0f, -2.0f, VM_MINMAX_ABS)), bits32(2.0f));
    /* f16 / bf16 */
    ck_assert_uint_eq(vm_max_f16(0x0000, 0x7e00, 0), 0x0000); /* max(0, NaN) = 0 */
    ck_assert_uint_eq(vm_min_f16(0x8000, 0x0000, 0), 0x8000);
    ck_assert_uint_eq(vm_max_f16(0x8000, 0x0000, 0), 0x0000);
    ck_assert_uint_eq(vm_min_f16(0x7e00, 0xfe01, 0), 0x7fff);
    ck_assert_uint_eq(vm_min_f16(0x3c00, 0x7e00, VM_MINMAX_NAN), 0x7fff);
    ck_assert_uint_eq(vm_min_f16(0xc200, 0x4000, VM_MINMAX_XORSIGN_ABS), 0xc000);
    ck_assert_uint_eq(vm_max_f16(0xfc00, 0xfbff, 0), 0xfbff);
    ck_assert_uint_eq(vm_max_bf16(0xbf80, 0x3f80, 0), 0x3f80);
    ck_assert_uint_eq(vm_min_bf16(0xbf80, 0x3f80, 0), 0xbf80);
    ck_assert_uint_eq(vm_min_bf16(0x8000, 0x0000, 0), 0x8000);
    ck_assert_uint_eq(vm_max_bf16(0x3f80, 0x7fc1, 0), 0x3f80);
    ck_assert_uint_eq(vm_max_bf16(0x3f80, 0x7fc1, VM_MINMAX_NAN), 0x7fff);
    ck_assert_uint_eq(vm_max_bf16(0xc040, 0x3f80, VM_MINMAX_XORSIGN_ABS), 0xc040);
    /* f64: payload of the first NaN when both are NaN */
    ck_assert_uint_eq(bits64(vm_min_f64(f64(0x7ff8000000000001ull), 1.0)), bits64(1.0));
    ck_assert_uint_eq(bits64(vm_max_f64(-1.0, f64(0xfff8000000000001ull))), bits64(-1.0));
    ck_assert_uint_eq(bits64(vm_min_f64(f64(0x7ff0000000000123ull), f64(0x7ff8000000000456ull))),
                      0x7ff8000000000123ull);
    ck_assert_uint_eq(bits64(vm_min_f64(-0.0, 0.0)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_max_f64(-0.0, 0.0)), 0x0000000000000000ull);
    ck_assert_uint_eq(bits64(vm_max_f64(-INFINITY, 5.0)), bits64(5.0));
    ck_assert_uint_eq(bits64(vm_min_f64(0x1p-1074, 0x1p-1073)), 1ull);
}
END_TEST

START_TEST(test_testp)
{
    static const struct {
        float x;
        int finite, infinite, number, notanumber, normal, subnormal;
    } c32[] = {
        {0.0f, 1, 0, 1, 0, 1, 0},      {-0.0f, 1, 0, 1, 0, 1, 0},
        {1.0f, 1, 0, 1, 0, 1, 0},      {FLT_MIN, 1, 0, 1, 0, 1, 0},
        {1e-40f, 1, 0, 1, 0, 0, 1},    {-1e-45f, 1, 0, 1, 0, 0, 1},
        {INFINITY, 0, 1, 1, 0, 0, 0},  {-INFINITY, 0, 1, 1, 0, 0, 0},
        {NAN, 0, 0, 0, 1, 0, 0},       {-FLT_MAX, 1, 0, 1, 0, 1, 0},
    };
    static const struct {
        double x;
        int finite, infinite, number, notanumber, normal, subnormal;
    } c64[] = {
        {0.0, 1, 0, 1, 0, 1, 0},       {-0.0, 1, 0, 1, 0, 1, 0},
        {DBL_MIN, 1, 0, 1, 0, 1, 0},   {0x1p-1074, 1, 0, 1, 0, 0, 1},
        {-0x1p-1030, 1, 0, 1, 0, 0, 1}, {INFINITY, 0, 1, 1, 0, 0, 0},
        {-NAN, 0, 0, 0, 1, 0, 0},      {DBL_MAX, 1, 0, 1, 0, 1, 0},
    };
    size_t i;
    for (i = 0; i < sizeof c32 / sizeof c32[0]; i++) {
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_FINITE), c32[i].finite);
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_INFINITE), c32[i].infinite);
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_NUMBER), c32[i].number);
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_NOTANUMBER), c32[i].notanumber);
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_NORMAL), c32[i].normal);
        ck_assert_int_eq(vm_testp_f32(c32[i].x, VM_TESTP_SUBNORMAL), c32[i].subnormal);
    }
    for (i = 0; i < sizeof c64 / sizeof c64[0]; i++) {
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_FINITE), c64[i].finite);
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_INFINITE), c64[i].infinite);
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_NUMBER), c64[i].number);
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_NOTANUMBER), c64[i].notanumber);
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_NORMAL), c64[i].normal);
        ck_assert_int_eq(vm_testp_f64(c64[i].x, VM_TESTP_SUBNORMAL), c64[i].subnormal);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Float <-> integer                                                    */
/* ------------------------------------------------------------------ */

#define S64(v) ((uint64_t)(int64_t)(v))

START_TEST(test_cvt_float_to_int)
{
    /* rounding modes */
    ck_assert_uint_eq(vm_cvt_f32_to_int(2.5f, 32, 1, VM_RN, 0), 2);
    ck_assert_uint_eq(vm_cvt_f32_to_int(3.5f, 32, 1, VM_RN, 0), 4);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-2.5f, 32, 1, VM_RN, 0), S64(-2));
    ck_assert_uint_eq(vm_cvt_f32_to_int(-2.7f, 32, 1, VM_RZ, 0), S64(-2));
    ck_assert_uint_eq(vm_cvt_f32_to_int(-2.1f, 32, 1, VM_RM, 0), S64(-3));
    ck_assert_uint_eq(vm_cvt_f32_to_int(2.1f, 32, 1, VM_RP, 0), 3);
    ck_assert_uint_eq(vm_cvt_f32_to_int(2.5f, 32, 1, VM_RNA, 0), 3);
    ck_assert_uint_eq(vm_cvt_f64_to_int(-0.5, 32, 1, VM_RM), S64(-1));
    ck_assert_uint_eq(vm_cvt_f64_to_int(-0.5, 32, 0, VM_RM), 0);
    ck_assert_uint_eq(vm_cvt_f64_to_int(-0.0, 32, 0, VM_RN), 0);
    ck_assert_uint_eq(vm_cvt_f64_to_int(0.5, 16, 0, VM_RP), 1);
    /* saturation (default for float -> int) */
    ck_assert_uint_eq(vm_cvt_f32_to_int(3e9f, 32, 1, VM_RZ, 0), 0x7fffffffull);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-3e9f, 32, 1, VM_RZ, 0), S64(INT32_MIN));
    ck_assert_uint_eq(vm_cvt_f32_to_int(-1.0f, 32, 0, VM_RZ, 0), 0);
    ck_assert_uint_eq(vm_cvt_f32_to_int(5e9f, 32, 0, VM_RZ, 0), 0xffffffffull);
    ck_assert_uint_eq(vm_cvt_f32_to_int(65535.5f, 16, 0, VM_RN, 0), 65535);
    ck_assert_uint_eq(vm_cvt_f32_to_int(65534.5f, 16, 0, VM_RN, 0), 65534);
    ck_assert_uint_eq(vm_cvt_f32_to_int(300.0f, 8, 0, VM_RN, 0), 255);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-200.0f, 8, 1, VM_RN, 0), S64(-128));
    ck_assert_uint_eq(vm_cvt_f32_to_int(127.4f, 8, 1, VM_RP, 0), 127);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-128.9f, 8, 1, VM_RZ, 0), S64(-128));
    ck_assert_uint_eq(vm_cvt_f32_to_int(-32768.5f, 16, 1, VM_RM, 0), S64(-32768));
    ck_assert_uint_eq(vm_cvt_f32_to_int(INFINITY, 32, 1, VM_RN, 0), 0x7fffffffull);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-INFINITY, 32, 1, VM_RN, 0), S64(INT32_MIN));
    ck_assert_uint_eq(vm_cvt_f32_to_int(INFINITY, 64, 0, VM_RN, 0), UINT64_MAX);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-INFINITY, 64, 0, VM_RN, 0), 0);
    ck_assert_uint_eq(vm_cvt_f64_to_int(0x1p63, 64, 1, VM_RN), (uint64_t)INT64_MAX);
    ck_assert_uint_eq(vm_cvt_f64_to_int(-0x1p63, 64, 1, VM_RN), (uint64_t)INT64_MIN);
    ck_assert_uint_eq(vm_cvt_f64_to_int(-0x1p63 - 4096, 64, 1, VM_RN), (uint64_t)INT64_MIN);
    ck_assert_uint_eq(vm_cvt_f64_to_int(0x1p63 - 1024, 64, 1, VM_RN), 0x7ffffffffffffc00ull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(0x1p64, 64, 0, VM_RN), UINT64_MAX);
    ck_assert_uint_eq(vm_cvt_f64_to_int(0x1p64 - 2048, 64, 0, VM_RN), 0xfffffffffffff800ull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(4294967295.5, 32, 0, VM_RN), 0xffffffffull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(2147483647.5, 32, 1, VM_RZ), 0x7fffffffull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(2147483647.5, 32, 1, VM_RP), 0x7fffffffull);
    /* NaN: 0, except f64 source or 64-bit destination: 1 << (N-1) */
    ck_assert_uint_eq(vm_cvt_f32_to_int(NAN, 32, 1, VM_RN, 0), 0);
    ck_assert_uint_eq(vm_cvt_f32_to_int(NAN, 16, 0, VM_RZ, 0), 0);
    ck_assert_uint_eq(vm_cvt_f32_to_int(NAN, 64, 1, VM_RN, 0), 0x8000000000000000ull);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-NAN, 64, 0, VM_RN, 0), 0x8000000000000000ull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(NAN, 32, 1, VM_RN), S64(INT32_MIN));
    ck_assert_uint_eq(vm_cvt_f64_to_int(NAN, 32, 0, VM_RN), 0x80000000ull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(NAN, 8, 0, VM_RN), 0x80ull);
    ck_assert_uint_eq(vm_cvt_f64_to_int(NAN, 8, 1, VM_RN), S64(-128));
    ck_assert_uint_eq(vm_cvt_f64_to_int(NAN, 64, 1, VM_RM), 0x8000000000000000ull);
    ck_assert_uint_eq(vm_cvt_f16_to_int(0x7e00, 32, 1, VM_RN), 0);
    ck_assert_uint_eq(vm_cvt_f16_to_int(0x7e00, 64, 0, VM_RN), 0x8000000000000000ull);
    ck_assert_uint_eq(vm_cvt_bf16_to_int(0xffc0, 16, 1, VM_RN), 0);
    ck_assert_uint_eq(vm_cvt_bf16_to_int(0xffc0, 64, 1, VM_RN), 0x8000000000000000ull);
    /* f16 / bf16 sources */
    ck_assert_uint_eq(vm_cvt_f16_to_int(0x3e00, 32, 1, VM_RN), 2);   /* 1.5 */
    ck_assert_uint_eq(vm_cvt_f16_to_int(0xc100, 32, 1, VM_RN), S64(-2)); /* -2.5 */
    ck_assert_uint_eq(vm_cvt_f16_to_int(0x7bff, 8, 0, VM_RN), 255);
    ck_assert_uint_eq(vm_cvt_f16_to_int(0xfc00, 16, 1, VM_RN), S64(-32768));
    ck_assert_uint_eq(vm_cvt_bf16_to_int(0x4780, 16, 0, VM_RN), 65535); /* 65536 */
    ck_assert_uint_eq(vm_cvt_bf16_to_int(0xbfc0, 8, 1, VM_RP), S64(-1)); /* -1.5 */
    /* .ftz flushes subnormal f32 inputs first */
    ck_assert_uint_eq(vm_cvt_f32_to_int(1e-40f, 32, 1, VM_RP, 0), 1);
    ck_assert_uint_eq(vm_cvt_f32_to_int(1e-40f, 32, 1, VM_RP, 1), 0);
    ck_assert_uint_eq(vm_cvt_f32_to_int(-1e-40f, 32, 1, VM_RM, 0), S64(-1));
    ck_assert_uint_eq(vm_cvt_f32_to_int(-1e-40f, 32, 1, VM_RM, 1), 0);
}
END_TEST

START_TEST(test_cvt_float_to_int_random)
{
    long i;
    int r;
    rng_seed(5);
    fail_reset();
    for (i = 0; i < 100000; i++) {
        /* values in range of s32: compare the rounding with the FPU */
        double x = (double)(int32_t)rng32() / (double)(1u << (rng32() % 20));
        float xf = (float)x;
        for (r = 0; r < 4; r++) {
            volatile double vx = x, y;
            int saved = fegetround();
            int64_t want;
            uint64_t got;
            fesetround(fe_mode[r]);
            y = nearbyint(vx);
            fesetround(saved);
            want = (int64_t)y;
            if (want > INT32_MAX)
                want = INT32_MAX;
            got = vm_cvt_f64_to_int(x, 32, 1, (vm_round)r);
            if (got != (uint64_t)want)
                NOTE_FAIL("cvt.%s.s32.f64(%a) = %llx want %llx", mode_name[r],
                          x, (unsigned long long)got,
                          (unsigned long long)want);
            got = vm_cvt_f32_to_int(xf, 64, 1, (vm_round)r, 0);
            fesetround(fe_mode[r]);
            vx = xf;
            y = nearbyint(vx);
            fesetround(saved);
            if (got != (uint64_t)(int64_t)y)
                NOTE_FAIL("cvt.%s.s64.f32(%a) = %llx", mode_name[r],
                          (double)xf, (unsigned long long)got);
        }
    }
    ASSERT_NO_FAIL();
}
END_TEST

START_TEST(test_cvt_int_to_float)
{
    const uint64_t p24_1 = (1ull << 24) + 1, p53_1 = (1ull << 53) + 1;
    /* 2^24 + 1 -> f32: tie between 2^24 (even) and 2^24 + 2 */
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1, 0, VM_RN)), 0x4b800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1, 0, VM_RZ)), 0x4b800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1, 0, VM_RM)), 0x4b800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1, 0, VM_RP)), 0x4b800001u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1, 0, VM_RNA)), 0x4b800001u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(0 - p24_1, 1, VM_RN)), 0xcb800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(0 - p24_1, 1, VM_RM)), 0xcb800001u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(0 - p24_1, 1, VM_RP)), 0xcb800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(0 - p24_1, 1, VM_RZ)), 0xcb800000u);
    /* 2^24 + 3: tie between odd 2^24+2 and even 2^24+4 */
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1 + 2, 0, VM_RN)), 0x4b800002u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(p24_1 + 2, 0, VM_RZ)), 0x4b800001u);
    /* 2^53 + 1 -> f64 */
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(p53_1, 0, VM_RN)), 0x4340000000000000ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(p53_1, 1, VM_RZ)), 0x4340000000000000ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(p53_1, 0, VM_RM)), 0x4340000000000000ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(p53_1, 0, VM_RP)), 0x4340000000000001ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(0 - p53_1, 1, VM_RM)), 0xc340000000000001ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(0 - p53_1, 1, VM_RP)), 0xc340000000000000ull);
    /* UINT64_MAX */
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(UINT64_MAX, 0, VM_RN)), 0x43f0000000000000ull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(UINT64_MAX, 0, VM_RZ)), 0x43efffffffffffffull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(UINT64_MAX, 0, VM_RM)), 0x43efffffffffffffull);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64(UINT64_MAX, 0, VM_RP)), 0x43f0000000000000ull);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(UINT64_MAX, 0, VM_RN)), 0x5f800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(UINT64_MAX, 0, VM_RZ)), 0x5f7fffffu);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(UINT64_MAX, 0, VM_RP)), 0x5f800000u);
    /* as a signed value UINT64_MAX is -1 */
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(UINT64_MAX, 1, VM_RZ)), 0xbf800000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32((uint64_t)INT64_MIN, 1, VM_RZ)), 0xdf000000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32((uint64_t)INT64_MAX, 1, VM_RN)), 0x5f000000u);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32((uint64_t)INT64_MAX, 1, VM_RZ)), 0x5effffffu);
    ck_assert_uint_eq(bits64(vm_cvt_int_to_f64((uint64_t)INT64_MIN, 1, VM_RP)), 0xc3e0000000000000ull);
    ck_assert_uint_eq(bits32(vm_cvt_int_to_f32(0, 1, VM_RM)), 0x00000000u);
    /* -> f16 */
    ck_assert_uint_eq(vm_cvt_int_to_f16(65504, 0, VM_RN), 0x7bff);
    ck_assert_uint_eq(vm_cvt_int_to_f16(65519, 0, VM_RN), 0x7bff);
    ck_assert_uint_eq(vm_cvt_int_to_f16(65519, 0, VM_RP), 0x7c00);
    ck_assert_uint_eq(vm_cvt_int_to_f16(65520, 0, VM_RN), 0x7c00);
    ck_assert_uint_eq(vm_cvt_int_to_f16(65520, 0, VM_RZ), 0x7bff);
    ck_assert_uint_eq(vm_cvt_int_to_f16(70000, 1, VM_RZ), 0x7bff);
    ck_assert_uint_eq(vm_cvt_int_to_f16(S64(-70000), 1, VM_RM), 0xfc00);
    ck_assert_uint_eq(vm_cvt_int_to_f16(S64(-70000), 1, VM_RP), 0xfbff);
    ck_assert_uint_eq(vm_cvt_int_to_f16(UINT64_MAX, 0, VM_RN), 0x7c00);
    ck_assert_uint_eq(vm_cvt_int_to_f16(2049, 0, VM_RN), 0x6800);
    ck_assert_uint_eq(vm_cvt_int_to_f16(2049, 0, VM_RP), 0x6801);
    ck_assert_uint_eq(vm_cvt_int_to_f16(2051, 0, VM_RN), 0x6802);
    /* -> bf16 */
    ck_assert_uint_eq(vm_cvt_int_to_bf16(257, 0, VM_RN), 0x4380);
    ck_assert_uint_eq(vm_cvt_int_to_bf16(257, 0, VM_RP), 0x4381);
    ck_assert_uint_eq(vm_cvt_int_to_bf16(S64(-257), 1, VM_RM), 0xc381);
    ck_assert_uint_eq(vm_cvt_int_to_bf16(UINT64_MAX, 0, VM_RN), 0x5f80);
    ck_assert_uint_eq(vm_cvt_int_to_bf16(UINT64_MAX, 0, VM_RZ), 0x5f7f);
}
END_TEST

START_TEST(test_cvt_int_to_float_random)
{
    long i;
    int r, s;
    rng_seed(6);
    fail_reset();
    for (i = 0; i < 40000; i++) {
        uint64_t v = rng64() >> (rng32() % 64);
        if (i & 1) /* ties and near-ties at every width */
            v = (v & ~0xfffull) | ((rng32() & 1) ? 0x800u : 0x7ffu) |
                (rng32() % 2);
        for (s = 0; s < 2; s++) {
            quad x = s ? (quad)(int64_t)v : (quad)v;
            for (r = 0; r < 5; r++) {
                vm_round m = (vm_round)r;
                uint64_t want = ref_round(x, FMT_F32, m);
                uint64_t got = bits32(vm_cvt_int_to_f32(v, s, m));
                if (got != want)
                    NOTE_FAIL("cvt.%s.f32.%c64(%llx) = %llx want %llx",
                              mode_name[r], s ? 's' : 'u',
                              (unsigned long long)v, (unsigned long long)got,
                              (unsigned long long)want);
                want = ref_round(x, FMT_F64, m);
                got = bits64(vm_cvt_int_to_f64(v, s, m));
                if (got != want)
                    NOTE_FAIL("cvt.%s.f64.%c64(%llx) = %llx want %llx",
                              mode_name[r], s ? 's' : 'u',
                              (unsigned long long)v, (unsigned long long)got,
                              (unsigned long long)want);
                /* f16: an 18-bit value (sign-extended when signed) */
                {
                    uint64_t w = s ? (uint64_t)((int64_t)(v << 46) >> 46)
                                   : (v & 0x3ffffu);
                    want = ref_round(s ? (quad)(int64_t)w : (quad)w, FMT_F16,
                                     m);
                    got = vm_cvt_int_to_f16(w, s, m);
                    if (got != want)
                        NOTE_FAIL("cvt.%s.f16.%c64(%llx) = %llx want %llx",
                                  mode_name[r], s ? 's' : 'u',
                                  (unsigned long long)w,
                                  (unsigned long long)got,
                                  (unsigned long long)want);
                }
                want = ref_round(x, FMT_BF16, m);
                got = vm_cvt_int_to_bf16(v, s, m);
                if (got != want)
                    NOTE_FAIL("cvt.%s.bf16.%c64(%llx) = %llx want %llx",
                              mode_name[r], s ? 's' : 'u',
                              (unsigned long long)v, (unsigned long long)got,
                              (unsigned long long)want);
            }
        }
    }
    ASSERT_NO_FAIL();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Float -> float                                                       */
/* ------------------------------------------------------------------ */

START_TEST(test_f64_to_f32_and_rint)
{
    /* f64 -> f32 */
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1.0 + 0x1p-24, VM_RN)), 0x3f800000u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1.0 + 0x1p-24, VM_RP)), 0x3f800001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1.0 + 0x1p-24, VM_RNA)), 0x3f800001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1.0 + 0x1p-24 + 0x1p-50, VM_RN)), 0x3f800001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(-(1.0 + 0x1p-50), VM_RM)), 0xbf800001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(-(1.0 + 0x1p-50), VM_RZ)), 0xbf800000u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(DBL_MAX, VM_RN)), 0x7f800000u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(DBL_MAX, VM_RZ)), 0x7f7fffffu);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(-DBL_MAX, VM_RP)), 0xff7fffffu);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1e-50, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(1e-50, VM_RP)), 0x00000001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(-1e-300, VM_RM)), 0x80000001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(0x1p-150, VM_RN)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(0x1p-150, VM_RNA)), 0x00000001u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(0x1.8p-149, VM_RN)), 0x00000002u);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(f64(0x7ff0000000000001ull), VM_RZ)),
                      VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(NAN, VM_RN)), VM_F32_CANONICAL_NAN);
    ck_assert_uint_eq(bits32(vm_f64_to_f32(-0.0, VM_RP)), 0x80000000u);
    /* .ftz / .sat on the result */
    ck_assert_uint_eq(bits32(vm_ftz_f32(vm_f64_to_f32(1e-40, VM_RN))), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_sat_f32(vm_f64_to_f32(1.0 + 0x1p-30, VM_RP))), 0x3f800000u);
    /* f32 -> f64: exact, NaN payload kept and quieted */
    ck_assert_uint_eq(bits64(vm_f32_to_f64(1.5f)), bits64(1.5));
    ck_assert_uint_eq(bits64(vm_f32_to_f64(f32(0x00000001u))), bits64(0x1p-149));
    ck_assert_uint_eq(bits64(vm_f32_to_f64(f32(0x7fa00001u))), 0x7ffc000020000000ull);
    ck_assert_uint_eq(bits64(vm_f32_to_f64(f32(0xffc00000u))), 0xfff8000000000000ull);

    /* round to integral, f32 */
    ck_assert_uint_eq(bits32(vm_rint_f32(2.5f, VM_RN, 0)), bits32(2.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(3.5f, VM_RN, 0)), bits32(4.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(9.5f, VM_RN, 0)), bits32(10.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(10.5f, VM_RN, 0)), bits32(10.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(-2.5f, VM_RN, 0)), bits32(-2.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(2.5f, VM_RNA, 0)), bits32(3.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(-2.5f, VM_RNA, 0)), bits32(-3.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(-0.3f, VM_RZ, 0)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(-0.3f, VM_RP, 0)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(-0.3f, VM_RN, 0)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(-0.7f, VM_RN, 0)), bits32(-1.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(0.3f, VM_RM, 0)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(0.3f, VM_RP, 0)), bits32(1.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(8388607.5f, VM_RN, 0)), bits32(8388608.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(8388606.5f, VM_RN, 0)), bits32(8388606.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(1e30f, VM_RM, 0)), bits32(1e30f));
    ck_assert_uint_eq(bits32(vm_rint_f32(-INFINITY, VM_RZ, 0)), 0xff800000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(1e-40f, VM_RP, 0)), bits32(1.0f));
    ck_assert_uint_eq(bits32(vm_rint_f32(1e-40f, VM_RP, 1)), 0x00000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(-1e-40f, VM_RM, 1)), 0x80000000u);
    ck_assert_uint_eq(bits32(vm_rint_f32(f32(0x7fa00000u), VM_RN, 0)), VM_F32_CANONICAL_NAN);
    /* f64 */
    ck_assert_uint_eq(bits64(vm_rint_f64(0x1p52 - 0.5, VM_RN)), bits64(0x1p52));
    ck_assert_uint_eq(bits64(vm_rint_f64(0x1p52 - 1.5, VM_RN)), bits64(0x1p52 - 2));
    ck_assert_uint_eq(bits64(vm_rint_f64(-2.5, VM_RN)), bits64(-2.0));
    ck_assert_uint_eq(bits64(vm_rint_f64(-2.5, VM_RM)), bits64(-3.0));
    ck_assert_uint_eq(bits64(vm_rint_f64(2.000001, VM_RP)), bits64(3.0));
    ck_assert_uint_eq(bits64(vm_rint_f64(-0.5, VM_RN)), 0x8000000000000000ull);
    ck_assert_uint_eq(bits64(vm_rint_f64(0x1p-1074, VM_RP)), bits64(1.0));
    ck_assert_uint_eq(bits64(vm_rint_f64(f64(0x7ff0000000000002ull), VM_RN)),
                      0x7ff8000000000002ull);
    /* f16 / bf16 */
    ck_assert_uint_eq(vm_rint_f16(0x4100, VM_RN), 0x4000);  /* 2.5 -> 2 */
    ck_assert_uint_eq(vm_rint_f16(0x4100, VM_RNA), 0x4200); /* 2.5 -> 3 */
    ck_assert_uint_eq(vm_rint_f16(0x3800, VM_RP), 0x3c00);  /* 0.5 -> 1 */
    ck_assert_uint_eq(vm_rint_f16(0xb800, VM_RN), 0x8000);  /* -0.5 -> -0 */
    ck_assert_uint_eq(vm_rint_f16(0x7bff, VM_RP), 0x7bff);
    ck_assert_uint_eq(vm_rint_f16(0x7e00, VM_RP), 0x7fff);
    ck_assert_uint_eq(vm_rint_bf16(0x3fc0, VM_RN), 0x4000);  /* 1.5 -> 2 */
    ck_assert_uint_eq(vm_rint_bf16(0xbfc0, VM_RZ), 0xbf80);  /* -1.5 -> -1 */
    ck_assert_uint_eq(vm_rint_bf16(0x3f00, VM_RN), 0x0000);  /* 0.5 -> 0 */
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *numeric_suite(void)
{
    Suite *s = suite_create("numeric");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_f32_to_f16_corners);
    tcase_add_test(tc, test_f32_to_bf16_corners);
    tcase_add_test(tc, test_f64_to_f16_corners);
    tcase_add_test(tc, test_f64_to_bf16_corners);
    tcase_add_test(tc, test_narrow_flags);
    tcase_add_test(tc, test_tf32_corners);
    tcase_add_test(tc, test_narrow_random_vs_reference);
    tcase_add_test(tc, test_f16_round_trip_exhaustive);
    tcase_add_test(tc, test_bf16_round_trip_exhaustive);
    tcase_add_test(tc, test_f32_arith_corners);
    tcase_add_test(tc, test_f32_arith_random);
    tcase_add_test(tc, test_f64_arith_corners);
    tcase_add_test(tc, test_f64_arith_random);
    tcase_add_test(tc, test_half_arith_corners);
    tcase_add_test(tc, test_half_arith_random);
    tcase_add_test(tc, test_ftz_sat);
    tcase_add_test(tc, test_minmax);
    tcase_add_test(tc, test_testp);
    tcase_add_test(tc, test_cvt_float_to_int);
    tcase_add_test(tc, test_cvt_float_to_int_random);
    tcase_add_test(tc, test_cvt_int_to_float);
    tcase_add_test(tc, test_cvt_int_to_float_random);
    tcase_add_test(tc, test_f64_to_f32_and_rint);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(numeric_suite());
    int failed;
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
