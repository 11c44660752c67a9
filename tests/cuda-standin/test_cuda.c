/* Unit tests of the thin GPU path (src/cuda/) against the libcuda stand-in
 * built next to this file: loading the driver library, device choice, JIT
 * loading with its error log, buffers, launches with dynamic shared memory
 * above 48 KiB and clusters, kernel faults, driver error names, the default
 * tolerance found from approximate instructions, and the per-buffer
 * comparison line. CUDA_STANDIN_LIBRARY (a -D define) is the stand-in's
 * path; KEMU_CUDA_LIBRARY points the backend at it. */
#include "config.h"
#include "cuda/backend.h"
#include "cuda/compare.h"
#include "cuda/driver.h"
#include "kemu/kemu.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CUDA_STANDIN_LIBRARY
#error "CUDA_STANDIN_LIBRARY must name the stand-in libcuda.so.1"
#endif

static const char saxpy_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)\n"
    "{\n .reg .pred %p<2>; .reg .f32 %f<5>; .reg .b32 %r<6>; .reg .b64 %rd<8>;\n"
    " ld.param.u32 %r2, [n]; ld.param.f32 %f1, [a]; ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y];\n"
    " mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mov.u32 %r5, %tid.x; mad.lo.s32 %r1, %r3, %r4, %r5;\n"
    " setp.ge.u32 %p1, %r1, %r2; @%p1 bra DONE;\n"
    " cvta.to.global.u64 %rd3, %rd2; cvta.to.global.u64 %rd4, %rd1; mul.wide.u32 %rd5, %r1, 4;\n"
    " add.s64 %rd6, %rd4, %rd5; ld.global.f32 %f2, [%rd6]; add.s64 %rd7, %rd3, %rd5;\n"
    " ld.global.f32 %f3, [%rd7]; fma.rn.f32 %f4, %f2, %f1, %f3; st.global.f32 [%rd7], %f4;\n"
    "DONE:\n ret;\n}\n";

/* out[tid] = the dynamic shared memory size, after writing and reading back
 * the last word of it (so a launch below the size would fault). */
static const char dynshared_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".extern .shared .align 4 .b8 dyn[];\n"
    ".visible .entry dynsize(.param .u64 out)\n"
    "{\n .reg .b32 %r<6>; .reg .b64 %rd<6>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;\n"
    " mov.u32 %r1, %dynamic_smem_size; mov.u32 %r2, %tid.x;\n"
    " sub.u32 %r3, %r1, 4; mov.u32 %r4, dyn; add.u32 %r4, %r4, %r3;\n"
    " st.shared.u32 [%r4], %r1; ld.shared.u32 %r5, [%r4];\n"
    " mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3; st.global.u32 [%rd4], %r5;\n"
    " ret;\n}\n";

/* out[ctaid] = %cluster_nctarank (sm_90). */
static const char cluster_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry cluster_size(.param .u64 out)\n"
    "{\n .reg .b32 %r<4>; .reg .b64 %rd<6>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;\n"
    " mov.u32 %r1, %cluster_nctarank; mov.u32 %r2, %ctaid.x;\n"
    " mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3; st.global.u32 [%rd4], %r1;\n"
    " ret;\n}\n";

/* Stores through a null pointer: a kernel fault. */
static const char fault_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry bad(.param .u64 out)\n"
    "{\n .reg .b32 %r<2>; .reg .b64 %rd<2>;\n"
    " mov.u64 %rd1, 0; mov.u32 %r1, 7; st.global.u32 [%rd1], %r1;\n"
    " ret;\n}\n";

/* ex2.approx.f32 in a called function, sin.approx in a function that the
 * kernel `exact` does not call. */
static const char approx_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".func (.param .b32 r) twice(.param .b32 x)\n"
    "{\n .reg .f32 %a<3>;\n ld.param.f32 %a1, [x]; ex2.approx.f32 %a2, %a1; st.param.f32 [r], %a2;\n ret;\n}\n"
    ".func (.param .b32 r) wave(.param .b32 x)\n"
    "{\n .reg .f32 %a<3>;\n ld.param.f32 %a1, [x]; sin.approx.f32 %a2, %a1; st.param.f32 [r], %a2;\n ret;\n}\n"
    ".visible .entry uses_ex2(.param .u64 out)\n"
    "{\n .reg .f32 %f<3>; .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1; mov.f32 %f1, 0f3F800000;\n"
    " { .param .b32 pa; .param .b32 pr; st.param.f32 [pa], %f1; call (pr), twice, (pa); ld.param.f32 %f2, [pr]; }\n"
    " st.global.f32 [%rd2], %f2;\n ret;\n}\n"
    ".visible .entry uses_sin(.param .u64 out)\n"
    "{\n .reg .f32 %f<3>; .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1; mov.f32 %f1, 0f3F800000;\n"
    " { .param .b32 pa; .param .b32 pr; st.param.f32 [pa], %f1; call (pr), wave, (pa); ld.param.f32 %f2, [pr]; }\n"
    " st.global.f32 [%rd2], %f2;\n ret;\n}\n"
    ".visible .entry exact(.param .u64 out)\n"
    "{\n .reg .f32 %f<4>; .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1; mov.f32 %f1, 0f3F800000;\n"
    " div.rn.f32 %f2, %f1, %f1; sqrt.rn.f32 %f3, %f2; st.global.f32 [%rd2], %f3;\n ret;\n}\n"
    ".visible .entry fast_div(.param .u64 out)\n"
    "{\n .reg .f32 %f<3>; .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1; mov.f32 %f1, 0f3F800000;\n"
    " div.full.f32 %f2, %f1, %f1; st.global.f32 [%rd2], %f2;\n ret;\n}\n";

static void use_standin(void)
{
    setenv("KEMU_CUDA_LIBRARY", CUDA_STANDIN_LIBRARY, 1);
    unsetenv("KEMU_STANDIN_JIT_FAIL");
    unsetenv("KEMU_STANDIN_PTX_TOO_NEW");
    unsetenv("KEMU_STANDIN_NO_DEVICE");
    unsetenv("KEMU_STANDIN_PERTURB");
    unsetenv("KEMU_STANDIN_SM");
}

static cuda_backend *open_standin(void)
{
    use_standin();
    cuda_backend *b = NULL;
    char msg[1024] = "";
    ck_assert_msg(cuda_backend_open(0, &b, msg, sizeof msg) == CUDA_STATUS_OK, "open: %s", msg);
    return b;
}

/* ---- the driver library ------------------------------------------------ */

START_TEST(test_no_library)
{
    setenv("KEMU_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    cuda_backend *b = (cuda_backend *)1;
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_open(0, &b, msg, sizeof msg), CUDA_STATUS_UNAVAILABLE);
    ck_assert_ptr_null(b);
    ck_assert_msg(strstr(msg, "no CUDA driver library: cannot load /nonexistent/libcuda.so.1") != NULL, "%s", msg);
    ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

START_TEST(test_library_without_entry_points)
{
    /* libm is a loadable library without any cu* symbol */
    setenv("KEMU_CUDA_LIBRARY", "libm.so.6", 1);
    cuda_driver d;
    char msg[1024] = "";
    ck_assert_int_eq(cuda_driver_open(&d, msg, sizeof msg), -1);
    ck_assert_msg(strstr(msg, "libm.so.6 is too old: it has no cuInit") != NULL, "%s", msg);
    ck_assert_ptr_null(d.library);
}
END_TEST

START_TEST(test_error_names)
{
    char buf[256];
    ck_assert_str_eq(cuda_driver_error_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
    ck_assert_str_eq(cuda_driver_error_name(222), "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
    ck_assert_ptr_null(cuda_driver_error_name(12345));
    ck_assert_str_eq(cuda_driver_error_text(NULL, 12345, buf, sizeof buf), "CUresult 12345");
    ck_assert_str_eq(cuda_driver_error_text(NULL, 716, buf, sizeof buf),
                     "CUDA_ERROR_MISALIGNED_ADDRESS (misaligned address)");
    /* through the loaded library's own cuGetErrorName */
    use_standin();
    cuda_driver d;
    char msg[1024] = "";
    ck_assert_msg(cuda_driver_open(&d, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_ptr_nonnull(d.launch_kernel_ex);
    ck_assert_str_eq(cuda_driver_error_text(&d, 218, buf, sizeof buf),
                     "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
    cuda_driver_close(&d);
    ck_assert_ptr_null(d.library);
}
END_TEST

/* NVIDIA's own stub libcuda.so (shipped with the toolkit for linking) exports
 * every entry point of the real driver and fails cuInit with
 * CUDA_ERROR_STUB_LIBRARY: where it is installed, it checks the symbol names
 * kemu resolves against NVIDIA's export table. */
START_TEST(test_nvidia_stub_library)
{
    static const char *const candidates[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                             "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so", NULL};
    const char *stub = NULL;
    for (int i = 0; candidates[i] && !stub; i++)
        if (access(candidates[i], R_OK) == 0)
            stub = candidates[i];
    if (!stub)
        return; /* no CUDA toolkit here: nothing to check against */
    setenv("KEMU_CUDA_LIBRARY", stub, 1);
    cuda_driver d;
    char msg[1024] = "";
    ck_assert_msg(cuda_driver_open(&d, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_ptr_nonnull(d.launch_kernel_ex);
    ck_assert_ptr_nonnull(d.memory_alloc);
    cuda_driver_close(&d);
    cuda_backend *b = NULL;
    ck_assert_int_eq(cuda_backend_open(0, &b, msg, sizeof msg), CUDA_STATUS_UNAVAILABLE);
    ck_assert_msg(strstr(msg, "cannot initialize: CUDA_ERROR_STUB_LIBRARY") != NULL, "%s", msg);
}
END_TEST

/* ---- devices ------------------------------------------------------------ */

START_TEST(test_open_device)
{
    cuda_backend *b = open_standin();
    ck_assert_str_eq(cuda_backend_device_name(b), "kemu stand-in sm_90");
    ck_assert_int_eq(cuda_backend_device_sm(b), 90);
    ck_assert_int_eq(cuda_backend_device_ordinal(b), 0);
    ck_assert_int_eq(cuda_backend_driver_version(b), 13000);
    cuda_backend_close(b);
    setenv("KEMU_STANDIN_SM", "80", 1);
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_open(0, &b, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_int_eq(cuda_backend_device_sm(b), 80);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_no_such_device)
{
    use_standin();
    cuda_backend *b = NULL;
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_open(3, &b, msg, sizeof msg), CUDA_STATUS_UNAVAILABLE);
    ck_assert_ptr_null(b);
    ck_assert_str_eq(msg, "no CUDA device 3: the driver reports 1 device (0..0)");
}
END_TEST

START_TEST(test_init_fails)
{
    use_standin();
    setenv("KEMU_STANDIN_NO_DEVICE", "1", 1);
    cuda_backend *b = NULL;
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_open(0, &b, msg, sizeof msg), CUDA_STATUS_UNAVAILABLE);
    ck_assert_msg(strstr(msg, "cannot initialize: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)") != NULL,
                  "%s", msg);
}
END_TEST

/* ---- JIT ------------------------------------------------------------------ */

START_TEST(test_jit_error_log)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    setenv("KEMU_STANDIN_JIT_FAIL", "1", 1);
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "saxpy", msg, sizeof msg),
                     CUDA_STATUS_FAILED);
    ck_assert_str_eq(msg, "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
    ck_assert_str_eq(cuda_backend_jit_log(b),
                     "ptxas application ptx input, line 1; error   : stand-in JIT failure (KEMU_STANDIN_JIT_FAIL)\n"
                     "ptxas fatal   : Ptx assembly aborted due to errors");
    unsetenv("KEMU_STANDIN_JIT_FAIL");
    /* a real PTX error: the stand-in's log is the emulator's message */
    static const char broken[] = ".version 8.0\n.target sm_80\n.address_size 64\n"
                                 ".visible .entry k()\n{\n frobnicate.u32 %r1;\n ret;\n}\n";
    ck_assert_int_eq(cuda_backend_load_ptx(b, broken, strlen(broken), "k", msg, sizeof msg), CUDA_STATUS_FAILED);
    ck_assert_msg(strstr(cuda_backend_jit_log(b), "<jit>:6:") != NULL, "log: %s", cuda_backend_jit_log(b));
    /* a good module afterwards loads, and its log is empty */
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "saxpy", msg, sizeof msg),
                     CUDA_STATUS_OK);
    ck_assert_str_eq(cuda_backend_jit_log(b), "");
    /* an entry the module lacks */
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "nope", msg, sizeof msg),
                     CUDA_STATUS_FAILED);
    ck_assert_msg(strstr(msg, "cuModuleGetFunction(nope) failed: CUDA_ERROR_NOT_FOUND") != NULL, "%s", msg);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_ptx_too_new)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    setenv("KEMU_STANDIN_PTX_TOO_NEW", "1", 1);
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "saxpy", msg, sizeof msg),
                     CUDA_STATUS_UNAVAILABLE);
    ck_assert_str_eq(msg, "the CUDA driver (version 13.0) is too old for this PTX: CUDA_ERROR_UNSUPPORTED_PTX_VERSION "
                          "(the provided PTX was compiled with an unsupported toolchain)");
    cuda_backend_close(b);
}
END_TEST

/* ---- buffers and launches ------------------------------------------------ */

START_TEST(test_saxpy_roundtrip)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "saxpy", msg, sizeof msg),
                     CUDA_STATUS_OK);
    enum { N = 100 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    uint64_t dx, dy;
    ck_assert_int_eq(cuda_backend_alloc(b, sizeof x, &dx, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_int_eq(cuda_backend_alloc(b, sizeof y, &dy, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_int_eq(cuda_backend_copy_to_device(b, dx, x, sizeof x, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_int_eq(cuda_backend_copy_to_device(b, dy, y, sizeof y, msg, sizeof msg), CUDA_STATUS_OK);
    unsigned n = 90; /* the last 10 stay 1 */
    float a = 2.0f;
    void *args[] = {&n, &a, &dx, &dy};
    kemu_launch_config cfg = {{4, 0, 0}, {32, 0, 0}, {0, 0, 0}, 0, 0};
    double seconds = -1;
    ck_assert_msg(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg) == CUDA_STATUS_OK, "%s", msg);
    ck_assert(seconds >= 0);
    memset(y, 0, sizeof y);
    ck_assert_int_eq(cuda_backend_copy_to_host(b, y, dy, sizeof y, msg, sizeof msg), CUDA_STATUS_OK);
    for (int i = 0; i < N; i++)
        ck_assert_float_eq(y[i], i < 90 ? 2.0f * (float)i + 1.0f : 1.0f);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_perturbed_copy)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_load_ptx(b, saxpy_ptx, strlen(saxpy_ptx), "saxpy", msg, sizeof msg),
                     CUDA_STATUS_OK);
    float x[32] = {0}, y[32];
    for (int i = 0; i < 32; i++)
        y[i] = 1.0f;
    uint64_t dx, dy;
    cuda_backend_alloc(b, sizeof x, &dx, msg, sizeof msg);
    cuda_backend_alloc(b, sizeof y, &dy, msg, sizeof msg);
    cuda_backend_copy_to_device(b, dx, x, sizeof x, msg, sizeof msg);
    cuda_backend_copy_to_device(b, dy, y, sizeof y, msg, sizeof msg);
    unsigned n = 32;
    float a = 1.0f;
    void *args[] = {&n, &a, &dx, &dy};
    kemu_launch_config cfg = {{1, 0, 0}, {32, 0, 0}, {0, 0, 0}, 0, 0};
    double seconds;
    setenv("KEMU_STANDIN_PERTURB", "8", 1); /* low byte of element 2 */
    ck_assert_int_eq(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_int_eq(cuda_backend_copy_to_host(b, y, dy, sizeof y, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_float_eq(y[1], 1.0f);
    ck_assert_float_eq(y[2], nextafterf(1.0f, 2.0f));
    /* only the first copy after a launch is perturbed */
    ck_assert_int_eq(cuda_backend_copy_to_host(b, y, dy, sizeof y, msg, sizeof msg), CUDA_STATUS_OK);
    ck_assert_float_eq(y[2], 1.0f);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_dynamic_shared_above_48k)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_load_ptx(b, dynshared_ptx, strlen(dynshared_ptx), "dynsize", msg, sizeof msg),
                     CUDA_STATUS_OK);
    uint64_t d;
    ck_assert_int_eq(cuda_backend_alloc(b, 32 * 4, &d, msg, sizeof msg), CUDA_STATUS_OK);
    void *args[] = {&d};
    /* the stand-in refuses more than 48 KiB unless the limit was raised */
    kemu_launch_config cfg = {{1, 0, 0}, {32, 0, 0}, {0, 0, 0}, 64 * 1024, 0};
    double seconds;
    ck_assert_msg(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg) == CUDA_STATUS_OK, "%s", msg);
    unsigned out[32];
    cuda_backend_copy_to_host(b, out, d, sizeof out, msg, sizeof msg);
    ck_assert_uint_eq(out[0], 64 * 1024);
    ck_assert_uint_eq(out[31], 64 * 1024);
    /* beyond the device's opt-in maximum the raise itself fails, and says so */
    cfg.shared_bytes = 300 * 1024;
    ck_assert_int_eq(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg), CUDA_STATUS_FAILED);
    ck_assert_msg(strstr(msg, "cannot raise the dynamic shared memory of dynsize to 307200 bytes (static 0, device 0 "
                              "allows 232448 per block): CUDA_ERROR_INVALID_VALUE") != NULL,
                  "%s", msg);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_cluster_launch)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_load_ptx(b, cluster_ptx, strlen(cluster_ptx), "cluster_size", msg, sizeof msg),
                     CUDA_STATUS_OK);
    uint64_t d;
    ck_assert_int_eq(cuda_backend_alloc(b, 4 * 4, &d, msg, sizeof msg), CUDA_STATUS_OK);
    void *args[] = {&d};
    kemu_launch_config cfg = {{4, 0, 0}, {32, 0, 0}, {2, 0, 0}, 0, 0};
    double seconds;
    ck_assert_msg(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg) == CUDA_STATUS_OK, "%s", msg);
    unsigned out[4];
    cuda_backend_copy_to_host(b, out, d, sizeof out, msg, sizeof msg);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(out[i], 2);
    cfg.cluster[0] = 4;
    ck_assert_int_eq(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg), CUDA_STATUS_OK);
    cuda_backend_copy_to_host(b, out, d, sizeof out, msg, sizeof msg);
    ck_assert_uint_eq(out[3], 4);
    cuda_backend_close(b);
}
END_TEST

START_TEST(test_kernel_fault)
{
    cuda_backend *b = open_standin();
    char msg[1024] = "";
    ck_assert_int_eq(cuda_backend_load_ptx(b, fault_ptx, strlen(fault_ptx), "bad", msg, sizeof msg), CUDA_STATUS_OK);
    uint64_t d = 0;
    void *args[] = {&d};
    kemu_launch_config cfg = {{1, 0, 0}, {1, 0, 0}, {0, 0, 0}, 0, 0};
    double seconds;
    ck_assert_int_eq(cuda_backend_launch(b, &cfg, args, &seconds, msg, sizeof msg), CUDA_STATUS_KERNEL_FAULT);
    ck_assert_str_eq(msg, "kernel bad faulted on CUDA device 0: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access "
                          "was encountered)");
    /* the context is unusable afterwards; closing it still works */
    uint64_t p;
    ck_assert_int_eq(cuda_backend_alloc(b, 16, &p, msg, sizeof msg), CUDA_STATUS_FAILED);
    ck_assert_msg(strstr(msg, "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL, "%s", msg);
    cuda_backend_close(b);
}
END_TEST

/* ---- tolerance and comparison --------------------------------------------- */

static kemu_kernel *load_kernel(kemu_device **dev, const char *ptx, const char *name)
{
    kemu_error err;
    ck_assert_int_eq(kemu_device_create(NULL, dev, &err), KEMU_OK);
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx(*dev, ptx, strlen(ptx), "t.ptx", &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    return k;
}

START_TEST(test_tolerance_from_bytecode)
{
    kemu_device *dev;
    cuda_tolerance t;
    cuda_tolerance_for_kernel(load_kernel(&dev, approx_ptx, "exact"), &t);
    ck_assert_int_eq(t.approximate, 0);
    ck_assert_uint_eq(t.opts.ulps, 0);
    ck_assert(t.opts.rtol == 0 && t.opts.atol == 0);
    ck_assert_str_eq(t.description, "0 ULPs (no approximate instructions)");
    kemu_device_destroy(dev);

    /* through a call; the sin in a function it does not call is not counted */
    cuda_tolerance_for_kernel(load_kernel(&dev, approx_ptx, "uses_ex2"), &t);
    ck_assert_int_eq(t.approximate, 1);
    ck_assert_uint_eq(t.opts.ulps, 2);
    ck_assert(t.opts.atol == 0);
    ck_assert_str_eq(t.description, "2 ULPs (approximate: ex2.approx.f32)");
    kemu_device_destroy(dev);

    cuda_tolerance_for_kernel(load_kernel(&dev, approx_ptx, "uses_sin"), &t);
    ck_assert_uint_eq(t.opts.ulps, 0);
    ck_assert(fabs(t.opts.atol - pow(2, -20.5)) < 1e-9);
    ck_assert_str_eq(t.description, "0 ULPs, atol 6.74e-07 (approximate: sin.approx.f32)");
    kemu_device_destroy(dev);

    cuda_tolerance_for_kernel(load_kernel(&dev, approx_ptx, "fast_div"), &t);
    ck_assert_uint_eq(t.opts.ulps, 2);
    ck_assert_str_eq(t.description, "2 ULPs (approximate: div.full.f32)");
    kemu_device_destroy(dev);

    ck_assert_int_eq(cuda_kernel_target_sm(load_kernel(&dev, cluster_ptx, "cluster_size")), 90);
    kemu_device_destroy(dev);

    io_compare_opts user = {4, 1e-6, 0, 0};
    cuda_tolerance_from_user(&user, &t);
    ck_assert_str_eq(t.description, "4 ULPs, rtol 1e-06 (given)");
}
END_TEST

static void make_array(io_array *a, io_dtype dt, size_t n)
{
    memset(a, 0, sizeof *a);
    a->dtype = dt;
    a->ndim = 1;
    a->shape[0] = n;
    a->count = n;
    char err[128];
    ck_assert_int_eq(io_array_alloc(a, err, sizeof err), 0);
}

START_TEST(test_compare_lines)
{
    io_array e, g;
    make_array(&e, IO_DT_F32, 8);
    make_array(&g, IO_DT_F32, 8);
    float *fe = e.data, *fg = g.data;
    for (int i = 0; i < 8; i++)
        fe[i] = fg[i] = (float)i;
    io_compare_result r;
    char line[512];
    io_compare_opts exact = {0, 0, 0, 0};
    ck_assert_int_eq(cuda_compare_buffer("y.npy", &e, &g, &exact, &r, line, sizeof line), 0);
    ck_assert_str_eq(line, "y.npy: f32[8]: max ULP distance 0, 0 mismatches");
    fg[3] = nextafterf(3.0f, 4.0f);
    fg[5] = nextafterf(nextafterf(5.0f, 6.0f), 6.0f);
    ck_assert_int_eq(cuda_compare_buffer("y.npy", &e, &g, &exact, &r, line, sizeof line), 0);
    ck_assert_uint_eq(r.mismatches, 2);
    ck_assert_str_eq(line, "y.npy: f32[8]: max ULP distance 2, 2 mismatches, first at [3]: emu 3 != cuda 3.00000024");
    io_compare_opts two = {2, 0, 0, 0};
    ck_assert_int_eq(cuda_compare_buffer("y.npy", &e, &g, &two, &r, line, sizeof line), 0);
    ck_assert_str_eq(line, "y.npy: f32[8]: max ULP distance 2, 0 mismatches");
    /* NaNs with different payloads match */
    uint32_t qnan = 0x7fc00000u, other = 0x7fffffffu;
    memcpy(&fe[6], &qnan, 4);
    memcpy(&fg[6], &other, 4);
    ck_assert_int_eq(cuda_compare_buffer("y.npy", &e, &g, &two, &r, line, sizeof line), 0);
    ck_assert_uint_eq(r.mismatches, 0);
    io_array_free(&e);
    io_array_free(&g);

    make_array(&e, IO_DT_I32, 4);
    make_array(&g, IO_DT_I32, 4);
    int32_t *ie = e.data, *ig = g.data;
    for (int i = 0; i < 4; i++)
        ie[i] = ig[i] = i;
    ig[1] = 11;
    /* integers are exact whatever the tolerance */
    io_compare_opts loose = {100, 1, 1, 0};
    ck_assert_int_eq(cuda_compare_buffer("c.npy", &e, &g, &loose, &r, line, sizeof line), 0);
    ck_assert_str_eq(line, "c.npy: i32[4]: max difference 10, 1 mismatch, first at [1]: emu 1 != cuda 11");
    /* shapes must agree */
    g.shape[0] = 2;
    g.count = 2;
    ck_assert_int_eq(cuda_compare_buffer("c.npy", &e, &g, &loose, &r, line, sizeof line), -1);
    ck_assert_msg(strstr(line, "c.npy: cannot compare: shape differs") != NULL, "%s", line);
    io_array_free(&e);
    io_array_free(&g);
}
END_TEST

static Suite *cuda_suite(void)
{
    Suite *s = suite_create("cuda");
    TCase *t = tcase_create("driver");
    tcase_add_test(t, test_no_library);
    tcase_add_test(t, test_library_without_entry_points);
    tcase_add_test(t, test_error_names);
    tcase_add_test(t, test_nvidia_stub_library);
    suite_add_tcase(s, t);
    t = tcase_create("backend");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_open_device);
    tcase_add_test(t, test_no_such_device);
    tcase_add_test(t, test_init_fails);
    tcase_add_test(t, test_jit_error_log);
    tcase_add_test(t, test_ptx_too_new);
    tcase_add_test(t, test_saxpy_roundtrip);
    tcase_add_test(t, test_perturbed_copy);
    tcase_add_test(t, test_dynamic_shared_above_48k);
    tcase_add_test(t, test_cluster_launch);
    tcase_add_test(t, test_kernel_fault);
    suite_add_tcase(s, t);
    t = tcase_create("compare");
    tcase_add_test(t, test_tolerance_from_bytecode);
    tcase_add_test(t, test_compare_lines);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(cuda_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
