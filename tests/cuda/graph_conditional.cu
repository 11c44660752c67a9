// Conditional graph nodes (CUDA 12.4+; if/else and switch 12.8+), each
// result checked against the same computation done here on the CPU:
//   - while: Collatz steps on an array until a kernel finds every value at 1
//     and sets the condition to 0 (cudaGraphCondAssignDefault re-arms it at
//     every launch: a second launch runs the body once more);
//   - while whose upstream kernel sets 0: the body never runs;
//   - a while node added to a graph under stream capture, its body filled
//     by cudaStreamBeginCaptureToGraph;
//   - if (one body) and if/else (two bodies) chosen by a kernel's sum;
//   - switch over 4 bodies for the values 0..4 (4: none runs);
//   - nested: a while loop whose body holds an if/else on the iteration's
//     parity, with the inner handle made for the body graph;
//   - cudaGraphExecUpdate from a graph of the same shape with other
//     kernel arguments and its own handle;
//   - the errors of handles, node parameters, clones, child graphs,
//     instantiation (unused handles, a host node in a body, a second
//     instantiation).
// With the argument "badhandle", a kernel calls cudaGraphSetConditional with
// a handle that is none (kemu faults the kernel; run.sh checks the message).
#include "check.h"
#include <cstdint>
#include <cstring>
#include <vector>

static const int N = 256;

__global__ void collatz_step(unsigned *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && v[i] != 1)
        v[i] = (v[i] & 1) ? 3 * v[i] + 1 : v[i] / 2;
}

// One block: counts the iteration and keeps looping while any value is not 1.
__global__ void collatz_test(const unsigned *v, int n, unsigned *iterations, cudaGraphConditionalHandle h)
{
    int busy = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        busy |= v[i] != 1;
    busy = __syncthreads_or(busy);
    if (threadIdx.x == 0) {
        (*iterations)++;
        cudaGraphSetConditional(h, busy ? 1 : 0);
    }
}

__global__ void set_value(cudaGraphConditionalHandle h, const int *value)
{
    cudaGraphSetConditional(h, (unsigned)*value);
}

__global__ void sum_and_decide(const int *x, int n, int threshold, int *sum, cudaGraphConditionalHandle h)
{
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += x[i];
        *sum = s;
        cudaGraphSetConditional(h, s > threshold);
    }
}

__global__ void scale(int *x, int n, int factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

__global__ void add(int *x, int n, int amount)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += amount;
}

__global__ void mark(int *out, int value)
{
    *out = value;
}

// Nested: one loop iteration. Counts it and sets the inner condition to
// the counter's parity and the outer one to whether the counter is below
// its limit.
__global__ void nested_head(int *counter, int limit, cudaGraphConditionalHandle outer,
                            cudaGraphConditionalHandle inner)
{
    int c = ++*counter;
    cudaGraphSetConditional(inner, c & 1);
    cudaGraphSetConditional(outer, c < limit);
}

__global__ void countdown(int *counter, cudaGraphConditionalHandle h)
{
    if (*counter > 0)
        --*counter;
    cudaGraphSetConditional(h, *counter);
}

__global__ void bump(int *x)
{
    ++*x;
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, void *func, dim3 grid,
                                  dim3 block, void **args)
{
    cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
    p.kernel.func = func;
    p.kernel.gridDim = grid;
    p.kernel.blockDim = block;
    p.kernel.kernelParams = args;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddNode(&node, g, deps, nullptr, ndeps, &p));
    return node;
}

static cudaError_t add_conditional(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                   cudaGraphConditionalHandle h, cudaGraphConditionalNodeType type,
                                   unsigned size, cudaGraph_t *bodies)
{
    cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    cudaError_t e = cudaGraphAddNode(node, g, deps, nullptr, ndeps, &p);
    for (unsigned i = 0; e == cudaSuccess && bodies && i < size; i++)
        bodies[i] = p.conditional.phGraph_out[i];
    return e;
}

static int collatz_steps(unsigned v)
{
    int steps = 0;
    while (v != 1) {
        v = (v & 1) ? 3 * v + 1 : v / 2;
        steps++;
    }
    return steps;
}

static void test_while(void)
{
    std::vector<unsigned> h(N);
    int longest = 0;
    for (int i = 0; i < N; i++) {
        h[i] = 1 + (unsigned)((i * 37) % 97);
        if (collatz_steps(h[i]) > longest)
            longest = collatz_steps(h[i]);
    }
    unsigned *v, *iterations;
    CHECK(cudaMalloc(&v, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&iterations, sizeof(unsigned)));
    CHECK(cudaMemcpy(v, h.data(), N * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(iterations, 0, sizeof(unsigned)));

    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNode_t loop;
    cudaGraph_t body;
    CHECK(add_conditional(&loop, g, nullptr, 0, handle, cudaGraphCondTypeWhile, 1, &body));
    int n = N;
    void *step_args[] = {&v, &n};
    cudaGraphNode_t step = add_kernel(body, nullptr, 0, (void *)collatz_step, dim3(N / 64), dim3(64), step_args);
    void *test_args[] = {&v, &n, &iterations, &handle};
    add_kernel(body, &step, 1, (void *)collatz_test, dim3(1), dim3(128), test_args);

    int type = -1;
    CHECK(cudaGraphNodeGetType(loop, (cudaGraphNodeType *)&type));
    EXPECT(type == cudaGraphNodeTypeConditional);
    size_t count = 0;
    CHECK(cudaGraphGetNodes(body, nullptr, &count));
    EXPECT(count == 2);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> out(N);
    unsigned iters = 0;
    CHECK(cudaMemcpy(out.data(), v, N * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&iters, iterations, sizeof iters, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == 1);
    // the body runs until the longest chain has reached 1: `longest` steps
    EXPECT(iters == (unsigned)longest);
    // the default (1) is assigned again: the body runs once more and stops
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&iters, iterations, sizeof iters, cudaMemcpyDeviceToHost));
    EXPECT(iters == (unsigned)longest + 1);
    // a replay on new data
    for (int i = 0; i < N; i++)
        h[i] = 27;
    CHECK(cudaMemcpy(v, h.data(), N * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(iterations, 0, sizeof(unsigned)));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&iters, iterations, sizeof iters, cudaMemcpyDeviceToHost));
    EXPECT(iters == (unsigned)collatz_steps(27));

    // instantiated once at a time; the graph can be destroyed before its exec
    cudaGraphExec_t second;
    EXPECT(cudaGraphInstantiate(&second, g, 0) != cudaSuccess);
    cudaGetLastError();
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaMemset(iterations, 0, sizeof(unsigned)));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&iters, iterations, sizeof iters, cudaMemcpyDeviceToHost));
    EXPECT(iters == 1);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaFree(v));
    CHECK(cudaFree(iterations));
}

// An upstream kernel sets the condition to 0: the while body never runs.
static void test_while_zero(void)
{
    int *value, *hits;
    CHECK(cudaMalloc(&value, sizeof(int)));
    CHECK(cudaMalloc(&hits, sizeof(int)));
    CHECK(cudaMemset(value, 0, sizeof(int)));
    CHECK(cudaMemset(hits, 0, sizeof(int)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, g));
    void *set_args[] = {&handle, &value};
    cudaGraphNode_t set = add_kernel(g, nullptr, 0, (void *)set_value, dim3(1), dim3(1), set_args);
    cudaGraph_t body;
    cudaGraphNode_t loop;
    CHECK(add_conditional(&loop, g, &set, 1, handle, cudaGraphCondTypeWhile, 1, &body));
    void *bump_args[] = {&hits};
    add_kernel(body, nullptr, 0, (void *)bump, dim3(1), dim3(1), bump_args);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphLaunch(exec, 0));
    CHECK(cudaDeviceSynchronize());
    int h = -1;
    CHECK(cudaMemcpy(&h, hits, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h == 0);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(value));
    CHECK(cudaFree(hits));
}

// The conditional node joins a graph under stream capture; its body is
// captured into with cudaStreamBeginCaptureToGraph.
static void test_captured_while(void)
{
    int *counter, *hits;
    CHECK(cudaMalloc(&counter, sizeof(int)));
    CHECK(cudaMalloc(&hits, sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    cudaGraph_t g;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, g));
    countdown<<<1, 1, 0, s>>>(counter, handle);
    CHECK(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    EXPECT(ndeps == 1);
    cudaGraphNode_t loop;
    cudaGraph_t body;
    CHECK(add_conditional(&loop, g, deps, ndeps, handle, cudaGraphCondTypeWhile, 1, &body));
    CHECK(cudaStreamUpdateCaptureDependencies(s, &loop, nullptr, 1, cudaStreamSetCaptureDependencies));
    bump<<<1, 1, 0, s>>>(hits + 0 /* after the loop */);
    cudaGraph_t captured;
    CHECK(cudaStreamEndCapture(s, &captured));
    EXPECT(captured == g);

    cudaStream_t bs;
    CHECK(cudaStreamCreate(&bs));
    CHECK(cudaStreamBeginCaptureToGraph(bs, body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    bump<<<1, 1, 0, bs>>>(hits);
    countdown<<<1, 1, 0, bs>>>(counter, handle);
    CHECK(cudaStreamEndCapture(bs, nullptr)); // a capture into a given graph need not return it
    size_t count = 0;
    CHECK(cudaGraphGetNodes(body, nullptr, &count));
    EXPECT(count == 2);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, captured, 0));
    for (int start = 0; start <= 6; start += 3) {
        CHECK(cudaMemcpy(counter, &start, sizeof start, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(hits, 0, sizeof(int)));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaStreamSynchronize(s));
        int h = -1, c = -1;
        CHECK(cudaMemcpy(&h, hits, sizeof h, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost));
        // countdown before the loop leaves start - 1 (0 stays 0); the body
        // runs that many times, then the node after the loop bumps once
        int want_body = start > 0 ? start - 1 : 0;
        EXPECT(h == want_body + 1);
        EXPECT(c == 0);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(captured));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(bs));
    CHECK(cudaFree(counter));
    CHECK(cudaFree(hits));
}

static void test_if_else(void)
{
    const int n = 64, threshold = 1000;
    int *x, *sum;
    CHECK(cudaMalloc(&x, n * sizeof(int)));
    CHECK(cudaMalloc(&sum, sizeof(int)));
    for (int bodies = 1; bodies <= 2; bodies++) {
        cudaGraph_t g;
        CHECK(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle handle;
        CHECK(cudaGraphConditionalHandleCreate(&handle, g));
        int nn = n, thr = threshold;
        void *args[] = {&x, &nn, &thr, &sum, &handle};
        cudaGraphNode_t decide = add_kernel(g, nullptr, 0, (void *)sum_and_decide, dim3(1), dim3(32), args);
        cudaGraph_t body[2];
        cudaGraphNode_t cond;
        CHECK(add_conditional(&cond, g, &decide, 1, handle, cudaGraphCondTypeIf, bodies, body));
        int factor = 2, amount = 100;
        void *scale_args[] = {&x, &nn, &factor};
        add_kernel(body[0], nullptr, 0, (void *)scale, dim3(1), dim3(n), scale_args);
        if (bodies == 2) {
            void *add_args[] = {&x, &nn, &amount};
            add_kernel(body[1], nullptr, 0, (void *)add, dim3(1), dim3(n), add_args);
        }
        cudaGraphExec_t exec;
        CHECK(cudaGraphInstantiate(&exec, g, 0));
        for (int base = 0; base <= 40; base += 20) { // sums -451, 829, 2109: else, else, then
            std::vector<int> h(n), out(n);
            int s = 0;
            for (int i = 0; i < n; i++) {
                h[i] = base - 10 + i % 7;
                s += h[i];
            }
            CHECK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
            CHECK(cudaGraphLaunch(exec, 0));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(out.data(), x, n * sizeof(int), cudaMemcpyDeviceToHost));
            for (int i = 0; i < n; i++) {
                int want = s > threshold ? h[i] * factor : bodies == 2 ? h[i] + amount : h[i];
                EXPECT(out[i] == want);
            }
        }
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(g));
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(sum));
}

static void test_switch(void)
{
    int *value, *out;
    CHECK(cudaMalloc(&value, sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, g));
    void *set_args[] = {&handle, &value};
    cudaGraphNode_t set = add_kernel(g, nullptr, 0, (void *)set_value, dim3(1), dim3(1), set_args);
    cudaGraph_t body[4];
    cudaGraphNode_t sw;
    CHECK(add_conditional(&sw, g, &set, 1, handle, cudaGraphCondTypeSwitch, 4, body));
    int marks[4] = {10, 11, 12, 13};
    cudaGraphNode_t marker[4];
    for (int i = 0; i < 4; i++) {
        void *args[] = {&out, &marks[i]};
        marker[i] = add_kernel(body[i], nullptr, 0, (void *)mark, dim3(1), dim3(1), args);
    }
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    // a kernel node inside a body, changed in the executable graph only
    marks[2] = 42;
    void *args2[] = {&out, &marks[2]};
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = (void *)mark;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = args2;
    CHECK(cudaGraphExecKernelNodeSetParams(exec, marker[2], &kp));
    for (int v = 0; v <= 4; v++) {
        int none = -1;
        CHECK(cudaMemcpy(value, &v, sizeof v, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(out, &none, sizeof none, cudaMemcpyHostToDevice));
        CHECK(cudaGraphLaunch(exec, 0));
        CHECK(cudaDeviceSynchronize());
        int got = 0;
        CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        EXPECT(got == (v < 4 ? marks[v] : -1));
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(value));
    CHECK(cudaFree(out));
}

// while (outer) { head; if (inner) x *= 3 else x += 2 }: the inner handle
// is made for the body graph, the outer one for the top graph.
static void test_nested(void)
{
    const int limit = 7;
    int *counter, *x;
    CHECK(cudaMalloc(&counter, sizeof(int)));
    CHECK(cudaMalloc(&x, sizeof(int)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle outer, inner;
    CHECK(cudaGraphConditionalHandleCreate(&outer, g, 1, cudaGraphCondAssignDefault));
    cudaGraph_t loop_body;
    cudaGraphNode_t loop;
    CHECK(add_conditional(&loop, g, nullptr, 0, outer, cudaGraphCondTypeWhile, 1, &loop_body));
    CHECK(cudaGraphConditionalHandleCreate(&inner, loop_body));
    int lim = limit;
    void *head_args[] = {&counter, &lim, &outer, &inner};
    cudaGraphNode_t head = add_kernel(loop_body, nullptr, 0, (void *)nested_head, dim3(1), dim3(1), head_args);
    cudaGraph_t branch[2];
    cudaGraphNode_t ifelse;
    CHECK(add_conditional(&ifelse, loop_body, &head, 1, inner, cudaGraphCondTypeIf, 2, branch));
    int one = 1, factor = 3, amount = 2;
    void *mul_args[] = {&x, &one, &factor};
    void *add_args[] = {&x, &one, &amount};
    add_kernel(branch[0], nullptr, 0, (void *)scale, dim3(1), dim3(1), mul_args);
    add_kernel(branch[1], nullptr, 0, (void *)add, dim3(1), dim3(1), add_args);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int start = 1; start <= 2; start++) {
        int zero = 0;
        CHECK(cudaMemcpy(counter, &zero, sizeof zero, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(x, &start, sizeof start, cudaMemcpyHostToDevice));
        CHECK(cudaGraphLaunch(exec, 0));
        CHECK(cudaDeviceSynchronize());
        int want = start;
        for (int c = 1; c <= limit; c++)
            want = (c & 1) ? want * 3 : want + 2;
        int got = 0, c = 0;
        CHECK(cudaMemcpy(&got, x, sizeof got, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&c, counter, sizeof c, cudaMemcpyDeviceToHost));
        EXPECT(c == limit);
        EXPECT(got == want);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(counter));
    CHECK(cudaFree(x));
}

// Builds: set(value) -> if { x += amount }.
static cudaGraph_t if_graph(int **value, int **x, int *amount)
{
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, g));
    void *set_args[] = {&handle, value};
    cudaGraphNode_t set = add_kernel(g, nullptr, 0, (void *)set_value, dim3(1), dim3(1), set_args);
    cudaGraph_t body;
    cudaGraphNode_t cond;
    CHECK(add_conditional(&cond, g, &set, 1, handle, cudaGraphCondTypeIf, 1, &body));
    int one = 1;
    void *add_args[] = {x, &one, amount};
    add_kernel(body, nullptr, 0, (void *)add, dim3(1), dim3(1), add_args);
    return g;
}

static void test_update(void)
{
    int *v1, *v2, *x;
    CHECK(cudaMalloc(&v1, sizeof(int)));
    CHECK(cudaMalloc(&v2, sizeof(int)));
    CHECK(cudaMalloc(&x, sizeof(int)));
    int on = 1, off = 0, zero = 0;
    CHECK(cudaMemcpy(v1, &off, sizeof off, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(v2, &on, sizeof on, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(x, &zero, sizeof zero, cudaMemcpyHostToDevice));
    int a1 = 5, a2 = 40;
    cudaGraph_t g1 = if_graph(&v1, &x, &a1), g2 = if_graph(&v2, &x, &a2);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g1, 0));
    CHECK(cudaGraphLaunch(exec, 0)); // v1 is 0: nothing
    CHECK(cudaDeviceSynchronize());
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, g2, &info));
    EXPECT(info.result == cudaGraphExecUpdateSuccess);
    CHECK(cudaGraphLaunch(exec, 0)); // g2's kernels: v2 is 1, x += 40 (through g2's handle)
    CHECK(cudaDeviceSynchronize());
    int got = -1;
    CHECK(cudaMemcpy(&got, x, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == 40);
    // a graph whose conditional node has another type does not fit
    cudaGraph_t g3;
    CHECK(cudaGraphCreate(&g3, 0));
    cudaGraphConditionalHandle h3;
    CHECK(cudaGraphConditionalHandleCreate(&h3, g3));
    void *set_args[] = {&h3, &v1};
    cudaGraphNode_t set = add_kernel(g3, nullptr, 0, (void *)set_value, dim3(1), dim3(1), set_args);
    cudaGraph_t b3;
    cudaGraphNode_t c3;
    CHECK(add_conditional(&c3, g3, &set, 1, h3, cudaGraphCondTypeWhile, 1, &b3));
    EXPECT(cudaGraphExecUpdate(exec, g3, &info) == cudaErrorGraphExecUpdateFailure);
    EXPECT(info.result != cudaGraphExecUpdateSuccess);
    cudaGetLastError();
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g1));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(g3));
    CHECK(cudaFree(v1));
    CHECK(cudaFree(v2));
    CHECK(cudaFree(x));
}

static void CUDART_CB host_fn(void *) {}

static void test_errors(void)
{
    cudaGraph_t g, other;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphCreate(&other, 0));
    cudaGraphConditionalHandle h, h_other;
    EXPECT_ERROR(cudaGraphConditionalHandleCreate(&h, g, 0, 2), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaGraphConditionalHandleCreate(nullptr, g, 0, 0), cudaErrorInvalidValue);
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
    CHECK(cudaGraphConditionalHandleCreate(&h_other, other, 0, 0));
    cudaGraphNode_t node;
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeWhile, 2, nullptr), cudaErrorInvalidValue);
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeWhile, 0, nullptr), cudaErrorInvalidValue);
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeIf, 3, nullptr), cudaErrorInvalidValue);
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeSwitch, 0, nullptr),
                 cudaErrorInvalidValue);
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h, (cudaGraphConditionalNodeType)7, 1, nullptr),
                 cudaErrorInvalidValue);
    // a handle of another graph
    EXPECT_ERROR(add_conditional(&node, g, nullptr, 0, h_other, cudaGraphCondTypeIf, 1, nullptr),
                 cudaErrorInvalidValue);
    cudaGetLastError();
    size_t count = 1;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    EXPECT(count == 0);

    // a graph with a handle no conditional node uses
    cudaGraphInstantiateParams ip;
    memset(&ip, 0, sizeof ip);
    cudaGraphExec_t exec;
    EXPECT(cudaGraphInstantiateWithParams(&exec, other, &ip) != cudaSuccess);
    EXPECT(ip.result_out == cudaGraphInstantiateConditionalHandleUnused);
    cudaGetLastError();

    cudaGraph_t body[2];
    CHECK(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeIf, 2, body));
    EXPECT(body[0] != nullptr && body[1] != nullptr && body[0] != body[1]);
    int type = -1;
    CHECK(cudaGraphNodeGetType(node, (cudaGraphNodeType *)&type));
    EXPECT(type == cudaGraphNodeTypeConditional);
    // its parameters cannot change; its bodies belong to it
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    EXPECT(cudaGraphNodeSetParams(node, &cp) != cudaSuccess);
    cudaGetLastError();
    EXPECT(cudaGraphDestroy(body[0]) != cudaSuccess);
    cudaGetLastError();
    // no cloning, no child graph with conditional nodes
    cudaGraph_t clone;
    EXPECT(cudaGraphClone(&clone, g) != cudaSuccess);
    cudaGetLastError();
    cudaGraphNode_t child;
    EXPECT(cudaGraphAddChildGraphNode(&child, other, nullptr, 0, g) != cudaSuccess);
    cudaGetLastError();
    // a host node in a body: instantiation fails
    cudaHostNodeParams hp = {host_fn, nullptr};
    cudaGraphNode_t host;
    CHECK(cudaGraphAddHostNode(&host, body[1], nullptr, 0, &hp));
    memset(&ip, 0, sizeof ip);
    EXPECT_ERROR(cudaGraphInstantiateWithParams(&exec, g, &ip), cudaErrorInvalidValue);
    EXPECT(ip.result_out != cudaGraphInstantiateSuccess);
    cudaGetLastError();
    CHECK(cudaGraphDestroyNode(host));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphExecDestroy(exec));
    // a second instantiation once the first is gone
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(other));
}

__global__ void set_bogus(unsigned long long h)
{
    cudaGraphSetConditional((cudaGraphConditionalHandle)h, 1);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "badhandle")) {
        int *p;
        CHECK(cudaMalloc(&p, 64));
        set_bogus<<<1, 1>>>((unsigned long long)p); // device memory, but no handle
        cudaError_t e = cudaDeviceSynchronize();
        printf("badhandle: %s\n", cudaGetErrorName(e));
        return e == cudaSuccess ? 1 : 0;
    }
    test_while();
    test_while_zero();
    test_captured_while();
    test_if_else();
    test_switch();
    test_nested();
    test_update();
    test_errors();

    // a graph made before cudaDeviceReset does not run after it
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNode_t node;
    CHECK(add_conditional(&node, g, nullptr, 0, h, cudaGraphCondTypeIf, 1, nullptr));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaDeviceReset());
    EXPECT(cudaGraphLaunch(exec, 0) != cudaSuccess);
    cudaGetLastError();
    return finish("graph_conditional");
}
