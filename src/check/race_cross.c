/* racecheck across clusters, and the racecheck report.
 *
 * Blocks of different clusters are unordered except through
 * release/acquire. Which block's atomic happened first depends on the
 * host threads, so this analysis does not look at it: an access counts as
 * released when its block performed a gpu-scope release after it (a
 * fence, or a .release store or atomic), and as acquired when its block
 * acquired before it (an atomic, a strong or .acquire load of global
 * memory). Two conflicting accesses of different clusters race unless one
 * is released and the other acquired. The threadfence "last block"
 * reduction is clean under this rule, a missing fence or a read before the
 * atomic is not, and the verdict is the same whatever the schedule.
 *
 * Each cluster leaves its global accesses as intervals (race.c); here the
 * intervals of all clusters are sorted by address and swept once. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_interval(const void *a, const void *b)
{
    const race_interval *x = a, *y = b;
    RACE_CMP(start); RACE_CMP(end); RACE_CMP(block); RACE_CMP(fn); RACE_CMP(pc); RACE_CMP(kind); RACE_CMP(released);
    RACE_CMP(step); RACE_CMP(pitch); RACE_CMP(rows); RACE_CMP(cols); RACE_CMP(rpitch); RACE_CMP(rstep);
    return x->tid0 < y->tid0 ? -1 : x->tid0 > y->tid0;
}

static uint32_t tid_at(const race_interval *v, uint64_t addr)
{
    race_elems e = race_interval_elems(v);
    return race_elem_tid(&e, v->tid0, v->step, v->rstep, addr);
}

static void cross_piece(check_groups *out, const race_interval *a, const race_interval *b, int cls, int sev,
                        uint64_t lo, uint64_t hi);

static void cross_conflict(const check_launch *cl, check_groups *out, const race_interval *a,
                           const race_interval *b)
{
    if (a->cluster == b->cluster)
        return;
    if (!((a->kind | b->kind) & RACE_K_WRITE))
        return;
    if ((a->kind & RACE_K_STRONG) && (b->kind & RACE_K_STRONG))
        return;
    if ((a->released && (b->kind & RACE_K_ACQ)) || (b->released && (a->kind & RACE_K_ACQ)))
        return;
    if ((a->start > b->start ? a->start : b->start) >= (a->end < b->end ? a->end : b->end))
        return;
    int cls = RACE_CLASS_ERROR;
    if ((a->kind & b->kind & RACE_K_WRITE) && (a->kind & b->kind & RACE_K_VALUE) &&
        !((a->kind | b->kind) & RACE_K_ATOMIC) && a->esize == b->esize && a->value == b->value)
        cls = RACE_CLASS_BENIGN;
    int sev = race_severity(cl, cls);
    if (sev < 0)
        return;
    /* the bytes both cover, in pieces (one per element of a strided range) */
    race_elems ea = race_interval_elems(a), eb = race_interval_elems(b);
    uint64_t at = 0, lo, hi;
    while (race_piece(&ea, &eb, &at, &lo, &hi))
        cross_piece(out, a, b, cls, sev, lo, hi);
}

static void cross_piece(check_groups *out, const race_interval *a, const race_interval *b, int cls, int sev,
                        uint64_t lo, uint64_t hi)
{
    const race_interval *x = a, *y = b;
    uint32_t tx = tid_at(a, lo), ty = tid_at(b, lo);
    if (y->fn < x->fn || (y->fn == x->fn && (y->pc < x->pc || (y->pc == x->pc && y->block < x->block)))) {
        const race_interval *t = x;
        x = y;
        y = t;
        uint32_t tt = tx;
        tx = ty;
        ty = tt;
    }
    int wx = (x->kind & RACE_K_WRITE) != 0, wy = (y->kind & RACE_K_WRITE) != 0;
    int hazard = wx && wy ? RACE_WAW : wx ? RACE_RAW : RACE_WAR;
    uint64_t id[3];
    race_group_id(id, x->fn, x->pc, x->kind, y->fn, y->pc, y->kind, 1, RACE_SCOPE_GRID, hazard, cls);
    check_group *g = check_groups_get(out, KEMU_TOOL_RACECHECK, sev, id);
    if (!g)
        return;
    check_rep rep;
    memset(&rep, 0, sizeof rep);
    rep.order[0] = 0;
    rep.order[1] = lo;
    rep.order[2] = (x->block << 32) ^ tx;
    rep.order[3] = (y->block << 32) ^ ty;
    rep.block[0] = x->block;
    rep.block[1] = y->block;
    rep.tid[0] = tx;
    rep.tid[1] = ty;
    rep.address = lo;
    rep.a = x->esize;
    rep.b = y->esize;
    g->extra += ((hi - 1) >> 2) - (lo >> 2) + 1;
    check_group_offer(g, &rep);
}

/* Drops the intervals of list that end at or before pos. */
static void prune(const race_interval *v, size_t *list, size_t *n, uint64_t pos)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (v[list[i]].end > pos)
            list[k++] = list[i];
    *n = k;
}

static int cmp_range(const void *a, const void *b)
{
    const race_range *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

size_t race_range_union(race_range *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_range);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[i].start < v[k - 1].end) {
            if (v[i].end > v[k - 1].end)
                v[k - 1].end = v[i].end;
            continue;
        }
        v[k++] = v[i];
    }
    return k;
}

int race_range_hits(const race_range *u, size_t n, uint64_t start, uint64_t end)
{
    if (!n || end <= u[0].start || start >= u[n - 1].end)
        return 0; /* outside them all (often: reads of other arrays than the written ones) */
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first range that ends after start */
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && u[lo].start < end;
}

void race_launch_end(check_launch *cl, check_groups *out)
{
    /* every race involves a write: reads that overlap no write are left
     * out of the sort and the sweep (they could only meet intervals with
     * which they do not conflict, so the findings are the same) */
    size_t total = 0, nwrites = 0;
    for (size_t i = 0; i < cl->nthreads; i++) {
        size_t n;
        race_interval *src = race_thread_intervals(cl->threads[i]->race, &n);
        total += n;
        for (size_t k = 0; k < n; k++)
            nwrites += (src[k].kind & RACE_K_WRITE) != 0;
    }
    if (!nwrites)
        return;
    race_range *written = malloc(nwrites * sizeof *written);
    if (!written)
        return;
    size_t nw_ranges = 0;
    for (size_t i = 0; i < cl->nthreads; i++) {
        size_t n;
        race_interval *src = race_thread_intervals(cl->threads[i]->race, &n);
        for (size_t k = 0; k < n; k++)
            if (src[k].kind & RACE_K_WRITE)
                written[nw_ranges++] = (race_range){src[k].start, src[k].end};
    }
    nw_ranges = race_range_union(written, nw_ranges);
    race_interval *v = malloc(total * sizeof *v);
    size_t *reads = malloc(total * sizeof *reads), *writes = malloc(total * sizeof *writes);
    if (!v || !reads || !writes) {
        free(written);
        free(v);
        free(reads);
        free(writes);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < cl->nthreads; i++) {
        size_t k;
        race_interval *src = race_thread_intervals(cl->threads[i]->race, &k);
        for (size_t j = 0; j < k; j++)
            if ((src[j].kind & RACE_K_WRITE) || race_range_hits(written, nw_ranges, src[j].start, src[j].end))
                v[n++] = src[j];
    }
    free(written);
    qsort(v, n, sizeof *v, cmp_interval);
    size_t nr = 0, nw = 0, nr_pruned = 0;
    /* the checker's own groups (instances counted in `extra`): one set,
     * merged with the threads' groups by the caller */
    for (size_t i = 0; i < n; i++) {
        const race_interval *c = &v[i];
        prune(v, writes, &nw, c->start);
        int w = (c->kind & RACE_K_WRITE) != 0;
        for (size_t k = 0; k < nw; k++)
            cross_conflict(cl, out, &v[writes[k]], c);
        if (w) {
            prune(v, reads, &nr, c->start);
            nr_pruned = nr;
            for (size_t k = 0; k < nr; k++)
                cross_conflict(cl, out, &v[reads[k]], c);
            writes[nw++] = i;
        } else {
            if (nr > 2 * nr_pruned + 64) {
                prune(v, reads, &nr, c->start);
                nr_pruned = nr;
            }
            reads[nr++] = i;
        }
    }
    free(v);
    free(reads);
    free(writes);
}

/* ---- the report ------------------------------------------------------------------------- */

static const char *const kind_names[] = {"Read", "Write", "Atomic"};
static const char *const hazard_names[] = {"RAW", "WAR", "WAW"};

char *race_render(const check_launch *cl, const check_group *g)
{
    const vm_launch *L = cl->L;
    uint32_t fn1 = (uint32_t)(g->id[0] >> 32), pc1 = (uint32_t)g->id[0];
    uint32_t fn2 = (uint32_t)(g->id[1] >> 32), pc2 = (uint32_t)g->id[1];
    int space = (int)(g->id[2] >> 24) & 0xff, scope = (int)(g->id[2] >> 16) & 0xff;
    int hazard = (int)(g->id[2] >> 8) & 0xff, cls = (int)(g->id[2] >> 4) & 0xf;
    int k1 = (int)(g->id[2] >> 2) & 3, k2 = (int)g->id[2] & 3;
    if (hazard == RACE_LIFETIME)
        return race_dsmem_render(cl, g);
    char d1[512], d2[512], b0[64], b1[64], t0[64], t1[64], owner[64];
    check_describe_op(L, check_function(L, fn1), pc1, d1, sizeof d1);
    check_describe_op(L, check_function(L, fn2), pc2, d2, sizeof d2);
    check_block_coords(L, g->rep.block[0], b0, sizeof b0);
    check_block_coords(L, g->rep.block[1], b1, sizeof b1);
    check_thread_coords(L, g->rep.tid[0], t0, sizeof t0);
    check_thread_coords(L, g->rep.tid[1], t1, sizeof t1);
    check_block_coords(L, g->rep.owner, owner, sizeof owner);
    util_buffer t = {0};
    util_buffer_printf(&t, "%s: Race reported between %s access at %s\n", g->severity == CHECK_ERROR ? "Error" : "Warning",
                       kind_names[k1 < 3 ? k1 : 0], d1);
    util_buffer_printf(&t, "    and %s access at %s [%s hazard%s]\n", kind_names[k2 < 3 ? k2 : 0], d2,
                       hazard_names[hazard < 3 ? hazard : 0],
                       cls == RACE_CLASS_WARP ? " between lanes of one warp, no __syncwarp between them"
                       : cls == RACE_CLASS_WARP_BENIGN ? " between lanes of one warp, both store the same value"
                       : cls == RACE_CLASS_BENIGN ? ", both store the same value" : "");
    char sizes[64];
    if (g->rep.a == g->rep.b)
        snprintf(sizes, sizeof sizes, "%u-byte accesses", g->rep.a);
    else
        snprintf(sizes, sizeof sizes, "%u- and %u-byte accesses", g->rep.a, g->rep.b);
    if (space == 0) {
        if (scope == RACE_SCOPE_BLOCK)
            util_buffer_printf(&t, "    in __shared__ memory, byte offset %llu of block %s, %s\n",
                               (unsigned long long)g->rep.address, owner, sizes);
        else
            util_buffer_printf(&t, "    in __shared__ memory of block %s (distributed shared memory), byte offset %llu, %s\n",
                               owner, (unsigned long long)g->rep.address, sizes);
    } else {
        char where[128];
        check_describe_global(L->mem, g->rep.address, where, sizeof where);
        util_buffer_printf(&t, "    in __global__ memory at 0x%llx (%s), %s%s\n", (unsigned long long)g->rep.address,
                           where, sizes,
                           scope == RACE_SCOPE_GRID ? ", between blocks with no release/acquire ordering" : "");
    }
    if (g->rep.block[0] == g->rep.block[1])
        util_buffer_printf(&t, "    threads %s and %s of block %s", t0, t1, b0);
    else
        util_buffer_printf(&t, "    thread %s of block %s and thread %s of block %s", t0, b0, t1, b1);
    uint64_t count = check_group_count(g);
    if (count > 1)
        util_buffer_printf(&t, "; %llu more instance%s collapsed", (unsigned long long)(count - 1), count == 2 ? "" : "s");
    return t.data;
}
