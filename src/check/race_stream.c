/* racecheck across the operations a program issues from the host: kernels,
 * copies and sets, library calls (NCCL collectives), on the streams of
 * every device. kemu runs each device's work synchronously in issue
 * order, so a missing cudaStreamWaitEvent never shows in the results; a
 * GPU runs two streams' work at once. This file keeps the order a GPU
 * guarantees (happens-before) and reports two operations that it leaves
 * unordered when they touch overlapping global memory, one of them
 * writing (and not both atomic or strong accesses of kernels).
 *
 * The model: vector clocks, one entry per stream (the runtime names each
 * stream by a 64-bit key: the legacy stream of a device, a per-thread
 * default stream, a created stream, blocking or not), plus one clock for
 * the host. An operation issued on stream a first takes what the host
 * knows (work issued after the host waited for X is after X), the legacy
 * stream's rules (an operation of the legacy stream waits for every
 * blocking stream of its device, one of a blocking stream for the legacy
 * stream), then ticks a's own entry. An event captures its stream's clock;
 * a wait on it joins it into the waiting stream (cudaStreamWaitEvent) or
 * into the host (cudaEventSynchronize); stream and device synchronization
 * join those streams into the host; a collective joins its parties'
 * streams. Operation X (stream x, tick e) is ordered before an operation
 * whose clock c has c[x] >= e.
 *
 * Each operation keeps its accesses as ranges (a kernel's come from the
 * intervals its clusters leave for the analysis across clusters, race.c,
 * merged per instruction); it is forgotten once every stream and the host
 * are ordered after it. The host threads share one clock: kemu does not
 * see their own synchronization (pthread_join, a mutex), and assumes that
 * a wait one thread finished is known to the others. The state is one per
 * process (devices share it: a kernel's access to a peer's memory counts
 * as one to the owner's memory, since addresses name their device). */
#include "check/race_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct order_range {
    uint64_t start, end;
    uint32_t site;           /* index in the op's sites */
    uint8_t kind;            /* RACE_K_* */
} order_range;

typedef struct order_op {
    int agent;
    uint32_t epoch;
    int device;
    check_session *s;
    const mem_space *mem;
    int host_waits;
    char *what;              /* "kernel 'name'" or the API call */
    char **sites;            /* per site: "name+pc (file:line)" (kernels) or NULL (API calls) */
    size_t nsites, capsites;
    order_range *r;
    size_t nr, capr;
    uint64_t maxlen;
    uint32_t *vc;            /* its clock (pending ops only) */
    size_t vcw;              /* entries vc holds */
    int also[4];             /* other streams it is ordered with both ways (a copy of the legacy stream that
                              * touches another device's memory) */
    int nalso;
} order_op;

typedef struct order_agent {
    uint64_t key;            /* 0: a free slot (its clock continues with the next stream) */
    int device, kind;        /* CHECK_STREAM_* */
    char name[96];
} order_agent;

typedef struct order_event {
    uint64_t key;
    uint32_t *vc;
} order_event;

static struct {
    pthread_mutex_t lock;
    order_agent *agents;
    uint32_t **vcs;          /* per agent */
    size_t nagents, capagents;
    size_t width;            /* entries every clock holds */
    uint32_t *host;
    order_event *events;
    size_t nevents, capevents;
    order_op **ops;          /* finished operations not yet forgotten */
    size_t nops, capops, pruned_at;
    check_set reported;      /* pairs of sides reported */
    uint64_t seq;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local order_op *pending;

/* ---- clocks ------------------------------------------------------------------ */

static uint32_t *clock_new(void)
{
    return calloc(g.width ? g.width : 1, sizeof(uint32_t));
}

static void join(uint32_t *dst, const uint32_t *src)
{
    race_join(dst, src, (int)g.nagents);
}

/* Grows every clock to at least n entries (0, or -1 out of memory). */
static int widen(size_t n)
{
    if (n <= g.width)
        return 0;
    size_t w = g.width ? g.width * 2 : 16;
    while (w < n)
        w *= 2;
    for (size_t i = 0; i < g.nagents; i++) {
        uint32_t *v = realloc(g.vcs[i], w * sizeof *v);
        if (!v)
            return -1;
        memset(v + g.width, 0, (w - g.width) * sizeof *v);
        g.vcs[i] = v;
    }
    for (size_t i = 0; i < g.nevents; i++) {
        uint32_t *v = realloc(g.events[i].vc, w * sizeof *v);
        if (!v)
            return -1;
        memset(v + g.width, 0, (w - g.width) * sizeof *v);
        g.events[i].vc = v;
    }
    uint32_t *h = realloc(g.host, w * sizeof *h);
    if (!h)
        return -1;
    memset(h + g.width, 0, (w - g.width) * sizeof *h);
    g.host = h;
    g.width = w;
    return 0;
}

static int agent_find(uint64_t key)
{
    for (size_t i = 0; i < g.nagents; i++)
        if (g.agents[i].key == key)
            return (int)i;
    return -1;
}

/* The agent of a stream key, made when new; -1 out of memory. Locked. */
static int agent_of(uint64_t key, int device, int kind, const char *name)
{
    int a = agent_find(key);
    if (a < 0) {
        for (size_t i = 0; i < g.nagents; i++)
            if (!g.agents[i].key) { /* a destroyed stream's slot: ordered after its work, never before */
                a = (int)i;
                break;
            }
        if (a < 0) {
            if (widen(g.nagents + 1) ||
                util_grow(&g.agents, &g.capagents, g.nagents + 1, sizeof *g.agents))
                return -1;
            size_t cap = g.capagents;
            uint32_t **v = realloc(g.vcs, cap * sizeof *v);
            if (!v)
                return -1;
            g.vcs = v;
            g.vcs[g.nagents] = clock_new();
            if (!g.vcs[g.nagents])
                return -1;
            a = (int)g.nagents++;
        }
        g.agents[a].key = key;
    }
    g.agents[a].device = device;
    g.agents[a].kind = kind;
    snprintf(g.agents[a].name, sizeof g.agents[a].name, "%s", name ? name : "a stream");
    return a;
}

/* Stream a about to take work: the host's knowledge and the legacy
 * stream's rules. Locked. */
static void issue(int a)
{
    uint32_t *v = g.vcs[a];
    join(v, g.host);
    const order_agent *x = &g.agents[a];
    if (x->kind == CHECK_STREAM_NONBLOCKING)
        return;
    for (size_t i = 0; i < g.nagents; i++) {
        const order_agent *y = &g.agents[i];
        if ((int)i == a || !y->key || y->device != x->device)
            continue;
        if (x->kind == CHECK_STREAM_LEGACY ? y->kind == CHECK_STREAM_BLOCKING : y->kind == CHECK_STREAM_LEGACY)
            join(v, g.vcs[i]);
    }
}

/* Grows a pending operation's clock to the width of the others (streams
 * made since it began). 0, or -1 out of memory. Locked. */
static int op_fit(order_op *o)
{
    if (o->vcw >= g.width)
        return 0;
    uint32_t *v = realloc(o->vc, g.width * sizeof *v);
    if (!v)
        return -1;
    memset(v + o->vcw, 0, (g.width - o->vcw) * sizeof *v);
    o->vc = v;
    o->vcw = g.width;
    return 0;
}

/* ---- forgetting ---------------------------------------------------------------- */

static void op_free(order_op *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->nsites; i++)
        free(o->sites[i]);
    free(o->sites);
    free(o->r);
    free(o->what);
    free(o->vc);
    free(o);
}

/* Forgets the operations that the host and every stream's next operation
 * are ordered after. Locked. */
static void prune(void)
{
    size_t n = g.nagents;
    if (!n) /* no stream has taken work: nothing is kept */
        return;
    uint32_t *floor = malloc((n ? n : 1) * sizeof *floor), *eff = malloc((g.width ? g.width : 1) * sizeof *eff);
    if (!floor || !eff) {
        free(floor), free(eff);
        return;
    }
    memcpy(floor, g.host, n * sizeof *floor);
    for (size_t a = 0; a < n; a++) {
        if (!g.agents[a].key)
            continue;
        memcpy(eff, g.vcs[a], g.width * sizeof *eff);
        issue((int)a); /* what its next operation would know, without keeping it */
        uint32_t *v = g.vcs[a];
        for (size_t i = 0; i < n; i++) {
            if (v[i] < floor[i])
                floor[i] = v[i];
        }
        memcpy(g.vcs[a], eff, g.width * sizeof *eff);
    }
    size_t k = 0;
    for (size_t i = 0; i < g.nops; i++) {
        order_op *o = g.ops[i];
        if (o->epoch <= floor[o->agent])
            op_free(o);
        else
            g.ops[k++] = o;
    }
    g.nops = k;
    g.pruned_at = k;
    free(floor), free(eff);
}

/* ---- reports ----------------------------------------------------------------------- */

static const char *const kind_names[] = {"Read", "Write", "Atomic"};

static int range_kind(int k)
{
    return (k & RACE_K_ATOMIC) ? 2 : (k & RACE_K_WRITE) ? 1 : 0;
}

static uint64_t hash_text(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = race_mix(h ^ (unsigned char)*s);
    return h;
}

static void side_text(const order_op *o, const order_range *r, char *buf, size_t n)
{
    const char *site = o->sites[r->site];
    if (site)
        snprintf(buf, n, "%s access at %s", kind_names[range_kind(r->kind)], site);
    else
        snprintf(buf, n, "%s access by %s", kind_names[range_kind(r->kind)], o->what);
}

/* The allocation behind an address, from the table of one of the two
 * operations' devices that holds it. */
static void describe_memory(const order_op *x, const order_op *y, uint64_t address, char *buf, size_t n)
{
    const order_op *ops[2] = {y, x};
    for (int i = 0; i < 2; i++)
        if (ops[i]->mem && mem_find_containing(ops[i]->mem, address)) {
            char d[96];
            check_describe_global(ops[i]->mem, address, d, sizeof d);
            snprintf(buf, n, "%s of device %d", d, ops[i]->device);
            return;
        }
    snprintf(buf, n, "an allocation of another device");
}

/* x ran before y in kemu (x is the older operation). */
static void report(const order_op *x, const order_range *rx, const order_op *y, const order_range *ry)
{
    char a[640], b[640];
    side_text(x, rx, a, sizeof a);
    side_text(y, ry, b, sizeof b);
    const char *nx = g.agents[x->agent].name, *ny = g.agents[y->agent].name;
    uint64_t h = hash_text(hash_text(hash_text(hash_text(0x5eed, a), b), nx), ny);
    if (check_set_add(&g.reported, h) != 1)
        return;
    uint64_t lo = rx->start > ry->start ? rx->start : ry->start;
    int wx = (rx->kind & RACE_K_WRITE) != 0, wy = (ry->kind & RACE_K_WRITE) != 0;
    const char *hazard = wx && wy ? "WAW" : wx ? "RAW" : "WAR";
    char where[160];
    describe_memory(x, y, lo, where, sizeof where);
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Race reported between %s\n", a);
    util_buffer_printf(&t, "    and %s [%s hazard]\n", b, hazard);
    util_buffer_printf(&t, "    in __global__ memory at 0x%llx (%s), between %s on %s and %s on %s, which no event "
                           "or synchronization orders\n",
                       (unsigned long long)lo, where, x->what, nx, y->what, ny);
    util_buffer_printf(&t, "    hint: a cudaStreamWaitEvent on %s for an event recorded on %s after the first "
                           "(or a synchronization between them) is missing; kemu ran them in issue order, a GPU "
                           "may overlap them",
                       ny, nx);
    check_session *s = y->s;
    uint64_t key[4] = {__atomic_load_n(&s->launches, __ATOMIC_RELAXED), UINT64_MAX - 2, ++g.seq, h};
    check_add(s, KEMU_TOOL_RACECHECK, CHECK_ERROR, key, t.data, NULL);
}

static int conflict(int a, int b)
{
    if (!((a | b) & RACE_K_WRITE))
        return 0;
    return !((a & RACE_K_STRONG) && (b & RACE_K_STRONG));
}

/* Compares o with every kept operation it is not ordered after. Locked. */
static void compare(const order_op *o)
{
    for (size_t i = 0; i < g.nops; i++) {
        const order_op *x = g.ops[i];
        if (x->agent == o->agent || o->vc[x->agent] >= x->epoch)
            continue;
        /* both range lists are sorted by start: a sweep */
        size_t j0 = 0;
        for (size_t k = 0; k < o->nr; k++) {
            const order_range *ry = &o->r[k];
            while (j0 < x->nr && x->r[j0].start + x->maxlen <= ry->start)
                j0++;
            for (size_t j = j0; j < x->nr && x->r[j].start < ry->end; j++) {
                const order_range *rx = &x->r[j];
                if (rx->end <= ry->start || !conflict(rx->kind, ry->kind))
                    continue;
                report(x, rx, o, ry);
            }
        }
    }
}

/* ---- operations -------------------------------------------------------------------- */

static int cmp_range(const void *a, const void *b)
{
    const order_range *x = a, *y = b;
    if (x->site != y->site) return x->site < y->site ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_start(const void *a, const void *b)
{
    const order_range *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Merges the ranges of one site and kind that overlap or touch, then sorts
 * them by address. */
static void compact(order_op *o)
{
    if (!o->nr)
        return;
    qsort(o->r, o->nr, sizeof *o->r, cmp_range);
    size_t k = 0;
    for (size_t i = 0; i < o->nr; i++) {
        order_range *c = &o->r[i];
        if (k) {
            order_range *p = &o->r[k - 1];
            if (p->site == c->site && p->kind == c->kind && c->start <= p->end) {
                if (c->end > p->end)
                    p->end = c->end;
                continue;
            }
        }
        o->r[k++] = *c;
    }
    o->nr = k;
    qsort(o->r, o->nr, sizeof *o->r, cmp_start);
    o->maxlen = 0;
    for (size_t i = 0; i < o->nr; i++)
        if (o->r[i].end - o->r[i].start > o->maxlen)
            o->maxlen = o->r[i].end - o->r[i].start;
}

void check_order_end(void)
{
    order_op *o = pending;
    if (!o)
        return;
    pending = NULL;
    compact(o);
    pthread_mutex_lock(&g.lock);
    if (op_fit(o)) {
        pthread_mutex_unlock(&g.lock);
        op_free(o);
        return;
    }
    if (o->nr)
        compare(o);
    if (o->host_waits)
        join(g.host, o->vc);
    for (int i = 0; i < o->nalso; i++)
        join(g.vcs[o->also[i]], o->vc);
    free(o->vc);
    o->vc = NULL;
    if (o->nr && !util_grow(&g.ops, &g.capops, g.nops + 1, sizeof *g.ops)) {
        g.ops[g.nops++] = o;
        o = NULL;
    }
    if (g.nops > 2 * g.pruned_at + 64)
        prune();
    pthread_mutex_unlock(&g.lock);
    op_free(o);
}

void check_order_begin(check_session *s, const mem_space *mem, int device, const check_stream *stream,
                       const char *what, int host_waits)
{
    check_order_end();
    if (!s || !(check_session_tools(s) & KEMU_TOOL_RACECHECK))
        return;
    order_op *o = calloc(1, sizeof *o);
    if (!o)
        return;
    o->s = s;
    o->mem = mem;
    o->device = device;
    o->host_waits = host_waits;
    o->what = strdup(what ? what : "an operation");
    pthread_mutex_lock(&g.lock);
    int a = agent_of(stream->key, stream->device, stream->kind, stream->name);
    if (a >= 0 && (o->vc = clock_new())) {
        issue(a);
        g.vcs[a][a]++;
        o->agent = a;
        o->epoch = g.vcs[a][a];
        o->vcw = g.width;
        memcpy(o->vc, g.vcs[a], g.width * sizeof *o->vc);
    }
    pthread_mutex_unlock(&g.lock);
    if (!o->vc || !o->what) {
        op_free(o);
        return;
    }
    pending = o;
}

/* A site of the pending op: NULL for the API call itself. */
static uint32_t site_add(order_op *o, char *text)
{
    if (!text && o->nsites && !o->sites[0])
        return 0;
    if (util_grow(&o->sites, &o->capsites, o->nsites + 1, sizeof *o->sites)) {
        free(text);
        return UINT32_MAX;
    }
    o->sites[o->nsites] = text;
    return (uint32_t)o->nsites++;
}

static void range_add(order_op *o, uint64_t start, uint64_t end, uint32_t site, int kind)
{
    if (site == UINT32_MAX || start >= end || util_grow(&o->r, &o->capr, o->nr + 1, sizeof *o->r))
        return;
    o->r[o->nr++] = (order_range){start, end, site, (uint8_t)kind};
}

void check_order_access(uint64_t address, uint64_t size, int write)
{
    order_op *o = pending;
    if (!o || !size)
        return;
    if (!o->nsites || o->sites[0])
        site_add(o, NULL);
    range_add(o, address, address + size, 0, write ? RACE_K_WRITE : 0);
}

int check_order_pending(void)
{
    return pending != NULL;
}

void check_order_also(const check_stream *other)
{
    order_op *o = pending;
    if (!o || o->nalso == 4)
        return;
    pthread_mutex_lock(&g.lock);
    int a = agent_of(other->key, other->device, other->kind, other->name);
    if (a >= 0 && a != o->agent && !op_fit(o)) {
        int known = 0;
        for (int i = 0; i < o->nalso; i++)
            known |= o->also[i] == a;
        if (!known) {
            issue(a);
            join(o->vc, g.vcs[a]);
            join(g.vcs[o->agent], g.vcs[a]);
            o->also[o->nalso++] = a;
        }
    }
    pthread_mutex_unlock(&g.lock);
}

int check_order_pending_legacy(void)
{
    if (!pending)
        return 0;
    pthread_mutex_lock(&g.lock);
    int legacy = g.agents[pending->agent].kind == CHECK_STREAM_LEGACY;
    pthread_mutex_unlock(&g.lock);
    return legacy;
}

void check_order_ignore(uint64_t address, uint64_t size)
{
    order_op *o = pending;
    if (!o || !size)
        return;
    size_t k = 0;
    for (size_t i = 0; i < o->nr; i++)
        if (o->r[i].end <= address || o->r[i].start >= address + size)
            o->r[k++] = o->r[i];
    o->nr = k;
}

void check_order_host_waits(void)
{
    if (pending)
        pending->host_waits = 1;
}

void check_order_forget_range(uint64_t address, uint64_t size)
{
    uint64_t end = address + size;
    pthread_mutex_lock(&g.lock);
    size_t k = 0;
    for (size_t i = 0; i < g.nops; i++) {
        order_op *o = g.ops[i];
        size_t m = 0;
        o->maxlen = 0;
        for (size_t j = 0; j < o->nr; j++)
            if (o->r[j].end <= address || o->r[j].start >= end) {
                o->r[m++] = o->r[j];
                if (o->r[j].end - o->r[j].start > o->maxlen)
                    o->maxlen = o->r[j].end - o->r[j].start;
            }
        o->nr = m;
        if (m)
            g.ops[k++] = o;
        else
            op_free(o);
    }
    g.nops = k;
    if (g.pruned_at > k)
        g.pruned_at = k;
    pthread_mutex_unlock(&g.lock);
}

/* The (function, pc) sites of a launch, so that each is described once. */
typedef struct site_key {
    uint32_t fn, pc, site;
} site_key;

void race_order_launch(check_launch *cl)
{
    order_op *o = pending;
    if (!o)
        return;
    if (!o->nsites || o->sites[0])
        site_add(o, NULL); /* site 0: the call itself */
    site_key *keys = NULL;
    size_t nkeys = 0, capkeys = 0;
    for (size_t t = 0; t < cl->nthreads; t++) {
        size_t n;
        race_interval *v = race_thread_intervals(cl->threads[t]->race, &n);
        for (size_t i = 0; i < n; i++) {
            uint32_t site = UINT32_MAX;
            for (size_t k = nkeys; k-- > 0;)
                if (keys[k].fn == v[i].fn && keys[k].pc == v[i].pc) {
                    site = keys[k].site;
                    break;
                }
            if (site == UINT32_MAX) {
                char d[512];
                check_describe_op(cl->L, check_function(cl->L, v[i].fn), v[i].pc, d, sizeof d);
                site = site_add(o, strdup(d));
                if (site != UINT32_MAX && !util_grow(&keys, &capkeys, nkeys + 1, sizeof *keys))
                    keys[nkeys++] = (site_key){v[i].fn, v[i].pc, site};
            }
            /* a strided range adds its elements, not the gaps between them */
            race_elems e = race_interval_elems(&v[i]);
            uint64_t s, end;
            for (uint64_t x = e.start; race_run_at(&e, x, &s, &end); x = end)
                range_add(o, s, end, site, v[i].kind & (RACE_K_WRITE | RACE_K_STRONG | RACE_K_ATOMIC));
        }
    }
    free(keys);
    if (o->nr > 4096) /* keep the pending op small while child grids add theirs */
        compact(o);
}

/* ---- streams, events, synchronization --------------------------------------------- */

static int stream_agent(const check_stream *st)
{
    return agent_of(st->key, st->device, st->kind, st->name);
}

void check_order_forget_stream(uint64_t key)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    int a = agent_find(key);
    if (a >= 0)
        g.agents[a].key = 0;
    pthread_mutex_unlock(&g.lock);
}

static order_event *event_find(uint64_t key, int make)
{
    for (size_t i = 0; i < g.nevents; i++)
        if (g.events[i].key == key)
            return &g.events[i];
    if (!make || util_grow(&g.events, &g.capevents, g.nevents + 1, sizeof *g.events))
        return NULL;
    order_event *e = &g.events[g.nevents];
    e->key = key;
    e->vc = clock_new();
    if (!e->vc)
        return NULL;
    g.nevents++;
    return e;
}

void check_order_event_record(uint64_t event, const check_stream *stream)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    int a = stream_agent(stream);
    order_event *e = a >= 0 ? event_find(event, 1) : NULL;
    if (e) {
        issue(a);
        memcpy(e->vc, g.vcs[a], g.width * sizeof *e->vc);
    }
    pthread_mutex_unlock(&g.lock);
}

void check_order_event_wait(const check_stream *stream, uint64_t event)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    int a = stream_agent(stream);
    order_event *e = event_find(event, 0);
    if (a >= 0 && e)
        join(g.vcs[a], e->vc);
    pthread_mutex_unlock(&g.lock);
}

void check_order_event_sync(uint64_t event)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    order_event *e = event_find(event, 0);
    if (e) {
        join(g.host, e->vc);
        prune();
    }
    pthread_mutex_unlock(&g.lock);
}

void check_order_forget_event(uint64_t event)
{
    pthread_mutex_lock(&g.lock);
    for (size_t i = 0; i < g.nevents; i++)
        if (g.events[i].key == event) {
            free(g.events[i].vc);
            g.events[i] = g.events[--g.nevents];
            break;
        }
    pthread_mutex_unlock(&g.lock);
}

void check_order_stream_sync(const check_stream *stream)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    int a = stream_agent(stream);
    if (a >= 0) {
        join(g.host, g.vcs[a]);
        if (g.agents[a].kind == CHECK_STREAM_LEGACY) /* as an operation of the legacy stream would wait */
            for (size_t i = 0; i < g.nagents; i++)
                if (g.agents[i].key && g.agents[i].device == g.agents[a].device &&
                    g.agents[i].kind == CHECK_STREAM_BLOCKING)
                    join(g.host, g.vcs[i]);
        prune();
    }
    pthread_mutex_unlock(&g.lock);
}

void check_order_device_sync(int device)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    for (size_t i = 0; i < g.nagents; i++)
        if (g.agents[i].key && g.agents[i].device == device)
            join(g.host, g.vcs[i]);
    prune();
    pthread_mutex_unlock(&g.lock);
}

void check_order_join(const check_stream *streams, int n)
{
    check_order_end();
    pthread_mutex_lock(&g.lock);
    int ok = 1;
    for (int i = 0; ok && i < n; i++) /* first every agent (the clocks may widen) */
        ok = stream_agent(&streams[i]) >= 0;
    uint32_t *all = ok ? clock_new() : NULL;
    ok = all != NULL;
    for (int i = 0; ok && i < n; i++)
        join(all, g.vcs[agent_find(streams[i].key)]);
    for (int i = 0; ok && i < n; i++)
        join(g.vcs[agent_find(streams[i].key)], all);
    free(all);
    pthread_mutex_unlock(&g.lock);
}

void check_order_forget_session(check_session *s)
{
    if (pending && pending->s == s) {
        op_free(pending);
        pending = NULL;
    }
    pthread_mutex_lock(&g.lock);
    size_t k = 0;
    for (size_t i = 0; i < g.nops; i++) {
        if (g.ops[i]->s == s)
            op_free(g.ops[i]);
        else
            g.ops[k++] = g.ops[i];
    }
    g.nops = k;
    if (g.pruned_at > k)
        g.pruned_at = k;
    pthread_mutex_unlock(&g.lock);
}

size_t check_order_kept(void)
{
    pthread_mutex_lock(&g.lock);
    size_t n = g.nops;
    pthread_mutex_unlock(&g.lock);
    return n;
}
