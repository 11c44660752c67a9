/* CUDA graphs in kemu's libcudart replacement: creating graphs and their
 * nodes (kernel, memcpy, memset, host, empty, event record / wait, child
 * graph, memory allocation and free), dependencies, inspection, cloning,
 * and cudaGraphDebugDotPrint. A node keeps its own copy of everything it
 * was given (kernel arguments, child graphs), as CUDA does. Instantiation
 * and launches are in graph_exec.c, stream capture in capture.c. */
#include "config.h"
#include "cudart/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- records -------------------------------------------------------------- */

struct CUgraph_st *cudart_graph_of(cudaGraph_t g)
{
    return g && cudart_ptrmap_get(&cudart_global.graphs, g) ? g : NULL;
}

struct CUgraphNode_st *cudart_node_of(cudaGraphNode_t n)
{
    return n && cudart_ptrmap_get(&cudart_global.graph_nodes, n) ? n : NULL;
}

cudaError_t cudart_graph_new(struct CUgraph_st **out)
{
    static unsigned long long next_id = 1;
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!g)
        return cudaErrorMemoryAllocation;
    g->magic = GRAPH_MAGIC;
    g->id = next_id++;
    if (cudart_ptrmap_put(&cudart_global.graphs, g, g)) {
        free(g);
        return cudaErrorMemoryAllocation;
    }
    *out = g;
    return cudaSuccess;
}

static void node_clear(struct CUgraphNode_st *n)
{
    if (n->type == cudaGraphNodeTypeKernel) {
        free(n->u.kernel.args);
        free(n->u.kernel.bytes);
        n->u.kernel.args = NULL;
        n->u.kernel.bytes = NULL;
    } else if (n->type == cudaGraphNodeTypeGraph && n->u.child) {
        cudart_graph_free(n->u.child);
        n->u.child = NULL;
    }
}

static void node_free(struct CUgraphNode_st *n)
{
    node_clear(n);
    cudart_ptrmap_remove(&cudart_global.graph_nodes, n);
    free(n->deps);
    n->magic = 0;
    free(n);
}

void cudart_graph_free(struct CUgraph_st *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nnodes; i++)
        node_free(g->nodes[i]);
    free(g->nodes);
    cudart_ptrmap_remove(&cudart_global.graphs, g);
    g->magic = 0;
    free(g);
}

/* ---- node parameters --------------------------------------------------------- */

#define LAUNCH_PARAM_END ((void *)0x00)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* Copies a kernel call's argument values (kernelParams, or the `extra`
 * buffer form) into the node, sized by the kernel's PTX parameters. */
static cudaError_t kernel_set(struct CUgraphNode_st *n, const cudart_kernel_call *call)
{
    cudart_kernel_record *kr = cudart_find_kernel(call->params.func);
    if (!kr)
        return CUDART_ERROR_NOT_A_KERNEL;
    cudaError_t e = cudart_kernel_resolve(kr);
    if (e)
        return e;
    int nargs = kemu_kernel_param_count(kr->kernel);
    size_t total = 0;
    for (int i = 0; i < nargs; i++) {
        kemu_param_info info;
        kemu_kernel_param(kr->kernel, i, &info);
        if (info.offset + info.size > total)
            total = info.offset + info.size;
    }
    const unsigned char *buffer = NULL;
    size_t buffer_size = 0;
    if (!call->params.kernelParams && call->params.extra) {
        for (void **x = call->params.extra; *x != LAUNCH_PARAM_END; x += 2) {
            if (x[0] == LAUNCH_PARAM_BUFFER_POINTER)
                buffer = x[1];
            else if (x[0] == LAUNCH_PARAM_BUFFER_SIZE)
                buffer_size = *(size_t *)x[1];
            else
                return cudaErrorInvalidValue;
        }
        if (!buffer || buffer_size < total)
            return cudaErrorInvalidValue;
    } else if (nargs && !call->params.kernelParams) {
        return cudaErrorInvalidValue;
    }
    unsigned char *bytes = calloc(1, total ? total : 1);
    void **args = calloc((size_t)(nargs ? nargs : 1), sizeof *args);
    if (!bytes || !args) {
        free(bytes);
        free(args);
        return cudaErrorMemoryAllocation;
    }
    for (int i = 0; i < nargs; i++) {
        kemu_param_info info;
        kemu_kernel_param(kr->kernel, i, &info);
        const void *value = buffer ? buffer + info.offset : call->params.kernelParams[i];
        if (!value) {
            free(bytes);
            free(args);
            return cudaErrorInvalidValue;
        }
        memcpy(bytes + info.offset, value, info.size);
        args[i] = bytes + info.offset;
    }
    node_clear(n);
    n->u.kernel.kr = kr;
    n->u.kernel.call = *call;
    n->u.kernel.call.params.kernelParams = args;
    n->u.kernel.call.params.extra = NULL;
    n->u.kernel.args = args;
    n->u.kernel.bytes = bytes;
    n->u.kernel.nargs = nargs;
    return cudaSuccess;
}

static int event_live(cudaEvent_t event)
{
    return event && cudart_ptrmap_get(&cudart_global.events, event);
}

cudaError_t cudart_graph_node_set(struct CUgraphNode_st *n, const void *params)
{
    switch (n->type) {
    case cudaGraphNodeTypeKernel:
        if (!params)
            return cudaErrorInvalidValue;
        return kernel_set(n, params);
    case cudaGraphNodeTypeMemcpy: {
        const struct cudaMemcpy3DParms *p = params;
        if (!p || (p->srcArray && p->srcPtr.ptr) || (p->dstArray && p->dstPtr.ptr) ||
            (!p->srcArray && !p->srcPtr.ptr) || (!p->dstArray && !p->dstPtr.ptr) ||
            p->kind < cudaMemcpyHostToHost || p->kind > cudaMemcpyDefault)
            return cudaErrorInvalidValue;
        n->u.memcpy = *p;
        return cudaSuccess;
    }
    case cudaGraphNodeTypeMemset: {
        const struct cudaMemsetParams *p = params;
        if (!p || !p->dst || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
            (p->height > 1 && p->pitch < p->width * p->elementSize))
            return cudaErrorInvalidValue;
        n->u.memset = *p;
        return cudaSuccess;
    }
    case cudaGraphNodeTypeHost: {
        const struct cudaHostNodeParams *p = params;
        if (!p || !p->fn)
            return cudaErrorInvalidValue;
        n->u.host = *p;
        return cudaSuccess;
    }
    case cudaGraphNodeTypeEventRecord:
    case cudaGraphNodeTypeWaitEvent:
        if (!params || !event_live(*(const cudaEvent_t *)params))
            return cudaErrorInvalidValue;
        n->u.event = *(const cudaEvent_t *)params;
        return cudaSuccess;
    case cudaGraphNodeTypeGraph: {
        struct CUgraph_st *child = params ? cudart_graph_of(*(const cudaGraph_t *)params) : NULL, *copy;
        if (!child)
            return cudaErrorInvalidValue;
        cudaError_t e = cudart_graph_clone(child, &copy);
        if (e)
            return e;
        copy->is_child = 1;
        node_clear(n);
        n->u.child = copy;
        return cudaSuccess;
    }
    case cudaGraphNodeTypeMemAlloc: {
        struct cudaMemAllocNodeParams *p = (struct cudaMemAllocNodeParams *)params;
        if (!p || !p->bytesize || (p->poolProps.allocType != cudaMemAllocationTypePinned))
            return cudaErrorInvalidValue;
        if (p->poolProps.location.type != cudaMemLocationTypeDevice || p->poolProps.location.id != 0)
            return cudaErrorInvalidDevice;
        cudaError_t e = cudart_graph_memory_reserve(p->bytesize, &p->dptr);
        if (e)
            return e;
        n->u.alloc.dptr = p->dptr;
        n->u.alloc.bytesize = p->bytesize;
        n->u.alloc.props = p->poolProps;
        return cudaSuccess;
    }
    case cudaGraphNodeTypeMemFree:
        if (!params || !*(void *const *)params)
            return cudaErrorInvalidValue;
        n->u.free_ptr = *(void *const *)params;
        return cudaSuccess;
    case cudaGraphNodeTypeEmpty:
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}

static int node_depends_on(const struct CUgraphNode_st *n, const struct CUgraphNode_st *dep)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == dep)
            return 1;
    return 0;
}

static cudaError_t node_add_dep(struct CUgraphNode_st *n, struct CUgraphNode_st *dep)
{
    if (n->ndeps == n->capdeps) {
        size_t cap = n->capdeps ? n->capdeps * 2 : 4;
        struct CUgraphNode_st **grown = realloc(n->deps, cap * sizeof *grown);
        if (!grown)
            return cudaErrorMemoryAllocation;
        n->deps = grown;
        n->capdeps = cap;
    }
    n->deps[n->ndeps++] = dep;
    return cudaSuccess;
}

cudaError_t cudart_graph_add_node(struct CUgraph_st *g, int type, const void *params, cudaGraphNode_t const *deps,
                                  size_t ndeps, struct CUgraphNode_st **out)
{
    if (ndeps && !deps)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++) {
        struct CUgraphNode_st *d = cudart_node_of(deps[i]);
        if (!d || d->graph != g)
            return cudaErrorInvalidValue;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return cudaErrorInvalidValue;
    }
    struct CUgraphNode_st *n = calloc(1, sizeof *n);
    if (!n)
        return cudaErrorMemoryAllocation;
    n->magic = NODE_MAGIC;
    n->graph = g;
    n->type = type;
    cudaError_t e = cudart_graph_node_set(n, params);
    for (size_t i = 0; !e && i < ndeps; i++)
        e = node_add_dep(n, deps[i]);
    if (!e && g->nnodes == g->capnodes) {
        size_t cap = g->capnodes ? g->capnodes * 2 : 16;
        struct CUgraphNode_st **grown = realloc(g->nodes, cap * sizeof *grown);
        if (!grown)
            e = cudaErrorMemoryAllocation;
        else {
            g->nodes = grown;
            g->capnodes = cap;
        }
    }
    if (!e && cudart_ptrmap_put(&cudart_global.graph_nodes, n, n))
        e = cudaErrorMemoryAllocation;
    if (e) {
        node_clear(n);
        free(n->deps);
        free(n);
        return e;
    }
    n->seq = g->next_seq++;
    g->nodes[g->nnodes++] = n;
    if (out)
        *out = n;
    return cudaSuccess;
}

static size_t node_index(const struct CUgraph_st *g, const struct CUgraphNode_st *n)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == n)
            return i;
    return (size_t)-1;
}

cudaError_t cudart_graph_clone(const struct CUgraph_st *g, struct CUgraph_st **out)
{
    struct CUgraph_st *c;
    cudaError_t e = cudart_graph_new(&c);
    if (e)
        return e;
    for (size_t i = 0; !e && i < g->nnodes; i++) {
        const struct CUgraphNode_st *o = g->nodes[i];
        struct CUgraphNode_st *n = calloc(1, sizeof *n);
        if (!n) {
            e = cudaErrorMemoryAllocation;
            break;
        }
        *n = *o;
        n->graph = c;
        n->deps = NULL;
        n->ndeps = n->capdeps = 0;
        n->origin = (struct CUgraphNode_st *)o;
        n->paired = NULL;
        if (o->type == cudaGraphNodeTypeKernel) {
            n->u.kernel.args = NULL;
            n->u.kernel.bytes = NULL;
            cudart_kernel_call call = o->u.kernel.call;
            e = kernel_set(n, &call);
        } else if (o->type == cudaGraphNodeTypeGraph) {
            n->u.child = NULL;
            e = cudart_graph_clone(o->u.child, &n->u.child);
            if (!e)
                n->u.child->is_child = 1;
        }
        for (size_t d = 0; !e && d < o->ndeps; d++)
            e = node_add_dep(n, c->nodes[node_index(g, o->deps[d])]);
        if (!e && c->nnodes == c->capnodes) {
            size_t cap = c->capnodes ? c->capnodes * 2 : 16;
            struct CUgraphNode_st **grown = realloc(c->nodes, cap * sizeof *grown);
            if (!grown)
                e = cudaErrorMemoryAllocation;
            else {
                c->nodes = grown;
                c->capnodes = cap;
            }
        }
        if (!e && cudart_ptrmap_put(&cudart_global.graph_nodes, n, n))
            e = cudaErrorMemoryAllocation;
        if (e) {
            node_clear(n);
            free(n->deps);
            free(n);
            break;
        }
        c->nodes[c->nnodes++] = n;
    }
    c->next_seq = g->next_seq;
    if (e) {
        cudart_graph_free(c);
        return e;
    }
    *out = c;
    return cudaSuccess;
}

cudaError_t cudart_graph_order(const struct CUgraph_st *g, struct CUgraphNode_st ***out)
{
    size_t n = g->nnodes;
    struct CUgraphNode_st **order = malloc((n ? n : 1) * sizeof *order);
    size_t *waiting = calloc(n ? n : 1, sizeof *waiting);
    char *done = calloc(n ? n : 1, 1);
    if (!order || !waiting || !done) {
        free(order);
        free(waiting);
        free(done);
        return cudaErrorMemoryAllocation;
    }
    for (size_t i = 0; i < n; i++)
        waiting[i] = g->nodes[i]->ndeps;
    size_t count = 0;
    while (count < n) {
        size_t pick = n;
        for (size_t i = 0; i < n; i++)
            if (!done[i] && waiting[i] == 0) {
                pick = i;
                break;
            }
        if (pick == n)
            break; /* a cycle */
        done[pick] = 1;
        order[count++] = g->nodes[pick];
        for (size_t i = 0; i < n; i++)
            for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
                if (g->nodes[i]->deps[d] == g->nodes[pick])
                    waiting[i]--;
    }
    free(waiting);
    free(done);
    if (count < n) {
        free(order);
        return cudaErrorInvalidValue;
    }
    *out = order;
    return cudaSuccess;
}

/* ---- creating graphs and nodes ---------------------------------------------- */

CUDART_API cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int flags)
{
    if (!graph || flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = NULL;
    cudaError_t e = cudart_graph_new(&g);
    if (!e)
        *graph = g;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    if (g)
        cudart_graph_free(g);
    cudart_unlock();
    return cudart_result(g ? cudaSuccess : cudaErrorInvalidValue);
}

/* The common body of cudaGraphAdd*Node. */
static cudaError_t add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                            int type, const void *params)
{
    if (!node)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    struct CUgraphNode_st *n = NULL;
    cudaError_t e = g ? cudart_graph_add_node(g, type, params, deps, ndeps, &n) : cudaErrorInvalidValue;
    if (!e)
        *node = n;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                              size_t ndeps, const struct cudaKernelNodeParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    cudart_kernel_call call;
    memset(&call, 0, sizeof call);
    call.params = *params;
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeKernel, &call);
}

CUDART_API cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                              size_t ndeps, const struct cudaMemcpy3DParms *params)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemcpy, params);
}

/* A 1D copy as the 3D parameters a memcpy node keeps. */
static struct cudaMemcpy3DParms copy_1d(void *dst, const void *src, size_t count, int kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
    p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
    p.extent = (struct cudaExtent){count, 1, 1};
    p.kind = kind;
    return p;
}

CUDART_API cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
                                                const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                                const void *src, size_t count, int kind)
{
    struct cudaMemcpy3DParms p = copy_1d(dst, src, count, kind);
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemcpy, &p);
}

CUDART_API cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                              size_t ndeps, const struct cudaMemsetParams *params)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemset, params);
}

CUDART_API cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                            size_t ndeps, const struct cudaHostNodeParams *params)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeHost, params);
}

CUDART_API cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                             size_t ndeps)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeEmpty, NULL);
}

CUDART_API cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                                  const cudaGraphNode_t *deps, size_t ndeps, cudaGraph_t child)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeGraph, &child);
}

CUDART_API cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                                   const cudaGraphNode_t *deps, size_t ndeps, cudaEvent_t event)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeEventRecord, &event);
}

CUDART_API cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                                 const cudaGraphNode_t *deps, size_t ndeps, cudaEvent_t event)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeWaitEvent, &event);
}

CUDART_API cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                                const cudaGraphNode_t *deps, size_t ndeps,
                                                struct cudaMemAllocNodeParams *params)
{
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemAlloc, params);
}

CUDART_API cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                               const cudaGraphNode_t *deps, size_t ndeps, void *dptr)
{
    cudart_lock();
    int known = cudart_graph_memory_known(dptr);
    cudart_unlock();
    if (!known)
        return cudart_result(cudaErrorInvalidValue);
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemFree, &dptr);
}

/* ---- node parameters ---------------------------------------------------------- */

/* The node behind a handle when it has `type`, locked; NULL otherwise. */
static struct CUgraphNode_st *typed_node(cudaGraphNode_t node, int type)
{
    struct CUgraphNode_st *n = cudart_node_of(node);
    return n && n->type == type ? n : NULL;
}

/* Reads (set == 0) or replaces (set == 1) a node's parameters. */
static cudaError_t node_params(cudaGraphNode_t node, int type, void *out, size_t size, const void *in)
{
    if (!out && !in)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = typed_node(node, type);
    cudaError_t e = n ? cudaSuccess : cudaErrorInvalidValue;
    if (!e && in)
        e = cudart_graph_node_set(n, in);
    else if (!e)
        memcpy(out, type == cudaGraphNodeTypeKernel ? (void *)&n->u.kernel.call.params : (void *)&n->u, size);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *params)
{
    return node_params(node, cudaGraphNodeTypeKernel, params, sizeof *params, NULL);
}

CUDART_API cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = typed_node(node, cudaGraphNodeTypeKernel);
    cudart_kernel_call call;
    memset(&call, 0, sizeof call);
    if (n) {
        call = n->u.kernel.call;
        call.params = *params;
    }
    cudart_unlock();
    return node_params(node, cudaGraphNodeTypeKernel, NULL, 0, &call);
}

CUDART_API cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *params)
{
    return node_params(node, cudaGraphNodeTypeMemcpy, params, sizeof *params, NULL);
}

CUDART_API cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *params)
{
    return node_params(node, cudaGraphNodeTypeMemcpy, NULL, 0, params);
}

CUDART_API cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src,
                                                      size_t count, int kind)
{
    struct cudaMemcpy3DParms p = copy_1d(dst, src, count, kind);
    return node_params(node, cudaGraphNodeTypeMemcpy, NULL, 0, &p);
}

CUDART_API cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *params)
{
    return node_params(node, cudaGraphNodeTypeMemset, params, sizeof *params, NULL);
}

CUDART_API cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *params)
{
    return node_params(node, cudaGraphNodeTypeMemset, NULL, 0, params);
}

CUDART_API cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *params)
{
    return node_params(node, cudaGraphNodeTypeHost, params, sizeof *params, NULL);
}

CUDART_API cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *params)
{
    return node_params(node, cudaGraphNodeTypeHost, NULL, 0, params);
}

CUDART_API cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event)
{
    return node_params(node, cudaGraphNodeTypeEventRecord, event, sizeof *event, NULL);
}

CUDART_API cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    return node_params(node, cudaGraphNodeTypeEventRecord, NULL, 0, &event);
}

CUDART_API cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event)
{
    return node_params(node, cudaGraphNodeTypeWaitEvent, event, sizeof *event, NULL);
}

CUDART_API cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    return node_params(node, cudaGraphNodeTypeWaitEvent, NULL, 0, &event);
}

CUDART_API cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *graph)
{
    return node_params(node, cudaGraphNodeTypeGraph, graph, sizeof *graph, NULL);
}

CUDART_API cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params)
{
    if (!params)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = typed_node(node, cudaGraphNodeTypeMemAlloc);
    if (n) {
        memset(params, 0, sizeof *params);
        params->poolProps = n->u.alloc.props;
        params->bytesize = n->u.alloc.bytesize;
        params->dptr = n->u.alloc.dptr;
    }
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr)
{
    return node_params(node, cudaGraphNodeTypeMemFree, dptr, sizeof(void *), NULL);
}

/* ---- structure -------------------------------------------------------------------- */

CUDART_API cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, int *type)
{
    if (!type)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = cudart_node_of(node);
    if (n)
        *type = n->type;
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

/* Adds (add != 0) or removes edges from[i] -> to[i]. */
static cudaError_t change_edges(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                const cudaGraphEdgeData *edges, size_t count, int add)
{
    if (count && (!from || !to))
        return cudart_result(cudaErrorInvalidValue);
    for (size_t i = 0; edges && i < count; i++)
        if (edges[i].from_port || edges[i].to_port || edges[i].type)
            return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    cudaError_t e = g ? cudaSuccess : cudaErrorInvalidValue;
    for (size_t i = 0; !e && i < count; i++) { /* all checked before any change */
        struct CUgraphNode_st *a = cudart_node_of(from[i]), *b = cudart_node_of(to[i]);
        if (!a || !b || a->graph != g || b->graph != g || a == b || node_depends_on(b, a) != !add)
            e = cudaErrorInvalidValue;
    }
    for (size_t i = 0; !e && i < count; i++) {
        struct CUgraphNode_st *b = to[i];
        if (add) {
            e = node_add_dep(b, from[i]);
            continue;
        }
        for (size_t d = 0; d < b->ndeps; d++)
            if (b->deps[d] == from[i]) {
                memmove(&b->deps[d], &b->deps[d + 1], (b->ndeps - d - 1) * sizeof *b->deps);
                b->ndeps--;
                break;
            }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphAddDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, const cudaGraphEdgeData *edges,
                                                   size_t count)
{
    return change_edges(graph, from, to, edges, count, 1);
}

CUDART_API cudaError_t cudaGraphRemoveDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                      const cudaGraphNode_t *to, const cudaGraphEdgeData *edges,
                                                      size_t count)
{
    return change_edges(graph, from, to, edges, count, 0);
}

/* Fills up to *count entries of out (NULL: only counts), padding with NULL;
 * *count becomes the number there are, or what was asked when fewer. */
static void give_nodes(struct CUgraphNode_st **list, size_t n, cudaGraphNode_t *out, size_t *count)
{
    if (!out) {
        *count = n;
        return;
    }
    for (size_t i = 0; i < *count; i++)
        out[i] = i < n ? list[i] : NULL;
    if (*count > n)
        *count = n;
}

/* The nodes of g that satisfy `want` (roots, dependents of a node). */
static cudaError_t collect(const struct CUgraph_st *g, const struct CUgraphNode_st *of, int roots,
                           struct CUgraphNode_st ***out, size_t *n)
{
    struct CUgraphNode_st **list = malloc((g->nnodes ? g->nnodes : 1) * sizeof *list);
    if (!list)
        return cudaErrorMemoryAllocation;
    *n = 0;
    for (size_t i = 0; i < g->nnodes; i++)
        if (roots ? g->nodes[i]->ndeps == 0 : node_depends_on(g->nodes[i], of))
            list[(*n)++] = g->nodes[i];
    *out = list;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count)
{
    if (!count)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    if (g)
        give_nodes(g->nodes, g->nnodes, nodes, count);
    cudart_unlock();
    return cudart_result(g ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count)
{
    if (!count)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    struct CUgraphNode_st **list = NULL;
    size_t n = 0;
    cudaError_t e = g ? collect(g, NULL, 1, &list, &n) : cudaErrorInvalidValue;
    if (!e)
        give_nodes(list, n, nodes, count);
    free(list);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphGetEdges_v2(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                            cudaGraphEdgeData *edges, size_t *count)
{
    if (!count || (!from != !to))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    size_t n = 0;
    for (size_t i = 0; g && i < g->nnodes; i++)
        for (size_t d = 0; d < g->nodes[i]->ndeps; d++) {
            if (from && n < *count) {
                from[n] = g->nodes[i]->deps[d];
                to[n] = g->nodes[i];
                if (edges)
                    memset(&edges[n], 0, sizeof *edges);
            }
            n++;
        }
    if (g && from) {
        for (size_t i = n; i < *count; i++) {
            from[i] = to[i] = NULL;
            if (edges)
                memset(&edges[i], 0, sizeof *edges);
        }
        if (*count > n)
            *count = n;
    } else if (g) {
        *count = n;
    }
    cudart_unlock();
    return cudart_result(g ? cudaSuccess : cudaErrorInvalidValue);
}

/* Dependencies (dependents == 0) or dependent nodes of a node. */
static cudaError_t node_neighbours(cudaGraphNode_t node, cudaGraphNode_t *out, cudaGraphEdgeData *edges,
                                   size_t *count, int dependents)
{
    if (!count)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = cudart_node_of(node);
    struct CUgraphNode_st **list = NULL;
    size_t k = 0;
    cudaError_t e = !n ? cudaErrorInvalidValue : dependents ? collect(n->graph, n, 0, &list, &k) : cudaSuccess;
    if (!e) {
        size_t asked = *count;
        give_nodes(dependents ? list : n->deps, dependents ? k : n->ndeps, out, count);
        for (size_t i = 0; out && edges && i < asked; i++)
            memset(&edges[i], 0, sizeof *edges);
    }
    free(list);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphNodeGetDependencies_v2(cudaGraphNode_t node, cudaGraphNode_t *deps,
                                                       cudaGraphEdgeData *edges, size_t *count)
{
    return node_neighbours(node, deps, edges, count, 0);
}

CUDART_API cudaError_t cudaGraphNodeGetDependentNodes_v2(cudaGraphNode_t node, cudaGraphNode_t *nodes,
                                                         cudaGraphEdgeData *edges, size_t *count)
{
    return node_neighbours(node, nodes, edges, count, 1);
}

/* CUDA 13 gave the plain names the edge-data signatures of CUDA 12's _v2. */
#if CUDART_ABI_MAJOR >= 13
CUDART_ALIAS(cudaGraphAddDependencies, cudaGraphAddDependencies_v2)
CUDART_ALIAS(cudaGraphRemoveDependencies, cudaGraphRemoveDependencies_v2)
CUDART_ALIAS(cudaGraphGetEdges, cudaGraphGetEdges_v2)
CUDART_ALIAS(cudaGraphNodeGetDependencies, cudaGraphNodeGetDependencies_v2)
CUDART_ALIAS(cudaGraphNodeGetDependentNodes, cudaGraphNodeGetDependentNodes_v2)
#else
CUDART_API cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                const cudaGraphNode_t *to, size_t count)
{
    return change_edges(graph, from, to, NULL, count, 1);
}

CUDART_API cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, size_t count)
{
    return change_edges(graph, from, to, NULL, count, 0);
}

CUDART_API cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                         size_t *count)
{
    return cudaGraphGetEdges_v2(graph, from, to, NULL, count);
}

CUDART_API cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps, size_t *count)
{
    return node_neighbours(node, deps, NULL, count, 0);
}

CUDART_API cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *nodes, size_t *count)
{
    return node_neighbours(node, nodes, NULL, count, 1);
}
#endif

CUDART_API cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    cudart_lock();
    struct CUgraphNode_st *n = cudart_node_of(node);
    if (n) {
        struct CUgraph_st *g = n->graph;
        for (size_t i = 0; i < g->nnodes; i++) {
            struct CUgraphNode_st *m = g->nodes[i];
            for (size_t d = 0; d < m->ndeps; d++)
                if (m->deps[d] == n) {
                    memmove(&m->deps[d], &m->deps[d + 1], (m->ndeps - d - 1) * sizeof *m->deps);
                    m->ndeps--;
                    break;
                }
        }
        size_t i = node_index(g, n);
        memmove(&g->nodes[i], &g->nodes[i + 1], (g->nnodes - i - 1) * sizeof *g->nodes);
        g->nnodes--;
        node_free(n);
    }
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t graph)
{
    if (!clone)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph), *c = NULL;
    cudaError_t e = g ? cudart_graph_clone(g, &c) : cudaErrorInvalidValue;
    if (!e)
        *clone = c;
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *found, cudaGraphNode_t original, cudaGraph_t clone)
{
    if (!found)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *c = cudart_graph_of(clone);
    cudaError_t e = cudaErrorInvalidValue;
    for (size_t i = 0; c && i < c->nnodes; i++)
        if (c->nodes[i]->origin == original) {
            *found = c->nodes[i];
            e = cudaSuccess;
            break;
        }
    cudart_unlock();
    return cudart_result(e);
}

/* ---- cudaGraphDebugDotPrint ------------------------------------------------------- */

static const char *type_name(int type)
{
    static const char *names[] = {"KERNEL", "MEMCPY", "MEMSET", "HOST", "CHILD_GRAPH", "EMPTY", "WAIT_EVENT",
                                  "EVENT_RECORD", "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE"};
    return type >= 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : "UNKNOWN";
}

static void dot_graph(FILE *f, const struct CUgraph_st *g, int depth)
{
    fprintf(f, "%*ssubgraph cluster_%llu {\n%*slabel=\"graph_%llu\";\n", depth * 2, "", g->id, depth * 2 + 2, "",
            g->id);
    for (size_t i = 0; i < g->nnodes; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        fprintf(f, "%*s\"graph_%llu_node_%llu\" [shape=box, label=\"%s %llu", depth * 2 + 2, "", g->id, n->seq,
                type_name(n->type), n->seq);
        switch (n->type) {
        case cudaGraphNodeTypeKernel: {
            const struct cudaKernelNodeParams *p = &n->u.kernel.call.params;
            fprintf(f, "\\n%s\\n<<<(%u,%u,%u), (%u,%u,%u), %u>>>", n->u.kernel.kr->name, p->gridDim.x,
                    p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z, p->sharedMemBytes);
            break;
        }
        case cudaGraphNodeTypeMemcpy:
            fprintf(f, "\\n%zu x %zu x %zu bytes, kind %d", n->u.memcpy.extent.width, n->u.memcpy.extent.height,
                    n->u.memcpy.extent.depth, n->u.memcpy.kind);
            break;
        case cudaGraphNodeTypeMemset:
            fprintf(f, "\\n%p value %u, %zu x %zu elements of %u bytes", n->u.memset.dst, n->u.memset.value,
                    n->u.memset.width, n->u.memset.height, n->u.memset.elementSize);
            break;
        case cudaGraphNodeTypeMemAlloc:
            fprintf(f, "\\n%p, %zu bytes", n->u.alloc.dptr, n->u.alloc.bytesize);
            break;
        case cudaGraphNodeTypeMemFree:
            fprintf(f, "\\n%p", n->u.free_ptr);
            break;
        default:
            break;
        }
        fprintf(f, "\"];\n");
        if (n->type == cudaGraphNodeTypeGraph)
            dot_graph(f, n->u.child, depth + 1);
    }
    for (size_t i = 0; i < g->nnodes; i++)
        for (size_t d = 0; d < g->nodes[i]->ndeps; d++)
            fprintf(f, "%*s\"graph_%llu_node_%llu\" -> \"graph_%llu_node_%llu\";\n", depth * 2 + 2, "", g->id,
                    g->nodes[i]->deps[d]->seq, g->id, g->nodes[i]->seq);
    fprintf(f, "%*s}\n", depth * 2, "");
}

CUDART_API cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    (void)flags;
    if (!path)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    cudaError_t e = g ? cudaSuccess : cudaErrorInvalidValue;
    FILE *f = e ? NULL : fopen(path, "w");
    if (!e && !f)
        e = cudaErrorOperatingSystem;
    if (f) {
        fprintf(f, "digraph dot {\n");
        dot_graph(f, g, 1);
        fprintf(f, "}\n");
        if (fclose(f))
            e = cudaErrorOperatingSystem;
    }
    cudart_unlock();
    return cudart_result(e);
}
