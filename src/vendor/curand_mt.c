/* MT19937 for kemu's libcurand (see curand_engines.h): Matsumoto and
 * Nishimura's generator ("Mersenne Twister: a 623-dimensionally
 * equidistributed uniform pseudo-random number generator", ACM TOMACS 8(1),
 * 1998: init_genrand, the twist and the tempering), and jumping ahead by a
 * polynomial of the transition (Haramoto, Matsumoto, Nishimura, Panneton,
 * L'Ecuyer, "Efficient jump ahead for F2-linear random number generators",
 * INFORMS J. Computing 20(3), 2008): the state after N steps is p(T)s where
 * p(x) = x^N mod P(x), P being the characteristic polynomial of the
 * transition T. P is found here by Berlekamp-Massey on the generator's own
 * output bits and x^(2^k) mod P by repeated squaring; the jump of 2^2048
 * steps the host API needs is precomputed this way into
 * curand_mt19937_jump.c (`make regen-curand-tables`). No CUDA, no I/O. */
#include "vendor/curand_engines.h"

#include <stdlib.h>
#include <string.h>

#define MT_N 624
#define MT_M 397
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu
#define MT_MATRIX_A 0x9908b0dfu

void curand_mt19937_init(curand_mt19937 *s, uint32_t seed)
{
    s->mt[0] = seed;
    for (unsigned i = 1; i < MT_N; i++)
        s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + i;
    s->i = 0;
}

/* one step: recomputes the oldest word, which becomes the newest */
static void mt_step(curand_mt19937 *s)
{
    unsigned i = s->i, i1 = i + 1 == MT_N ? 0 : i + 1, im = i + MT_M >= MT_N ? i + MT_M - MT_N : i + MT_M;
    uint32_t y = (s->mt[i] & MT_UPPER) | (s->mt[i1] & MT_LOWER);
    s->mt[i] = s->mt[im] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    s->i = i1;
}

uint32_t curand_mt19937_temper(uint32_t y)
{
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

void curand_mt19937_block(curand_mt19937 *s, uint32_t out[624])
{
    for (unsigned k = 0; k < MT_N; k++) {
        unsigned i = s->i;
        mt_step(s);
        out[k] = curand_mt19937_temper(s->mt[i]);
    }
}

uint32_t curand_mt19937_next(curand_mt19937 *s)
{
    unsigned i = s->i;
    mt_step(s);
    return curand_mt19937_temper(s->mt[i]);
}

/* ---- polynomials over GF(2), bit k of word k/64 the coefficient of x^k ---- */

#define POLY_WORDS CURAND_MT19937_POLY_WORDS /* 19937 + 1 bits */
#define SQ_WORDS (2 * POLY_WORDS)

static int bit(const uint64_t *p, unsigned k) { return (int)(p[k / 64] >> (k % 64) & 1); }

/* the characteristic polynomial of the transition, from 2 * 19937 output
 * bits by Berlekamp-Massey; returns its degree (19937) or -1 */
static int mt_char_poly(uint64_t poly[POLY_WORDS])
{
    enum { NB = 2 * CURAND_MT19937_MEXP + 2 };
    const unsigned nw = (NB + 63) / 64 + 1;
    uint64_t *seq = calloc(nw, 8), *c = calloc(nw, 8), *b = calloc(nw, 8), *t = calloc(nw, 8);
    int degree = -1;
    if (!seq || !c || !b || !t)
        goto out;
    /* the sequence stored reversed: bit j is s[NB - 1 - j] */
    curand_mt19937 s;
    curand_mt19937_init(&s, 5489u);
    for (unsigned n = 0; n < NB; n++) {
        unsigned j = NB - 1 - n;
        seq[j / 64] |= (uint64_t)(curand_mt19937_next(&s) & 1u) << (j % 64);
    }
    c[0] = b[0] = 1;
    unsigned L = 0, m = 1;
    for (unsigned n = 0; n < NB; n++) {
        /* d = sum_{i=0..L} c_i s_{n-i}; s_{n-i} is reversed bit NB-1-n+i */
        unsigned base = NB - 1 - n;
        uint64_t acc = 0;
        for (unsigned w = 0; w * 64 <= L; w++) {
            unsigned off = base + w * 64, q = off / 64, r = off % 64;
            uint64_t v = seq[q] >> r;
            if (r && q + 1 < nw)
                v |= seq[q + 1] << (64 - r);
            uint64_t cw = c[w];
            if ((w + 1) * 64 > L + 1)
                cw &= (L + 1 - w * 64) == 64 ? ~0ull : ((1ull << ((L + 1) - w * 64)) - 1);
            acc ^= cw & v;
        }
        if (!__builtin_parityll(acc)) {
            m++;
            continue;
        }
        int grow = 2 * L <= n;
        if (grow)
            memcpy(t, c, nw * 8);
        /* c ^= x^m b */
        unsigned ws = m / 64, bs = m % 64;
        for (unsigned w = nw; w-- > ws;) {
            uint64_t v = b[w - ws] << bs;
            if (bs && w > ws)
                v |= b[w - ws - 1] >> (64 - bs);
            c[w] ^= v;
        }
        if (grow) {
            L = n + 1 - L;
            memcpy(b, t, nw * 8);
            m = 1;
        } else {
            m++;
        }
    }
    if (L != CURAND_MT19937_MEXP)
        goto out;
    /* P(x) = x^L C(1/x): coefficient k of P is c_{L-k} */
    memset(poly, 0, POLY_WORDS * 8);
    for (unsigned k = 0; k <= L; k++)
        if (bit(c, L - k))
            poly[k / 64] |= 1ull << (k % 64);
    degree = (int)L;
out:
    free(seq), free(c), free(b), free(t);
    return degree;
}

int curand_mt19937_jump_poly(unsigned k, uint64_t out[CURAND_MT19937_POLY_WORDS])
{
    uint64_t *p = calloc(POLY_WORDS, 8), *sq = calloc(SQ_WORDS + 1, 8);
    int ok = -1;
    if (!p || !sq || mt_char_poly(p) != CURAND_MT19937_MEXP)
        goto out;
    memset(out, 0, POLY_WORDS * 8);
    out[0] = 2; /* x */
    for (unsigned r = 0; r < k; r++) {
        memset(sq, 0, (SQ_WORDS + 1) * 8);
        for (unsigned b = 0; b < CURAND_MT19937_MEXP; b++)
            if (bit(out, b))
                sq[(2 * b) / 64] |= 1ull << ((2 * b) % 64);
        for (unsigned top = 2 * (CURAND_MT19937_MEXP - 1); top >= CURAND_MT19937_MEXP; top--) {
            if (!bit(sq, top))
                continue;
            unsigned shift = top - CURAND_MT19937_MEXP, ws = shift / 64, bs = shift % 64;
            for (unsigned w = 0; w < POLY_WORDS; w++) {
                sq[w + ws] ^= p[w] << bs;
                if (bs)
                    sq[w + ws + 1] ^= p[w] >> (64 - bs);
            }
        }
        memcpy(out, sq, POLY_WORDS * 8);
    }
    ok = 0;
out:
    free(p), free(sq);
    return ok;
}

/* ---- applying a jump polynomial to a state ---- */

/* dst[0..n) ^= src[0..n): the time of a jump; vectorized where the
 * compiler can be told to (GCC's -O2 does not vectorize it) */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))
#endif
static void xor_words(uint32_t *restrict dst, const uint32_t *restrict src, unsigned n)
{
    for (unsigned r = 0; r < n; r++)
        dst[r] ^= src[r];
}

/* dst ^= src, word by word in their logical order (oldest first) */
static void mt_add(curand_mt19937 *dst, const curand_mt19937 *src)
{
    unsigned di = dst->i, si = src->i;
    for (unsigned k = 0; k < MT_N;) {
        unsigned run = MT_N - di < MT_N - si ? MT_N - di : MT_N - si;
        if (run > MT_N - k)
            run = MT_N - k;
        xor_words(dst->mt + di, src->mt + si, run);
        k += run;
        di = di + run == MT_N ? 0 : di + run;
        si = si + run == MT_N ? 0 : si + run;
    }
}

#define WINDOW 8

/* p(T)s, Horner's rule over windows of WINDOW coefficients with a table of
 * d(T)s for every polynomial d of degree < WINDOW */
int curand_mt19937_jump(curand_mt19937 *s, const uint64_t poly[CURAND_MT19937_POLY_WORDS])
{
    curand_mt19937 *table = malloc(sizeof *table << WINDOW);
    if (!table)
        return -1;
    curand_mt19937 pow_s[WINDOW]; /* T^j s */
    pow_s[0] = *s;
    for (unsigned j = 1; j < WINDOW; j++) {
        pow_s[j] = pow_s[j - 1];
        mt_step(&pow_s[j]);
    }
    memset(&table[0], 0, sizeof table[0]);
    for (unsigned d = 1; d < 1u << WINDOW; d++) {
        unsigned low = (unsigned)__builtin_ctz(d);
        table[d] = table[d & (d - 1)];
        mt_add(&table[d], &pow_s[low]);
    }
    curand_mt19937 acc;
    memset(&acc, 0, sizeof acc);
    int top = CURAND_MT19937_POLY_WORDS * 64 - 1;
    while (top >= 0 && !bit(poly, (unsigned)top))
        top--;
    unsigned windows = top < 0 ? 0 : (unsigned)top / WINDOW + 1;
    for (unsigned w = windows; w-- > 0;) {
        if (w + 1 < windows)
            for (unsigned j = 0; j < WINDOW; j++)
                mt_step(&acc);
        unsigned d = 0;
        for (unsigned j = 0; j < WINDOW; j++)
            d |= (unsigned)bit(poly, w * WINDOW + j) << j;
        if (d)
            mt_add(&acc, &table[d]);
    }
    /* rotate so that the oldest word is word 0 */
    for (unsigned k = 0; k < MT_N; k++)
        s->mt[k] = acc.mt[(acc.i + k) % MT_N];
    s->i = 0;
    free(table);
    return 0;
}
