/* kemu's libcublas: what its BLAS files share (cublas_blas.h), the
 * level-1 routines (axpy, dot, dotu, dotc, nrm2, asum, iamax, scal, copy,
 * swap) for float, double, cuComplex and cuDoubleComplex, each with its
 * `_64` form (64-bit sizes; those above 2^31-1 are
 * CUBLAS_STATUS_NOT_SUPPORTED: OpenBLAS's CBLAS takes int), and the host
 * <-> device helpers (cublasSetMatrix, GetMatrix, SetVector, GetVector,
 * their Async and _64 forms), through OpenBLAS's CBLAS on the callers'
 * memory after checking every operand range; see cublas.c. Level 2 is in
 * cublas_level2.c, level 3 besides the real gemms in cublas_level3.c. */
#include "config.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_blas.h"

/* ---- shared by the level-1/2/3 files ------------------------------------------------ */

const blas_type blas_s = {'S', 4, 4, VENDOR_R_32F};
const blas_type blas_d = {'D', 8, 8, VENDOR_R_64F};
const blas_type blas_c = {'C', 8, 4, VENDOR_R_32F};
const blas_type blas_z = {'Z', 16, 8, VENDOR_R_64F};

int blas_big(int64_t v)
{
    return v > INT32_MAX || v < -INT32_MAX;
}

cublasStatus_t blas_scalar(const char *api, const char *arg, int device_mode, const void *p, size_t bytes,
                           blas_scalar_t *out)
{
    memset(out, 0, sizeof *out);
    if (!p) {
        vendor_message(api, "argument %s is NULL", arg);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (device_mode && vendor_check_range(api, arg, p, bytes))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    memcpy(out->b, p, bytes);
    return CUBLAS_STATUS_SUCCESS;
}

int blas_scalar_zero(const blas_type *t, const blas_scalar_t *s, size_t bytes)
{
    for (size_t off = 0; off < bytes; off += t->real)
        if (vendor_load(s->b + off, t->type, 0) != 0)
            return 0;
    return 1;
}

void blas_wrote_vector(kemu_device *dev, void *p, int64_t n, int64_t inc, size_t elem)
{
    vendor_mark_written(dev, p, 1, n, inc < 0 ? -inc : (inc ? inc : 1), elem);
}

/* ---- level 1 ------------------------------------------------------------------------ */

static cublasStatus_t do_axpy(const char *api, cublasHandle_t h, const blas_type *t, int64_t n, const void *alpha,
                              const void *x, int64_t incx, void *y, int64_t incy)
{
    BEGIN(api);
    blas_scalar_t a;
    if (n <= 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(incx) || blas_big(incy));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)))
        goto out;
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    CHECK_VECTOR(api, "y", y, n, incy, t->elem);
    NOTE_READ(api, "x", x, n, incx, t->elem);
    NOTE_READ(api, "y", y, n, incy, t->elem);
    int in = (int)n, ix = (int)incx, iy = (int)incy;
    switch (t->name) {
    case 'S': cblas_saxpy(in, a.f, x, ix, y, iy); break;
    case 'D': cblas_daxpy(in, a.d, x, ix, y, iy); break;
    case 'C': cblas_caxpy(in, a.c, x, ix, y, iy); break;
    default: cblas_zaxpy(in, a.z, x, ix, y, iy); break;
    }
    blas_wrote_vector(dev, y, n, incy, t->elem);
out:
    cublas_end();
    return st;
}

/* dot (real), dotu and dotc (conj: the first vector conjugated) */
static cublasStatus_t do_dot(const char *api, cublasHandle_t h, const blas_type *t, int conj, int64_t n,
                             const void *x, int64_t incx, const void *y, int64_t incy, void *result)
{
    BEGIN(api);
    blas_scalar_t r;
    memset(&r, 0, sizeof r);
    CHECK_RESULT(api, result, t->elem);
    if (n > 0) {
        CHECK_FITS(api, blas_big(n) || blas_big(incx) || blas_big(incy));
        CHECK_VECTOR(api, "x", x, n, incx, t->elem);
        CHECK_VECTOR(api, "y", y, n, incy, t->elem);
        NOTE_READ(api, "x", x, n, incx, t->elem);
        NOTE_READ(api, "y", y, n, incy, t->elem);
        int in = (int)n, ix = (int)incx, iy = (int)incy;
        switch (t->name) {
        case 'S': r.f = cblas_sdot(in, x, ix, y, iy); break;
        case 'D': r.d = cblas_ddot(in, x, ix, y, iy); break;
        case 'C':
            if (conj)
                cblas_cdotc_sub(in, x, ix, y, iy, r.c);
            else
                cblas_cdotu_sub(in, x, ix, y, iy, r.c);
            break;
        default:
            if (conj)
                cblas_zdotc_sub(in, x, ix, y, iy, r.z);
            else
                cblas_zdotu_sub(in, x, ix, y, iy, r.z);
            break;
        }
    }
    memcpy(result, r.b, t->elem);
    WROTE_RESULT(result, t->elem);
out:
    cublas_end();
    return st;
}

/* nrm2 (asum = 0) and asum (asum = 1): a real result */
static cublasStatus_t do_norm(const char *api, cublasHandle_t h, const blas_type *t, int asum, int64_t n,
                              const void *x, int64_t incx, void *result)
{
    BEGIN(api);
    blas_scalar_t r;
    memset(&r, 0, sizeof r);
    CHECK_RESULT(api, result, t->real);
    if (n > 0 && incx > 0) {
        CHECK_FITS(api, blas_big(n) || blas_big(incx));
        CHECK_VECTOR(api, "x", x, n, incx, t->elem);
        NOTE_READ(api, "x", x, n, incx, t->elem);
        int in = (int)n, ix = (int)incx;
        switch (t->name) {
        case 'S': r.f = asum ? cblas_sasum(in, x, ix) : cblas_snrm2(in, x, ix); break;
        case 'D': r.d = asum ? cblas_dasum(in, x, ix) : cblas_dnrm2(in, x, ix); break;
        case 'C': r.f = asum ? cblas_scasum(in, x, ix) : cblas_scnrm2(in, x, ix); break;
        default: r.d = asum ? cblas_dzasum(in, x, ix) : cblas_dznrm2(in, x, ix); break;
        }
    }
    memcpy(result, r.b, t->real);
    WROTE_RESULT(result, t->real);
out:
    cublas_end();
    return st;
}

/* the 1-based index of the largest |x| (|re| + |im| for complex); rsize:
 * 4 (int) or 8 (int64_t, the _64 forms) */
static cublasStatus_t do_iamax(const char *api, cublasHandle_t h, const blas_type *t, int64_t n, const void *x,
                               int64_t incx, void *result, size_t rsize)
{
    BEGIN(api);
    CHECK_RESULT(api, result, rsize);
    int64_t r = 0;
    if (n > 0 && incx > 0) {
        CHECK_FITS(api, blas_big(n) || blas_big(incx));
        CHECK_VECTOR(api, "x", x, n, incx, t->elem);
        NOTE_READ(api, "x", x, n, incx, t->elem);
        int in = (int)n, ix = (int)incx;
        switch (t->name) {
        case 'S': r = (int64_t)cblas_isamax(in, x, ix); break;
        case 'D': r = (int64_t)cblas_idamax(in, x, ix); break;
        case 'C': r = (int64_t)cblas_icamax(in, x, ix); break;
        default: r = (int64_t)cblas_izamax(in, x, ix); break;
        }
        r += 1; /* cuBLAS counts from 1 */
    }
    if (rsize == 8) {
        memcpy(result, &r, 8);
    } else {
        int r32 = (int)r;
        memcpy(result, &r32, 4);
    }
    WROTE_RESULT(result, rsize);
out:
    cublas_end();
    return st;
}

/* x = alpha x; real_alpha: Csscal / Zdscal (a real alpha, complex x) */
static cublasStatus_t do_scal(const char *api, cublasHandle_t h, const blas_type *t, int real_alpha, int64_t n,
                              const void *alpha, void *x, int64_t incx)
{
    BEGIN(api);
    blas_scalar_t a;
    if (n <= 0 || incx <= 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(incx));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, real_alpha ? t->real : t->elem, &a)))
        goto out;
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    NOTE_READ(api, "x", x, n, incx, t->elem);
    int in = (int)n, ix = (int)incx;
    switch (t->name) {
    case 'S': cblas_sscal(in, a.f, x, ix); break;
    case 'D': cblas_dscal(in, a.d, x, ix); break;
    case 'C':
        if (real_alpha)
            cblas_csscal(in, a.f, x, ix);
        else
            cblas_cscal(in, a.c, x, ix);
        break;
    default:
        if (real_alpha)
            cblas_zdscal(in, a.d, x, ix);
        else
            cblas_zscal(in, a.z, x, ix);
        break;
    }
    blas_wrote_vector(dev, x, n, incx, t->elem);
out:
    cublas_end();
    return st;
}

/* copy (y = x) and swap (x <-> y) */
static cublasStatus_t do_copy(const char *api, cublasHandle_t h, const blas_type *t, int swap, int64_t n, void *x,
                              int64_t incx, void *y, int64_t incy)
{
    BEGIN(api);
    if (n <= 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(incx) || blas_big(incy));
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    CHECK_VECTOR(api, "y", y, n, incy, t->elem);
    NOTE_READ(api, "x", x, n, incx, t->elem);
    if (swap)
        NOTE_READ(api, "y", y, n, incy, t->elem);
    int in = (int)n, ix = (int)incx, iy = (int)incy;
    switch (t->name) {
    case 'S': swap ? cblas_sswap(in, x, ix, y, iy) : cblas_scopy(in, x, ix, y, iy); break;
    case 'D': swap ? cblas_dswap(in, x, ix, y, iy) : cblas_dcopy(in, x, ix, y, iy); break;
    case 'C': swap ? cblas_cswap(in, x, ix, y, iy) : cblas_ccopy(in, x, ix, y, iy); break;
    default: swap ? cblas_zswap(in, x, ix, y, iy) : cblas_zcopy(in, x, ix, y, iy); break;
    }
    blas_wrote_vector(dev, y, n, incy, t->elem);
    if (swap)
        blas_wrote_vector(dev, x, n, incx, t->elem);
out:
    cublas_end();
    return st;
}

/* The exported names: NAME_v2 with int sizes, NAME_v2_64 with int64_t. */
#define AXPY(P, T, I, SUF)                                                                                         \
    VENDOR_API cublasStatus_t cublas##P##axpy##SUF(cublasHandle_t h, I n, const void *alpha, const void *x, I incx, \
                                                   void *y, I incy);                                             \
    VENDOR_API cublasStatus_t cublas##P##axpy##SUF(cublasHandle_t h, I n, const void *alpha, const void *x, I incx, \
                                                   void *y, I incy)                                              \
    {                                                                                                              \
        return do_axpy("cublas" #P "axpy" #SUF, h, &T, n, alpha, x, incx, y, incy);                                \
    }
#define DOT(NAME, T, CONJ, I, SUF)                                                                                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, const void *y, I incy,      \
                                        void *result);                                                           \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, const void *y, I incy,      \
                                        void *result)                                                            \
    {                                                                                                              \
        return do_dot(#NAME #SUF, h, &T, CONJ, n, x, incx, y, incy, result);                                       \
    }
#define NORM(NAME, T, ASUM, I, SUF)                                                                                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, void *result);              \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, void *result)               \
    {                                                                                                              \
        return do_norm(#NAME #SUF, h, &T, ASUM, n, x, incx, result);                                               \
    }
#define IAMAX(NAME, T, I, SUF)                                                                                     \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, I *result);                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *x, I incx, I *result)                  \
    {                                                                                                              \
        return do_iamax(#NAME #SUF, h, &T, n, x, incx, result, sizeof(I));                                         \
    }
#define SCAL(NAME, T, REAL, I, SUF)                                                                                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *alpha, void *x, I incx);               \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, const void *alpha, void *x, I incx)                \
    {                                                                                                              \
        return do_scal(#NAME #SUF, h, &T, REAL, n, alpha, x, incx);                                                \
    }
#define COPY(NAME, T, SWAP, I, SUF)                                                                                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, void *x, I incx, void *y, I incy);                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I n, void *x, I incx, void *y, I incy)                  \
    {                                                                                                              \
        return do_copy(#NAME #SUF, h, &T, SWAP, n, x, incx, y, incy);                                              \
    }

#define LEVEL1(I, SUF)                                                                                             \
    AXPY(S, blas_s, I, SUF)                                                                                        \
    AXPY(D, blas_d, I, SUF)                                                                                        \
    AXPY(C, blas_c, I, SUF)                                                                                        \
    AXPY(Z, blas_z, I, SUF)                                                                                        \
    DOT(cublasSdot, blas_s, 0, I, SUF)                                                                             \
    DOT(cublasDdot, blas_d, 0, I, SUF)                                                                             \
    DOT(cublasCdotu, blas_c, 0, I, SUF)                                                                            \
    DOT(cublasCdotc, blas_c, 1, I, SUF)                                                                            \
    DOT(cublasZdotu, blas_z, 0, I, SUF)                                                                            \
    DOT(cublasZdotc, blas_z, 1, I, SUF)                                                                            \
    NORM(cublasSnrm2, blas_s, 0, I, SUF)                                                                           \
    NORM(cublasDnrm2, blas_d, 0, I, SUF)                                                                           \
    NORM(cublasScnrm2, blas_c, 0, I, SUF)                                                                          \
    NORM(cublasDznrm2, blas_z, 0, I, SUF)                                                                          \
    NORM(cublasSasum, blas_s, 1, I, SUF)                                                                           \
    NORM(cublasDasum, blas_d, 1, I, SUF)                                                                           \
    NORM(cublasScasum, blas_c, 1, I, SUF)                                                                          \
    NORM(cublasDzasum, blas_z, 1, I, SUF)                                                                          \
    IAMAX(cublasIsamax, blas_s, I, SUF)                                                                            \
    IAMAX(cublasIdamax, blas_d, I, SUF)                                                                            \
    IAMAX(cublasIcamax, blas_c, I, SUF)                                                                            \
    IAMAX(cublasIzamax, blas_z, I, SUF)                                                                            \
    SCAL(cublasSscal, blas_s, 0, I, SUF)                                                                           \
    SCAL(cublasDscal, blas_d, 0, I, SUF)                                                                           \
    SCAL(cublasCscal, blas_c, 0, I, SUF)                                                                           \
    SCAL(cublasZscal, blas_z, 0, I, SUF)                                                                           \
    SCAL(cublasCsscal, blas_c, 1, I, SUF)                                                                          \
    SCAL(cublasZdscal, blas_z, 1, I, SUF)                                                                          \
    COPY(cublasScopy, blas_s, 0, I, SUF)                                                                           \
    COPY(cublasDcopy, blas_d, 0, I, SUF)                                                                           \
    COPY(cublasCcopy, blas_c, 0, I, SUF)                                                                           \
    COPY(cublasZcopy, blas_z, 0, I, SUF)                                                                           \
    COPY(cublasSswap, blas_s, 1, I, SUF)                                                                           \
    COPY(cublasDswap, blas_d, 1, I, SUF)                                                                           \
    COPY(cublasCswap, blas_c, 1, I, SUF)                                                                           \
    COPY(cublasZswap, blas_z, 1, I, SUF)

LEVEL1(int, _v2)
LEVEL1(int64_t, _v2_64)

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

/* The _64 forms: the same copies with 64-bit sizes (kemu's copies take them). */
#define COPY_MATRIX_64(NAME, TO_DEVICE)                                                                            \
    VENDOR_API cublasStatus_t NAME##_64(int64_t rows, int64_t cols, int64_t elem, const void *A, int64_t lda, void *B, \
                                   int64_t ldb);                                                                 \
    VENDOR_API cublasStatus_t NAME##_64(int64_t rows, int64_t cols, int64_t elem, const void *A, int64_t lda, void *B, \
                                   int64_t ldb)                                                                  \
    {                                                                                                              \
        return copy_matrix(#NAME "_64", NULL, TO_DEVICE, rows, cols, elem, A, lda, B, ldb);                              \
    }                                                                                                              \
    VENDOR_API cublasStatus_t NAME##Async_64(int64_t rows, int64_t cols, int64_t elem, const void *A, int64_t lda,    \
                                          void *B, int64_t ldb, cudaStream_t stream);                            \
    VENDOR_API cublasStatus_t NAME##Async_64(int64_t rows, int64_t cols, int64_t elem, const void *A, int64_t lda,    \
                                          void *B, int64_t ldb, cudaStream_t stream)                             \
    {                                                                                                              \
        return copy_matrix(#NAME "Async_64", stream, TO_DEVICE, rows, cols, elem, A, lda, B, ldb);                    \
    }
#define COPY_VECTOR_64(NAME, TO_DEVICE)                                                                            \
    VENDOR_API cublasStatus_t NAME##_64(int64_t n, int64_t elem, const void *x, int64_t incx, void *y, int64_t incy);  \
    VENDOR_API cublasStatus_t NAME##_64(int64_t n, int64_t elem, const void *x, int64_t incx, void *y, int64_t incy)   \
    {                                                                                                              \
        return copy_vector(#NAME "_64", NULL, TO_DEVICE, n, elem, x, incx, y, incy);                                     \
    }                                                                                                              \
    VENDOR_API cublasStatus_t NAME##Async_64(int64_t n, int64_t elem, const void *x, int64_t incx, void *y,           \
                                          int64_t incy, cudaStream_t stream);                                    \
    VENDOR_API cublasStatus_t NAME##Async_64(int64_t n, int64_t elem, const void *x, int64_t incx, void *y,           \
                                          int64_t incy, cudaStream_t stream)                                     \
    {                                                                                                              \
        return copy_vector(#NAME "Async_64", stream, TO_DEVICE, n, elem, x, incx, y, incy);                           \
    }

COPY_MATRIX_64(cublasSetMatrix, 1)
COPY_MATRIX_64(cublasGetMatrix, 0)
COPY_VECTOR_64(cublasSetVector, 1)
COPY_VECTOR_64(cublasGetVector, 0)
