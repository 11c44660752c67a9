/* racecheck on global memory within a cluster. Each warp-instruction's
 * global accesses are logged as a few ranges (consecutive lanes at
 * consecutive elements, or lanes at one element) with the warp's clock
 * and a snapshot of its vector clock. When the cluster ends, the log is
 * sorted by address and swept once: two overlapping accesses of different
 * warps race unless one's snapshot covers the other's clock; lanes of one
 * warp race when no warp sync separates them. Logging is cheap on the
 * coalesced accesses kernels mostly make, and the sweep does not depend on
 * the order the warps ran in. The log then becomes the cluster's records
 * for the analysis across clusters (race_cross.c). */
#include "check/race_internal.h"

#include <stdlib.h>
#include <string.h>

void race_global_free(race_thread *r)
{
    free(r->log);
    free(r->snaps);
    r->log = NULL;
    r->snaps = NULL;
    r->nlog = r->caplog = r->nsnaps = r->capsnaps = 0;
}

/* The index of unit u's current vector clock in r->snaps. */
static uint32_t snapshot(race_thread *r, int u)
{
    if (!r->dirty[u])
        return r->snap[u];
    size_t U = (size_t)r->U;
    if (util_grow(&r->snaps, &r->capsnaps, (r->nsnaps + 1) * U, sizeof *r->snaps))
        return r->snap[u];
    memcpy(r->snaps + r->nsnaps * U, r->vc + (size_t)u * U, U * sizeof *r->snaps);
    r->snap[u] = (uint32_t)r->nsnaps++;
    r->dirty[u] = 0;
    return r->snap[u];
}

static void log_push(race_thread *r, const race_gacc *g)
{
    if (util_grow(&r->log, &r->caplog, r->nlog + 1, sizeof *r->log) == 0)
        r->log[r->nlog++] = *g;
}

/* A range of one element, lane l's at a, as this warp-instruction's
 * accesses start: with the unit's clock and vector clock snapshot. */
static void gacc_begin(race_gacc *g, race_thread *r, int u, const vm_warp *w, const vm_frame *f, uint32_t pc,
                       uint8_t kind, int l, uint64_t a, unsigned size)
{
    memset(g, 0, sizeof *g);
    g->start = a;
    g->end = a + size;
    g->pc = pc;
    g->clock = r->vc[(size_t)u * (size_t)r->U + (size_t)u];
    g->snap = snapshot(r, u);
    g->wsync = r->wsync[u];
    g->lanes = 1u << l;
    g->tid0 = (uint32_t)(w->index * VM_WARP + l);
    g->fn = (uint16_t)f->fn->index;
    g->unit = (uint16_t)u;
    g->kind = kind;
    g->esize = (uint8_t)(size > 255 ? 255 : size);
    g->pitch = g->esize;
    g->step = 1;
    g->rows = 1;
}

/* Lane l joins the open range g, which now ends at end; the range keeps
 * its one stored value only if the lane stored it too (uniform). */
static inline void gacc_join(race_gacc *g, int l, uint64_t end, int uniform)
{
    g->end = end;
    g->lanes |= 1u << l;
    if (!uniform)
        g->kind &= (uint8_t)~RACE_K_VALUE;
}

/* The common case of race_global_access: the lanes of mask are
 * consecutive and access consecutive elements, and their bytes are not
 * known or come from one register (src). Logs the one range the general
 * loop would make and returns 1, or returns 0 to leave it to that loop. */
static int global_run(race_thread *r, int u, const vm_warp *w, const vm_frame *f, uint32_t pc, int kind,
                      uint32_t mask, const vm_access_lanes *lanes, unsigned size, const uint64_t *src)
{
    int first = __builtin_ctz(mask);
    uint32_t m = mask >> first;
    if (m & (m + 1))
        return 0; /* not consecutive lanes */
    int n = __builtin_popcount(mask);
    uint64_t a0 = lanes->where[first];
    for (int i = 1; i < n; i++)
        if (lanes->where[first + i] != a0 + (uint64_t)i * size)
            return 0;
    race_gacc cur;
    gacc_begin(&cur, r, u, w, f, pc, (uint8_t)kind, first, a0, size);
    if (src) {
        uint64_t vm = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
        cur.value = src[first] & vm; /* the low bytes on a little-endian host, as race_stored_bytes */
        cur.kind |= RACE_K_VALUE;
        for (int i = 1; i < n; i++)
            if ((src[first + i] & vm) != cur.value) {
                cur.kind &= (uint8_t)~RACE_K_VALUE;
                break;
            }
    }
    cur.end = a0 + (uint64_t)n * size;
    cur.lanes = mask;
    log_push(r, &cur);
    return 1;
}

/* Lanes at distinct elements that form, in address order, one row of
 * elements pitch bytes apart, or rows of such rows (an mma fragment loaded
 * lane by lane, a 2D tile of threads), with lane numbers in the same
 * pattern: logs the one range and returns 1, or returns 0 to leave the
 * lanes to the general loop. */
static int global_grid(race_thread *r, int u, const vm_warp *w, const vm_frame *f, uint32_t pc, int kind,
                       uint32_t mask, const vm_access_lanes *lanes, unsigned size, int known_op)
{
    int n = __builtin_popcount(mask);
    if (n < 2 || size > 255)
        return 0;
    uint64_t a[VM_WARP];
    int ln[VM_WARP], k = 0, sorted = 1;
    a[0] = a[1] = 0; /* written below (n >= 2), which GCC does not see */
    ln[0] = ln[1] = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1, k++) {
        ln[k] = __builtin_ctz(mm);
        a[k] = lanes->where[ln[k]];
        sorted &= !k || a[k] > a[k - 1];
    }
    if (!sorted) /* by address, then lane */
        for (int i = 1; i < n; i++) {
            uint64_t x = a[i];
            int y = ln[i], j = i;
            for (; j > 0 && (a[j - 1] > x || (a[j - 1] == x && ln[j - 1] > y)); j--) {
                a[j] = a[j - 1];
                ln[j] = ln[j - 1];
            }
            a[j] = x;
            ln[j] = y;
        }
    uint64_t pitch = a[1] - a[0], rpitch = 0;
    int step = ln[1] - ln[0], rstep = 0, cols = 2, rows = 1;
    if (pitch < size || pitch > RACE_MAX_PITCH)
        return 0;
    while (cols < n && a[cols] - a[cols - 1] == pitch && ln[cols] - ln[cols - 1] == step)
        cols++;
    if (cols < n) {
        if (n % cols)
            return 0;
        rows = n / cols;
        rpitch = a[cols] - a[0];
        rstep = ln[cols] - ln[0];
        if (rpitch > RACE_MAX_ROW_PITCH || rpitch < (uint64_t)(cols - 1) * pitch + size)
            return 0;
        for (int i = 1; i < rows; i++)
            for (int j = 0; j < cols; j++)
                if (a[i * cols + j] != a[0] + i * rpitch + j * pitch || ln[i * cols + j] != ln[0] + i * rstep + j * step)
                    return 0;
    }
    race_gacc cur;
    gacc_begin(&cur, r, u, w, f, pc, (uint8_t)kind, ln[0], a[0], size);
    if (known_op) {
        /* the bytes stored: one value in every lane, or not kept */
        uint8_t bytes[64];
        uint64_t v0 = 0;
        cur.kind |= RACE_K_VALUE;
        for (int i = 0; i < n; i++) {
            uint64_t v = 0;
            if (!race_stored_bytes(f, &f->fn->code[pc], ln[i], bytes, size)) {
                cur.kind &= (uint8_t)~RACE_K_VALUE;
                break;
            }
            memcpy(&v, bytes, size);
            if (!i)
                v0 = v;
            else if (v != v0) {
                cur.kind &= (uint8_t)~RACE_K_VALUE;
                break;
            }
        }
        if (cur.kind & RACE_K_VALUE)
            cur.value = v0;
    }
    cur.end = a[n - 1] + size;
    cur.lanes = mask;
    cur.pitch = (uint16_t)pitch;
    cur.step = (int8_t)step;
    cur.rows = (uint8_t)rows;
    cur.cols = (uint8_t)(rows > 1 ? cols : 0);
    cur.rpitch = (uint32_t)rpitch;
    cur.rstep = (int8_t)rstep;
    log_push(r, &cur);
    return 1;
}

void race_global_access(race_thread *r, int u, const vm_block *b, const vm_warp *w, const vm_frame *f,
                        uint32_t pc, int kind, uint32_t mask, const vm_access_lanes *lanes, unsigned size)
{
    (void)b;
    const bc_op *op = &f->fn->code[pc];
    /* whether stores' bytes are known is the same for every lane */
    int known_op = (kind & RACE_K_WRITE) && !(kind & RACE_K_ATOMIC) && size <= 8 && race_stores_known(op, size);
    if (mask && (!known_op || op->n <= 1) &&
        global_run(r, u, w, f, pc, kind, mask, lanes, size, known_op ? f->regs + (size_t)op->b * VM_WARP : NULL))
        return;
    if (global_grid(r, u, w, f, pc, kind, mask, lanes, size, known_op))
        return;
    race_gacc cur;
    int open = 0, single = 0, last = -1;
    uint64_t last_a = 0;
    uint8_t bytes[64];
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t a = lanes->where[l];
        int known = (kind & RACE_K_WRITE) && !(kind & RACE_K_ATOMIC) && size <= 8 &&
                    race_stored_bytes(f, op, l, bytes, size);
        uint64_t v = 0;
        if (known)
            memcpy(&v, bytes, size);
        if (open) {
            int uniform = known && (cur.kind & RACE_K_VALUE) && v == cur.value;
            if ((single || (cur.step == 1 && cur.pitch == cur.esize)) && l == last + 1 && a == cur.end) {
                gacc_join(&cur, l, a + size, uniform);
                single = 0;
                last = l;
                last_a = a;
                continue;
            }
            if ((single || cur.step == 0) && a == cur.start) {
                gacc_join(&cur, l, cur.end, uniform);
                cur.step = 0;
                single = 0;
                continue;
            }
            /* lanes step apart at elements pitch bytes apart, with a gap
             * between the elements or lanes between the lanes: a strided
             * range, compared element by element (race_elems) */
            if (size <= 255 && a >= last_a + size && a - last_a <= RACE_MAX_PITCH &&
                (single ? (l != last + 1 || a != last_a + size)
                        : cur.step && (cur.step > 1 || cur.pitch > cur.esize) && l - last == cur.step &&
                              a - last_a == cur.pitch)) {
                cur.step = (int8_t)(l - last);
                cur.pitch = (uint16_t)(a - last_a);
                gacc_join(&cur, l, a + size, uniform);
                single = 0;
                last = l;
                last_a = a;
                continue;
            }
            log_push(r, &cur);
        }
        gacc_begin(&cur, r, u, w, f, pc, (uint8_t)(kind | (known ? RACE_K_VALUE : 0)), l, a, size);
        cur.value = v;
        open = single = 1;
        last = l;
        last_a = a;
    }
    if (open)
        log_push(r, &cur);
}

/* ---- the sweep of a cluster ------------------------------------------------------------ */

static int cmp_gacc(const void *a, const void *b)
{
    const race_gacc *x = a, *y = b;
    RACE_CMP(start); RACE_CMP(end); RACE_CMP(unit); RACE_CMP(fn); RACE_CMP(pc); RACE_CMP(kind); RACE_CMP(clock);
    RACE_CMP(wsync); RACE_CMP(lanes); RACE_CMP(step); RACE_CMP(pitch); RACE_CMP(rows); RACE_CMP(cols);
    RACE_CMP(rpitch); RACE_CMP(rstep); RACE_CMP(value); RACE_CMP(snap);
    return 0;
}

static int same_access(const race_gacc *x, const race_gacc *y)
{
    return x->start == y->start && x->end == y->end && x->unit == y->unit && x->fn == y->fn && x->pc == y->pc &&
           x->kind == y->kind && x->clock == y->clock && x->wsync == y->wsync && x->lanes == y->lanes &&
           x->step == y->step && x->pitch == y->pitch && x->rows == y->rows && x->cols == y->cols &&
           x->rpitch == y->rpitch && x->rstep == y->rstep && x->value == y->value;
}

static race_elems gacc_elems(const race_gacc *g)
{
    return race_elems_of(g->start, g->end, g->esize, g->pitch, g->step, g->rows, g->cols, g->rpitch);
}

static uint32_t gacc_tid(const race_gacc *g, uint64_t x)
{
    race_elems e = gacc_elems(g);
    return race_elem_tid(&e, g->tid0, g->step, g->rstep, x);
}

static uint32_t gacc_lanes(const race_gacc *g, uint64_t x)
{
    return g->step ? 1u << (gacc_tid(g, x) % VM_WARP) : g->lanes;
}

static void pair_piece(race_thread *r, const race_gacc *a, const race_gacc *n, int cls, uint64_t lo, uint64_t hi);

static void pair(race_thread *r, const race_gacc *a, const race_gacc *n)
{
    if (!((a->kind | n->kind) & RACE_K_WRITE))
        return;
    if ((a->start > n->start ? a->start : n->start) >= (a->end < n->end ? a->end : n->end))
        return;
    if ((a->kind & RACE_K_STRONG) && (n->kind & RACE_K_STRONG))
        return; /* morally strong accesses never race */
    int same_value = (a->kind & n->kind & RACE_K_WRITE) && (a->kind & n->kind & RACE_K_VALUE) &&
                     !((a->kind | n->kind) & RACE_K_ATOMIC) && a->esize == n->esize && a->value == n->value;
    int cls = same_value ? RACE_CLASS_BENIGN : RACE_CLASS_ERROR;
    if (a->unit == n->unit) {
        if (r->warp_level == KEMU_CHECK_OFF)
            return;
        cls = same_value ? RACE_CLASS_WARP_BENIGN : RACE_CLASS_WARP;
    } else {
        size_t U = (size_t)r->U;
        if (r->snaps[(size_t)n->snap * U + a->unit] >= a->clock || r->snaps[(size_t)a->snap * U + n->unit] >= n->clock)
            return;
    }
    /* the bytes both cover, in pieces (one per element of a strided range) */
    race_elems ea = gacc_elems(a), en = gacc_elems(n);
    uint64_t at = 0, lo, hi;
    while (race_piece(&ea, &en, &at, &lo, &hi))
        pair_piece(r, a, n, cls, lo, hi);
}

static void pair_piece(race_thread *r, const race_gacc *a, const race_gacc *n, int cls, uint64_t lo, uint64_t hi)
{
    if (a->unit == n->unit) {
        /* lanes of one warp: ordered by warp syncs only, whichever ran
         * first, also when both ran one op (a loop, divergent paths
         * through one instruction, lanes of one warp-instruction) */
        uint32_t la = gacc_lanes(a, lo), ln = gacc_lanes(n, lo);
        if (la == ln && !(la & (la - 1)))
            return; /* one thread */
        if (race_warp_ordered(r, a->unit, a->wsync, n->wsync, la, ln))
            return;
    }
    int ra = a->unit / r->nwarps, rn = n->unit / r->nwarps;
    int scope = ra == rn ? RACE_SCOPE_BLOCK : RACE_SCOPE_CLUSTER;
    uint64_t words = ((hi - 1) >> 2) - (lo >> 2) + 1;
    if (words > 4096)
        words = 4096;
    for (uint64_t k = 0; k < words; k++) {
        uint64_t x = k ? ((lo >> 2) + k) << 2 : lo;
        race_side sa = {a->fn, a->pc, a->kind, r->block_id[ra], gacc_tid(a, x), a->esize};
        race_side sn = {n->fn, n->pc, n->kind, r->block_id[rn], gacc_tid(n, x), n->esize};
        if ((cls == RACE_CLASS_WARP || cls == RACE_CLASS_WARP_BENIGN) && sa.tid == sn.tid) {
            /* broadcast ranges: name two different lanes */
            uint32_t other = gacc_lanes(a, x) & ~(1u << (sn.tid % VM_WARP));
            if (!other)
                continue;
            sa.tid = sa.tid - sa.tid % VM_WARP + (uint32_t)__builtin_ctz(other);
        }
        race_report(r, sa, sn, 1, scope, cls, 0, x, race_mix(r->cluster_key * 0x9e3779b97f4a7c15ull ^ ((x >> 2) + 1)));
    }
}

/* Lanes of one warp-instruction that store to one element (a range of
 * step 0 with two or more lanes, plain stores): a race between them,
 * whatever order they ran in. */
static void self_pair(race_thread *r, const race_gacc *c)
{
    if (c->step || !(c->lanes & (c->lanes - 1)) || (c->kind & (RACE_K_WRITE | RACE_K_STRONG)) != RACE_K_WRITE ||
        r->warp_level == KEMU_CHECK_OFF)
        return;
    int rank = c->unit / r->nwarps;
    uint32_t l0 = (uint32_t)__builtin_ctz(c->lanes), l1 = (uint32_t)__builtin_ctz(c->lanes & (c->lanes - 1));
    uint32_t base = c->tid0 - c->tid0 % VM_WARP;
    race_side sa = {c->fn, c->pc, c->kind, r->block_id[rank], base + l0, c->esize};
    race_side sn = {c->fn, c->pc, c->kind, r->block_id[rank], base + l1, c->esize};
    int cls = (c->kind & RACE_K_VALUE) ? RACE_CLASS_WARP_BENIGN : RACE_CLASS_WARP;
    race_report(r, sa, sn, 1, RACE_SCOPE_BLOCK, cls, 0, c->start,
                race_mix(r->cluster_key * 0x9e3779b97f4a7c15ull ^ ((c->start >> 2) + 1)));
}

static void prune(const race_gacc *v, size_t *list, size_t *n, uint64_t pos)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (v[list[i]].end > pos)
            list[k++] = list[i];
    *n = k;
}

/* The sweep over the first n entries of the log, sorted by address. */
static void sweep(race_thread *r, size_t n)
{
    size_t *reads = malloc(n * sizeof *reads), *writes = malloc(n * sizeof *writes);
    if (!reads || !writes) {
        free(reads);
        free(writes);
        return;
    }
    size_t nr = 0, nw = 0, nr_kept = 0;
    for (size_t i = 0; i < n; i++) {
        const race_gacc *c = &r->log[i];
        prune(r->log, writes, &nw, c->start);
        for (size_t k = 0; k < nw; k++)
            pair(r, &r->log[writes[k]], c);
        if (c->kind & RACE_K_WRITE) {
            self_pair(r, c);
            prune(r->log, reads, &nr, c->start);
            nr_kept = nr;
            for (size_t k = 0; k < nr; k++)
                pair(r, &r->log[reads[k]], c);
            writes[nw++] = i;
        } else {
            if (nr > 2 * nr_kept + 64) {
                prune(r->log, reads, &nr, c->start);
                nr_kept = nr;
            }
            reads[nr++] = i;
        }
    }
    free(reads);
    free(writes);
}

/* ---- records for the analysis across clusters -------------------------------------------- */

static int cmp_record(const void *a, const void *b)
{
    const race_interval *x = a, *y = b;
    int kx = x->kind & (RACE_K_KEY | RACE_K_VALUE), ky = y->kind & (RACE_K_KEY | RACE_K_VALUE);
    if (kx != ky) return kx < ky ? -1 : 1;
    RACE_CMP(released); RACE_CMP(fn); RACE_CMP(pc); RACE_CMP(block); RACE_CMP(esize); RACE_CMP(step);
    RACE_CMP(pitch); RACE_CMP(rows); RACE_CMP(cols); RACE_CMP(rpitch); RACE_CMP(rstep); RACE_CMP(start);
    RACE_CMP(end); RACE_CMP(tid0); RACE_CMP(value);
    return 0;
}

/* The thread of a contiguous record (step 1) at x. */
static uint32_t record_tid(const race_interval *v, uint64_t x)
{
    return v->tid0 + (uint32_t)((x - v->start) / (v->pitch ? v->pitch : 1));
}

static void emit(race_thread *r)
{
    size_t base = r->niv;
    if (util_grow(&r->iv, &r->capiv, r->niv + r->nlog, sizeof *r->iv))
        return;
    for (size_t i = 0; i < r->nlog; i++) {
        const race_gacc *g = &r->log[i];
        race_interval *o = &r->iv[r->niv++];
        memset(o, 0, sizeof *o);
        o->start = g->start;
        o->end = g->end;
        o->block = r->block_id[g->unit / r->nwarps];
        o->cluster = r->cluster_key;
        o->pc = g->pc;
        o->fn = g->fn;
        o->kind = g->kind;
        o->released = g->clock <= r->relf[g->unit];
        o->value = g->value;
        o->tid0 = g->tid0;
        o->step = g->step;
        o->esize = g->esize;
        o->pitch = g->pitch;
        o->rows = g->rows;
        o->cols = g->cols;
        o->rpitch = g->rpitch;
        o->rstep = g->rstep;
    }
    /* coalesce the cluster's records: consecutive ranges of one op */
    race_interval *v = r->iv + base;
    size_t n = r->niv - base, k = 0;
    util_sort(v, n, sizeof *v, cmp_record);
    for (size_t i = 0; i < n; i++) {
        race_interval *c = &v[i];
        if (k) {
            race_interval *p = &v[k - 1];
            int same = (p->kind & (RACE_K_KEY | RACE_K_VALUE)) == (c->kind & (RACE_K_KEY | RACE_K_VALUE)) &&
                       p->released == c->released && p->fn == c->fn && p->pc == c->pc && p->block == c->block &&
                       p->esize == c->esize && p->step == c->step && p->pitch == c->pitch && p->rows == c->rows &&
                       p->cols == c->cols && p->rpitch == c->rpitch && p->rstep == c->rstep;
            if (same && p->start == c->start && p->end == c->end && p->tid0 == c->tid0 && p->value == c->value)
                continue; /* the same range again */
            if (same && p->step == 1 && p->pitch == p->esize && p->rows <= 1 && c->start == p->end && c->tid0 == record_tid(p, c->start) &&
                (!(p->kind & RACE_K_VALUE) || p->value == c->value)) {
                p->end = c->end;
                continue;
            }
        }
        v[k++] = *c;
    }
    r->niv = base + k;
}

/* Moves to the front of the log the accesses that can take part in a race
 * within the cluster: the writes and the reads that overlap one of them
 * (every race has a write). Returns how many; the rest only become
 * records for the analysis across clusters. A kernel that reads much and
 * writes little (operands loaded lane by lane) then sorts and sweeps a
 * small part of its log. */
static size_t can_pair_first(race_thread *r)
{
    size_t nw = 0;
    for (size_t i = 0; i < r->nlog; i++)
        nw += (r->log[i].kind & RACE_K_WRITE) != 0;
    if (!nw)
        return 0;
    race_range *written = malloc(nw * sizeof *written);
    if (!written)
        return r->nlog;
    nw = 0;
    for (size_t i = 0; i < r->nlog; i++)
        if (r->log[i].kind & RACE_K_WRITE)
            written[nw++] = (race_range){r->log[i].start, r->log[i].end};
    nw = race_range_union(written, nw);
    size_t n = 0;
    for (size_t i = 0; i < r->nlog; i++)
        if ((r->log[i].kind & RACE_K_WRITE) || race_range_hits(written, nw, r->log[i].start, r->log[i].end)) {
            race_gacc t = r->log[n];
            r->log[n++] = r->log[i];
            r->log[i] = t;
        }
    free(written);
    return n;
}

void race_global_cluster_end(race_thread *r)
{
    if (!r->nlog)
        return;
    size_t n = can_pair_first(r);
    util_sort(r->log, n, sizeof *r->log, cmp_gacc);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || !same_access(&r->log[k - 1], &r->log[i]))
            r->log[k++] = r->log[i];
    /* the others stay behind them (emit sorts and merges every record) */
    memmove(r->log + k, r->log + n, (r->nlog - n) * sizeof *r->log);
    r->nlog -= n - k;
    sweep(r, k);
    emit(r);
}
