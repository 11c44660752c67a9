/* Internal interface of the checker room: the session, the state of one
 * launch and of each host thread that runs its blocks, finding groups
 * (findings collapsed over their instances), the per-op facts the
 * checkers read from the PTX (memory order, cp.async groups), and the
 * entry points of the four tools. */
#ifndef KEMU_CHECK_INTERNAL_H
#define KEMU_CHECK_INTERNAL_H

#include <pthread.h>
#include "check/check.h"
#include "vm/mbarrier.h"

/* Severities; CHECK_INFO lines (summaries) count neither as errors nor as
 * warnings and are never cut by --print-limit. */
enum { CHECK_ERROR = 0, CHECK_WARNING = 1, CHECK_INFO = 2 };

/* One finding. `text` holds its report lines separated by '\n' (without
 * the "========= " prefix); `key` orders findings deterministically. */
typedef struct check_finding {
    int severity;
    int tool;               /* KEMU_TOOL_* */
    uint64_t key[4];        /* launch, then tool-defined (block id, pc, address ...) */
    char *text;
    char *json;             /* one JSON object, or NULL */
} check_finding;

/* ---- sets and finding groups (findings.c) --------------------------------- */

/* A set of 64-bit values (open addressing; 0 is stored apart). */
typedef struct check_set {
    uint64_t *slots;
    size_t cap, count;
    int has_zero;
} check_set;

/* Adds v; returns 1 when it was new, 0 when present, -1 out of memory. */
int check_set_add(check_set *s, uint64_t v);
/* Whether v is in the set. */
int check_set_has(const check_set *s, uint64_t v);
/* Number of values in the set; freeing empties it. */
size_t check_set_size(const check_set *s);
void check_set_free(check_set *s);

/* The representative instance of a group: the smallest `order` wins. The
 * fields are tool-defined (see each tool). */
typedef struct check_rep {
    uint64_t order[4];
    uint64_t block[2];      /* linear block ids */
    uint64_t owner;         /* tool-defined (the block whose shared memory ...) */
    uint64_t address;       /* device address or byte offset */
    uint32_t tid[2];        /* linear thread index in the block */
    uint32_t a, b, c;       /* tool-defined small values */
} check_rep;

/* A finding group: one reported finding with its instances. `id` names the
 * group within a launch (tool-defined; also its sort order). */
typedef struct check_group {
    int tool;
    int severity;
    uint64_t id[3];
    check_rep rep;
    check_set instances;    /* distinct instance keys */
    uint64_t extra;         /* instances counted without keys */
    char *detail;           /* tool-defined text (first one kept), or NULL */
} check_group;

typedef struct check_groups {
    check_group *v;
    size_t n, cap;
    uint32_t *index;        /* hash of (tool, id) -> v index + 1 */
    size_t index_cap;
} check_groups;

/* Finds or creates the group (tool, id). Returns NULL when out of memory. */
check_group *check_groups_get(check_groups *g, int tool, int severity, const uint64_t id[3]);
/* Records one instance in a group: its key (counted once) and its
 * representative candidate. */
void check_group_note(check_group *gr, uint64_t instance, const check_rep *rep);
/* Offers a representative candidate without counting an instance. */
void check_group_offer(check_group *gr, const check_rep *rep);
/* Moves every group of src into dst (merging equal ones: union of the
 * instances, the smaller representative); src is emptied. Freeing releases
 * every group. */
void check_groups_merge(check_groups *dst, check_groups *src);
void check_groups_free(check_groups *g);

/* ---- per-op facts from the PTX (opinfo.c) ---------------------------------- */

enum {
    CHECK_OP_ACQUIRE = 1u << 0,   /* .acquire or .acq_rel */
    CHECK_OP_RELEASE = 1u << 1,   /* .release or .acq_rel */
    CHECK_OP_STRONG = 1u << 2,    /* .relaxed/.acquire/.release/.volatile, or an atomic */
    CHECK_OP_ASYNC_COMMIT = 1u << 3,
    CHECK_OP_ASYNC_WAIT = 1u << 4, /* wait_group N (N in `wait`) */
    CHECK_OP_ASYNC_ALL = 1u << 5,  /* wait_all, or cp.async.mbarrier.arrive */
    CHECK_OP_ALIGNED = 1u << 6,   /* an aligned barrier (bar.sync, barrier.sync.aligned) */
    CHECK_OP_NARROW_SCOPE = 1u << 7, /* scope .cta or .cluster (does not order other clusters) */
    CHECK_OP_EXIT_PATH = 1u << 8  /* in a kernel: from here every path exits through branches only */
};

typedef struct check_opinfo {
    uint16_t flags;
    uint8_t wait;                 /* wait_group N */
} check_opinfo;

/* Per-function op facts of a module, indexed by function index then pc
 * (caller frees with check_opinfo_free). Returns NULL when out of memory. */
check_opinfo **check_opinfo_build(const bc_module *m);
void check_opinfo_free(check_opinfo **ops, const bc_module *m);

/* ---- launch and host-thread state --------------------------------------- */

typedef struct check_launch check_launch;
typedef struct race_thread race_thread;

/* Global accesses that went on inside an allocation's mapped granule
 * (vm_launch.mapped_granule) in the blocks a host thread ran: how many
 * lanes, and the one with the smallest (block, thread, function, pc). */
typedef struct check_mapped {
    uint64_t lanes;
    uint64_t order[3];            /* block, thread, function << 32 | pc of the smallest */
    uint64_t address;
    uint32_t size;
    int kind;
} check_mapped;

/* The granule a GPU maps global memory in (the allocation granularity of
 * cudaMalloc on current GPUs): under racecheck, initcheck or synccheck
 * without memcheck, an access past an allocation but within its size
 * rounded up to this goes on (check_launch_begin). */
#define CHECK_MAPPED_GRANULE (2ull << 20)

/* The state of one host thread during one launch. */
typedef struct check_thread {
    check_launch *launch;
    check_groups groups;          /* findings of the blocks this thread ran */
    check_mapped mapped;
    struct race_thread *race;
    struct init_thread *init;
    struct sync_thread *sync;
    struct mem_thread *mem;
} check_thread;

struct check_launch {
    struct check_session *s;
    vm_launch *L;
    uint64_t serial;              /* unique over the process */
    uint64_t number;              /* the session's launch counter */
    check_opinfo **ops;
    unsigned tools;
    pthread_mutex_t lock;
    check_thread **threads;
    size_t nthreads, capthreads;
};

/* The calling host thread's state for launch cl (created on first use);
 * NULL when out of memory. */
check_thread *check_thread_get(check_launch *cl);

/* The op facts of op pc of function fn. */
static inline check_opinfo check_op(const check_launch *cl, const bc_function *fn, uint32_t pc)
{
    check_opinfo none = {0, 0};
    return cl->ops && cl->ops[fn->index] ? cl->ops[fn->index][pc] : none;
}

/* An initcheck shadow of one user allocation: one byte per byte, nonzero
 * when written. */
typedef struct check_init_alloc {
    uint64_t id, base, size;
    uint8_t *written;
} check_init_alloc;

struct check_session {
    kemu_check_config cfg;
    pthread_mutex_t lock;
    check_finding *findings;
    size_t nfindings, capfindings;
    uint64_t launches;      /* launch counter, the first sort key */
    vm_hooks hooks;
    check_launch *cur;      /* the launch in progress, or NULL */
    check_init_alloc *allocs; /* initcheck: shadows of user allocations, by base */
    size_t nallocs, capallocs;
    vm_heap_table *heap;    /* memcheck: the device heap's allocations (from the first launch with a heap) */
};

/* Adds a finding (thread-safe; takes ownership of text and json). */
void check_add(check_session *s, int tool, int severity, const uint64_t key[4], char *text, char *json);

/* The "kernel+line (file.cu:N)" description of an op for reports. */
void check_describe_pc(const vm_launch *L, const vm_frame *f, uint32_t pc, char *buf, size_t n);
/* The same for op pc of function fn. */
void check_describe_op(const vm_launch *L, const bc_function *fn, uint32_t pc, char *buf, size_t n);
/* Writes "(x,y,z)" of a block (linear id) or of a thread (linear index in
 * its block). */
void check_block_coords(const vm_launch *L, uint64_t linear, char *buf, size_t n);
void check_thread_coords(const vm_launch *L, uint64_t linear, char *buf, size_t n);
/* The function of index i of the launch's module. */
const bc_function *check_function(const vm_launch *L, uint32_t i);
/* "allocation #N + off" or a description of an address outside allocations. */
void check_describe_global(const mem_space *mem, uint64_t address, char *buf, size_t n);

/* The number of instances a group collapsed (its set plus its extra
 * count), for the "N more instances collapsed" text. */
uint64_t check_group_count(const check_group *g);

/* ---- the tools ------------------------------------------------------------ *
 * Each tool keeps its per-host-thread state in check_thread (created on
 * first use, freed by *_thread_free when the launch ends), records
 * findings in the thread's groups, and renders its groups into report
 * text (malloc'd, NULL when the group is not shown) once the threads'
 * groups are merged. The hook entry points take the hook's arguments. */

/* Kinds of a racecheck access record. */
enum { RACE_K_WRITE = 1, RACE_K_STRONG = 2, RACE_K_ATOMIC = 4, RACE_K_ACQ = 8, RACE_K_VALUE = 16 };
#define RACE_K_KEY (RACE_K_WRITE | RACE_K_STRONG | RACE_K_ATOMIC | RACE_K_ACQ)
/* Race classes (group id) and scopes. */
enum { RACE_CLASS_ERROR = 0, RACE_CLASS_WARP = 1, RACE_CLASS_BENIGN = 2, RACE_CLASS_WARP_BENIGN = 3 };
enum { RACE_SCOPE_BLOCK = 0, RACE_SCOPE_CLUSTER = 1, RACE_SCOPE_GRID = 2 };
enum { RACE_RAW = 0, RACE_WAR = 1, RACE_WAW = 2, RACE_LIFETIME = 3 /* an access to a peer's shared memory not before its exit */ };

/* One global-memory access range a cluster leaves for the analysis across
 * clusters (race_global.c writes them, race_cross.c sweeps them). */
typedef struct race_interval {
    uint64_t start, end;          /* bytes [start, end) */
    uint64_t block;               /* linear block id */
    uint64_t cluster;             /* linear id of the cluster's first block */
    uint64_t value;               /* the value every element stored (if RACE_K_VALUE) */
    uint32_t pc;
    uint32_t tid0;                /* thread at start */
    uint32_t rpitch;              /* rows > 1: bytes from one row's start to the next's */
    uint16_t fn;
    uint16_t pitch;               /* bytes from one element's start to the next's in a row:
                                   * esize when contiguous */
    uint8_t kind;                 /* RACE_K_* */
    uint8_t released;             /* a gpu-scope release followed it in its cluster */
    uint8_t esize;                /* element size (access size) */
    int8_t step;                  /* thread increment per element of a row (0: one element, all lanes) */
    uint8_t rows, cols;           /* rows > 1: rows of cols elements */
    int8_t rstep;                 /* thread increment per row */
} race_interval;

/* One field of a comparison function for qsort/util_sort over structs x
 * and y: returns when the field differs. */
#define RACE_CMP(f)                                                           \
    if (x->f != y->f)                                                         \
    return x->f < y->f ? -1 : 1

/* The bytes a range of elements covers, as racecheck compares them: from
 * start, elements of esize bytes pitch bytes apart (a row), up to end; or
 * rows of cols such elements, rpitch bytes apart. Lanes of one
 * warp-instruction at strided elements are logged as one such range. A
 * range with gaps or with threads out of step with its elements (`each`)
 * is compared element by element, as one range per lane would be, except
 * that a row of consecutive lanes at consecutive elements (`row_whole`)
 * is one run, as their own range would be; any other range is one run. */
typedef struct race_elems {
    uint64_t start, end, rpitch;
    uint32_t esize, pitch, rows, cols;
    int each, row_whole;
} race_elems;

static inline race_elems race_elems_of(uint64_t start, uint64_t end, uint32_t esize, uint32_t pitch, int step,
                                       uint32_t rows, uint32_t cols, uint64_t rpitch)
{
    if (!pitch)
        pitch = esize ? esize : 1;
    if (rows < 1)
        rows = 1;
    int whole = pitch == esize && step == 1;
    race_elems e = {start, end, rpitch, esize, pitch, rows, cols, rows > 1 || (step != 0 && !whole), whole};
    return e;
}

static inline race_elems race_interval_elems(const race_interval *v)
{
    return race_elems_of(v->start, v->end, v->esize, v->pitch, v->step, v->rows, v->cols, v->rpitch);
}

/* The thread of the element at x (in the range's hull): tid0 at start,
 * step more per element of a row and rstep more per row; step 0: tid0
 * (one element, all lanes). */
static inline uint32_t race_elem_tid(const race_elems *r, uint32_t tid0, int step, int rstep, uint64_t x)
{
    if (!step)
        return tid0;
    uint64_t off = x - r->start;
    uint64_t i = r->rows > 1 ? off / r->rpitch : 0, j = (r->rows > 1 ? off % r->rpitch : off) / r->pitch;
    return (uint32_t)((int64_t)tid0 + (int64_t)i * rstep + (int64_t)j * step);
}

/* The covered run at or after x (clipped at x) as [*s, *e); 0 when none. */
static inline int race_run_at(const race_elems *r, uint64_t x, uint64_t *s, uint64_t *e)
{
    if (x < r->start)
        x = r->start;
    if (x >= r->end)
        return 0;
    if (!r->each) {
        *s = x;
        *e = r->end;
        return 1;
    }
    uint64_t off = x - r->start, i = 0, ro = off, span = r->end - r->start;
    if (r->rows > 1) {
        i = off / r->rpitch;
        ro = off % r->rpitch;
        span = (uint64_t)(r->cols - 1) * r->pitch + r->esize;
    }
    if (ro >= span) { /* between rows */
        i++;
        ro = 0;
    }
    if (i >= r->rows)
        return 0;
    uint64_t rs = r->start + i * r->rpitch;
    if (r->row_whole) {
        *s = rs + ro;
        *e = rs + span;
        return 1;
    }
    /* ro < span, and a row ends with a whole element (pitch >= esize):
     * past an element's end lies the next element of the row */
    uint64_t j = ro / r->pitch, jo = ro % r->pitch;
    if (jo >= r->esize) {
        j++;
        jo = 0;
    }
    uint64_t es = rs + j * r->pitch;
    *s = es + jo;
    *e = es + r->esize;
    return 1;
}

/* The next piece of the bytes both a and b cover, at or after *x, as
 * [*lo, *hi), split where either range's elements end; advances *x past
 * it. 0 when there is none. */
static inline int race_piece(const race_elems *a, const race_elems *b, uint64_t *x, uint64_t *lo, uint64_t *hi)
{
    for (;;) {
        uint64_t sa, ea, sb, eb;
        if (!race_run_at(a, *x, &sa, &ea) || !race_run_at(b, sa, &sb, &eb))
            return 0;
        if (sb >= ea) {
            *x = sb;
            continue;
        }
        *lo = sb;
        *hi = ea < eb ? ea : eb;
        *x = *hi;
        return 1;
    }
}

/* Creates / frees the racecheck state of a host thread (0, or -1 when out
 * of memory). */
int race_thread_init(check_thread *t);
void race_thread_free(race_thread *r);
/* Blocks of a cluster begin in rank order (rank 0 resets the cluster's
 * clocks); the last block's end analyzes the cluster's global accesses. */
void race_block_begin(check_thread *t, vm_block *b);
void race_block_end(check_thread *t, vm_block *b);
/* A warp-wide memory access (the access hook): shadow-memory checks, and
 * release/acquire for strong accesses, atomics and mbarrier ops. */
void race_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size);
/* A warp arrives at a CTA or cluster barrier (releases its clock); a CTA
 * barrier completes (its waiters acquire the arrivals); a cluster barrier
 * phase completes. */
void race_barrier_arrive(check_thread *t, vm_block *b, vm_warp *w, int id);
void race_barrier(check_thread *t, vm_block *b, int id);
void race_cluster_barrier(check_thread *t, vm_block *b);
/* A warp-synchronous op orders the lanes of the warp. */
void race_warp_sync(check_thread *t, vm_block *b, vm_warp *w, uint32_t active, uint32_t member);
/* A fence (release point, and lane order), or a cp.async group op that
 * commits a group or performs the copies it waits for. */
void race_fence(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask, int scope);
/* After every thread finished: the analysis across clusters, into out. */
void race_launch_end(check_launch *cl, check_groups *out);

/* A range of bytes [start, end). race_range_union sorts the n ranges of v
 * and merges those that overlap, returning how many disjoint ranges are
 * left, in order; race_range_hits says whether [start, end) overlaps one
 * of the n disjoint ordered ranges of u. */
typedef struct race_range {
    uint64_t start, end;
} race_range;
size_t race_range_union(race_range *v, size_t n);
int race_range_hits(const race_range *u, size_t n, uint64_t start, uint64_t end);
/* A launch of the calling thread's pending stream operation
 * (race_stream.c) adds its global accesses to it. */
void race_order_launch(check_launch *cl);
/* The report text of a racecheck group; of a lifetime hazard (an access
 * to a peer's shared memory not ordered before the peer's exit). */
char *race_render(const check_launch *cl, const check_group *g);
char *race_dsmem_render(const check_launch *cl, const check_group *g);
/* The group id of a race between op (fn1, pc1) and op (fn2, pc2) (in
 * canonical order), and the severity of a race class under the session's
 * options in launch cl (-1: not reported). */
void race_group_id(uint64_t id[3], uint32_t fn1, uint32_t pc1, int kind1, uint32_t fn2, uint32_t pc2, int kind2,
                   int space, int scope, int hazard, int cls);
int race_severity(const check_launch *cl, int cls);
/* The level (KEMU_CHECK_OFF, _WARN or _ERROR) of races between lanes of
 * one warp in launch cl: --racecheck-warp, with `auto` an error when the
 * launch has independent thread scheduling (sm_70+, see kemu.h). */
int race_warp_level(const check_launch *cl);
/* The global-memory access ranges of the clusters thread state r ran
 * (owned by r). */
race_interval *race_thread_intervals(race_thread *r, size_t *n);

/* memcheck: a memory op faulted (the bad_access hook): every invalid lane
 * is described and kept with the block's fault message. */
/* memcheck: an invalid or double free of the device heap (the
 * heap_misuse hook), kept with the block's fault message like a bad access. */
void mem_heap_misuse(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                     const char *reason);
void mem_bad_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, int space,
                    uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size);
void mem_thread_free(struct mem_thread *m);
/* Turns the launch's fault into findings: one per invalid lane when the
 * reported fault is a recorded bad access, else the interpreter's message. */
void mem_launch_end(check_launch *cl, const vm_fault *fault);

/* initcheck: per-thread state; a block's shared shadow and registers start
 * unwritten; accesses read or set the shadows; ops read and write
 * registers (the op hook). */
void init_thread_free(struct init_thread *i);
void init_block_begin(check_thread *t, vm_block *b);
void init_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size);
void init_op(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask);
/* The report text of an initcheck group. */
char *init_render(const check_launch *cl, const check_group *g);
/* Host-side events on user allocations: a new one is unwritten, a host
 * copy or memset writes bytes, a free drops the shadow (the caller holds
 * the session lock); init_session_free frees every shadow. */
void init_note_alloc(check_session *s, const mem_allocation *a);
void init_note_write(check_session *s, const mem_space *mem, uint64_t address, uint64_t size);
/* Bytes of [address, address + size) never written (a host-side read):
 * returns 1 with the first such address and their count, else 0. Locked. */
int init_unwritten(check_session *s, uint64_t address, uint64_t size, uint64_t *first, uint64_t *count);
void init_note_free(check_session *s, uint64_t base);
void init_session_free(check_session *s);

/* synccheck: per-thread state, reset per block; mbarrier ops (through the
 * access hook), barrier arrivals and completions, warp-synchronous ops. */
void sync_thread_free(struct sync_thread *y);
void sync_block_begin(check_thread *t, vm_block *b);
/* The block finished or stopped: phases left open (a deadlock) are checked. */
void sync_block_end(check_thread *t, vm_block *b);
void sync_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size);
void sync_barrier_arrive(check_thread *t, vm_block *b, vm_warp *w, int id);
/* Part of warp w (lanes `arrived`) reached the CTA barrier at pc of frame f
 * while other lanes of it are live elsewhere (the divergent_barrier hook). */
void sync_divergent_barrier(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int id,
                            uint32_t arrived);
void sync_barrier(check_thread *t, vm_block *b, int id);
void sync_warp_sync(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t active,
                    uint32_t member);
/* Reports a deadlock the launch stopped with. */
void sync_launch_end(check_launch *cl, const vm_fault *fault);
/* The report text of a synccheck group. */
char *sync_render(const check_launch *cl, const check_group *g);

/* One lane's mbarrier op on the object state v as the interpreter performs
 * it (vm/mbarrier.h). `arg` is the op's b operand (the byte count for the
 * complete_tx of a bulk copy). Sets *completed when the op completed the
 * phase, *overflow when the interpreter faults instead (more arrivals than
 * pending, a transaction count out of range), *done for a successful
 * test/try wait. Returns the new state. */
static inline uint64_t check_mbar_step(uint64_t v, int sub, uint64_t arg, int *completed, int *overflow, int *done)
{
    uint64_t out;
    int e = vm_mbar_step(v, sub, arg, &out, completed, done);
    *overflow = e != VM_MBAR_OK;
    return e ? v : out;
}

/* The host pointer of shared byte `offset` of the block of cluster rank
 * `rank` (the block b belongs to that cluster), or NULL. */
uint8_t *check_shared_ptr(vm_block *b, unsigned rank, uint64_t offset, unsigned size);

#endif
