// Communicators: ncclCommInitRank for every device from one thread inside
// ncclGroupStart/End, ncclCommInitRankConfig (non-blocking config),
// ncclCommSplit inside a group (colors, keys that reverse the order,
// NCCL_SPLIT_NOCOLOR), collectives on the split communicators, the
// queries, ncclCommFinalize then ncclCommDestroy, ncclCommAbort,
// ncclCommInitRankScalable, ncclMemAlloc/Free, ncclCommRegister and
// ncclBcast.
#include <vector>

#include "nccl_test.h"

static int *device_ints(int device, const std::vector<int> &values)
{
    int *p;
    CHECK(cudaSetDevice(device));
    CHECK(cudaMalloc(&p, values.size() * sizeof(int)));
    CHECK(cudaMemcpy(p, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice));
    return p;
}

static int host_int(const int *p)
{
    int v;
    CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

int main()
{
    int n = device_count(4);
    // InitRank for every rank from one thread, in a group
    ncclUniqueId id;
    NCHECK(ncclGetUniqueId(&id));
    std::vector<ncclComm_t> comms(n);
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        NCHECK(ncclCommInitRank(&comms[r], n, id, r));
    }
    NCHECK(ncclGroupEnd());
    std::vector<int *> value(n);
    for (int r = 0; r < n; r++) {
        int count, device, rank;
        NCHECK(ncclCommCount(comms[r], &count));
        NCHECK(ncclCommCuDevice(comms[r], &device));
        NCHECK(ncclCommUserRank(comms[r], &rank));
        EXPECT(count == n && device == r && rank == r);
        value[r] = device_ints(r, std::vector<int>(1, 10 + r));
    }
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++)
        NCHECK(ncclAllReduce(value[r], value[r], 1, ncclInt32, ncclSum, comms[r], 0));
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n; r++)
        EXPECT(host_int(value[r]) == 10 * n + n * (n - 1) / 2);

    // split: the last rank opts out; colors r % 2; keys reverse the order
    std::vector<ncclComm_t> sub(n);
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++)
        NCHECK(ncclCommSplit(comms[r], r == n - 1 ? NCCL_SPLIT_NOCOLOR : r % 2, n - r, &sub[r], NULL));
    NCHECK(ncclGroupEnd());
    EXPECT(sub[n - 1] == NULL);
    for (int r = 0; r < n - 1; r++) {
        if (!sub[r]) {
            failures++;
            continue;
        }
        int members = 0, position = 0, count, rank, device;
        for (int q = 0; q < n - 1; q++)
            if (q % 2 == r % 2) {
                members++;
                position += q > r; // higher parent ranks have smaller keys: they come first
            }
        NCHECK(ncclCommCount(sub[r], &count));
        NCHECK(ncclCommUserRank(sub[r], &rank));
        NCHECK(ncclCommCuDevice(sub[r], &device));
        EXPECT(count == members && rank == position && device == r);
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(value[r], &r, sizeof r, cudaMemcpyHostToDevice));
    }
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n - 1; r++)
        NCHECK(ncclAllReduce(value[r], value[r], 1, ncclInt32, ncclSum, sub[r], 0));
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n - 1; r++) {
        int want = 0;
        for (int q = 0; q < n - 1; q++)
            if (q % 2 == r % 2)
                want += q;
        EXPECT(host_int(value[r]) == want);
    }
    // a broadcast from sub-rank 0: the highest parent rank of each color
    for (int r = 0; r < n - 1; r++) {
        int v = 100 + r;
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(value[r], &v, sizeof v, cudaMemcpyHostToDevice));
    }
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n - 1; r++)
        NCHECK(ncclBroadcast(value[r], value[r], 1, ncclInt32, 0, sub[r], 0));
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n - 1; r++) {
        int top = r;
        for (int q = 0; q < n - 1; q++)
            if (q % 2 == r % 2 && q > top)
                top = q;
        EXPECT(host_int(value[r]) == 100 + top);
    }
    for (int r = 0; r < n - 1; r++) {
        NCHECK(ncclCommFinalize(sub[r]));
        EXPECT_NCCL(ncclAllReduce(value[r], value[r], 1, ncclInt32, ncclSum, sub[r], 0), ncclInvalidUsage);
        NCHECK(ncclCommDestroy(sub[r]));
    }
    for (int r = 0; r < n; r++)
        NCHECK(ncclCommDestroy(comms[r]));

    // InitRankConfig with a non-blocking config, in a group; then abort
    NCHECK(ncclGetUniqueId(&id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    config.commName = "kemu-test";
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        NCHECK(ncclCommInitRankConfig(&comms[r], n, id, r, &config));
    }
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n; r++) {
        ncclResult_t state = ncclInternalError;
        NCHECK(ncclCommGetAsyncError(comms[r], &state));
        EXPECT(state == ncclSuccess);
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(value[r], &r, sizeof r, cudaMemcpyHostToDevice));
    }
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++)
        NCHECK(ncclReduce(value[r], value[r], 1, ncclInt32, ncclMax, 2, comms[r], 0));
    NCHECK(ncclGroupEnd());
    EXPECT(host_int(value[2]) == n - 1);
    for (int r = 0; r < n; r++)
        NCHECK(ncclCommAbort(comms[r]));

    // ncclCommInitRankScalable (two ids), ncclMemAlloc'ed buffers
    // registered with the communicator, the deprecated ncclBcast
    ncclUniqueId ids[2];
    NCHECK(ncclGetUniqueId(&ids[0]));
    NCHECK(ncclGetUniqueId(&ids[1]));
    std::vector<void *> mem(n), handle(n);
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        NCHECK(ncclCommInitRankScalable(&comms[r], n, r, 2, ids, NULL));
    }
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n; r++) {
        CHECK(cudaSetDevice(r));
        NCHECK(ncclMemAlloc(&mem[r], 4 * sizeof(int)));
        cudaPointerAttributes attributes;
        CHECK(cudaPointerGetAttributes(&attributes, mem[r]));
        EXPECT(attributes.type == cudaMemoryTypeDevice && attributes.device == r);
        NCHECK(ncclCommRegister(comms[r], mem[r], 4 * sizeof(int), &handle[r]));
        int v[4] = {r, r + 1, r + 2, r + 3};
        CHECK(cudaMemcpy(mem[r], v, sizeof v, cudaMemcpyHostToDevice));
    }
    NCHECK(ncclGroupStart());
    for (int r = 0; r < n; r++)
        NCHECK(ncclBcast(mem[r], 4, ncclInt32, 3, comms[r], 0));
    NCHECK(ncclGroupEnd());
    for (int r = 0; r < n; r++) {
        int v[4];
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(v, mem[r], sizeof v, cudaMemcpyDeviceToHost));
        EXPECT(v[0] == 3 && v[1] == 4 && v[2] == 5 && v[3] == 6);
        NCHECK(ncclCommDeregister(comms[r], handle[r]));
        NCHECK(ncclMemFree(mem[r]));
        NCHECK(ncclCommDestroy(comms[r]));
        CHECK(cudaFree(value[r]));
    }
    return finish("nccl_comms");
}
