/* kt_basic.h - kernel tests: elementwise kernels, reductions, divergence
 * and synchronization (tests/kernels/{elementwise,reduce,divergence,sync}.cu).
 *
 * Each START_TEST runs one kernel in the run configuration _i (an index in
 * kt_configs) and compares every output word with a reference computed
 * here. Inputs are chosen so that the references do not depend on whether
 * the PTX contracted a*b+c into an fma (the -G variant does not), or on
 * the order of atomic updates. Included once, by test_kernels.c only.
 */
#ifndef KT_BASIC_H
#define KT_BASIC_H

#include "kt_harness.h"

/* ---- elementwise.cu ---------------------------------------------------- */

/* saxpy over n = 1000 with 1024 threads: y = a*x + y below n, the 24 tail
 * words untouched. Products are exact, so fused and unfused agree. */
START_TEST(test_saxpy)
{
    enum { N = 1000, T = 1024 };
    static float x[T], y[T], want[T], got[T];
    kt_rng r = {1};
    for (int i = 0; i < T; i++) {
        x[i] = (float)(int)(kt_rand(&r) % 4096 - 2048) / 256.0f;
        y[i] = (float)(int)(kt_rand(&r) % 4096 - 2048) / 64.0f;
        want[i] = i < N ? 1.5f * x[i] + y[i] : y[i];
    }
    kt_ctx c;
    kt_open(&c, "elementwise", _i, 0);
    uint64_t dx = kt_buf(&c, x, sizeof x), dy = kt_buf(&c, y, sizeof y);
    unsigned n = N;
    float a = 1.5f;
    void *args[] = {&n, &a, &dx, &dy};
    kt_run(&c, "saxpy", KT_D1(8), KT_D1(128), 0, args);
    kt_get(&c, got, dy, sizeof got);
    KT_EXPECT(&c, "saxpy y", (uint32_t *)got, (uint32_t *)want, T, 1);
    kt_close(&c);
}
END_TEST

/* vadd_s32 / vadd_f32 / vadd_f64 with n = 777 over 896 threads: wrapping
 * int adds (INT_MAX + 1), correctly rounded float and double adds, and the
 * words past n left at the 0xFF fill. */
START_TEST(test_vadd)
{
    enum { N = 777, T = 896 };
    static int32_t ia[N], ib[N], ic[T], iw[T];
    static float fa[N], fb[N], fc[T], fw[T];
    static double da[N], db[N], dc[T], dw[T];
    kt_rng r = {2};
    memset(iw, 0xff, sizeof iw);
    memset(fw, 0xff, sizeof fw);
    memset(dw, 0xff, sizeof dw);
    for (int i = 0; i < N; i++) {
        ia[i] = (int32_t)kt_rand(&r);
        ib[i] = i == 0 ? 1 : (int32_t)kt_rand(&r);
        if (i == 0)
            ia[i] = INT32_MAX;
        iw[i] = (int32_t)((uint32_t)ia[i] + (uint32_t)ib[i]);
        fa[i] = kt_randf(&r, -1e3f, 1e3f);
        fb[i] = kt_randf(&r, -1e-3f, 1e-3f);
        fw[i] = fa[i] + fb[i];
        da[i] = (double)kt_rand(&r) / 3.0;
        db[i] = (double)kt_rand(&r) / 7e9;
        dw[i] = da[i] + db[i];
    }
    kt_ctx c;
    kt_open(&c, "elementwise", _i, 0);
    int n = N;
    uint64_t a = kt_buf(&c, ia, sizeof ia), b = kt_buf(&c, ib, sizeof ib), o = kt_buf(&c, NULL, sizeof ic);
    void *args[] = {&a, &b, &o, &n};
    kt_run(&c, "vadd_s32", KT_D1(7), KT_D1(128), 0, args);
    kt_get(&c, ic, o, sizeof ic);
    KT_EXPECT(&c, "vadd_s32", (uint32_t *)ic, (uint32_t *)iw, T, 1);
    a = kt_buf(&c, fa, sizeof fa), b = kt_buf(&c, fb, sizeof fb), o = kt_buf(&c, NULL, sizeof fc);
    kt_run(&c, "vadd_f32", KT_D1(7), KT_D1(128), 0, args);
    kt_get(&c, fc, o, sizeof fc);
    KT_EXPECT(&c, "vadd_f32", (uint32_t *)fc, (uint32_t *)fw, T, 1);
    a = kt_buf(&c, da, sizeof da), b = kt_buf(&c, db, sizeof db), o = kt_buf(&c, NULL, sizeof dc);
    kt_run(&c, "vadd_f64", KT_D1(7), KT_D1(128), 0, args);
    kt_get(&c, dc, o, sizeof dc);
    KT_EXPECT(&c, "vadd_f64", (uint64_t *)dc, (uint64_t *)dw, T, 1);
    kt_close(&c);
}
END_TEST

/* grid_stride_scale: 3 blocks of 64 threads cover n = 5000 in a loop. */
START_TEST(test_grid_stride)
{
    enum { N = 5000 };
    static float x[N], want[N], got[N];
    kt_rng r = {3};
    for (int i = 0; i < N; i++) {
        x[i] = kt_randf(&r, -10, 10);
        want[i] = x[i] * 0.7f;
    }
    kt_ctx c;
    kt_open(&c, "elementwise", _i, 0);
    uint64_t d = kt_buf(&c, x, sizeof x);
    float s = 0.7f;
    int n = N;
    void *args[] = {&d, &s, &n};
    kt_run(&c, "grid_stride_scale", KT_D1(3), KT_D1(64), 0, args);
    kt_get(&c, got, d, sizeof got);
    KT_EXPECT(&c, "grid_stride_scale", (uint32_t *)got, (uint32_t *)want, N, 1);
    kt_close(&c);
}
END_TEST

/* index_2d on a 3x2 grid of 16x8 blocks; index_3d on a 2x3x2 grid of
 * 4x2x3 blocks (6 words per thread); dims_3d on a 2x3x4 grid of 5x6x7. */
START_TEST(test_index_grids)
{
    kt_ctx c;
    kt_open(&c, "elementwise", _i, 0);
    {
        enum { W = 48, H = 16 };
        static uint32_t got[W * H], want[W * H];
        for (unsigned i = 0; i < W * H; i++)
            want[i] = i;
        uint64_t o = kt_buf(&c, NULL, sizeof got);
        void *args[] = {&o};
        kt_run(&c, "index_2d", KT_D3(3, 2, 1), KT_D3(16, 8, 1), 0, args);
        kt_get(&c, got, o, sizeof got);
        KT_EXPECT(&c, "index_2d", got, want, W * H, 1);
    }
    {
        enum { GX = 2, GY = 3, GZ = 2, BX = 4, BY = 2, BZ = 3, NT = GX * GY * GZ * BX * BY * BZ };
        static uint32_t got[6 * NT], want[6 * NT];
        for (unsigned bz = 0; bz < GZ; bz++)
            for (unsigned by = 0; by < GY; by++)
                for (unsigned bx = 0; bx < GX; bx++)
                    for (unsigned tz = 0; tz < BZ; tz++)
                        for (unsigned ty = 0; ty < BY; ty++)
                            for (unsigned tx = 0; tx < BX; tx++) {
                                unsigned block = (bz * GY + by) * GX + bx, local = (tz * BY + ty) * BX + tx;
                                uint32_t *w = want + 6 * (block * BX * BY * BZ + local);
                                w[0] = tx, w[1] = ty, w[2] = tz, w[3] = bx, w[4] = by, w[5] = bz;
                            }
        uint64_t o = kt_buf(&c, NULL, sizeof got);
        void *args[] = {&o};
        kt_run(&c, "index_3d", KT_D3(GX, GY, GZ), KT_D3(BX, BY, BZ), 0, args);
        kt_get(&c, got, o, sizeof got);
        KT_EXPECT(&c, "index_3d", got, want, 6 * NT, 6);
    }
    {
        uint32_t got[6], want[6] = {5, 6, 7, 2, 3, 4};
        uint64_t o = kt_buf(&c, NULL, sizeof got);
        void *args[] = {&o};
        kt_run(&c, "dims_3d", KT_D3(2, 3, 4), KT_D3(5, 6, 7), 0, args);
        kt_get(&c, got, o, sizeof got);
        KT_EXPECT(&c, "dims_3d", got, want, 6, 1);
    }
    kt_close(&c);
}
END_TEST

/* ---- reduce.cu --------------------------------------------------------- */

/* Sums p[0..n) pairwise as a shared-memory tree with halving strides. */
static float kt_tree_sum_f32(float *p, int n)
{
    for (int stride = n / 2; stride > 0; stride >>= 1)
        for (int t = 0; t < stride; t++)
            p[t] += p[t + stride];
    return p[0];
}

/* reduce_tree_f32: 4 blocks of 256 over n = 1000 (zero-padded tail),
 * bit-exact against the same summation tree. */
START_TEST(test_reduce_tree)
{
    enum { N = 1000, G = 4 };
    static float in[N], got[G], want[G], p[256];
    kt_rng r = {4};
    for (int i = 0; i < N; i++)
        in[i] = kt_randf(&r, -1, 1);
    for (int b = 0; b < G; b++) {
        for (int t = 0; t < 256; t++)
            p[t] = b * 256 + t < N ? in[b * 256 + t] : 0.0f;
        want[b] = kt_tree_sum_f32(p, 256);
    }
    kt_ctx c;
    kt_open(&c, "reduce", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "reduce_tree_f32", KT_D1(G), KT_D1(256), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "reduce_tree_f32", (uint32_t *)got, (uint32_t *)want, G, 1);
    kt_close(&c);
}
END_TEST

/* reduce_warp_s32 (shfl.down tree, wrapping) and reduce_warp_xor_f32
 * (butterfly: every lane gets its warp's sum, bit-exact against the same
 * butterfly). 8 blocks of 128. */
START_TEST(test_reduce_warp)
{
    enum { N = 1024 };
    static int32_t in[N], got[N / 32], want[N / 32];
    static float fin[N], fgot[N], fwant[N], v[32], nv[32];
    kt_rng r = {5};
    for (int i = 0; i < N; i++) {
        in[i] = (int32_t)kt_rand(&r);
        fin[i] = kt_randf(&r, -100, 100);
    }
    for (int w = 0; w < N / 32; w++) {
        uint32_t s = 0;
        for (int l = 0; l < 32; l++)
            s += (uint32_t)in[32 * w + l];
        want[w] = (int32_t)s;
        for (int l = 0; l < 32; l++)
            v[l] = fin[32 * w + l];
        for (int m = 16; m > 0; m >>= 1) {
            for (int l = 0; l < 32; l++)
                nv[l] = v[l] + v[l ^ m];
            memcpy(v, nv, sizeof v);
        }
        memcpy(fwant + 32 * w, v, sizeof v);
    }
    kt_ctx c;
    kt_open(&c, "reduce", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "reduce_warp_s32", KT_D1(8), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "reduce_warp_s32", (uint32_t *)got, (uint32_t *)want, N / 32, 1);
    uint64_t fi = kt_buf(&c, fin, sizeof fin), fo = kt_buf(&c, NULL, sizeof fgot);
    void *fargs[] = {&fi, &fo};
    kt_run(&c, "reduce_warp_xor_f32", KT_D1(8), KT_D1(128), 0, fargs);
    kt_get(&c, fgot, fo, sizeof fgot);
    KT_EXPECT(&c, "reduce_warp_xor_f32", (uint32_t *)fgot, (uint32_t *)fwant, N, 1);
    kt_close(&c);
}
END_TEST

/* reduce_dyn_f64: 3 blocks of 128 with 1 KiB of dynamic shared memory,
 * grid-stride partial sums then a tree; bit-exact. */
START_TEST(test_reduce_dyn)
{
    enum { N = 2000, G = 3, B = 128 };
    static double in[N], got[G], want[G], p[B];
    kt_rng r = {6};
    for (int i = 0; i < N; i++)
        in[i] = (double)kt_rand(&r) / 1e6 - 2000.0;
    for (int b = 0; b < G; b++) {
        for (int t = 0; t < B; t++) {
            double s = 0;
            for (int i = b * B + t; i < N; i += G * B)
                s += in[i];
            p[t] = s;
        }
        for (int stride = B / 2; stride > 0; stride >>= 1)
            for (int t = 0; t < stride; t++)
                p[t] += p[t + stride];
        want[b] = p[0];
    }
    kt_ctx c;
    kt_open(&c, "reduce", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "reduce_dyn_f64", KT_D1(G), KT_D1(B), B * sizeof(double), args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "reduce_dyn_f64", (uint64_t *)got, (uint64_t *)want, G, 1);
    kt_close(&c);
}
END_TEST

/* reduce_dyn_f64 with the whole sm_80 shared memory (163 KiB) as dynamic
 * shared memory: the kernel declares no static shared memory of its own
 * (other kernels of reduce.ptx do), so the launch is within the limit. */
START_TEST(test_reduce_dyn_max_shared)
{
    enum { N = 512, B = 128 };
    static double in[N], p[B];
    double got = 0, want;
    for (int i = 0; i < N; i++)
        in[i] = (double)(i % 17) - 8.25;
    for (int t = 0; t < B; t++) {
        p[t] = 0;
        for (int i = t; i < N; i += B)
            p[t] += in[i];
    }
    for (int stride = B / 2; stride > 0; stride >>= 1)
        for (int t = 0; t < stride; t++)
            p[t] += p[t + stride];
    want = p[0];
    kt_ctx c;
    kt_open(&c, "reduce", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "reduce_dyn_f64", KT_D1(1), KT_D1(B), 163 * 1024, args);
    kt_get(&c, &got, dout, sizeof got);
    KT_EXPECT(&c, "reduce_dyn_f64 with 163 KiB of dynamic shared memory", (uint64_t *)&got, (uint64_t *)&want, 1, 1);
    kt_close(&c);
}
END_TEST

/* reduce_two_level_u32: 5 blocks of 256 over n = 1200 (warp shuffles,
 * per-warp sums through shared memory, one atomicAdd per block). */
START_TEST(test_reduce_two_level)
{
    enum { N2 = 1200 };
    kt_rng r = {66};
    static uint32_t u[N2];
    uint32_t total = 0, zero = 0, gotu = 0;
    for (int i = 0; i < N2; i++) {
        u[i] = kt_rand(&r);
        total += u[i];
    }
    kt_ctx c;
    kt_open(&c, "reduce", _i, 10);
    uint64_t du = kt_buf(&c, u, sizeof u), dt = kt_buf(&c, &zero, 4);
    int n2 = N2;
    void *args2[] = {&du, &dt, &n2};
    kt_run(&c, "reduce_two_level_u32", KT_D1(5), KT_D1(256), 0, args2);
    kt_get(&c, &gotu, dt, 4);
    KT_EXPECT(&c, "reduce_two_level_u32", &gotu, &total, 1, 1);
    kt_close(&c);
}
END_TEST

/* ---- divergence.cu ----------------------------------------------------- */

/* classify (nested if/else) and divergent_switch (switch on v & 7) over
 * n = 1000 with 1024 threads; values cover every branch. */
START_TEST(test_classify_switch)
{
    enum { N = 1000, T = 1024 };
    static int32_t in[N], got[T], want[T], sgot[T], swant[T];
    kt_rng r = {7};
    memset(want, 0xff, sizeof want);
    memset(swant, 0xff, sizeof swant);
    for (int i = 0; i < N; i++) {
        switch (i % 5) {
        case 0: in[i] = (int32_t)kt_rand(&r); break;
        case 1: in[i] = (int32_t)(kt_rand(&r) % 200) - 100; break;
        case 2: in[i] = i % 3 == 0 ? 0 : 99 + (int32_t)(kt_rand(&r) % 6); break;
        case 3: in[i] = i % 7 == 0 ? INT32_MIN : i % 7 == 1 ? INT32_MAX : (int32_t)kt_rand(&r) % 1000; break;
        default: in[i] = 300 + (int32_t)(kt_rand(&r) % 50); break;
        }
        int v = in[i], k;
        if (v < 0)
            k = (v & 1) ? 1 : 2;
        else if (v == 0)
            k = 3;
        else if (v < 100)
            k = 4;
        else
            k = v % 3 == 0 ? 5 : 6;
        want[i] = k;
        uint32_t uv = (uint32_t)v;
        switch (v & 7) {
        case 0: swant[i] = (int32_t)(uv * 3u); break;
        case 1: swant[i] = (int32_t)(uv - 17u); break;
        case 2: swant[i] = v ^ 0x5a5a; break;
        case 3: swant[i] = (int32_t)(uv << 2); break;
        case 4: swant[i] = (int32_t)(0u - uv); break;
        case 5: swant[i] = v / 7; break;
        case 6: swant[i] = v | 1; break;
        default: swant[i] = 42; break;
        }
    }
    kt_ctx c;
    kt_open(&c, "divergence", _i, 0);
    int n = N;
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout, &n};
    kt_run(&c, "classify", KT_D1(8), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "classify", (uint32_t *)got, (uint32_t *)want, T, 1);
    dout = kt_buf(&c, NULL, sizeof sgot);
    kt_run(&c, "divergent_switch", KT_D1(8), KT_D1(128), 0, args);
    kt_get(&c, sgot, dout, sizeof sgot);
    KT_EXPECT(&c, "divergent_switch", (uint32_t *)sgot, (uint32_t *)swant, T, 1);
    kt_close(&c);
}
END_TEST

/* collatz_steps (per-lane loop trip counts, capped at 300) and
 * early_exit_loop (return from inside a loop) on 2 blocks of 128. */
START_TEST(test_loops_early_exit)
{
    enum { N = 250, ROWS = 200, LEN = 40 };
    static uint32_t start[N], got[N], want[N];
    static int32_t m[ROWS * LEN], egot[ROWS], ewant[ROWS];
    kt_rng r = {8};
    for (int i = 0; i < N; i++) {
        start[i] = i < 3 ? (uint32_t)i : 1 + kt_rand(&r) % 100000;
        uint64_t x = start[i];
        uint32_t k = 0;
        while (x > 1 && k < 300) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            k++;
        }
        want[i] = k;
    }
    for (int i = 0; i < ROWS; i++) {
        ewant[i] = -1;
        for (int j = 0; j < LEN; j++) {
            m[i * LEN + j] = kt_rand(&r) % 37 == 0 ? 0 : 1 + (int32_t)(kt_rand(&r) % 9);
            if (m[i * LEN + j] == 0 && ewant[i] < 0)
                ewant[i] = j;
        }
    }
    kt_ctx c;
    kt_open(&c, "divergence", _i, 0);
    int n = N;
    unsigned limit = 300;
    uint64_t ds = kt_buf(&c, start, sizeof start), dsteps = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&ds, &dsteps, &n, &limit};
    kt_run(&c, "collatz_steps", KT_D1(2), KT_D1(128), 0, args);
    kt_get(&c, got, dsteps, sizeof got);
    KT_EXPECT(&c, "collatz_steps", got, want, N, 1);
    int rows = ROWS, len = LEN;
    uint64_t dm = kt_buf(&c, m, sizeof m), de = kt_buf(&c, NULL, sizeof egot);
    void *eargs[] = {&dm, &de, &rows, &len};
    kt_run(&c, "early_exit_loop", KT_D1(2), KT_D1(128), 0, eargs);
    kt_get(&c, egot, de, sizeof egot);
    KT_EXPECT(&c, "early_exit_loop", (uint32_t *)egot, (uint32_t *)ewant, ROWS, 1);
    kt_close(&c);
}
END_TEST

/* spin_lock_its: 2 blocks of 64 threads each take a global CAS lock
 * twice; lanes of one warp contend, so only independent thread scheduling
 * makes progress. A 20 s launch timeout turns a hang into a failure (the
 * -G variant needs ~200k warp-instructions per acquisition today). */
START_TEST(test_spin_lock_its)
{
    kt_ctx c;
    kt_open(&c, "divergence", _i, 20);
    int32_t zero = 0, got = 0, want = 2 * 64 * 2, iters = 2;
    uint64_t lock = kt_buf(&c, &zero, 4), counter = kt_buf(&c, &zero, 4);
    void *args[] = {&lock, &counter, &iters};
    kt_run(&c, "spin_lock_its", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, &got, counter, 4);
    KT_EXPECT(&c, "spin_lock_its counter", &got, &want, 1, 1);
    kt_get(&c, &got, lock, 4);
    KT_EXPECT(&c, "spin_lock_its lock released", &got, &zero, 1, 1);
    kt_close(&c);
}
END_TEST

/* spin_lock_lanes: lanes of a warp sharing lock l % 4 serialize their
 * adds into slot[l % 4]; integer-valued floats keep the sums exact in any
 * order. 2 blocks of 64. */
START_TEST(test_spin_lock_lanes)
{
    enum { T = 128, K = 4 };
    static float in[T];
    float slot[K] = {0}, want[K] = {0}, got[K];
    int32_t locks[K] = {0};
    for (int i = 0; i < T; i++) {
        in[i] = (float)(i * 3 + 1);
        want[(i & 31) % K] += in[i];
    }
    kt_ctx c;
    kt_open(&c, "divergence", _i, 20);
    uint64_t dl = kt_buf(&c, locks, sizeof locks), ds = kt_buf(&c, slot, sizeof slot),
             di = kt_buf(&c, in, sizeof in);
    int nlocks = K;
    void *args[] = {&dl, &ds, &di, &nlocks};
    kt_run(&c, "spin_lock_lanes", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, ds, sizeof got);
    KT_EXPECT(&c, "spin_lock_lanes slots", (uint32_t *)got, (uint32_t *)want, K, 1);
    kt_close(&c);
}
END_TEST

/* barrier_votes: __syncthreads_count/and/or over 4 blocks with all-true,
 * all-false, mixed and single-true predicates; blocks of 96 threads, then
 * of 100 (a partial last warp). */
START_TEST(test_barrier_votes)
{
    enum { G = 4, BMAX = 100 };
    static int32_t in[G * BMAX], got[3 * G], want[3 * G];
    kt_rng r = {9};
    kt_ctx c;
    kt_open(&c, "divergence", _i, 10);
    for (int B = 96; B <= BMAX; B += BMAX - 96) {
        for (int b = 0; b < G; b++) {
            int count = 0;
            for (int t = 0; t < B; t++) {
                int v = b == 0 ? 5 : b == 1 ? 0 : b == 2 ? (int)(kt_rand(&r) % 3) : (t == B - 3 ? -1 : 0);
                in[b * B + t] = v;
                count += v != 0;
            }
            want[3 * b] = count, want[3 * b + 1] = count == B, want[3 * b + 2] = count > 0;
        }
        uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
        void *args[] = {&di, &dout};
        kt_run(&c, "barrier_votes", KT_D1(G), KT_D1((unsigned)B), 0, args);
        kt_get(&c, got, dout, sizeof got);
        KT_EXPECT(&c, B == 96 ? "barrier_votes count/and/or (96 threads)" : "barrier_votes count/and/or (100 threads)",
                  (uint32_t *)got, (uint32_t *)want, 3 * G, 3);
    }
    kt_close(&c);
}
END_TEST

/* ---- sync.cu ----------------------------------------------------------- */

/* named_producer_consumer (bar.arrive 1,128 / bar.sync 1,128) and
 * named_groups (bar.sync 1,64 and 2,64) on one block of 128. */
START_TEST(test_named_barriers)
{
    static int32_t in[128], got[128], want[128];
    for (int t = 0; t < 128; t++)
        in[t] = t * 7 - 300;
    kt_ctx c;
    kt_open(&c, "sync", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    for (int t = 0; t < 64; t++)
        want[t] = (in[t] + 1) * 2;
    kt_run(&c, "named_producer_consumer", KT_D1(1), KT_D1(128), 0, args);
    kt_get(&c, got, dout, 64 * 4);
    KT_EXPECT(&c, "named_producer_consumer", (uint32_t *)got, (uint32_t *)want, 64, 1);
    for (int t = 0; t < 128; t++) {
        int base = t / 64 * 64;
        want[t] = in[base + 63 - (t - base)];
    }
    kt_run(&c, "named_groups", KT_D1(1), KT_D1(128), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "named_groups", (uint32_t *)got, (uint32_t *)want, 128, 1);
    kt_close(&c);
}
END_TEST

/* syncwarp_masks: lanes in a partial mask swap neighbours through shared
 * memory between __syncwarp(mask); 2 blocks of 64. */
START_TEST(test_syncwarp_masks)
{
    enum { T = 128 };
    static int32_t in[T], got[T], want[T];
    unsigned mask = 0x0ff0f0f3u;
    for (int i = 0; i < T; i++)
        in[i] = i * 11 + 5;
    for (int i = 0; i < T; i++) {
        unsigned lane = i & 31, partner = lane ^ 1;
        if (!((mask >> lane) & 1))
            want[i] = -1;
        else
            want[i] = ((mask >> partner) & 1) ? in[(i & ~31) | (int)partner] : in[i];
    }
    kt_ctx c;
    kt_open(&c, "sync", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout, &mask};
    kt_run(&c, "syncwarp_masks", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "syncwarp_masks", (uint32_t *)got, (uint32_t *)want, T, 1);
    kt_close(&c);
}
END_TEST

/* fence_last_block: 6 blocks of 256 publish partial sums; the last block
 * (atomicInc ticket) adds them in block order and resets the counter. */
START_TEST(test_fence_last_block)
{
    enum { N = 1400, G = 6 };
    static float in[N], p[256];
    float want_partial[G], got_partial[G], total = 0, got_total;
    kt_rng r = {10};
    for (int i = 0; i < N; i++)
        in[i] = kt_randf(&r, -4, 4);
    for (int b = 0; b < G; b++) {
        for (int t = 0; t < 256; t++)
            p[t] = b * 256 + t < N ? in[b * 256 + t] : 0.0f;
        want_partial[b] = kt_tree_sum_f32(p, 256);
        total += want_partial[b];
    }
    kt_ctx c;
    kt_open(&c, "sync", _i, 10);
    uint32_t zero = 0, count = 1;
    uint64_t di = kt_buf(&c, in, sizeof in), dp = kt_buf(&c, NULL, sizeof got_partial),
             dc = kt_buf(&c, &zero, 4), dt = kt_buf(&c, NULL, 4);
    int n = N;
    void *args[] = {&di, &dp, &dc, &dt, &n};
    kt_run(&c, "fence_last_block", KT_D1(G), KT_D1(256), 0, args);
    kt_get(&c, got_partial, dp, sizeof got_partial);
    kt_get(&c, &got_total, dt, 4);
    kt_get(&c, &count, dc, 4);
    KT_EXPECT(&c, "fence_last_block partials", (uint32_t *)got_partial, (uint32_t *)want_partial, G, 1);
    KT_EXPECT(&c, "fence_last_block total", (uint32_t *)&got_total, (uint32_t *)&total, 1, 1);
    KT_EXPECT(&c, "fence_last_block count reset", &count, &zero, 1, 1);
    kt_close(&c);
}
END_TEST

/* cp_async_copy (sm_80): cp.async.ca/cg 16-byte copies in commit groups,
 * then out[t] = staged[t] + staged[63 - t] as float4. One block of 64. */
START_TEST(test_cp_async)
{
    static float in[64 * 4], got[64 * 4], want[64 * 4];
    for (int i = 0; i < 256; i++)
        in[i] = (float)(i * 3 - 100) / 8.0f;
    for (int t = 0; t < 64; t++)
        for (int k = 0; k < 4; k++)
            want[4 * t + k] = in[4 * t + k] + in[4 * (63 - t) + k];
    kt_ctx c;
    kt_open(&c, "sync", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    kt_run(&c, "cp_async_copy", KT_D1(1), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "cp_async_copy", (uint32_t *)got, (uint32_t *)want, 256, 4);
    /* pipeline_copy: 3 tiles of 64 floats, double-buffered */
    static float pin[192], pgot[192], pwant[192];
    for (int i = 0; i < 192; i++) {
        pin[i] = (float)(i - 50) * 0.25f;
        pwant[i] = pin[i] * 3.0f;
    }
    int tiles = 3;
    uint64_t pi = kt_buf(&c, pin, sizeof pin), po = kt_buf(&c, NULL, sizeof pgot);
    void *pargs[] = {&pi, &po, &tiles};
    kt_run(&c, "pipeline_copy", KT_D1(1), KT_D1(64), 2 * 64 * sizeof(float), pargs);
    kt_get(&c, pgot, po, sizeof pgot);
    KT_EXPECT(&c, "pipeline_copy", (uint32_t *)pgot, (uint32_t *)pwant, 192, 1);
    kt_close(&c);
}
END_TEST

/* mbarrier_phases (sm_80): two phases of arrive + test_wait on a shared
 * mbarrier for 96 threads. */
START_TEST(test_mbarrier)
{
    enum { B = 96 };
    static int32_t in[B], got[2 * B], want[2 * B];
    for (int t = 0; t < B; t++)
        in[t] = t * t - 40;
    for (int ph = 0; ph < 2; ph++)
        for (int t = 0; t < B; t++)
            want[ph * B + t] = in[(t + 1) % B] * (ph + 1) + in[t] * (ph + 1);
    kt_ctx c;
    kt_open(&c, "sync", _i, 10);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    kt_run(&c, "mbarrier_phases", KT_D1(1), KT_D1(B), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "mbarrier_phases", (uint32_t *)got, (uint32_t *)want, 2 * B, 1);
    kt_close(&c);
}
END_TEST

/* ---- copyprop.cu: what the copy propagation of src/bc/optimize.c must keep */

/* copy_cases: copies whose source or destination is written again, read
 * across a branch, or copied from an immediate (see copyprop.cu). */
START_TEST(test_copy_cases)
{
    enum { N = 128 };
    static uint32_t in[N], got[5 * N], want[5 * N];
    kt_rng r = {27};
    for (int i = 0; i < N; i++) {
        uint32_t a = in[i] = kt_rand(&r) >> 4, odd = (uint32_t)i & 1;
        want[5 * i + 0] = 2 * a + 1;
        want[5 * i + 1] = odd ? 2 * a + 7 : 2 * a;
        want[5 * i + 2] = odd ? 6 : a + 1;
        want[5 * i + 3] = odd ? 4 * a : 2 * a;
        want[5 * i + 4] = 9 * a + 9;
    }
    kt_ctx c;
    kt_open(&c, "copyprop", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    kt_run(&c, "copy_cases", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "copy_cases", got, want, 5 * N, 5);
    kt_close(&c);
}
END_TEST

/* warp_bitcast_sum: a butterfly sum of f32 over each warp by shuffles, with
 * nvcc's mov.b32 bit casts around each (the copies the pass removes); the
 * reference adds in the same order, so the bits agree. */
START_TEST(test_warp_bitcast_sum)
{
    enum { N = 96 };
    static float in[N], got[N], want[N];
    kt_rng r = {28};
    for (int i = 0; i < N; i++)
        in[i] = kt_randf(&r, -100, 100);
    for (int w = 0; w < N / 32; w++) {
        float v[32], n[32];
        memcpy(v, in + 32 * w, sizeof v);
        for (int o = 16; o > 0; o >>= 1) {
            for (int l = 0; l < 32; l++)
                n[l] = v[l] + v[l ^ o];
            memcpy(v, n, sizeof v);
        }
        memcpy(want + 32 * w, v, sizeof v);
    }
    kt_ctx c;
    kt_open(&c, "copyprop", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    kt_run(&c, "warp_bitcast_sum", KT_D1(1), KT_D1(N), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "warp_bitcast_sum", (uint32_t *)got, (uint32_t *)want, N, 1);
    kt_close(&c);
}
END_TEST

/* fusion.cu: the shuffle + max/min/add pairs that run fused (SHFL_FOLD)
 * against a CPU model of each shuffle and op, for full warps, a partial
 * warp (48 threads: the second warp's 16 lanes run the pairs unfused),
 * divergent lanes (a 0xffff member mask inside a branch) and shuffle
 * results read again after the pair. Inputs are floats away from zero
 * and NaN, so that max/min/add of their bits are one host operation. */
static uint32_t kt_fold_src(const uint32_t *a, int mode, unsigned l, unsigned k)
{
    switch (mode) {
    case 0: return a[l ^ k];                     /* bfly */
    case 1: return a[l + k <= 31 ? l + k : l];   /* down */
    case 2: return a[l >= k ? l - k : l];        /* up */
    default: return a[k];                        /* idx */
    }
}
static uint32_t kt_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float kt_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static void kt_fold_run(int _i, unsigned threads)
{
    enum { MAXN = 64 };
    static uint32_t in[MAXN], got[8 * MAXN], want[8 * MAXN], gotd[4 * MAXN], wantd[4 * MAXN];
    kt_rng r = {31};
    for (unsigned i = 0; i < MAXN; i++) {
        float v = kt_randf(&r, 0.5f, 100.0f);
        in[i] = kt_fbits(kt_rand(&r) & 1 ? -v : v);
    }
    for (unsigned w = 0; w * 32 < threads; w++) {
        const uint32_t *a = in + 32 * w;
        for (unsigned l = 0; l < 32 && 32 * w + l < threads; l++) {
            uint32_t x = a[l], *o = want + 8 * (32 * w + l), *od = wantd + 4 * (32 * w + l);
            uint32_t s = kt_fold_src(a, 0, l, 5);
            o[0] = kt_fbits(fmaxf(kt_bitsf(x), kt_bitsf(s)));
            s = kt_fold_src(a, 1, l, 3);
            o[1] = s + x;
            o[2] = s;
            s = kt_fold_src(a, 2, l, 2);
            o[3] = (int32_t)s < (int32_t)x ? s : x;
            s = kt_fold_src(a, 3, l, 7);
            o[4] = kt_fbits(fminf(kt_bitsf(s), kt_bitsf(x)));
            s = kt_fold_src(a, 0, l, 16);
            o[5] = kt_fbits(kt_bitsf(x) + kt_bitsf(s));
            o[6] = kt_fold_src(a, 0, l, 3);
            o[7] = (int32_t)kt_fold_src(a, 0, l, 12) > (int32_t)x;
            if (l < 16) {
                od[0] = kt_fbits(fmaxf(kt_bitsf(x), kt_bitsf(kt_fold_src(a, 0, l, 1))));
                s = kt_fold_src(a, 0, l, 8);
                od[1] = x + s;
                od[2] = s;
                od[3] = kt_fbits(kt_bitsf(kt_fold_src(a, 2, l, 2)) + kt_bitsf(x));
            } else {
                for (int k = 0; k < 4; k++)
                    od[k] = x + (uint32_t)k;
            }
        }
    }
    kt_ctx c;
    kt_open(&c, "fusion", _i, 0);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got), dd = kt_buf(&c, NULL, sizeof gotd);
    void *args[] = {&di, &dout};
    void *argsd[] = {&di, &dd};
    if (threads % 32 == 0) {
        /* fold_full's shuffles read every lane of the warp */
        kt_run(&c, "fold_full", KT_D1(1), KT_D1(threads), 0, args);
        kt_get(&c, got, dout, 8 * threads * sizeof *got);
        KT_EXPECT(&c, "fold_full", got, want, 8 * threads, 8);
    }
    kt_run(&c, "fold_divergent", KT_D1(1), KT_D1(threads), 0, argsd);
    kt_get(&c, gotd, dd, 4 * threads * sizeof *gotd);
    KT_EXPECT(&c, "fold_divergent", gotd, wantd, 4 * threads, 4);
    kt_close(&c);
}

START_TEST(test_fold_full_warps)
{
    kt_fold_run(_i, 64);
}
END_TEST

START_TEST(test_fold_partial_warp)
{
    kt_fold_run(_i, 48);
}
END_TEST

#endif /* KT_BASIC_H */
