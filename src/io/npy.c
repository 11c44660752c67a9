/* Reader and writer for NumPy's .npy format (versions 1.0, 2.0, 3.0).
 * The header is a Python dict literal; it is parsed here by a small,
 * bounds-checked scanner, never evaluated. Input is untrusted (the reader is
 * fuzzed): every length is checked before use and every failure is a one-line
 * message naming the file. Writes go through a temporary file and a rename.
 * Layout facts come from NumPy's format specification (numpy.lib.format). */
#define _POSIX_C_SOURCE 200809L
#include "io/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Headers of files we cannot size (pipes) are capped at this length. */
#define NPY_UNSIZED_HEADER_LIMIT (16u << 20)

typedef struct {
    io_dtype dtype;
    int swap; /* stored with the opposite byte order to the host */
    int fortran_order;
    int ndim;
    size_t shape[IO_MAX_DIMS];
    size_t count;
} npy_header;

static void set_error(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    int n = snprintf(err, errlen, "%s: ", name);
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static int host_is_little_endian(void)
{
    uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

static void swap_bytes(void *data, size_t count, size_t size)
{
    unsigned char *p = data;
    if (size < 2)
        return;
    for (size_t i = 0; i < count; i++, p += size) {
        for (size_t lo = 0, hi = size - 1; lo < hi; lo++, hi--) {
            unsigned char t = p[lo];
            p[lo] = p[hi];
            p[hi] = t;
        }
    }
}

/* Copies text into out with non-printable bytes shown as '?', at most
 * outlen-1 bytes, so quoted file content keeps messages on one line. */
static void printable_copy(char *out, size_t outlen, const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < outlen; i++) {
        unsigned char c = (unsigned char)text[i];
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
}

/* ------------------------------------------------------- header parsing */

typedef struct {
    const char *text;
    size_t len, pos;
    char *problem;
    size_t problem_len;
} header_scanner;

static int scan_fail(header_scanner *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->problem, s->problem_len, fmt, ap);
    va_end(ap);
    return -1;
}

static void scan_skip_space(header_scanner *s)
{
    while (s->pos < s->len) {
        char c = s->text[s->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        s->pos++;
    }
}

/* Returns the next non-space character without consuming it, or 0 at end. */
static char scan_peek(header_scanner *s)
{
    scan_skip_space(s);
    return s->pos < s->len ? s->text[s->pos] : '\0';
}

static int scan_expect(header_scanner *s, char c, const char *where)
{
    if (scan_peek(s) != c)
        return scan_fail(s, "malformed header: expected '%c' %s", c, where);
    s->pos++;
    return 0;
}

/* Scans a quoted Python string without escapes; start and length give its
 * contents inside the header text. */
static int scan_string(header_scanner *s, const char **start, size_t *length, const char *what)
{
    char quote = scan_peek(s);
    if (quote != '\'' && quote != '"')
        return scan_fail(s, "malformed header: expected a quoted %s", what);
    size_t begin = ++s->pos;
    while (s->pos < s->len && s->text[s->pos] != quote) {
        if (s->text[s->pos] == '\n')
            break;
        if (s->text[s->pos] == '\\')
            return scan_fail(s, "malformed header: unsupported character in %s", what);
        s->pos++;
    }
    if (s->pos >= s->len || s->text[s->pos] != quote)
        return scan_fail(s, "malformed header: unterminated %s", what);
    *start = s->text + begin;
    *length = s->pos - begin;
    s->pos++;
    return 0;
}

static int scan_word(header_scanner *s, const char *word)
{
    size_t n = strlen(word);
    if (s->len - s->pos < n || memcmp(s->text + s->pos, word, n) != 0)
        return 0;
    size_t after = s->pos + n;
    if (after < s->len) {
        char c = s->text[after];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
            return 0;
    }
    s->pos = after;
    return 1;
}

/* Maps a descr string to a dtype and byte order. */
static int parse_descr(header_scanner *s, const char *text, size_t len, npy_header *h)
{
    char shown[40];
    printable_copy(shown, sizeof shown, text, len);
    size_t i = 0;
    char order = '=';
    if (len > 0 && (text[0] == '<' || text[0] == '>' || text[0] == '|' || text[0] == '='))
        order = text[i++];
    if (i >= len)
        return scan_fail(s, "unsupported dtype descr '%s'", shown);
    char kind = text[i++];
    if (kind == 'O')
        return scan_fail(s, "object arrays are not supported (descr '%s')", shown);
    size_t size = 0;
    if (i >= len)
        return scan_fail(s, "unsupported dtype descr '%s'", shown);
    for (; i < len; i++) {
        if (text[i] < '0' || text[i] > '9' || size > 1000)
            return scan_fail(s, "unsupported dtype descr '%s'", shown);
        size = size * 10 + (size_t)(text[i] - '0');
    }
    int found = 1;
    io_dtype dt = IO_DT_U8;
    switch (kind) {
    case 'b':
        found = size == 1;
        dt = IO_DT_BOOL;
        break;
    case 'i':
        if (size == 1)
            dt = IO_DT_I8;
        else if (size == 2)
            dt = IO_DT_I16;
        else if (size == 4)
            dt = IO_DT_I32;
        else if (size == 8)
            dt = IO_DT_I64;
        else
            found = 0;
        break;
    case 'u':
        if (size == 1)
            dt = IO_DT_U8;
        else if (size == 2)
            dt = IO_DT_U16;
        else if (size == 4)
            dt = IO_DT_U32;
        else if (size == 8)
            dt = IO_DT_U64;
        else
            found = 0;
        break;
    case 'f':
        if (size == 2)
            dt = IO_DT_F16;
        else if (size == 4)
            dt = IO_DT_F32;
        else if (size == 8)
            dt = IO_DT_F64;
        else
            found = 0;
        break;
    case 'V':
        /* ml_dtypes bfloat16 is saved as '<V2' (see npy.h) */
        found = size == 2;
        dt = IO_DT_BF16;
        break;
    default: found = 0; break;
    }
    if (!found)
        return scan_fail(s, "unsupported dtype descr '%s'", shown);
    h->dtype = dt;
    int stored_little = order == '<' || ((order == '=' || order == '|') && host_is_little_endian());
    h->swap = io_dtype_size(dt) > 1 && stored_little != host_is_little_endian();
    return 0;
}

/* Scans a shape tuple: "()", "(N,)", "(A, B)", optional trailing comma,
 * optional Python 2 'L' suffix. */
static int parse_shape(header_scanner *s, npy_header *h)
{
    if (scan_expect(s, '(', "to open 'shape'") != 0)
        return -1;
    int ndim = 0;
    size_t count = 1;
    int overflow = 0, has_zero = 0;
    for (;;) {
        char c = scan_peek(s);
        if (c == ')') {
            s->pos++;
            break;
        }
        if (c < '0' || c > '9')
            return scan_fail(s, "malformed header: 'shape' must be a tuple of non-negative integers");
        size_t value = 0;
        while (s->pos < s->len && s->text[s->pos] >= '0' && s->text[s->pos] <= '9') {
            size_t digit = (size_t)(s->text[s->pos] - '0');
            if (value > (SIZE_MAX - digit) / 10)
                return scan_fail(s, "shape overflows: a dimension is too large");
            value = value * 10 + digit;
            s->pos++;
        }
        if (s->pos < s->len && (s->text[s->pos] == 'L' || s->text[s->pos] == 'l'))
            s->pos++;
        if (ndim == IO_MAX_DIMS)
            return scan_fail(s, "too many dimensions (at most %d are supported)", IO_MAX_DIMS);
        h->shape[ndim++] = value;
        if (value == 0)
            has_zero = 1;
        else if (count > SIZE_MAX / value)
            overflow = 1;
        else
            count *= value;
        c = scan_peek(s);
        if (c == ',') {
            s->pos++;
        } else if (c != ')') {
            return scan_fail(s, "malformed header: expected ',' or ')' in 'shape'");
        }
    }
    /* a zero dimension makes the product 0 even if the others are huge */
    if (has_zero)
        count = 0;
    else if (overflow)
        return scan_fail(s, "shape overflows: element count does not fit in memory");
    h->ndim = ndim;
    for (int d = ndim; d < IO_MAX_DIMS; d++)
        h->shape[d] = 0;
    h->count = count;
    return 0;
}

/* Parses the header dict text (len bytes, not NUL-terminated). */
static int parse_header_text(const char *text, size_t len, npy_header *h, char *problem, size_t problem_len)
{
    header_scanner scanner = {text, len, 0, problem, problem_len};
    header_scanner *s = &scanner;
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    memset(h, 0, sizeof *h);
    if (scan_expect(s, '{', "at the start of the header dict") != 0)
        return -1;
    for (;;) {
        if (scan_peek(s) == '}') {
            s->pos++;
            break;
        }
        const char *key;
        size_t key_len;
        if (scan_string(s, &key, &key_len, "key") != 0)
            return -1;
        if (scan_expect(s, ':', "after a key") != 0)
            return -1;
        if (key_len == 5 && !memcmp(key, "descr", 5)) {
            if (have_descr++)
                return scan_fail(s, "malformed header: duplicate key 'descr'");
            char c = scan_peek(s);
            if (c == '[')
                return scan_fail(s, "structured dtypes are not supported");
            const char *descr;
            size_t descr_len;
            if (scan_string(s, &descr, &descr_len, "'descr' value") != 0)
                return -1;
            if (parse_descr(s, descr, descr_len, h) != 0)
                return -1;
        } else if (key_len == 13 && !memcmp(key, "fortran_order", 13)) {
            if (have_fortran++)
                return scan_fail(s, "malformed header: duplicate key 'fortran_order'");
            scan_skip_space(s);
            if (scan_word(s, "True"))
                h->fortran_order = 1;
            else if (scan_word(s, "False"))
                h->fortran_order = 0;
            else
                return scan_fail(s, "malformed header: 'fortran_order' must be True or False");
        } else if (key_len == 5 && !memcmp(key, "shape", 5)) {
            if (have_shape++)
                return scan_fail(s, "malformed header: duplicate key 'shape'");
            if (parse_shape(s, h) != 0)
                return -1;
        } else {
            char shown[40];
            printable_copy(shown, sizeof shown, key, key_len);
            return scan_fail(s, "malformed header: unexpected key '%s'", shown);
        }
        char c = scan_peek(s);
        if (c == ',') {
            s->pos++;
        } else if (c == '}') {
            s->pos++;
            break;
        } else {
            return scan_fail(s, "malformed header: expected ',' or '}' after a value");
        }
    }
    scan_skip_space(s);
    if (s->pos != s->len)
        return scan_fail(s, "malformed header: unexpected text after the dict");
    if (!have_descr)
        return scan_fail(s, "malformed header: missing key 'descr'");
    if (!have_fortran)
        return scan_fail(s, "malformed header: missing key 'fortran_order'");
    if (!have_shape)
        return scan_fail(s, "malformed header: missing key 'shape'");
    if (h->count > SIZE_MAX / io_dtype_size(h->dtype))
        return scan_fail(s, "shape overflows: data size does not fit in memory");
    return 0;
}

/* Parses the fixed preamble: magic, version, header length. prefix holds
 * `available` bytes (at most 12). On success *header_offset and
 * *header_length locate the header text. */
static int parse_preamble(const unsigned char *prefix, size_t available, size_t *header_offset,
                          size_t *header_length, char *problem, size_t problem_len)
{
    if (available < sizeof npy_magic || memcmp(prefix, npy_magic, sizeof npy_magic) != 0) {
        snprintf(problem, problem_len, "not a .npy file (bad magic)");
        return -1;
    }
    if (available < 8) {
        snprintf(problem, problem_len, "truncated header (file ends inside the version)");
        return -1;
    }
    unsigned major = prefix[6], minor = prefix[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        snprintf(problem, problem_len, "unsupported .npy format version %u.%u", major, minor);
        return -1;
    }
    size_t length_bytes = major == 1 ? 2 : 4;
    if (available < 8 + length_bytes) {
        snprintf(problem, problem_len, "truncated header (file ends inside the header length)");
        return -1;
    }
    size_t length = 0;
    for (size_t i = 0; i < length_bytes; i++)
        length |= (size_t)prefix[8 + i] << (8 * i);
    *header_offset = 8 + length_bytes;
    *header_length = length;
    return 0;
}

/* Rearranges count elements of `size` bytes from Fortran order (src) into C
 * order (dst). */
static void fortran_to_c(const unsigned char *src, unsigned char *dst, const npy_header *h, size_t size)
{
    size_t fortran_stride[IO_MAX_DIMS], index[IO_MAX_DIMS] = {0};
    size_t stride = 1;
    for (int d = 0; d < h->ndim; d++) {
        fortran_stride[d] = stride;
        stride *= h->shape[d];
    }
    size_t offset = 0;
    for (size_t c = 0; c < h->count; c++) {
        memcpy(dst + c * size, src + offset * size, size);
        for (int d = h->ndim - 1; d >= 0; d--) {
            offset += fortran_stride[d];
            if (++index[d] < h->shape[d])
                break;
            offset -= fortran_stride[d] * h->shape[d];
            index[d] = 0;
        }
    }
}

/* Turns raw file bytes (already in *data, h->count elements) into an
 * io_array: byte order, Fortran order, bool normalization. Takes ownership
 * of data. */
static int finish_array(const npy_header *h, void *data, io_array *out, const char *name, char *err,
                        size_t errlen)
{
    size_t size = io_dtype_size(h->dtype);
    if (h->swap)
        swap_bytes(data, h->count, size);
    if (h->fortran_order && h->ndim > 1 && h->count > 1) {
        void *c_order = malloc(h->count * size);
        if (!c_order) {
            free(data);
            set_error(err, errlen, name, "out of memory converting Fortran order");
            return -1;
        }
        fortran_to_c(data, c_order, h, size);
        free(data);
        data = c_order;
    }
    if (h->dtype == IO_DT_BOOL) {
        unsigned char *bytes = data;
        for (size_t i = 0; i < h->count; i++)
            bytes[i] = bytes[i] != 0;
    }
    memset(out, 0, sizeof *out);
    out->dtype = h->dtype;
    out->ndim = h->ndim;
    memcpy(out->shape, h->shape, sizeof out->shape);
    out->count = h->count;
    out->data = data;
    return 0;
}

static void describe_shape(const npy_header *h, char *buf, size_t len)
{
    io_array view = {.ndim = h->ndim};
    memcpy(view.shape, h->shape, sizeof view.shape);
    if (io_shape_format(&view, buf, len) != 0 && len > 4)
        snprintf(buf, len, "...");
}

static void data_truncated_error(const npy_header *h, size_t have, const char *name, char *err, size_t errlen)
{
    char shape[200];
    describe_shape(h, shape, sizeof shape);
    set_error(err, errlen, name, "data truncated: shape %s of %s needs %zu bytes, file has %zu", shape,
              io_dtype_name(h->dtype), h->count * io_dtype_size(h->dtype), have);
}

int io_npy_read_mem(const void *buf, size_t len, io_array *out, char *err, size_t errlen)
{
    const char *name = "<memory>";
    const unsigned char *bytes = buf;
    char problem[256];
    size_t header_offset, header_length;
    out->data = NULL;
    if (!buf && len) {
        set_error(err, errlen, name, "no buffer");
        return -1;
    }
    if (parse_preamble(bytes, len < 12 ? len : 12, &header_offset, &header_length, problem, sizeof problem) != 0) {
        set_error(err, errlen, name, "%s", problem);
        return -1;
    }
    if (header_length > len - header_offset) {
        set_error(err, errlen, name, "truncated header (header says %zu bytes, file has %zu after the preamble)",
                  header_length, len - header_offset);
        return -1;
    }
    npy_header h;
    if (parse_header_text((const char *)bytes + header_offset, header_length, &h, problem, sizeof problem) != 0) {
        set_error(err, errlen, name, "%s", problem);
        return -1;
    }
    size_t data_offset = header_offset + header_length;
    size_t data_bytes = h.count * io_dtype_size(h.dtype);
    if (data_bytes > len - data_offset) {
        data_truncated_error(&h, len - data_offset, name, err, errlen);
        return -1;
    }
    void *data = malloc(data_bytes ? data_bytes : 1);
    if (!data) {
        set_error(err, errlen, name, "out of memory reading %zu bytes", data_bytes);
        return -1;
    }
    if (data_bytes)
        memcpy(data, bytes + data_offset, data_bytes);
    return finish_array(&h, data, out, name, err, errlen);
}

/* Reads up to len bytes; returns the number read (short only at end of file
 * or on error, which *failed reports). */
static size_t read_fully(FILE *file, void *buf, size_t len, int *failed)
{
    size_t total = 0;
    while (total < len) {
        size_t n = fread((unsigned char *)buf + total, 1, len - total, file);
        if (n == 0) {
            *failed = ferror(file) != 0;
            break;
        }
        total += n;
    }
    return total;
}

int io_npy_read(const char *path, io_array *out, char *err, size_t errlen)
{
    out->data = NULL;
    if (!path) {
        set_error(err, errlen, "(null)", "no path given");
        return -1;
    }
    FILE *file = fopen(path, "rb");
    if (!file) {
        set_error(err, errlen, path, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    int have_stat = fstat(fileno(file), &st) == 0;
    int sized = have_stat && S_ISREG(st.st_mode);
    if (have_stat && S_ISDIR(st.st_mode)) {
        fclose(file);
        set_error(err, errlen, path, "is a directory");
        return -1;
    }
    size_t file_size = sized ? (size_t)st.st_size : SIZE_MAX;
    unsigned char prefix[12];
    char problem[256];
    int failed = 0;
    char *header = NULL;
    void *data = NULL;
    size_t available = read_fully(file, prefix, sizeof prefix, &failed);
    size_t header_offset, header_length;
    if (failed)
        goto io_error;
    if (parse_preamble(prefix, available, &header_offset, &header_length, problem, sizeof problem) != 0)
        goto problem;
    if (sized && header_length > file_size - header_offset) {
        snprintf(problem, sizeof problem, "truncated header (header says %zu bytes, file has %zu after the preamble)",
                 header_length, file_size - header_offset);
        goto problem;
    }
    if (!sized && header_length > NPY_UNSIZED_HEADER_LIMIT) {
        snprintf(problem, sizeof problem, "header length %zu is implausibly large", header_length);
        goto problem;
    }
    header = malloc(header_length ? header_length : 1);
    if (!header) {
        snprintf(problem, sizeof problem, "out of memory reading a %zu-byte header", header_length);
        goto problem;
    }
    /* the preamble read may have consumed the first header bytes (v1.0) */
    size_t already = available - header_offset;
    if (already > header_length)
        already = header_length;
    memcpy(header, prefix + header_offset, already);
    size_t got = already + read_fully(file, header + already, header_length - already, &failed);
    if (failed)
        goto io_error;
    if (got < header_length) {
        snprintf(problem, sizeof problem, "truncated header (header says %zu bytes, file has %zu after the preamble)",
                 header_length, got);
        goto problem;
    }
    npy_header h;
    if (parse_header_text(header, header_length, &h, problem, sizeof problem) != 0)
        goto problem;
    free(header);
    header = NULL;

    size_t data_bytes = h.count * io_dtype_size(h.dtype);
    size_t extra = available - header_offset - already; /* data bytes read with the preamble */
    size_t data_offset = header_offset + header_length;
    if (sized && data_bytes > file_size - data_offset) {
        fclose(file);
        data_truncated_error(&h, file_size - data_offset, path, err, errlen);
        return -1;
    }
    data = malloc(data_bytes ? data_bytes : 1);
    if (!data) {
        snprintf(problem, sizeof problem, "out of memory reading %zu bytes of data", data_bytes);
        goto problem;
    }
    if (extra > data_bytes)
        extra = data_bytes;
    memcpy(data, prefix + header_offset + already, extra);
    got = extra + read_fully(file, (unsigned char *)data + extra, data_bytes - extra, &failed);
    if (failed)
        goto io_error;
    if (got < data_bytes) {
        free(data);
        fclose(file);
        data_truncated_error(&h, got, path, err, errlen);
        return -1;
    }
    fclose(file);
    return finish_array(&h, data, out, path, err, errlen);

io_error:
    snprintf(problem, sizeof problem, "read error: %s", strerror(errno));
problem:
    free(header);
    free(data);
    fclose(file);
    set_error(err, errlen, path, "%s", problem);
    return -1;
}

/* -------------------------------------------------------------- writing */

static const char *descr_for(io_dtype dt)
{
    switch (dt) {
    case IO_DT_BOOL: return "|b1";
    case IO_DT_I8: return "|i1";
    case IO_DT_I16: return "<i2";
    case IO_DT_I32: return "<i4";
    case IO_DT_I64: return "<i8";
    case IO_DT_U8: return "|u1";
    case IO_DT_U16: return "<u2";
    case IO_DT_U32: return "<u4";
    case IO_DT_U64: return "<u8";
    case IO_DT_F16: return "<f2";
    case IO_DT_BF16: return "<V2"; /* what ml_dtypes writes for bfloat16 */
    case IO_DT_F32: return "<f4";
    case IO_DT_F64: return "<f8";
    default: return NULL;
    }
}

static int write_all(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes the element data little-endian, swapping through a bounce buffer
 * on a big-endian host. */
static int write_data(int fd, const io_array *a)
{
    size_t size = io_dtype_size(a->dtype);
    if (host_is_little_endian() || size == 1)
        return write_all(fd, a->data, a->count * size);
    unsigned char bounce[4096];
    size_t per_chunk = sizeof bounce / size;
    for (size_t done = 0; done < a->count; done += per_chunk) {
        size_t n = a->count - done < per_chunk ? a->count - done : per_chunk;
        memcpy(bounce, (const unsigned char *)a->data + done * size, n * size);
        swap_bytes(bounce, n, size);
        if (write_all(fd, bounce, n * size) != 0)
            return -1;
    }
    return 0;
}

/* Builds the complete preamble + header (padded to a multiple of 64 bytes,
 * ending in '\n') into a malloc'd buffer. */
static unsigned char *build_header(const io_array *a, size_t *total_out)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr_for(a->dtype));
    for (int d = 0; d < a->ndim; d++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, d ? " %zu," : "%zu,", a->shape[d]);
    if (a->ndim > 1)
        n--; /* NumPy writes (2, 3) but (3,) */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t dict_len = (size_t)n;
    size_t prefix = 10;
    size_t total = (prefix + dict_len + 1 + 63) / 64 * 64;
    if (total - prefix > 65535) {
        prefix = 12;
        total = (prefix + dict_len + 1 + 63) / 64 * 64;
    }
    unsigned char *buf = malloc(total);
    if (!buf)
        return NULL;
    size_t header_len = total - prefix;
    memcpy(buf, npy_magic, sizeof npy_magic);
    buf[6] = prefix == 10 ? 1 : 2;
    buf[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(header_len >> (8 * i));
    memcpy(buf + prefix, dict, dict_len);
    memset(buf + prefix + dict_len, ' ', total - prefix - dict_len - 1);
    buf[total - 1] = '\n';
    *total_out = total;
    return buf;
}

/* The .npy header of a, after checking that a can be written (NULL with
 * "PATH: problem" in err otherwise). */
static unsigned char *checked_header(const char *path, const io_array *a, size_t *total, char *err, size_t errlen)
{
    if (!path) {
        set_error(err, errlen, "(null)", "no path given");
        return NULL;
    }
    if (!descr_for(a->dtype)) {
        set_error(err, errlen, path, "cannot write: invalid dtype %d", (int)a->dtype);
        return NULL;
    }
    if (a->ndim < 0 || a->ndim > IO_MAX_DIMS) {
        set_error(err, errlen, path, "cannot write: invalid ndim %d", a->ndim);
        return NULL;
    }
    size_t count = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] != 0 && count > SIZE_MAX / a->shape[d]) {
            set_error(err, errlen, path, "cannot write: shape overflows");
            return NULL;
        }
        count *= a->shape[d];
    }
    if (count != a->count) {
        set_error(err, errlen, path, "cannot write: count %zu does not match the shape (%zu elements)", a->count,
                  count);
        return NULL;
    }
    if (count > SIZE_MAX / io_dtype_size(a->dtype)) {
        set_error(err, errlen, path, "cannot write: data size overflows");
        return NULL;
    }
    if (count && !a->data) {
        set_error(err, errlen, path, "cannot write: array has no data");
        return NULL;
    }
    unsigned char *header = build_header(a, total);
    if (!header)
        set_error(err, errlen, path, "cannot write: out of memory");
    return header;
}


int io_npy_write_in_place(const char *path, const io_array *a, char *err, size_t errlen)
{
    size_t header_total;
    unsigned char *header = checked_header(path, a, &header_total, err, errlen);
    if (!header)
        return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        set_error(err, errlen, path, "cannot open: %s", strerror(errno));
        free(header);
        return -1;
    }
    int failed = write_all(fd, header, header_total) != 0 || write_data(fd, a) != 0;
    int saved_errno = errno;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    free(header);
    if (failed)
        set_error(err, errlen, path, "write failed: %s", strerror(saved_errno));
    return failed ? -1 : 0;
}

int io_npy_stage(const char *path, const io_array *a, char **staged, char *err, size_t errlen)
{
    *staged = NULL;
    static atomic_uint temp_counter;
    size_t header_total;
    unsigned char *header = checked_header(path, a, &header_total, err, errlen);
    if (!header)
        return -1;

    size_t temp_len = strlen(path) + 64;
    char *temp = malloc(temp_len);
    if (!temp) {
        free(header);
        set_error(err, errlen, path, "cannot write: out of memory");
        return -1;
    }
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(temp, temp_len, "%s.tmp-%ld-%u", path, (long)getpid(), atomic_fetch_add(&temp_counter, 1));
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        set_error(err, errlen, path, "cannot create temporary file: %s", strerror(errno));
        free(header);
        free(temp);
        return -1;
    }
    struct stat existing;
    if (stat(path, &existing) == 0 && S_ISREG(existing.st_mode))
        (void)fchmod(fd, existing.st_mode & 07777);

    int failed = write_all(fd, header, header_total) != 0 || write_data(fd, a) != 0 || fsync(fd) != 0;
    int saved_errno = errno;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    free(header);
    if (failed) {
        unlink(temp);
        free(temp);
        set_error(err, errlen, path, "write failed: %s", strerror(saved_errno));
        return -1;
    }
    *staged = temp;
    return 0;
}

int io_npy_commit(char *staged, const char *path, char *err, size_t errlen)
{
    int rc = 0;
    if (rename(staged, path) != 0) {
        set_error(err, errlen, path, "write failed: %s", strerror(errno));
        unlink(staged);
        rc = -1;
    }
    free(staged);
    return rc;
}

void io_npy_discard(char *staged)
{
    if (!staged)
        return;
    unlink(staged);
    free(staged);
}

int io_npy_write(const char *path, const io_array *a, char *err, size_t errlen)
{
    char *staged;
    if (io_npy_stage(path, a, &staged, err, errlen))
        return -1;
    return io_npy_commit(staged, path, err, errlen);
}
