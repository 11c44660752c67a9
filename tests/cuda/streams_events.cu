// Streams and events: streams with flags and priorities, async copies and
// launches on several streams, cross-stream dependencies with
// cudaStreamWaitEvent, event timing with cudaEventElapsedTime, queries,
// host callbacks in stream order, and handle errors.
#include "check.h"
#include <atomic>

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}

__global__ void add_from(int *dst, const int *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] += src[i];
}

// host functions of different streams may run on different threads
static std::atomic<int> callback_order[4];
static std::atomic<int> callback_count;

static void CUDART_CB host_fn(void *user)
{
    callback_order[callback_count++] = *(int *)user;
}

static void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void *user)
{
    if (status == cudaSuccess)
        callback_order[callback_count++] = *(int *)user;
}

// the position of tag in callback_order, or -1
static int callback_position(int tag)
{
    for (int i = 0; i < callback_count; i++)
        if (callback_order[i] == tag)
            return i;
    return -1;
}

int main()
{
    const int n = 4096;
    cudaStream_t s1, s2, s3;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int least, greatest;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(cudaStreamCreateWithPriority(&s3, cudaStreamDefault, greatest));
    unsigned flags = 7;
    int prio = 1;
    CHECK(cudaStreamGetFlags(s2, &flags));
    CHECK(cudaStreamGetPriority(s3, &prio));
    EXPECT(flags == cudaStreamNonBlocking);
    EXPECT(prio == greatest);
    unsigned long long id1 = 0, id2 = 0;
    int dev = -1;
    CHECK(cudaStreamGetId(s1, &id1));
    CHECK(cudaStreamGetId(s2, &id2));
    EXPECT(id1 != id2);
    CHECK(cudaStreamGetDevice(s1, &dev));
    EXPECT(dev == 0);
    EXPECT(cudaStreamGetFlags(s1, NULL) == cudaErrorInvalidValue);
    EXPECT(cudaGetLastError() == cudaErrorInvalidValue);

    int *h, *a, *b;
    CHECK(cudaMallocHost(&h, n * sizeof(int)));
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    cudaEvent_t start, stop, b_ready;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventCreateWithFlags(&b_ready, cudaEventDisableTiming));

    CHECK(cudaEventRecord(start, s1));
    fill<<<(n + 255) / 256, 256, 0, s1>>>(a, n, 1000);
    fill<<<(n + 255) / 256, 256, 0, s2>>>(b, n, 5);
    CHECK(cudaEventRecord(b_ready, s2));
    CHECK(cudaStreamWaitEvent(s1, b_ready, 0));
    add_from<<<(n + 255) / 256, 256, 0, s1>>>(a, b, n);
    CHECK(cudaMemcpyAsync(h, a, n * sizeof(int), cudaMemcpyDeviceToHost, s1));
    int tags[3] = {1, 2, 3};
    CHECK(cudaLaunchHostFunc(s1, host_fn, &tags[0]));
    CHECK(cudaStreamAddCallback(s1, stream_callback, &tags[1], 0));
    CHECK(cudaLaunchHostFunc(s3, host_fn, &tags[2]));
    CHECK(cudaEventRecord(stop, s1));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(s1));
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    EXPECT(ms >= 0.0f);
    EXPECT_ERROR(cudaEventElapsedTime(&ms, start, b_ready), cudaErrorInvalidResourceHandle);
    EXPECT_ERROR(cudaStreamQuery(s1), cudaSuccess);
    EXPECT_ERROR(cudaEventQuery(stop), cudaSuccess);
    CHECK(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != 1000 + i + 5 + i && bad++ < 3)
            printf("h[%d] = %d\n", i, h[i]);
    EXPECT(bad == 0);
    // s1's host function and callback run in s1's order; s3's runs at any time
    // (on an H200 it ran first)
    EXPECT(callback_count == 3 && callback_position(1) >= 0 && callback_position(1) < callback_position(2) &&
           callback_position(3) >= 0);

    // the default stream and the per-thread stream handle work too
    fill<<<1, 32, 0, cudaStreamPerThread>>>(a, 32, 1);
    CHECK(cudaMemsetAsync(b, 0, n * sizeof(int), 0));
    CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaStreamDestroy(s3));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(b_ready));
    CHECK(cudaFreeHost(h));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return finish("streams_events");
}
