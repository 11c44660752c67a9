/* Internal interface of racecheck (race.c, race_global.c, race_cross.c):
 * the per-host-thread state of the cluster being analyzed, its vector
 * clocks, shared-memory shadow cells and global-memory access log. */
#ifndef KEMU_RACE_INTERNAL_H
#define KEMU_RACE_INTERNAL_H

#include "check/check_internal.h"

/* One record of a shared-memory shadow word: the latest access of one
 * (warp, op, kind, bytes). */
typedef struct race_tuple {
    uint64_t who;            /* the warp and op: RACE_WHO(unit, fn, pc) */
    uint32_t clock;          /* the unit's own clock at its latest access */
    uint32_t lanes;          /* lanes since the warp's last warp sync */
    uint32_t value;          /* bytes stored (RACE_K_VALUE) */
    uint16_t wsync;          /* the warp's sync counter at the latest access */
    uint8_t kind;            /* RACE_K_* */
    uint8_t bytes;           /* low 4 bits: bytes of the word; high 4: log2 of the access size */
} race_tuple;

/* The unit, function and pc of a record packed in one word, so that
 * finding a warp-instruction's own record is one comparison. */
#define RACE_WHO(unit, fn, pc) (((uint64_t)(uint16_t)(unit) << 48) | ((uint64_t)(uint16_t)(fn) << 32) | (uint32_t)(pc))
#define RACE_WHO_OP(who) ((who) & 0xffffffffffffull) /* fn and pc */
static inline int race_who_unit(uint64_t who) { return (int)(who >> 48); }
static inline uint32_t race_who_fn(uint64_t who) { return (uint32_t)(who >> 32) & 0xffff; }
static inline uint32_t race_who_pc(uint64_t who) { return (uint32_t)who; }

/* What the records of a cell hold (race_cell.flags), so that an access
 * that can race with none of them skips the comparisons. */
enum { RACE_CELL_ANY = 1, RACE_CELL_WRITE = 2, RACE_CELL_WEAK = 4, RACE_CELL_WEAK_WRITE = 8 };

typedef struct race_cell {
    uint16_t gen;
    uint16_t hint;           /* the record last merged or appended (a warp's next access finds its own first) */
    uint16_t n;              /* records */
    uint8_t capl;            /* capacity of ext: 1 << capl, or 0 */
    uint8_t flags;           /* RACE_CELL_* of the records */
    race_tuple inl[2];       /* the records while n <= 2 */
    race_tuple *ext;         /* all records once n > 2 */
} race_cell;

/* A weak load of shared memory whose records are deferred (race.c,
 * "deferred reads"): its warp-instruction and its lane groups, pg[first]
 * to pg[first + n - 1]. */
typedef struct race_pending {
    race_tuple proto;        /* who, clock and wsync of its records */
    uint32_t size;           /* bytes per lane */
    uint32_t first, n;
} race_pending;

typedef struct race_pgroup {
    uint64_t where;          /* byte offset */
    uint32_t lanes;
} race_pgroup;

typedef struct race_shadow {
    race_cell *cells;
    size_t ncells;
    uint16_t gen;
    /* this generation's deferred reads, in the order they ran */
    race_pending *pend;
    size_t npend, cappend;
    race_pgroup *pg;
    size_t npg, cappg;
    uint64_t plo, phi;       /* the words they touch lie in [plo, phi) (bytes; empty when plo >= phi) */
    uint64_t wlo, whi;       /* the words written in this generation lie in [wlo, whi) */
} race_shadow;

/* A synchronization location (atomics, strong accesses, mbarriers). */
typedef struct race_loc {
    uint64_t key;
    uint32_t epoch;
    uint8_t acq, done_acq, is_mbar;
    uint32_t *vc;            /* released clocks */
    uint32_t *done;          /* mbarrier: clocks of completed phases */
} race_loc;

typedef struct race_async {
    uint64_t offset;
    uint32_t pc, group;
    uint16_t fn, rank;
    uint8_t lane, size;
} race_async;

/* The warp-synchronous ops of a unit that ordered only some of its live
 * lanes (__syncwarp(mask), shfl with a partial mask, ...): the value of
 * the unit's warp sync counter each brought, and the lanes it ordered.
 * Every other step of the counter (full warp syncs, barriers, fences)
 * orders all the warp's lanes. */
typedef struct race_sync_event {
    uint32_t at, lanes;
} race_sync_event;

typedef struct race_partial_syncs {
    race_sync_event *v;
    size_t n, cap;
} race_partial_syncs;

typedef struct race_unit_async {
    race_async *v;
    size_t n, cap;
    uint32_t committed;
} race_unit_async;

typedef struct race_bar {
    uint32_t *acc;           /* clocks of the arrivals of the current phase (a row of
                              * bar_mem), or NULL before the group's first arrival */
    uint32_t waiters;        /* warps that wait (bar.sync / bar.red) */
    uint8_t acq;
} race_bar;

/* One warp-instruction's access to a range of global memory: lanes
 * first..first+k at consecutive elements (step 1, pitch esize), lanes at
 * one element (step 0), lanes step apart at elements pitch bytes apart, or
 * rows of such elements (operands loaded lane by lane: race_elems). */
typedef struct race_gacc {
    uint64_t start, end;
    uint64_t value;          /* the value every element stored (RACE_K_VALUE) */
    uint32_t pc, clock, snap, wsync, lanes, tid0;
    uint32_t rpitch;         /* rows > 1: bytes from one row's start to the next's */
    uint16_t fn, unit;
    uint16_t pitch;          /* bytes from one element's start to the next's */
    uint8_t kind, esize;
    int8_t step, rstep;      /* thread increment per element of a row, per row */
    uint8_t rows, cols;      /* rows > 1: rows of cols elements */
} race_gacc;

/* The largest pitch of a strided range, and of its rows: wider strides
 * stay one range per lane, so that a range's span (which the sweeps keep
 * open) stays short. */
#define RACE_MAX_PITCH 16384u
#define RACE_MAX_ROW_PITCH (1u << 20)

typedef struct race_dsmem race_dsmem;

struct race_thread {
    check_thread *owner;
    race_dsmem *dsmem;       /* accesses to peers' shared memory (race_dsmem.c), or NULL */
    int n, nwarps, U;
    size_t ucap;             /* units the arrays hold */
    uint32_t *vc, *fvc;      /* U x U: clocks, clocks at the last fence */
    uint32_t *wsync, *relf;  /* per unit: warp sync counter; release frontier across clusters */
    race_partial_syncs *psync; /* per unit: its partial warp syncs in this cluster */
    uint8_t *has_fence, *acq, *cl_wait, *dirty;
    uint32_t *snap;          /* per unit: its current snapshot in snaps */
    /* per block of the group, by rank */
    size_t rcap;             /* blocks bars and block_id hold */
    race_bar *bars;          /* VM_BARRIERS per block */
    uint64_t *block_id;
    race_shadow *shared;
    size_t nshared;          /* blocks shared holds */
    uint32_t *bar_mem;       /* rows of U clocks, one per barrier arrived at in the group */
    size_t bar_rows, bar_cap; /* rows in use; words allocated */
    uint32_t *cl_acc, *cl_done;
    uint8_t cl_acc_acq, cl_done_acq;
    race_loc *locs;
    size_t loc_cap, loc_count;
    uint32_t loc_epoch;
    uint32_t *loc_mem;       /* vector clocks of locations */
    size_t loc_mem_used, loc_mem_cap;
    race_unit_async *async;
    /* grouping the lanes of one warp-instruction by shared word: the
     * group of word i is mark[i] & 31 when mark[i] >> 5 == mark_stamp */
    uint32_t *mark;
    size_t nmark;
    uint32_t mark_stamp;
    uint64_t cluster_key;
    int warp_level, benign_level;
    /* global memory of the current cluster */
    race_gacc *log;
    size_t nlog, caplog;
    uint32_t *snaps;         /* vector clocks (U each) the log refers to */
    size_t nsnaps, capsnaps;
    /* records for the analysis across clusters */
    race_interval *iv;
    size_t niv, capiv;
};

static inline uint64_t race_mix(uint64_t z)
{
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdull;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ull;
    z ^= z >> 33;
    return z;
}

/* dst = max(dst, src); returns whether dst changed. */
static inline int race_join(uint32_t *dst, const uint32_t *src, int n)
{
    int changed = 0;
    for (int i = 0; i < n; i++)
        if (src[i] > dst[i]) {
            dst[i] = src[i];
            changed = 1;
        }
    return changed;
}

/* One side of a racing pair, for the report. */
typedef struct race_side {
    uint32_t fn, pc;
    int kind;
    uint64_t block;
    uint32_t tid;
    unsigned size;
} race_side;

/* Whether accesses of lanes la of unit u at warp sync count w1 and of
 * lanes lb at count w2 are ordered by the warp syncs between them: some
 * sync between w1 and w2 that every pair of a lane of la and another
 * lane of lb took part in (the order the two ran in does not matter). */
int race_warp_ordered_slow(const race_thread *r, int u, uint32_t w1, uint32_t w2, uint32_t la, uint32_t lb);
static inline int race_warp_ordered(const race_thread *r, int u, uint32_t w1, uint32_t w2, uint32_t la, uint32_t lb)
{
    if (w1 == w2)
        return 0;
    return !r->psync[u].n || race_warp_ordered_slow(r, u, w1, w2, la, lb);
}

/* Records a race instance between x and y (any order) in the thread's
 * groups. owner: the block whose shared memory (space 0) or 0; address:
 * the first byte; instance: the instance key. */
void race_report(race_thread *r, race_side x, race_side y, int space, int scope, int cls, uint64_t owner,
                 uint64_t address, uint64_t instance);

/* Whether race_stored_bytes knows the bytes op stores (the same for
 * every lane): a plain store of registers of at most 8 bytes each. */
static inline int race_stores_known(const bc_op *op, unsigned size)
{
    unsigned n = op->n ? op->n : 1, esz = op->src_size;
    return op->code == BC_ST && esz * n == size && esz <= 8 && size <= 64;
}

/* The bytes lane l stores with op (ST only) into buf; returns 1 if known. */
int race_stored_bytes(const vm_frame *f, const bc_op *op, int l, uint8_t *buf, unsigned size);

/* Logs the global accesses of the lanes of mask of one warp-instruction
 * (race_global.c); kind is RACE_K_*. */
void race_global_access(race_thread *r, int unit, const vm_block *b, const vm_warp *w, const vm_frame *f,
                        uint32_t pc, int kind, uint32_t mask, const vm_access_lanes *lanes, unsigned size);
/* At the end of a cluster: races between its global accesses, then its
 * records for the analysis across clusters. race_global_free releases the
 * log. */
void race_global_cluster_end(race_thread *r);
void race_global_free(race_thread *r);

/* The lifetime of distributed shared memory (race_dsmem.c): a cluster
 * begins (0, or -1 when out of memory; nothing is tracked outside thread
 * block clusters); a warp-instruction's accesses, with unit u's clock; at
 * the cluster's end, accesses to a peer's shared memory not ordered before
 * the peer's exit become lifetime hazards (race_dsmem_render). */
int race_dsmem_reset(race_thread *r, const vm_block *b);
void race_dsmem_access(race_thread *r, int u, const vm_block *b, const vm_warp *w, const vm_frame *f, uint32_t pc,
                       int kind, uint32_t mask, const vm_access_lanes *lanes, unsigned size);
void race_dsmem_cluster_end(race_thread *r, const vm_block *b);
void race_dsmem_free(race_dsmem *d);

#endif
