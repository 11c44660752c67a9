/* kemu's CUDA driver API, part 3: CUDA arrays (cuArrayCreate and copies to
 * and from them through cuMemcpy2D/3D, in driver.c) and texture and surface
 * objects, translated to the runtime's descriptors and made by the runtime's
 * own functions (array.c, texture.c), so the driver's and the runtime's
 * objects are the same. */
#include "config.h"
#include "cudart/driver.h"

#include <string.h>

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width, size_t height,
                            unsigned int flags);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t array);
cudaError_t cudaCreateTextureObject(cudaTextureObject_t *texture, const struct cudaResourceDesc *resource,
                                    const struct cudaTextureDesc *desc, const struct cudaResourceViewDesc *view);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texture);
cudaError_t cudaCreateSurfaceObject(unsigned long long *surface, const struct cudaResourceDesc *resource);
cudaError_t cudaDestroySurfaceObject(unsigned long long surface);

/* CUarray_format values (cuda.h of CUDA 13.0) */
enum {
    FMT_U8 = 0x01, FMT_U16 = 0x02, FMT_U32 = 0x03, FMT_S8 = 0x08, FMT_S16 = 0x09, FMT_S32 = 0x0a,
    FMT_HALF = 0x10, FMT_FLOAT = 0x20
};
enum { KIND_SIGNED = 0, KIND_UNSIGNED = 1, KIND_FLOAT = 2 };
enum { RES_ARRAY = 0, RES_MIPMAP = 1, RES_LINEAR = 2, RES_PITCH2D = 3 };

/* CUDA_ARRAY_DESCRIPTOR, CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC */
typedef struct {
    size_t Width, Height;
    int Format;
    unsigned NumChannels;
} drv_array_desc;

typedef struct {
    int resType;
    union {
        struct {
            cudaArray_t hArray;
        } array;
        struct {
            CUdeviceptr devPtr;
            int format;
            unsigned numChannels;
            size_t sizeInBytes;
        } linear;
        struct {
            CUdeviceptr devPtr;
            int format;
            unsigned numChannels;
            size_t width, height, pitchInBytes;
        } pitch2D;
        struct {
            int reserved[32];
        } reserved;
    } res;
    unsigned flags;
} drv_resource_desc;

typedef struct {
    int addressMode[3];
    int filterMode;
    unsigned flags;
    unsigned maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    float borderColor[4];
    int reserved[12];
} drv_texture_desc;

_Static_assert(sizeof(drv_resource_desc) == 144, "CUDA_RESOURCE_DESC");
_Static_assert(sizeof(drv_texture_desc) == 104, "CUDA_TEXTURE_DESC");

enum { TRSF_READ_AS_INTEGER = 0x01, TRSF_NORMALIZED_COORDINATES = 0x02, TRSF_SRGB = 0x10 };

/* The runtime's channel description of a driver format; -1 if unknown. */
static int channel_desc(int format, unsigned channels, struct cudaChannelFormatDesc *d)
{
    int bits, kind;
    switch (format) {
    case FMT_U8: bits = 8, kind = KIND_UNSIGNED; break;
    case FMT_U16: bits = 16, kind = KIND_UNSIGNED; break;
    case FMT_U32: bits = 32, kind = KIND_UNSIGNED; break;
    case FMT_S8: bits = 8, kind = KIND_SIGNED; break;
    case FMT_S16: bits = 16, kind = KIND_SIGNED; break;
    case FMT_S32: bits = 32, kind = KIND_SIGNED; break;
    case FMT_HALF: bits = 16, kind = KIND_FLOAT; break;
    case FMT_FLOAT: bits = 32, kind = KIND_FLOAT; break;
    default: return -1;
    }
    if (channels != 1 && channels != 2 && channels != 4)
        return -1;
    memset(d, 0, sizeof *d);
    d->x = bits;
    d->y = channels >= 2 ? bits : 0;
    d->z = channels == 4 ? bits : 0;
    d->w = channels == 4 ? bits : 0;
    d->f = kind;
    return 0;
}

static int format_of(const struct cudaChannelFormatDesc *d, unsigned *channels)
{
    *channels = d->w ? 4 : d->y ? 2 : 1;
    if (d->f == KIND_FLOAT)
        return d->x == 16 ? FMT_HALF : FMT_FLOAT;
    int base = d->f == KIND_SIGNED ? FMT_S8 : FMT_U8;
    return base + (d->x == 32 ? 2 : d->x == 16 ? 1 : 0);
}

DRIVER_API CUresult cuArrayCreate_v2(cudaArray_t *array, const drv_array_desc *desc)
{
    struct cudaChannelFormatDesc d;
    if (!array || !desc || !desc->Width || channel_desc(desc->Format, desc->NumChannels, &d))
        return CUDA_ERROR_INVALID_VALUE;
    RT_CALL(cudaMallocArray(array, &d, desc->Width, desc->Height, 0));
}

DRIVER_API CUresult cuArrayDestroy(cudaArray_t array)
{
    RT_CALL(cudaFreeArray(array));
}

DRIVER_API CUresult cuArrayGetDescriptor_v2(drv_array_desc *out, cudaArray_t array)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaChannelFormatDesc d;
    struct cudaExtent e;
    cudaError_t saved = drv_rt_save();
    if ((r = drv_rt_done(saved, cudaArrayGetInfo(&d, &e, NULL, array))))
        return r;
    out->Width = e.width;
    out->Height = e.height;
    out->Format = format_of(&d, &out->NumChannels);
    return CUDA_SUCCESS;
}

/* The runtime's resource description of a driver one. */
static CUresult resource(const drv_resource_desc *in, struct cudaResourceDesc *out)
{
    if (!in)
        return CUDA_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    out->resType = in->resType;
    out->flags = in->flags;
    switch (in->resType) {
    case RES_ARRAY:
        out->res.array.array = in->res.array.hArray;
        return CUDA_SUCCESS;
    case RES_LINEAR:
        if (channel_desc(in->res.linear.format, in->res.linear.numChannels, &out->res.linear.desc))
            return CUDA_ERROR_INVALID_VALUE;
        out->res.linear.devPtr = (void *)(uintptr_t)in->res.linear.devPtr;
        out->res.linear.sizeInBytes = in->res.linear.sizeInBytes;
        return CUDA_SUCCESS;
    case RES_PITCH2D:
        if (channel_desc(in->res.pitch2D.format, in->res.pitch2D.numChannels, &out->res.pitch2D.desc))
            return CUDA_ERROR_INVALID_VALUE;
        out->res.pitch2D.devPtr = (void *)(uintptr_t)in->res.pitch2D.devPtr;
        out->res.pitch2D.width = in->res.pitch2D.width;
        out->res.pitch2D.height = in->res.pitch2D.height;
        out->res.pitch2D.pitchInBytes = in->res.pitch2D.pitchInBytes;
        return CUDA_SUCCESS;
    default:
        cudart_warn_unsupported("cuTexObjectCreate/cuSurfObjectCreate of a mipmapped array");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* Whether the resource's elements are integers of 8 or 16 bits, which the
 * driver reads as normalized floats unless CU_TRSF_READ_AS_INTEGER. */
static int small_integers(const drv_resource_desc *r)
{
    int format = r->resType == RES_LINEAR ? r->res.linear.format
               : r->resType == RES_PITCH2D ? r->res.pitch2D.format : 0;
    if (r->resType == RES_ARRAY) {
        struct cudaChannelFormatDesc d;
        struct cudaExtent e;
        unsigned channels;
        cudaError_t saved = drv_rt_save();
        if (drv_rt_done(saved, cudaArrayGetInfo(&d, &e, NULL, r->res.array.hArray)))
            return 0;
        format = format_of(&d, &channels);
    }
    return format == FMT_U8 || format == FMT_U16 || format == FMT_S8 || format == FMT_S16;
}

DRIVER_API CUresult cuTexObjectCreate(cudaTextureObject_t *texture, const drv_resource_desc *res,
                                      const drv_texture_desc *tex, const void *view)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!texture || !tex)
        return CUDA_ERROR_INVALID_VALUE;
    if (view) {
        cudart_warn_unsupported("cuTexObjectCreate with a resource view");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    struct cudaResourceDesc rd;
    if ((r = resource(res, &rd)))
        return r;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    memcpy(td.addressMode, tex->addressMode, sizeof td.addressMode);
    td.filterMode = tex->filterMode;
    td.readMode = !(tex->flags & TRSF_READ_AS_INTEGER) && small_integers(res) ? 1 : 0;
    td.sRGB = (tex->flags & TRSF_SRGB) != 0;
    memcpy(td.borderColor, tex->borderColor, sizeof td.borderColor);
    td.normalizedCoords = (tex->flags & TRSF_NORMALIZED_COORDINATES) != 0;
    td.maxAnisotropy = tex->maxAnisotropy;
    td.mipmapFilterMode = tex->mipmapFilterMode;
    td.mipmapLevelBias = tex->mipmapLevelBias;
    td.minMipmapLevelClamp = tex->minMipmapLevelClamp;
    td.maxMipmapLevelClamp = tex->maxMipmapLevelClamp;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaCreateTextureObject(texture, &rd, &td, NULL));
}

DRIVER_API CUresult cuTexObjectDestroy(cudaTextureObject_t texture)
{
    RT_CALL(cudaDestroyTextureObject(texture));
}

DRIVER_API CUresult cuSurfObjectCreate(unsigned long long *surface, const drv_resource_desc *res)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    struct cudaResourceDesc rd;
    if ((r = resource(res, &rd)))
        return r;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaCreateSurfaceObject(surface, &rd));
}

DRIVER_API CUresult cuSurfObjectDestroy(unsigned long long surface)
{
    RT_CALL(cudaDestroySurfaceObject(surface));
}
