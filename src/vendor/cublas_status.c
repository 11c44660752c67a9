/* What libcublas and libcublasLt share: the start and end of a call on a
 * stream (the first also sets OpenBLAS's threads from KEMU_THREADS), and the
 * names and descriptions of cuBLAS statuses, shared by kemu's libcublas
 * (cublasGetStatusName/String) and libcublasLt (cublasLtGetStatusName/String).
 * The descriptions are kemu's own words. */
#include "config.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>

#include "vendor/cublas_internal.h"

/* `kemu exec --threads N` (KEMU_THREADS) bounds OpenBLAS's threads too. */
static void blas_threads_init(void)
{
    const char *t = getenv("KEMU_THREADS");
    int n = t ? atoi(t) : 0;
    if (n > 0)
        openblas_set_num_threads(n);
}

static cublasStatus_t begin_error(const char *api, cudaError_t e)
{
    if (e == 900 /* cudaErrorStreamCaptureUnsupported */)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    vendor_message(api, "cannot run: the CUDA runtime reports %s", cudaGetErrorName(e));
    return CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t cublas_begin_stream(cudaStream_t stream, const char *api, kemu_device **dev)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, blas_threads_init);
    cudaError_t e = __kemu_vendor_begin(stream, api, dev);
    return e ? begin_error(api, e) : CUBLAS_STATUS_SUCCESS;
}

void cublas_end(void)
{
    __kemu_vendor_end();
}

cublasStatus_t cublas_read_scalar(const char *api, const char *arg, int device_mode, const void *p, int type,
                                  double *out)
{
    if (!p) {
        vendor_message(api, "argument %s is NULL", arg);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (device_mode && vendor_check_range(api, arg, p, vendor_type_size(type)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    *out = vendor_load(p, type, 0);
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublas_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublas_status_string(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized (no live handle)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "a resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was passed to the function";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "the device lacks a feature the function needs";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to device memory failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the operation failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "a licensing error";
    default: return "unknown status";
    }
}
