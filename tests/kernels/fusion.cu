// fusion.cu - shuffle + max/min/add pairs that kemu runs fused
// (SHFL_FOLD, src/bc/optimize.c), written in inline PTX so that nvcc keeps
// each shuffle right before the op that reads its result.
//
// fold_full: each lane l of a warp with value a = in[i] (bit patterns)
//   out[8i+0] = max.f32(a, a[l^5])        result read only by the max
//   out[8i+1] = add.u32(s, a), s = a[l+3 if <= 31, else l] (shfl.down)
//   out[8i+2] = s                          the down shuffle's result, read again
//   out[8i+3] = min.s32(a[l-2 if l >= 2, else l], a)   (shfl.up, clamp 0)
//   out[8i+4] = min.f32(a[7], a)           (shfl.idx; the shuffle's result first)
//   out[8i+5] = add.f32(a, a[l^16])
//   out[8i+6] = max.u32(t, t), t = a[l^3]  (both operands the shuffle's result)
//   out[8i+7] = a[l^12] > a ? 1 : 0, from max.s32 then setp (the max's result)
// fold_divergent: lanes l < 16 of each warp (membermask 0xffff) as
//   out[4i+0] = max.f32(a, a[l^1]), out[4i+1] = add.u32(a, s) and
//   out[4i+2] = s with s = a[l^8], out[4i+3] = add.f32(a[l-2 if l >= 2, else l], a);
//   lanes l >= 16 write a, a + 1, a + 2, a + 3.

#define FULL "-1"

extern "C" __global__ void fold_full(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = in[i], r0, r1, s1, r3, r4, r5, r6, r7;
    asm volatile("{\n\t.reg .b32 s;\n\t"
                 "shfl.sync.bfly.b32 s, %1, 5, 31, " FULL ";\n\t"
                 "max.f32 %0, %1, s;\n\t}" : "=r"(r0) : "r"(a));
    asm volatile("shfl.sync.down.b32 %1, %2, 3, 31, " FULL ";\n\t"
                 "add.u32 %0, %1, %2;" : "=r"(r1), "=r"(s1) : "r"(a));
    asm volatile("{\n\t.reg .b32 s;\n\t"
                 "shfl.sync.up.b32 s, %1, 2, 0, " FULL ";\n\t"
                 "min.s32 %0, s, %1;\n\t}" : "=r"(r3) : "r"(a));
    asm volatile("{\n\t.reg .b32 s;\n\t"
                 "shfl.sync.idx.b32 s, %1, 7, 31, " FULL ";\n\t"
                 "min.f32 %0, s, %1;\n\t}" : "=r"(r4) : "r"(a));
    asm volatile("{\n\t.reg .b32 s;\n\t"
                 "shfl.sync.bfly.b32 s, %1, 16, 31, " FULL ";\n\t"
                 "add.f32 %0, %1, s;\n\t}" : "=r"(r5) : "r"(a));
    asm volatile("{\n\t.reg .b32 s;\n\t"
                 "shfl.sync.bfly.b32 s, %1, 3, 31, " FULL ";\n\t"
                 "max.u32 %0, s, s;\n\t}" : "=r"(r6) : "r"(a));
    asm volatile("{\n\t.reg .b32 s, m;\n\t.reg .pred p;\n\t"
                 "shfl.sync.bfly.b32 s, %1, 12, 31, " FULL ";\n\t"
                 "max.s32 m, %1, s;\n\t"
                 "setp.ne.s32 p, m, %1;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(r7) : "r"(a));
    out[8 * i + 0] = r0;
    out[8 * i + 1] = r1;
    out[8 * i + 2] = s1;
    out[8 * i + 3] = r3;
    out[8 * i + 4] = r4;
    out[8 * i + 5] = r5;
    out[8 * i + 6] = r6;
    out[8 * i + 7] = r7;
}

extern "C" __global__ void fold_divergent(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = in[i], r0 = a, r1 = a + 1, s1 = a + 2, r3 = a + 3;
    if ((threadIdx.x & 31) < 16) {
        asm volatile("{\n\t.reg .b32 s;\n\t"
                     "shfl.sync.bfly.b32 s, %1, 1, 31, 0xffff;\n\t"
                     "max.f32 %0, %1, s;\n\t}" : "=r"(r0) : "r"(a));
        asm volatile("shfl.sync.bfly.b32 %1, %2, 8, 31, 0xffff;\n\t"
                     "add.u32 %0, %2, %1;" : "=r"(r1), "=r"(s1) : "r"(a));
        asm volatile("{\n\t.reg .b32 s;\n\t"
                     "shfl.sync.up.b32 s, %1, 2, 0, 0xffff;\n\t"
                     "add.f32 %0, s, %1;\n\t}" : "=r"(r3) : "r"(a));
    }
    out[4 * i + 0] = r0;
    out[4 * i + 1] = r1;
    out[4 * i + 2] = s1;
    out[4 * i + 3] = r3;
}
