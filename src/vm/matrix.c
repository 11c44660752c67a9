/* Warp-wide matrix operations (wmma, mma.sync, ldmatrix, stmatrix). Not
 * implemented yet: the lowering refuses them, so this is never reached. */
#include "vm/vm_internal.h"

int vm_matrix_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    (void)op;
    return vm_fault_at(b, w, f, pc, (uint32_t)__builtin_ctz(m), 719, "matrix instructions are not implemented yet");
}
