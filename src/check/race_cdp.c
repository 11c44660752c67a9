/* racecheck across grids of CUDA dynamic parallelism. kemu runs a child
 * grid after its parent grid has ended (src/exec/launch.c), so the
 * per-launch analysis never sees the two together. CDP2 orders before a
 * child grid only what the launching thread did before the launch, and
 * what happened before that in its block through the usual rules (here:
 * accesses of the block's threads before a CTA barrier that the launching
 * thread passed before the launch). Every other access of the parent grid
 * (a write after the launch, another block's write) is unordered with the
 * child grid and all its descendants.
 *
 * A grid that may launch records its global accesses (a wrapper around
 * the launch's hook table, forwarding every event); each launch takes a
 * mark (block, thread, place in the block's order, barriers passed). When
 * a child's subtree has run, its accesses are compared with the parent's
 * accesses the mark does not order, and conflicts (one a write, not both
 * atomics) are reported as racecheck errors, one per pair of instructions.
 * The child's accesses then count as the parent's descendants' for the
 * grandparent. Races between sibling grids are not analysed. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cdp_access {
    uint64_t start, end;
    const bc_function *fn;
    uint32_t pc;
    int kind;                    /* VM_ACCESS_* */
    uint64_t block_id;
    uint32_t thread;             /* linear index in the block */
    uint64_t stamp;              /* place in the order of the block's events */
    uint32_t epoch;              /* CTA barriers the block had completed */
    unsigned ctaid[3], tid[3];
} cdp_access;

typedef struct cdp_pair {
    const bc_function *fn1, *fn2;
    uint32_t pc1, pc2;
} cdp_pair;

struct check_cdp {
    vm_hooks_chain chain;        /* first: installed in the launch; records, then forwards to the hooks before it */
    check_cdp *root;             /* the host launch's: keeps the pairs reported for the whole tree */
    uint64_t skip_base, skip_size; /* the device launches' parameter buffers: not recorded */
    check_session *s;
    const vm_launch *L;
    pthread_mutex_t lock;
    cdp_access *own;             /* this grid's accesses */
    size_t nown, capown;
    cdp_access *desc;            /* its descendants' (once their subtrees ran) */
    size_t ndesc, capdesc;
    cdp_pair *reported;
    size_t nreported, capreported;
};

/* per host thread: the blocks it runs (a cluster's interleave), their
 * barrier counts, and one event counter (monotonic within each block) */
#define CDP_SLOTS VM_MAX_CLUSTER
static _Thread_local struct { const vm_block *b; uint32_t epoch; } slots[CDP_SLOTS];
static _Thread_local uint64_t stamp_counter;

static uint32_t *epoch_of(const vm_block *b)
{
    for (int i = 0; i < CDP_SLOTS; i++)
        if (slots[i].b == b)
            return &slots[i].epoch;
    for (int i = 0; i < CDP_SLOTS; i++)
        if (!slots[i].b) {
            slots[i].b = b;
            slots[i].epoch = 0;
            return &slots[i].epoch;
        }
    slots[0].b = b;
    slots[0].epoch = 0;
    return &slots[0].epoch;
}

static uint32_t thread_linear(const vm_launch *L, const vm_warp *w, int lane)
{
    return w->tid[0][lane] + L->block[0] * (w->tid[1][lane] + L->block[1] * w->tid[2][lane]);
}

/* ---- the wrapper ---------------------------------------------------------- */

#define INNER(c) ((const check_cdp *)(c))->chain.inner

static void fw_block_begin(void *ctx, vm_block *b)
{
    for (int i = 0; i < CDP_SLOTS; i++)
        if (slots[i].b == b)
            slots[i].b = NULL;
    *epoch_of(b) = 0;
    if (INNER(ctx)->block_begin)
        INNER(ctx)->block_begin(INNER(ctx)->ctx, b);
}

static void fw_block_end(void *ctx, vm_block *b)
{
    if (INNER(ctx)->block_end)
        INNER(ctx)->block_end(INNER(ctx)->ctx, b);
    for (int i = 0; i < CDP_SLOTS; i++)
        if (slots[i].b == b)
            slots[i].b = NULL;
}

static void fw_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                      const vm_access_lanes *lanes, unsigned size)
{
    check_cdp *c = ctx;
    if (INNER(c)->access)
        INNER(c)->access(INNER(c)->ctx, b, w, f, pc, kind, mask, lanes, size);
    const vm_launch *L = b->launch;
    uint32_t epoch = *epoch_of(b);
    uint64_t stamp = ++stamp_counter;
    pthread_mutex_lock(&c->lock);
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        if (lanes->space[l] != BC_SPACE_GLOBAL || lanes->where[l] - c->skip_base < c->skip_size)
            continue;
        if (util_grow(&c->own, &c->capown, c->nown + 1, sizeof *c->own))
            break;
        cdp_access *a = &c->own[c->nown++];
        a->start = lanes->where[l];
        a->end = a->start + size;
        a->fn = f->fn;
        a->pc = pc;
        a->kind = kind;
        a->block_id = b->linear_id;
        a->thread = thread_linear(L, w, l);
        a->stamp = stamp;
        a->epoch = epoch;
        for (int i = 0; i < 3; i++) {
            a->ctaid[i] = b->ctaid[i];
            a->tid[i] = w->tid[i][l];
        }
    }
    pthread_mutex_unlock(&c->lock);
}

static void fw_barrier(void *ctx, vm_block *b, int id)
{
    (*epoch_of(b))++;
    if (INNER(ctx)->barrier)
        INNER(ctx)->barrier(INNER(ctx)->ctx, b, id);
}

check_cdp *check_cdp_begin(check_session *s, vm_launch *L, check_cdp *parent, uint64_t skip_base,
                           uint64_t skip_size)
{
    if (!s || !L->hooks || !(check_session_tools(s) & KEMU_TOOL_RACECHECK))
        return NULL;
    check_cdp *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->root = parent ? parent->root : c;
    c->skip_base = skip_base;
    c->skip_size = skip_size;
    c->s = s;
    c->L = L;
    pthread_mutex_init(&c->lock, NULL);
    vm_hooks_chain_init(&c->chain, L->hooks);
    vm_hooks *h = &c->chain.hooks;
    h->block_begin = fw_block_begin;
    h->block_end = fw_block_end;
    h->access = fw_access;
    h->barrier = fw_barrier;
    L->hooks = h;
    return c;
}

void check_cdp_mark(check_cdp *c, const vm_block *b, const vm_warp *w, int lane, uint64_t mark[4])
{
    if (!c)
        return;
    mark[0] = b->linear_id;
    mark[1] = thread_linear(b->launch, w, lane);
    mark[2] = ++stamp_counter;
    mark[3] = *epoch_of(b);
}

/* Whether the mark orders access a (of the launching grid) before the child. */
static int ordered_before(const cdp_access *a, const uint64_t mark[4])
{
    if (a->block_id != mark[0])
        return 0;
    if (a->thread == mark[1] && a->stamp < mark[2])
        return 1;
    return a->epoch < mark[3];
}

static int cmp_start(const void *x, const void *y)
{
    const cdp_access *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static const char *const kind_names[] = {"Read", "Write", "Atomic"};

static void report(check_cdp *c, const cdp_access *p, const cdp_access *x, const char *parent, const char *child)
{
    check_cdp *r = c->root; /* one report per pair of instructions in the whole tree */
    for (size_t i = 0; i < r->nreported; i++)
        if (r->reported[i].fn1 == p->fn && r->reported[i].pc1 == p->pc && r->reported[i].fn2 == x->fn &&
            r->reported[i].pc2 == x->pc)
            return;
    if (util_grow(&r->reported, &r->capreported, r->nreported + 1, sizeof *r->reported))
        return;
    r->reported[r->nreported++] = (cdp_pair){p->fn, x->fn, p->pc, x->pc};
    const vm_launch *L = c->L; /* the children are kernels of the same module */
    char d1[512], d2[512], where[128];
    check_describe_op(L, p->fn, p->pc, d1, sizeof d1);
    check_describe_op(L, x->fn, x->pc, d2, sizeof d2);
    uint64_t lo = p->start > x->start ? p->start : x->start;
    check_describe_global(L->mem, lo, where, sizeof where);
    int wp = p->kind != VM_ACCESS_LOAD, wx = x->kind != VM_ACCESS_LOAD;
    const char *hazard = wp && wx ? "WAW" : wp ? "RAW" : "WAR";
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Race reported between %s access at %s\n", kind_names[p->kind < 3 ? p->kind : 0], d1);
    util_buffer_printf(&t, "    and %s access at %s [%s hazard]\n", kind_names[x->kind < 3 ? x->kind : 0], d2, hazard);
    util_buffer_printf(&t, "    in __global__ memory at 0x%llx (%s), between kernel '%s' and a grid of '%s' that it "
                           "launched from device code: the first access was not ordered before the launch (made "
                           "after it launched the grid, or by a thread the launching thread had not synchronized "
                           "with)\n",
                       (unsigned long long)lo, where, parent, child);
    util_buffer_printf(&t, "    thread (%u,%u,%u) of block (%u,%u,%u) of '%s' and thread (%u,%u,%u) of block "
                           "(%u,%u,%u) of '%s'",
                       p->tid[0], p->tid[1], p->tid[2], p->ctaid[0], p->ctaid[1], p->ctaid[2], parent, x->tid[0],
                       x->tid[1], x->tid[2], x->ctaid[0], x->ctaid[1], x->ctaid[2], child);
    uint64_t key[4] = {UINT64_MAX - 1, lo, ((uint64_t)p->pc << 32) | x->pc, (uint64_t)p->fn->index << 32 | (uint64_t)x->fn->index};
    check_add(c->s, KEMU_TOOL_RACECHECK, CHECK_ERROR, key, t.data, NULL);
}

void check_cdp_child_done(check_cdp *c, const uint64_t mark[4], check_cdp *child, const char *child_kernel)
{
    if (!c || !child)
        return;
    /* the child's subtree: its own accesses and its descendants' */
    size_t n = child->nown + child->ndesc;
    cdp_access *sub = malloc((n ? n : 1) * sizeof *sub);
    if (!sub)
        return;
    if (child->nown)
        memcpy(sub, child->own, child->nown * sizeof *sub);
    if (child->ndesc)
        memcpy(sub + child->nown, child->desc, child->ndesc * sizeof *sub);
    /* the parent's accesses the launch does not order */
    cdp_access *un = malloc((c->nown ? c->nown : 1) * sizeof *un);
    size_t nun = 0;
    uint64_t maxlen = 0;
    for (size_t i = 0; un && i < c->nown; i++)
        if (!ordered_before(&c->own[i], mark)) {
            un[nun++] = c->own[i];
            if (c->own[i].end - c->own[i].start > maxlen)
                maxlen = c->own[i].end - c->own[i].start;
        }
    if (un && nun) {
        qsort(un, nun, sizeof *un, cmp_start);
        qsort(sub, n, sizeof *sub, cmp_start);
        const char *parent = c->L->kernel->name;
        for (size_t i = 0; i < n; i++) {
            const cdp_access *x = &sub[i];
            uint64_t from = x->start > maxlen ? x->start - maxlen : 0;
            size_t lo = 0, hi = nun;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (un[mid].start < from)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t k = lo; k < nun && un[k].start < x->end; k++) {
                const cdp_access *p = &un[k];
                if (p->end <= x->start)
                    continue;
                if (p->kind == VM_ACCESS_LOAD && x->kind == VM_ACCESS_LOAD)
                    continue;
                if (p->kind == VM_ACCESS_ATOMIC && x->kind == VM_ACCESS_ATOMIC)
                    continue;
                report(c, p, x, parent, child_kernel);
            }
        }
    }
    free(un);
    /* the subtree joins this grid's descendants */
    if (!util_grow(&c->desc, &c->capdesc, c->ndesc + n, sizeof *c->desc)) {
        memcpy(c->desc + c->ndesc, sub, n * sizeof *sub);
        c->ndesc += n;
    }
    free(sub);
}

void check_cdp_free(check_cdp *c)
{
    if (!c)
        return;
    free(c->own);
    free(c->desc);
    free(c->reported);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
