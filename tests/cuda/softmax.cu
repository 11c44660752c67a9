// Row-wise softmax: one block per row, max and sum reductions in shared
// memory, expf and division; checked against a double-precision host
// softmax within float tolerance, plus rows summing to 1.
#include "check.h"

__global__ void softmax_rows(const float *in, float *out, int cols)
{
    extern __shared__ float red[];
    const float *row = in + blockIdx.x * cols;
    float *orow = out + blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        sum += expf(row[c] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        orow[c] = expf(row[c] - m) / sum;
}

int main()
{
    const int rows = 37, cols = 1000;
    float *in = new float[rows * cols], *out = new float[rows * cols];
    for (int i = 0; i < rows * cols; i++)
        in[i] = sinf((float)i * 0.37f) * 8.0f + (float)(i % 5);
    float *din, *dout;
    CHECK(cudaMalloc(&din, rows * cols * sizeof(float)));
    CHECK(cudaMalloc(&dout, rows * cols * sizeof(float)));
    CHECK(cudaMemcpy(din, in, rows * cols * sizeof(float), cudaMemcpyHostToDevice));
    softmax_rows<<<rows, 128, 128 * sizeof(float)>>>(din, dout, cols);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, rows * cols * sizeof(float), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < rows; r++) {
        double m = -1e300, sum = 0, total = 0;
        for (int c = 0; c < cols; c++)
            m = fmax(m, (double)in[r * cols + c]);
        for (int c = 0; c < cols; c++)
            sum += exp((double)in[r * cols + c] - m);
        for (int c = 0; c < cols; c++) {
            double want = exp((double)in[r * cols + c] - m) / sum;
            total += out[r * cols + c];
            if (!close_to(out[r * cols + c], want, 1e-5, 1e-9) && bad++ < 5)
                printf("row %d col %d: %g, expected %g\n", r, c, out[r * cols + c], want);
        }
        if (!close_to(total, 1.0, 1e-4) && bad++ < 5)
            printf("row %d sums to %g\n", r, total);
    }
    EXPECT(bad == 0);
    delete[] in;
    delete[] out;
    return finish("softmax");
}
