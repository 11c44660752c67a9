// Shared helpers of the self-checking CUDA test programs under tests/cuda/:
// CHECK stops the program at a failing runtime call, EXPECT counts a failed
// condition, and finish() prints "PASS name" or "FAIL name" and returns the
// exit status. Each program runs unmodified on a GPU and under `kemu exec`.
#ifndef KEMU_TESTS_CUDA_CHECK_H
#define KEMU_TESTS_CUDA_CHECK_H

#include <cmath>
#include <cstdio>
#include <cstdlib>

static int failures;

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t check_error_ = (call);                                                           \
        if (check_error_ != cudaSuccess) {                                                           \
            printf("FAIL: %s:%d: %s returned %s (%s)\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorName(check_error_), cudaGetErrorString(check_error_));                \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

// Prints the first 10 failed expectations, counts them all.
#define EXPECT(cond)                                                                                 \
    do {                                                                                             \
        if (!(cond)) {                                                                               \
            if (failures < 10)                                                                       \
                printf("FAIL: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);                     \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

#define EXPECT_ERROR(call, expected)                                                                 \
    do {                                                                                             \
        cudaError_t check_error_ = (call);                                                           \
        if (check_error_ != (expected)) {                                                            \
            printf("FAIL: %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,          \
                   cudaGetErrorName(check_error_), cudaGetErrorName(expected));                      \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

// What a launch configuration beyond the device's limits (a block over 1024
// threads, a zero or too large dimension) returns, and what a host function
// that is no kernel returns where a kernel is expected: CUDA 13's runtime
// changed both (seen on an H200 with runtime 13.0; kemu's libcudart.so.13
// and .so.12 follow their runtime).
#if CUDART_VERSION >= 13000
#define LAUNCH_CONFIG_ERROR cudaErrorInvalidValue
#define NOT_A_KERNEL_ERROR cudaErrorInvalidResourceHandle
#else
#define LAUNCH_CONFIG_ERROR cudaErrorInvalidConfiguration
#define NOT_A_KERNEL_ERROR cudaErrorInvalidDeviceFunction
#endif

// Relative/absolute closeness for floating-point results.
static inline bool close_to(double got, double want, double rel, double abs_tol = 0.0)
{
    return std::fabs(got - want) <= abs_tol + rel * std::fabs(want);
}

static inline int finish(const char *name)
{
    if (failures) {
        printf("FAIL %s (%d check%s failed)\n", name, failures, failures == 1 ? "" : "s");
        return 1;
    }
    printf("PASS %s\n", name);
    return 0;
}

#endif
