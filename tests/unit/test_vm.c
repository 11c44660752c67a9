/* Unit tests of the interpreter through the C API: small hand-written PTX
 * kernels whose results are computed by a C reference in the test. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"
#include "vm/vm.h"
#include "exec/exec.h"

#include <stdio.h>

static kemu_device *dev;

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg = {NULL, 2, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &dev, &err), KEMU_OK);
}

static void teardown(void) { kemu_device_destroy(dev); }

static kemu_kernel *load(const char *ptx, const char *name)
{
    kemu_error err;
    kemu_module *m;
    kemu_status st = kemu_module_load_ptx(dev, ptx, strlen(ptx), "test.ptx", &m, &err);
    ck_assert_msg(st == KEMU_OK, "load: %s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    return k;
}

#define HEADER ".version 8.0\n.target sm_80\n.address_size 64\n"

/* out[i] = i * 3 + 7 for i < n, with a tail. */
START_TEST(elementwise_with_tail)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry f(.param .u64 out, .param .u32 n)\n{\n"
        " .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .pred %p;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [n];\n"
        " mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mov.u32 %r4, %tid.x;\n"
        " mad.lo.s32 %r5, %r2, %r3, %r4;\n setp.ge.u32 %p, %r5, %r1;\n @%p bra $done;\n"
        " cvta.to.global.u64 %rd1, %rd1;\n mul.wide.u32 %rd2, %r5, 4;\n add.s64 %rd3, %rd1, %rd2;\n"
        " mad.lo.s32 %r4, %r5, 3, 7;\n st.global.u32 [%rd3], %r4;\n$done:\n ret;\n}\n", "f");
    kemu_error err;
    uint64_t out;
    uint32_t n = 1000;
    ck_assert_int_eq(kemu_malloc(dev, 1024 * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out, &n};
    kemu_launch_config lc = {{4, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_OK);
    uint32_t host[1024];
    ck_assert_int_eq(kemu_memcpy_dtoh(dev, host, out, sizeof host, &err), KEMU_OK);
    for (uint32_t i = 0; i < 1024; i++)
        ck_assert_uint_eq(host[i], i < n ? i * 3 + 7 : 0xffffffffu);
    ck_assert_uint_eq(r.thread_instructions > 0, 1);
    kemu_report_free(&r);
}
END_TEST

/* Shared-memory tree reduction with bar.sync; divergent loop. */
START_TEST(shared_reduction)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry red(.param .u64 in, .param .u64 out)\n{\n"
        " .shared .align 4 .b8 sm[1024];\n"
        " .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p<3>;\n"
        " ld.param.u64 %rd1, [in];\n ld.param.u64 %rd2, [out];\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mad.lo.s32 %r3, %r2, 256, %r1;\n"
        " mul.wide.u32 %rd3, %r3, 4;\n add.s64 %rd4, %rd1, %rd3;\n ld.global.u32 %r4, [%rd4];\n"
        " mov.u32 %r5, sm;\n shl.b32 %r6, %r1, 2;\n add.s32 %r7, %r5, %r6;\n st.shared.u32 [%r7], %r4;\n"
        " bar.sync 0;\n mov.u32 %r8, 128;\n"
        "$loop:\n setp.ge.u32 %p1, %r1, %r8;\n @%p1 bra $skip;\n"
        " shl.b32 %r9, %r8, 2;\n add.s32 %r10, %r7, %r9;\n ld.shared.u32 %r11, [%r10];\n"
        " ld.shared.u32 %r9, [%r7];\n add.s32 %r9, %r9, %r11;\n st.shared.u32 [%r7], %r9;\n"
        "$skip:\n bar.sync 0;\n shr.u32 %r8, %r8, 1;\n setp.ne.s32 %p2, %r8, 0;\n @%p2 bra $loop;\n"
        " setp.ne.s32 %p1, %r1, 0;\n @%p1 bra $end;\n ld.shared.u32 %r9, [sm];\n"
        " mul.wide.u32 %rd5, %r2, 4;\n add.s64 %rd6, %rd2, %rd5;\n st.global.u32 [%rd6], %r9;\n"
        "$end:\n ret;\n}\n", "red");
    kemu_error err;
    uint32_t host[1024];
    for (int i = 0; i < 1024; i++)
        host[i] = (uint32_t)(i * 7 + 1);
    uint64_t in, out;
    ck_assert_int_eq(kemu_malloc(dev, sizeof host, KEMU_UNINIT_NAN, &in, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, 16, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    kemu_memcpy_htod(dev, in, host, sizeof host, &err);
    void *args[] = {&in, &out};
    kemu_launch_config lc = {{4, 1, 1}, {256, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_OK);
    uint32_t res[4];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int b = 0; b < 4; b++) {
        uint32_t s = 0;
        for (int i = 0; i < 256; i++)
            s += host[b * 256 + i];
        ck_assert_uint_eq(res[b], s);
    }
}
END_TEST

/* An out-of-bounds store faults with kernel, block, thread and line. */
START_TEST(oob_fault_message)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry oob(.param .u64 out)\n{\n .reg .b32 %r<2>; .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd2, %r1, 4;\n"
        " add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r1;\n ret;\n}\n", "oob");
    kemu_error err;
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(dev, 40, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_int_eq(r.faulted, 1);
    ck_assert_msg(strstr(r.fault_message, "kernel 'oob' faulted: illegal address: global store of 4 bytes"),
                  "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "0 bytes past the end of allocation"), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "at test.ptx:11"), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "block (0,0,0), thread (10,0,0)"), "%s", r.fault_message);
    kemu_report_free(&r);
}
END_TEST

/* An access just before an allocation names that allocation and how far
 * before its start the address is (compute-sanitizer's wording); one inside
 * a freed allocation says it was freed. */
START_TEST(oob_fault_before_and_freed)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry before(.param .u64 out)\n{\n .reg .b32 %r<2>; .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd2, %r1, 4;\n"
        " add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3+-256], %r1;\n ret;\n}\n", "before");
    kemu_error err;
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(dev, 1024, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(k, &lc, args, &r, &err), KEMU_ERR_KERNEL_FAULT);
    char want[160];
    snprintf(want, sizeof want, "256 bytes before the start of allocation #");
    ck_assert_msg(strstr(r.fault_message, want), "%s", r.fault_message);
    snprintf(want, sizeof want, "(1024 bytes at 0x%llx))", (unsigned long long)out);
    ck_assert_msg(strstr(r.fault_message, want), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "thread (0,0,0)"), "%s", r.fault_message);
    kemu_report_free(&r);

    /* the same kernel 512 bytes into a freed allocation */
    uint64_t gone;
    ck_assert_int_eq(kemu_malloc(dev, 4096, KEMU_UNINIT_NAN, &gone, &err), KEMU_OK);
    ck_assert_int_eq(kemu_free(dev, gone, &err), KEMU_OK);
    uint64_t p = gone + 768;
    void *args2[] = {&p};
    ck_assert_int_eq(kemu_launch(k, &lc, args2, &r, &err), KEMU_ERR_KERNEL_FAULT);
    snprintf(want, sizeof want, "512 bytes into allocation #");
    ck_assert_msg(strstr(r.fault_message, want), "%s", r.fault_message);
    snprintf(want, sizeof want, "(4096 bytes at 0x%llx), which was freed)", (unsigned long long)gone);
    ck_assert_msg(strstr(r.fault_message, want), "%s", r.fault_message);
    kemu_report_free(&r);
    kemu_free(dev, out, &err);
}
END_TEST

/* Predicate logic with an integer literal source, as nvcc writes it
 * (xor.pred %p2, %p1, -1 for a negation; cdpAdvancedQuicksort): a literal
 * is true when nonzero. Each lane stores the bits of eight results. */
START_TEST(pred_logic_immediates)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry plog(.param .u64 out)\n{\n .reg .pred %p<10>; .reg .b32 %r<12>; .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n and.b32 %r2, %r1, 1;\n"
        " setp.ne.u32 %p1, %r2, 0;\n"
        " xor.pred %p2, %p1, -1;\n xor.pred %p3, %p1, 0;\n and.pred %p4, %p1, 0;\n and.pred %p5, 1, %p1;\n"
        " or.pred %p6, %p1, -1;\n or.pred %p7, 0, %p1;\n not.pred %p8, 0;\n xor.pred %p9, !%p1, 1;\n"
        " selp.u32 %r3, 1, 0, %p2;\n selp.u32 %r4, 2, 0, %p3;\n selp.u32 %r5, 4, 0, %p4;\n"
        " selp.u32 %r6, 8, 0, %p5;\n selp.u32 %r7, 16, 0, %p6;\n selp.u32 %r8, 32, 0, %p7;\n"
        " selp.u32 %r9, 64, 0, %p8;\n selp.u32 %r10, 128, 0, %p9;\n"
        " or.b32 %r3, %r3, %r4;\n or.b32 %r3, %r3, %r5;\n or.b32 %r3, %r3, %r6;\n or.b32 %r3, %r3, %r7;\n"
        " or.b32 %r3, %r3, %r8;\n or.b32 %r3, %r3, %r9;\n or.b32 %r3, %r3, %r10;\n"
        " mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r3;\n ret;\n}\n",
        "plog");
    kemu_error err;
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(dev, 8, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out};
    kemu_launch_config lc = {{1, 1, 1}, {2, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_OK);
    uint32_t got[2];
    kemu_memcpy_dtoh(dev, got, out, sizeof got, &err);
    for (int t = 0; t < 2; t++) {
        int p = t & 1;
        uint32_t want = (uint32_t)(!p) | (uint32_t)p << 1 | 0u << 2 | (uint32_t)p << 3 | 1u << 4 | (uint32_t)p << 5 |
                        1u << 6 | (uint32_t)(!p ^ 1) << 7;
        ck_assert_uint_eq(got[t], want);
    }
    kemu_free(dev, out, &err);
}
END_TEST

/* ld.param [a+imm]: inside the parameter block it reads the parameter
 * there; outside it faults like the register form, never reading the host
 * memory around the block. */
START_TEST(param_immediate_offsets)
{
    static const char src[] = HEADER
        ".visible .entry p(.param .u64 out, .param .u32 a, .param .u32 b)\n{\n"
        " .reg .b32 %r<3>; .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [a+4];\n ld.param.u32 %r2, [b-4];\n"
        " st.global.v2.u32 [%rd1], {%r1, %r2};\n ret;\n}\n"
        ".visible .entry q(.param .u32 a)\n{\n .reg .b32 %r<2>;\n ld.param.u32 %r1, [a+100000];\n ret;\n}\n";
    kemu_kernel *k = load(src, "p");
    kemu_error err;
    uint64_t out;
    uint32_t a = 0x11111111u, b = 0x22222222u, host[2];
    ck_assert_int_eq(kemu_malloc(dev, sizeof host, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out, &a, &b};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(k, &lc, args, NULL, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_dtoh(dev, host, out, sizeof host, &err), KEMU_OK);
    ck_assert_uint_eq(host[0], b);
    ck_assert_uint_eq(host[1], a);
    kemu_kernel *q = load(src, "q");
    void *qargs[] = {&a};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(q, &lc, qargs, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(r.fault_message, "kernel 'q' faulted: out-of-bounds param load of 4 bytes at offset 100000 "
                                          "(4 bytes of parameters)"), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "at test.ptx:16"), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "block (0,0,0), thread (0,0,0)"), "%s", r.fault_message);
    kemu_report_free(&r);
}
END_TEST

/* A barrier only some warps reach is diagnosed as a deadlock. */
START_TEST(deadlock_diagnosed)
{
    kemu_kernel *k = load(HEADER
        ".visible .entry dl()\n{\n .reg .b32 %r<2>; .reg .pred %p;\n"
        " mov.u32 %r1, %tid.x;\n setp.ge.u32 %p, %r1, 32;\n @%p bra $wait;\n"
        "$spin:\n bar.sync 1;\n ret;\n$wait:\n bar.sync 0;\n ret;\n}\n", "dl");
    kemu_error err;
    kemu_launch_config lc = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_report r;
    ck_assert_int_eq(kemu_launch(k, &lc, NULL, &r, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(r.fault_message, "deadlock"), "%s", r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "warp 0 lanes 0xffffffff wait at test.ptx:11 (barrier 1)"), "%s",
                  r.fault_message);
    ck_assert_msg(strstr(r.fault_message, "warp 1 lanes 0xffffffff wait at test.ptx:14 (barrier 0)"), "%s",
                  r.fault_message);
    kemu_report_free(&r);
}
END_TEST

static float native_scale(uint32_t x, float s, uint64_t out)
{
    /* a global address is a usable host pointer */
    ((uint32_t *)(uintptr_t)out)[x] = x + 1000;
    return (float)x * s;
}

/* An .extern .func bound with kemu_device_bind_native runs per thread. */
START_TEST(native_function_via_libffi)
{
    kemu_error err;
    ck_assert_int_eq(kemu_device_bind_native(dev, "scale", (void (*)(void))native_scale, &err), KEMU_OK);
    kemu_kernel *k = load(HEADER
        ".extern .func (.param .f32 r) scale(.param .b32 x, .param .f32 s, .param .b64 o);\n"
        ".visible .entry nat(.param .u64 out, .param .u64 side)\n{\n .reg .b32 %r<2>; .reg .f32 %f<2>; .reg .b64 %rd<5>;\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd4, [side];\n mov.u32 %r1, %tid.x;\n"
        " {\n .param .b32 p0;\n st.param.b32 [p0], %r1;\n .param .f32 p1;\n st.param.f32 [p1], 0f3FC00000;\n"
        " .param .b64 p2;\n st.param.b64 [p2], %rd4;\n .param .f32 rv;\n call.uni (rv), scale, (p0, p1, p2);\n"
        " ld.param.f32 %f1, [rv];\n }\n"
        " mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.f32 [%rd3], %f1;\n ret;\n}\n", "nat");
    uint64_t out, side;
    ck_assert_int_eq(kemu_malloc(dev, 64 * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, 64 * 4, KEMU_UNINIT_NAN, &side, &err), KEMU_OK);
    void *args[] = {&out, &side};
    kemu_launch_config lc = {{1, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    float res[64];
    uint32_t sres[64];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    kemu_memcpy_dtoh(dev, sres, side, sizeof sres, &err);
    for (int i = 0; i < 64; i++) {
        ck_assert(res[i] == (float)i * 1.5f);
        ck_assert_uint_eq(sres[i], (uint32_t)i + 1000);
    }
}
END_TEST

/* Calling an extern nobody provides is refused at load time. */
START_TEST(unbound_extern_refused)
{
    const char *ptx = HEADER ".extern .func nothere(.param .b32 x);\n"
                      ".visible .entry e()\n{\n {\n .param .b32 p0;\n st.param.b32 [p0], 1;\n"
                      " call.uni nothere, (p0);\n }\n ret;\n}\n";
    kemu_error err;
    kemu_module *m;
    ck_assert_int_eq(kemu_module_load_ptx(dev, ptx, strlen(ptx), "test.ptx", &m, &err), KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, "test.ptx:10:11: error: call to external function 'nothere', which kemu does not provide"),
                  "%s", err.message);
}
END_TEST

#ifndef KERNELS_DIR
#define KERNELS_DIR "tests/kernels"
#endif

/* Clusters of 2 and 4 blocks: cluster registers, barrier.cluster and
 * distributed shared memory (tests/kernels/cluster.cu). */
START_TEST(clusters_and_distributed_shared_memory)
{
    kemu_error err;
    kemu_device *d9;
    kemu_device_config cfg = {"sm_90", 2, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &d9, &err), KEMU_OK);
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx_file(d9, KERNELS_DIR "/cluster.sm_90.O3.ptx", &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *regs, *ex, *at, *rt;
    ck_assert_int_eq(kemu_module_get_kernel(m, "cluster_regs", &regs, &err), KEMU_OK);
    ck_assert_int_eq(kemu_module_get_kernel(m, "dsmem_exchange", &ex, &err), KEMU_OK);
    ck_assert_int_eq(kemu_module_get_kernel(m, "dsmem_atomic", &at, &err), KEMU_OK);
    ck_assert_int_eq(kemu_module_get_kernel(m, "cluster_runtime_dims", &rt, &err), KEMU_OK);
    uint64_t out, in;
    ck_assert_int_eq(kemu_malloc(d9, 256 * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d9, 256 * 4, KEMU_UNINIT_NAN, &in, &err), KEMU_OK);
    uint32_t h[256];
    /* cluster_regs: .reqnctapercluster 2 */
    void *a1[] = {&out};
    kemu_launch_config lc = {{4, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(regs, &lc, a1, NULL, &err) == KEMU_OK, "%s", err.message);
    kemu_memcpy_dtoh(d9, h, out, 32 * 4, &err);
    for (uint32_t b = 0; b < 4; b++) {
        uint32_t want[8] = {b % 2, 2, b / 2, 2, b % 2, 2, b, 1};
        for (int i = 0; i < 8; i++)
            ck_assert_uint_eq(h[b * 8 + i], want[i]);
    }
    /* dsmem_exchange: out[i] = peer_buf[t] + own_buf[t] */
    for (int i = 0; i < 256; i++)
        h[i] = (uint32_t)(i * 3 + 1);
    kemu_memcpy_htod(d9, in, h, sizeof h, &err);
    void *a2[] = {&in, &out};
    kemu_launch_config lc2 = {{4, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(ex, &lc2, a2, NULL, &err) == KEMU_OK, "%s", err.message);
    uint32_t res[256];
    kemu_memcpy_dtoh(d9, res, out, sizeof res, &err);
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 64; t++)
            ck_assert_uint_eq(res[b * 64 + t], h[b * 64 + t] + h[(b ^ 1) * 64 + t]);
    /* dsmem_atomic: clusters of 4, every thread adds 1 to rank 0's counter */
    kemu_launch_config lc3 = {{8, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(at, &lc3, a1, NULL, &err) == KEMU_OK, "%s", err.message);
    kemu_memcpy_dtoh(d9, res, out, 8, &err);
    ck_assert_uint_eq(res[0], 256);
    ck_assert_uint_eq(res[1], 256);
    /* cluster shape from the launch */
    kemu_launch_config lc4 = {{6, 1, 1}, {32, 1, 1}, {3, 1, 1}, 0, 0};
    ck_assert_msg(kemu_launch(rt, &lc4, a1, NULL, &err) == KEMU_OK, "%s", err.message);
    kemu_memcpy_dtoh(d9, res, out, 6 * 4, &err);
    for (int b = 0; b < 6; b++)
        ck_assert_uint_eq(res[b], (uint32_t)(b % 3) * 100 + 3);
    kemu_device_destroy(d9);
}
END_TEST

/* Addresses in 32-bit registers are summed with the offset modulo 2^32:
 * [%r+1048576] where %r is a .shared/.local/.const address minus 1 MiB,
 * which wraps below 0 (nvcc emits such sums from unrolled loops, see
 * memory.cu's shared_wavefront; kemu used to add in 64 bits and fault
 * "out-of-bounds shared load of 4 bytes at offset 4294967300").
 * Hand-written because nvcc emits only some of these forms, and never
 * with a wrap that is certain: ld/st scalar and .v2/.v4, atom, red,
 * cp.async and cp.async.bulk destinations, mbarrier, ldmatrix, wmma.load,
 * ld/st.local (also with a negative offset), ld.const and
 * ld.shared::cluster from mapa. out[16*t+0..14] per thread t. */
START_TEST(addresses_32bit_wrap)
{
    kemu_error err;
    kemu_device *d9;
    kemu_device_config cfg = {"sm_90", 2, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &d9, &err), KEMU_OK);
    static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".const .align 4 .u32 cst[4] = {11, 22, 33, 44};\n"
        ".visible .entry forms(.param .u64 out, .param .u64 gin)\n"
        "{\n"
        " .shared .align 16 .b8 sm[4096];\n"
        " .local .align 16 .b8 loc[64];\n"
        " .reg .b32 %r<40>; .reg .b64 %rd<8>; .reg .pred %p<3>; .reg .f32 %f<8>;\n"
        " ld.param.u64 %rd1, [out];\n"
        " ld.param.u64 %rd2, [gin];\n"
        " mov.u32 %r1, %tid.x;\n"
        " mov.u32 %r2, sm;\n"
        " sub.u32 %r3, %r2, 1048576;\n"
        " shl.b32 %r4, %r1, 4;\n"
        " add.u32 %r5, %r3, %r4;\n"
        " mad.lo.u32 %r6, %r1, 3, 1;\n"
        " st.shared.u32 [%r5+1048576], %r6;\n"
        " add.u32 %r7, %r1, 100;\n"
        " add.u32 %r8, %r1, 200;\n"
        " st.shared.v2.u32 [%r5+1048584], {%r7, %r8};\n"
        " st.shared.u32 [%r5+1048580], 1000;\n"
        " atom.shared.add.u32 %r9, [%r5+1048580], 5;\n"
        " red.shared.add.u32 [%r5+1048580], 7;\n"
        " ld.shared.u32 %r10, [%r5+1048576];\n"
        " ld.shared.v2.u32 {%r11, %r12}, [%r5+1048584];\n"
        " ld.shared.u32 %r13, [%r5+1048580];\n"
        " cvta.to.global.u64 %rd2, %rd2;\n"
        " mul.wide.u32 %rd3, %r1, 16;\n"
        " add.s64 %rd4, %rd2, %rd3;\n"
        " cp.async.ca.shared.global [%r5+1049088], [%rd4], 16;\n"
        " cp.async.wait_all;\n"
        " ld.shared.u32 %r14, [%r5+1049100];\n"
        " shl.b32 %r15, %r1, 1;\n"
        " shl.b32 %r16, %r15, 16;\n"
        " or.b32 %r16, %r16, %r15;\n"
        " add.u32 %r16, %r16, 65536;\n"
        " shl.b32 %r17, %r1, 2;\n"
        " add.u32 %r18, %r3, %r17;\n"
        " st.shared.u32 [%r18+1049600], %r16;\n"
        " shl.b32 %r19, %r1, 5;\n"
        " add.u32 %r20, %r3, %r19;\n"
        " st.shared.v4.u32 [%r20+1050624], {1069547520, 1069547520, 1069547520, 1069547520};\n"
        " st.shared.v4.u32 [%r20+1050640], {1069547520, 1069547520, 1069547520, 1069547520};\n"
        " setp.ne.u32 %p1, %r1, 0;\n"
        " @%p1 bra $init_done;\n"
        " mov.u32 %r21, 32;\n"
        " mbarrier.init.shared.b64 [%r3+1051648], %r21;\n"
        "$init_done:\n"
        " bar.sync 0;\n"
        " and.b32 %r22, %r1, 7;\n"
        " shl.b32 %r22, %r22, 4;\n"
        " add.u32 %r22, %r3, %r22;\n"
        " ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r23}, [%r22+1049600];\n"
        " wmma.load.c.sync.aligned.row.m16n16k16.shared.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%r3+1050624], 16;\n"
        " mov.b32 %r24, %f0;\n"
        " mov.b32 %r25, %f7;\n"
        " mbarrier.arrive.shared.b64 %rd5, [%r3+1051648];\n"
        " mbarrier.test_wait.shared.b64 %p1, [%r3+1051648], %rd5;\n"
        " selp.u32 %r26, 1, 0, %p1;\n"
        " setp.ne.u32 %p1, %r1, 0;\n"
        " @%p1 bra $bulk_done;\n"
        " mov.u32 %r21, 1;\n"
        " mbarrier.init.shared.b64 [%r3+1051656], %r21;\n"
        " mbarrier.arrive.expect_tx.shared.b64 %rd5, [%r3+1051656], 16;\n"
        " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3+1051712], [%rd2], 16, [%r3+1051656];\n"
        "$wait:\n"
        " mbarrier.try_wait.shared.b64 %p2, [%r3+1051656], %rd5;\n"
        " @!%p2 bra $wait;\n"
        "$bulk_done:\n"
        " bar.sync 0;\n"
        " ld.shared.u32 %r38, [%r3+1051716];\n"
        " mov.u32 %r27, loc;\n"
        " sub.u32 %r28, %r27, 1048576;\n"
        " mul.lo.u32 %r29, %r1, 5;\n"
        " st.local.u32 [%r28+1048576], %r29;\n"
        " ld.local.u32 %r30, [%r28+1048576];\n"
        " add.u32 %r31, %r27, 8;\n"
        " mul.lo.u32 %r32, %r1, 7;\n"
        " st.local.u32 [%r31+-4], %r32;\n"
        " ld.local.u32 %r32, [%r31+-4];\n"
        " mov.u32 %r33, cst;\n"
        " sub.u32 %r33, %r33, 1048576;\n"
        " ld.const.u32 %r34, [%r33+1048584];\n"
        " mapa.shared::cluster.u32 %r35, %r2, 0;\n"
        " sub.u32 %r36, %r35, 33554432;\n"
        " add.u32 %r36, %r36, %r4;\n"
        " ld.shared::cluster.u32 %r37, [%r36+33554432];\n"
        " mul.wide.u32 %rd6, %r1, 64;\n"
        " cvta.to.global.u64 %rd1, %rd1;\n"
        " add.s64 %rd7, %rd1, %rd6;\n"
        " st.global.v4.u32 [%rd7], {%r10, %r11, %r12, %r9};\n"
        " st.global.v2.u32 [%rd7+16], {%r13, %r14};\n"
        " st.global.v2.u32 [%rd7+24], {%r23, %r24};\n"
        " st.global.v2.u32 [%rd7+32], {%r25, %r26};\n"
        " st.global.v2.u32 [%rd7+40], {%r30, %r32};\n"
        " st.global.v2.u32 [%rd7+48], {%r34, %r37};\n"
        " st.global.u32 [%rd7+56], %r38;\n"
        " ret;\n"
        "}\n";
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx(d9, ptx, strlen(ptx), "test.ptx", &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, "forms", &k, &err), KEMU_OK);
    uint32_t gin[128], got[512];
    for (uint32_t i = 0; i < 128; i++)
        gin[i] = i;
    uint64_t out, in;
    ck_assert_int_eq(kemu_malloc(d9, sizeof got, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(d9, sizeof gin, KEMU_UNINIT_NAN, &in, &err), KEMU_OK);
    kemu_memcpy_htod(d9, in, gin, sizeof gin, &err);
    void *args[] = {&out, &in};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    kemu_memcpy_dtoh(d9, got, out, sizeof got, &err);
    static const char *const what[15] = {
        "st/ld.shared", "st/ld.shared.v2 [0]", "st/ld.shared.v2 [1]", "atom.shared", "red.shared",
        "cp.async", "ldmatrix", "wmma.load [0]", "wmma.load [7]", "mbarrier", "st/ld.local",
        "st/ld.local [%r-4]", "ld.const", "mapa + ld.shared::cluster", "cp.async.bulk",
    };
    for (uint32_t t = 0; t < 32; t++) {
        /* ldmatrix: the b16 element at row t/4, columns 2(t%4) and 2(t%4)+1, whose value is its index */
        uint32_t e = (t / 4) * 8 + 2 * (t % 4);
        const uint32_t want[15] = {
            3 * t + 1, t + 100, t + 200, 1000, 1012, 4 * t + 3, e | (e + 1) << 16, 0x3fc00000u,
            0x3fc00000u, 1, 5 * t, 7 * t, 33, 3 * t + 1, 1,
        };
        for (int i = 0; i < 15; i++)
            ck_assert_msg(got[16 * t + i] == want[i], "thread %u: %s: got %u, want %u", t, what[i],
                          got[16 * t + i], want[i]);
    }
    kemu_device_destroy(d9);
}
END_TEST

/* Call frames are freed when lanes exit inside a call and when an
 * indirect call faults on a mismatched prototype (issue 18: both leaked a
 * frame per call, 75 MB at grid 200k). */
START_TEST(call_frames_freed)
{
    static const char src[] = HEADER
        ".func inner()\n{\n exit;\n}\n"
        ".func outer()\n{\n call.uni inner, ();\n ret;\n}\n"
        ".func (.param .b64 r) wide(.param .b64 x)\n{\n .reg .b64 %rd;\n ld.param.b64 %rd, [x];\n"
        " st.param.b64 [r], %rd;\n ret;\n}\n"
        ".visible .entry exits()\n{\n call.uni outer, ();\n ret;\n}\n"
        ".visible .entry mismatch()\n{\n .reg .b64 %rd;\n .reg .b32 %r;\n"
        " proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n mov.u64 %rd, wide;\n"
        " {\n .param .b32 a;\n st.param.b32 [a], 1;\n .param .b32 r;\n call (r), %rd, (a), proto;\n"
        " ld.param.b32 %r, [r];\n }\n ret;\n}\n"; /* the kernels below */
    kemu_kernel *k = load(src, "exits");

    kemu_error err;
    kemu_launch_config lc = {{300, 1, 1}, {64, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_kernel *mk = load(src, "mismatch");
    /* the device keeps its host threads' blocks, with their root frames,
     * from one launch to the next (exec_device_release_clusters lets them
     * go): a launch that exits from inside calls, or faults in one, leaves
     * no other frame behind */
    uint64_t before = vm_frames_live();
    ck_assert_int_eq(kemu_launch(k, &lc, NULL, NULL, &err), KEMU_OK);
    ck_assert_uint_gt(vm_frames_live(), before);
    exec_device_release_clusters(dev);
    ck_assert_uint_eq(vm_frames_live(), before);
    ck_assert_int_eq(kemu_launch(mk, &lc, NULL, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "indirect call of 'wide' does not match its prototype: argument 1 is 4 bytes"),
                  "%s", err.message);
    exec_device_release_clusters(dev);
    ck_assert_uint_eq(vm_frames_live(), before);
    /* kept between launches of different kernels, the frames are reused */
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(kemu_launch(k, &lc, NULL, NULL, &err), KEMU_OK);
        ck_assert_int_eq(kemu_launch(mk, &lc, NULL, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    }
    exec_device_release_clusters(dev);
    ck_assert_uint_eq(vm_frames_live(), before);
}
END_TEST

/* The device keeps its host threads' blocks between launches: a kernel
 * with more local memory, more dynamic shared memory or more registers
 * than the last one gets room for them, and the one after it runs as
 * before. out[g] = the sum over i < n of (g + i), through each thread's
 * local array of n words, passed on through dynamic shared memory. */
#define KEPT_KERNEL(name, words, bytes)                                                                         \
    ".visible .entry " name "(.param .u64 out)\n{\n .local .align 4 .b8 buf[" #bytes "];\n"             \
    " .reg .b32 %r<12>; .reg .b64 %rd<8>; .reg .pred %p;\n"         \
    " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mad.lo.s32 %r3, %r2, 64, %r1;\n mov.u64 %rd1, buf;\n" \
    " mov.u32 %r4, 0;\n mov.u32 %r5, 0;\n"                                                                \
    "$w:\n mul.wide.u32 %rd2, %r4, 4;\n add.s64 %rd3, %rd1, %rd2;\n add.s32 %r6, %r3, %r4;\n"             \
    " st.local.u32 [%rd3], %r6;\n add.s32 %r4, %r4, 1;\n setp.lt.u32 %p, %r4, " #words ";\n @%p bra $w;\n" \
    " mov.u32 %r4, 0;\n"                                                                                  \
    "$r:\n mul.wide.u32 %rd2, %r4, 4;\n add.s64 %rd3, %rd1, %rd2;\n ld.local.u32 %r6, [%rd3];\n"          \
    " add.s32 %r5, %r5, %r6;\n add.s32 %r4, %r4, 1;\n setp.lt.u32 %p, %r4, " #words ";\n @%p bra $r;\n"   \
    " mov.u32 %r7, dyn;\n mul.lo.u32 %r8, %r1, " #words ";\n add.s32 %r9, %r7, %r8;\n"                    \
    " st.shared.u32 [%r9], %r5;\n bar.sync 0;\n ld.shared.u32 %r10, [%r9];\n"                             \
    " ld.param.u64 %rd4, [out];\n cvta.to.global.u64 %rd4, %rd4;\n mul.wide.u32 %rd5, %r3, 4;\n"          \
    " add.s64 %rd6, %rd4, %rd5;\n st.global.u32 [%rd6], %r10;\n ret;\n}\n"

START_TEST(blocks_kept_between_launches)
{
    static const char src[] = HEADER ".extern .shared .align 4 .b8 dyn[];\n" KEPT_KERNEL("small", 4, 16) KEPT_KERNEL("big", 1024, 4096);
    kemu_kernel *small = load(src, "small"), *big = load(src, "big");
    kemu_error err;
    enum { G = 8, N = G * 64 };
    uint64_t out;
    ck_assert_int_eq(kemu_malloc(dev, N * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    void *args[] = {&out};
    for (int round = 0; round < 4; round++) {
        int is_big = round & 1;
        uint32_t words = is_big ? 1024 : 4;
        /* dynamic shared memory: one word every `words` bytes per thread */
        kemu_launch_config lc = {{G, 1, 1}, {64, 1, 1}, {0, 0, 0}, 64 * words, 0};
        ck_assert_int_eq(kemu_launch(is_big ? big : small, &lc, args, NULL, &err), KEMU_OK);
        uint32_t host[N];
        ck_assert_int_eq(kemu_memcpy_dtoh(dev, host, out, sizeof host, &err), KEMU_OK);
        for (uint32_t g = 0; g < N; g++)
            ck_assert_uint_eq(host[g], words * g + words * (words - 1) / 2);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vm");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, elementwise_with_tail);
    tcase_add_test(tc, blocks_kept_between_launches);
    tcase_add_test(tc, shared_reduction);
    tcase_add_test(tc, oob_fault_message);
    tcase_add_test(tc, oob_fault_before_and_freed);
    tcase_add_test(tc, pred_logic_immediates);
    tcase_add_test(tc, param_immediate_offsets);
    tcase_add_test(tc, deadlock_diagnosed);
    tcase_add_test(tc, native_function_via_libffi);
    tcase_add_test(tc, unbound_extern_refused);
    tcase_add_test(tc, clusters_and_distributed_shared_memory);
    tcase_add_test(tc, addresses_32bit_wrap);
    tcase_add_test(tc, call_frames_freed);
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
