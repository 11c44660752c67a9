/* kemu's libcublasLt: the handle, versions, matmul descriptors, matrix
 * layouts and preferences (their attributes); the product is in
 * cublas_lt_matmul.c. Column-major layouts only; other orders are refused
 * by name. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_lt.h"

#ifndef CUBLAS_FLAVOUR
#define CUBLAS_FLAVOUR 13
#endif
#if CUBLAS_FLAVOUR == 12
#define LT_VERSION_MAJOR 12
#define LT_VERSION_MINOR 9
#define LT_CUDART_VERSION 12090
#else
#define LT_VERSION_MAJOR 13
#define LT_VERSION_MINOR 1
#define LT_CUDART_VERSION 13000
#endif

/* ---- the handle ------------------------------------------------------------------ */

static pthread_mutex_t lt_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasLtHandle_t *lt_handles;
static size_t lt_nhandles, lt_caphandles;

int lt_handle_live(cublasLtHandle_t h)
{
    int live = 0;
    pthread_mutex_lock(&lt_lock);
    for (size_t i = 0; i < lt_nhandles && !live; i++)
        live = lt_handles[i] == h;
    pthread_mutex_unlock(&lt_lock);
    return live;
}

VENDOR_API cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle);
VENDOR_API cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    kemu_device *dev;
    cublasStatus_t st = cublas_begin_stream(NULL, "cublasLtCreate", &dev);
    if (st)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cublas_end();
    cublasLtHandle_t h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = LT_HANDLE_MAGIC;
    pthread_mutex_lock(&lt_lock);
    if (lt_nhandles == lt_caphandles) {
        size_t cap = lt_caphandles ? 2 * lt_caphandles : 8;
        cublasLtHandle_t *grown = realloc(lt_handles, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&lt_lock);
            free(h);
            return CUBLAS_STATUS_ALLOC_FAILED;
        }
        lt_handles = grown;
        lt_caphandles = cap;
    }
    lt_handles[lt_nhandles++] = h;
    pthread_mutex_unlock(&lt_lock);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle);
VENDOR_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    int found = 0;
    pthread_mutex_lock(&lt_lock);
    for (size_t i = 0; i < lt_nhandles; i++)
        if (lt_handles[i] == handle) {
            lt_handles[i] = lt_handles[--lt_nhandles];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&lt_lock);
    if (!found) {
        vendor_message("cublasLtDestroy", "%s is not a live cuBLASLt handle",
                       handle ? "the handle" : "a NULL handle");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    handle->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- versions and status names --------------------------------------------------- */

VENDOR_API size_t cublasLtGetVersion(void);
VENDOR_API size_t cublasLtGetVersion(void)
{
    return LT_VERSION_MAJOR * 10000 + LT_VERSION_MINOR * 100;
}

VENDOR_API size_t cublasLtGetCudartVersion(void);
VENDOR_API size_t cublasLtGetCudartVersion(void)
{
    return LT_CUDART_VERSION;
}

VENDOR_API cublasStatus_t cublasLtGetProperty(int type, int *value);
VENDOR_API cublasStatus_t cublasLtGetProperty(int type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case 0: *value = LT_VERSION_MAJOR; break;
    case 1: *value = LT_VERSION_MINOR; break;
    case 2: *value = 0; break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API const char *cublasLtGetStatusName(cublasStatus_t status);
VENDOR_API const char *cublasLtGetStatusName(cublasStatus_t status)
{
    return cublas_status_name(status);
}

VENDOR_API const char *cublasLtGetStatusString(cublasStatus_t status);
VENDOR_API const char *cublasLtGetStatusString(cublasStatus_t status)
{
    return cublas_status_string(status);
}

/* ---- attribute helpers -------------------------------------------------------------- */

/* Copies a set value of `size` bytes into dst after checking the size. */
static cublasStatus_t set_value(void *dst, size_t size, const void *buf, size_t bytes)
{
    if (!buf || bytes != size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(dst, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

/* Gets a value: *written = its size; with bytes 0 and written set, only the size. */
static cublasStatus_t get_value(const void *src, size_t size, void *buf, size_t bytes, size_t *written)
{
    if (bytes == 0 && written) {
        *written = size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || bytes < size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, src, size);
    if (written)
        *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t unsupported_attribute(const char *api, const char *what, int attr)
{
    vendor_message(api, "%s attribute %d is not supported by kemu", what, attr);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

/* ---- matmul descriptors --------------------------------------------------------------- */

static void desc_init(lt_desc *d, int compute, int scale)
{
    memset(d, 0, sizeof *d);
    d->magic = LT_DESC_MAGIC;
    d->compute = compute;
    d->scale_type = scale;
    d->epilogue = LT_EPILOGUE_DEFAULT;
    d->bias_type = -1;
    d->aux_type = -1;
}

int lt_desc_ok(const lt_desc *d)
{
    return d && d->magic == LT_DESC_MAGIC;
}

VENDOR_API cublasStatus_t cublasLtMatmulDescCreate(lt_desc **desc, int compute, int scale);
VENDOR_API cublasStatus_t cublasLtMatmulDescCreate(lt_desc **desc, int compute, int scale)
{
    if (!desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_desc *d = malloc(sizeof *d);
    if (!d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    desc_init(d, compute, scale);
    *desc = d;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulDescInit_internal(lt_desc *desc, size_t size, int compute, int scale);
VENDOR_API cublasStatus_t cublasLtMatmulDescInit_internal(lt_desc *desc, size_t size, int compute, int scale)
{
    if (!desc || size < sizeof *desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    desc_init(desc, compute, scale);
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulDescDestroy(lt_desc *desc);
VENDOR_API cublasStatus_t cublasLtMatmulDescDestroy(lt_desc *desc)
{
    if (!desc)
        return CUBLAS_STATUS_SUCCESS;
    if (!lt_desc_ok(desc))
        return CUBLAS_STATUS_INVALID_VALUE;
    desc->magic = 0;
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulDescSetAttribute(lt_desc *d, int attr, const void *buf, size_t bytes);
VENDOR_API cublasStatus_t cublasLtMatmulDescSetAttribute(lt_desc *d, int attr, const void *buf, size_t bytes)
{
    const char *api = "cublasLtMatmulDescSetAttribute";
    if (!lt_desc_ok(d))
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_DESC_COMPUTE_TYPE: return set_value(&d->compute, 4, buf, bytes);
    case LT_DESC_SCALE_TYPE: return set_value(&d->scale_type, 4, buf, bytes);
    case LT_DESC_POINTER_MODE: return set_value(&d->pointer_mode, 4, buf, bytes);
    case LT_DESC_TRANSA: return set_value(&d->transa, 4, buf, bytes);
    case LT_DESC_TRANSB: return set_value(&d->transb, 4, buf, bytes);
    case LT_DESC_TRANSC: return set_value(&d->transc, 4, buf, bytes);
    case LT_DESC_FILL_MODE: return set_value(&d->fill_mode, 4, buf, bytes);
    case LT_DESC_EPILOGUE: return set_value(&d->epilogue, 4, buf, bytes);
    case LT_DESC_BIAS_POINTER: return set_value(&d->bias, sizeof(void *), buf, bytes);
    case LT_DESC_BIAS_BATCH_STRIDE: return set_value(&d->bias_batch_stride, 8, buf, bytes);
    case LT_DESC_SM_COUNT_TARGET: return set_value(&d->sm_count_target, 4, buf, bytes);
    case LT_DESC_FAST_ACCUM: return set_value(&d->fast_accum, 1, buf, bytes);
    case LT_DESC_BIAS_DATA_TYPE: return set_value(&d->bias_type, 4, buf, bytes);
    case LT_DESC_EPILOGUE_AUX_POINTER: return set_value(&d->aux, sizeof(void *), buf, bytes);
    case LT_DESC_EPILOGUE_AUX_LD: return set_value(&d->aux_ld, 8, buf, bytes);
    case LT_DESC_EPILOGUE_AUX_BATCH_STRIDE: return set_value(&d->aux_batch_stride, 8, buf, bytes);
    case LT_DESC_EPILOGUE_AUX_DATA_TYPE: return set_value(&d->aux_type, 4, buf, bytes);
    default: return unsupported_attribute(api, "matmul descriptor", attr);
    }
}

VENDOR_API cublasStatus_t cublasLtMatmulDescGetAttribute(const lt_desc *d, int attr, void *buf, size_t bytes,
                                                         size_t *written);
VENDOR_API cublasStatus_t cublasLtMatmulDescGetAttribute(const lt_desc *d, int attr, void *buf, size_t bytes,
                                                         size_t *written)
{
    const char *api = "cublasLtMatmulDescGetAttribute";
    if (!lt_desc_ok(d))
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_DESC_COMPUTE_TYPE: return get_value(&d->compute, 4, buf, bytes, written);
    case LT_DESC_SCALE_TYPE: return get_value(&d->scale_type, 4, buf, bytes, written);
    case LT_DESC_POINTER_MODE: return get_value(&d->pointer_mode, 4, buf, bytes, written);
    case LT_DESC_TRANSA: return get_value(&d->transa, 4, buf, bytes, written);
    case LT_DESC_TRANSB: return get_value(&d->transb, 4, buf, bytes, written);
    case LT_DESC_TRANSC: return get_value(&d->transc, 4, buf, bytes, written);
    case LT_DESC_FILL_MODE: return get_value(&d->fill_mode, 4, buf, bytes, written);
    case LT_DESC_EPILOGUE: return get_value(&d->epilogue, 4, buf, bytes, written);
    case LT_DESC_BIAS_POINTER: return get_value(&d->bias, sizeof(void *), buf, bytes, written);
    case LT_DESC_BIAS_BATCH_STRIDE: return get_value(&d->bias_batch_stride, 8, buf, bytes, written);
    case LT_DESC_SM_COUNT_TARGET: return get_value(&d->sm_count_target, 4, buf, bytes, written);
    case LT_DESC_FAST_ACCUM: return get_value(&d->fast_accum, 1, buf, bytes, written);
    case LT_DESC_BIAS_DATA_TYPE: return get_value(&d->bias_type, 4, buf, bytes, written);
    case LT_DESC_EPILOGUE_AUX_POINTER: return get_value(&d->aux, sizeof(void *), buf, bytes, written);
    case LT_DESC_EPILOGUE_AUX_LD: return get_value(&d->aux_ld, 8, buf, bytes, written);
    case LT_DESC_EPILOGUE_AUX_BATCH_STRIDE: return get_value(&d->aux_batch_stride, 8, buf, bytes, written);
    case LT_DESC_EPILOGUE_AUX_DATA_TYPE: return get_value(&d->aux_type, 4, buf, bytes, written);
    default: return unsupported_attribute(api, "matmul descriptor", attr);
    }
}

/* ---- matrix layouts --------------------------------------------------------------------- */

static void layout_init(lt_layout *l, int type, uint64_t rows, uint64_t cols, int64_t ld)
{
    memset(l, 0, sizeof *l);
    l->magic = LT_LAYOUT_MAGIC;
    l->type = (uint32_t)type;
    l->rows = rows;
    l->cols = cols;
    l->ld = ld;
    l->batch = 1;
}

int lt_layout_ok(const lt_layout *l)
{
    return l && l->magic == LT_LAYOUT_MAGIC;
}

VENDOR_API cublasStatus_t cublasLtMatrixLayoutCreate(lt_layout **layout, int type, uint64_t rows, uint64_t cols,
                                                     int64_t ld);
VENDOR_API cublasStatus_t cublasLtMatrixLayoutCreate(lt_layout **layout, int type, uint64_t rows, uint64_t cols,
                                                     int64_t ld)
{
    if (!layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_layout *l = malloc(sizeof *l);
    if (!l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    layout_init(l, type, rows, cols, ld);
    *layout = l;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatrixLayoutInit_internal(lt_layout *layout, size_t size, int type, uint64_t rows,
                                                            uint64_t cols, int64_t ld);
VENDOR_API cublasStatus_t cublasLtMatrixLayoutInit_internal(lt_layout *layout, size_t size, int type, uint64_t rows,
                                                            uint64_t cols, int64_t ld)
{
    if (!layout || size < sizeof *layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    layout_init(layout, type, rows, cols, ld);
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatrixLayoutDestroy(lt_layout *layout);
VENDOR_API cublasStatus_t cublasLtMatrixLayoutDestroy(lt_layout *layout)
{
    if (!layout)
        return CUBLAS_STATUS_SUCCESS;
    if (!lt_layout_ok(layout))
        return CUBLAS_STATUS_INVALID_VALUE;
    layout->magic = 0;
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

const char *lt_order_name(int order)
{
    switch (order) {
    case 0: return "CUBLASLT_ORDER_COL";
    case 1: return "CUBLASLT_ORDER_ROW";
    case 2: return "CUBLASLT_ORDER_COL32";
    case 3: return "CUBLASLT_ORDER_COL4_4R2_8C";
    case 4: return "CUBLASLT_ORDER_COL32_2R_4R4";
    default: return "an unknown order";
    }
}

VENDOR_API cublasStatus_t cublasLtMatrixLayoutSetAttribute(lt_layout *l, int attr, const void *buf, size_t bytes);
VENDOR_API cublasStatus_t cublasLtMatrixLayoutSetAttribute(lt_layout *l, int attr, const void *buf, size_t bytes)
{
    const char *api = "cublasLtMatrixLayoutSetAttribute";
    if (!lt_layout_ok(l))
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_LAYOUT_TYPE: return set_value(&l->type, 4, buf, bytes);
    case LT_LAYOUT_ORDER: {
        int32_t order;
        cublasStatus_t st = set_value(&order, 4, buf, bytes);
        if (st)
            return st;
        if (order != 0) {
            vendor_message(api, "matrix layout order %s is not supported by kemu (it takes CUBLASLT_ORDER_COL)",
                           lt_order_name(order));
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        l->order = order;
        return CUBLAS_STATUS_SUCCESS;
    }
    case LT_LAYOUT_ROWS: return set_value(&l->rows, 8, buf, bytes);
    case LT_LAYOUT_COLS: return set_value(&l->cols, 8, buf, bytes);
    case LT_LAYOUT_LD: return set_value(&l->ld, 8, buf, bytes);
    case LT_LAYOUT_BATCH_COUNT: return set_value(&l->batch, 4, buf, bytes);
    case LT_LAYOUT_STRIDED_BATCH_OFFSET: return set_value(&l->stride, 8, buf, bytes);
    default: return unsupported_attribute(api, "matrix layout", attr);
    }
}

VENDOR_API cublasStatus_t cublasLtMatrixLayoutGetAttribute(const lt_layout *l, int attr, void *buf, size_t bytes,
                                                           size_t *written);
VENDOR_API cublasStatus_t cublasLtMatrixLayoutGetAttribute(const lt_layout *l, int attr, void *buf, size_t bytes,
                                                           size_t *written)
{
    const char *api = "cublasLtMatrixLayoutGetAttribute";
    if (!lt_layout_ok(l))
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_LAYOUT_TYPE: return get_value(&l->type, 4, buf, bytes, written);
    case LT_LAYOUT_ORDER: return get_value(&l->order, 4, buf, bytes, written);
    case LT_LAYOUT_ROWS: return get_value(&l->rows, 8, buf, bytes, written);
    case LT_LAYOUT_COLS: return get_value(&l->cols, 8, buf, bytes, written);
    case LT_LAYOUT_LD: return get_value(&l->ld, 8, buf, bytes, written);
    case LT_LAYOUT_BATCH_COUNT: return get_value(&l->batch, 4, buf, bytes, written);
    case LT_LAYOUT_STRIDED_BATCH_OFFSET: return get_value(&l->stride, 8, buf, bytes, written);
    default: return unsupported_attribute(api, "matrix layout", attr);
    }
}

/* ---- preferences ------------------------------------------------------------------------- */

static void pref_init(lt_pref *p)
{
    memset(p, 0, sizeof *p);
    p->magic = LT_PREF_MAGIC;
}

VENDOR_API cublasStatus_t cublasLtMatmulPreferenceCreate(lt_pref **pref);
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceCreate(lt_pref **pref)
{
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    lt_pref *p = malloc(sizeof *p);
    if (!p)
        return CUBLAS_STATUS_ALLOC_FAILED;
    pref_init(p);
    *pref = p;
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulPreferenceInit_internal(lt_pref *pref, size_t size);
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceInit_internal(lt_pref *pref, size_t size)
{
    if (!pref || size < sizeof *pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    pref_init(pref);
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulPreferenceDestroy(lt_pref *pref);
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceDestroy(lt_pref *pref)
{
    if (!pref)
        return CUBLAS_STATUS_SUCCESS;
    if (pref->magic != LT_PREF_MAGIC)
        return CUBLAS_STATUS_INVALID_VALUE;
    pref->magic = 0;
    free(pref);
    return CUBLAS_STATUS_SUCCESS;
}

/* The search mode and workspace limit are kept; the alignment, waves and
 * implementation hints are accepted and ignored (kemu has one algorithm). */
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(lt_pref *p, int attr, const void *buf, size_t bytes);
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(lt_pref *p, int attr, const void *buf, size_t bytes)
{
    if (!p || p->magic != LT_PREF_MAGIC)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_PREF_SEARCH_MODE: return set_value(&p->search_mode, 4, buf, bytes);
    case LT_PREF_MAX_WORKSPACE_BYTES: return set_value(&p->max_workspace, 8, buf, bytes);
    case 3: case 5: case 6: case 7: case 8: case 9: case 12:
        return buf && bytes ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default: return unsupported_attribute("cublasLtMatmulPreferenceSetAttribute", "preference", attr);
    }
}

VENDOR_API cublasStatus_t cublasLtMatmulPreferenceGetAttribute(const lt_pref *p, int attr, void *buf, size_t bytes,
                                                               size_t *written);
VENDOR_API cublasStatus_t cublasLtMatmulPreferenceGetAttribute(const lt_pref *p, int attr, void *buf, size_t bytes,
                                                               size_t *written)
{
    if (!p || p->magic != LT_PREF_MAGIC)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case LT_PREF_SEARCH_MODE: return get_value(&p->search_mode, 4, buf, bytes, written);
    case LT_PREF_MAX_WORKSPACE_BYTES: return get_value(&p->max_workspace, 8, buf, bytes, written);
    default: return unsupported_attribute("cublasLtMatmulPreferenceGetAttribute", "preference", attr);
    }
}
