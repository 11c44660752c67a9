/* Shared helpers: arena, buffers, file reading and error records (see
 * util.h). No room-specific logic lives here. */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

kemu_status util_error(kemu_error *err, kemu_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

struct util_arena_chunk {
    util_arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void *util_arena_alloc(util_arena *arena, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    util_arena_chunk *c = arena->head;
    if (!c || c->size - c->used < size) {
        size_t chunk = size > 65536 ? size : 65536;
        c = malloc(sizeof *c + chunk);
        if (!c)
            return NULL;
        c->next = arena->head;
        c->used = 0;
        c->size = chunk;
        arena->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *util_arena_strndup(util_arena *arena, const char *s, size_t n)
{
    char *p = util_arena_alloc(arena, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void util_arena_free(util_arena *arena)
{
    util_arena_chunk *c = arena->head;
    while (c) {
        util_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    arena->head = NULL;
}

int util_grow(void *array_ptr, size_t *cap, size_t need, size_t elem)
{
    void **array = array_ptr;
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*array, n * elem);
    if (!p)
        return -1;
    memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
    *array = p;
    *cap = n;
    return 0;
}

int util_buffer_append(util_buffer *b, const void *data, size_t n)
{
    if (util_grow(&b->data, &b->cap, b->len + n + 1, 1))
        return -1;
    if (n) /* data may be NULL when n is 0 (a block that only dropped printf output) */
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

int util_buffer_printf(util_buffer *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || util_grow(&b->data, &b->cap, b->len + (size_t)n + 1, 1))
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void util_buffer_free(util_buffer *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

kemu_status util_read_file(const char *path, char **data, size_t *len, kemu_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return util_error(err, errno == ENOENT ? KEMU_ERR_NOT_FOUND : KEMU_ERR_IO,
                          "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return util_error(err, KEMU_ERR_IO, "%s: cannot read: it is a directory", path);
    }
    /* a device or a pipe has no size: read at most UTIL_READ_UNSIZED_LIMIT
     * from it, so that /dev/zero ends with an error instead of taking all
     * memory */
    int sized = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    util_buffer b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (!sized && b.len + n > UTIL_READ_UNSIZED_LIMIT) {
            fclose(f);
            util_buffer_free(&b);
            return util_error(err, KEMU_ERR_IO, "%s: more than %d MiB from a device or pipe; give kemu a regular file",
                              path, (int)(UTIL_READ_UNSIZED_LIMIT >> 20));
        }
        if (util_buffer_append(&b, chunk, n)) {
            fclose(f);
            util_buffer_free(&b);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        }
    }
    int bad = ferror(f), saved = errno;
    fclose(f);
    if (bad) {
        util_buffer_free(&b);
        return util_error(err, KEMU_ERR_IO, "%s: read error: %s", path, strerror(saved));
    }
    if (!b.data && util_buffer_append(&b, "", 0))
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    *data = b.data;
    *len = b.len;
    return KEMU_OK;
}

/* util_sort: the input's ascending runs (their ends in `ends`) merged
 * pairwise, pass after pass, through an index array; the elements are
 * moved once at the end. */
void util_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *v = base;
    if (n < 2)
        return;
    size_t first = 1;
    while (first < n && cmp(v + (first - 1) * size, v + first * size) <= 0)
        first++;
    if (first == n)
        return; /* in order already */
    uint32_t *a = n <= UINT32_MAX ? malloc(3 * n * sizeof *a) : NULL;
    char *moved = a ? malloc(n * size) : NULL;
    if (!moved) {
        free(a);
        qsort(base, n, size, cmp);
        return;
    }
    uint32_t *b = a + n, *ends = a + 2 * n, *block = a;
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)i;
        if (i + 1 == n || (i + 1 >= first && cmp(v + i * size, v + (i + 1) * size) > 0))
            ends[r++] = (uint32_t)(i + 1);
    }
    while (r > 1) {
        size_t out = 0, start = 0;
        for (size_t k = 0; k < r; k += 2) {
            size_t mid = ends[k], end = k + 1 < r ? ends[k + 1] : mid;
            size_t x = start, y = mid, o = start;
            while (x < mid && y < end)
                b[o++] = cmp(v + (size_t)a[y] * size, v + (size_t)a[x] * size) < 0 ? a[y++] : a[x++];
            while (x < mid)
                b[o++] = a[x++];
            while (y < end)
                b[o++] = a[y++];
            ends[out++] = (uint32_t)end;
            start = end;
        }
        r = out;
        uint32_t *t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++)
        memcpy(moved + i * size, v + (size_t)a[i] * size, size);
    memcpy(v, moved, n * size);
    free(block);
    free(moved);
}
