/* kemu's libnccl: runs one complete operation over every party's buffers
 * (device addresses are host addresses in kemu): checks that the parties
 * agree, enters each party's device through the runtime (its stream,
 * sticky error, no other thread's launch running on it), computes every
 * output into staging memory first (so in-place calls read no output
 * early), then writes the outputs and tells the checkers they were
 * written. Also makes the communicators of ncclCommSplit. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "vendor/nccl_internal.h"

static void set_result(nccl_op **parts, int n, ncclResult_t result)
{
    for (int i = 0; i < n; i++)
        parts[i]->result = result;
}

/* The parties' calls must agree (as NCCL requires; it would hang or
 * corrupt memory where kemu says so). */
static int parts_agree(nccl_op **parts, int n)
{
    nccl_op *a = parts[0];
    for (int i = 1; i < n; i++) {
        nccl_op *b = parts[i];
        const char *what = NULL;
        if (a->kind == NCCL_OP_SEND) {
            if (b->count != a->count || b->datatype != a->datatype)
                what = "count or datatype";
        } else if (b->kind != a->kind)
            what = "operation";
        else if (a->kind != NCCL_OP_SPLIT && (b->count != a->count || b->datatype != a->datatype))
            what = "count or datatype";
        else if ((a->kind == NCCL_OP_BROADCAST || a->kind == NCCL_OP_REDUCE || a->kind == NCCL_OP_GATHER ||
                  a->kind == NCCL_OP_SCATTER) &&
                 b->root != a->root)
            what = "root";
        else if ((a->kind == NCCL_OP_ALLREDUCE || a->kind == NCCL_OP_REDUCE || a->kind == NCCL_OP_REDUCESCATTER) &&
                 (b->reduce_op != a->reduce_op))
            what = "reduction op";
        if (what) {
            int ra = a->kind == NCCL_OP_SEND ? a->comm->rank : 0, rb = b->comm->rank;
            nccl_message(b->comm, b->api,
                         "the ranks' calls differ in %s: rank %d called %s(count %zu, %s, root/peer %d), rank %d "
                         "%s(count %zu, %s, root/peer %d)",
                         what, ra, a->api, a->count, nccl_type_name(a->datatype), a->root, rb, b->api, b->count,
                         nccl_type_name(b->datatype), b->root);
            return 0;
        }
    }
    return 1;
}

int nccl_split_members(nccl_op **parts, int n, int r, int *order)
{
    int m = 0;
    for (int q = 0; q < n; q++)
        if (parts[q]->color == parts[r]->color) {
            int at = m++;
            while (at > 0 && parts[order[at - 1]]->key > parts[q]->key) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = q;
        }
    return m;
}

static void execute_split(nccl_op **parts, int n)
{
    int *order = malloc((size_t)n * sizeof *order);
    struct ncclComm **made = calloc((size_t)n, sizeof *made);
    if (!order || !made) {
        free(order), free(made);
        set_result(parts, n, ncclSystemError);
        return;
    }
    set_result(parts, n, ncclSuccess);
    int *done = calloc((size_t)n, sizeof *done);
    for (int r = 0; done && r < n; r++) {
        if (done[r] || parts[r]->color == NCCL_SPLIT_NOCOLOR) {
            if (!done[r])
                *parts[r]->newcomm = NULL;
            continue;
        }
        int m = nccl_split_members(parts, n, r, order);
        int ok = 1;
        memset(made, 0, (size_t)m * sizeof *made);
        for (int i = 0; i < m && ok; i++) {
            nccl_op *p = parts[order[i]];
            made[i] = nccl_comm_new(i, m, p->comm->device, p->config ? p->config : &p->comm->config);
            ok = made[i] != NULL;
            if (ok) { /* driven by the thread that drives its parent rank */
                made[i]->poster = p->comm->poster;
                made[i]->has_poster = p->comm->has_poster;
            }
        }
        nccl_clique *clique = NULL;
        if (ok && parts[r]->comm->transport->make(made, m, &clique))
            ok = 0;
        for (int i = 0; i < m; i++) {
            nccl_op *p = parts[order[i]];
            done[order[i]] = 1;
            if (ok) {
                made[i]->clique = clique;
                *p->newcomm = made[i];
            } else {
                if (made[i])
                    nccl_comm_free(made[i]);
                *p->newcomm = NULL;
                p->result = ncclSystemError;
            }
        }
    }
    if (!done)
        set_result(parts, n, ncclSystemError);
    free(done), free(order), free(made);
}

/* Writes a party's output (none for another process's part) and tells the
 * checkers it was written. */
static void deliver(nccl_op *part, const void *from, size_t bytes)
{
    if (part->remote)
        return;
    memcpy(part->recvbuff, from, bytes);
    nccl_mark_written(part->comm->device, part->recvbuff, bytes);
}

/* Reads the PreMulSum scalars (device-resident ones now, as NCCL does
 * while the collective runs). */
static void gather_scalars(nccl_op **parts, int n, unsigned char (*scalars)[8])
{
    for (int r = 0; r < n; r++) {
        memcpy(scalars[r], parts[r]->scalar, 8);
        if (parts[r]->reduce_op == NCCL_REDUCTION_PREMULSUM && parts[r]->device_scalar)
            memcpy(scalars[r], parts[r]->device_scalar, nccl_type_size(parts[r]->datatype));
    }
}

/* Tells racecheck what each party of this process reads and writes, on
 * its stream (another process's parts are its own process's business). */
static void note_stream_ops(nccl_op **parts, int n, size_t block)
{
    int *devices = malloc((size_t)n * sizeof *devices);
    cudaStream_t *streams = malloc((size_t)n * sizeof *streams);
    uint64_t *ranges = calloc((size_t)n * 4, sizeof *ranges);
    int kind = parts[0]->kind, root = parts[0]->root, local = 0;
    size_t all = block * (size_t)(kind == NCCL_OP_SEND ? 1 : n);
    for (int r = 0; devices && streams && ranges && r < n; r++) {
        if (parts[r]->remote)
            continue;
        devices[local] = parts[r]->comm->device;
        streams[local] = parts[r]->stream;
        uint64_t *x = ranges + 4 * local++;
        int is_root = r == root, sends = kind != NCCL_OP_SEND || r == 0, receives = kind != NCCL_OP_SEND || r == 1;
        x[0] = (uint64_t)(uintptr_t)parts[r]->sendbuff;
        x[1] = !sends || ((kind == NCCL_OP_BROADCAST || kind == NCCL_OP_SCATTER) && !is_root) ? 0
               : kind == NCCL_OP_REDUCESCATTER || kind == NCCL_OP_ALLTOALL || kind == NCCL_OP_SCATTER ? all
                                                                                                        : block;
        x[2] = (uint64_t)(uintptr_t)parts[r]->recvbuff;
        x[3] = !receives || ((kind == NCCL_OP_REDUCE || kind == NCCL_OP_GATHER) && !is_root) ? 0
               : kind == NCCL_OP_ALLGATHER || kind == NCCL_OP_ALLTOALL || kind == NCCL_OP_GATHER ? all
                                                                                                 : block;
    }
    if (devices && streams && ranges && local)
        nccl_stream_ops(local, devices, streams, kind == NCCL_OP_SEND ? "ncclSend/ncclRecv" : parts[0]->api, ranges);
    free(devices), free(streams), free(ranges);
}

void nccl_execute(nccl_op **parts, int n)
{
    if (!parts_agree(parts, n)) {
        set_result(parts, n, ncclInvalidUsage);
        for (int i = 0; i < n; i++)
            __atomic_store_n(&parts[i]->comm->async_error, ncclInvalidUsage, __ATOMIC_RELEASE);
        return;
    }
    nccl_op *first = parts[0];
    if (first->kind == NCCL_OP_SPLIT) {
        execute_split(parts, n);
        return;
    }
    size_t elem = nccl_type_size(first->datatype), count = first->count;
    /* enter every local party's device (nested: the runtime's lock is
     * recursive); another process's part is only read */
    int entered = 0;
    for (; entered < n; entered++)
        if (!parts[entered]->remote &&
            nccl_device_begin(parts[entered]->comm->device, parts[entered]->stream, parts[entered]->api))
            break;
    if (entered < n) {
        for (int i = 0; i < entered; i++)
            if (!parts[i]->remote)
                nccl_device_end();
        set_result(parts, n, ncclUnhandledCudaError);
        return;
    }
    int nranks = first->kind == NCCL_OP_SEND ? 1 : n;
    size_t block = count * elem;
    note_stream_ops(parts, n, block);
    size_t staged = first->kind == NCCL_OP_ALLTOALL ? (size_t)nranks * (size_t)nranks : (size_t)nranks;
    unsigned char *staging = block && staged > SIZE_MAX / block ? NULL : malloc(block * staged + 1);
    const void **inputs = malloc((size_t)n * sizeof *inputs);
    unsigned char (*scalars)[8] = calloc((size_t)n, sizeof *scalars);
    ncclResult_t result = staging && inputs && scalars ? ncclSuccess : ncclSystemError;
    if (!result && count) {
        switch (first->kind) {
        case NCCL_OP_ALLREDUCE:
        case NCCL_OP_REDUCE:
            gather_scalars(parts, n, scalars);
            for (int r = 0; r < n; r++)
                inputs[r] = parts[r]->sendbuff;
            nccl_reduce(first->reduce_op, first->datatype, (const unsigned char(*)[8])scalars, staging, inputs, n,
                        count);
            for (int r = 0; r < n; r++)
                if (first->kind == NCCL_OP_ALLREDUCE || r == first->root)
                    deliver(parts[r], staging, block);
            break;
        case NCCL_OP_BROADCAST:
            memcpy(staging, parts[first->root]->sendbuff, block);
            for (int r = 0; r < n; r++)
                deliver(parts[r], staging, block);
            break;
        case NCCL_OP_ALLGATHER:
            for (int r = 0; r < n; r++)
                memcpy(staging + (size_t)r * block, parts[r]->sendbuff, block);
            for (int r = 0; r < n; r++)
                deliver(parts[r], staging, block * (size_t)n);
            break;
        case NCCL_OP_REDUCESCATTER:
            gather_scalars(parts, n, scalars);
            for (int q = 0; q < n; q++) {
                for (int r = 0; r < n; r++)
                    inputs[r] = (const unsigned char *)parts[r]->sendbuff + (size_t)q * block;
                nccl_reduce(first->reduce_op, first->datatype, (const unsigned char(*)[8])scalars,
                            staging + (size_t)q * block, inputs, n, count);
            }
            for (int q = 0; q < n; q++)
                deliver(parts[q], staging + (size_t)q * block, block);
            break;
        case NCCL_OP_ALLTOALL: /* block q of rank r's sendbuff goes to block r of rank q's recvbuff */
            for (int q = 0; q < n; q++)
                for (int r = 0; r < n; r++)
                    memcpy(staging + ((size_t)q * (size_t)n + (size_t)r) * block,
                           (const unsigned char *)parts[r]->sendbuff + (size_t)q * block, block);
            for (int q = 0; q < n; q++)
                deliver(parts[q], staging + (size_t)q * (size_t)n * block, block * (size_t)n);
            break;
        case NCCL_OP_GATHER: {
            nccl_op *root = parts[first->root];
            for (int r = 0; r < n; r++)
                memcpy(staging + (size_t)r * block, parts[r]->sendbuff, block);
            deliver(root, staging, block * (size_t)n);
            break;
        }
        case NCCL_OP_SCATTER:
            memcpy(staging, parts[first->root]->sendbuff, block * (size_t)n);
            for (int r = 0; r < n; r++)
                deliver(parts[r], staging + (size_t)r * block, block);
            break;
        case NCCL_OP_SEND: /* parts[0] sends to parts[1] */
            memcpy(staging, parts[0]->sendbuff, block);
            deliver(parts[1], staging, block);
            break;
        default:
            result = ncclInternalError;
        }
    }
    free(staging), free(inputs), free(scalars);
    for (int i = 0; i < n; i++)
        if (!parts[i]->remote)
            nccl_device_end();
    set_result(parts, n, result);
}
