/* Glue shared by kemu's vendor libraries (see vendor.h): operand checks,
 * marking writes for the checkers, element conversions. It reaches the
 * runtime only through the __kemu_vendor_* functions of kemu's libcudart
 * and the public kemu API; it holds no state. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vendor/vendor.h"

size_t vendor_type_size(int type)
{
    switch (type) {
    case VENDOR_R_32F: return 4;
    case VENDOR_R_64F: return 8;
    case VENDOR_R_16F:
    case VENDOR_R_16BF: return 2;
    default: return 0;
    }
}

const char *vendor_type_name(int type)
{
    static __thread char other[32];
    switch (type) {
    case VENDOR_R_32F: return "CUDA_R_32F";
    case VENDOR_R_64F: return "CUDA_R_64F";
    case VENDOR_R_16F: return "CUDA_R_16F";
    case VENDOR_R_16BF: return "CUDA_R_16BF";
    case 3: return "CUDA_R_8I";
    case 10: return "CUDA_R_32I";
    case 4: return "CUDA_C_32F";
    case 5: return "CUDA_C_64F";
    case 6: return "CUDA_C_16F";
    case 28: return "CUDA_R_8F_E4M3";
    case 29: return "CUDA_R_8F_E5M2";
    default:
        snprintf(other, sizeof other, "cudaDataType %d", type);
        return other;
    }
}

uint64_t vendor_matrix_bytes(int64_t rows, int64_t cols, int64_t ld, size_t elem, int *overflow)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    /* ((cols - 1) * ld + rows) * elem, in 128 bits */
    unsigned __int128 n = (unsigned __int128)(uint64_t)(cols - 1) * (uint64_t)(ld > 0 ? ld : 0) + (uint64_t)rows;
    n *= elem;
    if (n >> 63) {
        *overflow = 1;
        return 0;
    }
    return (uint64_t)n;
}

void vendor_message(const char *api, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kemu: %s: %s\n", api, text);
    fflush(stderr);
}

int vendor_check_range(const char *api, const char *arg, const void *p, uint64_t bytes)
{
    if (!bytes)
        return 0;
    if (!p) {
        vendor_message(api, "argument %s is NULL", arg);
        return -1;
    }
    if ((uintptr_t)p + bytes < (uintptr_t)p || !__kemu_vendor_range(p, (size_t)bytes)) {
        vendor_message(api, "argument %s: [%p, +%llu bytes) is not inside one live device allocation", arg, p,
                       (unsigned long long)bytes);
        return -1;
    }
    return 0;
}

void vendor_mark_written(kemu_device *dev, void *p, int64_t rows, int64_t cols, int64_t ld, size_t elem)
{
    if (!dev || rows <= 0 || cols <= 0)
        return;
    uint64_t base = (uint64_t)(uintptr_t)p;
    if (ld == rows || cols == 1) {
        kemu_note_host_write(dev, base, (size_t)(rows * cols) * elem, NULL);
        return;
    }
    for (int64_t j = 0; j < cols; j++)
        kemu_note_host_write(dev, base + (uint64_t)(j * ld) * elem, (size_t)rows * elem, NULL);
}

void vendor_note_read(kemu_device *dev, const char *api, const char *arg, const void *p, int64_t rows, int64_t cols,
                      int64_t ld, size_t elem)
{
    if (!dev || !p || rows <= 0 || cols <= 0)
        return;
    char who[160];
    snprintf(who, sizeof who, "%s argument %s", api, arg);
    kemu_note_host_read(dev, (uint64_t)(uintptr_t)p, (size_t)rows * elem, (size_t)cols, (size_t)ld * elem, who, NULL);
}

/* ---- element conversions ---------------------------------------------------- */

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float vendor_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    int exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f)
        return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24 */
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return bits_float(sign | (uint32_t)(exp - 15 + 127) << 23 | (mant << 13));
}

uint16_t vendor_float_to_half(float f)
{
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t exp = (u >> 23) & 0xff;
    uint32_t mant = u & 0x7fffff;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        /* subnormal half (or zero): the value in units of 2^-24, rounded to nearest even */
        if (e < -10)
            return sign;
        uint32_t m = mant | 0x800000u;
        int shift = 14 - e; /* 24-bit significand down to the 2^-24 grid */
        uint32_t q = m >> shift;
        uint32_t rest = m & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (q & 1)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((uint32_t)e << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (q & 1)))
        q++; /* may carry into the exponent, up to infinity: right */
    return (uint16_t)(sign | q);
}

float vendor_bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

uint16_t vendor_float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float vendor_round_tf32(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return f;
    u += 0x1000u;
    u &= 0xffffe000u;
    return bits_float(u);
}

double vendor_load(const void *p, int type, size_t i)
{
    switch (type) {
    case VENDOR_R_32F: return ((const float *)p)[i];
    case VENDOR_R_64F: return ((const double *)p)[i];
    case VENDOR_R_16F: return vendor_half_to_float(((const uint16_t *)p)[i]);
    case VENDOR_R_16BF: return vendor_bf16_to_float(((const uint16_t *)p)[i]);
    default: return NAN;
    }
}

void vendor_store(void *p, int type, size_t i, double v)
{
    switch (type) {
    case VENDOR_R_32F: ((float *)p)[i] = (float)v; break;
    case VENDOR_R_64F: ((double *)p)[i] = v; break;
    case VENDOR_R_16F: ((uint16_t *)p)[i] = vendor_float_to_half((float)v); break;
    case VENDOR_R_16BF: ((uint16_t *)p)[i] = vendor_float_to_bf16((float)v); break;
    default: break;
    }
}
