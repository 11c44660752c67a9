/* Parsing of `kemu run` kernel arguments (ARG forms) into buffers and
 * scalars. Shared by the run command and (later) other launchers. */
#ifndef KEMU_CLI_ARGS_H
#define KEMU_CLI_ARGS_H

#include <stdint.h>
#include "io/array.h"
#include "kemu/kemu.h"

typedef enum { ARG_IN, ARG_OUT, ARG_INOUT, ARG_SCRATCH, ARG_SCALAR, ARG_BYTES } arg_kind;

/* tmap=BOX[,swizzle=32|64|128|none][,fill=nan|zero][,estride=S][,dtype=tf32]:BUFFER
 * (BUFFER one of the in:, out:, inout:, scratch: forms): the buffer is the
 * tensor (its dtype and row-major shape), and the kernel gets a tensor map
 * over it (CUtensorMap, 128 bytes by value) instead of its address; BOX and
 * the element strides are outermost first, like shapes. Each backend
 * encodes the map over its own copy of the buffer. */
typedef struct cli_tmap {
    int enabled;
    unsigned rank;
    uint32_t box[5], estride[5]; /* outermost first, as given */
    int swizzle;              /* KEMU_TMAP_SWIZZLE_* */
    int nan_fill;
    int tf32;
} cli_tmap;

typedef struct cli_arg {
    arg_kind kind;
    const char *text;        /* as given */
    io_array array;          /* buffers: host data (inputs filled, outputs uninit) */
    char *source_path;       /* .npy input path, or NULL for generated */
    char *out_path;          /* out/inout destination */
    unsigned char value[64]; /* scalar bytes */
    unsigned char *bytes;    /* ARG_BYTES data */
    size_t size;             /* scalar/bytes size */
    uint64_t device;         /* device address for buffers */
    cli_tmap tmap;           /* a tensor map over this buffer (tmap=...) */
    unsigned char *map;      /* its emulator encoding (KEMU_TENSOR_MAP_BYTES, 64-aligned) */
} cli_arg;

/* Encodes argument a's tensor map (tmap=) over its buffer at `address`
 * into map (128 bytes, 64-aligned) with `encode` (the emulator's, or the
 * GPU backend's driver call). Returns 0, or -1 with a message in err. */
typedef int (*cli_tmap_encoder)(void *ctx, void *map, int dtype, unsigned rank, uint64_t address,
                                const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                const uint32_t *estride, int swizzle, int oob_fill, char *err, size_t errlen);
int cli_tmap_encode(const cli_arg *a, uint64_t address, cli_tmap_encoder encode, void *ctx, void *map, char *err,
                    size_t errlen);
/* The emulator's encoder (kemu_tensor_map_encode_tiled). */
int cli_tmap_encode_emu(void *ctx, void *map, int dtype, unsigned rank, uint64_t address, const uint64_t *dims,
                        const uint64_t *strides, const uint32_t *box, const uint32_t *estride, int swizzle,
                        int oob_fill, char *err, size_t errlen);

/* Parses one ARG. Returns 0, or -1 with a one-line message in err. */
int cli_arg_parse(const char *text, io_uninit_mode uninit, cli_arg *out, char *err, size_t errlen);
void cli_arg_free(cli_arg *a);
int cli_arg_is_buffer(const cli_arg *a);

#endif
