/* kt_warp_atomics.h - kernel tests: warp-level primitives and atomics
 * (tests/kernels/warp.cu, warp_groups.cu and atomics.cu).
 *
 * Shuffle references follow the PTX shfl.sync algorithm (segment mask and
 * clamp from the c operand CUDA builds for a width), votes/match/redux are
 * recomputed per warp, and atomics are checked through order-independent
 * final values; values whose order is up to the schedule (returned old
 * values, exch, cas) are checked for consistency with some serial order.
 * warp_groups.cu's references recompute every lane's result over the
 * lanes of its own group mask.
 * Included once, by test_kernels.c only.
 */
#ifndef KT_WARP_ATOMICS_H
#define KT_WARP_ATOMICS_H

#include "kt_harness.h"

/* ---- warp.cu ----------------------------------------------------------- */

/* The source lane PTX shfl.sync picks for `lane` in mode m ('i' idx, 'u'
 * up, 'd' down, 'x' bfly) with operand b and the c CUDA passes for width w;
 * returns lane itself when the source is out of the segment. */
static unsigned kt_shfl_src(char m, unsigned lane, unsigned b, unsigned w)
{
    unsigned c = ((32 - w) << 8) | (m == 'u' ? 0u : 0x1fu);
    unsigned bval = b & 31, cval = c & 31, seg = (c >> 8) & 31;
    int max_lane = (int)((lane & seg) | (cval & ~seg)), min_lane = (int)(lane & seg);
    int j, ok;
    switch (m) {
    case 'u': j = (int)lane - (int)bval; ok = j >= max_lane; break;
    case 'd': j = (int)(lane + bval); ok = j <= max_lane; break;
    case 'x': j = (int)(lane ^ bval); ok = j <= max_lane; break;
    default: j = min_lane | (int)(bval & ~seg); ok = j <= max_lane; break;
    }
    return ok ? (unsigned)j : lane;
}

/* shfl_modes with (delta, width) = (1, 32), (3, 8), (5, 16), (9, 8), (0, 1),
 * (33, 4), (31, 32), (2, 2): idx/up/down/xor, including sources outside
 * the segment and deltas >= 32 (only b[4:0] counts). 2 blocks of 64. */
START_TEST(test_shfl_modes)
{
    enum { T = 128 };
    static int32_t in[T], got[4 * T], want[4 * T];
    static const unsigned params[][2] = {{1, 32}, {3, 8}, {5, 16}, {9, 8}, {0, 1}, {33, 4}, {31, 32}, {2, 2}};
    kt_rng r = {20};
    for (int i = 0; i < T; i++)
        in[i] = (int32_t)kt_rand(&r);
    kt_ctx c;
    kt_open(&c, "warp", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
        unsigned delta = params[p][0];
        int w = (int)params[p][1];
        for (int i = 0; i < T; i++) {
            unsigned lane = i & 31, base = (unsigned)i & ~31u;
            want[4 * i + 0] = (int32_t)(base + kt_shfl_src('i', lane, (unsigned)in[i] & 31, (unsigned)w)) * 10;
            want[4 * i + 1] = (int32_t)(base + kt_shfl_src('u', lane, delta, (unsigned)w)) * 10;
            want[4 * i + 2] = (int32_t)(base + kt_shfl_src('d', lane, delta, (unsigned)w)) * 10;
            want[4 * i + 3] = (int32_t)(base + kt_shfl_src('x', lane, delta, (unsigned)w)) * 10;
        }
        void *args[] = {&di, &dout, &delta, &w};
        kt_run(&c, "shfl_modes", KT_D1(2), KT_D1(64), 0, args);
        kt_get(&c, got, dout, sizeof got);
        char what[64];
        snprintf(what, sizeof what, "shfl_modes delta=%u width=%d (idx,up,down,xor)", delta, w);
        KT_EXPECT(&c, what, (uint32_t *)got, (uint32_t *)want, 4 * T, 4);
    }
    kt_close(&c);
}
END_TEST

/* shfl_f64 (a 64-bit value as two 32-bit shuffles, rotate by one lane) and
 * shfl_partial (mask 0x55555555: even lanes rotate by two, odd lanes exit). */
START_TEST(test_shfl_f64_partial)
{
    enum { T = 128 };
    static double din[T], dgot[T], dwant[T];
    static int32_t in[T], got[T], want[T];
    kt_rng r = {21};
    for (int i = 0; i < T; i++) {
        din[i] = kt_u2d(((uint64_t)kt_rand(&r) << 32) | kt_rand(&r));
        in[i] = (int32_t)kt_rand(&r);
    }
    for (int i = 0; i < T; i++) {
        int base = i & ~31, lane = i & 31;
        dwant[i] = din[base + ((lane + 1) & 31)];
        want[i] = (lane & 1) ? -1 : in[base + ((lane + 2) & 31)];
    }
    kt_ctx c;
    kt_open(&c, "warp", _i, 10);
    uint64_t di = kt_buf(&c, din, sizeof din), dout = kt_buf(&c, NULL, sizeof dgot);
    void *args[] = {&di, &dout};
    kt_run(&c, "shfl_f64", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, dgot, dout, sizeof dgot);
    KT_EXPECT(&c, "shfl_f64", (uint64_t *)dgot, (uint64_t *)dwant, T, 1);
    di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    kt_run(&c, "shfl_partial", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "shfl_partial", (uint32_t *)got, (uint32_t *)want, T, 1);
    kt_close(&c);
}
END_TEST

/* Fills 4 warps of predicates: all positive, all zero, mixed signs and
 * zeros, a single nonzero lane. */
static void kt_vote_inputs(int32_t *in)
{
    kt_rng r = {22};
    for (int i = 0; i < 128; i++) {
        int w = i / 32, lane = i % 32;
        in[i] = w == 0 ? 1 + lane : w == 1 ? 0 : w == 2 ? (int32_t)(kt_rand(&r) % 5) - 2 : (lane == 13 ? -7 : 0);
    }
}

/* votes (ballot/all/any over the full warp, __activemask inside a branch)
 * and votes_partial (lanes < k with mask (1 << k) - 1 for k = 1, 16, 31,
 * the other lanes exited). */
START_TEST(test_votes)
{
    static int32_t in[128];
    static uint32_t got[12], want[12], agot[128], awant[128];
    kt_vote_inputs(in);
    for (int w = 0; w < 4; w++) {
        uint32_t ballot = 0, positive = 0;
        for (int l = 0; l < 32; l++) {
            ballot |= (uint32_t)(in[32 * w + l] != 0) << l;
            positive |= (uint32_t)(in[32 * w + l] > 0) << l;
        }
        want[3 * w] = ballot, want[3 * w + 1] = ballot == 0xffffffffu, want[3 * w + 2] = ballot != 0;
        for (int l = 0; l < 32; l++)
            awant[32 * w + l] = in[32 * w + l] > 0 ? positive : 0;
    }
    kt_ctx c;
    kt_open(&c, "warp", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got), da = kt_buf(&c, NULL, sizeof agot);
    void *args[] = {&di, &dout, &da};
    kt_run(&c, "votes", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_get(&c, agot, da, sizeof agot);
    KT_EXPECT(&c, "votes ballot/all/any", got, want, 12, 3);
    KT_EXPECT(&c, "votes activemask", agot, awant, 128, 1);

    for (int k = 1; k <= 31; k += 15) {
        for (int w = 0; w < 4; w++) {
            uint32_t ballot = 0;
            for (int l = 0; l < k; l++)
                ballot |= (uint32_t)(in[32 * w + l] != 0) << l;
            want[3 * w] = ballot, want[3 * w + 1] = ballot == (1u << k) - 1, want[3 * w + 2] = ballot != 0;
        }
        dout = kt_buf(&c, NULL, sizeof got);
        void *pargs[] = {&di, &dout, &k};
        kt_run(&c, "votes_partial", KT_D1(2), KT_D1(64), 0, pargs);
        kt_get(&c, got, dout, sizeof got);
        KT_EXPECT(&c, k == 1 ? "votes_partial k=1" : k == 16 ? "votes_partial k=16" : "votes_partial k=31", got,
                  want, 12, 3);
    }
    kt_close(&c);
}
END_TEST

/* match (any/all with the all-equal predicate) and match_u64 over 4 warps:
 * all equal, 3 classes, all distinct, 64-bit keys differing only in the
 * high word. */
START_TEST(test_match)
{
    static int32_t in[128], pgot[128], pwant[128];
    static uint64_t in64[128];
    static uint32_t got[256], want[256], g64[128], w64[128];
    kt_rng r = {23};
    for (int i = 0; i < 128; i++) {
        int w = i / 32, lane = i % 32;
        in[i] = w == 0 ? 77 : w == 1 ? lane % 3 : w == 2 ? lane * 1000 : (lane < 31 ? 5 : 6);
        in64[i] = ((uint64_t)(kt_rand(&r) % 3) << 32) | 0x1234;
    }
    for (int i = 0; i < 128; i++) {
        int base = i & ~31;
        uint32_t any = 0, all = 1, m64 = 0;
        for (int l = 0; l < 32; l++) {
            any |= (uint32_t)(in[base + l] == in[i]) << l;
            m64 |= (uint32_t)(in64[base + l] == in64[i]) << l;
            all &= in[base + l] == in[base];
        }
        want[2 * i] = any, want[2 * i + 1] = all ? 0xffffffffu : 0, pwant[i] = (int32_t)all;
        w64[i] = m64;
    }
    kt_ctx c;
    kt_open(&c, "warp", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got), dp = kt_buf(&c, NULL, sizeof pgot);
    void *args[] = {&di, &dout, &dp};
    kt_run(&c, "match", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    kt_get(&c, pgot, dp, sizeof pgot);
    KT_EXPECT(&c, "match any/all", got, want, 256, 2);
    KT_EXPECT(&c, "match all predicate", (uint32_t *)pgot, (uint32_t *)pwant, 128, 1);
    uint64_t d64 = kt_buf(&c, in64, sizeof in64), o64 = kt_buf(&c, NULL, sizeof g64);
    void *args64[] = {&d64, &o64};
    kt_run(&c, "match_u64", KT_D1(2), KT_D1(64), 0, args64);
    kt_get(&c, g64, o64, sizeof g64);
    KT_EXPECT(&c, "match_u64 any", g64, w64, 128, 1);
    kt_close(&c);
}
END_TEST

/* warp_reduce_ops (redux.sync add/min/max signed, and/or/xor) and
 * warp_reduce_unsigned_partial (odd lanes, mask 0xaaaaaaaa, unsigned);
 * sm_80+ only. */
START_TEST(test_redux)
{
    static int32_t in[128], got[24], want[24];
    static uint32_t pgot[12], pwant[12];
    kt_rng r = {24};
    for (int i = 0; i < 128; i++)
        in[i] = i < 32   ? (int32_t)kt_rand(&r)
                : i < 64 ? (int32_t)(kt_rand(&r) % 100) - 50
                         : (int32_t)(kt_rand(&r) | 0x80000000u);
    for (int w = 0; w < 4; w++) {
        uint32_t add = 0, a = 0xffffffffu, o = 0, x = 0;
        int32_t mn = INT32_MAX, mx = INT32_MIN;
        uint32_t uadd = 0, umn = 0xffffffffu, umx = 0;
        for (int l = 0; l < 32; l++) {
            int32_t v = in[32 * w + l];
            add += (uint32_t)v, a &= (uint32_t)v, o |= (uint32_t)v, x ^= (uint32_t)v;
            mn = v < mn ? v : mn, mx = v > mx ? v : mx;
            if (l & 1) {
                uint32_t u = (uint32_t)v;
                uadd += u, umn = u < umn ? u : umn, umx = u > umx ? u : umx;
            }
        }
        int32_t *q = want + 6 * w;
        q[0] = (int32_t)add, q[1] = mn, q[2] = mx, q[3] = (int32_t)a, q[4] = (int32_t)o, q[5] = (int32_t)x;
        pwant[3 * w] = uadd, pwant[3 * w + 1] = umn, pwant[3 * w + 2] = umx;
    }
    kt_ctx c;
    kt_open(&c, "warp", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    kt_run(&c, "warp_reduce_ops", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "warp_reduce_ops add/min/max/and/or/xor", (uint32_t *)got, (uint32_t *)want, 24, 6);
    dout = kt_buf(&c, NULL, sizeof pgot);
    kt_run(&c, "warp_reduce_unsigned_partial", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, pgot, dout, sizeof pgot);
    KT_EXPECT(&c, "warp_reduce_unsigned_partial add/min/max", pgot, pwant, 12, 3);
    kt_close(&c);
}
END_TEST

/* lane_regs: %laneid, %lanemask_lt and tid/32 on 2 blocks of 96. */
START_TEST(test_lane_regs)
{
    static uint32_t got[3 * 192], want[3 * 192];
    for (int i = 0; i < 192; i++) {
        unsigned t = i % 96, lane = t % 32;
        want[3 * i] = lane, want[3 * i + 1] = (1u << lane) - 1, want[3 * i + 2] = t / 32;
    }
    kt_ctx c;
    kt_open(&c, "warp", _i, 0);
    uint64_t dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&dout};
    kt_run(&c, "lane_regs", KT_D1(2), KT_D1(96), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "lane_regs laneid/lanemask_lt/warp", got, want, 3 * 192, 3);
    kt_close(&c);
}
END_TEST

/* ---- warp_groups.cu ---------------------------------------------------- */

/* The member mask of lane `lane` among the 32 labels lab[] of one warp:
 * the lanes with the same label modulo 4. */
static uint32_t kt_group_mask(const uint32_t *lab, int lane)
{
    uint32_t m = 0;
    for (int l = 0; l < 32; l++)
        m |= (uint32_t)(lab[l] % 4 == lab[lane] % 4) << l;
    return m;
}

/* Labels for 4 warps: random, interleaved (lane % 4), halves, all equal
 * (the one-mask case). */
static void kt_group_labels(uint32_t *lab, uint32_t *in, kt_rng *r)
{
    for (int i = 0; i < 128; i++) {
        int w = i / 32, lane = i % 32;
        lab[i] = w == 0 ? kt_rand(r) : w == 1 ? (uint32_t)lane : w == 2 ? (uint32_t)(lane / 16) : 6;
        in[i] = kt_rand(r) >> (lane % 3 * 8);
    }
}

/* Reductions of v[] over the lanes of mask m (base: the warp's first
 * element): add, min and max signed and unsigned, and, or, xor. */
static void kt_group_reduce(const uint32_t *v, uint32_t m, uint32_t out[8])
{
    uint32_t add = 0, umin = UINT32_MAX, umax = 0, and = UINT32_MAX, or = 0, xor = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (int l = 0; l < 32; l++) {
        if (!((m >> l) & 1))
            continue;
        add += v[l], and &= v[l], or |= v[l], xor ^= v[l];
        umin = v[l] < umin ? v[l] : umin, umax = v[l] > umax ? v[l] : umax;
        smin = (int32_t)v[l] < smin ? (int32_t)v[l] : smin, smax = (int32_t)v[l] > smax ? (int32_t)v[l] : smax;
    }
    out[0] = add, out[1] = (uint32_t)smin, out[2] = (uint32_t)smax, out[3] = umin, out[4] = umax;
    out[5] = and, out[6] = or, out[7] = xor;
}

/* The lane after `lane` in mask m, wrapping around to its first lane. */
static int kt_group_next(uint32_t m, int lane)
{
    uint32_t above = m & ~(uint32_t)((2ull << lane) - 1);
    return __builtin_ctz(above ? above : m);
}

/* partition_reduce: cg::labeled_partition + cg::reduce, every group of a
 * warp at the same redux.sync (sm_75: shuffles) with its own mask; the
 * group size and rank from the same masks. 2 blocks of 64. */
START_TEST(test_partition_reduce)
{
    static uint32_t lab[128], in[128], got[6 * 128], want[6 * 128];
    kt_rng r = {40};
    kt_group_labels(lab, in, &r);
    for (int i = 0; i < 128; i++) {
        int base = i & ~31, lane = i & 31;
        uint32_t m = kt_group_mask(lab + base, lane), red[8];
        kt_group_reduce(in + base, m, red);
        uint32_t *w = want + 6 * i;
        w[0] = (uint32_t)__builtin_popcount(m), w[1] = (uint32_t)__builtin_popcount(m & ((1u << lane) - 1));
        w[2] = red[0], w[3] = red[3], w[4] = red[4], w[5] = red[7];
    }
    kt_ctx c;
    kt_open(&c, "warp_groups", _i, 10);
    uint64_t dl = kt_buf(&c, lab, sizeof lab), di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&dl, &di, &dout};
    kt_run(&c, "partition_reduce", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "partition_reduce (size,rank,plus,less,greater,xor)", got, want, 6 * 128, 6);
    kt_close(&c);
}
END_TEST

/* group_masks: shfl, ballot, all/any/uni, match.any/all, every redux and
 * bar.warp.sync, each lane with its group's mask, the groups of a warp
 * together. 2 blocks of 64. */
START_TEST(test_group_masks)
{
    static uint32_t lab[128], in[128], got[16 * 128], want[16 * 128];
    kt_rng r = {41};
    kt_group_labels(lab, in, &r);
    for (int i = 0; i < 128; i++) {
        int base = i & ~31, lane = i & 31;
        const uint32_t *v = in + base;
        uint32_t m = kt_group_mask(lab + base, lane), ballot = 0, odd = 0, key_same = 1;
        uint32_t label = lab[i] % 4, key = label % 2 == 0 ? label * 7 : v[lane], first_key = 0;
        int first = 1;
        for (int l = 0; l < 32; l++) {
            if (!((m >> l) & 1))
                continue;
            ballot |= (v[l] & 1) << l;
            odd |= (uint32_t)((v[l] & 1) == (v[lane] & 1)) << l;
            uint32_t k = label % 2 == 0 ? label * 7 : v[l];
            if (first)
                first_key = k, first = 0;
            key_same &= k == first_key;
        }
        (void)key;
        uint32_t *w = want + 16 * i;
        w[0] = m;
        w[1] = v[kt_group_next(m, lane)];
        w[2] = ballot;
        w[3] = (uint32_t)(ballot == m) | (uint32_t)(ballot != 0) << 1 | (uint32_t)(ballot == m || ballot == 0) << 2;
        w[4] = odd;
        w[5] = key_same ? m : 0;
        w[6] = key_same;
        kt_group_reduce(v, m, w + 7);
        w[15] = 1;
    }
    kt_ctx c;
    kt_open(&c, "warp_groups", _i, 10);
    uint64_t dl = kt_buf(&c, lab, sizeof lab), di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&dl, &di, &dout};
    kt_run(&c, "group_masks", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c,
              "group_masks (mask,shfl,ballot,all|any|uni,match.any,match.all,pred,"
              "add,min.s32,max.s32,min.u32,max.u32,and,or,xor,syncwarp)",
              got, want, 16 * 128, 16);
    kt_close(&c);
}
END_TEST

/* group_masks_late: the lanes of the groups (lane % 4) named by `late`
 * spin until warp 1 releases them, so the rest of their groups reaches
 * redux, shfl, vote and match first and waits: with late lanes in group 3
 * only (0x08: lanes 3, 11, 19, 27), groups 0-2 go on; with late lanes in
 * every group (0xf0), none can. One block of 64. */
START_TEST(test_group_masks_late)
{
    static uint32_t in[32], got[4 * 32], want[4 * 32];
    kt_rng r = {42};
    for (int l = 0; l < 32; l++)
        in[l] = kt_rand(&r);
    for (int l = 0; l < 32; l++) {
        uint32_t m = 0x11111111u << (l % 4), red[8], ballot = 0, odd = 0;
        kt_group_reduce(in, m, red);
        for (int k = 0; k < 32; k++)
            if ((m >> k) & 1) {
                ballot |= (in[k] & 1) << k;
                odd |= (uint32_t)((in[k] & 1) == (in[l] & 1)) << k;
            }
        want[4 * l] = red[0], want[4 * l + 1] = in[kt_group_next(m, l)];
        want[4 * l + 2] = ballot, want[4 * l + 3] = odd;
    }
    kt_ctx c;
    kt_open(&c, "warp_groups", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in);
    static const unsigned lates[] = {0x08, 0xf0};
    for (size_t k = 0; k < sizeof lates / sizeof lates[0]; k++) {
        int32_t flag = 0;
        unsigned late = lates[k];
        uint64_t dout = kt_buf(&c, NULL, sizeof got), df = kt_buf(&c, &flag, 4);
        void *args[] = {&di, &dout, &df, &late};
        kt_run(&c, "group_masks_late", KT_D1(1), KT_D1(64), 0, args);
        kt_get(&c, got, dout, sizeof got);
        KT_EXPECT(&c, k == 0 ? "group_masks_late 0x08 (add,shfl,ballot,match.any)"
                             : "group_masks_late 0xf0 (add,shfl,ballot,match.any)",
                  got, want, 4 * 32, 4);
    }
    kt_close(&c);
}
END_TEST

/* group_elect: elect.sync with each lane's group mask: the group's first
 * lane leads. 2 blocks of 64 (sm_90 only). */
START_TEST(test_group_elect)
{
    static uint32_t lab[128], in[128], got[2 * 128], want[2 * 128];
    kt_rng r = {43};
    kt_group_labels(lab, in, &r);
    for (int i = 0; i < 128; i++) {
        int base = i & ~31, lane = i & 31;
        uint32_t leader = (uint32_t)__builtin_ctz(kt_group_mask(lab + base, lane));
        want[2 * i] = leader, want[2 * i + 1] = leader == (uint32_t)lane;
    }
    kt_ctx c;
    kt_open(&c, "warp_groups", _i, 10);
    uint64_t dl = kt_buf(&c, lab, sizeof lab), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&dl, &dout};
    kt_run(&c, "group_elect", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "group_elect (leader,elected)", got, want, 2 * 128, 2);
    kt_close(&c);
}
END_TEST

/* ---- atomics.cu -------------------------------------------------------- */

/* True if the returned old values of an atomic add of in[0..n) (started
 * at init) are consistent with some serial order ending at final. */
static int kt_add_chain_ok(const int32_t *old, const int32_t *in, int n, uint32_t init, uint32_t final)
{
    static char used[4096];
    uint32_t cur = init;
    memset(used, 0, (size_t)n);
    for (int step = 0; step < n; step++) {
        int found = -1;
        for (int i = 0; i < n && found < 0; i++)
            if (!used[i] && (uint32_t)old[i] == cur)
                found = i;
        if (found < 0)
            return 0;
        used[found] = 1;
        cur += (uint32_t)in[found];
    }
    return cur == final;
}

/* True if v equals one of in[0..n). */
static int kt_is_one_of(int64_t v, const int32_t *in, int n)
{
    for (int i = 0; i < n; i++)
        if (in[i] == v)
            return 1;
    return 0;
}

/* atomic_int_global: 16 blocks of 64 apply add/sub/exch/min/max/and/or/
 * xor (s32), inc/dec with wrap 37 and umin/umax (u32) to 12 global
 * counters (blocks run concurrently on the host threads). */
START_TEST(test_atomic_int_global)
{
    enum { T = 1024 };
    static int32_t in[T], old[T];
    int32_t g[12] = {0, 0, 0, INT32_MAX, INT32_MIN, -1, 0, 0, 0, 5, -1, 0}, want[12], got[12];
    kt_rng r = {30};
    for (int i = 0; i < T; i++)
        in[i] = (int32_t)(kt_rand(&r) | (i % 3 ? 0x00100001u : 0x80100001u));
    uint32_t w = 37, inc = 0, dec = 5, umin = 0xffffffffu, umax = 0;
    memcpy(want, g, sizeof g);
    for (int i = 0; i < T; i++) {
        uint32_t v = (uint32_t)in[i];
        want[0] = (int32_t)((uint32_t)want[0] + v);
        want[1] = (int32_t)((uint32_t)want[1] - v);
        want[3] = in[i] < want[3] ? in[i] : want[3];
        want[4] = in[i] > want[4] ? in[i] : want[4];
        want[5] &= in[i], want[6] |= in[i], want[7] ^= in[i];
        inc = inc >= w ? 0 : inc + 1;
        dec = (dec == 0 || dec > w) ? w : dec - 1;
        umin = v < umin ? v : umin, umax = v > umax ? v : umax;
    }
    want[8] = (int32_t)inc, want[9] = (int32_t)dec, want[10] = (int32_t)umin, want[11] = (int32_t)umax;
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t dg = kt_buf(&c, g, sizeof g), di = kt_buf(&c, in, sizeof in), dold = kt_buf(&c, NULL, sizeof old);
    void *args[] = {&dg, &di, &dold, &w};
    kt_run(&c, "atomic_int_global", KT_D1(T / 64), KT_D1(64), 0, args);
    kt_get(&c, got, dg, sizeof got);
    kt_get(&c, old, dold, sizeof old);
    ck_assert_msg(kt_is_one_of(got[2], in, T), "%s: atomicExch left %d, not one of the inputs", c.where, got[2]);
    want[2] = got[2];
    KT_EXPECT(&c, "atomic_int_global counters (add,sub,exch,min,max,and,or,xor,inc,dec,umin,umax)",
              (uint32_t *)got, (uint32_t *)want, 12, 1);
    ck_assert_msg(kt_add_chain_ok(old, in, T, 0, (uint32_t)want[0]),
                  "%s: the old values returned by atomicAdd are not those of any serial order", c.where);
    kt_close(&c);
}
END_TEST

/* atomic_64_global: u64 add/exch/min/max/and/or/xor/cas and s64 min/max. */
START_TEST(test_atomic_64_global)
{
    enum { T = 192 };
    static int64_t in[T];
    uint64_t g[10] = {0, 0, UINT64_MAX, 0, UINT64_MAX, 0, 0, 0, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN};
    uint64_t want[10], got[10];
    kt_rng r = {31};
    for (int i = 0; i < T; i++)
        in[i] = (int64_t)((((uint64_t)kt_rand(&r) << 32) | kt_rand(&r)) | 0x0100000000000010ull);
    memcpy(want, g, sizeof g);
    for (int i = 0; i < T; i++) {
        uint64_t v = (uint64_t)in[i];
        want[0] += v;
        want[2] = v < want[2] ? v : want[2];
        want[3] = v > want[3] ? v : want[3];
        want[4] &= v, want[5] |= v, want[6] ^= v;
        want[8] = in[i] < (int64_t)want[8] ? v : want[8];
        want[9] = in[i] > (int64_t)want[9] ? v : want[9];
    }
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t dg = kt_buf(&c, g, sizeof g), di = kt_buf(&c, in, sizeof in);
    void *args[] = {&dg, &di};
    kt_run(&c, "atomic_64_global", KT_D1(3), KT_D1(64), 0, args);
    kt_get(&c, got, dg, sizeof got);
    int exch_ok = 0, cas_ok = 0;
    for (int i = 0; i < T; i++) {
        exch_ok |= got[1] == (uint64_t)in[i];
        cas_ok |= got[7] == (uint64_t)in[i];
    }
    ck_assert_msg(exch_ok && cas_ok, "%s: atomicExch/atomicCAS left 0x%llx/0x%llx, not inputs", c.where,
                  (unsigned long long)got[1], (unsigned long long)got[7]);
    want[1] = got[1], want[7] = got[7];
    KT_EXPECT(&c, "atomic_64_global (add,exch,min,max,and,or,xor,cas,smin,smax)", got, want, 10, 1);
    kt_close(&c);
}
END_TEST

/* atomic_float_global (f32 and f64 adds of integer-valued inputs, exact in
 * any order; a CAS-loop float max) and atomic_cas_ticket (CAS increments
 * hand out a permutation of 0..N-1). */
START_TEST(test_atomic_float_cas)
{
    enum { T = 256 };
    static float in[T];
    static uint32_t tickets[T], seen[T];
    float f[2] = {0.0f, -1e30f}, fwant[2] = {0.0f, -1e30f}, fgot[2];
    double d = 0, dwant = 0, dgot;
    kt_rng r = {32};
    for (int i = 0; i < T; i++) {
        in[i] = (float)((int)(kt_rand(&r) % 2001) - 1000);
        fwant[0] += in[i];
        dwant += in[i];
        fwant[1] = in[i] > fwant[1] ? in[i] : fwant[1];
    }
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t df = kt_buf(&c, f, sizeof f), dd = kt_buf(&c, &d, sizeof d), di = kt_buf(&c, in, sizeof in);
    void *args[] = {&df, &dd, &di};
    kt_run(&c, "atomic_float_global", KT_D1(4), KT_D1(64), 0, args);
    kt_get(&c, fgot, df, sizeof fgot);
    kt_get(&c, &dgot, dd, sizeof dgot);
    KT_EXPECT(&c, "atomic_float_global f32 sum, max", (uint32_t *)fgot, (uint32_t *)fwant, 2, 1);
    KT_EXPECT(&c, "atomic_float_global f64 sum", (uint64_t *)&dgot, (uint64_t *)&dwant, 1, 1);

    uint32_t zero = 0, count;
    uint64_t dc = kt_buf(&c, &zero, 4), dt = kt_buf(&c, NULL, sizeof tickets);
    void *targs[] = {&dc, &dt};
    kt_run(&c, "atomic_cas_ticket", KT_D1(4), KT_D1(64), 0, targs);
    kt_get(&c, tickets, dt, sizeof tickets);
    kt_get(&c, &count, dc, 4);
    memset(seen, 0, sizeof seen);
    int dup = 0;
    for (int i = 0; i < T; i++) {
        if (tickets[i] >= T || seen[tickets[i]]++)
            dup++;
    }
    ck_assert_msg(dup == 0 && count == T, "%s: atomic_cas_ticket: %d bad or repeated tickets, counter %u (want %d)",
                  c.where, dup, count, T);
    kt_close(&c);
}
END_TEST

/* atomic_shared: 3 blocks of 96 apply add/sub/exch/min/max/and/or/xor/inc/
 * cas (s32) and f32/f64/u64 adds to shared counters. */
START_TEST(test_atomic_shared)
{
    enum { G = 3, B = 96 };
    static int32_t in[G * B], got[13 * G], want[13 * G];
    kt_rng r = {33};
    unsigned w = 40;
    for (int i = 0; i < G * B; i++) {
        int v = (int)(kt_rand(&r) % 2001) - 1000;
        in[i] = v ? v : 1;
    }
    for (int b = 0; b < G; b++) {
        const int32_t *v = in + b * B;
        int32_t *q = want + 13 * b;
        int32_t s[10] = {0, 0, 0, INT32_MAX, INT32_MIN, -1, 0, 0, 0, 0};
        float fs = 0;
        double ds = 0;
        uint64_t us = 0;
        uint32_t inc = 0;
        for (int t = 0; t < B; t++) {
            s[0] += v[t], s[1] -= v[t];
            s[3] = v[t] < s[3] ? v[t] : s[3], s[4] = v[t] > s[4] ? v[t] : s[4];
            s[5] &= v[t], s[6] |= v[t], s[7] ^= v[t];
            inc = inc >= w ? 0 : inc + 1;
            fs += (float)v[t], ds += v[t], us += (uint32_t)v[t];
        }
        s[8] = (int32_t)inc;
        memcpy(q, s, sizeof s);
        q[10] = (int32_t)kt_f2u(fs), q[11] = (int32_t)ds, q[12] = (int32_t)us;
    }
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout, &w};
    kt_run(&c, "atomic_shared", KT_D1(G), KT_D1(B), 0, args);
    kt_get(&c, got, dout, sizeof got);
    for (int b = 0; b < G; b++) {
        ck_assert_msg(kt_is_one_of(got[13 * b + 2], in + b * B, B) && kt_is_one_of(got[13 * b + 9], in + b * B, B),
                      "%s: block %d: shared exch/cas left %d/%d, not inputs of the block", c.where, b,
                      got[13 * b + 2], got[13 * b + 9]);
        want[13 * b + 2] = got[13 * b + 2], want[13 * b + 9] = got[13 * b + 9];
    }
    KT_EXPECT(&c, "atomic_shared (add,sub,exch,min,max,and,or,xor,inc,cas,f32,f64,u64)", (uint32_t *)got,
              (uint32_t *)want, 13 * G, 13);
    kt_close(&c);
}
END_TEST

/* atomic_histogram (n = 1000 of 1024 threads, 17 bins) and red_asm
 * (red.global.add.u32 and red.global.max.s32). */
START_TEST(test_atomic_histogram_red)
{
    enum { N = 1000, BINS = 17, T = 256 };
    static uint32_t in[N];
    uint32_t hist[BINS] = {0}, want[BINS] = {0}, got[BINS];
    kt_rng r = {34};
    for (int i = 0; i < N; i++) {
        in[i] = kt_rand(&r);
        want[in[i] % BINS]++;
    }
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dh = kt_buf(&c, hist, sizeof hist);
    unsigned bins = BINS;
    int n = N;
    void *args[] = {&di, &dh, &bins, &n};
    kt_run(&c, "atomic_histogram", KT_D1(8), KT_D1(128), 0, args);
    kt_get(&c, got, dh, sizeof got);
    KT_EXPECT(&c, "atomic_histogram", got, want, BINS, 1);

    static int32_t v[T];
    int32_t g[2] = {0, INT32_MIN}, gw[2] = {0, INT32_MIN}, gg[2];
    for (int i = 0; i < T; i++) {
        v[i] = (int32_t)kt_rand(&r);
        gw[0] = (int32_t)((uint32_t)gw[0] + (uint32_t)v[i]);
        gw[1] = v[i] > gw[1] ? v[i] : gw[1];
    }
    uint64_t dg = kt_buf(&c, g, sizeof g), dv = kt_buf(&c, v, sizeof v);
    void *rargs[] = {&dg, &dv};
    kt_run(&c, "red_asm", KT_D1(4), KT_D1(64), 0, rargs);
    kt_get(&c, gg, dg, sizeof gg);
    KT_EXPECT(&c, "red_asm add.u32, max.s32", (uint32_t *)gg, (uint32_t *)gw, 2, 1);
    kt_close(&c);
}
END_TEST

/* atomic_half2 (sm_80): f16x2 atom.add.noftz on acc[0] and f16 on acc[1]
 * with small integer values (sums exact in any order). */
START_TEST(test_atomic_half2)
{
    enum { T = 128 };
    static uint16_t in[2 * T];
    uint16_t acc[4] = {0, 0, 0, 0}, want[4], got[4];
    double lo = 0, hi = 0;
    for (int i = 0; i < T; i++) {
        in[2 * i] = kt_to_f16((double)(i % 7) - 3.0, KT_RN);
        in[2 * i + 1] = kt_to_f16((double)(i % 5), KT_RN);
        lo += (double)(i % 7) - 3.0, hi += i % 5;
    }
    want[0] = kt_to_f16(lo, KT_RN), want[1] = kt_to_f16(hi, KT_RN), want[2] = kt_to_f16(lo, KT_RN), want[3] = 0;
    kt_ctx c;
    kt_open(&c, "atomics", _i, 10);
    uint64_t da = kt_buf(&c, acc, sizeof acc), di = kt_buf(&c, in, sizeof in);
    void *args[] = {&da, &di};
    kt_run(&c, "atomic_half2", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, da, sizeof got);
    KT_EXPECT(&c, "atomic_half2 (f16x2 lo, hi, f16, untouched)", got, want, 4, 1);
    kt_close(&c);
}
END_TEST

#endif /* KT_WARP_ATOMICS_H */
