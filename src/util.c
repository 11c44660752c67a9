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
