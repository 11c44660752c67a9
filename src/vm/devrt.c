/* The device runtime calls of CUDA dynamic parallelism, thread by thread:
 * the interpreter's side of `.extern .func` calls such as
 * __cudaCDP2GetParameterBufferV2 or cudaGetLastError. This file reads each
 * calling lane's arguments, answers what a thread can answer alone (its
 * last error, the device number, the device heap of cudaMalloc, the
 * refusal of cudaDeviceSynchronize, cudaGraphSetConditional) and hands
 * launches, copies, sets, streams, events, attributes, occupancy, error
 * strings and limits to the launch layer (vm_launch.devrt, answered by
 * src/exec/devrt.c), which reads and writes the caller's memory through
 * vm_devrt_read / vm_devrt_write. Lanes are
 * served in lane order, so the order of the launches a warp makes is
 * deterministic. */
#include "vm/vm_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* cudaError_t values the device runtime returns */
enum { DEVRT_SUCCESS = 0, DEVRT_INVALID_VALUE = 1, DEVRT_MEMORY_ALLOCATION = 2, DEVRT_NOT_SUPPORTED = 801 };

/* Where the generic address addr's n bytes are for lane `lane`, or NULL. */
static uint8_t *devrt_bytes(vm_block *b, vm_warp *w, int lane, uint64_t addr, size_t n)
{
    vm_launch *L = b->launch;
    if (!addr)
        return NULL;
    if (addr < MEM_WINDOW_SHARED)
        return mem_find(L->mem, addr, n) ? (uint8_t *)(uintptr_t)addr : NULL;
    if (addr - MEM_WINDOW_SHARED < b->shared_size && n <= b->shared_size - (addr - MEM_WINDOW_SHARED))
        return b->shared + (addr - MEM_WINDOW_SHARED);
    if (addr >= MEM_WINDOW_LOCAL && addr - MEM_WINDOW_LOCAL < L->local_stride &&
        n <= L->local_stride - (addr - MEM_WINDOW_LOCAL))
        return w->local + (size_t)lane * L->local_stride + (addr - MEM_WINDOW_LOCAL);
    return NULL;
}

int vm_devrt_write(vm_block *b, vm_warp *w, int lane, uint64_t addr, const void *src, size_t n)
{
    uint8_t *p = devrt_bytes(b, w, lane, addr, n);
    if (!p)
        return -1;
    memcpy(p, src, n);
    return 0;
}

int vm_devrt_read(vm_block *b, vm_warp *w, int lane, uint64_t addr, void *dst, size_t n)
{
    const uint8_t *p = devrt_bytes(b, w, lane, addr, n);
    if (!p)
        return -1;
    memcpy(dst, p, n);
    return 0;
}

static uint64_t arg_u64(const vm_devrt_request *r, int i)
{
    uint64_t v = 0;
    if (i < r->nargs)
        memcpy(&v, r->args[i], sizeof v);
    return v;
}

static uint32_t arg_u32(const vm_devrt_request *r, int i)
{
    uint32_t v = 0;
    if (i < r->nargs)
        memcpy(&v, r->args[i], sizeof v);
    return v;
}

/* Names a refused device runtime function on stderr once per process. */
static void say_unsupported(const char *name)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char said[32][96];
    static int nsaid;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nsaid; i++)
        if (!strcmp(said[i], name)) {
            pthread_mutex_unlock(&lock);
            return;
        }
    if (nsaid < 32)
        snprintf(said[nsaid++], sizeof said[0], "%s", name);
    pthread_mutex_unlock(&lock);
    fprintf(stderr, "kemu: %s (device runtime, called from device code) is not supported yet; it returns "
                    "cudaErrorNotSupported\n", name);
}

int vm_devrt_call(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    vm_launch *L = b->launch;
    const bc_function *callee = L->mod->functions[op->imm];
    const bc_call *call = &f->fn->calls[op->list];
    if (callee->devrt == BC_DEVRT_DEVICE_SYNCHRONIZE)
        return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), DEVRT_NOT_SUPPORTED,
                           "device-side %s is not supported: kemu implements CUDA dynamic parallelism 2 (CDP2), "
                           "which has no synchronization with child grids in device code (cudaDeviceSynchronize "
                           "from a kernel is CDP1, removed on sm_90 and later); a child grid runs after its "
                           "parent grid: launch the work that needs its results into cudaStreamTailLaunch",
                           callee->name);
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        vm_devrt_request r;
        memset(&r, 0, sizeof r);
        r.b = b;
        r.w = w;
        r.f = f;
        r.pc = pc;
        r.lane = l;
        r.which = callee->devrt;
        r.name = callee->name;
        r.nargs = call->nargs < 8 ? call->nargs : 8;
        const uint8_t *lm = w->local + (size_t)l * L->local_stride + f->local_base;
        for (int i = 0; i < r.nargs; i++)
            memcpy(r.args[i], lm + call->args[i].from, call->args[i].size < 32 ? call->args[i].size : 32);
        uint64_t ret = DEVRT_SUCCESS;
        int error = 0;
        switch (callee->devrt) {
        case BC_DEVRT_GET_LAST_ERROR:
            ret = w->devrt_error[l];
            w->devrt_error[l] = 0;
            break;
        case BC_DEVRT_PEEK_AT_LAST_ERROR:
            ret = w->devrt_error[l];
            break;
        case BC_DEVRT_GET_DEVICE:
        case BC_DEVRT_GET_DEVICE_COUNT:
        case BC_DEVRT_RUNTIME_GET_VERSION:
        case BC_DEVRT_DEVICE_GET_CACHE_CONFIG: {
            int v = callee->devrt == BC_DEVRT_GET_DEVICE_COUNT ? 1
                  : callee->devrt == BC_DEVRT_RUNTIME_GET_VERSION ? (L->devrt ? L->devrt->runtime_version : 13000)
                  : 0; /* device 0; cudaFuncCachePreferNone */
            if (vm_devrt_write(b, w, l, arg_u64(&r, 0), &v, sizeof v))
                ret = error = DEVRT_INVALID_VALUE;
            break;
        }
        case BC_DEVRT_MALLOC: {
            uint64_t p = vm_heap_alloc(b, w, l, arg_u64(&r, 1));
            if (!p) {
                ret = error = DEVRT_MEMORY_ALLOCATION;
            } else if (vm_devrt_write(b, w, l, arg_u64(&r, 0), &p, sizeof p)) {
                ret = error = DEVRT_INVALID_VALUE;
            }
            break;
        }
        case BC_DEVRT_FREE: {
            /* the heap is a bump allocator (as for free); under memcheck an
             * invalid or double free stops the kernel */
            uint64_t p = arg_u64(&r, 0);
            if (!p || !L->heap_table)
                break;
            char why[400];
            pthread_mutex_lock(L->heap_lock);
            int bad = vm_heap_free(L->heap_table, p, b, w, l, why, sizeof why);
            pthread_mutex_unlock(L->heap_lock);
            if (bad) {
                vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "%s", why);
                const vm_hooks *fh = L->hooks ? L->hooks : L->fault_hooks;
                if (fh && fh->heap_misuse)
                    fh->heap_misuse(fh->ctx, b, w, f, pc, l, why);
                return -1;
            }
            break;
        }
        case BC_DEVRT_GRAPH_SET_CONDITIONAL: {
            /* a handle is the address of its value (src/cudart/graph_cond.c);
             * the call returns nothing and sets no error */
            uint64_t h = arg_u64(&r, 0);
            uint32_t v = arg_u32(&r, 1);
            const mem_allocation *a = h && h < MEM_WINDOW_SHARED ? mem_find(L->mem, h, sizeof v) : NULL;
            if (!a || a->kind != MEM_KIND_GRAPH_CONDITIONAL || a->base != h)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "illegal address: %s: 0x%llx is not a conditional handle (one that "
                                   "cudaGraphConditionalHandleCreate returned and that still exists)",
                                   callee->name, (unsigned long long)h);
            __atomic_store_n((uint32_t *)(uintptr_t)h, v, __ATOMIC_RELAXED);
            break;
        }
        case BC_DEVRT_UNSUPPORTED:
            say_unsupported(callee->name);
            /* the functions returning a string return NULL */
            ret = callee->nrets && callee->rets[0].size == 8 ? 0 : DEVRT_NOT_SUPPORTED;
            error = DEVRT_NOT_SUPPORTED;
            break;
        default:
            if (!L->devrt)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 719,
                                   "%s: the device runtime is not available to this launch", callee->name);
            ret = L->devrt->call(L->devrt->ctx, &r, &error);
            if (b->fault.faulted)
                return -1;
            break;
        }
        if (error)
            w->devrt_error[l] = (uint16_t)error;
        if (call->nrets > 0) {
            uint8_t *to = w->local + (size_t)l * L->local_stride + f->local_base + call->rets[0].to;
            memcpy(to, &ret, call->rets[0].size < 8 ? call->rets[0].size : 8);
        }
    }
    return 0;
}
