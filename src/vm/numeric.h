/* numeric.h - kemu's floating-point helpers for the interpreter (vm room).
 *
 * IEEE-754 rounding in every PTX mode, f16/bf16/tf32 conversions, PTX
 * cvt float<->integer rules, min/max, .ftz/.sat/.relu and testp.  All
 * functions are pure (no state, no allocation, no failure) and are meant
 * to be called once per lane.  Small common paths are static inline here;
 * the rest lives in numeric.c.  docs/numeric.md explains the choices
 * (NaN patterns, which operations are exact) with PTX ISA references.
 *
 * Host assumption: the calling thread runs in the default floating-point
 * environment (round-to-nearest, no flush-to-zero / denormals-are-zero),
 * which is what every C program starts with.  The round-to-nearest fast
 * paths use native float/double arithmetic; the directed modes never touch
 * the host rounding mode (they are done in software).
 */
#ifndef KEMU_VM_NUMERIC_H
#define KEMU_VM_NUMERIC_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* float and double expressions must be evaluated in their own precision
 * (0; 16 is the TS 18661-3 spelling GCC uses when _Float16 is native).
 * x87 excess precision would double-round every fast path. */
#if !defined(FLT_EVAL_METHOD) || (FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != 16)
#error "kemu numeric helpers need FLT_EVAL_METHOD 0 (SSE2 or similar, no x87 excess precision)"
#endif

/* Rounding modes.  For float->integer and round-to-integral conversions the
 * same values stand for the integer modifiers: VM_RN = .rni (ties to even),
 * VM_RZ = .rzi, VM_RM = .rmi, VM_RP = .rpi.  VM_RNA (nearest, ties away from
 * zero) is PTX's .rna, used by cvt.rna.tf32.f32; every helper accepts it. */
typedef enum { VM_RN = 0, VM_RZ, VM_RM, VM_RP, VM_RNA } vm_round;

/* NaN bit patterns that kemu writes (see docs/numeric.md). */
#define VM_F32_CANONICAL_NAN 0x7fffffffu
#define VM_F16_CANONICAL_NAN 0x7fffu
#define VM_BF16_CANONICAL_NAN 0x7fffu
#define VM_TF32_CANONICAL_NAN 0x7fffe000u
#define VM_F64_DEFAULT_NAN 0xfff8000000000000ull

/* Largest finite values (bit patterns, positive). */
#define VM_F16_MAX_BITS 0x7bffu
#define VM_BF16_MAX_BITS 0x7f7fu
#define VM_TF32_MAX_BITS 0x7f7fe000u

/* Flags for the narrowing conversions (cvt ... .f16/.bf16/.tf32). */
enum {
    VM_CVT_SATFINITE = 1u, /* NaN stays NaN, |result| > MAX_NORM -> +-MAX_NORM */
    VM_CVT_RELU = 2u       /* negative (and -0) -> +0, NaN -> canonical NaN */
};

/* Flags for min/max. */
enum {
    VM_MINMAX_NAN = 1u,         /* .NaN: any NaN input gives the canonical NaN */
    VM_MINMAX_ABS = 2u,         /* .abs: compare |a| and |b|, result is |.| */
    VM_MINMAX_XORSIGN_ABS = 4u  /* .xorsign.abs: as .abs, sign = sign(a)^sign(b) */
};

/* testp properties (PTX testp.op). */
typedef enum {
    VM_TESTP_FINITE = 0,
    VM_TESTP_INFINITE,
    VM_TESTP_NUMBER,
    VM_TESTP_NOTANUMBER,
    VM_TESTP_NORMAL,   /* true for +-0 too, as PTX specifies */
    VM_TESTP_SUBNORMAL
} vm_testp_op;

/* ------------------------------------------------------------------ */
/* Bit casts                                                            */
/* ------------------------------------------------------------------ */

/* Returns the IEEE bit pattern of x.  No failure. */
static inline uint32_t vm_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Returns the float whose bit pattern is u.  No failure. */
static inline float vm_f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Returns the IEEE bit pattern of x.  No failure. */
static inline uint64_t vm_f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Returns the double whose bit pattern is u.  No failure. */
static inline double vm_f64_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* True if the f16 / bf16 bit pattern h is a NaN. */
static inline int vm_f16_is_nan(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }
static inline int vm_bf16_is_nan(uint16_t h) { return (h & 0x7fffu) > 0x7f80u; }

/* ------------------------------------------------------------------ */
/* Out-of-line functions (numeric.c)                                    */
/* ------------------------------------------------------------------ */

/* Narrowing conversions, correctly rounded in mode r, including subnormal
 * results; overflow gives inf or max-finite as IEEE directs for r.  A NaN
 * input gives the canonical NaN 0x7fff.  flags: VM_CVT_SATFINITE and/or
 * VM_CVT_RELU, applied to the rounded result.  No failure. */
uint16_t vm_f32_to_f16_flags(float x, vm_round r, unsigned flags);
uint16_t vm_f64_to_f16_flags(double x, vm_round r, unsigned flags);
uint16_t vm_f32_to_bf16_flags(float x, vm_round r, unsigned flags);
uint16_t vm_f64_to_bf16_flags(double x, vm_round r, unsigned flags);

/* f32 -> f16 in mode r without flags; the RN normal-range case is inline
 * below, the rest comes here.  No failure. */
uint16_t vm_f32_to_f16_slow(float x, vm_round r);

/* f16/bf16 -> f64, exact.  A NaN gives a quiet f64 NaN with the payload
 * shifted up (f64 keeps payloads).  No failure. */
double vm_f16_to_f64(uint16_t h);
double vm_bf16_to_f64(uint16_t h);

/* f16 <-> bf16 (cvt.bf16.f16 / cvt.f16.bf16), one rounding in mode r,
 * NaN -> 0x7fff.  No failure. */
uint16_t vm_f16_to_bf16(uint16_t h, vm_round r);
uint16_t vm_bf16_to_f16(uint16_t h, vm_round r);

/* f32 -> tf32 (cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32).  Returns an f32
 * bit pattern whose low 13 significand bits are zero.  Any vm_round works.
 * NaN -> 0x7fffe000; satfinite clamps to +-0x7f7fe000; relu maps negative
 * and -0 to +0 and NaN to 0x7fffe000.  No failure. */
uint32_t vm_f32_to_tf32(float x, vm_round r, int satfinite, int relu);

/* f64 -> f32, correctly rounded in mode r (cvt.rnd.f32.f64); NaN ->
 * 0x7fffffff.  Apply vm_ftz_f32 / vm_sat_f32 to the result for .ftz/.sat.
 * No failure. */
float vm_f64_to_f32_slow(double x, vm_round r);

/* f32 -> f64, exact (cvt.f64.f32).  NaN keeps its payload, quieted. */
double vm_f32_to_f64(float x);

/* Directed-mode (and RNA) arithmetic; the inline vm_*_f32/f64 below call
 * these for r != VM_RN.  Correctly rounded, NaN results as documented.
 * No failure. */
float vm_add_f32_slow(float a, float b, vm_round r);
float vm_mul_f32_slow(float a, float b, vm_round r);
float vm_fma_f32_slow(float a, float b, float c, vm_round r);
float vm_div_f32_slow(float a, float b, vm_round r);
float vm_sqrt_f32_slow(float a, vm_round r);
double vm_add_f64_slow(double a, double b, vm_round r);
double vm_mul_f64_slow(double a, double b, vm_round r);
double vm_fma_f64_slow(double a, double b, double c, vm_round r);
double vm_div_f64_slow(double a, double b, vm_round r);
double vm_sqrt_f64_slow(double a, vm_round r);

/* f64 NaN result for an operation whose inputs were a, b (and c): the
 * first NaN input, quieted, else VM_F64_DEFAULT_NAN.  No failure. */
double vm_f64_nan2(double a, double b);
double vm_f64_nan3(double a, double b, double c);

/* f16 and bf16 arithmetic on bit patterns, one rounding in mode r (PTX
 * only has .rn for these; every mode works).  fma is fused (one rounding
 * of the exact a*b+c).  NaN results -> 0x7fff.  No .ftz/.sat/.relu here:
 * compose with vm_ftz_f16 / vm_sat_f16 / vm_relu_f16.  No failure. */
uint16_t vm_add_f16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_sub_f16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_mul_f16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_fma_f16(uint16_t a, uint16_t b, uint16_t c, vm_round r);
uint16_t vm_add_bf16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_sub_bf16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_mul_bf16(uint16_t a, uint16_t b, vm_round r);
uint16_t vm_fma_bf16(uint16_t a, uint16_t b, uint16_t c, vm_round r);

/* Float -> integer (cvt.irnd.{s,u}{8,16,32,64}.{f64,f32,f16,bf16}).
 * Rounds in mode r (VM_RN = .rni ...), then saturates to the range of a
 * bits-wide (1..64) signed or unsigned integer.  NaN gives 0, except for an
 * f64 source or a 64-bit destination, where it gives 1 << (bits-1).  The
 * result is returned as 64 bits: sign-extended if is_signed, else
 * zero-extended.  ftz (f32 only) flushes a subnormal input first. */
uint64_t vm_cvt_f64_to_int(double x, int bits, int is_signed, vm_round r);
uint64_t vm_cvt_f32_to_int(float x, int bits, int is_signed, vm_round r, int ftz);
uint64_t vm_cvt_f16_to_int(uint16_t h, int bits, int is_signed, vm_round r);
uint64_t vm_cvt_bf16_to_int(uint16_t h, int bits, int is_signed, vm_round r);

/* Integer -> float (cvt.rnd.{f32,f64,f16,bf16}.{s,u}NN), correctly rounded
 * in mode r.  v holds the source value: sign-extended to 64 bits when
 * is_signed, zero-extended otherwise.  No failure. */
float vm_cvt_int_to_f32(uint64_t v, int is_signed, vm_round r);
double vm_cvt_int_to_f64(uint64_t v, int is_signed, vm_round r);
uint16_t vm_cvt_int_to_f16(uint64_t v, int is_signed, vm_round r);
uint16_t vm_cvt_int_to_bf16(uint64_t v, int is_signed, vm_round r);

/* Round to an integral value in the same format (cvt.irnd.f32.f32 etc.):
 * VM_RN ties to even, VM_RNA ties away.  Signs of zero are kept.  NaN:
 * f32 -> 0x7fffffff, f16/bf16 -> 0x7fff, f64 -> input quieted.  ftz (f32)
 * flushes a subnormal input (and so result) to signed zero.  No failure. */
float vm_rint_f32(float x, vm_round r, int ftz);
double vm_rint_f64(double x, vm_round r);
uint16_t vm_rint_f16(uint16_t h, vm_round r);
uint16_t vm_rint_bf16(uint16_t h, vm_round r);

/* ------------------------------------------------------------------ */
/* Inline helpers                                                       */
/* ------------------------------------------------------------------ */

/* .ftz: a subnormal f32 becomes a zero of the same sign; everything else
 * (NaN included) passes unchanged.  No failure. */
static inline float vm_ftz_f32(float x)
{
    uint32_t u = vm_f32_bits(x);
    if ((u & 0x7f800000u) == 0)
        u &= 0x80000000u;
    return vm_f32_from_bits(u);
}

/* .ftz on an f16 bit pattern: subnormal -> signed zero.  No failure. */
static inline uint16_t vm_ftz_f16(uint16_t h)
{
    return (h & 0x7c00u) == 0 ? (uint16_t)(h & 0x8000u) : h;
}

/* .sat on f32: clamp to [+0, 1]; NaN and -0 give +0.  No failure. */
static inline float vm_sat_f32(float x)
{
    if (!(x > 0.0f))
        return 0.0f; /* NaN, negatives, -0 */
    return x < 1.0f ? x : 1.0f;
}

/* .sat on f64: clamp to [+0, 1]; NaN and -0 give +0.  No failure. */
static inline double vm_sat_f64(double x)
{
    if (!(x > 0.0))
        return 0.0;
    return x < 1.0 ? x : 1.0;
}

/* .sat on an f16 bit pattern: clamp to [+0, 1]; NaN, -0 -> +0. */
static inline uint16_t vm_sat_f16(uint16_t h)
{
    if ((h & 0x8000u) || (h & 0x7fffu) > 0x7c00u)
        return 0; /* negative, -0 or NaN */
    return h < 0x3c00u ? h : (uint16_t)0x3c00u;
}

/* .relu on an f16 / bf16 bit pattern: negative and -0 -> +0, NaN ->
 * canonical 0x7fff.  No failure. */
static inline uint16_t vm_relu_f16(uint16_t h)
{
    if (vm_f16_is_nan(h))
        return VM_F16_CANONICAL_NAN;
    return (h & 0x8000u) ? (uint16_t)0 : h;
}
static inline uint16_t vm_relu_bf16(uint16_t h)
{
    if (vm_bf16_is_nan(h))
        return VM_BF16_CANONICAL_NAN;
    return (h & 0x8000u) ? (uint16_t)0 : h;
}

/* Replace any f32 NaN by the canonical 0x7fffffff.  No failure. */
static inline float vm_canon_f32(float x)
{
    return x == x ? x : vm_f32_from_bits(VM_F32_CANONICAL_NAN);
}

/* f16 -> f32, exact (cvt.f32.f16).  NaN -> 0x7fffffff.  No failure. */
static inline float vm_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu;
    uint32_t m = h & 0x3ffu;
    uint32_t u;
    if (e == 0x1f) {
        if (m)
            return vm_f32_from_bits(VM_F32_CANONICAL_NAN);
        u = sign | 0x7f800000u;
    } else if (e != 0) {
        u = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0) {
        u = sign;
    } else {
        /* subnormal: m * 2^-24, normalise so the leading 1 is at bit 10 */
        int lz = __builtin_clz(m) - 21; /* shifts to bring msb to bit 10 */
        m = (m << lz) & 0x3ffu;
        u = sign | ((uint32_t)(113 - lz) << 23) | (m << 13);
    }
    return vm_f32_from_bits(u);
}

/* bf16 -> f32, exact (cvt.f32.bf16).  NaN -> 0x7fffffff.  No failure. */
static inline float vm_bf16_to_f32(uint16_t h)
{
    if (vm_bf16_is_nan(h))
        return vm_f32_from_bits(VM_F32_CANONICAL_NAN);
    return vm_f32_from_bits((uint32_t)h << 16);
}

/* f32 -> f16, correctly rounded in mode r; NaN -> 0x7fff.  The RN case
 * with a normal f16 result is done inline.  No failure. */
static inline uint16_t vm_f32_to_f16(float x, vm_round r)
{
    uint32_t u = vm_f32_bits(x);
    uint32_t a = u & 0x7fffffffu;
    if (r == VM_RN && a >= 0x38800000u && a < 0x477ff000u) {
        /* 2^-14 <= |x| < 65520: the result is a normal f16 */
        uint32_t m = a - 0x38000000u; /* rebias 127 -> 15 */
        m += 0xfffu + ((m >> 13) & 1u);
        return (uint16_t)(((u >> 16) & 0x8000u) | (m >> 13));
    }
    return vm_f32_to_f16_slow(x, r);
}

/* f64 -> f16, correctly rounded in mode r (one rounding); NaN -> 0x7fff. */
static inline uint16_t vm_f64_to_f16(double x, vm_round r)
{
    return vm_f64_to_f16_flags(x, r, 0);
}

/* f32 -> bf16, correctly rounded in mode r; NaN -> 0x7fff.  bf16 keeps
 * f32's exponent range, so rounding is an integer add on the bits. */
static inline uint16_t vm_f32_to_bf16(float x, vm_round r)
{
    uint32_t u = vm_f32_bits(x);
    uint32_t a = u & 0x7fffffffu;
    uint32_t neg = u >> 31;
    if (a > 0x7f800000u)
        return VM_BF16_CANONICAL_NAN;
    switch (r) {
    case VM_RN: a += 0x7fffu + ((a >> 16) & 1u); break;
    case VM_RNA: a += 0x8000u; break;
    case VM_RP: a += neg ? 0u : 0xffffu; break;
    case VM_RM: a += neg ? 0xffffu : 0u; break;
    default: break; /* VM_RZ: truncate */
    }
    return (uint16_t)((neg << 15) | (a >> 16));
}

/* f64 -> bf16, correctly rounded in mode r (one rounding); NaN -> 0x7fff. */
static inline uint16_t vm_f64_to_bf16(double x, vm_round r)
{
    return vm_f64_to_bf16_flags(x, r, 0);
}

/* f64 -> f32 in mode r; NaN -> 0x7fffffff.  RN uses the host conversion. */
static inline float vm_f64_to_f32(double x, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32((float)x);
    if (r == VM_RZ) { /* the nearest f32, one step toward zero when it lies farther out */
        float f = (float)x;
        if (fabs((double)f) > fabs(x))
            f = vm_f32_from_bits(vm_f32_bits(f) - 1);
        return vm_canon_f32(f);
    }
    return vm_f64_to_f32_slow(x, r);
}

/* f32 arithmetic, correctly rounded in mode r (add/sub/mul/fma/div/sqrt/
 * rcp with .rn/.rz/.rm/.rp).  NaN results are 0x7fffffff.  For .ftz wrap
 * inputs and the result in vm_ftz_f32, for .sat wrap the result in
 * vm_sat_f32.  No failure. */
static inline float vm_add_f32(float a, float b, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(a + b);
    return vm_add_f32_slow(a, b, r);
}
static inline float vm_sub_f32(float a, float b, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(a - b);
    return vm_add_f32_slow(a, -b, r);
}
static inline float vm_mul_f32(float a, float b, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(a * b);
    return vm_mul_f32_slow(a, b, r);
}
static inline float vm_fma_f32(float a, float b, float c, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(fmaf(a, b, c));
    return vm_fma_f32_slow(a, b, c, r);
}
static inline float vm_div_f32(float a, float b, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(a / b);
    return vm_div_f32_slow(a, b, r);
}
static inline float vm_sqrt_f32(float a, vm_round r)
{
    if (r == VM_RN)
        return vm_canon_f32(sqrtf(a));
    return vm_sqrt_f32_slow(a, r);
}
static inline float vm_rcp_f32(float a, vm_round r)
{
    return vm_div_f32(1.0f, a, r);
}

/* f64 arithmetic, correctly rounded in mode r.  A NaN result is the first
 * NaN input (quieted) or, for a generated NaN, 0xfff8000000000000.  No
 * failure. */
static inline double vm_add_f64(double a, double b, vm_round r)
{
    if (r == VM_RN) {
        double s = a + b;
        return s == s ? s : vm_f64_nan2(a, b);
    }
    return vm_add_f64_slow(a, b, r);
}
static inline double vm_sub_f64(double a, double b, vm_round r)
{
    if (a != a || b != b)
        return vm_f64_nan2(a, b); /* keep b's payload and sign */
    if (r == VM_RN) {
        double s = a - b;
        return s == s ? s : vm_f64_nan2(a, b);
    }
    return vm_add_f64_slow(a, -b, r);
}
static inline double vm_mul_f64(double a, double b, vm_round r)
{
    if (r == VM_RN) {
        double s = a * b;
        return s == s ? s : vm_f64_nan2(a, b);
    }
    return vm_mul_f64_slow(a, b, r);
}
static inline double vm_fma_f64(double a, double b, double c, vm_round r)
{
    if (r == VM_RN) {
        double s = fma(a, b, c);
        return s == s ? s : vm_f64_nan3(a, b, c);
    }
    return vm_fma_f64_slow(a, b, c, r);
}
static inline double vm_div_f64(double a, double b, vm_round r)
{
    if (r == VM_RN) {
        double s = a / b;
        return s == s ? s : vm_f64_nan2(a, b);
    }
    return vm_div_f64_slow(a, b, r);
}
static inline double vm_sqrt_f64(double a, vm_round r)
{
    if (r == VM_RN && a >= 0.0)
        return sqrt(a);
    return vm_sqrt_f64_slow(a, r);
}
static inline double vm_rcp_f64(double a, vm_round r)
{
    return vm_div_f64(1.0, a, r);
}

/* Generic PTX min/max on an IEEE bit pattern of `width` bits (16, 32, 64)
 * in the low bits of a and b.  is_max selects max.  flags: VM_MINMAX_*.
 * -0 < +0.  One NaN input gives the other input; two NaNs, or any NaN with
 * VM_MINMAX_NAN, give `nan` (caller's choice of NaN pattern).  .abs and
 * .xorsign are ignored when the result is NaN.  No failure. */
static inline uint64_t vm_minmax_bits(uint64_t a, uint64_t b, int width,
                                      int is_max, unsigned flags,
                                      uint64_t nan)
{
    uint64_t sign = 1ull << (width - 1);
    uint64_t mag = sign - 1;
    int frac_bits = width == 16 ? 10 : width == 32 ? 23 : 52;
    uint64_t inf = mag & ~((1ull << frac_bits) - 1); /* exponent all ones */
    uint64_t xs = (a ^ b) & sign;
    int an, bn;
    int64_t ka, kb;
    uint64_t res;
    if (flags & (VM_MINMAX_ABS | VM_MINMAX_XORSIGN_ABS)) {
        a &= mag;
        b &= mag;
    }
    an = (a & mag) > inf;
    bn = (b & mag) > inf;
    if (an | bn) {
        if ((flags & VM_MINMAX_NAN) || (an & bn))
            return nan;
        res = an ? b : a;
    } else {
        /* map sign-magnitude to a signed total order, -0 -> -1 < +0 -> 0 */
        ka = (a & sign) ? -(int64_t)(a & mag) - 1 : (int64_t)a;
        kb = (b & sign) ? -(int64_t)(b & mag) - 1 : (int64_t)b;
        if (is_max)
            res = ka > kb ? a : b;
        else
            res = ka < kb ? a : b;
    }
    if (flags & VM_MINMAX_XORSIGN_ABS)
        res = (res & mag) | xs;
    return res;
}

/* PTX min/max for f32 (flags VM_MINMAX_*); both-NaN and .NaN results are
 * 0x7fffffff.  For .ftz flush the inputs with vm_ftz_f32 first.  No
 * failure. */
static inline float vm_min_f32(float a, float b, unsigned flags)
{
    return vm_f32_from_bits((uint32_t)vm_minmax_bits(
        vm_f32_bits(a), vm_f32_bits(b), 32, 0, flags, VM_F32_CANONICAL_NAN));
}
static inline float vm_max_f32(float a, float b, unsigned flags)
{
    return vm_f32_from_bits((uint32_t)vm_minmax_bits(
        vm_f32_bits(a), vm_f32_bits(b), 32, 1, flags, VM_F32_CANONICAL_NAN));
}

/* PTX min/max for f16 / bf16 bit patterns (flags VM_MINMAX_*); NaN
 * results are 0x7fff.  No failure. */
static inline uint16_t vm_min_f16(uint16_t a, uint16_t b, unsigned flags)
{
    return (uint16_t)vm_minmax_bits(a, b, 16, 0, flags, VM_F16_CANONICAL_NAN);
}
static inline uint16_t vm_max_f16(uint16_t a, uint16_t b, unsigned flags)
{
    return (uint16_t)vm_minmax_bits(a, b, 16, 1, flags, VM_F16_CANONICAL_NAN);
}
static inline uint16_t vm_min_bf16(uint16_t a, uint16_t b, unsigned flags)
{
    /* bf16 has 7 fraction bits; reuse the f32 layout shifted up 16 */
    return (uint16_t)(vm_minmax_bits((uint64_t)a << 16, (uint64_t)b << 16,
                                     32, 0, flags, 0x7fff0000u) >> 16);
}
static inline uint16_t vm_max_bf16(uint16_t a, uint16_t b, unsigned flags)
{
    return (uint16_t)(vm_minmax_bits((uint64_t)a << 16, (uint64_t)b << 16,
                                     32, 1, flags, 0x7fff0000u) >> 16);
}

/* PTX min.f64 / max.f64 (no modifiers exist): minNum/maxNum with -0 < +0;
 * two NaNs give a quieted (payload kept).  No failure. */
static inline double vm_min_f64(double a, double b)
{
    uint64_t ua = vm_f64_bits(a);
    return vm_f64_from_bits(vm_minmax_bits(ua, vm_f64_bits(b), 64, 0, 0,
                                           ua | 0x0008000000000000ull));
}
static inline double vm_max_f64(double a, double b)
{
    uint64_t ua = vm_f64_bits(a);
    return vm_f64_from_bits(vm_minmax_bits(ua, vm_f64_bits(b), 64, 1, 0,
                                           ua | 0x0008000000000000ull));
}

/* testp.op.f32 / .f64: returns 1 if x has the property, else 0.  Zero
 * counts as normal and not subnormal (PTX ISA 9.7.3.1).  No failure. */
static inline int vm_testp_f64(double x, vm_testp_op op)
{
    uint64_t a = vm_f64_bits(x) & 0x7fffffffffffffffull;
    uint64_t e = a >> 52;
    switch (op) {
    case VM_TESTP_FINITE: return e != 0x7ff;
    case VM_TESTP_INFINITE: return a == 0x7ff0000000000000ull;
    case VM_TESTP_NUMBER: return a <= 0x7ff0000000000000ull;
    case VM_TESTP_NOTANUMBER: return a > 0x7ff0000000000000ull;
    case VM_TESTP_NORMAL: return (e != 0 && e != 0x7ff) || a == 0;
    case VM_TESTP_SUBNORMAL: return e == 0 && a != 0;
    }
    return 0;
}
static inline int vm_testp_f32(float x, vm_testp_op op)
{
    uint32_t a = vm_f32_bits(x) & 0x7fffffffu;
    uint32_t e = a >> 23;
    switch (op) {
    case VM_TESTP_FINITE: return e != 0xff;
    case VM_TESTP_INFINITE: return a == 0x7f800000u;
    case VM_TESTP_NUMBER: return a <= 0x7f800000u;
    case VM_TESTP_NOTANUMBER: return a > 0x7f800000u;
    case VM_TESTP_NORMAL: return (e != 0 && e != 0xff) || a == 0;
    case VM_TESTP_SUBNORMAL: return e == 0 && a != 0;
    }
    return 0;
}

#endif /* KEMU_VM_NUMERIC_H */
