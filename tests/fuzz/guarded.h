/* A buffer that ends right before an inaccessible page, for the fuzz
 * targets: any read past the end of the input faults at once, also from
 * uninstrumented code (libc, libzstd, liblz4) that AddressSanitizer cannot
 * see into. */
#ifndef KEMU_FUZZ_GUARDED_H
#define KEMU_FUZZ_GUARDED_H

#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct fuzz_guarded {
    void *mapping;       /* what to munmap */
    size_t mapping_size;
    char *data;          /* the copy; the guard page follows its extra bytes */
} fuzz_guarded;

/* Copies size bytes of input into a new guarded buffer, followed by `extra`
 * zero bytes and then the guard page. Returns 0, or -1 when the mapping
 * fails. */
static inline int fuzz_guarded_copy(fuzz_guarded *g, const void *input, size_t size, size_t extra)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = size + extra;
    size_t data_pages = need ? (need + page - 1) / page : 1;
    size_t total = (data_pages + 1) * page;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return -1;
    if (mprotect(base + data_pages * page, page, PROT_NONE) != 0) {
        munmap(base, total);
        return -1;
    }
    g->mapping = base;
    g->mapping_size = total;
    g->data = base + data_pages * page - need;
    if (size)
        memcpy(g->data, input, size);
    memset(g->data + size, 0, extra);
    return 0;
}

static inline void fuzz_guarded_free(fuzz_guarded *g)
{
    munmap(g->mapping, g->mapping_size);
}

/* An error must come with a terminated, non-empty message. */
static inline void fuzz_check_message(const char *message, size_t capacity)
{
    size_t length = strnlen(message, capacity);
    if (length == 0 || length == capacity)
        __builtin_trap();
}

#endif
