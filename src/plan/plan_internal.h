/* What the plan room (src/plan/) shares between its files and with the
 * tests: the PTX rewrite that lets a GPU find SHARED operands. */
#ifndef KEMU_PLAN_INTERNAL_H
#define KEMU_PLAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* One kernel parameter, for plan_wrap_shared. */
typedef struct plan_wrap_param {
    const char *name;      /* the PTX parameter name */
    size_t size;           /* 4 or 8 bytes */
    int smem;              /* a SHARED operand */
    uint64_t smem_offset;  /* its offset from the 128-aligned start of the dynamic shared memory */
} plan_wrap_param;

/* Rewrites PTX text so that the entry `kernel` finds its SHARED operands
 * itself (src/plan/wrap.c says how): the result, in *out (the caller frees
 * it), takes the same launch arguments, with the SHARED ones ignored.
 * Returns 0, or -1 with the reason in msg. */
int plan_wrap_shared(const char *text, size_t len, const char *kernel, int nparams, const plan_wrap_param *params,
                     char **out, size_t *out_len, char *msg, size_t msg_len);

#endif
