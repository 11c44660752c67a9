/* Memory management of kemu's libcudart replacement: device, host (pinned),
 * managed and pitched allocations, copies and sets in every direction and
 * shape, __device__ / __constant__ symbols, and pointer queries (CUDA
 * arrays and 3D copies are in array.c). kemu's device memory is directly usable
 * host memory, so every kind of allocation is reachable from kernels and
 * from the host alike; what CUDA checks (ranges inside one allocation, copy
 * directions, symbols) is checked here, and copies go through kemu's copy
 * functions so that the checkers see them. On a capturing stream, the
 * asynchronous copies and sets become graph nodes (capture.c), and the
 * synchronous calls that CUDA forbids during a capture fail. */
#include "config.h"
#include "cudart/graph.h"
#include "check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the allocation table ------------------------------------------------- */

static size_t allocation_index(uint64_t address)
{
    /* first allocation whose base is > address */
    size_t lo = 0, hi = cudart_global.nallocations;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cudart_global.allocations[mid].base <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int cudart_allocation_add(uint64_t base, size_t size, int kind)
{
    cudart_state *s = &cudart_global;
    if (s->nallocations == s->capallocations) {
        size_t cap = s->capallocations ? s->capallocations * 2 : 64;
        cudart_allocation *grown = realloc(s->allocations, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->allocations = grown;
        s->capallocations = cap;
    }
    size_t i = allocation_index(base);
    memmove(&s->allocations[i + 1], &s->allocations[i], (s->nallocations - i) * sizeof *s->allocations);
    s->allocations[i] = (cudart_allocation){base, size, kind, cudart_current()};
    s->nallocations++;
    if (kind != CUDART_MEM_REGISTERED && kind != CUDART_MEM_SYMBOL)
        s->bytes_allocated += size;
    if (cudart_order_on()) /* new memory: earlier operations' accesses there are another object's */
        check_order_forget_range(base, size);
    return 0;
}

void cudart_allocation_remove(uint64_t base)
{
    cudart_state *s = &cudart_global;
    size_t i = allocation_index(base);
    if (i == 0 || s->allocations[i - 1].base != base)
        return;
    i--;
    if (s->allocations[i].kind != CUDART_MEM_REGISTERED && s->allocations[i].kind != CUDART_MEM_SYMBOL)
        s->bytes_allocated -= s->allocations[i].size;
    memmove(&s->allocations[i], &s->allocations[i + 1], (s->nallocations - i - 1) * sizeof *s->allocations);
    s->nallocations--;
}

const cudart_allocation *cudart_allocation_find(uint64_t address, size_t size)
{
    cudart_state *s = &cudart_global;
    size_t i = allocation_index(address);
    if (i == 0)
        return NULL;
    const cudart_allocation *a = &s->allocations[i - 1];
    uint64_t end = a->base + (a->size ? a->size : 1);
    if (address >= end || size > end - address)
        return NULL;
    return a;
}

void cudart_allocations_clear(int device)
{
    cudart_state *s = &cudart_global;
    size_t kept = 0;
    for (size_t i = 0; i < s->nallocations; i++) {
        cudart_allocation *a = &s->allocations[i];
        if (a->device == device) { /* what was made on the device goes with it */
            if (a->kind != CUDART_MEM_REGISTERED && a->kind != CUDART_MEM_SYMBOL)
                s->bytes_allocated -= a->size;
            continue;
        }
        s->allocations[kept++] = *a;
    }
    s->nallocations = kept;
}

int cudart_device_of(const void *ptr)
{
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)ptr, 1);
    return a ? a->device : -1;
}

kemu_device *cudart_kemu_device_of(const void *ptr)
{
    int d = cudart_device_of(ptr);
    return cudart_global.devs[d >= 0 ? d : cudart_current()].device;
}

/* ---- allocation ------------------------------------------------------------ */

/* Common start of API calls that need the device: the lock is held. */
static cudaError_t begin(kemu_device **dev)
{
    cudaError_t e = cudart_device(dev);
    if (!e)
        e = cudart_check_sticky();
    return e;
}

cudaError_t cudart_allocate(void **ptr, size_t size, int kind)
{
    if (!ptr)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_capture_unsafe();
    if (!e)
        e = begin(&dev);
    if (!e && size == 0) {
        *ptr = NULL;
    } else if (!e) {
        uint64_t address = 0;
        if (size > cudart_device_memory_bytes() - cudart_global.bytes_allocated ||
            kemu_malloc(dev, size, cudart_global.uninit, &address, NULL)) {
            e = cudaErrorMemoryAllocation;
        } else if (cudart_allocation_add(address, size, kind)) {
            kemu_free(dev, address, NULL);
            e = cudaErrorMemoryAllocation;
        } else {
            *ptr = (void *)(uintptr_t)address;
            /* host threads may write pinned and managed memory while a
             * kernel polls it: no spinning kernel is proven stuck; every
             * device's kernels reach it */
            if (kind == CUDART_MEM_HOST || kind == CUDART_MEM_MANAGED) {
                kemu_device_set_host_writes(dev, 1);
                kemu_device_share_allocation(dev, address, NULL);
            }
        }
    }
    cudart_trace("allocate %zu bytes (kind %d) -> %s %p", size, kind, cudart_error_name(e), e ? NULL : *ptr);
    cudart_unlock();
    return cudart_result(e);
}

cudaError_t cudart_release(void *ptr, int kind1, int kind2, int synchronize)
{
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = synchronize ? cudart_capture_unsafe() : cudaSuccess;
    if (!e)
        e = synchronize ? cudart_synchronize() : cudart_check_sticky();
    if (!e && synchronize && cudart_order_on()) /* cudaFree waits for the device's work */
        check_order_device_sync(cudart_current());
    if (!e && ptr) {
        e = cudart_device(&dev);
        /* the memory may be another device's, which any device's kernels may be reading */
        cudart_wait_idle(~0u);
        if (!e && cudart_kemu_device_of(ptr))
            dev = cudart_kemu_device_of(ptr);
        const cudart_allocation *a = e ? NULL : cudart_allocation_find((uint64_t)(uintptr_t)ptr, 0);
        if (!e && kind1 == CUDART_MEM_DEVICE && !cudart_pool_free(ptr, NULL, &e)) {
            if (synchronize) /* cudaFree of cudaMallocAsync memory: back to its pool */
                cudart_pools_release();
        } else if (!e && a && a->base == (uint64_t)(uintptr_t)ptr && a->kind == CUDART_MEM_GRAPH &&
                   kind1 == CUDART_MEM_DEVICE) {
            cudart_allocation_remove(a->base); /* graph memory stays reserved */
        } else if (!e && (!a || a->base != (uint64_t)(uintptr_t)ptr || (a->kind != kind1 && a->kind != kind2))) {
            e = cudaErrorInvalidValue;
        } else if (!e) {
            kemu_free(dev, (uint64_t)(uintptr_t)ptr, NULL);
            cudart_allocation_remove((uint64_t)(uintptr_t)ptr);
        }
    }
    cudart_check_snapshot();
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMalloc(void **ptr, size_t size)
{
    return cudart_allocate(ptr, size, CUDART_MEM_DEVICE);
}

CUDART_API cudaError_t cudaFree(void *ptr)
{
    return cudart_release(ptr, CUDART_MEM_DEVICE, CUDART_MEM_MANAGED, 1);
}

CUDART_API cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    return cudart_pool_allocate(NULL, ptr, size, stream); /* the device's current pool */
}

CUDART_API cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    int capturing = e ? 0 : cudart_capture_stream(stream, &e);
    int plain = 0;
    if (capturing == 1) /* a graph free node */
        e = ptr ? cudart_capture_node(stream, cudaGraphNodeTypeMemFree, &ptr, NULL) : cudaErrorInvalidValue;
    else if (!e)
        plain = cudart_pool_free(ptr, stream, &e);
    cudart_unlock();
    if (plain) /* not from a pool: freed as cudaFree frees, without synchronizing */
        return cudart_release(ptr, CUDART_MEM_DEVICE, CUDART_MEM_MANAGED, 0);
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudart_allocate(ptr, size, CUDART_MEM_HOST);
}

CUDART_API cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    if (flags & ~0x0fu)
        return cudart_result(cudaErrorInvalidValue);
    return cudart_allocate(ptr, size, CUDART_MEM_HOST);
}

CUDART_API cudaError_t cudaFreeHost(void *ptr)
{
    return cudart_release(ptr, CUDART_MEM_HOST, CUDART_MEM_HOST, 1);
}

CUDART_API cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    if (flags != CUDART_MEM_ATTACH_GLOBAL && flags != CUDART_MEM_ATTACH_HOST)
        return cudart_result(cudaErrorInvalidValue);
    return cudart_allocate(ptr, size, CUDART_MEM_MANAGED);
}

/* Rows of pitched allocations start at multiples of this (as on GPUs). */
#define PITCH_ALIGNMENT 512

CUDART_API cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    if (!pitch)
        return cudart_result(cudaErrorInvalidValue);
    size_t p = (width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    if (height && p > (size_t)-1 / height)
        return cudart_result(cudaErrorMemoryAllocation);
    cudaError_t e = cudart_allocate(ptr, p * height, CUDART_MEM_DEVICE);
    if (!e)
        *pitch = p;
    return e;
}

CUDART_API cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitched, struct cudaExtent extent)
{
    if (!pitched)
        return cudart_result(cudaErrorInvalidValue);
    size_t pitch = (extent.width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    size_t rows = extent.height * (extent.depth ? extent.depth : 1);
    if (rows && pitch > (size_t)-1 / rows)
        return cudart_result(cudaErrorMemoryAllocation);
    void *p = NULL;
    cudaError_t e = cudart_allocate(&p, pitch * rows, CUDART_MEM_DEVICE);
    if (!e)
        *pitched = (struct cudaPitchedPtr){p, pitch, extent.width, extent.height};
    return e;
}

CUDART_API cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    cudart_lock();
    size_t total = cudart_device_memory_bytes();
    size_t used = cudart_global.bytes_allocated + cudart_pools_reserved_unused();
    if (free_bytes)
        *free_bytes = used < total ? total - used : 0;
    if (total_bytes)
        *total_bytes = total;
    cudaError_t e = cudart_check_sticky();
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    if (!ptr || !size)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    if (!e && cudart_allocation_find((uint64_t)(uintptr_t)ptr, 1))
        e = cudaErrorHostMemoryAlreadyRegistered;
    if (!e && cudart_allocation_add((uint64_t)(uintptr_t)ptr, size, CUDART_MEM_REGISTERED))
        e = cudaErrorMemoryAllocation;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaHostUnregister(void *ptr)
{
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)ptr, 0);
    cudaError_t e = cudaSuccess;
    if (!a || a->base != (uint64_t)(uintptr_t)ptr || a->kind != CUDART_MEM_REGISTERED)
        e = cudaErrorHostMemoryNotRegistered;
    else
        cudart_allocation_remove(a->base);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaHostGetDevicePointer(void **device_ptr, void *host_ptr, unsigned int flags)
{
    if (!device_ptr || flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)host_ptr, 0);
    cudaError_t e = a && (a->kind == CUDART_MEM_HOST || a->kind == CUDART_MEM_REGISTERED ||
                          a->kind == CUDART_MEM_MANAGED) ? cudaSuccess : cudaErrorInvalidValue;
    if (!e)
        *device_ptr = host_ptr;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaHostGetFlags(unsigned int *flags, void *host_ptr)
{
    if (!flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)host_ptr, 0);
    cudaError_t e = a && a->kind == CUDART_MEM_HOST ? cudaSuccess : cudaErrorInvalidValue;
    if (!e)
        *flags = CUDART_HOST_ALLOC_MAPPED;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *out, const void *ptr)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    struct cudaPointerAttributes attr;
    memset(&attr, 0, sizeof attr);
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)ptr, 0);
    void *p = (void *)ptr;
    if (!a) {
        attr.type = cudaMemoryTypeUnregistered;
        attr.device = -2;
    } else {
        attr.device = a->device;
        switch (a->kind) {
        case CUDART_MEM_HOST:
        case CUDART_MEM_REGISTERED:
            attr.type = cudaMemoryTypeHost;
            attr.devicePointer = p;
            attr.hostPointer = p;
            break;
        case CUDART_MEM_MANAGED:
            attr.type = cudaMemoryTypeManaged;
            attr.devicePointer = p;
            attr.hostPointer = p;
            break;
        default:
            attr.type = cudaMemoryTypeDevice;
            attr.devicePointer = p;
            break;
        }
    }
    cudart_unlock();
    memcpy(out, &attr, CUDART_POINTER_ATTRIBUTES_SIZE); /* CUDA 12's struct is shorter */
    return cudaSuccess;
}

CUDART_API cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count, ...)
{
    (void)ptr, (void)count;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaMemAdvise(const void *ptr, size_t count, ...)
{
    (void)ptr, (void)count;
    return cudaSuccess;
}

/* ---- copies ------------------------------------------------------------------ */

/* Whether [p, p + n) lies in one device-reachable allocation (0), lies in
 * none (1, plain host memory), or straddles allocations (-1). */
static int classify(const void *p, size_t n)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (cudart_allocation_find(a, n ? n : 1))
        return 0;
    if (!cudart_allocation_find(a, 1) && (n <= 1 || !cudart_allocation_find(a + n - 1, 1)))
        return 1;
    return -1;
}

/* One copy of n bytes in direction `kind`, checked as CUDA checks it. */
static cudaError_t copy_bytes(kemu_device *dev, void *dst, const void *src, size_t n, int kind)
{
    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return cudaErrorInvalidValue;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    int dst_host = classify(dst, n), src_host = classify(src, n);
    if (dst_host < 0 || src_host < 0)
        return cudaErrorInvalidValue;
    if (kind == cudaMemcpyDefault)
        kind = src_host ? (dst_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                        : (dst_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    uint64_t d = (uint64_t)(uintptr_t)dst, s = (uint64_t)(uintptr_t)src;
    kemu_status st = KEMU_OK;
    /* the devices that hold the memory (unified addressing); wait for
     * other threads' launches on them */
    kemu_device *ddev = dst_host ? dev : cudart_kemu_device_of(dst), *sdev = src_host ? dev : cudart_kemu_device_of(src);
    unsigned busy = 0;
    if (!dst_host && cudart_device_of(dst) >= 0)
        busy |= 1u << cudart_device_of(dst);
    if (!src_host && cudart_device_of(src) >= 0)
        busy |= 1u << cudart_device_of(src);
    cudart_wait_idle(busy);
    if (!ddev || !sdev)
        return cudaErrorInvalidValue;
    if (cudart_order_on() && check_order_pending_legacy()) { /* serialized with the other devices' legacy streams */
        int devs[2] = {dst_host ? -1 : cudart_device_of(dst), src_host ? -1 : cudart_device_of(src)};
        for (int i = 0; i < 2; i++)
            if (devs[i] >= 0 && devs[i] != cudart_current()) {
                char name[128];
                check_stream other;
                cudart_order_stream(NULL, devs[i], &other, name, sizeof name);
                check_order_also(&other);
            }
    }
    if (!src_host)
        check_order_access(s, n, 0);
    if (!dst_host)
        check_order_access(d, n, 1);
    else if (!src_host) /* into pageable memory: the call returns once the copy is done */
        check_order_host_waits();
    switch (kind) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, n);
        break;
    case cudaMemcpyHostToDevice:
        if (dst_host)
            return cudaErrorInvalidValue;
        st = kemu_memcpy_htod(ddev, d, src, n, NULL);
        break;
    case cudaMemcpyDeviceToHost:
        if (src_host)
            return cudaErrorInvalidValue;
        st = kemu_memcpy_dtoh(sdev, dst, s, n, NULL);
        break;
    default:
        if (src_host || dst_host)
            return cudaErrorInvalidValue;
        if (ddev == sdev) {
            st = kemu_memcpy_dtod(ddev, d, s, n, NULL);
        } else { /* between devices: read on one, a write on the other for its checkers */
            st = kemu_memcpy_dtoh(sdev, dst, s, n, NULL);
            if (!st)
                st = kemu_note_host_write(ddev, d, n, NULL);
        }
        break;
    }
    return st ? cudaErrorInvalidValue : cudaSuccess;
}

cudaError_t cudart_copy_2d(kemu_device *dev, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, int kind)
{
    if (height > 1 && (width > dpitch || width > spitch))
        return cudaErrorInvalidPitchValue;
    for (size_t r = 0; r < height; r++) {
        cudaError_t e = copy_bytes(dev, (char *)dst + r * dpitch, (const char *)src + r * spitch, width, kind);
        if (e)
            return e;
    }
    return cudaSuccess;
}

/* Starts a copy: synchronizing ones release pending output and faults. */
cudaError_t cudart_begin_copy(kemu_device **dev, int synchronizing, cudaStream_t stream)
{
    cudaError_t e = cudart_device(dev);
    if (e)
        return e;
    if (!cudart_stream_valid(stream))
        return cudaErrorInvalidResourceHandle;
    e = synchronizing ? cudart_capture_unsafe() : cudaSuccess;
    if (e)
        return e;
    int r = cudart_capture_stream(synchronizing ? NULL : stream, &e);
    if (r == 1) /* work that kemu does not capture */
        return cudart_capture_refuse(stream);
    if (r < 0)
        return e;
    e = synchronizing ? cudart_synchronize() : cudart_check_sticky();
    if (!e && cudart_order_on()) {
        cudart_order_begin(synchronizing ? NULL : stream, cudart_current(),
                           cudart_copy_api ? cudart_copy_api : synchronizing ? "cudaMemcpy" : "cudaMemcpyAsync",
                           synchronizing);
        cudart_copy_open = 1;
    }
    cudart_copy_api = NULL;
    return e;
}

/* The capture side of a copy or set: a synchronous one is refused when
 * the thread may not make unsafe calls; an asynchronous one on a capturing
 * stream becomes the node of `type` with `params` (*captured = 1). */
static cudaError_t capture_copy(int sync, cudaStream_t stream, int type, const void *params, int *captured)
{
    *captured = 0;
    cudaError_t e = sync ? cudart_capture_unsafe() : cudaSuccess;
    if (e)
        return e;
    if (!cudart_stream_valid(stream))
        return cudaErrorInvalidResourceHandle;
    int r = cudart_capture_stream(sync ? NULL : stream, &e);
    if (r == 1) {
        *captured = 1;
        e = cudart_capture_node(stream, type, params, NULL);
    }
    return e;
}

static struct cudaMemcpy3DParms copy_params(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                            size_t height, int kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, spitch, width, height};
    p.dstPtr = (struct cudaPitchedPtr){dst, dpitch, width, height};
    p.extent = (struct cudaExtent){width, height, 1};
    p.kind = kind;
    return p;
}

static cudaError_t memcpy_common(void *dst, const void *src, size_t n, int kind, int sync, cudaStream_t stream,
                                 const char *api)
{
    cudart_lock();
    cudart_copy_api = api;
    kemu_device *dev;
    int captured;
    struct cudaMemcpy3DParms p = copy_params(dst, n, src, n, n, 1, kind);
    cudaError_t e = capture_copy(sync, stream, cudaGraphNodeTypeMemcpy, &p, &captured);
    if (!e && !captured)
        e = cudart_begin_copy(&dev, sync, stream);
    if (!e && !captured)
        e = copy_bytes(dev, dst, src, n, kind);
    cudart_trace("memcpy %p <- %p %zu bytes kind %d: %s", dst, src, n, kind, cudart_error_name(e));
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind)
{
    return memcpy_common(dst, src, count, kind, 1, NULL, "cudaMemcpy");
}

CUDART_API cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream)
{
    return memcpy_common(dst, src, count, kind, 0, stream, "cudaMemcpyAsync");
}

/* cudaMemcpyPeer: the devices must be valid; the pointers name their
 * devices (unified addressing), so the copy is a device-to-device copy
 * whatever the numbers say, as with CUDA's UVA. Needs no peer access. */
static cudaError_t peer_devices_valid(int dst_device, int src_device)
{
    cudart_lock();
    int n = cudart_global.ndevices;
    cudart_unlock();
    return dst_device < 0 || dst_device >= n || src_device < 0 || src_device >= n ? cudaErrorInvalidDevice
                                                                                  : cudaSuccess;
}

CUDART_API cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device, size_t count)
{
    if (peer_devices_valid(dst_device, src_device))
        return cudart_result(cudaErrorInvalidDevice);
    return memcpy_common(dst, src, count, cudaMemcpyDeviceToDevice, 1, NULL, "cudaMemcpyPeer");
}

CUDART_API cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device, size_t count,
                                           cudaStream_t stream)
{
    if (peer_devices_valid(dst_device, src_device))
        return cudart_result(cudaErrorInvalidDevice);
    return memcpy_common(dst, src, count, cudaMemcpyDeviceToDevice, 0, stream, "cudaMemcpyPeerAsync");
}

static cudaError_t memcpy2d_common(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height, int kind, int sync, cudaStream_t stream)
{
    cudart_lock();
    kemu_device *dev;
    int captured;
    struct cudaMemcpy3DParms p = copy_params(dst, dpitch, src, spitch, width, height, kind);
    cudaError_t e = capture_copy(sync, stream, cudaGraphNodeTypeMemcpy, &p, &captured);
    cudart_copy_api = sync ? "cudaMemcpy2D" : "cudaMemcpy2DAsync";
    if (!e && !captured)
        e = cudart_begin_copy(&dev, sync, stream);
    if (!e && !captured)
        e = cudart_copy_2d(dev, dst, dpitch, src, spitch, width, height, kind);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                    size_t height, int kind)
{
    return memcpy2d_common(dst, dpitch, src, spitch, width, height, kind, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                         size_t height, int kind, cudaStream_t stream)
{
    return memcpy2d_common(dst, dpitch, src, spitch, width, height, kind, 0, stream);
}

/* ---- sets ---------------------------------------------------------------------- */

static cudaError_t set_bytes(kemu_device *dev, void *dst, int value, size_t n)
{
    if (n == 0)
        return cudaSuccess;
    if (classify(dst, n) != 0)
        return cudaErrorInvalidValue;
    if (cudart_device_of(dst) >= 0) {
        cudart_wait_idle(1u << cudart_device_of(dst));
        dev = cudart_kemu_device_of(dst);
    }
    check_order_access((uint64_t)(uintptr_t)dst, n, 1);
    return kemu_memset(dev, (uint64_t)(uintptr_t)dst, value, n, NULL) ? cudaErrorInvalidValue : cudaSuccess;
}

static cudaError_t memset_common(void *dst, size_t pitch, int value, size_t width, size_t height, size_t depth,
                                 size_t slice_pitch, int sync, cudaStream_t stream)
{
    cudart_lock();
    kemu_device *dev;
    int captured = 0;
    cudaError_t e = cudaSuccess;
    for (size_t z = 0; !e && z < depth && (z == 0 || captured); z++) { /* a capture: a node per slice */
        struct cudaMemsetParams p = {(char *)dst + z * slice_pitch, pitch, (unsigned)value & 0xffu, 1, width, height};
        e = width && height ? capture_copy(sync, stream, cudaGraphNodeTypeMemset, &p, &captured) : cudaSuccess;
    }
    if (captured) {
        cudart_unlock();
        return cudart_result(e);
    }
    cudart_copy_api = stream ? "cudaMemsetAsync" : "cudaMemset";
    if (!e)
        e = cudart_begin_copy(&dev, sync, stream);
    if (!e && height > 1 && width > pitch)
        e = cudaErrorInvalidPitchValue;
    for (size_t z = 0; !e && z < depth; z++)
        for (size_t r = 0; !e && r < height; r++)
            e = set_bytes(dev, (char *)dst + z * slice_pitch + r * pitch, value, width);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    return memset_common(dst, count, value, count, 1, 1, 0, 0, NULL);
}

CUDART_API cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    return memset_common(dst, count, value, count, 1, 1, 0, 0, stream);
}

CUDART_API cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    return memset_common(dst, pitch, value, width, height, 1, 0, 0, NULL);
}

CUDART_API cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream)
{
    return memset_common(dst, pitch, value, width, height, 1, 0, 0, stream);
}

CUDART_API cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent extent)
{
    return memset_common(p.ptr, p.pitch, value, extent.width, extent.height, extent.depth, p.pitch * p.ysize, 0,
                         NULL);
}

CUDART_API cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent extent,
                                         cudaStream_t stream)
{
    return memset_common(p.ptr, p.pitch, value, extent.width, extent.height, extent.depth, p.pitch * p.ysize, 0,
                         stream);
}

/* ---- symbols --------------------------------------------------------------------- */

/* The device storage of a __device__ / __constant__ variable, given its
 * host shadow. Call locked. */
static cudaError_t symbol_lookup(const void *symbol, void **address, size_t *size)
{
    cudart_var_record *vr = cudart_ptrmap_get(&cudart_global.vars, symbol);
    if (!vr)
        return cudaErrorInvalidSymbol;
    cudaError_t e = cudart_fatbin_load(vr->fatbin);
    if (e)
        return e;
    cudart_fatbin_on *l = cudart_fatbin_here(vr->fatbin);
    for (int i = 0; i < l->nmodules; i++) {
        uint64_t a;
        size_t n;
        if (!kemu_module_get_global(l->modules[i], vr->name, &a, &n, NULL)) {
            *address = (void *)(uintptr_t)a;
            *size = n;
            return cudaSuccess;
        }
    }
    fprintf(stderr, "kemu: variable '%s' is registered but its module's PTX does not define it\n", vr->name);
    return cudaErrorInvalidSymbol;
}

static cudaError_t symbol_copy(const void *symbol, void *host, size_t count, size_t offset, int kind, int to_symbol,
                               int sync, cudaStream_t stream)
{
    cudart_lock();
    kemu_device *dev;
    void *address = NULL;
    size_t size = 0;
    cudaError_t e = cudart_device(&dev);
    if (!e)
        e = sync ? cudart_capture_unsafe() : cudaSuccess;
    if (!e) /* a fault is reported before a bad symbol, as before */
        e = sync ? cudart_synchronize() : cudart_check_sticky();
    if (!e)
        e = symbol_lookup(symbol, &address, &size);
    if (!e && (offset > size || count > size - offset))
        e = cudaErrorInvalidValue;
    if (!e) { /* on a capturing stream: a 1D copy node to or from the variable's storage */
        int captured;
        char *sym = (char *)address + offset;
        struct cudaMemcpy3DParms p = to_symbol ? copy_params(sym, count, host, count, count, 1, kind)
                                               : copy_params(host, count, sym, count, count, 1, kind);
        e = capture_copy(sync, stream, cudaGraphNodeTypeMemcpy, &p, &captured);
        if (captured) {
            cudart_unlock();
            return cudart_result(e);
        }
    }
    if (!e)
        e = cudart_begin_copy(&dev, sync, stream);
    if (!e && (offset > size || count > size - offset))
        e = cudaErrorInvalidValue;
    if (!e && kind != cudaMemcpyDefault && kind != cudaMemcpyDeviceToDevice &&
        kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
        e = cudaErrorInvalidMemcpyDirection;
    if (!e && count) {
        uint64_t sym = (uint64_t)(uintptr_t)address + offset;
        if (!host)
            e = cudaErrorInvalidValue;
        else if (kind == cudaMemcpyDeviceToDevice && classify(host, count) != 0)
            e = cudaErrorInvalidValue;
        else if (to_symbol)
            e = kemu_memcpy_htod(dev, sym, host, count, NULL) ? cudaErrorInvalidValue : cudaSuccess;
        else
            e = kemu_memcpy_dtoh(dev, host, sym, count, NULL) ? cudaErrorInvalidValue : cudaSuccess;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, int kind)
{
    return symbol_copy(symbol, (void *)src, count, offset, kind, 1, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset, int kind)
{
    return symbol_copy(symbol, dst, count, offset, kind, 0, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                               int kind, cudaStream_t stream)
{
    return symbol_copy(symbol, (void *)src, count, offset, kind, 1, 0, stream);
}

CUDART_API cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset, int kind,
                                                 cudaStream_t stream)
{
    return symbol_copy(symbol, dst, count, offset, kind, 0, 0, stream);
}

CUDART_API cudaError_t cudaGetSymbolAddress(void **device_ptr, const void *symbol)
{
    if (!device_ptr)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    kemu_device *dev;
    size_t size;
    cudaError_t e = begin(&dev);
    if (!e)
        e = symbol_lookup(symbol, device_ptr, &size);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    if (!size)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    kemu_device *dev;
    void *address;
    cudaError_t e = begin(&dev);
    if (!e)
        e = symbol_lookup(symbol, &address, size);
    cudart_unlock();
    return cudart_result(e);
}

/* the per-thread default stream variants behave the same here */
CUDART_ALIAS(cudaMemcpy_ptds, cudaMemcpy)
CUDART_ALIAS(cudaMemcpyAsync_ptsz, cudaMemcpyAsync)
CUDART_ALIAS(cudaMemcpy2D_ptds, cudaMemcpy2D)
CUDART_ALIAS(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync)
CUDART_ALIAS(cudaMemset_ptds, cudaMemset)
CUDART_ALIAS(cudaMemsetAsync_ptsz, cudaMemsetAsync)
CUDART_ALIAS(cudaMemset2D_ptds, cudaMemset2D)
CUDART_ALIAS(cudaMemset2DAsync_ptsz, cudaMemset2DAsync)
CUDART_ALIAS(cudaMemset3D_ptds, cudaMemset3D)
CUDART_ALIAS(cudaMemset3DAsync_ptsz, cudaMemset3DAsync)
CUDART_ALIAS(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol)
CUDART_ALIAS(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol)
CUDART_ALIAS(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync)
CUDART_ALIAS(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync)
CUDART_ALIAS(cudaMallocAsync_ptsz, cudaMallocAsync)
CUDART_ALIAS(cudaFreeAsync_ptsz, cudaFreeAsync)
CUDART_ALIAS(cudaMemPrefetchAsync_ptsz, cudaMemPrefetchAsync)
CUDART_ALIAS(cudaMemPrefetchAsync_v2, cudaMemPrefetchAsync)
CUDART_ALIAS(cudaMemPrefetchAsync_v2_ptsz, cudaMemPrefetchAsync)
CUDART_ALIAS(cudaMemAdvise_v2, cudaMemAdvise)
