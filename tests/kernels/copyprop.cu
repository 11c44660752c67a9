// copyprop.cu - register copies that kemu's copy propagation
// (src/bc/optimize.c) must forward only where the value is the same, written
// in inline PTX so that nvcc keeps them exactly as they are.
//
// copy_cases: for each thread i, with a = in[i] and odd = i & 1,
//   out[5i+0] = t + a'       t = a, then a' = a + 1 (the source is written
//                            after the copy and before the read): 2a + 1
//   out[5i+1] = t + a''      t = a, then a branch; a'' = a + 7 on odd lanes
//                            only (the reader is in another block)
//   out[5i+2] = t + 1        t = a, then t = 5 on odd lanes (a second,
//                            guarded write of the copy): odd ? 6 : a + 1
//   out[5i+3] = t + a'''     t = a, then a''' = a * 3 on odd lanes by a
//                            guarded write of the source: odd ? 4a : 2a
//   out[5i+4] = k * a + k    k = 9 (a copy of an immediate) read twice: 9a + 9
// warp_bitcast_sum: out[i] = sum over the warp of in[] (f32), by shuffles
// with nvcc's own mov.b32 bit casts around each.

extern "C" __global__ void copy_cases(const unsigned *in, unsigned *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = in[i], odd = i & 1, r0, r1, r2, r3, r4;
    unsigned a0 = a, a1 = a, a3 = a;
    asm volatile("{\n\t.reg .b32 t;\n\t"
                 "mov.b32 t, %1;\n\t"
                 "add.u32 %1, %1, 1;\n\t"
                 "add.u32 %0, t, %1;\n\t}"
                 : "=r"(r0), "+r"(a0));
    asm volatile("{\n\t.reg .b32 t;\n\t.reg .pred p;\n\t"
                 "mov.b32 t, %1;\n\t"
                 "setp.eq.u32 p, %2, 0;\n\t"
                 "@p bra SKIP;\n\t"
                 "add.u32 %1, %1, 7;\n"
                 "SKIP:\n\t"
                 "add.u32 %0, t, %1;\n\t}"
                 : "=r"(r1), "+r"(a1) : "r"(odd));
    asm volatile("{\n\t.reg .b32 t;\n\t.reg .pred p;\n\t"
                 "mov.b32 t, %1;\n\t"
                 "setp.ne.u32 p, %2, 0;\n\t"
                 "@p mov.b32 t, 5;\n\t"
                 "add.u32 %0, t, 1;\n\t}"
                 : "=r"(r2) : "r"(a), "r"(odd));
    asm volatile("{\n\t.reg .b32 t;\n\t.reg .pred p;\n\t"
                 "mov.b32 t, %1;\n\t"
                 "setp.ne.u32 p, %2, 0;\n\t"
                 "@p mul.lo.u32 %1, %1, 3;\n\t"
                 "add.u32 %0, t, %1;\n\t}"
                 : "=r"(r3), "+r"(a3) : "r"(odd));
    asm volatile("{\n\t.reg .b32 k;\n\t"
                 "mov.b32 k, 9;\n\t"
                 "mad.lo.u32 %0, k, %1, k;\n\t}"
                 : "=r"(r4) : "r"(a));
    out[5 * i + 0] = r0;
    out[5 * i + 1] = r1;
    out[5 * i + 2] = r2;
    out[5 * i + 3] = r3;
    out[5 * i + 4] = r4;
}

extern "C" __global__ void warp_bitcast_sum(const float *in, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    out[i] = v;
}
