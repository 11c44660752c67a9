// A program that uses the runtime and the driver API together, as many
// do: they must see one device. Memory from cudaMalloc is filled with
// cuMemcpyHtoD and read by a <<<>>> kernel; memory from cuMemAlloc is
// written by a runtime kernel and read with cudaMemcpy; a kernel of a
// driver module (argv[1]: kernels.ptx) runs on a cudaStream_t; the
// runtime's primary context is the driver's current context; a failing
// driver call leaves cudaGetLastError alone; a fault seen by the driver is
// the runtime's sticky error too, until cudaDeviceReset, which unloads the
// driver's modules; cudaGetDriverEntryPoint hands out the driver's
// functions. Self-checking: prints PASS mixed.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

static int failures;
#define EXPECT(c)                                                                    \
    do {                                                                             \
        if (!(c)) {                                                                  \
            if (failures++ < 10)                                                     \
                printf("FAIL: %s:%d: expected %s\n", __FILE__, __LINE__, #c);        \
        }                                                                            \
    } while (0)

__global__ void add_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: mixed KERNELS.ptx\n");
        return 2;
    }
    const int n = 256;
    int h[n];
    for (int i = 0; i < n; i++)
        h[i] = i;
    int *rt = nullptr;
    EXPECT(cudaMalloc(&rt, n * sizeof(int)) == cudaSuccess);
    EXPECT(cuInit(0) == CUDA_SUCCESS);
    CUcontext cur = nullptr;
    EXPECT(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != nullptr);
    EXPECT(cuMemcpyHtoD((CUdeviceptr)rt, h, sizeof h) == CUDA_SUCCESS);
    add_one<<<1, n>>>(rt, n);
    EXPECT(cudaMemcpy(h, rt, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == i + 1);

    CUdeviceptr drv = 0;
    EXPECT(cuMemAlloc(&drv, n * sizeof(int)) == CUDA_SUCCESS);
    EXPECT(cudaMemset((void *)drv, 0, n * sizeof(int)) == cudaSuccess);
    add_one<<<1, n>>>((int *)drv, n);
    EXPECT(cudaMemcpy(h, (void *)drv, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < n; i++)
        EXPECT(h[i] == 1);
    cudaPointerAttributes attr;
    EXPECT(cudaPointerGetAttributes(&attr, (void *)drv) == cudaSuccess && attr.type == cudaMemoryTypeDevice);

    // a driver module's kernel on a runtime stream, on runtime memory
    CUmodule mod;
    CUfunction vadd;
    EXPECT(cuModuleLoad(&mod, argv[1]) == CUDA_SUCCESS);
    EXPECT(cuModuleGetFunction(&vadd, mod, "vadd") == CUDA_SUCCESS);
    float *fa, *fc;
    EXPECT(cudaMalloc(&fa, n * sizeof(float)) == cudaSuccess);
    EXPECT(cudaMalloc(&fc, n * sizeof(float)) == cudaSuccess);
    float hf[n];
    for (int i = 0; i < n; i++)
        hf[i] = 0.25f * i;
    EXPECT(cudaMemcpy(fa, hf, sizeof hf, cudaMemcpyHostToDevice) == cudaSuccess);
    cudaStream_t stream;
    EXPECT(cudaStreamCreate(&stream) == cudaSuccess);
    int nn = n;
    void *params[] = {&fa, &fa, &fc, &nn};
    EXPECT(cuLaunchKernel(vadd, 1, 1, 1, n, 1, 1, 0, (CUstream)stream, params, nullptr) == CUDA_SUCCESS);
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
    EXPECT(cudaMemcpy(hf, fc, sizeof hf, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < n; i++)
        EXPECT(hf[i] == 0.5f * i);

    // a failing driver call does not set the runtime's last error
    CUfunction missing;
    EXPECT(cuModuleGetFunction(&missing, mod, "missing") == CUDA_ERROR_NOT_FOUND);
    EXPECT(cudaGetLastError() == cudaSuccess);

    // a fault through a runtime launch is sticky for the driver too
    add_one<<<1, 1>>>((int *)16, 1);
    EXPECT(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CUdeviceptr later;
    EXPECT(cuMemAlloc(&later, 16) == CUDA_ERROR_ILLEGAL_ADDRESS);

    // cudaDeviceReset ends the fault, and the driver's modules go with the device
    EXPECT(cudaDeviceReset() == cudaSuccess);
    EXPECT(cudaFree(0) == cudaSuccess);
    EXPECT(cuModuleGetFunction(&missing, mod, "vadd") != CUDA_SUCCESS);
    // the runtime hands out the driver's functions
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    EXPECT(cudaGetDriverEntryPoint("cuMemAlloc", &fn, cudaEnableDefault, &found) == cudaSuccess);
    EXPECT(found == cudaDriverEntryPointSuccess && fn != nullptr);
    if (fn) {
        CUdeviceptr fresh = 0;
        EXPECT(((CUresult(*)(CUdeviceptr *, size_t))fn)(&fresh, 64) == CUDA_SUCCESS && fresh != 0);
        EXPECT(cudaFree((void *)fresh) == cudaSuccess);
    }
    printf("%s mixed\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
