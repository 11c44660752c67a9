// scan: inclusive prefix sum of each 256-element block of an int array
// (block scan, Hillis-Steele in shared memory with double buffering).
// out[i] = in[b*256] + ... + in[i] for i in block b. Requires blockDim.x == 256.

#define BLOCK 256

extern "C" __global__ void block_scan(const int *in, int *out, unsigned n)
{
    __shared__ int buf[2][BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * BLOCK + t;
    int src = 0;
    buf[0][t] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned offset = 1; offset < BLOCK; offset <<= 1) {
        int v = buf[src][t];
        if (t >= offset)
            v += buf[src][t - offset];
        buf[1 - src][t] = v;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[src][t];
}
