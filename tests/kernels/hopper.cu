// Hopper (sm_90a) instructions that CUDA C reaches only through inline PTX:
// wgmma.mma_async with shared-memory matrix descriptors in the layouts
// without swizzling (Triton's kernels in tests/frontends/triton/ cover the
// swizzled ones), elect.sync, setmaxnreg and griddepcontrol, the bulk
// copies (cp.async.bulk) with mbarrier transaction counts, and TMA tensor
// copies (cp.async.bulk.tensor) through tensor maps (`kemu run` passes them
// as tmap=BOX,...:BUFFER arguments).
//
// The descriptor layouts follow the PTX ISA's canonical layouts
// ("Shared Memory Matrix Layout", no swizzle):
//   K-major:  element (mn, k) at (mn/8)*SBO + (mn%8)*16 + (k*s/16)*LBO + (k*s)%16
//   MN-major: element (mn, k) at (mn*s/16)*SBO + (k/8)*LBO + (k%8)*16 + (mn*s)%16
// for s-byte elements: "core matrices" of 8 rows of 16 bytes, 128 bytes each.

#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_fp16.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ unsigned long long matrix_descriptor(const void *smem, unsigned lbo, unsigned sbo)
{
    unsigned long long addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    return ((addr & 0x3ffff) >> 4) | (static_cast<unsigned long long>(lbo >> 4) << 16) |
           (static_cast<unsigned long long>(sbo >> 4) << 32); // swizzle 0 (none), base offset 0
}

// Byte offsets of element (mn, k) of a 2-byte operand in the two layouts.
__device__ unsigned k_major_offset(unsigned mn, unsigned k, unsigned lbo, unsigned sbo)
{
    return mn / 8 * sbo + mn % 8 * 16 + k * 2 / 16 * lbo + k * 2 % 16;
}
__device__ unsigned mn_major_offset(unsigned mn, unsigned k, unsigned lbo, unsigned sbo)
{
    return mn * 2 / 16 * sbo + k / 8 * lbo + k % 8 * 16 + mn * 2 % 16;
}

// D (64x64, f32) = A (64x16) * B (16x64) + (accumulate ? C : 0) for one
// warpgroup of 128 threads: A and B are row-major f16 in global memory,
// copied into shared memory in the layouts chosen by A_MN / B_MN (MN-major
// when true, K-major otherwise) and multiplied with one wgmma.mma_async.
template <bool A_MN, bool B_MN>
__device__ void wgmma_m64n64k16(const __half *a, const __half *b, const float *c, float *d, int accumulate)
{
    __shared__ alignas(128) unsigned char sa[64 * 16 * 2], sb[16 * 64 * 2];
    unsigned t = threadIdx.x;
    // A: 8 M-groups x 2 K-chunks of 128 bytes; K-major: LBO = 128 (along K),
    // SBO = 256 (along M); MN-major: SBO = 256 (along M), LBO = 128 (along K)
    const unsigned a_lbo = 128, a_sbo = 256;
    // B: 8 N-groups x 2 K-groups; K-major: LBO 128, SBO 256; MN-major: SBO
    // 256 (along N), LBO 128 (along K)
    const unsigned b_lbo = 128, b_sbo = 256;
    for (unsigned i = t; i < 64 * 16; i += 128) {
        unsigned m = i / 16, k = i % 16;
        unsigned off = A_MN ? mn_major_offset(m, k, a_lbo, a_sbo) : k_major_offset(m, k, a_lbo, a_sbo);
        *reinterpret_cast<__half *>(sa + off) = a[m * 16 + k];
    }
    for (unsigned i = t; i < 16 * 64; i += 128) {
        unsigned k = i / 64, n = i % 64;
        unsigned off = B_MN ? mn_major_offset(n, k, b_lbo, b_sbo) : k_major_offset(n, k, b_lbo, b_sbo);
        *reinterpret_cast<__half *>(sb + off) = b[k * 64 + n];
    }
    // D fragment: register i of thread t holds row 16*(t/32) + g + 8*((i/2)%2),
    // column 8*(i/4) + 2*q + i%2, with g = lane/4, q = lane%4
    unsigned warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
    float acc[32];
    for (int i = 0; i < 32; i++) {
        unsigned row = 16 * warp + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
        acc[i] = c[row * 64 + col];
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    unsigned long long da = matrix_descriptor(sa, a_lbo, a_sbo), db = matrix_descriptor(sb, b_lbo, b_sbo);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "%32, %33, p, 1, 1, %35, %36;\n"
                 "}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]),
                   "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]),
                   "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]),
                   "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]),
                   "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31])
                 : "l"(da), "l"(db), "r"(accumulate), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 32; i++) {
        unsigned row = 16 * warp + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
        d[row * 64 + col] = acc[i];
    }
}

// A K-major, B MN-major (imm-trans-b 1), no swizzle.
extern "C" __global__ void wgmma_kmajor_mnmajor(const __half *a, const __half *b, const float *c, float *d,
                                                int accumulate)
{
    wgmma_m64n64k16<false, true>(a, b, c, d, accumulate);
}

// A MN-major (imm-trans-a 1), B K-major, no swizzle.
extern "C" __global__ void wgmma_mnmajor_kmajor(const __half *a, const __half *b, const float *c, float *d,
                                                int accumulate)
{
    wgmma_m64n64k16<true, false>(a, b, c, d, accumulate);
}

// Both K-major, no swizzle.
extern "C" __global__ void wgmma_kmajor_kmajor(const __half *a, const __half *b, const float *c, float *d,
                                               int accumulate)
{
    wgmma_m64n64k16<false, false>(a, b, c, d, accumulate);
}

// elect.sync over the lanes of mask in each warp (every lane of the warp
// runs it; mask names the candidates): out[t] = the elected lane's id * 2 +
// (this thread is the leader). setmaxnreg and griddepcontrol run around it
// (hints and launch ordering that change nothing here).
extern "C" __global__ void elect_leader(unsigned *out, unsigned mask)
{
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
    unsigned lane = threadIdx.x % 32, leader = 0, is_leader = 0;
    if ((mask >> lane) & 1) {
        asm volatile("{\n"
                     ".reg .pred p;\n"
                     "elect.sync %0|p, %2;\n"
                     "selp.u32 %1, 1, 0, p;\n"
                     "}\n"
                     : "=r"(leader), "=r"(is_leader)
                     : "r"(mask));
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = ((mask >> lane) & 1) ? leader * 2 + is_leader : 0xffffffffu;
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// ---- bulk copies ---------------------------------------------------------

// libcu++'s cuda::memcpy_async with a 16-byte aligned size and a
// cuda::barrier: on sm_90 it is cp.async.bulk into shared memory with
// mbarrier.expect_tx. out[b*256 + t] = 2 * in[b*256 + 255 - t].
extern "C" __global__ void bulk_memcpy_async(const float *in, float *out)
{
    using barrier = cuda::barrier<cuda::thread_scope_block>;
    __shared__ alignas(16) float tile[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier bar;
    if (threadIdx.x == 0)
        init(&bar, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0)
        cuda::memcpy_async(tile, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof tile), bar);
    bar.arrive_and_wait();
    out[blockIdx.x * 256 + threadIdx.x] = 2.0f * tile[255 - threadIdx.x];
}

__device__ unsigned smem_address(const void *p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ void mbar_wait_parity(unsigned bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// The TMA style: one thread announces the bytes with
// mbarrier.arrive.expect_tx *before* it issues the copy, the others wait on
// the phase's parity; two stages, each with its own buffer and barrier (one
// barrier for both would let the producer finish a second phase before a
// slow waiter sees the first). The result goes back to global memory with a
// bulk copy from shared memory (bulk_group).
// out[b*512 + r*256 + t] = in[b*512 + r*256 + t] + 1000*r for stages r = 0, 1.
extern "C" __global__ void bulk_tma_style(const float *in, float *out)
{
    __shared__ alignas(16) float buf[2][256];
    __shared__ alignas(8) unsigned long long bar[2];
    unsigned t = threadIdx.x;
    const float *src = in + blockIdx.x * 512;
    float *dst = out + blockIdx.x * 512;
    if (t == 0)
        for (int r = 0; r < 2; r++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_address(&bar[r])) : "memory");
    __syncthreads();
    for (unsigned r = 0; r < 2; r++) {
        unsigned b = smem_address(&bar[r]);
        if (t == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;\n" ::"r"(b) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];\n"
                         ::"r"(smem_address(buf[r])), "l"(src + r * 256), "r"(b)
                         : "memory");
        }
        mbar_wait_parity(b, 0);
        buf[r][t] += 1000.0f * r;
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 2048;\n" ::"l"(dst),
                     "r"(smem_address(buf))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
}

// Distributed shared memory: in a cluster of two, each block copies its
// tile into the other block's buffer (cp.async.bulk.shared::cluster.
// shared::cta) and signals the other block's mbarrier, which that block
// armed with expect_tx. out[b*256 + t] = 3 * in[(b^1)*256 + t].
extern "C" __global__ void __cluster_dims__(2, 1, 1) bulk_cluster_exchange(const float *in, float *out)
{
    __shared__ alignas(16) float mine[256], theirs[256];
    __shared__ alignas(8) unsigned long long bar;
    unsigned t = threadIdx.x, rank, peer_theirs, peer_bar, b = smem_address(&bar);
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    mine[t] = 3.0f * in[blockIdx.x * 256 + t];
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;\n" ::"r"(b) : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_theirs) : "r"(smem_address(theirs)), "r"(rank ^ 1));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer_bar) : "r"(b), "r"(rank ^ 1));
    if (t == 0)
        asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];\n"
                     ::"r"(peer_theirs), "r"(smem_address(mine)), "r"(peer_bar)
                     : "memory");
    mbar_wait_parity(b, 0);
    out[blockIdx.x * 256 + t] = theirs[t];
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// ---- TMA --------------------------------------------------------------------

// out (16 x 32 floats) = the box at (x, y) of a 2-D f32 tensor whose map has
// a 16x32 box and the 128-byte swizzle, read back through the swizzle (16-byte
// chunk c of row r sits at chunk c ^ (r % 8)); outside the tensor: 0.
extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap map, float *out, int x, int y)
{
    namespace cde = cuda::device::experimental;
    using block_barrier = cuda::barrier<cuda::thread_scope_block>;
    __shared__ alignas(1024) float tile[16 * 32];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(tile, &map, x, y, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof tile);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(tile);
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) {
        int r = i / 32, c = i % 32, chunk = (c * 4 / 16) ^ (r % 8);
        out[i] = *reinterpret_cast<const float *>(bytes + r * 128 + chunk * 16 + c * 4 % 16);
    }
}

// Stores the box 1000 + i (16 x 32 floats, map without swizzle) at (x, y)
// of the tensor with a TMA store; elements outside the tensor are dropped.
extern "C" __global__ void tma_store_tile(const __grid_constant__ CUtensorMap map, int x, int y)
{
    namespace cde = cuda::device::experimental;
    __shared__ alignas(128) float tile[16 * 32];
    for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x)
        tile[i] = 1000.0f + (float)i;
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&map, x, y, tile);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}

#endif
