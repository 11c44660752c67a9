// Built with only a cubin (-gencode arch=compute_80,code=sm_80, no PTX):
// kemu cannot run it. Under kemu the launch must fail cleanly with
// cudaErrorNoKernelImageForDevice and a message telling how to embed PTX
// (tests/cuda/run.sh checks the message); on a GPU the kernel runs.
#include "check.h"

__global__ void k(int *p)
{
    *p = 42;
}

int main()
{
    int *d, h = 0;
    CHECK(cudaMalloc(&d, sizeof(int)));
    k<<<1, 1>>>(d);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
        EXPECT(h == 42);
    } else {
        EXPECT(e == cudaErrorNoKernelImageForDevice);
        printf("launch failed: %s\n", cudaGetErrorName(e));
    }
    return finish("cubin_only");
}
