// Helpers of the NCCL test programs under tests/nccl/ (built with nvcc and
// -lnccl against NVIDIA's nccl.h, run under `kemu exec --devices N`):
// NCHECK stops at a failing NCCL call, EXPECT_NCCL counts a call that did
// not return what was expected. check.h (tests/cuda/) gives CHECK, EXPECT
// and finish().
#ifndef KEMU_TESTS_NCCL_TEST_H
#define KEMU_TESTS_NCCL_TEST_H

#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include <nccl.h>
#ifdef NCCL_TEST_MPI
#include <mpi.h>
#endif

#include "check.h"

#define NCHECK(call)                                                                                 \
    do {                                                                                             \
        ncclResult_t nccl_error_ = (call);                                                           \
        if (nccl_error_ != ncclSuccess) {                                                            \
            printf("FAIL: %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #call, (int)nccl_error_, \
                   ncclGetErrorString(nccl_error_));                                                 \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define EXPECT_NCCL(call, expected)                                                                  \
    do {                                                                                             \
        ncclResult_t nccl_error_ = (call);                                                           \
        if (nccl_error_ != (expected)) {                                                             \
            printf("FAIL: %s:%d: %s returned %d (%s), expected %d\n", __FILE__, __LINE__, #call,      \
                   (int)nccl_error_, ncclGetErrorString(nccl_error_), (int)(expected));              \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

// The number of devices, at least `least` (else the program fails).
static inline int device_count(int least)
{
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    if (n < least) {
        printf("FAIL: %d devices, the test needs at least %d (kemu exec --devices N)\n", n, least);
        exit(1);
    }
    return n;
}

// The ranks of a test program. Built as is: one rank per device of the
// process, made with ncclCommInitAll. Built with -DNCCL_TEST_MPI and run
// under `mpirun -n P kemu exec --devices D`: P * D ranks, process p holding
// ranks p * D .. p * D + D - 1 on its devices 0 .. D - 1, made the usual
// way (MPI rank 0's ncclGetUniqueId, MPI_Bcast, ncclCommInitRank for each
// local device inside a group). comms has nranks entries; only the local
// ranks' are set.
struct rank_layout {
    int nranks, first, nlocal;
    int device(int rank) const { return rank - first; }
};

static inline rank_layout open_comms(std::vector<ncclComm_t> &comms, int least)
{
    rank_layout L;
#ifdef NCCL_TEST_MPI
    MPI_Init(NULL, NULL);
    int world = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int d = device_count(1);
    L.nranks = size * d;
    L.first = world * d;
    L.nlocal = d;
    if (L.nranks < least) {
        printf("FAIL: %d ranks, the test needs at least %d\n", L.nranks, least);
        exit(1);
    }
    ncclUniqueId id;
    if (world == 0)
        NCHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    comms.assign(L.nranks, NULL);
    NCHECK(ncclGroupStart());
    for (int i = 0; i < d; i++) {
        CHECK(cudaSetDevice(i));
        NCHECK(ncclCommInitRank(&comms[L.first + i], L.nranks, id, L.first + i));
    }
    NCHECK(ncclGroupEnd());
#else
    int d = device_count(least);
    L.nranks = d;
    L.first = 0;
    L.nlocal = d;
    comms.assign(d, NULL);
    NCHECK(ncclCommInitAll(comms.data(), d, NULL));
#endif
    return L;
}

// finish() of check.h; under MPI, after every process has finished
static inline int close_comms(const char *name)
{
    int rc = finish(name);
#ifdef NCCL_TEST_MPI
    fflush(stdout);
    MPI_Finalize();
#endif
    return rc;
}

#endif
