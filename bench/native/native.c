/* Native twins of the benchmark kernels (see native.h): each function is
 * the kernel's algorithm as one plain C loop nest on one core, built with
 * -O2 and no special flags, so the suite measures kemu against what a C
 * programmer would write without thinking about SIMD or threads. */
#include "native.h"

#include <math.h>
#include <string.h>

void native_saxpy(unsigned n, float a, const float *x, float *y)
{
    for (unsigned i = 0; i < n; i++)
        y[i] = a * x[i] + y[i];
}

float native_reduce_sum(const float *in, unsigned n)
{
    float sum = 0.0f;
    for (unsigned i = 0; i < n; i++)
        sum += in[i];
    return sum;
}

void native_matmul(const float *a, const float *b, float *c, unsigned m, unsigned n, unsigned k)
{
    memset(c, 0, (size_t)m * n * sizeof(float));
    for (unsigned i = 0; i < m; i++)
        for (unsigned p = 0; p < k; p++) {
            float aip = a[(size_t)i * k + p];
            for (unsigned j = 0; j < n; j++)
                c[(size_t)i * n + j] += aip * b[(size_t)p * n + j];
        }
}

void native_matmul_s8(const signed char *a, const signed char *b, int32_t *c, unsigned m, unsigned n, unsigned k)
{
    memset(c, 0, (size_t)m * n * sizeof(int32_t));
    for (unsigned i = 0; i < m; i++)
        for (unsigned p = 0; p < k; p++) {
            int32_t aip = a[(size_t)i * k + p];
            for (unsigned j = 0; j < n; j++)
                c[(size_t)i * n + j] += aip * b[(size_t)p * n + j];
        }
}

void native_histogram(const unsigned char *data, unsigned n, unsigned *hist)
{
    for (unsigned i = 0; i < n; i++)
        hist[data[i]]++;
}

void native_softmax(const float *x, float *y, unsigned rows, unsigned cols)
{
    for (unsigned r = 0; r < rows; r++) {
        const float *in = x + (size_t)r * cols;
        float *out = y + (size_t)r * cols;
        float m = -INFINITY;
        for (unsigned c = 0; c < cols; c++)
            m = fmaxf(m, in[c]);
        float sum = 0.0f;
        for (unsigned c = 0; c < cols; c++)
            sum += expf(in[c] - m);
        float inv = 1.0f / sum;
        for (unsigned c = 0; c < cols; c++)
            out[c] = expf(in[c] - m) * inv;
    }
}

/* The kernel's algorithm (bench/kernels/scan.cu): per 256-element block,
 * Hillis-Steele steps with offsets 1, 2, ..., 128 over two buffers. (A
 * running sum does an eighth of the additions: until 2026-11-29 the twin
 * was one, which made scan's slowdown 8x what the same algorithm gives.)
 * n is a multiple of 256. */
void native_block_scan(const int *in, int *out, unsigned n)
{
    int buf[2][256];
    for (unsigned base = 0; base < n; base += 256) {
        int src = 0;
        memcpy(buf[0], in + base, sizeof buf[0]);
        for (unsigned offset = 1; offset < 256; offset <<= 1) {
            const int *s = buf[src];
            int *d = buf[1 - src];
            for (unsigned t = 0; t < offset; t++)
                d[t] = s[t];
            for (unsigned t = offset; t < 256; t++)
                d[t] = s[t] + s[t - offset];
            src = 1 - src;
        }
        memcpy(out + base, buf[src], sizeof buf[src]);
    }
}

void native_transpose(const float *in, float *out, unsigned rows, unsigned cols)
{
    for (unsigned r = 0; r < rows; r++)
        for (unsigned c = 0; c < cols; c++)
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

void native_mandelbrot(unsigned *iters, unsigned width, unsigned height, unsigned max_iter)
{
    for (unsigned py = 0; py < height; py++)
        for (unsigned px = 0; px < width; px++) {
            float cr = -2.0f + 3.0f * (float)px / (float)width;
            float ci = -1.5f + 3.0f * (float)py / (float)height;
            float zr = 0.0f, zi = 0.0f;
            unsigned k = 0;
            while (k < max_iter && zr * zr + zi * zi <= 4.0f) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                k++;
            }
            iters[(size_t)py * width + px] = k;
        }
}

float native_half_to_float(uint16_t bits)
{
    uint32_t sign = (uint32_t)(bits >> 15) << 31;
    uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    float magnitude;
    if (exponent == 0)
        magnitude = ldexpf((float)mantissa, -24);
    else if (exponent == 31)
        magnitude = mantissa ? NAN : INFINITY;
    else
        magnitude = ldexpf((float)(mantissa | 0x400), (int)exponent - 25);
    uint32_t out;
    memcpy(&out, &magnitude, sizeof out);
    out |= sign;
    memcpy(&magnitude, &out, sizeof out);
    return magnitude;
}

uint16_t native_float_to_half(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    uint32_t abs_bits = bits & 0x7fffffffu;
    if (abs_bits > 0x7f800000u)
        return sign | 0x7e00;                       /* NaN */
    if (abs_bits >= 0x477ff000u)
        return sign | 0x7c00;                       /* rounds to infinity */
    if (abs_bits < 0x38800000u) {                   /* half subnormal or zero */
        float magnitude;
        memcpy(&magnitude, &abs_bits, sizeof magnitude);
        /* magnitude / 2^-24, rounded to nearest even by the FPU */
        return sign | (uint16_t)nearbyintf(magnitude * 16777216.0f);
    }
    uint32_t exponent = (abs_bits >> 23) - 112, mantissa = abs_bits & 0x7fffff;
    uint32_t half = (exponent << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
        half++;                                     /* carries into exponent correctly */
    return sign | (uint16_t)half;
}

void native_half_axpby(unsigned n, uint16_t a, uint16_t b, const uint16_t *x, const uint16_t *y, uint16_t *z)
{
    float fa = native_half_to_float(a), fb = native_half_to_float(b);
    for (unsigned i = 0; i < n; i++) {
        float product = native_half_to_float(native_float_to_half(fb * native_half_to_float(y[i])));
        /* a*x is exact in float (11-bit by 11-bit mantissas); one rounding
         * of the sum to float then to half, as close to fma.rn.f16 as plain
         * C gets without _Float16 arithmetic */
        z[i] = native_float_to_half(fa * native_half_to_float(x[i]) + product);
    }
}

void native_block_sums(const float *x, float *out, unsigned n, unsigned block)
{
    for (unsigned b = 0; b * block < n; b++) {
        float sum = 0.0f;
        for (unsigned i = b * block; i < n && i < (b + 1) * block; i++)
            sum += x[i];
        out[b] = sum;
    }
}

void native_group_max(const float *x, float *out, unsigned n, unsigned group)
{
    for (unsigned g = 0; g * group < n; g++) {
        float m = x[g * group];
        for (unsigned i = g * group + 1; i < n && i < (g + 1) * group; i++)
            m = x[i] > m ? x[i] : m;
        out[g] = m;
    }
}

void native_scale_add(unsigned n, float a, float b, const float *x, float *y)
{
    for (unsigned i = 0; i < n; i++)
        y[i] = a * x[i] + b;
}
