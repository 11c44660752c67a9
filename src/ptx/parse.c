/* PTX parser: module directives, variables with initializers, entries and
 * functions with their parameters, performance directives and bodies.
 * Registers and function-local variables are resolved here against the
 * scope stack (`{ }` blocks may redeclare names); module symbols, labels
 * and functions stay names for the lowering to resolve. Errors are
 * collected (up to a limit) with file:line:col, the source line and a
 * caret; after an error inside a body the parser skips to the next `;`. */
#include "ptx/ptx.h"
#include "ptx/lex.h"
#include "ptx/diag.h"
#include "util_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Virtual registers per function: far above what compilers emit, low
 * enough that a register file of this size fits in memory. */
#define MAX_REGISTERS 262144

typedef struct scope_undo { const char *key; size_t len; void *old; } scope_undo;

typedef struct parser {
    lex_state lex;
    lex_token tok, peek;
    int have_peek;
    ptx_module *m;
    const char *filename;
    const char *text; size_t textlen;
    ptx_diag diag;
    int oom;
    /* function being parsed */
    ptx_function *fn;
    util_map names;            /* registers and locals visible now */
    scope_undo *undo; size_t nundo, capundo;
    size_t *scope_marks; size_t nscopes, capscopes;
    int scope_id, next_scope_id;
    int next_label_scope;      /* renamed block-scoped labels so far */
    int loc_file, loc_line, loc_col;
    util_map specials;
    uint64_t nregs_declared;   /* in the function being parsed */
} parser;

/* ---- errors ---------------------------------------------------------- */

static void error_at(parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void error_at(parser *p, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ptx_diag_error(&p->diag, line, col, msg);
}

void ptx_append_caret(const ptx_module *m, int line, int col, util_buffer *b)
{
    ptx_diag_source(b, m->text, m->textlen, line, col);
}

/* ---- tokens ---------------------------------------------------------- */

static lex_token next(parser *p)
{
    if (p->have_peek) {
        p->tok = p->peek;
        p->have_peek = 0;
    } else {
        p->tok = lex_next(&p->lex);
    }
    if (p->tok.kind == LEX_ERROR) {
        /* escaped here: the token may hold a NUL byte */
        util_buffer text = {0};
        ptx_escape(&text, p->tok.start, (size_t)(p->tok.len > 40 ? 40 : p->tok.len), 0);
        if (p->tok.len)
            error_at(p, p->tok.line, p->tok.col, "%s '%s'%s", p->tok.error, text.data ? text.data : "",
                     p->tok.len > 40 ? "..." : "");
        else
            error_at(p, p->tok.line, p->tok.col, "%s", p->tok.error);
        util_buffer_free(&text);
    }
    return p->tok;
}

static lex_token *peek(parser *p)
{
    if (!p->have_peek) {
        p->peek = lex_next(&p->lex);
        p->have_peek = 1;
    }
    return &p->peek;
}

static int tok_is(const lex_token *t, const char *s)
{
    return (t->kind == LEX_IDENT || t->kind == LEX_DOTIDENT) && (int)strlen(s) == t->len &&
           memcmp(t->start, s, (size_t)t->len) == 0;
}

static int is_punct(const lex_token *t, char c) { return t->kind == LEX_PUNCT && t->punct == c; }

static const char *tok_str(parser *p, const lex_token *t)
{
    char *s = util_arena_strndup(&p->m->arena, t->start, (size_t)t->len);
    if (!s)
        p->oom = 1;
    return s ? s : "";
}

static void *alloc(parser *p, size_t n)
{
    void *r = util_arena_alloc(&p->m->arena, n);
    if (!r) {
        p->oom = 1;
        static _Alignas(16) unsigned char dummy[4096];
        memset(dummy, 0, sizeof dummy);
        return dummy;
    }
    return r;
}

static void describe(const lex_token *t, char *buf, size_t n)
{
    if (t->kind == LEX_EOF)
        snprintf(buf, n, "end of file");
    else {
        /* escaped (a string token may hold control bytes or a NUL), and
         * cut before an escape that would not fit */
        util_buffer e = {0};
        ptx_escape(&e, t->start, (size_t)(t->len > 40 ? 40 : t->len), 0);
        size_t len = e.data ? e.len : 0, room = n > 6 ? n - 6 : 0;
        if (len > room) {
            len = room;
            for (size_t k = len; k > 0 && k + 6 > len; k--)
                if (e.data[k - 1] == '\\') {
                    len = k - 1;
                    break;
                }
        }
        snprintf(buf, n, "'%.*s%s'", (int)len, e.data ? e.data : "", len < (e.data ? e.len : 0) || t->len > 40 ? "..." : "");
        util_buffer_free(&e);
    }
}

static int expect_punct(parser *p, char c)
{
    lex_token t = next(p);
    if (is_punct(&t, c))
        return 1;
    char d[64];
    describe(&t, d, sizeof d);
    error_at(p, t.line, t.col, "expected '%c' but found %s", c, d);
    return 0;
}

/* Skips to just after the next ';' (or stops before '}' / EOF). */
static void recover(parser *p)
{
    for (;;) {
        lex_token *t = peek(p);
        if (t->kind == LEX_EOF || is_punct(t, '}'))
            return;
        next(p);
        if (is_punct(&p->tok, ';'))
            return;
    }
}

/* ---- growable pointer arrays in the arena-free heap ------------------ */

typedef struct ptrvec { void **v; size_t n, cap; } ptrvec;
static void pv_push(parser *p, ptrvec *pv, void *x)
{
    if (util_grow(&pv->v, &pv->cap, pv->n + 1, sizeof(void *))) {
        p->oom = 1;
        return;
    }
    pv->v[pv->n++] = x;
}
/* Moves a ptrvec into the arena and frees the heap copy. */
static void **pv_finish(parser *p, ptrvec *pv, int *count)
{
    void **out = alloc(p, (pv->n ? pv->n : 1) * sizeof(void *));
    if (pv->n)
        memcpy(out, pv->v, pv->n * sizeof(void *));
    *count = (int)pv->n;
    free(pv->v);
    memset(pv, 0, sizeof *pv);
    return out;
}

/* ---- scopes ---------------------------------------------------------- */

static void scope_push(parser *p)
{
    if (util_grow(&p->scope_marks, &p->capscopes, p->nscopes + 1, sizeof(size_t))) {
        p->oom = 1;
        return;
    }
    p->scope_marks[p->nscopes++] = p->nundo;
    p->scope_id = ++p->next_scope_id;
}

static void scope_pop(parser *p)
{
    if (!p->nscopes)
        return;
    size_t mark = p->scope_marks[--p->nscopes];
    while (p->nundo > mark) {
        scope_undo *u = &p->undo[--p->nundo];
        int failed = 0;
        util_map_put(&p->names, u->key, u->len, u->old, &failed);
    }
    p->scope_id = p->nscopes ? (int)p->nscopes : 0;
}

static void declare(parser *p, ptx_var *v)
{
    int failed = 0;
    size_t len = strlen(v->name);
    void *old = util_map_put(&p->names, v->name, len, v, &failed);
    if (failed) {
        p->oom = 1;
        return;
    }
    if (old && p->nscopes) {
        ptx_var *ov = old;
        if (ov->scope == p->scope_id) {
            error_at(p, v->pos.line, v->pos.col, "'%s' is already declared in this scope (line %d)",
                     v->name, ov->pos.line);
        }
    } else if (old && !p->nscopes) {
        ptx_var *ov = old;
        error_at(p, v->pos.line, v->pos.col, "'%s' is already declared (line %d)", v->name, ov->pos.line);
    }
    if (util_grow(&p->undo, &p->capundo, p->nundo + 1, sizeof(scope_undo))) {
        p->oom = 1;
        return;
    }
    p->undo[p->nundo++] = (scope_undo){v->name, len, old};
}

static ptx_var *lookup(parser *p, const char *name, size_t len)
{
    return util_map_get(&p->names, name, len);
}

/* ---- types and spaces ------------------------------------------------ */

static const char *const type_names[PTX_T_COUNT] = {
    [PTX_T_NONE] = "", [PTX_T_B8] = ".b8", [PTX_T_B16] = ".b16", [PTX_T_B32] = ".b32",
    [PTX_T_B64] = ".b64", [PTX_T_B128] = ".b128", [PTX_T_U8] = ".u8", [PTX_T_U16] = ".u16",
    [PTX_T_U32] = ".u32", [PTX_T_U64] = ".u64", [PTX_T_S8] = ".s8", [PTX_T_S16] = ".s16",
    [PTX_T_S32] = ".s32", [PTX_T_S64] = ".s64", [PTX_T_F16] = ".f16", [PTX_T_F16X2] = ".f16x2",
    [PTX_T_BF16] = ".bf16", [PTX_T_BF16X2] = ".bf16x2", [PTX_T_TF32] = ".tf32",
    [PTX_T_F32] = ".f32", [PTX_T_F64] = ".f64", [PTX_T_PRED] = ".pred",
    [PTX_T_E4M3] = ".e4m3", [PTX_T_E5M2] = ".e5m2", [PTX_T_E4M3X2] = ".e4m3x2",
    [PTX_T_E5M2X2] = ".e5m2x2", [PTX_T_U16X2] = ".u16x2", [PTX_T_S16X2] = ".s16x2",
    [PTX_T_U8X4] = ".u8x4", [PTX_T_S8X4] = ".s8x4", [PTX_T_U4] = ".u4", [PTX_T_S4] = ".s4",
    [PTX_T_TEXREF] = ".texref", [PTX_T_SURFREF] = ".surfref", [PTX_T_SAMPLERREF] = ".samplerref",
};

ptx_type ptx_type_from_name(const char *dotname)
{
    /* every type name is '.' + a letter in b,u,s,f,p,e,t + at most 8 more */
    char c = dotname[0] == '.' ? dotname[1] : 0;
    if (!(c == 'b' || c == 'u' || c == 's' || c == 'f' || c == 'p' || c == 'e' || c == 't'))
        return PTX_T_NONE;
    for (int i = 1; i < PTX_T_COUNT; i++)
        if (type_names[i] && type_names[i][1] == c && strcmp(type_names[i], dotname) == 0)
            return (ptx_type)i;
    return PTX_T_NONE;
}

const char *ptx_type_name(ptx_type t) { return t < PTX_T_COUNT ? type_names[t] : "?"; }

unsigned ptx_type_size(ptx_type t)
{
    switch (t) {
    case PTX_T_B8: case PTX_T_U8: case PTX_T_S8: case PTX_T_E4M3: case PTX_T_E5M2:
    case PTX_T_U4: case PTX_T_S4:
        return 1;
    case PTX_T_B16: case PTX_T_U16: case PTX_T_S16: case PTX_T_F16: case PTX_T_BF16:
    case PTX_T_E4M3X2: case PTX_T_E5M2X2:
        return 2;
    case PTX_T_B32: case PTX_T_U32: case PTX_T_S32: case PTX_T_F32: case PTX_T_F16X2:
    case PTX_T_BF16X2: case PTX_T_TF32: case PTX_T_U16X2: case PTX_T_S16X2:
    case PTX_T_U8X4: case PTX_T_S8X4:
        return 4;
    case PTX_T_B64: case PTX_T_U64: case PTX_T_S64: case PTX_T_F64:
    case PTX_T_TEXREF: case PTX_T_SURFREF: case PTX_T_SAMPLERREF:
        return 8;
    case PTX_T_B128:
        return 16;
    default:
        return 0;
    }
}

int ptx_type_is_float(ptx_type t)
{
    return t == PTX_T_F16 || t == PTX_T_F16X2 || t == PTX_T_BF16 || t == PTX_T_BF16X2 ||
           t == PTX_T_TF32 || t == PTX_T_F32 || t == PTX_T_F64;
}

int ptx_type_is_signed(ptx_type t)
{
    return t == PTX_T_S8 || t == PTX_T_S16 || t == PTX_T_S32 || t == PTX_T_S64 ||
           t == PTX_T_S16X2 || t == PTX_T_S8X4 || t == PTX_T_S4;
}

static ptx_space space_from_tok(const lex_token *t)
{
    if (tok_is(t, ".reg")) return PTX_SPACE_REG;
    if (tok_is(t, ".global")) return PTX_SPACE_GLOBAL;
    if (tok_is(t, ".shared") || tok_is(t, ".shared::cta")) return PTX_SPACE_SHARED;
    if (tok_is(t, ".shared::cluster")) return PTX_SPACE_SHARED_CLUSTER;
    if (tok_is(t, ".local")) return PTX_SPACE_LOCAL;
    if (tok_is(t, ".const")) return PTX_SPACE_CONST;
    if (tok_is(t, ".param")) return PTX_SPACE_PARAM;
    if (tok_is(t, ".tex")) return PTX_SPACE_TEX;
    return PTX_SPACE_NONE;
}

int ptx_insn_has_mod(const ptx_insn *in, const char *mod)
{
    for (int i = 0; i < in->nmods; i++)
        if (strcmp(in->mods[i], mod) == 0)
            return 1;
    return 0;
}

/* ---- numbers --------------------------------------------------------- */

/* Parses an optionally negated integer literal. */
static int parse_int(parser *p, int64_t *out)
{
    lex_token t = next(p);
    int neg = 0;
    if (is_punct(&t, '-')) {
        neg = 1;
        t = next(p);
    }
    if (t.kind != LEX_INT) {
        char d[64];
        describe(&t, d, sizeof d);
        error_at(p, t.line, t.col, "expected an integer but found %s", d);
        return 0;
    }
    *out = (int64_t)(neg ? 0 - t.ival : t.ival);
    return 1;
}

/* ---- variable declarations ------------------------------------------- */

static void store_scalar(unsigned char *dst, unsigned size, ptx_type type, const lex_token *t, int neg)
{
    uint64_t bits = 0;
    if (t->kind == LEX_INT) {
        uint64_t v = neg ? 0 - t->ival : t->ival;
        if (type == PTX_T_F32) {
            float f = neg ? -(float)t->ival : (float)t->ival;
            memcpy(&bits, &f, 4);
        } else if (type == PTX_T_F64) {
            double d = neg ? -(double)t->ival : (double)t->ival;
            memcpy(&bits, &d, 8);
        } else {
            bits = v;
        }
    } else if (t->kind == LEX_FLOAT) {
        double d;
        if (t->is_f32) {
            float f;
            uint32_t b32 = (uint32_t)t->fbits;
            memcpy(&f, &b32, 4);
            d = f;
        } else {
            memcpy(&d, &t->fbits, 8);
        }
        if (neg)
            d = -d;
        if (type == PTX_T_F32) {
            float f = (float)d;
            uint32_t b32;
            memcpy(&b32, &f, 4);
            bits = b32;
            if (t->is_f32 && !neg)
                bits = (uint32_t)t->fbits;
        } else if (type == PTX_T_F64) {
            memcpy(&bits, &d, 8);
        } else {
            /* a float initializer of an integer variable: truncated, saturated */
            if (d != d)
                bits = 0;
            else if (d >= 9223372036854775808.0)
                bits = (uint64_t)INT64_MAX;
            else if (d <= -9223372036854775808.0)
                bits = (uint64_t)INT64_MIN;
            else
                bits = (uint64_t)(int64_t)d;
        }
    }
    for (unsigned i = 0; i < size && i < 8; i++)
        dst[i] = (unsigned char)(bits >> (8 * i));
}

#define MAX_INIT_DEPTH 16

typedef struct init_ctx {
    int depth;
    ptx_var *v;
    unsigned elem;
    uint64_t next;      /* next element index */
    ptrvec relocs;
} init_ctx;

static void parse_init_value(parser *p, init_ctx *c)
{
    lex_token *pk = peek(p);
    if (is_punct(pk, '{')) {
        if (c->depth >= MAX_INIT_DEPTH) {
            error_at(p, pk->line, pk->col, "initializer nested more than %d levels deep", MAX_INIT_DEPTH);
            return;
        }
        next(p);
        c->depth++;
        for (;;) {
            if (is_punct(peek(p), '}')) {
                next(p);
                c->depth--;
                return;
            }
            parse_init_value(p, c);
            if (p->diag.nerrors)
                return;
            lex_token t = next(p);
            if (is_punct(&t, '}')) {
                c->depth--;
                return;
            }
            if (!is_punct(&t, ',')) {
                char d[64];
                describe(&t, d, sizeof d);
                error_at(p, t.line, t.col, "expected ',' or '}' in initializer but found %s", d);
                return;
            }
        }
    }
    lex_token t = next(p);
    ptx_var *v = c->v;
    uint64_t at = c->next * c->elem;
    if (at + c->elem > v->size) {
        error_at(p, t.line, t.col, "too many initializer values for '%s' (%llu bytes)", v->name,
                 (unsigned long long)v->size);
        return;
    }
    int neg = 0;
    if (is_punct(&t, '-')) {
        neg = 1;
        t = next(p);
    }
    if (t.kind == LEX_INT || t.kind == LEX_FLOAT) {
        store_scalar(v->init + at, c->elem, v->type, &t, neg);
        c->next++;
        return;
    }
    if (t.kind == LEX_IDENT) {
        int generic = 0;
        const char *sym;
        lex_token symtok = t;
        if (tok_is(&t, "generic") && is_punct(peek(p), '(')) {
            next(p);
            symtok = next(p);
            if (symtok.kind != LEX_IDENT) {
                error_at(p, symtok.line, symtok.col, "expected a variable name in generic()");
                return;
            }
            if (!expect_punct(p, ')'))
                return;
            generic = 1;
        }
        sym = tok_str(p, &symtok);
        int64_t addend = 0;
        if (is_punct(peek(p), '+')) {
            next(p);
            if (!parse_int(p, &addend))
                return;
        }
        if (c->elem < 4) {
            error_at(p, t.line, t.col, "an address initializer needs an element of at least 4 bytes");
            return;
        }
        ptx_init_reloc *r = alloc(p, sizeof *r);
        r->at = at;
        r->symbol = sym;
        r->addend = addend;
        r->generic = generic;
        r->pos = (ptx_pos){t.line, t.col};
        pv_push(p, &c->relocs, r);
        c->next++;
        return;
    }
    char d[64];
    describe(&t, d, sizeof d);
    error_at(p, t.line, t.col, "expected an initializer value but found %s", d);
}

/* Parses the part of a declaration after the state space:
 * [.align N] [.v2|.v4] [.ptr ...] .type name[dims] [= init] {, name ...}
 * and calls `emit` for each declared variable. Returns 0 on error. */
typedef void (*emit_fn)(parser *p, ptx_var *v, void *ctx);

static int parse_var_decl(parser *p, ptx_space space, int flags_extern, int flags_visible,
                          int flags_weak, int in_params, emit_fn emit, void *ctx)
{
    unsigned align = 0, vec = 1;
    ptx_type type = PTX_T_NONE;
    int is_ptr = 0;
    for (;;) {
        lex_token *t = peek(p);
        if (t->kind != LEX_DOTIDENT)
            break;
        next(p);
        lex_token tk = p->tok;
        if (tok_is(&tk, ".align")) {
            int64_t a;
            if (!parse_int(p, &a))
                return 0;
            if (a <= 0 || (a & (a - 1))) {
                error_at(p, tk.line, tk.col, ".align must be a power of two");
                return 0;
            }
            if (a > (int64_t)1 << 31) {
                error_at(p, tk.line, tk.col, ".align %lld is larger than kemu supports (at most 2^31)", (long long)a);
                return 0;
            }
            /* after .ptr it is the alignment of the memory the parameter
             * points to, not the parameter's own (PTX ISA 5.1.6.3); Triton
             * writes ".param .u64 .ptr .global .align 1 p" */
            if (!is_ptr)
                align = (unsigned)a;
        } else if (tok_is(&tk, ".v2")) {
            vec = 2;
        } else if (tok_is(&tk, ".v4")) {
            vec = 4;
        } else if (tok_is(&tk, ".v8")) {
            vec = 8;
        } else if (tok_is(&tk, ".ptr")) {
            is_ptr = 1;
        } else if (tok_is(&tk, ".attribute")) {
            /* .attribute(.managed) / (.unified(...)): every kemu global is
             * reachable from the host already */
            if (!expect_punct(p, '('))
                return 0;
            int depth = 1;
            while (depth > 0) {
                lex_token a = next(p);
                if (a.kind == LEX_EOF) {
                    error_at(p, a.line, a.col, "unterminated .attribute(...)");
                    return 0;
                }
                if (is_punct(&a, '(')) depth++;
                else if (is_punct(&a, ')')) depth--;
            }
        } else if (is_ptr && (space_from_tok(&tk) != PTX_SPACE_NONE)) {
            /* .ptr .global / .shared ... attribute */
        } else {
            char name[32];
            snprintf(name, sizeof name, "%.*s", tk.len < 31 ? tk.len : 31, tk.start);
            ptx_type ty = ptx_type_from_name(name);
            if (ty == PTX_T_NONE) {
                error_at(p, tk.line, tk.col, "unknown type or attribute '%s' in declaration", name);
                return 0;
            }
            type = ty;
        }
    }
    if (type == PTX_T_NONE) {
        lex_token *t = peek(p);
        error_at(p, t->line, t->col, "missing type in declaration");
        return 0;
    }
    for (;;) {
        lex_token nt = next(p);
        if (nt.kind != LEX_IDENT) {
            char d[64];
            describe(&nt, d, sizeof d);
            error_at(p, nt.line, nt.col, "expected a name in declaration but found %s", d);
            return 0;
        }
        /* register range %r<N> */
        if (space == PTX_SPACE_REG && is_punct(peek(p), '<')) {
            next(p);
            int64_t n;
            if (!parse_int(p, &n) || !expect_punct(p, '>'))
                return 0;
            if (n < 0 || n > MAX_REGISTERS || p->nregs_declared + (uint64_t)n > MAX_REGISTERS) {
                error_at(p, nt.line, nt.col, "too many registers: kemu supports at most %d per function", MAX_REGISTERS);
                return 0;
            }
            for (int64_t i = 0; i < n; i++) {
                char buf[1100];
                snprintf(buf, sizeof buf, "%.*s%lld", nt.len > 1024 ? 1024 : nt.len, nt.start, (long long)i);
                ptx_var *v = alloc(p, sizeof *v);
                v->name = util_arena_strndup(&p->m->arena, buf, strlen(buf));
                if (!v->name) { p->oom = 1; return 0; }
                v->space = space;
                v->type = type;
                v->vec = vec;
                v->pos = (ptx_pos){nt.line, nt.col};
                emit(p, v, ctx);
            }
        } else {
            ptx_var *v = alloc(p, sizeof *v);
            v->name = tok_str(p, &nt);
            v->space = space;
            v->type = type;
            v->vec = vec;
            v->align = align ? align : ptx_type_size(type) * vec;
            v->is_extern = flags_extern;
            v->is_visible = flags_visible;
            v->is_weak = flags_weak;
            v->is_ptr = is_ptr;
            v->pos = (ptx_pos){nt.line, nt.col};
            uint64_t count = 1;
            while (is_punct(peek(p), '[')) {
                next(p);
                v->is_array = 1;
                if (is_punct(peek(p), ']')) {
                    next(p);
                    v->is_unsized = 1;
                    count = 0;
                    continue;
                }
                int64_t n;
                if (!parse_int(p, &n) || !expect_punct(p, ']'))
                    return 0;
                if (n < 0 || (n && count > (1ull << 40) / (uint64_t)n)) {
                    error_at(p, nt.line, nt.col, "array '%s' is too large", v->name);
                    return 0;
                }
                count *= (uint64_t)n;
            }
            v->array_count = v->is_array ? count : 0;
            v->size = (uint64_t)ptx_type_size(type) * vec * (v->is_array ? count : 1);
            if (is_punct(peek(p), '=')) {
                lex_token eq = next(p);
                if (in_params || space == PTX_SPACE_REG || space == PTX_SPACE_SHARED ||
                    space == PTX_SPACE_LOCAL) {
                    error_at(p, eq.line, eq.col, "variables in this state space cannot have initializers");
                    return 0;
                }
                if (v->is_unsized) {
                    error_at(p, eq.line, eq.col, "an initialized array needs a size");
                    return 0;
                }
                v->init = alloc(p, v->size ? v->size : 1);
                init_ctx c = {.v = v, .elem = ptx_type_size(type)};
                parse_init_value(p, &c);
                v->relocs = (ptx_init_reloc *)NULL;
                int nr = 0;
                void **rl = pv_finish(p, &c.relocs, &nr);
                if (nr) {
                    v->relocs = alloc(p, (size_t)nr * sizeof(ptx_init_reloc));
                    for (int i = 0; i < nr; i++)
                        v->relocs[i] = *(ptx_init_reloc *)rl[i];
                }
                v->nrelocs = nr;
                if (p->diag.nerrors)
                    return 0;
            }
            emit(p, v, ctx);
        }
        if (in_params || !is_punct(peek(p), ','))
            break;
        next(p);
    }
    return 1;
}

/* ---- operands -------------------------------------------------------- */

static const char *const special_names[] = {
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid",
    "%nsmid", "%gridid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
    "%lanemask_gt", "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
    "%globaltimer_hi", "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size",
    "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
    "%cluster_nctarank", "%is_explicit_cluster", "%pm0", "%pm1", "%pm2", "%pm3", "%pm4",
    "%pm5", "%pm6", "%pm7", "%pm0_64", "%pm1_64", "%pm2_64", "%pm3_64", "%pm4_64",
    "%pm5_64", "%pm6_64", "%pm7_64", "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end", "%reserved_smem_offset_cap", "%reserved_smem_offset_0",
    "%reserved_smem_offset_1", "%current_graph_exec",
};

static int is_special(const char *s, int len)
{
    if (len > 7 && memcmp(s, "%envreg", 7) == 0)
        return 1;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(special_names); i++)
        if ((int)strlen(special_names[i]) == len && memcmp(special_names[i], s, (size_t)len) == 0)
            return 1;
    return 0;
}

static int parse_operand(parser *p, ptx_operand *o);

/* name operand: register, special register, or symbol (+offset) */
static int parse_name_operand(parser *p, ptx_operand *o, lex_token t)
{
    o->pos = (ptx_pos){t.line, t.col};
    if (t.len == 1 && t.start[0] == '_') {
        o->kind = PTX_OP_SINK;
        return 1;
    }
    ptx_var *v = lookup(p, t.start, (size_t)t.len);
    if (v && v->space == PTX_SPACE_REG) {
        o->kind = PTX_OP_REG;
        o->var = v;
        o->name = v->name;
        return 1;
    }
    if (!v && t.start[0] == '%' && is_special(t.start, t.len)) {
        o->kind = PTX_OP_SPECIAL;
        o->name = tok_str(p, &t);
        lex_token *pk = peek(p);
        if (pk->kind == LEX_DOTIDENT && pk->len == 2 &&
            (pk->start[1] == 'x' || pk->start[1] == 'y' || pk->start[1] == 'z' || pk->start[1] == 'w')) {
            next(p);
            o->component = p->tok.start[1];
        }
        return 1;
    }
    if (!v && t.start[0] == '%') {
        error_at(p, t.line, t.col, "undeclared register '%.*s'", t.len, t.start);
        return 0;
    }
    if (!v && t.len == 7 && !memcmp(t.start, "WARP_SZ", 7)) {
        /* the PTX ISA's predefined identifier: the warp size, a constant
         * (nvcc writes it for warpSize where it does not fold it) */
        o->kind = PTX_OP_IMM_INT;
        o->imm = 32;
        return 1;
    }
    o->kind = PTX_OP_SYMBOL;
    o->var = v; /* a function-local variable, or NULL for module symbols/labels */
    o->name = v ? v->name : tok_str(p, &t);
    if (is_punct(peek(p), '+')) {
        next(p);
        int64_t off;
        if (!parse_int(p, &off))
            return 0;
        o->imm = off;
    }
    return 1;
}

static int parse_operand(parser *p, ptx_operand *o)
{
    lex_token t = next(p);
    memset(o, 0, sizeof *o);
    o->pos = (ptx_pos){t.line, t.col};
    if (is_punct(&t, '!')) {
        if (is_punct(peek(p), '!') || is_punct(peek(p), '{')) {
            lex_token *q = peek(p);
            error_at(p, q->line, q->col, "'!' applies to one predicate register");
            return 0;
        }
        if (!parse_operand(p, o))
            return 0;
        o->negate = 1;
        o->pos = (ptx_pos){t.line, t.col};
        return 1;
    }
    if (is_punct(&t, '-')) {
        lex_token n = next(p);
        if (n.kind == LEX_INT) {
            o->kind = PTX_OP_IMM_INT;
            o->imm = (int64_t)(0 - n.ival);
            return 1;
        }
        if (n.kind == LEX_FLOAT) {
            o->kind = PTX_OP_IMM_FLOAT;
            o->is_f32 = n.is_f32;
            o->fbits = n.fbits ^ (n.is_f32 ? 0x80000000ull : 0x8000000000000000ull);
            return 1;
        }
        if (n.kind == LEX_IDENT) {
            /* -%r: only in a few legacy forms; treat as an error */
        }
        char d[64];
        describe(&n, d, sizeof d);
        error_at(p, n.line, n.col, "expected a number after '-' but found %s", d);
        return 0;
    }
    if (t.kind == LEX_INT) {
        o->kind = PTX_OP_IMM_INT;
        o->imm = (int64_t)t.ival;
        return 1;
    }
    if (t.kind == LEX_FLOAT) {
        o->kind = PTX_OP_IMM_FLOAT;
        o->fbits = t.fbits;
        o->is_f32 = t.is_f32;
        return 1;
    }
    if (t.kind == LEX_IDENT)
        return parse_name_operand(p, o, t);
    if (is_punct(&t, '[')) {
        o->kind = PTX_OP_ADDRESS;
        lex_token b = next(p);
        if (b.kind == LEX_IDENT) {
            ptx_operand *base = alloc(p, sizeof *base);
            if (!parse_name_operand(p, base, b))
                return 0;
            if (base->kind == PTX_OP_SYMBOL) {
                o->imm = base->imm;
                base->imm = 0;
            }
            o->base = base;
            if (is_punct(peek(p), '+')) {
                next(p);
                int64_t off;
                if (!parse_int(p, &off))
                    return 0;
                /* 64-bit addresses wrap: [sym+off] as the hardware adds them */
                o->imm = (int64_t)((uint64_t)o->imm + (uint64_t)off);
            } else if (is_punct(peek(p), '-')) {
                next(p);
                int64_t off;
                if (!parse_int(p, &off))
                    return 0;
                o->imm = (int64_t)((uint64_t)o->imm - (uint64_t)off);
            }
            if (is_punct(peek(p), ',')) {
                /* texture/surface addressing: [tex, {coords}] or [tex, sampler, {coords}] */
                ptx_operand tmp[4];
                int n = 0;
                while (is_punct(peek(p), ',') && n < 4) {
                    next(p);
                    if (!parse_operand(p, &tmp[n]))
                        return 0;
                    n++;
                }
                o->elems = alloc(p, (size_t)n * sizeof(ptx_operand));
                memcpy(o->elems, tmp, (size_t)n * sizeof(ptx_operand));
                o->nelems = n;
            }
        } else if (b.kind == LEX_INT) {
            o->imm = (int64_t)b.ival;
        } else {
            char d[64];
            describe(&b, d, sizeof d);
            error_at(p, b.line, b.col, "expected a register, variable or address in [] but found %s", d);
            return 0;
        }
        return expect_punct(p, ']');
    }
    if (is_punct(&t, '{')) {
        o->kind = PTX_OP_VECTOR;
        /* the widest PTX writes: wgmma.mma_async m64n256 f32 accumulators */
        ptx_operand tmp[128];
        int n = 0;
        for (;;) {
            if (n == 128) {
                error_at(p, t.line, t.col, "vector operand has too many elements");
                return 0;
            }
            if (is_punct(peek(p), '{')) {
                lex_token *q = peek(p);
                error_at(p, q->line, q->col, "vector operands do not nest");
                return 0;
            }
            if (!parse_operand(p, &tmp[n]))
                return 0;
            n++;
            lex_token s = next(p);
            if (is_punct(&s, '}'))
                break;
            if (!is_punct(&s, ',')) {
                char d[64];
                describe(&s, d, sizeof d);
                error_at(p, s.line, s.col, "expected ',' or '}' in vector operand but found %s", d);
                return 0;
            }
        }
        o->elems = alloc(p, (size_t)n * sizeof(ptx_operand));
        memcpy(o->elems, tmp, (size_t)n * sizeof(ptx_operand));
        o->nelems = n;
        return 1;
    }
    char d[64];
    describe(&t, d, sizeof d);
    error_at(p, t.line, t.col, "expected an operand but found %s", d);
    return 0;
}

/* ( a, b, ... ) operand list of call */
static int parse_paren_list(parser *p, ptx_operand **out, int *n)
{
    if (!expect_punct(p, '('))
        return 0;
    ptx_operand tmp[64];
    int k = 0;
    if (is_punct(peek(p), ')')) {
        next(p);
    } else {
        for (;;) {
            if (k == 64) {
                error_at(p, p->tok.line, p->tok.col, "too many call operands");
                return 0;
            }
            if (!parse_operand(p, &tmp[k++]))
                return 0;
            lex_token s = next(p);
            if (is_punct(&s, ')'))
                break;
            if (!is_punct(&s, ',')) {
                error_at(p, s.line, s.col, "expected ',' or ')' in call operand list");
                return 0;
            }
        }
    }
    *out = alloc(p, (size_t)(k ? k : 1) * sizeof(ptx_operand));
    memcpy(*out, tmp, (size_t)k * sizeof(ptx_operand));
    *n = k;
    return 1;
}

/* ---- instructions ---------------------------------------------------- */

static int parse_instruction(parser *p, ptx_insn *in, lex_token op)
{
    in->opcode = tok_str(p, &op);
    in->pos = (ptx_pos){op.line, op.col};
    in->loc_file = p->loc_file;
    in->loc_line = p->loc_line;
    in->loc_col = p->loc_col;
    while (peek(p)->kind == LEX_DOTIDENT) {
        lex_token m = next(p);
        if (in->nmods == PTX_MAX_MODS) {
            error_at(p, m.line, m.col, "too many instruction modifiers");
            return 0;
        }
        in->mods[in->nmods++] = tok_str(p, &m);
    }
    if (strcmp(in->opcode, "call") == 0) {
        /* call{.uni} (rets), target, (args) {, proto | , table} ; */
        if (is_punct(peek(p), '(')) {
            if (!parse_paren_list(p, &in->call_rets, &in->ncall_rets))
                return 0;
            if (!expect_punct(p, ','))
                return 0;
        }
        in->ops = alloc(p, sizeof(ptx_operand));
        in->nops = 1;
        if (!parse_operand(p, &in->ops[0]))
            return 0;
        if (is_punct(peek(p), ',')) {
            next(p);
            if (is_punct(peek(p), '(')) {
                if (!parse_paren_list(p, &in->call_args, &in->ncall_args))
                    return 0;
                if (is_punct(peek(p), ',')) {
                    next(p);
                    lex_token pr = next(p);
                    if (pr.kind != LEX_IDENT) {
                        error_at(p, pr.line, pr.col, "expected a prototype or target table name");
                        return 0;
                    }
                    in->call_prototype = tok_str(p, &pr);
                }
            } else {
                lex_token pr = next(p);
                in->call_prototype = tok_str(p, &pr);
            }
        }
        return expect_punct(p, ';');
    }
    ptx_operand tmp[32];
    int n = 0;
    if (!is_punct(peek(p), ';')) {
        for (;;) {
            if (n == 32) {
                error_at(p, p->tok.line, p->tok.col, "too many operands");
                return 0;
            }
            if (!parse_operand(p, &tmp[n]))
                return 0;
            n++;
            lex_token *s = peek(p);
            if (is_punct(s, '|')) {
                /* setp d|q form: pack the pair into a 2-element vector */
                next(p);
                ptx_operand second;
                if (!parse_operand(p, &second))
                    return 0;
                ptx_operand *el = alloc(p, 2 * sizeof(ptx_operand));
                el[0] = tmp[n - 1];
                el[1] = second;
                memset(&tmp[n - 1], 0, sizeof tmp[0]);
                tmp[n - 1].kind = PTX_OP_VECTOR;
                tmp[n - 1].elems = el;
                tmp[n - 1].nelems = 2;
                tmp[n - 1].negate = 2; /* marks the pair */
                tmp[n - 1].pos = el[0].pos;
                s = peek(p);
            }
            if (is_punct(s, ',')) {
                next(p);
                continue;
            }
            break;
        }
    }
    in->ops = alloc(p, (size_t)(n ? n : 1) * sizeof(ptx_operand));
    memcpy(in->ops, tmp, (size_t)n * sizeof(ptx_operand));
    in->nops = n;
    lex_token e = next(p);
    if (!is_punct(&e, ';')) {
        char d[64];
        describe(&e, d, sizeof d);
        error_at(p, e.line, e.col, "expected ';' after instruction but found %s", d);
        return 0;
    }
    return 1;
}

/* ---- functions ------------------------------------------------------- */

typedef struct fn_build {
    ptrvec params, rets, regs, locals;
    ptx_stmt *body; size_t nbody, capbody;
} fn_build;

static void emit_reg(parser *p, ptx_var *v, void *ctx)
{
    fn_build *b = ctx;
    if (++p->nregs_declared > MAX_REGISTERS) {
        if (p->nregs_declared == MAX_REGISTERS + 1)
            error_at(p, v->pos.line, v->pos.col, "too many registers: kemu supports at most %d per function",
                     MAX_REGISTERS);
        return;
    }
    v->scope = p->scope_id;
    v->index = (int)b->regs.n;
    declare(p, v);
    pv_push(p, &b->regs, v);
}

static void emit_local(parser *p, ptx_var *v, void *ctx)
{
    fn_build *b = ctx;
    v->scope = p->scope_id;
    v->index = (int)b->locals.n;
    declare(p, v);
    pv_push(p, &b->locals, v);
}

static void emit_param(parser *p, ptx_var *v, void *ctx)
{
    ptrvec *pv = ctx;
    pv_push(p, pv, v);
}

static int parse_param_list(parser *p, ptrvec *out, int is_entry)
{
    if (!expect_punct(p, '('))
        return 0;
    if (is_punct(peek(p), ')')) {
        next(p);
        return 1;
    }
    for (;;) {
        lex_token sp = next(p);
        ptx_space space = space_from_tok(&sp);
        if (space != PTX_SPACE_PARAM && space != PTX_SPACE_REG) {
            char d[64];
            describe(&sp, d, sizeof d);
            error_at(p, sp.line, sp.col, "expected .param in parameter list but found %s", d);
            return 0;
        }
        size_t before = out->n;
        if (!parse_var_decl(p, space, 0, 0, 0, 1, emit_param, out))
            return 0;
        for (size_t i = before; i < out->n; i++) {
            ptx_var *v = out->v[i];
            v->is_entry_param = is_entry;
            v->is_func_param = !is_entry;
        }
        lex_token s = next(p);
        if (is_punct(&s, ')'))
            return 1;
        if (!is_punct(&s, ',')) {
            char d[64];
            describe(&s, d, sizeof d);
            error_at(p, s.line, s.col, "expected ',' or ')' in parameter list but found %s", d);
            return 0;
        }
    }
}

static void body_push(parser *p, fn_build *b, ptx_stmt *s)
{
    if (util_grow(&b->body, &b->capbody, b->nbody + 1, sizeof(ptx_stmt))) {
        p->oom = 1;
        return;
    }
    b->body[b->nbody++] = *s;
}

/* parse_int for a value that must fit 32 bits unsigned (a kernel
 * directive's); `what` names it in the error, at the value. */
static int parse_u32(parser *p, unsigned *out, const char *what, int what_len)
{
    lex_token *at = peek(p);
    int line = at->line, col = at->col;
    int64_t v;
    if (!parse_int(p, &v))
        return 0;
    if (v < 0 || v > UINT32_MAX) {
        error_at(p, line, col, "%.*s must lie within 0..4294967295, not %lld", what_len, what, (long long)v);
        return 0;
    }
    *out = (unsigned)v;
    return 1;
}

static int parse_dims(parser *p, unsigned d[3])
{
    for (int i = 0; i < 3; i++) {
        if (!parse_u32(p, &d[i], "a dimension", 11))
            return 0;
        if (!is_punct(peek(p), ','))
            break;
        next(p);
    }
    return 1;
}

/* Skips tokens to the `}` that closes `depth` open braces. */
static void skip_braced_from(parser *p, int depth)
{
    for (;;) {
        lex_token t = next(p);
        if (t.kind == LEX_EOF)
            return;
        if (is_punct(&t, '{'))
            depth++;
        else if (is_punct(&t, '}') && --depth <= 0)
            return;
    }
}

static void skip_braced(parser *p)
{
    int depth = 0;
    for (;;) {
        lex_token t = next(p);
        if (t.kind == LEX_EOF)
            return;
        if (is_punct(&t, '{'))
            depth++;
        else if (is_punct(&t, '}') && --depth <= 0)
            return;
    }
}

/* ---- sections ---------------------------------------------------------- */

/* The section named `name` of the module, created empty when new. */
static ptx_section *section_for(parser *p, const lex_token *name)
{
    ptx_module *m = p->m;
    for (int i = 0; i < m->nsections; i++)
        if ((int)strlen(m->sections[i].name) == name->len &&
            !memcmp(m->sections[i].name, name->start, (size_t)name->len))
            return &m->sections[i];
    ptx_section *ns = realloc(m->sections, (size_t)(m->nsections + 1) * sizeof *ns);
    if (!ns) {
        p->oom = 1;
        return NULL;
    }
    m->sections = ns;
    ptx_section *s = &ns[m->nsections++];
    memset(s, 0, sizeof *s);
    s->name = tok_str(p, name);
    s->pos = (ptx_pos){name->line, name->col};
    return s;
}

typedef struct section_build {
    ptx_section *s;
    size_t capdata, caprefs, caplabels;
} section_build;

static int section_put(parser *p, section_build *b, uint64_t value, unsigned width)
{
    ptx_section *s = b->s;
    if (s->size + width > UINT32_MAX || util_grow(&s->data, &b->capdata, s->size + width, 1)) {
        p->oom = s->size + width <= UINT32_MAX;
        return 0;
    }
    for (unsigned i = 0; i < width; i++)
        s->data[s->size++] = (unsigned char)(value >> (8 * i));
    return 1;
}

/* One value of a `.bN` item: a number, or a name with an optional
 * +/- offset. */
static int section_value(parser *p, section_build *b, unsigned width)
{
    lex_token t = next(p);
    int negative = 0;
    if (is_punct(&t, '-')) {
        negative = 1;
        t = next(p);
    }
    if (t.kind == LEX_INT)
        return section_put(p, b, negative ? (uint64_t)0 - t.ival : t.ival, width);
    if (negative || (t.kind != LEX_IDENT && t.kind != LEX_DOTIDENT))
        return 0;
    ptx_section_ref r = {0, (uint8_t)width, t.kind == LEX_DOTIDENT ? PTX_REF_SECTION : PTX_REF_NAME,
                         tok_str(p, &t), 0};
    lex_token *q = peek(p);
    if (is_punct(q, '+') || is_punct(q, '-')) {
        int minus = is_punct(q, '-');
        next(p);
        lex_token n = next(p);
        if (n.kind != LEX_INT)
            return 0;
        r.addend = (int64_t)(minus ? 0 - n.ival : n.ival); /* wraps, as the address does */
    }
    ptx_section *s = b->s;
    r.at = (uint32_t)s->size;
    if (util_grow(&s->refs, &b->caprefs, (size_t)s->nrefs + 1, sizeof r)) {
        p->oom = 1;
        return 0;
    }
    s->refs[s->nrefs++] = r;
    return section_put(p, b, 0, width);
}

/* `.section NAME { ... }`: keeps the items (nvcc -G's DWARF); a block
 * with anything else in it is skipped whole, as before, and leaves the
 * section as it was. */
static void parse_section(parser *p)
{
    lex_token name = next(p);
    if (!is_punct(peek(p), '{'))
        return;
    if (name.kind != LEX_DOTIDENT && name.kind != LEX_IDENT) {
        skip_braced(p);
        return;
    }
    next(p); /* { */
    section_build b = {section_for(p, &name), 0, 0, 0};
    if (!b.s)
        return;
    ptx_section *s = b.s;
    b.capdata = s->size;
    b.caprefs = (size_t)s->nrefs;
    b.caplabels = (size_t)s->nlabels;
    size_t keep_size = s->size;
    int keep_refs = s->nrefs, keep_labels = s->nlabels;
    int ok = 1;
    for (;;) {
        lex_token t = next(p);
        if (is_punct(&t, '}') || t.kind == LEX_EOF)
            break;
        unsigned width = tok_is(&t, ".b8") ? 1 : tok_is(&t, ".b16") ? 2 : tok_is(&t, ".b32") ? 4
                       : tok_is(&t, ".b64") ? 8 : 0;
        if (width) {
            do {
                if (!section_value(p, &b, width)) {
                    ok = 0;
                    break;
                }
            } while (is_punct(peek(p), ',') && (next(p), 1));
            if (!ok)
                break;
            continue;
        }
        if (t.kind == LEX_IDENT && is_punct(peek(p), ':')) {
            next(p);
            if (util_grow(&s->labels, &b.caplabels, (size_t)s->nlabels + 1, sizeof *s->labels)) {
                p->oom = 1;
                ok = 0;
                break;
            }
            s->labels[s->nlabels++] = (ptx_section_label){tok_str(p, &t), (uint32_t)s->size};
            continue;
        }
        ok = 0;
        break;
    }
    if (!ok) {
        /* not a form kept here: back to what the section held */
        s->size = keep_size;
        s->nrefs = keep_refs;
        s->nlabels = keep_labels;
        if (!is_punct(&p->tok, '}'))
            skip_braced_from(p, 1);
    }
}

/* Renames a label symbol operand (and those inside vectors) from `from` to `to`. */
static void rename_label_refs(ptx_operand *o, int n, const char *from, const char *to)
{
    for (int i = 0; i < n; i++) {
        if (o[i].kind == PTX_OP_SYMBOL && o[i].name && !strcmp(o[i].name, from))
            o[i].name = to;
        else if (o[i].kind == PTX_OP_VECTOR)
            rename_label_refs(o[i].elems, o[i].nelems, from, to);
        else if (o[i].kind == PTX_OP_ADDRESS && o[i].base)
            rename_label_refs(o[i].base, 1, from, to);
    }
}

/* A nested { } block (statements start .. end) closes: the labels it
 * declares are its own (ptxas scopes labels to blocks, and inline asm that
 * is expanded twice repeats its labels), so each is renamed NAME$N, with N
 * unique in the module, in its declaration and in the block's references.
 * Labels of blocks nested inside were renamed when they closed. */
static void scope_labels(parser *p, fn_build *b, size_t start)
{
    for (size_t i = start; i < b->nbody; i++) {
        ptx_stmt *s = &b->body[i];
        if (s->kind != PTX_STMT_LABEL || s->scoped)
            continue;
        const char *from = s->label;
        char *to = util_arena_alloc(&p->m->arena, strlen(from) + 24);
        if (!to) {
            p->oom = 1;
            return;
        }
        sprintf(to, "%s$%d", from, ++p->next_label_scope);
        for (size_t j = start; j < b->nbody; j++) {
            ptx_stmt *r = &b->body[j];
            if (r->kind == PTX_STMT_LABEL && !r->scoped && !strcmp(r->label, from)) {
                r->label = to;
                r->scoped = 1;
            } else if (r->kind == PTX_STMT_INSN) {
                rename_label_refs(r->insn.ops, r->insn.nops, from, to);
            }
        }
    }
}

static void parse_body(parser *p, fn_build *b)
{
    int depth = 1;
    size_t block_start[64];
    while (depth > 0) {
        lex_token t = next(p);
        if (p->oom)
            return;
        if (t.kind == LEX_EOF) {
            error_at(p, t.line, t.col, "unexpected end of file inside the body of '%s'", p->fn->name);
            return;
        }
        if (t.kind == LEX_ERROR) {
            recover(p);
            continue;
        }
        if (is_punct(&t, '{')) {
            if (depth - 1 < (int)(sizeof block_start / sizeof block_start[0]))
                block_start[depth - 1] = b->nbody;
            depth++;
            scope_push(p);
            continue;
        }
        if (is_punct(&t, '}')) {
            depth--;
            if (depth > 0) {
                scope_pop(p);
                if (depth - 1 < (int)(sizeof block_start / sizeof block_start[0]))
                    scope_labels(p, b, block_start[depth - 1]);
            }
            continue;
        }
        if (is_punct(&t, ';'))
            continue;
        if (t.kind == LEX_DOTIDENT) {
            ptx_space sp = space_from_tok(&t);
            if (sp == PTX_SPACE_REG) {
                if (!parse_var_decl(p, sp, 0, 0, 0, 0, emit_reg, b) || !expect_punct(p, ';'))
                    recover(p);
                continue;
            }
            if (sp == PTX_SPACE_LOCAL || sp == PTX_SPACE_SHARED || sp == PTX_SPACE_PARAM ||
                sp == PTX_SPACE_CONST || sp == PTX_SPACE_GLOBAL) {
                if (!parse_var_decl(p, sp, 0, 0, 0, 0, emit_local, b) || !expect_punct(p, ';'))
                    recover(p);
                continue;
            }
            if (tok_is(&t, ".loc")) {
                int64_t f, l, c = 0;
                if (parse_int(p, &f) && parse_int(p, &l)) {
                    if (peek(p)->kind == LEX_INT)
                        parse_int(p, &c);
                    p->loc_file = (int)f;
                    p->loc_line = (int)l;
                    p->loc_col = (int)c;
                }
                /* , function_name label {+ imm}, inlined_at f l c */
                while (is_punct(peek(p), ',')) {
                    next(p);
                    while (peek(p)->kind != LEX_EOF && !is_punct(peek(p), ',') &&
                           peek(p)->line == t.line)
                        next(p);
                }
                continue;
            }
            if (tok_is(&t, ".pragma")) {
                recover(p);
                continue;
            }
            if (tok_is(&t, ".extern") || tok_is(&t, ".weak")) {
                /* .extern .shared / .extern .func inside a body: rare; skip */
                recover(p);
                continue;
            }
            char d[64];
            describe(&t, d, sizeof d);
            error_at(p, t.line, t.col, "unexpected directive %s in function body", d);
            recover(p);
            continue;
        }
        if (is_punct(&t, '@')) {
            ptx_operand *g = alloc(p, sizeof *g);
            if (!parse_operand(p, g)) {
                recover(p);
                continue;
            }
            if (g->kind != PTX_OP_REG || g->var->type != PTX_T_PRED) {
                error_at(p, g->pos.line, g->pos.col, "a guard must be a predicate register");
                recover(p);
                continue;
            }
            lex_token op = next(p);
            if (op.kind != LEX_IDENT) {
                error_at(p, op.line, op.col, "expected an instruction after the guard");
                recover(p);
                continue;
            }
            ptx_stmt s;
            memset(&s, 0, sizeof s);
            s.kind = PTX_STMT_INSN;
            s.pos = (ptx_pos){t.line, t.col};
            s.insn.guard = g;
            if (!parse_instruction(p, &s.insn, op)) {
                recover(p);
                continue;
            }
            body_push(p, b, &s);
            continue;
        }
        if (t.kind == LEX_IDENT) {
            if (is_punct(peek(p), ':')) {
                next(p);
                if (peek(p)->kind == LEX_DOTIDENT && tok_is(peek(p), ".callprototype")) {
                    /* prototype_N : .callprototype (...) _ (...) ; */
                    recover(p);
                    continue;
                }
                if (peek(p)->kind == LEX_DOTIDENT && tok_is(peek(p), ".branchtargets")) {
                    ptx_stmt s;
                    memset(&s, 0, sizeof s);
                    s.kind = PTX_STMT_LABEL;
                    s.label = tok_str(p, &t);
                    s.pos = (ptx_pos){t.line, t.col};
                    body_push(p, b, &s);
                    /* the table itself becomes a pseudo-instruction */
                    lex_token d = next(p);
                    ptx_stmt ts;
                    memset(&ts, 0, sizeof ts);
                    ts.kind = PTX_STMT_INSN;
                    ts.pos = (ptx_pos){d.line, d.col};
                    if (!parse_instruction(p, &ts.insn, d)) {
                        recover(p);
                        continue;
                    }
                    body_push(p, b, &ts);
                    continue;
                }
                ptx_stmt s;
                memset(&s, 0, sizeof s);
                s.kind = PTX_STMT_LABEL;
                s.label = tok_str(p, &t);
                s.pos = (ptx_pos){t.line, t.col};
                body_push(p, b, &s);
                continue;
            }
            ptx_stmt s;
            memset(&s, 0, sizeof s);
            s.kind = PTX_STMT_INSN;
            s.pos = (ptx_pos){t.line, t.col};
            if (!parse_instruction(p, &s.insn, t)) {
                recover(p);
                continue;
            }
            body_push(p, b, &s);
            continue;
        }
        char d[64];
        describe(&t, d, sizeof d);
        error_at(p, t.line, t.col, "expected an instruction, label or declaration but found %s", d);
        recover(p);
    }
}

static void parse_function(parser *p, int is_entry, int is_extern, int is_visible, int is_weak,
                           lex_token kw)
{
    ptx_function *fn = alloc(p, sizeof *fn);
    fn->is_entry = is_entry;
    fn->is_extern = is_extern;
    fn->is_visible = is_visible;
    fn->is_weak = is_weak;
    fn->pos = (ptx_pos){kw.line, kw.col};
    p->fn = fn;
    p->nregs_declared = 0;
    fn_build b;
    memset(&b, 0, sizeof b);
    if (!is_entry && is_punct(peek(p), '(')) {
        if (!parse_param_list(p, &b.rets, 0))
            goto fail;
    }
    lex_token name = next(p);
    if (name.kind != LEX_IDENT) {
        char d[64];
        describe(&name, d, sizeof d);
        error_at(p, name.line, name.col, "expected a function name but found %s", d);
        goto fail;
    }
    fn->name = tok_str(p, &name);
    if (is_punct(peek(p), '(')) {
        if (!parse_param_list(p, &b.params, is_entry))
            goto fail;
    }
    for (;;) {
        lex_token *t = peek(p);
        if (t->kind != LEX_DOTIDENT)
            break;
        next(p);
        lex_token d = p->tok;
        int ok = 1;
        if (tok_is(&d, ".maxntid")) ok = parse_dims(p, fn->maxntid);
        else if (tok_is(&d, ".reqntid")) ok = parse_dims(p, fn->reqntid);
        else if (tok_is(&d, ".reqnctapercluster")) ok = parse_dims(p, fn->reqnctapercluster);
        else if (tok_is(&d, ".explicitcluster")) fn->explicitcluster = 1;
        else if (tok_is(&d, ".noreturn")) fn->is_noreturn = 1;
        else if (tok_is(&d, ".minnctapersm") || tok_is(&d, ".maxnctapersm") || tok_is(&d, ".maxnreg") ||
                 tok_is(&d, ".maxclusterrank")) {
            unsigned v;
            ok = parse_u32(p, &v, d.start, d.len);
            if (ok && tok_is(&d, ".minnctapersm")) fn->minnctapersm = v;
            else if (ok && tok_is(&d, ".maxnreg")) fn->maxnreg = v;
            else if (ok && tok_is(&d, ".maxclusterrank")) fn->maxclusterrank = v;
        } else if (tok_is(&d, ".pragma")) {
            lex_token s = next(p);
            ok = s.kind == LEX_STRING && expect_punct(p, ';');
        } else {
            char dd[64];
            describe(&d, dd, sizeof dd);
            error_at(p, d.line, d.col, "unknown function directive %s", dd);
            goto fail;
        }
        if (!ok)
            goto fail;
    }
    /* declare parameters in the function scope */
    for (size_t i = 0; i < b.params.n; i++)
        declare(p, b.params.v[i]);
    for (size_t i = 0; i < b.rets.n; i++)
        declare(p, b.rets.v[i]);
    lex_token t = next(p);
    if (is_punct(&t, ';')) {
        fn->has_body = 0;
    } else if (is_punct(&t, '{')) {
        fn->has_body = 1;
        parse_body(p, &b);
    } else {
        char d[64];
        describe(&t, d, sizeof d);
        error_at(p, t.line, t.col, "expected '{' or ';' after the declaration of '%s' but found %s",
                 fn->name, d);
        goto fail;
    }
    fn->params = (ptx_var **)pv_finish(p, &b.params, &fn->nparams);
    fn->rets = (ptx_var **)pv_finish(p, &b.rets, &fn->nrets);
    fn->regs = (ptx_var **)pv_finish(p, &b.regs, &fn->nregs);
    fn->locals = (ptx_var **)pv_finish(p, &b.locals, &fn->nlocals);
    fn->body = alloc(p, (b.nbody ? b.nbody : 1) * sizeof(ptx_stmt));
    if (b.nbody)
        memcpy(fn->body, b.body, b.nbody * sizeof(ptx_stmt));
    fn->nbody = (int)b.nbody;
    free(b.body);
    goto done;
fail:
    free(b.params.v);
    free(b.rets.v);
    free(b.regs.v);
    free(b.locals.v);
    free(b.body);
    fn = NULL;
    /* skip the rest of this declaration */
    for (;;) {
        lex_token *t = peek(p);
        if (t->kind == LEX_EOF) break;
        if (is_punct(t, ';')) { next(p); break; }
        if (is_punct(t, '{')) { skip_braced(p); break; }
        next(p);
    }
done:
    util_map_free(&p->names);
    free(p->undo);
    p->undo = NULL;
    p->nundo = p->capundo = 0;
    free(p->scope_marks);
    p->scope_marks = NULL;
    p->nscopes = p->capscopes = 0;
    p->scope_id = 0;
    p->fn = NULL;
    if (fn) {
        ptx_module *m = p->m;
        /* functions array in the heap, moved at the end */
        ptrvec *fv = (ptrvec *)((char *)p + 0) ; (void)fv;
        ptx_function **nf = realloc(m->functions, (size_t)(m->nfunctions + 1) * sizeof *nf);
        if (!nf) { p->oom = 1; return; }
        m->functions = nf;
        m->functions[m->nfunctions++] = fn;
    }
}

static void emit_global(parser *p, ptx_var *v, void *ctx)
{
    (void)ctx;
    ptx_module *m = p->m;
    ptx_var **ng = realloc(m->globals, (size_t)(m->nglobals + 1) * sizeof *ng);
    if (!ng) { p->oom = 1; return; }
    m->globals = ng;
    v->index = m->nglobals;
    m->globals[m->nglobals++] = v;
}

static void parse_module(parser *p)
{
    int seen_version = 0;
    for (;;) {
        lex_token t = next(p);
        if (t.kind == LEX_EOF || p->oom)
            break;
        if (p->diag.full)
            break;
        if (t.kind == LEX_ERROR)
            continue;
        if (is_punct(&t, ';'))
            continue;
        if (t.kind != LEX_DOTIDENT) {
            char d[64];
            describe(&t, d, sizeof d);
            error_at(p, t.line, t.col, "expected a directive at module scope but found %s", d);
            recover(p);
            continue;
        }
        if (tok_is(&t, ".version")) {
            lex_token v = next(p);
            int maj = 0, min = 0;
            if (v.kind == LEX_FLOAT || v.kind == LEX_INT) {
                char vb[32];
                snprintf(vb, sizeof vb, "%.*s", v.len < 31 ? v.len : 31, v.start);
                if (sscanf(vb, "%d.%d", &maj, &min) < 1) maj = 0;
            }
            if (maj < 1) {
                error_at(p, v.line, v.col, "malformed .version");
                continue;
            }
            if (maj > 9) {
                error_at(p, v.line, v.col, "PTX ISA version %d.%d is newer than kemu supports (9.x)", maj, min);
                seen_version = 1;
                continue;
            }
            p->m->version_major = maj;
            p->m->version_minor = min;
            seen_version = 1;
            continue;
        }
        if (!seen_version) {
            error_at(p, t.line, t.col, "the module must start with a .version directive");
            seen_version = 1;
        }
        if (tok_is(&t, ".target")) {
            for (;;) {
                lex_token v = next(p);
                if (v.kind != LEX_IDENT) {
                    error_at(p, v.line, v.col, "malformed .target");
                    break;
                }
                if (v.len > 3 && memcmp(v.start, "sm_", 3) == 0)
                    snprintf(p->m->target, sizeof p->m->target, "%.*s", v.len > 60 ? 60 : v.len, v.start);
                else if (!tok_is(&v, "texmode_unified") && !tok_is(&v, "texmode_independent") &&
                         !tok_is(&v, "debug") && !tok_is(&v, "map_f64_to_f32"))
                    error_at(p, v.line, v.col, "unknown .target option '%.*s'", v.len, v.start);
                if (!is_punct(peek(p), ','))
                    break;
                next(p);
            }
            continue;
        }
        if (tok_is(&t, ".address_size")) {
            int64_t a;
            if (parse_int(p, &a)) {
                if (a != 64 && a != 32)
                    error_at(p, t.line, t.col, ".address_size must be 32 or 64");
                p->m->address_size = (int)a;
                if (a == 32)
                    error_at(p, t.line, t.col, "32-bit PTX (.address_size 32) is not supported; compile for 64-bit");
            }
            continue;
        }
        if (tok_is(&t, ".file")) {
            int64_t id;
            if (!parse_int(p, &id))
                continue;
            lex_token s = next(p);
            if (s.kind != LEX_STRING) {
                error_at(p, s.line, s.col, "expected a file name string");
                continue;
            }
            ptx_file_entry *nf = realloc(p->m->files, (size_t)(p->m->nfiles + 1) * sizeof *nf);
            if (!nf) { p->oom = 1; break; }
            p->m->files = nf;
            nf[p->m->nfiles].id = (int)id;
            nf[p->m->nfiles].path = util_arena_strndup(&p->m->arena, s.start + 1, (size_t)s.len - 2);
            p->m->nfiles++;
            /* optional timestamp, size */
            while (is_punct(peek(p), ',')) {
                next(p);
                next(p);
            }
            continue;
        }
        if (tok_is(&t, ".section")) {
            parse_section(p);
            continue;
        }
        if (tok_is(&t, ".pragma")) {
            recover(p);
            continue;
        }
        int is_extern = 0, is_visible = 0, is_weak = 0;
        lex_token d = t;
        for (;;) {
            if (tok_is(&d, ".extern")) is_extern = 1;
            else if (tok_is(&d, ".visible")) is_visible = 1;
            else if (tok_is(&d, ".weak") || tok_is(&d, ".common")) is_weak = 1;
            else break;
            d = next(p);
        }
        if (tok_is(&d, ".entry") || tok_is(&d, ".func")) {
            parse_function(p, tok_is(&d, ".entry"), is_extern, is_visible, is_weak, d);
            continue;
        }
        ptx_space sp = space_from_tok(&d);
        if (sp == PTX_SPACE_GLOBAL || sp == PTX_SPACE_CONST || sp == PTX_SPACE_SHARED ||
            sp == PTX_SPACE_LOCAL || sp == PTX_SPACE_TEX) {
            if (sp == PTX_SPACE_TEX)
                sp = PTX_SPACE_GLOBAL;
            if (!parse_var_decl(p, sp, is_extern, is_visible, is_weak, 0, emit_global, NULL) ||
                !expect_punct(p, ';'))
                recover(p);
            continue;
        }
        char dd[64];
        describe(&d, dd, sizeof dd);
        error_at(p, d.line, d.col, "unknown directive %s at module scope", dd);
        recover(p);
    }
    if (!seen_version && !p->diag.nerrors)
        error_at(p, 1, 1, "not a PTX module: no .version directive");
}

kemu_status ptx_parse(const char *text, size_t len, const char *filename, ptx_module **out,
                      kemu_error *err)
{
    ptx_module *m = calloc(1, sizeof *m);
    if (!m)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    parser *p = calloc(1, sizeof *p);
    if (!p) {
        free(m);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    p->m = m;
    p->filename = filename ? filename : "<ptx>";
    p->text = text;
    p->textlen = len;
    m->filename = util_arena_strndup(&m->arena, p->filename, strlen(p->filename));
    m->address_size = 64;
    m->text = util_arena_strndup(&m->arena, text, len);
    m->textlen = m->text ? len : 0;
    ptx_diag_init(&p->diag, p->filename, text, len);
    lex_init(&p->lex, text, len);
    parse_module(p);
    kemu_status st = KEMU_OK;
    if (p->oom) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "%s: out of memory while parsing", p->filename);
    } else if (p->diag.nerrors) {
        st = util_error(err, KEMU_ERR_PARSE, "%s", ptx_diag_finish(&p->diag));
        if (err) {
            snprintf(err->file, sizeof err->file, "%s", p->filename);
            err->line = p->diag.first_line;
            err->column = p->diag.first_col;
        }
    }
    ptx_diag_free(&p->diag);
    util_map_free(&p->names);
    free(p->undo);
    free(p->scope_marks);
    free(p);
    if (st != KEMU_OK) {
        ptx_module_free(m);
        return st;
    }
    *out = m;
    return KEMU_OK;
}

void ptx_module_free(ptx_module *m)
{
    if (!m)
        return;
    free(m->globals);
    free(m->functions);
    free(m->files);
    for (int i = 0; i < m->nsections; i++) {
        free(m->sections[i].data);
        free(m->sections[i].refs);
        free(m->sections[i].labels);
    }
    free(m->sections);
    util_arena_free(&m->arena);
    free(m);
}

const ptx_section *ptx_module_section(const ptx_module *m, const char *name)
{
    for (int i = 0; m && i < m->nsections; i++)
        if (!strcmp(m->sections[i].name, name))
            return &m->sections[i];
    return NULL;
}
