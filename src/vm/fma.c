/* The f32 fused multiply-add lane loop, compiled three times: for a full
 * warp with AVX2 and FMA (8 lanes per instruction), with the FMA
 * instruction set lane by lane, and portably through fmaf; the host's
 * choice is made once at run time. All give the correctly rounded result. */
#include "vm/vm_internal.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

__attribute__((target("fma"))) static void fma_lanes_hw(uint64_t *D, const uint64_t *A, const uint64_t *B,
                                                          const uint64_t *C, uint32_t m)
{
    LANES(m, D[l] = vm_f32_bits(vm_canon_f32(__builtin_fmaf(vm_f32_from_bits((uint32_t)A[l]),
                                                              vm_f32_from_bits((uint32_t)B[l]),
                                                              vm_f32_from_bits((uint32_t)C[l])))));
}

/* The low 32 bits of 8 consecutive 64-bit register slots as 8 floats. */
__attribute__((target("avx2,fma"))) static inline __m256 low_f32x8(const uint64_t *p)
{
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m256i lo = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)p), pick);
    __m256i hi = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(p + 4)), pick);
    return _mm256_castsi256_ps(_mm256_permute2x128_si256(lo, hi, 0x20));
}

/* Every lane of a warp, 8 at a time: the same correctly rounded fmaf, NaN
 * results replaced by the canonical NaN, zero-extended into the slots. */
__attribute__((target("avx2,fma"))) static void fma_full_avx2(uint64_t *D, const uint64_t *A, const uint64_t *B,
                                                               const uint64_t *C)
{
    const __m256 canon = _mm256_castsi256_ps(_mm256_set1_epi32((int)VM_F32_CANONICAL_NAN));
    for (int l = 0; l < VM_WARP; l += 8) {
        __m256 r = _mm256_fmadd_ps(low_f32x8(A + l), low_f32x8(B + l), low_f32x8(C + l));
        r = _mm256_blendv_ps(r, canon, _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
        __m256i bits = _mm256_castps_si256(r);
        _mm256_storeu_si256((__m256i *)(D + l), _mm256_cvtepu32_epi64(_mm256_castsi256_si128(bits)));
        _mm256_storeu_si256((__m256i *)(D + l + 4), _mm256_cvtepu32_epi64(_mm256_extracti128_si256(bits, 1)));
    }
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
    static int has_fma = -1, has_avx2 = 0;
    if (has_fma < 0) {
        has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        has_fma = __builtin_cpu_supports("fma") ? 1 : 0;
    }
    if (has_avx2 && m == VM_FULL) {
        fma_full_avx2(D, A, B, C);
        return;
    }
    if (has_fma) {
        fma_lanes_hw(D, A, B, C, m);
        return;
    }
#endif
    fma_lanes_sw(D, A, B, C, m);
}
