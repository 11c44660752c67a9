// Device printf: formats of every kind from several blocks and threads,
// interleaved with host output. The output must come out at the
// synchronization points, in order; tests/cuda/run.sh compares the whole
// stdout with printf.expected.
#include "check.h"

__global__ void hello(int tag)
{
    if (threadIdx.x < 2)
        printf("block %d thread %d: tag=%d x=%.3f hex=%#x str=%s c=%c ll=%lld u=%u\n", blockIdx.x, threadIdx.x, tag,
               1.5f * threadIdx.x, 255u + blockIdx.x, "ok", 'A' + blockIdx.x, -1234567890123LL, 4000000000u);
}

__global__ void formats()
{
    printf("[%5d|%-5d|%05d|%+d]\n", 42, 42, 42, 42);
    printf("[%e|%g|%10.4f|%.2E]\n", 12345.678, 0.0001, 3.14159265, -0.00125);
    printf("%%literal percent, no args\n");
}

int main()
{
    printf("host: before\n");
    hello<<<3, 4>>>(7);
    CHECK(cudaDeviceSynchronize());
    printf("host: between\n");
    formats<<<1, 1>>>();
    hello<<<1, 1>>>(8);
    CHECK(cudaDeviceSynchronize());
    printf("host: after\n");
    return finish("printf");
}
