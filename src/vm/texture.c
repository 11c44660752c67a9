/* Textures and surfaces on bindless objects: tex (point and linear
 * filtering, normalized or texel coordinates, wrap/clamp/mirror/border
 * addressing, element-type or normalized-float reads), tld4 gathers, txq
 * queries, and byte-addressed suld/sust with trap/clamp/zero handling of
 * out-of-range coordinates. Linear filtering uses 8 fractional bits of
 * the weight, as the CUDA Programming Guide describes for the texture
 * unit. Channels the object lacks read as 0 (alpha 1.0 for float reads). */
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

/* Host pointer of texel (x,y,z), which must be in range, or NULL when the
 * memory is no longer allocated. */
static const uint8_t *texel_ptr(vm_launch *L, const vm_texture *t, int x, int y, int z, unsigned bytes)
{
    uint64_t a = t->address + (uint64_t)z * t->slice + (uint64_t)y * t->pitch + (uint64_t)x * elem_bytes(t);
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

static unsigned dim_size(const vm_texture *t, int d)
{
    unsigned s = d == 0 ? t->width : d == 1 ? t->height : t->depth;
    return s ? s : 1;
}

/* Resolves a texel index along dimension d with the address mode; returns
 * 0 when the index falls on the border. */
static int resolve_index(const vm_texture *t, int d, long long *i)
{
    long long n = dim_size(t, d);
    switch (t->address_mode[d]) {
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

/* Fetches texel (ix,iy,iz) as 4 floats with address modes applied. */
static int fetch_float(vm_launch *L, const vm_texture *t, int dims, long long ix, long long iy, long long iz,
                       float out[4])
{
    long long idx[3] = {ix, iy, iz};
    for (int d = 0; d < dims; d++)
        if (!resolve_index(t, d, &idx[d])) {
            memcpy(out, t->border, sizeof(float) * 4);
            return 0;
        }
    const uint8_t *p = texel_ptr(L, t, (int)idx[0], dims > 1 ? (int)idx[1] : 0, dims > 2 ? (int)idx[2] : 0,
                                 elem_bytes(t));
    if (!p)
        return -1;
    for (int c = 0; c < 4; c++)
        out[c] = c < t->channels ? channel_float(t, p, c) : (c == 3 ? 1.0f : 0.0f);
    return 0;
}

/* Unnormalized coordinate along d, with wrap/mirror of normalized
 * coordinates applied first. */
static float texel_coord(const vm_texture *t, int d, float x)
{
    if (!t->normalized_coords)
        return x;
    if (t->address_mode[d] == KEMU_ADDRESS_WRAP)
        x = x - floorf(x);
    else if (t->address_mode[d] == KEMU_ADDRESS_MIRROR) {
        float p = x - 2.0f * floorf(x / 2.0f);
        x = p <= 1.0f ? p : 2.0f - p;
    }
    return x * (float)dim_size(t, d);
}

static int sample(vm_launch *L, const vm_texture *t, int dims, const float *coord, float out[4])
{
    float u[3] = {0, 0, 0};
    for (int d = 0; d < dims; d++)
        u[d] = texel_coord(t, d, coord[d]);
    if (t->filter_mode == KEMU_FILTER_POINT ||
        (t->channel_kind != KEMU_CHANNEL_FLOAT && t->read_mode != KEMU_READ_NORMALIZED_FLOAT)) {
        return fetch_float(L, t, dims, (long long)floorf(u[0]), (long long)floorf(u[1]), (long long)floorf(u[2]), out);
    }
    long long i0[3] = {0, 0, 0};
    float a[3] = {0, 0, 0};
    for (int d = 0; d < dims; d++) {
        float ub = u[d] - 0.5f;
        float fl = floorf(ub);
        i0[d] = (long long)fl;
        a[d] = roundf((ub - fl) * 256.0f) / 256.0f; /* 8 fractional bits */
    }
    memset(out, 0, sizeof(float) * 4);
    int corners = 1 << dims;
    for (int k = 0; k < corners; k++) {
        float wgt = 1.0f, v[4];
        long long ix = i0[0] + (k & 1), iy = i0[1] + ((k >> 1) & 1), iz = i0[2] + ((k >> 2) & 1);
        wgt *= (k & 1) ? a[0] : 1.0f - a[0];
        if (dims > 1) wgt *= ((k >> 1) & 1) ? a[1] : 1.0f - a[1];
        if (dims > 2) wgt *= ((k >> 2) & 1) ? a[2] : 1.0f - a[2];
        if (fetch_float(L, t, dims, ix, iy, iz, v))
            return -1;
        for (int c = 0; c < 4; c++)
            out[c] += wgt * v[c];
    }
    return 0;
}

int vm_texture_op(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    vm_launch *L = b->launch;
    uint64_t *R = f->regs;
    const uint64_t *A = SLOT(R, op->a);
    const uint32_t *lst = f->fn->lists + op->list;
    int nvals = op->src_size, ncoord = op->n - op->src_size;
    int dims = op->mode;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        const vm_texture *t = texture_of(b, w, f, pc, l, A[l]);
        if (!t)
            return -1;
        if (op->mode2 == BC_TEX_TXQ) {
            uint64_t v;
            switch (op->imm) {
            case 0: v = t->width; break;
            case 1: v = t->height; break;
            case 2: v = t->depth; break;
            case 5: v = (uint64_t)t->normalized_coords; break;
            case 6: v = (uint64_t)t->filter_mode; break;
            case 7: case 8: case 9: v = (uint64_t)t->address_mode[op->imm - 7]; break;
            case 10: case 11: v = 1; break;
            default: v = 0; break;
            }
            SLOT(R, op->d)[l] = (uint32_t)v;
            continue;
        }
        if (op->mode2 == BC_TEX_TEX || op->mode2 == BC_TEX_TLD4) {
            float out[4];
            int int_coords = op->type2 == PTX_T_S32;
            int rc = 0;
            if (op->mode2 == BC_TEX_TLD4) {
                float c[2] = {vm_f32_from_bits((uint32_t)SLOT(R, lst[nvals])[l]),
                              vm_f32_from_bits((uint32_t)SLOT(R, lst[nvals + 1])[l])};
                float ux = texel_coord(t, 0, c[0]) - 0.5f, uy = texel_coord(t, 1, c[1]) - 0.5f;
                long long x0 = (long long)floorf(ux), y0 = (long long)floorf(uy);
                long long xs[4] = {x0, x0 + 1, x0 + 1, x0}, ys[4] = {y0 + 1, y0 + 1, y0, y0};
                for (int k = 0; k < 4 && !rc; k++) {
                    float v[4];
                    rc = fetch_float(L, t, 2, xs[k], ys[k], 0, v);
                    out[k] = v[op->imm];
                }
            } else if (int_coords) {
                long long idx[3] = {0, 0, 0};
                int inside = 1;
                for (int d = 0; d < ncoord && d < 3; d++) {
                    idx[d] = (int32_t)SLOT(R, lst[nvals + d])[l];
                    if (idx[d] < 0 || idx[d] >= (long long)dim_size(t, d))
                        inside = 0;
                }
                if (!inside && t->height == 0) {
                    memset(out, 0, sizeof out); /* linear-memory fetch out of range */
                } else if (op->type == PTX_T_F32) {
                    rc = fetch_float(L, t, dims, idx[0], idx[1], idx[2], out);
                } else {
                    long long r[3] = {idx[0], idx[1], idx[2]};
                    for (int d = 0; d < dims; d++)
                        resolve_index(t, d, &r[d]);
                    const uint8_t *p = texel_ptr(L, t, (int)r[0], (int)r[1], (int)r[2], elem_bytes(t));
                    if (!p)
                        rc = -1;
                    for (int c = 0; c < 4 && p; c++) {
                        uint32_t v = c < t->channels ? channel_int(t, p, c) : 0;
                        memcpy(&out[c], &v, 4);
                    }
                }
            } else {
                float c[3] = {0, 0, 0};
                for (int d = 0; d < ncoord && d < 3; d++)
                    c[d] = vm_f32_from_bits((uint32_t)SLOT(R, lst[nvals + d])[l]);
                rc = sample(L, t, dims, c, out);
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
        /* suld.b / sust.b: x in bytes */
        unsigned esz = vm_type_bytes(op->type) * (unsigned)nvals;
        long long xb = (int32_t)SLOT(R, lst[nvals])[l];
        long long yc = ncoord > 1 ? (int32_t)SLOT(R, lst[nvals + 1])[l] : 0;
        long long zc = ncoord > 2 ? (int32_t)SLOT(R, lst[nvals + 2])[l] : 0;
        unsigned eb = elem_bytes(t);
        long long wbytes = (long long)dim_size(t, 0) * eb;
        int out_of_range = xb < 0 || xb + (long long)esz > wbytes || (dims > 1 && (yc < 0 || yc >= (long long)dim_size(t, 1))) ||
                           (dims > 2 && (zc < 0 || zc >= (long long)dim_size(t, 2)));
        if (out_of_range) {
            if (op->imm == 0)
                return vm_fault_at(b, w, f, pc, (uint32_t)l, 700,
                                   "surface access at (%lld bytes, %lld, %lld) is outside the %ux%ux%u surface (.trap)",
                                   xb, yc, zc, t->width, t->height ? t->height : 1, t->depth ? t->depth : 1);
            if (op->imm == 2) {
                if (op->mode2 == BC_TEX_SULD)
                    for (int k = 0; k < nvals; k++)
                        SLOT(R, lst[k])[l] = 0;
                continue;
            }
            if (xb < 0) xb = 0;
            if (xb + (long long)esz > wbytes) xb = wbytes - (long long)esz;
            if (yc < 0) yc = 0;
            if (dims > 1 && yc >= (long long)dim_size(t, 1)) yc = dim_size(t, 1) - 1;
            if (zc < 0) zc = 0;
            if (dims > 2 && zc >= (long long)dim_size(t, 2)) zc = dim_size(t, 2) - 1;
        }
        uint64_t a = t->address + (uint64_t)zc * t->slice + (uint64_t)yc * t->pitch + (uint64_t)xb;
        if (!mem_find(L->mem, a, esz))
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 700, "surface object 0x%llx refers to memory that is no longer allocated",
                               (unsigned long long)A[l]);
        uint8_t *p = (uint8_t *)(uintptr_t)a;
        unsigned s = vm_type_bytes(op->type);
        for (int k = 0; k < nvals; k++) {
            if (op->mode2 == BC_TEX_SULD) {
                uint64_t v = 0;
                memcpy(&v, p + k * s, s);
                SLOT(R, lst[k])[l] = v;
            } else {
                memcpy(p + k * s, &SLOT(R, lst[k])[l], s);
            }
        }
    }
    return 0;
}
