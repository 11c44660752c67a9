// Half precision: f16 and bf16 scalar and packed (x2) arithmetic from
// cuda_fp16.h / cuda_bf16.h, conversions with each rounding mode, and the
// sm_80 tf32 conversion. Below sm_80 some bf16 ops are emulated through f32.

#include <cuda_fp16.h>
#include <cuda_bf16.h>

// half_arith: K=10 __half from a,b,c: __hadd, __hsub, __hmul, __hdiv, __hfma, __hmax, __hmin, __hneg, __habs(a), hsqrt(a).
extern "C" __global__ void half_arith(const __half *a, const __half *b, const __half *c, __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half x = a[i], y = b[i], z = c[i], *o = out + 10 * i;
    o[0] = __hadd(x, y); o[1] = __hsub(x, y); o[2] = __hmul(x, y); o[3] = __hdiv(x, y);
    o[4] = __hfma(x, y, z); o[5] = __hmax(x, y); o[6] = __hmin(x, y); o[7] = __hneg(x);
    o[8] = __habs(x); o[9] = hsqrt(x);
}

// half2_arith: K=6 __half2 from packed a,b,c: __hadd2, __hsub2, __hmul2, __hfma2, __hfma2_sat, __hmax2; flags[i] = __hlt(a.x,b.x) | __hbgt2(a,b)<<1.
extern "C" __global__ void half2_arith(const __half2 *a, const __half2 *b, const __half2 *c, __half2 *out, int *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half2 x = a[i], y = b[i], z = c[i], *o = out + 6 * i;
    o[0] = __hadd2(x, y); o[1] = __hsub2(x, y); o[2] = __hmul2(x, y);
    o[3] = __hfma2(x, y, z); o[4] = __hfma2_sat(x, y, z); o[5] = __hmax2(x, y);
    flags[i] = (__hlt(__low2half(x), __low2half(y)) ? 1 : 0) | (__hbgt2(x, y) ? 2 : 0);
}

// bf16_arith: K=7 __nv_bfloat16 from a,b: __hadd, __hsub, __hmul, __hdiv, __hmax, __hmin, __hneg.
extern "C" __global__ void bf16_arith(const __nv_bfloat16 *a, const __nv_bfloat16 *b, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_bfloat16 x = a[i], y = b[i], *o = out + 7 * i;
    o[0] = __hadd(x, y); o[1] = __hsub(x, y); o[2] = __hmul(x, y); o[3] = __hdiv(x, y);
    o[4] = __hmax(x, y); o[5] = __hmin(x, y); o[6] = __hneg(x);
}

// bf16x2_arith: K=3 __nv_bfloat162 from packed a,b: __hadd2, __hmul2, __hmin2.
extern "C" __global__ void bf16x2_arith(const __nv_bfloat162 *a, const __nv_bfloat162 *b, __nv_bfloat162 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_bfloat162 x = a[i], y = b[i], *o = out + 3 * i;
    o[0] = __hadd2(x, y); o[1] = __hmul2(x, y); o[2] = __hmin2(x, y);
}

// to_half: from float a: h[4*i..] = __float2half_rn/rz/rd/ru, bf[4*i..] = __float2bfloat16_rn/rz/rd/ru, back[2*i..] = __half2float(rn), __bfloat162float(rn).
extern "C" __global__ void to_half(const float *a, __half *h, __nv_bfloat16 *bf, float *back, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = a[i];
    h[4 * i + 0] = __float2half_rn(x); h[4 * i + 1] = __float2half_rz(x);
    h[4 * i + 2] = __float2half_rd(x); h[4 * i + 3] = __float2half_ru(x);
    bf[4 * i + 0] = __float2bfloat16_rn(x); bf[4 * i + 1] = __float2bfloat16_rz(x);
    bf[4 * i + 2] = __float2bfloat16_rd(x); bf[4 * i + 3] = __float2bfloat16_ru(x);
    back[2 * i + 0] = __half2float(h[4 * i]);
    back[2 * i + 1] = __bfloat162float(bf[4 * i]);
}

// half_int_conv: K=6 ints from __half a: __half2int_rn/rz/rd/ru, __half2short_rz, then __int2half_rn(i) converted back to int by rz.
extern "C" __global__ void half_int_conv(const __half *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half x = a[i];
    int *o = out + 6 * i;
    o[0] = __half2int_rn(x); o[1] = __half2int_rz(x); o[2] = __half2int_rd(x); o[3] = __half2int_ru(x);
    o[4] = __half2short_rz(x); o[5] = __half2int_rz(__int2half_rn(i * 1001));
}

// pack_half2: out[i] = __floats2half2_rn(a[2i], a[2i+1]), bf[i] = __floats2bfloat162_rn(a[2i], a[2i+1]), f[2i..] = __half22float2(out[i]).
extern "C" __global__ void pack_half2(const float *a, __half2 *out, __nv_bfloat162 *bf, float2 *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = __floats2half2_rn(a[2 * i], a[2 * i + 1]);
    bf[i] = __floats2bfloat162_rn(a[2 * i], a[2 * i + 1]);
    f[i] = __half22float2(out[i]);
}

#if __CUDA_ARCH__ >= 800  /* cvt.rna.tf32.f32 and native bf16 ops need sm_80 */
// tf32_round: (sm_80) out[i] = a rounded to tf32 (10-bit mantissa, round-to-nearest-away) via cvt.rna.tf32.f32; bits kept in a 32-bit word.
extern "C" __global__ void tf32_round(const float *a, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(a[i]));
    out[i] = r;
}

// bf16_fma: (sm_80; cuda_bf16.h has no bf16 fma below sm_80) out[2*i] = __hfma(a,b,c) bf16, out[2*i+1] = low half of __hfma2 on (a,b),(b,c),(c,a) packed pairs.
extern "C" __global__ void bf16_fma(const __nv_bfloat16 *a, const __nv_bfloat16 *b, const __nv_bfloat16 *c, __nv_bfloat16 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_bfloat16 x = a[i], y = b[i], z = c[i];
    out[2 * i + 0] = __hfma(x, y, z);
    out[2 * i + 1] = __low2bfloat16(__hfma2(__halves2bfloat162(x, y), __halves2bfloat162(y, z), __halves2bfloat162(z, x)));
}

// half_nan_minmax: (sm_80) K=2 __half: __hmax_nan, __hmin_nan of a,b (NaN-propagating).
extern "C" __global__ void half_nan_minmax(const __half *a, const __half *b, __half *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[2 * i + 0] = __hmax_nan(a[i], b[i]);
    out[2 * i + 1] = __hmin_nan(a[i], b[i]);
}
#endif
