/* synccheck: misuse of synchronization. Reported: lanes of one warp that
 * reach an aligned CTA barrier at different instructions (divergent
 * bar.sync) or that skip an aligned barrier the others of the warp wait
 * at and exit, warps of a block that complete one phase of an aligned
 * CTA-wide barrier at different instructions, named barriers whose arrivals in one phase give different
 * thread counts (or counts that are not a multiple of the warp size),
 * warp-synchronous ops (__syncwarp, shfl, vote, match, redux) whose mask
 * names lanes that have exited or do not exist, or that lanes outside
 * their own mask execute, mbarriers used before mbarrier.init or given
 * more arrivals than pending, and deadlocks (every unfinished warp of a
 * block blocked), which the scheduler diagnoses. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SYNC_DIVERGENT_WARP = 1,
    SYNC_DIVERGENT_BLOCK,
    SYNC_COUNT_MISMATCH,
    SYNC_COUNT_NOT_WARPS,
    SYNC_MASK_EXITED,
    SYNC_MASK_ABSENT,
    SYNC_MASK_NOT_MEMBER,
    SYNC_MBAR_UNINIT,
    SYNC_MBAR_OVERFLOW,
    SYNC_DEADLOCK,
    SYNC_DIVERGENT_EXIT
};

#define SYNC_MAX_WARPS 32 /* 1024 threads per block */

/* One warp's arrival in the current phase of a barrier. */
typedef struct sync_arrival {
    int64_t count;           /* threads the arrival gave, -1 without a count */
    uint32_t fn, pc;
    int lane;                /* first lane of the arriving group */
    int aligned;             /* the instruction is .aligned */
} sync_arrival;

/* Part of a warp reached an aligned barrier while other lanes of it were
 * live elsewhere, not at an exit: those lanes must reach the barrier too. */
typedef struct sync_partial {
    uint32_t lanes;          /* the live lanes elsewhere (0: none pending) */
    uint32_t arrived;        /* the lanes that reached the barrier */
    uint32_t fn, pc;         /* the barrier */
    uint32_t at_fn, at_pc;   /* where the first group of `lanes` was then */
    int id;
} sync_partial;

/* The state of one block of the group a host thread runs (a cluster, or a
 * cooperative grid), by its index in the group. */
typedef struct sync_rank {
    /* arrivals of the open phase of each barrier: warps in `present` */
    sync_arrival arrivals[VM_BARRIERS][SYNC_MAX_WARPS];
    uint32_t present[VM_BARRIERS];
    sync_partial partial[SYNC_MAX_WARPS];
    check_set mbar_init;     /* shared offsets + 1 of initialized mbarriers */
} sync_rank;

struct sync_thread {
    sync_rank *ranks;
    size_t nranks;
};

static struct sync_thread *state(check_thread *t)
{
    if (!t->sync)
        t->sync = calloc(1, sizeof *t->sync);
    return t->sync;
}

void sync_thread_free(struct sync_thread *y)
{
    if (!y)
        return;
    for (size_t i = 0; i < y->nranks; i++)
        check_set_free(&y->ranks[i].mbar_init);
    free(y->ranks);
    free(y);
}

/* The state of the block with index rank in its group (NULL when out of
 * memory); new entries start zeroed. */
static sync_rank *rank_state(struct sync_thread *y, unsigned rank)
{
    if (util_grow(&y->ranks, &y->nranks, (size_t)rank + 1, sizeof *y->ranks))
        return NULL;
    return &y->ranks[rank];
}

void sync_block_begin(check_thread *t, vm_block *b)
{
    struct sync_thread *y = state(t);
    sync_rank *r = y ? rank_state(y, b->rank) : NULL;
    if (!r)
        return;
    memset(r->present, 0, sizeof r->present);
    memset(r->partial, 0, sizeof r->partial);
    check_set_free(&r->mbar_init);
}

static void note(check_thread *t, vm_block *b, int what, uint32_t fn1, uint32_t pc1, uint32_t fn2, uint32_t pc2,
                 int warp, int lane, uint32_t a, uint32_t bb, uint32_t c)
{
    uint64_t id[3] = {((uint64_t)fn1 << 32) | pc1, ((uint64_t)fn2 << 32) | pc2, (uint64_t)what};
    check_group *g = check_groups_get(&t->groups, KEMU_TOOL_SYNCCHECK, CHECK_ERROR, id);
    if (!g)
        return;
    check_rep rep;
    memset(&rep, 0, sizeof rep);
    uint32_t tid = (uint32_t)(warp * VM_WARP + lane);
    rep.order[0] = b->linear_id;
    rep.order[1] = tid;
    rep.order[2] = ((uint64_t)a << 32) | bb;
    rep.order[3] = c;
    rep.block[0] = b->linear_id;
    rep.tid[0] = tid;
    rep.a = a;
    rep.b = bb;
    rep.c = c;
    check_group_note(g, b->linear_id * 64 + (uint64_t)warp + 1, &rep);
}

/* Part of warp w reached aligned barrier id while other lanes of it were
 * live elsewhere. Lanes at an exit path (the `return` of `if (i >= n)
 * return;`) or waiting at a barrier (the arrival compares those) are
 * fine; the others are noted, and reported when the warp arrives if they
 * exited instead of reaching the barrier (sync_barrier_arrive). */
void sync_divergent_barrier(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int id,
                            uint32_t arrived)
{
    struct sync_thread *y = state(t);
    sync_rank *rs = y ? rank_state(y, b->rank) : NULL;
    if (!rs || id >= VM_BARRIERS || w->index >= SYNC_MAX_WARPS ||
        !(check_op(t->launch, f->fn, pc).flags & CHECK_OP_ALIGNED))
        return;
    sync_partial *p = &rs->partial[w->index];
    for (int k = 0; k < w->ngroups; k++) {
        const vm_group *g = &w->groups[k];
        if (g->state == VM_G_WAIT_BAR || !(g->mask & ~w->exited))
            continue;
        if (!g->frame->parent && (check_op(t->launch, g->frame->fn, g->pc).flags & CHECK_OP_EXIT_PATH))
            continue;
        if (!p->lanes) {
            *p = (sync_partial){0, arrived, (uint32_t)f->fn->index, pc, (uint32_t)g->frame->fn->index, g->pc, id};
        }
        p->lanes |= g->mask & ~w->exited;
    }
}

void sync_barrier_arrive(check_thread *t, vm_block *b, vm_warp *w, int id)
{
    struct sync_thread *y = state(t);
    if (!y || id >= VM_BARRIERS || b->rank >= y->nranks || w->ngroups == 0)
        return;
    sync_rank *rs = &y->ranks[b->rank];
    if (w->index < SYNC_MAX_WARPS && rs->partial[w->index].lanes) {
        /* lanes live elsewhere when part of the warp reached the barrier
         * that exited since: they skipped it (PTX ISA, barrier: .aligned) */
        sync_partial *p = &rs->partial[w->index];
        uint32_t skipped = p->lanes & w->exited;
        if (skipped)
            note(t, b, SYNC_DIVERGENT_EXIT, p->fn, p->pc, p->at_fn, p->at_pc, w->index, __builtin_ctz(p->arrived),
                 p->arrived, skipped, (uint32_t)p->id);
        p->lanes = 0;
    }
    /* the warp's lanes at the barrier: one instruction for an aligned barrier */
    const vm_group *g0 = &w->groups[0];
    for (int k = 1; k < w->ngroups; k++)
        if (w->groups[k].pc < g0->pc)
            g0 = &w->groups[k];
    const bc_function *fn = g0->frame->fn;
    check_opinfo oi = check_op(t->launch, fn, g0->pc);
    for (int k = 0; k < w->ngroups; k++) {
        const vm_group *g = &w->groups[k];
        if (g->frame == g0->frame && g->pc == g0->pc)
            continue;
        if (oi.flags & CHECK_OP_ALIGNED)
            note(t, b, SYNC_DIVERGENT_WARP, (uint32_t)fn->index, g0->pc, (uint32_t)g->frame->fn->index, g->pc,
                 w->index, __builtin_ctz(g0->mask), g0->mask, g->mask, (uint32_t)id);
    }
    const bc_op *op = &fn->code[g0->pc];
    int64_t count = -1;
    if (op->code == BC_BAR && (op->flags & BC_F_HAS_COUNT))
        count = (int64_t)(uint32_t)g0->frame->regs[(size_t)op->b * VM_WARP + (size_t)__builtin_ctz(g0->mask)];
    if (count >= 0 && (count % VM_WARP || count == 0))
        note(t, b, SYNC_COUNT_NOT_WARPS, (uint32_t)fn->index, g0->pc, 0, 0, w->index, __builtin_ctz(g0->mask),
             (uint32_t)count, 0, (uint32_t)id);
    if (w->index >= SYNC_MAX_WARPS)
        return;
    rs->arrivals[id][w->index] = (sync_arrival){count, (uint32_t)fn->index, g0->pc, __builtin_ctz(g0->mask),
                                                        (oi.flags & CHECK_OP_ALIGNED) != 0};
    rs->present[id] |= 1u << w->index;
}

/* A phase of barrier id completed: every warp that arrived is compared
 * with the lowest-numbered one, so the findings do not depend on the
 * order in which warps arrived. */
void sync_barrier(check_thread *t, vm_block *b, int id)
{
    struct sync_thread *y = state(t);
    if (!y || id >= VM_BARRIERS || b->rank >= y->nranks)
        return;
    sync_rank *rs = &y->ranks[b->rank];
    uint32_t present = rs->present[id];
    rs->present[id] = 0;
    if (!present)
        return;
    int r = __builtin_ctz(present);
    const sync_arrival *ref = &rs->arrivals[id][r];
    for (uint32_t mm = present & (present - 1); mm; mm &= mm - 1) {
        int wi = __builtin_ctz(mm);
        const sync_arrival *a = &rs->arrivals[id][wi];
        if (ref->count < 0 && a->count < 0) {
            /* an aligned CTA-wide barrier: every thread of the block must
             * execute the same barrier instruction (PTX ISA, barrier: .aligned) */
            if ((ref->aligned || a->aligned) && (ref->fn != a->fn || ref->pc != a->pc))
                note(t, b, SYNC_DIVERGENT_BLOCK, ref->fn, ref->pc, a->fn, a->pc, wi, a->lane, (uint32_t)r, 0,
                     (uint32_t)id);
        } else if (ref->count != a->count) {
            note(t, b, SYNC_COUNT_MISMATCH, ref->fn, ref->pc, a->fn, a->pc, wi, a->lane, (uint32_t)ref->count,
                 (uint32_t)a->count, (uint32_t)id | ((uint32_t)r << 8));
        }
    }
}

void sync_block_end(check_thread *t, vm_block *b)
{
    for (int id = 0; id < VM_BARRIERS; id++)
        sync_barrier(t, b, id);
}

void sync_warp_sync(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t active,
                    uint32_t member)
{
    uint32_t fn = (uint32_t)f->fn->index;
    uint32_t exited = member & w->valid & w->exited, absent = member & ~w->valid, outside = active & ~member;
    if (exited)
        note(t, b, SYNC_MASK_EXITED, fn, pc, 0, 0, w->index, __builtin_ctz(active), member, exited, 0);
    if (absent)
        note(t, b, SYNC_MASK_ABSENT, fn, pc, 0, 0, w->index, __builtin_ctz(active), member, absent, 0);
    if (outside)
        note(t, b, SYNC_MASK_NOT_MEMBER, fn, pc, 0, 0, w->index, __builtin_ctz(outside), member, outside, 0);
}

void sync_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size)
{
    (void)kind;
    (void)size;
    const bc_op *op = &f->fn->code[pc];
    if (op->code != BC_MBARRIER)
        return;
    struct sync_thread *y = state(t);
    if (!y)
        return;
    int sub = op->mode2;
    uint64_t seen[VM_WARP], st[VM_WARP];
    int nseen = 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        if (lanes->space[l] != BC_SPACE_SHARED || lanes->rank[l] >= y->nranks)
            continue;
        check_set *init = &y->ranks[lanes->rank[l]].mbar_init;
        uint64_t key = lanes->where[l] + 1;
        uint64_t arg = op->b != BC_NONE ? f->regs[(size_t)op->b * VM_WARP + (size_t)l] : 0;
        if (sub == BC_MB_INIT) {
            check_set_add(init, key);
        } else if (sub != BC_MB_PENDING) {
            if (!check_set_has(init, key)) {
                note(t, b, SYNC_MBAR_UNINIT, (uint32_t)f->fn->index, pc, 0, 0, w->index, l, (uint32_t)lanes->where[l],
                     lanes->rank[l], 0);
                continue;
            }
        }
        int si = -1;
        for (int i = 0; i < nseen; i++)
            if (seen[i] == ((uint64_t)lanes->rank[l] << 56 | lanes->where[l]))
                si = i;
        if (si < 0) {
            const uint8_t *p = check_shared_ptr(b, lanes->rank[l], lanes->where[l], 8);
            if (!p)
                continue;
            si = nseen++;
            seen[si] = (uint64_t)lanes->rank[l] << 56 | lanes->where[l];
            memcpy(&st[si], p, 8);
        }
        int completed, overflow, done;
        uint64_t before = st[si];
        st[si] = check_mbar_step(st[si], sub, arg, &completed, &overflow, &done);
        if (overflow)
            note(t, b, SYNC_MBAR_OVERFLOW, (uint32_t)f->fn->index, pc, 0, 0, w->index, l, (uint32_t)arg,
                 (uint32_t)(before & 0xfffff), (uint32_t)lanes->where[l]);
    }
}

void sync_launch_end(check_launch *cl, const vm_fault *fault)
{
    if (!fault || !fault->faulted || fault->status != 719 || !strstr(fault->message, "deadlock"))
        return;
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Deadlock detected in kernel %s\n%s", cl->L->kernel->name, fault->message);
    uint64_t key[4] = {cl->number, (4ull << 56) | SYNC_DEADLOCK, 0, 0};
    check_add(cl->s, KEMU_TOOL_SYNCCHECK, CHECK_ERROR, key, t.data, NULL);
}

/* Instances in blocks up to `last` (instance keys are block * 64 + warp + 1). */
static uint64_t count_upto(const check_group *g, uint64_t last)
{
    if (last == UINT64_MAX)
        return check_group_count(g);
    uint64_t n = 0;
    for (size_t i = 0; i < g->instances.cap; i++)
        if (g->instances.slots[i] && (g->instances.slots[i] - 1) / 64 <= last)
            n++;
    return n;
}

char *sync_render(const check_launch *cl, const check_group *g)
{
    const vm_launch *L = cl->L;
    /* a launch that faulted stops at its lowest faulting block; whether
     * later blocks ran depends on the host threads, so their findings are
     * not shown */
    uint64_t last = __atomic_load_n(&L->abort_id, __ATOMIC_RELAXED);
    if (g->rep.block[0] > last)
        return NULL;
    int what = (int)g->id[2];
    uint32_t fn1 = (uint32_t)(g->id[0] >> 32), pc1 = (uint32_t)g->id[0];
    uint32_t fn2 = (uint32_t)(g->id[1] >> 32), pc2 = (uint32_t)g->id[1];
    char d1[512], d2[512], blk[64], thr[64];
    check_describe_op(L, check_function(L, fn1), pc1, d1, sizeof d1);
    check_describe_op(L, check_function(L, fn2), pc2, d2, sizeof d2);
    check_block_coords(L, g->rep.block[0], blk, sizeof blk);
    check_thread_coords(L, g->rep.tid[0], thr, sizeof thr);
    int warp = (int)(g->rep.tid[0] / VM_WARP);
    util_buffer t = {0};
    switch (what) {
    case SYNC_DIVERGENT_WARP:
        util_buffer_printf(&t, "Error: Barrier error detected: divergent threads in warp %d of block %s at barrier %u\n"
                               "    lanes 0x%08x reach it at %s\n    lanes 0x%08x reach it at %s",
                           warp, blk, g->rep.c, g->rep.a, d1, g->rep.b, d2);
        break;
    case SYNC_DIVERGENT_EXIT:
        util_buffer_printf(&t, "Error: Barrier error detected: divergent threads in warp %d of block %s at barrier %u\n"
                               "    lanes 0x%08x reach it at %s\n"
                               "    lanes 0x%08x, live at %s then, exit without reaching it",
                           warp, blk, g->rep.c, g->rep.a, d1, g->rep.b, d2);
        break;
    case SYNC_DIVERGENT_BLOCK:
        util_buffer_printf(&t, "Error: Barrier error detected: warps of block %s reach barrier %u at different instructions\n"
                               "    warp %u reaches it at %s\n    warp %d reaches it at %s",
                           blk, g->rep.c, g->rep.a, d1, warp, d2);
        break;
    case SYNC_COUNT_MISMATCH:
        util_buffer_printf(&t, "Error: Barrier error detected: thread count mismatch on barrier %u in block %s\n"
                               "    warp %u arrives with %s%u threads at %s\n    warp %d arrives with %s%u threads at %s",
                           g->rep.c & 0xff, blk, g->rep.c >> 8, g->rep.a == UINT32_MAX ? "all " : "",
                           g->rep.a == UINT32_MAX ? (unsigned)L->nthreads_per_block : g->rep.a, d1, warp,
                           g->rep.b == UINT32_MAX ? "all " : "",
                           g->rep.b == UINT32_MAX ? (unsigned)L->nthreads_per_block : g->rep.b, d2);
        break;
    case SYNC_COUNT_NOT_WARPS:
        util_buffer_printf(&t, "Error: Barrier error detected: thread count %u on barrier %u is not a positive multiple of the warp size\n"
                               "    at %s\n    by warp %d of block %s",
                           g->rep.a, g->rep.c, d1, warp, blk);
        break;
    case SYNC_MASK_EXITED:
    case SYNC_MASK_ABSENT:
        util_buffer_printf(&t, "Error: Invalid warp synchronization mask 0x%08x: lanes 0x%08x %s\n    at %s\n    by warp %d of block %s",
                           g->rep.a, g->rep.b, what == SYNC_MASK_EXITED ? "have exited" : "do not exist in the block",
                           d1, warp, blk);
        break;
    case SYNC_MASK_NOT_MEMBER:
        util_buffer_printf(&t, "Error: Invalid warp synchronization mask 0x%08x: lanes 0x%08x execute it but are not in it\n"
                               "    at %s\n    by thread %s in block %s",
                           g->rep.a, g->rep.b, d1, thr, blk);
        break;
    case SYNC_MBAR_UNINIT:
        util_buffer_printf(&t, "Error: mbarrier used before initialization\n    at %s\n    by thread %s in block %s\n"
                               "    mbarrier at byte offset %u of the shared memory of cluster rank %u",
                           d1, thr, blk, g->rep.a, g->rep.b);
        break;
    case SYNC_MBAR_OVERFLOW:
        util_buffer_printf(&t, "Error: mbarrier arrive of %u with only %u arrivals pending (more arrivals than expected)\n"
                               "    at %s\n    by thread %s in block %s\n    mbarrier at byte offset %u of shared memory",
                           g->rep.a, g->rep.b, d1, thr, blk, g->rep.c);
        break;
    default:
        util_buffer_free(&t);
        return NULL;
    }
    uint64_t n = count_upto(g, last);
    if (n > 1)
        util_buffer_printf(&t, "; %llu more instance%s", (unsigned long long)(n - 1), n == 2 ? "" : "s");
    return t.data;
}
