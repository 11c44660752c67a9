/* Expressions of the debugger (print, conditions, watch, x): C operators
 * over PTX registers, special names (threadIdx.x, blockIdx.y, blockDim,
 * gridDim, warpSize, $lane, $warp, $pc, $event), kernel parameters and
 * module variables by name, and casts, with cuda-gdb's @space qualifiers
 * for pointers: (@shared float *)16. Every value is evaluated for one lane
 * of the focused warp, in the focused frame. */
#include "config.h"
#include "debug/debug.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    dbg *d;
    const char *s;
    int lane;
    char *err;
    size_t nerr;
    int failed;
} parser;

static void fail(parser *p, const char *fmt, const char *arg)
{
    if (!p->failed)
        snprintf(p->err, p->nerr, fmt, arg ? arg : "");
    p->failed = 1;
}

static void skip(parser *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int accept(parser *p, const char *tok)
{
    skip(p);
    size_t n = strlen(tok);
    if (strncmp(p->s, tok, n))
        return 0;
    /* do not split "<<" as "<", "&&" as "&", "==" as "=" ... */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '&' || tok[0] == '|' || tok[0] == '=' ||
                   tok[0] == '!') &&
        (p->s[1] == tok[0] || p->s[1] == '='))
        return 0;
    p->s += n;
    return 1;
}

static dbg_value mk_int(int64_t i)
{
    dbg_value v;
    memset(&v, 0, sizeof v);
    v.kind = DBG_V_INT;
    v.type = PTX_T_S64;
    v.i = i;
    v.u = (uint64_t)i;
    return v;
}

static dbg_value mk_uint(uint64_t u, int type)
{
    dbg_value v;
    memset(&v, 0, sizeof v);
    v.kind = DBG_V_UINT;
    v.type = type;
    v.u = u;
    v.i = (int64_t)u;
    return v;
}

static dbg_value mk_float(double f, int type)
{
    dbg_value v;
    memset(&v, 0, sizeof v);
    v.kind = DBG_V_FLOAT;
    v.type = type;
    v.f = f;
    return v;
}

static unsigned type_bytes(int type)
{
    unsigned n = type == PTX_T_PRED ? 1 : ptx_type_size((ptx_type)type);
    return n ? n : 4;
}

/* An lvalue's contents (non-lvalues as they are). */
static dbg_value rv(parser *p, dbg_value v)
{
    if (!v.is_lvalue || v.array_count)
        return v;
    if (dbg_load(p->d, &v, p->lane)) {
        char a[40];
        snprintf(a, sizeof a, "0x%llx", (unsigned long long)v.addr);
        fail(p, "Cannot access memory at address %s", a);
    }
    v.is_lvalue = 0;
    return v;
}

static double as_f(const dbg_value *v)
{
    return v->kind == DBG_V_FLOAT ? v->f : v->kind == DBG_V_INT ? (double)v->i : (double)v->u;
}

/* ---- names ---------------------------------------------------------------- */

static int read_ident(parser *p, char *buf, size_t n)
{
    skip(p);
    size_t k = 0;
    /* PTX names: a leading % or $, then letters, digits, _ $ and the
     * '.' of threadIdx.x */
    if ((*p->s == '%' || *p->s == '$') && k + 1 < n)
        buf[k++] = *p->s++;
    while ((isalnum((unsigned char)*p->s) || *p->s == '_' || *p->s == '$' ||
            (*p->s == '.' && k && isalpha((unsigned char)p->s[1]))) && k + 1 < n)
        buf[k++] = *p->s++;
    buf[k] = 0;
    return (int)k;
}

static int component(const char *c)
{
    return !strcmp(c, "x") ? 0 : !strcmp(c, "y") ? 1 : !strcmp(c, "z") ? 2 : -1;
}

static dbg_value special(parser *p, const char *name, int *found)
{
    *found = 1;
    dbg *d = p->d;
    dbg_focus *fo = dbg_focus_get(d);
    vm_launch *L = dbg_launch(d);
    char base[64] = "", comp[8] = "";
    const char *dot = strchr(name, '.');
    if (dot && (size_t)(dot - name) < sizeof base) {
        memcpy(base, name, (size_t)(dot - name));
        base[dot - name] = 0;
        snprintf(comp, sizeof comp, "%s", dot + 1);
    } else {
        snprintf(base, sizeof base, "%.63s", name);
    }
    int c = comp[0] ? component(comp) : -1;
    if (!strcmp(name, "$lane") || !strcmp(name, "%laneid"))
        return mk_uint((uint64_t)p->lane, PTX_T_U32);
    if (!strcmp(name, "$event"))
        return mk_uint(dbg_event(d), PTX_T_U64);
    if (!strcmp(name, "warpSize"))
        return mk_uint(VM_WARP, PTX_T_U32);
    if (!L) {
        *found = 0;
        return mk_int(0);
    }
    if (!strcmp(name, "$warp") || !strcmp(name, "%warpid"))
        return mk_uint(fo->w ? (uint64_t)fo->w->index : 0, PTX_T_U32);
    if (!strcmp(name, "$pc")) {
        dbg_where wh;
        if (fo->w && dbg_lane_where(d, fo->b, fo->w, p->lane, fo->frame, &wh) == 0)
            return mk_uint(wh.pc, PTX_T_U32);
        fail(p, "No registers: the lane is not running%s", NULL);
        return mk_int(0);
    }
    if (c >= 0 && (!strcmp(base, "threadIdx") || !strcmp(base, "%tid"))) {
        if (!fo->w) {
            fail(p, "No CUDA focus%s", NULL);
            return mk_int(0);
        }
        return mk_uint(fo->w->tid[c][p->lane], PTX_T_U32);
    }
    if (c >= 0 && (!strcmp(base, "blockIdx") || !strcmp(base, "%ctaid"))) {
        if (!fo->b) {
            fail(p, "No CUDA focus%s", NULL);
            return mk_int(0);
        }
        return mk_uint(fo->b->ctaid[c], PTX_T_U32);
    }
    if (c >= 0 && (!strcmp(base, "blockDim") || !strcmp(base, "%ntid")))
        return mk_uint(L->block[c], PTX_T_U32);
    if (c >= 0 && (!strcmp(base, "gridDim") || !strcmp(base, "%nctaid")))
        return mk_uint(L->grid[c], PTX_T_U32);
    *found = 0;
    return mk_int(0);
}

/* Whether a PTX symbol is the variable `name`: the same, or nvcc's name
 * for a function's static variable, _ZZ<function>E<length><name>. */
static int names_variable(const char *sym, const char *name)
{
    if (!strcmp(sym, name))
        return 1;
    char tail[300];
    snprintf(tail, sizeof tail, "E%zu%s", strlen(name), name);
    size_t a = strlen(sym), b = strlen(tail);
    return a > b && !strncmp(sym, "_ZZ", 3) && !strcmp(sym + a - b, tail);
}

static dbg_value name_value(parser *p, const char *name)
{
    dbg *d = p->d;
    int found;
    dbg_value v = special(p, name, &found);
    if (found || p->failed)
        return v;
    dbg_focus *fo = dbg_focus_get(d);
    vm_launch *L = dbg_launch(d);
    if (name[0] == '%') {
        dbg_where wh;
        if (!fo->w || dbg_lane_where(d, fo->b, fo->w, p->lane, fo->frame, &wh)) {
            fail(p, "No registers: lane %s is not running here", NULL);
            return mk_int(0);
        }
        uint32_t slot;
        int type, is_pred;
        if (dbg_find_register(wh.fn, name, &slot, &type, &is_pred)) {
            fail(p, "No register \"%s\" in the current function", name);
            return mk_int(0);
        }
        if (is_pred) {
            v = mk_uint(wh.frame->preds[slot] >> p->lane & 1, PTX_T_PRED);
            return v;
        }
        uint64_t bits = wh.frame->regs[(size_t)slot * VM_WARP + (size_t)p->lane];
        unsigned sz = type_bytes(type);
        uint64_t m = sz >= 8 ? ~0ull : (1ull << (8 * sz)) - 1;
        bits &= m;
        if (type == PTX_T_F32) {
            float f;
            uint32_t u = (uint32_t)bits;
            memcpy(&f, &u, 4);
            return mk_float(f, type);
        }
        if (type == PTX_T_F64) {
            double f;
            memcpy(&f, &bits, 8);
            return mk_float(f, type);
        }
        if (type == PTX_T_S8 || type == PTX_T_S16 || type == PTX_T_S32 || type == PTX_T_S64) {
            int64_t s = (int64_t)bits;
            if (sz < 8 && (bits >> (8 * sz - 1) & 1))
                s = (int64_t)(bits | ~m);
            v = mk_int(s);
            v.type = type;
            v.u = bits;
            return v;
        }
        return mk_uint(bits, type);
    }
    if (!L) {
        fail(p, "No symbol \"%s\" in current context (no kernel is running)", name);
        return mk_int(0);
    }
    /* kernel parameters */
    const bc_function *k = L->kernel;
    for (int i = 0; k && i < k->nparams; i++)
        if (k->params[i].name && !strcmp(k->params[i].name, name)) {
            memset(&v, 0, sizeof v);
            v.is_lvalue = 1;
            v.space = BC_SPACE_PARAM_KERNEL;
            v.addr = k->params[i].offset;
            v.type = k->params[i].type ? (int)k->params[i].type : PTX_T_B8;
            v.size = type_bytes(v.type);
            if (k->params[i].is_array || k->params[i].size > 8)
                v.array_count = k->params[i].size / v.size;
            return v;
        }
    /* module variables */
    const bc_module *m = L->mod;
    for (int i = 0; m && i < m->nsymbols; i++) {
        const bc_symbol *s = &m->symbols[i];
        if (!s->name || strcmp(s->name, name))
            continue;
        memset(&v, 0, sizeof v);
        v.is_lvalue = 1;
        v.space = s->space;
        v.addr = s->address;
        v.type = s->var && s->var->type ? (int)s->var->type : PTX_T_B8;
        v.size = type_bytes(v.type);
        if (s->var && (s->var->is_array || s->var->array_count))
            v.array_count = s->var->array_count ? s->var->array_count : s->size / v.size;
        return v;
    }
    /* variables declared inside the focused function (laid out as the
     * lowering lays them out: shared ones from the function's shared
     * base, local ones in its frame) */
    dbg_where fw;
    if (fo->w && dbg_lane_where(d, fo->b, fo->w, p->lane, fo->frame, &fw) == 0 && fw.fn->ptx) {
        const ptx_function *pf = fw.fn->ptx;
        uint64_t shared_cursor = fw.fn->shared_local_base, local = 0;
        {
            for (int i = 0; i < pf->nlocals; i++) {
                const ptx_var *lv = pf->locals[i];
                uint64_t align = lv->align ? lv->align : 1, at;
                if (lv->space == PTX_SPACE_SHARED) {
                    shared_cursor = (shared_cursor + align - 1) / align * align;
                    at = shared_cursor;
                    shared_cursor += lv->size;
                } else {
                    if (lv->space == PTX_SPACE_PARAM && align < 4)
                        align = 4;
                    local = (local + align - 1) / align * align;
                    at = local;
                    local += lv->size;
                }
                if (lv->name && names_variable(lv->name, name)) {
                    memset(&v, 0, sizeof v);
                    v.is_lvalue = 1;
                    v.space = lv->space == PTX_SPACE_SHARED ? BC_SPACE_SHARED : BC_SPACE_LOCAL;
                    v.addr = lv->space == PTX_SPACE_SHARED ? at : fw.frame->local_base + at;
                    v.type = lv->type ? (int)lv->type : PTX_T_B8;
                    v.size = type_bytes(v.type);
                    if (lv->is_array || lv->array_count)
                        v.array_count = lv->array_count ? lv->array_count : lv->size / v.size;
                    return v;
                }
            }
        }
    }
    /* a function's static __shared__/__device__ variable: nvcc names it
     * _ZZ<function>E<length><name>; the running kernel's first */
    const bc_symbol *best = NULL;
    char tail[300];
    snprintf(tail, sizeof tail, "E%zu%s", strlen(name), name);
    for (int i = 0; m && i < m->nsymbols; i++) {
        const bc_symbol *s = &m->symbols[i];
        size_t a = s->name ? strlen(s->name) : 0, b = strlen(tail);
        if (a <= b || strncmp(s->name, "_ZZ", 3) || strcmp(s->name + a - b, tail))
            continue;
        if (!best || (k && strstr(s->name, k->name) && !strstr(best->name, k->name)))
            best = s;
    }
    if (best) {
        memset(&v, 0, sizeof v);
        v.is_lvalue = 1;
        v.space = best->space;
        v.addr = best->address;
        v.type = best->var && best->var->type ? (int)best->var->type : PTX_T_B8;
        v.size = type_bytes(v.type);
        if (best->var && (best->var->is_array || best->var->array_count))
            v.array_count = best->var->array_count ? best->var->array_count : best->size / v.size;
        return v;
    }
    fail(p, "No symbol \"%s\" in current context", name);
    return mk_int(0);
}

/* ---- types -------------------------------------------------------------------- */

static int parse_type(parser *p, int *type, int *space, int *pointer)
{
    const char *save = p->s;
    *space = BC_SPACE_GENERIC;
    *pointer = 0;
    skip(p);
    if (*p->s == '@') {
        p->s++;
        char sp[32];
        read_ident(p, sp, sizeof sp);
        if (!strcmp(sp, "shared")) *space = BC_SPACE_SHARED;
        else if (!strcmp(sp, "global")) *space = BC_SPACE_GLOBAL;
        else if (!strcmp(sp, "local")) *space = BC_SPACE_LOCAL;
        else if (!strcmp(sp, "const") || !strcmp(sp, "constant")) *space = BC_SPACE_CONST;
        else if (!strcmp(sp, "param") || !strcmp(sp, "parameter")) *space = BC_SPACE_PARAM_KERNEL;
        else if (!strcmp(sp, "generic")) *space = BC_SPACE_GENERIC;
        else {
            p->s = save;
            return 0;
        }
    }
    char w1[32] = "", w2[32] = "";
    read_ident(p, w1, sizeof w1);
    if (!strcmp(w1, "unsigned") || !strcmp(w1, "signed") || !strcmp(w1, "long")) {
        const char *s2 = p->s;
        read_ident(p, w2, sizeof w2);
        if (!strcmp(w2, "long")) {
            const char *s3 = p->s;
            char w3[32];
            read_ident(p, w3, sizeof w3);
            if (strcmp(w3, "int") && strcmp(w3, "long"))
                p->s = s3;
        } else if (strcmp(w2, "int") && strcmp(w2, "char") && strcmp(w2, "short")) {
            p->s = s2;
            w2[0] = 0;
        }
    }
    static const struct { const char *a, *b; int t; } names[] = {
        {"u8", "", PTX_T_U8}, {"u16", "", PTX_T_U16}, {"u32", "", PTX_T_U32}, {"u64", "", PTX_T_U64},
        {"s8", "", PTX_T_S8}, {"s16", "", PTX_T_S16}, {"s32", "", PTX_T_S32}, {"s64", "", PTX_T_S64},
        {"b8", "", PTX_T_B8}, {"b16", "", PTX_T_B16}, {"b32", "", PTX_T_B32}, {"b64", "", PTX_T_B64},
        {"f16", "", PTX_T_F16}, {"bf16", "", PTX_T_BF16}, {"f32", "", PTX_T_F32}, {"f64", "", PTX_T_F64},
        {"half", "", PTX_T_F16}, {"float", "", PTX_T_F32}, {"double", "", PTX_T_F64},
        {"char", "", PTX_T_S8}, {"short", "", PTX_T_S16}, {"int", "", PTX_T_S32}, {"long", "", PTX_T_S64},
        {"long", "long", PTX_T_S64}, {"unsigned", "", PTX_T_U32}, {"unsigned", "int", PTX_T_U32},
        {"unsigned", "char", PTX_T_U8}, {"unsigned", "short", PTX_T_U16}, {"unsigned", "long", PTX_T_U64},
        {"signed", "char", PTX_T_S8}, {"signed", "", PTX_T_S32}, {"signed", "int", PTX_T_S32},
        {"long", "int", PTX_T_S64}, {"size_t", "", PTX_T_U64}, {"bool", "", PTX_T_U8},
        {"uint32_t", "", PTX_T_U32}, {"int32_t", "", PTX_T_S32}, {"uint64_t", "", PTX_T_U64},
        {"int64_t", "", PTX_T_S64}, {"uint8_t", "", PTX_T_U8}, {"int8_t", "", PTX_T_S8},
        {"uint16_t", "", PTX_T_U16}, {"int16_t", "", PTX_T_S16},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(w1, names[i].a) && !strcmp(w2, names[i].b)) {
            *type = names[i].t;
            skip(p);
            while (*p->s == '*') {
                (*pointer)++;
                p->s++;
                skip(p);
            }
            return 1;
        }
    p->s = save;
    return 0;
}

/* ---- the grammar ---------------------------------------------------------------- */

static dbg_value expr(parser *p);

static dbg_value deref(parser *p, dbg_value v)
{
    v = rv(p, v);
    if (!v.is_pointer) {
        fail(p, "Attempt to take contents of a non-pointer value.%s", NULL);
        return mk_int(0);
    }
    dbg_value r;
    memset(&r, 0, sizeof r);
    r.is_lvalue = 1;
    r.space = v.ptr_space;
    r.addr = v.u;
    r.type = v.ptr_type;
    r.size = type_bytes(v.ptr_type);
    return r;
}

static dbg_value index_of(parser *p, dbg_value base, dbg_value idx)
{
    idx = rv(p, idx);
    int64_t i = idx.kind == DBG_V_FLOAT ? (int64_t)idx.f : idx.i;
    if (base.is_lvalue && base.array_count) {
        dbg_value r = base;
        r.array_count = 0;
        r.addr = base.addr + (uint64_t)i * base.size;
        return r;
    }
    base = rv(p, base);
    if (!base.is_pointer) {
        fail(p, "cannot subscript something that is not an array or a pointer%s", NULL);
        return mk_int(0);
    }
    base.u += (uint64_t)i * type_bytes(base.ptr_type);
    return deref(p, base);
}

static dbg_value primary(parser *p)
{
    skip(p);
    if (accept(p, "(")) {
        dbg_value v = expr(p);
        if (!accept(p, ")"))
            fail(p, "missing ')'%s", NULL);
        return v;
    }
    if (isdigit((unsigned char)*p->s) || (*p->s == '.' && isdigit((unsigned char)p->s[1]))) {
        char *e1, *e2;
        unsigned long long u = strtoull(p->s, &e1, 0);
        double f = strtod(p->s, &e2);
        if (e2 > e1) {
            p->s = e2;
            if (*p->s == 'f' || *p->s == 'F') {
                p->s++;
                return mk_float((float)f, PTX_T_F32);
            }
            return mk_float(f, PTX_T_F64);
        }
        p->s = e1;
        int is_u = 0;
        while (*p->s == 'u' || *p->s == 'U' || *p->s == 'l' || *p->s == 'L') {
            is_u |= *p->s == 'u' || *p->s == 'U';
            p->s++;
        }
        if (is_u || u > INT64_MAX)
            return mk_uint(u, PTX_T_U64);
        return mk_int((int64_t)u);
    }
    if (*p->s == '\'' && p->s[1] && p->s[2] == '\'') {
        dbg_value v = mk_int((unsigned char)p->s[1]);
        p->s += 3;
        return v;
    }
    char name[256];
    if (!read_ident(p, name, sizeof name)) {
        if (*p->s)
            fail(p, "A syntax error in expression, near `%s'.", p->s);
        else
            fail(p, "A syntax error in expression, near the end.%s", NULL);
        return mk_int(0);
    }
    /* trailing ".x" belongs to the name only for the special vectors */
    return name_value(p, name);
}

static dbg_value postfix(parser *p)
{
    dbg_value v = primary(p);
    while (!p->failed) {
        if (accept(p, "[")) {
            dbg_value i = expr(p);
            if (!accept(p, "]"))
                fail(p, "missing ']'%s", NULL);
            v = index_of(p, v, i);
        } else {
            break;
        }
    }
    return v;
}

static dbg_value cast(parser *p, dbg_value v, int type, int space, int pointer)
{
    v = rv(p, v);
    if (pointer) {
        uint64_t a = v.kind == DBG_V_FLOAT ? (uint64_t)v.f : v.u;
        dbg_value r = mk_uint(a, PTX_T_U64);
        r.is_pointer = 1;
        /* a cast without @space keeps the space a pointer had */
        r.ptr_space = space == BC_SPACE_GENERIC && v.is_pointer ? v.ptr_space : space;
        r.ptr_type = type;
        return r;
    }
    switch (type) {
    case PTX_T_F32: return mk_float((float)as_f(&v), type);
    case PTX_T_F64: case PTX_T_F16: case PTX_T_BF16: return mk_float(as_f(&v), type);
    default: {
        unsigned sz = type_bytes(type);
        uint64_t bits = v.kind == DBG_V_FLOAT ? (uint64_t)(int64_t)v.f : v.u;
        uint64_t m = sz >= 8 ? ~0ull : (1ull << (8 * sz)) - 1;
        bits &= m;
        if (type == PTX_T_S8 || type == PTX_T_S16 || type == PTX_T_S32 || type == PTX_T_S64) {
            int64_t s = (int64_t)bits;
            if (sz < 8 && (bits >> (8 * sz - 1) & 1))
                s = (int64_t)(bits | ~m);
            dbg_value r = mk_int(s);
            r.type = type;
            return r;
        }
        return mk_uint(bits, type);
    }
    }
}

static dbg_value unary(parser *p)
{
    skip(p);
    if (*p->s == '(') {
        const char *save = p->s;
        p->s++;
        int type, space, pointer;
        if (parse_type(p, &type, &space, &pointer) && accept(p, ")"))
            return cast(p, unary(p), type, space, pointer);
        p->s = save;
    }
    if (accept(p, "-")) {
        dbg_value v = rv(p, unary(p));
        if (v.kind == DBG_V_FLOAT)
            return mk_float(-v.f, v.type);
        return mk_int(-v.i);
    }
    if (accept(p, "+"))
        return rv(p, unary(p));
    if (accept(p, "!")) {
        dbg_value v = rv(p, unary(p));
        return mk_int(v.kind == DBG_V_FLOAT ? v.f == 0 : v.u == 0);
    }
    if (accept(p, "~")) {
        dbg_value v = rv(p, unary(p));
        dbg_value r = v.kind == DBG_V_INT ? mk_int(~v.i) : mk_uint(~v.u, v.type);
        r.type = v.type;
        return r;
    }
    if (accept(p, "*"))
        return deref(p, unary(p));
    if (accept(p, "&")) {
        dbg_value v = unary(p);
        if (!v.is_lvalue) {
            fail(p, "Attempt to take address of value not located in memory.%s", NULL);
            return mk_int(0);
        }
        dbg_value r = mk_uint(v.addr, PTX_T_U64);
        r.is_pointer = 1;
        r.ptr_space = v.space;
        r.ptr_type = v.type;
        return r;
    }
    return postfix(p);
}

static int is_unsigned(const dbg_value *a)
{
    return a->kind == DBG_V_UINT || a->kind == DBG_V_MASK;
}

static dbg_value arith(parser *p, char op, dbg_value a, dbg_value b)
{
    a = rv(p, a);
    b = rv(p, b);
    if (p->failed)
        return mk_int(0);
    if ((op == '+' || op == '-') && a.is_pointer && !b.is_pointer) {
        int64_t k = b.kind == DBG_V_FLOAT ? (int64_t)b.f : b.i;
        a.u += (uint64_t)(op == '+' ? k : -k) * type_bytes(a.ptr_type);
        return a;
    }
    if (a.kind == DBG_V_FLOAT || b.kind == DBG_V_FLOAT) {
        double x = as_f(&a), y = as_f(&b);
        int t = (a.kind == DBG_V_FLOAT && a.type == PTX_T_F32 && (b.kind != DBG_V_FLOAT || b.type == PTX_T_F32))
                    ? PTX_T_F32 : PTX_T_F64;
        switch (op) {
        case '+': return mk_float(x + y, t);
        case '-': return mk_float(x - y, t);
        case '*': return mk_float(x * y, t);
        case '/': return mk_float(x / y, t);
        default:
            fail(p, "Integer only operation %s.", NULL);
            return mk_int(0);
        }
    }
    if ((op == '/' || op == '%') && b.u == 0) {
        fail(p, "Division by zero%s", NULL);
        return mk_int(0);
    }
    if (is_unsigned(&a) || is_unsigned(&b)) {
        uint64_t x = a.u, y = b.u, r;
        switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/': r = x / y; break;
        case '%': r = x % y; break;
        case '&': r = x & y; break;
        case '|': r = x | y; break;
        case '^': r = x ^ y; break;
        case 'l': r = y >= 64 ? 0 : x << y; break;
        default: r = y >= 64 ? 0 : x >> y; break;
        }
        return mk_uint(r, PTX_T_U64);
    }
    int64_t x = a.i, y = b.i, r;
    switch (op) {
    case '+': r = (int64_t)((uint64_t)x + (uint64_t)y); break;
    case '-': r = (int64_t)((uint64_t)x - (uint64_t)y); break;
    case '*': r = (int64_t)((uint64_t)x * (uint64_t)y); break;
    case '/': r = (y == -1) ? (int64_t)(0 - (uint64_t)x) : x / y; break;
    case '%': r = (y == -1) ? 0 : x % y; break;
    case '&': r = x & y; break;
    case '|': r = x | y; break;
    case '^': r = x ^ y; break;
    case 'l': r = y >= 64 || y < 0 ? 0 : (int64_t)((uint64_t)x << y); break;
    default: r = y >= 64 || y < 0 ? (x < 0 ? -1 : 0) : x >> y; break;
    }
    return mk_int(r);
}

static dbg_value compare(parser *p, const char *op, dbg_value a, dbg_value b)
{
    a = rv(p, a);
    b = rv(p, b);
    int r;
    if (a.kind == DBG_V_FLOAT || b.kind == DBG_V_FLOAT) {
        double x = as_f(&a), y = as_f(&b);
        r = !strcmp(op, "==") ? x == y : !strcmp(op, "!=") ? x != y : !strcmp(op, "<") ? x < y
            : !strcmp(op, "<=") ? x <= y : !strcmp(op, ">") ? x > y : x >= y;
    } else if (is_unsigned(&a) || is_unsigned(&b)) {
        uint64_t x = a.u, y = b.u;
        r = !strcmp(op, "==") ? x == y : !strcmp(op, "!=") ? x != y : !strcmp(op, "<") ? x < y
            : !strcmp(op, "<=") ? x <= y : !strcmp(op, ">") ? x > y : x >= y;
    } else {
        int64_t x = a.i, y = b.i;
        r = !strcmp(op, "==") ? x == y : !strcmp(op, "!=") ? x != y : !strcmp(op, "<") ? x < y
            : !strcmp(op, "<=") ? x <= y : !strcmp(op, ">") ? x > y : x >= y;
    }
    return mk_int(r);
}

static dbg_value mul(parser *p)
{
    dbg_value v = unary(p);
    for (;;) {
        if (accept(p, "*")) v = arith(p, '*', v, unary(p));
        else if (accept(p, "/")) v = arith(p, '/', v, unary(p));
        else if (accept(p, "%")) v = arith(p, '%', v, unary(p));
        else return v;
    }
}

static dbg_value add(parser *p)
{
    dbg_value v = mul(p);
    for (;;) {
        if (accept(p, "+")) v = arith(p, '+', v, mul(p));
        else if (accept(p, "-")) v = arith(p, '-', v, mul(p));
        else return v;
    }
}

static dbg_value shift(parser *p)
{
    dbg_value v = add(p);
    for (;;) {
        if (accept(p, "<<")) v = arith(p, 'l', v, add(p));
        else if (accept(p, ">>")) v = arith(p, 'r', v, add(p));
        else return v;
    }
}

static dbg_value rel(parser *p)
{
    dbg_value v = shift(p);
    for (;;) {
        if (accept(p, "<=")) v = compare(p, "<=", v, shift(p));
        else if (accept(p, ">=")) v = compare(p, ">=", v, shift(p));
        else if (accept(p, "<")) v = compare(p, "<", v, shift(p));
        else if (accept(p, ">")) v = compare(p, ">", v, shift(p));
        else return v;
    }
}

static dbg_value eq(parser *p)
{
    dbg_value v = rel(p);
    for (;;) {
        if (accept(p, "==")) v = compare(p, "==", v, rel(p));
        else if (accept(p, "!=")) v = compare(p, "!=", v, rel(p));
        else return v;
    }
}

static dbg_value band(parser *p)
{
    dbg_value v = eq(p);
    while (accept(p, "&"))
        v = arith(p, '&', v, eq(p));
    return v;
}

static dbg_value bxor(parser *p)
{
    dbg_value v = band(p);
    while (accept(p, "^"))
        v = arith(p, '^', v, band(p));
    return v;
}

static dbg_value bor(parser *p)
{
    dbg_value v = bxor(p);
    while (accept(p, "|"))
        v = arith(p, '|', v, bxor(p));
    return v;
}

static int truth(parser *p, dbg_value v)
{
    v = rv(p, v);
    return v.kind == DBG_V_FLOAT ? v.f != 0 : v.u != 0;
}

static dbg_value land(parser *p)
{
    dbg_value v = bor(p);
    while (accept(p, "&&")) {
        int a = truth(p, v);
        dbg_value b = bor(p);
        v = mk_int(a && truth(p, b));
    }
    return v;
}

static dbg_value expr(parser *p)
{
    dbg_value v = land(p);
    while (accept(p, "||")) {
        int a = truth(p, v);
        dbg_value b = land(p);
        v = mk_int(a || truth(p, b));
    }
    return v;
}

int dbg_eval(dbg *d, const char *text, int lane, dbg_value *out, char *msg, size_t n)
{
    parser p = {d, text, lane, msg, n, 0};
    msg[0] = 0;
    dbg_value v = expr(&p);
    skip(&p);
    if (!p.failed && *p.s)
        fail(&p, "A syntax error in expression, near `%s'.", p.s);
    if (p.failed)
        return -1;
    if (v.is_lvalue && !v.array_count) {
        dbg_value keep = v;
        v = rv(&p, v);
        if (p.failed)
            return -1;
        v.is_lvalue = 1;
        v.space = keep.space;
        v.addr = keep.addr;
        v.size = keep.size;
    }
    *out = v;
    return 0;
}
