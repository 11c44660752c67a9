/* The structure of CUDA graphs in kemu's libcudart replacement: edges
 * (added, removed, listed), nodes, roots, dependencies and dependents,
 * node types, cloning, and cudaGraphDebugDotPrint (a DOT file of the graph
 * and its child graphs). Building nodes is in graph.c. */
#include "config.h"
#include "cudart/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int node_depends_on(const struct CUgraphNode_st *n, const struct CUgraphNode_st *dep)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == dep)
            return 1;
    return 0;
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
    if (!cudart_default_edges(edges, count))
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
            e = cudart_graph_node_add_dep(b, from[i]);
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
    if (n)
        cudart_graph_node_destroy(n);
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t graph)
{
    if (!clone)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraph_st *g = cudart_graph_of(graph), *c = NULL;
    /* CUDA does not clone graphs with conditional nodes */
    cudaError_t e = !g ? cudaErrorInvalidValue : cudart_graph_has_conditional(g) ? cudaErrorNotSupported
                                                                                 : cudart_graph_clone(g, &c);
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
    if (type == cudaGraphNodeTypeConditional)
        return "CONDITIONAL";
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
        case cudaGraphNodeTypeConditional: {
            static const char *kinds[] = {"IF", "WHILE", "SWITCH"};
            fprintf(f, "\\n%s, %u bod%s, handle 0x%llx", kinds[n->u.cond.type], n->u.cond.size,
                    n->u.cond.size == 1 ? "y" : "ies", n->u.cond.handle->address);
            break;
        }
        default:
            break;
        }
        fprintf(f, "\"];\n");
        if (n->type == cudaGraphNodeTypeGraph)
            dot_graph(f, n->u.child, depth + 1);
        for (unsigned b = 0; n->type == cudaGraphNodeTypeConditional && b < n->u.cond.size; b++)
            dot_graph(f, n->u.cond.bodies[b], depth + 1);
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
