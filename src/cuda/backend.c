/* The thin real-GPU path: one device's primary context, a JIT-loaded PTX
 * module, device buffers and a launch with grid, block, cluster and
 * dynamic shared memory, all through the CUDA driver API that driver.c
 * loads at run time. It mirrors what the emulator does for `kemu run` and
 * nothing more: it does not parse PTX, build arguments or compare results
 * (compare.c does that). */
#include "config.h"
#include "cuda/backend.h"
#include "cuda/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Above this much shared memory per block (static + dynamic) a kernel must
 * raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES before launching. */
#define CUDA_DEFAULT_SHARED_LIMIT (48u * 1024u)
/* Clusters above this many blocks are "non-portable" and need the
 * kernel's permission (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED). */
#define CUDA_PORTABLE_CLUSTER_SIZE 8u
#define CUDA_JIT_LOG_SIZE (64u * 1024u)

struct cuda_backend {
    cuda_driver driver;
    CUdevice device;
    int ordinal;
    int sm;
    int driver_version;
    int context_retained;
    int faulted; /* a kernel fault left the context unusable */
    char device_name[256];
    CUmodule module;
    CUfunction function;
    char kernel_name[256];
    char *jit_log;
    CUdeviceptr *buffers;
    size_t nbuffers, capbuffers;
};

static void driver_error(const cuda_backend *b, const char *what, CUresult r, char *msg, size_t len)
{
    char text[256];
    cuda_driver_error_text(&b->driver, r, text, sizeof text);
    snprintf(msg, len, "%s failed: %s", what, text);
}

cuda_status cuda_backend_open(int ordinal, cuda_backend **out, char *msg, size_t len)
{
    *out = NULL;
    cuda_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(msg, len, "out of memory");
        return CUDA_STATUS_FAILED;
    }
    b->ordinal = ordinal;
    if (cuda_driver_open(&b->driver, msg, len)) {
        free(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    char text[256];
    CUresult r = b->driver.init(0);
    if (r != CUDA_SUCCESS) {
        snprintf(msg, len, "the CUDA driver (%s) cannot initialize: %s", b->driver.library_name,
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    if (b->driver.driver_get_version(&b->driver_version) != CUDA_SUCCESS)
        b->driver_version = 0;
    int count = 0;
    r = b->driver.device_get_count(&count);
    if (r != CUDA_SUCCESS || count == 0) {
        snprintf(msg, len, "no CUDA device: %s",
                 r != CUDA_SUCCESS ? cuda_driver_error_text(&b->driver, r, text, sizeof text)
                                   : "the driver reports 0 devices");
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    if (ordinal < 0 || ordinal >= count) {
        snprintf(msg, len, "no CUDA device %d: the driver reports %d device%s (0..%d)", ordinal, count,
                 count == 1 ? "" : "s", count - 1);
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    r = b->driver.device_get(&b->device, ordinal);
    if (r != CUDA_SUCCESS) {
        snprintf(msg, len, "CUDA device %d: %s", ordinal, cuda_driver_error_text(&b->driver, r, text, sizeof text));
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    if (b->driver.device_get_name(b->device_name, (int)sizeof b->device_name - 1, b->device) != CUDA_SUCCESS)
        snprintf(b->device_name, sizeof b->device_name, "CUDA device %d", ordinal);
    b->device_name[sizeof b->device_name - 1] = 0;
    int major = 0, minor = 0;
    b->driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, b->device);
    b->driver.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, b->device);
    b->sm = major * 10 + minor;
    CUcontext context = NULL;
    r = b->driver.primary_context_retain(&context, b->device);
    if (r != CUDA_SUCCESS) {
        snprintf(msg, len, "CUDA device %d (%s) is unusable: %s", ordinal, b->device_name,
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    b->context_retained = 1;
    r = b->driver.context_set_current(context);
    if (r != CUDA_SUCCESS) {
        snprintf(msg, len, "CUDA device %d (%s) is unusable: %s", ordinal, b->device_name,
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        cuda_backend_close(b);
        return CUDA_STATUS_UNAVAILABLE;
    }
    *out = b;
    return CUDA_STATUS_OK;
}

void cuda_backend_close(cuda_backend *b)
{
    if (!b)
        return;
    if (b->driver.library) {
        /* after a kernel fault every call fails with the sticky error; the
         * context's memory goes with the process */
        if (!b->faulted) {
            for (size_t i = 0; i < b->nbuffers; i++)
                b->driver.memory_free(b->buffers[i]);
            if (b->module)
                b->driver.module_unload(b->module);
        }
        if (b->context_retained)
            b->driver.primary_context_release(b->device);
    }
    cuda_driver_close(&b->driver);
    free(b->buffers);
    free(b->jit_log);
    free(b);
}

const char *cuda_backend_device_name(const cuda_backend *b) { return b->device_name; }
int cuda_backend_device_sm(const cuda_backend *b) { return b->sm; }
int cuda_backend_device_ordinal(const cuda_backend *b) { return b->ordinal; }
int cuda_backend_driver_version(const cuda_backend *b) { return b->driver_version; }
const char *cuda_backend_jit_log(const cuda_backend *b) { return b->jit_log ? b->jit_log : ""; }

cuda_status cuda_backend_load_ptx(cuda_backend *b, const char *text, size_t len, const char *kernel, char *msg,
                                  size_t msg_len)
{
    free(b->jit_log);
    b->jit_log = NULL;
    if (b->module) {
        b->driver.module_unload(b->module);
        b->module = NULL;
        b->function = NULL;
    }
    /* the driver wants NUL-terminated PTX text */
    char *image = malloc(len + 1);
    char *log = calloc(1, CUDA_JIT_LOG_SIZE);
    if (!image || !log) {
        free(image);
        free(log);
        snprintf(msg, msg_len, "out of memory");
        return CUDA_STATUS_FAILED;
    }
    memcpy(image, text, len);
    image[len] = 0;
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)CUDA_JIT_LOG_SIZE};
    CUresult r = b->driver.module_load_data_ex(&b->module, image, 2, options, values);
    free(image);
    /* the size slot now holds the bytes the JIT wrote (an unsigned int) */
    size_t used = (size_t)(unsigned)(uintptr_t)values[1];
    if (used >= CUDA_JIT_LOG_SIZE)
        used = CUDA_JIT_LOG_SIZE - 1;
    log[used] = 0;
    log[CUDA_JIT_LOG_SIZE - 1] = 0;
    /* drop trailing newlines so that callers print the log line by line */
    size_t n = strlen(log);
    while (n && (log[n - 1] == '\n' || log[n - 1] == '\r'))
        log[--n] = 0;
    b->jit_log = log;
    if (r != CUDA_SUCCESS) {
        b->module = NULL;
        char name[256];
        cuda_driver_error_text(&b->driver, r, name, sizeof name);
        if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
            snprintf(msg, msg_len, "the CUDA driver (version %d.%d) is too old for this PTX: %s",
                     b->driver_version / 1000, b->driver_version % 1000 / 10, name);
            return CUDA_STATUS_UNAVAILABLE;
        }
        if (r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND || r == CUDA_ERROR_JIT_COMPILATION_DISABLED) {
            snprintf(msg, msg_len, "the CUDA driver cannot compile PTX: %s", name);
            return CUDA_STATUS_UNAVAILABLE;
        }
        if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) {
            snprintf(msg, msg_len, "CUDA device %d (%s, sm_%d) cannot run this PTX: %s", b->ordinal, b->device_name,
                     b->sm, name);
            return CUDA_STATUS_UNAVAILABLE;
        }
        snprintf(msg, msg_len, "cuModuleLoadDataEx failed: %s", name);
        return CUDA_STATUS_FAILED;
    }
    r = b->driver.module_get_function(&b->function, b->module, kernel);
    if (r != CUDA_SUCCESS) {
        b->function = NULL;
        char what[400];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", kernel);
        driver_error(b, what, r, msg, msg_len);
        return CUDA_STATUS_FAILED;
    }
    snprintf(b->kernel_name, sizeof b->kernel_name, "%s", kernel);
    return CUDA_STATUS_OK;
}

cuda_status cuda_backend_alloc(cuda_backend *b, size_t bytes, uint64_t *address, char *msg, size_t len)
{
    if (b->nbuffers == b->capbuffers) {
        size_t cap = b->capbuffers ? 2 * b->capbuffers : 16;
        CUdeviceptr *grown = realloc(b->buffers, cap * sizeof *grown);
        if (!grown) {
            snprintf(msg, len, "out of memory");
            return CUDA_STATUS_FAILED;
        }
        b->buffers = grown;
        b->capbuffers = cap;
    }
    CUdeviceptr p = 0;
    CUresult r = b->driver.memory_alloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuMemAlloc(%zu bytes)", bytes);
        driver_error(b, what, r, msg, len);
        return CUDA_STATUS_FAILED;
    }
    b->buffers[b->nbuffers++] = p;
    *address = p;
    return CUDA_STATUS_OK;
}

cuda_status cuda_backend_copy_to_device(cuda_backend *b, uint64_t address, const void *source, size_t bytes,
                                        char *msg, size_t len)
{
    if (!bytes)
        return CUDA_STATUS_OK;
    CUresult r = b->driver.memory_copy_to_device(address, source, bytes);
    if (r != CUDA_SUCCESS) {
        driver_error(b, "cuMemcpyHtoD", r, msg, len);
        return CUDA_STATUS_FAILED;
    }
    return CUDA_STATUS_OK;
}

cuda_status cuda_backend_copy_to_host(cuda_backend *b, void *destination, uint64_t address, size_t bytes, char *msg,
                                      size_t len)
{
    if (!bytes)
        return CUDA_STATUS_OK;
    CUresult r = b->driver.memory_copy_to_host(destination, address, bytes);
    if (r != CUDA_SUCCESS) {
        driver_error(b, "cuMemcpyDtoH", r, msg, len);
        return CUDA_STATUS_FAILED;
    }
    return CUDA_STATUS_OK;
}

/* Raises the kernel's dynamic shared memory limit when static + dynamic
 * shared memory exceeds the default 48 KiB. */
static cuda_status raise_shared_limit(cuda_backend *b, size_t dynamic, char *msg, size_t len)
{
    if (!dynamic)
        return CUDA_STATUS_OK;
    int static_bytes = 0;
    if (b->driver.function_get_attribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, b->function) !=
        CUDA_SUCCESS)
        static_bytes = 0;
    if ((size_t)static_bytes + dynamic <= CUDA_DEFAULT_SHARED_LIMIT)
        return CUDA_STATUS_OK;
    CUresult r = dynamic > 0x7fffffff
                     ? CUDA_ERROR_INVALID_VALUE
                     : b->driver.function_set_attribute(b->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                        (int)dynamic);
    if (r != CUDA_SUCCESS) {
        int optin = 0;
        b->driver.device_get_attribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, b->device);
        char text[256];
        snprintf(msg, len,
                 "cannot raise the dynamic shared memory of %s to %zu bytes (static %d, device %d allows %d per "
                 "block): %s",
                 b->kernel_name, dynamic, static_bytes, b->ordinal, optin,
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        return CUDA_STATUS_FAILED;
    }
    return CUDA_STATUS_OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

cuda_status cuda_backend_launch(cuda_backend *b, const kemu_launch_config *cfg, void **args, double *seconds,
                                char *msg, size_t len)
{
    *seconds = 0;
    if (!b->function) {
        snprintf(msg, len, "no kernel loaded");
        return CUDA_STATUS_FAILED;
    }
    unsigned grid[3], block[3], cluster[3];
    int has_cluster = 0;
    for (int i = 0; i < 3; i++) {
        grid[i] = cfg->grid[i] ? cfg->grid[i] : 1;
        block[i] = cfg->block[i] ? cfg->block[i] : 1;
        if (cfg->cluster[i])
            has_cluster = 1;
    }
    for (int i = 0; i < 3; i++)
        cluster[i] = cfg->cluster[i] ? cfg->cluster[i] : 1;
    if (cfg->shared_bytes > 0xffffffffu) {
        snprintf(msg, len, "%zu bytes of dynamic shared memory do not fit the driver's 32-bit size",
                 cfg->shared_bytes);
        return CUDA_STATUS_FAILED;
    }
    cuda_status st = raise_shared_limit(b, cfg->shared_bytes, msg, len);
    if (st != CUDA_STATUS_OK)
        return st;
    CUresult r;
    const char *call;
    double start;
    if (has_cluster) {
        if (!b->driver.launch_kernel_ex) {
            snprintf(msg, len, "the CUDA driver (%s) is too old for cluster launches: it has no cuLaunchKernelEx",
                     b->driver.library_name);
            return CUDA_STATUS_UNAVAILABLE;
        }
        if ((unsigned long long)cluster[0] * cluster[1] * cluster[2] > CUDA_PORTABLE_CLUSTER_SIZE)
            b->driver.function_set_attribute(b->function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    }
    if (cfg->cooperative && !b->driver.launch_kernel_ex) {
        snprintf(msg, len, "the CUDA driver (%s) is too old for cooperative launches here: it has no cuLaunchKernelEx",
                 b->driver.library_name);
        return CUDA_STATUS_UNAVAILABLE;
    }
    if (b->driver.launch_kernel_ex) {
        CUlaunchAttribute attributes[2];
        unsigned nattributes = 0;
        memset(attributes, 0, sizeof attributes);
        if (has_cluster) {
            CUlaunchAttribute *a = &attributes[nattributes++];
            a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            a->value.clusterDim.x = cluster[0];
            a->value.clusterDim.y = cluster[1];
            a->value.clusterDim.z = cluster[2];
        }
        if (cfg->cooperative) {
            CUlaunchAttribute *a = &attributes[nattributes++];
            a->id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            a->value.cooperative = 1;
        }
        CUlaunchConfig config;
        memset(&config, 0, sizeof config);
        config.gridDimX = grid[0];
        config.gridDimY = grid[1];
        config.gridDimZ = grid[2];
        config.blockDimX = block[0];
        config.blockDimY = block[1];
        config.blockDimZ = block[2];
        config.sharedMemBytes = (unsigned)cfg->shared_bytes;
        config.hStream = NULL;
        config.attrs = nattributes ? attributes : NULL;
        config.numAttrs = nattributes;
        call = "cuLaunchKernelEx";
        start = now_seconds();
        r = b->driver.launch_kernel_ex(&config, b->function, args, NULL);
    } else {
        call = "cuLaunchKernel";
        start = now_seconds();
        r = b->driver.launch_kernel(b->function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                    (unsigned)cfg->shared_bytes, NULL, args, NULL);
    }
    char text[256];
    if (r != CUDA_SUCCESS) {
        snprintf(msg, len, "%s of %s with grid (%u,%u,%u) block (%u,%u,%u) failed: %s", call, b->kernel_name, grid[0],
                 grid[1], grid[2], block[0], block[1], block[2],
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        return CUDA_STATUS_FAILED;
    }
    r = b->driver.context_synchronize();
    *seconds = now_seconds() - start;
    if (r != CUDA_SUCCESS) {
        b->faulted = 1;
        snprintf(msg, len, "kernel %s faulted on CUDA device %d: %s", b->kernel_name, b->ordinal,
                 cuda_driver_error_text(&b->driver, r, text, sizeof text));
        return CUDA_STATUS_KERNEL_FAULT;
    }
    return CUDA_STATUS_OK;
}

cuda_status cuda_backend_encode_tensor_map(cuda_backend *b, void *map, int data_type, unsigned rank, uint64_t address,
                                           const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                           const uint32_t *element_strides, int swizzle, int oob_fill, char *msg,
                                           size_t len)
{
    if (!b->driver.tensor_map_encode_tiled) {
        snprintf(msg, len, "the CUDA driver (%s) has no cuTensorMapEncodeTiled (CUDA 12.0 or later needed)",
                 b->driver.library_name);
        return CUDA_STATUS_UNAVAILABLE;
    }
    unsigned long long d[5], s[4];
    for (unsigned i = 0; i < rank && i < 5; i++) {
        d[i] = dims[i];
        if (i + 1 < rank)
            s[i] = strides[i];
    }
    CUresult r = b->driver.tensor_map_encode_tiled((CUtensorMap *)map, data_type, rank, (void *)(uintptr_t)address, d, s,
                                                   box, element_strides, 0, swizzle, 0, oob_fill);
    if (r != CUDA_SUCCESS) {
        driver_error(b, "cuTensorMapEncodeTiled", r, msg, len);
        return CUDA_STATUS_FAILED;
    }
    return CUDA_STATUS_OK;
}
