/* memcheck's kernel-side reports: when a memory op faults, every lane of
 * the faulting warp-instruction whose address is invalid is reported in
 * the shape of compute-sanitizer ("Invalid __global__ write of size 4
 * bytes", the op, thread and block, and what the address is: out of
 * bounds next to the nearest allocation, in freed memory, misaligned, in
 * no address space). Only the fault the launch reports (the lowest
 * faulting block) is shown, so the report does not depend on the host
 * threads. Other faults (traps, assertions, timeouts) are reported with
 * the interpreter's message. Host-side errors (invalid and double frees,
 * leaks) are in session.c. */
#include "check/check_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_record {
    char *message;           /* the block's fault message when it was recorded */
    char **texts;            /* one finding per invalid lane */
    int ntexts;
} mem_record;

struct mem_thread {
    mem_record *v;
    size_t n, cap;
};

void mem_thread_free(struct mem_thread *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].message);
        for (int k = 0; k < m->v[i].ntexts; k++)
            free(m->v[i].texts[k]);
        free(m->v[i].texts);
    }
    free(m->v);
    free(m);
}

static const char *space_label(int sp)
{
    switch (sp) {
    case BC_SPACE_GLOBAL: return "__global__";
    case BC_SPACE_SHARED: case BC_SPACE_SHARED_CLUSTER: return "__shared__";
    case BC_SPACE_LOCAL: return "__local__";
    case BC_SPACE_CONST: return "__constant__";
    case BC_SPACE_PARAM_KERNEL: return "__grid_constant__";
    default: return "generic";
    }
}

/* Describes why the address is invalid (NULL when it is valid). */
static int classify(vm_block *b, int space, uint64_t a, unsigned size, int kind, int *out_space, util_buffer *why)
{
    vm_launch *L = b->launch;
    int sp = space;
    uint64_t off = a;
    if (sp == BC_SPACE_GENERIC && (sp = vm_generic_space(a, &off)) == BC_SPACE_GENERIC) {
        *out_space = BC_SPACE_GENERIC;
        util_buffer_printf(why, "Address 0x%llx is in no address space", (unsigned long long)a);
        return 1;
    }
    *out_space = sp;
    if (size > 1 && (off & (size - 1)) && (size & (size - 1)) == 0) {
        util_buffer_printf(why, "Address 0x%llx is misaligned (not %u-byte aligned)", (unsigned long long)a, size);
        return 1;
    }
    int store = kind != VM_ACCESS_LOAD;
    switch (sp) {
    case BC_SPACE_GLOBAL: {
        const mem_allocation *in = mem_find(L->mem, off, size);
        if (in) {
            char d[600];
            if (L->heap_table && in->kind == MEM_KIND_HEAP && vm_heap_explain(L->heap_table, off, size, d, sizeof d)) {
                util_buffer_printf(why, "%s", d);
                return 1;
            }
            return 0;
        }
        util_buffer_printf(why, "Address 0x%llx is out of bounds", (unsigned long long)off);
        const mem_allocation *fr = mem_find_freed(L->mem, off);
        if (fr) {
            util_buffer_printf(why, "\n    and is %llu bytes inside allocation #%llu at 0x%llx of size %llu bytes, which was freed",
                               (unsigned long long)(off - fr->base), (unsigned long long)fr->id,
                               (unsigned long long)fr->base, (unsigned long long)fr->size);
            return 1;
        }
        if (off == 0) {
            util_buffer_printf(why, " (a null pointer)");
            return 1;
        }
        const mem_allocation *before = NULL, *after = NULL;
        for (size_t i = 0; i < L->mem->count; i++) {
            const mem_allocation *m = &L->mem->allocs[i];
            if (m->base <= off)
                before = m;
            else if (!after)
                after = m;
        }
        uint64_t db = before ? off - (before->base + before->size) : UINT64_MAX;
        uint64_t da = after ? after->base - off : UINT64_MAX;
        if (before && off < before->base + before->size) /* starts inside, runs past the end */
            util_buffer_printf(why, "\n    and runs %llu bytes past the end of the allocation at 0x%llx of size %llu bytes",
                               (unsigned long long)(off + size - (before->base + before->size)),
                               (unsigned long long)before->base, (unsigned long long)before->size);
        else if (before && db <= da)
            util_buffer_printf(why, "\n    and is %llu bytes after the nearest allocation at 0x%llx of size %llu bytes",
                               (unsigned long long)db, (unsigned long long)before->base, (unsigned long long)before->size);
        else if (after)
            util_buffer_printf(why, "\n    and is %llu bytes before the nearest allocation at 0x%llx of size %llu bytes",
                               (unsigned long long)da, (unsigned long long)after->base, (unsigned long long)after->size);
        return 1;
    }
    case BC_SPACE_SHARED:
    case BC_SPACE_SHARED_CLUSTER: {
        uint64_t limit = b->shared_size;
        if (sp == BC_SPACE_SHARED_CLUSTER && off >= (1u << 24)) {
            uint64_t rank = (off >> 24) - 1;
            off &= 0xffffff;
            if (!b->cluster || rank >= (uint64_t)b->cluster->n) {
                util_buffer_printf(why, "Address 0x%llx names block rank %llu of a cluster of %d block%s",
                                   (unsigned long long)a, (unsigned long long)rank, b->cluster ? b->cluster->n : 1,
                                   b->cluster && b->cluster->n == 1 ? "" : "s");
                return 1;
            }
            limit = b->cluster->blocks[rank].shared_size;
        }
        if (off + size <= limit && off + size >= off)
            return 0;
        util_buffer_printf(why, "Address 0x%llx is out of bounds\n    and is at byte offset %llu of a block with %llu bytes of shared memory",
                           (unsigned long long)a, (unsigned long long)off, (unsigned long long)limit);
        return 1;
    }
    case BC_SPACE_LOCAL:
        if (off + size <= L->local_stride && off + size >= off)
            return 0;
        util_buffer_printf(why, "Address 0x%llx is out of bounds\n    and is at byte offset %llu of %llu bytes of local memory per thread",
                           (unsigned long long)a, (unsigned long long)off, (unsigned long long)L->local_stride);
        return 1;
    case BC_SPACE_CONST:
    case BC_SPACE_PARAM_KERNEL: {
        uint64_t limit = sp == BC_SPACE_CONST ? L->const_size : L->param_size;
        if (store) {
            util_buffer_printf(why, "Address 0x%llx is read-only", (unsigned long long)a);
            return 1;
        }
        if (off + size <= limit && off + size >= off)
            return 0;
        util_buffer_printf(why, "Address 0x%llx is out of bounds\n    and is at byte offset %llu of %llu bytes",
                           (unsigned long long)a, (unsigned long long)off, (unsigned long long)limit);
        return 1;
    }
    default:
        util_buffer_printf(why, "Address 0x%llx is in an unsupported address space", (unsigned long long)a);
        return 1;
    }
}

/* The record of the block's current fault: the thread's last one when it
 * was made for the same fault (several lanes of one free), else a new one.
 * NULL when out of memory. */
static mem_record *fault_record(check_thread *t, vm_block *b)
{
    if (!t->mem && !(t->mem = calloc(1, sizeof *t->mem)))
        return NULL;
    struct mem_thread *m = t->mem;
    if (m->n && !strcmp(m->v[m->n - 1].message, b->fault.message))
        return &m->v[m->n - 1];
    if (util_grow(&m->v, &m->cap, m->n + 1, sizeof *m->v))
        return NULL;
    mem_record *rec = &m->v[m->n];
    memset(rec, 0, sizeof *rec);
    rec->message = strdup(b->fault.message);
    rec->texts = calloc(VM_WARP, sizeof *rec->texts);
    if (!rec->message || !rec->texts) {
        free(rec->message);
        free(rec->texts);
        return NULL;
    }
    m->n++;
    return rec;
}

void mem_bad_access(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int kind, int space,
                    uint32_t mask, const uint64_t *addr, int64_t imm, unsigned size)
{
    mem_record *rec = fault_record(t, b);
    if (!rec)
        return;
    vm_launch *L = b->launch;
    char where[512], blk[64], thr[64];
    check_describe_pc(L, f, pc, where, sizeof where);
    check_block_coords(L, b->linear_id, blk, sizeof blk);
    for (uint32_t mm = mask; mm && rec->ntexts < VM_WARP; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        util_buffer why = {0};
        int sp;
        if (!classify(b, space, addr[l] + (uint64_t)imm, size, kind, &sp, &why)) {
            util_buffer_free(&why);
            continue;
        }
        check_thread_coords(L, (uint64_t)w->index * VM_WARP + (uint64_t)l, thr, sizeof thr);
        util_buffer text = {0};
        util_buffer_printf(&text, "Invalid %s %s of size %u byte%s\n    at %s\n    by thread %s in block %s\n    %s",
                           space_label(sp), kind == VM_ACCESS_ATOMIC ? "atomic" : kind == VM_ACCESS_STORE ? "write" : "read",
                           size, size == 1 ? "" : "s", where, thr, blk, why.data ? why.data : "");
        util_buffer_free(&why);
        rec->texts[rec->ntexts++] = text.data;
    }
}

void mem_heap_misuse(check_thread *t, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                     const char *reason)
{
    mem_record *rec = fault_record(t, b);
    if (!rec || rec->ntexts >= VM_WARP)
        return;
    vm_launch *L = b->launch;
    char where[512], blk[64], thr[64];
    check_describe_pc(L, f, pc, where, sizeof where);
    check_block_coords(L, b->linear_id, blk, sizeof blk);
    check_thread_coords(L, (uint64_t)w->index * VM_WARP + (uint64_t)lane, thr, sizeof thr);
    int dbl = !strncmp(reason, "double free", 11);
    util_buffer text = {0};
    const char *colon = strstr(reason, ": ");
    const char *detail = colon ? colon + 2 : reason;
    util_buffer_printf(&text, "Malloc/Free error encountered: %s\n    at %s\n    by thread %s in block %s\n    %c%s",
                       dbl ? "Double free" : "Invalid pointer to free", where, thr, blk,
                       detail[0] >= 'a' && detail[0] <= 'z' ? detail[0] - 'a' + 'A' : detail[0], detail + 1);
    rec->texts[rec->ntexts++] = text.data;
}

void mem_launch_end(check_launch *cl, const vm_fault *fault)
{
    if (!fault || !fault->faulted)
        return;
    if ((cl->tools & KEMU_TOOL_SYNCCHECK) && fault->status == 719 && strstr(fault->message, "deadlock"))
        return; /* synccheck reports it */
    for (size_t i = 0; i < cl->nthreads; i++) {
        struct mem_thread *m = cl->threads[i]->mem;
        for (size_t k = 0; m && k < m->n; k++) {
            mem_record *rec = &m->v[k];
            if (strcmp(rec->message, fault->message) || !rec->ntexts)
                continue;
            for (int j = 0; j < rec->ntexts; j++) {
                uint64_t key[4] = {cl->number, (1ull << 56) | (uint64_t)j, 0, 0};
                check_add(cl->s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, rec->texts[j], NULL);
                rec->texts[j] = NULL;
            }
            return;
        }
    }
    const char *kind = fault->status == 700 ? "Invalid memory access" : fault->status == 716 ? "Misaligned address"
                     : fault->status == 710 ? "Device-side assertion failed" : fault->status == 702 ? "Launch timed out"
                     : "Kernel fault";
    util_buffer t = {0};
    util_buffer_printf(&t, "Error: %s in kernel %s\n%s", kind, cl->L->kernel->name, fault->message);
    uint64_t key[4] = {cl->number, 1ull << 56, 0, 0};
    check_add(cl->s, KEMU_TOOL_MEMCHECK, CHECK_ERROR, key, t.data, NULL);
}
