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

#endif
