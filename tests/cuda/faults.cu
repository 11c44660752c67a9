// Kernel faults surface as the right cudaError_t, as on a GPU: the launch
// itself succeeds, the next synchronizing call returns the error, and the
// error is sticky: every later call that needs the device returns it (and
// sets it as the last error) until cudaDeviceReset, while cudaGetLastError
// clears the last error as usual (as an H200 with runtime 13.0 does: a second
// cudaGetLastError, and cudaPeekAtLastError, return cudaSuccess).
// Usage: faults MODE, MODE one of illegal, misaligned, assert, trap, reset,
// timeout; each prints PASS faults-MODE. timeout launches an empty kernel
// over 2^31-1 blocks, which only kemu exec --timeout stops (with
// cudaErrorLaunchTimeout, as a GPU's watchdog would).
//
// Run natively (KEMU_CUDA_NATIVE=1), the write 1 GiB past an allocation is
// cudaErrorIllegalAddress or, depending on where the allocation lies,
// cudaErrorInvalidAddressSpace (both seen on an H200); kemu always reports
// cudaErrorIllegalAddress.
#include "check.h"
#include <cassert>
#include <cstdlib>
#include <cstring>

__global__ void write_far(int *p)
{
    p[threadIdx.x + (1 << 28)] = 1; // 1 GiB past the allocation
}

__global__ void misaligned_load(const char *p, int *out)
{
    *out = *(const int *)(p + 1);
}

__global__ void asserts(int *p)
{
    assert(p[threadIdx.x] == 0);
}

__global__ void traps()
{
    if (blockIdx.x == 1)
        __trap();
}

__global__ void nothing() {}

__global__ void fine(int *p)
{
    p[threadIdx.x] = threadIdx.x;
}

static void expect_sticky(cudaError_t code)
{
    int *q = nullptr;
    EXPECT_ERROR(cudaMalloc(&q, 16), code);
    EXPECT_ERROR(cudaGetLastError(), code);
    EXPECT_ERROR(cudaGetLastError(), cudaSuccess); // cleared
    EXPECT_ERROR(cudaPeekAtLastError(), cudaSuccess);
    int device = -1;
    EXPECT_ERROR(cudaGetDevice(&device), cudaSuccess); // needs no context
    EXPECT_ERROR(cudaDeviceSynchronize(), code);      // still sticky
    EXPECT_ERROR(cudaPeekAtLastError(), code);
    EXPECT_ERROR(cudaStreamQuery(0), code);
    EXPECT_ERROR(cudaGetLastError(), code);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "illegal";
    int *d;
    CHECK(cudaMalloc(&d, 64 * sizeof(int)));
    CHECK(cudaMemset(d, 0, 64 * sizeof(int)));
    cudaError_t want;
    if (!strcmp(mode, "illegal") || !strcmp(mode, "reset")) {
        write_far<<<1, 32>>>(d);
        want = cudaErrorIllegalAddress;
    } else if (!strcmp(mode, "misaligned")) {
        misaligned_load<<<1, 1>>>((const char *)d, d);
        want = cudaErrorMisalignedAddress;
    } else if (!strcmp(mode, "assert")) {
        CHECK(cudaMemset(d + 5, 1, sizeof(int)));
        asserts<<<1, 32>>>(d);
        want = cudaErrorAssert;
    } else if (!strcmp(mode, "trap")) {
        traps<<<2, 32>>>();
        want = cudaErrorLaunchFailure;
    } else if (!strcmp(mode, "timeout")) {
        nothing<<<2147483647, 32>>>();
        want = cudaErrorLaunchTimeout;
    } else {
        printf("unknown mode %s\n", mode);
        return 2;
    }
    cudaError_t got = cudaDeviceSynchronize();
    const char *native = getenv("KEMU_CUDA_NATIVE");
    if (native && !strcmp(native, "1") && want == cudaErrorIllegalAddress && got == cudaErrorInvalidAddressSpace)
        want = got;
    EXPECT_ERROR(got, want);
    EXPECT(!strcmp(cudaGetErrorName(want), !strcmp(mode, "misaligned") ? "cudaErrorMisalignedAddress"
                                           : !strcmp(mode, "assert")   ? "cudaErrorAssert"
                                           : !strcmp(mode, "trap")     ? "cudaErrorLaunchFailure"
                                           : !strcmp(mode, "timeout")  ? "cudaErrorLaunchTimeout"
                                                                       : "cudaErrorIllegalAddress"));
    expect_sticky(want);
    if (!strcmp(mode, "reset")) {
        CHECK(cudaDeviceReset());
        int *e;
        CHECK(cudaMalloc(&e, 32 * sizeof(int)));
        fine<<<1, 32>>>(e);
        CHECK(cudaDeviceSynchronize());
        int h[32];
        CHECK(cudaMemcpy(h, e, sizeof h, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 32; i++)
            EXPECT(h[i] == i);
    }
    char name[64];
    snprintf(name, sizeof name, "faults-%s", mode);
    return finish(name);
}
