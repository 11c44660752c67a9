/* Streams, events, host callbacks, kernel attributes and occupancy of
 * kemu's libcudart replacement. Work runs synchronously when issued, so a
 * stream is only a validated handle with its flags and priority, an event
 * is the time at which it was recorded, and callbacks run at once (on a
 * capturing stream, capture.c turns host functions, event records and
 * waits into graph structure instead). Kernel
 * attributes come from the loaded PTX; occupancy is computed from the
 * emulated architecture's per-SM limits as the real runtime computes it. */
#include "config.h"
#include "cudart/graph.h"
#include "check/check.h"
#include "exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STREAM_MAGIC 0x73747265u /* "stre" */
#define EVENT_MAGIC 0x6576656eu  /* "even" */

/* The per-thread default stream of each host thread (cudaStreamPerThread):
 * a record for its capture state. */
static _Thread_local struct CUstream_st per_thread_stream = {.magic = STREAM_MAGIC};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cudart_stream_valid(cudaStream_t stream)
{
    return !stream || stream == CUDART_STREAM_LEGACY || stream == CUDART_STREAM_PER_THREAD ||
           cudart_ptrmap_get(&cudart_global.streams, stream);
}

struct CUstream_st *cudart_stream_record(cudaStream_t stream)
{
    if (stream == CUDART_STREAM_PER_THREAD) {
        per_thread_stream.device = cudart_current(); /* the thread's stream on the current device */
        return &per_thread_stream;
    }
    return stream && stream != CUDART_STREAM_LEGACY && cudart_ptrmap_get(&cudart_global.streams, stream) ? stream
                                                                                                       : NULL;
}

static struct CUevent_st *event_of(cudaEvent_t event)
{
    return event && cudart_ptrmap_get(&cudart_global.events, event) ? event : NULL;
}

/* ---- racecheck's view of the streams (src/check/race_stream.c) ----------------- */

_Thread_local const char *cudart_copy_api;
_Thread_local int cudart_copy_open;
_Thread_local cudaStream_t cudart_order_graph_stream;
_Thread_local int cudart_order_graph;

int cudart_order_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *t = getenv("KEMU_TOOL");
        on = t && strstr(t, "racecheck");
    }
    return on;
}

/* Keys: the legacy stream of device d (1 << 60 | d), the per-thread
 * default stream of a host thread on device d (its record's address), a
 * created stream (its handle). */
void cudart_order_stream(cudaStream_t stream, int device, struct check_stream *out, char *name, size_t n)
{
    if (cudart_order_graph) /* a graph's nodes run on its launch's stream */
        stream = cudart_order_graph_stream;
    struct CUstream_st *r = cudart_stream_record(stream);
    if (!r) {
        out->key = 1ull << 60 | (uint64_t)device;
        out->kind = CHECK_STREAM_LEGACY;
        snprintf(name, n, "the legacy default stream of device %d", device);
    } else if (stream == CUDART_STREAM_PER_THREAD) {
        out->key = 2ull << 60 | (uint64_t)(uintptr_t)r << 4 | (uint64_t)device;
        out->kind = CHECK_STREAM_BLOCKING;
        snprintf(name, n, "the per-thread default stream of device %d", device);
    } else {
        device = r->device;
        out->key = 3ull << 60 | (uint64_t)(uintptr_t)r;
        out->kind = r->flags & CUDART_STREAM_NON_BLOCKING ? CHECK_STREAM_NONBLOCKING : CHECK_STREAM_BLOCKING;
        snprintf(name, n, "%sstream %llu (cudaStreamGetId) of device %d",
                 out->kind == CHECK_STREAM_NONBLOCKING ? "non-blocking " : "", r->id, device);
    }
    out->device = device;
    out->name = name;
}

void cudart_order_begin(cudaStream_t stream, int device, const char *what, int host_waits)
{
    cudart_copy_open = 0; /* a copy still pending ends here, not when the lock goes */
    if (!cudart_order_on() || device < 0 || device >= CUDART_MAX_DEVICES)
        return;
    kemu_device *kd = cudart_global.devs[device].device;
    if (!kd || !kd->checks)
        return;
    char name[128];
    check_stream st;
    cudart_order_stream(stream, device, &st, name, sizeof name);
    check_order_begin(kd->checks, &kd->mem, st.device, &st, what, host_waits);
}

void cudart_order_launch_end(kemu_device *dev)
{
    if (cudart_order_on() && dev)
        check_order_ignore(dev->cdp_pool_base, dev->cdp_pool_size);
    cudart_order_end();
}

void cudart_order_end(void)
{
    cudart_copy_open = 0;
    if (cudart_order_on())
        check_order_end();
}

/* The stream's order record for an event, stream or synchronization call. */
#define ORDER_STREAM(stream, device, st)                                                                         \
    char st##_name[128];                                                                                           \
    check_stream st;                                                                                               \
    cudart_order_stream(stream, device, &st, st##_name, sizeof st##_name)

/* ---- streams ------------------------------------------------------------------ */

CUDART_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority)
{
    static unsigned long long next_id = 1;
    if (!stream || (flags & ~CUDART_STREAM_NON_BLOCKING))
        return cudart_result(cudaErrorInvalidValue);
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return cudart_result(cudaErrorMemoryAllocation);
    s->magic = STREAM_MAGIC;
    s->flags = flags;
    s->device = cudart_current();
    s->priority = priority > 0 ? 0 : priority < -5 ? -5 : priority; /* clamped to the range, as CUDA does */
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    s->id = next_id++;
    if (!e && cudart_ptrmap_put(&cudart_global.streams, s, s))
        e = cudaErrorMemoryAllocation;
    cudart_unlock();
    if (e) {
        free(s);
        return cudart_result(e);
    }
    *stream = s;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    return cudaStreamCreateWithPriority(stream, flags, 0);
}

CUDART_API cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithPriority(stream, 0, 0);
}

CUDART_API cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    cudart_lock();
    cudaError_t e = cudaSuccess;
    if (!stream || !cudart_ptrmap_get(&cudart_global.streams, stream)) {
        e = cudaErrorInvalidResourceHandle;
    } else {
        cudart_ptrmap_remove(&cudart_global.streams, stream);
        cudart_capture_forget_stream(stream);
        if (cudart_order_on())
            check_order_forget_stream(3ull << 60 | (uint64_t)(uintptr_t)stream);
        stream->magic = 0;
        free(stream);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudart_capture_sync_stream(stream) : cudaErrorInvalidResourceHandle;
    if (!e) { /* the stream's device, once another thread's launch on it has ended */
        struct CUstream_st *r = cudart_stream_record(stream);
        int device = r ? r->device : cudart_current();
        cudart_wait_idle(1u << device);
        e = cudart_synchronize_device(device);
        if (!e && cudart_order_on()) {
            ORDER_STREAM(stream, device, st);
            check_order_stream_sync(&st);
        }
    }
    if (!e)
        cudart_pools_release();
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return cudaStreamSynchronize(stream); /* the work is always done */
}

CUDART_API cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    cudart_lock();
    cudaError_t e = !cudart_stream_valid(stream) || !event_of(event) ? cudaErrorInvalidResourceHandle
                                                                    : cudart_check_sticky();
    int handled = 0;
    if (!e)
        e = cudart_capture_event_wait(stream, event, flags, &handled);
    if (!e && !handled && cudart_order_on()) {
        ORDER_STREAM(stream, cudart_current(), st);
        check_order_event_wait(&st, (uint64_t)(uintptr_t)event);
    }
    cudart_unlock();
    return cudart_result(e);
}

/* The flags, priority and id of a valid stream, read under the runtime
 * lock (the legacy and per-thread default streams: 0, 0, 0). out: the
 * caller's result pointer (NULL: cudaErrorInvalidValue). */
static cudaError_t stream_props(cudaStream_t stream, const void *out, unsigned *flags, int *priority,
                                unsigned long long *id)
{
    if (!out)
        return cudaErrorInvalidValue;
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    int own = stream && stream != CUDART_STREAM_LEGACY && stream != CUDART_STREAM_PER_THREAD;
    *flags = !e && own ? stream->flags : 0;
    *priority = !e && own ? stream->priority : 0;
    *id = !e && own ? stream->id : 0;
    cudart_unlock();
    return e;
}

CUDART_API cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
    unsigned f;
    int p;
    unsigned long long i;
    cudaError_t e = stream_props(stream, flags, &f, &p, &i);
    if (!e)
        *flags = f;
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
    unsigned f;
    int p;
    unsigned long long i;
    cudaError_t e = stream_props(stream, priority, &f, &p, &i);
    if (!e)
        *priority = p;
    return cudart_result(e);
}

/* Stream attributes (cudaStreamSetAttribute): the slot of attrs that
 * holds attribute id, or -1 for the priority (kept in the stream's own
 * field), or -2 for an attribute streams do not take. */
static int stream_attr_slot(int id)
{
    switch (id) {
    case cudaLaunchAttributeAccessPolicyWindow: return 0;
    case cudaLaunchAttributeSynchronizationPolicy: return 1;
    case cudaLaunchAttributeMemSyncDomainMap: return 2;
    case cudaLaunchAttributeMemSyncDomain: return 3;
    case cudaLaunchAttributePriority: return -1;
    default: return -2;
    }
}

/* The attributes of the legacy default stream (the per-thread default
 * stream keeps its own in its record). */
static struct CUstream_st legacy_stream_attrs = {.magic = STREAM_MAGIC};

static struct CUstream_st *stream_for_attrs(cudaStream_t stream)
{
    if (!cudart_stream_valid(stream))
        return NULL;
    struct CUstream_st *s = cudart_stream_record(stream);
    return s ? s : &legacy_stream_attrs;
}

/* The access policy window's layout (cudaAccessPolicyWindow): base
 * pointer, bytes, hit ratio, hit and miss properties. */
typedef struct stream_access_window {
    void *base_ptr;
    size_t num_bytes;
    float hit_ratio;
    int hit_prop, miss_prop;
} stream_access_window;

CUDART_API cudaError_t cudaStreamSetAttribute(cudaStream_t stream, int attr, const cudaLaunchAttributeValue *value)
{
    int slot = stream_attr_slot(attr);
    if (!value || slot == -2)
        return cudart_result(cudaErrorInvalidValue);
    if (attr == cudaLaunchAttributeAccessPolicyWindow) {
        stream_access_window w;
        memcpy(&w, value, sizeof w);
        /* properties: normal 0, streaming 1, persisting 2; a miss cannot
         * persist */
        if (!(w.hit_ratio >= 0.0f && w.hit_ratio <= 1.0f) || w.hit_prop < 0 || w.hit_prop > 2 ||
            w.miss_prop < 0 || w.miss_prop > 1 || w.num_bytes > (size_t)CUDART_ACCESS_POLICY_MAX_WINDOW)
            return cudart_result(cudaErrorInvalidValue);
    } else if (attr == cudaLaunchAttributeSynchronizationPolicy) {
        int policy;
        memcpy(&policy, value, sizeof policy);
        if (policy < 1 || policy > 4) /* auto, spin, yield, blocking sync */
            return cudart_result(cudaErrorInvalidValue);
    } else if (attr == cudaLaunchAttributeMemSyncDomain) {
        int domain;
        memcpy(&domain, value, sizeof domain);
        if (domain < 0 || domain > 1) /* default, remote */
            return cudart_result(cudaErrorInvalidValue);
    }
    cudart_lock();
    struct CUstream_st *s = stream_for_attrs(stream);
    cudaError_t e = s ? cudaSuccess : cudaErrorInvalidResourceHandle;
    if (s && slot >= 0)
        s->attrs[slot] = *value;
    else if (s)
        s->priority = value->priority > 0 ? 0 : value->priority < -5 ? -5 : value->priority;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamGetAttribute(cudaStream_t stream, int attr, cudaLaunchAttributeValue *value)
{
    int slot = stream_attr_slot(attr);
    if (!value || slot == -2)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUstream_st *s = stream_for_attrs(stream);
    cudaError_t e = s ? cudaSuccess : cudaErrorInvalidResourceHandle;
    if (s && slot >= 0) {
        *value = s->attrs[slot];
        if (attr == cudaLaunchAttributeSynchronizationPolicy && value->priority == 0)
            value->priority = 1; /* cudaSyncPolicyAuto until set */
    } else if (s) {
        memset(value, 0, sizeof *value);
        value->priority = s->priority;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_ALIAS(cudaStreamSetAttribute_ptsz, cudaStreamSetAttribute)

/* The L2 lines marked persisting go back to normal: kemu has no L2, so
 * there is nothing to reset. */
CUDART_API cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    cudart_unlock();
    return cudart_result(e);
}
CUDART_ALIAS(cudaStreamGetAttribute_ptsz, cudaStreamGetAttribute)

CUDART_API cudaError_t cudaStreamGetDevice(cudaStream_t stream, int *device)
{
    unsigned f;
    int p;
    unsigned long long i;
    cudaError_t e = stream_props(stream, device, &f, &p, &i);
    if (!e) {
        cudart_lock();
        struct CUstream_st *r = cudart_stream_record(stream);
        *device = r ? r->device : cudart_current();
        cudart_unlock();
    }
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long *id)
{
    unsigned f;
    int p;
    unsigned long long i;
    cudaError_t e = stream_props(stream, id, &f, &p, &i);
    if (!e)
        *id = i;
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *user_data,
                                             unsigned int flags)
{
    if (!callback || flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    int capturing = e ? 0 : cudart_capture_stream(stream, &e);
    if (capturing == 1) /* CUDA does not capture stream callbacks */
        e = cudart_capture_refuse(stream);
    if (!e) {
        cudart_flush_printf();
        callback(stream, cudart_check_sticky(), user_data);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user_data)
{
    if (!fn)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudart_check_sticky() : cudaErrorInvalidResourceHandle;
    int capturing = e ? 0 : cudart_capture_stream(stream, &e);
    if (capturing == 1) {
        struct cudaHostNodeParams params = {fn, user_data};
        e = cudart_capture_node(stream, cudaGraphNodeTypeHost, &params, NULL);
    } else if (!e) {
        cudart_flush_printf();
        fn(user_data);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *ptr, size_t length, unsigned int flags)
{
    (void)ptr, (void)length, (void)flags;
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    cudart_unlock();
    return cudart_result(e);
}

/* ---- events ---------------------------------------------------------------------- */

CUDART_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event || (flags & ~(CUDART_EVENT_BLOCKING_SYNC | CUDART_EVENT_DISABLE_TIMING | CUDART_EVENT_INTERPROCESS)))
        return cudart_result(cudaErrorInvalidValue);
    if ((flags & CUDART_EVENT_INTERPROCESS) && !(flags & CUDART_EVENT_DISABLE_TIMING))
        return cudart_result(cudaErrorInvalidValue);
    struct CUevent_st *ev = calloc(1, sizeof *ev);
    if (!ev)
        return cudart_result(cudaErrorMemoryAllocation);
    ev->magic = EVENT_MAGIC;
    ev->device = cudart_current();
    ev->flags = flags;
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    if (!e && cudart_ptrmap_put(&cudart_global.events, ev, ev))
        e = cudaErrorMemoryAllocation;
    cudart_unlock();
    if (e) {
        free(ev);
        return cudart_result(e);
    }
    *event = ev;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, 0);
}

CUDART_API cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    cudart_lock();
    struct CUevent_st *ev = event_of(event);
    if (ev) {
        cudart_ptrmap_remove(&cudart_global.events, ev);
        cudart_capture_forget_event(ev);
        if (cudart_order_on())
            check_order_forget_event((uint64_t)(uintptr_t)ev);
        ev->magic = 0;
        free(ev);
    }
    cudart_unlock();
    return ev ? cudaSuccess : cudart_result(cudaErrorInvalidResourceHandle);
}

CUDART_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    cudart_lock();
    struct CUevent_st *ev = event_of(event);
    cudaError_t e = ev && cudart_stream_valid(stream) ? cudart_check_sticky() : cudaErrorInvalidResourceHandle;
    int handled = 0;
    if (!e && (flags & ~CUDART_EVENT_RECORD_EXTERNAL))
        e = cudaErrorInvalidValue;
    if (!e)
        e = cudart_capture_event_record(ev, stream, flags, &handled);
    if (!e && !handled) {
        ev->recorded = 1;
        ev->milliseconds = now_ms();
        if (cudart_order_on()) {
            ORDER_STREAM(stream, cudart_current(), st);
            check_order_event_record((uint64_t)(uintptr_t)ev, &st);
        }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return cudaEventRecordWithFlags(event, stream, 0);
}

CUDART_API cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    cudart_lock();
    cudaError_t e = event_of(event) ? cudart_capture_sync_event(event) : cudaErrorInvalidResourceHandle;
    if (!e) {
        struct CUevent_st *ev = event_of(event);
        cudart_wait_idle(1u << ev->device);
        e = cudart_synchronize_device(ev->device);
        if (!e && cudart_order_on())
            check_order_event_sync((uint64_t)(uintptr_t)ev);
    }
    if (!e)
        cudart_pools_release();
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return cudaEventSynchronize(event); /* the recorded work is always done */
}

CUDART_API cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUevent_st *a = event_of(start), *b = event_of(end);
    cudaError_t e = cudaSuccess;
    if (!a || !b || ((a->flags | b->flags) & CUDART_EVENT_DISABLE_TIMING) || !a->recorded || !b->recorded)
        e = cudaErrorInvalidResourceHandle;
    else
        e = cudart_check_sticky();
    if (!e)
        *ms = (float)(b->milliseconds - a->milliseconds);
    cudart_unlock();
    return cudart_result(e);
}

/* ---- kernel attributes ---------------------------------------------------------- */

/* The resolved record of a kernel (host stub or cudaKernel_t). Locked. */
static cudaError_t kernel_of(const void *function, cudart_kernel_record **out)
{
    cudart_kernel_record *kr = cudart_find_kernel(function);
    if (!kr)
        return CUDART_ERROR_NOT_A_KERNEL;
    cudaError_t e = cudart_kernel_resolve(kr);
    if (e)
        return e;
    *out = kr;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaFuncSetAttribute(const void *function, int attr, int value)
{
    cudart_lock();
    cudart_kernel_record *kr = NULL;
    cudaError_t e = kernel_of(function, &kr);
    cudart_arch_info arch;
    cudart_kernel_info info;
    if (!e) {
        cudart_arch_for_sm(cudart_global.device_sm, &arch);
        cudart_kernel_introspect(kr->kernel, &info);
    }
    if (!e) {
        switch (attr) {
        case cudaFuncAttributeMaxDynamicSharedMemorySize:
            if (value < 0 || (size_t)value + info.static_shared > arch.shared_optin)
                e = cudaErrorInvalidValue;
            else
                kr->max_dynamic_shared = value;
            break;
        case cudaFuncAttributePreferredSharedMemoryCarveout:
            if (value < -1 || value > 100)
                e = cudaErrorInvalidValue;
            else
                kr->carveout = value;
            break;
        case cudaFuncAttributeRequiredClusterWidth:
        case cudaFuncAttributeRequiredClusterHeight:
        case cudaFuncAttributeRequiredClusterDepth:
            if (value < 0 || !arch.has_clusters)
                e = cudaErrorInvalidValue;
            else
                kr->required_cluster[attr - cudaFuncAttributeRequiredClusterWidth] = value;
            break;
        case cudaFuncAttributeNonPortableClusterSizeAllowed:
            kr->non_portable_cluster = value != 0;
            break;
        case cudaFuncAttributeClusterDimMustBeSet:
        case cudaFuncAttributeClusterSchedulingPolicyPreference:
            break;
        default:
            e = cudaErrorInvalidValue;
        }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *function)
{
    if (!attr)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudart_kernel_record *kr = NULL;
    cudaError_t e = kernel_of(function, &kr);
    if (!e) {
        cudart_arch_info arch;
        cudart_kernel_info info;
        cudart_arch_for_sm(cudart_global.device_sm, &arch);
        cudart_kernel_introspect(kr->kernel, &info);
        memset(attr, 0, sizeof *attr);
        attr->sharedSizeBytes = info.static_shared;
        attr->constSizeBytes = info.const_bytes;
        attr->localSizeBytes = info.local_bytes;
        attr->maxThreadsPerBlock = info.max_threads ? info.max_threads : arch.max_threads_per_block;
        attr->numRegs = 32; /* kemu has no register allocation; a typical count */
        attr->ptxVersion = (int)kr->fatbin->ptx_sm;
        attr->binaryVersion = (int)kr->fatbin->ptx_sm;
        attr->maxDynamicSharedSizeBytes =
            kr->max_dynamic_shared >= 0 ? kr->max_dynamic_shared
            : arch.shared_default > info.static_shared ? (int)(arch.shared_default - info.static_shared) : 0;
        attr->preferredShmemCarveout = kr->carveout;
        attr->requiredClusterWidth = kr->required_cluster[0];
        attr->requiredClusterHeight = kr->required_cluster[1];
        attr->requiredClusterDepth = kr->required_cluster[2];
        attr->nonPortableClusterSizeAllowed = kr->non_portable_cluster;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaFuncSetCacheConfig(const void *function, int config)
{
    (void)config;
    cudart_lock();
    cudaError_t e = cudart_find_kernel(function) ? cudaSuccess : CUDART_ERROR_NOT_A_KERNEL;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaFuncSetSharedMemConfig(const void *function, int config)
{
    return cudaFuncSetCacheConfig(function, config);
}

CUDART_API cudaError_t cudaFuncGetName(const char **name, const void *function)
{
    if (!name)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(function);
    if (kr)
        *name = kr->name;
    cudart_unlock();
    return kr ? cudaSuccess : cudart_result(CUDART_ERROR_NOT_A_KERNEL);
}

/* ---- occupancy -------------------------------------------------------------------- */

/* Resident blocks per SM for a block size and dynamic shared memory, as
 * limited by threads, blocks, shared memory and (assumed 32) registers. */
static int blocks_per_sm(const cudart_kernel_info *info, int block_size, size_t dynamic_shared)
{
    return cudart_arch_blocks_per_sm(cudart_global.device_sm ? cudart_global.device_sm : 80, block_size,
                                     info->static_shared + dynamic_shared);
}

CUDART_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *num_blocks, const void *function,
                                                                              int block_size, size_t dynamic_shared,
                                                                              unsigned int flags)
{
    if (!num_blocks || block_size <= 0 || flags > 1)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudart_kernel_record *kr = NULL;
    cudaError_t e = kernel_of(function, &kr);
    if (!e) {
        cudart_kernel_info info;
        cudart_kernel_introspect(kr->kernel, &info);
        *num_blocks = blocks_per_sm(&info, block_size, dynamic_shared);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num_blocks, const void *function,
                                                                     int block_size, size_t dynamic_shared)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks, function, block_size, dynamic_shared,
                                                                  0);
}

CUDART_API cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamic_shared, const void *function,
                                                                 int num_blocks, int block_size)
{
    if (!dynamic_shared || num_blocks <= 0 || block_size <= 0)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudart_kernel_record *kr = NULL;
    cudaError_t e = kernel_of(function, &kr);
    if (!e) {
        cudaDeviceProp p;
        cudart_kernel_info info;
        cudart_fill_properties(&p);
        cudart_kernel_introspect(kr->kernel, &info);
        size_t per_block = p.sharedMemPerMultiprocessor / (size_t)num_blocks;
        size_t used = info.static_shared + p.reservedSharedMemPerBlock;
        size_t avail = per_block > used ? per_block - used : 0;
        if (avail > p.sharedMemPerBlockOptin - info.static_shared)
            avail = p.sharedMemPerBlockOptin - info.static_shared;
        *dynamic_shared = blocks_per_sm(&info, block_size, 0) >= num_blocks ? avail : 0;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_ALIAS(cudaStreamSynchronize_ptsz, cudaStreamSynchronize)
CUDART_ALIAS(cudaStreamQuery_ptsz, cudaStreamQuery)
CUDART_ALIAS(cudaStreamWaitEvent_ptsz, cudaStreamWaitEvent)
CUDART_ALIAS(cudaStreamGetFlags_ptsz, cudaStreamGetFlags)
CUDART_ALIAS(cudaStreamGetPriority_ptsz, cudaStreamGetPriority)
CUDART_ALIAS(cudaStreamGetDevice_ptsz, cudaStreamGetDevice)
CUDART_ALIAS(cudaStreamGetId_ptsz, cudaStreamGetId)
CUDART_ALIAS(cudaStreamAddCallback_ptsz, cudaStreamAddCallback)
CUDART_ALIAS(cudaLaunchHostFunc_ptsz, cudaLaunchHostFunc)
CUDART_ALIAS(cudaStreamAttachMemAsync_ptsz, cudaStreamAttachMemAsync)
CUDART_ALIAS(cudaEventRecord_ptsz, cudaEventRecord)
CUDART_ALIAS(cudaEventElapsedTime_v2, cudaEventElapsedTime)
CUDART_ALIAS(cudaEventRecordWithFlags_ptsz, cudaEventRecordWithFlags)
