/* Texture and surface objects of kemu's libcudart replacement: the CUDA
 * resource and texture descriptors (linear memory, pitched 2D memory, CUDA
 * arrays) are translated into kemu texture objects, whose 64-bit handles
 * kernels receive as cudaTextureObject_t / cudaSurfaceObject_t: layered
 * and cubemap arrays and mipmapped arrays too (each level its own array).
 * The descriptors are kept so that the cudaGet*ObjectResourceDesc queries
 * return what the program passed. */
#include "config.h"
#include "cudart/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct texture_record {
    uint64_t handle;
    int surface;
    struct cudaResourceDesc resource;
    struct cudaTextureDesc texture;
    struct cudaResourceViewDesc view;
    int has_view;
} texture_record;

static cudart_ptrmap textures; /* handle -> texture_record; guarded by the runtime lock */

static void *handle_key(uint64_t handle)
{
    return (void *)(uintptr_t)handle;
}

/* Fills the memory part of a kemu descriptor from a CUDA resource, and
 * *flags with the array's cudaArray* flags (0 for memory). Locked. */
static cudaError_t describe_resource(const struct cudaResourceDesc *r, kemu_texture_desc *d, unsigned *flags)
{
    struct cudaChannelFormatDesc cf;
    *flags = 0;
    switch (r->resType) {
    case cudaResourceTypeLinear:
        cf = r->res.linear.desc;
        d->address = (uint64_t)(uintptr_t)r->res.linear.devPtr;
        break;
    case cudaResourceTypePitch2D:
        cf = r->res.pitch2D.desc;
        d->address = (uint64_t)(uintptr_t)r->res.pitch2D.devPtr;
        d->width = (unsigned)r->res.pitch2D.width;
        d->height = (unsigned)r->res.pitch2D.height;
        d->pitch = r->res.pitch2D.pitchInBytes;
        break;
    case cudaResourceTypeArray: {
        size_t w, h, z, pitch;
        if (cudart_array_describe(r->res.array.array, &d->address, &w, &h, &z, &pitch, &cf, flags))
            return cudaErrorInvalidResourceHandle;
        d->width = (unsigned)w;
        d->height = (unsigned)h;
        d->depth = (unsigned)z;
        d->pitch = pitch;
        break;
    }
    case cudaResourceTypeMipmappedArray: {
        unsigned levels = 0;
        for (unsigned i = 0; i == 0 || i < levels; i++) {
            cudaArray_t level;
            size_t w, h, z, pitch;
            uint64_t address;
            if (cudart_mipmap_level(r->res.mipmap.mipmap, i, &level, &levels) ||
                cudart_array_describe(level, &address, &w, &h, &z, &pitch, &cf, flags) ||
                levels > KEMU_TEXTURE_MAX_LEVELS)
                return cudaErrorInvalidResourceHandle;
            if (i == 0) {
                d->address = address;
                d->width = (unsigned)w;
                d->height = (unsigned)h;
                d->depth = (unsigned)z;
                d->pitch = pitch;
            } else {
                d->levels[i - 1] = (kemu_texture_level){address, (unsigned)w, (unsigned)h, (unsigned)z, pitch};
            }
        }
        d->num_levels = (int)levels;
        break;
    }
    default:
        return cudaErrorInvalidValue;
    }
    if (*flags & 0x01) /* cudaArrayLayered */
        d->layout |= KEMU_TEXTURE_LAYERED;
    if (*flags & 0x04) /* cudaArrayCubemap */
        d->layout |= KEMU_TEXTURE_CUBEMAP;
    int channels = (cf.x > 0) + (cf.y > 0) + (cf.z > 0) + (cf.w > 0);
    if (channels == 3 || channels == 0 || (cf.y && cf.y != cf.x) || (cf.z && cf.z != cf.x) || (cf.w && cf.w != cf.x) ||
        (cf.x != 8 && cf.x != 16 && cf.x != 32) || cf.f < 0 || cf.f > 2)
        return cudaErrorInvalidChannelDescriptor;
    d->channels = channels;
    d->channel_bits = cf.x;
    d->channel_kind = cf.f;
    if (r->resType == cudaResourceTypeLinear) {
        size_t element = (size_t)channels * (size_t)cf.x / 8;
        d->width = (unsigned)(r->res.linear.sizeInBytes / element);
    }
    return cudaSuccess;
}

static cudaError_t create_object(unsigned long long *out, const struct cudaResourceDesc *resource,
                                 const struct cudaTextureDesc *texture, const struct cudaResourceViewDesc *view,
                                 int surface)
{
    if (!out || !resource || (!surface && !texture))
        return cudart_result(cudaErrorInvalidValue);
    texture_record *rec = calloc(1, sizeof *rec);
    if (!rec)
        return cudart_result(cudaErrorMemoryAllocation);
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_device(&dev);
    if (!e)
        e = cudart_check_sticky();
    kemu_texture_desc d;
    memset(&d, 0, sizeof d);
    unsigned flags = 0;
    if (!e)
        e = describe_resource(resource, &d, &flags);
    /* surfaces: arrays made with cudaArraySurfaceLoadStore only */
    if (!e && surface && (resource->resType != cudaResourceTypeArray || !(flags & 0x02)))
        e = cudaErrorInvalidValue;
    if (!e && texture) {
        for (int i = 0; i < 3; i++)
            d.address_mode[i] = texture->addressMode[i];
        d.filter_mode = texture->filterMode;
        d.read_mode = texture->readMode;
        d.normalized_coords = texture->normalizedCoords;
        memcpy(d.border_color, texture->borderColor, sizeof d.border_color);
        d.mipmap_filter_mode = texture->mipmapFilterMode;
        d.lod_bias = texture->mipmapLevelBias;
        d.min_lod = texture->minMipmapLevelClamp;
        d.max_lod = texture->maxMipmapLevelClamp;
        if (d.filter_mode < 0 || d.filter_mode > 1 || d.read_mode < 0 || d.read_mode > 1 ||
            (d.num_levels > 1 && (d.mipmap_filter_mode < 0 || d.mipmap_filter_mode > 1)))
            e = cudaErrorInvalidValue;
        for (int i = 0; i < 3; i++)
            if (d.address_mode[i] < 0 || d.address_mode[i] > 3)
                e = cudaErrorInvalidValue;
        /* no anisotropic filtering: a filter of more than one sample is refused */
        if (!e && texture->maxAnisotropy > 1) {
            cudart_warn_unsupported("anisotropic texture filtering (cudaTextureDesc.maxAnisotropy > 1)");
            e = cudaErrorNotSupported;
        }
        if (!e && texture->seamlessCubemap && (d.layout & KEMU_TEXTURE_CUBEMAP)) {
            cudart_warn_unsupported("seamless cubemap filtering (cudaTextureDesc.seamlessCubemap)");
            e = cudaErrorNotSupported;
        }
        if (!e && texture->sRGB) {
            cudart_warn_unsupported("sRGB texture reads (cudaTextureDesc.sRGB)");
            e = cudaErrorNotSupported;
        }
    }
    kemu_error err;
    if (!e && kemu_texture_create(dev, &d, &rec->handle, &err)) {
        cudart_trace("kemu_texture_create: %s", err.message);
        e = cudaErrorInvalidValue;
    }
    if (!e) {
        rec->surface = surface; /* CUDA 12's descriptors are shorter: copy what the program passed */
        memcpy(&rec->resource, resource, CUDART_RESOURCE_DESC_SIZE);
        if (texture)
            rec->texture = *texture;
        if (view) {
            memcpy(&rec->view, view, CUDART_RESOURCE_VIEW_DESC_SIZE);
            rec->has_view = 1;
        }
        if (cudart_ptrmap_put(&textures, handle_key(rec->handle), rec)) {
            kemu_texture_destroy(dev, rec->handle, NULL);
            e = cudaErrorMemoryAllocation;
        }
    }
    cudart_unlock();
    if (e) {
        free(rec);
        return cudart_result(e);
    }
    *out = rec->handle;
    return cudaSuccess;
}

static cudaError_t destroy_object(uint64_t handle, int surface)
{
    cudart_lock();
    texture_record *rec = cudart_ptrmap_get(&textures, handle_key(handle));
    cudaError_t e = rec && rec->surface == surface ? cudaSuccess : cudaErrorInvalidValue;
    if (!e) {
        cudart_ptrmap_remove(&textures, handle_key(handle));
        if (cudart_cur()->device)
            kemu_texture_destroy(cudart_cur()->device, handle, NULL);
        free(rec);
    }
    cudart_unlock();
    return handle == 0 ? cudaSuccess : cudart_result(e);
}

static texture_record *record_of(uint64_t handle, int surface)
{
    texture_record *rec = cudart_ptrmap_get(&textures, handle_key(handle));
    return rec && rec->surface == surface ? rec : NULL;
}

CUDART_API cudaError_t cudaCreateTextureObject(cudaTextureObject_t *texture, const struct cudaResourceDesc *resource,
                                               const struct cudaTextureDesc *desc,
                                               const struct cudaResourceViewDesc *view)
{
    return create_object(texture, resource, desc, view, 0);
}

CUDART_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture)
{
    return destroy_object(texture, 0);
}

CUDART_API cudaError_t cudaCreateSurfaceObject(unsigned long long *surface, const struct cudaResourceDesc *resource)
{
    return create_object(surface, resource, NULL, NULL, 1);
}

CUDART_API cudaError_t cudaDestroySurfaceObject(unsigned long long surface)
{
    return destroy_object(surface, 1);
}

CUDART_API cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *out, cudaTextureObject_t texture)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    texture_record *rec = record_of(texture, 0);
    if (rec)
        memcpy(out, &rec->resource, CUDART_RESOURCE_DESC_SIZE);
    cudart_unlock();
    return rec ? cudaSuccess : cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *out, cudaTextureObject_t texture)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    texture_record *rec = record_of(texture, 0);
    if (rec)
        *out = rec->texture;
    cudart_unlock();
    return rec ? cudaSuccess : cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGetTextureObjectResourceViewDesc(struct cudaResourceViewDesc *out,
                                                            cudaTextureObject_t texture)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    texture_record *rec = record_of(texture, 0);
    if (rec && rec->has_view)
        memcpy(out, &rec->view, CUDART_RESOURCE_VIEW_DESC_SIZE);
    cudart_unlock();
    return rec && rec->has_view ? cudaSuccess : cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *out, unsigned long long surface)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    texture_record *rec = record_of(surface, 1);
    if (rec)
        memcpy(out, &rec->resource, CUDART_RESOURCE_DESC_SIZE);
    cudart_unlock();
    return rec ? cudaSuccess : cudart_result(cudaErrorInvalidValue);
}
