/* Host functions that kernels call: vprintf (CUDA printf, formatted on the
 * host as the GPU's printf does), __assertfail (fails the launch with the
 * message CUDA prints), and malloc/free on a device heap. Output is
 * collected per block and printed in block order after the launch, so it
 * is deterministic. */
#include "vm/vm_internal.h"
#include "vm/printf_format.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct string_ctx { vm_block *b; vm_warp *w; int lane; } string_ctx;

static int read_string_cb(void *ctx, uint64_t addr, char *buf, size_t cap)
{
    string_ctx *c = ctx;
    return vm_read_string(c->b, c->w, c->lane, addr, buf, cap);
}

/* A readable host view of [addr, ...) for lane `lane`: pointer and the
 * bytes available up to the end of its allocation or window. */
static const uint8_t *buffer_view(vm_block *b, vm_warp *w, int lane, uint64_t addr, size_t *avail)
{
    vm_launch *L = b->launch;
    if (addr == 0)
        return NULL;
    if (addr < MEM_WINDOW_SHARED) {
        const mem_allocation *a = mem_find_containing(L->mem, addr);
        if (!a)
            return NULL;
        *avail = (size_t)(a->base + a->size - addr);
        return (const uint8_t *)(uintptr_t)addr;
    }
    if (addr >= MEM_WINDOW_LOCAL && addr - MEM_WINDOW_LOCAL < L->local_stride) {
        uint64_t off = addr - MEM_WINDOW_LOCAL;
        *avail = (size_t)(L->local_stride - off);
        return w->local + (size_t)lane * L->local_stride + off;
    }
    if (addr >= MEM_WINDOW_SHARED && addr - MEM_WINDOW_SHARED < b->shared_size) {
        uint64_t off = addr - MEM_WINDOW_SHARED;
        *avail = (size_t)(b->shared_size - off);
        return b->shared + off;
    }
    if (addr >= MEM_WINDOW_CONST && addr - MEM_WINDOW_CONST < L->const_size) {
        uint64_t off = addr - MEM_WINDOW_CONST;
        *avail = (size_t)(L->const_size - off);
        return L->const_bank + off;
    }
    return NULL;
}

static uint64_t arg64(vm_warp *w, const vm_launch *L, const vm_frame *f, int lane, const bc_copy *cp)
{
    uint64_t v = 0;
    memcpy(&v, w->local + (size_t)lane * L->local_stride + f->local_base + cp->from, cp->size < 8 ? cp->size : 8);
    return v;
}

static void set_ret(vm_warp *w, const vm_launch *L, const vm_frame *f, int lane, const bc_copy *cp, uint64_t v)
{
    memcpy(w->local + (size_t)lane * L->local_stride + f->local_base + cp->to, &v, cp->size < 8 ? cp->size : 8);
}

/* The notes of one warp-wide call: the first problem, noted once with the
 * number of other lanes that had the same one; a different problem is
 * noted at once. */
typedef struct lane_notes { char first[320]; int lane, more; } lane_notes;

static void lane_note(lane_notes *n, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int lane,
                      const char *problem)
{
    if (!n->first[0]) {
        snprintf(n->first, sizeof n->first, "%s", problem);
        n->lane = lane;
    } else if (!strcmp(n->first, problem)) {
        n->more++;
    } else {
        vm_note(b, w, f, pc, (uint32_t)lane, "%s", problem);
    }
}

static void lane_notes_flush(lane_notes *n, vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc)
{
    if (!n->first[0])
        return;
    if (n->more)
        vm_note(b, w, f, pc, (uint32_t)n->lane, "%s (and %d more thread%s of the warp)", n->first, n->more,
                n->more == 1 ? "" : "s");
    else
        vm_note(b, w, f, pc, (uint32_t)n->lane, "%s", n->first);
}

uint64_t vm_heap_alloc(vm_block *b, vm_warp *w, int lane, uint64_t size)
{
    vm_launch *L = b->launch;
    pthread_mutex_t *lock = L->heap_lock;
    uint64_t p = 0;
    if (lock) pthread_mutex_lock(lock);
    /* memcheck keeps a red zone after each allocation */
    uint64_t need = ((size + 15) & ~15ull) + (L->heap_table ? VM_HEAP_REDZONE : 0);
    if (size && L->heap_base && L->heap_used + need <= L->heap_size) {
        p = L->heap_base + L->heap_used;
        L->heap_used += need;
        if (L->heap_table)
            vm_heap_record(L->heap_table, p, size, b, w, lane);
    }
    if (lock) pthread_mutex_unlock(lock);
    return p;
}

int vm_builtin(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    vm_launch *L = b->launch;
    const bc_call *call = &f->fn->calls[op->list];
    switch (op->mode) {
    case BC_BUILTIN_VPRINTF: {
        if (call->nargs < 2)
            return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "vprintf called with %d arguments", call->nargs);
        lane_notes notes = {{0}, 0, 0};
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            uint64_t fmt_addr = arg64(w, L, f, l, &call->args[0]);
            uint64_t args_addr = arg64(w, L, f, l, &call->args[1]);
            char fmt[4096], problem[320];
            int rv;
            if (fmt_addr == 0 || vm_read_string(b, w, l, fmt_addr, fmt, sizeof fmt)) {
                rv = -1;
                snprintf(problem, sizeof problem, "printf: the format string at 0x%llx is %s; nothing printed",
                         (unsigned long long)fmt_addr, fmt_addr ? "not a readable device address" : "a null pointer");
                lane_note(&notes, b, w, f, pc, l, problem);
            } else {
                size_t avail = 0;
                const uint8_t *args = buffer_view(b, w, l, args_addr, &avail);
                char *out = NULL;
                size_t out_len = 0, out_cap = 0;
                string_ctx sc = {b, w, l};
                if (strlen(fmt) == sizeof fmt - 1) {
                    snprintf(problem, sizeof problem, "printf: the format string is longer than %zu bytes; printed "
                             "its first %zu", sizeof fmt - 1, sizeof fmt - 1);
                    lane_note(&notes, b, w, f, pc, l, problem);
                }
                if (args_addr && !args) {
                    snprintf(problem, sizeof problem, "printf: the argument buffer at 0x%llx is not a readable "
                             "device address", (unsigned long long)args_addr);
                    lane_note(&notes, b, w, f, pc, l, problem);
                }
                char what[256];
                rv = vm_printf_format_checked(fmt, args, args ? avail : 0, read_string_cb, &sc, &out, &out_len,
                                              &out_cap, what, sizeof what);
                if (what[0]) {
                    snprintf(problem, sizeof problem, "printf: %s", what);
                    lane_note(&notes, b, w, f, pc, l, problem);
                }
                /* a record that no longer fits the FIFO is dropped, as on a GPU */
                if (out && b->printf_out.len + out_len <= L->printf_fifo)
                    util_buffer_append(&b->printf_out, out, out_len);
                else if (out)
                    b->printf_dropped += out_len;
                free(out);
            }
            if (call->nrets > 0)
                set_ret(w, L, f, l, &call->rets[0], (uint64_t)(int64_t)rv);
        }
        lane_notes_flush(&notes, b, w, f, pc);
        return 0;
    }
    case BC_BUILTIN_ASSERTFAIL: {
        util_buffer msg = {0};
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            char expr[1024] = "unknown", file[1024] = "unknown", func[1024] = "unknown";
            uint64_t line = 0;
            if (call->nargs >= 4) {
                uint64_t ea = arg64(w, L, f, l, &call->args[0]), fa = arg64(w, L, f, l, &call->args[1]);
                uint64_t fna = arg64(w, L, f, l, &call->args[3]);
                line = (uint32_t)arg64(w, L, f, l, &call->args[2]);
                if (ea && vm_read_string(b, w, l, ea, expr, sizeof expr)) strcpy(expr, "unknown");
                if (fa && vm_read_string(b, w, l, fa, file, sizeof file)) strcpy(file, "unknown");
                if (fna && vm_read_string(b, w, l, fna, func, sizeof func)) strcpy(func, "unknown");
            }
            util_buffer_printf(&msg, "%s%s:%llu: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.",
                               msg.len ? "\n" : "", file, (unsigned long long)line, func, b->ctaid[0], b->ctaid[1],
                               b->ctaid[2], w->tid[0][l], w->tid[1][l], w->tid[2][l], expr);
        }
        vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 710, "device-side assertion failed:\n%s",
                    msg.data ? msg.data : "");
        util_buffer_free(&msg);
        return -1;
    }
    case BC_BUILTIN_DEVRT:
        return vm_devrt_call(b, w, f, pc, op, m);
    case BC_BUILTIN_MALLOC: {
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            uint64_t size = call->nargs ? arg64(w, L, f, l, &call->args[0]) : 0;
            uint64_t p = vm_heap_alloc(b, w, l, size);
            if (call->nrets > 0)
                set_ret(w, L, f, l, &call->rets[0], p);
        }
        return 0;
    }
    case BC_BUILTIN_NATIVE: {
        const bc_function *callee = L->mod->functions[op->imm];
        void *argv[64];
        if (call->nargs > 64 || !L->call_native)
            return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "cannot call native function '%s'",
                               callee->name);
        for (uint32_t mm = m; mm; mm &= mm - 1) {
            int l = __builtin_ctz(mm);
            uint8_t *lm = w->local + (size_t)l * L->local_stride + f->local_base;
            for (int i = 0; i < call->nargs; i++)
                argv[i] = lm + call->args[i].from;
            uint8_t retbuf[16] = {0};
            if (L->call_native(L->native_ctx, callee->index, argv, call->nrets ? retbuf : NULL))
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 719, "native function '%s' could not be called",
                                   callee->name);
            if (call->nrets)
                memcpy(lm + call->rets[0].to, retbuf, call->rets[0].size < 16 ? call->rets[0].size : 16);
        }
        return 0;
    }
    case BC_BUILTIN_FREE:
        /* the device heap is a bump allocator: free releases nothing; under
         * memcheck, invalid and double frees stop the kernel */
        if (!L->heap_table)
            return 0;
        {
            char why[VM_WARP][400];
            uint32_t bad = 0;
            for (uint32_t mm = m; mm; mm &= mm - 1) {
                int l = __builtin_ctz(mm);
                uint64_t p = call->nargs ? arg64(w, L, f, l, &call->args[0]) : 0;
                if (!p)
                    continue;
                pthread_mutex_lock(L->heap_lock);
                if (vm_heap_free(L->heap_table, p, b, w, l, why[l], sizeof why[l]))
                    bad |= 1u << l;
                pthread_mutex_unlock(L->heap_lock);
            }
            if (!bad)
                return 0;
            vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(bad), 700, "%s", why[__builtin_ctz(bad)]);
            const vm_hooks *fh = L->hooks ? L->hooks : L->fault_hooks;
            if (fh && fh->heap_misuse)
                for (uint32_t mm = bad; mm; mm &= mm - 1)
                    fh->heap_misuse(fh->ctx, b, w, f, pc, __builtin_ctz(mm), why[__builtin_ctz(mm)]);
            return -1;
        }
    default:
        return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "unknown host function");
    }
}
