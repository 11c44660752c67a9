/* initcheck: reads of memory and registers never written.
 *
 * Global memory: every user allocation (kemu_malloc and the runtimes built
 * on it) has a shadow bitmap, one bit per byte, set by host copies and
 * memsets and by kernel stores and atomics; a kernel load or atomic of a
 * byte whose bit is clear is reported. Module variables and the device
 * heap count as written. Shared memory: a shadow per block, cleared when
 * the block starts. Registers: one lane mask per register slot and call
 * frame, set by the ops that write the slot; an op reading a slot for a
 * lane that never wrote it on the executed path is reported. Findings are
 * grouped per op (and register) and counted per thread. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct init_frame {
    const vm_frame *f;
    uint32_t *bits;          /* per slot: lanes that wrote it */
    uint32_t nslots;
} init_frame;

typedef struct init_warp {
    init_frame *v;
    size_t n, cap;
} init_warp;

/* The state of one block of the group a host thread runs (a cluster, or a
 * cooperative grid), by its index in the group. */
typedef struct init_rank {
    uint8_t *shared;
    size_t shared_cap;
    init_warp warps[VM_WARP];  /* by warp index (at most 32 warps per block) */
} init_rank;

struct init_thread {
    init_rank *ranks;
    size_t nranks;
    const check_init_alloc *last;
};

enum { INIT_GLOBAL = 1, INIT_SHARED = 2, INIT_REGISTER = 3 };

static struct init_thread *state(check_thread *t)
{
    if (!t->init)
        t->init = calloc(1, sizeof *t->init);
    return t->init;
}

static void warp_clear(init_warp *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i].bits);
    w->n = 0;
}

void init_thread_free(struct init_thread *i)
{
    if (!i)
        return;
    for (size_t r = 0; r < i->nranks; r++) {
        free(i->ranks[r].shared);
        for (int k = 0; k < VM_WARP; k++) {
            warp_clear(&i->ranks[r].warps[k]);
            free(i->ranks[r].warps[k].v);
        }
    }
    free(i->ranks);
    free(i);
}

/* The state of the block with index rank in its group (NULL when out of
 * memory); new entries start zeroed. */
static init_rank *rank_state(struct init_thread *s, unsigned rank)
{
    if (util_grow(&s->ranks, &s->nranks, (size_t)rank + 1, sizeof *s->ranks))
        return NULL;
    return &s->ranks[rank];
}

void init_block_begin(check_thread *t, vm_block *b)
{
    struct init_thread *s = state(t);
    init_rank *r = s ? rank_state(s, b->rank) : NULL;
    if (!r)
        return;
    size_t need = (size_t)b->shared_size;
    if (need > r->shared_cap) {
        uint8_t *p = realloc(r->shared, need);
        if (!p)
            return;
        r->shared = p;
        r->shared_cap = need;
    }
    if (need)
        memset(r->shared, 0, need);
    for (int k = 0; k < VM_WARP; k++)
        warp_clear(&r->warps[k]);
}

/* ---- findings ---------------------------------------------------------------- */

static void note(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int what, uint32_t slot,
                 int lane, uint64_t address, unsigned size)
{
    uint64_t id[3] = {((uint64_t)f->fn->index << 32) | pc, slot, (uint64_t)what};
    check_group *g = check_groups_get(&t->groups, KEMU_TOOL_INITCHECK, CHECK_ERROR, id);
    if (!g)
        return;
    uint32_t tid = (uint32_t)(w->index * VM_WARP + lane);
    check_rep rep;
    memset(&rep, 0, sizeof rep);
    rep.order[0] = b->linear_id;
    rep.order[1] = tid;
    rep.order[2] = address;
    rep.block[0] = b->linear_id;
    rep.tid[0] = tid;
    rep.address = address;
    rep.a = size;
    rep.b = b->rank;
    check_group_note(g, (b->linear_id << 11) ^ ((uint64_t)tid + 1) ^ (b->linear_id >> 53), &rep);
}

/* ---- memory ------------------------------------------------------------------- */

static const check_init_alloc *find_alloc(const check_session *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->allocs[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const check_init_alloc *a = &s->allocs[lo - 1];
    return addr - a->base < a->size ? a : NULL;
}

static inline int bit_get(const uint8_t *bits, uint64_t i)
{
    return (__atomic_load_n(&bits[i >> 3], __ATOMIC_RELAXED) >> (i & 7)) & 1;
}

static inline void bit_set(uint8_t *bits, uint64_t i)
{
    uint8_t m = (uint8_t)(1u << (i & 7));
    if (!(__atomic_load_n(&bits[i >> 3], __ATOMIC_RELAXED) & m))
        __atomic_fetch_or(&bits[i >> 3], m, __ATOMIC_RELAXED);
}

void init_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, uint32_t mask,
                 const vm_access_lanes *lanes, unsigned size)
{
    struct init_thread *s = state(t);
    if (!s)
        return;
    const bc_op *op = &f->fn->code[pc];
    int reads = kind != VM_ACCESS_STORE, writes = kind != VM_ACCESS_LOAD;
    if (op->code == BC_MBARRIER) {
        if (op->mode2 != BC_MB_INIT)
            return; /* synccheck's business */
        reads = 0;
    }
    const check_session *ss = t->launch->s;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t a = lanes->where[l];
        if (lanes->space[l] == BC_SPACE_GLOBAL) {
            const check_init_alloc *al = s->last;
            if (!al || a < al->base || a - al->base >= al->size)
                al = find_alloc(ss, a);
            if (!al)
                continue;
            s->last = al;
            uint64_t off = a - al->base, n = size;
            if (off + n > al->size)
                n = al->size - off;
            if (reads)
                for (uint64_t k = 0; k < n; k++)
                    if (!bit_get(al->written, off + k)) {
                        note(t, b, w, f, pc, INIT_GLOBAL, 0, l, a + k, size);
                        break;
                    }
            if (writes)
                for (uint64_t k = 0; k < n; k++)
                    bit_set(al->written, off + k);
        } else if (lanes->space[l] == BC_SPACE_SHARED && lanes->rank[l] < s->nranks) {
            uint8_t *sh = s->ranks[lanes->rank[l]].shared;
            size_t cap = s->ranks[lanes->rank[l]].shared_cap;
            if (!sh || a + size > cap)
                continue;
            if (reads)
                for (unsigned k = 0; k < size; k++)
                    if (!sh[a + k]) {
                        /* grouped apart only when it is another block's (cluster) shared memory */
                        note(t, b, w, f, pc, INIT_SHARED, lanes->rank[l] == b->rank ? 0 : 1u + lanes->rank[l], l,
                             a + k, size);
                        break;
                    }
            if (writes)
                memset(sh + a, 1, size);
        }
    }
}

/* ---- registers -------------------------------------------------------------------- */

static init_frame *frame_state(struct init_thread *s, vm_block *b, vm_warp *w, const vm_frame *f)
{
    init_rank *r = rank_state(s, b->rank);
    if (!r || w->index >= VM_WARP)
        return NULL;
    init_warp *iw = &r->warps[w->index];
    for (size_t i = 0; i < iw->n; i++)
        if (iw->v[i].f == f)
            return &iw->v[i];
    if (util_grow(&iw->v, &iw->cap, iw->n + 1, sizeof *iw->v))
        return NULL;
    uint32_t n = f->fn->nslots ? f->fn->nslots : 1;
    uint32_t *bits = calloc(n, sizeof *bits);
    if (!bits)
        return NULL;
    for (uint32_t i = 0; i < f->fn->nconsts; i++)
        if (f->fn->const_slots[i] < n)
            bits[f->fn->const_slots[i]] = VM_FULL;
    init_frame *fr = &iw->v[iw->n++];
    *fr = (init_frame){f, bits, n};
    return fr;
}

static void frame_drop(struct init_thread *s, vm_block *b, vm_warp *w, const vm_frame *f)
{
    if (b->rank >= s->nranks || w->index >= VM_WARP)
        return;
    init_warp *iw = &s->ranks[b->rank].warps[w->index];
    for (size_t i = 0; i < iw->n; i++)
        if (iw->v[i].f == f) {
            free(iw->v[i].bits);
            iw->v[i] = iw->v[--iw->n];
            return;
        }
}

/* The register slots op reads and writes. */
static void operands(const bc_function *fn, const bc_op *op, uint32_t *rd, int *nrd, uint32_t *wr, int *nwr)
{
    int r = 0, wn = 0;
#define READ(x) do { if ((x) != BC_NONE) rd[r++] = (x); } while (0)
#define WRITE(x) do { if ((x) != BC_NONE) wr[wn++] = (x); } while (0)
    switch ((bc_opcode)op->code) {
    case BC_NOP: case BC_FENCE: case BC_TRAP: case BC_BAR_CLUSTER: case BC_EXIT: case BC_RET: case BC_BRA:
    case BC_CALL: case BC_CALL_BUILTIN: case BC_MOV_PRED: case BC_PSETP: case BC_UNSUPPORTED:
        break;
    case BC_S2R: case BC_LOCALADDR: case BC_LD_KPARAM: case BC_ACTIVEMASK: case BC_MOV_PRED_TO_REG:
        WRITE(op->d);
        break;
    case BC_BRX: case BC_CALL_INDIRECT: case BC_BAR_WARP: case BC_NANOSLEEP: case BC_MOV_REG_TO_PRED:
    case BC_TESTP: case BC_ISSPACEP:
        READ(op->a);
        break;
    case BC_SETP:
        READ(op->a); READ(op->b);
        break;
    case BC_SET: case BC_SELP:
        READ(op->a); READ(op->b); WRITE(op->d);
        break;
    case BC_VOTE:
        READ(op->b);
        if (op->mode == BC_VOTE_BALLOT) WRITE(op->d);
        break;
    case BC_BAR:
        READ(op->a);
        if (op->flags & BC_F_HAS_COUNT) READ(op->b);
        if (op->mode == 2 && op->mode2 == 0) WRITE(op->d);
        break;
    case BC_MBARRIER:
        if (op->mode2 != BC_MB_PENDING) READ(op->a);
        READ(op->b);
        if (op->mode2 == BC_MB_ARRIVE || op->mode2 == BC_MB_ARRIVE_DROP || op->mode2 == BC_MB_PENDING ||
            op->mode2 == BC_MB_ARRIVE_EXPECT_TX)
            WRITE(op->d);
        break;
    case BC_BULK_COPY:
        READ(op->a); READ(op->b); READ(op->c); READ(op->e);
        break;
    case BC_TENSOR_COPY:
        READ(op->a); READ(op->b); READ(op->e);
        for (int i = 0; i < op->n && r < 64; i++) READ(fn->lists[op->list + (uint32_t)i]);
        WRITE(op->c);
        break;
    case BC_SHFL: case BC_BFI:
        READ(op->a); READ(op->b); READ(op->c); READ(op->e); WRITE(op->d);
        break;
    case BC_PACK:
        for (int i = 0; i < op->n && r < 64; i++) READ(fn->lists[op->list + (uint32_t)i]);
        WRITE(op->d);
        break;
    case BC_UNPACK:
        READ(op->a);
        for (int i = 0; i < op->n && wn < 64; i++) WRITE(fn->lists[op->list + (uint32_t)i]);
        break;
    case BC_LD:
        READ(op->a);
        if (op->n > 1) for (int i = 0; i < op->n && wn < 64; i++) WRITE(fn->lists[op->list + (uint32_t)i]);
        else WRITE(op->d);
        break;
    case BC_ST:
        READ(op->a);
        if (op->n > 1) for (int i = 0; i < op->n && r < 64; i++) READ(fn->lists[op->list + (uint32_t)i]);
        else READ(op->b);
        break;
    case BC_ATOM:
        READ(op->a); READ(op->b); READ(op->c); WRITE(op->d);
        break;
    case BC_CP_ASYNC:
        READ(op->a); READ(op->b); READ(op->c);
        break;
    case BC_MOV: case BC_ADD: case BC_SUB: case BC_MUL_LO: case BC_MUL_HI: case BC_MUL_WIDE: case BC_MAD_LO:
    case BC_MAD_HI: case BC_MAD_WIDE: case BC_MUL24: case BC_MAD24: case BC_ADDC: case BC_SUBC: case BC_MADC:
    case BC_DIV: case BC_REM: case BC_MIN: case BC_MAX: case BC_ABS: case BC_NEG: case BC_SAD: case BC_AND:
    case BC_OR: case BC_XOR: case BC_NOT: case BC_CNOT: case BC_SHL: case BC_SHR: case BC_POPC: case BC_CLZ:
    case BC_BREV: case BC_BFIND: case BC_FNS: case BC_BFE: case BC_BMSK: case BC_PRMT: case BC_LOP3: case BC_SHF:
    case BC_SZEXT: case BC_ADD_F32: case BC_MUL_F32: case BC_FMA_F32: case BC_FADD: case BC_FSUB: case BC_FMUL:
    case BC_FFMA: case BC_FDIV: case BC_FMIN: case BC_FMAX: case BC_FABS: case BC_FNEG: case BC_FUNARY:
    case BC_COPYSIGN: case BC_SLCT: case BC_CVT: case BC_CVT_PACK: case BC_CVTA: case BC_MAPA: case BC_MATCH:
    case BC_REDUX:
        READ(op->a); READ(op->b); READ(op->c); WRITE(op->d);
        break;
    default:
        /* ops this checker does not model (matrix, texture ...): their
         * results count as written, their sources are not checked */
        WRITE(op->d);
        if (op->n > 0 && op->list < fn->nlists)
            for (int i = 0; i < op->n && op->list + (uint32_t)i < fn->nlists && wn < 64; i++)
                WRITE(fn->lists[op->list + (uint32_t)i]);
        break;
    }
#undef READ
#undef WRITE
    *nrd = r;
    *nwr = wn;
}

void init_op(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t mask)
{
    struct init_thread *s = state(t);
    if (!s)
        return;
    init_frame *fr = frame_state(s, b, w, f);
    if (!fr)
        return;
    const bc_op *op = &f->fn->code[pc];
    uint32_t rd[72], wr[72];
    int nrd, nwr;
    operands(f->fn, op, rd, &nrd, wr, &nwr);
    for (int i = 0; i < nrd; i++) {
        if (rd[i] >= fr->nslots)
            continue;
        uint32_t missing = mask & ~fr->bits[rd[i]];
        if (missing) {
            for (uint32_t mm = missing; mm; mm &= mm - 1)
                note(t, b, w, f, pc, INIT_REGISTER, rd[i], __builtin_ctz(mm), 0, 0);
            fr->bits[rd[i]] |= missing; /* report each register once per lane */
        }
    }
    for (int i = 0; i < nwr; i++)
        if (wr[i] < fr->nslots)
            fr->bits[wr[i]] |= mask;
    if (op->code == BC_RET && f->parent && !(f->lanes & ~mask))
        frame_drop(s, b, w, f); /* the frame is freed after this op */
}

/* ---- host side ------------------------------------------------------------------- */

void init_note_alloc(check_session *s, const mem_allocation *a)
{
    if (util_grow(&s->allocs, &s->capallocs, s->nallocs + 1, sizeof *s->allocs))
        return;
    uint8_t *bits = calloc((size_t)((a->size + 7) / 8) + 1, 1);
    if (!bits)
        return;
    size_t i = s->nallocs;
    while (i > 0 && s->allocs[i - 1].base > a->base) {
        s->allocs[i] = s->allocs[i - 1];
        i--;
    }
    s->allocs[i] = (check_init_alloc){a->id, a->base, a->size, bits};
    s->nallocs++;
}

void init_note_write(check_session *s, const mem_space *mem, uint64_t address, uint64_t size)
{
    (void)mem;
    const check_init_alloc *a = find_alloc(s, address);
    if (!a)
        return;
    uint64_t off = address - a->base, end = off + size;
    if (end > a->size)
        end = a->size;
    for (uint64_t i = off; i < end;) {
        if ((i & 7) == 0 && end - i >= 8) {
            uint64_t n = (end - i) / 8;
            memset(a->written + i / 8, 0xff, (size_t)n);
            i += n * 8;
        } else {
            a->written[i >> 3] |= (uint8_t)(1u << (i & 7));
            i++;
        }
    }
}

int init_unwritten(check_session *s, uint64_t address, uint64_t size, uint64_t *first, uint64_t *count)
{
    const check_init_alloc *a = find_alloc(s, address);
    if (!a)
        return 0;
    uint64_t off = address - a->base, end = off + size;
    if (end > a->size)
        end = a->size;
    uint64_t n = 0;
    for (uint64_t i = off; i < end;) {
        if ((i & 7) == 0 && end - i >= 8 && a->written[i >> 3] == 0xff) {
            i += 8;
            continue;
        }
        if (!bit_get(a->written, i)) {
            if (!n)
                *first = a->base + i;
            n++;
        }
        i++;
    }
    *count = n;
    return n != 0;
}

void init_note_free(check_session *s, uint64_t base)
{
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].base == base) {
            free(s->allocs[i].written);
            memmove(&s->allocs[i], &s->allocs[i + 1], (s->nallocs - i - 1) * sizeof *s->allocs);
            s->nallocs--;
            return;
        }
}

void init_session_free(check_session *s)
{
    for (size_t i = 0; i < s->nallocs; i++)
        free(s->allocs[i].written);
    free(s->allocs);
    s->allocs = NULL;
    s->nallocs = s->capallocs = 0;
}

/* ---- the report -------------------------------------------------------------------- */

/* The PTX name of register slot `slot` of fn, or NULL for a temporary. */
static const char *slot_name(const bc_function *fn, uint32_t slot)
{
    const ptx_function *pf = fn->ptx;
    if (!pf)
        return NULL;
    uint32_t next = 0;
    for (int i = 0; i < pf->nregs; i++) {
        const ptx_var *v = pf->regs[i];
        if (v->type == PTX_T_PRED)
            continue;
        uint32_t width = (v->type == PTX_T_B128 ? 2 : 1) + (v->vec > 1 ? (uint32_t)v->vec - 1 : 0);
        if (slot >= next && slot < next + width)
            return v->name;
        next += width;
    }
    return NULL;
}

char *init_render(const check_launch *cl, const check_group *g)
{
    const vm_launch *L = cl->L;
    const bc_function *fn = check_function(L, (uint32_t)(g->id[0] >> 32));
    uint32_t pc = (uint32_t)g->id[0];
    int what = (int)g->id[2];
    char where[512], blk[64], thr[64];
    check_describe_op(L, fn, pc, where, sizeof where);
    check_block_coords(L, g->rep.block[0], blk, sizeof blk);
    check_thread_coords(L, g->rep.tid[0], thr, sizeof thr);
    util_buffer t = {0};
    if (what == INIT_REGISTER) {
        const char *name = slot_name(fn, (uint32_t)g->id[1]);
        if (name)
            util_buffer_printf(&t, "Error: Uninitialized register %s read\n", name);
        else
            util_buffer_printf(&t, "Error: Uninitialized register read (temporary slot %llu)\n",
                               (unsigned long long)g->id[1]);
        util_buffer_printf(&t, "    at %s\n    by thread %s in block %s", where, thr, blk);
    } else {
        util_buffer_printf(&t, "Error: Uninitialized %s memory read of size %u byte%s\n    at %s\n    by thread %s in block %s\n",
                           what == INIT_GLOBAL ? "__global__" : "__shared__", g->rep.a, g->rep.a == 1 ? "" : "s",
                           where, thr, blk);
        if (what == INIT_GLOBAL) {
            char d[128];
            check_describe_global(L->mem, g->rep.address, d, sizeof d);
            util_buffer_printf(&t, "    Address 0x%llx (%s)", (unsigned long long)g->rep.address, d);
        } else {
            util_buffer_printf(&t, "    Address: byte offset %llu of the block's shared memory",
                               (unsigned long long)g->rep.address);
        }
    }
    uint64_t n = check_group_count(g);
    if (n > 1)
        util_buffer_printf(&t, "; %llu more thread%s", (unsigned long long)(n - 1), n == 2 ? "" : "s");
    return t.data;
}
