/* Unit tests of launch plans (include/kemu/plan.h) over the kernels of
 * tests/plan/plan.cu: operands of every kind (in, out, inout, scratch,
 * shared, value, an aliased output), the emulator alone and both backends
 * through the libcuda stand-in (tests/cuda-standin/), a missing GPU, the
 * output-file checks, faults with and without keep_outputs, and a failing
 * output write that leaves no output written. */
#include "config.h"
#include "kemu/kemu.h"
#include "kemu/plan.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#ifndef PLAN_PTX
#error "PLAN_PTX must name tests/plan/plan.ptx"
#endif
#ifndef CUDA_STANDIN_LIBRARY
#error "CUDA_STANDIN_LIBRARY must name the stand-in libcuda.so.1"
#endif

#define N 200

static kemu_device *dev;
static kemu_module *mod;
static char dir[256];

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = 1;
    ck_assert_msg(kemu_device_create(&cfg, &dev, &err) == KEMU_OK, "%s", err.message);
    ck_assert_msg(kemu_module_load_ptx_file(dev, PLAN_PTX, &mod, &err) == KEMU_OK, "%s", err.message);
    snprintf(dir, sizeof dir, "/tmp/kemu-test-plan-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("KEMU_CUDA_LIBRARY", CUDA_STANDIN_LIBRARY, 1);
    unsetenv("KEMU_STANDIN_PERTURB");
}

static void teardown(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    kemu_device_destroy(dev);
}

static kemu_kernel *kernel(const char *name)
{
    kemu_kernel *k;
    kemu_error err;
    ck_assert_msg(kemu_module_get_kernel(mod, name, &k, &err) == KEMU_OK, "%s", err.message);
    return k;
}

static kemu_plan_config config(unsigned grid, unsigned block, int backends)
{
    kemu_plan_config pc;
    memset(&pc, 0, sizeof pc);
    pc.launch.grid[0] = grid;
    pc.launch.block[0] = block;
    pc.backends = backends;
    pc.ptx_path = PLAN_PTX;
    pc.uninit = KEMU_UNINIT_NAN;
    return pc;
}

static kemu_operand buffer(kemu_operand_kind kind, const char *dtype, size_t n, void *data)
{
    kemu_operand op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.dtype = dtype;
    op.ndim = 1;
    op.shape[0] = n;
    op.data = data;
    return op;
}

static kemu_operand value(const void *v, size_t size)
{
    kemu_operand op;
    memset(&op, 0, sizeof op);
    op.kind = KEMU_OPERAND_VALUE;
    op.value = v;
    op.size = size;
    return op;
}

static void add(kemu_plan *p, kemu_operand op)
{
    kemu_error err;
    ck_assert_msg(kemu_plan_add(p, &op, &err) == KEMU_OK, "%s", err.message);
}

static char *file_in(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int files_in_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* operands(x, y, acc, scratch, smem, a, n) with every kind, on the given backends */
static kemu_plan *operands_plan(int backends, float *x, float *y, float *acc, const float *a, const int *n)
{
    kemu_plan *p;
    kemu_error err;
    kemu_plan_config pc = config((N + 63) / 64, 64, backends);
    ck_assert_msg(kemu_plan_create(kernel("operands"), &pc, &p, &err) == KEMU_OK, "%s", err.message);
    add(p, buffer(KEMU_OPERAND_IN, "f32", N, x));
    kemu_operand out = buffer(KEMU_OPERAND_OUT, "f32", N, y);
    out.output_file = file_in("y.npy");
    add(p, out);
    kemu_operand inout = buffer(KEMU_OPERAND_INOUT, "f32", N, acc);
    inout.output_file = file_in("acc.npy");
    add(p, inout);
    add(p, buffer(KEMU_OPERAND_SCRATCH, "f32", N, NULL));
    add(p, buffer(KEMU_OPERAND_SHARED, "f32", 32, NULL));
    add(p, value(a, sizeof *a));
    add(p, value(n, sizeof *n));
    return p;
}

static void fill_inputs(float *x, float *y, float *acc)
{
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 12345.0f; /* an OUT starts with the fill, whatever the caller left there */
        acc[i] = 100.0f + (float)i;
    }
}

static void check_operands(const float *x, const float *y, const float *acc, float a)
{
    for (int i = 0; i < N; i++) {
        ck_assert_float_eq(y[i], a * x[i] + (float)((i % 64) % 32));
        ck_assert_float_eq(acc[i], 100.0f + (float)i + x[i]);
    }
}

START_TEST(test_every_kind_on_the_emulator)
{
    float x[N], y[N], acc[N], a = 3.0f;
    int n = N;
    fill_inputs(x, y, acc);
    kemu_plan *p = operands_plan(KEMU_BACKEND_EMULATOR, x, y, acc, &a, &n);
    kemu_plan_result r;
    kemu_error err;
    ck_assert_msg(kemu_plan_run(p, &r, &err) == KEMU_OK, "%s", err.message);
    check_operands(x, y, acc, a);
    ck_assert(r.emulator_ran && !r.gpu_ran && r.outputs_written && !r.compared);
    /* the SHARED operand: 32 floats after the launch's own dynamic bytes */
    ck_assert_uint_ge(r.shared_bytes, 32 * sizeof(float));
    ck_assert_uint_gt(r.report.warp_instructions, 0);
    /* both output files hold what was read back; nothing else was written */
    ck_assert(exists(file_in("y.npy")) && exists(file_in("acc.npy")));
    ck_assert_int_eq(files_in_dir(), 2);
    ck_assert_ptr_eq(kemu_plan_data(p, 1), y);
    ck_assert_ptr_nonnull(kemu_plan_data(p, 3)); /* the plan's own scratch memory */
    ck_assert_ptr_null(kemu_plan_gpu_data(p, 1));
    kemu_plan_result_free(&r);
    /* a plan runs once */
    ck_assert_int_eq(kemu_plan_run(p, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_plan_add(p, &(kemu_operand){.kind = KEMU_OPERAND_VALUE, .value = &n, .size = 4}, &err),
                     KEMU_ERR_INVALID_ARGUMENT);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

START_TEST(test_every_kind_on_both_backends)
{
    float x[N], y[N], acc[N], a = -2.0f;
    int n = N;
    fill_inputs(x, y, acc);
    kemu_plan *p = operands_plan(KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA, x, y, acc, &a, &n);
    kemu_plan_result r;
    kemu_error err;
    ck_assert_msg(kemu_plan_run(p, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert(r.emulator_ran && r.gpu_ran && !r.gpu_faulted);
    ck_assert(r.gpu_wrapped); /* the SHARED operand reached the GPU through the wrapper entry */
    check_operands(x, y, acc, a);
    ck_assert(r.compared);
    ck_assert_int_eq(r.ncompared, 2);
    ck_assert_int_eq(r.differing, 0);
    ck_assert(r.comparisons[1].compared && r.comparisons[2].compared && !r.comparisons[0].compared);
    ck_assert_uint_eq(r.comparisons[1].mismatches, 0);
    ck_assert_int_eq(r.comparisons[1].first_mismatch, -1);
    ck_assert_msg(strstr(r.comparisons[1].line, "y.npy") != NULL, "%s", r.comparisons[1].line);
    ck_assert_msg(strstr(r.tolerance, "0 ULPs") != NULL, "%s", r.tolerance);
    /* the GPU's copy next to the emulator's, in memory and on disk */
    const float *gy = kemu_plan_gpu_data(p, 1);
    ck_assert_ptr_nonnull(gy);
    ck_assert_int_eq(memcmp(gy, y, sizeof y), 0);
    ck_assert(exists(file_in("y.cuda.npy")) && exists(file_in("acc.cuda.npy")));
    ck_assert_int_eq(files_in_dir(), 4);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

START_TEST(test_both_backends_disagree)
{
    float x[N], y[N], acc[N], a = 1.0f;
    int n = N;
    fill_inputs(x, y, acc);
    setenv("KEMU_STANDIN_PERTURB", "1", 1);
    kemu_plan *p = operands_plan(KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA, x, y, acc, &a, &n);
    kemu_plan_result r;
    kemu_error err;
    ck_assert_msg(kemu_plan_run(p, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert(r.compared);
    ck_assert_int_gt(r.differing, 0);
    int any = 0;
    for (int i = 0; i < 7; i++)
        any |= r.comparisons[i].compared && r.comparisons[i].mismatches > 0 && r.comparisons[i].first_mismatch >= 0;
    ck_assert(any);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

START_TEST(test_gpu_alone_and_unavailable)
{
    float x[N], y[N], acc[N], a = 0.5f;
    int n = N;
    fill_inputs(x, y, acc);
    kemu_plan *p = operands_plan(KEMU_BACKEND_CUDA, x, y, acc, &a, &n);
    kemu_plan_result r;
    kemu_error err;
    ck_assert_msg(kemu_plan_run(p, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert(!r.emulator_ran && r.gpu_ran && r.outputs_written);
    check_operands(x, y, acc, a); /* read back from the GPU */
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);

    setenv("KEMU_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    fill_inputs(x, y, acc);
    unlink(file_in("y.npy"));
    unlink(file_in("acc.npy"));
    p = operands_plan(KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA, x, y, acc, &a, &n);
    ck_assert_int_eq(kemu_plan_run(p, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.stage, KEMU_PLAN_STAGE_GPU);
    ck_assert(r.gpu_unavailable && !r.emulator_ran);
    ck_assert(r.gpu_message[0]);
    ck_assert_int_eq(files_in_dir(), 0);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

/* An output aliased to its input shares its buffer on both backends. */
START_TEST(test_aliased_output)
{
    int x[N], y[N], n = N;
    for (int i = 0; i < N; i++)
        x[i] = i - 50;
    for (int backends = 1; backends <= 3; backends++) {
        kemu_plan *p;
        kemu_error err;
        kemu_plan_config pc = config(4, 64, backends);
        ck_assert(kemu_plan_create(kernel("twice"), &pc, &p, &err) == KEMU_OK);
        add(p, buffer(KEMU_OPERAND_IN, "i32", N, x));
        kemu_operand out = buffer(KEMU_OPERAND_OUT, "i32", N, y);
        out.aliased = 1;
        out.alias_input = 0;
        add(p, out);
        add(p, value(&n, sizeof n));
        kemu_plan_result r;
        ck_assert_msg(kemu_plan_run(p, &r, &err) == KEMU_OK, "%s", err.message);
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(y[i], 2 * (i - 50));
        ck_assert_int_eq(r.differing, 0);
        kemu_plan_result_free(&r);
        kemu_plan_destroy(p);
    }
    /* an alias must name an earlier input of the same dtype and size */
    kemu_plan *p;
    kemu_error err;
    kemu_plan_config pc = config(1, 32, KEMU_BACKEND_EMULATOR);
    ck_assert(kemu_plan_create(kernel("twice"), &pc, &p, &err) == KEMU_OK);
    add(p, buffer(KEMU_OPERAND_IN, "i32", N, x));
    kemu_operand bad = buffer(KEMU_OPERAND_OUT, "f32", N, NULL);
    bad.aliased = 1;
    bad.alias_input = 0;
    ck_assert_int_eq(kemu_plan_add(p, &bad, &err), KEMU_ERR_INVALID_ARGUMENT);
    bad.dtype = "i32";
    bad.alias_input = 1;
    ck_assert_int_eq(kemu_plan_add(p, &bad, &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_plan_destroy(p);
}
END_TEST

/* maybe_fault(out, n, fault) with out written to out.npy */
static kemu_status run_fault(int backends, int fault, int keep, int *out, kemu_plan_result *r, kemu_error *err)
{
    static int n = N;
    static int f;
    f = fault;
    kemu_plan *p;
    kemu_plan_config pc = config(4, 64, backends);
    pc.keep_outputs = keep;
    ck_assert(kemu_plan_create(kernel("maybe_fault"), &pc, &p, err) == KEMU_OK);
    kemu_operand o = buffer(KEMU_OPERAND_OUT, "i32", N, out);
    o.output_file = file_in("out.npy");
    add(p, o);
    add(p, value(&n, sizeof n));
    add(p, value(&f, sizeof f));
    kemu_status st = kemu_plan_run(p, r, err);
    kemu_plan_destroy(p);
    return st;
}

START_TEST(test_faults)
{
    int out[N];
    kemu_plan_result r;
    kemu_error err;
    ck_assert_int_eq(run_fault(KEMU_BACKEND_EMULATOR, 1, 0, out, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert(r.emulator_faulted && !r.outputs_written);
    ck_assert_msg(strstr(err.message, "maybe_fault") != NULL, "%s", err.message);
    ck_assert(!exists(file_in("out.npy")));
    kemu_plan_result_free(&r);
    /* keep_outputs: what the kernel wrote before the fault */
    ck_assert_int_eq(run_fault(KEMU_BACKEND_EMULATOR, 1, 1, out, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert(r.outputs_written && exists(file_in("out.npy")));
    ck_assert_int_eq(out[N - 1], N - 1);
    kemu_plan_result_free(&r);
    unlink(file_in("out.npy"));
    /* a fault on both: not compared, nothing written */
    ck_assert_int_eq(run_fault(KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA, 1, 0, out, &r, &err),
                     KEMU_ERR_KERNEL_FAULT);
    ck_assert(r.emulator_faulted && r.gpu_faulted && !r.compared && !r.outputs_written);
    ck_assert_int_eq(files_in_dir(), 0);
    kemu_plan_result_free(&r);
    ck_assert_int_eq(run_fault(KEMU_BACKEND_EMULATOR | KEMU_BACKEND_CUDA, 0, 0, out, &r, &err), KEMU_OK);
    ck_assert(r.compared && r.differing == 0 && exists(file_in("out.cuda.npy")));
    kemu_plan_result_free(&r);
}
END_TEST

/* Output files: never an input's file, never two outputs to one file,
 * never into a missing directory; checked before anything runs. */
START_TEST(test_output_file_checks)
{
    float x[N], y[N], acc[N], a = 1.0f;
    int n = N;
    kemu_plan_result r;
    kemu_error err;
    fill_inputs(x, y, acc);
    struct {
        const char *y_file, *acc_file, *x_source;
        kemu_plan_path_problem problem;
        int operand, other;
    } cases[] = {
        {"in.npy", "acc.npy", "in.npy", KEMU_PLAN_PATH_IS_INPUT, 1, 0},
        {"same.npy", "same.npy", NULL, KEMU_PLAN_PATH_SAME_OUTPUT, 2, 1},
        {"missing/y.npy", "acc.npy", NULL, KEMU_PLAN_PATH_UNWRITABLE, 1, -1},
    };
    FILE *f = fopen(file_in("in.npy"), "w");
    ck_assert_ptr_nonnull(f);
    fputs("input", f);
    fclose(f);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        kemu_plan *p;
        kemu_plan_config pc = config(4, 64, KEMU_BACKEND_EMULATOR);
        ck_assert(kemu_plan_create(kernel("operands"), &pc, &p, &err) == KEMU_OK);
        kemu_operand in = buffer(KEMU_OPERAND_IN, "f32", N, x);
        in.source_file = cases[c].x_source ? file_in(cases[c].x_source) : NULL;
        add(p, in);
        kemu_operand out = buffer(KEMU_OPERAND_OUT, "f32", N, y);
        out.output_file = file_in(cases[c].y_file);
        add(p, out);
        kemu_operand inout = buffer(KEMU_OPERAND_INOUT, "f32", N, acc);
        inout.output_file = file_in(cases[c].acc_file);
        add(p, inout);
        add(p, buffer(KEMU_OPERAND_SCRATCH, "f32", N, NULL));
        add(p, buffer(KEMU_OPERAND_SHARED, "f32", 32, NULL));
        add(p, value(&a, sizeof a));
        add(p, value(&n, sizeof n));
        ck_assert_int_ne(kemu_plan_run(p, &r, &err), KEMU_OK);
        ck_assert_int_eq(r.stage, KEMU_PLAN_STAGE_OUTPUT_FILE);
        ck_assert_int_eq(r.path_problem, cases[c].problem);
        ck_assert_int_eq(r.operand, cases[c].operand);
        ck_assert_int_eq(r.other_operand, cases[c].other);
        ck_assert(!r.emulator_ran);
        ck_assert_int_eq(files_in_dir(), 1); /* in.npy alone, untouched */
        kemu_plan_result_free(&r);
        kemu_plan_destroy(p);
    }
    char text[16] = "";
    f = fopen(file_in("in.npy"), "r");
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    ck_assert_str_eq(text, "input");
    /* operands that do not fit the kernel */
    kemu_plan *p;
    kemu_plan_config pc = config(1, 32, KEMU_BACKEND_EMULATOR);
    ck_assert(kemu_plan_create(kernel("twice"), &pc, &p, &err) == KEMU_OK);
    add(p, value(&n, sizeof n)); /* a 4-byte value for a pointer */
    ck_assert_int_eq(kemu_plan_run(p, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(r.stage, KEMU_PLAN_STAGE_OPERANDS);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

/* A write that fails after another output was staged leaves every output
 * file as it was: here the second file's temporary name is too long. */
START_TEST(test_failed_write_writes_nothing)
{
    float x[N], y[N], acc[N], a = 1.0f;
    int n = N;
    fill_inputs(x, y, acc);
    FILE *f = fopen(file_in("y.npy"), "w");
    ck_assert_ptr_nonnull(f);
    fputs("before", f);
    fclose(f);
    char long_name[256];
    memset(long_name, 'a', 250);
    strcpy(long_name + 250, ".npy"); /* 254 bytes: a valid name, but not with a temporary suffix */
    kemu_plan *p;
    kemu_error err;
    kemu_plan_config pc = config(4, 64, KEMU_BACKEND_EMULATOR);
    ck_assert(kemu_plan_create(kernel("operands"), &pc, &p, &err) == KEMU_OK);
    add(p, buffer(KEMU_OPERAND_IN, "f32", N, x));
    kemu_operand out = buffer(KEMU_OPERAND_OUT, "f32", N, y);
    out.output_file = file_in("y.npy");
    add(p, out);
    kemu_operand inout = buffer(KEMU_OPERAND_INOUT, "f32", N, acc);
    inout.output_file = file_in(long_name);
    add(p, inout);
    add(p, buffer(KEMU_OPERAND_SCRATCH, "f32", N, NULL));
    add(p, buffer(KEMU_OPERAND_SHARED, "f32", 32, NULL));
    add(p, value(&a, sizeof a));
    add(p, value(&n, sizeof n));
    kemu_plan_result r;
    ck_assert_int_eq(kemu_plan_run(p, &r, &err), KEMU_ERR_IO);
    ck_assert_int_eq(r.stage, KEMU_PLAN_STAGE_WRITE);
    ck_assert_int_eq(r.operand, 2);
    ck_assert(r.emulator_ran && !r.outputs_written);
    /* y.npy as it was, no temporary file left, the long one never made */
    char text[16] = "";
    f = fopen(file_in("y.npy"), "r");
    ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
    fclose(f);
    ck_assert_str_eq(text, "before");
    ck_assert_int_eq(files_in_dir(), 1);
    kemu_plan_result_free(&r);
    kemu_plan_destroy(p);
}
END_TEST

START_TEST(test_gpu_output_file_name)
{
    char *a = kemu_plan_gpu_output_file("dir/y.npy"), *b = kemu_plan_gpu_output_file("y.bin");
    ck_assert_str_eq(a, "dir/y.cuda.npy");
    ck_assert_str_eq(b, "y.bin.cuda.npy");
    free(a);
    free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_kind_on_the_emulator);
    tcase_add_test(tc, test_every_kind_on_both_backends);
    tcase_add_test(tc, test_both_backends_disagree);
    tcase_add_test(tc, test_gpu_alone_and_unavailable);
    tcase_add_test(tc, test_aliased_output);
    tcase_add_test(tc, test_faults);
    tcase_add_test(tc, test_output_file_checks);
    tcase_add_test(tc, test_failed_write_writes_nothing);
    tcase_add_test(tc, test_gpu_output_file_name);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
