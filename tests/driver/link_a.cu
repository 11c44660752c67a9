// First of the two PTX modules that drv_link.c links with cuLink*: it calls
// twice(), which only link_b.cu defines (an .extern function in this PTX).
extern "C" __device__ float twice(float v);

extern "C" __global__ void apply(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = twice(x[i]) + 1.0f;
}
