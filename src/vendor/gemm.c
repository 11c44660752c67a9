/* The shared matrix product of kemu's libcublas and libcublasLt (see
 * gemm.h). Float and double operands of one type go straight to
 * cblas_sgemm / cblas_dgemm on the callers' memory (kemu's device addresses
 * are host addresses); half, bfloat16, mixed types and TF32 rounding go
 * through packed float copies: the inputs are converted exactly (TF32
 * rounded when asked), the product is accumulated in float by OpenBLAS,
 * and the result is converted back with round-to-nearest-even. The order
 * of the sums is OpenBLAS's, not a GPU's, so results can differ from a
 * GPU's in the last bits. beta == 0 never reads C (NaN there stays out). */
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

static double epilogue_value(const vendor_gemm *g, double v, int64_t row)
{
    if (g->epilogue & VENDOR_EPILOGUE_BIAS)
        v += vendor_load(g->bias, g->bias_type, (size_t)row);
    if (g->epilogue & VENDOR_EPILOGUE_RELU)
        v = v > 0 ? v : 0;
    if (g->epilogue & VENDOR_EPILOGUE_GELU)
        v = vendor_gelu(v);
    return v;
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

static void run_direct(const vendor_gemm *g)
{
    int dbl = g->dtype == VENDOR_R_64F;
    size_t elem = dbl ? 8 : 4;
    /* D holds C (or zeros when beta == 0): BLAS then computes in place */
    prepare_d_direct(g, elem);
    if (g->k > 0) {
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
    if (g->epilogue)
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++) {
                size_t x = (size_t)(j * g->ldd + i);
                if (dbl)
                    ((double *)g->D)[x] = epilogue_value(g, ((double *)g->D)[x], i);
                else
                    ((float *)g->D)[x] = (float)epilogue_value(g, ((float *)g->D)[x], i);
            }
}

static int run_packed(const vendor_gemm *g)
{
    int64_t ar, ac, br, bc;
    vendor_gemm_shape_a(g, &ar, &ac);
    vendor_gemm_shape_b(g, &br, &bc);
    int tf32a = g->tf32 && g->atype == VENDOR_R_32F, tf32b = g->tf32 && g->btype == VENDOR_R_32F;
    float *a = NULL, *b = NULL, *d = malloc((size_t)(g->m * g->n) * sizeof(float) + 1);
    if (g->k > 0) {
        a = pack_float(g->A, g->atype, ar, ac, g->lda, tf32a);
        b = pack_float(g->B, g->btype, br, bc, g->ldb, tf32b);
    }
    if (!d || (g->k > 0 && (!a || !b))) {
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
    if (g->k > 0)
        cblas_sgemm(CblasColMajor, g->transa ? CblasTrans : CblasNoTrans, g->transb ? CblasTrans : CblasNoTrans,
                    (int)g->m, (int)g->n, (int)g->k, (float)g->alpha, a, (int)(ar ? ar : 1), b, (int)(br ? br : 1),
                    1.0f, d, (int)g->m);
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t i = 0; i < g->m; i++) {
            double v = d[j * g->m + i];
            if (g->epilogue)
                v = (float)epilogue_value(g, v, i);
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
    int same = g->atype == g->btype && g->btype == g->ctype && g->ctype == g->dtype;
    if (same && g->dtype == VENDOR_R_64F) {
        run_direct(g);
        return 0;
    }
    if (same && g->dtype == VENDOR_R_32F && !g->tf32) {
        run_direct(g);
        return 0;
    }
    return run_packed(g);
}
