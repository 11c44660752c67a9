// Floating point: explicit rounding modes, flush-to-zero (inline asm .ftz),
// NaN/inf/-0/subnormal propagation, min/max/copysign/saturate, float<->int
// conversions with every rounding mode, approximate transcendentals, and a
// few libdevice double functions. Element i of a, b, c maps to K results.

// round_f32: K=24: {add, mul, fma(a,b,c), div, sqrt(a), rcp(a)} each with rn, rz, rd, ru (in that order).
extern "C" __global__ void round_f32(const float *a, const float *b, const float *c, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], z = c[i], *o = out + 24 * i;
    o[0] = __fadd_rn(x, y);     o[1] = __fadd_rz(x, y);     o[2] = __fadd_rd(x, y);     o[3] = __fadd_ru(x, y);
    o[4] = __fmul_rn(x, y);     o[5] = __fmul_rz(x, y);     o[6] = __fmul_rd(x, y);     o[7] = __fmul_ru(x, y);
    o[8] = __fmaf_rn(x, y, z);  o[9] = __fmaf_rz(x, y, z);  o[10] = __fmaf_rd(x, y, z); o[11] = __fmaf_ru(x, y, z);
    o[12] = __fdiv_rn(x, y);    o[13] = __fdiv_rz(x, y);    o[14] = __fdiv_rd(x, y);    o[15] = __fdiv_ru(x, y);
    o[16] = __fsqrt_rn(x);      o[17] = __fsqrt_rz(x);      o[18] = __fsqrt_rd(x);      o[19] = __fsqrt_ru(x);
    o[20] = __frcp_rn(x);       o[21] = __frcp_rz(x);       o[22] = __frcp_rd(x);       o[23] = __frcp_ru(x);
}

// round_f64: K=24: the double versions of round_f32 (__dadd_*, __dmul_*, __fma_*, __ddiv_*, __dsqrt_*, __drcp_*).
extern "C" __global__ void round_f64(const double *a, const double *b, const double *c, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = a[i], y = b[i], z = c[i], *o = out + 24 * i;
    o[0] = __dadd_rn(x, y);     o[1] = __dadd_rz(x, y);     o[2] = __dadd_rd(x, y);     o[3] = __dadd_ru(x, y);
    o[4] = __dmul_rn(x, y);     o[5] = __dmul_rz(x, y);     o[6] = __dmul_rd(x, y);     o[7] = __dmul_ru(x, y);
    o[8] = __fma_rn(x, y, z);   o[9] = __fma_rz(x, y, z);   o[10] = __fma_rd(x, y, z);  o[11] = __fma_ru(x, y, z);
    o[12] = __ddiv_rn(x, y);    o[13] = __ddiv_rz(x, y);    o[14] = __ddiv_rd(x, y);    o[15] = __ddiv_ru(x, y);
    o[16] = __dsqrt_rn(x);      o[17] = __dsqrt_rz(x);      o[18] = __dsqrt_rd(x);      o[19] = __dsqrt_ru(x);
    o[20] = __drcp_rn(x);       o[21] = __drcp_rz(x);       o[22] = __drcp_rd(x);       o[23] = __drcp_ru(x);
}

// ftz_f32: K=8 via inline asm with .ftz (subnormal inputs and results flush to sign-preserving 0): add, sub, mul, fma, div.rn, sqrt.rn, rcp.rn, min; compare against the non-ftz kernels.
extern "C" __global__ void ftz_f32(const float *a, const float *b, const float *c, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], z = c[i], r[8];
    asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r[0]) : "f"(x), "f"(y));
    asm("sub.rn.ftz.f32 %0, %1, %2;" : "=f"(r[1]) : "f"(x), "f"(y));
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r[2]) : "f"(x), "f"(y));
    asm("fma.rn.ftz.f32 %0, %1, %2, %3;" : "=f"(r[3]) : "f"(x), "f"(y), "f"(z));
    asm("div.rn.ftz.f32 %0, %1, %2;" : "=f"(r[4]) : "f"(x), "f"(y));
    asm("sqrt.rn.ftz.f32 %0, %1;" : "=f"(r[5]) : "f"(x));
    asm("rcp.rn.ftz.f32 %0, %1;" : "=f"(r[6]) : "f"(x));
    asm("min.ftz.f32 %0, %1, %2;" : "=f"(r[7]) : "f"(x), "f"(y));
    for (int k = 0; k < 8; k++)
        out[8 * i + k] = r[k];
}

// special_f32: K=12 floats: fminf, fmaxf, copysignf(a,b), __saturatef(a), fabsf(a), -a, a+b, a*b, a/b, a-b, fmodf(a,b), rintf(a); flags[i] bits: a<b, a<=b, a==b, a!=b (ordered), isnan(a), isinf(a), signbit(a), a unordered b.
extern "C" __global__ void special_f32(const float *a, const float *b, float *out, unsigned *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], *o = out + 12 * i;
    o[0] = fminf(x, y);  o[1] = fmaxf(x, y);  o[2] = copysignf(x, y); o[3] = __saturatef(x);
    o[4] = fabsf(x);     o[5] = -x;           o[6] = x + y;           o[7] = x * y;
    o[8] = x / y;        o[9] = x - y;        o[10] = fmodf(x, y);    o[11] = rintf(x);
    unsigned f = 0;
    f |= (x < y) << 0;
    f |= (x <= y) << 1;
    f |= (x == y) << 2;
    f |= (x < y || x > y) << 3;
    f |= (isnan(x) ? 1u : 0u) << 4;
    f |= (isinf(x) ? 1u : 0u) << 5;
    f |= (signbit(x) ? 1u : 0u) << 6;
    f |= (x != x || y != y) << 7;
    flags[i] = f;
}

// round_to_int_f32: K=5 floats: rintf, floorf, ceilf, truncf, roundf of a (cvt.rni/rmi/rpi/rzi.f32.f32).
extern "C" __global__ void round_to_int_f32(const float *a, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], *o = out + 5 * i;
    o[0] = rintf(x); o[1] = floorf(x); o[2] = ceilf(x); o[3] = truncf(x); o[4] = roundf(x);
}

// f2i: K=13 s64 results from float a: __float2int_rn/rz/rd/ru, __float2uint_rn/rz/rd/ru, __float2ll_rn/rz/rd/ru, __float2ull_rz (NaN -> 0, out of range saturates).
extern "C" __global__ void f2i(const float *a, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i];
    long long *o = out + 13 * i;
    o[0] = __float2int_rn(x);  o[1] = __float2int_rz(x);  o[2] = __float2int_rd(x);  o[3] = __float2int_ru(x);
    o[4] = __float2uint_rn(x); o[5] = __float2uint_rz(x); o[6] = __float2uint_rd(x); o[7] = __float2uint_ru(x);
    o[8] = __float2ll_rn(x);   o[9] = __float2ll_rz(x);   o[10] = __float2ll_rd(x);  o[11] = __float2ll_ru(x);
    o[12] = (long long)__float2ull_rz(x);
}

// d2x: K=8 from double a, as doubles: __double2int_rz, __double2uint_rn, __double2ll_rd, __double2ull_ru, __double2float_rn/rz/rd/ru (widened back).
extern "C" __global__ void d2x(const double *a, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = a[i], *o = out + 8 * i;
    o[0] = __double2int_rz(x);  o[1] = __double2uint_rn(x);
    o[2] = (double)__double2ll_rd(x);  o[3] = (double)__double2ull_ru(x);
    o[4] = __double2float_rn(x); o[5] = __double2float_rz(x);
    o[6] = __double2float_rd(x); o[7] = __double2float_ru(x);
}

// i2f: K=12 floats from s32 a and u32/s64 derived from it: __int2float_rn/rz/rd/ru, __uint2float_rn/rz, __ll2float_rn/rz/rd/ru of a*2^20+a, __ull2float_ru, (float)(double)a.
extern "C" __global__ void i2f(const int *a, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i];
    unsigned u = (unsigned)x;
    long long L = ((long long)x << 20) + x;
    float *o = out + 12 * i;
    o[0] = __int2float_rn(x);  o[1] = __int2float_rz(x);  o[2] = __int2float_rd(x);  o[3] = __int2float_ru(x);
    o[4] = __uint2float_rn(u); o[5] = __uint2float_rz(u);
    o[6] = __ll2float_rn(L);   o[7] = __ll2float_rz(L);   o[8] = __ll2float_rd(L);   o[9] = __ll2float_ru(L);
    o[10] = __ull2float_ru((unsigned long long)L);
    o[11] = (float)__ll2double_rn(L);
}

// approx_f32: K=12: __expf, __logf, __sinf, __cosf, exp2f, __log2f, tanh.approx.f32 (asm), rsqrtf, sqrtf, __powf(a,b), __fdividef(a,b), ex2.approx.ftz.f32 (asm).
extern "C" __global__ void approx_f32(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], t, e, *o = out + 12 * i;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(x));
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x));
    o[0] = __expf(x);  o[1] = __logf(x);   o[2] = __sinf(x);   o[3] = __cosf(x);
    o[4] = exp2f(x);   o[5] = __log2f(x);  o[6] = t;           o[7] = rsqrtf(x);
    o[8] = sqrtf(x);   o[9] = __powf(x, y); o[10] = __fdividef(x, y); o[11] = e;
}

// libm_f32: K=6 accurate single-precision library functions: expf, logf, sinf, cosf, tanhf, powf(a,b).
extern "C" __global__ void libm_f32(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], *o = out + 6 * i;
    o[0] = expf(x); o[1] = logf(x); o[2] = sinf(x); o[3] = cosf(x); o[4] = tanhf(x); o[5] = powf(x, y);
}

// libm_f64: K=10 double functions: sqrt, exp, log, sin, pow(a,b), fma(a,b,a), floor, ceil, trunc, round.
extern "C" __global__ void libm_f64(const double *a, const double *b, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = a[i], y = b[i], *o = out + 10 * i;
    o[0] = sqrt(x);  o[1] = exp(x);      o[2] = log(x);       o[3] = sin(x);   o[4] = pow(x, y);
    o[5] = fma(x, y, x); o[6] = floor(x); o[7] = ceil(x); o[8] = trunc(x); o[9] = round(x);
}

#if __CUDA_ARCH__ >= 800  /* min/max .NaN needs sm_80 */
// nan_minmax_f32: (sm_80) K=2: min.NaN.f32, max.NaN.f32 (NaN-propagating) of a,b.
extern "C" __global__ void nan_minmax_f32(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i], y = b[i], r0, r1;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r0) : "f"(x), "f"(y));
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r1) : "f"(x), "f"(y));
    out[2 * i + 0] = r0; out[2 * i + 1] = r1;
}
#endif

#if __CUDA_ARCH__ >= 860  /* .xorsign.abs needs sm_86 */
// xorsign_max_f32: (sm_86+, so only in the sm_90 PTX) out[i] = max.xorsign.abs.f32 of a,b: max(|a|,|b|) with sign(a) xor sign(b).
extern "C" __global__ void xorsign_max_f32(const float *a, const float *b, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float r;
    asm("max.xorsign.abs.f32 %0, %1, %2;" : "=f"(r) : "f"(a[i]), "f"(b[i]));
    out[i] = r;
}
#endif
