/* kemu's CUDA driver API, graphs and stream capture: the cuGraph* and
 * cuStream*Capture* entry points, a translation onto the runtime's graphs
 * (graph*.c) and capture (capture.c). A CUgraph, CUgraphNode and
 * CUgraphExec are the runtime's cudaGraph_t, cudaGraphNode_t and
 * cudaGraphExec_t (as with NVIDIA's libraries, the handles of both APIs
 * are the same objects), so graphs made by one API can be used by the
 * other. Only the node parameter structs differ: the driver's kernel node
 * names a CUfunction (or a CUkernel) with its dimensions spelled out, its
 * copy node takes a CUDA_MEMCPY3D, whose sides (host, device, unified
 * memory or a CUDA array) become the runtime's pitched pointers. Runtime
 * calls made here keep the runtime's per-thread last error as it was. */
#include "config.h"
#include "cudart/driver.h"

#include <stdio.h>
#include <string.h>

/* the runtime's graph and capture functions called here */
cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int flags);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t graph);
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *params);
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaMemcpy3DParms *params);
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                   size_t ndeps, const struct cudaMemsetParams *params);
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                 size_t ndeps, const struct cudaHostNodeParams *params);
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                  size_t ndeps);
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                     size_t n);
cudaError_t cudaGraphAddDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *edges, size_t n);
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count);
cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count);
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, int *type);
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags);
cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *params);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *params);
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo *info);
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, int mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *status);
cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, int *status, unsigned long long *id,
                                        cudaGraph_t *graph, const cudaGraphNode_t **deps, size_t *ndeps);
cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream, int *status, unsigned long long *id,
                                        cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                        const cudaGraphEdgeData **edges, size_t *ndeps);
cudaError_t cudaThreadExchangeStreamCaptureMode(int *mode);
/* and the driver's (driver.c) */
CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuCtxGetCurrent(CUcontext *ctx);

typedef cudaGraph_t CUgraph;
typedef cudaGraphNode_t CUgraphNode;
typedef cudaGraphExec_t CUgraphExec;

/* CUDA_KERNEL_NODE_PARAMS (_v2, what cuda.h of CUDA 12 and 13 calls it;
 * _v1 is the same without kern and ctx). */
typedef struct {
    CUfunction func;
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern;   /* _v2: used when func is NULL */
    CUcontext ctx;   /* _v2: the context of kern (kemu's contexts share one address space) */
} drv_kernel_node_params;

_Static_assert(sizeof(drv_kernel_node_params) == 72, "CUDA_KERNEL_NODE_PARAMS_v2");
_Static_assert(offsetof(drv_kernel_node_params, kern) == 56, "CUDA_KERNEL_NODE_PARAMS_v1 is its first 56 bytes");

/* CUDA_MEMSET_NODE_PARAMS and CUDA_HOST_NODE_PARAMS are laid out as the
 * runtime's cudaMemsetParams and cudaHostNodeParams; CUgraphNodeType,
 * CUstreamCaptureStatus / Mode, CUgraphExecUpdateResult(Info) and
 * CUDA_GRAPH_INSTANTIATE_PARAMS number and lay out as the runtime's. */
_Static_assert(sizeof(struct cudaMemsetParams) == 40, "CUDA_MEMSET_NODE_PARAMS");
_Static_assert(sizeof(struct cudaHostNodeParams) == 16, "CUDA_HOST_NODE_PARAMS");

/* ---- graphs ----------------------------------------------------------------------- */

DRIVER_API CUresult cuGraphCreate(CUgraph *graph, unsigned int flags)
{
    RT_CALL(cudaGraphCreate(graph, flags));
}

DRIVER_API CUresult cuGraphDestroy(CUgraph graph)
{
    RT_CALL(cudaGraphDestroy(graph));
}

DRIVER_API CUresult cuGraphClone(CUgraph *clone, CUgraph graph)
{
    RT_CALL(cudaGraphClone(clone, graph));
}

DRIVER_API CUresult cuGraphDebugDotPrint(CUgraph graph, const char *path, unsigned int flags)
{
    RT_CALL(cudaGraphDebugDotPrint(graph, path, flags));
}

DRIVER_API CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *count)
{
    RT_CALL(cudaGraphGetNodes(graph, nodes, count));
}

DRIVER_API CUresult cuGraphGetRootNodes(CUgraph graph, CUgraphNode *nodes, size_t *count)
{
    RT_CALL(cudaGraphGetRootNodes(graph, nodes, count));
}

DRIVER_API CUresult cuGraphNodeGetType(CUgraphNode node, int *type)
{
    RT_CALL(cudaGraphNodeGetType(node, type));
}

DRIVER_API CUresult cuGraphAddDependencies(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                           size_t n)
{
    RT_CALL(cudaGraphAddDependencies(graph, from, to, n));
}

DRIVER_API CUresult cuGraphAddDependencies_v2(CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,
                                              const cudaGraphEdgeData *edges, size_t n)
{
    RT_CALL(cudaGraphAddDependencies_v2(graph, from, to, edges, n));
}

/* ---- nodes ------------------------------------------------------------------------ */

/* The runtime's kernel node parameters for the driver's (v1: without kern
 * and ctx); CUDA_ERROR_INVALID_VALUE without parameters or function. */
static CUresult kernel_params_in(const drv_kernel_node_params *p, int v2, struct cudaKernelNodeParams *out)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    CUfunction f = p->func ? p->func : v2 ? p->kern : NULL;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return f ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
    out->func = kr; /* a kernel record is found under its own address */
    out->gridDim = (dim3){p->gridDimX, p->gridDimY, p->gridDimZ};
    out->blockDim = (dim3){p->blockDimX, p->blockDimY, p->blockDimZ};
    out->sharedMemBytes = p->sharedMemBytes;
    out->kernelParams = p->kernelParams;
    out->extra = p->extra;
    return CUDA_SUCCESS;
}

static CUresult add_kernel_node(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                const drv_kernel_node_params *p, int v2)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    struct cudaKernelNodeParams k;
    if ((r = kernel_params_in(p, v2, &k)))
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaGraphAddKernelNode(node, graph, deps, ndeps, &k));
}

DRIVER_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                            const drv_kernel_node_params *params)
{
    return add_kernel_node(node, graph, deps, ndeps, params, 1);
}

DRIVER_API CUresult cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                         const drv_kernel_node_params *params)
{
    return add_kernel_node(node, graph, deps, ndeps, params, 0);
}

/* cuGraphKernelNodeGetParams: the runtime's parameters, with the function
 * as a CUfunction (v2: kern NULL, ctx the current context). */
static CUresult kernel_node_get(CUgraphNode node, drv_kernel_node_params *p, int v2)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaKernelNodeParams k;
    cudaError_t saved = drv_rt_save();
    r = drv_rt_done(saved, cudaGraphKernelNodeGetParams(node, &k));
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = cudart_find_kernel(k.func);
    cudart_unlock();
    drv_kernel_node_params out;
    memset(&out, 0, sizeof out);
    out.func = kr;
    out.gridDimX = k.gridDim.x;
    out.gridDimY = k.gridDim.y;
    out.gridDimZ = k.gridDim.z;
    out.blockDimX = k.blockDim.x;
    out.blockDimY = k.blockDim.y;
    out.blockDimZ = k.blockDim.z;
    out.sharedMemBytes = k.sharedMemBytes;
    out.kernelParams = k.kernelParams;
    out.extra = k.extra;
    if (v2)
        cuCtxGetCurrent(&out.ctx);
    memcpy(p, &out, v2 ? sizeof out : offsetof(drv_kernel_node_params, kern));
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, drv_kernel_node_params *params)
{
    return kernel_node_get(node, params, 1);
}

DRIVER_API CUresult cuGraphKernelNodeGetParams(CUgraphNode node, drv_kernel_node_params *params)
{
    return kernel_node_get(node, params, 0);
}

static CUresult kernel_node_set(CUgraphExec exec, CUgraphNode node, const drv_kernel_node_params *p, int v2)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    struct cudaKernelNodeParams k;
    if ((r = kernel_params_in(p, v2, &k)))
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, exec ? cudaGraphExecKernelNodeSetParams(exec, node, &k)
                                   : cudaGraphKernelNodeSetParams(node, &k));
}

DRIVER_API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode node, const drv_kernel_node_params *params)
{
    return kernel_node_set(NULL, node, params, 1);
}

DRIVER_API CUresult cuGraphKernelNodeSetParams(CUgraphNode node, const drv_kernel_node_params *params)
{
    return kernel_node_set(NULL, node, params, 0);
}

DRIVER_API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec exec, CUgraphNode node,
                                                      const drv_kernel_node_params *params)
{
    if (!exec)
        return CUDA_ERROR_INVALID_VALUE;
    return kernel_node_set(exec, node, params, 1);
}

DRIVER_API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                   const drv_kernel_node_params *params)
{
    if (!exec)
        return CUDA_ERROR_INVALID_VALUE;
    return kernel_node_set(exec, node, params, 0);
}

/* One side of a CUDA_MEMCPY3D as a pitched pointer and a position in
 * bytes (a CUDA array is pitched linear memory in kemu); -1 when invalid. */
static int copy_side(int type, const void *host, CUdeviceptr device, void *array, size_t pitch, size_t height,
                     size_t x, size_t y, size_t z, size_t lod, struct cudaPitchedPtr *ptr, struct cudaPos *pos)
{
    if (lod)
        return -1;
    const char *base;
    size_t rows = height;
    if (drv_copy_side(type, host, device, array, &pitch, &rows, &base))
        return -1;
    *pos = (struct cudaPos){x, y, z};
    *ptr = (struct cudaPitchedPtr){(void *)base, pitch, pitch, rows};
    return 0;
}

DRIVER_API CUresult cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                         const drv_memcpy3d *p, CUcontext ctx)
{
    (void)ctx;
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaMemcpy3DParms q;
    memset(&q, 0, sizeof q);
    size_t spitch = p->srcPitch ? p->srcPitch : p->WidthInBytes, dpitch = p->dstPitch ? p->dstPitch : p->WidthInBytes;
    size_t sheight = p->srcHeight ? p->srcHeight : p->Height, dheight = p->dstHeight ? p->dstHeight : p->Height;
    if (copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, spitch, sheight, p->srcXInBytes, p->srcY,
                  p->srcZ, p->srcLOD, &q.srcPtr, &q.srcPos) ||
        copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, dpitch, dheight, p->dstXInBytes, p->dstY,
                  p->dstZ, p->dstLOD, &q.dstPtr, &q.dstPos))
        return CUDA_ERROR_INVALID_VALUE;
    if ((p->Depth > 1 && (q.srcPtr.ysize < p->Height || q.dstPtr.ysize < p->Height)) ||
        q.srcPtr.pitch < p->WidthInBytes || q.dstPtr.pitch < p->WidthInBytes)
        return CUDA_ERROR_INVALID_VALUE;
    q.extent = (struct cudaExtent){p->WidthInBytes, p->Height ? p->Height : 1, p->Depth ? p->Depth : 1};
    q.kind = cudaMemcpyDefault;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaGraphAddMemcpyNode(node, graph, deps, ndeps, &q));
}

DRIVER_API CUresult cuGraphAddMemsetNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                         const struct cudaMemsetParams *params, CUcontext ctx)
{
    (void)ctx;
    RT_CALL(cudaGraphAddMemsetNode(node, graph, deps, ndeps, params));
}

DRIVER_API CUresult cuGraphAddHostNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,
                                       const struct cudaHostNodeParams *params)
{
    RT_CALL(cudaGraphAddHostNode(node, graph, deps, ndeps, params));
}

DRIVER_API CUresult cuGraphAddEmptyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps, size_t ndeps)
{
    RT_CALL(cudaGraphAddEmptyNode(node, graph, deps, ndeps));
}

/* ---- executable graphs ------------------------------------------------------------ */

DRIVER_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    RT_CALL(cudaGraphInstantiateWithFlags(exec, graph, flags));
}

DRIVER_API CUresult cuGraphInstantiateWithParams(CUgraphExec *exec, CUgraph graph,
                                                 cudaGraphInstantiateParams *params)
{
    RT_CALL(cudaGraphInstantiateWithParams(exec, graph, params));
}
DRIVER_ALIAS(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams)

/* CUDA 11's cuGraphInstantiate (and _v2): the node that failed, and a log
 * (kemu's: the error's name, or empty). */
DRIVER_API CUresult cuGraphInstantiate_v2(CUgraphExec *exec, CUgraph graph, CUgraphNode *error_node, char *log,
                                          size_t log_size)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudaGraphInstantiateParams p;
    memset(&p, 0, sizeof p);
    cudaError_t saved = drv_rt_save();
    r = drv_rt_done(saved, cudaGraphInstantiateWithParams(exec, graph, &p));
    if (error_node)
        *error_node = p.errNode_out;
    if (log && log_size) {
        const char *name = NULL;
        cuGetErrorName(r, &name);
        snprintf(log, log_size, "%s", r && name ? name : "");
    }
    return r;
}
DRIVER_ALIAS(cuGraphInstantiate, cuGraphInstantiate_v2)

DRIVER_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    RT_CALL(cudaGraphLaunch(exec, stream));
}
DRIVER_ALIAS(cuGraphLaunch_ptsz, cuGraphLaunch)

DRIVER_API CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    RT_CALL(cudaGraphExecDestroy(exec));
}

DRIVER_API CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph, cudaGraphExecUpdateResultInfo *info)
{
    RT_CALL(cudaGraphExecUpdate(exec, graph, info));
}

/* CUDA 11's form: the offending node and the result apart. */
DRIVER_API CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphNode *error_node, int *result)
{
    cudaGraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CUresult r = cuGraphExecUpdate_v2(exec, graph, &info);
    if (error_node)
        *error_node = info.errorNode;
    if (result)
        *result = info.result;
    return r;
}

/* ---- stream capture --------------------------------------------------------------- */

DRIVER_API CUresult cuStreamBeginCapture_v2(CUstream stream, int mode)
{
    RT_CALL(cudaStreamBeginCapture(stream, mode));
}
DRIVER_ALIAS(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2)

/* CUDA 10.0's form, before capture modes: global mode. */
DRIVER_API CUresult cuStreamBeginCapture(CUstream stream)
{
    return cuStreamBeginCapture_v2(stream, cudaStreamCaptureModeGlobal);
}
DRIVER_ALIAS(cuStreamBeginCapture_ptsz, cuStreamBeginCapture)

DRIVER_API CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    RT_CALL(cudaStreamEndCapture(stream, graph));
}
DRIVER_ALIAS(cuStreamEndCapture_ptsz, cuStreamEndCapture)

DRIVER_API CUresult cuStreamIsCapturing(CUstream stream, int *status)
{
    RT_CALL(cudaStreamIsCapturing(stream, status));
}
DRIVER_ALIAS(cuStreamIsCapturing_ptsz, cuStreamIsCapturing)

DRIVER_API CUresult cuStreamGetCaptureInfo_v3(CUstream stream, int *status, unsigned long long *id, CUgraph *graph,
                                              const CUgraphNode **deps, const cudaGraphEdgeData **edges,
                                              size_t *ndeps)
{
    RT_CALL(cudaStreamGetCaptureInfo_v3(stream, status, id, graph, deps, edges, ndeps));
}
DRIVER_ALIAS(cuStreamGetCaptureInfo_v3_ptsz, cuStreamGetCaptureInfo_v3)

DRIVER_API CUresult cuStreamGetCaptureInfo_v2(CUstream stream, int *status, unsigned long long *id, CUgraph *graph,
                                              const CUgraphNode **deps, size_t *ndeps)
{
    RT_CALL(cudaStreamGetCaptureInfo_v2(stream, status, id, graph, deps, ndeps));
}
DRIVER_ALIAS(cuStreamGetCaptureInfo_v2_ptsz, cuStreamGetCaptureInfo_v2)

DRIVER_API CUresult cuStreamGetCaptureInfo(CUstream stream, int *status, unsigned long long *id)
{
    RT_CALL(cudaStreamGetCaptureInfo_v2(stream, status, id, NULL, NULL, NULL));
}
DRIVER_ALIAS(cuStreamGetCaptureInfo_ptsz, cuStreamGetCaptureInfo)

DRIVER_API CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
    RT_CALL(cudaThreadExchangeStreamCaptureMode(mode));
}
