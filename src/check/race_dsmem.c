/* racecheck: the lifetime of distributed shared memory. A block's shared
 * memory lives as long as the block: once the block has exited, a peer of
 * its cluster that reads or writes it (mapa + ld/st/atom.shared::cluster)
 * touches memory that is gone. So every access to a peer's shared memory
 * must happen before the peer exits, which only a cluster barrier gives:
 * the accessor arrives after the access (barrier.cluster.arrive,
 * cluster.sync()) and the peer waits for that phase before it exits. Each
 * warp's latest access to each peer block is kept with the warp's own
 * clock at it; when the cluster ends, the access is ordered before the
 * peer's exit when some warp of the peer ended with a clock that has seen
 * it. Findings are racecheck errors, "lifetime hazards", naming both
 * blocks. */
#include "check/race_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One warp's latest access to one peer block's shared memory (the first
 * of its latest epoch: later accesses with the same clock are ordered
 * alike). */
typedef struct dsm_access {
    uint32_t clock;          /* the warp's own clock at the access; 0: none */
    uint32_t fn, pc;
    uint32_t tid;            /* linear thread index in the accessing block */
    uint64_t offset;         /* byte offset in the peer's shared memory */
    uint8_t kind, size;      /* RACE_K_*, bytes per lane */
} dsm_access;

struct race_dsmem {
    dsm_access *v;           /* by unit * n + peer rank */
    size_t cap;
    uint32_t *used;          /* the entries of v in use */
    size_t nused, capused;
    int n;
};

void race_dsmem_free(race_dsmem *d)
{
    if (!d)
        return;
    free(d->v);
    free(d->used);
    free(d);
}

int race_dsmem_reset(race_thread *r, const vm_block *b)
{
    const vm_launch *L = b->launch;
    if (r->n < 2 || !(L->cluster[0] | L->cluster[1] | L->cluster[2])) {
        if (r->dsmem)
            r->dsmem->n = 0;
        return 0; /* no distributed shared memory */
    }
    if (!r->dsmem && !(r->dsmem = calloc(1, sizeof *r->dsmem)))
        return -1;
    race_dsmem *d = r->dsmem;
    for (size_t i = 0; i < d->nused; i++)
        d->v[d->used[i]].clock = 0;
    d->nused = 0;
    size_t need = (size_t)r->U * (size_t)r->n;
    if (need > d->cap) {
        free(d->v);
        d->v = calloc(need, sizeof *d->v);
        d->cap = d->v ? need : 0;
        if (!d->v) {
            d->n = 0;
            return -1;
        }
    }
    d->n = r->n;
    return 0;
}

void race_dsmem_access(race_thread *r, int u, const vm_block *b, const vm_warp *w, const vm_frame *f, uint32_t pc,
                       int kind, uint32_t mask, const vm_access_lanes *lanes, unsigned size)
{
    race_dsmem *d = r->dsmem;
    /* every lane of one region is where its lowest lane is */
    uint32_t lanes_to_see = lanes->one_region ? mask & -mask : mask;
    uint32_t clock = r->vc[(size_t)u * (size_t)r->U + (size_t)u];
    for (uint32_t mm = lanes_to_see; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        if (lanes->space[l] != BC_SPACE_SHARED || lanes->rank[l] == b->rank || lanes->rank[l] >= d->n)
            continue;
        size_t i = (size_t)u * (size_t)d->n + lanes->rank[l];
        dsm_access *a = &d->v[i];
        if (a->clock >= clock)
            continue; /* an access of this epoch is kept already */
        if (!a->clock) {
            if (util_grow(&d->used, &d->capused, d->nused + 1, sizeof *d->used))
                return;
            d->used[d->nused++] = (uint32_t)i;
        }
        uint8_t k = kind == VM_ACCESS_LOAD ? 0 : kind == VM_ACCESS_STORE ? RACE_K_WRITE : RACE_K_WRITE | RACE_K_ATOMIC;
        *a = (dsm_access){clock, (uint32_t)f->fn->index, pc, (uint32_t)(w->index * VM_WARP + l), lanes->where[l], k,
                          (uint8_t)(size > 255 ? 255 : size)};
    }
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

void race_dsmem_cluster_end(race_thread *r, const vm_block *b)
{
    race_dsmem *d = r->dsmem;
    if (!d || !d->n || !d->nused || !b->cluster)
        return;
    const vm_cluster *c = b->cluster;
    for (int i = 0; i < c->n; i++)
        if (c->blocks[i].fault.faulted)
            return; /* the blocks did not run to their exits */
    int sev = race_severity(r->owner->launch, RACE_CLASS_ERROR);
    if (sev < 0)
        return;
    qsort(d->used, d->nused, sizeof *d->used, cmp_u32);
    size_t U = (size_t)r->U;
    for (size_t k = 0; k < d->nused; k++) {
        uint32_t i = d->used[k];
        const dsm_access *a = &d->v[i];
        int u = (int)(i / (uint32_t)d->n), peer = (int)(i % (uint32_t)d->n);
        /* ordered before the peer's exit: a warp of the peer ended having
         * seen the access */
        int ordered = 0;
        for (int pw = 0; pw < r->nwarps && !ordered; pw++) {
            size_t pu = (size_t)peer * (size_t)r->nwarps + (size_t)pw;
            ordered = r->vc[pu * U + (size_t)u] >= a->clock;
        }
        if (ordered)
            continue;
        uint64_t id[3];
        race_group_id(id, a->fn, a->pc, a->kind, UINT32_MAX, UINT32_MAX, RACE_K_WRITE, 0, RACE_SCOPE_CLUSTER,
                      RACE_LIFETIME, RACE_CLASS_ERROR);
        check_group *g = check_groups_get(&r->owner->groups, KEMU_TOOL_RACECHECK, sev, id);
        if (!g)
            return;
        uint64_t accessor = r->block_id[u / r->nwarps], owner = r->block_id[peer];
        check_rep rep;
        memset(&rep, 0, sizeof rep);
        rep.order[0] = owner;
        rep.order[1] = a->offset;
        rep.order[2] = (accessor << 32) ^ a->tid;
        rep.block[0] = accessor;
        rep.block[1] = owner;
        rep.tid[0] = a->tid;
        rep.owner = owner;
        rep.address = a->offset;
        rep.a = a->size;
        check_group_note(g, race_mix((accessor << 24) ^ ((uint64_t)a->tid << 8) ^ (owner << 40) ^ owner), &rep);
    }
}

char *race_dsmem_render(const check_launch *cl, const check_group *g)
{
    static const char *const kind_names[] = {"Read", "Write", "Atomic"};
    const vm_launch *L = cl->L;
    uint32_t fn = (uint32_t)(g->id[0] >> 32), pc = (uint32_t)g->id[0];
    int k = (int)(g->id[2] >> 2) & 3;
    char d[512], blk[64], owner[64], thr[64];
    check_describe_op(L, check_function(L, fn), pc, d, sizeof d);
    check_block_coords(L, g->rep.block[0], blk, sizeof blk);
    check_block_coords(L, g->rep.owner, owner, sizeof owner);
    check_thread_coords(L, g->rep.tid[0], thr, sizeof thr);
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Race reported between %s access at %s\n", kind_names[k < 3 ? k : 0], d);
    util_buffer_printf(&t, "    and the exit of block %s [lifetime hazard: no cluster barrier orders the access "
                           "before the block that owns the memory exits]\n", owner);
    util_buffer_printf(&t, "    in __shared__ memory of block %s (distributed shared memory), byte offset %llu, "
                           "%u-byte accesses\n", owner, (unsigned long long)g->rep.address, g->rep.a);
    util_buffer_printf(&t, "    thread %s of block %s accesses the shared memory of block %s", thr, blk, owner);
    uint64_t count = check_group_count(g);
    if (count > 1)
        util_buffer_printf(&t, "; %llu more instance%s collapsed", (unsigned long long)(count - 1),
                           count == 2 ? "" : "s");
    return t.data;
}
