/* kemu's libnccl: the transport between the ranks of one process (one rank
 * per emulated device, each driven by its own host thread or all by one
 * thread in a group), and the execution of a complete operation over
 * every rank's buffers. Device memory is host memory in kemu, so the rank
 * that posts last reads every rank's input and writes every rank's output
 * itself. A transport across processes would replace this file's first
 * half (join, post, wait), keeping nccl_execute's order per element. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vendor/nccl_internal.h"

/* One operation being assembled: the parts posted so far. */
typedef struct nccl_slot {
    int channel;       /* -1: the collectives; else sender * nranks + receiver */
    uint64_t seq;      /* its number on that channel */
    int nparties, posted, running;
    nccl_op *parts[]; /* by rank (collectives), or [send, recv] */
} nccl_slot;

struct nccl_clique {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* an operation ran */
    int has_id;
    ncclUniqueId id;
    int nranks, joined;
    struct ncclComm **comms; /* by rank; NULL: not joined yet or left */
    uint64_t *coll_posted;   /* collectives posted, by rank */
    uint64_t *sends, *recvs; /* send/recv posted, by (sender * nranks + receiver) */
    nccl_slot **slots;       /* operations waiting for parts */
    size_t nslots, capslots;
    struct nccl_clique *next;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static nccl_clique *registry; /* cliques made from a ncclUniqueId */

static nccl_clique *clique_new(int nranks)
{
    nccl_clique *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->nranks = nranks;
    c->comms = calloc((size_t)nranks, sizeof *c->comms);
    c->coll_posted = calloc((size_t)nranks, sizeof *c->coll_posted);
    c->sends = calloc((size_t)nranks * (size_t)nranks, sizeof *c->sends);
    c->recvs = calloc((size_t)nranks * (size_t)nranks, sizeof *c->recvs);
    if (!c->comms || !c->coll_posted || !c->sends || !c->recvs) {
        free(c->comms), free(c->coll_posted), free(c->sends), free(c->recvs), free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->changed, NULL);
    return c;
}

static void clique_free(nccl_clique *c)
{
    for (size_t i = 0; i < c->nslots; i++)
        free(c->slots[i]);
    free(c->slots);
    free(c->comms), free(c->coll_posted), free(c->sends), free(c->recvs);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->changed);
    free(c);
}

static ncclResult_t local_join(const ncclUniqueId *id, int nranks, int rank, struct ncclComm *comm, nccl_clique **out)
{
    pthread_mutex_lock(&registry_lock);
    nccl_clique *c = registry;
    while (c && memcmp(&c->id, id, sizeof *id))
        c = c->next;
    if (c && c->nranks != nranks) {
        pthread_mutex_unlock(&registry_lock);
        nccl_message(comm, "ncclCommInitRank", "nranks %d differs from the %d of the ranks that joined this id first",
                     nranks, c->nranks);
        return ncclInvalidUsage;
    }
    if (!c) {
        c = clique_new(nranks);
        if (!c) {
            pthread_mutex_unlock(&registry_lock);
            return ncclSystemError;
        }
        c->has_id = 1;
        c->id = *id;
        c->next = registry;
        registry = c;
    }
    pthread_mutex_lock(&c->lock);
    ncclResult_t result = ncclSuccess;
    if (c->comms[rank]) {
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
        c->joined++;
        *out = c;
    }
    pthread_mutex_unlock(&c->lock);
    if (result && !c->joined) { /* made for this call only */
        nccl_clique **p = &registry;
        while (*p != c)
            p = &(*p)->next;
        *p = c->next;
        clique_free(c);
    }
    pthread_mutex_unlock(&registry_lock);
    return result;
}

static ncclResult_t local_make(struct ncclComm **comms, int n, nccl_clique **out)
{
    nccl_clique *c = clique_new(n);
    if (!c)
        return ncclSystemError;
    for (int r = 0; r < n; r++)
        c->comms[r] = comms[r];
    c->joined = n;
    *out = c;
    return ncclSuccess;
}

static void local_leave(nccl_clique *c, int rank)
{
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&c->lock);
    c->comms[rank] = NULL;
    int last = --c->joined == 0;
    pthread_mutex_unlock(&c->lock);
    if (last && c->has_id) {
        nccl_clique **p = &registry;
        while (*p && *p != c)
            p = &(*p)->next;
        if (*p)
            *p = c->next;
    }
    pthread_mutex_unlock(&registry_lock);
    if (last)
        clique_free(c);
}

/* The slot of (channel, seq), made if new. Locked. NULL: out of memory. */
static nccl_slot *slot_get(nccl_clique *c, int channel, uint64_t seq, int nparties)
{
    for (size_t i = 0; i < c->nslots; i++)
        if (c->slots[i]->channel == channel && c->slots[i]->seq == seq)
            return c->slots[i];
    if (c->nslots == c->capslots) {
        size_t cap = c->capslots ? 2 * c->capslots : 8;
        nccl_slot **grown = realloc(c->slots, cap * sizeof *grown);
        if (!grown)
            return NULL;
        c->slots = grown;
        c->capslots = cap;
    }
    nccl_slot *s = calloc(1, sizeof *s + (size_t)nparties * sizeof s->parts[0]);
    if (!s)
        return NULL;
    s->channel = channel;
    s->seq = seq;
    s->nparties = nparties;
    c->slots[c->nslots++] = s;
    return s;
}

static void slot_remove(nccl_clique *c, nccl_slot *s)
{
    for (size_t i = 0; i < c->nslots; i++)
        if (c->slots[i] == s) {
            c->slots[i] = c->slots[--c->nslots];
            break;
        }
    free(s);
}

static void local_post(nccl_op *op)
{
    struct ncclComm *comm = op->comm;
    nccl_clique *c = comm->clique;
    int n = c->nranks, channel, index;
    uint64_t seq;
    pthread_mutex_lock(&c->lock);
    comm->poster = pthread_self();
    comm->has_poster = 1;
    if (op->kind == NCCL_OP_SEND) {
        channel = comm->rank * n + op->root;
        seq = c->sends[channel]++;
        index = 0;
    } else if (op->kind == NCCL_OP_RECV) {
        channel = op->root * n + comm->rank;
        seq = c->recvs[channel]++;
        index = 1;
    } else {
        channel = -1;
        seq = c->coll_posted[comm->rank]++;
        index = comm->rank;
    }
    nccl_slot *s = slot_get(c, channel, seq, channel < 0 ? n : 2);
    if (!s) {
        op->result = ncclSystemError;
        op->done = 1;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    s->parts[index] = op;
    op->slot = s;
    if (++s->posted < s->nparties) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    /* the last part: run it here, without the clique's lock (the runtime's
     * lock is taken inside, and other ranks may post meanwhile) */
    s->running = 1;
    pthread_mutex_unlock(&c->lock);
    nccl_execute(s->parts, s->nparties);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < s->nparties; i++) {
        s->parts[i]->done = 1;
        s->parts[i]->slot = NULL;
    }
    slot_remove(c, s);
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

/* How long a wait for a rank, whose communicator this thread made and no
 * thread has posted for yet, may last before it is taken for a
 * single-threaded program missing its ncclGroupStart/End. */
#define NCCL_SUSPECT_SECONDS 10

static ncclResult_t local_wait(nccl_op *op)
{
    nccl_clique *c = op->comm->clique;
    pthread_mutex_lock(&c->lock);
    int suspect_waits = 0;
    while (!op->done) {
        nccl_slot *s = op->slot;
        int missing = -1, suspected = 0;
        /* a missing party that this thread posts for never comes */
        for (int i = 0; i < s->nparties && missing < 0 && !s->running; i++) {
            if (s->parts[i])
                continue;
            int rank = s->channel < 0 ? i : i == 0 ? s->channel / c->nranks : s->channel % c->nranks;
            struct ncclComm *peer = c->comms[rank];
            if (peer && peer->has_poster && pthread_equal(peer->poster, pthread_self())) {
                if (peer->has_poster == 1 || suspect_waits >= NCCL_SUSPECT_SECONDS)
                    missing = rank;
                else
                    suspected = 1;
            }
        }
        if (missing >= 0) {
            /* withdraw the part; its number goes back when it was the
             * rank's last, so the communicator stays usable */
            int rank = op->comm->rank;
            uint64_t *counter = s->channel < 0 ? &c->coll_posted[rank]
                                : op->kind == NCCL_OP_SEND ? &c->sends[s->channel] : &c->recvs[s->channel];
            if (*counter == s->seq + 1)
                --*counter;
            else /* later parts were posted: the rank is out of step */
                __atomic_store_n(&op->comm->async_error, ncclInvalidUsage, __ATOMIC_RELEASE);
            for (int i = 0; i < s->nparties; i++)
                if (s->parts[i] == op)
                    s->parts[i] = NULL;
            s->posted--;
            if (!s->posted)
                slot_remove(c, s);
            op->slot = NULL;
            pthread_mutex_unlock(&c->lock);
            nccl_message(op->comm, op->api,
                         "rank %d waits for rank %d, whose calls come from this same thread: it would wait "
                         "forever; call them for all ranks inside ncclGroupStart/ncclGroupEnd",
                         op->comm->rank, missing);
            return ncclInvalidUsage;
        }
        if (suspected) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 1;
            if (pthread_cond_timedwait(&c->changed, &c->lock, &until) == ETIMEDOUT)
                suspect_waits++;
            else
                suspect_waits = 0;
        } else {
            pthread_cond_wait(&c->changed, &c->lock);
        }
    }
    ncclResult_t result = op->result;
    pthread_mutex_unlock(&c->lock);
    return result;
}

const nccl_transport nccl_transport_local = {"in-process", local_join, local_make, local_leave, local_post, local_wait};
