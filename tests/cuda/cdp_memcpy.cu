// Dynamic parallelism (CDP2): the device runtime's cudaMemcpyAsync,
// cudaMemsetAsync, cudaMemcpy2DAsync and cudaMemset2DAsync in device code.
// Each block of a parent grid writes its slice of `src`, then, in its
// NULL stream: copies the slice to `dst` and launches a child that adds 1
// (the child sees the copy: stream order); sets a slice of `fill` to 0x01
// bytes and a child adds 1; launches a child that writes `tmp` and copies
// `tmp` to `out` after it (the copy sees the child's writes), this one in a
// stream the block made; sets a pitched 2D region to 0xff and copies a 2D
// block of `src` into it (the padding keeps 0xff). A tail launch checks the
// copy of block 0 from device code. Copies that the device runtime refuses
// (a host-to-device kind, a shared-memory pointer) return an error. All
// checked here against the values computed on the CPU.
#include <cuda_runtime.h>
#include <vector>
#include "check.h"

static const int BLOCKS = 4, S = 128, W = 16, H = 4, PITCH = 32; // 2D: W ints wide, rows PITCH ints apart

__global__ void add_one(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1;
}

__global__ void write_tmp(int *x, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = base - i;
}

__global__ void tail_check(const int *dst, const int *src, int n, int *ok)
{
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= dst[i] == src[i] + 1;
    *ok = good;
}

__global__ void parent(int *src, int *dst, int *fill, int *tmp, int *out, int *grid2d, int *codes, int *tail_ok)
{
    __shared__ int scratch[4];
    int b = blockIdx.x;
    for (int i = threadIdx.x; i < S; i += blockDim.x)
        src[b * S + i] = b * 1000 + i;
    if (threadIdx.x < 4)
        scratch[threadIdx.x] = 0;
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    int *c = codes + b * 8;
    c[0] = cudaMemcpyAsync(dst + b * S, src + b * S, S * sizeof(int), cudaMemcpyDeviceToDevice, 0);
    add_one<<<1, S>>>(dst + b * S, S);
    c[1] = cudaMemsetAsync(fill + b * S, 0x01, S * sizeof(int), 0);
    add_one<<<1, S>>>(fill + b * S, S);
    cudaStream_t s;
    c[2] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    write_tmp<<<1, S, 0, s>>>(tmp + b * S, S, b * 100);
    c[3] = cudaMemcpyAsync(out + b * S, tmp + b * S, S * sizeof(int), cudaMemcpyDefault, s);
    cudaStreamDestroy(s);
    int *region = grid2d + b * H * PITCH;
    c[4] = cudaMemset2DAsync(region, PITCH * sizeof(int), 0xff, PITCH * sizeof(int), H, 0);
    c[5] = cudaMemcpy2DAsync(region, PITCH * sizeof(int), src + b * S, W * sizeof(int), W * sizeof(int), H,
                             cudaMemcpyDeviceToDevice, 0);
    // refused: device runtime copies are device-to-device, of global memory
    c[6] = cudaMemcpyAsync(dst + b * S, src + b * S, sizeof(int), cudaMemcpyHostToDevice, 0);
    c[7] = cudaMemcpyAsync(scratch, src + b * S, sizeof(int), cudaMemcpyDeviceToDevice, 0);
    if (b == 0)
        tail_check<<<1, 1, 0, cudaStreamTailLaunch>>>(dst, src, S, tail_ok);
}

int main()
{
    int *src, *dst, *fill, *tmp, *out, *grid2d, *codes, *tail_ok;
    CHECK(cudaMalloc(&src, BLOCKS * S * sizeof(int)));
    CHECK(cudaMalloc(&dst, BLOCKS * S * sizeof(int)));
    CHECK(cudaMalloc(&fill, BLOCKS * S * sizeof(int)));
    CHECK(cudaMalloc(&tmp, BLOCKS * S * sizeof(int)));
    CHECK(cudaMalloc(&out, BLOCKS * S * sizeof(int)));
    CHECK(cudaMalloc(&grid2d, BLOCKS * H * PITCH * sizeof(int)));
    CHECK(cudaMalloc(&codes, BLOCKS * 8 * sizeof(int)));
    CHECK(cudaMalloc(&tail_ok, sizeof(int)));
    CHECK(cudaMemset(tail_ok, 0, sizeof(int)));
    parent<<<BLOCKS, 32>>>(src, dst, fill, tmp, out, grid2d, codes, tail_ok);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    std::vector<int> h_dst(BLOCKS * S), h_fill(BLOCKS * S), h_out(BLOCKS * S), h_2d(BLOCKS * H * PITCH),
        h_codes(BLOCKS * 8);
    int ok = 0;
    CHECK(cudaMemcpy(h_dst.data(), dst, h_dst.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_fill.data(), fill, h_fill.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_out.data(), out, h_out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_2d.data(), grid2d, h_2d.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_codes.data(), codes, h_codes.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&ok, tail_ok, sizeof ok, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BLOCKS; b++) {
        for (int k = 0; k < 6; k++)
            EXPECT(h_codes[b * 8 + k] == cudaSuccess);
        EXPECT(h_codes[b * 8 + 6] != cudaSuccess);
        EXPECT(h_codes[b * 8 + 7] != cudaSuccess);
        for (int i = 0; i < S; i++) {
            EXPECT(h_dst[b * S + i] == b * 1000 + i + 1);
            EXPECT(h_fill[b * S + i] == 0x01010101 + 1);
            EXPECT(h_out[b * S + i] == b * 100 - i);
        }
        for (int r = 0; r < H; r++)
            for (int x = 0; x < PITCH; x++) {
                int want = x < W ? b * 1000 + r * W + x : -1; // 0xffffffff
                EXPECT(h_2d[(b * H + r) * PITCH + x] == want);
            }
    }
    EXPECT(ok == 1);
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(fill));
    CHECK(cudaFree(tmp));
    CHECK(cudaFree(out));
    CHECK(cudaFree(grid2d));
    CHECK(cudaFree(codes));
    CHECK(cudaFree(tail_ok));
    return finish("cdp_memcpy");
}
