/* Parsing of `kemu run` kernel arguments (ARG forms) into buffers and
 * scalars. Shared by the run command and (later) other launchers. */
#ifndef KEMU_CLI_ARGS_H
#define KEMU_CLI_ARGS_H

#include <stdint.h>
#include "io/array.h"
#include "kemu/kemu.h"
#include "kemu/plan.h"

typedef enum { ARG_IN, ARG_OUT, ARG_INOUT, ARG_SCRATCH, ARG_SCALAR, ARG_BYTES } arg_kind;

/* tmap=BOX[,swizzle=32|64|128|none][,fill=nan|zero][,estride=S][,dtype=tf32]:BUFFER
 * (BUFFER one of the in:, out:, inout:, scratch: forms): the buffer is the
 * tensor (its dtype and row-major shape), and the kernel gets a tensor map
 * over it (CUtensorMap, 128 bytes by value) instead of its address; BOX and
 * the element strides are outermost first, like shapes. The launch plan
 * encodes it on each backend over its own copy of the buffer. */
typedef struct cli_arg {
    arg_kind kind;
    const char *text;        /* as given */
    io_array array;          /* buffers: host data (inputs filled, outputs uninit) */
    char *source_path;       /* .npy input path, or NULL for generated */
    char *out_path;          /* out/inout destination */
    unsigned char value[64]; /* scalar bytes */
    unsigned char *bytes;    /* ARG_BYTES data */
    size_t size;             /* scalar/bytes size */
    int has_tmap;            /* the kernel gets a tensor map over this buffer (tmap=...) */
    kemu_plan_tensor_map tmap;
} cli_arg;

/* Parses one ARG. Returns 0, or -1 with a one-line message in err. */
int cli_arg_parse(const char *text, io_uninit_mode uninit, cli_arg *out, char *err, size_t errlen);
void cli_arg_free(cli_arg *a);
int cli_arg_is_buffer(const cli_arg *a);

#endif
