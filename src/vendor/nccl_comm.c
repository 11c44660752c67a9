/* kemu's libnccl: communicators (made from a unique id, all at once, or
 * by ncclCommSplit in nccl_exec.c), their queries and lifetime, and the
 * PreMulSum ops made on them. A communicator is one rank on one device;
 * the transport (nccl_transport_local) groups the ranks of a clique. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vendor/nccl_internal.h"

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

void nccl_comm_free(struct ncclComm *c)
{
    comm_unregister(c);
    c->magic = 0;
    free(c->premul);
    free(c);
}

/* ncclInvalidArgument unless comm is a live communicator; ncclInvalidUsage
 * once it is finalized (operations) or after an error that broke it. */
ncclResult_t nccl_check_comm(const struct ncclComm *comm, const char *api, int operation)
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

/* An id: the magic, then (at 16) this process's pid, a count and the time,
 * then (at 40) ID_ACROSS_PROCESSES or 0 and (at 44) the MPI rank that made
 * it. Bytes 16..47 name the clique (nccl_mpi.c). */
#define UNIQUE_ID_MAGIC "kemu-nccl-id"
#define ID_ACROSS_PROCESSES 0x6d7069 /* "mpi" */

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
    /* under mpirun: an id for ranks across processes, naming this MPI rank */
    int32_t across[2] = {0, 0};
    if (nccl_mpi_active(&across[1]))
        across[0] = ID_ACROSS_PROCESSES;
    memcpy(uniqueId->internal + 40, across, sizeof across);
    return ncclSuccess;
}

ncclResult_t nccl_check_config(const ncclConfig_t *config, const char *api)
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
    ncclResult_t e = nccl_door_check(api);
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
    if ((e = nccl_check_config(config, api)))
        return e;
    int device = 0, ndevices = 0;
    if (nccl_current_device(&device) || nccl_device_count(&ndevices)) {
        nccl_message(NULL, api, "no CUDA device");
        return ncclUnhandledCudaError;
    }
    int32_t across;
    memcpy(&across, id->internal + 40, sizeof across);
    const nccl_transport *transport = &nccl_transport_local;
    if (across == ID_ACROSS_PROCESSES) {
#if KEMU_NCCL_MPI
        transport = &nccl_transport_mpi;
#else
        nccl_message(NULL, api, "commId is for ranks across processes, and this libnccl was built without Open MPI");
        return ncclInvalidUsage;
#endif
    } else if (nranks > ndevices) {
        nccl_message(NULL, api,
                     "nranks %d is more than the %d devices of this process (kemu runs one rank per device: use "
                     "kemu exec --devices N, or ranks in several processes under mpirun)",
                     nranks, ndevices);
        return ncclInvalidUsage;
    }
    struct ncclComm *c = nccl_comm_new(rank, nranks, device, config);
    if (!c)
        return ncclSystemError;
    c->transport = transport;
    if ((e = c->transport->join(id, nranks, rank, c, &c->clique))) {
        nccl_comm_free(c);
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
    ncclResult_t e = nccl_door_check(api);
    if (e)
        return e;
    if (!comms) {
        nccl_message(NULL, api, "comms is NULL");
        return ncclInvalidArgument;
    }
    int ndevices = 0;
    if (nccl_device_count(&ndevices)) {
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
            nccl_comm_free(made[i]);
        else if (!e)
            made[i]->clique = clique;
        comms[i] = e ? NULL : made[i];
    }
    free(made);
    return e;
}

static ncclResult_t comm_end(ncclComm_t comm, const char *api)
{
    ncclResult_t e = nccl_check_comm(comm, api, 0);
    if (e)
        return e;
    comm->transport->leave(comm->clique, comm->rank);
    nccl_comm_free(comm);
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
    ncclResult_t e = nccl_check_comm(comm, "ncclCommFinalize", 0);
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
    ncclResult_t e = nccl_check_comm(comm, "ncclCommGetAsyncError", 0);
    if (e)
        return e;
    if (!asyncError) {
        nccl_message(comm, "ncclCommGetAsyncError", "asyncError is NULL");
        return ncclInvalidArgument;
    }
    *asyncError = (ncclResult_t)__atomic_load_n(&comm->async_error, __ATOMIC_ACQUIRE);
    return ncclSuccess;
}

#define COMM_QUERY(NAME, TYPE, ARG, VALUE)                                 \
    NCCL_API ncclResult_t NAME(const ncclComm_t comm, TYPE *ARG)           \
    {                                                                      \
        ncclResult_t e = nccl_check_comm(comm, #NAME, 0);                       \
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
    ncclResult_t e = nccl_check_comm(comm, api, 0);
    if (e)
        return e;
    size_t size = nccl_type_size(datatype);
    if (!op || !scalar || !size || (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)) {
        nccl_message(comm, api, "%s", !op ? "op is NULL" : !scalar ? "scalar is NULL" : !size ? "invalid datatype"
                                                                                               : "invalid residence");
        return ncclInvalidArgument;
    }
    if (residence == ncclScalarDevice && (e = nccl_door_check(api)))
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
    ncclResult_t e = nccl_check_comm(comm, "ncclRedOpDestroy", 0);
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

/* Registration only speeds NCCL up; kemu needs none, and hands back the
 * buffer as the handle. */
NCCL_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)size;
    ncclResult_t e = nccl_check_comm(comm, "ncclCommRegister", 0);
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
    return nccl_check_comm(comm, "ncclCommDeregister", 0);
}

/* ---- not supported yet ------------------------------------------------------------- */

NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                     ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
    (void)comm, (void)excludeRanksList, (void)excludeRanksCount, (void)newcomm, (void)config, (void)shrinkFlags;
    return nccl_unsupported("ncclCommShrink");
}

NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
    (void)comm, (void)revokeFlags;
    return nccl_unsupported("ncclCommRevoke");
}

NCCL_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
    (void)comm, (void)buff, (void)size, (void)win, (void)winFlags;
    return nccl_unsupported("ncclCommWindowRegister");
}

NCCL_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
    (void)comm, (void)win;
    return nccl_unsupported("ncclCommWindowDeregister");
}

/* ---- the profiling names (pnccl*) of this file's functions ---------------- */

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
NCCL_ALIAS(ncclRedOpCreatePreMulSum)
NCCL_ALIAS(ncclRedOpDestroy)
NCCL_ALIAS(ncclCommRegister)
NCCL_ALIAS(ncclCommDeregister)
NCCL_ALIAS(ncclCommShrink)
NCCL_ALIAS(ncclCommRevoke)
NCCL_ALIAS(ncclCommWindowRegister)
NCCL_ALIAS(ncclCommWindowDeregister)
