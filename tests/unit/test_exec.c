/* Unit tests of the launch room (src/exec/): architecture profiles, launch
 * validation with its exact messages, device memory API errors, results
 * that do not depend on the number of host threads, the call-depth limit
 * and what --timeout and the step limit bound. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/call_support.h"
#include "exec/exec.h"

#define H ".version 8.0\n.target sm_80\n.address_size 64\n"

static kemu_kernel *load(kemu_device *dev, const char *ptx, const char *name)
{
    kemu_error err;
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx(dev, ptx, strlen(ptx), "t.ptx", &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    return k;
}

/* Several devices (kemu_device_set_ordinal, _set_peer_access,
 * _share_allocation): each device's allocations lie in its own address
 * range; a kernel of device 0 that loads device 1's memory faults naming
 * the peer until peer access is enabled, then copies it; a shared
 * allocation is reachable without peer access; the ordinal is fixed by the
 * first allocation. */
START_TEST(devices_peer_access)
{
    static const char *ptx = H ".visible .entry copy(.param .u64 dst, .param .u64 src)\n{\n"
                             " .reg .u64 %rd<3>;\n .reg .u32 %r<2>;\n"
                             " ld.param.u64 %rd1, [dst];\n ld.param.u64 %rd2, [src];\n"
                             " ld.global.u32 %r1, [%rd2];\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
    kemu_device *d0, *d1;
    kemu_error err;
    ck_assert_int_eq(kemu_device_create(NULL, &d0, &err), KEMU_OK);
    ck_assert_int_eq(kemu_device_create(NULL, &d1, &err), KEMU_OK);
    ck_assert_int_eq(kemu_device_set_ordinal(d1, KEMU_MAX_DEVICES, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_device_set_ordinal(d1, 1, &err), KEMU_OK);
    ck_assert_int_eq(kemu_device_set_peer_access(d0, d0, 1, &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_kernel *k = load(d0, ptx, "copy");
    uint64_t dst, src, shared;
    ck_assert_int_eq(kemu_malloc(d0, 4, KEMU_UNINIT_ZERO, &dst, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d1, 4, KEMU_UNINIT_ZERO, &src, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d1, 4, KEMU_UNINIT_ZERO, &shared, &err), KEMU_OK);
    ck_assert_int_eq(kemu_device_set_ordinal(d1, 2, &err), KEMU_ERR_INVALID_ARGUMENT); /* allocated already */
    ck_assert_uint_eq(dst & ~(MEM_DEVICE_STRIDE - 1), MEM_DEVICE_BASE);
    ck_assert_uint_eq(src & ~(MEM_DEVICE_STRIDE - 1), MEM_DEVICE_BASE + MEM_DEVICE_STRIDE);
    uint32_t v = 1234, w = 99, got = 0;
    ck_assert_int_eq(kemu_memcpy_htod(d1, src, &v, 4, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_htod(d1, shared, &w, 4, &err), KEMU_OK);
    void *args[] = {&dst, &src};
    kemu_launch_config lc = {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    /* device 1 unknown to device 0: no allocation there */
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(r.fault_message, "(no allocation)"), "%s", r.fault_message);
    kemu_report_free(&r);
    /* known, peer access not enabled: the fault names it */
    ck_assert_int_eq(kemu_device_set_peer_access(d0, d1, 0, &err), KEMU_OK);
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(r.fault_message, "global load of 4 bytes") &&
                  strstr(r.fault_message, "of device 1 (4 bytes at") &&
                  strstr(r.fault_message, "peer access from device 0 to device 1 is not enabled"), "%s",
                  r.fault_message);
    kemu_report_free(&r);
    /* a shared allocation is reachable anyway */
    void *sargs[] = {&dst, &shared};
    ck_assert_int_eq(kemu_device_share_allocation(d1, shared + 1, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_device_share_allocation(d1, shared, &err), KEMU_OK);
    ck_assert_int_eq(kemu_launch(k, &lc, sargs, NULL, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_dtoh(d0, &got, dst, 4, &err), KEMU_OK);
    ck_assert_uint_eq(got, 99);
    /* enabled: the load works */
    ck_assert_int_eq(kemu_device_set_peer_access(d0, d1, 1, &err), KEMU_OK);
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_dtoh(d0, &got, dst, 4, &err), KEMU_OK);
    ck_assert_uint_eq(got, 1234);
    /* forgotten: no allocation again */
    ck_assert_int_eq(kemu_device_set_peer_access(d0, d1, -1, &err), KEMU_OK);
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(r.fault_message, "(no allocation)"), "%s", r.fault_message);
    kemu_report_free(&r);
    kemu_device_destroy(d1);
    kemu_device_destroy(d0);
}
END_TEST

START_TEST(arch_profiles)
{
    ck_assert_int_eq(exec_arch_find("sm_80")->sm, 80);
    ck_assert_int_eq(exec_arch_find("sm_90a")->sm, 90);
    ck_assert_ptr_null(exec_arch_find("sm_81"));
    ck_assert_ptr_null(exec_arch_find("compute_80"));
    ck_assert_int_eq(exec_arch_for_sm(89)->sm, 89);
    ck_assert_int_eq(exec_arch_for_sm(88)->sm, 87);
    ck_assert_uint_eq(exec_arch_find("sm_90")->max_shared_optin, 227 * 1024);
    kemu_device *d;
    kemu_error err;
    kemu_device_config cfg = {"sm_42", 0, NULL, 0, 0};
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, "unknown architecture 'sm_42'"), "%s", err.message);
    kemu_device_config cfg2 = {NULL, 0, "random:x", 0, 0};
    ck_assert_int_eq(kemu_device_create(&cfg2, &d, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, "bad schedule seed in 'random:x'"), "%s", err.message);
}
END_TEST

START_TEST(launch_validation)
{
    kemu_device *d;
    kemu_error err;
    ck_assert_int_eq(kemu_device_create(NULL, &d, &err), KEMU_OK);
    kemu_kernel *k = load(d, H ".visible .entry k(.param .u32 x)\n.reqntid 64\n{\n ret;\n}\n"
                             ".visible .entry j()\n{\n ret;\n}\n", "k");
    kemu_kernel *j;
    ck_assert_int_eq(kemu_module_get_kernel(k->mod, "j", &j, &err), KEMU_OK);
    uint32_t x = 1;
    void *args[] = {&x};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_ERR_LAUNCH_CONFIG);
    ck_assert_msg(strstr(err.message, "requires a block of 64,1,1 threads (.reqntid); the launch has 32,1,1"), "%s", err.message);
    kemu_launch_config big = {{1, 1, 1}, {1024, 2, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(j, &big, NULL, NULL, &err), KEMU_ERR_LAUNCH_CONFIG);
    ck_assert_msg(strstr(err.message, "2048 threads per block exceed the sm_80 limit of 1024"), "%s", err.message);
    kemu_launch_config z = {{1, 1, 1}, {1, 1, 65}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(j, &z, NULL, NULL, &err), KEMU_ERR_LAUNCH_CONFIG);
    ck_assert_msg(strstr(err.message, "block z dimension 65 exceeds the sm_80 limit of 64"), "%s", err.message);
    kemu_launch_config sh = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 200 * 1024, 0};
    ck_assert_int_eq(kemu_launch(j, &sh, NULL, NULL, &err), KEMU_ERR_LAUNCH_CONFIG);
    ck_assert_msg(strstr(err.message, "204800 bytes of shared memory per block (0 static + 204800 dynamic) exceed the sm_80 limit of 166912"),
                  "%s", err.message);
    kemu_launch_config cl = {{2, 1, 1}, {32, 1, 1}, {2, 1, 1}, 0, 0};
    ck_assert_int_eq(kemu_launch(j, &cl, NULL, NULL, &err), KEMU_ERR_LAUNCH_CONFIG);
    ck_assert_msg(strstr(err.message, "clusters need sm_90 or later (the device is sm_80)"), "%s", err.message);
    kemu_launch_config ok = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &ok, NULL, NULL, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_launch(k, &ok, args, NULL, &err), KEMU_OK);
    kemu_device_destroy(d);
}
END_TEST

START_TEST(memory_api_errors)
{
    kemu_device *d;
    kemu_error err;
    ck_assert_int_eq(kemu_device_create(NULL, &d, &err), KEMU_OK);
    uint64_t a;
    ck_assert_int_eq(kemu_malloc(d, 64, KEMU_UNINIT_ZERO, &a, &err), KEMU_OK);
    char buf[128] = {0};
    ck_assert_int_eq(kemu_memcpy_htod(d, a, buf, 65, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, "is not inside one device allocation"), "%s", err.message);
    ck_assert_int_eq(kemu_memset(d, a + 8, 7, 56, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_dtoh(d, buf, a, 64, &err), KEMU_OK);
    ck_assert_int_eq(buf[7], 0);
    ck_assert_int_eq(buf[8], 7);
    ck_assert_int_eq(kemu_free(d, a + 1, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kemu_free(d, a, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(d, a, &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_device_destroy(d);
}
END_TEST

/* Every block atomically bumps a counter and prints its id: the printf
 * order is by block and the results are the same for 1 and 2 threads. */
START_TEST(results_independent_of_threads)
{
    const char *ptx = H ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
                        ".global .align 1 .b8 fmt[12] = {98, 108, 111, 99, 107, 32, 37, 100, 10, 0};\n"
                        ".visible .entry k(.param .u64 c)\n{\n .local .align 8 .b8 buf[8];\n"
                        " .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .pred %p;\n"
                        " ld.param.u64 %rd1, [c];\n atom.global.add.u32 %r1, [%rd1], 1;\n"
                        " mov.u32 %r2, %tid.x;\n setp.ne.u32 %p, %r2, 0;\n @%p bra $end;\n"
                        " mov.u32 %r3, %ctaid.x;\n mov.u64 %rd2, buf;\n st.local.u32 [%rd2], %r3;\n"
                        " cvta.local.u64 %rd3, %rd2;\n mov.u64 %rd4, fmt;\n cvta.global.u64 %rd5, %rd4;\n"
                        " {\n .param .b64 p0;\n st.param.b64 [p0], %rd5;\n .param .b64 p1;\n st.param.b64 [p1], %rd3;\n"
                        " .param .b32 rv;\n call.uni (rv), vprintf, (p0, p1);\n }\n$end:\n ret;\n}\n";
    char *outputs[3];
    for (int t = 0; t < 3; t++) {
        kemu_device *d;
        kemu_error err;
        kemu_device_config cfg = {NULL, t == 2 ? 2 : t + 1, t == 2 ? "random:7" : NULL, 0, 0};
        ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
        kemu_kernel *k = load(d, ptx, "k");
        uint64_t c;
        ck_assert_int_eq(kemu_malloc(d, 4, KEMU_UNINIT_ZERO, &c, &err), KEMU_OK);
        void *args[] = {&c};
        kemu_launch_config lc = {{40, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
        kemu_report r;
        ck_assert_msg(kemu_launch(k, &lc, args, &r, &err) == KEMU_OK, "%s", err.message);
        uint32_t count;
        kemu_memcpy_dtoh(d, &count, c, 4, &err);
        ck_assert_uint_eq(count, 40 * 64);
        outputs[t] = strdup(r.printf_output);
        kemu_report_free(&r);
        kemu_device_destroy(d);
    }
    ck_assert(!strncmp(outputs[0], "block 0\nblock 1\nblock 2\n", 24));
    ck_assert(strstr(outputs[0], "block 39\n"));
    ck_assert_str_eq(outputs[0], outputs[1]);
    ck_assert_str_eq(outputs[0], outputs[2]);
    for (int t = 0; t < 3; t++)
        free(outputs[t]);
}
END_TEST

/* Device printf keeps at most the printf FIFO's size per launch
 * (cudaLimitPrintfFifoSize), whole records in block order, and says how much
 * it dropped; the default is 1 MiB. */
START_TEST(printf_fifo_bounds_output)
{
    kemu_device *dev;
    kemu_error err;
    kemu_module *m;
    kemu_kernel *k;
    ck_assert(kemu_device_create(NULL, &dev, &err) == KEMU_OK);
    ck_assert_msg(kemu_module_load_ptx_file(dev, E2E_KERNELS_DIR "/printf_flood.ptx", &m, &err) == KEMU_OK, "%s",
                  err.message);
    ck_assert(kemu_module_get_kernel(m, "printf_flood", &k, &err) == KEMU_OK);
    int lines = 100; /* 100 records of 34 bytes */
    void *args[] = {&lines};
    kemu_launch_config lc = {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    exec_set_printf_fifo(dev, 1000);
    ck_assert(kemu_launch(k, &lc, args, &r, &err) == KEMU_OK);
    const char *note = "[kemu] the printf FIFO (cudaLimitPrintfFifoSize, 1000 bytes) was full: 2414 bytes of printf "
                       "output were dropped\n";
    ck_assert_uint_eq(r.printf_length, 29 * 34 + strlen(note));
    ck_assert(!strncmp(r.printf_output, "block    0 thread   0 line      0\n", 34));
    ck_assert(!strncmp(r.printf_output + 28 * 34, "block    0 thread   0 line     28\n", 34));
    ck_assert(!strncmp(r.printf_output + 29 * 34, note, strlen(note)));
    kemu_report_free(&r);
    exec_set_printf_fifo(dev, 0); /* the default, 1 MiB: everything */
    ck_assert(kemu_launch(k, &lc, args, &r, &err) == KEMU_OK);
    ck_assert_uint_eq(r.printf_length, 100 * 34);
    kemu_report_free(&r);
    kemu_device_destroy(dev);
}
END_TEST

/* Recursion through a .func: 2048 nested calls (the call stack's room for
 * 16-byte minimal frames, src/exec/launch.c) run; one more faults as a
 * call stack overflow naming kernel, block, thread and PTX line, whether or
 * not the frames hold locals and with no --timeout. */
START_TEST(call_depth_limit)
{
    const char *ptx = H ".func (.param .b32 r) down(.param .b32 n)\n{\n .reg .b32 %r<3>; .reg .pred %p;\n"
                        " ld.param.b32 %r1, [n];\n setp.eq.u32 %p, %r1, 0;\n @%p bra $done;\n"
                        " sub.u32 %r2, %r1, 1;\n {\n .param .b32 a;\n st.param.b32 [a], %r2;\n"
                        " .param .b32 b;\n call (b), down, (a);\n ld.param.b32 %r1, [b];\n }\n"
                        " add.u32 %r1, %r1, 1;\n$done:\n st.param.b32 [r], %r1;\n ret;\n}\n"
                        ".func forever()\n{\n call forever, ();\n ret;\n}\n"
                        ".visible .entry depth(.param .u64 out, .param .u32 n)\n{\n .reg .b32 %r<3>; .reg .b64 %rd<2>;\n"
                        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [n];\n"
                        " {\n .param .b32 a;\n st.param.b32 [a], %r1;\n .param .b32 b;\n"
                        " call (b), down, (a);\n ld.param.b32 %r2, [b];\n }\n st.global.u32 [%rd1], %r2;\n ret;\n}\n"
                        ".visible .entry recurse_forever()\n{\n call forever, ();\n ret;\n}\n";
    kemu_device *d;
    kemu_error err;
    ck_assert_int_eq(kemu_device_create(NULL, &d, &err), KEMU_OK);
    kemu_kernel *k = load(d, ptx, "depth");
    kemu_kernel *f;
    ck_assert_int_eq(kemu_module_get_kernel(k->mod, "recurse_forever", &f, &err), KEMU_OK);
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(d, 4, KEMU_UNINIT_ZERO, &out, &err), KEMU_OK);
    uint32_t n = 2047, got = 0;
    void *args[] = {&out, &n};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    kemu_memcpy_dtoh(d, &got, out, 4, &err);
    ck_assert_uint_eq(got, 2047);
    n = 2048;
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "kernel 'depth' faulted: call stack overflow calling 'down': more than 2048 "
                                      "nested calls"), "%s", err.message);
    ck_assert_msg(strstr(err.message, "at t.ptx:15 in function down"), "%s", err.message);
    kemu_launch_config two = {{2, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(f, &two, NULL, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert(r.faulted);
    ck_assert_msg(strstr(r.fault_message, "kernel 'recurse_forever' faulted: call stack overflow calling 'forever'"),
                  "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "at t.ptx:25 in function forever\n  block (0,0,0), thread (0,0,0)"), "%s",
                  r.fault_message);
    kemu_report_free(&r);
    kemu_device_destroy(d);
}
END_TEST

/* --timeout bounds any launch: a loop through brx.idx (no backward bra)
 * stops with the timeout fault naming the warps, and a launch already past
 * its deadline at start runs no block and says so. */
START_TEST(timeout_bounds_launch)
{
    const char *ptx = H ".visible .entry spin()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, 0;\n$top:\n"
                        " $t: .branchtargets $top;\n brx.idx %r1, $t;\n}\n"
                        ".visible .entry empty()\n{\n ret;\n}\n";
    kemu_device *d;
    kemu_error err;
    kemu_device_config cfg = {NULL, 0, NULL, 0.3, 0};
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
    kemu_kernel *spin = load(d, ptx, "spin"), *empty;
    ck_assert_int_eq(kemu_module_get_kernel(spin->mod, "empty", &empty, &err), KEMU_OK);
    kemu_launch_config lc = {{3, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(spin, &lc, NULL, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "kernel 'spin' faulted: the launch timed out after 0.3 seconds (--timeout); "
                                      "the block's warps:\n    warp 0 lanes 0xffffffff run at t.ptx:10"), "%s",
                  err.message);
    ck_assert(r.seconds < 5);
    kemu_report_free(&r);
    kemu_device_destroy(d);
    cfg.timeout = 1e-9;
    ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
    empty = load(d, ptx, "empty");
    ck_assert_int_eq(kemu_launch(empty, &lc, NULL, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "kernel 'empty' faulted: the launch timed out after 1e-09 seconds (--timeout) "
                                      "between blocks; 0 of 3 blocks completed"), "%s", err.message);
    kemu_device_destroy(d);
}
END_TEST

/* The step limit bounds a launch by warp-instructions per block instead of
 * wall time: a bra loop and a brx.idx loop fault at the same place on every
 * run, whatever the host threads; a kernel under the limit runs; and
 * KEMU_STEP_LIMIT sets the limit of new devices, refusing what is not a
 * number. */
START_TEST(step_limit_bounds_launch)
{
    const char *ptx = H ".visible .entry spin()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, 0;\n$top:\n"
                        " $t: .branchtargets $top;\n brx.idx %r1, $t;\n}\n"
                        ".visible .entry count(.param .u32 n)\n{\n .reg .b32 %r<3>; .reg .pred %p;\n"
                        " ld.param.u32 %r1, [n];\n mov.u32 %r2, 0;\n$loop:\n add.u32 %r2, %r2, 1;\n"
                        " setp.lt.u32 %p, %r2, %r1;\n @%p bra $loop;\n ret;\n}\n";
    char first[2048] = "";
    for (int threads = 1; threads <= 2; threads++) {
        kemu_device *d;
        kemu_error err;
        kemu_device_config cfg = {NULL, threads, NULL, 0, 0};
        ck_assert_int_eq(kemu_device_create(&cfg, &d, &err), KEMU_OK);
        ck_assert_int_eq(kemu_device_set_step_limit(d, 5000, &err), KEMU_OK);
        kemu_kernel *spin = load(d, ptx, "spin"), *count;
        ck_assert_int_eq(kemu_module_get_kernel(spin->mod, "count", &count, &err), KEMU_OK);
        kemu_launch_config lc = {{3, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
        ck_assert_int_eq(kemu_launch(spin, &lc, NULL, NULL, &err), KEMU_ERR_KERNEL_FAULT);
        ck_assert_msg(strstr(err.message, "kernel 'spin' faulted: the block ran past the step limit of 5000 "
                                          "warp-instructions (KEMU_STEP_LIMIT); the block's warps:\n"
                                          "    warp 0 lanes 0xffffffff run at t.ptx:"), "%s", err.message);
        ck_assert_msg(strstr(err.message, "block (0,0,0)"), "%s", err.message);
        uint32_t n = 1000000;
        void *args[] = {&n};
        ck_assert_int_eq(kemu_launch(count, &lc, args, NULL, &err), KEMU_ERR_KERNEL_FAULT);
        if (threads == 1)
            snprintf(first, sizeof first, "%s", err.message);
        else
            ck_assert_str_eq(err.message, first);
        n = 100;
        ck_assert_msg(kemu_launch(count, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
        ck_assert_int_eq(kemu_device_set_step_limit(d, 0, &err), KEMU_OK);
        n = 10000;
        ck_assert_msg(kemu_launch(count, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
        kemu_device_destroy(d);
    }
    kemu_error err;
    ck_assert_int_eq(kemu_device_set_step_limit(NULL, 1, &err), KEMU_ERR_INVALID_ARGUMENT);
    kemu_device *d;
    setenv("KEMU_STEP_LIMIT", "12x", 1);
    ck_assert_int_eq(kemu_device_create(NULL, &d, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, "KEMU_STEP_LIMIT wants a number of warp-instructions (0: no limit), got '12x'"),
                  "%s", err.message);
    setenv("KEMU_STEP_LIMIT", "300", 1);
    ck_assert_int_eq(kemu_device_create(NULL, &d, &err), KEMU_OK);
    unsetenv("KEMU_STEP_LIMIT");
    kemu_kernel *spin = load(d, ptx, "spin");
    kemu_launch_config one = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(spin, &one, NULL, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "step limit of 300 warp-instructions"), "%s", err.message);
    kemu_device_destroy(d);
}
END_TEST

/* The number the fidelity report gives after `what` ("ex2.approx.f32 (line
 * N): COUNT: ..."), or of a class line ("  approximate: COUNT (..."); -1
 * when absent. */
static long long fidelity_count(const char *text, const char *what)
{
    const char *at = strstr(text, what);
    if (!at)
        return -1;
    at += strlen(what);
    if (*at == ' ' && at[1] == '(') { /* an instruction: past "(line N)" */
        at = strchr(at, ')');
        if (!at)
            return -1;
        at++;
    }
    long long n = -1;
    return sscanf(at, ": %lld", &n) == 1 ? n : -1;
}

/* The fidelity report counts what each thread executed: n threads each ran
 * one ex2.approx, one sin.approx, one div.approx and one float atomic, one
 * thread read the clock; the classes add up to the launch's
 * thread-instructions; a second launch doubles every count; with racecheck
 * on as well, the race is still found (the report passes every event on). */
START_TEST(fidelity_report_counts)
{
    kemu_device *dev;
    kemu_error err;
    kemu_module *m;
    kemu_kernel *k, *race;
    ck_assert(kemu_device_create(NULL, &dev, &err) == KEMU_OK);
    char *text = NULL;
    ck_assert(kemu_fidelity_report(dev, &text, NULL, &err) == KEMU_ERR_INVALID_ARGUMENT); /* not on */
    ck_assert(kemu_device_set_fidelity_report(dev, 1, &err) == KEMU_OK);
    kemu_check_config cc;
    memset(&cc, 0, sizeof cc);
    cc.tools = KEMU_TOOL_RACECHECK;
    ck_assert(kemu_device_set_checks(dev, &cc, &err) == KEMU_OK);
    ck_assert_msg(kemu_module_load_ptx_file(dev, E2E_KERNELS_DIR "/fidelity.ptx", &m, &err) == KEMU_OK, "%s",
                  err.message);
    ck_assert(kemu_module_get_kernel(m, "fidelity_mix", &k, &err) == KEMU_OK);
    ck_assert(kemu_module_get_kernel(m, "fidelity_race", &race, &err) == KEMU_OK);
    const int n = 200;
    uint64_t out, sum, clk;
    ck_assert(kemu_malloc(dev, n * sizeof(float), KEMU_UNINIT_NAN, &out, &err) == KEMU_OK);
    ck_assert(kemu_malloc(dev, sizeof(float), KEMU_UNINIT_NAN, &sum, &err) == KEMU_OK);
    ck_assert(kemu_malloc(dev, sizeof(long long), KEMU_UNINIT_NAN, &clk, &err) == KEMU_OK);
    float host[200];
    for (int i = 0; i < n; i++)
        host[i] = (float)i;
    ck_assert(kemu_memcpy_htod(dev, out, host, sizeof host, &err) == KEMU_OK);
    float zero = 0;
    ck_assert(kemu_memcpy_htod(dev, sum, &zero, sizeof zero, &err) == KEMU_OK);
    int nn = n;
    void *args[] = {&out, &sum, &clk, &nn};
    kemu_launch_config lc = {{2, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, 0}; /* 256 threads, 200 at work */
    kemu_report r;
    uint64_t lanes = 0;
    for (int launch = 1; launch <= 2; launch++) {
        ck_assert(kemu_launch(k, &lc, args, &r, &err) == KEMU_OK);
        lanes += r.thread_instructions;
        kemu_report_free(&r);
        ck_assert(kemu_fidelity_report(dev, &text, NULL, &err) == KEMU_OK);
        ck_assert_msg(strstr(text, launch == 1 ? "fidelity of fidelity_mix (1 launch," : "(2 launches,"), "%s",
                      text);
        ck_assert_int_eq(fidelity_count(text, "ex2.approx.f32"), launch * n);
        ck_assert_int_eq(fidelity_count(text, "sin.approx.f32"), launch * n);
        ck_assert_int_eq(fidelity_count(text, "div.approx.f32"), launch * n);
        ck_assert_int_eq(fidelity_count(text, "atom.add.f32"), launch * n);
        ck_assert_int_eq(fidelity_count(text, "%clock"), launch);
        ck_assert_int_eq(fidelity_count(text, "  approximate"), 3 * launch * n);
        ck_assert_int_eq(fidelity_count(text, "  order-dependent"), launch * n);
        ck_assert_int_eq(fidelity_count(text, "  model-dependent"), launch);
        long long exact = fidelity_count(text, "fitted to the H200)");
        ck_assert_msg(exact > 0, "%s", text);
        ck_assert_int_eq((uint64_t)(exact + 4 * launch * n + launch), lanes);
        ck_assert_msg(!strstr(text, "refused"), "%s", text);
        free(text);
    }
    /* the JSON form says the same */
    char *json = NULL;
    ck_assert(kemu_fidelity_report(dev, NULL, &json, &err) == KEMU_OK);
    ck_assert_msg(strstr(json, "\"kernel\":\"fidelity_mix\"") && strstr(json, "\"approximate\":1200") &&
                      strstr(json, "\"order_dependent\":400") && strstr(json, "\"model_dependent\":2"),
                  "%s", json);
    free(json);
    /* racecheck still sees every access */
    uint64_t word;
    ck_assert(kemu_malloc(dev, sizeof(int), KEMU_UNINIT_NAN, &word, &err) == KEMU_OK);
    void *rargs[] = {&word};
    kemu_launch_config rc = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert(kemu_launch(race, &rc, rargs, &r, &err) == KEMU_OK);
    kemu_report_free(&r);
    kemu_check_summary summary;
    ck_assert(kemu_check_results(dev, 0, &summary, &err) == KEMU_OK);
    ck_assert_msg(summary.errors >= 1, "%s", summary.text);
    kemu_check_summary_free(&summary);
    ck_assert(kemu_fidelity_report(dev, &text, NULL, &err) == KEMU_OK);
    ck_assert_msg(strstr(text, "fidelity of fidelity_race (1 launch,"), "%s", text);
    free(text);
    /* off: forgotten */
    ck_assert(kemu_device_set_fidelity_report(dev, 0, &err) == KEMU_OK);
    ck_assert(kemu_fidelity_report(dev, &text, NULL, &err) == KEMU_ERR_INVALID_ARGUMENT);
    kemu_device_destroy(dev);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("exec");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, arch_profiles);
    tcase_add_test(tc, devices_peer_access);
    tcase_add_test(tc, launch_validation);
    tcase_add_test(tc, memory_api_errors);
    tcase_add_test(tc, results_independent_of_threads);
    tcase_add_test(tc, printf_fifo_bounds_output);
    tcase_add_test(tc, call_depth_limit);
    tcase_add_test(tc, timeout_bounds_launch);
    tcase_add_test(tc, step_limit_bounds_launch);
    tcase_add_test(tc, fidelity_report_counts);
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
