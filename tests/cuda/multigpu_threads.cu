// Two devices driven by two host threads (`kemu exec --devices 2`), each
// with its own stream, events and memory. The devices run concurrently:
// first a handshake, where the kernel of each device stores a flag into the
// other device's memory (peer access) and then waits for the other kernel's
// flag in its own memory, which can only end if both kernels run at the
// same time; then each thread computes its vector with a chain of kernels
// and copies on its stream, checked against the CPU.
#include <cstring>
#include <pthread.h>
#include <cuda_runtime.h>

#include "check.h"

__global__ void handshake(int *mine, int *theirs)
{
    *(volatile int *)theirs = 1;
    __threadfence_system();
    long long spins = 0;
    while (*(volatile int *)mine == 0)
        spins++;
    *(volatile int *)mine = 2; // seen
}

__global__ void init_kernel(float *v, int n, int seed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = (float)((i * 37 + seed * 11) % 97) / 8.0f;
}

__global__ void step_kernel(float *v, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = v[i] * a + 1.0f;
}

static const int N = 50000;
static const int STEPS = 4;

struct worker {
    int device;
    int *flag_mine, *flag_theirs;
    float *result; // host, N values
    cudaError_t error;
    int stream_device;
    float elapsed;
};

static void *run(void *arg)
{
    worker *w = (worker *)arg;
    cudaError_t e = cudaSetDevice(w->device);
    cudaStream_t stream = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    float *v = NULL;
    if (!e)
        e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (!e)
        e = cudaStreamGetDevice(stream, &w->stream_device);
    if (!e)
        e = cudaEventCreate(&start);
    if (!e)
        e = cudaEventCreate(&stop);
    if (!e)
        e = cudaMalloc(&v, N * sizeof(float));
    if (!e) {
        handshake<<<1, 1, 0, stream>>>(w->flag_mine, w->flag_theirs);
        e = cudaGetLastError();
    }
    if (!e)
        e = cudaStreamSynchronize(stream);
    if (!e)
        e = cudaEventRecord(start, stream);
    if (!e) {
        init_kernel<<<(N + 255) / 256, 256, 0, stream>>>(v, N, w->device);
        for (int s = 0; s < STEPS; s++)
            step_kernel<<<(N + 255) / 256, 256, 0, stream>>>(v, N, 0.5f + 0.25f * w->device);
        e = cudaGetLastError();
    }
    if (!e)
        e = cudaEventRecord(stop, stream);
    if (!e)
        e = cudaMemcpyAsync(w->result, v, N * sizeof(float), cudaMemcpyDeviceToHost, stream);
    if (!e)
        e = cudaEventSynchronize(stop);
    if (!e)
        e = cudaEventElapsedTime(&w->elapsed, start, stop);
    if (!e)
        e = cudaStreamSynchronize(stream);
    if (!e)
        e = cudaFree(v);
    if (!e)
        e = cudaStreamDestroy(stream);
    w->error = e;
    return NULL;
}

int main()
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAIL multigpu_threads: %d device(s), the test needs 2\n", count);
        return 1;
    }
    int *flag[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
        CHECK(cudaMalloc(&flag[d], sizeof(int)));
        CHECK(cudaMemset(flag[d], 0, sizeof(int)));
        CHECK(cudaDeviceSynchronize()); // the workers' non-blocking streams are not ordered after the set
    }
    worker w[2];
    pthread_t thread[2];
    for (int d = 0; d < 2; d++) {
        memset(&w[d], 0, sizeof w[d]);
        w[d].device = d;
        w[d].flag_mine = flag[d];
        w[d].flag_theirs = flag[1 - d];
        w[d].result = (float *)malloc(N * sizeof(float));
        EXPECT(pthread_create(&thread[d], NULL, run, &w[d]) == 0);
    }
    for (int d = 0; d < 2; d++)
        pthread_join(thread[d], NULL);
    for (int d = 0; d < 2; d++) {
        if (w[d].error)
            printf("FAIL: device %d's thread: %s\n", d, cudaGetErrorName(w[d].error));
        EXPECT(w[d].error == cudaSuccess);
        EXPECT(w[d].stream_device == d);
        EXPECT(w[d].elapsed >= 0.0f);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float want = (float)((i * 37 + d * 11) % 97) / 8.0f;
            for (int s = 0; s < STEPS; s++)
                want = want * (0.5f + 0.25f * d) + 1.0f;
            if (!close_to(w[d].result[i], want, 1e-5))
                bad++;
        }
        EXPECT(bad == 0);
        // both kernels saw the other's flag
        int f = 0;
        CHECK(cudaSetDevice(d));
        CHECK(cudaMemcpy(&f, flag[d], sizeof f, cudaMemcpyDeviceToHost));
        EXPECT(f == 2);
        free(w[d].result);
    }
    // the main thread's current device is its own
    int current = -1;
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&current));
    EXPECT(current == 0);
    return finish("multigpu_threads");
}
