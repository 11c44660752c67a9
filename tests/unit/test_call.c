/* Unit tests of the call room's C API (include/kemu/call.h): the eight
 * interpret-mode limits with their exact messages, their order, structural
 * errors naming the field's path, and calls that run: aliasing, scratch in
 * shared memory (.u64 and .u32 parameters, after static shared memory),
 * gmem scratch, NaN/zero-filled outputs, mesh geometry, racecheck and
 * faults. Kernels are small PTX texts written here. Also the wrapper entry
 * that finds smem scratch on a GPU (plan_wrap_shared): it runs on the
 * emulator ignoring the smem arguments, and ptxas accepts it when present. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call/call_internal.h"
#include "plan/plan_internal.h"
#include "kemu/call.h"
#include "kemu/kemu.h"

#include <stdio.h>
#include <unistd.h>

/* y[t] = x[n-1-t] through smem scratch s (.u32 shared address) plus static
 * shared memory `pad` (12 bytes, so the dynamic region starts at 12). */
static const char reverse_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry reverse32(.param .u64 x, .param .u64 y, .param .u32 s)\n"
    "{\n"
    "  .shared .align 4 .b8 pad[12];\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<2>;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n  ld.param.u32 %r1, [s];\n"
    "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, %ntid.x;\n"
    "  st.shared.u32 [pad], %r3;\n"
    "  shl.b32 %r4, %r2, 2;\n  add.u32 %r5, %r1, %r4;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.u64 %rd4, %rd1, %rd3;\n"
    "  ld.global.f32 %f1, [%rd4];\n  st.shared.f32 [%r5], %f1;\n  bar.sync 0;\n"
    "  sub.u32 %r6, %r3, 1;\n  sub.u32 %r6, %r6, %r2;\n  shl.b32 %r6, %r6, 2;\n  add.u32 %r6, %r1, %r6;\n"
    "  ld.shared.f32 %f1, [%r6];\n  add.u64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f1;\n  ret;\n"
    "}\n"
    /* the same with a .u64 parameter used through a generic address */
    ".visible .entry reverse64(.param .u64 x, .param .u64 y, .param .u64 s)\n"
    "{\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<12>; .reg .f32 %f<2>;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n  ld.param.u64 %rd6, [s];\n"
    "  cvta.shared.u64 %rd7, %rd6;\n"
    "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, %ntid.x;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.u64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd4];\n"
    "  add.u64 %rd8, %rd7, %rd3;\n  st.f32 [%rd8], %f1;\n  bar.sync 0;\n"
    "  sub.u32 %r6, %r3, 1;\n  sub.u32 %r6, %r6, %r2;\n  mul.wide.u32 %rd9, %r6, 4;\n  add.u64 %rd9, %rd7, %rd9;\n"
    "  ld.f32 %f1, [%rd9];\n  add.u64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f1;\n  ret;\n"
    "}\n"
    /* y = 2x, in place when y aliases x */
    ".visible .entry twice(.param .u64 x, .param .u64 y)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<8>; .reg .f32 %f<3>;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n"
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
    "  add.u64 %rd4, %rd1, %rd3;\n  ld.global.f32 %f1, [%rd4];\n  add.f32 %f2, %f1, %f1;\n"
    "  add.u64 %rd5, %rd2, %rd3;\n  st.global.f32 [%rd5], %f2;\n  ret;\n"
    "}\n"
    /* writes nothing */
    ".visible .entry nothing(.param .u64 f, .param .u64 i, .param .u64 b)\n"
    "{\n  ret;\n}\n"
    /* copies gmem scratch g (i32) to y */
    ".visible .entry copy_gmem(.param .u64 y, .param .u64 g)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [y];\n  ld.param.u64 %rd2, [g];\n"
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
    "  add.u64 %rd4, %rd2, %rd3;\n  ld.global.u32 %r2, [%rd4];\n"
    "  add.u64 %rd5, %rd1, %rd3;\n  st.global.u32 [%rd5], %r2;\n  ret;\n"
    "}\n"
    /* y[global thread] = ctaid.x; reads x far out of bounds when x != 0 */
    ".visible .entry where(.param .u64 x, .param .u64 y)\n"
    "{\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mad.lo.u32 %r4, %r2, %r3, %r1;\n"
    "  mul.wide.u32 %rd3, %r4, 4;\n  add.u64 %rd4, %rd2, %rd3;\n  st.global.u32 [%rd4], %r2;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry oob(.param .u64 x, .param .u64 y)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<8>; .reg .f32 %f<2>;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n"
    "  add.u64 %rd3, %rd1, 67108864;\n  ld.global.f32 %f1, [%rd3];\n  st.global.f32 [%rd2], %f1;\n  ret;\n"
    "}\n";

static kemu_device *dev;

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg = {NULL, 2, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &dev, &err), KEMU_OK);
}

static void teardown(void)
{
    kemu_device_destroy(dev);
    dev = NULL;
}

static kemu_call_array array1(const char *name, const char *dtype, unsigned long long n)
{
    kemu_call_array a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.dtype = dtype;
    a.ndim = 1;
    a.shape[0] = n;
    return a;
}

/* A call of kernel `kernel` of the PTX above. */
static kemu_call_spec base_spec(const char *kernel)
{
    kemu_call_spec s;
    memset(&s, 0, sizeof s);
    s.ptx = "test_call.ptx";
    s.ptx_text = reverse_ptx;
    s.kernel = kernel;
    return s;
}

/* ---- limits ------------------------------------------------------------------ */

static kemu_status run_limit(const kemu_call_spec *s, kemu_call_result *r, kemu_error *err)
{
    memset(err, 0, sizeof *err);
    kemu_status st = kemu_call_run(dev, s, r, err);
    kemu_call_result_free(r);
    return st;
}

static const kemu_call_mesh mesh_4x2 = {1, {4, 0, 0}, 0, {0, 0, 0}, 2, "wg"};

START_TEST(limit_1_empty_mpmd)
{
    kemu_call_spec s = base_spec(NULL);
    s.has_mpmd = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 1);
    ck_assert_str_eq(r.exception, "NotImplementedError");
    ck_assert_str_eq(err.message, "At least one mesh/function pair is required");
    ck_assert_str_eq(r.path, "mpmd");
    ck_assert(strlen(r.hint) > 10);
}
END_TEST

START_TEST(limit_2_and_3_two_pairs)
{
    kemu_call_pair pairs[2] = {{mesh_4x2, "reverse32"}, {mesh_4x2, "reverse32"}};
    kemu_call_scratch sc;
    memset(&sc, 0, sizeof sc);
    sc.dtype = "f32";
    sc.ndim = 1;
    sc.shape[0] = 256;
    kemu_call_spec s = base_spec(NULL);
    s.has_mpmd = 1;
    s.mpmd = pairs;
    s.nmpmd = 2;
    s.scratch = &sc;
    s.nscratch = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 2);
    ck_assert_str_eq(err.message, "MPMD map with more than one mesh requires scratch_type to have a `core_type` "
                                  "specified, but scratch_type=ScratchType(dtype=float32, shape=(256,), "
                                  "memory_space=smem) is missing it.");
    ck_assert_str_eq(r.path, "scratch[0].memory_space");
    /* a core_type (or gmem) passes limit 2 and meets limit 3 */
    sc.core_type = "sm";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 3);
    ck_assert_str_eq(err.message, "Lowering multiple mesh/function pairs is not supported by the Mosaic GPU backend");
    sc.core_type = NULL;
    sc.memory_space = KEMU_CALL_GMEM;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 3);
}
END_TEST

START_TEST(limit_4_external_meshes)
{
    kemu_call_pair pair = {mesh_4x2, "twice"};
    kemu_call_spec s = base_spec(NULL);
    s.has_mpmd = 1;
    s.mpmd = &pair;
    s.nmpmd = 1;
    s.external_meshes = &mesh_4x2;
    s.nexternal_meshes = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 4);
    ck_assert_str_eq(err.message, "External meshes are not supported by the Mosaic GPU backend");
    /* also without mpmd */
    s = base_spec("twice");
    s.external_meshes = &mesh_4x2;
    s.nexternal_meshes = 1;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 4);
}
END_TEST

START_TEST(limit_5_mpmd_scratch)
{
    kemu_call_pair pair = {mesh_4x2, "reverse32"};
    kemu_call_array io[2] = {array1("x", "f32", 256), array1("y", "f32", 256)};
    io[0].init = "arange";
    kemu_call_spec s = base_spec(NULL);
    s.has_mpmd = 1;
    s.mpmd = &pair;
    s.nmpmd = 1;
    s.inputs = &io[0];
    s.ninputs = 1;
    s.outputs = &io[1];
    s.noutputs = 1;
    kemu_call_result r;
    kemu_error err;
    /* reverse32 has a third parameter: a scratch operand the map cannot have */
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 5);
    ck_assert_str_eq(err.message, "Scratch operands are not supported by the Mosaic GPU mpmd_map lowering");
    /* scratch entries too, before the PTX is even read */
    kemu_call_scratch sc;
    memset(&sc, 0, sizeof sc);
    sc.dtype = "f32";
    sc.ndim = 1;
    sc.shape[0] = 256;
    s.scratch = &sc;
    s.nscratch = 1;
    s.ptx_text = NULL;
    s.ptx = "/nonexistent/never-read.ptx";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 5);
}
END_TEST

START_TEST(limit_6_dynamic_grid)
{
    kemu_call_array n = array1("n", "i32", 1);
    n.init = "ones";
    kemu_call_spec s = base_spec("twice");
    s.has_grid = 1;
    s.grid_ndim = 2;
    s.grid[0].size = 4;
    s.grid[1].dynamic = "n";
    s.inputs = &n;
    s.ninputs = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 6);
    ck_assert_str_eq(err.message, "Dynamic grid bounds not (yet) supported in GPU interpret mode.");
    ck_assert_str_eq(r.path, "grid[1]");
}
END_TEST

START_TEST(limit_7_mesh_size)
{
    kemu_call_mesh m = {1, {4, 0, 0}, 1, {2, 0, 0}, 2, NULL};
    kemu_call_spec s = base_spec("twice");
    s.mesh = &m;
    s.has_grid = 1;
    s.grid_ndim = 1;
    s.grid[0].size = 8;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 7);
    ck_assert_str_eq(err.message,
                     "Invalid grid (8,) in grid_mapping: expected grid to have the same size as (4, 2, 2)");
    /* the same size in another shape passes */
    s.grid_ndim = 2;
    s.grid[0].size = 4;
    s.grid[1].size = 4;
    kemu_call_scalar sc = {"k", "i32", 3};
    s.scalar_operands = &sc;
    s.nscalar_operands = 1;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 8);
    ck_assert_str_eq(err.message, "Scalar arguments not (yet) supported on GPU");
}
END_TEST

START_TEST(limits_report_the_first)
{
    kemu_call_array n = array1("n", "i32", 1);
    n.init = "ones";
    kemu_call_scalar sc = {NULL, "i32", 1};
    kemu_call_spec s = base_spec(NULL);
    s.has_mpmd = 1; /* empty: 1 */
    s.external_meshes = &mesh_4x2; /* 4 */
    s.nexternal_meshes = 1;
    s.has_grid = 1; /* 6 */
    s.grid_ndim = 1;
    s.grid[0].dynamic = "n";
    s.inputs = &n;
    s.ninputs = 1;
    s.scalar_operands = &sc; /* 8 */
    s.nscalar_operands = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 1);
    kemu_call_pair pair = {mesh_4x2, "twice"};
    kemu_call_array out = array1("y", "f32", 8);
    s.mpmd = &pair;
    s.nmpmd = 1;
    s.outputs = &out; /* twice takes 2 parameters: 1 input + 1 output, no scratch (limit 5) */
    s.noutputs = 1;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 4);
    s.nexternal_meshes = 0;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 6);
    s.grid[0].dynamic = NULL;
    s.grid[0].size = 3; /* 7: (3,) vs (4, 2) */
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_UNSUPPORTED);
    ck_assert_int_eq(r.limit, 7);
    ck_assert_str_eq(err.message, "Invalid grid (3,) in grid_mapping: expected grid to have the same size as (4, 2)");
}
END_TEST

/* ---- structural errors ------------------------------------------------------ */

START_TEST(structural_errors_name_the_path)
{
    kemu_call_array in = array1("x", "f32", 8), outs[2] = {array1("y", "f32", 8), array1("z", NULL, 0)};
    in.init = "arange";
    int aliases[2][2] = {{0, 3}, {0, 0}};
    kemu_call_spec s = base_spec("twice");
    s.inputs = &in;
    s.ninputs = 1;
    s.outputs = outs;
    s.noutputs = 1;
    s.input_output_aliases = (const int (*)[2])aliases;
    s.naliases = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(err.message, "input_output_aliases[0][1]: output index 3 is out of range (the call has 1 output)");
    ck_assert_str_eq(r.path, "input_output_aliases[0][1]");
    ck_assert_int_eq(r.limit, 0);
    /* the same input aliased twice */
    aliases[0][1] = 1;
    s.noutputs = 2;
    s.naliases = 2;
    aliases[1][1] = 0;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(r.path, "input_output_aliases[1]");
    /* an unaliased output needs a dtype */
    s.naliases = 0;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(err.message, "outputs[1].dtype: missing (required unless the output is aliased to an input)");
    /* an unknown dtype */
    s.noutputs = 1;
    in.dtype = "float33";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(r.path, "inputs[0].dtype");
    in.dtype = "float32"; /* NumPy names are fine */
    /* alias with another shape */
    outs[0].shape[0] = 4;
    aliases[0][1] = 0;
    s.naliases = 1;
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(err.message, "input_output_aliases[0]: inputs[0] is f32[8] but outputs[0] is f32[4]; an aliased "
                                  "output has its input's dtype and shape");
    /* parameter count */
    outs[0].shape[0] = 8;
    s.naliases = 0;
    s.kernel = "nothing";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(r.path, "kernel");
    ck_assert_ptr_nonnull(strstr(err.message, "kernel 'nothing' takes 3 parameters but the call has 2 operands"));
    /* no such kernel */
    s.kernel = "absent";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "kernel: no kernel named 'absent'"));
    /* a missing input file */
    s.kernel = "twice";
    in.init = NULL;
    in.dtype = NULL;
    in.npy = "/nonexistent/x.npy";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_NOT_FOUND);
    ck_assert_str_eq(r.path, "inputs[0].npy");
    /* a missing PTX file */
    s.ptx_text = NULL;
    s.ptx = "/nonexistent/k.ptx";
    ck_assert_int_eq(run_limit(&s, &r, &err), KEMU_ERR_NOT_FOUND);
    ck_assert_str_eq(r.path, "ptx");
}
END_TEST

/* ---- calls that run ------------------------------------------------------------ */

static void check_reverse(const char *kernel)
{
    float x[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)i * 0.25f;
    kemu_call_array in = array1("x", "f32", 64), out = array1("y", "f32", 64);
    in.data = x;
    kemu_call_scratch sc;
    memset(&sc, 0, sizeof sc);
    sc.dtype = "f32";
    sc.ndim = 1;
    sc.shape[0] = 64;
    kemu_call_spec s = base_spec(kernel);
    s.inputs = &in;
    s.ninputs = 1;
    s.outputs = &out;
    s.noutputs = 1;
    s.scratch = &sc;
    s.nscratch = 1;
    s.block[0] = 64;
    kemu_call_result r;
    kemu_error err;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert_str_eq(r.kernel, kernel);
    ck_assert_int_eq(r.noutputs, 1);
    ck_assert_str_eq(r.outputs[0].dtype, "f32");
    ck_assert_uint_eq(r.outputs[0].nbytes, 64 * 4);
    const float *y = r.outputs[0].data;
    for (int i = 0; i < 64; i++)
        ck_assert_float_eq(y[i], x[63 - i]);
    /* reverse32 has 12 bytes of static shared memory: the scratch starts at 128 */
    ck_assert_uint_eq(r.shared_bytes, strcmp(kernel, "reverse32") ? 256 : 128 - 12 + 256);
    kemu_call_result_free(&r);
}

START_TEST(scratch_in_shared_memory)
{
    check_reverse("reverse32");
    check_reverse("reverse64");
}
END_TEST

START_TEST(aliased_output_shares_the_buffer)
{
    float x[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)i;
    kemu_call_array in = array1("x", "f32", 32), out;
    in.data = x;
    memset(&out, 0, sizeof out); /* dtype and shape from the input */
    int alias[1][2] = {{0, 0}};
    kemu_call_spec s = base_spec("twice");
    s.inputs = &in;
    s.ninputs = 1;
    s.outputs = &out;
    s.noutputs = 1;
    s.input_output_aliases = (const int (*)[2])alias;
    s.naliases = 1;
    s.block[0] = 32;
    kemu_call_result r;
    kemu_error err;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert_int_eq(r.outputs[0].ndim, 1);
    ck_assert_uint_eq(r.outputs[0].shape[0], 32);
    for (int i = 0; i < 32; i++)
        ck_assert_float_eq(((float *)r.outputs[0].data)[i], 2.0f * (float)i);
    ck_assert_float_eq(x[5], 5.0f); /* the caller's data is not touched */
    kemu_call_result_free(&r);
}
END_TEST

START_TEST(unwritten_outputs_keep_the_fill)
{
    kemu_call_array outs[3] = {array1("f", "f64", 4), array1("i", "i16", 4), array1("b", "bool", 4)};
    kemu_call_spec s = base_spec("nothing");
    s.outputs = outs;
    s.noutputs = 3;
    kemu_call_result r;
    kemu_error err;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert(isnan(((double *)r.outputs[0].data)[3]));
    ck_assert_int_eq(((int16_t *)r.outputs[1].data)[0], INT16_MAX);
    ck_assert_int_eq(((uint8_t *)r.outputs[2].data)[2], 1);
    kemu_call_result_free(&r);
    s.interpret.uninitialized_memory = KEMU_UNINIT_ZERO;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert(((double *)r.outputs[0].data)[3] == 0.0);
    ck_assert_int_eq(((int16_t *)r.outputs[1].data)[0], 0);
    ck_assert_int_eq(((uint8_t *)r.outputs[2].data)[2], 0);
    kemu_call_result_free(&r);
}
END_TEST

START_TEST(gmem_scratch_is_typed_fill)
{
    kemu_call_array out = array1("y", "i32", 16);
    kemu_call_scratch sc;
    memset(&sc, 0, sizeof sc);
    sc.dtype = "i32";
    sc.ndim = 1;
    sc.shape[0] = 16;
    sc.memory_space = KEMU_CALL_GMEM;
    kemu_call_spec s = base_spec("copy_gmem");
    s.outputs = &out;
    s.noutputs = 1;
    s.scratch = &sc;
    s.nscratch = 1;
    s.block[0] = 16;
    kemu_call_result r;
    kemu_error err;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert_int_eq(((int32_t *)r.outputs[0].data)[15], INT32_MAX);
    ck_assert_uint_eq(r.shared_bytes, 0);
    kemu_call_result_free(&r);
}
END_TEST

START_TEST(mesh_launch_geometry)
{
    kemu_call_mesh m = {1, {2, 0, 0}, 1, {2, 0, 0}, 2, "wg"};
    kemu_call_array in = array1("x", "f32", 1), out = array1("y", "u32", 4 * 256);
    in.init = "zeros";
    kemu_call_spec s = base_spec("where");
    s.mesh = &m;
    s.inputs = &in;
    s.ninputs = 1;
    s.outputs = &out;
    s.noutputs = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_msg(kemu_call_run(dev, &s, &r, &err) == KEMU_OK, "%s", err.message);
    ck_assert_uint_eq(r.grid[0], 4);
    ck_assert_uint_eq(r.block[0], 256);
    ck_assert_uint_eq(r.cluster[0], 2);
    const uint32_t *y = r.outputs[0].data;
    ck_assert_uint_eq(y[0], 0);
    ck_assert_uint_eq(y[3 * 256 + 255], 3);
    kemu_call_result_free(&r);
}
END_TEST

START_TEST(detect_races_enables_racecheck)
{
    kemu_call_array outs[3] = {array1("f", "f32", 1), array1("i", "i32", 1), array1("b", "bool", 1)};
    kemu_call_spec s = base_spec("nothing");
    s.outputs = outs;
    s.noutputs = 3;
    kemu_call_result r;
    kemu_error err;
    kemu_check_summary sum;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_OK);
    kemu_call_result_free(&r);
    ck_assert_int_eq(kemu_check_results(dev, 0, &sum, &err), KEMU_ERR_INVALID_ARGUMENT); /* no checker */
    s.interpret.detect_races = 1;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_OK);
    kemu_call_result_free(&r);
    ck_assert_int_eq(kemu_check_results(dev, 0, &sum, &err), KEMU_OK);
    ck_assert_ptr_nonnull(strstr(sum.text, "RACECHECK SUMMARY"));
    kemu_check_summary_free(&sum);
}
END_TEST

START_TEST(out_of_bounds_reads)
{
    kemu_call_array in = array1("x", "f32", 4), out = array1("y", "f32", 4);
    in.init = "ones";
    kemu_call_spec s = base_spec("oob");
    s.inputs = &in;
    s.ninputs = 1;
    s.outputs = &out;
    s.noutputs = 1;
    s.block[0] = 1;
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_int_eq(r.noutputs, 0);
    kemu_call_result_free(&r);
    /* "uninitialized": the reads past x return x's fill (NaN for f32), and
     * a later "raise" call faults again (the setting is per call) */
    s.interpret.out_of_bounds_reads = KEMU_CALL_OOB_UNINITIALIZED;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_OK);
    ck_assert_int_eq(r.noutputs, 1);
    ck_assert_uint_eq(r.outputs[0].nbytes, 4 * sizeof(float));
    for (int i = 0; i < 4; i++)
        ck_assert(isnan(((const float *)r.outputs[0].data)[i]));
    kemu_call_result_free(&r);
    s.interpret.uninitialized_memory = KEMU_UNINIT_ZERO;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_OK);
    for (int i = 0; i < 4; i++)
        ck_assert(((const float *)r.outputs[0].data)[i] == 0.0f);
    kemu_call_result_free(&r);
    s.interpret.out_of_bounds_reads = KEMU_CALL_OOB_RAISE;
    ck_assert_int_eq(kemu_call_run(dev, &s, &r, &err), KEMU_ERR_KERNEL_FAULT);
    kemu_call_result_free(&r);
}
END_TEST

START_TEST(null_arguments)
{
    kemu_call_result r;
    kemu_error err;
    ck_assert_int_eq(kemu_call_run(NULL, NULL, &r, &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_call_spec s = base_spec("twice");
    /* no operands for the 2 parameters of twice: an error, with no result or error record to fill */
    ck_assert_int_eq(kemu_call_run(dev, &s, NULL, NULL), KEMU_ERR_INVALID_ARGUMENT);
}
END_TEST


/* The wrapper of reverse32 or reverse64 (x, y, smem s at offset 0). */
static char *wrap_reverse(const char *kernel, size_t s_size)
{
    plan_wrap_param p[3] = {{"x", 8, 0, 0}, {"y", 8, 0, 0}, {"s", s_size, 1, 0}};
    char *out = NULL, msg[256];
    size_t len = 0;
    ck_assert_msg(!plan_wrap_shared(reverse_ptx, strlen(reverse_ptx), kernel, 3, p, &out, &len, msg, sizeof msg),
                  "%s", msg);
    ck_assert_uint_eq(len, strlen(out));
    return out;
}

START_TEST(wrapper_finds_smem_scratch_itself)
{
    const char *kernels[] = {"reverse32", "reverse64"};
    for (int k = 0; k < 2; k++) {
        char *text = wrap_reverse(kernels[k], k ? 8 : 4);
        kemu_error err;
        ck_assert_ptr_nonnull(strstr(text, k ? ".func reverse64__kemu_call_body(" : ".func reverse32__kemu_call_body("));
        kemu_module *mod;
        kemu_kernel *kern, *orig;
        ck_assert_msg(!kemu_module_load_ptx(dev, text, strlen(text), "wrapped.ptx", &mod, &err), "%s", err.message);
        ck_assert(!kemu_module_get_kernel(mod, kernels[k], &kern, &err));
        kemu_module *omod;
        ck_assert(!kemu_module_load_ptx(dev, reverse_ptx, strlen(reverse_ptx), "reverse.ptx", &omod, &err));
        ck_assert(!kemu_module_get_kernel(omod, kernels[k], &orig, &err));
        /* the launch arguments are the original's */
        ck_assert_int_eq(kemu_kernel_param_count(kern), kemu_kernel_param_count(orig));
        for (int i = 0; i < kemu_kernel_param_count(orig); i++) {
            kemu_param_info a, b;
            kemu_kernel_param(kern, i, &a);
            kemu_kernel_param(orig, i, &b);
            ck_assert_str_eq(a.name, b.name);
            ck_assert_uint_eq(a.size, b.size);
            ck_assert_uint_eq(a.offset, b.offset);
        }
        /* the smem argument is ignored: a wild address still reverses */
        float x[64], y[64];
        for (int i = 0; i < 64; i++)
            x[i] = (float)i;
        uint64_t dx, dy, wild = 0xfff00000u;
        uint32_t wild32 = 0xfff00000u;
        ck_assert(!kemu_malloc(dev, sizeof x, KEMU_UNINIT_NAN, &dx, &err));
        ck_assert(!kemu_malloc(dev, sizeof y, KEMU_UNINIT_NAN, &dy, &err));
        ck_assert(!kemu_memcpy_htod(dev, dx, x, sizeof x, &err));
        void *args[3] = {&dx, &dy, k ? (void *)&wild : (void *)&wild32};
        kemu_launch_config lc;
        memset(&lc, 0, sizeof lc);
        lc.grid[0] = 1;
        lc.block[0] = 64;
        lc.shared_bytes = sizeof x;
        ck_assert_msg(!kemu_launch(kern, &lc, args, NULL, &err), "%s", err.message);
        ck_assert(!kemu_memcpy_dtoh(dev, y, dy, sizeof y, &err));
        for (int i = 0; i < 64; i++)
            ck_assert_float_eq(y[i], x[63 - i]);
        kemu_module_unload(mod);
        kemu_module_unload(omod);
        kemu_free(dev, dx, NULL);
        kemu_free(dev, dy, NULL);
        free(text);
    }
}
END_TEST

/* The entry is found by its exact name, after comments and other entries
 * that mention it; its directives move to the wrapper; others stay. */
START_TEST(wrapper_rewrites_only_its_entry)
{
    static const char text[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        "// .visible .entry k(.param .u64 a) {\n"
        "/* .entry k( */\n"
        ".visible .entry k2(.param .u64 a)\n{\n  ret;\n}\n"
        ".visible .entry k(.param .u64 a, .param .u64 s)\n.maxntid 32, 1, 1\n{\n  ret;\n}\n";
    plan_wrap_param p[2] = {{"a", 8, 0, 0}, {"s", 8, 1, 256}};
    kemu_error err;
    char *out, msg[256];
    size_t len;
    ck_assert(!plan_wrap_shared(text, strlen(text), "k", 2, p, &out, &len, msg, sizeof msg));
    ck_assert_ptr_nonnull(strstr(out, ".visible .entry k2(.param .u64 a)"));
    ck_assert_ptr_nonnull(strstr(out, "// .visible .entry k(.param .u64 a) {"));
    const char *body = strstr(out, ".func k__kemu_call_body(");
    ck_assert_ptr_nonnull(body);
    const char *entry = strstr(out, ".visible .entry k(\n");
    ck_assert_ptr_nonnull(entry);
    ck_assert(entry > body);
    /* .maxntid once, on the wrapper */
    const char *maxntid = strstr(out, ".maxntid 32, 1, 1");
    ck_assert_ptr_nonnull(maxntid);
    ck_assert(maxntid > entry);
    ck_assert_ptr_null(strstr(maxntid + 1, ".maxntid"));
    ck_assert_ptr_nonnull(strstr(out, "add.u64 %kemu_a1, %kemu_a1, 256;"));
    ck_assert_ptr_nonnull(strstr(out, "ld.param.u64 %kemu_a0, [a];"));
    kemu_module *mod;
    ck_assert_msg(!kemu_module_load_ptx(dev, out, len, "wrapped.ptx", &mod, &err), "%s", err.message);
    kemu_module_unload(mod);
    free(out);
    ck_assert_int_eq(plan_wrap_shared(text, strlen(text), "nope", 2, p, &out, &len, msg, sizeof msg), -1);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(msg, "cannot find the definition of .entry nope in the PTX text");
    p[0].size = 16;
    ck_assert_int_eq(plan_wrap_shared(text, strlen(text), "k", 2, p, &out, &len, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "parameter 0 'a' is 16 bytes"));
}
END_TEST

/* What the GPU would get passes NVIDIA's assembler (when it is here). */
START_TEST(wrapper_passes_ptxas)
{
    if (system("command -v ptxas >/dev/null 2>&1") != 0) {
        fprintf(stderr, "wrapper_passes_ptxas: no ptxas, not checked\n");
        return;
    }
    for (int k = 0; k < 2; k++) {
        char *text = wrap_reverse(k ? "reverse64" : "reverse32", k ? 8 : 4);
        char path[] = "/tmp/kemu-wrap-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
        close(fd);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "ptxas -arch=sm_90 %s -o /dev/null", path);
        int rc = system(cmd);
        unlink(path);
        free(text);
        ck_assert_msg(rc == 0, "ptxas refused the wrapper of reverse%s", k ? "64" : "32");
    }
}
END_TEST

static Suite *call_suite(void)
{
    Suite *s = suite_create("call");
    TCase *t = tcase_create("limits");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, limit_1_empty_mpmd);
    tcase_add_test(t, limit_2_and_3_two_pairs);
    tcase_add_test(t, limit_4_external_meshes);
    tcase_add_test(t, limit_5_mpmd_scratch);
    tcase_add_test(t, limit_6_dynamic_grid);
    tcase_add_test(t, limit_7_mesh_size);
    tcase_add_test(t, limits_report_the_first);
    suite_add_tcase(s, t);
    t = tcase_create("errors");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, structural_errors_name_the_path);
    tcase_add_test(t, null_arguments);
    suite_add_tcase(s, t);
    t = tcase_create("run");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, scratch_in_shared_memory);
    tcase_add_test(t, aliased_output_shares_the_buffer);
    tcase_add_test(t, unwritten_outputs_keep_the_fill);
    tcase_add_test(t, gmem_scratch_is_typed_fill);
    tcase_add_test(t, mesh_launch_geometry);
    tcase_add_test(t, detect_races_enables_racecheck);
    tcase_add_test(t, out_of_bounds_reads);
    suite_add_tcase(s, t);
    t = tcase_create("gpu wrapper");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, wrapper_finds_smem_scratch_itself);
    tcase_add_test(t, wrapper_rewrites_only_its_entry);
    tcase_add_test(t, wrapper_passes_ptxas);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(call_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
