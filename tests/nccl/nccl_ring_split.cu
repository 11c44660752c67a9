// Point-to-point and split communicators over every rank, one thread per
// process (nccl_test.h's open_comms: the devices of this process, or built
// with -DNCCL_TEST_MPI the devices of every process under mpirun):
// - a ring all-gather made of ncclSend/ncclRecv: in n - 1 steps, each rank
//   sends the block it received last to the next rank and receives one
//   from the previous, all ranks' calls of a step in one group;
// - a pair exchange between rank r and rank n - 1 - r (sends and
//   receives of both directions in one group);
// - ncclCommSplit by parity with keys that reverse the order
//   (NCCL_SPLIT_NOCOLOR for the last rank when n is odd and > 2), then an
//   AllReduce (sum, int64) and a Broadcast from the new rank 0 on each new
//   communicator.
// Each result is compared with what the ranks' inputs say it must be.
#include <cstdint>

#include "nccl_test.h"

static const int BLOCK = 1000;

__host__ __device__ int64_t value(int rank, int j)
{
    return (int64_t)rank * 1000003 + (int64_t)j * 7 - 500;
}

__global__ void fill(int64_t *out, int rank, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n)
        out[j] = value(rank, j);
}

int main()
{
    std::vector<ncclComm_t> comms;
    rank_layout L = open_comms(comms, 2);
    const int n = L.nranks, first = L.first, last = L.first + L.nlocal;
    std::vector<cudaStream_t> streams(n);
    std::vector<int64_t *> ring(n), pair(n), sum(n);
    for (int r = first; r < last; r++) {
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaStreamCreate(&streams[r]));
        CHECK(cudaMalloc(&ring[r], (size_t)n * BLOCK * sizeof(int64_t)));
        CHECK(cudaMalloc(&pair[r], BLOCK * sizeof(int64_t)));
        CHECK(cudaMalloc(&sum[r], BLOCK * sizeof(int64_t)));
        // own block at its place in the ring buffer
        fill<<<(BLOCK + 255) / 256, 256, 0, streams[r]>>>(ring[r] + (size_t)r * BLOCK, r, BLOCK);
        CHECK(cudaGetLastError());
    }
    // the ring: at step s, rank r sends block (r - s) and receives block (r - s - 1)
    for (int s = 0; s < n - 1; s++) {
        NCHECK(ncclGroupStart());
        for (int r = first; r < last; r++) {
            int next = (r + 1) % n, prev = (r + n - 1) % n;
            int out = ((r - s) % n + n) % n, in = ((r - s - 1) % n + n) % n;
            NCHECK(ncclSend(ring[r] + (size_t)out * BLOCK, BLOCK, ncclInt64, next, comms[r], streams[r]));
            NCHECK(ncclRecv(ring[r] + (size_t)in * BLOCK, BLOCK, ncclInt64, prev, comms[r], streams[r]));
        }
        NCHECK(ncclGroupEnd());
    }
    // the pairs: r and n - 1 - r swap their own blocks (the middle rank of
    // an odd n keeps its own)
    NCHECK(ncclGroupStart());
    for (int r = first; r < last; r++) {
        int peer = n - 1 - r;
        if (peer == r) {
            CHECK(cudaMemcpyAsync(pair[r], ring[r] + (size_t)r * BLOCK, BLOCK * sizeof(int64_t),
                                  cudaMemcpyDeviceToDevice, streams[r]));
            continue;
        }
        NCHECK(ncclSend(ring[r] + (size_t)r * BLOCK, BLOCK, ncclInt64, peer, comms[r], streams[r]));
        NCHECK(ncclRecv(pair[r], BLOCK, ncclInt64, peer, comms[r], streams[r]));
    }
    NCHECK(ncclGroupEnd());
    // split by parity, keys reversing the order; the last rank stays out when n is odd
    int out_rank = n % 2 && n > 2 ? n - 1 : -1;
    std::vector<ncclComm_t> sub(n, NULL);
    NCHECK(ncclGroupStart());
    for (int r = first; r < last; r++)
        NCHECK(ncclCommSplit(comms[r], r == out_rank ? NCCL_SPLIT_NOCOLOR : r % 2, n - r, &sub[r], NULL));
    NCHECK(ncclGroupEnd());
    NCHECK(ncclGroupStart());
    for (int r = first; r < last; r++)
        if (sub[r])
            NCHECK(ncclAllReduce(ring[r] + (size_t)r * BLOCK, sum[r], BLOCK, ncclInt64, ncclSum, sub[r], streams[r]));
    NCHECK(ncclGroupEnd());

    std::vector<int64_t> got((size_t)n * BLOCK);
    for (int r = first; r < last; r++) {
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaStreamSynchronize(streams[r]));
        CHECK(cudaMemcpy(got.data(), ring[r], (size_t)n * BLOCK * sizeof(int64_t), cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int q = 0; q < n; q++)
            for (int j = 0; j < BLOCK; j++)
                bad += got[(size_t)q * BLOCK + j] != value(q, j);
        if (bad)
            printf("rank %d: %d elements of the ring all-gather differ\n", r, bad);
        EXPECT(bad == 0);
        CHECK(cudaMemcpy(got.data(), pair[r], BLOCK * sizeof(int64_t), cudaMemcpyDeviceToHost));
        bad = 0;
        for (int j = 0; j < BLOCK; j++)
            bad += got[j] != value(n - 1 - r, j);
        EXPECT(bad == 0);
        if (r == out_rank) {
            EXPECT(sub[r] == NULL);
            continue;
        }
        // the new communicator: the ranks of r's parity (but out_rank), ordered by key = n - r
        int members = 0, my_new = 0;
        for (int q = 0; q < n; q++)
            if (q % 2 == r % 2 && q != out_rank)
                members++;
        for (int q = r + 1; q < n; q++) // larger old ranks have smaller keys: they come first
            if (q % 2 == r % 2 && q != out_rank)
                my_new++;
        int count = -1, rank = -1;
        NCHECK(ncclCommCount(sub[r], &count));
        NCHECK(ncclCommUserRank(sub[r], &rank));
        EXPECT(count == members && rank == my_new);
        CHECK(cudaMemcpy(got.data(), sum[r], BLOCK * sizeof(int64_t), cudaMemcpyDeviceToHost));
        bad = 0;
        for (int j = 0; j < BLOCK; j++) {
            int64_t want = 0;
            for (int q = n - 1; q >= 0; q--) // new rank order: old ranks descending
                if (q % 2 == r % 2 && q != out_rank)
                    want += value(q, j);
            bad += got[j] != want;
        }
        EXPECT(bad == 0);
    }
    // a broadcast from each new communicator's rank 0, then the split ones go
    NCHECK(ncclGroupStart());
    for (int r = first; r < last; r++)
        if (sub[r])
            NCHECK(ncclBroadcast(pair[r], sum[r], BLOCK, ncclInt64, 0, sub[r], streams[r]));
    NCHECK(ncclGroupEnd());
    for (int r = first; r < last; r++) {
        if (!sub[r])
            continue;
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaStreamSynchronize(streams[r]));
        CHECK(cudaMemcpy(got.data(), sum[r], BLOCK * sizeof(int64_t), cudaMemcpyDeviceToHost));
        // new rank 0 is the largest old rank of r's parity (not out_rank); its pair block
        int root_old = -1;
        for (int q = n - 1; q >= 0 && root_old < 0; q--)
            if (q % 2 == r % 2 && q != out_rank)
                root_old = q;
        int bad = 0;
        for (int j = 0; j < BLOCK; j++)
            bad += got[j] != value(n - 1 - root_old, j);
        EXPECT(bad == 0);
        NCHECK(ncclCommDestroy(sub[r]));
    }
    for (int r = first; r < last; r++) {
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaFree(ring[r]));
        CHECK(cudaFree(pair[r]));
        CHECK(cudaFree(sum[r]));
        CHECK(cudaStreamDestroy(streams[r]));
        NCHECK(ncclCommDestroy(comms[r]));
    }
    return close_comms("nccl_ring_split");
}
