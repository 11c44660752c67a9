// Device runtime services: printf (vprintf with a packed argument buffer),
// assert (__assertfail) that fires only when asked, and device malloc/free.

#include <cstdio>
#include <cassert>

// print_formats: thread 0 of each block prints one line per format (%d %u %x %f %e %g %s %p %c %lld %llu and a %5.2f width/precision) built from v and its block index.
extern "C" __global__ void print_formats(int v, double d, const char *ptr)
{
    if (threadIdx.x != 0)
        return;
    int b = blockIdx.x;
    printf("block %d: d=%d u=%u x=%x\n", b, v, (unsigned)v, (unsigned)v);
    printf("f=%f e=%e g=%g w=%5.2f\n", d, d, d, (float)d);
    printf("s=%s c=%c p=%p\n", "kemu", 'A' + b, ptr);
    printf("lld=%lld llu=%llu\n", (long long)v * -1000000000LL, 18446744073709551615ULL);
}

// print_lanes: every thread prints "t=<tid> v=<in[tid]>" (ordering across threads is not defined).
extern "C" __global__ void print_lanes(const int *in)
{
    printf("t=%d v=%d\n", (int)threadIdx.x, in[threadIdx.x]);
}

// assert_when: out[i] = in[i] * 2, but assert(in[i] != bad) first; pass a bad value present in in to make the launch fail.
extern "C" __global__ void assert_when(const int *in, int *out, int bad, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    assert(in[i] != bad);
    out[i] = in[i] * 2;
}

// heap_roundtrip: each thread mallocs count ints, fills them with i*k, sums them into out[i], frees; out[i] = -1 if malloc returned NULL.
extern "C" __global__ void heap_roundtrip(int *out, int count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int *p = (int *)malloc(count * sizeof(int));
    if (p == NULL) {
        out[i] = -1;
        return;
    }
    for (int k = 0; k < count; k++)
        p[k] = i * k;
    int s = 0;
    for (int k = 0; k < count; k++)
        s += p[k];
    free(p);
    out[i] = s;
}

// heap_publish: thread 0 of block 0 mallocs 16 ints, sets [3] = 7 and stores the pointer in *slot; a later launch of heap_consume reads and frees it (heap lifetime across launches).
extern "C" __global__ void heap_publish(int **slot)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int *p = (int *)malloc(16 * sizeof(int));
        if (p)
            p[3] = 7;
        *slot = p;
    }
}

// heap_consume: out[0] = (*slot)[3] (or -1 if NULL), then frees *slot; pairs with heap_publish.
extern "C" __global__ void heap_consume(int **slot, int *out)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int *p = *slot;
        out[0] = p ? p[3] : -1;
        free(p);
    }
}
