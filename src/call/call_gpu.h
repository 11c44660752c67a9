/* `kemu call --backend cuda|both`: the call's PTX and launch on a GPU
 * through the thin CUDA path (src/cuda/), alone or next to the emulator
 * from identical operands. The operands, launch and checks are those of
 * kemu_call_run; the launch plan (include/kemu/plan.h) runs both sides. */
#ifndef KEMU_CALL_GPU_H
#define KEMU_CALL_GPU_H

#include "cuda/backend.h"
#include "cuda/compare.h"
#include "io/array.h"
#include "kemu/call.h"
#include "kemu/plan.h"

typedef struct call_gpu {
    /* in */
    int ordinal;                          /* CUDA device */
    int use_emulator;                     /* 1: --backend both, 0: the GPU alone */
    const io_compare_opts *user_tolerance; /* NULL: the kernel's default tolerance */
    /* out */
    cuda_status status;                   /* why the GPU side stopped, or CUDA_STATUS_OK */
    char message[2048];                   /* the driver's words when status is not OK */
    char *jit_log;                        /* the JIT error log of a failed load, or NULL */
    char device_name[256];
    int sm;
    int wrapped;                          /* the GPU ran the smem scratch wrapper */
    double seconds;                       /* launch to synchronization */
    int faulted;                          /* the kernel faulted on the GPU */
    int emu_faulted;                      /* ... on the emulator (use_emulator) */
    /* use_emulator, neither faulted: the plan's comparison of each operand
     * (outputs at ninputs + o) and the GPU's copies written beside the
     * emulator's files (kemu_plan_gpu_output_file) */
    kemu_plan_comparison *comparisons;
    int differing, ncompared;
    char tolerance[512];                  /* how outputs compare */
} call_gpu;

/* Runs the call on the GPU (gpu->use_emulator: on both). Spec, input and
 * limit errors are kemu_call_run's, before the GPU is touched. When the GPU
 * side cannot go on, returns KEMU_ERR_UNSUPPORTED with gpu->status
 * CUDA_STATUS_UNAVAILABLE (no usable GPU: nothing was written) or
 * CUDA_STATUS_FAILED (a driver call failed, e.g. the JIT) and
 * gpu->message. A fault on either side returns KEMU_ERR_KERNEL_FAULT
 * (gpu->faulted / gpu->emu_faulted say where; err holds the emulator's
 * report when it faulted, else gpu->message the driver's) after both ran.
 * GPU alone: result's outputs are the GPU's and go to the spec's files;
 * both: they are the emulator's, the GPU's copies are written beside the
 * spec's files and gpu->comparisons compares them. Free with call_gpu_free and
 * kemu_call_result_free. */
kemu_status call_run_gpu(kemu_device *dev, const kemu_call_spec *spec, call_gpu *gpu, kemu_call_result *result,
                         kemu_error *err);

void call_gpu_free(call_gpu *gpu);

#endif
