/* The shared matrix product of kemu's libcublas and libcublasLt (see
 * gemm.h). Float and double operands of one type go straight to
 * cblas_sgemm / cblas_dgemm on the callers' memory (kemu's device addresses
 * are host addresses); half, bfloat16, mixed types and TF32 rounding go
 * through packed float copies: the inputs are converted exactly (TF32
 * rounded when asked), the product is accumulated in float by OpenBLAS,
 * and the result is converted back with round-to-nearest-even. The order
 * of the sums is OpenBLAS's, not a GPU's, so results can differ from a
 * GPU's in the last bits. beta == 0 never reads C (NaN there stays out).
 * The epilogue (gemm.h) is applied per element to alpha op(A) op(B) +
 * beta C in the compute precision, before D is rounded to its type. */
#include "config.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/gemm.h"
#include "vendor/vendor.h"

void vendor_gemm_shape_a(const vendor_gemm *g, int64_t *rows, int64_t *cols)
{
    *rows = g->transa ? g->k : g->m;
    *cols = g->transa ? g->m : g->k;
}

void vendor_gemm_shape_b(const vendor_gemm *g, int64_t *rows, int64_t *cols)
{
    *rows = g->transb ? g->n : g->k;
    *cols = g->transb ? g->k : g->n;
}

double vendor_gelu(double x)
{
    const double c = 0.7978845608028654; /* sqrt(2 / pi) */
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

double vendor_gelu_grad(double x)
{
    const double c = 0.7978845608028654, k = 0.044715;
    double t = tanh(c * (x + k * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * k * x * x);
}

static int mask_bit(const vendor_gemm *g, int64_t i, int64_t j)
{
    uint64_t bit = (uint64_t)(j * g->aux_ld + i);
    return (((const uint8_t *)g->aux)[bit >> 3] >> (bit & 7)) & 1;
}

static void set_mask_bit(const vendor_gemm *g, int64_t i, int64_t j, int on)
{
    uint64_t bit = (uint64_t)(j * g->aux_ld + i);
    uint8_t *byte = (uint8_t *)g->aux + (bit >> 3);
    *byte = (uint8_t)(on ? *byte | (1u << (bit & 7)) : *byte & ~(1u << (bit & 7)));
}

/* The epilogue of element (i, j) whose product alpha op(A) op(B) + beta C
 * is v: writes the auxiliary output of RELU_AUX / GELU_AUX, reads that of
 * DRELU / DGELU, and returns D's value. */
static double epilogue_value(const vendor_gemm *g, double v, int64_t i, int64_t j)
{
    unsigned e = g->epilogue;
    if (e & VENDOR_EPILOGUE_BIAS)
        v += vendor_load(g->bias, g->bias_type, (size_t)i);
    if ((e & VENDOR_EPILOGUE_AUX) && (e & VENDOR_EPILOGUE_RELU))
        set_mask_bit(g, i, j, v > 0);
    if ((e & VENDOR_EPILOGUE_AUX) && (e & VENDOR_EPILOGUE_GELU))
        vendor_store(g->aux, g->aux_type, (size_t)(j * g->aux_ld + i), v);
    if (e & VENDOR_EPILOGUE_RELU)
        v = v > 0 ? v : 0;
    if (e & VENDOR_EPILOGUE_GELU)
        v = vendor_gelu(v);
    if ((e & VENDOR_EPILOGUE_DRELU) && !mask_bit(g, i, j))
        v = 0;
    if (e & VENDOR_EPILOGUE_DGELU)
        v *= vendor_gelu_grad(vendor_load(g->aux, g->aux_type, (size_t)(j * g->aux_ld + i)));
    return v;
}

/* BGRADA / BGRADB: the sums over k of the rows of op(A) or of the columns
 * of op(B), in double, into bgrad (not scaled by alpha). */
static void bias_grad_ab(const vendor_gemm *g)
{
    int of_a = (g->epilogue & VENDOR_EPILOGUE_BGRADA) != 0;
    int64_t len = of_a ? g->m : g->n;
    for (int64_t r = 0; r < len; r++) {
        double s = 0;
        for (int64_t p = 0; p < g->k; p++) {
            size_t x;
            if (of_a)
                x = (size_t)(g->transa ? r * g->lda + p : p * g->lda + r);
            else
                x = (size_t)(g->transb ? p * g->ldb + r : r * g->ldb + p);
            s += vendor_load(of_a ? g->A : g->B, of_a ? g->atype : g->btype, x);
        }
        vendor_store(g->bgrad, g->bias_type, (size_t)r, s);
    }
}

/* A stored matrix converted to a packed float copy (ld = rows). */
static float *pack_float(const void *p, int type, int64_t rows, int64_t cols, int64_t ld, int tf32)
{
    float *out = malloc((size_t)(rows * cols) * sizeof(float) + 1);
    if (!out)
        return NULL;
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            float v = (float)vendor_load(p, type, (size_t)(j * ld + i));
            out[j * rows + i] = tf32 ? vendor_round_tf32(v) : v;
        }
    return out;
}

/* D = beta * C (or 0 when beta == 0, C unread), in D's own storage. */
static void prepare_d_direct(const vendor_gemm *g, size_t elem)
{
    for (int64_t j = 0; j < g->n; j++) {
        char *d = (char *)g->D + (size_t)(j * g->ldd) * elem;
        if (g->beta == 0) {
            memset(d, 0, (size_t)g->m * elem);
            continue;
        }
        const char *c = (const char *)g->C + (size_t)(j * g->ldc) * elem;
        if (c != d)
            memmove(d, c, (size_t)g->m * elem);
    }
}

static void run_direct(const vendor_gemm *g, double *rowsum)
{
    int dbl = g->dtype == VENDOR_R_64F;
    size_t elem = dbl ? 8 : 4;
    /* D holds C (or zeros when beta == 0): BLAS then computes in place */
    prepare_d_direct(g, elem);
    if (g->k > 0 && g->alpha != 0) {
        enum CBLAS_TRANSPOSE ta = g->transa ? CblasTrans : CblasNoTrans, tb = g->transb ? CblasTrans : CblasNoTrans;
        if (dbl)
            cblas_dgemm(CblasColMajor, ta, tb, (int)g->m, (int)g->n, (int)g->k, g->alpha, g->A, (int)g->lda, g->B,
                        (int)g->ldb, g->beta, g->D, (int)g->ldd);
        else
            cblas_sgemm(CblasColMajor, ta, tb, (int)g->m, (int)g->n, (int)g->k, (float)g->alpha, g->A, (int)g->lda,
                        g->B, (int)g->ldb, (float)g->beta, g->D, (int)g->ldd);
    } else if (g->beta != 0 && g->beta != 1) {
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++) {
                size_t x = (size_t)(j * g->ldd + i);
                if (dbl)
                    ((double *)g->D)[x] *= g->beta;
                else
                    ((float *)g->D)[x] *= (float)g->beta;
            }
    }
    if (g->epilogue & ~(unsigned)(VENDOR_EPILOGUE_BGRADA | VENDOR_EPILOGUE_BGRADB))
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++) {
                size_t x = (size_t)(j * g->ldd + i);
                double v;
                if (dbl)
                    v = ((double *)g->D)[x] = epilogue_value(g, ((double *)g->D)[x], i, j);
                else
                    v = ((float *)g->D)[x] = (float)epilogue_value(g, ((float *)g->D)[x], i, j);
                if (rowsum)
                    rowsum[i] += v;
            }
}

static int run_packed(const vendor_gemm *g, double *rowsum)
{
    int64_t ar, ac, br, bc;
    vendor_gemm_shape_a(g, &ar, &ac);
    vendor_gemm_shape_b(g, &br, &bc);
    int tf32a = g->tf32 && g->atype == VENDOR_R_32F, tf32b = g->tf32 && g->btype == VENDOR_R_32F;
    int product = g->k > 0 && g->alpha != 0;
    float *a = NULL, *b = NULL, *d = malloc((size_t)(g->m * g->n) * sizeof(float) + 1);
    if (product) {
        a = pack_float(g->A, g->atype, ar, ac, g->lda, tf32a);
        b = pack_float(g->B, g->btype, br, bc, g->ldb, tf32b);
    }
    if (!d || (product && (!a || !b))) {
        free(a);
        free(b);
        free(d);
        return -1;
    }
    /* d = beta * C, in float (C unread when beta == 0) */
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t i = 0; i < g->m; i++)
            d[j * g->m + i] =
                g->beta == 0 ? 0.0f
                             : (float)g->beta * (float)vendor_load(g->C, g->ctype, (size_t)(j * g->ldc + i));
    if (product)
        cblas_sgemm(CblasColMajor, g->transa ? CblasTrans : CblasNoTrans, g->transb ? CblasTrans : CblasNoTrans,
                    (int)g->m, (int)g->n, (int)g->k, (float)g->alpha, a, (int)(ar ? ar : 1), b, (int)(br ? br : 1),
                    1.0f, d, (int)g->m);
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t i = 0; i < g->m; i++) {
            double v = d[j * g->m + i];
            if (g->epilogue & ~(unsigned)(VENDOR_EPILOGUE_BGRADA | VENDOR_EPILOGUE_BGRADB))
                v = (float)epilogue_value(g, v, i, j);
            if (rowsum)
                rowsum[i] += v;
            vendor_store(g->D, g->dtype, (size_t)(j * g->ldd + i), v);
        }
    free(a);
    free(b);
    free(d);
    return 0;
}

int vendor_gemm_run(const vendor_gemm *g)
{
    if (g->m <= 0 || g->n <= 0)
        return 0;
    /* DRELU_BGRAD / DGELU_BGRAD: the sums of D's rows, as computed */
    double *rowsum = NULL;
    if (g->epilogue & VENDOR_EPILOGUE_BGRAD) {
        rowsum = calloc((size_t)g->m, sizeof *rowsum);
        if (!rowsum)
            return -1;
    }
    int same = g->atype == g->btype && g->btype == g->ctype && g->ctype == g->dtype;
    int st = 0;
    if ((same && g->dtype == VENDOR_R_64F) || (same && g->dtype == VENDOR_R_32F && !g->tf32))
        run_direct(g, rowsum);
    else
        st = run_packed(g, rowsum);
    if (!st && rowsum)
        for (int64_t i = 0; i < g->m; i++)
            vendor_store(g->bgrad, g->bias_type, (size_t)i, rowsum[i]);
    free(rowsum);
    if (!st && (g->epilogue & (VENDOR_EPILOGUE_BGRADA | VENDOR_EPILOGUE_BGRADB)))
        bias_grad_ab(g);
    return st;
}
