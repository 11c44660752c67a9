/* Lowering of the warp-wide matrix instructions: wmma.load/store/mma,
 * mma.sync, ldmatrix and stmatrix. Each becomes one BC_MATRIX op that
 * src/vm/matrix.c executes for the whole warp; this file checks shapes,
 * types and operand counts at load time and refuses, with file:line:col,
 * the forms kemu does not implement (sub-byte, fp6/fp4 and block-scaled types,
 * fp8 in wmma (which has none), the sm_70
 * quad-pair mma.m8n8k4.f16, ldmatrix shapes other than m8n8.b16).
 *
 * Encoding of a BC_MATRIX op (matrix.c decodes the same fields):
 *   mode     bits 0-3  sub-op: 1 wmma.load, 2 wmma.store, 3 wmma.mma,
 *                      4 mma.sync, 5 ldmatrix, 6 stmatrix
 *            bits 4-5  matrix of wmma.load/store: 0 a, 1 b, 2 c, 3 d
 *            bit 8     wmma.load/store: memory is column-major;
 *                      wmma.mma: A fragment declared .col
 *            bit 9     wmma.mma: B fragment declared .col
 *            bit 10    ldmatrix/stmatrix .trans
 *            bits 12-14 ldmatrix/stmatrix matrix count (1, 2 or 4)
 *   src_size log2(M) | log2(N) << 4 | log2(K) << 8 (ldmatrix: M = N = 8, K = 1)
 *   type     element type: of memory (wmma.load/store), of A (mma),
 *            .b16 (ldmatrix/stmatrix)
 *   type2    type of B (mma)
 *   mode2    state space BC_SPACE_* (memory ops); rounding BC_RND_* (f64 mma)
 *   a, imm   address [a+imm] (memory ops)
 *   imm      (mma) dtype | ctype << 8 | nd << 16 | na << 24 | nb << 32 | nc << 40
 *   list, n  wmma.load/store: the fragment registers, then the stride slot;
 *            mma: d, a, b, c registers in that order (counts in imm);
 *            ldmatrix/stmatrix: the 1, 2 or 4 registers
 *   flags    BC_F_SATFINITE for .satfinite
 *
 * wgmma.mma_async (sub-op 7) is executed warp by warp (each warp of the
 * warpgroup computes its 16 rows of D, see src/vm/matrix.c):
 *   mode     bits 8-15 WGMMA_* flags: A in registers, transposes, negated
 *            A/B (imm-scale -1), scale-d an immediate (and its value) or
 *            a negated predicate
 *   mode2    the predicate slot of scale-d (when not an immediate)
 *   type     A's element type, type2 B's
 *   imm      dtype | nd << 16 | na << 24
 *   list     the nd D registers, then A (na registers, or 1 descriptor),
 *            then B's descriptor
 * wgmma.fence, wgmma.commit_group and wgmma.wait_group are no-ops: kemu
 * completes each wgmma.mma_async when it is issued. */
#include "bc/lower_internal.h"

#include <stdio.h>
#include <string.h>

#define MATRIX_MAX_REGS 8
#define WGMMA_MAX_D 128

/* The whole instruction name ("wmma.load.a.sync...") for messages. */
static const char *full_name(const ptx_insn *in, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "%s", in->opcode);
    for (int i = 0; i < in->nmods && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s", in->mods[i]);
    return buf;
}

static int refuse(lowerer *L, const char *why)
{
    char name[256];
    lower_error(L, L->in->pos, "unsupported instruction '%s': %s", full_name(L->in, name, sizeof name), why);
    return 0;
}

static int invalid(lowerer *L, const char *why)
{
    char name[256];
    lower_error(L, L->in->pos, "invalid '%s': %s", full_name(L->in, name, sizeof name), why);
    return 0;
}

static int log2_of(unsigned v)
{
    int r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

/* Finds the .mMnNkK (or .mMnN) shape modifier. Returns 0 when absent. */
static int find_shape(const ptx_insn *in, unsigned *m, unsigned *n, unsigned *k)
{
    for (int i = 0; i < in->nmods; i++) {
        unsigned a, b, c;
        char tail;
        if (sscanf(in->mods[i], ".m%un%uk%u%c", &a, &b, &c, &tail) == 3) {
            *m = a, *n = b, *k = c;
            return 1;
        }
        if (sscanf(in->mods[i], ".m%un%u%c", &a, &b, &tail) == 2) {
            *m = a, *n = b, *k = 1;
            return 1;
        }
    }
    return 0;
}

static unsigned element_bytes(ptx_type t)
{
    switch (t) {
    case PTX_T_S8: case PTX_T_U8: case PTX_T_E4M3: case PTX_T_E5M2: return 1;
    case PTX_T_F16: case PTX_T_BF16: case PTX_T_B16: return 2;
    case PTX_T_F64: return 8;
    default: return 4; /* tf32, f32, s32 */
    }
}

/* Elements of type t held by one register (a 32-bit register, or one
 * 64-bit register for f64). */
static unsigned elements_per_register(ptx_type t)
{
    return t == PTX_T_F64 ? 1 : 4 / element_bytes(t);
}

/* Registers of an R x C fragment: R*C elements spread over 32 lanes. */
static unsigned fragment_registers(unsigned rows, unsigned cols, ptx_type t)
{
    return rows * cols / (32 * elements_per_register(t));
}

/* The scalar type of immediates and the size of registers in a fragment. */
static ptx_type register_type(ptx_type t)
{
    switch (t) {
    case PTX_T_F32: return PTX_T_F32;
    case PTX_T_S32: return PTX_T_S32;
    case PTX_T_F64: return PTX_T_F64;
    default: return PTX_T_B32;
    }
}

/* Resolves the registers of a fragment operand ({r0, ...} or a single
 * register) into slots. */
static int fragment_slots(lowerer *L, const ptx_operand *o, unsigned want, int is_dst, ptx_type elem,
                          const char *what, uint32_t *slots)
{
    unsigned n = o->kind == PTX_OP_VECTOR ? (unsigned)o->nelems : 1;
    if (n != want) {
        char msg[160];
        snprintf(msg, sizeof msg, "the %s fragment takes %u register%s, found %u", what, want, want == 1 ? "" : "s", n);
        return invalid(L, msg);
    }
    ptx_type rty = register_type(elem);
    for (unsigned i = 0; i < n; i++) {
        const ptx_operand *e = o->kind == PTX_OP_VECTOR ? &o->elems[i] : o;
        if (e->kind == PTX_OP_REG && e->var && e->var->type != PTX_T_PRED &&
            ptx_type_size(e->var->type) != ptx_type_size(rty)) {
            lower_error(L, e->pos, "register '%s' of the %s fragment is %u bytes; this fragment needs %u-byte registers",
                        e->var->name, what, ptx_type_size(e->var->type), ptx_type_size(rty));
            return 0;
        }
        slots[i] = is_dst ? lower_dst(L, e) : lower_src(L, e, rty);
        if (slots[i] == BC_NONE)
            return 0;
    }
    return 1;
}

static uint16_t encode_shape(unsigned m, unsigned n, unsigned k)
{
    return (uint16_t)(log2_of(m) | log2_of(n) << 4 | log2_of(k) << 8);
}

static int is_int8(ptx_type t) { return t == PTX_T_S8 || t == PTX_T_U8; }
static int is_fp8(ptx_type t) { return t == PTX_T_E4M3 || t == PTX_T_E5M2; }

/* Shapes wmma supports for multiplicand type t. */
static int wmma_shape_ok(ptx_type t, unsigned m, unsigned n, unsigned k)
{
    if (t == PTX_T_F16 || t == PTX_T_BF16 || is_int8(t))
        return k == 16 && ((m == 16 && n == 16) || (m == 32 && n == 8) || (m == 8 && n == 32));
    if (t == PTX_T_TF32)
        return m == 16 && n == 16 && k == 8;
    if (t == PTX_T_F64)
        return m == 8 && n == 8 && k == 4;
    return 0;
}

/* Shapes wmma supports for accumulator type t. */
static int wmma_accumulator_ok(ptx_type t, unsigned m, unsigned n, unsigned k)
{
    if (t == PTX_T_F16 || t == PTX_T_S32)
        return wmma_shape_ok(PTX_T_F16, m, n, k);
    if (t == PTX_T_F32)
        return wmma_shape_ok(PTX_T_F16, m, n, k) || wmma_shape_ok(PTX_T_TF32, m, n, k);
    if (t == PTX_T_F64)
        return wmma_shape_ok(PTX_T_F64, m, n, k);
    return 0;
}

/* Sub-byte, fp6/fp4, block-scaled and (unless fp8_ok) fp8 element types:
 * the matrix forms kemu does not implement. fp8 is implemented in mma.sync
 * (sm_89's .e4m3/.e5m2 without .kind) and wgmma. */
static int has_narrow_type(const ptx_insn *in, int fp8_ok)
{
    static const char *const names[] = {".s4", ".u4", ".b1", ".e2m1", ".e3m2", ".e2m3", ".ue8m0", ".ue4m3",
                                        ".b8x16.b6x16_p32", ".b8x16.b4x16_p64", ".b6x16_p32", ".b4x16_p64",
                                        ".kind::f8f6f4", ".kind::mxf8f6f4", ".kind::mxf4", ".kind::mxf4nvf4"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (mod_has(in, names[i]))
            return 1;
    return !fp8_ok && (mod_has(in, ".e4m3") || mod_has(in, ".e5m2"));
}

static int invalid_combination(lowerer *L)
{
    return invalid(L, "this combination of shape and element types does not exist");
}

static int need_sync_aligned(lowerer *L)
{
    if (!mod_has(L->in, ".sync") || !mod_has(L->in, ".aligned"))
        return invalid(L, "warp- and warpgroup-wide matrix instructions need .sync.aligned");
    return 1;
}

/* The first and second .row/.col modifiers (1 = col), or -1 if absent. */
static void layouts(const ptx_insn *in, int out[2])
{
    int n = 0;
    out[0] = out[1] = -1;
    for (int i = 0; i < in->nmods && n < 2; i++) {
        if (!strcmp(in->mods[i], ".row"))
            out[n++] = 0;
        else if (!strcmp(in->mods[i], ".col"))
            out[n++] = 1;
    }
}

/* wmma.load.{a,b,c} / wmma.store.d */
static int lower_wmma_memory(lowerer *L, int is_store)
{
    const ptx_insn *in = L->in;
    int which;
    if (is_store) {
        if (!mod_has(in, ".d"))
            return invalid(L, "wmma.store stores the .d matrix");
        which = MATRIX_D;
    } else if (mod_has(in, ".a")) {
        which = MATRIX_A;
    } else if (mod_has(in, ".b")) {
        which = MATRIX_B;
    } else if (mod_has(in, ".c")) {
        which = MATRIX_C;
    } else {
        return invalid(L, "wmma.load needs .a, .b or .c");
    }
    unsigned m, n, k;
    if (!find_shape(in, &m, &n, &k))
        return invalid(L, "missing the .mMnNkK shape");
    int lay[2];
    layouts(in, lay);
    if (lay[0] < 0)
        return invalid(L, "missing the .row or .col layout");
    ptx_type t = mod_type(in, 0);
    if (t == PTX_T_NONE || mod_type_count(in) != 1)
        return invalid(L, "needs exactly one element type");
    int ok = which <= MATRIX_B ? wmma_shape_ok(t, m, n, k) : wmma_accumulator_ok(t, m, n, k);
    if (!ok)
        return invalid_combination(L);
    if (L->in->nops < 2 || L->in->nops > 3)
        return invalid(L, "takes a fragment, an address and an optional stride");
    unsigned rows = which == MATRIX_A ? m : which == MATRIX_B ? k : m;
    unsigned cols = which == MATRIX_A ? k : n;
    unsigned nregs = (t == PTX_T_F16 && which <= MATRIX_B) ? 8 : fragment_registers(rows, cols, t);
    const ptx_operand *frag = is_store ? &in->ops[1] : &in->ops[0];
    const ptx_operand *addr = is_store ? &in->ops[0] : &in->ops[1];
    uint32_t slots[MATRIX_MAX_REGS + 1];
    static const char *const names[] = {"A", "B", "C", "D"};
    if (!fragment_slots(L, frag, nregs, !is_store, t, names[which], slots))
        return 0;
    int space = mod_space(in);
    if (space != BC_SPACE_GENERIC && space != BC_SPACE_GLOBAL && space != BC_SPACE_SHARED)
        return invalid(L, "wmma accesses .global, .shared or generic addresses");
    uint32_t base;
    int64_t imm;
    if (!lower_address(L, addr, &space, &base, &imm))
        return 0;
    if (in->nops == 3) {
        slots[nregs] = lower_src(L, &in->ops[2], PTX_T_U32);
        if (slots[nregs] == BC_NONE)
            return 0;
    } else {
        /* default stride: the leading dimension of the matrix */
        slots[nregs] = lower_const(L, lay[0] ? rows : cols);
    }
    bc_op *op = lower_emit(L, BC_MATRIX);
    op->mode = (uint16_t)((is_store ? MATRIX_WMMA_STORE : MATRIX_WMMA_LOAD) | which << 4 |
                          (lay[0] ? MATRIX_COLUMN_MAJOR : 0));
    op->mode2 = (uint16_t)space;
    op->type = (uint8_t)t;
    op->src_size = encode_shape(m, n, k);
    op->a = base;
    op->imm = imm;
    op->flags |= lower_address_flags(addr);
    op->n = (uint16_t)(nregs + 1);
    op->list = lower_list(L, slots, (int)nregs + 1);
    return 1;
}

/* Emits a wmma.mma / mma.sync op once types and counts are known. */
static int emit_mma(lowerer *L, int subop, unsigned m, unsigned n, unsigned k, ptx_type dt, ptx_type at,
                    ptx_type bt, ptx_type ct, unsigned na, unsigned nb, int a_col, int b_col)
{
    const ptx_insn *in = L->in;
    if (in->nops != 4)
        return invalid(L, "takes four operands d, a, b, c");
    unsigned nd = fragment_registers(m, n, dt), nc = fragment_registers(m, n, ct);
    uint32_t slots[4 * MATRIX_MAX_REGS];
    unsigned at_slot = 0;
    if (!fragment_slots(L, &in->ops[0], nd, 1, dt, "D", slots))
        return 0;
    at_slot += nd;
    if (!fragment_slots(L, &in->ops[1], na, 0, at, "A", slots + at_slot))
        return 0;
    at_slot += na;
    if (!fragment_slots(L, &in->ops[2], nb, 0, bt, "B", slots + at_slot))
        return 0;
    at_slot += nb;
    if (!fragment_slots(L, &in->ops[3], nc, 0, ct, "C", slots + at_slot))
        return 0;
    at_slot += nc;
    int rnd = mod_rounding(in);
    if (rnd != BC_RND_NONE && at != PTX_T_F64)
        return invalid(L, "a rounding modifier applies to .f64 only");
    bc_op *op = lower_emit(L, BC_MATRIX);
    op->mode = (uint16_t)(subop | (a_col ? MATRIX_COLUMN_MAJOR : 0) | (b_col ? MATRIX_B_COLUMN_MAJOR : 0));
    op->mode2 = (uint16_t)(rnd == BC_RND_NONE ? BC_RND_RN : rnd);
    op->type = (uint8_t)at;
    op->type2 = (uint8_t)bt;
    op->src_size = encode_shape(m, n, k);
    op->imm = (int64_t)((uint64_t)dt | (uint64_t)ct << 8 | (uint64_t)nd << 16 | (uint64_t)na << 24 |
                        (uint64_t)nb << 32 | (uint64_t)nc << 40);
    if (mod_has(in, ".satfinite"))
        op->flags |= BC_F_SATFINITE;
    op->n = (uint16_t)at_slot;
    op->list = lower_list(L, slots, (int)at_slot);
    return 1;
}

/* Accumulator types allowed for multiplicand type t (d and c alike). */
static int accumulator_ok(ptx_type t, ptx_type acc)
{
    if (t == PTX_T_F16 || is_fp8(t))
        return acc == PTX_T_F16 || acc == PTX_T_F32;
    if (t == PTX_T_BF16 || t == PTX_T_TF32)
        return acc == PTX_T_F32;
    if (is_int8(t))
        return acc == PTX_T_S32;
    if (t == PTX_T_F64)
        return acc == PTX_T_F64;
    return 0;
}

static int lower_wmma_mma(lowerer *L)
{
    const ptx_insn *in = L->in;
    unsigned m, n, k;
    if (!find_shape(in, &m, &n, &k))
        return invalid(L, "missing the .mMnNkK shape");
    int lay[2];
    layouts(in, lay);
    if (lay[0] < 0 || lay[1] < 0)
        return invalid(L, "needs the .row/.col layouts of A and B");
    ptx_type dt, at, bt, ct;
    int ntypes = mod_type_count(in);
    if (ntypes == 2) { /* .dtype.ctype with f16 multiplicands */
        dt = mod_type(in, 0);
        ct = mod_type(in, 1);
        at = bt = PTX_T_F16;
    } else if (ntypes == 4) {
        dt = mod_type(in, 0);
        at = mod_type(in, 1);
        bt = mod_type(in, 2);
        ct = mod_type(in, 3);
    } else {
        return invalid(L, "needs .dtype.ctype or .dtype.atype.btype.ctype");
    }
    int same_kind = at == bt || (is_int8(at) && is_int8(bt));
    if (!same_kind || !wmma_shape_ok(at, m, n, k) || !accumulator_ok(at, dt) || !accumulator_ok(at, ct))
        return invalid_combination(L);
    unsigned na = at == PTX_T_F16 ? 8 : fragment_registers(m, k, at);
    unsigned nb = bt == PTX_T_F16 ? 8 : fragment_registers(k, n, bt);
    return emit_mma(L, MATRIX_WMMA_MMA, m, n, k, dt, at, bt, ct, na, nb, lay[0], lay[1]);
}

/* Shapes mma.sync supports for multiplicand type t. */
static int mma_shape_ok(ptx_type t, unsigned m, unsigned n, unsigned k)
{
    if (t == PTX_T_F16 || t == PTX_T_BF16)
        return m == 16 && n == 8 && (k == 8 || k == 16);
    if (t == PTX_T_TF32)
        return m == 16 && n == 8 && (k == 4 || k == 8);
    if (t == PTX_T_F64)
        return (m == 8 && n == 8 && k == 4) || (m == 16 && n == 8 && (k == 4 || k == 8 || k == 16));
    if (is_int8(t))
        return (m == 8 && n == 8 && k == 16) || (m == 16 && n == 8 && (k == 16 || k == 32));
    if (is_fp8(t)) /* fragments as for 8-bit integers */
        return m == 16 && n == 8 && (k == 16 || k == 32);
    return 0;
}

static int lower_mma_sync(lowerer *L)
{
    const ptx_insn *in = L->in;
    unsigned m, n, k;
    if (!find_shape(in, &m, &n, &k))
        return invalid(L, "missing the .mMnNkK shape");
    if (mod_type_count(in) != 4)
        return invalid(L, "needs .dtype.atype.btype.ctype");
    ptx_type dt = mod_type(in, 0), at = mod_type(in, 1), bt = mod_type(in, 2), ct = mod_type(in, 3);
    if (m == 8 && n == 8 && k == 4 && at == PTX_T_F16)
        return refuse(L, "the sm_70 quad-pair form mma.m8n8k4 with .f16 is not implemented");
    if (mod_has(in, ".sp") || mod_has(in, ".sp::ordered_metadata") || mod_has(in, ".block_scale"))
        return refuse(L, "sparse and block-scaled mma are not implemented");
    int same_kind = at == bt || (is_int8(at) && is_int8(bt)) || (is_fp8(at) && is_fp8(bt));
    if (!same_kind || !mma_shape_ok(at, m, n, k) || !accumulator_ok(at, dt) || !accumulator_ok(at, ct))
        return invalid_combination(L);
    if (at == PTX_T_BF16 || at == PTX_T_TF32) {
        if (dt != PTX_T_F32 || ct != PTX_T_F32)
            return invalid_combination(L);
    }
    int lay[2];
    layouts(in, lay);
    if (lay[0] != 0 || lay[1] != 1)
        return invalid(L, "this shape needs the .row.col layout");
    if (mod_has(in, ".satfinite") && !is_int8(at))
        return invalid(L, ".satfinite applies to integer mma only");
    return emit_mma(L, MATRIX_MMA_SYNC, m, n, k, dt, at, bt, ct, fragment_registers(m, k, at),
                    fragment_registers(k, n, bt), 0, 1);
}

/* ldmatrix / stmatrix .m8n8.{x1,x2,x4}{.trans}{.shared}.b16 */
static int lower_ldst_matrix(lowerer *L, int is_store)
{
    const ptx_insn *in = L->in;
    unsigned m, n, k;
    if (!find_shape(in, &m, &n, &k))
        return invalid(L, "missing the .m8n8 shape");
    ptx_type t = mod_type(in, 0);
    if (m != 8 || n != 8 || k != 1 || t != PTX_T_B16)
        return refuse(L, "only the .m8n8 shape with .b16 elements is implemented");
    unsigned count = mod_has(in, ".x1") ? 1 : mod_has(in, ".x2") ? 2 : mod_has(in, ".x4") ? 4 : 0;
    if (!count)
        return invalid(L, "needs .x1, .x2 or .x4");
    if (in->nops != 2)
        return invalid(L, "takes a register vector and an address");
    int space = mod_space(in);
    if (space != BC_SPACE_GENERIC && space != BC_SPACE_SHARED)
        return invalid(L, "accesses .shared or generic addresses only");
    const ptx_operand *frag = is_store ? &in->ops[1] : &in->ops[0];
    const ptx_operand *addr = is_store ? &in->ops[0] : &in->ops[1];
    uint32_t slots[4];
    if (!fragment_slots(L, frag, count, !is_store, PTX_T_B16, is_store ? "source" : "destination", slots))
        return 0;
    uint32_t base;
    int64_t imm;
    if (!lower_address(L, addr, &space, &base, &imm))
        return 0;
    bc_op *op = lower_emit(L, BC_MATRIX);
    op->mode = (uint16_t)((is_store ? MATRIX_STMATRIX : MATRIX_LDMATRIX) |
                          (mod_has(in, ".trans") ? MATRIX_TRANSPOSE : 0) | count << 12);
    op->mode2 = (uint16_t)space;
    op->type = (uint8_t)t;
    op->src_size = encode_shape(8, 8, 1);
    op->a = base;
    op->imm = imm;
    op->flags |= lower_address_flags(addr);
    op->n = (uint16_t)count;
    op->list = lower_list(L, slots, (int)count);
    return 1;
}

/* An immediate operand's value (imm-scale, imm-trans, scale-d, wait_group's N). */
static int immediate_value(lowerer *L, const ptx_operand *o, const char *what, long long *v)
{
    if (o->kind != PTX_OP_IMM_INT) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s must be an integer constant", what);
        return invalid(L, msg);
    }
    *v = (long long)o->imm;
    return 1;
}

/* N values of wgmma .m64nNkK for multiplicand type t. */
static int wgmma_n_ok(ptx_type t, unsigned n)
{
    if (n < 8 || n > 256 || n % 8)
        return 0;
    if (is_int8(t))
        return n <= 32 || n % 16 == 0;
    return 1;
}

/* wgmma.mma_async.sync.aligned.m64nNkK{.satfinite}.dtype.atype.btype
 *     d, a-desc|{a}, b-desc, scale-d {, imm-scale-a, imm-scale-b {, imm-trans-a}, imm-trans-b} */
static int lower_wgmma(lowerer *L)
{
    const ptx_insn *in = L->in;
    if (mod_has(in, ".fence") || mod_has(in, ".commit_group") || mod_has(in, ".wait_group")) {
        int wait = mod_has(in, ".wait_group");
        if (in->nops != wait) {
            return invalid(L, wait ? "takes one operand, the number of pending groups" : "takes no operands");
        }
        long long v = 0;
        if (wait && !immediate_value(L, &in->ops[0], "the number of pending groups", &v))
            return 0;
        lower_emit(L, BC_NOP);
        return 1;
    }
    if (!mod_has(in, ".mma_async"))
        return invalid(L, "expected wgmma.mma_async, wgmma.fence, wgmma.commit_group or wgmma.wait_group");
    if (mod_has(in, ".sp"))
        return refuse(L, "sparse wgmma (.sp) is not implemented");
    unsigned m, n, k;
    if (!find_shape(in, &m, &n, &k))
        return invalid(L, "missing the .m64nNkK shape");
    if (mod_has(in, ".b1"))
        return refuse(L, "the .b1 (and.popc) form is not implemented");
    if (mod_type_count(in) != 3)
        return invalid(L, "needs .dtype.atype.btype");
    ptx_type dt = mod_type(in, 0), at = mod_type(in, 1), bt = mod_type(in, 2);
    unsigned want_k = (at == PTX_T_F16 || at == PTX_T_BF16) ? 16 : at == PTX_T_TF32 ? 8 : 32;
    int types_ok = (at == PTX_T_F16 && bt == at && (dt == PTX_T_F16 || dt == PTX_T_F32)) ||
                   ((at == PTX_T_BF16 || at == PTX_T_TF32) && bt == at && dt == PTX_T_F32) ||
                   (is_fp8(at) && is_fp8(bt) && (dt == PTX_T_F16 || dt == PTX_T_F32)) ||
                   (is_int8(at) && is_int8(bt) && dt == PTX_T_S32);
    if (!types_ok || m != 64 || k != want_k || !wgmma_n_ok(at, n))
        return invalid_combination(L);
    if (mod_has(in, ".satfinite") && !is_int8(at))
        return invalid(L, ".satfinite applies to integer wgmma only");
    int a_regs = in->nops >= 2 && in->ops[1].kind == PTX_OP_VECTOR;
    int floats = !is_int8(at), transposable = at == PTX_T_F16 || at == PTX_T_BF16;
    int want_ops = 4 + (floats ? 2 : 0) + (transposable ? (a_regs ? 1 : 2) : 0);
    if (in->nops != want_ops) {
        char msg[200];
        snprintf(msg, sizeof msg, "takes %d operands here (d, %s, b-desc, scale-d%s%s), found %d", want_ops,
                 a_regs ? "{a}" : "a-desc", floats ? ", imm-scale-a, imm-scale-b" : "",
                 transposable ? (a_regs ? ", imm-trans-b" : ", imm-trans-a, imm-trans-b") : "", in->nops);
        return invalid(L, msg);
    }
    unsigned nd = dt == PTX_T_F16 ? n / 4 : n / 2, na = a_regs ? 4 : 1;
    uint32_t slots[WGMMA_MAX_D + 8];
    ptx_type dreg = dt == PTX_T_F16 ? PTX_T_B32 : dt;
    if (!fragment_slots(L, &in->ops[0], nd, 1, dreg, "D", slots))
        return 0;
    if (a_regs) {
        if (!fragment_slots(L, &in->ops[1], na, 0, PTX_T_B32, "A", slots + nd))
            return 0;
    } else if ((slots[nd] = lower_src(L, &in->ops[1], PTX_T_U64)) == BC_NONE) {
        return 0;
    }
    if ((slots[nd + na] = lower_src(L, &in->ops[2], PTX_T_U64)) == BC_NONE)
        return 0;
    uint16_t mode = MATRIX_WGMMA | (a_regs ? WGMMA_A_REGISTERS : 0);
    uint16_t mode2 = 0;
    const ptx_operand *sd = &in->ops[3];
    if (sd->kind == PTX_OP_IMM_INT) {
        if (sd->imm != 0 && sd->imm != 1)
            return invalid(L, "scale-d is 0 or 1 (or a predicate)");
        mode |= WGMMA_SCALE_D_IMM | (sd->imm ? WGMMA_SCALE_D_ONE : 0);
    } else {
        uint32_t p = lower_pred(L, sd);
        if (p == BC_NONE)
            return 0;
        if (p > 0xffff)
            return invalid(L, "too many predicates");
        mode2 = (uint16_t)p;
        if (sd->negate)
            mode |= WGMMA_SCALE_D_NOT;
    }
    int next = 4;
    if (floats) {
        for (int i = 0; i < 2; i++) {
            long long v = 0;
            if (!immediate_value(L, &in->ops[next + i], i ? "imm-scale-b" : "imm-scale-a", &v))
                return 0;
            if (v != 1 && v != -1)
                return invalid(L, "imm-scale-a and imm-scale-b are 1 or -1");
            if (v < 0)
                mode |= i ? WGMMA_NEG_B : WGMMA_NEG_A;
        }
        next += 2;
    }
    if (transposable) {
        for (int i = a_regs ? 1 : 0; i < 2; i++) {
            long long v = 0;
            if (!immediate_value(L, &in->ops[next++], i ? "imm-trans-b" : "imm-trans-a", &v))
                return 0;
            if (v != 0 && v != 1)
                return invalid(L, "imm-trans-a and imm-trans-b are 0 or 1");
            if (v)
                mode |= i ? WGMMA_TRANS_B : WGMMA_TRANS_A;
        }
    }
    bc_op *op = lower_emit(L, BC_MATRIX);
    op->mode = mode;
    op->mode2 = mode2;
    op->type = (uint8_t)at;
    op->type2 = (uint8_t)bt;
    op->src_size = (uint16_t)(log2_of(64) | log2_of(k) << 8); /* N need not be a power of two: in imm */
    op->imm = (int64_t)((uint64_t)dt | (uint64_t)nd << 16 | (uint64_t)na << 24 | (uint64_t)n << 32);
    if (mod_has(in, ".satfinite"))
        op->flags |= BC_F_SATFINITE;
    op->n = (uint16_t)(nd + na + 1);
    op->list = lower_list(L, slots, (int)(nd + na + 1));
    return 1;
}

int lower_matrix(lowerer *L)
{
    const ptx_insn *in = L->in;
    if (!need_sync_aligned(L))
        return 0;
    if (!strcmp(in->opcode, "wgmma"))
        return lower_wgmma(L);
    if (has_narrow_type(in, !strcmp(in->opcode, "mma")))
        return refuse(L, "sub-byte, fp6/fp4 and block-scaled matrix element types (and fp8 outside mma.sync and "
                         "wgmma) are not implemented");
    if (!strcmp(in->opcode, "wmma")) {
        if (mod_has(in, ".load"))
            return lower_wmma_memory(L, 0);
        if (mod_has(in, ".store"))
            return lower_wmma_memory(L, 1);
        if (mod_has(in, ".mma"))
            return lower_wmma_mma(L);
        return invalid(L, "expected wmma.load, wmma.store or wmma.mma");
    }
    if (!strcmp(in->opcode, "mma"))
        return lower_mma_sync(L);
    if (!strcmp(in->opcode, "ldmatrix"))
        return lower_ldst_matrix(L, 0);
    return lower_ldst_matrix(L, 1);
}
