// What NCCL refuses, with its result codes (tests/nccl/run.sh checks the
// one-line messages kemu prints on stderr): a bad root, peer, datatype or
// op, a NULL communicator, host memory as a buffer, a stream of another
// device, ncclGroupEnd without a start, bad ncclCommInitAll/InitRank
// arguments, two ranks on one device, a call in a group that fails (the
// group does nothing), ranks whose calls disagree, a collective for one
// rank of a single-threaded clique outside a group (refused instead of
// waiting forever; the communicator stays usable), a PreMulSum op used
// with another datatype, NCCL on a capturing stream, an entry point kemu
// does not implement, and NCCL on a device with a sticky kernel fault.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nccl_test.h"

__global__ void store_null()
{
    *(volatile int *)0 = 1;
}

int main()
{
    int n = device_count(2);
    EXPECT(n == 2);
    std::vector<ncclComm_t> comms(2);
    NCHECK(ncclCommInitAll(comms.data(), 2, NULL));
    float *buf[2];
    cudaStream_t streams[2];
    for (int r = 0; r < 2; r++) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaMalloc(&buf[r], 64 * sizeof(float)));
        CHECK(cudaMemset(buf[r], 0, 64 * sizeof(float)));
        CHECK(cudaStreamCreate(&streams[r]));
    }
    CHECK(cudaSetDevice(0));

    EXPECT_NCCL(ncclBroadcast(buf[0], buf[0], 4, ncclFloat, 5, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT(strstr(ncclGetLastError(comms[0]), "root 5") != NULL);
    EXPECT_NCCL(ncclReduce(buf[0], buf[0], 4, ncclFloat, ncclSum, -1, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclSend(buf[0], 4, ncclFloat, 2, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, (ncclDataType_t)42, ncclSum, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, (ncclRedOp_t)17, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, ncclSum, NULL, streams[0]), ncclInvalidArgument);
    float *host = (float *)calloc(64, sizeof(float));
    EXPECT_NCCL(ncclAllReduce(host, buf[0], 4, ncclFloat, ncclSum, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 65, ncclFloat, ncclSum, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, ncclSum, comms[0], streams[1]), ncclInvalidArgument);
    EXPECT_NCCL(ncclGroupEnd(), ncclInvalidUsage);
    EXPECT(strcmp(ncclGetErrorString(ncclInvalidArgument), "invalid argument") == 0);
    EXPECT(strcmp(ncclGetErrorString(ncclInvalidUsage), "invalid usage") == 0);

    // communicators
    ncclComm_t bad[3] = {NULL, NULL, NULL};
    int twice[2] = {0, 0};
    EXPECT_NCCL(ncclCommInitAll(bad, 2, twice), ncclInvalidUsage);
    EXPECT_NCCL(ncclCommInitAll(bad, 3, NULL), ncclInvalidArgument);
    EXPECT_NCCL(ncclCommInitAll(bad, 0, NULL), ncclInvalidArgument);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    EXPECT_NCCL(ncclCommInitRank(&bad[0], 2, id, 0), ncclInvalidArgument);
    NCHECK(ncclGetUniqueId(&id));
    EXPECT_NCCL(ncclCommInitRank(&bad[0], 3, id, 0), ncclInvalidUsage);
    EXPECT_NCCL(ncclCommInitRank(&bad[0], 2, id, 2), ncclInvalidArgument);
    NCHECK(ncclCommInitRank(&bad[0], 2, id, 0));                        // on device 0
    EXPECT_NCCL(ncclCommInitRank(&bad[1], 2, id, 1), ncclInvalidUsage); // device 0 again
    EXPECT_NCCL(ncclCommInitRank(&bad[2], 2, id, 0), ncclInvalidUsage); // rank 0 again
    NCHECK(ncclCommDestroy(bad[0]));
    EXPECT_NCCL(ncclCommCount(bad[0], &n), ncclInvalidArgument);       // destroyed
    ncclConfig_t config;
    memset(&config, 0, sizeof config);
    EXPECT_NCCL(ncclCommInitRankConfig(&bad[0], 2, id, 0, &config), ncclInvalidArgument);

    // a failing call in a group: the group does nothing
    float one = 1.0f;
    CHECK(cudaMemcpy(buf[1], &one, sizeof one, cudaMemcpyHostToDevice));
    NCHECK(ncclGroupStart());
    NCHECK(ncclBroadcast(buf[0], buf[0], 1, ncclFloat, 1, comms[0], streams[0]));
    EXPECT_NCCL(ncclBroadcast(buf[1], buf[1], 1, ncclFloat, 7, comms[1], streams[1]), ncclInvalidArgument);
    EXPECT_NCCL(ncclGroupEnd(), ncclInvalidArgument);
    float got = -1;
    CHECK(cudaMemcpy(&got, buf[0], sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == 0.0f);

    // one thread, no group: rank 0's call would wait for rank 1 forever
    NCHECK(ncclGroupStart());
    for (int r = 0; r < 2; r++)
        NCHECK(ncclAllReduce(buf[r], buf[r], 4, ncclFloat, ncclSum, comms[r], streams[r]));
    NCHECK(ncclGroupEnd());
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, ncclSum, comms[0], streams[0]), ncclInvalidUsage);
    EXPECT_NCCL(ncclSend(buf[0], 4, ncclFloat, 1, comms[0], streams[0]), ncclInvalidUsage);
    // ... and the communicators still work
    NCHECK(ncclGroupStart());
    for (int r = 0; r < 2; r++)
        NCHECK(ncclAllReduce(buf[r], buf[r], 4, ncclFloat, ncclSum, comms[r], streams[r]));
    NCHECK(ncclGroupEnd());
    CHECK(cudaMemcpy(&got, buf[0], sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == 2.0f); // 0 + 1, then 1 + 1

    // the ranks disagree on the count
    NCHECK(ncclGroupStart());
    NCHECK(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, ncclSum, comms[0], streams[0]));
    NCHECK(ncclAllReduce(buf[1], buf[1], 5, ncclFloat, ncclSum, comms[1], streams[1]));
    EXPECT_NCCL(ncclGroupEnd(), ncclInvalidUsage);
    ncclResult_t state = ncclSuccess;
    NCHECK(ncclCommGetAsyncError(comms[0], &state));
    EXPECT(state == ncclInvalidUsage);

    // PreMulSum ops
    ncclRedOp_t op;
    double scalar = 2.0;
    NCHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat64, ncclScalarHostImmediate, comms[0]));
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 4, ncclFloat, op, comms[0], streams[0]), ncclInvalidArgument);
    NCHECK(ncclRedOpDestroy(op, comms[0]));
    EXPECT_NCCL(ncclRedOpDestroy(op, comms[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclRedOpDestroy(ncclSum, comms[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclRedOpCreatePreMulSum(&op, host, ncclFloat, ncclScalarDevice, comms[0]), ncclInvalidArgument);

    // a one-rank communicator, and NCCL on a capturing stream (refused:
    // kemu does not capture library calls into graphs)
    ncclComm_t single;
    NCHECK(ncclGetUniqueId(&id));
    NCHECK(ncclCommInitRank(&single, 1, id, 0));
    CHECK(cudaMemcpy(buf[0], &one, sizeof one, cudaMemcpyHostToDevice));
    NCHECK(ncclAllReduce(buf[0], buf[0] + 1, 1, ncclFloat, ncclSum, single, streams[0]));
    CHECK(cudaMemcpy(&got, buf[0] + 1, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got == 1.0f);
    CHECK(cudaStreamBeginCapture(streams[0], cudaStreamCaptureModeGlobal));
    EXPECT_NCCL(ncclAllReduce(buf[0], buf[0], 1, ncclFloat, ncclSum, single, streams[0]), ncclUnhandledCudaError);
    cudaGraph_t graph = NULL;
    EXPECT_ERROR(cudaStreamEndCapture(streams[0], &graph), cudaErrorStreamCaptureInvalidated);
    NCHECK(ncclCommDestroy(single));

    // not implemented
    ncclComm_t shrunk = NULL;
    int exclude = 1;
    EXPECT_NCCL(ncclCommShrink(comms[0], &exclude, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT), ncclInvalidUsage);
    EXPECT(shrunk == NULL);
    // a Gather root out of range, a Scatter from host memory
    EXPECT_NCCL(ncclGather(buf[0], buf[0], 1, ncclFloat, 2, comms[0], streams[0]), ncclInvalidArgument);
    EXPECT_NCCL(ncclScatter(host, buf[0], 1, ncclFloat, 0, comms[0], streams[0]), ncclInvalidArgument);

    // a kernel fault on device 0 (sticky): NCCL on that device is
    // ncclUnhandledCudaError; device 1 still works
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(buf[1]));
    CHECK(cudaSetDevice(0));
    store_null<<<1, 1, 0, streams[0]>>>();
    EXPECT_ERROR(cudaStreamSynchronize(streams[0]), cudaErrorIllegalAddress);
    EXPECT_NCCL(ncclBroadcast(buf[0], buf[0], 1, ncclFloat, 0, comms[0], streams[0]), ncclUnhandledCudaError);

    free(host);
    for (int r = 0; r < 2; r++)
        NCHECK(ncclCommDestroy(comms[r]));
    return finish("nccl_errors");
}
