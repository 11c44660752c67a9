/* kemu's libcublasLt: the heuristic query (one algorithm) and
 * cublasLtMatmul with cuBLASLt's epilogues (bias, ReLU, GELU, their
 * auxiliary outputs, the backward DRELU / DGELU with bias gradients,
 * BGRADA / BGRADB), computed on the CPU by the product libcublas uses
 * (gemm.c), after checking every operand range of every batch entry. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "vendor/cublas_lt.h"
#include "vendor/gemm.h"

/* ---- the product --------------------------------------------------------------------------- */

static const char *epilogue_name(uint32_t e)
{
    switch (e) {
    case 1: return "CUBLASLT_EPILOGUE_DEFAULT";
    case 2: return "CUBLASLT_EPILOGUE_RELU";
    case 4: return "CUBLASLT_EPILOGUE_BIAS";
    case 6: return "CUBLASLT_EPILOGUE_RELU_BIAS";
    case 32: return "CUBLASLT_EPILOGUE_GELU";
    case 36: return "CUBLASLT_EPILOGUE_GELU_BIAS";
    case 130: return "CUBLASLT_EPILOGUE_RELU_AUX";
    case 134: return "CUBLASLT_EPILOGUE_RELU_AUX_BIAS";
    case 136: return "CUBLASLT_EPILOGUE_DRELU";
    case 152: return "CUBLASLT_EPILOGUE_DRELU_BGRAD";
    case 160: return "CUBLASLT_EPILOGUE_GELU_AUX";
    case 164: return "CUBLASLT_EPILOGUE_GELU_AUX_BIAS";
    case 192: return "CUBLASLT_EPILOGUE_DGELU";
    case 208: return "CUBLASLT_EPILOGUE_DGELU_BGRAD";
    case 256: return "CUBLASLT_EPILOGUE_BGRADA";
    case 512: return "CUBLASLT_EPILOGUE_BGRADB";
    default: return "an unknown epilogue";
    }
}

/* What cublasLtMatmul and the heuristic query both check: the
 * descriptors, the shapes, the types and the epilogue. Fills *g (without
 * pointers and scalars), *scale and *batch. Messages name the problem. */
static cublasStatus_t lt_plan(const char *api, const lt_desc *d, const lt_layout *a, const lt_layout *b,
                              const lt_layout *c, const lt_layout *dl, vendor_gemm *g, int *scale, int64_t *batch)
{
    if (!lt_desc_ok(d) || !lt_layout_ok(a) || !lt_layout_ok(b) || !lt_layout_ok(c) || !lt_layout_ok(dl)) {
        vendor_message(api, "a descriptor or matrix layout is NULL or not initialized");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const lt_layout *all[4] = {a, b, c, dl};
    const char *names[4] = {"A", "B", "C", "D"};
    for (int i = 0; i < 4; i++) {
        if (all[i]->order != 0) {
            vendor_message(api, "matrix layout order %s of %s is not supported by kemu (it takes CUBLASLT_ORDER_COL)",
                           lt_order_name(all[i]->order), names[i]);
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        if (!vendor_type_size((int)all[i]->type)) {
            vendor_message(api, "data type %s of %s is not supported by kemu (it takes CUDA_R_16F, CUDA_R_16BF, "
                                "CUDA_R_32F and CUDA_R_64F)",
                           vendor_type_name((int)all[i]->type), names[i]);
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        if (all[i]->rows > INT32_MAX || all[i]->cols > INT32_MAX || all[i]->ld > INT32_MAX || all[i]->batch < 0 ||
            (all[i]->rows && all[i]->cols && all[i]->ld < (int64_t)all[i]->rows)) {
            vendor_message(api, "the layout of %s is invalid (rows %llu, cols %llu, ld %lld, batch %d)", names[i],
                           (unsigned long long)all[i]->rows, (unsigned long long)all[i]->cols,
                           (long long)all[i]->ld, all[i]->batch);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
    }
    int ops[3] = {d->transa, d->transb, d->transc};
    for (int i = 0; i < 3; i++)
        if (ops[i] < 0 || ops[i] > 2) {
            vendor_message(api, "invalid transpose operation %d", ops[i]);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
    if (d->transc != 0) {
        vendor_message(api, "CUBLASLT_MATMUL_DESC_TRANSC other than CUBLAS_OP_N is not supported");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    memset(g, 0, sizeof *g);
    g->transa = d->transa != 0;
    g->transb = d->transb != 0;
    g->m = (int64_t)dl->rows;
    g->n = (int64_t)dl->cols;
    g->k = (int64_t)(g->transa ? a->rows : a->cols);
    int64_t am = (int64_t)(g->transa ? a->cols : a->rows);
    int64_t bk = (int64_t)(g->transb ? b->cols : b->rows), bn = (int64_t)(g->transb ? b->rows : b->cols);
    if (am != g->m || bk != g->k || bn != g->n || (int64_t)c->rows != g->m || (int64_t)c->cols != g->n) {
        vendor_message(api, "shapes do not match: op(A) is %lldx%lld, op(B) %lldx%lld, C %llux%llu, D %lldx%lld",
                       (long long)am, (long long)g->k, (long long)bk, (long long)bn, (unsigned long long)c->rows,
                       (unsigned long long)c->cols, (long long)g->m, (long long)g->n);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (a->batch != dl->batch || b->batch != dl->batch || c->batch != dl->batch) {
        vendor_message(api, "batch counts differ: A %d, B %d, C %d, D %d", a->batch, b->batch, c->batch, dl->batch);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    *batch = dl->batch;
    g->atype = (int)a->type;
    g->btype = (int)b->type;
    g->ctype = (int)c->type;
    g->dtype = (int)dl->type;
    g->lda = a->ld;
    g->ldb = b->ld;
    g->ldc = c->ld;
    g->ldd = dl->ld;
    int any64 = 0, all64 = 1;
    for (int i = 0; i < 4; i++) {
        any64 |= all[i]->type == VENDOR_R_64F;
        all64 &= all[i]->type == VENDOR_R_64F;
    }
    switch (d->compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
        break;
    case CUBLAS_COMPUTE_32F_FAST_TF32: g->tf32 = 1; break;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: break;
    default:
        vendor_message(api, "compute type %d is not supported by kemu (it computes in 16F, 32F or 64F)", d->compute);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    int compute64 = d->compute == CUBLAS_COMPUTE_64F || d->compute == CUBLAS_COMPUTE_64F_PEDANTIC;
    if ((any64 && !all64) || all64 != compute64 || !vendor_type_size(d->scale_type) ||
        (compute64 != (d->scale_type == VENDOR_R_64F))) {
        vendor_message(api, "data types A %s, B %s, C %s, D %s with compute type %d and scale type %s are not a "
                            "combination kemu supports",
                       vendor_type_name(g->atype), vendor_type_name(g->btype), vendor_type_name(g->ctype),
                       vendor_type_name(g->dtype), d->compute, vendor_type_name(d->scale_type));
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    *scale = d->scale_type;
    switch (d->epilogue) {
    case LT_EPILOGUE_DEFAULT: break;
    case LT_EPILOGUE_RELU:
    case LT_EPILOGUE_BIAS:
    case LT_EPILOGUE_RELU_BIAS:
    case LT_EPILOGUE_GELU:
    case LT_EPILOGUE_GELU_BIAS:
    case LT_EPILOGUE_RELU_AUX:
    case LT_EPILOGUE_RELU_AUX_BIAS:
    case LT_EPILOGUE_DRELU:
    case LT_EPILOGUE_DRELU_BGRAD:
    case LT_EPILOGUE_GELU_AUX:
    case LT_EPILOGUE_GELU_AUX_BIAS:
    case LT_EPILOGUE_DGELU:
    case LT_EPILOGUE_DGELU_BGRAD:
    case LT_EPILOGUE_BGRADA:
    case LT_EPILOGUE_BGRADB:
        /* gemm.h's VENDOR_EPILOGUE_* bits are cuBLASLt's */
        g->epilogue = d->epilogue;
        break;
    default:
        vendor_message(api, "epilogue %u is not supported by kemu (it has DEFAULT, RELU, BIAS, RELU_BIAS, GELU, "
                            "GELU_BIAS, RELU_AUX, RELU_AUX_BIAS, DRELU, DRELU_BGRAD, GELU_AUX, GELU_AUX_BIAS, DGELU, "
                            "DGELU_BGRAD, BGRADA and BGRADB)",
                       d->epilogue);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    unsigned e = g->epilogue;
    if (e & (VENDOR_EPILOGUE_BIAS | VENDOR_EPILOGUE_BGRAD | VENDOR_EPILOGUE_BGRADA | VENDOR_EPILOGUE_BGRADB)) {
        g->bias_type = d->bias_type >= 0 ? d->bias_type : g->dtype;
        if (!vendor_type_size(g->bias_type)) {
            vendor_message(api, "bias data type %s is not supported by kemu", vendor_type_name(g->bias_type));
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
    }
    if (e & VENDOR_EPILOGUE_AUX) {
        /* ReLU's auxiliary matrix is a bit mask; GELU's has elements of
         * EPILOGUE_AUX_DATA_TYPE (D's type by default) */
        int mask = (e & (VENDOR_EPILOGUE_RELU | VENDOR_EPILOGUE_DRELU)) != 0;
        g->aux_type = mask ? -1 : d->aux_type >= 0 ? d->aux_type : g->dtype;
        if (!mask && !vendor_type_size(g->aux_type)) {
            vendor_message(api, "epilogue auxiliary data type %s is not supported by kemu",
                           vendor_type_name(g->aux_type));
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        int64_t unit = mask ? 128 : 8;
        if (d->aux_ld < g->m || d->aux_ld % unit || d->aux_batch_stride % unit || d->aux_batch_stride < 0) {
            vendor_message(api, "%s needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD (%lld) at least D's %lld rows, and it "
                                "and EPILOGUE_AUX_BATCH_STRIDE (%lld) multiples of %lld",
                           epilogue_name(e), (long long)d->aux_ld, (long long)g->m, (long long)d->aux_batch_stride,
                           (long long)unit);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        g->aux_ld = d->aux_ld;
    }
    if (d->pointer_mode != 0 && d->pointer_mode != 1) {
        vendor_message(api, "pointer mode %d is not supported by kemu (it takes HOST and DEVICE)", d->pointer_mode);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, const lt_desc *d, const lt_layout *a,
                                                         const lt_layout *b, const lt_layout *c,
                                                         const lt_layout *dl, const lt_pref *pref, int requested,
                                                         lt_heuristic results[], int *returned);
VENDOR_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, const lt_desc *d, const lt_layout *a,
                                                         const lt_layout *b, const lt_layout *c,
                                                         const lt_layout *dl, const lt_pref *pref, int requested,
                                                         lt_heuristic results[], int *returned)
{
    const char *api = "cublasLtMatmulAlgoGetHeuristic";
    if (!lt_handle_live(h)) {
        vendor_message(api, "%s is not a live cuBLASLt handle", h ? "the handle" : "a NULL handle");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    if (requested <= 0 || !results || !returned || (pref && pref->magic != LT_PREF_MAGIC))
        return CUBLAS_STATUS_INVALID_VALUE;
    *returned = 0;
    vendor_gemm g;
    int scale;
    int64_t batch;
    cublasStatus_t st = lt_plan(api, d, a, b, c, dl, &g, &scale, &batch);
    if (st)
        return st;
    memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = LT_ALGO_TAG;
    results[0].workspace_size = 0; /* kemu's product needs no workspace */
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].waves_count = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, const lt_desc *d, const void *alpha, const void *A,
                                         const lt_layout *a, const void *B, const lt_layout *b, const void *beta,
                                         const void *C, const lt_layout *c, void *D, const lt_layout *dl,
                                         const lt_algo *algo, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream);
VENDOR_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, const lt_desc *d, const void *alpha, const void *A,
                                         const lt_layout *a, const void *B, const lt_layout *b, const void *beta,
                                         const void *C, const lt_layout *c, void *D, const lt_layout *dl,
                                         const lt_algo *algo, void *workspace, size_t workspace_bytes,
                                         cudaStream_t stream)
{
    const char *api = "cublasLtMatmul";
    (void)algo; /* any algorithm (or none) runs kemu's one product */
    (void)workspace;
    (void)workspace_bytes;
    if (!lt_handle_live(h)) {
        vendor_message(api, "%s is not a live cuBLASLt handle", h ? "the handle" : "a NULL handle");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    vendor_gemm g;
    int scale;
    int64_t batch;
    cublasStatus_t st = lt_plan(api, d, a, b, c, dl, &g, &scale, &batch);
    if (st)
        return st;
    kemu_device *dev;
    if ((st = cublas_begin_stream(stream, api, &dev)))
        return st;
    if (g.m == 0 || g.n == 0 || batch == 0)
        goto out;
    double alpha_v, beta_v;
    int device_mode = d->pointer_mode == 1;
    if ((st = cublas_read_scalar(api, "alpha", device_mode, alpha, scale, &alpha_v)) ||
        (st = cublas_read_scalar(api, "beta", device_mode, beta, scale, &beta_v)))
        goto out;
    g.alpha = alpha_v;
    g.beta = beta_v;
    unsigned e = g.epilogue;
    /* what the call reads and writes besides A, B, C, D: the bias (read),
     * the bias gradient (written), the auxiliary matrix (written by the
     * forward epilogues, read by the backward ones) */
    int bias_in = (e & VENDOR_EPILOGUE_BIAS) != 0;
    int bias_out = (e & (VENDOR_EPILOGUE_BGRAD | VENDOR_EPILOGUE_BGRADA | VENDOR_EPILOGUE_BGRADB)) != 0;
    int aux_mask = (e & VENDOR_EPILOGUE_AUX) && (e & (VENDOR_EPILOGUE_RELU | VENDOR_EPILOGUE_DRELU));
    int aux_in = (e & VENDOR_EPILOGUE_AUX) && (e & (VENDOR_EPILOGUE_DRELU | VENDOR_EPILOGUE_DGELU));
    int aux_out = (e & VENDOR_EPILOGUE_AUX) && !aux_in;
    int64_t bias_len = e & VENDOR_EPILOGUE_BGRADB ? g.n : g.m;
    int read_a = g.k && (alpha_v != 0 || (e & VENDOR_EPILOGUE_BGRADA));
    int read_b = g.k && (alpha_v != 0 || (e & VENDOR_EPILOGUE_BGRADB));
    if (!read_a && !read_b)
        g.k = 0; /* A and B are not read */
    size_t ea = vendor_type_size(g.atype), eb = vendor_type_size(g.btype), ec = vendor_type_size(g.ctype),
           ed = vendor_type_size(g.dtype), ebias = bias_in || bias_out ? vendor_type_size(g.bias_type) : 0,
           eaux = aux_mask ? 1 : (e & VENDOR_EPILOGUE_AUX) ? vendor_type_size(g.aux_type) : 0;
    int overflow = 0;
    uint64_t bytes_a = read_a ? vendor_matrix_bytes((int64_t)a->rows, (int64_t)a->cols, a->ld, ea, &overflow) : 0;
    uint64_t bytes_b = read_b ? vendor_matrix_bytes((int64_t)b->rows, (int64_t)b->cols, b->ld, eb, &overflow) : 0;
    uint64_t bytes_c = beta_v != 0 ? vendor_matrix_bytes(g.m, g.n, c->ld, ec, &overflow) : 0;
    uint64_t bytes_d = vendor_matrix_bytes(g.m, g.n, dl->ld, ed, &overflow);
    /* the mask: bytes holding bits 0 .. (n - 1) * ld + m - 1 (ld is a multiple of 128) */
    int64_t aux_rows = aux_mask ? (g.m + 7) / 8 : g.m, aux_ld = aux_mask ? g.aux_ld / 8 : g.aux_ld;
    int64_t aux_stride = aux_mask ? d->aux_batch_stride / 8 : d->aux_batch_stride;
    uint64_t bytes_aux = eaux ? vendor_matrix_bytes(aux_rows, g.n, aux_ld, eaux, &overflow) : 0;
    if (overflow) {
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    if (eaux && !d->aux) {
        vendor_message(api, "%s needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, which is NULL", epilogue_name(e));
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    if (ebias && !d->bias) {
        vendor_message(api, "%s needs CUBLASLT_MATMUL_DESC_BIAS_POINTER, which is NULL", epilogue_name(e));
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    const char *base[6] = {"A", "B", "C", "D", "bias (CUBLASLT_MATMUL_DESC_BIAS_POINTER)",
                           "aux (CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER)"};
    uint64_t bytes[6] = {bytes_a, bytes_b, bytes_c, bytes_d, ebias * (uint64_t)bias_len, bytes_aux};
    for (int64_t i = 0; i < batch; i++) {
        const void *ptr[6] = {
            bytes_a ? (const char *)A + i * a->stride * (int64_t)ea : NULL,
            bytes_b ? (const char *)B + i * b->stride * (int64_t)eb : NULL,
            bytes_c ? (const char *)C + i * c->stride * (int64_t)ec : NULL,
            (char *)D + i * dl->stride * (int64_t)ed,
            ebias ? (const char *)d->bias + i * d->bias_batch_stride * (int64_t)ebias : NULL,
            eaux ? (char *)d->aux + i * aux_stride * (int64_t)eaux : NULL};
        for (int j = 0; j < 6; j++) {
            char name[80];
            snprintf(name, sizeof name, batch > 1 ? "%s (batch entry %lld)" : "%s", base[j], (long long)i);
            if (vendor_check_range(api, name, ptr[j], bytes[j])) {
                st = CUBLAS_STATUS_EXECUTION_FAILED;
                goto out;
            }
        }
    }
    for (int64_t i = 0; i < batch; i++) {
        vendor_gemm one = g;
        one.A = bytes_a ? (const char *)A + i * a->stride * (int64_t)ea : NULL;
        one.B = bytes_b ? (const char *)B + i * b->stride * (int64_t)eb : NULL;
        one.C = bytes_c ? (const char *)C + i * c->stride * (int64_t)ec : NULL;
        one.D = (char *)D + i * dl->stride * (int64_t)ed;
        char *pbias = ebias ? (char *)d->bias + i * d->bias_batch_stride * (int64_t)ebias : NULL;
        one.bias = bias_in ? pbias : NULL;
        one.bgrad = bias_out ? pbias : NULL;
        one.aux = eaux ? (char *)d->aux + i * aux_stride * (int64_t)eaux : NULL;
        const void *ptr[5] = {one.A, one.B, one.C, one.bias, aux_in ? one.aux : NULL};
        int64_t rows[5] = {(int64_t)a->rows, (int64_t)b->rows, g.m, g.m, aux_rows};
        int64_t cols[5] = {(int64_t)a->cols, (int64_t)b->cols, g.n, 1, g.n};
        int64_t lds[5] = {a->ld, b->ld, c->ld, g.m, aux_ld};
        size_t elems[5] = {ea, eb, ec, ebias, eaux};
        const int which[5] = {0, 1, 2, 4, 5};
        for (int j = 0; j < 5; j++) {
            char name[80];
            snprintf(name, sizeof name, batch > 1 ? "%s (batch entry %lld)" : "%s", base[which[j]], (long long)i);
            if (ptr[j])
                vendor_note_read(dev, api, name, ptr[j], rows[j], cols[j], lds[j], elems[j]);
        }
        if (vendor_gemm_run(&one)) {
            vendor_message(api, "out of host memory");
            st = CUBLAS_STATUS_ALLOC_FAILED;
            goto out;
        }
        vendor_mark_written(dev, one.D, g.m, g.n, dl->ld, ed);
        if (one.bgrad)
            vendor_mark_written(dev, one.bgrad, bias_len, 1, bias_len, ebias);
        if (aux_out)
            vendor_mark_written(dev, one.aux, aux_rows, g.n, aux_ld, eaux);
    }
out:
    cublas_end();
    return st;
}
