/* Lowering of texture and surface instructions on bindless objects:
 * tex{.level,.grad}.{1d,2d,3d,a1d,a2d,cube,acube}.v4.dtype.ctype,
 * tld4.{r,g,b,a}.{2d,a2d,cube,acube}, txq{.level}.query,
 * suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.type.{trap,clamp,zero} and sust.b
 * likewise. The op's list holds the result (or stored) registers, then
 * the coordinates (the layer index of array geometries first, as .u32),
 * then tex.level's level of detail or tex.grad's dPdx and dPdy; the
 * object handle is operand a; counts are packed into imm (bc.h). */
#include "bc/lower_internal.h"

#include <string.h>

static int geom_of(const ptx_insn *in)
{
    if (mod_has(in, ".1d")) return BC_GEOM_1D;
    if (mod_has(in, ".2d")) return BC_GEOM_2D;
    if (mod_has(in, ".3d")) return BC_GEOM_3D;
    if (mod_has(in, ".a1d")) return BC_GEOM_A1D;
    if (mod_has(in, ".a2d")) return BC_GEOM_A2D;
    if (mod_has(in, ".cube")) return BC_GEOM_CUBE;
    if (mod_has(in, ".acube")) return BC_GEOM_ACUBE;
    return 0;
}

static int refuse(lowerer *L, const char *why)
{
    lower_error(L, L->in->pos, "unsupported instruction form: %s (not implemented yet)", why);
    return 0;
}

int lower_texture(lowerer *L)
{
    const ptx_insn *in = L->in;
    const char *o = in->opcode;
    uint32_t slots[16];
    int n = 0;
    int sub = !strcmp(o, "tex") ? BC_TEX_TEX : !strcmp(o, "tld4") ? BC_TEX_TLD4 : !strcmp(o, "txq") ? BC_TEX_TXQ
            : !strcmp(o, "suld") ? BC_TEX_SULD : BC_TEX_SUST;
    if (sub == BC_TEX_TXQ) {
        static const char *const q[] = {".width", ".height", ".depth", ".channel_data_type", ".channel_order",
                                        ".normalized_coords", ".filter_mode", ".addr_mode_0", ".addr_mode_1",
                                        ".addr_mode_2", ".num_mipmap_levels", ".num_samples", ".array_size"};
        int which = -1;
        for (int i = 0; i < 13; i++)
            if (mod_has(in, q[i]))
                which = i;
        int level = mod_has(in, ".level");
        if (which < 0 || in->nops != 2 + level || in->ops[1].kind != PTX_OP_ADDRESS || !in->ops[1].base)
            return refuse(L, "txq needs a query and [object] (txq.level: and a level)");
        if (level && which > 2)
            return refuse(L, "txq.level queries other than width, height and depth");
        uint32_t d = lower_dst(L, &in->ops[0]);
        uint32_t a = lower_src(L, in->ops[1].base, PTX_T_B64);
        uint32_t lod = level ? lower_src(L, &in->ops[2], PTX_T_S32) : BC_NONE;
        if (d == BC_NONE || a == BC_NONE || (level && lod == BC_NONE))
            return 0;
        bc_op *op = lower_emit(L, BC_TEXTURE);
        op->mode2 = BC_TEX_TXQ;
        op->a = a;
        op->b = lod;
        op->d = d;
        op->imm = which | (int64_t)level << 24;
        return 1;
    }
    int geom = geom_of(in);
    if (!geom)
        return refuse(L, "texture geometry other than 1d, 2d, 3d, a1d, a2d, cube or acube");
    if ((sub == BC_TEX_TLD4 && geom != BC_GEOM_2D && geom != BC_GEOM_A2D && geom != BC_GEOM_CUBE &&
         geom != BC_GEOM_ACUBE) ||
        ((sub == BC_TEX_SULD || sub == BC_TEX_SUST) && (geom == BC_GEOM_CUBE || geom == BC_GEOM_ACUBE)))
        return refuse(L, "this geometry with this instruction");
    int store = sub == BC_TEX_SUST;
    int level = sub == BC_TEX_TEX && mod_has(in, ".level");
    int grad = sub == BC_TEX_TEX && mod_has(in, ".grad");
    if (in->nops != 2 + level + 2 * grad)
        return refuse(L, "texture offsets, depth compare and residency predicates");
    const ptx_operand *vals = store ? &in->ops[1] : &in->ops[0];
    const ptx_operand *addr = store ? &in->ops[0] : &in->ops[1];
    if (in->nops < 2 || addr->kind != PTX_OP_ADDRESS || !addr->base || addr->nelems < 1 ||
        addr->elems[addr->nelems - 1].kind != PTX_OP_VECTOR)
        return refuse(L, "texture address must be [object, {coordinates}]");
    const ptx_operand *coords = &addr->elems[addr->nelems - 1];
    ptx_type dty = mod_type(in, 0), cty = mod_type(in, 1);
    if (sub == BC_TEX_SULD || sub == BC_TEX_SUST) {
        cty = PTX_T_S32;
        if (!mod_has(in, ".b"))
            return refuse(L, "formatted surface access (.p)");
    }
    int nvals = vals->kind == PTX_OP_VECTOR ? vals->nelems : 1;
    int arrayed = geom == BC_GEOM_A1D || geom == BC_GEOM_A2D || geom == BC_GEOM_ACUBE;
    static const int needed[] = {0, 1, 2, 3, 2, 3, 3, 4}; /* coordinates (with the layer) per geometry */
    if (nvals > 4 || coords->nelems > 4 || coords->nelems < needed[geom])
        return refuse(L, "texture operand counts");
    for (int i = 0; i < nvals; i++) {
        const ptx_operand *v = vals->kind == PTX_OP_VECTOR ? &vals->elems[i] : vals;
        slots[n] = store ? lower_src(L, v, dty) : lower_dst(L, v);
        if (slots[n++] == BC_NONE)
            return 0;
    }
    int ncoord = needed[geom];
    for (int i = 0; i < ncoord; i++) {
        slots[n] = lower_src(L, &coords->elems[i], arrayed && i == 0 ? PTX_T_U32 : cty);
        if (slots[n++] == BC_NONE)
            return 0;
    }
    /* tex.grad: dPdx and dPdy have one element per coordinate (cube: 3 of 4) */
    int ngrad = 0;
    if (level) {
        slots[n] = lower_src(L, &in->ops[2], cty == PTX_T_S32 ? PTX_T_S32 : PTX_T_F32);
        if (slots[n++] == BC_NONE)
            return 0;
    } else if (grad) {
        ngrad = ncoord - arrayed;
        for (int g = 0; g < 2; g++) {
            const ptx_operand *v = &in->ops[2 + g];
            int have = v->kind == PTX_OP_VECTOR ? v->nelems : 1;
            if (have < ngrad)
                return refuse(L, "tex.grad gradient vectors shorter than the coordinates");
            for (int i = 0; i < ngrad; i++) {
                slots[n] = lower_src(L, v->kind == PTX_OP_VECTOR ? &v->elems[i] : v, PTX_T_F32);
                if (slots[n++] == BC_NONE)
                    return 0;
            }
        }
    }
    uint32_t a = lower_src(L, addr->base, PTX_T_B64);
    if (a == BC_NONE)
        return 0;
    bc_op *op = lower_emit(L, BC_TEXTURE);
    op->mode2 = (uint16_t)sub;
    op->mode = (uint16_t)geom;
    op->type = (uint8_t)dty;
    op->type2 = (uint8_t)cty;
    op->a = a;
    op->list = lower_list(L, slots, n);
    op->n = (uint16_t)n;
    op->src_size = (uint16_t)nvals;
    /* tld4 component, surface out-of-range mode */
    int64_t low = 0;
    if (sub == BC_TEX_TLD4)
        low = mod_has(in, ".g") ? 1 : mod_has(in, ".b") ? 2 : mod_has(in, ".a") ? 3 : 0;
    else if (sub == BC_TEX_SULD || sub == BC_TEX_SUST)
        low = mod_has(in, ".clamp") ? 1 : mod_has(in, ".zero") ? 2 : 0;
    op->imm = low | (int64_t)ncoord << 8 | (int64_t)ngrad << 16 | (int64_t)level << 24;
    return 1;
}
