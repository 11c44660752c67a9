// The tensor memory accelerator (sm_90): a tensor map made on the host with
// cuTensorMapEncodeTiled, fetched through cudaGetDriverEntryPointByVersion
// (no libcuda link), and boxes copied with cp.async.bulk.tensor through
// libcu++ (cuda::device::experimental):
//  - a 2D load with the 128-byte swizzle into shared memory, boxes partly
//    outside the tensor (negative and too large coordinates read zeros, or
//    NaN with the NaN fill), completing a cuda::barrier's transaction count;
//    the kernel reads the tile back through the swizzle (16-byte chunk c of
//    row r at chunk c ^ (r % 8));
//  - a 2D store from shared memory, partly outside the tensor (nothing is
//    written there).
#include "check.h"
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>

namespace cde = cuda::device::experimental;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

constexpr int ROWS = 40, COLS = 72;  // the tensor: ROWS x COLS floats, row-major
constexpr int BOX_R = 16, BOX_C = 32; // the box: 16 rows of 32 floats (128 bytes)

// out[b][r][c] = tile element (r, c) of the box at (x, y) = (xs[b], ys[b])
__global__ void load_boxes(const __grid_constant__ CUtensorMap map, const int *xs, const int *ys, float *out)
{
    __shared__ alignas(1024) float tile[BOX_R * BOX_C];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(tile, &map, xs[blockIdx.x], ys[blockIdx.x], bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof tile);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(tile);
    for (int i = threadIdx.x; i < BOX_R * BOX_C; i += blockDim.x) {
        int r = i / BOX_C, c = i % BOX_C;
        int chunk = (c * 4 / 16) ^ (r % 8), within = c * 4 % 16;
        out[blockIdx.x * BOX_R * BOX_C + i] = *reinterpret_cast<const float *>(bytes + r * 128 + chunk * 16 + within);
    }
}

// Stores a tile of value 1000*b + i (row-major, no swizzle) as the box at (x, y).
__global__ void store_box(const __grid_constant__ CUtensorMap map, int x, int y)
{
    __shared__ alignas(128) float tile[BOX_R * BOX_C];
    for (int i = threadIdx.x; i < BOX_R * BOX_C; i += blockDim.x)
        tile[i] = 1000.0f + (float)i;
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&map, x, y, tile);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                              const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

int main()
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    EXPECT(q == cudaDriverEntryPointSuccess && fn != nullptr);
    if (!fn)
        return finish("tma");
    encode_fn encode = reinterpret_cast<encode_fn>(fn);

    static float h[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++)
        h[i] = (float)i;
    float *d;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    cuuint64_t dims[2] = {COLS, ROWS}, strides[1] = {COLS * sizeof(float)};
    cuuint32_t box[2] = {BOX_C, BOX_R}, estr[2] = {1, 1};
    alignas(64) CUtensorMap map_swz, map_nan, map_plain;
    EXPECT(encode(&map_swz, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
    EXPECT(encode(&map_nan, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) == CUDA_SUCCESS);
    EXPECT(encode(&map_plain, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS);
    // the driver's checks: a box row wider than the swizzle, a misaligned stride
    cuuint32_t wide[2] = {64, BOX_R};
    alignas(64) CUtensorMap bad;
    EXPECT(encode(&bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, wide, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_ERROR_INVALID_VALUE);
    cuuint64_t odd_strides[1] = {COLS * sizeof(float) + 4};
    EXPECT(encode(&bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, odd_strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_ERROR_INVALID_VALUE);

    // boxes: inside, past the right and bottom edges, at negative coordinates
    const int NB = 4;
    int hx[NB] = {8, 48, 0, -8}, hy[NB] = {3, 30, -5, 20};
    int *xs, *ys;
    float *out;
    static float o[NB * BOX_R * BOX_C];
    CHECK(cudaMalloc(&xs, sizeof hx));
    CHECK(cudaMalloc(&ys, sizeof hy));
    CHECK(cudaMalloc(&out, sizeof o));
    CHECK(cudaMemcpy(xs, hx, sizeof hx, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(ys, hy, sizeof hy, cudaMemcpyHostToDevice));
    for (int nan_fill = 0; nan_fill < 2; nan_fill++) {
        load_boxes<<<NB, 128>>>(nan_fill ? map_nan : map_swz, xs, ys, out);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost));
        for (int b = 0; b < NB; b++)
            for (int r = 0; r < BOX_R; r++)
                for (int c = 0; c < BOX_C; c++) {
                    int gy = hy[b] + r, gx = hx[b] + c;
                    float got = o[(b * BOX_R + r) * BOX_C + c];
                    if (gy >= 0 && gy < ROWS && gx >= 0 && gx < COLS)
                        EXPECT(got == h[gy * COLS + gx]);
                    else if (nan_fill)
                        EXPECT(std::isnan(got));
                    else
                        EXPECT(got == 0.0f);
                }
    }

    // a store that runs past the bottom-right corner
    store_box<<<1, 128>>>(map_plain, 56, 30);
    CHECK(cudaGetLastError());
    static float back[ROWS * COLS];
    CHECK(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));
    for (int y = 0; y < ROWS; y++)
        for (int x = 0; x < COLS; x++) {
            int r = y - 30, c = x - 56;
            bool in_box = r >= 0 && r < BOX_R && c >= 0 && c < BOX_C;
            EXPECT(back[y * COLS + x] == (in_box ? 1000.0f + (float)(r * BOX_C + c) : h[y * COLS + x]));
        }
    CHECK(cudaFree(d));
    CHECK(cudaFree(out));
    CHECK(cudaFree(xs));
    CHECK(cudaFree(ys));
    return finish("tma");
}
