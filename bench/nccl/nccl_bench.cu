// NCCL and multi-device benchmark, run by bench/nccl_bench.sh under
// `kemu exec --devices N` (and, built with -DNCCL_TEST_MPI, under mpirun):
// 1. AllReduce (float sum) of 256 KiB, 4 MiB and 32 MiB per rank over every
//    rank, from one thread per process in a group: time per call and the
//    bytes per second of the buffer (nccl-tests' "algbw": size / time), and
//    a C twin: the same sum of every rank's buffer done by a plain loop in
//    one thread (what one process's share of the work is at least).
// 2. (one process, 2 or more devices) kernel throughput: the same
//    compute-bound kernel on device 0 alone, then on devices 0 and 1 at once
//    from two host threads; prints the speed-up of the pair.
// Prints one line per measurement; no assertions (bench, not a test).
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "nccl_test.h"

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__global__ void fill(float *p, int rank, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (float)((i * 7 + (size_t)rank * 13) % 101) * 0.01f;
}

__global__ void spin(float *out, int iters)
{
    float x = (float)threadIdx.x * 0.001f, y = 1.0f;
    for (int i = 0; i < iters; i++) {
        y = y * 0.999f + x;
        x = x * 1.0001f - y * 0.0001f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x + y;
}

static void barrier()
{
#ifdef NCCL_TEST_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
}

static void kernel_throughput(int devices)
{
    const int blocks = 64, threads = 256, iters = 2000;
    std::vector<float *> out(2);
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&out[d], blocks * threads * sizeof(float)));
    }
    auto run = [&](int d) {
        cudaSetDevice(d);
        spin<<<blocks, threads>>>(out[d], iters);
        cudaDeviceSynchronize();
    };
    run(0); // warm: loads the module
    run(1);
    double t0 = now();
    run(0);
    double one = now() - t0;
    t0 = now();
    std::thread a(run, 0), b(run, 1);
    a.join();
    b.join();
    double two = now() - t0;
    printf("kernels: %d blocks x %d threads, 1 device %.3f s, devices 0 and 1 at once %.3f s: %.2fx the work per "
           "second (of %d devices)\n",
           blocks, threads, one, two, 2 * one / two, devices);
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaFree(out[d]));
    }
}

int main()
{
    std::vector<ncclComm_t> comms;
    rank_layout L = open_comms(comms, 1);
    const int n = L.nranks, first = L.first, last = L.first + L.nlocal;
    int world = 0, procs = 1;
#ifdef NCCL_TEST_MPI
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
#endif
    const size_t sizes[] = {256u << 10, 4u << 20, 32u << 20};
    std::vector<float *> buf(n), sum(n);
    std::vector<cudaStream_t> streams(n);
    size_t most = sizes[2] / sizeof(float);
    for (int r = first; r < last; r++) {
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaStreamCreate(&streams[r]));
        CHECK(cudaMalloc(&buf[r], most * sizeof(float)));
        CHECK(cudaMalloc(&sum[r], most * sizeof(float)));
        fill<<<(unsigned)((most + 255) / 256), 256, 0, streams[r]>>>(buf[r], r, most);
        CHECK(cudaStreamSynchronize(streams[r]));
    }
    for (size_t bytes : sizes) {
        size_t count = bytes / sizeof(float);
        int reps = bytes <= (256u << 10) ? 50 : bytes <= (4u << 20) ? 10 : 3;
        // one untimed call, then reps timed
        for (int rep = -1; rep < reps; rep++) {
            if (rep == 0) {
                barrier();
            }
            static double t0;
            if (rep == 0)
                t0 = now();
            NCHECK(ncclGroupStart());
            for (int r = first; r < last; r++)
                NCHECK(ncclAllReduce(buf[r], sum[r], count, ncclFloat, ncclSum, comms[r], streams[r]));
            NCHECK(ncclGroupEnd());
            if (rep == reps - 1) {
                for (int r = first; r < last; r++)
                    CHECK(cudaStreamSynchronize(streams[r]));
                barrier();
                double per = (now() - t0) / reps;
                // the C twin: rank 0 + rank 1 + ... over host copies of the inputs
                std::vector<std::vector<float>> in(n, std::vector<float>(count));
                for (int q = 0; q < n; q++)
                    for (size_t i = 0; i < count; i++)
                        in[q][i] = (float)((i * 7 + (size_t)q * 13) % 101) * 0.01f;
                std::vector<float> acc(count);
                double c0 = now();
                for (int k = 0; k < reps; k++) {
                    for (size_t i = 0; i < count; i++)
                        acc[i] = in[0][i];
                    for (int q = 1; q < n; q++)
                        for (size_t i = 0; i < count; i++)
                            acc[i] += in[q][i];
                }
                double c = (now() - c0) / reps;
                if (world == 0)
                    printf("allreduce %6zu KiB x %d ranks (%d process%s): %9.3f ms per call, %8.1f MB/s algbw; "
                           "C sum of the ranks' buffers %8.3f ms: %.1fx\n",
                           bytes >> 10, n, procs, procs == 1 ? "" : "es", per * 1e3, bytes / per / 1e6, c * 1e3,
                           per / c);
                fflush(stdout);
            }
        }
    }
    for (int r = first; r < last; r++) {
        CHECK(cudaSetDevice(L.device(r)));
        CHECK(cudaFree(buf[r]));
        CHECK(cudaFree(sum[r]));
        CHECK(cudaStreamDestroy(streams[r]));
        NCHECK(ncclCommDestroy(comms[r]));
    }
    if (procs == 1 && L.nlocal >= 2)
        kernel_throughput(L.nlocal);
    return close_comms("nccl_bench");
}
