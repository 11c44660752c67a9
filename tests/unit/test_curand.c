/* Unit tests of kemu's libcurand (src/vendor/): the bit generators against
 * published known answers and against their own one-step recurrence
 * (skip-ahead = stepping), and the built library (lib/kemu/libcurand.so.10,
 * loaded with dlopen): it exports every curand* symbol of NVIDIA's
 * libcurand.so.10 (src/vendor/libcurand10.symbols), and a host generator
 * lays out the device API's streams in NVIDIA's arrangement (XORWOW: result
 * n from thread n mod 4096, draw floor(n / 4096), as documented). Needs no CUDA: the
 * device-API comparison on kemu is tests/cuda/curand_host.cu. */
#include "config.h"
#include "vendor/curand_engines.h"

#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random123's known-answer vectors for philox4x32-10 (Salmon et al., SC'11;
 * Random123 tests/kat_vectors): counter, key, output */
START_TEST(test_philox_known_answers)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        curand_philox_block(kat[i], kat[i] + 4, out);
        for (int w = 0; w < 4; w++)
            ck_assert_uint_eq(out[w], kat[i][6 + w]);
    }
}
END_TEST

/* skipping n draws in curand_init lands where n single steps do */
START_TEST(test_skip_is_stepping)
{
    static const uint64_t ns[] = {1, 2, 3, 4, 5, 63, 64, 1000, 12345};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        curand_xorwow xa, xb;
        curand_xorwow_init(&xa, 42, 7, 0);
        curand_xorwow_init(&xb, 42, 7, ns[i]);
        for (uint64_t k = 0; k < ns[i]; k++)
            curand_xorwow_next(&xa);
        ck_assert_uint_eq(curand_xorwow_next(&xa), curand_xorwow_next(&xb));
        curand_mrg ma, mb;
        curand_mrg_init(&ma, 42, 7, 0);
        curand_mrg_init(&mb, 42, 7, ns[i]);
        for (uint64_t k = 0; k < ns[i]; k++)
            curand_mrg_next(&ma);
        ck_assert_uint_eq(curand_mrg_next(&ma), curand_mrg_next(&mb));
        curand_philox pa, pb;
        curand_philox_init(&pa, 42, 7, 0);
        curand_philox_init(&pb, 42, 7, ns[i]);
        for (uint64_t k = 0; k < ns[i]; k++)
            curand_philox_next(&pa);
        ck_assert_uint_eq(curand_philox_next(&pa), curand_philox_next(&pb));
    }
    /* a Philox subsequence is the counter's upper half */
    curand_philox p;
    curand_philox_init(&p, 0, 1, 0);
    uint32_t ctr[4] = {0, 0, 1, 0}, key[2] = {0, 0}, out[4];
    curand_philox_block(ctr, key, out);
    ck_assert_uint_eq(curand_philox_next(&p), out[0]);
}
END_TEST

/* distinct subsequences are distinct streams (a skip-ahead that did nothing
 * would repeat thread 0) */
START_TEST(test_subsequences_differ)
{
    curand_xorwow a, b;
    curand_xorwow_init(&a, 5, 0, 0);
    curand_xorwow_init(&b, 5, 1, 0);
    ck_assert_uint_ne(curand_xorwow_next(&a), curand_xorwow_next(&b));
    curand_mrg c, d;
    curand_mrg_init(&c, 5, 0, 0);
    curand_mrg_init(&d, 5, 1, 0);
    ck_assert_uint_ne(curand_mrg_next(&c), curand_mrg_next(&d));
}
END_TEST


/* MT19937 against its published reference output (Matsumoto and
 * Nishimura's mt19937ar.c with init_genrand(5489), the C++ standard's
 * default_random_engine check: the 10000th output is 4123659995) */
START_TEST(test_mt19937_reference)
{
    curand_mt19937 s;
    curand_mt19937_init(&s, 5489u);
    ck_assert_uint_eq(curand_mt19937_next(&s), 3499211612u);
    ck_assert_uint_eq(curand_mt19937_next(&s), 581869302u);
    ck_assert_uint_eq(curand_mt19937_next(&s), 3890346734u);
    for (int i = 3; i < 9999; i++)
        curand_mt19937_next(&s);
    ck_assert_uint_eq(curand_mt19937_next(&s), 4123659995u);
}
END_TEST

/* MTGP32 against Saito and Matsumoto's reference code: MTGP's
 * mtgp32-fast.c (mtgp32_init, mtgp32_genrand_uint32) built with its
 * cuda-sample/mtgp32dc-param-11213.c, run during development: outputs 0,
 * 1, 2 and 999 of parameter sets 0, 1, 191, 199 and seeds 1, 1235,
 * 2^32 - 1, 1 */
START_TEST(test_mtgp32_reference)
{
    static const struct {
        unsigned set;
        uint32_t seed, out[4];
    } ref[] = {
        {0, 1, {360948779u, 1200908298u, 2313932395u, 1214294347u}},
        {1, 1235, {352200294u, 190087637u, 965886230u, 1015469625u}},
        {191, 4294967295u, {715916180u, 1413591863u, 862697778u, 3815056087u}},
        {199, 1, {1702904103u, 507838447u, 4057640110u, 1845414282u}},
    };
    for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++) {
        curand_mtgp32 s;
        ck_assert_int_eq(curand_mtgp32_init(&s, ref[k].set, ref[k].seed), 0);
        uint32_t out[4 * CURAND_MTGP32_ROUND];
        for (int r = 0; r < 4; r++)
            curand_mtgp32_round(&s, out + r * CURAND_MTGP32_ROUND);
        ck_assert_uint_eq(out[0], ref[k].out[0]);
        ck_assert_uint_eq(out[1], ref[k].out[1]);
        ck_assert_uint_eq(out[2], ref[k].out[2]);
        ck_assert_uint_eq(out[999], ref[k].out[3]);
    }
    curand_mtgp32 s;
    ck_assert_int_eq(curand_mtgp32_init(&s, 200, 1), -1); /* there are 200 sets */
}
END_TEST

/* jumping by x^(2^k) mod P lands where 2^k single steps do */
START_TEST(test_mt19937_jump)
{
    static uint64_t poly[CURAND_MT19937_POLY_WORDS];
    static const unsigned ks[] = {0, 3, 10, 14};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        ck_assert_int_eq(curand_mt19937_jump_poly(ks[i], poly), 0);
        curand_mt19937 a, b;
        curand_mt19937_init(&a, 42u);
        curand_mt19937_next(&a); /* a state not at a twist boundary */
        b = a;
        ck_assert_int_eq(curand_mt19937_jump(&a, poly), 0);
        for (uint64_t k = 0; k < (1ull << ks[i]); k++)
            curand_mt19937_next(&b);
        for (int k = 0; k < 700; k++)
            ck_assert_uint_eq(curand_mt19937_next(&a), curand_mt19937_next(&b));
    }
}
END_TEST

/* the committed 2^2048 jump is what curand_mt19937_jump_poly computes
 * (`make regen-curand-tables` would write the same) */
START_TEST(test_mt19937_jump_table)
{
    static uint64_t poly[CURAND_MT19937_POLY_WORDS];
    ck_assert_int_eq(curand_mt19937_jump_poly(2048, poly), 0);
    ck_assert_mem_eq(poly, curand_mt19937_jump_2048, sizeof poly);
}
END_TEST

/* Joe and Kuo's published direction numbers (new-joe-kuo-6.21201, first
 * lines: d s a m_i) through the recurrence, and the first Sobol points */
START_TEST(test_sobol_directions)
{
    uint32_t v[32];
    ck_assert_int_eq(curand_sobol_directions32(0, v), 0); /* van der Corput */
    for (int k = 0; k < 32; k++)
        ck_assert_uint_eq(v[k], 1u << (31 - k));
    static const struct { unsigned d, s, a, m[5]; } jk[] = {
        {2, 1, 0, {1}}, {3, 2, 1, {1, 3}}, {4, 3, 1, {1, 3, 1}}, {5, 3, 2, {1, 1, 1}},
        {6, 4, 1, {1, 1, 3, 3}}, {7, 4, 4, {1, 3, 5, 13}}, {8, 5, 2, {1, 1, 5, 5, 17}},
    };
    for (size_t i = 0; i < sizeof jk / sizeof jk[0]; i++) {
        ck_assert_int_eq(curand_sobol_directions32(jk[i].d - 1, v), 0);
        uint32_t m[32];
        unsigned s = jk[i].s;
        for (unsigned k = 0; k < 32; k++) {
            if (k < s) {
                m[k] = jk[i].m[k];
            } else { /* Bratley and Fox's recurrence, written out again */
                m[k] = m[k - s] ^ (m[k - s] << s);
                for (unsigned j = 1; j < s; j++)
                    if (jk[i].a >> (s - 1 - j) & 1)
                        m[k] ^= m[k - j] << j;
            }
            ck_assert_msg(v[k] == m[k] << (31 - k), "dimension %u direction %u", jk[i].d, k);
        }
        uint64_t v64[64];
        ck_assert_int_eq(curand_sobol_directions64(jk[i].d - 1, v64), 0);
        for (unsigned k = 0; k < 32; k++)
            ck_assert_uint_eq(v64[k] >> 32, v[k]);
    }
    /* every dimension's first 1024 points put one point in each interval
     * [i / 1024, (i + 1) / 1024): a (0, 10, 1)-net, which needs odd m_k < 2^k */
    for (unsigned d = 0; d < CURAND_SOBOL_MAX_DIMS; d += 37) {
        ck_assert_int_eq(curand_sobol_directions32(d, v), 0);
        static unsigned char seen[1024];
        memset(seen, 0, sizeof seen);
        uint32_t x = 0;
        for (unsigned i = 0; i < 1024; i++) {
            if (i)
                x ^= v[__builtin_ctz(i)];
            ck_assert_msg(!seen[x >> 22], "dimension %u point %u", d, i);
            seen[x >> 22] = 1;
        }
    }
    ck_assert_int_eq(curand_sobol_directions32(CURAND_SOBOL_MAX_DIMS, v), -1);
}
END_TEST

START_TEST(test_normcdfinv)
{
    static const double ps[] = {1e-300, 1e-20, 2.3283064365386963e-10, 0.001, 0.025, 0.3, 0.5 - 1e-12, 0.5,
                                0.6, 0.975, 1 - 1e-10};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        double z = curand_normcdfinv(ps[i]);
        /* Phi(z) = p, from the side where it is accurate */
        double back = z < 0 ? 0.5 * erfc(-z / sqrt(2.0)) : 1 - 0.5 * erfc(z / sqrt(2.0));
        double tol = ps[i] < 0.5 ? 1e-12 * ps[i] : 1e-15;
        ck_assert_msg(fabs(back - ps[i]) <= tol, "p %g: z %.17g gives %.17g", ps[i], z, back);
    }
    ck_assert(curand_normcdfinv(0.5) == 0);
    ck_assert(fabs(curand_normcdfinv(0.975) - 1.959963984540054) < 1e-14);
}
END_TEST

typedef int (*create_fn)(void **, int);
typedef int (*destroy_fn)(void *);
typedef int (*seed_fn)(void *, unsigned long long);
typedef int (*generate_fn)(void *, unsigned int *, size_t);
typedef int (*normal_fn)(void *, float *, size_t, float, float);

static void *open_library(void)
{
    void *lib = dlopen(CURAND_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "dlopen %s: %s", CURAND_LIBRARY, dlerror());
    return lib;
}

static void *symbol(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    ck_assert_msg(p != NULL, "%s does not export %s", CURAND_LIBRARY, name);
    return p;
}

START_TEST(test_exports)
{
    void *lib = open_library();
    FILE *f = fopen(CURAND_SYMBOLS, "r");
    ck_assert_msg(f != NULL, "cannot open %s", CURAND_SYMBOLS);
    char name[256];
    int n = 0;
    while (fscanf(f, "%255s", name) == 1) {
        symbol(lib, name);
        n++;
    }
    fclose(f);
    ck_assert_int_eq(n, 27);
    dlclose(lib);
}
END_TEST

START_TEST(test_host_generator_arrangement)
{
    void *lib = open_library();
    create_fn create;
    destroy_fn destroy;
    seed_fn seed;
    generate_fn generate;
    normal_fn normal;
    *(void **)&create = symbol(lib, "curandCreateGeneratorHost");
    *(void **)&destroy = symbol(lib, "curandDestroyGenerator");
    *(void **)&seed = symbol(lib, "curandSetPseudoRandomGeneratorSeed");
    *(void **)&generate = symbol(lib, "curandGenerate");
    *(void **)&normal = symbol(lib, "curandGenerateNormal");
    static const int types[] = {101, 121, 161}; /* XORWOW, MRG32k3a, Philox4x32-10 */
    enum { N = 3 * 4096 + 17 };
    static unsigned int out[N];
    for (int ti = 0; ti < 3; ti++) {
        void *g = NULL;
        ck_assert_int_eq(create(&g, types[ti]), 0);
        ck_assert_int_eq(seed(g, 99), 0);
        ck_assert_int_eq(generate(g, out, N), 0);
        static const int probes[] = {0, 1, 4095, 4096, 4097, 8192 + 3, N - 1};
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
            /* the documented 4096 threads of one draw a row for XORWOW;
             * NVIDIA's library (its host generators, run during
             * development) has 81920 for MRG32k3a and 65536 of 4 draws
             * for Philox */
            int s = probes[i], t = s % 4096, k = s / 4096;
            if (types[ti] == 121)
                t = s % 81920, k = s / 81920;
            if (types[ti] == 161)
                t = (s / 4) % 65536, k = (s / 4) / 65536 * 4 + s % 4;
            uint32_t want;
            if (types[ti] == 101) {
                curand_xorwow x;
                curand_xorwow_init(&x, 99, t, k);
                want = curand_xorwow_next(&x);
            } else if (types[ti] == 121) {
                curand_mrg m;
                curand_mrg_init(&m, 99, t, k);
                want = curand_mrg_next(&m);
            } else {
                curand_philox p;
                curand_philox_init(&p, 99, t, k);
                want = curand_philox_next(&p);
            }
            ck_assert_msg(out[s] == want, "type %d slot %d: %u, want %u", types[ti], s, out[s], want);
        }
        float f[3];
        ck_assert_int_eq(normal(g, f, 3, 0, 1), 105); /* CURAND_STATUS_LENGTH_NOT_MULTIPLE */
        ck_assert_int_eq(destroy(g), 0);
    }
    void *g = NULL;
    ck_assert_int_eq(create(&g, 0), 103); /* CURAND_RNG_TEST: CURAND_STATUS_TYPE_ERROR */
    ck_assert_int_eq(generate(NULL, out, 1), 101); /* CURAND_STATUS_NOT_INITIALIZED */
    dlclose(lib);
}
END_TEST


typedef int (*offset_fn)(void *, unsigned long long);
typedef int (*ordering_fn)(void *, int);
typedef int (*dims_fn)(void *, unsigned int);
typedef int (*ll_fn)(void *, unsigned long long *, size_t);
typedef int (*double_fn)(void *, double *, size_t);
typedef int (*poisson_fn)(void *, unsigned int *, size_t, double);
typedef int (*vectors_fn)(void **, int);

/* MT19937's host arrangement: value n is generator floor((n mod 65536) / 8)'s
 * lane n mod 8 of row floor(n / 65536); generator 0 is init_genrand(seed)
 * and its rows take the 624 outputs of each twist in the order NVIDIA's
 * library gives (lane j of row 0 at index 0, 113, 170, 283, 340, 397, 510,
 * 567; rows 1 to 7 at 1 + 7j + r - 1, ...; found by running its host
 * generator), generator g the same g * 2^2048 steps on */
START_TEST(test_host_mt19937)
{
    void *lib = open_library();
    create_fn create;
    destroy_fn destroy;
    seed_fn seed;
    generate_fn generate;
    offset_fn offset;
    ordering_fn ordering;
    normal_fn normal;
    *(void **)&create = symbol(lib, "curandCreateGeneratorHost");
    *(void **)&destroy = symbol(lib, "curandDestroyGenerator");
    *(void **)&seed = symbol(lib, "curandSetPseudoRandomGeneratorSeed");
    *(void **)&generate = symbol(lib, "curandGenerate");
    *(void **)&offset = symbol(lib, "curandSetGeneratorOffset");
    *(void **)&ordering = symbol(lib, "curandSetGeneratorOrdering");
    *(void **)&normal = symbol(lib, "curandGenerateNormal");
    enum { N = 65536 + 16 };
    static unsigned int out[N];
    void *g = NULL;
    ck_assert_int_eq(create(&g, 142), 0); /* CURAND_RNG_PSEUDO_MT19937 */
    /* only the seed's low 32 bits count (NVIDIA's library): init_genrand(5489) */
    ck_assert_int_eq(seed(g, 0x100001571ull), 0);
    ck_assert_int_eq(generate(g, out, 8), 0);
    ck_assert_int_eq(generate(g, out + 8, N - 8), 0); /* a second call continues */
    curand_mt19937 ref;
    curand_mt19937_init(&ref, 5489u);
    uint32_t first[624 + 1];
    for (int i = 0; i < 625; i++)
        first[i] = curand_mt19937_next(&ref);
    static const int lane0[8] = {0, 113, 170, 283, 340, 397, 510, 567};
    for (int j = 0; j < 8; j++) {
        ck_assert_uint_eq(out[j], first[lane0[j]]);
        ck_assert_uint_eq(out[65536 + j], first[1 + 7 * j]); /* row 1 */
    }
    /* generator 1: 2^2048 steps on */
    curand_mt19937_init(&ref, 5489u);
    ck_assert_int_eq(curand_mt19937_jump(&ref, curand_mt19937_jump_2048), 0);
    uint32_t gen1[624];
    curand_mt19937_block(&ref, gen1);
    for (int j = 0; j < 8; j++)
        ck_assert_uint_eq(out[8 + j], gen1[lane0[j]]);
    /* setting the seed it has changes nothing; another one restarts */
    ck_assert_int_eq(seed(g, 0x100001571ull), 0);
    unsigned int next;
    ck_assert_int_eq(generate(g, &next, 1), 0);
    ck_assert_uint_ne(next, out[0]);
    ck_assert_int_eq(seed(g, 5489), 0);
    ck_assert_int_eq(generate(g, &next, 1), 0);
    ck_assert_uint_eq(next, out[0]);
    /* NVIDIA's statuses: no offset, only the DEFAULT and LEGACY orderings;
     * normals come one per value (inverse distribution function), so an
     * odd count is fine */
    ck_assert_int_eq(offset(g, 5), 103);
    ck_assert_int_eq(ordering(g, 100), 104); /* BEST */
    ck_assert_int_eq(ordering(g, 103), 0);   /* LEGACY */
    float f[3];
    ck_assert_int_eq(normal(g, f, 3, 0, 1), 0);
    ck_assert_int_eq(destroy(g), 0);
    dlclose(lib);
}
END_TEST

/* MTGP32's host arrangement (NVIDIA's library, run during development):
 * 192 streams, stream b parameter set b seeded with (seed ^ seed >> 32) +
 * b + 1; value n is output 256 floor(n / 49152) + n mod 256 of stream
 * floor((n mod 49152) / 256) */
START_TEST(test_host_mtgp32)
{
    void *lib = open_library();
    create_fn create;
    destroy_fn destroy;
    seed_fn seed;
    generate_fn generate;
    offset_fn offset;
    ordering_fn ordering;
    normal_fn normal;
    double_fn uniform_double;
    int (*normal_double)(void *, double *, size_t, double, double);
    int (*uniform)(void *, float *, size_t);
    poisson_fn poisson;
    *(void **)&create = symbol(lib, "curandCreateGeneratorHost");
    *(void **)&destroy = symbol(lib, "curandDestroyGenerator");
    *(void **)&seed = symbol(lib, "curandSetPseudoRandomGeneratorSeed");
    *(void **)&generate = symbol(lib, "curandGenerate");
    *(void **)&offset = symbol(lib, "curandSetGeneratorOffset");
    *(void **)&ordering = symbol(lib, "curandSetGeneratorOrdering");
    *(void **)&normal = symbol(lib, "curandGenerateNormal");
    *(void **)&uniform = symbol(lib, "curandGenerateUniform");
    *(void **)&uniform_double = symbol(lib, "curandGenerateUniformDouble");
    *(void **)&poisson = symbol(lib, "curandGeneratePoisson");
    *(void **)&normal_double = symbol(lib, "curandGenerateNormalDouble");
    enum { ROW = 192 * 256, N = 2 * ROW + 300 };
    static unsigned int out[N];
    void *g = NULL;
    ck_assert_int_eq(create(&g, 141), 0); /* CURAND_RNG_PSEUDO_MTGP32 */
    ck_assert_int_eq(seed(g, 1234), 0);
    ck_assert_int_eq(generate(g, out, 2), 0);
    /* NVIDIA's host generator's first values for seed 1234 */
    ck_assert_uint_eq(out[0], 2501053709u);
    ck_assert_uint_eq(out[1], 1991185121u);
    /* a high seed folds into 32 bits; later calls continue, across rounds */
    unsigned long long big = 0x123456789abcull;
    uint32_t base = (uint32_t)(big ^ big >> 32);
    ck_assert_int_eq(seed(g, big), 0);
    ck_assert_int_eq(generate(g, out, 100), 0);
    ck_assert_int_eq(generate(g, out + 100, ROW), 0);
    ck_assert_int_eq(generate(g, out + 100 + ROW, N - 100 - ROW), 0);
    static const unsigned streams[] = {0, 1, 100, 191};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
        unsigned b = streams[i];
        curand_mtgp32 s;
        ck_assert_int_eq(curand_mtgp32_init(&s, b, base + b + 1), 0);
        uint32_t round[3][CURAND_MTGP32_ROUND];
        for (int r = 0; r < 3; r++)
            curand_mtgp32_round(&s, round[r]);
        for (unsigned j = 0; j < CURAND_MTGP32_ROUND; j += 51) {
            ck_assert_uint_eq(out[b * 256 + j], round[0][j]);
            ck_assert_uint_eq(out[ROW + b * 256 + j], round[1][j]);
            if (2 * ROW + b * 256 + j < N)
                ck_assert_uint_eq(out[2 * ROW + b * 256 + j], round[2][j]);
        }
    }
    /* setting the seed it has changes nothing (value N: stream 1's output
     * 44 of round 2); another one restarts */
    unsigned int next;
    ck_assert_int_eq(seed(g, big), 0);
    ck_assert_int_eq(generate(g, &next, 1), 0);
    curand_mtgp32 s1;
    uint32_t r1[CURAND_MTGP32_ROUND];
    ck_assert_int_eq(curand_mtgp32_init(&s1, 1, base + 2), 0);
    for (int r = 0; r < 3; r++)
        curand_mtgp32_round(&s1, r1);
    ck_assert_uint_eq(next, r1[N - 2 * ROW - 256]);
    ck_assert_int_eq(seed(g, 1234), 0);
    ck_assert_int_eq(generate(g, &next, 1), 0);
    ck_assert_uint_eq(next, 2501053709u);
    /* uniform floats are the device API's float arithmetic on the rounded
     * value, doubles (x + 1) 2^-32; normals one per value */
    ck_assert_int_eq(seed(g, 77), 0);
    ck_assert_int_eq(generate(g, out, 1000), 0);
    static float f[1000];
    static double d[1000];
    ck_assert_int_eq(seed(g, 78), 0);
    ck_assert_int_eq(seed(g, 77), 0);
    ck_assert_int_eq(uniform(g, f, 1000), 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_float_eq(f[i], (float)out[i] * 0x1p-32f + 0x1p-33f);
    ck_assert_int_eq(seed(g, 78), 0);
    ck_assert_int_eq(seed(g, 77), 0);
    ck_assert_int_eq(uniform_double(g, d, 1000), 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_double_eq(d[i], ((double)out[i] + 1) * 0x1p-32);
    /* normals: the inverse normal function of each uniform float, in
     * float precision also for doubles (as NVIDIA's); an odd count is fine */
    ck_assert_int_eq(seed(g, 78), 0);
    ck_assert_int_eq(seed(g, 77), 0);
    ck_assert_int_eq(normal(g, f, 3, 1, 2), 0);
    ck_assert_int_eq(seed(g, 78), 0);
    ck_assert_int_eq(seed(g, 77), 0);
    ck_assert_int_eq(normal_double(g, d, 3, 1, 2), 0);
    for (int i = 0; i < 3; i++) {
        float z = (float)curand_normcdfinv((float)out[i] * 0x1p-32f + 0x1p-33f);
        ck_assert_float_eq(f[i], fmaf(2, z, 1));
        ck_assert_double_eq(d[i], 1 + 2 * (double)z);
    }
    /* NVIDIA's statuses: no offset; BEST, DEFAULT and LEGACY orderings */
    ck_assert_int_eq(offset(g, 5), 103);
    ck_assert_int_eq(ordering(g, 100), 0);   /* BEST */
    ck_assert_int_eq(ordering(g, 101), 0);   /* DEFAULT */
    ck_assert_int_eq(ordering(g, 103), 0);   /* LEGACY */
    ck_assert_int_eq(ordering(g, 102), 104); /* SEEDED */
    ck_assert_int_eq(ordering(g, 104), 104); /* DYNAMIC */
    /* Poisson: mean and variance, through the sequential search (lambda
     * up to 8000) and the normal approximation */
    static const double lambdas[] = {4.5, 40, 6000, 20000};
    static const int counts[] = {200000, 200000, 20000, 200000};
    static unsigned int pv[200000];
    for (size_t li = 0; li < sizeof lambdas / sizeof lambdas[0]; li++) {
        double lambda = lambdas[li];
        int n = counts[li];
        ck_assert_int_eq(poisson(g, pv, (size_t)n, lambda), 0);
        double sum = 0, sq = 0;
        for (int i = 0; i < n; i++) {
            sum += pv[i];
            sq += (double)pv[i] * pv[i];
        }
        double mean = sum / n, var = sq / n - mean * mean;
        ck_assert_msg(fabs(mean - lambda) < 5 * sqrt(lambda / n), "lambda %g: mean %g", lambda, mean);
        ck_assert_msg(fabs(var - lambda) < 5 * sqrt((2 * lambda * lambda + lambda) / n), "lambda %g: variance %g",
                      lambda, var);
    }
    ck_assert_int_eq(destroy(g), 0);
    dlclose(lib);
}
END_TEST

START_TEST(test_host_sobol)
{
    void *lib = open_library();
    create_fn create;
    destroy_fn destroy;
    seed_fn seed;
    generate_fn generate;
    offset_fn offset;
    dims_fn dims;
    ll_fn longlong;
    double_fn uniform_double;
    vectors_fn vectors32, vectors64;
    *(void **)&create = symbol(lib, "curandCreateGeneratorHost");
    *(void **)&destroy = symbol(lib, "curandDestroyGenerator");
    *(void **)&seed = symbol(lib, "curandSetPseudoRandomGeneratorSeed");
    *(void **)&generate = symbol(lib, "curandGenerate");
    *(void **)&offset = symbol(lib, "curandSetGeneratorOffset");
    *(void **)&dims = symbol(lib, "curandSetQuasiRandomGeneratorDimensions");
    *(void **)&longlong = symbol(lib, "curandGenerateLongLong");
    *(void **)&uniform_double = symbol(lib, "curandGenerateUniformDouble");
    *(void **)&vectors32 = symbol(lib, "curandGetDirectionVectors32");
    *(void **)&vectors64 = symbol(lib, "curandGetDirectionVectors64");
    void *g = NULL;
    unsigned int out[12];
    ck_assert_int_eq(create(&g, 200), 0); /* CURAND_RNG_QUASI_DEFAULT: Sobol32 */
    ck_assert_int_eq(generate(g, out, 4), 0);
    /* the van der Corput sequence in Gray-code order: 0, 1/2, 3/4, 1/4 */
    ck_assert_uint_eq(out[0], 0);
    ck_assert_uint_eq(out[1], 1u << 31);
    ck_assert_uint_eq(out[2], 3u << 30);
    ck_assert_uint_eq(out[3], 1u << 30);
    /* three dimensions: n / 3 points of dimension 1, then of 2, then of 3;
     * dimension 2 (x + 1, m = 1, 3, 5, ...) goes 0, 1/2, 1/4, 3/4 */
    ck_assert_int_eq(dims(g, 3), 0);
    ck_assert_int_eq(generate(g, out, 10), 105); /* CURAND_STATUS_LENGTH_NOT_MULTIPLE */
    ck_assert_int_eq(generate(g, out, 12), 0);
    ck_assert_uint_eq(out[2], 3u << 30);
    ck_assert_uint_eq(out[4 + 2], 1u << 30);
    ck_assert_uint_eq(out[4 + 3], 3u << 30);
    /* the offset counts points: point 3 of dimension 1 is 1/4 */
    ck_assert_int_eq(offset(g, 3), 0);
    ck_assert_int_eq(generate(g, out, 3), 0);
    ck_assert_uint_eq(out[0], 1u << 30);
    double d[3];
    ck_assert_int_eq(uniform_double(g, d, 3), 0); /* point 4 of dimension 1: 3/8, plus 2^-32 */
    ck_assert(d[0] == 0.375 + 0x1p-32);
    ck_assert_int_eq(seed(g, 1), 103);  /* no seed: CURAND_STATUS_TYPE_ERROR */
    ck_assert_int_eq(dims(g, 0), 104);
    ck_assert_int_eq(dims(g, 20001), 104);
    ck_assert_int_eq(dims(g, 20000), 0);
    unsigned long long ll[1];
    ck_assert_int_eq(longlong(g, ll, 1), 103);
    ck_assert_int_eq(destroy(g), 0);
    /* Sobol64: the same points in 64 bits */
    ck_assert_int_eq(create(&g, 203), 0);
    unsigned long long l4[4];
    ck_assert_int_eq(longlong(g, l4, 4), 0);
    ck_assert(l4[0] == 0 && l4[1] == 1ull << 63 && l4[2] == 3ull << 62 && l4[3] == 1ull << 62);
    ck_assert_int_eq(generate(g, out, 1), 103);
    ck_assert_int_eq(destroy(g), 0);
    /* a scrambled generator: point 0 is the scramble constant, and the
     * points are still a (0, m, 1)-net: 8 points in 8 eighths */
    ck_assert_int_eq(create(&g, 202), 0);
    unsigned int sc[8];
    ck_assert_int_eq(generate(g, sc, 8), 0);
    unsigned int *constants;
    int (*scramble32)(unsigned int **);
    *(void **)&scramble32 = symbol(lib, "curandGetScrambleConstants32");
    ck_assert_int_eq(scramble32(&constants), 0);
    ck_assert_uint_eq(sc[0], constants[0]);
    unsigned seen = 0;
    for (int i = 0; i < 8; i++)
        seen |= 1u << (sc[i] >> 29);
    ck_assert_uint_eq(seen, 0xff);
    ck_assert_int_eq(destroy(g), 0);
    /* the device API's direction vectors: dimension 2 is 1/2, 3/4, 5/8 ... */
    unsigned int(*v32)[32];
    ck_assert_int_eq(vectors32((void **)&v32, 101), 0);
    ck_assert_uint_eq(v32[1][0], 1u << 31);
    ck_assert_uint_eq(v32[1][1], 3u << 30);
    ck_assert_uint_eq(v32[1][2], 5u << 29);
    ck_assert_int_eq(vectors32((void **)&v32, 103), 104); /* a 64-bit set */
    unsigned long long(*v64)[64];
    ck_assert_int_eq(vectors64((void **)&v64, 103), 0);
    ck_assert(v64[1][1] == 3ull << 62);
    dlclose(lib);
}
END_TEST

/* Poisson values of MT19937 (pseudorandom: the moments of 10^6 values
 * within 5 standard errors) and Sobol (quasirandom: each value's count in
 * 65536 points within 2 of 65536 P(k)) */
START_TEST(test_host_poisson)
{
    void *lib = open_library();
    create_fn create;
    destroy_fn destroy;
    poisson_fn poisson;
    int (*method)(void *, unsigned int *, size_t, double, int);
    *(void **)&create = symbol(lib, "curandCreateGeneratorHost");
    *(void **)&destroy = symbol(lib, "curandDestroyGenerator");
    *(void **)&poisson = symbol(lib, "curandGeneratePoisson");
    *(void **)&method = symbol(lib, "curandGeneratePoissonMethod");
    enum { N = 1000000, Q = 65536 };
    static unsigned int out[N];
    static const double lambdas[] = {0.5, 7.5, 150, 5000};
    void *mt = NULL; /* one generator (seeding MT19937's 8192 takes seconds), successive calls */
    ck_assert_int_eq(create(&mt, 142), 0);
    for (size_t li = 0; li < sizeof lambdas / sizeof lambdas[0]; li++) {
        double lambda = lambdas[li];
        void *g = NULL;
        ck_assert_int_eq(poisson(mt, out, N, lambda), 0);
        double sum = 0, sq = 0;
        for (int i = 0; i < N; i++) {
            sum += out[i];
            sq += (double)out[i] * out[i];
        }
        double mean = sum / N, var = sq / N - mean * mean;
        /* standard errors: of the mean sqrt(lambda / N), of the variance
         * sqrt((2 lambda^2 + lambda) / N) */
        ck_assert_msg(fabs(mean - lambda) < 5 * sqrt(lambda / N), "lambda %g: mean %g", lambda, mean);
        ck_assert_msg(fabs(var - lambda) < 5 * sqrt((2 * lambda * lambda + lambda) / N), "lambda %g: variance %g",
                      lambda, var);
        ck_assert_int_eq(create(&g, 201), 0);
        ck_assert_int_eq(method(g, out, Q, lambda, 13), 0); /* CURAND_POISSON */
        if (lambda < 200) {
            static unsigned counts[64];
            memset(counts, 0, sizeof counts);
            for (int i = 0; i < Q; i++)
                counts[out[i] < 63 ? out[i] : 63]++;
            double p = exp(-lambda);
            for (unsigned k = 0; k < 40 && lambda < 10; k++, p *= lambda / k)
                ck_assert_msg(fabs(counts[k] - Q * p) <= 2, "lambda %g: %u of value %u, want %g", lambda, counts[k],
                              k, Q * p);
        }
        ck_assert_int_eq(method(g, out, 4, lambda, 5), 104); /* CURAND_M2: not for the host API */
        ck_assert_int_eq(destroy(g), 0);
    }
    ck_assert_int_eq(destroy(mt), 0);
    dlclose(lib);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("curand");
    TCase *tc = tcase_create("engines");
    tcase_add_test(tc, test_philox_known_answers);
    tcase_add_test(tc, test_skip_is_stepping);
    tcase_add_test(tc, test_subsequences_differ);
    tcase_add_test(tc, test_exports);
    tcase_add_test(tc, test_host_generator_arrangement);
    tcase_add_test(tc, test_mt19937_reference);
    tcase_add_test(tc, test_mtgp32_reference);
    tcase_add_test(tc, test_host_mtgp32);
    tcase_add_test(tc, test_mt19937_jump);
    tcase_add_test(tc, test_sobol_directions);
    tcase_add_test(tc, test_normcdfinv);
    tcase_add_test(tc, test_host_mt19937);
    tcase_add_test(tc, test_host_sobol);
    tcase_add_test(tc, test_host_poisson);
    tcase_set_timeout(tc, 600); /* MT19937 seeds 8192 generators by jumps: minutes under ASan on a busy machine */
    suite_add_tcase(s, tc);
    TCase *slow = tcase_create("tables"); /* recomputes the MT19937 jump: some seconds */
    tcase_add_test(slow, test_mt19937_jump_table);
    tcase_set_timeout(slow, 600);
    suite_add_tcase(s, slow);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
