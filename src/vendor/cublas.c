/* kemu's libcublas: handles, modes, versions, status names and the
 * level-3 products (gemm, GemmEx, batched and strided-batched forms) of the
 * cuBLAS API, computed on the CPU by OpenBLAS (gemm.c) on the callers'
 * device memory, which kemu keeps at host addresses. Every operand range
 * is checked against the live allocations before anything is read;
 * outputs are marked written for the checkers. Calls run when issued, in
 * issue order with the runtime's other work. Must not know the runtime's
 * internals: it goes through src/vendor/vendor.h. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_internal.h"
#include "vendor/gemm.h"

#ifndef CUBLAS_FLAVOUR
#define CUBLAS_FLAVOUR 13 /* 13: libcublas.so.13, 12: libcublas.so.12 */
#endif
#if CUBLAS_FLAVOUR == 12
#define CUBLAS_VERSION_MAJOR 12
#define CUBLAS_VERSION_MINOR 9
#define CUDART_FLAVOUR_VERSION 12090
#else
#define CUBLAS_VERSION_MAJOR 13
#define CUBLAS_VERSION_MINOR 1
#define CUDART_FLAVOUR_VERSION 13000
#endif
#define CUBLAS_VERSION_NUMBER (CUBLAS_VERSION_MAJOR * 10000 + CUBLAS_VERSION_MINOR * 100)

/* ---- handles ---------------------------------------------------------------- */

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t *handles;
static size_t nhandles, caphandles;

int cublas_handle_live(cublasHandle_t h)
{
    int live = 0;
    pthread_mutex_lock(&handles_lock);
    for (size_t i = 0; i < nhandles && !live; i++)
        live = handles[i] == h;
    pthread_mutex_unlock(&handles_lock);
    return live;
}

cublasStatus_t cublas_begin(cublasHandle_t h, const char *api, kemu_device **dev)
{
    if (!cublas_handle_live(h)) {
        vendor_message(api, "%s is not a live cuBLAS handle (cublasCreate)", h ? "the handle" : "a NULL handle");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return cublas_begin_stream(h->stream, api, dev);
}

VENDOR_API cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
VENDOR_API cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    kemu_device *dev;
    cudaError_t e = __kemu_vendor_begin(NULL, "cublasCreate_v2", &dev);
    if (e) {
        vendor_message("cublasCreate_v2", "the CUDA runtime reports %s", cudaGetErrorName(e));
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    __kemu_vendor_end();
    cublasHandle_t h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = CUBLAS_HANDLE_MAGIC;
    pthread_mutex_lock(&handles_lock);
    if (nhandles == caphandles) {
        size_t cap = caphandles ? 2 * caphandles : 8;
        cublasHandle_t *grown = realloc(handles, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&handles_lock);
            free(h);
            return CUBLAS_STATUS_ALLOC_FAILED;
        }
        handles = grown;
        caphandles = cap;
    }
    handles[nhandles++] = h;
    pthread_mutex_unlock(&handles_lock);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
VENDOR_API cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    int found = 0;
    pthread_mutex_lock(&handles_lock);
    for (size_t i = 0; i < nhandles; i++)
        if (handles[i] == handle) {
            handles[i] = handles[--nhandles];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&handles_lock);
    if (!found) {
        vendor_message("cublasDestroy_v2", "%s is not a live cuBLAS handle", handle ? "the handle" : "a NULL handle");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    handle->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

/* Setters and getters of a live handle's fields. */
#define HANDLE_OR_FAIL(h, api)                                                                                   \
    do {                                                                                                       \
        if (!cublas_handle_live(h)) {                                                                          \
            vendor_message(api, "%s is not a live cuBLAS handle", (h) ? "the handle" : "a NULL handle");       \
            return CUBLAS_STATUS_NOT_INITIALIZED;                                                              \
        }                                                                                                      \
    } while (0)

VENDOR_API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
VENDOR_API cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    HANDLE_OR_FAIL(handle, "cublasSetStream_v2");
    handle->stream = stream; /* checked when a call runs on it, as a launch checks it */
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream);
VENDOR_API cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    HANDLE_OR_FAIL(handle, "cublasGetStream_v2");
    if (!stream)
        return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, int mode);
VENDOR_API cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, int mode)
{
    HANDLE_OR_FAIL(handle, "cublasSetPointerMode_v2");
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, int *mode);
VENDOR_API cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, int *mode)
{
    HANDLE_OR_FAIL(handle, "cublasGetPointerMode_v2");
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasSetMathMode(cublasHandle_t handle, int mode);
VENDOR_API cublasStatus_t cublasSetMathMode(cublasHandle_t handle, int mode)
{
    HANDLE_OR_FAIL(handle, "cublasSetMathMode");
    int base = mode & CUBLAS_MATH_MODE_MASK;
    if (base > 4 && base != 8) /* DEFAULT, TENSOR_OP, PEDANTIC, TF32, BF16X9 emulation, FP64 fixed-point emulation */
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetMathMode(cublasHandle_t handle, int *mode);
VENDOR_API cublasStatus_t cublasGetMathMode(cublasHandle_t handle, int *mode)
{
    HANDLE_OR_FAIL(handle, "cublasGetMathMode");
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, int mode);
VENDOR_API cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, int mode)
{
    HANDLE_OR_FAIL(handle, "cublasSetAtomicsMode");
    if (mode != 0 && mode != 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->atomics_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, int *mode);
VENDOR_API cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, int *mode)
{
    HANDLE_OR_FAIL(handle, "cublasGetAtomicsMode");
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->atomics_mode;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int count);
VENDOR_API cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int count)
{
    HANDLE_OR_FAIL(handle, "cublasSetSmCountTarget");
    if (count < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->sm_count_target = count;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int *count);
VENDOR_API cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int *count)
{
    HANDLE_OR_FAIL(handle, "cublasGetSmCountTarget");
    if (!count)
        return CUBLAS_STATUS_INVALID_VALUE;
    *count = handle->sm_count_target;
    return CUBLAS_STATUS_SUCCESS;
}

/* The workspace is kept and reported; kemu's products need none. */
VENDOR_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes);
VENDOR_API cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes)
{
    HANDLE_OR_FAIL(handle, "cublasSetWorkspace_v2");
    if (bytes && vendor_check_range("cublasSetWorkspace_v2", "workspace", workspace, bytes))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

/* Logging: accepted, kemu's library logs nothing. */
VENDOR_API cublasStatus_t cublasLoggerConfigure(int log_on, int log_to_stdout, int log_to_stderr, const char *file);
VENDOR_API cublasStatus_t cublasLoggerConfigure(int log_on, int log_to_stdout, int log_to_stderr, const char *file)
{
    (void)log_on;
    (void)log_to_stdout;
    (void)log_to_stderr;
    (void)file;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- versions and status names ------------------------------------------------ */

VENDOR_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version);
VENDOR_API cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    (void)handle; /* as cuBLAS: the version does not depend on the handle */
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION_NUMBER;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasGetVersion(int *version);
VENDOR_API cublasStatus_t cublasGetVersion(int *version)
{
    return cublasGetVersion_v2(NULL, version);
}

VENDOR_API cublasStatus_t cublasGetProperty(int type, int *value);
VENDOR_API cublasStatus_t cublasGetProperty(int type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case 0: *value = CUBLAS_VERSION_MAJOR; break; /* MAJOR_VERSION */
    case 1: *value = CUBLAS_VERSION_MINOR; break; /* MINOR_VERSION */
    case 2: *value = 0; break;                    /* PATCH_LEVEL */
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API size_t cublasGetCudartVersion(void);
VENDOR_API size_t cublasGetCudartVersion(void)
{
    return CUDART_FLAVOUR_VERSION;
}

VENDOR_API const char *cublasGetStatusName(cublasStatus_t status);
VENDOR_API const char *cublasGetStatusName(cublasStatus_t status)
{
    return cublas_status_name(status);
}

VENDOR_API const char *cublasGetStatusString(cublasStatus_t status);
VENDOR_API const char *cublasGetStatusString(cublasStatus_t status)
{
    return cublas_status_string(status);
}

/* ---- shared checks --------------------------------------------------------------- */

uint64_t cublas_vector_bytes(int64_t n, int64_t inc, size_t elem)
{
    if (n <= 0)
        return 0;
    int64_t step = inc < 0 ? -inc : inc;
    int overflow = 0;
    uint64_t b = vendor_matrix_bytes(1, n, step ? step : 1, elem, &overflow);
    return overflow ? UINT64_MAX : b;
}

/* ---- level 3 ------------------------------------------------------------------ */

/* One gemm-family call: strided (A, B, C + i * stride) or through arrays of
 * pointers (Aarray ... in device memory). */
typedef struct gemm_call {
    const char *api;
    cublasHandle_t h;
    int transa, transb;
    int64_t m, n, k;
    const void *alpha, *beta;
    const void *A, *B;
    void *C;
    int atype, btype, ctype;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    const void *const *Aarray;
    const void *const *Barray;
    void *const *Carray;
    int pointer_arrays;
    int64_t batch;
    int compute; /* CUBLAS_COMPUTE_* */
} gemm_call;

/* The scalar type and TF32 rounding of a compute type; -1 if kemu does not
 * compute in it. */
static int compute_scale_type(int compute, int math_mode, int *tf32)
{
    *tf32 = 0;
    switch (compute) {
    case 2: /* CUDA_R_16F given as a compute type (the pre-CUDA 11 form) */
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC: return VENDOR_R_16F;
    case 0: /* CUDA_R_32F */
    case CUBLAS_COMPUTE_32F:
        *tf32 = (math_mode & CUBLAS_MATH_MODE_MASK) == CUBLAS_TF32_TENSOR_OP_MATH;
        return VENDOR_R_32F;
    case CUBLAS_COMPUTE_32F_FAST_TF32: *tf32 = 1; return VENDOR_R_32F;
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: return VENDOR_R_32F;
    case 1: /* CUDA_R_64F */
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT: return VENDOR_R_64F;
    default: return -1;
    }
}

static int known_type(int t)
{
    return vendor_type_size(t) != 0;
}

static int valid_op(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static cublasStatus_t gemm_run(const gemm_call *c)
{
    const char *api = c->api;
    kemu_device *dev;
    cublasStatus_t st = cublas_begin(c->h, api, &dev);
    if (st)
        return st;
    /* argument checks, in cuBLAS's order */
    int64_t ar = c->transa ? c->k : c->m, ac = c->transa ? c->m : c->k;
    int64_t br = c->transb ? c->n : c->k, bc = c->transb ? c->k : c->n;
    if (!valid_op(c->transa) || !valid_op(c->transb) || c->m < 0 || c->n < 0 || c->k < 0 ||
        c->lda < (ar > 1 ? ar : 1) || c->ldb < (br > 1 ? br : 1) || c->ldc < (c->m > 1 ? c->m : 1) || c->batch < 0) {
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    if (c->m > INT32_MAX || c->n > INT32_MAX || c->k > INT32_MAX || c->lda > INT32_MAX || c->ldb > INT32_MAX ||
        c->ldc > INT32_MAX) {
        vendor_message(api, "sizes or leading dimensions above 2^31-1 are not supported by kemu (OpenBLAS's CBLAS "
                            "takes int)");
        st = CUBLAS_STATUS_NOT_SUPPORTED;
        goto out;
    }
    int tf32;
    int scale = compute_scale_type(c->compute, c->h->math_mode, &tf32);
    if (scale < 0) {
        vendor_message(api, "compute type %d is not supported by kemu (it computes in 16F, 32F or 64F)", c->compute);
        st = CUBLAS_STATUS_NOT_SUPPORTED;
        goto out;
    }
    if (!known_type(c->atype) || !known_type(c->btype) || !known_type(c->ctype)) {
        vendor_message(api, "data types A %s, B %s, C %s are not supported by kemu (it takes CUDA_R_16F, "
                            "CUDA_R_16BF, CUDA_R_32F and CUDA_R_64F)",
                       vendor_type_name(c->atype), vendor_type_name(c->btype), vendor_type_name(c->ctype));
        st = CUBLAS_STATUS_NOT_SUPPORTED;
        goto out;
    }
    int any64 = c->atype == VENDOR_R_64F || c->btype == VENDOR_R_64F || c->ctype == VENDOR_R_64F;
    int all64 = c->atype == VENDOR_R_64F && c->btype == VENDOR_R_64F && c->ctype == VENDOR_R_64F;
    if ((any64 && !all64) || (all64 != (scale == VENDOR_R_64F))) {
        vendor_message(api, "data types A %s, B %s, C %s with compute type %d are not a combination kemu supports",
                       vendor_type_name(c->atype), vendor_type_name(c->btype), vendor_type_name(c->ctype), c->compute);
        st = CUBLAS_STATUS_NOT_SUPPORTED;
        goto out;
    }
    if (c->m == 0 || c->n == 0 || c->batch == 0)
        goto out;
    int device_mode = c->h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
    double alpha, beta;
    if ((st = cublas_read_scalar(api, "alpha", device_mode, c->alpha, scale, &alpha)) ||
        (st = cublas_read_scalar(api, "beta", device_mode, c->beta, scale, &beta)))
        goto out;
    size_t ea = vendor_type_size(c->atype), eb = vendor_type_size(c->btype), ec = vendor_type_size(c->ctype);
    int overflow = 0;
    uint64_t bytes_a = c->k ? vendor_matrix_bytes(ar, ac, c->lda, ea, &overflow) : 0;
    uint64_t bytes_b = c->k ? vendor_matrix_bytes(br, bc, c->ldb, eb, &overflow) : 0;
    uint64_t bytes_c = vendor_matrix_bytes(c->m, c->n, c->ldc, ec, &overflow);
    if (overflow) {
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    if (alpha == 0)
        bytes_a = bytes_b = 0; /* A and B are not read */
    /* every operand of every batch entry, before anything is computed */
    if (c->pointer_arrays) {
        uint64_t parr = (uint64_t)c->batch * sizeof(void *);
        if ((bytes_a && vendor_check_range(api, "Aarray", c->Aarray, parr)) ||
            (bytes_b && vendor_check_range(api, "Barray", c->Barray, parr)) ||
            vendor_check_range(api, "Carray", c->Carray, parr)) {
            st = CUBLAS_STATUS_EXECUTION_FAILED;
            goto out;
        }
    }
    for (int64_t i = 0; i < c->batch; i++) {
        const char *a = !bytes_a ? NULL : c->pointer_arrays ? c->Aarray[i] : (const char *)c->A + i * c->stride_a * (int64_t)ea;
        const char *b = !bytes_b ? NULL : c->pointer_arrays ? c->Barray[i] : (const char *)c->B + i * c->stride_b * (int64_t)eb;
        char *cc = c->pointer_arrays ? c->Carray[i] : (char *)c->C + i * c->stride_c * (int64_t)ec;
        char name[3][48];
        snprintf(name[0], sizeof name[0], c->batch > 1 ? "A (batch entry %lld)" : "A", (long long)i);
        snprintf(name[1], sizeof name[1], c->batch > 1 ? "B (batch entry %lld)" : "B", (long long)i);
        snprintf(name[2], sizeof name[2], c->batch > 1 ? "C (batch entry %lld)" : "C", (long long)i);
        if (vendor_check_range(api, name[0], a, bytes_a) || vendor_check_range(api, name[1], b, bytes_b) ||
            vendor_check_range(api, name[2], cc, bytes_c)) {
            st = CUBLAS_STATUS_EXECUTION_FAILED;
            goto out;
        }
    }
    for (int64_t i = 0; i < c->batch; i++) {
        vendor_gemm g = {0};
        g.transa = c->transa != CUBLAS_OP_N;
        g.transb = c->transb != CUBLAS_OP_N;
        g.m = c->m;
        g.n = c->n;
        g.k = bytes_a ? c->k : 0;
        g.atype = c->atype;
        g.btype = c->btype;
        g.ctype = g.dtype = c->ctype;
        g.A = !bytes_a ? NULL : c->pointer_arrays ? c->Aarray[i] : (const char *)c->A + i * c->stride_a * (int64_t)ea;
        g.B = !bytes_b ? NULL : c->pointer_arrays ? c->Barray[i] : (const char *)c->B + i * c->stride_b * (int64_t)eb;
        g.D = c->pointer_arrays ? c->Carray[i] : (char *)c->C + i * c->stride_c * (int64_t)ec;
        g.C = g.D;
        g.lda = c->lda;
        g.ldb = c->ldb;
        g.ldc = g.ldd = c->ldc;
        g.alpha = alpha;
        g.beta = beta;
        g.tf32 = tf32;
        char name[48];
        if (g.k) {
            snprintf(name, sizeof name, c->batch > 1 ? "A (batch entry %lld)" : "A", (long long)i);
            vendor_note_read(dev, api, name, g.A, ar, ac, c->lda, ea);
            snprintf(name, sizeof name, c->batch > 1 ? "B (batch entry %lld)" : "B", (long long)i);
            vendor_note_read(dev, api, name, g.B, br, bc, c->ldb, eb);
        }
        if (beta != 0) {
            snprintf(name, sizeof name, c->batch > 1 ? "C (batch entry %lld)" : "C", (long long)i);
            vendor_note_read(dev, api, name, g.C, c->m, c->n, c->ldc, ec);
        }
        if (vendor_gemm_run(&g)) {
            vendor_message(api, "out of host memory");
            st = CUBLAS_STATUS_ALLOC_FAILED;
            goto out;
        }
        vendor_mark_written(dev, g.D, c->m, c->n, c->ldc, ec);
    }
out:
    cublas_end();
    return st;
}

#define GEMM_BASE(call, API, H, TA, TB, M, N, K, ALPHA, BETA, TYPE, COMPUTE)                                      \
    gemm_call call = {0};                                                                                          \
    call.api = API;                                                                                                \
    call.h = H;                                                                                                    \
    call.transa = TA;                                                                                              \
    call.transb = TB;                                                                                              \
    call.m = M;                                                                                                    \
    call.n = N;                                                                                                    \
    call.k = K;                                                                                                    \
    call.alpha = ALPHA;                                                                                            \
    call.beta = BETA;                                                                                              \
    call.atype = call.btype = call.ctype = TYPE;                                                                   \
    call.compute = COMPUTE;                                                                                        \
    call.batch = 1

#define SIMPLE_GEMM(NAME, T, TYPE, COMPUTE, I)                                                                        \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *A, I lda, const T *B, I ldb, const T *beta, T *C, I ldc);         \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *A, I lda, const T *B, I ldb, const T *beta, T *C, I ldc)          \
    {                                                                                                              \
        GEMM_BASE(c, #NAME, h, ta, tb, m, n, k, alpha, beta, TYPE, COMPUTE);                                       \
        c.A = A;                                                                                                   \
        c.B = B;                                                                                                   \
        c.C = C;                                                                                                   \
        c.lda = lda;                                                                                               \
        c.ldb = ldb;                                                                                               \
        c.ldc = ldc;                                                                                               \
        return gemm_run(&c);                                                                                       \
    }

SIMPLE_GEMM(cublasSgemm_v2, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int)
SIMPLE_GEMM(cublasDgemm_v2, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int)
SIMPLE_GEMM(cublasHgemm, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int)
SIMPLE_GEMM(cublasSgemm_v2_64, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int64_t)
SIMPLE_GEMM(cublasDgemm_v2_64, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int64_t)
SIMPLE_GEMM(cublasHgemm_64, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int64_t)

#define STRIDED_GEMM(NAME, T, TYPE, COMPUTE, I, BT)                                                                       \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *A, I lda, long long sa, const T *B, I ldb, long long sb,            \
                                   const T *beta, T *C, I ldc, long long sc, BT batch);                          \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *A, I lda, long long sa, const T *B, I ldb, long long sb,            \
                                   const T *beta, T *C, I ldc, long long sc, BT batch)                           \
    {                                                                                                              \
        GEMM_BASE(c, #NAME, h, ta, tb, m, n, k, alpha, beta, TYPE, COMPUTE);                                       \
        c.A = A;                                                                                                   \
        c.B = B;                                                                                                   \
        c.C = C;                                                                                                   \
        c.lda = lda;                                                                                               \
        c.ldb = ldb;                                                                                               \
        c.ldc = ldc;                                                                                               \
        c.stride_a = sa;                                                                                           \
        c.stride_b = sb;                                                                                           \
        c.stride_c = sc;                                                                                           \
        c.batch = batch;                                                                                           \
        return gemm_run(&c);                                                                                       \
    }

STRIDED_GEMM(cublasSgemmStridedBatched, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int, int)
STRIDED_GEMM(cublasDgemmStridedBatched, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int, int)
STRIDED_GEMM(cublasHgemmStridedBatched, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int, int)
STRIDED_GEMM(cublasSgemmStridedBatched_64, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int64_t, int64_t)
STRIDED_GEMM(cublasDgemmStridedBatched_64, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int64_t, int64_t)
STRIDED_GEMM(cublasHgemmStridedBatched_64, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int64_t, int64_t)

#define BATCHED_GEMM(NAME, T, TYPE, COMPUTE, I)                                                                       \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *const A[], I lda, const T *const B[], I ldb, const T *beta,         \
                                   T *const C[], I ldc, I batch);                                               \
    VENDOR_API cublasStatus_t NAME(cublasHandle_t h, int ta, int tb, I m, I n, I k, const T *alpha,          \
                                   const T *const A[], I lda, const T *const B[], I ldb, const T *beta,         \
                                   T *const C[], I ldc, I batch)                                                \
    {                                                                                                              \
        GEMM_BASE(c, #NAME, h, ta, tb, m, n, k, alpha, beta, TYPE, COMPUTE);                                       \
        c.Aarray = (const void *const *)A;                                                                         \
        c.Barray = (const void *const *)B;                                                                         \
        c.Carray = (void *const *)C;                                                                               \
        c.pointer_arrays = 1;                                                                                      \
        c.lda = lda;                                                                                               \
        c.ldb = ldb;                                                                                               \
        c.ldc = ldc;                                                                                               \
        c.batch = batch;                                                                                           \
        return gemm_run(&c);                                                                                       \
    }

BATCHED_GEMM(cublasSgemmBatched, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int)
BATCHED_GEMM(cublasDgemmBatched, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int)
BATCHED_GEMM(cublasHgemmBatched, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int)
BATCHED_GEMM(cublasSgemmBatched_64, float, VENDOR_R_32F, CUBLAS_COMPUTE_32F, int64_t)
BATCHED_GEMM(cublasDgemmBatched_64, double, VENDOR_R_64F, CUBLAS_COMPUTE_64F, int64_t)
BATCHED_GEMM(cublasHgemmBatched_64, uint16_t, VENDOR_R_16F, CUBLAS_COMPUTE_16F, int64_t)

VENDOR_API cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                       const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                       const void *beta, void *C, int ctype, int ldc, int compute, int algo);
VENDOR_API cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                       const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                       const void *beta, void *C, int ctype, int ldc, int compute, int algo)
{
    (void)algo; /* kemu has one algorithm */
    GEMM_BASE(c, "cublasGemmEx", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasSgemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                                        const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                        const float *beta, void *C, int ctype, int ldc);
VENDOR_API cublasStatus_t cublasSgemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                                        const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                        const float *beta, void *C, int ctype, int ldc)
{
    GEMM_BASE(c, "cublasSgemmEx", h, ta, tb, m, n, k, alpha, beta, atype, CUBLAS_COMPUTE_32F);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasSgemmEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                           const float *alpha, const void *A, int atype, int64_t lda, const void *B,
                                           int btype, int64_t ldb, const float *beta, void *C, int ctype,
                                           int64_t ldc);
VENDOR_API cublasStatus_t cublasSgemmEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                           const float *alpha, const void *A, int atype, int64_t lda, const void *B,
                                           int btype, int64_t ldb, const float *beta, void *C, int ctype,
                                           int64_t ldc)
{
    GEMM_BASE(c, "cublasSgemmEx_64", h, ta, tb, m, n, k, alpha, beta, atype, CUBLAS_COMPUTE_32F);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                                     const void *alpha, const void *A, int atype, int lda,
                                                     long long sa, const void *B, int btype, int ldb, long long sb,
                                                     const void *beta, void *C, int ctype, int ldc, long long sc,
                                                     int batch, int compute, int algo);
VENDOR_API cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                                     const void *alpha, const void *A, int atype, int lda,
                                                     long long sa, const void *B, int btype, int ldb, long long sb,
                                                     const void *beta, void *C, int ctype, int ldc, long long sc,
                                                     int batch, int compute, int algo)
{
    (void)algo;
    GEMM_BASE(c, "cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    c.stride_a = sa;
    c.stride_b = sb;
    c.stride_c = sc;
    c.batch = batch;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                              const void *alpha, const void *const A[], int atype, int lda,
                                              const void *const B[], int btype, int ldb, const void *beta,
                                              void *const C[], int ctype, int ldc, int batch, int compute, int algo);
VENDOR_API cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k,
                                              const void *alpha, const void *const A[], int atype, int lda,
                                              const void *const B[], int btype, int ldb, const void *beta,
                                              void *const C[], int ctype, int ldc, int batch, int compute, int algo)
{
    (void)algo;
    GEMM_BASE(c, "cublasGemmBatchedEx", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.Aarray = A;
    c.Barray = B;
    c.Carray = C;
    c.pointer_arrays = 1;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    c.batch = batch;
    return gemm_run(&c);
}

/* The 64-bit-size forms of the Ex products (sizes above 2^31-1 are refused
 * with CUBLAS_STATUS_NOT_SUPPORTED: OpenBLAS's CBLAS takes int). */
VENDOR_API cublasStatus_t cublasGemmEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, int atype, int64_t lda, const void *B,
                                          int btype, int64_t ldb, const void *beta, void *C, int ctype, int64_t ldc,
                                          int compute, int algo);
VENDOR_API cublasStatus_t cublasGemmEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, int atype, int64_t lda, const void *B,
                                          int btype, int64_t ldb, const void *beta, void *C, int ctype, int64_t ldc,
                                          int compute, int algo)
{
    (void)algo;
    GEMM_BASE(c, "cublasGemmEx_64", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n,
                                                        int64_t k, const void *alpha, const void *A, int atype,
                                                        int64_t lda, long long sa, const void *B, int btype,
                                                        int64_t ldb, long long sb, const void *beta, void *C,
                                                        int ctype, int64_t ldc, long long sc, int64_t batch,
                                                        int compute, int algo);
VENDOR_API cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n,
                                                        int64_t k, const void *alpha, const void *A, int atype,
                                                        int64_t lda, long long sa, const void *B, int btype,
                                                        int64_t ldb, long long sb, const void *beta, void *C,
                                                        int ctype, int64_t ldc, long long sc, int64_t batch,
                                                        int compute, int algo)
{
    (void)algo;
    GEMM_BASE(c, "cublasGemmStridedBatchedEx_64", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.A = A;
    c.B = B;
    c.C = C;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    c.stride_a = sa;
    c.stride_b = sb;
    c.stride_c = sc;
    c.batch = batch;
    return gemm_run(&c);
}

VENDOR_API cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                                 const void *alpha, const void *const A[], int atype, int64_t lda,
                                                 const void *const B[], int btype, int64_t ldb, const void *beta,
                                                 void *const C[], int ctype, int64_t ldc, int64_t batch, int compute,
                                                 int algo);
VENDOR_API cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                                 const void *alpha, const void *const A[], int atype, int64_t lda,
                                                 const void *const B[], int btype, int64_t ldb, const void *beta,
                                                 void *const C[], int ctype, int64_t ldc, int64_t batch, int compute,
                                                 int algo)
{
    (void)algo;
    GEMM_BASE(c, "cublasGemmBatchedEx_64", h, ta, tb, m, n, k, alpha, beta, atype, compute);
    c.btype = btype;
    c.ctype = ctype;
    c.Aarray = A;
    c.Barray = B;
    c.Carray = C;
    c.pointer_arrays = 1;
    c.lda = lda;
    c.ldb = ldb;
    c.ldc = ldc;
    c.batch = batch;
    return gemm_run(&c);
}
