// Helpers of the NCCL test programs under tests/nccl/ (built with nvcc and
// -lnccl against NVIDIA's nccl.h, run under `kemu exec --devices N`):
// NCHECK stops at a failing NCCL call, EXPECT_NCCL counts a call that did
// not return what was expected. check.h (tests/cuda/) gives CHECK, EXPECT
// and finish().
#ifndef KEMU_TESTS_NCCL_TEST_H
#define KEMU_TESTS_NCCL_TEST_H

#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>

#include "check.h"

#define NCHECK(call)                                                                                 \
    do {                                                                                             \
        ncclResult_t nccl_error_ = (call);                                                           \
        if (nccl_error_ != ncclSuccess) {                                                            \
            printf("FAIL: %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, (int)nccl_error_, \
                   ncclGetErrorString(nccl_error_));                                                 \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define EXPECT_NCCL(call, expected)                                                                  \
    do {                                                                                             \
        ncclResult_t nccl_error_ = (call);                                                           \
        if (nccl_error_ != (expected)) {                                                             \
            printf("FAIL: %s:%d: %s returned %d (%s), expected %d\n", __FILE__, __LINE__, #call,      \
                   (int)nccl_error_, ncclGetErrorString(nccl_error_), (int)(expected));              \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

// The number of devices, at least `least` (else the program fails).
static inline int device_count(int least)
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    if (n < least) {
        printf("FAIL: %d devices, the test needs at least %d (kemu exec --devices N)\n", n, least);
        exit(1);
    }
    return n;
}

#endif
