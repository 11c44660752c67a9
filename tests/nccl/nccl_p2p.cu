// Point-to-point: ncclSend/ncclRecv in a ring. First one thread drives
// every rank: in each of n-1 rounds, inside one ncclGroupStart/End, every
// rank sends its current block to the next rank and receives the previous
// rank's (a hand-made ring all-reduce, which deadlocks unless the grouped
// sends and receives progress together), checked against the CPU. Then
// one thread per rank does the same ring with its own group, plus two
// messages to the same peer in one group (matched in order) and a rank
// sending to itself.
#include <pthread.h>
#include <vector>

#include "nccl_test.h"

static const int COUNT = 1000;

__global__ void add_into(int *acc, const int *incoming, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        acc[i] += incoming[i];
}

static int value(int rank, int i) { return rank * 1000 + i * 3 - 7; }

struct rank_work {
    int rank, n;
    ncclComm_t comm;
    std::vector<int> got_first, got_second, got_self;
    ncclResult_t nccl;
};

static void *threaded(void *arg)
{
    rank_work *w = (rank_work *)arg;
    int r = w->rank, n = w->n, next = (r + 1) % n, prev = (r + n - 1) % n;
    cudaSetDevice(r);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    int *a, *b, *in1, *in2, *self_in;
    cudaMalloc(&a, COUNT * sizeof(int));
    cudaMalloc(&b, COUNT * sizeof(int));
    cudaMalloc(&in1, COUNT * sizeof(int));
    cudaMalloc(&in2, COUNT * sizeof(int));
    cudaMalloc(&self_in, COUNT * sizeof(int));
    std::vector<int> h(COUNT);
    for (int i = 0; i < COUNT; i++)
        h[i] = value(r, i);
    cudaMemcpy(a, h.data(), COUNT * sizeof(int), cudaMemcpyHostToDevice);
    for (int i = 0; i < COUNT; i++)
        h[i] = -value(r, i);
    cudaMemcpy(b, h.data(), COUNT * sizeof(int), cudaMemcpyHostToDevice);
    ncclResult_t e = ncclGroupStart();
    // two messages to the next rank: a then b (half of it), matched in order
    if (!e) e = ncclSend(a, COUNT, ncclInt32, next, w->comm, stream);
    if (!e) e = ncclSend(b, COUNT / 2, ncclInt32, next, w->comm, stream);
    if (!e) e = ncclRecv(in1, COUNT, ncclInt32, prev, w->comm, stream);
    if (!e) e = ncclRecv(in2, COUNT / 2, ncclInt32, prev, w->comm, stream);
    if (!e) e = ncclSend(a, COUNT, ncclInt32, r, w->comm, stream);
    if (!e) e = ncclRecv(self_in, COUNT, ncclInt32, r, w->comm, stream);
    ncclResult_t end = ncclGroupEnd();
    w->nccl = e ? e : end;
    w->got_first.resize(COUNT);
    w->got_second.resize(COUNT / 2);
    w->got_self.resize(COUNT);
    cudaMemcpyAsync(w->got_first.data(), in1, COUNT * sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync(w->got_second.data(), in2, COUNT / 2 * sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync(w->got_self.data(), self_in, COUNT * sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    cudaFree(a), cudaFree(b), cudaFree(in1), cudaFree(in2), cudaFree(self_in);
    cudaStreamDestroy(stream);
    return NULL;
}

int main()
{
    int n = device_count(2);
    std::vector<ncclComm_t> comms(n);
    NCHECK(ncclCommInitAll(comms.data(), n, NULL));
    std::vector<cudaStream_t> streams(n);
    std::vector<int *> acc(n), outgoing(n), incoming(n);
    std::vector<int> h(COUNT);
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaStreamCreate(&streams[r]));
        CHECK(cudaMalloc(&acc[r], COUNT * sizeof(int)));
        CHECK(cudaMalloc(&outgoing[r], COUNT * sizeof(int)));
        CHECK(cudaMalloc(&incoming[r], COUNT * sizeof(int)));
        for (int i = 0; i < COUNT; i++)
            h[i] = value(r, i);
        CHECK(cudaMemcpy(acc[r], h.data(), COUNT * sizeof(int), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(outgoing[r], h.data(), COUNT * sizeof(int), cudaMemcpyHostToDevice));
    }
    // the ring, from one thread: round k passes on what arrived in round k-1
    for (int round = 0; round < n - 1; round++) {
        NCHECK(ncclGroupStart());
        for (int r = 0; r < n; r++) {
            NCHECK(ncclSend(outgoing[r], COUNT, ncclInt32, (r + 1) % n, comms[r], streams[r]));
            NCHECK(ncclRecv(incoming[r], COUNT, ncclInt32, (r + n - 1) % n, comms[r], streams[r]));
        }
        NCHECK(ncclGroupEnd());
        for (int r = 0; r < n; r++) {
            CHECK(cudaSetDevice(r));
            add_into<<<(COUNT + 255) / 256, 256, 0, streams[r]>>>(acc[r], incoming[r], COUNT);
            CHECK(cudaMemcpyAsync(outgoing[r], incoming[r], COUNT * sizeof(int), cudaMemcpyDeviceToDevice, streams[r]));
        }
    }
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaStreamSynchronize(streams[r]));
        CHECK(cudaMemcpy(h.data(), acc[r], COUNT * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < COUNT; i++) {
            int want = 0;
            for (int q = 0; q < n; q++)
                want += value(q, i);
            EXPECT(h[i] == want);
        }
    }

    // one thread per rank
    std::vector<rank_work> work(n);
    std::vector<pthread_t> threads(n);
    for (int r = 0; r < n; r++) {
        work[r].rank = r;
        work[r].n = n;
        work[r].comm = comms[r];
        work[r].nccl = ncclInternalError;
        pthread_create(&threads[r], NULL, threaded, &work[r]);
    }
    for (int r = 0; r < n; r++)
        pthread_join(threads[r], NULL);
    for (int r = 0; r < n; r++) {
        int prev = (r + n - 1) % n;
        EXPECT(work[r].nccl == ncclSuccess);
        for (int i = 0; i < COUNT; i++) {
            EXPECT(work[r].got_first[i] == value(prev, i));
            EXPECT(work[r].got_self[i] == value(r, i));
        }
        for (int i = 0; i < COUNT / 2; i++)
            EXPECT(work[r].got_second[i] == -value(prev, i));
    }
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        CHECK(cudaFree(acc[r]));
        CHECK(cudaFree(outgoing[r]));
        CHECK(cudaFree(incoming[r]));
        NCHECK(ncclCommDestroy(comms[r]));
    }
    return finish("nccl_p2p");
}
