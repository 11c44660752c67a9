// Warp-level primitives: shuffles (idx/up/down/xor with sub-warp width),
// votes, __activemask, match, and the sm_80 __reduce_*_sync, including
// partial masks where only some lanes take part. One warp per 32 outputs.

// shfl_modes: out[4*i+0..3] = shfl idx(src lane in[i]&31), up(delta), down(delta), xor(delta) of value i*10, segment width w.
extern "C" __global__ void shfl_modes(const int *in, int *out, unsigned delta, int w)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i * 10;
    out[4 * i + 0] = __shfl_sync(0xffffffffu, v, in[i] & 31, w);
    out[4 * i + 1] = __shfl_up_sync(0xffffffffu, v, delta, w);
    out[4 * i + 2] = __shfl_down_sync(0xffffffffu, v, delta, w);
    out[4 * i + 3] = __shfl_xor_sync(0xffffffffu, v, (int)delta, w);
}

// shfl_f64: out[i] = double value of lane (lane+1)%32 (64-bit shuffle splits into two 32-bit shfl).
extern "C" __global__ void shfl_f64(const double *in, double *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __shfl_sync(0xffffffffu, in[i], (threadIdx.x + 1) & 31);
}

// shfl_partial: only even lanes (mask 0x55555555) rotate values among themselves; odd lanes write -1. out[i].
extern "C" __global__ void shfl_partial(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    if (lane & 1) {
        out[i] = -1;
        return;
    }
    out[i] = __shfl_sync(0x55555555u, in[i], (lane + 2) & 31);
}

// votes: out[3*w+0..2] = ballot, all, any of (in[i] != 0); active[i] = __activemask() inside a branch taken by lanes with in[i] > 0, else 0.
extern "C" __global__ void votes(const int *in, unsigned *out, unsigned *active)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = in[i] != 0;
    unsigned ballot = __ballot_sync(0xffffffffu, p);
    int all = __all_sync(0xffffffffu, p);
    int any = __any_sync(0xffffffffu, p);
    active[i] = 0;
    if (in[i] > 0)
        active[i] = __activemask();
    if ((threadIdx.x & 31) == 0) {
        out[3 * (i / 32) + 0] = ballot;
        out[3 * (i / 32) + 1] = all;
        out[3 * (i / 32) + 2] = any;
    }
}

// votes_partial: lanes < k vote on (in[i] != 0) with mask (1<<k)-1 (k in 1..31); out[3*w+0..2] = ballot, all, any from lane 0.
extern "C" __global__ void votes_partial(const int *in, unsigned *out, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    if ((int)lane >= k)
        return;
    unsigned mask = (1u << k) - 1;
    int p = in[i] != 0;
    unsigned ballot = __ballot_sync(mask, p);
    int all = __all_sync(mask, p);
    int any = __any_sync(mask, p);
    if (lane == 0) {
        out[3 * (i / 32) + 0] = ballot;
        out[3 * (i / 32) + 1] = all;
        out[3 * (i / 32) + 2] = any;
    }
}

// match: out[2*i+0] = __match_any_sync mask of lanes with equal in[i]; out[2*i+1] = __match_all_sync mask (0 if not all equal), pred to out_pred[i].
extern "C" __global__ void match(const int *in, unsigned *out, int *out_pred)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred;
    out[2 * i + 0] = __match_any_sync(0xffffffffu, in[i]);
    out[2 * i + 1] = __match_all_sync(0xffffffffu, in[i], &pred);
    out_pred[i] = pred;
}

// match_u64: out[i] = __match_any_sync over 64-bit keys in[i].
extern "C" __global__ void match_u64(const unsigned long long *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __match_any_sync(0xffffffffu, in[i]);
}

#if __CUDA_ARCH__ >= 800  /* __reduce_*_sync (redux.sync) needs sm_80 */
// warp_reduce_ops: (sm_80) out[6*w+0..5] = __reduce_add/min/max (signed) and and/or/xor (unsigned) over the warp's in[i].
extern "C" __global__ void warp_reduce_ops(const int *in, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    unsigned u = (unsigned)v;
    int add = __reduce_add_sync(0xffffffffu, v);
    int mn = __reduce_min_sync(0xffffffffu, v);
    int mx = __reduce_max_sync(0xffffffffu, v);
    unsigned a = __reduce_and_sync(0xffffffffu, u);
    unsigned o = __reduce_or_sync(0xffffffffu, u);
    unsigned x = __reduce_xor_sync(0xffffffffu, u);
    if ((threadIdx.x & 31) == 0) {
        int *r = out + 6 * (i / 32);
        r[0] = add; r[1] = mn; r[2] = mx;
        r[3] = (int)a; r[4] = (int)o; r[5] = (int)x;
    }
}

// warp_reduce_unsigned_partial: (sm_80) lanes with odd lane id reduce with mask 0xaaaaaaaa: out[3*w+0..2] = add/min/max (unsigned) from lane 1.
extern "C" __global__ void warp_reduce_unsigned_partial(const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    if (!(lane & 1))
        return;
    unsigned v = in[i];
    unsigned add = __reduce_add_sync(0xaaaaaaaau, v);
    unsigned mn = __reduce_min_sync(0xaaaaaaaau, v);
    unsigned mx = __reduce_max_sync(0xaaaaaaaau, v);
    if (lane == 1) {
        out[3 * (i / 32) + 0] = add;
        out[3 * (i / 32) + 1] = mn;
        out[3 * (i / 32) + 2] = mx;
    }
}
#endif

// lane_regs: out[3*i+0..2] = %laneid, %lanemask_lt, %warpid-independent warp index (threadIdx.x/32) for each thread.
extern "C" __global__ void lane_regs(unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane, lt;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    out[3 * i + 0] = lane;
    out[3 * i + 1] = lt;
    out[3 * i + 2] = threadIdx.x / 32;
}
