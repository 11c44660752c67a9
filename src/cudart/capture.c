/* Stream capture in kemu's libcudart replacement: cudaStreamBeginCapture
 * (to a new graph or an existing one) and cudaStreamEndCapture, capture
 * status and information, the per-thread capture interaction mode, and the
 * hooks that the enqueueing API calls ask before running their work (a
 * capturing stream turns the work into a graph node that depends on the
 * stream's previous captured work). Streams join a capture by waiting on
 * an event recorded in it, and must be joined back into the origin stream
 * before the capture ends. What CUDA forbids during a capture (synchronous
 * and potentially unsafe calls under the global and thread-local modes,
 * the legacy stream while a blocking stream captures, synchronizing a
 * capturing stream or a captured event) fails with CUDA's error and
 * invalidates the capture, which cudaStreamEndCapture then reports. */
#include "config.h"
#include "cudart/graph.h"

#include <stdlib.h>
#include <string.h>

typedef struct cudart_capture {
    unsigned long long id;
    struct CUgraph_st *graph;
    int owns_graph; /* cudaStreamBeginCapture (not ...ToGraph): free it if the capture fails */
    int mode;       /* enum cudaStreamCaptureMode */
    int invalidated;
    pthread_t thread;
    struct CUstream_st *origin;
    struct CUstream_st **streams; /* every stream taking part, origin included */
    size_t nstreams, capstreams;
    struct cudart_capture *next;
} cudart_capture;

static cudart_capture *active;              /* the capture sequences in progress */
static unsigned long long next_capture_id = 1;
static _Thread_local int thread_mode = cudaStreamCaptureModeGlobal;

/* ---- stream bookkeeping ------------------------------------------------------ */

static int reserve_deps(struct CUstream_st *s, size_t n)
{
    if (n <= s->capcapture_deps)
        return 0;
    size_t cap = s->capcapture_deps ? s->capcapture_deps : 4;
    while (cap < n)
        cap *= 2;
    cudaGraphNode_t *deps = realloc(s->capture_deps, cap * sizeof *deps);
    if (!deps)
        return -1;
    s->capture_deps = deps;
    cudaGraphEdgeData *edges = realloc(s->capture_edges, cap * sizeof *edges);
    if (!edges)
        return -1;
    memset(edges, 0, cap * sizeof *edges);
    s->capture_edges = edges;
    s->capcapture_deps = cap;
    return 0;
}

static cudaError_t set_deps(struct CUstream_st *s, const cudaGraphNode_t *nodes, size_t n)
{
    if (reserve_deps(s, n))
        return cudaErrorMemoryAllocation;
    if (n)
        memmove(s->capture_deps, nodes, n * sizeof *nodes);
    s->ncapture_deps = n;
    return cudaSuccess;
}

static cudaError_t add_deps(struct CUstream_st *s, const cudaGraphNode_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int have = 0;
        for (size_t j = 0; j < s->ncapture_deps; j++)
            have |= s->capture_deps[j] == nodes[i];
        if (have)
            continue;
        if (reserve_deps(s, s->ncapture_deps + 1))
            return cudaErrorMemoryAllocation;
        s->capture_deps[s->ncapture_deps++] = nodes[i];
    }
    return cudaSuccess;
}

static cudaError_t join(cudart_capture *c, struct CUstream_st *s)
{
    if (c->nstreams == c->capstreams) {
        size_t cap = c->capstreams ? c->capstreams * 2 : 4;
        struct CUstream_st **grown = realloc(c->streams, cap * sizeof *grown);
        if (!grown)
            return cudaErrorMemoryAllocation;
        c->streams = grown;
        c->capstreams = cap;
    }
    c->streams[c->nstreams++] = s;
    s->capture = c;
    s->ncapture_deps = 0;
    return cudaSuccess;
}

/* Ends a capture sequence: its streams leave capture mode. */
static void finish(cudart_capture *c, int free_graph)
{
    for (cudart_capture **p = &active; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    for (size_t i = 0; i < c->nstreams; i++) {
        c->streams[i]->capture = NULL;
        c->streams[i]->ncapture_deps = 0;
    }
    if (free_graph && c->owns_graph)
        cudart_graph_free(c->graph);
    free(c->streams);
    free(c);
}

static cudart_capture *capture_by_id(unsigned long long id)
{
    for (cudart_capture *c = active; id && c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

/* Whether a capture has a stream that synchronizes with the legacy stream. */
static int has_blocking_stream(const cudart_capture *c)
{
    for (size_t i = 0; i < c->nstreams; i++)
        if (!(c->streams[i]->flags & CUDART_STREAM_NON_BLOCKING))
            return 1;
    return 0;
}

/* The legacy stream used while blocking streams capture: those captures
 * are invalidated and the call fails with cudaErrorStreamCaptureImplicit. */
static cudaError_t legacy_use(void)
{
    cudaError_t e = cudaSuccess;
    for (cudart_capture *c = active; c; c = c->next)
        if (has_blocking_stream(c)) {
            c->invalidated = 1;
            e = cudaErrorStreamCaptureImplicit;
        }
    return e;
}

static int is_legacy(cudaStream_t stream)
{
    return !stream || stream == CUDART_STREAM_LEGACY;
}

/* ---- hooks ------------------------------------------------------------------------ */

int cudart_capture_stream(cudaStream_t stream, cudaError_t *err)
{
    if (cudart_capture_bypass || !active)
        return 0;
    struct CUstream_st *s = cudart_stream_record(stream);
    if (!s) {
        *err = is_legacy(stream) ? legacy_use() : cudaSuccess;
        return *err ? -1 : 0;
    }
    if (!s->capture)
        return 0;
    if (s->capture->invalidated) {
        *err = cudaErrorStreamCaptureInvalidated;
        return -1;
    }
    return 1;
}

cudaError_t cudart_capture_node(cudaStream_t stream, int type, const void *params, cudaGraphNode_t *out)
{
    struct CUstream_st *s = cudart_stream_record(stream);
    struct CUgraphNode_st *n = NULL;
    cudaError_t e = cudart_graph_add_node(s->capture->graph, type, params, s->capture_deps, s->ncapture_deps, &n);
    if (!e)
        e = set_deps(s, (cudaGraphNode_t *)&n, 1);
    if (!e && out)
        *out = n;
    cudart_trace("captured a node of type %d on stream %p: %s", type, (void *)stream, cudart_error_name(e));
    return e;
}

cudaError_t cudart_capture_refuse(cudaStream_t stream)
{
    struct CUstream_st *s = cudart_stream_record(stream);
    if (s && s->capture)
        s->capture->invalidated = 1;
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t cudart_capture_unsafe(void)
{
    if (cudart_capture_bypass || thread_mode == cudaStreamCaptureModeRelaxed)
        return cudaSuccess;
    pthread_t me = pthread_self();
    cudaError_t e = cudaSuccess;
    for (cudart_capture *c = active; c; c = c->next) {
        int mine = pthread_equal(c->thread, me);
        if ((mine && c->mode != cudaStreamCaptureModeRelaxed) ||
            (!mine && thread_mode == cudaStreamCaptureModeGlobal && c->mode == cudaStreamCaptureModeGlobal)) {
            c->invalidated = 1;
            e = cudaErrorStreamCaptureUnsupported;
        }
    }
    return e;
}

cudaError_t cudart_capture_sync_stream(cudaStream_t stream)
{
    if (cudart_capture_bypass || !active)
        return cudaSuccess;
    struct CUstream_st *s = cudart_stream_record(stream);
    if (!s)
        return is_legacy(stream) ? legacy_use() : cudaSuccess;
    if (!s->capture)
        return cudaSuccess;
    s->capture->invalidated = 1;
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t cudart_capture_sync_device(void)
{
    if (cudart_capture_bypass || !active)
        return cudaSuccess;
    for (cudart_capture *c = active; c; c = c->next)
        c->invalidated = 1;
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t cudart_capture_sync_event(cudaEvent_t event)
{
    cudart_capture *c = cudart_capture_bypass ? NULL : capture_by_id(event->capture_id);
    if (!c)
        return cudaSuccess;
    c->invalidated = 1;
    return cudaErrorCapturedEvent;
}

cudaError_t cudart_capture_event_record(cudaEvent_t event, cudaStream_t stream, unsigned flags, int *handled)
{
    *handled = 0;
    cudaError_t e = cudaSuccess;
    int r = cudart_capture_stream(stream, &e);
    if (r < 0)
        return e;
    if (r == 0) {
        event->capture_id = 0;
        return cudaSuccess;
    }
    *handled = 1;
    if (flags & CUDART_EVENT_RECORD_EXTERNAL)
        return cudart_capture_node(stream, cudaGraphNodeTypeEventRecord, &event, NULL);
    struct CUstream_st *s = cudart_stream_record(stream);
    cudaGraphNode_t *deps = malloc((s->ncapture_deps ? s->ncapture_deps : 1) * sizeof *deps);
    if (!deps)
        return cudaErrorMemoryAllocation;
    if (s->ncapture_deps)
        memcpy(deps, s->capture_deps, s->ncapture_deps * sizeof *deps);
    free(event->capture_deps);
    event->capture_deps = deps;
    event->ncapture_deps = s->ncapture_deps;
    event->capture_id = s->capture->id;
    return cudaSuccess;
}

cudaError_t cudart_capture_event_wait(cudaStream_t stream, cudaEvent_t event, unsigned flags, int *handled)
{
    *handled = 0;
    if (cudart_capture_bypass)
        return cudaSuccess;
    cudart_capture *from = capture_by_id(event->capture_id);
    cudaError_t e = cudaSuccess;
    int r = cudart_capture_stream(stream, &e);
    if (r < 0)
        return e;
    struct CUstream_st *s = cudart_stream_record(stream);
    if (r == 1) {
        *handled = 1;
        if (flags & CUDART_EVENT_WAIT_EXTERNAL)
            return cudart_capture_node(stream, cudaGraphNodeTypeWaitEvent, &event, NULL);
        if (!from) { /* a dependency on work outside the capture */
            s->capture->invalidated = 1;
            return cudaErrorStreamCaptureIsolation;
        }
        if (from != s->capture) {
            s->capture->invalidated = from->invalidated = 1;
            return cudaErrorStreamCaptureMerge;
        }
        return add_deps(s, event->capture_deps, event->ncapture_deps);
    }
    if (!from)
        return cudaSuccess; /* an ordinary wait */
    *handled = 1;
    if (!s) { /* the legacy stream cannot join a capture */
        from->invalidated = 1;
        return cudaErrorStreamCaptureImplicit;
    }
    if (from->invalidated)
        return cudaErrorStreamCaptureInvalidated;
    e = join(from, s); /* a fork: the stream joins the capture */
    if (!e)
        e = set_deps(s, event->capture_deps, event->ncapture_deps);
    return e;
}

void cudart_capture_forget_stream(struct CUstream_st *s)
{
    cudart_capture *c = s->capture;
    if (c) {
        if (c->origin == s) {
            finish(c, 1);
        } else {
            for (size_t i = 0; i < c->nstreams; i++)
                if (c->streams[i] == s) {
                    c->streams[i] = c->streams[--c->nstreams];
                    break;
                }
            c->invalidated = 1;
        }
    }
    free(s->capture_deps);
    free(s->capture_edges);
    s->capture_deps = NULL;
    s->capture_edges = NULL;
    s->ncapture_deps = s->capcapture_deps = 0;
}

void cudart_capture_forget_event(struct CUevent_st *ev)
{
    free(ev->capture_deps);
    ev->capture_deps = NULL;
    ev->ncapture_deps = 0;
    ev->capture_id = 0;
}

/* ---- the API ----------------------------------------------------------------------- */

/* The record of a stream handle that can capture: the legacy stream cannot
 * (cudaErrorStreamCaptureUnsupported), unknown handles are invalid. */
static cudaError_t capturable(cudaStream_t stream, struct CUstream_st **out)
{
    if (!cudart_stream_valid(stream))
        return cudaErrorInvalidResourceHandle;
    *out = cudart_stream_record(stream);
    return *out ? cudaSuccess : cudaErrorStreamCaptureUnsupported;
}

static cudaError_t begin_capture(cudaStream_t stream, struct CUgraph_st *graph, const cudaGraphNode_t *deps,
                                 size_t ndeps, int mode)
{
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed || (ndeps && !deps))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUstream_st *s = NULL;
    cudaError_t e = capturable(stream, &s);
    if (!e && s->capture)
        e = cudaErrorIllegalState;
    if (!e)
        e = cudart_check_sticky();
    for (size_t i = 0; !e && graph && i < ndeps; i++) {
        struct CUgraphNode_st *n = cudart_node_of(deps[i]);
        if (!n || n->graph != graph)
            e = cudaErrorInvalidValue;
    }
    cudart_capture *c = e ? NULL : calloc(1, sizeof *c);
    if (!e && !c)
        e = cudaErrorMemoryAllocation;
    if (!e) {
        c->id = next_capture_id++;
        c->mode = mode;
        c->thread = pthread_self();
        c->origin = s;
        c->owns_graph = !graph;
        c->graph = graph;
        if (!graph)
            e = cudart_graph_new(&c->graph);
        if (!e)
            e = join(c, s);
        if (!e)
            e = set_deps(s, deps, ndeps);
        if (e) {
            if (c->owns_graph && c->graph)
                cudart_graph_free(c->graph);
            s->capture = NULL;
            free(c->streams);
            free(c);
        } else {
            c->next = active;
            active = c;
        }
    }
    cudart_trace("begin capture on stream %p (mode %d): %s", (void *)stream, mode, cudart_error_name(e));
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, int mode)
{
    return begin_capture(stream, NULL, NULL, 0, mode);
}

CUDART_API cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *deps, const cudaGraphEdgeData *edges,
                                                     size_t ndeps, int mode)
{
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    cudart_unlock();
    if (!g || !cudart_default_edges(edges, ndeps))
        return cudart_result(cudaErrorInvalidValue);
    return begin_capture(stream, g, deps, ndeps, mode);
}

/* Marks n and every node it depends on, transitively. */
static int mark_ancestors(cudart_ptrmap *seen, struct CUgraphNode_st *n)
{
    if (cudart_ptrmap_get(seen, n))
        return 0;
    if (cudart_ptrmap_put(seen, n, n))
        return -1;
    for (size_t i = 0; i < n->ndeps; i++)
        if (mark_ancestors(seen, n->deps[i]))
            return -1;
    return 0;
}

/* Whether every stream that joined the capture was joined back into the
 * origin: its last captured work is work the origin's depends on. */
static cudaError_t check_joined(const cudart_capture *c)
{
    cudart_ptrmap seen = {0};
    cudaError_t e = cudaSuccess;
    for (size_t i = 0; !e && i < c->origin->ncapture_deps; i++)
        if (mark_ancestors(&seen, c->origin->capture_deps[i]))
            e = cudaErrorMemoryAllocation;
    for (size_t i = 0; !e && i < c->nstreams; i++) {
        const struct CUstream_st *s = c->streams[i];
        for (size_t d = 0; s != c->origin && d < s->ncapture_deps; d++)
            if (!cudart_ptrmap_get(&seen, s->capture_deps[d]))
                e = cudaErrorStreamCaptureUnjoined;
    }
    cudart_ptrmap_free(&seen);
    return e;
}

CUDART_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    cudart_lock();
    struct CUstream_st *s = NULL;
    cudaError_t e = capturable(stream, &s);
    if (e == cudaErrorStreamCaptureUnsupported || (!e && !s->capture))
        e = cudaErrorIllegalState;
    cudart_capture *c = e ? NULL : s->capture;
    /* a capture into the program's own graph (cudaStreamBeginCaptureToGraph,
     * e.g. a conditional node's body) need not return it */
    if (!graph && (!c || c->owns_graph)) {
        cudart_unlock();
        return cudart_result(cudaErrorInvalidValue);
    }
    if (c && c->origin != s) {
        c->invalidated = 1;
        e = cudaErrorStreamCaptureUnmatched;
    } else if (c && c->mode != cudaStreamCaptureModeRelaxed && !pthread_equal(c->thread, pthread_self())) {
        e = cudaErrorStreamCaptureWrongThread;
    } else if (c) {
        e = c->invalidated ? cudaErrorStreamCaptureInvalidated : check_joined(c);
        if (graph)
            *graph = e ? NULL : c->graph;
        finish(c, e != cudaSuccess);
    }
    cudart_trace("end capture on stream %p: %s", (void *)stream, cudart_error_name(e));
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *status)
{
    if (!status)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudaError_t e = cudart_stream_valid(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    struct CUstream_st *s = e ? NULL : cudart_stream_record(stream);
    if (!e && !s && is_legacy(stream)) {
        for (cudart_capture *c = active; c; c = c->next)
            if (has_blocking_stream(c))
                e = cudaErrorStreamCaptureImplicit;
    }
    if (!e)
        *status = !s || !s->capture        ? cudaStreamCaptureStatusNone
                  : s->capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                            : cudaStreamCaptureStatusActive;
    cudart_unlock();
    return cudart_result(e);
}

static cudaError_t capture_info(cudaStream_t stream, int *status, unsigned long long *id, cudaGraph_t *graph,
                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges, size_t *ndeps)
{
    if (!status)
        return cudart_result(cudaErrorInvalidValue);
    int st = 0;
    cudaError_t e = cudaStreamIsCapturing(stream, &st);
    if (e)
        return e;
    cudart_lock();
    struct CUstream_st *s = cudart_stream_record(stream);
    *status = st;
    if (st != cudaStreamCaptureStatusNone) {
        if (id)
            *id = s->capture->id;
        if (graph)
            *graph = s->capture->graph;
        if (deps)
            *deps = s->ncapture_deps ? s->capture_deps : NULL;
        if (edges)
            *edges = s->ncapture_deps ? s->capture_edges : NULL;
        if (ndeps)
            *ndeps = s->ncapture_deps;
    }
    cudart_unlock();
    return cudaSuccess;
}

static cudaError_t update_deps(cudaStream_t stream, cudaGraphNode_t *deps, size_t ndeps, unsigned flags)
{
    if (flags > cudaStreamSetCaptureDependencies || (ndeps && !deps))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUstream_st *s = NULL;
    cudaError_t e = capturable(stream, &s);
    if (e == cudaErrorStreamCaptureUnsupported || (!e && !s->capture))
        e = cudaErrorIllegalState;
    for (size_t i = 0; !e && i < ndeps; i++) {
        struct CUgraphNode_st *n = cudart_node_of(deps[i]);
        if (!n || n->graph != s->capture->graph)
            e = cudaErrorInvalidValue;
    }
    if (!e)
        e = flags == cudaStreamSetCaptureDependencies ? set_deps(s, deps, ndeps) : add_deps(s, deps, ndeps);
    cudart_unlock();
    return cudart_result(e);
}

/* CUDA 13's cudaStreamGetCaptureInfo and cudaStreamUpdateCaptureDependencies
 * are CUDA 12's _v3 and _v2 (with edge data); CUDA 12 kept the older forms
 * under the plain names. */
CUDART_API cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream, int *status, unsigned long long *id,
                                                   cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                                   const cudaGraphEdgeData **edges, size_t *ndeps)
{
    return capture_info(stream, status, id, graph, deps, edges, ndeps);
}

CUDART_API cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, int *status, unsigned long long *id,
                                                   cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                                   size_t *ndeps)
{
    return capture_info(stream, status, id, graph, deps, NULL, ndeps);
}

CUDART_API cudaError_t cudaStreamUpdateCaptureDependencies_v2(cudaStream_t stream, cudaGraphNode_t *deps,
                                                              const cudaGraphEdgeData *edges, size_t ndeps,
                                                              unsigned int flags)
{
    if (!cudart_default_edges(edges, ndeps))
        return cudart_result(cudaErrorInvalidValue);
    return update_deps(stream, deps, ndeps, flags);
}

#if CUDART_ABI_MAJOR >= 13
CUDART_ALIAS(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_v3)
CUDART_ALIAS(cudaStreamUpdateCaptureDependencies, cudaStreamUpdateCaptureDependencies_v2)
#else
CUDART_API cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, int *status, unsigned long long *id)
{
    return capture_info(stream, status, id, NULL, NULL, NULL, NULL);
}

CUDART_API cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *deps, size_t ndeps,
                                                           unsigned int flags)
{
    return update_deps(stream, deps, ndeps, flags);
}
#endif

CUDART_API cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode)
{
    if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
        return cudart_result(cudaErrorInvalidValue);
    int old = thread_mode;
    thread_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

CUDART_ALIAS(cudaStreamBeginCapture_ptsz, cudaStreamBeginCapture)
CUDART_ALIAS(cudaStreamBeginCaptureToGraph_ptsz, cudaStreamBeginCaptureToGraph)
CUDART_ALIAS(cudaStreamEndCapture_ptsz, cudaStreamEndCapture)
CUDART_ALIAS(cudaStreamIsCapturing_ptsz, cudaStreamIsCapturing)
CUDART_ALIAS(cudaStreamGetCaptureInfo_ptsz, cudaStreamGetCaptureInfo)
CUDART_ALIAS(cudaStreamGetCaptureInfo_v2_ptsz, cudaStreamGetCaptureInfo_v2)
CUDART_ALIAS(cudaStreamGetCaptureInfo_v3_ptsz, cudaStreamGetCaptureInfo_v3)
CUDART_ALIAS(cudaStreamUpdateCaptureDependencies_ptsz, cudaStreamUpdateCaptureDependencies)
CUDART_ALIAS(cudaStreamUpdateCaptureDependencies_v2_ptsz, cudaStreamUpdateCaptureDependencies_v2)
