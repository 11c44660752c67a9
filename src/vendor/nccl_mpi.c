/* kemu's libnccl: the transport between processes, over Open MPI
 * (docs/multigpu.md, "Ranks across processes and machines"). Under
 * `mpirun -n R kemu exec --devices D ./app`, each process emulates its own
 * devices and holds the ranks the program gives them; an id made by
 * ncclGetUniqueId names the MPI rank of the process that made it.
 *
 * - Joining: a process joining a rank sends (rank, nranks) to the id's
 *   maker, which collects them; once every rank has joined, it sends each
 *   process the map of ranks to processes. The maker must hold a rank
 *   (as in the usual bootstrap: rank 0 makes the id and broadcasts it).
 * - A collective: once all of a process's ranks have posted their parts,
 *   the process sends its parts (the call and the bytes it reads) to every
 *   other process of the communicator; once it holds every process's
 *   parts, it runs the operation with nccl_execute over all ranks' inputs,
 *   in the same rank order as in one process, and keeps its own ranks'
 *   outputs. Every process computes the same bits.
 * - Send/recv: the sender's process sends the bytes to the receiver's.
 * - ncclCommSplit: every process knows every rank's colour and key after
 *   the exchange, and makes the new communicators of its ranks; their
 *   ids derive from the parent's, so no new joining is needed.
 *
 * All MPI traffic is on MPI_COMM_WORLD with one tag (KEMU_TAG, below) and
 * goes through one lock, taken by whichever thread posts or waits; a
 * waiting thread polls (MPI_Iprobe) and files what arrives in a mailbox,
 * so no wait depends on another wait's order. MPI is initialized here
 * (MPI_THREAD_MULTIPLE) when the program has not done so itself and
 * mpirun started it with more than one process; then it is finalized at
 * exit. */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vendor/nccl_internal.h"

#if !KEMU_NCCL_MPI

int nccl_mpi_active(int *world)
{
    (void)world;
    return 0;
}

#else

#include <mpi.h>

#define WIRE_MAGIC 0x6b6d7069u /* "kmpi" */
/* the tag of kemu's messages (limited to MPI_TAG_UB) */
#define KEMU_TAG 0x6b656d75

enum { MSG_JOIN = 1, MSG_MAP, MSG_PARTS };

/* One rank's part as it travels (MSG_PARTS), or one rank's entry (JOIN, MAP). */
typedef struct wire_part {
    int32_t rank, kind, datatype, op, reduce_op, root, color, key, device, nranks, world, error;
    uint64_t count, bytes; /* bytes: of its payload, which follows all the parts (each padded to 16) */
    unsigned char scalar[8];
    char api[40];
} wire_part;

typedef struct wire_header {
    uint32_t magic, type;
    uint64_t uid[4];
    int64_t channel;
    uint64_t seq;
    uint32_t nparts;
    int32_t error;
} wire_header;

#define ALIGN16(x) (((x) + 15) & ~(size_t)15)
#define WIRE_PARTS_END(n) ALIGN16(sizeof(wire_header) + (size_t)(n) * sizeof(wire_part))

/* A message received and not yet taken. */
typedef struct mail {
    int source;
    size_t size;
    unsigned char *data; /* wire_header first */
    struct mail *next;
} mail;

typedef struct mpi_clique mpi_clique;

/* An operation being assembled: its parts, local and received. */
typedef struct mslot {
    int64_t channel; /* -1: the collectives; else sender * nranks + receiver */
    uint64_t seq;
    int nparties;
    nccl_op **parts;      /* by rank (collectives), or [send, recv] */
    int local_posted;
    int remote_got;       /* collectives: messages of other processes taken */
    int sent, running, executed, sends_pending;
    ncclResult_t error;   /* a part could not be read (its device's error) */
    nccl_op *remote_ops;  /* the received parts */
    mail *mails;          /* holding their bytes */
    struct mslot *next;
} mslot;

struct mpi_clique {
    uint64_t uid[4];
    int nranks, maker;       /* maker: the MPI rank that made the id */
    int *owner;              /* MPI rank of each rank; -1: not known yet */
    struct ncclComm **comms; /* this process's ranks */
    struct ncclComm *shadows; /* stand-ins for the other processes' ranks */
    int nlocal, complete;
    ncclResult_t failed;
    int *procs, nprocs;      /* the MPI ranks taking part, ascending */
    int *joiners, njoiners;  /* the maker: the other processes that joined */
    uint64_t *coll_posted, *sends, *recvs;
    mslot *slots;
    struct mpi_clique *next;
};

/* A message being sent; its buffer is shared by the copies to each process. */
typedef struct outgoing {
    MPI_Request request;
    unsigned char *data;
    int *refs;
    mslot *slot; /* whose sends_pending counts it; NULL for JOIN and MAP */
    struct outgoing *next;
} outgoing;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static int usable;        /* MPI is up with more than one process */
static int initialized_here;
static int world_rank, world_size, tag;
static mail *mailbox;
static outgoing *sending;
static mpi_clique *registry;

/* ---- MPI itself ------------------------------------------------------------- */

static void finalize_at_exit(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
        return;
    pthread_mutex_lock(&lock);
    for (outgoing *o = sending; o; o = o->next)
        MPI_Wait(&o->request, MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&lock);
    MPI_Finalize();
}

static void setup(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized)
        return;
    if (!initialized) {
        /* only under mpirun with several processes (Open MPI's variable) */
        const char *size = getenv("OMPI_COMM_WORLD_SIZE");
        if (!size || atoi(size) <= 1)
            return;
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return;
        initialized_here = 1;
        atexit(finalize_at_exit);
    }
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    void *ub = NULL;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
    tag = found && ub && *(int *)ub < KEMU_TAG ? *(int *)ub : KEMU_TAG;
    usable = world_size > 1;
}

int nccl_mpi_active(int *world)
{
    pthread_once(&setup_once, setup);
    if (usable && world)
        *world = world_rank;
    return usable;
}

/* 0 while MPI can be used (the program has not finalized it). */
static int mpi_gone(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    return finalized;
}

/* Sends data (size bytes, malloc'd; freed when every copy went) to the
 * processes dest[0..ndest-1]. Locked. */
static void send_to(const int *dest, int ndest, unsigned char *data, size_t size, mslot *slot)
{
    int *refs = malloc(sizeof *refs);
    if (!refs || !ndest) {
        free(refs);
        free(data);
        return;
    }
    *refs = ndest;
    for (int i = 0; i < ndest; i++) {
        outgoing *o = calloc(1, sizeof *o);
        if (!o) { /* keep going without the bookkeeping: the copy still goes */
            MPI_Send(data, (int)size, MPI_BYTE, dest[i], tag, MPI_COMM_WORLD);
            if (--*refs == 0)
                free(data), free(refs);
            continue;
        }
        o->data = data;
        o->refs = refs;
        o->slot = slot;
        if (slot)
            slot->sends_pending++;
        MPI_Isend(data, (int)size, MPI_BYTE, dest[i], tag, MPI_COMM_WORLD, &o->request);
        o->next = sending;
        sending = o;
    }
}

/* Files every message that has arrived; retires the sends that completed. Locked. */
static void pump(void)
{
    for (;;) {
        int flag = 0, size = 0;
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &status);
        if (!flag)
            break;
        MPI_Get_count(&status, MPI_BYTE, &size);
        mail *m = calloc(1, sizeof *m);
        unsigned char *data = malloc(size > 0 ? (size_t)size : 1);
        MPI_Recv(data ? data : (unsigned char[1]){0}, data ? size : 0, MPI_BYTE, status.MPI_SOURCE, tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const wire_header *h = (const wire_header *)data;
        int sound = m && data && (size_t)size >= sizeof *h && h->magic == WIRE_MAGIC &&
                    h->nparts <= (1u << 24) && WIRE_PARTS_END(h->nparts) <= (size_t)size;
        if (sound) { /* the payloads fit */
            const wire_part *p = (const wire_part *)(data + sizeof *h);
            size_t at = WIRE_PARTS_END(h->nparts);
            for (uint32_t i = 0; i < h->nparts && sound; i++) {
                sound = p[i].bytes <= (size_t)size - at;
                at += sound ? ALIGN16(p[i].bytes) : 0;
                sound = sound && at <= (size_t)size + 15;
            }
        }
        if (!sound) {
            fprintf(stderr, "kemu: NCCL over MPI: dropped a malformed message of %d bytes from MPI rank %d\n", size,
                    status.MPI_SOURCE);
            free(m), free(data);
            continue;
        }
        m->source = status.MPI_SOURCE;
        m->size = (size_t)size;
        m->data = data;
        mail **tail = &mailbox; /* in arrival order */
        while (*tail)
            tail = &(*tail)->next;
        *tail = m;
    }
    for (outgoing **o = &sending; *o;) {
        int done = 0;
        MPI_Test(&(*o)->request, &done, MPI_STATUS_IGNORE);
        if (!done) {
            o = &(*o)->next;
            continue;
        }
        outgoing *gone = *o;
        *o = gone->next;
        if (gone->slot)
            gone->slot->sends_pending--;
        if (--*gone->refs == 0)
            free(gone->data), free(gone->refs);
        free(gone);
    }
}

/* Takes the first message of type for uid (and channel, seq for parts). Locked. */
static mail *take(int type, const uint64_t *uid, int64_t channel, uint64_t seq)
{
    for (mail **m = &mailbox; *m; m = &(*m)->next) {
        const wire_header *h = (const wire_header *)(*m)->data;
        if (h->type == (uint32_t)type && !memcmp(h->uid, uid, sizeof h->uid) &&
            (type != MSG_PARTS || (h->channel == channel && h->seq == seq))) {
            mail *found = *m;
            *m = found->next;
            found->next = NULL;
            return found;
        }
    }
    return NULL;
}

static void mail_free(mail *m)
{
    while (m) {
        mail *next = m->next;
        free(m->data);
        free(m);
        m = next;
    }
}

/* A message of type with nparts parts and room for payload bytes (zeroed). */
static unsigned char *message_new(int type, const uint64_t *uid, int64_t channel, uint64_t seq, int nparts,
                                  size_t payload, size_t *size)
{
    *size = WIRE_PARTS_END(nparts) + payload;
    unsigned char *data = calloc(1, *size);
    if (!data)
        return NULL;
    wire_header *h = (wire_header *)data;
    h->magic = WIRE_MAGIC;
    h->type = (uint32_t)type;
    memcpy(h->uid, uid, sizeof h->uid);
    h->channel = channel;
    h->seq = seq;
    h->nparts = (uint32_t)nparts;
    return data;
}

/* ---- cliques ------------------------------------------------------------------ */

static mpi_clique *clique_find(const uint64_t *uid)
{
    for (mpi_clique *c = registry; c; c = c->next)
        if (!memcmp(c->uid, uid, sizeof c->uid))
            return c;
    return NULL;
}

static mpi_clique *clique_new(const uint64_t *uid, int nranks, int maker)
{
    mpi_clique *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    memcpy(c->uid, uid, sizeof c->uid);
    c->nranks = nranks;
    c->maker = maker;
    size_t n = (size_t)nranks;
    c->owner = malloc(n * sizeof *c->owner);
    c->comms = calloc(n, sizeof *c->comms);
    c->shadows = calloc(n, sizeof *c->shadows);
    c->coll_posted = calloc(n, sizeof *c->coll_posted);
    c->sends = calloc(n * n, sizeof *c->sends);
    c->recvs = calloc(n * n, sizeof *c->recvs);
    c->procs = malloc(n * sizeof *c->procs);
    c->joiners = malloc(n * sizeof *c->joiners);
    if (!c->owner || !c->comms || !c->shadows || !c->coll_posted || !c->sends || !c->recvs || !c->procs ||
        !c->joiners) {
        free(c->owner), free(c->comms), free(c->shadows), free(c->coll_posted), free(c->sends), free(c->recvs);
        free(c->procs), free(c->joiners), free(c);
        return NULL;
    }
    for (int r = 0; r < nranks; r++)
        c->owner[r] = -1;
    c->next = registry;
    registry = c;
    return c;
}

static void slot_free(mslot *s)
{
    mail_free(s->mails);
    free(s->remote_ops);
    free(s->parts);
    free(s);
}

static void clique_free(mpi_clique *c)
{
    for (mpi_clique **p = &registry; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    while (c->slots) {
        mslot *s = c->slots;
        c->slots = s->next;
        for (outgoing *o = sending; o; o = o->next)
            if (o->slot == s)
                o->slot = NULL;
        slot_free(s);
    }
    free(c->owner), free(c->comms), free(c->shadows), free(c->coll_posted), free(c->sends), free(c->recvs);
    free(c->procs), free(c->joiners), free(c);
}

/* The map is known: the processes taking part, and stand-ins for the
 * ranks of the others. */
static void clique_complete(mpi_clique *c)
{
    c->nprocs = 0;
    for (int r = 0; r < c->nranks; r++) {
        int w = c->owner[r], at = 0;
        while (at < c->nprocs && c->procs[at] < w)
            at++;
        if (at < c->nprocs && c->procs[at] == w)
            continue;
        memmove(c->procs + at + 1, c->procs + at, (size_t)(c->nprocs - at) * sizeof *c->procs);
        c->procs[at] = w;
        c->nprocs++;
    }
    for (int r = 0; r < c->nranks; r++) {
        c->shadows[r].rank = r;
        c->shadows[r].nranks = c->nranks;
        c->shadows[r].device = -1;
        c->shadows[r].transport = &nccl_transport_mpi;
    }
    c->complete = 1;
}

/* The other processes of a complete clique, into dest; how many. */
static int other_procs(const mpi_clique *c, int *dest)
{
    int n = 0;
    for (int i = 0; i < c->nprocs; i++)
        if (c->procs[i] != world_rank)
            dest[n++] = c->procs[i];
    return n;
}

/* Sends the map (or, with c->failed, that there is none) to dest[0..n-1]. Locked. */
static void send_map(mpi_clique *c, const int *dest, int n)
{
    size_t size;
    unsigned char *data = message_new(MSG_MAP, c->uid, 0, 0, c->nranks, 0, &size);
    if (!data)
        return;
    ((wire_header *)data)->error = c->failed;
    wire_part *p = (wire_part *)(data + sizeof(wire_header));
    for (int r = 0; r < c->nranks; r++) {
        p[r].rank = r;
        p[r].world = c->owner[r];
    }
    send_to(dest, n, data, size, NULL);
}

/* Moves the clique's map along: its maker collects the joins and, once
 * every rank has joined (or a join was wrong), answers every process that
 * joined with the map (or the failure); a join after that gets the
 * failure at once. The others wait for the map. Locked. */
static void clique_progress(mpi_clique *c)
{
    mail *m;
    if (c->maker == world_rank) {
        int answered = c->complete || c->failed;
        while ((m = take(MSG_JOIN, c->uid, 0, 0))) {
            const wire_part *p = (const wire_part *)(m->data + sizeof(wire_header));
            int source = m->source, known = 0;
            for (int i = 0; i < c->njoiners && !known; i++)
                known = c->joiners[i] == source;
            if (!known && c->njoiners < c->nranks)
                c->joiners[c->njoiners++] = source;
            if (answered) {
                if (!c->failed)
                    nccl_message(NULL, "ncclCommInitRank", "MPI rank %d joined rank %d after all %d ranks had joined",
                                 source, p->rank, c->nranks);
                ncclResult_t was = c->failed;
                c->failed = ncclInvalidUsage;
                send_map(c, &source, 1);
                c->failed = was;
            } else if (p->nranks != c->nranks) {
                nccl_message(NULL, "ncclCommInitRank",
                             "MPI rank %d joined rank %d with nranks %d; the ranks that joined this id first said %d",
                             source, p->rank, p->nranks, c->nranks);
                c->failed = ncclInvalidUsage;
            } else if (p->rank < 0 || p->rank >= c->nranks || c->owner[p->rank] >= 0) {
                nccl_message(NULL, "ncclCommInitRank", "MPI ranks %d and %d both joined rank %d of this ncclUniqueId",
                             p->rank >= 0 && p->rank < c->nranks ? c->owner[p->rank] : -1, source, p->rank);
                c->failed = ncclInvalidUsage;
            } else {
                c->owner[p->rank] = source;
            }
            mail_free(m);
        }
        if (answered)
            return;
        int all = 1;
        for (int r = 0; r < c->nranks && all; r++)
            all = c->owner[r] >= 0;
        if (!all && !c->failed)
            return;
        send_map(c, c->joiners, c->njoiners);
        if (!c->failed)
            clique_complete(c);
        return;
    }
    if (c->complete || c->failed || !(m = take(MSG_MAP, c->uid, 0, 0)))
        return;
    const wire_header *h = (const wire_header *)m->data;
    const wire_part *p = (const wire_part *)(m->data + sizeof *h);
    if (h->error || (int)h->nparts != c->nranks) {
        nccl_message(NULL, "ncclCommInitRank", "the communicator could not be made (see MPI rank %d's message)",
                     c->maker);
        c->failed = h->error ? h->error : ncclInvalidUsage;
    } else {
        for (int r = 0; r < c->nranks; r++)
            c->owner[r] = p[r].world;
        clique_complete(c);
    }
    mail_free(m);
}

static ncclResult_t mpi_join(const ncclUniqueId *id, int nranks, int rank, struct ncclComm *comm, nccl_clique **out)
{
    uint64_t uid[4];
    int32_t maker;
    memcpy(uid, id->internal + 16, sizeof uid);
    memcpy(&maker, id->internal + 44, sizeof maker);
    if (!nccl_mpi_active(NULL) || mpi_gone()) {
        nccl_message(comm, "ncclCommInitRank",
                     "this ncclUniqueId is for ranks across processes (Open MPI), and MPI is not running here: run "
                     "the program under mpirun");
        return ncclInvalidUsage;
    }
    if (maker < 0 || maker >= world_size) {
        nccl_message(comm, "ncclCommInitRank", "this ncclUniqueId names MPI rank %d, not one of the %d", maker,
                     world_size);
        return ncclInvalidArgument;
    }
    pthread_mutex_lock(&lock);
    mpi_clique *c = clique_find(uid);
    ncclResult_t result = ncclSuccess;
    if (c && c->nranks != nranks) {
        nccl_message(comm, "ncclCommInitRank", "nranks %d differs from the %d of the ranks that joined this id first",
                     nranks, c->nranks);
        result = ncclInvalidUsage;
    } else if (!c && !(c = clique_new(uid, nranks, maker))) {
        result = ncclSystemError;
    }
    if (!result && c->comms[rank]) {
        nccl_message(comm, "ncclCommInitRank", "rank %d of this ncclUniqueId already has a communicator", rank);
        result = ncclInvalidUsage;
    }
    for (int r = 0; r < nranks && !result; r++)
        if (c->comms[r] && c->comms[r]->device == comm->device) {
            nccl_message(comm, "ncclCommInitRank", "ranks %d and %d both use CUDA device %d (one rank per device)", r,
                         rank, comm->device);
            result = ncclInvalidUsage;
        }
    if (!result) {
        c->comms[rank] = comm;
        c->nlocal++;
        c->owner[rank] = world_rank;
        if (maker != world_rank) { /* tell the maker */
            size_t size;
            unsigned char *data = message_new(MSG_JOIN, uid, 0, 0, 1, 0, &size);
            if (data) {
                wire_part *p = (wire_part *)(data + sizeof(wire_header));
                p->rank = rank;
                p->nranks = nranks;
                p->world = world_rank;
                send_to(&maker, 1, data, size, NULL);
            } else {
                result = ncclSystemError;
            }
        }
        *out = (nccl_clique *)c;
    } else if (c && !c->nlocal) {
        clique_free(c);
    }
    pthread_mutex_unlock(&lock);
    return result;
}

static ncclResult_t mpi_make(struct ncclComm **comms, int n, nccl_clique **out)
{
    (void)comms, (void)n, (void)out;
    return ncclInternalError; /* ncclCommInitAll uses the in-process transport; splits are made here */
}

static void mpi_leave(nccl_clique *clique, int rank)
{
    mpi_clique *c = (mpi_clique *)clique;
    pthread_mutex_lock(&lock);
    c->comms[rank] = NULL;
    if (--c->nlocal == 0)
        clique_free(c);
    pthread_mutex_unlock(&lock);
}

/* ---- operations ------------------------------------------------------------------ */

static mslot *slot_get(mpi_clique *c, int64_t channel, uint64_t seq)
{
    for (mslot *s = c->slots; s; s = s->next)
        if (s->channel == channel && s->seq == seq)
            return s;
    mslot *s = calloc(1, sizeof *s);
    int nparties = channel < 0 ? c->nranks : 2;
    if (!s || !(s->parts = calloc((size_t)nparties, sizeof *s->parts))) {
        free(s);
        return NULL;
    }
    s->channel = channel;
    s->seq = seq;
    s->nparties = nparties;
    mslot **tail = &c->slots; /* in posting order */
    while (*tail)
        tail = &(*tail)->next;
    *tail = s;
    return s;
}

static void slot_remove(mpi_clique *c, mslot *s)
{
    for (mslot **p = &c->slots; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    slot_free(s);
}

static void mpi_post(nccl_op *op)
{
    struct ncclComm *comm = op->comm;
    mpi_clique *c = (mpi_clique *)comm->clique;
    int n = c->nranks, index;
    int64_t channel;
    uint64_t seq;
    pthread_mutex_lock(&lock);
    comm->poster = pthread_self();
    comm->has_poster = 1;
    if (op->kind == NCCL_OP_SEND) {
        channel = (int64_t)comm->rank * n + op->root;
        seq = c->sends[channel]++;
        index = 0;
    } else if (op->kind == NCCL_OP_RECV) {
        channel = (int64_t)op->root * n + comm->rank;
        seq = c->recvs[channel]++;
        index = 1;
    } else {
        channel = -1;
        seq = c->coll_posted[comm->rank]++;
        index = comm->rank;
    }
    mslot *s = slot_get(c, channel, seq);
    if (!s) {
        op->result = ncclSystemError;
        op->done = 1;
    } else {
        s->parts[index] = op;
        s->local_posted++;
        op->slot = s;
    }
    pthread_mutex_unlock(&lock);
}

/* The bytes a rank's part carries to the other processes. */
static size_t payload_bytes(const nccl_op *op, int nranks)
{
    size_t block = op->count * nccl_type_size(op->datatype);
    int root = op->comm->rank == op->root;
    switch (op->kind) {
    case NCCL_OP_ALLREDUCE:
    case NCCL_OP_REDUCE:
    case NCCL_OP_ALLGATHER:
    case NCCL_OP_GATHER:
    case NCCL_OP_SEND:
        return block;
    case NCCL_OP_REDUCESCATTER:
    case NCCL_OP_ALLTOALL:
        return block * (size_t)nranks;
    case NCCL_OP_BROADCAST:
        return root ? block : 0;
    case NCCL_OP_SCATTER:
        return root ? block * (size_t)nranks : 0;
    default:
        return 0;
    }
}

/* Sends the local parts ops[0..k-1] of (channel, seq) to dest[0..ndest-1]:
 * each call, and the bytes it reads, read now in its device (the device's
 * error, if any, travels instead). Locked. */
static void send_parts(mpi_clique *c, mslot *s, nccl_op **ops, int k, const int *dest, int ndest)
{
    size_t payload = 0;
    for (int i = 0; i < k; i++)
        payload += ALIGN16(payload_bytes(ops[i], c->nranks));
    size_t size;
    unsigned char *data = message_new(MSG_PARTS, c->uid, s->channel, s->seq, k, payload, &size);
    if (!data) {
        s->error = ncclSystemError;
        return;
    }
    wire_part *p = (wire_part *)(data + sizeof(wire_header));
    size_t at = WIRE_PARTS_END(k);
    for (int i = 0; i < k; i++) {
        nccl_op *op = ops[i];
        p[i].rank = op->comm->rank;
        p[i].kind = op->kind;
        p[i].datatype = op->datatype;
        p[i].op = op->op;
        p[i].reduce_op = op->reduce_op;
        p[i].root = op->root;
        p[i].color = op->color;
        p[i].key = op->key;
        p[i].device = op->comm->device;
        p[i].count = op->count;
        p[i].bytes = payload_bytes(op, c->nranks);
        memcpy(p[i].scalar, op->scalar, sizeof p[i].scalar);
        snprintf(p[i].api, sizeof p[i].api, "%s", op->api);
        if (p[i].bytes || op->device_scalar) {
            if (nccl_device_begin(op->comm->device, op->stream, op->api)) {
                p[i].error = ncclUnhandledCudaError;
                s->error = ncclUnhandledCudaError;
            } else {
                if (op->reduce_op == NCCL_REDUCTION_PREMULSUM && op->device_scalar)
                    memcpy(p[i].scalar, op->device_scalar, nccl_type_size(op->datatype));
                if (p[i].bytes)
                    memcpy(data + at, op->sendbuff, p[i].bytes);
                nccl_device_end();
            }
        }
        at += ALIGN16(p[i].bytes);
    }
    send_to(dest, ndest, data, size, s);
}

/* Turns a received message's parts into parts of s. 0: they fit. Locked. */
static int absorb(mpi_clique *c, mslot *s, mail *m)
{
    const wire_header *h = (const wire_header *)m->data;
    const wire_part *p = (const wire_part *)(m->data + sizeof *h);
    nccl_op *ops = calloc(h->nparts ? h->nparts : 1, sizeof *ops);
    if (!ops)
        return -1;
    size_t at = WIRE_PARTS_END(h->nparts);
    for (uint32_t i = 0; i < h->nparts; i++) {
        int r = p[i].rank;
        int index = s->channel < 0 ? r : 0;
        if (r < 0 || r >= c->nranks || c->owner[r] != m->source || s->parts[index] ||
            (s->channel >= 0 && r != s->channel / c->nranks)) {
            free(ops);
            return -1;
        }
        nccl_op *o = &ops[i];
        o->remote = 1;
        o->kind = p[i].kind;
        o->api = p[i].api;
        ((char *)p[i].api)[sizeof p[i].api - 1] = 0;
        o->comm = &c->shadows[r];
        c->shadows[r].device = p[i].device;
        o->sendbuff = p[i].bytes ? m->data + at : NULL;
        o->count = p[i].count;
        o->datatype = p[i].datatype;
        o->op = p[i].op;
        o->reduce_op = p[i].reduce_op;
        memcpy(o->scalar, p[i].scalar, sizeof o->scalar);
        o->root = p[i].root;
        o->color = p[i].color;
        o->key = p[i].key;
        if (p[i].error)
            s->error = p[i].error;
        /* the bytes the call needs must be there (the calls' agreement is
         * checked when it runs; a short payload means they disagree) */
        if (p[i].bytes < payload_bytes(o, c->nranks) && !p[i].error)
            s->error = ncclInvalidUsage;
        at += ALIGN16(p[i].bytes);
    }
    for (uint32_t i = 0; i < h->nparts; i++)
        s->parts[s->channel < 0 ? p[i].rank : 0] = &ops[i];
    /* keep the message (the parts point into it) and the parts */
    m->next = s->mails;
    s->mails = m;
    if (s->remote_ops) { /* a second message: chain the arrays through a mail of their own */
        mail *keep = calloc(1, sizeof *keep);
        if (!keep)
            return -1;
        keep->data = (unsigned char *)s->remote_ops;
        keep->next = s->mails;
        s->mails = keep;
    }
    s->remote_ops = ops;
    return 0;
}

/* Local parts' results; they are done once their sends went too. */
static void slot_result(mslot *s, ncclResult_t result)
{
    for (int i = 0; i < s->nparties; i++)
        if (s->parts[i] && !s->parts[i]->remote)
            s->parts[i]->result = result;
}

/* ncclCommSplit across processes: each process makes its ranks' new
 * communicators; a new clique's id derives from the parent's, the split's
 * number and the colour, so every process names it alike. Locked. */
static void split_here(mpi_clique *c, mslot *s)
{
    int n = c->nranks;
    int *order = malloc((size_t)n * sizeof *order);
    slot_result(s, order ? ncclSuccess : ncclSystemError);
    for (int r = 0; order && r < n; r++) {
        nccl_op *part = s->parts[r];
        if (part->remote)
            continue;
        if (part->color == NCCL_SPLIT_NOCOLOR) {
            *part->newcomm = NULL;
            continue;
        }
        int m = nccl_split_members(s->parts, n, r, order), index = 0;
        while (order[index] != r)
            index++;
        uint64_t uid[4];
        for (int i = 0; i < 4; i++) { /* a mix of the parent's id, the split's number and the colour */
            uint64_t x = c->uid[i] ^ (s->seq + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)part->color << i;
            x ^= x >> 31;
            x *= 0xbf58476d1ce4e5b9ull;
            uid[i] = x ^ (x >> 29);
        }
        mpi_clique *made = clique_find(uid);
        if (!made && (made = clique_new(uid, m, c->maker))) {
            for (int i = 0; i < m; i++)
                made->owner[i] = c->owner[order[i]];
            clique_complete(made);
        }
        struct ncclComm *comm =
            made ? nccl_comm_new(index, m, part->comm->device, part->config ? part->config : &part->comm->config)
                 : NULL;
        if (!comm) {
            part->result = ncclSystemError;
            *part->newcomm = NULL;
            if (made && !made->nlocal)
                clique_free(made);
            continue;
        }
        comm->transport = &nccl_transport_mpi;
        comm->clique = (nccl_clique *)made;
        comm->poster = part->comm->poster;
        comm->has_poster = part->comm->has_poster;
        made->comms[index] = comm;
        made->nlocal++;
        *part->newcomm = comm;
    }
    free(order);
}

/* Moves slot s along (sends, receives); 1 when it is ready to run. Locked. */
static int slot_progress(mpi_clique *c, mslot *s)
{
    int n = c->nranks;
    mail *m;
    int *dest = malloc((size_t)(c->nprocs ? c->nprocs : 1) * sizeof *dest);
    if (!dest)
        return 0;
    int ready = 0;
    if (s->channel < 0) {
        if (!s->sent && s->local_posted == c->nlocal) {
            nccl_op **mine = malloc((size_t)n * sizeof *mine);
            int k = 0;
            for (int r = 0; mine && r < n; r++)
                if (s->parts[r] && !s->parts[r]->remote)
                    mine[k++] = s->parts[r];
            int ndest = other_procs(c, dest);
            if (mine && ndest)
                send_parts(c, s, mine, k, dest, ndest);
            free(mine);
            s->sent = 1;
        }
        while ((m = take(MSG_PARTS, c->uid, -1, s->seq))) {
            if (absorb(c, s, m)) {
                fprintf(stderr, "kemu: NCCL over MPI: a message from MPI rank %d does not fit collective %llu\n",
                        m->source, (unsigned long long)s->seq);
                mail_free(m);
                s->error = ncclInternalError;
            }
            s->remote_got++;
        }
        ready = s->sent && s->remote_got >= c->nprocs - 1;
    } else {
        int sender = (int)(s->channel / n), receiver = (int)(s->channel % n);
        int sender_here = c->owner[sender] == world_rank, receiver_here = c->owner[receiver] == world_rank;
        if (sender_here && !receiver_here) {
            if (s->parts[0] && !s->sent) {
                send_parts(c, s, &s->parts[0], 1, &c->owner[receiver], 1);
                s->sent = 1;
                s->executed = 1; /* nothing runs here; done once the bytes went */
                slot_result(s, s->error);
            }
        } else if (!sender_here && receiver_here) {
            if (!s->parts[0] && (m = take(MSG_PARTS, c->uid, s->channel, s->seq)) && absorb(c, s, m)) {
                mail_free(m);
                s->error = ncclInternalError;
            }
            ready = s->parts[0] && s->parts[1];
        } else {
            ready = s->parts[0] && s->parts[1];
        }
    }
    free(dest);
    return ready;
}

/* Receives, sends, and finds an operation to run (marked running), or
 * finishes the ones that ran. Locked. */
static mslot *advance(mpi_clique **in)
{
    pump();
    for (mpi_clique *c = registry; c; c = c->next) {
        clique_progress(c);
        if (c->failed) {
            for (mslot *s = c->slots; s; s = s->next)
                for (int i = 0; i < s->nparties; i++)
                    if (s->parts[i] && !s->parts[i]->remote) {
                        s->parts[i]->result = c->failed;
                        s->parts[i]->done = 1;
                        s->parts[i]->slot = NULL;
                    }
            while (c->slots)
                slot_remove(c, c->slots);
            continue;
        }
        if (!c->complete)
            continue;
        for (mslot *s = c->slots, *next; s; s = next) {
            next = s->next;
            if (s->running)
                continue;
            if (s->executed) {
                if (!s->sends_pending) {
                    for (int i = 0; i < s->nparties; i++)
                        if (s->parts[i] && !s->parts[i]->remote) {
                            s->parts[i]->done = 1;
                            s->parts[i]->slot = NULL;
                        }
                    slot_remove(c, s);
                }
                continue;
            }
            if (!slot_progress(c, s))
                continue;
            if (s->error) {
                slot_result(s, s->error);
                s->executed = 1;
            } else if (s->parts[s->channel < 0 ? 0 : 1]->kind == NCCL_OP_SPLIT) {
                split_here(c, s);
                s->executed = 1;
            } else {
                s->running = 1;
                *in = c;
                return s;
            }
        }
    }
    return NULL;
}

/* How long a wait for a rank, whose communicator this thread made and no
 * thread has posted for yet, may last before it is taken for a
 * single-threaded program missing its ncclGroupStart/End. */
#define SUSPECT_NS 10000000000ll

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

static ncclResult_t mpi_wait(nccl_op *op)
{
    struct ncclComm *comm = op->comm;
    mpi_clique *c = (mpi_clique *)comm->clique;
    pthread_mutex_lock(&lock);
    long long since = now_ns();
    unsigned idle = 0;
    while (!op->done) {
        if (mpi_gone()) {
            nccl_message(comm, op->api, "MPI was finalized: NCCL traffic between processes cannot go on");
            op->result = ncclSystemError;
            break;
        }
        mpi_clique *in = NULL;
        mslot *run = advance(&in);
        if (run) {
            pthread_mutex_unlock(&lock);
            nccl_execute(run->parts, run->nparties);
            pthread_mutex_lock(&lock);
            run->running = 0;
            run->executed = 1;
            idle = 0;
            continue;
        }
        if (op->done)
            break;
        /* a missing part that this thread posts for never comes */
        mslot *s = op->slot;
        int missing = -1;
        for (int i = 0; s && c->complete && !s->sent && i < s->nparties && missing < 0; i++) {
            if (s->parts[i])
                continue;
            int rank = s->channel < 0 ? i : i == 0 ? (int)(s->channel / c->nranks) : (int)(s->channel % c->nranks);
            struct ncclComm *peer = c->comms[rank];
            if (peer && peer->has_poster && pthread_equal(peer->poster, pthread_self()) &&
                (peer->has_poster == 1 || now_ns() - since > SUSPECT_NS))
                missing = rank;
        }
        if (missing >= 0) {
            uint64_t *counter = s->channel < 0 ? &c->coll_posted[comm->rank]
                                : op->kind == NCCL_OP_SEND ? &c->sends[s->channel] : &c->recvs[s->channel];
            if (*counter == s->seq + 1)
                --*counter;
            else
                __atomic_store_n(&comm->async_error, ncclInvalidUsage, __ATOMIC_RELEASE);
            for (int i = 0; i < s->nparties; i++)
                if (s->parts[i] == op)
                    s->parts[i] = NULL;
            if (--s->local_posted == 0 && !s->mails)
                slot_remove(c, s);
            op->slot = NULL;
            pthread_mutex_unlock(&lock);
            nccl_message(comm, op->api,
                         "rank %d waits for rank %d, whose calls come from this same thread: it would wait forever; "
                         "call them for all ranks inside ncclGroupStart/ncclGroupEnd",
                         comm->rank, missing);
            return ncclInvalidUsage;
        }
        /* while bytes of this process's are on their way, MPI moves them
         * only when polled: poll on (up to a millisecond, keeping the lock) */
        if (sending) {
            long long until = now_ns() + 1000000;
            while (sending && now_ns() < until)
                pump();
            idle = 0;
        }
        pthread_mutex_unlock(&lock);
        if (idle++ < 64) {
            sched_yield();
        } else {
            struct timespec pause = {0, idle < 1000 ? 20000 : 200000};
            nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&lock);
    }
    ncclResult_t result = op->result;
    pthread_mutex_unlock(&lock);
    return result;
}

const nccl_transport nccl_transport_mpi = {"Open MPI", mpi_join, mpi_make, mpi_leave, mpi_post, mpi_wait};

#endif
