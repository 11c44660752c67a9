// Dynamic parallelism (CDP2): the device runtime's cudaMemcpy3DAsync and
// cudaMemset3DAsync, cudaFuncGetAttributes, the occupancy calls and
// cudaGetErrorString / cudaGetErrorName in device code.
// Each block copies a 3D box between pitched volumes (offsets in both,
// extents in bytes, slices of ysize rows) with its cudaMemcpy3DParms in
// local memory (block 0), shared memory (block 1) or global memory that the
// host filled (block 2), then launches a child into the same stream that
// adds 1 to the copied box (stream order: the child sees the copy). Block 0
// also sets boxes of two volumes with cudaMemset3DAsync (slices with a gap
// between them, and slices that follow each other), makes calls that must
// fail (a host-to-device kind, a box past its allocation, a CUDA array, a
// pitch below the width, a stream that does not exist), reads a kernel's
// attributes and occupancy (compared with the host runtime's answers and
// with what the kernel's source says), and copies the strings of
// cudaGetErrorString / cudaGetErrorName out byte by byte (and prints one).
// Everything is checked here against values computed on the CPU.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include "check.h"

static const int BLOCKS = 3;
// source volumes: SP ints a row, SY rows a slice, SD slices; destinations: DP, DY, DD
static const int SP = 16, SY = 5, SD = 3, DP = 12, DY = 6, DD = 3;
static const int SVOL = SP * SY * SD, DVOL = DP * DY * DD;
// the box: W ints wide, H rows, D slices, from (SX, SYO, SZ) to (DX, DYO, DZ) (x in ints)
static const int W = 5, H = 3, D = 2, SX = 1, SYO = 1, SZ = 1, DX = 2, DYO = 2, DZ = 0;
// memset volumes: MP bytes a row, MY rows a slice, MD slices; the box MW bytes, MH rows, MD slices
static const int MP = 32, MY = 4, MD = 3, MW = 20, MH = 2;
static const int NCODES = 16, NERR = 5, STRLEN = 96;
__constant__ int ERRORS_DEV[NERR] = {0, 1, 21, 801, 9999};
static const int ERRORS[NERR] = {0, 1, 21, 801, 9999};
static const int SHARED_INTS = 300;

__device__ cudaPitchedPtr pitched(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    cudaPitchedPtr r;
    r.ptr = p;
    r.pitch = pitch;
    r.xsize = xsize;
    r.ysize = ysize;
    return r;
}

__device__ cudaExtent extent(size_t w, size_t h, size_t d)
{
    cudaExtent e;
    e.width = w;
    e.height = h;
    e.depth = d;
    return e;
}

__device__ cudaPos pos(size_t x, size_t y, size_t z)
{
    cudaPos p;
    p.x = x;
    p.y = y;
    p.z = z;
    return p;
}

__device__ void box_parms(cudaMemcpy3DParms *p, int *src, int *dst)
{
    memset(p, 0, sizeof *p);
    p->srcPtr = pitched(src, SP * sizeof(int), SP * sizeof(int), SY);
    p->srcPos = pos(SX * sizeof(int), SYO, SZ);
    p->dstPtr = pitched(dst, DP * sizeof(int), DP * sizeof(int), DY);
    p->dstPos = pos(DX * sizeof(int), DYO, DZ);
    p->extent = extent(W * sizeof(int), H, D);
    p->kind = cudaMemcpyDeviceToDevice;
}

__global__ void add_box(int *dst)
{
    int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
    dst[((DZ + z) * DY + DYO + y) * DP + DX + x] += 1;
}

__global__ void __launch_bounds__(256) with_shared(int *out)
{
    __shared__ int buf[SHARED_INTS];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
}

struct Results {
    int codes[BLOCKS][NCODES];
    int last_error;
    cudaFuncAttributes attr;
    int occupancy[4];
    char name[NERR][STRLEN], text[NERR][STRLEN];
};

__device__ void copy_string(char *to, const char *s)
{
    int i = 0;
    for (; s && s[i] && i < STRLEN - 1; i++)
        to[i] = s[i];
    to[i] = 0;
}

__global__ void parent(int *src, int *dst, cudaMemcpy3DParms *global_parms, char *m1, char *m2, char *small,
                       Results *res)
{
    __shared__ cudaMemcpy3DParms shared_parms;
    int b = blockIdx.x;
    int *c = res->codes[b];
    int *s = src + b * SVOL, *d = dst + b * DVOL;
    if (b == 0) {
        cudaMemcpy3DParms p; // in local memory
        box_parms(&p, s, d);
        c[0] = cudaMemcpy3DAsync(&p, 0);
    } else if (b == 1) {
        box_parms(&shared_parms, s, d);
        c[0] = cudaMemcpy3DAsync(&shared_parms, 0);
    } else {
        c[0] = cudaMemcpy3DAsync(global_parms, 0);
    }
    add_box<<<1, dim3(W, H, D)>>>(d);
    if (b != 0)
        return;

    // gaps between the slices (ysize MY > MH), then slices that follow each other
    c[1] = cudaMemset3DAsync(pitched(m1 + 4, MP, MP, MY), 0x5a, extent(MW, MH, MD), 0);
    c[2] = cudaMemset3DAsync(pitched(m2, MP, MP, MH), 0x33, extent(MP, MH, MD), 0);

    // refused
    cudaMemcpy3DParms bad;
    box_parms(&bad, s, d);
    bad.kind = cudaMemcpyHostToDevice;
    c[3] = cudaMemcpy3DAsync(&bad, 0);
    res->last_error = cudaGetLastError();
    box_parms(&bad, s, d);
    bad.dstPtr = pitched(small, 64, 64, 1);
    bad.dstPos = pos(0, 0, 0);
    bad.extent = extent(64, 2, 1); // two rows of 64 bytes in a 64-byte allocation
    c[4] = cudaMemcpy3DAsync(&bad, 0);
    box_parms(&bad, s, d);
    bad.srcArray = (cudaArray_t)s;
    bad.srcPtr = pitched(0, 0, 0, 0);
    c[5] = cudaMemcpy3DAsync(&bad, 0);
    c[6] = cudaMemset3DAsync(pitched(m1, 8, 8, MY), 0, extent(16, 2, 1), 0); // pitch below the width
    box_parms(&bad, s, d);
    c[7] = cudaMemcpy3DAsync(&bad, (cudaStream_t)0x12345);
    c[8] = cudaMemset3DAsync(pitched(small, 64, 64, 1), 0, extent(64, 1, 2), 0); // the second slice is outside
    c[9] = cudaMemset3DAsync(pitched(m1, MP, MP, MY), 0, extent(0, 1, 1), 0); // nothing to do

    // attributes and occupancy
    c[10] = cudaFuncGetAttributes(&res->attr, (const void *)with_shared);
    cudaFuncAttributes unused;
    c[11] = cudaFuncGetAttributes(&unused, (const void *)src);
    c[12] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res->occupancy[0], with_shared, 256, 0);
    c[13] = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&res->occupancy[1], with_shared, 128, 4096, 0);
    c[14] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res->occupancy[2], with_shared, 64, 1 << 20);
    c[15] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&res->occupancy[3], with_shared, 0, 0);

    for (int i = 0; i < NERR; i++) {
        copy_string(res->name[i], cudaGetErrorName((cudaError_t)ERRORS_DEV[i]));
        copy_string(res->text[i], cudaGetErrorString((cudaError_t)ERRORS_DEV[i]));
    }
    printf("device: %s: %s\n", cudaGetErrorName(cudaErrorInvalidValue), cudaGetErrorString(cudaErrorInvalidValue));
}

int main()
{
    int *src, *dst;
    char *m1, *m2, *small;
    cudaMemcpy3DParms *gparms;
    Results *res;
    std::vector<int> h_src(BLOCKS * SVOL), h_dst(BLOCKS * DVOL, -7);
    for (size_t i = 0; i < h_src.size(); i++)
        h_src[i] = (int)(i * 7 + 3);
    std::vector<char> h_m1(MP * MY * MD + 8, 0x11), h_m2(MP * MH * MD + 8, 0x11);
    CHECK(cudaMalloc(&src, h_src.size() * sizeof(int)));
    CHECK(cudaMalloc(&dst, h_dst.size() * sizeof(int)));
    CHECK(cudaMalloc(&m1, h_m1.size()));
    CHECK(cudaMalloc(&m2, h_m2.size()));
    CHECK(cudaMalloc(&small, 64));
    CHECK(cudaMalloc(&gparms, sizeof *gparms));
    CHECK(cudaMalloc(&res, sizeof *res));
    CHECK(cudaMemcpy(src, h_src.data(), h_src.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dst, h_dst.data(), h_dst.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(m1, h_m1.data(), h_m1.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(m2, h_m2.data(), h_m2.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(small, 0, 64));
    CHECK(cudaMemset(res, 0, sizeof *res));
    // block 2's parameters, made on the host
    cudaMemcpy3DParms hp;
    memset(&hp, 0, sizeof hp);
    hp.srcPtr = make_cudaPitchedPtr(src + 2 * SVOL, SP * sizeof(int), SP * sizeof(int), SY);
    hp.srcPos = make_cudaPos(SX * sizeof(int), SYO, SZ);
    hp.dstPtr = make_cudaPitchedPtr(dst + 2 * DVOL, DP * sizeof(int), DP * sizeof(int), DY);
    hp.dstPos = make_cudaPos(DX * sizeof(int), DYO, DZ);
    hp.extent = make_cudaExtent(W * sizeof(int), H, D);
    hp.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy(gparms, &hp, sizeof hp, cudaMemcpyHostToDevice));

    parent<<<BLOCKS, 1>>>(src, dst, gparms, m1, m2, small, res);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    Results r;
    CHECK(cudaMemcpy(h_dst.data(), dst, h_dst.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_m1.data(), m1, h_m1.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_m2.data(), m2, h_m2.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&r, res, sizeof r, cudaMemcpyDeviceToHost));

    // the boxes: copied and then incremented by the child; the rest untouched
    for (int b = 0; b < BLOCKS; b++) {
        EXPECT(r.codes[b][0] == cudaSuccess);
        for (int z = 0; z < DD; z++)
            for (int y = 0; y < DY; y++)
                for (int x = 0; x < DP; x++) {
                    int want = -7;
                    int bx = x - DX, by = y - DYO, bz = z - DZ;
                    if (bx >= 0 && bx < W && by >= 0 && by < H && bz >= 0 && bz < D)
                        want = h_src[b * SVOL + ((SZ + bz) * SY + SYO + by) * SP + SX + bx] + 1;
                    EXPECT(h_dst[b * DVOL + (z * DY + y) * DP + x] == want);
                }
    }
    // the sets
    int *c = r.codes[0];
    EXPECT(c[1] == cudaSuccess && c[2] == cudaSuccess);
    for (size_t i = 0; i < h_m1.size(); i++) {
        long o = (long)i - 4;
        long z = o / (MP * MY), y = o / MP % MY, x = o % MP;
        char want = o >= 0 && z < MD && y < MH && x < MW ? 0x5a : 0x11;
        EXPECT(h_m1[i] == want);
    }
    for (size_t i = 0; i < h_m2.size(); i++)
        EXPECT(h_m2[i] == (i < (size_t)(MP * MH * MD) ? 0x33 : 0x11));
    // the refusals
    EXPECT(c[3] == cudaErrorInvalidMemcpyDirection);
    EXPECT(r.last_error == cudaErrorInvalidMemcpyDirection);
    EXPECT(c[4] == cudaErrorInvalidValue);
    EXPECT(c[5] == cudaErrorInvalidValue);
    EXPECT(c[6] == cudaErrorInvalidPitchValue);
    EXPECT(c[7] == cudaErrorInvalidResourceHandle);
    EXPECT(c[8] == cudaErrorInvalidValue);
    EXPECT(c[9] == cudaSuccess);
    // attributes: as the source says, and as the host runtime says
    cudaFuncAttributes ha;
    CHECK(cudaFuncGetAttributes(&ha, with_shared));
    EXPECT(c[10] == cudaSuccess);
    EXPECT(c[11] == cudaErrorInvalidDeviceFunction);
    EXPECT(r.attr.sharedSizeBytes == SHARED_INTS * sizeof(int));
    EXPECT(r.attr.maxThreadsPerBlock == 256);
    EXPECT(r.attr.sharedSizeBytes == ha.sharedSizeBytes);
    EXPECT(r.attr.constSizeBytes == ha.constSizeBytes);
    EXPECT(r.attr.localSizeBytes == ha.localSizeBytes);
    EXPECT(r.attr.maxThreadsPerBlock == ha.maxThreadsPerBlock);
    EXPECT(r.attr.numRegs == ha.numRegs);
    EXPECT(r.attr.ptxVersion == ha.ptxVersion);
    EXPECT(r.attr.binaryVersion == ha.binaryVersion);
    EXPECT(r.attr.maxDynamicSharedSizeBytes == ha.maxDynamicSharedSizeBytes);
    // occupancy: as the host runtime says; within the device's limits
    int ho[3];
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ho[0], with_shared, 256, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&ho[1], with_shared, 128, 4096, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ho[2], with_shared, 64, 1 << 20));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    for (int i = 12; i <= 14; i++)
        EXPECT(c[i] == cudaSuccess);
    EXPECT(c[15] == cudaErrorInvalidValue);
    for (int i = 0; i < 3; i++)
        EXPECT(r.occupancy[i] == ho[i]);
    EXPECT(r.occupancy[0] >= 1 && r.occupancy[0] <= prop.maxThreadsPerMultiProcessor / 256);
    size_t per_block = SHARED_INTS * sizeof(int) + 4096 + prop.reservedSharedMemPerBlock;
    EXPECT(r.occupancy[1] >= 1 && (size_t)r.occupancy[1] <= prop.sharedMemPerMultiprocessor / per_block);
    EXPECT(r.occupancy[2] == 0); // 1 MiB of shared memory fits no SM
    // the strings: the host runtime's
    for (int i = 0; i < NERR; i++) {
        EXPECT(!strcmp(r.name[i], cudaGetErrorName((cudaError_t)ERRORS[i])));
        EXPECT(!strcmp(r.text[i], cudaGetErrorString((cudaError_t)ERRORS[i])));
    }
    EXPECT(!strcmp(r.text[1], "invalid argument"));
    EXPECT(!strcmp(r.name[2], "cudaErrorInvalidMemcpyDirection"));

    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaFree(m1));
    CHECK(cudaFree(m2));
    CHECK(cudaFree(small));
    CHECK(cudaFree(gparms));
    CHECK(cudaFree(res));
    return finish("cdp_memcpy3d");
}
