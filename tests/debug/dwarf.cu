// Source-level variables for the debugger's DWARF tests (built with
// nvcc -G, see regen.sh): parameters in parameter space and in
// registers, locals in registers and in local memory, a pointer, a
// struct, a loop variable that changes each iteration, a .func with its
// own parameters, and a block that shadows a name.
struct Pair {
    int a;
    float b;
};

__device__ __noinline__ int twice(int x)
{
    int y = x * 2;
    return y;
}

extern "C" __global__ void accumulate(float *out, const float *in, int n, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    int hist[4];
    Pair pr = {i, scale};
    const float *p = in + i;
    for (int j = 0; j < 3; j++) {
        hist[j] = i + j;
        acc += p[j] * scale;
    }
    hist[3] = twice(i);
    if (i < n) {
        int i = 7;
        out[blockIdx.x * blockDim.x + threadIdx.x] = acc + hist[i & 3] + pr.a;
    }
}
