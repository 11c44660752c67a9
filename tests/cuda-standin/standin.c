/* A test-only stand-in for the CUDA driver library (built as libcuda.so.1)
 * that implements, on top of the emulator, the handful of driver calls
 * kemu's thin GPU path uses (src/cuda/driver_abi.h lists them). With it on
 * LD_LIBRARY_PATH, `kemu run --backend cuda|both` runs its loading, JIT,
 * buffer, launch, copy-back and comparison code end to end on machines
 * without a GPU. It is not a CUDA implementation: one device, one context,
 * no streams.
 *
 * Switches (environment variables), read when the call happens:
 *   KEMU_STANDIN_PERTURB=BYTE[:MASK]  after each launch, the first
 *       device-to-host copy XORs MASK (default 1) into byte BYTE of the
 *       copied data: one output element comes back different;
 *   KEMU_STANDIN_JIT_FAIL=1   cuModuleLoadDataEx fails with
 *       CUDA_ERROR_INVALID_PTX and a ptxas-like error log;
 *   KEMU_STANDIN_PTX_TOO_NEW=1  cuModuleLoadDataEx fails with
 *       CUDA_ERROR_UNSUPPORTED_PTX_VERSION (a driver too old for the PTX);
 *   KEMU_STANDIN_NO_DEVICE=1  cuInit fails with CUDA_ERROR_NO_DEVICE;
 *   KEMU_STANDIN_SM=NN        the compute capability reported (default 90).
 * A PTX error of the emulator's own loader becomes CUDA_ERROR_INVALID_PTX
 * with the emulator's message as the JIT log, and a kernel fault becomes a
 * sticky error that cuCtxSynchronize (and every later call) returns. */
#include "config.h"
#include "cuda/driver_abi.h"
#include "exec/exec.h"
#include "kemu/kemu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STANDIN_DEFAULT_SHARED_LIMIT (48u * 1024u)
#define STANDIN_OPTIN_SHARED_LIMIT (227u * 1024u)

struct CUctx_st {
    int unused;
};

struct CUfunc_st {
    kemu_kernel *kernel;
    int max_dynamic_shared;
    struct CUfunc_st *next;
};

struct CUmod_st {
    kemu_module *module;
    struct CUfunc_st *functions;
    struct CUmod_st *next; /* the context's modules */
};

static struct {
    int initialized;
    kemu_device *device;
    struct CUctx_st context;
    int context_refs;
    CUresult sticky;       /* a kernel fault poisons the context */
    int perturb_pending;   /* a launch happened; the next copy back is perturbed */
    struct CUmod_st *modules;
} standin;

/* Frees a module record and its function records (not the emulator module). */
static void free_module_record(struct CUmod_st *m)
{
    while (m->functions) {
        struct CUfunc_st *next = m->functions->next;
        free(m->functions);
        m->functions = next;
    }
    free(m);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int standin_sm(void)
{
    const char *v = env("KEMU_STANDIN_SM");
    int sm = v ? atoi(v) : 90;
    return sm > 0 ? sm : 90;
}

CUresult cuInit(unsigned int flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (env("KEMU_STANDIN_NO_DEVICE"))
        return CUDA_ERROR_NO_DEVICE;
    standin.initialized = 1;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 13000;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name)
{
    switch (error) {
#define STANDIN_ERROR_NAME(n, value, text) case value: *name = #n; return CUDA_SUCCESS;
        CUDA_DRIVER_ERRORS(STANDIN_ERROR_NAME)
#undef STANDIN_ERROR_NAME
    default:
        *name = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuGetErrorString(CUresult error, const char **text)
{
    switch (error) {
#define STANDIN_ERROR_TEXT(n, value, t) case value: *text = t; return CUDA_SUCCESS;
        CUDA_DRIVER_ERRORS(STANDIN_ERROR_TEXT)
#undef STANDIN_ERROR_TEXT
    default:
        *text = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* What every call that needs the context returns first: not initialized,
 * no context, or the sticky error of a kernel fault. */
static CUresult check_ready(void)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!standin.device)
        return CUDA_ERROR_INVALID_CONTEXT;
    return standin.sticky;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice device)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "kemu stand-in sm_%d", standin_sm());
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    int sm = standin_sm();
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = sm / 10; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = sm % 10; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = STANDIN_DEFAULT_SHARED_LIMIT; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = STANDIN_OPTIN_SHARED_LIMIT; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: *value = sm >= 90; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!standin.device) {
        /* the context is an emulated device; fresh memory is garbage on a GPU too */
        kemu_device_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.uninit = KEMU_UNINIT_PATTERN;
        if (kemu_device_create(&cfg, &standin.device, NULL) != KEMU_OK)
            return CUDA_ERROR_OUT_OF_MEMORY;
        standin.sticky = CUDA_SUCCESS;
    }
    standin.context_refs++;
    *context = &standin.context;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (device != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (standin.context_refs <= 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (--standin.context_refs == 0) {
        /* the last release destroys the context with its memory and modules
         * (also those a kernel fault kept the caller from unloading) */
        while (standin.modules) {
            struct CUmod_st *next = standin.modules->next;
            free_module_record(standin.modules);
            standin.modules = next;
        }
        kemu_device_destroy(standin.device);
        standin.device = NULL;
        standin.sticky = CUDA_SUCCESS;
        standin.perturb_pending = 0;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context)
{
    if (!standin.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (context && !standin.device)
        return CUDA_ERROR_INVALID_CONTEXT;
    return context == &standin.context || context == NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxSynchronize(void)
{
    return check_ready();
}

/* Copies text into the JIT error log the caller passed (if any) and stores
 * the bytes written in the size option's slot, as the driver does. */
static void write_jit_log(unsigned num_options, CUjit_option *options, void **values, const char *text)
{
    char *buffer = NULL;
    int size_index = -1;
    for (unsigned i = 0; i < num_options; i++) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
            buffer = values[i];
        else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            size_index = (int)i;
    }
    if (!buffer || size_index < 0)
        return;
    size_t cap = (size_t)(unsigned)(uintptr_t)values[size_index];
    if (cap == 0)
        return;
    snprintf(buffer, cap, "%s", text);
    size_t used = strlen(buffer) + 1;
    values[size_index] = (void *)(uintptr_t)used;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int num_options, CUjit_option *options,
                            void **option_values)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!module || !image || (num_options && (!options || !option_values)))
        return CUDA_ERROR_INVALID_VALUE;
    if (env("KEMU_STANDIN_PTX_TOO_NEW"))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    if (env("KEMU_STANDIN_JIT_FAIL")) {
        write_jit_log(num_options, options, option_values,
                      "ptxas application ptx input, line 1; error   : stand-in JIT failure (KEMU_STANDIN_JIT_FAIL)\n"
                      "ptxas fatal   : Ptx assembly aborted due to errors\n");
        return CUDA_ERROR_INVALID_PTX;
    }
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    kemu_error err;
    memset(&err, 0, sizeof err);
    const char *text = image;
    if (kemu_module_load_ptx(standin.device, text, strlen(text), "<jit>", &m->module, &err) != KEMU_OK) {
        write_jit_log(num_options, options, option_values, err.message);
        free(m);
        return CUDA_ERROR_INVALID_PTX;
    }
    write_jit_log(num_options, options, option_values, "");
    m->next = standin.modules;
    standin.modules = m;
    *module = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    struct CUmod_st **link = &standin.modules;
    while (*link && *link != module)
        link = &(*link)->next;
    if (!module || !*link)
        return CUDA_ERROR_INVALID_HANDLE;
    *link = module->next;
    kemu_module_unload(module->module);
    free_module_record(module);
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!function || !module || !name)
        return CUDA_ERROR_INVALID_VALUE;
    kemu_kernel *k = NULL;
    if (kemu_module_get_kernel(module->module, name, &k, NULL) != KEMU_OK)
        return CUDA_ERROR_NOT_FOUND;
    for (struct CUfunc_st *f = module->functions; f; f = f->next)
        if (f->kernel == k) {
            *function = f;
            return CUDA_SUCCESS;
        }
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->kernel = k;
    f->next = module->functions;
    module->functions = f;
    *function = f;
    return CUDA_SUCCESS;
}

static unsigned static_shared_bytes(const struct CUfunc_st *f)
{
    return (unsigned)f->kernel->fn->shared_static_size;
}

/* The dynamic shared memory a launch may use without raising the limit. */
static unsigned default_dynamic_limit(const struct CUfunc_st *f)
{
    unsigned s = static_shared_bytes(f);
    return s >= STANDIN_DEFAULT_SHARED_LIMIT ? 0 : STANDIN_DEFAULT_SHARED_LIMIT - s;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!value || !function)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)static_shared_bytes(function); return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = function->max_dynamic_shared ? function->max_dynamic_shared : (int)default_dynamic_limit(function);
        return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!function)
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || (unsigned)value + static_shared_bytes(function) > STANDIN_OPTIN_SHARED_LIMIT)
            return CUDA_ERROR_INVALID_VALUE;
        function->max_dynamic_shared = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!pointer || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t address;
    if (kemu_malloc(standin.device, bytes, KEMU_UNINIT_PATTERN, &address, NULL) != KEMU_OK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = address;
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr pointer)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (pointer == 0)
        return CUDA_SUCCESS;
    return kemu_free(standin.device, pointer, NULL) == KEMU_OK ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void *source, size_t bytes)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    return kemu_memcpy_htod(standin.device, destination, source, bytes, NULL) == KEMU_OK ? CUDA_SUCCESS
                                                                                         : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemcpyDtoH_v2(void *destination, CUdeviceptr source, size_t bytes)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (kemu_memcpy_dtoh(standin.device, destination, source, bytes, NULL) != KEMU_OK)
        return CUDA_ERROR_INVALID_VALUE;
    const char *perturb = env("KEMU_STANDIN_PERTURB");
    if (perturb && standin.perturb_pending) {
        standin.perturb_pending = 0;
        char *end;
        unsigned long long byte = strtoull(perturb, &end, 0);
        unsigned long mask = 1;
        if (*end == ':')
            mask = strtoul(end + 1, NULL, 0);
        if (byte < bytes)
            ((unsigned char *)destination)[byte] ^= (unsigned char)(mask ? mask : 1);
    }
    return CUDA_SUCCESS;
}

/* Runs kernel f on the emulator; a fault becomes the sticky error. */
static CUresult standin_launch(CUfunction f, const unsigned grid[3], const unsigned block[3], const unsigned cluster[3], int cooperative,
                               unsigned shared_bytes, void **params, void **extra)
{
    CUresult r = check_ready();
    if (r != CUDA_SUCCESS)
        return r;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (extra)
        return CUDA_ERROR_NOT_SUPPORTED; /* kemu passes parameters as kernelParams only */
    unsigned limit = f->max_dynamic_shared ? (unsigned)f->max_dynamic_shared : default_dynamic_limit(f);
    if (shared_bytes > limit)
        return CUDA_ERROR_INVALID_VALUE;
    kemu_launch_config lc;
    memset(&lc, 0, sizeof lc);
    memcpy(lc.grid, grid, sizeof lc.grid);
    memcpy(lc.block, block, sizeof lc.block);
    memcpy(lc.cluster, cluster, sizeof lc.cluster);
    lc.shared_bytes = shared_bytes;
    lc.cooperative = cooperative;
    kemu_report report;
    memset(&report, 0, sizeof report);
    kemu_error err;
    memset(&err, 0, sizeof err);
    kemu_status st = kemu_launch(f->kernel, &lc, params, &report, &err);
    if (report.printf_length) {
        fwrite(report.printf_output, 1, report.printf_length, stdout);
        fflush(stdout);
    }
    kemu_report_free(&report);
    if (st == KEMU_ERR_KERNEL_FAULT) {
        /* the driver reports faults at the next synchronization */
        if (strstr(err.message, "misaligned address:"))
            standin.sticky = CUDA_ERROR_MISALIGNED_ADDRESS;
        else if (strstr(err.message, "device-side assertion failed"))
            standin.sticky = CUDA_ERROR_ASSERT;
        else if (strstr(err.message, "trap:"))
            standin.sticky = CUDA_ERROR_LAUNCH_FAILED;
        else
            standin.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        return CUDA_SUCCESS;
    }
    if (st == KEMU_ERR_LAUNCH_CONFIG || st == KEMU_ERR_INVALID_ARGUMENT)
        return CUDA_ERROR_INVALID_VALUE;
    if (st != KEMU_OK)
        return CUDA_ERROR_LAUNCH_FAILED;
    standin.perturb_pending = 1;
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,
                        CUstream stream, void **params, void **extra)
{
    if (stream)
        return CUDA_ERROR_INVALID_HANDLE;
    unsigned grid[3] = {grid_x, grid_y, grid_z}, block[3] = {block_x, block_y, block_z}, cluster[3] = {0, 0, 0};
    return standin_launch(function, grid, block, cluster, 0, shared_bytes, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function, void **params, void **extra)
{
    if (!config)
        return CUDA_ERROR_INVALID_VALUE;
    if (config->hStream)
        return CUDA_ERROR_INVALID_HANDLE;
    if (config->numAttrs && !config->attrs)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    unsigned cluster[3] = {0, 0, 0};
    int cooperative = 0;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const CUlaunchAttribute *a = &config->attrs[i];
        if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
            cooperative = a->value.cooperative != 0;
            continue;
        }
        if (a->id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            return CUDA_ERROR_NOT_SUPPORTED;
        if (standin_sm() < 90)
            return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        cluster[0] = a->value.clusterDim.x;
        cluster[1] = a->value.clusterDim.y;
        cluster[2] = a->value.clusterDim.z;
    }
    return standin_launch(function, grid, block, cluster, cooperative, config->sharedMemBytes, params, extra);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *map, int data_type, unsigned int rank, void *global_address,
                                const unsigned long long *global_dim, const unsigned long long *global_strides,
                                const unsigned int *box_dim, const unsigned int *element_strides, int interleave,
                                int swizzle, int l2_promotion, int oob_fill)
{
    kemu_error err;
    uint64_t dims[5], strides[4];
    for (unsigned i = 0; i < rank && i < 5; i++) {
        dims[i] = global_dim[i];
        if (i + 1 < rank)
            strides[i] = global_strides[i];
    }
    kemu_status st = kemu_tensor_map_encode_tiled(map, data_type, rank, (uint64_t)(uintptr_t)global_address, dims,
                                                  strides, box_dim, element_strides, interleave, swizzle,
                                                  l2_promotion, oob_fill, &err);
    return st == KEMU_OK ? CUDA_SUCCESS : st == KEMU_ERR_UNSUPPORTED ? CUDA_ERROR_NOT_SUPPORTED
                                                                    : CUDA_ERROR_INVALID_VALUE;
}
