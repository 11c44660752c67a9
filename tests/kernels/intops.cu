// Integer corner cases: carries and high halves, shifts by >= the width,
// bit manipulation intrinsics, prmt/bfe/bfi/lop3 via inline asm, sums of
// absolute differences, and division edge cases (x/0, INT_MIN/-1).
// Each kernel maps element i of a, b, c to K results at out[K*i ..].

#include <climits>

// wide_mul: K=8 u64 results from u32 a,b with X=(a<<32|b), Y=(b<<32|a): X+Y (carry across words), __umulhi, __mulhi, __umul64hi(X,Y), __mul64hi(X,Y), __mul24, __umul24, a*b widened.
extern "C" __global__ void wide_mul(const unsigned *a, const unsigned *b, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i];
    unsigned long long X = ((unsigned long long)x << 32) | y, Y = ((unsigned long long)y << 32) | x;
    unsigned long long *o = out + 8 * i;
    o[0] = X + Y;
    o[1] = __umulhi(x, y);
    o[2] = (unsigned)__mulhi((int)x, (int)y);
    o[3] = __umul64hi(X, Y);
    o[4] = (unsigned long long)__mul64hi((long long)X, (long long)Y);
    o[5] = (unsigned)__mul24((int)x, (int)y);
    o[6] = __umul24(x, y);
    o[7] = (unsigned long long)x * y;
}

// add_carry_128: 128-bit sums/differences via add.cc/addc/sub.cc/subc: out[4*i..] = (a+b) lo,hi, (a-b) lo,hi for 128-bit a = a64[2i..2i+1], b likewise.
extern "C" __global__ void add_carry_128(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long al = a[2 * i], ah = a[2 * i + 1], bl = b[2 * i], bh = b[2 * i + 1], sl, sh, dl, dh;
    asm("add.cc.u64 %0, %2, %4;\n\taddc.u64 %1, %3, %5;" : "=l"(sl), "=l"(sh) : "l"(al), "l"(ah), "l"(bl), "l"(bh));
    asm("sub.cc.u64 %0, %2, %4;\n\tsubc.u64 %1, %3, %5;" : "=l"(dl), "=l"(dh) : "l"(al), "l"(ah), "l"(bl), "l"(bh));
    out[4 * i + 0] = sl; out[4 * i + 1] = sh;
    out[4 * i + 2] = dl; out[4 * i + 3] = dh;
}

// shifts_wide: K=6, shift count s=b[i] (may be >= 32): shl.b32, shr.u32, shr.s32 of a[i]; shl.b64, shr.u64, shr.s64 of (a<<32|a); PTX clamps counts.
extern "C" __global__ void shifts_wide(const unsigned *a, const unsigned *b, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], s = b[i], r0, r1, r2;
    unsigned long long X = ((unsigned long long)x << 32) | x, r3, r4, r5;
    asm("shl.b32 %0, %1, %2;" : "=r"(r0) : "r"(x), "r"(s));
    asm("shr.u32 %0, %1, %2;" : "=r"(r1) : "r"(x), "r"(s));
    asm("shr.s32 %0, %1, %2;" : "=r"(r2) : "r"(x), "r"(s));
    asm("shl.b64 %0, %1, %2;" : "=l"(r3) : "l"(X), "r"(s));
    asm("shr.u64 %0, %1, %2;" : "=l"(r4) : "l"(X), "r"(s));
    asm("shr.s64 %0, %1, %2;" : "=l"(r5) : "l"(X), "r"(s));
    unsigned long long *o = out + 6 * i;
    o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3; o[4] = r4; o[5] = r5;
}

// bit_ops: K=12 from a,b,c: brev, popc, clz, ffs, brevll lo, popcll, clzll, ffsll of (a<<32|b), byte_perm(a,b,c), funnelshift_l/r (wrap), funnelshift_lc (clamp) by c.
extern "C" __global__ void bit_ops(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i], z = c[i];
    unsigned long long X = ((unsigned long long)x << 32) | y;
    unsigned *o = out + 12 * i;
    o[0] = __brev(x);
    o[1] = __popc(x);
    o[2] = __clz((int)x);
    o[3] = __ffs((int)x);
    o[4] = (unsigned)__brevll(X);
    o[5] = __popcll(X);
    o[6] = __clzll((long long)X);
    o[7] = __ffsll((long long)X);
    o[8] = __byte_perm(x, y, z);
    o[9] = __funnelshift_l(x, y, z);
    o[10] = __funnelshift_r(x, y, z);
    o[11] = __funnelshift_lc(x, y, z);
}

// bitfield_asm: K=6: bfe.u32 / bfe.s32 of a (pos b&0xff, len c&0xff), bfi.b32 inserting b into a (pos c&0xff, len (c>>8)&0xff), prmt.b32 f4e/b4e/rc8 modes of a,b selector c.
extern "C" __global__ void bitfield_asm(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i], z = c[i], pos = y & 0xff, len = z & 0xff, r[6];
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r[0]) : "r"(x), "r"(pos), "r"(len));
    asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r[1]) : "r"(x), "r"(pos), "r"(len));
    asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[2]) : "r"(y), "r"(x), "r"(z & 0xff), "r"((z >> 8) & 0xff));
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(z));
    asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[4]) : "r"(x), "r"(y), "r"(z));
    asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(y), "r"(z));
    for (int k = 0; k < 6; k++)
        out[6 * i + k] = r[k];
}

// lop3_asm: K=4: lop3.b32 of a,b,c with LUTs 0x96 (xor3), 0xe8 (majority), 0xca (select a?b:c), 0x01 (nor3).
extern "C" __global__ void lop3_asm(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i], z = c[i], r0, r1, r2, r3;
    asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r0) : "r"(x), "r"(y), "r"(z));
    asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r1) : "r"(x), "r"(y), "r"(z));
    asm("lop3.b32 %0, %1, %2, %3, 0xca;" : "=r"(r2) : "r"(x), "r"(y), "r"(z));
    asm("lop3.b32 %0, %1, %2, %3, 0x01;" : "=r"(r3) : "r"(x), "r"(y), "r"(z));
    out[4 * i + 0] = r0; out[4 * i + 1] = r1; out[4 * i + 2] = r2; out[4 * i + 3] = r3;
}

// sad_minmax: K=6: __sad(a,b,c) signed, __usad(a,b,c), abs(a), min/max signed, __hadd (signed average without overflow) of a,b.
extern "C" __global__ void sad_minmax(const int *a, const int *b, const unsigned *c, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    int *o = out + 6 * i;
    o[0] = (int)__sad(x, y, c[i]);
    o[1] = (int)__usad((unsigned)x, (unsigned)y, c[i]);
    o[2] = abs(x);
    o[3] = min(x, y);
    o[4] = max(x, y);
    o[5] = __hadd(x, y);
}

// divide_edges: K=8: s32 a/b, a%b, u32 a/b, a%b, s64 and u64 a/b, a%b (b may be 0; a may be INT_MIN with b = -1). PTX gives defined results.
extern "C" __global__ void divide_edges(const int *a, const int *b, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i], q, r;
    unsigned uq, ur;
    // inline asm so nvcc cannot assume b != 0 or fold the UB away.
    asm("div.s32 %0, %1, %2;" : "=r"(q) : "r"(x), "r"(y));
    asm("rem.s32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(y));
    asm("div.u32 %0, %1, %2;" : "=r"(uq) : "r"(x), "r"(y));
    asm("rem.u32 %0, %1, %2;" : "=r"(ur) : "r"(x), "r"(y));
    long long X = x == INT_MIN ? LLONG_MIN : x, Y = y, q64, r64;
    unsigned long long uq64, ur64;
    asm("div.s64 %0, %1, %2;" : "=l"(q64) : "l"(X), "l"(Y));
    asm("rem.s64 %0, %1, %2;" : "=l"(r64) : "l"(X), "l"(Y));
    asm("div.u64 %0, %1, %2;" : "=l"(uq64) : "l"(X), "l"(Y));
    asm("rem.u64 %0, %1, %2;" : "=l"(ur64) : "l"(X), "l"(Y));
    long long *o = out + 8 * i;
    o[0] = q; o[1] = r; o[2] = uq; o[3] = ur;
    o[4] = q64; o[5] = r64; o[6] = (long long)uq64; o[7] = (long long)ur64;
}

// divide_c: K=4 in plain C (b != 0, no INT_MIN/-1): a/b, a%b, a/7, (unsigned)a%3 + a/-3 (nvcc's constant-divisor mul.hi sequences).
extern "C" __global__ void divide_c(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[4 * i + 0] = a[i] / b[i];
    out[4 * i + 1] = a[i] % b[i];
    out[4 * i + 2] = a[i] / 7;
    out[4 * i + 3] = (unsigned)a[i] % 3u + a[i] / -3;
}
