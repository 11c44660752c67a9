/* The bit generators of kemu's libcurand: XORWOW, MRG32k3a, Philox4x32-10
 * (see curand_engines.h). Only arithmetic lives here: no CUDA, no I/O.
 *
 * Skip-ahead: XORWOW's xorshift part is linear over GF(2) on 160 bits and
 * MRG32k3a's two components are linear modulo m1 and m2 on three words, so
 * skipping n steps is multiplying by the n-th power of the one-step matrix.
 * The powers M^(2^j) are built once by repeated squaring of the one-step
 * matrix (itself found by stepping unit vectors); a skip multiplies the
 * powers of the set bits of n. Philox is a counter-based generator: a skip is
 * an addition to the counter. */
#include "vendor/curand_engines.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* ---- XORWOW (Marsaglia, "Xorshift RNGs", J. Stat. Soft. 8(14), 2003, p. 5) ---- */

#define XORWOW_WEYL 362437u
#define XORWOW_BITS 160
/* powers M^(2^j), j = 0 .. XORWOW_POWERS-1: offsets use j < 64, subsequences
 * (2^67 steps each) use j >= 67 */
#define XORWOW_POWERS 131

/* a 160x160 GF(2) matrix as the images of the 160 unit vectors */
typedef struct xorwow_matrix {
    uint32_t col[XORWOW_BITS][5];
} xorwow_matrix;

static pthread_once_t xorwow_once = PTHREAD_ONCE_INIT;
static xorwow_matrix xorwow_table[XORWOW_POWERS];

static void xorwow_shift(uint32_t v[5])
{
    uint32_t t = v[0] ^ (v[0] >> 2);
    v[0] = v[1];
    v[1] = v[2];
    v[2] = v[3];
    v[3] = v[4];
    v[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
}

static void xorwow_apply(const xorwow_matrix *m, uint32_t v[5])
{
    uint32_t r[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < XORWOW_BITS; i++)
        if (v[i / 32] >> (i % 32) & 1)
            for (int w = 0; w < 5; w++)
                r[w] ^= m->col[i][w];
    memcpy(v, r, sizeof r);
}

static void xorwow_build(void)
{
    xorwow_matrix *p = xorwow_table;
    for (int i = 0; i < XORWOW_BITS; i++) {
        uint32_t v[5] = {0, 0, 0, 0, 0};
        v[i / 32] = 1u << (i % 32);
        xorwow_shift(v);
        memcpy(p[0].col[i], v, sizeof v);
    }
    for (int j = 1; j < XORWOW_POWERS; j++)
        for (int i = 0; i < XORWOW_BITS; i++) {
            uint32_t v[5];
            memcpy(v, p[j - 1].col[i], sizeof v);
            xorwow_apply(&p[j - 1], v);
            memcpy(p[j].col[i], v, sizeof v);
        }
}

/* skips n * 2^shift steps of the xorshift part */
static void xorwow_jump(curand_xorwow *s, uint64_t n, int shift)
{
    pthread_once(&xorwow_once, xorwow_build);
    for (int j = 0; n; j++, n >>= 1)
        if (n & 1)
            xorwow_apply(&xorwow_table[j + shift], s->v);
}

void curand_xorwow_skip(curand_xorwow *s, uint64_t n)
{
    xorwow_jump(s, n, 0);
    s->d += XORWOW_WEYL * (uint32_t)n;
}

void curand_xorwow_init(curand_xorwow *s, uint64_t seed, uint64_t subsequence, uint64_t offset)
{
    /* the device API's seeding: salted seed halves, multiplied by odd
     * constants, added to / xored into Marsaglia's published start values */
    uint32_t t0 = 1099087573u * ((uint32_t)seed ^ 0xaad26b49u);
    uint32_t t1 = 2591861531u * ((uint32_t)(seed >> 32) ^ 0xf7dcefddu);
    s->d = 6615241u + t1 + t0;
    s->v[0] = 123456789u + t0;
    s->v[1] = 362436069u ^ t0;
    s->v[2] = 521288629u + t1;
    s->v[3] = 88675123u ^ t1;
    s->v[4] = 5783321u + t0;
    /* a subsequence is 2^67 steps: the Weyl counter moves by a multiple of 2^32 */
    xorwow_jump(s, subsequence, 67);
    curand_xorwow_skip(s, offset);
}

uint32_t curand_xorwow_next(curand_xorwow *s)
{
    xorwow_shift(s->v);
    s->d += XORWOW_WEYL;
    return s->v[4] + s->d;
}

/* ---- MRG32k3a (L'Ecuyer, "Good parameters and implementations for combined
 * multiple recursive random number generators", Oper. Res. 47(1), 1999) ---- */

#define MRG_M1 4294967087ull
#define MRG_M2 4294944443ull
#define MRG_A12 1403580ull
#define MRG_A13N 810728ull
#define MRG_A21 527612ull
#define MRG_A23N 1370589ull
#define MRG_POWERS 140 /* A^(2^j); subsequences are 2^76 steps */

typedef uint64_t mrg_matrix[3][3];

static mrg_matrix mrg_pow1[MRG_POWERS], mrg_pow2[MRG_POWERS];
static pthread_once_t mrg_once = PTHREAD_ONCE_INIT;

static void mrg_mul(const mrg_matrix a, const mrg_matrix b, mrg_matrix out, uint64_t m)
{
    mrg_matrix r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            uint64_t sum = 0;
            for (int k = 0; k < 3; k++)
                sum = (sum + a[i][k] * b[k][j] % m) % m; /* entries < 2^32: no overflow */
            r[i][j] = sum;
        }
    memcpy(out, r, sizeof r);
}

static void mrg_build(void)
{
    /* one step on (s[0], s[1], s[2]), oldest first */
    const mrg_matrix a1 = {{0, 1, 0}, {0, 0, 1}, {MRG_M1 - MRG_A13N, MRG_A12, 0}};
    const mrg_matrix a2 = {{0, 1, 0}, {0, 0, 1}, {MRG_M2 - MRG_A23N, 0, MRG_A21}};
    memcpy(mrg_pow1[0], a1, sizeof a1);
    memcpy(mrg_pow2[0], a2, sizeof a2);
    for (int j = 1; j < MRG_POWERS; j++) {
        mrg_mul((const uint64_t(*)[3])mrg_pow1[j - 1], (const uint64_t(*)[3])mrg_pow1[j - 1], mrg_pow1[j], MRG_M1);
        mrg_mul((const uint64_t(*)[3])mrg_pow2[j - 1], (const uint64_t(*)[3])mrg_pow2[j - 1], mrg_pow2[j], MRG_M2);
    }
}

static void mrg_apply(const mrg_matrix a, uint32_t s[3], uint64_t m)
{
    uint64_t r[3];
    for (int i = 0; i < 3; i++) {
        uint64_t sum = 0;
        for (int k = 0; k < 3; k++)
            sum = (sum + a[i][k] * s[k] % m) % m;
        r[i] = sum;
    }
    for (int i = 0; i < 3; i++)
        s[i] = (uint32_t)r[i];
}

static void mrg_jump(curand_mrg *s, uint64_t n, int shift)
{
    pthread_once(&mrg_once, mrg_build);
    for (int j = 0; n; j++, n >>= 1)
        if (n & 1) {
            mrg_apply((const uint64_t(*)[3])mrg_pow1[j + shift], s->s1, MRG_M1);
            mrg_apply((const uint64_t(*)[3])mrg_pow2[j + shift], s->s2, MRG_M2);
        }
}

void curand_mrg_skip(curand_mrg *s, uint64_t n)
{
    mrg_jump(s, n, 0);
}

void curand_mrg_init(curand_mrg *s, uint64_t seed, uint64_t subsequence, uint64_t offset)
{
    for (int i = 0; i < 3; i++)
        s->s1[i] = s->s2[i] = 12345u;
    if (seed) { /* the device API's seeding: salted seed halves times 12345 */
        uint64_t x1 = (uint32_t)seed ^ 0x55555555u;
        uint64_t x2 = (uint32_t)((seed >> 32) ^ 0xaaaaaaaau);
        s->s1[0] = (uint32_t)(x1 * 12345u % MRG_M1);
        s->s1[1] = (uint32_t)(x2 * 12345u % MRG_M1);
        s->s1[2] = (uint32_t)(x1 * 12345u % MRG_M1);
        s->s2[0] = (uint32_t)(x2 * 12345u % MRG_M2);
        s->s2[1] = (uint32_t)(x1 * 12345u % MRG_M2);
        s->s2[2] = (uint32_t)(x2 * 12345u % MRG_M2);
    }
    mrg_jump(s, subsequence, 76); /* a subsequence is 2^76 steps */
    curand_mrg_skip(s, offset);
}

double curand_mrg_next_raw(curand_mrg *s)
{
    int64_t p1 = ((int64_t)(MRG_A12 * s->s1[1]) - (int64_t)(MRG_A13N * s->s1[0])) % (int64_t)MRG_M1;
    if (p1 < 0)
        p1 += (int64_t)MRG_M1;
    s->s1[0] = s->s1[1];
    s->s1[1] = s->s1[2];
    s->s1[2] = (uint32_t)p1;
    int64_t p2 = ((int64_t)(MRG_A21 * s->s2[2]) - (int64_t)(MRG_A23N * s->s2[0])) % (int64_t)MRG_M2;
    if (p2 < 0)
        p2 += (int64_t)MRG_M2;
    s->s2[0] = s->s2[1];
    s->s2[1] = s->s2[2];
    s->s2[2] = (uint32_t)p2;
    return p1 > p2 ? (double)(p1 - p2) : (double)(p1 - p2 + (int64_t)MRG_M1);
}

uint32_t curand_mrg_next(curand_mrg *s)
{
    /* scaled from [1, m1] to the 32-bit range as the device API's curand() does */
    return (uint32_t)(curand_mrg_next_raw(s) * 1.000000048662);
}

/* ---- Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
 * as easy as 1, 2, 3", SC'11) ---- */

void curand_philox_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* adds n to the 128-bit counter, at 32-bit word `word` (0: lowest) */
static void philox_add(uint32_t ctr[4], uint64_t n, int word)
{
    uint64_t carry = n;
    for (int i = word; i < 4 && carry; i++) {
        uint64_t sum = (uint64_t)ctr[i] + (carry & 0xffffffffu);
        ctr[i] = (uint32_t)sum;
        carry = (carry >> 32) + (sum >> 32);
    }
}

void curand_philox_init(curand_philox *s, uint64_t seed, uint64_t subsequence, uint64_t offset)
{
    memset(s, 0, sizeof *s);
    s->key[0] = (uint32_t)seed;
    s->key[1] = (uint32_t)(seed >> 32);
    philox_add(s->ctr, subsequence, 2);
    philox_add(s->ctr, offset / 4, 0);
    s->next = (int)(offset % 4);
    curand_philox_block(s->ctr, s->key, s->out);
}

uint32_t curand_philox_next(curand_philox *s)
{
    uint32_t r = s->out[s->next++];
    if (s->next == 4) {
        philox_add(s->ctr, 1, 0);
        curand_philox_block(s->ctr, s->key, s->out);
        s->next = 0;
    }
    return r;
}

/* ---- the inverse normal distribution function ---- */

/* Abramowitz and Stegun 26.2.23 as the first guess (error below 4.5e-4),
 * then Halley steps on Phi(z) - p with Phi from libm's erfc, which keeps
 * its relative accuracy in the lower tail (erf near the middle); the upper
 * half by symmetry
 * (1 - p is exact for the p this library passes). */
double curand_normcdfinv(double p)
{
    if (!(p > 0 && p < 1))
        return p == 0 ? -HUGE_VAL : p == 1 ? HUGE_VAL : NAN;
    if (p > 0.5)
        return -curand_normcdfinv(1 - p);
    if (p == 0.5)
        return 0;
    double t = sqrt(-2 * log(p));
    double z = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int i = 0; i < 4; i++) {
        /* near the middle Phi(z) - p as erf(z / sqrt 2) / 2 - (p - 1/2),
         * which keeps its relative accuracy where Phi(z) - p cancels */
        double e = p > 0.3 ? 0.5 * erf(z * 0.70710678118654752440) - (p - 0.5)
                           : 0.5 * erfc(-z * 0.70710678118654752440) - p;
        double u = e * 2.50662827463100050242 * exp(z * z / 2);
        z = z - u / (1 + z * u / 2);
    }
    return z;
}
