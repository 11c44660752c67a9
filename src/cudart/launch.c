/* Kernel launches of kemu's libcudart replacement: the <<<>>> call
 * configuration stack, the CUDA 13 __cudaGetKernel / __cudaLaunchKernel
 * path, cudaLaunchKernel, cooperative and extended (cluster) launches.
 * A launch is checked as CUDA checks it (configuration errors are returned
 * at once and are not sticky), runs to completion on the emulator, keeps
 * its printf output for the next synchronization point, and leaves a kernel
 * fault pending with the CUDA error its message maps to. On a capturing
 * stream, a launch becomes a kernel node of the capture graph instead. */
#include "config.h"
#include "cudart/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- launches ------------------------------------------------------------------ */

typedef struct call_configuration {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
} call_configuration;

#define CALL_CONFIGURATION_DEPTH 16
static _Thread_local call_configuration call_stack[CALL_CONFIGURATION_DEPTH];
static _Thread_local int call_depth;

CUDART_API unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, cudaStream_t stream)
{
    if (call_depth >= CALL_CONFIGURATION_DEPTH)
        return 1;
    call_stack[call_depth++] = (call_configuration){grid, block, shared, stream};
    return 0;
}

CUDART_API cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    if (call_depth <= 0)
        return cudaErrorMissingConfiguration;
    call_configuration *c = &call_stack[--call_depth];
    *grid = c->grid;
    *block = c->block;
    *shared = c->shared;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}

/* The CUDA error of a kernel fault, from kemu's fault message. */
static cudaError_t fault_error(const char *message)
{
    const char *what = strstr(message, "faulted: ");
    what = what ? what + 9 : message;
    if (!strncmp(what, "misaligned address", 18))
        return cudaErrorMisalignedAddress;
    if (!strncmp(what, "device-side assertion", 21))
        return cudaErrorAssert;
    if (strstr(what, "timed out"))
        return cudaErrorLaunchTimeout;
    if (!strncmp(what, "illegal address", 15) || !strncmp(what, "out-of-bounds", 13) ||
        !strncmp(what, "store to constant", 17) || !strncmp(what, "store to kernel parameter", 25) ||
        !strncmp(what, "unsupported address space", 25) || strstr(what, "names block rank") ||
        strstr(what, "invalid address") || strstr(what, "illegal memory"))
        return cudaErrorIllegalAddress;
    if (strstr(what, "illegal instruction"))
        return cudaErrorIllegalInstruction;
    if (!strncmp(what, "device-side cudaDeviceSynchronize", 33) ||
        !strncmp(what, "device-side __cudaDeviceSynchronize", 35))
        return cudaErrorNotSupported;
    return cudaErrorLaunchFailure;
}

static void append_printf(const char *text, size_t len)
{
    cudart_state *s = &cudart_global;
    if (!len)
        return;
    if (s->printf_length + len > s->printf_cap) {
        size_t cap = s->printf_cap ? s->printf_cap : 4096;
        while (cap < s->printf_length + len)
            cap *= 2;
        char *grown = realloc(s->printf_pending, cap);
        if (!grown) { /* keep the order: release what we have first */
            cudart_flush_printf();
            fwrite(text, 1, len, stdout);
            fflush(stdout);
            return;
        }
        s->printf_pending = grown;
        s->printf_cap = cap;
    }
    memcpy(s->printf_pending + s->printf_length, text, len);
    s->printf_length += len;
}

cudaError_t cudart_launch(cudart_kernel_record *kr, dim3 grid, dim3 block, void **args, size_t shared,
                          cudaStream_t stream, const unsigned *cluster, int cooperative)
{
    cudart_lock();
    cudart_state *s = &cudart_global;
    cudaError_t e = cudart_check_sticky();
    if (e)
        goto out;
    if (!kr) {
        e = CUDART_ERROR_NOT_A_KERNEL;
        goto out;
    }
    if (!cudart_stream_valid(stream)) {
        e = cudaErrorInvalidResourceHandle;
        goto out;
    }
    int device = cudart_current();
    struct CUstream_st *sr = cudart_stream_record(stream);
    if (sr && sr->device != device) { /* a stream of another device, as CUDA refuses it */
        e = cudaErrorInvalidResourceHandle;
        goto out;
    }
    kemu_device *kdev;
    e = cudart_device(&kdev); /* waits for another thread's launch on it */
    if (e)
        goto out;
    e = cudart_kernel_resolve(kr);
    if (e)
        goto out;
    cudart_flush_printf(); /* a launch releases the output of earlier ones */
    cudart_arch_info arch;
    cudart_arch_for_sm(s->device_sm, &arch);
    cudart_kernel_info info;
    cudart_kernel_introspect(kr->kernels[device], &info);
    unsigned g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    for (int i = 0; i < 3; i++)
        if (!g[i] || !b[i] || g[i] > (unsigned)arch.max_grid_dim[i] || b[i] > (unsigned)arch.max_block_dim[i])
            e = CUDART_ERROR_LAUNCH_CONFIG;
    if (!e && threads > (uint64_t)arch.max_threads_per_block)
        e = CUDART_ERROR_LAUNCH_CONFIG;
    if (!e && info.max_threads && threads > (uint64_t)info.max_threads)
        e = cudaErrorInvalidValue;
    size_t dynamic_limit = kr->max_dynamic_shared >= 0 ? (size_t)kr->max_dynamic_shared
                           : arch.shared_default > info.static_shared ? arch.shared_default - info.static_shared
                                                                       : 0;
    if (!e && shared > dynamic_limit)
        e = cudaErrorInvalidValue;
    if (e) {
        cudart_trace("launch %s rejected: %s", kr->name, cudart_error_name(e));
        goto out;
    }
    int capturing = cudart_capture_stream(stream, &e);
    if (capturing < 0)
        goto out;
    if (capturing) { /* a kernel node, with its own copy of the arguments */
        cudart_kernel_call call;
        memset(&call, 0, sizeof call);
        call.params.func = (void *)kr->host_function;
        call.params.gridDim = grid;
        call.params.blockDim = block;
        call.params.sharedMemBytes = (unsigned)shared;
        call.params.kernelParams = args;
        if (cluster)
            memcpy(call.cluster, cluster, sizeof call.cluster);
        call.cooperative = cooperative;
        e = cudart_capture_node(stream, cudaGraphNodeTypeKernel, &call, NULL);
        goto out;
    }
    kemu_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    memcpy(cfg.grid, g, sizeof g);
    memcpy(cfg.block, b, sizeof b);
    if (cluster)
        memcpy(cfg.cluster, cluster, sizeof cfg.cluster);
    else if (kr->required_cluster[0])
        for (int i = 0; i < 3; i++)
            cfg.cluster[i] = (unsigned)(kr->required_cluster[i] ? kr->required_cluster[i] : 1);
    cfg.shared_bytes = shared;
    cfg.cooperative = cooperative;
    kemu_report report;
    kemu_error err;
    memset(&report, 0, sizeof report);
    memset(&err, 0, sizeof err);
    cudart_trace("launch %s grid (%u,%u,%u) block (%u,%u,%u) shared %zu", kr->name, g[0], g[1], g[2], b[0], b[1],
                 b[2], shared);
    /* several devices: the lock is released while the kernel runs, so
     * host threads launching on other devices run theirs meanwhile */
    if (cudart_order_on()) { /* racecheck across streams: the launch's accesses */
        size_t n = strlen(kr->name) + 16;
        char *what = malloc(n);
        if (what)
            snprintf(what, n, "kernel '%s'", kr->name);
        cudart_order_begin(stream, device, what ? what : "a kernel", 0);
        free(what);
    }
    int depth = cudart_run_unlocked_begin(device);
    kemu_status st = kemu_launch(kr->kernels[device], &cfg, args, &report, &err);
    cudart_run_unlocked_end(device, depth);
    cudart_order_launch_end(kdev);
    append_printf(report.printf_output, report.printf_length);
    cudart_dev *d = &s->devs[device];
    if (st == KEMU_ERR_KERNEL_FAULT) {
        if (d->pending_error == cudaSuccess) {
            const char *m = report.fault_message[0] ? report.fault_message : err.message;
            d->pending_error = fault_error(m);
            size_t n = strlen(m) + 256;
            d->pending_message = malloc(n);
            if (d->pending_message)
                snprintf(d->pending_message, n, "%s", m);
        }
    } else if (st == KEMU_ERR_LAUNCH_CONFIG) {
        fprintf(stderr, "kemu: launch of %s rejected: %s\n", kr->name, err.message);
        e = CUDART_ERROR_LAUNCH_CONFIG;
    } else if (st) {
        fprintf(stderr, "kemu: launch of %s failed: %s\n", kr->name, err.message);
        e = cudart_error_from_status(st);
    }
    kemu_report_free(&report);
    cudart_check_snapshot();
out:
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_function)
{
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(host_function);
    cudart_unlock();
    if (kernel)
        *kernel = kr;
    return cudart_result(kr ? cudaSuccess : CUDART_ERROR_NOT_A_KERNEL);
}

CUDART_API cudaError_t cudaGetKernel(cudaKernel_t *kernel, const void *entry)
{
    if (!kernel)
        return cudart_result(cudaErrorInvalidValue);
    return __cudaGetKernel(kernel, entry);
}

CUDART_API cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shared,
                                          cudaStream_t stream)
{
    cudart_lock();
    cudart_kernel_record *kr = kernel ? cudart_find_kernel(kernel) : NULL;
    cudart_unlock();
    return cudart_launch(kr, grid, block, args, shared, stream, NULL, 0);
}

CUDART_API cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                               size_t shared, cudaStream_t stream)
{
    return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

CUDART_API cudaError_t cudaLaunchKernel(const void *function, dim3 grid, dim3 block, void **args, size_t shared,
                                        cudaStream_t stream)
{
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(function);
    cudart_unlock();
    return cudart_launch(kr, grid, block, args, shared, stream, NULL, 0);
}

CUDART_API cudaError_t cudaLaunchKernel_ptsz(const void *function, dim3 grid, dim3 block, void **args,
                                             size_t shared, cudaStream_t stream)
{
    return cudaLaunchKernel(function, grid, block, args, shared, stream);
}

CUDART_API cudaError_t cudaLaunchCooperativeKernel(const void *function, dim3 grid, dim3 block, void **args,
                                                   size_t shared, cudaStream_t stream)
{
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(function);
    cudart_unlock();
    return cudart_launch(kr, grid, block, args, shared, stream, NULL, 1);
}

CUDART_API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *function, dim3 grid, dim3 block, void **args,
                                                        size_t shared, cudaStream_t stream)
{
    return cudaLaunchCooperativeKernel(function, grid, block, args, shared, stream);
}

CUDART_API cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *function, void **args)
{
    if (!config)
        return cudart_result(cudaErrorInvalidValue);
    unsigned cluster[3] = {0, 0, 0};
    int have_cluster = 0, cooperative = 0;
    for (unsigned i = 0; i < config->numAttrs && config->attrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            cluster[0] = a->val.clusterDim.x;
            cluster[1] = a->val.clusterDim.y;
            cluster[2] = a->val.clusterDim.z;
            have_cluster = 1;
        } else if (a->id == cudaLaunchAttributeCooperative) {
            cooperative = a->val.cooperative != 0;
        }
    }
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(function);
    cudart_unlock();
    return cudart_launch(kr, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream,
                         have_cluster ? cluster : NULL, cooperative);
}

CUDART_API cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *function, void **args)
{
    return cudaLaunchKernelExC(config, function, args);
}

