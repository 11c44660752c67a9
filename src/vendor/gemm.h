/* The matrix product that libcublas and libcublasLt share:
 * D = epilogue(alpha * op(A) * op(B) + beta * C [+ bias]), column-major,
 * on the CPU through OpenBLAS's CBLAS interface. Operands are checked by
 * the callers (vendor_check_range) before any is touched. */
#ifndef KEMU_VENDOR_GEMM_H
#define KEMU_VENDOR_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Epilogues: the bits of cuBLASLt's CUBLASLT_EPILOGUE_* values (each
 * epilogue kemu implements is an OR of these). */
enum {
    VENDOR_EPILOGUE_RELU = 2,    /* x := max(x, 0) */
    VENDOR_EPILOGUE_BIAS = 4,    /* x += bias[row], before the activation */
    VENDOR_EPILOGUE_DRELU = 8,   /* x := mask bit ? x : 0 (with AUX: the mask is read) */
    VENDOR_EPILOGUE_BGRAD = 16,  /* with DRELU/DGELU: bias[row] := sum of the row of D */
    VENDOR_EPILOGUE_GELU = 32,   /* x := GELU(x) */
    VENDOR_EPILOGUE_DGELU = 64,  /* x := x * GELU'(aux) (with AUX: the GELU input is read) */
    VENDOR_EPILOGUE_AUX = 128,   /* the auxiliary matrix: written by RELU/GELU, read by DRELU/DGELU */
    VENDOR_EPILOGUE_BGRADA = 256, /* bias[row] := sum over k of op(A)[row, k] */
    VENDOR_EPILOGUE_BGRADB = 512  /* bias[col] := sum over k of op(B)[k, col] */
};

typedef struct vendor_gemm {
    int transa, transb;       /* 0: N, 1: T (conjugate transposes are T for real data) */
    int64_t m, n, k;
    int atype, btype, ctype, dtype; /* VENDOR_R_*; all 64F, or none 64F */
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    const void *C;            /* may equal D; not read when beta == 0 */
    int64_t ldc;
    void *D;
    int64_t ldd;
    double alpha, beta;
    int tf32;                 /* round float A and B to TF32 first */
    unsigned epilogue;        /* VENDOR_EPILOGUE_* bits */
    const void *bias;         /* m elements of bias_type, with BIAS */
    void *bgrad;              /* the bias gradient (m elements, n with BGRADB), with BGRAD, BGRADA, BGRADB */
    int bias_type;            /* of bias and bgrad */
    void *aux;                /* with AUX: the ReLU bit mask (bit j * aux_ld + i of the bytes, least
                               * significant first) or the GELU input matrix (aux_type elements) */
    int64_t aux_ld;           /* in bits for the mask, in elements for GELU */
    int aux_type;
} vendor_gemm;

/* Rows and columns of A and B as stored (op undone). */
void vendor_gemm_shape_a(const vendor_gemm *g, int64_t *rows, int64_t *cols);
void vendor_gemm_shape_b(const vendor_gemm *g, int64_t *rows, int64_t *cols);

/* Runs one product. Returns 0, or -1 when out of memory (nothing written
 * then). alpha == 0 does not read A and B (except for BGRADA / BGRADB). */
int vendor_gemm_run(const vendor_gemm *g);

/* The tanh approximation of GELU that cuBLASLt documents:
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
double vendor_gelu(double x);
/* Its derivative. */
double vendor_gelu_grad(double x);

#endif
