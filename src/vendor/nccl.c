/* kemu's libnccl.so.2: NCCL's API for the emulated devices of one process,
 * one rank per device (docs/multigpu.md, "NCCL"). This file checks the
 * arguments as NCCL does, keeps the communicators and the per-thread
 * group, and hands each rank's part of an operation to the transport
 * (nccl_local.c), which runs it once every rank has posted
 * (nccl_exec.c). It reaches kemu's runtime through the __kemu_vendor_*
 * door of kemu's libcudart and libkemu's checker hook, both looked up at
 * run time, so one libnccl.so.2 serves both CUDA flavours. */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vendor/nccl_internal.h"

/* ---- the door into kemu's runtime ------------------------------------------ */

typedef struct kemu_device kemu_device;
typedef struct kemu_error kemu_error;

static struct {
    pthread_once_t once;
    int (*begin_on)(int device, cudaStream_t stream, const char *api, kemu_device **dev);
    void (*end)(void);
    int (*range)(const void *p, size_t size);
    int (*get_device)(int *device);
    int (*get_device_count)(int *count);
    const char *(*error_name)(int error);
    int (*note_host_write)(kemu_device *dev, uint64_t address, size_t size, kemu_error *err);
    int (*cuda_malloc)(void **p, size_t size);
    int (*cuda_free)(void *p);
} door = {PTHREAD_ONCE_INIT, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static void door_open(void)
{
    *(void **)&door.begin_on = dlsym(RTLD_DEFAULT, "__kemu_vendor_begin_on");
    *(void **)&door.end = dlsym(RTLD_DEFAULT, "__kemu_vendor_end");
    *(void **)&door.range = dlsym(RTLD_DEFAULT, "__kemu_vendor_range");
    *(void **)&door.get_device = dlsym(RTLD_DEFAULT, "cudaGetDevice");
    *(void **)&door.get_device_count = dlsym(RTLD_DEFAULT, "cudaGetDeviceCount");
    *(void **)&door.error_name = dlsym(RTLD_DEFAULT, "cudaGetErrorName");
    *(void **)&door.note_host_write = dlsym(RTLD_DEFAULT, "kemu_note_host_write");
    *(void **)&door.cuda_malloc = dlsym(RTLD_DEFAULT, "cudaMalloc");
    *(void **)&door.cuda_free = dlsym(RTLD_DEFAULT, "cudaFree");
}

/* 0 when kemu's runtime is there, else ncclSystemError (said once). */
static ncclResult_t door_check(const char *api)
{
    pthread_once(&door.once, door_open);
    if (door.begin_on && door.end && door.range && door.get_device && door.get_device_count && door.error_name)
        return ncclSuccess;
    nccl_message(NULL, api, "kemu's libcudart is not loaded (run the program with `kemu exec`)");
    return ncclSystemError;
}

static __thread kemu_device *entered_device[64];

int nccl_device_begin(int device, cudaStream_t stream, const char *api)
{
    kemu_device *dev = NULL;
    int e = door.begin_on(device, stream, api, &dev);
    if (e)
        return e;
    if (device >= 0 && device < 64)
        entered_device[device] = dev;
    return 0;
}

void nccl_device_end(void)
{
    door.end();
}

void nccl_mark_written(int device, void *p, size_t bytes)
{
    if (door.note_host_write && device >= 0 && device < 64 && entered_device[device] && bytes)
        door.note_host_write(entered_device[device], (uint64_t)(uintptr_t)p, bytes, NULL);
}

int nccl_device_range(const void *p, size_t bytes)
{
    return door.range(p, bytes);
}

/* ---- messages and errors ------------------------------------------------- */

static __thread char last_error[256];

void nccl_message(struct ncclComm *comm, const char *api, const char *fmt, ...)
{
    char text[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    int at = snprintf(text, sizeof text, "%s: ", api);
    vsnprintf(text + at, sizeof text - (size_t)at, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kemu: %s\n", text);
    fflush(stderr);
    memcpy(last_error, text, sizeof text);
    (void)comm;
}

NCCL_API const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error";
    case ncclSystemError: return "unhandled system error";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument";
    case ncclInvalidUsage: return "invalid usage";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

NCCL_API const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm; /* NCCL keeps one last error per process thread, whatever the communicator */
    return last_error;
}

NCCL_API ncclResult_t ncclGetVersion(int *version)
{
    if (!version) {
        nccl_message(NULL, "ncclGetVersion", "version is NULL");
        return ncclInvalidArgument;
    }
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

/* "kemu: NAME is not supported yet" (once per name), ncclInvalidUsage. */
static ncclResult_t unsupported(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const char *said[64];
    static int nsaid;
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < nsaid; i++)
        seen |= said[i] == name;
    if (!seen && nsaid < 64)
        said[nsaid++] = name;
    pthread_mutex_unlock(&lock);
    if (!seen) {
        fprintf(stderr, "kemu: %s is not supported yet\n", name);
        fflush(stderr);
    }
    snprintf(last_error, sizeof last_error, "%s is not supported by kemu yet", name);
    return ncclInvalidUsage;
}

/* ---- communicators ---------------------------------------------------------- */

static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm **live_comms;
static size_t nlive, caplive;

static int comm_register(struct ncclComm *c)
{
    pthread_mutex_lock(&comms_lock);
    if (nlive == caplive) {
        size_t cap = caplive ? 2 * caplive : 16;
        struct ncclComm **grown = realloc(live_comms, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&comms_lock);
            return -1;
        }
        live_comms = grown;
        caplive = cap;
    }
    live_comms[nlive++] = c;
    pthread_mutex_unlock(&comms_lock);
    return 0;
}

static int comm_live(const struct ncclComm *c)
{
    pthread_mutex_lock(&comms_lock);
    int live = 0;
    for (size_t i = 0; i < nlive && !live; i++)
        live = live_comms[i] == c;
    pthread_mutex_unlock(&comms_lock);
    return live;
}

static void comm_unregister(struct ncclComm *c)
{
    pthread_mutex_lock(&comms_lock);
    for (size_t i = 0; i < nlive; i++)
        if (live_comms[i] == c) {
            live_comms[i] = live_comms[--nlive];
            break;
        }
    pthread_mutex_unlock(&comms_lock);
}

struct ncclComm *nccl_comm_new(int rank, int nranks, int device, const ncclConfig_t *config)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = NCCL_COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    c->transport = &nccl_transport_local;
    c->poster = pthread_self();
    c->has_poster = 2; /* made here; no operation posted yet */
    if (config)
        c->config = *config;
    if (comm_register(c)) {
        free(c);
        return NULL;
    }
    return c;
}

static void comm_free(struct ncclComm *c)
{
    comm_unregister(c);
    c->magic = 0;
    free(c->premul);
    free(c);
}

/* ncclInvalidArgument unless comm is a live communicator; ncclInvalidUsage
 * once it is finalized (operations) or after an error that broke it. */
static ncclResult_t check_comm(const struct ncclComm *comm, const char *api, int operation)
{
    if (!comm) {
        nccl_message(NULL, api, "comm is NULL");
        return ncclInvalidArgument;
    }
    if (!comm_live(comm)) {
        nccl_message(NULL, api, "comm %p is not a live communicator (destroyed, or never made)", (const void *)comm);
        return ncclInvalidArgument;
    }
    if (operation && comm->finalized) {
        nccl_message((struct ncclComm *)comm, api, "the communicator is finalized (ncclCommFinalize)");
        return ncclInvalidUsage;
    }
    return ncclSuccess;
}

#define UNIQUE_ID_MAGIC "kemu-nccl-id"

NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t counter;
    if (!uniqueId) {
        nccl_message(NULL, "ncclGetUniqueId", "uniqueId is NULL");
        return ncclInvalidArgument;
    }
    pthread_mutex_lock(&lock);
    uint64_t n = ++counter;
    pthread_mutex_unlock(&lock);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t fields[3] = {(uint64_t)getpid(), n, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec};
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, UNIQUE_ID_MAGIC, sizeof UNIQUE_ID_MAGIC);
    memcpy(uniqueId->internal + 16, fields, sizeof fields);
    return ncclSuccess;
}

static ncclResult_t check_config(const ncclConfig_t *config, const char *api)
{
    if (config && (config->magic != 0xcafebeef || config->size < offsetof(ncclConfig_t, blocking) + sizeof(int))) {
        nccl_message(NULL, api, "config was not set up with NCCL_CONFIG_INITIALIZER");
        return ncclInvalidArgument;
    }
    return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *newcomm, int nranks, const ncclUniqueId *id, int rank,
                              const ncclConfig_t *config, const char *api)
{
    ncclResult_t e = door_check(api);
    if (e)
        return e;
    if (!newcomm) {
        nccl_message(NULL, api, "comm is NULL");
        return ncclInvalidArgument;
    }
    *newcomm = NULL;
    if (nranks < 1) {
        nccl_message(NULL, api, "nranks %d is less than 1", nranks);
        return ncclInvalidArgument;
    }
    if (rank < 0 || rank >= nranks) {
        nccl_message(NULL, api, "rank %d is not in 0..%d (nranks %d)", rank, nranks - 1, nranks);
        return ncclInvalidArgument;
    }
    if (memcmp(id->internal, UNIQUE_ID_MAGIC, sizeof UNIQUE_ID_MAGIC)) {
        nccl_message(NULL, api, "commId was not made by ncclGetUniqueId");
        return ncclInvalidArgument;
    }
    if ((e = check_config(config, api)))
        return e;
    int device = 0, ndevices = 0;
    if (door.get_device(&device) || door.get_device_count(&ndevices)) {
        nccl_message(NULL, api, "no CUDA device");
        return ncclUnhandledCudaError;
    }
    if (nranks > ndevices) {
        nccl_message(NULL, api,
                     "nranks %d is more than the %d devices of this process (kemu runs one rank per device, in one "
                     "process; use kemu exec --devices N)",
                     nranks, ndevices);
        return ncclInvalidUsage;
    }
    struct ncclComm *c = nccl_comm_new(rank, nranks, device, config);
    if (!c)
        return ncclSystemError;
    if ((e = c->transport->join(id, nranks, rank, c, &c->clique))) {
        comm_free(c);
        return e;
    }
    *newcomm = c;
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return init_rank(comm, nranks, &commId, rank, NULL, "ncclCommInitRank");
}

NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                             ncclConfig_t *config)
{
    return init_rank(comm, nranks, &commId, rank, config, "ncclCommInitRankConfig");
}

NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                               ncclUniqueId *commIds, ncclConfig_t *config)
{
    if (nId < 1 || !commIds) {
        nccl_message(NULL, "ncclCommInitRankScalable", "nId %d / commIds %p: at least one id is needed", nId,
                     (void *)commIds);
        return ncclInvalidArgument;
    }
    /* in one process, the first id names the clique */
    return init_rank(newcomm, nranks, &commIds[0], myrank, config, "ncclCommInitRankScalable");
}

NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    const char *api = "ncclCommInitAll";
    ncclResult_t e = door_check(api);
    if (e)
        return e;
    if (!comms) {
        nccl_message(NULL, api, "comms is NULL");
        return ncclInvalidArgument;
    }
    int ndevices = 0;
    if (door.get_device_count(&ndevices)) {
        nccl_message(NULL, api, "no CUDA device");
        return ncclUnhandledCudaError;
    }
    if (ndev < 1) {
        nccl_message(NULL, api, "ndev %d is less than 1", ndev);
        return ncclInvalidArgument;
    }
    for (int i = 0; i < ndev; i++) {
        int d = devlist ? devlist[i] : i;
        if (d < 0 || d >= ndevices) {
            nccl_message(NULL, api, "device %d (rank %d) is not one of the %d devices (0..%d)", d, i, ndevices,
                         ndevices - 1);
            return ncclInvalidArgument;
        }
        for (int j = 0; j < i; j++)
            if ((devlist ? devlist[j] : j) == d) {
                nccl_message(NULL, api, "device %d is in devlist twice (ranks %d and %d): one rank per device", d, j,
                             i);
                return ncclInvalidUsage;
            }
    }
    struct ncclComm **made = calloc((size_t)ndev, sizeof *made);
    if (!made)
        return ncclSystemError;
    for (int i = 0; i < ndev; i++)
        if (!(made[i] = nccl_comm_new(i, ndev, devlist ? devlist[i] : i, NULL)))
            e = ncclSystemError;
    nccl_clique *clique = NULL;
    if (!e)
        e = made[0]->transport->make(made, ndev, &clique);
    for (int i = 0; i < ndev; i++) {
        if (e && made[i])
            comm_free(made[i]);
        else if (!e)
            made[i]->clique = clique;
        comms[i] = e ? NULL : made[i];
    }
    free(made);
    return e;
}

static ncclResult_t comm_end(ncclComm_t comm, const char *api)
{
    ncclResult_t e = check_comm(comm, api, 0);
    if (e)
        return e;
    comm->transport->leave(comm->clique, comm->rank);
    comm_free(comm);
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess; /* as NCCL: destroying NULL does nothing */
    return comm_end(comm, "ncclCommDestroy");
}

NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    return comm_end(comm, "ncclCommAbort");
}

NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    ncclResult_t e = check_comm(comm, "ncclCommFinalize", 0);
    if (e)
        return e;
    if (comm->finalized) {
        nccl_message(comm, "ncclCommFinalize", "the communicator is already finalized");
        return ncclInvalidUsage;
    }
    comm->finalized = 1; /* its operations all ran when their calls returned */
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    ncclResult_t e = check_comm(comm, "ncclCommGetAsyncError", 0);
    if (e)
        return e;
    if (!asyncError) {
        nccl_message(comm, "ncclCommGetAsyncError", "asyncError is NULL");
        return ncclInvalidArgument;
    }
    *asyncError = comm->async_error;
    return ncclSuccess;
}

#define COMM_QUERY(NAME, TYPE, ARG, VALUE)                                 \
    NCCL_API ncclResult_t NAME(const ncclComm_t comm, TYPE *ARG)           \
    {                                                                      \
        ncclResult_t e = check_comm(comm, #NAME, 0);                       \
        if (e)                                                             \
            return e;                                                      \
        if (!ARG) {                                                        \
            nccl_message(comm, #NAME, #ARG " is NULL");                    \
            return ncclInvalidArgument;                                    \
        }                                                                  \
        *ARG = VALUE;                                                      \
        return ncclSuccess;                                                \
    }
COMM_QUERY(ncclCommCount, int, count, comm->nranks)
COMM_QUERY(ncclCommCuDevice, int, device, comm->device)
COMM_QUERY(ncclCommUserRank, int, rank, comm->rank)

/* ---- PreMulSum ops ----------------------------------------------------------- */

NCCL_API ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                               ncclScalarResidence_t residence, ncclComm_t comm)
{
    const char *api = "ncclRedOpCreatePreMulSum";
    ncclResult_t e = check_comm(comm, api, 0);
    if (e)
        return e;
    size_t size = nccl_type_size(datatype);
    if (!op || !scalar || !size || (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)) {
        nccl_message(comm, api, "%s", !op ? "op is NULL" : !scalar ? "scalar is NULL" : !size ? "invalid datatype"
                                                                                               : "invalid residence");
        return ncclInvalidArgument;
    }
    if (residence == ncclScalarDevice && (e = door_check(api)))
        return e;
    if (residence == ncclScalarDevice && !nccl_device_range(scalar, size)) {
        nccl_message(comm, api, "scalar %p is not device memory (ncclScalarDevice)", scalar);
        return ncclInvalidArgument;
    }
    int slot = 0;
    while (slot < comm->npremul && comm->premul[slot].live)
        slot++;
    if (slot == comm->npremul) {
        struct nccl_premul *grown = realloc(comm->premul, (size_t)(slot + 1) * sizeof *grown);
        if (!grown)
            return ncclSystemError;
        comm->premul = grown;
        comm->npremul++;
    }
    struct nccl_premul *p = &comm->premul[slot];
    memset(p, 0, sizeof *p);
    p->live = 1;
    p->datatype = datatype;
    p->residence = residence;
    if (residence == ncclScalarHostImmediate)
        memcpy(p->scalar, scalar, size);
    else
        p->device_scalar = scalar;
    *op = (ncclRedOp_t)(ncclNumOps + slot);
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    ncclResult_t e = check_comm(comm, "ncclRedOpDestroy", 0);
    if (e)
        return e;
    int slot = (int)op - ncclNumOps;
    if ((int)op < ncclNumOps || slot >= comm->npremul || !comm->premul[slot].live) {
        nccl_message(comm, "ncclRedOpDestroy", "op %d is not an op made by ncclRedOpCreatePreMulSum on this comm",
                     (int)op);
        return ncclInvalidArgument;
    }
    comm->premul[slot].live = 0;
    return ncclSuccess;
}

/* ---- groups -------------------------------------------------------------------- */

static __thread struct {
    int depth;
    nccl_op *head, *tail;
    ncclResult_t error; /* the first error of a call in the group: the group does nothing */
} group;

NCCL_API ncclResult_t ncclGroupStart(void)
{
    group.depth++;
    return ncclSuccess;
}

static void group_discard(void)
{
    while (group.head) {
        nccl_op *next = group.head->next_in_group;
        free(group.head);
        group.head = next;
    }
    group.tail = NULL;
}

NCCL_API ncclResult_t ncclGroupEnd(void)
{
    if (group.depth == 0) {
        nccl_message(NULL, "ncclGroupEnd", "no ncclGroupStart to end");
        return ncclInvalidUsage;
    }
    if (--group.depth)
        return ncclSuccess;
    ncclResult_t result = group.error;
    group.error = ncclSuccess;
    if (result) {
        nccl_message(NULL, "ncclGroupEnd", "a call in the group failed (%s): the group does nothing",
                     ncclGetErrorString(result));
        group_discard();
        return result;
    }
    /* post every part first (the ranks of one thread meet), then wait */
    for (nccl_op *op = group.head; op; op = op->next_in_group)
        op->comm->transport->post(op);
    for (nccl_op *op = group.head; op; op = op->next_in_group) {
        ncclResult_t e = op->comm->transport->wait(op);
        if (e && !result)
            result = e;
    }
    group_discard();
    return result;
}

NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
    (void)simInfo;
    return unsupported("ncclGroupSimulateEnd");
}

/* ---- operations ------------------------------------------------------------------ */

static ncclResult_t check_buffer(ncclComm_t comm, const char *api, const char *arg, const void *p, size_t count,
                                 size_t elem)
{
    if (!count)
        return ncclSuccess;
    if (!p) {
        nccl_message(comm, api, "%s is NULL", arg);
        return ncclInvalidArgument;
    }
    if (count > SIZE_MAX / elem || !nccl_device_range(p, count * elem)) {
        nccl_message(comm, api, "%s %p is not device memory of %zu elements (%zu bytes each) that kernels reach", arg,
                     p, count, elem);
        return ncclInvalidArgument;
    }
    return ncclSuccess;
}

/* Checks one rank's call, then runs it (or adds it to the thread's group). */
static ncclResult_t enqueue(nccl_op *call)
{
    const char *api = call->api;
    ncclComm_t comm = call->comm;
    ncclResult_t e = door_check(api);
    if (!e)
        e = check_comm(comm, api, 1);
    size_t elem = nccl_type_size(call->datatype);
    if (!e && call->kind != NCCL_OP_SPLIT && !elem) {
        nccl_message(comm, api, "datatype %d is not an ncclDataType_t", call->datatype);
        e = ncclInvalidArgument;
    }
    int reduces = call->kind == NCCL_OP_ALLREDUCE || call->kind == NCCL_OP_REDUCE || call->kind == NCCL_OP_REDUCESCATTER;
    if (!e && reduces) {
        int op = call->op, slot = op - ncclNumOps;
        if (op >= 0 && op < ncclNumOps) {
            call->reduce_op = op;
        } else if (op >= ncclNumOps && slot < comm->npremul && comm->premul[slot].live) {
            if (comm->premul[slot].datatype != call->datatype) {
                nccl_message(comm, api, "op %d was made for %s, not %s", op,
                             nccl_type_name(comm->premul[slot].datatype), nccl_type_name(call->datatype));
                e = ncclInvalidArgument;
            }
            call->reduce_op = NCCL_REDUCTION_PREMULSUM;
            memcpy(call->scalar, comm->premul[slot].scalar, sizeof call->scalar);
            call->device_scalar = comm->premul[slot].device_scalar;
        } else {
            nccl_message(comm, api, "op %d is not an ncclRedOp_t (nor one made by ncclRedOpCreatePreMulSum on this "
                         "comm)", op);
            e = ncclInvalidArgument;
        }
    }
    int rooted = call->kind == NCCL_OP_BROADCAST || call->kind == NCCL_OP_REDUCE || call->kind == NCCL_OP_GATHER ||
                 call->kind == NCCL_OP_SCATTER;
    if (!e && (rooted || call->kind == NCCL_OP_SEND || call->kind == NCCL_OP_RECV) &&
        (call->root < 0 || call->root >= comm->nranks)) {
        nccl_message(comm, api, "%s %d is not a rank of this communicator (0..%d)", rooted ? "root" : "peer",
                     call->root, comm->nranks - 1);
        e = ncclInvalidArgument;
    }
    if (!e && call->kind == NCCL_OP_SPLIT) {
        if (!call->newcomm) {
            nccl_message(comm, api, "newcomm is NULL");
            e = ncclInvalidArgument;
        } else if (call->color < NCCL_SPLIT_NOCOLOR) {
            nccl_message(comm, api, "color %d is negative (and not NCCL_SPLIT_NOCOLOR)", call->color);
            e = ncclInvalidArgument;
        } else {
            e = check_config(call->config, api);
        }
    }
    /* the buffers each rank reads and writes */
    if (!e && call->kind != NCCL_OP_SPLIT) {
        size_t n = (size_t)comm->nranks, count = call->count, send = count, recv = count;
        if (call->kind == NCCL_OP_ALLGATHER)
            recv = count > SIZE_MAX / n ? SIZE_MAX : count * n;
        if (call->kind == NCCL_OP_REDUCESCATTER)
            send = count > SIZE_MAX / n ? SIZE_MAX : count * n;
        size_t all = count > SIZE_MAX / n ? SIZE_MAX : count * n;
        if (call->kind == NCCL_OP_ALLTOALL)
            send = recv = all;
        if (call->kind == NCCL_OP_GATHER)
            recv = all;
        if (call->kind == NCCL_OP_SCATTER)
            send = all;
        int root = comm->rank == call->root;
        if (call->kind == NCCL_OP_RECV || (!root && (call->kind == NCCL_OP_BROADCAST || call->kind == NCCL_OP_SCATTER)))
            send = 0;
        if (call->kind == NCCL_OP_SEND || (!root && (call->kind == NCCL_OP_REDUCE || call->kind == NCCL_OP_GATHER)))
            recv = 0;
        e = check_buffer(comm, api, "sendbuff", call->sendbuff, send, elem);
        if (!e)
            e = check_buffer(comm, api, "recvbuff", call->recvbuff, recv, elem);
    }
    if (!e && call->kind != NCCL_OP_SPLIT) {
        /* the stream: of the communicator's device, usable now */
        int ce = nccl_device_begin(comm->device, call->stream, api);
        if (ce == 0) {
            nccl_device_end();
        } else if (ce == 400 /* cudaErrorInvalidResourceHandle */) {
            nccl_message(comm, api, "stream %p is not a stream of CUDA device %d (the communicator's)",
                         (void *)call->stream, comm->device);
            e = ncclInvalidArgument;
        } else {
            nccl_message(comm, api, "CUDA error on device %d: %s", comm->device, door.error_name(ce));
            e = ncclUnhandledCudaError;
        }
    }
    if (e) {
        if (group.depth && !group.error)
            group.error = e;
        return e;
    }
    if (group.depth) {
        nccl_op *copy = malloc(sizeof *copy);
        if (!copy) {
            group.error = ncclSystemError;
            return ncclSystemError;
        }
        *copy = *call;
        copy->next_in_group = NULL;
        if (group.tail)
            group.tail->next_in_group = copy;
        else
            group.head = copy;
        group.tail = copy;
        return ncclSuccess;
    }
    comm->transport->post(call);
    return comm->transport->wait(call);
}

static nccl_op make_op(int kind, const char *api, ncclComm_t comm, const void *sendbuff, void *recvbuff, size_t count,
                       ncclDataType_t datatype, int op, int root, cudaStream_t stream)
{
    nccl_op o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.api = api;
    o.comm = comm;
    o.sendbuff = sendbuff;
    o.recvbuff = recvbuff;
    o.count = count;
    o.datatype = (int)datatype;
    o.op = op;
    o.root = root;
    o.stream = stream;
    return o;
}

NCCL_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_ALLREDUCE, "ncclAllReduce", comm, sendbuff, recvbuff, count, datatype, op, 0, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_REDUCE, "ncclReduce", comm, sendbuff, recvbuff, count, datatype, op, root, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_BROADCAST, "ncclBroadcast", comm, sendbuff, recvbuff, count, datatype, 0, root, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_BROADCAST, "ncclBcast", comm, buff, buff, count, datatype, 0, root, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                                    ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_ALLGATHER, "ncclAllGather", comm, sendbuff, recvbuff, sendcount, datatype, 0, 0, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_REDUCESCATTER, "ncclReduceScatter", comm, sendbuff, recvbuff, recvcount, datatype, op,
                        0, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                   ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_ALLTOALL, "ncclAlltoAll", comm, sendbuff, recvbuff, count, datatype, 0, 0, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_GATHER, "ncclGather", comm, sendbuff, recvbuff, count, datatype, 0, root, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_SCATTER, "ncclScatter", comm, sendbuff, recvbuff, count, datatype, 0, root, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_SEND, "ncclSend", comm, sendbuff, NULL, count, datatype, 0, peer, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                               cudaStream_t stream)
{
    nccl_op o = make_op(NCCL_OP_RECV, "ncclRecv", comm, NULL, recvbuff, count, datatype, 0, peer, stream);
    return enqueue(&o);
}

NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    nccl_op o = make_op(NCCL_OP_SPLIT, "ncclCommSplit", comm, NULL, NULL, 0, ncclInt8, 0, 0, NULL);
    o.color = color;
    o.key = key;
    o.newcomm = newcomm;
    o.config = config;
    if (newcomm)
        *newcomm = NULL;
    return enqueue(&o);
}

/* ---- buffers ------------------------------------------------------------------------ */

NCCL_API ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    ncclResult_t e = door_check("ncclMemAlloc");
    if (e)
        return e;
    if (!ptr) {
        nccl_message(NULL, "ncclMemAlloc", "ptr is NULL");
        return ncclInvalidArgument;
    }
    if (!door.cuda_malloc || door.cuda_malloc(ptr, size)) {
        nccl_message(NULL, "ncclMemAlloc", "cudaMalloc of %zu bytes failed", size);
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclMemFree(void *ptr)
{
    ncclResult_t e = door_check("ncclMemFree");
    if (e)
        return e;
    if (!door.cuda_free || door.cuda_free(ptr)) {
        nccl_message(NULL, "ncclMemFree", "cudaFree(%p) failed", ptr);
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}

/* Registration only speeds NCCL up; kemu needs none, and hands back the
 * buffer as the handle. */
NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)size;
    ncclResult_t e = check_comm(comm, "ncclCommRegister", 0);
    if (e)
        return e;
    if (!handle) {
        nccl_message(comm, "ncclCommRegister", "handle is NULL");
        return ncclInvalidArgument;
    }
    *handle = buff;
    return ncclSuccess;
}

NCCL_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    (void)handle;
    return check_comm(comm, "ncclCommDeregister", 0);
}

/* ---- not supported yet ------------------------------------------------------------- */

NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                     ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
    (void)comm, (void)excludeRanksList, (void)excludeRanksCount, (void)newcomm, (void)config, (void)shrinkFlags;
    return unsupported("ncclCommShrink");
}

NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
    (void)comm, (void)revokeFlags;
    return unsupported("ncclCommRevoke");
}

NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
    (void)comm, (void)buff, (void)size, (void)win, (void)winFlags;
    return unsupported("ncclCommWindowRegister");
}

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    (void)comm, (void)win;
    return unsupported("ncclCommWindowDeregister");
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
NCCL_API void ncclResetDebugInit(void)
{
    /* kemu's libnccl reads no NCCL_DEBUG variables */
}

/* ---- the profiling names (pnccl*), as NVIDIA's library exports them -------------- */

#define NCCL_ALIAS(name) extern __typeof__(name) p##name __attribute__((alias(#name), visibility("default")));
NCCL_ALIAS(ncclGetErrorString)
NCCL_ALIAS(ncclGetLastError)
NCCL_ALIAS(ncclGetVersion)
NCCL_ALIAS(ncclGetUniqueId)
NCCL_ALIAS(ncclCommInitRank)
NCCL_ALIAS(ncclCommInitRankConfig)
NCCL_ALIAS(ncclCommInitRankScalable)
NCCL_ALIAS(ncclCommInitAll)
NCCL_ALIAS(ncclCommDestroy)
NCCL_ALIAS(ncclCommAbort)
NCCL_ALIAS(ncclCommFinalize)
NCCL_ALIAS(ncclCommGetAsyncError)
NCCL_ALIAS(ncclCommCount)
NCCL_ALIAS(ncclCommCuDevice)
NCCL_ALIAS(ncclCommUserRank)
NCCL_ALIAS(ncclCommSplit)
NCCL_ALIAS(ncclCommShrink)
NCCL_ALIAS(ncclCommRevoke)
NCCL_ALIAS(ncclCommRegister)
NCCL_ALIAS(ncclCommDeregister)
NCCL_ALIAS(ncclCommWindowRegister)
NCCL_ALIAS(ncclCommWindowDeregister)
NCCL_ALIAS(ncclRedOpCreatePreMulSum)
NCCL_ALIAS(ncclRedOpDestroy)
NCCL_ALIAS(ncclGroupStart)
NCCL_ALIAS(ncclGroupEnd)
NCCL_ALIAS(ncclGroupSimulateEnd)
NCCL_ALIAS(ncclAllReduce)
NCCL_ALIAS(ncclReduce)
NCCL_ALIAS(ncclBroadcast)
NCCL_ALIAS(ncclBcast)
NCCL_ALIAS(ncclAllGather)
NCCL_ALIAS(ncclReduceScatter)
NCCL_ALIAS(ncclAlltoAll)
NCCL_ALIAS(ncclGather)
NCCL_ALIAS(ncclScatter)
NCCL_ALIAS(ncclSend)
NCCL_ALIAS(ncclRecv)
NCCL_ALIAS(ncclMemAlloc)
NCCL_ALIAS(ncclMemFree)
NCCL_ALIAS(ncclResetDebugInit)
#pragma GCC diagnostic pop
