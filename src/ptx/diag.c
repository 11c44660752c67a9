/* PTX diagnostics (diag.h): escaped, whole error records within the
 * size of a kemu_error message, ending with "too many errors, stopping"
 * when some were left out. */
#include "ptx/diag.h"

#include <stdio.h>
#include <string.h>

/* Longest source excerpt shown, in bytes of the source, and the most
 * bytes a file name and a message take once escaped: so that one record
 * (each byte escaped in 4) and the closing line always fit the budget. */
#define SOURCE_WINDOW 120
#define NAME_MAX_BYTES 256
#define MESSAGE_MAX_BYTES 300

/* The report must fit kemu_error.message with its NUL. */
#define REPORT_BUDGET (sizeof(((kemu_error *)0)->message) - 1)

/* Decodes one UTF-8 sequence at p (r bytes left): its length, or 0 when
 * the bytes are not a valid, shortest-form sequence. */
static size_t utf8_decode(const unsigned char *p, size_t r, uint32_t *cp)
{
    size_t n;
    uint32_t c, min;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2, c = p[0] & 0x1f, min = 0x80;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3, c = p[0] & 0x0f, min = 0x800;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4, c = p[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (r < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* Code points shown escaped although valid: C1 controls, invisible
 * formatting and the bidirectional overrides that reorder what a reader
 * sees ("Trojan source"). */
static int invisible(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
           (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

/* One character at p: writes what to show into out (NUL-terminated) and
 * its display width into *cols; returns the bytes it takes. */
static size_t escape_one(const unsigned char *p, size_t r, int keep_tabs, char out[16], size_t *cols)
{
    uint32_t c;
    size_t n = utf8_decode(p, r, &c);
    if (n == 1 && ((c >= 0x20 && c < 0x7f) || (c == '\t' && keep_tabs))) {
        out[0] = (char)c;
        out[1] = 0;
        *cols = 1;
        return 1;
    }
    if (n > 1 && !invisible(c)) {
        memcpy(out, p, n);
        out[n] = 0;
        *cols = 1;
        return n;
    }
    if (n > 1)
        snprintf(out, 16, "\\u%04X", (unsigned)c);
    else if (p[0] == '\t')
        snprintf(out, 16, "\\t");
    else
        snprintf(out, 16, "\\x%02x", p[0]);
    *cols = strlen(out);
    return n > 1 ? n : 1;
}

size_t ptx_escape(util_buffer *b, const char *s, size_t n, int keep_tabs)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t cols = 0;
    for (size_t i = 0; i < n;) {
        char out[16];
        size_t w;
        i += escape_one(p + i, n - i, keep_tabs, out, &w);
        util_buffer_append(b, out, strlen(out));
        cols += w;
    }
    return cols;
}

/* Moves i forward past UTF-8 continuation bytes (to a character start). */
static size_t char_start(const unsigned char *s, size_t n, size_t i)
{
    for (int k = 0; k < 3 && i < n && (s[i] & 0xc0) == 0x80; k++)
        i++;
    return i;
}

void ptx_diag_source(util_buffer *b, const char *src, size_t srclen, int line, int col)
{
    if (!src || line < 1)
        return;
    const char *s = src, *e = src + srclen;
    for (int l = 1; l < line && s < e; s++)
        if (*s == '\n')
            l++;
    const char *q = s;
    while (q < e && *q != '\n' && *q != '\r')
        q++;
    const unsigned char *ls = (const unsigned char *)s;
    size_t ll = (size_t)(q - s), at = col > 1 ? (size_t)col - 1 : 0;
    if (at > ll)
        at = ll;
    /* a window of the line around the column */
    size_t ws = 0, we = ll;
    if (ll > SOURCE_WINDOW) {
        ws = at > SOURCE_WINDOW / 2 ? at - SOURCE_WINDOW / 2 : 0;
        if (ws + SOURCE_WINDOW > ll)
            ws = ll - SOURCE_WINDOW;
        ws = char_start(ls, ll, ws);
        we = ws + SOURCE_WINDOW < ll ? char_start(ls, ll, ws + SOURCE_WINDOW) : ll;
    }
    util_buffer_append(b, "  ", 2);
    if (ws > 0)
        util_buffer_append(b, "...", 3);
    ptx_escape(b, s + ws, we - ws, 1);
    if (we < ll)
        util_buffer_append(b, "...", 3);
    util_buffer_append(b, "\n  ", 3);
    if (ws > 0)
        util_buffer_append(b, "   ", 3);
    for (size_t i = ws; i < at && i < we;) {
        char out[16];
        size_t w;
        i += escape_one(ls + i, we - i, 1, out, &w);
        if (out[0] == '\t')
            util_buffer_append(b, "\t", 1);
        else
            for (size_t k = 0; k < w; k++)
                util_buffer_append(b, " ", 1);
    }
    util_buffer_append(b, "^\n", 2);
}

void ptx_diag_init(ptx_diag *d, const char *filename, const char *src, size_t srclen)
{
    memset(d, 0, sizeof *d);
    d->filename = filename ? filename : "<ptx>";
    d->src = src;
    d->srclen = srclen;
}

/* Appends s escaped, at most max bytes of it: when longer, its head and
 * "..." (or "..." and its tail when keep_tail is set), cut between
 * characters. */
static void put_capped(util_buffer *b, const char *s, size_t max, int keep_tail)
{
    util_buffer t = {0};
    ptx_escape(&t, s, strlen(s), 0);
    if (!t.data)
        return;
    if (t.len <= max) {
        util_buffer_append(b, t.data, t.len);
    } else if (keep_tail) {
        size_t from = char_start((const unsigned char *)t.data, t.len, t.len - (max - 3));
        util_buffer_append(b, "...", 3);
        util_buffer_append(b, t.data + from, t.len - from);
    } else {
        size_t to = max - 3;
        while (to > 0 && ((unsigned char)t.data[to] & 0xc0) == 0x80)
            to--;
        util_buffer_append(b, t.data, to);
        util_buffer_append(b, "...", 3);
    }
    util_buffer_free(&t);
}

/* The closing line, for when errors were left out. */
static void stop_line(const ptx_diag *d, int shown, util_buffer *b)
{
    put_capped(b, d->filename, NAME_MAX_BYTES, 1);
    util_buffer_printf(b, ": too many errors, stopping (%d shown)\n", shown);
}

int ptx_diag_error(ptx_diag *d, int line, int col, const char *msg)
{
    if (d->nerrors++ == 0) {
        d->first_line = line;
        d->first_col = col;
    }
    if (d->full)
        return 0;
    if (d->nshown >= PTX_DIAG_MAX_ERRORS) {
        d->full = 1;
        return 0;
    }
    util_buffer rec = {0}, stop = {0};
    put_capped(&rec, d->filename, NAME_MAX_BYTES, 1);
    if (line > 0)
        util_buffer_printf(&rec, ":%d:%d", line, col);
    util_buffer_append(&rec, ": error: ", 9);
    put_capped(&rec, msg, MESSAGE_MAX_BYTES, 0);
    util_buffer_append(&rec, "\n", 1);
    if (line > 0)
        ptx_diag_source(&rec, d->src, d->srclen, line, col);
    /* room for this record and, after it, the closing line */
    stop_line(d, d->nshown + 1, &stop);
    int fits = rec.data && stop.data && d->text.len + rec.len + stop.len <= REPORT_BUDGET;
    if (fits) {
        util_buffer_append(&d->text, rec.data, rec.len);
        d->nshown++;
    } else {
        d->full = 1;
    }
    util_buffer_free(&rec);
    util_buffer_free(&stop);
    return fits;
}

const char *ptx_diag_finish(ptx_diag *d)
{
    if (!d->nerrors)
        return NULL;
    if (d->nerrors > d->nshown) {
        util_buffer stop = {0};
        stop_line(d, d->nshown, &stop);
        if (stop.data && d->text.len + stop.len <= REPORT_BUDGET)
            util_buffer_append(&d->text, stop.data, stop.len);
        util_buffer_free(&stop);
    }
    return d->text.data ? d->text.data : "error";
}

void ptx_diag_free(ptx_diag *d)
{
    util_buffer_free(&d->text);
}
