/* kemu's CUDA driver API, part 1: initialization and versions, the device,
 * contexts (the primary context and created ones, the per-thread
 * current-context stack), error names, memory, copies and sets, streams,
 * events, pointer attributes and cuGetProcAddress. Most calls run through
 * the runtime's own functions (the driver and the runtime share one state),
 * keeping the runtime's per-thread last error as it was. Modules, linking,
 * functions and launches are in driver_module.c. */
#include "config.h"
#include "cudart/driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTX_MAGIC 0x4b435458u /* "KCTX" */
#define CTX_STACK 64

static int initialized;
static struct drv_context primary_ctxs[CUDART_MAX_DEVICES]; /* one per device, set up at first use */
static _Thread_local struct drv_context *ctx_stack[CTX_STACK];
static _Thread_local int ctx_depth;
static int created_contexts; /* live cuCtxCreate contexts */

/* ---- errors ------------------------------------------------------------------ */

CUresult drv_error(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return CUDA_SUCCESS;
    case 4: /* cudaErrorCudartUnloading */
        return CUDA_ERROR_DEINITIALIZED;
    case 9:  /* cudaErrorInvalidConfiguration */
    case 11: /* cudaErrorInvalidValue (12.x numbering of some codes) */
    case 12: /* cudaErrorInvalidPitchValue */
    case 17: /* cudaErrorInvalidDevicePointer */
    case 21: /* cudaErrorInvalidMemcpyDirection */
        return CUDA_ERROR_INVALID_VALUE;
    case 13: /* cudaErrorInvalidSymbol */
        return CUDA_ERROR_NOT_FOUND;
    case 98: /* cudaErrorInvalidDeviceFunction */
        return CUDA_ERROR_INVALID_HANDLE;
    default:
        return e < 100 && e > 3 ? CUDA_ERROR_INVALID_VALUE : e;
    }
}

cudaError_t drv_rt_save(void)
{
    return cudaGetLastError();
}

CUresult drv_rt_done(cudaError_t saved, cudaError_t e)
{
    cudaGetLastError();
    if (saved)
        cudart_result(saved);
    return drv_error(e);
}

CUresult drv_check_init(void)
{
    return initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

static int context_valid_any(const struct drv_context *c)
{
    return c && c->magic == CTX_MAGIC && c->alive;
}

/* The primary context of a device. Locked. */
static struct drv_context *primary_of(int device)
{
    struct drv_context *c = &primary_ctxs[device];
    if (!c->magic) {
        c->magic = CTX_MAGIC;
        c->primary = 1;
        c->device = device;
    }
    return c;
}

/* The calling thread's current context: the top of its stack, or the
 * primary context of the runtime's current device once the runtime has set
 * up a device (a runtime call makes it current, as CUDA's runtime does; it
 * stays so after cudaDeviceReset, and the device comes back at the next
 * call). */
static struct drv_context *current_context(void)
{
    static int runtime_bound; /* the runtime has made a primary context current */
    if (ctx_depth > 0)
        return ctx_stack[ctx_depth - 1];
    if (cudart_cur()->device || runtime_bound) {
        runtime_bound = 1;
        struct drv_context *c = primary_of(cudart_current());
        c->alive = 1;
        return c;
    }
    return NULL;
}

/* The runtime works on the device of the thread's current context (the
 * runtime's current device follows the context, as in CUDA). */
static void follow_context(void)
{
    if (ctx_depth > 0 && context_valid_any(ctx_stack[ctx_depth - 1]))
        cudart_set_current(ctx_stack[ctx_depth - 1]->device);
}

CUresult drv_check_context(void)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    cudart_lock();
    struct drv_context *c = current_context();
    CUresult r = !c ? CUDA_ERROR_INVALID_CONTEXT : !c->alive ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_SUCCESS;
    if (!r)
        cudart_set_current(c->device);
    cudart_unlock();
    return r;
}

static const struct {
    const char *name;
    int code;
} error_table[] = {
#define DRIVER_ERROR(name, value) {#name, value},
#include "cudart/driver_errors.def"
#undef DRIVER_ERROR
};

static const char *error_name(CUresult r)
{
    for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++)
        if (error_table[i].code == r)
            return error_table[i].name;
    return NULL;
}

DRIVER_API CUresult cuGetErrorName(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    *str = error_name(error);
    return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DRIVER_API CUresult cuGetErrorString(CUresult error, const char **str)
{
    static char texts[sizeof error_table / sizeof error_table[0]][96];
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    *str = NULL;
    for (size_t i = 0; i < sizeof error_table / sizeof error_table[0]; i++) {
        if (error_table[i].code != error)
            continue;
        /* the runtime's message where the runtime has the same code and
         * name stem, else the name's words ("invalid context") */
        const char *rt = cudart_error_string(error);
        if (error && strcmp(rt, "unrecognized error code")) {
            *str = rt;
            return CUDA_SUCCESS;
        }
        cudart_lock();
        if (!texts[i][0]) {
            const char *n = error_table[i].name;
            n += !strncmp(n, "CUDA_ERROR_", 11) ? 11 : !strncmp(n, "CUDA_", 5) ? 5 : 0;
            size_t j = 0;
            for (; n[j] && j + 1 < sizeof texts[i]; j++)
                texts[i][j] = n[j] == '_' ? ' ' : (char)(n[j] >= 'A' && n[j] <= 'Z' ? n[j] - 'A' + 'a' : n[j]);
            texts[i][j] = 0;
        }
        cudart_unlock();
        *str = error ? texts[i] : "no error";
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* ---- initialization and versions --------------------------------------------------- */

DRIVER_API CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    initialized = 1;
    cudart_trace("cuInit");
    cudart_unlock();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 13000;
    return CUDA_SUCCESS;
}

/* ---- the device -------------------------------------------------------------------- */

static CUresult check_device(CUdevice dev)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    cudart_lock();
    int n = cudart_global.ndevices;
    cudart_unlock();
    return dev >= 0 && dev < n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

DRIVER_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (check_device(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDeviceGetCount(int *count)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    *count = cudart_global.ndevices;
    cudart_unlock();
    return CUDA_SUCCESS;
}

static CUresult properties(cudaDeviceProp *p, CUdevice dev)
{
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaGetDeviceProperties(p, dev));
}

DRIVER_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    cudaDeviceProp p;
    if ((r = properties(&p, dev)))
        return r;
    snprintf(name, (size_t)len, "%s", p.name);
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = cudart_device_memory_bytes();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceGetAttribute(value, attribute, dev));
}

DRIVER_API CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    cudaDeviceProp p;
    if ((r = properties(&p, dev)))
        return r;
    *major = p.major;
    *minor = p.minor;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDeviceGetUuid(cudaUUID_t *uuid, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    cudaDeviceProp p;
    if ((r = properties(&p, dev)))
        return r;
    memcpy(uuid, &p.uuid, sizeof *uuid);
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuDeviceGetUuid_v2, cuDeviceGetUuid)

DRIVER_API CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceGetPCIBusId(bus_id, len, dev));
}

DRIVER_API CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    CUresult r = check_device(dev);
    if (r || (r = check_device(peer)))
        return r;
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    *can = dev != peer; /* every emulated device reaches the others */
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *bus_id)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceGetByPCIBusId(dev, bus_id));
}

/* ---- contexts ------------------------------------------------------------------------ */

/* Makes the runtime's device `device` exist (the emulated device a context stands for). */
static CUresult ensure_device(int device)
{
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_device_at(device, &dev);
    cudart_unlock();
    return drv_error(e);
}

static int context_valid(struct drv_context *c)
{
    return c && c->magic == CTX_MAGIC && c->alive;
}

DRIVER_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = ensure_device(dev)))
        return r;
    cudart_lock();
    struct drv_context *c = primary_of(dev);
    c->refcount++;
    c->alive = 1;
    cudart_unlock();
    *ctx = c;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    cudart_lock();
    if (primary_of(dev)->refcount > 0)
        primary_of(dev)->refcount--;
    else
        r = CUDA_ERROR_INVALID_CONTEXT;
    cudart_unlock();
    return r;
}
DRIVER_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)

DRIVER_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    *flags = primary_of(dev)->flags;
    *active = primary_of(dev)->refcount > 0 || cudart_global.devs[dev].device != NULL;
    cudart_unlock();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    cudart_lock();
    primary_of(dev)->flags = flags;
    cudart_unlock();
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2)

/* Destroys the device's state: memory, streams, events, modules (the
 * runtime's cudaDeviceReset, which unloads the driver's modules too). */
static CUresult reset_device(int device)
{
    cudaError_t saved = drv_rt_save();
    int current = cudart_current();
    cudart_set_current(device);
    cudaError_t e = cudaDeviceReset(); /* which unloads the driver's modules too */
    cudart_set_current(current);
    return drv_rt_done(saved, e);
}

DRIVER_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    return reset_device(dev);
}
DRIVER_ALIAS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2)

static CUresult create_context(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    CUresult r = check_device(dev);
    if (r)
        return r;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = ensure_device(dev)))
        return r;
    struct drv_context *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = CTX_MAGIC;
    c->flags = flags;
    c->alive = 1;
    c->device = dev;
    cudart_lock();
    created_contexts++;
    if (ctx_depth < CTX_STACK)
        ctx_stack[ctx_depth++] = c;
    follow_context();
    cudart_unlock();
    *ctx = c;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    return create_context(ctx, flags, dev);
}

DRIVER_API CUresult cuCtxCreate_v3(CUcontext *ctx, void *params, int nparams, unsigned int flags, CUdevice dev)
{
    if (nparams < 0 || (nparams && !params))
        return CUDA_ERROR_INVALID_VALUE;
    return create_context(ctx, flags, dev);
}

DRIVER_API CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned int flags, CUdevice dev)
{
    (void)params; /* execution-affinity and CIG parameters: nothing to model */
    return create_context(ctx, flags, dev);
}

DRIVER_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    cudart_lock();
    if (!context_valid(ctx) || ctx->primary) {
        cudart_unlock();
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    ctx->alive = 0;
    /* off this thread's stack */
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] == ctx) {
            memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof ctx_stack[0]);
            ctx_depth--;
            i--;
        }
    created_contexts--;
    cudart_unlock();
    /* the handle stays allocated (its magic marks it destroyed), so a later
     * use is CUDA_ERROR_INVALID_CONTEXT rather than a read of freed memory */
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuCtxDestroy, cuCtxDestroy_v2)

DRIVER_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth >= CTX_STACK)
        return CUDA_ERROR_INVALID_VALUE;
    ctx_stack[ctx_depth++] = ctx;
    follow_context();
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2)

DRIVER_API CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct drv_context *c = ctx_stack[--ctx_depth];
    if (ctx)
        *ctx = c;
    follow_context();
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2)

DRIVER_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx) { /* unbinds the current context */
        if (ctx_depth > 0)
            ctx_depth--;
        return CUDA_SUCCESS;
    }
    if (!context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth > 0)
        ctx_stack[ctx_depth - 1] = ctx;
    else
        ctx_stack[ctx_depth++] = ctx;
    follow_context();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    *ctx = current_context();
    cudart_unlock();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxGetDevice(CUdevice *dev)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    *dev = current_context()->device;
    cudart_unlock();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
    if (ctx && !context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return ctx ? (dev ? (*dev = ctx->device, CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE) : cuCtxGetDevice(dev);
}

/* Peer access from the current context's device to peer's (the runtime's
 * cudaDeviceEnablePeerAccess, whose errors are the driver's codes). */
DRIVER_API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!context_valid(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceEnablePeerAccess(peer->device, 0));
}

DRIVER_API CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!context_valid(peer))
        return CUDA_ERROR_INVALID_CONTEXT;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceDisablePeerAccess(peer->device));
}

DRIVER_API CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    *flags = current_context()->flags;
    cudart_unlock();
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ctx && !context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020; /* the context API version of every CUDA since 3.2 */
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxSynchronize(void)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceSynchronize());
}

DRIVER_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    if (ctx && !context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuCtxSynchronize();
}

DRIVER_API CUresult cuCtxSetLimit(int limit, size_t value)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceSetLimit(limit, value));
}

DRIVER_API CUresult cuCtxGetLimit(size_t *value, int limit)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceGetLimit(value, limit));
}

DRIVER_API CUresult cuCtxSetCacheConfig(int config)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    return config >= 0 && config <= 3 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DRIVER_API CUresult cuCtxGetCacheConfig(int *config)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!config)
        return CUDA_ERROR_INVALID_VALUE;
    *config = 0;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaDeviceGetStreamPriorityRange(least, greatest));
}

/* ---- memory ------------------------------------------------------------------------- */

#define CONTEXT_OR_RETURN()                                                                                            \
    do {                                                                                                               \
        CUresult r_ = drv_check_context();                                                                             \
        if (r_)                                                                                                        \
            return r_;                                                                                                 \
    } while (0)


DRIVER_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    CONTEXT_OR_RETURN();
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    RT_CALL(cudaMalloc((void **)dptr, size));
}

DRIVER_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    RT_CALL(cudaFree((void *)(uintptr_t)dptr));
}

DRIVER_API CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
    RT_CALL(cudaMallocHost(pp, size));
}

DRIVER_API CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    RT_CALL(cudaHostAlloc(pp, size, flags));
}

DRIVER_API CUresult cuMemFreeHost(void *p)
{
    RT_CALL(cudaFreeHost(p));
}

DRIVER_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dptr, void *p, unsigned int flags)
{
    RT_CALL(cudaHostGetDevicePointer((void **)dptr, p, flags));
}

DRIVER_API CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
    RT_CALL(cudaHostGetFlags(flags, p));
}

DRIVER_API CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    RT_CALL(cudaHostRegister(p, size, flags));
}
DRIVER_ALIAS(cuMemHostRegister, cuMemHostRegister_v2)

DRIVER_API CUresult cuMemHostUnregister(void *p)
{
    RT_CALL(cudaHostUnregister(p));
}

DRIVER_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    CONTEXT_OR_RETURN();
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    RT_CALL(cudaMallocManaged((void **)dptr, size, flags));
}

DRIVER_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                       unsigned int element_size)
{
    CONTEXT_OR_RETURN();
    if (element_size != 4 && element_size != 8 && element_size != 16)
        return CUDA_ERROR_INVALID_VALUE;
    RT_CALL(cudaMallocPitch((void **)dptr, pitch, width, height));
}

DRIVER_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    RT_CALL(cudaMemGetInfo(free_bytes, total_bytes));
}

DRIVER_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr dptr)
{
    CONTEXT_OR_RETURN();
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find(dptr, 1);
    if (a) {
        if (base)
            *base = a->base;
        if (size)
            *size = a->size;
    }
    cudart_unlock();
    return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

DRIVER_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    RT_CALL(cudaMallocAsync((void **)dptr, size, stream));
}
DRIVER_ALIAS(cuMemAllocAsync_ptsz, cuMemAllocAsync)

DRIVER_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    RT_CALL(cudaFreeAsync((void *)(uintptr_t)dptr, stream));
}
DRIVER_ALIAS(cuMemFreeAsync_ptsz, cuMemFreeAsync)

DRIVER_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr dptr, size_t count, int location_type, int location_id,
                                          unsigned int flags, CUstream stream)
{
    (void)location_type, (void)location_id, (void)flags, (void)dptr, (void)count;
    CONTEXT_OR_RETURN();
    cudart_lock();
    int ok = cudart_stream_valid(stream);
    cudart_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
DRIVER_ALIAS(cuMemPrefetchAsync_v2_ptsz, cuMemPrefetchAsync_v2)

DRIVER_API CUresult cuMemAdvise_v2(CUdeviceptr dptr, size_t count, int advice, int location_type, int location_id)
{
    (void)dptr, (void)count, (void)advice, (void)location_type, (void)location_id;
    CONTEXT_OR_RETURN();
    return CUDA_SUCCESS;
}

/* ---- copies and sets ------------------------------------------------------------------- */

static void *ptr(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

DRIVER_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    RT_CALL(cudaMemcpy(ptr(dst), ptr(src), n, cudaMemcpyDefault));
}
DRIVER_ALIAS(cuMemcpy_ptds, cuMemcpy)

DRIVER_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream)
{
    RT_CALL(cudaMemcpyAsync(ptr(dst), ptr(src), n, cudaMemcpyDefault, stream));
}
DRIVER_ALIAS(cuMemcpyAsync_ptsz, cuMemcpyAsync)

DRIVER_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    RT_CALL(cudaMemcpy(ptr(dst), src, n, cudaMemcpyDefault));
}
DRIVER_ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2)

DRIVER_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    RT_CALL(cudaMemcpy(dst, ptr(src), n, cudaMemcpyDefault));
}
DRIVER_ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2)

DRIVER_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    RT_CALL(cudaMemcpy(ptr(dst), ptr(src), n, cudaMemcpyDeviceToDevice));
}
DRIVER_ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2)

DRIVER_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream stream)
{
    RT_CALL(cudaMemcpyAsync(ptr(dst), src, n, cudaMemcpyDefault, stream));
}
DRIVER_ALIAS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2)

DRIVER_API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream stream)
{
    RT_CALL(cudaMemcpyAsync(dst, ptr(src), n, cudaMemcpyDefault, stream));
}
DRIVER_ALIAS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2)

DRIVER_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream)
{
    RT_CALL(cudaMemcpyAsync(ptr(dst), ptr(src), n, cudaMemcpyDeviceToDevice, stream));
}
DRIVER_ALIAS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2)

/* The pointers name their devices (unified addressing), so a peer copy is
 * a device-to-device copy. */
DRIVER_API CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n)
{
    if (!context_valid(dst_ctx) || !context_valid(src_ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuMemcpy(dst, src, n);
}

DRIVER_API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                                      CUstream stream)
{
    if (!context_valid(dst_ctx) || !context_valid(src_ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cuMemcpyAsync(dst, src, n, stream);
}
DRIVER_ALIAS(cuMemcpyPeerAsync_ptsz, cuMemcpyPeerAsync)
DRIVER_ALIAS(cuMemcpyPeer_ptds, cuMemcpyPeer)

/* CUDA_MEMCPY2D and CUDA_MEMCPY3D (cuda.h of CUDA 13.0) */

typedef struct {
    size_t srcXInBytes, srcY;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} drv_memcpy2d;


_Static_assert(sizeof(drv_memcpy2d) == 128, "CUDA_MEMCPY2D");

int drv_copy_side(int type, const void *host, CUdeviceptr device, void *array, size_t *pitch, size_t *rows,
                  const char **out)
{
    switch (type) {
    case MEMTYPE_HOST:
        *out = host;
        return 0;
    case MEMTYPE_DEVICE:
    case MEMTYPE_UNIFIED:
        *out = ptr(device);
        return 0;
    case MEMTYPE_ARRAY: {
        uint64_t address;
        size_t width, height, depth, row;
        struct cudaChannelFormatDesc desc;
        unsigned flags;
        cudart_lock();
        int bad = !array || cudart_array_describe(array, &address, &width, &height, &depth, &row, &desc, &flags);
        cudart_unlock();
        if (bad)
            return -2;
        *out = ptr(address);
        *pitch = row;
        if (rows)
            *rows = height ? height : 1;
        return 0;
    }
    default:
        return -2;
    }
}

static CUresult copy_3d(const drv_memcpy3d *p, int async, CUstream stream)
{
    CONTEXT_OR_RETURN();
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const char *src = NULL, *dst = NULL;
    size_t spitch = p->srcPitch ? p->srcPitch : p->WidthInBytes;
    size_t dpitch = p->dstPitch ? p->dstPitch : p->WidthInBytes;
    int a = drv_copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &spitch, NULL, &src);
    int b = drv_copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &dpitch, NULL, &dst);
    if (a || b || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    size_t sheight = p->srcHeight ? p->srcHeight : p->Height;
    size_t dheight = p->dstHeight ? p->dstHeight : p->Height;
    if ((p->Depth > 1 && (sheight < p->Height || dheight < p->Height)) || spitch < p->WidthInBytes ||
        dpitch < p->WidthInBytes)
        return CUDA_ERROR_INVALID_VALUE;
    cudaError_t saved = drv_rt_save(), e = cudaSuccess;
    for (size_t z = 0; z < (p->Depth ? p->Depth : 1) && !e; z++) {
        const char *s = src + ((p->srcZ + z) * sheight + p->srcY) * spitch + p->srcXInBytes;
        char *d = (char *)dst + ((p->dstZ + z) * dheight + p->dstY) * dpitch + p->dstXInBytes;
        e = async ? cudaMemcpy2DAsync(d, dpitch, s, spitch, p->WidthInBytes, p->Height, cudaMemcpyDefault, stream)
                  : cudaMemcpy2D(d, dpitch, s, spitch, p->WidthInBytes, p->Height, cudaMemcpyDefault);
    }
    return drv_rt_done(saved, e);
}

static drv_memcpy3d from_2d(const drv_memcpy2d *p)
{
    drv_memcpy3d q;
    memset(&q, 0, sizeof q);
    q.srcXInBytes = p->srcXInBytes;
    q.srcY = p->srcY;
    q.srcMemoryType = p->srcMemoryType;
    q.srcHost = p->srcHost;
    q.srcDevice = p->srcDevice;
    q.srcArray = p->srcArray;
    q.srcPitch = p->srcPitch;
    q.dstXInBytes = p->dstXInBytes;
    q.dstY = p->dstY;
    q.dstMemoryType = p->dstMemoryType;
    q.dstHost = p->dstHost;
    q.dstDevice = p->dstDevice;
    q.dstArray = p->dstArray;
    q.dstPitch = p->dstPitch;
    q.WidthInBytes = p->WidthInBytes;
    q.Height = p->Height;
    q.Depth = 1;
    return q;
}

DRIVER_API CUresult cuMemcpy2D_v2(const drv_memcpy2d *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    drv_memcpy3d q = from_2d(p);
    return copy_3d(&q, 0, NULL);
}
DRIVER_ALIAS(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2)
DRIVER_ALIAS(cuMemcpy2DUnaligned_v2, cuMemcpy2D_v2)
DRIVER_ALIAS(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2D_v2)

DRIVER_API CUresult cuMemcpy2DAsync_v2(const drv_memcpy2d *p, CUstream stream)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    drv_memcpy3d q = from_2d(p);
    return copy_3d(&q, 1, stream);
}
DRIVER_ALIAS(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync_v2)

DRIVER_API CUresult cuMemcpy3D_v2(const drv_memcpy3d *p)
{
    return copy_3d(p, 0, NULL);
}
DRIVER_ALIAS(cuMemcpy3D_v2_ptds, cuMemcpy3D_v2)

DRIVER_API CUresult cuMemcpy3DAsync_v2(const drv_memcpy3d *p, CUstream stream)
{
    return copy_3d(p, 1, stream);
}
DRIVER_ALIAS(cuMemcpy3DAsync_v2_ptsz, cuMemcpy3DAsync_v2)

/* cuMemsetD8/16/32 and their 2-D forms: rows of `width` elements of
 * `size` bytes set to `value`, `pitch` bytes apart. Bytes go through
 * cudaMemset; wider elements are copied from a host pattern, as the runtime
 * copies checked. */
static CUresult memset_rows(CUdeviceptr dst, size_t pitch, unsigned value, unsigned size, size_t width, size_t height,
                            int async, CUstream stream)
{
    CONTEXT_OR_RETURN();
    if (size > 1 && dst % size)
        return CUDA_ERROR_INVALID_VALUE;
    cudaError_t saved = drv_rt_save(), e = cudaSuccess;
    if (size == 1) {
        e = async ? cudaMemset2DAsync(ptr(dst), pitch ? pitch : width, (int)(value & 0xff), width, height, stream)
                  : cudaMemset2D(ptr(dst), pitch ? pitch : width, (int)(value & 0xff), width, height);
        return drv_rt_done(saved, e);
    }
    size_t bytes = width * size;
    unsigned char *row = bytes ? malloc(bytes) : NULL;
    if (bytes && !row)
        return drv_rt_done(saved, cudaErrorMemoryAllocation);
    for (size_t i = 0; i < width; i++)
        memcpy(row + i * size, &value, size); /* little-endian: the low bytes */
    for (size_t y = 0; y < height && !e && bytes; y++) {
        void *d = ptr(dst + y * (pitch ? pitch : bytes));
        e = async ? cudaMemcpyAsync(d, row, bytes, cudaMemcpyHostToDevice, stream)
                  : cudaMemcpy(d, row, bytes, cudaMemcpyHostToDevice);
    }
    free(row);
    return drv_rt_done(saved, e);
}

DRIVER_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    return memset_rows(dst, 0, v, 1, n, 1, 0, NULL);
}
DRIVER_API CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short v, size_t n)
{
    return memset_rows(dst, 0, v, 2, n, 1, 0, NULL);
}
DRIVER_API CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n)
{
    return memset_rows(dst, 0, v, 4, n, 1, 0, NULL);
}
DRIVER_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    return memset_rows(dst, 0, v, 1, n, 1, 1, s);
}
DRIVER_API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
    return memset_rows(dst, 0, v, 2, n, 1, 1, s);
}
DRIVER_API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
    return memset_rows(dst, 0, v, 4, n, 1, 1, s);
}
DRIVER_API CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char v, size_t w, size_t h)
{
    return memset_rows(dst, pitch, v, 1, w, h, 0, NULL);
}
DRIVER_API CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short v, size_t w, size_t h)
{
    return memset_rows(dst, pitch, v, 2, w, h, 0, NULL);
}
DRIVER_API CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int v, size_t w, size_t h)
{
    return memset_rows(dst, pitch, v, 4, w, h, 0, NULL);
}
DRIVER_API CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t pitch, unsigned char v, size_t w, size_t h, CUstream s)
{
    return memset_rows(dst, pitch, v, 1, w, h, 1, s);
}
DRIVER_API CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch, unsigned short v, size_t w, size_t h,
                                       CUstream s)
{
    return memset_rows(dst, pitch, v, 2, w, h, 1, s);
}
DRIVER_API CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int v, size_t w, size_t h, CUstream s)
{
    return memset_rows(dst, pitch, v, 4, w, h, 1, s);
}
DRIVER_ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2)
DRIVER_ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2)
DRIVER_ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2)
DRIVER_ALIAS(cuMemsetD8Async_ptsz, cuMemsetD8Async)
DRIVER_ALIAS(cuMemsetD16Async_ptsz, cuMemsetD16Async)
DRIVER_ALIAS(cuMemsetD32Async_ptsz, cuMemsetD32Async)
DRIVER_ALIAS(cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2)
DRIVER_ALIAS(cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2)
DRIVER_ALIAS(cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2)
DRIVER_ALIAS(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async)
DRIVER_ALIAS(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async)
DRIVER_ALIAS(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async)

/* ---- pointer attributes ------------------------------------------------------------------ */

enum {
    PA_CONTEXT = 1, PA_MEMORY_TYPE, PA_DEVICE_POINTER, PA_HOST_POINTER, PA_P2P_TOKENS, PA_SYNC_MEMOPS,
    PA_BUFFER_ID, PA_IS_MANAGED, PA_DEVICE_ORDINAL, PA_IS_LEGACY_IPC, PA_RANGE_START, PA_RANGE_SIZE, PA_MAPPED,
    PA_HANDLE_TYPES, PA_RDMA, PA_ACCESS_FLAGS, PA_MEMPOOL, PA_MAPPING_SIZE, PA_MAPPING_BASE, PA_BLOCK_ID
};

/* One attribute of the allocation `a` holding address p (a may be NULL:
 * memory kemu did not allocate). Returns CUDA_ERROR_INVALID_VALUE where
 * CUDA fails the single-attribute query. Locked. */
static CUresult pointer_attribute(void *data, int attribute, CUdeviceptr p, const cudart_allocation *a)
{
    int host = a && (a->kind == CUDART_MEM_HOST || a->kind == CUDART_MEM_REGISTERED);
    int managed = a && a->kind == CUDART_MEM_MANAGED;
    switch (attribute) {
    case PA_CONTEXT:
        /* the context of the memory's device: the current one if it is on it */
        *(CUcontext *)data = !a ? NULL : current_context() && current_context()->device == a->device
                                             ? current_context() : primary_of(a->device);
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_MEMORY_TYPE:
        *(unsigned *)data = !a ? 0 : host ? MEMTYPE_HOST : MEMTYPE_DEVICE;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_DEVICE_POINTER:
        *(CUdeviceptr *)data = a && a->kind != CUDART_MEM_REGISTERED ? p : 0;
        return a && a->kind != CUDART_MEM_REGISTERED ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_HOST_POINTER:
        *(void **)data = host || managed ? ptr(p) : NULL;
        return host || managed ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_SYNC_MEMOPS:
    case PA_MAPPED:
        *(int *)data = a != NULL;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_BUFFER_ID:
    case PA_BLOCK_ID:
        *(unsigned long long *)data = a ? a->base : 0;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_IS_MANAGED:
        *(int *)data = managed;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_DEVICE_ORDINAL:
        *(int *)data = a ? a->device : -2;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_IS_LEGACY_IPC:
    case PA_RDMA:
        *(int *)data = 0;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_RANGE_START:
    case PA_MAPPING_BASE:
        *(CUdeviceptr *)data = a ? a->base : 0;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_RANGE_SIZE:
    case PA_MAPPING_SIZE:
        *(size_t *)data = a ? a->size : 0;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_HANDLE_TYPES:
        *(unsigned long long *)data = 0;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_ACCESS_FLAGS:
        *(int *)data = a ? 3 : 0; /* read-write */
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case PA_MEMPOOL:
        *(void **)data = NULL;
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

DRIVER_API CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p)
{
    CONTEXT_OR_RETURN();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    CUresult r = pointer_attribute(data, attribute, p, cudart_allocation_find(p, 1));
    cudart_unlock();
    return r;
}

DRIVER_API CUresult cuPointerGetAttributes(unsigned int count, int *attributes, void **data, CUdeviceptr p)
{
    CONTEXT_OR_RETURN();
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find(p, 1);
    CUresult r = CUDA_SUCCESS;
    for (unsigned i = 0; i < count && !r; i++) {
        if (!data[i])
            continue;
        /* unknown memory is no error here: its attributes read as zeros */
        if (pointer_attribute(data[i], attributes[i], p, a) && attributes[i] > PA_BLOCK_ID)
            r = CUDA_ERROR_INVALID_VALUE;
    }
    cudart_unlock();
    return r;
}

DRIVER_API CUresult cuPointerSetAttribute(const void *value, int attribute, CUdeviceptr p)
{
    CONTEXT_OR_RETURN();
    if (!value || attribute != PA_SYNC_MEMOPS)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find(p, 1);
    cudart_unlock();
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- streams and events ---------------------------------------------------------------- */

DRIVER_API CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    RT_CALL(cudaStreamCreateWithFlags(stream, flags));
}

DRIVER_API CUresult cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int priority)
{
    RT_CALL(cudaStreamCreateWithPriority(stream, flags, priority));
}

DRIVER_API CUresult cuStreamDestroy_v2(CUstream stream)
{
    RT_CALL(cudaStreamDestroy(stream));
}
DRIVER_ALIAS(cuStreamDestroy, cuStreamDestroy_v2)

DRIVER_API CUresult cuStreamSynchronize(CUstream stream)
{
    RT_CALL(cudaStreamSynchronize(stream));
}
DRIVER_ALIAS(cuStreamSynchronize_ptsz, cuStreamSynchronize)

DRIVER_API CUresult cuStreamQuery(CUstream stream)
{
    RT_CALL(cudaStreamQuery(stream));
}
DRIVER_ALIAS(cuStreamQuery_ptsz, cuStreamQuery)

DRIVER_API CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    RT_CALL(cudaStreamWaitEvent(stream, event, flags));
}
DRIVER_ALIAS(cuStreamWaitEvent_ptsz, cuStreamWaitEvent)

DRIVER_API CUresult cuStreamGetFlags(CUstream stream, unsigned int *flags)
{
    RT_CALL(cudaStreamGetFlags(stream, flags));
}
DRIVER_ALIAS(cuStreamGetFlags_ptsz, cuStreamGetFlags)

DRIVER_API CUresult cuStreamGetPriority(CUstream stream, int *priority)
{
    RT_CALL(cudaStreamGetPriority(stream, priority));
}
DRIVER_ALIAS(cuStreamGetPriority_ptsz, cuStreamGetPriority)

DRIVER_API CUresult cuStreamSetAttribute(CUstream stream, int attr, const cudaLaunchAttributeValue *value)
{
    RT_CALL(cudaStreamSetAttribute(stream, attr, value));
}
DRIVER_ALIAS(cuStreamSetAttribute_ptsz, cuStreamSetAttribute)

DRIVER_API CUresult cuStreamGetAttribute(CUstream stream, int attr, cudaLaunchAttributeValue *value)
{
    RT_CALL(cudaStreamGetAttribute(stream, attr, value));
}
DRIVER_ALIAS(cuStreamGetAttribute_ptsz, cuStreamGetAttribute)

DRIVER_API CUresult cuCtxResetPersistingL2Cache(void)
{
    RT_CALL(cudaCtxResetPersistingL2Cache());
}

DRIVER_API CUresult cuStreamGetId(CUstream stream, unsigned long long *id)
{
    RT_CALL(cudaStreamGetId(stream, id));
}
DRIVER_ALIAS(cuStreamGetId_ptsz, cuStreamGetId)

DRIVER_API CUresult cuStreamGetDevice(CUstream stream, CUdevice *dev)
{
    RT_CALL(cudaStreamGetDevice(stream, dev));
}
DRIVER_ALIAS(cuStreamGetDevice_ptsz, cuStreamGetDevice)

DRIVER_API CUresult cuStreamGetCtx(CUstream stream, CUcontext *ctx)
{
    CONTEXT_OR_RETURN();
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    int ok = cudart_stream_valid(stream);
    *ctx = ok ? current_context() : NULL;
    cudart_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
DRIVER_ALIAS(cuStreamGetCtx_ptsz, cuStreamGetCtx)

typedef void (*drv_stream_callback)(CUstream, CUresult, void *);

DRIVER_API CUresult cuStreamAddCallback(CUstream stream, drv_stream_callback callback, void *user_data,
                                        unsigned int flags)
{
    /* CUresult and cudaError_t are both int, with success 0 */
    RT_CALL(cudaStreamAddCallback(stream, (cudaStreamCallback_t)(void (*)(void))callback, user_data, flags));
}
DRIVER_ALIAS(cuStreamAddCallback_ptsz, cuStreamAddCallback)

DRIVER_API CUresult cuLaunchHostFunc(CUstream stream, cudaHostFn_t fn, void *user_data)
{
    RT_CALL(cudaLaunchHostFunc(stream, fn, user_data));
}
DRIVER_ALIAS(cuLaunchHostFunc_ptsz, cuLaunchHostFunc)

DRIVER_API CUresult cuStreamAttachMemAsync(CUstream stream, CUdeviceptr p, size_t length, unsigned int flags)
{
    RT_CALL(cudaStreamAttachMemAsync(stream, ptr(p), length, flags));
}
DRIVER_ALIAS(cuStreamAttachMemAsync_ptsz, cuStreamAttachMemAsync)

DRIVER_API CUresult cuEventCreate(CUevent *event, unsigned int flags)
{
    RT_CALL(cudaEventCreateWithFlags(event, flags));
}

DRIVER_API CUresult cuEventDestroy_v2(CUevent event)
{
    RT_CALL(cudaEventDestroy(event));
}
DRIVER_ALIAS(cuEventDestroy, cuEventDestroy_v2)

DRIVER_API CUresult cuEventRecord(CUevent event, CUstream stream)
{
    RT_CALL(cudaEventRecord(event, stream));
}
DRIVER_ALIAS(cuEventRecord_ptsz, cuEventRecord)

DRIVER_API CUresult cuEventRecordWithFlags(CUevent event, CUstream stream, unsigned int flags)
{
    RT_CALL(cudaEventRecordWithFlags(event, stream, flags));
}
DRIVER_ALIAS(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags)

DRIVER_API CUresult cuEventSynchronize(CUevent event)
{
    RT_CALL(cudaEventSynchronize(event));
}

DRIVER_API CUresult cuEventQuery(CUevent event)
{
    RT_CALL(cudaEventQuery(event));
}

DRIVER_API CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    RT_CALL(cudaEventElapsedTime(ms, start, end));
}
DRIVER_ALIAS(cuEventElapsedTime, cuEventElapsedTime_v2)

/* ---- tensor maps ---------------------------------------------------------------------- */

DRIVER_API CUresult cuTensorMapEncodeTiled(void *tensor_map, int data_type, uint32_t rank, void *global_address,
                                           const uint64_t *global_dim, const uint64_t *global_strides,
                                           const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                           int swizzle, int l2_promotion, int oob_fill)
{
    kemu_error err;
    kemu_status st = kemu_tensor_map_encode_tiled(tensor_map, data_type, rank, (uint64_t)(uintptr_t)global_address,
                                                  global_dim, global_strides, box_dim, element_strides, interleave,
                                                  swizzle, l2_promotion, oob_fill, &err);
    if (st == KEMU_OK)
        return CUDA_SUCCESS;
    fprintf(stderr, "kemu: cuTensorMapEncodeTiled: %s\n", err.message);
    return st == KEMU_ERR_UNSUPPORTED ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
}

/* ---- cuGetProcAddress -------------------------------------------------------------------- */

/* Every function of libcuda, with kemu's implementation or stub
 * (driver_stubs.c, generated). */
typedef struct drv_proc {
    const char *name;
    void (*fn)(void);
} drv_proc;
extern const drv_proc cudart_driver_procs[];
extern const size_t cudart_driver_nprocs;

static void (*find_proc(const char *name))(void)
{
    size_t lo = 0, hi = cudart_driver_nprocs;
    while (lo < hi) { /* the table is sorted (LC_ALL=C) */
        size_t mid = (lo + hi) / 2;
        int c = strcmp(cudart_driver_procs[mid].name, name);
        if (!c)
            return cudart_driver_procs[mid].fn;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The CUDA version from which a versioned entry point (`name_vN`) is what
 * cuGetProcAddress hands out for `name`; other _v2 names date from 3.2. */
static int introduced(const char *versioned)
{
    static const struct {
        const char *name;
        int version;
    } table[] = {
        {"cuCtxCreate_v3", 11040}, {"cuCtxCreate_v4", 12050}, {"cuDeviceGetUuid_v2", 11040},
        {"cuGetProcAddress_v2", 12000}, {"cuGraphExecUpdate_v2", 12000}, {"cuGraphAddKernelNode_v2", 12000},
        {"cuGraphKernelNodeGetParams_v2", 12000}, {"cuGraphKernelNodeSetParams_v2", 12000},
        {"cuGraphExecKernelNodeSetParams_v2", 12000}, {"cuGraphGetEdges_v2", 12030},
        {"cuGraphNodeGetDependencies_v2", 12030}, {"cuGraphNodeGetDependentNodes_v2", 12030},
        {"cuGraphAddDependencies_v2", 12030}, {"cuGraphRemoveDependencies_v2", 12030}, {"cuGraphAddNode_v2", 12030},
        {"cuStreamGetCaptureInfo_v2", 11030}, {"cuStreamGetCaptureInfo_v3", 12030},
        {"cuStreamUpdateCaptureDependencies_v2", 12030}, {"cuEventElapsedTime_v2", 12080},
        {"cuMemAdvise_v2", 12020}, {"cuMemPrefetchAsync_v2", 12020}, {"cuDevicePrimaryCtxRelease_v2", 11000},
        {"cuDevicePrimaryCtxReset_v2", 11000}, {"cuDevicePrimaryCtxSetFlags_v2", 11000},
        {"cuIpcOpenMemHandle_v2", 11000}, {"cuStreamBeginCapture_v2", 10010}, {"cuStreamWaitValue32_v2", 11070},
        {"cuStreamWaitValue64_v2", 11070}, {"cuStreamWriteValue32_v2", 11070}, {"cuStreamWriteValue64_v2", 11070},
        {"cuStreamBatchMemOp_v2", 11070}, {"cuStreamGetCtx_v2", 12050}, {"cuMemcpyBatchAsync_v2", 13000},
        {"cuMemcpy3DBatchAsync_v2", 13000}, {"cuCtxGetDevice_v2", 13000}, {"cuCtxSynchronize_v2", 13000},
        {"cuGraphInstantiate_v2", 11000}, {"cuCtxGetCurrent_v2", 13000},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, versioned))
            return table[i].version;
    return 3020;
}

enum { PROC_PER_THREAD_STREAM = 2 };
enum { PROC_SUCCESS = 0, PROC_NOT_FOUND = 1, PROC_VERSION_NOT_SUFFICIENT = 2 };

static CUresult get_proc(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    /* CUDA 12 made the plain name cuGraphInstantiate stand for
     * cuGraphInstantiateWithFlags (cuda.h), and its _v2 the old form */
    if (!strcmp(symbol, "cuGraphInstantiate") && version >= 12000)
        symbol = "cuGraphInstantiateWithFlags";
    char name[256];
    void (*fn)(void) = NULL;
    int chosen = -1;
    for (int v = 4; v >= 1 && !fn; v--) {
        if (v > 1)
            snprintf(name, sizeof name, "%s_v%d", symbol, v);
        else
            snprintf(name, sizeof name, "%s", symbol);
        void (*f)(void) = find_proc(name);
        if (f && (v == 1 || introduced(name) <= version)) {
            fn = f;
            chosen = v;
        }
    }
    if (fn && (flags & PROC_PER_THREAD_STREAM)) {
        char variant[300];
        const char *suffixes[] = {"_ptds", "_ptsz"};
        for (int i = 0; i < 2; i++) {
            snprintf(variant, sizeof variant, "%s%s", name, suffixes[i]);
            void (*f)(void) = find_proc(variant);
            if (f) {
                fn = f;
                break;
            }
        }
    }
    (void)chosen;
    if (!fn) {
        if (status)
            *status = PROC_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    memcpy(pfn, &fn, sizeof *pfn);
    if (status)
        *status = PROC_SUCCESS;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                                        int *status)
{
    return get_proc(symbol, pfn, version, flags, status);
}

DRIVER_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
    return get_proc(symbol, pfn, version, flags, NULL);
}

DRIVER_API CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    /* NVIDIA's private tables between its own runtime and driver: kemu's
     * libcudart never asks for them, so there is nothing to hand out */
    return CUDA_ERROR_NOT_SUPPORTED;
}
