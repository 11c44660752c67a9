/* The device heap's allocation table, kept while memcheck runs. Device
 * malloc is a bump allocator over one heap region; with the table, each
 * allocation is recorded (who made it) and followed by a red zone, free
 * marks it freed (never reused: freed memory stays quarantined), and
 * accesses that land on the heap are checked against it. Addresses on the
 * heap depend on the order in which host threads ran the mallocs, so the
 * descriptions name allocations by the thread that made them, never by
 * address, and reports stay identical across --threads values. */
#include "vm/vm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vm_heap_table *vm_heap_table_new(uint64_t base, uint64_t size, uint64_t used)
{
    vm_heap_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = (size_t)(size / (16 + VM_HEAP_REDZONE)) + 1;
    t->v = calloc(t->cap, sizeof *t->v);
    if (!t->v) {
        free(t);
        return NULL;
    }
    t->base = base;
    t->size = size;
    t->start = base + used;
    return t;
}

void vm_heap_table_free(vm_heap_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nkernels; i++)
        free(t->kernels[i]);
    free(t->kernels);
    free(t->v);
    free(t);
}

int vm_heap_table_launch(vm_heap_table *t, const char *kernel)
{
    t->launch++;
    if (t->nkernels && !strcmp(t->kernels[t->nkernels - 1], kernel)) {
        t->kernel = t->nkernels - 1;
        return 0;
    }
    char **k = realloc(t->kernels, (size_t)(t->nkernels + 1) * sizeof *k);
    if (!k)
        return -1;
    t->kernels = k;
    if (!(k[t->nkernels] = strdup(kernel)))
        return -1;
    t->kernel = t->nkernels++;
    return 0;
}

void vm_heap_record(vm_heap_table *t, uint64_t base, uint64_t size, const vm_block *b, const vm_warp *w, int lane)
{
    size_t n = t->n;
    if (n >= t->cap)
        return;
    vm_heap_chunk *c = &t->v[n];
    memset(c, 0, sizeof *c);
    c->base = base;
    c->size = size;
    c->launch = t->launch;
    c->kernel = (uint32_t)t->kernel;
    c->block = b->linear_id;
    c->tid_linear = (uint32_t)w->index * VM_WARP + (uint32_t)lane;
    for (int i = 0; i < 3; i++) {
        c->ctaid[i] = b->ctaid[i];
        c->tid[i] = w->tid[i][lane];
    }
    __atomic_store_n(&t->n, n + 1, __ATOMIC_RELEASE);
}

const vm_heap_chunk *vm_heap_find(const vm_heap_table *t, uint64_t addr)
{
    size_t lo = 0, hi = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
    /* chunks are in address order (a bump allocator); the last with base <= addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &t->v[lo - 1] : NULL;
}

static void who(char *buf, size_t n, const vm_heap_table *t, const vm_heap_chunk *c, int freed)
{
    if (freed)
        snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u)", c->free_tid[0], c->free_tid[1], c->free_tid[2],
                 c->free_ctaid[0], c->free_ctaid[1], c->free_ctaid[2]);
    else
        snprintf(buf, n, "thread (%u,%u,%u) of block (%u,%u,%u) in kernel %s", c->tid[0], c->tid[1], c->tid[2],
                 c->ctaid[0], c->ctaid[1], c->ctaid[2], c->kernel < (uint32_t)t->nkernels ? t->kernels[c->kernel] : "?");
}

int vm_heap_explain(const vm_heap_table *t, uint64_t addr, unsigned size, char *buf, size_t n)
{
    if (addr < t->start || addr < t->base || addr >= t->base + t->size)
        return 0; /* allocated before the table existed, or not on the heap */
    const vm_heap_chunk *c = vm_heap_find(t, addr);
    char by[256], fby[160];
    if (c && addr >= c->base && addr + size <= c->base + c->size) {
        if (!__atomic_load_n(&c->freed, __ATOMIC_ACQUIRE))
            return 0;
        who(by, sizeof by, t, c, 0);
        who(fby, sizeof fby, t, c, 1);
        snprintf(buf, n, "Address is %llu bytes inside a %llu-byte device-heap allocation, which was freed\n"
                         "    (malloc by %s; free by %s)",
                 (unsigned long long)(addr - c->base), (unsigned long long)c->size, by, fby);
        return 1;
    }
    if (c && addr < c->base + c->size) {
        who(by, sizeof by, t, c, 0);
        snprintf(buf, n, "Address is out of bounds on the device heap\n"
                         "    and runs %llu bytes past the end of a %llu-byte allocation (malloc by %s)",
                 (unsigned long long)(addr + size - (c->base + c->size)), (unsigned long long)c->size, by);
        return 1;
    }
    if (c) {
        who(by, sizeof by, t, c, 0);
        snprintf(buf, n, "Address is out of bounds on the device heap\n"
                         "    and is %llu bytes after the end of a %llu-byte allocation (malloc by %s)",
                 (unsigned long long)(addr - (c->base + c->size)), (unsigned long long)c->size, by);
        return 1;
    }
    snprintf(buf, n, "Address is on the device heap but in no allocation");
    return 1;
}

int vm_heap_free(vm_heap_table *t, uint64_t addr, const vm_block *b, const vm_warp *w, int lane, char *buf,
                 size_t n)
{
    if (addr >= t->base && addr < t->start)
        return 0; /* allocated before the table existed */
    const vm_heap_chunk *cc = addr >= t->base && addr < t->base + t->size ? vm_heap_find(t, addr) : NULL;
    char by[256];
    if (!cc || addr >= cc->base + cc->size + VM_HEAP_REDZONE) {
        if (addr >= t->base && addr < t->base + t->size)
            snprintf(buf, n, "invalid free: the pointer is on the device heap but in no allocation");
        else
            snprintf(buf, n, "invalid free: 0x%llx is not a pointer returned by device malloc", (unsigned long long)addr);
        return -1;
    }
    if (addr != cc->base) {
        who(by, sizeof by, t, cc, 0);
        snprintf(buf, n, "invalid free: the pointer is %llu bytes %s a %llu-byte device-heap allocation (malloc by %s), not its start",
                 (unsigned long long)(addr < cc->base + cc->size ? addr - cc->base : addr - (cc->base + cc->size)),
                 addr < cc->base + cc->size ? "inside" : "after the end of", (unsigned long long)cc->size, by);
        return -1;
    }
    vm_heap_chunk *c = (vm_heap_chunk *)cc;
    uint32_t was = __atomic_exchange_n(&c->freed, 1, __ATOMIC_ACQ_REL);
    if (was) {
        char fby[160];
        who(by, sizeof by, t, c, 0);
        who(fby, sizeof fby, t, c, 1);
        snprintf(buf, n, "double free: the %llu-byte device-heap allocation (malloc by %s) was freed before by %s",
                 (unsigned long long)c->size, by, fby);
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        c->free_ctaid[i] = b->ctaid[i];
        c->free_tid[i] = w->tid[i][lane];
    }
    return 0;
}
