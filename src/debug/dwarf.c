/* The DWARF reader for nvcc -G's PTX sections (see dwarf.h). It walks
 * .debug_info once with the abbreviations of .debug_abbrev, keeps the
 * scopes, variables and types a debugger needs, and decodes every
 * location into a dwarf_loc up front, so lookups at a stop only compare
 * pcs. Every read is bounds-checked against its section; a field that a
 * PTX name fills (`.b64 $L__tmp3`, `.b32 .debug_loc+133`) is read through
 * the section's refs. Written from the DWARF 2-4 specifications. This
 * room must not touch a running kernel. */
#include "config.h"
#include "debug/dwarf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util_map.h"

/* DW_TAG_* */
enum {
    TAG_ARRAY = 0x01, TAG_CLASS = 0x02, TAG_ENUM = 0x04, TAG_FORMAL_PARAMETER = 0x05, TAG_LEXICAL_BLOCK = 0x0b,
    TAG_MEMBER = 0x0d, TAG_POINTER = 0x0f, TAG_REFERENCE = 0x10, TAG_COMPILE_UNIT = 0x11, TAG_STRUCT = 0x13,
    TAG_SUBROUTINE_TYPE = 0x15, TAG_TYPEDEF = 0x16, TAG_UNION = 0x17, TAG_INLINED = 0x1d,
    TAG_PTR_TO_MEMBER = 0x1f, TAG_SUBRANGE = 0x21, TAG_BASE = 0x24, TAG_CONST = 0x26, TAG_SUBPROGRAM = 0x2e,
    TAG_VARIABLE = 0x34, TAG_VOLATILE = 0x35, TAG_RESTRICT = 0x37, TAG_UNSPECIFIED = 0x3b,
    TAG_RVALUE_REFERENCE = 0x42
};

/* DW_AT_* */
enum {
    AT_LOCATION = 0x02, AT_NAME = 0x03, AT_BYTE_SIZE = 0x0b, AT_LOW_PC = 0x11, AT_HIGH_PC = 0x12,
    AT_LOWER_BOUND = 0x22, AT_UPPER_BOUND = 0x2f, AT_ADDRESS_CLASS = 0x33, AT_COUNT = 0x37,
    AT_MEMBER_LOCATION = 0x38, AT_DECL_LINE = 0x3b, AT_DECLARATION = 0x3c, AT_ENCODING = 0x3e,
    AT_FRAME_BASE = 0x40, AT_TYPE = 0x49, AT_LINKAGE_NAME = 0x6e, AT_MIPS_LINKAGE_NAME = 0x2007
};

/* DW_FORM_* */
enum {
    FORM_ADDR = 0x01, FORM_BLOCK2 = 0x03, FORM_BLOCK4 = 0x04, FORM_DATA2 = 0x05, FORM_DATA4 = 0x06,
    FORM_DATA8 = 0x07, FORM_STRING = 0x08, FORM_BLOCK = 0x09, FORM_BLOCK1 = 0x0a, FORM_DATA1 = 0x0b,
    FORM_FLAG = 0x0c, FORM_SDATA = 0x0d, FORM_STRP = 0x0e, FORM_UDATA = 0x0f, FORM_REF_ADDR = 0x10,
    FORM_REF1 = 0x11, FORM_REF2 = 0x12, FORM_REF4 = 0x13, FORM_REF8 = 0x14, FORM_REF_UDATA = 0x15,
    FORM_INDIRECT = 0x16, FORM_SEC_OFFSET = 0x17, FORM_EXPRLOC = 0x18, FORM_FLAG_PRESENT = 0x19,
    FORM_REF_SIG8 = 0x20
};

/* DW_OP_* */
enum { OP_ADDR = 0x03, OP_PLUS_UCONST = 0x23, OP_REGX = 0x90, OP_FBREG = 0x91, OP_BREGX = 0x92 };

#define MAX_DEPTH 256
#define NO_OFFSET UINT64_MAX

struct dwarf_info {
    util_arena arena;
    dwarf_type *types; int ntypes; size_t captypes;
    dwarf_member *members; int nmembers; size_t capmembers;
    dwarf_var *vars; int nvars; size_t capvars;
    dwarf_scope *scopes; int nscopes; size_t capscopes;
    dwarf_range_loc *locs; int nlocs; size_t caplocs;
};

/* ---- reading bytes --------------------------------------------------------- */

typedef struct cursor {
    const ptx_section *s;
    size_t at, end;
    int bad;
} cursor;

static int cursor_room(cursor *c, size_t n)
{
    if (c->bad || c->at > c->end || n > c->end - c->at) {
        c->bad = 1;
        return 0;
    }
    return 1;
}

/* The ref that fills exactly [at, at+width), or NULL; a ref that covers
 * part of the field makes the cursor bad. */
static const ptx_section_ref *ref_at(cursor *c, size_t at, unsigned width)
{
    const ptx_section *s = c->s;
    int lo = 0, hi = s->nrefs;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((size_t)s->refs[mid].at + s->refs[mid].width <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= s->nrefs || s->refs[lo].at >= at + width)
        return NULL;
    if (s->refs[lo].at == at && s->refs[lo].width == width)
        return &s->refs[lo];
    c->bad = 1;
    return NULL;
}

static uint64_t read_fixed(cursor *c, unsigned width, const ptx_section_ref **ref)
{
    if (ref)
        *ref = NULL;
    if (!cursor_room(c, width))
        return 0;
    const ptx_section_ref *r = ref_at(c, c->at, width);
    if (ref)
        *ref = r;
    uint64_t v = 0;
    for (unsigned i = 0; i < width && i < 8; i++)
        v |= (uint64_t)c->s->data[c->at + i] << (8 * i);
    c->at += width;
    return v;
}

static uint64_t read_uleb(cursor *c, int *overflow)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (!cursor_room(c, 1))
            return 0;
        unsigned char b = c->s->data[c->at++];
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (overflow && ((shift >= 64 && (b & 0x7f)) || (shift == 63 && (b & 0x7e))))
            *overflow = 1;
        if (!(b & 0x80))
            return v;
        shift += 7;
        if (shift > 70 * 7) { /* far past any real number */
            c->bad = 1;
            return 0;
        }
    }
}

static int64_t read_sleb(cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (!cursor_room(c, 1))
            return 0;
        unsigned char b = c->s->data[c->at++];
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= ~0ull << shift;
            return (int64_t)v;
        }
        if (shift > 70 * 7) {
            c->bad = 1;
            return 0;
        }
    }
}

/* A NUL-terminated string at the cursor (NULL and bad if unterminated). */
static const char *read_cstr(cursor *c)
{
    if (c->bad || c->at >= c->end) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *p = c->s->data + c->at;
    const void *nul = memchr(p, 0, c->end - c->at);
    if (!nul) {
        c->bad = 1;
        return NULL;
    }
    c->at += (size_t)((const unsigned char *)nul - p) + 1;
    return (const char *)p;
}

/* ---- the loader ------------------------------------------------------------ */

typedef struct attr_spec { uint32_t name, form; } attr_spec;
typedef struct abbrev { uint64_t code; uint32_t tag; int children; size_t first, n; } abbrev;

typedef struct loader {
    dwarf_info *info;
    const ptx_section *sinfo, *sabbrev, *sloc, *sstr;
    dwarf_label_resolver resolve;
    void *ctx;
    int bad;
    const char *why;
    /* DIE offsets, resolved to indices when the walk is done */
    uint64_t *type_die, *type_ref;      /* per type */
    size_t cap_type_die, cap_type_ref;
    uint64_t *member_ref; int *member_owner;
    size_t cap_member_ref, cap_member_owner;
    uint64_t *var_ref;
    size_t cap_var_ref;
    /* the current unit */
    abbrev *abbrevs; size_t nabbrevs, capabbrevs;
    attr_spec *specs; size_t nspecs, capspecs;
    unsigned addr_size, offset_size, version;
    uint64_t unit_start;
} loader;

static void set_bad(loader *ld, const char *why)
{
    if (!ld->bad)
        ld->why = why;
    ld->bad = 1;
}

static const char *keep_str(loader *ld, const char *s)
{
    if (!s)
        return NULL;
    char *k = util_arena_strndup(&ld->info->arena, s, strlen(s));
    if (!k)
        set_bad(ld, "out of memory");
    return k;
}

static int read_abbrevs(loader *ld, uint64_t offset)
{
    ld->nabbrevs = 0;
    ld->nspecs = 0;
    if (!ld->sabbrev) {
        set_bad(ld, "no .debug_abbrev section");
        return -1;
    }
    cursor c = {ld->sabbrev, (size_t)offset, ld->sabbrev->size, offset > ld->sabbrev->size};
    for (;;) {
        uint64_t code = read_uleb(&c, NULL);
        if (c.bad || code == 0)
            break;
        abbrev a = {code, (uint32_t)read_uleb(&c, NULL), 0, ld->nspecs, 0};
        a.children = (int)read_fixed(&c, 1, NULL);
        for (;;) {
            uint64_t name = read_uleb(&c, NULL), form = read_uleb(&c, NULL);
            if (c.bad || (name == 0 && form == 0))
                break;
            if (util_grow(&ld->specs, &ld->capspecs, ld->nspecs + 1, sizeof *ld->specs)) {
                set_bad(ld, "out of memory");
                return -1;
            }
            ld->specs[ld->nspecs++] = (attr_spec){(uint32_t)name, (uint32_t)form};
            a.n++;
        }
        if (util_grow(&ld->abbrevs, &ld->capabbrevs, ld->nabbrevs + 1, sizeof *ld->abbrevs)) {
            set_bad(ld, "out of memory");
            return -1;
        }
        ld->abbrevs[ld->nabbrevs++] = a;
    }
    if (c.bad) {
        set_bad(ld, "truncated .debug_abbrev");
        return -1;
    }
    return 0;
}

static const abbrev *find_abbrev(const loader *ld, uint64_t code)
{
    /* codes are usually 1, 2, 3 ... in order */
    if (code >= 1 && code <= ld->nabbrevs && ld->abbrevs[code - 1].code == code)
        return &ld->abbrevs[code - 1];
    for (size_t i = 0; i < ld->nabbrevs; i++)
        if (ld->abbrevs[i].code == code)
            return &ld->abbrevs[i];
    return NULL;
}

/* ---- attribute values ---------------------------------------------------------- */

enum { V_NONE = 0, V_CONST, V_BLOCK, V_STRING, V_REF, V_ADDR, V_SECOFF };

typedef struct form_value {
    int cls;
    uint64_t u;
    int64_t s;
    const ptx_section_ref *ref;   /* the PTX name that fills the field */
    size_t block_at, block_len;
    const char *str;
} form_value;

/* The offset a field holds into the section `target` (a number, a
 * `.section+N` ref or a label defined in that section): 0, or -1. */
static int section_offset(const ptx_section *target, const form_value *v, uint64_t *off)
{
    if (!v->ref) {
        *off = v->u;
        return 0;
    }
    if (!target)
        return -1;
    if (v->ref->kind == PTX_REF_SECTION) {
        if (strcmp(v->ref->name, target->name) || v->ref->addend < 0)
            return -1;
        *off = (uint64_t)v->ref->addend;
        return 0;
    }
    for (int i = 0; i < target->nlabels; i++)
        if (!strcmp(target->labels[i].name, v->ref->name)) {
            *off = target->labels[i].at + (uint64_t)v->ref->addend;
            return 0;
        }
    return -1;
}

static int read_form(loader *ld, cursor *c, uint32_t form, form_value *v, int depth)
{
    memset(v, 0, sizeof *v);
    unsigned w = 0;
    switch (form) {
    case FORM_ADDR:
        v->u = read_fixed(c, ld->addr_size, &v->ref);
        v->cls = v->ref ? V_ADDR : V_CONST;
        break;
    case FORM_BLOCK1: w = 1; goto block;
    case FORM_BLOCK2: w = 2; goto block;
    case FORM_BLOCK4: w = 4; goto block;
    case FORM_BLOCK:
    case FORM_EXPRLOC:
    block: {
        uint64_t len = w ? read_fixed(c, w, NULL) : read_uleb(c, NULL);
        if (!cursor_room(c, len))
            return -1;
        v->cls = V_BLOCK;
        v->block_at = c->at;
        v->block_len = (size_t)len;
        c->at += (size_t)len;
        break;
    }
    case FORM_DATA1: case FORM_FLAG: w = 1; goto data;
    case FORM_DATA2: w = 2; goto data;
    case FORM_DATA4: w = 4; goto data;
    case FORM_DATA8: w = 8; goto data;
    case FORM_SEC_OFFSET:
        w = ld->offset_size;
    data:
        v->u = read_fixed(c, w, &v->ref);
        v->s = w < 8 && (v->u >> (8 * w - 1) & 1) ? (int64_t)(v->u | ~0ull << (8 * w)) : (int64_t)v->u;
        v->cls = v->ref || form == FORM_SEC_OFFSET ? V_SECOFF : V_CONST;
        break;
    case FORM_SDATA:
        v->s = read_sleb(c);
        v->u = (uint64_t)v->s;
        v->cls = V_CONST;
        break;
    case FORM_UDATA:
        v->u = read_uleb(c, NULL);
        v->s = (int64_t)v->u;
        v->cls = V_CONST;
        break;
    case FORM_FLAG_PRESENT:
        v->u = 1;
        v->cls = V_CONST;
        break;
    case FORM_STRING:
        v->str = read_cstr(c);
        v->cls = V_STRING;
        break;
    case FORM_STRP: {
        form_value off;
        memset(&off, 0, sizeof off);
        off.u = read_fixed(c, ld->offset_size, &off.ref);
        uint64_t at;
        if (c->bad || !ld->sstr || section_offset(ld->sstr, &off, &at) || at >= ld->sstr->size)
            return c->bad ? -1 : 0; /* no string: the attribute is left out */
        cursor sc = {ld->sstr, (size_t)at, ld->sstr->size, 0};
        v->str = read_cstr(&sc);
        v->cls = v->str ? V_STRING : V_NONE;
        break;
    }
    case FORM_REF_ADDR:
        v->u = read_fixed(c, ld->version <= 2 ? ld->addr_size : ld->offset_size, NULL);
        v->cls = V_REF;
        break;
    case FORM_REF1: w = 1; goto ref;
    case FORM_REF2: w = 2; goto ref;
    case FORM_REF4: w = 4; goto ref;
    case FORM_REF8: w = 8; goto ref;
    case FORM_REF_UDATA:
    ref:
        v->u = (w ? read_fixed(c, w, NULL) : read_uleb(c, NULL)) + ld->unit_start;
        v->cls = V_REF;
        break;
    case FORM_REF_SIG8:
        read_fixed(c, 8, NULL);
        v->cls = V_NONE; /* type units: not followed */
        break;
    case FORM_INDIRECT:
        if (depth > 0)
            return -1;
        return read_form(ld, c, (uint32_t)read_uleb(c, NULL), v, depth + 1);
    default:
        return -1;
    }
    return c->bad ? -1 : 0;
}

/* ---- DIEs ------------------------------------------------------------------------- */

typedef struct die {
    uint64_t off;
    uint32_t tag;
    int children;
    const char *name, *linkage;
    form_value low, high, loc, frame_base, member_loc;
    uint64_t type_off;
    uint64_t byte_size, count;
    int64_t upper, lower;
    int has_size, has_count, has_upper;
    int encoding, addr_class, decl_line, declaration;
} die;

static int read_die(loader *ld, cursor *c, const abbrev *a, die *d)
{
    memset(d, 0, sizeof d[0]);
    d->tag = a->tag;
    d->children = a->children;
    d->type_off = NO_OFFSET;
    for (size_t i = 0; i < a->n; i++) {
        const attr_spec *sp = &ld->specs[a->first + i];
        form_value v;
        if (read_form(ld, c, sp->form, &v, 0))
            return -1;
        switch (sp->name) {
        case AT_NAME: if (v.cls == V_STRING) d->name = v.str; break;
        case AT_LINKAGE_NAME: case AT_MIPS_LINKAGE_NAME: if (v.cls == V_STRING) d->linkage = v.str; break;
        case AT_LOW_PC: d->low = v; break;
        case AT_HIGH_PC: d->high = v; break;
        case AT_LOCATION: d->loc = v; break;
        case AT_FRAME_BASE: d->frame_base = v; break;
        case AT_MEMBER_LOCATION: d->member_loc = v; break;
        case AT_TYPE: if (v.cls == V_REF) d->type_off = v.u; break;
        case AT_BYTE_SIZE: if (v.cls == V_CONST) { d->byte_size = v.u; d->has_size = 1; } break;
        case AT_COUNT: if (v.cls == V_CONST) { d->count = v.u; d->has_count = 1; } break;
        case AT_UPPER_BOUND: if (v.cls == V_CONST) { d->upper = v.s; d->has_upper = 1; } break;
        case AT_LOWER_BOUND: if (v.cls == V_CONST) d->lower = v.s; break;
        case AT_ENCODING: if (v.cls == V_CONST) d->encoding = (int)v.u; break;
        case AT_ADDRESS_CLASS: if (v.cls == V_CONST) d->addr_class = (int)v.u; break;
        case AT_DECL_LINE: if (v.cls == V_CONST) d->decl_line = (int)v.u; break;
        case AT_DECLARATION: d->declaration = v.u != 0; break;
        default: break;
        }
    }
    return 0;
}

/* A register name packed into a number, most significant byte first
 * (0x257231: "%r1"). 0, or -1 when the bytes are not a register name. */
static int unpack_register(uint64_t v, char *buf, size_t n)
{
    size_t k = 0;
    for (int shift = 56; shift >= 0; shift -= 8) {
        unsigned char ch = (unsigned char)(v >> shift);
        if (!ch && !k)
            continue;
        if (ch < 0x21 || ch > 0x7e || k + 1 >= n)
            return -1;
        buf[k++] = (char)ch;
    }
    buf[k] = 0;
    return k >= 2 && buf[0] == '%' ? 0 : -1;
}

/* Decodes a location expression of section s at [at, at+len). */
static void decode_expr(loader *ld, const ptx_section *s, size_t at, size_t len, const char *frame_reg,
                        dwarf_loc *out)
{
    memset(out, 0, sizeof *out);
    out->kind = DWARF_LOC_UNSUPPORTED;
    cursor c = {s, at, at + len, at + len > s->size || len > s->size};
    int kind = DWARF_LOC_UNSUPPORTED, overflow = 0;
    while (!c.bad && c.at < c.end) {
        unsigned op = (unsigned)read_fixed(&c, 1, NULL);
        switch (op) {
        case OP_REGX: {
            if (kind != DWARF_LOC_UNSUPPORTED)
                return;
            uint64_t r = read_uleb(&c, &overflow);
            if (overflow || unpack_register(r, out->reg, sizeof out->reg))
                return;
            kind = DWARF_LOC_REG;
            break;
        }
        case OP_ADDR: {
            if (kind != DWARF_LOC_UNSUPPORTED)
                return;
            const ptx_section_ref *ref;
            uint64_t a = read_fixed(&c, ld->addr_size, &ref);
            if (ref && ref->kind == PTX_REF_NAME) {
                out->symbol = keep_str(ld, ref->name);
                out->offset = ref->addend;
            } else if (!ref) {
                out->offset = (int64_t)a;
            } else {
                return;
            }
            kind = DWARF_LOC_ADDR;
            break;
        }
        case OP_BREGX: {
            if (kind != DWARF_LOC_UNSUPPORTED)
                return;
            uint64_t r = read_uleb(&c, &overflow);
            if (overflow || unpack_register(r, out->reg, sizeof out->reg))
                return;
            out->offset = read_sleb(&c);
            kind = DWARF_LOC_BREG;
            break;
        }
        case OP_FBREG:
            if (kind != DWARF_LOC_UNSUPPORTED || !frame_reg || !frame_reg[0])
                return;
            snprintf(out->reg, sizeof out->reg, "%s", frame_reg);
            out->offset = read_sleb(&c);
            kind = DWARF_LOC_BREG;
            break;
        case OP_PLUS_UCONST:
            if (kind != DWARF_LOC_ADDR && kind != DWARF_LOC_BREG)
                return;
            out->offset += (int64_t)read_uleb(&c, NULL);
            break;
        default:
            return; /* DW_OP_deref, pieces, stack values ...: not followed */
        }
    }
    if (!c.bad)
        out->kind = kind;
}

static int add_loc(loader *ld, int fn, uint32_t lo, uint32_t hi, const dwarf_loc *loc)
{
    dwarf_info *in = ld->info;
    if (util_grow(&in->locs, &in->caplocs, (size_t)in->nlocs + 1, sizeof *in->locs)) {
        set_bad(ld, "out of memory");
        return -1;
    }
    in->locs[in->nlocs++] = (dwarf_range_loc){fn, lo, hi, *loc};
    return 0;
}

static int resolve_label(loader *ld, const ptx_section_ref *ref, int *fn, uint32_t *pc)
{
    if (!ref || ref->kind != PTX_REF_NAME || ref->addend || !ld->resolve)
        return -1;
    return ld->resolve(ld->ctx, ref->name, fn, pc);
}

/* A .debug_loc list at offset off: its entries become the variable's
 * locations (none if the list is malformed). */
static void read_loclist(loader *ld, dwarf_var *var, uint64_t off, const char *frame_reg)
{
    const ptx_section *s = ld->sloc;
    if (!s || off >= s->size)
        return;
    cursor c = {s, (size_t)off, s->size, 0};
    int first = ld->info->nlocs;
    while (!c.bad) {
        const ptx_section_ref *rb, *re;
        uint64_t b = read_fixed(&c, ld->addr_size, &rb), e = read_fixed(&c, ld->addr_size, &re);
        if (c.bad)
            break;
        if (!rb && !re && b == 0 && e == 0)
            break;                       /* end of list */
        if (!rb && b == (ld->addr_size == 8 ? ~0ull : 0xffffffffull))
            continue;                    /* base address selection: labels say it all */
        uint64_t len = read_fixed(&c, 2, NULL);
        if (!cursor_room(&c, len))
            break;
        size_t at = c.at;
        c.at += (size_t)len;
        int fn_lo, fn_hi;
        uint32_t lo, hi;
        if (resolve_label(ld, rb, &fn_lo, &lo) || resolve_label(ld, re, &fn_hi, &hi))
            continue;                    /* numbers, not labels: not mappable to pcs */
        if (fn_hi != fn_lo)
            hi = UINT32_MAX;
        dwarf_loc loc;
        decode_expr(ld, s, at, (size_t)len, frame_reg, &loc);
        if (add_loc(ld, fn_lo, lo, hi, &loc))
            return;
    }
    if (c.bad) {
        ld->info->nlocs = first;        /* a broken list: optimized out */
        return;
    }
    var->first_loc = first;
    var->nlocs = ld->info->nlocs - first;
}

static int add_type(loader *ld, const die *d, int kind)
{
    dwarf_info *in = ld->info;
    size_t n = (size_t)in->ntypes + 1;
    if (util_grow(&in->types, &in->captypes, n, sizeof *in->types) ||
        util_grow(&ld->type_die, &ld->cap_type_die, n, sizeof *ld->type_die) ||
        util_grow(&ld->type_ref, &ld->cap_type_ref, n, sizeof *ld->type_ref)) {
        set_bad(ld, "out of memory");
        return -1;
    }
    dwarf_type *t = &in->types[in->ntypes];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->name = keep_str(ld, d->name);
    t->encoding = d->encoding;
    t->size = d->has_size ? d->byte_size : kind == DWARF_T_POINTER ? 8 : 0;
    t->target = -1;
    t->addr_class = d->addr_class;
    t->first_member = 0;
    t->nmembers = 0;
    ld->type_die[in->ntypes] = d->off;
    ld->type_ref[in->ntypes] = d->type_off;
    return in->ntypes++;
}

/* What a level of the DIE tree is, for its children. */
typedef struct level {
    int scope;            /* innermost scope here (-1: none) */
    int type;             /* the type this DIE is (arrays, structs), or -1 */
    int in_type;          /* inside a type: variables here are not variables */
    char frame_reg[16];   /* the subprogram's frame base register, for DW_OP_fbreg */
} level;

static int add_scope(loader *ld, const die *d, int parent, const dwarf_scope *parent_scope)
{
    dwarf_info *in = ld->info;
    if (util_grow(&in->scopes, &in->capscopes, (size_t)in->nscopes + 1, sizeof *in->scopes)) {
        set_bad(ld, "out of memory");
        return -1;
    }
    dwarf_scope s = {parent, -1, 0, 0, NULL, NULL};
    int fn, fn_hi;
    uint32_t lo, hi;
    if (d->low.cls == V_ADDR && !resolve_label(ld, d->low.ref, &fn, &lo)) {
        s.fn = fn;
        s.lo = lo;
        s.hi = UINT32_MAX;
        if (d->high.cls == V_ADDR && !resolve_label(ld, d->high.ref, &fn_hi, &hi) && fn_hi == fn && hi >= lo)
            s.hi = hi;
    } else if (parent_scope && d->tag != TAG_SUBPROGRAM) {
        s.fn = parent_scope->fn;        /* a block without pcs: as wide as its parent */
        s.lo = parent_scope->lo;
        s.hi = parent_scope->hi;
    }
    if (d->tag == TAG_SUBPROGRAM) {
        s.name = keep_str(ld, d->name ? d->name : d->linkage);
        s.linkage = keep_str(ld, d->linkage);
    }
    in->scopes[in->nscopes] = s;
    return in->nscopes++;
}

static void add_var(loader *ld, const die *d, int scope, const char *frame_reg)
{
    dwarf_info *in = ld->info;
    size_t n = (size_t)in->nvars + 1;
    if (util_grow(&in->vars, &in->capvars, n, sizeof *in->vars) ||
        util_grow(&ld->var_ref, &ld->cap_var_ref, n, sizeof *ld->var_ref)) {
        set_bad(ld, "out of memory");
        return;
    }
    dwarf_var *v = &in->vars[in->nvars];
    memset(v, 0, sizeof *v);
    v->name = keep_str(ld, d->name);
    v->is_param = d->tag == TAG_FORMAL_PARAMETER;
    v->type = -1;
    v->scope = scope;
    v->decl_line = d->decl_line;
    v->addr_class = d->addr_class;
    ld->var_ref[in->nvars] = d->type_off;
    in->nvars++;
    if (d->loc.cls == V_BLOCK) {
        dwarf_loc loc;
        decode_expr(ld, ld->sinfo, d->loc.block_at, d->loc.block_len, frame_reg, &loc);
        if (add_loc(ld, -1, 0, UINT32_MAX, &loc))
            return;
        v->first_loc = in->nlocs - 1;
        v->nlocs = 1;
    } else if (d->loc.cls == V_SECOFF || (d->loc.cls == V_CONST && ld->version < 4)) {
        uint64_t off;
        if (!section_offset(ld->sloc, &d->loc, &off))
            read_loclist(ld, v, off, frame_reg);
    }
}

static void add_member(loader *ld, const die *d, int owner)
{
    dwarf_info *in = ld->info;
    size_t n = (size_t)in->nmembers + 1;
    if (util_grow(&in->members, &in->capmembers, n, sizeof *in->members) ||
        util_grow(&ld->member_ref, &ld->cap_member_ref, n, sizeof *ld->member_ref) ||
        util_grow(&ld->member_owner, &ld->cap_member_owner, n, sizeof *ld->member_owner)) {
        set_bad(ld, "out of memory");
        return;
    }
    uint64_t off = 0;
    if (d->member_loc.cls == V_CONST) {
        off = d->member_loc.u;
    } else if (d->member_loc.cls == V_BLOCK) {
        cursor c = {ld->sinfo, d->member_loc.block_at, d->member_loc.block_at + d->member_loc.block_len, 0};
        if (read_fixed(&c, 1, NULL) == OP_PLUS_UCONST)
            off = read_uleb(&c, NULL);
    }
    in->members[in->nmembers] = (dwarf_member){keep_str(ld, d->name), -1, off};
    ld->member_ref[in->nmembers] = d->type_off;
    ld->member_owner[in->nmembers] = owner;
    in->nmembers++;
}

static int type_kind_of(uint32_t tag, int *qualifier)
{
    *qualifier = 0;
    switch (tag) {
    case TAG_BASE: case TAG_ENUM: return DWARF_T_BASE;
    case TAG_POINTER: case TAG_REFERENCE: case TAG_RVALUE_REFERENCE: return DWARF_T_POINTER;
    case TAG_ARRAY: return DWARF_T_ARRAY;
    case TAG_STRUCT: case TAG_CLASS: case TAG_UNION: return DWARF_T_STRUCT;
    case TAG_TYPEDEF: return DWARF_T_ALIAS;
    case TAG_CONST: *qualifier = 'c'; return DWARF_T_ALIAS;
    case TAG_VOLATILE: *qualifier = 'v'; return DWARF_T_ALIAS;
    case TAG_RESTRICT: *qualifier = 'r'; return DWARF_T_ALIAS;
    case TAG_UNSPECIFIED: case TAG_SUBROUTINE_TYPE: case TAG_PTR_TO_MEMBER: return DWARF_T_OTHER;
    default: return 0;
    }
}

/* Walks one unit's DIEs from the cursor to end. */
static void read_unit_dies(loader *ld, cursor *c)
{
    level stack[MAX_DEPTH];
    int depth = 0;
    stack[0] = (level){-1, -1, 0, ""};
    while (!c->bad && !ld->bad && c->at < c->end) {
        uint64_t off = c->at;
        uint64_t code = read_uleb(c, NULL);
        if (c->bad)
            break;
        if (code == 0) {
            if (depth > 0)
                depth--;
            continue;
        }
        const abbrev *a = find_abbrev(ld, code);
        if (!a) {
            set_bad(ld, "an unknown abbreviation code in .debug_info");
            return;
        }
        die d;
        if (read_die(ld, c, a, &d)) {
            set_bad(ld, "a malformed attribute in .debug_info");
            return;
        }
        d.off = off;
        level here = stack[depth];
        level next = here;
        next.type = -1;
        int qualifier, kind = type_kind_of(d.tag, &qualifier);
        if (kind) {
            int t = add_type(ld, &d, kind);
            if (t < 0)
                return;
            ld->info->types[t].qualifier = qualifier;
            if (kind == DWARF_T_ARRAY)
                ld->info->types[t].count = 1;
            if (kind == DWARF_T_BASE && d.tag == TAG_ENUM && !d.encoding)
                ld->info->types[t].encoding = DWARF_ATE_SIGNED;
            next.type = t;
            next.in_type = 1;
        } else if (d.tag == TAG_SUBPROGRAM || ((d.tag == TAG_LEXICAL_BLOCK || d.tag == TAG_INLINED) &&
                                               here.scope >= 0 && !here.in_type)) {
            const dwarf_scope *ps = here.scope >= 0 ? &ld->info->scopes[here.scope] : NULL;
            int s = add_scope(ld, &d, d.tag == TAG_SUBPROGRAM ? -1 : here.scope, ps);
            if (s < 0)
                return;
            next.scope = s;
            next.in_type = 0;
            if (d.tag == TAG_SUBPROGRAM) {
                next.frame_reg[0] = 0;
                if (d.frame_base.cls == V_BLOCK) {
                    dwarf_loc fb;
                    decode_expr(ld, ld->sinfo, d.frame_base.block_at, d.frame_base.block_len, NULL, &fb);
                    if (fb.kind == DWARF_LOC_REG)
                        snprintf(next.frame_reg, sizeof next.frame_reg, "%s", fb.reg);
                }
            }
        } else if ((d.tag == TAG_VARIABLE || d.tag == TAG_FORMAL_PARAMETER) && !here.in_type && d.name &&
                   !d.declaration) {
            if (here.scope < 0 || ld->info->scopes[here.scope].fn >= 0)
                add_var(ld, &d, here.scope, here.frame_reg);
        } else if (d.tag == TAG_SUBRANGE && here.type >= 0 && ld->info->types[here.type].kind == DWARF_T_ARRAY) {
            dwarf_type *t = &ld->info->types[here.type];
            uint64_t n = d.has_count ? d.count : d.has_upper && d.upper >= d.lower ? (uint64_t)(d.upper - d.lower) + 1 : 0;
            t->count = n && t->count && n <= UINT64_MAX / t->count ? t->count * n : 0;
        } else if (d.tag == TAG_MEMBER && here.type >= 0 && ld->info->types[here.type].kind == DWARF_T_STRUCT) {
            add_member(ld, &d, here.type);
        }
        if (d.children) {
            if (depth + 1 >= MAX_DEPTH) {
                set_bad(ld, "DIEs nested too deeply");
                return;
            }
            stack[++depth] = next;
        }
    }
    if (c->bad)
        set_bad(ld, "truncated .debug_info");
}

static void read_units(loader *ld)
{
    const ptx_section *s = ld->sinfo;
    cursor c = {s, 0, s->size, 0};
    while (!ld->bad && c.at < s->size) {
        ld->unit_start = c.at;
        ld->offset_size = 4;
        uint64_t len = read_fixed(&c, 4, NULL);
        if (len == 0xffffffffu) {
            ld->offset_size = 8;
            len = read_fixed(&c, 8, NULL);
        }
        if (c.bad || !cursor_room(&c, len)) {
            set_bad(ld, "truncated .debug_info unit header");
            return;
        }
        size_t unit_end = c.at + (size_t)len;
        cursor u = {s, c.at, unit_end, 0};
        ld->version = (unsigned)read_fixed(&u, 2, NULL);
        form_value ab;
        memset(&ab, 0, sizeof ab);
        ab.u = read_fixed(&u, ld->offset_size, &ab.ref);
        ld->addr_size = (unsigned)read_fixed(&u, 1, NULL);
        uint64_t abbrev_off;
        if (u.bad || ld->version < 2 || ld->version > 4 || (ld->addr_size != 4 && ld->addr_size != 8) ||
            section_offset(ld->sabbrev, &ab, &abbrev_off)) {
            set_bad(ld, "a .debug_info unit kemu cannot read (DWARF 2-4 only)");
            return;
        }
        if (read_abbrevs(ld, abbrev_off))
            return;
        read_unit_dies(ld, &u);
        c.at = unit_end;
    }
}

/* ---- resolving DIE offsets ----------------------------------------------------------- */

typedef struct die_index { uint64_t off; int type; } die_index;

static int cmp_die_index(const void *a, const void *b)
{
    uint64_t x = ((const die_index *)a)->off, y = ((const die_index *)b)->off;
    return x < y ? -1 : x > y;
}

static int lookup_type(const die_index *ix, int n, uint64_t off)
{
    if (off == NO_OFFSET)
        return -1;
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ix[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ix[lo].off == off ? ix[lo].type : -1;
}

static void resolve_types(loader *ld)
{
    dwarf_info *in = ld->info;
    die_index *ix = malloc(((size_t)in->ntypes + 1) * sizeof *ix);
    if (!ix) {
        set_bad(ld, "out of memory");
        return;
    }
    for (int i = 0; i < in->ntypes; i++)
        ix[i] = (die_index){ld->type_die[i], i};
    qsort(ix, (size_t)in->ntypes, sizeof *ix, cmp_die_index);
    for (int i = 0; i < in->ntypes; i++)
        in->types[i].target = lookup_type(ix, in->ntypes, ld->type_ref[i]);
    for (int i = 0; i < in->nvars; i++)
        in->vars[i].type = lookup_type(ix, in->ntypes, ld->var_ref[i]);
    for (int i = 0; i < in->nmembers; i++)
        in->members[i].type = lookup_type(ix, in->ntypes, ld->member_ref[i]);
    free(ix);
    /* members grouped by their struct (a nested type's members may sit
     * between a struct's own): a stable counting sort by owner */
    if (in->nmembers) {
        int *count = calloc((size_t)in->ntypes + 1, sizeof *count);
        dwarf_member *sorted = malloc((size_t)in->nmembers * sizeof *sorted);
        if (!count || !sorted) {
            free(count);
            free(sorted);
            set_bad(ld, "out of memory");
            return;
        }
        for (int i = 0; i < in->nmembers; i++)
            count[ld->member_owner[i] + 1]++;
        for (int t = 0; t < in->ntypes; t++) {
            in->types[t].first_member = count[t];
            in->types[t].nmembers = count[t + 1];
            count[t + 1] += count[t];
        }
        for (int i = 0; i < in->nmembers; i++)
            sorted[count[ld->member_owner[i]]++] = in->members[i];
        free(in->members);
        in->members = sorted;
        in->capmembers = (size_t)in->nmembers;
        free(count);
    }
    /* array sizes from their elements */
    for (int i = 0; i < in->ntypes; i++) {
        dwarf_type *t = &in->types[i];
        if (t->kind == DWARF_T_ARRAY && !t->size) {
            int e = dwarf_type_strip(in, t->target);
            if (e >= 0 && in->types[e].size && t->count && t->count <= UINT64_MAX / in->types[e].size)
                t->size = t->count * in->types[e].size;
        }
    }
}

/* ---- loading ------------------------------------------------------------------------ */

dwarf_info *dwarf_load(const ptx_section *sections, int nsections, dwarf_label_resolver resolve, void *ctx,
                       char *msg, size_t n)
{
    if (msg && n)
        msg[0] = 0;
    loader ld;
    memset(&ld, 0, sizeof ld);
    for (int i = 0; i < nsections; i++) {
        const ptx_section *s = &sections[i];
        if (!s->name)
            continue;
        if (!strcmp(s->name, ".debug_info")) ld.sinfo = s;
        else if (!strcmp(s->name, ".debug_abbrev")) ld.sabbrev = s;
        else if (!strcmp(s->name, ".debug_loc")) ld.sloc = s;
        else if (!strcmp(s->name, ".debug_str")) ld.sstr = s;
    }
    if (!ld.sinfo || !ld.sinfo->size) {
        if (msg && n)
            snprintf(msg, n, "no .debug_info (compile with nvcc -G for source variables)");
        return NULL;
    }
    ld.info = calloc(1, sizeof *ld.info);
    if (!ld.info) {
        if (msg && n)
            snprintf(msg, n, "out of memory");
        return NULL;
    }
    ld.resolve = resolve;
    ld.ctx = ctx;
    read_units(&ld);
    if (!ld.bad)
        resolve_types(&ld);
    free(ld.type_die);
    free(ld.type_ref);
    free(ld.member_ref);
    free(ld.member_owner);
    free(ld.var_ref);
    free(ld.abbrevs);
    free(ld.specs);
    if (ld.bad) {
        if (msg && n)
            snprintf(msg, n, "%s", ld.why ? ld.why : "malformed DWARF");
        dwarf_free(ld.info);
        return NULL;
    }
    return ld.info;
}

void dwarf_free(dwarf_info *info)
{
    if (!info)
        return;
    free(info->types);
    free(info->members);
    free(info->vars);
    free(info->scopes);
    free(info->locs);
    util_arena_free(&info->arena);
    free(info);
}

typedef struct label_place { int fn; uint32_t pc; } label_place;
typedef struct module_labels { util_map map; label_place *places; } module_labels;

static int module_label(void *ctx, const char *label, int *fn, uint32_t *pc)
{
    module_labels *ml = ctx;
    uintptr_t k = (uintptr_t)util_map_get(&ml->map, label, strlen(label));
    if (!k)
        return -1;
    *fn = ml->places[k - 1].fn;
    *pc = ml->places[k - 1].pc;
    return 0;
}

dwarf_info *dwarf_load_module(const bc_module *m, char *msg, size_t n)
{
    if (!m || !m->ptx || !ptx_module_section(m->ptx, ".debug_info")) {
        if (msg && n)
            snprintf(msg, n, "no .debug_info (compile with nvcc -G for source variables)");
        return NULL;
    }
    module_labels ml;
    memset(&ml, 0, sizeof ml);
    size_t total = 0;
    for (int i = 0; i < m->nfunctions; i++)
        total += m->functions[i] ? m->functions[i]->nlabels : 0;
    ml.places = malloc((total + 1) * sizeof *ml.places);
    if (!ml.places) {
        if (msg && n)
            snprintf(msg, n, "out of memory");
        return NULL;
    }
    size_t k = 0;
    int failed = 0;
    for (int i = 0; i < m->nfunctions && !failed; i++) {
        const bc_function *f = m->functions[i];
        for (uint32_t j = 0; f && j < f->nlabels && !failed; j++) {
            const char *name = f->labels[j].name;
            if (util_map_get(&ml.map, name, strlen(name)))
                continue; /* the same label in two functions: the first one */
            ml.places[k] = (label_place){f->index, f->labels[j].pc};
            util_map_put(&ml.map, name, strlen(name), (void *)(uintptr_t)(k + 1), &failed);
            k++;
        }
    }
    dwarf_info *info = NULL;
    if (failed) {
        if (msg && n)
            snprintf(msg, n, "out of memory");
    } else {
        info = dwarf_load(m->ptx->sections, m->ptx->nsections, module_label, &ml, msg, n);
    }
    util_map_free(&ml.map);
    free(ml.places);
    return info;
}

/* ---- queries -------------------------------------------------------------------------- */

const dwarf_type *dwarf_type_at(const dwarf_info *info, int index)
{
    return info && index >= 0 && index < info->ntypes ? &info->types[index] : NULL;
}

const dwarf_member *dwarf_members(const dwarf_info *info)
{
    return info ? info->members : NULL;
}

const dwarf_var *dwarf_vars(const dwarf_info *info, int *n)
{
    *n = info ? info->nvars : 0;
    return info ? info->vars : NULL;
}

const dwarf_scope *dwarf_scopes(const dwarf_info *info, int *n)
{
    *n = info ? info->nscopes : 0;
    return info ? info->scopes : NULL;
}

int dwarf_type_strip(const dwarf_info *info, int index)
{
    for (int hops = 0; hops < 32; hops++) {
        const dwarf_type *t = dwarf_type_at(info, index);
        if (!t || t->kind != DWARF_T_ALIAS)
            return t ? index : -1;
        index = t->target;
    }
    return -1;
}

static void type_name_rec(const dwarf_info *info, int index, util_buffer *b, int depth)
{
    const dwarf_type *t = dwarf_type_at(info, index);
    if (!t) {
        util_buffer_printf(b, "void");
        return;
    }
    if (depth > 16) {
        util_buffer_printf(b, "...");
        return;
    }
    switch (t->kind) {
    case DWARF_T_POINTER:
        type_name_rec(info, t->target, b, depth + 1);
        util_buffer_printf(b, " *");
        return;
    case DWARF_T_ARRAY:
        type_name_rec(info, t->target, b, depth + 1);
        util_buffer_printf(b, " [%llu]", (unsigned long long)t->count);
        return;
    case DWARF_T_ALIAS:
        if (t->qualifier == 0 && t->name) {
            util_buffer_printf(b, "%s", t->name);
            return;
        }
        if (t->qualifier == 'c' || t->qualifier == 'v')
            util_buffer_printf(b, "%s ", t->qualifier == 'c' ? "const" : "volatile");
        type_name_rec(info, t->target, b, depth + 1);
        return;
    default:
        util_buffer_printf(b, "%s", t->name ? t->name : "<anonymous>");
        return;
    }
}

void dwarf_type_name(const dwarf_info *info, int index, char *buf, size_t n)
{
    if (!n)
        return;
    util_buffer b = {0};
    type_name_rec(info, index, &b, 0);
    snprintf(buf, n, "%s", b.data ? b.data : "?");
    util_buffer_free(&b);
}

static int scope_has(const dwarf_scope *s, int fn, uint32_t pc)
{
    return s->fn >= 0 && s->fn == fn && pc >= s->lo && pc < s->hi;
}

/* The scopes around pc, innermost first (up to max). */
static int scope_chain(const dwarf_info *info, int fn, uint32_t pc, int *out, int max)
{
    if (!info)
        return 0;
    /* the innermost: a scope holding pc none of whose children does;
     * scopes come in DIE order, so a later holder nests deeper */
    int inner = -1;
    for (int i = 0; i < info->nscopes; i++)
        if (scope_has(&info->scopes[i], fn, pc)) {
            if (inner < 0)
                inner = i;
            else {
                /* keep i if inner is among its ancestors */
                for (int p = info->scopes[i].parent, hops = 0; p >= 0 && hops < MAX_DEPTH;
                     p = info->scopes[p].parent, hops++)
                    if (p == inner) {
                        inner = i;
                        break;
                    }
            }
        }
    int n = 0;
    for (int s = inner, hops = 0; s >= 0 && n < max && hops < MAX_DEPTH; s = info->scopes[s].parent, hops++)
        out[n++] = s;
    return n;
}

int dwarf_visible(const dwarf_info *info, int fn, uint32_t pc, const dwarf_var **out, int max)
{
    int chain[MAX_DEPTH];
    int nc = scope_chain(info, fn, pc, chain, MAX_DEPTH), n = 0;
    for (int c = 0; c < nc; c++)
        for (int i = 0; i < info->nvars; i++) {
            const dwarf_var *v = &info->vars[i];
            if (v->scope != chain[c])
                continue;
            int shadowed = 0;
            for (int k = 0; k < n && k < max && !shadowed; k++)
                shadowed = !strcmp(out[k]->name, v->name);
            if (shadowed)
                continue;
            if (n < max)
                out[n] = v;
            n++;
        }
    return n;
}

const dwarf_var *dwarf_lookup(const dwarf_info *info, int fn, uint32_t pc, const char *name)
{
    int chain[MAX_DEPTH];
    int nc = scope_chain(info, fn, pc, chain, MAX_DEPTH);
    for (int c = 0; c < nc; c++)
        for (int i = 0; i < info->nvars; i++)
            if (info->vars[i].scope == chain[c] && !strcmp(info->vars[i].name, name))
                return &info->vars[i];
    for (int i = 0; info && i < info->nvars; i++)
        if (info->vars[i].scope < 0 && !strcmp(info->vars[i].name, name))
            return &info->vars[i];
    return NULL;
}

const dwarf_loc *dwarf_location(const dwarf_info *info, const dwarf_var *var, int fn, uint32_t pc)
{
    for (int i = 0; info && var && i < var->nlocs; i++) {
        const dwarf_range_loc *r = &info->locs[var->first_loc + i];
        if (r->fn < 0 || (r->fn == fn && pc >= r->lo && pc < r->hi))
            return &r->loc;
    }
    return NULL;
}

int dwarf_subprogram_at(const dwarf_info *info, int fn, uint32_t pc)
{
    int chain[MAX_DEPTH];
    int nc = scope_chain(info, fn, pc, chain, MAX_DEPTH);
    return nc ? chain[nc - 1] : -1;
}
