/* Expressions of the debugger (print, conditions, watch, x): C operators
 * over PTX registers, special names (threadIdx.x, blockIdx.y, blockDim,
 * gridDim, warpSize, $lane, $warp, $pc, $event), source variables where
 * the PTX carries DWARF (nvcc -G: read through dwarf.c, typed by their
 * DWARF types), kernel parameters and module variables by name, and
 * casts, with cuda-gdb's @space qualifiers for pointers: (@shared float
 * *)16. Every value is evaluated for one lane of the focused warp, in the
 * focused frame. */
#include "config.h"
#include "debug/debug.h"
#include "vm/numeric.h"

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
    if (v.optimized_out) {
        fail(p, "value has been optimized out%s", NULL);
        return v;
    }
    if (!v.is_lvalue || v.array_count || v.is_struct)
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

/* A variable declared inside a function (laid out as the lowering lays
 * them out: shared ones from the function's shared base, local ones in
 * its frame): 1 with *out set, 0 if fw's function has none so named. */
static int function_local(const dbg_where *fw, const char *name, dbg_value *out)
{
    if (!fw->fn->ptx)
        return 0;
    const ptx_function *pf = fw->fn->ptx;
    uint64_t shared_cursor = fw->fn->shared_local_base, local = 0;
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
            dbg_value v;
            memset(&v, 0, sizeof v);
            v.is_lvalue = 1;
            v.space = lv->space == PTX_SPACE_SHARED ? BC_SPACE_SHARED : BC_SPACE_LOCAL;
            v.addr = lv->space == PTX_SPACE_SHARED ? at : fw->frame->local_base + at;
            v.type = lv->type ? (int)lv->type : PTX_T_B8;
            v.size = type_bytes(v.type);
            if (lv->is_array || lv->array_count)
                v.array_count = lv->array_count ? lv->array_count : lv->size / v.size;
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* ---- source variables (DWARF) ------------------------------------------------ */

static int space_of_class(int addr_class)
{
    switch (addr_class) {
    case DWARF_ADDR_GLOBAL: return BC_SPACE_GLOBAL;
    case DWARF_ADDR_SHARED: return BC_SPACE_SHARED;
    case DWARF_ADDR_LOCAL: return BC_SPACE_LOCAL;
    case DWARF_ADDR_CONST: return BC_SPACE_CONST;
    case DWARF_ADDR_PARAM: return BC_SPACE_PARAM_KERNEL;
    default: return BC_SPACE_GENERIC;
    }
}

/* The ptx_type that reads a DWARF base type. */
static int base_ptx_type(const dwarf_type *t)
{
    uint64_t n = t->size;
    switch (t->encoding) {
    case DWARF_ATE_FLOAT:
        return n == 2 ? PTX_T_F16 : n == 8 ? PTX_T_F64 : PTX_T_F32;
    case DWARF_ATE_BOOLEAN:
        return PTX_T_PRED;
    case DWARF_ATE_SIGNED: case DWARF_ATE_SIGNED_CHAR:
        return n == 1 ? PTX_T_S8 : n == 2 ? PTX_T_S16 : n == 8 ? PTX_T_S64 : PTX_T_S32;
    default:
        return n == 1 ? PTX_T_U8 : n == 2 ? PTX_T_U16 : n == 8 ? PTX_T_U64 : PTX_T_U32;
    }
}

/* Gives v (an lvalue's place, or a register's bits to come) the shape
 * of DWARF type index: ptx type and size, pointer, array, struct. */
static void apply_type(dbg *d, dbg_value *v, int index)
{
    const dwarf_info *di = dbg_dwarf(d);
    int t = dwarf_type_strip(di, index);
    const dwarf_type *ty = dwarf_type_at(di, t);
    v->dtype = t + 1;
    v->type = PTX_T_B8;
    v->size = 1;
    if (!ty)
        return;
    switch (ty->kind) {
    case DWARF_T_BASE:
        v->type = base_ptx_type(ty);
        v->size = ty->size ? (unsigned)ty->size : type_bytes(v->type);
        return;
    case DWARF_T_POINTER: {
        v->type = PTX_T_U64;
        v->size = 8;
        v->is_pointer = 1;
        v->ptr_space = space_of_class(ty->addr_class);
        int pt = dwarf_type_strip(di, ty->target);
        const dwarf_type *pty = dwarf_type_at(di, pt);
        v->ptr_type = pty && pty->kind == DWARF_T_BASE ? base_ptx_type(pty)
                    : pty && pty->kind == DWARF_T_POINTER ? PTX_T_U64 : PTX_T_B8;
        v->ptr_dtype = pt + 1;
        return;
    }
    case DWARF_T_ARRAY: {
        uint64_t count = ty->count ? ty->count : 1;
        apply_type(d, v, ty->target);
        v->array_count = count;
        return;
    }
    case DWARF_T_STRUCT:
        v->is_struct = 1;
        v->size = ty->size > UINT32_MAX ? UINT32_MAX : (unsigned)ty->size;
        return;
    default:
        v->size = ty->size && ty->size <= 8 ? (unsigned)ty->size : 1;
        return;
    }
}

/* Where a PTX symbol a DWARF location names lives, as lane sees it from
 * frame fw: the function's parameters, its .local/.shared variables
 * (__local_depot0), module variables. 0, or -1. */
static int symbol_place(parser *p, const dbg_where *fw, const char *name, int *space, uint64_t *addr)
{
    const bc_function *fn = fw->fn;
    for (int i = 0; i < fn->nparams; i++)
        if (fn->params[i].name && !strcmp(fn->params[i].name, name)) {
            *space = fn->is_entry ? BC_SPACE_PARAM_KERNEL : BC_SPACE_LOCAL;
            *addr = fn->params[i].offset + (fn->is_entry ? 0 : fw->frame->local_base);
            return 0;
        }
    dbg_value v;
    if (function_local(fw, name, &v)) {
        *space = v.space;
        *addr = v.addr;
        return 0;
    }
    vm_launch *L = dbg_launch(p->d);
    const bc_module *m = L ? L->mod : NULL;
    for (int i = 0; m && i < m->nsymbols; i++)
        if (m->symbols[i].name && !strcmp(m->symbols[i].name, name)) {
            *space = m->symbols[i].space;
            *addr = m->symbols[i].address;
            return 0;
        }
    return -1;
}

/* The value of source variable var at frame fw. */
static dbg_value in_register(dbg_value v, const vm_frame *frame, uint32_t slot, int kind);

static dbg_value source_value(parser *p, const dwarf_var *var, const dbg_where *fw)
{
    const dwarf_info *di = dbg_dwarf(p->d);
    dbg_value v;
    memset(&v, 0, sizeof v);
    const dwarf_loc *loc = dwarf_location(di, var, fw->fn->index, fw->pc);
    if (!loc) {
        apply_type(p->d, &v, var->type);
        v.kind = DBG_V_UINT;
        v.array_count = 0;
        v.is_struct = 0;
        v.optimized_out = 1;
        return v;
    }
    if (loc->kind == DWARF_LOC_REG || loc->kind == DWARF_LOC_BREG) {
        uint32_t slot;
        int type, is_pred;
        if (dbg_find_register(fw->fn, loc->reg, &slot, &type, &is_pred)) {
            fail(p, "Cannot read the register %s that holds this variable", loc->reg);
            return mk_int(0);
        }
        uint64_t bits = is_pred ? (fw->frame->preds[slot] >> p->lane & 1)
                                : fw->frame->regs[(size_t)slot * VM_WARP + (size_t)p->lane];
        if (loc->kind == DWARF_LOC_BREG) {
            /* the register holds an address (a generic one: %SP) */
            apply_type(p->d, &v, var->type);
            v.is_lvalue = 1;
            v.space = BC_SPACE_GENERIC;
            v.addr = bits + (uint64_t)loc->offset;
            return v;
        }
        dbg_value shape;
        memset(&shape, 0, sizeof shape);
        apply_type(p->d, &shape, var->type);
        if (shape.array_count || shape.is_struct) {
            fail(p, "An aggregate in a register (%s) cannot be shown", loc->reg);
            return mk_int(0);
        }
        dbg_value_from_bits(&v, bits, shape.size, shape.type);
        v = in_register(v, fw->frame, slot, is_pred ? 2 : 1);
        v.is_pointer = shape.is_pointer;
        v.ptr_space = shape.ptr_space;
        v.ptr_type = shape.ptr_type;
        v.ptr_dtype = shape.ptr_dtype;
        v.dtype = shape.dtype;
        return v;
    }
    if (loc->kind == DWARF_LOC_ADDR) {
        int space = space_of_class(var->addr_class);
        uint64_t addr = (uint64_t)loc->offset;
        if (loc->symbol) {
            uint64_t base;
            if (symbol_place(p, fw, loc->symbol, &space, &base)) {
                fail(p, "Cannot find the PTX symbol %s that holds this variable", loc->symbol);
                return mk_int(0);
            }
            addr += base;
        }
        apply_type(p->d, &v, var->type);
        v.is_lvalue = 1;
        v.space = space;
        v.addr = addr;
        return v;
    }
    fail(p, "Unhandled DWARF location expression for \"%s\"", var->name);
    return mk_int(0);
}

/* A source variable named name visible at the focused frame: 1 with *out
 * set, 0 when there is none (or no DWARF). */
static int source_variable(parser *p, const char *name, dbg_value *out)
{
    dbg *d = p->d;
    dbg_focus *fo = dbg_focus_get(d);
    const dwarf_info *di = dbg_dwarf(d);
    dbg_where fw;
    if (!di || !fo->w || dbg_lane_where(d, fo->b, fo->w, p->lane, fo->frame, &fw))
        return 0;
    const dwarf_var *var = dwarf_lookup(di, fw.fn->index, fw.pc, name);
    if (!var)
        return 0;
    *out = source_value(p, var, &fw);
    return 1;
}

/* s.member of a struct lvalue. */
static dbg_value member_of(parser *p, dbg_value s, const char *member)
{
    if (p->failed)
        return s;
    const dwarf_info *di = dbg_dwarf(p->d);
    const dwarf_type *ty = dwarf_type_at(di, s.dtype - 1);
    if (s.optimized_out) {
        fail(p, "value has been optimized out%s", NULL);
        return mk_int(0);
    }
    if (!s.is_struct || !ty || !s.is_lvalue) {
        fail(p, "Attempt to extract a component of a value that is not a structure.%s", NULL);
        return mk_int(0);
    }
    const dwarf_member *m = dwarf_members(di);
    for (int i = 0; i < ty->nmembers; i++) {
        const dwarf_member *mb = &m[ty->first_member + i];
        if (!mb->name || strcmp(mb->name, member))
            continue;
        dbg_value r;
        memset(&r, 0, sizeof r);
        r.is_lvalue = 1;
        r.space = s.space;
        r.addr = s.addr + mb->offset;
        apply_type(p->d, &r, mb->type);
        return r;
    }
    fail(p, "There is no member named %s.", member);
    return mk_int(0);
}

/* Applies ".a.b" member names (from "s.a.b", read as one name) in turn. */
static dbg_value members_of(parser *p, dbg_value v, const char *path)
{
    char part[256];
    while (*path && !p->failed) {
        size_t k = strcspn(path, ".");
        snprintf(part, sizeof part, "%.*s", (int)(k < 255 ? k : 255), path);
        v = member_of(p, v, part);
        path += k;
        if (*path == '.')
            path++;
    }
    return v;
}

/* Bytes of what a pointer points to (its DWARF type's, or its ptx type's). */
static unsigned pointee_size(parser *p, const dbg_value *v)
{
    if (v->ptr_dtype) {
        const dwarf_type *t = dwarf_type_at(dbg_dwarf(p->d), v->ptr_dtype - 1);
        if (t && t->size && t->size <= UINT32_MAX)
            return (unsigned)t->size;
    }
    return type_bytes(v->ptr_type);
}

/* v, noted as living in register slot of frame (kind 1) or predicate slot (2). */
static dbg_value in_register(dbg_value v, const vm_frame *frame, uint32_t slot, int kind)
{
    v.reg_frame = (vm_frame *)(uintptr_t)frame; /* the stopped target's, which set var may change */
    v.reg_slot = slot;
    v.in_register = kind;
    return v;
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
            fail(p, fo->w ? "No registers: the focused lane is not running here%s" : "No registers: no kernel is stopped here%s", "");
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
            return in_register(v, wh.frame, slot, 2);
        }
        uint64_t bits = wh.frame->regs[(size_t)slot * VM_WARP + (size_t)p->lane];
        unsigned sz = type_bytes(type);
        uint64_t m = sz >= 8 ? ~0ull : (1ull << (8 * sz)) - 1;
        bits &= m;
        if (type == PTX_T_F32) {
            float f;
            uint32_t u = (uint32_t)bits;
            memcpy(&f, &u, 4);
            return in_register(mk_float(f, type), wh.frame, slot, 1);
        }
        if (type == PTX_T_F64) {
            double f;
            memcpy(&f, &bits, 8);
            return in_register(mk_float(f, type), wh.frame, slot, 1);
        }
        if (type == PTX_T_S8 || type == PTX_T_S16 || type == PTX_T_S32 || type == PTX_T_S64) {
            int64_t s = (int64_t)bits;
            if (sz < 8 && (bits >> (8 * sz - 1) & 1))
                s = (int64_t)(bits | ~m);
            v = mk_int(s);
            v.type = type;
            v.u = bits;
            return in_register(v, wh.frame, slot, 1);
        }
        return in_register(mk_uint(bits, type), wh.frame, slot, 1);
    }
    if (!L) {
        fail(p, "No symbol \"%s\" in current context (no kernel is running)", name);
        return mk_int(0);
    }
    /* source variables (nvcc -G), innermost scope first; "s.a" is s's member a */
    if (source_variable(p, name, &v))
        return v;
    const char *dot = strchr(name, '.');
    if (dot && dot > name && (size_t)(dot - name) < 256) {
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(dot - name), name);
        if (source_variable(p, base, &v))
            return members_of(p, v, dot + 1);
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
    /* variables declared inside the focused function */
    dbg_where fw;
    if (fo->w && dbg_lane_where(d, fo->b, fo->w, p->lane, fo->frame, &fw) == 0 && function_local(&fw, name, &v))
        return v;
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
    if (v.ptr_dtype) {
        const dwarf_type *t = dwarf_type_at(dbg_dwarf(p->d), v.ptr_dtype - 1);
        if (!t || (t->kind != DWARF_T_BASE && t->kind != DWARF_T_POINTER && t->kind != DWARF_T_STRUCT &&
                   t->kind != DWARF_T_ARRAY)) {
            fail(p, "Attempt to take contents of a non-pointer value.%s", NULL);
            return mk_int(0);
        }
        apply_type(p->d, &r, v.ptr_dtype - 1);
    }
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
    base.u += (uint64_t)i * pointee_size(p, &base);
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
        } else if (accept(p, "->")) {
            char m[256];
            if (!read_ident(p, m, sizeof m))
                fail(p, "A syntax error in expression, near `%s'.", p->s);
            v = members_of(p, deref(p, v), m);
        } else if (*p->s == '.' && (isalpha((unsigned char)p->s[1]) || p->s[1] == '_')) {
            char m[256];
            p->s++;
            read_ident(p, m, sizeof m);
            v = members_of(p, v, m);
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
        r.ptr_dtype = v.array_count ? 0 : v.dtype;
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
        a.u += (uint64_t)(op == '+' ? k : -k) * pointee_size(p, &a);
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
    if (v.is_lvalue && !v.array_count && !v.is_struct) {
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

/* ---- assignment ------------------------------------------------------------------ */

int dbg_assignment_at(const char *text)
{
    int depth = 0;
    for (int i = 0; text[i]; i++) {
        char ch = text[i];
        if (ch == '(' || ch == '[' || ch == '{')
            depth++;
        else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
            depth--;
        else if (ch == '\'' || ch == '"') {
            char q = ch;
            for (i++; text[i] && text[i] != q; i++)
                if (text[i] == '\\' && text[i + 1])
                    i++;
            if (!text[i])
                return -1;
        } else if (ch == '=' && !depth) {
            char prev = i ? text[i - 1] : 0;
            if (text[i + 1] == '=') {
                i++;
                continue;
            }
            if (prev == '!' || prev == '<' || prev == '>' || prev == '=')
                continue;
            return i;
        }
    }
    return -1;
}

/* Whether text (trimmed) is one name: a register or an identifier. */
static int plain_name(const char *t)
{
    while (*t == ' ' || *t == '\t')
        t++;
    if (*t == '%' || *t == '$')
        t++;
    if (!isalpha((unsigned char)*t) && *t != '_' && *t != '$')
        return 0;
    while (isalnum((unsigned char)*t) || *t == '_' || *t == '$')
        t++;
    while (*t == ' ' || *t == '\t')
        t++;
    return !*t;
}

/* rhs's bits as type (C's conversion), size bytes; 0, or -1 for a type
 * that has no conversion here. */
static int encode_as(const dbg_value *rhs, int type, unsigned size, uint64_t *bits)
{
    double f = rhs->kind == DBG_V_FLOAT ? rhs->f : rhs->kind == DBG_V_INT ? (double)rhs->i : (double)rhs->u;
    int64_t i = rhs->kind == DBG_V_FLOAT ? (int64_t)rhs->f : rhs->kind == DBG_V_INT ? rhs->i : (int64_t)rhs->u;
    switch (type) {
    case PTX_T_F32: {
        float x = (float)f;
        uint32_t u;
        memcpy(&u, &x, 4);
        *bits = u;
        return 0;
    }
    case PTX_T_F64:
        memcpy(bits, &f, 8);
        return 0;
    case PTX_T_F16:
        *bits = vm_f64_to_f16_flags(f, VM_RN, 0);
        return 0;
    case PTX_T_BF16:
        *bits = vm_f64_to_bf16_flags(f, VM_RN, 0);
        return 0;
    case PTX_T_PRED:
        *bits = rhs->kind == DBG_V_FLOAT ? rhs->f != 0 : rhs->kind == DBG_V_INT ? rhs->i != 0 : rhs->u != 0;
        return 0;
    default:
        if (rhs->kind == DBG_V_FLOAT && (f != f || f >= 18446744073709551616.0 || f < -9223372036854775808.0))
            return -1;
        if (rhs->kind == DBG_V_FLOAT && f >= 9223372036854775808.0)
            *bits = (uint64_t)f;
        else
            *bits = (uint64_t)i;
        if (size < 8)
            *bits &= (1ull << (8 * size)) - 1;
        return 0;
    }
}

int dbg_assign(dbg *d, const char *lhs, const char *rhs, int lane, dbg_value *out, char *msg, size_t n)
{
    dbg_value place, value;
    if (dbg_eval(d, lhs, lane, &place, msg, n) || dbg_eval(d, rhs, lane, &value, msg, n))
        return -1;
    if (place.optimized_out) {
        snprintf(msg, n, "value has been optimized out");
        return -1;
    }
    if (place.array_count || place.is_struct) {
        snprintf(msg, n, "Only scalars can be assigned here, not an array or a struct.");
        return -1;
    }
    int type = place.type;
    unsigned size = place.size ? place.size : type_bytes(type);
    if (place.in_register && place.reg_frame && plain_name(lhs)) {
        uint64_t bits;
        if (place.in_register == 2)
            type = PTX_T_PRED;
        if (encode_as(&value, type, place.in_register == 2 ? 1 : type_bytes(type), &bits)) {
            snprintf(msg, n, "The value does not fit the register's type.");
            return -1;
        }
        vm_frame *fr = place.reg_frame;
        if (place.in_register == 2)
            fr->preds[place.reg_slot] = (fr->preds[place.reg_slot] & ~(1u << lane)) | (uint32_t)(bits & 1) << lane;
        else
            fr->regs[(size_t)place.reg_slot * VM_WARP + (size_t)lane] = bits;
    } else if (place.is_lvalue) {
        uint64_t bits;
        if (size > 8 || encode_as(&value, type, size, &bits)) {
            snprintf(msg, n, "Cannot assign a value of this type (%u bytes) here.", size);
            return -1;
        }
        if (dbg_write_memory(d, place.space, place.addr, &bits, size, lane)) {
            snprintf(msg, n, "Cannot access memory at address 0x%llx", (unsigned long long)place.addr);
            return -1;
        }
    } else {
        snprintf(msg, n, "Left operand of assignment is not an lvalue.");
        return -1;
    }
    dbg_mark_changed(d);
    return dbg_eval(d, lhs, lane, out, msg, n);
}

/* ---- showing values ------------------------------------------------------------ */

static void format_rec(dbg *d, const dbg_value *v, int fmt, int lane, util_buffer *b, int depth)
{
    char buf[128];
    if (v->optimized_out) {
        util_buffer_printf(b, "<optimized out>");
        return;
    }
    if (depth > 6) {
        util_buffer_printf(b, "{...}");
        return;
    }
    if (v->array_count) {
        uint64_t n = v->array_count > 200 ? 200 : v->array_count;
        util_buffer_printf(b, "{");
        for (uint64_t i = 0; i < n; i++) {
            dbg_value e = *v;
            e.array_count = 0;
            e.addr = v->addr + i * (v->size ? v->size : 1);
            util_buffer_printf(b, "%s", i ? ", " : "");
            if (!e.is_struct && dbg_load(d, &e, lane)) {
                util_buffer_printf(b, "<unreadable>");
                break;
            }
            format_rec(d, &e, fmt, lane, b, depth + 1);
        }
        util_buffer_printf(b, "%s}", v->array_count > n ? "..." : "");
        return;
    }
    const dwarf_info *di = v->dtype ? dbg_dwarf(d) : NULL;
    if (v->is_struct) {
        const dwarf_type *ty = dwarf_type_at(di, v->dtype - 1);
        const dwarf_member *m = dwarf_members(di);
        util_buffer_printf(b, "{");
        for (int i = 0; ty && i < ty->nmembers; i++) {
            const dwarf_member *mb = &m[ty->first_member + i];
            dbg_value e;
            memset(&e, 0, sizeof e);
            e.is_lvalue = 1;
            e.space = v->space;
            e.addr = v->addr + mb->offset;
            util_buffer_printf(b, "%s%s = ", i ? ", " : "", mb->name ? mb->name : "?");
            dbg_value shaped;
            if (dbg_shape_value(d, &e, mb->type, &shaped)) {
                util_buffer_printf(b, "?");
                continue;
            }
            if (!shaped.is_struct && !shaped.array_count && dbg_load(d, &shaped, lane)) {
                util_buffer_printf(b, "<unreadable>");
                continue;
            }
            format_rec(d, &shaped, fmt, lane, b, depth + 1);
        }
        util_buffer_printf(b, "}");
        return;
    }
    dbg_value s = *v;
    if (s.is_lvalue && dbg_load(d, &s, lane)) {
        util_buffer_printf(b, "<unreadable>");
        return;
    }
    if (s.is_pointer && s.dtype && !fmt) {
        char tn[128];
        dwarf_type_name(di, s.dtype - 1, tn, sizeof tn);
        util_buffer_printf(b, "(%s) 0x%llx", tn, (unsigned long long)s.u);
        return;
    }
    if (s.is_pointer && s.ptr_dtype && !fmt) {
        /* &var of a source variable: cuda-gdb's (@local Pair *) 0x10 */
        static const char *const spaces[] = {"", "@global ", "@shared ", "@shared ", "@local ", "@constant ",
                                             "@parameter ", "@parameter "};
        char tn[128];
        dwarf_type_name(dbg_dwarf(d), s.ptr_dtype - 1, tn, sizeof tn);
        util_buffer_printf(b, "(%s%s *) 0x%llx", s.ptr_space >= 0 && s.ptr_space < 8 ? spaces[s.ptr_space] : "",
                           tn, (unsigned long long)s.u);
        return;
    }
    dbg_format_value(&s, fmt, buf, sizeof buf);
    util_buffer_printf(b, "%s", buf);
}

void dbg_format_object(dbg *d, const dbg_value *v, int fmt, int lane, util_buffer *b)
{
    format_rec(d, v, fmt, lane, b, 0);
}

int dbg_shape_value(dbg *d, const dbg_value *place, int dwarf_type_index, dbg_value *out)
{
    *out = *place;
    out->array_count = 0;
    out->is_struct = 0;
    out->is_pointer = 0;
    out->ptr_dtype = 0;
    apply_type(d, out, dwarf_type_index);
    return 0;
}

int dbg_visible_vars(dbg *d, const dwarf_var **out, int max)
{
    dbg_focus *fo = dbg_focus_get(d);
    const dwarf_info *di = dbg_dwarf(d);
    dbg_where fw;
    if (!di || !fo->w || dbg_lane_where(d, fo->b, fo->w, fo->lane, fo->frame, &fw))
        return 0;
    return dwarf_visible(di, fw.fn->index, fw.pc, out, max);
}
