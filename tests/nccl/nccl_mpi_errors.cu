// Refusals across processes (built with -DNCCL_TEST_MPI, run under
// `mpirun -n 2 kemu exec --devices 1`; run.sh checks the messages):
// - the processes' calls disagree (count 4 against 5): ncclInvalidUsage on
//   both ranks, and the communicator's async error says so; a correct
//   AllReduce on the same communicator afterwards still works;
// - a rank that joins an id with another nranks than the maker's: the
//   first operation on that communicator fails on both ranks;
// - ncclCommInitRank with nranks above the local devices is accepted for
//   an id across processes (the ranks are the processes').
#include "nccl_test.h"

int main()
{
    std::vector<ncclComm_t> comms;
    rank_layout L = open_comms(comms, 2);
    int me = L.first;
    ncclComm_t comm = comms[me];
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    float *buf;
    CHECK(cudaMalloc(&buf, 8 * sizeof(float)));
    float host[8];
    for (int j = 0; j < 8; j++)
        host[j] = (float)(me + 1) * (float)(j + 1);
    CHECK(cudaMemcpy(buf, host, sizeof host, cudaMemcpyHostToDevice));

    // counts differ between the processes
    EXPECT_NCCL(ncclAllReduce(buf, buf, me == 0 ? 4 : 5, ncclFloat, ncclSum, comm, stream), ncclInvalidUsage);
    ncclResult_t async = ncclSuccess;
    NCHECK(ncclCommGetAsyncError(comm, &async));
    EXPECT(async == ncclInvalidUsage);
    // the communicator still serves a correct call
    NCHECK(ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, stream));
    CHECK(cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost));
    for (int j = 0; j < 8; j++) {
        float want = 0;
        for (int r = 0; r < L.nranks; r++)
            want += (float)(r + 1) * (float)(j + 1);
        EXPECT(host[j] == want);
    }

    // nranks differs at joining: the maker (MPI rank 0) says so, and the
    // first operation fails on every rank
    ncclUniqueId id;
    if (me == 0)
        NCHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t odd = NULL;
    NCHECK(ncclCommInitRank(&odd, me == 0 ? L.nranks : L.nranks + 1, id, me));
    EXPECT_NCCL(ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, odd, stream), ncclInvalidUsage);
    NCHECK(ncclCommDestroy(odd));

    CHECK(cudaFree(buf));
    NCHECK(ncclCommDestroy(comm));
    return close_comms("nccl_mpi_errors");
}
