/* Reading and changing the parameters of CUDA graph nodes in kemu's
 * libcudart replacement: the Get/SetParams calls of each node type (a
 * change goes through the same checks and copies as adding the node), copy
 * nodes to and from __device__ variables, and kernel-node launch
 * attributes. Nodes are built in graph.c. */
#include "config.h"
#include "cudart/graph.h"

#include <string.h>

/* ---- per-type parameters ------------------------------------------------------- */

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
    struct cudaMemcpy3DParms p = cudart_copy_1d(dst, src, count, kind);
    return node_params(node, cudaGraphNodeTypeMemcpy, NULL, 0, &p);
}

CUDART_API cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void *symbol,
                                                            const void *src, size_t count, size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, (void *)src, count, offset, kind, 1, &p);
    return e ? cudart_result(e) : node_params(node, cudaGraphNodeTypeMemcpy, NULL, 0, &p);
}

CUDART_API cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void *dst, const void *symbol,
                                                              size_t count, size_t offset, int kind)
{
    struct cudaMemcpy3DParms p;
    cudaError_t e = cudart_symbol_copy_params(symbol, dst, count, offset, kind, 0, &p);
    return e ? cudart_result(e) : node_params(node, cudaGraphNodeTypeMemcpy, NULL, 0, &p);
}

/* Kernel node attributes: the cluster dimension and cooperative launch
 * are honoured; the other launch attributes are accepted and read back as
 * zeros (they tune scheduling, which kemu does not model). */
CUDART_API cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t node, int attr,
                                                       const cudaLaunchAttributeValue *value)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = typed_node(node, cudaGraphNodeTypeKernel);
    if (n && attr == cudaLaunchAttributeClusterDimension) {
        n->u.kernel.call.cluster[0] = value->clusterDim.x;
        n->u.kernel.call.cluster[1] = value->clusterDim.y;
        n->u.kernel.call.cluster[2] = value->clusterDim.z;
    } else if (n && attr == cudaLaunchAttributeCooperative) {
        n->u.kernel.call.cooperative = value->cooperative != 0;
    }
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t node, int attr,
                                                       cudaLaunchAttributeValue *value)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct CUgraphNode_st *n = typed_node(node, cudaGraphNodeTypeKernel);
    if (n) {
        memset(value, 0, sizeof *value);
        if (attr == cudaLaunchAttributeClusterDimension) {
            value->clusterDim.x = n->u.kernel.call.cluster[0];
            value->clusterDim.y = n->u.kernel.call.cluster[1];
            value->clusterDim.z = n->u.kernel.call.cluster[2];
        } else if (attr == cudaLaunchAttributeCooperative) {
            value->cooperative = n->u.kernel.call.cooperative;
        }
    }
    cudart_unlock();
    return cudart_result(n ? cudaSuccess : cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t dst, cudaGraphNode_t src)
{
    cudart_lock();
    struct CUgraphNode_st *a = typed_node(dst, cudaGraphNodeTypeKernel), *b = typed_node(src, cudaGraphNodeTypeKernel);
    if (a && b) {
        memcpy(a->u.kernel.call.cluster, b->u.kernel.call.cluster, sizeof a->u.kernel.call.cluster);
        a->u.kernel.call.cooperative = b->u.kernel.call.cooperative;
    }
    cudart_unlock();
    return cudart_result(a && b ? cudaSuccess : cudaErrorInvalidValue);
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
