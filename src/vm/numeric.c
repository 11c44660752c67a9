/* numeric.c - out-of-line floating-point helpers for the vm room.
 *
 * Everything here is exact software arithmetic: the directed rounding
 * modes never change the host's floating-point environment (no fenv), so
 * the file needs no special compiler flags and its results do not depend
 * on what other code does with the rounding mode.  One integer rounding
 * routine (round_pack) turns an exact value mag * 2^exp into any binary
 * format in any mode; every conversion and operation reduces to it:
 *   - f32/f16/bf16 arithmetic: the exact product of two such values fits a
 *     double; sums are made "round to odd" in double (TwoSum plus a sticky
 *     last bit), which then rounds correctly to any format of <= 51 bits;
 *     quotients and square roots rounded once to double cannot sit on a
 *     rounding boundary of a 24-bit format unless exact.
 *   - f64 directed modes: exact 128-bit integer significand arithmetic.
 * This file must not print, allocate or fail.  See docs/numeric.md.
 */
#include "numeric.h"

__extension__ typedef unsigned __int128 vm_u128;

#define F64_FRAC_MASK 0x000fffffffffffffull
#define F64_HIDDEN (1ull << 52)
#define F64_QUIET (1ull << 51)

/* ------------------------------------------------------------------ */
/* The rounding core                                                    */
/* ------------------------------------------------------------------ */

/* Bits of the result for an overflow in mode r: inf, or the largest
 * finite value when r rounds toward zero for this sign. */
static uint64_t overflow_result(unsigned sign, int frac_bits, int exp_bits,
                                vm_round r)
{
    uint64_t inf = ((1ull << exp_bits) - 1) << frac_bits;
    int to_inf;
    switch (r) {
    case VM_RZ: to_inf = 0; break;
    case VM_RP: to_inf = !sign; break;
    case VM_RM: to_inf = (int)sign; break;
    default: to_inf = 1; break;
    }
    return ((uint64_t)sign << (frac_bits + exp_bits)) |
           (to_inf ? inf : inf - 1);
}

/* Rounds the exact value (-1)^sign * mag * 2^exp to the binary format with
 * frac_bits stored fraction bits and exp_bits exponent bits (IEEE layout,
 * subnormals, bias 2^(exp_bits-1)-1) in mode r; returns its bit pattern.
 * mag == 0 gives a zero of the given sign. */
static uint64_t round_pack(unsigned sign, uint64_t mag, int exp,
                           int frac_bits, int exp_bits, vm_round r)
{
    uint64_t sign_bit = (uint64_t)sign << (frac_bits + exp_bits);
    int bias = (1 << (exp_bits - 1)) - 1;
    int emin = 1 - bias;
    int msb, e_unb, shift, guard, sticky, up;
    uint64_t kept, result;

    if (mag == 0)
        return sign_bit;
    msb = 63 - __builtin_clzll(mag);
    e_unb = msb + exp; /* value in [2^e_unb, 2^(e_unb+1)) */
    if (e_unb > bias)
        return overflow_result(sign, frac_bits, exp_bits, r);
    /* exponent of the result's last place, minus the exponent of mag's */
    shift = (e_unb >= emin ? e_unb : emin) - frac_bits - exp;
    if (shift <= 0) {
        kept = mag << -shift;
        guard = 0;
        sticky = 0;
    } else if (shift < 64) {
        kept = mag >> shift;
        guard = (int)((mag >> (shift - 1)) & 1);
        sticky = (mag & ((1ull << (shift - 1)) - 1)) != 0;
    } else if (shift == 64) {
        kept = 0;
        guard = (int)(mag >> 63);
        sticky = (mag << 1) != 0;
    } else {
        kept = 0;
        guard = 0;
        sticky = 1;
    }
    switch (r) {
    case VM_RN: up = guard && (sticky || (kept & 1)); break;
    case VM_RNA: up = guard; break;
    case VM_RP: up = !sign && (guard || sticky); break;
    case VM_RM: up = sign && (guard || sticky); break;
    default: up = 0; break;
    }
    kept += (uint64_t)up;
    /* kept carries the hidden bit for normal results, so a carry out of
     * the fraction bumps the exponent; a subnormal that rounds up to
     * 2^frac_bits becomes the smallest normal the same way. */
    if (e_unb >= emin)
        result = ((uint64_t)(e_unb + bias - 1) << frac_bits) + kept;
    else
        result = kept;
    if (result >= (((1ull << exp_bits) - 1) << frac_bits))
        return overflow_result(sign, frac_bits, exp_bits, r);
    return sign_bit | result;
}

/* Rounds a double (any value) to the format; NaN gives nan_bits. */
static uint64_t f64_to_format(double x, int frac_bits, int exp_bits,
                              vm_round r, uint64_t nan_bits)
{
    uint64_t u = vm_f64_bits(x);
    unsigned sign = (unsigned)(u >> 63);
    int e = (int)((u >> 52) & 0x7ff);
    uint64_t f = u & F64_FRAC_MASK;
    if (e == 0x7ff) {
        if (f)
            return nan_bits;
        return ((uint64_t)sign << (frac_bits + exp_bits)) |
               (((1ull << exp_bits) - 1) << frac_bits);
    }
    if (e == 0)
        return round_pack(sign, f, -1074, frac_bits, exp_bits, r);
    return round_pack(sign, f | F64_HIDDEN, e - 1075, frac_bits, exp_bits, r);
}

/* Sign of an exact zero sum x + y where x, y have signs sx, sy (IEEE 754
 * 6.3): -0 only if both are -0, or in mode RM if either is negative. */
static unsigned zero_sum_sign(unsigned sx, unsigned sy, vm_round r)
{
    return r == VM_RM ? (sx | sy) : (sx & sy);
}

static unsigned f64_sign(double x) { return (unsigned)(vm_f64_bits(x) >> 63); }

/* a + b (finite) rounded to odd in double: if the sum is inexact, the
 * last bit is forced to 1 (the odd neighbour of the exact sum).  Rounding
 * that once more to a format with at most 51 significand bits gives the
 * correctly rounded exact sum in every mode. */
static double sum_round_to_odd(double a, double b)
{
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    double err = (a - av) + (b - bv); /* TwoSum: exact a + b - s */
    if (err != 0.0) {
        uint64_t u = vm_f64_bits(s);
        if (!(u & 1)) {
            if ((err > 0.0) == (s > 0.0))
                u += 1; /* exact sum lies above s in magnitude */
            else
                u -= 1;
        }
        s = vm_f64_from_bits(u);
    }
    return s;
}

/* Correctly rounded a*b + c into a narrow format, for a, b, c exact
 * doubles with at most 26 significand bits each (f32, f16, bf16), so that
 * a*b is exact in double. */
static uint64_t fma_narrow(double a, double b, double c, int frac_bits,
                           int exp_bits, vm_round r, uint64_t nan_bits)
{
    double p = a * b;
    if (!isfinite(p) || !isfinite(c))
        return f64_to_format(p + c, frac_bits, exp_bits, r, nan_bits);
    if (p == -c) /* exact zero, including 0 + 0 */
        return (uint64_t)zero_sum_sign(f64_sign(p), f64_sign(c), r)
               << (frac_bits + exp_bits);
    return f64_to_format(sum_round_to_odd(p, c), frac_bits, exp_bits, r,
                         nan_bits);
}

/* ------------------------------------------------------------------ */
/* Conversions between float formats                                    */
/* ------------------------------------------------------------------ */

/* .relu / .satfinite on a 16-bit result h (inf_bits, max_bits: the
 * format's positive infinity and largest finite value). */
static uint16_t narrow_flags16(uint16_t h, unsigned flags, uint16_t inf_bits,
                               uint16_t max_bits)
{
    if ((h & 0x7fffu) > inf_bits)
        return 0x7fffu;
    if ((flags & VM_CVT_RELU) && (h & 0x8000u))
        h = 0;
    if ((flags & VM_CVT_SATFINITE) && (h & 0x7fffu) == inf_bits)
        h = (uint16_t)((h & 0x8000u) | max_bits);
    return h;
}

uint16_t vm_f32_to_f16_slow(float x, vm_round r)
{
    return (uint16_t)f64_to_format((double)x, 10, 5, r, VM_F16_CANONICAL_NAN);
}

uint16_t vm_f32_to_f16_flags(float x, vm_round r, unsigned flags)
{
    return narrow_flags16(vm_f32_to_f16(x, r), flags, 0x7c00u,
                          VM_F16_MAX_BITS);
}

uint16_t vm_f64_to_f16_flags(double x, vm_round r, unsigned flags)
{
    uint16_t h = (uint16_t)f64_to_format(x, 10, 5, r, VM_F16_CANONICAL_NAN);
    return flags ? narrow_flags16(h, flags, 0x7c00u, VM_F16_MAX_BITS) : h;
}

uint16_t vm_f32_to_bf16_flags(float x, vm_round r, unsigned flags)
{
    return narrow_flags16(vm_f32_to_bf16(x, r), flags, 0x7f80u,
                          VM_BF16_MAX_BITS);
}

uint16_t vm_f64_to_bf16_flags(double x, vm_round r, unsigned flags)
{
    uint16_t h = (uint16_t)f64_to_format(x, 7, 8, r, VM_BF16_CANONICAL_NAN);
    return flags ? narrow_flags16(h, flags, 0x7f80u, VM_BF16_MAX_BITS) : h;
}

double vm_f16_to_f64(uint16_t h)
{
    if (vm_f16_is_nan(h))
        return vm_f64_from_bits(((uint64_t)(h & 0x8000u) << 48) |
                                0x7ff0000000000000ull | F64_QUIET |
                                ((uint64_t)(h & 0x3ffu) << 42));
    return (double)vm_f16_to_f32(h);
}

double vm_bf16_to_f64(uint16_t h)
{
    if (vm_bf16_is_nan(h))
        return vm_f64_from_bits(((uint64_t)(h & 0x8000u) << 48) |
                                0x7ff0000000000000ull | F64_QUIET |
                                ((uint64_t)(h & 0x7fu) << 45));
    return (double)vm_bf16_to_f32(h);
}

uint16_t vm_f16_to_bf16(uint16_t h, vm_round r)
{
    /* f16 -> f32 is exact, so this is a single rounding */
    return vm_f32_to_bf16(vm_f16_to_f32(h), r);
}

uint16_t vm_bf16_to_f16(uint16_t h, vm_round r)
{
    return vm_f32_to_f16(vm_bf16_to_f32(h), r);
}

uint32_t vm_f32_to_tf32(float x, vm_round r, int satfinite, int relu)
{
    uint32_t u = vm_f32_bits(x);
    uint32_t a = u & 0x7fffffffu;
    uint32_t neg = u >> 31;
    if (a > 0x7f800000u)
        return VM_TF32_CANONICAL_NAN;
    /* tf32 = f32 with 10 fraction bits: round away the low 13 bits; the
     * carry propagates into the exponent (and to inf) by itself */
    switch (r) {
    case VM_RN: a += 0xfffu + ((a >> 13) & 1u); break;
    case VM_RNA: a += 0x1000u; break;
    case VM_RP: a += neg ? 0u : 0x1fffu; break;
    case VM_RM: a += neg ? 0x1fffu : 0u; break;
    default: break;
    }
    u = (neg << 31) | (a & 0xffffe000u);
    if (relu && neg)
        u = 0;
    if (satfinite && (u & 0x7fffffffu) == 0x7f800000u)
        u = (u & 0x80000000u) | VM_TF32_MAX_BITS;
    return u;
}

float vm_f64_to_f32_slow(double x, vm_round r)
{
    return vm_f32_from_bits(
        (uint32_t)f64_to_format(x, 23, 8, r, VM_F32_CANONICAL_NAN));
}

double vm_f32_to_f64(float x)
{
    uint32_t u = vm_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return vm_f64_from_bits(((uint64_t)(u >> 31) << 63) |
                                0x7ff0000000000000ull | F64_QUIET |
                                ((uint64_t)(u & 0x7fffffu) << 29));
    return (double)x;
}

/* ------------------------------------------------------------------ */
/* f32 / f16 / bf16 arithmetic in directed modes                        */
/* ------------------------------------------------------------------ */

float vm_add_f32_slow(float a, float b, vm_round r)
{
    return vm_f32_from_bits((uint32_t)fma_narrow(a, 1.0, b, 23, 8, r,
                                                 VM_F32_CANONICAL_NAN));
}

float vm_mul_f32_slow(float a, float b, vm_round r)
{
    /* the product of two f32 values is exact in double */
    return vm_f32_from_bits((uint32_t)f64_to_format(
        (double)a * (double)b, 23, 8, r, VM_F32_CANONICAL_NAN));
}

float vm_fma_f32_slow(float a, float b, float c, vm_round r)
{
    return vm_f32_from_bits(
        (uint32_t)fma_narrow(a, b, c, 23, 8, r, VM_F32_CANONICAL_NAN));
}

float vm_div_f32_slow(float a, float b, vm_round r)
{
    /* If a/b is not exact in double, its RN double value has nonzero bits
     * far below bit 25, so it is neither an f32 value nor an f32 midpoint
     * (|a - m*b| >= 2^-47 |a| for any 25-bit m), and rounding it once more
     * gives the same result as rounding the exact quotient. */
    return vm_f32_from_bits((uint32_t)f64_to_format(
        (double)a / (double)b, 23, 8, r, VM_F32_CANONICAL_NAN));
}

float vm_sqrt_f32_slow(float a, vm_round r)
{
    /* same argument as division: an inexact sqrt of an f32 value lies at
     * least 2^-50 (relative) away from every 25-bit number */
    if (a < 0.0f)
        return vm_f32_from_bits(VM_F32_CANONICAL_NAN);
    return vm_f32_from_bits((uint32_t)f64_to_format(
        sqrt((double)a), 23, 8, r, VM_F32_CANONICAL_NAN));
}

uint16_t vm_add_f16(uint16_t a, uint16_t b, vm_round r)
{
    return (uint16_t)fma_narrow(vm_f16_to_f32(a), 1.0, vm_f16_to_f32(b), 10,
                                5, r, VM_F16_CANONICAL_NAN);
}

uint16_t vm_sub_f16(uint16_t a, uint16_t b, vm_round r)
{
    return vm_add_f16(a, (uint16_t)(b ^ 0x8000u), r);
}

uint16_t vm_mul_f16(uint16_t a, uint16_t b, vm_round r)
{
    return (uint16_t)f64_to_format(
        (double)vm_f16_to_f32(a) * (double)vm_f16_to_f32(b), 10, 5, r,
        VM_F16_CANONICAL_NAN);
}

uint16_t vm_fma_f16(uint16_t a, uint16_t b, uint16_t c, vm_round r)
{
    return (uint16_t)fma_narrow(vm_f16_to_f32(a), vm_f16_to_f32(b),
                                vm_f16_to_f32(c), 10, 5, r,
                                VM_F16_CANONICAL_NAN);
}

uint16_t vm_add_bf16(uint16_t a, uint16_t b, vm_round r)
{
    return (uint16_t)fma_narrow(vm_bf16_to_f32(a), 1.0, vm_bf16_to_f32(b), 7,
                                8, r, VM_BF16_CANONICAL_NAN);
}

uint16_t vm_sub_bf16(uint16_t a, uint16_t b, vm_round r)
{
    return vm_add_bf16(a, (uint16_t)(b ^ 0x8000u), r);
}

uint16_t vm_mul_bf16(uint16_t a, uint16_t b, vm_round r)
{
    return (uint16_t)f64_to_format(
        (double)vm_bf16_to_f32(a) * (double)vm_bf16_to_f32(b), 7, 8, r,
        VM_BF16_CANONICAL_NAN);
}

uint16_t vm_fma_bf16(uint16_t a, uint16_t b, uint16_t c, vm_round r)
{
    return (uint16_t)fma_narrow(vm_bf16_to_f32(a), vm_bf16_to_f32(b),
                                vm_bf16_to_f32(c), 7, 8, r,
                                VM_BF16_CANONICAL_NAN);
}

/* ------------------------------------------------------------------ */
/* f64 arithmetic in directed modes: 128-bit integer significands       */
/* ------------------------------------------------------------------ */

/* (-1)^sign * mag * 2^exp; the lowest bit of mag may be a sticky bit
 * (round to odd) standing for nonzero bits further down. */
typedef struct {
    unsigned sign;
    vm_u128 mag;
    int exp;
} vm_xnum;

static vm_xnum xnum_from_f64(double x) /* x finite, nonzero */
{
    uint64_t u = vm_f64_bits(x);
    int e = (int)((u >> 52) & 0x7ff);
    vm_xnum n;
    n.sign = (unsigned)(u >> 63);
    if (e) {
        n.mag = (u & F64_FRAC_MASK) | F64_HIDDEN;
        n.exp = e - 1075;
    } else {
        n.mag = u & F64_FRAC_MASK;
        n.exp = -1074;
    }
    return n;
}

static int msb128(vm_u128 m) /* m != 0 */
{
    uint64_t hi = (uint64_t)(m >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)m);
}

/* Shift so that the most significant bit of the (nonzero) mag sits at
 * bit `at`; the value is unchanged. */
static vm_xnum xnum_normalize(vm_xnum n, int at)
{
    int s = at - msb128(n.mag);
    n.mag <<= s;
    n.exp -= s;
    return n;
}

static double xnum_round_f64(vm_xnum n, vm_round r) /* n.mag != 0 */
{
    uint64_t hi = (uint64_t)(n.mag >> 64);
    uint64_t m64 = (uint64_t)n.mag;
    int e = n.exp;
    if (hi) { /* keep the top 64 bits, the rest as a sticky bit */
        int s = 64 - __builtin_clzll(hi);
        m64 = (uint64_t)(n.mag >> s) |
              (uint64_t)((n.mag & (((vm_u128)1 << s) - 1)) != 0);
        e += s;
    }
    return vm_f64_from_bits(round_pack(n.sign, m64, e, 52, 11, r));
}

/* Exact x + y (both nonzero, mags below 2^126), with a sticky bit when the
 * smaller one is shifted far down.  mag == 0 means exact cancellation. */
static vm_xnum xnum_add(vm_xnum x, vm_xnum y)
{
    vm_xnum t, s;
    int d;
    x = xnum_normalize(x, 125);
    y = xnum_normalize(y, 125);
    if (x.exp < y.exp) {
        t = x;
        x = y;
        y = t;
    }
    d = x.exp - y.exp;
    if (d >= 127) {
        y.mag = 1;
    } else if (d > 0) {
        vm_u128 lost = y.mag & (((vm_u128)1 << d) - 1);
        y.mag = (y.mag >> d) | (vm_u128)(lost != 0);
    }
    s.exp = x.exp;
    if (x.sign == y.sign) {
        s.sign = x.sign;
        s.mag = x.mag + y.mag;
    } else if (x.mag >= y.mag) {
        s.sign = x.sign;
        s.mag = x.mag - y.mag;
    } else {
        s.sign = y.sign;
        s.mag = y.mag - x.mag;
    }
    return s;
}

static double signed_zero(unsigned sign) { return sign ? -0.0 : 0.0; }

double vm_f64_nan2(double a, double b)
{
    if (a != a)
        return vm_f64_from_bits(vm_f64_bits(a) | F64_QUIET);
    if (b != b)
        return vm_f64_from_bits(vm_f64_bits(b) | F64_QUIET);
    return vm_f64_from_bits(VM_F64_DEFAULT_NAN);
}

double vm_f64_nan3(double a, double b, double c)
{
    if (a != a || b != b)
        return vm_f64_nan2(a, b);
    return vm_f64_nan2(c, c);
}

double vm_add_f64_slow(double a, double b, vm_round r)
{
    vm_xnum s;
    if (!isfinite(a) || !isfinite(b)) {
        double t = a + b; /* inf is exact; NaN is fixed up */
        return t == t ? t : vm_f64_nan2(a, b);
    }
    if (a == 0.0 || b == 0.0) {
        if (a == 0.0 && b == 0.0)
            return signed_zero(zero_sum_sign(f64_sign(a), f64_sign(b), r));
        return a == 0.0 ? b : a;
    }
    s = xnum_add(xnum_from_f64(a), xnum_from_f64(b));
    if (s.mag == 0)
        return signed_zero(r == VM_RM);
    return xnum_round_f64(s, r);
}

double vm_mul_f64_slow(double a, double b, vm_round r)
{
    vm_xnum x, y;
    if (!isfinite(a) || !isfinite(b) || a == 0.0 || b == 0.0) {
        double t = a * b; /* zeros and infinities are exact */
        return t == t ? t : vm_f64_nan2(a, b);
    }
    x = xnum_from_f64(a);
    y = xnum_from_f64(b);
    x.sign ^= y.sign;
    x.mag *= y.mag; /* <= 106 bits */
    x.exp += y.exp;
    return xnum_round_f64(x, r);
}

double vm_div_f64_slow(double a, double b, vm_round r)
{
    vm_xnum x, y;
    vm_u128 num, q;
    if (!isfinite(a) || !isfinite(b) || a == 0.0 || b == 0.0) {
        double t = a / b; /* zeros and infinities are exact */
        return t == t ? t : vm_f64_nan2(a, b);
    }
    x = xnum_normalize(xnum_from_f64(a), 52);
    y = xnum_normalize(xnum_from_f64(b), 52);
    num = x.mag << 64;
    q = num / y.mag; /* in (2^63, 2^65): at least 64 significant bits */
    x.mag = q | (vm_u128)(num - q * y.mag != 0);
    x.exp -= y.exp + 64;
    x.sign ^= y.sign;
    return xnum_round_f64(x, r);
}

/* floor(sqrt(m)) for m < 2^120. */
static uint64_t isqrt128(vm_u128 m)
{
    uint64_t s = (uint64_t)sqrt((double)m);
    if (s)
        s = (uint64_t)(((vm_u128)s + m / s) >> 1); /* one Newton step */
    while ((vm_u128)s * s > m)
        s--;
    while ((vm_u128)(s + 1) * (s + 1) <= m)
        s++;
    return s;
}

double vm_sqrt_f64_slow(double a, vm_round r)
{
    vm_xnum x;
    vm_u128 m;
    uint64_t s;
    int k;
    if (a != a)
        return vm_f64_nan2(a, a);
    if (a == 0.0 || a == (double)INFINITY)
        return a;
    if (a < 0.0)
        return vm_f64_from_bits(VM_F64_DEFAULT_NAN);
    x = xnum_normalize(xnum_from_f64(a), 52);
    k = ((x.exp - 64) & 1) ? 63 : 64; /* make the exponent even */
    m = x.mag << k;                   /* < 2^117 */
    s = isqrt128(m);                  /* 58 or 59 bits */
    x.mag = (vm_u128)s | (vm_u128)((vm_u128)s * s != m);
    x.exp = (x.exp - k) / 2;
    return xnum_round_f64(x, r);
}

double vm_fma_f64_slow(double a, double b, double c, vm_round r)
{
    vm_xnum p, s;
    if (!isfinite(a) || !isfinite(b) || !isfinite(c)) {
        double t = fma(a, b, c); /* infinities are exact */
        return t == t ? t : vm_f64_nan3(a, b, c);
    }
    if (a == 0.0 || b == 0.0) { /* exact zero product */
        unsigned sp = f64_sign(a) ^ f64_sign(b);
        if (c != 0.0)
            return c;
        return signed_zero(zero_sum_sign(sp, f64_sign(c), r));
    }
    p = xnum_from_f64(a);
    s = xnum_from_f64(b);
    p.sign ^= s.sign;
    p.mag *= s.mag;
    p.exp += s.exp;
    if (c == 0.0)
        return xnum_round_f64(p, r);
    s = xnum_add(p, xnum_from_f64(c));
    if (s.mag == 0)
        return signed_zero(r == VM_RM);
    return xnum_round_f64(s, r);
}

/* ------------------------------------------------------------------ */
/* Integer conversions and rounding to integral                         */
/* ------------------------------------------------------------------ */

/* 2^k as a double, 0 <= k <= 64. */
static double pow2(int k)
{
    return vm_f64_from_bits((uint64_t)(1023 + k) << 52);
}

/* Nearest integer, ties to even, independent of the host rounding mode. */
static double round_half_even(double x)
{
    double t = trunc(x);
    double d = fabs(x - t); /* exact (Sterbenz, or t == 0) */
    if (d > 0.5 || (d == 0.5 && t * 0.5 != trunc(t * 0.5)))
        t += x > 0.0 ? 1.0 : -1.0;
    return t;
}

/* x rounded to an integral double in mode r; keeps signed zeros and
 * infinities. */
static double round_integral(double x, vm_round r)
{
    switch (r) {
    case VM_RZ: return trunc(x);
    case VM_RM: return floor(x);
    case VM_RP: return ceil(x);
    case VM_RNA: return round(x);
    default: return round_half_even(x);
    }
}

/* cvt to a bits-wide integer; nan_high selects the 1 << (bits-1) NaN
 * result (f64 source or 64-bit destination). */
static uint64_t cvt_to_int(double x, int bits, int is_signed, vm_round r,
                           int nan_high)
{
    double y;
    if (bits < 1)
        bits = 1;
    if (bits > 64)
        bits = 64;
    if (x != x) {
        if (!nan_high)
            return 0;
        return is_signed ? 0 - (1ull << (bits - 1)) : 1ull << (bits - 1);
    }
    y = round_integral(x, r);
    if (is_signed) {
        double lim = pow2(bits - 1);
        if (y >= lim)
            return (1ull << (bits - 1)) - 1;
        if (y < -lim)
            return 0 - (1ull << (bits - 1));
        return (uint64_t)(int64_t)y;
    }
    if (!(y > 0.0))
        return 0;
    if (y >= pow2(bits))
        return bits == 64 ? ~0ull : (1ull << bits) - 1;
    return (uint64_t)y;
}

uint64_t vm_cvt_f64_to_int(double x, int bits, int is_signed, vm_round r)
{
    return cvt_to_int(x, bits, is_signed, r, 1);
}

uint64_t vm_cvt_f32_to_int(float x, int bits, int is_signed, vm_round r,
                           int ftz)
{
    if (ftz)
        x = vm_ftz_f32(x);
    return cvt_to_int((double)x, bits, is_signed, r, bits >= 64);
}

uint64_t vm_cvt_f16_to_int(uint16_t h, int bits, int is_signed, vm_round r)
{
    return cvt_to_int(vm_f16_to_f64(h), bits, is_signed, r, bits >= 64);
}

uint64_t vm_cvt_bf16_to_int(uint16_t h, int bits, int is_signed, vm_round r)
{
    return cvt_to_int(vm_bf16_to_f64(h), bits, is_signed, r, bits >= 64);
}

static uint64_t int_to_format(uint64_t v, int is_signed, int frac_bits,
                              int exp_bits, vm_round r)
{
    unsigned sign = 0;
    if (is_signed && (int64_t)v < 0) {
        sign = 1;
        v = 0 - v; /* INT64_MIN becomes 2^63, as wanted */
    }
    return round_pack(sign, v, 0, frac_bits, exp_bits, r);
}

float vm_cvt_int_to_f32(uint64_t v, int is_signed, vm_round r)
{
    return vm_f32_from_bits((uint32_t)int_to_format(v, is_signed, 23, 8, r));
}

double vm_cvt_int_to_f64(uint64_t v, int is_signed, vm_round r)
{
    return vm_f64_from_bits(int_to_format(v, is_signed, 52, 11, r));
}

uint16_t vm_cvt_int_to_f16(uint64_t v, int is_signed, vm_round r)
{
    return (uint16_t)int_to_format(v, is_signed, 10, 5, r);
}

uint16_t vm_cvt_int_to_bf16(uint64_t v, int is_signed, vm_round r)
{
    return (uint16_t)int_to_format(v, is_signed, 7, 8, r);
}

float vm_rint_f32(float x, vm_round r, int ftz)
{
    if (ftz)
        x = vm_ftz_f32(x);
    if (x != x)
        return vm_f32_from_bits(VM_F32_CANONICAL_NAN);
    /* an integral value next to an f32 is itself an f32: exact */
    return (float)round_integral((double)x, r);
}

double vm_rint_f64(double x, vm_round r)
{
    if (x != x)
        return vm_f64_nan2(x, x);
    return round_integral(x, r);
}

uint16_t vm_rint_f16(uint16_t h, vm_round r)
{
    if (vm_f16_is_nan(h))
        return VM_F16_CANONICAL_NAN;
    return vm_f32_to_f16((float)round_integral(vm_f16_to_f32(h), r), VM_RN);
}

uint16_t vm_rint_bf16(uint16_t h, vm_round r)
{
    if (vm_bf16_is_nan(h))
        return VM_BF16_CANONICAL_NAN;
    return vm_f32_to_bf16((float)round_integral(vm_bf16_to_f32(h), r),
                          VM_RN);
}
