/* Textures and surfaces through bindless objects (tests/kernels/texture.cu)
 * against references computed here from the CUDA Programming Guide's
 * texture-fetching rules: point sampling picks texel floor(x); linear
 * filtering blends texels floor(x-0.5) and the next with a weight kept to
 * 8 fractional bits; clamp and border addressing; surfaces take x in bytes;
 * layered, cubemap (the face table) and mipmapped textures. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"

static kemu_device *dev;
static kemu_module *mod;

static void setup(void)
{
    kemu_error err;
    kemu_device_config cfg = {NULL, 2, NULL, 0, KEMU_UNINIT_NAN};
    ck_assert_int_eq(kemu_device_create(&cfg, &dev, &err), KEMU_OK);
    ck_assert_msg(kemu_module_load_ptx_file(dev, KERNELS_DIR "/texture.sm_80.O3.ptx", &mod, &err) == KEMU_OK, "%s",
                  err.message);
}

static void teardown(void) { kemu_device_destroy(dev); }

static kemu_kernel *kernel(const char *name)
{
    kemu_kernel *k;
    kemu_error err;
    ck_assert_int_eq(kemu_module_get_kernel(mod, name, &k, &err), KEMU_OK);
    return k;
}

static uint64_t upload(const void *data, size_t n)
{
    uint64_t a;
    kemu_error err;
    ck_assert_int_eq(kemu_malloc(dev, n, KEMU_UNINIT_NAN, &a, &err), KEMU_OK);
    ck_assert_int_eq(kemu_memcpy_htod(dev, a, data, n, &err), KEMU_OK);
    return a;
}

static kemu_texture_desc desc(uint64_t addr, unsigned w, unsigned h, int ch, int bits, int kind)
{
    kemu_texture_desc d;
    memset(&d, 0, sizeof d);
    d.address = addr;
    d.width = w;
    d.height = h;
    d.channels = ch;
    d.channel_bits = bits;
    d.channel_kind = kind;
    d.address_mode[0] = d.address_mode[1] = KEMU_ADDRESS_CLAMP;
    return d;
}

START_TEST(fetch_linear_memory)
{
    float src[100];
    for (int i = 0; i < 100; i++)
        src[i] = (float)i * 0.5f - 3.0f;
    kemu_texture_desc d = desc(upload(src, sizeof src), 100, 0, 1, 32, KEMU_CHANNEL_FLOAT);
    uint64_t tex, out;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, 100 * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    int offset = 10, n = 100;
    void *args[] = {&tex, &out, &offset, &n};
    kemu_launch_config lc = {{1, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(kernel("tex1d_fetch"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    float res[100];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int i = 0; i < 100; i++)
        ck_assert(res[i] == (i + 10 < 100 ? src[i + 10] : 0.0f)); /* out of range reads 0 */
}
END_TEST

START_TEST(fetch_int4)
{
    int32_t src[4 * 20];
    for (int i = 0; i < 80; i++)
        src[i] = i * 7 - 100;
    kemu_texture_desc d = desc(upload(src, sizeof src), 20, 0, 4, 32, KEMU_CHANNEL_SIGNED);
    uint64_t tex, out;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, sizeof src, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    int n = 20;
    void *args[] = {&tex, &out, &n};
    kemu_launch_config lc = {{1, 1, 1}, {32, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(kernel("tex1d_fetch_int4"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    int32_t res[80];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    ck_assert_mem_eq(res, src, sizeof src);
}
END_TEST

static float texel(const float *t, int w, int h, int x, int y)
{
    x = x < 0 ? 0 : x >= w ? w - 1 : x; /* clamp */
    y = y < 0 ? 0 : y >= h ? h - 1 : y;
    return t[y * w + x];
}

static float ref_linear(const float *t, int w, int h, float x, float y)
{
    float xb = x - 0.5f, yb = y - 0.5f;
    int i = (int)floorf(xb), j = (int)floorf(yb);
    float a = roundf((xb - floorf(xb)) * 256.0f) / 256.0f, b = roundf((yb - floorf(yb)) * 256.0f) / 256.0f;
    return (1 - a) * (1 - b) * texel(t, w, h, i, j) + a * (1 - b) * texel(t, w, h, i + 1, j) +
           (1 - a) * b * texel(t, w, h, i, j + 1) + a * b * texel(t, w, h, i + 1, j + 1);
}

START_TEST(sample_2d_point_and_linear)
{
    enum { W = 7, H = 5 };
    float src[W * H];
    for (int i = 0; i < W * H; i++)
        src[i] = (float)((i * 37) % 11) - 2.5f;
    uint64_t mem = upload(src, sizeof src), out;
    kemu_error err;
    ck_assert_int_eq(kemu_malloc(dev, 16 * 16 * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    for (int filter = 0; filter < 2; filter++) {
        kemu_texture_desc d = desc(mem, W, H, 1, 32, KEMU_CHANNEL_FLOAT);
        d.filter_mode = filter;
        uint64_t tex;
        ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
        int w = 16, h = 12;
        float sx = 0.55f, sy = 0.6f, ox = -0.8f, oy = 0.3f;
        void *args[] = {&tex, &out, &w, &h, &sx, &sy, &ox, &oy};
        kemu_launch_config lc = {{2, 2, 1}, {8, 8, 1}, {0, 0, 0}, 0, 0};
        ck_assert_msg(kemu_launch(kernel("tex2d_sample"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
        float res[16 * 12];
        kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                float u = (float)x * sx + ox, v = (float)y * sy + oy;
                float want = filter ? ref_linear(src, W, H, u, v)
                                    : texel(src, W, H, (int)floorf(u), (int)floorf(v));
                ck_assert_msg(fabsf(res[y * w + x] - want) <= 1e-5f, "filter %d at (%d,%d): %g vs %g", filter, x, y,
                              res[y * w + x], want);
            }
    }
}
END_TEST

START_TEST(normalized_float4_border)
{
    enum { W = 4, H = 4 };
    float src[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        src[i] = (float)i;
    kemu_texture_desc d = desc(upload(src, sizeof src), W, H, 4, 32, KEMU_CHANNEL_FLOAT);
    d.normalized_coords = 1;
    uint64_t tex, out;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, W * H * 16, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    int w = W, h = H;
    float lod = 0.0f;
    void *args[] = {&tex, &out, &w, &h, &lod};
    kemu_launch_config lc = {{1, 1, 1}, {W, H, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(kernel("tex2d_float4_lod"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    float res[W * H * 4];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    ck_assert_mem_eq(res, src, sizeof src); /* texel centres sample each texel exactly */
}
END_TEST

START_TEST(surfaces_transpose_and_zero_mode)
{
    enum { W = 6, H = 3 };
    float src[W * H];
    for (int i = 0; i < W * H; i++)
        src[i] = (float)i * 1.25f;
    uint64_t s = upload(src, sizeof src), dmem;
    kemu_error err;
    ck_assert_int_eq(kemu_malloc(dev, sizeof src, KEMU_UNINIT_NAN, &dmem, &err), KEMU_OK);
    kemu_texture_desc ds = desc(s, W, H, 1, 32, KEMU_CHANNEL_FLOAT), dd = desc(dmem, H, W, 1, 32, KEMU_CHANNEL_FLOAT);
    uint64_t hs, hd;
    ck_assert_int_eq(kemu_texture_create(dev, &ds, &hs, &err), KEMU_OK);
    ck_assert_int_eq(kemu_texture_create(dev, &dd, &hd, &err), KEMU_OK);
    int w = W, h = H;
    void *args[] = {&hs, &hd, &w, &h};
    kemu_launch_config lc = {{1, 1, 1}, {8, 4, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(kernel("surf2d_transpose_add"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
    float res[W * H];
    kemu_memcpy_dtoh(dev, res, dmem, sizeof res, &err);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ck_assert(res[x * H + y] == src[y * W + x] + 1.0f);
    /* uchar4 surface, shifted reads: out of range gives 0 (cudaBoundaryModeZero) */
    uint8_t px[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        px[i] = (uint8_t)(i * 3 + 1);
    kemu_texture_desc du = desc(upload(px, sizeof px), W, H, 4, 8, KEMU_CHANNEL_UNSIGNED);
    uint64_t hu, out;
    ck_assert_int_eq(kemu_texture_create(dev, &du, &hu, &err), KEMU_OK);
    ck_assert_int_eq(kemu_malloc(dev, W * H * 4, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    int dx = 2, dy = -1;
    void *a2[] = {&hu, &out, &w, &h, &dx, &dy};
    ck_assert_msg(kemu_launch(kernel("surf2d_clamp_read"), &lc, a2, NULL, &err) == KEMU_OK, "%s", err.message);
    uint32_t r2[W * H];
    kemu_memcpy_dtoh(dev, r2, out, sizeof r2, &err);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int sx = x + dx, sy = y + dy;
            uint32_t want = 0;
            if (sx >= 0 && sx < W && sy >= 0 && sy < H)
                memcpy(&want, &px[(sy * W + sx) * 4], 4);
            ck_assert_uint_eq(r2[y * W + x], want);
        }
    /* a trap-mode access out of range faults */
    int big = W + 1;
    void *a3[] = {&hs, &hd, &big, &h};
    ck_assert_int_eq(kemu_launch(kernel("surf2d_transpose_add"), &lc, a3, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "is outside the 6x3x1 surface (.trap)"), "%s", err.message);
}
END_TEST

START_TEST(bad_objects)
{
    kemu_error err;
    uint64_t h;
    kemu_texture_desc d = desc(0x1234, 10, 0, 1, 32, KEMU_CHANNEL_FLOAT);
    ck_assert_int_eq(kemu_texture_create(dev, &d, &h, &err), KEMU_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(err.message, "is not inside one device allocation"), "%s", err.message);
    uint64_t out, bogus = 77;
    ck_assert_int_eq(kemu_malloc(dev, 64, KEMU_UNINIT_NAN, &out, &err), KEMU_OK);
    int off = 0, n = 4;
    void *args[] = {&bogus, &out, &off, &n};
    kemu_launch_config lc = {{1, 1, 1}, {4, 1, 1}, {0, 0, 0}, 0, 0};
    ck_assert_int_eq(kemu_launch(kernel("tex1d_fetch"), &lc, args, NULL, &err), KEMU_ERR_KERNEL_FAULT);
    ck_assert_msg(strstr(err.message, "0x4d is not a texture or surface object"), "%s", err.message);
}
END_TEST

static uint64_t device_buffer(size_t n)
{
    uint64_t a;
    kemu_error err;
    ck_assert_int_eq(kemu_malloc(dev, n, KEMU_UNINIT_NAN, &a, &err), KEMU_OK);
    return a;
}

static void run(const char *name, void **args, unsigned blocks, unsigned tx, unsigned ty)
{
    kemu_error err;
    kemu_launch_config lc = {{blocks, 1, 1}, {tx, ty, 1}, {0, 0, 0}, 0, 0};
    ck_assert_msg(kemu_launch(kernel(name), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
}

/* Layered 2D: each layer is a slice; the layer index is clamped to the
 * last layer; point sampling picks floor(x), floor(y) of that layer. */
START_TEST(layered_2d_point)
{
    enum { W = 5, H = 3, L = 4, N = 6 };
    float img[L][H][W];
    for (int l = 0; l < L; l++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                img[l][y][x] = (float)(l * 100 + y * 10 + x);
    kemu_texture_desc d = desc(upload(img, sizeof img), W, H, 1, 32, KEMU_CHANNEL_FLOAT);
    d.depth = L;
    d.layout = KEMU_TEXTURE_LAYERED;
    uint64_t tex;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    float xs[N] = {0.5f, 4.9f, 2.2f, -3.0f, 3.5f, 1.0f}, ys[N] = {0.5f, 2.9f, 1.7f, 1.0f, 9.0f, 0.0f};
    int ls[N] = {0, 1, 2, 3, 9, -1}; /* 9 and -1 (as unsigned, huge): the last layer */
    uint64_t dx = upload(xs, sizeof xs), dy = upload(ys, sizeof ys), dl = upload(ls, sizeof ls), out = device_buffer(N * 4);
    int n = N;
    void *args[] = {&tex, &dx, &dy, &dl, &out, &n};
    run("tex2d_layered_read", args, 1, 32, 1);
    float res[N];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int i = 0; i < N; i++) {
        int l = ls[i] < 0 || ls[i] >= L ? L - 1 : ls[i];
        int x = (int)floorf(xs[i]), y = (int)floorf(ys[i]);
        x = x < 0 ? 0 : x >= W ? W - 1 : x;
        y = y < 0 ? 0 : y >= H ? H - 1 : y;
        ck_assert_msg(res[i] == img[l][y][x], "[%d] %g != %g", i, res[i], img[l][y][x]);
    }
}
END_TEST

/* Cubemap: the major axis picks the face (+x -x +y -y +z -z = layers 0-5)
 * and (s/m+1)/2, (t/m+1)/2 address it, with the Programming Guide's signs. */
START_TEST(cubemap_faces)
{
    enum { S = 2, N = 7 };
    float faces[6][S][S];
    for (int f = 0; f < 6; f++)
        for (int y = 0; y < S; y++)
            for (int x = 0; x < S; x++)
                faces[f][y][x] = (float)(f * 10 + y * 2 + x);
    kemu_texture_desc d = desc(upload(faces, sizeof faces), S, S, 1, 32, KEMU_CHANNEL_FLOAT);
    d.depth = 6;
    d.layout = KEMU_TEXTURE_CUBEMAP;
    uint64_t tex;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    /* direction -> face, texel (x = s > 0, y = t > 0) worked out by hand from the table */
    float dirs[N][3] = {{1, 0.5f, 0.5f},  /* +x: s = -z < 0, t = -y < 0 -> (0,0) */
                        {-1, -0.5f, 0.5f}, /* -x: s = z > 0, t = -y > 0 -> (1,1) */
                        {0.5f, 1, 0.5f},  /* +y: s = x > 0, t = z > 0 -> (1,1) */
                        {0.5f, -1, 0.5f}, /* -y: s = x > 0, t = -z < 0 -> (1,0) */
                        {-0.5f, 0.5f, 1}, /* +z: s = x < 0, t = -y < 0 -> (0,0) */
                        {-0.5f, -0.5f, -1}, /* -z: s = -x > 0, t = -y > 0 -> (1,1) */
                        {0.2f, -3, 2.9f}}; /* -y: s > 0, t = -z < 0 -> (1,0) */
    float want[N] = {0, 13, 23, 31, 40, 53, 31};
    uint64_t dd = upload(dirs, sizeof dirs), out = device_buffer(N * 4);
    int n = N;
    void *args[] = {&tex, &dd, &out, &n};
    run("texcube_read", args, 1, 32, 1);
    float res[N];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int i = 0; i < N; i++)
        ck_assert_msg(res[i] == want[i], "[%d] %g != %g", i, res[i], want[i]);
    d.height = 3; /* faces must be square */
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Mipmaps: level l of a 8x4 texture is filled with l*100; tex2DLod picks
 * the nearest level (point mipmap filter) or blends two (linear); the
 * level of detail is clamped to the levels present and [min, max] after
 * the bias; tex2DGrad takes log2 of the longer gradient in texels. */
START_TEST(mipmap_levels)
{
    enum { W = 8, H = 4, LEVELS = 4 };
    float lv[LEVELS][W * H];
    kemu_texture_desc d;
    for (int l = 0; l < LEVELS; l++) {
        unsigned w = W >> l ? W >> l : 1, h = H >> l ? H >> l : 1;
        for (unsigned i = 0; i < w * h; i++)
            lv[l][i] = (float)(l * 100);
        uint64_t a = upload(lv[l], w * h * 4);
        if (l == 0) {
            d = desc(a, w, h, 1, 32, KEMU_CHANNEL_FLOAT);
        } else {
            d.levels[l - 1] = (kemu_texture_level){a, w, h, 0, 0};
        }
    }
    d.num_levels = LEVELS;
    d.normalized_coords = 1;
    d.max_lod = 100.0f;
    float lods[] = {0.0f, 0.375f, 0.625f, 2.25f, 7.0f, -3.0f}; /* blend weights exact in 8 bits */
    float nearest[] = {0, 0, 100, 200, 300, 0}, blended[] = {0, 37.5f, 62.5f, 225, 300, 0};
    for (int mode = 0; mode < 2; mode++) {
        d.mipmap_filter_mode = mode ? KEMU_FILTER_LINEAR : KEMU_FILTER_POINT;
        uint64_t tex, out = device_buffer(W * H * 16);
        kemu_error err;
        ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
        for (unsigned k = 0; k < sizeof lods / sizeof lods[0]; k++) {
            int w = W, h = H;
            float lod = lods[k];
            void *args[] = {&tex, &out, &w, &h, &lod};
            kemu_launch_config lc = {{1, 1, 1}, {W, H, 1}, {0, 0, 0}, 0, 0};
            ck_assert_msg(kemu_launch(kernel("tex2d_float4_lod"), &lc, args, NULL, &err) == KEMU_OK, "%s", err.message);
            float res[W * H * 4];
            kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
            float want = mode ? blended[k] : nearest[k];
            ck_assert_msg(fabsf(res[4 * 5] - want) < 1e-3f, "lod %g mode %d: %g != %g", lod, mode, res[4 * 5], want);
        }
    }
    /* tex2DGrad, linear between levels, bias 0.5 and clamp [0, 2] */
    d.mipmap_filter_mode = KEMU_FILTER_LINEAR;
    d.lod_bias = 0.5f;
    d.max_lod = 2.0f;
    uint64_t tex, out = device_buffer(4 * 4);
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    float q[4][6] = {{0.5f, 0.5f, 1.0f / W, 0, 0, 1.0f / H},   /* lod 0 + 0.5 */
                     {0.5f, 0.5f, 2.0f / W, 0, 0, 0},          /* lod 1 + 0.5 */
                     {0.5f, 0.5f, 0, 0, 3.0f / W, 4.0f / H},   /* |(3,4)| = 5: lod 2.32 + 0.5 -> 2 */
                     {0.5f, 0.5f, 0, 0, 0, 0}};                /* no footprint: log2 0 + 0.5, clamped to 0 */
    float want[4] = {50, 150, 200, 0};
    uint64_t dq = upload(q, sizeof q);
    int n = 4;
    void *args[] = {&tex, &dq, &out, &n};
    run("tex2d_grad_read", args, 1, 32, 1);
    float res[4];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabsf(res[i] - want[i]) < 1e-3f, "grad [%d]: %g != %g", i, res[i], want[i]);
}
END_TEST

/* Layered surfaces: surf2DLayeredwrite stores into slice `layer`. */
START_TEST(layered_surface)
{
    enum { W = 4, H = 3, L = 2 };
    uint64_t mem = device_buffer(W * H * L * 4);
    kemu_texture_desc d = desc(mem, W, H, 1, 32, KEMU_CHANNEL_SIGNED);
    d.depth = L;
    d.layout = KEMU_TEXTURE_LAYERED;
    uint64_t s;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &s, &err), KEMU_OK);
    int w = W, h = H;
    void *args[] = {&s, &w, &h};
    run("surf2d_layered_fill", args, L, W, H);
    int32_t res[L][H][W];
    kemu_memcpy_dtoh(dev, res, mem, sizeof res, &err);
    for (int l = 0; l < L; l++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                ck_assert_int_eq(res[l][y][x], l * 1000 + y * 10 + x);
}
END_TEST

/* tld4 on a layered texture: the 2x2 footprint of the layer, counter-
 * clockwise from the lower left: (x0,y0+1), (x0+1,y0+1), (x0+1,y0), (x0,y0)
 * with x0 = floor(x - 0.5), clamped at the edges. */
START_TEST(gather_layered)
{
    enum { W = 4, H = 3, L = 2, N = 3 };
    float img[L][H][W];
    for (int l = 0; l < L; l++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                img[l][y][x] = (float)(l * 100 + y * 10 + x);
    kemu_texture_desc d = desc(upload(img, sizeof img), W, H, 1, 32, KEMU_CHANNEL_FLOAT);
    d.depth = L;
    d.layout = KEMU_TEXTURE_LAYERED;
    uint64_t tex;
    kemu_error err;
    ck_assert_int_eq(kemu_texture_create(dev, &d, &tex, &err), KEMU_OK);
    float xs[N] = {1.75f, 0.1f, 3.9f}, ys[N] = {1.25f, 2.9f, 0.2f};
    int ls[N] = {1, 0, 5};
    float want[N][4] = {{111, 112, 102, 101}, {20, 20, 20, 20}, {103, 103, 103, 103}};
    uint64_t dx = upload(xs, sizeof xs), dy = upload(ys, sizeof ys), dl = upload(ls, sizeof ls),
             out = device_buffer(N * 16);
    int n = N;
    void *args[] = {&tex, &dx, &dy, &dl, &out, &n};
    run("tld4_layered_red", args, 1, 32, 1);
    float res[N][4];
    kemu_memcpy_dtoh(dev, res, out, sizeof res, &err);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 4; k++)
            ck_assert_msg(res[i][k] == want[i][k], "[%d][%d] %g != %g", i, k, res[i][k], want[i][k]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("texture");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fetch_linear_memory);
    tcase_add_test(tc, fetch_int4);
    tcase_add_test(tc, sample_2d_point_and_linear);
    tcase_add_test(tc, normalized_float4_border);
    tcase_add_test(tc, surfaces_transpose_and_zero_mode);
    tcase_add_test(tc, bad_objects);
    tcase_add_test(tc, layered_2d_point);
    tcase_add_test(tc, cubemap_faces);
    tcase_add_test(tc, mipmap_levels);
    tcase_add_test(tc, layered_surface);
    tcase_add_test(tc, gather_layered);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
