/* kemu's libnccl: NCCL's element types and the reductions, in the one
 * documented order (rank 0 first, each step rounded to the element type),
 * so that results are the same bit for bit from run to run and on every
 * rank. Knows nothing of communicators or devices. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vendor/nccl_internal.h"

size_t nccl_type_size(int datatype)
{
    switch (datatype) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2:
        return 1;
    case ncclFloat16: case ncclBfloat16:
        return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32:
        return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

const char *nccl_type_name(int datatype)
{
    static const char *const names[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",    "ncclUint32",
                                        "ncclInt64",   "ncclUint64",  "ncclFloat16",  "ncclFloat32",
                                        "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
    static __thread char other[32];
    if (datatype >= 0 && datatype < (int)(sizeof names / sizeof names[0]))
        return names[datatype];
    snprintf(other, sizeof other, "datatype %d", datatype);
    return other;
}

const char *nccl_op_name(int op)
{
    static const char *const names[] = {"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg"};
    if (op >= 0 && op < ncclNumOps)
        return names[op];
    return "ncclPreMulSum";
}

/* ---- small floats: half, bfloat16, fp8 (E4M3 without infinities, E5M2) ---- */

typedef struct small_float {
    int exponent_bits, mantissa_bits, bias;
    int finite_only; /* E4M3: no infinity, S.1111.111 is NaN */
} small_float;

static const small_float HALF = {5, 10, 15, 0};
static const small_float BF16 = {8, 7, 127, 0};
static const small_float E4M3 = {4, 3, 7, 1};
static const small_float E5M2 = {5, 2, 15, 0};

static float small_to_float(const small_float *t, unsigned bits)
{
    unsigned emask = (1u << t->exponent_bits) - 1, mmask = (1u << t->mantissa_bits) - 1;
    unsigned sign = bits >> (t->exponent_bits + t->mantissa_bits) & 1;
    unsigned exponent = bits >> t->mantissa_bits & emask, mantissa = bits & mmask;
    float v;
    if (t->finite_only && exponent == emask && mantissa == mmask)
        v = NAN;
    else if (!t->finite_only && exponent == emask)
        v = mantissa ? NAN : INFINITY;
    else if (exponent == 0)
        v = ldexpf((float)mantissa, 1 - t->bias - t->mantissa_bits);
    else
        v = ldexpf((float)(mantissa | (mmask + 1)), (int)exponent - t->bias - t->mantissa_bits);
    return sign ? -v : v;
}

/* Rounds to nearest, ties to even; too large: infinity (E4M3: NaN). */
static unsigned float_to_small(const small_float *t, float f)
{
    unsigned width = (unsigned)(t->exponent_bits + t->mantissa_bits);
    unsigned sign = signbit(f) ? 1u << width : 0;
    unsigned emask = (1u << t->exponent_bits) - 1, mmask = (1u << t->mantissa_bits) - 1;
    unsigned nan = t->finite_only ? (emask << t->mantissa_bits | mmask) : (emask << t->mantissa_bits | (mmask + 1) >> 1);
    unsigned overflow = t->finite_only ? nan : emask << t->mantissa_bits;
    unsigned max_finite = t->finite_only ? (emask << t->mantissa_bits | (mmask - 1)) : ((emask - 1) << t->mantissa_bits | mmask);
    if (isnan(f))
        return sign | nan;
    float a = fabsf(f);
    if (isinf(a))
        return sign | overflow;
    if (a == 0)
        return sign;
    int e2;
    frexpf(a, &e2);
    int exponent = e2 - 1, min_exponent = 1 - t->bias;
    if (exponent < min_exponent)
        exponent = min_exponent;
    if (exponent > 200)
        return sign | overflow;
    float steps = rintf(ldexpf(a, t->mantissa_bits - exponent)); /* exact scaling, then ties to even */
    long long code = ((long long)(exponent + t->bias) << t->mantissa_bits) + (long long)steps - (1ll << t->mantissa_bits);
    if (code > (long long)max_finite)
        return sign | overflow;
    return sign | (unsigned)code;
}

/* ---- the reductions ------------------------------------------------------- */

#define PREMUL NCCL_REDUCTION_PREMULSUM

/* Integers: arithmetic in the unsigned type of the same width (wraps). */
#define INTEGER_REDUCE(NAME, T, U)                                                                              \
    static void reduce_##NAME(int op, const unsigned char (*scalars)[8], void *out, const void *const *inputs, \
                              int n, size_t count)                                                              \
    {                                                                                                           \
        T *o = out;                                                                                             \
        for (size_t i = 0; i < count; i++) {                                                                    \
            T acc = 0;                                                                                          \
            for (int r = 0; r < n; r++) {                                                                       \
                T v = ((const T *)inputs[r])[i];                                                                \
                if (op == PREMUL) {                                                                             \
                    T s;                                                                                        \
                    memcpy(&s, scalars[r], sizeof s);                                                           \
                    v = (T)((U)v * (U)s);                                                                       \
                }                                                                                               \
                if (r == 0)                                                                                     \
                    acc = v;                                                                                    \
                else if (op == ncclProd)                                                                        \
                    acc = (T)((U)acc * (U)v);                                                                   \
                else if (op == ncclMax)                                                                         \
                    acc = v > acc ? v : acc;                                                                    \
                else if (op == ncclMin)                                                                         \
                    acc = v < acc ? v : acc;                                                                    \
                else                                                                                            \
                    acc = (T)((U)acc + (U)v);                                                                   \
            }                                                                                                   \
            if (op == ncclAvg)                                                                                  \
                acc = (T)(acc / (T)n);                                                                          \
            o[i] = acc;                                                                                         \
        }                                                                                                       \
    }

INTEGER_REDUCE(int8, int8_t, uint8_t)
INTEGER_REDUCE(uint8, uint8_t, uint8_t)
INTEGER_REDUCE(int32, int32_t, uint32_t)
INTEGER_REDUCE(uint32, uint32_t, uint32_t)
INTEGER_REDUCE(int64, int64_t, uint64_t)
INTEGER_REDUCE(uint64, uint64_t, uint64_t)

/* One step of a floating-point reduction in float or double. */
#define FLOAT_STEP(op, acc, v)                                                                       \
    ((op) == ncclProd  ? (acc) * (v)                                                                 \
     : (op) == ncclMax ? (isnan(acc) ? (acc) : isnan(v) ? (v) : (v) > (acc) ? (v) : (acc))           \
     : (op) == ncclMin ? (isnan(acc) ? (acc) : isnan(v) ? (v) : (v) < (acc) ? (v) : (acc))           \
                       : (acc) + (v))

#define NATIVE_FLOAT_REDUCE(NAME, T)                                                                            \
    static void reduce_##NAME(int op, const unsigned char (*scalars)[8], void *out, const void *const *inputs, \
                              int n, size_t count)                                                              \
    {                                                                                                           \
        T *o = out;                                                                                             \
        for (size_t i = 0; i < count; i++) {                                                                    \
            T acc = 0;                                                                                          \
            for (int r = 0; r < n; r++) {                                                                       \
                T v = ((const T *)inputs[r])[i];                                                                \
                if (op == PREMUL) {                                                                             \
                    T s;                                                                                        \
                    memcpy(&s, scalars[r], sizeof s);                                                           \
                    v = v * s;                                                                                  \
                }                                                                                               \
                acc = r == 0 ? v : FLOAT_STEP(op, acc, v);                                                      \
            }                                                                                                   \
            if (op == ncclAvg)                                                                                  \
                acc = acc / (T)n;                                                                               \
            o[i] = acc;                                                                                         \
        }                                                                                                       \
    }

NATIVE_FLOAT_REDUCE(float32, float)
NATIVE_FLOAT_REDUCE(float64, double)

/* half, bfloat16, fp8: each value to float, each step rounded back. */
static void reduce_small(const small_float *t, int op, const unsigned char (*scalars)[8], void *out,
                         const void *const *inputs, int n, size_t count)
{
    size_t size = t->exponent_bits + t->mantissa_bits + 1 > 8 ? 2 : 1;
#define SMALL_LOAD(p, i) (size == 2 ? (unsigned)((const uint16_t *)(p))[i] : (unsigned)((const uint8_t *)(p))[i])
#define SMALL_ROUND(x) small_to_float(t, float_to_small(t, (x)))
    for (size_t i = 0; i < count; i++) {
        float acc = 0;
        for (int r = 0; r < n; r++) {
            float v = small_to_float(t, SMALL_LOAD(inputs[r], i));
            if (op == PREMUL)
                v = SMALL_ROUND(v * small_to_float(t, SMALL_LOAD(scalars[r], 0)));
            acc = r == 0 ? v : SMALL_ROUND(FLOAT_STEP(op, acc, v));
        }
        if (op == ncclAvg)
            acc = SMALL_ROUND(acc / (float)n);
        unsigned bits = float_to_small(t, acc);
        if (size == 2)
            ((uint16_t *)out)[i] = (uint16_t)bits;
        else
            ((uint8_t *)out)[i] = (uint8_t)bits;
    }
#undef SMALL_LOAD
#undef SMALL_ROUND
}

/* Sum and avg of the native types, the common case, rank by rank over
 * chunks (the loops vectorize): each element still adds rank 0, then 1,
 * ..., so the bits are the element-by-element loop's. A chunk is read
 * whole before it is written, so out may be one of the inputs. */
#define SUM_CHUNK 1024
#define NATIVE_SUM(NAME, T, U)                                                                       \
    static void sum_##NAME(int op, void *out, const void *const *inputs, int n, size_t count)       \
    {                                                                                                \
        T acc[SUM_CHUNK];                                                                            \
        for (size_t at = 0; at < count; at += SUM_CHUNK) {                                           \
            size_t m = count - at < SUM_CHUNK ? count - at : SUM_CHUNK;                              \
            memcpy(acc, (const T *)inputs[0] + at, m * sizeof(T));                                   \
            for (int r = 1; r < n; r++) {                                                            \
                const T *in = (const T *)inputs[r] + at;                                             \
                for (size_t k = 0; k < m; k++)                                                       \
                    acc[k] = (T)((U)acc[k] + (U)in[k]);                                              \
            }                                                                                        \
            if (op == ncclAvg)                                                                       \
                for (size_t k = 0; k < m; k++)                                                       \
                    acc[k] = (T)(acc[k] / (T)n);                                                     \
            memcpy((T *)out + at, acc, m * sizeof(T));                                               \
        }                                                                                            \
    }
NATIVE_SUM(int32, int32_t, uint32_t)
NATIVE_SUM(uint32, uint32_t, uint32_t)
NATIVE_SUM(int64, int64_t, uint64_t)
NATIVE_SUM(uint64, uint64_t, uint64_t)
NATIVE_SUM(float32, float, float)
NATIVE_SUM(float64, double, double)

void nccl_reduce(int op, int datatype, const unsigned char (*scalars)[8], void *out, const void *const *inputs, int n,
                 size_t count)
{
    if ((op == ncclSum || op == ncclAvg) && n > 0) {
        switch (datatype) {
        case ncclInt32: sum_int32(op, out, inputs, n, count); return;
        case ncclUint32: sum_uint32(op, out, inputs, n, count); return;
        case ncclInt64: sum_int64(op, out, inputs, n, count); return;
        case ncclUint64: sum_uint64(op, out, inputs, n, count); return;
        case ncclFloat32: sum_float32(op, out, inputs, n, count); return;
        case ncclFloat64: sum_float64(op, out, inputs, n, count); return;
        default: break;
        }
    }
    switch (datatype) {
    case ncclInt8: reduce_int8(op, scalars, out, inputs, n, count); break;
    case ncclUint8: reduce_uint8(op, scalars, out, inputs, n, count); break;
    case ncclInt32: reduce_int32(op, scalars, out, inputs, n, count); break;
    case ncclUint32: reduce_uint32(op, scalars, out, inputs, n, count); break;
    case ncclInt64: reduce_int64(op, scalars, out, inputs, n, count); break;
    case ncclUint64: reduce_uint64(op, scalars, out, inputs, n, count); break;
    case ncclFloat32: reduce_float32(op, scalars, out, inputs, n, count); break;
    case ncclFloat64: reduce_float64(op, scalars, out, inputs, n, count); break;
    case ncclFloat16: reduce_small(&HALF, op, scalars, out, inputs, n, count); break;
    case ncclBfloat16: reduce_small(&BF16, op, scalars, out, inputs, n, count); break;
    case ncclFloat8e4m3: reduce_small(&E4M3, op, scalars, out, inputs, n, count); break;
    case ncclFloat8e5m2: reduce_small(&E5M2, op, scalars, out, inputs, n, count); break;
    default: break;
    }
}
