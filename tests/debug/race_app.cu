// A CUDA program for `kemu debug exec` (tests/debug/run.sh): launches
// dbg.cu's racy kernel, so that going back from a race finding replays the
// launch and the checkers still report the race once.
#include <cstdio>

extern "C" __global__ void racy(int *out);

int main()
{
    int *out;
    cudaMalloc(&out, 64 * sizeof(int));
    racy<<<1, 64>>>(out);
    cudaError_t e = cudaDeviceSynchronize();
    printf("race_app: %s\n", e == cudaSuccess ? "ran" : cudaGetErrorString(e));
    return 0;
}
