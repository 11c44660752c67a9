/* Cross-checking the emulator against a GPU: the default tolerance of a
 * kernel (exact unless it uses approximate instructions) and the one-line
 * comparison of an output buffer. */
#ifndef KEMU_CUDA_COMPARE_H
#define KEMU_CUDA_COMPARE_H

#include <stddef.h>

#include "io/array.h"
#include "kemu/kemu.h"

/* A tolerance and the reason for it, e.g. "0 ULPs (no approximate
 * instructions)" or "2 ULPs, atol 6.7e-07 (approximate: sin.approx.f32,
 * ex2.approx.f32)". */
typedef struct cuda_tolerance {
    io_compare_opts opts;
    int approximate; /* the kernel (or a function it calls) uses an approximate instruction */
    char description[512];
} cuda_tolerance;

/* The default tolerance for comparing kernel k's float outputs: exact (0
 * ULPs) when k and every function it calls use no approximate instruction
 * in the lowered bytecode (rcp/sqrt/div .approx, div.full, rsqrt, ex2, lg2,
 * sin, cos, tanh); otherwise the largest documented error bound among those
 * used, as ULPs, rtol or atol (docs/fidelity.md lists them). NaNs match
 * NaNs (payloads may differ). */
void cuda_tolerance_for_kernel(const kemu_kernel *k, cuda_tolerance *out);

/* The compute capability the kernel's module targets (.target sm_90 is
 * 90; sm_90a is 90 too), or 0 when unknown. A GPU below it cannot run it. */
int cuda_kernel_target_sm(const kemu_kernel *k);

/* Describes explicit --ulps/--rtol/--atol values into out->description
 * ("user: 4 ULPs, rtol 1e-06") and stores them in out->opts. */
void cuda_tolerance_from_user(const io_compare_opts *opts, cuda_tolerance *out);

/* Compares one output buffer of both backends (same dtype and shape) and
 * writes one line into `line` (no newline): "NAME: f32[100]: max ULP
 * distance D, M mismatches" and, on a mismatch, ", first at [I]: emu X !=
 * cuda Y" (integers: "max difference" instead of the ULP distance). *res
 * gets the counts. Returns 0, or -1 with the reason in `line` when the
 * arrays cannot be compared (dtype or shape differ). */
int cuda_compare_buffer(const char *name, const io_array *emu, const io_array *gpu, const io_compare_opts *opts,
                        io_compare_result *res, char *line, size_t len);

#endif
