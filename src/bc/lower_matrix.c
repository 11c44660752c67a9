/* Lowering of the warp-wide matrix instructions: wmma.load/store/mma,
 * mma.sync, ldmatrix and stmatrix. Not implemented yet: they are refused
 * at load time with a clear message. */
#include "bc/lower_internal.h"

#include <stdio.h>

int lower_matrix(lowerer *L)
{
    char full[256];
    size_t n = (size_t)snprintf(full, sizeof full, "%s", L->in->opcode);
    for (int i = 0; i < L->in->nmods && n < sizeof full; i++)
        n += (size_t)snprintf(full + n, sizeof full - n, "%s", L->in->mods[i]);
    lower_error(L, L->in->pos, "unsupported instruction '%s' (not implemented yet)", full);
    return 0;
}
