// Texture geometries beyond 1D/2D/3D and mipmaps: 1D- and 2D-layered
// arrays read with point and linear filtering, a cubemap and a layered
// cubemap sampled at face centres and near edges, a mipmapped 2D array read
// with tex2DLod and tex2DGrad (nearest and linear blending between levels,
// level bias and clamps), surfaces on a layered array, txq queries, the
// descriptor round trip and the allocation rules of cudaMalloc3DArray.
// The host references follow the CUDA Programming Guide: linear filtering
// with weights in 9-bit fixed point (8 fractional bits), the cubemap face
// table (major axis; (s/m+1)/2, (t/m+1)/2), and the level of detail as
// log2 of the larger gradient length in texels of level 0.
#include "check.h"
#include <cstring>

// ---- kernels ---------------------------------------------------------------------------

__global__ void read_layered_1d(cudaTextureObject_t t, const float *x, const int *layer, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1DLayered<float>(t, x[i], layer[i]);
}

__global__ void read_layered_2d(cudaTextureObject_t t, const float2 *p, const int *layer, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DLayered<float>(t, p[i].x, p[i].y, layer[i]);
}

// q: direction x, y, z and (layered) the cubemap index in w
__global__ void read_cube(cudaTextureObject_t t, const float4 *q, float *out, int n, int layered)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = layered ? texCubemapLayered<float>(t, q[i].x, q[i].y, q[i].z, (int)q[i].w)
                         : texCubemap<float>(t, q[i].x, q[i].y, q[i].z);
}

// q: u, v, level of detail
__global__ void read_lod(cudaTextureObject_t t, const float4 *q, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DLod<float>(t, q[i].x, q[i].y, q[i].z);
}

// q: u, v, then dx (2) and dy (2)
__global__ void read_grad(cudaTextureObject_t t, const float *q, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float *r = q + 6 * i;
        out[i] = tex2DGrad<float>(t, r[0], r[1], make_float2(r[2], r[3]), make_float2(r[4], r[5]));
    }
}

__global__ void write_surface(cudaSurfaceObject_t s, int w, int h, int layers)
{
    int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
    if (x < w && y < h && l < layers)
        surf2DLayeredwrite(l * 1000 + y * 10 + x, s, x * (int)sizeof(int), y, l);
}

__global__ void read_surface(cudaSurfaceObject_t s, int *out, int w, int h, int layers)
{
    int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
    if (x < w && y < h && l < layers)
        out[(l * h + y) * w + x] = 2 * surf2DLayeredread<int>(s, x * (int)sizeof(int), y, l);
}

__global__ void query(cudaTextureObject_t layered, cudaTextureObject_t mip, unsigned *out)
{
    unsigned v[7];
    asm("txq.width.b32 %0, [%1];" : "=r"(v[0]) : "l"(layered));
    asm("txq.height.b32 %0, [%1];" : "=r"(v[1]) : "l"(layered));
    asm("txq.array_size.b32 %0, [%1];" : "=r"(v[2]) : "l"(layered));
    asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(v[3]) : "l"(layered));
    asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(v[4]) : "l"(mip));
    asm("txq.level.width.b32 %0, [%1], %2;" : "=r"(v[5]) : "l"(mip), "r"(2));
    asm("txq.level.height.b32 %0, [%1], %2;" : "=r"(v[6]) : "l"(mip), "r"(3));
    for (int i = 0; i < 7; i++)
        out[i] = v[i];
}

// ---- host references --------------------------------------------------------------------

static float weight8(float a) { return roundf(a * 256.0f) / 256.0f; }
static int clampi(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

// one row of n texels, clamp addressing, texel coordinate x
static float ref_linear_1d(const float *row, int n, float x)
{
    float xb = x - 0.5f, fl = floorf(xb), a = weight8(xb - fl);
    int i = (int)fl;
    return (1.0f - a) * row[clampi(i, n)] + a * row[clampi(i + 1, n)];
}

// w x h image, clamp addressing, texel coordinates
static float ref_point_2d(const float *img, int w, int h, float x, float y)
{
    return img[clampi((int)floorf(y), h) * w + clampi((int)floorf(x), w)];
}

static float ref_linear_2d(const float *img, int w, int h, float x, float y)
{
    float xb = x - 0.5f, yb = y - 0.5f, fx = floorf(xb), fy = floorf(yb);
    float a = weight8(xb - fx), b = weight8(yb - fy);
    int i = (int)fx, j = (int)fy;
    float t00 = img[clampi(j, h) * w + clampi(i, w)], t10 = img[clampi(j, h) * w + clampi(i + 1, w)];
    float t01 = img[clampi(j + 1, h) * w + clampi(i, w)], t11 = img[clampi(j + 1, h) * w + clampi(i + 1, w)];
    return (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11;
}

// The Programming Guide's cubemap table: face, and (u, v) in [0, 1].
static int ref_face(float x, float y, float z, float *u, float *v)
{
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z), m, s, t;
    int face;
    if (ax >= ay && ax >= az) {
        m = ax, face = x >= 0 ? 0 : 1, s = x >= 0 ? -z : z, t = -y;
    } else if (ay >= az) {
        m = ay, face = y >= 0 ? 2 : 3, s = x, t = y >= 0 ? z : -z;
    } else {
        m = az, face = z >= 0 ? 4 : 5, s = z >= 0 ? x : -x, t = -y;
    }
    *u = (s / m + 1) / 2;
    *v = (t / m + 1) / 2;
    return face;
}

static int near(float got, float want) { return fabsf(got - want) <= 1e-3f * fmaxf(1.0f, fabsf(want)); }

template <typename T> static T *upload(const T *host, size_t n)
{
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static cudaTextureObject_t texture_of(cudaResourceDesc *res, int filter, int normalized, int mode)
{
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = (cudaTextureAddressMode)mode;
    td.filterMode = (cudaTextureFilterMode)filter;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = normalized;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, res, &td, nullptr));
    return t;
}

static cudaResourceDesc array_resource(cudaArray_t a)
{
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    return res;
}

// copies a w x h x depth float block (depth: layers or faces) into an array
static void fill_array(cudaArray_t a, const float *host, int w, int h, int depth)
{
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr((void *)host, w * sizeof(float), w, h);
    p.dstArray = a;
    p.extent = make_cudaExtent(w, h, depth);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
}

static const cudaChannelFormatDesc float_format = {32, 0, 0, 0, cudaChannelFormatKindFloat};

// ---- the cases ----------------------------------------------------------------------------

static void layered_1d(float *dout)
{
    const int W = 8, L = 3, N = 8;
    float data[L][W];
    for (int l = 0; l < L; l++)
        for (int x = 0; x < W; x++)
            data[l][x] = (float)(l * 100 + x * x);
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(W, 0, L), cudaArrayLayered));
    fill_array(a, &data[0][0], W, 1, L);
    const float xs[N] = {0.5f, 2.3f, 3.75f, 7.9f, -1.0f, 5.5f, 6.02f, 1.0f};
    const int ls[N] = {0, 1, 2, 0, 1, 2, 7, 1}; // 7: clamped to the last layer
    float *dx = upload(xs, N);
    int *dl = upload(ls, N);
    cudaResourceDesc res = array_resource(a);
    for (int filter = 0; filter < 2; filter++) {
        cudaTextureObject_t t = texture_of(&res, filter, 0, cudaAddressModeClamp);
        read_layered_1d<<<1, 32>>>(t, dx, dl, dout, N);
        float out[N];
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            const float *row = data[clampi(ls[i], L)];
            float want = filter ? ref_linear_1d(row, W, xs[i]) : row[clampi((int)floorf(xs[i]), W)];
            if (!near(out[i], want))
                printf("layered 1D %s [%d]: got %g, want %g\n", filter ? "linear" : "point", i, out[i], want);
            EXPECT(near(out[i], want));
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dl));
    CHECK(cudaFreeArray(a));
}

static void layered_2d(float *dout)
{
    const int W = 8, H = 6, L = 4, N = 10;
    static float data[L][H][W];
    for (int l = 0; l < L; l++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                data[l][y][x] = (float)(l * 1000 + x * x + 3 * y * y);
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(W, H, L), cudaArrayLayered));
    fill_array(a, &data[0][0][0], W, H, L);
    const float2 ps[N] = {{0.5f, 0.5f}, {2.3f, 4.1f}, {7.6f, 0.2f}, {3.5f, 3.5f}, {-2, 9},
                          {5.25f, 1.8f}, {1.1f, 5.9f}, {6.7f, 2.45f}, {4.0f, 4.0f}, {0.9f, 3.3f}};
    const int ls[N] = {0, 1, 2, 3, 3, 0, 1, 2, 3, 0};
    float2 *dp = upload(ps, N);
    int *dl = upload(ls, N);
    cudaResourceDesc res = array_resource(a);
    // linear with texel coordinates and clamping; point with normalized
    // coordinates and wrapping (u = x / W + 1 wraps to x)
    for (int filter = 0; filter < 2; filter++) {
        cudaTextureObject_t t = texture_of(&res, filter, !filter, filter ? cudaAddressModeClamp : cudaAddressModeWrap);
        float2 q[N];
        for (int i = 0; i < N; i++)
            q[i] = filter ? ps[i] : make_float2(ps[i].x / W + 1.0f, ps[i].y / H - 2.0f);
        CHECK(cudaMemcpy(dp, q, sizeof q, cudaMemcpyHostToDevice));
        read_layered_2d<<<1, 32>>>(t, dp, dl, dout, N);
        float out[N];
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            const float *img = &data[ls[i]][0][0];
            float want;
            if (filter) {
                want = ref_linear_2d(img, W, H, ps[i].x, ps[i].y);
            } else {
                float u = q[i].x - floorf(q[i].x), v = q[i].y - floorf(q[i].y);
                want = ref_point_2d(img, W, H, u * W, v * H);
            }
            if (!near(out[i], want))
                printf("layered 2D %s [%d]: got %g, want %g\n", filter ? "linear" : "point", i, out[i], want);
            EXPECT(near(out[i], want));
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    CHECK(cudaFree(dp));
    CHECK(cudaFree(dl));
    CHECK(cudaFreeArray(a));
}

static void cubemaps(float *dout)
{
    const int S = 4, CUBES = 2, N = 14;
    static float data[CUBES * 6][S][S];
    for (int f = 0; f < CUBES * 6; f++)
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++)
                data[f][y][x] = (float)(f * 100 + y * 10 + x + (x * y) % 3);
    // face centres, then points near edges and corners of faces
    const float4 qs[N] = {{1, 0, 0, 0},         {-1, 0, 0, 1},        {0, 1, 0, 0},          {0, -1, 0, 1},
                          {0, 0, 1, 0},         {0, 0, -1, 1},        {1, 0.9f, -0.3f, 0},   {-0.8f, 0.2f, 0.95f, 1},
                          {0.97f, -0.99f, 0.1f, 0}, {0.3f, -0.5f, -0.92f, 1}, {-0.6f, 0.7f, -0.69f, 0},
                          {0.05f, 2.0f, 1.9f, 1}, {-3, -2.9f, 2.95f, 0}, {0.25f, 0.1f, 0.5f, 1}};
    float4 *dq = upload(qs, N);
    for (int layered = 0; layered < 2; layered++) {
        cudaArray_t a;
        unsigned flags = cudaArrayCubemap | (layered ? cudaArrayLayered : 0);
        int depth = layered ? 6 * CUBES : 6;
        CHECK(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(S, S, depth), flags));
        fill_array(a, &data[0][0][0], S, S, depth);
        cudaResourceDesc res = array_resource(a);
        for (int filter = 0; filter < 2; filter++) {
            cudaTextureObject_t t = texture_of(&res, filter, 1, cudaAddressModeClamp);
            read_cube<<<1, 32>>>(t, dq, dout, N, layered);
            float out[N];
            CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
            for (int i = 0; i < N; i++) {
                float u, v;
                int face = ref_face(qs[i].x, qs[i].y, qs[i].z, &u, &v) + (layered ? 6 * (int)qs[i].w : 0);
                const float *img = &data[face][0][0];
                float want = filter ? ref_linear_2d(img, S, S, u * S, v * S) : ref_point_2d(img, S, S, u * S, v * S);
                if (!near(out[i], want))
                    printf("cubemap%s %s [%d]: got %g, want %g (face %d)\n", layered ? " layered" : "",
                           filter ? "linear" : "point", i, out[i], want, face);
                EXPECT(near(out[i], want));
            }
            CHECK(cudaDestroyTextureObject(t));
        }
        CHECK(cudaFreeArray(a));
    }
    CHECK(cudaFree(dq));
}

// level l of the mipmapped array holds mip_value(l, x, y)
static float mip_value(int l, int x, int y) { return (float)(l * 100 + x * 3 + y * 7 + (x * y) % 5); }

struct mip_ref {
    int levels, w, h;
    int filter, mip_filter;
    float bias, min_clamp, max_clamp;
    float sample_level(int l, float u, float v) const
    {
        int lw = w >> l ? w >> l : 1, lh = h >> l ? h >> l : 1;
        float img[16 * 8];
        for (int y = 0; y < lh; y++)
            for (int x = 0; x < lw; x++)
                img[y * lw + x] = mip_value(l, x, y);
        return filter ? ref_linear_2d(img, lw, lh, u * lw, v * lh) : ref_point_2d(img, lw, lh, u * lw, v * lh);
    }
    float sample(float u, float v, float lod) const
    {
        lod += bias;
        lod = fminf(fmaxf(lod, min_clamp), max_clamp);
        lod = fminf(fmaxf(lod, 0.0f), (float)(levels - 1));
        if (!mip_filter)
            return sample_level((int)floorf(lod + 0.5f), u, v);
        int l0 = (int)floorf(lod);
        float f = lod - l0;
        if (l0 >= levels - 1)
            return sample_level(levels - 1, u, v);
        return (1 - f) * sample_level(l0, u, v) + f * sample_level(l0 + 1, u, v);
    }
};

static void mipmaps(float *dout)
{
    const int W = 16, H = 8, N = 8;
    cudaMipmappedArray_t m;
    CHECK(cudaMallocMipmappedArray(&m, &float_format, make_cudaExtent(W, H, 0), 10)); // clamped to 5 levels
    int levels = 0;
    for (int l = 0; l < 10; l++) {
        cudaArray_t a;
        cudaError_t e = cudaGetMipmappedArrayLevel(&a, m, l);
        if (e != cudaSuccess) {
            EXPECT(e == cudaErrorInvalidValue);
            break;
        }
        levels++;
        cudaExtent ext;
        cudaChannelFormatDesc fd;
        unsigned flags;
        CHECK(cudaArrayGetInfo(&fd, &ext, &flags, a));
        int lw = W >> l ? W >> l : 1, lh = H >> l ? H >> l : 1;
        EXPECT(ext.width == (size_t)lw && ext.height == (size_t)lh && ext.depth == 0);
        float img[W * H];
        for (int y = 0; y < lh; y++)
            for (int x = 0; x < lw; x++)
                img[y * lw + x] = mip_value(l, x, y);
        CHECK(cudaMemcpy2DToArray(a, 0, 0, img, lw * sizeof(float), lw * sizeof(float), lh, cudaMemcpyHostToDevice));
    }
    (void)cudaGetLastError();
    EXPECT(levels == 5);

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = m;
    // level of detail with exact fractions, so the blend weight needs no rounding
    const float4 lq[N] = {{0.5f, 0.5f, 0, 0},     {0.3f, 0.6f, 1, 0},    {0.71f, 0.2f, 1.5f, 0}, {0.1f, 0.9f, 2.25f, 0},
                          {0.45f, 0.55f, 3.75f, 0}, {0.9f, 0.1f, 4, 0},   {0.6f, 0.35f, 9, 0},    {0.2f, 0.8f, -2, 0}};
    // gradients: u, v, dx, dy (level of detail log2 of the larger length in texels)
    const float gq[N][6] = {{0.5f, 0.5f, 1.0f / W, 0, 0, 1.0f / H},          // 1 texel: lod 0
                            {0.3f, 0.6f, 2.0f / W, 0, 0, 1.0f / H},          // 2: lod 1
                            {0.7f, 0.2f, 0, 4.0f / H, 1.0f / W, 0},          // 4: lod 2
                            {0.4f, 0.4f, 2.0f / W, 2.0f / H, 0, 0},         // 2 sqrt 2: lod 1.5
                            {0.8f, 0.3f, 1.0f / W, 1.0f / H, 0, 2.0f / H},   // sqrt 2 and 2: lod 1
                            {0.25f, 0.75f, 0, 0, 20.0f / W, 20.0f / H},      // beyond the last level
                            {0.55f, 0.45f, 0, 0, 0, 0},                      // no footprint: level 0
                            {0.15f, 0.65f, 4.0f / W, 4.0f / H, 0, 5.0f / H}}; // 4 sqrt 2: lod 2.5
    float4 *dl = upload(lq, N);
    float *dg = upload(&gq[0][0], 6 * N);
    struct variant { int filter, mip_filter; float bias, lo, hi; } vs[] = {
        {0, 1, 0, 0, 100}, {1, 0, 0, 0, 100}, {1, 1, 0, 0, 100}, {0, 1, 0.5f, 0.75f, 2.5f}};
    for (const variant &vr : vs) {
        cudaTextureDesc td;
        memset(&td, 0, sizeof td);
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = (cudaTextureFilterMode)vr.filter;
        td.mipmapFilterMode = (cudaTextureFilterMode)vr.mip_filter;
        td.mipmapLevelBias = vr.bias;
        td.minMipmapLevelClamp = vr.lo;
        td.maxMipmapLevelClamp = vr.hi;
        td.normalizedCoords = 1;
        td.maxAnisotropy = 1;
        cudaTextureObject_t t = 0;
        CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
        cudaTextureDesc back;
        CHECK(cudaGetTextureObjectTextureDesc(&back, t));
        EXPECT(back.mipmapFilterMode == td.mipmapFilterMode && back.mipmapLevelBias == vr.bias &&
               back.minMipmapLevelClamp == vr.lo && back.maxMipmapLevelClamp == vr.hi);
        cudaResourceDesc rback;
        CHECK(cudaGetTextureObjectResourceDesc(&rback, t));
        EXPECT(rback.resType == cudaResourceTypeMipmappedArray && rback.res.mipmap.mipmap == m);
        mip_ref ref = {levels, W, H, vr.filter, vr.mip_filter, vr.bias, vr.lo, vr.hi};
        float out[N];
        read_lod<<<1, 32>>>(t, dl, dout, N);
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            float want = ref.sample(lq[i].x, lq[i].y, lq[i].z);
            if (!near(out[i], want))
                printf("tex2DLod filter %d/%d [%d]: got %g, want %g\n", vr.filter, vr.mip_filter, i, out[i], want);
            EXPECT(near(out[i], want));
        }
        read_grad<<<1, 32>>>(t, dg, dout, N);
        CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            const float *g = gq[i];
            double lx = hypot(g[2] * W, g[3] * H), ly = hypot(g[4] * W, g[5] * H);
            double rho = lx > ly ? lx : ly;
            float lod = rho > 0 ? (float)log2(rho) : -1000.0f;
            float want = ref.sample(g[0], g[1], lod);
            if (!near(out[i], want))
                printf("tex2DGrad filter %d/%d [%d]: got %g, want %g (lod %g)\n", vr.filter, vr.mip_filter, i, out[i],
                       want, lod);
            EXPECT(near(out[i], want));
        }
        CHECK(cudaDestroyTextureObject(t));
    }
    CHECK(cudaFree(dl));
    CHECK(cudaFree(dg));
    CHECK(cudaFreeMipmappedArray(m));
}

static void surfaces()
{
    const int W = 8, H = 4, L = 3;
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<int>();
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &fd, make_cudaExtent(W, H, L), cudaArrayLayered | cudaArraySurfaceLoadStore));
    cudaResourceDesc res = array_resource(a);
    cudaSurfaceObject_t s = 0;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    write_surface<<<L, dim3(W, H)>>>(s, W, H, L);
    int *dout;
    CHECK(cudaMalloc(&dout, W * H * L * sizeof(int)));
    read_surface<<<L, dim3(W, H)>>>(s, dout, W, H, L);
    static int got[L][H][W], raw[L][H][W];
    CHECK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    // the layers are the depth dimension of a 3D copy out of the array
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcArray = a;
    p.dstPtr = make_cudaPitchedPtr(raw, W * sizeof(int), W, H);
    p.extent = make_cudaExtent(W, H, L);
    p.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p));
    int bad = 0;
    for (int l = 0; l < L; l++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                bad += raw[l][y][x] != l * 1000 + y * 10 + x || got[l][y][x] != 2 * raw[l][y][x];
    EXPECT(bad == 0);
    cudaExtent ext;
    unsigned flags;
    CHECK(cudaArrayGetInfo(&fd, &ext, &flags, a));
    EXPECT(ext.width == W && ext.height == H && ext.depth == L &&
           flags == (cudaArrayLayered | cudaArraySurfaceLoadStore));
    CHECK(cudaDestroySurfaceObject(s));
    CHECK(cudaFree(dout));
    CHECK(cudaFreeArray(a));
}

static void queries()
{
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(8, 6, 4), cudaArrayLayered));
    cudaResourceDesc res = array_resource(a);
    cudaTextureObject_t t = texture_of(&res, 0, 0, cudaAddressModeClamp);
    cudaMipmappedArray_t m;
    CHECK(cudaMallocMipmappedArray(&m, &float_format, make_cudaExtent(32, 16, 0), 4));
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = m;
    cudaTextureObject_t tm = texture_of(&res, 0, 1, cudaAddressModeClamp);
    unsigned *dq, q[7];
    CHECK(cudaMalloc(&dq, sizeof q));
    query<<<1, 1>>>(t, tm, dq);
    CHECK(cudaMemcpy(q, dq, sizeof q, cudaMemcpyDeviceToHost));
    EXPECT(q[0] == 8 && q[1] == 6 && q[2] == 4 && q[3] == 1);
    EXPECT(q[4] == 4 && q[5] == 32 >> 2 && q[6] == 16 >> 3);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaDestroyTextureObject(tm));
    CHECK(cudaFree(dq));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeMipmappedArray(m));
}

static void errors()
{
    cudaArray_t a;
    EXPECT_ERROR(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 5, 6), cudaArrayCubemap),
                 cudaErrorInvalidValue); // faces must be square
    EXPECT_ERROR(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 4, 5), cudaArrayCubemap),
                 cudaErrorInvalidValue); // six faces
    EXPECT_ERROR(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 4, 12), cudaArrayCubemap),
                 cudaErrorInvalidValue); // twelve faces need cudaArrayLayered
    EXPECT_ERROR(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 4, 9), cudaArrayCubemap | cudaArrayLayered),
                 cudaErrorInvalidValue); // a multiple of six
    EXPECT_ERROR(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 4, 0), cudaArrayLayered),
                 cudaErrorInvalidValue); // no layers
    CHECK(cudaMalloc3DArray(&a, &float_format, make_cudaExtent(4, 4, 12), cudaArrayCubemap | cudaArrayLayered));
    cudaArrayMemoryRequirements req;
    EXPECT_ERROR(cudaArrayGetMemoryRequirements(&req, a, 0), cudaErrorInvalidValue); // not deferred-mapping
    cudaResourceDesc res = array_resource(a);
    cudaSurfaceObject_t s;
    EXPECT_ERROR(cudaCreateSurfaceObject(&s, &res), cudaErrorInvalidValue); // no cudaArraySurfaceLoadStore
    CHECK(cudaFreeArray(a));
    cudaMipmappedArray_t m;
    CHECK(cudaMallocMipmappedArray(&m, &float_format, make_cudaExtent(8, 8, 0), 2));
    EXPECT_ERROR(cudaGetMipmappedArrayLevel(&a, m, 2), cudaErrorInvalidValue);
    CHECK(cudaFreeMipmappedArray(m));
}

int main()
{
    float *dout;
    CHECK(cudaMalloc(&dout, 64 * sizeof(float)));
    layered_1d(dout);
    layered_2d(dout);
    cubemaps(dout);
    mipmaps(dout);
    surfaces();
    queries();
    errors();
    CHECK(cudaFree(dout));
    return finish("texture_layered");
}
