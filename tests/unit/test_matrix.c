/* Unit tests of the warp-wide matrix instructions (wmma.load/store/mma,
 * mma.sync, ldmatrix, stmatrix) through the public C API. Kernels are
 * generated PTX for every shape and type kemu implements; results are
 * compared with C references (naive matrix products with the rounding
 * kemu documents in src/vm/matrix.c: for f16, bf16 and tf32 the tensor-core
 * accumulation fitted to an H200 (tc_dot), an f32 fma chain in k order
 * otherwise, exact integer sums). mma.sync and ldmatrix/stmatrix
 * fragments are built and checked with the PTX ISA tables written out here
 * independently of the implementation, and the nvcc-compiled kernels of
 * tests/kernels/mma.cu run against references too. The .ptx files are found
 * under $top_srcdir, $srcdir, MATRIX_KERNEL_DIR (a -D define) or ./tests. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"

static kemu_device *dev;

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg = {NULL, 1, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &dev, &err), KEMU_OK);
}

static void teardown(void) { kemu_device_destroy(dev); }

/* ---- helpers ------------------------------------------------------------ */

typedef struct text {
    char buf[24000];
    size_t len;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    ck_assert(n >= 0 && t->len + (size_t)n < sizeof t->buf);
    t->len += (size_t)n;
}

/* "{%a0, %a1, ...}" */
static void put_registers(text *t, const char *prefix, unsigned n)
{
    put(t, "{");
    for (unsigned i = 0; i < n; i++)
        put(t, "%s%%%s%u", i ? ", " : "", prefix, i);
    put(t, "}");
}

static kemu_kernel *load(const char *ptx, const char *name)
{
    kemu_error err;
    kemu_module *m;
    kemu_status st = kemu_module_load_ptx(dev, ptx, strlen(ptx), "test.ptx", &m, &err);
    ck_assert_msg(st == KEMU_OK, "load: %s\n%s", err.message, ptx);
    kemu_kernel *k;
    ck_assert_int_eq(kemu_module_get_kernel(m, name, &k, &err), KEMU_OK);
    return k;
}

static uint64_t upload(const void *data, size_t size)
{
    kemu_error err;
    uint64_t p;
    ck_assert_int_eq(kemu_malloc(dev, size, KEMU_UNINIT_NAN, &p, &err), KEMU_OK);
    if (data)
        ck_assert_int_eq(kemu_memcpy_htod(dev, p, data, size, &err), KEMU_OK);
    return p;
}

static void download(void *dst, uint64_t src, size_t size)
{
    kemu_error err;
    ck_assert_int_eq(kemu_memcpy_dtoh(dev, dst, src, size, &err), KEMU_OK);
}

static void release(uint64_t p)
{
    kemu_error err;
    ck_assert_int_eq(kemu_free(dev, p, &err), KEMU_OK);
}

/* Launches one block; returns the status and the fault message. */
static kemu_status launch(kemu_kernel *k, unsigned threads, void **args, char *fault, size_t cap)
{
    kemu_error err;
    kemu_report r;
    kemu_launch_config lc = {{1, 1, 1}, {threads, 1, 1}, {0, 0, 0}, 0, 0};
    kemu_status st = kemu_launch(k, &lc, args, &r, &err);
    if (fault)
        snprintf(fault, cap, "%s", st == KEMU_OK ? "" : st == KEMU_ERR_KERNEL_FAULT ? r.fault_message : err.message);
    if (st == KEMU_OK || st == KEMU_ERR_KERNEL_FAULT)
        kemu_report_free(&r);
    return st;
}

static void launch_ok(kemu_kernel *k, unsigned threads, void **args)
{
    char msg[2048];
    kemu_status st = launch(k, threads, args, msg, sizeof msg);
    ck_assert_msg(st == KEMU_OK, "launch failed: %s", msg);
}

static uint32_t rng = 12345;
static uint32_t random32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double f64_from_bits(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t f64_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* f16 through the compiler's _Float16 (correctly rounded, independent of kemu). */
static float f16_to_float(uint16_t h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static uint16_t float_to_f16(float f) { _Float16 x = (_Float16)f; uint16_t h; memcpy(&h, &x, 2); return h; }
static float bf16_to_float(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

/* Random values with full mantissas in [1/8, 4) and either sign. */
static uint16_t random_f16(void)
{
    return (uint16_t)((random32() & 0x8000u) | (12u + random32() % 5) << 10 | (random32() & 0x3ffu));
}
static uint16_t random_bf16(void)
{
    return (uint16_t)((random32() & 0x8000u) | (124u + random32() % 5) << 7 | (random32() & 0x7fu));
}
static uint32_t random_f32(void)
{
    return (random32() & 0x80000000u) | (124u + random32() % 5) << 23 | (random32() & 0x7fffffu);
}
static uint64_t random_f64(void)
{
    uint64_t mant = ((uint64_t)random32() << 32 | random32()) & 0xfffffffffffffull;
    return (uint64_t)(random32() & 1) << 63 | (uint64_t)(1020u + random32() % 5) << 52 | mant;
}

static int is_fp8_type(const char *t) { return !strcmp(t, ".e4m3") || !strcmp(t, ".e5m2"); }

static unsigned type_size(const char *t)
{
    if (!strcmp(t, ".s8") || !strcmp(t, ".u8") || is_fp8_type(t)) return 1;
    if (!strcmp(t, ".f16") || !strcmp(t, ".bf16")) return 2;
    if (!strcmp(t, ".f64")) return 8;
    return 4;
}

/* OCP 8-bit floats (the PTX ISA's .e4m3 and .e5m2): e5m2 is the top byte
 * of an f16; e4m3 has bias 7, no infinities, and S.1111.111 for NaN. */
static float fp8_float(const char *t, uint8_t v)
{
    if (!strcmp(t, ".e5m2"))
        return f16_to_float((uint16_t)(v << 8));
    int e = (v >> 3) & 15, m = v & 7;
    if (e == 15 && m == 7)
        return NAN;
    float x = e ? ldexpf(1.0f + m / 8.0f, e - 7) : ldexpf(m / 8.0f, -6);
    return (v & 0x80) ? -x : x;
}

/* A random element of type t (bit pattern). */
static uint64_t random_element(const char *t)
{
    if (!strcmp(t, ".f16")) return random_f16();
    if (!strcmp(t, ".bf16")) return random_bf16();
    if (!strcmp(t, ".tf32") || !strcmp(t, ".f32")) return random_f32();
    if (!strcmp(t, ".f64")) return random_f64();
    if (!strcmp(t, ".s8") || !strcmp(t, ".u8")) return random32() & 0xff;
    if (is_fp8_type(t)) { /* finite values (the special-value test adds the others) */
        uint64_t v;
        do
            v = random32() & 0xff;
        while (!isfinite(fp8_float(t, (uint8_t)v)));
        return v;
    }
    return (uint32_t)(int32_t)((int32_t)(random32() % 2000001u) - 1000000); /* s32 */
}


static float element_float(const char *t, uint64_t bits)
{
    if (is_fp8_type(t)) return fp8_float(t, (uint8_t)bits);
    if (!strcmp(t, ".f16")) return f16_to_float((uint16_t)bits);
    if (!strcmp(t, ".bf16")) return bf16_to_float((uint16_t)bits);
    if (!strcmp(t, ".tf32")) return f32_from_bits((uint32_t)bits & 0xffffe000u); /* low 13 bits ignored */
    return f32_from_bits((uint32_t)bits);
}

static int64_t element_int(const char *t, uint64_t bits)
{
    if (!strcmp(t, ".s8")) return (int8_t)(uint8_t)bits;
    if (!strcmp(t, ".u8")) return (uint8_t)bits;
    return (int32_t)(uint32_t)bits;
}

/* ---- the tensor-core accumulation, written out on integers ---------------
 * (the model of src/vm/matrix.c, fitted to an H200's outputs: products
 * exact, groups of G products with the accumulator in the first, each term
 * truncated toward zero to a multiple of 2^(emax - 25), emax the largest
 * nominal exponent, the group sum rounded toward zero to f32; an f16
 * result rounded once to nearest even). Here every value is an integer
 * significand times a power of two, independently of the implementation's
 * doubles. */
typedef struct {
    int neg, nominal; /* nominal exponent (a subnormal's: its format's minimum) */
    uint64_t mant;    /* value = mant * 2^unit */
    int unit;
} tc_value;

static tc_value tc_decode(const char *t, uint64_t bits)
{
    tc_value v = {0, 0, 0, 0};
    unsigned e, frac_bits, bias;
    uint64_t f;
    if (!strcmp(t, ".f16")) {
        v.neg = (bits >> 15) & 1, e = (bits >> 10) & 31, f = bits & 1023, frac_bits = 10, bias = 15;
    } else if (!strcmp(t, ".bf16")) {
        v.neg = (bits >> 15) & 1, e = (bits >> 7) & 255, f = bits & 127, frac_bits = 7, bias = 127;
    } else { /* f32, tf32 (low 13 bits ignored) */
        uint32_t u = (uint32_t)bits & (!strcmp(t, ".tf32") ? 0xffffe000u : 0xffffffffu);
        v.neg = u >> 31, e = (u >> 23) & 255, f = u & 0x7fffff, frac_bits = 23, bias = 127;
    }
    if (e == 0) {
        v.mant = f, v.nominal = 1 - (int)bias, v.unit = 1 - (int)bias - (int)frac_bits;
    } else {
        v.mant = f | (1ull << frac_bits), v.nominal = (int)e - (int)bias, v.unit = (int)e - (int)bias - (int)frac_bits;
    }
    return v;
}

/* |value| in units of 2^q, truncated */
static int64_t tc_units(const tc_value *v, int q)
{
    int64_t u;
    if (v->unit >= q)
        u = (int64_t)(v->mant << (v->unit - q));
    else
        u = v->unit - q <= -64 ? 0 : (int64_t)(v->mant >> (q - v->unit));
    return v->neg ? -u : u;
}

/* S * 2^q rounded toward zero to f32 */
static uint32_t tc_round_f32(int64_t S, int q)
{
    uint32_t sign = S < 0 ? 0x80000000u : 0;
    uint64_t m = S < 0 ? (uint64_t)-S : (uint64_t)S;
    if (!m)
        return 0;
    int exp = q;
    while (m >= (1ull << 24))
        m >>= 1, exp++;
    while (exp < -149) /* f32 subnormals: fewer bits */
        m >>= 1, exp++;
    if (!m)
        return sign;
    while (m < (1ull << 23) && exp > -149)
        m <<= 1, exp--;
    if (exp + 23 > 127)
        return sign | 0x7f7fffffu; /* toward zero: the largest finite */
    return sign | f32_bits(ldexpf((float)m, exp));
}

/* S * 2^q rounded to nearest even to f16 */
static uint16_t tc_round_f16(int64_t S, int q)
{
    int neg = S < 0;
    uint64_t m = neg ? (uint64_t)-S : (uint64_t)S;
    int exp = q, drop = 0;
    uint64_t t = m;
    while (t >= (1ull << 11))
        t >>= 1, drop++;
    if (exp + drop < -24)
        drop = -24 - exp;
    if (drop > 0) {
        uint64_t rem = drop >= 64 ? m : m & ((1ull << drop) - 1), half = 1ull << (drop - 1);
        uint64_t r = drop >= 64 ? 0 : m >> drop;
        if (rem > half || (rem == half && (r & 1)))
            r++;
        m = r, exp += drop;
    }
    float x = ldexpf((float)m, exp); /* exact: at most 12 bits */
    return float_to_f16(neg ? -x : x);
}

/* One element with f16/bf16/tf32 operands: G products per group. Returns 0
 * and leaves *d alone for NaN and infinite operands (the caller's IEEE
 * chain covers them). */
static int tc_dot(unsigned k, unsigned G, const char *at, const char *bt, const uint64_t *a, const uint64_t *b,
                  unsigned bstride, float c, int to_f16, uint64_t *d)
{
    uint32_t acc = f32_bits(c);
    if (!isfinite(c))
        return 0;
    for (unsigned x = 0; x < k; x++)
        if (!isfinite(element_float(at, a[x])) || !isfinite(element_float(bt, b[x * bstride])))
            return 0;
    for (unsigned x0 = 0; x0 < k; x0 += G) {
        tc_value terms[17];
        unsigned n = 0;
        tc_value av = tc_decode(".f32", acc);
        if (av.mant)
            terms[n++] = av;
        for (unsigned x = x0; x < x0 + G && x < k; x++) {
            tc_value p = tc_decode(at, a[x]), r = tc_decode(bt, b[x * bstride]);
            if (!p.mant || !r.mant)
                continue;
            tc_value prod = {p.neg ^ r.neg, p.nominal + r.nominal, p.mant * r.mant, p.unit + r.unit};
            terms[n++] = prod;
        }
        if (!n) { /* zeros only: IEEE's sign of zero */
            float z = f32_from_bits(acc);
            for (unsigned x = x0; x < x0 + G && x < k; x++)
                z = fmaf(element_float(at, a[x]), element_float(bt, b[x * bstride]), z);
            acc = f32_bits(z);
            continue;
        }
        int emax = terms[0].nominal;
        for (unsigned i = 1; i < n; i++)
            if (terms[i].nominal > emax)
                emax = terms[i].nominal;
        int q = emax - 25;
        int64_t S = 0;
        for (unsigned i = 0; i < n; i++)
            S += tc_units(&terms[i], q);
        if (to_f16 && x0 + G >= k) {
            *d = tc_round_f16(S, q);
            return 1;
        }
        acc = tc_round_f32(S, q);
    }
    *d = to_f16 ? float_to_f16(f32_from_bits(acc)) : acc;
    return 1;
}

/* D = A*B + C on logical row-major element arrays, with kemu's documented
 * rounding. Returns D's bit patterns. */
static void reference(unsigned m, unsigned n, unsigned k, const char *dt, const char *at, const char *bt,
                      const char *ct, const uint64_t *a, const uint64_t *b, const uint64_t *c, int satfinite,
                      uint64_t *d)
{
    for (unsigned i = 0; i < m; i++)
        for (unsigned j = 0; j < n; j++) {
            if (!strcmp(at, ".f64")) {
                double acc = f64_from_bits(c[i * n + j]);
                for (unsigned x = 0; x < k; x++)
                    acc = fma(f64_from_bits(a[i * k + x]), f64_from_bits(b[x * n + j]), acc);
                d[i * n + j] = f64_bits(acc);
            } else if (!strcmp(at, ".s8") || !strcmp(at, ".u8")) {
                int64_t acc = element_int(ct, c[i * n + j]);
                for (unsigned x = 0; x < k; x++)
                    acc += element_int(at, a[i * k + x]) * element_int(bt, b[x * n + j]);
                if (satfinite)
                    acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                d[i * n + j] = (uint32_t)acc;
            } else {
                float acc = element_float(ct, c[i * n + j]);
                unsigned G = !strcmp(at, ".tf32") ? 4 : (!strcmp(at, ".f16") || !strcmp(at, ".bf16")) ? (k < 16 ? k : 16) : 0;
                uint64_t out = 0;
                if (G && tc_dot(k, G, at, bt, a + i * k, b + j, n, acc, !strcmp(dt, ".f16"), &out)) {
                    if (!strcmp(dt, ".f16") && satfinite && (out & 0x7fff) == 0x7c00)
                        out = (out & 0x8000) | 0x7bff;
                    d[i * n + j] = out;
                    continue;
                }
                for (unsigned x = 0; x < k; x++)
                    acc = fmaf(element_float(at, a[i * k + x]), element_float(bt, b[x * n + j]), acc);
                if (!strcmp(dt, ".f16")) {
                    uint16_t h = acc != acc ? 0x7fff : float_to_f16(acc);
                    if (satfinite && (h & 0x7fff) == 0x7c00)
                        h = (uint16_t)((h & 0x8000) | 0x7bff);
                    d[i * n + j] = h;
                } else {
                    d[i * n + j] = acc != acc ? 0x7fffffffu : f32_bits(acc);
                }
            }
        }
}

static uint64_t read_element(const uint8_t *buf, size_t index, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, buf + index * size, size);
    return v;
}

static void write_element(uint8_t *buf, size_t index, unsigned size, uint64_t v)
{
    memcpy(buf + index * size, &v, size);
}

/* ---- wmma ---------------------------------------------------------------- */

typedef struct wmma_case {
    unsigned m, n, k;
    const char *atype, *dtype, *ctype; /* btype = atype */
    int a_col, b_col, c_col, d_col;
    unsigned extra;    /* padding added to each leading dimension, in elements */
    const char *space; /* "global", "shared" or "" (generic) */
    int satfinite;
} wmma_case;

/* Registers per lane of a wmma fragment (PTX ISA wmma.load tables). */
static unsigned wmma_registers(const char *type, unsigned rows, unsigned cols, int multiplicand)
{
    if (multiplicand && !strcmp(type, ".f16"))
        return 8;
    unsigned per = type_size(type) == 8 ? 1 : 4 / type_size(type);
    return rows * cols / 32 / per;
}

/* A matrix in memory: logical rows x cols, column-major or not, leading
 * dimension ld. */
typedef struct stored_matrix {
    unsigned rows, cols, ld, size;
    int col;
    uint8_t *data;
    size_t bytes;
} stored_matrix;

static void stored_init(stored_matrix *s, unsigned rows, unsigned cols, int col, unsigned extra, const char *type)
{
    s->rows = rows;
    s->cols = cols;
    s->col = col;
    s->ld = (col ? rows : cols) + extra;
    s->size = type_size(type);
    s->bytes = (size_t)(col ? cols : rows) * s->ld * s->size;
    s->data = malloc(s->bytes);
    ck_assert_ptr_nonnull(s->data);
}

static size_t stored_index(const stored_matrix *s, unsigned i, unsigned j)
{
    return s->col ? (size_t)j * s->ld + i : (size_t)i * s->ld + j;
}

static void copy_loop(text *t, const char *tag, unsigned reg, const char *shared, size_t bytes)
{
    put(t, " mov.u32 %%t1, %%tid.x;\n$L%s:\n setp.ge.u32 %%pr, %%t1, %zu;\n @%%pr bra $L%s_done;\n"
           " cvt.u64.u32 %%q1, %%t1;\n add.s64 %%q2, %%p%u, %%q1;\n ld.global.u8 %%t2, [%%q2];\n"
           " mov.u32 %%t3, %s;\n add.s32 %%t3, %%t3, %%t1;\n st.shared.u8 [%%t3], %%t2;\n"
           " add.s32 %%t1, %%t1, 32;\n bra $L%s;\n$L%s_done:\n",
        tag, bytes, tag, reg, shared, tag, tag);
}

static void run_wmma_case(const wmma_case *w)
{
    char name[160];
    snprintf(name, sizeof name, "m%un%uk%u a%s%s b%s d%s%s c%s%s %s+%u%s", w->m, w->n, w->k, w->atype,
             w->a_col ? "col" : "row", w->b_col ? "col" : "row", w->dtype, w->d_col ? "col" : "row", w->ctype,
             w->c_col ? "col" : "row", w->space[0] ? w->space : "generic", w->extra, w->satfinite ? " satfinite" : "");
    stored_matrix sa, sb, sc, sd;
    stored_init(&sa, w->m, w->k, w->a_col, w->extra, w->atype);
    stored_init(&sb, w->k, w->n, w->b_col, w->extra, w->atype);
    stored_init(&sc, w->m, w->n, w->c_col, w->extra, w->ctype);
    stored_init(&sd, w->m, w->n, w->d_col, w->extra, w->dtype);
    for (size_t i = 0; i < sa.bytes / sa.size; i++) write_element(sa.data, i, sa.size, random_element(w->atype));
    for (size_t i = 0; i < sb.bytes / sb.size; i++) write_element(sb.data, i, sb.size, random_element(w->atype));
    for (size_t i = 0; i < sc.bytes / sc.size; i++) {
        uint64_t v = random_element(w->ctype);
        if (w->satfinite && !strcmp(w->ctype, ".s32"))
            v = (uint32_t)(i % 2 ? INT32_MAX - (int32_t)(random32() % 1000) : INT32_MIN + (int32_t)(random32() % 1000));
        write_element(sc.data, i, sc.size, v);
    }
    memset(sd.data, 0xab, sd.bytes);
    unsigned na = wmma_registers(w->atype, w->m, w->k, 1), nb = wmma_registers(w->atype, w->k, w->n, 1);
    unsigned nc = wmma_registers(w->ctype, w->m, w->n, 0), nd = wmma_registers(w->dtype, w->m, w->n, 0);
    int shared = !strcmp(w->space, "shared");
    const char *wide_ab = !strcmp(w->atype, ".f64") ? ".b64" : ".b32";
    const char *wide_cd = !strcmp(w->ctype, ".f64") ? ".b64" : ".b32";
    static text t;
    t.len = 0;
    put(&t, ".version 8.0\n.target sm_80\n.address_size 64\n"
            ".visible .entry wmma_test(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd,"
            " .param .u32 sa, .param .u32 sb, .param .u32 sc, .param .u32 sd)\n{\n");
    put(&t, " .reg %s %%a<%u>;\n .reg %s %%b<%u>;\n .reg %s %%c<%u>;\n .reg %s %%d<%u>;\n", wide_ab, na, wide_ab, nb,
        wide_cd, nc, wide_cd, nd);
    put(&t, " .reg .b32 %%s<4>;\n .reg .b64 %%p<4>;\n .reg .b32 %%t<4>;\n .reg .b64 %%q<3>;\n .reg .b32 %%u<3>;\n"
            " .reg .pred %%pr;\n");
    if (shared)
        put(&t, " .shared .align 32 .b8 sma[%zu];\n .shared .align 32 .b8 smb[%zu];\n .shared .align 32 .b8 smc[%zu];\n",
            sa.bytes, sb.bytes, sc.bytes);
    put(&t, " ld.param.u64 %%p0, [pa];\n ld.param.u64 %%p1, [pb];\n ld.param.u64 %%p2, [pc];\n ld.param.u64 %%p3, [pd];\n"
            " ld.param.u32 %%s0, [sa];\n ld.param.u32 %%s1, [sb];\n ld.param.u32 %%s2, [sc];\n ld.param.u32 %%s3, [sd];\n");
    if (w->space[0])
        put(&t, " cvta.to.global.u64 %%p0, %%p0;\n cvta.to.global.u64 %%p1, %%p1;\n"
                " cvta.to.global.u64 %%p2, %%p2;\n cvta.to.global.u64 %%p3, %%p3;\n");
    if (shared) {
        copy_loop(&t, "ca", 0, "sma", sa.bytes);
        copy_loop(&t, "cb", 1, "smb", sb.bytes);
        copy_loop(&t, "cc", 2, "smc", sc.bytes);
        put(&t, " bar.sync 0;\n mov.u32 %%u0, sma;\n mov.u32 %%u1, smb;\n mov.u32 %%u2, smc;\n");
    }
    const char *space = shared ? ".shared" : !strcmp(w->space, "global") ? ".global" : "";
    char shape[32];
    snprintf(shape, sizeof shape, ".m%un%uk%u", w->m, w->n, w->k);
    const char *lay[2] = {".row", ".col"};
    const char *adr[3][2] = {{"[%p0]", "[%u0]"}, {"[%p1]", "[%u1]"}, {"[%p2]", "[%u2]"}};
    put(&t, " wmma.load.a.sync.aligned%s%s%s%s ", lay[w->a_col], shape, space, w->atype);
    put_registers(&t, "a", na);
    put(&t, ", %s, %%s0;\n wmma.load.b.sync.aligned%s%s%s%s ", adr[0][shared], lay[w->b_col], shape, space, w->atype);
    put_registers(&t, "b", nb);
    put(&t, ", %s, %%s1;\n wmma.load.c.sync.aligned%s%s%s%s ", adr[1][shared], lay[w->c_col], shape, space, w->ctype);
    put_registers(&t, "c", nc);
    put(&t, ", %s, %%s2;\n", adr[2][shared]);
    if (!strcmp(w->atype, ".f16"))
        put(&t, " wmma.mma.sync.aligned%s%s%s%s%s%s ", lay[w->a_col], lay[w->b_col], shape, w->dtype, w->ctype,
            w->satfinite ? ".satfinite" : "");
    else
        put(&t, " wmma.mma.sync.aligned%s%s%s%s%s%s%s%s ", lay[w->a_col], lay[w->b_col], shape, w->dtype, w->atype,
            w->atype, w->ctype, w->satfinite ? ".satfinite" : "");
    put_registers(&t, "d", nd);
    put(&t, ", ");
    put_registers(&t, "a", na);
    put(&t, ", ");
    put_registers(&t, "b", nb);
    put(&t, ", ");
    put_registers(&t, "c", nc);
    put(&t, ";\n wmma.store.d.sync.aligned%s%s%s%s [%%p3], ", lay[w->d_col], shape, w->space[0] ? ".global" : "",
        w->dtype);
    put_registers(&t, "d", nd);
    put(&t, ", %%s3;\n ret;\n}\n");
    kemu_kernel *kern = load(t.buf, "wmma_test");
    uint64_t da = upload(sa.data, sa.bytes), db = upload(sb.data, sb.bytes), dc = upload(sc.data, sc.bytes),
             dd = upload(sd.data, sd.bytes);
    void *args[] = {&da, &db, &dc, &dd, &sa.ld, &sb.ld, &sc.ld, &sd.ld};
    launch_ok(kern, 32, args);
    uint8_t *out = malloc(sd.bytes);
    ck_assert_ptr_nonnull(out);
    download(out, dd, sd.bytes);
    /* logical matrices and the reference */
    uint64_t *a = calloc((size_t)w->m * w->k, 8), *b = calloc((size_t)w->k * w->n, 8);
    uint64_t *c = calloc((size_t)w->m * w->n, 8), *d = calloc((size_t)w->m * w->n, 8);
    ck_assert(a && b && c && d);
    for (unsigned i = 0; i < w->m; i++)
        for (unsigned x = 0; x < w->k; x++)
            a[i * w->k + x] = read_element(sa.data, stored_index(&sa, i, x), sa.size);
    for (unsigned x = 0; x < w->k; x++)
        for (unsigned j = 0; j < w->n; j++)
            b[x * w->n + j] = read_element(sb.data, stored_index(&sb, x, j), sb.size);
    for (unsigned i = 0; i < w->m; i++)
        for (unsigned j = 0; j < w->n; j++)
            c[i * w->n + j] = read_element(sc.data, stored_index(&sc, i, j), sc.size);
    reference(w->m, w->n, w->k, w->dtype, w->atype, w->atype, w->ctype, a, b, c, w->satfinite, d);
    size_t written = 0;
    for (unsigned i = 0; i < w->m; i++)
        for (unsigned j = 0; j < w->n; j++) {
            uint64_t got = read_element(out, stored_index(&sd, i, j), sd.size);
            ck_assert_msg(got == d[i * w->n + j], "%s: D[%u][%u] = 0x%llx, want 0x%llx", name, i, j,
                          (unsigned long long)got, (unsigned long long)d[i * w->n + j]);
            written++;
        }
    /* the padding between rows is untouched */
    size_t padding = 0;
    for (size_t x = 0; x < sd.bytes; x++)
        padding += out[x] == 0xab;
    ck_assert_msg(padding >= sd.bytes - written * sd.size, "%s: the store wrote outside the matrix", name);
    release(da);
    release(db);
    release(dc);
    release(dd);
    free(a); free(b); free(c); free(d); free(out);
    free(sa.data); free(sb.data); free(sc.data); free(sd.data);
}

static const unsigned shapes16[3][3] = {{16, 16, 16}, {32, 8, 16}, {8, 32, 16}};
static const char *const spaces[3] = {"global", "shared", ""};

/* f16 multiplicands, every accumulator combination, every layout. */
START_TEST(wmma_f16_all_layouts)
{
    static const char *const acc[4][2] = {{".f32", ".f32"}, {".f16", ".f16"}, {".f16", ".f32"}, {".f32", ".f16"}};
    unsigned run = 0;
    for (int s = 0; s < 3; s++)
        for (int a = 0; a < 4; a++)
            for (int lay = 0; lay < 16; lay++) {
                if (a > 0 && lay % 5 != 0)
                    continue; /* every layout for f32/f32, a sample for the others */
                wmma_case w = {shapes16[s][0], shapes16[s][1], shapes16[s][2], ".f16", acc[a][0], acc[a][1],
                               lay & 1, (lay >> 1) & 1, (lay >> 2) & 1, (lay >> 3) & 1, 8 * (run % 3),
                               spaces[run % 3], 0};
                run_wmma_case(&w);
                run++;
            }
}
END_TEST

START_TEST(wmma_bf16_tf32_f64)
{
    unsigned run = 0;
    for (int s = 0; s < 3; s++)
        for (int lay = 0; lay < 16; lay += 3) {
            wmma_case w = {shapes16[s][0], shapes16[s][1], shapes16[s][2], ".bf16", ".f32", ".f32",
                           lay & 1, (lay >> 1) & 1, (lay >> 2) & 1, (lay >> 3) & 1, 8 * (run % 3), spaces[run % 3], 0};
            run_wmma_case(&w);
            run++;
        }
    for (int lay = 0; lay < 16; lay += 3) {
        wmma_case w = {16, 16, 8, ".tf32", ".f32", ".f32", lay & 1, (lay >> 1) & 1, (lay >> 2) & 1, (lay >> 3) & 1,
                       4 * (run % 3), spaces[run % 3], 0};
        run_wmma_case(&w);
        wmma_case d = {8, 8, 4, ".f64", ".f64", ".f64", lay & 1, (lay >> 1) & 1, (lay >> 2) & 1, (lay >> 3) & 1,
                       2 * (run % 3), spaces[run % 3], 0};
        run_wmma_case(&d);
        run++;
    }
}
END_TEST

START_TEST(wmma_int8)
{
    static const char *const types[2] = {".s8", ".u8"};
    unsigned run = 0;
    for (int s = 0; s < 3; s++)
        for (int ty = 0; ty < 2; ty++)
            for (int lay = 0; lay < 16; lay += 5) {
                for (int sat = 0; sat < 2; sat++) {
                    wmma_case w = {shapes16[s][0], shapes16[s][1], shapes16[s][2], types[ty], ".s32", ".s32",
                                   lay & 1, (lay >> 1) & 1, (lay >> 2) & 1, (lay >> 3) & 1, 16 * (run % 3),
                                   spaces[run % 3], sat};
                    run_wmma_case(&w);
                }
                run++;
            }
}
END_TEST

/* wmma.mma.f64 with .rz: each step of 1 + 0.75 ulp rounds down, where
 * .rn rounds up. */
START_TEST(wmma_f64_rounding_modes)
{
    static const char *const modes[2] = {"", ".rz"};
    for (int mode = 0; mode < 2; mode++) {
        text t = {.len = 0};
        put(&t, ".version 8.0\n.target sm_80\n.address_size 64\n"
                ".visible .entry f(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                " .reg .f64 %%a<1>;\n .reg .f64 %%b<1>;\n .reg .f64 %%c<2>;\n .reg .f64 %%d<2>;\n .reg .b64 %%p<4>;\n"
                " ld.param.u64 %%p0, [pa];\n ld.param.u64 %%p1, [pb];\n ld.param.u64 %%p2, [pc];\n ld.param.u64 %%p3, [pd];\n"
                " wmma.load.a.sync.aligned.row.m8n8k4.f64 {%%a0}, [%%p0];\n"
                " wmma.load.b.sync.aligned.row.m8n8k4.f64 {%%b0}, [%%p1];\n"
                " wmma.load.c.sync.aligned.row.m8n8k4.f64 {%%c0, %%c1}, [%%p2];\n"
                " wmma.mma.sync.aligned.row.row.m8n8k4%s.f64.f64.f64.f64 {%%d0, %%d1}, {%%a0}, {%%b0}, {%%c0, %%c1};\n"
                " wmma.store.d.sync.aligned.row.m8n8k4.f64 [%%p3], {%%d0, %%d1};\n ret;\n}\n",
            modes[mode]);
        kemu_kernel *k = load(t.buf, "f");
        double a[32], b[32], c[64], d[64];
        for (int i = 0; i < 32; i++) {
            a[i] = 0.75 * ldexp(1.0, -52);
            b[i] = 1.0;
        }
        for (int i = 0; i < 64; i++)
            c[i] = 1.0;
        uint64_t da = upload(a, sizeof a), db = upload(b, sizeof b), dc = upload(c, sizeof c), dd = upload(NULL, sizeof d);
        void *args[] = {&da, &db, &dc, &dd};
        launch_ok(k, 32, args);
        download(d, dd, sizeof d);
        double want = mode == 0 ? 1.0 + 4 * ldexp(1.0, -52) : 1.0;
        for (int i = 0; i < 64; i++)
            ck_assert_msg(d[i] == want, "mode %s: d[%d] = %a, want %a", modes[mode], i, d[i], want);
    }
}
END_TEST

/* .satfinite on float results: f16 overflow gives +-MAX_NORM instead of
 * +-inf, an infinite f32 accumulator gives +-FLT_MAX; NaN stays NaN. */
START_TEST(wmma_satfinite_float)
{
    for (int f32 = 0; f32 < 2; f32++)
        for (int sat = 0; sat < 2; sat++) {
            text t = {.len = 0};
            put(&t, ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry sf(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                    " .reg .b32 %%a<8>;\n .reg .b32 %%b<8>;\n .reg .b32 %%c<8>;\n .reg .b32 %%d<8>;\n .reg .b64 %%p<4>;\n"
                    " ld.param.u64 %%p0, [pa];\n ld.param.u64 %%p1, [pb];\n ld.param.u64 %%p2, [pc];\n"
                    " ld.param.u64 %%p3, [pd];\n"
                    " wmma.load.a.sync.aligned.row.m16n16k16.f16 {%%a0,%%a1,%%a2,%%a3,%%a4,%%a5,%%a6,%%a7}, [%%p0];\n"
                    " wmma.load.b.sync.aligned.row.m16n16k16.f16 {%%b0,%%b1,%%b2,%%b3,%%b4,%%b5,%%b6,%%b7}, [%%p1];\n"
                    " wmma.load.c.sync.aligned.row.m16n16k16.f32 {%%c0,%%c1,%%c2,%%c3,%%c4,%%c5,%%c6,%%c7}, [%%p2];\n"
                    " wmma.mma.sync.aligned.row.row.m16n16k16%s.f32%s ",
                f32 ? ".f32" : ".f16", sat ? ".satfinite" : "");
            put_registers(&t, "d", f32 ? 8 : 4);
            put(&t, ", {%%a0,%%a1,%%a2,%%a3,%%a4,%%a5,%%a6,%%a7}, {%%b0,%%b1,%%b2,%%b3,%%b4,%%b5,%%b6,%%b7},"
                    " {%%c0,%%c1,%%c2,%%c3,%%c4,%%c5,%%c6,%%c7};\n"
                    " wmma.store.d.sync.aligned.row.m16n16k16%s [%%p3], ",
                f32 ? ".f32" : ".f16");
            put_registers(&t, "d", f32 ? 8 : 4);
            put(&t, ";\n ret;\n}\n");
            kemu_kernel *k = load(t.buf, "sf");
            uint16_t a[256], b[256];
            float c[256], d[256];
            for (int i = 0; i < 256; i++) {
                a[i] = i / 16 == 1 ? 0xdc00 : 0x5c00; /* row 1: -256, others +256 */
                b[i] = 0x5c00;
                c[i] = i / 16 == 2 ? INFINITY : i / 16 == 3 ? -INFINITY : i / 16 == 4 ? NAN : 0.0f;
            }
            uint64_t da = upload(a, sizeof a), db = upload(b, sizeof b), dc = upload(c, sizeof c),
                     dd = upload(NULL, sizeof d);
            void *args[] = {&da, &db, &dc, &dd};
            launch_ok(k, 32, args);
            download(d, dd, f32 ? 1024 : 512);
            const uint16_t *h = (const uint16_t *)d;
            for (int i = 0; i < 256; i++) {
                int row = i / 16;
                uint32_t got = f32 ? f32_bits(d[i]) : h[i], want;
                if (row == 4)
                    want = f32 ? 0x7fffffffu : 0x7fffu;
                else if (f32)
                    want = row == 2 ? (sat ? 0x7f7fffffu : 0x7f800000u) : row == 3 ? (sat ? 0xff7fffffu : 0xff800000u)
                         : row == 1 ? f32_bits(-1048576.0f) : f32_bits(1048576.0f);
                else
                    want = (row == 1 || row == 3) ? (sat ? 0xfbffu : 0xfc00u) : (sat ? 0x7bffu : 0x7c00u);
                ck_assert_msg(got == want, "%s%s: element %d = 0x%x, want 0x%x", f32 ? "f32" : "f16",
                              sat ? " satfinite" : "", i, got, want);
            }
            release(da); release(db); release(dc); release(dd);
        }
}
END_TEST

/* kemu's documented wmma layout: lane l holds elements l*U .. l*U+U-1 in
 * row-major order; f16 A/B fragments repeat them; every other fragment
 * holds each element exactly once. */
static void check_ownership(const char *which, unsigned m, unsigned n, unsigned k, const char *type, int col)
{
    unsigned rows = which[0] == 'a' ? m : which[0] == 'b' ? k : m;
    unsigned cols = which[0] == 'a' ? k : n;
    unsigned size = type_size(type), total = rows * cols;
    unsigned nregs = wmma_registers(type, rows, cols, which[0] != 'c');
    unsigned wide = size == 8 ? 8 : 4, per = wide / size;
    uint8_t *mem = malloc((size_t)total * size);
    ck_assert_ptr_nonnull(mem);
    for (unsigned i = 0; i < total; i++) /* element i (row-major) at its place in memory */
        write_element(mem, col ? (i % cols) * rows + i / cols : i, size, size == 1 ? i : i + 1);
    text t = {.len = 0};
    put(&t, ".version 8.0\n.target sm_80\n.address_size 64\n"
            ".visible .entry own(.param .u64 src, .param .u64 out)\n{\n .reg .b%u %%r<%u>;\n .reg .b64 %%p<4>;\n"
            " .reg .b32 %%l;\n ld.param.u64 %%p0, [src];\n ld.param.u64 %%p1, [out];\n"
            " wmma.load.%s.sync.aligned%s.m%un%uk%u%s ",
        wide * 8, nregs, which, col ? ".col" : ".row", m, n, k, type);
    put_registers(&t, "r", nregs);
    put(&t, ", [%%p0];\n mov.u32 %%l, %%tid.x;\n mul.wide.u32 %%p2, %%l, %u;\n add.s64 %%p1, %%p1, %%p2;\n",
        nregs * wide);
    for (unsigned r = 0; r < nregs; r++)
        put(&t, " st.global.b%u [%%p1+%u], %%r%u;\n", wide * 8, r * wide, r);
    put(&t, " ret;\n}\n");
    kemu_kernel *kern = load(t.buf, "own");
    uint64_t src = upload(mem, (size_t)total * size), out = upload(NULL, (size_t)32 * nregs * wide);
    void *args[] = {&src, &out};
    launch_ok(kern, 32, args);
    uint8_t *regs = malloc((size_t)32 * nregs * wide);
    ck_assert_ptr_nonnull(regs);
    download(regs, out, (size_t)32 * nregs * wide);
    unsigned *count = calloc(total, sizeof *count);
    ck_assert_ptr_nonnull(count);
    unsigned unique = total / 32, elements = nregs * per;
    for (unsigned l = 0; l < 32; l++)
        for (unsigned e = 0; e < elements; e++) {
            uint64_t v = read_element(regs, (size_t)l * elements + e, size);
            unsigned index = size == 1 ? (unsigned)v : (unsigned)v - 1;
            ck_assert_msg(index == l * unique + e % unique, "%s %s m%un%uk%u: lane %u element %u holds %u",
                          which, type, m, n, k, l, e, index);
            count[index]++;
        }
    for (unsigned i = 0; i < total; i++)
        ck_assert_uint_eq(count[i], 32 * elements / total);
    free(count);
    free(regs);
    free(mem);
    release(src);
    release(out);
}

START_TEST(wmma_fragment_layout)
{
    for (int s = 0; s < 3; s++) {
        unsigned m = shapes16[s][0], n = shapes16[s][1], k = shapes16[s][2];
        for (int col = 0; col < 2; col++) { /* col: the default stride is the number of rows */
            check_ownership("a", m, n, k, ".f16", col);
            check_ownership("b", m, n, k, ".f16", col);
            check_ownership("c", m, n, k, ".f32", col);
            check_ownership("c", m, n, k, ".f16", col);
            check_ownership("a", m, n, k, ".bf16", col);
            check_ownership("b", m, n, k, ".bf16", col);
        }
    }
    check_ownership("a", 16, 16, 16, ".s8", 0);
    check_ownership("b", 16, 16, 16, ".u8", 1);
    check_ownership("c", 16, 16, 16, ".s32", 0);
    check_ownership("a", 16, 16, 8, ".tf32", 1);
    check_ownership("b", 16, 16, 8, ".tf32", 0);
    check_ownership("a", 8, 8, 4, ".f64", 1);
    check_ownership("c", 8, 8, 4, ".f64", 0);
}
END_TEST

/* Element-wise code on fragments: negating every half of A (both copies)
 * with xor, multiplying by the identity, and adding 1 to every element of
 * the f32 accumulator gives D = 1 - A. */
START_TEST(wmma_elementwise_on_fragments)
{
    const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry ew(.param .u64 pa, .param .u64 pb, .param .u64 pd)\n{\n"
        " .reg .b32 %a<8>;\n .reg .b32 %b<8>;\n .reg .f32 %c<8>;\n .reg .f32 %d<8>;\n .reg .b64 %p<3>;\n"
        " ld.param.u64 %p0, [pa];\n ld.param.u64 %p1, [pb];\n ld.param.u64 %p2, [pd];\n"
        " wmma.load.a.sync.aligned.row.m16n16k16.f16 {%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, [%p0];\n"
        " wmma.load.b.sync.aligned.col.m16n16k16.f16 {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, [%p1];\n"
        " xor.b32 %a0, %a0, 0x80008000;\n xor.b32 %a1, %a1, 0x80008000;\n xor.b32 %a2, %a2, 0x80008000;\n"
        " xor.b32 %a3, %a3, 0x80008000;\n xor.b32 %a4, %a4, 0x80008000;\n xor.b32 %a5, %a5, 0x80008000;\n"
        " xor.b32 %a6, %a6, 0x80008000;\n xor.b32 %a7, %a7, 0x80008000;\n"
        " mov.f32 %c0, 0f3F800000;\n mov.f32 %c1, 0f3F800000;\n mov.f32 %c2, 0f3F800000;\n mov.f32 %c3, 0f3F800000;\n"
        " mov.f32 %c4, 0f3F800000;\n mov.f32 %c5, 0f3F800000;\n mov.f32 %c6, 0f3F800000;\n mov.f32 %c7, 0f3F800000;\n"
        " wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%d0,%d1,%d2,%d3,%d4,%d5,%d6,%d7},"
        " {%a0,%a1,%a2,%a3,%a4,%a5,%a6,%a7}, {%b0,%b1,%b2,%b3,%b4,%b5,%b6,%b7}, {%c0,%c1,%c2,%c3,%c4,%c5,%c6,%c7};\n"
        " wmma.store.d.sync.aligned.col.m16n16k16.f32 [%p2], {%d0,%d1,%d2,%d3,%d4,%d5,%d6,%d7}, 16;\n ret;\n}\n";
    kemu_kernel *k = load(ptx, "ew");
    uint16_t a[256], b[256];
    for (int i = 0; i < 256; i++) {
        a[i] = random_f16();
        b[i] = (uint16_t)((i / 16 == i % 16) ? 0x3c00 : 0); /* identity (col-major = row-major) */
    }
    float d[256];
    uint64_t da = upload(a, sizeof a), db = upload(b, sizeof b), dd = upload(NULL, sizeof d);
    void *args[] = {&da, &db, &dd};
    launch_ok(k, 32, args);
    download(d, dd, sizeof d);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float want = fmaf(-f16_to_float(a[i * 16 + j]), 1.0f, 1.0f);
            ck_assert_msg(d[j * 16 + i] == want, "D[%d][%d] = %a, want %a", i, j, d[j * 16 + i], want);
        }
}
END_TEST

/* ---- mma.sync ------------------------------------------------------------ */

typedef struct mma_case {
    unsigned m, n, k;
    const char *dtype, *atype, *btype, *ctype;
    int satfinite;
} mma_case;

/* Elements per register (PTX ISA: f16x2, four 8-bit values in .b32, one
 * tf32/f32/s32 in .b32, one f64 in .f64). */
static unsigned per_register(const char *t)
{
    unsigned s = type_size(t);
    return s >= 4 ? 1 : 4 / s;
}

/* The PTX ISA fragment tables ("Matrix Fragments for mma.mMnNkK"). */
static void spec_a(const mma_case *c, unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = lane >> 2, q = lane % 4;
    const char *t = c->atype;
    int half = !strcmp(t, ".f16") || !strcmp(t, ".bf16"), byte = !strcmp(t, ".s8") || !strcmp(t, ".u8") || is_fp8_type(t);
    if (half && c->k == 8) {        /* m16n8k8 .f16/.bf16 */
        *row = i < 2 ? g : g + 8;
        *col = q * 2 + (i & 1);
    } else if (half) {              /* m16n8k16 */
        *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        *col = q * 2 + (i & 1) + (i >= 4 ? 8 : 0);
    } else if (byte && c->m == 8) { /* m8n8k16 */
        *row = g;
        *col = q * 4 + i;
    } else if (byte && c->k == 16) { /* m16n8k16 */
        *row = i < 4 ? g : g + 8;
        *col = q * 4 + (i & 3);
    } else if (byte) {              /* m16n8k32 */
        *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
        *col = q * 4 + (i & 3) + (i >= 8 ? 16 : 0);
    } else if (c->m == 8) {         /* m8n8k4 .f64 */
        *row = g;
        *col = q;
    } else if (c->k == 4) {         /* m16n8k4 .tf32/.f64: a0 row g, a1 row g+8 */
        *row = i == 0 ? g : g + 8;
        *col = q;
    } else if (c->k == 8) {         /* m16n8k8 .tf32/.f64 */
        *row = (i == 0 || i == 2) ? g : g + 8;
        *col = i < 2 ? q : q + 4;
    } else {                        /* m16n8k16 .f64 */
        *row = i % 2 == 0 ? g : g + 8;
        *col = i % 2 == 0 ? i * 2 + q : i * 2 - 2 + q;
    }
}

static void spec_b(const mma_case *c, unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = lane >> 2, q = lane % 4;
    const char *t = c->btype;
    int half = !strcmp(t, ".f16") || !strcmp(t, ".bf16"), byte = !strcmp(t, ".s8") || !strcmp(t, ".u8") || is_fp8_type(t);
    *col = g;
    if (half)
        *row = q * 2 + (i & 1) + (i >= 2 ? 8 : 0);
    else if (byte && c->k == 32)
        *row = q * 4 + (i & 3) + (i >= 4 ? 16 : 0);
    else if (byte)
        *row = q * 4 + i;
    else
        *row = q + 4 * i; /* tf32 / f64: b0 row q, b1 row q+4, ... */
}

static void spec_cd(const mma_case *c, unsigned lane, unsigned i, unsigned *row, unsigned *col)
{
    unsigned g = lane >> 2, q = lane % 4;
    if (c->m == 8) {
        *row = g;
        *col = q * 2 + i;
    } else {
        *row = i < 2 ? g : g + 8;
        *col = q * 2 + (i & 1);
    }
}

typedef void (*spec_fn)(const mma_case *, unsigned, unsigned, unsigned *, unsigned *);

/* Packs matrix x (rows x cols, element bits) into per-lane register words. */
static void pack_fragment(const mma_case *c, spec_fn spec, const char *t, unsigned cols, const uint64_t *x,
                          unsigned nregs, uint64_t *words)
{
    unsigned per = per_register(t), size = type_size(t);
    memset(words, 0, (size_t)32 * nregs * sizeof *words);
    for (unsigned l = 0; l < 32; l++)
        for (unsigned e = 0; e < nregs * per; e++) {
            unsigned row, col;
            spec(c, l, e, &row, &col);
            uint64_t v = x[row * cols + col];
            words[l * nregs + e / per] |= size == 8 ? v : v << (8 * size * (e % per));
        }
}

/* C and B values for the next run_mma_case, where set (cycled) */
static const uint64_t *fixed_c_values, *fixed_b_values;
static unsigned fixed_c_count, fixed_b_count;

static void run_mma_case(const mma_case *c, const uint64_t *fixed_a)
{
    char name[128];
    snprintf(name, sizeof name, "mma.m%un%uk%u%s%s%s%s%s", c->m, c->n, c->k, c->satfinite ? ".satfinite" : "",
             c->dtype, c->atype, c->btype, c->ctype);
    unsigned na = c->m * c->k / 32 / per_register(c->atype), nb = c->k * c->n / 32 / per_register(c->btype);
    unsigned nc = c->m * c->n / 32 / per_register(c->ctype), nd = c->m * c->n / 32 / per_register(c->dtype);
    uint64_t a[512], b[512], cm[256], d[256];
    for (unsigned i = 0; i < c->m * c->k; i++) a[i] = fixed_a ? fixed_a[i] : random_element(c->atype);
    for (unsigned i = 0; i < c->k * c->n; i++)
        b[i] = fixed_b_count ? fixed_b_values[(i + i / 8) % fixed_b_count] : random_element(c->btype);
    for (unsigned i = 0; i < c->m * c->n; i++) {
        cm[i] = fixed_c_count ? fixed_c_values[i % fixed_c_count] : random_element(c->ctype);
        if (c->satfinite)
            cm[i] = (uint32_t)(i % 2 ? INT32_MAX - (int32_t)(random32() % 1000) : INT32_MIN + (int32_t)(random32() % 1000));
    }
    uint64_t wa[32 * 8], wb[32 * 8], wc[32 * 8], wd[32 * 8];
    pack_fragment(c, spec_a, c->atype, c->k, a, na, wa);
    pack_fragment(c, spec_b, c->btype, c->n, b, nb, wb);
    pack_fragment(c, spec_cd, c->ctype, c->n, cm, nc, wc);
    int f64 = !strcmp(c->atype, ".f64");
    unsigned wide = f64 ? 8 : 4;
    /* device words are 4 or 8 bytes */
    uint8_t ba[32 * 8 * 8], bb[32 * 8 * 8], bc[32 * 8 * 8], bd[32 * 8 * 8];
    for (unsigned i = 0; i < 32 * na; i++) write_element(ba, i, wide, wa[i]);
    for (unsigned i = 0; i < 32 * nb; i++) write_element(bb, i, wide, wb[i]);
    for (unsigned i = 0; i < 32 * nc; i++) write_element(bc, i, wide, wc[i]);
    text t = {.len = 0};
    put(&t, ".version 8.0\n.target %s\n.address_size 64\n"
            ".visible .entry mma_test(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
            " .reg .b%u %%a<%u>;\n .reg .b%u %%b<%u>;\n .reg .b%u %%c<%u>;\n .reg .b%u %%d<%u>;\n"
            " .reg .b64 %%p<4>;\n .reg .b64 %%o;\n .reg .b32 %%l;\n"
            " ld.param.u64 %%p0, [pa];\n ld.param.u64 %%p1, [pb];\n ld.param.u64 %%p2, [pc];\n ld.param.u64 %%p3, [pd];\n"
            " mov.u32 %%l, %%tid.x;\n",
        f64 && c->m == 16 ? "sm_90" : is_fp8_type(c->atype) ? "sm_89" : "sm_80", wide * 8, na, wide * 8, nb, wide * 8,
        nc, wide * 8, nd);
    const char *prefix[4] = {"a", "b", "c", "d"};
    unsigned counts[4] = {na, nb, nc, nd};
    for (int o = 0; o < 4; o++) {
        put(&t, " mul.wide.u32 %%o, %%l, %u;\n add.s64 %%p%d, %%p%d, %%o;\n", counts[o] * wide, o, o);
        if (o < 3)
            for (unsigned r = 0; r < counts[o]; r++)
                put(&t, " ld.global.b%u %%%s%u, [%%p%d+%u];\n", wide * 8, prefix[o], r, o, r * wide);
    }
    put(&t, " mma.sync.aligned.m%un%uk%u.row.col%s%s%s%s%s ", c->m, c->n, c->k, c->satfinite ? ".satfinite" : "",
        c->dtype, c->atype, c->btype, c->ctype);
    put_registers(&t, "d", nd);
    put(&t, ", ");
    put_registers(&t, "a", na);
    put(&t, ", ");
    put_registers(&t, "b", nb);
    put(&t, ", ");
    put_registers(&t, "c", nc);
    put(&t, ";\n");
    for (unsigned r = 0; r < nd; r++)
        put(&t, " st.global.b%u [%%p3+%u], %%d%u;\n", wide * 8, r * wide, r);
    put(&t, " ret;\n}\n");
    kemu_kernel *k = load(t.buf, "mma_test");
    uint64_t da = upload(ba, 32 * na * wide), db = upload(bb, 32 * nb * wide), dc = upload(bc, 32 * nc * wide),
             dd = upload(NULL, 32 * nd * wide);
    void *args[] = {&da, &db, &dc, &dd};
    launch_ok(k, 32, args);
    download(bd, dd, 32 * nd * wide);
    for (unsigned i = 0; i < 32 * nd; i++) wd[i] = read_element(bd, i, wide);
    reference(c->m, c->n, c->k, c->dtype, c->atype, c->btype, c->ctype, a, b, cm, c->satfinite, d);
    unsigned per = per_register(c->dtype), size = type_size(c->dtype);
    for (unsigned l = 0; l < 32; l++)
        for (unsigned e = 0; e < nd * per; e++) {
            unsigned row, col;
            spec_cd(c, l, e, &row, &col);
            uint64_t word = wd[l * nd + e / per];
            uint64_t got = size == 8 ? word : (word >> (8 * size * (e % per))) & ((1ull << (8 * size)) - 1);
            ck_assert_msg(got == d[row * c->n + col], "%s: lane %u d%u (D[%u][%u]) = 0x%llx, want 0x%llx", name, l, e,
                          row, col, (unsigned long long)got, (unsigned long long)d[row * c->n + col]);
        }
    release(da);
    release(db);
    release(dc);
    release(dd);
}

START_TEST(mma_sync_float)
{
    static const mma_case cases[] = {
        {16, 8, 8, ".f32", ".f16", ".f16", ".f32", 0},   {16, 8, 8, ".f16", ".f16", ".f16", ".f16", 0},
        {16, 8, 8, ".f32", ".f16", ".f16", ".f16", 0},   {16, 8, 8, ".f16", ".f16", ".f16", ".f32", 0},
        {16, 8, 8, ".f32", ".bf16", ".bf16", ".f32", 0}, {16, 8, 16, ".f32", ".f16", ".f16", ".f32", 0},
        {16, 8, 16, ".f16", ".f16", ".f16", ".f16", 0},  {16, 8, 16, ".f32", ".bf16", ".bf16", ".f32", 0},
        {16, 8, 4, ".f32", ".tf32", ".tf32", ".f32", 0}, {16, 8, 8, ".f32", ".tf32", ".tf32", ".f32", 0},
        {8, 8, 4, ".f64", ".f64", ".f64", ".f64", 0},    {16, 8, 4, ".f64", ".f64", ".f64", ".f64", 0},
        {16, 8, 8, ".f64", ".f64", ".f64", ".f64", 0},   {16, 8, 16, ".f64", ".f64", ".f64", ".f64", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_mma_case(&cases[i], NULL);
}
END_TEST

/* fp8 (sm_89): the fragments of 8-bit integers, an f32 FMA chain in k
 * order (kemu's documented model; the H200's own is not fitted yet), mixed
 * e4m3/e5m2 operands, f16 and f32 accumulators, and NaN, infinity and
 * subnormal operands. */
START_TEST(mma_sync_fp8)
{
    static const mma_case cases[] = {
        {16, 8, 32, ".f32", ".e4m3", ".e4m3", ".f32", 0}, {16, 8, 32, ".f32", ".e5m2", ".e4m3", ".f32", 0},
        {16, 8, 32, ".f16", ".e5m2", ".e5m2", ".f16", 0}, {16, 8, 32, ".f16", ".e4m3", ".e4m3", ".f32", 0},
        {16, 8, 16, ".f32", ".e4m3", ".e5m2", ".f32", 0}, {16, 8, 16, ".f32", ".e5m2", ".e5m2", ".f16", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_mma_case(&cases[i], NULL);
    uint64_t a[512];
    for (int i = 0; i < 512; i++)
        a[i] = random_element(".e4m3");
    a[0] = 0x7f;        /* NaN */
    a[32 + 3] = 0x01;   /* the smallest subnormal */
    a[64 + 5] = 0xfe;   /* -448, the largest magnitude */
    run_mma_case(&cases[0], a);
    uint64_t e[512];
    for (int i = 0; i < 512; i++)
        e[i] = random_element(".e5m2");
    e[7] = 0x7c;        /* +inf */
    e[40] = 0xfc;       /* -inf */
    e[99] = 0x7e;       /* NaN */
    run_mma_case(&cases[2], e);
}
END_TEST

START_TEST(mma_sync_int8)
{
    static const char *const t[2] = {".s8", ".u8"};
    static const unsigned shapes[3][3] = {{8, 8, 16}, {16, 8, 16}, {16, 8, 32}};
    for (int s = 0; s < 3; s++)
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 2; y++)
                for (int sat = 0; sat < 2; sat++) {
                    mma_case c = {shapes[s][0], shapes[s][1], shapes[s][2], ".s32", t[x], t[y], ".s32", sat};
                    run_mma_case(&c, NULL);
                }
}
END_TEST

/* NaN and infinity in A: rows with a NaN give the canonical NaN, rows with
 * an infinity give infinities (or NaN where a product is inf * 0). */
START_TEST(mma_sync_special_values)
{
    mma_case c = {16, 8, 16, ".f32", ".f16", ".f16", ".f32", 0};
    uint64_t a[256];
    for (int i = 0; i < 256; i++)
        a[i] = random_f16();
    a[0] = 0x7e01;          /* NaN with a payload */
    a[16 + 3] = 0x7c00;     /* +inf */
    a[32 + 5] = 0xfc00;     /* -inf */
    a[48 + 7] = 0x0001;     /* subnormal */
    run_mma_case(&c, a);
    mma_case h = {16, 8, 16, ".f16", ".f16", ".f16", ".f16", 0};
    run_mma_case(&h, a);
}
END_TEST

/* Accumulators far from the products: tiny (subnormal and near the f32
 * minimum), huge (up to FLT_MAX), zeros of both signs, added to rows of A
 * that are zero (the group's exponent is then the accumulator's alone) and
 * to random rows, for each operand type; the f16 x f16 loop works on f32
 * products and must hand such elements to the exact one. */
START_TEST(mma_sync_extreme_accumulators)
{
    static const uint64_t cvals[] = {0x00000001u, 0x00400000u, 0x00800000u, 0x01000001u, 0x80800001u, 0x0d000000u,
                                     0x7f7fffffu, 0xff7fffffu, 0x7b000000u, 0x80000000u, 0x00000000u, 0x3f800000u,
                                     0x2a800003u, 0x33000001u, 0xb3800000u, 0x06800000u};
    fixed_c_values = cvals;
    fixed_c_count = sizeof cvals / sizeof cvals[0];
    static const char *types[] = {".f16", ".bf16"};
    /* B: large, small and mid-range values (f16 bits; as bf16 bits they
     * are other values of every magnitude) */
    static const uint64_t bvals[] = {0x7bffu, 0xf800u, 0x3c00u, 0x0001u, 0x5a3fu, 0xb555u, 0x6c00u};
    for (int t = 0; t < 2; t++) {
        uint64_t a[256];
        for (int i = 0; i < 256; i++)
            a[i] = i < 4 * 16 ? (i % 2 ? 0x8000u : 0) : random_element(types[t]);
        mma_case c = {16, 8, 16, ".f32", types[t], types[t], ".f32", 0};
        run_mma_case(&c, a);
        fixed_b_values = bvals;
        fixed_b_count = sizeof bvals / sizeof bvals[0];
        run_mma_case(&c, a);
        fixed_b_count = 0;
    }
    /* bf16 at the edges of the f32 loop's range (2^+-60) and just outside */
    static const uint64_t bf16_edges[] = {0x5d80u, 0xdd7fu, 0x2180u, 0xa1c0u, 0x5e00u, 0x2100u, 0x3f80u};
    uint64_t ab[256];
    for (int i = 0; i < 256; i++)
        ab[i] = i < 4 * 16 ? 0 : i < 8 * 16 ? bf16_edges[i % 4] : random_element(".bf16");
    fixed_b_values = bf16_edges;
    fixed_b_count = 4; /* within range */
    mma_case cb = {16, 8, 16, ".f32", ".bf16", ".bf16", ".f32", 0};
    run_mma_case(&cb, ab);
    fixed_b_count = 7; /* some outside */
    run_mma_case(&cb, ab);
    fixed_b_count = 0;
    uint64_t a8[128];
    for (int i = 0; i < 128; i++)
        a8[i] = i < 4 * 8 ? 0 : random_element(".tf32");
    mma_case c8 = {16, 8, 8, ".f32", ".tf32", ".tf32", ".f32", 0};
    run_mma_case(&c8, a8);
    fixed_c_count = 0;
}
END_TEST

/* ---- ldmatrix / stmatrix -------------------------------------------------- */

static uint16_t tile_value(unsigned matrix, unsigned row, unsigned col)
{
    return (uint16_t)(matrix << 12 | row << 8 | col << 4 | 5);
}

/* Lane j supplies the row at (j*5) % 32 of a 32-row shared buffer; lanes
 * beyond 8*count supply misaligned addresses, which must be ignored. */
static void run_ldmatrix(unsigned count, int trans, int generic)
{
    uint16_t src[32][8];
    memset(src, 0xee, sizeof src);
    for (unsigned i = 0; i < count; i++)
        for (unsigned r = 0; r < 8; r++)
            for (unsigned c = 0; c < 8; c++)
                src[(8 * i + r) * 5 % 32][c] = tile_value(i, r, c);
    text t = {.len = 0};
    put(&t, ".version 8.0\n.target sm_80\n.address_size 64\n"
            ".visible .entry ldm(.param .u64 src, .param .u64 out)\n{\n"
            " .shared .align 16 .b8 tile[512];\n .reg .b32 %%r<4>;\n .reg .b32 %%l;\n .reg .b32 %%x;\n"
            " .reg .b32 %%y;\n .reg .b32 %%s;\n .reg .b64 %%p<4>;\n .reg .b64 %%o;\n .reg .pred %%q;\n"
            " ld.param.u64 %%p0, [src];\n ld.param.u64 %%p1, [out];\n cvta.to.global.u64 %%p0, %%p0;\n"
            " cvta.to.global.u64 %%p1, %%p1;\n mov.u32 %%l, %%tid.x;\n mul.wide.u32 %%o, %%l, 16;\n"
            " add.s64 %%p2, %%p0, %%o;\n ld.global.v4.u32 {%%r0, %%r1, %%r2, %%r3}, [%%p2];\n"
            " mov.u32 %%s, tile;\n shl.b32 %%x, %%l, 4;\n add.s32 %%x, %%s, %%x;\n"
            " st.shared.v4.u32 [%%x], {%%r0, %%r1, %%r2, %%r3};\n bar.sync 0;\n"
            " mul.lo.u32 %%y, %%l, 5;\n and.b32 %%y, %%y, 31;\n shl.b32 %%y, %%y, 4;\n add.s32 %%y, %%s, %%y;\n"
            " setp.ge.u32 %%q, %%l, %u;\n @%%q add.s32 %%y, %%y, 3;\n",
        8 * count);
    if (generic)
        put(&t, " cvt.u64.u32 %%p3, %%y;\n cvta.shared.u64 %%p3, %%p3;\n ldmatrix.sync.aligned.m8n8.x%u%s.b16 ",
            count, trans ? ".trans" : "");
    else
        put(&t, " ldmatrix.sync.aligned.m8n8.x%u%s.shared.b16 ", count, trans ? ".trans" : "");
    put_registers(&t, "r", count);
    put(&t, ", [%s];\n mul.wide.u32 %%o, %%l, %u;\n add.s64 %%p2, %%p1, %%o;\n", generic ? "%p3" : "%y", 4 * count);
    for (unsigned i = 0; i < count; i++)
        put(&t, " st.global.b32 [%%p2+%u], %%r%u;\n", 4 * i, i);
    put(&t, " ret;\n}\n");
    kemu_kernel *k = load(t.buf, "ldm");
    uint64_t dsrc = upload(src, sizeof src), dout = upload(NULL, 32 * 4 * count);
    void *args[] = {&dsrc, &dout};
    launch_ok(k, 32, args);
    uint32_t out[128];
    download(out, dout, 32 * 4 * count);
    for (unsigned l = 0; l < 32; l++)
        for (unsigned i = 0; i < count; i++) {
            unsigned g = l / 4, q = l % 4;
            uint16_t lo = trans ? tile_value(i, 2 * q, g) : tile_value(i, g, 2 * q);
            uint16_t hi = trans ? tile_value(i, 2 * q + 1, g) : tile_value(i, g, 2 * q + 1);
            uint32_t want = (uint32_t)lo | (uint32_t)hi << 16;
            ck_assert_msg(out[l * count + i] == want, "ldmatrix.x%u%s%s: lane %u r%u = 0x%08x, want 0x%08x", count,
                          trans ? ".trans" : "", generic ? " (generic)" : "", l, i, out[l * count + i], want);
        }
    release(dsrc);
    release(dout);
}

START_TEST(ldmatrix_layouts)
{
    for (unsigned count = 1; count <= 4; count *= 2)
        for (int trans = 0; trans < 2; trans++)
            run_ldmatrix(count, trans, 0);
    run_ldmatrix(4, 0, 1);
    run_ldmatrix(2, 1, 1);
}
END_TEST

static void run_stmatrix(unsigned count, int trans)
{
    text t = {.len = 0};
    put(&t, ".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry stm(.param .u64 out)\n{\n"
            " .shared .align 16 .b8 tile[512];\n .reg .b32 %%r<4>;\n .reg .b32 %%l;\n .reg .b32 %%x;\n"
            " .reg .b32 %%y;\n .reg .b32 %%s;\n .reg .b32 %%h;\n .reg .b64 %%p<3>;\n .reg .b64 %%o;\n .reg .pred %%q;\n"
            " ld.param.u64 %%p0, [out];\n cvta.to.global.u64 %%p0, %%p0;\n mov.u32 %%l, %%tid.x;\n"
            " mov.u32 %%s, tile;\n shl.b32 %%x, %%l, 4;\n add.s32 %%x, %%s, %%x;\n mov.u32 %%h, 0;\n"
            " st.shared.v4.u32 [%%x], {%%h, %%h, %%h, %%h};\n bar.sync 0;\n");
    for (unsigned i = 0; i < count; i++)
        put(&t, " mad.lo.u32 %%r%u, %%l, 2, %u;\n add.u32 %%h, %%r%u, 1;\n shl.b32 %%h, %%h, 16;\n"
                " or.b32 %%r%u, %%r%u, %%h;\n",
            i, 64 * i, i, i, i);
    put(&t, " mul.lo.u32 %%y, %%l, 5;\n and.b32 %%y, %%y, 31;\n shl.b32 %%y, %%y, 4;\n add.s32 %%y, %%s, %%y;\n"
            " setp.ge.u32 %%q, %%l, %u;\n @%%q add.s32 %%y, %%y, 3;\n"
            " stmatrix.sync.aligned.m8n8.x%u%s.shared.b16 [%%y], ",
        8 * count, count, trans ? ".trans" : "");
    put_registers(&t, "r", count);
    put(&t, ";\n bar.sync 0;\n ld.shared.v4.u32 {%%r0, %%r1, %%r2, %%r3}, [%%x];\n"
            " mul.wide.u32 %%o, %%l, 16;\n add.s64 %%p1, %%p0, %%o;\n"
            " st.global.v4.u32 [%%p1], {%%r0, %%r1, %%r2, %%r3};\n ret;\n}\n");
    kemu_kernel *k = load(t.buf, "stm");
    uint64_t dout = upload(NULL, 512);
    void *args[] = {&dout};
    launch_ok(k, 32, args);
    uint16_t out[32][8];
    download(out, dout, sizeof out);
    for (unsigned row = 0; row < 32; row++) {
        int found = 0;
        for (unsigned i = 0; i < count; i++)
            for (unsigned r = 0; r < 8; r++) {
                if ((8 * i + r) * 5 % 32 != row)
                    continue;
                found = 1;
                for (unsigned c = 0; c < 8; c++) {
                    unsigned lane = trans ? 4 * c + r / 2 : 4 * r + c / 2, half = trans ? r % 2 : c % 2;
                    uint16_t want = (uint16_t)(64 * i + 2 * lane + half);
                    ck_assert_msg(out[row][c] == want, "stmatrix.x%u%s: matrix %u [%u][%u] = %u, want %u", count,
                                  trans ? ".trans" : "", i, r, c, out[row][c], want);
                }
            }
        if (!found)
            for (unsigned c = 0; c < 8; c++)
                ck_assert_uint_eq(out[row][c], 0);
    }
    release(dout);
}

START_TEST(stmatrix_layouts)
{
    for (unsigned count = 1; count <= 4; count *= 2)
        for (int trans = 0; trans < 2; trans++)
            run_stmatrix(count, trans);
}
END_TEST

/* ---- faults and load-time errors ------------------------------------------ */

static void expect_fault(const char *ptx, const char *name, unsigned threads, void **args, const char *needle)
{
    kemu_kernel *k = load(ptx, name);
    char msg[2048];
    kemu_status st = launch(k, threads, args, msg, sizeof msg);
    ck_assert_int_eq(st, KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, needle) != NULL, "fault message lacks '%s': %s", needle, msg);
}

START_TEST(matrix_faults)
{
    const char *ldm = ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry ldm(.param .u32 off)\n{\n .shared .align 16 .b8 tile[512];\n"
        " .reg .b32 %r<4>;\n .reg .b32 %l;\n .reg .b32 %a;\n .reg .b32 %t;\n ld.param.u32 %a, [off];\n"
        " mov.u32 %l, %tid.x;\n and.b32 %l, %l, 15;\n shl.b32 %l, %l, 4;\n add.s32 %a, %a, %l;\n"
        " mov.u32 %t, tile;\n add.s32 %a, %a, %t;\n"
        " ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [%a];\n ret;\n}\n";
    uint32_t off = 8;
    void *args[] = {&off};
    expect_fault(ldm, "ldm", 32, args, "misaligned");
    off = 4096;
    expect_fault(ldm, "ldm", 32, args, "out-of-bounds shared");
    off = 0;
    expect_fault(ldm, "ldm", 16, args, "lane 16 must supply the address");
    const char *wmma = ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry wl(.param .u64 p)\n{\n .reg .b32 %r<8>;\n .reg .b64 %a;\n ld.param.u64 %a, [p];\n"
        " wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%a], 16;\n"
        " ret;\n}\n";
    uint64_t buf = upload(NULL, 512), small = upload(NULL, 256);
    uint64_t p = buf + 2;
    void *wargs[] = {&p};
    expect_fault(wmma, "wl", 32, wargs, "misaligned");
    p = small;
    expect_fault(wmma, "wl", 32, wargs, "illegal address");
    /* a stride whose bytes (17 f16: 34) are not a multiple of the 16-byte alignment */
    const char *wmma17 = ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry wl(.param .u64 p)\n{\n .reg .b32 %r<8>;\n .reg .b64 %a;\n ld.param.u64 %a, [p];\n"
        " wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%a], 17;\n"
        " ret;\n}\n";
    p = buf;
    expect_fault(wmma17, "wl", 32, wargs, "stride 17");
    release(buf);
    release(small);
}
END_TEST

static void expect_load_error(const char *body, const char *needle)
{
    char ptx[2048];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e(.param .u64 p)\n{\n"
             " .reg .b32 %%r<16>;\n .reg .b64 %%a;\n .reg .f32 %%f<8>;\n ld.param.u64 %%a, [p];\n%s\n ret;\n}\n", body);
    kemu_error err;
    kemu_module *m;
    kemu_status st = kemu_module_load_ptx(dev, ptx, strlen(ptx), "bad.ptx", &m, &err);
    ck_assert_int_eq(st, KEMU_ERR_PARSE);
    ck_assert_msg(strstr(err.message, needle) != NULL, "error lacks '%s': %s", needle, err.message);
    ck_assert_int_eq(err.line, 10);
}

START_TEST(matrix_load_errors)
{
    expect_load_error(" mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7},"
                      " {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};", "quad-pair");
    expect_load_error(" wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r0}, [%a];", "sub-byte");
    expect_load_error(" wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r0,%r1,%r2,%r3}, [%a];",
                      "takes 8 registers, found 4");
    expect_load_error(" mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3},"
                      " {%r4,%r5}, {%f0,%f1,%f2,%f3};", ".row.col");
    expect_load_error(" mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f32 {%r0,%r1}, {%r0,%r1,%r2,%r3},"
                      " {%r4,%r5}, {%f0,%f1,%f2,%f3};", "does not exist");
    expect_load_error(" ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0,%r1}, [%a];", "takes 4 registers");
    expect_load_error(" ldmatrix.sync.aligned.m16n16.x1.trans.shared.b8 {%r0,%r1}, [%a];", "only the .m8n8");
    expect_load_error(" wmma.mma.sync.aligned.row.col.m16n16k8.f32.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7},"
                      " {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15},"
                      " {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};", "does not exist");
}
END_TEST

/* ---- the nvcc kernels of tests/kernels/mma.cu ---------------------------- */

static kemu_module *load_kernel_file(const char *file)
{
    char path[1024];
    const char *top = getenv("top_srcdir"), *src = getenv("srcdir");
#ifdef MATRIX_KERNEL_DIR
    const char *fallback = MATRIX_KERNEL_DIR;
#else
    const char *fallback = "tests/kernels";
#endif
    if (top)
        snprintf(path, sizeof path, "%s/tests/kernels/%s", top, file);
    else if (src)
        snprintf(path, sizeof path, "%s/tests/kernels/%s", src, file);
    else
        snprintf(path, sizeof path, "%s/%s", fallback, file);
    kemu_error err;
    kemu_module *m;
    kemu_status st = kemu_module_load_ptx_file(dev, path, &m, &err);
    ck_assert_msg(st == KEMU_OK, "%s: %s", path, err.message);
    return m;
}

static kemu_kernel *find(kemu_module *m, const char *name)
{
    kemu_error err;
    kemu_kernel *k;
    return kemu_module_get_kernel(m, name, &k, &err) == KEMU_OK ? k : NULL;
}

/* Runs every kernel of mma.cu that the file has and checks it. */
static void check_mma_cu(const char *file)
{
    kemu_module *mod = load_kernel_file(file);
    uint16_t ha[256], hb[256];
    float fc[256], fd[256];
    uint64_t a[256], b[256], c[256], d[256];
    kemu_kernel *k;
    /* wmma_f16_f32 and wmma_bf16_f32 */
    for (int bf = 0; bf < 2; bf++) {
        if (!(k = find(mod, bf ? "wmma_bf16_f32" : "wmma_f16_f32")))
            continue;
        for (int i = 0; i < 256; i++) {
            a[i] = ha[i] = bf ? random_bf16() : random_f16();
            b[i] = hb[i] = bf ? random_bf16() : random_f16();
            c[i] = random_f32();
            fc[i] = f32_from_bits((uint32_t)c[i]);
        }
        uint64_t da = upload(ha, 512), db = upload(hb, 512), dc = upload(fc, 1024), dd = upload(NULL, 1024);
        void *args[] = {&da, &db, &dc, &dd};
        launch_ok(k, 32, args);
        download(fd, dd, 1024);
        const char *t = bf ? ".bf16" : ".f16";
        reference(16, 16, 16, ".f32", t, t, ".f32", a, b, c, 0, d);
        for (int i = 0; i < 256; i++)
            ck_assert_msg(f32_bits(fd[i]) == d[i], "%s %s: d[%d] = %a", file, bf ? "bf16" : "f16", i, fd[i]);
        release(da); release(db); release(dc); release(dd);
    }
    /* wmma_f16_f16_colb: b is column-major, the accumulator f16 from zero */
    if ((k = find(mod, "wmma_f16_f16_colb"))) {
        for (int i = 0; i < 256; i++) {
            a[i] = ha[i] = random_f16();
            hb[i] = random_f16();
            c[i] = 0;
        }
        for (int x = 0; x < 16; x++)
            for (int j = 0; j < 16; j++)
                b[x * 16 + j] = hb[j * 16 + x];
        uint16_t hd[256];
        uint64_t da = upload(ha, 512), db = upload(hb, 512), dd = upload(NULL, 512);
        void *args[] = {&da, &db, &dd};
        launch_ok(k, 32, args);
        download(hd, dd, 512);
        reference(16, 16, 16, ".f16", ".f16", ".f16", ".f16", a, b, c, 0, d);
        for (int i = 0; i < 256; i++)
            ck_assert_msg(hd[i] == d[i], "%s colb: d[%d] = 0x%04x, want 0x%04llx", file, i, hd[i],
                          (unsigned long long)d[i]);
        release(da); release(db); release(dd);
    }
    /* wmma_s8_s32 */
    if ((k = find(mod, "wmma_s8_s32"))) {
        int8_t sa[256], sb[256];
        int32_t sd[256];
        for (int i = 0; i < 256; i++) {
            sa[i] = (int8_t)random32();
            sb[i] = (int8_t)random32();
            a[i] = (uint8_t)sa[i];
            b[i] = (uint8_t)sb[i];
            c[i] = 0;
        }
        uint64_t da = upload(sa, 256), db = upload(sb, 256), dd = upload(NULL, 1024);
        void *args[] = {&da, &db, &dd};
        launch_ok(k, 32, args);
        download(sd, dd, 1024);
        reference(16, 16, 16, ".s32", ".s8", ".s8", ".s32", a, b, c, 0, d);
        for (int i = 0; i < 256; i++)
            ck_assert_msg((uint32_t)sd[i] == d[i], "%s s8: d[%d] = %d", file, i, sd[i]);
        release(da); release(db); release(dd);
    }
    /* ldmatrix_x4: a 16x16 tile; register i of lane l = the m16n8k16 A fragment */
    if ((k = find(mod, "ldmatrix_x4"))) {
        for (int i = 0; i < 256; i++)
            ha[i] = (uint16_t)(i * 7 + 1);
        uint32_t out[128];
        uint64_t da = upload(ha, 512), dout = upload(NULL, sizeof out);
        void *args[] = {&da, &dout};
        launch_ok(k, 32, args);
        download(out, dout, sizeof out);
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 4; i++) {
                unsigned row = (i % 2) * 8 + l / 4, col = (i / 2) * 8 + 2 * (l % 4);
                uint32_t want = ha[row * 16 + col] | (uint32_t)ha[row * 16 + col + 1] << 16;
                ck_assert_msg(out[4 * l + i] == want, "%s ldmatrix_x4: lane %u r%u = 0x%08x, want 0x%08x", file, l,
                              i, out[4 * l + i], want);
            }
        release(da); release(dout);
    }
    /* ldmatrix_trans: a 16x8 tile as two 8x8 matrices, transposed */
    if ((k = find(mod, "ldmatrix_trans"))) {
        for (int i = 0; i < 128; i++)
            ha[i] = (uint16_t)(i * 3 + 11);
        uint32_t out[64];
        uint64_t da = upload(ha, 256), dout = upload(NULL, sizeof out);
        void *args[] = {&da, &dout};
        launch_ok(k, 32, args);
        download(out, dout, sizeof out);
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 2; i++) {
                unsigned r0 = 8 * i + 2 * (l % 4), col = l / 4;
                uint32_t want = ha[r0 * 8 + col] | (uint32_t)ha[(r0 + 1) * 8 + col] << 16;
                ck_assert_msg(out[2 * l + i] == want, "%s ldmatrix_trans: lane %u r%u = 0x%08x, want 0x%08x", file,
                              l, i, out[2 * l + i], want);
            }
        release(da); release(dout);
    }
    /* mma_m16n8k8_f16 (c = 0) and mma_m16n8k16_f16 (with c) */
    for (int big = 0; big < 2; big++) {
        if (!(k = find(mod, big ? "mma_m16n8k16_f16" : "mma_m16n8k8_f16")))
            continue;
        unsigned kk = big ? 16 : 8;
        for (unsigned i = 0; i < 16 * kk; i++)
            a[i] = ha[i] = random_f16();
        for (unsigned i = 0; i < kk * 8; i++)
            b[i] = hb[i] = random_f16();
        for (int i = 0; i < 128; i++) {
            c[i] = big ? random_f32() : 0;
            fc[i] = f32_from_bits((uint32_t)c[i]);
        }
        uint64_t da = upload(ha, 32 * kk), db = upload(hb, 16 * kk), dc = upload(fc, 512), dd = upload(NULL, 512);
        void *args4[] = {&da, &db, &dc, &dd}, *args3[] = {&da, &db, &dd};
        launch_ok(k, 32, big ? args4 : args3);
        download(fd, dd, 512);
        reference(16, 8, kk, ".f32", ".f16", ".f16", ".f32", a, b, c, 0, d);
        for (int i = 0; i < 128; i++)
            ck_assert_msg(f32_bits(fd[i]) == d[i], "%s mma k%u: d[%d] = %a", file, kk, i, fd[i]);
        release(da); release(db); release(dc); release(dd);
    }
    /* wmma_tf32_f32: inputs rounded with cvt.rna.tf32.f32 in the kernel */
    if ((k = find(mod, "wmma_tf32_f32"))) {
        for (int i = 0; i < 128; i++) {
            fc[i] = f32_from_bits(random_f32());
            fd[i] = f32_from_bits(random_f32());
        }
        uint64_t ta[128], tb[128];
        for (int i = 0; i < 128; i++) {
            ta[i] = (f32_bits(fc[i]) + 0x1000u) & 0xffffe000u; /* round half away from zero */
            tb[i] = (f32_bits(fd[i]) + 0x1000u) & 0xffffe000u;
            c[i] = c[i + 128] = 0;
        }
        float out[256];
        uint64_t da = upload(fc, 512), db = upload(fd, 512), dd = upload(NULL, 1024);
        void *args[] = {&da, &db, &dd};
        launch_ok(k, 32, args);
        download(out, dd, 1024);
        reference(16, 16, 8, ".f32", ".tf32", ".tf32", ".f32", ta, tb, c, 0, d);
        for (int i = 0; i < 256; i++)
            ck_assert_msg(f32_bits(out[i]) == d[i], "%s tf32: d[%d] = %a, want %a", file, i, out[i],
                          f32_from_bits((uint32_t)d[i]));
        release(da); release(db); release(dd);
    }
    kemu_module_unload(mod);
}

START_TEST(mma_cu_kernels)
{
    static const char *const files[] = {"mma.sm_80.O3.ptx", "mma.sm_80.G.ptx", "mma.sm_80.lineinfo.ptx",
                                        "mma.sm_90.O3.ptx", "mma.sm_75.O3.ptx"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_mma_cu(files[i]);
}
END_TEST


/* ---- wgmma (tests/kernels/hopper.cu, sm_90a) ------------------------------ */

/* The three no-swizzle layouts of hopper.cu: D = A*B (+ C) bit-exactly as
 * the reference computes it (k order, f32 fma), with and without C. */
START_TEST(wgmma_hopper_cu)
{
    static const char *const files[] = {"hopper.sm_90a.O3.ptx", "hopper.sm_90a.G.ptx", "hopper.sm_90a.lineinfo.ptx"};
    static const char *const kernels[] = {"wgmma_kmajor_mnmajor", "wgmma_mnmajor_kmajor", "wgmma_kmajor_kmajor"};
    static uint64_t a[64 * 16], b[16 * 64], c[64 * 64], d[64 * 64];
    static uint16_t ha[64 * 16], hb[16 * 64];
    static float fc[64 * 64], fd[64 * 64];
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        kemu_module *mod = load_kernel_file(files[fi]);
        for (size_t ki = 0; ki < 3; ki++) {
            kemu_kernel *k = find(mod, kernels[ki]);
            ck_assert_msg(k != NULL, "%s lacks %s", files[fi], kernels[ki]);
            for (int with_c = 0; with_c < 2; with_c++) {
                for (int i = 0; i < 64 * 16; i++) {
                    a[i] = ha[i] = random_f16();
                    b[i] = hb[i] = random_f16();
                }
                for (int i = 0; i < 64 * 64; i++) {
                    fc[i] = f32_from_bits(random_f32());
                    c[i] = with_c ? f32_bits(fc[i]) : 0;
                }
                uint64_t da = upload(ha, sizeof ha), db = upload(hb, sizeof hb), dc = upload(fc, sizeof fc),
                         dd = upload(NULL, sizeof fd);
                int accumulate = with_c;
                void *args[] = {&da, &db, &dc, &dd, &accumulate};
                launch_ok(k, 128, args);
                download(fd, dd, sizeof fd);
                reference(64, 64, 16, ".f32", ".f16", ".f16", ".f32", a, b, c, 0, d);
                for (int i = 0; i < 64 * 64; i++)
                    ck_assert_msg(f32_bits(fd[i]) == d[i], "%s %s (c %d): d[%d][%d] = %a, want %a", files[fi],
                                  kernels[ki], with_c, i / 64, i % 64, fd[i], f32_from_bits((uint32_t)d[i]));
                release(da); release(db); release(dc); release(dd);
            }
        }
        /* elect.sync: the lowest lane of the mask leads; lanes outside it
         * do not take part */
        kemu_kernel *k = find(mod, "elect_leader");
        ck_assert_ptr_nonnull(k);
        static const uint32_t masks[] = {0xffffffffu, 0xf0f0f0f0u, 0x80000000u, 0x00010002u};
        for (size_t mi = 0; mi < 4; mi++) {
            uint32_t out[64], mask = masks[mi];
            uint64_t dout = upload(NULL, sizeof out);
            void *args[] = {&dout, &mask};
            launch_ok(k, 64, args);
            download(out, dout, sizeof out);
            unsigned leader = (unsigned)__builtin_ctz(mask);
            for (unsigned t = 0; t < 64; t++) {
                unsigned lane = t % 32;
                uint32_t want = (mask >> lane) & 1 ? leader * 2 + (lane == leader) : 0xffffffffu;
                ck_assert_msg(out[t] == want, "%s elect mask 0x%08x: thread %u = %u, want %u", files[fi], mask, t,
                              out[t], want);
            }
            release(dout);
        }
        kemu_module_unload(mod);
    }
}
END_TEST

/* A wgmma whose descriptor has a base offset (unimplemented) faults with
 * a message saying so instead of reading the wrong bytes. */
START_TEST(wgmma_base_offset_faults)
{
    static const char ptx[] =
        ".version 8.0\n.target sm_90a\n.address_size 64\n"
        ".visible .entry w()\n{\n"
        " .shared .align 1024 .b8 tile[2048];\n"
        " .reg .f32 %f<33>;\n .reg .b64 %rd<4>;\n .reg .b32 %r<2>;\n"
        " mov.u32 %r1, tile;\n cvt.u64.u32 %rd1, %r1;\n shr.u64 %rd1, %rd1, 4;\n"
        " or.b64 %rd2, %rd1, 0x4000000000000000;\n" /* 128 B swizzle */
        " or.b64 %rd3, %rd2, 0x0002000000000000;\n" /* base offset 1 */
        " wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1,%f2,%f3,%f4}, %rd3, %rd2, 0, 1, 1, 0, 0;\n"
        " ret;\n}\n";
    kemu_kernel *k = load(ptx, "w");
    char msg[2048];
    ck_assert_int_eq(launch(k, 128, NULL, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "base offset 1 (bits 49-51) is not implemented") != NULL, "%s", msg);
}
END_TEST

START_TEST(wgmma_load_errors)
{
    /* A 64-bit register for descriptors: %a; D lists of f32 registers */
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2}, %a, %a, 1, 1, 1, 0, 0;",
                      "the D fragment takes 4 registers, found 3");
    expect_load_error(" wgmma.mma_async.sync.aligned.m32n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, 1, 1, 1, 0, 0;",
                      "does not exist");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.f16 {%f0,%f1,%f2,%f3}, %a, %a, 1, 1, 1, 0, 0;",
                      "does not exist");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k8.f16.tf32.tf32 {%r0,%r1}, %a, %a, 1, 1, 1;",
                      "does not exist");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, 1, 1, 1;",
                      "takes 8 operands here (d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, "
                      "imm-trans-b), found 6");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r0,%r1,%r2,%r3}, %a, %a, 1, 1, 1;",
                      "takes 4 operands here");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, 1, 2, 1, 0, 0;",
                      "imm-scale-a and imm-scale-b are 1 or -1");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, %r1, 1, 1, 0, 0;",
                      "expected a predicate register");
    expect_load_error(" wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, %r1, %r2,"
                      " 1, 1, 1, 0, 0;", "sparse wgmma");
    expect_load_error(" wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %a, %a, 1;",
                      "the .b1 (and.popc) form is not implemented");
    expect_load_error(" wgmma.mma_async.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %a, %a, 1, 1, 1, 0, 0;",
                      "need .sync.aligned");
    expect_load_error(" wgmma.wait_group.sync.aligned %r1;", "must be an integer constant");
    expect_load_error(" setmaxnreg.inc.sync.aligned.u32 20;", "from 24 to 256, a multiple of 8");
    /* fp8 runs in mma.sync and wgmma only; fp6/fp4 and .kind forms not at all */
    expect_load_error(" wmma.mma.sync.aligned.row.row.m16n16k16.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7},"
                      " {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};",
                      "(and fp8 outside mma.sync and wgmma) are not implemented");
    expect_load_error(" mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e2m1.f32 {%f0,%f1,%f2,%f3},"
                      " {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f4,%f5,%f6,%f7};", "block-scaled matrix element types");
    expect_load_error(" mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3},"
                      " {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f4,%f5,%f6,%f7};", "block-scaled matrix element types");
    expect_load_error(" elect.sync %r1, 0xffffffff;", "elect.sync writes d|p");
    /* each bad line reports its own error, also after an earlier one */
    expect_load_error(" elect.sync %r1, 0xffffffff;\n setmaxnreg.sync.aligned.u32 240;\n griddepcontrol;",
                      "expected setmaxnreg.{inc,dec}.sync.aligned.u32 N");
    expect_load_error(" elect.sync %r1, 0xffffffff;\n setmaxnreg.sync.aligned.u32 240;\n griddepcontrol;",
                      "expected griddepcontrol.wait or .launch_dependents");
}
END_TEST


/* ---- bulk copies (tests/kernels/hopper.cu) ----------------------------------- */

static void run_grid(kemu_kernel *k, unsigned grid, unsigned block, unsigned cluster, void **args)
{
    kemu_error err;
    kemu_launch_config lc = {{grid, 1, 1}, {block, 1, 1}, {cluster, cluster ? 1 : 0, cluster ? 1 : 0}, 0, 0};
    ck_assert_msg(kemu_launch(k, &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
}

START_TEST(bulk_copies_hopper_cu)
{
    static const char *const files[] = {"hopper.sm_90a.O3.ptx", "hopper.sm_90a.G.ptx", "hopper.sm_90a.lineinfo.ptx"};
    float in[1024], out[1024];
    for (int i = 0; i < 1024; i++)
        in[i] = (float)i * 0.5f;
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        kemu_module *mod = load_kernel_file(files[fi]);
        uint64_t din = upload(in, sizeof in), dout = upload(NULL, sizeof out);
        void *args[] = {&din, &dout};
        /* cuda::memcpy_async (libcu++): a reversed, doubled tile per block */
        run_grid(find(mod, "bulk_memcpy_async"), 4, 256, 0, args);
        download(out, dout, sizeof out);
        for (int i = 0; i < 1024; i++)
            ck_assert_msg(out[i] == 2.0f * in[i / 256 * 256 + 255 - i % 256], "%s memcpy_async: out[%d] = %g",
                          files[fi], i, out[i]);
        /* expect_tx before the copy, two stages, bulk store back */
        run_grid(find(mod, "bulk_tma_style"), 2, 256, 0, args);
        download(out, dout, sizeof out);
        for (int i = 0; i < 1024; i++)
            ck_assert_msg(out[i] == in[i] + 1000.0f * (float)(i / 256 % 2), "%s tma_style: out[%d] = %g", files[fi], i,
                          out[i]);
        /* into the peer block's shared memory, signalling its mbarrier */
        run_grid(find(mod, "bulk_cluster_exchange"), 4, 256, 2, args);
        download(out, dout, sizeof out);
        for (int i = 0; i < 1024; i++)
            ck_assert_msg(out[i] == 3.0f * in[(i / 256 ^ 1) * 256 + i % 256], "%s cluster: out[%d] = %g", files[fi], i,
                          out[i]);
        release(din);
        release(dout);
        kemu_module_unload(mod);
    }
}
END_TEST

/* A kernel of one thread doing `body` with a 16-aligned global buffer %g, a
 * 16-aligned shared tile and an mbarrier initialized with one arrival. */
static void expect_bulk_fault(const char *body, const char *needle)
{
    char ptx[2048];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e(.param .u64 p)\n{\n"
             " .shared .align 16 .b8 tile[256];\n .shared .align 8 .b64 bar;\n"
             " .reg .b64 %%g, %%st;\n .reg .b32 %%t, %%b;\n ld.param.u64 %%g, [p];\n"
             " mov.u32 %%t, tile;\n mov.u32 %%b, bar;\n mbarrier.init.shared::cta.b64 [%%b], 1;\n%s\n ret;\n}\n",
             body);
    kemu_kernel *k = load(ptx, "e");
    uint64_t g = upload(NULL, 512);
    void *args[] = {&g};
    char msg[2048];
    ck_assert_int_eq(launch(k, 1, args, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, needle) != NULL, "fault lacks '%s': %s", needle, msg);
    release(g);
}

START_TEST(bulk_copy_errors)
{
    expect_bulk_fault(" cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%t], [%g], 24, [%b];",
                      "cp.async.bulk copies a multiple of 16 bytes, not 24");
    expect_bulk_fault(" add.u64 %g, %g, 8;\n"
                      " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%t], [%g], 32, [%b];",
                      "misaligned address");
    expect_bulk_fault(" cp.async.bulk.global.shared::cta.bulk_group [%g], [%t], 1024;",
                      "out-of-bounds shared load of 16 bytes at offset 256");
    expect_bulk_fault(" mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%b], 1048575;\n"
                      " mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%b], 1;",
                      "mbarrier transaction count out of range: 1048575 + 1 bytes");
    expect_bulk_fault(" mbarrier.arrive.shared::cta.b64 %st, [%b];\n mbarrier.arrive.shared::cta.b64 %st, [%b];\n"
                      " mbarrier.arrive.expect_tx.shared::cta.b64 %st, [%b], 16;\n"
                      " mbarrier.arrive.shared::cta.b64 %st, [%b];",
                      "more arrivals than expected");
    expect_load_error(" cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1],"
                      " [%a], 16, [%r2], %r3;", "multicast::cluster (not implemented yet)");
    expect_load_error(" cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1],"
                      " [%a, {%r2, %r3, %r4}], [%r3], {%r5};", "cp.async.bulk.tensor with .im2col (not implemented yet)");
    expect_load_error(" cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1],"
                      " [%a, {%r2}], [%r3];", "expected [tensor-map, {2 coordinates}]");
    expect_load_error(" cp.async.bulk.global.shared::cta.mbarrier::complete_tx::bytes [%a], [%r1], 16, [%r2];",
                      "cp.async.bulk copies global or shared::cta memory to shared::cta");
}
END_TEST


/* ---- tensor maps and cp.async.bulk.tensor ------------------------------------ */

START_TEST(tensor_map_encode_checks)
{
    _Alignas(64) uint8_t map[KEMU_TENSOR_MAP_BYTES];
    uint64_t dims[3] = {64, 10, 3}, strides[2] = {256, 2560};
    uint32_t box[3] = {16, 4, 2}, es[3] = {1, 1, 1};
    kemu_error err;
    ck_assert_int_eq(kemu_tensor_map_encode_tiled(map, KEMU_TMAP_FLOAT32, 3, 0x1000, dims, strides, box, es, 0, 2, 0, 0,
                                                  &err), KEMU_OK);
    struct { int dtype, rank, interleave, swizzle, oob; uint64_t addr; uint32_t box0; uint64_t stride0;
             kemu_status st; const char *needle; } bad[] = {
        {KEMU_TMAP_FLOAT32, 6, 0, 0, 0, 0x1000, 16, 256, KEMU_ERR_INVALID_ARGUMENT, "rank 6 is not 1 to 5"},
        {KEMU_TMAP_FLOAT32, 3, 0, 0, 0, 0x1008, 16, 256, KEMU_ERR_INVALID_ARGUMENT, "not 16-byte aligned"},
        {KEMU_TMAP_FLOAT32, 3, 0, 0, 0, 0x1000, 3, 256, KEMU_ERR_INVALID_ARGUMENT, "12 bytes (boxDim[0] * 4), not a multiple of 16"},
        {KEMU_TMAP_FLOAT32, 3, 0, 1, 0, 0x1000, 16, 256, KEMU_ERR_INVALID_ARGUMENT, "64 bytes, more than the 32-byte swizzle"},
        {KEMU_TMAP_FLOAT32, 3, 0, 0, 0, 0x1000, 300, 256, KEMU_ERR_INVALID_ARGUMENT, "boxDim[0] = 300 is not 1 to 256"},
        {KEMU_TMAP_FLOAT32, 3, 0, 0, 0, 0x1000, 16, 260, KEMU_ERR_INVALID_ARGUMENT, "globalStrides[0] = 260"},
        {KEMU_TMAP_INT32, 3, 0, 0, 1, 0x1000, 16, 256, KEMU_ERR_INVALID_ARGUMENT, "NaN out-of-bounds fill needs a floating-point"},
        {KEMU_TMAP_FLOAT32, 3, 1, 0, 0, 0x1000, 16, 256, KEMU_ERR_UNSUPPORTED, "interleaved layouts are not implemented"},
        {KEMU_TMAP_FLOAT32, 3, 0, 4, 0, 0x1000, 16, 256, KEMU_ERR_UNSUPPORTED, "the 128B atom variants"},
        {13, 3, 0, 0, 0, 0x1000, 16, 256, KEMU_ERR_UNSUPPORTED, "packed data types"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint32_t b2[3] = {bad[i].box0, 4, 2};
        uint64_t s2[2] = {bad[i].stride0, 2560};
        kemu_status st = kemu_tensor_map_encode_tiled(map, bad[i].dtype, (unsigned)bad[i].rank, bad[i].addr, dims, s2,
                                                      b2, es, bad[i].interleave, bad[i].swizzle, 0, bad[i].oob, &err);
        ck_assert_msg(st == bad[i].st && strstr(err.message, bad[i].needle), "case %zu: status %d: %s", i, st,
                      err.message);
    }
}
END_TEST

/* A 3-D box with element strides (every other element of dimensions 1
 * and 2) and the 64-byte swizzle, loaded with cp.async.bulk.tensor.3d by
 * one thread and read back by all through the swizzle; then faults for
 * a map kemu did not make, a rank that differs and misaligned shared memory. */
static const char tma3d_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry t(.param .align 64 .b8 map[128], .param .u64 out, .param .u32 x, .param .u32 y, .param .u32 z,"
    " .param .u32 misalign)\n{\n"
    " .shared .align 1024 .b8 tile[1024];\n .shared .align 8 .b64 bar;\n"
    " .reg .b64 %rd<8>;\n .reg .b32 %r<24>;\n .reg .pred %p<4>;\n .reg .f32 %f1;\n"
    " mov.b64 %rd1, map;\n cvta.param.u64 %rd2, %rd1;\n ld.param.u64 %rd3, [out];\n"
    " ld.param.u32 %r1, [x];\n ld.param.u32 %r2, [y];\n ld.param.u32 %r3, [z];\n ld.param.u32 %r20, [misalign];\n"
    " mov.u32 %r4, %tid.x;\n mov.u32 %r5, tile;\n add.u32 %r5, %r5, %r20;\n mov.u32 %r6, bar;\n"
    " setp.eq.u32 %p1, %r4, 0;\n"
    " @%p1 mbarrier.init.shared::cta.b64 [%r6], 1;\n bar.sync 0;\n"
    " @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r6], 512;\n"
    " @%p1 cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r5], [%rd2, {%r1, %r2, %r3}], [%r6];\n"
    "wait:\n mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r6], 0;\n @!%p2 bra wait;\n"
    /* element i of the dense 16x4x2 box: byte i*4, chunk bits XOR (bits 7-8) */
    " shl.b32 %r7, %r4, 2;\n add.u32 %r8, %r5, %r7;\n shr.u32 %r9, %r8, 7;\n and.b32 %r9, %r9, 3;\n"
    " shl.b32 %r9, %r9, 4;\n xor.b32 %r8, %r8, %r9;\n ld.shared.f32 %f1, [%r8];\n"
    " mul.wide.u32 %rd4, %r4, 4;\n add.u64 %rd5, %rd3, %rd4;\n st.global.f32 [%rd5], %f1;\n ret;\n}\n"
    ".visible .entry t2(.param .align 64 .b8 map[128])\n{\n"
    " .shared .align 1024 .b8 tile[1024];\n .shared .align 8 .b64 bar;\n .reg .b64 %rd<4>;\n .reg .b32 %r<8>;\n"
    " mov.b64 %rd1, map;\n cvta.param.u64 %rd2, %rd1;\n mov.u32 %r5, tile;\n mov.u32 %r6, bar;\n mov.u32 %r1, 0;\n"
    " mbarrier.init.shared::cta.b64 [%r6], 1;\n"
    " cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r5], [%rd2, {%r1, %r1}], [%r6];\n"
    " ret;\n}\n";

START_TEST(tensor_copy_3d)
{
    float host[3][10][64];
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 10; y++)
            for (int x = 0; x < 64; x++)
                host[z][y][x] = (float)(z * 10000 + y * 100 + x);
    uint64_t g = upload(host, sizeof host), out = upload(NULL, 128 * 4);
    _Alignas(64) uint8_t map[KEMU_TENSOR_MAP_BYTES];
    uint64_t dims[3] = {64, 10, 3}, strides[2] = {256, 2560};
    uint32_t box[3] = {16, 8, 4}, es[3] = {1, 2, 2}; /* 16 x ceil(8/2) x ceil(4/2) = 16 x 4 x 2 elements */
    kemu_error err;
    ck_assert_int_eq(kemu_tensor_map_encode_tiled(map, KEMU_TMAP_FLOAT32, 3, g, dims, strides, box, es, 0,
                                                  KEMU_TMAP_SWIZZLE_64B, 0, 0, &err), KEMU_OK);
    kemu_kernel *k = load(tma3d_ptx, "t");
    int32_t x = 52, y = 5, z = 1, misalign = 0;
    void *args[] = {map, &out, &x, &y, &z, &misalign};
    launch_ok(k, 128, args);
    float o[128];
    download(o, out, sizeof o);
    for (int i = 0; i < 128; i++) {
        int gx = x + i % 16, gy = y + 2 * (i / 16 % 4), gz = z + 2 * (i / 64);
        float want = gx < 64 && gy < 10 && gz < 3 ? host[gz][gy][gx] : 0.0f;
        ck_assert_msg(o[i] == want, "element %d (%d,%d,%d): %g, want %g", i, gx, gy, gz, o[i], want);
    }
    /* misaligned shared memory */
    misalign = 16;
    char msg[2048];
    ck_assert_int_eq(launch(k, 128, args, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "is not 128-byte aligned"), "%s", msg);
    /* a box whose innermost start is not 16-byte aligned (an H200 raises an
     * illegal instruction) */
    misalign = 0;
    x = 50;
    ck_assert_int_eq(launch(k, 128, args, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "illegal instruction: cp.async.bulk.tensor's innermost coordinate 50 times the element "
                              "size (4 bytes) is not a multiple of 16 bytes"), "%s", msg);
    x = -4;
    launch_ok(k, 128, args);
    /* a 3-D map used by a 2-D copy; bytes that are no map */
    kemu_kernel *k2 = load(tma3d_ptx, "t2");
    void *args2[] = {map};
    ck_assert_int_eq(launch(k2, 1, args2, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "cp.async.bulk.tensor.2d: the tensor map has 3 dimensions"), "%s", msg);
    /* a map with kemu's magic but a box the encoder never makes (offset 96:
     * the box sizes, src/vm/tensor_map.h) */
    uint16_t huge = 1000;
    memcpy(map + 96, &huge, 2);
    ck_assert_int_eq(launch(k2, 1, args2, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "are not a tensor map made by kemu"), "%s", msg);
    memset(map, 0x5a, sizeof map);
    ck_assert_int_eq(launch(k2, 1, args2, msg, sizeof msg), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(msg, "are not a tensor map made by kemu"), "%s", msg);
    release(g);
    release(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("matrix");
    TCase *tc = tcase_create("matrix");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, wmma_f16_all_layouts);
    tcase_add_test(tc, wmma_bf16_tf32_f64);
    tcase_add_test(tc, wmma_int8);
    tcase_add_test(tc, wmma_f64_rounding_modes);
    tcase_add_test(tc, wmma_satfinite_float);
    tcase_add_test(tc, wmma_fragment_layout);
    tcase_add_test(tc, wmma_elementwise_on_fragments);
    tcase_add_test(tc, mma_sync_float);
    tcase_add_test(tc, mma_sync_int8);
    tcase_add_test(tc, mma_sync_fp8);
    tcase_add_test(tc, mma_sync_special_values);
    tcase_add_test(tc, mma_sync_extreme_accumulators);
    tcase_add_test(tc, ldmatrix_layouts);
    tcase_add_test(tc, stmatrix_layouts);
    tcase_add_test(tc, matrix_faults);
    tcase_add_test(tc, matrix_load_errors);
    tcase_add_test(tc, mma_cu_kernels);
    tcase_add_test(tc, wgmma_hopper_cu);
    tcase_add_test(tc, wgmma_base_offset_faults);
    tcase_add_test(tc, wgmma_load_errors);
    tcase_add_test(tc, bulk_copies_hopper_cu);
    tcase_add_test(tc, bulk_copy_errors);
    tcase_add_test(tc, tensor_map_encode_checks);
    tcase_add_test(tc, tensor_copy_3d);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
