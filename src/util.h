/* Small helpers shared by every room: an arena allocator, string
 * interning, a growable byte buffer, and error-record formatting. Nothing
 * here knows about PTX or execution. */
#ifndef KEMU_UTIL_H
#define KEMU_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "kemu/kemu.h"

#define KEMU_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fills err (when not NULL) and returns `status`. */
kemu_status util_error(kemu_error *err, kemu_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A bump allocator: everything allocated from it is freed at once. */
typedef struct util_arena_chunk util_arena_chunk;
typedef struct util_arena { util_arena_chunk *head; } util_arena;
/* Returns zeroed memory aligned to 16 bytes, or NULL when out of memory. */
void *util_arena_alloc(util_arena *arena, size_t size);
char *util_arena_strndup(util_arena *arena, const char *s, size_t n);
void util_arena_free(util_arena *arena);

/* A growable byte buffer; `data` is always NUL-terminated when non-NULL. */
typedef struct util_buffer { char *data; size_t len, cap; } util_buffer;
int util_buffer_append(util_buffer *b, const void *data, size_t n);
int util_buffer_printf(util_buffer *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void util_buffer_free(util_buffer *b);

/* Reads a whole file into a malloc'd NUL-terminated buffer; caller frees.
 * From a device or a pipe (no size), at most UTIL_READ_UNSIZED_LIMIT bytes
 * are read; more is an error (KEMU_ERR_IO). */
#define UTIL_READ_UNSIZED_LIMIT ((size_t)256 << 20)
kemu_status util_read_file(const char *path, char **data, size_t *len, kemu_error *err);

/* Grows *array (of element size `elem`) so that it can hold `need` elements.
 * Returns 0 on success, -1 when out of memory. */
int util_grow(void *array_ptr, size_t *cap, size_t need, size_t elem);

/* Sorts n elements of `size` bytes as qsort does, stably (equal elements
 * keep their order), in time that follows the input's ascending runs: an
 * array in order costs one pass of comparisons, one made of r ascending
 * runs log2(r) merge passes (logs appended by several writers, each in
 * order). Falls back to qsort when out of memory. */
void util_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
