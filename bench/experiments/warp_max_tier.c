/* What a compile tier would run for bench's warp_max: each bytecode op of
 * `kemu dis` as its own lane loop over the frame's 64-bit register slots
 * (the interpreter's layout), operands at constant offsets, no dispatch;
 * the guard masks, the divergent store and a per-warp bounds check kept.
 * Same grid and data as bench/suite's warp_max. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define W 32
typedef struct { uint64_t r[64][W]; uint32_t p[16]; } frame;
static inline float F(uint64_t v) { float f; uint32_t u = (uint32_t)v; memcpy(&f, &u, 4); return f; }
static inline uint64_t B(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline uint64_t fmax_ptx(uint64_t a, uint64_t b)
{
    float x = F(a), y = F(b);
    if (x != x) return y != y ? 0x7fffffffu : b;
    if (y != y) return a;
    return B(x > y ? x : y);
}
__attribute__((noinline)) static void warp(frame *f, const float *x, float *out, uint64_t lo, uint64_t hi,
                                           uint32_t n, uint32_t ctaid, uint32_t ntid, uint32_t warpi)
{
    uint64_t (*R)[W] = f->r;
    uint32_t m = 0xffffffffu;
    for (int l = 0; l < W; l++) R[41][l] = (uint64_t)(uintptr_t)x;
    for (int l = 0; l < W; l++) R[42][l] = (uint64_t)(uintptr_t)out;
    for (int l = 0; l < W; l++) R[18][l] = n;
    for (int l = 0; l < W; l++) R[19][l] = ntid;
    for (int l = 0; l < W; l++) R[20][l] = ctaid;
    for (int l = 0; l < W; l++) R[16][l] = warpi * 32 + l;
    for (int l = 0; l < W; l++) R[17][l] = (uint32_t)(R[20][l] * R[19][l] + R[16][l]);
    uint32_t p1 = 0;
    for (int l = 0; l < W; l++) p1 |= (uint32_t)((uint32_t)R[17][l] >= (uint32_t)R[18][l]) << l;
    f->p[1] = p1;
    for (int l = 0; l < W; l++) R[14][l] = 0xff61b1e6u;
    uint32_t g = m & ~p1; /* lanes that load */
    if (g) {
        for (int l = 0; l < W; l++) R[43][l] = R[41][l];
        for (int l = 0; l < W; l++) R[44][l] = (uint64_t)(uint32_t)R[17][l] * 4;
        for (int l = 0; l < W; l++) R[45][l] = R[43][l] + R[44][l];
        uint64_t a0 = R[45][0];
        if (g == 0xffffffffu && a0 >= lo && a0 + 128 <= hi && R[45][31] == a0 + 124) {
            uint32_t v[W];
            memcpy(v, (const void *)(uintptr_t)a0, sizeof v);
            for (int l = 0; l < W; l++) R[14][l] = v[l];
        } else {
            for (int l = 0; l < W; l++)
                if (g >> l & 1) {
                    if (R[45][l] < lo || R[45][l] + 4 > hi) abort();
                    uint32_t v; memcpy(&v, (const void *)(uintptr_t)R[45][l], 4); R[14][l] = v;
                }
        }
    }
    static const int src[5] = {14, 6, 8, 10, 12}, tmp[5] = {25, 28, 31, 34, 37}, dst[5] = {6, 8, 10, 12, 3};
    for (int s = 0, off = 16; s < 5; s++, off >>= 1) {
        for (int l = 0; l < W; l++) R[tmp[s]][l] = R[src[s]][l ^ off];
        for (int l = 0; l < W; l++) R[dst[s]][l] = fmax_ptx(R[src[s]][l], R[tmp[s]][l]);
    }
    for (int l = 0; l < W; l++) R[38][l] = (uint32_t)R[16][l] & 31;
    uint32_t p7 = 0;
    for (int l = 0; l < W; l++) p7 |= (uint32_t)((int32_t)R[38][l] != 0) << l;
    uint32_t p9 = p7 | p1;
    uint32_t st = m & ~p9;
    if (st) { /* the divergent path: the lanes of st only */
        for (int l = 0; l < W; l++) if (st >> l & 1) R[39][l] = (uint32_t)R[17][l] >> 5;
        for (int l = 0; l < W; l++) if (st >> l & 1) R[46][l] = R[42][l];
        for (int l = 0; l < W; l++) if (st >> l & 1) R[47][l] = (uint64_t)(uint32_t)R[39][l] * 4;
        for (int l = 0; l < W; l++) if (st >> l & 1) R[48][l] = R[46][l] + R[47][l];
        for (int l = 0; l < W; l++)
            if (st >> l & 1) {
                uint64_t a = R[48][l];
                if (a < (uint64_t)(uintptr_t)out || a + 4 > (uint64_t)(uintptr_t)out + (n / 32) * 4) abort();
                uint32_t v = (uint32_t)R[3][l]; memcpy((void *)(uintptr_t)a, &v, 4);
            }
    }
}

/* The same warp with what a compile tier knows at compile time: 32-bit
 * registers in 32-bit lanes, straight-line ops between shuffles fused
 * into one lane loop (values in host registers), the same NaN rule. */
static inline float fmax_ptxf(float x, float y)
{
    if (x != x) { if (y != y) { uint32_t u = 0x7fffffffu; float q; memcpy(&q, &u, 4); return q; } return y; }
    if (y != y) return x;
    return x > y ? x : y;
}
__attribute__((noinline)) static void warp2(const float *x, float *out, uint64_t lo, uint64_t hi, uint32_t n,
                                            uint32_t ctaid, uint32_t ntid, uint32_t warpi)
{
    uint32_t idx[W];
    float v[W], t[W];
    uint32_t p1 = 0;
    for (int l = 0; l < W; l++) {
        idx[l] = ctaid * ntid + warpi * 32 + l;
        p1 |= (uint32_t)(idx[l] >= n) << l;
    }
    uint64_t a0 = (uint64_t)(uintptr_t)x + (uint64_t)idx[0] * 4;
    if (!p1 && a0 >= lo && a0 + 128 <= hi)
        memcpy(v, (const void *)(uintptr_t)a0, sizeof v);
    else
        for (int l = 0; l < W; l++) {
            uint64_t a = (uint64_t)(uintptr_t)x + (uint64_t)idx[l] * 4;
            if (p1 >> l & 1) { uint32_t u = 0xff61b1e6u; memcpy(&v[l], &u, 4); continue; }
            if (a < lo || a + 4 > hi) abort();
            memcpy(&v[l], (const void *)(uintptr_t)a, 4);
        }
    for (int off = 16; off; off >>= 1) {
        for (int l = 0; l < W; l++) t[l] = v[l ^ off];
        for (int l = 0; l < W; l++) v[l] = fmax_ptxf(v[l], t[l]);
    }
    if (!(p1 & 1)) {
        uint64_t a = (uint64_t)(uintptr_t)out + (uint64_t)(idx[0] >> 5) * 4;
        if (a < (uint64_t)(uintptr_t)out || a + 4 > (uint64_t)(uintptr_t)out + (n / 32) * 4) abort();
        memcpy((void *)(uintptr_t)a, &v[0], 4);
    }
}
static float frand(unsigned *s) { *s = *s * 1103515245u + 12345u; return (float)(*s >> 8) / 16777216.0f * 2 - 1; }
int main(void)
{
    unsigned blocks = 131072, n = blocks * 256, seed = 1;
    float *x = malloc(n * 4), *out = malloc(n / 32 * 4), *ref = malloc(n / 32 * 4);
    for (unsigned i = 0; i < n; i++) x[i] = frand(&seed);
    frame *f = aligned_alloc(64, sizeof *f);
    memset(f, 0, sizeof *f);
    struct timespec t0, t1;
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        for (unsigned b = 0; b < blocks; b++)
            for (unsigned w = 0; w < 8; w++)
                warp(f, x, out, (uintptr_t)x, (uintptr_t)(x + n), n, b, 256, w);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (s < best) best = s;
    }
    double best2 = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        for (unsigned b = 0; b < blocks; b++)
            for (unsigned w = 0; w < 8; w++)
                warp2(x, out, (uintptr_t)x, (uintptr_t)(x + n), n, b, 256, w);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (s < best2) best2 = s;
    }
    printf("32-bit lanes, fused straight-line segments: %.3f s\n", best2);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (unsigned i = 0; i < n / 32; i++) {
        float v = x[i * 32];
        for (int k = 1; k < 32; k++) v = fmaxf(v, x[i * 32 + k]);
        ref[i] = v;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double nat = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("per-op lane loops, no dispatch: %.3f s; sequential C max: %.4f s; ratio %.1fx; %s\n", best, nat, best / nat,
           memcmp(out, ref, n / 32 * 4) ? "DIFFERS" : "same result");
    return 0;
}
