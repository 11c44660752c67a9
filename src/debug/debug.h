/* The kernel debugger's core: an observer with a brake. It rides the
 * interpreter's hook table (src/vm/hooks.h), wrapping the checkers' table
 * when they run: the `op` hook counts every executed warp-instruction
 * (the run's event number), tests breakpoints and stepping, the `access`
 * hook watchpoints and replay queries, the `fault` hook and the checkers'
 * new findings the `break on` catchpoints. Where it must stop, it stops
 * inside the hook: the launch's only host thread waits there while a
 * front end (the gdb-style prompt, cmd.c, or the Debug Adapter Protocol
 * server, dap.c) inspects the machine and picks how to resume.
 *
 * Runs are deterministic (one host thread, the same schedule), so going
 * back means running again: the target (a `kemu run` or `kemu call`
 * command line, which the front end's driver runs) is started over and
 * stopped, quietly, at an earlier event number. Queries about the past
 * (last writer, access history) are answered the same way, with a
 * recorder on during the re-run. The core knows nothing about terminals
 * or JSON. */
#ifndef KEMU_DEBUG_H
#define KEMU_DEBUG_H

#include <stdint.h>
#include <stdio.h>

#include "debug/dwarf.h"
#include "util.h"
#include "vm/vm.h"

typedef struct dbg dbg;

/* The debugger of this process (NULL: none). Every launch on every device
 * consults it (src/exec/launch.c). */
extern dbg *dbg_active;

/* Set (from a signal handler) to stop the running kernel at its next
 * instruction, as gdb does on Ctrl-C. */
extern volatile int dbg_interrupt_requested;

/* ---- the launch side (src/exec/launch.c) ------------------------------- */

/* A launch begins on a device whose checkers installed `inner` (or NULL)
 * and `inner_faults` (memcheck alone): returns the hook table to install.
 * The launch runs on one host thread and without --timeout while a front
 * end is attached. */
const vm_hooks *dbg_launch_begin(dbg *d, vm_launch *L, const vm_hooks *inner, const vm_hooks *inner_faults);
/* The launch ended (fault: its fault or NULL). Returns 1 when its printf
 * output is to be dropped (a run replayed to an earlier point already
 * printed it, or the debugger killed the launch). */
int dbg_launch_end(dbg *d, vm_launch *L, const vm_fault *fault);
/* Whether launches run on one host thread (a debugger or tracer is attached). */
int dbg_single_thread(const dbg *d);
/* Whether the launch's --timeout is kept (only when nobody waits at a prompt). */
int dbg_keeps_timeout(const dbg *d);

/* The debugger or tracer the environment asks for (KEMU_DEBUG,
 * KEMU_TRACE_FILE: `kemu debug exec|python`, `kemu exec --trace=FILE`),
 * started once, before the process's first launch; after each launch, the
 * program ends if that debugger killed it. */
void dbg_environment_start(void);
void dbg_environment_after_launch(void);

/* ---- creating a debugger ------------------------------------------------ */

/* How a front end resumes after a stop. */
enum {
    DBG_RESUME_CONTINUE = 0,
    DBG_RESUME_STEPI,      /* next instruction of the focused warp (count in arg) */
    DBG_RESUME_STEP,       /* next source line, into calls */
    DBG_RESUME_NEXT,       /* next source line, over calls */
    DBG_RESUME_FINISH,     /* until the focused frame returns */
    DBG_RESUME_KILL,       /* end the run */
    DBG_RESUME_RESTART     /* end the run and start it again (to d->restart_at, 0: normally) */
};

/* Why the target stopped. */
enum {
    DBG_STOP_BREAKPOINT = 1, DBG_STOP_STEP, DBG_STOP_WATCH, DBG_STOP_FAULT, DBG_STOP_CHECKER,
    DBG_STOP_BRKPT, DBG_STOP_REPLAY, DBG_STOP_ENTRY,
    DBG_STOP_INTERRUPT     /* dbg_interrupt_requested: Ctrl-C, DAP pause */
};

/* What breaks on its own (`break on ...`). */
enum { DBG_ON_FAULT = 1, DBG_ON_RACE = 2, DBG_ON_MEMCHECK = 4, DBG_ON_INITCHECK = 8, DBG_ON_SYNCCHECK = 16 };

typedef struct dbg_frontend {
    void *ctx;
    /* The target stopped (d's stop record says why and where): inspect,
     * then return a DBG_RESUME_* (with dbg_resume's argument set). */
    int (*stopped)(void *ctx, dbg *d);
    /* A message for the user (a breakpoint hit line, a kernel launch...). */
    void (*message)(void *ctx, dbg *d, const char *text);
} dbg_frontend;

/* A debugger with a front end (stops), or with none (a tracer only). */
dbg *dbg_create(const dbg_frontend *fe);
void dbg_destroy(dbg *d);

/* --trace FILE: one line per executed warp-instruction. Filters: block
 * (x,y,z; NULL: all), warp (-1: all), lines [lo, hi] of the source (CUDA
 * line where the PTX has .loc, else PTX line; 0,0: all). Returns 0, or
 * -1 with errno when the file cannot be opened. */
typedef struct dbg_trace_filter {
    int has_block;
    unsigned block[3];
    int warp;
    int line_lo, line_hi;
} dbg_trace_filter;
int dbg_trace_open(dbg *d, const char *path, const dbg_trace_filter *filter);
/* Parses one filter option into f: what is "block" (X,Y,Z), "warp" (N)
 * or "lines" (N or A-B). 0, or -1 with msg. */
int dbg_trace_filter_parse(const char *what, const char *text, dbg_trace_filter *f, char *msg, size_t n);
/* Starts tracing launches to path: on the process's debugger when there
 * is one, else on a tracer of its own (returned through *owned, for
 * dbg_trace_stop). 0, or -1 with msg. */
int dbg_trace_start(const char *path, const dbg_trace_filter *f, dbg **owned, char *msg, size_t n);
void dbg_trace_stop(dbg *owned);

/* ---- breakpoints --------------------------------------------------------- */

enum { DBG_BP_BREAK = 0, DBG_BP_WATCH, DBG_BP_RWATCH, DBG_BP_AWATCH };

typedef struct dbg_bp {
    int number, kind;
    int enabled, temporary;
    uint64_t hits;
    char *spec;          /* as given: "kernel", "file.cu:12", "file.ptx:40", "*pc", "*fn+pc" */
    char *cond;          /* condition expression, or NULL */
    /* watchpoints: what and where */
    char *expr;
    int space;           /* BC_SPACE_* (GLOBAL or SHARED: any block at that offset) */
    uint64_t addr;
    unsigned size;
    int type;            /* ptx_type to show values with */
    unsigned char old[16];
    /* breakpoints: the ops they stand on, by function index, in the
     * current launch's module (bit per pc), and a description */
    uint8_t **at;
    int nat;
    char where[256];     /* "kernel+pc: file foo.cu, line 12." or empty while pending */
} dbg_bp;

/* Adds a breakpoint at spec (see dbg_bp.spec) with an optional
 * condition; returns its number, or -1 with msg when spec is malformed. */
int dbg_break(dbg *d, const char *spec, const char *cond, int temporary, char *msg, size_t n);
/* A watchpoint on the memory an lvalue expression names (evaluated now
 * in the focus, or globally for module variables). */
int dbg_watch(dbg *d, int kind, const char *expr, char *msg, size_t n);
int dbg_bp_delete(dbg *d, int number);
int dbg_bp_enable(dbg *d, int number, int enabled);
int dbg_bp_condition(dbg *d, int number, const char *cond);
dbg_bp *dbg_bp_find(dbg *d, int number);
/* The breakpoint list (n set). */
dbg_bp **dbg_bps(dbg *d, int *n);
void dbg_break_on(dbg *d, unsigned mask, int on);
unsigned dbg_breaks_on(const dbg *d);

/* ---- the stop record and focus ------------------------------------------- */

/* A lane's place: its frame and pc. */
typedef struct dbg_where {
    const vm_frame *frame;
    const bc_function *fn;
    uint32_t pc;
} dbg_where;

typedef struct dbg_stop {
    int reason;          /* DBG_STOP_* */
    int bp;              /* breakpoint/watchpoint number, or 0 */
    char text[2048];     /* the reason in words (the fault, the finding, old/new values) */
} dbg_stop;

/* The focus (cuda-gdb's): block, warp, lane and selected frame. */
typedef struct dbg_focus {
    vm_block *b;
    vm_warp *w;
    int lane;
    int frame;           /* 0: innermost */
} dbg_focus;

const dbg_stop *dbg_last_stop(const dbg *d);
dbg_focus *dbg_focus_get(dbg *d);
vm_launch *dbg_launch(dbg *d);
uint64_t dbg_event(const dbg *d);
/* The launch number of the current launch (cuda-gdb's kernel id, from 0). */
int dbg_kernel_id(const dbg *d);
/* Whether the target is stopped inside a launch (focus and state valid). */
int dbg_is_stopped(const dbg *d);

/* A lane's place (0), or -1 when the lane exited or does not exist.
 * frame_level selects a caller (0 innermost); -1 past the outermost. */
int dbg_lane_where(dbg *d, vm_block *b, vm_warp *w, int lane, int frame_level, dbg_where *out);
/* Lanes of w that are active at the focused lane's pc (the running group), exited, and valid. */
uint32_t dbg_warp_active(dbg *d, vm_block *b, vm_warp *w, int lane);
/* The resident blocks (the cluster running now). */
int dbg_blocks(dbg *d, vm_block ***out);
/* Sets focus to a block (x,y,z; NULL: keep), a thread (x,y,z; NULL: keep)
 * or a warp/lane (-1: keep). Returns 0, -1 with msg when that is not resident. */
int dbg_set_focus(dbg *d, const unsigned *block, const unsigned *thread, int warp, int lane, char *msg, size_t n);

/* Source of an op: CUDA file and line (file NULL when the PTX has no .loc
 * there), PTX line. */
typedef struct dbg_src {
    const char *file;
    int line;
    int ptx_line;
} dbg_src;
void dbg_src_of(const dbg *d, const bc_function *fn, uint32_t pc, dbg_src *out);
/* The PTX source text of a line of the current module (no newline, trimmed), or "". */
void dbg_ptx_line(const dbg *d, int line, char *buf, size_t n);
const char *dbg_ptx_file(const dbg *d);

/* ---- values -------------------------------------------------------------- */

typedef struct dbg_value {
    int kind;            /* DBG_V_INT, UINT, FLOAT, PRED_MASK, ERROR */
    int type;            /* ptx_type for formatting (PTX_T_NONE: from kind) */
    int64_t i;
    uint64_t u;
    double f;
    /* lvalues: where the value lives */
    int is_lvalue;
    int space;           /* BC_SPACE_* */
    uint64_t addr;
    unsigned size;
    /* pointers from casts: the space and type they point to */
    int ptr_space, ptr_type;
    int is_pointer;
    uint64_t array_count; /* a PTX array variable: elements */
    /* source variables (DWARF): the value's type and a pointer's pointee
     * type (dwarf_type index + 1; 0: none), a struct (not loaded as a
     * scalar), a variable not live at the pc */
    int dtype, ptr_dtype;
    int is_struct;
    int optimized_out;
    /* a register (a PTX register named by the expression, or the one
     * DWARF places a source variable in): where it lives, for set var */
    vm_frame *reg_frame;
    uint32_t reg_slot;
    int in_register;     /* 0, 1 a register, 2 a predicate */
} dbg_value;
enum { DBG_V_INT = 1, DBG_V_UINT, DBG_V_FLOAT, DBG_V_MASK };

/* Evaluates an expression for lane `lane` of the focus's warp in the
 * focus's frame (registers %r5, predicates, threadIdx.x, blockIdx.y,
 * blockDim, gridDim, $lane, $warp, $pc, source variables by their CUDA
 * names where the PTX carries DWARF (s.member, p->member), kernel
 * parameters and PTX variables by name, casts to (u32)/(float)/(T*) with
 * @shared and the other spaces, *p, p[i], &var, C operators). 0, or -1
 * with msg. */
int dbg_eval(dbg *d, const char *expr, int lane, dbg_value *out, char *msg, size_t n);
/* gdb's assignment (`set var LHS = RHS`, `print LHS = RHS`) for lane
 * `lane` of the focus: LHS a register or predicate by name (%r5, %p1), a
 * source variable (DWARF), a PTX variable or parameter, or any memory
 * lvalue (*p, a[i], *(float@shared *)8); RHS converted to LHS's type as C
 * does. *out: LHS's new value. Marks the run changed (replay refuses).
 * 0, or -1 with msg. */
int dbg_assign(dbg *d, const char *lhs, const char *rhs, int lane, dbg_value *out, char *msg, size_t n);
/* The position of the top-level assignment `=` in text (not ==, !=, <=,
 * >=, nor inside brackets), or -1. */
int dbg_assignment_at(const char *text);
/* Writes n bytes of memory in space as lane sees it (as dbg_read_memory
 * reads). 0, or -1 when the range is not memory the launch can reach. */
int dbg_write_memory(dbg *d, int space, uint64_t addr, const void *buf, size_t n, int lane);
/* Going back inside one launch, for targets that cannot be run again
 * from the start (kemu debug exec, kemu debug python): the launcher
 * snapshots device memory before each launch and, when the debugger asks
 * to go back to an event of the current launch, restores it and runs the
 * launch again (dbg_launch_replay_pending, dbg_launch_replay_begin). */
void dbg_set_launch_replay(dbg *d, int on);
int dbg_launch_replay_enabled(const dbg *d);
/* The launcher could not snapshot this launch (why, e.g. too much memory);
 * NULL: it did. Going back then says why. */
void dbg_launch_replay_unavailable(dbg *d, const char *why);
/* Whether going back to event `at` can be done inside the current launch:
 * NULL, or why not (in words). */
const char *dbg_launch_replay_refusal(const dbg *d, uint64_t at);
/* After a launch ended: whether the debugger asked to run it again (a
 * replay to an event inside it); then the launcher restores memory and
 * calls dbg_launch_replay_begin before launching again. */
int dbg_launch_replay_pending(const dbg *d);
void dbg_launch_replay_begin(dbg *d);
/* Notes that the user changed the target's state (set var): a replay
 * would not reproduce it. */
void dbg_mark_changed(dbg *d);
/* Why the run's history cannot be replayed, or NULL when it can. */
const char *dbg_history_broken(const dbg *d);
/* Reads n bytes of memory in space (GENERIC resolves windows) as lane
 * sees it (local memory is per lane, shared per block). 0 or -1. */
int dbg_read_memory(dbg *d, int space, uint64_t addr, void *buf, size_t n, int lane);
/* Where memory a value names lies (an lvalue's place, a pointer's
 * target, an integer as a generic address), in GLOBAL or SHARED space
 * (cluster windows fold to SHARED): 0, or -1 when it is in another space. */
int dbg_memory_place(const dbg_value *v, int *space, uint64_t *addr, unsigned *size);
/* Formats a value: fmt 0 natural, or gdb's x d u o t f c a. */
void dbg_format_value(const dbg_value *v, int fmt, char *buf, size_t n);
/* Reads an lvalue's current contents (kind and bits by its type). */
int dbg_load(dbg *d, dbg_value *v, int lane);

/* Sets v to the value of the low size bytes of bits read as a ptx_type. */
void dbg_value_from_bits(dbg_value *v, uint64_t bits, unsigned size, int type);
/* Formats a value as gdb prints it, aggregates too: arrays {1, 2, ...},
 * structs {a = 1, b = 2}, DWARF pointers (float *) 0x..., <optimized out>;
 * lvalues are read as lane sees memory. Appends to b. */
void dbg_format_object(dbg *d, const dbg_value *v, int fmt, int lane, util_buffer *b);

/* out: place (an lvalue's space and address) given the shape of DWARF
 * type dwarf_type_index (ptx type, size, pointer, array, struct). 0. */
int dbg_shape_value(dbg *d, const dbg_value *place, int dwarf_type_index, dbg_value *out);
/* The source variables (DWARF, nvcc -G) of the current launch's module,
 * read at the first call of a launch; NULL when there are none. */
const dwarf_info *dbg_dwarf(dbg *d);
/* The source variables visible at the focused lane's selected frame,
 * innermost scope first (see dwarf_visible): count, up to max filled;
 * 0 when there is no DWARF or no focus. */
int dbg_visible_vars(dbg *d, const dwarf_var **out, int max);

/* The register named name ("%r5") of fn, its slot and type: 0, -1 if none. */
int dbg_find_register(const bc_function *fn, const char *name, uint32_t *slot, int *type, int *is_pred);

/* ---- resuming and replay -------------------------------------------------- */

/* Starting the target over at an event (0: from the start, running
 * normally): the driver re-runs the target after the current run ends.
 * Queries armed for the re-run (last writer, history) are answered when
 * it reaches the event. */
typedef struct dbg_query {
    int kind;            /* 0 none, 1 last writer, 2 history, 3 previous event of a warp, 4 previous stop */
    int space;
    uint64_t addr;
    unsigned size;
    uint64_t block_id;   /* kind 2 (shared), 3: the block (linear id) and warp */
    int warp;
} dbg_query;
/* Plans a re-run to event `at` with query q (NULL: none). */
void dbg_restart_at(dbg *d, uint64_t at, const dbg_query *q);
/* Whether the run that just ended asked to be started again. */
int dbg_restart_pending(const dbg *d);
/* Whether the debugger killed the run that just ended. */
int dbg_run_killed(const dbg *d);
/* Called by the driver before each run of the target. */
void dbg_run_begin(dbg *d);
/* The query's answer after the re-run reached its event (text), or NULL. */
const char *dbg_query_answer(const dbg *d);
/* The front end showed the answer. */
void dbg_answer_done(dbg *d);
/* The event of the focused warp's previous instruction, if the history
 * ring still holds it (0: not known). */
uint64_t dbg_previous_event_of_focus(dbg *d);
/* Events kept in the ring of recent instructions. */
#define DBG_RING 8192

/* gdb's scheduler-locking: DBG_LOCK_OFF (other warps run whenever the
 * focused one waits or yields), ON (only the focused warp runs), STEP
 * (only while stepping). A warp held back yields before its next
 * instruction; when the focused warp itself waits on the others, the
 * target stops and says so. Holding warps changes the schedule, so the
 * run can no longer be replayed: dbg_history_valid turns 0 until `run`. */
enum { DBG_LOCK_OFF = 0, DBG_LOCK_ON, DBG_LOCK_STEP };
void dbg_set_scheduler_locking(dbg *d, int mode);
int dbg_scheduler_locking(const dbg *d);
int dbg_history_valid(const dbg *d);

/* Run-control state for the front end: stepping argument (stepi count). */
void dbg_set_step_count(dbg *d, uint64_t n);

/* ---- utilities for front ends ------------------------------------------- */

/* Reads a line from the FILE ctx after printing prompt on stdout (a
 * dbg_readline_fn without line editing). */
char *dbg_read_line(void *ctx, const char *prompt);

/* "block (x,y,z), thread (x,y,z)" of a lane. */
void dbg_describe_lane(const vm_block *b, const vm_warp *w, int lane, char *buf, size_t n);
/* "fn at file.cu:12 (file.ptx:40)" for a place. */
void dbg_describe_where(const dbg *d, const dbg_where *wh, char *buf, size_t n);
/* The frames of a lane, innermost first: fills up to max, returns count. */
int dbg_backtrace(dbg *d, vm_block *b, vm_warp *w, int lane, dbg_where *out, int max);
/* mbarrier objects a block initialized (shared offsets), up to max. */
int dbg_mbarriers(dbg *d, const vm_block *b, uint64_t *offsets, int max);

#endif
