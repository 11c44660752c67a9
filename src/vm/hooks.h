/* The checker hook table: the fixed set of events the interpreter reports
 * to observers (src/check/). The interpreter calls a hook only when the
 * launch has a hook table, and every call site tests one pointer, so with
 * no checker enabled the hooks cost nothing measurable. Hooks observe;
 * they never change execution. */
#ifndef KEMU_VM_HOOKS_H
#define KEMU_VM_HOOKS_H

#include <stdint.h>

struct vm_launch;
struct vm_block;
struct vm_warp;
struct vm_frame;

/* Kinds of memory access. */
enum { VM_ACCESS_LOAD = 0, VM_ACCESS_STORE = 1, VM_ACCESS_ATOMIC = 2 };

/* Where each lane of a warp-wide access went, after generic addresses were
 * resolved, by lane (32: VM_WARP; entries of lanes outside the access's
 * mask are unspecified). */
typedef struct vm_access_lanes {
    uint64_t where[32];  /* global: device address; shared/local/const/param: offset in that space */
    uint16_t rank[32];   /* shared: the index in its group (cluster rank) of the block whose shared memory it is */
    uint8_t space[32];   /* BC_SPACE_GLOBAL, SHARED (incl. cluster), LOCAL, CONST, PARAM_KERNEL */
    uint8_t one_region;       /* every lane of the mask is in the space (and shared memory) of its lowest lane */
} vm_access_lanes;

/* Fence scopes. */
enum { VM_SCOPE_CTA = 0, VM_SCOPE_CLUSTER, VM_SCOPE_GPU, VM_SCOPE_SYS,
       VM_SCOPE_ASYNC /* a cp.async group op (commit/wait): the checker decodes the op at pc */ };

typedef struct vm_hooks {
    void *ctx;
    /* A block of the launch starts / has finished (all its warps done, or it faulted). */
    void (*block_begin)(void *ctx, struct vm_block *b);
    void (*block_end)(void *ctx, struct vm_block *b);
    /* A warp-wide memory access of `size` bytes per lane by the lanes of
     * `mask`, op at pc of frame f (observers read stored values from the
     * op's source registers). Called after the addresses were checked and
     * before the access is performed. */
    void (*access)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                   int kind, uint32_t mask, const vm_access_lanes *lanes, unsigned size);
    /* CTA barrier `id` completed: every warp blocked on it is released. */
    void (*barrier)(void *ctx, struct vm_block *b, int id);
    /* Barrier-like warp synchronization (bar.warp.sync, and the
     * warp-synchronous shfl/vote/match/redux) at pc of frame f: `active`
     * lanes execute it with membermask `member`. */
    void (*warp_sync)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                      uint32_t active, uint32_t member);
    /* A fence (membar/fence) by the lanes of mask at `scope`, or a cp.async
     * group op (scope VM_SCOPE_ASYNC), op at pc of frame f. */
    void (*fence)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                  uint32_t mask, int scope);
    /* barrier.cluster completed a phase. */
    void (*cluster_barrier)(void *ctx, struct vm_block *b);
    /* A lane group reached CTA barrier `id` (bar op at pc of frame f) while
     * other lanes of its warp have not exited and are elsewhere (the warp
     * has other lane groups): arrived, the group's lanes; missing, the
     * warp's other live lanes. Observers read where those are from
     * w->groups. */
    void (*divergent_barrier)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f,
                              uint32_t pc, int id, uint32_t arrived, uint32_t missing);
    /* Warp w arrives at CTA barrier `id` (0-15; its lane groups still wait
     * at the bar op, so observers can read the op, lanes and count), or at
     * barrier.cluster: id 0xfe arrive, 0xfd wait, 0xff arrive and wait. */
    void (*barrier_arrive)(void *ctx, struct vm_block *b, struct vm_warp *w, int id);
    /* The op at pc of frame f is about to run for the lanes of mask (only
     * installed by checkers that follow registers). */
    void (*op)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc, uint32_t mask);
    /* A memory op at pc faulted on an invalid address (the fault is already
     * raised): lanes of mask, per-lane base addresses addr (+ imm), size
     * bytes per lane, kind as for access, space as the op names it. */
    void (*bad_access)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                       int kind, int space, uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size);
    /* Lanes of mask made a global access of size bytes per lane outside
     * every allocation but inside an allocation's mapped granule
     * (vm_launch.mapped_granule), at the per-lane addresses addr: it went
     * on as on a GPU (a load read the fill, a store or atomic was dropped);
     * the access hook does not see these lanes. */
    void (*mapped_access)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                          int kind, uint32_t mask, const uint64_t *addr, unsigned size);
    /* Device-heap misuse (memcheck): lane `lane` of warp w called free at pc
     * of frame f with a pointer it may not free (the fault is already
     * raised); reason describes it. */
    void (*heap_misuse)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                        int lane, const char *reason);
    /* A fault was raised at pc of frame f (frame may be NULL) for lane
     * `lane` of warp w (w may be NULL): status and the full message, as in
     * the block's fault record. Called before the warp unwinds, so an
     * observer sees the faulting state. */
    void (*fault)(void *ctx, struct vm_block *b, struct vm_warp *w, const struct vm_frame *f, uint32_t pc,
                  uint32_t lane, int status, const char *message);
} vm_hooks;

/* A wrapper around another hook table (the fidelity report, racecheck
 * under dynamic parallelism): a struct whose first member is a
 * vm_hooks_chain. vm_hooks_chain_init makes chain->hooks pass every event
 * that `inner` (may be NULL) has on to it, with the wrapper as ctx, and
 * leaves the others NULL; the wrapper then puts its own functions in the
 * events it watches, calling inner itself. */
typedef struct vm_hooks_chain {
    vm_hooks hooks;
    const vm_hooks *inner;
} vm_hooks_chain;
void vm_hooks_chain_init(vm_hooks_chain *chain, const vm_hooks *inner);

#endif
