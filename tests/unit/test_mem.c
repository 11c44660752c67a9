/* Unit tests of the device memory room (src/mem/): allocation alignment
 * and fill, lookups of addresses and ranges, guard gaps between
 * allocations, and frees. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"

START_TEST(alloc_find_free)
{
    mem_space m;
    mem_space_init(&m);
    uint64_t a, b;
    ck_assert_int_eq(mem_alloc(&m, 100, 0xff, MEM_KIND_USER, &a), 0);
    ck_assert_int_eq(mem_alloc(&m, 4000, 0, MEM_KIND_USER, &b), 0);
    ck_assert_uint_eq(a % MEM_ALIGN, 0);
    ck_assert_uint_eq(b % MEM_ALIGN, 0);
    ck_assert_uint_eq(((unsigned char *)(uintptr_t)a)[99], 0xff);
    ck_assert_uint_eq(((unsigned char *)(uintptr_t)b)[3999], 0);
    ck_assert_ptr_nonnull(mem_find(&m, a, 100));
    ck_assert_ptr_null(mem_find(&m, a, 101));      /* runs one byte past the end */
    ck_assert_ptr_null(mem_find(&m, a + 100, 1));  /* in the guard gap */
    ck_assert_ptr_nonnull(mem_find(&m, b + 3996, 4));
    ck_assert_ptr_null(mem_find(&m, 0, 1));
    ck_assert_uint_eq(mem_find_containing(&m, b + 17)->base, b);
    ck_assert_uint_eq(mem_find_containing(&m, b + 17)->id, 2);
    ck_assert_int_eq(mem_free(&m, a + 4), -1);    /* not the start */
    ck_assert_int_eq(mem_free(&m, a), 0);
    ck_assert_ptr_null(mem_find(&m, a, 1));
    ck_assert_int_eq(mem_free(&m, a), -1);        /* double free */
    ck_assert_uint_eq(m.count, 1);
    mem_space_destroy(&m);
}
END_TEST

START_TEST(granule_layout)
{
    /* with a granule (racecheck without memcheck), each allocation owns its
     * size rounded up to the granule and the next starts right after it:
     * an access past one, inside its granule, never lands in another, and
     * the bytes just before an allocation lie in the granule below */
    const uint64_t g = 2ull << 20;
    mem_space m;
    mem_space_init(&m);
    m.granule = g;
    uint64_t a, b, c;
    ck_assert_int_eq(mem_alloc(&m, 24, 0, MEM_KIND_USER, &a), 0);
    ck_assert_int_eq(mem_alloc(&m, 3 * g / 2, 0, MEM_KIND_USER, &b), 0);
    ck_assert_int_eq(mem_alloc(&m, 4, 0, MEM_KIND_USER, &c), 0);
    ck_assert_uint_eq(b, a + g);
    ck_assert_uint_eq(c, b + 2 * g);
    ck_assert_ptr_null(mem_find_containing(&m, a + (1u << 20))); /* 1 MiB past `a`: no allocation */
    ck_assert_uint_eq(mem_find_below(&m, b - 4)->base, a);
    ck_assert_uint_eq(mem_find_below(&m, c - 4)->base, b);
    mem_space_destroy(&m);
}
END_TEST

START_TEST(many_allocations_stay_sorted)
{
    mem_space m;
    mem_space_init(&m);
    uint64_t addrs[300];
    for (int i = 0; i < 300; i++)
        ck_assert_int_eq(mem_alloc(&m, (uint64_t)(i % 7 + 1) * 33, 0, MEM_KIND_USER, &addrs[i]), 0);
    for (size_t i = 1; i < m.count; i++)
        ck_assert(m.allocs[i - 1].base < m.allocs[i].base);
    for (int i = 0; i < 300; i += 2)
        ck_assert_int_eq(mem_free(&m, addrs[i]), 0);
    for (int i = 1; i < 300; i += 2)
        ck_assert_uint_eq(mem_find_containing(&m, addrs[i] + 1)->base, addrs[i]);
    mem_space_destroy(&m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mem");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, alloc_find_free);
    tcase_add_test(tc, many_allocations_stay_sorted);
    tcase_add_test(tc, granule_layout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
