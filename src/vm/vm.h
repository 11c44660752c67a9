/* The SIMT interpreter's machine state: launches, blocks (CTAs), warps,
 * divergent lane groups and call frames. A warp is a coroutine: it runs
 * until it blocks (barrier), yields, exits or faults, and the block
 * scheduler (src/exec/) picks the next one. Divergence is handled with lane
 * groups, each with its own pc: the group with the lowest pc runs first, so
 * structured code reconverges where the paths meet, and a fairness rule on
 * backward branches lets spin loops that wait on another lane progress
 * (independent thread scheduling). */
#ifndef KEMU_VM_H
#define KEMU_VM_H

#include <stdint.h>
#include "bc/bc.h"
#include "mem/mem.h"
#include "util.h"
#include "vm/hooks.h"

#define VM_WARP 32
#define VM_FULL 0xffffffffu
#define VM_BARRIERS 16

typedef struct vm_frame {
    const bc_function *fn;
    uint64_t *regs;          /* nslots * 32, lane-contiguous */
    uint32_t *preds;         /* npreds lane masks */
    uint32_t local_base;     /* frame start in each lane's local memory */
    uint32_t ret_pc;         /* caller pc to resume */
    uint32_t call_index;     /* caller's bc_call for return copies */
    uint32_t lanes;          /* lanes currently inside this frame */
    uint32_t depth;          /* calls between the kernel (0) and this frame */
    struct vm_frame *parent; /* the caller's frame; in a block's spare frames, the next one */
    uint32_t slots_cap, preds_cap; /* registers and predicates regs and preds hold */
} vm_frame;

enum { VM_G_RUN = 0, VM_G_WAIT_SYNC, VM_G_WAIT_BAR };

typedef struct vm_group {
    uint32_t pc, mask;
    vm_frame *frame;
    uint8_t state;
    uint8_t bar_id;
    uint32_t need;           /* WAIT_SYNC: lanes that must join */
} vm_group;

enum { VM_WARP_READY = 0, VM_WARP_BLOCKED, VM_WARP_DONE };

typedef struct vm_warp {
    int index;
    uint32_t valid;          /* lanes that exist (a partial last warp has fewer) */
    uint32_t exited;
    vm_group groups[VM_WARP];
    int ngroups;
    int state;
    int blocked_bar;
    uint32_t cc;             /* carry flag per lane */
    uint32_t backedges;
    uint32_t tid[3][VM_WARP];
    uint8_t *local;          /* VM_WARP * local_stride bytes */
    size_t local_size;       /* bytes local holds (a cached cluster's next launch may need more) */
    vm_frame *root;
    int rotate;              /* fairness: pick the group after rotate_pc next */
    uint32_t rotate_pc;
    uint32_t cluster_phase;  /* barrier.cluster phase this warp last arrived in */
    uint32_t yield_at;       /* back edges before the warp yields (random schedules vary it) */
    uint16_t devrt_error[VM_WARP]; /* per thread: the device runtime's last error (cudaGetLastError) */
} vm_warp;

typedef struct vm_barrier {
    uint32_t arrived_warps;
    uint32_t expected_warps; /* 0: all live warps */
    uint32_t red_popc, red_and, red_or;
    int red_mode;
    int active;
} vm_barrier;

struct vm_launch;
struct vm_cluster;

/* A texture or surface object as kernels see it (from kemu_texture_desc). */
/* One mipmap level: memory and extent (layered: depth counts layers). */
typedef struct vm_texture_level {
    uint64_t address;
    unsigned width, height, depth;
    uint64_t pitch, slice;
} vm_texture_level;

typedef struct vm_texture {
    int live;
    vm_texture_level level[KEMU_TEXTURE_MAX_LEVELS]; /* [0]: the base level */
    int num_levels;                                  /* >= 1 */
    unsigned layout;                                 /* KEMU_TEXTURE_LAYERED | KEMU_TEXTURE_CUBEMAP */
    int channels, channel_bits, channel_kind;
    int address_mode[3], filter_mode, read_mode, normalized_coords;
    float border[4];
    int mipmap_filter;
    float lod_bias, min_lod, max_lod;
} vm_texture;

typedef struct vm_fault {
    int faulted;
    int status;              /* cudaError-like class: 700 illegal address, 716 misaligned, 710 assert, 719 launch failure */
    char message[2048];
} vm_fault;

typedef struct vm_block {
    struct vm_launch *launch;
    unsigned ctaid[3];
    uint64_t linear_id;
    uint8_t *shared;
    uint64_t shared_size;
    vm_warp *warps;
    int nwarps;
    uint32_t nlive;          /* warps not done */
    uint64_t consts_serial;  /* the launch whose kernel constants the warps' root frames hold */
    unsigned warp_shape[4];  /* block dims and thread count the warps' thread indices were laid out for */
    vm_barrier bars[VM_BARRIERS];
    util_buffer printf_out;
    size_t printf_dropped;   /* bytes of printf output past the launch's FIFO size */
    util_buffer notes;       /* "kemu: note: ..." lines for stderr (printf that could not print as meant) */
    uint32_t nnotes, notes_dropped; /* lines in notes; notes past VM_MAX_NOTES, counted only */
    vm_fault fault;
    uint64_t warp_instructions, thread_instructions;
    uint32_t clock_countdown; /* vm_launch_expired's count of the checks between clock reads */
    uint64_t rng;            /* random schedule state */
    int done;
    struct vm_cluster *cluster;
    unsigned rank;           /* %cluster_ctarank */
    const mem_allocation *alloc_cache; /* the allocation the last global access hit */
    vm_frame *spare_frames;  /* callee frames returned from, for the next calls (no allocation per call) */
} vm_block;

/* Blocks of one cluster run together on one host thread, their warps
 * interleaved, so barrier.cluster and distributed shared memory work. A
 * launch without clusters runs clusters of one block. */
#define VM_MAX_CLUSTER 16
typedef struct vm_cluster {
    vm_block *blocks;        /* cap blocks; a cooperative launch runs the whole grid as one group */
    int n, cap;
    uint32_t arrived_warps;  /* barrier.cluster arrivals in the current phase */
    uint32_t phase;          /* completed barrier.cluster phases */
} vm_cluster;
/* Readies a cluster that ran its last block of a launch for the next launch
 * (a device keeps its host threads' clusters between launches, so a launch
 * does not allocate and clear every block's warps, frames, shared and local
 * memory again): the warps' root frames stay allocated but belong to no
 * function, so the next launch sets them up afresh for its kernel (which
 * may be another one at the same address after a module is unloaded). */
void vm_cluster_park(vm_cluster *c);

/* The device heap's allocation table (heap.c), kept while memcheck runs. */
#define VM_HEAP_REDZONE 32   /* bytes after each allocation that no allocation uses */
typedef struct vm_heap_chunk {
    uint64_t base, size;
    uint64_t block;            /* linear id of the allocating block */
    uint32_t tid_linear;       /* linear thread index in that block */
    uint32_t launch, kernel;   /* launch number and kernel name index of the table */
    uint32_t freed;
    unsigned ctaid[3], tid[3];             /* who allocated it */
    unsigned free_ctaid[3], free_tid[3];   /* who freed it */
} vm_heap_chunk;

typedef struct vm_heap_table {
    vm_heap_chunk *v;          /* in address order */
    size_t cap, n;             /* n: published with release (readers do not lock) */
    uint64_t base, size;       /* the heap region */
    uint64_t start;            /* allocations below this predate the table: not tracked */
    uint32_t launch;
    int kernel;                /* index in kernels of the current launch's kernel */
    char **kernels;
    int nkernels;
} vm_heap_table;

vm_heap_table *vm_heap_table_new(uint64_t base, uint64_t size, uint64_t used);
void vm_heap_table_free(vm_heap_table *t);
/* A new launch of kernel (named in the chunks it allocates). Returns -1 when out of memory. */
int vm_heap_table_launch(vm_heap_table *t, const char *kernel);
/* The chunk with the highest base <= addr, or NULL. */
const vm_heap_chunk *vm_heap_find(const vm_heap_table *t, uint64_t addr);
/* Whether [addr, addr+size) on the heap is not inside a live allocation:
 * 1 with a description in buf, else 0. */
int vm_heap_explain(const vm_heap_table *t, uint64_t addr, unsigned size, char *buf, size_t n);

/* Out-of-bounds loads that return a fill value instead of faulting:
 * VM_OOB_FILL_CLASSES patterns of VM_OOB_FILL_BYTES bytes each, by the
 * dtype of the operand read past (kemu call), else by the load's type:
 * 0 all bits the fill byte; 1-4 the largest signed value or NaN of 1, 2,
 * 4, 8 bytes for the "nan" fill, where both are 0x7f..ff; 5 bools. */
#define VM_OOB_FILL_BYTES 64
#define VM_OOB_FILL_CLASSES 6 /* class 5: bools (true) */
static inline int vm_oob_fill_class(int ptx_type)
{
    switch (ptx_type) {
    case PTX_T_S8: return 1;
    case PTX_T_S16: case PTX_T_F16: case PTX_T_BF16: case PTX_T_F16X2: case PTX_T_BF16X2: return 2;
    case PTX_T_S32: case PTX_T_F32: case PTX_T_TF32: return 3;
    case PTX_T_S64: case PTX_T_F64: return 4;
    default: return 0;
    }
}

/* A device runtime call (CUDA dynamic parallelism) of one thread that the
 * launch layer answers (src/exec/devrt.c): lane `lane` of warp w called
 * function `which` (BC_DEVRT_*, named `name`) with the raw bytes of its
 * arguments. */
typedef struct vm_devrt_request {
    struct vm_block *b;
    struct vm_warp *w;
    const struct vm_frame *f;
    uint32_t pc;
    int lane;
    int which;
    const char *name;
    int nargs;
    uint8_t args[8][32];         /* by-value structs (cudaPitchedPtr) take up to 32 bytes */
} vm_devrt_request;

typedef struct vm_devrt {
    void *ctx;
    /* Returns the call's result: a cudaError_t, or the pointer
     * GetParameterBuffer returns (0 with *error set when it fails); sets
     * *error to what the thread's last error becomes (0: unchanged). */
    uint64_t (*call)(void *ctx, vm_devrt_request *r, int *error);
    int runtime_version;     /* cudaRuntimeGetVersion in device code */
} vm_devrt;

/* Writes n bytes to the generic address addr as lane `lane` of warp w of
 * block b sees it (global, shared or its own local memory): 0, or -1 when
 * addr is no writable address. For the device runtime's out-parameters. */
int vm_devrt_write(struct vm_block *b, struct vm_warp *w, int lane, uint64_t addr, const void *src, size_t n);
/* Reads n bytes at the generic address addr as lane `lane` of warp w of
 * block b sees it: 0, or -1 when addr is no readable address. For the
 * device runtime's in-parameters passed by pointer (cudaMemcpy3DParms). */
int vm_devrt_read(struct vm_block *b, struct vm_warp *w, int lane, uint64_t addr, void *dst, size_t n);

typedef struct vm_launch {
    const bc_module *mod;
    const bc_function *kernel;
    mem_space *mem;
    /* several devices: for a global access in no allocation of mem, whether
     * it lies in a peer device's allocation: 1 (a copy in *out) when the
     * launch may reach it, -1 (why, for the fault message) when peer access
     * is not enabled, 0 when in none. NULL: one device. */
    int (*peer_find)(void *ctx, uint64_t address, uint64_t size, mem_allocation *out, char *why, size_t n);
    void *peer_ctx;
    const char *ptx_filename;
    const char *const *loc_files;  /* .file table by id, may be NULL */
    int nloc_files;
    unsigned grid[3], block[3], cluster[3];
    uint64_t nthreads_per_block;
    uint8_t *params;               /* kernel parameter buffer */
    uint64_t param_size;
    uint8_t *const_bank;
    uint64_t const_size;
    uint64_t shared_static, shared_dynamic;
    uint64_t local_stride;         /* bytes of local memory per thread */
    int uninit_byte;               /* fill of shared memory */
    int random_schedule;
    uint64_t schedule_seed;
    double timeout;                /* seconds, 0 = none */
    size_t printf_fifo;            /* printf bytes kept per launch (and so per block) */
    double start_time;
    int expired;                   /* set (atomic, relaxed) by the watchdog once timeout has passed;
                                    * read at block starts, back edges, brx.idx and calls */
    double deadline;               /* vm_now() at which the launch expires, 0 = none: the blocks read
                                    * the clock themselves too (vm_launch_expired), so a starved
                                    * watchdog thread (valgrind, an overloaded host) is not needed */
    uint32_t max_call_depth;       /* nested calls a thread may make (call stack overflow past it) */
    uint64_t step_limit;           /* warp-instructions a block may run (a fault past it), 0 = none;
                                    * read where `expired` is */
    uint64_t abort_id;             /* lowest faulted block id: later blocks stop (atomic) */
    uint32_t envreg[32];           /* %envreg0-31 (cooperative launches: the grid-sync workspace) */
    uint64_t heap_base, heap_size, heap_used; /* device malloc */
    void *heap_lock;
    vm_heap_table *heap_table;     /* memcheck: the device heap's allocations, or NULL */
    const uint8_t *oob_fill;       /* VM_OOB_FILL_CLASSES patterns for out-of-bounds loads, or NULL: they fault */
    const uint8_t *fill_patterns;  /* the same patterns, for mapped_granule's loads (always set) */
    uint64_t mapped_granule;       /* bytes, or 0: a global access outside every allocation but inside
                                    * the granule of one (its first size rounded up to mapped_granule
                                    * bytes) goes on as on a GPU (loads read the fill, stores and atomics
                                    * are dropped) instead of faulting; the checkers without memcheck set it */
    int oob_shared_class;          /* 1 + the fill class of out-of-bounds shared loads, 0: by the load's type */
    const uint8_t *shared_init;    /* copied over the dynamic shared memory of each block after the fill, or NULL */
    uint64_t shared_init_size;
    int arch_sm;
    int (*call_native)(void *ctx, int fn_index, void **args, void *ret);
    void *native_ctx;
    uint64_t serial;               /* unique per launch in the process (never 0) */
    const vm_hooks *hooks;         /* checkers, or NULL */
    const vm_hooks *fault_hooks;   /* checkers that only look at faults (memcheck alone), with hooks NULL
                                    * so every fast path stays on: bad_access and heap_misuse */
    int livelock_check;            /* vm_cluster_run may prove a spinning cluster stuck: set where the run is a
                                    * closed system (no random schedule, no %clock or %globaltimer read, no
                                    * host function bound, no host thread writing device memory) */
    double livelock_grace;         /* seconds a cluster runs before it is checked (KEMU_LIVELOCK_GRACE, 1) */
    int single_host_thread;        /* clusters run one at a time: none runs while another spins */
    uint64_t clusters_unfinished;  /* clusters not run to the end yet, pending ones included (atomic) */
    uint64_t progress_warp_instructions; /* published every few rounds for the progress line (atomic) */
    const vm_texture *textures;    /* by handle - 1 */
    int ntextures;
    /* the debugger (src/debug/): set by its op hook to end the launch
     * (the warp faults "killed by the debugger" before the op runs);
     * brkpt_resumes: brkpt stops in the debugger and then does nothing */
    int debug_kill;                /* 1: end the launch; 2: the warp yields before the op (scheduler-locking) */
    int brkpt_resumes;
    const vm_devrt *devrt;         /* the device runtime of dynamic parallelism, or NULL */
} vm_launch;

/* Device heap (heap.c; the caller holds the heap lock): records an
 * allocation made by lane `lane` of warp w; frees the allocation at addr
 * (0, or -1 with the reason in buf for an invalid or double free). */
void vm_heap_record(vm_heap_table *t, uint64_t base, uint64_t size, const vm_block *b, const vm_warp *w, int lane);
int vm_heap_free(vm_heap_table *t, uint64_t addr, const vm_block *b, const vm_warp *w, int lane, char *buf, size_t n);

/* Sets up the n blocks of a cluster (reusing their allocations) with their
 * block indices and linear ids, and runs them to completion. Returns 0 on
 * success, -1 when a block faulted (its fault record filled). */
int vm_cluster_run(vm_cluster *c, vm_launch *launch, int n, const unsigned (*ctaids)[3], const uint64_t *ids);
void vm_cluster_free(vm_cluster *c);
/* Frees a block's allocations. */
void vm_block_free(vm_block *b);

/* Runs warp w of block b until it blocks, yields, exits or faults.
 * Returns 0 normally, -1 on a fault. */
int vm_warp_run(vm_block *b, vm_warp *w);

/* The space a generic address points into and its offset there (a
 * global address is its own offset), or BC_SPACE_GENERIC when it is in no
 * window. */
static inline int vm_generic_space(uint64_t a, uint64_t *off)
{
    static const int windows[] = {BC_SPACE_SHARED_CLUSTER, BC_SPACE_LOCAL, BC_SPACE_CONST, BC_SPACE_PARAM_KERNEL};
    *off = a;
    if (a < MEM_WINDOW_SHARED)
        return BC_SPACE_GLOBAL;
    uint64_t k = a / MEM_WINDOW_SIZE - 1; /* MEM_WINDOW_SHARED, LOCAL, CONST, PARAM follow each other */
    if (k >= sizeof windows / sizeof *windows)
        return BC_SPACE_GENERIC;
    *off = a % MEM_WINDOW_SIZE;
    return windows[k];
}
_Static_assert(MEM_WINDOW_SHARED == MEM_WINDOW_SIZE && MEM_WINDOW_LOCAL == 2 * MEM_WINDOW_SIZE &&
                   MEM_WINDOW_CONST == 3 * MEM_WINDOW_SIZE && MEM_WINDOW_PARAM == 4 * MEM_WINDOW_SIZE,
               "vm_generic_space: the windows follow each other");

/* Raises a fault for the lanes of `mask` at op `op` of `frame` (the first
 * lane is named). Returns -1. */
int vm_fault_at(vm_block *b, vm_warp *w, const vm_frame *frame, uint32_t pc, uint32_t lane,
                int status, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* At most this many notes are kept per block (the rest are counted). */
#define VM_MAX_NOTES 8
/* Appends one note line for lane `lane` of warp w at op pc of frame
 * (kernel, block, thread, PTX line) to b->notes: something the program
 * did that kemu handled without a fault but the user should hear of. */
void vm_note(vm_block *b, vm_warp *w, const vm_frame *frame, uint32_t pc, uint32_t lane, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Writes "FILE.ptx:LINE" (and " (FILE.cu:LINE)" with .loc) of op pc of
 * frame (the kernel when NULL) into where[0..n), or "<unknown>". */
void vm_describe_pc(const vm_block *b, const vm_frame *frame, uint32_t pc, char *where, size_t n);

/* Call frames allocated and not yet freed in this process (a leak test
 * compares it before and after a launch). */
uint64_t vm_frames_live(void);

double vm_now(void);
/* whether the launch has timed out: the watchdog's flag, or, every 16th
 * call with *countdown (every call without), the clock past L->deadline
 * (which then sets the flag for the other blocks) */
int vm_launch_clock_expired(vm_launch *L);
static inline int vm_launch_expired(vm_launch *L, uint32_t *countdown)
{
    if (__atomic_load_n(&L->expired, __ATOMIC_RELAXED))
        return 1;
    if (L->deadline <= 0 || (countdown && ((*countdown)++ & 15)))
        return 0;
    return vm_launch_clock_expired(L);
}

#endif
