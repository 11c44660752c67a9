/* kemu's libcublas: the handle and the helpers its files share. The ABI
 * values (statuses, operations, modes, compute types) are cuBLAS's
 * documented ones, declared here by kemu. */
#ifndef KEMU_VENDOR_CUBLAS_INTERNAL_H
#define KEMU_VENDOR_CUBLAS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vendor/vendor.h"

typedef int cublasStatus_t;
enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16
};

enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 };
enum { CUBLAS_TF32_TENSOR_OP_MATH = 3, CUBLAS_MATH_MODE_MASK = 15 };
enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_16F_PEDANTIC = 65,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_64F_PEDANTIC = 71,
    CUBLAS_COMPUTE_32I = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC = 73,
    CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_32F_EMULATED_16BFX9 = 78,
    CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT = 79
};

#define CUBLAS_HANDLE_MAGIC 0x6b62686eu /* "kbhn" */

struct cublasContext {
    unsigned magic;
    cudaStream_t stream;
    int pointer_mode;
    int math_mode;
    int atomics_mode;
    int sm_count_target;
    void *workspace;
    size_t workspace_bytes;
};
typedef struct cublasContext *cublasHandle_t;

/* The status name and description (static strings). */
const char *cublas_status_name(cublasStatus_t s);
const char *cublas_status_string(cublasStatus_t s);

/* Starts a call on the handle's stream: a live handle
 * (CUBLAS_STATUS_NOT_INITIALIZED otherwise), then __kemu_vendor_begin
 * (CUBLAS_STATUS_EXECUTION_FAILED after a kernel fault or with an invalid
 * stream, CUBLAS_STATUS_NOT_SUPPORTED under stream capture; messages say
 * why). On success the runtime lock is held until cublas_end. */
cublasStatus_t cublas_begin(cublasHandle_t h, const char *api, kemu_device **dev);
/* The same for calls without a handle (cublasSetMatrix ...). */
cublasStatus_t cublas_begin_stream(cudaStream_t stream, const char *api, kemu_device **dev);
void cublas_end(void);
/* Whether h is a live handle (locks its own table). */
int cublas_handle_live(cublasHandle_t h);

/* Reads a scalar of `type` (VENDOR_R_*) given as alpha/beta in the
 * handle's pointer mode (device: checked as an operand). Returns 0 or a
 * status. */
cublasStatus_t cublas_read_scalar(const char *api, const char *arg, int device_mode, const void *p, int type,
                                  double *out);

/* Bytes of a strided vector of n elements (0 when n <= 0). */
uint64_t cublas_vector_bytes(int64_t n, int64_t inc, size_t elem);

#endif
