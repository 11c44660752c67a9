/* Native twins of the benchmark kernels: the same algorithms as
 * bench/kernels/NAME.cu and samples/NAME/NAME.cu, written as plain single-threaded C
 * loops (compiled -O2), for bench/suite.c to time against kemu. */
#ifndef KEMU_BENCH_NATIVE_H
#define KEMU_BENCH_NATIVE_H

#include <stddef.h>
#include <stdint.h>

/* y[i] = a * x[i] + y[i] for i < n. Writes y in place; no errors. */
void native_saxpy(unsigned n, float a, const float *x, float *y);

/* Returns the sum of the n floats of in (sequential left-to-right sum in
 * float, as one thread would add them). Does not modify in. */
float native_reduce_sum(const float *in, unsigned n);

/* C = A * B for row-major A (M x K) and B (K x N); C is M x N and is
 * overwritten. Plain i-k-j loops over a zeroed C. No errors. */
void native_matmul(const float *a, const float *b, float *c, unsigned m, unsigned n, unsigned k);

/* C = A * B for row-major s8 A (M x K) and B (K x N) into int32 C (M x N),
 * exact (wrapping on overflow, which 8-bit products over K <= 2^16 cannot
 * reach). No errors. */
void native_matmul_s8(const signed char *a, const signed char *b, int32_t *c, unsigned m, unsigned n, unsigned k);

/* Adds the counts of the n bytes of data to hist[256] (hist is not zeroed
 * first, like the kernel). No errors. */
void native_histogram(const unsigned char *data, unsigned n, unsigned *hist);

/* y = row-wise softmax of the rows x cols row-major x, using expf. */
void native_softmax(const float *x, float *y, unsigned rows, unsigned cols);

/* out[i] = inclusive prefix sum of in within each block of 256 elements
 * (block b covers elements b*256 .. b*256+255), n elements in all. */
void native_block_scan(const int *in, int *out, unsigned n);

/* out (cols x rows) = transpose of in (rows x cols), row-major. */
void native_transpose(const float *in, float *out, unsigned rows, unsigned cols);

/* iters[py*width+px] = Mandelbrot escape count (at most max_iter) of the
 * point (-2 + 3 px/width, -1.5 + 3 py/height), in float. */
void native_mandelbrot(unsigned *iters, unsigned width, unsigned height, unsigned max_iter);

/* z[i] = a * x[i] + b * y[i] over n IEEE binary16 values held as raw
 * uint16_t bits (products and sum rounded to half as the kernel does). */
void native_half_axpby(unsigned n, uint16_t a, uint16_t b, const uint16_t *x, const uint16_t *y, uint16_t *z);

/* out[b] = sum of x[b*block .. b*block+block-1] (sequential, in float),
 * for each block of the n elements. */
void native_block_sums(const float *x, float *out, unsigned n, unsigned block);

/* out[g] = max of x[g*group .. g*group+group-1] for each group of the n
 * elements. */
void native_group_max(const float *x, float *out, unsigned n, unsigned group);

/* y[i] = a * x[i] + b for i < n. */
void native_scale_add(unsigned n, float a, float b, const float *x, float *y);

/* Conversions between binary16 bits and float (round to nearest even). */
float native_half_to_float(uint16_t bits);
uint16_t native_float_to_half(float value);

#endif /* KEMU_BENCH_NATIVE_H */
