/* Unit tests of kemu's libcurand (src/vendor/): the bit generators against
 * published known answers and against their own one-step recurrence
 * (skip-ahead = stepping), and the built library (lib/kemu/libcurand.so.10,
 * loaded with dlopen): it exports every curand* symbol of NVIDIA's
 * libcurand.so.10 (src/vendor/libcurand10.symbols), and a host generator
 * lays out the device API's streams in the documented arrangement (result n
 * from thread n mod 4096, draw floor(n / 4096)). Needs no CUDA: the
 * device-API comparison on kemu is tests/cuda/curand_host.cu. */
#include "config.h"
#include "vendor/curand_engines.h"

#include <check.h>
#include <dlfcn.h>
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
            int s = probes[i], t = s % 4096, k = s / 4096;
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
    ck_assert_int_eq(create(&g, 141), 103); /* MTGP32: CURAND_STATUS_TYPE_ERROR */
    ck_assert_int_eq(generate(NULL, out, 1), 101); /* CURAND_STATUS_NOT_INITIALIZED */
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
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
