// Dynamic parallelism (CDP2) under `kemu run`: a binary tree of device
// launches three levels deep, leaves filling out[0..31] with their indices,
// and a tail launch of the root that sums them. Each grid prints a line, so
// the output shows kemu's schedule: a grid's children after it, depth
// first, in launch order; the tail launch after everything else.
// Built with -rdc=true (regen.sh).
#include <cstdio>

__global__ void leaf(int *out, int base)
{
    out[base + threadIdx.x] = base + threadIdx.x;
}

__global__ void sum(const int *out, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += out[i];
    printf("tail: sum %d\n", s);
}

__global__ void tree(int *out, int level, int base)
{
    printf("level %d base %d\n", level, base);
    if (level == 0)
        sum<<<1, 1, 0, cudaStreamTailLaunch>>>(out, 32);
    if (level < 3) {
        tree<<<1, 1>>>(out, level + 1, base * 2);
        tree<<<1, 1>>>(out, level + 1, base * 2 + 1);
    } else {
        leaf<<<1, 4>>>(out, base * 4);
    }
}
