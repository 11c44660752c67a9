/* kemu's libcublas: the level-1 and level-2 routines most programs use
 * (axpy, dot, nrm2, scal, asum, iamax, copy, gemv, for float and double)
 * and the host <-> device helpers (cublasSetMatrix, GetMatrix, SetVector,
 * GetVector and their Async forms), through OpenBLAS's CBLAS on the
 * callers' memory after checking every operand range; see cublas.c. */
#include "config.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_internal.h"

/* The start of the call: the handle, the runtime, the pointer mode. */
#define BEGIN(API)                                                                                                 \
    kemu_device *dev;                                                                                              \
    cublasStatus_t st = cublas_begin(h, API, &dev);                                                                \
    if (st)                                                                                                        \
        return st;                                                                                                 \
    int device_mode = h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;                                               \
    (void)device_mode

#define FAIL(status)                                                                                               \
    do {                                                                                                           \
        st = (status);                                                                                             \
        goto out;                                                                                                  \
    } while (0)

#define CHECK_VECTOR(API, ARG, P, N, INC, ELEM)                                                                    \
    do {                                                                                                           \
        if (vendor_check_range(API, ARG, P, cublas_vector_bytes(N, INC, ELEM)))                                    \
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);                                                                  \
    } while (0)

/* A result scalar: host memory, or checked device memory (marked written). */
#define CHECK_RESULT(API, P, ELEM)                                                                                 \
    do {                                                                                                           \
        if (!(P)) {                                                                                                \
            vendor_message(API, "argument result is NULL");                                                        \
            FAIL(CUBLAS_STATUS_INVALID_VALUE);                                                                     \
        }                                                                                                          \
        if (device_mode && vendor_check_range(API, "result", P, ELEM))                                             \
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);                                                                  \
    } while (0)

#define WROTE_RESULT(P, ELEM)                                                                                      \
    do {                                                                                                           \
        if (device_mode)                                                                                           \
            vendor_mark_written(dev, (void *)(P), 1, 1, 1, ELEM);                                                  \
    } while (0)

/* A vector read: initcheck reports elements never written. */
#define NOTE_READ(API, ARG, P, N, INC, ELEM)                                                                       \
    vendor_note_read(dev, API, ARG, P, 1, N, (INC) < 0 ? -(int64_t)(INC) : (INC) ? (INC) : 1, ELEM)

/* A vector written: n elements |inc| apart, from the lowest address. */
static void wrote_vector(kemu_device *dev, void *p, int64_t n, int64_t inc, size_t elem)
{
    vendor_mark_written(dev, p, 1, n, inc < 0 ? -inc : (inc ? inc : 1), elem);
}

#define LEVEL1(S, s, T, TYPE, ELEM, cblas_axpy, cblas_dot, cblas_nrm2, cblas_scal, cblas_asum, cblas_iamax, cblas_copy) \
    VENDOR_API cublasStatus_t cublas##S##axpy_v2(cublasHandle_t h, int n, const T *alpha, const T *x, int incx,   \
                                                 T *y, int incy);                                                \
    VENDOR_API cublasStatus_t cublas##S##axpy_v2(cublasHandle_t h, int n, const T *alpha, const T *x, int incx,   \
                                                 T *y, int incy)                                                 \
    {                                                                                                              \
        const char *api = "cublas" #S "axpy_v2";                                                                   \
        BEGIN(api);                                                                                                \
        double a;                                                                                                  \
        if (n <= 0)                                                                                                \
            goto out;                                                                                              \
        if ((st = cublas_read_scalar(api, "alpha", device_mode, alpha, TYPE, &a)))                                 \
            goto out;                                                                                              \
        CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                                  \
        CHECK_VECTOR(api, "y", y, n, incy, ELEM);                                                                  \
        NOTE_READ(api, "x", x, n, incx, ELEM);                                                                     \
        NOTE_READ(api, "y", y, n, incy, ELEM);                                                                     \
        cblas_axpy(n, (T)a, x, incx, y, incy);                                                                     \
        wrote_vector(dev, y, n, incy, ELEM);                                                                       \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##S##dot_v2(cublasHandle_t h, int n, const T *x, int incx, const T *y,        \
                                                int incy, T *result);                                            \
    VENDOR_API cublasStatus_t cublas##S##dot_v2(cublasHandle_t h, int n, const T *x, int incx, const T *y,        \
                                                int incy, T *result)                                             \
    {                                                                                                              \
        const char *api = "cublas" #S "dot_v2";                                                                    \
        BEGIN(api);                                                                                                \
        CHECK_RESULT(api, result, ELEM);                                                                           \
        T r = 0;                                                                                                   \
        if (n > 0) {                                                                                               \
            CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                              \
            CHECK_VECTOR(api, "y", y, n, incy, ELEM);                                                              \
            NOTE_READ(api, "x", x, n, incx, ELEM);                                                                 \
            NOTE_READ(api, "y", y, n, incy, ELEM);                                                                 \
            r = cblas_dot(n, x, incx, y, incy);                                                                    \
        }                                                                                                          \
        *result = r;                                                                                               \
        WROTE_RESULT(result, ELEM);                                                                                \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##S##nrm2_v2(cublasHandle_t h, int n, const T *x, int incx, T *result);       \
    VENDOR_API cublasStatus_t cublas##S##nrm2_v2(cublasHandle_t h, int n, const T *x, int incx, T *result)        \
    {                                                                                                              \
        const char *api = "cublas" #S "nrm2_v2";                                                                   \
        BEGIN(api);                                                                                                \
        CHECK_RESULT(api, result, ELEM);                                                                           \
        T r = 0;                                                                                                   \
        if (n > 0 && incx > 0) {                                                                                   \
            CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                              \
            NOTE_READ(api, "x", x, n, incx, ELEM);                                                                 \
            r = cblas_nrm2(n, x, incx);                                                                            \
        }                                                                                                          \
        *result = r;                                                                                               \
        WROTE_RESULT(result, ELEM);                                                                                \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##S##asum_v2(cublasHandle_t h, int n, const T *x, int incx, T *result);       \
    VENDOR_API cublasStatus_t cublas##S##asum_v2(cublasHandle_t h, int n, const T *x, int incx, T *result)        \
    {                                                                                                              \
        const char *api = "cublas" #S "asum_v2";                                                                   \
        BEGIN(api);                                                                                                \
        CHECK_RESULT(api, result, ELEM);                                                                           \
        T r = 0;                                                                                                   \
        if (n > 0 && incx > 0) {                                                                                   \
            CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                              \
            NOTE_READ(api, "x", x, n, incx, ELEM);                                                                 \
            r = cblas_asum(n, x, incx);                                                                            \
        }                                                                                                          \
        *result = r;                                                                                               \
        WROTE_RESULT(result, ELEM);                                                                                \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublasI##s##amax_v2(cublasHandle_t h, int n, const T *x, int incx, int *result);    \
    VENDOR_API cublasStatus_t cublasI##s##amax_v2(cublasHandle_t h, int n, const T *x, int incx, int *result)     \
    {                                                                                                              \
        const char *api = "cublasI" #s "amax_v2";                                                                  \
        BEGIN(api);                                                                                                \
        CHECK_RESULT(api, result, sizeof(int));                                                                    \
        int r = 0;                                                                                                 \
        if (n > 0 && incx > 0) {                                                                                   \
            CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                              \
            NOTE_READ(api, "x", x, n, incx, ELEM);                                                                 \
            r = (int)cblas_iamax(n, x, incx) + 1; /* cuBLAS counts from 1 */                                      \
        }                                                                                                          \
        *result = r;                                                                                               \
        WROTE_RESULT(result, sizeof(int));                                                                         \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##S##scal_v2(cublasHandle_t h, int n, const T *alpha, T *x, int incx);        \
    VENDOR_API cublasStatus_t cublas##S##scal_v2(cublasHandle_t h, int n, const T *alpha, T *x, int incx)         \
    {                                                                                                              \
        const char *api = "cublas" #S "scal_v2";                                                                   \
        BEGIN(api);                                                                                                \
        double a;                                                                                                  \
        if (n <= 0 || incx <= 0)                                                                                   \
            goto out;                                                                                              \
        if ((st = cublas_read_scalar(api, "alpha", device_mode, alpha, TYPE, &a)))                                 \
            goto out;                                                                                              \
        CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                                  \
        NOTE_READ(api, "x", x, n, incx, ELEM);                                                                     \
        cblas_scal(n, (T)a, x, incx);                                                                              \
        wrote_vector(dev, x, n, incx, ELEM);                                                                       \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##S##copy_v2(cublasHandle_t h, int n, const T *x, int incx, T *y, int incy);  \
    VENDOR_API cublasStatus_t cublas##S##copy_v2(cublasHandle_t h, int n, const T *x, int incx, T *y, int incy)   \
    {                                                                                                              \
        const char *api = "cublas" #S "copy_v2";                                                                   \
        BEGIN(api);                                                                                                \
        if (n <= 0)                                                                                                \
            goto out;                                                                                              \
        CHECK_VECTOR(api, "x", x, n, incx, ELEM);                                                                  \
        CHECK_VECTOR(api, "y", y, n, incy, ELEM);                                                                  \
        NOTE_READ(api, "x", x, n, incx, ELEM);                                                                     \
        cblas_copy(n, x, incx, y, incy);                                                                           \
        wrote_vector(dev, y, n, incy, ELEM);                                                                       \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }

LEVEL1(S, s, float, VENDOR_R_32F, 4, cblas_saxpy, cblas_sdot, cblas_snrm2, cblas_sscal, cblas_sasum, cblas_isamax,
       cblas_scopy)
LEVEL1(D, d, double, VENDOR_R_64F, 8, cblas_daxpy, cblas_ddot, cblas_dnrm2, cblas_dscal, cblas_dasum, cblas_idamax,
       cblas_dcopy)

/* y = alpha op(A) x + beta y; beta == 0 does not read y. */
#define GEMV(S, T, TYPE, ELEM, cblas_gemv)                                                                         \
    VENDOR_API cublasStatus_t cublas##S##gemv_v2(cublasHandle_t h, int trans, int m, int n, const T *alpha,       \
                                                 const T *A, int lda, const T *x, int incx, const T *beta, T *y,  \
                                                 int incy);                                                      \
    VENDOR_API cublasStatus_t cublas##S##gemv_v2(cublasHandle_t h, int trans, int m, int n, const T *alpha,       \
                                                 const T *A, int lda, const T *x, int incx, const T *beta, T *y,  \
                                                 int incy)                                                       \
    {                                                                                                              \
        const char *api = "cublas" #S "gemv_v2";                                                                   \
        BEGIN(api);                                                                                                \
        if ((trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C) || m < 0 || n < 0 ||           \
            lda < (m > 1 ? m : 1) || incx == 0 || incy == 0)                                                       \
            FAIL(CUBLAS_STATUS_INVALID_VALUE);                                                                     \
        if (m == 0 || n == 0)                                                                                      \
            goto out;                                                                                              \
        double a, b;                                                                                               \
        if ((st = cublas_read_scalar(api, "alpha", device_mode, alpha, TYPE, &a)) ||                               \
            (st = cublas_read_scalar(api, "beta", device_mode, beta, TYPE, &b)))                                   \
            goto out;                                                                                              \
        int64_t xn = trans == CUBLAS_OP_N ? n : m, yn = trans == CUBLAS_OP_N ? m : n;                              \
        int overflow = 0;                                                                                          \
        uint64_t abytes = vendor_matrix_bytes(m, n, lda, ELEM, &overflow);                                         \
        if (overflow)                                                                                              \
            FAIL(CUBLAS_STATUS_INVALID_VALUE);                                                                     \
        if (vendor_check_range(api, "A", A, abytes))                                                               \
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);                                                                  \
        CHECK_VECTOR(api, "x", x, xn, incx, ELEM);                                                                 \
        CHECK_VECTOR(api, "y", y, yn, incy, ELEM);                                                                 \
        vendor_note_read(dev, api, "A", A, m, n, lda, ELEM);                                                       \
        NOTE_READ(api, "x", x, xn, incx, ELEM);                                                                    \
        if (b != 0)                                                                                                \
            NOTE_READ(api, "y", y, yn, incy, ELEM);                                                                \
        if (b == 0) {                                                                                              \
            int64_t step = incy < 0 ? -incy : incy;                                                                \
            for (int64_t i = 0; i < yn; i++)                                                                       \
                y[i * step] = 0;                                                                                   \
        }                                                                                                          \
        cblas_gemv(CblasColMajor, trans == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, m, n, (T)a, A, lda, x, incx,   \
                   (T)b, y, incy);                                                                                 \
        wrote_vector(dev, y, yn, incy, ELEM);                                                                      \
    out:                                                                                                           \
        cublas_end();                                                                                              \
        return st;                                                                                                 \
    }

GEMV(S, float, VENDOR_R_32F, 4, cblas_sgemv)
GEMV(D, double, VENDOR_R_64F, 8, cblas_dgemv)

/* ---- host <-> device helpers ------------------------------------------------------ */

/* Copies a rows x cols matrix of elem-byte elements between host and
 * device memory (to_device: src is host memory), column by column, through
 * kemu's copies (so the checkers see a host write, as for cudaMemcpy). */
static cublasStatus_t copy_matrix(const char *api, cudaStream_t stream, int to_device, int64_t rows, int64_t cols,
                                  int64_t elem, const void *src, int64_t lds, void *dst, int64_t ldd)
{
    if (rows < 0 || cols < 0 || elem <= 0 || lds < (rows > 1 ? rows : 1) || ldd < (rows > 1 ? rows : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    kemu_device *dev;
    cublasStatus_t st = cublas_begin_stream(stream, api, &dev);
    if (st)
        return st;
    if (rows && cols) {
        int overflow = 0;
        uint64_t dbytes = vendor_matrix_bytes(rows, cols, to_device ? ldd : lds, (size_t)elem, &overflow);
        const void *dptr = to_device ? dst : src;
        if (overflow) {
            st = CUBLAS_STATUS_INVALID_VALUE;
        } else if (vendor_check_range(api, to_device ? "B (device)" : "A (device)", dptr, dbytes)) {
            st = CUBLAS_STATUS_MAPPING_ERROR;
        } else if (!src || !dst) {
            vendor_message(api, "a host pointer is NULL");
            st = CUBLAS_STATUS_INVALID_VALUE;
        } else {
            for (int64_t j = 0; j < cols; j++) {
                const char *s = (const char *)src + j * lds * elem;
                char *d = (char *)dst + j * ldd * elem;
                size_t n = (size_t)(rows * elem);
                kemu_status ks = to_device ? kemu_memcpy_htod(dev, (uint64_t)(uintptr_t)d, s, n, NULL)
                                           : kemu_memcpy_dtoh(dev, d, (uint64_t)(uintptr_t)s, n, NULL);
                if (ks) {
                    st = CUBLAS_STATUS_MAPPING_ERROR;
                    break;
                }
            }
        }
    }
    cublas_end();
    return st;
}

/* A vector is a 1 x n matrix whose leading dimension is its increment. */
static cublasStatus_t copy_vector(const char *api, cudaStream_t stream, int to_device, int64_t n, int64_t elem,
                                  const void *src, int64_t incs, void *dst, int64_t incd)
{
    if (n < 0 || elem <= 0 || incs <= 0 || incd <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return copy_matrix(api, stream, to_device, 1, n, elem, src, incs, dst, incd);
}

VENDOR_API cublasStatus_t cublasSetMatrix(int rows, int cols, int elem, const void *A, int lda, void *B, int ldb);
VENDOR_API cublasStatus_t cublasSetMatrix(int rows, int cols, int elem, const void *A, int lda, void *B, int ldb)
{
    return copy_matrix("cublasSetMatrix", NULL, 1, rows, cols, elem, A, lda, B, ldb);
}

VENDOR_API cublasStatus_t cublasGetMatrix(int rows, int cols, int elem, const void *A, int lda, void *B, int ldb);
VENDOR_API cublasStatus_t cublasGetMatrix(int rows, int cols, int elem, const void *A, int lda, void *B, int ldb)
{
    return copy_matrix("cublasGetMatrix", NULL, 0, rows, cols, elem, A, lda, B, ldb);
}

VENDOR_API cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elem, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream);
VENDOR_API cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elem, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream)
{
    return copy_matrix("cublasSetMatrixAsync", stream, 1, rows, cols, elem, A, lda, B, ldb);
}

VENDOR_API cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elem, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream);
VENDOR_API cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elem, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream)
{
    return copy_matrix("cublasGetMatrixAsync", stream, 0, rows, cols, elem, A, lda, B, ldb);
}

VENDOR_API cublasStatus_t cublasSetVector(int n, int elem, const void *x, int incx, void *y, int incy);
VENDOR_API cublasStatus_t cublasSetVector(int n, int elem, const void *x, int incx, void *y, int incy)
{
    return copy_vector("cublasSetVector", NULL, 1, n, elem, x, incx, y, incy);
}

VENDOR_API cublasStatus_t cublasGetVector(int n, int elem, const void *x, int incx, void *y, int incy);
VENDOR_API cublasStatus_t cublasGetVector(int n, int elem, const void *x, int incx, void *y, int incy)
{
    return copy_vector("cublasGetVector", NULL, 0, n, elem, x, incx, y, incy);
}

VENDOR_API cublasStatus_t cublasSetVectorAsync(int n, int elem, const void *x, int incx, void *y, int incy,
                                               cudaStream_t stream);
VENDOR_API cublasStatus_t cublasSetVectorAsync(int n, int elem, const void *x, int incx, void *y, int incy,
                                               cudaStream_t stream)
{
    return copy_vector("cublasSetVectorAsync", stream, 1, n, elem, x, incx, y, incy);
}

VENDOR_API cublasStatus_t cublasGetVectorAsync(int n, int elem, const void *x, int incx, void *y, int incy,
                                               cudaStream_t stream);
VENDOR_API cublasStatus_t cublasGetVectorAsync(int n, int elem, const void *x, int incx, void *y, int incy,
                                               cudaStream_t stream)
{
    return copy_vector("cublasGetVectorAsync", stream, 0, n, elem, x, incx, y, incy);
}
