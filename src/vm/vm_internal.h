/* Internal helpers shared by the interpreter files of src/vm/: lane loops,
 * register access, frames and group management. */
#ifndef KEMU_VM_INTERNAL_H
#define KEMU_VM_INTERNAL_H

#include "vm/vm.h"
#include "vm/numeric.h"

/* Runs `body` for every lane l set in mask m (a full-mask fast path the
 * compiler can vectorize). */
#define LANES(m, ...)                                             \
    do {                                                          \
        uint32_t lm_ = (m);                                       \
        if (lm_ == VM_FULL) {                                     \
            for (int l = 0; l < VM_WARP; l++) { __VA_ARGS__; }    \
        } else {                                                  \
            for (uint32_t mm_ = lm_; mm_; mm_ &= mm_ - 1) {       \
                int l = __builtin_ctz(mm_);                       \
                __VA_ARGS__;                                      \
            }                                                     \
        }                                                         \
    } while (0)

#define SLOT(R, s) ((R) + (size_t)(s) * VM_WARP)

/* Group events returned by the group loop. */
enum { VM_EV_REPICK = 0, VM_EV_YIELD, VM_EV_FAULT,
       VM_EV_BLOCKED /* the warp waits at a barrier (vm_barrier_arrive_converged) */ };

vm_frame *vm_frame_new(vm_block *b, vm_warp *w, const bc_function *fn, uint32_t local_base);
void vm_frame_free(vm_frame *f);
/* A callee frame returned from: kept in b's spare frames for a later call. */
void vm_frame_release(vm_block *b, vm_frame *f);

/* Splits lanes `lanes` of group g off into a new group at pc `pc`. */
void vm_group_split(vm_warp *w, vm_group *g, uint32_t lanes, uint32_t pc);

/* Appends one line per unfinished warp group of the block: where it is
 * and whether it runs or waits (barrier id, warp-synchronous op). */
void vm_describe_warps(vm_block *b, util_buffer *out);
/* Faults warp w at op pc of frame f, lane `lane`, because the watchdog
 * flagged the launch as past its --timeout (status 702, naming where every
 * warp of the block runs or waits). Returns -1. */
int vm_timeout_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane);
/* The same when block b has run past the launch's step limit. Returns -1. */
int vm_step_limit_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane);

/* Runs one group until an event. */
int vm_group_run(vm_block *b, vm_warp *w, int gi);

/* Memory: resolve lane addresses of a memory op into host pointers; kind
 * is VM_ACCESS_LOAD, STORE or ATOMIC (checkers see the access).
 * Returns 0, or -1 after raising a fault. */
int vm_resolve(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, uint32_t m,
               const uint64_t *addr, int64_t imm, unsigned size, int kind, uint8_t **ptrs);
/* vm_resolve for op's address operand addr + imm: for a 32-bit address
 * register (BC_F_ADDR32) each lane's sum is taken modulo 2^32, as PTX
 * does (nvcc emits [%r+4] where %r is a shared address minus 4, which
 * wraps). The fast paths (vm_resolve_fast, vm_resolve_watched,
 * vm_resolve_span) need no such step: a sum they accept lies inside the
 * block's shared memory, below 2^32, so it equals itself modulo 2^32. */
int vm_resolve_operand(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, const bc_op *op, int space,
                       uint32_t m, const uint64_t *addr, int64_t imm, unsigned size, int kind, uint8_t **ptrs);

/* Where a warp-wide access lies when it needs no per-lane work: when
 * every lane's [addr+imm, +size) lies in one global allocation (then
 * b->alloc_cache) or in the block's own shared memory (*shared set), is
 * aligned (for power-of-two sizes), stores in *base the host address such
 * that lane l accesses *base + addr[l] and returns 1; else returns 0.
 * Global device addresses are host addresses, so *base is often just imm,
 * and may be 0. Wrapping pointer arithmetic is intended. */
static inline int vm_resolve_region(vm_block *b, int space, uint32_t m, const uint64_t *addr, int64_t imm,
                                    unsigned size, uintptr_t *base, int *shared_out)
{
    /* bitwise AND and OR of the lane addresses bound their minimum and
     * maximum and vectorize well; fall back to the exact bounds when they
     * are too loose */
    uint64_t lo = ~0ull, hi = 0;
    LANES(m, {
        uint64_t a = addr[l] + (uint64_t)imm;
        lo &= a;
        hi |= a;
    });
    if ((size & (size - 1)) == 0 && (hi & (size - 1)))
        return 0;
    uint64_t shared_size = b->shared_size;
    int shared = space == BC_SPACE_SHARED || (space == BC_SPACE_GENERIC && lo >= MEM_WINDOW_SHARED);
    uint64_t shared_base = space == BC_SPACE_SHARED ? 0 : MEM_WINDOW_SHARED;
    *shared_out = shared;
    if (shared) {
        if (shared_size < size)
            return 0;
        if (hi - shared_base > shared_size - size) {
            lo = UINT64_MAX;
            hi = 0;
            LANES(m, {
                uint64_t a = addr[l] + (uint64_t)imm;
                lo = a < lo ? a : lo;
                hi = a > hi ? a : hi;
            });
            if (lo < shared_base || hi - shared_base > shared_size - size)
                return 0;
        }
        *base = (uintptr_t)b->shared - (uintptr_t)shared_base + (uintptr_t)imm;
        return 1;
    }
    if (space != BC_SPACE_GLOBAL && space != BC_SPACE_GENERIC)
        return 0;
    const mem_allocation *c = b->alloc_cache;
    if (!c || lo < c->base || c->size < size || hi - c->base > c->size - size) {
        lo = UINT64_MAX;
        hi = 0;
        LANES(m, {
            uint64_t a = addr[l] + (uint64_t)imm;
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        });
        if (hi >= MEM_WINDOW_SHARED)
            return 0;
        if (!c || lo < c->base || c->size < size || hi - c->base > c->size - size) {
            c = mem_find(b->launch->mem, lo, hi + size - lo);
            if (!c)
                return 0;
            b->alloc_cache = c;
        }
    }
    *base = (uintptr_t)imm;
    return 1;
}

/* The fast path of a warp-wide access that needs no per-lane work
 * (vm_resolve_region) when no checker watches; else 0 (then use
 * vm_resolve). */
static inline int vm_resolve_fast(vm_block *b, int space, uint32_t m, const uint64_t *addr, int64_t imm,
                                  unsigned size, uintptr_t *base)
{
    int shared;
    return !b->launch->hooks && vm_resolve_region(b, space, m, addr, imm, size, base, &shared);
}

/* vm_resolve_fast for one span [first, first + bytes) that every lane's
 * access lies in (a coalesced access): in shared memory or in one global
 * allocation, first aligned to `align` (a power of two), no checker. */
static inline int vm_resolve_span(vm_block *b, int space, uint64_t first, uint64_t bytes, unsigned align,
                                  uintptr_t *base)
{
    if (b->launch->hooks || (first & (align - 1)))
        return 0;
    uint64_t shared_base = space == BC_SPACE_SHARED ? 0 : MEM_WINDOW_SHARED;
    if (space == BC_SPACE_SHARED || (space == BC_SPACE_GENERIC && first >= MEM_WINDOW_SHARED)) {
        if (first < shared_base || bytes > b->shared_size || first - shared_base > b->shared_size - bytes)
            return 0;
        *base = (uintptr_t)b->shared - (uintptr_t)shared_base;
        return 1;
    }
    if (space != BC_SPACE_GLOBAL && space != BC_SPACE_GENERIC)
        return 0;
    const mem_allocation *c = b->alloc_cache;
    if (!c || first < c->base || bytes > c->size || first - c->base > c->size - bytes) {
        if (first >= MEM_WINDOW_SHARED || first + bytes < first)
            return 0;
        c = mem_find(b->launch->mem, first, bytes);
        if (!c)
            return 0;
        b->alloc_cache = c;
    }
    *base = 0;
    return 1;
}

/* With a checker watching accesses: when every lane is aligned and in
 * bounds of one global allocation or of the block's own shared memory,
 * reports the access to the hook, stores in *base the host address such
 * that lane l accesses *base + addr[l], and returns 1; else returns 0
 * (then use vm_resolve, which also faults). Without hooks, returns 0. */
int vm_resolve_watched(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, uint32_t m,
                       const uint64_t *addr, int64_t imm, unsigned size, int kind, uintptr_t *base);

/* Reads a NUL-terminated string at a generic address (for printf/assert). */
int vm_read_string(vm_block *b, vm_warp *w, int lane, uint64_t addr, char *buf, size_t cap);

/* Warp-wide matrix ops (matrix.c): every lane of the warp that has not
 * exited is active. Returns 0, or -1 after raising a fault. */
int vm_matrix_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);

/* tex, tld4, txq, suld, sust (texture.c). Returns 0, or -1 after a fault. */
int vm_texture_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);

/* Faults an mbarrier op (sub) on lane `lane` that vm_mbar_step refused
 * with error e (vm/mbarrier.h), given its operand arg and the object v.
 * Returns -1 (tma.c). */
int vm_mbar_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane, int e, int sub,
                  uint64_t arg, uint64_t v);

/* cp.async.bulk and cp.async.bulk.tensor (tma.c). Return 0, or -1 after a fault. */
int vm_bulk_copy(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);
int vm_tensor_copy(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);

/* D = fma(A, B, C) in f32 for the lanes of m (fma.c). */
void vm_fma_f32_lanes(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C, uint32_t m);

/* A converged warp (one group, no hooks, default schedule) arrives at a
 * plain bar.sync id (no thread count): returns 1 when its arrival completes
 * the barrier (the waiting warps are released and this one goes on past
 * it), 0 when it must wait (the warp is blocked at id). */
int vm_barrier_arrive_converged(vm_block *b, vm_warp *w, int id);

/* Host functions called from kernels. */
int vm_builtin(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);
/* The device runtime calls of dynamic parallelism (devrt.c), as vm_builtin. */
int vm_devrt_call(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m);
/* size bytes of the device heap for lane `lane` (malloc), or 0 when it is full. */
uint64_t vm_heap_alloc(vm_block *b, vm_warp *w, int lane, uint64_t size);

static inline vm_round vm_rnd(int bc_rnd)
{
    switch (bc_rnd) {
    case BC_RND_RZ: case BC_RND_RZI: return VM_RZ;
    case BC_RND_RM: case BC_RND_RMI: return VM_RM;
    case BC_RND_RP: case BC_RND_RPI: return VM_RP;
    case BC_RND_RNA: return VM_RNA;
    default: return VM_RN;
    }
}

/* Type properties by table, so the interpreter makes no calls for them. */
extern const uint8_t vm_type_size_table[PTX_T_COUNT];
extern const uint8_t vm_type_signed_table[PTX_T_COUNT];
static inline unsigned vm_type_bytes(int t) { return vm_type_size_table[t]; }
static inline int vm_type_signed(int t) { return vm_type_signed_table[t]; }

#endif
