// kemu exec: the checkers' report of a program that does not return from
// main. It launches a kernel with a shared-memory race, prints "launched
// PID", then, by its argument: waits until it is killed (wait), or leaves
// through exit(3) (exit) or _exit(4) (_exit). tests/cuda/run.sh kills it
// with SIGTERM and SIGINT (as timeout(1) and ^C do) and expects the report
// in every case.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

// Each thread reads its neighbour's word with no barrier after the writes.
__global__ void neighbour_race(int *out)
{
    __shared__ int s[64];
    unsigned t = threadIdx.x;
    s[t] = (int)t;
    out[t] = s[(t + 1) % blockDim.x];
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "wait";
    int *d = nullptr;
    if (cudaMalloc(&d, 64 * sizeof(int)) != cudaSuccess)
        return 1;
    neighbour_race<<<1, 64>>>(d);
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    printf("launched %ld\n", (long)getpid());
    fflush(stdout);
    if (!strcmp(mode, "exit"))
        exit(3);
    if (!strcmp(mode, "_exit"))
        _exit(4);
    for (;;)
        pause();
}
