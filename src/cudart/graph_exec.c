/* Executable CUDA graphs in kemu's libcudart replacement: instantiation
 * (a private clone of the graph, checked for cycles), launches, parameter
 * changes on the executable graph, cudaGraphExecUpdate for graphs of the
 * same topology, upload. A launch runs the nodes one by one, in an order
 * that respects every dependency, taking ready nodes in creation order, so
 * that replays are deterministic; each node runs through the same code as
 * the stream call it stands for, so the checkers see kernels, copies and
 * sets of graphs as they see the others. */
#include "config.h"
#include "cudart/graph.h"

#include <stdlib.h>
#include <string.h>

/* Set while a graph launch runs its nodes: the calls it makes are not
 * captured (capture.c reads it). */
_Thread_local int cudart_capture_bypass;

static struct CUgraphExec_st *exec_of(cudaGraphExec_t exec)
{
    return exec && cudart_ptrmap_get(&cudart_global.graph_execs, exec) ? exec : NULL;
}

/* A memset node of 2- or 4-byte elements: rows written from a host pattern. */
static cudaError_t run_memset_wide(const struct cudaMemsetParams *p)
{
    size_t row = p->width * p->elementSize;
    unsigned char *pattern = malloc(row ? row : 1);
    if (!pattern)
        return cudaErrorMemoryAllocation;
    for (size_t i = 0; i < p->width; i++)
        memcpy(pattern + i * p->elementSize, &p->value, p->elementSize); /* little-endian low bytes */
    cudaError_t e = cudaSuccess;
    for (size_t r = 0; !e && r < (p->height ? p->height : 1); r++)
        e = cudaMemcpyAsync((char *)p->dst + r * p->pitch, pattern, row, cudaMemcpyHostToDevice, NULL);
    free(pattern);
    return e;
}

static cudaError_t run_node(struct CUgraphNode_st *n)
{
    switch (n->type) {
    case cudaGraphNodeTypeKernel: {
        const cudart_kernel_call *c = &n->u.kernel.call;
        return cudart_launch(n->u.kernel.kr, c->params.gridDim, c->params.blockDim, n->u.kernel.args,
                             c->params.sharedMemBytes, NULL, c->cluster[0] ? c->cluster : NULL, c->cooperative);
    }
    case cudaGraphNodeTypeMemcpy:
        return cudaMemcpy3DAsync(&n->u.memcpy, NULL);
    case cudaGraphNodeTypeMemset: {
        const struct cudaMemsetParams *p = &n->u.memset;
        if (p->elementSize == 1)
            return cudaMemset2DAsync(p->dst, p->pitch, (int)p->value, p->width, p->height ? p->height : 1, NULL);
        return run_memset_wide(p);
    }
    case cudaGraphNodeTypeHost:
        cudart_flush_printf();
        n->u.host.fn(n->u.host.userData);
        return cudaSuccess;
    case cudaGraphNodeTypeEventRecord:
        return cudaEventRecord(n->u.event, NULL);
    case cudaGraphNodeTypeGraph:
        return cudart_graph_run(n->u.child);
    case cudaGraphNodeTypeMemAlloc:
        return cudart_graph_memory_set_live(n->u.alloc.dptr, 1);
    case cudaGraphNodeTypeMemFree:
        if (cudart_graph_memory_known(n->u.free_ptr))
            return cudart_graph_memory_set_live(n->u.free_ptr, 0);
        return cudaFreeAsync(n->u.free_ptr, NULL);
    case cudaGraphNodeTypeConditional:
        return cudart_cond_run(n);
    default: /* empty, event wait: the order already holds them */
        return cudaSuccess;
    }
}

cudaError_t cudart_graph_run(struct CUgraph_st *g)
{
    struct CUgraphNode_st **order;
    cudaError_t e = cudart_graph_order(g, &order);
    if (e)
        return e;
    for (size_t i = 0; !e && i < g->nnodes; i++)
        if (!order[i]->disabled)
            e = run_node(order[i]);
    free(order);
    return e;
}

/* ---- instantiation --------------------------------------------------------------- */

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph, unsigned long long flags,
                               cudaGraphNode_t *error_node, int *result)
{
    if (result)
        *result = cudaGraphInstantiateError;
    if (!out || (flags & ~(unsigned long long)(cudaGraphInstantiateFlagAutoFreeOnLaunch |
                                               cudaGraphInstantiateFlagUpload |
                                               cudaGraphInstantiateFlagUseNodePriority)))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph), *copy = NULL;
    struct CUgraphExec_st *x = NULL;
    struct CUgraphNode_st **order = NULL, *bad = NULL;
    cudaError_t e = g ? cudart_check_sticky() : cudaErrorInvalidValue;
    if (!e && cudart_graph_order(g, &order)) {
        e = cudaErrorInvalidValue;
        if (result)
            *result = cudaGraphInstantiateInvalidStructure;
    }
    free(order);
    int conditional = !e && cudart_graph_has_conditional(g);
    if (!e && (g->nhandles || conditional)) {
        int why = cudaGraphInstantiateError;
        e = cudart_cond_check(g, &why, &bad);
        if (e && result)
            *result = why;
    }
    /* a graph with conditional nodes has one instantiation at a time (CUDA) */
    for (size_t i = 0; !e && conditional && i < cudart_global.graph_execs.cap; i++) {
        const struct CUgraphExec_st *other = cudart_global.graph_execs.values[i];
        if (cudart_global.graph_execs.keys[i] && other->conditional && other->source_id == g->id)
            e = cudaErrorInvalidValue;
    }
    if (!e)
        e = cudart_graph_clone(g, &copy);
    if (!e && !(x = calloc(1, sizeof *x)))
        e = cudaErrorMemoryAllocation;
    if (!e) {
        x->magic = EXEC_MAGIC;
        x->graph = copy;
        x->flags = flags;
        x->source_id = g->id;
        x->conditional = conditional;
        if (cudart_ptrmap_put(&cudart_global.graph_execs, x, x))
            e = cudaErrorMemoryAllocation;
    }
    if (e) {
        free(x);
        if (copy)
            cudart_graph_free(copy);
    } else {
        *out = x;
        if (result)
            *result = cudaGraphInstantiateSuccess;
    }
    if (error_node)
        *error_node = bad;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    return instantiate(exec, graph, flags, NULL, NULL);
}

CUDART_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                     unsigned long long flags)
{
    return instantiate(exec, graph, flags, NULL, NULL);
}

CUDART_API cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    int ok = cudart_stream_valid(params->uploadStream);
    cudart_unlock();
    if (!ok)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return instantiate(exec, graph, params->flags, &params->errNode_out, &params->result_out);
}

CUDART_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    if (x) {
        cudart_ptrmap_remove(&cudart_global.graph_execs, x);
        cudart_graph_free(x->graph);
        x->magic = 0;
        free(x);
    }
    cudart_unlock();
    return cudart_result(x ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long *flags)
{
    if (!flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    if (x)
        *flags = x->flags;
    cudart_unlock();
    return cudart_result(x ? cudaSuccess : cudaErrorInvalidValue);
}

/* ---- launches -------------------------------------------------------------------- */

CUDART_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    cudaError_t e = x ? cudaSuccess : cudaErrorInvalidValue;
    if (!e && !cudart_stream_valid(stream))
        e = cudaErrorInvalidResourceHandle;
    int capturing = e ? 0 : cudart_capture_stream(stream, &e);
    if (!e && capturing == 1) { /* a launch into a capturing stream is captured as a child graph */
        cudaGraph_t child = x->graph;
        e = cudart_capture_node(stream, cudaGraphNodeTypeGraph, &child, NULL);
    } else if (!e) {
        e = cudart_check_sticky();
        cudart_trace("graph launch: %zu nodes", e ? (size_t)0 : x->graph->nnodes);
        if (!e) {
            cudart_capture_bypass++;
            cudaStream_t outer_stream = cudart_order_graph_stream;
            int outer = cudart_order_graph;
            if (!outer) { /* its nodes are operations of its stream (racecheck across streams) */
                cudart_order_graph_stream = stream;
                cudart_order_graph = 1;
            }
            cudart_cond_assign_defaults(x->graph);
            e = cudart_graph_run(x->graph);
            cudart_order_graph_stream = outer_stream;
            cudart_order_graph = outer;
            cudart_capture_bypass--;
        }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream)
{
    cudart_lock();
    cudaError_t e = !exec_of(exec) ? cudaErrorInvalidValue
                    : !cudart_stream_valid(stream) ? cudaErrorInvalidResourceHandle
                                                   : cudart_check_sticky();
    cudart_unlock();
    return cudart_result(e);
}

/* ---- changing an executable graph ------------------------------------------------- */

/* The node of graph g (an executable graph's, or a conditional body in it)
 * that stands for `node` (of the graph it was instantiated from, or of the
 * graph of its last update). */
static struct CUgraphNode_st *find_exec_node(struct CUgraph_st *g, cudaGraphNode_t node, int type)
{
    for (size_t i = 0; node && i < g->nnodes; i++) {
        struct CUgraphNode_st *n = g->nodes[i];
        if ((n->origin == node || n->paired == node) && n->type == type)
            return n;
        for (unsigned b = 0; n->type == cudaGraphNodeTypeConditional && b < n->u.cond.size; b++) {
            struct CUgraphNode_st *m = find_exec_node(n->u.cond.bodies[b], node, type);
            if (m)
                return m;
        }
    }
    return NULL;
}

static struct CUgraphNode_st *exec_node(struct CUgraphExec_st *x, cudaGraphNode_t node, int type)
{
    return find_exec_node(x->graph, node, type);
}

static cudaError_t exec_set(cudaGraphExec_t exec, cudaGraphNode_t node, int type, const void *params)
{
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    struct CUgraphNode_st *n = x ? exec_node(x, node, type) : NULL;
    cudaError_t e = n ? cudaSuccess : cudaErrorInvalidValue;
    if (!e && type == cudaGraphNodeTypeKernel) {
        cudart_kernel_call call = n->u.kernel.call;
        call.params = *(const struct cudaKernelNodeParams *)params;
        e = cudart_graph_node_set(n, &call);
    } else if (!e) {
        e = cudart_graph_node_set(n, params);
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaKernelNodeParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    return exec_set(exec, node, cudaGraphNodeTypeKernel, params);
}

CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemcpy3DParms *params)
{
    return exec_set(exec, node, cudaGraphNodeTypeMemcpy, params);
}

CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node, void *dst,
                                                          const void *src, size_t count, int kind)
{
    struct cudaMemcpy3DParms p = cudart_copy_1d(dst, src, count, kind);
    return exec_set(exec, node, cudaGraphNodeTypeMemcpy, &p);
}

CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                const void *symbol, const void *src, size_t count,
                                                                size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, (void *)src, count, offset, kind, 1, &p);
    return e ? cudart_result(e) : exec_set(exec, node, cudaGraphNodeTypeMemcpy, &p);
}

CUDART_API cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                                  void *dst, const void *symbol, size_t count,
                                                                  size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, dst, count, offset, kind, 0, &p);
    return e ? cudart_result(e) : exec_set(exec, node, cudaGraphNodeTypeMemcpy, &p);
}

CUDART_API cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemsetParams *params)
{
    return exec_set(exec, node, cudaGraphNodeTypeMemset, params);
}

CUDART_API cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                      const struct cudaHostNodeParams *params)
{
    return exec_set(exec, node, cudaGraphNodeTypeHost, params);
}

CUDART_API cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                            cudaEvent_t event)
{
    return exec_set(exec, node, cudaGraphNodeTypeEventRecord, &event);
}

CUDART_API cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                          cudaEvent_t event)
{
    return exec_set(exec, node, cudaGraphNodeTypeWaitEvent, &event);
}

CUDART_API cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                            cudaGraph_t child)
{
    return exec_set(exec, node, cudaGraphNodeTypeGraph, &child);
}

CUDART_API cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                  struct cudaGraphNodeParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    switch (params->type) {
    case cudaGraphNodeTypeKernel: return exec_set(exec, node, params->type, &params->kernel);
    case cudaGraphNodeTypeMemcpy: return exec_set(exec, node, params->type, &params->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: return exec_set(exec, node, params->type, &params->memset);
    case cudaGraphNodeTypeHost: return exec_set(exec, node, params->type, &params->host);
    case cudaGraphNodeTypeGraph: return exec_set(exec, node, params->type, &params->graph.graph);
    case cudaGraphNodeTypeEventRecord: return exec_set(exec, node, params->type, &params->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent: return exec_set(exec, node, params->type, &params->eventWait.event);
    default: return cudart_result(cudaErrorInvalidValue);
    }
}

CUDART_API cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int enabled)
{
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    struct CUgraphNode_st *n = NULL;
    for (int t = cudaGraphNodeTypeKernel; x && !n && t <= cudaGraphNodeTypeMemset; t++)
        n = exec_node(x, node, t);
    if (n)
        n->disabled = !enabled;
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int *enabled)
{
    if (!enabled)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    struct CUgraphNode_st *n = NULL;
    for (int t = cudaGraphNodeTypeKernel; x && !n && t <= cudaGraphNodeTypeMemset; t++)
        n = exec_node(x, node, t);
    if (n)
        *enabled = !n->disabled;
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

/* ---- cudaGraphExecUpdate ---------------------------------------------------------- */

static size_t index_in(const struct CUgraph_st *g, const struct CUgraphNode_st *n)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == n)
            return i;
    return (size_t)-1;
}

/* Whether graphs a and b have the same nodes (by creation order, type and
 * child graphs) and edges; on a difference, *result says which and *bad
 * is b's node where it is. */
static int same_topology(const struct CUgraph_st *a, const struct CUgraph_st *b, int *result,
                         struct CUgraphNode_st **bad)
{
    if (a->nnodes != b->nnodes) {
        *result = cudaGraphExecUpdateErrorTopologyChanged;
        return 0;
    }
    for (size_t i = 0; i < a->nnodes; i++) {
        const struct CUgraphNode_st *x = a->nodes[i];
        struct CUgraphNode_st *y = b->nodes[i];
        *bad = y;
        if (x->type != y->type) {
            *result = cudaGraphExecUpdateErrorNodeTypeChanged;
            return 0;
        }
        if (x->ndeps != y->ndeps) {
            *result = cudaGraphExecUpdateErrorTopologyChanged;
            return 0;
        }
        for (size_t d = 0; d < x->ndeps; d++) {
            size_t want = index_in(a, x->deps[d]);
            int found = 0;
            for (size_t k = 0; k < y->ndeps; k++)
                found |= index_in(b, y->deps[k]) == want;
            if (!found) {
                *result = cudaGraphExecUpdateErrorTopologyChanged;
                return 0;
            }
        }
        if (x->type == cudaGraphNodeTypeGraph && !same_topology(x->u.child, y->u.child, result, bad))
            return 0;
        if (x->type == cudaGraphNodeTypeConditional) {
            /* a conditional node's parameters cannot change; its bodies are compared as graphs */
            if (x->u.cond.type != y->u.cond.type || x->u.cond.size != y->u.cond.size) {
                *result = cudaGraphExecUpdateErrorParametersChanged;
                return 0;
            }
            for (unsigned b = 0; b < x->u.cond.size; b++)
                if (!same_topology(x->u.cond.bodies[b], y->u.cond.bodies[b], result, bad))
                    return 0;
        }
        if ((x->type == cudaGraphNodeTypeMemAlloc && x->u.alloc.dptr != y->u.alloc.dptr) ||
            (x->type == cudaGraphNodeTypeMemFree && x->u.free_ptr != y->u.free_ptr)) {
            *result = cudaGraphExecUpdateErrorParametersChanged;
            return 0;
        }
    }
    *bad = NULL;
    return 1;
}

/* The parameters of node n, as cudart_graph_node_set takes them. */
static const void *params_of(struct CUgraphNode_st *n)
{
    switch (n->type) {
    case cudaGraphNodeTypeKernel:
        return &n->u.kernel.call;
    case cudaGraphNodeTypeGraph:
        return &n->u.child;
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeMemAlloc:
    case cudaGraphNodeTypeMemFree:
    case cudaGraphNodeTypeConditional: /* update_nodes takes its handle and updates its bodies */
        return NULL;
    default:
        return &n->u;
    }
}

/* Gives the nodes of executable graph x (or a body in it) the parameters
 * of their pairs in g, a graph of the same topology, and pairs them: 0, or
 * -1 with *bad the node of g whose parameters were refused. A conditional
 * node takes the handle of its pair (with its default and flags, as CUDA
 * says) and its bodies are updated alike. */
static int update_nodes(struct CUgraph_st *x, struct CUgraph_st *g, struct CUgraphNode_st **bad)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        struct CUgraphNode_st *n = x->nodes[i], *m = g->nodes[i];
        const void *p = params_of(m);
        if (p && cudart_graph_node_set(n, p)) {
            *bad = m;
            return -1;
        }
        if (n->type != cudaGraphNodeTypeConditional)
            continue;
        cudart_cond_retain(m->u.cond.handle);
        cudart_cond_release(n->u.cond.handle);
        n->u.cond.handle = m->u.cond.handle;
        for (unsigned b = 0; b < n->u.cond.size; b++)
            if (update_nodes(n->u.cond.bodies[b], m->u.cond.bodies[b], bad))
                return -1;
    }
    for (size_t i = 0; i < g->nnodes; i++)
        x->nodes[i]->paired = g->nodes[i];
    return 0;
}

CUDART_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                           cudaGraphExecUpdateResultInfo *info)
{
    cudart_lock();
    struct CUgraphExec_st *x = exec_of(exec);
    struct CUgraph_st *g = cudart_graph_of(graph);
    int result = cudaGraphExecUpdateError;
    struct CUgraphNode_st *bad = NULL;
    cudaError_t e = x && g ? cudaSuccess : cudaErrorInvalidValue;
    if (!e && !same_topology(x->graph, g, &result, &bad))
        e = cudaErrorGraphExecUpdateFailure;
    if (!e && update_nodes(x->graph, g, &bad)) {
        result = cudaGraphExecUpdateErrorParametersChanged;
        e = cudaErrorGraphExecUpdateFailure;
    }
    if (!e)
        result = cudaGraphExecUpdateSuccess;
    if (info) {
        info->result = result;
        info->errorNode = bad;
        info->errorFromNode = NULL;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_ALIAS(cudaGraphLaunch_ptsz, cudaGraphLaunch)
CUDART_ALIAS(cudaGraphUpload_ptsz, cudaGraphUpload)
CUDART_ALIAS(cudaGraphInstantiateWithParams_ptsz, cudaGraphInstantiateWithParams)
