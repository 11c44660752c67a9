// Several host threads use the runtime at once, each with its own stream
// and buffers: launches, async copies and synchronization must not
// interfere, and each thread's last error is its own.
#include "check.h"
#include <thread>
#include <vector>

__global__ void increment(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

int main()
{
    const int threads = 8, n = 1000, rounds = 20;
    int ok[threads] = {0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
        pool.emplace_back([t, &ok] {
            int *d = nullptr, h[n];
            cudaStream_t s;
            if (cudaMalloc(&d, sizeof h) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
                return;
            cudaMemsetAsync(d, 0, sizeof h, s);
            for (int r = 0; r < rounds; r++)
                increment<<<(n + 255) / 256, 256, 0, s>>>(d, n);
            if (t == 3)
                increment<<<1, 4096, 0, s>>>(d, n); // a configuration error in this thread only
            cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
            cudaError_t last = cudaGetLastError();
            int good = last == (t == 3 ? LAUNCH_CONFIG_ERROR : cudaSuccess);
            for (int i = 0; i < n; i++)
                good &= h[i] == rounds;
            ok[t] = good;
            cudaStreamDestroy(s);
            cudaFree(d);
        });
    for (auto &th : pool)
        th.join();
    for (int t = 0; t < threads; t++) {
        if (!ok[t])
            printf("host thread %d saw wrong results\n", t);
        EXPECT(ok[t]);
    }
    return finish("host_threads");
}
