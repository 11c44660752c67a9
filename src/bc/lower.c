/* Lowering, part 1: module layout (shared, const and global variables,
 * parameter buffers, local frames), register slot assignment, constants,
 * operand resolution and label patching. The per-instruction lowering is
 * in lower_insn.c. Errors carry file:line:col and never stop at the first
 * one when recovery is possible. */
#include "bc/lower_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bc_opcode_names[BC_OPCODE_COUNT] = {
#define BC_OP(name, shape, meaning) #name,
#include "bc/opcodes.def"
#undef BC_OP
};
const char *const bc_opcode_shapes[BC_OPCODE_COUNT] = {
#define BC_OP(name, shape, meaning) shape,
#include "bc/opcodes.def"
#undef BC_OP
};

void lower_error(lowerer *L, ptx_pos pos, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ptx_diag_error(&L->diag, pos.line, pos.col, msg);
}

static uint64_t align_up(uint64_t x, uint64_t a) { return a ? (x + a - 1) / a * a : x; }

/* ---- emission -------------------------------------------------------- */

bc_op *lower_emit(lowerer *L, bc_opcode code)
{
    bc_function *fn = L->fn;
    static bc_op dummy;
    if (fn->ncode == fn->capcode) {
        uint32_t cap = fn->capcode ? fn->capcode * 2 : 64;
        bc_op *p = realloc(fn->code, cap * sizeof(bc_op));
        if (!p) {
            L->oom = 1;
            memset(&dummy, 0, sizeof dummy);
            return &dummy;
        }
        fn->code = p;
        fn->capcode = cap;
    }
    bc_op *op = &fn->code[fn->ncode++];
    memset(op, 0, sizeof *op);
    op->code = (uint16_t)code;
    op->guard = BC_NONE;
    op->d = op->a = op->b = op->c = op->e = BC_NONE;
    op->src = L->cur_src;
    return op;
}

uint32_t lower_temp(lowerer *L)
{
    return L->fn->nslots++;
}

static uint32_t const_hash(uint64_t v, uint32_t mask)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return (uint32_t)v & mask;
}

/* Rebuilds L's constant index for L->fn with room for twice its constants
 * plus one. Returns -1 when out of memory. */
static int const_index_rebuild(lowerer *L)
{
    const bc_function *fn = L->fn;
    uint32_t cap = 64;
    while (cap < 2 * (fn->nconsts + 1))
        cap *= 2;
    if (cap != L->const_index_cap) {
        uint32_t *idx = realloc(L->const_index, cap * sizeof *idx);
        if (!idx)
            return -1;
        L->const_index = idx;
        L->const_index_cap = cap;
    }
    memset(L->const_index, 0xff, cap * sizeof *L->const_index);
    for (uint32_t i = 0; i < fn->nconsts; i++) {
        uint32_t h = const_hash(fn->const_values[i], cap - 1);
        while (L->const_index[h] != UINT32_MAX)
            h = (h + 1) & (cap - 1);
        L->const_index[h] = i;
    }
    L->const_index_fn = fn;
    return 0;
}

uint32_t lower_const(lowerer *L, uint64_t value)
{
    bc_function *fn = L->fn;
    if ((L->const_index_fn != fn || 2 * (fn->nconsts + 1) > L->const_index_cap) && const_index_rebuild(L)) {
        L->oom = 1;
        return 0;
    }
    uint32_t mask = L->const_index_cap - 1, h = const_hash(value, mask);
    for (; L->const_index[h] != UINT32_MAX; h = (h + 1) & mask)
        if (fn->const_values[L->const_index[h]] == value)
            return fn->const_slots[L->const_index[h]];
    if (fn->nconsts == fn->capconsts) {
        uint32_t cap = fn->capconsts ? fn->capconsts * 2 : 16;
        uint32_t *s = realloc(fn->const_slots, cap * sizeof *s);
        if (!s) { L->oom = 1; return 0; }
        fn->const_slots = s;
        uint64_t *v = realloc(fn->const_values, cap * sizeof *v);
        if (!v) { L->oom = 1; return 0; }
        fn->const_values = v;
        fn->capconsts = cap;
    }
    uint32_t slot = lower_temp(L);
    fn->const_slots[fn->nconsts] = slot;
    fn->const_values[fn->nconsts] = value;
    L->const_index[h] = fn->nconsts;
    fn->nconsts++;
    return slot;
}

uint32_t lower_list(lowerer *L, const uint32_t *slots, int n)
{
    bc_function *fn = L->fn;
    if (fn->nlists + (uint32_t)n > fn->caplists) {
        uint32_t cap = fn->caplists ? fn->caplists : 64;
        while (cap < fn->nlists + (uint32_t)n)
            cap *= 2;
        uint32_t *p = realloc(fn->lists, cap * sizeof *p);
        if (!p) { L->oom = 1; return 0; }
        fn->lists = p;
        fn->caplists = cap;
    }
    uint32_t at = fn->nlists;
    memcpy(fn->lists + at, slots, (size_t)n * sizeof *slots);
    fn->nlists += (uint32_t)n;
    return at;
}

void lower_branch_ref(lowerer *L, uint32_t op, const char *label, ptx_pos pos, int list_slot)
{
    if (util_grow(&L->refs, &L->caprefs, L->nrefs + 1, sizeof *L->refs)) {
        L->oom = 1;
        return;
    }
    L->refs[L->nrefs++] = (lower_label_ref){op, label, pos, list_slot};
}

const bc_symbol *lower_find_symbol(lowerer *L, const char *name)
{
    uintptr_t k = (uintptr_t)util_map_get(&L->m->symbol_index, name, strlen(name));
    return k ? &L->m->symbols[k - 1] : NULL;
}

/* ---- modifiers ------------------------------------------------------- */

int mod_has(const ptx_insn *in, const char *m) { return ptx_insn_has_mod(in, m); }

ptx_type mod_type(const ptx_insn *in, int i)
{
    for (int k = 0; k < in->nmods; k++) {
        ptx_type t = ptx_type_from_name(in->mods[k]);
        if (t != PTX_T_NONE && i-- == 0)
            return t;
    }
    return PTX_T_NONE;
}

int mod_type_count(const ptx_insn *in)
{
    int n = 0;
    for (int k = 0; k < in->nmods; k++)
        if (ptx_type_from_name(in->mods[k]) != PTX_T_NONE)
            n++;
    return n;
}

int mod_rounding(const ptx_insn *in)
{
    static const struct { const char *n; int r; } rs[] = {
        {".rn", BC_RND_RN}, {".rz", BC_RND_RZ}, {".rm", BC_RND_RM}, {".rp", BC_RND_RP},
        {".rna", BC_RND_RNA}, {".rni", BC_RND_RNI}, {".rzi", BC_RND_RZI}, {".rmi", BC_RND_RMI},
        {".rpi", BC_RND_RPI}, {".approx", BC_RND_APPROX}, {".full", BC_RND_FULL},
    };
    for (int k = 0; k < in->nmods; k++)
        for (size_t i = 0; i < KEMU_ARRAY_LEN(rs); i++)
            if (strcmp(in->mods[k], rs[i].n) == 0)
                return rs[i].r;
    return BC_RND_NONE;
}

int mod_space(const ptx_insn *in)
{
    for (int k = 0; k < in->nmods; k++) {
        const char *s = in->mods[k];
        if (!strcmp(s, ".global")) return BC_SPACE_GLOBAL;
        if (!strcmp(s, ".shared") || !strcmp(s, ".shared::cta")) return BC_SPACE_SHARED;
        if (!strcmp(s, ".shared::cluster")) return BC_SPACE_SHARED_CLUSTER;
        if (!strcmp(s, ".local")) return BC_SPACE_LOCAL;
        if (!strcmp(s, ".const")) return BC_SPACE_CONST;
        if (!strcmp(s, ".param") || !strcmp(s, ".param::entry") || !strcmp(s, ".param::func"))
            return BC_SPACE_PARAM_KERNEL;
    }
    return BC_SPACE_GENERIC;
}

/* ---- operands -------------------------------------------------------- */

static uint64_t imm_bits(lowerer *L, const ptx_operand *o, ptx_type ty)
{
    unsigned size = ptx_type_size(ty);
    uint64_t mask = size >= 8 ? ~0ull : ((1ull << (size * 8)) - 1);
    if (o->kind == PTX_OP_IMM_INT) {
        if (ty == PTX_T_F32) {
            float f = (float)o->imm;
            uint32_t b;
            memcpy(&b, &f, 4);
            return b;
        }
        if (ty == PTX_T_F64) {
            double d = (double)o->imm;
            uint64_t b;
            memcpy(&b, &d, 8);
            return b;
        }
        return (uint64_t)o->imm & mask;
    }
    /* float literal */
    double d;
    if (o->is_f32) {
        if (ty == PTX_T_F32 || size == 4)
            return o->fbits & 0xffffffffu;
        uint32_t b32 = (uint32_t)o->fbits;
        float f;
        memcpy(&f, &b32, 4);
        d = f;
    } else {
        memcpy(&d, &o->fbits, 8);
    }
    if (ty == PTX_T_F32) {
        float f = (float)d;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    if (ty == PTX_T_F64 || size == 8) {
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    if (!ptx_type_is_float(ty))
        lower_error(L, o->pos, "a floating-point literal cannot be used with type %s", ptx_type_name(ty));
    return 0;
}

static const struct { const char *name; int id; } special_ids[] = {
    {"%tid", BC_SR_TID}, {"%ntid", BC_SR_NTID}, {"%laneid", BC_SR_LANEID},
    {"%warpid", BC_SR_WARPID}, {"%nwarpid", BC_SR_NWARPID}, {"%ctaid", BC_SR_CTAID},
    {"%nctaid", BC_SR_NCTAID}, {"%smid", BC_SR_SMID}, {"%nsmid", BC_SR_NSMID},
    {"%gridid", BC_SR_GRIDID}, {"%lanemask_eq", BC_SR_LANEMASK_EQ},
    {"%lanemask_le", BC_SR_LANEMASK_LE}, {"%lanemask_lt", BC_SR_LANEMASK_LT},
    {"%lanemask_ge", BC_SR_LANEMASK_GE}, {"%lanemask_gt", BC_SR_LANEMASK_GT},
    {"%clock", BC_SR_CLOCK}, {"%clock_hi", BC_SR_CLOCK_HI}, {"%clock64", BC_SR_CLOCK64},
    {"%globaltimer", BC_SR_GLOBALTIMER}, {"%globaltimer_lo", BC_SR_GLOBALTIMER_LO},
    {"%globaltimer_hi", BC_SR_GLOBALTIMER_HI}, {"%dynamic_smem_size", BC_SR_DYNAMIC_SMEM},
    {"%total_smem_size", BC_SR_TOTAL_SMEM}, {"%aggr_smem_size", BC_SR_AGGR_SMEM},
    {"%clusterid", BC_SR_CLUSTERID}, {"%nclusterid", BC_SR_NCLUSTERID},
    {"%cluster_ctaid", BC_SR_CLUSTER_CTAID}, {"%cluster_nctaid", BC_SR_CLUSTER_NCTAID},
    {"%cluster_ctarank", BC_SR_CLUSTER_CTARANK}, {"%cluster_nctarank", BC_SR_CLUSTER_NCTARANK},
    {"%is_explicit_cluster", BC_SR_IS_EXPLICIT_CLUSTER},
};

static uint32_t lower_special(lowerer *L, const ptx_operand *o)
{
    int id = -1;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(special_ids); i++)
        if (strcmp(special_ids[i].name, o->name) == 0)
            id = special_ids[i].id;
    int comp = 0;
    if (id < 0) {
        if (strncmp(o->name, "%envreg", 7) == 0) {
            id = BC_SR_ENVREG;
            comp = atoi(o->name + 7);
        } else if (strncmp(o->name, "%pm", 3) == 0) {
            id = BC_SR_PM;
        } else {
            id = BC_SR_ZERO;
        }
    } else if (o->component) {
        comp = o->component == 'x' ? 0 : o->component == 'y' ? 1 : o->component == 'z' ? 2 : 3;
    }
    uint32_t t = lower_temp(L);
    bc_op *op = lower_emit(L, BC_S2R);
    op->guard = BC_NONE;
    op->d = t;
    op->mode = (uint16_t)id;
    op->n = (uint16_t)comp;
    return t;
}

/* The address of a symbol as a value: a constant for module variables, a
 * LOCALADDR for frame variables. */
static uint32_t lower_symbol_value(lowerer *L, const ptx_operand *o, int *space_out)
{
    if (o->var && !o->var->is_entry_param) {
        const ptx_var *v = o->var;
        if (v->space == PTX_SPACE_LOCAL || v->space == PTX_SPACE_PARAM) {
            uint64_t off = v->is_func_param ? 0 : 0;
            int idx = -1;
            if (v->is_func_param) {
                for (int i = 0; i < L->fn->nparams; i++)
                    if (strcmp(L->fn->params[i].name, v->name) == 0)
                        off = L->fn->params[i].offset, idx = i;
                for (int i = 0; i < L->fn->nrets; i++)
                    if (strcmp(L->fn->rets[i].name, v->name) == 0)
                        off = L->fn->rets[i].offset, idx = i;
                (void)idx;
            } else {
                off = L->local_off[v->index];
            }
            uint32_t t = lower_temp(L);
            bc_op *op = lower_emit(L, BC_LOCALADDR);
            op->guard = BC_NONE;
            op->d = t;
            op->imm = (int64_t)(off + (uint64_t)o->imm);
            if (space_out)
                *space_out = v->space == PTX_SPACE_PARAM ? BC_SPACE_PARAM_FUNC : BC_SPACE_LOCAL;
            return t;
        }
        if (v->space == PTX_SPACE_SHARED) {
            if (space_out) *space_out = BC_SPACE_SHARED;
            return lower_const(L, L->local_off[v->index] + (uint64_t)o->imm);
        }
    }
    if (o->var && o->var->is_entry_param) {
        for (int i = 0; i < L->fn->nparams; i++)
            if (strcmp(L->fn->params[i].name, o->var->name) == 0) {
                if (space_out) *space_out = BC_SPACE_PARAM_KERNEL;
                return lower_const(L, L->fn->params[i].offset + (uint64_t)o->imm);
            }
    }
    const bc_symbol *s = lower_find_symbol(L, o->name);
    if (s) {
        if (space_out) *space_out = s->space;
        uint64_t addr = s->address;
        if (s->space == BC_SPACE_SHARED && L->fn->shared_addr && L->fn->shared_addr[s - L->m->symbols] != UINT64_MAX)
            addr = L->fn->shared_addr[s - L->m->symbols];
        return lower_const(L, addr + (uint64_t)o->imm);
    }
    bc_function *f = bc_module_find(L->m, o->name);
    if (f) {
        if (space_out) *space_out = BC_SPACE_GENERIC;
        return lower_const(L, 0x0005000000000000ull + (uint64_t)f->index);
    }
    lower_error(L, o->pos, "undeclared symbol '%s'", o->name);
    return BC_NONE;
}

/* A vector of one element, "{ %r1 }", stands for the element: ptxas takes it
 * where a scalar goes, and Triton writes the values of its ld/st inline
 * assembly that way. */
static const ptx_operand *unwrap_single(const ptx_operand *o)
{
    while (o->kind == PTX_OP_VECTOR && o->nelems == 1 && !o->negate)
        o = &o->elems[0];
    return o;
}

uint32_t lower_src(lowerer *L, const ptx_operand *o, ptx_type ty)
{
    o = unwrap_single(o);
    switch (o->kind) {
    case PTX_OP_REG:
        if (o->var->type == PTX_T_PRED) {
            lower_error(L, o->pos, "predicate register '%s' used where a %s value is expected",
                        o->var->name, ptx_type_name(ty));
            return BC_NONE;
        }
        if (o->negate) {
            lower_error(L, o->pos, "'!' applies only to predicates");
            return BC_NONE;
        }
        return L->reg_slot[o->var->index];
    case PTX_OP_IMM_INT:
    case PTX_OP_IMM_FLOAT:
        return lower_const(L, imm_bits(L, o, ty));
    case PTX_OP_SPECIAL:
        return lower_special(L, o);
    case PTX_OP_SYMBOL:
        return lower_symbol_value(L, o, NULL);
    case PTX_OP_SINK:
        lower_error(L, o->pos, "'_' cannot be used as a source operand");
        return BC_NONE;
    default:
        lower_error(L, o->pos, "expected a register or immediate operand");
        return BC_NONE;
    }
}

uint32_t lower_dst(lowerer *L, const ptx_operand *o)
{
    o = unwrap_single(o);
    if (o->kind == PTX_OP_SINK)
        return lower_temp(L);
    if (o->kind != PTX_OP_REG) {
        lower_error(L, o->pos, "the destination must be a register");
        return BC_NONE;
    }
    if (o->var->type == PTX_T_PRED) {
        lower_error(L, o->pos, "predicate register '%s' used where a value register is expected", o->var->name);
        return BC_NONE;
    }
    return L->reg_slot[o->var->index];
}

uint32_t lower_pred(lowerer *L, const ptx_operand *o)
{
    if (o->kind != PTX_OP_REG || o->var->type != PTX_T_PRED) {
        lower_error(L, o->pos, "expected a predicate register");
        return BC_NONE;
    }
    return L->reg_slot[o->var->index];
}

uint32_t lower_pred_dst(lowerer *L, const ptx_operand *o)
{
    if (o->kind == PTX_OP_SINK)
        return L->fn->npreds++;
    return lower_pred(L, o);
}

int lower_address(lowerer *L, const ptx_operand *o, int *space, uint32_t *slot, int64_t *imm)
{
    if (o->kind != PTX_OP_ADDRESS) {
        lower_error(L, o->pos, "expected an address operand [...]");
        return 0;
    }
    *imm = o->imm;
    if (!o->base) {
        *slot = lower_const(L, 0);
        return 1;
    }
    if (o->base->kind == PTX_OP_REG) {
        if (o->base->var->type == PTX_T_PRED) {
            lower_error(L, o->pos, "a predicate cannot be an address");
            return 0;
        }
        *slot = L->reg_slot[o->base->var->index];
        return 1;
    }
    if (o->base->kind == PTX_OP_SYMBOL) {
        int sp = -1;
        uint32_t s = lower_symbol_value(L, o->base, &sp);
        if (s == BC_NONE)
            return 0;
        if (sp >= 0 && *space == BC_SPACE_GENERIC && sp != BC_SPACE_GENERIC) {
            /* [var] in a generic access: convert the space address */
            uint32_t t = lower_temp(L);
            bc_op *op = lower_emit(L, BC_CVTA);
            op->guard = BC_NONE;
            op->d = t;
            op->a = s;
            op->mode = (uint16_t)sp;
            op->mode2 = 1;
            s = t;
        } else if (sp >= 0 && sp == BC_SPACE_PARAM_FUNC &&
                   (*space == BC_SPACE_PARAM_KERNEL || *space == BC_SPACE_LOCAL)) {
            *space = BC_SPACE_LOCAL;
        } else if (sp >= 0 && sp != *space && !(sp == BC_SPACE_SHARED && *space == BC_SPACE_SHARED_CLUSTER)) {
            if (!(sp == BC_SPACE_LOCAL && *space == BC_SPACE_LOCAL))
                lower_error(L, o->base->pos, "'%s' is not in the state space of this instruction", o->base->name);
        }
        *slot = s;
        return 1;
    }
    lower_error(L, o->pos, "malformed address operand");
    return 0;
}

uint32_t lower_address_flags(const ptx_operand *o)
{
    if (o->kind == PTX_OP_ADDRESS && o->base && o->base->kind == PTX_OP_REG && o->base->var &&
        ptx_type_size(o->base->var->type) == 4)
        return BC_F_ADDR32;
    return 0;
}

/* ---- module layout ----------------------------------------------------- */

bc_function *bc_module_find(const bc_module *m, const char *name)
{
    uintptr_t k = (uintptr_t)util_map_get(&m->function_index, name, strlen(name));
    return k ? m->functions[k - 1] : NULL;
}

static int builtin_of(const char *name)
{
    if (!strcmp(name, "vprintf")) return BC_BUILTIN_VPRINTF + 1;
    if (!strcmp(name, "__assertfail")) return BC_BUILTIN_ASSERTFAIL + 1;
    if (!strcmp(name, "malloc")) return BC_BUILTIN_MALLOC + 1;
    if (!strcmp(name, "free")) return BC_BUILTIN_FREE + 1;
    return 0;
}

/* The device runtime function an .extern .func name stands for (CDP2's
 * __cudaCDP2 prefix, CDP1's plain name, a _ptsz suffix), or BC_DEVRT_NONE. */
int bc_devrt_of(const char *name)
{
    static const struct { const char *name; int id; } table[] = {
        {"GetParameterBuffer", BC_DEVRT_GET_PARAMETER_BUFFER},
        {"GetParameterBufferV2", BC_DEVRT_GET_PARAMETER_BUFFER_V2},
        {"LaunchDevice", BC_DEVRT_LAUNCH_DEVICE},
        {"LaunchDeviceV2", BC_DEVRT_LAUNCH_DEVICE_V2},
        {"GetLastError", BC_DEVRT_GET_LAST_ERROR},
        {"PeekAtLastError", BC_DEVRT_PEEK_AT_LAST_ERROR},
        {"GetDevice", BC_DEVRT_GET_DEVICE},
        {"GetDeviceCount", BC_DEVRT_GET_DEVICE_COUNT},
        {"DeviceGetAttribute", BC_DEVRT_DEVICE_GET_ATTRIBUTE},
        {"DeviceGetLimit", BC_DEVRT_DEVICE_GET_LIMIT},
        {"DeviceGetCacheConfig", BC_DEVRT_DEVICE_GET_CACHE_CONFIG},
        {"RuntimeGetVersion", BC_DEVRT_RUNTIME_GET_VERSION},
        {"StreamCreateWithFlags", BC_DEVRT_STREAM_CREATE_WITH_FLAGS},
        {"StreamDestroy", BC_DEVRT_STREAM_DESTROY},
        {"StreamWaitEvent", BC_DEVRT_STREAM_WAIT_EVENT},
        {"EventCreateWithFlags", BC_DEVRT_EVENT_CREATE_WITH_FLAGS},
        {"EventRecord", BC_DEVRT_EVENT_RECORD},
        {"EventRecordWithFlags", BC_DEVRT_EVENT_RECORD_WITH_FLAGS},
        {"EventDestroy", BC_DEVRT_EVENT_DESTROY},
        {"Malloc", BC_DEVRT_MALLOC},
        {"Free", BC_DEVRT_FREE},
        {"DeviceSynchronize", BC_DEVRT_DEVICE_SYNCHRONIZE},
        {"DeviceGetSharedMemConfig", BC_DEVRT_UNSUPPORTED},
        {"GetErrorString", BC_DEVRT_GET_ERROR_STRING},
        {"GetErrorName", BC_DEVRT_GET_ERROR_NAME},
        {"FuncGetAttributes", BC_DEVRT_FUNC_GET_ATTRIBUTES},
        {"MemcpyAsync", BC_DEVRT_MEMCPY_ASYNC},
        {"Memcpy2DAsync", BC_DEVRT_MEMCPY_2D_ASYNC},
        {"Memcpy3DAsync", BC_DEVRT_MEMCPY_3D_ASYNC},
        {"MemsetAsync", BC_DEVRT_MEMSET_ASYNC},
        {"Memset2DAsync", BC_DEVRT_MEMSET_2D_ASYNC},
        {"Memset3DAsync", BC_DEVRT_MEMSET_3D_ASYNC},
        {"OccupancyMaxActiveBlocksPerMultiprocessor", BC_DEVRT_OCCUPANCY},
        {"OccupancyMaxActiveBlocksPerMultiprocessorWithFlags", BC_DEVRT_OCCUPANCY_WITH_FLAGS},
        {"GraphLaunch", BC_DEVRT_UNSUPPORTED},
        {"GraphSetConditional", BC_DEVRT_GRAPH_SET_CONDITIONAL},
    };
    if (!strcmp(name, "__cudaDeviceSynchronizeDeprecationAvoidance"))
        return BC_DEVRT_DEVICE_SYNCHRONIZE;
    const char *rest;
    if (!strncmp(name, "__cudaCDP2", 10))
        rest = name + 10;
    else if (!strncmp(name, "cuda", 4))
        rest = name + 4;
    else
        return BC_DEVRT_NONE;
    size_t n = strlen(rest);
    if (n > 5 && !strcmp(rest + n - 5, "_ptsz"))
        n -= 5;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strlen(table[i].name) == n && !strncmp(table[i].name, rest, n))
            return table[i].id;
    return BC_DEVRT_NONE;
}

static void layout_params(bc_param *out, ptx_var **vars, int n, uint64_t *offset, int entry)
{
    for (int i = 0; i < n; i++) {
        ptx_var *v = vars[i];
        uint64_t align = v->align ? v->align : ptx_type_size(v->type);
        if (!align)
            align = 1;
        if (!entry && align < 4)
            align = 4;
        *offset = align_up(*offset, align);
        out[i].name = v->name;
        out[i].type = v->type;
        out[i].size = v->size;
        out[i].align = align;
        out[i].offset = *offset;
        out[i].is_array = v->is_array;
        *offset += v->size;
    }
}

static int layout_shared_per_kernel(bc_module *m);

/* Limits of the CUDA platform that a module's declarations are held to
 * when it is loaded (bytes). */
#define BC_LIMIT_CONST 65536ull          /* constant bank 0 of every architecture */
#define BC_LIMIT_GLOBALS (1ull << 30)    /* kemu's own limit on a module's .global variables */
#define BC_LIMIT_PARAMS 32764ull         /* kernel parameters (CUDA 12.1 and later) */
#define BC_LIMIT_LOCAL (512ull * 1024)   /* local memory per thread */
#define BC_LIMIT_SHARED 232448ull        /* the most shared memory per block of any GPU (sm_90, 227 KiB) */

/* Frees m and fails the load with msg at pos of its PTX (with the source
 * line and a caret). Returns KEMU_ERR_PARSE. */
static kemu_status layout_error(bc_module *m, ptx_pos pos, kemu_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static kemu_status layout_error(bc_module *m, ptx_pos pos, kemu_error *err, const char *fmt, ...)
{
    const ptx_module *ptx = m->ptx;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ptx_diag d;
    ptx_diag_init(&d, ptx->filename, ptx->text, ptx->textlen);
    ptx_diag_error(&d, pos.line, pos.col, msg);
    util_error(err, KEMU_ERR_PARSE, "%s", ptx_diag_finish(&d));
    if (err) {
        snprintf(err->file, sizeof err->file, "%s", ptx->filename);
        err->line = pos.line;
        err->column = pos.col;
    }
    ptx_diag_free(&d);
    bc_module_free(m);
    return KEMU_ERR_PARSE;
}

kemu_status bc_module_layout(ptx_module *ptx, bc_native_query is_native, void *native_ctx, bc_module **out,
                             kemu_error *err)
{
    bc_module *m = calloc(1, sizeof *m);
    if (!m)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    m->ptx = ptx;
    m->shared_align = 16;
    if (sscanf(ptx->target, "sm_%d", &m->arch_sm) != 1)
        m->arch_sm = 0;
    /* functions (definitions win over declarations) */
    m->functions = calloc((size_t)(ptx->nfunctions ? ptx->nfunctions : 1), sizeof *m->functions);
    m->symbols = calloc((size_t)(ptx->nglobals + 1), sizeof *m->symbols);
    if (!m->functions || !m->symbols) {
        bc_module_free(m);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int i = 0; i < ptx->nfunctions; i++) {
        ptx_function *pf = ptx->functions[i];
        bc_function *existing = bc_module_find(m, pf->name);
        if (existing) {
            if (pf->has_body && existing->ptx->has_body) {
                return layout_error(m, pf->pos, err, "function '%s' is defined twice", pf->name);
            }
            if (pf->has_body)
                existing->ptx = pf;
            continue;
        }
        bc_function *f = calloc(1, sizeof *f);
        if (!f) {
            bc_module_free(m);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        }
        f->name = pf->name;
        f->ptx = pf;
        f->index = m->nfunctions;
        m->functions[m->nfunctions++] = f;
        int failed = 0;
        util_map_put(&m->function_index, f->name, strlen(f->name), (void *)(uintptr_t)m->nfunctions, &failed);
        if (failed) {
            bc_module_free(m);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    for (int i = 0; i < m->nfunctions; i++) {
        bc_function *f = m->functions[i];
        const ptx_function *pf = f->ptx;
        f->is_entry = pf->is_entry;
        f->is_extern = !pf->has_body;
        f->builtin = f->is_extern ? builtin_of(pf->name) : 0;
        if (f->is_extern && !f->builtin && (f->devrt = bc_devrt_of(pf->name)))
            f->builtin = BC_BUILTIN_DEVRT + 1;
        if (f->is_extern && is_native && is_native(native_ctx, pf->name))
            f->builtin = BC_BUILTIN_NATIVE + 1; /* a bound host function wins over the built-in one */
        memcpy(f->maxntid, pf->maxntid, sizeof f->maxntid);
        memcpy(f->reqntid, pf->reqntid, sizeof f->reqntid);
        memcpy(f->reqnctapercluster, pf->reqnctapercluster, sizeof f->reqnctapercluster);
        f->minnctapersm = pf->minnctapersm;
        f->maxnreg = pf->maxnreg;
        f->maxclusterrank = pf->maxclusterrank;
        f->explicitcluster = pf->explicitcluster;
        f->nparams = pf->nparams;
        f->nrets = pf->nrets;
        f->params = calloc((size_t)pf->nparams + 1, sizeof *f->params);
        f->rets = calloc((size_t)pf->nrets + 1, sizeof *f->rets);
        if (!f->params || !f->rets) {
            bc_module_free(m);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        }
        uint64_t off = 0;
        layout_params(f->params, pf->params, pf->nparams, &off, pf->is_entry);
        if (pf->is_entry) {
            f->param_size = off;
        } else {
            layout_params(f->rets, pf->rets, pf->nrets, &off, 0);
            f->local_size = off; /* params and return values open the frame */
        }
    }
    /* module variables */
    for (int i = 0; i < ptx->nglobals; i++) {
        ptx_var *v = ptx->globals[i];
        bc_symbol *s = &m->symbols[m->nsymbols++];
        s->name = v->name;
        int failed = 0;
        util_map_put(&m->symbol_index, v->name, strlen(v->name), (void *)(uintptr_t)m->nsymbols, &failed);
        if (failed) {
            bc_module_free(m);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        }
        s->var = v;
        s->size = v->size;
        uint64_t align = v->align ? v->align : 1;
        switch (v->space) {
        case PTX_SPACE_SHARED:
            if (v->is_extern) {
                m->has_dynamic_shared = 1;
                if (align > m->shared_align)
                    m->shared_align = align;
                s->space = BC_SPACE_SHARED;
                s->address = UINT64_MAX; /* fixed below: after static shared */
            } else {
                m->shared_static_size = align_up(m->shared_static_size, align);
                s->space = BC_SPACE_SHARED;
                s->address = m->shared_static_size;
                m->shared_static_size += v->size;
            }
            break;
        case PTX_SPACE_CONST:
            m->const_size = align_up(m->const_size, align);
            s->space = BC_SPACE_CONST;
            s->address = m->const_size;
            m->const_size += v->size;
            break;
        case PTX_SPACE_LOCAL:
            s->space = BC_SPACE_LOCAL;
            s->address = 0; /* module-scope .local: laid out after frames (rare) */
            break;
        default:
            m->global_size = align_up(m->global_size, align < 16 ? 16 : align);
            s->space = BC_SPACE_GLOBAL;
            s->address = m->global_size; /* offset; rebased in bc_module_lower */
            m->global_size += v->size ? v->size : 1;
            break;
        }
    }
    /* function-scope .shared variables are module-wide too */
    for (int i = 0; i < m->nfunctions; i++) {
        const ptx_function *pf = m->functions[i]->ptx;
        for (int k = 0; k < pf->nlocals; k++) {
            ptx_var *v = pf->locals[k];
            if (v->space != PTX_SPACE_SHARED)
                continue;
            uint64_t align = v->align ? v->align : 1;
            m->shared_static_size = align_up(m->shared_static_size, align);
            m->shared_static_size += v->size;
        }
    }
    uint64_t dyn_base = align_up(m->shared_static_size, m->shared_align);
    for (int i = 0; i < m->nsymbols; i++)
        if (m->symbols[i].space == BC_SPACE_SHARED && m->symbols[i].address == UINT64_MAX)
            m->symbols[i].address = dyn_base;
    /* limits of the CUDA platform, checked before anything is allocated,
     * reported at the declaration that goes past them */
    for (int i = 0; i < m->nsymbols; i++) {
        const bc_symbol *sy = &m->symbols[i];
        uint64_t end = sy->address + (sy->size ? sy->size : 1);
        if (sy->space == BC_SPACE_CONST && end > BC_LIMIT_CONST)
            return layout_error(m, sy->var->pos, err,
                                      "'%s' ends at byte %llu of constant memory, past the CUDA limit of %llu bytes "
                                      "(64 KiB)",
                                      sy->name, (unsigned long long)end, (unsigned long long)BC_LIMIT_CONST);
        if (sy->space == BC_SPACE_GLOBAL && end > BC_LIMIT_GLOBALS)
            return layout_error(m, sy->var->pos, err,
                                      "'%s' ends at byte %llu of the module's .global variables, past kemu's limit of "
                                      "%llu bytes (1 GiB); allocate large buffers at run time instead",
                                      sy->name, (unsigned long long)end, (unsigned long long)BC_LIMIT_GLOBALS);
        if (sy->space == BC_SPACE_SHARED && sy->size > BC_LIMIT_SHARED)
            return layout_error(m, sy->var->pos, err,
                                      "'%s' takes %llu bytes of shared memory, more than any GPU has per block "
                                      "(%llu bytes, 227 KiB)",
                                      sy->name, (unsigned long long)sy->size, (unsigned long long)BC_LIMIT_SHARED);
    }
    for (int i = 0; i < m->nfunctions; i++) {
        const bc_function *f = m->functions[i];
        const ptx_function *pf = f->ptx;
        if (f->is_entry)
            for (int k = 0; k < f->nparams; k++)
                if (f->params[k].offset + f->params[k].size > BC_LIMIT_PARAMS)
                    return layout_error(m, pf->params[k]->pos, err,
                                              "parameter '%s' of kernel '%s' ends at byte %llu, past the CUDA "
                                              "limit of %llu bytes of kernel parameters",
                                              f->params[k].name, f->name,
                                              (unsigned long long)(f->params[k].offset + f->params[k].size),
                                              (unsigned long long)BC_LIMIT_PARAMS);
        uint64_t local = 0, shared = 0;
        for (int k = 0; k < pf->nlocals; k++) {
            const ptx_var *v = pf->locals[k];
            if (v->space == PTX_SPACE_LOCAL) {
                local += v->size;
                if (local > BC_LIMIT_LOCAL)
                    return layout_error(m, v->pos, err,
                                              "'%s' brings the local memory of '%s' to %llu bytes per thread, past "
                                              "the CUDA limit of %llu bytes (512 KiB)",
                                              v->name, f->name, (unsigned long long)local,
                                              (unsigned long long)BC_LIMIT_LOCAL);
            } else if (v->space == PTX_SPACE_SHARED) {
                shared += v->size;
                if (shared > BC_LIMIT_SHARED)
                    return layout_error(m, v->pos, err,
                                              "'%s' brings the shared memory declared in '%s' to %llu bytes, more "
                                              "than any GPU has per block (%llu bytes, 227 KiB)",
                                              v->name, f->name, (unsigned long long)shared,
                                              (unsigned long long)BC_LIMIT_SHARED);
            }
        }
    }
    if (layout_shared_per_kernel(m)) {
        bc_module_free(m);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *out = m;
    return KEMU_OK;
}

/* Marks in `used` the module symbols a function's body names. */
static void note_refs(const bc_module *m, const util_map *names, const ptx_operand *o, unsigned char *used)
{
    if (o->kind == PTX_OP_VECTOR) {
        for (int i = 0; i < o->nelems; i++)
            note_refs(m, names, &o->elems[i], used);
        return;
    }
    if (o->kind == PTX_OP_ADDRESS && o->base)
        o = o->base;
    if (o->kind != PTX_OP_SYMBOL || o->var)
        return;
    uintptr_t k = (uintptr_t)util_map_get(names, o->name, strlen(o->name));
    if (k)
        used[k - 1] = 1;
}

/* Shared memory is laid out per kernel: variables that device functions
 * use (their code is shared by every kernel) come first at fixed
 * addresses, then each kernel's own variables, so a kernel's static shared
 * memory holds only what it uses. If a device function uses the dynamic
 * (extern) shared array, every kernel keeps the module-wide layout.
 * Returns -1 when out of memory. */
static int layout_shared_per_kernel(bc_module *m)
{
    int ns = m->nsymbols, rc = -1;
    util_map names = {0};
    unsigned char *used = calloc((size_t)m->nfunctions * (size_t)(ns ? ns : 1), 1);
    unsigned char *common = calloc((size_t)(ns ? ns : 1), 1);
    if (!used || !common)
        goto out;
    for (int i = 0; i < ns; i++) {
        int failed = 0;
        if (m->symbols[i].space == BC_SPACE_SHARED)
            util_map_put(&names, m->symbols[i].name, strlen(m->symbols[i].name), (void *)(uintptr_t)(i + 1), &failed);
        if (failed)
            goto out;
    }
    for (int f = 0; f < m->nfunctions; f++) {
        const ptx_function *pf = m->functions[f]->ptx;
        unsigned char *u = used + (size_t)f * (size_t)ns;
        for (int k = 0; k < pf->nbody; k++) {
            const ptx_insn *in = &pf->body[k].insn;
            if (pf->body[k].kind != PTX_STMT_INSN)
                continue;
            for (int o = 0; o < in->nops; o++)
                note_refs(m, &names, &in->ops[o], u);
        }
    }
    int dyn_in_func = 0;
    for (int f = 0; f < m->nfunctions; f++) {
        if (m->functions[f]->is_entry || m->functions[f]->is_extern)
            continue;
        for (int i = 0; i < ns; i++)
            if (used[(size_t)f * (size_t)ns + (size_t)i]) {
                common[i] = 1;
                if (m->symbols[i].var->is_extern)
                    dyn_in_func = 1;
            }
    }
    for (int f = 0; f < m->nfunctions; f++) {
        bc_function *fn = m->functions[f];
        fn->shared_static_size = m->shared_static_size;
        if (dyn_in_func)
            continue; /* module-wide layout */
        fn->shared_addr = malloc((size_t)(ns ? ns : 1) * sizeof(uint64_t));
        if (!fn->shared_addr)
            goto out;
    }
    if (dyn_in_func) {
        /* function-local .shared variables follow the module ones */
        uint64_t cursor = 0;
        for (int i = 0; i < ns; i++)
            if (m->symbols[i].space == BC_SPACE_SHARED && !m->symbols[i].var->is_extern &&
                m->symbols[i].address + m->symbols[i].size > cursor)
                cursor = m->symbols[i].address + m->symbols[i].size;
        for (int f = 0; f < m->nfunctions; f++) {
            const ptx_function *pf = m->functions[f]->ptx;
            m->functions[f]->shared_local_base = cursor;
            for (int k = 0; k < pf->nlocals; k++)
                if (pf->locals[k]->space == PTX_SPACE_SHARED)
                    cursor = align_up(cursor, pf->locals[k]->align ? pf->locals[k]->align : 1) + pf->locals[k]->size;
        }
        rc = 0;
        goto out;
    }
    /* the common region: variables of device functions, then their own .shared */
    uint64_t *common_addr = malloc((size_t)(ns ? ns : 1) * sizeof(uint64_t));
    if (!common_addr)
        goto out;
    uint64_t c = 0;
    for (int i = 0; i < ns; i++) {
        common_addr[i] = UINT64_MAX;
        if (!common[i] || m->symbols[i].var->is_extern)
            continue;
        c = align_up(c, m->symbols[i].var->align ? m->symbols[i].var->align : 1);
        common_addr[i] = c;
        c += m->symbols[i].size;
    }
    for (int f = 0; f < m->nfunctions; f++) {
        bc_function *fn = m->functions[f];
        if (fn->is_entry || fn->is_extern)
            continue;
        fn->shared_local_base = c;
        const ptx_function *pf = fn->ptx;
        for (int k = 0; k < pf->nlocals; k++)
            if (pf->locals[k]->space == PTX_SPACE_SHARED)
                c = align_up(c, pf->locals[k]->align ? pf->locals[k]->align : 1) + pf->locals[k]->size;
    }
    for (int f = 0; f < m->nfunctions; f++) {
        bc_function *fn = m->functions[f];
        memcpy(fn->shared_addr, common_addr, (size_t)ns * sizeof(uint64_t));
        if (!fn->is_entry)
            continue;
        uint64_t cur = c;
        const unsigned char *u = used + (size_t)f * (size_t)ns;
        for (int i = 0; i < ns; i++) {
            if (!u[i] || common[i] || m->symbols[i].var->is_extern)
                continue;
            cur = align_up(cur, m->symbols[i].var->align ? m->symbols[i].var->align : 1);
            fn->shared_addr[i] = cur;
            cur += m->symbols[i].size;
        }
        fn->shared_local_base = cur;
        const ptx_function *pf = fn->ptx;
        for (int k = 0; k < pf->nlocals; k++)
            if (pf->locals[k]->space == PTX_SPACE_SHARED)
                cur = align_up(cur, pf->locals[k]->align ? pf->locals[k]->align : 1) + pf->locals[k]->size;
        fn->shared_static_size = cur;
        uint64_t dyn = align_up(cur, m->shared_align);
        for (int i = 0; i < ns; i++)
            if (m->symbols[i].space == BC_SPACE_SHARED && m->symbols[i].var->is_extern)
                fn->shared_addr[i] = dyn;
    }
    free(common_addr);
    rc = 0;
out:
    util_map_free(&names);
    free(used);
    free(common);
    return rc;
}

/* ---- function lowering ------------------------------------------------- */

static int lower_function(lowerer *L, bc_function *f)
{
    const ptx_function *pf = f->ptx;
    L->fn = f;
    L->pf = pf;
    L->reg_slot = calloc((size_t)pf->nregs + 1, sizeof *L->reg_slot);
    L->local_off = calloc((size_t)pf->nlocals + 1, sizeof *L->local_off);
    if (!L->reg_slot || !L->local_off) {
        L->oom = 1;
        return 0;
    }
    f->nregs_declared = (uint32_t)pf->nregs;
    for (int i = 0; i < pf->nregs; i++) {
        ptx_var *v = pf->regs[i];
        if (v->type == PTX_T_PRED) {
            L->reg_slot[i] = f->npreds++;
        } else {
            L->reg_slot[i] = f->nslots;
            f->nslots += (v->type == PTX_T_B128) ? 2 : 1;
            if (v->vec > 1)
                f->nslots += v->vec - 1;
        }
    }
    uint64_t shared_cursor = f->shared_local_base;
    for (int i = 0; i < pf->nlocals; i++) {
        ptx_var *v = pf->locals[i];
        uint64_t align = v->align ? v->align : 1;
        if (v->space == PTX_SPACE_SHARED) {
            shared_cursor = align_up(shared_cursor, align);
            L->local_off[i] = shared_cursor;
            shared_cursor += v->size;
        } else {
            if (v->space == PTX_SPACE_PARAM && align < 4)
                align = 4;
            f->local_size = align_up(f->local_size, align);
            L->local_off[i] = f->local_size;
            f->local_size += v->size;
        }
    }
    f->local_size = align_up(f->local_size, 16);
    /* labels */
    for (int i = 0; i < pf->nbody; i++) {
        const ptx_stmt *s = &pf->body[i];
        if (s->kind == PTX_STMT_INSN && strcmp(s->insn.opcode, ".branchtargets") == 0 && i > 0 &&
            pf->body[i - 1].kind == PTX_STMT_LABEL) {
            int failed = 0;
            util_map_put(&L->tables, pf->body[i - 1].label, strlen(pf->body[i - 1].label),
                         (void *)&s->insn, &failed);
        }
    }
    size_t caplabels = 0;
    for (int i = 0; i < pf->nbody; i++) {
        const ptx_stmt *s = &pf->body[i];
        if (s->kind == PTX_STMT_LABEL) {
            int failed = 0;
            if (util_map_get(&L->labels, s->label, strlen(s->label)))
                lower_error(L, s->pos, "label '%s' is defined twice", s->label);
            util_map_put(&L->labels, s->label, strlen(s->label), (void *)(uintptr_t)(f->ncode + 1), &failed);
            if (failed || util_grow(&f->labels, &caplabels, (size_t)f->nlabels + 1, sizeof *f->labels)) {
                L->oom = 1;
                return 0;
            }
            f->labels[f->nlabels++] = (bc_label){s->label, f->ncode};
            continue;
        }
        const ptx_insn *in = &s->insn;
        if (!strcmp(in->opcode, ".branchtargets"))
            continue;
        /* source record */
        bc_src src = {in->pos.line, in->pos.col, in->loc_file, in->loc_line};
        if (f->nsrcs == 0 || memcmp(&f->srcs[f->nsrcs - 1], &src, sizeof src) != 0) {
            size_t cap = f->capsrcs;
            if (util_grow(&f->srcs, &cap, f->nsrcs + 1, sizeof src)) {
                L->oom = 1;
                return 0;
            }
            f->capsrcs = (uint32_t)cap;
            f->srcs[f->nsrcs++] = src;
        }
        L->cur_src = f->nsrcs - 1;
        L->in = in;
        uint32_t first = f->ncode;
        if (!lower_instruction(L, in))
            continue;
        /* apply the guard to the ops of this instruction that carry one */
        if (in->guard) {
            uint32_t g = lower_pred(L, in->guard);
            for (uint32_t k = first; k < f->ncode; k++) {
                bc_op *op = &f->code[k];
                op->guard = g;
                if (in->guard->negate)
                    op->flags |= BC_F_GUARD_NEG;
            }
        }
        if (L->oom)
            return 0;
    }
    /* falling off the end returns */
    L->cur_src = f->nsrcs ? f->nsrcs - 1 : 0;
    if (!f->nsrcs) {
        size_t cap = f->capsrcs;
        if (util_grow(&f->srcs, &cap, 1, sizeof(bc_src)) == 0) {
            f->capsrcs = (uint32_t)cap;
            f->srcs[0] = (bc_src){pf->pos.line, pf->pos.col, 0, 0};
            f->nsrcs = 1;
        }
    }
    lower_emit(L, f->is_entry ? BC_EXIT : BC_RET);
    /* patch branch targets */
    for (size_t i = 0; i < L->nrefs; i++) {
        lower_label_ref *r = &L->refs[i];
        uintptr_t at = (uintptr_t)util_map_get(&L->labels, r->label, strlen(r->label));
        if (!at) {
            lower_error(L, r->pos, "unknown label '%s'", r->label);
            continue;
        }
        if (r->list_slot >= 0)
            f->lists[r->list_slot] = (uint32_t)(at - 1);
        else
            f->code[r->op].imm = (int64_t)(at - 1);
    }
    L->nrefs = 0;
    if (f->nlabels && f->nlabels < caplabels) {
        bc_label *fit = realloc(f->labels, f->nlabels * sizeof *fit);
        if (fit)
            f->labels = fit;
    }
    util_map_free(&L->labels);
    util_map_free(&L->tables);
    f->reg_slots = L->reg_slot; /* kept: debuggers name registers */
    free(L->local_off);
    L->reg_slot = NULL;
    L->local_off = NULL;
    return 1;
}

kemu_status bc_module_lower(bc_module *m, uint64_t global_base, kemu_error *err)
{
    ptx_module *ptx = m->ptx;
    /* rebase module globals and build the initial images */
    m->const_init = calloc(m->const_size ? m->const_size : 1, 1);
    m->global_init = calloc(m->global_size ? m->global_size : 1, 1);
    if (!m->const_init || !m->global_init)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < m->nsymbols; i++)
        if (m->symbols[i].space == BC_SPACE_GLOBAL)
            m->symbols[i].address += global_base;
    lowerer L;
    memset(&L, 0, sizeof L);
    L.m = m;
    ptx_diag_init(&L.diag, ptx->filename, ptx->text, ptx->textlen);
    for (int i = 0; i < m->nsymbols; i++) {
        bc_symbol *s = &m->symbols[i];
        const ptx_var *v = s->var;
        if (!v->init)
            continue;
        unsigned char *dst = s->space == BC_SPACE_CONST ? m->const_init + s->address
                           : s->space == BC_SPACE_GLOBAL ? m->global_init + (s->address - global_base)
                           : NULL;
        if (!dst)
            continue;
        memcpy(dst, v->init, v->size);
        for (int r = 0; r < v->nrelocs; r++) {
            const ptx_init_reloc *rl = &v->relocs[r];
            uint64_t addr = 0;
            int found = 0;
            for (int k = 0; k < m->nsymbols; k++)
                if (!strcmp(m->symbols[k].name, rl->symbol)) {
                    const bc_symbol *t = &m->symbols[k];
                    addr = t->address;
                    if (rl->generic && t->space == BC_SPACE_SHARED) addr += 0x0001000000000000ull;
                    if (rl->generic && t->space == BC_SPACE_CONST) addr += 0x0003000000000000ull;
                    found = 1;
                }
            if (!found) {
                bc_function *f = bc_module_find(m, rl->symbol);
                if (f) {
                    addr = 0x0005000000000000ull + (uint64_t)f->index;
                    found = 1;
                }
            }
            if (!found) {
                lower_error(&L, rl->pos, "undeclared symbol '%s' in initializer", rl->symbol);
                continue;
            }
            addr += (uint64_t)rl->addend;
            unsigned esz = ptx_type_size(v->type);
            for (unsigned b = 0; b < esz && b < 8; b++)
                dst[rl->at + b] = (unsigned char)(addr >> (8 * b));
        }
    }
    for (int i = 0; i < m->nfunctions && !L.oom; i++) {
        bc_function *f = m->functions[i];
        if (f->is_extern)
            continue;
        lower_function(&L, f);
        for (int k = 0; k < (int)f->ncalls; k++)
            f->uses_calls = 1;
        if (!L.oom && !L.diag.nerrors)
            bc_optimize_function(f);
    }
    kemu_status st = KEMU_OK;
    if (L.oom) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory while lowering");
    } else if (L.diag.nerrors) {
        st = util_error(err, KEMU_ERR_PARSE, "%s", ptx_diag_finish(&L.diag));
        if (err) {
            snprintf(err->file, sizeof err->file, "%s", ptx->filename);
            err->line = L.diag.first_line;
            err->column = L.diag.first_col;
        }
    }
    free(L.reg_slot);
    free(L.local_off);
    free(L.const_index);
    free(L.refs);
    util_map_free(&L.labels);
    util_map_free(&L.tables);
    ptx_diag_free(&L.diag);
    return st;
}

int bc_function_label_pc(const bc_function *fn, const char *label, uint32_t *pc)
{
    for (uint32_t i = 0; fn && i < fn->nlabels; i++)
        if (!strcmp(fn->labels[i].name, label)) {
            *pc = fn->labels[i].pc;
            return 0;
        }
    return -1;
}

void bc_module_free(bc_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nfunctions; i++) {
        bc_function *f = m->functions[i];
        if (!f)
            continue;
        free(f->code);
        free(f->xcode);
        free(f->const_slots);
        free(f->const_values);
        free(f->lists);
        free(f->srcs);
        for (uint32_t k = 0; k < f->ncalls; k++) {
            free(f->calls[k].args);
            free(f->calls[k].rets);
        }
        free(f->calls);
        free(f->params);
        free(f->rets);
        free(f->shared_addr);
        free(f->reg_slots);
        free(f->labels);
        free(f);
    }
    free(m->functions);
    free(m->symbols);
    util_map_free(&m->function_index);
    util_map_free(&m->symbol_index);
    free(m->const_init);
    free(m->global_init);
    free(m);
}
