/* The debugger core (see debug.h): hooks, breakpoints, stepping, focus,
 * replay and the instruction trace. */
#include "config.h"
#include "debug/debug.h"
#include "check/check.h"
#include "vm/numeric.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

dbg *dbg_active;
volatile int dbg_interrupt_requested;

typedef struct ring_entry {
    uint64_t event;
    uint64_t block;
    int32_t warp;
} ring_entry;

/* A store that hit a watchpoint: its old value is compared with memory at
 * the next hook (the store has then happened). */
typedef struct watch_pending {
    int bp;
    uint64_t block;       /* linear id of the writer's block */
    vm_block *b;
    vm_warp *w;
    int lane;
    const bc_function *fn;
    uint32_t pc;
    int space;
    uint64_t addr;        /* what the watchpoint watches (the shared offset in b) */
    unsigned char old[16];
} watch_pending;

/* The trace line of the op that ran last, finished (values written) at
 * the next hook. */
typedef struct trace_pending {
    int live;
    vm_block *b;
    vm_warp *w;
    const vm_frame *f;
    uint32_t pc, mask;
} trace_pending;

struct dbg {
    dbg_frontend fe;
    int has_fe;
    /* breakpoints */
    dbg_bp **bps;
    int nbps;
    size_t capbps;
    int next_bp;
    unsigned on;
    /* the launch */
    vm_launch *L;
    const vm_hooks *inner, *inner_faults;
    vm_hooks hooks;
    int kernel_id;
    vm_cluster *cluster;          /* the resident blocks */
    /* run control */
    uint64_t event;
    int mode;
    uint64_t step_left;
    uint64_t step_block;
    int step_warp, step_lane;
    uint32_t step_depth;
    const char *step_file;
    int step_line;
    int step_has_loc;
    vm_warp *step_w;
    int killing;
    int killed_launch;
    /* scheduler-locking: the mode and the warp that may run */
    int lock;
    uint64_t lock_block;
    int lock_warp, lock_valid;
    int history_changed;
    /* replay inside one launch (exec and python targets) */
    int launch_replay;          /* the front door's launcher snapshots launches */
    int launch_replaying;       /* this launch is a replay of the previous one */
    uint64_t launch_event0;     /* d->event when the current launch began */
    int launch_kernel_id0;
    char launch_replay_why[160]; /* why the current launch cannot be replayed, or "" */
    /* stop state */
    int stopped;
    dbg_stop stop;
    dbg_focus focus;
    vm_block *cur_b;
    vm_warp *cur_w;
    const vm_frame *cur_f;
    uint32_t cur_pc, cur_mask;
    /* watchpoints waiting for their store */
    watch_pending *wpend;
    size_t nwpend, capwpend;
    /* replay */
    int restart;
    uint64_t restart_at;
    dbg_query next_query;
    uint64_t stop_at;             /* the run stops quietly at this event (0: none) */
    dbg_query query;              /* armed for this run */
    uint64_t q_event;             /* kind 3, 4: the event found */
    util_buffer q_text;
    int q_found;
    char *answer;
    int next_natural, natural;    /* the replay's destination stops as a run would (reverse-continue) */
    int saved_valid;              /* the focus when the replay was asked for */
    uint64_t saved_block;
    int saved_warp, saved_lane;
    uint64_t nstops;
    ring_entry ring[DBG_RING];
    uint64_t ring_n;
    /* trace */
    FILE *trace;
    dbg_trace_filter tf;
    trace_pending tp;
    /* mbarriers initialized, by block */
    struct { uint64_t block, offset; } *mbars;
    size_t nmbars, capmbars;
    /* the current launch's module's DWARF (nvcc -G), read at first use */
    dwarf_info *dwarf;
    int dwarf_read;
};

/* ---- small helpers ---------------------------------------------------------- */

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static int quiet(const dbg *d)
{
    return d->stop_at && d->event < d->stop_at;
}

static const bc_src *op_src(const bc_function *fn, uint32_t pc)
{
    if (!fn || pc >= fn->ncode || fn->code[pc].src >= fn->nsrcs)
        return NULL;
    return &fn->srcs[fn->code[pc].src];
}

static const char *loc_file(const vm_launch *L, int id)
{
    if (!L || id <= 0 || id >= L->nloc_files || !L->loc_files)
        return NULL;
    return L->loc_files[id];
}

void dbg_src_of(const dbg *d, const bc_function *fn, uint32_t pc, dbg_src *out)
{
    memset(out, 0, sizeof *out);
    const bc_src *s = op_src(fn, pc);
    if (!s)
        return;
    out->ptx_line = s->line;
    out->file = s->loc_line > 0 ? loc_file(d->L, s->loc_file) : NULL;
    out->line = out->file ? s->loc_line : 0;
}

const char *dbg_ptx_file(const dbg *d)
{
    return d->L && d->L->ptx_filename ? d->L->ptx_filename : "<ptx>";
}

void dbg_ptx_line(const dbg *d, int line, char *buf, size_t n)
{
    buf[0] = 0;
    if (!d->L || !d->L->mod || !d->L->mod->ptx || line <= 0 || !n)
        return;
    const ptx_module *m = d->L->mod->ptx;
    const char *p = m->text, *end = m->text + m->textlen;
    if (!p)
        return;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n')
            l++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    size_t k = 0;
    while (p < end && *p != '\n' && *p != '\r' && k + 1 < n) {
        unsigned char c = (unsigned char)*p++;
        buf[k++] = c == '\t' ? ' ' : (c < 32 || c == 127) ? '?' : (char)c;
    }
    while (k && buf[k - 1] == ' ')
        k--;
    buf[k] = 0;
}

static void fe_message(dbg *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fe_message(dbg *d, const char *fmt, ...)
{
    if (!d->has_fe || !d->fe.message)
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    d->fe.message(d->fe.ctx, d, buf);
}

/* ---- creation ------------------------------------------------------------------ */

dbg *dbg_create(const dbg_frontend *fe)
{
    dbg *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    /* modules loaded from now on keep every copy the PTX makes, so that
     * each register shown holds what the PTX wrote */
    bc_optimize_set(0);
    if (fe) {
        d->fe = *fe;
        d->has_fe = 1;
    }
    d->next_bp = 1;
    d->tf.warp = -1;
    return d;
}

static void bp_free_at(dbg_bp *bp)
{
    for (int i = 0; i < bp->nat; i++)
        free(bp->at[i]);
    free(bp->at);
    bp->at = NULL;
    bp->nat = 0;
}

static void bp_free(dbg_bp *bp)
{
    if (!bp)
        return;
    bp_free_at(bp);
    free(bp->spec);
    free(bp->cond);
    free(bp->expr);
    free(bp);
}

void dbg_destroy(dbg *d)
{
    if (!d)
        return;
    if (dbg_active == d)
        dbg_active = NULL;
    for (int i = 0; i < d->nbps; i++)
        bp_free(d->bps[i]);
    free(d->bps);
    free(d->wpend);
    free(d->mbars);
    free(d->answer);
    dwarf_free(d->dwarf);
    util_buffer_free(&d->q_text);
    if (d->trace)
        fclose(d->trace);
    free(d);
}

const dwarf_info *dbg_dwarf(dbg *d)
{
    if (!d->L || !d->L->mod)
        return NULL;
    if (!d->dwarf_read) {
        d->dwarf = dwarf_load_module(d->L->mod, NULL, 0);
        d->dwarf_read = 1;
    }
    return d->dwarf;
}

int dbg_trace_open(dbg *d, const char *path, const dbg_trace_filter *filter)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    if (d->trace)
        fclose(d->trace);
    d->trace = f;
    if (filter)
        d->tf = *filter;
    else {
        memset(&d->tf, 0, sizeof d->tf);
        d->tf.warp = -1;
    }
    return 0;
}

int dbg_trace_filter_parse(const char *what, const char *text, dbg_trace_filter *f, char *msg, size_t n)
{
    char *end;
    if (!strcmp(what, "block")) {
        const char *p = text;
        for (int i = 0; i < 3; i++) {
            f->block[i] = 0;
            if (!*p && i)
                continue;
            unsigned long v = strtoul(p, &end, 10);
            if (end == p || (*end && *end != ',') || v > 0xffffffffu) {
                snprintf(msg, n, "--trace-block wants X[,Y[,Z]], got '%s'", text);
                return -1;
            }
            f->block[i] = (unsigned)v;
            p = *end ? end + 1 : end;
        }
        f->has_block = 1;
        return 0;
    }
    if (!strcmp(what, "warp")) {
        long v = strtol(text, &end, 10);
        if (end == text || *end || v < 0 || v > 31) {
            snprintf(msg, n, "--trace-warp wants a warp index from 0 to 31, got '%s'", text);
            return -1;
        }
        f->warp = (int)v;
        return 0;
    }
    if (!strcmp(what, "lines")) {
        long lo = strtol(text, &end, 10), hi = lo;
        if (end != text && *end == '-')
            hi = strtol(end + 1, &end, 10);
        if (end == text || *end || lo < 1 || hi < lo) {
            snprintf(msg, n, "--trace-lines wants LINE or FIRST-LAST, got '%s'", text);
            return -1;
        }
        f->line_lo = (int)lo;
        f->line_hi = (int)hi;
        return 0;
    }
    snprintf(msg, n, "unknown trace filter '%s'", what);
    return -1;
}

int dbg_trace_start(const char *path, const dbg_trace_filter *f, dbg **owned, char *msg, size_t n)
{
    *owned = NULL;
    dbg *d = dbg_active;
    if (!d) {
        d = dbg_create(NULL);
        if (!d) {
            snprintf(msg, n, "out of memory");
            return -1;
        }
        *owned = d;
    }
    if (dbg_trace_open(d, path, f)) {
        snprintf(msg, n, "%s: cannot write the trace: %s", path, strerror(errno));
        dbg_destroy(*owned);
        *owned = NULL;
        return -1;
    }
    if (*owned)
        dbg_active = d;
    return 0;
}

void dbg_trace_stop(dbg *owned)
{
    if (owned)
        dbg_destroy(owned);
    else if (dbg_active && dbg_active->trace) {
        fclose(dbg_active->trace);
        dbg_active->trace = NULL;
    }
}

int dbg_single_thread(const dbg *d)
{
    return d != NULL;
}

int dbg_keeps_timeout(const dbg *d)
{
    return !d || !d->has_fe;
}

const dbg_stop *dbg_last_stop(const dbg *d) { return &d->stop; }
dbg_focus *dbg_focus_get(dbg *d) { return &d->focus; }
vm_launch *dbg_launch(dbg *d) { return d->L; }
uint64_t dbg_event(const dbg *d) { return d->event; }
int dbg_kernel_id(const dbg *d) { return d->kernel_id - 1; }
int dbg_is_stopped(const dbg *d) { return d->stopped; }
void dbg_set_step_count(dbg *d, uint64_t n) { d->step_left = n ? n : 1; }
void dbg_set_scheduler_locking(dbg *d, int mode) { d->lock = mode; }
int dbg_scheduler_locking(const dbg *d) { return d->lock; }
int dbg_history_valid(const dbg *d) { return !d->history_changed; }
void dbg_mark_changed(dbg *d) { d->history_changed = 2; }
void dbg_set_launch_replay(dbg *d, int on) { d->launch_replay = on; }
int dbg_launch_replay_enabled(const dbg *d) { return d->launch_replay; }

void dbg_launch_replay_unavailable(dbg *d, const char *why)
{
    snprintf(d->launch_replay_why, sizeof d->launch_replay_why, "%s", why ? why : "");
}

const char *dbg_launch_replay_refusal(const dbg *d, uint64_t at)
{
    if (!d->launch_replay)
        return "the target cannot be run again from inside the debugger";
    if (!d->L)
        return "no kernel is running";
    if (d->launch_replay_why[0])
        return d->launch_replay_why;
    if (at <= d->launch_event0)
        return "going back stops at the start of the current launch (earlier launches of the program cannot be "
               "run again)";
    return NULL;
}

int dbg_launch_replay_pending(const dbg *d)
{
    return d->launch_replay && d->restart && d->restart_at > d->launch_event0 && !d->launch_replay_why[0];
}

void dbg_launch_replay_begin(dbg *d)
{
    uint64_t event0 = d->launch_event0;
    int id0 = d->launch_kernel_id0;
    dbg_run_begin(d);
    d->event = event0;
    d->kernel_id = id0;
    d->launch_replaying = 1;
}
const char *dbg_history_broken(const dbg *d)
{
    switch (d->history_changed) {
    case 0: return NULL;
    case 2: return "set var changed the target's registers or memory since the run began, so a replay would not "
                   "come here (run again to start over)";
    default: return "scheduler-locking held warps back since the run began, so a replay would not come here (run "
                    "again, or set scheduler-locking off before the point of interest)";
    }
}
void dbg_break_on(dbg *d, unsigned mask, int on) { d->on = on ? d->on | mask : d->on & ~mask; }
unsigned dbg_breaks_on(const dbg *d) { return d->on; }

/* ---- breakpoints -------------------------------------------------------------- */

dbg_bp **dbg_bps(dbg *d, int *n)
{
    *n = d->nbps;
    return d->bps;
}

dbg_bp *dbg_bp_find(dbg *d, int number)
{
    for (int i = 0; i < d->nbps; i++)
        if (d->bps[i]->number == number)
            return d->bps[i];
    return NULL;
}

int dbg_bp_delete(dbg *d, int number)
{
    for (int i = 0; i < d->nbps; i++)
        if (d->bps[i]->number == number) {
            bp_free(d->bps[i]);
            memmove(&d->bps[i], &d->bps[i + 1], (size_t)(d->nbps - i - 1) * sizeof *d->bps);
            d->nbps--;
            return 0;
        }
    return -1;
}

int dbg_bp_enable(dbg *d, int number, int enabled)
{
    dbg_bp *bp = dbg_bp_find(d, number);
    if (!bp)
        return -1;
    bp->enabled = enabled;
    return 0;
}

int dbg_bp_condition(dbg *d, int number, const char *cond)
{
    dbg_bp *bp = dbg_bp_find(d, number);
    if (!bp)
        return -1;
    free(bp->cond);
    bp->cond = cond && *cond ? dup_str(cond) : NULL;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Whether a file named by the user names path: equal, or a suffix at a '/'. */
static int file_matches(const char *user, const char *path)
{
    if (!path)
        return 0;
    size_t a = strlen(user), b = strlen(path);
    if (a > b)
        return 0;
    if (strcmp(path + b - a, user))
        return 0;
    return a == b || path[b - a - 1] == '/' || user[0] == '/';
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static void bp_mark(dbg_bp *bp, const bc_function *fn, uint32_t pc)
{
    if (fn->index >= bp->nat || !bp->at[fn->index]) {
        if (fn->index >= bp->nat) {
            uint8_t **at = realloc(bp->at, (size_t)(fn->index + 1) * sizeof *at);
            if (!at)
                return;
            for (int i = bp->nat; i <= fn->index; i++)
                at[i] = NULL;
            bp->at = at;
            bp->nat = fn->index + 1;
        }
        bp->at[fn->index] = calloc(fn->ncode / 8 + 1, 1);
        if (!bp->at[fn->index])
            return;
    }
    bp->at[fn->index][pc / 8] |= (uint8_t)(1u << (pc % 8));
}

static int bp_at(const dbg_bp *bp, const bc_function *fn, uint32_t pc)
{
    return fn->index < bp->nat && bp->at[fn->index] && (bp->at[fn->index][pc / 8] >> (pc % 8) & 1);
}

/* Parses "FILE:LINE", "LINE", "*PC", "*FN+PC" or "FN" and marks the ops of
 * the module the spec stands on. Returns 1 when some op was marked, 0
 * when none (pending), -1 when malformed. */
static int bp_resolve(dbg *d, dbg_bp *bp, const bc_module *m, char *msg, size_t n)
{
    bp_free_at(bp);
    bp->where[0] = 0;
    const char *spec = bp->spec;
    if (!m)
        return 0;
    if (spec[0] == '*') {
        const char *p = spec + 1;
        const bc_function *fn = NULL;
        char name[256];
        const char *plus = strchr(p, '+');
        if (plus || !isdigit((unsigned char)*p)) {
            size_t k = plus ? (size_t)(plus - p) : strlen(p);
            if (k >= sizeof name)
                k = sizeof name - 1;
            memcpy(name, p, k);
            name[k] = 0;
            fn = bc_module_find(m, name);
            p = plus ? plus + 1 : "0";
            if (!fn)
                return 0;
        } else {
            fn = d->focus.w && d->L ? d->L->kernel : NULL;
            if (!fn) {
                for (int i = 0; i < m->nfunctions; i++)
                    if (m->functions[i] && m->functions[i]->is_entry) {
                        fn = m->functions[i];
                        break;
                    }
            }
            if (!fn)
                return 0;
        }
        char *end;
        unsigned long pc = strtoul(p, &end, 0);
        if (*end) {
            snprintf(msg, n, "malformed location '%s' (want *PC or *FUNCTION+PC)", spec);
            return -1;
        }
        if (pc >= fn->ncode) {
            snprintf(msg, n, "%s has %u instructions; no pc %lu", fn->name, fn->ncode, pc);
            return -1;
        }
        bp_mark(bp, fn, (uint32_t)pc);
        snprintf(bp->where, sizeof bp->where, "%s+%lu", fn->name, pc);
        return 1;
    }
    const char *colon = strrchr(spec, ':');
    const char *lstr = colon ? colon + 1 : spec;
    int all_digits = *lstr != 0;
    for (const char *q = lstr; *q; q++)
        if (!isdigit((unsigned char)*q))
            all_digits = 0;
    if (!all_digits) {
        if (colon) {
            snprintf(msg, n, "malformed location '%s' (want FILE:LINE)", spec);
            return -1;
        }
        const bc_function *fn = bc_module_find(m, spec);
        if (!fn && d->L && d->L->mod == m) {
            /* a CUDA function name (`break twice` for _Z5twicei), from DWARF */
            int ns;
            const dwarf_scope *sc = dwarf_scopes(dbg_dwarf(d), &ns);
            for (int i = 0; i < ns && !fn; i++)
                if (sc[i].parent < 0 && sc[i].fn >= 0 && sc[i].fn < m->nfunctions && sc[i].name &&
                    !strcmp(sc[i].name, spec))
                    fn = m->functions[sc[i].fn];
        }
        if (!fn || !fn->ncode)
            return 0;
        bp_mark(bp, fn, 0);
        dbg_src s;
        dbg_src_of(d, fn, 0, &s);
        if (s.file)
            snprintf(bp->where, sizeof bp->where, "%s+0: file %s, line %d", fn->name, base_name(s.file), s.line);
        else
            snprintf(bp->where, sizeof bp->where, "%s+0: file %s, line %d", fn->name, base_name(dbg_ptx_file(d)),
                     s.ptx_line);
        return 1;
    }
    int line = atoi(lstr);
    char file[512] = "";
    if (colon) {
        size_t k = (size_t)(colon - spec);
        if (k >= sizeof file)
            k = sizeof file - 1;
        memcpy(file, spec, k);
        file[k] = 0;
    }
    /* which file: a PTX line when the name is the module's (or ends in
     * .ptx), else a .loc file; a bare LINE is the focus's source file, or
     * the first .loc file, or the PTX */
    int want_ptx = 0, loc_id = -1;
    const vm_launch *L = d->L;
    if (file[0]) {
        if (ends_with(file, ".ptx") || (L && file_matches(file, L->ptx_filename)))
            want_ptx = 1;
        else {
            for (int i = 0; L && i < L->nloc_files; i++)
                if (L->loc_files[i] && file_matches(file, L->loc_files[i])) {
                    loc_id = i;
                    break;
                }
            if (loc_id < 0)
                return 0;
        }
    } else {
        dbg_where wh;
        dbg_src s = {0};
        if (d->focus.w && dbg_lane_where(d, d->focus.b, d->focus.w, d->focus.lane, 0, &wh) == 0)
            dbg_src_of(d, wh.fn, wh.pc, &s);
        if (s.file) {
            const bc_src *bs = op_src(wh.fn, wh.pc);
            loc_id = bs ? bs->loc_file : -1;
        } else {
            for (int i = 1; L && i < L->nloc_files; i++)
                if (L->loc_files[i]) {
                    loc_id = i;
                    break;
                }
        }
        if (loc_id < 0)
            want_ptx = 1;
    }
    /* the line itself, or the next line that has code (gdb's rule) */
    int best = 0;
    for (int fi = 0; fi < m->nfunctions; fi++) {
        const bc_function *fn = m->functions[fi];
        if (!fn)
            continue;
        for (uint32_t pc = 0; pc < fn->ncode; pc++) {
            const bc_src *s = op_src(fn, pc);
            if (!s)
                continue;
            int l = want_ptx ? s->line : (s->loc_file == loc_id ? s->loc_line : 0);
            if (l >= line && (!best || l < best))
                best = l;
        }
    }
    if (!best)
        return 0;
    int marked = 0;
    const bc_function *first_fn = NULL;
    uint32_t first_pc = 0;
    for (int fi = 0; fi < m->nfunctions; fi++) {
        const bc_function *fn = m->functions[fi];
        if (!fn)
            continue;
        int prev = -1;
        for (uint32_t pc = 0; pc < fn->ncode; pc++) {
            const bc_src *s = op_src(fn, pc);
            int l = !s ? 0 : want_ptx ? s->line : (s->loc_file == loc_id ? s->loc_line : 0);
            /* the first op of each run of ops on the line */
            if (l == best && prev != best) {
                bp_mark(bp, fn, pc);
                if (!marked++) {
                    first_fn = fn;
                    first_pc = pc;
                }
            }
            if (l)
                prev = l;
        }
    }
    if (!marked)
        return 0;
    snprintf(bp->where, sizeof bp->where, "%s+%u: file %s, line %d%s", first_fn->name, first_pc,
             want_ptx ? base_name(L ? L->ptx_filename : file) : base_name(L->loc_files[loc_id]), best,
             marked > 1 ? " (several places)" : "");
    return 1;
}

static dbg_bp *bp_new(dbg *d, int kind)
{
    if (util_grow(&d->bps, &d->capbps, (size_t)d->nbps + 1, sizeof *d->bps))
        return NULL;
    dbg_bp *bp = calloc(1, sizeof *bp);
    if (!bp)
        return NULL;
    bp->number = d->next_bp++;
    bp->kind = kind;
    bp->enabled = 1;
    d->bps[d->nbps++] = bp;
    return bp;
}

int dbg_break(dbg *d, const char *spec, const char *cond, int temporary, char *msg, size_t n)
{
    msg[0] = 0;
    if (!spec || !*spec) {
        /* gdb: the current location */
        dbg_where wh;
        if (!d->focus.w || dbg_lane_where(d, d->focus.b, d->focus.w, d->focus.lane, d->focus.frame, &wh)) {
            snprintf(msg, n, "no default breakpoint location: the kernel is not stopped");
            return -1;
        }
        char buf[300];
        snprintf(buf, sizeof buf, "*%s+%u", wh.fn->name, wh.pc);
        return dbg_break(d, buf, cond, temporary, msg, n);
    }
    dbg_bp *bp = bp_new(d, DBG_BP_BREAK);
    if (!bp) {
        snprintf(msg, n, "out of memory");
        return -1;
    }
    bp->spec = dup_str(spec);
    bp->cond = cond && *cond ? dup_str(cond) : NULL;
    bp->temporary = temporary;
    int r = bp_resolve(d, bp, d->L ? d->L->mod : NULL, msg, n);
    if (r < 0) {
        dbg_bp_delete(d, bp->number);
        d->next_bp--;
        return -1;
    }
    return bp->number;
}

/* ---- focus and places ------------------------------------------------------------ */

static int lane_group(const vm_warp *w, int lane)
{
    for (int gi = 0; gi < w->ngroups; gi++)
        if (w->groups[gi].mask >> lane & 1)
            return gi;
    return -1;
}

int dbg_lane_where(dbg *d, vm_block *b, vm_warp *w, int lane, int frame_level, dbg_where *out)
{
    memset(out, 0, sizeof *out);
    if (!b || !w || lane < 0 || lane >= VM_WARP || !(w->valid >> lane & 1) || (w->exited >> lane & 1))
        return -1;
    const vm_frame *f;
    uint32_t pc;
    int gi = lane_group(w, lane);
    if (w == d->cur_w && b == d->cur_b && (d->cur_mask >> lane & 1)) {
        f = d->cur_f;
        pc = d->cur_pc;
    } else if (gi < 0) {
        return -1;
    } else if (w == d->cur_w && b == d->cur_b && w->groups[gi].frame == d->cur_f && (w->groups[gi].mask & d->cur_mask)) {
        f = d->cur_f;
        pc = d->cur_pc; /* the running group: its stored pc is stale */
    } else {
        f = w->groups[gi].frame;
        pc = w->groups[gi].pc;
    }
    for (int k = 0; k < frame_level; k++) {
        if (!f || !f->parent)
            return -1;
        pc = f->ret_pc ? f->ret_pc - 1 : 0;
        f = f->parent;
    }
    if (!f)
        return -1;
    out->frame = f;
    out->fn = f->fn;
    out->pc = pc;
    return 0;
}

int dbg_backtrace(dbg *d, vm_block *b, vm_warp *w, int lane, dbg_where *out, int max)
{
    int k = 0;
    while (k < max && dbg_lane_where(d, b, w, lane, k, &out[k]) == 0)
        k++;
    return k;
}

uint32_t dbg_warp_active(dbg *d, vm_block *b, vm_warp *w, int lane)
{
    if (w == d->cur_w && b == d->cur_b && (d->cur_mask >> lane & 1))
        return d->cur_mask;
    int gi = lane_group(w, lane);
    return gi < 0 ? 0 : w->groups[gi].mask;
}

int dbg_blocks(dbg *d, vm_block ***out)
{
    static vm_block *list[VM_MAX_CLUSTER * 64];
    int k = 0;
    if (d->cluster)
        for (int i = 0; i < d->cluster->n && k < (int)(sizeof list / sizeof *list); i++)
            list[k++] = &d->cluster->blocks[i];
    *out = list;
    return k;
}

void dbg_describe_lane(const vm_block *b, const vm_warp *w, int lane, char *buf, size_t n)
{
    snprintf(buf, n, "block (%u,%u,%u), thread (%u,%u,%u)", b->ctaid[0], b->ctaid[1], b->ctaid[2], w->tid[0][lane],
             w->tid[1][lane], w->tid[2][lane]);
}

void dbg_describe_where(const dbg *d, const dbg_where *wh, char *buf, size_t n)
{
    dbg_src s;
    dbg_src_of(d, wh->fn, wh->pc, &s);
    if (s.file)
        snprintf(buf, n, "%s at %s:%d (%s:%d)", wh->fn->name, base_name(s.file), s.line, base_name(dbg_ptx_file(d)),
                 s.ptx_line);
    else
        snprintf(buf, n, "%s at %s:%d", wh->fn->name, base_name(dbg_ptx_file(d)), s.ptx_line);
}

int dbg_set_focus(dbg *d, const unsigned *block, const unsigned *thread, int warp, int lane, char *msg, size_t n)
{
    if (!d->stopped) {
        snprintf(msg, n, "Focus not set on any active CUDA kernel.");
        return -1;
    }
    vm_block *b = d->focus.b;
    if (block) {
        vm_block **list;
        int nb = dbg_blocks(d, &list);
        b = NULL;
        for (int i = 0; i < nb; i++)
            if (list[i]->ctaid[0] == block[0] && list[i]->ctaid[1] == block[1] && list[i]->ctaid[2] == block[2] &&
                list[i]->warps)
                b = list[i];
        if (!b || b->done) {
            snprintf(msg, n, "Request cannot be satisfied. Block (%u,%u,%u) is not running now (blocks run one "
                             "cluster at a time). CUDA focus unchanged.", block[0], block[1], block[2]);
            return -1;
        }
    }
    int wi = d->focus.w ? d->focus.w->index : 0, li = d->focus.lane;
    if (thread) {
        const vm_launch *L = d->L;
        if (thread[0] >= L->block[0] || thread[1] >= L->block[1] || thread[2] >= L->block[2]) {
            snprintf(msg, n, "Request cannot be satisfied. Thread (%u,%u,%u) is outside the block (%u,%u,%u). CUDA "
                             "focus unchanged.", thread[0], thread[1], thread[2], L->block[0], L->block[1],
                     L->block[2]);
            return -1;
        }
        uint64_t lin = thread[0] + (uint64_t)thread[1] * L->block[0] + (uint64_t)thread[2] * L->block[0] * L->block[1];
        wi = (int)(lin / VM_WARP);
        li = (int)(lin % VM_WARP);
    }
    if (warp >= 0)
        wi = warp;
    if (lane >= 0)
        li = lane;
    if (wi >= b->nwarps || li >= VM_WARP || !(b->warps[wi].valid >> li & 1)) {
        snprintf(msg, n, "Request cannot be satisfied. Warp %d lane %d does not exist. CUDA focus unchanged.", wi, li);
        return -1;
    }
    d->focus.b = b;
    d->focus.w = &b->warps[wi];
    d->focus.lane = li;
    d->focus.frame = 0;
    return 0;
}

/* ---- memory ------------------------------------------------------------------------ */

/* Where n bytes at addr in space lie as lane sees them (GENERIC resolves
 * windows; local memory is per lane, shared per block), or NULL when that
 * is not memory the launch can reach. */
static uint8_t *memory_at(dbg *d, int space, uint64_t addr, size_t n, int lane)
{
    vm_launch *L = d->L;
    if (!L)
        return NULL;
    if (space == BC_SPACE_GENERIC) {
        uint64_t off;
        space = vm_generic_space(addr, &off);
        if (space == BC_SPACE_GENERIC)
            return NULL;
        if (space == BC_SPACE_SHARED_CLUSTER)
            space = BC_SPACE_SHARED;
        addr = off;
    }
    switch (space) {
    case BC_SPACE_GLOBAL:
        return mem_find(L->mem, addr, n ? n : 1) ? (uint8_t *)(uintptr_t)addr : NULL;
    case BC_SPACE_SHARED:
    case BC_SPACE_SHARED_CLUSTER: {
        vm_block *b = d->focus.b ? d->focus.b : d->cur_b;
        if (!b || !b->shared || addr > b->shared_size || n > b->shared_size - addr)
            return NULL;
        return b->shared + addr;
    }
    case BC_SPACE_LOCAL: {
        vm_warp *w = d->focus.w;
        if (!w || !w->local || addr > L->local_stride || n > L->local_stride - addr || lane < 0 || lane >= VM_WARP)
            return NULL;
        return w->local + (size_t)lane * L->local_stride + addr;
    }
    case BC_SPACE_CONST:
        if (!L->const_bank || addr > L->const_size || n > L->const_size - addr)
            return NULL;
        return L->const_bank + addr;
    case BC_SPACE_PARAM_KERNEL:
        if (!L->params || addr > L->param_size || n > L->param_size - addr)
            return NULL;
        return L->params + addr;
    default:
        return NULL;
    }
}

int dbg_read_memory(dbg *d, int space, uint64_t addr, void *buf, size_t n, int lane)
{
    const uint8_t *from = memory_at(d, space, addr, n, lane);
    if (!from)
        return -1;
    memcpy(buf, from, n);
    return 0;
}

int dbg_write_memory(dbg *d, int space, uint64_t addr, const void *buf, size_t n, int lane)
{
    uint8_t *to = memory_at(d, space, addr, n, lane);
    if (!to)
        return -1;
    memcpy(to, buf, n);
    return 0;
}

/* ---- the stop --------------------------------------------------------------------- */

static void line_of(const dbg *d, const bc_function *fn, uint32_t pc, const char **file, int *line)
{
    dbg_src s;
    dbg_src_of(d, fn, pc, &s);
    if (s.file) {
        *file = s.file;
        *line = s.line;
    } else {
        *file = NULL;
        *line = s.ptx_line;
    }
}

static int module_has_loc(const dbg *d)
{
    return d->L && d->L->nloc_files > 1;
}

/* Arms stepping of the focused warp from where it is. */
static void arm_step(dbg *d, int mode)
{
    d->mode = mode;
    d->step_w = d->focus.w;
    d->step_block = d->focus.b ? d->focus.b->linear_id : 0;
    d->step_warp = d->focus.w ? d->focus.w->index : 0;
    d->step_lane = d->focus.lane;
    dbg_where wh;
    if (d->focus.w && dbg_lane_where(d, d->focus.b, d->focus.w, d->focus.lane, d->focus.frame, &wh) == 0) {
        d->step_depth = wh.frame->depth;
        line_of(d, wh.fn, wh.pc, &d->step_file, &d->step_line);
    } else {
        d->step_depth = 0;
        d->step_file = NULL;
        d->step_line = 0;
    }
    d->step_has_loc = module_has_loc(d);
}

static void apply_resume(dbg *d, int r)
{
    d->mode = DBG_RESUME_CONTINUE;
    d->lock_valid = d->focus.w != NULL;
    d->lock_block = d->focus.b ? d->focus.b->linear_id : 0;
    d->lock_warp = d->focus.w ? d->focus.w->index : 0;
    switch (r) {
    case DBG_RESUME_STEPI:
    case DBG_RESUME_STEP:
    case DBG_RESUME_NEXT:
    case DBG_RESUME_FINISH:
        arm_step(d, r);
        if (r != DBG_RESUME_STEPI)
            d->step_left = 1;
        break;
    case DBG_RESUME_RESTART:
        d->restart = 1;
        /* fall through */
    case DBG_RESUME_KILL:
        d->killing = 1;
        if (d->L)
            d->L->debug_kill = 1;
        break;
    default:
        break;
    }
}

/* Stops the target here (in a hook) with the warp w's lane in focus. */
static void do_stop(dbg *d, int reason, int bp, vm_block *b, vm_warp *w, int lane, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void do_stop(dbg *d, int reason, int bp, vm_block *b, vm_warp *w, int lane, const char *fmt, ...)
{
    if (!d->has_fe || d->killing)
        return;
    d->stop.reason = reason;
    d->stop.bp = bp;
    d->stop.text[0] = 0;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->stop.text, sizeof d->stop.text, fmt, ap);
        va_end(ap);
    }
    d->focus.b = b;
    d->focus.w = w;
    d->focus.lane = lane;
    d->focus.frame = 0;
    d->stopped = 1;
    d->nstops++;
    d->step_w = NULL;
    int r = d->fe.stopped(d->fe.ctx, d);
    d->stopped = 0;
    apply_resume(d, r);
}

/* ---- conditions ------------------------------------------------------------------------ */

/* The first lane of mask for which bp's condition holds, or -1 (any lane
 * when there is no condition). An unparsable condition stops (gdb does),
 * with the error in the stop text. */
static int cond_lane(dbg *d, dbg_bp *bp, vm_block *b, vm_warp *w, uint32_t mask, char *err, size_t n)
{
    err[0] = 0;
    if (!mask)
        return -1;
    if (!bp->cond)
        return __builtin_ctz(mask);
    /* the condition sees the hitting warp as the focus */
    dbg_focus keep = d->focus;
    d->focus.b = b;
    d->focus.w = w;
    d->focus.frame = 0;
    int found = -1;
    for (uint32_t m = mask; m && found < 0; m &= m - 1) {
        int lane = __builtin_ctz(m);
        dbg_value v;
        char msg[256];
        d->focus.lane = lane;
        if (dbg_eval(d, bp->cond, lane, &v, msg, sizeof msg)) {
            snprintf(err, n, "Error in testing condition for breakpoint %d: %.200s", bp->number, msg);
            found = lane;
        } else if (v.kind == DBG_V_FLOAT ? v.f != 0 : v.kind == DBG_V_INT ? v.i != 0 : v.u != 0) {
            found = lane;
        }
    }
    d->focus = keep;
    return found;
}

/* ---- the query recorders ----------------------------------------------------------- */

static const char *kind_word(int kind)
{
    return kind == VM_ACCESS_LOAD ? "load" : kind == VM_ACCESS_STORE ? "store" : "atomic";
}

static void query_access(dbg *d, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                         const vm_access_lanes *lanes, unsigned size)
{
    dbg_query *q = &d->query;
    if (q->kind != 1 && q->kind != 2)
        return;
    if (q->kind == 1 && kind == VM_ACCESS_LOAD)
        return;
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        int sp = lanes->space[l] == BC_SPACE_SHARED_CLUSTER ? BC_SPACE_SHARED : lanes->space[l];
        if (sp != q->space)
            continue;
        if (sp == BC_SPACE_SHARED && b->linear_id != q->block_id)
            continue;
        uint64_t a = lanes->where[l];
        if (a + size <= q->addr || a >= q->addr + q->size)
            continue;
        char who[128], where[512];
        dbg_describe_lane(b, w, l, who, sizeof who);
        dbg_where wh = {f, f->fn, pc};
        dbg_describe_where(d, &wh, where, sizeof where);
        char text[64];
        dbg_ptx_line(d, op_src(f->fn, pc) ? op_src(f->fn, pc)->line : 0, text, sizeof text);
        if (q->kind == 1) {
            d->q_text.len = 0;
            if (d->q_text.data)
                d->q_text.data[0] = 0;
            d->q_found = 1;
        }
        util_buffer_printf(&d->q_text, "%s %u bytes by %s (warp %d, lane %d) at %s, event %llu: %s\n",
                           kind_word(kind), size, who, w->index, l, where, (unsigned long long)d->event, text);
    }
}

static void finish_query(dbg *d)
{
    free(d->answer);
    d->answer = NULL;
    dbg_query *q = &d->query;
    util_buffer t = {0};
    switch (q->kind) {
    case 1:
        if (d->q_found)
            util_buffer_printf(&t, "last writer of %u byte%s at 0x%llx: %s", q->size, q->size == 1 ? "" : "s",
                               (unsigned long long)q->addr, d->q_text.data);
        else
            util_buffer_printf(&t, "no store to the %u byte%s at 0x%llx since the run began\n", q->size,
                               q->size == 1 ? "" : "s", (unsigned long long)q->addr);
        break;
    case 2:
        if (d->q_text.len)
            util_buffer_printf(&t, "accesses to the %u byte%s at 0x%llx since the last barrier of the block:\n%s",
                               q->size, q->size == 1 ? "" : "s", (unsigned long long)q->addr, d->q_text.data);
        else
            util_buffer_printf(&t, "no access to the %u byte%s at 0x%llx since the last barrier of the block\n",
                               q->size, q->size == 1 ? "" : "s", (unsigned long long)q->addr);
        break;
    default:
        break;
    }
    d->answer = t.data;
    util_buffer_free(&d->q_text);
    d->q_found = 0;
}

/* ---- the trace ---------------------------------------------------------------------- */

static const ptx_var *slot_var(const bc_function *fn, uint32_t slot, int pred)
{
    const ptx_function *pf = fn->ptx;
    if (!pf || !fn->reg_slots)
        return NULL;
    for (int i = 0; i < pf->nregs; i++) {
        const ptx_var *v = pf->regs[i];
        if ((v->type == PTX_T_PRED) == pred && fn->reg_slots[i] == slot)
            return v;
    }
    return NULL;
}

static int trace_wants(const dbg *d, const vm_block *b, const vm_warp *w, const bc_function *fn, uint32_t pc)
{
    if (d->tf.has_block &&
        (b->ctaid[0] != d->tf.block[0] || b->ctaid[1] != d->tf.block[1] || b->ctaid[2] != d->tf.block[2]))
        return 0;
    if (d->tf.warp >= 0 && w->index != d->tf.warp)
        return 0;
    if (d->tf.line_lo || d->tf.line_hi) {
        const char *file;
        int line;
        line_of(d, fn, pc, &file, &line);
        if (line < d->tf.line_lo || line > d->tf.line_hi)
            return 0;
    }
    return 1;
}

static void format_bits(uint64_t bits, int type, char *buf, size_t n)
{
    switch (type) {
    case PTX_T_F32: {
        float f;
        uint32_t u = (uint32_t)bits;
        memcpy(&f, &u, 4);
        snprintf(buf, n, "%.9g", f);
        break;
    }
    case PTX_T_F64: {
        double f;
        memcpy(&f, &bits, 8);
        snprintf(buf, n, "%.17g", f);
        break;
    }
    case PTX_T_F16:
        snprintf(buf, n, "%.5g", vm_f16_to_f64((uint16_t)bits));
        break;
    case PTX_T_BF16:
        snprintf(buf, n, "%.4g", vm_bf16_to_f64((uint16_t)bits));
        break;
    case PTX_T_S8: snprintf(buf, n, "%d", (int8_t)bits); break;
    case PTX_T_S16: snprintf(buf, n, "%d", (int16_t)bits); break;
    case PTX_T_S32: snprintf(buf, n, "%d", (int32_t)bits); break;
    case PTX_T_S64: snprintf(buf, n, "%lld", (long long)bits); break;
    case PTX_T_U8: case PTX_T_U16: case PTX_T_U32: case PTX_T_U64:
        snprintf(buf, n, "%llu", (unsigned long long)bits);
        break;
    default:
        snprintf(buf, n, "0x%llx", (unsigned long long)bits);
        break;
    }
}

static uint64_t type_mask(int type)
{
    unsigned sz = type == PTX_T_PRED ? 1 : ptx_type_size((ptx_type)type);
    return sz >= 8 || sz == 0 ? ~0ull : (1ull << (8 * sz)) - 1;
}

static void trace_flush(dbg *d)
{
    trace_pending *t = &d->tp;
    if (!t->live || !d->trace)
        return;
    t->live = 0;
    const bc_function *fn = t->f->fn;
    const bc_op *op = &fn->code[t->pc];
    const bc_src *s = op_src(fn, t->pc);
    char text[256] = "";
    dbg_ptx_line(d, s ? s->line : 0, text, sizeof text);
    const char *file;
    int line;
    line_of(d, fn, t->pc, &file, &line);
    FILE *o = d->trace;
    fprintf(o, "block (%u,%u,%u) warp %d mask %08x %s pc %u %s:%d", t->b->ctaid[0], t->b->ctaid[1], t->b->ctaid[2],
            t->w->index, t->mask, fn->name, t->pc, base_name(dbg_ptx_file(d)), s ? s->line : 0);
    if (file)
        fprintf(o, " %s:%d", base_name(file), line);
    fprintf(o, " | %s", text);
    const char *shape = bc_opcode_shapes[op->code];
    if (op->d != BC_NONE && (shape[0] == 'd' || shape[0] == 'P')) {
        int pred = shape[0] == 'P';
        const ptx_var *v = slot_var(fn, op->d, pred);
        if (pred) {
            uint32_t p = t->f->preds[op->d] & t->mask;
            fprintf(o, " | %s=%08x", v ? v->name : "%p?", p);
        } else {
            int type = v ? v->type : op->type;
            uint64_t mk = type_mask(type);
            const uint64_t *R = t->f->regs + (size_t)op->d * VM_WARP;
            int first = __builtin_ctz(t->mask), uniform = 1;
            for (uint32_t m = t->mask; m; m &= m - 1)
                if ((R[__builtin_ctz(m)] & mk) != (R[first] & mk))
                    uniform = 0;
            char buf[64];
            fprintf(o, " | %s=", v ? v->name : "?");
            if (uniform) {
                format_bits(R[first] & mk, type, buf, sizeof buf);
                fputs(buf, o);
            } else {
                fputc('[', o);
                for (int l = 0; l < VM_WARP; l++) {
                    if (l)
                        fputc(' ', o);
                    if (t->mask >> l & 1) {
                        format_bits(R[l] & mk, type, buf, sizeof buf);
                        fputs(buf, o);
                    } else {
                        fputc('-', o);
                    }
                }
                fputc(']', o);
            }
        }
    }
    fputc('\n', o);
}

/* ---- watchpoints ------------------------------------------------------------------ */

static int watch_read(dbg *d, vm_block *b, int space, uint64_t addr, void *buf, unsigned size)
{
    if (space == BC_SPACE_SHARED) {
        if (!b || !b->shared || addr > b->shared_size || size > b->shared_size - addr)
            return -1;
        memcpy(buf, b->shared + addr, size);
        return 0;
    }
    return dbg_read_memory(d, space, addr, buf, size, 0);
}

static void load_bits(const unsigned char *p, unsigned size, int type, dbg_value *v);

/* Compares the watched memory after the stores seen since the last hook. */
static void watch_settle(dbg *d)
{
    while (d->nwpend) {
        watch_pending p = d->wpend[0];
        memmove(&d->wpend[0], &d->wpend[1], (d->nwpend - 1) * sizeof *d->wpend);
        d->nwpend--;
        dbg_bp *bp = dbg_bp_find(d, p.bp);
        if (!bp || !bp->enabled)
            continue;
        unsigned char now[16];
        if (watch_read(d, p.b, bp->space, p.addr, now, bp->size) || !memcmp(now, p.old, bp->size))
            continue;
        if (quiet(d)) {
            if (d->query.kind == 4)
                d->q_event = d->event;
            continue;
        }
        bp->hits++;
        dbg_value ov = {0}, nv = {0};
        load_bits(p.old, bp->size, bp->type, &ov);
        load_bits(now, bp->size, bp->type, &nv);
        char os[96], ns[96], who[128], where[512];
        dbg_format_value(&ov, 0, os, sizeof os);
        dbg_format_value(&nv, 0, ns, sizeof ns);
        dbg_describe_lane(p.b, p.w, p.lane, who, sizeof who);
        dbg_where wh = {NULL, p.fn, p.pc};
        dbg_describe_where(d, &wh, where, sizeof where);
        d->nwpend = 0;
        do_stop(d, DBG_STOP_WATCH, bp->number, p.b, p.w, p.lane,
                "Hardware watchpoint %d: %s\n\nOld value = %s\nNew value = %s\nWritten by %s (warp %d, lane %d) at %s",
                bp->number, bp->expr, os, ns, who, p.w->index, p.lane, where);
        return;
    }
}

static void watch_access(dbg *d, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                         const vm_access_lanes *lanes, unsigned size)
{
    for (int i = 0; i < d->nbps; i++) {
        dbg_bp *bp = d->bps[i];
        if (bp->kind == DBG_BP_BREAK || !bp->enabled)
            continue;
        if (bp->kind == DBG_BP_WATCH && kind == VM_ACCESS_LOAD)
            continue;
        if (bp->kind == DBG_BP_RWATCH && kind != VM_ACCESS_LOAD)
            continue;
        for (uint32_t m = mask; m; m &= m - 1) {
            int l = __builtin_ctz(m);
            int sp = lanes->space[l] == BC_SPACE_SHARED_CLUSTER ? BC_SPACE_SHARED : lanes->space[l];
            uint64_t a = lanes->where[l];
            if (sp != bp->space || a + size <= bp->addr || a >= bp->addr + bp->size)
                continue;
            if (bp->kind == DBG_BP_WATCH) {
                if (util_grow(&d->wpend, &d->capwpend, d->nwpend + 1, sizeof *d->wpend))
                    return;
                watch_pending *p = &d->wpend[d->nwpend++];
                p->bp = bp->number;
                p->b = b;
                p->block = b->linear_id;
                p->w = w;
                p->lane = l;
                p->fn = f->fn;
                p->pc = pc;
                p->space = sp;
                p->addr = bp->addr;
                if (watch_read(d, b, sp, bp->addr, p->old, bp->size))
                    d->nwpend--;
                break;
            }
            /* rwatch/awatch: stop at the access itself */
            if (quiet(d)) {
                if (d->query.kind == 4)
                    d->q_event = d->event;
                break;
            }
            bp->hits++;
            unsigned char now[16];
            dbg_value v = {0};
            char vs[96] = "?";
            if (!watch_read(d, b, sp, bp->addr, now, bp->size)) {
                load_bits(now, bp->size, bp->type, &v);
                dbg_format_value(&v, 0, vs, sizeof vs);
            }
            do_stop(d, DBG_STOP_WATCH, bp->number, b, w, l, "%s watchpoint %d: %s\n\n%s = %s (%s by this thread)",
                    bp->kind == DBG_BP_RWATCH ? "Hardware read" : "Hardware access (read/write)", bp->number,
                    bp->expr, kind == VM_ACCESS_LOAD ? "Value" : "Value before", vs, kind_word(kind));
            return;
        }
    }
}

/* ---- hooks ------------------------------------------------------------------------- */

#define INNER(h) (d->inner && d->inner->h)

static void note_mbarrier(dbg *d, vm_block *b, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    const bc_op *op = &f->fn->code[pc];
    if (op->code != BC_MBARRIER || op->mode2 != BC_MB_INIT || op->a == BC_NONE)
        return;
    int lane = __builtin_ctz(mask);
    uint64_t a = f->regs[(size_t)op->a * VM_WARP + lane] + (uint64_t)op->imm;
    if (op->flags & BC_F_ADDR32)
        a = (uint32_t)a;
    uint64_t off = a;
    int sp = op->mode;
    if (sp == BC_SPACE_GENERIC)
        sp = vm_generic_space(a, &off);
    if (sp != BC_SPACE_SHARED && sp != BC_SPACE_SHARED_CLUSTER)
        return;
    for (size_t i = 0; i < d->nmbars; i++)
        if (d->mbars[i].block == b->linear_id && d->mbars[i].offset == off)
            return;
    if (util_grow(&d->mbars, &d->capmbars, d->nmbars + 1, sizeof *d->mbars))
        return;
    d->mbars[d->nmbars].block = b->linear_id;
    d->mbars[d->nmbars].offset = off;
    d->nmbars++;
}

int dbg_mbarriers(dbg *d, const vm_block *b, uint64_t *offsets, int max)
{
    int k = 0;
    for (size_t i = 0; i < d->nmbars && k < max; i++)
        if (d->mbars[i].block == b->linear_id)
            offsets[k++] = d->mbars[i].offset;
    return k;
}

static int step_done(dbg *d, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc)
{
    if (b->linear_id != d->step_block || w->index != d->step_warp)
        return 0;
    if (d->mode == DBG_RESUME_STEPI)
        return --d->step_left == 0;
    if (d->mode == DBG_RESUME_FINISH)
        return f->depth < d->step_depth;
    if (d->mode == DBG_RESUME_NEXT && f->depth > d->step_depth)
        return 0;
    const char *file;
    int line;
    line_of(d, f->fn, pc, &file, &line);
    if (d->step_has_loc && !file)
        return 0; /* no source line here: keep going */
    if (f->depth != d->step_depth)
        return 1; /* stepped into a call, or returned */
    return line != d->step_line || file != d->step_file;
}

/* The stop at the end of a replay: the focus the user had when asking
 * (when its warp is resident), else the warp that runs. */
static void replay_stop(dbg *d, vm_block *b, vm_warp *w, uint32_t mask)
{
    vm_block *fb = b;
    vm_warp *fw = w;
    int lane = __builtin_ctz(mask);
    if (d->saved_valid && d->cluster) {
        for (int i = 0; i < d->cluster->n; i++) {
            vm_block *cb = &d->cluster->blocks[i];
            if (cb->linear_id == d->saved_block && cb->warps && d->saved_warp < cb->nwarps &&
                (cb->warps[d->saved_warp].valid >> d->saved_lane & 1)) {
                fb = cb;
                fw = &cb->warps[d->saved_warp];
                lane = d->saved_lane;
            }
        }
    }
    do_stop(d, d->event == 1 && !d->answer ? DBG_STOP_ENTRY : DBG_STOP_REPLAY, 0, fb, fw, lane, NULL);
}

/* Whether scheduler-locking holds warp w back now (it then yields before
 * its instruction, which counts as not run); stops instead when the
 * focused warp cannot go on without the others. */
static int held_back(dbg *d, vm_block *b, vm_warp *w, uint32_t mask)
{
    if (!d->lock || !d->lock_valid || !d->has_fe || d->killing || quiet(d))
        return 0;
    if (d->lock == DBG_LOCK_STEP && d->mode == DBG_RESUME_CONTINUE)
        return 0;
    if (b->linear_id == d->lock_block && w->index == d->lock_warp)
        return 0;
    vm_warp *fw = NULL;
    if (d->cluster)
        for (int i = 0; i < d->cluster->n; i++)
            if (d->cluster->blocks[i].linear_id == d->lock_block && d->cluster->blocks[i].warps &&
                d->lock_warp < d->cluster->blocks[i].nwarps)
                fw = &d->cluster->blocks[i].warps[d->lock_warp];
    if (!fw || fw->state != VM_WARP_READY) {
        /* the locked warp waits (a barrier) or is gone: stop, lock off for this warp */
        d->lock_valid = 0;
        char where[64] = "has exited";
        if (fw && fw->state == VM_WARP_BLOCKED)
            snprintf(where, sizeof where, "waits at barrier %d for the other warps", fw->blocked_bar);
        d->event++; /* this instruction now runs */
        do_stop(d, DBG_STOP_STEP, 0, b, w, __builtin_ctz(mask),
                "warp %d %s; with scheduler-locking %s it cannot go on: warp %d of block (%u,%u,%u) runs next "
                "(set scheduler-locking off to let the warps run)",
                d->lock_warp, where, d->lock == DBG_LOCK_ON ? "on" : "step", w->index, b->ctaid[0], b->ctaid[1],
                b->ctaid[2]);
        d->event--;
        return 0;
    }
    d->history_changed = 1;
    d->L->debug_kill = 2; /* yield, not kill: the interpreter tests one flag */
    return 1;
}

static void h_op(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    dbg *d = ctx;
    d->cluster = b->cluster;
    if (held_back(d, b, w, mask))
        return;
    if (INNER(op))
        d->inner->op(d->inner->ctx, b, w, f, pc, mask);
    if (d->killing)
        return;
    d->event++;
    ring_entry *r = &d->ring[d->ring_n++ % DBG_RING];
    r->event = d->event;
    r->block = b->linear_id;
    r->warp = w->index;
    d->cluster = b->cluster;
    d->cur_b = b;
    d->cur_w = w;
    d->cur_f = f;
    d->cur_pc = pc;
    d->cur_mask = mask;
    if (d->trace) {
        trace_flush(d);
        if (trace_wants(d, b, w, f->fn, pc)) {
            d->tp.live = 1;
            d->tp.b = b;
            d->tp.w = w;
            d->tp.f = f;
            d->tp.pc = pc;
            d->tp.mask = mask;
        }
    }
    note_mbarrier(d, b, f, pc, mask);
    if (!d->has_fe)
        return;
    if (d->query.kind == 3 && quiet(d) && b->linear_id == d->query.block_id && w->index == d->query.warp)
        d->q_event = d->event;
    int replay_here = d->stop_at && d->event == d->stop_at;
    if (replay_here) {
        d->stop_at = 0;
        if (d->query.kind == 3 || d->query.kind == 4) {
            /* the query run found where to go: run again to there (for
             * reverse-continue, to the stop found, which then happens as
             * it did the first time) */
            int kind = d->query.kind;
            uint64_t to = d->q_event ? d->q_event : 1;
            memset(&d->query, 0, sizeof d->query);
            dbg_restart_at(d, to, NULL);
            d->next_natural = kind == 4 && d->q_event;
            if (kind == 4 && !d->q_event) {
                free(d->answer);
                d->answer = dup_str("No more reverse-execution history.\n");
            }
            apply_resume(d, DBG_RESUME_RESTART);
            return;
        }
        if (d->query.kind)
            finish_query(d);
        memset(&d->query, 0, sizeof d->query);
        if (!d->natural) {
            /* back where the user was: only the replay stop (the store a
             * watchpoint waited for is the one that stopped here before) */
            d->nwpend = 0;
            replay_stop(d, b, w, mask);
            return;
        }
    }
    uint64_t stops = d->nstops;
    if (dbg_interrupt_requested && !quiet(d)) {
        dbg_interrupt_requested = 0;
        do_stop(d, DBG_STOP_INTERRUPT, 0, b, w, __builtin_ctz(mask), "\nProgram received signal SIGINT, Interrupt.");
        return;
    }
    if (d->nwpend)
        watch_settle(d);
    if (d->killing || d->nstops != stops)
        return;
    int q = quiet(d);
    /* stepping */
    if (!q && d->mode != DBG_RESUME_CONTINUE) {
        if (step_done(d, b, w, f, pc)) {
            do_stop(d, DBG_STOP_STEP, 0, b, w, (mask >> d->step_lane & 1) ? d->step_lane : __builtin_ctz(mask), NULL);
            return;
        }
        if (d->step_w && d->step_w->state == VM_WARP_DONE && w != d->step_w && b->linear_id == d->step_block) {
            do_stop(d, DBG_STOP_STEP, 0, b, w, __builtin_ctz(mask),
                    "warp %d of block (%u,%u,%u) exited while stepping; focus moved to the warp that runs now",
                    d->step_warp, b->ctaid[0], b->ctaid[1], b->ctaid[2]);
            return;
        }
    }
    /* breakpoints */
    for (int i = 0; i < d->nbps; i++) {
        dbg_bp *bp = d->bps[i];
        if (bp->kind != DBG_BP_BREAK || !bp->enabled || !bp_at(bp, f->fn, pc))
            continue;
        char err[320];
        int lane = cond_lane(d, bp, b, w, mask, err, sizeof err);
        if (lane < 0)
            continue;
        if (q) {
            if (d->query.kind == 4)
                d->q_event = d->event;
            continue;
        }
        bp->hits++;
        int number = bp->number, temporary = bp->temporary;
        if (temporary)
            dbg_bp_delete(d, number); /* bp is gone */
        do_stop(d, DBG_STOP_BREAKPOINT, number, b, w, lane, "%s%s%s", temporary ? "Temporary breakpoint" : "Breakpoint",
                err[0] ? "\n" : "", err);
        return;
    }
    if (f->fn->code[pc].code == BC_TRAP && f->fn->code[pc].mode == 1 && !q) {
        do_stop(d, DBG_STOP_BRKPT, 0, b, w, __builtin_ctz(mask), "brkpt instruction");
        return;
    }
    if (replay_here)
        replay_stop(d, b, w, mask);
}

/* A checker found something new during an inner hook: stop there. */
static void catch_findings(dbg *d, uint64_t before, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc,
                           uint32_t mask)
{
    int tool = 0, sev = 0;
    uint64_t after = check_new_findings(&tool, &sev);
    if (after == before || !d->has_fe || d->killing)
        return;
    unsigned want = tool == KEMU_TOOL_RACECHECK ? DBG_ON_RACE : tool == KEMU_TOOL_INITCHECK ? DBG_ON_INITCHECK
                    : tool == KEMU_TOOL_SYNCCHECK ? DBG_ON_SYNCCHECK : DBG_ON_MEMCHECK;
    if (!(d->on & want) || quiet(d) || !w)
        return;
    const char *name = tool == KEMU_TOOL_RACECHECK ? "racecheck" : tool == KEMU_TOOL_INITCHECK ? "initcheck"
                       : tool == KEMU_TOOL_SYNCCHECK ? "synccheck" : "memcheck";
    char where[512] = "";
    if (f) {
        dbg_where wh = {f, f->fn, pc};
        dbg_describe_where(d, &wh, where, sizeof where);
    }
    do_stop(d, DBG_STOP_CHECKER, 0, b, w, mask ? __builtin_ctz(mask) : 0,
            "%s found a new %s at %s by this warp (the full report comes at the end of the launch)", name,
            tool == KEMU_TOOL_RACECHECK ? "race" : sev == 1 ? "warning" : "error", where[0] ? where : "this point");
}

static void h_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                     const vm_access_lanes *lanes, unsigned size)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(access))
        d->inner->access(d->inner->ctx, b, w, f, pc, kind, mask, lanes, size);
    if (d->killing || !d->has_fe)
        return;
    if (d->query.kind == 1 || d->query.kind == 2)
        query_access(d, b, w, f, pc, kind, mask, lanes, size);
    d->cur_b = b;
    d->cur_w = w;
    d->cur_f = f;
    d->cur_pc = pc;
    d->cur_mask = mask;
    catch_findings(d, before, b, w, f, pc, mask);
    watch_access(d, b, w, f, pc, kind, mask, lanes, size);
}

static void h_block_begin(void *ctx, vm_block *b)
{
    dbg *d = ctx;
    if (INNER(block_begin))
        d->inner->block_begin(d->inner->ctx, b);
    d->cluster = b->cluster;
    for (size_t i = 0; i < d->nmbars;)
        if (d->mbars[i].block == b->linear_id)
            d->mbars[i] = d->mbars[--d->nmbars];
        else
            i++;
}

static void h_block_end(void *ctx, vm_block *b)
{
    dbg *d = ctx;
    if (d->trace && d->tp.live && d->tp.b == b)
        trace_flush(d);
    if (d->nwpend && !d->killing && d->has_fe)
        watch_settle(d);
    if (INNER(block_end))
        d->inner->block_end(d->inner->ctx, b);
    if (d->focus.b == b) {
        d->focus.b = NULL;
        d->focus.w = NULL;
    }
    if (d->cur_b == b) {
        d->cur_b = NULL;
        d->cur_w = NULL;
    }
}

static void h_barrier(void *ctx, vm_block *b, int id)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(barrier))
        d->inner->barrier(d->inner->ctx, b, id);
    if (d->query.kind == 2 && b->linear_id == d->query.block_id && d->q_text.data) {
        d->q_text.len = 0;
        d->q_text.data[0] = 0;
    }
    catch_findings(d, before, b, d->cur_b == b ? d->cur_w : NULL, NULL, 0, 0);
}

static void h_warp_sync(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t active,
                        uint32_t member)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(warp_sync))
        d->inner->warp_sync(d->inner->ctx, b, w, f, pc, active, member);
    catch_findings(d, before, b, w, f, pc, active);
}

static void h_fence(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask, int scope)
{
    dbg *d = ctx;
    if (INNER(fence))
        d->inner->fence(d->inner->ctx, b, w, f, pc, mask, scope);
}

static void h_cluster_barrier(void *ctx, vm_block *b)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(cluster_barrier))
        d->inner->cluster_barrier(d->inner->ctx, b);
    catch_findings(d, before, b, NULL, NULL, 0, 0);
}

static void h_divergent_barrier(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int id,
                                uint32_t arrived, uint32_t missing)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(divergent_barrier))
        d->inner->divergent_barrier(d->inner->ctx, b, w, f, pc, id, arrived, missing);
    catch_findings(d, before, b, w, f, pc, arrived);
}

static void h_mapped_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind,
                            uint32_t mask, const uint64_t *addr, unsigned size)
{
    dbg *d = ctx;
    if (INNER(mapped_access))
        d->inner->mapped_access(d->inner->ctx, b, w, f, pc, kind, mask, addr, size);
}

static void h_barrier_arrive(void *ctx, vm_block *b, vm_warp *w, int id)
{
    dbg *d = ctx;
    int tool, sev;
    uint64_t before = check_new_findings(&tool, &sev);
    if (INNER(barrier_arrive))
        d->inner->barrier_arrive(d->inner->ctx, b, w, id);
    catch_findings(d, before, b, w, NULL, 0, 0);
}

static const vm_hooks *fault_table(const dbg *d)
{
    return d->inner ? d->inner : d->inner_faults;
}

static void h_bad_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, int space,
                         uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size)
{
    dbg *d = ctx;
    const vm_hooks *h = fault_table(d);
    if (h && h->bad_access)
        h->bad_access(h->ctx, b, w, f, pc, kind, space, mask, addr, imm, size);
}

static void h_heap_misuse(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                          const char *reason)
{
    dbg *d = ctx;
    const vm_hooks *h = fault_table(d);
    if (h && h->heap_misuse)
        h->heap_misuse(h->ctx, b, w, f, pc, lane, reason);
}

static void h_fault(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane, int status,
                    const char *message)
{
    dbg *d = ctx;
    const vm_hooks *h = fault_table(d);
    if (h && h->fault)
        h->fault(h->ctx, b, w, f, pc, lane, status, message);
    if (d->killing || !d->has_fe || !w)
        return;
    int memory = status == 700 || status == 716 || status == 717;
    if (!(d->on & DBG_ON_FAULT) && !(memory && (d->on & DBG_ON_MEMCHECK)))
        return;
    if (quiet(d))
        return;
    d->cur_b = b;
    d->cur_w = w;
    d->cur_f = f;
    d->cur_pc = pc;
    d->cur_mask = 1u << lane;
    for (int gi = 0; gi < w->ngroups; gi++)
        if (w->groups[gi].mask >> lane & 1)
            d->cur_mask = w->groups[gi].mask;
    do_stop(d, DBG_STOP_FAULT, 0, b, w, (int)lane, "%s", message);
}

/* ---- launches ---------------------------------------------------------------------- */

const vm_hooks *dbg_launch_begin(dbg *d, vm_launch *L, const vm_hooks *inner, const vm_hooks *inner_faults)
{
    d->L = L;
    d->inner = inner;
    d->inner_faults = inner_faults;
    if (!d->launch_replaying) {
        d->launch_event0 = d->event;
        d->launch_kernel_id0 = d->kernel_id;
    }
    d->launch_replaying = 0;
    d->kernel_id++;
    /* a launch may run another module (or one loaded again at the same
     * address): its DWARF is read again when asked for */
    dwarf_free(d->dwarf);
    d->dwarf = NULL;
    d->dwarf_read = 0;
    d->cluster = NULL;
    d->cur_b = NULL;
    d->cur_w = NULL;
    d->focus.b = NULL;
    d->focus.w = NULL;
    d->nwpend = 0;
    d->killed_launch = 0;
    if (d->killing)
        L->debug_kill = 1;
    L->brkpt_resumes = d->has_fe;
    for (int i = 0; i < d->nbps; i++) {
        dbg_bp *bp = d->bps[i];
        if (bp->kind != DBG_BP_BREAK)
            continue;
        char msg[256];
        bp_resolve(d, bp, L->mod, msg, sizeof msg);
    }
    vm_hooks *h = &d->hooks;
    memset(h, 0, sizeof *h);
    h->ctx = d;
    h->op = h_op;
    h->access = h_access;
    h->block_begin = h_block_begin;
    h->block_end = h_block_end;
    h->barrier = h_barrier;
    h->warp_sync = h_warp_sync;
    h->fence = h_fence;
    h->cluster_barrier = h_cluster_barrier;
    h->divergent_barrier = h_divergent_barrier;
    h->mapped_access = h_mapped_access;
    h->barrier_arrive = h_barrier_arrive;
    h->bad_access = h_bad_access;
    h->heap_misuse = h_heap_misuse;
    h->fault = h_fault;
    if (!quiet(d) && !d->killing)
        fe_message(d, "[Launch of CUDA Kernel %d (%s<<<(%u,%u,%u),(%u,%u,%u)>>>) on Device 0]", d->kernel_id - 1,
                   L->kernel->name, L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1], L->block[2]);
    return h;
}

int dbg_launch_end(dbg *d, vm_launch *L, const vm_fault *fault)
{
    (void)fault;
    if (d->trace)
        trace_flush(d);
    if (d->trace)
        fflush(d->trace);
    int drop = quiet(d) || d->killing;
    if (d->nwpend && !d->killing && d->has_fe)
        watch_settle(d);
    d->nwpend = 0;
    d->L = L; /* still valid for messages until the caller returns */
    d->cluster = NULL;
    d->cur_b = NULL;
    d->cur_w = NULL;
    d->focus.b = NULL;
    d->focus.w = NULL;
    int killed = d->killing;
    d->L = NULL;
    return drop | (killed ? 2 : 0);
}

/* ---- replay ------------------------------------------------------------------------ */

void dbg_restart_at(dbg *d, uint64_t at, const dbg_query *q)
{
    d->restart_at = at;
    d->next_natural = 0;
    if (d->stopped) {
        d->saved_valid = d->focus.w != NULL;
        d->saved_block = d->focus.b ? d->focus.b->linear_id : 0;
        d->saved_warp = d->focus.w ? d->focus.w->index : 0;
        d->saved_lane = d->focus.lane;
    }
    if (q)
        d->next_query = *q;
    else
        memset(&d->next_query, 0, sizeof d->next_query);
}

int dbg_run_killed(const dbg *d)
{
    return d->killing;
}

int dbg_restart_pending(const dbg *d)
{
    return d->restart;
}

void dbg_run_begin(dbg *d)
{
    d->event = 0;
    d->kernel_id = 0;
    d->ring_n = 0;
    d->killing = 0;
    d->mode = DBG_RESUME_CONTINUE;
    d->nmbars = 0;
    d->nwpend = 0;
    if (!d->restart_at)
        d->history_changed = 0; /* a fresh run */
    d->stop_at = d->restart_at;
    d->query = d->next_query;
    d->natural = d->next_natural;
    d->next_natural = 0;
    if (!d->stop_at)
        d->saved_valid = 0;
    memset(&d->next_query, 0, sizeof d->next_query);
    if (d->query.kind == 1 || d->query.kind == 2) {
        free(d->answer);
        d->answer = NULL;
    }
    d->q_event = 0;
    d->q_found = 0;
    util_buffer_free(&d->q_text);
    d->restart = 0;
    d->restart_at = 0;
    d->tp.live = 0;
}

const char *dbg_query_answer(const dbg *d)
{
    return d->answer;
}

void dbg_answer_done(dbg *d)
{
    free(d->answer);
    d->answer = NULL;
}

uint64_t dbg_previous_event_of_focus(dbg *d)
{
    if (!d->focus.w || !d->focus.b)
        return 0;
    uint64_t block = d->focus.b->linear_id;
    int warp = d->focus.w->index;
    uint64_t n = d->ring_n < DBG_RING ? d->ring_n : DBG_RING;
    for (uint64_t k = 1; k <= n; k++) {
        const ring_entry *r = &d->ring[(d->ring_n - k) % DBG_RING];
        if (r->event >= d->event)
            continue;
        if (r->block == block && r->warp == warp)
            return r->event;
    }
    return 0;
}

/* ---- values -------------------------------------------------------------------------- */

static void load_bits(const unsigned char *p, unsigned size, int type, dbg_value *v)
{
    uint64_t bits = 0;
    memcpy(&bits, p, size > 8 ? 8 : size);
    memset(v, 0, sizeof *v);
    v->type = type;
    switch (type) {
    case PTX_T_F32: {
        float f;
        uint32_t u = (uint32_t)bits;
        memcpy(&f, &u, 4);
        v->kind = DBG_V_FLOAT;
        v->f = f;
        break;
    }
    case PTX_T_F64:
        v->kind = DBG_V_FLOAT;
        memcpy(&v->f, &bits, 8);
        break;
    case PTX_T_F16:
        v->kind = DBG_V_FLOAT;
        v->f = vm_f16_to_f64((uint16_t)bits);
        break;
    case PTX_T_BF16:
        v->kind = DBG_V_FLOAT;
        v->f = vm_bf16_to_f64((uint16_t)bits);
        break;
    case PTX_T_S8: v->kind = DBG_V_INT; v->i = (int8_t)bits; break;
    case PTX_T_S16: v->kind = DBG_V_INT; v->i = (int16_t)bits; break;
    case PTX_T_S32: v->kind = DBG_V_INT; v->i = (int32_t)bits; break;
    case PTX_T_S64: v->kind = DBG_V_INT; v->i = (int64_t)bits; break;
    default:
        v->kind = DBG_V_UINT;
        v->u = size >= 8 ? bits : bits & ((1ull << (8 * size)) - 1);
        break;
    }
    v->i = v->kind == DBG_V_UINT ? (int64_t)v->u : v->i;
    v->u = v->kind == DBG_V_INT ? (uint64_t)v->i : v->u;
}

int dbg_load(dbg *d, dbg_value *v, int lane)
{
    if (!v->is_lvalue)
        return 0;
    unsigned char buf[16] = {0};
    unsigned size = v->size ? v->size : 4;
    if (size > sizeof buf)
        size = sizeof buf;
    if (dbg_read_memory(d, v->space, v->addr, buf, size, lane))
        return -1;
    dbg_value keep = *v;
    load_bits(buf, size, v->type, v);
    v->is_lvalue = 1;
    v->space = keep.space;
    v->addr = keep.addr;
    v->size = keep.size;
    v->array_count = keep.array_count;
    v->is_pointer = keep.is_pointer;
    v->ptr_space = keep.ptr_space;
    v->ptr_type = keep.ptr_type;
    v->dtype = keep.dtype;
    v->ptr_dtype = keep.ptr_dtype;
    v->is_struct = keep.is_struct;
    return 0;
}

void dbg_value_from_bits(dbg_value *v, uint64_t bits, unsigned size, int type)
{
    unsigned char buf[8];
    for (unsigned i = 0; i < 8; i++)
        buf[i] = (unsigned char)(bits >> (8 * i));
    load_bits(buf, size > 8 ? 8 : size, type, v);
}

void dbg_format_value(const dbg_value *v, int fmt, char *buf, size_t n)
{
    if (v->optimized_out) {
        snprintf(buf, n, "<optimized out>");
        return;
    }
    uint64_t bits = v->kind == DBG_V_FLOAT ? 0 : v->u;
    if (v->kind == DBG_V_FLOAT && fmt && fmt != 'f') {
        if (v->type == PTX_T_F64) {
            memcpy(&bits, &v->f, 8);
        } else {
            float f = (float)v->f;
            uint32_t u;
            memcpy(&u, &f, 4);
            bits = u;
        }
    }
    unsigned size = v->type && v->type != PTX_T_PRED ? ptx_type_size((ptx_type)v->type) : 8;
    if (size && size < 8 && v->kind != DBG_V_FLOAT)
        bits &= (1ull << (8 * size)) - 1;
    switch (fmt) {
    case 'x':
        snprintf(buf, n, "0x%llx", (unsigned long long)bits);
        return;
    case 'o':
        snprintf(buf, n, "0%llo", (unsigned long long)bits);
        return;
    case 'u':
        snprintf(buf, n, "%llu", (unsigned long long)bits);
        return;
    case 'd': {
        int64_t s = (int64_t)bits;
        if (size && size < 8 && (bits >> (8 * size - 1) & 1))
            s = (int64_t)(bits | ~((1ull << (8 * size)) - 1));
        snprintf(buf, n, "%lld", (long long)s);
        return;
    }
    case 't': {
        char tmp[72];
        int k = 0;
        for (int i = 63; i >= 0; i--)
            if (k || (bits >> i & 1) || i == 0)
                tmp[k++] = (char)('0' + (bits >> i & 1));
        tmp[k] = 0;
        snprintf(buf, n, "%s", tmp);
        return;
    }
    case 'c':
        snprintf(buf, n, "%llu '%c'", (unsigned long long)(bits & 0xff),
                 isprint((int)(bits & 0xff)) ? (int)(bits & 0xff) : '?');
        return;
    case 'a':
        snprintf(buf, n, "0x%llx", (unsigned long long)bits);
        return;
    case 'f':
        if (v->kind != DBG_V_FLOAT) {
            double x = v->kind == DBG_V_INT ? (double)v->i : (double)v->u;
            snprintf(buf, n, "%g", x);
            return;
        }
        break;
    default:
        break;
    }
    if (v->kind == DBG_V_MASK)
        snprintf(buf, n, "0x%08llx", (unsigned long long)v->u);
    else if (v->kind == DBG_V_FLOAT)
        snprintf(buf, n, v->type == PTX_T_F64 ? "%.17g" : "%.9g", v->f);
    else if (v->type == PTX_T_PRED)
        snprintf(buf, n, "%s", v->u ? "true" : "false");
    else if (v->is_pointer)
        snprintf(buf, n, "0x%llx", (unsigned long long)v->u);
    else if (v->kind == DBG_V_INT)
        snprintf(buf, n, "%lld", (long long)v->i);
    else
        snprintf(buf, n, "%llu", (unsigned long long)v->u);
}

int dbg_find_register(const bc_function *fn, const char *name, uint32_t *slot, int *type, int *is_pred)
{
    const ptx_function *pf = fn ? fn->ptx : NULL;
    if (!pf || !fn->reg_slots)
        return -1;
    for (int i = 0; i < pf->nregs; i++)
        if (!strcmp(pf->regs[i]->name, name)) {
            *slot = fn->reg_slots[i];
            *type = pf->regs[i]->type;
            *is_pred = pf->regs[i]->type == PTX_T_PRED;
            return 0;
        }
    return -1;
}

/* ---- watchpoints (creation) ------------------------------------------------------------ */

int dbg_memory_place(const dbg_value *v, int *space, uint64_t *addr, unsigned *size)
{
    if (v->is_lvalue) {
        *space = v->space;
        *addr = v->addr;
        *size = v->size ? v->size : 1;
    } else if (v->is_pointer) {
        *space = v->ptr_space;
        *addr = v->u;
        *size = 4;
    } else {
        *space = BC_SPACE_GENERIC;
        *addr = v->u;
        *size = 4;
    }
    if (*space == BC_SPACE_GENERIC) {
        uint64_t off;
        *space = vm_generic_space(*addr, &off);
        *addr = off;
    }
    if (*space == BC_SPACE_SHARED_CLUSTER)
        *space = BC_SPACE_SHARED;
    return *space == BC_SPACE_GLOBAL || *space == BC_SPACE_SHARED ? 0 : -1;
}

int dbg_watch(dbg *d, int kind, const char *expr, char *msg, size_t n)
{
    dbg_value v;
    if (dbg_eval(d, expr, d->focus.w ? d->focus.lane : 0, &v, msg, n))
        return -1;
    if (!v.is_lvalue) {
        snprintf(msg, n, "Cannot watch constant value '%s': name memory (a variable, *(T*)address or p[i])", expr);
        return -1;
    }
    int space;
    uint64_t addr;
    unsigned size;
    if (dbg_memory_place(&v, &space, &addr, &size)) {
        snprintf(msg, n, "Can only watch global or shared memory ('%s' is in another space)", expr);
        return -1;
    }
    dbg_bp *bp = bp_new(d, kind);
    if (!bp) {
        snprintf(msg, n, "out of memory");
        return -1;
    }
    bp->expr = dup_str(expr);
    bp->spec = dup_str(expr);
    bp->space = space;
    bp->addr = addr;
    bp->size = size > 16 ? 16 : size;
    bp->type = v.type;
    snprintf(bp->where, sizeof bp->where, "%s 0x%llx, %u bytes", space == BC_SPACE_SHARED ? "shared" : "global",
             (unsigned long long)addr, bp->size);
    msg[0] = 0;
    return bp->number;
}
