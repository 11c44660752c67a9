/* The PTX text linker of kemu's libcudart replacement (see ptxlink.h).
 *
 * Each unit's text is split into top-level items: header directives
 * (.version, .target, .address_size: one line each), .file lines, and
 * declarations or definitions ending at a ';' or at the '}' of a function
 * body. Items are classified by their linkage (.visible, .extern, .weak,
 * .common or none) and kind (.func, .entry, variable), and named. The
 * output is: one header; every .extern declaration once (for functions
 * another unit defines, rewritten with the definition's linkage, which
 * makes it a forward declaration); all variable definitions; then all
 * functions, in unit order. Names local to a unit that another unit also
 * uses are renamed, and .file/.loc numbers are shifted per unit. */
#include "config.h"
#include "cudart/ptxlink.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINK_NONE = 0, LINK_VISIBLE, LINK_EXTERN, LINK_WEAK, LINK_COMMON };
enum { ITEM_HEADER = 0, ITEM_FILE, ITEM_FUNCTION, ITEM_VARIABLE, ITEM_SECTION, ITEM_OTHER };

typedef struct link_item {
    const char *start;
    size_t len;
    int unit;
    int kind;
    int linkage;
    int is_definition; /* functions: has a body; variables: not .extern */
    char name[256];
    int keep;
} link_item;

typedef struct link_buffer {
    char *data;
    size_t len, cap;
    int failed;
} link_buffer;

static void buffer_add(link_buffer *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void buffer_str(link_buffer *b, const char *s)
{
    buffer_add(b, s, strlen(s));
}

static int link_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int link_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int is_ident_start(int c)
{
    return isalpha(c) || c == '_' || c == '$';
}

static int is_ident_char(int c)
{
    return isalnum(c) || c == '_' || c == '$';
}

/* Skips a comment or string at p (returns the position after it), or
 * returns p when there is none. */
static const char *skip_comment_or_string(const char *p)
{
    if (p[0] == '/' && p[1] == '/') {
        while (*p && *p != '\n')
            p++;
        return p;
    }
    if (p[0] == '/' && p[1] == '*') {
        const char *e = strstr(p + 2, "*/");
        return e ? e + 2 : p + strlen(p);
    }
    if (p[0] == '"') {
        p++;
        while (*p && *p != '"') {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        return *p ? p + 1 : p;
    }
    return p;
}

static const char *skip_space(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        const char *q = skip_comment_or_string(p);
        if (q == p || *p == '"')
            return p;
        p = q;
    }
}

/* Reads the next token (directive, identifier, number or one character)
 * into tok; returns the position after it. */
static const char *next_token(const char *p, char *tok, size_t toklen)
{
    p = skip_space(p);
    size_t n = 0;
    if (*p == '.' || is_ident_start((unsigned char)*p) || *p == '%') {
        const char *s = p++;
        while (is_ident_char((unsigned char)*p))
            p++;
        n = (size_t)(p - s);
        if (n >= toklen)
            n = toklen - 1;
        memcpy(tok, s, n);
    } else if (isdigit((unsigned char)*p)) {
        const char *s = p;
        while (isalnum((unsigned char)*p) || *p == '.')
            p++;
        n = (size_t)(p - s);
        if (n >= toklen)
            n = toklen - 1;
        memcpy(tok, s, n);
    } else if (*p) {
        tok[0] = *p++;
        n = 1;
    }
    tok[n] = 0;
    return p;
}

/* Classifies an item: linkage, kind and name. */
static void classify(link_item *it)
{
    char tok[256];
    const char *p = it->start, *end = it->start + it->len;
    it->kind = ITEM_OTHER;
    p = next_token(p, tok, sizeof tok);
    if (!strcmp(tok, ".version") || !strcmp(tok, ".target") || !strcmp(tok, ".address_size")) {
        it->kind = ITEM_HEADER;
        return;
    }
    if (!strcmp(tok, ".file")) {
        it->kind = ITEM_FILE;
        return;
    }
    if (!strcmp(tok, ".section")) { /* debug information: { label: .b8 ... } */
        it->kind = ITEM_SECTION;
        return;
    }
    for (;;) {
        if (!strcmp(tok, ".visible"))
            it->linkage = LINK_VISIBLE;
        else if (!strcmp(tok, ".extern"))
            it->linkage = LINK_EXTERN;
        else if (!strcmp(tok, ".weak"))
            it->linkage = LINK_WEAK;
        else if (!strcmp(tok, ".common"))
            it->linkage = LINK_COMMON;
        else
            break;
        p = next_token(p, tok, sizeof tok);
    }
    if (!strcmp(tok, ".func") || !strcmp(tok, ".entry")) {
        it->kind = ITEM_FUNCTION;
        p = next_token(p, tok, sizeof tok);
        if (!strcmp(tok, "(")) { /* return parameters */
            int depth = 1;
            while (depth && p < end) {
                p = next_token(p, tok, sizeof tok);
                depth += !strcmp(tok, "(") - !strcmp(tok, ")");
            }
            p = next_token(p, tok, sizeof tok);
        }
        snprintf(it->name, sizeof it->name, "%s", tok);
        it->is_definition = memchr(it->start, '{', it->len) != NULL;
        return;
    }
    if (!strcmp(tok, ".global") || !strcmp(tok, ".const") || !strcmp(tok, ".shared") || !strcmp(tok, ".tex") ||
        !strcmp(tok, ".surfref") || !strcmp(tok, ".texref") || !strcmp(tok, ".samplerref")) {
        it->kind = ITEM_VARIABLE;
        while (p < end) {
            p = next_token(p, tok, sizeof tok);
            if (!strcmp(tok, "(")) { /* .attribute( .managed ) */
                while (p < end && strcmp(tok, ")"))
                    p = next_token(p, tok, sizeof tok);
                continue;
            }
            if (is_ident_start((unsigned char)tok[0])) {
                snprintf(it->name, sizeof it->name, "%s", tok);
                break;
            }
        }
        it->is_definition = it->linkage != LINK_EXTERN;
    }
}

/* Splits one unit's text into items. Returns 0 or -1 (unbalanced text). */
static int split_unit(const char *text, int unit, link_item **items, int *count, int *cap)
{
    const char *p = text;
    for (;;) {
        p = skip_space(p);
        if (!*p)
            return 0;
        link_item it;
        memset(&it, 0, sizeof it);
        it.start = p;
        it.unit = unit;
        char tok[64];
        next_token(p, tok, sizeof tok);
        int line_item = !strcmp(tok, ".version") || !strcmp(tok, ".target") || !strcmp(tok, ".address_size") ||
                        !strcmp(tok, ".file");
        int function = 0, depth = 0;
        if (line_item) {
            while (*p && *p != '\n') {
                const char *q = skip_comment_or_string(p);
                p = q == p ? p + 1 : q;
            }
        } else {
            /* is it a function? look at the leading directives */
            const char *q = p;
            for (int k = 0; k < 4; k++) {
                q = next_token(q, tok, sizeof tok);
                if (!strcmp(tok, ".func") || !strcmp(tok, ".entry") || !strcmp(tok, ".section"))
                    function = 1; /* ends with its closing brace */
                if (tok[0] != '.')
                    break;
            }
            int done = 0;
            while (*p && !done) {
                const char *q2 = skip_comment_or_string(p);
                if (q2 != p) {
                    p = q2;
                    continue;
                }
                char c = *p++;
                if (c == '{' || c == '(' || c == '[')
                    depth++;
                else if (c == '}' || c == ')' || c == ']') {
                    if (--depth < 0)
                        return -1;
                    if (c == '}' && depth == 0 && function)
                        done = 1;
                } else if (c == ';' && depth == 0) {
                    done = 1;
                }
            }
            if (!done)
                return -1;
        }
        it.len = (size_t)(p - it.start);
        classify(&it);
        if (*count == *cap) {
            int ncap = *cap ? *cap * 2 : 64;
            link_item *grown = realloc(*items, (size_t)ncap * sizeof *grown);
            if (!grown)
                return -1;
            *items = grown;
            *cap = ncap;
        }
        (*items)[(*count)++] = it;
    }
}

/* Names that a unit defines without external linkage (renamed on clash). */
typedef struct rename_entry {
    int unit;
    char name[256];
    char replacement[300];
} rename_entry;

static const rename_entry *find_rename(const rename_entry *r, int n, int unit, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (r[i].unit == unit && strlen(r[i].name) == len && !memcmp(r[i].name, name, len))
            return &r[i];
    return NULL;
}

/* Copies an item's text, renaming identifiers and shifting .file/.loc
 * numbers of its unit. */
static void emit_item(link_buffer *b, const link_item *it, const rename_entry *renames, int nrenames, int file_base)
{
    const char *p = it->start, *end = it->start + it->len;
    int shift_next_number = 0;
    while (p < end) {
        const char *q = skip_comment_or_string(p);
        if (q != p) {
            buffer_add(b, p, (size_t)(q - p));
            p = q;
            continue;
        }
        if (*p == '.' || *p == '%') { /* directive or register: copied, but note .file/.loc */
            const char *s = p++;
            while (p < end && is_ident_char((unsigned char)*p))
                p++;
            shift_next_number = (p - s == 5 && !memcmp(s, ".file", 5)) || (p - s == 4 && !memcmp(s, ".loc", 4));
            buffer_add(b, s, (size_t)(p - s));
            continue;
        }
        if (is_ident_start((unsigned char)*p)) {
            const char *s = p;
            while (p < end && is_ident_char((unsigned char)*p))
                p++;
            const rename_entry *r = find_rename(renames, nrenames, it->unit, s, (size_t)(p - s));
            if (r)
                buffer_str(b, r->replacement);
            else
                buffer_add(b, s, (size_t)(p - s));
            /* ".loc F L C, ..., inlined_at F L C" names files too */
            shift_next_number = p - s == 10 && !memcmp(s, "inlined_at", 10);
            continue;
        }
        if (isdigit((unsigned char)*p)) {
            const char *s = p;
            while (p < end && isalnum((unsigned char)*p))
                p++;
            if (shift_next_number && file_base) {
                char num[32];
                snprintf(num, sizeof num, "%ld", strtol(s, NULL, 10) + file_base);
                buffer_str(b, num);
            } else {
                buffer_add(b, s, (size_t)(p - s));
            }
            shift_next_number = 0;
            continue;
        }
        if (!isspace((unsigned char)*p))
            shift_next_number = 0;
        buffer_add(b, p, 1);
        p++;
    }
    buffer_str(b, "\n");
}

/* The item that defines `name` with external linkage, or NULL. */
static const link_item *find_definition(const link_item *items, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (items[i].is_definition && items[i].linkage != LINK_NONE && items[i].linkage != LINK_EXTERN &&
            !strcmp(items[i].name, name))
            return &items[i];
    return NULL;
}

/* The largest .file number of a unit. */
static int max_file_number(const link_item *items, int n, int unit)
{
    int best = 0;
    for (int i = 0; i < n; i++)
        if (items[i].unit == unit && items[i].kind == ITEM_FILE) {
            char tok[64];
            const char *p = next_token(items[i].start, tok, sizeof tok);
            next_token(p, tok, sizeof tok);
            int v = atoi(tok);
            if (v > best)
                best = v;
        }
    return best;
}

int cudart_ptx_link(const char *const *texts, int count, char **out, size_t *out_len, char *err, size_t errlen)
{
    link_item *items = NULL;
    int n = 0, cap = 0;
    rename_entry *renames = NULL;
    int nrenames = 0;
    int *file_base = calloc((size_t)(count > 0 ? count : 1), sizeof *file_base);
    link_buffer b = {0};
    int rc = -1;
    if (!file_base)
        return link_error(err, errlen, "out of memory linking PTX");
    for (int u = 0; u < count; u++)
        if (split_unit(texts[u], u, &items, &n, &cap)) {
            link_error(err, errlen, "cannot split the PTX of unit %d into declarations", u);
            goto out;
        }
    /* two units defining one visible symbol is a link error, as in nvlink */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && items[i].linkage == LINK_VISIBLE && items[i].is_definition; j++)
            if (items[j].linkage == LINK_VISIBLE && items[j].is_definition && items[j].unit != items[i].unit &&
                !strcmp(items[i].name, items[j].name)) {
                link_error(err, errlen, "'%s' is defined in two translation units", items[i].name);
                goto out;
            }
    /* labels of debug sections are unit-local too */
    for (int i = 0; i < n; i++) {
        if (items[i].kind != ITEM_SECTION || items[i].unit == 0)
            continue;
        const char *p = items[i].start, *end = items[i].start + items[i].len;
        while (p < end) {
            const char *q = skip_comment_or_string(p);
            if (q != p) {
                p = q;
                continue;
            }
            if (!is_ident_start((unsigned char)*p)) {
                p++;
                continue;
            }
            const char *s0 = p;
            while (p < end && is_ident_char((unsigned char)*p))
                p++;
            if (p < end && *p == ':' && !find_rename(renames, nrenames, items[i].unit, s0, (size_t)(p - s0))) {
                rename_entry *grown = realloc(renames, (size_t)(nrenames + 1) * sizeof *grown);
                if (!grown) {
                    link_error(err, errlen, "out of memory linking PTX");
                    goto out;
                }
                renames = grown;
                rename_entry *r = &renames[nrenames++];
                r->unit = items[i].unit;
                snprintf(r->name, sizeof r->name, "%.*s", (int)(p - s0), s0);
                snprintf(r->replacement, sizeof r->replacement, "%s$kemu_unit%d", r->name, items[i].unit);
            }
        }
    }
    /* unit-local names used by another unit get a unit suffix */
    for (int i = 0; i < n; i++) {
        if (items[i].linkage != LINK_NONE || !items[i].name[0] ||
            (items[i].kind != ITEM_VARIABLE && items[i].kind != ITEM_FUNCTION) ||
            find_rename(renames, nrenames, items[i].unit, items[i].name, strlen(items[i].name)))
            continue;
        int clash = 0;
        for (int j = 0; j < n && !clash; j++)
            clash = items[j].unit != items[i].unit && !strcmp(items[j].name, items[i].name);
        if (!clash)
            continue;
        rename_entry *grown = realloc(renames, (size_t)(nrenames + 1) * sizeof *grown);
        if (!grown) {
            link_error(err, errlen, "out of memory linking PTX");
            goto out;
        }
        renames = grown;
        rename_entry *r = &renames[nrenames++];
        r->unit = items[i].unit;
        snprintf(r->name, sizeof r->name, "%s", items[i].name);
        snprintf(r->replacement, sizeof r->replacement, "%s$kemu_unit%d", items[i].name, items[i].unit);
    }
    for (int u = 1; u < count; u++)
        file_base[u] = file_base[u - 1] + max_file_number(items, n, u - 1);
    /* header: the first unit's, with the highest .version of all */
    int have_header = 0;
    for (int i = 0; i < n; i++)
        if (items[i].kind == ITEM_HEADER && items[i].unit == 0) {
            emit_item(&b, &items[i], NULL, 0, 0);
            have_header = 1;
        }
    if (!have_header) {
        link_error(err, errlen, "the first unit's PTX has no .version/.target header");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (items[i].kind == ITEM_FILE)
            emit_item(&b, &items[i], renames, nrenames, file_base[items[i].unit]);
    /* external declarations, once each */
    for (int i = 0; i < n; i++) {
        if (items[i].linkage != LINK_EXTERN)
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = items[j].linkage == LINK_EXTERN && !strcmp(items[j].name, items[i].name);
        if (seen)
            continue;
        const link_item *def = find_definition(items, n, items[i].name);
        if (def && items[i].kind == ITEM_VARIABLE)
            continue; /* the definition comes with the variables below */
        if (def && items[i].kind == ITEM_FUNCTION) {
            /* a forward declaration with the definition's linkage */
            const char *p = strstr(items[i].start, ".extern");
            buffer_add(&b, items[i].start, (size_t)(p - items[i].start));
            buffer_str(&b, def->linkage == LINK_WEAK ? ".weak" : ".visible");
            link_item rest = items[i];
            rest.start = p + 7;
            rest.len = items[i].len - (size_t)(rest.start - items[i].start);
            emit_item(&b, &rest, renames, nrenames, 0);
            continue;
        }
        emit_item(&b, &items[i], renames, nrenames, 0);
    }
    /* variables, then functions; a .weak/.common symbol is defined once */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            link_item *it = &items[i];
            if (it->linkage == LINK_EXTERN || it->kind == ITEM_HEADER || it->kind == ITEM_FILE)
                continue;
            if ((pass == 0) != (it->kind == ITEM_VARIABLE))
                continue;
            if ((it->linkage == LINK_WEAK || it->linkage == LINK_COMMON) && it->is_definition) {
                int seen = 0;
                for (int j = 0; j < i && !seen; j++)
                    seen = items[j].is_definition && items[j].linkage != LINK_EXTERN &&
                           items[j].linkage != LINK_NONE && !strcmp(items[j].name, it->name);
                if (seen)
                    continue;
            }
            emit_item(&b, it, renames, nrenames, file_base[it->unit]);
        }
    if (b.failed) {
        link_error(err, errlen, "out of memory linking PTX");
        goto out;
    }
    *out = b.data;
    *out_len = b.len;
    b.data = NULL;
    rc = 0;
out:
    free(b.data);
    free(items);
    free(renames);
    free(file_base);
    return rc;
}
