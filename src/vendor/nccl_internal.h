/* kemu's libnccl.so.2: what its files share. nccl.c is the API of the
 * operations (argument checks, groups), nccl_comm.c the communicators,
 * nccl_reduce.c the element types and the reductions in their fixed
 * order, nccl_exec.c the running of a complete operation, nccl_local.c the
 * transport between the ranks of one process. Built against NVIDIA's
 * nccl.h (found by configure), never a copy of it. Nothing here is
 * exported. */
#ifndef KEMU_NCCL_INTERNAL_H
#define KEMU_NCCL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl.h>

#define NCCL_API __attribute__((visibility("default")))

/* ---- element types and reductions (nccl_reduce.c) ---------------------- */

/* Bytes of one element of a datatype; 0 for a value nccl.h does not name. */
size_t nccl_type_size(int datatype);
/* "ncclFloat32" ...; "datatype N" (static buffer) for other values. */
const char *nccl_type_name(int datatype);
/* "ncclSum" ... "ncclAvg", "ncclPreMulSum" for created ones. */
const char *nccl_op_name(int op);

/* The reduction of the ranks' values, elementwise: out[i] = inputs[0][i]
 * OP inputs[1][i] OP ... OP inputs[n - 1][i], left to right (rank 0 first),
 * each step rounded to the element type (half, bfloat16 and fp8 compute
 * in float and round after every step, which gives exactly the type's own
 * correctly rounded arithmetic); op is ncclSum .. ncclAvg (avg: the sum,
 * then divided by n in the type) or NCCL_REDUCTION_PREMULSUM, for which
 * every input is first multiplied by its rank's scalar (scalars: n
 * elements of the type, 8 bytes apart). Integers wrap (two's complement).
 * max/min keep the earlier of equal values; a NaN wins over numbers (the
 * first NaN in rank order). out may be one of the inputs. */
#define NCCL_REDUCTION_PREMULSUM 100
void nccl_reduce(int op, int datatype, const unsigned char (*scalars)[8], void *out, const void *const *inputs, int n,
                 size_t count);

/* ---- operations and the transport (nccl_local.c) ----------------------- */

enum nccl_kind {
    NCCL_OP_ALLREDUCE,
    NCCL_OP_BROADCAST,
    NCCL_OP_REDUCE,
    NCCL_OP_ALLGATHER,
    NCCL_OP_REDUCESCATTER,
    NCCL_OP_ALLTOALL,
    NCCL_OP_GATHER,
    NCCL_OP_SCATTER,
    NCCL_OP_SEND,
    NCCL_OP_RECV,
    NCCL_OP_SPLIT
};

struct ncclComm;

/* One rank's part of an operation: what it called, with its buffers (device
 * addresses, which are host addresses in kemu). */
typedef struct nccl_op {
    int kind;                /* enum nccl_kind */
    const char *api;         /* "ncclAllReduce" */
    struct ncclComm *comm;
    const void *sendbuff;
    void *recvbuff;
    size_t count;            /* as the call counts it (per rank for AllGather, ReduceScatter, AlltoAll, Gather, Scatter) */
    int datatype;
    int op;                  /* ncclRedOp_t as called */
    int reduce_op;           /* ncclSum .. ncclAvg, or NCCL_REDUCTION_PREMULSUM */
    unsigned char scalar[8]; /* PreMulSum: this rank's scalar (resolved when it runs) */
    const void *device_scalar; /* PreMulSum with ncclScalarDevice: read when it runs */
    int root;                /* Broadcast, Reduce, Gather, Scatter; the peer for Send/Recv */
    cudaStream_t stream;
    /* ncclCommSplit */
    int color, key;
    struct ncclComm **newcomm;
    const ncclConfig_t *config;
    /* filled in by the transport */
    int remote;              /* another process's part (nccl_mpi.c): comm is a stand-in, sendbuff points at
                              * the bytes it sent, recvbuff is NULL: nccl_execute writes nothing for it */
    ncclResult_t result;
    int done;
    void *slot;              /* the transport's record of the operation */
    struct nccl_op *next_in_group;
} nccl_op;

/* The transport between the ranks of a clique: the one seam that a
 * transport across processes (Open MPI) would implement again, as a second
 * nccl_transport. A rank posts its part of each operation; once every
 * party has posted (all ranks for a collective, sender and receiver for a
 * send/recv pair), the transport runs the operation once and wakes the
 * parties; a party waits for its own part. In one process
 * (nccl_transport_local, nccl_local.c) the last party to post runs it
 * with nccl_execute over all parties' buffers. Across processes, the
 * transport would bring the other ranks' parts (their calls and input
 * bytes) into local staging and run nccl_execute over those, keeping only
 * the local rank's output: the order of the reduction stays the same. */
typedef struct nccl_clique nccl_clique;

typedef struct nccl_transport {
    const char *name;
    /* Finds or makes the clique that `id` names, for nranks ranks, and
     * adds `comm` as `rank` (ncclInvalidUsage, with a message, when the
     * rank is taken, the device is another rank's, or nranks differs). */
    ncclResult_t (*join)(const ncclUniqueId *id, int nranks, int rank, struct ncclComm *comm, nccl_clique **out);
    /* Makes a clique of comms[0..n-1] (ranks in that order) at once. */
    ncclResult_t (*make)(struct ncclComm **comms, int n, nccl_clique **out);
    /* Removes a rank; the clique goes with its last rank. */
    void (*leave)(nccl_clique *clique, int rank);
    /* Posts op (not blocking): the next collective of its rank, or the
     * next send/recv of its (sender, receiver) pair. May run it. */
    void (*post)(nccl_op *op);
    /* Waits until op has run; returns its result. Refuses to wait
     * (ncclInvalidUsage, with a message) for a missing party whose
     * communicator this very thread posts for, which would never come. */
    ncclResult_t (*wait)(nccl_op *op);
} nccl_transport;

extern const nccl_transport nccl_transport_local;

/* The transport between processes over Open MPI (nccl_mpi.c; configure
 * found Open MPI). nccl_mpi_active says whether ncclGetUniqueId makes ids
 * for it: MPI is (or, under mpirun, can be) initialized with more than one
 * process; *world is then this process's rank in MPI_COMM_WORLD. Both are
 * absent (0) in a build without Open MPI. */
#if KEMU_NCCL_MPI
extern const nccl_transport nccl_transport_mpi;
#endif
int nccl_mpi_active(int *world);

/* The members of rank r's colour in an ncclCommSplit (parts[q]->color and
 * ->key), ordered by (key, parent rank), into order[]; returns how many. */
int nccl_split_members(nccl_op **parts, int n, int r, int *order);

/* Runs a complete operation over its parties: parts[r] is rank r's part
 * (collectives, n ranks), or parts[0] the send and parts[1] the receive.
 * Sets every part's result. */
void nccl_execute(nccl_op **parts, int n);

/* ---- communicators (nccl.c) --------------------------------------------- */

struct ncclComm {
    unsigned magic;
    int rank, nranks;
    int device;              /* CUDA device ordinal */
    const nccl_transport *transport;
    nccl_clique *clique;
    uint64_t next_seq;       /* of its next collective */
    pthread_t poster;        /* the thread that last posted for it */
    int has_poster;          /* 1: posted; 2: not yet, poster is the thread that made it */
    ncclResult_t async_error; /* read and written atomically: the thread that runs an operation sets it */
    int finalized, destroyed;
    ncclConfig_t config;
    /* ncclRedOpCreatePreMulSum ops: slot i is op ncclNumOps + i */
    struct nccl_premul {
        int live;
        int datatype;
        int residence;
        const void *device_scalar;
        unsigned char scalar[8];
    } *premul;
    int npremul;
};
#define NCCL_COMM_MAGIC 0x6e63636cu

/* Prints "kemu: API: message" on stderr and keeps it as the calling
 * thread's last error (ncclGetLastError); comm (may be NULL) names the
 * communicator concerned. */
void nccl_message(struct ncclComm *comm, const char *api, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- shared by nccl.c and nccl_comm.c ----------------------------------- */

/* ncclSuccess when kemu's runtime is there, else ncclSystemError (said). */
ncclResult_t nccl_door_check(const char *api);
/* "kemu: NAME is not supported yet" (once per name); ncclInvalidUsage. */
ncclResult_t nccl_unsupported(const char *name);
/* ncclInvalidArgument unless comm is a live communicator; ncclInvalidUsage
 * for an operation (operation = 1) on a finalized one. */
ncclResult_t nccl_check_comm(const struct ncclComm *comm, const char *api, int operation);
/* ncclInvalidArgument for a config not set up by NCCL_CONFIG_INITIALIZER. */
ncclResult_t nccl_check_config(const ncclConfig_t *config, const char *api);
/* cudaGetDevice / cudaGetDeviceCount of kemu's runtime (0: success). */
int nccl_current_device(int *device);
int nccl_device_count(int *count);

/* Exports `pNAME` as another name of NAME (in NAME's file). */
#define NCCL_ALIAS(name) extern __typeof__(name) p##name __attribute__((alias(#name), visibility("default")));

/* Makes a communicator for rank of nranks on device, over the in-process
 * transport (the caller joins it to a clique). */
struct ncclComm *nccl_comm_new(int rank, int nranks, int device, const ncclConfig_t *config);
/* Frees a communicator that is in no clique (any more). */
void nccl_comm_free(struct ncclComm *comm);

/* The runtime's door for running on a device, and marking what was written
 * (libcudart's __kemu_vendor_*, looked up at run time: kemu's libnccl
 * works under both CUDA flavours of kemu's libcudart). 0 on success, else
 * the CUDA error (message printed). */
int nccl_device_begin(int device, cudaStream_t stream, const char *api);
void nccl_device_end(void);
void nccl_mark_written(int device, void *p, size_t bytes);
/* racecheck across streams: party i (devices[i], streams[i]) reads
 * ranges[4i + 1] bytes at ranges[4i], writes ranges[4i + 3] at ranges[4i + 2]. */
void nccl_stream_ops(int n, const int *devices, const cudaStream_t *streams, const char *api, const uint64_t *ranges);
/* 1 when [p, p + bytes) is memory a kernel reaches. */
int nccl_device_range(const void *p, size_t bytes);

#endif
