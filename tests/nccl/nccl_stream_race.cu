// racecheck across streams with NCCL (docs/checkers.md "Streams, events
// and devices"): on each of 2 devices a kernel of a compute stream makes
// the gradients, an AllReduce on a communication stream sums them, and a
// kernel of the compute stream reads the sum. The order comes from events
// (compute -> communication before the collective, communication ->
// compute after it). NCCL_RACE_MODE picks: fixed (both waits, clean),
// input_racy (no wait before the collective: it reads what the kernel is
// still writing), output_racy (no wait after it: the kernel reads what the
// collective writes). kemu runs in issue order, so the sums are right in
// every mode; racecheck names the missing wait.
#include <cstdlib>
#include <string>
#include <vector>

#include "nccl_test.h"

__global__ void gradients(float *g, int n, int rank)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        g[i] = (float)(rank + 1) * (float)i;
}

__global__ void scale(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 0.5f * in[i];
}

int main()
{
    const char *m = getenv("NCCL_RACE_MODE");
    std::string mode = m ? m : "fixed";
    const int ndev = 2, n = 512;
    int devs[ndev] = {0, 1};
    ncclComm_t comms[ndev];
    NCHECK(ncclCommInitAll(comms, ndev, devs));
    float *send[ndev], *recv[ndev], *out[ndev];
    cudaStream_t compute[ndev], comm[ndev];
    cudaEvent_t ready[ndev], reduced[ndev];
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&send[d], n * sizeof(float)));
        CHECK(cudaMalloc(&recv[d], n * sizeof(float)));
        CHECK(cudaMalloc(&out[d], n * sizeof(float)));
        CHECK(cudaStreamCreateWithFlags(&compute[d], cudaStreamNonBlocking));
        CHECK(cudaStreamCreateWithFlags(&comm[d], cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&ready[d], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&reduced[d], cudaEventDisableTiming));
        CHECK(cudaDeviceSynchronize());
    }
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        gradients<<<(n + 127) / 128, 128, 0, compute[d]>>>(send[d], n, d);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(ready[d], compute[d]));
        if (mode != "input_racy")
            CHECK(cudaStreamWaitEvent(comm[d], ready[d], 0));
    }
    NCHECK(ncclGroupStart());
    for (int d = 0; d < ndev; d++)
        NCHECK(ncclAllReduce(send[d], recv[d], n, ncclFloat, ncclSum, comms[d], comm[d]));
    NCHECK(ncclGroupEnd());
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaEventRecord(reduced[d], comm[d]));
        if (mode != "output_racy")
            CHECK(cudaStreamWaitEvent(compute[d], reduced[d], 0));
        scale<<<(n + 127) / 128, 128, 0, compute[d]>>>(recv[d], out[d], n);
        CHECK(cudaGetLastError());
    }
    for (int d = 0; d < ndev; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaStreamSynchronize(compute[d]));
        std::vector<float> got(n);
        CHECK(cudaMemcpy(got.data(), out[d], n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            EXPECT(got[i] == 0.5f * (1.0f * (float)i + 2.0f * (float)i));
    }
    for (int d = 0; d < ndev; d++)
        NCHECK(ncclCommDestroy(comms[d]));
    return finish(("nccl_stream_race " + mode).c_str());
}
