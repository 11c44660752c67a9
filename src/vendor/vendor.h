/* Glue shared by kemu's vendor libraries (libcublas, libcublasLt): entry
 * into the runtime's state through the `__kemu_vendor_*` door of kemu's
 * libcudart (src/cudart/vendor_glue.c), operand checks against the live
 * allocations with messages that name the call and the argument, marking
 * what a call wrote as written for the checkers, and the element
 * conversions (half, bfloat16, TF32) the libraries need. Every library
 * links its own copy (hidden); none of this is exported. */
#ifndef KEMU_VENDOR_H
#define KEMU_VENDOR_H

#include <stddef.h>
#include <stdint.h>

#include "cudart/cuda_abi.h"
#include "kemu/kemu.h"

#define VENDOR_API __attribute__((visibility("default")))

/* ---- the door into libcudart (exported by kemu's libcudart only) ------- */
cudaError_t __kemu_vendor_begin(cudaStream_t stream, const char *api, kemu_device **dev);
void __kemu_vendor_end(void);
int __kemu_vendor_range(const void *address, size_t size);
void __kemu_vendor_unsupported(const char *name);
/* The public CUDA runtime API the libraries also call. */
const char *cudaGetErrorName(cudaError_t error);

/* CUDA's element types (cudaDataType) that the libraries compute with. */
enum {
    VENDOR_R_32F = 0,
    VENDOR_R_64F = 1,
    VENDOR_R_16F = 2,
    VENDOR_R_16BF = 14
};

/* Bytes of one element of a VENDOR_R_* type; 0 for types kemu does not
 * compute with. */
size_t vendor_type_size(int type);
/* "CUDA_R_32F" ..., or "cudaDataType N" for other values (static). */
const char *vendor_type_name(int type);

/* Bytes from the first to the last element (inclusive) of a column-major
 * rows x cols matrix with leading dimension ld; 0 when it is empty. Sets
 * *overflow when that does not fit in 63 bits. */
uint64_t vendor_matrix_bytes(int64_t rows, int64_t cols, int64_t ld, size_t elem, int *overflow);

/* Checks that [p, p + bytes) lies inside one live allocation a kernel can
 * reach (kemu's device addresses are host addresses, so the library then
 * reads and writes it directly). Returns 0, or -1 after printing
 * "kemu: API: argument ARG: ..." to stderr. bytes 0 passes. */
int vendor_check_range(const char *api, const char *arg, const void *p, uint64_t bytes);

/* Tells the checkers that the call wrote the rows x cols column-major
 * matrix at p (initcheck then treats it as initialized, as after a
 * cudaMemcpy into it). Call between begin and end. */
void vendor_mark_written(kemu_device *dev, void *p, int64_t rows, int64_t cols, int64_t ld, size_t elem);

/* Tells the checkers that the call reads the rows x cols column-major
 * matrix at p: initcheck reports bytes of it never written, naming the
 * call and the argument ("cublasSgemm_v2 argument A"). Between begin and
 * end, after vendor_check_range passed. */
void vendor_note_read(kemu_device *dev, const char *api, const char *arg, const void *p, int64_t rows, int64_t cols,
                      int64_t ld, size_t elem);

/* Prints "kemu: API: MESSAGE" to stderr. */
void vendor_message(const char *api, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* IEEE half and bfloat16 to float (exact) and back (round to nearest even;
 * overflow gives infinity, NaN stays NaN). */
float vendor_half_to_float(uint16_t h);
uint16_t vendor_float_to_half(float f);
float vendor_bf16_to_float(uint16_t b);
uint16_t vendor_float_to_bf16(float f);
/* Rounds a float to TF32 (10 explicit mantissa bits), to nearest with ties
 * away from zero, as cvt.rna.tf32.f32 does; NaN and infinity unchanged. */
float vendor_round_tf32(float f);

/* Element i of an array of a VENDOR_R_* type, as a double, and the store
 * of a double into it (rounded to the type as above). */
double vendor_load(const void *p, int type, size_t i);
void vendor_store(void *p, int type, size_t i, double v);

#endif
