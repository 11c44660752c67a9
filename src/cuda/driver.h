/* The CUDA driver library, loaded at run time: dlopen of libcuda.so.1 (or
 * the file that KEMU_CUDA_LIBRARY names), the table of entry points kemu
 * uses, and driver error names. Nothing here is needed to build kemu, and
 * nothing links against libcuda. */
#ifndef KEMU_CUDA_DRIVER_H
#define KEMU_CUDA_DRIVER_H

#include <stddef.h>

#include "cuda/driver_abi.h"

/* The library name opened when KEMU_CUDA_LIBRARY is not set. */
#define CUDA_DRIVER_LIBRARY "libcuda.so.1"

/* The loaded library and its entry points. Every pointer but
 * launch_kernel_ex (added in CUDA 12.0) is non-NULL once
 * cuda_driver_open succeeded. */
typedef struct cuda_driver {
    void *library;
    char library_name[512];
    __typeof__(&cuInit) init;
    __typeof__(&cuDriverGetVersion) driver_get_version;
    __typeof__(&cuGetErrorName) get_error_name;
    __typeof__(&cuGetErrorString) get_error_string;
    __typeof__(&cuDeviceGetCount) device_get_count;
    __typeof__(&cuDeviceGet) device_get;
    __typeof__(&cuDeviceGetName) device_get_name;
    __typeof__(&cuDeviceGetAttribute) device_get_attribute;
    __typeof__(&cuDevicePrimaryCtxRetain) primary_context_retain;
    __typeof__(&cuDevicePrimaryCtxRelease_v2) primary_context_release;
    __typeof__(&cuCtxSetCurrent) context_set_current;
    __typeof__(&cuCtxSynchronize) context_synchronize;
    __typeof__(&cuModuleLoadDataEx) module_load_data_ex;
    __typeof__(&cuModuleUnload) module_unload;
    __typeof__(&cuModuleGetFunction) module_get_function;
    __typeof__(&cuFuncGetAttribute) function_get_attribute;
    __typeof__(&cuFuncSetAttribute) function_set_attribute;
    __typeof__(&cuMemAlloc_v2) memory_alloc;
    __typeof__(&cuMemFree_v2) memory_free;
    __typeof__(&cuMemcpyHtoD_v2) memory_copy_to_device;
    __typeof__(&cuMemcpyDtoH_v2) memory_copy_to_host;
    __typeof__(&cuLaunchKernel) launch_kernel;
    __typeof__(&cuLaunchKernelEx) launch_kernel_ex; /* NULL before CUDA 12.0 */
    __typeof__(&cuTensorMapEncodeTiled) tensor_map_encode_tiled; /* NULL before CUDA 12.0 */
} cuda_driver;

/* Opens the driver library named by $KEMU_CUDA_LIBRARY, or libcuda.so.1,
 * and resolves the entry points into *driver (which the caller owns and
 * passes to cuda_driver_close). Returns 0, or -1 with one line in msg
 * saying which: the library cannot be loaded, or it lacks an entry point
 * (a driver older than CUDA 11). On failure nothing stays loaded. */
int cuda_driver_open(cuda_driver *driver, char *msg, size_t len);

/* Unloads the library (a NULL driver or one never opened is fine). */
void cuda_driver_close(cuda_driver *driver);

/* Writes "NAME (description)" for a driver result into buf and returns
 * buf: the driver's own cuGetErrorName/cuGetErrorString when it knows the
 * code, else kemu's table of the codes in driver_abi.h, else "CUresult N".
 * driver may be NULL (the table only). */
const char *cuda_driver_error_text(const cuda_driver *driver, CUresult result, char *buf, size_t len);

/* The name alone ("CUDA_ERROR_ILLEGAL_ADDRESS"), from kemu's table; NULL
 * for a code the table lacks. */
const char *cuda_driver_error_name(CUresult result);

#endif
