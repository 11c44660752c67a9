// Stream-ordered memory pools: the device's default pool and its
// attributes (release threshold, reuse flags, used and reserved bytes,
// high watermarks), reuse of a freed block in stream order, trimming, a
// pool of one's own made the device's current pool, access descriptors,
// kernels using pool memory across streams, and cudaMallocAsync /
// cudaFreeAsync captured into a graph as allocation and free nodes.
#include "check.h"
#include <cstdint>
#include <vector>

__global__ void fill(int *p, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v + i;
}

__global__ void add_into(int *dst, const int *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] += src[i];
}

static uint64_t attr64(cudaMemPool_t pool, cudaMemPoolAttr attr)
{
    uint64_t v = ~0ull;
    CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return v;
}

static int attr_int(cudaMemPool_t pool, cudaMemPoolAttr attr)
{
    int v = -1;
    CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return v;
}

int main()
{
    const int N = 1 << 18; // 1 MiB of ints
    const size_t BYTES = N * sizeof(int);
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));

    int supported = 0;
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    EXPECT(supported == 1);

    // the default pool is the current one, with CUDA's default attributes
    cudaMemPool_t pool, current;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CHECK(cudaDeviceGetMemPool(&current, 0));
    EXPECT(pool == current);
    EXPECT(attr64(pool, cudaMemPoolAttrReleaseThreshold) == 0);
    EXPECT(attr_int(pool, cudaMemPoolReuseFollowEventDependencies) == 1);
    EXPECT(attr_int(pool, cudaMemPoolReuseAllowOpportunistic) == 1);
    EXPECT(attr_int(pool, cudaMemPoolReuseAllowInternalDependencies) == 1);
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) == 0);

    // allocate, use on two streams, free: used memory follows
    int *a, *b;
    CHECK(cudaMallocAsync(&a, BYTES, s1));
    CHECK(cudaMallocAsync(&b, BYTES, s1));
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) >= 2 * BYTES);
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemCurrent) >= attr64(pool, cudaMemPoolAttrUsedMemCurrent));
    fill<<<N / 256, 256, 0, s1>>>(a, N, 1);
    fill<<<N / 256, 256, 0, s1>>>(b, N, 100);
    cudaEvent_t ready;
    CHECK(cudaEventCreate(&ready));
    CHECK(cudaEventRecord(ready, s1));
    CHECK(cudaStreamWaitEvent(s2, ready, 0));
    add_into<<<N / 256, 256, 0, s2>>>(a, b, N);
    std::vector<int> h(N);
    CHECK(cudaMemcpyAsync(h.data(), a, BYTES, cudaMemcpyDeviceToHost, s2));
    CHECK(cudaFreeAsync(b, s2));
    CHECK(cudaFreeAsync(a, s2));
    CHECK(cudaStreamSynchronize(s2));
    for (int i = 0; i < N; i += 997)
        EXPECT(h[i] == 101 + 2 * i);
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemHigh) >= 2 * BYTES);
    // threshold 0: a synchronization gave the memory back
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemHigh) >= 2 * BYTES);

    // with a high release threshold the pool keeps freed memory and reuses it in stream order
    uint64_t threshold = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    EXPECT(attr64(pool, cudaMemPoolAttrReleaseThreshold) == UINT64_MAX);
    size_t free_before, free_after, total;
    CHECK(cudaMemGetInfo(&free_before, &total));
    int *c, *c2;
    CHECK(cudaMallocAsync(&c, BYTES, s1));
    CHECK(cudaFreeAsync(c, s1));
    CHECK(cudaMallocAsync(&c2, BYTES, s1));
    EXPECT(c2 == c);
    CHECK(cudaFreeAsync(c2, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemCurrent) >= BYTES);
    CHECK(cudaMemGetInfo(&free_after, &total));
    EXPECT(free_after + BYTES <= free_before); // what the pool keeps is not free
    CHECK(cudaMemPoolTrimTo(pool, 0));
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
    threshold = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

    // cudaFree takes cudaMallocAsync memory too (synchronizing)
    int *f;
    CHECK(cudaMallocAsync(&f, BYTES, s1));
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) >= BYTES);
    CHECK(cudaFree(f));
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
    EXPECT_ERROR(cudaFreeAsync(f, s1), cudaErrorInvalidValue); // twice
    cudaGetLastError();

    // high watermarks reset to the current values
    uint64_t zero = 0;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemHigh) == 0);
    EXPECT(attr64(pool, cudaMemPoolAttrReservedMemHigh) == 0);
    uint64_t used = 5;
    EXPECT_ERROR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaErrorInvalidValue);
    cudaGetLastError();
    EXPECT_ERROR(cudaMemPoolDestroy(pool), cudaErrorInvalidValue); // the default pool stays
    cudaGetLastError();

    // a pool of our own
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t mine;
    CHECK(cudaMemPoolCreate(&mine, &props));
    cudaMemLocation where = {};
    where.type = cudaMemLocationTypeDevice;
    where.id = 0;
    cudaMemAccessFlags access;
    CHECK(cudaMemPoolGetAccess(&access, mine, &where));
    EXPECT(access == cudaMemAccessFlagsProtReadWrite);
    cudaMemAccessDesc desc = {};
    desc.location = where;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    CHECK(cudaMemPoolSetAccess(mine, &desc, 1));
    int *m;
    CHECK(cudaMallocFromPoolAsync(&m, BYTES, mine, s1));
    EXPECT(attr64(mine, cudaMemPoolAttrUsedMemCurrent) >= BYTES);
    EXPECT(attr64(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
    fill<<<N / 256, 256, 0, s1>>>(m, N, 5);
    CHECK(cudaMemcpyAsync(h.data(), m, BYTES, cudaMemcpyDeviceToHost, s1));
    CHECK(cudaFreeAsync(m, s1));
    CHECK(cudaStreamSynchronize(s1));
    EXPECT(h[1000] == 1005);
    // made current, cudaMallocAsync uses it
    CHECK(cudaDeviceSetMemPool(0, mine));
    CHECK(cudaDeviceGetMemPool(&current, 0));
    EXPECT(current == mine);
    CHECK(cudaMallocAsync(&m, BYTES, s1));
    EXPECT(attr64(mine, cudaMemPoolAttrUsedMemCurrent) >= BYTES);
    CHECK(cudaFreeAsync(m, s1));
    CHECK(cudaStreamSynchronize(s1));
    CHECK(cudaDeviceSetMemPool(0, pool));
    CHECK(cudaMemPoolDestroy(mine));

    // cudaMallocAsync / cudaFreeAsync captured: allocation and free nodes
    CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    int *g;
    CHECK(cudaMallocAsync(&g, BYTES, s1));
    fill<<<N / 256, 256, 0, s1>>>(g, N, 9);
    CHECK(cudaMemcpyAsync(h.data(), g, BYTES, cudaMemcpyDeviceToHost, s1));
    CHECK(cudaFreeAsync(g, s1));
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(s1, &graph));
    size_t count = 0;
    CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    EXPECT(count == 4);
    std::vector<cudaGraphNode_t> nodes(count);
    CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    int allocs = 0, frees = 0;
    for (cudaGraphNode_t n : nodes) {
        cudaGraphNodeType type;
        CHECK(cudaGraphNodeGetType(n, &type));
        if (type == cudaGraphNodeTypeMemAlloc) {
            allocs++;
            cudaMemAllocNodeParams ap;
            CHECK(cudaGraphMemAllocNodeGetParams(n, &ap));
            EXPECT(ap.dptr == g && ap.bytesize == BYTES);
        }
        frees += type == cudaGraphNodeTypeMemFree;
    }
    EXPECT(allocs == 1 && frees == 1);
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < 3; round++) {
        h[77] = 0;
        CHECK(cudaGraphLaunch(exec, s1));
        CHECK(cudaStreamSynchronize(s1));
        EXPECT(h[77] == 86);
    }
    uint64_t graph_used = ~0ull;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &graph_used));
    EXPECT(graph_used == 0); // the graph freed what it allocated
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));

    CHECK(cudaEventDestroy(ready));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    return finish("mempool");
}
