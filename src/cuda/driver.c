/* Loads the CUDA driver library at run time and resolves the entry points
 * of the thin GPU path by their exported (versioned) symbol names, so that
 * kemu builds and runs on machines without CUDA. Also names driver errors.
 * This file must not decide anything about launches or buffers: that is
 * backend.c. */
#include "config.h"
#include "cuda/driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *symbol;
    size_t offset; /* of the function pointer in cuda_driver */
    int optional;
} cuda_entry_point;

#define ENTRY(field, symbol) {symbol, offsetof(cuda_driver, field), 0}
#define OPTIONAL_ENTRY(field, symbol) {symbol, offsetof(cuda_driver, field), 1}

static const cuda_entry_point entry_points[] = {
    ENTRY(init, "cuInit"),
    ENTRY(driver_get_version, "cuDriverGetVersion"),
    ENTRY(get_error_name, "cuGetErrorName"),
    ENTRY(get_error_string, "cuGetErrorString"),
    ENTRY(device_get_count, "cuDeviceGetCount"),
    ENTRY(device_get, "cuDeviceGet"),
    ENTRY(device_get_name, "cuDeviceGetName"),
    ENTRY(device_get_attribute, "cuDeviceGetAttribute"),
    ENTRY(primary_context_retain, "cuDevicePrimaryCtxRetain"),
    ENTRY(primary_context_release, "cuDevicePrimaryCtxRelease_v2"),
    ENTRY(context_set_current, "cuCtxSetCurrent"),
    ENTRY(context_synchronize, "cuCtxSynchronize"),
    ENTRY(module_load_data_ex, "cuModuleLoadDataEx"),
    ENTRY(module_unload, "cuModuleUnload"),
    ENTRY(module_get_function, "cuModuleGetFunction"),
    ENTRY(function_get_attribute, "cuFuncGetAttribute"),
    ENTRY(function_set_attribute, "cuFuncSetAttribute"),
    ENTRY(memory_alloc, "cuMemAlloc_v2"),
    ENTRY(memory_free, "cuMemFree_v2"),
    ENTRY(memory_copy_to_device, "cuMemcpyHtoD_v2"),
    ENTRY(memory_copy_to_host, "cuMemcpyDtoH_v2"),
    ENTRY(launch_kernel, "cuLaunchKernel"),
    OPTIONAL_ENTRY(launch_kernel_ex, "cuLaunchKernelEx"),
    OPTIONAL_ENTRY(tensor_map_encode_tiled, "cuTensorMapEncodeTiled"),
};

int cuda_driver_open(cuda_driver *driver, char *msg, size_t len)
{
    memset(driver, 0, sizeof *driver);
    const char *name = getenv("KEMU_CUDA_LIBRARY");
    if (!name || !*name)
        name = CUDA_DRIVER_LIBRARY;
    snprintf(driver->library_name, sizeof driver->library_name, "%s", name);
    dlerror();
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        snprintf(msg, len, "no CUDA driver library: cannot load %s (%s)", name, why ? why : "unknown reason");
        return -1;
    }
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        const cuda_entry_point *e = &entry_points[i];
        void *address = dlsym(library, e->symbol);
        if (!address && !e->optional) {
            snprintf(msg, len, "the CUDA driver library %s is too old: it has no %s", name, e->symbol);
            dlclose(library);
            memset(driver, 0, sizeof *driver);
            return -1;
        }
        /* POSIX: a data pointer from dlsym converts to a function pointer */
        memcpy((char *)driver + e->offset, &address, sizeof address);
    }
    driver->library = library;
    return 0;
}

void cuda_driver_close(cuda_driver *driver)
{
    if (!driver || !driver->library)
        return;
    dlclose(driver->library);
    driver->library = NULL;
}

const char *cuda_driver_error_name(CUresult result)
{
    switch (result) {
#define CUDA_DRIVER_ERROR_NAME(name, value, text) case value: return #name;
        CUDA_DRIVER_ERRORS(CUDA_DRIVER_ERROR_NAME)
#undef CUDA_DRIVER_ERROR_NAME
    default:
        return NULL;
    }
}

static const char *table_description(CUresult result)
{
    switch (result) {
#define CUDA_DRIVER_ERROR_TEXT(name, value, text) case value: return text;
        CUDA_DRIVER_ERRORS(CUDA_DRIVER_ERROR_TEXT)
#undef CUDA_DRIVER_ERROR_TEXT
    default:
        return NULL;
    }
}

const char *cuda_driver_error_text(const cuda_driver *driver, CUresult result, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (driver && driver->library) {
        if (driver->get_error_name(result, &name) != CUDA_SUCCESS)
            name = NULL;
        if (driver->get_error_string(result, &text) != CUDA_SUCCESS)
            text = NULL;
    }
    if (!name)
        name = cuda_driver_error_name(result);
    if (!text)
        text = table_description(result);
    if (name && text)
        snprintf(buf, len, "%s (%s)", name, text);
    else if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "CUresult %d", (int)result);
    return buf;
}
