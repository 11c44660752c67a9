/* kemu's libcublasLt: what its files (cublas_lt.c: handles, descriptors,
 * layouts, preferences; cublas_lt_matmul.c: the heuristic query and
 * cublasLtMatmul) share: cuBLASLt's documented ABI values, declared here by
 * kemu, and the objects behind its opaque handles. */
#ifndef KEMU_VENDOR_CUBLAS_LT_H
#define KEMU_VENDOR_CUBLAS_LT_H

#include "vendor/cublas_internal.h"

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

/* Whether h is a live handle (locks the handle table). */
int lt_handle_live(cublasLtHandle_t h);
/* Whether d / l is an initialized descriptor / layout. */
int lt_desc_ok(const lt_desc *d);
int lt_layout_ok(const lt_layout *l);
/* "CUBLASLT_ORDER_ROW" ... (static). */
const char *lt_order_name(int order);

#endif
