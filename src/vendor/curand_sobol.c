/* Sobol direction vectors for kemu's libcurand (see curand_engines.h), from
 * Joe and Kuo's direction numbers (new-joe-kuo-6.21201, dimensions 1 to
 * 20000; curand_sobol_data.h, made by gen_sobol_table.py) with the
 * recurrence of Bratley and Fox (ACM TOMS 14(1), 1988, Algorithm 659):
 * m_k = 2 a_1 m_{k-1} ^ 4 a_2 m_{k-2} ^ ... ^ 2^s m_{k-s} ^ m_{k-s}, and
 * direction number k (from 1) is m_k / 2^k, i.e. m_k shifted to the top of
 * the word. Dimension 1 is the van der Corput sequence (every m_k = 1). */
#include "vendor/curand_engines.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/curand_sobol_data.h"

typedef struct sobol_poly {
    unsigned char s;      /* degree */
    uint32_t a;           /* inner coefficients, x^(s-1) term first (most significant) */
    uint32_t m[18];       /* m_1 .. m_s */
} sobol_poly;

static pthread_once_t decode_once = PTHREAD_ONCE_INIT;
static sobol_poly *polys; /* [CURAND_SOBOL_TABLE_DIMS], dimension d at d - 1 */

static int b64(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static void decode(void)
{
    unsigned char *raw = malloc(CURAND_SOBOL_TABLE_BYTES + 3);
    sobol_poly *p = calloc(CURAND_SOBOL_TABLE_DIMS, sizeof *p);
    if (!raw || !p) {
        free(raw), free(p);
        return;
    }
    size_t nraw = 0;
    uint32_t acc = 0;
    int nacc = 0;
    for (const char *c = curand_sobol_table; *c; c++) {
        int v = b64(*c);
        if (v < 0)
            continue; /* '=' padding */
        acc = acc << 6 | (uint32_t)v;
        nacc += 6;
        if (nacc >= 8) {
            nacc -= 8;
            if (nraw < CURAND_SOBOL_TABLE_BYTES)
                raw[nraw++] = (unsigned char)(acc >> nacc);
        }
    }
    size_t pos = 0; /* bit position */
#define TAKE(width, out)                                                           \
    do {                                                                           \
        uint32_t v_ = 0;                                                           \
        for (unsigned k_ = 0; k_ < (width); k_++, pos++)                           \
            v_ = v_ << 1 | (uint32_t)(raw[pos / 8] >> (7 - pos % 8) & 1);          \
        (out) = v_;                                                                \
    } while (0)
    p[0].s = 0; /* dimension 1 */
    for (unsigned d = 1; d < CURAND_SOBOL_TABLE_DIMS; d++) {
        uint32_t s;
        TAKE(5, s);
        p[d].s = (unsigned char)s;
        TAKE(s - 1, p[d].a);
        for (unsigned i = 0; i < s; i++)
            TAKE(i + 1, p[d].m[i]);
    }
#undef TAKE
    free(raw);
    polys = p;
}

/* the table lives as long as the library: freed when it is unloaded */
__attribute__((destructor)) static void free_polys(void)
{
    free(polys);
    polys = NULL;
}

/* m_1 .. m_bits of dimension `dim` (0-based), each < 2^k */
static int sobol_m(unsigned dim, unsigned bits, uint64_t *m)
{
    pthread_once(&decode_once, decode);
    if (!polys || dim >= CURAND_SOBOL_TABLE_DIMS)
        return -1;
    const sobol_poly *p = &polys[dim];
    if (dim == 0) {
        for (unsigned k = 0; k < bits; k++)
            m[k] = 1;
        return 0;
    }
    unsigned s = p->s;
    for (unsigned k = 0; k < bits; k++) {
        if (k < s) {
            m[k] = p->m[k];
            continue;
        }
        uint64_t v = m[k - s] ^ (m[k - s] << s);
        for (unsigned j = 1; j < s; j++)
            if (p->a >> (s - 1 - j) & 1)
                v ^= m[k - j] << j;
        m[k] = v;
    }
    return 0;
}

int curand_sobol_directions32(unsigned dim, uint32_t v[32])
{
    uint64_t m[32];
    if (sobol_m(dim, 32, m))
        return -1;
    for (unsigned k = 0; k < 32; k++)
        v[k] = (uint32_t)(m[k] << (31 - k));
    return 0;
}

int curand_sobol_directions64(unsigned dim, uint64_t v[64])
{
    uint64_t m[64];
    if (sobol_m(dim, 64, m))
        return -1;
    for (unsigned k = 0; k < 64; k++)
        v[k] = m[k] << (63 - k);
    return 0;
}
