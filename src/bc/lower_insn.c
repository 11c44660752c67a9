/* Lowering, part 2: one function per PTX instruction family, turning a
 * parsed instruction (opcode, modifiers, operands) into bytecode ops with
 * resolved slots. Instructions kemu cannot execute yet are refused here,
 * at load time, with file:line:col — never skipped silently. */
#include "bc/lower_internal.h"
#include "vm/hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPS (L->in->ops)
#define NOPS (L->in->nops)

static int want_ops(lowerer *L, int lo, int hi)
{
    if (NOPS < lo || NOPS > hi) {
        if (lo == hi)
            lower_error(L, L->in->pos, "'%s' takes %d operands, found %d", L->in->opcode, lo, NOPS);
        else
            lower_error(L, L->in->pos, "'%s' takes %d to %d operands, found %d", L->in->opcode, lo, hi, NOPS);
        return 0;
    }
    return 1;
}

static int unsupported(lowerer *L)
{
    char full[256];
    size_t n = (size_t)snprintf(full, sizeof full, "%s", L->in->opcode);
    for (int i = 0; i < L->in->nmods && n < sizeof full; i++)
        n += (size_t)snprintf(full + n, sizeof full - n, "%s", L->in->mods[i]);
    lower_error(L, L->in->pos, "unsupported instruction '%s' (not implemented yet)", full);
    return 0;
}

static ptx_type first_type(lowerer *L)
{
    ptx_type t = mod_type(L->in, 0);
    if (t == PTX_T_NONE)
        lower_error(L, L->in->pos, "'%s' needs a type modifier", L->in->opcode);
    return t;
}

static int ok(lowerer *L, uint32_t s) { (void)L; return s != BC_NONE; }

/* d, a[, b[, c]] all of type ty */
static int lower_simple(lowerer *L, bc_opcode code, ptx_type ty, int nsrc)
{
    if (!want_ops(L, 1 + nsrc, 1 + nsrc))
        return 0;
    uint32_t d = lower_dst(L, &OPS[0]);
    uint32_t s[3] = {BC_NONE, BC_NONE, BC_NONE};
    for (int i = 0; i < nsrc; i++) {
        s[i] = lower_src(L, &OPS[1 + i], ty);
        if (!ok(L, s[i]))
            return 0;
    }
    if (!ok(L, d))
        return 0;
    bc_op *op = lower_emit(L, code);
    op->type = (uint8_t)ty;
    op->d = d;
    op->a = s[0];
    op->b = s[1];
    op->c = s[2];
    return 1;
}

static uint32_t float_flags(lowerer *L)
{
    uint32_t f = 0;
    if (mod_has(L->in, ".ftz")) f |= BC_F_FTZ;
    if (mod_has(L->in, ".sat")) f |= BC_F_SAT;
    if (mod_has(L->in, ".NaN")) f |= BC_F_NAN;
    if (mod_has(L->in, ".relu")) f |= BC_F_RELU;
    if (mod_has(L->in, ".satfinite")) f |= BC_F_SATFINITE;
    if (mod_has(L->in, ".xorsign")) f |= BC_F_XORSIGN;
    if (mod_has(L->in, ".abs")) f |= BC_F_ABS;
    return f;
}

/* ---- arithmetic ------------------------------------------------------ */

static int lower_arith(lowerer *L, const char *opc)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE)
        return 0;
    int is_float = ptx_type_is_float(ty);
    int wide = mod_has(L->in, ".wide"), hi = mod_has(L->in, ".hi");
    int rnd = mod_rounding(L->in);
    uint32_t ff = float_flags(L);
    bc_opcode code;
    int nsrc = 2;
    if (!strcmp(opc, "add") || !strcmp(opc, "sub") || !strcmp(opc, "mul")) {
        if (is_float) {
            int fast = ty == PTX_T_F32 && (rnd == BC_RND_NONE || rnd == BC_RND_RN) && !ff;
            if (!strcmp(opc, "add")) code = fast ? BC_ADD_F32 : BC_FADD;
            else if (!strcmp(opc, "sub")) code = BC_FSUB;
            else code = fast ? BC_MUL_F32 : BC_FMUL;
        } else if (!strcmp(opc, "add")) code = BC_ADD;
        else if (!strcmp(opc, "sub")) code = BC_SUB;
        else code = wide ? BC_MUL_WIDE : hi ? BC_MUL_HI : BC_MUL_LO;
        if (!strcmp(opc, "add") && mod_has(L->in, ".cc")) {
            code = BC_ADDC;
        }
        if (!strcmp(opc, "sub") && mod_has(L->in, ".cc"))
            code = BC_SUBC;
    } else if (!strcmp(opc, "mad") || !strcmp(opc, "fma")) {
        nsrc = 3;
        if (is_float) {
            int fast = ty == PTX_T_F32 && rnd == BC_RND_RN && !ff;
            code = fast ? BC_FMA_F32 : BC_FFMA;
        } else if (mod_has(L->in, ".cc")) {
            code = BC_MADC;
        } else {
            code = wide ? BC_MAD_WIDE : hi ? BC_MAD_HI : BC_MAD_LO;
        }
    } else if (!strcmp(opc, "mul24") || !strcmp(opc, "mad24")) {
        code = opc[1] == 'u' ? BC_MUL24 : BC_MAD24;
        nsrc = code == BC_MAD24 ? 3 : 2;
    } else if (!strcmp(opc, "div")) {
        code = is_float ? BC_FDIV : BC_DIV;
    } else if (!strcmp(opc, "rem")) {
        code = BC_REM;
    } else if (!strcmp(opc, "min") || !strcmp(opc, "max")) {
        code = is_float ? (opc[1] == 'i' ? BC_FMIN : BC_FMAX) : (opc[1] == 'i' ? BC_MIN : BC_MAX);
        if (NOPS == 4) nsrc = 3; /* three-input min/max (sm_100) */
    } else if (!strcmp(opc, "abs") || !strcmp(opc, "neg")) {
        code = is_float ? (opc[0] == 'a' ? BC_FABS : BC_FNEG) : (opc[0] == 'a' ? BC_ABS : BC_NEG);
        nsrc = 1;
    } else if (!strcmp(opc, "sad")) {
        code = BC_SAD;
        nsrc = 3;
    } else if (!strcmp(opc, "addc") || !strcmp(opc, "subc") || !strcmp(opc, "madc")) {
        code = opc[0] == 'a' ? BC_ADDC : opc[0] == 's' ? BC_SUBC : BC_MADC;
        nsrc = code == BC_MADC ? 3 : 2;
    } else if (!strcmp(opc, "copysign")) {
        code = BC_COPYSIGN;
    } else {
        return unsupported(L);
    }
    if (!want_ops(L, 1 + nsrc, 1 + nsrc))
        return 0;
    uint32_t d = lower_dst(L, &OPS[0]);
    uint32_t s[3] = {BC_NONE, BC_NONE, BC_NONE};
    for (int i = 0; i < nsrc; i++) {
        ptx_type sty = ty;
        /* mad.wide: c is double width */
        if (i == 2 && (code == BC_MAD_WIDE)) {
            sty = ty == PTX_T_U32 ? PTX_T_U64 : ty == PTX_T_S32 ? PTX_T_S64 :
                  ty == PTX_T_U16 ? PTX_T_U32 : PTX_T_S32;
        }
        s[i] = lower_src(L, &OPS[1 + i], sty);
        if (!ok(L, s[i]))
            return 0;
    }
    if (!ok(L, d))
        return 0;
    bc_op *op = lower_emit(L, code);
    op->type = (uint8_t)ty;
    op->d = d;
    op->a = s[0];
    op->b = s[1];
    op->c = s[2];
    op->flags = ff;
    op->mode = (uint16_t)rnd;
    if (code == BC_MUL24 || code == BC_MAD24)
        op->mode = hi ? 1 : 0;
    if (code == BC_ADDC || code == BC_SUBC || code == BC_MADC) {
        int reads = !strcmp(opc, "addc") || !strcmp(opc, "subc") || !strcmp(opc, "madc");
        int writes = mod_has(L->in, ".cc");
        op->mode = (uint16_t)((reads ? 1 : 0) | (writes ? 2 : 0) | (hi ? 4 : 0));
    }
    if (code == BC_FDIV && rnd == BC_RND_NONE) {
        lower_error(L, L->in->pos, "div.f32/f64 needs .approx, .full or a rounding modifier");
        return 0;
    }
    return 1;
}

static int lower_logic(lowerer *L, const char *opc)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE)
        return 0;
    if (ty == PTX_T_PRED) {
        /* and/or/xor/not on predicates */
        int nsrc = !strcmp(opc, "not") ? 1 : 2;
        if (!want_ops(L, 1 + nsrc, 1 + nsrc))
            return 0;
        /* a source may be an integer literal (nvcc writes xor.pred d, p, -1
         * for a negation): no slot, read as 0, negated when nonzero */
        uint32_t d = lower_pred_dst(L, &OPS[0]), src[2] = {BC_NONE, BC_NONE};
        int neg[2] = {0, 0};
        for (int i = 0; i < nsrc; i++) {
            const ptx_operand *o = &OPS[1 + i];
            if (o->kind == PTX_OP_IMM_INT) {
                neg[i] = (o->imm != 0) != (o->negate != 0);
            } else {
                src[i] = lower_pred(L, o);
                neg[i] = o->negate != 0;
                if (!ok(L, src[i]))
                    return 0;
            }
        }
        if (!ok(L, d))
            return 0;
        bc_op *op = lower_emit(L, BC_PSETP);
        op->d = d;
        op->a = src[0];
        op->b = nsrc == 2 ? src[1] : BC_NONE;
        op->mode = !strcmp(opc, "and") ? 1 : !strcmp(opc, "or") ? 2 : !strcmp(opc, "xor") ? 3 : 4;
        if (neg[0]) op->flags |= 1u << 20;
        if (nsrc == 2 && neg[1]) op->flags |= 1u << 21;
        return 1;
    }
    bc_opcode code = !strcmp(opc, "and") ? BC_AND : !strcmp(opc, "or") ? BC_OR :
                     !strcmp(opc, "xor") ? BC_XOR : !strcmp(opc, "not") ? BC_NOT :
                     !strcmp(opc, "cnot") ? BC_CNOT : BC_NOP;
    return lower_simple(L, code, ty, (code == BC_NOT || code == BC_CNOT) ? 1 : 2);
}

static int lower_shift(lowerer *L, const char *opc)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 3, 3))
        return 0;
    uint32_t d = lower_dst(L, &OPS[0]);
    uint32_t a = lower_src(L, &OPS[1], ty);
    uint32_t b = lower_src(L, &OPS[2], PTX_T_U32);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b))
        return 0;
    bc_op *op = lower_emit(L, !strcmp(opc, "shl") ? BC_SHL : BC_SHR);
    op->type = (uint8_t)ty;
    op->d = d;
    op->a = a;
    op->b = b;
    return 1;
}

static int lower_bitops(lowerer *L, const char *opc)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE)
        return 0;
    if (!strcmp(opc, "popc") || !strcmp(opc, "clz") || !strcmp(opc, "brev") || !strcmp(opc, "bfind")) {
        bc_opcode code = opc[0] == 'p' ? BC_POPC : opc[0] == 'c' ? BC_CLZ : opc[1] == 'r' ? BC_BREV : BC_BFIND;
        if (!lower_simple(L, code, ty, 1))
            return 0;
        if (code == BC_BFIND && mod_has(L->in, ".shiftamt"))
            L->fn->code[L->fn->ncode - 1].mode = 1;
        return 1;
    }
    if (!strcmp(opc, "bfe")) {
        if (!want_ops(L, 4, 4)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty);
        uint32_t b = lower_src(L, &OPS[2], PTX_T_U32), c = lower_src(L, &OPS[3], PTX_T_U32);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c)) return 0;
        bc_op *op = lower_emit(L, BC_BFE);
        op->type = (uint8_t)ty; op->d = d; op->a = a; op->b = b; op->c = c;
        return 1;
    }
    if (!strcmp(opc, "bfi")) {
        if (!want_ops(L, 5, 5)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty), b = lower_src(L, &OPS[2], ty);
        uint32_t c = lower_src(L, &OPS[3], PTX_T_U32), e = lower_src(L, &OPS[4], PTX_T_U32);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c) || !ok(L, e)) return 0;
        bc_op *op = lower_emit(L, BC_BFI);
        op->type = (uint8_t)ty; op->d = d; op->a = a; op->b = b; op->c = c; op->e = e;
        return 1;
    }
    if (!strcmp(opc, "bmsk")) {
        if (!lower_simple(L, BC_BMSK, PTX_T_U32, 2)) return 0;
        L->fn->code[L->fn->ncode - 1].mode = mod_has(L->in, ".wrap") ? 1 : 0;
        return 1;
    }
    if (!strcmp(opc, "fns")) {
        if (!want_ops(L, 4, 4)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], PTX_T_U32);
        uint32_t b = lower_src(L, &OPS[2], PTX_T_U32), c = lower_src(L, &OPS[3], PTX_T_S32);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c)) return 0;
        bc_op *op = lower_emit(L, BC_FNS);
        op->type = PTX_T_U32; op->d = d; op->a = a; op->b = b; op->c = c;
        return 1;
    }
    if (!strcmp(opc, "prmt")) {
        if (!lower_simple(L, BC_PRMT, PTX_T_B32, 3)) return 0;
        static const char *const modes[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
        for (int i = 1; i < 7; i++)
            if (mod_has(L->in, modes[i]))
                L->fn->code[L->fn->ncode - 1].mode = (uint16_t)i;
        return 1;
    }
    if (!strcmp(opc, "lop3")) {
        if (NOPS == 5 && OPS[4].kind == PTX_OP_IMM_INT) {
            uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty);
            uint32_t b = lower_src(L, &OPS[2], ty), c = lower_src(L, &OPS[3], ty);
            if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c)) return 0;
            bc_op *op = lower_emit(L, BC_LOP3);
            op->type = (uint8_t)ty; op->d = d; op->a = a; op->b = b; op->c = c;
            op->imm = OPS[4].imm & 0xff;
            return 1;
        }
        return unsupported(L);
    }
    if (!strcmp(opc, "shf")) {
        if (!want_ops(L, 4, 4)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], PTX_T_B32);
        uint32_t b = lower_src(L, &OPS[2], PTX_T_B32), c = lower_src(L, &OPS[3], PTX_T_U32);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c)) return 0;
        bc_op *op = lower_emit(L, BC_SHF);
        op->type = PTX_T_B32; op->d = d; op->a = a; op->b = b; op->c = c;
        op->mode = (uint16_t)((mod_has(L->in, ".r") ? 1 : 0) | (mod_has(L->in, ".wrap") ? 2 : 0));
        return 1;
    }
    return unsupported(L);
}

/* ---- float special functions ------------------------------------------- */

static int lower_funary(lowerer *L, const char *opc)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE)
        return 0;
    int fn = !strcmp(opc, "rcp") ? BC_FN_RCP : !strcmp(opc, "sqrt") ? BC_FN_SQRT :
             !strcmp(opc, "rsqrt") ? BC_FN_RSQRT : !strcmp(opc, "ex2") ? BC_FN_EX2 :
             !strcmp(opc, "lg2") ? BC_FN_LG2 : !strcmp(opc, "sin") ? BC_FN_SIN :
             !strcmp(opc, "cos") ? BC_FN_COS : BC_FN_TANH;
    if (!lower_simple(L, BC_FUNARY, ty, 1))
        return 0;
    bc_op *op = &L->fn->code[L->fn->ncode - 1];
    op->mode = (uint16_t)fn;
    op->mode2 = (uint16_t)mod_rounding(L->in);
    op->flags = float_flags(L);
    if (op->mode2 == BC_RND_NONE && (fn == BC_FN_RCP || fn == BC_FN_SQRT)) {
        lower_error(L, L->in->pos, "%s.%s needs .approx or a rounding modifier", opc, ptx_type_name(ty) + 1);
        return 0;
    }
    return 1;
}

static int lower_testp(lowerer *L)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 2, 2))
        return 0;
    static const char *const cls[] = {".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"};
    int mode = -1;
    for (int i = 0; i < 6; i++)
        if (mod_has(L->in, cls[i]))
            mode = i;
    if (mode < 0) {
        lower_error(L, L->in->pos, "testp needs a class (.finite, .infinite, .number, .notanumber, .normal, .subnormal)");
        return 0;
    }
    uint32_t d = lower_pred_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty);
    if (!ok(L, d) || !ok(L, a))
        return 0;
    bc_op *op = lower_emit(L, BC_TESTP);
    op->type = (uint8_t)ty;
    op->d = d;
    op->a = a;
    op->mode = (uint16_t)mode;
    return 1;
}

/* ---- compare and select ------------------------------------------------- */

static int cmp_of(const ptx_insn *in)
{
    static const char *const names[] = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs",
                                        ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"};
    for (int i = 0; i < in->nmods; i++)
        for (int k = 0; k < 18; k++)
            if (!strcmp(in->mods[i], names[k]))
                return k;
    return -1;
}

static int bool_of(const ptx_insn *in)
{
    if (mod_has(in, ".and")) return BC_BOOL_AND;
    if (mod_has(in, ".or")) return BC_BOOL_OR;
    if (mod_has(in, ".xor")) return BC_BOOL_XOR;
    return BC_BOOL_NONE;
}

static int lower_setp(lowerer *L, int is_set)
{
    int cmp = cmp_of(L->in);
    ptx_type sty = is_set ? mod_type(L->in, 1) : mod_type(L->in, 0);
    ptx_type dty = is_set ? mod_type(L->in, 0) : PTX_T_PRED;
    if (cmp < 0 || sty == PTX_T_NONE || dty == PTX_T_NONE) {
        lower_error(L, L->in->pos, "%s needs a comparison and %s", is_set ? "set" : "setp",
                    is_set ? "destination and source types" : "a type");
        return 0;
    }
    int bop = bool_of(L->in);
    if (!want_ops(L, bop ? 4 : 3, bop ? 4 : 3))
        return 0;
    uint32_t d, e = BC_NONE;
    if (!is_set && OPS[0].kind == PTX_OP_VECTOR && OPS[0].negate == 2) {
        d = lower_pred_dst(L, &OPS[0].elems[0]);
        e = lower_pred_dst(L, &OPS[0].elems[1]);
    } else {
        d = is_set ? lower_dst(L, &OPS[0]) : lower_pred_dst(L, &OPS[0]);
    }
    uint32_t a = lower_src(L, &OPS[1], sty), b = lower_src(L, &OPS[2], sty), c = BC_NONE;
    if (bop)
        c = lower_pred(L, &OPS[3]);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b) || (bop && !ok(L, c)))
        return 0;
    bc_op *op = lower_emit(L, is_set ? BC_SET : BC_SETP);
    op->type = (uint8_t)sty;
    op->type2 = (uint8_t)dty;
    op->d = d;
    op->e = e;
    op->a = a;
    op->b = b;
    op->c = c;
    op->mode = (uint16_t)cmp;
    op->mode2 = (uint16_t)bop;
    op->flags = float_flags(L);
    if (bop && OPS[3].negate)
        op->flags |= BC_F_NEG_C;
    if (!ptx_type_is_float(sty) && cmp >= BC_CMP_EQU) {
        lower_error(L, L->in->pos, "unordered comparisons apply only to floating-point types");
        return 0;
    }
    return 1;
}

static int lower_selp(lowerer *L, int is_slct)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 4, 4))
        return 0;
    uint32_t d = lower_dst(L, &OPS[0]);
    uint32_t a = lower_src(L, &OPS[1], ty), b = lower_src(L, &OPS[2], ty);
    ptx_type cty = is_slct ? mod_type(L->in, 1) : PTX_T_PRED;
    uint32_t c = is_slct ? lower_src(L, &OPS[3], cty) : lower_pred(L, &OPS[3]);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c))
        return 0;
    bc_op *op = lower_emit(L, is_slct ? BC_SLCT : BC_SELP);
    op->type = (uint8_t)ty;
    op->type2 = (uint8_t)cty;
    op->d = d;
    op->a = a;
    op->b = b;
    op->c = c;
    op->flags = float_flags(L);
    if (!is_slct && OPS[3].negate)
        op->flags |= BC_F_NEG_C;
    return 1;
}

/* ---- moves and conversions --------------------------------------------- */

static int lower_mov(lowerer *L)
{
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 2, 2))
        return 0;
    const ptx_operand *d = &OPS[0], *a = &OPS[1];
    if (ty == PTX_T_PRED) {
        uint32_t pd = lower_pred_dst(L, d);
        if (a->kind == PTX_OP_IMM_INT) {
            bc_op *op = lower_emit(L, BC_PSETP);
            op->d = pd;
            op->mode = a->imm ? 5 : 6; /* set true / set false */
            return ok(L, pd);
        }
        if (a->kind == PTX_OP_SPECIAL) {
            uint32_t t = lower_src(L, a, PTX_T_U32);
            if (!ok(L, pd) || !ok(L, t))
                return 0;
            bc_op *op = lower_emit(L, BC_MOV_REG_TO_PRED);
            op->d = pd;
            op->a = t;
            return 1;
        }
        uint32_t pa = lower_pred(L, a);
        if (!ok(L, pd) || !ok(L, pa))
            return 0;
        bc_op *op = lower_emit(L, BC_MOV_PRED);
        op->d = pd;
        op->a = pa;
        if (a->negate)
            op->flags |= 1u << 20;
        return 1;
    }
    if (a->kind == PTX_OP_VECTOR || d->kind == PTX_OP_VECTOR) {
        const ptx_operand *v = a->kind == PTX_OP_VECTOR ? a : d;
        int n = v->nelems;
        unsigned total = ptx_type_size(ty) * 8;
        if (n < 2 || n > 8 || total % (unsigned)n) {
            lower_error(L, v->pos, "vector operand of mov has an unusable element count");
            return 0;
        }
        unsigned bits = total / (unsigned)n;
        ptx_type ety = bits == 8 ? PTX_T_B8 : bits == 16 ? PTX_T_B16 : bits == 32 ? PTX_T_B32 : PTX_T_B64;
        uint32_t slots[8];
        for (int i = 0; i < n; i++) {
            slots[i] = a->kind == PTX_OP_VECTOR ? lower_src(L, &v->elems[i], ety) : lower_dst(L, &v->elems[i]);
            if (!ok(L, slots[i]))
                return 0;
        }
        uint32_t other = a->kind == PTX_OP_VECTOR ? lower_dst(L, d) : lower_src(L, a, ty);
        if (!ok(L, other))
            return 0;
        bc_op *op = lower_emit(L, a->kind == PTX_OP_VECTOR ? BC_PACK : BC_UNPACK);
        op->type = (uint8_t)ty;
        op->mode = (uint16_t)bits;
        op->n = (uint16_t)n;
        op->list = lower_list(L, slots, n);
        if (a->kind == PTX_OP_VECTOR) op->d = other; else op->a = other;
        return 1;
    }
    uint32_t sd = lower_dst(L, d);
    uint32_t first = L->fn->ncode;
    uint32_t sa = lower_src(L, a, ty);
    if (!ok(L, sd) || !ok(L, sa))
        return 0;
    if (a->kind == PTX_OP_SPECIAL && L->fn->ncode == first + 1 && L->fn->code[first].code == BC_S2R) {
        /* read the special register straight into the destination */
        L->fn->code[first].d = sd;
        L->fn->nslots--;
        return 1;
    }
    bc_op *op = lower_emit(L, BC_MOV);
    op->type = (uint8_t)ty;
    op->d = sd;
    op->a = sa;
    return 1;
}

static int lower_cvt(lowerer *L)
{
    ptx_type dty = mod_type(L->in, 0), sty = mod_type(L->in, 1);
    if (mod_has(L->in, ".pack")) {
        /* cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b{, c} */
        if (!want_ops(L, 3, 4)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], PTX_T_S32), b = lower_src(L, &OPS[2], PTX_T_S32);
        uint32_t c = NOPS == 4 ? lower_src(L, &OPS[3], PTX_T_B32) : lower_const(L, 0);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c)) return 0;
        bc_op *op = lower_emit(L, BC_CVT_PACK);
        op->type = (uint8_t)dty; op->type2 = (uint8_t)sty;
        op->d = d; op->a = a; op->b = b; op->c = c; op->mode = 1;
        return 1;
    }
    if (dty == PTX_T_NONE || sty == PTX_T_NONE) {
        lower_error(L, L->in->pos, "cvt needs destination and source types");
        return 0;
    }
    if ((dty == PTX_T_F16X2 || dty == PTX_T_BF16X2) && NOPS == 3) {
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], sty), b = lower_src(L, &OPS[2], sty);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b)) return 0;
        bc_op *op = lower_emit(L, BC_CVT_PACK);
        op->type = (uint8_t)dty; op->type2 = (uint8_t)sty;
        op->d = d; op->a = a; op->b = b; op->mode = 0;
        op->mode2 = (uint16_t)mod_rounding(L->in);
        op->flags = float_flags(L);
        return 1;
    }
    if (!want_ops(L, 2, 2))
        return 0;
    uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], sty);
    if (!ok(L, d) || !ok(L, a))
        return 0;
    int dflt = ptx_type_is_float(dty), sflt = ptx_type_is_float(sty);
    unsigned regw = OPS[0].kind == PTX_OP_REG ? ptx_type_size(OPS[0].var->type) : ptx_type_size(dty);
    unsigned dw = ptx_type_size(dty);
    if (!dflt && !sflt && !mod_has(L->in, ".sat") && (regw == dw || !ptx_type_is_signed(dty))) {
        /* integer to integer: a sign- or zero-extension or a truncation */
        bc_op *op = lower_emit(L, BC_SZEXT);
        op->type = (uint8_t)dty;
        op->type2 = (uint8_t)sty;
        op->d = d;
        op->a = a;
        return 1;
    }
    bc_op *op = lower_emit(L, BC_CVT);
    op->type = (uint8_t)dty;
    op->type2 = (uint8_t)sty;
    op->d = d;
    op->a = a;
    op->mode = (uint16_t)mod_rounding(L->in);
    op->mode2 = (uint16_t)(regw > dw ? regw : 0); /* a wider destination register */
    op->flags = float_flags(L);
    if (dflt && !sflt && op->mode == BC_RND_NONE)
        op->mode = BC_RND_RN; /* integer -> float without a modifier: treat as .rn */
    if (!dflt && sflt && op->mode == BC_RND_NONE) {
        lower_error(L, L->in->pos, "cvt from float to integer needs .rni, .rzi, .rmi or .rpi");
        return 0;
    }
    return 1;
}

static int lower_cvta(lowerer *L)
{
    if (!want_ops(L, 2, 2))
        return 0;
    int to = mod_has(L->in, ".to");
    int sp = mod_space(L->in);
    if (mod_has(L->in, ".param")) sp = BC_SPACE_PARAM_KERNEL;
    if (sp == BC_SPACE_GENERIC) {
        lower_error(L, L->in->pos, "cvta needs a state space");
        return 0;
    }
    ptx_type ty = mod_type(L->in, 0);
    uint32_t d = lower_dst(L, &OPS[0]);
    uint32_t a;
    if (OPS[1].kind == PTX_OP_SYMBOL) {
        a = lower_src(L, &OPS[1], PTX_T_U64);
    } else {
        a = lower_src(L, &OPS[1], ty ? ty : PTX_T_U64);
    }
    if (!ok(L, d) || !ok(L, a))
        return 0;
    bc_op *op = lower_emit(L, BC_CVTA);
    op->type = (uint8_t)ty;
    op->d = d;
    op->a = a;
    op->mode = (uint16_t)sp;
    op->mode2 = to ? 0 : 1;
    return 1;
}

static int lower_isspacep(lowerer *L)
{
    if (!want_ops(L, 2, 2)) return 0;
    int sp = mod_space(L->in);
    if (mod_has(L->in, ".param")) sp = BC_SPACE_PARAM_KERNEL;
    uint32_t d = lower_pred_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], PTX_T_U64);
    if (!ok(L, d) || !ok(L, a)) return 0;
    bc_op *op = lower_emit(L, BC_ISSPACEP);
    op->d = d; op->a = a; op->mode = (uint16_t)sp;
    return 1;
}

/* ---- memory ------------------------------------------------------------- */

static int vec_of(const ptx_insn *in)
{
    if (mod_has(in, ".v2")) return 2;
    if (mod_has(in, ".v4")) return 4;
    if (mod_has(in, ".v8")) return 8;
    return 1;
}

/* Whether `bytes` bytes at [param+imm] lie in the kernel's parameter
 * block: known at load time, so the uniform LD_KPARAM needs no check. */
static int kernel_param_in_block(const lowerer *L, const ptx_operand *addr, uint64_t bytes)
{
    for (int i = 0; i < L->fn->nparams; i++)
        if (!strcmp(L->fn->params[i].name, addr->base->var->name)) {
            /* unsigned wrap-around sends negative offsets far past the end */
            uint64_t start = L->fn->params[i].offset + (uint64_t)addr->imm;
            return start <= L->fn->param_size && bytes <= L->fn->param_size - start;
        }
    return 0;
}

static int lower_ldst(lowerer *L, int is_store)
{
    if (!want_ops(L, 2, 3))
        return 0;
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE)
        return 0;
    int space = mod_space(L->in);
    int vec = vec_of(L->in);
    const ptx_operand *addr = is_store ? &OPS[0] : &OPS[1];
    const ptx_operand *val = is_store ? &OPS[1] : &OPS[0];
    uint32_t base;
    int64_t imm;
    /* kernel parameters read by name: a uniform fast path, taken when the
     * whole access lies in the parameter block (reading past one parameter
     * into the next is valid PTX) and each element fits a register slot.
     * Anything else goes the checked way below and faults at run time, as
     * the register form does. */
    if (!is_store && space == BC_SPACE_PARAM_KERNEL && ptx_type_size(ty) <= 8 && addr->kind == PTX_OP_ADDRESS &&
        addr->base && addr->base->kind == PTX_OP_SYMBOL && addr->base->var && addr->base->var->is_entry_param &&
        kernel_param_in_block(L, addr, (uint64_t)vec * ptx_type_size(ty))) {
        uint64_t off = 0;
        for (int i = 0; i < L->fn->nparams; i++)
            if (!strcmp(L->fn->params[i].name, addr->base->var->name))
                off = L->fn->params[i].offset;
        uint32_t slots[8];
        int n = vec;
        if (vec > 1) {
            if (val->kind != PTX_OP_VECTOR || val->nelems != vec) {
                lower_error(L, val->pos, "a .v%d load needs a {...} destination of %d registers", vec, vec);
                return 0;
            }
            for (int i = 0; i < n; i++)
                if (!ok(L, slots[i] = lower_dst(L, &val->elems[i])))
                    return 0;
        } else if (!ok(L, slots[0] = lower_dst(L, val))) {
            return 0;
        }
        for (int i = 0; i < n; i++) {
            bc_op *op = lower_emit(L, BC_LD_KPARAM);
            op->type = (uint8_t)ty;
            op->d = slots[i];
            op->imm = (int64_t)(off + (uint64_t)addr->imm + (uint64_t)i * ptx_type_size(ty));
            op->src_size = (uint16_t)ptx_type_size(ty);
            if (ptx_type_is_signed(ty)) op->flags |= BC_F_SIGNED;
            op->mode2 = (uint16_t)(val->kind == PTX_OP_VECTOR ? ptx_type_size(val->elems[i].var ? val->elems[i].var->type : ty)
                                                              : (val->var ? ptx_type_size(val->var->type) : ptx_type_size(ty)));
        }
        return 1;
    }
    if (space == BC_SPACE_PARAM_KERNEL && L->fn->is_entry == 0)
        space = BC_SPACE_PARAM_KERNEL; /* refined by lower_address for frame params */
    if (!lower_address(L, addr, &space, &base, &imm))
        return 0;
    if (space == BC_SPACE_PARAM_FUNC)
        space = BC_SPACE_LOCAL;
    uint32_t slots[8];
    int n = vec;
    if (vec > 1) {
        if (val->kind != PTX_OP_VECTOR || val->nelems != vec) {
            lower_error(L, val->pos, "a .v%d access needs a {...} operand of %d elements", vec, vec);
            return 0;
        }
    }
    unsigned regbytes = 0;
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = vec > 1 ? &val->elems[i] : val;
        if (is_store) {
            slots[i] = lower_src(L, e, ty);
        } else {
            slots[i] = lower_dst(L, e);
        }
        if (!ok(L, slots[i]))
            return 0;
        if (e->kind == PTX_OP_REG)
            regbytes = ptx_type_size(e->var->type);
    }
    if (ty == PTX_T_B128) {
        return unsupported(L);
    }
    bc_op *op = lower_emit(L, is_store ? BC_ST : BC_LD);
    op->type = (uint8_t)ty;
    op->mode = (uint16_t)space;
    op->a = base;
    op->imm = imm;
    op->n = (uint16_t)n;
    op->src_size = (uint16_t)ptx_type_size(ty);
    op->mode2 = (uint16_t)(regbytes ? regbytes : ptx_type_size(ty));
    op->flags |= lower_address_flags(addr);
    if (ptx_type_is_signed(ty)) op->flags |= BC_F_SIGNED;
    if (mod_has(L->in, ".volatile")) op->flags |= BC_F_VOLATILE;
    if (n == 1) {
        if (is_store) op->b = slots[0]; else op->d = slots[0];
    } else {
        op->list = lower_list(L, slots, n);
    }
    return 1;
}

static int lower_atom(lowerer *L, int is_red)
{
    static const struct { const char *n; int op; } ops[] = {
        {".add", BC_ATOM_ADD}, {".min", BC_ATOM_MIN}, {".max", BC_ATOM_MAX}, {".inc", BC_ATOM_INC},
        {".dec", BC_ATOM_DEC}, {".cas", BC_ATOM_CAS}, {".exch", BC_ATOM_EXCH}, {".and", BC_ATOM_AND},
        {".or", BC_ATOM_OR}, {".xor", BC_ATOM_XOR},
    };
    int aop = -1;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(ops); i++)
        if (mod_has(L->in, ops[i].n))
            aop = ops[i].op;
    ptx_type ty = first_type(L);
    if (aop < 0 || ty == PTX_T_NONE) {
        lower_error(L, L->in->pos, "%s needs an operation and a type", is_red ? "red" : "atom");
        return 0;
    }
    if (vec_of(L->in) > 1 || ty == PTX_T_B128)
        return unsupported(L);
    int space = mod_space(L->in);
    int nops = is_red ? 2 : (aop == BC_ATOM_CAS ? 4 : 3);
    if (!want_ops(L, nops, nops))
        return 0;
    int k = is_red ? 0 : 1;
    uint32_t d = is_red ? lower_temp(L) : lower_dst(L, &OPS[0]);
    uint32_t base;
    int64_t imm;
    if (!lower_address(L, &OPS[k], &space, &base, &imm))
        return 0;
    uint32_t b = lower_src(L, &OPS[k + 1], ty);
    uint32_t c = aop == BC_ATOM_CAS ? lower_src(L, &OPS[k + 2], ty) : BC_NONE;
    if (!ok(L, d) || !ok(L, b) || (aop == BC_ATOM_CAS && !ok(L, c)))
        return 0;
    bc_op *op = lower_emit(L, BC_ATOM);
    op->type = (uint8_t)ty;
    op->mode = (uint16_t)space;
    op->mode2 = (uint16_t)aop;
    op->d = d;
    op->a = base;
    op->imm = imm;
    op->b = b;
    op->c = c;
    op->src_size = (uint16_t)ptx_type_size(ty);
    op->flags |= lower_address_flags(&OPS[k]);
    return 1;
}

/* ---- control -------------------------------------------------------------- */

static int lower_bra(lowerer *L)
{
    if (!want_ops(L, 1, 1))
        return 0;
    if (OPS[0].kind != PTX_OP_SYMBOL) {
        lower_error(L, OPS[0].pos, "bra needs a label");
        return 0;
    }
    bc_op *op = lower_emit(L, BC_BRA);
    if (mod_has(L->in, ".uni")) op->flags |= BC_F_UNI;
    lower_branch_ref(L, L->fn->ncode - 1, OPS[0].name, OPS[0].pos, -1);
    return 1;
}

static int lower_brx(lowerer *L)
{
    if (!want_ops(L, 2, 2))
        return 0;
    uint32_t a = lower_src(L, &OPS[0], PTX_T_U32);
    if (!ok(L, a))
        return 0;
    if (OPS[1].kind != PTX_OP_SYMBOL) {
        lower_error(L, OPS[1].pos, "brx.idx needs a .branchtargets label");
        return 0;
    }
    const ptx_insn *tbl = util_map_get(&L->tables, OPS[1].name, strlen(OPS[1].name));
    if (!tbl) {
        lower_error(L, OPS[1].pos, "'%s' is not a .branchtargets list", OPS[1].name);
        return 0;
    }
    uint32_t zeros[64] = {0};
    if (tbl->nops > 64)
        return unsupported(L);
    uint32_t list = lower_list(L, zeros, tbl->nops);
    bc_op *op = lower_emit(L, BC_BRX);
    op->a = a;
    op->list = list;
    op->n = (uint16_t)tbl->nops;
    for (int i = 0; i < tbl->nops; i++)
        lower_branch_ref(L, L->fn->ncode - 1, tbl->ops[i].name, tbl->ops[i].pos, (int)(list + (uint32_t)i));
    return 1;
}

/* An argument of a call: a .param variable of the caller's frame. */
static int call_operand_offset(lowerer *L, const ptx_operand *o, uint32_t *off, uint32_t *size)
{
    if (o->kind == PTX_OP_SYMBOL && o->var && o->var->space == PTX_SPACE_PARAM && !o->var->is_entry_param) {
        const ptx_var *v = o->var;
        if (v->is_func_param) {
            for (int i = 0; i < L->fn->nparams; i++)
                if (!strcmp(L->fn->params[i].name, v->name)) { *off = (uint32_t)L->fn->params[i].offset; *size = (uint32_t)v->size; return 1; }
            for (int i = 0; i < L->fn->nrets; i++)
                if (!strcmp(L->fn->rets[i].name, v->name)) { *off = (uint32_t)L->fn->rets[i].offset; *size = (uint32_t)v->size; return 1; }
        }
        *off = (uint32_t)L->local_off[v->index];
        *size = (uint32_t)v->size;
        return 1;
    }
    lower_error(L, o->pos, "call arguments must be .param variables declared in the caller");
    return 0;
}

static int lower_call(lowerer *L)
{
    const ptx_insn *in = L->in;
    const ptx_operand *t = &in->ops[0];
    bc_call call;
    memset(&call, 0, sizeof call);
    call.callee = -1;
    bc_function *callee = NULL;
    int indirect = 0;
    if (t->kind == PTX_OP_SYMBOL && !t->var) {
        callee = bc_module_find(L->m, t->name);
        if (!callee) {
            lower_error(L, t->pos, "call to undeclared function '%s'", t->name);
            return 0;
        }
        call.callee = callee->index;
        if (callee->is_extern && !callee->builtin) {
            lower_error(L, t->pos, "call to external function '%s', which kemu does not provide "
                        "(bind it with kemu_device_bind_native, or link the code that defines it)", t->name);
            return 0;
        }
        if (in->ncall_args != callee->nparams) {
            lower_error(L, t->pos, "'%s' takes %d arguments, the call passes %d", t->name, callee->nparams, in->ncall_args);
            return 0;
        }
        if (in->ncall_rets != callee->nrets) {
            lower_error(L, t->pos, "'%s' returns %d values, the call expects %d", t->name, callee->nrets, in->ncall_rets);
            return 0;
        }
    } else if (t->kind == PTX_OP_REG) {
        indirect = 1;
    } else {
        lower_error(L, t->pos, "call needs a function name or a register");
        return 0;
    }
    call.args = calloc((size_t)in->ncall_args + 1, sizeof(bc_copy));
    call.rets = calloc((size_t)in->ncall_rets + 1, sizeof(bc_copy));
    if (!call.args || !call.rets) {
        free(call.args);
        free(call.rets);
        L->oom = 1;
        return 0;
    }
    call.nargs = in->ncall_args;
    call.nrets = in->ncall_rets;
    int good = 1;
    for (int i = 0; i < in->ncall_args && good; i++) {
        uint32_t off, size;
        good = call_operand_offset(L, &in->call_args[i], &off, &size);
        call.args[i].from = off;
        call.args[i].size = size;
        if (callee && good) {
            call.args[i].to = (uint32_t)callee->params[i].offset;
            if (callee->params[i].size < size)
                call.args[i].size = (uint32_t)callee->params[i].size;
        }
    }
    for (int i = 0; i < in->ncall_rets && good; i++) {
        uint32_t off, size;
        good = call_operand_offset(L, &in->call_rets[i], &off, &size);
        call.rets[i].to = off;
        call.rets[i].size = size;
        if (callee && good) {
            call.rets[i].from = (uint32_t)callee->rets[i].offset;
            if (callee->rets[i].size < size)
                call.rets[i].size = (uint32_t)callee->rets[i].size;
        }
    }
    if (!good) {
        free(call.args);
        free(call.rets);
        return 0;
    }
    bc_function *fn = L->fn;
    if (fn->ncalls == fn->capcalls) {
        uint32_t cap = fn->capcalls ? fn->capcalls * 2 : 8;
        bc_call *p = realloc(fn->calls, cap * sizeof *p);
        if (!p) {
            free(call.args);
            free(call.rets);
            L->oom = 1;
            return 0;
        }
        fn->calls = p;
        fn->capcalls = cap;
    }
    fn->calls[fn->ncalls] = call;
    uint32_t a = indirect ? lower_src(L, t, PTX_T_U64) : BC_NONE;
    bc_op *op;
    if (indirect) {
        op = lower_emit(L, BC_CALL_INDIRECT);
        op->a = a;
    } else if (callee->builtin) {
        op = lower_emit(L, BC_CALL_BUILTIN);
        op->mode = (uint16_t)(callee->builtin - 1);
        op->imm = callee->index;
    } else {
        op = lower_emit(L, BC_CALL);
        op->imm = callee->index;
        fn->uses_calls = 1;
    }
    if (indirect)
        fn->uses_calls = 1;
    op->list = fn->ncalls++;
    if (mod_has(in, ".uni")) op->flags |= BC_F_UNI;
    return 1;
}

static int lower_bar(lowerer *L, const char *opc)
{
    const ptx_insn *in = L->in;
    if (!strcmp(opc, "bar") && mod_has(in, ".warp")) {
        if (!want_ops(L, 1, 1)) return 0;
        uint32_t a = lower_src(L, &OPS[0], PTX_T_B32);
        if (!ok(L, a)) return 0;
        bc_op *op = lower_emit(L, BC_BAR_WARP);
        op->a = a;
        return 1;
    }
    if (!strcmp(opc, "barrier") && mod_has(in, ".cluster")) {
        bc_op *op = lower_emit(L, BC_BAR_CLUSTER);
        op->mode = mod_has(in, ".arrive") ? 1 : mod_has(in, ".wait") ? 2 : 0;
        return 1;
    }
    int mode = mod_has(in, ".arrive") ? 1 : mod_has(in, ".red") ? 2 : 0;
    if (mode == 0 && !mod_has(in, ".sync") && strcmp(opc, "bar") != 0 && !mod_has(in, ".cta")) {
        return unsupported(L);
    }
    int k = 0;
    uint32_t d = BC_NONE;
    int redop = 0;
    if (mode == 2) {
        redop = mod_has(in, ".popc") ? 0 : mod_has(in, ".and") ? 1 : 2;
        if (!want_ops(L, 3, 4)) return 0;
        d = redop == 0 ? lower_dst(L, &OPS[0]) : lower_pred_dst(L, &OPS[0]);
        k = 1;
    } else if (NOPS < 1 || NOPS > 2) {
        if (NOPS == 0 && mode == 0) {
            /* barrier.sync with no operand is not valid PTX; be lenient: id 0 */
        } else {
            return want_ops(L, 1, 2);
        }
    }
    uint32_t a = NOPS > k ? lower_src(L, &OPS[k], PTX_T_U32) : lower_const(L, 0);
    uint32_t b = BC_NONE, c = BC_NONE;
    int has_count = 0;
    if (mode == 2) {
        if (NOPS == 4) {
            b = lower_src(L, &OPS[2], PTX_T_U32);
            has_count = 1;
            c = lower_pred(L, &OPS[3]);
        } else {
            c = lower_pred(L, &OPS[2]);
        }
    } else if (NOPS == 2) {
        b = lower_src(L, &OPS[1], PTX_T_U32);
        has_count = 1;
    }
    if (!ok(L, a) || (has_count && !ok(L, b)) || (mode == 2 && (!ok(L, c) || !ok(L, d))))
        return 0;
    bc_op *op = lower_emit(L, BC_BAR);
    op->mode = (uint16_t)mode;
    op->mode2 = (uint16_t)redop;
    op->a = a;
    op->b = b;
    op->c = c;
    op->d = d;
    if (has_count) op->flags |= BC_F_HAS_COUNT;
    if (mode == 2 && OPS[NOPS - 1].negate) op->flags |= BC_F_NEG_C;
    if (mod_has(in, ".aligned") || !strcmp(opc, "bar")) op->flags |= BC_F_ALIGNED;
    return 1;
}

/* ---- warp-level ----------------------------------------------------------- */

static int lower_shfl(lowerer *L)
{
    const ptx_insn *in = L->in;
    if (!mod_has(in, ".sync"))
        return unsupported(L); /* pre-Volta shfl without a mask */
    int mode = mod_has(in, ".up") ? BC_SHFL_UP : mod_has(in, ".down") ? BC_SHFL_DOWN :
               mod_has(in, ".bfly") ? BC_SHFL_BFLY : BC_SHFL_IDX;
    if (!want_ops(L, 5, 5))
        return 0;
    uint32_t d, p = BC_NONE;
    if (OPS[0].kind == PTX_OP_VECTOR && OPS[0].negate == 2) {
        d = lower_dst(L, &OPS[0].elems[0]);
        p = lower_pred_dst(L, &OPS[0].elems[1]);
    } else {
        d = lower_dst(L, &OPS[0]);
    }
    uint32_t a = lower_src(L, &OPS[1], PTX_T_B32), b = lower_src(L, &OPS[2], PTX_T_U32);
    uint32_t c = lower_src(L, &OPS[3], PTX_T_U32), e = lower_src(L, &OPS[4], PTX_T_B32);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b) || !ok(L, c) || !ok(L, e))
        return 0;
    bc_op *op = lower_emit(L, BC_SHFL);
    op->mode = (uint16_t)mode;
    op->d = d; op->a = a; op->b = b; op->c = c; op->e = e;
    if (p != BC_NONE) {
        op->flags |= BC_F_PRED_OUT;
        op->list = p;
    }
    return 1;
}

static int lower_vote(lowerer *L)
{
    const ptx_insn *in = L->in;
    int mode = mod_has(in, ".all") ? BC_VOTE_ALL : mod_has(in, ".any") ? BC_VOTE_ANY :
               mod_has(in, ".uni") ? BC_VOTE_UNI : BC_VOTE_BALLOT;
    int sync = mod_has(in, ".sync");
    if (!want_ops(L, sync ? 3 : 2, sync ? 3 : 2))
        return 0;
    uint32_t d = mode == BC_VOTE_BALLOT ? lower_dst(L, &OPS[0]) : lower_pred_dst(L, &OPS[0]);
    uint32_t a = lower_pred(L, &OPS[1]);
    uint32_t b = sync ? lower_src(L, &OPS[2], PTX_T_B32) : lower_const(L, 0xffffffffu);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b))
        return 0;
    bc_op *op = lower_emit(L, BC_VOTE);
    op->mode = (uint16_t)mode;
    op->d = d; op->a = a; op->b = b;
    if (OPS[1].negate) op->flags |= BC_F_NEG_C;
    return 1;
}

/* elect.sync d|p, membermask (d or p may be _) */
static int lower_elect(lowerer *L)
{
    if (!mod_has(L->in, ".sync")) {
        lower_error(L, L->in->pos, "elect needs .sync");
        return 0;
    }
    if (!want_ops(L, 2, 2))
        return 0;
    if (OPS[0].kind != PTX_OP_VECTOR || OPS[0].negate != 2 || OPS[0].nelems != 2) {
        lower_error(L, OPS[0].pos, "elect.sync writes d|p: a register and a predicate (either may be _)");
        return 0;
    }
    uint32_t d = lower_dst(L, &OPS[0].elems[0]), p = lower_pred_dst(L, &OPS[0].elems[1]);
    uint32_t b = lower_src(L, &OPS[1], PTX_T_B32);
    if (!ok(L, d) || !ok(L, p) || !ok(L, b))
        return 0;
    bc_op *op = lower_emit(L, BC_VOTE);
    op->mode = BC_VOTE_ELECT;
    op->d = d;
    op->e = p;
    op->a = b; /* unused */
    op->b = b;
    return 1;
}

static int lower_match(lowerer *L)
{
    const ptx_insn *in = L->in;
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 3, 3))
        return 0;
    uint32_t d, p = BC_NONE;
    if (OPS[0].kind == PTX_OP_VECTOR && OPS[0].negate == 2) {
        d = lower_dst(L, &OPS[0].elems[0]);
        p = lower_pred_dst(L, &OPS[0].elems[1]);
    } else {
        d = lower_dst(L, &OPS[0]);
    }
    uint32_t a = lower_src(L, &OPS[1], ty), b = lower_src(L, &OPS[2], PTX_T_B32);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b))
        return 0;
    bc_op *op = lower_emit(L, BC_MATCH);
    op->type = (uint8_t)ty;
    op->mode = mod_has(in, ".all") ? 1 : 0;
    op->d = d; op->a = a; op->b = b; op->e = p;
    return 1;
}

static int lower_redux(lowerer *L)
{
    const ptx_insn *in = L->in;
    ptx_type ty = first_type(L);
    if (ty == PTX_T_NONE || !want_ops(L, 3, 3))
        return 0;
    if (ty == PTX_T_F32)
        return unsupported(L);
    int mode = mod_has(in, ".add") ? BC_REDUX_ADD : mod_has(in, ".min") ? BC_REDUX_MIN :
               mod_has(in, ".max") ? BC_REDUX_MAX : mod_has(in, ".and") ? BC_REDUX_AND :
               mod_has(in, ".or") ? BC_REDUX_OR : BC_REDUX_XOR;
    uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty), b = lower_src(L, &OPS[2], PTX_T_B32);
    if (!ok(L, d) || !ok(L, a) || !ok(L, b))
        return 0;
    bc_op *op = lower_emit(L, BC_REDUX);
    op->type = (uint8_t)ty;
    op->mode = (uint16_t)mode;
    op->d = d; op->a = a; op->b = b;
    return 1;
}

/* ---- asynchronous copies and mbarriers ------------------------------------ */

/* An address operand as one register holding base + offset (a temporary
 * when the offset is not zero; a 32-bit base wraps at 2^32). */
static uint32_t address_register(lowerer *L, const ptx_operand *o, int *space)
{
    uint32_t base;
    int64_t off;
    if (!lower_address(L, o, space, &base, &off))
        return BC_NONE;
    if (!off)
        return base;
    uint32_t t = lower_temp(L);
    bc_op *add = lower_emit(L, BC_ADD);
    add->type = lower_address_flags(o) ? PTX_T_U32 : PTX_T_U64;
    add->d = t;
    add->a = base;
    add->b = lower_const(L, (uint64_t)off);
    return t;
}

/* cp.async.bulk: the non-tensor bulk copies of sm_90, performed when issued:
 *   .shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
 *   .shared::cta.global.mbarrier::complete_tx::bytes    (the same, this CTA)
 *   .shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
 *   .global.shared::cta.bulk_group [dst], [src], size
 *   .prefetch.L2.global [src], size
 *   .commit_group, .wait_group{.read} N
 * each with an optional .level::cache_hint cache-policy operand. */
static int lower_cp_async(lowerer *L)
{
    const ptx_insn *in = L->in;
    if (mod_has(in, ".commit_group") || mod_has(in, ".wait_group") || mod_has(in, ".wait_all") ||
        mod_has(in, ".mbarrier")) {
        /* kemu performs each cp.async when it is issued, so groups are
         * always complete */
        bc_op *op = lower_emit(L, BC_FENCE);
        op->mode = 1;
        return 1;
    }
    if (!want_ops(L, 3, 5))
        return 0;
    int dspace = BC_SPACE_SHARED, sspace = BC_SPACE_GLOBAL;
    uint32_t dst, src;
    int64_t dimm;
    if (!lower_address(L, &OPS[0], &dspace, &dst, &dimm) || !ok(L, src = address_register(L, &OPS[1], &sspace)))
        return 0;
    if (OPS[2].kind != PTX_OP_IMM_INT || (OPS[2].imm != 4 && OPS[2].imm != 8 && OPS[2].imm != 16)) {
        lower_error(L, OPS[2].pos, "cp.async copies 4, 8 or 16 bytes");
        return 0;
    }
    uint32_t srcsize = BC_NONE;
    if (NOPS >= 4 && OPS[3].kind != PTX_OP_SYMBOL) {
        srcsize = lower_src(L, &OPS[3], PTX_T_U32);
        if (!ok(L, srcsize))
            return 0;
    }
    bc_op *op = lower_emit(L, BC_CP_ASYNC);
    op->a = dst;
    op->imm = dimm;
    op->b = src;
    op->c = srcsize;
    op->n = (uint16_t)OPS[2].imm;
    op->mode = (uint16_t)dspace;
    op->flags |= lower_address_flags(&OPS[0]);
    return 1;
}

/* The state spaces of a bulk copy's modifiers, destination first; returns
 * how many (at most 2) it found. */
static int copy_spaces(const ptx_insn *in, int space[2])
{
    int ns = 0;
    for (int i = 0; i < in->nmods && ns < 2; i++) {
        const char *m = in->mods[i];
        if (!strcmp(m, ".global")) space[ns++] = BC_SPACE_GLOBAL;
        else if (!strcmp(m, ".shared::cta") || !strcmp(m, ".shared")) space[ns++] = BC_SPACE_SHARED;
        else if (!strcmp(m, ".shared::cluster")) space[ns++] = BC_SPACE_SHARED_CLUSTER;
    }
    return ns;
}

/* cp.async.bulk.tensor.Nd in tile mode:
 *   .shared::cluster.global{.tile}.mbarrier::complete_tx::bytes [dst], [tmap, {c...}], [mbar]
 *   .global.shared::cta{.tile}.bulk_group [tmap, {c...}], [src]
 * (also .shared::cta destinations), with an optional cache-policy operand. */
static int lower_tensor_copy(lowerer *L)
{
    const ptx_insn *in = L->in;
    static const char *const refused[] = {".im2col", ".im2col::w", ".im2col::w::128", ".tile::gather4",
                                          ".tile::scatter4", ".multicast::cluster", ".cta_group::1", ".cta_group::2"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (mod_has(in, refused[i])) {
            lower_error(L, in->pos, "unsupported instruction form: cp.async.bulk.tensor with %s (not implemented yet)",
                        refused[i]);
            return 0;
        }
    unsigned rank = 0;
    for (unsigned d = 1; d <= 5; d++) {
        char name[8];
        snprintf(name, sizeof name, ".%ud", d);
        if (mod_has(in, name))
            rank = d;
    }
    if (!rank) {
        lower_error(L, in->pos, "cp.async.bulk.tensor needs a dimension .1d to .5d");
        return 0;
    }
    int load = mod_has(in, ".mbarrier::complete_tx::bytes"), store = mod_has(in, ".bulk_group");
    if (load == store) {
        lower_error(L, in->pos, "cp.async.bulk.tensor loads with .mbarrier::complete_tx::bytes or stores with "
                                ".bulk_group");
        return 0;
    }
    int space[2], ns = copy_spaces(in, space);
    if (ns != 2 || (load ? space[1] != BC_SPACE_GLOBAL || space[0] == BC_SPACE_GLOBAL
                         : space[0] != BC_SPACE_GLOBAL || space[1] != BC_SPACE_SHARED)) {
        lower_error(L, in->pos, "cp.async.bulk.tensor copies global memory to shared::cluster/shared::cta memory or "
                                "shared::cta memory to global memory");
        return 0;
    }
    int hint = mod_has(in, ".L2::cache_hint");
    int want = (load ? 3 : 2) + hint;
    if (!want_ops(L, want, want))
        return 0;
    const ptx_operand *tref = &OPS[load ? 1 : 0], *smem = &OPS[load ? 0 : 1];
    if (tref->kind != PTX_OP_ADDRESS || !tref->base || tref->nelems != 1 || tref->elems[0].kind != PTX_OP_VECTOR ||
        tref->elems[0].nelems != (int)rank) {
        char msg[128];
        snprintf(msg, sizeof msg, "expected [tensor-map, {%u coordinates}]", rank);
        lower_error(L, tref->pos, "%s", msg);
        return 0;
    }
    ptx_operand mapaddr = *tref;
    mapaddr.nelems = 0;
    mapaddr.elems = NULL;
    int mspace = BC_SPACE_GENERIC, sspace = load ? space[0] : space[1];
    uint32_t tmap = address_register(L, &mapaddr, &mspace);
    uint32_t s = address_register(L, smem, &sspace);
    if (!ok(L, tmap) || !ok(L, s))
        return 0;
    uint32_t cs[5];
    for (unsigned i = 0; i < rank; i++) {
        cs[i] = lower_src(L, &tref->elems[0].elems[i], PTX_T_S32);
        if (!ok(L, cs[i]))
            return 0;
    }
    uint32_t bar = BC_NONE;
    int bspace = space[0] == BC_SPACE_SHARED_CLUSTER ? BC_SPACE_SHARED_CLUSTER : BC_SPACE_SHARED;
    if (load && !ok(L, bar = address_register(L, &OPS[2], &bspace)))
        return 0;
    bc_op *op = lower_emit(L, BC_TENSOR_COPY);
    op->a = s;
    op->b = tmap;
    op->c = lower_temp(L);
    op->e = bar;
    op->mode = (uint16_t)sspace;
    op->mode2 = load ? 0 : 1;
    op->src_size = (uint16_t)bspace;
    op->n = (uint16_t)rank;
    op->list = lower_list(L, cs, (int)rank);
    return 1;
}

static int lower_cp_async_bulk(lowerer *L)
{
    const ptx_insn *in = L->in;
    if (mod_has(in, ".commit_group") || mod_has(in, ".wait_group") || mod_has(in, ".prefetch")) {
        lower_emit(L, BC_NOP); /* copies complete when issued */
        return 1;
    }
    if (mod_has(in, ".tensor"))
        return lower_tensor_copy(L);
    if (mod_has(in, ".multicast::cluster")) {
        lower_error(L, in->pos, "unsupported instruction form: cp.async.bulk with .multicast::cluster (not implemented yet)");
        return 0;
    }
    int mbar = mod_has(in, ".mbarrier::complete_tx::bytes"), group = mod_has(in, ".bulk_group");
    if (mbar == group) {
        lower_error(L, in->pos, "cp.async.bulk needs .mbarrier::complete_tx::bytes (to shared memory) or "
                                ".bulk_group (to global memory)");
        return 0;
    }
    int hint = mod_has(in, ".L2::cache_hint");
    int want = (mbar ? 4 : 3) + hint;
    if (!want_ops(L, want, want))
        return 0;
    int spaces[2], ns = copy_spaces(in, spaces);
    int ok_spaces = ns == 2 && (mbar ? (spaces[0] != BC_SPACE_GLOBAL && spaces[1] != BC_SPACE_SHARED_CLUSTER)
                                      : (spaces[0] == BC_SPACE_GLOBAL && spaces[1] == BC_SPACE_SHARED));
    if (!ok_spaces) {
        lower_error(L, in->pos, "cp.async.bulk copies global or shared::cta memory to shared::cta or "
                                "shared::cluster memory, or shared::cta memory to global memory");
        return 0;
    }
    int dspace = spaces[0], sspace = spaces[1];
    /* the mbarrier lives in the destination CTA */
    int mspace = dspace == BC_SPACE_SHARED_CLUSTER ? BC_SPACE_SHARED_CLUSTER : BC_SPACE_SHARED;
    uint32_t dst = address_register(L, &OPS[0], &dspace), src = address_register(L, &OPS[1], &sspace);
    uint32_t size = lower_src(L, &OPS[2], PTX_T_U32);
    uint32_t bar = mbar ? address_register(L, &OPS[3], &mspace) : BC_NONE;
    if (!ok(L, dst) || !ok(L, src) || !ok(L, size) || (mbar && !ok(L, bar)))
        return 0;
    bc_op *op = lower_emit(L, BC_BULK_COPY);
    op->a = dst;
    op->b = src;
    op->c = size;
    op->e = bar;
    op->mode = (uint16_t)dspace;
    op->mode2 = (uint16_t)sspace;
    op->n = (uint16_t)mspace;
    return 1;
}

static int lower_mbarrier(lowerer *L)
{
    const ptx_insn *in = L->in;
    int sub;
    if (mod_has(in, ".arrive") && mod_has(in, ".expect_tx")) sub = BC_MB_ARRIVE_EXPECT_TX;
    else if (mod_has(in, ".expect_tx")) sub = BC_MB_EXPECT_TX;
    else if (mod_has(in, ".complete_tx")) sub = BC_MB_COMPLETE_TX;
    else if (mod_has(in, ".init")) sub = BC_MB_INIT;
    else if (mod_has(in, ".inval")) sub = BC_MB_INVAL;
    else if (mod_has(in, ".arrive_drop")) sub = BC_MB_ARRIVE_DROP;
    else if (mod_has(in, ".arrive")) sub = BC_MB_ARRIVE;
    else if (mod_has(in, ".test_wait")) sub = mod_has(in, ".parity") ? BC_MB_TEST_PARITY : BC_MB_TEST_WAIT;
    else if (mod_has(in, ".try_wait")) sub = mod_has(in, ".parity") ? BC_MB_TRY_PARITY : BC_MB_TRY_WAIT;
    else if (mod_has(in, ".pending_count")) sub = BC_MB_PENDING;
    else return unsupported(L);
    int space = mod_space(in);
    if (space == BC_SPACE_GENERIC && !mod_has(in, ".shared") && sub != BC_MB_PENDING)
        space = BC_SPACE_GENERIC;
    uint32_t d = BC_NONE, a = BC_NONE, b = BC_NONE;
    int64_t imm = 0;
    const ptx_operand *addr = NULL; /* the object's address operand */
    bc_op tmp;
    memset(&tmp, 0, sizeof tmp);
    switch (sub) {
    case BC_MB_INIT:
        if (!want_ops(L, 2, 2) || !lower_address(L, addr = &OPS[0], &space, &a, &imm)) return 0;
        b = lower_src(L, &OPS[1], PTX_T_U32);
        break;
    case BC_MB_INVAL:
        if (!want_ops(L, 1, 1) || !lower_address(L, addr = &OPS[0], &space, &a, &imm)) return 0;
        break;
    case BC_MB_ARRIVE:
    case BC_MB_ARRIVE_DROP:
        if (!want_ops(L, 2, 3)) return 0;
        d = lower_dst(L, &OPS[0]);
        if (!lower_address(L, addr = &OPS[1], &space, &a, &imm)) return 0;
        b = NOPS == 3 ? lower_src(L, &OPS[2], PTX_T_U32) : lower_const(L, 1);
        break;
    case BC_MB_ARRIVE_EXPECT_TX: /* state, [addr], tx-count: one arrival */
        if (!want_ops(L, 3, 3)) return 0;
        d = lower_dst(L, &OPS[0]);
        if (!lower_address(L, addr = &OPS[1], &space, &a, &imm)) return 0;
        b = lower_src(L, &OPS[2], PTX_T_U32);
        break;
    case BC_MB_EXPECT_TX:
    case BC_MB_COMPLETE_TX: /* [addr], tx-count */
        if (!want_ops(L, 2, 2) || !lower_address(L, addr = &OPS[0], &space, &a, &imm)) return 0;
        b = lower_src(L, &OPS[1], PTX_T_U32);
        d = lower_temp(L);
        break;
    case BC_MB_PENDING:
        if (!want_ops(L, 2, 2)) return 0;
        d = lower_dst(L, &OPS[0]);
        b = lower_src(L, &OPS[1], PTX_T_B64);
        a = lower_const(L, 0);
        break;
    default:
        if (!want_ops(L, 3, 4)) return 0;
        d = lower_pred_dst(L, &OPS[0]);
        if (!lower_address(L, addr = &OPS[1], &space, &a, &imm)) return 0;
        b = lower_src(L, &OPS[2], sub == BC_MB_TEST_PARITY || sub == BC_MB_TRY_PARITY ? PTX_T_U32 : PTX_T_B64);
        break;
    }
    if ((d == BC_NONE && (sub != BC_MB_INIT && sub != BC_MB_INVAL)) || a == BC_NONE ||
        (b == BC_NONE && sub != BC_MB_INVAL))
        return 0;
    bc_op *op = lower_emit(L, BC_MBARRIER);
    op->mode = (uint16_t)space;
    op->mode2 = (uint16_t)sub;
    op->d = d;
    op->a = a;
    op->b = b;
    op->imm = imm;
    if (addr)
        op->flags |= lower_address_flags(addr);
    return 1;
}

/* ---- dispatch ----------------------------------------------------------- */

int lower_instruction(lowerer *L, const ptx_insn *in)
{
    const char *o = in->opcode;
    if (!strcmp(o, "add") || !strcmp(o, "sub") || !strcmp(o, "mul") || !strcmp(o, "mad") ||
        !strcmp(o, "fma") || !strcmp(o, "mul24") || !strcmp(o, "mad24") || !strcmp(o, "div") ||
        !strcmp(o, "rem") || !strcmp(o, "min") || !strcmp(o, "max") || !strcmp(o, "abs") ||
        !strcmp(o, "neg") || !strcmp(o, "sad") || !strcmp(o, "addc") || !strcmp(o, "subc") ||
        !strcmp(o, "madc") || !strcmp(o, "copysign"))
        return lower_arith(L, o);
    if (!strcmp(o, "and") || !strcmp(o, "or") || !strcmp(o, "xor") || !strcmp(o, "not") || !strcmp(o, "cnot"))
        return lower_logic(L, o);
    if (!strcmp(o, "shl") || !strcmp(o, "shr"))
        return lower_shift(L, o);
    if (!strcmp(o, "popc") || !strcmp(o, "clz") || !strcmp(o, "brev") || !strcmp(o, "bfind") ||
        !strcmp(o, "bfe") || !strcmp(o, "bfi") || !strcmp(o, "bmsk") || !strcmp(o, "fns") ||
        !strcmp(o, "prmt") || !strcmp(o, "lop3") || !strcmp(o, "shf"))
        return lower_bitops(L, o);
    if (!strcmp(o, "rcp") || !strcmp(o, "sqrt") || !strcmp(o, "rsqrt") || !strcmp(o, "ex2") ||
        !strcmp(o, "lg2") || !strcmp(o, "sin") || !strcmp(o, "cos") || !strcmp(o, "tanh"))
        return lower_funary(L, o);
    if (!strcmp(o, "testp")) return lower_testp(L);
    if (!strcmp(o, "setp")) return lower_setp(L, 0);
    if (!strcmp(o, "set")) return lower_setp(L, 1);
    if (!strcmp(o, "selp")) return lower_selp(L, 0);
    if (!strcmp(o, "slct")) return lower_selp(L, 1);
    if (!strcmp(o, "mov")) return lower_mov(L);
    if (!strcmp(o, "cvt")) return lower_cvt(L);
    if (!strcmp(o, "cvta")) return lower_cvta(L);
    if (!strcmp(o, "isspacep")) return lower_isspacep(L);
    if (!strcmp(o, "ld") || !strcmp(o, "ldu")) return lower_ldst(L, 0);
    if (!strcmp(o, "st")) return lower_ldst(L, 1);
    if (!strcmp(o, "atom")) return lower_atom(L, 0);
    if (!strcmp(o, "red")) return lower_atom(L, 1);
    if (!strcmp(o, "bra")) return lower_bra(L);
    if (!strcmp(o, "brx")) return lower_brx(L);
    if (!strcmp(o, "call")) return lower_call(L);
    if (!strcmp(o, "ret")) { lower_emit(L, L->fn->is_entry ? BC_EXIT : BC_RET); return 1; }
    if (!strcmp(o, "exit")) { lower_emit(L, BC_EXIT); return 1; }
    if (!strcmp(o, "bar") || !strcmp(o, "barrier")) return lower_bar(L, o);
    if (!strcmp(o, "membar") || (!strcmp(o, "fence") && !mod_has(in, ".proxy") && !mod_has(in, ".proxy::async"))) {
        bc_op *op = lower_emit(L, BC_FENCE);
        /* scope: membar.cta/.gl/.sys, fence{.sem}.cta/.cluster/.gpu/.sys */
        op->n = (mod_has(in, ".cta")) ? VM_SCOPE_CTA : mod_has(in, ".cluster") ? VM_SCOPE_CLUSTER :
                (mod_has(in, ".sys")) ? VM_SCOPE_SYS : VM_SCOPE_GPU;
        return 1;
    }
    if (!strcmp(o, "fence")) {
        /* proxy fences (fence.proxy.async, .alias, .tensormap::generic):
         * kemu has one proxy, and async operations (wgmma, cp.async) access
         * memory when issued, so there is nothing to order */
        /* fence.proxy.tensormap::generic.acquire takes [addr], 128 */
        if (mod_has(in, ".tensormap::generic") && mod_has(in, ".acquire")) {
            if (!want_ops(L, 2, 2)) return 0;
        } else if (!want_ops(L, 0, 0)) {
            return 0;
        }
        lower_emit(L, BC_NOP);
        return 1;
    }
    if (!strcmp(o, "trap")) { lower_emit(L, BC_TRAP); return 1; }
    if (!strcmp(o, "brkpt")) { bc_op *op = lower_emit(L, BC_TRAP); op->mode = 1; return 1; }
    if (!strcmp(o, "pmevent") || !strcmp(o, "prefetch") || !strcmp(o, "prefetchu") ||
        !strcmp(o, "discard") || !strcmp(o, "applypriority") || !strcmp(o, "createpolicy")) {
        if (!strcmp(o, "createpolicy")) {
            if (NOPS < 1) return want_ops(L, 1, 4);
            uint32_t d = lower_dst(L, &OPS[0]);
            if (!ok(L, d)) return 0;
            bc_op *op = lower_emit(L, BC_MOV);
            op->d = d;
            op->a = lower_const(L, 0);
            return 1;
        }
        lower_emit(L, BC_NOP);
        return 1;
    }
    if (!strcmp(o, "nanosleep")) {
        if (!want_ops(L, 1, 1)) return 0;
        uint32_t a = lower_src(L, &OPS[0], PTX_T_U32);
        if (!ok(L, a)) return 0;
        bc_op *op = lower_emit(L, BC_NANOSLEEP);
        op->a = a;
        return 1;
    }
    if (!strcmp(o, "shfl")) return lower_shfl(L);
    if (!strcmp(o, "vote")) return lower_vote(L);
    if (!strcmp(o, "elect")) return lower_elect(L);
    if (!strcmp(o, "setmaxnreg")) {
        /* a register-allocation hint for warpgroups: nothing to do on the
         * emulator, whose registers are not a shared resource */
        if (!mod_has(in, ".sync") || !mod_has(in, ".aligned") || !(mod_has(in, ".inc") || mod_has(in, ".dec"))) {
            lower_error(L, in->pos, "expected setmaxnreg.{inc,dec}.sync.aligned.u32 N");
            return 0;
        }
        if (!want_ops(L, 1, 1))
            return 0;
        if (OPS[0].kind != PTX_OP_IMM_INT || OPS[0].imm < 24 || OPS[0].imm > 256 || OPS[0].imm % 8) {
            lower_error(L, OPS[0].pos, "setmaxnreg takes a register count from 24 to 256, a multiple of 8");
            return 0;
        }
        lower_emit(L, BC_NOP);
        return 1;
    }
    if (!strcmp(o, "griddepcontrol")) {
        /* programmatic dependent launch: kemu runs a stream's grids one
         * after the other, so the prerequisite grid has finished (and its
         * memory is visible) before a dependent grid starts */
        if (!(mod_has(in, ".wait") || mod_has(in, ".launch_dependents"))) {
            lower_error(L, in->pos, "expected griddepcontrol.wait or .launch_dependents");
            return 0;
        }
        if (!want_ops(L, 0, 0))
            return 0;
        lower_emit(L, BC_NOP);
        return 1;
    }
    if (!strcmp(o, "match")) return lower_match(L);
    if (!strcmp(o, "redux")) return lower_redux(L);
    if (!strcmp(o, "mapa")) {
        if (!want_ops(L, 3, 3)) return 0;
        ptx_type ty = first_type(L);
        uint32_t d = lower_dst(L, &OPS[0]), a = lower_src(L, &OPS[1], ty), b = lower_src(L, &OPS[2], PTX_T_U32);
        if (!ok(L, d) || !ok(L, a) || !ok(L, b)) return 0;
        bc_op *op = lower_emit(L, BC_MAPA);
        op->type = (uint8_t)ty;
        op->d = d; op->a = a; op->b = b;
        op->mode = (uint16_t)mod_space(in);
        return 1;
    }
    if (!strcmp(o, "cp") && mod_has(in, ".async") && !mod_has(in, ".bulk"))
        return lower_cp_async(L);
    if (!strcmp(o, "cp") && mod_has(in, ".async") && mod_has(in, ".bulk"))
        return lower_cp_async_bulk(L);
    if (!strcmp(o, "mbarrier"))
        return lower_mbarrier(L);
    if (!strcmp(o, "tex") || !strcmp(o, "tld4") || !strcmp(o, "txq") || !strcmp(o, "suld") || !strcmp(o, "sust"))
        return lower_texture(L);
    if (!strcmp(o, "wmma") || !strcmp(o, "mma") || !strcmp(o, "ldmatrix") || !strcmp(o, "stmatrix") ||
        !strcmp(o, "wgmma"))
        return lower_matrix(L);
    if (!strcmp(o, "activemask")) {
        if (!want_ops(L, 1, 1)) return 0;
        uint32_t d = lower_dst(L, &OPS[0]);
        if (!ok(L, d)) return 0;
        bc_op *op = lower_emit(L, BC_ACTIVEMASK);
        op->d = d;
        return 1;
    }
    return unsupported(L);
}
