/* CUDA graphs through the driver API: a graph built node by node (a copy
 * from the host, a 32-bit memset, the vadd kernel of kernels.ptx, a copy
 * back, a host node, an empty root joined with cuGraphAddDependencies),
 * launched several times with new host input each time; node types and
 * counts, kernel node parameters read back and changed in the executable
 * graph, cuGraphExecUpdate back to the graph's own parameters and its
 * refusal of another topology, a clone, the DOT print; a graph made by
 * stream capture (copies, a byte memset, a launch, a host function),
 * launched several times; cuGetProcAddress of the versioned names; and the
 * errors (a NULL graph, a cycle, bad handles, capture misuse). Every result
 * is checked against values computed here on the CPU. argv[1]:
 * kernels.ptx. Self-checking: prints PASS drv_graph. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "check.h"

#include <string.h>

enum { N = 1000, LAUNCHES = 3 };

static int host_calls;
static float seen_by_host; /* what the host node saw of the copied-back output */
static float *host_out;

static void CUDA_CB host_node(void *arg)
{
    (void)arg;
    host_calls++;
    seen_by_host = host_out[7];
}

static CUDA_MEMCPY3D linear_copy(CUmemorytype src_type, const void *src_host, CUdeviceptr src_dev,
                                 CUmemorytype dst_type, void *dst_host, CUdeviceptr dst_dev, size_t bytes)
{
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = src_type;
    p.srcHost = src_host;
    p.srcDevice = src_dev;
    p.dstMemoryType = dst_type;
    p.dstHost = dst_host;
    p.dstDevice = dst_dev;
    p.WidthInBytes = bytes;
    p.Height = 1;
    p.Depth = 1;
    return p;
}

static void fill_input(float *a, int launch)
{
    for (int i = 0; i < N; i++)
        a[i] = (float)(i * (launch + 1)) - 3.0f;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: drv_graph KERNELS.ptx\n");
        return 2;
    }
    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxPushCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoad(&mod, argv[1]));
    CUfunction vadd;
    CK(cuModuleGetFunction(&vadd, mod, "vadd"));
    CUstream stream;
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    float *ha, *hc;
    CK(cuMemAllocHost((void **)&ha, N * sizeof(float)));
    CK(cuMemAllocHost((void **)&hc, N * sizeof(float)));
    host_out = hc;
    CUdeviceptr da, db, dc, dbytes;
    CK(cuMemAlloc(&da, N * sizeof(float)));
    CK(cuMemAlloc(&db, N * sizeof(float)));
    CK(cuMemAlloc(&dc, N * sizeof(float)));
    CK(cuMemAlloc(&dbytes, N));
    int n = N;

    /* ---- a graph by hand ---- */
    CUgraph graph;
    CK(cuGraphCreate(&graph, 0));
    CUgraphNode root, h2d, set, kernel, d2h, host;
    CK(cuGraphAddEmptyNode(&root, graph, NULL, 0));
    CUDA_MEMCPY3D up = linear_copy(CU_MEMORYTYPE_HOST, ha, 0, CU_MEMORYTYPE_DEVICE, NULL, da, N * sizeof(float));
    CK(cuGraphAddMemcpyNode(&h2d, graph, NULL, 0, &up, ctx));
    CK(cuGraphAddDependencies(graph, &root, &h2d, NULL, 1));
    CUDA_MEMSET_NODE_PARAMS ms;
    memset(&ms, 0, sizeof ms);
    float two = 2.0f;
    ms.dst = db;
    memcpy(&ms.value, &two, sizeof two);
    ms.elementSize = 4;
    ms.width = N;
    ms.height = 1;
    CK(cuGraphAddMemsetNode(&set, graph, &root, 1, &ms, ctx));
    void *args[] = {&da, &db, &dc, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = vadd;
    kp.gridDimX = (N + 127) / 128;
    kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 128;
    kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode kernel_deps[] = {h2d, set};
    CK(cuGraphAddKernelNode(&kernel, graph, kernel_deps, 2, &kp));
    CUDA_MEMCPY3D down = linear_copy(CU_MEMORYTYPE_DEVICE, NULL, dc, CU_MEMORYTYPE_HOST, hc, 0, N * sizeof(float));
    CK(cuGraphAddMemcpyNode(&d2h, graph, &kernel, 1, &down, ctx));
    CUDA_HOST_NODE_PARAMS hp = {host_node, NULL};
    CK(cuGraphAddHostNode(&host, graph, &d2h, 1, &hp));

    size_t count = 0;
    CK(cuGraphGetNodes(graph, NULL, &count));
    EXPECT(count == 6);
    CUgraphNode nodes[8];
    count = 8;
    CK(cuGraphGetNodes(graph, nodes, &count));
    EXPECT(count == 6);
    CUgraphNodeType want[] = {CU_GRAPH_NODE_TYPE_EMPTY, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET,
                              CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_HOST};
    for (size_t i = 0; i < count && i < 6; i++) {
        CUgraphNodeType t;
        CK(cuGraphNodeGetType(nodes[i], &t));
        EXPECT(t == want[i]);
    }
    CUDA_KERNEL_NODE_PARAMS got;
    memset(&got, 0, sizeof got);
    CK(cuGraphKernelNodeGetParams(kernel, &got));
    EXPECT(got.func == vadd && got.gridDimX == kp.gridDimX && got.blockDimX == 128 && got.sharedMemBytes == 0);

    CUgraphExec exec;
    CK(cuGraphInstantiate(&exec, graph, 0));
    for (int l = 0; l < LAUNCHES; l++) {
        fill_input(ha, l);
        for (int i = 0; i < N; i++)
            hc[i] = -1.0f;
        CK(cuGraphLaunch(exec, stream));
        CK(cuStreamSynchronize(stream));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += hc[i] != ha[i] + 2.0f;
        EXPECT(bad == 0);
        EXPECT(host_calls == l + 1);
        EXPECT(seen_by_host == ha[7] + 2.0f); /* the host node ran after the copy back */
    }

    /* the executable graph's kernel reads a twice: c = a + a; the graph keeps a + b */
    void *args2[] = {&da, &da, &dc, &n};
    CUDA_KERNEL_NODE_PARAMS kp2 = kp;
    kp2.kernelParams = args2;
    CK(cuGraphExecKernelNodeSetParams(exec, kernel, &kp2));
    fill_input(ha, 7);
    CK(cuGraphLaunch(exec, stream));
    CK(cuStreamSynchronize(stream));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += hc[i] != 2.0f * ha[i];
    EXPECT(bad == 0);
    /* back to the graph's parameters through cuGraphExecUpdate */
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CK(cuGraphExecUpdate(exec, graph, &info));
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CK(cuGraphLaunch(exec, stream));
    CK(cuStreamSynchronize(stream));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += hc[i] != ha[i] + 2.0f;
    EXPECT(bad == 0);

    /* a clone runs the same */
    CUgraph clone;
    CK(cuGraphClone(&clone, graph));
    count = 0;
    CK(cuGraphGetNodes(clone, NULL, &count));
    EXPECT(count == 6);
    CUgraphExec clone_exec;
    CK(cuGraphInstantiateWithFlags(&clone_exec, clone, 0));
    fill_input(ha, 11);
    memset(hc, 0, N * sizeof(float));
    CK(cuGraphLaunch(clone_exec, stream));
    CK(cuStreamSynchronize(stream));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += hc[i] != ha[i] + 2.0f;
    EXPECT(bad == 0);

    char dot[] = "/tmp/kemu-drv-graph-XXXXXX";
    int fd = mkstemp(dot);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        CK(cuGraphDebugDotPrint(graph, dot, 0));
        FILE *f = fopen(dot, "r");
        char text[4096] = "";
        size_t got_bytes = f ? fread(text, 1, sizeof text - 1, f) : 0;
        text[got_bytes] = 0;
        if (f)
            fclose(f);
        EXPECT(strstr(text, "digraph") != NULL);
        remove(dot);
    }

    /* ---- a graph by stream capture ---- */
    CUstreamCaptureStatus status;
    CK(cuStreamIsCapturing(stream, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_NONE);
    CK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamIsCapturing(stream, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    cuuint64_t capture_id = 0;
    CK(cuStreamGetCaptureInfo(stream, &status, &capture_id, NULL, NULL, NULL, NULL));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && capture_id != 0);
    CK(cuMemcpyHtoDAsync(da, ha, N * sizeof(float), stream));
    CK(cuMemcpyHtoDAsync(db, ha, N * sizeof(float), stream));
    CK(cuMemsetD8Async(dbytes, 0x5a, N, stream));
    CK(cuLaunchKernel(vadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    CK(cuMemcpyDtoHAsync(hc, dc, N * sizeof(float), stream));
    CK(cuLaunchHostFunc(stream, host_node, NULL));
    CUgraph captured;
    CK(cuStreamEndCapture(stream, &captured));
    CK(cuStreamIsCapturing(stream, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_NONE);
    count = 0;
    CK(cuGraphGetNodes(captured, NULL, &count));
    EXPECT(count == 6);
    int calls_before = host_calls;
    CUgraphExec captured_exec;
    CK(cuGraphInstantiate(&captured_exec, captured, 0));
    for (int l = 0; l < LAUNCHES; l++) {
        fill_input(ha, 20 + l);
        CK(cuMemsetD8(dbytes, 0, N));
        CK(cuGraphLaunch(captured_exec, stream));
        CK(cuStreamSynchronize(stream));
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += hc[i] != 2.0f * ha[i];
        EXPECT(bad == 0);
        EXPECT(host_calls == calls_before + l + 1);
        EXPECT(seen_by_host == 2.0f * ha[7]);
        unsigned char bytes[N];
        CK(cuMemcpyDtoH(bytes, dbytes, N));
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += bytes[i] != 0x5a;
        EXPECT(bad == 0);
    }
    /* an update to another topology is refused, naming why */
    memset(&info, 0, sizeof info);
    EXPECT(cuGraphExecUpdate(exec, captured, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED ||
           info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);

    /* ---- versioned names through cuGetProcAddress ---- */
    void *fn = NULL;
    CUdriverProcAddressQueryResult found;
    CK(cuGetProcAddress("cuGraphInstantiate", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(found == CU_GET_PROC_ADDRESS_SUCCESS && fn == (void *)cuGraphInstantiateWithFlags);
    CK(cuGetProcAddress("cuGraphAddKernelNode", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(fn == (void *)cuGraphAddKernelNode_v2);
    CK(cuGetProcAddress("cuStreamBeginCapture", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(fn == (void *)cuStreamBeginCapture_v2);
    CK(cuGetProcAddress("cuGraphExecUpdate", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(fn == (void *)cuGraphExecUpdate_v2);
    CK(cuGetProcAddress("cuGraphLaunch", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(fn == (void *)cuGraphLaunch);

    /* ---- the older forms, as cuGetProcAddress hands them to programs built for CUDA 11 ---- */
    typedef CUresult (*instantiate_v11)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
    typedef CUresult (*exec_update_v11)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
    typedef CUresult (*add_kernel_v11)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                       const CUDA_KERNEL_NODE_PARAMS_v1 *);
    typedef CUresult (*begin_capture_v10)(CUstream);
    instantiate_v11 old_instantiate;
    exec_update_v11 old_update;
    add_kernel_v11 old_add_kernel;
    begin_capture_v10 old_begin;
    CK(cuGetProcAddress("cuGraphInstantiate", (void **)&old_instantiate, 11000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CK(cuGetProcAddress("cuGraphExecUpdate", (void **)&old_update, 11000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CK(cuGetProcAddress("cuGraphAddKernelNode", (void **)&old_add_kernel, 11000, CU_GET_PROC_ADDRESS_DEFAULT,
                        &found));
    CK(cuGetProcAddress("cuStreamBeginCapture", (void **)&old_begin, 10000, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    /* a graph of one v1 kernel node: c = a + b */
    CUgraph small;
    CUgraphNode small_kernel, err_node = NULL;
    CK(cuGraphCreate(&small, 0));
    CUDA_KERNEL_NODE_PARAMS_v1 kp1;
    memset(&kp1, 0, sizeof kp1);
    kp1.func = vadd;
    kp1.gridDimX = (N + 127) / 128;
    kp1.gridDimY = kp1.gridDimZ = 1;
    kp1.blockDimX = 128;
    kp1.blockDimY = kp1.blockDimZ = 1;
    kp1.kernelParams = args;
    CK(old_add_kernel(&small_kernel, small, NULL, 0, &kp1));
    char log[128] = "x";
    CUgraphExec small_exec;
    CK(old_instantiate(&small_exec, small, &err_node, log, sizeof log));
    EXPECT(err_node == NULL);
    fill_input(ha, 30);
    CK(cuMemcpyHtoD(da, ha, N * sizeof(float)));
    CK(cuMemcpyHtoD(db, ha, N * sizeof(float)));
    CK(cuGraphLaunch(small_exec, stream));
    CK(cuStreamSynchronize(stream));
    CK(cuMemcpyDtoH(hc, dc, N * sizeof(float)));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += hc[i] != 2.0f * ha[i];
    EXPECT(bad == 0);
    CUgraphExecUpdateResult update_result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    EXPECT(old_update(small_exec, graph, &err_node, &update_result) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    EXPECT(update_result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    /* the graph's kernel node changed (c = a + a), then instantiated again */
    CK(cuGraphKernelNodeSetParams(kernel, &kp2));
    CUgraphExec changed_exec;
    CK(cuGraphInstantiate(&changed_exec, graph, 0));
    fill_input(ha, 31);
    CK(cuGraphLaunch(changed_exec, stream));
    CK(cuStreamSynchronize(stream));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += hc[i] != 2.0f * ha[i];
    EXPECT(bad == 0);
    size_t roots = 4;
    CUgraphNode root_nodes[4];
    CK(cuGraphGetRootNodes(graph, root_nodes, &roots));
    EXPECT(roots == 1 && root_nodes[0] == nodes[0]);
    /* CUDA 10.0's begin (global mode); the thread's mode exchanged */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
    CK(old_begin(stream));
    CK(cuStreamIsCapturing(stream, &status));
    EXPECT(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CUdeviceptr scratch;
    EXPECT(cuMemAlloc(&scratch, 16) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); /* global mode forbids it */
    CUgraph invalidated = NULL;
    EXPECT(cuStreamEndCapture(stream, &invalidated) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT(invalidated == NULL);
    CK(cuGraphExecDestroy(small_exec));
    CK(cuGraphExecDestroy(changed_exec));
    CK(cuGraphDestroy(small));

    /* ---- errors ---- */
    CUgraphExec none;
    EXPECT(cuGraphInstantiate(&none, NULL, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphInstantiate(NULL, graph, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphLaunch(NULL, stream) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphAddEmptyNode(&root, NULL, NULL, 0) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphAddKernelNode(&kernel, graph, NULL, 0, NULL) == CUDA_ERROR_INVALID_VALUE);
    CUDA_KERNEL_NODE_PARAMS no_function = kp;
    no_function.func = NULL;
    EXPECT(cuGraphAddKernelNode(&kernel, graph, NULL, 0, &no_function) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuGraphNodeGetType(NULL, &want[0]) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuStreamEndCapture(stream, &captured) == CUDA_ERROR_ILLEGAL_STATE);
    EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    /* an empty graph instantiates and launches (doing nothing) */
    CUgraph empty;
    CUgraphExec empty_exec;
    CK(cuGraphCreate(&empty, 0));
    CK(cuGraphInstantiate(&empty_exec, empty, 0));
    CK(cuGraphLaunch(empty_exec, stream));
    CK(cuStreamSynchronize(stream));
    /* a cycle is no graph to run */
    CUgraph cyclic;
    CUgraphNode a, b;
    CK(cuGraphCreate(&cyclic, 0));
    CK(cuGraphAddEmptyNode(&a, cyclic, NULL, 0));
    CK(cuGraphAddEmptyNode(&b, cyclic, &a, 1));
    CK(cuGraphAddDependencies(cyclic, &b, &a, NULL, 1));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    CUgraphExec cyclic_exec;
    EXPECT(cuGraphInstantiateWithParams(&cyclic_exec, cyclic, &ip) == CUDA_ERROR_INVALID_VALUE);
    EXPECT(ip.result_out == CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);

    CK(cuGraphExecDestroy(exec));
    CK(cuGraphExecDestroy(clone_exec));
    CK(cuGraphExecDestroy(captured_exec));
    CK(cuGraphExecDestroy(empty_exec));
    CK(cuGraphDestroy(graph));
    CK(cuGraphDestroy(clone));
    CK(cuGraphDestroy(captured));
    CK(cuGraphDestroy(empty));
    CK(cuGraphDestroy(cyclic));
    CK(cuMemFree(da));
    CK(cuMemFree(db));
    CK(cuMemFree(dc));
    CK(cuMemFree(dbytes));
    CK(cuMemFreeHost(ha));
    CK(cuMemFreeHost(hc));
    CK(cuStreamDestroy(stream));
    CK(cuModuleUnload(mod));
    CK(cuDevicePrimaryCtxRelease(dev));
    return finish("drv_graph");
}
