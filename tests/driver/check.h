/* Helpers of the driver-API test programs (tests/driver/): CK stops at a
 * failing driver call, EXPECT counts a failed condition, finish() prints
 * "PASS name" or "FAIL name". Each program runs unmodified on a GPU
 * (through NVIDIA's libcuda) and under `kemu exec`. */
#ifndef KEMU_TESTS_DRIVER_CHECK_H
#define KEMU_TESTS_DRIVER_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        CUresult ck_ = (call);                                                                                         \
        if (ck_ != CUDA_SUCCESS) {                                                                                     \
            const char *ck_name_ = NULL;                                                                               \
            cuGetErrorName(ck_, &ck_name_);                                                                            \
            printf("FAIL: %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, (int)ck_,                          \
                   ck_name_ ? ck_name_ : "?");                                                                         \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#define EXPECT(cond)                                                                                                   \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            if (failures < 10)                                                                                         \
                printf("FAIL: %s:%d: expected %s\n", __FILE__, __LINE__, #cond);                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static int finish(const char *name)
{
    printf("%s %s\n", failures ? "FAIL" : "PASS", name);
    return failures ? 1 : 0;
}

#endif
