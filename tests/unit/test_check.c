/* Unit tests of the checker room (src/check/) through the C API: global
 * initcheck against host copies and memsets and noted host reads and
 * writes (kemu_note_host_read/write), memcheck's leak, invalid and
 * double free reports and accesses to freed memory, register initcheck,
 * racecheck reports that are identical for every thread count and
 * schedule, the racecheck levels, the finding groups that merge the
 * host threads' findings, and racecheck's order across streams. Kernels come from tests/check/ (CHECK_KERNELS_DIR). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_internal.h"
#include "exec/exec.h"
#include "util.h"

#ifndef CHECK_KERNELS_DIR
#define CHECK_KERNELS_DIR "tests/check"
#endif

static kemu_device *device(unsigned tools, int threads, const char *schedule)
{
    kemu_device *d;
    kemu_error err;
    kemu_device_config cfg = {NULL, threads, schedule, 0, 0};
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
    kemu_check_config cc = {tools, KEMU_CHECK_WARN, KEMU_CHECK_WARN, 1};
    ck_assert_int_eq(kemu_device_set_checks(d, &cc, &err), KEMU_OK);
    return d;
}

static kemu_kernel *kernel(kemu_device *d, const char *file, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CHECK_KERNELS_DIR, file);
    kemu_error err;
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx_file(d, path, &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    return k;
}

/* The report text (caller frees) and its error count. */
static char *results(kemu_device *d, size_t *errors)
{
    kemu_check_summary s;
    kemu_error err;
    ck_assert_int_eq(kemu_check_results(d, 0, &s, &err), KEMU_OK);
    char *text = strdup(s.text);
    if (errors)
        *errors = s.errors;
    kemu_check_summary_free(&s);
    return text;
}

#define HAS(text, line) ck_assert_msg(strstr((text), (line)) != NULL, "missing '%s' in:\n%s", (line), (text))

/* ---- initcheck on global memory --------------------------------------------- */

/* The host writes the first half of the input: the kernel's reads of the
 * second half are reported, once per thread; a memset or a full copy
 * initializes it. */
START_TEST(init_global_partial_copy)
{
    for (int variant = 0; variant < 3; variant++) {
        kemu_device *d = device(KEMU_TOOL_INITCHECK, 1, NULL);
        kemu_kernel *k = kernel(d, "mem.ptx", "global_read");
        kemu_error err;
        uint64_t in, out;
        float host[64];
        for (int i = 0; i < 64; i++)
            host[i] = (float)i;
        ck_assert_int_eq(kemu_malloc(d, sizeof host, KEMU_UNINIT_NAN, &in, &err), KEMU_OK);
        ck_assert_int_eq(kemu_malloc(d, sizeof host, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
        if (variant == 0)
            ck_assert_int_eq(kemu_memcpy_htod(d, in, host, 32 * sizeof(float), &err), KEMU_OK);
        else if (variant == 1)
            ck_assert_int_eq(kemu_memset(d, in, 0, sizeof host, &err), KEMU_OK);
        else
            ck_assert_int_eq(kemu_memcpy_htod(d, in, host, sizeof host, &err), KEMU_OK);
        void *args[] = {&in, &out};
        kemu_launch_config lc = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
        ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
        size_t errors;
        char *text = results(d, &errors);
        if (variant == 0) {
            ck_assert_uint_eq(errors, 1);
            HAS(text, "========= Error: Uninitialized __global__ memory read of size 4 bytes\n"
                      "=========     at global_read+");
            HAS(text, "mem.ptx:");
            char line[256];
            snprintf(line, sizeof line, "=========     by thread (32,0,0) in block (0,0,0)\n"
                                        "=========     Address 0x%llx (allocation #2 + 128); 31 more threads\n",
                     (unsigned long long)(in + 128));
            HAS(text, line);
        } else {
            ck_assert_uint_eq(errors, 0);
            HAS(text, "========= ERROR SUMMARY: 0 errors\n");
        }
        free(text);
        kemu_free(d, in, &err);
        kemu_free(d, out, &err);
        kemu_device_destroy(d);
    }
}
END_TEST

/* Host-side library code working in place (kemu's cuBLAS): a noted read of
 * a pitched range reports its never-written bytes in one finding naming
 * the reader; a noted write initializes bytes for a later kernel read;
 * ranges outside an allocation are refused. */
START_TEST(init_global_host_notes)
{
    kemu_device *d = device(KEMU_TOOL_INITCHECK, 1, NULL);
    kemu_kernel *k = kernel(d, "mem.ptx", "global_read");
    kemu_error err;
    uint64_t in, out;
    ck_assert_int_eq(kemu_malloc(d, 64 * sizeof(float), KEMU_UNINIT_NAN, &in, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, 64 * sizeof(float), KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    /* rows 0 and 2 of a 4-row, 16-byte-pitch view of in are written */
    ck_assert_int_eq(kemu_note_host_write(d, in, 8, &err), KEMU_OK);
    ck_assert_int_eq(kemu_note_host_write(d, in + 32, 8, &err), KEMU_OK);
    /* 3 rows of 8 bytes 16 apart: only row 1 (bytes 16..23) is unwritten */
    ck_assert_int_eq(kemu_note_host_read(d, in, 8, 3, 16, "lib argument X", &err), KEMU_OK);
    size_t errors;
    char *text = results(d, &errors);
    ck_assert_uint_eq(errors, 1);
    char line[256];
    snprintf(line, sizeof line,
             "========= Error: Uninitialized __global__ memory read by lib argument X: 8 of its 24 bytes never "
             "written\n=========     Address 0x%llx (allocation #2 + 16) is the first\n",
             (unsigned long long)(in + 16));
    HAS(text, line);
    free(text);
    /* a read of written bytes only adds nothing */
    ck_assert_int_eq(kemu_note_host_read(d, in, 8, 2, 32, "lib argument Y", &err), KEMU_OK);
    text = results(d, &errors);
    ck_assert_uint_eq(errors, 1);
    free(text);
    /* after a noted write of all of it, a kernel's reads are clean */
    ck_assert_int_eq(kemu_note_host_write(d, in, 64 * sizeof(float), &err), KEMU_OK);
    void *args[] = {&in, &out};
    kemu_launch_config lc = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    text = results(d, &errors);
    ck_assert_msg(errors == 1, "%s", text);
    free(text);
    /* outside any allocation */
    ck_assert_int_eq(kemu_note_host_write(d, in + 60 * sizeof(float), 64, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_note_host_read(d, in, 8, 9, 32, "lib", &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_free(d, in, &err);
    kemu_free(d, out, &err);
    kemu_device_destroy(d);
}
END_TEST

/* A kernel's own stores initialize the memory that a later launch reads. */
START_TEST(init_global_kernel_writes)
{
    kemu_device *d = device(KEMU_TOOL_INITCHECK, 2, NULL);
    kemu_kernel *w = kernel(d, "mem.ptx", "oob_write");
    kemu_kernel *r = kernel(d, "mem.ptx", "global_read");
    kemu_error err;
    uint64_t a, b;
    ck_assert_int_eq(kemu_malloc(d, 64 * sizeof(float), KEMU_UNINIT_ZERO, &a, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, 64 * sizeof(float), KEMU_UNINIT_ZERO, &b, &err), KEMU_OK);
    unsigned n = 64;
    void *wargs[] = {&a, &n};
    kemu_launch_config lc = {{2, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(w, &lc, wargs, NULL, &err), KEMU_OK);
    void *rargs[] = {&a, &b};
    kemu_launch_config lr = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(r, &lr, rargs, NULL, &err), KEMU_OK);
    size_t errors;
    char *text = results(d, &errors);
    ck_assert_msg(errors == 0, "%s", text);
    free(text);
    kemu_free(d, a, &err);
    kemu_free(d, b, &err);
    kemu_device_destroy(d);
}
END_TEST

/* ---- initcheck on registers ---------------------------------------------------- */

START_TEST(init_register)
{
    kemu_device *d = device(KEMU_TOOL_INITCHECK, 1, NULL);
    kemu_kernel *bad = kernel(d, "regs.ptx", "uninit_reg");
    kemu_kernel *good = kernel(d, "regs.ptx", "init_reg");
    kemu_error err;
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(d, 128, KEMU_UNINIT_ZERO, &out, &err), KEMU_OK);
    void *args[] = {&out};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(good, &lc, args, NULL, &err), KEMU_OK);
    size_t errors;
    char *text = results(d, &errors);
    ck_assert_uint_eq(errors, 0);
    free(text);
    ck_assert_int_eq(kemu_launch(bad, &lc, args, NULL, &err), KEMU_OK);
    text = results(d, &errors);
    ck_assert_uint_eq(errors, 1);
    HAS(text, "========= Error: Uninitialized register %r2 read\n"
              "=========     at uninit_reg+4 (");
    HAS(text, "regs.ptx:14)\n=========     by thread (16,0,0) in block (0,0,0); 15 more threads\n");
    free(text);
    kemu_free(d, out, &err);
    kemu_device_destroy(d);
}
END_TEST

/* ---- memcheck on the host side -------------------------------------------------- */

START_TEST(mem_leaks_and_frees)
{
    kemu_device *d = device(KEMU_TOOL_MEMCHECK, 1, NULL);
    kemu_error err;
    uint64_t a, b;
    ck_assert_int_eq(kemu_malloc(d, 100, KEMU_UNINIT_ZERO, &a, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, 28, KEMU_UNINIT_ZERO, &b, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(d, b + 4, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_free(d, b, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(d, b, &err), KEMU_ERR_INVALID_ARGUMENT);
    size_t errors;
    char *text = results(d, &errors);
    ck_assert_uint_eq(errors, 3);
    char line[256];
    snprintf(line, sizeof line, "========= Error: Invalid free of 0x%llx by kemu_free: not the start of a live device allocation\n",
             (unsigned long long)(b + 4));
    HAS(text, line);
    snprintf(line, sizeof line, "========= Error: Double free of 0x%llx by kemu_free: allocation #2 (28 bytes) was freed before\n",
             (unsigned long long)b);
    HAS(text, line);
    snprintf(line, sizeof line, "========= Error: Leaked 100 bytes at 0x%llx (allocation #1)\n", (unsigned long long)a);
    HAS(text, line);
    HAS(text, "========= LEAK SUMMARY: 100 bytes leaked in 1 allocation\n");
    free(text);
    /* asking again reports the same leak once */
    text = results(d, &errors);
    ck_assert_uint_eq(errors, 3);
    free(text);
    kemu_device_destroy(d);

    /* everything freed: no leak */
    d = device(KEMU_TOOL_MEMCHECK, 1, NULL);
    ck_assert_int_eq(kemu_malloc(d, 100, KEMU_UNINIT_ZERO, &a, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(d, a, &err), KEMU_OK);
    text = results(d, &errors);
    ck_assert_uint_eq(errors, 0);
    ck_assert_ptr_null(strstr(text, "Leaked"));
    free(text);
    kemu_device_destroy(d);
}
END_TEST

/* A kernel given a pointer into a freed allocation: every lane is reported
 * with the allocation it points into. */
START_TEST(mem_freed_access)
{
    kemu_device *d = device(KEMU_TOOL_MEMCHECK, 1, NULL);
    kemu_kernel *k = kernel(d, "mem.ptx", "oob_read");
    kemu_error err;
    uint64_t in, out;
    ck_assert_int_eq(kemu_malloc(d, 64, KEMU_UNINIT_ZERO, &in, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, 64, KEMU_UNINIT_ZERO, &out, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(d, in, &err), KEMU_OK);
    unsigned n = 0;
    void *args[] = {&in, &out, &n};
    kemu_launch_config lc = {{1, 1, 1}, {2, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    kemu_free(d, out, &err);
    size_t errors;
    char *text = results(d, &errors);
    ck_assert_msg(errors == 2, "%s", text);
    char line[512];
    snprintf(line, sizeof line, "========= Invalid __global__ read of size 4 bytes\n=========     at oob_read+");
    HAS(text, line);
    snprintf(line, sizeof line, "=========     by thread (1,0,0) in block (0,0,0)\n"
                                "=========     Address 0x%llx is out of bounds\n"
                                "=========     and is 4 bytes inside allocation #2 at 0x%llx of size 64 bytes, which was freed\n",
             (unsigned long long)(in + 4), (unsigned long long)in);
    HAS(text, line);
    free(text);
    kemu_device_destroy(d);
}
END_TEST

/* ---- racecheck ------------------------------------------------------------------- */

typedef struct race_run { const char *file, *kernel; unsigned grid, block; } race_run;

static char *race_report(const race_run *r, int threads, const char *schedule, kemu_check_level warp)
{
    kemu_device *d;
    kemu_error err;
    kemu_device_config cfg = {NULL, threads, schedule, 0, 0};
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
    kemu_check_config cc = {KEMU_TOOL_RACECHECK, warp, KEMU_CHECK_WARN, 0};
    ck_assert_int_eq(kemu_device_set_checks(d, &cc, &err), KEMU_OK);
    kemu_kernel *k = kernel(d, r->file, r->kernel);
    uint64_t in, out;
    float host[512];
    for (int i = 0; i < 512; i++)
        host[i] = (float)(i % 7);
    ck_assert_int_eq(kemu_malloc(d, sizeof host, KEMU_UNINIT_ZERO, &in, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, sizeof host, KEMU_UNINIT_ZERO, &out, &err), KEMU_OK);
    kemu_memcpy_htod(d, in, host, sizeof host, &err);
    void *args[] = {&in, &out};
    kemu_launch_config lc = {{r->grid, 1, 1}, {r->block, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    char *text = results(d, NULL);
    kemu_device_destroy(d);
    return text;
}

/* The full report of racy kernels is the same for 1 and 2 host threads and
 * for several schedules. */
START_TEST(race_reports_deterministic)
{
    static const race_run runs[] = {
        {"race.ptx", "shared_raw", 1, 64}, {"race.ptx", "shared_war", 1, 64},
        {"race.ptx", "warp_hazard", 1, 32}, {"race.ptx", "global_block", 1, 64},
        {"race.ptx", "global_block_strided", 1, 64},
        {"race.ptx", "global_blocks", 8, 32}, {"race.ptx", "named_barrier_broken", 1, 64},
        {"race.ptx", "async_copy_broken", 1, 64}, {"race.ptx", "mbarrier_pc_broken", 1, 64},
        {"cluster.ptx", "cluster_race", 2, 32}, {"cluster.ptx", "bulk_copy_broken", 1, 64},
        {"race.ptx", "global_strided_hit", 1, 64}, {"race.ptx", "global_strided_columns", 1, 64},
        {"race.ptx", "global_strided_blocks_hit", 2, 32}, {"race.ptx", "global_strided_columns_all", 1, 64},
        {"race.ptx", "global_strided_reversed", 1, 64},
    };
    static const struct { int threads; const char *schedule; } configs[] = {
        {2, NULL}, {1, "random:1"}, {2, "random:2"}, {1, "random:99"}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char *base = race_report(&runs[i], 1, NULL, KEMU_CHECK_WARN);
        ck_assert_msg(strstr(base, "Race reported between"), "%s: no race in\n%s", runs[i].kernel, base);
        for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
            char *other = race_report(&runs[i], configs[c].threads, configs[c].schedule, KEMU_CHECK_WARN);
            ck_assert_msg(!strcmp(base, other), "%s differs with %d threads, schedule %s:\n%s\nversus\n%s",
                          runs[i].kernel, configs[c].threads, configs[c].schedule ? configs[c].schedule : "default",
                          base, other);
            free(other);
        }
        free(base);
    }
}
END_TEST

/* Fixed twins and race-free patterns report nothing. */
START_TEST(race_free_kernels)
{
    static const race_run runs[] = {
        {"race.ptx", "shared_raw_fixed", 1, 64}, {"race.ptx", "shared_war_fixed", 1, 64},
        {"race.ptx", "shared_waw_fixed", 1, 64}, {"race.ptx", "warp_hazard_fixed", 1, 32},
        {"race.ptx", "global_blocks_atomic", 8, 32}, {"race.ptx", "global_block_fixed", 1, 64},
        {"race.ptx", "global_block_strided_fixed", 1, 64},
        {"race.ptx", "named_barrier", 1, 64}, {"race.ptx", "async_copy", 1, 64},
        {"race.ptx", "mbarrier_pc", 1, 64}, {"cluster.ptx", "cluster_race_fixed", 2, 32},
        {"cluster.ptx", "bulk_copy", 1, 64}, {"race.ptx", "global_strided_gaps", 1, 64},
        {"race.ptx", "global_strided_halves", 1, 64}, {"race.ptx", "global_strided_blocks", 2, 32},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char *text = race_report(&runs[i], 2, "random:5", KEMU_CHECK_WARN);
        ck_assert_msg(strstr(text, "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"), "%s:\n%s",
                      runs[i].kernel, text);
        free(text);
    }
}
END_TEST

/* Lanes at strided elements (each warp's access logged as a few ranges
 * with gaps): a write to one lane's element names that lane, and every
 * element written counts as an instance, as with one range per lane. */
START_TEST(race_strided_lanes)
{
    static const struct { race_run run; const char *threads, *collapsed; } cases[] = {
        {{"race.ptx", "global_strided_hit", 1, 64}, "threads (5,0,0) and (40,0,0) of block (0,0,0)\n", NULL},
        {{"race.ptx", "global_strided_columns", 1, 64}, "threads (10,0,0) and (41,0,0) of block (0,0,0)\n", NULL},
        {{"race.ptx", "global_strided_reversed", 1, 64}, "threads (11,0,0) and (45,0,0) of block (0,0,0)\n", NULL},
        {{"race.ptx", "global_strided_blocks_hit", 2, 32},
         "thread (3,0,0) of block (1,0,0) and thread (6,0,0) of block (0,0,0)\n", NULL},
        {{"race.ptx", "global_strided_all", 1, 64}, "threads (0,0,0) and (32,0,0) of block (0,0,0)",
         "; 31 more instances collapsed\n"},
        {{"race.ptx", "global_strided_columns_all", 1, 64}, "threads (0,0,0) and (35,0,0) of block (0,0,0)",
         "; 31 more instances collapsed\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = race_report(&cases[i].run, 1, NULL, KEMU_CHECK_WARN);
        HAS(text, "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)");
        HAS(text, cases[i].threads);
        if (cases[i].collapsed) {
            char line[160];
            snprintf(line, sizeof line, "%s%s", cases[i].threads, cases[i].collapsed);
            HAS(text, line);
        } else {
            ck_assert_msg(!strstr(text, "collapsed"), "%s:\n%s", cases[i].run.kernel, text);
        }
        free(text);
    }
}
END_TEST

/* A random range of elements within [0, 512): contiguous, one row of
 * strided elements, or rows of them; *covered marks its bytes. */
static race_elems random_elems(unsigned *seed, uint8_t covered[512])
{
    memset(covered, 0, 512);
    uint32_t esize = 1u << (rand_r(seed) % 3), shape = (uint32_t)rand_r(seed) % 4;
    uint64_t start = (uint64_t)(rand_r(seed) % 64);
    if (shape == 0) { /* contiguous */
        uint64_t len = esize * (1 + (uint64_t)(rand_r(seed) % 32));
        memset(covered + start, 1, len);
        return race_elems_of(start, start + len, esize, esize, 1, 1, 0, 0);
    }
    /* shape 3: rows of consecutive lanes at consecutive elements */
    uint32_t pitch = shape == 3 ? esize : esize + (uint32_t)(rand_r(seed) % 6), cols = 2 + (uint32_t)(rand_r(seed) % 6);
    uint32_t rows = shape == 1 ? 1 : 2 + (uint32_t)(rand_r(seed) % 4);
    uint64_t rpitch = (uint64_t)(cols - 1) * pitch + esize + (uint64_t)(rand_r(seed) % 9);
    uint64_t end = 0;
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++) {
            uint64_t e = start + i * rpitch + j * pitch;
            memset(covered + e, 1, esize);
            end = e + esize;
        }
    return race_elems_of(start, end, esize, pitch, shape == 3 ? 1 : 2, rows, rows > 1 ? cols : 0, rpitch);
}

/* race_piece finds exactly the bytes two ranges both cover, in increasing
 * pieces that never cross the end of an element of a strided range. */
/* util_sort, which orders racecheck's logs: the same order as a stable
 * reference sort, for inputs in order, reversed, made of interleaved
 * ascending runs (as warps append), random, and with many equal keys
 * (whose order it must keep). */
typedef struct sort_item {
    uint32_t key, seq;
} sort_item;

static int cmp_sort_key(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_sort_stable(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    int c = cmp_sort_key(a, b);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

START_TEST(util_sort_stable_runs)
{
    enum { N = 5000 };
    static sort_item got[N], want[N];
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int shape = 0; shape < 6; shape++) {
        for (int trial = 0; trial < 20; trial++) {
            size_t n = trial == 0 ? (size_t)shape : 1 + (size_t)((rng >> 33) % N);
            unsigned runs = 1 + (unsigned)(trial % 9);
            for (size_t i = 0; i < n; i++) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t x = (uint32_t)(rng >> 33);
                uint32_t key = shape == 0   ? (uint32_t)i
                             : shape == 1 ? (uint32_t)(n - i)
                             : shape == 2 ? (uint32_t)(i / runs + (i % runs) * 7) /* runs interleaved */
                             : shape == 3 ? (uint32_t)((i % (n / runs + 1)) * 3 + i / (n / runs + 1)) /* runs appended */
                             : shape == 4 ? x
                                          : x % 5; /* many equal keys */
                got[i] = (sort_item){key, (uint32_t)i};
            }
            memcpy(want, got, n * sizeof *got);
            qsort(want, n, sizeof *want, cmp_sort_stable);
            util_sort(got, n, sizeof *got, cmp_sort_key);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(got[i].key == want[i].key && got[i].seq == want[i].seq,
                              "shape %d, n %zu: element %zu is (%u, %u), want (%u, %u)", shape, n, i, got[i].key,
                              got[i].seq, want[i].key, want[i].seq);
        }
    }
}
END_TEST

START_TEST(race_pieces_exact)
{
    unsigned seed = 12345;
    uint8_t ca[512], cb[512];
    for (int trial = 0; trial < 20000; trial++) {
        race_elems a = random_elems(&seed, ca), b = random_elems(&seed, cb);
        uint8_t got[512] = {0};
        uint64_t x = 0, lo, hi, prev = 0;
        while (race_piece(&a, &b, &x, &lo, &hi)) {
            ck_assert(lo < hi && lo >= prev && hi <= 512);
            for (uint64_t k = lo; k < hi; k++) {
                ck_assert_msg(!got[k], "trial %d: byte %llu twice", trial, (unsigned long long)k);
                got[k] = 1;
            }
            if (a.each && !a.row_whole)
                ck_assert_msg((lo - a.start) % (a.rows > 1 ? a.rpitch : (uint64_t)-1) % a.pitch + (hi - lo) <= a.esize,
                              "trial %d: piece [%llu, %llu) crosses an element of a", trial,
                              (unsigned long long)lo, (unsigned long long)hi);
            prev = hi;
        }
        for (int k = 0; k < 512; k++)
            ck_assert_msg(got[k] == (ca[k] && cb[k]), "trial %d: byte %d: got %d, a %d, b %d", trial, k, got[k], ca[k],
                          cb[k]);
    }
}
END_TEST

/* --racecheck-warp: a warning by default, an error, or nothing. */
START_TEST(race_warp_levels)
{
    race_run r = {"race.ptx", "warp_hazard", 1, 32};
    char *warn = race_report(&r, 1, NULL, KEMU_CHECK_WARN);
    HAS(warn, "========= Warning: Race reported between Write access at warp_hazard+");
    HAS(warn, "[RAW hazard between lanes of one warp, no __syncwarp between them]\n");
    HAS(warn, "=========     threads (0,0,0) and (1,0,0) of block (0,0,0); 31 more instances collapsed\n");
    HAS(warn, "RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)");
    char *error = race_report(&r, 1, NULL, KEMU_CHECK_ERROR);
    HAS(error, "========= Error: Race reported between Write access at warp_hazard+");
    HAS(error, "ERROR SUMMARY: 1 error");
    char *off = race_report(&r, 1, NULL, KEMU_CHECK_OFF);
    HAS(off, "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)");
    /* auto: race.ptx targets sm_80 (independent thread scheduling) */
    char *autolevel = race_report(&r, 1, NULL, KEMU_CHECK_AUTO);
    HAS(autolevel, "========= Error: Race reported between Write access at warp_hazard+");
    HAS(autolevel, "ERROR SUMMARY: 1 error");
    free(warn);
    free(error);
    free(off);
    free(autolevel);
}
END_TEST

/* ---- races between lanes of one warp (tests/check/warp.cu) -------------------------- */

/* The racecheck report of kernel `name` of warp.ptx on one warp, with
 * --racecheck-warp auto: in[i] = i (64 ints), out (128 ints), and n = 3
 * for the kernels that take a count. */
static char *warp_report(const char *name, int threads, const char *schedule, size_t *errors)
{
    kemu_device *d;
    kemu_error err;
    kemu_device_config cfg = {NULL, threads, schedule, 0, 0};
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
    kemu_check_config cc = {KEMU_TOOL_RACECHECK, KEMU_CHECK_AUTO, KEMU_CHECK_WARN, 0};
    ck_assert_int_eq(kemu_device_set_checks(d, &cc, &err), KEMU_OK);
    kemu_kernel *k = kernel(d, "warp.ptx", name);
    uint64_t in, out;
    int host[64], n = 3;
    for (int i = 0; i < 64; i++)
        host[i] = i;
    ck_assert_int_eq(kemu_malloc(d, sizeof host, KEMU_UNINIT_ZERO, &in, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d, 2 * sizeof host, KEMU_UNINIT_ZERO, &out, &err), KEMU_OK);
    kemu_memcpy_htod(d, in, host, sizeof host, &err);
    void *args[] = {&in, &out, &n};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    char *text = results(d, errors);
    kemu_device_destroy(d);
    return text;
}

/* Conflicting accesses of two lanes of one warp with no warp sync between
 * them are errors on sm_70+, whatever order the lanes ran in: divergent
 * branches, a write before reconvergence and a read after it, one store
 * run at different times by different lanes (a loop), two lanes of one
 * store instruction, and a sync of one branch's lanes that leaves the
 * other branch unordered. The report is the same for every thread count
 * and schedule. */
START_TEST(warp_races_found)
{
    static const struct { const char *kernel, *line; } runs[] = {
        {"branches_waw", "[WAW hazard between lanes of one warp, no __syncwarp between them]"},
        {"branches_waw_global", "[WAW hazard between lanes of one warp, no __syncwarp between them]"},
        {"reconverge_raw", "[RAW hazard between lanes of one warp, no __syncwarp between them]"},
        {"loop_waw", "Write access at loop_waw+"},
        {"loop_waw_global", "Write access at loop_waw_global+"},
        {"one_store_waw", "Write access at one_store_waw+"},
        {"one_store_waw_global", "in __global__ memory"},
        {"partial_sync_raw", "[RAW hazard between lanes of one warp, no __syncwarp between them]"},
    };
    static const struct { int threads; const char *schedule; } configs[] = {{2, NULL}, {1, "random:1"}, {2, "random:7"}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        size_t errors;
        char *base = warp_report(runs[i].kernel, 1, NULL, &errors);
        ck_assert_msg(errors >= 1, "%s: no error in\n%s", runs[i].kernel, base);
        HAS(base, runs[i].line);
        for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
            char *other = warp_report(runs[i].kernel, configs[c].threads, configs[c].schedule, NULL);
            ck_assert_msg(!strcmp(base, other), "%s differs with %d threads, schedule %s:\n%s\nversus\n%s",
                          runs[i].kernel, configs[c].threads, configs[c].schedule ? configs[c].schedule : "default",
                          base, other);
            free(other);
        }
        free(base);
    }
}
END_TEST

/* The fixed twins and race-free warp idioms (a lane's own words, shuffle
 * reductions, a leader chosen by a vote) report nothing; lanes of one store
 * storing the same value are a warning. */
START_TEST(warp_race_free)
{
    static const char *const clean[] = {"branches_waw_fixed", "reconverge_raw_fixed", "loop_waw_fixed",
                                        "loop_waw_global_fixed", "one_store_fixed", "partial_sync_fixed",
                                        "own_words", "shuffle_reduce", "vote_leader"};
    for (size_t i = 0; i < sizeof clean / sizeof *clean; i++) {
        char *text = warp_report(clean[i], 2, "random:3", NULL);
        ck_assert_msg(strstr(text, "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"), "%s:\n%s",
                      clean[i], text);
        free(text);
    }
    size_t errors;
    char *same = warp_report("one_store_same", 1, NULL, &errors);
    ck_assert_uint_eq(errors, 0);
    HAS(same, "========= Warning: Race reported between Write access at one_store_same+");
    HAS(same, "[WAW hazard between lanes of one warp, both store the same value]");
    free(same);
}
END_TEST

/* Without tools no hooks are installed, so the interpreter runs unchecked. */
START_TEST(no_tools_no_hooks)
{
    kemu_check_config none = {0, KEMU_CHECK_WARN, KEMU_CHECK_WARN, 0};
    check_session *s = check_session_create(&none);
    ck_assert_ptr_nonnull(s);
    vm_launch L;
    memset(&L, 0, sizeof L);
    ck_assert_ptr_null(check_launch_begin(s, &L));
    check_launch_end(s, &L, NULL);
    check_session_destroy(s);
}
END_TEST

/* ---- racecheck across streams (race_stream.c) ------------------------------------------ */

static check_session *race_session(void)
{
    kemu_check_config cfg = {KEMU_TOOL_RACECHECK, KEMU_CHECK_WARN, KEMU_CHECK_WARN, 0};
    check_session *s = check_session_create(&cfg);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* One operation of stream st touching [lo, hi). */
static void stream_op(check_session *s, const check_stream *st, const char *what, uint64_t lo, uint64_t hi,
                      int write)
{
    check_order_begin(s, NULL, st->device, st, what, 0);
    check_order_access(lo, hi - lo, write);
    check_order_end();
}

static int last_finding_has(check_session *s, const char *text)
{
    return s->nfindings && strstr(s->findings[s->nfindings - 1].text, text) != NULL;
}

START_TEST(stream_order_model)
{
    check_session *s = race_session();
    check_stream a = {100, 0, CHECK_STREAM_BLOCKING, "stream A"}, b = {200, 0, CHECK_STREAM_NONBLOCKING, "stream B"};
    check_stream legacy = {1, 0, CHECK_STREAM_LEGACY, "the legacy stream"};
    check_stream other = {300, 1, CHECK_STREAM_BLOCKING, "stream C of device 1"};
    /* unordered: one finding naming both sides, once per pair of sides */
    stream_op(s, &a, "writeA", 0x1000, 0x1100, 1);
    stream_op(s, &b, "readB", 0x10f0, 0x1200, 0);
    ck_assert_uint_eq(check_session_count(s), 1);
    ck_assert(last_finding_has(s, "Write access by writeA"));
    ck_assert(last_finding_has(s, "and Read access by readB [RAW hazard]"));
    ck_assert(last_finding_has(s, "between writeA on stream A and readB on stream B"));
    stream_op(s, &b, "readB", 0x1000, 0x1010, 0);
    ck_assert_uint_eq(check_session_count(s), 1);
    /* reads of both sides, or disjoint bytes: nothing */
    stream_op(s, &a, "readA", 0x1000, 0x1100, 0);
    stream_op(s, &b, "writeB", 0x1100, 0x1200, 1);
    ck_assert_uint_eq(check_session_count(s), 1);
    /* an event orders B after A's work before the record, not after */
    stream_op(s, &a, "writeA2", 0x2000, 0x2100, 1);
    check_order_event_record(77, &a);
    stream_op(s, &a, "writeA3", 0x2100, 0x2200, 1);
    check_order_event_wait(&b, 77);
    stream_op(s, &b, "readB2", 0x2000, 0x2100, 0);
    ck_assert_uint_eq(check_session_count(s), 1);
    stream_op(s, &b, "readB3", 0x2100, 0x2200, 0);
    ck_assert_uint_eq(check_session_count(s), 2);
    ck_assert(last_finding_has(s, "writeA3"));
    /* the legacy stream orders blocking streams, not non-blocking ones */
    stream_op(s, &legacy, "setL", 0x3000, 0x3100, 1);
    stream_op(s, &a, "readA4", 0x3000, 0x3100, 0);
    ck_assert_uint_eq(check_session_count(s), 2);
    stream_op(s, &b, "readB4", 0x3000, 0x3100, 0);
    ck_assert_uint_eq(check_session_count(s), 3);
    stream_op(s, &a, "writeA5", 0x4000, 0x4100, 1);
    stream_op(s, &legacy, "readL", 0x4000, 0x4100, 0);
    ck_assert_uint_eq(check_session_count(s), 3);
    /* the host waits for a stream: work issued afterwards is ordered */
    stream_op(s, &b, "writeB6", 0x5000, 0x5100, 1);
    check_order_stream_sync(&b);
    stream_op(s, &a, "readA6", 0x5000, 0x5100, 0);
    ck_assert_uint_eq(check_session_count(s), 3);
    /* a collective orders its parties' streams after every party's work */
    stream_op(s, &other, "writeC", 0x6000, 0x6100, 1);
    check_stream parties[2] = {a, other};
    check_order_join(parties, 2);
    stream_op(s, &a, "readA7", 0x6000, 0x6100, 0);
    ck_assert_uint_eq(check_session_count(s), 3);
    /* another device's stream is like any other */
    stream_op(s, &other, "writeC2", 0x7000, 0x7100, 1);
    stream_op(s, &b, "readB8", 0x7000, 0x7100, 0);
    ck_assert_uint_eq(check_session_count(s), 4);
    /* new memory forgets what was done there before */
    stream_op(s, &other, "writeC3", 0x8000, 0x8100, 1);
    check_order_forget_range(0x8000, 0x100);
    stream_op(s, &b, "readB9", 0x8000, 0x8100, 0);
    ck_assert_uint_eq(check_session_count(s), 4);
    check_session_destroy(s);
}
END_TEST

/* Clocks widen as streams appear, also while an operation is pending
 * (a legacy copy that reaches another device's legacy stream) and during
 * a collective of new streams. */
START_TEST(stream_order_many_streams)
{
    check_session *s = race_session();
    check_stream st[80];
    char names[80][32];
    for (int i = 0; i < 80; i++) {
        snprintf(names[i], sizeof names[i], "stream %d", i);
        st[i] = (check_stream){1000 + (uint64_t)i, i % 4, CHECK_STREAM_NONBLOCKING, names[i]};
    }
    for (int i = 0; i < 15; i++)
        stream_op(s, &st[i], "write", 0x1000 * (uint64_t)(i + 1), 0x1000 * (uint64_t)(i + 1) + 16, 1);
    ck_assert_uint_eq(check_session_count(s), 0);
    check_stream legacy0 = {1, 0, CHECK_STREAM_LEGACY, "legacy 0"};
    check_order_begin(s, NULL, 0, &legacy0, "copy", 1);
    for (int i = 15; i < 19; i++)
        check_order_also(&st[i]); /* new streams: 15 + 1 + 4 agents, past the first width */
    check_order_access(0x1000, 16, 0);
    check_order_end();
    ck_assert_uint_eq(check_session_count(s), 1); /* stream 0's write, unordered with the copy's read */
    check_order_join(st + 19, 61);                   /* 61 new streams at once */
    stream_op(s, &st[79], "read", 0x2000, 0x2010, 0); /* stream 1's write: still unordered */
    ck_assert_uint_eq(check_session_count(s), 2);
    stream_op(s, &st[18], "read", 0x1000, 0x1010, 0); /* after the copy (also), not after stream 0 */
    ck_assert_uint_eq(check_session_count(s), 3);
    check_session_destroy(s);
}
END_TEST

/* Operations are forgotten once the host and every stream are ordered
 * after them: a long program synchronizing now and then keeps few. */
START_TEST(stream_order_bounded)
{
    check_session *s = race_session();
    check_stream a = {100, 0, CHECK_STREAM_NONBLOCKING, "stream A"}, b = {200, 0, CHECK_STREAM_NONBLOCKING, "stream B"};
    size_t most = 0;
    for (int i = 0; i < 10000; i++) {
        stream_op(s, &a, "write", 0x1000, 0x2000, 1);
        check_order_event_record(1, &a);
        check_order_event_wait(&b, 1);
        stream_op(s, &b, "read", 0x1000, 0x2000, 0);
        check_order_event_record(2, &b);
        check_order_event_wait(&a, 2);
        if (i % 100 == 99)
            check_order_device_sync(0);
        if (check_order_kept() > most)
            most = check_order_kept();
    }
    ck_assert_uint_eq(check_session_count(s), 0);
    ck_assert_uint_le(most, 200);
    check_order_device_sync(0);
    ck_assert_uint_eq(check_order_kept(), 0);
    /* without synchronization, a stream's older operations wait for the others */
    stream_op(s, &a, "write", 0x1000, 0x2000, 1);
    stream_op(s, &b, "read", 0x1000, 0x2000, 0);
    ck_assert_uint_eq(check_session_count(s), 1);
    ck_assert_uint_eq(check_order_kept(), 2);
    check_session_destroy(s);
    ck_assert_uint_eq(check_order_kept(), 0);
}
END_TEST

/* ---- finding groups --------------------------------------------------------------- */

START_TEST(groups_merge)
{
    check_set set = {0};
    ck_assert_int_eq(check_set_add(&set, 0), 1);
    ck_assert_int_eq(check_set_add(&set, 0), 0);
    for (uint64_t v = 1; v <= 1000; v++)
        ck_assert_int_eq(check_set_add(&set, v * 977), 1);
    ck_assert_int_eq(check_set_add(&set, 977), 0);
    ck_assert_uint_eq(check_set_size(&set), 1001);
    ck_assert(check_set_has(&set, 0) && check_set_has(&set, 977 * 1000) && !check_set_has(&set, 978));
    check_set_free(&set);

    /* two threads saw overlapping instances of one group: the merge is the
     * union, and the smallest representative wins whatever the order */
    check_groups a = {0}, b = {0};
    uint64_t id[3] = {1, 2, 3}, other[3] = {1, 2, 4};
    check_rep r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    r1.order[0] = 5;
    r1.tid[0] = 1;
    r2.order[0] = 3;
    r2.tid[0] = 2;
    check_group *ga = check_groups_get(&a, KEMU_TOOL_RACECHECK, CHECK_ERROR, id);
    check_group_note(ga, 10, &r1);
    check_group_note(ga, 11, &r1);
    check_group *gb = check_groups_get(&b, KEMU_TOOL_RACECHECK, CHECK_ERROR, id);
    check_group_note(gb, 11, &r2);
    check_group_note(gb, 12, &r2);
    gb->extra = 5;
    check_group_note(check_groups_get(&b, KEMU_TOOL_RACECHECK, CHECK_ERROR, other), 1, &r1);
    check_groups_merge(&a, &b);
    ck_assert_uint_eq(a.n, 2);
    check_group *g = check_groups_get(&a, KEMU_TOOL_RACECHECK, CHECK_ERROR, id);
    ck_assert_uint_eq(check_group_count(g), 3 + 5);
    ck_assert_uint_eq(g->rep.tid[0], 2);
    ck_assert_uint_eq(b.n, 0);
    check_groups_free(&a);
    check_groups_free(&b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, init_global_partial_copy);
    tcase_add_test(tc, init_global_kernel_writes);
    tcase_add_test(tc, init_global_host_notes);
    tcase_add_test(tc, init_register);
    tcase_add_test(tc, mem_leaks_and_frees);
    tcase_add_test(tc, mem_freed_access);
    tcase_add_test(tc, race_reports_deterministic);
    tcase_add_test(tc, race_free_kernels);
    tcase_add_test(tc, race_strided_lanes);
    tcase_add_test(tc, race_pieces_exact);
    tcase_add_test(tc, util_sort_stable_runs);
    tcase_add_test(tc, race_warp_levels);
    tcase_add_test(tc, warp_races_found);
    tcase_add_test(tc, warp_race_free);
    tcase_add_test(tc, no_tools_no_hooks);
    tcase_add_test(tc, groups_merge);
    tcase_add_test(tc, stream_order_model);
    tcase_add_test(tc, stream_order_bounded);
    tcase_add_test(tc, stream_order_many_streams);
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
