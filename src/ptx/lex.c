/* PTX lexer: identifiers (with %, $ and _), dotted directives and
 * modifiers (including `::` parts such as .shared::cluster), integers in
 * decimal, hex, octal and binary, floats (decimal, 0fXXXXXXXX and
 * 0dXXXXXXXXXXXXXXXX), strings and punctuation. Comments and
 * backslash-newline continuations are skipped. */
#include "ptx/lex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void lex_init(lex_state *s, const char *text, size_t len)
{
    s->text = s->p = text;
    s->end = text + len;
    s->line = 1;
    s->line_start = text;
    s->open_comment_line = s->open_comment_col = 0;
}

static int ident_start(int c) { return isalpha(c) || c == '_' || c == '$' || c == '%'; }
static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$'; }

static void skip_space(lex_state *s)
{
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '\n') {
            s->p++;
            s->line++;
            s->line_start = s->p;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            s->p++;
        } else if (c == '\\' && s->p + 1 < s->end && (s->p[1] == '\n' || s->p[1] == '\r')) {
            s->p++;
        } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '/') {
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else if (c == '/' && s->p + 1 < s->end && s->p[1] == '*') {
            int line = s->line, col = (int)(s->p - s->line_start) + 1;
            s->p += 2;
            while (s->p < s->end && !(*s->p == '*' && s->p + 1 < s->end && s->p[1] == '/')) {
                if (*s->p == '\n') {
                    s->line++;
                    s->line_start = s->p + 1;
                }
                s->p++;
            }
            if (s->p + 2 > s->end) {
                s->open_comment_line = line;
                s->open_comment_col = col;
            }
            s->p = s->p + 2 <= s->end ? s->p + 2 : s->end;
        } else if (c == '#' && (s->p == s->line_start)) {
            /* preprocessor-style lines (#line ...) are ignored */
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else {
            break;
        }
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void lex_number(lex_state *s, lex_token *t)
{
    const char *p = s->p;
    /* 0f / 0d hexadecimal float bit patterns */
    if (p[0] == '0' && p + 1 < s->end && (p[1] == 'f' || p[1] == 'F' || p[1] == 'd' || p[1] == 'D')) {
        int digits = (p[1] == 'f' || p[1] == 'F') ? 8 : 16;
        const char *q = p + 2;
        uint64_t v = 0;
        int n = 0;
        while (q < s->end && hexval(*q) >= 0) {
            v = v << 4 | (uint64_t)hexval(*q);
            q++;
            n++;
        }
        if (n != digits) {
            t->kind = LEX_ERROR;
            t->error = digits == 8 ? "a 0f float literal needs exactly 8 hex digits"
                                   : "a 0d double literal needs exactly 16 hex digits";
            s->p = q;
            return;
        }
        t->kind = LEX_FLOAT;
        t->fbits = v;
        t->is_f32 = digits == 8;
        s->p = q;
        return;
    }
    /* decimal floats: digits with '.' or exponent */
    const char *q = p;
    int is_float = 0;
    if (!(p[0] == '0' && p + 1 < s->end && (p[1] == 'x' || p[1] == 'X' || p[1] == 'b' || p[1] == 'B'))) {
        while (q < s->end && isdigit((unsigned char)*q))
            q++;
        if (q < s->end && *q == '.' && q + 1 < s->end && isdigit((unsigned char)q[1]))
            is_float = 1;
        else if (q < s->end && (*q == 'e' || *q == 'E') && q + 1 < s->end &&
                 (isdigit((unsigned char)q[1]) || q[1] == '-' || q[1] == '+'))
            is_float = 1;
    }
    if (is_float) {
        char buf[128];
        q = p;
        while (q < s->end && (isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' ||
                              ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))))
            q++;
        size_t n = (size_t)(q - p);
        if (n >= sizeof buf)
            n = sizeof buf - 1;
        memcpy(buf, p, n);
        buf[n] = 0;
        double d = strtod(buf, NULL);
        memcpy(&t->fbits, &d, 8);
        t->kind = LEX_FLOAT;
        t->is_f32 = 0;
        s->p = q;
        return;
    }
    uint64_t v = 0;
    int overflow = 0, ndig = 0;
    q = p;
    if (p[0] == '0' && p + 1 < s->end && (p[1] == 'x' || p[1] == 'X')) {
        q = p + 2;
        while (q < s->end && hexval(*q) >= 0) {
            if (v >> 60) overflow = 1;
            v = v << 4 | (uint64_t)hexval(*q++);
            ndig++;
        }
    } else if (p[0] == '0' && p + 1 < s->end && (p[1] == 'b' || p[1] == 'B')) {
        q = p + 2;
        while (q < s->end && (*q == '0' || *q == '1')) {
            if (v >> 63) overflow = 1;
            v = v << 1 | (uint64_t)(*q++ - '0');
            ndig++;
        }
    } else if (p[0] == '0') {
        q = p + 1;
        ndig = 1;
        while (q < s->end && *q >= '0' && *q <= '7') {
            if (v >> 61) overflow = 1;
            v = v << 3 | (uint64_t)(*q++ - '0');
        }
    } else {
        while (q < s->end && isdigit((unsigned char)*q)) {
            uint64_t d = (uint64_t)(*q++ - '0');
            if (v > (UINT64_MAX - d) / 10) overflow = 1;
            v = v * 10 + d;
            ndig++;
        }
    }
    if (q < s->end && (*q == 'U' || *q == 'u')) {
        t->is_unsigned = 1;
        q++;
    }
    if (ndig == 0 || (q < s->end && ident_char((unsigned char)*q))) {
        while (q < s->end && ident_char((unsigned char)*q))
            q++;
        t->kind = LEX_ERROR;
        t->error = "malformed number";
        s->p = q;
        return;
    }
    if (overflow) {
        t->kind = LEX_ERROR;
        t->error = "integer literal does not fit in 64 bits";
        s->p = q;
        return;
    }
    t->kind = LEX_INT;
    t->ival = v;
    s->p = q;
}

/* The bytes of the UTF-8 character at p (so that an error names a whole
 * character), or 1 for a byte that starts none. */
static int utf8_length(const char *p, const char *end)
{
    unsigned char c = (unsigned char)*p;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 1;
    if (end - p < n)
        return 1;
    for (int i = 1; i < n; i++)
        if (((unsigned char)p[i] & 0xc0) != 0x80)
            return 1;
    return n;
}

lex_token lex_next(lex_state *s)
{
    lex_token t;
    memset(&t, 0, sizeof t);
    skip_space(s);
    t.line = s->line;
    t.col = (int)(s->p - s->line_start) + 1;
    t.start = s->p;
    if (s->p >= s->end && s->open_comment_line) {
        /* once: the error, then the end */
        t.kind = LEX_ERROR;
        t.line = s->open_comment_line;
        t.col = s->open_comment_col;
        t.error = "unterminated comment: this '/*' has no '*/'";
        s->open_comment_line = 0;
        return t;
    }
    if (s->p >= s->end) {
        t.kind = LEX_EOF;
        return t;
    }
    unsigned char c = (unsigned char)*s->p;
    if (c == '.' && s->p + 1 < s->end &&
        (ident_start((unsigned char)s->p[1]) || (isdigit((unsigned char)s->p[1]) && s->p > s->text &&
                                                 ident_char((unsigned char)s->p[-1])))) {
        const char *q = s->p + 1;
        while (q < s->end && (ident_char((unsigned char)*q) ||
                              (*q == ':' && q + 2 < s->end && q[1] == ':' && ident_char((unsigned char)q[2]))))
            q += (*q == ':') ? 2 : 1;
        t.kind = LEX_DOTIDENT;
        s->p = q;
    } else if (ident_start(c)) {
        const char *q = s->p + 1;
        while (q < s->end && ident_char((unsigned char)*q))
            q++;
        t.kind = LEX_IDENT;
        s->p = q;
    } else if (isdigit(c)) {
        lex_number(s, &t);
    } else if (c == '"') {
        const char *q = s->p + 1;
        while (q < s->end && *q != '"' && *q != '\n') {
            if (*q == '\\' && q + 1 < s->end)
                q++;
            q++;
        }
        if (q >= s->end || *q != '"') {
            t.kind = LEX_ERROR;
            t.error = "unterminated string";
            s->p = q;
        } else {
            t.kind = LEX_STRING;
            s->p = q + 1;
        }
    } else if (c && strchr(",;:()[]{}<>+-!@=|*/~&^?", c)) {
        t.kind = LEX_PUNCT;
        t.punct = (char)c;
        s->p++;
    } else {
        t.kind = LEX_ERROR;
        t.error = "unexpected character";
        s->p += utf8_length(s->p, s->end);
    }
    t.len = (int)(s->p - t.start);
    return t;
}
