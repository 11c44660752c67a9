/* Checker sessions: the finding list, the life of one launch under the
 * checkers (hook table, per-host-thread state, merging the threads'
 * findings when the launch ends), host-side memory events (allocations,
 * copies, frees, leaks), and the deterministic report in the format of
 * compute-sanitizer. The analyses themselves live in race.c,
 * race_cross.c, memcheck.c, initcheck.c and synccheck.c; none of them
 * changes execution. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t check_mapped_granule(unsigned tools)
{
    return !(tools & KEMU_TOOL_MEMCHECK) && (tools & (KEMU_TOOL_RACECHECK | KEMU_TOOL_INITCHECK | KEMU_TOOL_SYNCCHECK))
               ? CHECK_MAPPED_GRANULE : 0;
}

check_session *check_session_create(const kemu_check_config *cfg)
{
    check_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cfg = *cfg;
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void check_session_destroy(check_session *s)
{
    if (!s)
        return;
    check_order_forget_session(s);
    for (size_t i = 0; i < s->nfindings; i++) {
        free(s->findings[i].text);
        free(s->findings[i].json);
    }
    free(s->findings);
    init_session_free(s);
    vm_heap_table_free(s->heap);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

unsigned check_session_tools(const check_session *s)
{
    return s ? s->cfg.tools : 0;
}

void check_add(check_session *s, int tool, int severity, const uint64_t key[4], char *text, char *json)
{
    pthread_mutex_lock(&s->lock);
    if (text && util_grow(&s->findings, &s->capfindings, s->nfindings + 1, sizeof *s->findings) == 0) {
        check_finding *f = &s->findings[s->nfindings++];
        f->tool = tool;
        f->severity = severity;
        memcpy(f->key, key, sizeof f->key);
        f->text = text;
        f->json = json;
    } else {
        free(text);
        free(json);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- descriptions ------------------------------------------------------- */

void check_describe_op(const vm_launch *L, const bc_function *fn, uint32_t pc, char *buf, size_t n)
{
    if (!fn)
        fn = L->kernel;
    const bc_src *src = pc < fn->ncode && fn->code[pc].src < fn->nsrcs ? &fn->srcs[fn->code[pc].src] : NULL;
    int k = snprintf(buf, n, "%s+%u", fn->name, pc);
    if (src && k > 0 && (size_t)k < n) {
        k += snprintf(buf + k, n - (size_t)k, " (%s:%d", L->ptx_filename, src->line);
        if (src->loc_file > 0 && src->loc_file < L->nloc_files && L->loc_files[src->loc_file] && (size_t)k < n)
            k += snprintf(buf + k, n - (size_t)k, ", %s:%d", L->loc_files[src->loc_file], src->loc_line);
        if ((size_t)k < n)
            snprintf(buf + k, n - (size_t)k, ")");
    }
}

void check_describe_pc(const vm_launch *L, const vm_frame *f, uint32_t pc, char *buf, size_t n)
{
    check_describe_op(L, f ? f->fn : L->kernel, pc, buf, n);
}

void check_block_coords(const vm_launch *L, uint64_t id, char *buf, size_t n)
{
    uint64_t gx = L->grid[0] ? L->grid[0] : 1, gy = L->grid[1] ? L->grid[1] : 1;
    snprintf(buf, n, "(%llu,%llu,%llu)", (unsigned long long)(id % gx), (unsigned long long)(id / gx % gy),
             (unsigned long long)(id / (gx * gy)));
}

void check_thread_coords(const vm_launch *L, uint64_t t, char *buf, size_t n)
{
    uint64_t bx = L->block[0] ? L->block[0] : 1, by = L->block[1] ? L->block[1] : 1;
    snprintf(buf, n, "(%llu,%llu,%llu)", (unsigned long long)(t % bx), (unsigned long long)(t / bx % by),
             (unsigned long long)(t / (bx * by)));
}

const bc_function *check_function(const vm_launch *L, uint32_t i)
{
    return i < (uint32_t)L->mod->nfunctions ? L->mod->functions[i] : L->kernel;
}

void check_describe_global(const mem_space *mem, uint64_t addr, char *buf, size_t n)
{
    const mem_allocation *a = mem_find_containing(mem, addr);
    if (a) {
        snprintf(buf, n, "allocation #%llu + %llu", (unsigned long long)a->id, (unsigned long long)(addr - a->base));
        return;
    }
    a = mem_find_freed(mem, addr);
    if (a) {
        snprintf(buf, n, "freed allocation #%llu + %llu", (unsigned long long)a->id,
                 (unsigned long long)(addr - a->base));
        return;
    }
    snprintf(buf, n, "outside every allocation");
}

uint8_t *check_shared_ptr(vm_block *b, unsigned rank, uint64_t offset, unsigned size)
{
    vm_block *t = b;
    if (b->cluster && rank < (unsigned)b->cluster->n)
        t = &b->cluster->blocks[rank];
    if (!t->shared || offset + size > t->shared_size || offset + size < offset)
        return NULL;
    return t->shared + offset;
}

/* ---- host threads ----------------------------------------------------------- */

static uint64_t serial_counter;
static _Thread_local check_thread *tls_thread;
static _Thread_local uint64_t tls_serial;

check_thread *check_thread_get(check_launch *cl)
{
    if (tls_thread && tls_serial == cl->serial)
        return tls_thread;
    check_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->launch = cl;
    if ((cl->tools & KEMU_TOOL_RACECHECK) && race_thread_init(t)) {
        free(t);
        return NULL;
    }
    pthread_mutex_lock(&cl->lock);
    if (util_grow(&cl->threads, &cl->capthreads, cl->nthreads + 1, sizeof *cl->threads)) {
        pthread_mutex_unlock(&cl->lock);
        race_thread_free(t->race);
        free(t);
        return NULL;
    }
    cl->threads[cl->nthreads++] = t;
    pthread_mutex_unlock(&cl->lock);
    tls_thread = t;
    tls_serial = cl->serial;
    return t;
}

static void thread_free(check_thread *t)
{
    check_groups_free(&t->groups);
    race_thread_free(t->race);
    init_thread_free(t->init);
    sync_thread_free(t->sync);
    mem_thread_free(t->mem);
    free(t);
}

/* ---- hooks ------------------------------------------------------------------ */

static void h_block_begin(void *ctx, vm_block *b)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    if (cl->tools & KEMU_TOOL_RACECHECK)
        race_block_begin(t, b);
    if (cl->tools & KEMU_TOOL_INITCHECK)
        init_block_begin(t, b);
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_block_begin(t, b);
}

static void h_block_end(void *ctx, vm_block *b)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t && (cl->tools & KEMU_TOOL_RACECHECK))
        race_block_end(t, b);
    if (t && (cl->tools & KEMU_TOOL_SYNCCHECK))
        sync_block_end(t, b);
}

static void h_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                     const vm_access_lanes *lanes, unsigned size)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_access(t, b, w, f, pc, kind, mask, lanes, size);
    if (cl->tools & KEMU_TOOL_RACECHECK)
        race_access(t, b, w, f, pc, kind, mask, lanes, size);
    if (cl->tools & KEMU_TOOL_INITCHECK)
        init_access(t, b, w, f, pc, kind, mask, lanes, size);
}

static void h_barrier(void *ctx, vm_block *b, int id)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    if (cl->tools & KEMU_TOOL_RACECHECK)
        race_barrier(t, b, id);
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_barrier(t, b, id);
}

static void h_barrier_arrive(void *ctx, vm_block *b, vm_warp *w, int id)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_barrier_arrive(t, b, w, id);
    if (cl->tools & KEMU_TOOL_RACECHECK)
        race_barrier_arrive(t, b, w, id);
}

static void h_divergent_barrier(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int id,
                                uint32_t arrived, uint32_t missing)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    (void)missing;
    if (t)
        sync_divergent_barrier(t, b, w, f, pc, id, arrived);
}

static void h_warp_sync(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t active,
                        uint32_t member)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_warp_sync(t, b, w, f, pc, active, member);
    if (cl->tools & KEMU_TOOL_RACECHECK)
        race_warp_sync(t, b, w, active, member);
}

static void h_fence(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask, int scope)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t && (cl->tools & KEMU_TOOL_RACECHECK))
        race_fence(t, b, w, f, pc, mask, scope);
}

static void h_cluster_barrier(void *ctx, vm_block *b)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t && (cl->tools & KEMU_TOOL_RACECHECK))
        race_cluster_barrier(t, b);
}

static void h_op(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t)
        init_op(t, b, w, f, pc, mask);
}

static void h_bad_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, int space,
                         uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t)
        mem_bad_access(t, b, w, f, pc, kind, space, mask, addr, imm, size);
}

static int order_less(const uint64_t a[3], const uint64_t b[3])
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static void h_mapped_access(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind,
                            uint32_t mask, const uint64_t *addr, unsigned size)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (!t)
        return;
    check_mapped *m = &t->mapped;
    int l = __builtin_ctz(mask);
    uint64_t order[3] = {b->linear_id, (uint64_t)w->index * VM_WARP + (uint64_t)l,
                         ((uint64_t)(uint32_t)f->fn->index << 32) | pc};
    if (!m->lanes || order_less(order, m->order)) {
        memcpy(m->order, order, sizeof order);
        m->address = addr[l];
        m->size = size;
        m->kind = kind;
    }
    m->lanes += (uint64_t)__builtin_popcount(mask);
}

/* The launch's one-line note on accesses that went on in a mapped granule. */
static void mapped_note(check_launch *cl)
{
    const vm_launch *L = cl->L;
    check_mapped all = {0};
    for (size_t i = 0; i < cl->nthreads; i++) {
        const check_mapped *m = &cl->threads[i]->mapped;
        if (!m->lanes)
            continue;
        uint64_t n = all.lanes + m->lanes;
        if (!all.lanes || order_less(m->order, all.order))
            all = *m;
        all.lanes = n;
    }
    /* after a fault, blocks past the faulting one may or may not have run */
    uint64_t last = __atomic_load_n(&L->abort_id, __ATOMIC_RELAXED);
    if (!all.lanes || all.order[0] > last)
        return;
    char op[512], blk[64], thr[64], where[256] = "";
    check_describe_op(L, check_function(L, (uint32_t)(all.order[2] >> 32)), (uint32_t)all.order[2], op, sizeof op);
    check_block_coords(L, all.order[0], blk, sizeof blk);
    check_thread_coords(L, all.order[1], thr, sizeof thr);
    const mem_allocation *a = mem_find_below(L->mem, all.address);
    if (a)
        snprintf(where, sizeof where, "%llu bytes past the end of allocation #%llu of %llu bytes",
                 (unsigned long long)(all.address - (a->base + a->size)), (unsigned long long)a->id,
                 (unsigned long long)a->size);
    char count[64] = "";
    if (last == UINT64_MAX)
        snprintf(count, sizeof count, " (%llu thread access%s)", (unsigned long long)all.lanes,
                 all.lanes == 1 ? "" : "es");
    util_buffer t = {0};
    util_buffer_printf(&t, "Note: kernel %s accessed global memory past the end of an allocation but inside its "
                           "mapped %llu MiB granule%s: as on a GPU, the launch went on, loads reading the "
                           "uninitialized fill and stores dropped (--tool memcheck reports each); the first: %u-byte "
                           "%s at 0x%llx (%s) by thread %s of block %s at %s",
                       L->kernel->name, (unsigned long long)(L->mapped_granule >> 20), count, all.size,
                       all.kind == VM_ACCESS_LOAD ? "load" : all.kind == VM_ACCESS_STORE ? "store" : "atomic",
                       (unsigned long long)all.address, where, thr, blk, op);
    uint64_t key[4] = {cl->number, 0, 0, 0};
    check_add(cl->s, cl->tools & KEMU_TOOL_RACECHECK ? KEMU_TOOL_RACECHECK
                     : cl->tools & KEMU_TOOL_INITCHECK ? KEMU_TOOL_INITCHECK : KEMU_TOOL_SYNCCHECK,
              CHECK_INFO, key, t.data, NULL);
}

/* ---- launches ----------------------------------------------------------------- */

static void h_heap_misuse(void *ctx, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                          const char *reason)
{
    check_launch *cl = ctx;
    check_thread *t = check_thread_get(cl);
    if (t)
        mem_heap_misuse(t, b, w, f, pc, lane, reason);
}

const vm_hooks *check_launch_begin(check_session *s, vm_launch *L)
{
    pthread_mutex_lock(&s->lock);
    uint64_t number = ++s->launches;
    pthread_mutex_unlock(&s->lock);
    unsigned tools = s->cfg.tools & (KEMU_TOOL_MEMCHECK | KEMU_TOOL_RACECHECK | KEMU_TOOL_INITCHECK | KEMU_TOOL_SYNCCHECK);
    if (!tools)
        return NULL;
    if ((tools & KEMU_TOOL_MEMCHECK) && L->heap_base) {
        /* device malloc records its allocations from now on */
        if (!s->heap)
            s->heap = vm_heap_table_new(L->heap_base, L->heap_size, L->heap_used);
        if (s->heap && vm_heap_table_launch(s->heap, L->kernel->name) == 0)
            L->heap_table = s->heap;
    }
    check_launch *cl = calloc(1, sizeof *cl);
    if (!cl)
        return NULL;
    cl->s = s;
    cl->L = L;
    cl->number = number;
    cl->serial = __atomic_add_fetch(&serial_counter, 1, __ATOMIC_RELAXED);
    cl->tools = tools;
    pthread_mutex_init(&cl->lock, NULL);
    if (tools & (KEMU_TOOL_RACECHECK | KEMU_TOOL_SYNCCHECK)) {
        cl->ops = check_opinfo_build(L->mod);
        if (!cl->ops) {
            pthread_mutex_destroy(&cl->lock);
            free(cl);
            return NULL;
        }
    }
    vm_hooks *h = &s->hooks;
    memset(h, 0, sizeof *h);
    h->ctx = cl;
    if (tools & (KEMU_TOOL_RACECHECK | KEMU_TOOL_INITCHECK | KEMU_TOOL_SYNCCHECK)) {
        h->block_begin = h_block_begin;
        h->block_end = h_block_end;
        h->access = h_access;
    }
    if (tools & (KEMU_TOOL_RACECHECK | KEMU_TOOL_SYNCCHECK)) {
        h->barrier = h_barrier;
        h->barrier_arrive = h_barrier_arrive;
        h->warp_sync = h_warp_sync;
    }
    if (tools & KEMU_TOOL_SYNCCHECK)
        h->divergent_barrier = h_divergent_barrier;
    if (tools & KEMU_TOOL_RACECHECK) {
        h->fence = h_fence;
        h->cluster_barrier = h_cluster_barrier;
    }
    if (tools & KEMU_TOOL_INITCHECK)
        h->op = h_op;
    if (tools & KEMU_TOOL_MEMCHECK) {
        h->bad_access = h_bad_access;
        h->heap_misuse = h_heap_misuse;
    } else if (check_mapped_granule(tools)) {
        /* without memcheck, model the GPU: a read a few bytes past an
         * allocation does not trap there (its pages are mapped), so the
         * launch goes on to the races and syncs after it */
        L->mapped_granule = check_mapped_granule(tools);
        h->mapped_access = h_mapped_access;
    }
    s->cur = cl;
    if (tools == KEMU_TOOL_MEMCHECK && !L->heap_table) {
        /* memcheck alone, with no device heap to watch, only looks at
         * faults: no hook table, so the interpreter keeps every fast path */
        L->fault_hooks = h;
        return NULL;
    }
    return h;
}

static int tool_rank(int tool)
{
    switch (tool) {
    case KEMU_TOOL_MEMCHECK: return 1;
    case KEMU_TOOL_RACECHECK: return 2;
    case KEMU_TOOL_INITCHECK: return 3;
    default: return 4;
    }
}

static void emit_groups(check_launch *cl, check_groups *all)
{
    for (size_t i = 0; i < all->n; i++) {
        const check_group *g = &all->v[i];
        char *text = NULL;
        if (g->tool == KEMU_TOOL_RACECHECK)
            text = race_render(cl, g);
        else if (g->tool == KEMU_TOOL_INITCHECK)
            text = init_render(cl, g);
        else if (g->tool == KEMU_TOOL_SYNCCHECK)
            text = sync_render(cl, g);
        if (!text)
            continue;
        util_buffer j = {0};
        util_buffer_printf(&j, "{\"launch\": %llu, \"kernel\": \"%s\", \"instances\": %llu}",
                           (unsigned long long)cl->number, cl->L->kernel->name,
                           (unsigned long long)check_group_count(g));
        uint64_t key[4] = {cl->number, ((uint64_t)tool_rank(g->tool) << 56) | (g->id[0] & 0x00ffffffffffffffull),
                           g->id[1], g->id[2]};
        check_add(cl->s, g->tool, g->severity, key, text, j.data);
    }
}

void check_launch_end(check_session *s, vm_launch *L, const vm_fault *fault)
{
    check_launch *cl = s->cur;
    if (!cl || cl->L != L)
        return;
    s->cur = NULL;
    uint64_t last = __atomic_load_n(&L->abort_id, __ATOMIC_RELAXED);
    if (L->heap_table && last != UINT64_MAX) {
        /* blocks after the faulting one may or may not have run, depending
         * on the host threads: their device-heap allocations are dropped
         * from leak reports */
        vm_heap_table *h = L->heap_table;
        for (size_t i = 0; i < h->n; i++)
            if (h->v[i].launch == h->launch && h->v[i].block > last && !h->v[i].freed)
                h->v[i].freed = 2;
    }
    check_groups all = {0};
    if (cl->tools & KEMU_TOOL_RACECHECK) {
        race_launch_end(cl, &all);
        race_order_launch(cl);
    }
    if (cl->tools & KEMU_TOOL_MEMCHECK)
        mem_launch_end(cl, fault);
    if (cl->tools & KEMU_TOOL_SYNCCHECK)
        sync_launch_end(cl, fault);
    if (L->mapped_granule)
        mapped_note(cl);
    for (size_t i = 0; i < cl->nthreads; i++)
        check_groups_merge(&all, &cl->threads[i]->groups);
    emit_groups(cl, &all);
    check_groups_free(&all);
    for (size_t i = 0; i < cl->nthreads; i++)
        thread_free(cl->threads[i]);
    free(cl->threads);
    check_opinfo_free(cl->ops, L->mod);
    pthread_mutex_destroy(&cl->lock);
    memset(&s->hooks, 0, sizeof s->hooks);
    free(cl);
}

check_mark check_mark_now(check_session *s)
{
    pthread_mutex_lock(&s->lock);
    check_mark m = {s->nfindings, s->heap ? s->heap->launch : 0};
    pthread_mutex_unlock(&s->lock);
    return m;
}

void check_rollback(check_session *s, check_mark m)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = m.nfindings; i < s->nfindings; i++) {
        free(s->findings[i].text);
        free(s->findings[i].json);
    }
    if (s->nfindings > m.nfindings)
        s->nfindings = m.nfindings;
    if (s->heap) {
        vm_heap_table *h = s->heap;
        size_t k = 0;
        for (size_t i = 0; i < h->n; i++)
            if (h->v[i].launch <= m.heap_launch)
                h->v[k++] = h->v[i];
        h->n = k;
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- host-side memory events ---------------------------------------------- */

void check_note_invalid_free(check_session *s, uint64_t address, const char *api)
{
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK))
        return;
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Invalid free of 0x%llx by %s: not the start of a live device allocation",
                       (unsigned long long)address, api);
    uint64_t key[4] = {s->launches, 1, address, 0};
    check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
}

void check_note_free(check_session *s, const mem_space *mem, uint64_t address, const char *api)
{
    const mem_allocation *a = mem_find_containing(mem, address);
    if (a && a->base == address && a->kind == MEM_KIND_USER) {
        pthread_mutex_lock(&s->lock);
        init_note_free(s, address);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK))
        return;
    const mem_allocation *f = mem_find_freed(mem, address);
    if (!f || f->base != address || f->kind != MEM_KIND_USER) {
        check_note_invalid_free(s, address, api);
        return;
    }
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Double free of 0x%llx by %s: allocation #%llu (%llu bytes) was freed before",
                       (unsigned long long)address, api, (unsigned long long)f->id, (unsigned long long)f->size);
    uint64_t key[4] = {s->launches, 1, address, 1};
    check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
}

void check_note_alloc(check_session *s, const mem_space *mem, uint64_t address)
{
    if (!(s->cfg.tools & KEMU_TOOL_INITCHECK))
        return;
    const mem_allocation *a = mem_find_containing(mem, address);
    if (!a || a->kind != MEM_KIND_USER)
        return;
    pthread_mutex_lock(&s->lock);
    init_note_alloc(s, a);
    pthread_mutex_unlock(&s->lock);
}

void check_note_host_write(check_session *s, const mem_space *mem, uint64_t address, uint64_t size)
{
    if (!(s->cfg.tools & KEMU_TOOL_INITCHECK) || !size)
        return;
    pthread_mutex_lock(&s->lock);
    init_note_write(s, mem, address, size);
    pthread_mutex_unlock(&s->lock);
}

void check_note_host_read(check_session *s, const mem_space *mem, uint64_t address, uint64_t width, uint64_t height,
                          uint64_t pitch, const char *who)
{
    if (!(s->cfg.tools & KEMU_TOOL_INITCHECK) || !width || !height)
        return;
    uint64_t first = 0, count = 0, size = width * height;
    pthread_mutex_lock(&s->lock);
    for (uint64_t r = 0; r < height; r++) {
        uint64_t f, n;
        if (init_unwritten(s, address + r * pitch, width, &f, &n)) {
            if (!count)
                first = f;
            count += n;
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (!count)
        return;
    char d[128];
    check_describe_global(mem, first, d, sizeof d);
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: Uninitialized __global__ memory read by %s: %llu of its %llu bytes never written\n"
                           "    Address 0x%llx (%s) is the first",
                       who, (unsigned long long)count, (unsigned long long)size, (unsigned long long)first, d);
    uint64_t key[4] = {s->launches, 2, address, size};
    check_add(s, KEMU_TOOL_INITCHECK, CHECK_ERROR, key, t.data, NULL);
}

static int cmp_chunk(const void *a, const void *b)
{
    const vm_heap_chunk *x = *(const vm_heap_chunk *const *)a, *y = *(const vm_heap_chunk *const *)b;
    uint64_t kx[4] = {x->launch, x->block, x->tid_linear, x->base}, ky[4] = {y->launch, y->block, y->tid_linear, y->base};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* Device-heap allocations never freed, in the order (launch, block,
 * thread, that thread's allocations in order): the same for any number of
 * host threads, unlike their addresses. */
static void heap_leaks(check_session *s, uint64_t *total, uint64_t *count)
{
    vm_heap_table *h = s->heap;
    if (!h || !h->n)
        return;
    const vm_heap_chunk **v = malloc(h->n * sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    for (size_t i = 0; i < h->n; i++)
        if (!h->v[i].freed)
            v[n++] = &h->v[i];
    qsort(v, n, sizeof *v, cmp_chunk);
    uint64_t seq = 0;
    for (size_t i = 0; i < n; i++) {
        const vm_heap_chunk *c = v[i];
        seq = i && c->launch == v[i - 1]->launch && c->block == v[i - 1]->block && c->tid_linear == v[i - 1]->tid_linear
            ? seq + 1 : 0;
        util_buffer t = {0};
        util_buffer_printf(&t, "Error: Leaked %llu bytes on the device heap (malloc by thread (%u,%u,%u) of block (%u,%u,%u) in kernel %s)",
                           (unsigned long long)c->size, c->tid[0], c->tid[1], c->tid[2], c->ctaid[0], c->ctaid[1],
                           c->ctaid[2], c->kernel < (uint32_t)h->nkernels ? h->kernels[c->kernel] : "?");
        uint64_t key[4] = {UINT64_MAX, 2, (1ull << 63) | ((uint64_t)c->launch << 40) | (c->block & 0xffffffffffull),
                           ((uint64_t)c->tid_linear << 32) | seq};
        check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
        *total += c->size;
        (*count)++;
    }
    free(v);
}

void check_note_leaks(check_session *s, const mem_space *mem)
{
    if (!(s->cfg.tools & KEMU_TOOL_MEMCHECK) || !s->cfg.leak_check)
        return;
    /* the allocations live now replace the leaks noted by an earlier call */
    pthread_mutex_lock(&s->lock);
    size_t kept = 0;
    for (size_t i = 0; i < s->nfindings; i++) {
        check_finding *f = &s->findings[i];
        if (f->key[0] == UINT64_MAX && (f->key[1] == 2 || f->key[1] == 3)) {
            free(f->text);
            free(f->json);
            continue;
        }
        s->findings[kept++] = *f;
    }
    s->nfindings = kept;
    pthread_mutex_unlock(&s->lock);
    uint64_t total = 0, n = 0;
    for (size_t i = 0; i < mem->count; i++) {
        const mem_allocation *a = &mem->allocs[i];
        if (a->kind != MEM_KIND_USER)
            continue;
        util_buffer t = {0};
        util_buffer_printf(&t, "Error: Leaked %llu bytes at 0x%llx (allocation #%llu)", (unsigned long long)a->size,
                           (unsigned long long)a->base, (unsigned long long)a->id);
        uint64_t key[4] = {UINT64_MAX, 2, a->id, 0};
        check_add(s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
        total += a->size;
        n++;
    }
    heap_leaks(s, &total, &n);
    if (n) {
        util_buffer t = {0};
        util_buffer_printf(&t, "LEAK SUMMARY: %llu bytes leaked in %llu allocation%s", (unsigned long long)total,
                           (unsigned long long)n, n == 1 ? "" : "s");
        uint64_t key[4] = {UINT64_MAX, 3, 0, 0};
        check_add(s, KEMU_TOOL_MEMCHECK, CHECK_INFO, key, t.data, NULL);
    }
}

/* ---- the report ------------------------------------------------------------------ */

size_t check_session_count(check_session *s)
{
    pthread_mutex_lock(&s->lock);
    size_t n = s->nfindings;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static int cmp_finding(const void *a, const void *b)
{
    const check_finding *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i] ? -1 : 1;
    return strcmp(x->text, y->text);
}

static void append_prefixed(util_buffer *b, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        util_buffer_printf(b, "========= %.*s\n", (int)len, p);
        p += len + (nl ? 1 : 0);
    }
}

static void json_escape(util_buffer *b, const char *s)
{
    util_buffer_append(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            util_buffer_printf(b, "\\%c", c);
        else if (c == '\n')
            util_buffer_append(b, "\\n", 2);
        else if (c < 0x20)
            util_buffer_printf(b, "\\u%04x", c);
        else
            util_buffer_append(b, s, 1);
    }
    util_buffer_append(b, "\"", 1);
}

static const char *tool_name(int tool)
{
    switch (tool) {
    case KEMU_TOOL_MEMCHECK: return "memcheck";
    case KEMU_TOOL_RACECHECK: return "racecheck";
    case KEMU_TOOL_INITCHECK: return "initcheck";
    case KEMU_TOOL_SYNCCHECK: return "synccheck";
    default: return "";
    }
}

void check_session_report(check_session *s, int print_limit, util_buffer *text, util_buffer *json, size_t *errors,
                          size_t *warnings)
{
    pthread_mutex_lock(&s->lock);
    if (s->nfindings)
        qsort(s->findings, s->nfindings, sizeof *s->findings, cmp_finding);
    size_t ne = 0, nw = 0, printed = 0;
    if (text)
        util_buffer_printf(text, "========= KEMU\n");
    if (json)
        util_buffer_printf(json, "{\"findings\": [");
    size_t race_e = 0, race_w = 0, race_printed = 0;
    for (size_t i = 0; i < s->nfindings; i++) {
        const check_finding *f = &s->findings[i];
        if (f->severity == CHECK_ERROR) ne++;
        else if (f->severity == CHECK_WARNING) nw++;
        int shown = print_limit <= 0 || printed < (size_t)print_limit || f->severity > CHECK_WARNING;
        if (f->tool == KEMU_TOOL_RACECHECK) {
            if (f->severity == CHECK_ERROR) race_e++; else if (f->severity == CHECK_WARNING) race_w++;
            if (shown && f->severity <= CHECK_WARNING)
                race_printed++;
        }
        if (text && shown) {
            append_prefixed(text, f->text);
            if (f->severity <= CHECK_WARNING)
                printed++;
        }
        if (json) {
            util_buffer_printf(json, "%s\n  {\"tool\": \"%s\", \"severity\": \"%s\", \"text\": ", i ? "," : "",
                               tool_name(f->tool), f->severity == CHECK_ERROR ? "error" : f->severity == CHECK_WARNING ? "warning" : "info");
            json_escape(json, f->text);
            if (f->json)
                util_buffer_printf(json, ", \"details\": %s", f->json);
            util_buffer_printf(json, "}");
        }
    }
    if (text) {
        if (print_limit > 0 && ne + nw > (size_t)print_limit)
            util_buffer_printf(text, "========= %zu more findings not printed (--print-limit %d)\n",
                               ne + nw - (size_t)print_limit, print_limit);
        if (s->cfg.tools & KEMU_TOOL_RACECHECK)
            util_buffer_printf(text, "========= RACECHECK SUMMARY: %zu hazard%s displayed (%zu error%s, %zu warning%s)\n",
                               race_printed, race_printed == 1 ? "" : "s", race_e, race_e == 1 ? "" : "s",
                               race_w, race_w == 1 ? "" : "s");
        util_buffer_printf(text, "========= ERROR SUMMARY: %zu error%s\n", ne, ne == 1 ? "" : "s");
    }
    if (json)
        util_buffer_printf(json, "\n], \"errors\": %zu, \"warnings\": %zu}\n", ne, nw);
    pthread_mutex_unlock(&s->lock);
    if (errors) *errors = ne;
    if (warnings) *warnings = nw;
}
