// Half and bfloat16 arithmetic: conversions with rounding, __hadd/__hmul/
// __hfma, half2 vector ops, comparisons, and bf16 ops with float
// accumulation; results compared with exactly computed expectations.
#include "check.h"
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__global__ void half_ops(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __half a = __float2half(in[i]), b = __float2half(0.5f);
    __half s = __hadd(a, b), p = __hmul(a, b), f = __hfma(a, b, s);
    out[i * 6 + 0] = __half2float(a);
    out[i * 6 + 1] = __half2float(s);
    out[i * 6 + 2] = __half2float(p);
    out[i * 6 + 3] = __half2float(f);
    __half2 v = __halves2half2(a, b);
    __half2 w = __hmul2(v, __float2half2_rn(2.0f));
    out[i * 6 + 4] = __low2float(w) + __high2float(w);
    out[i * 6 + 5] = __hlt(a, b) ? 1.0f : 0.0f;
}

__global__ void bf16_ops(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    __nv_bfloat16 a = __float2bfloat16(in[i]), b = __float2bfloat16(3.0f);
    out[i * 3 + 0] = __bfloat162float(a);
    out[i * 3 + 1] = __bfloat162float(__hmul(a, b));
    out[i * 3 + 2] = __bfloat162float(__hadd(a, b));
}

// Host-side reference roundings (round to nearest even).
static float round_to_half(float x) { return __half2float(__float2half(x)); }
static float round_to_bf16(float x) { return __bfloat162float(__float2bfloat16(x)); }

int main()
{
    const int n = 64;
    float in[n];
    for (int i = 0; i < n; i++)
        in[i] = (float)(i - 32) * 0.3337f + 0.001f * (float)i;
    float *din, *dout;
    float out[n * 6];
    CHECK(cudaMalloc(&din, sizeof in));
    CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
    half_ops<<<2, 32>>>(din, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float a = round_to_half(in[i]);
        float s = round_to_half(a + 0.5f), p = round_to_half(a * 0.5f);
        float f = round_to_half((float)((double)a * 0.5 + (double)s));
        EXPECT(out[i * 6 + 0] == a);
        EXPECT(out[i * 6 + 1] == s);
        EXPECT(out[i * 6 + 2] == p);
        EXPECT(out[i * 6 + 3] == f);
        EXPECT(out[i * 6 + 4] == round_to_half(a * 2.0f) + 1.0f);
        EXPECT(out[i * 6 + 5] == (a < 0.5f ? 1.0f : 0.0f));
    }
    bf16_ops<<<1, 64>>>(din, dout, n);
    CHECK(cudaMemcpy(out, dout, n * 3 * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float a = round_to_bf16(in[i]);
        EXPECT(out[i * 3 + 0] == a);
        EXPECT(out[i * 3 + 1] == round_to_bf16(a * 3.0f));
        EXPECT(out[i * 3 + 2] == round_to_bf16(a + 3.0f));
    }
    return finish("half_bf16");
}
