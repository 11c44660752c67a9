// transpose: out = in^T for a rows x cols row-major float matrix, through a
// 32x32 shared-memory tile padded to 33 columns (no bank conflicts).
// Launch: block (32, 8), grid (ceil(cols/32), ceil(rows/32)).

#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose(const float *in, float *out, unsigned rows, unsigned cols)
{
    __shared__ float tile[TILE][TILE + 1];
    unsigned x = blockIdx.x * TILE + threadIdx.x;
    unsigned y = blockIdx.y * TILE + threadIdx.y;
    for (unsigned j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;   // column in out = row in in
    y = blockIdx.x * TILE + threadIdx.y;
    for (unsigned j = 0; j < TILE; j += ROWS)
        if (x < rows && y + j < cols)
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
