/* kemu's libcublas: the level-3 routines besides the real gemm family
 * (cublas.c): trsm, trmm, symm, syrk for float, double, cuComplex and
 * cuDoubleComplex, hemm and herk for the complex types, and the complex
 * gemm (cublasCgemm, cublasZgemm and their batched and strided-batched
 * forms), each with its `_64` form, through OpenBLAS's CBLAS on the
 * callers' memory after checking every operand range. Only the triangle a
 * routine reads of a triangular, symmetric or Hermitian matrix is checked
 * by initcheck, and only the triangle syrk / herk write is marked written. */
#include "config.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_blas.h"

enum { SIDE_LEFT = 0, SIDE_RIGHT = 1, FILL_LOWER = 0, FILL_UPPER = 1, DIAG_NON_UNIT = 0, DIAG_UNIT = 1 };

/* The triangle (lower or upper, with or without the diagonal) of an n x n
 * matrix, column by column: read (note) or written (mark). */
static void triangle(kemu_device *dev, int write, const char *api, const char *arg, const void *p, int64_t n,
                     int64_t ld, size_t elem, int lower, int diag)
{
    for (int64_t j = 0; j < n; j++) {
        int64_t first = lower ? (diag ? j : j + 1) : 0, last = lower ? n : (diag ? j + 1 : j);
        if (last <= first)
            continue;
        char *col = (char *)p + (size_t)(j * ld + first) * elem;
        if (write)
            vendor_mark_written(dev, col, last - first, 1, ld, elem);
        else
            vendor_note_read(dev, api, arg, col, last - first, 1, ld, elem);
    }
}

/* C = 0 over rows x cols (beta == 0: C is not read) */
static void zero_matrix(void *C, int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    for (int64_t j = 0; j < cols; j++)
        memset((char *)C + (size_t)(j * ld) * elem, 0, (size_t)rows * elem);
}

/* B = alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right), A triangular;
 * trsmBatched (arrays): A and B are arrays of batch pointers */
static cublasStatus_t do_trsm(const char *api, cublasHandle_t h, const blas_type *t, int side, int uplo, int trans,
                              int diag, int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, void *B,
                              int64_t ldb, int64_t batch, int arrays)
{
    BEGIN(api);
    blas_scalar_t a;
    int64_t ka = side == SIDE_LEFT ? m : n;
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || (uplo != FILL_LOWER && uplo != FILL_UPPER) ||
        !valid_op(trans) || (diag != DIAG_NON_UNIT && diag != DIAG_UNIT) || m < 0 || n < 0 ||
        lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || batch < 0)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0 || batch == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(lda) || blas_big(ldb));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)))
        goto out;
    int alpha_zero = blas_scalar_zero(t, &a, t->elem);
    if (arrays) {
        uint64_t parr = (uint64_t)batch * sizeof(void *);
        if ((!alpha_zero && vendor_check_range(api, "Aarray", A, parr)) || vendor_check_range(api, "Barray", B, parr))
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
    }
    /* every entry's operands, before anything is computed */
    for (int pass = 0; pass < 2; pass++)
        for (int64_t i = 0; i < batch; i++) {
            const void *pa = arrays ? ((const void *const *)A)[i] : A;
            void *pb = arrays ? ((void *const *)B)[i] : B;
            char na[48], nb[48];
            snprintf(na, sizeof na, arrays ? "A (batch entry %lld)" : "A", (long long)i);
            snprintf(nb, sizeof nb, arrays ? "B (batch entry %lld)" : "B", (long long)i);
            if (pass == 0) {
                if (!alpha_zero)
                    CHECK_MATRIX(api, na, pa, ka, ka, lda, t->elem);
                CHECK_MATRIX(api, nb, pb, m, n, ldb, t->elem);
                continue;
            }
            if (alpha_zero) { /* B = 0; neither A nor B is read */
                zero_matrix(pb, m, n, ldb, t->elem);
            } else {
                triangle(dev, 0, api, na, pa, ka, lda, t->elem, uplo == FILL_LOWER, diag == DIAG_NON_UNIT);
                vendor_note_read(dev, api, nb, pb, m, n, ldb, t->elem);
                enum CBLAS_SIDE s = side == SIDE_LEFT ? CblasLeft : CblasRight;
                enum CBLAS_UPLO u = uplo == FILL_LOWER ? CblasLower : CblasUpper;
                enum CBLAS_DIAG d = diag == DIAG_UNIT ? CblasUnit : CblasNonUnit;
                int im = (int)m, in = (int)n, ia = (int)lda, ib = (int)ldb;
                switch (t->name) {
                case 'S': cblas_strsm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.f, pa, ia, pb, ib); break;
                case 'D': cblas_dtrsm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.d, pa, ia, pb, ib); break;
                case 'C': cblas_ctrsm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.c, pa, ia, pb, ib); break;
                default: cblas_ztrsm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.z, pa, ia, pb, ib); break;
                }
            }
            vendor_mark_written(dev, pb, m, n, ldb, t->elem);
        }
out:
    cublas_end();
    return st;
}

/* C = alpha op(A) B (left) or alpha B op(A) (right), A triangular; C may
 * be B (with ldc == ldb) */
static cublasStatus_t do_trmm(const char *api, cublasHandle_t h, const blas_type *t, int side, int uplo, int trans,
                              int diag, int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda,
                              const void *B, int64_t ldb, void *C, int64_t ldc)
{
    BEGIN(api);
    blas_scalar_t a;
    int64_t ka = side == SIDE_LEFT ? m : n;
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || (uplo != FILL_LOWER && uplo != FILL_UPPER) ||
        !valid_op(trans) || (diag != DIAG_NON_UNIT && diag != DIAG_UNIT) || m < 0 || n < 0 ||
        lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(lda) || blas_big(ldb) || blas_big(ldc));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)))
        goto out;
    int alpha_zero = blas_scalar_zero(t, &a, t->elem);
    if (!alpha_zero) {
        CHECK_MATRIX(api, "A", A, ka, ka, lda, t->elem);
        CHECK_MATRIX(api, "B", B, m, n, ldb, t->elem);
    }
    CHECK_MATRIX(api, "C", C, m, n, ldc, t->elem);
    if (alpha_zero) {
        zero_matrix(C, m, n, ldc, t->elem);
    } else {
        if (B == C && ldb != ldc) {
            vendor_message(api, "B and C are the same matrix with different leading dimensions");
            FAIL(CUBLAS_STATUS_INVALID_VALUE);
        }
        triangle(dev, 0, api, "A", A, ka, lda, t->elem, uplo == FILL_LOWER, diag == DIAG_NON_UNIT);
        vendor_note_read(dev, api, "B", B, m, n, ldb, t->elem);
        /* CBLAS's trmm works in place: C = B first */
        if (B != C)
            for (int64_t j = 0; j < n; j++)
                memmove((char *)C + (size_t)(j * ldc) * t->elem, (const char *)B + (size_t)(j * ldb) * t->elem,
                        (size_t)m * t->elem);
        enum CBLAS_SIDE s = side == SIDE_LEFT ? CblasLeft : CblasRight;
        enum CBLAS_UPLO u = uplo == FILL_LOWER ? CblasLower : CblasUpper;
        enum CBLAS_DIAG d = diag == DIAG_UNIT ? CblasUnit : CblasNonUnit;
        int im = (int)m, in = (int)n, ia = (int)lda, ic = (int)ldc;
        switch (t->name) {
        case 'S': cblas_strmm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.f, A, ia, C, ic); break;
        case 'D': cblas_dtrmm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.d, A, ia, C, ic); break;
        case 'C': cblas_ctrmm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.c, A, ia, C, ic); break;
        default: cblas_ztrmm(CblasColMajor, s, u, BLAS_OP(trans), d, im, in, a.z, A, ia, C, ic); break;
        }
    }
    vendor_mark_written(dev, C, m, n, ldc, t->elem);
out:
    cublas_end();
    return st;
}

/* C = alpha A B + beta C (left) or alpha B A + beta C (right), A
 * symmetric (herm: Hermitian), only its uplo triangle read */
static cublasStatus_t do_symm(const char *api, cublasHandle_t h, const blas_type *t, int herm, int side, int uplo,
                              int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, const void *B,
                              int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    BEGIN(api);
    blas_scalar_t a, b;
    int64_t ka = side == SIDE_LEFT ? m : n;
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || (uplo != FILL_LOWER && uplo != FILL_UPPER) || m < 0 || n < 0 ||
        lda < (ka > 1 ? ka : 1) || ldb < (m > 1 ? m : 1) || ldc < (m > 1 ? m : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(lda) || blas_big(ldb) || blas_big(ldc));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, t->elem, &b)))
        goto out;
    int alpha_zero = blas_scalar_zero(t, &a, t->elem), beta_zero = blas_scalar_zero(t, &b, t->elem);
    if (!alpha_zero) {
        CHECK_MATRIX(api, "A", A, ka, ka, lda, t->elem);
        CHECK_MATRIX(api, "B", B, m, n, ldb, t->elem);
    }
    CHECK_MATRIX(api, "C", C, m, n, ldc, t->elem);
    if (!alpha_zero) {
        triangle(dev, 0, api, "A", A, ka, lda, t->elem, uplo == FILL_LOWER, 1);
        vendor_note_read(dev, api, "B", B, m, n, ldb, t->elem);
    }
    if (!beta_zero)
        vendor_note_read(dev, api, "C", C, m, n, ldc, t->elem);
    else
        zero_matrix(C, m, n, ldc, t->elem);
    if (!alpha_zero) {
        enum CBLAS_SIDE s = side == SIDE_LEFT ? CblasLeft : CblasRight;
        enum CBLAS_UPLO u = uplo == FILL_LOWER ? CblasLower : CblasUpper;
        int im = (int)m, in = (int)n, ia = (int)lda, ib = (int)ldb, ic = (int)ldc;
        switch (t->name) {
        case 'S': cblas_ssymm(CblasColMajor, s, u, im, in, a.f, A, ia, B, ib, b.f, C, ic); break;
        case 'D': cblas_dsymm(CblasColMajor, s, u, im, in, a.d, A, ia, B, ib, b.d, C, ic); break;
        case 'C':
            if (herm)
                cblas_chemm(CblasColMajor, s, u, im, in, a.c, A, ia, B, ib, b.c, C, ic);
            else
                cblas_csymm(CblasColMajor, s, u, im, in, a.c, A, ia, B, ib, b.c, C, ic);
            break;
        default:
            if (herm)
                cblas_zhemm(CblasColMajor, s, u, im, in, a.z, A, ia, B, ib, b.z, C, ic);
            else
                cblas_zsymm(CblasColMajor, s, u, im, in, a.z, A, ia, B, ib, b.z, C, ic);
            break;
        }
    } else if (!beta_zero) {
        /* C = beta C: a symm with no product is a scaling */
        for (int64_t j = 0; j < n; j++) {
            void *col = (char *)C + (size_t)(j * ldc) * t->elem;
            switch (t->name) {
            case 'S': cblas_sscal((int)m, b.f, col, 1); break;
            case 'D': cblas_dscal((int)m, b.d, col, 1); break;
            case 'C': cblas_cscal((int)m, b.c, col, 1); break;
            default: cblas_zscal((int)m, b.z, col, 1); break;
            }
        }
    }
    vendor_mark_written(dev, C, m, n, ldc, t->elem);
out:
    cublas_end();
    return st;
}

/* C = alpha op(A) op(A)^T + beta C (syrk) or alpha op(A) op(A)^H + beta C
 * (herk: real alpha and beta); with B (two): alpha op(A) op(B)^T + alpha
 * op(B) op(A)^T + beta C (syr2k) or alpha op(A) op(B)^H + conj(alpha)
 * op(B) op(A)^H + beta C (her2k: real beta); the uplo triangle of the
 * n x n C only */
static cublasStatus_t do_syrk(const char *api, cublasHandle_t h, const blas_type *t, int herm, int two, int uplo,
                              int trans, int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                              const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    BEGIN(api);
    blas_scalar_t a, b;
    int complex_type = t->elem != t->real;
    /* a complex syrk takes N or T, herk N or C; a real one any */
    int bad_op = !valid_op(trans) || (complex_type && !herm && trans == CUBLAS_OP_C) || (herm && trans == CUBLAS_OP_T);
    int64_t ar = trans == CUBLAS_OP_N ? n : k, ac = trans == CUBLAS_OP_N ? k : n;
    if ((uplo != FILL_LOWER && uplo != FILL_UPPER) || bad_op || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) ||
        (two && ldb < (ar > 1 ? ar : 1)) || ldc < (n > 1 ? n : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (n == 0)
        goto out;
    CHECK_FITS(api, blas_big(n) || blas_big(k) || blas_big(lda) || blas_big(ldb) || blas_big(ldc));
    size_t abytes = herm && !two ? t->real : t->elem, bbytes = herm ? t->real : t->elem;
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, abytes, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, bbytes, &b)))
        goto out;
    int product = k > 0 && !blas_scalar_zero(t, &a, abytes), beta_zero = blas_scalar_zero(t, &b, bbytes);
    if (product) {
        CHECK_MATRIX(api, "A", A, ar, ac, lda, t->elem);
        if (two)
            CHECK_MATRIX(api, "B", B, ar, ac, ldb, t->elem);
    }
    CHECK_MATRIX(api, "C", C, n, n, ldc, t->elem);
    int lower = uplo == FILL_LOWER;
    if (product) {
        vendor_note_read(dev, api, "A", A, ar, ac, lda, t->elem);
        if (two)
            vendor_note_read(dev, api, "B", B, ar, ac, ldb, t->elem);
    }
    if (!beta_zero) {
        triangle(dev, 0, api, "C", C, n, ldc, t->elem, lower, 1);
    } else {
        for (int64_t j = 0; j < n; j++) {
            int64_t first = lower ? j : 0, last = lower ? n : j + 1;
            memset((char *)C + (size_t)(j * ldc + first) * t->elem, 0, (size_t)(last - first) * t->elem);
        }
    }
    enum CBLAS_UPLO u = lower ? CblasLower : CblasUpper;
    enum CBLAS_TRANSPOSE o = BLAS_OP(trans);
    /* k = 0 or alpha = 0 still scales the triangle by beta (BLAS does that) */
    int in = (int)n, ik = product ? (int)k : 0, ia = (int)(lda > 0 ? lda : 1), ic = (int)ldc;
    int ib = two ? (int)(ldb > 0 ? ldb : 1) : ia;
    const void *pa = product ? A : C, *pb = product && two ? B : pa; /* not read when ik == 0 */
    if (two) {
        switch (t->name) {
        case 'S': cblas_ssyr2k(CblasColMajor, u, o, in, ik, a.f, pa, ia, pb, ib, b.f, C, ic); break;
        case 'D': cblas_dsyr2k(CblasColMajor, u, o, in, ik, a.d, pa, ia, pb, ib, b.d, C, ic); break;
        case 'C':
            if (herm)
                cblas_cher2k(CblasColMajor, u, o, in, ik, a.c, pa, ia, pb, ib, b.f, C, ic);
            else
                cblas_csyr2k(CblasColMajor, u, o, in, ik, a.c, pa, ia, pb, ib, b.c, C, ic);
            break;
        default:
            if (herm)
                cblas_zher2k(CblasColMajor, u, o, in, ik, a.z, pa, ia, pb, ib, b.d, C, ic);
            else
                cblas_zsyr2k(CblasColMajor, u, o, in, ik, a.z, pa, ia, pb, ib, b.z, C, ic);
            break;
        }
    } else {
        switch (t->name) {
        case 'S': cblas_ssyrk(CblasColMajor, u, o, in, ik, a.f, pa, ia, b.f, C, ic); break;
        case 'D': cblas_dsyrk(CblasColMajor, u, o, in, ik, a.d, pa, ia, b.d, C, ic); break;
        case 'C':
            if (herm)
                cblas_cherk(CblasColMajor, u, o, in, ik, a.f, pa, ia, b.f, C, ic);
            else
                cblas_csyrk(CblasColMajor, u, o, in, ik, a.c, pa, ia, b.c, C, ic);
            break;
        default:
            if (herm)
                cblas_zherk(CblasColMajor, u, o, in, ik, a.d, pa, ia, b.d, C, ic);
            else
                cblas_zsyrk(CblasColMajor, u, o, in, ik, a.z, pa, ia, b.z, C, ic);
            break;
        }
    }
    triangle(dev, 1, api, "C", C, n, ldc, t->elem, lower, 1);
out:
    cublas_end();
    return st;
}

/* The complex gemm: one product, strided batches or arrays of pointers. */
static cublasStatus_t do_cgemm(const char *api, cublasHandle_t h, const blas_type *t, int ta, int tb, int64_t m,
                               int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda, long long sa,
                               const void *B, int64_t ldb, long long sb, const void *beta, void *C, int64_t ldc,
                               long long sc, int64_t batch, int arrays)
{
    BEGIN(api);
    blas_scalar_t a, b;
    int64_t ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
    int64_t br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
    if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) ||
        ldb < (br > 1 ? br : 1) || ldc < (m > 1 ? m : 1) || batch < 0)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0 || batch == 0)
        goto out;
    CHECK_FITS(api, blas_big(m) || blas_big(n) || blas_big(k) || blas_big(lda) || blas_big(ldb) || blas_big(ldc));
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, t->elem, &b)))
        goto out;
    int product = k > 0 && !blas_scalar_zero(t, &a, t->elem), beta_zero = blas_scalar_zero(t, &b, t->elem);
    int overflow = 0;
    uint64_t bytes_a = product ? vendor_matrix_bytes(ar, ac, lda, t->elem, &overflow) : 0;
    uint64_t bytes_b = product ? vendor_matrix_bytes(br, bc, ldb, t->elem, &overflow) : 0;
    uint64_t bytes_c = vendor_matrix_bytes(m, n, ldc, t->elem, &overflow);
    if (overflow)
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (arrays) {
        uint64_t parr = (uint64_t)batch * sizeof(void *);
        if ((product && (vendor_check_range(api, "Aarray", A, parr) || vendor_check_range(api, "Barray", B, parr))) ||
            vendor_check_range(api, "Carray", C, parr))
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int64_t i = 0; i < batch; i++) {
            const void *pa = !product ? NULL
                             : arrays ? ((const void *const *)A)[i]
                                      : (const char *)A + i * sa * (int64_t)t->elem;
            const void *pb = !product ? NULL
                             : arrays ? ((const void *const *)B)[i]
                                      : (const char *)B + i * sb * (int64_t)t->elem;
            void *pc = arrays ? ((void *const *)C)[i] : (char *)C + i * sc * (int64_t)t->elem;
            char na[48], nb[48], nc[48];
            snprintf(na, sizeof na, batch > 1 ? "A (batch entry %lld)" : "A", (long long)i);
            snprintf(nb, sizeof nb, batch > 1 ? "B (batch entry %lld)" : "B", (long long)i);
            snprintf(nc, sizeof nc, batch > 1 ? "C (batch entry %lld)" : "C", (long long)i);
            if (pass == 0) {
                if (vendor_check_range(api, na, pa, bytes_a) || vendor_check_range(api, nb, pb, bytes_b) ||
                    vendor_check_range(api, nc, pc, bytes_c))
                    FAIL(CUBLAS_STATUS_EXECUTION_FAILED);
                continue;
            }
            if (product) {
                vendor_note_read(dev, api, na, pa, ar, ac, lda, t->elem);
                vendor_note_read(dev, api, nb, pb, br, bc, ldb, t->elem);
            }
            if (!beta_zero)
                vendor_note_read(dev, api, nc, pc, m, n, ldc, t->elem);
            else
                zero_matrix(pc, m, n, ldc, t->elem);
            /* k = 0 or alpha = 0 only scales C by beta: a product over k = 0 */
            int im = (int)m, in = (int)n, ik = product ? (int)k : 0;
            int ia = product ? (int)lda : (int)(ar > 1 ? ar : 1), ib = product ? (int)ldb : (int)(br > 1 ? br : 1);
            const void *xa = product ? pa : pc, *xb = product ? pb : pc;
            if (t->name == 'C')
                cblas_cgemm(CblasColMajor, BLAS_OP(ta), BLAS_OP(tb), im, in, ik, a.c, xa, ia, xb, ib, b.c, pc,
                            (int)ldc);
            else
                cblas_zgemm(CblasColMajor, BLAS_OP(ta), BLAS_OP(tb), im, in, ik, a.z, xa, ia, xb, ib, b.z, pc,
                            (int)ldc);
            vendor_mark_written(dev, pc, m, n, ldc, t->elem);
        }
out:
    cublas_end();
    return st;
}

/* ---- the exported names: NAME_v2 with int sizes, NAME_v2_64 with int64_t ---------------- */

#define TRSM(NAME, T, I, SUF)                                                                                      \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,       \
                                        const void *alpha, const void *A, I lda, void *B, I ldb);                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,       \
                                        const void *alpha, const void *A, I lda, void *B, I ldb)                 \
    {                                                                                                              \
        return do_trsm(#NAME #SUF, h, &T, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, 1, 0);             \
    }
#define TRSM_BATCHED(NAME, T, I, B)                                                                                \
    VENDOR_API cublasStatus_t NAME##B(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,         \
                                      const void *alpha, const void *const A[], I lda, void *const B_[], I ldb,    \
                                      I batch);                                                                    \
    VENDOR_API cublasStatus_t NAME##B(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,         \
                                      const void *alpha, const void *const A[], I lda, void *const B_[], I ldb,    \
                                      I batch)                                                                     \
    {                                                                                                              \
        return do_trsm(#NAME #B, h, &T, side, uplo, trans, diag, m, n, alpha, A, lda, (void *)B_, ldb, batch, 1);  \
    }
#define TRMM(NAME, T, I, SUF)                                                                                      \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,       \
                                        const void *alpha, const void *A, I lda, const void *B, I ldb, void *C,  \
                                        I ldc);                                                                  \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, int trans, int diag, I m, I n,       \
                                        const void *alpha, const void *A, I lda, const void *B, I ldb, void *C,  \
                                        I ldc)                                                                   \
    {                                                                                                              \
        return do_trmm(#NAME #SUF, h, &T, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc);           \
    }
#define SYMM(NAME, T, HERM, I, SUF)                                                                                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, I m, I n, const void *alpha,        \
                                        const void *A, I lda, const void *B, I ldb, const void *beta, void *C,   \
                                        I ldc);                                                                  \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int side, int uplo, I m, I n, const void *alpha,        \
                                        const void *A, I lda, const void *B, I ldb, const void *beta, void *C,   \
                                        I ldc)                                                                   \
    {                                                                                                              \
        return do_symm(#NAME #SUF, h, &T, HERM, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc);            \
    }
#define SYRK(NAME, T, HERM, I, SUF)                                                                                \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, I n, I k, const void *alpha,       \
                                        const void *A, I lda, const void *beta, void *C, I ldc);                 \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, I n, I k, const void *alpha,       \
                                        const void *A, I lda, const void *beta, void *C, I ldc)                  \
    {                                                                                                              \
        return do_syrk(#NAME #SUF, h, &T, HERM, 0, uplo, trans, n, k, alpha, A, lda, NULL, 0, beta, C, ldc);       \
    }
#define SYR2K(NAME, T, HERM, I, SUF)                                                                               \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, I n, I k, const void *alpha,       \
                                        const void *A, I lda, const void *B, I ldb, const void *beta, void *C,   \
                                        I ldc);                                                                  \
    VENDOR_API cublasStatus_t NAME##SUF(cublasHandle_t h, int uplo, int trans, I n, I k, const void *alpha,       \
                                        const void *A, I lda, const void *B, I ldb, const void *beta, void *C,   \
                                        I ldc)                                                                   \
    {                                                                                                              \
        return do_syrk(#NAME #SUF, h, &T, HERM, 1, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);        \
    }
#define CGEMM(P, T, I, SUF, B)                                                                                     \
    VENDOR_API cublasStatus_t cublas##P##gemm##SUF(cublasHandle_t h, int ta, int tb, I m, I n, I k,               \
                                                   const void *alpha, const void *A, I lda, const void *B_, I ldb, \
                                                   const void *beta, void *C, I ldc);                            \
    VENDOR_API cublasStatus_t cublas##P##gemm##SUF(cublasHandle_t h, int ta, int tb, I m, I n, I k,               \
                                                   const void *alpha, const void *A, I lda, const void *B_, I ldb, \
                                                   const void *beta, void *C, I ldc)                             \
    {                                                                                                              \
        return do_cgemm("cublas" #P "gemm" #SUF, h, &T, ta, tb, m, n, k, alpha, A, lda, 0, B_, ldb, 0, beta, C,  \
                        ldc, 0, 1, 0);                                                                             \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##P##gemmStridedBatched##B(                                                    \
        cublasHandle_t h, int ta, int tb, I m, I n, I k, const void *alpha, const void *A, I lda, long long sa,   \
        const void *B_, I ldb, long long sb, const void *beta, void *C, I ldc, long long sc, I batch);            \
    VENDOR_API cublasStatus_t cublas##P##gemmStridedBatched##B(                                                    \
        cublasHandle_t h, int ta, int tb, I m, I n, I k, const void *alpha, const void *A, I lda, long long sa,   \
        const void *B_, I ldb, long long sb, const void *beta, void *C, I ldc, long long sc, I batch)             \
    {                                                                                                              \
        return do_cgemm("cublas" #P "gemmStridedBatched" #B, h, &T, ta, tb, m, n, k, alpha, A, lda, sa, B_, ldb,  \
                        sb, beta, C, ldc, sc, batch, 0);                                                           \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##P##gemmBatched##B(cublasHandle_t h, int ta, int tb, I m, I n, I k,          \
                                                        const void *alpha, const void *const A[], I lda,          \
                                                        const void *const B_[], I ldb, const void *beta,          \
                                                        void *const C[], I ldc, I batch);                         \
    VENDOR_API cublasStatus_t cublas##P##gemmBatched##B(cublasHandle_t h, int ta, int tb, I m, I n, I k,          \
                                                        const void *alpha, const void *const A[], I lda,          \
                                                        const void *const B_[], I ldb, const void *beta,          \
                                                        void *const C[], I ldc, I batch)                          \
    {                                                                                                              \
        return do_cgemm("cublas" #P "gemmBatched" #B, h, &T, ta, tb, m, n, k, alpha, A, lda, 0, B_, ldb, 0, beta, \
                        (void *)C, ldc, 0, batch, 1);                                                                   \
    }

#define LEVEL3(I, SUF, B)                                                                                          \
    TRSM(cublasStrsm, blas_s, I, SUF)                                                                              \
    TRSM(cublasDtrsm, blas_d, I, SUF)                                                                              \
    TRSM(cublasCtrsm, blas_c, I, SUF)                                                                              \
    TRSM(cublasZtrsm, blas_z, I, SUF)                                                                              \
    TRMM(cublasStrmm, blas_s, I, SUF)                                                                              \
    TRMM(cublasDtrmm, blas_d, I, SUF)                                                                              \
    TRMM(cublasCtrmm, blas_c, I, SUF)                                                                              \
    TRMM(cublasZtrmm, blas_z, I, SUF)                                                                              \
    SYMM(cublasSsymm, blas_s, 0, I, SUF)                                                                           \
    SYMM(cublasDsymm, blas_d, 0, I, SUF)                                                                           \
    SYMM(cublasCsymm, blas_c, 0, I, SUF)                                                                           \
    SYMM(cublasZsymm, blas_z, 0, I, SUF)                                                                           \
    SYMM(cublasChemm, blas_c, 1, I, SUF)                                                                           \
    SYMM(cublasZhemm, blas_z, 1, I, SUF)                                                                           \
    SYRK(cublasSsyrk, blas_s, 0, I, SUF)                                                                           \
    SYRK(cublasDsyrk, blas_d, 0, I, SUF)                                                                           \
    SYRK(cublasCsyrk, blas_c, 0, I, SUF)                                                                           \
    SYRK(cublasZsyrk, blas_z, 0, I, SUF)                                                                           \
    SYRK(cublasCherk, blas_c, 1, I, SUF)                                                                           \
    SYRK(cublasZherk, blas_z, 1, I, SUF)                                                                           \
    SYR2K(cublasSsyr2k, blas_s, 0, I, SUF)                                                                         \
    SYR2K(cublasDsyr2k, blas_d, 0, I, SUF)                                                                         \
    SYR2K(cublasCsyr2k, blas_c, 0, I, SUF)                                                                         \
    SYR2K(cublasZsyr2k, blas_z, 0, I, SUF)                                                                         \
    SYR2K(cublasCher2k, blas_c, 1, I, SUF)                                                                         \
    SYR2K(cublasZher2k, blas_z, 1, I, SUF)                                                                         \
    TRSM_BATCHED(cublasStrsmBatched, blas_s, I, B)                                                                 \
    TRSM_BATCHED(cublasDtrsmBatched, blas_d, I, B)                                                                 \
    TRSM_BATCHED(cublasCtrsmBatched, blas_c, I, B)                                                                 \
    TRSM_BATCHED(cublasZtrsmBatched, blas_z, I, B)                                                                 \
    CGEMM(C, blas_c, I, SUF, B)                                                                                    \
    CGEMM(Z, blas_z, I, SUF, B)

LEVEL3(int, _v2, )
LEVEL3(int64_t, _v2_64, _64)

/* ---- the BLAS-like extensions geam and dgmm --------------------------------------------- */

/* Element i of a real or complex array, as re/im doubles, and its store. */
static void load_c(const blas_type *t, const void *p, size_t i, double *re, double *im)
{
    int cx = t->elem != t->real;
    *re = vendor_load(p, t->type, cx ? 2 * i : i);
    *im = cx ? vendor_load(p, t->type, 2 * i + 1) : 0;
}

static void store_c(const blas_type *t, void *p, size_t i, double re, double im)
{
    int cx = t->elem != t->real;
    vendor_store(p, t->type, cx ? 2 * i : i, re);
    if (cx)
        vendor_store(p, t->type, 2 * i + 1, im);
}

/* C = alpha op(A) + beta op(B) (m x n); alpha == 0 does not read A, beta
 * == 0 not B; C may be A or B (computed through a copy) */
static cublasStatus_t do_geam(const char *api, cublasHandle_t h, const blas_type *t, int ta, int tb, int64_t m,
                              int64_t n, const void *alpha, const void *A, int64_t lda, const void *beta,
                              const void *B, int64_t ldb, void *C, int64_t ldc)
{
    BEGIN(api);
    blas_scalar_t a, b;
    int64_t ar = ta == CUBLAS_OP_N ? m : n, br = tb == CUBLAS_OP_N ? m : n;
    if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || lda < (ar > 1 ? ar : 1) || ldb < (br > 1 ? br : 1) ||
        ldc < (m > 1 ? m : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        goto out;
    if ((st = blas_scalar(api, "alpha", device_mode, alpha, t->elem, &a)) ||
        (st = blas_scalar(api, "beta", device_mode, beta, t->elem, &b)))
        goto out;
    int use_a = !blas_scalar_zero(t, &a, t->elem), use_b = !blas_scalar_zero(t, &b, t->elem);
    if (use_a)
        CHECK_MATRIX(api, "A", A, ar, ta == CUBLAS_OP_N ? n : m, lda, t->elem);
    if (use_b)
        CHECK_MATRIX(api, "B", B, br, tb == CUBLAS_OP_N ? n : m, ldb, t->elem);
    CHECK_MATRIX(api, "C", C, m, n, ldc, t->elem);
    if (use_a)
        vendor_note_read(dev, api, "A", A, ar, ta == CUBLAS_OP_N ? n : m, lda, t->elem);
    if (use_b)
        vendor_note_read(dev, api, "B", B, br, tb == CUBLAS_OP_N ? n : m, ldb, t->elem);
    double *out = malloc((size_t)(m * n) * 2 * sizeof(double));
    if (!out) {
        vendor_message(api, "out of host memory");
        FAIL(CUBLAS_STATUS_ALLOC_FAILED);
    }
    double ar_, ai_, br_, bi_;
    load_c(t, a.b, 0, &ar_, &ai_);
    load_c(t, b.b, 0, &br_, &bi_);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double re = 0, im = 0, xr, xi;
            if (use_a) {
                load_c(t, A, (size_t)(ta == CUBLAS_OP_N ? j * lda + i : i * lda + j), &xr, &xi);
                if (ta == CUBLAS_OP_C)
                    xi = -xi;
                re += ar_ * xr - ai_ * xi;
                im += ar_ * xi + ai_ * xr;
            }
            if (use_b) {
                load_c(t, B, (size_t)(tb == CUBLAS_OP_N ? j * ldb + i : i * ldb + j), &xr, &xi);
                if (tb == CUBLAS_OP_C)
                    xi = -xi;
                re += br_ * xr - bi_ * xi;
                im += br_ * xi + bi_ * xr;
            }
            out[2 * (j * m + i)] = re;
            out[2 * (j * m + i) + 1] = im;
        }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            store_c(t, C, (size_t)(j * ldc + i), out[2 * (j * m + i)], out[2 * (j * m + i) + 1]);
    free(out);
    vendor_mark_written(dev, C, m, n, ldc, t->elem);
out:
    cublas_end();
    return st;
}

/* C = A diag(x) (side right) or diag(x) A (side left); C may be A */
static cublasStatus_t do_dgmm(const char *api, cublasHandle_t h, const blas_type *t, int side, int64_t m, int64_t n,
                              const void *A, int64_t lda, const void *x, int64_t incx, void *C, int64_t ldc)
{
    BEGIN(api);
    if ((side != SIDE_LEFT && side != SIDE_RIGHT) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) ||
        ldc < (m > 1 ? m : 1))
        FAIL(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        goto out;
    int64_t xn = side == SIDE_LEFT ? m : n;
    CHECK_MATRIX(api, "A", A, m, n, lda, t->elem);
    CHECK_VECTOR(api, "x", x, xn, incx, t->elem);
    CHECK_MATRIX(api, "C", C, m, n, ldc, t->elem);
    vendor_note_read(dev, api, "A", A, m, n, lda, t->elem);
    NOTE_READ(api, "x", x, xn, incx, t->elem);
    /* a negative increment walks x from its end, as in BLAS (0: one element for all) */
    int64_t step = incx < 0 ? -incx : incx;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            int64_t k = side == SIDE_LEFT ? i : j;
            size_t xi = (size_t)((incx < 0 ? xn - 1 - k : k) * step);
            double ar, ai, xr, xim;
            load_c(t, A, (size_t)(j * lda + i), &ar, &ai);
            load_c(t, x, xi, &xr, &xim);
            store_c(t, C, (size_t)(j * ldc + i), ar * xr - ai * xim, ar * xim + ai * xr);
        }
    vendor_mark_written(dev, C, m, n, ldc, t->elem);
out:
    cublas_end();
    return st;
}

#define GEAM(P, T, I, B)                                                                                           \
    VENDOR_API cublasStatus_t cublas##P##geam##B(cublasHandle_t h, int ta, int tb, I m, I n, const void *alpha,   \
                                                 const void *A, I lda, const void *beta, const void *B_, I ldb,   \
                                                 void *C, I ldc);                                                \
    VENDOR_API cublasStatus_t cublas##P##geam##B(cublasHandle_t h, int ta, int tb, I m, I n, const void *alpha,   \
                                                 const void *A, I lda, const void *beta, const void *B_, I ldb,   \
                                                 void *C, I ldc)                                                 \
    {                                                                                                              \
        return do_geam("cublas" #P "geam" #B, h, &T, ta, tb, m, n, alpha, A, lda, beta, B_, ldb, C, ldc);          \
    }                                                                                                              \
    VENDOR_API cublasStatus_t cublas##P##dgmm##B(cublasHandle_t h, int side, I m, I n, const void *A, I lda,      \
                                                 const void *x, I incx, void *C, I ldc);                         \
    VENDOR_API cublasStatus_t cublas##P##dgmm##B(cublasHandle_t h, int side, I m, I n, const void *A, I lda,      \
                                                 const void *x, I incx, void *C, I ldc)                          \
    {                                                                                                              \
        return do_dgmm("cublas" #P "dgmm" #B, h, &T, side, m, n, A, lda, x, incx, C, ldc);                         \
    }

GEAM(S, blas_s, int, )
GEAM(D, blas_d, int, )
GEAM(C, blas_c, int, )
GEAM(Z, blas_z, int, )
GEAM(S, blas_s, int64_t, _64)
GEAM(D, blas_d, int64_t, _64)
GEAM(C, blas_c, int64_t, _64)
GEAM(Z, blas_z, int64_t, _64)
