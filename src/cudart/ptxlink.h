/* A PTX text linker for relocatable device code (nvcc -rdc=true): joins the
 * PTX of several translation units into one module that kemu can load, as
 * nvlink joins their cubins. It works on the text: declarations of symbols
 * that another unit defines are resolved, duplicate .weak definitions are
 * dropped, unit-local names that collide are renamed and .file numbers are
 * made distinct. */
#ifndef KEMU_CUDART_PTXLINK_H
#define KEMU_CUDART_PTXLINK_H

#include <stddef.h>

/* Links `count` NUL-terminated PTX texts into one malloc'd NUL-terminated
 * text (*out, caller frees; *out_len its length). Returns 0, or -1 with a
 * message in err when a text cannot be split into declarations or when two
 * units define the same visible symbol. */
int cudart_ptx_link(const char *const *texts, int count, char **out, size_t *out_len, char *err, size_t errlen);

#endif
