/* Internal state of the PTX → bytecode lowering, shared by the files of
 * src/bc/ (lower.c: functions, operands and symbols; lower_insn.c: one
 * lowering per instruction family). */
#ifndef KEMU_BC_LOWER_INTERNAL_H
#define KEMU_BC_LOWER_INTERNAL_H

#include "bc/bc.h"
#include "util_map.h"
#include "ptx/diag.h"

typedef struct lower_label_ref { uint32_t op; const char *label; ptx_pos pos; int list_slot; } lower_label_ref;

typedef struct lowerer {
    bc_module *m;
    bc_function *fn;
    const ptx_function *pf;
    const ptx_insn *in;          /* instruction being lowered */
    uint32_t cur_src;
    uint32_t *reg_slot;          /* per ptx reg var index: slot (or pred slot) */
    uint64_t *local_off;         /* per function-local var index: frame offset / shared addr */
    util_map labels;             /* label name -> (op index + 1) */
    util_map tables;             /* .branchtargets name -> ptx_insn* */
    lower_label_ref *refs; size_t nrefs, caprefs;
    ptx_diag diag;
    int oom;
    const char *text; size_t textlen; /* not available: errors carry no source line */
    /* lower_const's index of fn's constants by value (open addressing,
     * UINT32_MAX empty), so that interning stays O(1) per constant */
    uint32_t *const_index; uint32_t const_index_cap;
    const bc_function *const_index_fn;
} lowerer;

void lower_error(lowerer *L, ptx_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Appends an op (guard and source filled from the current instruction). */
bc_op *lower_emit(lowerer *L, bc_opcode code);
uint32_t lower_temp(lowerer *L);
uint32_t lower_const(lowerer *L, uint64_t value);
uint32_t lower_list(lowerer *L, const uint32_t *slots, int n);
/* Operand helpers: return BC_NONE (after reporting) on error. */
uint32_t lower_src(lowerer *L, const ptx_operand *o, ptx_type ty);
uint32_t lower_dst(lowerer *L, const ptx_operand *o);
uint32_t lower_pred(lowerer *L, const ptx_operand *o);
uint32_t lower_pred_dst(lowerer *L, const ptx_operand *o);
/* Address operand [base+imm]: sets *slot (register or constant) and *imm,
 * and *space for symbol bases whose space is known (else unchanged). */
int lower_address(lowerer *L, const ptx_operand *o, int *space, uint32_t *slot, int64_t *imm);
/* BC_F_ADDR32 when address operand o's base is a 32-bit register (a
 * .shared, .local or .const address: base + imm wraps at 2^32), else 0. */
uint32_t lower_address_flags(const ptx_operand *o);
void lower_branch_ref(lowerer *L, uint32_t op, const char *label, ptx_pos pos, int list_slot);
const bc_symbol *lower_find_symbol(lowerer *L, const char *name);

/* Lowers tex, tld4, txq, suld and sust (lower_texture.c). */
int lower_texture(lowerer *L);

/* Lowers wmma.*, mma.sync, ldmatrix and stmatrix (lower_matrix.c). */
int lower_matrix(lowerer *L);

/* Lowers one instruction; returns 0 after reporting an error. */
int lower_instruction(lowerer *L, const ptx_insn *in);

/* modifier helpers */
int mod_has(const ptx_insn *in, const char *m);
/* The i-th type modifier of the instruction (0-based), or PTX_T_NONE. */
ptx_type mod_type(const ptx_insn *in, int i);
int mod_type_count(const ptx_insn *in);
int mod_rounding(const ptx_insn *in);
int mod_space(const ptx_insn *in);

#endif
