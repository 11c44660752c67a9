/* Stream-ordered memory of kemu's libcudart replacement: memory pools
 * (the device's default pool, pools made by cudaMemPoolCreate, the
 * device's current pool that cudaMallocAsync uses), their attributes and
 * trimming, and the memory of graph allocation nodes. A pool keeps the
 * blocks freed by cudaFreeAsync and hands them out again (on the stream
 * that freed them, or on any stream when opportunistic reuse is allowed
 * or a synchronization has passed), and gives back to kemu what lies above
 * its release threshold at each stream, event or device synchronization,
 * as CUDA's pools do; the attributes report those bytes. Under `kemu exec
 * --tool` freed blocks are given back at once, so that the checkers see
 * every use after cudaFreeAsync. */
#include "config.h"
#include "cudart/graph.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MAGIC 0x706f6f6cu /* "pool" */

typedef struct pool_block {
    uint64_t base;
    size_t size;
    cudaStream_t stream; /* where it was freed */
    int synced;          /* a synchronization passed since: reusable anywhere */
} pool_block;

struct CUmemPoolHandle_st {
    unsigned magic;
    int is_default;
    int destroyed; /* cudaMemPoolDestroy'ed with allocations outstanding */
    struct cudaMemPoolProps props;
    uint64_t release_threshold;
    int reuse_follow_events, reuse_opportunistic, reuse_internal;
    int access; /* enum cudaMemAccessFlags of device 0 */
    size_t used, used_high, reserved, reserved_high;
    pool_block *blocks; /* freed blocks kept for reuse, oldest first */
    size_t nblocks, capblocks;
};

/* What the pool knows of one of its allocations (pool_allocations). */
typedef struct pool_allocation {
    struct CUmemPoolHandle_st *pool;
    size_t size;
} pool_allocation;

/* A graph allocation node's memory (graph_memory). */
typedef struct graph_block {
    size_t size;
} graph_block;

static struct CUmemPoolHandle_st *default_pool, *current_pool;
static cudart_ptrmap pool_allocations; /* address -> pool_allocation */
static cudart_ptrmap graph_memory;     /* address -> graph_block */
static size_t graph_reserved, graph_reserved_high, graph_used_high;

/* Whether kemu exec runs checkers (then pools keep nothing). */
static int checking(void)
{
    const char *tools = getenv("KEMU_TOOL");
    return tools && *tools;
}

static struct CUmemPoolHandle_st *pool_of(cudaMemPool_t pool)
{
    return pool && cudart_ptrmap_get(&cudart_global.pools, pool) ? pool : NULL;
}

static cudaError_t pool_new(const struct cudaMemPoolProps *props, int is_default, struct CUmemPoolHandle_st **out)
{
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (!p)
        return cudaErrorMemoryAllocation;
    p->magic = POOL_MAGIC;
    p->is_default = is_default;
    p->props = *props;
    p->reuse_follow_events = p->reuse_opportunistic = p->reuse_internal = 1;
    p->access = cudaMemAccessFlagsProtReadWrite;
    if (cudart_ptrmap_put(&cudart_global.pools, p, p)) {
        free(p);
        return cudaErrorMemoryAllocation;
    }
    *out = p;
    return cudaSuccess;
}

static struct cudaMemPoolProps device_props(void)
{
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    return props;
}

/* The device's default pool, made on first use. Locked. */
static struct CUmemPoolHandle_st *the_default_pool(void)
{
    if (!default_pool) {
        struct cudaMemPoolProps props = device_props();
        if (pool_new(&props, 1, &default_pool))
            return NULL;
    }
    return default_pool;
}

static void note_high(struct CUmemPoolHandle_st *p)
{
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

/* Gives kept blocks back to kemu, oldest first, until at most `keep`
 * bytes stay reserved. Locked. */
static void pool_trim(struct CUmemPoolHandle_st *p, size_t keep)
{
    size_t i = 0;
    while (i < p->nblocks && p->reserved > keep) {
        kemu_device *dev = cudart_kemu_device_of((void *)(uintptr_t)p->blocks[i].base);
        if (dev)
            kemu_free(dev, p->blocks[i].base, NULL);
        p->reserved -= p->blocks[i].size;
        i++;
    }
    memmove(p->blocks, p->blocks + i, (p->nblocks - i) * sizeof *p->blocks);
    p->nblocks -= i;
}

static void pool_free_record(struct CUmemPoolHandle_st *p)
{
    free(p->blocks);
    p->magic = 0;
    free(p);
}

void cudart_pools_release(void)
{
    cudart_ptrmap *m = &cudart_global.pools;
    for (size_t i = 0; i < m->cap; i++) {
        struct CUmemPoolHandle_st *p = m->keys[i] ? m->values[i] : NULL;
        if (!p)
            continue;
        pool_trim(p, p->release_threshold);
        for (size_t b = 0; b < p->nblocks; b++)
            p->blocks[b].synced = 1;
    }
}

static size_t graph_used(void);

size_t cudart_pools_reserved_unused(void)
{
    size_t bytes = graph_reserved - graph_used();
    cudart_ptrmap *m = &cudart_global.pools;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            const struct CUmemPoolHandle_st *p = m->values[i];
            bytes += p->reserved - p->used;
        }
    return bytes;
}

void cudart_pools_reset(void)
{
    cudart_ptrmap *m = &cudart_global.pools;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            struct CUmemPoolHandle_st *p = m->values[i];
            p->nblocks = 0; /* the memory went with the device */
            p->used = p->reserved = 0;
        }
    for (size_t i = 0; i < pool_allocations.cap; i++)
        if (pool_allocations.keys[i])
            free(pool_allocations.values[i]);
    cudart_ptrmap_free(&pool_allocations); /* (destroyed pools still owed allocations stay allocated) */
    for (size_t i = 0; i < graph_memory.cap; i++)
        if (graph_memory.keys[i])
            free(graph_memory.values[i]);
    cudart_ptrmap_free(&graph_memory);
    graph_reserved = 0;
}

/* ---- allocation ------------------------------------------------------------------ */

cudaError_t cudart_pool_allocate(cudaMemPool_t pool, void **ptr, size_t size, cudaStream_t stream)
{
    if (!ptr)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool ? pool_of(pool) : current_pool ? current_pool : the_default_pool();
    cudaError_t e = !p ? cudaErrorInvalidValue : cudart_stream_valid(stream) ? cudaSuccess
                                                                            : cudaErrorInvalidResourceHandle;
    int capturing = e ? 0 : cudart_capture_stream(stream, &e);
    kemu_device *dev = NULL;
    if (capturing == 1) { /* a graph allocation node */
        struct cudaMemAllocNodeParams params;
        memset(&params, 0, sizeof params);
        params.poolProps = p->props;
        params.bytesize = size;
        e = size ? cudart_capture_node(stream, cudaGraphNodeTypeMemAlloc, &params, NULL) : cudaErrorInvalidValue;
        if (!e)
            *ptr = params.dptr;
        cudart_unlock();
        return cudart_result(e);
    }
    if (!e)
        e = cudart_device(&dev);
    if (!e)
        e = cudart_check_sticky();
    if (!e && size == 0) {
        *ptr = NULL;
        cudart_unlock();
        return cudaSuccess;
    }
    uint64_t address = 0;
    size_t block = 0;
    for (size_t i = 0; !e && i < p->nblocks; i++) {
        pool_block *b = &p->blocks[i];
        if (b->size >= size && b->size / 2 <= size &&
            (b->synced || b->stream == stream || p->reuse_opportunistic)) {
            address = b->base;
            block = b->size;
            memmove(b, b + 1, (p->nblocks - i - 1) * sizeof *b);
            p->nblocks--;
            break;
        }
    }
    if (!e && !address) {
        if ((p->props.maxSize && p->reserved + size > p->props.maxSize) ||
            size > cudart_device_memory_bytes() - cudart_global.bytes_allocated ||
            kemu_malloc(dev, size, cudart_global.uninit, &address, NULL))
            e = cudaErrorMemoryAllocation;
        else {
            block = size;
            p->reserved += size;
        }
    }
    pool_allocation *rec = e ? NULL : malloc(sizeof *rec);
    if (!e && (!rec || cudart_allocation_add(address, size, CUDART_MEM_DEVICE))) {
        e = cudaErrorMemoryAllocation;
    } else if (!e && cudart_ptrmap_put(&pool_allocations, (void *)(uintptr_t)address, rec)) {
        cudart_allocation_remove(address);
        e = cudaErrorMemoryAllocation;
    }
    if (e && address) {
        kemu_free(dev, address, NULL);
        p->reserved -= block;
        free(rec);
    } else if (!e) {
        rec->pool = p;
        rec->size = block;
        p->used += block;
        note_high(p);
        *ptr = (void *)(uintptr_t)address;
    }
    cudart_trace("pool allocate %zu bytes -> %s %p", size, cudart_error_name(e), e ? NULL : *ptr);
    cudart_unlock();
    return cudart_result(e);
}

int cudart_pool_free(void *ptr, cudaStream_t stream, cudaError_t *err)
{
    pool_allocation *rec = ptr ? cudart_ptrmap_get(&pool_allocations, ptr) : NULL;
    if (!rec)
        return 1;
    *err = cudart_check_sticky();
    if (*err)
        return 0;
    uint64_t address = (uint64_t)(uintptr_t)ptr;
    struct CUmemPoolHandle_st *p = rec->pool;
    size_t size = rec->size;
    cudart_ptrmap_remove(&pool_allocations, ptr);
    free(rec);
    cudart_allocation_remove(address);
    p->used -= size;
    pool_block *grown = NULL;
    if (!checking() && !p->destroyed && p->nblocks == p->capblocks) {
        size_t cap = p->capblocks ? p->capblocks * 2 : 16;
        grown = realloc(p->blocks, cap * sizeof *grown);
        if (grown) {
            p->blocks = grown;
            p->capblocks = cap;
        }
    }
    if (checking() || p->destroyed || p->nblocks == p->capblocks) {
        kemu_device *dev = cudart_kemu_device_of((void *)(uintptr_t)address);
        if (dev)
            kemu_free(dev, address, NULL);
        p->reserved -= size;
    } else {
        p->blocks[p->nblocks++] = (pool_block){address, size, stream, 0};
    }
    if (p->destroyed && !p->used)
        pool_free_record(p);
    return 0;
}

/* ---- graph memory ------------------------------------------------------------------ */

cudaError_t cudart_graph_memory_reserve(size_t size, void **dptr)
{
    kemu_device *dev;
    cudaError_t e = cudart_device(&dev);
    uint64_t address = 0;
    graph_block *g = e ? NULL : malloc(sizeof *g);
    if (!e && !g)
        e = cudaErrorMemoryAllocation;
    if (!e && kemu_malloc(dev, size, cudart_global.uninit, &address, NULL))
        e = cudaErrorMemoryAllocation;
    if (!e && cudart_ptrmap_put(&graph_memory, (void *)(uintptr_t)address, g)) {
        kemu_free(dev, address, NULL);
        e = cudaErrorMemoryAllocation;
    }
    if (e) {
        free(g);
        return e;
    }
    g->size = size;
    graph_reserved += size;
    if (graph_reserved > graph_reserved_high)
        graph_reserved_high = graph_reserved;
    *dptr = (void *)(uintptr_t)address;
    return cudaSuccess;
}

int cudart_graph_memory_known(const void *dptr)
{
    return dptr && cudart_ptrmap_get(&graph_memory, dptr) != NULL;
}

/* Bytes of graph memory live now. */
static size_t graph_used(void)
{
    size_t used = 0;
    for (size_t i = 0; i < graph_memory.cap; i++)
        if (graph_memory.keys[i]) {
            const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)graph_memory.keys[i], 0);
            if (a && a->kind == CUDART_MEM_GRAPH)
                used += ((graph_block *)graph_memory.values[i])->size;
        }
    return used;
}

cudaError_t cudart_graph_memory_set_live(void *dptr, int live)
{
    graph_block *g = cudart_ptrmap_get(&graph_memory, dptr);
    if (!g)
        return cudaErrorInvalidValue;
    uint64_t address = (uint64_t)(uintptr_t)dptr;
    const cudart_allocation *a = cudart_allocation_find(address, 0);
    int is_live = a && a->base == address && a->kind == CUDART_MEM_GRAPH;
    if (live && !is_live && cudart_allocation_add(address, g->size, CUDART_MEM_GRAPH))
        return cudaErrorMemoryAllocation;
    if (!live && is_live)
        cudart_allocation_remove(address);
    size_t used = graph_used();
    if (used > graph_used_high)
        graph_used_high = used;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceGetGraphMemAttribute(int device, int attr, void *value)
{
    if (device != 0)
        return cudart_result(cudaErrorInvalidDevice);
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudaError_t e = cudaSuccess;
    uint64_t v = 0;
    switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent: v = graph_used(); break;
    case cudaGraphMemAttrUsedMemHigh: v = graph_used_high; break;
    case cudaGraphMemAttrReservedMemCurrent: v = graph_reserved; break;
    case cudaGraphMemAttrReservedMemHigh: v = graph_reserved_high; break;
    default: e = cudaErrorInvalidValue;
    }
    if (!e)
        memcpy(value, &v, sizeof v);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaDeviceSetGraphMemAttribute(int device, int attr, void *value)
{
    if (device != 0)
        return cudart_result(cudaErrorInvalidDevice);
    uint64_t v = 0;
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    memcpy(&v, value, sizeof v);
    if (v != 0 || (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    if (attr == cudaGraphMemAttrUsedMemHigh)
        graph_used_high = graph_used();
    else
        graph_reserved_high = graph_reserved;
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceGraphMemTrim(int device)
{
    /* graph memory keeps its addresses for the graphs' lifetime: nothing to give back */
    return device == 0 ? cudaSuccess : cudart_result(cudaErrorInvalidDevice);
}

/* ---- pools ----------------------------------------------------------------------------- */

CUDART_API cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream)
{
    if (!pool)
        return cudart_result(cudaErrorInvalidValue);
    return cudart_pool_allocate(pool, ptr, size, stream);
}

CUDART_API cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    if (!pool)
        return cudart_result(cudaErrorInvalidValue);
    if (device != 0)
        return cudart_result(cudaErrorInvalidDevice);
    cudart_lock();
    *pool = the_default_pool();
    cudart_unlock();
    return cudart_result(*pool ? cudaSuccess : cudaErrorMemoryAllocation);
}

CUDART_API cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    if (!pool)
        return cudart_result(cudaErrorInvalidValue);
    if (device != 0)
        return cudart_result(cudaErrorInvalidDevice);
    cudart_lock();
    *pool = current_pool ? current_pool : the_default_pool();
    cudart_unlock();
    return cudart_result(*pool ? cudaSuccess : cudaErrorMemoryAllocation);
}

CUDART_API cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    if (device != 0)
        return cudart_result(cudaErrorInvalidDevice);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    if (p)
        current_pool = p;
    cudart_unlock();
    return cudart_result(p ? cudaSuccess : cudaErrorInvalidValue);
}

/* CUDA 13's location-based forms: device 0's pinned pools only. */
static cudaError_t device_location(const struct cudaMemLocation *location, int type)
{
    if (!location || type != cudaMemAllocationTypePinned)
        return cudaErrorInvalidValue;
    if (location->type != cudaMemLocationTypeDevice)
        return cudaErrorNotSupported;
    return location->id == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

CUDART_API cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t *pool, struct cudaMemLocation *location, int type)
{
    cudaError_t e = device_location(location, type);
    return e ? cudart_result(e) : cudaDeviceGetDefaultMemPool(pool, 0);
}

CUDART_API cudaError_t cudaMemGetMemPool(cudaMemPool_t *pool, struct cudaMemLocation *location, int type)
{
    cudaError_t e = device_location(location, type);
    return e ? cudart_result(e) : cudaDeviceGetMemPool(pool, 0);
}

CUDART_API cudaError_t cudaMemSetMemPool(struct cudaMemLocation *location, int type, cudaMemPool_t pool)
{
    cudaError_t e = device_location(location, type);
    return e ? cudart_result(e) : cudaDeviceSetMemPool(0, pool);
}

CUDART_API cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    if (!pool || !props || props->allocType != cudaMemAllocationTypePinned)
        return cudart_result(cudaErrorInvalidValue);
    if (props->location.type != cudaMemLocationTypeDevice)
        return cudart_result(cudaErrorNotSupported);
    if (props->location.id != 0)
        return cudart_result(cudaErrorInvalidDevice);
    cudart_lock();
    struct CUmemPoolHandle_st *p = NULL;
    cudaError_t e = cudart_check_sticky();
    if (!e)
        e = pool_new(props, 0, &p);
    if (!e)
        *pool = p;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    cudaError_t e = !p || p->is_default ? cudaErrorInvalidValue : cudaSuccess;
    if (!e) {
        if (current_pool == p)
            current_pool = NULL;
        pool_trim(p, 0);
        cudart_ptrmap_remove(&cudart_global.pools, p);
        if (p->used) /* released when its last allocation is freed */
            p->destroyed = 1;
        else
            pool_free_record(p);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    if (p)
        pool_trim(p, keep);
    cudart_unlock();
    return cudart_result(p ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    cudaError_t e = p ? cudaSuccess : cudaErrorInvalidValue;
    uint64_t v = 0;
    if (!e && (attr == cudaMemPoolAttrReleaseThreshold || attr >= cudaMemPoolAttrReservedMemCurrent))
        memcpy(&v, value, sizeof v);
    if (!e) {
        switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies: p->reuse_follow_events = *(int *)value != 0; break;
        case cudaMemPoolReuseAllowOpportunistic: p->reuse_opportunistic = *(int *)value != 0; break;
        case cudaMemPoolReuseAllowInternalDependencies: p->reuse_internal = *(int *)value != 0; break;
        case cudaMemPoolAttrReleaseThreshold: p->release_threshold = v; break;
        case cudaMemPoolAttrReservedMemHigh: /* only a reset to the current value */
            if (v)
                e = cudaErrorInvalidValue;
            else
                p->reserved_high = p->reserved;
            break;
        case cudaMemPoolAttrUsedMemHigh:
            if (v)
                e = cudaErrorInvalidValue;
            else
                p->used_high = p->used;
            break;
        default:
            e = cudaErrorInvalidValue;
        }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, int attr, void *value)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    cudaError_t e = p ? cudaSuccess : cudaErrorInvalidValue;
    uint64_t v = 0;
    int flag = -1;
    if (!e) {
        switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies: flag = p->reuse_follow_events; break;
        case cudaMemPoolReuseAllowOpportunistic: flag = p->reuse_opportunistic; break;
        case cudaMemPoolReuseAllowInternalDependencies: flag = p->reuse_internal; break;
        case cudaMemPoolAttrReleaseThreshold: v = p->release_threshold; break;
        case cudaMemPoolAttrReservedMemCurrent: v = p->reserved; break;
        case cudaMemPoolAttrReservedMemHigh: v = p->reserved_high; break;
        case cudaMemPoolAttrUsedMemCurrent: v = p->used; break;
        case cudaMemPoolAttrUsedMemHigh: v = p->used_high; break;
        default: e = cudaErrorInvalidValue;
        }
    }
    if (!e && flag >= 0)
        *(int *)value = flag;
    else if (!e)
        memcpy(value, &v, sizeof v);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *descs, size_t count)
{
    if (count && !descs)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    cudaError_t e = p ? cudaSuccess : cudaErrorInvalidValue;
    for (size_t i = 0; !e && i < count; i++) {
        if (descs[i].location.type != cudaMemLocationTypeDevice || descs[i].location.id != 0)
            e = cudaErrorInvalidDevice;
        else if (descs[i].flags != cudaMemAccessFlagsProtReadWrite) /* the owner keeps its access */
            e = cudaErrorInvalidValue;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemPoolGetAccess(int *flags, cudaMemPool_t pool, struct cudaMemLocation *location)
{
    if (!flags || !location)
        return cudart_result(cudaErrorInvalidValue);
    if (location->type != cudaMemLocationTypeDevice || location->id != 0)
        return cudart_result(cudaErrorInvalidDevice);
    cudart_lock();
    struct CUmemPoolHandle_st *p = pool_of(pool);
    if (p)
        *flags = p->access;
    cudart_unlock();
    return cudart_result(p ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_ALIAS(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync)
