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

// memcheck, device heap: every thread allocates four ints with malloc and
// frees them; thread `bad` of block 1 writes one element past the end.
extern "C" __global__ void heap_oob(int *out, unsigned bad)
{
    unsigned t = threadIdx.x;
    int *p = (int *)malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        p[i] = (int)t + i;
    if (blockIdx.x == 1 && t == bad)
        p[4] = 0;
    out[blockIdx.x * blockDim.x + t] = p[0] + p[3];
    free(p);
}

// memcheck, device heap: reads an allocation after freeing it.
extern "C" __global__ void heap_use_after_free(int *out)
{
    unsigned t = threadIdx.x;
    int *p = (int *)malloc(sizeof(int));
    *p = (int)t;
    free(p);
    out[t] = *(volatile int *)p;
}

// memcheck, device heap: thread 2 frees its allocation twice.
extern "C" __global__ void heap_double_free(int *out)
{
    unsigned t = threadIdx.x;
    int *p = (int *)malloc(sizeof(int));
    *p = (int)t;
    out[t] = *p;
    free(p);
    if (t == 2)
        free(p);
}

// memcheck, device heap: thread 1 frees a pointer into the middle of its
// allocation, thread 3 one that never came from malloc.
extern "C" __global__ void heap_invalid_free(int *out)
{
    unsigned t = threadIdx.x;
    int *p = (int *)malloc(4 * sizeof(int));
    p[0] = (int)t;
    out[t] = p[0];
    free(t == 1 ? p + 2 : t == 3 ? out : p);
}

// memcheck --leak-check full, device heap: thread 0 of each block keeps
// its allocation (publishes the pointer and never frees it).
extern "C" __global__ void heap_leak(unsigned long long *out, unsigned n)
{
    unsigned t = threadIdx.x;
    int *p = (int *)malloc(n);
    p[0] = (int)t;
    if (t == 0)
        out[blockIdx.x] = (unsigned long long)p;
    else
        free(p);
}

// memcheck, local memory: a per-thread array indexed by a parameter (idx
// 1 << 20 runs far past the thread's local memory).
extern "C" __global__ void local_oob(int *out, unsigned idx)
{
    volatile int a[16];
    unsigned t = threadIdx.x;
    for (int i = 0; i < 16; i++)
        a[i] = (int)(t + i);
    out[t] = a[idx];
}

// memcheck, constant memory: a __constant__ table indexed by a parameter.
__constant__ float table[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
extern "C" __global__ void const_oob(float *out, unsigned idx)
{
    unsigned t = threadIdx.x;
    out[t] = table[(idx + t) & 0xffff];
}

// memcheck, generic addresses: a generic store to an address in no state
// space (where) or to the thread's own output (where = 0).
extern "C" __global__ void generic_store(int *out, unsigned long long where)
{
    unsigned t = threadIdx.x;
    int *p = where ? (int *)(where + 4ull * t) : out + t;
    asm volatile("st.u32 [%0], %1;" ::"l"(p), "r"((int)t) : "memory");
}
