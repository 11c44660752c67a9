/* kemu's libcublas: the level-1 and level-2 routines (axpy, dot, dotu,
 * dotc, nrm2, asum, iamax, scal, copy, swap, gemv and its batched and
 * strided-batched forms, ger, geru, gerc) for float, double, cuComplex and
 * cuDoubleComplex, each with its `_64` form (64-bit sizes; those above
 * 2^31-1 are CUBLAS_STATUS_NOT_SUPPORTED: OpenBLAS's CBLAS takes int), and
 * the host <-> device helpers (cublasSetMatrix, GetMatrix, SetVector,
 * GetVector and their Async forms), through OpenBLAS's CBLAS on the
 * callers' memory after checking every operand range; see cublas.c. The
 * level-3 routines other than gemm are in cublas_level3.c. */
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

/* ---- level 2 ------------------------------------------------------------------------ */

static enum CBLAS_TRANSPOSE cblas_op(int op)
{
    return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}

/* y = alpha op(A) x + beta y for one batch entry (checked); beta == 0
 * does not read y. */
static void gemv_one(const blas_type *t, int trans, int m, int n, const blas_scalar_t *a, const void *A, int lda,
                     const void *x, int incx, const blas_scalar_t *b, int beta_zero, void *y, int incy, int yn)
{
    if (beta_zero) {
        int step = incy < 0 ? -incy : incy;
        for (int i = 0; i < yn; i++)
            memset((char *)y + (size_t)i * (size_t)step * t->elem, 0, t->elem);
    }
    enum CBLAS_TRANSPOSE op = cblas_op(trans);
    switch (t->name) {
    case 'S': cblas_sgemv(CblasColMajor, op, m, n, a->f, A, lda, x, incx, b->f, y, incy); break;
    case 'D': cblas_dgemv(CblasColMajor, op, m, n, a->d, A, lda, x, incx, b->d, y, incy); break;
    case 'C': cblas_cgemv(CblasColMajor, op, m, n, a->c, A, lda, x, incx, b->c, y, incy); break;
    default: cblas_zgemv(CblasColMajor, op, m, n, a->z, A, lda, x, incx, b->z, y, incy); break;
    }
}

/* gemv, gemvBatched (arrays: A, x, y are arrays of batch pointers in
 * device memory) and gemvStridedBatched (entry i at A + i * sa ...). */
static cublasStatus_t do_gemv(const char *api, cublasHandle_t h, const blas_type *t, int trans, int64_t m,
                              int64_t n, const void *alpha, const void *A, int64_t lda, long long sa, const void *x,
                              int64_t incx, long long sx, const void *beta, void *y, int64_t incy, long long sy,
                              int64_t batch, int arrays)
{
    BEGIN(api);
    blas_scalar_t a, b;
    if (!valid_op(trans) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0 || batch < 0)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0 || batch == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(lda) || blas_big(incx) || blas_big(incy));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, t->elem, &b)))
        goto out;
    int beta_zero = blas_scalar_zero(t, &b, t->elem);
    int64_t xn = trans == CUBLAS_OP_N ? n : m, yn = trans == CUBLAS_OP_N ? m : n;
    int overflow = 0;
    uint64_t abytes = vendor_matrix_bytes(m, n, lda, t->elem, &overflow);
    if (overflow)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (arrays) {
        uint64_t parr = (uint64_t)batch * sizeof(void *);
        if (vendor_check_range(api, "Aarray", A, parr) || vendor_check_range(api, "xarray", x, parr) ||
            vendor_check_range(api, "yarray", y, parr))
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
    }
    /* every operand of every entry, before anything is computed */
    for (int pass = 0; pass < 2; pass++)
        for (int64_t i = 0; i < batch; i++) {
            const void *pa = arrays ? ((const void *const *)A)[i] : (const char *)A + i * sa * (int64_t)t->elem;
            const void *px = arrays ? ((const void *const *)x)[i] : (const char *)x + i * sx * (int64_t)t->elem;
            void *py = arrays ? ((void *const *)y)[i] : (char *)y + i * sy * (int64_t)t->elem;
            char na[48], nx[48], ny[48];
            snprintf(na, sizeof na, batch > 1 ? "A (batch entry %lld)" : "A", (long long)i);
            snprintf(nx, sizeof nx, batch > 1 ? "x (batch entry %lld)" : "x", (long long)i);
            snprintf(ny, sizeof ny, batch > 1 ? "y (batch entry %lld)" : "y", (long long)i);
            if (pass == 0) {
                if (vendor_check_range(api, na, pa, abytes))
                    FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
                CHECK_VECTOR(api, nx, px, xn, incx, t->elem);
                CHECK_VECTOR(api, ny, py, yn, incy, t->elem);
                continue;
            }
            vendor_note_read(dev, api, na, pa, m, n, lda, t->elem);
            NOTE_READ(api, nx, px, xn, incx, t->elem);
            if (!beta_zero)
                NOTE_READ(api, ny, py, yn, incy, t->elem);
            gemv_one(t, trans, (int)m, (int)n, &a, pa, (int)lda, px, (int)incx, &b, beta_zero, py, (int)incy,
                     (int)yn);
            blas_wrote_vector(dev, py, yn, incy, t->elem);
        }
out:
    cublas_end();
    return st;
}

#define GEMV(P, T, I, SUF)                                                                                         \
    VENDOR_API cublasStatus_t cublas##P##gemv##SUF(cublasHandle_t h, int trans, I m, I n, const void *alpha,      \
                                                   const void *A, I lda, const void *x, I incx, const void *beta, \
                                                   void *y, I incy);                                             \
    VENDOR_API cublasStatus_t cublas##P##gemv##SUF(cublasHandle_t h, int trans, I m, I n, const void *alpha,      \
                                                   const void *A, I lda, const void *x, I incx, const void *beta, \
                                                   void *y, I incy)                                              \
    {                                                                                                              \
        return do_gemv("cublas" #P "gemv" #SUF, h, &T, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, y, incy,  \
                       0, 1, 0);                                                                                   \
    }
#define GEMV_BATCHED(P, T, I, B)                                                                                   \
    VENDOR_API cublasStatus_t cublas##P##gemvBatched##B(cublasHandle_t h, int trans, I m, I n,                \
                                                            const void *alpha, const void *const A[], I lda,      \
                                                            const void *const x[], I incx, const void *beta,      \
                                                            void *const y[], I incy, I batch);                    \
    VENDOR_API cublasStatus_t cublas##P##gemvBatched##B(cublasHandle_t h, int trans, I m, I n,                \
                                                            const void *alpha, const void *const A[], I lda,      \
                                                            const void *const x[], I incx, const void *beta,      \
                                                            void *const y[], I incy, I batch)                     \
    {                                                                                                              \
        return do_gemv("cublas" #P "gemvBatched" #B, h, &T, trans, m, n, alpha, A, lda, 0, x, incx, 0, beta, \
                       (void *)y, incy, 0, batch, 1);                                                                   \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##P##gemvStridedBatched##B(                                              \
        cublasHandle_t h, int trans, I m, I n, const void *alpha, const void *A, I lda, long long sa,             \
        const void *x, I incx, long long sx, const void *beta, void *y, I incy, long long sy, I batch);           \
    VENDOR_API cublasStatus_t cublas##P##gemvStridedBatched##B(                                              \
        cublasHandle_t h, int trans, I m, I n, const void *alpha, const void *A, I lda, long long sa,             \
        const void *x, I incx, long long sx, const void *beta, void *y, I incy, long long sy, I batch)            \
    {                                                                                                              \
        return do_gemv("cublas" #P "gemvStridedBatched" #B, h, &T, trans, m, n, alpha, A, lda, sa, x, incx,  \
                       sx, beta, y, incy, sy, batch, 0);                                                           \
    }

/* A = alpha x y^T + A (ger, geru) or alpha x y^H + A (gerc) */
static cublasStatus_t do_ger(const char *api, cublasHandle_t h, const blas_type *t, int conj, int64_t m, int64_t n,
                             const void *alpha, const void *x, int64_t incx, const void *y, int64_t incy, void *A,
                             int64_t lda)
{
    BEGIN(api);
    blas_scalar_t a;
    if (m < 0 || n < 0 || incx == 0 || incy == 0 || lda < (m > 1 ? m : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(lda) || blas_big(incx) || blas_big(incy));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)))
        goto out;
    int overflow = 0;
    uint64_t abytes = vendor_matrix_bytes(m, n, lda, t->elem, &overflow);
    if (overflow)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    CHECK_VECTOR(api, "x", x, m, incx, t->elem);
    CHECK_VECTOR(api, "y", y, n, incy, t->elem);
    if (vendor_check_range(api, "A", A, abytes))
        FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
    NOTE_READ(api, "x", x, m, incx, t->elem);
    NOTE_READ(api, "y", y, n, incy, t->elem);
    vendor_note_read(dev, api, "A", A, m, n, lda, t->elem);
    int im = (int)m, in = (int)n, ix = (int)incx, iy = (int)incy, il = (int)lda;
    switch (t->name) {
    case 'S': cblas_sger(CblasColMajor, im, in, a.f, x, ix, y, iy, A, il); break;
    case 'D': cblas_dger(CblasColMajor, im, in, a.d, x, ix, y, iy, A, il); break;
    case 'C':
        if (conj)
            cblas_cgerc(CblasColMajor, im, in, a.c, x, ix, y, iy, A, il);
        else
            cblas_cgeru(CblasColMajor, im, in, a.c, x, ix, y, iy, A, il);
        break;
    default:
        if (conj)
            cblas_zgerc(CblasColMajor, im, in, a.z, x, ix, y, iy, A, il);
        else
            cblas_zgeru(CblasColMajor, im, in, a.z, x, ix, y, iy, A, il);
        break;
    }
    vendor_mark_written(dev, A, m, n, lda, t->elem);
out:
    cublas_end();
    return st;
}

#define GER(NAME, T, CONJ, I, SUF)                                                                                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I m, I n, const void *alpha, const void *x, I incx,     \
                                        const void *y, I incy, void *A, I lda);                                  \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, I m, I n, const void *alpha, const void *x, I incx,     \
                                        const void *y, I incy, void *A, I lda)                                   \
    {                                                                                                              \
        return do_ger(#NAME #SUF, h, &T, CONJ, m, n, alpha, x, incx, y, incy, A, lda);                             \
    }

/* the batched forms are named cublasSgemvBatched and cublasSgemvBatched_64 */
#define LEVEL2(I, SUF, B)                                                                                          \
    GEMV(S, blas_s, I, SUF)                                                                                        \
    GEMV(D, blas_d, I, SUF)                                                                                        \
    GEMV(C, blas_c, I, SUF)                                                                                        \
    GEMV(Z, blas_z, I, SUF)                                                                                        \
    GEMV_BATCHED(S, blas_s, I, B)                                                                                  \
    GEMV_BATCHED(D, blas_d, I, B)                                                                                  \
    GEMV_BATCHED(C, blas_c, I, B)                                                                                  \
    GEMV_BATCHED(Z, blas_z, I, B)                                                                                  \
    GER(cublasSger, blas_s, 0, I, SUF)                                                                             \
    GER(cublasDger, blas_d, 0, I, SUF)                                                                             \
    GER(cublasCgeru, blas_c, 0, I, SUF)                                                                            \
    GER(cublasCgerc, blas_c, 1, I, SUF)                                                                            \
    GER(cublasZgeru, blas_z, 0, I, SUF)                                                                            \
    GER(cublasZgerc, blas_z, 1, I, SUF)

LEVEL2(int, _v2, )
LEVEL2(int64_t, _v2_64, _64)

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

/* ---- level 2: triangular, symmetric and Hermitian ------------------------------------ */

enum { FILL_LOWER = 0, FILL_UPPER = 1 };

/* The triangle of an n x n matrix read (diag: with the diagonal). */
static void note_triangle(kemu_device *dev, const char *api, const char *arg, const void *p, int64_t n, int64_t ld,
                          size_t elem, int lower, int diag)
{
    for (int64_t j = 0; j < n; j++) {
        int64_t first = lower ? (diag ? j : j + 1) : 0, last = lower ? n : (diag ? j + 1 : j);
        if (last > first)
            vendor_note_read(dev, api, arg, (const char *)p + (size_t)(j * ld + first) * elem, last - first, 1, ld,
                             elem);
    }
}

static void mark_triangle(kemu_device *dev, void *p, int64_t n, int64_t ld, size_t elem, int lower)
{
    for (int64_t j = 0; j < n; j++) {
        int64_t first = lower ? j : 0, last = lower ? n : j + 1;
        vendor_mark_written(dev, (char *)p + (size_t)(j * ld + first) * elem, last - first, 1, ld, elem);
    }
}

/* x = op(A)^-1 x (solve) or op(A) x, A triangular */
static cublasStatus_t do_trmv(const char *api, cublasHandle_t h, const blas_type *t, int solve, int uplo, int trans,
                              int diag, int64_t n, const void *A, int64_t lda, void *x, int64_t incx)
{
    BEGIN(api);
    if ((uplo != FILL_LOWER && uplo != FILL_UPPER) || !valid_op(trans) || (diag != 0 && diag != 1) || n < 0 ||
        lda < (n > 1 ? n : 1) || incx == 0)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (n == 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(lda) || blas_big(incx));
    CHECK_MATRIX(api, "A", A, n, n, lda, t->elem);
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    note_triangle(dev, api, "A", A, n, lda, t->elem, uplo == FILL_LOWER, diag == 0);
    NOTE_READ(api, "x", x, n, incx, t->elem);
    enum CBLAS_UPLO u = uplo == FILL_LOWER ? CblasLower : CblasUpper;
    enum CBLAS_DIAG d = diag ? CblasUnit : CblasNonUnit;
    enum CBLAS_TRANSPOSE o = cblas_op(trans);
    int in = (int)n, ia = (int)lda, ix = (int)incx;
    switch (t->name) {
    case 'S': (solve ? cblas_strsv : cblas_strmv)(CblasColMajor, u, o, d, in, A, ia, x, ix); break;
    case 'D': (solve ? cblas_dtrsv : cblas_dtrmv)(CblasColMajor, u, o, d, in, A, ia, x, ix); break;
    case 'C': (solve ? cblas_ctrsv : cblas_ctrmv)(CblasColMajor, u, o, d, in, A, ia, x, ix); break;
    default: (solve ? cblas_ztrsv : cblas_ztrmv)(CblasColMajor, u, o, d, in, A, ia, x, ix); break;
    }
    blas_wrote_vector(dev, x, n, incx, t->elem);
out:
    cublas_end();
    return st;
}

/* y = alpha A x + beta y, A symmetric (real types) or Hermitian (complex),
 * only its uplo triangle read; beta == 0 does not read y */
static cublasStatus_t do_symv(const char *api, cublasHandle_t h, const blas_type *t, int uplo, int64_t n,
                              const void *alpha, const void *A, int64_t lda, const void *x, int64_t incx,
                              const void *beta, void *y, int64_t incy)
{
    BEGIN(api);
    blas_scalar_t a, b;
    if ((uplo != FILL_LOWER && uplo != FILL_UPPER) || n < 0 || lda < (n > 1 ? n : 1) || incx == 0 || incy == 0)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (n == 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(lda) || blas_big(incx) || blas_big(incy));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, t->elem, &b)))
        goto out;
    int beta_zero = blas_scalar_zero(t, &b, t->elem);
    CHECK_MATRIX(api, "A", A, n, n, lda, t->elem);
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    CHECK_VECTOR(api, "y", y, n, incy, t->elem);
    note_triangle(dev, api, "A", A, n, lda, t->elem, uplo == FILL_LOWER, 1);
    NOTE_READ(api, "x", x, n, incx, t->elem);
    if (!beta_zero) {
        NOTE_READ(api, "y", y, n, incy, t->elem);
    } else {
        int64_t step = incy < 0 ? -incy : incy;
        for (int64_t i = 0; i < n; i++)
            memset((char *)y + (size_t)(i * step) * t->elem, 0, t->elem);
    }
    enum CBLAS_UPLO u = uplo == FILL_LOWER ? CblasLower : CblasUpper;
    int in = (int)n, ia = (int)lda, ix = (int)incx, iy = (int)incy;
    switch (t->name) {
    case 'S': cblas_ssymv(CblasColMajor, u, in, a.f, A, ia, x, ix, b.f, y, iy); break;
    case 'D': cblas_dsymv(CblasColMajor, u, in, a.d, A, ia, x, ix, b.d, y, iy); break;
    case 'C': cblas_chemv(CblasColMajor, u, in, a.c, A, ia, x, ix, b.c, y, iy); break;
    default: cblas_zhemv(CblasColMajor, u, in, a.z, A, ia, x, ix, b.z, y, iy); break;
    }
    blas_wrote_vector(dev, y, n, incy, t->elem);
out:
    cublas_end();
    return st;
}

/* A = alpha x x^T + A (syr; her: x x^H, real alpha) or alpha (x y^T + y x^T)
 * + A (syr2; her2: alpha x y^H + conj(alpha) y x^H), the uplo triangle */
static cublasStatus_t do_syr(const char *api, cublasHandle_t h, const blas_type *t, int two, int uplo, int64_t n,
                             const void *alpha, const void *x, int64_t incx, const void *y, int64_t incy, void *A,
                             int64_t lda)
{
    BEGIN(api);
    blas_scalar_t a;
    int complex_type = t->elem != t->real;
    if ((uplo != FILL_LOWER && uplo != FILL_UPPER) || n < 0 || lda < (n > 1 ? n : 1) || incx == 0 ||
        (two && incy == 0))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (n == 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(lda) || blas_big(incx) || blas_big(incy));
    /* her takes a real alpha, her2 a complex one */
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, complex_type && !two ? t->real : t->elem, &a)))
        goto out;
    CHECK_VECTOR(api, "x", x, n, incx, t->elem);
    if (two)
        CHECK_VECTOR(api, "y", y, n, incy, t->elem);
    CHECK_MATRIX(api, "A", A, n, n, lda, t->elem);
    int lower = uplo == FILL_LOWER;
    NOTE_READ(api, "x", x, n, incx, t->elem);
    if (two)
        NOTE_READ(api, "y", y, n, incy, t->elem);
    note_triangle(dev, api, "A", A, n, lda, t->elem, lower, 1);
    enum CBLAS_UPLO u = lower ? CblasLower : CblasUpper;
    int in = (int)n, ia = (int)lda, ix = (int)incx, iy = (int)incy;
    switch (t->name) {
    case 'S':
        if (two)
            cblas_ssyr2(CblasColMajor, u, in, a.f, x, ix, y, iy, A, ia);
        else
            cblas_ssyr(CblasColMajor, u, in, a.f, x, ix, A, ia);
        break;
    case 'D':
        if (two)
            cblas_dsyr2(CblasColMajor, u, in, a.d, x, ix, y, iy, A, ia);
        else
            cblas_dsyr(CblasColMajor, u, in, a.d, x, ix, A, ia);
        break;
    case 'C':
        if (two)
            cblas_cher2(CblasColMajor, u, in, a.c, x, ix, y, iy, A, ia);
        else
            cblas_cher(CblasColMajor, u, in, a.f, x, ix, A, ia);
        break;
    default:
        if (two)
            cblas_zher2(CblasColMajor, u, in, a.z, x, ix, y, iy, A, ia);
        else
            cblas_zher(CblasColMajor, u, in, a.d, x, ix, A, ia);
        break;
    }
    mark_triangle(dev, A, n, lda, t->elem, lower);
out:
    cublas_end();
    return st;
}

#define TRMV(NAME, T, SOLVE, I, SUF)                                                                               \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, int diag, I n, const void *A,       \
                                        I lda, void *x, I incx);                                                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, int diag, I n, const void *A,       \
                                        I lda, void *x, I incx)                                                  \
    {                                                                                                              \
        return do_trmv(#NAME #SUF, h, &T, SOLVE, uplo, trans, diag, n, A, lda, x, incx);                           \
    }
#define SYMV(NAME, T, I, SUF)                                                                                      \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *A, I lda,  \
                                        const void *x, I incx, const void *beta, void *y, I incy);               \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *A, I lda,  \
                                        const void *x, I incx, const void *beta, void *y, I incy)                \
    {                                                                                                              \
        return do_symv(#NAME #SUF, h, &T, uplo, n, alpha, A, lda, x, incx, beta, y, incy);                         \
    }
#define SYR(NAME, T, I, SUF)                                                                                       \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *x, I incx, \
                                        void *A, I lda);                                                         \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *x, I incx, \
                                        void *A, I lda)                                                          \
    {                                                                                                              \
        return do_syr(#NAME #SUF, h, &T, 0, uplo, n, alpha, x, incx, NULL, 1, A, lda);                             \
    }
#define SYR2(NAME, T, I, SUF)                                                                                      \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *x, I incx, \
                                        const void *y, I incy, void *A, I lda);                                  \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, I n, const void *alpha, const void *x, I incx, \
                                        const void *y, I incy, void *A, I lda)                                   \
    {                                                                                                              \
        return do_syr(#NAME #SUF, h, &T, 1, uplo, n, alpha, x, incx, y, incy, A, lda);                             \
    }

/* (CBLAS has no complex symv, syr, syr2: cublasCsymv ... stay stubs) */
#define LEVEL2_TRIANGULAR(I, SUF)                                                                                  \
    TRMV(cublasStrsv, blas_s, 1, I, SUF)                                                                           \
    TRMV(cublasDtrsv, blas_d, 1, I, SUF)                                                                           \
    TRMV(cublasCtrsv, blas_c, 1, I, SUF)                                                                           \
    TRMV(cublasZtrsv, blas_z, 1, I, SUF)                                                                           \
    TRMV(cublasStrmv, blas_s, 0, I, SUF)                                                                           \
    TRMV(cublasDtrmv, blas_d, 0, I, SUF)                                                                           \
    TRMV(cublasCtrmv, blas_c, 0, I, SUF)                                                                           \
    TRMV(cublasZtrmv, blas_z, 0, I, SUF)                                                                           \
    SYMV(cublasSsymv, blas_s, I, SUF)                                                                              \
    SYMV(cublasDsymv, blas_d, I, SUF)                                                                              \
    SYMV(cublasChemv, blas_c, I, SUF)                                                                              \
    SYMV(cublasZhemv, blas_z, I, SUF)                                                                              \
    SYR(cublasSsyr, blas_s, I, SUF)                                                                                \
    SYR(cublasDsyr, blas_d, I, SUF)                                                                                \
    SYR(cublasCher, blas_c, I, SUF)                                                                                \
    SYR(cublasZher, blas_z, I, SUF)                                                                                \
    SYR2(cublasSsyr2, blas_s, I, SUF)                                                                              \
    SYR2(cublasDsyr2, blas_d, I, SUF)                                                                              \
    SYR2(cublasCher2, blas_c, I, SUF)                                                                              \
    SYR2(cublasZher2, blas_z, I, SUF)

LEVEL2_TRIANGULAR(int, _v2)
LEVEL2_TRIANGULAR(int64_t, _v2_64)
