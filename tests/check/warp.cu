// Races between lanes of one warp (racecheck regression kernels, issue
// #20): since Volta the lanes of a warp are scheduled independently, so
// two lanes' conflicting accesses with no __syncwarp (or other
// warp-synchronous op, or barrier) between them race whatever order kemu
// runs them in. Each racy kernel has a fixed twin. Launch with one warp
// (32 threads) unless a comment says otherwise.
// Regenerate warp.ptx with tests/check/regen.sh.

// ---- divergent branches: if and else store to one word --------------------------

extern "C" __global__ void branches_waw(const int *in, int *out)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    s[lane] = 0;
    __syncwarp();
    if (lane & 1) {
        if (lane == 1)
            s[0] = in[lane];
    } else {
        if (lane == 2)
            s[0] = in[lane] + 1;
    }
    __syncwarp();
    out[lane] = s[lane];
}

extern "C" __global__ void branches_waw_fixed(const int *in, int *out)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    s[lane] = 0;
    __syncwarp();
    if (lane & 1) {
        if (lane == 1)
            s[0] = in[lane];
    }
    __syncwarp();
    if (!(lane & 1)) {
        if (lane == 2)
            s[0] = in[lane] + 1;
    }
    __syncwarp();
    out[lane] = s[lane];
}

// The same in global memory.
extern "C" __global__ void branches_waw_global(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    if (lane & 1) {
        if (lane == 1)
            out[0] = in[lane];
    } else {
        if (lane == 2)
            out[0] = in[lane] + 1;
    }
}

// ---- a lane writes, another reads after the branch reconverges -------------------

extern "C" __global__ void reconverge_raw(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    if (lane == 5)
        out[32] = in[lane];
    out[lane] = out[32];
}

extern "C" __global__ void reconverge_raw_fixed(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    if (lane == 5)
        out[32] = in[lane];
    __syncwarp();
    out[lane] = out[32];
}

// ---- one store instruction run at different times by different lanes -------------
// Iteration i: lane l stores to word (l + i) % 32, which lane l - 1 stored
// in iteration i - 1.

extern "C" __global__ void loop_waw(const int *in, int *out, int n)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    for (int i = 0; i < n; i++)
        s[(lane + i) % 32] = in[lane] * 2 + i;
    __syncwarp();
    out[lane] = s[lane];
}

extern "C" __global__ void loop_waw_fixed(const int *in, int *out, int n)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    for (int i = 0; i < n; i++) {
        s[(lane + i) % 32] = in[lane] * 2 + i;
        __syncwarp();
    }
    out[lane] = s[lane];
}

extern "C" __global__ void loop_waw_global(const int *in, int *out, int n)
{
    unsigned lane = threadIdx.x;
    for (int i = 0; i < n; i++)
        out[(lane + i) % 32] = in[lane] * 2 + i;
}

extern "C" __global__ void loop_waw_global_fixed(const int *in, int *out, int n)
{
    unsigned lane = threadIdx.x;
    for (int i = 0; i < n; i++) {
        out[(lane + i) % 32] = in[lane] * 2 + i;
        __syncwarp();
    }
}

// ---- two lanes of one store instruction at one word ------------------------------

extern "C" __global__ void one_store_waw(const int *in, int *out)
{
    __shared__ int s[16];
    unsigned lane = threadIdx.x;
    s[lane / 2] = in[lane];
    __syncwarp();
    out[lane] = s[lane / 2];
}

// Every lane stores the same value: reported as "both store the same
// value" (a warning unless --racecheck-benign error).
extern "C" __global__ void one_store_same(const int *in, int *out)
{
    __shared__ int s[16];
    unsigned lane = threadIdx.x;
    s[lane / 2] = 7;
    __syncwarp();
    out[lane] = s[lane / 2] + in[lane];
}

extern "C" __global__ void one_store_waw_global(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    out[lane / 2] = in[lane];
}

extern "C" __global__ void one_store_fixed(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    if (lane % 2 == 0)
        out[lane / 2] = in[lane];
    atomicAdd(&out[16 + lane / 2], in[lane]);
}

// ---- a warp-synchronous op in one branch orders only its own lanes ----------------
// The lanes below 16 store and __syncwarp among themselves; lane 20 reads
// the word in the other branch, ordered with them by nothing.

extern "C" __global__ void partial_sync_raw(const int *in, int *out)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    if (lane < 16) {
        if (lane == 0)
            s[0] = in[0];
        __syncwarp(0x0000ffffu);
        out[lane] = s[0];
    } else {
        out[lane] = lane == 20 ? s[0] : 0;
    }
}

extern "C" __global__ void partial_sync_fixed(const int *in, int *out)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    if (lane < 16) {
        if (lane == 0)
            s[0] = in[0];
        __syncwarp(0x0000ffffu);
        out[lane] = s[0];
    }
    __syncwarp();
    if (lane >= 16)
        out[lane] = lane == 20 ? s[0] : 0;
}

// ---- race-free warp idioms that must stay clean ---------------------------------

// Each lane updates only its own words, many times: one thread.
extern "C" __global__ void own_words(const int *in, int *out, int n)
{
    __shared__ int s[32];
    unsigned lane = threadIdx.x;
    s[lane] = 0;
    for (int i = 0; i < n; i++)
        s[lane] += in[lane] * i;
    out[lane] = s[lane];
}

// Warp reduction through shuffles, then lane 0 writes: ordered.
extern "C" __global__ void shuffle_reduce(const int *in, int *out)
{
    unsigned lane = threadIdx.x;
    int v = in[lane];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0)
        out[0] = v;
    __syncwarp();
    out[1 + lane] = out[0];
}

// Vote, then a lane chosen by it writes for the warp; others read after
// __syncwarp.
extern "C" __global__ void vote_leader(const int *in, int *out)
{
    __shared__ int s;
    unsigned lane = threadIdx.x;
    unsigned m = __ballot_sync(0xffffffffu, in[lane] > 3);
    if (m && lane == (unsigned)(__ffs(m) - 1))
        s = in[lane];
    __syncwarp();
    out[lane] = m ? s : 0;
}
