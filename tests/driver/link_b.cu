// Second module linked by drv_link.c: defines the function link_a.cu calls.
extern "C" __device__ float twice(float v)
{
    return 2.0f * v;
}
