/* Block and warp scheduling: lane groups (divergence and reconvergence),
 * call frames, CTA barriers, deadlock diagnosis and faults. Warps of a
 * block run one at a time in a fixed order (or a seeded pseudo-random one
 * with --schedule random:SEED), each until it blocks, yields or exits, so
 * a run is deterministic. */
#include "vm/vm_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double vm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int vm_launch_clock_expired(vm_launch *L)
{
    if (vm_now() < L->deadline)
        return 0;
    __atomic_store_n(&L->expired, 1, __ATOMIC_RELAXED);
    return 1;
}

/* ---- frames ------------------------------------------------------------- */

/* Frames allocated and not yet freed in the process (for leak tests). */
static uint64_t frames_live;

uint64_t vm_frames_live(void)
{
    return __atomic_load_n(&frames_live, __ATOMIC_RELAXED);
}

vm_frame *vm_frame_new(vm_block *b, vm_warp *w, const bc_function *fn, uint32_t local_base)
{
    (void)w;
    uint32_t nslots = fn->nslots ? fn->nslots : 1, npreds = fn->npreds ? fn->npreds : 1;
    vm_frame *f = NULL;
    /* a spare frame large enough, registers and predicates cleared as a
     * new one's */
    for (vm_frame **pp = b ? &b->spare_frames : NULL; pp && *pp; pp = &(*pp)->parent)
        if ((*pp)->slots_cap >= nslots && (*pp)->preds_cap >= npreds) {
            f = *pp;
            *pp = f->parent;
            memset(f->regs, 0, (size_t)nslots * VM_WARP * sizeof *f->regs);
            memset(f->preds, 0, npreds * sizeof *f->preds);
            break;
        }
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->regs = calloc((size_t)nslots * VM_WARP, sizeof(uint64_t));
        f->preds = calloc(npreds, sizeof(uint32_t));
        f->slots_cap = nslots;
        f->preds_cap = npreds;
        __atomic_add_fetch(&frames_live, 1, __ATOMIC_RELAXED);
        if (!f->regs || !f->preds) {
            vm_frame_free(f);
            return NULL;
        }
    }
    f->fn = fn;
    f->parent = NULL;
    f->ret_pc = f->call_index = f->lanes = f->depth = 0;
    for (uint32_t i = 0; i < fn->nconsts; i++) {
        uint64_t *s = SLOT(f->regs, fn->const_slots[i]);
        uint64_t v = fn->const_values[i];
        for (int l = 0; l < VM_WARP; l++)
            s[l] = v;
    }
    f->local_base = local_base;
    return f;
}

void vm_frame_free(vm_frame *f)
{
    if (!f)
        return;
    __atomic_sub_fetch(&frames_live, 1, __ATOMIC_RELAXED);
    free(f->regs);
    free(f->preds);
    free(f);
}

void vm_frame_release(vm_block *b, vm_frame *f)
{
    f->parent = b->spare_frames;
    b->spare_frames = f;
}

/* ---- groups ------------------------------------------------------------- */

void vm_group_split(vm_warp *w, vm_group *g, uint32_t lanes, uint32_t pc)
{
    if (!lanes)
        return;
    vm_group *n = &w->groups[w->ngroups++];
    *n = *g;
    n->mask = lanes;
    n->pc = pc;
    n->state = VM_G_RUN;
    g->mask &= ~lanes;
}

static void remove_group(vm_warp *w, int i)
{
    w->groups[i] = w->groups[w->ngroups - 1];
    w->ngroups--;
}

/* Merges groups at the same pc in the same frame and drops empty ones. */
static void merge_groups(vm_warp *w)
{
    for (int i = 0; i < w->ngroups; i++) {
        if (!w->groups[i].mask) {
            remove_group(w, i--);
            continue;
        }
    }
    for (int i = 0; i < w->ngroups; i++) {
        for (int j = i + 1; j < w->ngroups; j++) {
            vm_group *a = &w->groups[i], *c = &w->groups[j];
            if (a->pc == c->pc && a->frame == c->frame &&
                (a->state == VM_G_WAIT_BAR) == (c->state == VM_G_WAIT_BAR)) {
                a->mask |= c->mask;
                /* a waiting warp-sync op re-runs with the joined lanes: it
                 * sees afresh which of its lanes' masks are complete (two
                 * waiting groups may each complete the other's) */
                if (a->state == VM_G_WAIT_SYNC || c->state == VM_G_WAIT_SYNC)
                    a->state = VM_G_RUN;
                remove_group(w, j--);
            }
        }
    }
}

static int group_runnable(const vm_warp *w, const vm_group *g)
{
    if (g->state == VM_G_RUN)
        return 1;
    if (g->state == VM_G_WAIT_SYNC)
        return ((g->need & w->valid & ~w->exited) & ~g->mask) == 0;
    return 0;
}

/* Picks the runnable group with the lowest pc (innermost frame first), or
 * rotates to another one when the fairness counter says so. */
static int pick_group(vm_warp *w)
{
    if (w->ngroups == 1 && w->groups[0].mask) {
        /* a converged warp (the common case): nothing to merge or rotate */
        vm_group *g = &w->groups[0];
        w->rotate = 0;
        if (!group_runnable(w, g))
            return -1;
        g->state = VM_G_RUN;
        return 0;
    }
    merge_groups(w);
    int best = -1;
    for (int i = 0; i < w->ngroups; i++) {
        if (!group_runnable(w, &w->groups[i]))
            continue;
        if (best < 0 || w->groups[i].pc < w->groups[best].pc)
            best = i;
    }
    if (best >= 0 && w->rotate) {
        /* fairness: the runnable group after the one that spun, by pc,
         * wrapping around (round robin) */
        int next = -1;
        for (int i = 0; i < w->ngroups; i++) {
            if (!group_runnable(w, &w->groups[i]) || w->groups[i].pc <= w->rotate_pc)
                continue;
            if (next < 0 || w->groups[i].pc < w->groups[next].pc)
                next = i;
        }
        if (next >= 0)
            best = next;
        w->rotate = 0;
    }
    if (best >= 0)
        w->groups[best].state = VM_G_RUN;
    return best;
}

/* ---- faults ------------------------------------------------------------- */

void vm_describe_pc(const vm_block *b, const vm_frame *frame, uint32_t pc, char *where, size_t n)
{
    const vm_launch *L = b->launch;
    const bc_function *fn = frame ? frame->fn : L->kernel;
    const bc_src *src = NULL;
    if (fn && pc < fn->ncode && fn->code[pc].src < fn->nsrcs)
        src = &fn->srcs[fn->code[pc].src];
    snprintf(where, n, "<unknown>");
    if (src) {
        int k = snprintf(where, n, "%s:%d", L->ptx_filename, src->line);
        if (src->loc_file > 0 && k > 0 && (size_t)k < n) {
            const char *cu = NULL;
            for (int i = 0; i < L->nloc_files; i++)
                if (i == src->loc_file && L->loc_files[i])
                    cu = L->loc_files[i];
            if (cu)
                snprintf(where + k, n - (size_t)k, " (%s:%d)", cu, src->loc_line);
        }
    }
}

void vm_note(vm_block *b, vm_warp *w, const vm_frame *frame, uint32_t pc, uint32_t lane, const char *fmt, ...)
{
    if (b->nnotes >= VM_MAX_NOTES) {
        b->notes_dropped++;
        return;
    }
    vm_launch *L = b->launch;
    char msg[768], where[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vm_describe_pc(b, frame, pc, where, sizeof where);
    const bc_function *fn = frame ? frame->fn : L->kernel;
    util_buffer_printf(&b->notes, "kemu: note: kernel '%s', block (%u,%u,%u), thread (%u,%u,%u), at %s%s%s: %s\n",
                       L->kernel->name, b->ctaid[0], b->ctaid[1], b->ctaid[2], w->tid[0][lane], w->tid[1][lane],
                       w->tid[2][lane], where, fn && fn != L->kernel ? " in function " : "",
                       fn && fn != L->kernel ? fn->name : "", msg);
    b->nnotes++;
}

int vm_fault_at(vm_block *b, vm_warp *w, const vm_frame *frame, uint32_t pc, uint32_t lane, int status,
                const char *fmt, ...)
{
    vm_launch *L = b->launch;
    if (b->fault.faulted)
        return -1;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const bc_function *fn = frame ? frame->fn : L->kernel;
    char where[600];
    vm_describe_pc(b, frame, pc, where, sizeof where);
    unsigned t[3] = {w ? w->tid[0][lane] : 0, w ? w->tid[1][lane] : 0, w ? w->tid[2][lane] : 0};
    snprintf(b->fault.message, sizeof b->fault.message,
             "kernel '%s' faulted: %s\n  at %s%s%s\n  block (%u,%u,%u), thread (%u,%u,%u)", L->kernel->name, msg,
             where, fn && fn != L->kernel ? " in function " : "",
             fn && fn != L->kernel ? fn->name : "", b->ctaid[0], b->ctaid[1], b->ctaid[2], t[0], t[1], t[2]);
    b->fault.faulted = 1;
    b->fault.status = status;
    if (L->hooks && L->hooks->fault)
        L->hooks->fault(L->hooks->ctx, b, w, frame, pc, lane, status, b->fault.message);
    uint64_t cur = __atomic_load_n(&L->abort_id, __ATOMIC_RELAXED);
    while (b->linear_id < cur &&
           !__atomic_compare_exchange_n(&L->abort_id, &cur, b->linear_id, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
    return -1;
}

/* ---- memory resolution -------------------------------------------------- */

static const char *space_name(int space)
{
    switch (space) {
    case BC_SPACE_GLOBAL: return "global";
    case BC_SPACE_SHARED: return "shared";
    case BC_SPACE_SHARED_CLUSTER: return "shared::cluster";
    case BC_SPACE_LOCAL: return "local";
    case BC_SPACE_CONST: return "const";
    case BC_SPACE_PARAM_KERNEL: return "param";
    default: return "generic";
    }
}

/* Whether [a, a + size) lies outside every allocation but inside the
 * mapped granule of the allocation below it: its first `size` bytes
 * rounded up to a multiple of `granule` (freed ranges stay unmapped). */
static int in_mapped_granule(const mem_space *mem, uint64_t granule, uint64_t a, unsigned size)
{
    const mem_allocation *below = mem_find_below(mem, a);
    if (!below || a + size < a)
        return 0;
    uint64_t span = (below->size + granule - 1) / granule * granule;
    return a + size - below->base <= span && !mem_find_freed(mem, a);
}

/* Where stores and atomics to a mapped granule go (dropped): a slot per
 * lane, per host thread. */
static _Thread_local _Alignas(64) uint8_t mapped_sink[VM_WARP][VM_OOB_FILL_BYTES];

/* Notes where lane l's access went (for the access hook). */
static inline void lane_at(vm_access_lanes *lanes, int l, int space, uint16_t rank, uint64_t off)
{
    lanes->where[l] = off;
    lanes->rank[l] = rank;
    lanes->space[l] = (uint8_t)space;
}

static int resolve_lanes(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, uint32_t m,
                         const uint64_t *addr, int64_t imm, unsigned size, int kind, uint8_t **ptrs)
{
    vm_launch *L = b->launch;
    int is_store = kind != VM_ACCESS_LOAD;
    const char *what = kind == VM_ACCESS_ATOMIC ? "atomic" : is_store ? "store" : "load";
    vm_access_lanes lanes_buf;
    vm_access_lanes *lanes = L->hooks && L->hooks->access ? &lanes_buf : NULL;
    const mem_allocation *cache = NULL;
    mem_allocation peer_alloc;
    /* out-of-bounds loads return the fill value instead of faulting (kemu
     * call's interpret.out_of_bounds_reads = "uninitialized") */
    const uint8_t *fill = NULL;
    if (kind == VM_ACCESS_LOAD && L->oob_fill && size <= VM_OOB_FILL_BYTES)
        fill = L->oob_fill + VM_OOB_FILL_BYTES * vm_oob_fill_class(f && pc < f->fn->ncode ? f->fn->code[pc].type : 0);
    uint32_t filled = 0, mapped = 0;
    uint64_t mapped_at[VM_WARP];
#define OOB_OR(fault) \
    do { \
        if (fill) { \
            ptrs[l] = (uint8_t *)lane_fill; \
            filled |= 1u << l; \
            goto next_lane; \
        } \
        return fault; \
    } while (0)
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t a = addr[l] + (uint64_t)imm;
        const uint8_t *lane_fill = fill;
        int sp = space;
        uint64_t off = a;
        if (sp == BC_SPACE_GENERIC && (sp = vm_generic_space(a, &off)) == BC_SPACE_GENERIC)
            OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                               "illegal address: generic %s of %u bytes at 0x%llx is in no address space", what,
                               size, (unsigned long long)a));
        if (size > 1 && (off & (size - 1)) && (size & (size - 1)) == 0)
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 716,
                               "misaligned address: %s %s of %u bytes at 0x%llx is not %u-byte aligned",
                               space_name(sp), what, size, (unsigned long long)a, size);
        switch (sp) {
        case BC_SPACE_GLOBAL:
            if (lanes)
                lane_at(lanes, l, BC_SPACE_GLOBAL, 0, off);
            if (!cache || off < cache->base || off + size > cache->base + cache->size) {
                cache = mem_find(L->mem, off, size);
                if (!cache && L->peer_find) {
                    /* another device's memory (unified addressing) */
                    char why[256];
                    int r = L->peer_find(L->peer_ctx, off, size, &peer_alloc, why, sizeof why);
                    if (r > 0)
                        cache = &peer_alloc;
                    else if (r < 0)
                        return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                           "illegal address: global %s of %u bytes at 0x%llx (%s)", what, size,
                                           (unsigned long long)off, why);
                }
                if (!cache) {
                    char d[256];
                    if (fill) {
                        /* past the end of an operand whose dtype is known: its fill */
                        const mem_allocation *below = mem_find_below(L->mem, off);
                        if (below && below->fill_class)
                            lane_fill = L->oob_fill + VM_OOB_FILL_BYTES * (below->fill_class - 1);
                        OOB_OR(-1);
                    }
                    if (L->mapped_granule && size <= VM_OOB_FILL_BYTES &&
                        in_mapped_granule(L->mem, L->mapped_granule, off, size)) {
                        /* a GPU maps whole pages: loads read the fill, stores are dropped */
                        const uint8_t *pattern = L->fill_patterns +
                            VM_OOB_FILL_BYTES * vm_oob_fill_class(f && pc < f->fn->ncode ? f->fn->code[pc].type : 0);
                        if (kind == VM_ACCESS_LOAD) {
                            ptrs[l] = (uint8_t *)pattern;
                        } else {
                            memcpy(mapped_sink[l], pattern, size); /* what an atomic reads */
                            ptrs[l] = mapped_sink[l];
                        }
                        mapped |= 1u << l;
                        mapped_at[l] = off;
                        goto next_lane;
                    }
                    mem_describe_address(L->mem, off, d, sizeof d);
                    return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                       "illegal address: global %s of %u bytes at 0x%llx (%s)", what, size,
                                       (unsigned long long)off, d);
                }
            }
            if (L->heap_table && cache->kind == MEM_KIND_HEAP) {
                char d[600];
                if (vm_heap_explain(L->heap_table, off, size, d, sizeof d))
                    return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "illegal address: global %s of %u bytes: %s",
                                       what, size, d);
            }
            ptrs[l] = (uint8_t *)(uintptr_t)off;
            break;
        case BC_SPACE_SHARED:
        case BC_SPACE_SHARED_CLUSTER:
            if (fill && L->oob_shared_class)
                lane_fill = L->oob_fill + VM_OOB_FILL_BYTES * (L->oob_shared_class - 1);
            if (sp == BC_SPACE_SHARED_CLUSTER && off >= (1u << 24)) {
                uint64_t rank = (off >> 24) - 1, own = 0;
                const unsigned *cl = L->cluster;
                unsigned cx = cl[0] ? cl[0] : 1, cy = cl[1] ? cl[1] : 1, cz = cl[2] ? cl[2] : 1;
                own = (b->ctaid[0] % cx) + (b->ctaid[1] % cy) * cx + (b->ctaid[2] % cz) * cx * cy;
                off &= 0xffffff;
                if (rank != own) {
                    if (!b->cluster || rank >= (uint64_t)b->cluster->n)
                        OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                           "shared::cluster %s at 0x%llx names block rank %llu, but the cluster has %d block%s",
                                           what, (unsigned long long)a, (unsigned long long)rank,
                                           b->cluster ? b->cluster->n : 1, b->cluster && b->cluster->n == 1 ? "" : "s"));
                    vm_block *other = &b->cluster->blocks[rank];
                    if (lanes)
                        lane_at(lanes, l, BC_SPACE_SHARED, (uint16_t)rank, off);
                    if (off + size > other->shared_size || off + size < off)
                        OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                           "out-of-bounds shared::cluster %s of %u bytes at offset %llu of block rank %llu (%llu bytes of shared memory)",
                                           what, size, (unsigned long long)off, (unsigned long long)rank,
                                           (unsigned long long)other->shared_size));
                    ptrs[l] = other->shared + off;
                    break;
                }
            }
            if (off + size > b->shared_size || off + size < off)
                OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "out-of-bounds shared %s of %u bytes at offset %llu (the block has %llu bytes of shared memory)",
                                   what, size, (unsigned long long)off, (unsigned long long)b->shared_size));
            if (lanes)
                lane_at(lanes, l, BC_SPACE_SHARED, (uint16_t)b->rank, off);
            ptrs[l] = b->shared + off;
            break;
        case BC_SPACE_LOCAL:
            if (off + size > L->local_stride || off + size < off)
                OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "out-of-bounds local %s of %u bytes at offset %llu (%llu bytes of local memory per thread)",
                                   what, size, (unsigned long long)off, (unsigned long long)L->local_stride));
            if (lanes)
                lane_at(lanes, l, BC_SPACE_LOCAL, 0, off);
            ptrs[l] = w->local + (size_t)l * L->local_stride + off;
            break;
        case BC_SPACE_CONST:
            if (is_store)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "store to constant memory at offset %llu",
                                   (unsigned long long)off);
            if (off + size > L->const_size || off + size < off)
                OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "out-of-bounds const load of %u bytes at offset %llu (the module has %llu bytes of constant memory)",
                                   size, (unsigned long long)off, (unsigned long long)L->const_size));
            if (lanes)
                lane_at(lanes, l, BC_SPACE_CONST, 0, off);
            ptrs[l] = L->const_bank + off;
            break;
        case BC_SPACE_PARAM_KERNEL:
            if (is_store)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "store to kernel parameter memory at offset %llu",
                                   (unsigned long long)off);
            if (off + size > L->param_size || off + size < off)
                OOB_OR(vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "out-of-bounds param load of %u bytes at offset %llu (%llu bytes of parameters)",
                                   size, (unsigned long long)off, (unsigned long long)L->param_size));
            if (lanes)
                lane_at(lanes, l, BC_SPACE_PARAM_KERNEL, 0, off);
            ptrs[l] = L->params + off;
            break;
        default:
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "unsupported address space");
        }
    next_lane:;
    }
#undef OOB_OR
    if (mapped && L->hooks && L->hooks->mapped_access)
        L->hooks->mapped_access(L->hooks->ctx, b, w, f, pc, kind, mapped, mapped_at, size);
    filled |= mapped;
    if (lanes && (m & ~filled)) {
        lanes->one_region = 0;
        L->hooks->access(L->hooks->ctx, b, w, f, pc, kind, m & ~filled, lanes, size);
    }
    return 0;
}

int vm_resolve_watched(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, uint32_t m,
                       const uint64_t *addr, int64_t imm, unsigned size, int kind, uintptr_t *base_out)
{
    vm_launch *L = b->launch;
    int shared;
    if (!L->hooks || !L->hooks->access || !m || !vm_resolve_region(b, space, m, addr, imm, size, base_out, &shared))
        return 0;
    if (!shared && L->heap_table && b->alloc_cache->kind == MEM_KIND_HEAP)
        return 0; /* resolve_lanes checks it against the heap's allocations */
    /* every lane is in one region: the where of all 32 lanes in one pass
     * (lanes outside m are unspecified), one space and rank */
    vm_access_lanes lanes;
    uint64_t off = (uint64_t)imm - (shared && space != BC_SPACE_SHARED ? MEM_WINDOW_SHARED : 0);
    for (int l = 0; l < VM_WARP; l++)
        lanes.where[l] = addr[l] + off;
    uint16_t rank = shared ? (uint16_t)b->rank : 0;
    for (int l = 0; l < VM_WARP; l++)
        lanes.rank[l] = rank;
    memset(lanes.space, shared ? BC_SPACE_SHARED : BC_SPACE_GLOBAL, sizeof lanes.space);
    lanes.one_region = 1;
    L->hooks->access(L->hooks->ctx, b, w, f, pc, kind, m, &lanes, size);
    return 1;
}

int vm_resolve(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, uint32_t m,
               const uint64_t *addr, int64_t imm, unsigned size, int kind, uint8_t **ptrs)
{
    uintptr_t base;
    if (vm_resolve_fast(b, space, m, addr, imm, size, &base)) {
        /* base may be 0 (an offset-free global access) */
        LANES(m, ptrs[l] = (uint8_t *)(base + (uintptr_t)addr[l]));
        return 0;
    }
    if (vm_resolve_watched(b, w, f, pc, space, m, addr, imm, size, kind, &base)) {
        LANES(m, ptrs[l] = (uint8_t *)(base + (uintptr_t)addr[l]));
        return 0;
    }
    int rc = resolve_lanes(b, w, f, pc, space, m, addr, imm, size, kind, ptrs);
    const vm_hooks *fh = b->launch->hooks ? b->launch->hooks : b->launch->fault_hooks;
    if (rc && fh && fh->bad_access)
        fh->bad_access(fh->ctx, b, w, f, pc, kind, space, m, addr, imm, size);
    return rc;
}

int vm_resolve_operand(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, const bc_op *op, int space,
                       uint32_t m, const uint64_t *addr, int64_t imm, unsigned size, int kind, uint8_t **ptrs)
{
    uint64_t wrapped[VM_WARP];
    if (op->flags & BC_F_ADDR32) {
        /* every lane: the checker's fast path reads all of them */
        for (int l = 0; l < VM_WARP; l++)
            wrapped[l] = (uint32_t)(addr[l] + (uint64_t)imm);
        addr = wrapped;
        imm = 0;
    }
    return vm_resolve(b, w, f, pc, space, m, addr, imm, size, kind, ptrs);
}

int vm_read_string(vm_block *b, vm_warp *w, int lane, uint64_t addr, char *buf, size_t cap)
{
    vm_launch *L = b->launch;
    size_t n = 0;
    while (n + 1 < cap) {
        uint64_t a = addr + n;
        const uint8_t *p = NULL;
        if (a < MEM_WINDOW_SHARED) {
            if (!mem_find(L->mem, a, 1))
                return -1;
            p = (const uint8_t *)(uintptr_t)a;
        } else if (a >= MEM_WINDOW_CONST && a - MEM_WINDOW_CONST < L->const_size) {
            p = L->const_bank + (a - MEM_WINDOW_CONST);
        } else if (a >= MEM_WINDOW_SHARED && a - MEM_WINDOW_SHARED < b->shared_size) {
            p = b->shared + (a - MEM_WINDOW_SHARED);
        } else if (a >= MEM_WINDOW_LOCAL && a - MEM_WINDOW_LOCAL < L->local_stride) {
            p = w->local + (size_t)lane * L->local_stride + (a - MEM_WINDOW_LOCAL);
        } else {
            return -1;
        }
        buf[n] = (char)*p;
        if (!*p)
            return 0;
        n++;
    }
    buf[n] = 0;
    return 0;
}

/* ---- barriers ------------------------------------------------------------ */

static uint32_t live_warps(vm_block *b)
{
    return b->nlive;
}

/* Completes barrier id if every expected warp arrived: wakes the warps. */
static void barrier_check(vm_block *b, int id)
{
    vm_barrier *bar = &b->bars[id];
    if (!bar->active)
        return;
    uint32_t expected = bar->expected_warps ? bar->expected_warps : live_warps(b);
    if (bar->arrived_warps < expected)
        return;
    for (int i = 0; i < b->nwarps; i++) {
        vm_warp *w = &b->warps[i];
        if (w->state != VM_WARP_BLOCKED || w->blocked_bar != id)
            continue;
        for (int k = 0; k < w->ngroups; k++) {
            vm_group *g = &w->groups[k];
            if (g->state != VM_G_WAIT_BAR || g->bar_id != id)
                continue;
            const bc_op *op = &g->frame->fn->code[g->pc];
            if (op->code == BC_BAR && op->mode == 2 && op->d != BC_NONE) {
                uint64_t v = op->mode2 == 0 ? bar->red_popc : op->mode2 == 1 ? (bar->red_and != 0) : (bar->red_or != 0);
                if (op->mode2 == 0) {
                    uint64_t *D = SLOT(g->frame->regs, op->d);
                    LANES(g->mask, D[l] = v);
                } else {
                    uint32_t *P = &g->frame->preds[op->d];
                    *P = (*P & ~g->mask) | (v ? g->mask : 0);
                }
            }
            g->state = VM_G_RUN;
            g->pc++;
        }
        w->state = VM_WARP_READY;
    }
    memset(bar, 0, sizeof *bar);
    if (b->launch->hooks && b->launch->hooks->barrier)
        b->launch->hooks->barrier(b->launch->hooks->ctx, b, id);
}

int vm_barrier_arrive_converged(vm_block *b, vm_warp *w, int id)
{
    vm_barrier *bar = &b->bars[id];
    uint32_t expected = bar->expected_warps ? bar->expected_warps : live_warps(b);
    if (!bar->active) {
        bar->active = 1;
        bar->red_and = 1;
    }
    bar->arrived_warps++;
    if (bar->arrived_warps < expected) {
        w->state = VM_WARP_BLOCKED;
        w->blocked_bar = id;
        return 0;
    }
    /* the last to arrive: the others go on, and so does this warp, which
     * barrier_check does not touch as it is not blocked */
    barrier_check(b, id);
    return 1;
}

/* ---- cluster barrier ------------------------------------------------------ */

static uint32_t cluster_live_warps(const vm_cluster *c)
{
    uint32_t n = 0;
    for (int i = 0; i < c->n; i++)
        n += live_warps((vm_block *)&c->blocks[i]);
    return n;
}

static void release_cluster_waiters(vm_cluster *c)
{
    for (int i = 0; i < c->n; i++) {
        vm_block *b = &c->blocks[i];
        for (int k = 0; k < b->nwarps; k++) {
            vm_warp *w = &b->warps[k];
            if (w->state != VM_WARP_BLOCKED || (w->blocked_bar != 0xfd && w->blocked_bar != 0xff))
                continue;
            for (int j = 0; j < w->ngroups; j++) {
                w->groups[j].state = VM_G_RUN;
                w->groups[j].pc++;
            }
            w->state = VM_WARP_READY;
        }
    }
}

/* Completes the cluster barrier phase when every live warp has arrived. */
static void cluster_check(vm_cluster *c)
{
    if (!c || c->arrived_warps == 0 || c->arrived_warps < cluster_live_warps(c))
        return;
    c->arrived_warps = 0;
    c->phase++;
    release_cluster_waiters(c);
    vm_launch *L = c->blocks[0].launch;
    if (L->hooks && L->hooks->cluster_barrier)
        L->hooks->cluster_barrier(L->hooks->ctx, &c->blocks[0]);
}

/* A whole warp reached barrier.cluster.arrive (0xfe), .wait (0xfd) or both
 * (0xff). */
static int cluster_arrive(vm_block *b, vm_warp *w, int id)
{
    vm_cluster *c = b->cluster;
    if (b->launch->hooks && b->launch->hooks->barrier_arrive)
        b->launch->hooks->barrier_arrive(b->launch->hooks->ctx, b, w, id);
    if (id != 0xfd) {
        c->arrived_warps++;
        w->cluster_phase = c->phase;
    }
    if (id == 0xfe) {
        for (int k = 0; k < w->ngroups; k++) {
            w->groups[k].state = VM_G_RUN;
            w->groups[k].pc++;
        }
        w->state = VM_WARP_READY;
        cluster_check(c);
        return 0;
    }
    if (id == 0xfd && c->phase > w->cluster_phase) {
        /* the phase this warp arrived in has completed already */
        for (int k = 0; k < w->ngroups; k++) {
            w->groups[k].state = VM_G_RUN;
            w->groups[k].pc++;
        }
        w->state = VM_WARP_READY;
        return 0;
    }
    w->state = VM_WARP_BLOCKED;
    w->blocked_bar = id;
    cluster_check(c);
    return 0;
}

/* The warp has no runnable group: all its lanes wait at barriers (arrive),
 * it is done, or it is stuck. Returns 0, or -1 on a fault. */
static int warp_arrive(vm_block *b, vm_warp *w)
{
    if (w->ngroups == 0 || (w->valid & ~w->exited) == 0) {
        if (w->state != VM_WARP_DONE)
            b->nlive--;
        w->state = VM_WARP_DONE;
        for (int id = 0; id < VM_BARRIERS; id++)
            if (b->bars[id].active) /* a barrier others wait at may now be complete */
                barrier_check(b, id);
        cluster_check(b->cluster);
        return 0;
    }
    int id = -1, mixed = 0;
    for (int k = 0; k < w->ngroups; k++) {
        vm_group *g = &w->groups[k];
        if (g->state != VM_G_WAIT_BAR) {
            mixed = 2;
            break;
        }
        if (id < 0)
            id = g->bar_id;
        else if (id != g->bar_id)
            mixed = 1;
    }
    if (mixed) {
        vm_group *g = &w->groups[0];
        for (int k = 0; k < w->ngroups; k++)
            if (w->groups[k].state == VM_G_WAIT_SYNC)
                g = &w->groups[k];
        if (mixed == 2)
            return vm_fault_at(b, w, g->frame, g->pc, (uint32_t)__builtin_ctz(g->mask), 719,
                               "deadlock: a warp-synchronous instruction of warp %d waits for lanes 0x%08x that never arrive",
                               w->index, g->need & ~g->mask);
        return vm_fault_at(b, w, g->frame, g->pc, (uint32_t)__builtin_ctz(g->mask), 719,
                           "deadlock: lanes of warp %d wait at different barriers", w->index);
    }
    if (id >= 0xfd)
        return cluster_arrive(b, w, id);
    vm_barrier *bar = &b->bars[id];
    vm_group *g0 = &w->groups[0];
    const bc_op *op = &g0->frame->fn->code[g0->pc];
    uint32_t *preds = g0->frame->preds;
    (void)preds;
    if (!bar->active) {
        bar->active = 1;
        bar->red_and = 1;
    }
    if (op->code == BC_BAR && (op->flags & BC_F_HAS_COUNT)) {
        uint32_t count = (uint32_t)SLOT(g0->frame->regs, op->b)[__builtin_ctz(g0->mask)];
        /* arrivals that disagree on the count (undefined behaviour, which
         * synccheck reports) wait for the largest, whatever their order */
        uint32_t want = (count + VM_WARP - 1) / VM_WARP;
        if (want > bar->expected_warps)
            bar->expected_warps = want;
    }
    bar->arrived_warps++;
    if (b->launch->hooks && b->launch->hooks->barrier_arrive)
        b->launch->hooks->barrier_arrive(b->launch->hooks->ctx, b, w, id);
    if (op->code == BC_BAR && op->mode == 2) {
        for (int k = 0; k < w->ngroups; k++) {
            vm_group *g = &w->groups[k];
            const bc_op *o = &g->frame->fn->code[g->pc];
            uint32_t p = g->frame->preds[o->c];
            if (o->flags & BC_F_NEG_C) p = ~p;
            p &= g->mask;
            bar->red_popc += (uint32_t)__builtin_popcount(p);
            if (p != g->mask) bar->red_and = 0;
            if (p) bar->red_or = 1;
        }
    }
    if (op->code == BC_BAR && op->mode == 1) {
        /* bar.arrive: the warp does not wait */
        for (int k = 0; k < w->ngroups; k++) {
            w->groups[k].state = VM_G_RUN;
            w->groups[k].pc++;
        }
        w->state = VM_WARP_READY;
        barrier_check(b, id);
        return 0;
    }
    w->state = VM_WARP_BLOCKED;
    w->blocked_bar = id;
    barrier_check(b, id);
    return 0;
}

int vm_warp_run(vm_block *b, vm_warp *w)
{
    for (;;) {
        if (__atomic_load_n(&b->launch->abort_id, __ATOMIC_RELAXED) < b->linear_id && !b->fault.faulted)
            return -1;
        int gi = pick_group(w);
        if (gi < 0)
            return warp_arrive(b, w);
        /* every indirect branch, call and return comes back here: a loop
         * through brx.idx or a recursion sees the watchdog's flag */
        if (vm_launch_expired(b->launch, &b->clock_countdown)) {
            vm_group *g = &w->groups[gi];
            return vm_timeout_fault(b, w, g->frame, g->pc, g->mask ? (uint32_t)__builtin_ctz(g->mask) : 0);
        }
        /* the step limit (KEMU_STEP_LIMIT): a loop passes here at least
         * every yield_at back edges, with warp_instructions brought up to date */
        if (b->launch->step_limit && b->warp_instructions >= b->launch->step_limit) {
            vm_group *g = &w->groups[gi];
            return vm_step_limit_fault(b, w, g->frame, g->pc, g->mask ? (uint32_t)__builtin_ctz(g->mask) : 0);
        }
        int ev = vm_group_run(b, w, gi);
        if (ev == VM_EV_FAULT)
            return -1;
        if (ev == VM_EV_BLOCKED)
            return 0;
        if (ev == VM_EV_YIELD) {
            if (b->launch->random_schedule)
                w->yield_at = 16 + (uint32_t)(next_random(&b->rng) % 497);
            if (w->ngroups > 1) {
                w->rotate = 1;
                w->rotate_pc = w->groups[gi < w->ngroups ? gi : 0].pc;
            }
            return 0;
        }
        if (w->rotate && gi < w->ngroups)
            w->rotate_pc = w->groups[gi].pc;
    }
}

/* ---- block setup and scheduling ------------------------------------------- */


static int setup_block(vm_block *b, vm_launch *L, const unsigned ctaid[3], uint64_t linear_id)
{
    b->launch = L;
    b->alloc_cache = NULL;
    memcpy(b->ctaid, ctaid, sizeof b->ctaid);
    b->linear_id = linear_id;
    b->fault.faulted = 0; /* the message is written whole (snprintf) when one happens */
    b->fault.status = 0;
    b->fault.message[0] = 0;
    memset(b->bars, 0, sizeof b->bars);
    b->done = 0;
    b->rng = L->schedule_seed * 0x9e3779b97f4a7c15ull + linear_id + 1;
    uint64_t shared = L->shared_static + L->shared_dynamic;
    if (shared > b->shared_size || !b->shared) {
        free(b->shared);
        b->shared = malloc(shared ? shared : 1);
        if (!b->shared)
            return -1;
    }
    b->shared_size = shared;
    memset(b->shared, L->uninit_byte, shared);
    if (L->shared_init && L->shared_static < shared)
        memcpy(b->shared + L->shared_static, L->shared_init,
               L->shared_init_size < shared - L->shared_static ? L->shared_init_size : shared - L->shared_static);
    int nwarps = (int)((L->nthreads_per_block + VM_WARP - 1) / VM_WARP);
    if (nwarps != b->nwarps) {
        for (int i = 0; i < b->nwarps; i++) {
            free(b->warps[i].local);
            vm_frame_free(b->warps[i].root);
        }
        free(b->warps);
        b->warps = calloc((size_t)nwarps, sizeof *b->warps);
        if (!b->warps) {
            b->nwarps = 0;
            return -1;
        }
        b->nwarps = nwarps;
    }
    /* thread indices depend only on the block shape: laid out again only
     * when it changed since these warps were last set up */
    unsigned shape[4] = {L->block[0], L->block[1], L->block[2], (unsigned)L->nthreads_per_block};
    int same_shape = !memcmp(shape, b->warp_shape, sizeof shape);
    memset(b->warp_shape, 0, sizeof b->warp_shape); /* set again once every warp is laid out */
    uint64_t consts_serial = b->consts_serial;
    b->consts_serial = 0;
    b->nlive = (uint32_t)nwarps;
    for (int i = 0; i < nwarps; i++) {
        vm_warp *w = &b->warps[i];
        uint8_t *local = w->local;
        vm_frame *root = w->root;
        /* every field but the thread indices (and valid) is reset; groups
         * past ngroups are never read */
        w->index = i;
        w->exited = 0;
        w->ngroups = 0;
        w->state = VM_WARP_READY;
        w->blocked_bar = 0;
        w->cc = 0;
        w->backedges = 0;
        w->rotate = 0;
        w->rotate_pc = 0;
        w->cluster_phase = 0;
        memset(w->devrt_error, 0, sizeof w->devrt_error);
        w->local = NULL;
        w->root = NULL;
        /* the switch points of a random schedule: 16 to 512 back edges */
        w->yield_at = L->random_schedule ? 16 + (uint32_t)(next_random(&b->rng) % 497) : 256;
        if (!same_shape) {
            /* thread indices in CUDA order (x fastest), counted up rather than divided */
            memset(w->tid, 0, sizeof w->tid);
            w->valid = 0;
            uint64_t t0 = (uint64_t)i * VM_WARP;
            uint32_t tx = (uint32_t)(t0 % L->block[0]), ty = (uint32_t)(t0 / L->block[0] % L->block[1]);
            uint32_t tz = (uint32_t)(t0 / ((uint64_t)L->block[0] * L->block[1]));
            for (int l = 0; l < VM_WARP && t0 + (uint64_t)l < L->nthreads_per_block; l++) {
                w->valid |= 1u << l;
                w->tid[0][l] = tx;
                w->tid[1][l] = ty;
                w->tid[2][l] = tz;
                if (++tx == L->block[0]) {
                    tx = 0;
                    if (++ty == L->block[1]) {
                        ty = 0;
                        tz++;
                    }
                }
            }
        }
        if (L->local_stride) {
            size_t need = (size_t)L->local_stride * VM_WARP;
            if (!local || w->local_size < need) {
                free(local);
                w->local_size = 0;
                local = malloc(need);
                if (!local)
                    return -1;
                /* fresh local memory reads as the uninitialized fill, not as
                 * whatever the host allocator handed out */
                memset(local, L->uninit_byte, need);
                w->local_size = need;
            }
            w->local = local;
        } else {
            free(local);
            w->local_size = 0;
        }
        if (root && root->fn == L->kernel) {
            /* reuse the root frame: reset registers to their constants,
             * once per launch (no op writes a constant's slot) */
            const bc_function *fn = L->kernel;
            memset(root->preds, 0, (fn->npreds ? fn->npreds : 1) * sizeof(uint32_t));
            for (uint32_t c = 0; consts_serial != L->serial && c < fn->nconsts; c++) {
                uint64_t *s = SLOT(root->regs, fn->const_slots[c]);
                const uint64_t v = fn->const_values[c]; /* loaded once: the lane loop vectorizes */
                for (int l = 0; l < VM_WARP; l++)
                    s[l] = v;
            }
        } else {
            /* another kernel's (or a parked) frame: a spare that the new
             * one reuses when it has room */
            if (root) {
                root->parent = b->spare_frames;
                b->spare_frames = root;
            }
            root = vm_frame_new(b, w, L->kernel, 0);
            if (!root)
                return -1;
        }
        root->lanes = w->valid;
        root->parent = NULL;
        w->root = root;
        w->groups[0] = (vm_group){.pc = 0, .mask = w->valid, .frame = root, .state = VM_G_RUN};
        w->ngroups = 1;
        w->state = VM_WARP_READY;
    }
    memcpy(b->warp_shape, shape, sizeof shape);
    b->consts_serial = L->serial;
    return 0;
}

static void free_nonroot_frames(vm_warp *w)
{
    /* frames still referenced by groups after a fault */
    for (int k = 0; k < w->ngroups; k++) {
        vm_frame *f = w->groups[k].frame;
        while (f && f != w->root) {
            vm_frame *p = f->parent;
            /* free once: detach from every group that shares it */
            for (int j = k; j < w->ngroups; j++)
                if (w->groups[j].frame == f)
                    w->groups[j].frame = p;
            vm_frame_free(f);
            f = p;
        }
    }
    w->ngroups = 0;
}

void vm_describe_warps(vm_block *b, util_buffer *d)
{
    for (int i = 0; i < b->nwarps; i++) {
        vm_warp *w = &b->warps[i];
        if (w->state == VM_WARP_DONE)
            continue;
        for (int k = 0; k < w->ngroups; k++) {
            vm_group *g = &w->groups[k];
            const bc_function *fn = g->frame->fn;
            int line = g->pc < fn->ncode ? fn->srcs[fn->code[g->pc].src].line : 0;
            util_buffer_printf(d, "\n    warp %d lanes 0x%08x %s %s:%d", i, g->mask,
                               g->state == VM_G_RUN ? "run at" : "wait at", b->launch->ptx_filename, line);
            if (g->state == VM_G_WAIT_BAR) {
                if (g->bar_id >= 0xfd)
                    util_buffer_printf(d, " (barrier.cluster)");
                else
                    util_buffer_printf(d, " (barrier %d)", g->bar_id);
            } else if (g->state == VM_G_WAIT_SYNC) {
                util_buffer_printf(d, " (warp-synchronous op waiting for lanes 0x%08x)", g->need & ~g->mask);
            }
        }
    }
}

int vm_timeout_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane)
{
    util_buffer where = {0};
    vm_describe_warps(b, &where);
    vm_fault_at(b, w, f, pc, lane, 702, "the launch timed out after %g seconds (--timeout); the block's warps:%s",
                b->launch->timeout, where.data ? where.data : "");
    util_buffer_free(&where);
    return -1;
}

int vm_step_limit_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane)
{
    util_buffer where = {0};
    vm_describe_warps(b, &where);
    vm_fault_at(b, w, f, pc, lane, 702,
                "the block ran past the step limit of %llu warp-instructions (KEMU_STEP_LIMIT); the block's warps:%s",
                (unsigned long long)b->launch->step_limit, where.data ? where.data : "");
    util_buffer_free(&where);
    return -1;
}

static int report_deadlock(vm_block *b)
{
    util_buffer d = {0};
    vm_describe_warps(b, &d);
    vm_warp *w0 = NULL;
    for (int i = 0; i < b->nwarps && !w0; i++)
        if (b->warps[i].state != VM_WARP_DONE)
            w0 = &b->warps[i];
    vm_group *g = w0 && w0->ngroups ? &w0->groups[0] : NULL;
    vm_fault_at(b, w0, g ? g->frame : NULL, g ? g->pc : 0, g ? (uint32_t)__builtin_ctz(g->mask) : 0, 719,
                "deadlock: every unfinished warp of the block is blocked and no barrier can complete;%s",
                d.data ? d.data : "");
    util_buffer_free(&d);
    return -1;
}

/* ---- livelock: a cluster whose whole state repeats ---------------------------
 *
 * A cluster whose warps only spin (wait on a flag nobody sets, poll an
 * mbarrier that never completes, while their peers wait at a barrier)
 * never blocks, so the deadlock check above never sees it. It is proven
 * stuck when its complete state comes back: the SIMT state and registers
 * of every warp, barrier and cluster-barrier state, shared and local
 * memory, printf and heap counters, and global memory, at two ends of
 * scheduling rounds. Execution is deterministic, so equal states repeat
 * forever, provided nothing else changes that state: no other cluster
 * runs (this one is the last unfinished, or clusters run one at a time),
 * and the launch is closed (vm_launch.livelock_check: no random schedule,
 * no clock read, no host function, no host thread writing device memory).
 * Checks start after vm_launch.livelock_grace seconds (1 by default); each takes one snapshot and
 * compares the next SPIN_ROUNDS rounds' states with it (cycles of up to
 * that many rounds: a warp that yields at every poll, as at a failed
 * mbarrier test_wait, counts its back edges up to its yield point, 256,
 * so its state comes back every 256 rounds), then waits at least 20 times
 * what the hashing cost, so a long kernel that is not stuck loses at most
 * a few percent. */
#define SPIN_ROUNDS 520

typedef struct spin_hash { uint64_t a, b; } spin_hash;

static void hash_words(spin_hash *h, const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t a = h->a, b = h->b;
    for (; n >= 8; n -= 8, s += 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        a = (a ^ v) * 0x9e3779b97f4a7c15ull;
        a ^= a >> 29;
        b = (b + v) * 0xff51afd7ed558ccdull;
        b ^= b >> 31;
    }
    if (n) {
        uint64_t v = 0;
        memcpy(&v, s, n);
        a = (a ^ v ^ ((uint64_t)n << 56)) * 0x9e3779b97f4a7c15ull;
        b = (b + v + n) * 0xff51afd7ed558ccdull;
    }
    h->a = a;
    h->b = b;
}

static void hash_u64(spin_hash *h, uint64_t v) { hash_words(h, &v, sizeof v); }

/* The scheduling state of the cluster's warps (pcs, masks, frames),
 * without registers or memory: cheap, compared first. */
static spin_hash spin_cheap(const vm_cluster *c)
{
    spin_hash h = {1, 2};
    for (int bi = 0; bi < c->n; bi++) {
        const vm_block *b = &c->blocks[bi];
        for (int i = 0; i < b->nwarps; i++) {
            const vm_warp *w = &b->warps[i];
            hash_u64(&h, (uint64_t)w->state << 32 | (uint32_t)w->ngroups);
            for (int k = 0; k < w->ngroups; k++) {
                const vm_group *g = &w->groups[k];
                hash_u64(&h, (uint64_t)g->pc << 32 | g->mask);
                hash_u64(&h, (uint64_t)g->state << 40 | (uint64_t)g->bar_id << 32 | g->need);
                hash_u64(&h, g->frame ? g->frame->depth : 0);
            }
        }
    }
    return h;
}

static void hash_frame(spin_hash *h, const vm_frame *f)
{
    uint32_t nslots = f->fn->nslots ? f->fn->nslots : 1, npreds = f->fn->npreds ? f->fn->npreds : 1;
    hash_u64(h, (uint64_t)(uintptr_t)f->fn);
    hash_u64(h, (uint64_t)f->local_base << 32 | f->ret_pc);
    hash_u64(h, (uint64_t)f->call_index << 32 | f->lanes);
    hash_words(h, f->regs, (size_t)nslots * VM_WARP * sizeof *f->regs);
    hash_words(h, f->preds, npreds * sizeof *f->preds);
}

/* Everything the cluster's future depends on (see above). */
static spin_hash spin_full(const vm_cluster *c, const vm_launch *L)
{
    spin_hash h = {3, 4};
    hash_u64(&h, (uint64_t)c->arrived_warps << 32 | c->phase);
    for (int bi = 0; bi < c->n; bi++) {
        const vm_block *b = &c->blocks[bi];
        hash_u64(&h, (uint64_t)b->nlive << 32 | (uint32_t)b->done);
        hash_u64(&h, b->printf_out.len);
        hash_u64(&h, b->printf_dropped);
        hash_words(&h, b->bars, sizeof b->bars);
        hash_words(&h, b->shared, b->shared_size);
        for (int i = 0; i < b->nwarps; i++) {
            const vm_warp *w = &b->warps[i];
            hash_u64(&h, (uint64_t)w->exited << 32 | w->cc);
            hash_u64(&h, (uint64_t)w->backedges << 32 | w->yield_at);
            hash_u64(&h, (uint64_t)w->rotate << 32 | w->rotate_pc);
            hash_u64(&h, (uint64_t)w->cluster_phase << 32 | (uint32_t)w->blocked_bar);
            for (int k = 0; k < w->ngroups; k++)
                for (const vm_frame *f = w->groups[k].frame; f; f = f->parent)
                    hash_frame(&h, f);
            if (w->local)
                hash_words(&h, w->local, (size_t)L->local_stride * VM_WARP);
        }
    }
    if (L->heap_lock) {
        pthread_mutex_lock(L->heap_lock);
        hash_u64(&h, L->heap_used);
        pthread_mutex_unlock(L->heap_lock);
    }
    for (size_t i = 0; i < L->mem->count; i++) {
        const mem_allocation *a = &L->mem->allocs[i];
        hash_u64(&h, a->base);
        hash_u64(&h, a->size);
        hash_words(&h, (const void *)(uintptr_t)a->base, a->size);
    }
    return h;
}

typedef struct spin_watch {
    double next;             /* wall time when the next check may start */
    uint32_t tick;           /* rounds since the clock was last read */
    uint32_t rounds_left;    /* of the check under way; 0: none */
    uint32_t rounds;         /* since the snapshot */
    double hashing;          /* seconds the check under way spent hashing */
    spin_hash cheap, full;   /* the snapshot */
} spin_watch;

/* No other cluster can change the memory this one reads. */
static int spin_alone(vm_launch *L)
{
    return L->single_host_thread || __atomic_load_n(&L->clusters_unfinished, __ATOMIC_RELAXED) <= 1;
}

/* After a round of the cluster: returns the period in rounds once its
 * state is proven to repeat, else 0. */
static uint32_t spin_round(vm_cluster *c, vm_launch *L, spin_watch *sw)
{
    if (!sw->rounds_left) {
        if (++sw->tick < 16)
            return 0;
        sw->tick = 0;
        double now = vm_now();
        if (now < sw->next)
            return 0;
        if (!spin_alone(L)) {
            sw->next = now + 0.25;
            return 0;
        }
        sw->cheap = spin_cheap(c);
        sw->full = spin_full(c, L);
        sw->hashing = vm_now() - now;
        sw->rounds_left = SPIN_ROUNDS;
        sw->rounds = 0;
        return 0;
    }
    sw->rounds++;
    spin_hash cheap = spin_cheap(c);
    if (cheap.a == sw->cheap.a && cheap.b == sw->cheap.b) {
        double t0 = vm_now();
        spin_hash full = spin_full(c, L);
        double t1 = vm_now();
        sw->hashing += t1 - t0;
        if (full.a == sw->full.a && full.b == sw->full.b && spin_alone(L))
            return sw->rounds;
    }
    if (--sw->rounds_left == 0) {
        double now = vm_now(), wait = 20 * sw->hashing;
        sw->next = now + (wait > 0.25 ? wait : 0.25);
    }
    return 0;
}

static int report_livelock(vm_cluster *c, vm_launch *L, uint32_t period)
{
    vm_block *b = &c->blocks[0];
    vm_warp *w0 = NULL;
    vm_group *g = NULL;
    for (int bi = 0; bi < c->n && !g; bi++)
        for (int i = 0; i < c->blocks[bi].nwarps && !g; i++) {
            vm_warp *w = &c->blocks[bi].warps[i];
            for (int k = 0; k < w->ngroups && !g; k++)
                if (w->state == VM_WARP_READY && w->groups[k].state == VM_G_RUN && w->groups[k].mask) {
                    b = &c->blocks[bi];
                    w0 = w;
                    g = &w->groups[k];
                }
        }
    util_buffer d = {0};
    vm_describe_warps(b, &d);
    uint64_t others = __atomic_load_n(&L->clusters_unfinished, __ATOMIC_RELAXED);
    char why[320] = "";
    if (others > 1)
        snprintf(why, sizeof why,
                 " (%llu more block%s of the grid ha%s not run: kemu runs one block at a time here, and CUDA "
                 "does not promise that a block ever runs while another waits for it)",
                 (unsigned long long)(others - 1) * (unsigned long long)c->n, others - 1 == 1 && c->n == 1 ? "" : "s",
                 others - 1 == 1 && c->n == 1 ? "s" : "ve");
    vm_fault_at(b, w0, g ? g->frame : NULL, g ? g->pc : 0, g ? (uint32_t)__builtin_ctz(g->mask) : 0, 719,
                "livelock: no warp of the %s can make progress: its whole state (registers, shared, local and "
                "global memory) comes back every %u scheduling round%s, without a store that changes anything, "
                "and nothing else runs%s; the block's warps:%s",
                c->n > 1 ? "cluster" : "block", period, period == 1 ? "" : "s", why, d.data ? d.data : "");
    util_buffer_free(&d);
    return -1;
}

int vm_cluster_run(vm_cluster *c, vm_launch *L, int n, const unsigned (*ctaids)[3], const uint64_t *ids)
{
    c->n = n;
    c->arrived_warps = 0;
    c->phase = 0;
    for (int i = 0; i < n; i++) {
        vm_block *b = &c->blocks[i];
        if (setup_block(b, L, ctaids[i], ids[i])) {
            snprintf(b->fault.message, sizeof b->fault.message, "out of host memory setting up block (%u,%u,%u)",
                     ctaids[i][0], ctaids[i][1], ctaids[i][2]);
            b->fault.faulted = 1;
            b->fault.status = 2;
            return -1;
        }
        b->cluster = c;
        /* the block's index in its group: its rank in its thread-block
         * cluster (the launch lists a cluster's blocks in rank order), 0
         * without clusters, its place in the grid in a cooperative launch
         * (whose whole grid is one group) */
        b->rank = i;
    }
    if (L->hooks && L->hooks->block_begin)
        for (int i = 0; i < n; i++)
            L->hooks->block_begin(L->hooks->ctx, &c->blocks[i]);
    int order[1024];
    int rc = 0;
    spin_watch sw = {vm_now() + L->livelock_grace, 0, 0, 0, 0, {0, 0}, {0, 0}};
    uint64_t published = 0;
    for (;;) {
        int progressed = 0, alive = 0;
        for (int bi = 0; bi < n && !rc; bi++) {
            vm_block *b = &c->blocks[bi];
            int cnt = 0;
            for (int i = 0; i < b->nwarps; i++) {
                if (b->warps[i].state == VM_WARP_READY)
                    order[cnt++] = i;
                if (b->warps[i].state != VM_WARP_DONE)
                    alive = 1;
            }
            if (L->random_schedule)
                for (int i = cnt - 1; i > 0; i--) {
                    int j = (int)(next_random(&b->rng) % (uint64_t)(i + 1));
                    int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
            for (int k = 0; k < cnt; k++) {
                vm_warp *w = &b->warps[order[k]];
                if (w->state != VM_WARP_READY)
                    continue;
                progressed = 1;
                if (vm_warp_run(b, w)) {
                    rc = -1;
                    break;
                }
            }
        }
        if (rc || !alive)
            break;
        if (!progressed) {
            for (int bi = 0; bi < n; bi++)
                if (live_warps(&c->blocks[bi])) {
                    rc = report_deadlock(&c->blocks[bi]);
                    break;
                }
            break;
        }
        if (sw.tick == 15) {
            /* every 16 rounds: the instructions so far, for the progress line */
            uint64_t sum = 0;
            for (int bi = 0; bi < n; bi++)
                sum += c->blocks[bi].warp_instructions;
            __atomic_add_fetch(&L->progress_warp_instructions, sum - published, __ATOMIC_RELAXED);
            published = sum;
        }
        uint32_t period;
        if (L->livelock_check && (period = spin_round(c, L, &sw)) != 0) {
            rc = report_livelock(c, L, period);
            break;
        }
        if (!L->livelock_check && ++sw.tick >= 16)
            sw.tick = 0;
    }
    {
        uint64_t sum = 0;
        for (int bi = 0; bi < n; bi++)
            sum += c->blocks[bi].warp_instructions;
        __atomic_add_fetch(&L->progress_warp_instructions, sum - published, __ATOMIC_RELAXED);
    }
    for (int bi = 0; bi < n; bi++) {
        vm_block *b = &c->blocks[bi];
        if (L->hooks && L->hooks->block_end)
            L->hooks->block_end(L->hooks->ctx, b);
        for (int i = 0; i < b->nwarps; i++)
            free_nonroot_frames(&b->warps[i]);
        if (rc && !b->fault.faulted) {
            snprintf(b->fault.message, sizeof b->fault.message, "block (%u,%u,%u) stopped: another block faulted",
                     b->ctaid[0], b->ctaid[1], b->ctaid[2]);
            b->fault.status = -1;
        }
    }
    return rc;
}

void vm_cluster_park(vm_cluster *c)
{
    for (int i = 0; i < c->cap; i++) {
        vm_block *b = &c->blocks[i];
        for (int k = 0; k < b->nwarps; k++)
            if (b->warps[k].root)
                b->warps[k].root->fn = NULL;
        b->launch = NULL;
        b->cluster = NULL;
    }
    c->n = 0;
}

void vm_cluster_free(vm_cluster *c)
{
    for (int i = 0; i < c->cap; i++)
        vm_block_free(&c->blocks[i]);
    free(c->blocks);
    c->blocks = NULL;
    c->cap = 0;
}

void vm_block_free(vm_block *b)
{
    for (int i = 0; i < b->nwarps; i++) {
        free(b->warps[i].local);
        vm_frame_free(b->warps[i].root);
    }
    free(b->warps);
    free(b->shared);
    util_buffer_free(&b->printf_out);
    util_buffer_free(&b->notes);
    while (b->spare_frames) {
        vm_frame *f = b->spare_frames;
        b->spare_frames = f->parent;
        vm_frame_free(f);
    }
    memset(b, 0, sizeof *b);
}
