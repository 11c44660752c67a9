/* kt_half.h - kernel tests: f16, bf16 and tf32 (tests/kernels/half.cu).
 *
 * Conversions are checked bit for bit in every rounding mode against
 * kt_encode (kt_ref.h), arithmetic against the exactly computed result
 * rounded once to the narrow format. Where cuda_fp16.h lowers an operation
 * to an f32 sequence (__hdiv, hsqrt), the reference follows that sequence.
 * NaN results compare equal to any NaN where PTX leaves the pattern open
 * (neg, abs); elsewhere the canonical 0x7fff is expected. Included once, by
 * test_kernels.c only.
 */
#ifndef KT_HALF_H
#define KT_HALF_H

#include "kt_harness.h"
#include "kt_ref.h"

/* True if the f16 (kt_h_nan) or bf16 (kt_b_nan) pattern h is a NaN. */
static int kt_h_nan(uint16_t h) { return (h & 0x7fff) > 0x7c00; }
static int kt_b_nan(uint16_t h) { return (h & 0x7fff) > 0x7f80; }

/* Compares 16-bit patterns like kt_expect_bits, except that where
 * loose[i % group] is set two NaNs (of format f) compare equal. */
static void kt_expect_h(const kt_ctx *c, const char *what, const uint16_t *got, const uint16_t *want, size_t n,
                        size_t group, const char *loose, const kt_format *f)
{
    static uint16_t fixed[16384];
    ck_assert(n <= sizeof fixed / sizeof fixed[0]);
    for (size_t i = 0; i < n; i++) {
        int nan_g = f == &KT_F16 ? kt_h_nan(got[i]) : kt_b_nan(got[i]);
        int nan_w = f == &KT_F16 ? kt_h_nan(want[i]) : kt_b_nan(want[i]);
        fixed[i] = want[i];
        if (loose && loose[i % group] == 'x' && nan_g && nan_w)
            fixed[i] = got[i];
    }
    kt_expect_bits(c, what, got, fixed, n, 2, group);
}

/* Fills n f16 patterns: specials (zeros, infinities, NaN, max, subnormals,
 * 1 +- ulp) then random finite values with exponents in [-12, 12]. */
static void kt_f16_inputs(uint16_t *h, int n, uint64_t seed)
{
    static const uint16_t special[] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0x8001,
                                       0x03ff, 0x0400, 0x3c00, 0x3c01, 0xbc00, 0x3bff, 0x5640, 0x1000, 0x7800};
    const int ns = (int)(sizeof special / sizeof special[0]);
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        if (i < ns) {
            h[i] = special[i];
            continue;
        }
        unsigned e = 15 - 12 + kt_rand(&r) % 25;
        h[i] = (uint16_t)(((kt_rand(&r) & 1) << 15) | (e << 10) | (kt_rand(&r) & 0x3ff));
    }
}

/* IEEE maxNum/minNum with -0 < +0; two NaNs give the canonical NaN. */
static double kt_maxnum(double a, double b, int is_min, int *both_nan)
{
    *both_nan = isnan(a) && isnan(b);
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    if (a == 0 && b == 0)
        return is_min ? (signbit(a) ? a : b) : (signbit(a) ? b : a);
    return is_min ? (a < b ? a : b) : (a > b ? a : b);
}

/* The f16 result of cuda_fp16.h's __hdiv: rcp.approx.ftz.f32 (taken as
 * the correctly rounded reciprocal), a product rounded to f16, and one
 * Newton correction when the quotient is a tiny nonzero subnormal. */
static uint16_t kt_hdiv_ref(uint16_t a, uint16_t b)
{
    float fa = (float)kt_h2d(a), fb = (float)kt_h2d(b);
    float r = kt_ftz(1.0f / fb), q = fa * r;
    uint16_t h = kt_to_f16(q, KT_RN);
    double ah = fabs(kt_h2d(h));
    if (ah < kt_h2d(143) && ah > 0) {
        float e = fmaf(-fb, q, fa);
        h = kt_to_f16(fmaf(r, e, q), KT_RN);
    }
    return h;
}

/* half_arith: __hadd/__hsub/__hmul/__hdiv/__hfma/__hmax/__hmin/__hneg/
 * __habs/hsqrt over specials and random f16 values. */
START_TEST(test_half_arith)
{
    enum { N = 160 };
    static uint16_t a[N], b[N], cc[N], got[10 * N], want[10 * N];
    kt_f16_inputs(a, N, 50);
    kt_f16_inputs(b, N, 51);
    kt_f16_inputs(cc, N, 52);
    for (int i = 0; i < 18; i++)
        b[i] = b[(i * 5 + 3) % 18], cc[i] = cc[(i * 7 + 1) % 18];
    for (int i = 0; i < N; i++) {
        double x = kt_h2d(a[i]), y = kt_h2d(b[i]), z = kt_h2d(cc[i]);
        uint16_t *w = want + 10 * i;
        int bn;
        w[0] = kt_to_f16(x + y, KT_RN);
        w[1] = kt_to_f16(x - y, KT_RN);
        w[2] = kt_to_f16(x * y, KT_RN);
        w[3] = kt_hdiv_ref(a[i], b[i]);
        w[4] = kt_to_f16(fma(x, y, z), KT_RN);
        w[5] = kt_to_f16(kt_maxnum(x, y, 0, &bn), KT_RN);
        w[6] = kt_to_f16(kt_maxnum(x, y, 1, &bn), KT_RN);
        w[7] = a[i] ^ 0x8000;
        w[8] = a[i] & 0x7fff;
        w[9] = kt_to_f16(sqrtf((float)x), KT_RN);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "half_arith", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_expect_h(&c, "half_arith (add,sub,mul,div,fma,max,min,neg,abs,sqrt)", got, want, 10 * N, 10,
                "......." "xx.", &KT_F16);
    kt_close(&c);
}
END_TEST

/* half2_arith: packed add/sub/mul/fma/fma.sat/max per half, and the
 * flags __hlt(low) | __hbgt2 << 1. */
START_TEST(test_half2_arith)
{
    enum { N = 160 };
    static uint16_t a[2 * N], b[2 * N], cc[2 * N], got[12 * N], want[12 * N];
    static int32_t fgot[N], fwant[N];
    kt_f16_inputs(a, 2 * N, 53);
    kt_f16_inputs(b, 2 * N, 54);
    kt_f16_inputs(cc, 2 * N, 55);
    for (int i = 0; i < 18; i++)
        b[i] = a[(i * 5 + 3) % 18], b[i + 18] = a[i];
    for (int i = 0; i < N; i++) {
        int gt = 1;
        for (int h = 0; h < 2; h++) {
            int k = 2 * i + h, bn;
            double x = kt_h2d(a[k]), y = kt_h2d(b[k]), z = kt_h2d(cc[k]);
            double f = fma(x, y, z), sat = isnan(f) ? 0.0 : f < 0 ? 0.0 : f > 1 ? 1.0 : f == 0 ? 0.0 : f;
            uint16_t *w = want + 12 * i + h;
            w[0] = kt_to_f16(x + y, KT_RN);
            w[2] = kt_to_f16(x - y, KT_RN);
            w[4] = kt_to_f16(x * y, KT_RN);
            w[6] = kt_to_f16(f, KT_RN);
            w[8] = kt_to_f16(sat, KT_RN);
            w[10] = kt_to_f16(kt_maxnum(x, y, 0, &bn), KT_RN);
            gt &= x > y;
        }
        fwant[i] = (kt_h2d(a[2 * i]) < kt_h2d(b[2 * i])) | (gt << 1);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got), dflags = kt_buf(&c, NULL, sizeof fgot);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &dflags, &n};
    kt_run(&c, "half2_arith", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_get(&c, fgot, dflags, sizeof fgot);
    kt_expect_h(&c, "half2_arith (add2,sub2,mul2,fma2,fma2_sat,max2; lo/hi)", got, want, 12 * N, 12, NULL, &KT_F16);
    KT_EXPECT(&c, "half2_arith flags (hlt lo | hbgt2 << 1)", (uint32_t *)fgot, (uint32_t *)fwant, N, 1);
    kt_close(&c);
}
END_TEST

/* Fills n bf16 patterns: specials then random values, exponents +-20. */
static void kt_bf16_inputs(uint16_t *h, int n, uint64_t seed)
{
    static const uint16_t special[] = {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f7f, 0x0001, 0x3f80, 0x3f81,
                                       0xbf80, 0x4049, 0x0080};
    const int ns = (int)(sizeof special / sizeof special[0]);
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        if (i < ns) {
            h[i] = special[i];
            continue;
        }
        unsigned e = 127 - 20 + kt_rand(&r) % 41;
        h[i] = (uint16_t)(((kt_rand(&r) & 1) << 15) | (e << 7) | (kt_rand(&r) & 0x7f));
    }
}

/* bf16_arith (add/sub/mul/div/max/min/neg) and bf16x2_arith (add2, mul2,
 * min2): results rounded once to bf16. */
START_TEST(test_bf16_arith)
{
    enum { N = 160 };
    static uint16_t a[2 * N], b[2 * N], got[7 * N], want[7 * N], got2[6 * N], want2[6 * N];
    kt_bf16_inputs(a, 2 * N, 56);
    kt_bf16_inputs(b, 2 * N, 57);
    for (int i = 0; i < 12; i++)
        b[i] = a[(i * 5 + 3) % 12];
    for (int i = 0; i < N; i++) {
        double x = kt_b2d(a[i]), y = kt_b2d(b[i]);
        uint16_t *w = want + 7 * i;
        int bn;
        w[0] = kt_to_bf16(x + y, KT_RN);
        w[1] = kt_to_bf16(x - y, KT_RN);
        w[2] = kt_to_bf16(x * y, KT_RN);
        w[3] = kt_to_bf16(x / y, KT_RN);
        w[4] = kt_to_bf16(kt_maxnum(x, y, 0, &bn), KT_RN);
        w[5] = kt_to_bf16(kt_maxnum(x, y, 1, &bn), KT_RN);
        w[6] = a[i] ^ 0x8000;
    }
    for (int i = 0; i < N; i++)
        for (int h = 0; h < 2; h++) {
            int k = 2 * i + h, bn;
            double x = kt_b2d(a[k]), y = kt_b2d(b[k]);
            want2[6 * i + h] = kt_to_bf16(x + y, KT_RN);
            want2[6 * i + 2 + h] = kt_to_bf16(x * y, KT_RN);
            want2[6 * i + 4 + h] = kt_to_bf16(kt_maxnum(x, y, 1, &bn), KT_RN);
        }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "bf16_arith", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_expect_h(&c, "bf16_arith (add,sub,mul,div,max,min,neg)", got, want, 7 * N, 7, "......x", &KT_BF16);
    dout = kt_buf(&c, NULL, sizeof got2);
    kt_run(&c, "bf16x2_arith", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got2, dout, sizeof got2);
    kt_expect_h(&c, "bf16x2_arith (add2 lo,hi, mul2 lo,hi, min2 lo,hi)", got2, want2, 6 * N, 6, NULL, &KT_BF16);
    kt_close(&c);
}
END_TEST

/* Fills n f32 inputs for narrowing conversions: exact f16/bf16 values,
 * ties and near-ties in both formats, overflow boundaries (65504, 65520),
 * f16 subnormals and values below them, zeros, infinities, NaN, random. */
static void kt_conv_inputs(float *x, int n, uint64_t seed)
{
    static const uint32_t special[] = {
        0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0x3f801000, 0x3f802000,
        0x3f803000, 0x3f801001, 0xbf801000, 0xbf803000, 0x477fe000, 0x477fefff, 0x477ff000, 0xc77ff000,
        0x47800000, 0x7f7fffff, 0xff7fffff, 0x33800000, 0x33000000, 0x33000001, 0xb3000000, 0x33c00000,
        0x387fc000, 0x38800000, 0x1e3ce508, 0x00000001, 0x80000001, 0x3f808000, 0x3f818000, 0x3f808001,
        0xbf808000, 0x7f7f8000, 0x7f7f7fff, 0x3eaaaaab, 0x00400000, 0x3f800fff};
    const int ns = (int)(sizeof special / sizeof special[0]);
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        if (i < ns)
            x[i] = kt_u2f(special[i]);
        else if (i % 2)
            x[i] = kt_u2f(kt_rand(&r) & 0xbfffffffu) * 1e-30f; /* wide exponent spread */
        else
            x[i] = kt_randf(&r, -70000.0f, 70000.0f) / (float)(1u << (kt_rand(&r) % 24));
    }
}

/* to_half: f32 -> f16 and f32 -> bf16 with rn/rz/rm/rp, bit-exact, and
 * the f16/bf16 -> f32 widening of the rn results. */
START_TEST(test_to_half)
{
    enum { N = 256 };
    static float x[N], back[2 * N], bwant[2 * N];
    static uint16_t h[4 * N], hw[4 * N], bf[4 * N], bw[4 * N];
    static const kt_round modes[4] = {KT_RN, KT_RZ, KT_RM, KT_RP};
    kt_conv_inputs(x, N, 60);
    for (int i = 0; i < N; i++) {
        for (int m = 0; m < 4; m++) {
            hw[4 * i + m] = kt_to_f16(x[i], modes[m]);
            bw[4 * i + m] = kt_to_bf16(x[i], modes[m]);
        }
        bwant[2 * i] = (float)kt_h2d(hw[4 * i]);
        bwant[2 * i + 1] = (float)kt_b2d(bw[4 * i]);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t dx = kt_buf(&c, x, sizeof x), dh = kt_buf(&c, NULL, sizeof h), db = kt_buf(&c, NULL, sizeof bf),
             dback = kt_buf(&c, NULL, sizeof back);
    int n = N;
    void *args[] = {&dx, &dh, &db, &dback, &n};
    kt_run(&c, "to_half", KT_D1(4), KT_D1(64), 0, args);
    kt_get(&c, h, dh, sizeof h);
    kt_get(&c, bf, db, sizeof bf);
    kt_get(&c, back, dback, sizeof back);
    KT_EXPECT(&c, "to_half f32->f16 (rn,rz,rm,rp)", h, hw, 4 * N, 4);
    KT_EXPECT(&c, "to_half f32->bf16 (rn,rz,rm,rp)", bf, bw, 4 * N, 4);
    kt_expect_fp(&c, "to_half widened back (f16, bf16)", back, bwant, 2 * N, 4, 2, NULL);
    kt_close(&c);
}
END_TEST

/* Rounds a finite double to an integer in mode r (rni/rzi/rmi/rpi). */
static double kt_round_integral(double x, kt_round r)
{
    switch (r) {
    case KT_RZ: return trunc(x);
    case KT_RM: return floor(x);
    case KT_RP: return ceil(x);
    default: return nearbyint(x);
    }
}

/* cvt from a float value (held exactly in a double) to a signed integer
 * of `bits` bits in mode r: clamps, NaN gives 0 (1 << (bits-1) when
 * nan_min is set, as for f64 sources and 64-bit destinations). */
static int64_t kt_cvt_signed(double x, kt_round r, int bits, int nan_min)
{
    double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
    if (isnan(x))
        return nan_min ? (bits == 64 ? INT64_MIN : -(int64_t)ldexp(1.0, bits - 1)) : 0;
    double v = kt_round_integral(x, r);
    if (v < lo)
        return bits == 64 ? INT64_MIN : (int64_t)lo;
    if (v >= hi)
        return bits == 64 ? INT64_MAX : (int64_t)hi - 1;
    return (int64_t)v;
}

/* As kt_cvt_signed for unsigned destinations: negative gives 0. */
static uint64_t kt_cvt_unsigned(double x, kt_round r, int bits, int nan_min)
{
    if (isnan(x))
        return nan_min ? 1ull << (bits - 1) : 0;
    double v = kt_round_integral(x, r);
    if (v <= 0)
        return 0;
    if (v >= ldexp(1.0, bits))
        return bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    return (uint64_t)v;
}

/* half_int_conv: f16 -> s32 in rni/rzi/rmi/rpi, f16 -> s16 rzi, and
 * s32 -> f16 rn (overflow to inf) -> s32 rzi (inf clamps). */
START_TEST(test_half_int_conv)
{
    enum { N = 160 };
    static uint16_t a[N];
    static int32_t got[6 * N], want[6 * N];
    static const kt_round modes[4] = {KT_RN, KT_RZ, KT_RM, KT_RP};
    kt_f16_inputs(a, N, 61);
    for (int i = 0; i < N; i++) {
        double x = kt_h2d(a[i]);
        for (int m = 0; m < 4; m++)
            want[6 * i + m] = (int32_t)kt_cvt_signed(x, modes[m], 32, 0);
        want[6 * i + 4] = (int32_t)kt_cvt_signed(x, KT_RZ, 16, 0);
        want[6 * i + 5] = (int32_t)kt_cvt_signed(kt_h2d(kt_to_f16(i * 1001.0, KT_RN)), KT_RZ, 32, 0);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &dout, &n};
    kt_run(&c, "half_int_conv", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "half_int_conv (rni,rzi,rmi,rpi s32, rzi s16, s32->f16->s32)", (uint32_t *)got,
              (uint32_t *)want, 6 * N, 6);
    kt_close(&c);
}
END_TEST

/* pack_half2: cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 (a[2i] in the low half)
 * and __half22float2. */
START_TEST(test_pack_half2)
{
    enum { N = 128 };
    static float a[2 * N], f[2 * N], fw[2 * N];
    static uint16_t h[2 * N], hw[2 * N], bf[2 * N], bw[2 * N];
    kt_conv_inputs(a, 2 * N, 62);
    for (int i = 0; i < 2 * N; i++) {
        hw[i] = kt_to_f16(a[i], KT_RN);
        bw[i] = kt_to_bf16(a[i], KT_RN);
        fw[i] = (float)kt_h2d(hw[i]);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), dh = kt_buf(&c, NULL, sizeof h), db = kt_buf(&c, NULL, sizeof bf),
             df = kt_buf(&c, NULL, sizeof f);
    int n = N;
    void *args[] = {&da, &dh, &db, &df, &n};
    kt_run(&c, "pack_half2", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, h, dh, sizeof h);
    kt_get(&c, bf, db, sizeof bf);
    kt_get(&c, f, df, sizeof f);
    KT_EXPECT(&c, "pack_half2 f16x2 (lo, hi)", h, hw, 2 * N, 2);
    KT_EXPECT(&c, "pack_half2 bf16x2 (lo, hi)", bf, bw, 2 * N, 2);
    kt_expect_fp(&c, "pack_half2 half22float2", f, fw, 2 * N, 4, 2, NULL);
    kt_close(&c);
}
END_TEST

/* tf32_round (sm_80): cvt.rna.tf32.f32 as an f32 pattern with the low 13
 * bits zero, ties away from zero; any NaN accepted for a NaN input. */
START_TEST(test_tf32)
{
    enum { N = 256 };
    static float x[N];
    static uint32_t got[N], want[N];
    kt_conv_inputs(x, N, 63);
    for (int i = 0; i < N; i++)
        want[i] = isnan(x[i]) ? 0x7fffe000u : (uint32_t)kt_encode(x[i], &KT_TF32, KT_RNA);
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t dx = kt_buf(&c, x, sizeof x), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&dx, &dout, &n};
    kt_run(&c, "tf32_round", KT_D1(4), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    for (int i = 0; i < N; i++)
        if (isnan(x[i]) && isnan(kt_u2f(got[i])))
            want[i] = got[i];
    KT_EXPECT(&c, "tf32_round (cvt.rna.tf32.f32)", got, want, N, 1);
    kt_close(&c);
}
END_TEST

/* bf16_fma (fma.rn.bf16 and the low half of fma.rn.bf16x2) and
 * half_nan_minmax (max.NaN/min.NaN.f16: any NaN gives 0x7fff); sm_80+. */
START_TEST(test_bf16_fma_nan_minmax)
{
    enum { N = 160 };
    static uint16_t a[N], b[N], cc[N], got[2 * N], want[2 * N];
    kt_bf16_inputs(a, N, 64);
    kt_bf16_inputs(b, N, 65);
    kt_bf16_inputs(cc, N, 66);
    for (int i = 0; i < 12; i++)
        b[i] = a[(i * 5 + 3) % 12], cc[i] = a[(i * 7 + 1) % 12];
    for (int i = 0; i < N; i++) {
        double x = kt_b2d(a[i]), y = kt_b2d(b[i]), z = kt_b2d(cc[i]);
        want[2 * i] = want[2 * i + 1] = kt_to_bf16(fma(x, y, z), KT_RN);
    }
    kt_ctx c;
    kt_open(&c, "half", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "bf16_fma", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "bf16_fma (fma.rn.bf16, fma.rn.bf16x2 low)", got, want, 2 * N, 2);

    kt_f16_inputs(a, N, 67);
    kt_f16_inputs(b, N, 68);
    for (int i = 0; i < 18; i++)
        b[i] = a[(i * 5 + 3) % 18];
    for (int i = 0; i < N; i++) {
        double x = kt_h2d(a[i]), y = kt_h2d(b[i]);
        int bn;
        if (isnan(x) || isnan(y))
            want[2 * i] = want[2 * i + 1] = 0x7fff;
        else {
            want[2 * i] = kt_to_f16(kt_maxnum(x, y, 0, &bn), KT_RN);
            want[2 * i + 1] = kt_to_f16(kt_maxnum(x, y, 1, &bn), KT_RN);
        }
    }
    da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    void *margs[] = {&da, &db, &dout, &n};
    kt_run(&c, "half_nan_minmax", KT_D1(2), KT_D1(96), 0, margs);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "half_nan_minmax (max.NaN, min.NaN)", got, want, 2 * N, 2);
    kt_close(&c);
}
END_TEST

#endif /* KT_HALF_H */
