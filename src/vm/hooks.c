/* Hook tables that pass events on to another (hooks.h, vm_hooks_chain). */
#include "config.h"

#include <string.h>

#include "vm/vm.h"

#define INNER(ctx) ((const vm_hooks_chain *)(ctx))->inner

static void fw_block_begin(void *ctx, vm_block *b) { INNER(ctx)->block_begin(INNER(ctx)->ctx, b); }
static void fw_block_end(void *ctx, vm_block *b) { INNER(ctx)->block_end(INNER(ctx)->ctx, b); }
static void fw_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                      const vm_access_lanes *lanes, unsigned size)
{
    INNER(ctx)->access(INNER(ctx)->ctx, b, w, f, pc, kind, mask, lanes, size);
}
static void fw_barrier(void *ctx, vm_block *b, int id) { INNER(ctx)->barrier(INNER(ctx)->ctx, b, id); }
static void fw_warp_sync(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t active,
                         uint32_t member)
{
    INNER(ctx)->warp_sync(INNER(ctx)->ctx, b, w, f, pc, active, member);
}
static void fw_fence(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask, int scope)
{
    INNER(ctx)->fence(INNER(ctx)->ctx, b, w, f, pc, mask, scope);
}
static void fw_cluster_barrier(void *ctx, vm_block *b) { INNER(ctx)->cluster_barrier(INNER(ctx)->ctx, b); }
static void fw_divergent_barrier(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int id,
                                 uint32_t arrived, uint32_t missing)
{
    INNER(ctx)->divergent_barrier(INNER(ctx)->ctx, b, w, f, pc, id, arrived, missing);
}
static void fw_barrier_arrive(void *ctx, vm_block *b, vm_warp *w, int id)
{
    INNER(ctx)->barrier_arrive(INNER(ctx)->ctx, b, w, id);
}
static void fw_op(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    INNER(ctx)->op(INNER(ctx)->ctx, b, w, f, pc, mask);
}
static void fw_bad_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, int space,
                          uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size)
{
    INNER(ctx)->bad_access(INNER(ctx)->ctx, b, w, f, pc, kind, space, mask, addr, imm, size);
}
static void fw_mapped_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind,
                             uint32_t mask, const uint64_t *addr, unsigned size)
{
    INNER(ctx)->mapped_access(INNER(ctx)->ctx, b, w, f, pc, kind, mask, addr, size);
}
static void fw_heap_misuse(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                           const char *reason)
{
    INNER(ctx)->heap_misuse(INNER(ctx)->ctx, b, w, f, pc, lane, reason);
}
static void fw_fault(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane, int status,
                     const char *message)
{
    INNER(ctx)->fault(INNER(ctx)->ctx, b, w, f, pc, lane, status, message);
}

void vm_hooks_chain_init(vm_hooks_chain *chain, const vm_hooks *inner)
{
    vm_hooks *h = &chain->hooks;
    memset(h, 0, sizeof *h);
    chain->inner = inner;
    h->ctx = chain;
    if (!inner)
        return;
#define FORWARD(name) h->name = inner->name ? fw_##name : NULL
    FORWARD(block_begin);
    FORWARD(block_end);
    FORWARD(access);
    FORWARD(barrier);
    FORWARD(warp_sync);
    FORWARD(fence);
    FORWARD(cluster_barrier);
    FORWARD(divergent_barrier);
    FORWARD(barrier_arrive);
    FORWARD(op);
    FORWARD(bad_access);
    FORWARD(mapped_access);
    FORWARD(heap_misuse);
    FORWARD(fault);
#undef FORWARD
}
