/* Copy propagation over a lowered function (issue 27): fewer ops per
 * result. nvcc writes a `mov` for every bit cast around a shuffle
 * (`mov.b32 %r, %f` before `shfl.sync`, `mov.b32 %f, %r` after it) and
 * for every immediate it wants in a register (the shuffle's lane and
 * clamp, the address of a shared array); each costs a full lane loop in
 * the interpreter. This pass makes the readers of such a copy read its
 * source and deletes the copy when nothing else reads it.
 *
 * Only what is certain is changed:
 * - the copy is an unguarded MOV, and it is the only op that writes its
 *   destination register;
 * - a copy of a constant slot (an immediate) can be read anywhere, since
 *   the register can never hold another value once written;
 * - a copy of a register is forwarded only to readers in the same basic
 *   block, after the copy, with no write to the source in between, and
 *   only when those are all the readers the destination has;
 * - a reader is rewritten only where this file knows exactly which of its
 *   fields are register reads (the table below); any other op that names
 *   the register in a field counts as reading and writing it, and a
 *   register named in an operand list (vectors, matrices, textures) is
 *   never touched. Only kernels are changed, and not those that call,
 *   branch indirectly or have multi-slot registers (.b128, vectors).
 * Deleting ops renumbers the pcs of branch targets and labels. The
 * debugger turns the pass off (bc_optimize_set(0)), so that every PTX
 * register it shows holds what the PTX wrote; KEMU_OPTIMIZE=0 turns it off
 * too (to compare). */
#include "bc/bc.h"

#include <stdlib.h>
#include <string.h>

static int optimize_state = -1; /* -1: not decided yet (KEMU_OPTIMIZE), 0 off, 1 on */

void bc_optimize_set(int on) { optimize_state = on != 0; }

int bc_optimize_enabled(void)
{
    if (optimize_state < 0) {
        const char *v = getenv("KEMU_OPTIMIZE");
        const char *dbg = getenv("KEMU_DEBUG");
        optimize_state = !(v && !strcmp(v, "0")) && !(dbg && *dbg && strcmp(dbg, "0"));
    }
    return optimize_state;
}

/* Which fields of op are register reads and whether d is a register write,
 * for the ops whose fields this pass knows exactly. Returns 0 for any
 * other op. */
enum { R_A = 1, R_B = 2, R_C = 4, R_E = 8, W_D = 16 };
static int known_fields(const bc_op *op)
{
    switch ((bc_opcode)op->code) {
    case BC_MOV: case BC_ABS: case BC_NEG: case BC_NOT: case BC_CNOT: case BC_POPC: case BC_CLZ:
    case BC_BREV: case BC_BFIND: case BC_SZEXT: case BC_FABS: case BC_FNEG: case BC_FUNARY:
    case BC_CVT: case BC_CVTA:
        return R_A | W_D;
    case BC_ADD: case BC_SUB: case BC_MUL_LO: case BC_MUL_HI: case BC_MUL_WIDE: case BC_DIV: case BC_REM:
    case BC_MIN: case BC_MAX: case BC_AND: case BC_OR: case BC_XOR: case BC_SHL: case BC_SHR:
    case BC_BMSK: case BC_ADD_F32: case BC_MUL_F32: case BC_FADD: case BC_FSUB: case BC_FMUL:
    case BC_FDIV: case BC_FMIN: case BC_FMAX: case BC_COPYSIGN: case BC_MUL24:
        return R_A | R_B | W_D;
    case BC_MAD_LO: case BC_MAD_HI: case BC_MAD_WIDE: case BC_MAD24: case BC_SAD: case BC_FNS: case BC_BFE:
    case BC_PRMT: case BC_LOP3: case BC_SHF: case BC_FMA_F32: case BC_FFMA: case BC_SLCT:
        return R_A | R_B | R_C | W_D;
    case BC_BFI:
        return R_A | R_B | R_C | R_E | W_D;
    case BC_SELP: case BC_SET: /* c is a predicate */
        return R_A | R_B | W_D;
    case BC_SETP: /* d, e and c are predicates */
        return R_A | R_B;
    case BC_S2R: case BC_LD_KPARAM: case BC_LOCALADDR:
        return W_D;
    case BC_LD: /* a scalar load: a is the address, d the value */
        return op->n <= 1 ? R_A | W_D : 0;
    case BC_ST:
        return op->n <= 1 ? R_A | R_B : 0;
    case BC_VOTE: /* vote: a is a predicate, and d too except for a ballot;
                   * elect.sync: d is the leader, e a predicate, a = b */
        return op->mode == BC_VOTE_BALLOT ? R_B | W_D : op->mode == BC_VOTE_ELECT ? R_A | R_B | W_D : R_B;
    case BC_SHFL: /* the predicate output (if any) is in list */
        return R_A | R_B | R_C | R_E | W_D;
    case BC_BRA: case BC_EXIT: case BC_RET: case BC_NOP: case BC_FENCE: case BC_TRAP:
    case BC_PSETP: /* and/or/xor/not/set of predicates: every field is a predicate */
        return 0x100; /* known, touches no register */
    default:
        return 0;
    }
}

static uint32_t *field(bc_op *op, int bit)
{
    switch (bit) {
    case R_A: return &op->a;
    case R_B: return &op->b;
    case R_C: return &op->c;
    case R_E: return &op->e;
    default: return &op->d;
    }
}

/* Whether op may write slot s (exactly for known ops, any field naming it
 * otherwise). */
static int may_write(const bc_op *op, int known, uint32_t s)
{
    if (known)
        return (known & W_D) && op->d == s;
    return op->d == s || op->a == s || op->b == s || op->c == s || op->e == s;
}

/* Whether the pass may rewrite f's registers: kernels only (a .func's
 * parameters and return values are copied between frames by its callers,
 * outside the ops seen here), without calls, indirect branches or
 * multi-slot registers. */
static int registers_known(const bc_function *f)
{
    if (!f->is_entry || f->ncode < 2)
        return 0;
    const ptx_function *pf = f->ptx;
    for (int i = 0; pf && i < pf->nregs; i++)
        if (pf->regs[i]->type == PTX_T_B128 || pf->regs[i]->vec > 1)
            return 0;
    for (uint32_t pc = 0; pc < f->ncode; pc++) {
        bc_opcode c = (bc_opcode)f->code[pc].code;
        if (c == BC_CALL || c == BC_CALL_INDIRECT || c == BC_CALL_BUILTIN || c == BC_BRX)
            return 0;
    }
    return 1;
}

static void copy_propagate(bc_function *f)
{
    uint32_t n = f->nslots, ncode = f->ncode;
    unsigned char *flags = calloc(n ? n : 1, 1); /* 1: constant slot, 2: named in a list */
    uint32_t *uses = calloc(n ? n : 1, sizeof *uses), *defs = calloc(n ? n : 1, sizeof *defs);
    unsigned char *leader = calloc(ncode + 1, 1), *dead = calloc(ncode, 1);
    int *known = calloc(ncode, sizeof *known);
    if (!flags || !uses || !defs || !leader || !dead || !known)
        goto out;
    for (uint32_t i = 0; i < f->nconsts; i++)
        if (f->const_slots[i] < n)
            flags[f->const_slots[i]] |= 1;
    for (uint32_t i = 0; i < f->nlists; i++)
        if (f->lists[i] < n)
            flags[f->lists[i]] |= 2;
    leader[0] = 1;
    for (uint32_t i = 0; i < f->nlabels; i++)
        if (f->labels[i].pc <= ncode)
            leader[f->labels[i].pc] = 1;
    for (uint32_t pc = 0; pc < ncode; pc++) {
        bc_op *op = &f->code[pc];
        int k = known[pc] = known_fields(op);
        if (op->code == BC_BRA || op->code == BC_EXIT || op->code == BC_RET || op->code == BC_TRAP) {
            leader[pc + 1] = 1;
            if (op->code == BC_BRA && op->imm >= 0 && (uint64_t)op->imm <= ncode)
                leader[op->imm] = 1;
        }
        if (k) {
            for (int bit = R_A; bit <= R_E; bit <<= 1)
                if ((k & bit) && *field(op, bit) < n)
                    uses[*field(op, bit)]++;
            if ((k & W_D) && op->d < n)
                defs[op->d]++;
        } else {
            uint32_t fs[5] = { op->d, op->a, op->b, op->c, op->e };
            for (int i = 0; i < 5; i++)
                if (fs[i] < n) {
                    uses[fs[i]]++;
                    defs[fs[i]]++;
                }
        }
    }

    for (uint32_t pc = 0; pc < ncode; pc++) {
        bc_op *mv = &f->code[pc];
        if (mv->code != BC_MOV || mv->guard != BC_NONE || mv->d >= n || mv->a >= n || mv->d == mv->a)
            continue;
        uint32_t d = mv->d, s = mv->a;
        if (flags[d] || defs[d] != 1)
            continue;
        int from_const = flags[s] & 1;
        if (!from_const && (flags[s] & 2))
            continue;
        /* the readers to rewrite: for a constant, every reader in the
         * function; for a register, the rest of this block until s is
         * written again */
        uint32_t found = 0, end = ncode;
        int ok = 1;
        if (!from_const) {
            for (end = pc + 1; end < ncode && !leader[end]; end++)
                if (may_write(&f->code[end], known[end], s))
                    break;
            /* the op that writes s may read d first: include it */
            if (end < ncode && !leader[end])
                end++;
        }
        for (uint32_t q = from_const ? 0 : pc + 1; q < end && ok; q++) {
            bc_op *op = &f->code[q];
            if (q == pc || dead[q])
                continue;
            int k = known[q];
            if (!k) {
                if (op->d == d || op->a == d || op->b == d || op->c == d || op->e == d)
                    ok = 0;
                continue;
            }
            for (int bit = R_A; bit <= R_E; bit <<= 1)
                if ((k & bit) && *field(op, bit) == d)
                    found++;
        }
        if (!ok || found != uses[d])
            continue;
        for (uint32_t q = from_const ? 0 : pc + 1; q < end; q++) {
            bc_op *op = &f->code[q];
            if (q == pc || dead[q] || !known[q])
                continue;
            for (int bit = R_A; bit <= R_E; bit <<= 1)
                if ((known[q] & bit) && *field(op, bit) == d) {
                    *field(op, bit) = s;
                }
        }
        uses[s] += found;
        uses[d] = 0;
        dead[pc] = 1;
        uses[s]--; /* the copy itself no longer reads s */
    }

    /* delete the dead copies and renumber pcs */
    uint32_t *newpc = malloc((ncode + 1) * sizeof *newpc);
    if (!newpc)
        goto out;
    uint32_t at = 0;
    for (uint32_t pc = 0; pc < ncode; pc++) {
        newpc[pc] = at;
        if (!dead[pc])
            f->code[at++] = f->code[pc];
    }
    newpc[ncode] = at;
    if (at != ncode) {
        for (uint32_t pc = 0; pc < at; pc++)
            if (f->code[pc].code == BC_BRA && f->code[pc].imm >= 0 && (uint64_t)f->code[pc].imm <= ncode)
                f->code[pc].imm = newpc[f->code[pc].imm];
        for (uint32_t i = 0; i < f->nlabels; i++)
            if (f->labels[i].pc <= ncode)
                f->labels[i].pc = newpc[f->labels[i].pc];
        f->ncode = at;
    }
    free(newpc);
out:
    free(flags);
    free(uses);
    free(defs);
    free(leader);
    free(dead);
    free(known);
}

/* ---- fused op pairs ---------------------------------------------------------
 *
 * Two adjacent ops that nvcc writes together everywhere run as one in the
 * interpreter: a shuffle and the max/min/add that folds its result into a
 * value (the step of a __shfl_xor_sync or __shfl_down_sync reduction), and
 * a compare and the branch on its predicate. The fused form lives in
 * f->xcode, a copy of f->code of the same length in which the pair's first
 * op gets the fused opcode and keeps its fields, and the second op stays
 * where it was: no pc moves, a branch may still land on the second op
 * (though pairs are only made where none does), and where the fused form
 * cannot run (lanes missing from the warp, another group waiting at the
 * second op) the interpreter runs the first op as in f->code and goes on
 * to the second. Checkers and the debugger run f->code, so they see every
 * op and access as the PTX wrote them.
 *
 * SHFL_FOLD: an unguarded shfl whose lane and clamp operands and member
 * mask are constants and put every lane in range (clamp 31, or 0 for
 * shfl.up, no segments; its predicate output, if any, is then known),
 * followed by an
 * unguarded f32 max/min (the plain forms) or add, or a 32-bit integer
 * max/min/add (no .sat, .relu or third operand) that reads the shuffle's
 * result. When nothing else in the kernel reads the result (known only
 * where copy_propagate may rewrite registers), the shuffle's register is
 * not written at all (BC_F_D_DEAD).
 *
 * SETP_BRA: a setp followed by a guarded bra. The interpreter runs it as
 * a setp, whose run-time test chains into the bra: a test of its own in
 * the group loop changed the loop's code generation and cost more than
 * the test (docs/performance.md, code placement, round two). */

static int const_value(const bc_function *f, uint32_t slot, uint64_t *v)
{
    for (uint32_t i = 0; i < f->nconsts; i++)
        if (f->const_slots[i] == slot) {
            *v = f->const_values[i];
            return 1;
        }
    return 0;
}

static int fold_shuffle(const bc_function *f, const bc_op *op)
{
    uint64_t b, c, e;
    if (op->code != BC_SHFL || op->guard != BC_NONE || op->d == BC_NONE ||
        op->a == BC_NONE || !const_value(f, op->b, &b) || !const_value(f, op->c, &c) || !const_value(f, op->e, &e))
        return 0;
    (void)e;
    if ((c >> 8) & 31)
        return 0; /* segmented (width < 32) */
    return (c & 31) == (op->mode == BC_SHFL_UP ? 0u : 31u);
}

static int fold_combine(const bc_op *op, uint32_t d)
{
    if (op->guard != BC_NONE || op->c != BC_NONE || (op->a != d && op->b != d) || op->d == BC_NONE ||
        op->a == BC_NONE || op->b == BC_NONE)
        return 0;
    switch ((bc_opcode)op->code) {
    case BC_FMAX: case BC_FMIN:
        return op->type == PTX_T_F32 && !(op->flags & (BC_F_FTZ | BC_F_NAN | BC_F_ABS | BC_F_XORSIGN));
    case BC_ADD_F32:
        return 1;
    case BC_ADD:
        return ptx_type_size((ptx_type)op->type) == 4 && !(op->flags & BC_F_SAT);
    case BC_MAX: case BC_MIN:
        return ptx_type_size((ptx_type)op->type) == 4 && !(op->flags & BC_F_RELU);
    default:
        return 0;
    }
}

static void fuse_pairs(bc_function *f)
{
    uint32_t ncode = f->ncode, n = f->nslots;
    if (ncode < 2)
        return;
    unsigned char *leader = calloc(ncode + 1, 1);
    uint32_t *uses = NULL;
    unsigned char *listed = NULL;
    if (!leader)
        return;
    for (uint32_t i = 0; i < f->nlabels; i++)
        if (f->labels[i].pc <= ncode)
            leader[f->labels[i].pc] = 1;
    for (uint32_t pc = 0; pc < ncode; pc++) {
        const bc_op *op = &f->code[pc];
        if (op->code == BC_BRA && op->imm >= 0 && (uint64_t)op->imm <= ncode)
            leader[op->imm] = 1;
        if (op->code == BC_BRX)
            for (uint32_t i = 0; i < op->n; i++)
                if (f->lists[op->list + i] <= ncode)
                    leader[f->lists[op->list + i]] = 1;
    }
    if (registers_known(f)) {
        /* every read of each register slot, to tell a shuffle's result
         * that only the fused op reads */
        uses = calloc(n ? n : 1, sizeof *uses);
        listed = calloc(n ? n : 1, 1);
        if (!uses || !listed) {
            free(uses);
            free(listed);
            uses = NULL;
            listed = NULL;
        } else {
            for (uint32_t i = 0; i < f->nlists; i++)
                if (f->lists[i] < n)
                    listed[f->lists[i]] = 1;
            for (uint32_t pc = 0; pc < ncode; pc++) {
                bc_op *op = &f->code[pc];
                int k = known_fields(op);
                uint32_t fs[5] = { op->a, op->b, op->c, op->e, op->d };
                for (int i = 0; i < 5; i++) {
                    int bit = i == 4 ? W_D : R_A << i;
                    /* a field this file knows not to be a register read
                     * (a write, a predicate) does not count */
                    if (fs[i] < n && (!k || ((k & bit) && bit != W_D)))
                        uses[fs[i]]++;
                }
            }
        }
    }
    bc_op *x = NULL;
    for (uint32_t pc = 0; pc + 1 < ncode; pc++) {
        const bc_op *op = &f->code[pc], *next = &f->code[pc + 1];
        int code = 0;
        if (leader[pc + 1])
            continue;
        if (fold_shuffle(f, op) && fold_combine(next, op->d))
            code = BC_SHFL_FOLD;
        else if (op->code == BC_SETP && next->code == BC_BRA && next->guard != BC_NONE)
            code = BC_SETP_BRA;
        if (!code)
            continue;
        if (!x) {
            x = malloc(ncode * sizeof *x);
            if (!x)
                break;
            memcpy(x, f->code, ncode * sizeof *x);
        }
        x[pc].code = (uint16_t)code;
        if (code == BC_SHFL_FOLD && uses && op->d < n && !listed[op->d] &&
            uses[op->d] == (uint32_t)(next->a == op->d) + (uint32_t)(next->b == op->d))
            x[pc].flags |= BC_F_D_DEAD;
        pc++; /* the second op of a pair starts no other pair */
    }
    free(f->xcode);
    f->xcode = x;
    free(leader);
    free(uses);
    free(listed);
}

void bc_optimize_function(bc_function *f)
{
    if (!bc_optimize_enabled())
        return;
    if (registers_known(f))
        copy_propagate(f);
    fuse_pairs(f);
}
