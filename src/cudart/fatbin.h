/* CUDA fatbinary reader: finds, decompresses and chooses the PTX that nvcc
 * embeds in a host program (the argument of __cudaRegisterFatBinary).
 * The byte layout and how it was determined are in docs/fatbin.md. */
#ifndef KEMU_CUDART_FATBIN_H
#define KEMU_CUDART_FATBIN_H

#include <stddef.h>
#include <stdint.h>

/* The wrapper struct handed to __cudaRegisterFatBinary. */
#define CUDART_FATBIN_WRAPPER_MAGIC 0x466243b1u
#define CUDART_FATBIN_WRAPPER_VERSION 1      /* data: the fatbin container */
#define CUDART_FATBIN_WRAPPER_LINK_VERSION 2 /* plus a list of prelinked containers */

/* The fatbin container header. */
#define CUDART_FATBIN_MAGIC 0xba55ed50u
#define CUDART_FATBIN_HEADER_SIZE 16u       /* smallest container header */
#define CUDART_FATBIN_ENTRY_HEADER_SIZE 64u /* smallest entry header */

/* Entry kinds seen in nvcc 13 output. */
#define CUDART_FATBIN_KIND_PTX 1
#define CUDART_FATBIN_KIND_ELF 2    /* cubin */
#define CUDART_FATBIN_KIND_LTO_IR 8 /* NVVM IR from -dlto / code=lto_XX */

/* Entry flag bits seen in nvcc 13 output (see docs/fatbin.md). */
#define CUDART_FATBIN_FLAG_64BIT 0x1ull
#define CUDART_FATBIN_FLAG_DEBUG 0x2ull
#define CUDART_FATBIN_FLAG_HOST_LINUX 0x10ull
#define CUDART_FATBIN_FLAG_COMPRESS_LZ4 0x2000ull
#define CUDART_FATBIN_FLAG_COMPRESS_ZSTD 0x8000ull
#define CUDART_FATBIN_FLAG_ARCH_SPECIFIC 0x100000ull  /* sm_XXa / compute_XXa */
#define CUDART_FATBIN_FLAG_FAMILY_SPECIFIC 0x200000ull /* sm_XXf / compute_XXf */

/* Hard ceiling on one decompressed entry (1 GiB): a larger declared size is
 * treated as corrupt rather than allocated. */
#define CUDART_FATBIN_MAX_UNCOMPRESSED ((size_t)1 << 30)

typedef enum cudart_fatbin_compression {
    CUDART_FATBIN_COMPRESSION_NONE = 0,
    CUDART_FATBIN_COMPRESSION_LZ4, /* raw LZ4 block, flag 0x2000 */
    CUDART_FATBIN_COMPRESSION_ZSTD /* one zstd frame, flag 0x8000 */
} cudart_fatbin_compression;

/* One entry of a container. `data` points into the caller's container (not
 * copied); `size` is the number of payload bytes that hold the image (the
 * compressed length when compressed, without the padding that follows);
 * `uncompressed_size` is the image size once decompressed (== size when the
 * entry is stored raw). */
typedef struct cudart_fatbin_entry {
    int kind;                  /* CUDART_FATBIN_KIND_* (others kept as read) */
    unsigned sm;               /* 80 for sm_80 / compute_80 */
    uint64_t flags;            /* CUDART_FATBIN_FLAG_* bits */
    cudart_fatbin_compression compression;
    unsigned version_major;    /* PTX ISA version for PTX (9.0 for CUDA 13) */
    unsigned version_minor;
    size_t size;
    size_t uncompressed_size;
    const void *data;
} cudart_fatbin_entry;

/* Parses the fatbin container at `data`. `size` is the number of readable
 * bytes there, or 0 to trust the container's own header. Stores up to `max`
 * entries; *count receives the number of entries in the container. Returns
 * 0, or -1 with a message in err (which may be NULL) when the container is
 * malformed or has more than `max` entries (*count then says how many). Never
 * reads outside the container; pointers in entries point into `data`. */
int cudart_fatbin_parse(const void *data, size_t size, cudart_fatbin_entry *entries,
                        int max, int *count, char *err, size_t errlen);

/* Locates the fatbin containers of a __cudaRegisterFatBinary wrapper:
 * version 1 yields its one container; version 2 (device-linked programs,
 * -rdc=true) yields the linked container followed by each prelinked one of
 * its NULL-terminated list. Stores up to `max` pointers (into the program's
 * memory) and sets *count. Returns 0, or -1 with err filled on a bad magic,
 * version or container header, or when more than `max` were found. */
int cudart_fatbin_from_wrapper(const void *wrapper, const void **containers, int max,
                               int *count, char *err, size_t errlen);

/* Decompresses one entry into a malloc'd buffer with a NUL byte appended
 * (*out, caller frees; *out_size excludes that NUL). Returns 0, or -1 with
 * err filled when the declared sizes are implausible, allocation fails or
 * the payload does not decompress to exactly uncompressed_size bytes. */
int cudart_fatbin_entry_decompress(const cudart_fatbin_entry *entry, char **out,
                                   size_t *out_size, char *err, size_t errlen);

/* Chooses the PTX entry with the highest SM not above max_sm (preferring a
 * portable one over an sm_XXa/XXf one of the same SM), decompresses it into
 * a malloc'd NUL-terminated string (*ptx_out, caller frees) and stores its
 * SM in *sm_out (may be NULL). Returns 0, or -1 with err filled when there is
 * no PTX (naming the cubins and the nvcc -gencode fix), when PTX exists only
 * for higher SMs (naming them), or when decompression fails. */
int cudart_fatbin_extract_ptx(const cudart_fatbin_entry *entries, int count, unsigned max_sm,
                              char **ptx_out, unsigned *sm_out, char *err, size_t errlen);

#endif /* KEMU_CUDART_FATBIN_H */
