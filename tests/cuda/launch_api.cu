// Launch paths other than <<<>>>: cudaLaunchKernel with an argument array,
// cudaLaunchKernelEx (cudaLaunchKernelExC) with a configuration struct,
// kernels taking structs and arrays by value, many parameters, templates,
// and launches on a kernel chosen at run time.
#include "check.h"
#include <cstring>

struct Params {
    int a;
    double b;
    char tag[3];
    float v[4];
};

__global__ void by_value(Params p, int *out)
{
    out[0] = p.a;
    out[1] = (int)(p.b * 10.0);
    out[2] = p.tag[0] + p.tag[1] + p.tag[2];
    out[3] = (int)(p.v[0] + p.v[1] + p.v[2] + p.v[3]);
}

__global__ void many(int *out, char c, short s, int i, long long l, float f, double d, unsigned u, bool flag,
                     unsigned char uc, const int *nothing)
{
    out[0] = c + s + i + (int)l + (int)f + (int)d + (int)u + flag + uc + (nothing == nullptr);
}

template <typename T, int N>
__global__ void fill_const(T *p)
{
    p[threadIdx.x] = (T)(N * (int)threadIdx.x);
}

__global__ void add_one(int *p) { p[threadIdx.x] += 1; }
__global__ void add_two(int *p) { p[threadIdx.x] += 2; }

int main()
{
    int *out, h[32];
    CHECK(cudaMalloc(&out, sizeof h));
    Params p = {7, 4.25, {'a', 'b', 'c'}, {1.5f, 2.5f, 3.0f, 4.0f}};
    void *args1[] = {&p, &out};
    CHECK(cudaLaunchKernel((const void *)by_value, dim3(1), dim3(1), args1, 0, 0));
    CHECK(cudaMemcpy(h, out, 4 * sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 7 && h[1] == 42 && h[2] == 'a' + 'b' + 'c' && h[3] == 11);

    many<<<1, 1>>>(out, (char)1, (short)2, 3, 4LL, 5.5f, 6.5, 7u, true, (unsigned char)8, nullptr);
    CHECK(cudaMemcpy(h, out, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 1 + 2 + 3 + 4 + 5 + 6 + 7 + 1 + 8 + 1);

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributePriority;
    attr[0].val.priority = 0;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, fill_const<int, 3>, out));
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 32; i++)
        EXPECT(h[i] == 3 * i);
    fill_const<float, 2><<<1, 32>>>((float *)out);
    float hf[32];
    CHECK(cudaMemcpy(hf, out, sizeof hf, cudaMemcpyDeviceToHost));
    EXPECT(hf[31] == 62.0f);

    void (*kernels[2])(int *) = {add_one, add_two};
    CHECK(cudaMemset(out, 0, sizeof h));
    for (int r = 0; r < 5; r++) {
        void *args2[] = {&out};
        CHECK(cudaLaunchKernel((const void *)kernels[r % 2], dim3(1), dim3(32), args2, 0, 0));
    }
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 1 + 2 + 1 + 2 + 1);
    EXPECT_ERROR(cudaLaunchKernel((const void *)main, dim3(1), dim3(1), nullptr, 0, 0), NOT_A_KERNEL_ERROR);
    // cudaGetKernel: the kernel handle of a host stub, which launches it too
    cudaKernel_t handle = nullptr;
    CHECK(cudaGetKernel(&handle, add_two));
    EXPECT(handle != nullptr);
    CHECK(cudaMemset(out, 0, sizeof h));
    void *args3[] = {&out};
    CHECK(cudaLaunchKernel((const void *)handle, dim3(1), dim3(32), args3, 0, 0));
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    EXPECT(h[0] == 2);
    const char *name = nullptr;
    CHECK(cudaFuncGetName(&name, add_two));
    EXPECT(name && !strcmp(name, "_Z7add_twoPi"));
    return finish("launch_api");
}
