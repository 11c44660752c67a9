/* kemu's libcublas: what its BLAS files (cublas_level.c, cublas_level2.c,
 * cublas_level3.c) share: the start of a call, operand checks and notes
 * for the checkers, the element types and scalars. */
#ifndef KEMU_VENDOR_CUBLAS_BLAS_H
#define KEMU_VENDOR_CUBLAS_BLAS_H

#include <stdio.h>

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

/* Sizes that OpenBLAS's CBLAS (int) cannot take: the _64 forms above 2^31-1. */
#define CHECK_FITS(API, TOO_BIG)                                                                                   \
    do {                                                                                                           \
        if (TOO_BIG) {                                                                                             \
            vendor_message(API, "sizes, increments or leading dimensions above 2^31-1 are not supported by kemu "  \
                                "(OpenBLAS's CBLAS takes int)");                                                   \
            FAIL(CUBLAS_STATUS_NOT_SUPPORTED);                                                                     \
        }                                                                                                          \
    } while (0)

#define CHECK_VECTOR(API, ARG, P, N, INC, ELEM)                                                                    \
    do {                                                                                                           \
        if (vendor_check_range(API, ARG, P, cublas_vector_bytes(N, INC, ELEM)))                                    \
            FAIL(CUBLAS_STATUS_EXECUTION_FAILED);                                                                  \
    } while (0)

#define CHECK_MATRIX(API, ARG, P, ROWS, COLS, LD, ELEM)                                                            \
    do {                                                                                                           \
        int overflow_ = 0;                                                                                         \
        uint64_t bytes_ = vendor_matrix_bytes(ROWS, COLS, LD, ELEM, &overflow_);                                   \
        if (overflow_)                                                                                             \
            FAIL(CUBLAS_STATUS_INVALID_VALUE);                                                                     \
        if (vendor_check_range(API, ARG, P, bytes_))                                                               \
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

/* An element type: S, D, C (cuComplex) or Z (cuDoubleComplex). */
typedef struct blas_type {
    char name;
    size_t elem; /* bytes of an element */
    size_t real; /* bytes of its real part (nrm2's result, herk's alpha) */
    int type;    /* VENDOR_R_32F or VENDOR_R_64F: the type of a part */
} blas_type;
extern const blas_type blas_s, blas_d, blas_c, blas_z;

/* A scalar of any of them. */
typedef union blas_scalar_t {
    float f;
    double d;
    float c[2];
    double z[2];
    unsigned char b[16];
} blas_scalar_t;

/* Reads `bytes` of a scalar (alpha, beta) in the handle's pointer mode
 * (device: checked as an operand; not checked by initcheck). */
cublasStatus_t blas_scalar(const char *api, const char *arg, int device_mode, const void *p, size_t bytes,
                           blas_scalar_t *out);
/* Whether its `bytes` (elem or real) are all zero parts. */
int blas_scalar_zero(const blas_type *t, const blas_scalar_t *s, size_t bytes);
/* Whether a _64 size does not fit CBLAS's int. */
int blas_big(int64_t v);
/* Marks n elements |inc| apart written, from the lowest address. */
void blas_wrote_vector(kemu_device *dev, void *p, int64_t n, int64_t inc, size_t elem);

static inline int valid_op(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

/* CBLAS's transpose of a cublasOperation_t (C: the conjugate transpose,
 * which CBLAS takes as the transpose for real types). Needs <cblas.h>. */
#define BLAS_OP(op) ((op) == CUBLAS_OP_N ? CblasNoTrans : (op) == CUBLAS_OP_T ? CblasTrans : CblasConjTrans)

#endif
