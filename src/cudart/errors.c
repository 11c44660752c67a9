/* The names and messages of the CUDA runtime's error codes
 * (cudaGetErrorName, cudaGetErrorString), from the table in errors.def,
 * and the mapping of kemu statuses and kernel fault messages onto them. */
#include "config.h"
#include "cudart/runtime.h"

#include <string.h>

typedef struct cudart_error_entry {
    cudaError_t value;
    const char *name;
    const char *text;
} cudart_error_entry;

static const cudart_error_entry error_table[] = {
#define CUDART_ERROR(value, name, text) {value, #name, text},
#include "cudart/errors.def"
#undef CUDART_ERROR
};

static const cudart_error_entry *error_find(cudaError_t err)
{
    for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++)
        if (error_table[i].value == err)
            return &error_table[i];
    return NULL;
}

/* The real runtime answers an unknown code with this text for both. */
#define CUDART_UNRECOGNIZED "unrecognized error code"

const char *cudart_error_name(cudaError_t err)
{
    const cudart_error_entry *e = error_find(err);
    return e ? e->name : CUDART_UNRECOGNIZED;
}

const char *cudart_error_string(cudaError_t err)
{
    const cudart_error_entry *e = error_find(err);
    return e ? e->text : CUDART_UNRECOGNIZED;
}

cudaError_t cudart_error_from_status(kemu_status st)
{
    switch (st) {
    case KEMU_OK: return cudaSuccess;
    case KEMU_ERR_INVALID_ARGUMENT: return cudaErrorInvalidValue;
    case KEMU_ERR_PARSE: return cudaErrorInvalidPtx;
    case KEMU_ERR_NOT_FOUND: return cudaErrorInvalidDeviceFunction;
    case KEMU_ERR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case KEMU_ERR_LAUNCH_CONFIG: return CUDART_ERROR_LAUNCH_CONFIG;
    case KEMU_ERR_KERNEL_FAULT: return cudaErrorLaunchFailure;
    case KEMU_ERR_UNSUPPORTED: return cudaErrorNotSupported;
    case KEMU_ERR_IO: return cudaErrorOperatingSystem;
    }
    return cudaErrorUnknown;
}

CUDART_API const char *cudaGetErrorName(cudaError_t err)
{
    return cudart_error_name(err);
}

CUDART_API const char *cudaGetErrorString(cudaError_t err)
{
    return cudart_error_string(err);
}
