/* racecheck within a cluster: a happens-before analysis over the warps of
 * the cluster's blocks, which run together on one host thread.
 *
 * Each warp is a "unit" with a vector clock over the cluster's units.
 * A cooperative launch runs its whole grid as one such group: the
 * per-block state grows with the group (launch.c bounds its units).
 * Barriers (bar.sync/bar.arrive/bar.red with their counts,
 * barrier.cluster arrive/wait), mbarrier phases, release/acquire through
 * atomics and strong loads and stores (.acquire/.release/.relaxed/
 * .volatile, fence then a strong write) and cp.async wait groups join
 * clocks. Lanes of one warp are ordered by __syncwarp and the other
 * warp-synchronous ops (a per-warp counter, and the lanes of the syncs
 * that named only some of them); accesses by different lanes in between,
 * of one op or two, are the intra-warp hazards (errors on sm_70+, see
 * race_warp_level).
 *
 * Shared memory has a shadow per 4-byte word holding the accesses not yet
 * known to be ordered before everything that follows, one record per
 * (warp, op, kind, bytes) with the latest clock. A new access is compared
 * with every record of its word, so the set of racing (op pair, word)
 * instances found does not depend on the order the warps ran in, and the
 * representative shown is the smallest instance: reports are the same for
 * every schedule. Global memory is logged per warp-instruction and
 * analyzed when the cluster ends (race_global.c). */
#include "check/race_internal.h"

#include <stdlib.h>
#include <string.h>

/* Where the rank of a shared-memory key starts: offsets in a block's
 * shared memory stay below 2^40, ranks below 2^24. */
#define RACE_RANK_SHIFT 40

static inline race_tuple *cell_tuples(race_cell *c) { return c->n <= 2 ? c->inl : c->ext; }

#define vc_join race_join
#define mix64 race_mix

/* ---- setup -------------------------------------------------------------------- */

int race_thread_init(check_thread *t)
{
    race_thread *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->owner = t;
    r->warp_level = race_warp_level(t->launch);
    r->benign_level = t->launch->s->cfg.racecheck_benign;
    t->race = r;
    return 0;
}

static void cell_free(race_cell *c) { free(c->ext); }

void race_thread_free(race_thread *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nshared; i++) {
        for (size_t k = 0; k < r->shared[i].ncells; k++)
            cell_free(&r->shared[i].cells[k]);
        free(r->shared[i].cells);
        free(r->shared[i].pend);
        free(r->shared[i].pg);
    }
    free(r->shared);
    free(r->bars);
    free(r->block_id);
    race_global_free(r);
    free(r->vc);
    free(r->fvc);
    free(r->wsync);
    free(r->relf);
    free(r->has_fence);
    free(r->acq);
    free(r->cl_wait);
    free(r->dirty);
    free(r->snap);
    free(r->bar_mem);
    free(r->cl_acc);
    free(r->cl_done);
    free(r->locs);
    free(r->loc_mem);
    if (r->async)
        for (size_t u = 0; u < r->ucap; u++)
            free(r->async[u].v);
    free(r->async);
    if (r->psync)
        for (size_t u = 0; u < r->ucap; u++)
            free(r->psync[u].v);
    free(r->psync);
    free(r->iv);
    free(r->mark);
    race_dsmem_free(r->dsmem);
    free(r);
}

race_interval *race_thread_intervals(race_thread *r, size_t *n)
{
    *n = r ? r->niv : 0;
    return r ? r->iv : NULL;
}

static int ensure_units(race_thread *r, int U)
{
    if ((size_t)U <= r->ucap)
        return 0;
    size_t u = (size_t)U;
    if (r->async)
        for (size_t i = 0; i < r->ucap; i++)
            free(r->async[i].v);
    if (r->psync)
        for (size_t i = 0; i < r->ucap; i++)
            free(r->psync[i].v);
    free(r->psync);
    free(r->vc); free(r->fvc); free(r->wsync); free(r->relf); free(r->has_fence); free(r->acq);
    free(r->dirty); free(r->snap);
    free(r->cl_wait); free(r->cl_acc); free(r->cl_done); free(r->async);
    r->vc = calloc(u * u, sizeof *r->vc);
    r->fvc = calloc(u * u, sizeof *r->fvc);
    r->wsync = calloc(u, sizeof *r->wsync);
    r->relf = calloc(u, sizeof *r->relf);
    r->has_fence = calloc(u, 1);
    r->acq = calloc(u, 1);
    r->cl_wait = calloc(u, 1);
    r->dirty = calloc(u, 1);
    r->snap = calloc(u, sizeof *r->snap);
    r->cl_acc = calloc(u, sizeof *r->cl_acc);
    r->cl_done = calloc(u, sizeof *r->cl_done);
    r->async = calloc(u, sizeof *r->async);
    r->psync = calloc(u, sizeof *r->psync);
    r->ucap = u;
    if (!r->vc || !r->fvc || !r->wsync || !r->relf || !r->has_fence || !r->acq || !r->cl_wait || !r->dirty || !r->snap ||
        !r->cl_acc || !r->cl_done || !r->async || !r->psync) {
        r->ucap = 0;
        return -1;
    }
    return 0;
}

/* Grows the per-block arrays to hold n blocks (0, or -1 when out of
 * memory). A thread-block cluster has at most VM_MAX_CLUSTER blocks; a
 * cooperative launch's group is its whole grid. */
static int ensure_ranks(race_thread *r, int n)
{
    if ((size_t)n <= r->rcap)
        return 0;
    size_t cap = r->rcap ? r->rcap : VM_MAX_CLUSTER;
    while (cap < (size_t)n)
        cap *= 2;
    if (cap > r->nshared) {
        race_shadow *sh = realloc(r->shared, cap * sizeof *sh);
        if (!sh)
            return -1;
        memset(sh + r->nshared, 0, (cap - r->nshared) * sizeof *sh);
        r->shared = sh;
        r->nshared = cap;
    }
    race_bar *bars = realloc(r->bars, cap * VM_BARRIERS * sizeof *bars);
    if (!bars)
        return -1;
    r->bars = bars;
    uint64_t *id = realloc(r->block_id, cap * sizeof *id);
    if (!id)
        return -1;
    r->block_id = id;
    r->rcap = cap;
    return 0;
}

/* The cells of sh cover a block's shared memory of shared_size bytes. */
static int ensure_shadow(race_shadow *sh, uint64_t shared_size)
{
    return util_grow(&sh->cells, &sh->ncells, (size_t)((shared_size + 3) / 4), sizeof *sh->cells);
}

/* The word marks of mark_groups and marked_words cover n words. */
static int ensure_mark(race_thread *r, size_t n)
{
    return util_grow(&r->mark, &r->nmark, n, sizeof *r->mark);
}

/* No deferred reads; no words read by them or written. */
static void shadow_clear_extents(race_shadow *sh)
{
    sh->npend = sh->npg = 0;
    sh->plo = sh->wlo = UINT64_MAX;
    sh->phi = sh->whi = 0;
}

/* Everything recorded before is ordered before everything after: the
 * records (and the deferred reads) are dropped. */
static void shadow_new_generation(race_shadow *sh)
{
    if (++sh->gen == 0) {
        for (size_t i = 0; i < sh->ncells; i++)
            sh->cells[i].gen = 0;
        sh->gen = 1;
    }
    shadow_clear_extents(sh);
}

static void cluster_reset(race_thread *r, vm_block *b)
{
    int n = b->cluster ? b->cluster->n : 1;
    r->n = n;
    r->nwarps = b->nwarps;
    r->U = n * b->nwarps;
    if (ensure_units(r, r->U) || ensure_ranks(r, n)) {
        r->U = 0;
        return;
    }
    size_t U = (size_t)r->U;
    memset(r->vc, 0, U * U * sizeof *r->vc);
    memset(r->fvc, 0, U * U * sizeof *r->fvc);
    for (size_t u = 0; u < U; u++)
        r->vc[u * U + u] = 1;
    memset(r->wsync, 0, U * sizeof *r->wsync);
    memset(r->relf, 0, U * sizeof *r->relf);
    memset(r->has_fence, 0, U);
    memset(r->acq, 0, U);
    memset(r->cl_wait, 0, U);
    memset(r->bars, 0, (size_t)n * VM_BARRIERS * sizeof *r->bars);
    r->bar_rows = 0;
    memset(r->cl_acc, 0, U * sizeof *r->cl_acc);
    memset(r->cl_done, 0, U * sizeof *r->cl_done);
    r->cl_acc_acq = r->cl_done_acq = 0;
    for (size_t u = 0; u < U; u++) {
        r->async[u].n = 0;
        r->async[u].committed = 0;
        r->psync[u].n = 0;
    }
    if (++r->loc_epoch == 0) {
        memset(r->locs, 0, r->loc_cap * sizeof *r->locs);
        r->loc_epoch = 1;
    }
    r->loc_count = 0;
    r->loc_mem_used = 0;
    memset(r->dirty, 1, U);
    r->nlog = 0;
    r->nsnaps = 0;
    r->cluster_key = b->linear_id;
    (void)race_dsmem_reset(r, b); /* out of memory: not tracked */
}

void race_block_begin(check_thread *t, vm_block *b)
{
    race_thread *r = t->race;
    if (b->rank == 0)
        cluster_reset(r, b);
    if (!r->U || (int)b->rank >= r->n)
        return;
    r->block_id[b->rank] = b->linear_id;
    race_shadow *sh = &r->shared[b->rank];
    if (ensure_shadow(sh, b->shared_size) || ensure_mark(r, sh->ncells))
        r->U = 0;
    shadow_new_generation(sh);
}

/* ---- findings -------------------------------------------------------------------- */

int race_warp_level(const check_launch *cl)
{
    int level = cl->s->cfg.racecheck_warp;
    if (level != KEMU_CHECK_AUTO)
        return level == KEMU_CHECK_OFF || level == KEMU_CHECK_ERROR ? level : KEMU_CHECK_WARN;
    /* since Volta, lanes of a warp are scheduled independently: what runs
     * is the older of the device and the PTX .target (a pre-Volta target
     * keeps lockstep warps on a newer GPU) */
    int sm = cl->L->arch_sm;
    if (cl->L->mod && cl->L->mod->arch_sm && cl->L->mod->arch_sm < sm)
        sm = cl->L->mod->arch_sm;
    return sm >= 70 ? KEMU_CHECK_ERROR : KEMU_CHECK_WARN;
}

int race_severity(const check_launch *cl, int cls)
{
    int benign = cl->s->cfg.racecheck_benign == KEMU_CHECK_AUTO ? KEMU_CHECK_WARN : cl->s->cfg.racecheck_benign;
    int level = cls == RACE_CLASS_WARP ? race_warp_level(cl) : cls == RACE_CLASS_BENIGN ? benign : KEMU_CHECK_ERROR;
    if (cls == RACE_CLASS_WARP_BENIGN) {
        /* lanes of one warp storing the same value: the milder of the two */
        int warp = race_warp_level(cl);
        level = warp < benign ? warp : benign;
    }
    return level == KEMU_CHECK_OFF ? -1 : level == KEMU_CHECK_ERROR ? CHECK_ERROR : CHECK_WARNING;
}

static int kind_name(int kind) { return (kind & RACE_K_ATOMIC) ? 2 : (kind & RACE_K_WRITE) ? 1 : 0; }

void race_group_id(uint64_t id[3], uint32_t fn1, uint32_t pc1, int kind1, uint32_t fn2, uint32_t pc2, int kind2,
                   int space, int scope, int hazard, int cls)
{
    id[0] = ((uint64_t)fn1 << 32) | pc1;
    id[1] = ((uint64_t)fn2 << 32) | pc2;
    id[2] = ((uint64_t)space << 24) | ((uint64_t)scope << 16) | ((uint64_t)hazard << 8) | ((uint64_t)cls << 4) |
            ((uint64_t)kind_name(kind1) << 2) | (uint64_t)kind_name(kind2);
}

static int side_less(const race_side *a, const race_side *b)
{
    if (a->fn != b->fn) return a->fn < b->fn;
    if (a->pc != b->pc) return a->pc < b->pc;
    if (a->block != b->block) return a->block < b->block;
    return a->tid < b->tid;
}

void race_report(race_thread *r, race_side x, race_side y, int space, int scope, int cls, uint64_t owner,
                 uint64_t address, uint64_t instance)
{
    int sev = race_severity(r->owner->launch, cls);
    if (sev < 0)
        return;
    if (side_less(&y, &x)) {
        race_side t = x;
        x = y;
        y = t;
    }
    int wx = (x.kind & RACE_K_WRITE) != 0, wy = (y.kind & RACE_K_WRITE) != 0;
    int hazard = wx && wy ? RACE_WAW : wx ? RACE_RAW : RACE_WAR;
    uint64_t id[3];
    race_group_id(id, x.fn, x.pc, x.kind, y.fn, y.pc, y.kind, space, scope, hazard, cls);
    check_group *g = check_groups_get(&r->owner->groups, KEMU_TOOL_RACECHECK, sev, id);
    if (!g)
        return;
    check_rep rep;
    memset(&rep, 0, sizeof rep);
    rep.order[0] = owner;
    rep.order[1] = address;
    rep.order[2] = ((uint64_t)x.block << 32) ^ x.tid;
    rep.order[3] = ((uint64_t)y.block << 32) ^ y.tid;
    rep.block[0] = x.block;
    rep.block[1] = y.block;
    rep.tid[0] = x.tid;
    rep.tid[1] = y.tid;
    rep.owner = owner;
    rep.address = address;
    rep.a = x.size;
    rep.b = y.size;
    check_group_note(g, instance, &rep);
}

/* ---- the per-word check ------------------------------------------------------------ */

typedef struct race_where {
    int rank;                /* the block whose shared memory it is */
    uint64_t word;           /* byte offset of the word */
} race_where;

static race_side side_of(const race_thread *r, const race_tuple *t, uint32_t lanes)
{
    int unit = race_who_unit(t->who);
    int rank = unit / r->nwarps, warp = unit % r->nwarps;
    race_side s = {race_who_fn(t->who), race_who_pc(t->who), t->kind, r->block_id[rank],
                   (uint32_t)(warp * VM_WARP + (lanes ? __builtin_ctz(lanes) : 0)), 1u << (t->bytes >> 4)};
    return s;
}

static void conflict(race_thread *r, const race_tuple *old, const race_tuple *nw, uint32_t old_lanes,
                     uint32_t new_lanes, int cls, const race_where *wh, uint8_t overlap)
{
    race_side a = side_of(r, old, old_lanes), b = side_of(r, nw, new_lanes);
    int ra = race_who_unit(old->who) / r->nwarps, rb = race_who_unit(nw->who) / r->nwarps;
    int scope = ra == rb && ra == wh->rank ? RACE_SCOPE_BLOCK : RACE_SCOPE_CLUSTER;
    uint64_t byte = wh->word + (uint64_t)__builtin_ctz(overlap);
    uint64_t owner = r->block_id[wh->rank];
    uint64_t instance = mix64(owner * 0x9e3779b97f4a7c15ull ^ (wh->word + 1));
    race_report(r, a, b, 0, scope, cls, owner, byte, instance);
}

/* The access a check_cell call describes: the warp-instruction's fixed
 * part (proto: who, clock, wsync) and this word's lanes, bytes, kind and
 * value. */
typedef struct race_new {
    const race_tuple *proto;
    uint32_t lanes, value;
    uint8_t kind, bytes;
} race_new;

/* A record and the new access race (reports are rare: kept out of the
 * loop of check_cell). */
static __attribute__((noinline)) void cell_race(race_thread *r, const race_tuple *t, race_new a,
                                                const race_where *wh, uint8_t ov, int same_unit)
{
    race_tuple nt = *a.proto;
    nt.lanes = a.lanes;
    nt.value = a.value;
    nt.kind = a.kind;
    nt.bytes = a.bytes;
    int same_value = 0;
    if ((t->kind & nt.kind & RACE_K_WRITE) && (t->kind & nt.kind & RACE_K_VALUE) &&
        !((t->kind | nt.kind) & RACE_K_ATOMIC)) {
        uint32_t m = 0;
        for (int k = 0; k < 4; k++)
            if (ov & (1u << k))
                m |= 0xffu << (8 * k);
        same_value = (t->value & m) == (nt.value & m);
    }
    if (same_unit) {
        /* name two different lanes */
        uint32_t lb = 1u << __builtin_ctz(nt.lanes), la = t->lanes & ~lb;
        if (la)
            la &= -la;
        else {
            la = lb;
            lb = nt.lanes & ~la;
            lb &= -lb;
        }
        conflict(r, t, &nt, la, lb, same_value ? RACE_CLASS_WARP_BENIGN : RACE_CLASS_WARP, wh, ov);
        return;
    }
    conflict(r, t, &nt, t->lanes, nt.lanes, same_value ? RACE_CLASS_BENIGN : RACE_CLASS_ERROR, wh, ov);
}

/* Whether lanes (two or more) of one warp-instruction storing with kind
 * race with each other: a plain (weak, not atomic) store. */
static inline int lanes_self_race(const race_thread *r, uint32_t lanes, uint8_t kind)
{
    return (lanes & (lanes - 1)) && (kind & (RACE_K_WRITE | RACE_K_STRONG)) == RACE_K_WRITE &&
           r->warp_level != KEMU_CHECK_OFF;
}

/* Two or more lanes of one warp-instruction store to the same word
 * (lanes_self_race): a race between lanes of one warp whatever order
 * they ran in. */
static __attribute__((noinline)) void cell_self_race(race_thread *r, const race_tuple *p, uint32_t lanes,
                                                     uint32_t value, uint8_t kind, uint8_t bytes,
                                                     const race_where *wh)
{
    race_tuple self = *p;
    self.lanes = lanes;
    self.value = value;
    self.kind = kind;
    self.bytes = bytes;
    cell_race(r, &self, (race_new){p, lanes, value, kind, bytes}, wh, (uint8_t)(bytes & 0xf), 1);
}

/* The record of cell c to append once it holds two or more (NULL when
 * out of memory). */
static __attribute__((noinline)) race_tuple *cell_append_ext(race_cell *c)
{
    if (c->n == UINT16_MAX)
        return NULL;
    if (!c->capl || (size_t)c->n + 1 > (size_t)1 << c->capl) {
        unsigned capl = c->capl ? c->capl + 1u : 2u; /* at most 16: n stays below 1 << 16 */
        race_tuple *e = realloc(c->ext, ((size_t)1 << capl) * sizeof *e);
        if (!e)
            return NULL;
        c->ext = e;
        c->capl = (uint8_t)capl;
    }
    if (c->n == 2)
        memcpy(c->ext, c->inl, sizeof c->inl);
    return &c->ext[c->n++];
}

/* The RACE_CELL_* a record of kind adds to its cell. */
static inline uint8_t cell_flags(uint8_t kind)
{
    return (uint8_t)(RACE_CELL_ANY | ((kind & RACE_K_WRITE) ? RACE_CELL_WRITE : 0) |
                     ((kind & RACE_K_STRONG) ? 0 : (kind & RACE_K_WRITE) ? RACE_CELL_WEAK | RACE_CELL_WEAK_WRITE
                                                                         : RACE_CELL_WEAK));
}

/* The RACE_CELL_* of the records an access of kind may race with: any if
 * it is a weak write, the weak ones if it is strong, the writes if it
 * reads. */
static inline uint8_t cell_may(uint8_t kind)
{
    return (kind & RACE_K_WRITE) ? ((kind & RACE_K_STRONG) ? RACE_CELL_WEAK : RACE_CELL_ANY)
                                 : ((kind & RACE_K_STRONG) ? RACE_CELL_WEAK_WRITE : RACE_CELL_WRITE);
}

/* Compares the access of lanes (kind, bytes of the word, value stored)
 * by proto's warp-instruction with every record of the word of cell c
 * (reporting the races), then merges it into its own record or appends
 * one, and returns its index (-1 when out of memory). myvc: the unit's
 * vector clock. Scalars rather than a struct: this
 * runs once per lane and word, and a struct just written on the stack
 * makes the loads below wait for store forwarding. */
static inline __attribute__((always_inline)) int check_cell(race_thread *r, race_cell *c, const race_tuple *p,
                                                            const uint32_t *myvc, uint32_t lanes, uint32_t value,
                                                            uint8_t kind, uint8_t bytes, const race_where *wh)
{
    race_tuple *v = cell_tuples(c);
    uint64_t who = p->who;
    int n = c->n, merge = -1, self = lanes_self_race(r, lanes, kind);
    uint8_t may = cell_may(kind);
    if (!(c->flags & may)) {
        if (self)
            cell_self_race(r, p, lanes, value, kind, bytes, wh);
        /* none: only find its own record (there is at most one), first
         * where the last access to the word left one */
        int h = c->hint;
        if (h < n && v[h].who == who && v[h].bytes == bytes && !((v[h].kind ^ kind) & RACE_K_KEY)) {
            merge = h;
            goto merged;
        }
        for (int i = 0; i < n; i++)
            if (v[i].who == who && v[i].bytes == bytes && !((v[i].kind ^ kind) & RACE_K_KEY)) {
                merge = i;
                break;
            }
        goto merged;
    }
    int unit = race_who_unit(who);
    uint8_t nb = bytes & 0xf;
    for (int i = 0; i < n; i++) {
        race_tuple *t = &v[i];
        if (t->who == who && t->bytes == bytes && !((t->kind ^ kind) & RACE_K_KEY))
            merge = i;
        uint8_t ov = t->bytes & nb;
        if (!ov || !((t->kind | kind) & RACE_K_WRITE))
            continue;
        if (t->kind & kind & RACE_K_STRONG)
            continue; /* morally strong accesses never race */
        int tu = race_who_unit(t->who);
        if (tu == unit) {
            /* lanes of one warp: ordered by warp syncs only, whichever
             * ran first; a record of this very op holds the other lanes
             * that ran it since the last one (a loop, or divergent paths
             * through one instruction) */
            if (r->warp_level == KEMU_CHECK_OFF)
                continue;
            uint32_t all = t->lanes | lanes;
            if (!(all & (all - 1)))
                continue; /* one thread */
            if (t->wsync != p->wsync) {
                /* the counts are kept in 16 bits here: back to 32 from the unit's count */
                uint32_t now = r->wsync[unit];
                if (race_warp_ordered(r, unit, now - (uint16_t)((uint16_t)now - t->wsync),
                                      now - (uint16_t)((uint16_t)now - p->wsync), t->lanes, lanes))
                    continue;
            }
            cell_race(r, t, (race_new){p, lanes, value, kind, bytes}, wh, ov, 1);
            if (t->who == who && t->bytes == bytes && !((t->kind ^ kind) & RACE_K_KEY))
                self = 0; /* the lanes of this access are among those reported */
            continue;
        }
        if (myvc[tu] >= t->clock)
            continue;
        cell_race(r, t, (race_new){p, lanes, value, kind, bytes}, wh, ov, 0);
    }
    if (self)
        cell_self_race(r, p, lanes, value, kind, bytes, wh);
merged:
    if (merge >= 0) {
        race_tuple *t = &v[merge];
        if (t->wsync != p->wsync || t->clock != p->clock)
            t->lanes = lanes;
        else
            t->lanes |= lanes;
        t->clock = p->clock;
        t->wsync = p->wsync;
        if (!(t->kind & RACE_K_VALUE) || !(kind & RACE_K_VALUE) || t->value != value)
            t->kind &= (uint8_t)~RACE_K_VALUE;
        c->hint = (uint16_t)merge;
        return merge;
    }
    race_tuple *d = c->n < 2                                      ? &c->inl[c->n++]
                  : c->n > 2 && (uint32_t)c->n < (1u << c->capl) ? &c->ext[c->n++] /* ext holds them all */
                                                                  : cell_append_ext(c);
    if (!d)
        return -1;
    c->flags |= cell_flags(kind);
    d->who = who;
    d->clock = p->clock;
    d->wsync = p->wsync;
    d->lanes = lanes;
    d->value = value;
    d->kind = kind;
    d->bytes = bytes;
    c->hint = (uint16_t)(c->n - 1);
    return c->n - 1;
}

/* The cell of the word at byte offset w of block rank's shared memory,
 * emptied if it holds records of an earlier generation; NULL past the
 * end. */
static inline race_cell *cell_at(race_shadow *sh, uint64_t w)
{
    if ((w >> 2) >= sh->ncells)
        return NULL;
    race_cell *c = &sh->cells[w >> 2];
    if (c->gen != sh->gen) {
        c->gen = sh->gen;
        c->n = 0;
        c->flags = 0;
    }
    return c;
}

/* The first access of a word in generation gen (after a barrier, most):
 * the cell's one record, nothing to compare with. flags: cell_flags(kind). */
static inline __attribute__((always_inline)) void cell_first(race_cell *c, uint16_t gen, uint8_t flags,
                                                             const race_tuple *proto, uint32_t lanes,
                                                             uint32_t value, uint8_t kind, uint8_t bytes)
{
    c->gen = gen;
    c->hint = 0;
    c->n = 1;
    c->flags = flags;
    race_tuple *d = &c->inl[0];
    d->who = proto->who;
    d->clock = proto->clock;
    d->lanes = lanes;
    d->value = value;
    d->wsync = proto->wsync;
    d->kind = kind;
    d->bytes = bytes;
}

/* Records one lane group's access of `size` bytes at shared offset `addr`
 * of block `rank`, made by the warp-instruction of proto. `value` holds
 * the bytes stored, or NULL. */
static void record(race_thread *r, int rank, uint64_t addr, unsigned size, const race_tuple *proto,
                   const uint32_t *myvc, uint32_t lanes, uint8_t kind, const uint8_t *value)
{
    uint64_t end = addr + size;
    unsigned lg = size >= 16 ? 4 : size >= 8 ? 3 : size >= 4 ? 2 : size >= 2 ? 1 : 0;
    race_shadow *sh = &r->shared[rank];
    for (uint64_t w = addr & ~3ull; w < end; w += 4) {
        uint64_t lo = addr > w ? addr : w, hi = end < w + 4 ? end : w + 4;
        uint8_t mask = (uint8_t)(((1u << (hi - lo)) - 1) << (lo - w));
        race_cell *c = cell_at(sh, w);
        if (!c)
            return;
        uint32_t v = 0;
        if (value)
            for (uint64_t k = lo; k < hi; k++)
                v |= (uint32_t)value[k - addr] << (8 * (k - w));
        race_where wh = {rank, w};
        check_cell(r, c, proto, myvc, lanes, v, (uint8_t)(value ? kind | RACE_K_VALUE : kind),
                   (uint8_t)(mask | (lg << 4)), &wh);
    }
}

/* record() for one aligned 4-byte access (most shared accesses); sh is
 * block rank's shadow. */
static inline __attribute__((always_inline)) void record_word(race_thread *r, race_shadow *sh, int rank, uint64_t w,
                                                              const race_tuple *proto, const uint32_t *myvc,
                                                              uint32_t lanes, uint8_t kind, uint32_t value)
{
    if ((w >> 2) >= sh->ncells)
        return;
    race_cell *c = &sh->cells[w >> 2];
    uint8_t bytes = (uint8_t)(0xf | (2 << 4));
    if (c->gen != sh->gen) {
        cell_first(c, sh->gen, cell_flags(kind), proto, lanes, value, kind, bytes);
        if (lanes_self_race(r, lanes, kind)) {
            race_where wh = {rank, w};
            cell_self_race(r, proto, lanes, value, kind, bytes, &wh);
        }
        return;
    }
    race_where wh = {rank, w};
    check_cell(r, c, proto, myvc, lanes, value, kind, bytes, &wh);
}

/* ---- synchronization locations ------------------------------------------------------ */

static uint32_t *loc_vc_alloc(race_thread *r)
{
    size_t U = (size_t)r->U;
    if (r->loc_mem_used + U > r->loc_mem_cap)
        return NULL;
    uint32_t *v = r->loc_mem + r->loc_mem_used;
    r->loc_mem_used += U;
    memset(v, 0, U * sizeof *v);
    return v;
}

static int locs_grow(race_thread *r)
{
    size_t cap = r->loc_cap ? r->loc_cap * 2 : 64;
    race_loc *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < r->loc_cap; i++) {
        race_loc *l = &r->locs[i];
        if (l->epoch != r->loc_epoch)
            continue;
        size_t j = (size_t)mix64(l->key) & (cap - 1);
        while (t[j].epoch == r->loc_epoch)
            j = (j + 1) & (cap - 1);
        t[j] = *l;
    }
    free(r->locs);
    r->locs = t;
    r->loc_cap = cap;
    /* the clock storage: enough for every location */
    size_t need = cap / 2 * 2 * (size_t)r->U;
    if (need > r->loc_mem_cap) {
        /* clocks are referenced by pointer: move them with the table */
        uint32_t *m = malloc(need * sizeof *m);
        if (!m)
            return -1;
        size_t used = 0;
        for (size_t i = 0; i < cap; i++) {
            race_loc *l = &t[i];
            if (l->epoch != r->loc_epoch)
                continue;
            if (l->vc) {
                memcpy(m + used, l->vc, (size_t)r->U * sizeof *m);
                l->vc = m + used;
                used += (size_t)r->U;
            }
            if (l->done) {
                memcpy(m + used, l->done, (size_t)r->U * sizeof *m);
                l->done = m + used;
                used += (size_t)r->U;
            }
        }
        free(r->loc_mem);
        r->loc_mem = m;
        r->loc_mem_cap = need;
        r->loc_mem_used = used;
    }
    return 0;
}

static race_loc *loc_find(race_thread *r, uint64_t key, int create)
{
    if (r->loc_cap) {
        size_t j = (size_t)mix64(key) & (r->loc_cap - 1);
        while (r->locs[j].epoch == r->loc_epoch) {
            if (r->locs[j].key == key)
                return &r->locs[j];
            j = (j + 1) & (r->loc_cap - 1);
        }
    }
    if (!create)
        return NULL;
    if ((r->loc_count + 1) * 2 > r->loc_cap && locs_grow(r))
        return NULL;
    size_t j = (size_t)mix64(key) & (r->loc_cap - 1);
    while (r->locs[j].epoch == r->loc_epoch)
        j = (j + 1) & (r->loc_cap - 1);
    race_loc *l = &r->locs[j];
    memset(l, 0, sizeof *l);
    l->key = key;
    l->epoch = r->loc_epoch;
    l->vc = loc_vc_alloc(r);
    if (!l->vc) {
        l->epoch = 0;
        return NULL;
    }
    r->loc_count++;
    return l;
}

/* The key of a location: a global address, or an offset (below 2^40) in
 * the shared memory of block rank of the group. */
static uint64_t loc_key(int space, int rank, uint64_t addr)
{
    return space ? (1ull << 62) | (addr & 0x00ffffffffffffffull)
                 : ((uint64_t)rank << RACE_RANK_SHIFT) | (addr & ((1ull << RACE_RANK_SHIFT) - 1));
}

/* ---- accesses ------------------------------------------------------------------------ */

static int unit_of(const race_thread *r, const vm_block *b, const vm_warp *w)
{
    return (int)b->rank * r->nwarps + w->index;
}

/* The bytes lane l stores with op (ST only), into buf; returns 1 if known. */
int race_stored_bytes(const vm_frame *f, const bc_op *op, int l, uint8_t *buf, unsigned size)
{
    if (!race_stores_known(op, size))
        return 0;
    unsigned n = op->n ? op->n : 1, esz = op->src_size;
    for (unsigned e = 0; e < n; e++) {
        uint32_t slot = n > 1 ? f->fn->lists[op->list + e] : op->b;
        uint64_t v = f->regs[(size_t)slot * VM_WARP + (size_t)l];
        memcpy(buf + e * esz, &v, esz);
    }
    return 1;
}

/* An mbarrier op (sub BC_MB_*, per-lane operand in args) of the lanes of
 * mask: arrivals (and the complete_tx of bulk copies, which publish the
 * copied bytes) release into the phase, a completed phase makes it
 * available to the waits that see it done. */
static void mbarrier_op(race_thread *r, vm_block *b, vm_warp *w, int sub, const uint64_t *args, uint32_t mask,
                        const vm_access_lanes *lanes)
{
    int u = unit_of(r, b, w);
    uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    int arrived = 0, waited = 0;
    /* lanes run in order and may update one object several times: follow
     * the interpreter on a local copy of the objects */
    uint64_t addr_seen[VM_WARP], state[VM_WARP];
    int nseen = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        if (lanes->space[l] != BC_SPACE_SHARED)
            continue;
        uint64_t key = loc_key(0, lanes->rank[l], lanes->where[l]);
        int si = -1;
        for (int i = 0; i < nseen; i++)
            if (addr_seen[i] == key)
                si = i;
        if (si < 0) {
            const uint8_t *p = check_shared_ptr(b, lanes->rank[l], lanes->where[l], 8);
            if (!p)
                continue;
            si = nseen++;
            addr_seen[si] = key;
            memcpy(&state[si], p, 8);
        }
        uint64_t B = args ? args[l] : 0;
        race_loc *loc = loc_find(r, key, 1);
        if (!loc)
            continue;
        loc->is_mbar = 1;
        int completed, overflow, done;
        state[si] = check_mbar_step(state[si], sub, B, &completed, &overflow, &done);
        if (sub == BC_MB_INIT) {
            memset(loc->vc, 0, (size_t)r->U * sizeof *loc->vc);
            if (loc->done)
                memset(loc->done, 0, (size_t)r->U * sizeof *loc->done);
            loc->acq = loc->done_acq = 0;
        } else if (sub == BC_MB_ARRIVE || sub == BC_MB_ARRIVE_DROP || sub == BC_MB_ARRIVE_EXPECT_TX ||
                   sub == BC_MB_COMPLETE_TX || sub == BC_MB_EXPECT_TX) {
            if (sub != BC_MB_EXPECT_TX) { /* expect_tx only counts; it may complete the phase */
                vc_join(loc->vc, myvc, r->U);
                loc->acq |= r->acq[u];
                arrived = 1;
            }
            if (completed) {
                if (!loc->done)
                    loc->done = loc_vc_alloc(r);
                if (loc->done)
                    vc_join(loc->done, loc->vc, r->U);
                loc->done_acq |= loc->acq;
                memset(loc->vc, 0, (size_t)r->U * sizeof *loc->vc);
                loc->acq = 0;
            }
        } else if (done) {
            waited = 1;
            if (loc->done) {
                r->dirty[u] |= (uint8_t)vc_join(myvc, loc->done, r->U);
                r->acq[u] |= loc->done_acq;
            }
        }
    }
    if (arrived)
        myvc[u]++;
    if (waited)
        r->wsync[u]++; /* the phase orders the lanes of the warp too */
}

/* The fixed part of the records of unit u's op (fn, pc) at its current
 * clock. */
static inline __attribute__((always_inline)) void proto_init(race_tuple *t, const race_thread *r, int u,
                                                             uint32_t fn, uint32_t pc)
{
    /* field by field: a memset and then narrower stores would make the
     * first wide read of the record wait for store forwarding */
    t->who = RACE_WHO(u, fn, pc);
    t->clock = r->vc[(size_t)u * (size_t)r->U + (size_t)u];
    t->lanes = 0;
    t->value = 0;
    t->wsync = (uint16_t)r->wsync[u];
    t->kind = 0;
    t->bytes = 0;
}

static void perform(race_thread *r, int u, int rank, uint64_t addr, unsigned size, uint32_t lanes, int kind,
                    uint32_t fn, uint32_t pc, const uint8_t *value)
{
    race_tuple proto;
    proto_init(&proto, r, u, fn, pc);
    record(r, rank, addr, size, &proto, r->vc + (size_t)u * (size_t)r->U, lanes, (uint8_t)kind, value);
}

/* The lane groups of one warp-instruction's shared-memory accesses:
 * lanes at one address form a group (broadcasts), groups in the order of
 * their first lane. */
typedef struct race_groups {
    int n;
    uint32_t known;              /* groups whose lanes all store the same known bytes */
    uint32_t lanes[VM_WARP];
    int8_t first[VM_WARP];
    uint64_t key[VM_WARP];       /* rank << RACE_RANK_SHIFT | offset */
} race_groups;

/* Whether lanes a and b store the same bytes (the op's bytes are known).
 * src: the source register of a scalar store, else NULL. */
static int same_stored(const vm_frame *f, const bc_op *op, const uint64_t *src, int a, int b, unsigned size)
{
    if (src) {
        uint64_t m = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
        return !((src[a] ^ src[b]) & m);
    }
    uint8_t x[64], y[64];
    race_stored_bytes(f, op, a, x, size);
    race_stored_bytes(f, op, b, y, size);
    return !memcmp(x, y, size);
}

/* Splits the lanes of mask: returns the global ones and fills g with the
 * groups of those at shared memory of the cluster's blocks. A lane at its
 * previous lane's address joins that lane's group, and while addresses
 * rise from lane to lane each lane starts a group. Once they do not, a
 * lane at the address of the group after its previous lane's, or of the
 * first group, joins it (lanes repeating earlier lanes in order); only
 * other lanes build and search a small open-addressing table. */
static uint32_t group_lanes(const race_thread *r, const vm_frame *f, const bc_op *op, const uint64_t *src, int known,
                            uint32_t mask, const vm_access_lanes *lanes, unsigned size, race_groups *g)
{
    uint32_t global = 0, known_groups = 0;
    uint64_t prev = 0;
    int n = 0, last = -1, hashed = 0, rising = 1, nranks = r->n;
    uint64_t hkey[64];
    int8_t hgrp[64];
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        int sp = lanes->space[l];
        if (sp == BC_SPACE_GLOBAL) {
            global |= 1u << l;
            continue;
        }
        if (sp != BC_SPACE_SHARED || lanes->rank[l] >= nranks)
            continue;
        uint64_t key = ((uint64_t)lanes->rank[l] << RACE_RANK_SHIFT) | lanes->where[l];
        int j;
        if (last >= 0 && key == prev) {
            j = last;
        } else if (rising && (last < 0 || key > prev)) {
            j = -1;
        } else if ((rising = 0, last + 1 < n) && g->key[last + 1] == key) {
            j = last + 1; /* lanes that repeat earlier lanes' addresses in order (a half-warp tile row) */
        } else if (g->key[0] == key) {
            j = 0; /* ... from the first one */
        } else {
            if (!hashed) {
                memset(hgrp, -1, sizeof hgrp);
                for (int i = 0; i < n; i++) {
                    unsigned h = (unsigned)((g->key[i] >> 2) ^ g->key[i] ^ (g->key[i] >> 8) ^ (g->key[i] >> RACE_RANK_SHIFT)) & 63;
                    while (hgrp[h] >= 0)
                        h = (h + 1) & 63;
                    hgrp[h] = (int8_t)i;
                    hkey[h] = g->key[i];
                }
                hashed = 1;
            }
            unsigned h = (unsigned)((key >> 2) ^ key ^ (key >> 8) ^ (key >> RACE_RANK_SHIFT)) & 63;
            while (hgrp[h] >= 0 && hkey[h] != key)
                h = (h + 1) & 63;
            j = hgrp[h];
            if (j < 0) {
                hgrp[h] = (int8_t)n;
                hkey[h] = key;
            }
        }
        if (j < 0) {
            j = n++;
            g->key[j] = key;
            g->lanes[j] = 1u << l;
            g->first[j] = (int8_t)l;
            known_groups |= (uint32_t)known << j;
        } else {
            g->lanes[j] |= 1u << l;
            if (((known_groups >> j) & 1) && !same_stored(f, op, src, g->first[j], l, size))
                known_groups &= ~(1u << j);
        }
        last = j;
        prev = key;
    }
    g->n = n;
    g->known = known_groups;
    return global;
}

/* Records the shared-memory accesses of the groups g of one
 * warp-instruction (kind k: RACE_K_*). */
static void shared_access(race_thread *r, int u, const vm_frame *f, const bc_op *op, uint32_t pc, int k,
                          const uint64_t *src, const race_groups *g, const vm_access_lanes *lanes, unsigned size)
{
    race_tuple proto;
    proto_init(&proto, r, u, (uint32_t)f->fn->index, pc);
    const uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    uint8_t value[64];
    for (int j = 0; j < g->n; j++) {
        int l = g->first[j];
        int known = (g->known >> j) & 1;
        int rank = lanes->rank[l];
        uint64_t where = lanes->where[l];
        if (size == 4 && !(where & 3)) {
            uint32_t v = 0;
            if (known && src)
                v = (uint32_t)src[l]; /* the low bytes on a little-endian host, as race_stored_bytes */
            else if (known) {
                race_stored_bytes(f, op, l, value, size);
                memcpy(&v, value, 4);
            }
            record_word(r, &r->shared[rank], rank, where, &proto, myvc, g->lanes[j],
                        (uint8_t)(known ? k | RACE_K_VALUE : k), v);
            continue;
        }
        if (known)
            race_stored_bytes(f, op, l, value, size);
        record(r, rank, where, size, &proto, myvc, g->lanes[j], (uint8_t)k, known ? value : NULL);
    }
}

/* The groups of a full warp's accesses to one block's shared memory
 * (lanes->one_region) when their offsets follow one of the shapes 2D
 * tiles give: blocks of q lanes at one offset (q lanes reading one
 * element) or period p (lane l at the offset of lane l - p: a row read by
 * both half-warps), the distinct offsets rising, p and q powers of two.
 * Fills g as group_lanes would and returns 1, or returns 0 for other
 * shapes. */
static int tile_groups(const vm_access_lanes *lanes, race_groups *g)
{
    const uint64_t *w = lanes->where;
    uint64_t rk = (uint64_t)lanes->rank[0] << RACE_RANK_SHIFT;
    int n;
    if (w[1] == w[0]) {
        int q = 2;
        while (q < VM_WARP && w[q] == w[0])
            q++;
        if (q & (q - 1))
            return 0;
        n = VM_WARP / q;
        for (int j = 0; j < n; j++) {
            uint64_t lead = w[j * q];
            if (j && lead <= w[j * q - 1])
                return 0;
            for (int l = j * q + 1; l < (j + 1) * q; l++)
                if (w[l] != lead)
                    return 0;
            g->key[j] = rk | lead;
            g->lanes[j] = (uint32_t)(((1ull << q) - 1) << (j * q));
            g->first[j] = (int8_t)(j * q);
        }
    } else {
        int p = 1;
        while (p < VM_WARP && w[p] > w[p - 1])
            p++;
        if (p == VM_WARP || (p & (p - 1)))
            return 0;
        for (int l = p; l < VM_WARP; l++)
            if (w[l] != w[l - p])
                return 0;
        uint32_t rep = 0;
        for (int l = 0; l < VM_WARP; l += p)
            rep |= 1u << l;
        n = p;
        for (int j = 0; j < p; j++) {
            g->key[j] = rk | w[j];
            g->lanes[j] = rep << j;
            g->first[j] = (int8_t)j;
        }
    }
    g->n = n;
    g->known = 0;
    return 1;
}

/* A new stamp for r->mark (a warp-instruction's marks), shifted past the
 * 5 bits of group index a mark holds beside it. */
static uint32_t next_mark_stamp(race_thread *r)
{
    if (++r->mark_stamp >= (1u << 27)) {
        memset(r->mark, 0, r->nmark * sizeof *r->mark);
        r->mark_stamp = 1;
    }
    return r->mark_stamp << 5;
}

/* group_lanes for lanes of one region (lanes->one_region) in one block's
 * shared memory at 4-byte aligned offsets (so lanes at one word are at
 * one offset): each lane finds its word's group through r->mark, which
 * needs no search whatever the addresses (random bins, broadcasts). Fills
 * g as group_lanes would. */
static void mark_groups(race_thread *r, const vm_frame *f, const bc_op *op, const uint64_t *src, int known,
                        uint32_t mask, const vm_access_lanes *lanes, unsigned size, race_groups *g)
{
    uint32_t stamp = next_mark_stamp(r), known_groups = 0;
    uint64_t rk = (uint64_t)lanes->rank[__builtin_ctz(mask)] << RACE_RANK_SHIFT;
    int n = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t wo = lanes->where[l];
        uint32_t *mk = &r->mark[wo >> 2];
        if ((*mk & ~31u) == stamp) {
            int j = (int)(*mk & 31);
            g->lanes[j] |= 1u << l;
            if (((known_groups >> j) & 1) && !same_stored(f, op, src, g->first[j], l, size))
                known_groups &= ~(1u << j);
            continue;
        }
        *mk = stamp | (uint32_t)n;
        g->key[n] = rk | wo;
        g->lanes[n] = 1u << l;
        g->first[n] = (int8_t)l;
        known_groups |= (uint32_t)known << n;
        n++;
    }
    g->n = n;
    g->known = known_groups;
}

/* What mark_groups then shared_access do, in one pass, for 4-byte
 * accesses at aligned offsets of block rank's shared memory whose bytes
 * are not compared (loads, atomics, stores of unknown bytes; kind k): the
 * first lane at a word checks its cell; a later lane at that word joins
 * the record the first one left, or, when the cell holds records it may
 * race with, checks the cell again with the lanes of its group so far
 * (the same findings as one check with the whole group). */
static void marked_words(race_thread *r, int u, int rank, uint32_t fn, uint32_t pc, uint8_t k, uint32_t mask,
                         const vm_access_lanes *lanes)
{
    race_tuple proto;
    proto_init(&proto, r, u, fn, pc);
    const uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    race_shadow *sh = &r->shared[rank];
    uint32_t stamp = next_mark_stamp(r), glanes[VM_WARP];
    int grec[VM_WARP], n = 0;
    uint8_t bytes = (uint8_t)(0xf | (2 << 4)), flags = cell_flags(k);
    uint8_t may = cell_may(k);
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t wo = lanes->where[l];
        /* one region: inside the block's shared memory (cells and marks cover it) */
        uint32_t *mk = &r->mark[wo >> 2];
        race_cell *c = &sh->cells[wo >> 2];
        if ((*mk & ~31u) == stamp) {
            int j = (int)(*mk & 31);
            glanes[j] |= 1u << l;
            if ((c->flags & may) || grec[j] < 0) {
                race_where wh = {rank, wo};
                grec[j] = check_cell(r, c, &proto, myvc, glanes[j], 0, k, bytes, &wh);
            } else {
                cell_tuples(c)[grec[j]].lanes |= 1u << l;
            }
            continue;
        }
        int j = n++;
        *mk = stamp | (uint32_t)j;
        glanes[j] = 1u << l;
        if (c->gen != sh->gen) {
            cell_first(c, sh->gen, flags, &proto, 1u << l, 0, k, bytes);
            grec[j] = 0;
        } else {
            race_where wh = {rank, wo};
            grec[j] = check_cell(r, c, &proto, myvc, 1u << l, 0, k, bytes, &wh);
        }
    }
}

/* The lowest and highest offset of the lanes of mask. */
static void lanes_span(const uint64_t *w, uint32_t mask, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = UINT64_MAX, z = 0;
    if (mask == 0xffffffffu) {
        for (int l = 0; l < VM_WARP; l++) {
            a = w[l] < a ? w[l] : a;
            z = w[l] > z ? w[l] : z;
        }
    } else {
        for (uint32_t mm = mask; mm; mm &= mm - 1) {
            uint64_t x = w[__builtin_ctz(mm)];
            a = x < a ? x : a;
            z = x > z ? x : z;
        }
    }
    *lo = a;
    *hi = z;
}

/* Whether the offsets of the lanes of mask are all 4-byte aligned. */
static int words_aligned(const uint64_t *w, uint32_t mask)
{
    uint64_t o = 0;
    if (mask == 0xffffffffu) {
        for (int l = 0; l < VM_WARP; l++)
            o |= w[l];
    } else {
        for (uint32_t mm = mask; mm; mm &= mm - 1)
            o |= w[__builtin_ctz(mm)];
    }
    return !(o & 3);
}

/* Whether every lane of mask accesses global memory. */
static int all_global(const vm_access_lanes *lanes, uint32_t mask)
{
    for (uint32_t mm = mask; mm; mm &= mm - 1)
        if (lanes->space[__builtin_ctz(mm)] != BC_SPACE_GLOBAL)
            return 0;
    return 1;
}

/* The rank whose shared memory every lane of mask accesses with an
 * aligned 4-byte access, at addresses that rise from lane to lane (so
 * each lane is a group of its own), or -1 when the lanes are not all so. */
static int rising_words(const vm_access_lanes *lanes, uint32_t mask, int nranks)
{
    if (!mask)
        return -1;
    int l = __builtin_ctz(mask);
    int rank = lanes->rank[l];
    uint64_t prev = lanes->where[l];
    if (lanes->space[l] != BC_SPACE_SHARED || rank >= nranks || (prev & 3))
        return -1;
    for (uint32_t mm = mask & (mask - 1); mm; mm &= mm - 1) {
        l = __builtin_ctz(mm);
        uint64_t wh = lanes->where[l];
        if (lanes->space[l] != BC_SPACE_SHARED || lanes->rank[l] != rank || (wh & 3) || wh <= prev)
            return -1;
        prev = wh;
    }
    return rank;
}

/* rising_words for lanes of one region (lanes->one_region) whose offsets
 * are 4-byte aligned (words_aligned): whether they rise from lane to
 * lane. */
static int rising_region(const uint64_t *w, uint32_t mask)
{
    if (mask == 0xffffffffu) {
        int l = 1;
        while (l < VM_WARP && w[l] > w[l - 1])
            l++;
        return l == VM_WARP;
    }
    uint64_t prev = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        if (mm != mask && w[l] <= prev)
            return 0;
        prev = w[l];
    }
    return 1;
}

/* Records one warp-instruction's rising aligned 4-byte accesses (see
 * rising_words) of block rank's shared memory: what shared_access does
 * for such lanes, without grouping them. src: the stored register when
 * the op's bytes are known (kind then has RACE_K_VALUE), else NULL. */
static void shared_words(race_thread *r, int u, int rank, uint32_t fn, uint32_t pc, uint8_t kind, const uint64_t *src,
                         uint32_t mask, const vm_access_lanes *lanes)
{
    race_tuple proto;
    proto_init(&proto, r, u, fn, pc);
    const uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    race_shadow *sh = &r->shared[rank];
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t v = src ? (uint32_t)src[l] : 0; /* the low bytes on a little-endian host, as race_stored_bytes */
        record_word(r, sh, rank, lanes->where[l], &proto, myvc, 1u << l, kind, v);
    }
}

/* ---- deferred reads --------------------------------------------------------------------
 *
 * Between two barriers that order everything (a shadow generation), a
 * weak load of words nothing has written yet in the generation can only
 * race with a later write. Its records are therefore kept as a list (the
 * warp-instruction and its lane groups) and put into the cells only when
 * an access to the words they touch comes: then every deferred read is
 * recorded, in the order they ran, before that access, so each cell sees
 * the same sequence of accesses as without deferring and the reports are
 * the same. When the generation ends first, as in the read phase of a
 * tiled kernel or a double-buffered scan, the list is dropped unread. */

/* At most this many deferred lane groups per shadow, then they are recorded. */
#define RACE_PENDING_MAX 65536

/* Records the deferred reads of block rank's shared memory, in order. */
static void flush_reads(race_thread *r, int rank)
{
    race_shadow *sh = &r->shared[rank];
    for (size_t i = 0; i < sh->npend; i++) {
        const race_pending *p = &sh->pend[i];
        /* no record of the words a deferred read touches is a write (a
         * write there would have recorded the reads first), so the reader's
         * vector clock is not consulted: its current one stands in */
        const uint32_t *myvc = r->vc + (size_t)race_who_unit(p->proto.who) * (size_t)r->U;
        for (uint32_t j = 0; j < p->n; j++) {
            const race_pgroup *q = &sh->pg[p->first + j];
            if (p->size == 4 && !(q->where & 3))
                record_word(r, sh, rank, q->where, &p->proto, myvc, q->lanes, 0, 0);
            else
                record(r, rank, q->where, p->size, &p->proto, myvc, q->lanes, 0, NULL);
        }
    }
    sh->npend = sh->npg = 0;
    sh->plo = UINT64_MAX;
    sh->phi = 0;
}

/* Defers a weak load by unit u's op (fn, pc) of `size` bytes per lane
 * touching the words [lo, hi) of block rank's shared memory: its groups
 * are g, or (g NULL) each lane of mask at its own word. Returns 0 when
 * out of memory (the caller records it instead). */
static int defer_read(race_thread *r, int rank, int u, uint32_t fn, uint32_t pc, unsigned size, const race_groups *g,
                      uint32_t mask, const vm_access_lanes *lanes, uint64_t lo, uint64_t hi)
{
    race_shadow *sh = &r->shared[rank];
    size_t n = g ? (size_t)g->n : (size_t)__builtin_popcount(mask);
    if (sh->npg + n > RACE_PENDING_MAX)
        flush_reads(r, rank);
    if (util_grow(&sh->pend, &sh->cappend, sh->npend + 1, sizeof *sh->pend) ||
        util_grow(&sh->pg, &sh->cappg, sh->npg + n, sizeof *sh->pg))
        return 0;
    race_pending *p = &sh->pend[sh->npend++];
    proto_init(&p->proto, r, u, fn, pc);
    p->size = size;
    p->first = (uint32_t)sh->npg;
    p->n = (uint32_t)n;
    race_pgroup *q = sh->pg + sh->npg;
    if (g) {
        for (int j = 0; j < g->n; j++) {
            q[j].where = g->key[j] & ((1ull << RACE_RANK_SHIFT) - 1);
            q[j].lanes = g->lanes[j];
        }
    } else {
        for (uint32_t mm = mask; mm; mm &= mm - 1, q++) {
            int l = __builtin_ctz(mm);
            q->where = lanes->where[l];
            q->lanes = 1u << l;
        }
    }
    sh->npg += n;
    if (lo < sh->plo)
        sh->plo = lo;
    if (hi > sh->phi)
        sh->phi = hi;
    return 1;
}

/* Before an access to the words [lo, hi) of block rank's shared memory
 * that is recorded now: the deferred reads it may meet are recorded
 * first, and a write widens the words written. */
static inline void shadow_before(race_thread *r, int rank, uint64_t lo, uint64_t hi, int write)
{
    race_shadow *sh = &r->shared[rank];
    if (lo < sh->phi && hi > sh->plo)
        flush_reads(r, rank);
    if (write) {
        if (lo < sh->wlo)
            sh->wlo = lo;
        if (hi > sh->whi)
            sh->whi = hi;
    }
}

/* shadow_before for accesses whose words are not worked out (lanes in
 * several blocks' shared memory, cp.async completions): every block of
 * the group. */
static void shadow_before_all(race_thread *r, int write)
{
    for (int i = 0; i < r->n; i++)
        shadow_before(r, i, 0, UINT64_MAX, write);
}

/* The words [lo, hi) the groups g of `size`-byte accesses touch. */
static void groups_span(const race_groups *g, unsigned size, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = UINT64_MAX, z = 0, m = (1ull << RACE_RANK_SHIFT) - 1;
    for (int j = 0; j < g->n; j++) {
        uint64_t x = g->key[j] & m;
        if (x < a)
            a = x;
        if (x > z)
            z = x;
    }
    *lo = a & ~3ull;
    *hi = (z + size + 3) & ~3ull;
}

void race_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size)
{
    race_thread *r = t->race;
    if (!r->U || (int)b->rank >= r->n)
        return;
    if (r->dsmem)
        race_dsmem_access(r, unit_of(r, b, w), b, w, f, pc, kind, mask, lanes, size);
    const bc_op *op = &f->fn->code[pc];
    if (op->code == BC_MBARRIER) {
        mbarrier_op(r, b, w, op->mode2, op->b != BC_NONE ? f->regs + (size_t)op->b * VM_WARP : NULL, mask, lanes);
        return;
    }
    if ((op->code == BC_BULK_COPY || op->code == BC_TENSOR_COPY) && kind == VM_ACCESS_ATOMIC) {
        /* the copy's complete_tx on its mbarrier: the copied bytes (recorded
         * as this thread's accesses) are published with the phase */
        mbarrier_op(r, b, w, BC_MB_COMPLETE_TX, f->regs + (size_t)op->c * VM_WARP, mask, lanes);
        return;
    }
    int u = unit_of(r, b, w);
    uint32_t fn = (uint32_t)f->fn->index;
    if (op->code == BC_CP_ASYNC && kind == VM_ACCESS_STORE) {
        /* performed when the thread waits for its group */
        race_unit_async *q = &r->async[u];
        for (uint32_t mm = mask; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            if (lanes->space[l] != BC_SPACE_SHARED)
                continue;
            if (util_grow(&q->v, &q->cap, q->n + 1, sizeof *q->v))
                return;
            q->v[q->n++] = (race_async){lanes->where[l], pc, q->committed, (uint16_t)fn, lanes->rank[l], (uint8_t)l,
                                        (uint8_t)size};
        }
        return;
    }
    check_opinfo oi = check_op(t->launch, f->fn, pc);
    int k = kind == VM_ACCESS_LOAD ? 0 : RACE_K_WRITE;
    if (kind == VM_ACCESS_ATOMIC)
        k |= RACE_K_ATOMIC | RACE_K_STRONG;
    if (oi.flags & CHECK_OP_STRONG)
        k |= RACE_K_STRONG;
    /* whether the bytes stored are known does not depend on the lane; a
     * scalar store's bytes are the low bytes of its source register */
    int known = kind == VM_ACCESS_STORE && size <= 32 && race_stores_known(op, size);
    const uint64_t *src = known && op->n <= 1 ? f->regs + (size_t)op->b * VM_WARP : NULL;
    uint32_t global = 0;
    int rank;
    race_groups g;
    if (lanes->one_region) {
        int first = __builtin_ctz(mask);
        if (lanes->space[first] == BC_SPACE_GLOBAL) {
            global = mask;
        } else if (lanes->rank[first] < r->n) {
            /* one block's shared memory: each lane at its own word, lane
             * groups, or lanes at aligned words in any order (grouped as
             * they are recorded) */
            rank = lanes->rank[first];
            enum { WORDS, GROUPS, MARKED } shape;
            uint64_t lo, hi;
            int aligned = size >= 4 && words_aligned(lanes->where, mask);
            if (size == 4 && (!known || src) && aligned && rising_region(lanes->where, mask)) {
                shape = WORDS;
                lo = lanes->where[first];
                hi = lanes->where[31 - __builtin_clz(mask)] + 4;
            } else if (!known && mask == 0xffffffffu && tile_groups(lanes, &g)) {
                shape = GROUPS;
                groups_span(&g, size, &lo, &hi);
            } else if (size == 4 && !known && aligned) {
                shape = MARKED;
                lanes_span(lanes->where, mask, &lo, &hi);
                hi += 4;
            } else {
                /* one region: the offsets are inside the block's shared
                 * memory, which r->mark covers (race_block_begin) */
                shape = GROUPS;
                if (aligned)
                    mark_groups(r, f, op, src, known, mask, lanes, size, &g);
                else
                    group_lanes(r, f, op, src, known, mask, lanes, size, &g);
                groups_span(&g, size, &lo, &hi);
            }
            race_shadow *sh = &r->shared[rank];
            int deferred = 0;
            if (k == 0 && (hi <= sh->wlo || lo >= sh->whi)) {
                if (shape == MARKED)
                    mark_groups(r, f, op, src, known, mask, lanes, size, &g);
                deferred = defer_read(r, rank, u, fn, pc, size, shape == WORDS ? NULL : &g, mask, lanes, lo, hi);
            }
            if (!deferred) {
                shadow_before(r, rank, lo, hi, (k & RACE_K_WRITE) != 0);
                if (shape == WORDS)
                    shared_words(r, u, rank, fn, pc, (uint8_t)(known ? k | RACE_K_VALUE : k), src, mask, lanes);
                else if (shape == MARKED)
                    marked_words(r, u, rank, fn, pc, (uint8_t)k, mask, lanes);
                else
                    shared_access(r, u, f, op, pc, k, src, &g, lanes, size);
            }
        }
    } else if (all_global(lanes, mask)) {
        global = mask;
    } else if (size == 4 && (!known || src) && (rank = rising_words(lanes, mask, r->n)) >= 0) {
        shadow_before(r, rank, lanes->where[__builtin_ctz(mask)], lanes->where[31 - __builtin_clz(mask)] + 4,
                      (k & RACE_K_WRITE) != 0);
        shared_words(r, u, rank, fn, pc, (uint8_t)(known ? k | RACE_K_VALUE : k), src, mask, lanes);
    } else {
        global = group_lanes(r, f, op, src, known, mask, lanes, size, &g);
        if (g.n) {
            shadow_before_all(r, (k & RACE_K_WRITE) != 0);
            shared_access(r, u, f, op, pc, k, src, &g, lanes, size);
        }
    }
    if (global)
        race_global_access(r, u, b, w, f, pc, k | (r->acq[u] ? RACE_K_ACQ : 0), global, lanes, size);
    if (!(k & RACE_K_STRONG))
        return;
    /* synchronization: acquire what the location released, release into it */
    uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    int acquires = kind == VM_ACCESS_ATOMIC || kind == VM_ACCESS_LOAD;
    const uint32_t *rel = (oi.flags & CHECK_OP_RELEASE) ? myvc : (kind != VM_ACCESS_LOAD && r->has_fence[u])
                                                                 ? r->fvc + (size_t)u * (size_t)r->U : NULL;
    int global_acquire = 0, released_self = 0;
    /* with nothing to release, nothing released before in this cluster and
     * no gpu-scope global access, the lanes neither acquire nor release */
    if (!rel && !(acquires && r->loc_count) && (!global || (oi.flags & CHECK_OP_NARROW_SCOPE)))
        mask = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        int sp = lanes->space[l];
        if (sp != BC_SPACE_GLOBAL && sp != BC_SPACE_SHARED)
            continue;
        uint64_t key = loc_key(sp == BC_SPACE_GLOBAL, sp == BC_SPACE_GLOBAL ? 0 : lanes->rank[l], lanes->where[l]);
        if (acquires && r->loc_count) {
            race_loc *loc = loc_find(r, key, 0);
            if (loc && !loc->is_mbar) {
                r->dirty[u] |= (uint8_t)vc_join(myvc, loc->vc, r->U);
                r->acq[u] |= loc->acq;
            }
        }
        if (rel) {
            race_loc *loc = loc_find(r, key, 1);
            if (loc) {
                vc_join(loc->vc, rel, r->U);
                loc->acq |= r->acq[u];
            }
        }
        if (sp == BC_SPACE_GLOBAL && !(oi.flags & CHECK_OP_NARROW_SCOPE)) {
            if (acquires)
                global_acquire = 1;
            /* a release (or fence then strong write) releases what came
             * before and the write itself, which acquirers read */
            if (rel && kind != VM_ACCESS_LOAD) {
                vc_join(r->relf, myvc, r->U);
                released_self = 1;
            }
        }
    }
    if (global_acquire)
        r->acq[u] = 1;
    if ((oi.flags & CHECK_OP_RELEASE) || released_self)
        myvc[u]++;
}

/* ---- synchronization events ------------------------------------------------------------ */

static void async_complete(race_thread *r, int u, uint32_t mask, int all, unsigned keep)
{
    race_unit_async *q = &r->async[u];
    size_t kept = 0;
    if (q->n)
        shadow_before_all(r, 1);
    for (size_t i = 0; i < q->n; i++) {
        race_async a = q->v[i];
        int due = ((mask >> a.lane) & 1) && (all || a.group + keep < q->committed);
        if (!due) {
            q->v[kept++] = a;
            continue;
        }
        perform(r, u, a.rank, a.offset, a.size, 1u << a.lane, RACE_K_WRITE, a.fn, a.pc, NULL);
    }
    q->n = kept;
}

void race_fence(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask, int scope)
{
    race_thread *r = t->race;
    if (!r->U || (int)b->rank >= r->n)
        return;
    int u = unit_of(r, b, w);
    if (scope == VM_SCOPE_ASYNC) {
        check_opinfo oi = check_op(t->launch, f->fn, pc);
        if (oi.flags & CHECK_OP_ASYNC_COMMIT)
            r->async[u].committed++;
        else if (oi.flags & CHECK_OP_ASYNC_WAIT)
            async_complete(r, u, mask, 0, oi.wait);
        else
            async_complete(r, u, mask, 1, 0);
        return;
    }
    size_t U = (size_t)r->U;
    uint32_t *myvc = r->vc + (size_t)u * U;
    memcpy(r->fvc + (size_t)u * U, myvc, U * sizeof *myvc);
    r->has_fence[u] = 1;
    r->wsync[u]++; /* lanes that fence order their accesses (locks between lanes) */
    if (scope >= VM_SCOPE_GPU)
        vc_join(r->relf, myvc, r->U);
    myvc[u]++;
}

void race_warp_sync(check_thread *t, vm_block *b, vm_warp *w, uint32_t active, uint32_t member)
{
    race_thread *r = t->race;
    (void)active;
    if (!r->U || (int)b->rank >= r->n)
        return;
    int u = unit_of(r, b, w);
    uint32_t at = ++r->wsync[u], live = w->valid & ~w->exited, lanes = member & live;
    if (lanes == live)
        return;
    /* a sync of some lanes (the ones of a branch): it orders those only */
    race_partial_syncs *p = &r->psync[u];
    if (util_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v) == 0)
        p->v[p->n++] = (race_sync_event){at, lanes};
}

int race_warp_ordered_slow(const race_thread *r, int u, uint32_t w1, uint32_t w2, uint32_t la, uint32_t lb)
{
    if (w1 > w2) {
        uint32_t x = w1;
        w1 = w2;
        w2 = x;
    }
    const race_partial_syncs *p = &r->psync[u];
    /* the partial syncs in (w1, w2]: v[lo] to v[hi - 1] (v rises by at) */
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->v[mid].at <= w1)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (hi = lo; hi < p->n && p->v[hi].at <= w2; hi++)
        ;
    if (hi - lo < (size_t)(w2 - w1))
        return 1; /* a sync of the whole warp between them */
    for (uint32_t m = la; m; m &= m - 1) {
        uint32_t a = 1u << __builtin_ctz(m), with = a;
        for (size_t k = lo; k < hi; k++)
            if (p->v[k].lanes & a)
                with |= p->v[k].lanes;
        if (lb & ~with)
            return 0;
    }
    return 1;
}

/* Gives bar its row of bar_mem for the clocks of its arrivals, at the
 * group's first arrival (bar->acc stays NULL when out of memory). Most
 * blocks use one or two of their VM_BARRIERS barriers: rows for those only
 * keep a big cooperative group's barrier state small. */
static __attribute__((noinline)) void bar_take_row(race_thread *r, race_bar *bar)
{
    size_t U = (size_t)r->U, need = (r->bar_rows + 1) * U;
    if (need > r->bar_cap) {
        /* the rows are referenced by pointer: move them with the array */
        size_t cap = r->bar_cap ? r->bar_cap : 16 * U;
        while (cap < need)
            cap *= 2;
        uint32_t *m = malloc(cap * sizeof *m);
        if (!m)
            return;
        if (r->bar_rows) {
            memcpy(m, r->bar_mem, r->bar_rows * U * sizeof *m);
            for (size_t i = 0; i < (size_t)r->n * VM_BARRIERS; i++)
                if (r->bars[i].acc)
                    r->bars[i].acc = m + (r->bars[i].acc - r->bar_mem);
        }
        free(r->bar_mem);
        r->bar_mem = m;
        r->bar_cap = cap;
    }
    bar->acc = r->bar_mem + r->bar_rows++ * U;
    memset(bar->acc, 0, U * sizeof *bar->acc);
}

void race_barrier_arrive(check_thread *t, vm_block *b, vm_warp *w, int id)
{
    race_thread *r = t->race;
    if (!r->U || (int)b->rank >= r->n)
        return;
    int u = unit_of(r, b, w);
    uint32_t *myvc = r->vc + (size_t)u * (size_t)r->U;
    if (id < VM_BARRIERS) {
        race_bar *bar = &r->bars[(size_t)b->rank * VM_BARRIERS + (size_t)id];
        if (!bar->acc)
            bar_take_row(r, bar);
        if (bar->acc)
            vc_join(bar->acc, myvc, r->U);
        bar->acq |= r->acq[u];
        int mode = 0;
        if (w->ngroups > 0) {
            const vm_group *g = &w->groups[0];
            mode = g->frame->fn->code[g->pc].mode;
        }
        if (mode != 1)
            bar->waiters |= 1u << w->index;
        myvc[u]++;
        r->wsync[u]++;
        return;
    }
    vm_cluster *c = b->cluster;
    if (id == 0xfe || id == 0xff) {
        vc_join(r->cl_acc, myvc, r->U);
        r->cl_acc_acq |= r->acq[u];
        myvc[u]++;
        r->wsync[u]++;
        if (id == 0xff)
            r->cl_wait[u] = 1;
    } else if (c && c->phase > w->cluster_phase) {
        r->dirty[u] |= (uint8_t)vc_join(myvc, r->cl_done, r->U);
        r->acq[u] |= r->cl_done_acq;
    } else {
        r->cl_wait[u] = 1;
    }
}

void race_barrier(check_thread *t, vm_block *b, int id)
{
    race_thread *r = t->race;
    if (!r->U || (int)b->rank >= r->n || id >= VM_BARRIERS)
        return;
    race_bar *bar = &r->bars[(size_t)b->rank * VM_BARRIERS + (size_t)id];
    uint32_t *acc = bar->acc;
    for (uint32_t m = bar->waiters; m; m &= m - 1) {
        int u = (int)b->rank * r->nwarps + __builtin_ctz(m);
        if (acc)
            r->dirty[u] |= (uint8_t)vc_join(r->vc + (size_t)u * (size_t)r->U, acc, r->U);
        r->acq[u] |= bar->acq;
    }
    uint32_t all = r->nwarps >= 32 ? 0xffffffffu : (1u << r->nwarps) - 1;
    if (r->n == 1 && bar->waiters == all)
        shadow_new_generation(&r->shared[0]); /* everything before is ordered before everything after */
    if (acc)
        memset(acc, 0, (size_t)r->U * sizeof *acc);
    bar->waiters = 0;
    bar->acq = 0;
}

void race_cluster_barrier(check_thread *t, vm_block *b)
{
    race_thread *r = t->race;
    (void)b;
    if (!r->U)
        return;
    vc_join(r->cl_done, r->cl_acc, r->U);
    r->cl_done_acq |= r->cl_acc_acq;
    memset(r->cl_acc, 0, (size_t)r->U * sizeof *r->cl_acc);
    r->cl_acc_acq = 0;
    int all = 1;
    for (int u = 0; u < r->U; u++) {
        if (!r->cl_wait[u]) {
            all = 0;
            continue;
        }
        r->dirty[u] |= (uint8_t)vc_join(r->vc + (size_t)u * (size_t)r->U, r->cl_done, r->U);
        r->acq[u] |= r->cl_done_acq;
        r->cl_wait[u] = 0;
    }
    if (all)
        for (int i = 0; i < r->n; i++)
            shadow_new_generation(&r->shared[i]);
}

void race_block_end(check_thread *t, vm_block *b)
{
    race_thread *r = t->race;
    if (!r->U)
        return;
    if ((int)b->rank == r->n - 1) {
        race_dsmem_cluster_end(r, b);
        race_global_cluster_end(r);
    }
}
