// What stream capture refuses, with CUDA's errors: capturing the legacy
// stream, beginning twice, ending a stream that does not capture,
// potentially unsafe calls (cudaMalloc, a synchronous cudaMemcpy) and
// synchronization during a global-mode capture (which invalidate it), the
// legacy stream used while a blocking stream captures, ending on a forked
// stream or with unjoined work; and what the relaxed and thread-local
// modes allow, also from a second host thread. After each failure, a fresh
// capture works.
#include "check.h"
#include <thread>

__global__ void touch(int *p)
{
    p[threadIdx.x] += 1;
}

// Ends the capture of s expecting `expected`; a failed capture gives no graph.
static void end_expect(cudaStream_t s, cudaError_t expected)
{
    cudaGraph_t g = (cudaGraph_t)0x1;
    EXPECT_ERROR(cudaStreamEndCapture(s, &g), expected);
    if (expected == cudaSuccess)
        CHECK(cudaGraphDestroy(g));
    else
        EXPECT(g == nullptr);
    cudaGetLastError();
}

// A capture of one kernel that works and runs.
static void capture_works(cudaStream_t s, int *d)
{
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32, 0, s>>>(d);
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t x;
    CHECK(cudaGraphInstantiate(&x, g, 0));
    CHECK(cudaGraphLaunch(x, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(x));
    CHECK(cudaGraphDestroy(g));
}

int main()
{
    cudaStream_t s, s2, nb;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamCreate(&s2));
    CHECK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    int *d;
    CHECK(cudaMalloc(&d, 32 * sizeof(int)));
    CHECK(cudaMemset(d, 0, 32 * sizeof(int)));
    int h[32];
    void *extra = nullptr;

    // the legacy stream cannot capture; a stream not capturing cannot end
    EXPECT_ERROR(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    cudaGraph_t g = nullptr;
    EXPECT_ERROR(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
    cudaGetLastError();

    // beginning twice
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_ERROR(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    cudaGetLastError();
    end_expect(s, cudaSuccess);

    // cudaMalloc during a global capture: refused, the capture invalidated
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32, 0, s>>>(d);
    EXPECT_ERROR(cudaMalloc(&extra, 64), cudaErrorStreamCaptureUnsupported);
    cudaStreamCaptureStatus status;
    CHECK(cudaStreamIsCapturing(s, &status));
    EXPECT(status == cudaStreamCaptureStatusInvalidated);
    touch<<<1, 32, 0, s>>>(d); // further work on it fails
    EXPECT_ERROR(cudaGetLastError(), cudaErrorStreamCaptureInvalidated);
    end_expect(s, cudaErrorStreamCaptureInvalidated);
    capture_works(s, d);

    // a synchronous copy during a global capture
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_ERROR(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    end_expect(s, cudaErrorStreamCaptureInvalidated);

    // synchronizing the capturing stream, or the device
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_ERROR(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    end_expect(s, cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    end_expect(s, cudaErrorStreamCaptureInvalidated);

    // the legacy stream while a blocking stream captures
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32>>>(d);
    EXPECT_ERROR(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
    end_expect(s, cudaErrorStreamCaptureInvalidated);
    // ... but not while only a non-blocking stream captures
    CHECK(cudaStreamBeginCapture(nb, cudaStreamCaptureModeGlobal));
    touch<<<1, 32>>>(d);
    CHECK(cudaGetLastError());
    touch<<<1, 32, 0, nb>>>(d);
    end_expect(nb, cudaSuccess);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 2 && h[31] == 2); // capture_works once, the legacy launch once

    // relaxed captures allow potentially unsafe calls
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CHECK(cudaMalloc(&extra, 64));
    CHECK(cudaFree(extra));
    touch<<<1, 32, 0, s>>>(d);
    end_expect(s, cudaSuccess);
    // and so does a thread that switched itself to relaxed
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == cudaStreamCaptureModeGlobal);
    CHECK(cudaMalloc(&extra, 64));
    CHECK(cudaFree(extra));
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    EXPECT(mode == cudaStreamCaptureModeRelaxed);
    end_expect(s, cudaSuccess);
    // a thread-local capture forbids them on its own thread
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    EXPECT_ERROR(cudaMalloc(&extra, 64), cudaErrorStreamCaptureUnsupported);
    cudaGetLastError();
    end_expect(s, cudaErrorStreamCaptureInvalidated);

    // another thread: a global capture forbids its unsafe calls, a
    // thread-local one does not, and it cannot end the capture
    cudaError_t other = cudaSuccess;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    std::thread([&] { other = cudaMalloc(&extra, 64); }).join();
    EXPECT(other == cudaErrorStreamCaptureUnsupported);
    end_expect(s, cudaErrorStreamCaptureInvalidated);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    std::thread([&] {
        other = cudaMalloc(&extra, 64);
        if (other == cudaSuccess)
            other = cudaFree(extra);
    }).join();
    EXPECT(other == cudaSuccess);
    touch<<<1, 32, 0, s>>>(d);
    end_expect(s, cudaSuccess);
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32, 0, s>>>(d);
    std::thread([&] {
        cudaGraph_t stolen = nullptr;
        other = cudaStreamEndCapture(s, &stolen);
    }).join();
    EXPECT(other == cudaErrorStreamCaptureWrongThread);
    cudaGetLastError();
    end_expect(s, cudaSuccess);

    // forked work must be joined back; the capture ends where it began
    cudaEvent_t fork;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32, 0, s>>>(d);
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    touch<<<1, 32, 0, s2>>>(d);
    end_expect(s, cudaErrorStreamCaptureUnjoined);
    CHECK(cudaStreamIsCapturing(s2, &status));
    EXPECT(status == cudaStreamCaptureStatusNone);

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    touch<<<1, 32, 0, s2>>>(d);
    EXPECT_ERROR(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
    cudaGetLastError();
    end_expect(s, cudaErrorStreamCaptureInvalidated);

    // nothing captured ran; capture still works
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 2 && h[31] == 2);
    capture_works(s, d);
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 3);

    // graph calls with bad arguments
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t node;
    EXPECT_ERROR(cudaGraphAddMemFreeNode(&node, graph, nullptr, 0, d), cudaErrorInvalidValue); // not graph memory
    cudaGetLastError();
    cudaGraphNode_t a, b;
    CHECK(cudaGraphAddEmptyNode(&a, graph, nullptr, 0));
    CHECK(cudaGraphAddEmptyNode(&b, graph, &a, 1));
    EXPECT_ERROR(cudaGraphRemoveDependencies(graph, &b, &a, nullptr, 1), cudaErrorInvalidValue); // no such edge
    cudaGetLastError();
    CHECK(cudaGraphDestroy(graph));

    CHECK(cudaEventDestroy(fork));
    CHECK(cudaFree(d));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaStreamDestroy(nb));
    return finish("graph_errors");
}
