/* ARG forms of `kemu run`: in:, out:, inout:, scratch:, scalars TYPE:VALUE
 * and bytes:HEX / bytes@PATH, and tensor maps over buffers (tmap=...).
 * Errors are one line naming the argument. */
#include "cli/args.h"
#include "io/npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const gens[] = {"arange", "zeros", "ones", "fill=", "rand"};

/* A generator is GEN...:DTYPE:SHAPE with GEN one of gens; text without a
 * ':' is a file name, so that in:ones.npy or in:random.npy read those
 * files (and in:randn:f32:4 is still an unknown generator). */
static int is_gen(const char *s)
{
    if (!strchr(s, ':'))
        return 0;
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        if (!strncmp(s, gens[i], strlen(gens[i])))
            return 1;
    return 0;
}

int cli_arg_is_buffer(const cli_arg *a)
{
    return a->kind == ARG_IN || a->kind == ARG_OUT || a->kind == ARG_INOUT || a->kind == ARG_SCRATCH;
}

/* "GEN:DTYPE:SHAPE" -> generated array */
static int parse_generated(const char *spec, io_array *arr, char *err, size_t errlen)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *c2 = strrchr(buf, ':');
    if (!c2) {
        snprintf(err, errlen, "expected GEN:DTYPE:SHAPE, got '%s'", spec);
        return -1;
    }
    *c2 = 0;
    char *c1 = strrchr(buf, ':');
    if (!c1) {
        snprintf(err, errlen, "expected GEN:DTYPE:SHAPE, got '%s'", spec);
        return -1;
    }
    *c1 = 0;
    const char *gen = buf, *dtype = c1 + 1, *shape = c2 + 1;
    memset(arr, 0, sizeof *arr);
    io_dtype dt;
    if (io_dtype_parse(dtype, &dt)) {
        snprintf(err, errlen, "unknown dtype '%s' (f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool)", dtype);
        return -1;
    }
    arr->dtype = dt;
    if (io_shape_parse(shape, arr, err, errlen) || io_array_alloc(arr, err, errlen))
        return -1;
    if (io_array_generate(arr, gen, err, errlen)) {
        io_array_free(arr);
        return -1;
    }
    return 0;
}

/* "DTYPE:SHAPE" -> uninitialized array */
static int parse_uninit(const char *spec, io_uninit_mode mode, io_array *arr, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *c = strchr(buf, ':');
    if (!c) {
        snprintf(err, errlen, "expected DTYPE:SHAPE, got '%s'", spec);
        return -1;
    }
    *c = 0;
    memset(arr, 0, sizeof *arr);
    io_dtype dt;
    if (io_dtype_parse(buf, &dt)) {
        snprintf(err, errlen, "unknown dtype '%s' (f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool)", buf);
        return -1;
    }
    arr->dtype = dt;
    if (io_shape_parse(c + 1, arr, err, errlen) || io_array_alloc(arr, err, errlen))
        return -1;
    io_fill_uninit(arr->data, arr->count, dt, mode);
    return 0;
}

static int parse_scalar(const char *type, const char *value, cli_arg *a, char *err, size_t errlen)
{
    struct { const char *n; unsigned size; int kind; } types[] = {
        {"u8", 1, 0}, {"u16", 2, 0}, {"u32", 4, 0}, {"u64", 8, 0},
        {"s8", 1, 1}, {"s16", 2, 1}, {"s32", 4, 1}, {"s64", 8, 1},
        {"b8", 1, 0}, {"b16", 2, 0}, {"b32", 4, 0}, {"b64", 8, 0},
        {"f16", 2, 2}, {"bf16", 2, 3}, {"f32", 4, 4}, {"f64", 8, 5},
    };
    int t = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].n, type))
            t = (int)i;
    if (t < 0)
        return 1; /* not a scalar type */
    a->kind = ARG_SCALAR;
    a->size = types[t].size;
    int kind = types[t].kind;
    unsigned bits = types[t].size * 8;
    char *end;
    errno = 0;
    if (!*value) {
        snprintf(err, errlen, "missing value in '%s:'", type);
        return -1;
    }
    uint64_t v = 0;
    int is_hex = value[0] == '0' && (value[1] == 'x' || value[1] == 'X');
    /* for float types, 0x digits alone are raw bits (f32:0x3fc00000); a hex
     * float literal with a '.' or a binary exponent (f32:0x1.8p0) is a value */
    if (is_hex && kind >= 2 && strpbrk(value + 2, ".pP"))
        is_hex = 0;
    if (kind <= 1 || is_hex) {
        if (kind == 1 && !is_hex) {
            long long s = strtoll(value, &end, 0);
            if (*end || errno) goto bad;
            long long lo = bits == 64 ? INT64_MIN : -(1ll << (bits - 1)), hi = bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
            if (s < lo || s > hi) {
                snprintf(err, errlen, "%s does not fit in %s", value, type);
                return -1;
            }
            v = (uint64_t)s;
        } else {
            if (value[0] == '-') goto bad;
            unsigned long long u = strtoull(value, &end, 0);
            if (*end || errno) goto bad;
            if (bits < 64 && u >> bits) {
                snprintf(err, errlen, "%s does not fit in %s", value, type);
                return -1;
            }
            v = u;
        }
    } else {
        /* like NumPy and Python's float(): a literal past the range of
         * double gives +-inf, one below it 0 or a subnormal (ERANGE is
         * not an error here) */
        double d = strtod(value, &end);
        if (*end || end == value) goto bad;
        if (kind == 2) v = io_double_to_f16(d);
        else if (kind == 3) v = io_double_to_bf16(d);
        else if (kind == 4) { float f = (float)d; uint32_t b; memcpy(&b, &f, 4); v = b; }
        else memcpy(&v, &d, 8);
    }
    memcpy(a->value, &v, a->size);
    return 0;
bad:
    snprintf(err, errlen, "'%s' is not a valid %s value", value, type);
    return -1;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* "64x32" into v (at most 5 values >= 1); returns the count, or 0. */
static unsigned parse_dims(const char *s, uint32_t *v)
{
    unsigned n = 0;
    while (*s && n < 5) {
        char *end;
        unsigned long x = strtoul(s, &end, 10);
        if (end == s || x == 0 || x > 65536)
            return 0;
        v[n++] = (uint32_t)x;
        if (*end == 'x')
            s = end + 1;
        else if (*end == 0)
            return n;
        else
            return 0;
    }
    return 0;
}

/* The options of tmap=OPTIONS: (up to the first ':'); *rest gets the buffer form. */
static int parse_tmap(const char *spec, kemu_plan_tensor_map *t, const char **rest, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    if (!colon) {
        snprintf(err, errlen, "expected tmap=BOX[,swizzle=32|64|128|none][,fill=nan][,estride=S][,dtype=tf32]:BUFFER");
        return -1;
    }
    *rest = colon + 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(colon - spec), spec);
    char *save = NULL, *box = strtok_r(buf, ",", &save);
    if (!box || !(t->rank = parse_dims(box, t->box))) {
        snprintf(err, errlen, "tmap: '%s' is not a box shape (1 to 5 sizes like 64x32)", box ? box : "");
        return -1;
    }
    for (unsigned i = 0; i < t->rank; i++)
        t->element_strides[i] = 1;
    for (char *o = strtok_r(NULL, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
        if (!strcmp(o, "swizzle=none")) t->swizzle = KEMU_TMAP_SWIZZLE_NONE;
        else if (!strcmp(o, "swizzle=32")) t->swizzle = KEMU_TMAP_SWIZZLE_32B;
        else if (!strcmp(o, "swizzle=64")) t->swizzle = KEMU_TMAP_SWIZZLE_64B;
        else if (!strcmp(o, "swizzle=128")) t->swizzle = KEMU_TMAP_SWIZZLE_128B;
        else if (!strcmp(o, "fill=nan")) t->nan_fill = 1;
        else if (!strcmp(o, "fill=zero")) t->nan_fill = 0;
        else if (!strcmp(o, "dtype=tf32")) t->tf32 = 1;
        else if (!strncmp(o, "estride=", 8)) {
            uint32_t e[5];
            if (parse_dims(o + 8, e) != t->rank) {
                snprintf(err, errlen, "tmap: estride=%s needs %u sizes, like the box", o + 8, t->rank);
                return -1;
            }
            memcpy(t->element_strides, e, sizeof e);
        } else {
            snprintf(err, errlen, "tmap: unknown option '%s' (swizzle=32|64|128|none, fill=nan|zero, estride=S, "
                                  "dtype=tf32)", o);
            return -1;
        }
    }
    return 0;
}

int cli_arg_parse(const char *text, io_uninit_mode uninit, cli_arg *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->text = text;
    if (!strncmp(text, "tmap=", 5)) {
        kemu_plan_tensor_map t;
        memset(&t, 0, sizeof t);
        const char *rest;
        if (parse_tmap(text + 5, &t, &rest, err, errlen))
            return -1;
        if (strncmp(rest, "in:", 3) && strncmp(rest, "out:", 4) && strncmp(rest, "inout:", 6) &&
            strncmp(rest, "scratch:", 8)) {
            snprintf(err, errlen, "tmap=...: the tensor is a buffer (in:, out:, inout: or scratch:), not '%s'", rest);
            return -1;
        }
        if (cli_arg_parse(rest, uninit, a, err, errlen))
            return -1;
        a->text = text;
        a->tmap = t;
        a->has_tmap = 1;
        return 0;
    }
    if (!strncmp(text, "in:", 3)) {
        a->kind = ARG_IN;
        const char *rest = text + 3;
        if (is_gen(rest))
            return parse_generated(rest, &a->array, err, errlen);
        a->source_path = strdup(rest);
        return io_npy_read(rest, &a->array, err, errlen);
    }
    if (!strncmp(text, "out:", 4)) {
        a->kind = ARG_OUT;
        const char *rest = text + 4;
        /* PATH:DTYPE:SHAPE — the path may itself contain ':' */
        const char *c2 = strrchr(rest, ':');
        const char *c1 = NULL;
        for (const char *p = rest; c2 && p < c2; p++)
            if (*p == ':')
                c1 = p;
        if (!c1 || c1 == rest) {
            snprintf(err, errlen, "expected out:PATH.npy:DTYPE:SHAPE");
            return -1;
        }
        a->out_path = strndup(rest, (size_t)(c1 - rest));
        return parse_uninit(c1 + 1, uninit, &a->array, err, errlen);
    }
    if (!strncmp(text, "inout:", 6)) {
        a->kind = ARG_INOUT;
        const char *rest = text + 6;
        const char *c = strrchr(rest, ':');
        if (!c || c == rest || !c[1]) {
            snprintf(err, errlen, "expected inout:SOURCE:OUT.npy");
            return -1;
        }
        a->out_path = strdup(c + 1);
        char *src = strndup(rest, (size_t)(c - rest));
        int rc;
        if (is_gen(src)) {
            rc = parse_generated(src, &a->array, err, errlen);
            free(src);
        } else {
            a->source_path = src;
            rc = io_npy_read(src, &a->array, err, errlen);
        }
        return rc;
    }
    if (!strncmp(text, "scratch:", 8)) {
        a->kind = ARG_SCRATCH;
        return parse_uninit(text + 8, uninit, &a->array, err, errlen);
    }
    if (!strncmp(text, "bytes:", 6)) {
        a->kind = ARG_BYTES;
        const char *h = text + 6;
        if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
            h += 2;
        size_t n = strlen(h);
        if (n == 0 || n % 2) {
            snprintf(err, errlen, "bytes:HEX needs an even number of hex digits");
            return -1;
        }
        a->bytes = malloc(n / 2);
        if (!a->bytes) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n / 2; i++) {
            int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                snprintf(err, errlen, "'%s' is not hexadecimal", h);
                return -1;
            }
            a->bytes[i] = (unsigned char)(hi * 16 + lo);
        }
        a->size = n / 2;
        return 0;
    }
    if (!strncmp(text, "bytes@", 6)) {
        a->kind = ARG_BYTES;
        FILE *f = fopen(text + 6, "rb");
        if (!f) {
            snprintf(err, errlen, "%s: cannot open: %s", text + 6, strerror(errno));
            return -1;
        }
        /* no parameter list holds more than 32764 bytes: stop reading well
         * after that, so that bytes@/dev/zero ends */
        const size_t most = 65536;
        size_t cap = 4096;
        a->bytes = malloc(cap);
        size_t n = 0, r;
        while (a->bytes && (r = fread(a->bytes + n, 1, cap - n, f)) > 0) {
            n += r;
            if (n > most) {
                fclose(f);
                snprintf(err, errlen, "%s: more than %zu bytes; a kernel's parameters hold at most 32764", text + 6,
                         most);
                return -1;
            }
            if (n == cap) {
                unsigned char *nb = realloc(a->bytes, cap * 2);
                if (!nb) { free(a->bytes); a->bytes = NULL; break; }
                a->bytes = nb;
                cap *= 2;
            }
        }
        fclose(f);
        if (!a->bytes) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        a->size = n;
        return 0;
    }
    const char *c = strchr(text, ':');
    if (c) {
        char type[16];
        size_t tl = (size_t)(c - text);
        if (tl < sizeof type) {
            memcpy(type, text, tl);
            type[tl] = 0;
            int rc = parse_scalar(type, c + 1, a, err, errlen);
            if (rc <= 0)
                return rc;
        }
    }
    snprintf(err, errlen, "'%s' is not an argument (in:, out:, inout:, scratch:, TYPE:VALUE, bytes:HEX, bytes@PATH, tmap=)", text);
    return -1;
}

void cli_arg_free(cli_arg *a)
{
    io_array_free(&a->array);
    free(a->source_path);
    free(a->out_path);
    free(a->bytes);
    memset(a, 0, sizeof *a);
}
