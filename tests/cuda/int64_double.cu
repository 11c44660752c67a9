// 64-bit integer and double-precision arithmetic: multiplication with
// overflow wrap, signed/unsigned division and remainder, shifts, mul.hi,
// popcount/clz of 64-bit values, double sqrt/fma/division/exp/log, and
// 64-bit and double atomics.
#include "check.h"

__global__ void int64_ops(const long long *a, const long long *b, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    long long x = a[i], y = b[i];
    unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
    out[i * 8 + 0] = x * y;
    out[i * 8 + 1] = x / y;
    out[i * 8 + 2] = x % y;
    out[i * 8 + 3] = (long long)(ux / uy);
    out[i * 8 + 4] = (x << (i % 63)) ^ (x >> (i % 17));
    out[i * 8 + 5] = (long long)__umul64hi(ux, uy);
    out[i * 8 + 6] = __popcll(ux) * 100 + __clzll(ux);
    out[i * 8 + 7] = (long long)((ux >> 3) | (uy << 61));
}

__global__ void double_ops(const double *a, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = a[i];
    out[i * 5 + 0] = sqrt(x);
    out[i * 5 + 1] = fma(x, 1.0 / 3.0, -x);
    out[i * 5 + 2] = x / 7.0;
    out[i * 5 + 3] = exp(x / 100.0);
    out[i * 5 + 4] = log(x + 1.0);
}

__global__ void atomics64(unsigned long long *sum, double *dsum, long long *mx)
{
    atomicAdd(sum, (unsigned long long)threadIdx.x << 33);
    atomicAdd(dsum, 0.5 * threadIdx.x);
    atomicMax(mx, (long long)threadIdx.x * -1000000000000LL + 7);
}

static unsigned long long umulhi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

int main()
{
    const int n = 100;
    long long a[n], b[n], out[n * 8];
    for (int i = 0; i < n; i++) {
        a[i] = (long long)0x123456789abcdefLL * (i + 1) - (i % 2 ? 1LL << 62 : 0);
        b[i] = (i % 3 == 0 ? -1 : 1) * ((long long)i * 1000003 + 17);
    }
    long long *da, *db, *dout;
    CHECK(cudaMalloc(&da, sizeof a));
    CHECK(cudaMalloc(&db, sizeof b));
    CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    int64_ops<<<1, 128>>>(da, db, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        long long x = a[i], y = b[i];
        unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
        EXPECT(out[i * 8 + 0] == (long long)(ux * uy));
        EXPECT(out[i * 8 + 1] == x / y);
        EXPECT(out[i * 8 + 2] == x % y);
        EXPECT(out[i * 8 + 3] == (long long)(ux / uy));
        EXPECT(out[i * 8 + 4] == (long long)(((unsigned long long)x << (i % 63)) ^ (unsigned long long)(x >> (i % 17))));
        EXPECT(out[i * 8 + 5] == (long long)umulhi(ux, uy));
        EXPECT(out[i * 8 + 6] == __builtin_popcountll(ux) * 100 + (ux ? __builtin_clzll(ux) : 64));
        EXPECT(out[i * 8 + 7] == (long long)((ux >> 3) | (uy << 61)));
    }
    double d[n], dres[n * 5];
    for (int i = 0; i < n; i++)
        d[i] = (double)i * 1.37 + 0.01;
    double *dd, *ddres;
    CHECK(cudaMalloc(&dd, sizeof d));
    CHECK(cudaMalloc(&ddres, sizeof dres));
    CHECK(cudaMemcpy(dd, d, sizeof d, cudaMemcpyHostToDevice));
    double_ops<<<2, 64>>>(dd, ddres, n);
    CHECK(cudaMemcpy(dres, ddres, sizeof dres, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        double x = d[i];
        EXPECT(dres[i * 5 + 0] == sqrt(x));          // correctly rounded
        EXPECT(dres[i * 5 + 1] == fma(x, 1.0 / 3.0, -x));
        EXPECT(dres[i * 5 + 2] == x / 7.0);
        EXPECT(close_to(dres[i * 5 + 3], exp(x / 100.0), 1e-15));
        EXPECT(close_to(dres[i * 5 + 4], log(x + 1.0), 1e-15));
    }
    unsigned long long *dsum;
    double *ddsum;
    long long *dmx;
    CHECK(cudaMalloc(&dsum, 8));
    CHECK(cudaMalloc(&ddsum, 8));
    CHECK(cudaMalloc(&dmx, 8));
    CHECK(cudaMemset(dsum, 0, 8));
    CHECK(cudaMemset(ddsum, 0, 8));
    long long lowest = -(1LL << 62);
    CHECK(cudaMemcpy(dmx, &lowest, 8, cudaMemcpyHostToDevice));
    atomics64<<<1, 256>>>(dsum, ddsum, dmx);
    unsigned long long s;
    double ds;
    long long mx;
    CHECK(cudaMemcpy(&s, dsum, 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&ds, ddsum, 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&mx, dmx, 8, cudaMemcpyDeviceToHost));
    EXPECT(s == (255ULL * 256 / 2) << 33);
    EXPECT(ds == 0.5 * 255 * 256 / 2);
    EXPECT(mx == 7);
    return finish("int64_double");
}
