// Every collective (AllReduce, Reduce, ReduceScatter, Broadcast, AllGather,
// Gather, Scatter, each out of place and in place, and AlltoAll) x every
// ncclDataType_t x every reduction
// (sum, prod, max, min, avg, and PreMulSum with the scalar on the host and
// on the device, a different scalar per rank), on all the devices of the
// process from one thread (ncclCommInitAll, ncclGroupStart/End; built with
// -DNCCL_TEST_MPI, the devices of every process under mpirun: nccl_test.h's
// open_comms). Each
// rank's result is compared bit for bit with a reference computed here in
// the documented order: rank 0 OP rank 1 OP ... left to right, each step
// rounded to the element type (half, bfloat16, fp8 through CUDA's own
// conversions), avg = the sum divided by the number of ranks, integers
// wrapping.
#include <cstdint>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "nccl_test.h"

static const size_t COUNT = 37;

enum kind { SIGNED, UNSIGNED, F32, F64, SMALL };
struct type_info {
    ncclDataType_t type;
    const char *name;
    size_t size;
    kind k;
};
static const type_info types[] = {
    {ncclInt8, "int8", 1, SIGNED},          {ncclUint8, "uint8", 1, UNSIGNED},
    {ncclInt32, "int32", 4, SIGNED},        {ncclUint32, "uint32", 4, UNSIGNED},
    {ncclInt64, "int64", 8, SIGNED},        {ncclUint64, "uint64", 8, UNSIGNED},
    {ncclFloat16, "half", 2, SMALL},        {ncclFloat32, "float", 4, F32},
    {ncclFloat64, "double", 8, F64},        {ncclBfloat16, "bfloat16", 2, SMALL},
    {ncclFloat8e4m3, "fp8e4m3", 1, SMALL},  {ncclFloat8e5m2, "fp8e5m2", 1, SMALL},
};

// ---- small floats through CUDA's host conversions ----
static float small_to_float(ncclDataType_t t, uint64_t bits)
{
    switch (t) {
    case ncclFloat16: {
        __half_raw r;
        r.x = (unsigned short)bits;
        return __half2float(__half(r));
    }
    case ncclBfloat16: {
        __nv_bfloat16_raw r;
        r.x = (unsigned short)bits;
        return __bfloat162float(__nv_bfloat16(r));
    }
    case ncclFloat8e4m3:
        return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)bits, __NV_E4M3)));
    default:
        return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)bits, __NV_E5M2)));
    }
}

static uint64_t float_to_small(ncclDataType_t t, float f)
{
    switch (t) {
    case ncclFloat16:
        return ((__half_raw)__float2half_rn(f)).x;
    case ncclBfloat16:
        return ((__nv_bfloat16_raw)__float2bfloat16_rn(f)).x;
    case ncclFloat8e4m3:
        return __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3);
    default:
        return __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2);
    }
}

static float round_small(ncclDataType_t t, float f)
{
    return small_to_float(t, float_to_small(t, f));
}

// ---- raw elements ----
static uint64_t load(const type_info &t, const unsigned char *p, size_t i)
{
    uint64_t v = 0;
    memcpy(&v, p + i * t.size, t.size);
    return v;
}

static void store(const type_info &t, unsigned char *p, size_t i, uint64_t v)
{
    memcpy(p + i * t.size, &v, t.size);
}

static int64_t sign_extend(const type_info &t, uint64_t v)
{
    int shift = 64 - 8 * (int)t.size;
    return (int64_t)(v << shift) >> shift;
}

static uint64_t width_mask(const type_info &t)
{
    return t.size == 8 ? ~0ull : (1ull << (8 * t.size)) - 1;
}

// the input of rank r at element j, as bits of the type
static uint64_t input_bits_wide(const type_info &t, int r, size_t j)
{
    int base = (int)((j * 7 + (size_t)r * 11) % 13) - 6;
    double f = base / 4.0 * (1.0 + 0.1 * (double)((j + (size_t)r) % 3)); // inexact sums
    switch (t.k) {
    case SIGNED:
        return (uint64_t)(int64_t)(base * (t.size == 1 ? 9 : 1000003));
    case UNSIGNED:
        return (uint64_t)(base + 6) * (t.size == 1 ? 19 : 2654435761u);
    case F32: {
        float x = (float)f;
        uint64_t v = 0;
        memcpy(&v, &x, 4);
        return v;
    }
    case F64: {
        uint64_t v;
        memcpy(&v, &f, 8);
        return v;
    }
    default:
        return float_to_small(t.type, (float)f);
    }
}

static uint64_t input_bits(const type_info &t, int r, size_t j)
{
    return input_bits_wide(t, r, j) & width_mask(t);
}

// rank r's PreMulSum scalar
static uint64_t scalar_bits(const type_info &t, int r)
{
    double f = 0.5 + 0.375 * r;
    switch (t.k) {
    case SIGNED:
    case UNSIGNED:
        return (uint64_t)(r + 2);
    case F32: {
        float x = (float)f;
        uint64_t v = 0;
        memcpy(&v, &x, 4);
        return v;
    }
    case F64: {
        uint64_t v;
        memcpy(&v, &f, 8);
        return v;
    }
    default:
        return float_to_small(t.type, (float)f);
    }
}

static const int PREMUL = 100;

// one step of the reference in the type: acc OP v
static uint64_t ref_combine(const type_info &t, int op, uint64_t acc, uint64_t v)
{
    if (t.k == SIGNED || t.k == UNSIGNED) {
        int64_t a = t.k == SIGNED ? sign_extend(t, acc) : (int64_t)acc, b = t.k == SIGNED ? sign_extend(t, v) : (int64_t)v;
        if (op == ncclProd)
            return (acc * v) & width_mask(t);
        if (op == ncclMax)
            return (t.k == SIGNED ? b > a : v > acc) ? v : acc;
        if (op == ncclMin)
            return (t.k == SIGNED ? b < a : v < acc) ? v : acc;
        return (acc + v) & width_mask(t);
    }
    double a, b, r;
    if (t.k == F32) {
        float x, y;
        memcpy(&x, &acc, 4);
        memcpy(&y, &v, 4);
        float z = op == ncclProd ? x * y : op == ncclMax ? (y > x ? y : x) : op == ncclMin ? (y < x ? y : x) : x + y;
        uint64_t out = 0;
        memcpy(&out, &z, 4);
        return out;
    }
    if (t.k == F64) {
        memcpy(&a, &acc, 8);
        memcpy(&b, &v, 8);
        r = op == ncclProd ? a * b : op == ncclMax ? (b > a ? b : a) : op == ncclMin ? (b < a ? b : a) : a + b;
        uint64_t out;
        memcpy(&out, &r, 8);
        return out;
    }
    float x = small_to_float(t.type, acc), y = small_to_float(t.type, v);
    float z = op == ncclProd ? x * y : op == ncclMax ? (y > x ? y : x) : op == ncclMin ? (y < x ? y : x) : x + y;
    return float_to_small(t.type, z);
}

static uint64_t ref_scale(const type_info &t, uint64_t v, uint64_t s)
{
    return ref_combine(t, ncclProd, v, s);
}

static uint64_t ref_divide(const type_info &t, uint64_t acc, int n)
{
    switch (t.k) {
    case SIGNED:
        return (uint64_t)(sign_extend(t, acc) / n);
    case UNSIGNED:
        return (acc & (t.size == 8 ? ~0ull : (1ull << (8 * t.size)) - 1)) / (uint64_t)n;
    case F32: {
        float x;
        memcpy(&x, &acc, 4);
        x = x / (float)n;
        uint64_t out = 0;
        memcpy(&out, &x, 4);
        return out;
    }
    case F64: {
        double x;
        memcpy(&x, &acc, 8);
        x = x / n;
        uint64_t out;
        memcpy(&out, &x, 8);
        return out;
    }
    default:
        return float_to_small(t.type, small_to_float(t.type, acc) / (float)n);
    }
}

// element j of the reduction over all ranks of inputs at element offset `at`
static uint64_t reference(const type_info &t, int op, int n, size_t at)
{
    uint64_t acc = 0;
    for (int r = 0; r < n; r++) {
        uint64_t v = input_bits(t, r, at);
        if (op == PREMUL)
            v = ref_scale(t, v, scalar_bits(t, r));
        acc = r == 0 ? v : ref_combine(t, op == ncclAvg || op == PREMUL ? ncclSum : op, acc, v);
    }
    if (op == ncclAvg)
        acc = ref_divide(t, acc, n);
    uint64_t mask = t.size == 8 ? ~0ull : (1ull << (8 * t.size)) - 1;
    return acc & mask;
}

static const char *coll_names[] = {"AllReduce", "Reduce", "ReduceScatter", "Broadcast", "AllGather",
                                   "AlltoAll", "Gather", "Scatter"};
enum { ALLREDUCE, REDUCE, REDUCESCATTER, BROADCAST, ALLGATHER, ALLTOALL, GATHER, SCATTER };
static int reported;

int main()
{
    std::vector<ncclComm_t> comms;
    rank_layout L = open_comms(comms, 2);
    const int n = L.nranks, first = L.first, last = L.first + L.nlocal;
    std::vector<cudaStream_t> streams(n);
    std::vector<unsigned char *> send(n), recv(n), dscalar(n);
    const size_t bytes = COUNT * (size_t)n * 8;
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        CHECK(cudaStreamCreate(&streams[i]));
        CHECK(cudaMalloc(&send[i], bytes));
        CHECK(cudaMalloc(&recv[i], bytes));
        CHECK(cudaMalloc(&dscalar[i], 8));
    }
    const int root = n - 1, broadcast_root = 1;
    std::vector<unsigned char> host(bytes), want(bytes);
    int cases = 0;
    for (const type_info &t : types) {
        for (int coll = 0; coll < 8; coll++) {
            int reduces = coll < 3;
            // ops: sum prod max min avg, premul (host scalar), premul (device scalar)
            for (int opi = 0; opi < (reduces ? 7 : 1); opi++) {
                for (int inplace = 0; inplace < (coll == ALLTOALL ? 1 : 2); inplace++) {
                    int op = opi < 5 ? opi : PREMUL;
                    std::vector<ncclRedOp_t> ops(n, (ncclRedOp_t)(opi < 5 ? opi : 0));
                    // inputs: send holds n blocks for ReduceScatter, AlltoAll and
                    // Scatter (its root's), one otherwise
                    size_t in_count = coll == REDUCESCATTER || coll == ALLTOALL || coll == SCATTER ? COUNT * n : COUNT;
                    for (int r = first; r < last; r++) {
                        CHECK(cudaSetDevice(L.device(r)));
                        for (size_t j = 0; j < in_count; j++)
                            store(t, host.data(), j, input_bits(t, r, j));
                        unsigned char *dst = send[r];
                        // in place: AllGather's sendbuff = recvbuff + rank * count; Gather's
                        // (at the root) recvbuff + root * count; the others' sendbuff = recvbuff
                        if (inplace && coll == ALLGATHER)
                            dst = recv[r] + (size_t)r * COUNT * t.size;
                        else if (inplace && coll == GATHER)
                            dst = r == root ? recv[r] + (size_t)r * COUNT * t.size : send[r];
                        else if (inplace)
                            dst = recv[r];
                        CHECK(cudaMemcpy(dst, host.data(), in_count * t.size, cudaMemcpyHostToDevice));
                        if (op == PREMUL) {
                            uint64_t s = scalar_bits(t, r);
                            if (opi == 5) {
                                NCHECK(ncclRedOpCreatePreMulSum(&ops[r], &s, t.type, ncclScalarHostImmediate, comms[r]));
                            } else {
                                CHECK(cudaMemcpy(dscalar[r], &s, t.size, cudaMemcpyHostToDevice));
                                NCHECK(ncclRedOpCreatePreMulSum(&ops[r], dscalar[r], t.type, ncclScalarDevice, comms[r]));
                            }
                        }
                    }
                    NCHECK(ncclGroupStart());
                    for (int r = first; r < last; r++) {
                        unsigned char *in = inplace ? recv[r] : send[r];
                        switch (coll) {
                        case ALLREDUCE:
                            NCHECK(ncclAllReduce(in, recv[r], COUNT, t.type, ops[r], comms[r], streams[r]));
                            break;
                        case REDUCE:
                            NCHECK(ncclReduce(in, recv[r], COUNT, t.type, ops[r], root, comms[r], streams[r]));
                            break;
                        case REDUCESCATTER: // in place: recvbuff = sendbuff + rank * recvcount
                            NCHECK(ncclReduceScatter(in, inplace ? recv[r] + (size_t)r * COUNT * t.size : recv[r],
                                                     COUNT, t.type, ops[r], comms[r], streams[r]));
                            break;
                        case BROADCAST:
                            NCHECK(ncclBroadcast(in, recv[r], COUNT, t.type, broadcast_root, comms[r], streams[r]));
                            break;
                        case ALLGATHER:
                            NCHECK(ncclAllGather(inplace ? recv[r] + (size_t)r * COUNT * t.size : send[r], recv[r],
                                                 COUNT, t.type, comms[r], streams[r]));
                            break;
                        case ALLTOALL:
                            NCHECK(ncclAlltoAll(send[r], recv[r], COUNT, t.type, comms[r], streams[r]));
                            break;
                        case GATHER:
                            NCHECK(ncclGather(inplace && r == root ? recv[r] + (size_t)r * COUNT * t.size : send[r],
                                              recv[r], COUNT, t.type, root, comms[r], streams[r]));
                            break;
                        default: // Scatter in place: recvbuff = sendbuff + root * count at the root
                            NCHECK(ncclScatter(in, inplace && r == broadcast_root ? recv[r] + (size_t)r * COUNT * t.size
                                                                                  : recv[r],
                                               COUNT, t.type, broadcast_root, comms[r], streams[r]));
                        }
                    }
                    NCHECK(ncclGroupEnd());
                    if (op == PREMUL)
                        for (int r = first; r < last; r++)
                            NCHECK(ncclRedOpDestroy(ops[r], comms[r]));
                    for (int r = first; r < last; r++) {
                        if ((coll == REDUCE || coll == GATHER) && r != root)
                            continue;
                        CHECK(cudaSetDevice(L.device(r)));
                        CHECK(cudaStreamSynchronize(streams[r]));
                        size_t out_offset = inplace && (coll == REDUCESCATTER || (coll == SCATTER && r == broadcast_root))
                                                ? (size_t)r * COUNT : 0;
                        size_t out_count = coll == ALLGATHER || coll == ALLTOALL || coll == GATHER ? COUNT * n : COUNT;
                        for (size_t j = 0; j < out_count; j++) {
                            uint64_t v;
                            if (coll == ALLREDUCE || coll == REDUCE)
                                v = reference(t, op, n, j);
                            else if (coll == REDUCESCATTER)
                                v = reference(t, op, n, (size_t)r * COUNT + j);
                            else if (coll == BROADCAST)
                                v = input_bits(t, broadcast_root, j);
                            else if (coll == ALLGATHER || coll == GATHER)
                                v = input_bits(t, (int)(j / COUNT), j % COUNT);
                            else if (coll == ALLTOALL) // block s of rank r: rank s's block r
                                v = input_bits(t, (int)(j / COUNT), (size_t)r * COUNT + j % COUNT);
                            else // Scatter: block r of the root's
                                v = input_bits(t, broadcast_root, (size_t)r * COUNT + j);
                            store(t, want.data(), j, v);
                        }
                        CHECK(cudaMemcpy(host.data(), recv[r] + out_offset * t.size, out_count * t.size,
                                         cudaMemcpyDeviceToHost));
                        if (memcmp(host.data(), want.data(), out_count * t.size)) {
                            failures++;
                            if (reported++ < 10) {
                                size_t j = 0;
                                while (j + 1 < out_count && load(t, host.data(), j) == load(t, want.data(), j))
                                    j++;
                                printf("FAIL: %s %s op %d %s, rank %d element %zu: 0x%llx, want 0x%llx\n",
                                       coll_names[coll], t.name, op, inplace ? "in place" : "out of place", r, j,
                                       (unsigned long long)load(t, host.data(), j),
                                       (unsigned long long)load(t, want.data(), j));
                            }
                        }
                    }
                    cases++;
                }
            }
        }
    }
    printf("%d cases on %d ranks\n", cases, n);
    EXPECT(cases == 12 * (3 * 7 * 2 + 2 * 2 + 1 + 2 * 2));
    for (int i = first; i < last; i++) {
        CHECK(cudaSetDevice(L.device(i)));
        CHECK(cudaFree(send[i]));
        CHECK(cudaFree(recv[i]));
        CHECK(cudaFree(dscalar[i]));
        NCHECK(ncclCommDestroy(comms[i]));
    }
    return close_comms("nccl_matrix");
}
