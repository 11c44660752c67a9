// Kernels for racecheck on distributed shared memory: the blocks of a
// cluster of two read each other's shared memory; and bulk copies into
// shared memory. Needs sm_90; launched by tests/e2e/cases/check-race-cluster*
// and tests/unit/test_check.c. Regenerate with regen.sh.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each block reads its peer's array with no cluster barrier after the
// peer wrote it.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_race(const float *in, float *out)
{
    __shared__ float s[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    s[t] = in[t] + (float)rank;
    float *peer = cluster.map_shared_rank(s, rank ^ 1);
    out[rank * 32 + t] = peer[t];
    cluster.sync();
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_race_fixed(const float *in, float *out)
{
    __shared__ float s[32];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), t = threadIdx.x;
    s[t] = in[t] + (float)rank;
    cluster.sync();
    float *peer = cluster.map_shared_rank(s, rank ^ 1);
    out[rank * 32 + t] = peer[t];
    cluster.sync();
}

// ---- bulk copies (cp.async.bulk) with an mbarrier's transaction count ------
// Thread 0 arms the barrier with arrive.expect_tx, then issues the copy of
// 256 bytes into s; the others wait for the phase before reading s. The
// copy's bytes are published with the phase its complete_tx finishes.
__device__ unsigned bulk_smem(const void *p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ void bulk_load(float *s, const float *in, unsigned long long *bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;\n" ::"r"(bulk_smem(bar)) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];\n"
                 ::"r"(bulk_smem(s)), "l"(in), "r"(bulk_smem(bar))
                 : "memory");
}

extern "C" __global__ void bulk_copy(const float *in, float *out)
{
    __shared__ alignas(16) float s[64];
    __shared__ alignas(8) unsigned long long bar;
    unsigned t = threadIdx.x;
    if (t == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bulk_smem(&bar)) : "memory");
    __syncthreads();
    if (t == 0)
        bulk_load(s, in, &bar);
    asm volatile("{\n .reg .pred p;\n wait:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra wait;\n}\n"
                 ::"r"(bulk_smem(&bar))
                 : "memory");
    out[t] = s[t];
}

// Broken: the readers do not wait for the copy.
extern "C" __global__ void bulk_copy_broken(const float *in, float *out)
{
    __shared__ alignas(16) float s[64];
    __shared__ alignas(8) unsigned long long bar;
    unsigned t = threadIdx.x;
    if (t == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bulk_smem(&bar)) : "memory");
    __syncthreads();
    if (t == 0)
        bulk_load(s, in, &bar);
    out[t] = s[t];
}
