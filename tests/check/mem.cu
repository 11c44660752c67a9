// Kernels for memcheck and initcheck, each error with a correct twin.
// Launched by the e2e cases tests/e2e/cases/check-mem-* and
// check-init-*, and by tests/unit/test_check.c. Regenerate with regen.sh.

// Threads write n elements past the end of out when n is too large.
extern "C" __global__ void oob_write(float *out, unsigned n)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = 1.0f;
}

extern "C" __global__ void oob_read(const float *in, float *out, unsigned n)
{
    unsigned t = threadIdx.x;
    out[t] = in[t + n];
}

// A 4-byte load from an address that is not 4-byte aligned.
extern "C" __global__ void misaligned(const char *in, float *out, unsigned offset)
{
    unsigned t = threadIdx.x;
    out[t] = *(const float *)(in + offset + 4 * t);
}

// Dynamic shared memory indexed past its size.
extern "C" __global__ void shared_oob(float *out, unsigned n)
{
    extern __shared__ float dyn[];
    unsigned t = threadIdx.x;
    dyn[t + n] = 1.0f;
    __syncthreads();
    out[t] = dyn[t];
}

// initcheck: shared memory read before anyone wrote it.
extern "C" __global__ void shared_uninit(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    if (t < 32)
        s[t] = 1.0f;
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void shared_init(float *out)
{
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = 1.0f;
    __syncthreads();
    out[t] = s[63 - t];
}

// initcheck: reads the whole input; the host wrote only part of it.
extern "C" __global__ void global_read(const float *in, float *out)
{
    unsigned t = threadIdx.x;
    out[t] = in[t] * 2.0f;
}
