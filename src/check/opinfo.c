/* Per-op facts that the checkers need but the bytecode does not carry:
 * the memory order of loads, stores and atomics (.acquire, .release,
 * .relaxed, .volatile), their scope, the kind of a cp.async group op
 * (commit, wait_group N, wait_all) and whether a barrier is aligned. They
 * are read once per launch from the PTX instruction each op was lowered
 * from (ops keep the line and column of their instruction). */
#include "check/check_internal.h"

#include <stdlib.h>
#include <string.h>

static int has(const ptx_insn *in, const char *m) { return ptx_insn_has_mod(in, m); }

static check_opinfo facts(const ptx_insn *in)
{
    check_opinfo o = {0, 0};
    const char *op = in->opcode;
    int acquire = has(in, ".acquire") || has(in, ".acq_rel");
    int release = has(in, ".release") || has(in, ".acq_rel");
    int narrow = has(in, ".cta") || has(in, ".cluster");
    if (!strcmp(op, "atom") || !strcmp(op, "red")) {
        o.flags |= CHECK_OP_STRONG;
    } else if (!strcmp(op, "ld") || !strcmp(op, "ldu") || !strcmp(op, "st")) {
        if (has(in, ".volatile") || has(in, ".relaxed") || has(in, ".mmio") || acquire || release)
            o.flags |= CHECK_OP_STRONG;
    } else if (!strcmp(op, "cp") && has(in, ".async")) {
        if (has(in, ".commit_group"))
            o.flags |= CHECK_OP_ASYNC_COMMIT;
        else if (has(in, ".wait_group")) {
            o.flags |= CHECK_OP_ASYNC_WAIT;
            if (in->nops >= 1 && in->ops[0].kind == PTX_OP_IMM_INT)
                o.wait = (uint8_t)(in->ops[0].imm > 255 ? 255 : in->ops[0].imm < 0 ? 0 : in->ops[0].imm);
        } else if (has(in, ".wait_all") || has(in, ".mbarrier"))
            o.flags |= CHECK_OP_ASYNC_ALL;
    } else if (!strcmp(op, "bar")) {
        if (!has(in, ".warp"))
            o.flags |= CHECK_OP_ALIGNED;
    } else if (!strcmp(op, "barrier")) {
        if (has(in, ".aligned"))
            o.flags |= CHECK_OP_ALIGNED;
    }
    if (acquire)
        o.flags |= CHECK_OP_ACQUIRE;
    if (release)
        o.flags |= CHECK_OP_RELEASE;
    if (narrow)
        o.flags |= CHECK_OP_NARROW_SCOPE;
    return o;
}

/* Marks the ops of a kernel from which every path reaches the kernel's
 * exit through branches only (the `return` of `if (i >= n) return;`):
 * lanes there do nothing more before they exit. A least fixed point, so
 * a loop of branches alone is not marked. */
static void exit_paths(const bc_function *fn, check_opinfo *v)
{
    if (!fn->is_entry)
        return;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t k = fn->ncode; k-- > 0;) {
            if (v[k].flags & CHECK_OP_EXIT_PATH)
                continue;
            const bc_op *op = &fn->code[k];
            int next = k + 1 < fn->ncode && (v[k + 1].flags & CHECK_OP_EXIT_PATH);
            int exits;
            switch (op->code) {
            case BC_EXIT:
            case BC_RET:
                exits = op->guard == BC_NONE || next;
                break;
            case BC_BRA: {
                uint32_t target = (uint32_t)op->imm;
                exits = target < fn->ncode && (v[target].flags & CHECK_OP_EXIT_PATH) &&
                        (op->guard == BC_NONE || next);
                break;
            }
            case BC_NOP:
                exits = next;
                break;
            default:
                exits = 0;
            }
            if (exits) {
                v[k].flags |= CHECK_OP_EXIT_PATH;
                changed = 1;
            }
        }
    }
}

static check_opinfo *function_facts(const bc_function *fn)
{
    check_opinfo *v = calloc(fn->ncode ? fn->ncode : 1, sizeof *v);
    if (!v)
        return v;
    if (!fn->ptx) {
        exit_paths(fn, v);
        return v;
    }
    const ptx_function *pf = fn->ptx;
    int cursor = 0;
    for (uint32_t k = 0; k < fn->ncode; k++) {
        const bc_op *op = &fn->code[k];
        if (op->src >= fn->nsrcs)
            continue;
        const bc_src *src = &fn->srcs[op->src];
        /* ops follow the order of the instructions they come from */
        int i = cursor;
        while (i < pf->nbody && !(pf->body[i].kind == PTX_STMT_INSN && pf->body[i].insn.pos.line == src->line &&
                                  pf->body[i].insn.pos.col == src->col))
            i++;
        if (i == pf->nbody)
            continue;
        cursor = i;
        v[k] = facts(&pf->body[i].insn);
    }
    exit_paths(fn, v);
    return v;
}

check_opinfo **check_opinfo_build(const bc_module *m)
{
    check_opinfo **ops = calloc((size_t)(m->nfunctions ? m->nfunctions : 1), sizeof *ops);
    if (!ops)
        return NULL;
    for (int i = 0; i < m->nfunctions; i++) {
        ops[i] = function_facts(m->functions[i]);
        if (!ops[i]) {
            check_opinfo_free(ops, m);
            return NULL;
        }
    }
    return ops;
}

void check_opinfo_free(check_opinfo **ops, const bc_module *m)
{
    if (!ops)
        return;
    for (int i = 0; i < m->nfunctions; i++)
        free(ops[i]);
    free(ops);
}
