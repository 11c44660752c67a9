/* Instruction forms nvcc seldom emits, in hand-written PTX, each checked
 * against a result computed here: brx.idx, slct, bmsk, fns, cnot, mad24,
 * cvt.pack, cvt with .relu/.satfinite, div.full, vote.uni, indirect calls
 * through a .callprototype, barrier.sync with a thread count, mbarrier
 * arrive_drop / pending_count / try_wait.parity, the special registers
 * %clock64, %globaltimer, %envreg, %dynamic_smem_size, %total_smem_size,
 * %nsmid, txq and tld4 on a texture object, and pmevent, nanosleep and
 * brkpt. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"

static kemu_device *dev;

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg = {"sm_90", 1, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &dev, &err), KEMU_OK);
}

static void teardown(void) { kemu_device_destroy(dev); }

#define H ".version 8.4\n.target sm_90\n.address_size 64\n"

/* Loads `ptx`, runs kernel `name` on one block of `threads` threads with an
 * output buffer of n u32 (plus extra args), copies the result into out. */
static kemu_status run1(const char *ptx, const char *name, unsigned threads, size_t shared, uint32_t *out, size_t n,
                        void **extra, int nextra, kemu_report *rep)
{
    kemu_error err;
    kemu_module *m;
    ck_assert_msg(kemu_module_load_ptx(dev, ptx, strlen(ptx), "forms.ptx", &m, &err) == KEMU_OK, "%s", err.message);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    uint64_t buf;
    ck_assert_int_eq(kemu_malloc(dev, n * 4, KEMU_UNINIT_ZERO, &buf, &err), KEMU_OK);
    void *args[8] = {&buf};
    for (int i = 0; i < nextra; i++)
        args[1 + i] = extra[i];
    kemu_launch_config lc = {{1, 1, 1}, {threads, 1, 1}, {0, 0, 0}, shared, 0};
    kemu_status st = kemu_launch(k, &lc, args, rep, &err);
    if (st == KEMU_OK)
        kemu_memcpy_dtoh(dev, out, buf, n * 4, &err);
    return st;
}

/* out[tid] = a per-thread result; the kernels below store %r9 there */
#define PROLOGUE " .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>; .reg .f32 %f<4>;\n" \
                 " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n"
#define EPILOGUE " mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r9;\n ret;\n}\n"

START_TEST(brx_idx_switch)
{
    uint32_t out[32];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " rem.u32 %r2, %r1, 3;\n"
                          "$tbl: .branchtargets $a, $b, $c;\n brx.idx %r2, $tbl;\n"
                          "$a:\n mov.u32 %r9, 100;\n bra.uni $done;\n"
                          "$b:\n mov.u32 %r9, 200;\n bra.uni $done;\n"
                          "$c:\n add.u32 %r9, %r1, 1000;\n"
                          "$done:\n" EPILOGUE, "k", 32, 0, out, 32, NULL, 0, NULL), KEMU_OK);
    for (uint32_t t = 0; t < 32; t++)
        ck_assert_uint_eq(out[t], t % 3 == 0 ? 100 : t % 3 == 1 ? 200 : 1000 + t);
}
END_TEST

static uint32_t ref_fns(uint32_t mask, uint32_t base, int32_t off)
{
    if (off == 0)
        return base;
    int k = 0;
    if (off > 0) {
        for (uint32_t i = base; i < 32; i++)
            if ((mask >> i) & 1 && ++k == off)
                return i;
    } else {
        for (int i = (int)base; i >= 0; i--)
            if ((mask >> i) & 1 && --k == off)
                return (uint32_t)i;
    }
    return 0xffffffffu;
}

START_TEST(integer_forms)
{
    /* each thread computes one form, selected by tid */
    uint32_t out[8];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " setp.eq.u32 %p1, %r1, 0;\n @%p1 slct.s32.s32 %r9, 11, 22, -5;\n"
                          " setp.eq.u32 %p1, %r1, 1;\n @%p1 slct.f32.f32 %r9, 11, 22, 0f80000000;\n"
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 bmsk.clamp.b32 %r9, 4, 40;\n"
                          " setp.eq.u32 %p1, %r1, 3;\n @%p1 bmsk.wrap.b32 %r9, 36, 3;\n"
                          " setp.eq.u32 %p1, %r1, 4;\n @%p1 fns.b32 %r9, 0xA5A5A5A5, 3, 4;\n"
                          " setp.eq.u32 %p1, %r1, 5;\n @%p1 cnot.b32 %r9, 0;\n"
                          " setp.eq.u32 %p1, %r1, 6;\n @%p1 mad24.lo.u32 %r9, 0xff001000, 0x2000, 7;\n"
                          " setp.eq.u32 %p1, %r1, 7;\n @%p1 cvt.pack.sat.u8.s32.b32 %r9, 300, -4, 0x1200;\n"
                          EPILOGUE, "k", 8, 0, out, 8, NULL, 0, NULL), KEMU_OK);
    ck_assert_uint_eq(out[0], 22);                     /* c < 0 selects b */
    ck_assert_uint_eq(out[1], 0x41300000u);            /* -0.0 >= 0 selects a (11 as f32) */
    ck_assert_uint_eq(out[2], 0xfffffff0u);            /* 32 ones (clamped) shifted by 4 */
    ck_assert_uint_eq(out[3], 0x70u);                  /* wrap: start 36&31=4, 3 bits */
    ck_assert_uint_eq(out[4], ref_fns(0xA5A5A5A5u, 3, 4));
    ck_assert_uint_eq(out[5], 1);
    ck_assert_uint_eq(out[6], (uint32_t)((0x001000u * 0x2000u) + 7)); /* the high 8 bits are ignored */
    ck_assert_uint_eq(out[7], 0x1200ff00u);            /* b=-4 -> 0 (low field), a=300 -> 255, c's low bits above */
}
END_TEST

START_TEST(integer_conversions)
{
    uint32_t out[6];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " .reg .b16 %h<2>;\n .reg .b64 %q<2>;\n mov.u32 %r2, 0x1234ABF0;\n"
                          " setp.eq.u32 %p1, %r1, 0;\n @%p1 cvt.s32.s8 %r9, %r2;\n"       /* 0xF0 -> -16 */
                          " setp.eq.u32 %p1, %r1, 1;\n @%p1 cvt.u32.u8 %r9, %r2;\n"       /* 0xF0 */
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 cvt.u16.u32 %h1, %r2;\n @%p1 cvt.u32.u16 %r9, %h1;\n"
                          " setp.eq.u32 %p1, %r1, 3;\n @%p1 cvt.s64.s32 %q1, %r2;\n @%p1 shr.u64 %q1, %q1, 32;\n"
                          " @%p1 cvt.u32.u64 %r9, %q1;\n"
                          " setp.eq.u32 %p1, %r1, 4;\n @%p1 cvt.s16.s32 %h1, %r2;\n @%p1 cvt.s32.s16 %r9, %h1;\n"
                          " setp.eq.u32 %p1, %r1, 5;\n @%p1 cvt.sat.u8.s32 %r9, -5;\n"
                          EPILOGUE, "k", 6, 0, out, 6, NULL, 0, NULL), KEMU_OK);
    ck_assert_uint_eq(out[0], 0xFFFFFFF0u);
    ck_assert_uint_eq(out[1], 0xF0u);
    ck_assert_uint_eq(out[2], 0xABF0u);
    ck_assert_uint_eq(out[3], 0);            /* 0x1234ABF0 is positive: high word 0 */
    ck_assert_uint_eq(out[4], 0xFFFFABF0u);  /* low 16 bits, then sign-extended */
    ck_assert_uint_eq(out[5], 0);            /* saturated */
}
END_TEST

START_TEST(float_forms)
{
    uint32_t out[4];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " .reg .b16 %h<2>;\n"
                          " setp.eq.u32 %p1, %r1, 0;\n @%p1 div.full.f32 %r9, 0f3F800000, 0f40400000;\n"
                          " setp.eq.u32 %p1, %r1, 1;\n @%p1 cvt.rn.relu.f16.f32 %h1, 0fC0000000;\n"
                          " @%p1 cvt.u32.u16 %r9, %h1;\n"
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 cvt.rn.satfinite.f16.f32 %h1, 0f47F00000;\n"
                          " @%p1 cvt.u32.u16 %r9, %h1;\n"
                          " setp.eq.u32 %p1, %r1, 3;\n @%p1 cvt.rn.satfinite.bf16x2.f32 %r9, 0f7F800000, 0f3F800000;\n"
                          EPILOGUE, "k", 4, 0, out, 4, NULL, 0, NULL), KEMU_OK);
    float q;
    memcpy(&q, &out[0], 4);
    ck_assert(fabsf(q - 1.0f / 3.0f) <= 2 * nextafterf(1.0f / 3.0f, 1) - 2 * (1.0f / 3.0f)); /* within 2 ulp */
    ck_assert_uint_eq(out[1], 0x0000);        /* relu: -2 -> +0 */
    ck_assert_uint_eq(out[2], 0x7bff);        /* 122880 > f16 max: satfinite gives 65504 */
    ck_assert_uint_eq(out[3], 0x7f7f3f80u);   /* +inf -> bf16 max (high half), 1.0 (low half) */
}
END_TEST

START_TEST(vote_uni_and_specials)
{
    uint32_t out[64];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " .reg .b64 %rc<4>;\n .shared .align 4 .b8 sm[100];\n"
                          " and.b32 %r2, %r1, 32;\n setp.ne.u32 %p2, %r2, 0;\n"       /* uniform per warp */
                          " vote.sync.uni.pred %p1, %p2, 0xffffffff;\n selp.u32 %r9, 1, 0, %p1;\n"
                          " setp.lt.u32 %p3, %r1, 5;\n vote.sync.uni.pred %p1, %p3, 0xffffffff;\n"
                          " selp.u32 %r3, 2, 0, %p1;\n or.b32 %r9, %r9, %r3;\n"
                          " mov.u64 %rc1, %clock64;\n mov.u64 %rc2, %globaltimer;\n nanosleep.u32 100;\n pmevent 1;\n"
                          " mov.u64 %rc3, %clock64;\n setp.gt.u64 %p1, %rc3, %rc1;\n selp.u32 %r3, 4, 0, %p1;\n or.b32 %r9, %r9, %r3;\n"
                          " mov.u32 %r3, %envreg0;\n setp.eq.u32 %p1, %r3, 0;\n selp.u32 %r3, 8, 0, %p1;\n or.b32 %r9, %r9, %r3;\n"
                          " mov.u32 %r4, %dynamic_smem_size;\n mov.u32 %r5, %total_smem_size;\n mov.u32 %r6, %nsmid;\n"
                          " setp.eq.u32 %p1, %r1, 0;\n @%p1 mov.u32 %r9, %r4;\n setp.eq.u32 %p1, %r1, 1;\n @%p1 mov.u32 %r9, %r5;\n"
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 mov.u32 %r9, %r6;\n"
                          " mov.u32 %r7, sm;\n st.shared.u32 [%r7], %r1;\n"
                          EPILOGUE, "k", 64, 40, out, 64, NULL, 0, NULL), KEMU_OK);
    ck_assert_uint_eq(out[0], 40);              /* %dynamic_smem_size */
    ck_assert_uint_eq(out[1], 256);             /* 100 static + 40 dynamic, rounded up to 128 bytes */
    ck_assert_uint_eq(out[2], 132);             /* %nsmid of sm_90 */
    for (int t = 3; t < 64; t++) {
        uint32_t want = (1u /* uni: per-warp uniform */) | ((t >= 32) ? 2u : 0u) /* t<5 only in warp 0 */ | 4u | 8u;
        ck_assert_msg(out[t] == want, "thread %d: %u vs %u", t, out[t], want);
    }
}
END_TEST

START_TEST(indirect_call_via_prototype)
{
    uint32_t out[32];
    ck_assert_int_eq(run1(H ".func (.param .b32 r) twice(.param .b32 a)\n{\n .reg .b32 %x;\n"
                          " ld.param.b32 %x, [a];\n shl.b32 %x, %x, 1;\n st.param.b32 [r], %x;\n ret;\n}\n"
                          ".func (.param .b32 r) plus7(.param .b32 a)\n{\n .reg .b32 %x;\n"
                          " ld.param.b32 %x, [a];\n add.s32 %x, %x, 7;\n st.param.b32 [r], %x;\n ret;\n}\n"
                          ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " and.b32 %r2, %r1, 1;\n setp.eq.u32 %p1, %r2, 0;\n"
                          " mov.u64 %rd5, twice;\n mov.u64 %rd6, plus7;\n selp.b64 %rd7, %rd5, %rd6, %p1;\n"
                          " {\n .param .b32 p0;\n st.param.b32 [p0], %r1;\n .param .b32 rv;\n"
                          " proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                          " call (rv), %rd7, (p0), proto;\n ld.param.b32 %r9, [rv];\n }\n"
                          EPILOGUE, "k", 32, 0, out, 32, NULL, 0, NULL), KEMU_OK);
    for (uint32_t t = 0; t < 32; t++)
        ck_assert_uint_eq(out[t], (t % 2 == 0) ? t * 2 : t + 7);
}
END_TEST

/* Labels are scoped to { } blocks (ptxas's rule; inline asm expanded twice
 * repeats its labels): each block's loop branches to its own `L`, the
 * outer `L` after them is the function's, and a block may branch to a
 * label of an enclosing block. */
START_TEST(block_scoped_labels)
{
    uint32_t out[32];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " mov.u32 %r9, 0;\n mov.u32 %r2, 0;\n"
                          " {\n L:\n add.u32 %r9, %r9, 1;\n add.u32 %r2, %r2, 1;\n"
                          "  setp.lt.u32 %p1, %r2, 3;\n @%p1 bra L;\n }\n"
                          " mov.u32 %r2, 0;\n"
                          " {\n L:\n add.u32 %r9, %r9, 10;\n add.u32 %r2, %r2, 1;\n"
                          "  { setp.eq.u32 %p2, %r2, 5;\n @%p2 bra Out;\n }\n"
                          "  bra L;\n }\n"
                          " Out:\n setp.ge.u32 %p1, %r9, 1000;\n @%p1 bra L;\n add.u32 %r9, %r9, 1000;\n"
                          " L:\n" EPILOGUE, "k", 32, 0, out, 32, NULL, 0, NULL), KEMU_OK);
    for (uint32_t t = 0; t < 32; t++)
        ck_assert_uint_eq(out[t], 3 + 50 + 1000);
}
END_TEST

/* Hopper's proxy fences, tensor-map prefetch and launch hints run as no-ops
 * (kemu has one memory proxy; its grids run one after another). */
START_TEST(proxy_fences_and_hints)
{
    uint32_t out[32];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;\n"
                          " fence.proxy.tensormap::generic.release.gpu;\n"
                          " fence.proxy.async;\n fence.proxy.async.shared::cta;\n fence.proxy.async.global;\n"
                          " fence.proxy.alias;\n prefetch.tensormap [%rd1];\n"
                          " cp.async.bulk.prefetch.L2.global [%rd1], 128;\n"
                          " griddepcontrol.wait;\n griddepcontrol.launch_dependents;\n"
                          " add.u32 %r9, %r1, 7;\n" EPILOGUE, "k", 32, 0, out, 32, NULL, 0, NULL), KEMU_OK);
    for (uint32_t t = 0; t < 32; t++)
        ck_assert_uint_eq(out[t], t + 7);
}
END_TEST

START_TEST(named_barrier_with_count_and_mbarrier)
{
    /* warps 0-1 meet at barrier 1 (64 threads) while warps 2-3 use barrier
     * 2; an mbarrier with 4 expected arrivals, one dropped */
    uint32_t out[128];
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out)\n{\n" PROLOGUE
                          " .shared .align 8 .b64 mb;\n .shared .align 4 .b32 flag[2];\n .reg .b64 %st;\n"
                          " setp.eq.u32 %p1, %r1, 0;\n @%p1 mbarrier.init.shared.b64 [mb], 4;\n"
                          " barrier.sync 0;\n"
                          " shr.u32 %r2, %r1, 6;\n add.u32 %r3, %r2, 1;\n"            /* barrier id 1 or 2 */
                          " setp.eq.u32 %p2, %r1, 0;\n @%p2 st.shared.u32 [flag], 5;\n"
                          " setp.eq.u32 %p2, %r1, 64;\n @%p2 st.shared.u32 [flag+4], 9;\n"
                          " barrier.sync %r3, 64;\n"
                          " shl.b32 %r4, %r2, 2;\n mov.u32 %r5, flag;\n add.u32 %r5, %r5, %r4;\n ld.shared.u32 %r9, [%r5];\n"
                          " and.b32 %r6, %r1, 31;\n setp.eq.u32 %p3, %r6, 0;\n"      /* lane 0 of each warp */
                          " setp.eq.u32 %p2, %r1, 96;\n"
                          " @%p2 mbarrier.arrive_drop.shared.b64 %st, [mb];\n"
                          " @!%p2 and.pred %p3, %p3, %p3;\n"
                          " @%p3 mbarrier.arrive.shared.b64 %st, [mb];\n"
                          " mbarrier.pending_count.b64 %r7, %st;\n"
                          "$wait:\n mbarrier.try_wait.parity.shared.b64 %p1, [mb], 0;\n @!%p1 bra $wait;\n"
                          " setp.eq.u32 %p2, %r1, 0;\n @%p2 add.u32 %r9, %r9, %r7;\n"
                          EPILOGUE, "k", 128, 0, out, 128, NULL, 0, NULL), KEMU_OK);
    for (int t = 0; t < 128; t++)
        if (t > 0)
            ck_assert_msg(out[t] == (t < 64 ? 5u : 9u), "thread %d: %u", t, out[t]);
    /* thread 0 arrived first of 4: pending count in its state was 4 */
    ck_assert_uint_eq(out[0], 5 + 4);
}
END_TEST

START_TEST(txq_tld4_and_brkpt)
{
    float tex[4 * 3];
    for (int i = 0; i < 12; i++)
        tex[i] = (float)(i * 10);
    kemu_error err;
    uint64_t mem, h;
    ck_assert_int_eq(kemu_malloc(dev, sizeof tex, KEMU_UNINIT_ZERO, &mem, &err), KEMU_OK);
    kemu_memcpy_htod(dev, mem, tex, sizeof tex, &err);
    kemu_texture_desc d;
    memset(&d, 0, sizeof d);
    d.address = mem;
    d.width = 4;
    d.height = 3;
    d.channels = 1;
    d.channel_bits = 32;
    d.channel_kind = KEMU_CHANNEL_FLOAT;
    d.address_mode[0] = d.address_mode[1] = KEMU_ADDRESS_CLAMP;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &h, &err), KEMU_OK);
    uint32_t out[8];
    void *extra[] = {&h};
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out, .param .u64 t)\n{\n" PROLOGUE
                          " .reg .f32 %g<5>;\n ld.param.u64 %rd4, [t];\n"
                          " txq.width.b32 %r2, [%rd4];\n txq.height.b32 %r3, [%rd4];\n"
                          " tld4.r.2d.v4.f32.f32 {%g1, %g2, %g3, %g4}, [%rd4, {0f3FC00000, 0f3FC00000}];\n"
                          " mov.u32 %r9, %r2;\n setp.eq.u32 %p1, %r1, 1;\n @%p1 mov.u32 %r9, %r3;\n"
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 mov.b32 %r9, %g1;\n"
                          " setp.eq.u32 %p1, %r1, 3;\n @%p1 mov.b32 %r9, %g2;\n"
                          " setp.eq.u32 %p1, %r1, 4;\n @%p1 mov.b32 %r9, %g3;\n"
                          " setp.eq.u32 %p1, %r1, 5;\n @%p1 mov.b32 %r9, %g4;\n"
                          EPILOGUE, "k", 6, 0, out, 8, extra, 1, NULL), KEMU_OK);
    ck_assert_uint_eq(out[0], 4);
    ck_assert_uint_eq(out[1], 3);
    /* gather around (1.5,1.5): texels (1,2) (2,2) (2,1) (1,1) */
    float g[4];
    memcpy(g, &out[2], 16);
    ck_assert(g[0] == tex[2 * 4 + 1] && g[1] == tex[2 * 4 + 2] && g[2] == tex[1 * 4 + 2] && g[3] == tex[1 * 4 + 1]);
    kemu_report rep;
    ck_assert_int_eq(run1(H ".visible .entry b(.param .u64 out)\n{\n brkpt;\n ret;\n}\n", "b", 32, 0, out, 1, NULL, 0,
                          &rep), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(rep.fault_message, "brkpt reached"), "%s", rep.fault_message);
    kemu_report_free(&rep);
}
END_TEST

/* Cubemap arrays with mipmaps: txq of the layer count, levels and a
 * level's width; tex.acube at a face centre (cube index clamped to the
 * last cube), tex.level.acube, and tex.grad.acube whose gradient along the
 * face (d(-z)/2 per unit on face +x, times 2 texels) selects level 1. */
START_TEST(cubemap_array_forms)
{
    float lv0[12 * 4], lv1[12];
    for (int l = 0; l < 12; l++) {
        for (int i = 0; i < 4; i++)
            lv0[l * 4 + i] = (float)(l * 10 + i); /* texel (x,y) = l*10 + y*2 + x */
        lv1[l] = (float)(1000 + l);
    }
    kemu_error err;
    uint64_t m0, m1, h;
    ck_assert_int_eq(kemu_malloc(dev, sizeof lv0, KEMU_UNINIT_ZERO, &m0, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, sizeof lv1, KEMU_UNINIT_ZERO, &m1, &err), KEMU_OK);
    kemu_memcpy_htod(dev, m0, lv0, sizeof lv0, &err);
    kemu_memcpy_htod(dev, m1, lv1, sizeof lv1, &err);
    kemu_texture_desc d;
    memset(&d, 0, sizeof d);
    d.address = m0;
    d.width = d.height = 2;
    d.depth = 12;
    d.channels = 1;
    d.channel_bits = 32;
    d.channel_kind = KEMU_CHANNEL_FLOAT;
    d.layout = KEMU_TEXTURE_LAYERED | KEMU_TEXTURE_CUBEMAP;
    d.num_levels = 2;
    d.levels[0] = (kemu_texture_level){m1, 1, 1, 12, 0};
    d.max_lod = 10.0f;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &h, &err), KEMU_OK);
    uint32_t out[8];
    void *extra[] = {&h};
    ck_assert_int_eq(run1(H ".visible .entry k(.param .u64 out, .param .u64 t)\n{\n" PROLOGUE
                          " .reg .f32 %g<5>;\n ld.param.u64 %rd4, [t];\n"
                          " txq.array_size.b32 %r9, [%rd4];\n"
                          " setp.eq.u32 %p1, %r1, 1;\n @%p1 txq.num_mipmap_levels.b32 %r9, [%rd4];\n"
                          " setp.eq.u32 %p1, %r1, 2;\n @%p1 txq.level.width.b32 %r9, [%rd4], 1;\n"
                          " setp.eq.u32 %p1, %r1, 3;\n @%p1 txq.depth.b32 %r9, [%rd4];\n"
                          " mov.u32 %r2, 1;\n mov.f32 %f1, 0f3F800000;\n mov.f32 %f2, 0f00000000;\n"
                          " setp.eq.u32 %p1, %r1, 4;\n"
                          " @%p1 tex.acube.v4.f32.f32 {%g1, %g2, %g3, %g4}, [%rd4, {%r2, %f1, %f2, %f2}];\n"
                          " @%p1 mov.b32 %r9, %g1;\n"
                          " setp.eq.u32 %p1, %r1, 5;\n"
                          " @%p1 tex.level.acube.v4.f32.f32 {%g1, %g2, %g3, %g4}, [%rd4, {%r2, %f1, %f2, %f2}], %f1;\n"
                          " @%p1 mov.b32 %r9, %g1;\n"
                          " setp.eq.u32 %p1, %r1, 6;\n mov.f32 %f3, 0f40000000;\n"
                          " @%p1 tex.grad.acube.v4.f32.f32 {%g1, %g2, %g3, %g4}, [%rd4, {%r2, %f1, %f2, %f2}],"
                          " {%f2, %f2, %f3, %f2}, {%f2, %f2, %f2, %f2};\n"
                          " @%p1 mov.b32 %r9, %g1;\n"
                          " setp.eq.u32 %p1, %r1, 7;\n mov.u32 %r2, 7;\n mov.f32 %f1, 0fBF800000;\n"
                          " @%p1 tex.acube.v4.f32.f32 {%g1, %g2, %g3, %g4}, [%rd4, {%r2, %f2, %f2, %f1}];\n"
                          " @%p1 mov.b32 %r9, %g1;\n"
                          EPILOGUE, "k", 8, 0, out, 8, extra, 1, NULL), KEMU_OK);
    ck_assert_uint_eq(out[0], 2); /* cubemaps */
    ck_assert_uint_eq(out[1], 2);
    ck_assert_uint_eq(out[2], 1);
    ck_assert_uint_eq(out[3], 0);
    float f[4];
    memcpy(f, &out[4], 16);
    ck_assert_msg(f[0] == 63.0f, "%g", f[0]);    /* cube 1, face +x (layer 6), texel (1,1) */
    ck_assert_msg(f[1] == 1006.0f, "%g", f[1]);  /* level 1 */
    ck_assert_msg(f[2] == 1006.0f, "%g", f[2]);  /* |d(-z)/2| * 2 texels = 2: level 1 */
    float g;
    memcpy(&g, &out[7], 4);
    ck_assert_msg(g == 113.0f, "%g", g);         /* cube 7 -> 1, face -z (layer 11), texel (1,1) */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("forms");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, brx_idx_switch);
    tcase_add_test(tc, integer_forms);
    tcase_add_test(tc, integer_conversions);
    tcase_add_test(tc, float_forms);
    tcase_add_test(tc, vote_uni_and_specials);
    tcase_add_test(tc, indirect_call_via_prototype);
    tcase_add_test(tc, named_barrier_with_count_and_mbarrier);
    tcase_add_test(tc, cubemap_array_forms);
    tcase_add_test(tc, block_scoped_labels);
    tcase_add_test(tc, proxy_fences_and_hints);
    tcase_add_test(tc, txq_tld4_and_brkpt);
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
