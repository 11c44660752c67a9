// Kernels of the fidelity report's tests (tests/unit/test_exec.c,
// fidelity_*): each of the n threads runs one ex2.approx (__expf), one
// sin.approx (__sinf), one div.approx (__fdividef) and one float atomicAdd;
// thread 0 alone reads clock64(); the rest is exact arithmetic and memory.
extern "C" __global__ void fidelity_mix(float *out, float *sum, long long *clk, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = out[i] * 0.001f;
    out[i] = __expf(x) + __sinf(x) + __fdividef(x, 3.0f);
    atomicAdd(sum, x);
    if (i == 0)
        *clk = clock64();
}

// Every thread writes the same word: a race racecheck reports.
extern "C" __global__ void fidelity_race(int *word)
{
    *word = threadIdx.x;
}
