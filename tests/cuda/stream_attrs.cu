// Stream attributes (cudaStreamSetAttribute / cudaStreamGetAttribute), as
// NVIDIA's simpleAttributes sets an L2 access policy window on a stream:
// the values set are read back per stream (the default stream has its own),
// the priority attribute is the stream's priority (clamped to the device's
// range as cudaStreamCreateWithPriority clamps it), the synchronization
// policy reads cudaSyncPolicyAuto until set, and invalid values are
// refused. kemu models no L2 persistence: a kernel launched into the stream
// runs as before, which is checked too.
#include <cuda_runtime.h>
#include "check.h"

__global__ void scale(float *x, int n, float f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= f;
}

int main()
{
    int dev = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    cudaStream_t s, t;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaStreamCreateWithPriority(&t, 0, 0));
    const int n = 1 << 16;
    float *x;
    CHECK(cudaMalloc(&x, n * sizeof(float)));

    cudaStreamAttrValue v = {};
    v.accessPolicyWindow.base_ptr = x;
    v.accessPolicyWindow.num_bytes = n * sizeof(float);
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    cudaStreamAttrValue r = {};
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &r));
    EXPECT(r.accessPolicyWindow.base_ptr == x);
    EXPECT(r.accessPolicyWindow.num_bytes == n * sizeof(float));
    EXPECT(r.accessPolicyWindow.hitRatio == 0.6f);
    EXPECT(r.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting);
    EXPECT(r.accessPolicyWindow.missProp == cudaAccessPropertyStreaming);
    // another stream keeps its own (none set)
    cudaStreamAttrValue z = {};
    CHECK(cudaStreamGetAttribute(t, cudaStreamAttributeAccessPolicyWindow, &z));
    EXPECT(z.accessPolicyWindow.base_ptr == NULL && z.accessPolicyWindow.num_bytes == 0);

    // synchronization policy: auto until set
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &r));
    EXPECT(r.syncPolicy == cudaSyncPolicyAuto);
    v.syncPolicy = cudaSyncPolicyYield;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &r));
    EXPECT(r.syncPolicy == cudaSyncPolicyYield);

    // priority: the stream's own, clamped to the device's range
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    v.priority = greatest - 10;
    CHECK(cudaStreamSetAttribute(t, cudaStreamAttributePriority, &v));
    int p = 1;
    CHECK(cudaStreamGetPriority(t, &p));
    EXPECT(p == greatest);
    CHECK(cudaStreamGetAttribute(t, cudaStreamAttributePriority, &r));
    EXPECT(r.priority == greatest);

    // the default stream
    v.accessPolicyWindow.hitRatio = 0.25f;
    CHECK(cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &v));
    CHECK(cudaStreamGetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &r));
    EXPECT(r.accessPolicyWindow.hitRatio == 0.25f);

    // refused: a hit ratio above 1, a window past the device's maximum, a
    // persisting miss, an attribute streams do not take, no value
    cudaStreamAttrValue bad = {};
    bad.accessPolicyWindow.base_ptr = x;
    bad.accessPolicyWindow.num_bytes = 4096;
    bad.accessPolicyWindow.hitRatio = 1.5f;
    EXPECT_ERROR(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &bad), cudaErrorInvalidValue);
    bad.accessPolicyWindow.hitRatio = 0.5f;
    bad.accessPolicyWindow.num_bytes = (size_t)prop.accessPolicyMaxWindowSize + 1;
    EXPECT_ERROR(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &bad), cudaErrorInvalidValue);
    bad.accessPolicyWindow.num_bytes = 4096;
    bad.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
    EXPECT_ERROR(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &bad), cudaErrorInvalidValue);
    EXPECT_ERROR(cudaStreamSetAttribute(s, (cudaStreamAttrID)cudaLaunchAttributeCooperative, &v),
                 cudaErrorInvalidValue);
    EXPECT_ERROR(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, NULL), cudaErrorInvalidValue);
    (void)cudaGetLastError(); // the refused calls set the last error, as on a GPU
    // the refused values left the stream's window as it was
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &r));
    EXPECT(r.accessPolicyWindow.hitRatio == 0.6f && r.accessPolicyWindow.num_bytes == n * sizeof(float));

    // work in the stream runs as before
    CHECK(cudaMemset(x, 0, n * sizeof(float)));
    float *h = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    CHECK(cudaMemcpyAsync(x, h, n * sizeof(float), cudaMemcpyHostToDevice, s));
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, n, 3.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h, x, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    int wrong = 0;
    for (int i = 0; i < n; i++)
        wrong += h[i] != 3.0f * (float)i;
    EXPECT(wrong == 0);
    // the reset that simpleAttributes does at the end
    v.accessPolicyWindow.num_bytes = 0;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    CHECK(cudaCtxResetPersistingL2Cache());

    free(h);
    CHECK(cudaFree(x));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(t));
    return finish("stream_attrs");
}
