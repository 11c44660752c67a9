/* MTGP32 (Saito and Matsumoto, "Variants of Mersenne Twister Suitable for
 * Graphic Processors", ACM TOMS 39(2), 2013) for Mersenne exponent 11213:
 * a 351-word state, one parameter set of curand_mtgp32_data.h per stream,
 * seeded as MTGP's reference code seeds it with one 32-bit word. Written
 * from the published algorithm. */
#include <string.h>

#include "vendor/curand_engines.h"
#include "vendor/curand_mtgp32_data.h"

#define MASK 0xfff80000u /* the state's first word keeps 32 * 351 - 11213 = 19 bits fewer */

/* the 16-entry table whose entry i is the XOR of basis[b] for i's bits b */
static void expand(const uint32_t basis[4], uint32_t out[16])
{
    for (unsigned i = 0; i < 16; i++) {
        uint32_t v = 0;
        for (unsigned b = 0; b < 4; b++)
            if (i >> b & 1)
                v ^= basis[b];
        out[i] = v;
    }
}

int curand_mtgp32_init(curand_mtgp32 *s, unsigned set, uint32_t seed)
{
    if (set >= CURAND_MTGP32_SETS)
        return -1;
    const struct curand_mtgp32_set *p = &curand_mtgp32_sets[set];
    s->pos = p->pos, s->sh1 = p->sh1, s->sh2 = p->sh2;
    expand(p->rec, s->rec);
    expand(p->tmp, s->tmp);
    /* the reference's seeding: a hidden word from the recursion table,
     * every word filled with the byte sum of it, then words 0 and 1 set to
     * the seed and the hidden word and the whole state run through
     * Knuth's multiplier 1812433253 as MT19937's init_genrand does */
    uint32_t hidden = s->rec[4] ^ (s->rec[8] << 16);
    uint32_t t = hidden;
    t += t >> 16;
    t += t >> 8;
    memset(s->s, (int)(t & 0xff), sizeof s->s);
    s->s[0] = seed;
    s->s[1] = hidden;
    for (unsigned i = 1; i < CURAND_MTGP32_N; i++)
        s->s[i] ^= 1812433253u * (s->s[i - 1] ^ (s->s[i - 1] >> 30)) + i;
    return 0;
}

/* the next 256 outputs; state word k + 351 is the recursion of words k,
 * k + 1 and k + pos, and output k tempers it with word k + pos - 1 */
void curand_mtgp32_round(curand_mtgp32 *s, uint32_t out[CURAND_MTGP32_ROUND])
{
    uint32_t w[CURAND_MTGP32_N + CURAND_MTGP32_ROUND];
    memcpy(w, s->s, sizeof s->s);
    for (unsigned k = 0; k < CURAND_MTGP32_ROUND; k++) {
        uint32_t x = (w[k] & MASK) ^ w[k + 1];
        x ^= x << s->sh1;
        uint32_t y = x ^ (w[k + s->pos] >> s->sh2);
        uint32_t r = y ^ s->rec[y & 0x0f];
        w[k + CURAND_MTGP32_N] = r;
        uint32_t v = w[k + s->pos - 1];
        v ^= v >> 16;
        v ^= v >> 8;
        out[k] = r ^ s->tmp[v & 0x0f];
    }
    memcpy(s->s, w + CURAND_MTGP32_ROUND, sizeof s->s);
}
