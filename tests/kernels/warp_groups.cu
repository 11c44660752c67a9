// Warp-synchronous ops executed by several groups of one warp at the same
// instruction, each lane naming its own group's member mask: the groups
// of cooperative_groups::labeled_partition, and masks from
// __match_any_sync. Each lane's result must come from the lanes of its
// own mask. Labels are taken modulo 4, so random labels make groups.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

// partition_reduce: cg::labeled_partition of each warp by label[i] % 4, then cg::reduce over the lane's group (on sm_80 redux.sync, on
// sm_75 shuffles, with the group's mask, every group at the same instruction). out[6*i+0..5] = group size, thread_rank, reduce plus,
// less, greater (unsigned), bit_xor of in[i].
extern "C" __global__ void partition_reduce(const unsigned *label, const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    cg::coalesced_group g = cg::labeled_partition(warp, (int)(label[i] % 4));
    unsigned v = in[i];
    unsigned *o = out + 6 * i;
    o[0] = g.size();
    o[1] = g.thread_rank();
    o[2] = cg::reduce(g, v, cg::plus<unsigned>());
    o[3] = cg::reduce(g, v, cg::less<unsigned>());
    o[4] = cg::reduce(g, v, cg::greater<unsigned>());
    o[5] = cg::reduce(g, v, cg::bit_xor<unsigned>());
}

#if __CUDA_ARCH__ >= 800  /* __reduce_*_sync (redux.sync) needs sm_80 */
// group_masks: (sm_80) the lanes of a warp with equal label[i] % 4 form a group whose mask is __match_any_sync of the label; every lane
// runs each warp-synchronous op with its own group's mask, all groups at once (p = in[i] odd). out[16*i+0..15] = mask, __shfl_sync from
// the next lane of the group (cyclic), __ballot_sync(p), all(p) | any(p) << 1 | uni(p) << 2, __match_any_sync(in[i] & 1),
// __match_all_sync (key: label*7 for even labels, else in[i]) and its predicate, then __reduce_* add, min (s32), max (s32), min (u32),
// max (u32), and, or, xor, and 1 after a __syncwarp(mask).
extern "C" __global__ void group_masks(const unsigned *label, const unsigned *in, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31, v = in[i], l = label[i] % 4;
    unsigned mask = __match_any_sync(0xffffffffu, l);
    unsigned above = mask & ~((2u << lane) - 1);
    unsigned next = __ffs(above ? above : mask) - 1;
    int p = v & 1, pred;
    unsigned *o = out + 16 * i;
    o[0] = mask;
    o[1] = __shfl_sync(mask, v, next);
    o[2] = __ballot_sync(mask, p);
    o[3] = __all_sync(mask, p) | __any_sync(mask, p) << 1 | __uni_sync(mask, p) << 2;
    o[4] = __match_any_sync(mask, v & 1);
    o[5] = __match_all_sync(mask, l % 2 == 0 ? l * 7 : v, &pred);
    o[6] = pred;
    o[7] = __reduce_add_sync(mask, v);
    o[8] = __reduce_min_sync(mask, (int)v);
    o[9] = __reduce_max_sync(mask, (int)v);
    o[10] = __reduce_min_sync(mask, v);
    o[11] = __reduce_max_sync(mask, v);
    o[12] = __reduce_and_sync(mask, v);
    o[13] = __reduce_or_sync(mask, v);
    o[14] = __reduce_xor_sync(mask, v);
    __syncwarp(mask);
    o[15] = 1;
}

// group_masks_late: (sm_80) one block of 64. In warp 0 the lanes with equal lane % 4 form a group (mask from __match_any_sync); the lanes
// whose bit lane % 8 is set in `late` first spin until warp 1 sets *flag (0 before the launch), so that the other lanes of their groups
// reach the warp-synchronous ops first and wait for them (late 0x08: the groups without late lanes go on; 0xf0: every group waits).
// out[4*lane+0..3] = __reduce_add_sync, __shfl_sync from the next lane of the group (cyclic), __ballot_sync(in odd),
// __match_any_sync(in & 1), each with the lane's group mask.
extern "C" __global__ void group_masks_late(const unsigned *in, unsigned *out, volatile int *flag, unsigned late)
{
    unsigned lane = threadIdx.x & 31;
    if (threadIdx.x >= 32) {
        if (lane == 0)
            *flag = 1;
        return;
    }
    unsigned v = in[lane];
    unsigned mask = __match_any_sync(0xffffffffu, lane % 4);
    unsigned above = mask & ~((2u << lane) - 1);
    unsigned next = __ffs(above ? above : mask) - 1;
    if ((late >> (lane % 8)) & 1)
        while (*flag == 0)
            ;
    unsigned *o = out + 4 * lane;
    o[0] = __reduce_add_sync(mask, v);
    o[1] = __shfl_sync(mask, v, next);
    o[2] = __ballot_sync(mask, v & 1);
    o[3] = __match_any_sync(mask, v & 1);
}
#endif

#if __CUDA_ARCH__ >= 900  /* elect.sync needs sm_90 */
// group_elect: (sm_90) elect.sync with each lane's mask = the lanes of its warp with equal label[i] % 4; out[2*i+0..1] = the elected
// lane, and 1 if this lane was elected, else 0.
extern "C" __global__ void group_elect(const unsigned *label, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = __match_any_sync(0xffffffffu, label[i] % 4), leader, is;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync %0|p, %2;\n\tselp.u32 %1, 1, 0, p;\n\t}"
                 : "=r"(leader), "=r"(is)
                 : "r"(mask));
    out[2 * i + 0] = leader;
    out[2 * i + 1] = is;
}
#endif
