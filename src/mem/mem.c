/* Global-memory allocation table (see mem.h). Allocations are sorted by
 * base address so lookups are a binary search; launches only read the
 * table, so they need no lock. */
#include "mem/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t page_round(uint64_t n)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

void mem_space_init(mem_space *m)
{
    memset(m, 0, sizeof *m);
    m->next_address = MEM_DEVICE_BASE;
    pthread_mutex_init(&m->lock, NULL);
}

/* Maps `bytes` at the next free deterministic address. */
static void *map_next(mem_space *m, uint64_t bytes)
{
    /* with a granule, the next allocation starts where this one's granule
     * ends (no guard between: the byte before an allocation is mapped on a
     * GPU too, in the granule below) */
    uint64_t span = m->granule ? (bytes + m->granule - 1) / m->granule * m->granule : bytes + MEM_GUARD;
    for (int tries = 0; tries < 64; tries++) {
        void *want = (void *)(uintptr_t)m->next_address;
        void *p = mmap(want, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
                       MAP_FIXED_NOREPLACE, -1, 0);
        if (p == want) {
            m->next_address += span;
            return p;
        }
        if (p != MAP_FAILED)
            munmap(p, bytes); /* an old kernel ignored the hint: skip this range */
        m->next_address += span;
    }
    return NULL;
}

void mem_space_destroy(mem_space *m)
{
    for (size_t i = 0; i < m->count; i++)
        munmap((void *)(uintptr_t)m->allocs[i].base, page_round(m->allocs[i].size));
    free(m->allocs);
    free(m->freed);
    pthread_mutex_destroy(&m->lock);
    memset(m, 0, sizeof *m);
}

int mem_alloc(mem_space *m, uint64_t size, int fill, int kind, uint64_t *address)
{
    if (size == 0)
        size = 1;
    if (size > (1ull << 40))
        return -1;
    uint64_t total = page_round(size);
    pthread_mutex_lock(&m->lock);
    if (m->count == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        mem_allocation *a = realloc(m->allocs, cap * sizeof *a);
        if (!a) {
            pthread_mutex_unlock(&m->lock);
            return -1;
        }
        m->allocs = a;
        m->cap = cap;
    }
    void *p = map_next(m, total);
    if (!p) {
        pthread_mutex_unlock(&m->lock);
        return -1;
    }
    if (fill)
        memset(p, fill, size);
    uint64_t base = (uint64_t)(uintptr_t)p;
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->allocs[mid].base < base)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&m->allocs[lo + 1], &m->allocs[lo], (m->count - lo) * sizeof *m->allocs);
    m->allocs[lo] = (mem_allocation){base, size, kind, ++m->next_id, 0, 0};
    m->count++;
    pthread_mutex_unlock(&m->lock);
    *address = base;
    return 0;
}

static size_t find_index(const mem_space *m, uint64_t address)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->allocs[mid].base <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo; /* first allocation with base > address */
}

int mem_free(mem_space *m, uint64_t address)
{
    pthread_mutex_lock(&m->lock);
    size_t i = find_index(m, address);
    if (i == 0 || m->allocs[i - 1].base != address) {
        pthread_mutex_unlock(&m->lock);
        return -1;
    }
    i--;
    if (m->nfreed == m->capfreed) {
        size_t cap = m->capfreed ? m->capfreed * 2 : 16;
        mem_allocation *f = realloc(m->freed, cap * sizeof *f);
        if (f) {
            m->freed = f;
            m->capfreed = cap;
        }
    }
    if (m->nfreed < m->capfreed)
        m->freed[m->nfreed++] = m->allocs[i];
    munmap((void *)(uintptr_t)m->allocs[i].base, page_round(m->allocs[i].size));
    memmove(&m->allocs[i], &m->allocs[i + 1], (m->count - i - 1) * sizeof *m->allocs);
    m->count--;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

const mem_allocation *mem_find_containing(const mem_space *m, uint64_t address)
{
    size_t i = find_index(m, address);
    if (i == 0)
        return NULL;
    const mem_allocation *a = &m->allocs[i - 1];
    return address - a->base < a->size ? a : NULL;
}

const mem_allocation *mem_find_below(const mem_space *m, uint64_t address)
{
    size_t i = find_index(m, address);
    return i ? &m->allocs[i - 1] : NULL;
}

const mem_allocation *mem_find_above(const mem_space *m, uint64_t address)
{
    size_t i = find_index(m, address);
    return i < m->count ? &m->allocs[i] : NULL;
}

void mem_describe_address(const mem_space *m, uint64_t address, char *buf, size_t n)
{
    const mem_allocation *below = mem_find_below(m, address), *above = mem_find_above(m, address);
    if (address == 0) {
        snprintf(buf, n, "a null pointer");
        return;
    }
    if (below && address - below->base < below->size) {
        snprintf(buf, n, "allocation #%llu (%llu bytes at 0x%llx), offset %llu", (unsigned long long)below->id,
                 (unsigned long long)below->size, (unsigned long long)below->base,
                 (unsigned long long)(address - below->base));
        return;
    }
    const mem_allocation *freed = mem_find_freed(m, address);
    if (freed) {
        snprintf(buf, n, "%llu bytes into allocation #%llu (%llu bytes at 0x%llx), which was freed",
                 (unsigned long long)(address - freed->base), (unsigned long long)freed->id,
                 (unsigned long long)freed->size, (unsigned long long)freed->base);
        return;
    }
    uint64_t past = below ? address - (below->base + below->size) : UINT64_MAX;
    uint64_t before = above ? above->base - address : UINT64_MAX;
    if (past < MEM_NEAR_BYTES && past <= before)
        snprintf(buf, n, "%llu bytes past the end of allocation #%llu (%llu bytes at 0x%llx)",
                 (unsigned long long)past, (unsigned long long)below->id, (unsigned long long)below->size,
                 (unsigned long long)below->base);
    else if (before <= MEM_NEAR_BYTES)
        snprintf(buf, n, "%llu bytes before the start of allocation #%llu (%llu bytes at 0x%llx)",
                 (unsigned long long)before, (unsigned long long)above->id, (unsigned long long)above->size,
                 (unsigned long long)above->base);
    else
        snprintf(buf, n, "no allocation");
}

const mem_allocation *mem_find(const mem_space *m, uint64_t address, uint64_t size)
{
    const mem_allocation *a = mem_find_containing(m, address);
    if (!a || address + size < address || address + size > a->base + a->size)
        return NULL;
    return a;
}

const mem_allocation *mem_find_freed(const mem_space *m, uint64_t address)
{
    for (size_t i = m->nfreed; i > 0; i--) {
        const mem_allocation *a = &m->freed[i - 1];
        if (address >= a->base && address - a->base < a->size)
            return a;
    }
    return NULL;
}

int mem_find_copy(mem_space *m, uint64_t address, uint64_t size, mem_allocation *out)
{
    pthread_mutex_lock(&m->lock);
    const mem_allocation *a = mem_find(m, address, size);
    if (a)
        *out = *a;
    pthread_mutex_unlock(&m->lock);
    return a ? 0 : -1;
}
