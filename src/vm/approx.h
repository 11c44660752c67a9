/* The approximate f32 instructions as an NVIDIA H200 computes them (the
 * models and their accuracy: approx.c). NaN results are canonical. */
#ifndef KEMU_VM_APPROX_H
#define KEMU_VM_APPROX_H

#include "vm/numeric.h"

#include <math.h>
#include <stdint.h>

/* ex2.approx.f32 (ftz 0) and ex2.approx.ftz.f32 (ftz 1), inline for
 * softmax and exp(): the common case (a normal result) on integers, the
 * rest in vm_approx_ex2_slow (the same values for every input) */
extern const double vm_approx_ex2_tab[64][3];
float vm_approx_ex2_slow(float x, int ftz);
static inline float vm_approx_ex2(float x, int ftz)
{
    if (ftz && fabsf(x) < 0x1p-126f)
        x = 0.0f; /* a flushed input: 2^0 */
    if (x > -126.0f && x < 128.0f) {
        /* x to fixed point with 23 fraction bits (magnitude truncated, one's
         * complement when negative): I + f; the mantissa is the table's
         * quadratic over f's segment, truncated to 23 bits */
        int64_t mag = (int64_t)(fabsf(x) * 8388608.0f);
        int64_t fx = x < 0 ? -mag - 1 : mag;
        int64_t I = fx >> 23;
        uint32_t fb = (uint32_t)(fx & 0x7fffff);
        const double *c = vm_approx_ex2_tab[fb >> 17];
        double d = (double)(fb & 0x1ffff) / 8388608.0;
        int64_t m = (int64_t)((c[0] + c[1] * d + c[2] * (d * d)) * 8388608.0);
        if (m >= (1 << 23) && m < (1 << 24) && I > -127) {
            return vm_f32_from_bits((uint32_t)(I + 127) << 23 | (uint32_t)(m - (1 << 23)));
        }
    }
    return vm_approx_ex2_slow(x, ftz);
}
float vm_approx_lg2(float x);          /* lg2.approx.f32 */
float vm_approx_sin(float x);          /* sin.approx.f32 */
float vm_approx_cos(float x);          /* cos.approx.f32 */
float vm_approx_rsqrt(float x);        /* rsqrt.approx.f32 */
float vm_approx_rcp(float y);          /* rcp.approx.f32 (div.approx's reciprocal step) */
float vm_approx_div(float x, float y); /* div.approx.f32 */
float vm_approx_tanh(float x);         /* tanh.approx.f32 */

#endif
