/* kt_mma_cluster.h - kernel tests: tensor-core matrix multiply and
 * ldmatrix (tests/kernels/mma.cu), thread block clusters with distributed
 * shared memory (tests/kernels/cluster.cu, sm_90).
 *
 * The accumulation order inside mma is unspecified, so the matrices hold
 * small integers: every product and partial sum is exact in the input and
 * accumulator types and the reference (a plain triple loop) is bit-exact
 * in any order. ldmatrix outputs follow the PTX fragment layout: lane l
 * receives row l/4, columns 2(l%4) and 2(l%4)+1 of each 8x8 matrix (the
 * transpose with .trans). Included once, by test_kernels.c only.
 */
#ifndef KT_MMA_CLUSTER_H
#define KT_MMA_CLUSTER_H

#include "kt_harness.h"
#include "kt_ref.h"

/* Fills n small integers in [-3, 3] as f16 (bf16 when bf is set) and
 * their values in vals. */
static void kt_small_matrix(uint16_t *h, float *vals, int n, int bf, uint64_t seed)
{
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        vals[i] = (float)((int)(kt_rand(&r) % 7) - 3);
        h[i] = bf ? kt_to_bf16(vals[i], KT_RN) : kt_to_f16(vals[i], KT_RN);
    }
}

/* D(MxN) = A(MxK, row-major) * B(KxN, B[k][n] = b[k*ldb_k + n*ldb_n]) + C
 * (C may be NULL). */
static void kt_matmul(float *d, const float *a, const float *b, const float *c, int M, int N, int K, int ldb_k,
                      int ldb_n)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float s = c ? c[m * N + n] : 0.0f;
            for (int k = 0; k < K; k++)
                s += a[m * K + k] * b[k * ldb_k + n * ldb_n];
            d[m * N + n] = s;
        }
}

/* wmma 16x16x16: f16 x f16 + f32 (row-major B), f16 x f16 -> f16 with a
 * column-major B, s8 x s8 -> s32. */
START_TEST(test_wmma)
{
    static uint16_t a[256], b[256], dh[256], dhw[256];
    static float av[256], bv[256], cf[256], d[256], dw[256];
    static int8_t sa[256], sb[256];
    static int32_t di[256], diw[256];
    kt_small_matrix(a, av, 256, 0, 100);
    kt_small_matrix(b, bv, 256, 0, 101);
    for (int i = 0; i < 256; i++)
        cf[i] = (float)(i % 9) - 4.0f;
    kt_ctx c;
    kt_open(&c, "mma", _i, 10);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cf, sizeof cf),
             dd = kt_buf(&c, NULL, sizeof d);
    void *args[] = {&da, &db, &dc, &dd};
    kt_matmul(dw, av, bv, cf, 16, 16, 16, 16, 1);
    kt_run(&c, "wmma_f16_f32", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, d, dd, sizeof d);
    KT_EXPECT(&c, "wmma_f16_f32", (uint32_t *)d, (uint32_t *)dw, 256, 16);

    kt_matmul(dw, av, bv, NULL, 16, 16, 16, 1, 16);
    for (int i = 0; i < 256; i++)
        dhw[i] = kt_to_f16(dw[i], KT_RN);
    uint64_t dhd = kt_buf(&c, NULL, sizeof dh);
    void *hargs[] = {&da, &db, &dhd};
    kt_run(&c, "wmma_f16_f16_colb", KT_D1(1), KT_D1(32), 0, hargs);
    kt_get(&c, dh, dhd, sizeof dh);
    KT_EXPECT(&c, "wmma_f16_f16_colb", dh, dhw, 256, 16);

    kt_rng r = {102};
    for (int i = 0; i < 256; i++) {
        sa[i] = (int8_t)kt_rand(&r), sb[i] = (int8_t)kt_rand(&r);
        av[i] = sa[i], bv[i] = sb[i];
    }
    kt_matmul(dw, av, bv, NULL, 16, 16, 16, 16, 1);
    for (int i = 0; i < 256; i++)
        diw[i] = (int32_t)dw[i];
    uint64_t sad = kt_buf(&c, sa, sizeof sa), sbd = kt_buf(&c, sb, sizeof sb), did = kt_buf(&c, NULL, sizeof di);
    void *sargs[] = {&sad, &sbd, &did};
    kt_run(&c, "wmma_s8_s32", KT_D1(1), KT_D1(32), 0, sargs);
    kt_get(&c, di, did, sizeof di);
    KT_EXPECT(&c, "wmma_s8_s32", (uint32_t *)di, (uint32_t *)diw, 256, 16);
    kt_close(&c);
}
END_TEST

/* ldmatrix .x4 (four 8x8 b16 matrices of a 16x16 tile) and .x2.trans. */
START_TEST(test_ldmatrix)
{
    static uint16_t a[256];
    static uint32_t got[128], want[128];
    for (int i = 0; i < 256; i++)
        a[i] = (uint16_t)(i * 257 + 3);
    for (int l = 0; l < 32; l++)
        for (int m = 0; m < 4; m++) {
            int row = l / 4 + 8 * (m & 1), col = 8 * (m >> 1) + 2 * (l % 4);
            want[4 * l + m] = a[row * 16 + col] | (uint32_t)a[row * 16 + col + 1] << 16;
        }
    kt_ctx c;
    kt_open(&c, "mma", _i, 10);
    uint64_t da = kt_buf(&c, a, sizeof a), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&da, &dout};
    kt_run(&c, "ldmatrix_x4", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "ldmatrix_x4 (lane, reg)", got, want, 128, 4);
    for (int l = 0; l < 32; l++)
        for (int m = 0; m < 2; m++) {
            int g = l / 4, q = l % 4;
            want[2 * l + m] = a[(8 * m + 2 * q) * 8 + g] | (uint32_t)a[(8 * m + 2 * q + 1) * 8 + g] << 16;
        }
    dout = kt_buf(&c, NULL, 64 * 4);
    kt_run(&c, "ldmatrix_trans", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, got, dout, 64 * 4);
    KT_EXPECT(&c, "ldmatrix_trans (lane, reg)", got, want, 64, 2);
    kt_close(&c);
}
END_TEST

/* mma.sync m16n8k8 (sm_75+) and m16n8k16 (sm_80+) with f16 inputs and f32
 * accumulators, fragments gathered by the kernel per the PTX layout. */
START_TEST(test_mma_sync)
{
    static uint16_t a[256], b[128];
    static float av[256], bv[128], cf[128], d[128], dw[128];
    kt_small_matrix(a, av, 128, 0, 103);
    kt_small_matrix(b, bv, 64, 0, 104);
    kt_matmul(dw, av, bv, NULL, 16, 8, 8, 8, 1);
    kt_ctx c;
    kt_open(&c, "mma", _i, 10);
    uint64_t da = kt_buf(&c, a, 128 * 2), db = kt_buf(&c, b, 64 * 2), dd = kt_buf(&c, NULL, sizeof d);
    void *args[] = {&da, &db, &dd};
    kt_run(&c, "mma_m16n8k8_f16", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, d, dd, sizeof d);
    KT_EXPECT(&c, "mma_m16n8k8_f16", (uint32_t *)d, (uint32_t *)dw, 128, 8);
    if (_i != KT_SM75) {
        kt_small_matrix(a, av, 256, 0, 105);
        kt_small_matrix(b, bv, 128, 0, 106);
        for (int i = 0; i < 128; i++)
            cf[i] = (float)(i % 5) - 2.0f;
        kt_matmul(dw, av, bv, cf, 16, 8, 16, 8, 1);
        da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b);
        uint64_t dc = kt_buf(&c, cf, sizeof cf);
        dd = kt_buf(&c, NULL, sizeof d);
        void *args2[] = {&da, &db, &dc, &dd};
        kt_run(&c, "mma_m16n8k16_f16", KT_D1(1), KT_D1(32), 0, args2);
        kt_get(&c, d, dd, sizeof d);
        KT_EXPECT(&c, "mma_m16n8k16_f16", (uint32_t *)d, (uint32_t *)dw, 128, 8);
    }
    kt_close(&c);
}
END_TEST

/* wmma bf16 x bf16 + f32 and tf32 (m16n16k8, inputs through
 * __float_to_tf32), sm_80+. */
START_TEST(test_wmma_bf16_tf32)
{
    static uint16_t a[256], b[256];
    static float av[256], bv[256], cf[256], d[256], dw[256];
    kt_small_matrix(a, av, 256, 1, 107);
    kt_small_matrix(b, bv, 256, 1, 108);
    for (int i = 0; i < 256; i++)
        cf[i] = (float)(i % 11) - 5.0f;
    kt_matmul(dw, av, bv, cf, 16, 16, 16, 16, 1);
    kt_ctx c;
    kt_open(&c, "mma", _i, 10);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cf, sizeof cf),
             dd = kt_buf(&c, NULL, sizeof d);
    void *args[] = {&da, &db, &dc, &dd};
    kt_run(&c, "wmma_bf16_f32", KT_D1(1), KT_D1(32), 0, args);
    kt_get(&c, d, dd, sizeof d);
    KT_EXPECT(&c, "wmma_bf16_f32", (uint32_t *)d, (uint32_t *)dw, 256, 16);
    kt_rng r = {109};
    for (int i = 0; i < 128; i++) {
        av[i] = (float)((int)(kt_rand(&r) % 61) - 30) * 0.5f;
        bv[i] = (float)((int)(kt_rand(&r) % 61) - 30) * 0.25f;
    }
    kt_matmul(dw, av, bv, NULL, 16, 16, 8, 16, 1);
    da = kt_buf(&c, av, 128 * 4), db = kt_buf(&c, bv, 128 * 4), dd = kt_buf(&c, NULL, sizeof d);
    void *targs[] = {&da, &db, &dd};
    kt_run(&c, "wmma_tf32_f32", KT_D1(1), KT_D1(32), 0, targs);
    kt_get(&c, d, dd, sizeof d);
    KT_EXPECT(&c, "wmma_tf32_f32", (uint32_t *)d, (uint32_t *)dw, 256, 16);
    kt_close(&c);
}
END_TEST

/* ---- cluster.cu (sm_90) ------------------------------------------------ */

/* cluster_regs (__cluster_dims__(2,1,1) over 4 blocks: the cluster special
 * registers) and cluster_runtime_dims (cluster shape 2 and 3 given at
 * launch). */
START_TEST(test_cluster_regs)
{
    static uint32_t got[32], want[32];
    for (unsigned b = 0; b < 4; b++) {
        uint32_t *w = want + 8 * b;
        w[0] = b % 2, w[1] = 2, w[2] = b / 2, w[3] = 2, w[4] = b % 2, w[5] = 2, w[6] = b, w[7] = 1;
    }
    kt_ctx c;
    kt_open_custom(&c, "cluster", "sm_90.O3", kt_configs[_i].threads, kt_configs[_i].schedule, 10, KEMU_UNINIT_NAN);
    uint64_t dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&dout};
    kt_run(&c, "cluster_regs", KT_D1(4), KT_D1(32), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "cluster_regs (ctarank,nctarank,clusterid,nclusterid,cluster_ctaid,cluster_nctaid,ctaid,explicit)",
              got, want, 32, 8);
    for (unsigned size = 2; size <= 3; size++) {
        for (unsigned b = 0; b < 6; b++)
            want[b] = (b % size) * 100 + size;
        c.cluster[0] = size, c.cluster[1] = 1, c.cluster[2] = 1;
        kt_run(&c, "cluster_runtime_dims", KT_D1(6), KT_D1(64), 0, args);
        kt_get(&c, got, dout, 6 * 4);
        KT_EXPECT(&c, size == 2 ? "cluster_runtime_dims (cluster 2)" : "cluster_runtime_dims (cluster 3)", got, want,
                  6, 1);
    }
    kt_close(&c);
}
END_TEST

/* dsmem_exchange and barrier_split_arrive (read the peer block's shared
 * memory after barrier.cluster) and dsmem_atomic (atomics on rank 0's
 * shared counter from 4 blocks). */
START_TEST(test_cluster_dsmem)
{
    enum { G = 4, B = 128 };
    static int32_t in[G * B], got[G * B], want[G * B];
    kt_rng r = {110};
    for (int i = 0; i < G * B; i++)
        in[i] = (int32_t)(kt_rand(&r) % 100000);
    kt_ctx c;
    kt_open_custom(&c, "cluster", "sm_90.O3", kt_configs[_i].threads, kt_configs[_i].schedule, 10, KEMU_UNINIT_NAN);
    uint64_t di = kt_buf(&c, in, sizeof in), dout = kt_buf(&c, NULL, sizeof got);
    void *args[] = {&di, &dout};
    for (int i = 0; i < G * B; i++) {
        int b = i / B, t = i % B, peer = (b ^ 1) * B + t;
        want[i] = in[peer] + in[i];
    }
    kt_run(&c, "dsmem_exchange", KT_D1(G), KT_D1(B), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "dsmem_exchange", (uint32_t *)got, (uint32_t *)want, G * B, 1);
    for (int i = 0; i < G * B; i++) {
        int b = i / B, t = i % B, peer = (b ^ 1) * B + t;
        want[i] = in[i] * 10 + in[peer];
    }
    kt_run(&c, "barrier_split_arrive", KT_D1(G), KT_D1(B), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "barrier_split_arrive", (uint32_t *)got, (uint32_t *)want, G * B, 1);
    uint32_t counts[2], cwant[2] = {4 * 64, 4 * 64};
    uint64_t dc = kt_buf(&c, NULL, sizeof counts);
    void *aargs[] = {&dc};
    kt_run(&c, "dsmem_atomic", KT_D1(8), KT_D1(64), 0, aargs);
    kt_get(&c, counts, dc, sizeof counts);
    KT_EXPECT(&c, "dsmem_atomic (per cluster)", counts, cwant, 2, 1);
    kt_close(&c);
}
END_TEST

#endif /* KT_MMA_CLUSTER_H */
