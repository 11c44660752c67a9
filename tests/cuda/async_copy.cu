// Asynchronous copies into shared memory through libcu++: cuda::memcpy_async
// with a cuda::barrier. On sm_90 (this program is built for sm_90a, whose
// PTX also has wgmma available) a 16-byte aligned size becomes a bulk copy
// (cp.async.bulk) completing the barrier's transaction count; with a plain
// size it is the sm_80 cp.async path. Both feed a tile that every thread
// reads reversed: out[b*256 + t] = 2 * in[b*256 + 255 - t].
#include "check.h"
#include <cuda/barrier>

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

template <bool Aligned>
__global__ void stage(const float *in, float *out)
{
    __shared__ alignas(16) float tile[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    if (Aligned) {
        if (threadIdx.x == 0)
            cuda::memcpy_async(tile, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof tile), bar);
    } else {
        cuda::memcpy_async(&tile[threadIdx.x], in + blockIdx.x * 256 + threadIdx.x, sizeof(float), bar);
    }
    bar.arrive_and_wait();
    out[blockIdx.x * 256 + threadIdx.x] = 2.0f * tile[255 - threadIdx.x];
}

int main()
{
    static float h[1024], o[1024];
    for (int i = 0; i < 1024; i++)
        h[i] = (float)i * 0.25f;
    float *in, *out;
    CHECK(cudaMalloc(&in, sizeof h));
    CHECK(cudaMalloc(&out, sizeof o));
    CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    for (int aligned = 0; aligned < 2; aligned++) {
        CHECK(cudaMemset(out, 0, sizeof o));
        if (aligned)
            stage<true><<<4, 256>>>(in, out);
        else
            stage<false><<<4, 256>>>(in, out);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 1024; i++)
            EXPECT(o[i] == 2.0f * h[i / 256 * 256 + 255 - i % 256]);
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return finish("async_copy");
}
