/* kemu's libcurand.so.10: cuRAND's host API for programs run by `kemu exec`.
 * NVIDIA's libcurand runs its generators as SASS kernels inside its own
 * statically linked runtime, which kemu cannot run; this library computes
 * the same arrangement of device-API sequences on the CPU and stores it into
 * the emulated device's memory through the public CUDA runtime API
 * (cudaPointerGetAttributes, cudaMemcpyAsync), looked up in whichever
 * libcudart the program loaded (kemu's), so that the checkers see the
 * store as a host-to-device copy. The bit generators are in
 * curand_engines.c; this file owns the API, the orderings, the
 * distributions and the checks. It must not reach into kemu's internals.
 *
 * The arrangement (docs/cudart.md, "cuRAND"): for XORWOW, MRG32k3a and
 * Philox4x32-10 with the pseudorandom orderings DEFAULT, BEST, LEGACY and
 * DYNAMIC, result n of the sequence comes from "thread" n mod 4096 of the
 * generator, at position floor(n / 4096) of that thread's stream, the
 * thread's stream being the device API's curand_init(seed, thread, 0)
 * (cuRAND's documentation: position (n mod 4096) * 2^67 + floor(n / 4096)
 * of XORWOW's sequence, 2^76 for MRG32k3a, 2^66 for Philox). A result that
 * needs several 32-bit draws (a double, a Box-Muller pair) takes them
 * consecutively from one thread, as the device API's functions do; the
 * documentation does not pin that down, nor how the offset and successive
 * calls continue for such results: see the comments at `slot_units` and
 * `generate_poisson`. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vendor/curand_engines.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CURAND_API __attribute__((visibility("default")))

/* ---- the ABI (numbers from cuRAND's documentation) ---------------------------- */

typedef enum curandStatus {
    CURAND_STATUS_SUCCESS = 0,
    CURAND_STATUS_VERSION_MISMATCH = 100,
    CURAND_STATUS_NOT_INITIALIZED = 101,
    CURAND_STATUS_ALLOCATION_FAILED = 102,
    CURAND_STATUS_TYPE_ERROR = 103,
    CURAND_STATUS_OUT_OF_RANGE = 104,
    CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
    CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
    CURAND_STATUS_LAUNCH_FAILURE = 201,
    CURAND_STATUS_PREEXISTING_FAILURE = 202,
    CURAND_STATUS_INITIALIZATION_FAILED = 203,
    CURAND_STATUS_ARCH_MISMATCH = 204,
    CURAND_STATUS_INTERNAL_ERROR = 999
} curandStatus_t;

enum {
    CURAND_RNG_TEST = 0,
    CURAND_RNG_PSEUDO_DEFAULT = 100,
    CURAND_RNG_PSEUDO_XORWOW = 101,
    CURAND_RNG_PSEUDO_MRG32K3A = 121,
    CURAND_RNG_PSEUDO_MTGP32 = 141,
    CURAND_RNG_PSEUDO_MT19937 = 142,
    CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
    CURAND_RNG_QUASI_DEFAULT = 200,
    CURAND_RNG_QUASI_SOBOL32 = 201,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
    CURAND_RNG_QUASI_SOBOL64 = 203,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL64 = 204
};

enum {
    CURAND_ORDERING_PSEUDO_BEST = 100,
    CURAND_ORDERING_PSEUDO_DEFAULT = 101,
    CURAND_ORDERING_PSEUDO_SEEDED = 102,
    CURAND_ORDERING_PSEUDO_LEGACY = 103,
    CURAND_ORDERING_PSEUDO_DYNAMIC = 104,
    CURAND_ORDERING_QUASI_DEFAULT = 201
};

enum { LIBRARY_MAJOR_VERSION = 0, LIBRARY_MINOR_VERSION = 1, LIBRARY_PATCH_LEVEL = 2 };
enum { CURAND_VERSION_MAJOR = 10, CURAND_VERSION_MINOR = 4, CURAND_VERSION_PATCH = 0 };

/* the CUDA runtime's numbers this file uses */
enum { CUDA_MEMORY_TYPE_UNREGISTERED = 0, CUDA_MEMCPY_DEFAULT = 4 };

#define THREADS 4096 /* the generator's "threads" in the documented arrangement */
#define GENERATOR_MAGIC 0x6b656d7563726e64ull

typedef struct curandGenerator_st {
    uint64_t magic;
    int type;         /* CURAND_RNG_PSEUDO_XORWOW, _MRG32K3A or _PHILOX4_32_10 */
    int host;         /* created by curandCreateGeneratorHost */
    int ordering;
    void *stream;     /* cudaStream_t */
    uint64_t seed;
    uint64_t offset;  /* as set by curandSetGeneratorOffset */
    uint64_t position;/* the next arrangement position, in 32-bit draws */
    struct curandGenerator_st *next_live;
} curandGenerator_st;
typedef curandGenerator_st *curandGenerator_t;

/* ---- the generators that exist (so that a stale or foreign handle is refused) ---- */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static curandGenerator_st *live;

static int generator_valid(curandGenerator_t g)
{
    if (!g)
        return 0;
    pthread_mutex_lock(&live_lock);
    curandGenerator_st *p = live;
    while (p && p != g)
        p = p->next_live;
    pthread_mutex_unlock(&live_lock);
    return p && p->magic == GENERATOR_MAGIC;
}

/* ---- the CUDA runtime, looked up in the program's libcudart ------------------- */

typedef int (*pointer_attributes_fn)(void *attributes, const void *ptr);
typedef int (*memcpy_async_fn)(void *dst, const void *src, size_t count, int kind, void *stream);
typedef int (*stream_sync_fn)(void *stream);
typedef int (*stream_capturing_fn)(void *stream, int *status);

static struct {
    pthread_once_t once;
    pointer_attributes_fn pointer_attributes;
    memcpy_async_fn memcpy_async;
    stream_sync_fn stream_sync;
    stream_capturing_fn stream_capturing;
} cuda = {PTHREAD_ONCE_INIT, NULL, NULL, NULL, NULL};

static void cuda_lookup(void)
{
    void *p = dlsym(RTLD_DEFAULT, "cudaPointerGetAttributes");
    memcpy(&cuda.pointer_attributes, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "cudaMemcpyAsync");
    memcpy(&cuda.memcpy_async, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "cudaStreamSynchronize");
    memcpy(&cuda.stream_sync, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "cudaStreamIsCapturing");
    memcpy(&cuda.stream_capturing, &p, sizeof p);
}

static int cuda_available(void)
{
    pthread_once(&cuda.once, cuda_lookup);
    return cuda.pointer_attributes && cuda.memcpy_async && cuda.stream_sync && cuda.stream_capturing;
}

/* ---- one "thread" of the arrangement: a device-API stream ----------------------- */

typedef struct stream {
    int type;
    union {
        curand_xorwow x;
        curand_mrg m;
        curand_philox p;
    } s;
    int has_extra_double; /* a cached second Box-Muller double (Poisson, large lambda) */
    double extra_double;
    uint64_t used; /* draws taken since stream_init */
} stream;

static void stream_init(stream *st, const curandGenerator_st *g, uint64_t thread, uint64_t draws)
{
    st->type = g->type;
    st->has_extra_double = 0;
    st->used = 0;
    if (g->type == CURAND_RNG_PSEUDO_MRG32K3A)
        curand_mrg_init(&st->s.m, g->seed, thread, draws);
    else if (g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10)
        curand_philox_init(&st->s.p, g->seed, thread, draws);
    else
        curand_xorwow_init(&st->s.x, g->seed, thread, draws);
}

static double next_mrg(stream *st)
{
    st->used++;
    return curand_mrg_next_raw(&st->s.m);
}

static uint32_t next_bits(stream *st)
{
    st->used++;
    if (st->type == CURAND_RNG_PSEUDO_MRG32K3A)
        return curand_mrg_next(&st->s.m);
    if (st->type == CURAND_RNG_PSEUDO_PHILOX4_32_10)
        return curand_philox_next(&st->s.p);
    return curand_xorwow_next(&st->s.x);
}

/* the device API's conversions (curand_uniform.h, curand_normal.h), with the
 * fused multiply-adds that nvcc makes of them */
#define INV32F 2.3283064e-10f             /* 2^-32 as a float */
#define INV32F_2PI (2.3283064e-10f * 6.2831855f)
#define INV53 1.1102230246251565e-16      /* 2^-53 */

static float uniform_from_bits(uint32_t x)
{
    return fmaf((float)x, INV32F, INV32F / 2.0f);
}

static double uniform_double_from_bits(uint32_t x, uint32_t y)
{
    uint64_t z = (uint64_t)x ^ ((uint64_t)y << 21);
    return fma((double)z, INV53, INV53 / 2.0);
}

static float next_uniform(stream *st)
{
    if (st->type == CURAND_RNG_PSEUDO_MRG32K3A)
        return (float)(next_mrg(st) * CURAND_MRG_NORM);
    return uniform_from_bits(next_bits(st));
}

static double next_uniform_double(stream *st)
{
    if (st->type == CURAND_RNG_PSEUDO_MRG32K3A)
        return next_mrg(st) * CURAND_MRG_NORM;
    if (st->type == CURAND_RNG_PSEUDO_PHILOX4_32_10) /* one draw, as the device API's curand_uniform_double */
        return fma((double)next_bits(st), 2.3283064365386963e-10, 2.3283064365386963e-10);
    uint32_t x = next_bits(st);
    uint32_t y = next_bits(st);
    return uniform_double_from_bits(x, y);
}

/* Box-Muller pairs. The device uses __sincosf / sincospi; this library uses
 * libm's sinf/cosf and sin/cos, so the values agree with the device API's
 * to a few units in the last place, not bit for bit (docs/cudart.md). */
static void next_normal_pair(stream *st, float out[2])
{
    float u, v;
    if (st->type == CURAND_RNG_PSEUDO_MRG32K3A) {
        u = next_uniform(st);
        v = next_uniform(st) * 6.2831855f;
    } else {
        uint32_t x = next_bits(st);
        uint32_t y = next_bits(st);
        u = fmaf((float)x, INV32F, INV32F / 2.0f);
        v = fmaf((float)y, INV32F_2PI, INV32F_2PI / 2.0f);
    }
    float s = sqrtf(-2.0f * logf(u));
    out[0] = sinf(v) * s;
    out[1] = cosf(v) * s;
}

static void next_normal_double_pair(stream *st, double out[2])
{
    double u, v;
    if (st->type == CURAND_RNG_PSEUDO_MRG32K3A) {
        u = next_uniform_double(st);
        v = next_uniform_double(st) * 2.0;
    } else {
        uint32_t x0 = next_bits(st), x1 = next_bits(st), y0 = next_bits(st), y1 = next_bits(st);
        u = uniform_double_from_bits(x0, x1);
        uint64_t zy = (uint64_t)y0 ^ ((uint64_t)y1 << 21);
        v = fma((double)zy, INV53 * 2.0, INV53);
    }
    double s = sqrt(-2.0 * log(u));
    out[0] = sin(v * 3.1415926535897932) * s;
    out[1] = cos(v * 3.1415926535897932) * s;
}

/* one Poisson value as the device API's curand_poisson draws it for lambda
 * below 64 (Knuth's product of uniforms) and above 4000 (rounded normal
 * approximation); between, kemu inverts the distribution function by
 * sequential search from one 32-bit draw (Fishman's method, in steps of
 * e^-500 so that large lambda does not underflow) where the device API uses
 * a rejection method: those values are Poisson distributed but are not the
 * device API's. */
static unsigned int next_poisson(stream *st, double lambda)
{
    if (lambda < 64) {
        unsigned int k = 0;
        float p = expf((float)lambda);
        do {
            k++;
            p *= next_uniform(st);
        } while (p > 1.0);
        return k - 1;
    }
    if (lambda > 4000) {
        double z;
        if (st->has_extra_double) {
            st->has_extra_double = 0;
            z = st->extra_double;
        } else {
            double pair[2];
            next_normal_double_pair(st, pair);
            st->has_extra_double = 1;
            st->extra_double = pair[1];
            z = pair[0];
        }
        return (unsigned int)(sqrt(lambda) * z + lambda + 0.5);
    }
    double u = next_bits(st) * 2.3283064365386963e-10 + 2.3283064365386963e-10 / 2.0;
    double p = 1.0, q = 1.0;
    unsigned int k = 0;
    int done = 0; /* how much of lambda's weight e^-lambda has been applied */
    do {
        double l = lambda > done + 500.0 ? exp(-500.0) : exp(done - lambda);
        p *= l;
        q *= l;
        done += 500;
        while (u > q) {
            k++;
            p *= lambda / k;
            q += p;
        }
    } while (done < lambda);
    return k;
}

/* ---- messages -------------------------------------------------------------------- */

static curandStatus_t complain(curandStatus_t status, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#include <stdarg.h>
static curandStatus_t complain(curandStatus_t status, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kemu: %s: ", fn);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

static const char *type_name(int type)
{
    switch (type) {
    case CURAND_RNG_TEST: return "CURAND_RNG_TEST";
    case CURAND_RNG_PSEUDO_MTGP32: return "CURAND_RNG_PSEUDO_MTGP32";
    case CURAND_RNG_PSEUDO_MT19937: return "CURAND_RNG_PSEUDO_MT19937";
    case CURAND_RNG_QUASI_DEFAULT: return "CURAND_RNG_QUASI_DEFAULT (Sobol32)";
    case CURAND_RNG_QUASI_SOBOL32: return "CURAND_RNG_QUASI_SOBOL32";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL32";
    case CURAND_RNG_QUASI_SOBOL64: return "CURAND_RNG_QUASI_SOBOL64";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL64";
    default: return NULL;
    }
}

/* ---- generators ------------------------------------------------------------------- */

static curandStatus_t create(curandGenerator_t *out, int type, int host, const char *fn)
{
    if (!out)
        return complain(CURAND_STATUS_NOT_INITIALIZED, fn, "the generator pointer is NULL");
    if (type == CURAND_RNG_PSEUDO_DEFAULT)
        type = CURAND_RNG_PSEUDO_XORWOW;
    if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_MRG32K3A &&
        type != CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        const char *name = type_name(type);
        if (name)
            return complain(CURAND_STATUS_TYPE_ERROR, fn, "%s is not supported yet (kemu provides XORWOW, "
                            "MRG32k3a and Philox4x32-10)", name);
        return complain(CURAND_STATUS_TYPE_ERROR, fn, "%d is not a cuRAND generator type", type);
    }
    if (!host && !cuda_available())
        return complain(CURAND_STATUS_INITIALIZATION_FAILED, fn, "the program has no CUDA runtime loaded");
    curandGenerator_st *g = calloc(1, sizeof *g);
    if (!g)
        return CURAND_STATUS_ALLOCATION_FAILED;
    g->magic = GENERATOR_MAGIC;
    g->type = type;
    g->host = host;
    g->ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
    pthread_mutex_lock(&live_lock);
    g->next_live = live;
    live = g;
    pthread_mutex_unlock(&live_lock);
    *out = g;
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandCreateGenerator(curandGenerator_t *generator, int rng_type)
{
    return create(generator, rng_type, 0, "curandCreateGenerator");
}

CURAND_API curandStatus_t curandCreateGeneratorHost(curandGenerator_t *generator, int rng_type)
{
    return create(generator, rng_type, 1, "curandCreateGeneratorHost");
}

CURAND_API curandStatus_t curandDestroyGenerator(curandGenerator_t generator)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    pthread_mutex_lock(&live_lock);
    for (curandGenerator_st **p = &live; *p; p = &(*p)->next_live)
        if (*p == generator) {
            *p = generator->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    generator->magic = 0;
    free(generator);
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandGetVersion(int *version)
{
    if (!version)
        return CURAND_STATUS_OUT_OF_RANGE;
    *version = CURAND_VERSION_MAJOR * 1000 + CURAND_VERSION_MINOR * 100 + CURAND_VERSION_PATCH;
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandGetProperty(int type, int *value)
{
    if (!value)
        return CURAND_STATUS_OUT_OF_RANGE;
    switch (type) {
    case LIBRARY_MAJOR_VERSION: *value = CURAND_VERSION_MAJOR; return CURAND_STATUS_SUCCESS;
    case LIBRARY_MINOR_VERSION: *value = CURAND_VERSION_MINOR; return CURAND_STATUS_SUCCESS;
    case LIBRARY_PATCH_LEVEL: *value = CURAND_VERSION_PATCH; return CURAND_STATUS_SUCCESS;
    default: return CURAND_STATUS_OUT_OF_RANGE;
    }
}

CURAND_API curandStatus_t curandSetStream(curandGenerator_t generator, void *stream)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    generator->stream = stream;
    return CURAND_STATUS_SUCCESS;
}

/* Setting the seed, the offset or the ordering restarts the sequence at the
 * offset (cuRAND: the offset is absolute, not relative to the current
 * position). */
CURAND_API curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    generator->seed = seed;
    generator->position = generator->offset;
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    generator->offset = offset;
    generator->position = offset;
    return CURAND_STATUS_SUCCESS;
}

/* DEFAULT, BEST, LEGACY and DYNAMIC give the one documented arrangement
 * (kemu has one device, so DYNAMIC's "adjusted to the device" is that
 * too). cuRAND does not document how SEEDED seeds its threads, so no
 * program can rely on its values: kemu gives the default arrangement for
 * it. */
CURAND_API curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, int order)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    switch (order) {
    case CURAND_ORDERING_PSEUDO_SEEDED:
    case CURAND_ORDERING_PSEUDO_BEST:
    case CURAND_ORDERING_PSEUDO_DEFAULT:
    case CURAND_ORDERING_PSEUDO_LEGACY:
    case CURAND_ORDERING_PSEUDO_DYNAMIC:
        generator->ordering = order;
        generator->position = generator->offset;
        return CURAND_STATUS_SUCCESS;
    default:
        return CURAND_STATUS_OUT_OF_RANGE;
    }
}

CURAND_API curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator,
                                                                 unsigned int num_dimensions)
{
    (void)num_dimensions;
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    return CURAND_STATUS_TYPE_ERROR; /* every generator kemu makes is pseudorandom */
}

CURAND_API curandStatus_t curandGenerateSeeds(curandGenerator_t generator)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    return CURAND_STATUS_SUCCESS; /* the thread states are computed when they are needed */
}

/* ---- generation --------------------------------------------------------------------- */

typedef enum kind { BITS, UNIFORM, UNIFORM_DOUBLE, NORMAL, NORMAL_DOUBLE, LOG_NORMAL, LOG_NORMAL_DOUBLE } kind;

/* How many consecutive 32-bit draws (MRG32k3a: steps) of one thread make a
 * slot of the arrangement, and how many results a slot holds. A call
 * starts at the generator's position rounded up to a whole slot: slot s
 * is thread s mod 4096, draws [r * floor(s / 4096), r * floor(s / 4096) + r)
 * of that thread. With the position at 0 (a new generator, offset 0) that
 * is exactly the device API's sequence of thread s mod 4096 called
 * floor(s / 4096) + 1 times; the documentation says nothing of how a
 * multi-draw result or a later call lines up, and this is kemu's reading. */
static void slot_units(const curandGenerator_st *g, kind k, unsigned *draws, unsigned *results)
{
    int mrg = g->type == CURAND_RNG_PSEUDO_MRG32K3A;
    switch (k) {
    case BITS: case UNIFORM: *draws = 1; *results = 1; break;
    case UNIFORM_DOUBLE: *draws = g->type == CURAND_RNG_PSEUDO_XORWOW ? 2 : 1; *results = 1; break;
    case NORMAL: case LOG_NORMAL: *draws = 2; *results = 2; break;
    default: *draws = mrg ? 2 : 4; *results = 2; break;
    }
}

static void fill(curandGenerator_st *g, kind k, void *out, size_t n, double mean, double stddev)
{
    unsigned draws, per;
    slot_units(g, k, &draws, &per);
    uint64_t first = (g->position + draws - 1) / draws;
    size_t slots = n / per;
    size_t threads = slots < THREADS ? slots : THREADS;
    for (size_t i = 0; i < threads; i++) {
        uint64_t s = first + i;
        uint64_t thread = s % THREADS;
        stream st;
        stream_init(&st, g, thread, (s / THREADS) * draws);
        for (size_t j = i; j < slots; j += THREADS) {
            switch (k) {
            case BITS: ((uint32_t *)out)[j] = next_bits(&st); break;
            case UNIFORM: ((float *)out)[j] = next_uniform(&st); break;
            case UNIFORM_DOUBLE: ((double *)out)[j] = next_uniform_double(&st); break;
            case NORMAL:
            case LOG_NORMAL: {
                float pair[2];
                next_normal_pair(&st, pair);
                for (int h = 0; h < 2; h++) {
                    float v = fmaf((float)stddev, pair[h], (float)mean);
                    ((float *)out)[2 * j + h] = k == LOG_NORMAL ? expf(v) : v;
                }
                break;
            }
            default: {
                double pair[2];
                next_normal_double_pair(&st, pair);
                for (int h = 0; h < 2; h++) {
                    double v = fma(stddev, pair[h], mean);
                    ((double *)out)[2 * j + h] = k == LOG_NORMAL_DOUBLE ? exp(v) : v;
                }
                break;
            }
            }
        }
    }
    g->position = (first + slots) * draws;
}

/* Checks the output of a device generator and stores `bytes` of results
 * there: the pointer must be memory the device can write (device, managed,
 * or pinned host memory, which a kernel reaches through unified
 * addressing), aligned for its element, and the range must lie in one
 * allocation (cudaMemcpyAsync refuses it otherwise). A program that passes
 * ordinary host memory to a device generator gets
 * CURAND_STATUS_LAUNCH_FAILURE, as the faulting kernel of NVIDIA's library
 * would give it. */
static curandStatus_t check_output(const curandGenerator_st *g, const void *out, size_t align, const char *fn)
{
    if (!out)
        return complain(CURAND_STATUS_LAUNCH_FAILURE, fn, "the output pointer is NULL");
    if ((uintptr_t)out % align)
        return complain(CURAND_STATUS_LAUNCH_FAILURE, fn, "the output %p is not aligned to %zu bytes", out, align);
    if (g->host)
        return CURAND_STATUS_SUCCESS;
    _Alignas(16) unsigned char attributes[256];
    memset(attributes, 0, sizeof attributes);
    int type = 0;
    if (cuda.pointer_attributes(attributes, out) == 0)
        memcpy(&type, attributes, sizeof type);
    /* the results are stored by a copy from a buffer freed on return: it
     * cannot become a node of a graph being captured */
    int capturing = 0;
    if (cuda.stream_capturing(g->stream, &capturing) == 0 && capturing)
        return complain(CURAND_STATUS_LAUNCH_FAILURE, fn, "generating into a stream that is being captured is not "
                        "supported yet");
    if (type == CUDA_MEMORY_TYPE_UNREGISTERED)
        return complain(CURAND_STATUS_LAUNCH_FAILURE, fn,
                        "the output %p is not device memory (a generator made by curandCreateGenerator writes device "
                        "memory; curandCreateGeneratorHost makes one that writes host memory)", out);
    return CURAND_STATUS_SUCCESS;
}

static curandStatus_t store(const curandGenerator_st *g, void *out, const void *results, size_t bytes, const char *fn)
{
    if (cuda.memcpy_async(out, results, bytes, CUDA_MEMCPY_DEFAULT, g->stream) ||
        cuda.stream_sync(g->stream))
        return complain(CURAND_STATUS_LAUNCH_FAILURE, fn,
                        "the output range [%p, +%zu bytes) does not lie in one device allocation", out, bytes);
    return CURAND_STATUS_SUCCESS;
}

static curandStatus_t generate(curandGenerator_t g, kind k, void *out, size_t n, size_t elem, double mean,
                               double stddev, const char *fn)
{
    if (!generator_valid(g))
        return CURAND_STATUS_NOT_INITIALIZED;
    if ((k == NORMAL || k == NORMAL_DOUBLE || k == LOG_NORMAL || k == LOG_NORMAL_DOUBLE) && n % 2)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE; /* Box-Muller makes pairs */
    curandStatus_t st = check_output(g, out, elem, fn);
    if (st || !n)
        return st;
    if (n > SIZE_MAX / elem)
        return CURAND_STATUS_ALLOCATION_FAILED;
    void *results = g->host ? out : malloc(n * elem);
    if (!results)
        return CURAND_STATUS_ALLOCATION_FAILED;
    uint64_t position = g->position;
    fill(g, k, results, n, mean, stddev);
    if (!g->host) {
        st = store(g, out, results, n * elem, fn);
        free(results);
        if (st) /* nothing was generated */
            g->position = position;
    }
    return st;
}

CURAND_API curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int *outputPtr, size_t num)
{
    return generate(generator, BITS, outputPtr, num, sizeof *outputPtr, 0, 0, "curandGenerate");
}

CURAND_API curandStatus_t curandGenerateLongLong(curandGenerator_t generator, unsigned long long *outputPtr,
                                                 size_t num)
{
    (void)outputPtr, (void)num;
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    /* only 64-bit quasirandom generators (Sobol64) make 64-bit results */
    return CURAND_STATUS_TYPE_ERROR;
}

CURAND_API curandStatus_t curandGenerateUniform(curandGenerator_t generator, float *outputPtr, size_t num)
{
    return generate(generator, UNIFORM, outputPtr, num, sizeof *outputPtr, 0, 0, "curandGenerateUniform");
}

CURAND_API curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double *outputPtr, size_t num)
{
    return generate(generator, UNIFORM_DOUBLE, outputPtr, num, sizeof *outputPtr, 0, 0,
                    "curandGenerateUniformDouble");
}

CURAND_API curandStatus_t curandGenerateNormal(curandGenerator_t generator, float *outputPtr, size_t n, float mean,
                                               float stddev)
{
    return generate(generator, NORMAL, outputPtr, n, sizeof *outputPtr, mean, stddev, "curandGenerateNormal");
}

CURAND_API curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double *outputPtr, size_t n,
                                                     double mean, double stddev)
{
    return generate(generator, NORMAL_DOUBLE, outputPtr, n, sizeof *outputPtr, mean, stddev,
                    "curandGenerateNormalDouble");
}

CURAND_API curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float *outputPtr, size_t n,
                                                  float mean, float stddev)
{
    return generate(generator, LOG_NORMAL, outputPtr, n, sizeof *outputPtr, mean, stddev,
                    "curandGenerateLogNormal");
}

CURAND_API curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t generator, double *outputPtr, size_t n,
                                                        double mean, double stddev)
{
    return generate(generator, LOG_NORMAL_DOUBLE, outputPtr, n, sizeof *outputPtr, mean, stddev,
                    "curandGenerateLogNormalDouble");
}

/* Poisson values take a varying number of draws. Every thread starts at the
 * first whole row of the arrangement at or after the generator's position
 * (draw ceil(position / 4096) of its stream) and draws its values in turn:
 * value i is thread i mod 4096's value number floor(i / 4096). The
 * position then moves past the longest thread's draws. At position 0 this
 * is the device API's curand_poisson called in turn on
 * curand_init(seed, thread, 0); the rest is kemu's reading. */
static void generate_poisson(curandGenerator_st *g, unsigned int *out, size_t n, double lambda)
{
    uint64_t row = (g->position + THREADS - 1) / THREADS;
    uint64_t longest = 0;
    size_t threads = n < THREADS ? n : THREADS;
    for (size_t t = 0; t < threads; t++) {
        stream st;
        stream_init(&st, g, t, row);
        for (size_t i = t; i < n; i += THREADS)
            out[i] = next_poisson(&st, lambda);
        if (st.used > longest)
            longest = st.used;
    }
    g->position = (row + longest) * THREADS;
}

CURAND_API curandStatus_t curandGeneratePoisson(curandGenerator_t generator, unsigned int *outputPtr, size_t n,
                                                double lambda)
{
    const char *fn = "curandGeneratePoisson";
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!(lambda > 0) || lambda > 400000)
        return CURAND_STATUS_OUT_OF_RANGE;
    curandStatus_t st = check_output(generator, outputPtr, sizeof *outputPtr, fn);
    if (st || !n)
        return st;
    if (n > SIZE_MAX / sizeof *outputPtr)
        return CURAND_STATUS_ALLOCATION_FAILED;
    unsigned int *results = generator->host ? outputPtr : malloc(n * sizeof *results);
    if (!results)
        return CURAND_STATUS_ALLOCATION_FAILED;
    uint64_t position = generator->position;
    generate_poisson(generator, results, n, lambda);
    if (!generator->host) {
        st = store(generator, outputPtr, results, n * sizeof *results, fn);
        free(results);
        if (st) /* nothing was generated */
            generator->position = position;
    }
    return st;
}
