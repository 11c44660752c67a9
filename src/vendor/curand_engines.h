/* The bit generators behind kemu's libcurand (src/vendor/curand.c), with no
 * CUDA in them: XORWOW (Marsaglia 2003), MRG32k3a (L'Ecuyer 1999) and
 * Philox4x32-10 (Salmon et al. 2011), each seeded, split into subsequences
 * and skipped ahead as cuRAND's device API (curand_kernel.h) documents, so
 * that thread t of the host API's arrangement is the device API's
 * curand_init(seed, t, k). The skip-ahead matrices are computed here, at
 * first use, from the one-step recurrence; no table is taken from
 * elsewhere. Thread-safe: the shared tables are built under pthread_once. */
#ifndef KEMU_CURAND_ENGINES_H
#define KEMU_CURAND_ENGINES_H

#include <stdint.h>

/* one XORWOW stream: Weyl counter d and the five xorshift words */
typedef struct curand_xorwow {
    uint32_t d, v[5];
} curand_xorwow;

/* one MRG32k3a stream: the two three-word component states, oldest first */
typedef struct curand_mrg {
    uint32_t s1[3], s2[3];
} curand_mrg;

/* one Philox4x32-10 stream: 128-bit counter, 64-bit key, the block of four
 * outputs for the counter and the index of the next one to return */
typedef struct curand_philox {
    uint32_t ctr[4], key[2], out[4];
    int next;
} curand_philox;

/* XORWOW: device curand_init(seed, subsequence, offset); subsequences are
 * 2^67 outputs apart */
void curand_xorwow_init(curand_xorwow *s, uint64_t seed, uint64_t subsequence, uint64_t offset);
void curand_xorwow_skip(curand_xorwow *s, uint64_t n);
uint32_t curand_xorwow_next(curand_xorwow *s);

/* MRG32k3a: subsequences are 2^76 outputs apart. next_raw returns the
 * combined value in [1, m1] (the device API's curand_MRG32k3a) */
void curand_mrg_init(curand_mrg *s, uint64_t seed, uint64_t subsequence, uint64_t offset);
void curand_mrg_skip(curand_mrg *s, uint64_t n);
double curand_mrg_next_raw(curand_mrg *s);
uint32_t curand_mrg_next(curand_mrg *s);
/* the device API's scale from [1, m1] to (0, 1] (a little above 1/(m1+1)) */
#define CURAND_MRG_NORM 2.3283065498378288e-10

/* Philox4x32-10: the counter's upper 64 bits select the subsequence (2^66
 * outputs each), the lower 64 bits count blocks of four */
void curand_philox_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
void curand_philox_init(curand_philox *s, uint64_t seed, uint64_t subsequence, uint64_t offset);
uint32_t curand_philox_next(curand_philox *s);

/* MT19937 (Matsumoto and Nishimura 1998): the 624-word state, the index
 * of its oldest word (the next to be recomputed) */
#define CURAND_MT19937_MEXP 19937
#define CURAND_MT19937_POLY_WORDS 312 /* 64-bit words of a polynomial of degree <= 19937 */
typedef struct curand_mt19937 {
    uint32_t mt[624];
    unsigned i;
} curand_mt19937;

/* init_genrand(seed) */
void curand_mt19937_init(curand_mt19937 *s, uint32_t seed);
uint32_t curand_mt19937_temper(uint32_t y);
uint32_t curand_mt19937_next(curand_mt19937 *s);
/* the next 624 outputs, in order */
void curand_mt19937_block(curand_mt19937 *s, uint32_t out[624]);
/* x^(2^k) mod P(x), P the characteristic polynomial of MT19937's
 * transition (found by Berlekamp-Massey); 0, or -1 without memory */
int curand_mt19937_jump_poly(unsigned k, uint64_t out[CURAND_MT19937_POLY_WORDS]);
/* s := p(T)s, i.e. the state N steps on where p = x^N mod P; 0 or -1 */
int curand_mt19937_jump(curand_mt19937 *s, const uint64_t poly[CURAND_MT19937_POLY_WORDS]);
/* x^(2^2048) mod P, precomputed by curand_mt19937_jump_poly
 * (curand_mt19937_jump.c, `make regen-curand-tables`) */
extern const uint64_t curand_mt19937_jump_2048[CURAND_MT19937_POLY_WORDS];

/* MTGP32 (Saito and Matsumoto 2013), Mersenne exponent 11213: the state,
 * and the parameter set (one of Saito and Matsumoto's 200 for 11213,
 * curand_mtgp32_data.h) expanded to its tables */
#define CURAND_MTGP32_N 351     /* state words */
#define CURAND_MTGP32_ROUND 256 /* outputs of one round (a CUDA block's threads) */
typedef struct curand_mtgp32 {
    uint32_t s[CURAND_MTGP32_N];
    uint32_t rec[16], tmp[16];
    unsigned pos, sh1, sh2;
} curand_mtgp32;

/* parameter set `set` (< 200) seeded with `seed` as the reference code's
 * mtgp32_init_state does; 0, or -1 for a set that does not exist */
int curand_mtgp32_init(curand_mtgp32 *s, unsigned set, uint32_t seed);
/* the next 256 outputs, in order */
void curand_mtgp32_round(curand_mtgp32 *s, uint32_t out[CURAND_MTGP32_ROUND]);

/* Sobol direction vectors of dimension `dim` (0-based, < 20000): Joe and
 * Kuo's new-joe-kuo-6.21201 numbers, direction k in word k with its
 * leading bit at 2^(31 - k) (2^(63 - k)); 0, or -1 without memory */
#define CURAND_SOBOL_MAX_DIMS 20000
int curand_sobol_directions32(unsigned dim, uint32_t v[32]);
int curand_sobol_directions64(unsigned dim, uint64_t v[64]);

/* the inverse of the standard normal distribution function, for 0 < p < 1 */
double curand_normcdfinv(double p);

#endif
