// saxpy: y = a*x + y over n floats, one thread per element.
//
// The launch may cover more threads than elements (n need not be a multiple
// of the block size); the i < n guard keeps the extra threads idle.

extern "C" __global__ void saxpy(unsigned n, float a, const float *x, float *y)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
