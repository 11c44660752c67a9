/* kt_intops.h - kernel tests: integer corner cases (tests/kernels/intops.cu).
 *
 * References implement the PTX ISA rules directly in C with unsigned and
 * 128-bit arithmetic (no C undefined behaviour): carries and high halves,
 * shift counts >= the width, bfe/bfi/prmt/lop3 as the ISA defines them,
 * sad, and division by zero giving all ones. Inputs are a fixed list of
 * corner values followed by random ones. Included once, by test_kernels.c.
 */
#ifndef KT_INTOPS_H
#define KT_INTOPS_H

#include "kt_harness.h"

#define KT_INT_N 96

/* Fills a, b, c with corner values first (0, 1, -1, INT_MIN, INT_MAX,
 * shift counts and bit positions around 32/64/255), then random words. */
static void kt_int_inputs(uint32_t *a, uint32_t *b, uint32_t *c, int n, uint64_t seed)
{
    static const uint32_t corner[] = {0, 1, 0xffffffffu, 0x80000000u, 0x7fffffffu, 2, 31, 32, 33, 63, 64, 65,
                                      255, 256, 0xffffff00u, 0x00ffffffu, 0x00800000u, 0x12345678u, 0xdeadbeefu};
    const int nc = (int)(sizeof corner / sizeof corner[0]);
    kt_rng r = {seed};
    for (int i = 0; i < n; i++) {
        if (i < nc * 2) {
            a[i] = corner[i % nc] ^ (i >= nc ? 0x5a5a5a5au : 0);
            b[i] = corner[(i * 7 + 3) % nc];
            c[i] = corner[(i * 5 + 1) % nc];
        } else {
            a[i] = kt_rand(&r);
            b[i] = i % 3 ? kt_rand(&r) : kt_rand(&r) % 80;
            c[i] = i % 4 ? kt_rand(&r) : (kt_rand(&r) % 40) | ((kt_rand(&r) % 40) << 8);
        }
    }
}

/* wide_mul: X+Y with carries, umulhi/mulhi, 64-bit high products, mul24
 * and umul24, the widened product. */
START_TEST(test_wide_mul)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N];
    static uint64_t got[8 * N], want[8 * N];
    kt_int_inputs(a, b, cc, N, 40);
    for (int i = 0; i < N; i++) {
        uint32_t x = a[i], y = b[i];
        uint64_t X = ((uint64_t)x << 32) | y, Y = ((uint64_t)y << 32) | x;
        int32_t sx24 = (int32_t)(x << 8) >> 8, sy24 = (int32_t)(y << 8) >> 8;
        uint64_t *w = want + 8 * i;
        w[0] = X + Y;
        w[1] = (uint32_t)(((uint64_t)x * y) >> 32);
        w[2] = (uint32_t)(((int64_t)(int32_t)x * (int32_t)y) >> 32);
        w[3] = (uint64_t)(((unsigned __int128)X * Y) >> 64);
        w[4] = (uint64_t)(((__int128)(int64_t)X * (int64_t)Y) >> 64);
        w[5] = (uint32_t)((int64_t)sx24 * sy24);
        w[6] = (uint32_t)((uint64_t)(x & 0xffffff) * (y & 0xffffff));
        w[7] = (uint64_t)x * y;
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "wide_mul", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "wide_mul (X+Y,umulhi,mulhi,umul64hi,mul64hi,mul24,umul24,wide)", got, want, 8 * N, 8);
    kt_close(&c);
}
END_TEST

/* add_carry_128: 128-bit sums and differences through add.cc/addc and
 * sub.cc/subc on u64 halves. */
START_TEST(test_add_carry_128)
{
    enum { N = KT_INT_N };
    static uint64_t a[2 * N], b[2 * N], got[4 * N], want[4 * N];
    static uint32_t w0[N], w1[N], w2[N];
    kt_int_inputs(w0, w1, w2, N, 41);
    for (int i = 0; i < N; i++) {
        a[2 * i] = i % 4 == 0 ? UINT64_MAX : ((uint64_t)w0[i] << 32) | w1[i];
        a[2 * i + 1] = ((uint64_t)w2[i] << 32) | w0[i];
        b[2 * i] = i % 4 == 0 ? 1 : i % 4 == 1 ? UINT64_MAX : ((uint64_t)w1[i] << 32) | w2[i];
        b[2 * i + 1] = i % 5 == 0 ? UINT64_MAX : ((uint64_t)w1[i] << 32) | w1[i];
        unsigned __int128 A = ((unsigned __int128)a[2 * i + 1] << 64) | a[2 * i];
        unsigned __int128 B = ((unsigned __int128)b[2 * i + 1] << 64) | b[2 * i];
        unsigned __int128 s = A + B, d = A - B;
        want[4 * i] = (uint64_t)s, want[4 * i + 1] = (uint64_t)(s >> 64);
        want[4 * i + 2] = (uint64_t)d, want[4 * i + 3] = (uint64_t)(d >> 64);
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "add_carry_128", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "add_carry_128 (sum lo,hi, diff lo,hi)", got, want, 4 * N, 4);
    kt_close(&c);
}
END_TEST

/* shifts_wide: shl/shr.u/shr.s on 32 and 64 bits with counts >= width
 * (PTX clamps the count to the width). */
START_TEST(test_shifts_wide)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N];
    static uint64_t got[6 * N], want[6 * N];
    kt_int_inputs(a, b, cc, N, 42);
    for (int i = 0; i < N; i++) {
        uint32_t x = a[i], s = b[i];
        uint64_t X = ((uint64_t)x << 32) | x;
        uint64_t *w = want + 6 * i;
        w[0] = s >= 32 ? 0 : (uint32_t)(x << s);
        w[1] = s >= 32 ? 0 : x >> s;
        w[2] = (uint32_t)(s >= 32 ? ((int32_t)x < 0 ? -1 : 0) : (int32_t)x >> s);
        w[3] = s >= 64 ? 0 : X << s;
        w[4] = s >= 64 ? 0 : X >> s;
        w[5] = (uint64_t)(s >= 64 ? ((int64_t)X < 0 ? -1 : 0) : (int64_t)X >> s);
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "shifts_wide", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "shifts_wide (shl32,shr.u32,shr.s32,shl64,shr.u64,shr.s64)", got, want, 6 * N, 6);
    kt_close(&c);
}
END_TEST

/* The number of set bits of x (reference for popc). */
static int kt_popc64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* The number of leading zero bits of x, 64 for 0 (reference for clz). */
static int kt_clz64(uint64_t x)
{
    int n = 0;
    for (uint64_t m = 1ull << 63; m && !(x & m); m >>= 1)
        n++;
    return n;
}

/* x with its 64 bits in reverse order (reference for brev). */
static uint64_t kt_brev64(uint64_t x)
{
    uint64_t r = 0;
    for (int i = 0; i < 64; i++)
        r |= ((x >> i) & 1) << (63 - i);
    return r;
}

/* Byte k (0..7) of the pair {b:a} (a holds bytes 0..3). */
static uint32_t kt_byte8(uint32_t a, uint32_t b, unsigned k)
{
    return ((k < 4 ? a >> (8 * k) : b >> (8 * (k - 4)))) & 0xff;
}

/* prmt.b32 in default mode ('d') or f4e/b4e/rc8 ('f', 'b', 'r'). */
static uint32_t kt_prmt(uint32_t a, uint32_t b, uint32_t c, char mode)
{
    uint32_t d = 0;
    for (unsigned i = 0; i < 4; i++) {
        unsigned s = c & 3, sel = 0;
        uint32_t byte;
        switch (mode) {
        case 'f': sel = (s + i) & 7; break;
        case 'b': sel = (s - i) & 7; break;
        case 'r': sel = s; break;
        default: sel = (c >> (4 * i)) & 7; break;
        }
        byte = kt_byte8(a, b, sel);
        if (mode == 'd' && ((c >> (4 * i)) & 8))
            byte = (byte & 0x80) ? 0xff : 0;
        d |= byte << (8 * i);
    }
    return d;
}

/* bit_ops: brev/popc/clz/ffs on 32 and 64 bits, __byte_perm, funnel shifts
 * (wrap and clamp). */
START_TEST(test_bit_ops)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N], got[12 * N], want[12 * N];
    kt_int_inputs(a, b, cc, N, 43);
    for (int i = 0; i < N; i++) {
        uint32_t x = a[i], y = b[i], z = cc[i];
        uint64_t X = ((uint64_t)x << 32) | y, pair = ((uint64_t)y << 32) | x;
        uint32_t *w = want + 12 * i;
        w[0] = (uint32_t)(kt_brev64(x) >> 32);
        w[1] = (uint32_t)kt_popc64(x);
        w[2] = (uint32_t)kt_clz64(x) - 32;
        w[3] = x ? (uint32_t)__builtin_ctz(x) + 1 : 0;
        w[4] = (uint32_t)kt_brev64(X);
        w[5] = (uint32_t)kt_popc64(X);
        w[6] = (uint32_t)kt_clz64(X);
        w[7] = X ? (uint32_t)__builtin_ctzll(X) + 1 : 0;
        w[8] = kt_prmt(x, y, z & 0x7777, 'd');
        w[9] = (uint32_t)((pair << (z & 31)) >> 32);
        w[10] = (uint32_t)(pair >> (z & 31));
        w[11] = (z & 0xffffffe0u) ? x : (uint32_t)((pair << z) >> 32);
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "bit_ops", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "bit_ops (brev,popc,clz,ffs,brevll,popcll,clzll,ffsll,byte_perm,shf.l,shf.r,shf.l.clamp)", got,
              want, 12 * N, 12);
    kt_close(&c);
}
END_TEST

/* bfe on 32 bits per PTX: pos = b & 0xff, len = c & 0xff; bit i is
 * a[pos+i] for i < len and pos+i <= 31, else the sign bit sbit. */
static uint32_t kt_bfe32(uint32_t a, uint32_t b, uint32_t c, int is_signed)
{
    unsigned pos = b & 0xff, len = c & 0xff;
    unsigned sbit = 0;
    if (is_signed && len > 0) {
        unsigned top = pos + len - 1 < 31 ? pos + len - 1 : 31;
        sbit = (a >> top) & 1;
    }
    uint32_t d = 0;
    for (unsigned i = 0; i < 32; i++) {
        unsigned bit = (i < len && pos + i <= 31) ? (a >> (pos + i)) & 1 : sbit;
        d |= (uint32_t)bit << i;
    }
    return d;
}

/* bfi on 32 bits per PTX: b with a[0..len) copied to b[pos..] while
 * pos+i <= 31. */
static uint32_t kt_bfi32(uint32_t a, uint32_t b, uint32_t pos, uint32_t len)
{
    pos &= 0xff, len &= 0xff;
    for (unsigned i = 0; i < len && pos + i <= 31; i++)
        b = (b & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
    return b;
}

/* bitfield_asm: bfe.u32/bfe.s32/bfi.b32 with positions and lengths around
 * 0, 31, 32 and 255; prmt.b32 f4e/b4e/rc8. */
START_TEST(test_bitfield)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N], got[6 * N], want[6 * N];
    kt_int_inputs(a, b, cc, N, 44);
    for (int i = 0; i < N; i++) {
        uint32_t x = a[i], y = b[i], z = cc[i];
        uint32_t *w = want + 6 * i;
        w[0] = kt_bfe32(x, y & 0xff, z & 0xff, 0);
        w[1] = kt_bfe32(x, y & 0xff, z & 0xff, 1);
        w[2] = kt_bfi32(y, x, z & 0xff, (z >> 8) & 0xff);
        w[3] = kt_prmt(x, y, z, 'f');
        w[4] = kt_prmt(x, y, z, 'b');
        w[5] = kt_prmt(x, y, z, 'r');
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "bitfield_asm", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "bitfield_asm (bfe.u32,bfe.s32,bfi.b32,prmt.f4e,prmt.b4e,prmt.rc8)", got, want, 6 * N, 6);
    kt_close(&c);
}
END_TEST

/* lop3.b32 per PTX: result bit = bit (a<<2 | b<<1 | c) of the LUT. */
static uint32_t kt_lop3(uint32_t a, uint32_t b, uint32_t c, unsigned lut)
{
    uint32_t d = 0;
    for (int i = 0; i < 32; i++) {
        unsigned idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= (uint32_t)((lut >> idx) & 1) << i;
    }
    return d;
}

/* lop3_asm with LUTs 0x96, 0xe8, 0xca, 0x01; sad_minmax: sad.s32, sad.u32,
 * abs (INT_MIN stays INT_MIN), min/max, the signed __hadd average. */
START_TEST(test_lop3_sad)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N], got[6 * N], want[6 * N];
    static const unsigned luts[4] = {0x96, 0xe8, 0xca, 0x01};
    kt_int_inputs(a, b, cc, N, 45);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 4; k++)
            want[4 * i + k] = kt_lop3(a[i], b[i], cc[i], luts[k]);
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dc = kt_buf(&c, cc, sizeof cc),
             dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dc, &dout, &n};
    kt_run(&c, "lop3_asm", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, 4 * N * 4);
    KT_EXPECT(&c, "lop3_asm (0x96,0xe8,0xca,0x01)", got, want, 4 * N, 4);

    for (int i = 0; i < N; i++) {
        int32_t x = (int32_t)a[i], y = (int32_t)b[i];
        uint32_t *w = want + 6 * i;
        w[0] = cc[i] + (x < y ? (uint32_t)y - (uint32_t)x : (uint32_t)x - (uint32_t)y);
        w[1] = cc[i] + (a[i] < b[i] ? b[i] - a[i] : a[i] - b[i]);
        w[2] = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
        w[3] = (uint32_t)(x < y ? x : y);
        w[4] = (uint32_t)(x > y ? x : y);
        w[5] = (uint32_t)(int32_t)(((int64_t)x + y) >> 1);
    }
    kt_run(&c, "sad_minmax", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "sad_minmax (sad.s32,sad.u32,abs,min,max,hadd)", got, want, 6 * N, 6);
    kt_close(&c);
}
END_TEST

/* divide_edges: div/rem s32, u32, s64, u64 with b = 0 (all ones),
 * INT_MIN / -1 (taken as the wrapped INT_MIN, remainder 0) and ordinary
 * operands (truncating). divide_c: nvcc's constant-divisor sequences. */
START_TEST(test_divide)
{
    enum { N = KT_INT_N };
    static uint32_t a[N], b[N], cc[N];
    static int64_t got[8 * N], want[8 * N];
    kt_int_inputs(a, b, cc, N, 46);
    for (int i = 0; i < N; i++) {
        if (i % 6 == 0)
            b[i] = 0;
        if (i % 11 == 0)
            a[i] = 0x80000000u, b[i] = 0xffffffffu;
        if (i % 13 == 1)
            b[i] = (uint32_t)-(int32_t)(kt_rand(&(kt_rng){(uint64_t)i + 1}) % 100 + 1);
    }
    for (int i = 0; i < N; i++) {
        int32_t x = (int32_t)a[i], y = (int32_t)b[i];
        int64_t X = x == INT32_MIN ? INT64_MIN : x, Y = y;
        int64_t *w = want + 8 * i;
        if (y == 0) {
            w[0] = -1, w[1] = -1, w[2] = 0xffffffffll, w[3] = 0xffffffffll;
            w[4] = -1, w[5] = -1, w[6] = -1, w[7] = -1;
            continue;
        }
        if (x == INT32_MIN && y == -1)
            w[0] = INT32_MIN, w[1] = 0;
        else
            w[0] = x / y, w[1] = x % y;
        w[2] = a[i] / b[i], w[3] = a[i] % b[i];
        if (X == INT64_MIN && Y == -1)
            w[4] = INT64_MIN, w[5] = 0;
        else
            w[4] = X / Y, w[5] = X % Y;
        w[6] = (int64_t)((uint64_t)X / (uint64_t)Y), w[7] = (int64_t)((uint64_t)X % (uint64_t)Y);
    }
    kt_ctx c;
    kt_open(&c, "intops", _i, 0);
    uint64_t da = kt_buf(&c, a, sizeof a), db = kt_buf(&c, b, sizeof b), dout = kt_buf(&c, NULL, sizeof got);
    int n = N;
    void *args[] = {&da, &db, &dout, &n};
    kt_run(&c, "divide_edges", KT_D1(2), KT_D1(64), 0, args);
    kt_get(&c, got, dout, sizeof got);
    KT_EXPECT(&c, "divide_edges (s32 q,r, u32 q,r, s64 q,r, u64 q,r)", (uint64_t *)got, (uint64_t *)want, 8 * N, 8);

    static int32_t ia[N], ib[N], cgot[4 * N], cwant[4 * N];
    for (int i = 0; i < N; i++) {
        ia[i] = (int32_t)a[i] == INT32_MIN ? INT32_MIN + 1 : (int32_t)a[i];
        ib[i] = b[i] == 0 ? 7 : (int32_t)b[i] == -1 ? -3 : (int32_t)b[i];
        cwant[4 * i] = ia[i] / ib[i], cwant[4 * i + 1] = ia[i] % ib[i], cwant[4 * i + 2] = ia[i] / 7;
        cwant[4 * i + 3] = (int32_t)((uint32_t)ia[i] % 3u + (uint32_t)(ia[i] / -3));
    }
    uint64_t ca = kt_buf(&c, ia, sizeof ia), cb = kt_buf(&c, ib, sizeof ib), co = kt_buf(&c, NULL, sizeof cgot);
    void *cargs[] = {&ca, &cb, &co, &n};
    kt_run(&c, "divide_c", KT_D1(2), KT_D1(64), 0, cargs);
    kt_get(&c, cgot, co, sizeof cgot);
    KT_EXPECT(&c, "divide_c (a/b, a%b, a/7, a%3u + a/-3)", (uint32_t *)cgot, (uint32_t *)cwant, 4 * N, 4);
    kt_close(&c);
}
END_TEST

#endif /* KT_INTOPS_H */
