/* kemu — Pallas-style kernel calls: the public C API.
 *
 * A call describes one kernel launch the way a JAX Pallas user describes a
 * pallas_call or an mpmd_map: operands are arrays (inputs, then outputs,
 * then scratch), outputs may alias inputs, and the launch is a grid of
 * blocks or a mesh (grid x cluster x warpgroups). kemu_call_run checks the
 * call against the limits of the Mosaic GPU backend's interpret mode (same
 * order, same messages), then allocates the buffers, launches the kernel
 * and returns the outputs. `kemu call SPEC.json` is this API behind a JSON
 * reader; docs/call-spec.md describes both.
 *
 * Kernel ABI: the entry's parameters are the operands in order, one each:
 * inputs and outputs as the 64-bit device address of their global buffer
 * (an output aliased to an input gets that input's buffer), then scratch:
 * "gmem" scratch as a global device address, "smem" scratch as the address
 * of its buffer in the block's shared memory (.shared state space; a .u64
 * or .u32 parameter), inside the launch's dynamic shared memory.
 */
#ifndef KEMU_CALL_H
#define KEMU_CALL_H

#include <stddef.h>
#include "kemu/kemu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KEMU_CALL_MAX_DIMS 8

/* One grid dimension: a static size, or (dynamic != NULL) a dynamic bound
 * read from the input of that name, which interpret mode refuses. */
typedef struct kemu_call_dim {
    unsigned long long size;
    const char *dynamic;
} kemu_call_dim;

/* A mesh like plgpu.Mesh: grid_ndim (0-3) grid dimensions of clusters,
 * cluster_ndim (0-3) dimensions of blocks per cluster, and num_threads
 * warpgroups of 128 CUDA threads per block (0 is taken as 1). */
typedef struct kemu_call_mesh {
    int grid_ndim;
    unsigned grid[3];
    int cluster_ndim;
    unsigned cluster[3];
    unsigned num_threads;
    const char *thread_name;   /* informational */
} kemu_call_mesh;

/* An input or output array. dtype is a kemu name (f16 bf16 f32 f64 i8 i16
 * i32 i64 u8 u16 u32 u64 bool) or the NumPy one (float32, int8, ...).
 * Inputs take their data from `data` (host, C order; dtype and shape
 * required), from the .npy file `npy` (dtype NULL: dtype and shape from
 * the file; otherwise they must match it) or from the generator `init`
 * ("arange", "zeros", "ones", "fill=V", "rand[=SEED]"; dtype and shape
 * required). Outputs need dtype and shape unless aliased (NULL dtype: the
 * input's); a non-NULL `npy` is where the output is written. `name` is
 * optional (messages, dynamic grid bounds). */
typedef struct kemu_call_array {
    const char *name;
    const char *dtype;
    int ndim;
    unsigned long long shape[KEMU_CALL_MAX_DIMS];
    const void *data;
    const char *npy;
    const char *init;
} kemu_call_array;

typedef enum kemu_call_memory_space {
    KEMU_CALL_SMEM = 0,   /* the block's shared memory (one copy per block) */
    KEMU_CALL_GMEM        /* one global buffer for the whole launch */
} kemu_call_memory_space;

/* A scratch operand. core_type (NULL: none) is the core a memory space
 * belongs to; an mpmd_map with several meshes requires one for smem. */
typedef struct kemu_call_scratch {
    const char *dtype;
    int ndim;
    unsigned long long shape[KEMU_CALL_MAX_DIMS];
    kemu_call_memory_space memory_space;
    const char *core_type;
} kemu_call_scratch;

/* A scalar-prefetch (index) operand; interpret mode refuses them. */
typedef struct kemu_call_scalar {
    const char *name;
    const char *dtype;
    double value;
} kemu_call_scalar;

/* One mpmd_map mesh/function pair. */
typedef struct kemu_call_pair {
    kemu_call_mesh mesh;
    const char *kernel;
} kemu_call_pair;

typedef enum kemu_call_oob {
    KEMU_CALL_OOB_RAISE = 0,        /* an out-of-bounds read is a kernel fault */
    KEMU_CALL_OOB_UNINITIALIZED     /* out-of-bounds loads return the fill value of the operand read past */
} kemu_call_oob;

/* Interpret-mode options (InterpretGPUParams). uninitialized_memory is
 * KEMU_UNINIT_NAN (floats NaN, integers their maximum, bool true) or
 * KEMU_UNINIT_ZERO. */
typedef struct kemu_call_interpret {
    int detect_races;
    kemu_uninit uninitialized_memory;
    kemu_call_oob out_of_bounds_reads;
} kemu_call_interpret;

/* The whole call. Zero-initialize it and fill what applies. Exactly one of
 * `kernel` (a pallas_call) and `has_mpmd` (an mpmd_map of nmpmd pairs) is
 * set. has_grid: `grid` was given (without it: one block without a mesh,
 * the mesh's own size with one). block: threads per block without a mesh
 * (all 0: 128); with a mesh it is num_threads x 128. */
typedef struct kemu_call_spec {
    const char *ptx;                /* path of the PTX module */
    const char *ptx_text;           /* or its text (ptx then only names it) */
    size_t ptx_length;
    const char *kernel;
    int has_grid, grid_ndim;
    kemu_call_dim grid[KEMU_CALL_MAX_DIMS];
    const kemu_call_mesh *mesh;     /* NULL: none */
    unsigned block[3];
    const kemu_call_array *inputs;
    int ninputs;
    const kemu_call_array *outputs;
    int noutputs;
    const kemu_call_scratch *scratch;
    int nscratch;
    const int (*input_output_aliases)[2];   /* {input index, output index} */
    int naliases;
    const kemu_call_scalar *scalar_operands;
    int nscalar_operands;
    int has_mpmd;
    const kemu_call_pair *mpmd;
    int nmpmd;
    const kemu_call_mesh *external_meshes;
    int nexternal_meshes;
    kemu_call_interpret interpret;
    const char *spec_file;          /* the JSON file the call was read from, or NULL: never an output */
} kemu_call_spec;

/* An output after the call: host data (owned by the result), C order. */
typedef struct kemu_call_output {
    const char *name;               /* the spec's (may be NULL) */
    const char *dtype;              /* kemu name, static */
    int ndim;
    unsigned long long shape[KEMU_CALL_MAX_DIMS];
    void *data;
    size_t nbytes;
    int written;                    /* written to the spec's npy path */
} kemu_call_output;

/* What kemu_call_run reports besides its status. On an interpret-mode
 * limit: limit is its number (1-8), exception the Python exception name
 * ("NotImplementedError") and hint one line of advice; the message is in
 * kemu_error. path names the offending field as the JSON spec spells it
 * ("outputs[1].shape"), or is empty. After a launch: the kernel, the
 * launch geometry, the report and the outputs. */
typedef struct kemu_call_result {
    int limit;
    char exception[32];
    char hint[512];
    char path[256];
    char kernel[256];               /* the entry launched */
    unsigned grid[3], block[3], cluster[3];
    size_t shared_bytes;            /* dynamic shared memory reserved for smem scratch */
    kemu_report report;
    kemu_call_output *outputs;
    int noutputs;
} kemu_call_result;

/* Checks and runs a call on dev. Malformed calls return
 * KEMU_ERR_INVALID_ARGUMENT (or KEMU_ERR_IO / KEMU_ERR_NOT_FOUND for
 * files) with "PATH: problem" in err; an interpret-mode limit returns
 * KEMU_ERR_UNSUPPORTED with the backend's exact message in err and
 * limit/exception/hint in result; a kernel fault KEMU_ERR_KERNEL_FAULT
 * (outputs not written). detect_races enables racecheck on dev (adding it
 * to enabled checkers resets their findings); uninitialized_memory also
 * sets the shared-memory fill for the launch. result may be NULL; free it
 * with kemu_call_result_free whatever the status. */
kemu_status kemu_call_run(kemu_device *dev, const kemu_call_spec *spec, kemu_call_result *result,
                          kemu_error *err);

/* Frees the output arrays and the report held by a result (not the result
 * itself) and empties it; safe on a result kemu_call_run left empty. */
void kemu_call_result_free(kemu_call_result *result);

#ifdef __cplusplus
}
#endif
#endif /* KEMU_CALL_H */
