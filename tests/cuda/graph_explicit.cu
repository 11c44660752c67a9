// Graphs built node by node: memset (1- and 4-byte elements), 1D and 3D
// memcpy, kernel, empty, child-graph and host nodes with diamond-shaped
// dependencies; node, root and edge counts and queries, dependency edits,
// kernel-node parameters (copied when the node is added), cloning, a DOT
// file, a graph with allocation and free nodes, and a user object that lives
// as long as a graph or an instantiation holds it. With the argument
// "race", launches a graph whose kernel races on shared memory (for
// racecheck, which must see graph kernels).
#include "check.h"
#include <atomic>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void add(float *x, const float *w, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += w[i];
}

__global__ void iota(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += i;
}

__device__ int table[16];

__global__ void double_table()
{
    table[threadIdx.x] *= 2;
}

__global__ void racy(int *out)
{
    __shared__ int cell[64];
    cell[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = cell[63 - threadIdx.x]; // no __syncthreads: reads another warp's write
}

static const int N = 300;

static std::atomic<int> destroyed;

static void CUDART_CB destroy_resource(void *p)
{
    destroyed += *(int *)p;
}

struct Checksum {
    const float *h;
    double sum;
};

static void CUDART_CB checksum(void *user)
{
    Checksum *c = (Checksum *)user;
    c->sum = 0;
    for (int i = 0; i < N; i++)
        c->sum += c->h[i];
}

static cudaKernelNodeParams kernel_params(void *func, void **args)
{
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = func;
    p.gridDim = dim3((N + 127) / 128);
    p.blockDim = dim3(128);
    p.sharedMemBytes = 0;
    p.kernelParams = args;
    p.extra = nullptr;
    return p;
}

static int race(void)
{
    int *out;
    CHECK(cudaMalloc(&out, 64 * sizeof(int)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    void *args[] = {&out};
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = (void *)racy;
    p.gridDim = dim3(1);
    p.blockDim = dim3(64);
    p.kernelParams = args;
    cudaGraphNode_t k;
    CHECK(cudaGraphAddKernelNode(&k, g, nullptr, 0, &p));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(out));
    printf("PASS graph_explicit race (launched)\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "race"))
        return race();
    float *d_x, *d_w, *h_w, *h_out;
    unsigned char *d_b, *h_b;
    CHECK(cudaMalloc(&d_x, N * sizeof(float)));
    CHECK(cudaMalloc(&d_w, N * sizeof(float)));
    CHECK(cudaMalloc(&d_b, N));
    CHECK(cudaMallocHost(&h_w, N * sizeof(float)));
    CHECK(cudaMallocHost(&h_out, N * sizeof(float)));
    CHECK(cudaMallocHost(&h_b, N));
    for (int i = 0; i < N; i++)
        h_w[i] = (float)i;

    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    // roots: x <- 1.0f (4-byte memset), w <- h_w (1D copy), b <- 7 (bytes)
    cudaMemsetParams ms;
    memset(&ms, 0, sizeof ms);
    ms.dst = d_x;
    ms.value = 0x3f800000u; // 1.0f
    ms.elementSize = 4;
    ms.width = N;
    ms.height = 1;
    cudaGraphNode_t m1, m2, m3, e, k1, k2, c, d, h, d3;
    CHECK(cudaGraphAddMemsetNode(&m1, g, nullptr, 0, &ms));
    CHECK(cudaGraphAddMemcpyNode1D(&m2, g, nullptr, 0, d_w, h_w, N * sizeof(float), cudaMemcpyHostToDevice));
    ms.dst = d_b;
    ms.value = 7;
    ms.elementSize = 1;
    CHECK(cudaGraphAddMemsetNode(&m3, g, nullptr, 0, &ms));
    // the diamond: e after both roots; x *= 2 and w *= 3 after e
    cudaGraphNode_t roots[] = {m1, m2};
    CHECK(cudaGraphAddEmptyNode(&e, g, roots, 2));
    float factor = 2.0f;
    int n = N;
    void *args_x[] = {&d_x, &factor, &n};
    cudaKernelNodeParams kp = kernel_params((void *)scale, args_x);
    CHECK(cudaGraphAddKernelNode(&k1, g, &e, 1, &kp));
    factor = 3.0f; // k1 keeps 2.0f: arguments are copied when the node is added
    void *args_w[] = {&d_w, &factor, &n};
    kp = kernel_params((void *)scale, args_w);
    CHECK(cudaGraphAddKernelNode(&k2, g, &e, 1, &kp));
    factor = -1.0f;
    // a child graph after both kernels: x += w; x *= 0.5
    cudaGraph_t child;
    CHECK(cudaGraphCreate(&child, 0));
    cudaGraphNode_t ck1, ck2;
    void *args_add[] = {&d_x, &d_w, &n};
    kp = kernel_params((void *)add, args_add);
    CHECK(cudaGraphAddKernelNode(&ck1, child, nullptr, 0, &kp));
    float half = 0.5f;
    void *args_half[] = {&d_x, &half, &n};
    kp = kernel_params((void *)scale, args_half);
    CHECK(cudaGraphAddKernelNode(&ck2, child, &ck1, 1, &kp));
    cudaGraphNode_t pair[] = {k1, k2};
    CHECK(cudaGraphAddChildGraphNode(&c, g, pair, 2, child));
    CHECK(cudaGraphDestroy(child)); // the node holds its own copy
    // out <- x, then a host node; h_b <- b with a 3D copy
    CHECK(cudaGraphAddMemcpyNode1D(&d, g, &c, 1, h_out, d_x, N * sizeof(float), cudaMemcpyDeviceToHost));
    Checksum host_data = {h_out, 0.0};
    cudaHostNodeParams hp = {checksum, &host_data};
    CHECK(cudaGraphAddHostNode(&h, g, &d, 1, &hp));
    cudaMemcpy3DParms cp;
    memset(&cp, 0, sizeof cp);
    cp.srcPtr = make_cudaPitchedPtr(d_b, N, N, 1);
    cp.dstPtr = make_cudaPitchedPtr(h_b, N, N, 1);
    cp.extent = make_cudaExtent(N, 1, 1);
    cp.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaGraphAddMemcpyNode(&d3, g, &m3, 1, &cp));

    // structure
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    EXPECT(count == 10);
    CHECK(cudaGraphGetRootNodes(g, nullptr, &count));
    EXPECT(count == 3);
    CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &count));
    EXPECT(count == 9);
    std::vector<cudaGraphNode_t> from(count), to(count);
    CHECK(cudaGraphGetEdges(g, from.data(), to.data(), nullptr, &count));
    int into_c = 0;
    for (size_t i = 0; i < count; i++)
        into_c += to[i] == c;
    EXPECT(into_c == 2);
    CHECK(cudaGraphNodeGetDependencies(c, nullptr, nullptr, &count));
    EXPECT(count == 2);
    CHECK(cudaGraphNodeGetDependentNodes(e, nullptr, nullptr, &count));
    EXPECT(count == 2);
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(c, &type));
    EXPECT(type == cudaGraphNodeTypeGraph);
    CHECK(cudaGraphNodeGetType(e, &type));
    EXPECT(type == cudaGraphNodeTypeEmpty);
    CHECK(cudaGraphNodeGetType(m1, &type));
    EXPECT(type == cudaGraphNodeTypeMemset);
    CHECK(cudaGraphNodeGetType(d3, &type));
    EXPECT(type == cudaGraphNodeTypeMemcpy);
    cudaGraph_t inner;
    CHECK(cudaGraphChildGraphNodeGetGraph(c, &inner));
    CHECK(cudaGraphGetNodes(inner, nullptr, &count));
    EXPECT(count == 2);
    cudaKernelNodeParams got;
    CHECK(cudaGraphKernelNodeGetParams(k1, &got));
    EXPECT(got.func == (void *)scale && *(float *)got.kernelParams[1] == 2.0f);
    CHECK(cudaGraphKernelNodeGetParams(k2, &got));
    EXPECT(*(float *)got.kernelParams[1] == 3.0f);

    // removing and restoring an edge
    CHECK(cudaGraphRemoveDependencies(g, &k2, &c, nullptr, 1));
    CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &count));
    EXPECT(count == 8);
    CHECK(cudaGraphAddDependencies(g, &k2, &c, nullptr, 1));
    CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &count));
    EXPECT(count == 9);

    // x = (2 + 3i) / 2, twice (the memset node resets x)
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int round = 0; round < 2; round++) {
        memset(h_out, 0, N * sizeof(float));
        memset(h_b, 0, N);
        CHECK(cudaGraphLaunch(exec, 0));
        CHECK(cudaStreamSynchronize(0));
        for (int i = 0; i < N; i++) {
            EXPECT(h_out[i] == 1.0f + 1.5f * i);
            EXPECT(h_b[i] == 7);
        }
        EXPECT(close_to(host_data.sum, N + 1.5 * N * (N - 1) / 2, 1e-9));
    }

    // new kernel parameters on the graph: x *= 4 -> x = (4 + 3i) / 2
    float four = 4.0f;
    void *args_four[] = {&d_x, &four, &n};
    kp = kernel_params((void *)scale, args_four);
    CHECK(cudaGraphKernelNodeSetParams(k1, &kp));
    cudaGraphExec_t exec4;
    CHECK(cudaGraphInstantiateWithFlags(&exec4, g, 0));
    CHECK(cudaGraphLaunch(exec4, 0));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < N; i++)
        EXPECT(h_out[i] == 2.0f + 1.5f * i);
    // the first instantiation is unchanged
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    EXPECT(h_out[10] == 16.0f);

    // clones
    cudaGraph_t copy;
    CHECK(cudaGraphClone(&copy, g));
    CHECK(cudaGraphGetNodes(copy, nullptr, &count));
    EXPECT(count == 10);
    cudaGraphNode_t k1_copy;
    CHECK(cudaGraphNodeFindInClone(&k1_copy, k1, copy));
    CHECK(cudaGraphNodeGetType(k1_copy, &type));
    EXPECT(type == cudaGraphNodeTypeKernel);
    CHECK(cudaGraphDestroyNode(k1_copy));
    CHECK(cudaGraphGetNodes(copy, nullptr, &count));
    EXPECT(count == 9);
    CHECK(cudaGraphGetEdges(copy, nullptr, nullptr, nullptr, &count));
    EXPECT(count == 7);
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    EXPECT(count == 10);

    // a DOT description
    char path[] = "/tmp/kemu_graph_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0);
    if (fd >= 0) {
        close(fd);
        CHECK(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose));
        FILE *f = fopen(path, "r");
        EXPECT(f != nullptr);
        if (f) {
            char text[4096] = {0};
            size_t got_bytes = fread(text, 1, sizeof text - 1, f);
            fclose(f);
            EXPECT(got_bytes > 20);
            EXPECT(strncmp(text, "digraph", 7) == 0);
            EXPECT(strstr(text, "->") != nullptr);
        }
        unlink(path);
    }

    // the generic form: cudaGraphAddNode (x = 1.0f; x *= 5; out <- x)
    cudaGraph_t gg;
    CHECK(cudaGraphCreate(&gg, 0));
    cudaGraphNodeParams np = {}; // (the union has no default constructor in C++)
    np.type = cudaGraphNodeTypeMemset;
    np.memset.dst = d_x;
    np.memset.value = 0x3f800000u;
    np.memset.elementSize = 4;
    np.memset.width = N;
    np.memset.height = 1;
    cudaGraphNode_t gn[3];
    CHECK(cudaGraphAddNode(&gn[0], gg, nullptr, nullptr, 0, &np));
    float five = 5.0f;
    void *args_five[] = {&d_x, &five, &n};
    cudaGraphNodeParams kn = {};
    kn.type = cudaGraphNodeTypeKernel;
    kn.kernel.func = (void *)scale;
    kn.kernel.gridDim = dim3((N + 127) / 128);
    kn.kernel.blockDim = dim3(128);
    kn.kernel.kernelParams = args_five;
    CHECK(cudaGraphAddNode(&gn[1], gg, &gn[0], nullptr, 1, &kn));
    cudaGraphNodeParams cn = {};
    cn.type = cudaGraphNodeTypeMemcpy;
    cn.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(d_x, N * sizeof(float), N, 1);
    cn.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(h_out, N * sizeof(float), N, 1);
    cn.memcpy.copyParams.extent = make_cudaExtent(N * sizeof(float), 1, 1);
    cn.memcpy.copyParams.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaGraphAddNode(&gn[2], gg, &gn[1], nullptr, 1, &cn));
    cudaGraphExec_t exec_g;
    CHECK(cudaGraphInstantiate(&exec_g, gg, 0));
    CHECK(cudaGraphLaunch(exec_g, 0));
    CHECK(cudaDeviceSynchronize());
    EXPECT(h_out[0] == 5.0f && h_out[N - 1] == 5.0f);
    CHECK(cudaGraphExecDestroy(exec_g));
    CHECK(cudaGraphDestroy(gg));

    // copies to and from a __device__ variable around a kernel
    cudaGraph_t gs;
    CHECK(cudaGraphCreate(&gs, 0));
    int src[16], dst[16];
    for (int i = 0; i < 16; i++) {
        src[i] = i + 1;
        dst[i] = 0;
    }
    cudaGraphNode_t s_in, s_k, s_out;
    CHECK(cudaGraphAddMemcpyNodeToSymbol(&s_in, gs, nullptr, 0, table, src, sizeof src, 0, cudaMemcpyHostToDevice));
    cudaKernelNodeParams tp;
    memset(&tp, 0, sizeof tp);
    tp.func = (void *)double_table;
    tp.gridDim = dim3(1);
    tp.blockDim = dim3(16);
    CHECK(cudaGraphAddKernelNode(&s_k, gs, &s_in, 1, &tp));
    CHECK(cudaGraphAddMemcpyNodeFromSymbol(&s_out, gs, &s_k, 1, dst, table, sizeof dst, 0, cudaMemcpyDeviceToHost));
    cudaGraphExec_t exec_s;
    CHECK(cudaGraphInstantiate(&exec_s, gs, 0));
    CHECK(cudaGraphLaunch(exec_s, 0));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 16; i++)
        EXPECT(dst[i] == 2 * (i + 1));
    CHECK(cudaGraphExecDestroy(exec_s));
    CHECK(cudaGraphDestroy(gs));

    // allocation and free nodes: p = alloc; p[i] = 0; p[i] += i; out <- p; free p
    cudaGraph_t ga;
    CHECK(cudaGraphCreate(&ga, 0));
    cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = N * sizeof(int);
    cudaGraphNode_t a_node, set_node, k_node, copy_node, free_node;
    CHECK(cudaGraphAddMemAllocNode(&a_node, ga, nullptr, 0, &ap));
    EXPECT(ap.dptr != nullptr);
    int *p = (int *)ap.dptr;
    memset(&ms, 0, sizeof ms);
    ms.dst = p;
    ms.value = 0;
    ms.elementSize = 4;
    ms.width = N;
    ms.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set_node, ga, &a_node, 1, &ms));
    void *args_iota[] = {&p, &n};
    kp = kernel_params((void *)iota, args_iota);
    CHECK(cudaGraphAddKernelNode(&k_node, ga, &set_node, 1, &kp));
    std::vector<int> ints(N, -1);
    CHECK(cudaGraphAddMemcpyNode1D(&copy_node, ga, &k_node, 1, ints.data(), p, N * sizeof(int),
                                   cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddMemFreeNode(&free_node, ga, &copy_node, 1, p));
    CHECK(cudaGraphNodeGetType(a_node, &type));
    EXPECT(type == cudaGraphNodeTypeMemAlloc);
    CHECK(cudaGraphNodeGetType(free_node, &type));
    EXPECT(type == cudaGraphNodeTypeMemFree);
    cudaGraphExec_t exec_a;
    CHECK(cudaGraphInstantiate(&exec_a, ga, 0));
    for (int round = 0; round < 2; round++) {
        CHECK(cudaGraphLaunch(exec_a, 0));
        CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < N; i++)
            EXPECT(ints[i] == i);
    }

    // a user object handed to a graph outlives the graph while an instantiation holds it
    static int resource = 1;
    cudaUserObject_t uo;
    CHECK(cudaUserObjectCreate(&uo, &resource, destroy_resource, 1, cudaUserObjectNoDestructorSync));
    cudaGraph_t gu;
    CHECK(cudaGraphCreate(&gu, 0));
    cudaGraphNode_t un;
    CHECK(cudaGraphAddEmptyNode(&un, gu, nullptr, 0));
    CHECK(cudaGraphRetainUserObject(gu, uo, 1, cudaGraphUserObjectMove)); // our reference moves to the graph
    cudaGraphExec_t xu;
    CHECK(cudaGraphInstantiate(&xu, gu, 0));
    CHECK(cudaGraphDestroy(gu));
    CHECK(cudaGraphLaunch(xu, 0));
    CHECK(cudaDeviceSynchronize());
    EXPECT(destroyed == 0);
    CHECK(cudaGraphExecDestroy(xu));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 100 && destroyed == 0; i++) // CUDA may run destructors later, on a thread of its own
        usleep(10000);
    EXPECT(destroyed == 1);

    CHECK(cudaGraphExecDestroy(exec_a));
    CHECK(cudaGraphDestroy(ga));
    CHECK(cudaGraphDestroy(copy));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(exec4));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_w));
    CHECK(cudaFree(d_b));
    CHECK(cudaFreeHost(h_w));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFreeHost(h_b));
    return finish("graph_explicit");
}
