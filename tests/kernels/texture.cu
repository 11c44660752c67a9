// Textures and surfaces through bindless objects (cudaTextureObject_t and
// cudaSurfaceObject_t are 64-bit kernel parameters): tex1Dfetch, tex2D with
// float coordinates (filtering/addressing come from the object), tex2DLod,
// and surf2Dread/surf2Dwrite with byte-addressed x.

// tex1d_fetch: out[i] = tex1Dfetch<float>(tex, i + offset) for i < n (integer-indexed linear texture).
extern "C" __global__ void tex1d_fetch(cudaTextureObject_t tex, float *out, int offset, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(tex, i + offset);
}

// tex1d_fetch_int4: out[i] = tex1Dfetch<int4>(tex, i) for i < n (4-channel integer texel).
extern "C" __global__ void tex1d_fetch_int4(cudaTextureObject_t tex, int4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<int4>(tex, i);
}

// tex2d_sample: 2D grid over w x h: out[y*w+x] = tex2D<float>(tex, x*sx + ox, y*sy + oy) (coordinates in texels or normalized, as the object says).
extern "C" __global__ void tex2d_sample(cudaTextureObject_t tex, float *out, int w, int h, float sx, float sy, float ox, float oy)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2D<float>(tex, x * sx + ox, y * sy + oy);
}

// tex2d_float4_lod: out[y*w+x] = tex2DLod<float4>(tex, (x+0.5)/w, (y+0.5)/h, lod) (normalized coordinates, explicit level of detail).
extern "C" __global__ void tex2d_float4_lod(cudaTextureObject_t tex, float4 *out, int w, int h, float lod)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[y * w + x] = tex2DLod<float4>(tex, (x + 0.5f) / w, (y + 0.5f) / h, lod);
}

// surf2d_transpose_add: for (x,y) in w x h: dst(y,x) = src(x,y) + 1 with surf2Dread/surf2Dwrite of float (x in bytes), boundary mode trap.
extern "C" __global__ void surf2d_transpose_add(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    float v = surf2Dread<float>(src, x * (int)sizeof(float), y);
    surf2Dwrite(v + 1.0f, dst, y * (int)sizeof(float), x);
}

// surf2d_clamp_read: out[y*w+x] = surf2Dread<uchar4>(src, (x+dx)*4, y+dy, cudaBoundaryModeZero) packed as a u32 (out-of-range reads give 0).
extern "C" __global__ void surf2d_clamp_read(cudaSurfaceObject_t src, unsigned *out, int w, int h, int dx, int dy)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    uchar4 v = surf2Dread<uchar4>(src, (x + dx) * 4, y + dy, cudaBoundaryModeZero);
    out[y * w + x] = v.x | (v.y << 8) | (v.z << 16) | ((unsigned)v.w << 24);
}

// tex2d_layered_read: out[i] = tex2DLayered<float>(tex, x[i], y[i], layer[i]) (a layered texture; the layer index is an integer).
extern "C" __global__ void tex2d_layered_read(cudaTextureObject_t tex, const float *x, const float *y, const int *layer,
                                              float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DLayered<float>(tex, x[i], y[i], layer[i]);
}

// texcube_read: out[i] = texCubemap<float>(tex, d[3i], d[3i+1], d[3i+2]) (the direction picks a face).
extern "C" __global__ void texcube_read(cudaTextureObject_t tex, const float *d, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = texCubemap<float>(tex, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
}

// tex2d_grad_read: out[i] = tex2DGrad<float>(tex, u, v, (dxu, dxv), (dyu, dyv)) with the six values at q[6i].
extern "C" __global__ void tex2d_grad_read(cudaTextureObject_t tex, const float *q, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float *r = q + 6 * i;
        out[i] = tex2DGrad<float>(tex, r[0], r[1], make_float2(r[2], r[3]), make_float2(r[4], r[5]));
    }
}

// surf2d_layered_fill: surf2DLayeredwrite(layer*1000 + y*10 + x) at (x*4, y, layer) for blockIdx.x = layer, threadIdx = (x, y).
extern "C" __global__ void surf2d_layered_fill(cudaSurfaceObject_t s, int w, int h)
{
    int x = threadIdx.x, y = threadIdx.y, l = blockIdx.x;
    if (x < w && y < h)
        surf2DLayeredwrite(l * 1000 + y * 10 + x, s, x * (int)sizeof(int), y, l);
}

// tld4_layered_red: out[4i..4i+3] = tld4.r.a2d gather of layer layer[i] at (x[i], y[i]): the red channel of the 2x2 footprint, counter-clockwise from the lower left.
extern "C" __global__ void tld4_layered_red(cudaTextureObject_t tex, const float *x, const float *y, const int *layer,
                                            float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a, b, c, d;
    asm("tld4.r.a2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %7}];"
        : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
        : "l"(tex), "r"(layer[i]), "f"(x[i]), "f"(y[i]));
    out[4 * i] = a;
    out[4 * i + 1] = b;
    out[4 * i + 2] = c;
    out[4 * i + 3] = d;
}
