// Stream capture and replay: a chain of copies, kernels and a host function
// captured across two streams forked and joined with events, checked to
// have run nothing while capturing, instantiated once and launched several
// times; then a kernel node's argument changed on the executable graph
// (cudaGraphExecKernelNodeSetParams), the graph updated from a new capture
// of the same shape (cudaGraphExecUpdate), and an update of a different
// shape refused.
#include "check.h"
#include <cstring>
#include <vector>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

__global__ void square_into(float *z, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = x[i] * x[i];
}

__global__ void accumulate(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += x[i];
}

static const int N = 1000;
static const int BLOCK = 128;
static const int GRID = (N + BLOCK - 1) / BLOCK;

struct Replay {
    const float *out; // host copy of y, written by the graph before the host node
    int calls;
    float sums[16];
};

static void CUDART_CB record_sum(void *user)
{
    Replay *r = (Replay *)user;
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += r->out[i];
    if (r->calls < 16)
        r->sums[r->calls] = (float)sum;
    r->calls++;
}

struct Buffers {
    float *h_in, *h_out, *d_x, *d_y, *d_z;
};

// Captures: x <- in; x *= a; fork: y += x (s2) while z = x*x (s1); join;
// y += z; out <- y; host function. extra_kernel adds one more kernel node.
static cudaGraph_t capture(cudaStream_t s1, cudaStream_t s2, const Buffers &b, float a, Replay *replay,
                           bool extra_kernel)
{
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s1, &status));
    EXPECT(status == cudaStreamCaptureStatusActive);
    CHECK(cudaStreamIsCapturing(s2, &status));
    EXPECT(status == cudaStreamCaptureStatusNone);
    CHECK(cudaMemcpyAsync(b.d_x, b.h_in, N * sizeof(float), cudaMemcpyHostToDevice, s1));
    scale<<<GRID, BLOCK, 0, s1>>>(b.d_x, a, N);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    CHECK(cudaStreamIsCapturing(s2, &status));
    EXPECT(status == cudaStreamCaptureStatusActive);
    accumulate<<<GRID, BLOCK, 0, s2>>>(b.d_y, b.d_x, N);
    square_into<<<GRID, BLOCK, 0, s1>>>(b.d_z, b.d_x, N);
    if (extra_kernel)
        scale<<<GRID, BLOCK, 0, s1>>>(b.d_z, 1.0f, N);
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s1, join, 0));
    accumulate<<<GRID, BLOCK, 0, s1>>>(b.d_y, b.d_z, N);
    CHECK(cudaMemcpyAsync(b.h_out, b.d_y, N * sizeof(float), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaLaunchHostFunc(s1, record_sum, replay));
    // the capture's identity and the work the next node would depend on
    unsigned long long id = 0;
    cudaGraph_t in_progress = nullptr;
    const cudaGraphNode_t *deps = nullptr;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(s1, &status, &id, &in_progress, &deps, nullptr, &ndeps));
    EXPECT(status == cudaStreamCaptureStatusActive);
    EXPECT(id != 0);
    EXPECT(in_progress != nullptr);
    EXPECT(ndeps == 1);
    if (ndeps == 1) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(deps[0], &type));
        EXPECT(type == cudaGraphNodeTypeHost);
    }
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(s1, &graph));
    EXPECT(graph != nullptr);
    CHECK(cudaStreamIsCapturing(s1, &status));
    EXPECT(status == cudaStreamCaptureStatusNone);
    CHECK(cudaStreamIsCapturing(s2, &status));
    EXPECT(status == cudaStreamCaptureStatusNone);
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    return graph;
}

// y after k launches of the graph (y starts at 0): k * (a*in + (a*in)^2)
static bool check_y(const float *out, const float *in, float a, int k)
{
    for (int i = 0; i < N; i++) {
        double ax = (double)a * in[i];
        if (!close_to(out[i], k * (ax + ax * ax), 1e-5, 1e-6)) {
            printf("y[%d] = %g, expected %g\n", i, out[i], k * (ax + ax * ax));
            return false;
        }
    }
    return true;
}

static float expected_sum(const float *in, float a, int k)
{
    double sum = 0;
    for (int i = 0; i < N; i++) {
        double ax = (double)a * in[i];
        sum += k * (ax + ax * ax);
    }
    return (float)sum;
}

int main()
{
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    Buffers b;
    CHECK(cudaMallocHost(&b.h_in, N * sizeof(float)));
    CHECK(cudaMallocHost(&b.h_out, N * sizeof(float)));
    CHECK(cudaMalloc(&b.d_x, N * sizeof(float)));
    CHECK(cudaMalloc(&b.d_y, N * sizeof(float)));
    CHECK(cudaMalloc(&b.d_z, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
        b.h_in[i] = (float)(i % 17) * 0.25f - 1.0f;
        b.h_out[i] = -7.0f;
    }
    CHECK(cudaMemset(b.d_x, 0, N * sizeof(float)));
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    CHECK(cudaDeviceSynchronize());

    Replay replay;
    memset(&replay, 0, sizeof replay);
    replay.out = b.h_out;
    cudaGraph_t graph = capture(s1, s2, b, 2.0f, &replay, false);

    // capturing ran nothing
    CHECK(cudaDeviceSynchronize());
    EXPECT(replay.calls == 0);
    EXPECT(b.h_out[0] == -7.0f && b.h_out[N - 1] == -7.0f);
    std::vector<float> x(N);
    CHECK(cudaMemcpy(x.data(), b.d_x, N * sizeof(float), cudaMemcpyDeviceToHost));
    EXPECT(x[5] == 0.0f);

    // 7 nodes (2 copies, 4 kernels, 1 host function; events make edges only)
    size_t nodes = 0, edges = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
    EXPECT(nodes == 7);
    EXPECT(edges == 7);
    std::vector<cudaGraphNode_t> list(nodes);
    CHECK(cudaGraphGetNodes(graph, list.data(), &nodes));
    cudaGraphNode_t scale_node = nullptr;
    int kernels = 0;
    for (cudaGraphNode_t n : list) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(n, &type));
        if (type != cudaGraphNodeTypeKernel)
            continue;
        kernels++;
        cudaKernelNodeParams p;
        CHECK(cudaGraphKernelNodeGetParams(n, &p));
        if (p.func == (void *)scale) {
            scale_node = n;
            EXPECT(*(float *)p.kernelParams[1] == 2.0f); // the argument as captured
            EXPECT(p.gridDim.x == (unsigned)GRID && p.blockDim.x == (unsigned)BLOCK);
        }
    }
    EXPECT(kernels == 4);
    EXPECT(scale_node != nullptr);

    // instantiate once, launch several times
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int LAUNCHES = 4;
    for (int k = 1; k <= LAUNCHES; k++) {
        CHECK(cudaGraphLaunch(exec, s1));
        CHECK(cudaStreamSynchronize(s1));
        EXPECT(replay.calls == k);
        EXPECT(check_y(b.h_out, b.h_in, 2.0f, k));
        EXPECT(close_to(replay.sums[k - 1], expected_sum(b.h_in, 2.0f, k), 1e-4, 1e-3));
    }

    // a new argument for the scale kernel on the executable graph only
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    float a3 = 3.0f;
    float *px = b.d_x;
    int n = N;
    void *args[] = {&px, &a3, &n};
    cudaKernelNodeParams p;
    CHECK(cudaGraphKernelNodeGetParams(scale_node, &p));
    p.kernelParams = args;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, scale_node, &p));
    a3 = 100.0f; // the node copied the arguments
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(check_y(b.h_out, b.h_in, 3.0f, 1));
    cudaKernelNodeParams unchanged;
    CHECK(cudaGraphKernelNodeGetParams(scale_node, &unchanged));
    EXPECT(*(float *)unchanged.kernelParams[1] == 2.0f); // the graph itself keeps its argument

    // update the executable graph from a capture of the same shape with a = 5
    Replay replay2;
    memset(&replay2, 0, sizeof replay2);
    replay2.out = b.h_out;
    cudaGraph_t graph5 = capture(s1, s2, b, 5.0f, &replay2, false);
    cudaGraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    CHECK(cudaGraphExecUpdate(exec, graph5, &info));
    EXPECT(info.result == cudaGraphExecUpdateSuccess);
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    int calls_before = replay.calls;
    CHECK(cudaGraphLaunch(exec, s2));
    CHECK(cudaStreamSynchronize(s2));
    EXPECT(check_y(b.h_out, b.h_in, 5.0f, 1));
    EXPECT(replay2.calls == 1); // the host node now has the new capture's data
    EXPECT(replay.calls == calls_before);

    // a capture with one more kernel cannot update it
    cudaGraph_t bigger = capture(s1, s2, b, 5.0f, &replay2, true);
    memset(&info, 0, sizeof info);
    EXPECT_ERROR(cudaGraphExecUpdate(exec, bigger, &info), cudaErrorGraphExecUpdateFailure);
    EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
    cudaGetLastError();

    // the graph still runs as updated
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(check_y(b.h_out, b.h_in, 5.0f, 1));

    // a second instantiation, uploaded, launched into the legacy stream
    cudaGraphExec_t exec2;
    CHECK(cudaGraphInstantiateWithFlags(&exec2, graph, 0));
    CHECK(cudaGraphUpload(exec2, s1));
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    CHECK(cudaGraphLaunch(exec2, 0));
    CHECK(cudaDeviceSynchronize());
    EXPECT(check_y(b.h_out, b.h_in, 2.0f, 1));

    // a graph launched into a capturing stream becomes a child-graph node
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    CHECK(cudaGraphLaunch(exec2, s1));
    cudaGraph_t outer;
    CHECK(cudaStreamEndCapture(s1, &outer));
    CHECK(cudaGraphGetNodes(outer, nullptr, &nodes));
    EXPECT(nodes == 1);
    CHECK(cudaGraphGetNodes(outer, list.data(), &nodes));
    cudaGraphNodeType outer_type;
    CHECK(cudaGraphNodeGetType(list[0], &outer_type));
    EXPECT(outer_type == cudaGraphNodeTypeGraph);
    cudaGraphExec_t outer_exec;
    CHECK(cudaGraphInstantiate(&outer_exec, outer, 0));
    CHECK(cudaMemset(b.d_y, 0, N * sizeof(float)));
    CHECK(cudaGraphLaunch(outer_exec, s2));
    CHECK(cudaStreamSynchronize(s2));
    EXPECT(check_y(b.h_out, b.h_in, 2.0f, 1));
    CHECK(cudaGraphExecDestroy(outer_exec));
    CHECK(cudaGraphDestroy(outer));

    CHECK(cudaGraphExecDestroy(exec2));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(bigger));
    CHECK(cudaGraphDestroy(graph5));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaFree(b.d_x));
    CHECK(cudaFree(b.d_y));
    CHECK(cudaFree(b.d_z));
    CHECK(cudaFreeHost(b.h_in));
    CHECK(cudaFreeHost(b.h_out));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    return finish("graph_capture");
}
