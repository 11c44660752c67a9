/* kemu's libcublasLt: the handle, matmul descriptors, matrix layouts,
 * preferences, the heuristic query (one algorithm) and cublasLtMatmul with
 * cuBLASLt's epilogues (bias, ReLU, GELU, their auxiliary outputs, the
 * backward DRELU / DGELU with bias gradients, BGRADA / BGRADB), computed
 * on the CPU by the product libcublas uses (gemm.c). Column-major
 * layouts only; everything else is refused by name. The ABI values are
 * cuBLASLt's documented ones, declared here by kemu. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/cublas_internal.h"
#include "vendor/gemm.h"

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

/* cublasLtMatmulDescAttributes_t */
enum {
    LT_DESC_COMPUTE_TYPE = 0,
    LT_DESC_SCALE_TYPE = 1,
    LT_DESC_POINTER_MODE = 2,
    LT_DESC_TRANSA = 3,
    LT_DESC_TRANSB = 4,
    LT_DESC_TRANSC = 5,
    LT_DESC_FILL_MODE = 6,
    LT_DESC_EPILOGUE = 7,
    LT_DESC_BIAS_POINTER = 8,
    LT_DESC_BIAS_BATCH_STRIDE = 10,
    LT_DESC_EPILOGUE_AUX_POINTER = 11,
    LT_DESC_EPILOGUE_AUX_LD = 12,
    LT_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13,
    LT_DESC_SM_COUNT_TARGET = 15,
    LT_DESC_EPILOGUE_AUX_DATA_TYPE = 22,
    LT_DESC_FAST_ACCUM = 25,
    LT_DESC_BIAS_DATA_TYPE = 26
};
/* cublasLtMatrixLayoutAttribute_t */
enum {
    LT_LAYOUT_TYPE = 0,
    LT_LAYOUT_ORDER = 1,
    LT_LAYOUT_ROWS = 2,
    LT_LAYOUT_COLS = 3,
    LT_LAYOUT_LD = 4,
    LT_LAYOUT_BATCH_COUNT = 5,
    LT_LAYOUT_STRIDED_BATCH_OFFSET = 6
};
/* cublasLtMatmulPreferenceAttributes_t that kemu keeps */
enum { LT_PREF_SEARCH_MODE = 0, LT_PREF_MAX_WORKSPACE_BYTES = 1 };
/* cublasLtEpilogue_t */
enum {
    LT_EPILOGUE_DEFAULT = 1,
    LT_EPILOGUE_RELU = 2,
    LT_EPILOGUE_BIAS = 4,
    LT_EPILOGUE_RELU_BIAS = 6,
    LT_EPILOGUE_GELU = 32,
    LT_EPILOGUE_GELU_BIAS = 36,
    LT_EPILOGUE_RELU_AUX = 130,
    LT_EPILOGUE_RELU_AUX_BIAS = 134,
    LT_EPILOGUE_DRELU = 136,
    LT_EPILOGUE_DRELU_BGRAD = 152,
    LT_EPILOGUE_GELU_AUX = 160,
    LT_EPILOGUE_GELU_AUX_BIAS = 164,
    LT_EPILOGUE_DGELU = 192,
    LT_EPILOGUE_DGELU_BGRAD = 208,
    LT_EPILOGUE_BGRADA = 256,
    LT_EPILOGUE_BGRADB = 512
};

#define LT_HANDLE_MAGIC 0x6b6c7468u /* "kltH" */
#define LT_DESC_MAGIC 0x6b6c7464u
#define LT_LAYOUT_MAGIC 0x6b6c746cu
#define LT_PREF_MAGIC 0x6b6c7470u

typedef struct lt_handle {
    unsigned magic;
} *cublasLtHandle_t;

/* Each fits the opaque storage cuBLASLt's header gives it (the *Init
 * functions initialize that storage in place): 256, 64 and 64 bytes. */
typedef struct lt_desc {
    uint32_t magic;
    int32_t compute;
    int32_t scale_type;
    int32_t pointer_mode;
    int32_t transa, transb, transc, fill_mode;
    uint32_t epilogue;
    int32_t bias_type; /* -1: D's type */
    int32_t sm_count_target;
    int8_t fast_accum;
    int32_t aux_type; /* -1: D's type */
    const void *bias;
    int64_t bias_batch_stride;
    void *aux;
    int64_t aux_ld;
    int64_t aux_batch_stride;
} lt_desc;

typedef struct lt_layout {
    uint32_t magic;
    uint32_t type;
    int32_t order;
    int32_t batch;
    uint64_t rows, cols;
    int64_t ld;
    int64_t stride;
} lt_layout;

typedef struct lt_pref {
    uint32_t magic;
    uint32_t search_mode;
    uint64_t max_workspace;
} lt_pref;

_Static_assert(sizeof(lt_desc) <= 256, "lt_desc fits cublasLtMatmulDescOpaque_t");
_Static_assert(sizeof(lt_layout) <= 64, "lt_layout fits cublasLtMatrixLayoutOpaque_t");
_Static_assert(sizeof(lt_pref) <= 64, "lt_pref fits cublasLtMatmulPreferenceOpaque_t");

typedef struct lt_algo {
    uint64_t data[8];
} lt_algo;

typedef struct lt_heuristic {
    lt_algo algo;
    size_t workspace_size;
    cublasStatus_t state;
    float waves_count;
    int reserved[4];
} lt_heuristic;

#define LT_ALGO_TAG 0x6b656d75616c676full /* "kemualgo" */

/* ---- the handle ------------------------------------------------------------------ */

static pthread_mutex_t lt_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasLtHandle_t *lt_handles;
static size_t lt_nhandles, lt_caphandles;

static int lt_handle_live(cublasLtHandle_t h)
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

static int desc_ok(const lt_desc *d)
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
    if (!desc_ok(desc))
        return CUBLAS_STATUS_INVALID_VALUE;
    desc->magic = 0;
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

VENDOR_API cublasStatus_t cublasLtMatmulDescSetAttribute(lt_desc *d, int attr, const void *buf, size_t bytes);
VENDOR_API cublasStatus_t cublasLtMatmulDescSetAttribute(lt_desc *d, int attr, const void *buf, size_t bytes)
{
    const char *api = "cublasLtMatmulDescSetAttribute";
    if (!desc_ok(d))
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
    if (!desc_ok(d))
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

static int layout_ok(const lt_layout *l)
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
    if (!layout_ok(layout))
        return CUBLAS_STATUS_INVALID_VALUE;
    layout->magic = 0;
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

static const char *order_name(int order)
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
    if (!layout_ok(l))
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
                           order_name(order));
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
    if (!layout_ok(l))
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
    if (!desc_ok(d) || !layout_ok(a) || !layout_ok(b) || !layout_ok(c) || !layout_ok(dl)) {
        vendor_message(api, "a descriptor or matrix layout is NULL or not initialized");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const lt_layout *all[4] = {a, b, c, dl};
    const char *names[4] = {"A", "B", "C", "D"};
    for (int i = 0; i < 4; i++) {
        if (all[i]->order != 0) {
            vendor_message(api, "matrix layout order %s of %s is not supported by kemu (it takes CUBLASLT_ORDER_COL)",
                           order_name(all[i]->order), names[i]);
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
