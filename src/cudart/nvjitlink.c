/* lib/kemu/libnvJitLink.so.13: kemu's nvJitLink, the device linker that
 * CUDA's Python stack (cuda.core's Linker, and so Numba) uses in place of
 * cuLink*. It links PTX inputs with the runtime's PTX linker (ptxlink.c)
 * and hands out the linked PTX both as "PTX" and as the "cubin", which kemu's
 * cuModuleLoadData / cuLibraryLoadData take. Cubins, LTO-IR and host objects
 * are refused with a message in the error log (libcudadevrt is skipped:
 * what PTX needs of it, kemu provides). `kemu exec` finds it first on
 * LD_LIBRARY_PATH, next to its libcuda.so.1, so that it shadows the
 * toolkit's (docs/driver.md). */
#include "config.h"
#include "cudart/fatbin.h"
#include "cudart/ptxlink.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define ALIAS(name, target) API __typeof__(target) name __attribute__((alias(#target)));

/* nvJitLinkResult and nvJitLinkInputType (nvJitLink.h of CUDA 13.0) */
enum {
    JL_SUCCESS = 0,
    JL_ERROR_UNRECOGNIZED_OPTION,
    JL_ERROR_MISSING_ARCH,
    JL_ERROR_INVALID_INPUT,
    JL_ERROR_PTX_COMPILE,
    JL_ERROR_NVVM_COMPILE,
    JL_ERROR_INTERNAL,
    JL_ERROR_THREADPOOL,
    JL_ERROR_UNRECOGNIZED_INPUT,
    JL_ERROR_FINALIZE,
    JL_ERROR_NULL_INPUT
};
enum { IN_NONE = 0, IN_CUBIN, IN_PTX, IN_LTOIR, IN_FATBIN, IN_OBJECT, IN_LIBRARY, IN_INDEX, IN_ANY = 10 };

typedef struct kemu_jitlink {
    unsigned max_sm; /* from -arch=sm_NN: the highest PTX taken from fatbinaries */
    char **texts;
    int ntexts, captexts;
    char *linked;
    size_t linked_len;
    char *info, *error; /* logs */
} kemu_jitlink;

static void append_log(char **log, const char *fmt, const char *a, const char *b)
{
    char msg[4096];
    snprintf(msg, sizeof msg, fmt, a, b);
    size_t old = *log ? strlen(*log) : 0, n = strlen(msg);
    char *grown = realloc(*log, old + n + 2);
    if (!grown)
        return;
    memcpy(grown + old, msg, n);
    grown[old + n] = '\n';
    grown[old + n + 1] = 0;
    *log = grown;
}

API int nvJitLinkCreate(kemu_jitlink **handle, uint32_t n, const char **options)
{
    if (!handle)
        return JL_ERROR_NULL_INPUT;
    kemu_jitlink *h = calloc(1, sizeof *h);
    if (!h)
        return JL_ERROR_INTERNAL;
    h->max_sm = 1000;
    for (uint32_t i = 0; options && i < n; i++)
        if (options[i] && !strncmp(options[i], "-arch=sm_", 9))
            h->max_sm = (unsigned)strtoul(options[i] + 9, NULL, 10);
    *handle = h;
    return JL_SUCCESS;
}

API int nvJitLinkDestroy(kemu_jitlink **handle)
{
    if (!handle || !*handle)
        return JL_ERROR_NULL_INPUT;
    kemu_jitlink *h = *handle;
    for (int i = 0; i < h->ntexts; i++)
        free(h->texts[i]);
    free(h->texts);
    free(h->linked);
    free(h->info);
    free(h->error);
    free(h);
    *handle = NULL;
    return JL_SUCCESS;
}

static int add_text(kemu_jitlink *h, char *ptx)
{
    if (h->ntexts == h->captexts) {
        int cap = h->captexts ? h->captexts * 2 : 4;
        char **grown = realloc(h->texts, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(ptx);
            return JL_ERROR_INTERNAL;
        }
        h->texts = grown;
        h->captexts = cap;
    }
    h->texts[h->ntexts++] = ptx;
    return JL_SUCCESS;
}

API int nvJitLinkAddData(kemu_jitlink *h, int type, const void *data, size_t size, const char *name)
{
    if (!h || !data)
        return JL_ERROR_NULL_INPUT;
    const char *what = name && *name ? name : "an input";
    const unsigned char *p = data;
    if (type == IN_ANY) {
        if (size >= 4 && !memcmp(p, "\x7f" "ELF", 4))
            type = IN_CUBIN;
        else if (size >= 8 && !memcmp(p, "!<arch>\n", 8))
            type = IN_LIBRARY;
        else if (size >= 4 && (p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) == CUDART_FATBIN_MAGIC)
            type = IN_FATBIN;
        else
            type = IN_PTX;
    }
    switch (type) {
    case IN_PTX: {
        size_t len = strnlen(data, size);
        char *text = malloc(len + 1);
        if (!text)
            return JL_ERROR_INTERNAL;
        memcpy(text, data, len);
        text[len] = 0;
        return add_text(h, text);
    }
    case IN_FATBIN: {
        int count = 0;
        char msg[2048];
        cudart_fatbin_parse(data, size, NULL, 0, &count, NULL, 0);
        cudart_fatbin_entry *entries = calloc((size_t)(count > 0 ? count : 1), sizeof *entries);
        char *ptx = NULL;
        if (!entries)
            return JL_ERROR_INTERNAL;
        if (cudart_fatbin_parse(data, size, entries, count, &count, msg, sizeof msg) ||
            cudart_fatbin_extract_ptx(entries, count, h->max_sm, &ptx, NULL, msg, sizeof msg)) {
            free(entries);
            append_log(&h->error, "kemu nvJitLink: %s: %s", what, msg);
            return JL_ERROR_INVALID_INPUT;
        }
        free(entries);
        return add_text(h, ptx);
    }
    case IN_LIBRARY:
        if (name && strstr(name, "cudadevrt"))
            return JL_SUCCESS; /* what PTX needs of libcudadevrt, kemu provides */
        append_log(&h->error, "kemu nvJitLink: %s: a library holds SASS objects; kemu links PTX inputs only%s", what,
                   "");
        return JL_ERROR_INVALID_INPUT;
    case IN_CUBIN:
    case IN_OBJECT:
        append_log(&h->error, "kemu nvJitLink: %s: a cubin or host object holds SASS; kemu runs PTX, so pass the PTX%s",
                   what, "");
        return JL_ERROR_INVALID_INPUT;
    case IN_LTOIR:
        append_log(&h->error, "kemu nvJitLink: %s: LTO-IR inputs are not supported; kemu links PTX inputs only%s",
                   what, "");
        return JL_ERROR_INVALID_INPUT;
    default:
        return JL_ERROR_UNRECOGNIZED_INPUT;
    }
}

API int nvJitLinkAddFile(kemu_jitlink *h, int type, const char *path)
{
    if (!h || !path)
        return JL_ERROR_NULL_INPUT;
    if ((type == IN_LIBRARY || type == IN_ANY) && strstr(path, "cudadevrt"))
        return JL_SUCCESS;
    FILE *f = fopen(path, "rb");
    if (!f) {
        append_log(&h->error, "kemu nvJitLink: cannot read %s%s", path, "");
        return JL_ERROR_INVALID_INPUT;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    fclose(f);
    if (!buf)
        return JL_ERROR_INTERNAL;
    buf[n] = 0;
    int r = nvJitLinkAddData(h, type, buf, n + 1, path);
    free(buf);
    return r;
}

API int nvJitLinkComplete(kemu_jitlink *h)
{
    if (!h)
        return JL_ERROR_NULL_INPUT;
    free(h->linked);
    h->linked = NULL;
    if (!h->ntexts) {
        append_log(&h->error, "kemu nvJitLink: nothing to link%s%s", "", "");
        return JL_ERROR_INVALID_INPUT;
    }
    if (h->ntexts == 1) {
        h->linked = strdup(h->texts[0]);
        if (!h->linked)
            return JL_ERROR_INTERNAL;
        h->linked_len = strlen(h->linked);
    } else {
        char msg[2048];
        if (cudart_ptx_link((const char *const *)h->texts, h->ntexts, &h->linked, &h->linked_len, msg, sizeof msg)) {
            h->linked = NULL;
            append_log(&h->error, "kemu nvJitLink: cannot link the PTX inputs: %s%s", msg, "");
            return JL_ERROR_PTX_COMPILE;
        }
    }
    append_log(&h->info, "kemu nvJitLink: linked PTX (kemu's cubin is the linked PTX)%s%s", "", "");
    return JL_SUCCESS;
}

static int size_of(const kemu_jitlink *h, size_t *size)
{
    if (!h || !size)
        return JL_ERROR_NULL_INPUT;
    if (!h->linked)
        return JL_ERROR_INVALID_INPUT;
    *size = h->linked_len + 1;
    return JL_SUCCESS;
}

static int copy_out(const kemu_jitlink *h, void *out)
{
    if (!h || !out)
        return JL_ERROR_NULL_INPUT;
    if (!h->linked)
        return JL_ERROR_INVALID_INPUT;
    memcpy(out, h->linked, h->linked_len + 1);
    return JL_SUCCESS;
}

API int nvJitLinkGetLinkedCubinSize(kemu_jitlink *h, size_t *size)
{
    return size_of(h, size);
}
API int nvJitLinkGetLinkedCubin(kemu_jitlink *h, void *out)
{
    return copy_out(h, out);
}
API int nvJitLinkGetLinkedPtxSize(kemu_jitlink *h, size_t *size)
{
    return size_of(h, size);
}
API int nvJitLinkGetLinkedPtx(kemu_jitlink *h, char *out)
{
    return copy_out(h, out);
}

static int log_size(const char *log, size_t *size)
{
    if (!size)
        return JL_ERROR_NULL_INPUT;
    *size = (log ? strlen(log) : 0) + 1;
    return JL_SUCCESS;
}

static int log_copy(const char *log, char *out)
{
    if (!out)
        return JL_ERROR_NULL_INPUT;
    strcpy(out, log ? log : "");
    return JL_SUCCESS;
}

API int nvJitLinkGetErrorLogSize(kemu_jitlink *h, size_t *size)
{
    return h ? log_size(h->error, size) : JL_ERROR_NULL_INPUT;
}
API int nvJitLinkGetErrorLog(kemu_jitlink *h, char *out)
{
    return h ? log_copy(h->error, out) : JL_ERROR_NULL_INPUT;
}
API int nvJitLinkGetInfoLogSize(kemu_jitlink *h, size_t *size)
{
    return h ? log_size(h->info, size) : JL_ERROR_NULL_INPUT;
}
API int nvJitLinkGetInfoLog(kemu_jitlink *h, char *out)
{
    return h ? log_copy(h->info, out) : JL_ERROR_NULL_INPUT;
}

API int nvJitLinkGetLinkedLTOIRSize(kemu_jitlink *h, size_t *size)
{
    (void)h, (void)size;
    return JL_ERROR_INVALID_INPUT;
}
API int nvJitLinkGetLinkedLTOIR(kemu_jitlink *h, void *out)
{
    (void)h, (void)out;
    return JL_ERROR_INVALID_INPUT;
}

/* No nvJitLinkVersion: cuda.core and numba-cuda take an nvJitLink without it
 * for one older than 12.3, which they do not use: they turn to the driver's
 * cuLink* (kemu's, over PTX) and leave LTO off, so Numba hands over PTX
 * rather than LTO-IR (NVVM bitcode, which kemu cannot run). Programs that
 * call nvJitLink directly get the functions above. */

/* the versioned names nvJitLink.h's macros compile calls to */
ALIAS(__nvJitLinkCreate_13_0, nvJitLinkCreate)
ALIAS(__nvJitLinkDestroy_13_0, nvJitLinkDestroy)
ALIAS(__nvJitLinkAddData_13_0, nvJitLinkAddData)
ALIAS(__nvJitLinkAddFile_13_0, nvJitLinkAddFile)
ALIAS(__nvJitLinkComplete_13_0, nvJitLinkComplete)
ALIAS(__nvJitLinkGetLinkedCubinSize_13_0, nvJitLinkGetLinkedCubinSize)
ALIAS(__nvJitLinkGetLinkedCubin_13_0, nvJitLinkGetLinkedCubin)
ALIAS(__nvJitLinkGetLinkedPtxSize_13_0, nvJitLinkGetLinkedPtxSize)
ALIAS(__nvJitLinkGetLinkedPtx_13_0, nvJitLinkGetLinkedPtx)
ALIAS(__nvJitLinkGetErrorLogSize_13_0, nvJitLinkGetErrorLogSize)
ALIAS(__nvJitLinkGetErrorLog_13_0, nvJitLinkGetErrorLog)
ALIAS(__nvJitLinkGetInfoLogSize_13_0, nvJitLinkGetInfoLogSize)
ALIAS(__nvJitLinkGetInfoLog_13_0, nvJitLinkGetInfoLog)
