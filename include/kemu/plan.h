/* kemu — launch plans: one kernel launch with its operands, on the
 * emulator, on a GPU, or on both, as one call.
 *
 * A plan holds a kernel (of a module loaded on a kemu_device), the launch
 * shape, the operands in parameter order, and which backends run it. One
 * call, kemu_plan_run, then does the whole sequence every front door needs:
 * checks the output files (never one the user gave as input, the module or
 * the spec, never two outputs to one file), fills fresh buffers, allocates and uploads every
 * buffer on each backend, encodes tensor maps, lays out shared-memory
 * operands, launches on the emulator and/or the GPU (the same PTX through
 * the CUDA driver, loaded at run time), reads the outputs back, compares
 * the two backends, and writes all output files or none.
 *
 * `kemu run`, `kemu call`, the Python package and `kemu debug` are
 * translations onto this API. docs/plan.md has an example.
 *
 * Checkers are the device's (kemu_device_set_checks before the run,
 * kemu_check_results after it): the plan frees the buffers it allocated
 * before kemu_plan_run returns, so they are not reported as leaks.
 */
#ifndef KEMU_PLAN_H
#define KEMU_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "kemu/kemu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KEMU_PLAN_MAX_DIMS 8

typedef struct kemu_plan kemu_plan;

typedef enum kemu_operand_kind {
    KEMU_OPERAND_IN = 0,   /* a global buffer uploaded from data; not read back */
    KEMU_OPERAND_OUT,      /* a global buffer that starts with the uninitialized fill; read back */
    KEMU_OPERAND_INOUT,    /* uploaded from data and read back */
    KEMU_OPERAND_SCRATCH,  /* a global buffer that starts with the fill; not read back */
    KEMU_OPERAND_SHARED,   /* a buffer in each block's dynamic shared memory (after the launch's own
                              dynamic bytes, 128-aligned) that starts with the fill; the parameter
                              gets its shared-space address (a .u32 or .u64 parameter) */
    KEMU_OPERAND_VALUE     /* bytes passed by value (a scalar or an aggregate) */
} kemu_operand_kind;

/* A tensor map (CUtensorMap, 128 bytes by value) over a buffer operand: the
 * parameter gets the map instead of the address; each backend encodes it
 * over its own copy. box and element_strides are outermost first, like
 * shapes; rank is the buffer's ndim. swizzle is a KEMU_TMAP_SWIZZLE_*. */
typedef struct kemu_plan_tensor_map {
    unsigned rank;
    uint32_t box[5];
    uint32_t element_strides[5];
    int swizzle;
    int nan_fill;   /* out-of-bounds elements read as NaN (else zero) */
    int tf32;       /* f32 elements are tf32 */
} kemu_plan_tensor_map;

/* One operand. Zero-initialize it and fill what applies.
 * Buffers (every kind but VALUE): dtype (a kemu name: f16 bf16 f32 f64 i8
 * i16 i32 i64 u8 u16 u32 u64 bool), ndim and shape (C order). data is the
 * host memory of the buffer (its element count times the dtype's size):
 * IN and INOUT are uploaded from it, and outputs are read back into it; it
 * stays the caller's. NULL data (OUT, SCRATCH, SHARED) makes the plan
 * allocate it (kemu_plan_data returns it). OUT, SCRATCH and SHARED start
 * with the plan's uninitialized fill, which initcheck sees as unwritten.
 * aliased: an OUT that shares the buffer of the IN/INOUT operand
 * alias_input (its initial contents are that input's).
 * VALUE: size bytes at value. */
typedef struct kemu_operand {
    kemu_operand_kind kind;
    const char *dtype;
    int ndim;
    size_t shape[KEMU_PLAN_MAX_DIMS];
    void *data;
    const void *value;
    size_t size;
    int aliased;
    int alias_input;
    const char *source_file;    /* the file the data came from: no output may overwrite it (NULL: none) */
    const char *output_file;    /* OUT/INOUT: the .npy file the result is written to (NULL: none); a
                                   symlink is followed, a character device (/dev/null) written in place */
    const char *label;          /* how comparisons name it (NULL: output_file, else "operand N") */
    const kemu_plan_tensor_map *tensor_map; /* NULL: the parameter gets the buffer's address */
} kemu_operand;

enum { KEMU_BACKEND_EMULATOR = 1, KEMU_BACKEND_CUDA = 2 };

/* Float tolerance of the comparison (integers compare exactly). */
typedef struct kemu_tolerance {
    uint64_t ulps;
    double rtol, atol;
} kemu_tolerance;

typedef struct kemu_plan_config {
    kemu_launch_config launch;  /* grid, block, cluster, cooperative, dynamic shared bytes */
    int backends;               /* KEMU_BACKEND_* bits; 0 is the emulator */
    int cuda_device;            /* the GPU's ordinal */
    const char *ptx_path;       /* the module's file: read for the GPU, named in messages, never an output */
    const char *spec_file;      /* the file the launch was described in (a call spec), or NULL: never an output */
    const char *ptx_text;       /* or the PTX text the GPU compiles (ptx_path then only names it) */
    size_t ptx_length;
    kemu_uninit uninit;         /* the fill of fresh buffers (KEMU_UNINIT_NAN: floats NaN, integers their
                                   maximum, bool true; ZERO; PATTERN), also for the launch */
    int oob_reads_fill;         /* emulator: an out-of-bounds load returns the fill of the operand read past
                                   (Pallas interpret mode) instead of faulting */
    int keep_outputs;           /* write the emulator's outputs even when the kernel faulted there */
    const kemu_tolerance *tolerance; /* NULL: exact unless the kernel uses approximate instructions */
    FILE *printf_stream;        /* where the emulator's printf output goes right after its launch (NULL: only
                                   the report keeps it) */
} kemu_plan_config;

/* Where a run that did not succeed stopped. */
typedef enum kemu_plan_stage {
    KEMU_PLAN_DONE = 0,
    KEMU_PLAN_STAGE_OPERANDS,    /* an operand does not fit the kernel or the launch (nothing ran) */
    KEMU_PLAN_STAGE_OUTPUT_FILE, /* an output file cannot be written (nothing ran); see path_problem */
    KEMU_PLAN_STAGE_EMULATOR,    /* allocation, upload, tensor map or launch on the emulator */
    KEMU_PLAN_STAGE_GPU,         /* the GPU side: see gpu_unavailable, gpu_message */
    KEMU_PLAN_STAGE_READBACK,    /* copying an output back */
    KEMU_PLAN_STAGE_WRITE        /* writing an output file (none was written) */
} kemu_plan_stage;

typedef enum kemu_plan_path_problem {
    KEMU_PLAN_PATH_OK = 0,
    KEMU_PLAN_PATH_IS_INPUT,     /* operand's output_file is other_operand's source_file */
    KEMU_PLAN_PATH_SAME_OUTPUT,  /* operand and the earlier other_operand write one file */
    KEMU_PLAN_PATH_UNWRITABLE,   /* a directory or another file that is not a regular file or a character
                                    device, or its directory cannot be written (message says) */
    KEMU_PLAN_PATH_IS_MODULE,    /* operand's output_file is the PTX module (ptx_path) */
    KEMU_PLAN_PATH_IS_SPEC       /* operand's output_file is spec_file */
} kemu_plan_path_problem;

/* The comparison of one output of both backends. */
typedef struct kemu_plan_comparison {
    int compared;               /* 1 for outputs that were compared */
    char line[2048];            /* "LABEL: f32[100]: max ULP distance D, M mismatches[, first at ...]" */
    uint64_t mismatches, max_ulps;
    long long first_mismatch;   /* flat index, or -1 */
} kemu_plan_comparison;

typedef struct kemu_plan_result {
    /* when kemu_plan_run did not return KEMU_OK or KEMU_ERR_KERNEL_FAULT */
    kemu_plan_stage stage;
    int operand;                /* the operand concerned, or -1 */
    int other_operand;          /* KEMU_PLAN_STAGE_OUTPUT_FILE: see path_problem */
    kemu_plan_path_problem path_problem;
    /* the emulator */
    int emulator_ran;
    int emulator_faulted;
    kemu_report report;
    /* the GPU */
    int gpu_ran;
    int gpu_faulted;
    int gpu_unavailable;        /* no usable GPU (stage KEMU_PLAN_STAGE_GPU): nothing was written */
    char gpu_message[2048];     /* the driver's words for a fault or a failed call */
    char *gpu_jit_log;          /* the JIT error log of a failed load, or NULL */
    char gpu_name[256];
    int gpu_sm;
    int gpu_wrapped;            /* the GPU ran a wrapper entry that finds the SHARED operands */
    double gpu_seconds;
    /* the launch and its outputs */
    size_t shared_bytes;        /* dynamic shared memory of the launch, SHARED operands included */
    int outputs_written;        /* the output files (and the GPU's, when compared) were written */
    /* both backends, neither faulted */
    int compared;
    int differing;              /* outputs that differ */
    int ncompared;
    char tolerance[512];        /* e.g. "0 ULPs (no approximate instructions)" */
    kemu_plan_comparison *comparisons; /* by operand */
} kemu_plan_result;

/* Makes a plan for a launch of k (of a module loaded on a device; the GPU
 * side needs cfg->ptx_path or ptx_text). cfg is copied (its strings and the
 * tolerance must outlive the plan). Free with kemu_plan_destroy. */
kemu_status kemu_plan_create(kemu_kernel *k, const kemu_plan_config *cfg, kemu_plan **out, kemu_error *err);
void kemu_plan_destroy(kemu_plan *plan);

/* Appends the next operand (parameter order); *op is copied, its strings and
 * data must outlive the plan. Returns KEMU_ERR_INVALID_ARGUMENT for an
 * unknown dtype, a bad shape or alias. */
kemu_status kemu_plan_add(kemu_plan *plan, const kemu_operand *op, kemu_error *err);

/* Runs the plan (once: a second call returns KEMU_ERR_INVALID_ARGUMENT).
 * Returns KEMU_OK (outputs read back and written;
 * result->differing says whether the backends agreed),
 * KEMU_ERR_KERNEL_FAULT after every backend ran when the kernel faulted on
 * one (err: the emulator's fault report, else "cuda: " and the driver's
 * words; a backend that faulted has its outputs neither read back nor
 * written, except the emulator's with keep_outputs), or an
 * error with result->stage, result->operand and a message in err. Fill
 * result even on error; free it with kemu_plan_result_free. */
kemu_status kemu_plan_run(kemu_plan *plan, kemu_plan_result *result, kemu_error *err);
void kemu_plan_result_free(kemu_plan_result *result);

/* After a run: operand i's host memory (outputs hold what was read back:
 * the emulator's, or the GPU's when it ran alone), and with both backends
 * the GPU's copy of output i (NULL otherwise). The memory is the caller's
 * data or the plan's. */
void *kemu_plan_data(const kemu_plan *plan, int i);
const void *kemu_plan_gpu_data(const kemu_plan *plan, int i);
int kemu_plan_operand_count(const kemu_plan *plan);

/* Where the GPU's copy of an output file goes with both backends:
 * PATH.npy becomes PATH.cuda.npy (other names get ".cuda.npy" appended).
 * The caller frees it (NULL: no memory). */
char *kemu_plan_gpu_output_file(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* KEMU_PLAN_H */
