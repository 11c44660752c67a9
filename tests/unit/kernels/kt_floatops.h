/* kt_floatops.h - kernel tests: f32/f64 rounding modes, flush-to-zero,
 * special values, conversions and approximate math (tests/kernels/
 * floatops.cu).
 *
 * Correctly rounded operations are compared bit for bit with the host FPU
 * under fesetround (kt_ref.h), conversions with kt_encode and the PTX cvt
 * clamping rules, approximate instructions within the error bounds the PTX
 * ISA documents, and CUDA's accurate library functions within a few ulp of
 * a double-precision reference. f32 NaN results are expected as the
 * canonical 0x7fffffff except where PTX leaves the pattern open (abs, neg,
 * copysign, library code), which compare equal to any NaN. Included once,
 * by test_kernels.c only.
 */
#ifndef KT_FLOATOPS_H
#define KT_FLOATOPS_H

#include <float.h>

#include "kt_harness.h"
#include "kt_ref.h"

/* Fills a, b, c with f32 corner operands (zeros, infinities, NaN,
 * subnormals, FLT_MAX, exact ties for the directed modes) then random
 * values across many binades. */
static void kt_f32_operands(float *a, float *b, float *cc, int n, uint64_t seed)
{
    static const float corner[][3] = {
        {1.0f, 0x1p-24f, 0.0f}, {1.0f, -0x1p-25f, 1.0f}, {0.0f, -0.0f, -0.0f}, {-0.0f, -0.0f, 0.0f},
        {INFINITY, -INFINITY, 1.0f}, {INFINITY, 0.0f, 1.0f}, {NAN, 1.0f, 2.0f}, {3.0f, NAN, 1.0f},
        {FLT_MAX, FLT_MAX, -FLT_MAX}, {-FLT_MAX, 2.0f, 1.0f}, {0x1p-149f, 0.5f, 0.0f}, {0x1p-126f, 0x1p-1f, -0x1p-149f},
        {0x1.fffffep-127f, 3.0f, 0.0f}, {-0x1p-140f, 0x1p-10f, 0x1p-149f}, {2.0f, 0.0f, -1.0f}, {-4.0f, 3.0f, 12.0f},
        {1.0f, 3.0f, -0x1p-30f}, {-1.0f, 3.0f, 0x1p-30f}, {0x1.000002p0f, 0x1.fffffep-1f, -1.0f},
        {10.0f, 0x1p-126f, 0.0f},
        {0x1p-75f, 0x1p-75f, 0.0f}, {-0x1p-75f, 0x1p-75f, -0.0f}, {7.0f, -7.0f, 0.0f}, {0x1p127f, 4.0f, 0.0f},
    };
    const int nc = (int)(sizeof corner / sizeof corner[0]);
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        if (i < nc) {
            a[i] = corner[i][0], b[i] = corner[i][1], cc[i] = corner[i][2];
            continue;
        }
        float *dst[3] = {&a[i], &b[i], &cc[i]};
        for (int k = 0; k < 3; k++) {
            int e = (int)(kt_rand(&r) % 60) - 30;
            *dst[k] = ldexpf(kt_randf(&r, -1.0f, 1.0f), e);
        }
        if (i % 7 == 0)
            cc[i] = -a[i] * b[i];
    }
}

/* round_f32: add/mul/fma/div/sqrt/rcp with rn, rz, rm, rp (24 results). */
START_TEST(test_round_f32)
{
    enum { N = 128 };
    static float a[N], b[N], cc[N], got[24 * N], want[24 * N];
    static const char ops[6] = {'+', '*', 'f', '/', 's', 'r'};
    kt_f32_operands(a, b, cc, N, 70);
    for (int i = 0; i < N; i++)
        for (int o = 0; o < 6; o++)
            for (int m = 0; m < 4; m++)
                want[24 * i + 4 * o + m] = kt_f32_op(ops[o], a[i], b[i], cc[i], (kt_round)m);
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "round_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "round_f32 ({add,mul,fma,div,sqrt,rcp} x {rn,rz,rm,rp})", (uint32_t *)got, (uint32_t *)want,
              24 * N, 24);
    kt_close(&c);
}
END_TEST

/* round_f64: the same 24 operations on doubles (NaN payloads not checked). */
START_TEST(test_round_f64)
{
    enum { N = 128 };
    static double a[N], b[N], cc[N], got[24 * N], want[24 * N];
    static float fa[N], fb[N], fc[N];
    static const char ops[6] = {'+', '*', 'f', '/', 's', 'r'};
    kt_f32_operands(fa, fb, fc, N, 71);
    kt_rng r = {72};
    for (int i = 0; i < N; i++) {
        double scale = i < 24 ? 1.0 : ldexp(1.0, (int)(kt_rand(&r) % 400) - 200);
        a[i] = fa[i] * scale * (1.0 + ldexp((double)kt_rand(&r), -60));
        b[i] = fb[i] * (i % 3 ? scale : 1.0);
        cc[i] = i % 7 == 0 && i >= 24 ? -a[i] * b[i] : fc[i] * scale;
    }
    a[5] = DBL_MAX, b[5] = DBL_MAX, a[6] = 0x1p-1074, b[6] = 0.5, a[7] = DBL_MIN, b[7] = -0x1p-53;
    for (int i = 0; i < N; i++)
        for (int o = 0; o < 6; o++)
            for (int m = 0; m < 4; m++)
                want[24 * i + 4 * o + m] = kt_f64_op(ops[o], a[i], b[i], cc[i], (kt_round)m);
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "round_f64", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_expect_fp(&c, "round_f64 ({add,mul,fma,div,sqrt,rcp} x {rn,rz,rm,rp})", got, want, 24 * N, 8, 24, NULL);
    kt_close(&c);
}
END_TEST

/* IEEE min/max with -0 < +0 and one NaN ignored; NaN, NaN -> canonical. */
static float kt_fminmax(float x, float y, int is_min)
{
    if (isnan(x) && isnan(y))
        return kt_u2f(0x7fffffffu);
    if (isnan(x))
        return y;
    if (isnan(y))
        return x;
    if (x == 0 && y == 0)
        return (signbit(x) != 0) == is_min ? x : y;
    return is_min ? (x < y ? x : y) : (x > y ? x : y);
}

/* ftz_f32: add/sub/mul/fma/div/sqrt/rcp/min with .ftz: subnormal inputs
 * and results become zeros of the same sign. */
START_TEST(test_ftz_f32)
{
    enum { N = 128 };
    static float a[N], b[N], cc[N], got[8 * N], want[8 * N];
    kt_f32_operands(a, b, cc, N, 73);
    kt_rng r = {74};
    for (int i = 24; i < N; i += 3) /* subnormal operands and results */
        a[i] = ldexpf(kt_randf(&r, -1, 1), -127 - (int)(kt_rand(&r) % 20)), b[i + 1] = ldexpf(b[i + 1], -110);
    for (int i = 0; i < N; i++) {
        float x = kt_ftz(a[i]), y = kt_ftz(b[i]), z = kt_ftz(cc[i]);
        float *w = want + 8 * i;
        w[0] = kt_ftz(kt_f32_op('+', x, y, 0, KT_RN));
        w[1] = kt_ftz(kt_f32_op('+', x, -y, 0, KT_RN));
        w[2] = kt_ftz(kt_f32_op('*', x, y, 0, KT_RN));
        w[3] = kt_ftz(kt_f32_op('f', x, y, z, KT_RN));
        w[4] = kt_ftz(kt_f32_op('/', x, y, 0, KT_RN));
        w[5] = kt_ftz(kt_f32_op('s', x, 0, 0, KT_RN));
        w[6] = kt_ftz(kt_f32_op('r', x, 0, 0, KT_RN));
        w[7] = kt_fminmax(x, y, 1);
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "ftz_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "ftz_f32 (add,sub,mul,fma,div,sqrt,rcp,min .ftz)", (uint32_t *)got, (uint32_t *)want, 8 * N, 8);
    kt_close(&c);
}
END_TEST

/* special_f32: fminf/fmaxf/copysignf/__saturatef/fabsf/neg/add/mul/div/sub/
 * fmodf/rintf on special pairs, and the ordered/unordered compare flags. */
START_TEST(test_special_f32)
{
    enum { N = 128 };
    static float a[N], b[N], cc[N], got[12 * N], want[12 * N];
    static uint32_t fgot[N], fwant[N];
    kt_f32_operands(a, b, cc, N, 75);
    a[24] = NAN, b[24] = NAN, a[25] = -0.0f, b[25] = 0.0f, a[26] = 5.5f, b[26] = 5.5f, a[27] = 1.5f, b[27] = -INFINITY;
    a[28] = 2.5f, b[28] = 0.75f, a[29] = -7.25f, b[29] = 2.0f, a[30] = 0.5f, b[30] = NAN, a[31] = -2.5f, b[31] = 1.0f;
    for (int i = 0; i < N; i++) {
        float x = a[i], y = b[i], *w = want + 12 * i;
        w[0] = kt_fminmax(x, y, 1);
        w[1] = kt_fminmax(x, y, 0);
        w[2] = copysignf(x, y);
        w[3] = isnan(x) || x <= 0 ? 0.0f : x > 1 ? 1.0f : x;
        w[4] = fabsf(x);
        w[5] = -x;
        w[6] = kt_canon(x + y);
        w[7] = kt_canon(x * y);
        w[8] = kt_canon(x / y);
        w[9] = kt_canon(x - y);
        w[10] = fmodf(x, y);
        w[11] = kt_canon(nearbyintf(x));
        int un = isnan(x) || isnan(y);
        fwant[i] = (uint32_t)(x < y) | (uint32_t)(x <= y) << 1 | (uint32_t)(x == y) << 2 |
                   (uint32_t)(x < y || x > y) << 3 | (uint32_t)(isnan(x) != 0) << 4 | (uint32_t)(isinf(x) != 0) << 5 |
                   (uint32_t)(signbit(x) != 0) << 6 | (uint32_t)un << 7;
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got),
             df = kt_buf(&c, NULL, sizeof fgot);
    int n = N;
    void *args[] = {&da, &db, &dout, &df, &n};
    kt_run(&c, "special_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_get(&c, fgot, df, sizeof fgot);
    kt_expect_fp(&c, "special_f32 (min,max,copysign,sat,abs,neg,add,mul,div,sub,fmod,rint)", got, want, 12 * N, 4,
                 12, "..xxxx....x.");
    KT_EXPECT(&c, "special_f32 flags (lt,le,eq,ne-ordered,isnan,isinf,signbit,unordered)", fgot, fwant, N, 1);
    kt_close(&c);
}
END_TEST

/* round_to_int_f32: rintf/floorf/ceilf/truncf/roundf (halves, -0 results,
 * 2^23 boundaries, infinities). */
START_TEST(test_round_to_int)
{
    enum { N = 128 };
    static float a[N], b[N], cc[N], got[5 * N], want[5 * N];
    static const float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, -0.25f, 0.49999997f, 8388607.5f,
                                   -8388607.5f, 8388608.0f, 16777215.0f, 0x1p30f, -0.0f, 1e-40f, -1e-40f};
    kt_f32_operands(a, b, cc, N, 76);
    for (size_t k = 0; k < sizeof halves / sizeof halves[0]; k++)
        a[24 + k] = halves[k];
    for (int i = 0; i < N; i++) {
        float x = a[i], *w = want + 5 * i;
        w[0] = nearbyintf(x), w[1] = floorf(x), w[2] = ceilf(x), w[3] = truncf(x), w[4] = roundf(x);
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &dout, &n};
    kt_run(&c, "round_to_int_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_expect_fp(&c, "round_to_int_f32 (rint,floor,ceil,trunc,round)", got, want, 5 * N, 4, 5, NULL);
    kt_close(&c);
}
END_TEST

/* f32 inputs around the integer conversion limits. */
static const float kt_f2i_corner[] = {
    2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 4294967040.0f, 4294967296.0f, 0x1p63f,
    -0x1p63f, 0x1p64f, 1e20f, -1e20f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, NAN, INFINITY, -INFINITY, -0.0f,
    1e-40f, -1e-40f, 0.99999994f, -0.99999994f, 123456.7f, -98765.43f, 65535.5f};

/* f2i: f32 -> s32/u32/s64 in rni/rzi/rmi/rpi and -> u64 rzi, saturating,
 * NaN -> 0 for 32-bit and 1 << 63 for 64-bit destinations. */
/* Runs f2i over the 96 inputs a and checks every result against the
 * references of kt_ref.h. */
static void kt_f2i_check(int variant, const float *in, const char *what)
{
    enum { N = 96 };
    static float a[N];
    static int64_t got[13 * N], want[13 * N];
    static const kt_round modes[4] = {KT_RN, KT_RZ, KT_RM, KT_RP};
    memcpy(a, in, sizeof a);
    for (int i = 0; i < N; i++) {
        double x = a[i];
        int64_t *w = want + 13 * i;
        for (int m = 0; m < 4; m++) {
            w[m] = kt_cvt_signed(x, modes[m], 32, 0);
            w[4 + m] = (int64_t)kt_cvt_unsigned(x, modes[m], 32, 0);
            w[8 + m] = kt_cvt_signed(x, modes[m], 64, 1);
        }
        w[12] = (int64_t)kt_cvt_unsigned(x, KT_RZ, 64, 1);
    }
    kt_ctx c;
    kt_open(&c, "floatops", variant, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &dout, &n};
    kt_run(&c, "f2i", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, what, (uint64_t *)got, (uint64_t *)want, 13 * N, 13);
    kt_close(&c);
}

START_TEST(test_f2i)
{
    enum { N = 96 };
    static float a[N], b[N], cc[N];
    kt_f32_operands(a, b, cc, N, 77);
    for (size_t k = 0; k < sizeof kt_f2i_corner / sizeof kt_f2i_corner[0]; k++)
        a[24 + k] = kt_f2i_corner[k];
    for (int i = 24 + 28; i < N; i++)
        a[i] = ldexpf(a[i], (int)(i % 40));
    kt_f2i_check(_i, a, "f2i ({s32,u32,s64} x {rn,rz,rm,rp}, u64 rz)");
}
END_TEST

/* d2x: f64 -> s32 rz, u32 rn, s64 rm, u64 rp (NaN -> 1 << (N-1) for an
 * f64 source) and f64 -> f32 in rn/rz/rm/rp (overflow, f32 subnormals). */
/* Runs d2x over the 96 inputs a and checks every result against the
 * references of kt_ref.h. */
static void kt_d2x_check(int variant, const double *in, const char *what)
{
    enum { N = 96 };
    static double a[N], got[8 * N], want[8 * N];
    memcpy(a, in, sizeof a);
    for (int i = 0; i < N; i++) {
        double x = a[i], *w = want + 8 * i;
        w[0] = (double)kt_cvt_signed(x, KT_RZ, 32, 1);
        w[1] = (double)kt_cvt_unsigned(x, KT_RN, 32, 1);
        w[2] = (double)kt_cvt_signed(x, KT_RM, 64, 1);
        w[3] = (double)kt_cvt_unsigned(x, KT_RP, 64, 1);
        for (int m = 0; m < 4; m++)
            w[4 + m] = isnan(x) ? x : (double)kt_u2f((uint32_t)kt_encode(x, &KT_F32, (kt_round)m));
    }
    kt_ctx c;
    kt_open(&c, "floatops", variant, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &dout, &n};
    kt_run(&c, "d2x", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_expect_fp(&c, what, got, want, 8 * N, 8, 8, NULL);
    kt_close(&c);
}

START_TEST(test_d2x)
{
    enum { N = 96 };
    static double a[N];
    static const double corner[] = {
        1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50, 1.0 - 0x1p-25, -1.0 - 0x1p-24, 1e39, -1e39, 3.4028235677973366e38,
        1e-40, -1e-40, 1e-50, -1e-50, 0x1p-149 * 1.5, 0x1p-149 * 2.5, 2147483647.5, 2147483648.0, -2147483648.5,
        4294967295.4, 4294967295.6, 0x1p63, -0x1p63, 0x1p64, -1.0, -0.5, 0.5, NAN, INFINITY, -INFINITY, -0.0};
    const int nc = (int)(sizeof corner / sizeof corner[0]);
    kt_rng r = {78};
    for (int i = 0; i < N; i++)
        a[i] = i < nc ? corner[i] : ldexp((double)(int32_t)kt_rand(&r) + (double)kt_rand(&r) / 4294967296.0,
                                          (int)(kt_rand(&r) % 80) - 40);
    kt_d2x_check(_i, a, "d2x (s32 rz, u32 rn, s64 rm, u64 rp, f32 rn, rz, rm, rp)");
}
END_TEST

/* cvt_in_range: the interpreter converts a warp whose lanes all hold
 * ordinary values (no NaN, nothing out of the destination's range) on a
 * path of its own (cvt_fast in src/vm/interp.c); the tests above mix
 * special values into every warp. Here each warp of 32 holds values of
 * one kind: non-negative and below 2^31 (every conversion in range),
 * negative down to -2^31 (the signed ones), and 2^31 up to 2^32 (u32 and
 * the 64-bit ones), with the rounding ties and the largest values below
 * each limit. */
START_TEST(test_cvt_in_range)
{
    enum { N = 96 };
    static float f[N];
    static double d[N];
    static const float fpos[] = {0.5f, 1.5f, 2.5f, 3.5f, 0.0f, -0.0f, 2147483520.0f, 1e-40f, 0.99999994f,
                                 65535.5f, 123456.7f, 8388607.5f, 16777215.0f, 1.0f};
    static const float fneg[] = {-0.5f, -1.5f, -2.5f, -3.5f, -2147483648.0f, -2147483520.0f, -1e-40f,
                                 -0.99999994f, -98765.43f, -8388607.5f, -16777217.0f, -1.0f};
    static const float fbig[] = {2147483648.0f, 4294967040.0f, 3e9f, 2147483904.0f};
    static const double dpos[] = {0.5, 1.5, 2.5, 3.5, 0.0, -0.0, 2147483647.4, 2147483646.5, 2147483647.0,
                                  1e-300, 0.49999999999999994, 4503599627370495.5 / 2097152.0, 1.0};
    static const double dneg[] = {-0.5, -1.5, -2.5, -2147483648.0, -2147483647.9, -1e-300, -0.49999999999999994,
                                  -1.0, -123456789.75};
    static const double df32[] = {1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50, 1.0 - 0x1p-25, -1.0 - 0x1p-24,
                                  1e39, -1e39, 3.4028235677973366e38, 1e-40, -1e-40, 1e-50, -1e-50,
                                  0x1p-149 * 1.5, 0x1p-149 * 2.5, 0x1p63, 0x1p64, INFINITY, -INFINITY};
    kt_rng r = {79};
    for (int i = 0; i < N; i++) {
        int w = i / 32, k = i % 32;
        uint32_t u = kt_rand(&r);
        if (w == 0) {
            f[i] = k < (int)(sizeof fpos / sizeof fpos[0]) ? fpos[k] : (float)(u >> 2) / (float)(1u << (u % 20));
            d[i] = k < (int)(sizeof dpos / sizeof dpos[0]) ? dpos[k] : (double)(u >> 1) / (double)(1u << (u % 24));
        } else if (w == 1) {
            f[i] = k < (int)(sizeof fneg / sizeof fneg[0]) ? fneg[k] : -(float)(u >> 2) / (float)(1u << (u % 20));
            d[i] = k < (int)(sizeof dneg / sizeof dneg[0]) ? dneg[k] : -(double)(u >> 1) / (double)(1u << (u % 24));
        } else {
            f[i] = k < (int)(sizeof fbig / sizeof fbig[0]) ? fbig[k] : 2147483648.0f + (float)(u >> 2);
            d[i] = k < (int)(sizeof df32 / sizeof df32[0]) ? df32[k] : ldexp((double)u, (int)(u % 200) - 100);
        }
    }
    kt_f2i_check(_i, f, "f2i of in-range warps");
    kt_d2x_check(_i, d, "d2x of in-range warps");
}
END_TEST

/* Rounds a 64-bit magnitude v (negative if neg) to f32 in mode r. */
static float kt_int_to_f32(uint64_t v, int neg, kt_round r)
{
    int msb = v ? 63 - __builtin_clzll(v) : 0;
    double exact;
    if (msb < 53) {
        exact = (double)v;
    } else { /* keep 25 bits and a sticky bit: enough for one f32 rounding */
        int shift = msb - 24;
        uint64_t m = v >> shift, rest = v & ((1ull << shift) - 1);
        exact = ldexp((double)((m << 1) | (rest != 0)), shift - 1);
    }
    return kt_u2f((uint32_t)kt_encode(neg ? -exact : exact, &KT_F32, r));
}

/* i2f: s32/u32/s64/u64 -> f32 in each rounding mode, and (float)(double)L
 * (two roundings). */
START_TEST(test_i2f)
{
    enum { N = 96 };
    static uint32_t a[N], b[N], cc[N];
    static float got[12 * N], want[12 * N];
    kt_int_inputs(a, b, cc, N, 79);
    a[40] = 16777217, a[41] = 16777219, a[42] = 0xfeffffffu, a[43] = 33554435, a[44] = 0x80000001u;
    for (int i = 0; i < N; i++) {
        int32_t x = (int32_t)a[i];
        uint32_t u = a[i];
        int64_t L = (int64_t)((uint64_t)(int64_t)x << 20) + x;
        uint64_t mag = L < 0 ? 0 - (uint64_t)L : (uint64_t)L;
        uint64_t xm = x < 0 ? 0 - (uint64_t)(int64_t)x : (uint64_t)x;
        float *w = want + 12 * i;
        for (int m = 0; m < 4; m++) {
            w[m] = kt_int_to_f32(xm, x < 0, (kt_round)m);
            w[6 + m] = kt_int_to_f32(mag, L < 0, (kt_round)m);
        }
        w[4] = kt_int_to_f32(u, 0, KT_RN), w[5] = kt_int_to_f32(u, 0, KT_RZ);
        w[10] = kt_int_to_f32((uint64_t)L, 0, KT_RP);
        w[11] = (float)(double)L;
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &dout, &n};
    kt_run(&c, "i2f", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "i2f (s32 rn,rz,rm,rp, u32 rn,rz, s64 rn,rz,rm,rp, u64 rp, via f64)", (uint32_t *)got,
              (uint32_t *)want, 12 * N, 12);
    kt_close(&c);
}
END_TEST

/* approx_f32 within the PTX error bounds (ex2 2 ulp, lg2 2^-22, sin/cos
 * 2^-20.5 absolute on [-pi, pi], tanh 2^-11, rsqrt 2^-22.9, div.approx
 * 2 ulp); sqrtf is sqrt.rn and must be exact. Elements 0-2 are 0, +inf and
 * -1 (special cases, exact). */
START_TEST(test_approx_f32)
{
    enum { N = 128 };
    static float a[N], b[N], got[12 * N];
    static double gotd[12 * N], want[12 * N];
    kt_rng r = {80};
    for (int i = 0; i < N; i++) {
        a[i] = i == 0 ? 0.0f : i == 1 ? INFINITY : i == 2 ? -1.0f : kt_randf(&r, 0.05f, 3.1f);
        b[i] = kt_randf(&r, 0.25f, 3.0f);
    }
    for (int i = 0; i < N; i++) {
        float x = a[i], y = b[i];
        double *w = want + 12 * i;
        w[0] = exp2((double)(x * 1.44269502f));
        w[1] = log2((double)x) * (double)0.693147182f;
        w[2] = sin((double)x), w[3] = cos((double)x), w[4] = exp2((double)x), w[5] = log2((double)x);
        w[6] = tanh((double)x), w[7] = 1.0 / sqrt((double)x), w[8] = (double)sqrtf(x);
        w[9] = exp2((double)(y * (float)log2((double)x))), w[10] = (double)x / y, w[11] = exp2((double)x);
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "approx_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    for (int i = 0; i < 12 * N; i++)
        gotd[i] = got[i];
    static const double abs_tol[12] = {0, 0x1p-21, 0x1p-20, 0x1p-20, 0, 0x1p-21, 0, 0, 0, 0, 0, 0};
    static const double rel_tol[12] = {0x1p-21, 0x1p-21, 0, 0, 0x1p-21, 0x1p-21, 0x1p-10,
                                       0x1p-22, 0x1p-24, 0x1p-17, 0x1p-21, 0x1p-21};
    for (int k = 0; k < 12; k++) {
        static double g[N], w[N];
        char what[96];
        static const char *names[12] = {"__expf", "__logf", "__sinf", "__cosf", "exp2f", "__log2f",
                                        "tanh.approx", "rsqrtf", "sqrtf", "__powf", "__fdividef", "ex2.approx.ftz"};
        for (int i = 0; i < N; i++)
            g[i] = gotd[12 * i + k], w[i] = want[12 * i + k];
        snprintf(what, sizeof what, "approx_f32 %s", names[k]);
        kt_expect_f64_close(&c, what, g, w, N, 1, abs_tol[k], rel_tol[k]);
    }
    kt_close(&c);
}
END_TEST

/* libm_f32 (expf, logf, sinf, cosf, tanhf, powf within 4 ulp) and
 * libm_f64 (sqrt, fma, floor, ceil, trunc, round exact; exp, log, sin, pow
 * within 2 ulp). */
START_TEST(test_libm)
{
    enum { N = 128 };
    static float a[N], b[N], got[6 * N], want[6 * N];
    static double da_[N], db_[N], dgot[10 * N], dwant[10 * N];
    kt_rng r = {81};
    for (int i = 0; i < N; i++) {
        a[i] = kt_randf(&r, 0.01f, 9.0f);
        b[i] = kt_randf(&r, -3.0f, 3.0f);
        da_[i] = (double)kt_rand(&r) / 4294967296.0 * 20.0 + 0.01 + (double)kt_rand(&r) * 0x1p-60;
        db_[i] = (double)kt_rand(&r) / 4294967296.0 * 6.0 - 3.0;
    }
    for (int i = 0; i < N; i++) {
        double x = a[i], y = b[i];
        float *w = want + 6 * i;
        w[0] = (float)exp(x), w[1] = (float)log(x), w[2] = (float)sin(x), w[3] = (float)cos(x);
        w[4] = (float)tanh(x), w[5] = (float)pow(x, y);
        double X = da_[i], Y = db_[i], *d = dwant + 10 * i;
        d[0] = sqrt(X), d[1] = exp(X), d[2] = log(X), d[3] = sin(X), d[4] = pow(X, Y);
        d[5] = fma(X, Y, X), d[6] = floor(X), d[7] = ceil(X), d[8] = trunc(X), d[9] = round(X);
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t pa = kt_buf(&c, a, sizeof a), pb = kt_buf(&c, b, sizeof b), po = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&pa, &pb, &po, &n};
    kt_run(&c, "libm_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, po, sizeof got);
    kt_expect_f32_ulps(&c, "libm_f32 (expf,logf,sinf,cosf,tanhf,powf)", got, want, 6 * N, 6, 4);
    pa = kt_buf(&c, da_, sizeof da_), pb = kt_buf(&c, db_, sizeof db_), po = kt_buf(&c, NULL, sizeof dgot);
    kt_run(&c, "libm_f64", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, dgot, po, sizeof dgot);
    static double g[N], w[N];
    for (int k = 0; k < 10; k++) {
        static const char *names[10] = {"sqrt", "exp", "log", "sin", "pow", "fma", "floor", "ceil", "trunc", "round"};
        char what[64];
        int exact = k == 0 || k >= 5;
        for (int i = 0; i < N; i++)
            g[i] = dgot[10 * i + k], w[i] = dwant[10 * i + k];
        snprintf(what, sizeof what, "libm_f64 %s", names[k]);
        kt_expect_f64_close(&c, what, g, w, N, 1, 0, exact ? 0 : 0x1p-51);
    }
    kt_close(&c);
}
END_TEST

/* nan_minmax_f32 (sm_80+: min.NaN/max.NaN, any NaN gives 0x7fffffff) and,
 * on sm_90, xorsign_max_f32 (max.xorsign.abs.f32). */
START_TEST(test_nan_minmax_xorsign)
{
    enum { N = 96 };
    static float a[N], b[N], cc[N], got[2 * N], want[2 * N], xgot[N], xwant[N];
    kt_f32_operands(a, b, cc, N, 82);
    a[30] = NAN, b[30] = NAN, a[31] = -0.0f, b[31] = 0.0f, a[32] = 0.0f, b[32] = -0.0f;
    for (int i = 0; i < N; i++) {
        int nan = isnan(a[i]) || isnan(b[i]);
        want[2 * i] = nan ? kt_u2f(0x7fffffffu) : kt_fminmax(a[i], b[i], 1);
        want[2 * i + 1] = nan ? kt_u2f(0x7fffffffu) : kt_fminmax(a[i], b[i], 0);
        float m = kt_fminmax(fabsf(a[i]), fabsf(b[i]), 0);
        xwant[i] = isnan(m) ? m : (signbit(a[i]) != signbit(b[i]) ? -m : m);
    }
    kt_ctx c;
    kt_open(&c, "floatops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "nan_minmax_f32", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "nan_minmax_f32 (min.NaN, max.NaN)", (uint32_t *)got, (uint32_t *)want, 2 * N, 2);
    if (_i == KT_SM90) {
        dout = kt_buf(&c, NULL, sizeof xgot);
        kt_run(&c, "xorsign_max_f32", KT_D1(2), KT_D1(64), 0, args);
        kt_get(&c, xgot, dout, sizeof xgot);
        kt_expect_fp(&c, "xorsign_max_f32", xgot, xwant, N, 4, 1, NULL);
    }
    kt_close(&c);
}
END_TEST

#endif /* KT_FLOATOPS_H */
