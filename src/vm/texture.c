/* Textures and surfaces on bindless objects: tex (point and linear
 * filtering, normalized or texel coordinates, wrap/clamp/mirror/border
 * addressing, element-type or normalized-float reads) on 1D, 2D, 3D,
 * layered 1D/2D and cubemap (layered or not) geometries, with mipmaps
 * (tex.level's explicit level of detail, tex.grad's level from the
 * gradients, point or linear filtering between levels), tld4 gathers,
 * txq queries, and byte-addressed suld/sust (layered too) with
 * trap/clamp/zero handling of out-of-range coordinates. Linear filtering
 * uses 8 fractional bits of the weight, as the CUDA Programming Guide
 * describes for the texture unit; the blend between two mipmap levels is
 * quantized the same way. Channels the object lacks read as 0 (alpha 1.0
 * for float reads). Layer indices are unsigned and clamped to the last
 * layer; cubemap faces are sampled with clamp-to-edge addressing (no
 * seamless filtering across faces). */
#include "vm/vm_internal.h"

#include <math.h>
#include <string.h>

static const vm_texture *texture_of(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, int lane, uint64_t handle)
{
    vm_launch *L = b->launch;
    if (handle == 0 || handle > (uint64_t)L->ntextures || !L->textures[handle - 1].live) {
        vm_fault_at(b, w, f, pc, (uint32_t)lane, 700, "0x%llx is not a texture or surface object",
                    (unsigned long long)handle);
        return NULL;
    }
    return &L->textures[handle - 1];
}

static unsigned elem_bytes(const vm_texture *t) { return (unsigned)(t->channels * t->channel_bits / 8); }

/* How one lookup addresses one level: the texture, the level, and the
 * coordinate interpretation (cubemap faces: normalized and clamped). */
typedef struct tex_sampler {
    const vm_texture *t;
    const vm_texture_level *lv;
    int normalized;
    int mode[3];
} tex_sampler;

static tex_sampler sampler_of(const vm_texture *t, int level, int cube)
{
    tex_sampler s = {t, &t->level[level], t->normalized_coords, {t->address_mode[0], t->address_mode[1], t->address_mode[2]}};
    if (cube) {
        s.normalized = 1;
        s.mode[0] = s.mode[1] = KEMU_ADDRESS_CLAMP;
    }
    return s;
}

/* Host pointer of texel (x,y,z) of a level (z: the slice or layer), which
 * must be in range, or NULL when the memory is no longer allocated. */
static const uint8_t *texel_ptr(vm_launch *L, const tex_sampler *s, long long x, long long y, long long z, unsigned bytes)
{
    const vm_texture_level *lv = s->lv;
    uint64_t a = lv->address + (uint64_t)z * lv->slice + (uint64_t)y * lv->pitch + (uint64_t)x * elem_bytes(s->t);
    if (!mem_find(L->mem, a, bytes))
        return NULL;
    return (const uint8_t *)(uintptr_t)a;
}

/* One channel of a texel as float (for float reads) */
static float channel_float(const vm_texture *t, const uint8_t *p, int c)
{
    const uint8_t *q = p + c * (t->channel_bits / 8);
    int norm = t->read_mode == KEMU_READ_NORMALIZED_FLOAT;
    switch (t->channel_bits) {
    case 8:
        if (t->channel_kind == KEMU_CHANNEL_SIGNED) {
            int8_t v = (int8_t)*q;
            return norm ? fmaxf((float)v / 127.0f, -1.0f) : (float)v;
        }
        return norm ? (float)*q / 255.0f : (float)*q;
    case 16: {
        uint16_t v;
        memcpy(&v, q, 2);
        if (t->channel_kind == KEMU_CHANNEL_FLOAT)
            return vm_f16_to_f32(v);
        if (t->channel_kind == KEMU_CHANNEL_SIGNED)
            return norm ? fmaxf((float)(int16_t)v / 32767.0f, -1.0f) : (float)(int16_t)v;
        return norm ? (float)v / 65535.0f : (float)v;
    }
    default: {
        uint32_t v;
        memcpy(&v, q, 4);
        if (t->channel_kind == KEMU_CHANNEL_FLOAT)
            return vm_f32_from_bits(v);
        return t->channel_kind == KEMU_CHANNEL_SIGNED ? (float)(int32_t)v : (float)v;
    }
    }
}

static uint32_t channel_int(const vm_texture *t, const uint8_t *p, int c)
{
    const uint8_t *q = p + c * (t->channel_bits / 8);
    int sg = t->channel_kind == KEMU_CHANNEL_SIGNED;
    switch (t->channel_bits) {
    case 8: return sg ? (uint32_t)(int32_t)(int8_t)*q : *q;
    case 16: { uint16_t v; memcpy(&v, q, 2); return sg ? (uint32_t)(int32_t)(int16_t)v : v; }
    default: { uint32_t v; memcpy(&v, q, 4); return v; }
    }
}

static unsigned dim_size(const vm_texture_level *lv, int d)
{
    unsigned s = d == 0 ? lv->width : d == 1 ? lv->height : lv->depth;
    return s ? s : 1;
}

/* Resolves a texel index along dimension d with the address mode; returns
 * 0 when the index falls on the border. */
static int resolve_index(const tex_sampler *s, int d, long long *i)
{
    long long n = dim_size(s->lv, d);
    switch (s->mode[d]) {
    case KEMU_ADDRESS_WRAP:
        *i %= n;
        if (*i < 0) *i += n;
        return 1;
    case KEMU_ADDRESS_MIRROR: {
        long long p = *i % (2 * n);
        if (p < 0) p += 2 * n;
        *i = p < n ? p : 2 * n - 1 - p;
        return 1;
    }
    case KEMU_ADDRESS_BORDER:
        return *i >= 0 && *i < n;
    default:
        if (*i < 0) *i = 0;
        if (*i >= n) *i = n - 1;
        return 1;
    }
}

/* Fetches texel (ix,iy,iz) as 4 floats with address modes applied to the
 * first dims indices; below 3 dimensions, iz is the layer (or face). */
static int fetch_float(vm_launch *L, const tex_sampler *s, int dims, long long ix, long long iy, long long iz,
                       float out[4])
{
    long long idx[3] = {ix, dims > 1 ? iy : 0, iz};
    for (int d = 0; d < dims; d++)
        if (!resolve_index(s, d, &idx[d])) {
            memcpy(out, s->t->border, sizeof(float) * 4);
            return 0;
        }
    const uint8_t *p = texel_ptr(L, s, idx[0], idx[1], idx[2], elem_bytes(s->t));
    if (!p)
        return -1;
    for (int c = 0; c < 4; c++)
        out[c] = c < s->t->channels ? channel_float(s->t, p, c) : (c == 3 ? 1.0f : 0.0f);
    return 0;
}

/* Unnormalized coordinate along d, with wrap/mirror of normalized
 * coordinates applied first. */
static float texel_coord(const tex_sampler *s, int d, float x)
{
    if (!s->normalized)
        return x;
    if (s->mode[d] == KEMU_ADDRESS_WRAP)
        x = x - floorf(x);
    else if (s->mode[d] == KEMU_ADDRESS_MIRROR) {
        float p = x - 2.0f * floorf(x / 2.0f);
        x = p <= 1.0f ? p : 2.0f - p;
    }
    return x * (float)dim_size(s->lv, d);
}

/* floor(x) as a texel index; NaN and far-out coordinates (whose
 * conversion C leaves undefined) become indices far outside any texture,
 * which the address modes then clamp, wrap or turn into the border. */
static long long texel_index(float x)
{
    if (!(x > -1e15f))
        return x != x ? 0 : -1000000000000000LL;
    if (x > 1e15f)
        return 1000000000000000LL;
    return (long long)floorf(x);
}

static int filters_linearly(const vm_texture *t)
{
    return t->filter_mode == KEMU_FILTER_LINEAR &&
           (t->channel_kind == KEMU_CHANNEL_FLOAT || t->read_mode == KEMU_READ_NORMALIZED_FLOAT);
}

/* Point or linear sample of one level at coord (dims of them) in layer. */
static int sample(vm_launch *L, const tex_sampler *s, int dims, const float *coord, long long layer, float out[4])
{
    float u[3] = {0, 0, 0};
    for (int d = 0; d < dims; d++)
        u[d] = texel_coord(s, d, coord[d]);
    if (!filters_linearly(s->t))
        return fetch_float(L, s, dims, texel_index(u[0]), texel_index(u[1]), dims > 2 ? texel_index(u[2]) : layer,
                           out);
    long long i0[3] = {0, 0, 0};
    float a[3] = {0, 0, 0};
    for (int d = 0; d < dims; d++) {
        float ub = u[d] - 0.5f;
        float fl = floorf(ub);
        i0[d] = texel_index(ub);
        a[d] = roundf((ub - fl) * 256.0f) / 256.0f; /* 8 fractional bits */
    }
    memset(out, 0, sizeof(float) * 4);
    int corners = 1 << dims;
    for (int k = 0; k < corners; k++) {
        float wgt = 1.0f, v[4];
        long long ix = i0[0] + (k & 1), iy = i0[1] + ((k >> 1) & 1), iz = dims > 2 ? i0[2] + ((k >> 2) & 1) : layer;
        wgt *= (k & 1) ? a[0] : 1.0f - a[0];
        if (dims > 1) wgt *= ((k >> 1) & 1) ? a[1] : 1.0f - a[1];
        if (dims > 2) wgt *= ((k >> 2) & 1) ? a[2] : 1.0f - a[2];
        if (fetch_float(L, s, dims, ix, iy, iz, v))
            return -1;
        for (int c = 0; c < 4; c++)
            out[c] += wgt * v[c];
    }
    return 0;
}

/* Cubemap face selection (CUDA Programming Guide, cubemap fetch table):
 * the major axis picks the face, the other two coordinates divided by its
 * magnitude give (s,t) in [-1,1]; *u,*v are the normalized face
 * coordinates (s/m+1)/2, (t/m+1)/2. Ties go to x, then y. Also returns
 * the major magnitude and the signed axes for gradient projection. */
static int cube_face(float x, float y, float z, float *u, float *v, float *m, int axes[2], float sign[2])
{
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z);
    int face;
    float sc, tc;
    if (ax >= ay && ax >= az) {
        face = x >= 0 ? 0 : 1;
        *m = ax;
        sc = x >= 0 ? -z : z;
        tc = -y;
        axes[0] = 2, sign[0] = x >= 0 ? -1.0f : 1.0f;
        axes[1] = 1, sign[1] = -1.0f;
    } else if (ay >= az) {
        face = y >= 0 ? 2 : 3;
        *m = ay;
        sc = x;
        tc = y >= 0 ? z : -z;
        axes[0] = 0, sign[0] = 1.0f;
        axes[1] = 2, sign[1] = y >= 0 ? 1.0f : -1.0f;
    } else {
        face = z >= 0 ? 4 : 5;
        *m = az;
        sc = z >= 0 ? x : -x;
        tc = -y;
        axes[0] = 0, sign[0] = z >= 0 ? 1.0f : -1.0f;
        axes[1] = 1, sign[1] = -1.0f;
    }
    float mm = *m > 0 ? *m : 1.0f;
    *u = (sc / mm + 1.0f) * 0.5f;
    *v = (tc / mm + 1.0f) * 0.5f;
    return face;
}

/* The level of detail from the gradients (OpenGL's scale factor: the
 * larger of the lengths of dP/dx and dP/dy in texels of level 0, log2). */
static float lod_from_gradients(const vm_texture *t, int geom, const float *c, const float *dx, const float *dy)
{
    const vm_texture_level *lv = &t->level[0];
    float gx[3] = {0, 0, 0}, gy[3] = {0, 0, 0}, size[3] = {(float)dim_size(lv, 0), (float)dim_size(lv, 1),
                                                           (float)dim_size(lv, 2)};
    int n;
    if (geom == BC_GEOM_CUBE || geom == BC_GEOM_ACUBE) {
        /* derivative of (s/m+1)/2 along the face: (ds*m - s*dm) / (2 m^2) */
        float u, v, m, sg[2];
        int axes[2];
        int face = cube_face(c[0], c[1], c[2], &u, &v, &m, axes, sg);
        int major = face / 2;
        float ms = (face & 1) ? -1.0f : 1.0f;
        if (m <= 0)
            return 0.0f;
        for (int k = 0; k < 2; k++) {
            float s = sg[k] * c[axes[k]];
            gx[k] = (sg[k] * dx[axes[k]] * m - s * ms * dx[major]) / (2.0f * m * m);
            gy[k] = (sg[k] * dy[axes[k]] * m - s * ms * dy[major]) / (2.0f * m * m);
        }
        n = 2;
    } else {
        n = geom == BC_GEOM_1D || geom == BC_GEOM_A1D ? 1 : geom == BC_GEOM_3D ? 3 : 2;
        for (int k = 0; k < n; k++) {
            gx[k] = dx[k];
            gy[k] = dy[k];
        }
    }
    float lx = 0, ly = 0;
    for (int k = 0; k < n; k++) {
        float sc = t->normalized_coords || geom == BC_GEOM_CUBE || geom == BC_GEOM_ACUBE ? size[k] : 1.0f;
        lx += gx[k] * sc * gx[k] * sc;
        ly += gy[k] * sc * gy[k] * sc;
    }
    float rho = sqrtf(fmaxf(lx, ly));
    return rho > 0 ? log2f(rho) : -INFINITY;
}

/* Samples at a level of detail: bias, clamp to the descriptor's range and
 * the levels present, then the nearest level or a blend of two. */
static int sample_lod(vm_launch *L, const vm_texture *t, int dims, int cube, const float *coord, long long layer,
                      int explicit_lod, float lod, float out[4])
{
    if (t->num_levels <= 1 || !explicit_lod) {
        tex_sampler s = sampler_of(t, 0, cube);
        return sample(L, &s, dims, coord, layer, out);
    }
    lod += t->lod_bias;
    lod = fminf(fmaxf(lod, t->min_lod), t->max_lod); /* NaN-safe: fmaxf/fminf drop NaN */
    lod = fminf(fmaxf(lod, 0.0f), (float)(t->num_levels - 1));
    int l0;
    float frac = 0.0f;
    if (t->mipmap_filter == KEMU_FILTER_LINEAR) {
        l0 = (int)floorf(lod);
        frac = roundf((lod - (float)l0) * 256.0f) / 256.0f;
    } else {
        l0 = (int)floorf(lod + 0.5f);
    }
    if (l0 >= t->num_levels - 1) {
        l0 = t->num_levels - 1;
        frac = 0.0f;
    }
    tex_sampler s0 = sampler_of(t, l0, cube);
    if (sample(L, &s0, dims, coord, layer, out))
        return -1;
    if (frac > 0.0f) {
        float hi[4];
        tex_sampler s1 = sampler_of(t, l0 + 1, cube);
        if (sample(L, &s1, dims, coord, layer, hi))
            return -1;
        for (int c = 0; c < 4; c++)
            out[c] = (1.0f - frac) * out[c] + frac * hi[c];
    }
    return 0;
}

/* The layer (slice) a layered or cubemap lookup reads: the index clamped
 * to the layers (cubemaps) present; for cubemaps times 6 plus the face. */
static long long layer_of(const vm_texture *t, int geom, uint32_t index, int face)
{
    unsigned layers = t->level[0].depth ? t->level[0].depth : 1;
    if (geom == BC_GEOM_CUBE)
        return face;
    if (geom == BC_GEOM_ACUBE) {
        unsigned cubes = layers / 6 ? layers / 6 : 1;
        return (long long)(index < cubes ? index : cubes - 1) * 6 + face;
    }
    if (geom == BC_GEOM_A1D || geom == BC_GEOM_A2D)
        return index < layers ? index : layers - 1;
    return 0;
}

static uint32_t txq_value(const vm_texture *t, int query, int level_query, int32_t level)
{
    if (level_query && (level < 0 || level >= t->num_levels))
        return 0;
    const vm_texture_level *lv = &t->level[level_query ? level : 0];
    switch (query) {
    case 0: return lv->width;
    case 1: return lv->height;
    case 2: return t->layout ? 0 : lv->depth; /* layered: depth counts layers (array_size) */
    case 5: return (uint32_t)t->normalized_coords;
    case 6: return (uint32_t)t->filter_mode;
    case 7: case 8: case 9: return (uint32_t)t->address_mode[query - 7];
    case 10: return (uint32_t)t->num_levels;
    case 11: return 1;
    case 12:
        if (!(t->layout & KEMU_TEXTURE_LAYERED))
            return 0;
        return t->layout & KEMU_TEXTURE_CUBEMAP ? t->level[0].depth / 6 : t->level[0].depth;
    default: return 0;
    }
}

int vm_texture_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    vm_launch *L = b->launch;
    uint64_t *R = f->regs;
    const uint64_t *A = SLOT(R, op->a);
    const uint32_t *lst = f->fn->lists + op->list;
    int nvals = op->src_size, ncoord = BC_TEX_NCOORD(op->imm), ngrad = BC_TEX_NGRAD(op->imm);
    int has_lod = BC_TEX_HAS_LOD(op->imm), sub = BC_TEX_SUB(op->imm);
    int geom = op->mode;
    int arrayed = geom == BC_GEOM_A1D || geom == BC_GEOM_A2D || geom == BC_GEOM_ACUBE;
    int cube = geom == BC_GEOM_CUBE || geom == BC_GEOM_ACUBE;
    /* dimensions addressed with the sampler's modes (the layer is not) */
    int dims = geom == BC_GEOM_1D || geom == BC_GEOM_A1D ? 1 : geom == BC_GEOM_3D ? 3 : 2;
    const uint32_t *cl = lst + nvals + arrayed; /* the coordinates after the layer index */
#define LANE_F32(slot) vm_f32_from_bits((uint32_t)SLOT(R, (slot))[l])
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        const vm_texture *t = texture_of(b, w, f, pc, l, A[l]);
        if (!t)
            return -1;
        if (op->mode2 == BC_TEX_TXQ) {
            int32_t level = has_lod ? (int32_t)SLOT(R, op->b)[l] : 0;
            SLOT(R, op->d)[l] = txq_value(t, sub, has_lod, level);
            continue;
        }
        uint32_t index = arrayed ? (uint32_t)SLOT(R, lst[nvals])[l] : 0;
        if (op->mode2 == BC_TEX_TEX || op->mode2 == BC_TEX_TLD4) {
            float out[4];
            int int_coords = op->type2 == PTX_T_S32;
            int rc = 0;
            float c[3] = {0, 0, 0};
            long long layer = layer_of(t, geom, index, 0);
            if (!int_coords) {
                for (int d = 0; d < ncoord - arrayed && d < 3; d++)
                    c[d] = LANE_F32(cl[d]);
                if (cube) {
                    float u, v, mg, sg[2];
                    int axes[2];
                    int face = cube_face(c[0], c[1], c[2], &u, &v, &mg, axes, sg);
                    layer = layer_of(t, geom, index, face);
                    c[0] = u;
                    c[1] = v;
                    c[2] = 0;
                }
            }
            if (op->mode2 == BC_TEX_TLD4) {
                tex_sampler s = sampler_of(t, 0, cube);
                float ux = texel_coord(&s, 0, c[0]) - 0.5f, uy = texel_coord(&s, 1, c[1]) - 0.5f;
                long long x0 = texel_index(ux), y0 = texel_index(uy);
                long long xs[4] = {x0, x0 + 1, x0 + 1, x0}, ys[4] = {y0 + 1, y0 + 1, y0, y0};
                for (int k = 0; k < 4 && !rc; k++) {
                    float v[4];
                    rc = fetch_float(L, &s, 2, xs[k], ys[k], layer, v);
                    out[k] = v[sub & 3];
                }
            } else if (int_coords) {
                long long idx[3] = {0, 0, 0};
                int inside = 1;
                tex_sampler s = sampler_of(t, 0, 0);
                if (has_lod) { /* integer level of detail: fetch from that level */
                    int32_t lvl = (int32_t)SLOT(R, lst[nvals + ncoord])[l];
                    if (lvl > 0)
                        s = sampler_of(t, lvl < t->num_levels ? lvl : t->num_levels - 1, 0);
                }
                for (int d = 0; d < dims && d < ncoord - arrayed; d++) {
                    idx[d] = (int32_t)SLOT(R, cl[d])[l];
                    if (idx[d] < 0 || idx[d] >= (long long)dim_size(s.lv, d))
                        inside = 0;
                }
                if (dims < 3)
                    idx[2] = layer;
                if (!inside && t->level[0].height == 0 && !t->layout) {
                    memset(out, 0, sizeof out); /* linear-memory fetch out of range */
                } else if (op->type == PTX_T_F32) {
                    rc = fetch_float(L, &s, dims, idx[0], idx[1], idx[2], out);
                } else {
                    long long r[3] = {idx[0], idx[1], idx[2]};
                    int border = 0;
                    for (int d = 0; d < dims; d++)
                        border |= !resolve_index(&s, d, &r[d]);
                    const uint8_t *p = border ? NULL : texel_ptr(L, &s, r[0], r[1], r[2], elem_bytes(t));
                    if (!p && !border)
                        rc = -1;
                    for (int k = 0; k < 4 && !rc; k++) {
                        uint32_t v = p && k < t->channels ? channel_int(t, p, k) : 0;
                        memcpy(&out[k], &v, 4);
                    }
                }
            } else {
                int explicit_lod = has_lod || ngrad;
                float lod = 0.0f;
                if (has_lod) {
                    lod = LANE_F32(lst[nvals + ncoord]);
                } else if (ngrad) {
                    float cd[3] = {0, 0, 0}, dx[3] = {0, 0, 0}, dy[3] = {0, 0, 0};
                    for (int d = 0; d < ngrad && d < 3; d++) {
                        cd[d] = LANE_F32(cl[d]);
                        dx[d] = LANE_F32(lst[nvals + ncoord + d]);
                        dy[d] = LANE_F32(lst[nvals + ncoord + ngrad + d]);
                    }
                    lod = lod_from_gradients(t, geom, cd, dx, dy);
                }
                rc = sample_lod(L, t, dims, cube, c, layer, explicit_lod, lod, out);
                if (!rc && op->type != PTX_T_F32)
                    for (int k = 0; k < 4; k++) {
                        uint32_t v = (uint32_t)(int32_t)out[k];
                        memcpy(&out[k], &v, 4);
                    }
            }
            if (rc)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "texture object 0x%llx reads memory that is no longer allocated",
                                   (unsigned long long)A[l]);
            for (int k = 0; k < nvals && k < 4; k++) {
                uint32_t bits;
                memcpy(&bits, &out[k], 4);
                SLOT(R, lst[k])[l] = bits;
            }
            continue;
        }
        /* suld.b / sust.b: x in bytes; layered: the layer index first */
        const vm_texture_level *lv = &t->level[0];
        unsigned esz = vm_type_bytes(op->type) * (unsigned)nvals;
        int nc = ncoord - arrayed;
        long long xb = (int32_t)SLOT(R, cl[0])[l];
        long long yc = nc > 1 && dims > 1 ? (int32_t)SLOT(R, cl[1])[l] : 0;
        long long zc = dims > 2 ? (int32_t)SLOT(R, cl[2])[l] : arrayed ? (long long)index : 0;
        unsigned eb = elem_bytes(t);
        long long wbytes = (long long)dim_size(lv, 0) * eb;
        long long nz = arrayed || dims > 2 ? (long long)dim_size(lv, 2) : 1;
        int out_of_range = xb < 0 || xb + (long long)esz > wbytes ||
                           (dims > 1 && (yc < 0 || yc >= (long long)dim_size(lv, 1))) || zc < 0 || zc >= nz;
        if (out_of_range) {
            if (sub == 0)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "surface access at (%lld bytes, %lld, %lld) is outside the %ux%ux%u surface (.trap)",
                                   xb, yc, zc, lv->width, lv->height ? lv->height : 1, lv->depth ? lv->depth : 1);
            if (sub == 2) {
                if (op->mode2 == BC_TEX_SULD)
                    for (int k = 0; k < nvals; k++)
                        SLOT(R, lst[k])[l] = 0;
                continue;
            }
            if (xb < 0) xb = 0;
            if (xb + (long long)esz > wbytes) xb = wbytes - (long long)esz;
            if (yc < 0) yc = 0;
            if (dims > 1 && yc >= (long long)dim_size(lv, 1)) yc = dim_size(lv, 1) - 1;
            if (zc < 0) zc = 0;
            if (zc >= nz) zc = nz - 1;
        }
        uint64_t a = lv->address + (uint64_t)zc * lv->slice + (uint64_t)yc * lv->pitch + (uint64_t)xb;
        if (!mem_find(L->mem, a, esz))
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "surface object 0x%llx refers to memory that is no longer allocated",
                               (unsigned long long)A[l]);
        uint8_t *p = (uint8_t *)(uintptr_t)a;
        unsigned sz = vm_type_bytes(op->type);
        for (int k = 0; k < nvals; k++) {
            if (op->mode2 == BC_TEX_SULD) {
                uint64_t v = 0;
                memcpy(&v, p + k * sz, sz);
                SLOT(R, lst[k])[l] = v;
            } else {
                memcpy(p + k * sz, &SLOT(R, lst[k])[l], sz);
            }
        }
    }
#undef LANE_F32
    return 0;
}
