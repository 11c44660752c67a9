/* kemu's libnccl.so.2: NCCL's API for the emulated devices of one process,
 * one rank per device (docs/multigpu.md, "NCCL"). This file checks the
 * operations' arguments as NCCL does, keeps the per-thread group, and
 * hands each rank's part of an operation to its communicator's transport
 * (nccl_local.c), which runs it once every rank has posted (nccl_exec.c);
 * nccl_comm.c keeps the communicators. It reaches kemu's runtime through the __kemu_vendor_*
 * door of kemu's libcudart and libkemu's checker hook, both looked up at
 * run time, so one libnccl.so.2 serves both CUDA flavours. */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    void (*stream_ops)(int n, const int *devices, const cudaStream_t *streams, const char *api,
                       const uint64_t *ranges);
} door = {PTHREAD_ONCE_INIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

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
    *(void **)&door.stream_ops = dlsym(RTLD_DEFAULT, "__kemu_vendor_stream_ops");
}

/* 0 when kemu's runtime is there, else ncclSystemError (said once). */
ncclResult_t nccl_door_check(const char *api)
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

void nccl_stream_ops(int n, const int *devices, const cudaStream_t *streams, const char *api, const uint64_t *ranges)
{
    if (door.stream_ops)
        door.stream_ops(n, devices, streams, api, ranges);
}

int nccl_device_range(const void *p, size_t bytes)
{
    return door.range(p, bytes);
}

int nccl_current_device(int *device)
{
    return door.get_device(device);
}

int nccl_device_count(int *count)
{
    return door.get_device_count(count);
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
ncclResult_t nccl_unsupported(const char *name)
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
    return nccl_unsupported("ncclGroupSimulateEnd");
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
    ncclResult_t e = nccl_door_check(api);
    if (!e)
        e = nccl_check_comm(comm, api, 1);
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
            e = nccl_check_config(call->config, api);
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
    ncclResult_t e = nccl_door_check("ncclMemAlloc");
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
    ncclResult_t e = nccl_door_check("ncclMemFree");
    if (e)
        return e;
    if (!door.cuda_free || door.cuda_free(ptr)) {
        nccl_message(NULL, "ncclMemFree", "cudaFree(%p) failed", ptr);
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
NCCL_API void ncclResetDebugInit(void)
{
    /* kemu's libnccl reads no NCCL_DEBUG variables */
}

/* ---- the profiling names (pnccl*) of this file's functions ------------------------ */

NCCL_ALIAS(ncclGetErrorString)
NCCL_ALIAS(ncclGetLastError)
NCCL_ALIAS(ncclGetVersion)
NCCL_ALIAS(ncclCommSplit)
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
