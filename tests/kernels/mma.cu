// Tensor-core matrix multiply: nvcuda::wmma fragments (f16, int8 on all
// targets; bf16 and tf32 on sm_80+), raw mma.sync and ldmatrix via inline
// asm. Each kernel is one warp (32 threads, 1 block) computing one tile;
// all matrices are row-major and densely packed.

#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// wmma_f16_f32: d(16x16 f32) = a(16x16 f16) * b(16x16 f16) + c(16x16 f32).
extern "C" __global__ void wmma_f16_f32(const __half *a, const __half *b, const float *c, float *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// wmma_f16_f16_colb: d(16x16 f16) = a(16x16 f16) * b(16x16 f16, column-major) with an f16 accumulator starting at zero.
extern "C" __global__ void wmma_f16_f16_colb(const __half *a, const __half *b, __half *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
    wmma::fill_fragment(acc, __float2half(0.0f));
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// wmma_s8_s32: d(16x16 s32) = a(16x16 s8) * b(16x16 s8) (accumulator zero-filled).
extern "C" __global__ void wmma_s8_s32(const signed char *a, const signed char *b, int *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::fill_fragment(acc, 0);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// ldmatrix_x4: a 16x16 f16 tile in shared memory is loaded with ldmatrix.sync.aligned.m8n8.x4.shared.b16; out[4*lane + k] = the 4 b32 registers each lane receives.
extern "C" __global__ void ldmatrix_x4(const __half *a, unsigned *out)
{
    __shared__ __align__(16) __half tile[16 * 16];
    unsigned lane = threadIdx.x;
    for (int k = lane; k < 256; k += 32)
        tile[k] = a[k];
    __syncwarp();
    // lanes 0-15 give the rows of the left 8 columns, lanes 16-31 the right 8 columns
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(lane % 16) * 16 + (lane / 16) * 8]);
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    out[4 * lane + 0] = r0; out[4 * lane + 1] = r1;
    out[4 * lane + 2] = r2; out[4 * lane + 3] = r3;
}

// ldmatrix_trans: as ldmatrix_x4 but with .trans (x2: two 8x8 matrices, rows from lanes 0-15); out[2*lane + k].
extern "C" __global__ void ldmatrix_trans(const __half *a, unsigned *out)
{
    __shared__ __align__(16) __half tile[16 * 8];
    unsigned lane = threadIdx.x;
    for (int k = lane; k < 128; k += 32)
        tile[k] = a[k];
    __syncwarp();
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(lane % 16) * 8]);
    unsigned r0, r1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r0), "=r"(r1) : "r"(addr));
    out[2 * lane + 0] = r0; out[2 * lane + 1] = r1;
}

// mma_m16n8k8_f16: raw mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 (sm_75+): d(16x8 f32) = a(16x8 f16) * b(8x8 f16) + 0, fragments gathered per the PTX ISA lane layout.
extern "C" __global__ void mma_m16n8k8_f16(const __half *a, const __half *b, float *d)
{
    unsigned lane = threadIdx.x, g = lane / 4, q = lane % 4;
    // A fragment: a0,a1 = row g, cols 2q,2q+1; a2,a3 = row g+8
    __half2 a01 = __halves2half2(a[g * 8 + 2 * q], a[g * 8 + 2 * q + 1]);
    __half2 a23 = __halves2half2(a[(g + 8) * 8 + 2 * q], a[(g + 8) * 8 + 2 * q + 1]);
    // B fragment: b0,b1 = rows 2q,2q+1 of column g
    __half2 b01 = __halves2half2(b[(2 * q) * 8 + g], b[(2 * q + 1) * 8 + g]);
    unsigned ra0 = *(unsigned *)&a01, ra1 = *(unsigned *)&a23, rb = *(unsigned *)&b01;
    float d0, d1, d2, d3, z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3) : "r"(ra0), "r"(ra1), "r"(rb), "f"(z));
    // C/D fragment: d0,d1 = row g cols 2q,2q+1; d2,d3 = row g+8
    d[g * 8 + 2 * q] = d0; d[g * 8 + 2 * q + 1] = d1;
    d[(g + 8) * 8 + 2 * q] = d2; d[(g + 8) * 8 + 2 * q + 1] = d3;
}

#if __CUDA_ARCH__ >= 800  /* bf16 / tf32 wmma and mma m16n8k16 need sm_80 */
// wmma_bf16_f32: (sm_80) d(16x16 f32) = a(16x16 bf16) * b(16x16 bf16) + c(16x16 f32).
extern "C" __global__ void wmma_bf16_f32(const __nv_bfloat16 *a, const __nv_bfloat16 *b, const float *c, float *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// wmma_tf32_f32: (sm_80) d(16x16 f32) = a(16x8 f32 as tf32) * b(8x16 f32 as tf32) + 0 (m16n16k8, inputs rounded with __float_to_tf32).
extern "C" __global__ void wmma_tf32_f32(const float *a, const float *b, float *d)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    for (int k = 0; k < fa.num_elements; k++)
        fa.x[k] = wmma::__float_to_tf32(fa.x[k]);
    for (int k = 0; k < fb.num_elements; k++)
        fb.x[k] = wmma::__float_to_tf32(fb.x[k]);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

// mma_m16n8k16_f16: (sm_80) raw mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: d(16x8 f32) = a(16x16 f16) * b(16x8 f16) + c(16x8 f32).
extern "C" __global__ void mma_m16n8k16_f16(const __half *a, const __half *b, const float *c, float *d)
{
    unsigned lane = threadIdx.x, g = lane / 4, q = lane % 4;
    unsigned ra[4], rb[2];
    // A: a0..a7 = (row g, cols 2q..2q+1), (row g+8, same), (row g, cols 2q+8..+9), (row g+8, same)
    for (int k = 0; k < 4; k++) {
        unsigned row = g + (k & 1) * 8, col = 2 * q + (k >> 1) * 8;
        __half2 h = __halves2half2(a[row * 16 + col], a[row * 16 + col + 1]);
        ra[k] = *(unsigned *)&h;
    }
    // B: b0..b3 = (rows 2q..2q+1, col g), (rows 2q+8..+9, col g)
    for (int k = 0; k < 2; k++) {
        unsigned row = 2 * q + k * 8;
        __half2 h = __halves2half2(b[row * 8 + g], b[(row + 1) * 8 + g]);
        rb[k] = *(unsigned *)&h;
    }
    float c0 = c[g * 8 + 2 * q], c1 = c[g * 8 + 2 * q + 1];
    float c2 = c[(g + 8) * 8 + 2 * q], c3 = c[(g + 8) * 8 + 2 * q + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]),
                   "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    d[g * 8 + 2 * q] = d0; d[g * 8 + 2 * q + 1] = d1;
    d[(g + 8) * 8 + 2 * q] = d2; d[(g + 8) * 8 + 2 * q + 1] = d3;
}
#endif
