/* Conditional nodes of CUDA graphs in kemu's libcudart replacement (CUDA
 * 12.4's if and while nodes, 12.8's if/else and switch): conditional
 * handles, the nodes and their body graphs, the checks of instantiation,
 * and running them.
 *
 * A handle is the device address of 4 bytes of device memory that hold the
 * condition's value (src/exec/call_support.c makes them, of a kind of
 * their own, so that they are no user allocation); cudaGraphSetConditional
 * in a kernel stores there (src/vm/devrt.c, which faults for an address
 * that is no handle), and a conditional node reads it when its turn comes.
 * Graph launches run their nodes one after another, so the value a node
 * reads is the one its upstream kernels left. A handle belongs to the
 * graph it was made for (which holds a reference until it is destroyed);
 * each conditional node using it holds one too, in the graph and in every
 * clone and instantiation, so an executable graph keeps its handles after
 * its graph is gone. CUDA allows one instantiation at a time of a graph
 * with conditional nodes, and neither cloning it nor using it as a child
 * graph, so a handle's value is never shared by two running graphs. */
#include "config.h"
#include "cudart/graph.h"
#include "exec/call_support.h"

#include <stdlib.h>
#include <string.h>

static cudart_ptrmap handles; /* address -> cudart_cond_handle */

cudart_cond_handle *cudart_cond_handle_of(unsigned long long handle)
{
    return handle ? cudart_ptrmap_get(&handles, (const void *)(uintptr_t)handle) : NULL;
}

void cudart_cond_retain(cudart_cond_handle *h)
{
    if (h)
        h->refs++;
}

void cudart_cond_release(cudart_cond_handle *h)
{
    if (!h || --h->refs)
        return;
    if (h->address) {
        cudart_ptrmap_remove(&handles, (const void *)(uintptr_t)h->address);
        exec_conditional_free(h->device, h->address);
    }
    free(h);
}

void cudart_graph_conditionals_reset(const kemu_device *device)
{
    for (size_t i = 0; i < handles.cap; i++)
        if (handles.keys[i]) {
            cudart_cond_handle *h = handles.values[i];
            if (h->device != device)
                continue;
            cudart_ptrmap_remove(&handles, (const void *)(uintptr_t)h->address);
            h->address = 0;
            i = (size_t)-1; /* the map changed: look again from the start */
        }
}

CUDART_API cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *out, cudaGraph_t graph,
                                                        unsigned int default_value, unsigned int flags)
{
    if (!out || (flags & ~(unsigned)cudaGraphCondAssignDefault))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph);
    kemu_device *dev = NULL;
    cudaError_t e = g ? cudart_device(&dev) : cudaErrorInvalidValue;
    cudart_cond_handle *h = e ? NULL : calloc(1, sizeof *h);
    cudart_cond_handle **list = NULL;
    uint64_t address = 0;
    if (!e && !h)
        e = cudaErrorMemoryAllocation;
    if (!e && !(list = realloc(g->handles, (g->nhandles + 1) * sizeof *list)))
        e = cudaErrorMemoryAllocation;
    if (list)
        g->handles = list;
    if (!e && exec_conditional_alloc(dev, &address))
        e = cudaErrorMemoryAllocation;
    if (!e && cudart_ptrmap_put(&handles, (const void *)(uintptr_t)address, h)) {
        exec_conditional_free(dev, address);
        e = cudaErrorMemoryAllocation;
    }
    if (e) {
        free(h);
    } else {
        h->address = address;
        h->default_value = default_value;
        h->flags = flags;
        h->graph_id = g->id;
        h->refs = 1; /* the graph's */
        h->device = dev;
        /* the value before any launch: the default (CUDA leaves it undefined
         * without cudaGraphCondAssignDefault) */
        memcpy((void *)(uintptr_t)address, &default_value, sizeof default_value);
        g->handles[g->nhandles++] = h;
        *out = address;
    }
    cudart_trace("conditional handle 0x%llx for graph %llu (default %u, flags %u): %s",
                 e ? 0ull : (unsigned long long)address, g ? g->id : 0ull, default_value, flags,
                 cudart_error_name(e));
    cudart_unlock();
    return cudart_result(e);
}

/* Whether graph g is the graph `id` or lies inside it (as a body). */
static int graph_within(const struct CUgraph_st *g, unsigned long long id)
{
    for (; g; g = g->parent ? g->parent->graph : NULL)
        if (g->id == id)
            return 1;
    return 0;
}

cudaError_t cudart_cond_node_init(struct CUgraphNode_st *n, struct cudaConditionalNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    unsigned size = p->size;
    if ((p->type == cudaGraphCondTypeIf && size != 1 && size != 2) ||
        (p->type == cudaGraphCondTypeWhile && size != 1) || (p->type == cudaGraphCondTypeSwitch && size == 0) ||
        p->type < cudaGraphCondTypeIf || p->type > cudaGraphCondTypeSwitch)
        return cudaErrorInvalidValue;
    /* the handle must be made for the node's graph or a graph it is a body
     * of; a child graph (of a child-graph node) cannot hold conditionals */
    cudart_cond_handle *h = cudart_cond_handle_of(p->handle);
    if (!h || !graph_within(n->graph, h->graph_id) || (n->graph->is_child && !n->graph->parent))
        return cudaErrorInvalidValue;
    struct CUgraph_st **bodies = calloc(size, sizeof *bodies);
    if (!bodies)
        return cudaErrorMemoryAllocation;
    cudaError_t e = cudaSuccess;
    for (unsigned i = 0; !e && i < size; i++) {
        e = cudart_graph_new(&bodies[i]);
        if (!e) {
            bodies[i]->is_child = 1;
            bodies[i]->parent = n;
        }
    }
    if (e) {
        for (unsigned i = 0; i < size; i++)
            cudart_graph_free(bodies[i]);
        free(bodies);
        return e;
    }
    cudart_cond_retain(h);
    n->u.cond.handle = h;
    n->u.cond.type = p->type;
    n->u.cond.size = size;
    n->u.cond.bodies = bodies;
    p->phGraph_out = bodies;
    return cudaSuccess;
}

int cudart_graph_has_conditional(const struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeConditional ||
            (n->type == cudaGraphNodeTypeGraph && cudart_graph_has_conditional(n->u.child)))
            return 1;
    }
    return 0;
}

/* Whether handle h is used by a conditional node in g (bodies included). */
static int handle_used(const struct CUgraph_st *g, const cudart_cond_handle *h)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        if (n->type != cudaGraphNodeTypeConditional)
            continue;
        if (n->u.cond.handle == h)
            return 1;
        for (unsigned b = 0; b < n->u.cond.size; b++)
            if (handle_used(n->u.cond.bodies[b], h))
                return 1;
    }
    return 0;
}

/* The checks of cudart_cond_check below g, the top graph being `top`;
 * in_body: g is (inside) a conditional body. */
static int check_graph(const struct CUgraph_st *top, const struct CUgraph_st *g, int in_body, int *result,
                       struct CUgraphNode_st **bad)
{
    for (size_t i = 0; i < g->nhandles; i++)
        if (!handle_used(top, g->handles[i])) {
            *result = cudaGraphInstantiateConditionalHandleUnused;
            return 0;
        }
    for (size_t i = 0; i < g->nnodes; i++) {
        struct CUgraphNode_st *n = g->nodes[i];
        switch (n->type) {
        case cudaGraphNodeTypeKernel:
        case cudaGraphNodeTypeMemcpy:
        case cudaGraphNodeTypeMemset:
        case cudaGraphNodeTypeEmpty:
            break;
        case cudaGraphNodeTypeGraph:
            if (!check_graph(top, n->u.child, in_body, result, bad))
                return 0;
            break;
        case cudaGraphNodeTypeConditional:
            for (unsigned b = 0; b < n->u.cond.size; b++)
                if (!check_graph(top, n->u.cond.bodies[b], 1, result, bad))
                    return 0;
            break;
        default: /* host, event, allocation and free nodes */
            if (in_body) {
                *result = cudaGraphInstantiateNodeOperationNotSupported;
                *bad = n;
                return 0;
            }
            break;
        }
    }
    return 1;
}

cudaError_t cudart_cond_check(const struct CUgraph_st *g, int *result, struct CUgraphNode_st **bad)
{
    *bad = NULL;
    return check_graph(g, g, 0, result, bad) ? cudaSuccess : cudaErrorInvalidValue;
}

void cudart_cond_assign_defaults(const struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        if (n->type == cudaGraphNodeTypeGraph) {
            cudart_cond_assign_defaults(n->u.child);
            continue;
        }
        if (n->type != cudaGraphNodeTypeConditional)
            continue;
        const cudart_cond_handle *h = n->u.cond.handle;
        if (h->address && (h->flags & cudaGraphCondAssignDefault))
            __atomic_store_n((unsigned *)(uintptr_t)h->address, h->default_value, __ATOMIC_RELAXED);
        for (unsigned b = 0; b < n->u.cond.size; b++)
            cudart_cond_assign_defaults(n->u.cond.bodies[b]);
    }
}

/* Whether the emulated device a handle lives on (where its graph runs) has
 * a kernel fault, seen or not yet seen. Locked. */
static int cond_device_faulted(const kemu_device *device)
{
    for (int i = 0; i < cudart_global.ndevices; i++)
        if (cudart_global.devs[i].device == device)
            return cudart_global.devs[i].pending_error || cudart_global.devs[i].sticky_error;
    return 0;
}

cudaError_t cudart_cond_run(struct CUgraphNode_st *n)
{
    const cudart_cond_handle *h = n->u.cond.handle;
    if (!h->address) /* made before a cudaDeviceReset */
        return cudaErrorContextIsDestroyed;
    const unsigned *value = (const unsigned *)(uintptr_t)h->address;
    unsigned v = __atomic_load_n(value, __ATOMIC_RELAXED);
    cudart_trace("conditional node (type %d, %u bodies) of handle 0x%llx: value %u", n->u.cond.type, n->u.cond.size,
                 h->address, v);
    switch (n->u.cond.type) {
    case cudaGraphCondTypeIf:
        if (v)
            return cudart_graph_run(n->u.cond.bodies[0]);
        return n->u.cond.size == 2 ? cudart_graph_run(n->u.cond.bodies[1]) : cudaSuccess;
    case cudaGraphCondTypeSwitch:
        return v < n->u.cond.size ? cudart_graph_run(n->u.cond.bodies[v]) : cudaSuccess;
    default: { /* while: the body's kernels set the value for the next test */
        cudaError_t e = cudaSuccess;
        while (!e && __atomic_load_n(value, __ATOMIC_RELAXED)) {
            e = cudart_graph_run(n->u.cond.bodies[0]);
            /* a kernel fault ends the graph's work, as it ends a GPU context's */
            if (!e && cond_device_faulted(h->device))
                break;
        }
        return e;
    }
    }
}
