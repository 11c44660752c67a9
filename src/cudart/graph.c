/* CUDA graphs in kemu's libcudart replacement: graph and node records,
 * creating nodes (kernel, memcpy, memset, host, empty, event record /
 * wait, child graph, memory allocation and free, conditional; one call
 * per type and the generic cudaGraphAddNode and cudaGraphNodeSetParams). A
 * node keeps its own copy of everything it was given (kernel arguments,
 * child graphs), as CUDA does. The per-type parameter calls are in
 * graph_params.c; edges, queries, clones and DOT output in
 * graph_structure.c; instantiation and launches in graph_exec.c;
 * conditional handles and nodes in graph_cond.c; stream capture in
 * capture.c. */
#include "config.h"
#include "cudart/graph.h"

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
    } else if (n->type == cudaGraphNodeTypeConditional) {
        for (unsigned i = 0; n->u.cond.bodies && i < n->u.cond.size; i++)
            cudart_graph_free(n->u.cond.bodies[i]);
        free(n->u.cond.bodies);
        n->u.cond.bodies = NULL;
        cudart_cond_release(n->u.cond.handle);
        n->u.cond.handle = NULL;
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
    for (size_t i = 0; i < g->nuser_refs; i++)
        cudart_user_object_release(g->user_refs[i].object, g->user_refs[i].count);
    free(g->user_refs);
    for (size_t i = 0; i < g->nhandles; i++)
        cudart_cond_release(g->handles[i]);
    free(g->handles);
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
        /* a graph with conditional nodes cannot be a child graph (CUDA) */
        if (!child || cudart_graph_has_conditional(child))
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
    case cudaGraphNodeTypeConditional:
        /* made once: its parameters cannot change (CUDA); writes phGraph_out */
        if (n->u.cond.bodies)
            return cudaErrorInvalidValue;
        return cudart_cond_node_init(n, (struct cudaConditionalNodeParams *)params);
    default:
        return cudaErrorInvalidValue;
    }
}

cudaError_t cudart_graph_node_add_dep(struct CUgraphNode_st *n, struct CUgraphNode_st *dep)
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
        e = cudart_graph_node_add_dep(n, deps[i]);
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
        } else if (o->type == cudaGraphNodeTypeConditional) {
            cudart_cond_retain(n->u.cond.handle);
            n->u.cond.bodies = calloc(o->u.cond.size, sizeof *n->u.cond.bodies);
            if (!n->u.cond.bodies)
                e = cudaErrorMemoryAllocation;
            for (unsigned b = 0; !e && b < o->u.cond.size; b++) {
                e = cudart_graph_clone(o->u.cond.bodies[b], &n->u.cond.bodies[b]);
                if (!e) {
                    n->u.cond.bodies[b]->is_child = 1;
                    n->u.cond.bodies[b]->parent = n;
                }
            }
        }
        for (size_t d = 0; !e && d < o->ndeps; d++)
            e = cudart_graph_node_add_dep(n, c->nodes[node_index(g, o->deps[d])]);
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
    if (!e && g->nuser_refs) { /* the clone holds the same references */
        c->user_refs = malloc(g->nuser_refs * sizeof *c->user_refs);
        if (!c->user_refs)
            e = cudaErrorMemoryAllocation;
        for (size_t i = 0; !e && i < g->nuser_refs; i++) {
            c->user_refs[i] = g->user_refs[i];
            cudart_user_object_retain(c->user_refs[i].object, c->user_refs[i].count);
            c->nuser_refs++;
        }
    }
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
    if (g && g->is_child) /* owned by its child-graph node */
        g = NULL;
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
struct cudaMemcpy3DParms cudart_copy_1d(void *dst, const void *src, size_t count, int kind)
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
    struct cudaMemcpy3DParms p = cudart_copy_1d(dst, src, count, kind);
    return add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemcpy, &p);
}

cudaError_t cudart_symbol_copy_params(const void *symbol, void *host, size_t count, size_t offset, int kind,
                                      int to_symbol, struct cudaMemcpy3DParms *out)
{
    void *address = NULL;
    size_t size = 0;
    cudaError_t e = cudaGetSymbolAddress(&address, symbol);
    if (!e)
        e = cudaGetSymbolSize(&size, symbol);
    if (!e && (offset > size || count > size - offset))
        e = cudaErrorInvalidValue;
    if (!e && kind != cudaMemcpyDefault && kind != cudaMemcpyDeviceToDevice &&
        kind != (to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost))
        e = cudaErrorInvalidMemcpyDirection;
    if (e)
        return e;
    char *sym = (char *)address + offset;
    *out = to_symbol ? cudart_copy_1d(sym, host, count, kind) : cudart_copy_1d(host, sym, count, kind);
    return cudaSuccess;
}

CUDART_API cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *node, cudaGraph_t graph,
                                                      const cudaGraphNode_t *deps, size_t ndeps, const void *symbol,
                                                      const void *src, size_t count, size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, (void *)src, count, offset, kind, 1, &p);
    return e ? cudart_result(e) : add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemcpy, &p);
}

CUDART_API cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *node, cudaGraph_t graph,
                                                        const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                                        const void *symbol, size_t count, size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, dst, count, offset, kind, 0, &p);
    return e ? cudart_result(e) : add_node(node, graph, deps, ndeps, cudaGraphNodeTypeMemcpy, &p);
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

/* ---- the generic node calls (struct cudaGraphNodeParams) ------------------------ */

/* The internal parameters (as cudart_graph_add_node takes them) of a
 * cudaGraphNodeParams; *call and *child are storage for the kernel and
 * child-graph forms. cudaErrorNotSupported for types kemu cannot run. */
static cudaError_t generic_params(struct cudaGraphNodeParams *p, cudart_kernel_call *call, cudaGraph_t *child,
                                  const void **out)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        memset(call, 0, sizeof *call);
        call->params = p->kernel;
        *out = call;
        return cudaSuccess;
    case cudaGraphNodeTypeMemcpy: *out = &p->memcpy.copyParams; return cudaSuccess;
    case cudaGraphNodeTypeMemset: *out = &p->memset; return cudaSuccess;
    case cudaGraphNodeTypeHost: *out = &p->host; return cudaSuccess;
    case cudaGraphNodeTypeGraph:
        *child = p->graph.graph;
        *out = child;
        return cudaSuccess;
    case cudaGraphNodeTypeEmpty: *out = NULL; return cudaSuccess;
    case cudaGraphNodeTypeWaitEvent: *out = &p->eventWait.event; return cudaSuccess;
    case cudaGraphNodeTypeEventRecord: *out = &p->eventRecord.event; return cudaSuccess;
    case cudaGraphNodeTypeMemAlloc: *out = &p->alloc; return cudaSuccess;
    case cudaGraphNodeTypeMemFree: *out = &p->free.dptr; return cudaSuccess;
    case cudaGraphNodeTypeConditional: *out = &p->conditional; return cudaSuccess;
    default: /* external semaphores */
        return cudaErrorNotSupported;
    }
}

CUDART_API cudaError_t cudaGraphAddNode_v2(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                           const cudaGraphEdgeData *edges, size_t ndeps,
                                           struct cudaGraphNodeParams *params)
{
    cudart_kernel_call call;
    cudaGraph_t child = NULL;
    const void *inner = NULL;
    cudaError_t e = params && cudart_default_edges(edges, ndeps) ? generic_params(params, &call, &child, &inner)
                                                                 : cudaErrorInvalidValue;
    if (e)
        return cudart_result(e);
    if (params->type == cudaGraphNodeTypeMemFree) {
        cudart_lock();
        int known = cudart_graph_memory_known(params->free.dptr);
        cudart_unlock();
        if (!known)
            return cudart_result(cudaErrorInvalidValue);
    }
    e = add_node(node, graph, deps, ndeps, params->type, inner);
    if (!e && params->type == cudaGraphNodeTypeGraph && params->graph.ownership == 1) {
        cudart_lock(); /* cudaGraphChildGraphOwnershipMove: the node took the graph */
        struct CUgraph_st *g = cudart_graph_of(child);
        if (g)
            cudart_graph_free(g);
        cudart_unlock();
    }
    return e;
}

CUDART_API cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *params)
{
    cudart_kernel_call call;
    cudaGraph_t child = NULL;
    const void *inner = NULL;
    cudaError_t e = params ? generic_params(params, &call, &child, &inner) : cudaErrorInvalidValue;
    if (e)
        return cudart_result(e);
    cudart_lock();
    struct CUgraphNode_st *n = cudart_node_of(node);
    if (!n || n->type != params->type || n->type == cudaGraphNodeTypeMemAlloc || n->type == cudaGraphNodeTypeMemFree ||
        n->type == cudaGraphNodeTypeConditional)
        e = cudaErrorInvalidValue;
    else
        e = cudart_graph_node_set(n, inner);
    cudart_unlock();
    return cudart_result(e);
}

#if CUDART_ABI_MAJOR >= 13
CUDART_ALIAS(cudaGraphAddNode, cudaGraphAddNode_v2)
#else
CUDART_API cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                        size_t ndeps, struct cudaGraphNodeParams *params)
{
    return cudaGraphAddNode_v2(node, graph, deps, NULL, ndeps, params);
}
#endif

void cudart_graph_node_destroy(struct CUgraphNode_st *n)
{
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
