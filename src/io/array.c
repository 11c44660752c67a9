/* Typed host arrays: dtype table, shape text, allocation, value generators,
 * uninitialized-memory patterns, statistics and tolerant comparison.
 * This file only computes on memory; it does no file I/O (see npy.c) and
 * never exits: every failure is a return value plus a message. */
#include "io/array.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- dtypes */

static const struct {
    const char *name;
    size_t size;
    int is_float;
    int is_signed;
} dtype_table[IO_DT_COUNT] = {
    [IO_DT_BOOL] = {"bool", 1, 0, 0}, [IO_DT_I8] = {"i8", 1, 0, 1},
    [IO_DT_I16] = {"i16", 2, 0, 1},   [IO_DT_I32] = {"i32", 4, 0, 1},
    [IO_DT_I64] = {"i64", 8, 0, 1},   [IO_DT_U8] = {"u8", 1, 0, 0},
    [IO_DT_U16] = {"u16", 2, 0, 0},   [IO_DT_U32] = {"u32", 4, 0, 0},
    [IO_DT_U64] = {"u64", 8, 0, 0},   [IO_DT_F16] = {"f16", 2, 1, 1},
    [IO_DT_BF16] = {"bf16", 2, 1, 1}, [IO_DT_F32] = {"f32", 4, 1, 1},
    [IO_DT_F64] = {"f64", 8, 1, 1},
};

static int dtype_valid(io_dtype dt) { return (unsigned)dt < (unsigned)IO_DT_COUNT; }

int io_dtype_parse(const char *name, io_dtype *out)
{
    if (!name)
        return -1;
    for (int i = 0; i < IO_DT_COUNT; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (io_dtype)i;
            return 0;
        }
    }
    return -1;
}

const char *io_dtype_name(io_dtype dt) { return dtype_valid(dt) ? dtype_table[dt].name : "?"; }
size_t io_dtype_size(io_dtype dt) { return dtype_valid(dt) ? dtype_table[dt].size : 0; }
int io_dtype_is_float(io_dtype dt) { return dtype_valid(dt) && dtype_table[dt].is_float; }
int io_dtype_is_signed(io_dtype dt) { return dtype_valid(dt) && dtype_table[dt].is_signed; }

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------- half precision */

static uint64_t double_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static double bits_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint32_t float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float bits_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* Rounds a double to a binary format with `precision` significand bits
 * (implicit bit included), `exponent_bits` exponent bits and bias
 * 2^(exponent_bits-1)-1, to nearest with ties to even. Returns the bit
 * pattern of the narrow format. Works for f16 (11, 5), bf16 (8, 8) and
 * f32 (24, 8). */
static uint64_t round_double_to_format(double value, int precision, int exponent_bits)
{
    uint64_t bits = double_bits(value);
    uint64_t sign = (bits >> 63) << (precision - 1 + exponent_bits);
    int exponent_field = (int)((bits >> 52) & 0x7ff);
    uint64_t fraction = bits & ((UINT64_C(1) << 52) - 1);
    uint64_t exponent_all_ones = (UINT64_C(1) << exponent_bits) - 1;
    uint64_t infinity = exponent_all_ones << (precision - 1);

    if (exponent_field == 0x7ff) {
        if (fraction == 0)
            return sign | infinity;
        /* quiet NaN with no payload */
        return sign | infinity | (UINT64_C(1) << (precision - 2));
    }
    int bias = (1 << (exponent_bits - 1)) - 1;
    int min_exponent = 1 - bias;
    uint64_t significand;
    int exponent; /* value = significand * 2^(exponent - 52) */
    if (exponent_field == 0) {
        significand = fraction;
        exponent = -1022;
    } else {
        significand = fraction | (UINT64_C(1) << 52);
        exponent = exponent_field - 1023;
    }
    int effective_exponent = exponent < min_exponent ? min_exponent : exponent;
    int shift = 53 - precision + (effective_exponent - exponent);
    uint64_t quotient;
    if (shift >= 54) {
        quotient = 0; /* below half the smallest subnormal */
    } else {
        quotient = significand >> shift;
        uint64_t remainder = significand & ((UINT64_C(1) << shift) - 1);
        uint64_t half = UINT64_C(1) << (shift - 1);
        if (remainder > half || (remainder == half && (quotient & 1)))
            quotient++;
    }
    /* For subnormals effective_exponent + bias - 1 is 0, and a quotient that
     * rounded up to 2^(precision-1) carries into the exponent field, as it
     * should. */
    if (effective_exponent + bias - 1 >= (int)exponent_all_ones)
        return sign | infinity;
    uint64_t magnitude = ((uint64_t)(effective_exponent + bias - 1) << (precision - 1)) + quotient;
    if (magnitude >= infinity)
        magnitude = infinity;
    return sign | magnitude;
}

uint16_t io_double_to_f16(double value) { return (uint16_t)round_double_to_format(value, 11, 5); }
uint16_t io_double_to_bf16(double value) { return (uint16_t)round_double_to_format(value, 8, 8); }

static uint32_t double_to_f32_bits(double value)
{
    if (value != value)
        return (uint32_t)round_double_to_format(value, 24, 8); /* NaN: the quiet NaN without payload */
    float f = (float)value; /* the host rounds to nearest even, as round_double_to_format does */
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

double io_f16_to_double(uint16_t bits)
{
    int sign = bits >> 15;
    int exponent_field = (bits >> 10) & 0x1f;
    int fraction = bits & 0x3ff;
    double magnitude;
    if (exponent_field == 0x1f)
        magnitude = fraction ? NAN : INFINITY;
    else if (exponent_field == 0)
        magnitude = ldexp((double)fraction, -24);
    else
        magnitude = ldexp((double)(fraction | 0x400), exponent_field - 25);
    if (isnan(magnitude)) {
        /* keep sign and payload visible: widen like a hardware conversion */
        uint64_t out = ((uint64_t)sign << 63) | (UINT64_C(0x7ff) << 52) | ((uint64_t)fraction << 42) |
                       (UINT64_C(1) << 51);
        return bits_double(out);
    }
    return sign ? -magnitude : magnitude;
}

double io_bf16_to_double(uint16_t bits)
{
    /* bf16 is the top half of an f32 */
    return (double)bits_float((uint32_t)bits << 16);
}

/* --------------------------------------------------------------- shapes */

int io_shape_parse(const char *text, io_array *a, char *err, size_t errlen)
{
    if (!text || !*text) {
        set_error(err, errlen, "empty shape (expected N or AxBxC)");
        return -1;
    }
    size_t shape[IO_MAX_DIMS];
    int ndim = 0;
    size_t count = 1;
    const char *p = text;
    for (;;) {
        if (*p < '0' || *p > '9') {
            set_error(err, errlen, "bad shape '%s': expected a number at '%s'", text, p);
            return -1;
        }
        size_t value = 0;
        while (*p >= '0' && *p <= '9') {
            size_t digit = (size_t)(*p - '0');
            if (value > (SIZE_MAX - digit) / 10) {
                set_error(err, errlen, "bad shape '%s': dimension too large", text);
                return -1;
            }
            value = value * 10 + digit;
            p++;
        }
        if (value == 0) {
            set_error(err, errlen, "bad shape '%s': dimension %d is 0 (empty buffers are not allowed)",
                      text, ndim + 1);
            return -1;
        }
        if (ndim == IO_MAX_DIMS) {
            set_error(err, errlen, "bad shape '%s': more than %d dimensions", text, IO_MAX_DIMS);
            return -1;
        }
        if (count > SIZE_MAX / value) {
            set_error(err, errlen, "bad shape '%s': element count overflows", text);
            return -1;
        }
        count *= value;
        shape[ndim++] = value;
        if (*p == '\0')
            break;
        if (*p != 'x' && *p != 'X') {
            set_error(err, errlen, "bad shape '%s': unexpected '%c' (expected N or AxBxC)", text, *p);
            return -1;
        }
        p++;
    }
    a->ndim = ndim;
    for (int i = 0; i < IO_MAX_DIMS; i++)
        a->shape[i] = i < ndim ? shape[i] : 0;
    a->count = count;
    return 0;
}

int io_shape_format(const io_array *a, char *buf, size_t len)
{
    if (!buf || len == 0)
        return -1;
    if (a->ndim == 0)
        return (size_t)snprintf(buf, len, "scalar") < len ? 0 : -1;
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 0; d < a->ndim; d++) {
        int n = snprintf(buf + used, len - used, d ? "x%zu" : "%zu", a->shape[d]);
        if (n < 0 || (size_t)n >= len - used)
            return -1;
        used += (size_t)n;
    }
    return 0;
}

int io_array_alloc(io_array *a, char *err, size_t errlen)
{
    size_t size = io_dtype_size(a->dtype);
    if (size == 0) {
        set_error(err, errlen, "invalid dtype %d", (int)a->dtype);
        return -1;
    }
    if (a->count > SIZE_MAX / size) {
        set_error(err, errlen, "array of %zu %s elements is too large", a->count, io_dtype_name(a->dtype));
        return -1;
    }
    size_t bytes = a->count * size;
    void *data = malloc(bytes ? bytes : 1);
    if (!data) {
        set_error(err, errlen, "out of memory allocating %zu bytes", bytes);
        return -1;
    }
    a->data = data;
    return 0;
}

void io_array_free(io_array *a)
{
    if (!a)
        return;
    free(a->data);
    a->data = NULL;
}

/* ------------------------------------------------------- element stores */

/* Stores the low bits of an integer (two's complement wrap) as element i. */
static void store_integer_bits(io_array *a, size_t i, uint64_t value)
{
    unsigned char *base = a->data;
    switch (a->dtype) {
    case IO_DT_BOOL: base[i] = (unsigned char)(value != 0); break;
    case IO_DT_I8:
    case IO_DT_U8: base[i] = (unsigned char)value; break;
    case IO_DT_I16:
    case IO_DT_U16:
    case IO_DT_F16:
    case IO_DT_BF16: {
        uint16_t v = (uint16_t)value;
        memcpy(base + i * 2, &v, 2);
        break;
    }
    case IO_DT_I32:
    case IO_DT_U32:
    case IO_DT_F32: {
        uint32_t v = (uint32_t)value;
        memcpy(base + i * 4, &v, 4);
        break;
    }
    default: memcpy(base + i * 8, &value, 8); break;
    }
}

/* Returns the bit pattern of value in float dtype dt, rounded to nearest
 * even. */
static uint64_t encode_float(io_dtype dt, double value)
{
    switch (dt) {
    case IO_DT_F16: return io_double_to_f16(value);
    case IO_DT_BF16: return io_double_to_bf16(value);
    case IO_DT_F32: return double_to_f32_bits(value);
    default: return double_bits(value);
    }
}

/* Loads the raw bits of element i, zero-extended. */
static uint64_t load_bits(const io_array *a, size_t i)
{
    const unsigned char *base = a->data;
    switch (io_dtype_size(a->dtype)) {
    case 1: return base[i];
    case 2: {
        uint16_t v;
        memcpy(&v, base + i * 2, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, base + i * 4, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, base + i * 8, 8);
        return v;
    }
    }
}

static int integer_bits(io_dtype dt) { return (int)io_dtype_size(dt) * 8; }

/* Sign-extends the low `width` bits of raw. */
static int64_t sign_extend(uint64_t raw, int width)
{
    if (width == 64)
        return (int64_t)raw;
    uint64_t sign_bit = UINT64_C(1) << (width - 1);
    uint64_t low = raw & ((sign_bit << 1) - 1);
    return (int64_t)(low ^ sign_bit) - (int64_t)sign_bit;
}

/* ----------------------------------------------------------- generators */

static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Parses an unsigned magnitude: 0x hex, 0b binary or decimal. Sets *radix_prefixed
 * when hex/binary was used. Returns 0, or -1 for junk or overflow. */
static int parse_magnitude(const char *p, uint64_t *out, int *radix_prefixed)
{
    unsigned base = 10;
    *radix_prefixed = 0;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
        *radix_prefixed = 1;
    } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
        base = 2;
        p += 2;
        *radix_prefixed = 1;
    }
    if (!*p)
        return -1;
    uint64_t value = 0;
    for (; *p; p++) {
        unsigned digit;
        if (*p >= '0' && *p <= '9')
            digit = (unsigned)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            digit = (unsigned)(*p - 'a' + 10);
        else if (*p >= 'A' && *p <= 'F')
            digit = (unsigned)(*p - 'A' + 10);
        else
            return -1;
        if (digit >= base)
            return -1;
        if (value > (UINT64_MAX - digit) / base)
            return -1;
        value = value * base + digit;
    }
    *out = value;
    return 0;
}

/* Parses V for fill=V into raw element bits for an integer or bool dtype. */
static int parse_integer_fill(io_dtype dt, const char *text, uint64_t *out, char *err, size_t errlen)
{
    if (dt == IO_DT_BOOL) {
        if (!strcmp(text, "1") || !strcmp(text, "true") || !strcmp(text, "True")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(text, "0") || !strcmp(text, "false") || !strcmp(text, "False")) {
            *out = 0;
            return 0;
        }
        set_error(err, errlen, "bad fill value '%s' for bool (expected 0, 1, true or false)", text);
        return -1;
    }
    int negative = 0;
    const char *p = text;
    if (*p == '+' || *p == '-') {
        negative = *p == '-';
        p++;
    }
    uint64_t magnitude;
    int radix_prefixed;
    if (parse_magnitude(p, &magnitude, &radix_prefixed) != 0) {
        set_error(err, errlen, "bad fill value '%s' for %s (expected an integer)", text, io_dtype_name(dt));
        return -1;
    }
    int width = integer_bits(dt);
    uint64_t all_ones = width == 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
    if (io_dtype_is_signed(dt)) {
        uint64_t max_positive = all_ones >> 1;
        if (negative) {
            if (magnitude > max_positive + 1)
                goto out_of_range;
            *out = (0 - magnitude) & all_ones;
            return 0;
        }
        if (magnitude > (radix_prefixed && text[0] != '+' ? all_ones : max_positive))
            goto out_of_range;
        *out = magnitude;
        return 0;
    }
    if (negative && magnitude != 0)
        goto out_of_range;
    if (magnitude > all_ones)
        goto out_of_range;
    *out = magnitude;
    return 0;
out_of_range:
    set_error(err, errlen, "fill value '%s' is out of range for %s", text, io_dtype_name(dt));
    return -1;
}

/* Parses V for fill=V into element bits for a float dtype. */
static int parse_float_fill(io_dtype dt, const char *text, uint64_t *out, char *err, size_t errlen)
{
    char *end;
    if (!*text || (*text >= '\t' && *text <= '\r') || *text == ' ')
        goto bad;
    if (dt == IO_DT_F32) {
        float f = strtof(text, &end);
        if (*end)
            goto bad;
        *out = float_bits(f);
        return 0;
    }
    double d = strtod(text, &end);
    if (*end)
        goto bad;
    *out = encode_float(dt, d);
    return 0;
bad:
    set_error(err, errlen, "bad fill value '%s' for %s (expected a number, inf or nan)", text,
              io_dtype_name(dt));
    return -1;
}

static void generate_rand(io_array *a, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t i = 0; i < a->count; i++) {
        uint64_t z = splitmix64_next(&state);
        switch (a->dtype) {
        case IO_DT_BOOL: store_integer_bits(a, i, z >> 63); break;
        case IO_DT_F64: store_integer_bits(a, i, double_bits(ldexp((double)(z >> 11), -53))); break;
        case IO_DT_F32: store_integer_bits(a, i, float_bits(ldexpf((float)(z >> 40), -24))); break;
        case IO_DT_F16: store_integer_bits(a, i, io_double_to_f16(ldexp((double)(z >> 53), -11))); break;
        case IO_DT_BF16: store_integer_bits(a, i, io_double_to_bf16(ldexp((double)(z >> 56), -8))); break;
        default: store_integer_bits(a, i, z); break;
        }
    }
}

static void fill_bits(io_array *a, uint64_t bits)
{
    for (size_t i = 0; i < a->count; i++)
        store_integer_bits(a, i, bits);
}

int io_array_generate(io_array *a, const char *gen, char *err, size_t errlen)
{
    if (!dtype_valid(a->dtype)) {
        set_error(err, errlen, "invalid dtype %d", (int)a->dtype);
        return -1;
    }
    int is_float = io_dtype_is_float(a->dtype);
    enum { GEN_ZEROS, GEN_ONES, GEN_ARANGE, GEN_FILL, GEN_RAND } kind;
    uint64_t fill_value = 0, seed = 0;
    if (!gen) {
        set_error(err, errlen, "missing generator");
        return -1;
    } else if (!strcmp(gen, "zeros")) {
        kind = GEN_ZEROS;
    } else if (!strcmp(gen, "ones")) {
        kind = GEN_ONES;
    } else if (!strcmp(gen, "arange")) {
        kind = GEN_ARANGE;
    } else if (!strncmp(gen, "fill=", 5)) {
        kind = GEN_FILL;
        int rc = is_float ? parse_float_fill(a->dtype, gen + 5, &fill_value, err, errlen)
                          : parse_integer_fill(a->dtype, gen + 5, &fill_value, err, errlen);
        if (rc != 0)
            return -1;
    } else if (!strcmp(gen, "rand")) {
        kind = GEN_RAND;
    } else if (!strncmp(gen, "rand=", 5)) {
        kind = GEN_RAND;
        int radix_prefixed;
        if (parse_magnitude(gen + 5, &seed, &radix_prefixed) != 0) {
            set_error(err, errlen, "bad seed in '%s' (expected an unsigned 64-bit integer)", gen);
            return -1;
        }
    } else {
        set_error(err, errlen, "unknown generator '%s' (expected arange, zeros, ones, fill=V, rand or rand=SEED)",
                  gen);
        return -1;
    }

    /* everything that can fail is checked above, so a buffer allocated here
     * is never left half-filled */
    if (!a->data && io_array_alloc(a, err, errlen) != 0)
        return -1;

    switch (kind) {
    case GEN_ZEROS: memset(a->data, 0, a->count * io_dtype_size(a->dtype)); break;
    case GEN_ONES:
        fill_bits(a, is_float ? encode_float(a->dtype, 1.0) : 1);
        break;
    case GEN_FILL: fill_bits(a, fill_value); break;
    case GEN_ARANGE:
        for (size_t i = 0; i < a->count; i++) {
            if (is_float)
                store_integer_bits(a, i, encode_float(a->dtype, (double)i));
            else if (a->dtype == IO_DT_BOOL)
                store_integer_bits(a, i, i & 1);
            else
                store_integer_bits(a, i, (uint64_t)i);
        }
        break;
    case GEN_RAND: generate_rand(a, seed); break;
    }
    return 0;
}

/* ------------------------------------------------------- uninit pattern */

void io_fill_uninit_bytes(void *data, size_t nbytes, io_uninit_mode mode)
{
    if (!data || nbytes == 0)
        return;
    int byte = mode == IO_UNINIT_NAN ? 0xFF : mode == IO_UNINIT_PATTERN ? 0xCD : 0x00;
    memset(data, byte, nbytes);
}

void io_fill_uninit(void *data, size_t count, io_dtype dt, io_uninit_mode mode)
{
    if (!data || count == 0 || !dtype_valid(dt))
        return;
    if (mode != IO_UNINIT_NAN) {
        io_fill_uninit_bytes(data, count * io_dtype_size(dt), mode);
        return;
    }
    uint64_t bits;
    switch (dt) {
    case IO_DT_BOOL: bits = 1; break;
    case IO_DT_I8: bits = INT8_MAX; break;
    case IO_DT_I16: bits = INT16_MAX; break;
    case IO_DT_I32: bits = INT32_MAX; break;
    case IO_DT_I64: bits = INT64_MAX; break;
    case IO_DT_U8: bits = UINT8_MAX; break;
    case IO_DT_U16: bits = UINT16_MAX; break;
    case IO_DT_U32: bits = UINT32_MAX; break;
    case IO_DT_U64: bits = UINT64_MAX; break;
    case IO_DT_F16:
    case IO_DT_BF16: bits = 0x7fff; break;
    case IO_DT_F32: bits = 0x7fffffff; break;
    default: bits = UINT64_C(0x7fffffffffffffff); break;
    }
    io_array view = {.dtype = dt, .count = count, .data = data};
    fill_bits(&view, bits);
}

/* ------------------------------------------------------ element reading */

static double element_to_double(const io_array *a, size_t i)
{
    uint64_t raw = load_bits(a, i);
    switch (a->dtype) {
    case IO_DT_BOOL: return raw != 0;
    case IO_DT_I8:
    case IO_DT_I16:
    case IO_DT_I32:
    case IO_DT_I64: return (double)sign_extend(raw, integer_bits(a->dtype));
    case IO_DT_U8:
    case IO_DT_U16:
    case IO_DT_U32:
    case IO_DT_U64: return (double)raw;
    case IO_DT_F16: return io_f16_to_double((uint16_t)raw);
    case IO_DT_BF16: return io_bf16_to_double((uint16_t)raw);
    case IO_DT_F32: return (double)bits_float((uint32_t)raw);
    default: return bits_double(raw);
    }
}

double io_array_get_f64(const io_array *a, size_t i)
{
    if (!a || !a->data || i >= a->count || !dtype_valid(a->dtype))
        return NAN;
    return element_to_double(a, i);
}

void io_array_stats(const io_array *a, io_stats *out)
{
    out->min = out->max = out->mean = NAN;
    out->nan_count = 0;
    out->count = a ? a->count : 0;
    if (!a || !a->data || !dtype_valid(a->dtype))
        return;
    double min = INFINITY, max = -INFINITY, sum = 0.0, compensation = 0.0;
    size_t seen = 0;
    for (size_t i = 0; i < a->count; i++) {
        double v = element_to_double(a, i);
        if (isnan(v)) {
            out->nan_count++;
            continue;
        }
        if (v < min)
            min = v;
        if (v > max)
            max = v;
        /* Neumaier summation */
        double t = sum + v;
        if (isfinite(t)) {
            if (fabs(sum) >= fabs(v))
                compensation += (sum - t) + v;
            else
                compensation += (v - t) + sum;
        }
        sum = t;
        seen++;
    }
    if (seen == 0)
        return;
    out->min = min;
    out->max = max;
    double total = isfinite(sum) ? sum + compensation : sum;
    out->mean = total / (double)seen;
}

/* ----------------------------------------------------------- comparison */

/* Maps float bits to a sign and magnitude where the magnitude orders the
 * absolute values; returns the ULP distance between two non-NaN values. */
static uint64_t ulp_distance(uint64_t x, uint64_t y, int width)
{
    uint64_t sign_bit = UINT64_C(1) << (width - 1);
    uint64_t magnitude_x = x & (sign_bit - 1), magnitude_y = y & (sign_bit - 1);
    int negative_x = (x & sign_bit) != 0, negative_y = (y & sign_bit) != 0;
    if (negative_x == negative_y)
        return magnitude_x > magnitude_y ? magnitude_x - magnitude_y : magnitude_y - magnitude_x;
    return magnitude_x + magnitude_y;
}

static int float_is_nan(uint64_t bits, io_dtype dt)
{
    switch (dt) {
    case IO_DT_F16: return (bits & 0x7fff) > 0x7c00;
    case IO_DT_BF16: return (bits & 0x7fff) > 0x7f80;
    case IO_DT_F32: return (bits & 0x7fffffff) > 0x7f800000;
    default: return (bits & UINT64_C(0x7fffffffffffffff)) > UINT64_C(0x7ff0000000000000);
    }
}

static void record_mismatch(io_compare_result *res, size_t i)
{
    if (res->n_first < 8)
        res->first_mismatch[res->n_first++] = i;
    res->mismatches++;
}

int io_array_compare(const io_array *a, const io_array *b, const io_compare_opts *opts,
                     io_compare_result *res, char *err, size_t errlen)
{
    static const io_compare_opts exact = {0, 0.0, 0.0, 0};
    if (!opts)
        opts = &exact;
    memset(res, 0, sizeof *res);
    if (!dtype_valid(a->dtype) || !dtype_valid(b->dtype)) {
        set_error(err, errlen, "invalid dtype");
        return -1;
    }
    if (a->dtype != b->dtype) {
        set_error(err, errlen, "dtype differs: %s vs %s", io_dtype_name(a->dtype), io_dtype_name(b->dtype));
        return -1;
    }
    int same_shape = a->ndim == b->ndim && a->count == b->count;
    for (int d = 0; same_shape && d < a->ndim; d++)
        same_shape = a->shape[d] == b->shape[d];
    if (!same_shape) {
        char shape_a[128], shape_b[128];
        io_shape_format(a, shape_a, sizeof shape_a);
        io_shape_format(b, shape_b, sizeof shape_b);
        set_error(err, errlen, "shape differs: %s vs %s", shape_a, shape_b);
        return -1;
    }
    if (a->count && (!a->data || !b->data)) {
        set_error(err, errlen, "array has no data");
        return -1;
    }
    io_dtype dt = a->dtype;
    int width = integer_bits(dt);
    if (!io_dtype_is_float(dt)) {
        int is_signed = io_dtype_is_signed(dt);
        for (size_t i = 0; i < a->count; i++) {
            uint64_t x = load_bits(a, i), y = load_bits(b, i);
            if (dt == IO_DT_BOOL) {
                x = x != 0;
                y = y != 0;
            }
            if (x == y)
                continue;
            uint64_t difference;
            if (is_signed) {
                int64_t sx = sign_extend(x, width), sy = sign_extend(y, width);
                difference = sx > sy ? (uint64_t)sx - (uint64_t)sy : (uint64_t)sy - (uint64_t)sx;
            } else {
                difference = x > y ? x - y : y - x;
            }
            if (difference > res->max_ulps)
                res->max_ulps = difference;
            record_mismatch(res, i);
        }
        return 0;
    }
    uint64_t exponent_mask; /* bits of +inf */
    switch (dt) {
    case IO_DT_F16: exponent_mask = 0x7c00; break;
    case IO_DT_BF16: exponent_mask = 0x7f80; break;
    case IO_DT_F32: exponent_mask = 0x7f800000; break;
    default: exponent_mask = UINT64_C(0x7ff0000000000000); break;
    }
    for (size_t i = 0; i < a->count; i++) {
        uint64_t x = load_bits(a, i), y = load_bits(b, i);
        int nan_x = float_is_nan(x, dt), nan_y = float_is_nan(y, dt);
        if (nan_x || nan_y) {
            if (nan_x && nan_y && (!opts->nan_strict || x == y))
                continue;
            record_mismatch(res, i);
            continue;
        }
        int finite = (x & exponent_mask) != exponent_mask && (y & exponent_mask) != exponent_mask;
        if (!finite) {
            if (x != y)
                record_mismatch(res, i);
            continue;
        }
        uint64_t distance = ulp_distance(x, y, width);
        if (distance > res->max_ulps)
            res->max_ulps = distance;
        if (distance <= opts->ulps)
            continue;
        double value_x = element_to_double(a, i), value_y = element_to_double(b, i);
        if (fabs(value_x - value_y) <= opts->atol + opts->rtol * fabs(value_y))
            continue;
        record_mismatch(res, i);
    }
    return 0;
}

void io_index_unflatten(const io_array *a, size_t flat, size_t *idx_out)
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        size_t extent = a->shape[d];
        if (extent == 0) {
            idx_out[d] = 0;
            continue;
        }
        idx_out[d] = flat % extent;
        flat /= extent;
    }
}

int io_format_element(const io_array *a, size_t i, char *buf, size_t len)
{
    if (!buf || len == 0)
        return -1;
    buf[0] = '\0';
    if (!a || !a->data || i >= a->count || !dtype_valid(a->dtype))
        return -1;
    uint64_t raw = load_bits(a, i);
    io_dtype dt = a->dtype;
    int n;
    if (dt == IO_DT_BOOL) {
        n = snprintf(buf, len, "%s", raw ? "true" : "false");
    } else if (!io_dtype_is_float(dt)) {
        if (io_dtype_is_signed(dt))
            n = snprintf(buf, len, "%" PRId64, sign_extend(raw, integer_bits(dt)));
        else
            n = snprintf(buf, len, "%" PRIu64, raw);
    } else if (float_is_nan(raw, dt)) {
        n = snprintf(buf, len, "nan(0x%0*" PRIx64 ")", integer_bits(dt) / 4, raw);
    } else {
        double v = element_to_double(a, i);
        if (isinf(v))
            n = snprintf(buf, len, "%s", v < 0 ? "-inf" : "inf");
        else
            n = snprintf(buf, len, dt == IO_DT_F64 ? "%.17g" : "%.9g", v);
    }
    return n >= 0 && (size_t)n < len ? 0 : -1;
}
