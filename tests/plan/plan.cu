// Kernels for the launch-plan unit tests (tests/unit/test_plan.c): one
// parameter of every operand kind, an output aliased to its input, and a
// kernel that faults on request.

// in: x; out: y = a * x + b; inout: acc += x; scratch: a global buffer the
// kernel writes then reads back; smem: the shared-space address of a SHARED
// operand (a .u32 parameter); a, n: values.
extern "C" __global__ void operands(const float *x, float *y, float *acc, float *scratch, unsigned smem, float a,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float *s = (float *)__cvta_shared_to_generic(smem);
    if (threadIdx.x < 32)
        s[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    if (i < n) {
        scratch[i] = x[i] + s[threadIdx.x % 32];
        y[i] = a * x[i] + (scratch[i] - x[i]);
        acc[i] += x[i];
    }
}

// The output shares the input's buffer: y[i] = 2 * x[i] in place.
extern "C" __global__ void twice(const int *x, int *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2 * x[i];
}

// Writes out[i] = i, then thread 0 of the last block stores far past the
// end of out when fault is nonzero.
extern "C" __global__ void maybe_fault(int *out, int n, int fault)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i;
    if (fault && i == n - 1)
        out[n + (1 << 24)] = 1;
}
