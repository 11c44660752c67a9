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
 * of XORWOW's sequence, 2^76 for MRG32k3a, 2^66 for Philox); NVIDIA's
 * library, run during development, uses other thread counts for MRG32k3a
 * and Philox (see `arrangement`), and kemu follows it. A result that
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

#define MT_GENERATORS 8192 /* MT19937: generators, 2^2048 steps apart */
#define MT_ROW (MT_GENERATORS * 8) /* values of one row: 8 from each generator */
#define MT_BLOCK_ROWS 78           /* rows that one twist of 624 words makes */
#define MTGP_BLOCKS 192            /* MTGP32: streams (CUDA blocks), one parameter set each */
#define MTGP_ROW (MTGP_BLOCKS * CURAND_MTGP32_ROUND) /* values of one round of all streams */

typedef struct curandGenerator_st {
    uint64_t magic;
    int type;         /* a CURAND_RNG_* kemu implements (DEFAULT resolved) */
    int host;         /* created by curandCreateGeneratorHost */
    int ordering;
    void *stream;     /* cudaStream_t */
    uint64_t seed;
    uint64_t offset;  /* as set by curandSetGeneratorOffset */
    uint64_t position;/* the next arrangement position: in 32-bit draws (XORWOW,
                         MRG32k3a, Philox), values (MT19937, MTGP32), points (Sobol) */
    /* MT19937: each generator's state at the start of block mt_block[g], the
     * generators seeded so far, and the state of the last one seeded */
    curand_mt19937 *mt;
    uint64_t *mt_block;
    unsigned mt_ready;
    curand_mt19937 mt_chain;
    /* MTGP32: the streams' states after mtgp_rounds rounds; mtgp_ready is 0
     * until they are seeded */
    curand_mtgp32 *mtgp;
    uint64_t mtgp_rounds;
    int mtgp_ready;
    /* Sobol: the dimensions, and their direction vectors and scramble
     * constants (computed when first needed) */
    unsigned dims;
    void *dirs;        /* uint32_t [dims][32] or uint64_t [dims][64] */
    unsigned dirs_dims;
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

static int is_quasi(int type) { return type >= CURAND_RNG_QUASI_SOBOL32 && type <= CURAND_RNG_QUASI_SCRAMBLED_SOBOL64; }
static int is_sobol64(int type)
{
    return type == CURAND_RNG_QUASI_SOBOL64 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
}
static int is_scrambled(int type)
{
    return type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 || type == CURAND_RNG_QUASI_SCRAMBLED_SOBOL64;
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
    /* XORWOW and Philox: two draws (NVIDIA's host API takes two for
     * Philox too, where the device API's curand_uniform_double takes one) */
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
    if (type == CURAND_RNG_QUASI_DEFAULT)
        type = CURAND_RNG_QUASI_SOBOL32;
    if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_MRG32K3A &&
        type != CURAND_RNG_PSEUDO_PHILOX4_32_10 && type != CURAND_RNG_PSEUDO_MT19937 && type != CURAND_RNG_PSEUDO_MTGP32 &&
        !is_quasi(type)) {
        const char *name = type_name(type);
        if (name)
            return complain(CURAND_STATUS_TYPE_ERROR, fn, "%s is not supported yet (kemu provides XORWOW, "
                            "MRG32k3a, Philox4x32-10, MTGP32, MT19937 and the Sobol generators)", name);
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
    g->ordering = is_quasi(type) ? CURAND_ORDERING_QUASI_DEFAULT : CURAND_ORDERING_PSEUDO_DEFAULT;
    g->dims = 1;
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
    free(generator->mt);
    free(generator->mt_block);
    free(generator->mtgp);
    free(generator->dirs);
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

/* the sequence starts again at the offset (cuRAND: the offset is absolute,
 * not relative to the current position) */
static void restart(curandGenerator_st *g)
{
    g->position = g->offset;
    g->mt_ready = 0;
    g->mtgp_ready = 0;
}

/* Setting a different seed, the offset or the ordering restarts the
 * sequence at the offset. Setting the seed the generator already has
 * changes nothing, as in NVIDIA's library (its host generators, run
 * during development, continue the sequence). */
CURAND_API curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (is_quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    if (seed != generator->seed) {
        generator->seed = seed;
        restart(generator);
    }
    return CURAND_STATUS_SUCCESS;
}

/* MT19937 and MTGP32 take no offset (NVIDIA's library: CURAND_STATUS_TYPE_ERROR);
 * a Sobol offset counts points, in every dimension */
CURAND_API curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (generator->type == CURAND_RNG_PSEUDO_MT19937 || generator->type == CURAND_RNG_PSEUDO_MTGP32)
        return CURAND_STATUS_TYPE_ERROR;
    generator->offset = offset;
    restart(generator);
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
    if (is_quasi(generator->type)) {
        if (order != CURAND_ORDERING_QUASI_DEFAULT)
            return CURAND_STATUS_OUT_OF_RANGE;
        generator->ordering = order;
        restart(generator);
        return CURAND_STATUS_SUCCESS;
    }
    /* MT19937 has one arrangement, which NVIDIA's library gives for
     * DEFAULT and LEGACY and refuses BEST, SEEDED and DYNAMIC for */
    if (generator->type == CURAND_RNG_PSEUDO_MT19937) {
        if (order != CURAND_ORDERING_PSEUDO_DEFAULT && order != CURAND_ORDERING_PSEUDO_LEGACY)
            return CURAND_STATUS_OUT_OF_RANGE;
        generator->ordering = order;
        restart(generator);
        return CURAND_STATUS_SUCCESS;
    }
    /* MTGP32 has one arrangement, which NVIDIA's library gives for BEST,
     * DEFAULT and LEGACY and refuses SEEDED and DYNAMIC for */
    if (generator->type == CURAND_RNG_PSEUDO_MTGP32) {
        if (order != CURAND_ORDERING_PSEUDO_BEST && order != CURAND_ORDERING_PSEUDO_DEFAULT &&
            order != CURAND_ORDERING_PSEUDO_LEGACY)
            return CURAND_STATUS_OUT_OF_RANGE;
        generator->ordering = order;
        restart(generator);
        return CURAND_STATUS_SUCCESS;
    }
    switch (order) {
    case CURAND_ORDERING_PSEUDO_SEEDED:
    case CURAND_ORDERING_PSEUDO_BEST:
    case CURAND_ORDERING_PSEUDO_DEFAULT:
    case CURAND_ORDERING_PSEUDO_LEGACY:
    case CURAND_ORDERING_PSEUDO_DYNAMIC:
        generator->ordering = order;
        restart(generator);
        return CURAND_STATUS_SUCCESS;
    default:
        return CURAND_STATUS_OUT_OF_RANGE;
    }
}

CURAND_API curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator,
                                                                 unsigned int num_dimensions)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (!is_quasi(generator->type))
        return CURAND_STATUS_TYPE_ERROR;
    if (num_dimensions < 1 || num_dimensions > CURAND_SOBOL_MAX_DIMS)
        return CURAND_STATUS_OUT_OF_RANGE;
    generator->dims = num_dimensions;
    restart(generator);
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandGenerateSeeds(curandGenerator_t generator)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    return CURAND_STATUS_SUCCESS; /* the thread states are computed when they are needed */
}

/* ---- generation --------------------------------------------------------------------- */

typedef enum kind { BITS, LONG_LONG, UNIFORM, UNIFORM_DOUBLE, NORMAL, NORMAL_DOUBLE, LOG_NORMAL, LOG_NORMAL_DOUBLE } kind;

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
    case UNIFORM_DOUBLE: *draws = mrg ? 1 : 2; *results = 1; break;
    case NORMAL: case LOG_NORMAL: *draws = 2; *results = 2; break;
    default: *draws = mrg ? 2 : 4; *results = 2; break;
    }
}

/* How many threads make a row, and how many consecutive slots one thread
 * makes in a row. The documented arrangement is 4096 threads of one slot;
 * NVIDIA's library (its host generators, checked during development) uses
 * that for XORWOW and for MRG32k3a's LEGACY ordering, but 81920 threads for
 * MRG32k3a's other orderings and 65536 threads of 4 draws (one Philox
 * block of bits or uniforms; 4 slots of doubles or normals too) for
 * Philox4x32-10 in every ordering. */
static void arrangement(const curandGenerator_st *g, kind k, uint64_t *threads, unsigned *group)
{
    *threads = THREADS;
    *group = 1;
    if (g->type == CURAND_RNG_PSEUDO_MRG32K3A && g->ordering != CURAND_ORDERING_PSEUDO_LEGACY)
        *threads = 81920;
    if (g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        *threads = 65536;
        *group = k == NORMAL || k == LOG_NORMAL || k == NORMAL_DOUBLE || k == LOG_NORMAL_DOUBLE ? 2 : 4;
    }
}

static void fill(curandGenerator_st *g, kind k, void *out, size_t n, double mean, double stddev)
{
    unsigned draws, per, group;
    uint64_t nthreads;
    slot_units(g, k, &draws, &per);
    arrangement(g, k, &nthreads, &group);
    uint64_t first = (g->position + draws - 1) / draws;
    uint64_t row = nthreads * group; /* slots in a row */
    size_t slots = n / per;
    size_t heads = slots < row ? slots : (size_t)row;
    for (size_t i = 0; i < heads; i++) {
        stream st;
        for (size_t j = i; j < slots; j += row) {
            uint64_t s = first + j, grp = s / group;
            /* a thread's next slot in a later row is draws away only
             * with one slot a row: otherwise start the stream there */
            if (j == i || group > 1)
                stream_init(&st, g, grp % nthreads, ((grp / nthreads) * group + s % group) * draws);
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

/* ---- MT19937 ------------------------------------------------------------------- */

/* NVIDIA's MT19937 host arrangement, as its host generator gives it (run
 * during development; docs/cudart.md): 8192 generators, generator g being
 * init_genrand of the seed's low 32 bits, jumped g * 2^2048 steps ahead. Value n
 * of the sequence is row r = floor(n / 65536)'s value n mod 65536: the
 * values of generator g = floor((n mod 65536) / 8), lane j = n mod 8. A
 * generator's rows take its outputs 624 (one twist) at a time, 78 rows of
 * 8 to a twist: twist floor(r / 78), at the index mt_index(j, r mod 78) of
 * that twist's 624 outputs. */
static unsigned mt_index(unsigned j, unsigned r)
{
    static const unsigned short first[8] = {0, 113, 170, 283, 340, 397, 510, 567};
    static const unsigned short run[11] = {1, 57, 114, 171, 227, 284, 341, 398, 454, 511, 568};
    if (r == 0)
        return first[j];
    return run[(r - 1) / 7] + 7 * j + (r - 1) % 7;
}

/* seeds generators [mt_ready, upto) */
static int mt_seed(curandGenerator_st *g, unsigned upto)
{
    if (!g->mt) {
        g->mt = malloc(MT_GENERATORS * sizeof *g->mt);
        g->mt_block = malloc(MT_GENERATORS * sizeof *g->mt_block);
        if (!g->mt || !g->mt_block) {
            free(g->mt), free(g->mt_block);
            g->mt = NULL, g->mt_block = NULL;
            return -1;
        }
        g->mt_ready = 0;
    }
    for (; g->mt_ready < upto; g->mt_ready++) {
        if (g->mt_ready == 0)
            curand_mt19937_init(&g->mt_chain, (uint32_t)g->seed);
        else if (curand_mt19937_jump(&g->mt_chain, curand_mt19937_jump_2048))
            return -1;
        g->mt[g->mt_ready] = g->mt_chain;
        g->mt_block[g->mt_ready] = 0;
    }
    return 0;
}

/* values [position, position + n) of the arrangement */
static int mt_values(curandGenerator_st *g, uint32_t *out, size_t n)
{
    uint64_t p = g->position, end = p + n;
    uint64_t row0 = p / MT_ROW, row1 = (end - 1) / MT_ROW;
    uint32_t block[624];
    for (unsigned gen = 0; gen < MT_GENERATORS; gen++) {
        uint64_t kf = row0 * MT_ROW + gen * 8 + 8 > p ? row0 : row0 + 1;
        uint64_t kl = row1 * MT_ROW + gen * 8 < end ? row1 : row1 - 1;
        if (row1 == 0 && !(gen * 8 < end))
            break;
        if (kf > kl || kl == UINT64_MAX)
            continue;
        if (mt_seed(g, gen + 1))
            return -1;
        for (uint64_t b = kf / MT_BLOCK_ROWS; b <= kl / MT_BLOCK_ROWS; b++) {
            for (; g->mt_block[gen] < b; g->mt_block[gen]++)
                curand_mt19937_block(&g->mt[gen], block);
            curand_mt19937 st = g->mt[gen];
            curand_mt19937_block(&st, block);
            for (unsigned r = 0; r < MT_BLOCK_ROWS; r++) {
                uint64_t base = (b * MT_BLOCK_ROWS + r) * MT_ROW + gen * 8;
                for (unsigned j = 0; j < 8; j++)
                    if (base + j >= p && base + j < end)
                        out[base + j - p] = block[mt_index(j, r)];
            }
        }
    }
    return 0;
}

/* ---- MTGP32 -------------------------------------------------------------------- */

/* NVIDIA's MTGP32 host arrangement, as its host generator gives it (run
 * during development; docs/cudart.md): 192 streams (CUDA blocks of 256
 * threads), stream b using Saito and Matsumoto's parameter set b for
 * exponent 11213, seeded with (seed ^ seed >> 32) + b + 1 in 32 bits (as
 * curand_mtgp32_host.h's curandMakeMTGP32KernelState seeds device states).
 * Value n of the sequence is round r = floor(n / 49152)'s value n mod
 * 49152: output 256 r + (n mod 256) of stream floor((n mod 49152) / 256). */
static int mtgp_values(curandGenerator_st *g, uint32_t *out, size_t n)
{
    uint64_t p = g->position, end = p + n;
    uint64_t r0 = p / MTGP_ROW, r1 = (end - 1) / MTGP_ROW;
    if (!g->mtgp) {
        g->mtgp = malloc(MTGP_BLOCKS * sizeof *g->mtgp);
        if (!g->mtgp)
            return -1;
        g->mtgp_ready = 0;
    }
    if (!g->mtgp_ready || g->mtgp_rounds > r0) {
        uint32_t seed = (uint32_t)(g->seed ^ g->seed >> 32);
        for (unsigned b = 0; b < MTGP_BLOCKS; b++)
            if (curand_mtgp32_init(&g->mtgp[b], b, seed + b + 1))
                return -1;
        g->mtgp_rounds = 0;
        g->mtgp_ready = 1;
    }
    uint32_t round[CURAND_MTGP32_ROUND];
    for (unsigned b = 0; b < MTGP_BLOCKS; b++) {
        curand_mtgp32 *s = &g->mtgp[b];
        for (uint64_t r = g->mtgp_rounds; r < r0; r++)
            curand_mtgp32_round(s, round);
        curand_mtgp32 st = *s; /* the state at round r0 stays for the next call */
        for (uint64_t r = r0; r <= r1; r++) {
            uint64_t base = r * MTGP_ROW + b * CURAND_MTGP32_ROUND;
            if (base >= end || (base + CURAND_MTGP32_ROUND <= p && r == r1))
                break; /* nothing of this stream from here on */
            curand_mtgp32_round(&st, round);
            if (base + CURAND_MTGP32_ROUND <= p)
                continue;
            for (unsigned j = 0; j < CURAND_MTGP32_ROUND; j++)
                if (base + j >= p && base + j < end)
                    out[base + j - p] = round[j];
        }
    }
    g->mtgp_rounds = r0;
    return 0;
}

/* ---- Sobol --------------------------------------------------------------------- */

/* kemu's own scrambling for the scrambled Sobol generators: NVIDIA's
 * scrambled direction vectors and scramble constants are data of its
 * library that it publishes nowhere, so kemu's scrambled sequences are not
 * NVIDIA's (docs/cudart.md). Each dimension gets a random linear
 * scrambling (Matousek's: bit b of a direction number becomes the parity
 * of it with a random mask of the more significant bits and b) and a
 * random digital shift (the scramble constant), both from SplitMix64
 * (Steele, Lea, Flood 2014) seeded with the dimension. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t scramble_state(unsigned dim, int bits64)
{
    return ((uint64_t)dim << 1 | (uint64_t)bits64) * 0x2545f4914f6cdd1dull + 0x6b656d75ull;
}

static uint64_t scramble_constant(unsigned dim, int bits64)
{
    uint64_t x = scramble_state(dim, bits64) ^ 0x5c5c5c5c5c5c5c5cull;
    uint64_t c = splitmix64(&x);
    return bits64 ? c : c >> 32;
}

static void scramble_directions(unsigned dim, int bits64, uint64_t *v, unsigned n)
{
    unsigned width = bits64 ? 64 : 32;
    uint64_t x = scramble_state(dim, bits64), masks[64];
    for (unsigned b = 0; b < width; b++) { /* row of output bit b: bit b and random higher bits */
        uint64_t high = b + 1 < 64 ? ~0ull << (b + 1) : 0;
        if (width == 32)
            high &= 0xffffffffull;
        masks[b] = (splitmix64(&x) & high) | 1ull << b;
    }
    for (unsigned k = 0; k < n; k++) {
        uint64_t r = 0;
        for (unsigned b = 0; b < width; b++)
            r |= (uint64_t)__builtin_parityll(v[k] & masks[b]) << b;
        v[k] = r;
    }
}

/* direction vectors of dimension d (0-based) of a set: 32 or 64 of them */
static int sobol_directions(unsigned d, int bits64, int scrambled, uint64_t *v)
{
    if (bits64) {
        if (curand_sobol_directions64(d, v))
            return -1;
    } else {
        uint32_t v32[32];
        if (curand_sobol_directions32(d, v32))
            return -1;
        for (unsigned k = 0; k < 32; k++)
            v[k] = v32[k];
    }
    if (scrambled)
        scramble_directions(d, bits64, v, bits64 ? 64 : 32);
    return 0;
}

static int sobol_prepare(curandGenerator_st *g)
{
    if (g->dirs && g->dirs_dims == g->dims)
        return 0;
    int bits64 = is_sobol64(g->type);
    unsigned width = bits64 ? 64 : 32;
    uint64_t *dirs = malloc((size_t)g->dims * width * sizeof *dirs);
    if (!dirs)
        return -1;
    for (unsigned d = 0; d < g->dims; d++)
        if (sobol_directions(d, bits64, is_scrambled(g->type), dirs + (size_t)d * width)) {
            free(dirs);
            return -1;
        }
    free(g->dirs);
    g->dirs = dirs;
    g->dirs_dims = g->dims;
    return 0;
}

/* points [position, position + per) of every dimension, dimension d's at
 * out[d * per ..] (cuRAND: "n / dims results from the first dimension,
 * then n / dims from the second" ...); point i is the XOR of the direction
 * vectors of the set bits of its Gray code i ^ (i >> 1), with the
 * dimension's scramble constant for a scrambled generator */
static void sobol_values(const curandGenerator_st *g, uint64_t *out, size_t per)
{
    int bits64 = is_sobol64(g->type);
    unsigned width = bits64 ? 64 : 32;
    for (unsigned d = 0; d < g->dims; d++) {
        const uint64_t *v = (const uint64_t *)g->dirs + (size_t)d * width;
        uint64_t i = g->position, gray = i ^ (i >> 1), x = is_scrambled(g->type) ? scramble_constant(d, bits64) : 0;
        for (unsigned k = 0; k < width && gray; k++, gray >>= 1)
            if (gray & 1)
                x ^= v[k];
        for (size_t j = 0; j < per; j++) {
            out[(size_t)d * per + j] = x;
            i++;
            unsigned c = (unsigned)__builtin_ctzll(i);
            if (c < width)
                x ^= v[c];
        }
    }
}

/* ---- results from single 32- or 64-bit values (MT19937, MTGP32, Sobol) ----------- */

/* as NVIDIA's library converts them (checked against its host generators):
 * a uniform float is (x + 1/2) 2^-32; a uniform double from 32 bits is
 * (x + 1/2) 2^-32 for MT19937 and (x + 1) 2^-32 for MTGP32 and Sobol32, from 64 bits
 * (x >> 11 + 1/2) 2^-53; normals are the inverse normal distribution
 * function of (x + 1/2) 2^-32 (or the uniform double of 64 bits), one
 * value each, so any count is accepted */
static void convert(const curandGenerator_st *g, kind k, const uint64_t *raw, void *out, size_t n, double mean,
                    double stddev)
{
    int bits64 = is_sobol64(g->type);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = raw[i];
        double ud = bits64 ? (double)(x >> 11) * INV53 + INV53 / 2 : (double)x * 2.3283064365386963e-10 + 2.3283064365386963e-10 / 2;
        /* rounded once from the exact value, not from x rounded to a float */
        float uf = (float)(bits64 ? (double)(x >> 32) * 2.3283064365386963e-10 + 2.3283064365386963e-10 / 2 : ud);
        if (g->type == CURAND_RNG_PSEUDO_MTGP32) {
            /* NVIDIA's MTGP32 floats are the device API's _curand_uniform,
             * in float arithmetic (x rounded to a float first), and its
             * normals the inverse normal function of that float, in float
             * precision, doubles included */
            uf = (float)(uint32_t)x * 0x1p-32f + 0x1p-33f;
            if (k >= NORMAL) {
                float z = (float)curand_normcdfinv(uf);
                if (k == NORMAL || k == LOG_NORMAL) {
                    float v = fmaf((float)stddev, z, (float)mean);
                    ((float *)out)[i] = k == LOG_NORMAL ? expf(v) : v;
                } else {
                    double v = fma(stddev, z, mean);
                    ((double *)out)[i] = k == LOG_NORMAL_DOUBLE ? exp(v) : v;
                }
                continue;
            }
        }
        switch (k) {
        case BITS: ((uint32_t *)out)[i] = (uint32_t)x; break;
        case LONG_LONG: ((uint64_t *)out)[i] = x; break;
        case UNIFORM: ((float *)out)[i] = uf; break;
        case UNIFORM_DOUBLE:
            if (!bits64 && g->type != CURAND_RNG_PSEUDO_MT19937)
                ud = (double)x * 2.3283064365386963e-10 + 2.3283064365386963e-10;
            ((double *)out)[i] = ud;
            break;
        case NORMAL:
        case LOG_NORMAL: {
            float v = fmaf((float)stddev, (float)curand_normcdfinv(uf), (float)mean);
            ((float *)out)[i] = k == LOG_NORMAL ? expf(v) : v;
            break;
        }
        default: {
            double v = fma(stddev, curand_normcdfinv(ud), mean);
            ((double *)out)[i] = k == LOG_NORMAL_DOUBLE ? exp(v) : v;
            break;
        }
        }
    }
}

/* fills `out` with n results of an MT19937, MTGP32 or Sobol generator; a status */
static curandStatus_t fill_values(curandGenerator_st *g, kind k, void *out, size_t n, double mean, double stddev)
{
    uint64_t *raw = malloc(n * sizeof *raw);
    if (!raw)
        return CURAND_STATUS_ALLOCATION_FAILED;
    if (g->type == CURAND_RNG_PSEUDO_MT19937 || g->type == CURAND_RNG_PSEUDO_MTGP32) {
        uint32_t *v = malloc(n * sizeof *v);
        if (!v || (g->type == CURAND_RNG_PSEUDO_MT19937 ? mt_values(g, v, n) : mtgp_values(g, v, n))) {
            free(v), free(raw);
            return CURAND_STATUS_ALLOCATION_FAILED;
        }
        for (size_t i = 0; i < n; i++)
            raw[i] = v[i];
        free(v);
        g->position += n;
    } else {
        if (sobol_prepare(g)) {
            free(raw);
            return CURAND_STATUS_ALLOCATION_FAILED;
        }
        sobol_values(g, raw, n / g->dims);
        g->position += n / g->dims;
    }
    convert(g, k, raw, out, n, mean, stddev);
    free(raw);
    return CURAND_STATUS_SUCCESS;
}


/* ---- Poisson values from single values (MT19937, MTGP32, Sobol) ----------------- */

/* the inverse of the Poisson distribution function at u (0 < u < 1), by
 * sequential search from 0 with the weight e^-lambda applied in steps of
 * e^-500 so that a large lambda does not underflow; for lambda above
 * normal_above (4000; MTGP32: 8000, as NVIDIA's library switches there)
 * the rounded normal approximation from the inverse normal function */
static unsigned int poisson_icdf(double u, double lambda, double normal_above)
{
    if (lambda > normal_above) {
        double v = sqrt(lambda) * curand_normcdfinv(u) + lambda + 0.5;
        return v <= 0 ? 0 : (unsigned int)v;
    }
    double p = 1.0, q = 1.0;
    unsigned int k = 0;
    int done = 0;
    do {
        double l = lambda > done + 500.0 ? exp(-500.0) : exp(done - lambda);
        p *= l;
        q *= l;
        done += 500;
        while (u > q && p > 0) {
            k++;
            p *= lambda / k;
            q += p;
        }
    } while (done < lambda);
    return k;
}

static curandStatus_t poisson_values(curandGenerator_st *g, unsigned int *out, size_t n, double lambda)
{
    uint64_t *raw = malloc(n * sizeof *raw);
    if (!raw)
        return CURAND_STATUS_ALLOCATION_FAILED;
    size_t count = n;
    if (g->type == CURAND_RNG_PSEUDO_MT19937 || g->type == CURAND_RNG_PSEUDO_MTGP32) {
        uint32_t *v = malloc(n * sizeof *v);
        if (!v || (g->type == CURAND_RNG_PSEUDO_MT19937 ? mt_values(g, v, n) : mtgp_values(g, v, n))) {
            free(v), free(raw);
            return CURAND_STATUS_ALLOCATION_FAILED;
        }
        for (size_t i = 0; i < n; i++)
            raw[i] = v[i];
        free(v);
    } else {
        if (sobol_prepare(g)) {
            free(raw);
            return CURAND_STATUS_ALLOCATION_FAILED;
        }
        count = n / g->dims;
        sobol_values(g, raw, count);
    }
    int bits64 = is_sobol64(g->type);
    for (size_t i = 0; i < n; i++) {
        double u = bits64 ? (double)(raw[i] >> 11) * INV53 + INV53 / 2
                          : (double)raw[i] * 2.3283064365386963e-10 + 2.3283064365386963e-10 / 2;
        /* NVIDIA's MTGP32 values search up to lambda = 8000 */
        out[i] = poisson_icdf(u, lambda, g->type == CURAND_RNG_PSEUDO_MTGP32 ? 8000 : 4000);
    }
    g->position += count;
    free(raw);
    return CURAND_STATUS_SUCCESS;
}

/* ---- discrete distributions for the device API (curand_discrete.h) ---------------- */

/* The layout the device API reads (curand_discrete.h's structures): a
 * distribution points to an "M2" square histogram (Marsaglia, Tsang and
 * Wang, "Fast generation of discrete random variables", J. Stat. Softw.
 * 11(3), 2004) of `length` columns from value `shift`: the device draws a
 * uniform double u, takes column j = floor(length * u) and returns
 * shift + j if u < V[j], else shift + K[j]. Or, with a method other than
 * M2, the rounded normal stddev * z + mean. */
typedef struct m2_histogram {
    double *V, *host_V;
    unsigned int *K, *host_K;
    unsigned int host_gen;
} m2_histogram;

typedef struct m2_shift {
    m2_histogram *histogram, *host_histogram;
    unsigned int shift, length, host_gen;
} m2_shift;

typedef struct discrete_distribution {
    struct discrete_distribution *self_host_ptr;
    m2_shift *M2, *host_M2;
    double stddev, mean;
    int method;
    unsigned int host_gen;
} discrete_distribution;

enum { CURAND_METHOD_M2 = 5, CURAND_METHOD_DEVICE_API = 9, CURAND_METHOD_DEFINITION = 12, CURAND_METHOD_POISSON = 13 };

/* the block kemu allocates for a distribution (device memory through the
 * program's cudaMalloc, its host mirror through malloc): the structures
 * followed by V and K */
typedef struct discrete_block {
    discrete_distribution d;
    m2_shift m2;
    m2_histogram h;
} discrete_block;

typedef struct live_distribution {
    discrete_block *device; /* what the program holds */
    discrete_block *host;
    struct live_distribution *next;
} live_distribution;
static live_distribution *live_distributions; /* under live_lock */

#define M2_MAX_LAMBDA 2000.0 /* above: the normal approximation */

/* the Poisson probabilities of the values the histogram covers: from the
 * mode outwards while a probability is above 2^-60 of the mode's, each
 * from its neighbour by the ratio lambda / k (in logarithms from lgamma
 * for the mode itself); returns the length, with *shift the first value */
static unsigned int poisson_support(double lambda, double **prob, unsigned int *shift)
{
    unsigned int mode = (unsigned int)floor(lambda);
    double lmode = mode * log(lambda) - lambda - lgamma(mode + 1.0);
    unsigned int lo = mode, hi = mode;
    double p = 1.0;
    while (lo > 0 && (p *= lo / lambda) > 0x1p-60)
        lo--;
    p = 1.0;
    while ((p *= lambda / (hi + 1)) > 0x1p-60)
        hi++;
    unsigned int length = hi - lo + 1;
    double *pr = malloc(length * sizeof *pr);
    if (!pr)
        return 0;
    pr[mode - lo] = exp(lmode);
    for (unsigned int k = mode; k > lo; k--)
        pr[k - 1 - lo] = pr[k - lo] * k / lambda;
    for (unsigned int k = mode; k < hi; k++)
        pr[k + 1 - lo] = pr[k - lo] * lambda / (k + 1);
    double sum = 0;
    for (unsigned int i = 0; i < length; i++)
        sum += pr[i];
    for (unsigned int i = 0; i < length; i++)
        pr[i] /= sum;
    *prob = pr;
    *shift = lo;
    return length;
}

/* the Robin Hood construction of the square histogram: the poorest column
 * (below the average 1/length) is filled up from the richest, whose
 * value it returns above V; length - 1 times */
static void square_histogram(const double *prob, unsigned int length, double *V, unsigned int *K)
{
    double *p = malloc(length * sizeof *p);
    if (!p)
        return;
    memcpy(p, prob, length * sizeof *p);
    double avg = 1.0 / length;
    for (unsigned int i = 0; i < length; i++) {
        K[i] = i;
        V[i] = (i + 1) * avg;
    }
    for (unsigned int step = 0; step + 1 < length; step++) {
        unsigned int poor = 0, rich = 0;
        for (unsigned int i = 1; i < length; i++) {
            if (p[i] < p[poor])
                poor = i;
            if (p[i] > p[rich])
                rich = i;
        }
        if (p[poor] >= avg)
            break;
        K[poor] = rich;
        V[poor] = poor * avg + p[poor];
        p[rich] -= avg - p[poor];
        p[poor] = avg;
    }
    free(p);
}

typedef int (*malloc_fn)(void **ptr, size_t size);
typedef int (*free_fn)(void *ptr);
typedef int (*memcpy_fn)(void *dst, const void *src, size_t count, int kind);

CURAND_API curandStatus_t curandCreatePoissonDistribution(double lambda, void **discrete_distribution)
{
    const char *fn = "curandCreatePoissonDistribution";
    if (!discrete_distribution)
        return complain(CURAND_STATUS_NOT_INITIALIZED, fn, "the distribution pointer is NULL");
    if (!(lambda > 0) || lambda > 400000)
        return CURAND_STATUS_OUT_OF_RANGE;
    malloc_fn dev_malloc;
    free_fn dev_free;
    memcpy_fn dev_memcpy;
    void *p = dlsym(RTLD_DEFAULT, "cudaMalloc");
    memcpy(&dev_malloc, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "cudaFree");
    memcpy(&dev_free, &p, sizeof p);
    p = dlsym(RTLD_DEFAULT, "cudaMemcpy");
    memcpy(&dev_memcpy, &p, sizeof p);
    if (!dev_malloc || !dev_free || !dev_memcpy)
        return complain(CURAND_STATUS_INITIALIZATION_FAILED, fn, "the program has no CUDA runtime loaded");
    double *prob = NULL;
    unsigned int shift = 0, length = 0;
    int m2 = lambda <= M2_MAX_LAMBDA;
    if (m2 && !(length = poisson_support(lambda, &prob, &shift)))
        return CURAND_STATUS_ALLOCATION_FAILED;
    size_t bytes = sizeof(discrete_block) + (size_t)length * (sizeof(double) + sizeof(unsigned int));
    discrete_block *host = calloc(1, bytes), *device = NULL;
    live_distribution *entry = malloc(sizeof *entry);
    if (!host || !entry || dev_malloc((void **)&device, bytes)) {
        free(host), free(entry), free(prob);
        return CURAND_STATUS_ALLOCATION_FAILED;
    }
    double *hV = (double *)(host + 1);
    unsigned int *hK = (unsigned int *)(hV + length);
    if (m2)
        square_histogram(prob, length, hV, hK);
    free(prob);
    double *dV = (double *)(device + 1);
    unsigned int *dK = (unsigned int *)(dV + length);
    /* the device's pointers point into the device block, the host_ ones
     * into the host mirror */
    host->h = (m2_histogram){dV, hV, dK, hK, 0};
    host->m2 = (m2_shift){&device->h, &host->h, shift, length, 0};
    host->d.self_host_ptr = &host->d;
    host->d.M2 = &device->m2;
    host->d.host_M2 = &host->m2;
    host->d.stddev = sqrt(lambda);
    host->d.mean = lambda;
    host->d.method = m2 ? CURAND_METHOD_M2 : CURAND_METHOD_DEFINITION;
    if (dev_memcpy(device, host, bytes, CUDA_MEMCPY_DEFAULT)) {
        dev_free(device);
        free(host), free(entry);
        return CURAND_STATUS_INITIALIZATION_FAILED;
    }
    entry->device = device;
    entry->host = host;
    pthread_mutex_lock(&live_lock);
    entry->next = live_distributions;
    live_distributions = entry;
    pthread_mutex_unlock(&live_lock);
    *discrete_distribution = device;
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandDestroyDistribution(void *discrete_distribution)
{
    live_distribution *found = NULL;
    pthread_mutex_lock(&live_lock);
    for (live_distribution **p = &live_distributions; *p; p = &(*p)->next)
        if ((*p)->device == discrete_distribution) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    if (!found)
        return CURAND_STATUS_NOT_INITIALIZED;
    free_fn dev_free;
    void *p = dlsym(RTLD_DEFAULT, "cudaFree");
    memcpy(&dev_free, &p, sizeof p);
    if (dev_free)
        dev_free(found->device);
    free(found->host);
    free(found);
    return CURAND_STATUS_SUCCESS;
}

/* ---- Sobol direction vectors and scramble constants for the device API --------- */

static pthread_once_t sets_once[4] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static void *sets[4]; /* 101 .. 104: [20000][32] uint32 or [20000][64] uint64 */
static uint32_t *constants32;
static uint64_t *constants64;
static pthread_once_t constants_once = PTHREAD_ONCE_INIT;

static void build_set(int index)
{
    int bits64 = index >= 2, scrambled = index % 2;
    unsigned width = bits64 ? 64 : 32;
    void *set = malloc((size_t)CURAND_SOBOL_MAX_DIMS * width * (bits64 ? 8 : 4));
    if (!set)
        return;
    for (unsigned d = 0; d < CURAND_SOBOL_MAX_DIMS; d++) {
        uint64_t v[64];
        if (sobol_directions(d, bits64, scrambled, v)) {
            free(set);
            return;
        }
        for (unsigned k = 0; k < width; k++) {
            if (bits64)
                ((uint64_t *)set)[(size_t)d * 64 + k] = v[k];
            else
                ((uint32_t *)set)[(size_t)d * 32 + k] = (uint32_t)v[k];
        }
    }
    sets[index] = set;
}
static void build_set0(void) { build_set(0); }
static void build_set1(void) { build_set(1); }
static void build_set2(void) { build_set(2); }
static void build_set3(void) { build_set(3); }

static void build_constants(void)
{
    uint32_t *c32 = malloc(CURAND_SOBOL_MAX_DIMS * sizeof *c32);
    uint64_t *c64 = malloc(CURAND_SOBOL_MAX_DIMS * sizeof *c64);
    if (!c32 || !c64) {
        free(c32), free(c64);
        return;
    }
    for (unsigned d = 0; d < CURAND_SOBOL_MAX_DIMS; d++) {
        c32[d] = (uint32_t)scramble_constant(d, 0);
        c64[d] = scramble_constant(d, 1);
    }
    constants32 = c32;
    constants64 = c64;
}

/* the sets and constants live as long as the library (NVIDIA's are static
 * data too): freed when it is unloaded */
__attribute__((destructor)) static void free_sets(void)
{
    for (int i = 0; i < 4; i++) {
        free(sets[i]);
        sets[i] = NULL;
    }
    free(constants32);
    free(constants64);
    constants32 = NULL;
    constants64 = NULL;
}

/* the sets: CURAND_DIRECTION_VECTORS_32_JOEKUO6 (101), its scrambled
 * form (102), the 64-bit ones (103, 104); scrambled ones are kemu's own
 * scrambling (see scramble_directions) */
static curandStatus_t direction_set(int set, int bits64, void **out)
{
    static void (*const builders[4])(void) = {build_set0, build_set1, build_set2, build_set3};
    if (!out)
        return CURAND_STATUS_OUT_OF_RANGE;
    int index = set - 101;
    if (index < 0 || index > 3 || (index >= 2) != bits64)
        return CURAND_STATUS_OUT_OF_RANGE;
    pthread_once(&sets_once[index], builders[index]);
    if (!sets[index])
        return CURAND_STATUS_ALLOCATION_FAILED;
    *out = sets[index];
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandGetDirectionVectors32(void **vectors, int set)
{
    return direction_set(set, 0, vectors);
}

CURAND_API curandStatus_t curandGetDirectionVectors64(void **vectors, int set)
{
    return direction_set(set, 1, vectors);
}

CURAND_API curandStatus_t curandGetScrambleConstants32(unsigned int **constants)
{
    if (!constants)
        return CURAND_STATUS_OUT_OF_RANGE;
    pthread_once(&constants_once, build_constants);
    if (!constants32)
        return CURAND_STATUS_ALLOCATION_FAILED;
    *constants = constants32;
    return CURAND_STATUS_SUCCESS;
}

CURAND_API curandStatus_t curandGetScrambleConstants64(unsigned long long **constants)
{
    if (!constants)
        return CURAND_STATUS_OUT_OF_RANGE;
    pthread_once(&constants_once, build_constants);
    if (!constants64)
        return CURAND_STATUS_ALLOCATION_FAILED;
    *constants = (unsigned long long *)constants64;
    return CURAND_STATUS_SUCCESS;
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
    int values = g->type == CURAND_RNG_PSEUDO_MT19937 || g->type == CURAND_RNG_PSEUDO_MTGP32 ||
                 is_quasi(g->type); /* one value per result */
    if ((k == BITS && is_sobol64(g->type)) || (k == LONG_LONG && !is_sobol64(g->type)))
        return CURAND_STATUS_TYPE_ERROR; /* 32-bit results from 32-bit generators, 64 from 64 */
    if (!values && (k == NORMAL || k == NORMAL_DOUBLE || k == LOG_NORMAL || k == LOG_NORMAL_DOUBLE) && n % 2)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE; /* Box-Muller makes pairs */
    if (is_quasi(g->type) && n % g->dims)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE; /* whole points */
    curandStatus_t st = check_output(g, out, elem, fn);
    if (st || !n)
        return st;
    if (n > SIZE_MAX / elem)
        return CURAND_STATUS_ALLOCATION_FAILED;
    void *results = g->host ? out : malloc(n * elem);
    if (!results)
        return CURAND_STATUS_ALLOCATION_FAILED;
    uint64_t position = g->position;
    if (values) {
        st = fill_values(g, k, results, n, mean, stddev);
        if (st) {
            if (!g->host)
                free(results);
            return st;
        }
    } else {
        fill(g, k, results, n, mean, stddev);
    }
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
    /* only the 64-bit quasirandom generators (Sobol64) make 64-bit results */
    return generate(generator, LONG_LONG, outputPtr, num, sizeof *outputPtr, 0, 0, "curandGenerateLongLong");
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
    if (is_quasi(generator->type) && n % generator->dims)
        return CURAND_STATUS_LENGTH_NOT_MULTIPLE; /* whole points */
    curandStatus_t st = check_output(generator, outputPtr, sizeof *outputPtr, fn);
    if (st || !n)
        return st;
    if (n > SIZE_MAX / sizeof *outputPtr)
        return CURAND_STATUS_ALLOCATION_FAILED;
    unsigned int *results = generator->host ? outputPtr : malloc(n * sizeof *results);
    if (!results)
        return CURAND_STATUS_ALLOCATION_FAILED;
    uint64_t position = generator->position;
    if (generator->type == CURAND_RNG_PSEUDO_MT19937 || generator->type == CURAND_RNG_PSEUDO_MTGP32 ||
        is_quasi(generator->type)) {
        st = poisson_values(generator, results, n, lambda);
        if (st) {
            if (!generator->host)
                free(results);
            return st;
        }
    } else {
        generate_poisson(generator, results, n, lambda);
    }
    if (!generator->host) {
        st = store(generator, outputPtr, results, n * sizeof *results, fn);
        free(results);
        if (st) /* nothing was generated */
            generator->position = position;
    }
    return st;
}

/* curandGeneratePoisson with a method: CURAND_CHOOSE_BEST (0),
 * CURAND_DEVICE_API (9) and CURAND_POISSON (13) give the values
 * curandGeneratePoisson gives, which for XORWOW are those of NVIDIA's
 * library with CURAND_DEVICE_API (the only method its host generators
 * accept) where docs/cudart.md says so; other methods are refused */
CURAND_API curandStatus_t curandGeneratePoissonMethod(curandGenerator_t generator, unsigned int *outputPtr, size_t n,
                                                      double lambda, int method)
{
    if (!generator_valid(generator))
        return CURAND_STATUS_NOT_INITIALIZED;
    if (method != CURAND_METHOD_POISSON && method != CURAND_METHOD_DEVICE_API && method != 0)
        return complain(CURAND_STATUS_OUT_OF_RANGE, "curandGeneratePoissonMethod",
                        "method %d is not supported (kemu gives CURAND_POISSON)", method);
    return curandGeneratePoisson(generator, outputPtr, n, lambda);
}
