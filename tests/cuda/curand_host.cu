// cuRAND's host API (libcurand.so.10; under `kemu exec`, kemu's own) held
// to the device API of curand_kernel.h run as kernels: for XORWOW,
// MRG32k3a and Philox4x32-10 in the default ordering, result n of the host
// API is thread n mod 4096's result number floor(n / 4096) (cuRAND's
// documented arrangement), a thread being curand_init(seed, thread, 0).
// Bits, uniform floats and doubles, and Poisson values for lambda < 64 must
// agree bit for bit; normals and log-normals (Box-Muller with the device's
// approximate sine and cosine) to a few units in the last place. Also: the
// generators' first outputs against the published algorithms (Marsaglia's
// xorwow with its published start values, L'Ecuyer's MRG32k3a with seed
// 12345, Random123's Philox4x32-10 known answer), the offset, successive
// calls, host generators, the moments of each distribution, the documented
// error statuses, and (with the argument "unsupported") an entry point
// kemu does not implement. MTGP32: the host generator's values are those
// of 192 device-API MTGP32 states (curandMakeMTGP32KernelState with the
// toolkit's parameter sets, block b seeded seed + b + 1) drawn by blocks
// of 256 threads, round r of block b at results 49152 r + 256 b.
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include <curand.h>
#include <curand_kernel.h>
#include <curand_mtgp32_host.h>
#include <curand_mtgp32dc_p_11213.h>
#include <curand_mtgp32_kernel.h>

#include "check.h"

#define CURAND_CHECK(call)                                                                           \
    do {                                                                                             \
        curandStatus_t curand_status_ = (call);                                                      \
        if (curand_status_ != CURAND_STATUS_SUCCESS) {                                               \
            printf("FAIL: %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)curand_status_); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define EXPECT_STATUS(call, want)                                                                    \
    do {                                                                                             \
        curandStatus_t curand_status_ = (call);                                                      \
        if (curand_status_ != (want)) {                                                              \
            printf("FAIL: %s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, #call,          \
                   (int)curand_status_, (int)(want));                                                \
            failures++;                                                                              \
        }                                                                                            \
    } while (0)

static const int THREADS = 4096;
#define THREADS_DOCUMENTED 4096ull
static const unsigned long long SEED = 0x123456789abcdefULL;

// the slots (results, or Box-Muller pairs) compared with the device API
static const int probes[] = {0, 1, 2, 3, 5, 31, 32, 100, 4095, 4096, 4097, 4099, 5000, 8191, 8192, 8195, 12287, 12300};
static const int NPROBES = sizeof probes / sizeof probes[0];
static const int SLOTS = 12300 + 1; // every probe lies below

enum What { BITS, UNIFORM, UNIFORM_DOUBLE, NORMAL, NORMAL_DOUBLE, LOG_NORMAL, LOG_NORMAL_DOUBLE, POISSON };

// draws per slot (32-bit values; MRG32k3a: steps), as the device API's
// functions take them
__host__ __device__ static int draws_per_slot(What what, int type)
{
    bool mrg = type == CURAND_RNG_PSEUDO_MRG32K3A;
    switch (what) {
    case BITS: case UNIFORM: case POISSON: return 1;
    case UNIFORM_DOUBLE: return mrg ? 1 : 2; // Philox too: the host API's doubles take two draws
    case NORMAL: case LOG_NORMAL: return 2;
    default: return mrg ? 2 : 4;
    }
}

// Where slot s of the host API comes from: the thread and its first draw.
// The documented arrangement (4096 threads, one slot each a row) is what
// NVIDIA's library gives for XORWOW and MRG32k3a's LEGACY ordering; for
// MRG32k3a's other orderings it uses 81920 threads, for Philox 65536
// threads of 4 slots a row (2 of normals) (found by running NVIDIA's host
// generators; docs/cudart.md).
__host__ __device__ static void locate(What what, int type, int ordering, unsigned long long slot,
                                       unsigned long long *thread, unsigned long long *draw)
{
    unsigned long long threads = THREADS_DOCUMENTED, group = 1;
    if (type == CURAND_RNG_PSEUDO_MRG32K3A && ordering != CURAND_ORDERING_PSEUDO_LEGACY)
        threads = 81920;
    if (type == CURAND_RNG_PSEUDO_PHILOX4_32_10) {
        threads = 65536;
        group = what == BITS || what == UNIFORM || what == UNIFORM_DOUBLE ? 4 : 2;
    }
    unsigned long long g = slot / group;
    *thread = g % threads;
    *draw = ((g / threads) * group + slot % group) * draws_per_slot(what, type);
}

// Each probe thread sets up the slot's thread at the slot's first draw
// and computes what the host API should hold there: out[2i], out[2i+1].
template <typename State>
__global__ void device_values(What what, int type, unsigned long long seed, unsigned long long base, const int *slots,
                              int nslots, double param1, double param2, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nslots)
        return;
    unsigned long long slot = base + slots[i];
    unsigned long long thread = slot % THREADS_DOCUMENTED, row = slot / THREADS_DOCUMENTED, draw;
    State st;
    if (what == POISSON) { // value number `row` of the thread: draw the ones before it
        curand_init(seed, thread, 0, &st);
        unsigned int v = 0;
        for (unsigned long long r = 0; r <= row; r++)
            v = curand_poisson(&st, param1);
        out[2 * i] = v;
        return;
    }
    locate(what, type, CURAND_ORDERING_PSEUDO_DEFAULT, slot, &thread, &draw);
    curand_init(seed, thread, draw, &st);
    switch (what) {
    case BITS: out[2 * i] = curand(&st); break;
    case UNIFORM: out[2 * i] = curand_uniform(&st); break;
    case UNIFORM_DOUBLE:
        if (type == CURAND_RNG_PSEUDO_PHILOX4_32_10) { // two draws, as XORWOW's curand_uniform_double
            unsigned long long x = curand(&st), y = curand(&st);
            out[2 * i] = (double)(x ^ (y << 21)) * 1.1102230246251565e-16 + 1.1102230246251565e-16 / 2;
        } else {
            out[2 * i] = curand_uniform_double(&st);
        }
        break;
    case NORMAL:
        out[2 * i] = (float)param1 + (float)param2 * curand_normal(&st);
        out[2 * i + 1] = (float)param1 + (float)param2 * curand_normal(&st);
        break;
    case NORMAL_DOUBLE:
        out[2 * i] = param1 + param2 * curand_normal_double(&st);
        out[2 * i + 1] = param1 + param2 * curand_normal_double(&st);
        break;
    case LOG_NORMAL:
        out[2 * i] = curand_log_normal(&st, (float)param1, (float)param2);
        out[2 * i + 1] = curand_log_normal(&st, (float)param1, (float)param2);
        break;
    case LOG_NORMAL_DOUBLE:
        out[2 * i] = curand_log_normal_double(&st, param1, param2);
        out[2 * i + 1] = curand_log_normal_double(&st, param1, param2);
        break;
    default: break;
    }
}

// reads every value (a kernel that initcheck watches)
__global__ void sum_words(const unsigned int *p, size_t n, unsigned long long *sum)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd(sum, s);
}

static const char *what_name(What w)
{
    static const char *names[] = {"bits", "uniform", "uniform double", "normal", "normal double", "log-normal",
                                  "log-normal double", "poisson"};
    return names[w];
}

static const char *type_name(curandRngType_t t)
{
    return t == CURAND_RNG_PSEUDO_XORWOW ? "XORWOW" : t == CURAND_RNG_PSEUDO_MRG32K3A ? "MRG32k3a" : "Philox";
}

// the device API's values at the probes
static void expected(curandRngType_t type, What what, unsigned long long base, double p1, double p2, double *want)
{
    int *slots;
    double *out;
    CHECK(cudaMalloc(&slots, sizeof probes));
    CHECK(cudaMalloc(&out, 2 * NPROBES * sizeof(double)));
    CHECK(cudaMemcpy(slots, probes, sizeof probes, cudaMemcpyHostToDevice));
    if (type == CURAND_RNG_PSEUDO_XORWOW)
        device_values<curandStateXORWOW_t><<<1, 32>>>(what, type, SEED, base, slots, NPROBES, p1, p2, out);
    else if (type == CURAND_RNG_PSEUDO_MRG32K3A)
        device_values<curandStateMRG32k3a_t><<<1, 32>>>(what, type, SEED, base, slots, NPROBES, p1, p2, out);
    else
        device_values<curandStatePhilox4_32_10_t><<<1, 32>>>(what, type, SEED, base, slots, NPROBES, p1, p2, out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(want, out, 2 * NPROBES * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(slots));
    CHECK(cudaFree(out));
}

// the host API's values, from a device generator: `n` results of `what`
static void host_api(curandRngType_t type, What what, unsigned long long offset, size_t n, double p1, double p2,
                     void *host)
{
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGenerator(&g, type));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, SEED));
    CURAND_CHECK(curandSetGeneratorOffset(g, offset));
    size_t elem = what == BITS || what == UNIFORM || what == NORMAL || what == LOG_NORMAL || what == POISSON ? 4 : 8;
    void *dev;
    CHECK(cudaMalloc(&dev, n * elem));
    switch (what) {
    case BITS: CURAND_CHECK(curandGenerate(g, (unsigned int *)dev, n)); break;
    case UNIFORM: CURAND_CHECK(curandGenerateUniform(g, (float *)dev, n)); break;
    case UNIFORM_DOUBLE: CURAND_CHECK(curandGenerateUniformDouble(g, (double *)dev, n)); break;
    case NORMAL: CURAND_CHECK(curandGenerateNormal(g, (float *)dev, n, (float)p1, (float)p2)); break;
    case NORMAL_DOUBLE: CURAND_CHECK(curandGenerateNormalDouble(g, (double *)dev, n, p1, p2)); break;
    case LOG_NORMAL: CURAND_CHECK(curandGenerateLogNormal(g, (float *)dev, n, (float)p1, (float)p2)); break;
    case LOG_NORMAL_DOUBLE: CURAND_CHECK(curandGenerateLogNormalDouble(g, (double *)dev, n, p1, p2)); break;
    case POISSON: CURAND_CHECK(curandGeneratePoisson(g, (unsigned int *)dev, n, p1)); break;
    }
    CHECK(cudaMemcpy(host, dev, n * elem, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dev));
    CURAND_CHECK(curandDestroyGenerator(g));
}

static int mismatches(curandRngType_t type, What what, int slot, double got, double want, double rel)
{
    bool same = rel == 0 ? got == want : close_to(got, want, rel, rel);
    if (!same && failures < 10)
        printf("FAIL: %s %s slot %d: host API %.17g, device API %.17g\n", type_name(type), what_name(what), slot, got,
               want);
    return same ? 0 : 1;
}

// compares the host API at offset `offset` with the device API for one kind of result
static void compare(curandRngType_t type, What what, unsigned long long offset, double p1, double p2, double rel)
{
    bool pairs = what == NORMAL || what == NORMAL_DOUBLE || what == LOG_NORMAL || what == LOG_NORMAL_DOUBLE;
    size_t n = (size_t)SLOTS * (pairs ? 2 : 1);
    static double want[2 * NPROBES];
    static unsigned char host[2 * SLOTS * 8];
    int draws = draws_per_slot(what, type);
    expected(type, what, (offset + draws - 1) / draws, p1, p2, want);
    host_api(type, what, offset, n, p1, p2, host);
    int bad = 0;
    for (int i = 0; i < NPROBES; i++)
        for (int h = 0; h < (pairs ? 2 : 1); h++) {
            size_t at = (size_t)probes[i] * (pairs ? 2 : 1) + h;
            double got;
            switch (what) {
            case BITS: case POISSON: got = ((unsigned int *)host)[at]; break;
            case UNIFORM: case NORMAL: case LOG_NORMAL: got = ((float *)host)[at]; break;
            default: got = ((double *)host)[at]; break;
            }
            bad += mismatches(type, what, probes[i], got, want[2 * i + h], rel);
        }
    failures += bad;
}

// ---- the published algorithms, as references for the first outputs --------------

// Marsaglia, "Xorshift RNGs" (J. Stat. Soft. 8(14), 2003), p. 5: xorwow with
// its published start values (the device API's seeding gives them for the
// seed whose halves equal its salts)
static void marsaglia_xorwow(unsigned int *out, int n)
{
    unsigned int x = 123456789, y = 362436069, z = 521288629, w = 88675123, v = 5783321, d = 6615241;
    for (int i = 0; i < n; i++) {
        unsigned int t = x ^ (x >> 2);
        x = y;
        y = z;
        z = w;
        w = v;
        v = (v ^ (v << 4)) ^ (t ^ (t << 1));
        out[i] = (d += 362437) + v;
    }
}

// L'Ecuyer, "Good parameters and implementations for combined multiple
// recursive random number generators" (Oper. Res. 47(1), 1999), Figure 1:
// MRG32k3a in floating point, here with every seed word 12345 (cuRAND's
// state for seed 0) and without the final normalization
static void lecuyer_mrg32k3a(double *out, int n)
{
    const double m1 = 4294967087.0, m2 = 4294944443.0, a12 = 1403580.0, a13n = 810728.0, a21 = 527612.0,
                 a23n = 1370589.0;
    double s10 = 12345, s11 = 12345, s12 = 12345, s20 = 12345, s21 = 12345, s22 = 12345;
    for (int i = 0; i < n; i++) {
        double p1 = a12 * s11 - a13n * s10;
        long k = (long)(p1 / m1);
        p1 -= k * m1;
        if (p1 < 0.0)
            p1 += m1;
        s10 = s11;
        s11 = s12;
        s12 = p1;
        double p2 = a21 * s22 - a23n * s20;
        k = (long)(p2 / m2);
        p2 -= k * m2;
        if (p2 < 0.0)
            p2 += m2;
        s20 = s21;
        s21 = s22;
        s22 = p2;
        out[i] = p1 > p2 ? p1 - p2 : p1 - p2 + m1;
    }
}

static void first_outputs(void)
{
    const int n = 5;
    unsigned int *dev, got[n * THREADS];
    CHECK(cudaMalloc(&dev, sizeof got));
    curandGenerator_t g;

    // XORWOW: thread 0 of the seed 0xf7dcefddaad26b49 is Marsaglia's generator
    unsigned int want[n];
    marsaglia_xorwow(want, n);
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 0xf7dcefddaad26b49ULL));
    CURAND_CHECK(curandGenerate(g, dev, n * THREADS));
    CHECK(cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(got[i * THREADS] == want[i]);
    CURAND_CHECK(curandDestroyGenerator(g));

    // MRG32k3a, seed 0: thread 0 is L'Ecuyer's generator from 12345s; the
    // device API scales its integer values in [1, m1] by 2.3283065498378288e-10
    // (a little above L'Ecuyer's 1/(m1+1)): undo that and compare integers
    double mrg[n];
    lecuyer_mrg32k3a(mrg, n);
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_MRG32K3A));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 0));
    // (its default ordering has 81920 threads a row: thread 0's draws are
    // results 0 and 81920; LEGACY's 4096)
    double *devd, *gotd = new double[81920 * 2];
    CHECK(cudaMalloc(&devd, 81920 * 2 * sizeof(double)));
    CURAND_CHECK(curandGenerateUniformDouble(g, devd, 81920 * 2));
    CHECK(cudaMemcpy(gotd, devd, 81920 * 2 * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2; i++)
        if (std::rint(gotd[i * 81920] / 2.3283065498378288e-10) != mrg[i]) {
            printf("FAIL: MRG32k3a draw %d: %.17g, L'Ecuyer's %.17g\n", i, gotd[i * 81920] / 2.3283065498378288e-10,
                   mrg[i]);
            failures++;
        }
    CURAND_CHECK(curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_LEGACY));
    CURAND_CHECK(curandGenerateUniformDouble(g, devd, THREADS * 2));
    CHECK(cudaMemcpy(gotd, devd, THREADS * 2 * sizeof(double), cudaMemcpyDeviceToHost));
    EXPECT(std::rint(gotd[THREADS] / 2.3283065498378288e-10) == mrg[1]);
    CHECK(cudaFree(devd));
    delete[] gotd;
    CURAND_CHECK(curandDestroyGenerator(g));

    // Philox4x32-10, key 0 (seed 0), counter 0: Random123's known answer
    // (Salmon et al. 2011; Random123 kat_vectors) 6627e8d5 e169c58d bc57ac4c
    // 9b00dbd8, the four words of thread 0's first block: results 0-3
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 0));
    CURAND_CHECK(curandGenerate(g, dev, n * THREADS));
    CHECK(cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT(got[0] == 0x6627e8d5u);
    EXPECT(got[1] == 0xe169c58du);
    EXPECT(got[2] == 0xbc57ac4cu);
    EXPECT(got[3] == 0x9b00dbd8u);
    CURAND_CHECK(curandDestroyGenerator(g));
    CHECK(cudaFree(dev));
}

// ---- sequence behaviour: successive calls, host generators, orderings ------------

static void sequences(void)
{
    const size_t n = 3 * THREADS + 50;
    unsigned int *dev, *whole = new unsigned int[n], *parts = new unsigned int[n], *host = new unsigned int[n];
    CHECK(cudaMalloc(&dev, n * sizeof *dev));
    curandRngType_t types[] = {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_MRG32K3A, CURAND_RNG_PSEUDO_PHILOX4_32_10};
    for (curandRngType_t type : types) {
        curandGenerator_t g, h;
        CURAND_CHECK(curandCreateGenerator(&g, type));
        CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 77));
        CURAND_CHECK(curandGenerate(g, dev, n));
        CHECK(cudaMemcpy(whole, dev, n * sizeof *dev, cudaMemcpyDeviceToHost));
        // two calls continue the sequence of one (setting the seed it has
        // changes nothing, as in NVIDIA's library; setting the offset restarts)
        CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 77));
        CURAND_CHECK(curandGenerate(g, dev, 1));
        CHECK(cudaMemcpy(parts, dev, sizeof *dev, cudaMemcpyDeviceToHost));
        EXPECT(parts[0] != whole[0]); // it went on (a restart would repeat whole[0])
        CURAND_CHECK(curandSetGeneratorOffset(g, 0));
        CURAND_CHECK(curandGenerate(g, dev, 1000));
        CURAND_CHECK(curandGenerate(g, dev + 1000, n - 1000));
        CHECK(cudaMemcpy(parts, dev, n * sizeof *dev, cudaMemcpyDeviceToHost));
        EXPECT(!memcmp(whole, parts, n * sizeof *dev));
        // curand.h says BEST is DEFAULT; LEGACY is too, but for MRG32k3a
        // (NVIDIA's library: 4096 threads for LEGACY, 81920 for DEFAULT)
        curandOrdering_t same[] = {CURAND_ORDERING_PSEUDO_LEGACY, CURAND_ORDERING_PSEUDO_BEST};
        for (curandOrdering_t order : same) {
            if (type == CURAND_RNG_PSEUDO_MRG32K3A && order == CURAND_ORDERING_PSEUDO_LEGACY)
                continue;
            CURAND_CHECK(curandSetGeneratorOrdering(g, order));
            CURAND_CHECK(curandGenerate(g, dev, n));
            CHECK(cudaMemcpy(parts, dev, n * sizeof *dev, cudaMemcpyDeviceToHost));
            EXPECT(!memcmp(whole, parts, n * sizeof *dev));
        }
        // a host generator makes the same sequence into host memory
        CURAND_CHECK(curandCreateGeneratorHost(&h, type));
        CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(h, 77));
        CURAND_CHECK(curandGenerate(h, host, n));
        EXPECT(!memcmp(whole, host, n * sizeof *dev));
        CURAND_CHECK(curandDestroyGenerator(h));
        CURAND_CHECK(curandDestroyGenerator(g));
    }
    // the default generator is XORWOW
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 0xf7dcefddaad26b49ULL));
    CURAND_CHECK(curandGenerate(g, dev, 1));
    unsigned int first, want;
    CHECK(cudaMemcpy(&first, dev, sizeof first, cudaMemcpyDeviceToHost));
    marsaglia_xorwow(&want, 1);
    EXPECT(first == want);
    CURAND_CHECK(curandDestroyGenerator(g));
    CHECK(cudaFree(dev));
    delete[] whole;
    delete[] parts;
    delete[] host;
}

// ---- moments ---------------------------------------------------------------------

static void moments(void)
{
    const size_t n = 200000;
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, 2024));
    float *f = new float[n];
    double *d = new double[n];
    unsigned int *u = new unsigned int[n];
    auto mean_var = [&](auto *p, double *mean, double *var) {
        double s = 0, s2 = 0;
        for (size_t i = 0; i < n; i++)
            s += p[i];
        *mean = s / n;
        for (size_t i = 0; i < n; i++)
            s2 += (p[i] - *mean) * (p[i] - *mean);
        *var = s2 / (n - 1);
    };
    double m, v;
    CURAND_CHECK(curandGenerateUniform(g, f, n));
    mean_var(f, &m, &v);
    EXPECT(std::fabs(m - 0.5) < 0.005 && std::fabs(v - 1.0 / 12) < 0.002);
    bool in_range = true;
    for (size_t i = 0; i < n; i++)
        in_range &= f[i] > 0.0f && f[i] <= 1.0f;
    EXPECT(in_range);
    CURAND_CHECK(curandGenerateUniformDouble(g, d, n));
    mean_var(d, &m, &v);
    EXPECT(std::fabs(m - 0.5) < 0.005 && std::fabs(v - 1.0 / 12) < 0.002);
    CURAND_CHECK(curandGenerateNormal(g, f, n, 3.0f, 2.0f));
    mean_var(f, &m, &v);
    EXPECT(std::fabs(m - 3.0) < 0.03 && std::fabs(v - 4.0) < 0.08);
    CURAND_CHECK(curandGenerateNormalDouble(g, d, n, -1.0, 0.5));
    mean_var(d, &m, &v);
    EXPECT(std::fabs(m + 1.0) < 0.01 && std::fabs(v - 0.25) < 0.005);
    CURAND_CHECK(curandGenerateLogNormal(g, f, n, 0.0f, 0.5f));
    mean_var(f, &m, &v); // mean e^(sigma^2/2), variance (e^(sigma^2) - 1) e^(sigma^2)
    EXPECT(std::fabs(m - std::exp(0.125)) < 0.01 && std::fabs(v - (std::exp(0.25) - 1) * std::exp(0.25)) < 0.01);
    CURAND_CHECK(curandGenerateLogNormalDouble(g, d, n, 0.0, 0.5));
    mean_var(d, &m, &v);
    EXPECT(std::fabs(m - std::exp(0.125)) < 0.01);
    double lambdas[] = {0.5, 4.0, 100.0, 1000.0, 10000.0};
    for (double lambda : lambdas) {
        CURAND_CHECK(curandGeneratePoisson(g, u, n, lambda));
        mean_var(u, &m, &v); // mean and variance lambda
        EXPECT(std::fabs(m - lambda) < 0.02 * lambda + 0.01);
        EXPECT(std::fabs(v - lambda) < 0.05 * lambda + 0.02);
    }
    CURAND_CHECK(curandDestroyGenerator(g));
    delete[] f;
    delete[] d;
    delete[] u;
}

// ---- documented statuses ----------------------------------------------------------

static void statuses(void)
{
    curandGenerator_t g, h;
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
    CURAND_CHECK(curandCreateGeneratorHost(&h, CURAND_RNG_PSEUDO_XORWOW));
    float *dev;
    CHECK(cudaMalloc(&dev, 64 * sizeof(float)));
    // Box-Muller needs an even count
    EXPECT_STATUS(curandGenerateNormal(g, dev, 63, 0, 1), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    EXPECT_STATUS(curandGenerateLogNormalDouble(g, (double *)dev, 3, 0, 1), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    // 64-bit results come from 64-bit quasirandom generators only
    EXPECT_STATUS(curandGenerateLongLong(g, (unsigned long long *)dev, 4), CURAND_STATUS_TYPE_ERROR);
    EXPECT_STATUS(curandSetQuasiRandomGeneratorDimensions(g, 2), CURAND_STATUS_TYPE_ERROR);
    EXPECT_STATUS(curandSetGeneratorOrdering(g, CURAND_ORDERING_QUASI_DEFAULT), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(curandGeneratePoisson(g, (unsigned int *)dev, 4, 0.0), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(curandGeneratePoisson(g, (unsigned int *)dev, 4, 500000.0), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(curandGenerate(NULL, (unsigned int *)dev, 4), CURAND_STATUS_NOT_INITIALIZED);
    EXPECT_STATUS(curandSetPseudoRandomGeneratorSeed(NULL, 1), CURAND_STATUS_NOT_INITIALIZED);
    int version = 0, major = -1;
    CURAND_CHECK(curandGetVersion(&version));
    EXPECT(version == CURAND_VERSION);
    CURAND_CHECK(curandGetProperty(MAJOR_VERSION, &major));
    EXPECT(major == CURAND_VER_MAJOR);
    CURAND_CHECK(curandSetStream(g, 0));
    CURAND_CHECK(curandGenerateSeeds(g));
    CURAND_CHECK(curandGenerateUniform(g, dev, 64));
    CURAND_CHECK(curandDestroyGenerator(h));
    CURAND_CHECK(curandDestroyGenerator(g));
    CHECK(cudaFree(dev));
}

// where NVIDIA's library would launch a kernel that faults: kemu's refuses
static void bad_outputs(void)
{
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    float *dev, host[8];
    CHECK(cudaMalloc(&dev, 64 * sizeof(float)));
    EXPECT_STATUS(curandGenerateUniform(g, host, 8), CURAND_STATUS_LAUNCH_FAILURE);  // host memory
    EXPECT_STATUS(curandGenerateUniform(g, (float *)((char *)dev + 2), 8), CURAND_STATUS_LAUNCH_FAILURE); // misaligned
    EXPECT_STATUS(curandGenerateUniform(g, dev, 65), CURAND_STATUS_LAUNCH_FAILURE);  // past the allocation
    // a failed call generates nothing: the sequence starts at its beginning still
    CURAND_CHECK(curandGenerateUniform(g, dev, 64));
    // pinned host memory is reachable by a kernel: accepted, same values
    float *pinned, copy[64];
    CHECK(cudaMallocHost(&pinned, 64 * sizeof(float)));
    CURAND_CHECK(curandSetGeneratorOffset(g, 0));
    CURAND_CHECK(curandGenerateUniform(g, pinned, 64));
    CHECK(cudaMemcpy(copy, dev, sizeof copy, cudaMemcpyDeviceToHost));
    EXPECT(!memcmp(copy, pinned, sizeof copy));
    CHECK(cudaFreeHost(pinned));
    CURAND_CHECK(curandDestroyGenerator(g));
    CHECK(cudaFree(dev));
}

// generated device memory is initialized for a kernel that reads it
static void read_by_kernel(void)
{
    const size_t n = 10000;
    curandGenerator_t g;
    CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
    unsigned int *dev, *host = new unsigned int[n];
    unsigned long long *sum, got;
    CHECK(cudaMalloc(&dev, n * sizeof *dev));
    CHECK(cudaMalloc(&sum, sizeof *sum));
    CHECK(cudaMemset(sum, 0, sizeof *sum));
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    CURAND_CHECK(curandSetStream(g, stream));
    CURAND_CHECK(curandGenerate(g, dev, n));
    sum_words<<<8, 128, 0, stream>>>(dev, n, sum);
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(host, dev, n * sizeof *dev, cudaMemcpyDeviceToHost));
    unsigned long long want = 0;
    for (size_t i = 0; i < n; i++)
        want += host[i];
    EXPECT(got == want);
    CURAND_CHECK(curandDestroyGenerator(g));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(dev));
    CHECK(cudaFree(sum));
    delete[] host;
}

// the device API's curand_discrete values from a distribution made by
// curandCreatePoissonDistribution (M2 square histogram for small lambda,
// the rounded normal above): 4096 threads, 64 values each
__global__ void discrete_values(curandDiscreteDistribution_t dist, unsigned long long seed, double *sums)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    curandState s;
    curand_init(seed, t, 0, &s);
    double sum = 0, sq = 0;
    for (int i = 0; i < 64; i++) {
        unsigned int v = curand_discrete(&s, dist);
        sum += v;
        sq += (double)v * v;
    }
    sums[2 * t] = sum;
    sums[2 * t + 1] = sq;
}

static void discrete()
{
    const int N = THREADS * 64;
    (void)cudaGetLastError(); // bad_outputs() left its refused copies' error
    double *dev, *host = (double *)malloc(2 * THREADS * sizeof(double));
    CHECK(cudaMalloc(&dev, 2 * THREADS * sizeof(double)));
    const double lambdas[] = {0.5, 4.0, 37.5, 3000.0};
    for (double lambda : lambdas) {
        curandDiscreteDistribution_t dist;
        CURAND_CHECK(curandCreatePoissonDistribution(lambda, &dist));
        discrete_values<<<THREADS / 128, 128>>>(dist, SEED, dev);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(host, dev, 2 * THREADS * sizeof(double), cudaMemcpyDeviceToHost));
        double sum = 0, sq = 0;
        for (int t = 0; t < THREADS; t++) {
            sum += host[2 * t];
            sq += host[2 * t + 1];
        }
        double mean = sum / N, var = sq / N - mean * mean;
        // 5 standard errors of the mean and of the variance
        EXPECT(fabs(mean - lambda) < 5 * sqrt(lambda / N));
        EXPECT(fabs(var - lambda) < 5 * sqrt((2 * lambda * lambda + lambda) / N));
        if (!(fabs(mean - lambda) < 5 * sqrt(lambda / N)))
            printf("discrete lambda %g: mean %g variance %g\n", lambda, mean, var);
        CURAND_CHECK(curandDestroyDistribution(dist));
        EXPECT_STATUS(curandDestroyDistribution(dist), CURAND_STATUS_NOT_INITIALIZED);
    }
    CHECK(cudaFree(dev));
    free(host);
}

// MT19937 and the Sobol generators on the device give the host
// generators' values (kemu computes both on the CPU; the device ones store
// through cudaMemcpyAsync)
static void device_equals_host(curandRngType_t type, size_t n, unsigned dims)
{
    unsigned int *dev, *want = (unsigned int *)malloc(n * sizeof(unsigned int)),
                       *got = (unsigned int *)malloc(n * sizeof(unsigned int));
    CHECK(cudaMalloc(&dev, n * sizeof(unsigned int)));
    curandGenerator_t d, h;
    CURAND_CHECK(curandCreateGenerator(&d, type));
    CURAND_CHECK(curandCreateGeneratorHost(&h, type));
    if (dims) {
        CURAND_CHECK(curandSetQuasiRandomGeneratorDimensions(d, dims));
        CURAND_CHECK(curandSetQuasiRandomGeneratorDimensions(h, dims));
    } else {
        CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(d, 77));
        CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(h, 77));
    }
    CURAND_CHECK(curandGenerate(d, dev, n));
    CURAND_CHECK(curandGenerate(h, want, n));
    CHECK(cudaMemcpy(got, dev, n * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    EXPECT(!memcmp(got, want, n * sizeof(unsigned int)));
    CURAND_CHECK(curandDestroyGenerator(d));
    CURAND_CHECK(curandDestroyGenerator(h));
    CHECK(cudaFree(dev));
    free(want);
    free(got);
}

// MTGP32: block b of 256 threads draws `rounds` values from state b
__global__ void mtgp_draw(curandStateMtgp32_t *states, unsigned int *out, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        unsigned int v = curand(&states[blockIdx.x]);
        out[(size_t)r * 192 * 256 + blockIdx.x * 256 + threadIdx.x] = v;
    }
}

static void mtgp32(void)
{
    enum { BLOCKS = 192, ROUNDS = 2, N = BLOCKS * 256 * ROUNDS };
    const unsigned long long seed = 0x5eed00001234ull;
    curandStateMtgp32_t *states;
    mtgp32_kernel_params_t *params;
    unsigned int *dev;
    unsigned int *want = (unsigned int *)malloc(N * sizeof(unsigned int)),
                 *got = (unsigned int *)malloc(N * sizeof(unsigned int));
    CHECK(cudaMalloc(&states, BLOCKS * sizeof *states));
    CHECK(cudaMalloc(&params, sizeof *params));
    CHECK(cudaMalloc(&dev, N * sizeof(unsigned int)));
    CURAND_CHECK(curandMakeMTGP32Constants(mtgp32dc_params_fast_11213, params));
    CURAND_CHECK(curandMakeMTGP32KernelState(states, mtgp32dc_params_fast_11213, params, BLOCKS, seed));
    mtgp_draw<<<BLOCKS, 256>>>(states, dev, ROUNDS);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(want, dev, N * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    // the host generator, in two calls that split a round
    curandGenerator_t h;
    CURAND_CHECK(curandCreateGeneratorHost(&h, CURAND_RNG_PSEUDO_MTGP32));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(h, seed));
    CURAND_CHECK(curandGenerate(h, got, 1000));
    CURAND_CHECK(curandGenerate(h, got + 1000, N - 1000));
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        if (got[i] != want[i] && bad++ < 5)
            printf("FAIL: MTGP32 result %zu: host %u, device API %u\n", i, got[i], want[i]);
    EXPECT(bad == 0);
    // the device generator gives the same values; floats and doubles are
    // the device API's conversions of them, normals one per value
    curandGenerator_t d;
    CURAND_CHECK(curandCreateGenerator(&d, CURAND_RNG_PSEUDO_MTGP32));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(d, seed));
    CURAND_CHECK(curandGenerate(d, dev, N));
    CHECK(cudaMemcpy(got, dev, N * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    EXPECT(!memcmp(got, want, N * sizeof(unsigned int)));
    float f[5];
    double u[5];
    CURAND_CHECK(curandDestroyGenerator(h));
    CURAND_CHECK(curandCreateGeneratorHost(&h, CURAND_RNG_PSEUDO_MTGP32));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(h, seed));
    CURAND_CHECK(curandGenerateUniform(h, f, 5));
    CURAND_CHECK(curandGenerateUniformDouble(h, u, 5));
    for (int i = 0; i < 5; i++) {
        EXPECT(f[i] == (float)want[i] * 0x1p-32f + 0x1p-33f);
        EXPECT(u[i] == ((double)want[5 + i] + 1) * 0x1p-32);
    }
    CURAND_CHECK(curandGenerateNormal(h, f, 3, 0, 1)); // one per value: an odd count is fine
    // no offset; the BEST, DEFAULT and LEGACY orderings
    EXPECT_STATUS(curandSetGeneratorOffset(h, 5), CURAND_STATUS_TYPE_ERROR);
    EXPECT_STATUS(curandSetGeneratorOrdering(h, CURAND_ORDERING_PSEUDO_BEST), CURAND_STATUS_SUCCESS);
    EXPECT_STATUS(curandSetGeneratorOrdering(h, CURAND_ORDERING_PSEUDO_LEGACY), CURAND_STATUS_SUCCESS);
    EXPECT_STATUS(curandSetGeneratorOrdering(h, CURAND_ORDERING_PSEUDO_SEEDED), CURAND_STATUS_OUT_OF_RANGE);
    EXPECT_STATUS(curandSetGeneratorOrdering(h, CURAND_ORDERING_PSEUDO_DYNAMIC), CURAND_STATUS_OUT_OF_RANGE);
    CURAND_CHECK(curandDestroyGenerator(h));
    CURAND_CHECK(curandDestroyGenerator(d));
    CHECK(cudaFree(dev));
    CHECK(cudaFree(params));
    CHECK(cudaFree(states));
    free(want);
    free(got);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "unsupported")) {
        // CURAND_RNG_TEST, NVIDIA's undocumented test generator
        curandGenerator_t test;
        curandStatus_t s = curandCreateGenerator(&test, CURAND_RNG_TEST);
        printf("curandCreateGenerator(CURAND_RNG_TEST) returned %d\n", (int)s);
        EXPECT(s == CURAND_STATUS_TYPE_ERROR);
        // kemu cannot put its generation into a graph being captured
        cudaStream_t stream;
        cudaGraph_t graph;
        float *dev;
        curandGenerator_t g;
        CHECK(cudaMalloc(&dev, 64 * sizeof(float)));
        CHECK(cudaStreamCreate(&stream));
        CURAND_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW));
        CURAND_CHECK(curandSetStream(g, stream));
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        EXPECT_STATUS(curandGenerateUniform(g, dev, 64), CURAND_STATUS_LAUNCH_FAILURE);
        CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(cudaGraphDestroy(graph));
        CURAND_CHECK(curandGenerateUniform(g, dev, 64)); // after the capture: fine
        CURAND_CHECK(curandDestroyGenerator(g));
        CHECK(cudaStreamDestroy(stream));
        CHECK(cudaFree(dev));
        return finish("curand_host unsupported");
    }
    first_outputs();
    curandRngType_t types[] = {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_MRG32K3A, CURAND_RNG_PSEUDO_PHILOX4_32_10};
    for (curandRngType_t type : types) {
        compare(type, BITS, 0, 0, 0, 0);
        compare(type, BITS, 5000, 0, 0, 0); // the offset moves the arrangement
        compare(type, UNIFORM, 0, 0, 0, 0);
        compare(type, UNIFORM_DOUBLE, 0, 0, 0, 0);
        compare(type, UNIFORM_DOUBLE, 4098, 0, 0, 0);
        compare(type, NORMAL, 0, 0.0, 1.0, 2e-5);
        compare(type, NORMAL, 0, 2.0, 3.0, 2e-5);
        compare(type, NORMAL_DOUBLE, 0, 0.0, 1.0, 1e-12);
        compare(type, LOG_NORMAL, 0, 0.5, 0.25, 2e-5);
        compare(type, LOG_NORMAL_DOUBLE, 0, 0.5, 0.25, 1e-12);
        compare(type, POISSON, 0, 4.0, 0, 0);      // Knuth's method
        compare(type, POISSON, 0, 10000.0, 0, 1e-4); // the rounded normal
    }
    sequences();
    moments();
    statuses();
    bad_outputs();
    read_by_kernel();
    discrete();
    device_equals_host(CURAND_RNG_PSEUDO_MT19937, 8, 0); // generator 0 only: seeding all 8192 takes seconds
    device_equals_host(CURAND_RNG_QUASI_SOBOL32, 3000, 3);
    mtgp32();
    device_equals_host(CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, 3000, 3);
    return finish("curand_host");
}
