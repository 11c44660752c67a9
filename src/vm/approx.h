/* The approximate f32 instructions as an NVIDIA H200 computes them (the
 * models and their accuracy: approx.c). NaN results are canonical. */
#ifndef KEMU_VM_APPROX_H
#define KEMU_VM_APPROX_H

float vm_approx_ex2(float x, int ftz); /* ex2.approx.f32, ex2.approx.ftz.f32 */
float vm_approx_lg2(float x);          /* lg2.approx.f32 */
float vm_approx_sin(float x);          /* sin.approx.f32 */
float vm_approx_cos(float x);          /* cos.approx.f32 */
float vm_approx_rsqrt(float x);        /* rsqrt.approx.f32 */
float vm_approx_rcp(float y);          /* rcp.approx.f32 (div.approx's reciprocal step) */
float vm_approx_div(float x, float y); /* div.approx.f32 */
float vm_approx_tanh(float x);         /* tanh.approx.f32 */

#endif
