// racecheck across streams (docs/checkers.md "Streams, events and
// devices"): operations of different streams that no event or
// synchronization orders race when they touch the same memory. Each mode
// computes the same result on a GPU and under kemu only if the order is
// right; the "racy" modes leave out the wait that makes it right (kemu
// still runs them in issue order, so the result is correct there and only
// racecheck says what is missing). Every mode checks its result against
// the CPU and prints PASS.
//   kernels_racy / kernels_fixed: a kernel of stream A writes, a kernel of
//     stream B reads, without / with cudaEventRecord + cudaStreamWaitEvent
//   memcpy_racy / memcpy_fixed: cudaMemcpyAsync on stream B copies a buffer
//     a kernel of stream A writes
//   legacy_blocking: the legacy default stream orders blocking streams
//   legacy_nonblocking: ... but not a cudaStreamNonBlocking stream (race)
//   host_sync: cudaStreamSynchronize(A) before issuing on B orders them
//   event_sync: cudaEventSynchronize does too
//   peer_racy / peer_fixed (2 devices): a kernel of device 0 writes device
//     1's memory through peer access while a kernel of device 1 on another
//     stream reads it, without / with an event
//   graph_racy / graph_fixed: a graph (captured: a copy, then a kernel
//     writing) launched on stream A, a kernel of stream B reading what the
//     graph's kernel wrote, without / with an event after the graph
//   many: 10000 launches on two streams ordered by events, synchronized
//     every 100 (clean, and racecheck keeps little)
//   strided / strided_racy: a kernel of stream B reads the even elements
//     of a buffer (each warp a strided range with gaps) while a kernel of
//     stream A writes the odd ones (no race: no byte in common) / all of
//     them (a race), with no event between them
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"

__global__ void fill(int *out, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = base + i;
}

__global__ void twice(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2 * in[i];
}

__global__ void fill_odd(int *out, int n, int base)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 < n)
        out[2 * i + 1] = base + 2 * i + 1;
}

__global__ void twice_even(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i < n)
        out[i] = 2 * in[2 * i];
}

static int verify(const std::vector<int> &got, int base, int factor)
{
    for (size_t i = 0; i < got.size(); i++)
        if (got[i] != factor * (base + (int)i)) {
            printf("FAIL: element %zu is %d, expected %d\n", i, got[i], factor * (base + (int)i));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kernels_fixed";
    const int n = 1000, threads = 128, blocks = (n + threads - 1) / threads;
    std::vector<int> host(n);
    int bad = 0;
    if (!strncmp(mode, "peer_", 5)) {
        int count = 0;
        CHECK(cudaGetDeviceCount(&count));
        if (count < 2) {
            printf("FAIL: needs 2 devices\n");
            return 1;
        }
        int *buf1, *out1;
        cudaStream_t s0, s1;
        cudaEvent_t written;
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&buf1, n * sizeof(int)));
        CHECK(cudaMalloc(&out1, n * sizeof(int)));
        CHECK(cudaStreamCreate(&s1));
        CHECK(cudaSetDevice(0));
        CHECK(cudaDeviceEnablePeerAccess(1, 0));
        CHECK(cudaStreamCreate(&s0));
        CHECK(cudaEventCreate(&written));
        fill<<<blocks, threads, 0, s0>>>(buf1, n, 7); // device 0 writes device 1's memory
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(written, s0));
        CHECK(cudaSetDevice(1));
        if (!strcmp(mode, "peer_fixed"))
            CHECK(cudaStreamWaitEvent(s1, written, 0));
        twice<<<blocks, threads, 0, s1>>>(buf1, out1, n);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s1));
        CHECK(cudaMemcpy(host.data(), out1, n * sizeof(int), cudaMemcpyDeviceToHost));
        bad = verify(host, 7, 2);
        CHECK(cudaSetDevice(0));
        CHECK(cudaDeviceSynchronize());
    } else if (!strncmp(mode, "strided", 7)) {
        int *a, *b;
        cudaStream_t sa, sb;
        CHECK(cudaMalloc(&a, n * sizeof(int)));
        CHECK(cudaMalloc(&b, n / 2 * sizeof(int)));
        CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
        for (int i = 0; i < n; i++)
            host[i] = 5 + i;
        CHECK(cudaMemcpy(a, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
        if (!strcmp(mode, "strided_racy"))
            fill<<<blocks, threads, 0, sa>>>(a, n, 5); // the same values, yet a race
        else
            fill_odd<<<blocks, threads, 0, sa>>>(a, n, 5);
        CHECK(cudaGetLastError());
        twice_even<<<blocks, threads, 0, sb>>>(a, b, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::vector<int> half(n / 2);
        CHECK(cudaMemcpy(half.data(), b, n / 2 * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n / 2; i++)
            if (half[i] != 2 * (5 + 2 * i)) {
                printf("FAIL: element %d is %d, expected %d\n", i, half[i], 2 * (5 + 2 * i));
                bad = 1;
                break;
            }
    } else if (!strcmp(mode, "many")) {
        int *a, *b;
        cudaStream_t s1, s2;
        cudaEvent_t e1, e2;
        CHECK(cudaMalloc(&a, n * sizeof(int)));
        CHECK(cudaMalloc(&b, n * sizeof(int)));
        CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
        for (int i = 0; i < 5000; i++) {
            fill<<<blocks, threads, 0, s1>>>(a, n, i);
            CHECK(cudaEventRecord(e1, s1));
            CHECK(cudaStreamWaitEvent(s2, e1, 0));
            twice<<<blocks, threads, 0, s2>>>(a, b, n);
            CHECK(cudaEventRecord(e2, s2));
            CHECK(cudaStreamWaitEvent(s1, e2, 0)); // the next fill overwrites a, which s2 read
            if (i % 100 == 99)
                CHECK(cudaDeviceSynchronize());
        }
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
        bad = verify(host, 4999, 2);
    } else {
        int *a, *b;
        cudaStream_t sa, sb;
        cudaEvent_t written;
        int nonblocking = !strcmp(mode, "legacy_nonblocking");
        CHECK(cudaMalloc(&a, n * sizeof(int)));
        CHECK(cudaMalloc(&b, n * sizeof(int)));
        CHECK(cudaStreamCreateWithFlags(&sa, nonblocking ? cudaStreamNonBlocking : cudaStreamDefault));
        CHECK(cudaStreamCreateWithFlags(&sb, nonblocking ? cudaStreamNonBlocking : cudaStreamDefault));
        CHECK(cudaEventCreate(&written));
        CHECK(cudaDeviceSynchronize()); // the allocations are ordered before everything
        if (!strncmp(mode, "graph_", 6)) {
            // the graph: a copy into b, then a kernel writing a, on stream A
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            std::vector<int> zeros(n, 0);
            CHECK(cudaStreamBeginCapture(sa, cudaStreamCaptureModeGlobal));
            CHECK(cudaMemcpyAsync(b, zeros.data(), n * sizeof(int), cudaMemcpyHostToDevice, sa));
            fill<<<blocks, threads, 0, sa>>>(a, n, 9);
            CHECK(cudaStreamEndCapture(sa, &graph));
            CHECK(cudaGraphInstantiate(&exec, graph, 0));
            CHECK(cudaGraphLaunch(exec, sa));
            CHECK(cudaEventRecord(written, sa));
            if (!strcmp(mode, "graph_fixed"))
                CHECK(cudaStreamWaitEvent(sb, written, 0));
            twice<<<blocks, threads, 0, sb>>>(a, b, n);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(sb));
            CHECK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
            bad = verify(host, 9, 2);
            CHECK(cudaGraphExecDestroy(exec));
            CHECK(cudaGraphDestroy(graph));
        } else if (!strncmp(mode, "legacy_", 7)) {
            // the legacy stream writes; stream B reads
            fill<<<blocks, threads>>>(a, n, 3);
            CHECK(cudaGetLastError());
            twice<<<blocks, threads, 0, sb>>>(a, b, n);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(sb));
            CHECK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
            bad = verify(host, 3, 2);
        } else {
            fill<<<blocks, threads, 0, sa>>>(a, n, 5);
            CHECK(cudaGetLastError());
            CHECK(cudaEventRecord(written, sa));
            if (!strcmp(mode, "kernels_fixed") || !strcmp(mode, "memcpy_fixed"))
                CHECK(cudaStreamWaitEvent(sb, written, 0));
            else if (!strcmp(mode, "host_sync"))
                CHECK(cudaStreamSynchronize(sa));
            else if (!strcmp(mode, "event_sync"))
                CHECK(cudaEventSynchronize(written));
            if (!strncmp(mode, "memcpy_", 7)) {
                CHECK(cudaMemcpyAsync(b, a, n * sizeof(int), cudaMemcpyDeviceToDevice, sb));
                CHECK(cudaStreamSynchronize(sb));
                CHECK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
                bad = verify(host, 5, 1);
            } else {
                twice<<<blocks, threads, 0, sb>>>(a, b, n);
                CHECK(cudaGetLastError());
                CHECK(cudaStreamSynchronize(sb));
                CHECK(cudaMemcpy(host.data(), b, n * sizeof(int), cudaMemcpyDeviceToHost));
                bad = verify(host, 5, 2);
            }
        }
        CHECK(cudaDeviceSynchronize());
    }
    if (bad)
        return 1;
    printf("PASS %s\n", mode);
    return 0;
}
