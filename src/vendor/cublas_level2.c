/* kemu's libcublas: the level-2 routines (gemv and its batched and
 * strided-batched forms, ger, geru, gerc, trsv, trmv, symv, hemv, syr, her,
 * syr2, her2) for float, double, cuComplex and cuDoubleComplex, each with
 * its `_64` form, through OpenBLAS's CBLAS on the callers' memory after
 * checking every operand range; see cublas_level.c. */
#include "config.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_blas.h"

/* ---- level 2 ------------------------------------------------------------------------ */

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
    enum CBLAS_TRANSPOSE op = BLAS_OP(trans);
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
    enum CBLAS_TRANSPOSE o = BLAS_OP(trans);
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
