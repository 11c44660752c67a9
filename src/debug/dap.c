/* `kemu dap`: the debugger core (src/debug/) behind the Debug Adapter
 * Protocol, over stdin/stdout, for VS Code, Neovim's nvim-dap and Emacs'
 * dap-mode. The launch request names the target as a `kemu` command line
 * ({"command": "run", "args": ["k.ptx", "--block", "64", "--", ...]});
 * each warp of the resident blocks is a DAP thread ("block (1,0,0) warp
 * 2"), its lanes' registers are variables, and stops at breakpoints,
 * steps, faults and checker findings are `stopped` events. The target's
 * own stdout and stderr come to the editor as `output` events (the
 * protocol owns stdout). */
#include "config.h"
#include "debug/dap.h"
#include "debug/debug.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct dap_msg {
    json_t *m;
    struct dap_msg *next;
} dap_msg;

typedef struct dap {
    int in_fd;
    char rbuf[65536];
    size_t rpos, rlen;
    FILE *out;
    int seq;
    /* a reader thread takes messages off stdin while the kernel runs, so
     * that `pause` can interrupt it; the rest wait in this queue */
    pthread_t reader;
    pthread_mutex_t lock;     /* the queue, and writes to out */
    pthread_cond_t more;
    dap_msg *head, *tail;
    int eof;
    volatile int target_stopped; /* in dap_stopped: a pause has nothing to interrupt */
    dbg *d;
    json_t *launch;           /* the launch request's arguments */
    int configured;
    int quit;
    int running;
    int step_back;            /* the next stop ends a step back */
    int out_fd[2];            /* the target's stdout and stderr: temporary files */
    FILE *cap[2];
    long sent[2];
    /* breakpoints by source path, to replace them as setBreakpoints does */
    struct { char *path; int *numbers; int n; } *sources;
    int nsources;
    int *fn_bps;
    int nfn_bps;
    /* launch: the front door runs the launch request's target; attach:
     * the debugger is inside a running program (kemu exec, Python) */
    dbg_dap_runner run;
    void *run_ctx;
    int attach;
    int attached;             /* an attach request came */
    int kill_pending;         /* terminate came while the program ran: kill at the next stop */
} dap;

/* ---- the wire ---------------------------------------------------------------------- */

static void send_json(dap *p, json_t *msg)
{
    pthread_mutex_lock(&p->lock);
    json_object_set_new(msg, "seq", json_integer(++p->seq));
    pthread_mutex_unlock(&p->lock);
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text)
        return;
    pthread_mutex_lock(&p->lock);
    fprintf(p->out, "Content-Length: %zu\r\n\r\n%s", strlen(text), text);
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
    free(text);
}

static void send_event(dap *p, const char *event, json_t *body)
{
    json_t *m = json_object();
    json_object_set_new(m, "type", json_string("event"));
    json_object_set_new(m, "event", json_string(event));
    if (body)
        json_object_set_new(m, "body", body);
    send_json(p, m);
}

static void respond(dap *p, json_t *req, int success, const char *message, json_t *body)
{
    json_t *m = json_object();
    json_object_set_new(m, "type", json_string("response"));
    json_object_set(m, "request_seq", json_object_get(req, "seq"));
    json_object_set(m, "command", json_object_get(req, "command"));
    json_object_set_new(m, "success", json_boolean(success));
    if (message)
        json_object_set_new(m, "message", json_string(message));
    json_object_set_new(m, "body", body ? body : json_object());
    send_json(p, m);
}

/* The next byte of the wire (fd 0, read directly: stdio's stdin lock
 * would be held by a reader blocked in it when the process exits), or -1
 * at its end. */
static int wire_byte(dap *p)
{
    if (p->rpos == p->rlen) {
        ssize_t n;
        do
            n = read(p->in_fd, p->rbuf, sizeof p->rbuf);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
            return -1;
        p->rlen = (size_t)n;
        p->rpos = 0;
    }
    return (unsigned char)p->rbuf[p->rpos++];
}

/* The next message from the wire, or NULL at the end of input or on a
 * malformed frame (the reader thread's). */
static json_t *read_wire(dap *p)
{
    char line[256];
    size_t length = 0;
    for (;;) {
        size_t k = 0;
        int ch;
        while ((ch = wire_byte(p)) >= 0 && ch != '\n')
            if (k < sizeof line - 1)
                line[k++] = (char)ch;
        if (ch < 0)
            return NULL;
        line[k] = 0;
        if (k && line[k - 1] == '\r')
            line[--k] = 0;
        if (!k)
            break;
        if (!strncasecmp(line, "Content-Length:", 15))
            length = strtoul(line + 15, NULL, 10);
    }
    if (!length || length > (64u << 20))
        return NULL;
    char *buf = malloc(length);
    if (!buf)
        return NULL;
    for (size_t k = 0; k < length; k++) {
        int ch = wire_byte(p);
        if (ch < 0) {
            free(buf);
            return NULL;
        }
        buf[k] = (char)ch;
    }
    json_error_t e;
    json_t *m = json_loadb(buf, length, 0, &e);
    free(buf);
    return m;
}

static void respond(dap *p, json_t *req, int success, const char *message, json_t *body);

/* The reader thread: answers `pause` at once (interrupting a running
 * kernel as Ctrl-C does at the prompt) and queues everything else. */
static void *reader_main(void *arg)
{
    dap *p = arg;
    for (;;) {
        json_t *m = read_wire(p);
        const char *cmd = m ? json_string_value(json_object_get(m, "command")) : NULL;
        if (cmd && !strcmp(cmd, "pause")) {
            if (!p->target_stopped)
                dbg_interrupt_requested = 1;
            respond(p, m, 1, NULL, NULL);
            json_decref(m);
            continue;
        }
        dap_msg *e = m ? calloc(1, sizeof *e) : NULL;
        pthread_mutex_lock(&p->lock);
        if (e) {
            e->m = m;
            if (p->tail)
                p->tail->next = e;
            else
                p->head = e;
            p->tail = e;
        } else {
            json_decref(m);
            p->eof = 1;
        }
        pthread_cond_signal(&p->more);
        pthread_mutex_unlock(&p->lock);
        if (!e)
            return NULL;
    }
}

/* The next request, or NULL at the end of input. */
static json_t *read_message(dap *p)
{
    pthread_mutex_lock(&p->lock);
    while (!p->head && !p->eof)
        pthread_cond_wait(&p->more, &p->lock);
    json_t *m = NULL;
    dap_msg *e = p->head;
    if (e) {
        p->head = e->next;
        if (!p->head)
            p->tail = NULL;
        m = e->m;
        free(e);
    }
    pthread_mutex_unlock(&p->lock);
    return m;
}

/* Sends what the target wrote since the last call as output events. */
static void flush_output(dap *p)
{
    static const char *category[2] = {"stdout", "stderr"};
    fflush(stdout);
    fflush(stderr);
    for (int k = 0; k < 2; k++) {
        if (!p->cap[k])
            continue;
        long end = lseek(p->out_fd[k], 0, SEEK_END);
        if (end <= p->sent[k])
            continue;
        size_t n = (size_t)(end - p->sent[k]);
        char *buf = malloc(n + 1);
        if (!buf)
            continue;
        if (pread(p->out_fd[k], buf, n, p->sent[k]) == (ssize_t)n) {
            buf[n] = 0;
            json_t *b = json_object();
            json_object_set_new(b, "category", json_string(category[k]));
            json_object_set_new(b, "output", json_stringn(buf, n));
            send_event(p, "output", b);
            p->sent[k] = end;
        }
        free(buf);
    }
}

/* ---- threads, frames, variables ------------------------------------------------------ */

static int64_t thread_id(const vm_block *b, const vm_warp *w)
{
    return 1 + (int64_t)b->linear_id * 32 + w->index;
}

/* Focuses the warp a DAP thread id names (its focused lane, else its
 * first live lane) and frame level. 0, or -1 when it is not resident. */
static int focus_thread(dap *p, int64_t tid, int level)
{
    vm_block **list;
    int nb = dbg_blocks(p->d, &list);
    dbg_focus *fo = dbg_focus_get(p->d);
    for (int i = 0; i < nb; i++) {
        vm_block *b = list[i];
        if (!b->warps || tid < 1 + (int64_t)b->linear_id * 32 || tid >= 1 + (int64_t)b->linear_id * 32 + b->nwarps)
            continue;
        vm_warp *w = &b->warps[tid - 1 - (int64_t)b->linear_id * 32];
        int lane = -1;
        if (fo->w == w)
            lane = fo->lane;
        else {
            uint32_t live = w->valid & ~w->exited;
            lane = live ? __builtin_ctz(live) : 0;
        }
        char msg[256];
        if (dbg_set_focus(p->d, b->ctaid, NULL, w->index, lane, msg, sizeof msg))
            return -1;
        fo->frame = level;
        return 0;
    }
    return -1;
}

static const char *source_path(const char *file)
{
    return file;
}

static json_t *source_object(dap *p, const bc_function *fn, uint32_t pc, int *line)
{
    dbg_src s;
    dbg_src_of(p->d, fn, pc, &s);
    json_t *src = json_object();
    const char *path = NULL;
    static char beside[4096];
    if (s.file && access(s.file, R_OK) != 0) {
        /* nvcc records the path it compiled: try the name beside the PTX */
        const char *ptx = dbg_ptx_file(p->d), *slash = strrchr(ptx, '/'), *base = strrchr(s.file, '/');
        const char *name = base ? base + 1 : s.file;
        size_t dl = slash ? (size_t)(slash - ptx) + 1 : 0, nl = strlen(name);
        if (dl + nl < sizeof beside) {
            memcpy(beside, ptx, dl);
            memcpy(beside + dl, name, nl + 1);
            if (access(beside, R_OK) == 0)
                path = beside;
        }
    }
    if (s.file && (path || access(s.file, R_OK) == 0)) {
        if (!path)
            path = source_path(s.file);
        *line = s.line;
    } else {
        path = dbg_ptx_file(p->d);
        *line = s.ptx_line;
    }
    const char *slash = strrchr(path, '/');
    json_object_set_new(src, "name", json_string(slash ? slash + 1 : path));
    char full[4096];
    size_t pl = strlen(path);
    if (path[0] != '/' && getcwd(full, sizeof full) && strlen(full) + 1 + pl < sizeof full) {
        size_t n = strlen(full);
        full[n] = '/';
        memcpy(full + n + 1, path, pl + 1);
        json_object_set_new(src, "path", json_string(full));
    } else {
        json_object_set_new(src, "path", json_string(path));
    }
    return src;
}

enum { SCOPE_REGS = 1, SCOPE_LANES, SCOPE_PARAMS, SCOPE_BUILTINS, SCOPE_LOCALS };

static int64_t var_ref(int64_t tid, int level, int kind)
{
    return ((tid * 64 + level) * 8 + kind);
}

static json_t *variable(const char *name, const char *value, const char *type)
{
    json_t *v = json_object();
    json_object_set_new(v, "name", json_string(name));
    json_object_set_new(v, "value", json_string(value));
    if (type)
        json_object_set_new(v, "type", json_string(type));
    json_object_set_new(v, "variablesReference", json_integer(0));
    return v;
}

static json_t *variables(dap *p, int64_t ref)
{
    json_t *list = json_array();
    int kind = (int)(ref % 8);
    int level = (int)(ref / 8 % 64);
    int64_t tid = ref / 8 / 64;
    if (focus_thread(p, tid, level))
        return list;
    dbg *d = p->d;
    dbg_focus *fo = dbg_focus_get(d);
    vm_launch *L = dbg_launch(d);
    char value[4096], name[128];
    if (kind == SCOPE_BUILTINS) {
        static const char *names[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y",
                                      "blockIdx.z", "blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x",
                                      "gridDim.y", "gridDim.z", "$lane", "$warp", "$pc"};
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            dbg_value v;
            char msg[256];
            if (dbg_eval(d, names[i], fo->lane, &v, msg, sizeof msg))
                continue;
            dbg_format_value(&v, 0, value, sizeof value);
            json_array_append_new(list, variable(names[i], value, "u32"));
        }
        return list;
    }
    if (kind == SCOPE_LOCALS) {
        /* source variables (nvcc -G): parameters and locals by their CUDA names */
        const dwarf_var *vars[512];
        const dwarf_info *di = dbg_dwarf(d);
        int n = dbg_visible_vars(d, vars, 512);
        for (int i = 0; i < n && i < 512; i++) {
            dbg_value v;
            char msg[256], type[128];
            util_buffer b = {0};
            if (dbg_eval(d, vars[i]->name, fo->lane, &v, msg, sizeof msg))
                util_buffer_printf(&b, "<%s>", msg);
            else
                dbg_format_object(d, &v, 0, fo->lane, &b);
            dwarf_type_name(di, vars[i]->type, type, sizeof type);
            json_array_append_new(list, variable(vars[i]->name, b.data ? b.data : "", type));
            util_buffer_free(&b);
        }
        return list;
    }
    if (kind == SCOPE_PARAMS) {
        const bc_function *k = L->kernel;
        for (int i = 0; i < k->nparams; i++) {
            dbg_value v;
            char msg[256];
            if (dbg_eval(d, k->params[i].name, fo->lane, &v, msg, sizeof msg))
                continue;
            dbg_format_value(&v, v.type == PTX_T_U64 || v.type == PTX_T_B64 ? 'x' : 0, value, sizeof value);
            json_array_append_new(list, variable(k->params[i].name, value, ptx_type_name(k->params[i].type)));
        }
        return list;
    }
    dbg_where wh;
    if (dbg_lane_where(d, fo->b, fo->w, fo->lane, level, &wh) || !wh.fn->ptx)
        return list;
    const ptx_function *pf = wh.fn->ptx;
    uint32_t live = fo->w->valid & ~fo->w->exited;
    for (int i = 0; i < pf->nregs; i++) {
        const ptx_var *r = pf->regs[i];
        snprintf(name, sizeof name, "%s", r->name);
        if (kind == SCOPE_REGS) {
            dbg_value v;
            char msg[256];
            if (dbg_eval(d, r->name, fo->lane, &v, msg, sizeof msg))
                continue;
            dbg_format_value(&v, 0, value, sizeof value);
            json_array_append_new(list, variable(name, value, ptx_type_name(r->type)));
        } else {
            /* every live lane, side by side ("-" where a lane is elsewhere) */
            size_t k = 0;
            value[k++] = '[';
            for (int l = 0; l < VM_WARP && k < sizeof value - 64; l++) {
                if (!(fo->w->valid >> l & 1))
                    continue;
                dbg_value v;
                char msg[256], one[64] = "-";
                if ((live >> l & 1) && !dbg_eval(d, r->name, l, &v, msg, sizeof msg))
                    dbg_format_value(&v, 0, one, sizeof one);
                k += (size_t)snprintf(value + k, sizeof value - k, "%s%s", l ? ", " : "", one);
            }
            snprintf(value + k, sizeof value - k, "]");
            json_array_append_new(list, variable(name, value, ptx_type_name(r->type)));
        }
    }
    return list;
}

/* ---- stops -------------------------------------------------------------------------- */

static void handle(dap *p, json_t *req, int stopped, int *resume);

/* The client is gone or detached: no more stops; the program runs on. */
static void detach(dap *p)
{
    p->quit = 1;
    int n;
    dbg_bp **bps = dbg_bps(p->d, &n);
    while (n > 0) {
        dbg_bp_delete(p->d, bps[n - 1]->number);
        bps = dbg_bps(p->d, &n);
    }
    dbg_break_on(p->d, ~0u, 0);
}

static const char *stop_reason(int reason)
{
    switch (reason) {
    case DBG_STOP_BREAKPOINT: return "breakpoint";
    case DBG_STOP_WATCH: return "data breakpoint";
    case DBG_STOP_FAULT: case DBG_STOP_CHECKER: return "exception";
    case DBG_STOP_ENTRY: return "entry";
    case DBG_STOP_INTERRUPT: return "pause";
    case DBG_STOP_BRKPT: return "breakpoint";
    default: return "step";
    }
}

static int dap_stopped(void *ctx, dbg *d)
{
    dap *p = ctx;
    flush_output(p);
    const dbg_stop *st = dbg_last_stop(d);
    dbg_focus *fo = dbg_focus_get(d);
    json_t *b = json_object();
    json_object_set_new(b, "reason", json_string(stop_reason(st->reason)));
    if (fo->w)
        json_object_set_new(b, "threadId", json_integer(thread_id(fo->b, fo->w)));
    json_object_set_new(b, "allThreadsStopped", json_true());
    if (st->text[0] && st->reason != DBG_STOP_INTERRUPT)
        json_object_set_new(b, "text", json_string(st->text));
    if (st->bp) {
        json_t *ids = json_array();
        json_array_append_new(ids, json_integer(st->bp));
        json_object_set_new(b, "hitBreakpointIds", ids);
    }
    if (st->reason == DBG_STOP_FAULT || st->reason == DBG_STOP_CHECKER)
        json_object_set_new(b, "description", json_string(st->reason == DBG_STOP_FAULT ? "kernel fault" : "checker finding"));
    send_event(p, "stopped", b);
    dbg_answer_done(d);
    if (p->kill_pending)
        return DBG_RESUME_KILL;
    int resume = -1;
    p->target_stopped = 1;
    while (resume < 0) {
        json_t *req = read_message(p);
        if (!req) {
            if (p->attach) {
                detach(p);
                return DBG_RESUME_CONTINUE;
            }
            p->quit = 1;
            return DBG_RESUME_KILL;
        }
        handle(p, req, 1, &resume);
        json_decref(req);
    }
    p->target_stopped = 0;
    if (resume != DBG_RESUME_KILL && resume != DBG_RESUME_RESTART) {
        json_t *c = json_object();
        if (fo->w)
            json_object_set_new(c, "threadId", json_integer(thread_id(fo->b, fo->w)));
        json_object_set_new(c, "allThreadsContinued", json_true());
        send_event(p, "continued", c);
    }
    return resume;
}

static void dap_message(void *ctx, dbg *d, const char *text)
{
    (void)d;
    dap *p = ctx;
    flush_output(p);
    json_t *b = json_object();
    json_object_set_new(b, "category", json_string("console"));
    char *t = malloc(strlen(text) + 2);
    if (t) {
        sprintf(t, "%s\n", text);
        json_object_set_new(b, "output", json_string(t));
        free(t);
    }
    send_event(p, "output", b);
}

/* ---- requests -------------------------------------------------------------------------- */

static json_t *capabilities(void)
{
    json_t *c = json_object();
    json_object_set_new(c, "supportsConfigurationDoneRequest", json_true());
    json_object_set_new(c, "supportsConditionalBreakpoints", json_true());
    json_object_set_new(c, "supportsFunctionBreakpoints", json_true());
    json_object_set_new(c, "supportsEvaluateForHovers", json_true());
    json_object_set_new(c, "supportsStepBack", json_true());
    json_object_set_new(c, "supportsRestartRequest", json_false());
    json_object_set_new(c, "supportsTerminateRequest", json_true());
    json_object_set_new(c, "supportsReadMemoryRequest", json_true());
    json_object_set_new(c, "supportsExceptionInfoRequest", json_true());
    json_object_set_new(c, "supportsSetVariable", json_true());
    json_object_set_new(c, "supportsSetExpression", json_true());
    json_t *filters = json_array();
    static const char *names[][2] = {{"fault", "Kernel faults"}, {"race", "racecheck findings"},
                                     {"memcheck", "memcheck findings"}, {"initcheck", "initcheck findings"},
                                     {"synccheck", "synccheck findings"}};
    for (int i = 0; i < 5; i++) {
        json_t *f = json_object();
        json_object_set_new(f, "filter", json_string(names[i][0]));
        json_object_set_new(f, "label", json_string(names[i][1]));
        json_object_set_new(f, "default", i == 0 ? json_true() : json_false());
        json_array_append_new(filters, f);
    }
    json_object_set_new(c, "exceptionBreakpointFilters", filters);
    return c;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void set_breakpoints(dap *p, json_t *req)
{
    json_t *args = json_object_get(req, "arguments");
    const char *path = json_string_value(json_object_get(json_object_get(args, "source"), "path"));
    if (!path)
        path = json_string_value(json_object_get(json_object_get(args, "source"), "name"));
    if (!path) {
        respond(p, req, 0, "setBreakpoints: the source has no path", NULL);
        return;
    }
    int si = -1;
    for (int i = 0; i < p->nsources; i++)
        if (!strcmp(p->sources[i].path, path))
            si = i;
    if (si < 0) {
        void *grown = realloc(p->sources, (size_t)(p->nsources + 1) * sizeof *p->sources);
        if (!grown) {
            respond(p, req, 0, "out of memory", NULL);
            return;
        }
        p->sources = grown;
        si = p->nsources++;
        p->sources[si].path = strdup(path);
        p->sources[si].numbers = NULL;
        p->sources[si].n = 0;
    }
    for (int i = 0; i < p->sources[si].n; i++)
        dbg_bp_delete(p->d, p->sources[si].numbers[i]);
    free(p->sources[si].numbers);
    p->sources[si].numbers = NULL;
    p->sources[si].n = 0;
    json_t *list = json_object_get(args, "breakpoints");
    json_t *out = json_array();
    size_t n = json_array_size(list);
    p->sources[si].numbers = calloc(n + 1, sizeof(int));
    for (size_t i = 0; i < n; i++) {
        json_t *bp = json_array_get(list, i);
        int line = (int)json_integer_value(json_object_get(bp, "line"));
        const char *cond = json_string_value(json_object_get(bp, "condition"));
        char spec[600], msg[300];
        snprintf(spec, sizeof spec, "%s:%d", base_of(path), line);
        int num = dbg_break(p->d, spec, cond, 0, msg, sizeof msg);
        json_t *o = json_object();
        if (num < 0) {
            json_object_set_new(o, "verified", json_false());
            json_object_set_new(o, "message", json_string(msg));
        } else {
            p->sources[si].numbers[p->sources[si].n++] = num;
            dbg_bp *b = dbg_bp_find(p->d, num);
            json_object_set_new(o, "id", json_integer(num));
            json_object_set_new(o, "verified", json_boolean(b && b->where[0]));
            if (!(b && b->where[0]))
                json_object_set_new(o, "message", json_string("pending: resolved when the kernel is launched"));
        }
        json_object_set_new(o, "line", json_integer(line));
        json_array_append_new(out, o);
    }
    json_t *body = json_object();
    json_object_set_new(body, "breakpoints", out);
    respond(p, req, 1, NULL, body);
}

static void set_function_breakpoints(dap *p, json_t *req)
{
    for (int i = 0; i < p->nfn_bps; i++)
        dbg_bp_delete(p->d, p->fn_bps[i]);
    free(p->fn_bps);
    p->fn_bps = NULL;
    p->nfn_bps = 0;
    json_t *list = json_object_get(json_object_get(req, "arguments"), "breakpoints");
    size_t n = json_array_size(list);
    p->fn_bps = calloc(n + 1, sizeof(int));
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *bp = json_array_get(list, i);
        const char *name = json_string_value(json_object_get(bp, "name"));
        const char *cond = json_string_value(json_object_get(bp, "condition"));
        char msg[300];
        int num = name ? dbg_break(p->d, name, cond, 0, msg, sizeof msg) : -1;
        json_t *o = json_object();
        json_object_set_new(o, "verified", json_boolean(num >= 0));
        if (num >= 0) {
            p->fn_bps[p->nfn_bps++] = num;
            json_object_set_new(o, "id", json_integer(num));
        }
        json_array_append_new(out, o);
    }
    json_t *body = json_object();
    json_object_set_new(body, "breakpoints", out);
    respond(p, req, 1, NULL, body);
}

static void stack_trace(dap *p, json_t *req)
{
    json_t *args = json_object_get(req, "arguments");
    int64_t tid = json_integer_value(json_object_get(args, "threadId"));
    json_t *frames = json_array();
    if (focus_thread(p, tid, 0) == 0) {
        dbg_focus *fo = dbg_focus_get(p->d);
        dbg_where fr[64];
        int n = dbg_backtrace(p->d, fo->b, fo->w, fo->lane, fr, 64);
        for (int i = 0; i < n; i++) {
            json_t *f = json_object();
            int line = 0;
            json_object_set_new(f, "id", json_integer(tid * 64 + i));
            char name[300];
            snprintf(name, sizeof name, "%s (lane %d)", fr[i].fn->name, fo->lane);
            json_object_set_new(f, "name", json_string(name));
            json_object_set_new(f, "source", source_object(p, fr[i].fn, fr[i].pc, &line));
            json_object_set_new(f, "line", json_integer(line));
            json_object_set_new(f, "column", json_integer(1));
            char ipr[32];
            snprintf(ipr, sizeof ipr, "%u", fr[i].pc);
            json_object_set_new(f, "instructionPointerReference", json_string(ipr));
            json_array_append_new(frames, f);
        }
    }
    json_t *body = json_object();
    json_object_set_new(body, "totalFrames", json_integer((json_int_t)json_array_size(frames)));
    json_object_set_new(body, "stackFrames", frames);
    respond(p, req, 1, NULL, body);
}

static void handle(dap *p, json_t *req, int stopped, int *resume)
{
    const char *cmd = json_string_value(json_object_get(req, "command"));
    json_t *args = json_object_get(req, "arguments");
    dbg *d = p->d;
    if (!cmd) {
        return;
    } else if (!strcmp(cmd, "initialize")) {
        respond(p, req, 1, NULL, capabilities());
        send_event(p, "initialized", NULL);
    } else if (!strcmp(cmd, "attach")) {
        if (!p->attach) {
            respond(p, req, 0,
                    "attach: this adapter launches kemu run or kemu call; to debug a running program, start it with "
                    "`kemu exec --dap PORT ./app` (or KEMU_DEBUG=dap:PORT) and attach to that port",
                    NULL);
            return;
        }
        p->attached = 1;
        respond(p, req, 1, NULL, NULL);
    } else if (p->attach && !strcmp(cmd, "launch")) {
        respond(p, req, 0, "launch: this is a program already running under kemu; use attach", NULL);
    } else if (!strcmp(cmd, "launch")) {
        const char *command = json_string_value(json_object_get(args, "command"));
        if (!command || (strcmp(command, "run") && strcmp(command, "call")) ||
            !json_is_array(json_object_get(args, "args"))) {
            respond(p, req, 0, "launch: want {\"command\": \"run\" or \"call\", \"args\": [...]}", NULL);
            return;
        }
        json_decref(p->launch);
        p->launch = json_incref(args);
        respond(p, req, 1, NULL, NULL);
    } else if (!strcmp(cmd, "setBreakpoints")) {
        set_breakpoints(p, req);
    } else if (!strcmp(cmd, "setFunctionBreakpoints")) {
        set_function_breakpoints(p, req);
    } else if (!strcmp(cmd, "setExceptionBreakpoints")) {
        static const char *names[] = {"fault", "race", "memcheck", "initcheck", "synccheck"};
        dbg_break_on(d, DBG_ON_FAULT | DBG_ON_RACE | DBG_ON_MEMCHECK | DBG_ON_INITCHECK | DBG_ON_SYNCCHECK, 0);
        json_t *filters = json_object_get(args, "filters");
        for (size_t i = 0; i < json_array_size(filters); i++)
            for (int k = 0; k < 5; k++)
                if (json_string_value(json_array_get(filters, i)) &&
                    !strcmp(json_string_value(json_array_get(filters, i)), names[k]))
                    dbg_break_on(d, 1u << k, 1);
        respond(p, req, 1, NULL, NULL);
    } else if (!strcmp(cmd, "configurationDone")) {
        p->configured = 1;
        respond(p, req, 1, NULL, NULL);
    } else if (!strcmp(cmd, "threads")) {
        json_t *threads = json_array();
        if (stopped) {
            vm_block **list;
            int nb = dbg_blocks(d, &list);
            for (int i = 0; i < nb; i++) {
                vm_block *b = list[i];
                for (int wi = 0; b->warps && !b->done && wi < b->nwarps; wi++) {
                    if (b->warps[wi].state == VM_WARP_DONE)
                        continue;
                    json_t *t = json_object();
                    char name[96];
                    snprintf(name, sizeof name, "block (%u,%u,%u) warp %d", b->ctaid[0], b->ctaid[1], b->ctaid[2], wi);
                    json_object_set_new(t, "id", json_integer(thread_id(b, &b->warps[wi])));
                    json_object_set_new(t, "name", json_string(name));
                    json_array_append_new(threads, t);
                }
            }
        }
        if (!json_array_size(threads)) {
            json_t *t = json_object();
            json_object_set_new(t, "id", json_integer(1));
            json_object_set_new(t, "name", json_string("kernel"));
            json_array_append_new(threads, t);
        }
        json_t *body = json_object();
        json_object_set_new(body, "threads", threads);
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "stackTrace")) {
        stack_trace(p, req);
    } else if (!strcmp(cmd, "scopes")) {
        int64_t frame = json_integer_value(json_object_get(args, "frameId"));
        int64_t tid = frame / 64;
        int level = (int)(frame % 64);
        json_t *scopes = json_array();
        static const struct { const char *name; int kind; } s[] = {
            {"Registers (focused lane)", SCOPE_REGS}, {"Registers (all lanes)", SCOPE_LANES},
            {"Kernel parameters", SCOPE_PARAMS}, {"Built-ins", SCOPE_BUILTINS}};
        /* "Locals" first (editors open the first scope) where DWARF has variables here */
        const dwarf_var *any;
        if (!focus_thread(p, tid, level) && dbg_visible_vars(p->d, &any, 1) > 0) {
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string("Locals"));
            json_object_set_new(o, "presentationHint", json_string("locals"));
            json_object_set_new(o, "variablesReference", json_integer(var_ref(tid, level, SCOPE_LOCALS)));
            json_object_set_new(o, "expensive", json_false());
            json_array_append_new(scopes, o);
        }
        for (int i = 0; i < 4; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(s[i].name));
            json_object_set_new(o, "variablesReference", json_integer(var_ref(tid, level, s[i].kind)));
            json_object_set_new(o, "expensive", json_boolean(s[i].kind == SCOPE_LANES));
            json_array_append_new(scopes, o);
        }
        json_t *body = json_object();
        json_object_set_new(body, "scopes", scopes);
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "variables")) {
        json_t *body = json_object();
        json_object_set_new(body, "variables",
                            stopped ? variables(p, json_integer_value(json_object_get(args, "variablesReference")))
                                    : json_array());
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "evaluate")) {
        const char *e = json_string_value(json_object_get(args, "expression"));
        json_t *fid = json_object_get(args, "frameId");
        if (!stopped || !e) {
            respond(p, req, 0, "the kernel is not stopped", NULL);
            return;
        }
        if (fid)
            focus_thread(p, json_integer_value(fid) / 64, (int)(json_integer_value(fid) % 64));
        dbg_value v;
        char msg[300], value[256];
        dbg_focus *fo = dbg_focus_get(d);
        if (dbg_eval(d, e, fo->lane, &v, msg, sizeof msg)) {
            respond(p, req, 0, msg, NULL);
            return;
        }
        dbg_format_value(&v, 0, value, sizeof value);
        json_t *body = json_object();
        json_object_set_new(body, "result", json_string(value));
        json_object_set_new(body, "variablesReference", json_integer(0));
        if (v.is_pointer) {
            char ref[32];
            snprintf(ref, sizeof ref, "0x%llx", (unsigned long long)v.u);
            json_object_set_new(body, "memoryReference", json_string(ref));
        }
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "setVariable") || !strcmp(cmd, "setExpression")) {
        /* set var for the focused lane of the warp the scope or frame names */
        int is_var = !strcmp(cmd, "setVariable");
        const char *lhs = json_string_value(json_object_get(args, is_var ? "name" : "expression"));
        const char *rhs = json_string_value(json_object_get(args, "value"));
        int64_t ref = json_integer_value(json_object_get(args, is_var ? "variablesReference" : "frameId"));
        if (!stopped || !lhs || !rhs) {
            respond(p, req, 0, "the kernel is not stopped", NULL);
            return;
        }
        int64_t tid = is_var ? ref / 8 / 64 : ref / 64;
        int level = (int)(is_var ? ref / 8 % 64 : ref % 64);
        int kind = is_var ? (int)(ref % 8) : 0;
        if (is_var && kind != SCOPE_REGS && kind != SCOPE_PARAMS && kind != SCOPE_LOCALS) {
            respond(p, req, 0, "only registers of the focused lane, kernel parameters and locals can be set", NULL);
            return;
        }
        if ((is_var || json_object_get(args, "frameId")) && focus_thread(p, tid, level)) {
            respond(p, req, 0, "that warp is not resident now", NULL);
            return;
        }
        dbg_value v;
        char msg[300], value[256];
        if (dbg_assign(d, lhs, rhs, dbg_focus_get(d)->lane, &v, msg, sizeof msg)) {
            respond(p, req, 0, msg, NULL);
            return;
        }
        dbg_format_value(&v, 0, value, sizeof value);
        json_t *body = json_object();
        json_object_set_new(body, "value", json_string(value));
        if (v.type)
            json_object_set_new(body, "type", json_string(ptx_type_name(v.type)));
        json_object_set_new(body, "variablesReference", json_integer(0));
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "readMemory")) {
        const char *ref = json_string_value(json_object_get(args, "memoryReference"));
        int64_t off = json_integer_value(json_object_get(args, "offset"));
        int64_t count = json_integer_value(json_object_get(args, "count"));
        if (!stopped || !ref || count < 0 || count > (1 << 20)) {
            respond(p, req, 0, "readMemory: not stopped, or a bad reference or count", NULL);
            return;
        }
        uint64_t addr = strtoull(ref, NULL, 0) + (uint64_t)off;
        unsigned char *buf = malloc((size_t)count + 1);
        int64_t got = 0;
        dbg_focus *fo = dbg_focus_get(d);
        while (buf && got < count && dbg_read_memory(d, BC_SPACE_GENERIC, addr + (uint64_t)got, buf + got, 1, fo->lane) == 0)
            got++;
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char *enc = malloc((size_t)got / 3 * 4 + 8);
        size_t k = 0;
        for (int64_t i = 0; enc && i < got; i += 3) {
            uint32_t v = (uint32_t)buf[i] << 16 | (i + 1 < got ? (uint32_t)buf[i + 1] << 8 : 0) |
                         (i + 2 < got ? buf[i + 2] : 0);
            enc[k++] = b64[v >> 18 & 63];
            enc[k++] = b64[v >> 12 & 63];
            enc[k++] = i + 1 < got ? b64[v >> 6 & 63] : '=';
            enc[k++] = i + 2 < got ? b64[v & 63] : '=';
        }
        if (enc)
            enc[k] = 0;
        json_t *body = json_object();
        char addr_s[32];
        snprintf(addr_s, sizeof addr_s, "0x%llx", (unsigned long long)addr);
        json_object_set_new(body, "address", json_string(addr_s));
        json_object_set_new(body, "data", json_string(enc ? enc : ""));
        if (got < count)
            json_object_set_new(body, "unreadableBytes", json_integer(count - got));
        free(buf);
        free(enc);
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "exceptionInfo")) {
        const dbg_stop *st = dbg_last_stop(d);
        json_t *body = json_object();
        json_object_set_new(body, "exceptionId",
                            json_string(st->reason == DBG_STOP_FAULT ? "fault" : "checker"));
        json_object_set_new(body, "description", json_string(st->text));
        json_object_set_new(body, "breakMode", json_string("always"));
        respond(p, req, 1, NULL, body);
    } else if (!strcmp(cmd, "continue") || !strcmp(cmd, "next") || !strcmp(cmd, "stepIn") ||
               !strcmp(cmd, "stepOut") || !strcmp(cmd, "stepBack") || !strcmp(cmd, "reverseContinue")) {
        if (!stopped) {
            respond(p, req, 0, "the kernel is not stopped", NULL);
            return;
        }
        int64_t tid = json_integer_value(json_object_get(args, "threadId"));
        if (tid && focus_thread(p, tid, 0)) {
            respond(p, req, 0, "no such thread (warp) now", NULL);
            return;
        }
        if (!strcmp(cmd, "stepBack") || !strcmp(cmd, "reverseContinue")) {
            /* as the prompt's can_replay: a changed run, or (attached to a
             * program) a point before the current launch, cannot be reached */
            uint64_t prev = dbg_previous_event_of_focus(d);
            uint64_t at = !strcmp(cmd, "stepBack") && prev ? prev : dbg_event(d);
            const char *why = dbg_history_broken(d);
            if (!why && p->attach)
                why = dbg_launch_replay_refusal(d, at);
            if (why) {
                char msg[400];
                snprintf(msg, sizeof msg, "cannot go back: %s", why);
                respond(p, req, 0, msg, NULL);
                return;
            }
        }
        if (!strcmp(cmd, "continue")) {
            json_t *body = json_object();
            json_object_set_new(body, "allThreadsContinued", json_true());
            respond(p, req, 1, NULL, body);
            *resume = DBG_RESUME_CONTINUE;
            return;
        }
        respond(p, req, 1, NULL, NULL);
        if (!strcmp(cmd, "next"))
            *resume = DBG_RESUME_NEXT;
        else if (!strcmp(cmd, "stepIn"))
            *resume = DBG_RESUME_STEP;
        else if (!strcmp(cmd, "stepOut"))
            *resume = DBG_RESUME_FINISH;
        else if (!strcmp(cmd, "stepBack")) {
            uint64_t prev = dbg_previous_event_of_focus(d);
            dbg_query q = {0};
            dbg_focus *fo = dbg_focus_get(d);
            q.kind = 3;
            q.block_id = fo->b->linear_id;
            q.warp = fo->w->index;
            dbg_restart_at(d, prev ? prev : dbg_event(d), prev ? NULL : &q);
            *resume = DBG_RESUME_RESTART;
        } else {
            dbg_query q = {0};
            q.kind = 4;
            dbg_restart_at(d, dbg_event(d), &q);
            *resume = DBG_RESUME_RESTART;
        }
    } else if (p->attach && !strcmp(cmd, "disconnect") &&
               !json_is_true(json_object_get(args, "terminateDebuggee"))) {
        /* leave the program running on, undebugged */
        respond(p, req, 1, NULL, NULL);
        detach(p);
        if (stopped)
            *resume = DBG_RESUME_CONTINUE;
    } else if (!strcmp(cmd, "disconnect") || !strcmp(cmd, "terminate")) {
        respond(p, req, 1, NULL, NULL);
        p->quit = 1;
        if (stopped)
            *resume = DBG_RESUME_KILL;
        else if (p->attach)
            p->kill_pending = 1;
    } else {
        char msg[128];
        snprintf(msg, sizeof msg, "unsupported request '%s'", cmd);
        respond(p, req, 0, msg, NULL);
    }
}

/* ---- the session ------------------------------------------------------------------------ */

static void output_event(dap *p, const char *category, const char *text)
{
    json_t *b = json_object();
    json_object_set_new(b, "category", json_string(category));
    json_object_set_new(b, "output", json_string(text));
    send_event(p, "output", b);
}

static int run_target(dap *p)
{
    json_t *args = json_object_get(p->launch, "args");
    const char *command = json_string_value(json_object_get(p->launch, "command"));
    const char *cwd = json_string_value(json_object_get(p->launch, "cwd"));
    if (cwd && *cwd && chdir(cwd)) {
        char msg[600];
        snprintf(msg, sizeof msg, "kemu dap: cannot change to %s: %s\n", cwd, strerror(errno));
        output_event(p, "stderr", msg);
        return 2;
    }
    size_t n = json_array_size(args);
    const char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        return 1;
    argv[0] = command;
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = json_string_value(json_array_get(args, i)) ? json_string_value(json_array_get(args, i)) : "";
    int rc;
    do {
        dbg_run_begin(p->d);
        rc = p->run(p->run_ctx, (int)n + 1, argv);
        flush_output(p);
    } while (dbg_restart_pending(p->d) && !p->quit);
    free(argv);
    return dbg_run_killed(p->d) ? -1 : rc;
}

/* Sets up a session on in_fd / out (the reader thread started). 0 or -1. */
static int session_open(dap *p, int in_fd, FILE *out)
{
    p->out = out;
    p->in_fd = in_fd;
    p->target_stopped = 1; /* nothing runs until the launch */
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    if (pthread_create(&p->reader, NULL, reader_main, p))
        return -1;
    pthread_detach(p->reader);
    return 0;
}

static void session_close(dap *p)
{
    /* the reader may still wait on its input (an editor that keeps it
     * open after disconnect): it is not joined; the process ends */
    pthread_mutex_lock(&p->lock);
    for (dap_msg *e = p->head, *next; e; e = next) {
        next = e->next;
        json_decref(e->m);
        free(e);
    }
    p->head = p->tail = NULL;
    pthread_mutex_unlock(&p->lock);
    json_decref(p->launch);
    p->launch = NULL;
    for (int i = 0; i < p->nsources; i++) {
        free(p->sources[i].path);
        free(p->sources[i].numbers);
    }
    free(p->sources);
    p->sources = NULL;
    p->nsources = 0;
    free(p->fn_bps);
    p->fn_bps = NULL;
    p->nfn_bps = 0;
    for (int k = 0; k < 2; k++)
        if (p->cap[k])
            fclose(p->cap[k]);
}

int dbg_dap_serve_stdio(dbg_dap_runner run, void *ctx)
{
    static dap p; /* the detached reader thread may outlive this call */
    memset(&p, 0, sizeof p);
    p.run = run;
    p.run_ctx = ctx;
    /* the protocol owns the real stdout; the target's output is captured */
    int proto = dup(1);
    FILE *out = proto >= 0 ? fdopen(proto, "w") : NULL;
    if (!out) {
        fprintf(stderr, "kemu dap: error: %s\n", strerror(errno));
        return 1;
    }
    if (session_open(&p, 0, out)) {
        fprintf(stderr, "kemu dap: error: cannot start the reader thread\n");
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        fflush(k ? stderr : stdout);
        p.cap[k] = tmpfile();
        if (p.cap[k]) {
            p.out_fd[k] = fileno(p.cap[k]);
            dup2(p.out_fd[k], k + 1);
        }
    }
    dbg_frontend fe = {&p, dap_stopped, dap_message};
    p.d = dbg_create(&fe);
    if (!p.d)
        return 1;
    dbg_break_on(p.d, DBG_ON_FAULT, 1);
    dbg_active = p.d;
    int ran = 0;
    while (!p.quit) {
        if (p.configured && p.launch && !ran) {
            ran = 1;
            if (json_is_true(json_object_get(p.launch, "stopOnEntry")))
                dbg_restart_at(p.d, 1, NULL);
            p.target_stopped = 0;
            int rc = run_target(&p);
            p.target_stopped = 1;
            dbg_interrupt_requested = 0; /* a pause that came too late */
            if (!p.quit) {
                json_t *b = json_object();
                json_object_set_new(b, "exitCode", json_integer(rc < 0 ? 137 : rc));
                send_event(&p, "exited", b);
            }
            send_event(&p, "terminated", NULL);
            continue;
        }
        json_t *req = read_message(&p);
        if (!req)
            break;
        int resume = -1;
        handle(&p, req, 0, &resume);
        json_decref(req);
    }
    dbg_active = NULL;
    dbg_destroy(p.d);
    session_close(&p);
    fclose(p.out);
    return 0;
}

/* ---- attach: a server inside a running program ------------------------------------------ */

static dap attached_session;

int dbg_dap_attach_server(const char *where, char *msg, size_t n)
{
    dap *p = &attached_session;
    memset(p, 0, sizeof *p);
    p->attach = 1;
    char host[256] = "127.0.0.1";
    const char *port = where;
    const char *colon = strrchr(where, ':');
    if (colon) {
        snprintf(host, sizeof host, "%.*s", (int)(colon - where), where);
        port = colon + 1;
    }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int e = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (e) {
        snprintf(msg, n, "cannot listen on %s: %s", where, gai_strerror(e));
        return -1;
    }
    int ls = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    int one = 1;
    if (ls >= 0)
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, ai->ai_addr, ai->ai_addrlen) || listen(ls, 1)) {
        snprintf(msg, n, "cannot listen on %s: %s", where, strerror(errno));
        if (ls >= 0)
            close(ls);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    char shown[300] = "";
    if (!getsockname(ls, (struct sockaddr *)&sa, &sl)) {
        unsigned short pn = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                                     : ntohs(((struct sockaddr_in *)&sa)->sin_port);
        snprintf(shown, sizeof shown, "%s:%u", host, pn);
    }
    fprintf(stderr, "kemu: waiting for a debugger (Debug Adapter Protocol) to attach on %s\n", shown);
    const char *pf = getenv("KEMU_DEBUG_PORT_FILE");
    if (pf && *pf) {
        FILE *f = fopen(pf, "w");
        if (f) {
            fprintf(f, "%s\n", shown);
            fclose(f);
        }
    }
    int s;
    do
        s = accept(ls, NULL, NULL);
    while (s < 0 && errno == EINTR);
    close(ls);
    if (s >= 0)
        fcntl(s, F_SETFD, FD_CLOEXEC);
    if (s < 0) {
        snprintf(msg, n, "accept on %s: %s", where, strerror(errno));
        return -1;
    }
    int so = dup(s);
    FILE *out = so >= 0 ? fdopen(so, "w") : NULL;
    if (!out || session_open(p, s, out)) {
        snprintf(msg, n, "cannot start the debugger session: %s", strerror(errno));
        return -1;
    }
    dbg_frontend fe = {p, dap_stopped, dap_message};
    p->d = dbg_create(&fe);
    if (!p->d) {
        snprintf(msg, n, "out of memory");
        return -1;
    }
    dbg_break_on(p->d, DBG_ON_FAULT, 1);
    dbg_set_launch_replay(p->d, 1);
    dbg_active = p->d;
    /* the client's configuration (attach, breakpoints, configurationDone),
     * then the program goes on to its kernels */
    while (!p->quit && !p->configured) {
        json_t *req = read_message(p);
        if (!req)
            break;
        int resume = -1;
        handle(p, req, 0, &resume);
        json_decref(req);
    }
    dbg_run_begin(p->d);
    if (p->quit || !p->configured) {
        /* the client left before configuring: the program runs undebugged */
        dbg_active = NULL;
        return 1;
    }
    p->target_stopped = 0;
    return 0;
}

void dbg_dap_attached_ended(int status)
{
    dap *p = &attached_session;
    if (!p->d || !p->out)
        return;
    p->target_stopped = 1;
    if (!p->quit) {
        json_t *b = json_object();
        json_object_set_new(b, "exitCode", json_integer(status));
        send_event(p, "exited", b);
        send_event(p, "terminated", NULL);
    }
    fflush(p->out);
}
