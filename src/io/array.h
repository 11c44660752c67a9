/* Typed host arrays for kemu: element types, shapes, generators, the
 * "uninitialized" fill patterns, statistics and tolerant comparison.
 * These are what the CLI, the .npy reader/writer and the GPU cross-check use
 * to describe kernel buffers. Data is always C order, host endianness. */
#ifndef KEMU_IO_ARRAY_H
#define KEMU_IO_ARRAY_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    IO_DT_BOOL,
    IO_DT_I8,
    IO_DT_I16,
    IO_DT_I32,
    IO_DT_I64,
    IO_DT_U8,
    IO_DT_U16,
    IO_DT_U32,
    IO_DT_U64,
    IO_DT_F16,
    IO_DT_BF16,
    IO_DT_F32,
    IO_DT_F64,
    IO_DT_COUNT
} io_dtype;

/* Parses a dtype name: "bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64"
 * (exact, lower case). Stores the dtype in *out and returns 0; returns -1 and
 * leaves *out untouched for an unknown or NULL name. */
int io_dtype_parse(const char *name, io_dtype *out);

/* Returns the canonical name of a dtype (the string io_dtype_parse accepts),
 * a static string; "?" for a value outside the enum. */
const char *io_dtype_name(io_dtype dt);

/* Size of one element in bytes (bool is 1 byte); 0 for a value outside the
 * enum. */
size_t io_dtype_size(io_dtype dt);

/* io_dtype_is_float: 1 for f16, bf16, f32, f64, else 0.
 * io_dtype_is_signed: 1 for the signed integers and the floats, else 0
 * (bool and the unsigned integers are not signed). */
int io_dtype_is_float(io_dtype dt);
int io_dtype_is_signed(io_dtype dt);

/* Exact conversions between half formats and double. The decoders are exact.
 * The encoders round to nearest, ties to even, independent of the current
 * floating-point rounding mode; overflow gives +-inf, a NaN gives the quiet
 * NaN 0x7e00 (f16) / 0x7fc0 (bf16) with the input's sign. Rounding is done
 * once, from the double (ml_dtypes' f64->bfloat16 goes through f32 and so
 * differs by 1 ulp on rare near-ties; NumPy's f64->f16 agrees bit for bit). */
double io_f16_to_double(uint16_t bits);
double io_bf16_to_double(uint16_t bits);
uint16_t io_double_to_f16(double value);
uint16_t io_double_to_bf16(double value);

#define IO_MAX_DIMS 8

/* An n-dimensional array. ndim 0 is a scalar (count 1). count is the product
 * of shape[0..ndim). data is malloc'd, C order, host endianness, and owned by
 * the struct (free with io_array_free). bool elements are bytes 0 or 1. */
typedef struct {
    io_dtype dtype;
    int ndim;
    size_t shape[IO_MAX_DIMS];
    size_t count;
    void *data;
} io_array;

/* Parses a shape written as "N" or "AxBxC" (decimal, 'x' or 'X' between
 * dimensions, no spaces) into a->ndim, a->shape and a->count; dtype and data
 * are not touched. Rejects empty text, junk, more than IO_MAX_DIMS dimensions,
 * a zero dimension (empty buffers are almost always a typo on the command
 * line) and element counts that overflow size_t. Returns 0, or -1 with a
 * message in err. */
int io_shape_parse(const char *text, io_array *a, char *err, size_t errlen);

/* Allocates a->data for a->count elements of a->dtype (previous data is not
 * freed). Contents are unspecified. Zero elements still get a non-NULL
 * pointer. Returns 0, or -1 with a message in err when count*size overflows
 * or memory is short. */
int io_array_alloc(io_array *a, char *err, size_t errlen);

/* Frees a->data and sets it to NULL; a NULL a or data is fine. Shape and
 * dtype are kept. */
void io_array_free(io_array *a);

/* Fills a with generated values. a->dtype, ndim, shape and count must be set;
 * if a->data is NULL it is allocated here (and freed again on error).
 * gen is one of:
 *   "zeros", "ones";
 *   "arange"      element i = i: floats exact while representable, otherwise
 *                 rounded to nearest even (f16 beyond 65504 becomes inf);
 *                 integers wrap modulo 2^bits; bool is i & 1;
 *   "fill=V"      V parsed for the dtype: integers accept decimal, 0x hex and
 *                 0b binary with an optional sign; decimal must be in range,
 *                 hex/binary without sign may also give the raw bit pattern
 *                 (fill=0xff on i8 is -1); bool accepts 0, 1, true, false;
 *                 floats accept anything strtod does (decimal, 0x1p-3 hex
 *                 floats, inf, nan), f32 correctly rounded from the text,
 *                 f16/bf16 rounded to nearest even from the f64 value;
 *   "rand", "rand=SEED"  deterministic on every machine: splitmix64 (seeded
 *                 with SEED, default 0) yields one 64-bit word z per element,
 *                 in order. f64 = (z>>11)*2^-53, f32 = (z>>40)*2^-24,
 *                 f16 = (z>>53)*2^-11, bf16 = (z>>56)*2^-8: uniform in [0,1)
 *                 and exactly representable. Integers take the low bits of z
 *                 (full range), bool takes z>>63.
 * Returns 0, or -1 with a message in err for an unknown generator or a bad V
 * or SEED. */
int io_array_generate(io_array *a, const char *gen, char *err, size_t errlen);

/* Uninitialized-memory patterns, used to make reads of never-written output
 * visible:
 *   IO_UNINIT_NAN      floats get a quiet NaN with every bit but the sign set
 *                      (f16 0x7fff, bf16 0x7fff, f32 0x7fffffff,
 *                      f64 0x7fffffffffffffff); integers get their maximum
 *                      value; bool gets 1 (true);
 *   IO_UNINIT_ZERO     every byte 0;
 *   IO_UNINIT_PATTERN  every byte 0xCD. */
typedef enum { IO_UNINIT_NAN, IO_UNINIT_ZERO, IO_UNINIT_PATTERN } io_uninit_mode;

/* Fills count elements of type dt at data with the pattern for mode (see
 * io_uninit_mode). data may be NULL only when count is 0. */
void io_fill_uninit(void *data, size_t count, io_dtype dt, io_uninit_mode mode);

/* The same for an untyped buffer of nbytes bytes: IO_UNINIT_NAN writes 0xFF
 * bytes (a NaN in every float format, the maximum of every unsigned type),
 * ZERO writes 0x00, PATTERN writes 0xCD. */
void io_fill_uninit_bytes(void *data, size_t nbytes, io_uninit_mode mode);

/* Returns element i (flat, C order) converted to double: bool as 0/1,
 * integers by C conversion (64-bit values may round), f16/bf16 exactly.
 * Returns NaN when i is out of range or a is NULL. */
double io_array_get_f64(const io_array *a, size_t i);

/* Statistics over the whole array: min, max and mean over the non-NaN
 * elements (all NaN when there is none), nan_count (always 0 for integers
 * and bool) and count (all elements). The mean uses compensated summation;
 * infinities propagate into it as IEEE arithmetic says. */
typedef struct {
    double min, max, mean;
    size_t nan_count;
    size_t count;
} io_stats;
void io_array_stats(const io_array *a, io_stats *out);

/* Tolerances for io_array_compare. All zero means exact (NaNs still match
 * NaNs unless nan_strict). */
typedef struct {
    uint64_t ulps;
    double rtol, atol;
    int nan_strict;
} io_compare_opts;

/* mismatches: number of element pairs that do not match.
 * max_ulps: for floats, the largest ULP distance among pairs where both
 * values are finite; for integers and bool, the largest absolute difference.
 * first_mismatch[0..n_first): flat indices of the first (up to 8) mismatches. */
typedef struct {
    size_t mismatches;
    uint64_t max_ulps;
    size_t first_mismatch[8];
    int n_first;
} io_compare_result;

/* Compares a (actual) against b (expected). They must have the same dtype and
 * shape; otherwise returns -1 with a message saying what differs
 * ("dtype differs: f32 vs f64", "shape differs: 2x3 vs 6").
 * Integers and bool must be equal. Float pairs match if bitwise equal, or
 * both NaN (with nan_strict: only with identical bits), or, when both are
 * finite, their ULP distance is <= ulps or |a-b| <= atol + rtol*|b|. The ULP
 * distance is the difference of the bit patterns mapped to ordered integers,
 * so +0 and -0 are 0 apart; an infinity only matches the same infinity.
 * opts NULL means exact. Returns 0 when the comparison ran (mismatches may be
 * nonzero). */
int io_array_compare(const io_array *a, const io_array *b, const io_compare_opts *opts,
                     io_compare_result *res, char *err, size_t errlen);

/* Converts flat index flat (C order) into a->ndim indices in idx_out (which
 * must hold a->ndim entries; nothing is written for a 0-d array). */
void io_index_unflatten(const io_array *a, size_t flat, size_t *idx_out);

/* Writes element i as text into buf: integers in decimal, bool as
 * "true"/"false", f32/f16/bf16 with %.9g of their value, f64 with %.17g,
 * infinities as "inf"/"-inf", NaN as "nan(0x<bits>)". Returns 0, or -1 when
 * i is out of range or buf is too small (buf then holds a truncated,
 * terminated string when len > 0). */
int io_format_element(const io_array *a, size_t i, char *buf, size_t len);

/* Formats a shape as "AxBxC" ("scalar" for ndim 0) into buf. Returns 0, or
 * -1 when buf is too small (the text is then truncated). */
int io_shape_format(const io_array *a, char *buf, size_t len);

#endif
