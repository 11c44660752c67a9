/* CUDA fatbinary reader for the libcudart replacement.
 *
 * A program built by nvcc hands __cudaRegisterFatBinary a small wrapper that
 * points at one or more fatbin containers; each container holds entries (PTX
 * text, cubins, LTO IR) for several SMs, stored raw or compressed with LZ4 or
 * zstd. This file walks those bytes, validates every size against the
 * container bounds, decompresses an entry and picks the PTX kemu should run.
 * It only reads: it loads no module and calls nothing in the runtime. Input
 * may be corrupt (it is fuzzed), so every read is checked against declared
 * sizes and every failure is a returned message, never a crash.
 * Layout details and how they were found: docs/fatbin.md. */
#include "cudart/fatbin.h"

#include <limits.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Longest list of prelinked containers accepted in a version-2 wrapper; a
 * longer one is taken to be a missing NULL terminator. */
#define FATBIN_MAX_PRELINKED 65536

/* Field offsets inside an entry header (see docs/fatbin.md). */
#define ENTRY_KIND 0x00              /* u16 */
#define ENTRY_HEADER_SIZE 0x04       /* u32 */
#define ENTRY_PAYLOAD_SIZE 0x08      /* u64, padded to 8 */
#define ENTRY_COMPRESSED_SIZE 0x10   /* u32, exact compressed length */
#define ENTRY_VERSION_MINOR 0x18     /* u16 */
#define ENTRY_VERSION_MAJOR 0x1a     /* u16 */
#define ENTRY_SM 0x1c                /* u32 */
#define ENTRY_FLAGS 0x28             /* u64 */
#define ENTRY_UNCOMPRESSED_SIZE 0x38 /* u64 */

/* The struct nvcc emits for __cudaRegisterFatBinary (fatbinary_section.h). */
typedef struct fatbin_wrapper {
    int magic;
    int version;
    const void *data;
    const void *filename_or_fatbins; /* v1: unused; v2: const void *[] ending in NULL */
} fatbin_wrapper;

static int fatbin_error(char *err, size_t errlen, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes a message into err (when there is room) and returns -1. */
static int fatbin_error(char *err, size_t errlen, const char *format, ...)
{
    if (err != NULL && errlen > 0) {
        va_list args;
        va_start(args, format);
        vsnprintf(err, errlen, format, args);
        va_end(args);
    }
    return -1;
}

static uint16_t read_u16(const unsigned char *bytes)
{
    return (uint16_t)(bytes[0] | (bytes[1] << 8));
}

static uint32_t read_u32(const unsigned char *bytes)
{
    return (uint32_t)bytes[0] | ((uint32_t)bytes[1] << 8) | ((uint32_t)bytes[2] << 16) |
           ((uint32_t)bytes[3] << 24);
}

static uint64_t read_u64(const unsigned char *bytes)
{
    return (uint64_t)read_u32(bytes) | ((uint64_t)read_u32(bytes + 4) << 32);
}

static int all_zero(const unsigned char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (bytes[i] != 0)
            return 0;
    return 1;
}

/* Reads one entry header at `entry` (`remaining` bytes up to the container's
 * end) into *out and its total length (header + payload) into *advance. */
static int parse_entry(const unsigned char *entry, uint64_t remaining, size_t offset,
                       cudart_fatbin_entry *out, uint64_t *advance, char *err, size_t errlen)
{
    unsigned kind = read_u16(entry + ENTRY_KIND);
    uint32_t header_size = read_u32(entry + ENTRY_HEADER_SIZE);
    uint64_t payload_size = read_u64(entry + ENTRY_PAYLOAD_SIZE);
    uint32_t compressed_size = read_u32(entry + ENTRY_COMPRESSED_SIZE);
    uint64_t flags = read_u64(entry + ENTRY_FLAGS);
    uint64_t uncompressed_size = read_u64(entry + ENTRY_UNCOMPRESSED_SIZE);
    uint64_t compression_bits =
        flags & (CUDART_FATBIN_FLAG_COMPRESS_LZ4 | CUDART_FATBIN_FLAG_COMPRESS_ZSTD);

    if (kind == 0)
        return fatbin_error(err, errlen, "fatbin entry at offset %zu has kind 0", offset);
    if (header_size < CUDART_FATBIN_ENTRY_HEADER_SIZE || header_size > remaining)
        return fatbin_error(err, errlen,
                            "fatbin entry at offset %zu has header size %u (must be %u..%llu)",
                            offset, (unsigned)header_size, CUDART_FATBIN_ENTRY_HEADER_SIZE,
                            (unsigned long long)remaining);
    if (payload_size > remaining - header_size)
        return fatbin_error(err, errlen,
                            "fatbin entry at offset %zu declares %llu payload bytes but the "
                            "container has %llu left",
                            offset, (unsigned long long)payload_size,
                            (unsigned long long)(remaining - header_size));

    memset(out, 0, sizeof *out);
    out->kind = (int)kind;
    out->sm = read_u32(entry + ENTRY_SM);
    out->flags = flags;
    out->version_major = read_u16(entry + ENTRY_VERSION_MAJOR);
    out->version_minor = read_u16(entry + ENTRY_VERSION_MINOR);
    out->data = entry + header_size;

    if (compression_bits == 0) {
        out->compression = CUDART_FATBIN_COMPRESSION_NONE;
        out->size = (size_t)payload_size;
        out->uncompressed_size = (size_t)payload_size;
    } else if (compression_bits == (CUDART_FATBIN_FLAG_COMPRESS_LZ4 |
                                    CUDART_FATBIN_FLAG_COMPRESS_ZSTD)) {
        return fatbin_error(err, errlen,
                            "fatbin entry at offset %zu claims both LZ4 and zstd compression",
                            offset);
    } else {
        if (compressed_size == 0 || compressed_size > payload_size)
            return fatbin_error(err, errlen,
                                "fatbin entry at offset %zu has compressed size %u outside its "
                                "%llu-byte payload",
                                offset, (unsigned)compressed_size,
                                (unsigned long long)payload_size);
        if (uncompressed_size == 0 || uncompressed_size > CUDART_FATBIN_MAX_UNCOMPRESSED)
            return fatbin_error(err, errlen,
                                "fatbin entry at offset %zu has implausible uncompressed size %llu",
                                offset, (unsigned long long)uncompressed_size);
        out->compression = compression_bits == CUDART_FATBIN_FLAG_COMPRESS_LZ4
                               ? CUDART_FATBIN_COMPRESSION_LZ4
                               : CUDART_FATBIN_COMPRESSION_ZSTD;
        out->size = compressed_size;
        out->uncompressed_size = (size_t)uncompressed_size;
    }
    *advance = (uint64_t)header_size + payload_size;
    return 0;
}

int cudart_fatbin_parse(const void *data, size_t size, cudart_fatbin_entry *entries, int max,
                        int *count, char *err, size_t errlen)
{
    const unsigned char *bytes = data;

    if (count == NULL)
        return fatbin_error(err, errlen, "cudart_fatbin_parse: count is NULL");
    *count = 0;
    if (data == NULL)
        return fatbin_error(err, errlen, "fatbin container pointer is NULL");
    if (max < 0 || (max > 0 && entries == NULL))
        return fatbin_error(err, errlen, "cudart_fatbin_parse: bad entries array");
    if (size != 0 && size < CUDART_FATBIN_HEADER_SIZE)
        return fatbin_error(err, errlen, "fatbin container truncated: %zu bytes, header needs %u",
                            size, CUDART_FATBIN_HEADER_SIZE);

    uint32_t magic = read_u32(bytes);
    unsigned version = read_u16(bytes + 4);
    unsigned header_size = read_u16(bytes + 6);
    uint64_t body_size = read_u64(bytes + 8);

    if (magic != CUDART_FATBIN_MAGIC)
        return fatbin_error(err, errlen, "not a fatbin container: magic 0x%08x, expected 0x%08x",
                            (unsigned)magic, CUDART_FATBIN_MAGIC);
    if (version != 1)
        return fatbin_error(err, errlen, "unsupported fatbin container version %u (expected 1)",
                            version);
    if (header_size < CUDART_FATBIN_HEADER_SIZE)
        return fatbin_error(err, errlen, "fatbin container header size %u is below %u",
                            header_size, CUDART_FATBIN_HEADER_SIZE);
    if (body_size > (uint64_t)SIZE_MAX - header_size)
        return fatbin_error(err, errlen, "fatbin container size %llu is too large",
                            (unsigned long long)body_size);
    uint64_t total = header_size + body_size;
    if (size != 0 && total > size)
        return fatbin_error(err, errlen,
                            "fatbin container declares %llu bytes but only %zu are available",
                            (unsigned long long)total, size);

    uint64_t offset = header_size;
    int found = 0;
    while (offset < total) {
        uint64_t remaining = total - offset;
        if (remaining < CUDART_FATBIN_ENTRY_HEADER_SIZE) {
            if (all_zero(bytes + offset, (size_t)remaining))
                break; /* trailing padding */
            return fatbin_error(err, errlen,
                                "fatbin container has %llu stray bytes at offset %llu",
                                (unsigned long long)remaining, (unsigned long long)offset);
        }
        cudart_fatbin_entry entry;
        uint64_t advance = 0;
        if (parse_entry(bytes + offset, remaining, (size_t)offset, &entry, &advance, err,
                        errlen) != 0)
            return -1;
        if (found == INT_MAX)
            return fatbin_error(err, errlen, "fatbin container has too many entries");
        if (found < max)
            entries[found] = entry;
        found++;
        offset += advance;
    }
    *count = found;
    if (found > max)
        return fatbin_error(err, errlen, "fatbin container has %d entries, room for only %d",
                            found, max);
    return 0;
}

/* Checks that `container` starts with the container magic. */
static int check_container_magic(const void *container, const char *what, char *err,
                                 size_t errlen)
{
    uint32_t magic = read_u32(container);
    if (magic != CUDART_FATBIN_MAGIC)
        return fatbin_error(err, errlen,
                            "%s does not start with the fatbin magic (0x%08x, expected 0x%08x)",
                            what, (unsigned)magic, CUDART_FATBIN_MAGIC);
    return 0;
}

int cudart_fatbin_from_wrapper(const void *wrapper, const void **containers, int max,
                               int *count, char *err, size_t errlen)
{
    fatbin_wrapper header;

    if (count == NULL)
        return fatbin_error(err, errlen, "cudart_fatbin_from_wrapper: count is NULL");
    *count = 0;
    if (wrapper == NULL)
        return fatbin_error(err, errlen, "fatbin wrapper pointer is NULL");
    if (max < 0 || (max > 0 && containers == NULL))
        return fatbin_error(err, errlen, "cudart_fatbin_from_wrapper: bad containers array");
    memcpy(&header, wrapper, sizeof header);
    if ((uint32_t)header.magic != CUDART_FATBIN_WRAPPER_MAGIC)
        return fatbin_error(err, errlen,
                            "not a fatbin wrapper: magic 0x%08x, expected 0x%08x",
                            (unsigned)header.magic, CUDART_FATBIN_WRAPPER_MAGIC);
    if (header.version != CUDART_FATBIN_WRAPPER_VERSION &&
        header.version != CUDART_FATBIN_WRAPPER_LINK_VERSION)
        return fatbin_error(err, errlen, "unsupported fatbin wrapper version %d (expected 1 or 2)",
                            header.version);

    int found = 0;
    if (header.data != NULL) {
        if (check_container_magic(header.data, "fatbin wrapper data", err, errlen) != 0)
            return -1;
        if (found < max)
            containers[found] = header.data;
        found++;
    } else if (header.version == CUDART_FATBIN_WRAPPER_VERSION) {
        return fatbin_error(err, errlen, "fatbin wrapper (version 1) has no data pointer");
    }

    if (header.version == CUDART_FATBIN_WRAPPER_LINK_VERSION &&
        header.filename_or_fatbins != NULL) {
        const void *const *prelinked = header.filename_or_fatbins;
        int index;
        for (index = 0; prelinked[index] != NULL; index++) {
            if (index == FATBIN_MAX_PRELINKED)
                return fatbin_error(err, errlen,
                                    "fatbin wrapper lists more than %d prelinked containers "
                                    "(missing NULL terminator?)",
                                    FATBIN_MAX_PRELINKED);
            char what[64];
            snprintf(what, sizeof what, "prelinked fatbin %d", index);
            if (check_container_magic(prelinked[index], what, err, errlen) != 0)
                return -1;
            if (found < max)
                containers[found] = prelinked[index];
            found++;
        }
    }
    *count = found;
    if (found == 0)
        return fatbin_error(err, errlen, "fatbin wrapper (version 2) names no container");
    if (found > max)
        return fatbin_error(err, errlen, "fatbin wrapper names %d containers, room for only %d",
                            found, max);
    return 0;
}

int cudart_fatbin_entry_decompress(const cudart_fatbin_entry *entry, char **out,
                                   size_t *out_size, char *err, size_t errlen)
{
    if (out != NULL)
        *out = NULL;
    if (out_size != NULL)
        *out_size = 0;
    if (entry == NULL || out == NULL)
        return fatbin_error(err, errlen, "cudart_fatbin_entry_decompress: NULL argument");
    if (entry->data == NULL && entry->size > 0)
        return fatbin_error(err, errlen, "fatbin entry has no data");

    size_t target = entry->uncompressed_size;
    if (target > CUDART_FATBIN_MAX_UNCOMPRESSED)
        return fatbin_error(err, errlen, "fatbin entry's uncompressed size %zu exceeds %zu",
                            target, CUDART_FATBIN_MAX_UNCOMPRESSED);

    switch (entry->compression) {
    case CUDART_FATBIN_COMPRESSION_NONE:
        if (target != entry->size)
            return fatbin_error(err, errlen,
                                "uncompressed fatbin entry has size %zu but claims %zu",
                                entry->size, target);
        break;
    case CUDART_FATBIN_COMPRESSION_ZSTD: {
        unsigned long long declared = ZSTD_getFrameContentSize(entry->data, entry->size);
        if (declared == ZSTD_CONTENTSIZE_ERROR)
            return fatbin_error(err, errlen, "fatbin entry is not a zstd frame");
        if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != target)
            return fatbin_error(err, errlen,
                                "zstd frame holds %llu bytes but the fatbin entry claims %zu",
                                declared, target);
        /* A zstd block of at most 128 KiB costs at least 4 input bytes (an
         * RLE block), so one input byte yields at most 32 KiB. */
        if ((uint64_t)target > (uint64_t)entry->size * 32768u + 131072u)
            return fatbin_error(err, errlen,
                                "fatbin entry claims %zu uncompressed bytes from %zu zstd bytes",
                                target, entry->size);
        break;
    }
    case CUDART_FATBIN_COMPRESSION_LZ4:
        if (entry->size > INT_MAX || target > INT_MAX)
            return fatbin_error(err, errlen, "LZ4 fatbin entry too large");
        /* One LZ4 input byte expands to at most 255 output bytes. */
        if ((uint64_t)target > (uint64_t)entry->size * 255u + 64u)
            return fatbin_error(err, errlen,
                                "fatbin entry claims %zu uncompressed bytes from %zu LZ4 bytes",
                                target, entry->size);
        break;
    default:
        return fatbin_error(err, errlen, "fatbin entry has unknown compression %d",
                            (int)entry->compression);
    }

    char *buffer = malloc(target + 1);
    if (buffer == NULL)
        return fatbin_error(err, errlen, "out of memory decompressing %zu bytes", target);

    if (entry->compression == CUDART_FATBIN_COMPRESSION_NONE) {
        if (target > 0)
            memcpy(buffer, entry->data, target);
    } else if (entry->compression == CUDART_FATBIN_COMPRESSION_ZSTD) {
        size_t produced = ZSTD_decompress(buffer, target, entry->data, entry->size);
        if (ZSTD_isError(produced) || produced != target) {
            free(buffer);
            if (ZSTD_isError(produced))
                return fatbin_error(err, errlen, "zstd decompression failed: %s",
                                    ZSTD_getErrorName(produced));
            return fatbin_error(err, errlen, "zstd decompression gave %zu bytes, expected %zu",
                                produced, target);
        }
    } else {
        int produced = LZ4_decompress_safe(entry->data, buffer, (int)entry->size, (int)target);
        if (produced < 0 || (size_t)produced != target) {
            free(buffer);
            if (produced < 0)
                return fatbin_error(err, errlen, "LZ4 decompression failed (corrupt data)");
            return fatbin_error(err, errlen, "LZ4 decompression gave %d bytes, expected %zu",
                                produced, target);
        }
    }
    buffer[target] = '\0';
    *out = buffer;
    if (out_size != NULL)
        *out_size = target;
    return 0;
}

/* Appends "prefix_SM[a|f]" for `entry` to the list in text (at *used),
 * skipping a name already listed; stops quietly when the buffer is full. */
static void append_target_name(char *text, size_t capacity, size_t *used, const char *prefix,
                               const cudart_fatbin_entry *entry)
{
    char name[48];
    const char *suffix = "";
    if (entry->flags & CUDART_FATBIN_FLAG_ARCH_SPECIFIC)
        suffix = "a";
    else if (entry->flags & CUDART_FATBIN_FLAG_FAMILY_SPECIFIC)
        suffix = "f";
    snprintf(name, sizeof name, "%s_%u%s", prefix, entry->sm, suffix);

    /* Skip duplicates: the list is ", "-separated whole names. */
    size_t name_length = strlen(name);
    const char *at = text;
    while ((at = strstr(at, name)) != NULL) {
        int starts = at == text || at[-1] == ' ';
        int ends = at[name_length] == '\0' || at[name_length] == ',';
        if (starts && ends)
            return;
        at += name_length;
    }
    if (*used >= capacity)
        return;
    int written = snprintf(text + *used, capacity - *used, "%s%s", *used > 0 ? ", " : "", name);
    if (written < 0 || (size_t)written >= capacity - *used)
        *used = capacity;
    else
        *used += (size_t)written;
}

/* Lists the targets of all entries of `kind` into text ("" when none). */
static void list_targets(const cudart_fatbin_entry *entries, int count, int kind,
                         const char *prefix, char *text, size_t capacity)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < count; i++)
        if (entries[i].kind == kind)
            append_target_name(text, capacity, &used, prefix, &entries[i]);
}

static int is_target_specific(const cudart_fatbin_entry *entry)
{
    return (entry->flags &
            (CUDART_FATBIN_FLAG_ARCH_SPECIFIC | CUDART_FATBIN_FLAG_FAMILY_SPECIFIC)) != 0;
}

int cudart_fatbin_extract_ptx(const cudart_fatbin_entry *entries, int count, unsigned max_sm,
                              char **ptx_out, unsigned *sm_out, char *err, size_t errlen)
{
    if (ptx_out == NULL)
        return fatbin_error(err, errlen, "cudart_fatbin_extract_ptx: ptx_out is NULL");
    *ptx_out = NULL;
    if (count < 0 || (count > 0 && entries == NULL))
        return fatbin_error(err, errlen, "cudart_fatbin_extract_ptx: bad entries array");

    int best = -1;
    for (int i = 0; i < count; i++) {
        const cudart_fatbin_entry *entry = &entries[i];
        if (entry->kind != CUDART_FATBIN_KIND_PTX || entry->sm > max_sm)
            continue;
        if (best < 0 || entry->sm > entries[best].sm ||
            (entry->sm == entries[best].sm && is_target_specific(&entries[best]) &&
             !is_target_specific(entry)))
            best = i;
    }

    if (best < 0) {
        char ptx_list[256], cubin_list[256], lto_list[256];
        list_targets(entries, count, CUDART_FATBIN_KIND_PTX, "compute", ptx_list,
                     sizeof ptx_list);
        list_targets(entries, count, CUDART_FATBIN_KIND_ELF, "sm", cubin_list,
                     sizeof cubin_list);
        list_targets(entries, count, CUDART_FATBIN_KIND_LTO_IR, "lto", lto_list,
                     sizeof lto_list);
        if (ptx_list[0] != '\0')
            return fatbin_error(err, errlen,
                                "the fatbinary has PTX only for %s, above the emulated sm_%u; "
                                "rebuild with -gencode arch=compute_%u,code=compute_%u (or "
                                "lower) or emulate a newer SM",
                                ptx_list, max_sm, max_sm, max_sm);
        if (cubin_list[0] != '\0' || lto_list[0] != '\0')
            return fatbin_error(err, errlen,
                                "the fatbinary has no PTX, only %s%s%s%s%s; kemu runs PTX, so "
                                "embed it with -gencode arch=compute_XX,code=compute_XX "
                                "(e.g. -gencode arch=compute_%u,code=compute_%u)",
                                cubin_list[0] ? "cubin for " : "", cubin_list,
                                cubin_list[0] && lto_list[0] ? " and " : "",
                                lto_list[0] ? "LTO IR for " : "", lto_list, max_sm, max_sm);
        return fatbin_error(err, errlen, "the fatbinary holds no PTX (%d entries)", count);
    }

    char *text = NULL;
    char detail[512];
    if (cudart_fatbin_entry_decompress(&entries[best], &text, NULL, detail, sizeof detail) != 0)
        return fatbin_error(err, errlen, "cannot read the PTX for compute_%u: %s",
                            entries[best].sm, detail);
    *ptx_out = text;
    if (sm_out != NULL)
        *sm_out = entries[best].sm;
    return 0;
}
