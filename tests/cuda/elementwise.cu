// Elementwise kernels with tails: saxpy over sizes that are not multiples of
// the block size, a grid-stride loop, and a vectorized float4 path with a
// scalar tail. Self-checking against the host.
#include "check.h"

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void scale_grid_stride(int n, float s, float *x)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] * s + 1.0f;
}

__global__ void add_vec4(int n, const float *a, const float *b, float *c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (i < n4) {
        float4 x = reinterpret_cast<const float4 *>(a)[i];
        float4 y = reinterpret_cast<const float4 *>(b)[i];
        reinterpret_cast<float4 *>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    int tail = n4 * 4 + i;
    if (i < n % 4 && tail < n)
        c[tail] = a[tail] + b[tail];
}

int main()
{
    const int sizes[] = {1, 31, 255, 256, 1000, 4099};
    for (int n : sizes) {
        float *hx = new float[n], *hy = new float[n], *out = new float[n];
        for (int i = 0; i < n; i++) {
            hx[i] = (float)i * 0.5f;
            hy[i] = (float)(n - i);
        }
        float *dx, *dy;
        CHECK(cudaMalloc(&dx, n * sizeof(float)));
        CHECK(cudaMalloc(&dy, n * sizeof(float)));
        CHECK(cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dy, hy, n * sizeof(float), cudaMemcpyHostToDevice));
        saxpy<<<(n + 127) / 128, 128>>>(n, 2.0f, dx, dy);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            if (out[i] != 2.0f * hx[i] + hy[i]) {
                printf("saxpy n=%d: y[%d] = %g, expected %g\n", n, i, out[i], 2.0f * hx[i] + hy[i]);
                failures++;
                break;
            }
        scale_grid_stride<<<3, 64>>>(n, 0.25f, dx);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out, dx, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            if (out[i] != hx[i] * 0.25f + 1.0f) {
                printf("grid-stride n=%d: x[%d] = %g\n", n, i, out[i]);
                failures++;
                break;
            }
        float *dc;
        CHECK(cudaMalloc(&dc, n * sizeof(float)));
        CHECK(cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));
        add_vec4<<<(n / 4 + 63) / 64 + 1, 64>>>(n, dx, dy, dc);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(out, dc, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            if (out[i] != hx[i] + 2.0f * hx[i] + hy[i]) {
                printf("vec4 n=%d: c[%d] = %g\n", n, i, out[i]);
                failures++;
                break;
            }
        CHECK(cudaFree(dx));
        CHECK(cudaFree(dy));
        CHECK(cudaFree(dc));
        delete[] hx;
        delete[] hy;
        delete[] out;
    }
    return finish("elementwise");
}
