/* The f32 fused multiply-add lane loop, compiled twice: with the FMA
 * instruction set for hosts that have it (chosen once at run time), and
 * portably through fmaf. Both give the correctly rounded result. */
#include "vm/vm_internal.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static void fma_lanes_hw(uint64_t *D, const uint64_t *A, const uint64_t *B,
                                                          const uint64_t *C, uint32_t m)
{
    LANES(m, D[l] = vm_f32_bits(vm_canon_f32(__builtin_fmaf(vm_f32_from_bits((uint32_t)A[l]),
                                                              vm_f32_from_bits((uint32_t)B[l]),
                                                              vm_f32_from_bits((uint32_t)C[l])))));
}
#endif

static void fma_lanes_sw(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C, uint32_t m)
{
    LANES(m, D[l] = vm_f32_bits(vm_canon_f32(fmaf(vm_f32_from_bits((uint32_t)A[l]), vm_f32_from_bits((uint32_t)B[l]),
                                                  vm_f32_from_bits((uint32_t)C[l])))));
}

void vm_fma_f32_lanes(uint64_t *D, const uint64_t *A, const uint64_t *B, const uint64_t *C, uint32_t m)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int has_fma = -1;
    if (has_fma < 0)
        has_fma = __builtin_cpu_supports("fma") ? 1 : 0;
    if (has_fma) {
        fma_lanes_hw(D, A, B, C, m);
        return;
    }
#endif
    fma_lanes_sw(D, A, B, C, m);
}
