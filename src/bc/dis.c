/* The bytecode disassembler behind `kemu dis`: one line per op with its
 * operands (shape from opcodes.def), and the PTX line (and CUDA file:line
 * from .loc) it came from. */
#include "bc/bc.h"

#include <string.h>

static void slot(util_buffer *b, const bc_function *fn, uint32_t s)
{
    if (s == BC_NONE) {
        util_buffer_printf(b, "_");
        return;
    }
    for (uint32_t i = 0; i < fn->nconsts; i++)
        if (fn->const_slots[i] == s) {
            util_buffer_printf(b, "#0x%llx", (unsigned long long)fn->const_values[i]);
            return;
        }
    util_buffer_printf(b, "r%u", s);
}

static const char *const space_names[] = {"generic", "global", "shared", "shared::cluster", "local", "const",
                                          "param", "param::func"};
static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
                                        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const rnd_names[] = {"", "rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi",
                                        "approx", "full"};
static const char *const special_names[] = {
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid",
    "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock", "%clock_hi",
    "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%dynamic_smem_size",
    "%total_smem_size", "%aggr_smem_size", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
    "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster", "%envreg", "%pm", "(zero)"};

/* The op's modes as readable modifiers (.global, .lt, .rz, %tid.x ...). */
static void describe_mode(util_buffer *b, const bc_op *op)
{
    switch (op->code) {
    case BC_LD: case BC_ST: case BC_ATOM: case BC_CP_ASYNC: case BC_MBARRIER: case BC_CVTA: case BC_ISSPACEP:
    case BC_MAPA:
        if (op->mode < KEMU_ARRAY_LEN(space_names))
            util_buffer_printf(b, " .%s", space_names[op->mode]);
        if ((op->code == BC_LD || op->code == BC_ST) && op->n > 1)
            util_buffer_printf(b, " .v%u", op->n);
        if (op->code == BC_CVTA)
            util_buffer_printf(b, op->mode2 ? " to-generic" : " from-generic");
        if (op->code == BC_ATOM)
            util_buffer_printf(b, " op%u", op->mode2);
        return;
    case BC_SETP: case BC_SET: case BC_SETP_BRA:
        if (op->mode < KEMU_ARRAY_LEN(cmp_names))
            util_buffer_printf(b, " .%s", cmp_names[op->mode]);
        if (op->mode2)
            util_buffer_printf(b, " %s", op->mode2 == BC_BOOL_AND ? ".and" : op->mode2 == BC_BOOL_OR ? ".or" : ".xor");
        return;
    case BC_S2R:
        if (op->mode < KEMU_ARRAY_LEN(special_names))
            util_buffer_printf(b, " = %s.%c", special_names[op->mode], "xyzw"[op->n & 3]);
        return;
    case BC_CVT: case BC_FADD: case BC_FSUB: case BC_FMUL: case BC_FFMA: case BC_FDIV:
        if (op->code == BC_CVT)
            util_buffer_printf(b, " from %s", ptx_type_name((ptx_type)op->type2));
        if (op->mode && op->mode < KEMU_ARRAY_LEN(rnd_names))
            util_buffer_printf(b, " .%s", rnd_names[op->mode]);
        return;
    default:
        if (op->mode)
            util_buffer_printf(b, " mode=%u", op->mode);
        if (op->mode2)
            util_buffer_printf(b, " mode2=%u", op->mode2);
        if (op->code == BC_SHFL_FOLD && (op->flags & BC_F_D_DEAD))
            util_buffer_printf(b, " (d not written)");
        return;
    }
}

void bc_disassemble(const bc_module *m, const bc_function *fn, util_buffer *b)
{
    util_buffer_printf(b, "%s %s: %u ops, %u register slots (%u constants), %u predicates, %llu bytes of local frame\n",
                       fn->is_entry ? ".entry" : ".func", fn->name, fn->ncode, fn->nslots, fn->nconsts, fn->npreds,
                       (unsigned long long)fn->local_size);
    int last_line = -1;
    /* the form the interpreter runs: with fused pairs (optimize.c), whose
     * second op is marked with a '+' */
    const bc_op *code = fn->xcode ? fn->xcode : fn->code;
    for (uint32_t pc = 0; pc < fn->ncode; pc++) {
        const bc_op *op = &code[pc];
        int second = pc > 0 && (code[pc - 1].code == BC_SHFL_FOLD || code[pc - 1].code == BC_SETP_BRA);
        const bc_src *src = op->src < fn->nsrcs ? &fn->srcs[op->src] : NULL;
        util_buffer_printf(b, "  %5u %c", pc, second ? '+' : ' ');
        size_t start = b->len;
        if (op->guard != BC_NONE)
            util_buffer_printf(b, "@%sp%u ", (op->flags & BC_F_GUARD_NEG) ? "!" : "", op->guard);
        util_buffer_printf(b, "%s", bc_opcode_names[op->code]);
        if (op->type)
            util_buffer_printf(b, "%s", ptx_type_name((ptx_type)op->type));
        const char *shape = bc_opcode_shapes[op->code];
        int first = 1;
        const uint32_t fields[] = {op->d, op->a, op->b, op->c};
        int fi = 0;
        for (const char *s = shape; *s; s++) {
            util_buffer_printf(b, first ? " " : ", ");
            first = 0;
            switch (*s) {
            case 'd': case 'a': case 'b': case 'c':
                slot(b, fn, fields[*s - 'a' < 0 ? 0 : (*s == 'd' ? 0 : *s - 'a' + 1)]);
                fi++;
                break;
            case 'e': slot(b, fn, op->e); break;
            case 'P': {
                uint32_t v = fi == 0 ? op->d : fi == 1 ? op->a : fi == 2 ? op->b : op->c;
                if (v == BC_NONE) util_buffer_printf(b, "_"); else util_buffer_printf(b, "p%u", v);
                fi++;
                break;
            }
            case 'i': util_buffer_printf(b, "%lld", (long long)op->imm); break;
            case 't': util_buffer_printf(b, "-> %lld", (long long)op->imm); break;
            case 'm':
                util_buffer_printf(b, "[");
                slot(b, fn, op->a);
                util_buffer_printf(b, "%+lld]", (long long)op->imm);
                fi++;
                break;
            case 'l':
                util_buffer_printf(b, "{");
                for (int i = 0; i < op->n; i++) {
                    if (i) util_buffer_printf(b, ", ");
                    if (op->code == BC_BRX) util_buffer_printf(b, "%u", fn->lists[op->list + (uint32_t)i]);
                    else slot(b, fn, fn->lists[op->list + (uint32_t)i]);
                }
                util_buffer_printf(b, "}");
                break;
            default: break;
            }
        }
        if (op->code == BC_CALL || op->code == BC_CALL_BUILTIN)
            util_buffer_printf(b, " (%s)", m->functions[op->imm]->name);
        describe_mode(b, op);
        if (src && src->line != last_line) {
            size_t w = b->len - start;
            for (; w < 48; w++)
                util_buffer_append(b, " ", 1);
            util_buffer_printf(b, " ; %s:%d", m->ptx->filename, src->line);
            if (src->loc_file > 0) {
                const char *cu = NULL;
                for (int i = 0; i < m->ptx->nfiles; i++)
                    if (m->ptx->files[i].id == src->loc_file)
                        cu = m->ptx->files[i].path;
                if (cu)
                    util_buffer_printf(b, " (%s:%d)", cu, src->loc_line);
            }
            last_line = src->line;
        }
        util_buffer_printf(b, "\n");
    }
}
