// Peer access between two devices (`kemu exec --devices 2`): the errors of
// cudaDeviceEnablePeerAccess / cudaDeviceDisablePeerAccess, and kernels of
// device 0 that load, store and add atomically to device 1's memory.
// Usage: peer_access MODE
//   allowed  - with peer access enabled the kernels work (checked against a
//              CPU computation); pinned host memory needs no peer access
//   refused  - without enabling it, the kernel's load of device 1's memory
//              faults: cudaErrorIllegalAddress at the next synchronization,
//              sticky on device 0 only (device 1 still works)
//   disabled - enabled, used, disabled again: the next kernel faults
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"

// out[i] = in[i] * 3 + 1, in on the peer; the peer's counter gets n atomically
__global__ void peer_kernel(const int *in, int *out, int *peer_out, int *peer_counter, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 3 + 1;
        peer_out[i] = in[i] - 7;
        atomicAdd(peer_counter, 1);
    }
}

__global__ void read_kernel(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + 1;
}

static const int N = 1000;

// Device 1's buffers: input (i*i % 101), output and a counter.
static void make_peer_buffers(int **in, int **out, int **counter, int *host)
{
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(in, N * sizeof(int)));
    CHECK(cudaMalloc(out, N * sizeof(int)));
    CHECK(cudaMalloc(counter, sizeof(int)));
    for (int i = 0; i < N; i++)
        host[i] = (i * i) % 101;
    CHECK(cudaMemcpy(*in, host, N * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(*out, 0, N * sizeof(int)));
    CHECK(cudaMemset(*counter, 0, sizeof(int)));
    CHECK(cudaDeviceSynchronize()); // device 0's kernels are not ordered after device 1's sets
    CHECK(cudaSetDevice(0));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "allowed";
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("FAIL peer_access: %d device(s), the test needs 2\n", count);
        return 1;
    }
    int host[N], got[N];
    int *in1, *out1, *counter1, *out0;
    make_peer_buffers(&in1, &out1, &counter1, host);
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&out0, N * sizeof(int)));

    if (!strcmp(mode, "allowed")) {
        // the errors of the real runtime
        EXPECT_ERROR(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
        EXPECT_ERROR(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice); // itself
        EXPECT_ERROR(cudaDeviceEnablePeerAccess(count, 0), cudaErrorInvalidDevice);
        EXPECT_ERROR(cudaDeviceEnablePeerAccess(-1, 0), cudaErrorInvalidDevice);
        EXPECT_ERROR(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue); // flags must be 0
        EXPECT(cudaGetLastError() == cudaErrorInvalidValue); // the last error, as for any failed call
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceEnablePeerAccess(1, 0));
        EXPECT_ERROR(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
        EXPECT(cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
        CHECK(cudaGetLastError());
        peer_kernel<<<(N + 127) / 128, 128>>>(in1, out0, out1, counter1, N);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got, out0, sizeof got, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += got[i] != host[i] * 3 + 1;
        CHECK(cudaMemcpy(got, out1, sizeof got, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            bad += got[i] != host[i] - 7;
        int c = 0;
        CHECK(cudaMemcpy(&c, counter1, sizeof c, cudaMemcpyDeviceToHost));
        EXPECT(bad == 0);
        EXPECT(c == N);
        // peer access is one-way: device 1 has not enabled device 0
        CHECK(cudaSetDevice(1));
        EXPECT_ERROR(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
        EXPECT(cudaGetLastError() == cudaErrorPeerAccessNotEnabled);
        // pinned host memory: reachable from every device without peer access
        int *pinned;
        CHECK(cudaSetDevice(0));
        CHECK(cudaMallocHost(&pinned, N * sizeof(int)));
        for (int i = 0; i < N; i++)
            pinned[i] = i;
        CHECK(cudaSetDevice(1));
        read_kernel<<<(N + 127) / 128, 128>>>(pinned, out1, N);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got, out1, sizeof got, cudaMemcpyDeviceToHost));
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += got[i] != i + 1;
        EXPECT(bad == 0);
        cudaPointerAttributes attr;
        CHECK(cudaPointerGetAttributes(&attr, pinned));
        EXPECT(attr.type == cudaMemoryTypeHost);
        CHECK(cudaFreeHost(pinned));
        CHECK(cudaSetDevice(0));
        CHECK(cudaDeviceDisablePeerAccess(1));
        EXPECT_ERROR(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
        EXPECT(cudaGetLastError() == cudaErrorPeerAccessNotEnabled);
        return finish("peer_access_allowed");
    }

    if (!strcmp(mode, "disabled")) {
        CHECK(cudaDeviceEnablePeerAccess(1, 0));
        read_kernel<<<(N + 127) / 128, 128>>>(in1, out0, N);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaDeviceDisablePeerAccess(1));
    } else if (strcmp(mode, "refused")) {
        printf("FAIL peer_access: unknown mode '%s'\n", mode);
        return 1;
    }
    // no peer access now: a GPU faults on the unmapped address
    read_kernel<<<(N + 127) / 128, 128>>>(in1, out0, N);
    EXPECT(cudaGetLastError() == cudaSuccess); // the launch itself succeeds
    EXPECT_ERROR(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    EXPECT_ERROR(cudaMemcpy(got, out0, sizeof got, cudaMemcpyDeviceToHost), cudaErrorIllegalAddress); // sticky
    // device 1's context is not device 0's: it still works
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemcpy(got, in1, sizeof got, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != host[i];
    EXPECT(bad == 0);
    return finish(!strcmp(mode, "refused") ? "peer_access_refused" : "peer_access_disabled");
}
