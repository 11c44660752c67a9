/* Benchmark suite of issue 8: kemu against native C on the same algorithms.
 *
 * For each kernel (saxpy, reduce, sgemm, histogram, softmax, scan,
 * transpose, mandelbrot, half_axpby, and issue 27's one-element-per-thread
 * kernels block_sum, warp_max, row_softmax and launches, a short kernel
 * launched 10,000 times) the driver builds input data once,
 * runs the native twin (bench/native/native.c, one core, -O2) and the PTX
 * kernel through the public C API on emulated devices with 1 host thread,
 * all host threads, racecheck and memcheck (both with 1 host thread), checks
 * that every kemu output agrees with the native one (integers exactly,
 * floats within the tolerance printed in the table's notes), repeats each
 * measurement and keeps the fastest. Only the native call or kemu_launch is
 * timed: no process start-up, PTX load, allocation or copies.
 *
 *   suite [--srcdir DIR] [--json FILE] [--scale X] [--only NAMES] [--mode NAME]
 *         [--quick] [--cpu-time]
 *
 * --srcdir: where bench/ and samples/ are (default "."); --json: where the
 * table goes as JSON (default bench/results.json); --scale multiplies the
 * problem sizes (for quick runs); --only runs the kernels that a
 * comma-separated list of shell patterns names (e.g. 'tc_*,saxpy');
 * --quick measures only the native twin
 * and the 1-thread kemu run (for profiling and quick comparisons);
 * --mode kemu_1t|kemu_all|racecheck|memcheck runs only that kemu mode (to
 * profile it; the other columns print nan and no JSON is written);
 * --cpu-time times by process CPU time (for a busy machine). Prints
 * one row per kernel and, last,
 * `geomean slowdown vs native (1 thread): X.XX`. Exits non-zero when a
 * kernel fails to load or run, or an output disagrees.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kemu/kemu.h"
#include "native/native.h"

/* Repetitions; each measurement keeps the minimum. */
enum { NATIVE_RUNS = 3, KEMU_RUNS = 2, CHECKED_RUNS = 1 };

/* The kemu configurations measured, in table order. */
enum { MODE_ONE_THREAD, MODE_ALL_THREADS, MODE_RACECHECK, MODE_MEMCHECK, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = { "kemu_1t", "kemu_all", "racecheck", "memcheck" };

/* One device buffer of a case: `init` bytes are uploaded before every
 * launch (NULL: zero-filled). */
typedef struct bench_buffer {
    const void *init;
    size_t bytes;
} bench_buffer;

/* One kernel argument: a buffer's device address (buffer >= 0) or a
 * scalar's host copy (buffer < 0). */
typedef struct bench_arg {
    int buffer;
    const void *scalar;
} bench_arg;

struct bench_case;
/* Checks kemu's output against the native one; returns 0 when they agree,
 * otherwise writes why into message. */
typedef int (*bench_check_fn)(const struct bench_case *bench, const void *kemu_output, char *message, size_t length);

typedef struct bench_case {
    const char *name;
    const char *ptx;          /* relative to --srcdir */
    const char *entry;
    char size_text[64];
    const char *tolerance;    /* how outputs are compared */
    kemu_launch_config launch;
    int buffer_count;
    bench_buffer buffers[4];
    int arg_count;
    bench_arg args[8];
    int output_buffer;
    unsigned launches;        /* kernel launches per timed run (0 means 1); the native twin repeats as often */
    double flops;             /* a tensor-core case: its multiply-adds times 2 (else 0) */
    void (*native_prepare)(struct bench_case *); /* untimed, before each native run */
    void (*native_run)(struct bench_case *);
    bench_check_fn check;
    void *native_output;      /* filled by native_run */
    /* case data (owned by the case) */
    void *data[4];
    unsigned u[4];
    float f[2];
    uint16_t h[2];
} bench_case;

typedef struct bench_row {
    double native_seconds;
    double kemu_seconds[MODE_COUNT];
    double lane_instructions;
    int ok;
} bench_row;

/* --cpu-time: time by the process's CPU clock instead of the wall clock, so
 * that other programs on a busy machine do not count (meaningful only for
 * the 1-thread runs, which is all --quick measures). */
static clockid_t timing_clock = CLOCK_MONOTONIC;

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(timing_clock, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Deterministic pseudo-random numbers (xorshift64*), so every run measures
 * the same data. */
static uint64_t random_state = 0x9e3779b97f4a7c15ull;
static uint32_t random_u32(void)
{
    random_state ^= random_state >> 12;
    random_state ^= random_state << 25;
    random_state ^= random_state >> 27;
    return (uint32_t)((random_state * 2685821657736338717ull) >> 32);
}
static float random_float(float low, float high)
{
    return low + (high - low) * (float)(random_u32() >> 8) * (1.0f / 16777216.0f);
}

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "suite: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static float *random_floats(size_t count, float low, float high)
{
    float *values = checked_malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++)
        values[i] = random_float(low, high);
    return values;
}

static unsigned scaled(double scale, unsigned size, unsigned multiple)
{
    double value = (double)size * scale;
    unsigned result = (unsigned)(value / multiple) * multiple;
    return result < multiple ? multiple : result;
}

/* ---- comparisons ---------------------------------------------------------- */

static int compare_floats(const float *kemu, const float *native, size_t count, double absolute,
                          double relative, char *message, size_t length)
{
    for (size_t i = 0; i < count; i++) {
        double difference = fabs((double)kemu[i] - (double)native[i]);
        if (!(difference <= absolute + relative * fabs((double)native[i]))) {
            snprintf(message, length, "element %zu: kemu %.9g, native %.9g", i, kemu[i], native[i]);
            return 1;
        }
    }
    return 0;
}

static int compare_exact(const void *kemu, const void *native, size_t bytes, char *message, size_t length)
{
    if (memcmp(kemu, native, bytes) == 0)
        return 0;
    const unsigned char *a = kemu, *b = native;
    size_t i = 0;
    while (a[i] == b[i])
        i++;
    snprintf(message, length, "first differing byte at offset %zu", i);
    return 1;
}

/* ---- the cases -------------------------------------------------------------- */

static void saxpy_prepare(bench_case *b) { memcpy(b->data[2], b->data[1], (size_t)b->u[0] * sizeof(float)); }
static void saxpy_native(bench_case *b) { native_saxpy(b->u[0], b->f[0], b->data[0], b->data[2]); }
static int saxpy_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_floats(out, b->data[2], b->u[0], 1e-6, 1e-6, m, l);
}
static void setup_saxpy(bench_case *b, double scale)
{
    unsigned n = scaled(scale, 32u << 20, 256);
    b->name = "saxpy"; b->ptx = "samples/saxpy/saxpy.ptx"; b->entry = "saxpy";
    snprintf(b->size_text, sizeof b->size_text, "n=%u", n);
    b->tolerance = "abs 1e-6 + rel 1e-6 (nvcc may contract to fma)";
    b->u[0] = n; b->f[0] = 2.5f;
    b->data[0] = random_floats(n, -1, 1);
    b->data[1] = random_floats(n, -1, 1);
    b->data[2] = checked_malloc((size_t)n * sizeof(float));
    b->native_output = b->data[2];
    b->launch = (kemu_launch_config){ .grid = { n / 256, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ b->data[1], (size_t)n * 4 };
    b->arg_count = 4;
    b->args[0] = (bench_arg){ -1, &b->u[0] }; b->args[1] = (bench_arg){ -1, &b->f[0] };
    b->args[2] = (bench_arg){ 0, NULL }; b->args[3] = (bench_arg){ 1, NULL };
    b->output_buffer = 1;
    b->native_prepare = saxpy_prepare; b->native_run = saxpy_native; b->check = saxpy_check;
}

enum { REDUCE_BLOCKS = 256 };
static void reduce_native(bench_case *b) { b->f[1] = native_reduce_sum(b->data[0], b->u[0]); }
static int reduce_check(const bench_case *b, const void *out, char *m, size_t l)
{
    const float *partial = out;
    const float *in = b->data[0];
    double kemu_sum = 0, magnitude = 0;
    for (int i = 0; i < REDUCE_BLOCKS; i++)
        kemu_sum += partial[i];
    for (unsigned i = 0; i < b->u[0]; i++)
        magnitude += fabs(in[i]);
    if (fabs(kemu_sum - b->f[1]) <= 1e-5 * magnitude)
        return 0;
    snprintf(m, l, "sum: kemu %.9g, native %.9g", kemu_sum, b->f[1]);
    return 1;
}
static void setup_reduce(bench_case *b, double scale)
{
    unsigned n = scaled(scale, 32u << 20, 256);
    b->name = "reduce"; b->ptx = "samples/reduce/reduce.ptx"; b->entry = "reduce_sum";
    snprintf(b->size_text, sizeof b->size_text, "n=%u", n);
    b->tolerance = "|sum diff| <= 1e-5 * sum|x| (different summation order)";
    b->u[0] = n;
    b->data[0] = random_floats(n, -1, 1);
    b->launch = (kemu_launch_config){ .grid = { REDUCE_BLOCKS, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, REDUCE_BLOCKS * 4 };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] };
    b->output_buffer = 1;
    b->native_run = reduce_native; b->check = reduce_check;
}

static void sgemm_native(bench_case *b) { native_matmul(b->data[0], b->data[1], b->data[2], b->u[0], b->u[1], b->u[2]); }
static int sgemm_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_floats(out, b->data[2], (size_t)b->u[0] * b->u[1], 1e-5 * b->u[2], 1e-5, m, l);
}
static void setup_sgemm(bench_case *b, double scale)
{
    unsigned n = scaled(cbrt(scale), 512, 16);
    b->name = "sgemm"; b->ptx = "samples/matmul/matmul.ptx"; b->entry = "matmul";
    snprintf(b->size_text, sizeof b->size_text, "%ux%ux%u", n, n, n);
    b->tolerance = "abs 1e-5*K + rel 1e-5 (fma vs mul+add)";
    b->u[0] = b->u[1] = b->u[2] = n;
    b->data[0] = random_floats((size_t)n * n, -1, 1);
    b->data[1] = random_floats((size_t)n * n, -1, 1);
    b->data[2] = checked_malloc((size_t)n * n * 4);
    b->native_output = b->data[2];
    b->launch = (kemu_launch_config){ .grid = { n / 16, n / 16, 1 }, .block = { 16, 16, 1 } };
    b->buffer_count = 3;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * n * 4 };
    b->buffers[1] = (bench_buffer){ b->data[1], (size_t)n * n * 4 };
    b->buffers[2] = (bench_buffer){ NULL, (size_t)n * n * 4 };
    b->arg_count = 6;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL }; b->args[2] = (bench_arg){ 2, NULL };
    b->args[3] = (bench_arg){ -1, &b->u[0] }; b->args[4] = (bench_arg){ -1, &b->u[1] };
    b->args[5] = (bench_arg){ -1, &b->u[2] };
    b->output_buffer = 2;
    b->native_run = sgemm_native; b->check = sgemm_check;
}

static void histogram_prepare(bench_case *b) { memset(b->data[1], 0, 256 * sizeof(unsigned)); }
static void histogram_native(bench_case *b) { native_histogram(b->data[0], b->u[0], b->data[1]); }
static int histogram_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_exact(out, b->data[1], 256 * sizeof(unsigned), m, l);
}
static void setup_histogram(bench_case *b, double scale)
{
    unsigned n = scaled(scale, 32u << 20, 256);
    b->name = "histogram"; b->ptx = "samples/histogram/histogram.ptx"; b->entry = "histogram";
    snprintf(b->size_text, sizeof b->size_text, "n=%u bytes", n);
    b->tolerance = "exact";
    b->u[0] = n;
    unsigned char *data = checked_malloc(n);
    for (unsigned i = 0; i < n; i++) /* skewed: bytes cluster, so atomics collide */
        data[i] = (unsigned char)((random_u32() & 0xff) & (random_u32() & 0xff));
    b->data[0] = data;
    b->data[1] = checked_malloc(256 * sizeof(unsigned));
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { 256, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ data, n };
    b->buffers[1] = (bench_buffer){ NULL, 256 * sizeof(unsigned) };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ -1, &b->u[0] };
    b->args[2] = (bench_arg){ 1, NULL };
    b->output_buffer = 1;
    b->native_prepare = histogram_prepare; b->native_run = histogram_native; b->check = histogram_check;
}

static void softmax_native(bench_case *b) { native_softmax(b->data[0], b->data[1], b->u[0], b->u[1]); }
static int softmax_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_floats(out, b->data[1], (size_t)b->u[0] * b->u[1], 1e-9, 1e-5, m, l);
}
static void setup_softmax(bench_case *b, double scale)
{
    unsigned rows = scaled(scale, 8192, 8), cols = 1024;
    b->name = "softmax"; b->ptx = "samples/softmax/softmax.ptx"; b->entry = "softmax";
    snprintf(b->size_text, sizeof b->size_text, "%ux%u", rows, cols);
    b->tolerance = "abs 1e-9 + rel 1e-5 (ex2.approx vs expf)";
    b->u[0] = rows; b->u[1] = cols;
    b->data[0] = random_floats((size_t)rows * cols, -8, 8);
    b->data[1] = checked_malloc((size_t)rows * cols * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { rows / 8, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)rows * cols * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)rows * cols * 4 };
    b->arg_count = 4;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] }; b->args[3] = (bench_arg){ -1, &b->u[1] };
    b->output_buffer = 1;
    b->native_run = softmax_native; b->check = softmax_check;
}

static void scan_native(bench_case *b) { native_block_scan(b->data[0], b->data[1], b->u[0]); }
static int scan_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_exact(out, b->data[1], (size_t)b->u[0] * sizeof(int), m, l);
}
static void setup_scan(bench_case *b, double scale)
{
    unsigned n = scaled(scale, 8u << 20, 256);
    b->name = "scan"; b->ptx = "bench/kernels/scan.ptx"; b->entry = "block_scan";
    snprintf(b->size_text, sizeof b->size_text, "n=%u", n);
    b->tolerance = "exact";
    b->u[0] = n;
    int *in = checked_malloc((size_t)n * sizeof(int));
    for (unsigned i = 0; i < n; i++)
        in[i] = (int)(random_u32() % 2001) - 1000;
    b->data[0] = in;
    b->data[1] = checked_malloc((size_t)n * sizeof(int));
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { n / 256, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ in, (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)n * 4 };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] };
    b->output_buffer = 1;
    b->native_run = scan_native; b->check = scan_check;
}

static void transpose_native(bench_case *b) { native_transpose(b->data[0], b->data[1], b->u[0], b->u[1]); }
static int transpose_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_exact(out, b->data[1], (size_t)b->u[0] * b->u[1] * 4, m, l);
}
static void setup_transpose(bench_case *b, double scale)
{
    unsigned n = scaled(sqrt(scale), 4096, 32);
    b->name = "transpose"; b->ptx = "bench/kernels/transpose.ptx"; b->entry = "transpose";
    snprintf(b->size_text, sizeof b->size_text, "%ux%u", n, n);
    b->tolerance = "exact";
    b->u[0] = b->u[1] = n;
    b->data[0] = random_floats((size_t)n * n, -1, 1);
    b->data[1] = checked_malloc((size_t)n * n * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { n / 32, n / 32, 1 }, .block = { 32, 8, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)n * n * 4 };
    b->arg_count = 4;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] }; b->args[3] = (bench_arg){ -1, &b->u[1] };
    b->output_buffer = 1;
    b->native_run = transpose_native; b->check = transpose_check;
}

static void mandelbrot_native(bench_case *b) { native_mandelbrot(b->data[0], b->u[0], b->u[1], b->u[2]); }
static int mandelbrot_check(const bench_case *b, const void *out, char *m, size_t l)
{
    /* nvcc contracts zi = 2*zr*zi + ci into one fma, plain C does not: a
     * few points on the set's boundary escape one iteration earlier/later */
    const unsigned *kemu = out, *native = b->data[0];
    size_t count = (size_t)b->u[0] * b->u[1], differing = 0;
    for (size_t i = 0; i < count; i++)
        differing += kemu[i] != native[i];
    if (differing * 100 <= count)
        return 0;
    snprintf(m, l, "%zu of %zu pixels differ", differing, count);
    return 1;
}
static void setup_mandelbrot(bench_case *b, double scale)
{
    unsigned side = scaled(sqrt(scale), 1024, 16);
    b->name = "mandelbrot"; b->ptx = "bench/kernels/mandelbrot.ptx"; b->entry = "mandelbrot";
    snprintf(b->size_text, sizeof b->size_text, "%ux%u it<=256", side, side);
    b->tolerance = "<= 1% of pixels differ (fma contraction)";
    b->u[0] = b->u[1] = side; b->u[2] = 256;
    b->data[0] = checked_malloc((size_t)side * side * 4);
    b->native_output = b->data[0];
    b->launch = (kemu_launch_config){ .grid = { side / 16, side / 16, 1 }, .block = { 16, 16, 1 } };
    b->buffer_count = 1;
    b->buffers[0] = (bench_buffer){ NULL, (size_t)side * side * 4 };
    b->arg_count = 4;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ -1, &b->u[0] };
    b->args[2] = (bench_arg){ -1, &b->u[1] }; b->args[3] = (bench_arg){ -1, &b->u[2] };
    b->output_buffer = 0;
    b->native_run = mandelbrot_native; b->check = mandelbrot_check;
}

static void half_native(bench_case *b) { native_half_axpby(b->u[0], b->h[0], b->h[1], b->data[0], b->data[1], b->data[2]); }
static int half_check(const bench_case *b, const void *out, char *m, size_t l)
{
    /* at most one binary16 ulp apart (the native twin rounds a*x + t once
     * to float and then to half; fma.rn.f16 rounds once) */
    const uint16_t *kemu = out, *native = b->data[2];
    for (unsigned i = 0; i < b->u[0]; i++) {
        int a = kemu[i] & 0x8000 ? -(kemu[i] & 0x7fff) : kemu[i];
        int c = native[i] & 0x8000 ? -(native[i] & 0x7fff) : native[i];
        if (abs(a - c) > 1) {
            snprintf(m, l, "element %u: kemu 0x%04x, native 0x%04x", i, kemu[i], native[i]);
            return 1;
        }
    }
    return 0;
}
static void setup_half(bench_case *b, double scale)
{
    unsigned n = scaled(scale, 8u << 20, 256);
    b->name = "half_axpby"; b->ptx = "bench/kernels/half_axpby.ptx"; b->entry = "half_axpby";
    snprintf(b->size_text, sizeof b->size_text, "n=%u f16", n);
    b->tolerance = "<= 1 f16 ulp";
    b->u[0] = n;
    b->h[0] = native_float_to_half(1.5f); b->h[1] = native_float_to_half(-0.75f);
    uint16_t *x = checked_malloc((size_t)n * 2), *y = checked_malloc((size_t)n * 2);
    for (unsigned i = 0; i < n; i++) {
        x[i] = native_float_to_half(random_float(-4, 4));
        y[i] = native_float_to_half(random_float(-4, 4));
    }
    b->data[0] = x; b->data[1] = y;
    b->data[2] = checked_malloc((size_t)n * 2);
    b->native_output = b->data[2];
    b->launch = (kemu_launch_config){ .grid = { n / 256, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 3;
    b->buffers[0] = (bench_buffer){ x, (size_t)n * 2 };
    b->buffers[1] = (bench_buffer){ y, (size_t)n * 2 };
    b->buffers[2] = (bench_buffer){ NULL, (size_t)n * 2 };
    b->arg_count = 6;
    b->args[0] = (bench_arg){ -1, &b->u[0] }; b->args[1] = (bench_arg){ -1, &b->h[0] };
    b->args[2] = (bench_arg){ -1, &b->h[1] }; b->args[3] = (bench_arg){ 0, NULL };
    b->args[4] = (bench_arg){ 1, NULL }; b->args[5] = (bench_arg){ 2, NULL };
    b->output_buffer = 2;
    b->native_run = half_native; b->check = half_check;
}

/* ---- one element per thread (issue 27): against the sequential C ---------- */

enum { STYLE_BLOCK = 256 };
static void block_sum_native(bench_case *b) { native_block_sums(b->data[0], b->data[1], b->u[0], STYLE_BLOCK); }
static int block_sum_check(const bench_case *b, const void *out, char *m, size_t l)
{
    /* tree order against left-to-right: each sum of 256 values in [-1, 1] */
    return compare_floats(out, b->data[1], b->u[0] / STYLE_BLOCK, 1e-4, 1e-5, m, l);
}
static void setup_block_sum(bench_case *b, double scale)
{
    unsigned blocks = scaled(scale, 262144, 1), n = blocks * STYLE_BLOCK;
    b->name = "block_sum"; b->ptx = "bench/kernels/styles.ptx"; b->entry = "block_sum";
    snprintf(b->size_text, sizeof b->size_text, "%u blocks", blocks);
    b->tolerance = "abs 1e-4 + rel 1e-5 (tree against sequential summation order)";
    b->u[0] = n;
    b->data[0] = random_floats(n, -1, 1);
    b->data[1] = checked_malloc((size_t)blocks * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { blocks, 1, 1 }, .block = { STYLE_BLOCK, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)blocks * 4 };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] };
    b->output_buffer = 1;
    b->native_run = block_sum_native; b->check = block_sum_check;
}

static void warp_max_native(bench_case *b) { native_group_max(b->data[0], b->data[1], b->u[0], 32); }
static int warp_max_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_exact(out, b->data[1], (size_t)b->u[0] / 32 * 4, m, l);
}
static void setup_warp_max(bench_case *b, double scale)
{
    unsigned blocks = scaled(scale, 131072, 1), n = blocks * STYLE_BLOCK;
    b->name = "warp_max"; b->ptx = "bench/kernels/styles.ptx"; b->entry = "warp_max";
    snprintf(b->size_text, sizeof b->size_text, "%u blocks", blocks);
    b->tolerance = "exact";
    b->u[0] = n;
    b->data[0] = random_floats(n, -1000, 1000);
    b->data[1] = checked_malloc((size_t)n / 32 * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { blocks, 1, 1 }, .block = { STYLE_BLOCK, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)n / 32 * 4 };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[0] };
    b->output_buffer = 1;
    b->native_run = warp_max_native; b->check = warp_max_check;
}

static void setup_row_softmax(bench_case *b, double scale)
{
    unsigned rows = scaled(scale, 8192, 1), cols = 1024;
    b->name = "row_softmax"; b->ptx = "bench/kernels/styles.ptx"; b->entry = "row_softmax";
    snprintf(b->size_text, sizeof b->size_text, "%ux%u", rows, cols);
    b->tolerance = "abs 1e-9 + rel 1e-5 (ex2.approx vs expf)";
    b->u[0] = rows; b->u[1] = cols;
    b->data[0] = random_floats((size_t)rows * cols, -8, 8);
    b->data[1] = checked_malloc((size_t)rows * cols * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { rows, 1, 1 }, .block = { STYLE_BLOCK, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)rows * cols * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)rows * cols * 4 };
    b->arg_count = 3;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->u[1] };
    b->output_buffer = 1;
    b->native_run = softmax_native; b->check = softmax_check;
}

static void launches_native(bench_case *b)
{
    for (unsigned r = 0; r < b->launches; r++)
        native_scale_add(b->u[0], b->f[0], b->f[1], b->data[0], b->data[1]);
}
static int launches_check(const bench_case *b, const void *out, char *m, size_t l)
{
    return compare_floats(out, b->data[1], b->u[0], 1e-6, 1e-6, m, l);
}
static void setup_launches(bench_case *b, double scale)
{
    unsigned n = 4096;
    b->name = "launches"; b->ptx = "bench/kernels/styles.ptx"; b->entry = "scale_add";
    b->launches = scaled(scale, 10000, 1);
    snprintf(b->size_text, sizeof b->size_text, "%u x n=%u", b->launches, n);
    b->tolerance = "abs 1e-6 + rel 1e-6 (nvcc may contract to fma)";
    b->u[0] = n; b->f[0] = 1.5f; b->f[1] = -0.25f;
    b->data[0] = random_floats(n, -1, 1);
    b->data[1] = checked_malloc((size_t)n * 4);
    b->native_output = b->data[1];
    b->launch = (kemu_launch_config){ .grid = { n / 256, 1, 1 }, .block = { 256, 1, 1 } };
    b->buffer_count = 2;
    b->buffers[0] = (bench_buffer){ b->data[0], (size_t)n * 4 };
    b->buffers[1] = (bench_buffer){ NULL, (size_t)n * 4 };
    b->arg_count = 5;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL };
    b->args[2] = (bench_arg){ -1, &b->f[0] }; b->args[3] = (bench_arg){ -1, &b->f[1] };
    b->args[4] = (bench_arg){ -1, &b->u[0] };
    b->output_buffer = 1;
    b->native_run = launches_native; b->check = launches_check;
}

/* ---- tensor cores (issue 27): against the C matmul of the same values ------- */

/* The element types of the tensor-core cases. */
enum { TC_F16, TC_BF16, TC_TF32, TC_S8 };

static uint16_t bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); /* to nearest even (no NaN here) */
}

static float bf16_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* data[0]: A then B as the native twin reads them */
static void tc_native(bench_case *b)
{
    size_t count = (size_t)b->u[0] * b->u[2];
    if (b->u[3] == TC_S8) {
        const signed char *a = b->data[0];
        native_matmul_s8(a, a + count, b->data[2], b->u[0], b->u[1], b->u[2]);
    } else {
        const float *a = b->data[0];
        native_matmul(a, a + count, b->data[2], b->u[0], b->u[1], b->u[2]);
    }
}
static int tc_check(const bench_case *b, const void *out, char *m, size_t l)
{
    size_t count = (size_t)b->u[0] * b->u[1];
    if (b->u[3] == TC_S8) {
        const int32_t *kemu = out, *native = b->data[2];
        for (size_t i = 0; i < count; i++)
            if (kemu[i] != native[i]) {
                snprintf(m, l, "element %zu: kemu %d, native %d", i, kemu[i], native[i]);
                return 1;
            }
        return 0;
    }
    /* the tensor cores' group truncation against an f32 chain: both within
     * a few f32 ulps of the sum's terms */
    return compare_floats(out, b->data[2], count, 1e-5 * b->u[2], 1e-4, m, l);
}

/* A tensor-core matmul case: n x n x n, operands of `type` (random values in
 * [-1, 1], or [-128, 127] for s8), held as floats (or bytes) for the native
 * twin and in the kernel's format for kemu; `tile_n` columns per warp (or,
 * with `triton`, the Triton sm_90 wgmma kernel's 64 x 64 tiles of 4 warps). */
static void setup_tc(bench_case *b, double scale, const char *name, const char *entry, int type, unsigned tile_n,
                     int triton)
{
    unsigned n = scaled(cbrt(scale), 512, 64);
    size_t count = (size_t)n * n, size = type == TC_S8 ? 1 : type == TC_TF32 ? 4 : 2;
    b->name = name;
    b->ptx = triton ? "tests/frontends/triton/matmul_kernel.sm90.ptx" : "bench/kernels/tensor.ptx";
    b->entry = entry;
    snprintf(b->size_text, sizeof b->size_text, "%ux%ux%u", n, n, n);
    b->tolerance = type == TC_S8 ? "exact" : "abs 1e-5*K + rel 1e-4 (group truncation vs f32 chain)";
    b->u[0] = b->u[1] = b->u[2] = n;
    b->u[3] = (unsigned)type;
    unsigned char *device = checked_malloc(2 * count * size);
    if (type == TC_S8) {
        signed char *host = checked_malloc(2 * count);
        for (size_t i = 0; i < 2 * count; i++)
            host[i] = (signed char)(rand() % 256 - 128);
        memcpy(device, host, 2 * count);
        b->data[0] = host;
    } else {
        float *host = random_floats(2 * count, -1, 1);
        for (size_t i = 0; i < 2 * count; i++) {
            if (type == TC_F16) {
                uint16_t h = native_float_to_half(host[i]);
                host[i] = native_half_to_float(h);
                memcpy(device + 2 * i, &h, 2);
            } else if (type == TC_BF16) {
                uint16_t h = bf16_bits(host[i]);
                host[i] = bf16_float(h);
                memcpy(device + 2 * i, &h, 2);
            } else {
                uint32_t u;
                memcpy(&u, &host[i], 4);
                u &= 0xffffe000u; /* tf32: the products use 10 fraction bits */
                memcpy(&host[i], &u, 4);
                memcpy(device + 4 * i, &u, 4);
            }
        }
        b->data[0] = host;
    }
    b->data[2] = checked_malloc(count * 4);
    b->data[3] = device;
    b->native_output = b->data[2];
    if (triton)
        b->launch = (kemu_launch_config){ .grid = { n / 64, n / 64, 1 }, .block = { 128, 1, 1 }, .shared_bytes = 16384 };
    else
        b->launch = (kemu_launch_config){ .grid = { n / tile_n, n / 16, 1 }, .block = { 32, 1, 1 } };
    b->buffer_count = 3;
    b->buffers[0] = (bench_buffer){ device, count * size };
    b->buffers[1] = (bench_buffer){ device + count * size, count * size };
    b->buffers[2] = (bench_buffer){ NULL, count * 4 };
    b->arg_count = triton ? 8 : 6;
    static const uint64_t no_scratch = 0;
    b->args[0] = (bench_arg){ 0, NULL }; b->args[1] = (bench_arg){ 1, NULL }; b->args[2] = (bench_arg){ 2, NULL };
    b->args[3] = (bench_arg){ -1, &b->u[0] }; b->args[4] = (bench_arg){ -1, &b->u[1] };
    b->args[5] = (bench_arg){ -1, &b->u[2] };
    b->args[6] = (bench_arg){ -1, &no_scratch }; b->args[7] = (bench_arg){ -1, &no_scratch };
    b->output_buffer = 2;
    b->native_run = tc_native; b->check = tc_check;
    b->flops = 2.0 * n * n * n;
}
static void setup_tc_wmma_f16(bench_case *b, double s) { setup_tc(b, s, "tc_wmma_f16", "tc_wmma_f16", TC_F16, 16, 0); }
static void setup_tc_wmma_bf16(bench_case *b, double s) { setup_tc(b, s, "tc_wmma_bf16", "tc_wmma_bf16", TC_BF16, 16, 0); }
static void setup_tc_wmma_tf32(bench_case *b, double s) { setup_tc(b, s, "tc_wmma_tf32", "tc_wmma_tf32", TC_TF32, 16, 0); }
static void setup_tc_wmma_s8(bench_case *b, double s) { setup_tc(b, s, "tc_wmma_s8", "tc_wmma_s8", TC_S8, 16, 0); }
static void setup_tc_mma_f16(bench_case *b, double s) { setup_tc(b, s, "tc_mma_f16", "tc_mma_f16", TC_F16, 8, 0); }
static void setup_tc_wgmma_f16(bench_case *b, double s) { setup_tc(b, s, "tc_wgmma_f16", "matmul_kernel", TC_F16, 64, 1); }

static void (*const case_setups[])(bench_case *, double) = {
    setup_saxpy, setup_reduce, setup_sgemm, setup_histogram, setup_softmax,
    setup_scan, setup_transpose, setup_mandelbrot, setup_half,
    setup_block_sum, setup_warp_max, setup_row_softmax, setup_launches,
    setup_tc_wmma_f16, setup_tc_wmma_bf16, setup_tc_wmma_tf32, setup_tc_wmma_s8, setup_tc_mma_f16, setup_tc_wgmma_f16,
};
enum { CASE_COUNT = sizeof case_setups / sizeof case_setups[0] };
/* The case names, in the order of case_setups (for --only, which skips
 * building the other cases' inputs). */
static const char *const case_names[CASE_COUNT] = {
    "saxpy", "reduce", "sgemm", "histogram", "softmax", "scan", "transpose", "mandelbrot", "half_axpby",
    "block_sum", "warp_max", "row_softmax", "launches",
    "tc_wmma_f16", "tc_wmma_bf16", "tc_wmma_tf32", "tc_wmma_s8", "tc_mma_f16", "tc_wgmma_f16",
};

/* Whether --only's comma-separated shell patterns name `name`. */
static int selected(const char *only, const char *name)
{
    char pattern[256];
    for (const char *p = only; *p;) {
        size_t n = strcspn(p, ",");
        if (n < sizeof pattern) {
            memcpy(pattern, p, n);
            pattern[n] = 0;
            if (!fnmatch(pattern, name, 0))
                return 1;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* ---- measuring -------------------------------------------------------------- */

static double time_native(bench_case *b)
{
    double best = INFINITY;
    for (int run = 0; run < NATIVE_RUNS; run++) {
        if (b->native_prepare)
            b->native_prepare(b);
        double start = seconds_now();
        b->native_run(b);
        double elapsed = seconds_now() - start;
        if (elapsed < best)
            best = elapsed;
    }
    return best;
}

/* Runs case b on a fresh device in the given mode, runs times, keeping the
 * fastest launch in *seconds and its lane-instruction count in
 * *instructions; copies the output into `output`. Returns 0 on success. */
static int time_kemu(bench_case *b, const char *srcdir, int mode, int runs, void *output,
                     double *seconds, double *instructions)
{
    kemu_error err = { 0 };
    kemu_device_config config = { .threads = mode == MODE_ALL_THREADS ? 0 : 1, .uninit = KEMU_UNINIT_ZERO };
    kemu_device *dev = NULL;
    kemu_module *mod = NULL;
    kemu_kernel *kernel = NULL;
    uint64_t address[4] = { 0 };
    int failed = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", srcdir, b->ptx);

    if (kemu_device_create(&config, &dev, &err) != KEMU_OK)
        goto done;
    if (mode == MODE_RACECHECK || mode == MODE_MEMCHECK) {
        kemu_check_config checks = {
            .tools = mode == MODE_RACECHECK ? KEMU_TOOL_RACECHECK : KEMU_TOOL_MEMCHECK,
            .racecheck_warp = KEMU_CHECK_WARN, .racecheck_benign = KEMU_CHECK_WARN,
        };
        if (kemu_device_set_checks(dev, &checks, &err) != KEMU_OK)
            goto done;
    }
    if (kemu_module_load_ptx_file(dev, path, &mod, &err) != KEMU_OK
        || kemu_module_get_kernel(mod, b->entry, &kernel, &err) != KEMU_OK)
        goto done;
    for (int i = 0; i < b->buffer_count; i++)
        if (kemu_malloc(dev, b->buffers[i].bytes, KEMU_UNINIT_ZERO, &address[i], &err) != KEMU_OK)
            goto done;
    void *args[8];
    for (int i = 0; i < b->arg_count; i++)
        args[i] = b->args[i].buffer >= 0 ? (void *)&address[b->args[i].buffer] : (void *)b->args[i].scalar;

    *seconds = INFINITY;
    for (int run = 0; run < runs; run++) {
        for (int i = 0; i < b->buffer_count; i++) {
            kemu_status status = b->buffers[i].init
                ? kemu_memcpy_htod(dev, address[i], b->buffers[i].init, b->buffers[i].bytes, &err)
                : kemu_memset(dev, address[i], 0, b->buffers[i].bytes, &err);
            if (status != KEMU_OK)
                goto done;
        }
        kemu_report report;
        memset(&report, 0, sizeof report);
        uint64_t lane_instructions = 0;
        unsigned launches = b->launches ? b->launches : 1;
        kemu_status status = KEMU_OK;
        double start = seconds_now();
        for (unsigned l = 0; l < launches && status == KEMU_OK; l++) {
            if (l) {
                lane_instructions += report.thread_instructions;
                kemu_report_free(&report);
                memset(&report, 0, sizeof report);
            }
            status = kemu_launch(kernel, &b->launch, args, &report, &err);
        }
        double elapsed = seconds_now() - start;
        report.thread_instructions += lane_instructions;
        if (status != KEMU_OK) {
            fprintf(stderr, "suite: %s (%s): %s %s\n", b->name, mode_names[mode], err.message, report.fault_message);
            kemu_report_free(&report);
            goto done;
        }
        if (elapsed < *seconds) {
            *seconds = elapsed;
            *instructions = (double)report.thread_instructions;
        }
        kemu_report_free(&report);
    }
    if (kemu_memcpy_dtoh(dev, output, address[b->output_buffer], b->buffers[b->output_buffer].bytes, &err) != KEMU_OK)
        goto done;
    if (mode == MODE_RACECHECK || mode == MODE_MEMCHECK) {
        kemu_check_summary summary;
        memset(&summary, 0, sizeof summary);
        if (kemu_check_results(dev, 3, &summary, &err) == KEMU_OK) {
            if (summary.errors)
                fprintf(stderr, "suite: %s under %s: %zu errors, %zu warnings\n", b->name, mode_names[mode],
                        summary.errors, summary.warnings);
            kemu_check_summary_free(&summary);
        }
    }
    failed = 0;
done:
    if (failed && err.status != KEMU_OK)
        fprintf(stderr, "suite: %s (%s): %s\n", b->name, mode_names[mode], err.message);
    kemu_device_destroy(dev);
    return failed;
}

static void free_case(bench_case *b)
{
    for (int i = 0; i < 4; i++) {
        free(b->data[i]);
        b->data[i] = NULL;
    }
}

int main(int argc, char **argv)
{
    const char *srcdir = ".", *json_path = "bench/results.json", *only = NULL;
    double scale = 1.0;
    int quick = 0;
    unsigned modes = (1u << MODE_COUNT) - 1; /* the kemu modes to run */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--srcdir") && i + 1 < argc)
            srcdir = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            /* only this mode (for profiling one of them); the others print as nan */
            const char *name = argv[++i];
            modes = 0;
            for (int m = 0; m < MODE_COUNT; m++)
                if (!strcmp(name, mode_names[m]))
                    modes = 1u << m;
            if (!modes) {
                fprintf(stderr, "suite: --mode is one of kemu_1t, kemu_all, racecheck, memcheck\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--cpu-time"))
            timing_clock = CLOCK_PROCESS_CPUTIME_ID;
        else {
            fprintf(stderr, "usage: suite [--srcdir DIR] [--json FILE] [--scale X] [--only NAMES] [--mode NAME] [--quick] [--cpu-time]\n");
            return 2;
        }
    }
    if (!(scale > 0)) {
        fprintf(stderr, "suite: --scale must be positive\n");
        return 2;
    }

    bench_case cases[CASE_COUNT];
    bench_row rows[CASE_COUNT];
    int failures = 0;
    printf("%-12s %-18s %9s %9s %9s %9s %9s %7s %7s %6s %6s %9s\n", "kernel", "size", "native_s", "kemu_1t_s",
           "kemu_all_s", "race_s", "mem_s", "x1t", "xall", "race/1t", "mem/1t", "Mlane/s");
    for (int c = 0; c < CASE_COUNT; c++) {
        bench_case *b = &cases[c];
        bench_row *row = &rows[c];
        memset(b, 0, sizeof *b);
        memset(row, 0, sizeof *row);
        if (only && !selected(only, case_names[c]))
            continue;
        case_setups[c](b, scale);
        row->native_seconds = time_native(b);
        void *output = checked_malloc(b->buffers[b->output_buffer].bytes);
        row->ok = 1;
        for (int mode = 0; mode < (quick ? MODE_ONE_THREAD + 1 : MODE_COUNT) && row->ok; mode++) {
            double instructions = 0;
            row->kemu_seconds[mode] = NAN;
            if (!(modes & (1u << mode)))
                continue;
            int runs = mode <= MODE_ALL_THREADS ? KEMU_RUNS : CHECKED_RUNS;
            char message[256] = "";
            if (time_kemu(b, srcdir, mode, runs, output, &row->kemu_seconds[mode], &instructions)) {
                row->ok = 0;
            } else if (b->check(b, output, message, sizeof message)) {
                fprintf(stderr, "suite: %s (%s): output disagrees with native: %s\n", b->name, mode_names[mode], message);
                row->ok = 0;
            }
            if (mode == MODE_ONE_THREAD)
                row->lane_instructions = instructions;
        }
        free(output);
        if (!row->ok) {
            failures++;
            printf("%-12s %-18s %9.4f   FAILED\n", b->name, b->size_text, row->native_seconds);
        } else {
            const double *k = row->kemu_seconds;
            printf("%-12s %-18s %9.4f %9.4f %9.4f %9.4f %9.4f %7.2f %7.2f %6.2f %6.2f %9.1f\n", b->name,
                   b->size_text, row->native_seconds, k[0], k[1], k[2], k[3], k[0] / row->native_seconds,
                   k[1] / row->native_seconds, k[2] / k[0], k[3] / k[0], row->lane_instructions / k[0] / 1e6);
        }
        fflush(stdout);
    }

    /* the geomean over the SIMT kernels (comparable with the milestones in
     * docs/performance.md) and, apart, over the tensor-core ones */
    double log_sum = 0, tc_log_sum = 0;
    int simt_measured = 0, tc_measured = 0;
    for (int c = 0; c < CASE_COUNT; c++)
        if (rows[c].ok) {
            double ratio = log(rows[c].kemu_seconds[MODE_ONE_THREAD] / rows[c].native_seconds);
            if (cases[c].flops > 0) {
                tc_log_sum += ratio;
                tc_measured++;
            } else {
                log_sum += ratio;
                simt_measured++;
            }
        }
    double geomean = simt_measured ? exp(log_sum / simt_measured) : NAN;
    double tc_geomean = tc_measured ? exp(tc_log_sum / tc_measured) : NAN;

    /* a run of one mode leaves the table incomplete: no JSON for it */
    FILE *json = modes == (1u << MODE_COUNT) - 1 ? fopen(json_path, "w") : NULL;
    if (!json && modes == (1u << MODE_COUNT) - 1) {
        fprintf(stderr, "suite: cannot write %s\n", json_path);
        failures++;
    } else if (json) {
        fprintf(json, "{\n  \"kemu_version\": \"%s\",\n  \"kernels\": [\n", kemu_version());
        int first = 1;
        for (int c = 0; c < CASE_COUNT; c++) {
            if (!rows[c].ok)
                continue;
            const bench_row *r = &rows[c];
            const double *k = r->kemu_seconds;
            fprintf(json,
                    "%s    {\"name\": \"%s\", \"size\": \"%s\", \"tolerance\": \"%s\", \"native_s\": %.6f, "
                    "\"kemu_1t_s\": %.6f, \"kemu_all_s\": %.6f, \"racecheck_s\": %.6f, \"memcheck_s\": %.6f, "
                    "\"slowdown_1t\": %.3f, \"slowdown_all\": %.3f, \"racecheck_over_1t\": %.3f, "
                    "\"memcheck_over_1t\": %.3f, \"lane_instructions\": %.0f, \"lane_instructions_per_s\": %.0f",
                    first ? "" : ",\n", cases[c].name, cases[c].size_text, cases[c].tolerance, r->native_seconds,
                    k[0], k[1], k[2], k[3], k[0] / r->native_seconds, k[1] / r->native_seconds, k[2] / k[0],
                    k[3] / k[0], r->lane_instructions, r->lane_instructions / k[0]);
            if (cases[c].flops > 0)
                fprintf(json, ", \"gflops_1t\": %.3f", cases[c].flops / k[0] / 1e9);
            fputs("}", json);
            first = 0;
        }
        fprintf(json, "\n  ],\n  \"failed\": %d,\n  \"geomean_slowdown_1t\": %.4f", failures,
                simt_measured ? geomean : 0.0);
        if (tc_measured)
            fprintf(json, ",\n  \"geomean_tensor_slowdown_1t\": %.4f", tc_geomean);
        fputs("\n}\n", json);
        fclose(json);
    }
    for (int c = 0; c < CASE_COUNT; c++)
        free_case(&cases[c]);
    if (simt_measured)
        printf("geomean slowdown vs native (1 thread): %.2f\n", geomean);
    if (tc_measured) {
        printf("tensor cores, kemu 1 thread GFLOP/s:");
        for (int c = 0; c < CASE_COUNT; c++)
            if (rows[c].ok && cases[c].flops > 0)
                printf(" %s %.2f", cases[c].name, cases[c].flops / rows[c].kemu_seconds[MODE_ONE_THREAD] / 1e9);
        printf("\ngeomean slowdown of the tensor-core kernels vs the C matmul (1 thread): %.2f\n", tc_geomean);
    }
    return failures ? 1 : 0;
}
