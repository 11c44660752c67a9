// Tensor-core matrix products for the benchmark suite (issue 27): C (M x N,
// row-major) = A (M x K, row-major) * B (K x N, row-major), one warp per
// tile of C, the operands loaded straight from global memory.
//
// tc_wmma_f16, tc_wmma_bf16: wmma m16n16k16 with f32 accumulators;
// tc_wmma_tf32: wmma m16n16k8 on f32 inputs (tf32 products);
// tc_wmma_s8: wmma m16n16k16 s8 x s8 with s32 accumulators;
// tc_mma_f16: mma.sync m16n8k16 f16 -> f32, fragments loaded by each lane
// as the PTX ISA lays them out (groupID = lane / 4, threadID = lane % 4).
// Launch: block 32; grid (N / 16, M / 16) (tc_mma_f16: (N / 8, M / 16)).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <typename In, typename Acc, int KS, typename Frag>
__device__ void wmma_tile(const In *a, const In *b, Acc *c, unsigned N, unsigned K)
{
    unsigned tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, KS, Acc> acc;
    wmma::fill_fragment(acc, (Acc)0);
    for (unsigned k = 0; k < K; k += KS) {
        wmma::fragment<wmma::matrix_a, 16, 16, KS, Frag, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, KS, Frag, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, a + (size_t)tm * K + k, K);
        wmma::load_matrix_sync(fb, b + (size_t)k * N + tn, N);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (size_t)tm * N + tn, acc, N, wmma::mem_row_major);
}

extern "C" __global__ void tc_wmma_f16(const __half *a, const __half *b, float *c, unsigned M, unsigned N, unsigned K)
{
    wmma_tile<__half, float, 16, __half>(a, b, c, N, K);
}

extern "C" __global__ void tc_wmma_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c, unsigned M,
                                        unsigned N, unsigned K)
{
    wmma_tile<__nv_bfloat16, float, 16, __nv_bfloat16>(a, b, c, N, K);
}

extern "C" __global__ void tc_wmma_tf32(const float *a, const float *b, float *c, unsigned M, unsigned N, unsigned K)
{
    wmma_tile<float, float, 8, wmma::precision::tf32>(a, b, c, N, K);
}

extern "C" __global__ void tc_wmma_s8(const signed char *a, const signed char *b, int *c, unsigned M, unsigned N,
                                      unsigned K)
{
    wmma_tile<signed char, int, 16, signed char>(a, b, c, N, K);
}

static __device__ unsigned pack2(__half lo, __half hi)
{
    return (unsigned)__half_as_ushort(lo) | (unsigned)__half_as_ushort(hi) << 16;
}

extern "C" __global__ void tc_mma_f16(const __half *a, const __half *b, float *c, unsigned M, unsigned N, unsigned K)
{
    unsigned lane = threadIdx.x, g = lane / 4, q = lane % 4;
    unsigned tm = blockIdx.y * 16, tn = blockIdx.x * 8;
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (unsigned k = 0; k < K; k += 16) {
        const __half *ar = a + (size_t)(tm + g) * K + k + 2 * q, *ar8 = ar + (size_t)8 * K;
        unsigned a0 = pack2(ar[0], ar[1]), a1 = pack2(ar8[0], ar8[1]);
        unsigned a2 = pack2(ar[8], ar[9]), a3 = pack2(ar8[8], ar8[9]);
        const __half *bc = b + (size_t)(k + 2 * q) * N + tn + g;
        unsigned b0 = pack2(bc[0], bc[N]), b1 = pack2(bc[(size_t)8 * N], bc[(size_t)9 * N]);
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float *cr = c + (size_t)(tm + g) * N + tn + 2 * q;
    cr[0] = d[0];
    cr[1] = d[1];
    cr[(size_t)8 * N] = d[2];
    cr[(size_t)8 * N + 1] = d[3];
}
