// A CUDA program for `kemu debug exec` (tests/debug/run.sh): launches
// dbg.cu's saxpy and checks the result.
#include <cstdio>

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y);

int main()
{
    const int n = 64;
    float hx[n], hy[n];
    for (int i = 0; i < n; i++) {
        hx[i] = (float)i;
        hy[i] = 1.0f;
    }
    float *x, *y;
    cudaMalloc(&x, sizeof hx);
    cudaMalloc(&y, sizeof hy);
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice);
    saxpy<<<1, n>>>(n, 2.0f, x, y);
    cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += hy[i] != 2.0f * i + 1.0f + 1.0f;
    printf("app: %s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
