// matmul: C = A * B for row-major float matrices, A is M x K, B is K x N,
// C is M x N (SGEMM without alpha/beta).
//
// Classic shared-memory tiling: each 16x16 block computes one 16x16 tile of
// C. It walks along K in steps of 16, staging one tile of A and one of B in
// shared memory, so every global element is read once per block instead of
// once per thread. Edge tiles are zero-padded, so M, N, K may be anything.
// Launch: block (16,16), grid (ceil(N/16), ceil(M/16)).

#define TILE 16

extern "C" __global__ void matmul(const float *A, const float *B, float *C,
                                  unsigned M, unsigned N, unsigned K)
{
    __shared__ float a_tile[TILE][TILE];
    __shared__ float b_tile[TILE][TILE];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned row = blockIdx.y * TILE + ty;
    unsigned col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += TILE) {
        // each thread loads one element of each tile (zero outside the matrix)
        a_tile[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        b_tile[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (unsigned k = 0; k < TILE; k++)
            acc += a_tile[ty][k] * b_tile[k][tx];
        __syncthreads();   // the tiles are overwritten in the next step
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
