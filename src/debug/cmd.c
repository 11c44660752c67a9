/* The gdb-style command front end (see cli.h). Command names and their
 * abbreviations follow gdb (b, c, s, n, si, p, x, bt, i b ...) and
 * cuda-gdb (cuda block ... thread ..., info cuda warps ...). */
#include "config.h"
#include "debug/cli.h"
#include "debug/dap.h"
#include "vm/mbarrier.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct source_file {
    char *name;
    char **lines;
    int nlines;
    int missing;
} source_file;

typedef struct input {
    FILE *f;          /* a script, or NULL for a single command */
    char *command;
    char *path;
} input;

enum { PEND_NONE = 0, PEND_QUERY, PEND_REVERSE };

struct dbg_cli {
    dbg_cli_config cfg;
    dbg *d;
    input *inputs;
    size_t ninputs, capinputs;
    int errors;
    int quit;
    int running;
    int pending;          /* what a replay stop is for */
    int values;           /* $N of print */
    source_file *sources;
    size_t nsources, capsources;
    int list_line;        /* `list` continues here */
    int list_fresh;       /* a stop printed list_line: the next `list` centres on it */
    const char *list_file;
    uint64_t last_focus_b;
    int last_focus_w;
    int last_focus_lane;
    int last_kernel;
};

static void out(dbg_cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(dbg_cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->cfg.out, fmt, ap);
    va_end(ap);
}

static void err(dbg_cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void err(dbg_cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->cfg.out, fmt, ap);
    va_end(ap);
    fputc('\n', c->cfg.out);
    c->errors++;
}

static void fe_message(void *ctx, dbg *d, const char *text)
{
    (void)d;
    dbg_cli *c = ctx;
    out(c, "%s\n", text);
    fflush(c->cfg.out);
}

static int fe_stopped(void *ctx, dbg *d);

dbg_cli *dbg_cli_create(const dbg_cli_config *cfg)
{
    dbg_cli *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    if (!c->cfg.out)
        c->cfg.out = stdout;
    if (!c->cfg.target_name)
        c->cfg.target_name = "kemu";
    dbg_frontend fe = {c, fe_stopped, fe_message};
    c->d = dbg_create(&fe);
    if (!c->d) {
        free(c);
        return NULL;
    }
    c->last_kernel = -1;
    return c;
}

void dbg_cli_destroy(dbg_cli *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ninputs; i++) {
        if (c->inputs[i].f)
            fclose(c->inputs[i].f);
        free(c->inputs[i].command);
        free(c->inputs[i].path);
    }
    free(c->inputs);
    for (size_t i = 0; i < c->nsources; i++) {
        for (int k = 0; k < c->sources[i].nlines; k++)
            free(c->sources[i].lines[k]);
        free(c->sources[i].lines);
        free(c->sources[i].name);
    }
    free(c->sources);
    dbg_destroy(c->d);
    free(c);
}

dbg *dbg_cli_debugger(dbg_cli *c) { return c->d; }
int dbg_cli_errors(const dbg_cli *c) { return c->errors; }
int dbg_cli_quitting(const dbg_cli *c) { return c->quit; }

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

int dbg_cli_add_script(dbg_cli *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        out(c, "%s: %s.\n", path, strerror(errno));
        c->errors++;
        return -1;
    }
    if (util_grow(&c->inputs, &c->capinputs, c->ninputs + 1, sizeof *c->inputs)) {
        fclose(f);
        return -1;
    }
    c->inputs[c->ninputs++] = (input){f, NULL, dup_str(path)};
    return 0;
}

int dbg_cli_add_command(dbg_cli *c, const char *command)
{
    if (util_grow(&c->inputs, &c->capinputs, c->ninputs + 1, sizeof *c->inputs))
        return -1;
    c->inputs[c->ninputs++] = (input){NULL, dup_str(command), NULL};
    return 0;
}

/* The next command line (malloc'd), or NULL at the end of all input. */
static char *next_line(dbg_cli *c)
{
    while (c->ninputs) {
        input *in = &c->inputs[0];
        char *line = NULL;
        if (in->command) {
            line = in->command;
            in->command = NULL;
        } else if (in->f) {
            size_t cap = 0;
            ssize_t n = getline(&line, &cap, in->f);
            if (n < 0) {
                free(line);
                line = NULL;
            } else {
                while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                    line[--n] = 0;
            }
        }
        if (line) {
            if (!in->f && !in->command) {
                /* a single command: done after this */
                free(in->path);
                memmove(&c->inputs[0], &c->inputs[1], (c->ninputs - 1) * sizeof *c->inputs);
                c->ninputs--;
            }
            out(c, "(kemu) %s\n", line);
            return line;
        }
        if (in->f)
            fclose(in->f);
        free(in->path);
        memmove(&c->inputs[0], &c->inputs[1], (c->ninputs - 1) * sizeof *c->inputs);
        c->ninputs--;
    }
    if (c->cfg.batch || !c->cfg.readline)
        return NULL;
    fflush(c->cfg.out);
    return c->cfg.readline(c->cfg.readline_ctx, "(kemu) ");
}

/* ---- source files ------------------------------------------------------------ */

static source_file *source_get(dbg_cli *c, const char *name)
{
    for (size_t i = 0; i < c->nsources; i++)
        if (!strcmp(c->sources[i].name, name))
            return &c->sources[i];
    if (util_grow(&c->sources, &c->capsources, c->nsources + 1, sizeof *c->sources))
        return NULL;
    source_file *s = &c->sources[c->nsources++];
    memset(s, 0, sizeof *s);
    s->name = dup_str(name);
    FILE *f = fopen(name, "r");
    if (!f) {
        /* nvcc records the path it compiled; try the name beside the PTX */
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        const char *ptx = dbg_ptx_file(c->d);
        const char *slash = strrchr(ptx, '/');
        char path[4096];
        if (slash)
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - ptx), ptx, base);
        else
            snprintf(path, sizeof path, "%s", base);
        f = fopen(path, "r");
    }
    if (!f) {
        s->missing = 1;
        return s;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    size_t capl = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (util_grow(&s->lines, &capl, (size_t)s->nlines + 1, sizeof *s->lines))
            break;
        s->lines[s->nlines++] = dup_str(line);
    }
    free(line);
    fclose(f);
    return s;
}

static const char *source_line(dbg_cli *c, const char *file, int line)
{
    source_file *s = file ? source_get(c, file) : NULL;
    if (!s || s->missing || line < 1 || line > s->nlines)
        return NULL;
    return s->lines[line - 1];
}

/* Prints "LINE\tTEXT" of a place: the CUDA line when there is one and
 * its file can be read, else the PTX line. */
static void print_line(dbg_cli *c, const dbg_where *wh)
{
    dbg_src s;
    dbg_src_of(c->d, wh->fn, wh->pc, &s);
    const char *text = s.file ? source_line(c, s.file, s.line) : NULL;
    if (text) {
        out(c, "%d\t%s\n", s.line, text);
        c->list_file = s.file;
        c->list_line = s.line;
        c->list_fresh = 1;
    } else {
        char ptx[512];
        dbg_ptx_line(c->d, s.ptx_line, ptx, sizeof ptx);
        if (s.file)
            out(c, "%d\tin %s (source not found); PTX line %d: %s\n", s.line, s.file, s.ptx_line, ptx);
        else
            out(c, "%d\t%s\n", s.ptx_line, ptx);
        c->list_file = s.file;
        c->list_line = s.file ? s.line : s.ptx_line;
        c->list_fresh = 1;
    }
}

/* ---- stops ------------------------------------------------------------------- */

static void print_focus_switch(dbg_cli *c, int force)
{
    dbg_focus *fo = dbg_focus_get(c->d);
    if (!fo->w)
        return;
    if (!force && fo->b->linear_id == c->last_focus_b && fo->w->index == c->last_focus_w &&
        fo->lane == c->last_focus_lane && dbg_kernel_id(c->d) == c->last_kernel)
        return;
    c->last_focus_b = fo->b->linear_id;
    c->last_focus_w = fo->w->index;
    c->last_focus_lane = fo->lane;
    c->last_kernel = dbg_kernel_id(c->d);
    char who[128];
    dbg_describe_lane(fo->b, fo->w, fo->lane, who, sizeof who);
    out(c, "[Switching focus to CUDA kernel %d, %s, warp %d, lane %d]\n", dbg_kernel_id(c->d), who, fo->w->index,
        fo->lane);
}

static void print_stop(dbg_cli *c)
{
    dbg *d = c->d;
    const dbg_stop *st = dbg_last_stop(d);
    dbg_focus *fo = dbg_focus_get(d);
    dbg_where wh;
    int have = fo->w && dbg_lane_where(d, fo->b, fo->w, fo->lane, 0, &wh) == 0;
    char where[600] = "";
    if (have)
        dbg_describe_where(d, &wh, where, sizeof where);
    switch (st->reason) {
    case DBG_STOP_BREAKPOINT:
        print_focus_switch(c, 0);
        out(c, "\n%s %d, %s\n", strncmp(st->text, "Temporary", 9) ? "Breakpoint" : "Temporary breakpoint", st->bp,
            where);
        if (strchr(st->text, '\n'))
            out(c, "%s\n", strchr(st->text, '\n') + 1);
        break;
    case DBG_STOP_WATCH:
    case DBG_STOP_FAULT:
    case DBG_STOP_CHECKER:
        print_focus_switch(c, 0);
        out(c, "\n%s%s\n", st->reason == DBG_STOP_FAULT ? "CUDA Exception: " : "", st->text);
        if (have)
            out(c, "%s\n", where);
        break;
    case DBG_STOP_BRKPT:
        print_focus_switch(c, 0);
        out(c, "\nProgram stopped at a brkpt instruction, %s\n", where);
        break;
    case DBG_STOP_ENTRY:
        print_focus_switch(c, 1);
        out(c, "\nStopped at the first instruction, %s\n", where);
        break;
    case DBG_STOP_STEP:
    case DBG_STOP_INTERRUPT:
    case DBG_STOP_REPLAY:
    default:
        print_focus_switch(c, 0);
        if (st->text[0])
            out(c, "%s\n", st->text);
        if (have && (st->reason == DBG_STOP_REPLAY || !c->list_file || wh.pc == 0))
            out(c, "%s\n", where);
        break;
    }
    if (have)
        print_line(c, &wh);
}

static int run_command(dbg_cli *c, char *line, int stopped);

enum { CMD_STAY = -1 };

static int fe_stopped(void *ctx, dbg *d)
{
    dbg_cli *c = ctx;
    (void)d;
    const char *answer = dbg_query_answer(c->d);
    if (c->pending == PEND_QUERY && answer) {
        out(c, "%s", answer);
    } else {
        if (answer && c->pending == PEND_REVERSE)
            out(c, "\n%s", answer);
        print_stop(c);
    }
    c->pending = PEND_NONE;
    dbg_answer_done(c->d);
    fflush(c->cfg.out);
    for (;;) {
        char *line = next_line(c);
        if (!line) {
            /* the end of input: gdb -batch kills the program and quits */
            c->quit = 1;
            return DBG_RESUME_KILL;
        }
        int r = run_command(c, line, 1);
        free(line);
        fflush(c->cfg.out);
        if (r != CMD_STAY)
            return r;
        if (c->quit)
            return DBG_RESUME_KILL;
    }
}

int dbg_cli_idle(dbg_cli *c)
{
    for (;;) {
        if (c->quit)
            return DBG_CLI_QUIT;
        char *line = next_line(c);
        if (!line)
            return DBG_CLI_QUIT;
        int r = run_command(c, line, 0);
        free(line);
        fflush(c->cfg.out);
        if (r == DBG_RESUME_RESTART || r == DBG_RESUME_CONTINUE) {
            c->running = 1;
            return DBG_CLI_RUN;
        }
    }
}

void dbg_cli_target_ended(dbg_cli *c, int status)
{
    c->running = 0;
    c->last_kernel = -1;
    if (c->quit)
        return;
    if (status < 0)
        out(c, "[Inferior 1 (%s) killed]\n", c->cfg.target_name);
    else if (status == 0)
        out(c, "[Inferior 1 (%s) exited normally]\n", c->cfg.target_name);
    else
        out(c, "[Inferior 1 (%s) exited with code %02o]\n", c->cfg.target_name, status);
    fflush(c->cfg.out);
}

/* ---- command helpers ------------------------------------------------------ */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* Whether word (typed) abbreviates name with at least min letters. */
static int is(const char *word, const char *name, size_t min)
{
    size_t n = strlen(word);
    return n >= min && n <= strlen(name) && !strncmp(word, name, n);
}

static int need_stopped(dbg_cli *c, int stopped)
{
    if (!stopped) {
        err(c, "The program is not being run.");
        return 0;
    }
    return 1;
}

static int parse_triple(const char *s, unsigned v[3])
{
    v[0] = v[1] = v[2] = 0;
    char *end;
    for (int i = 0; i < 3; i++) {
        while (*s == ' ' || *s == '(')
            s++;
        if (!isdigit((unsigned char)*s))
            return i ? 0 : -1;
        v[i] = (unsigned)strtoul(s, &end, 10);
        s = end;
        while (*s == ' ' || *s == ')')
            s++;
        if (*s != ',')
            return 0;
        s++;
    }
    return 0;
}

static void show_value(dbg_cli *c, const dbg_value *v, int fmt, int lane)
{
    util_buffer b = {0};
    dbg_format_object(c->d, v, fmt, lane, &b);
    out(c, "%s", b.data ? b.data : "");
    util_buffer_free(&b);
}

/* "/FMT" after a command name: count, format letter, unit letter. */
static const char *parse_fmt(const char *s, int *count, int *fmt, int *unit)
{
    if (*s != '/')
        return s;
    s++;
    if (isdigit((unsigned char)*s)) {
        char *end;
        *count = (int)strtol(s, &end, 10);
        s = end;
    }
    while (*s && !isspace((unsigned char)*s)) {
        if (strchr("bhwg", *s))
            *unit = *s;
        else
            *fmt = *s;
        s++;
    }
    return s;
}

/* ---- print --------------------------------------------------------------- */

/* LHS = RHS for the focused lane; the new value in *out. 0 or -1 (said). */
static int assign(dbg_cli *c, const char *text, int stopped, dbg_value *out)
{
    int at = dbg_assignment_at(text);
    if (at <= 0) {
        err(c, "set var: want LHS = VALUE");
        return -1;
    }
    if (!need_stopped(c, stopped))
        return -1;
    dbg_focus *fo = dbg_focus_get(c->d);
    char lhs[1024];
    snprintf(lhs, sizeof lhs, "%.*s", at, text);
    char msg[256];
    if (dbg_assign(c->d, lhs, text + at + 1, fo->w ? fo->lane : 0, out, msg, sizeof msg)) {
        err(c, "%s", msg);
        return -1;
    }
    return 0;
}

static void set_variable(dbg_cli *c, const char *text, int stopped)
{
    dbg_value v;
    assign(c, text, stopped, &v);
}

static void cmd_print(dbg_cli *c, const char *args, int stopped)
{
    int count = 1, fmt = 0, unit = 0;
    args = parse_fmt(args, &count, &fmt, &unit);
    char expr[1024];
    snprintf(expr, sizeof expr, "%s", args);
    char *e = trim(expr);
    if (!*e) {
        err(c, "print: want an expression");
        return;
    }
    dbg_focus *fo = dbg_focus_get(c->d);
    size_t n = strlen(e);
    const char *suffix = "@lanes";
    int lanes = n > strlen(suffix) && !strcmp(e + n - strlen(suffix), suffix);
    if (lanes) {
        e[n - strlen(suffix)] = 0;
        e = trim(e);
        if (!need_stopped(c, stopped) || !fo->w)
            return;
        /* every lane of the warp that can run, side by side */
        uint32_t live = fo->w->valid & ~fo->w->exited;
        int is_pred = e[0] == '%';
        uint32_t mask = 0;
        int npred = 0;
        util_buffer b = {0};
        for (int l = 0; l < VM_WARP; l++) {
            if (!(live >> l & 1))
                continue;
            dbg_value v;
            char msg[256];
            if (dbg_eval(c->d, e, l, &v, msg, sizeof msg)) {
                util_buffer_free(&b);
                err(c, "%s", msg);
                return;
            }
            if (v.type == PTX_T_PRED) {
                npred++;
                if (v.u)
                    mask |= 1u << l;
            } else {
                is_pred = 0;
            }
            char buf[128];
            dbg_format_value(&v, fmt, buf, sizeof buf);
            util_buffer_printf(&b, "%s[%d] = %s", b.len ? ", " : "", l, buf);
        }
        if (is_pred && npred)
            out(c, "$%d = 0x%08x (lanes where %s is true)\n", ++c->values, mask, e);
        else
            out(c, "$%d = {%s}\n", ++c->values, b.data ? b.data : "");
        util_buffer_free(&b);
        return;
    }
    dbg_value v;
    char msg[256];
    if (dbg_assignment_at(e) > 0) {
        if (assign(c, e, stopped, &v))
            return;
    } else if (dbg_eval(c->d, e, fo->w ? fo->lane : 0, &v, msg, sizeof msg)) {
        err(c, "%s", msg);
        return;
    }
    out(c, "$%d = ", ++c->values);
    show_value(c, &v, fmt, fo->lane);
    out(c, "\n");
}

/* ---- x -------------------------------------------------------------------- */

static void cmd_x(dbg_cli *c, const char *args, int stopped)
{
    static int last_fmt = 'x', last_unit = 'w';
    int count = 1, fmt = last_fmt, unit = last_unit;
    args = parse_fmt(args, &count, &fmt, &unit);
    char expr[1024];
    snprintf(expr, sizeof expr, "%s", args);
    char *e = trim(expr);
    if (!*e) {
        err(c, "Argument required (starting display address).");
        return;
    }
    dbg_focus *fo = dbg_focus_get(c->d);
    if (fmt == 'i') {
        /* PTX instructions from an op index: x/3i $pc */
        if (!need_stopped(c, stopped) || !fo->w)
            return;
        dbg_value v;
        char msg[256];
        if (dbg_eval(c->d, e, fo->lane, &v, msg, sizeof msg)) {
            err(c, "%s", msg);
            return;
        }
        dbg_where wh;
        if (dbg_lane_where(c->d, fo->b, fo->w, fo->lane, fo->frame, &wh)) {
            err(c, "No registers.");
            return;
        }
        for (int i = 0; i < count && v.u + (uint64_t)i < wh.fn->ncode; i++) {
            uint32_t pc = (uint32_t)v.u + (uint32_t)i;
            dbg_src s;
            dbg_src_of(c->d, wh.fn, pc, &s);
            char text[256];
            dbg_ptx_line(c->d, s.ptx_line, text, sizeof text);
            out(c, "%s %s+%u <%s:%d>:\t%s\n", pc == wh.pc ? "=>" : "  ", wh.fn->name, pc, dbg_ptx_file(c->d),
                s.ptx_line, text);
        }
        last_fmt = fmt;
        return;
    }
    int space = BC_SPACE_GENERIC;
    if (e[0] == '@') {
        char sp[32];
        int k = 0;
        e++;
        while (isalpha((unsigned char)*e) && k < 31)
            sp[k++] = *e++;
        sp[k] = 0;
        space = !strcmp(sp, "shared") ? BC_SPACE_SHARED : !strcmp(sp, "global") ? BC_SPACE_GLOBAL
                : !strcmp(sp, "local") ? BC_SPACE_LOCAL : !strcmp(sp, "const") ? BC_SPACE_CONST
                : !strcmp(sp, "param") ? BC_SPACE_PARAM_KERNEL : !strcmp(sp, "generic") ? BC_SPACE_GENERIC : -1;
        if (space < 0) {
            err(c, "unknown memory space '@%s' (shared, global, local, const, param, generic)", sp);
            return;
        }
        e = trim(e);
    }
    dbg_value v;
    char msg[256];
    if (dbg_eval(c->d, e, fo->w ? fo->lane : 0, &v, msg, sizeof msg)) {
        err(c, "%s", msg);
        return;
    }
    uint64_t addr;
    if (v.is_lvalue && v.array_count) {
        addr = v.addr;
        if (space == BC_SPACE_GENERIC)
            space = v.space;
    } else if (v.is_pointer) {
        addr = v.u;
        if (space == BC_SPACE_GENERIC)
            space = v.ptr_space;
    } else {
        addr = v.kind == DBG_V_FLOAT ? (uint64_t)v.f : v.u;
    }
    unsigned size = unit == 'b' ? 1 : unit == 'h' ? 2 : unit == 'g' ? 8 : 4;
    if (fmt == 'c')
        size = 1;
    int per_line = size == 1 ? 8 : size == 2 ? 8 : size == 4 ? 4 : 2;
    if (fmt == 'f' && size < 4)
        size = 4;
    for (int i = 0; i < count; i++) {
        uint64_t a = addr + (uint64_t)i * size;
        if (i % per_line == 0)
            out(c, "%s0x%llx:", i ? "\n" : "", (unsigned long long)a);
        unsigned char buf[8] = {0};
        if (dbg_read_memory(c->d, space, a, buf, size, fo->lane)) {
            out(c, "\n");
            err(c, "Cannot access memory at address 0x%llx", (unsigned long long)a);
            return;
        }
        dbg_value e2;
        memset(&e2, 0, sizeof e2);
        uint64_t bits = 0;
        memcpy(&bits, buf, size);
        if (fmt == 'f') {
            e2.kind = DBG_V_FLOAT;
            if (size == 8) {
                memcpy(&e2.f, &bits, 8);
                e2.type = PTX_T_F64;
            } else {
                float f;
                uint32_t u = (uint32_t)bits;
                memcpy(&f, &u, 4);
                e2.f = f;
                e2.type = PTX_T_F32;
            }
        } else {
            e2.kind = DBG_V_UINT;
            e2.u = bits;
            e2.type = size == 1 ? PTX_T_U8 : size == 2 ? PTX_T_U16 : size == 4 ? PTX_T_U32 : PTX_T_U64;
        }
        char s[96];
        dbg_format_value(&e2, fmt == 'f' ? 0 : fmt, s, sizeof s);
        out(c, "\t%s", s);
    }
    out(c, "\n");
    last_fmt = fmt;
    last_unit = unit ? unit : last_unit;
}

/* ---- info ------------------------------------------------------------------- */

static const char *bp_kind_name(int kind)
{
    return kind == DBG_BP_BREAK ? "breakpoint" : kind == DBG_BP_WATCH ? "hw watchpoint"
           : kind == DBG_BP_RWATCH ? "read watchpoint" : "acc watchpoint";
}

static void info_breakpoints(dbg_cli *c)
{
    int n;
    dbg_bp **bps = dbg_bps(c->d, &n);
    unsigned on = dbg_breaks_on(c->d);
    if (!n && !on) {
        out(c, "No breakpoints or watchpoints.\n");
        return;
    }
    if (n)
        out(c, "Num     Type            Disp Enb What\n");
    for (int i = 0; i < n; i++) {
        dbg_bp *bp = bps[i];
        out(c, "%-7d %-15s %-4s %-3s %s%s%s\n", bp->number, bp_kind_name(bp->kind), bp->temporary ? "del" : "keep",
            bp->enabled ? "y" : "n", bp->kind == DBG_BP_BREAK ? bp->spec : bp->expr,
            bp->where[0] && bp->kind == DBG_BP_BREAK ? " at " : bp->kind == DBG_BP_BREAK ? " <PENDING>" : "",
            bp->kind == DBG_BP_BREAK ? bp->where : "");
        if (bp->cond)
            out(c, "\tstop only if %s\n", bp->cond);
        if (bp->hits)
            out(c, "\tbreakpoint already hit %llu time%s\n", (unsigned long long)bp->hits, bp->hits == 1 ? "" : "s");
    }
    static const char *names[] = {"fault", "race", "memcheck", "initcheck", "synccheck"};
    for (int i = 0; i < 5; i++)
        if (on & (1u << i))
            out(c, "break on %s\n", names[i]);
}

static void describe_warp_state(dbg_cli *c, vm_block *b, vm_warp *w, char *buf, size_t n)
{
    (void)c;
    if (w->state == VM_WARP_DONE)
        snprintf(buf, n, "exited");
    else if (w->state == VM_WARP_BLOCKED) {
        int id = w->blocked_bar;
        if (id == 0xfe || id == 0xfd || id == 0xff)
            snprintf(buf, n, "waiting at barrier.cluster");
        else
            snprintf(buf, n, "waiting at barrier %d (%u of %u warps arrived)", id, b->bars[id & 15].arrived_warps,
                     b->bars[id & 15].expected_warps ? b->bars[id & 15].expected_warps : b->nlive);
    } else {
        int waiting = 0;
        for (int gi = 0; gi < w->ngroups; gi++)
            if (w->groups[gi].state == VM_G_WAIT_SYNC)
                waiting = 1;
        snprintf(buf, n, "%s", waiting ? "ready (lanes waiting at a warp sync)" : "ready");
    }
}

static void info_cuda(dbg_cli *c, const char *what, int stopped)
{
    dbg *d = c->d;
    vm_launch *L = dbg_launch(d);
    dbg_focus *fo = dbg_focus_get(d);
    if (is(what, "kernels", 1)) {
        if (!L) {
            out(c, "No CUDA kernels.\n");
            return;
        }
        out(c, "  Kernel Function  GridDim      BlockDim     Invocation\n");
        out(c, "*      %d %-9s (%u,%u,%u) (%u,%u,%u) %s\n", dbg_kernel_id(d), L->kernel->name, L->grid[0], L->grid[1],
            L->grid[2], L->block[0], L->block[1], L->block[2], L->kernel->name);
        return;
    }
    if (!need_stopped(c, stopped) || !fo->b)
        return;
    if (is(what, "blocks", 1)) {
        vm_block **list;
        int nb = dbg_blocks(d, &list);
        out(c, "  BlockIdx   State    Warps (live/all)\n");
        for (int i = 0; i < nb; i++) {
            vm_block *b = list[i];
            if (!b->warps)
                continue;
            out(c, "%s (%u,%u,%u)  %-8s %u/%d\n", b == fo->b ? "*" : " ", b->ctaid[0], b->ctaid[1], b->ctaid[2],
                b->done ? "done" : "running", b->nlive, b->nwarps);
        }
        return;
    }
    if (is(what, "warps", 1)) {
        out(c, "  Wp Active Mask Valid Mask PC   Source                     State\n");
        for (int wi = 0; wi < fo->b->nwarps; wi++) {
            vm_warp *w = &fo->b->warps[wi];
            uint32_t live = w->valid & ~w->exited;
            int lane = live ? __builtin_ctz(live) : 0;
            dbg_where wh;
            char src[300] = "-", state[128];
            uint32_t active = 0;
            if (live && dbg_lane_where(d, fo->b, w, lane, 0, &wh) == 0) {
                dbg_src s;
                dbg_src_of(d, wh.fn, wh.pc, &s);
                if (s.file)
                    snprintf(src, sizeof src, "%s:%d", strrchr(s.file, '/') ? strrchr(s.file, '/') + 1 : s.file,
                             s.line);
                else
                    snprintf(src, sizeof src, "%s:%d", dbg_ptx_file(d), s.ptx_line);
                active = dbg_warp_active(d, fo->b, w, lane);
            } else {
                wh.pc = 0;
            }
            describe_warp_state(c, fo->b, w, state, sizeof state);
            out(c, "%s %2d 0x%08x  0x%08x %-4u %-26s %s\n", w == fo->w ? "*" : " ", wi, active, w->valid, wh.pc, src,
                state);
        }
        return;
    }
    if (is(what, "lanes", 1)) {
        if (!fo->w)
            return;
        out(c, "  Ln State     PC   ThreadIdx     Source\n");
        for (int l = 0; l < VM_WARP; l++) {
            vm_warp *w = fo->w;
            if (!(w->valid >> l & 1))
                continue;
            dbg_where wh;
            const char *state;
            char src[300] = "-";
            uint32_t pc = 0;
            if (w->exited >> l & 1) {
                state = "exited";
            } else if (dbg_lane_where(d, fo->b, w, l, 0, &wh) == 0) {
                uint32_t focus_active = dbg_warp_active(d, fo->b, w, fo->lane);
                state = (focus_active >> l & 1) ? "active" : "divergent";
                pc = wh.pc;
                dbg_src s;
                dbg_src_of(d, wh.fn, wh.pc, &s);
                if (s.file)
                    snprintf(src, sizeof src, "%s:%d", strrchr(s.file, '/') ? strrchr(s.file, '/') + 1 : s.file,
                             s.line);
                else
                    snprintf(src, sizeof src, "%s:%d", dbg_ptx_file(d), s.ptx_line);
            } else {
                state = "inactive";
            }
            out(c, "%s %2d %-9s %-4u (%u,%u,%u)%*s %s\n", l == fo->lane ? "*" : " ", l, state, pc, w->tid[0][l],
                w->tid[1][l], w->tid[2][l], 4, "", src);
        }
        return;
    }
    if (is(what, "barriers", 1)) {
        int any = 0;
        for (int id = 0; id < VM_BARRIERS; id++) {
            vm_barrier *bar = &fo->b->bars[id];
            int waiting = 0;
            for (int wi = 0; wi < fo->b->nwarps; wi++)
                if (fo->b->warps[wi].state == VM_WARP_BLOCKED && fo->b->warps[wi].blocked_bar == id)
                    waiting++;
            if (!bar->arrived_warps && !waiting)
                continue;
            any = 1;
            out(c, "barrier %d: %u warp%s arrived, waiting for %u (warps:", id, bar->arrived_warps,
                bar->arrived_warps == 1 ? "" : "s", bar->expected_warps ? bar->expected_warps : fo->b->nlive);
            for (int wi = 0; wi < fo->b->nwarps; wi++)
                if (fo->b->warps[wi].state == VM_WARP_BLOCKED && fo->b->warps[wi].blocked_bar == id)
                    out(c, " %d", wi);
            out(c, ")\n");
        }
        if (!any)
            out(c, "No warp of block (%u,%u,%u) waits at a barrier.\n", fo->b->ctaid[0], fo->b->ctaid[1],
                fo->b->ctaid[2]);
        return;
    }
    if (is(what, "mbarriers", 1)) {
        uint64_t offs[64];
        int n = dbg_mbarriers(d, fo->b, offs, 64);
        if (!n) {
            out(c, "No mbarrier was initialized in block (%u,%u,%u).\n", fo->b->ctaid[0], fo->b->ctaid[1],
                fo->b->ctaid[2]);
            return;
        }
        for (int i = 0; i < n; i++) {
            uint64_t v = 0;
            if (offs[i] + 8 > fo->b->shared_size)
                continue;
            memcpy(&v, fo->b->shared + offs[i], 8);
            uint64_t pending = vm_mbar_pending(v), expected = (v >> 20) & 0xfffff, phase = vm_mbar_phase(v);
            int64_t tx = vm_mbar_tx(v);
            out(c, "mbarrier at shared 0x%llx: phase %llu, %llu of %llu arrivals pending, transaction count %lld\n",
                (unsigned long long)offs[i], (unsigned long long)phase, (unsigned long long)pending,
                (unsigned long long)expected, (long long)tx);
        }
        return;
    }
    err(c, "Undefined info cuda command: \"%s\". Try kernels, blocks, warps, lanes, barriers, mbarriers.", what);
}

static void info_registers(dbg_cli *c, const char *args, int stopped)
{
    if (!need_stopped(c, stopped))
        return;
    dbg_focus *fo = dbg_focus_get(c->d);
    dbg_where wh;
    if (!fo->w || dbg_lane_where(c->d, fo->b, fo->w, fo->lane, fo->frame, &wh)) {
        err(c, "No registers: the focused lane is not running.");
        return;
    }
    const ptx_function *pf = wh.fn->ptx;
    char name[128];
    const char *p = args;
    int any_named = 0;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        int k = 0;
        while (*p && !isspace((unsigned char)*p) && k < 127)
            name[k++] = *p++;
        name[k] = 0;
        if (!k)
            break;
        any_named = 1;
        dbg_value v;
        char msg[256];
        if (dbg_eval(c->d, name, fo->lane, &v, msg, sizeof msg)) {
            err(c, "Invalid register `%s'", name);
            continue;
        }
        char hex[64], nat[96];
        dbg_format_value(&v, 'x', hex, sizeof hex);
        dbg_format_value(&v, 0, nat, sizeof nat);
        out(c, "%-14s %-18s %s\n", name, hex, nat);
    }
    if (any_named || !pf)
        return;
    for (int i = 0; i < pf->nregs; i++) {
        const ptx_var *r = pf->regs[i];
        if (r->type == PTX_T_PRED)
            continue;
        dbg_value v;
        char msg[256];
        if (dbg_eval(c->d, r->name, fo->lane, &v, msg, sizeof msg))
            continue;
        char hex[64], nat[96];
        dbg_format_value(&v, 'x', hex, sizeof hex);
        dbg_format_value(&v, 0, nat, sizeof nat);
        out(c, "%-14s %-18s %s\n", r->name, hex, nat);
    }
    for (int i = 0; i < pf->nregs; i++) {
        const ptx_var *r = pf->regs[i];
        if (r->type != PTX_T_PRED)
            continue;
        uint32_t mask = wh.frame->preds[wh.fn->reg_slots[i]] & (fo->w->valid & ~fo->w->exited);
        out(c, "%-14s %-18s lanes 0x%08x\n", r->name, (mask >> fo->lane & 1) ? "true" : "false", mask);
    }
}

/* Source variables of the focused frame (nvcc -G): its parameters
 * (params 1) or its locals, innermost block first. Returns 0 when the
 * module has no DWARF there. */
static int source_vars(dbg_cli *c, int params)
{
    const dwarf_var *vars[512];
    dbg_focus *fo = dbg_focus_get(c->d);
    if (!dbg_dwarf(c->d) || !fo->w)
        return 0;
    int n = dbg_visible_vars(c->d, vars, 512), shown = 0;
    if (!n)
        return 0;
    for (int i = 0; i < n && i < 512; i++) {
        if (vars[i]->is_param != params)
            continue;
        dbg_value v;
        char msg[256];
        shown++;
        if (dbg_eval(c->d, vars[i]->name, fo->lane, &v, msg, sizeof msg)) {
            out(c, "%s = <%s>\n", vars[i]->name, msg);
            continue;
        }
        out(c, "%s = ", vars[i]->name);
        show_value(c, &v, 0, fo->lane);
        out(c, "\n");
    }
    if (!shown)
        out(c, params ? "No arguments.\n" : "No locals.\n");
    return 1;
}

static void info_args(dbg_cli *c, int stopped)
{
    if (!need_stopped(c, stopped))
        return;
    if (source_vars(c, 1))
        return;
    vm_launch *L = dbg_launch(c->d);
    dbg_focus *fo = dbg_focus_get(c->d);
    const bc_function *k = L->kernel;
    if (!k->nparams)
        out(c, "No arguments.\n");
    for (int i = 0; i < k->nparams; i++) {
        dbg_value v;
        char msg[256];
        if (dbg_eval(c->d, k->params[i].name, fo->lane, &v, msg, sizeof msg)) {
            out(c, "%s = <%s>\n", k->params[i].name, msg);
            continue;
        }
        out(c, "%s = ", k->params[i].name);
        show_value(c, &v, v.type == PTX_T_U64 || v.type == PTX_T_B64 ? 'x' : 0, fo->lane);
        out(c, "\n");
    }
}

static void backtrace(dbg_cli *c, int stopped)
{
    if (!need_stopped(c, stopped))
        return;
    dbg_focus *fo = dbg_focus_get(c->d);
    if (!fo->w) {
        err(c, "No stack.");
        return;
    }
    dbg_where fr[64];
    int n = dbg_backtrace(c->d, fo->b, fo->w, fo->lane, fr, 64);
    for (int i = 0; i < n; i++) {
        char where[600];
        dbg_describe_where(c->d, &fr[i], where, sizeof where);
        out(c, "%s#%-2d %s\n", i == fo->frame ? "*" : " ", i, where);
    }
}

/* ---- history queries ------------------------------------------------------- */

static int query_target(dbg_cli *c, const char *args, dbg_query *q)
{
    dbg_focus *fo = dbg_focus_get(c->d);
    dbg_value v;
    char msg[256];
    if (dbg_eval(c->d, args, fo->w ? fo->lane : 0, &v, msg, sizeof msg)) {
        err(c, "%s", msg);
        return -1;
    }
    memset(q, 0, sizeof *q);
    int space;
    uint64_t addr;
    unsigned size;
    if (dbg_memory_place(&v, &space, &addr, &size)) {
        err(c, "only global and shared memory keep a history");
        return -1;
    }
    q->space = space;
    q->addr = addr;
    q->size = size;
    q->block_id = fo->b ? fo->b->linear_id : 0;
    return 0;
}

/* Whether the run can go back to event `at`: by running the target again
 * from its start (kemu debug run/call), or else the current launch again
 * (kemu debug exec/python: see dbg_launch_replay_refusal). */
static int can_replay(dbg_cli *c, uint64_t at)
{
    const char *broken = dbg_history_broken(c->d);
    if (broken) {
        err(c, "Target cannot go back: %s.", broken);
        return 0;
    }
    if (!c->cfg.can_restart) {
        const char *why = dbg_launch_replay_refusal(c->d, at);
        if (why) {
            err(c, "Target cannot go back: %s (%s).", why, c->cfg.target_name);
            return 0;
        }
    }
    return 1;
}

/* ---- the command table ---------------------------------------------------------- */

static void help(dbg_cli *c)
{
    out(c,
        "Running:    run (r), start, continue (c) [N], kill (k), quit (q)\n"
        "Stepping:   stepi (si) [N], step (s), next (n), finish (fin)\n"
        "Going back: reverse-stepi (rsi), reverse-continue (rc) (the run is replayed to an earlier point)\n"
        "Breaking:   break (b) LOCATION [if COND], tbreak LOCATION, break on fault|race|memcheck|initcheck|synccheck,\n"
        "            watch|rwatch|awatch EXPR, delete (d) [N...], disable [N...], enable [N...], condition N [COND]\n"
        "            LOCATION: KERNEL or FUNCTION, FILE.cu:LINE, FILE.ptx:LINE, LINE, *PC, *FUNCTION+PC\n"
        "Focus:      cuda block X,Y,Z [thread X,Y,Z], cuda thread X,Y,Z, cuda warp N [lane M], cuda lane M,\n"
        "            cuda kernel N, cuda (show the focus)\n"
        "Looking:    print (p)[/FMT] EXPR[@lanes], x/NFU [@space] ADDR, info registers (i r) [REG...],\n"
        "            info args, info locals, backtrace (bt), frame (f) N, up, down, list (l) [LINE], info line,\n"
        "            info breakpoints (i b), info cuda kernels|blocks|warps|lanes|barriers|mbarriers\n"
        "History:    info last-writer EXPR, info history EXPR (replays the run up to now)\n"
        "EXPR:       %%r5, %%p1, threadIdx.x, blockIdx.y, blockDim.x, gridDim.x, $lane, $warp, $pc, kernel\n"
        "            parameters and PTX variables by name, *(float*)ADDR, ((@shared int*)0)[3], C operators\n");
}

static int cmd_break(dbg_cli *c, const char *args, int temporary)
{
    char spec[1024];
    snprintf(spec, sizeof spec, "%s", args);
    char *s = trim(spec);
    if (!strncmp(s, "on ", 3) || !strcmp(s, "on")) {
        char *what = trim(s + 2);
        static const struct { const char *name; unsigned bit; } on[] = {
            {"fault", DBG_ON_FAULT}, {"exception", DBG_ON_FAULT}, {"race", DBG_ON_RACE},
            {"racecheck", DBG_ON_RACE}, {"memcheck", DBG_ON_MEMCHECK}, {"initcheck", DBG_ON_INITCHECK},
            {"synccheck", DBG_ON_SYNCCHECK},
        };
        for (size_t i = 0; i < sizeof on / sizeof *on; i++)
            if (!strcmp(what, on[i].name)) {
                dbg_break_on(c->d, on[i].bit, 1);
                out(c, "Will stop at the first %s%s.\n", on[i].bit == DBG_ON_FAULT ? "kernel fault" : what,
                    on[i].bit == DBG_ON_FAULT ? "" : on[i].bit == DBG_ON_RACE ? " finding (run with --tool racecheck)"
                    : " finding (run with that --tool)");
                return 0;
            }
        err(c, "break on: want fault, race, memcheck, initcheck or synccheck");
        return -1;
    }
    char *cond = NULL;
    char *ifp = strstr(s, " if ");
    if (ifp) {
        *ifp = 0;
        cond = trim(ifp + 4);
    } else if (!strncmp(s, "if ", 3)) {
        cond = trim(s + 3);
        s[0] = 0;
    }
    s = trim(s);
    char msg[300];
    int n = dbg_break(c->d, s, cond, temporary, msg, sizeof msg);
    if (n < 0) {
        err(c, "%s", msg);
        return -1;
    }
    dbg_bp *bp = dbg_bp_find(c->d, n);
    if (bp->where[0])
        out(c, "%s %d at %s\n", temporary ? "Temporary breakpoint" : "Breakpoint", n, bp->where);
    else
        out(c, "%s %d (%s) pending.\n", temporary ? "Temporary breakpoint" : "Breakpoint", n, s);
    return 0;
}

static void for_numbers(dbg_cli *c, const char *args, int (*fn)(dbg *, int, int), int arg, const char *what)
{
    const char *p = args;
    int any = 0;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p) {
            err(c, "Convenience variable must have integer value.\nArgs must be numbers or '$' variables.");
            return;
        }
        p = end;
        any = 1;
        if (fn(c->d, (int)n, arg))
            err(c, "No %s number %ld.", what, n);
    }
    if (!any) {
        int n;
        dbg_bp **bps = dbg_bps(c->d, &n);
        int numbers[1024];
        int k = 0;
        for (int i = 0; i < n && k < 1024; i++)
            numbers[k++] = bps[i]->number;
        for (int i = 0; i < k; i++)
            fn(c->d, numbers[i], arg);
    }
}

static int do_delete(dbg *d, int n, int arg)
{
    (void)arg;
    return dbg_bp_delete(d, n);
}

static int do_enable(dbg *d, int n, int arg)
{
    return dbg_bp_enable(d, n, arg);
}

static int cmd_cuda(dbg_cli *c, char *args, int stopped)
{
    dbg *d = c->d;
    dbg_focus *fo = dbg_focus_get(d);
    char *s = trim(args);
    if (!*s) {
        if (!need_stopped(c, stopped) || !fo->w)
            return 0;
        char who[128];
        dbg_describe_lane(fo->b, fo->w, fo->lane, who, sizeof who);
        out(c, "kernel %d, %s, warp %d, lane %d\n", dbg_kernel_id(d), who, fo->w->index, fo->lane);
        return 0;
    }
    unsigned block[3], thread[3];
    int has_block = 0, has_thread = 0, warp = -1, lane = -1, kernel = -1;
    while (*s) {
        char word[32];
        int k = 0;
        while (*s && !isspace((unsigned char)*s) && k < 31)
            word[k++] = *s++;
        word[k] = 0;
        s = trim(s);
        /* the value runs to the next keyword */
        char val[128];
        k = 0;
        while (*s && k < 127) {
            if (isalpha((unsigned char)*s))
                break;
            val[k++] = *s++;
        }
        val[k] = 0;
        s = trim(s);
        if (!strcmp(word, "block")) {
            if (parse_triple(val, block)) {
                err(c, "cuda block: want X,Y,Z");
                return -1;
            }
            has_block = 1;
        } else if (!strcmp(word, "thread")) {
            if (parse_triple(val, thread)) {
                err(c, "cuda thread: want X,Y,Z");
                return -1;
            }
            has_thread = 1;
        } else if (!strcmp(word, "warp")) {
            warp = atoi(val);
        } else if (!strcmp(word, "lane")) {
            lane = atoi(val);
        } else if (!strcmp(word, "kernel")) {
            kernel = atoi(val);
        } else if (!strcmp(word, "device") || !strcmp(word, "sm") || !strcmp(word, "grid")) {
            /* one device, one grid at a time: accepted when it names them */
            if (atoi(val) != 0 && strcmp(word, "grid")) {
                err(c, "Request cannot be satisfied. kemu emulates one device. CUDA focus unchanged.");
                return -1;
            }
        } else {
            err(c, "Unrecognized argument(s): %s", word);
            return -1;
        }
    }
    if (!need_stopped(c, stopped))
        return -1;
    if (kernel >= 0 && kernel != dbg_kernel_id(d)) {
        err(c, "Request cannot be satisfied. Kernel %d is not running (kernel %d is). CUDA focus unchanged.", kernel,
            dbg_kernel_id(d));
        return -1;
    }
    char msg[300];
    if (dbg_set_focus(d, has_block ? block : NULL, has_thread ? thread : NULL, warp, lane, msg, sizeof msg)) {
        err(c, "%s", msg);
        return -1;
    }
    print_focus_switch(c, 1);
    dbg_where wh;
    if (dbg_lane_where(d, fo->b, fo->w, fo->lane, 0, &wh) == 0) {
        char where[600];
        dbg_describe_where(d, &wh, where, sizeof where);
        out(c, "%s\n", where);
        print_line(c, &wh);
    } else {
        out(c, "(this lane has exited)\n");
    }
    return 0;
}

static void cmd_list(dbg_cli *c, const char *args)
{
    const char *file = c->list_file;
    int center = c->list_line;
    if (*args) {
        const char *colon = strrchr(args, ':');
        center = atoi(colon ? colon + 1 : args);
        center = center > 5 ? center : 6;
    } else if (center && !c->list_fresh) {
        center += 10; /* gdb: the next ten lines */
    }
    c->list_fresh = 0;
    if (!center) {
        err(c, "No default source: the kernel has not stopped yet.");
        return;
    }
    int first = center - 5 < 1 ? 1 : center - 5;
    for (int l = first; l < first + 10; l++) {
        const char *text = file ? source_line(c, file, l) : NULL;
        if (text) {
            out(c, "%d\t%s\n", l, text);
        } else if (!file) {
            char ptx[512];
            dbg_ptx_line(c->d, l, ptx, sizeof ptx);
            out(c, "%d\t%s\n", l, ptx);
        }
    }
    c->list_line = first + 5;
}

static int run_command(dbg_cli *c, char *line, int stopped)
{
    char *s = trim(line);
    if (!*s || s[0] == '#')
        return CMD_STAY;
    char word[64];
    int k = 0;
    while (*s && !isspace((unsigned char)*s) && *s != '/' && k < 63)
        word[k++] = *s++;
    word[k] = 0;
    char *args = *s == '/' ? s : trim(s);
    dbg *d = c->d;
    dbg_focus *fo = dbg_focus_get(d);

    if (is(word, "run", 1) || is(word, "start", 5)) {
        int start = word[0] == 's';
        if (!c->cfg.can_restart && (stopped || c->running)) {
            err(c, "The program being debugged has been started already and cannot be restarted.");
            return CMD_STAY;
        }
        if (start)
            dbg_restart_at(d, 1, NULL);
        else
            dbg_restart_at(d, 0, NULL);
        if (stopped)
            return DBG_RESUME_RESTART;
        return DBG_RESUME_RESTART;
    }
    if (is(word, "continue", 1) || !strcmp(word, "fg")) {
        if (!stopped) {
            if (!c->cfg.can_restart) /* an exec target waits for its first launch */
                return DBG_RESUME_CONTINUE;
            err(c, "The program is not being run.");
            return CMD_STAY;
        }
        int n = atoi(args);
        if (n > 1 && fo->w) {
            /* ignore the current breakpoint n - 1 more times */
            const dbg_stop *st = dbg_last_stop(d);
            dbg_bp *bp = st->bp ? dbg_bp_find(d, st->bp) : NULL;
            if (bp)
                out(c, "Will ignore next %d crossings of breakpoint %d.  Continuing.\n", n - 1, bp->number);
            (void)bp;
        }
        return DBG_RESUME_CONTINUE;
    }
    if (is(word, "stepi", 5) || !strcmp(word, "si") || is(word, "nexti", 5) || !strcmp(word, "ni")) {
        if (!need_stopped(c, stopped))
            return CMD_STAY;
        long n = *args ? strtol(args, NULL, 0) : 1;
        dbg_set_step_count(d, n > 0 ? (uint64_t)n : 1);
        return DBG_RESUME_STEPI;
    }
    if (is(word, "step", 1)) {
        if (!need_stopped(c, stopped))
            return CMD_STAY;
        return DBG_RESUME_STEP;
    }
    if (is(word, "next", 1)) {
        if (!need_stopped(c, stopped))
            return CMD_STAY;
        return DBG_RESUME_NEXT;
    }
    if (is(word, "finish", 3)) {
        if (!need_stopped(c, stopped))
            return CMD_STAY;
        dbg_where wh;
        if (!fo->w || dbg_lane_where(d, fo->b, fo->w, fo->lane, 0, &wh) || !wh.frame->parent) {
            err(c, "\"finish\" not meaningful in the outermost frame.");
            return CMD_STAY;
        }
        char where[600];
        dbg_describe_where(d, &wh, where, sizeof where);
        out(c, "Run till exit from #0  %s\n", where);
        return DBG_RESUME_FINISH;
    }
    if (is(word, "kill", 1)) {
        if (!need_stopped(c, stopped))
            return CMD_STAY;
        return DBG_RESUME_KILL;
    }
    if (is(word, "quit", 1) || !strcmp(word, "exit")) {
        c->quit = 1;
        return stopped ? DBG_RESUME_KILL : CMD_STAY;
    }
    if (is(word, "reverse-stepi", 9) || !strcmp(word, "rsi")) {
        if (!need_stopped(c, stopped) || !fo->w)
            return CMD_STAY;
        uint64_t prev = dbg_previous_event_of_focus(d);
        if (!can_replay(c, prev ? prev : dbg_event(d)))
            return CMD_STAY;
        if (prev) {
            dbg_restart_at(d, prev, NULL);
        } else {
            dbg_query q = {0};
            q.kind = 3;
            q.block_id = fo->b->linear_id;
            q.warp = fo->w->index;
            dbg_restart_at(d, dbg_event(d), &q);
        }
        c->pending = PEND_REVERSE;
        return DBG_RESUME_RESTART;
    }
    if (is(word, "reverse-continue", 9) || !strcmp(word, "rc")) {
        if (!need_stopped(c, stopped) || !can_replay(c, dbg_event(d)))
            return CMD_STAY;
        dbg_query q = {0};
        q.kind = 4;
        dbg_restart_at(d, dbg_event(d), &q);
        c->pending = PEND_REVERSE;
        return DBG_RESUME_RESTART;
    }
    if (is(word, "break", 1) || !strcmp(word, "br")) {
        cmd_break(c, args, 0);
        return CMD_STAY;
    }
    if (is(word, "tbreak", 2)) {
        cmd_break(c, args, 1);
        return CMD_STAY;
    }
    if (!strcmp(word, "watch") || !strcmp(word, "rwatch") || !strcmp(word, "awatch")) {
        int kind = word[0] == 'w' ? DBG_BP_WATCH : word[0] == 'r' ? DBG_BP_RWATCH : DBG_BP_AWATCH;
        char msg[300];
        if (!dbg_launch(d)) {
            err(c, "Cannot watch before the kernel runs: set a breakpoint, run, then watch.");
            return CMD_STAY;
        }
        int n = dbg_watch(d, kind, args, msg, sizeof msg);
        if (n < 0) {
            err(c, "%s", msg);
            return CMD_STAY;
        }
        dbg_bp *bp = dbg_bp_find(d, n);
        out(c, "%s %d: %s (%s)\n", kind == DBG_BP_WATCH ? "Hardware watchpoint" : kind == DBG_BP_RWATCH
            ? "Hardware read watchpoint" : "Hardware access (read/write) watchpoint", n, args, bp->where);
        return CMD_STAY;
    }
    if (is(word, "delete", 1)) {
        char *a = args;
        if (!strncmp(a, "breakpoints", 11))
            a = trim(a + 11);
        for_numbers(c, a, do_delete, 0, "breakpoint");
        return CMD_STAY;
    }
    if (is(word, "disable", 3) || is(word, "enable", 2)) {
        for_numbers(c, args, do_enable, word[0] == 'e', "breakpoint");
        return CMD_STAY;
    }
    if (is(word, "condition", 4)) {
        char *end;
        long n = strtol(args, &end, 10);
        if (end == args) {
            err(c, "Argument required (breakpoint number).");
            return CMD_STAY;
        }
        char *cond = trim(end);
        if (dbg_bp_condition(d, (int)n, cond))
            err(c, "No breakpoint number %ld.", n);
        else if (!*cond)
            out(c, "Breakpoint %ld now unconditional.\n", n);
        return CMD_STAY;
    }
    if (is(word, "print", 1) || !strcmp(word, "inspect") || !strcmp(word, "output")) {
        cmd_print(c, args, stopped);
        return CMD_STAY;
    }
    if (!strcmp(word, "x")) {
        cmd_x(c, args, stopped);
        return CMD_STAY;
    }
    if (is(word, "backtrace", 2) || !strcmp(word, "bt") || !strcmp(word, "where")) {
        backtrace(c, stopped);
        return CMD_STAY;
    }
    if (is(word, "frame", 1) || !strcmp(word, "up") || !strcmp(word, "down")) {
        if (!need_stopped(c, stopped) || !fo->w)
            return CMD_STAY;
        int level = fo->frame;
        if (!strcmp(word, "up"))
            level += *args ? atoi(args) : 1;
        else if (!strcmp(word, "down"))
            level -= *args ? atoi(args) : 1;
        else if (*args)
            level = atoi(args);
        dbg_where wh;
        if (level < 0 || dbg_lane_where(d, fo->b, fo->w, fo->lane, level, &wh)) {
            err(c, level < 0 ? "Bottom (innermost) frame selected; you cannot go down."
                             : "Initial frame selected; you cannot go up.");
            return CMD_STAY;
        }
        fo->frame = level;
        char where[600];
        dbg_describe_where(d, &wh, where, sizeof where);
        out(c, "#%-2d %s\n", level, where);
        print_line(c, &wh);
        return CMD_STAY;
    }
    if (is(word, "list", 1)) {
        cmd_list(c, args);
        return CMD_STAY;
    }
    if (!strcmp(word, "cuda")) {
        cmd_cuda(c, args, stopped);
        return CMD_STAY;
    }
    if (is(word, "info", 1)) {
        char sub[64];
        k = 0;
        char *a = args;
        while (*a && !isspace((unsigned char)*a) && k < 63)
            sub[k++] = *a++;
        sub[k] = 0;
        a = trim(a);
        if (is(sub, "breakpoints", 1) || is(sub, "watchpoints", 3))
            info_breakpoints(c);
        else if (is(sub, "registers", 1) || is(sub, "all-registers", 2))
            info_registers(c, a, stopped);
        else if (is(sub, "args", 2))
            info_args(c, stopped);
        else if (is(sub, "locals", 2)) {
            if (need_stopped(c, stopped) && !source_vars(c, 0))
                out(c, "No symbol table info available (registers: info registers; compile with nvcc -G for "
                       "source variables).\n");
        } else if (is(sub, "frame", 1)) {
            backtrace(c, stopped);
        } else if (!strcmp(sub, "cuda"))
            info_cuda(c, a, stopped);
        else if (is(sub, "line", 2)) {
            dbg_where wh;
            if (need_stopped(c, stopped) && fo->w && !dbg_lane_where(d, fo->b, fo->w, fo->lane, fo->frame, &wh)) {
                char where[600];
                dbg_describe_where(d, &wh, where, sizeof where);
                out(c, "pc %u of %s\n", wh.pc, where);
            }
        } else if (!strcmp(sub, "last-writer") || !strcmp(sub, "history")) {
            dbg_query q;
            if (!need_stopped(c, stopped) || !can_replay(c, dbg_event(d)) || query_target(c, a, &q))
                return CMD_STAY;
            q.kind = sub[0] == 'l' ? 1 : 2;
            dbg_restart_at(d, dbg_event(d), &q);
            c->pending = PEND_QUERY;
            return DBG_RESUME_RESTART;
        } else {
            err(c, "Undefined info command: \"%s\".  Try \"help\".", sub);
        }
        return CMD_STAY;
    }
    if (is(word, "help", 1)) {
        help(c);
        return CMD_STAY;
    }
    if (!strcmp(word, "set") || !strcmp(word, "show") || !strcmp(word, "echo") || !strcmp(word, "shell")) {
        if (!strcmp(word, "echo")) {
            /* gdb's echo: backslash escapes, no newline of its own */
            for (const char *p = args; *p; p++) {
                if (*p == '\\' && p[1] == 'n') {
                    out(c, "\n");
                    p++;
                } else if (*p == '\\' && p[1]) {
                    out(c, "%c", p[1]);
                    p++;
                } else {
                    out(c, "%c", *p);
                }
            }
            return CMD_STAY;
        }
        if (!strncmp(args, "scheduler-locking", 17)) {
            const char *v = args + 17;
            while (*v == ' ')
                v++;
            static const char *names[] = {"off", "on", "step"};
            if (!strcmp(word, "show") || !*v) {
                out(c, "Mode for locking scheduler during execution is \"%s\".\n", names[dbg_scheduler_locking(c->d)]);
                return CMD_STAY;
            }
            for (int i = 0; i < 3; i++)
                if (!strcmp(v, names[i])) {
                    dbg_set_scheduler_locking(c->d, i);
                    return CMD_STAY;
                }
            err(c, "Undefined item: \"%s\" (want off, on or step).", v);
            return CMD_STAY;
        }
        if (!strcmp(word, "set")) {
            /* set var[iable] LHS = RHS, or set LHS = RHS (gdb: an expression
             * that is not one of its settings) */
            const char *e = args;
            int explicit_var = 0;
            if (!strncmp(e, "variable", 8) && (e[8] == ' ' || e[8] == '\t' || !e[8])) {
                e += 8;
                explicit_var = 1;
            } else if (!strncmp(e, "var", 3) && (e[3] == ' ' || e[3] == '\t' || !e[3])) {
                e += 3;
                explicit_var = 1;
            }
            while (*e == ' ' || *e == '\t')
                e++;
            if (explicit_var || dbg_assignment_at(e) > 0) {
                set_variable(c, e, stopped);
                return CMD_STAY;
            }
        }
        /* settings gdb scripts carry (pagination, confirm, width...) do nothing here */
        return CMD_STAY;
    }
    err(c, "Undefined command: \"%s\".  Try \"help\".", word);
    return CMD_STAY;
}

/* ---- a debugger or tracer in a program's own process ----------------------------

 * `kemu debug exec` and `kemu debug python` run the program with
 * KEMU_DEBUG (1, or batch) and KEMU_DEBUG_COMMANDS (lines "xFILE" and
 * "eCOMMAND"); `kemu exec --trace=FILE` with KEMU_TRACE_FILE and
 * KEMU_TRACE_BLOCK/WARP/LINES. The first launch starts them. */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static dbg_cli *env_cli;
static dbg *env_tracer;
static FILE *env_tty;
static int env_ended;

char *dbg_read_line(void *ctx, const char *prompt)
{
    FILE *in = ctx;
    fputs(prompt, stdout);
    fflush(stdout);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, in);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    return line;
}

static int env_dap; /* a DAP client attached (KEMU_DEBUG=dap:...) */

static void env_dap_exit(int status, void *arg)
{
    (void)arg;
    dbg_dap_attached_ended(status);
}

static void env_start(void)
{
    const char *v;
    if (!dbg_active && (v = getenv("KEMU_DEBUG")) && !strncmp(v, "dap:", 4)) {
        char msg[300];
        int r = dbg_dap_attach_server(v + 4, msg, sizeof msg);
        if (r < 0)
            fprintf(stderr, "kemu: the debugger cannot start: %s\n", msg);
        if (r == 0) {
            env_dap = 1;
            on_exit(env_dap_exit, NULL);
        }
    } else if (!dbg_active && (v = getenv("KEMU_DEBUG")) && *v && strcmp(v, "0")) {
        int batch = !strcmp(v, "batch");
        /* the program keeps its stdin: the prompt reads the terminal */
        if (!batch)
            env_tty = fopen("/dev/tty", "r");
        const char *name = getenv("KEMU_DEBUG_TARGET");
        dbg_cli_config cfg = {stdout, env_tty ? dbg_read_line : NULL, env_tty, batch || !env_tty,
                              name && *name ? name : "kemu exec", 0};
        env_cli = dbg_cli_create(&cfg);
        if (env_cli) {
            const char *list = getenv("KEMU_DEBUG_COMMANDS");
            while (list && *list) {
                const char *end = strchr(list, '\n');
                size_t n = end ? (size_t)(end - list) : strlen(list);
                char *item = malloc(n + 1);
                if (item) {
                    memcpy(item, list, n);
                    item[n] = 0;
                    if (item[0] == 'e')
                        dbg_cli_add_command(env_cli, item + 1);
                    else if (item[0] == 'x')
                        dbg_cli_add_script(env_cli, item + 1);
                    free(item);
                }
                list = end ? end + 1 : NULL;
            }
            dbg_active = dbg_cli_debugger(env_cli);
            /* the program cannot be run again: going back replays the current launch */
            dbg_set_launch_replay(dbg_active, 1);
            /* the prompt before the first kernel: breakpoints, then run */
            if (dbg_cli_idle(env_cli) != DBG_CLI_RUN) {
                fflush(NULL);
                _exit(0);
            }
            dbg_run_begin(dbg_active);
        }
    }
    if ((v = getenv("KEMU_TRACE_FILE")) && *v) {
        dbg_trace_filter f;
        memset(&f, 0, sizeof f);
        f.warp = -1;
        char msg[600];
        static const char *names[3][2] = {{"KEMU_TRACE_BLOCK", "block"}, {"KEMU_TRACE_WARP", "warp"},
                                          {"KEMU_TRACE_LINES", "lines"}};
        for (int i = 0; i < 3; i++) {
            const char *t = getenv(names[i][0]);
            if (t && *t && dbg_trace_filter_parse(names[i][1], t, &f, msg, sizeof msg))
                fprintf(stderr, "kemu: %s\n", msg);
        }
        if (dbg_trace_start(v, &f, &env_tracer, msg, sizeof msg))
            fprintf(stderr, "kemu: %s\n", msg);
    }
}

void dbg_environment_start(void)
{
    pthread_once(&env_once, env_start);
}

void dbg_environment_after_launch(void)
{
    /* the debugger killed the program (kill, quit, the end of a -batch script) */
    if (env_cli && dbg_active == dbg_cli_debugger(env_cli) && dbg_run_killed(dbg_active)) {
        if (!dbg_cli_quitting(env_cli))
            dbg_cli_target_ended(env_cli, -1);
        fflush(NULL);
        _exit(137);
    }
    /* the attached editor terminated the program */
    if (env_dap && dbg_active && dbg_run_killed(dbg_active)) {
        dbg_dap_attached_ended(137);
        fflush(NULL);
        _exit(137);
    }
}

/* After the program's own exit work (a CUDA runtime's checker report). */
__attribute__((destructor)) static void env_end(void)
{
    if (env_ended)
        return;
    env_ended = 1;
    if (env_cli) {
        fflush(stdout);
        dbg_cli_target_ended(env_cli, 0);
    }
    if (env_tracer)
        dbg_trace_stop(env_tracer);
    fflush(stdout);
}
