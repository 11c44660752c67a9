// Divergent control flow and warp votes: if/else and loops whose trip count
// depends on the lane, early returns, __ballot_sync, __any_sync,
// __all_sync, __activemask inside a branch, __popc/__ffs, __match_any_sync.
#include "check.h"

__global__ void divergent(int *out)
{
    int t = threadIdx.x;
    int v = 0;
    if (t % 3 == 0) {
        for (int i = 0; i < t; i++)
            v += i;
    } else if (t % 3 == 1) {
        v = -t;
        while (v < 0)
            v += 7;
    } else {
        switch (t % 4) {
        case 0: v = 100; break;
        case 1: v = 200; break;
        default: v = 300 + t;
        }
    }
    if (t >= 60)
        return; // early exit of some lanes of the second warp
    out[t] = v;
}

__global__ void votes(const int *in, unsigned *ballots, int *flags, unsigned *masks, int *matches)
{
    int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int x = in[t];
    unsigned b = __ballot_sync(0xffffffffu, x > 0);
    int any = __any_sync(0xffffffffu, x > 100);
    int all = __all_sync(0xffffffffu, x > -1000);
    if (lane == 0) {
        ballots[warp] = b;
        flags[warp * 3 + 0] = any;
        flags[warp * 3 + 1] = all;
        flags[warp * 3 + 2] = __popc(b) * 100 + __ffs(b);
    }
    if (lane % 2 == 0) {
        unsigned active = __activemask();
        if (lane == 0)
            masks[warp] = active;
    }
    __syncwarp();
    unsigned same = __match_any_sync(0xffffffffu, x % 4);
    matches[t] = __popc(same);
}

int main()
{
    int out[64];
    int *dout;
    CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMemset(dout, 0xff, sizeof out));
    divergent<<<1, 64>>>(dout);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    for (int t = 0; t < 64; t++) {
        int v;
        if (t >= 60)
            v = -1;
        else if (t % 3 == 0)
            v = t * (t - 1) / 2;
        else if (t % 3 == 1) {
            v = -t;
            while (v < 0)
                v += 7;
        } else
            v = t % 4 == 0 ? 100 : t % 4 == 1 ? 200 : 300 + t;
        if (out[t] != v)
            printf("divergent[%d] = %d, expected %d\n", t, out[t], v);
        EXPECT(out[t] == v);
    }

    int in[64];
    for (int t = 0; t < 64; t++)
        in[t] = t < 32 ? (t % 5 == 0 ? 5 : -5) : 200 + t;
    int *din, *dflags, *dmatch;
    unsigned *dballots, *dmasks;
    CHECK(cudaMalloc(&din, sizeof in));
    CHECK(cudaMalloc(&dballots, 2 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dmasks, 2 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dflags, 6 * sizeof(int)));
    CHECK(cudaMalloc(&dmatch, 64 * sizeof(int)));
    CHECK(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
    votes<<<1, 64>>>(din, dballots, dflags, dmasks, dmatch);
    CHECK(cudaGetLastError());
    unsigned ballots[2], masks[2];
    int flags[6], matches[64];
    CHECK(cudaMemcpy(ballots, dballots, sizeof ballots, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(masks, dmasks, sizeof masks, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(flags, dflags, sizeof flags, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(matches, dmatch, sizeof matches, cudaMemcpyDeviceToHost));
    unsigned b0 = 0;
    for (int l = 0; l < 32; l++)
        if (l % 5 == 0)
            b0 |= 1u << l;
    EXPECT(ballots[0] == b0);
    EXPECT(ballots[1] == 0xffffffffu);
    EXPECT(flags[0] == 0 && flags[1] == 1 && flags[2] == __builtin_popcount(b0) * 100 + 1);
    EXPECT(flags[3] == 1 && flags[4] == 1 && flags[5] == 32 * 100 + 1);
    EXPECT(masks[0] == 0x55555555u && masks[1] == 0x55555555u);
    for (int t = 0; t < 64; t++) {
        int w = t / 32, count = 0;
        for (int l = 0; l < 32; l++)
            count += in[w * 32 + l] % 4 == in[t] % 4;
        EXPECT(matches[t] == count);
    }
    return finish("divergence_votes");
}
