/* cudaGetDriverEntryPoint(ByVersion): the driver functions a program may
 * fetch through the runtime instead of linking libcuda: kemu's driver API
 * (driver.c, through cuGetProcAddress), then the older table below. Symbols
 * neither knows are reported as not found, as a driver too old for them
 * would. */
#include "config.h"
#include "cudart/runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* CUresult values the functions below return */
enum { KEMU_CUDA_SUCCESS = 0, KEMU_CUDA_ERROR_INVALID_VALUE = 1, KEMU_CUDA_ERROR_NOT_SUPPORTED = 801 };
/* cudaDriverEntryPointQueryResult */
enum { ENTRY_SUCCESS = 0, ENTRY_SYMBOL_NOT_FOUND = 1 };

static int entry_tensor_map_encode_tiled(void *tensor_map, int data_type, uint32_t rank, void *global_address,
                                         const uint64_t *global_dim, const uint64_t *global_strides,
                                         const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                         int swizzle, int l2_promotion, int oob_fill)
{
    kemu_error err;
    kemu_status st = kemu_tensor_map_encode_tiled(tensor_map, data_type, rank, (uint64_t)(uintptr_t)global_address,
                                                  global_dim, global_strides, box_dim, element_strides, interleave,
                                                  swizzle, l2_promotion, oob_fill, &err);
    if (st == KEMU_OK)
        return KEMU_CUDA_SUCCESS;
    fprintf(stderr, "kemu: cuTensorMapEncodeTiled: %s\n", err.message);
    return st == KEMU_ERR_UNSUPPORTED ? KEMU_CUDA_ERROR_NOT_SUPPORTED : KEMU_CUDA_ERROR_INVALID_VALUE;
}

static int entry_get_error_string(int result, const char **text)
{
    if (!text)
        return KEMU_CUDA_ERROR_INVALID_VALUE;
    *text = result == KEMU_CUDA_SUCCESS ? "no error"
          : result == KEMU_CUDA_ERROR_INVALID_VALUE ? "invalid argument"
          : result == KEMU_CUDA_ERROR_NOT_SUPPORTED ? "operation not supported" : "unknown error";
    return KEMU_CUDA_SUCCESS;
}

static int entry_get_error_name(int result, const char **text)
{
    if (!text)
        return KEMU_CUDA_ERROR_INVALID_VALUE;
    *text = result == KEMU_CUDA_SUCCESS ? "CUDA_SUCCESS"
          : result == KEMU_CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
          : result == KEMU_CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
    return KEMU_CUDA_SUCCESS;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status);

static cudaError_t lookup(const char *symbol, void **fn, int version, unsigned long long flags, int *status)
{
    static const struct { const char *name; void (*fn)(void); } table[] = {
        {"cuTensorMapEncodeTiled", (void (*)(void))entry_tensor_map_encode_tiled},
        {"cuGetErrorString", (void (*)(void))entry_get_error_string},
        {"cuGetErrorName", (void (*)(void))entry_get_error_name},
    };
    if (!symbol || !fn)
        return cudart_result(cudaErrorInvalidValue);
    *fn = NULL;
    /* the whole driver API (driver.c), as cuGetProcAddress hands it out */
    if (!cuGetProcAddress_v2(symbol, fn, version, flags, NULL)) {
        if (status)
            *status = ENTRY_SUCCESS;
        return cudart_result(cudaSuccess);
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(symbol, table[i].name)) {
            memcpy(fn, &table[i].fn, sizeof *fn);
            if (status)
                *status = ENTRY_SUCCESS;
            return cudart_result(cudaSuccess);
        }
    if (status)
        *status = ENTRY_SYMBOL_NOT_FOUND;
    return cudart_result(cudaSuccess);
}

CUDART_API cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags, int *status)
{
    return lookup(symbol, fn, CUDART_VERSION_NUMBER, flags, status);
}

CUDART_API cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
                                                        unsigned long long flags, int *status)
{
    return lookup(symbol, fn, (int)version, flags, status);
}

CUDART_ALIAS(cudaGetDriverEntryPoint_ptsz, cudaGetDriverEntryPoint)
CUDART_ALIAS(cudaGetDriverEntryPointByVersion_ptsz, cudaGetDriverEntryPointByVersion)
