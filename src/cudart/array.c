/* CUDA arrays in kemu's libcudart replacement: an array is linear device
 * memory with a channel format and an extent (rows packed, no padding), so
 * that copies into and out of it are pitched copies and texture objects
 * over it are textures over pitched memory. Layered and cubemap arrays
 * keep their layers (faces) as the depth dimension, as CUDA lays them out
 * for cudaMemcpy3D. A mipmapped array is a list of such arrays, one per
 * level. Plus cudaMemcpy3D, whose sides may be arrays or pitched pointers. */
#include "config.h"
#include "cudart/runtime.h"

#include <stdlib.h>
#include <string.h>

/* ---- CUDA arrays (linear memory underneath) ------------------------------------- */

#define ARRAY_MAGIC 0x6b656d75u /* "kemu" */

struct cudaArray {
    unsigned magic;
    void *data;
    size_t width, height, depth; /* elements; height/depth 0 for fewer dimensions */
    size_t element_size;
    size_t pitch;                /* bytes per row */
    struct cudaChannelFormatDesc desc;
    unsigned flags;
    int mipmap_level;            /* a level of a mipmapped array: freed with it, not by cudaFreeArray */
};

#define MIPMAP_MAGIC 0x6d69706du /* "mipm" */
#define MIPMAP_MAX_LEVELS 16

struct cudaMipmappedArray {
    unsigned magic;
    unsigned levels;
    struct cudaArray *level[MIPMAP_MAX_LEVELS];
};

static cudart_ptrmap mipmaps; /* live mipmapped arrays; guarded by the runtime lock */

/* Flags cudaMalloc3DArray accepts (driver_types.h values). */
enum {
    ARRAY_LAYERED = 0x01, ARRAY_SURFACE = 0x02, ARRAY_CUBEMAP = 0x04, ARRAY_GATHER = 0x08,
    ARRAY_SPARSE = 0x40, ARRAY_DEFERRED = 0x80
};

/* The array behind a handle, or NULL. Call locked. */
static struct cudaArray *array_of(cudaArray_const_t handle)
{
    struct cudaArray *a = (struct cudaArray *)handle;
    if (!a || !cudart_ptrmap_get(&cudart_global.arrays, a) || a->magic != ARRAY_MAGIC)
        return NULL;
    return a;
}

int cudart_array_describe(cudaArray_const_t handle, uint64_t *address, size_t *width, size_t *height,
                          size_t *depth, size_t *pitch, struct cudaChannelFormatDesc *desc, unsigned *flags)
{
    struct cudaArray *a = array_of(handle);
    if (!a)
        return -1;
    *address = (uint64_t)(uintptr_t)a->data;
    *width = a->width;
    *height = a->height;
    *depth = a->depth;
    *pitch = a->pitch;
    *desc = a->desc;
    *flags = a->flags;
    return 0;
}

/* The extent and flag rules of cudaMalloc3DArray (and cudaMallocArray,
 * which knows no layers or cubemaps): cudaSuccess, cudaErrorInvalidValue,
 * or cudaErrorNotSupported for sparse and deferred-mapping arrays. */
static cudaError_t array_check(size_t width, size_t height, size_t depth, unsigned flags, int three_d)
{
    unsigned known = ARRAY_SURFACE | ARRAY_GATHER | ARRAY_SPARSE | ARRAY_DEFERRED |
                     (three_d ? ARRAY_LAYERED | ARRAY_CUBEMAP : 0);
    if (!width || (flags & ~known))
        return cudaErrorInvalidValue;
    if (flags & (ARRAY_SPARSE | ARRAY_DEFERRED)) {
        cudart_warn_unsupported("sparse and deferred-mapping CUDA arrays (cudaArraySparse, cudaArrayDeferredMapping)");
        return cudaErrorNotSupported;
    }
    if (flags & ARRAY_CUBEMAP) {
        if (width != height || !depth || depth % 6 || (!(flags & ARRAY_LAYERED) && depth != 6))
            return cudaErrorInvalidValue;
    } else if (flags & ARRAY_LAYERED) {
        if (!depth)
            return cudaErrorInvalidValue;
    } else if (depth && !height) {
        return cudaErrorInvalidValue; /* a 3D array needs a height */
    }
    if ((flags & ARRAY_GATHER) && (!height || depth || (flags & (ARRAY_LAYERED | ARRAY_CUBEMAP))))
        return cudaErrorInvalidValue; /* gather: 2D arrays only */
    return cudaSuccess;
}

CUDART_API struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, int f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

static cudaError_t array_create(cudaArray_t *out, const struct cudaChannelFormatDesc *desc, size_t width,
                                size_t height, size_t depth, unsigned flags)
{
    if (!out || !desc || !width)
        return cudart_result(cudaErrorInvalidValue);
    int bits = desc->x + desc->y + desc->z + desc->w;
    if (bits <= 0 || bits % 8 || desc->x <= 0)
        return cudart_result(cudaErrorInvalidChannelDescriptor);
    struct cudaArray *a = calloc(1, sizeof *a);
    if (!a)
        return cudart_result(cudaErrorMemoryAllocation);
    a->magic = ARRAY_MAGIC;
    a->width = width;
    a->height = height;
    a->depth = depth;
    a->element_size = (size_t)bits / 8;
    a->pitch = a->width * a->element_size;
    a->desc = *desc;
    a->flags = flags;
    size_t bytes = a->pitch * (height ? height : 1) * (depth ? depth : 1);
    cudaError_t e = cudart_allocate(&a->data, bytes, CUDART_MEM_ARRAY);
    if (e) {
        free(a);
        return e;
    }
    cudart_lock();
    if (cudart_ptrmap_put(&cudart_global.arrays, a, a)) {
        cudart_unlock();
        cudart_release(a->data, CUDART_MEM_ARRAY, CUDART_MEM_ARRAY, 0);
        free(a);
        return cudart_result(cudaErrorMemoryAllocation);
    }
    cudart_unlock();
    *out = a;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                       size_t height, unsigned int flags)
{
    cudaError_t e = array_check(width, height, 0, flags, 0);
    if (e)
        return cudart_result(e);
    return array_create(array, desc, width, height, 0, flags);
}

CUDART_API cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                         struct cudaExtent extent, unsigned int flags)
{
    cudaError_t e = array_check(extent.width, extent.height, extent.depth, flags, 1);
    if (e)
        return cudart_result(e);
    return array_create(array, desc, extent.width, extent.height, extent.depth, flags);
}

static void mipmap_release(struct cudaMipmappedArray *m)
{
    for (unsigned i = 0; i < m->levels; i++) {
        struct cudaArray *a = m->level[i];
        cudart_lock();
        cudart_ptrmap_remove(&cudart_global.arrays, a);
        cudart_unlock();
        cudart_release(a->data, CUDART_MEM_ARRAY, CUDART_MEM_ARRAY, 1);
        a->magic = 0;
        free(a);
    }
    m->magic = 0;
    free(m);
}

/* numLevels is clamped to [1, 1 + floor(log2(largest dimension))]; each
 * level halves width, height and (3D only) depth, rounding down, to no
 * less than 1; layered and cubemap levels keep the layer count. */
CUDART_API cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *out, const struct cudaChannelFormatDesc *desc,
                                                struct cudaExtent extent, unsigned int levels, unsigned int flags)
{
    if (!out || !desc)
        return cudart_result(cudaErrorInvalidValue);
    cudaError_t e = array_check(extent.width, extent.height, extent.depth, flags, 1);
    if (e)
        return cudart_result(e);
    int layered = (flags & (ARRAY_LAYERED | ARRAY_CUBEMAP)) != 0;
    size_t largest = extent.width;
    if (extent.height > largest)
        largest = extent.height;
    if (!layered && extent.depth > largest)
        largest = extent.depth;
    unsigned most = 1;
    while ((largest >> most) > 0 && most < MIPMAP_MAX_LEVELS)
        most++;
    if (levels < 1)
        levels = 1;
    if (levels > most)
        levels = most;
    struct cudaMipmappedArray *m = calloc(1, sizeof *m);
    if (!m)
        return cudart_result(cudaErrorMemoryAllocation);
    m->magic = MIPMAP_MAGIC;
    for (unsigned i = 0; i < levels; i++) {
        size_t w = extent.width >> i, h = extent.height >> i, d = layered ? extent.depth : extent.depth >> i;
        w = w ? w : 1;
        h = extent.height ? (h ? h : 1) : 0;
        d = extent.depth ? (d ? d : 1) : 0;
        cudaArray_t a;
        e = array_create(&a, desc, w, h, d, flags);
        if (e) {
            mipmap_release(m);
            return e;
        }
        a->mipmap_level = 1;
        m->level[m->levels++] = a;
    }
    cudart_lock();
    int bad = cudart_ptrmap_put(&mipmaps, m, m);
    cudart_unlock();
    if (bad) {
        mipmap_release(m);
        return cudart_result(cudaErrorMemoryAllocation);
    }
    *out = m;
    return cudaSuccess;
}

static struct cudaMipmappedArray *mipmap_of(cudaMipmappedArray_const_t handle)
{
    struct cudaMipmappedArray *m = (struct cudaMipmappedArray *)handle;
    if (!m || !cudart_ptrmap_get(&mipmaps, m) || m->magic != MIPMAP_MAGIC)
        return NULL;
    return m;
}

int cudart_mipmap_level(cudaMipmappedArray_const_t handle, unsigned level, cudaArray_t *array, unsigned *levels)
{
    struct cudaMipmappedArray *m = mipmap_of(handle);
    if (!m || level >= m->levels)
        return -1;
    *array = m->level[level];
    *levels = m->levels;
    return 0;
}

CUDART_API cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *out, cudaMipmappedArray_const_t mipmap, unsigned int level)
{
    if (!out)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    unsigned levels = 0;
    cudaArray_t a = NULL;
    int known = mipmap_of(mipmap) != NULL;
    int bad = cudart_mipmap_level(mipmap, level, &a, &levels);
    cudart_unlock();
    if (!known)
        return cudart_result(cudaErrorInvalidResourceHandle);
    if (bad)
        return cudart_result(cudaErrorInvalidValue);
    *out = a;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmap)
{
    if (!mipmap)
        return cudaSuccess;
    cudart_lock();
    struct cudaMipmappedArray *m = mipmap_of(mipmap);
    if (m)
        cudart_ptrmap_remove(&mipmaps, m);
    cudart_unlock();
    if (!m)
        return cudart_result(cudaErrorInvalidValue);
    mipmap_release(m);
    return cudaSuccess;
}

CUDART_API cudaError_t cudaFreeArray(cudaArray_t array)
{
    if (!array)
        return cudaSuccess;
    cudart_lock();
    struct cudaArray *a = array_of(array);
    if (a && a->mipmap_level)
        a = NULL; /* freed with its mipmapped array */
    if (a)
        cudart_ptrmap_remove(&cudart_global.arrays, a);
    cudart_unlock();
    if (!a)
        return cudart_result(cudaErrorInvalidValue);
    cudaError_t e = cudart_release(a->data, CUDART_MEM_ARRAY, CUDART_MEM_ARRAY, 1);
    a->magic = 0;
    free(a);
    return e;
}

CUDART_API cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                        unsigned int *flags, cudaArray_t array)
{
    cudart_lock();
    struct cudaArray *a = array_of(array);
    if (a) {
        if (desc)
            *desc = a->desc;
        if (extent)
            *extent = (struct cudaExtent){a->width, a->height, a->depth};
        if (flags)
            *flags = a->flags;
    }
    cudart_unlock();
    return a ? cudaSuccess : cudart_result(cudaErrorInvalidResourceHandle);
}

/* Memory requirements exist for deferred-mapping arrays only; kemu makes
 * none (cudaArrayDeferredMapping is refused), so every array gets the
 * documented cudaErrorInvalidValue. */
CUDART_API cudaError_t cudaArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *out, cudaArray_t array,
                                                      int device)
{
    (void)out;
    (void)array;
    (void)device;
    return cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaMipmappedArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *out,
                                                               cudaMipmappedArray_t mipmap, int device)
{
    (void)out;
    (void)mipmap;
    (void)device;
    return cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    if (!desc)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    struct cudaArray *a = array_of(array);
    if (a)
        *desc = a->desc;
    cudart_unlock();
    return a ? cudaSuccess : cudart_result(cudaErrorInvalidResourceHandle);
}

/* Copies a width-byte x height region between a host/device pitched
 * buffer and an array at (x_bytes, y). */
static cudaError_t array_copy_2d(cudaArray_const_t array, size_t x_bytes, size_t y, void *buffer, size_t pitch,
                                 size_t width, size_t height, int kind, int to_array, int sync, cudaStream_t stream)
{
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_begin_copy(&dev, sync, stream);
    struct cudaArray *a = e ? NULL : array_of(array);
    if (!e && !a)
        e = cudaErrorInvalidResourceHandle;
    size_t rows = a ? (a->height ? a->height : 1) * (a->depth ? a->depth : 1) : 0;
    if (!e && (x_bytes + width > a->pitch || y + height > rows))
        e = cudaErrorInvalidValue;
    if (!e) {
        char *base = (char *)a->data + y * a->pitch + x_bytes;
        /* arrays are device memory: the buffer side decides the direction */
        int k = kind;
        if (to_array && (k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice || k == cudaMemcpyDefault))
            e = cudart_copy_2d(dev, base, a->pitch, buffer, pitch, width, height, k);
        else if (!to_array && (k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice || k == cudaMemcpyDefault))
            e = cudart_copy_2d(dev, buffer, pitch, base, a->pitch, width, height, k);
        else
            e = cudaErrorInvalidMemcpyDirection;
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void *src,
                                           size_t spitch, size_t width, size_t height, int kind)
{
    return array_copy_2d(dst, w_offset, h_offset, (void *)src, spitch, width, height, kind, 1, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void *src,
                                                size_t spitch, size_t width, size_t height, int kind,
                                                cudaStream_t stream)
{
    return array_copy_2d(dst, w_offset, h_offset, (void *)src, spitch, width, height, kind, 1, 0, stream);
}

CUDART_API cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                             size_t h_offset, size_t width, size_t height, int kind)
{
    return array_copy_2d(src, w_offset, h_offset, dst, dpitch, width, height, kind, 0, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                                  size_t h_offset, size_t width, size_t height, int kind,
                                                  cudaStream_t stream)
{
    return array_copy_2d(src, w_offset, h_offset, dst, dpitch, width, height, kind, 0, 0, stream);
}

/* One side of a copy of the deprecated linear forms (cudaMemcpyToArray and
 * kin): an array at (x bytes, row y), whose rows of width x element size
 * follow each other, or a plain buffer. */
typedef struct linear_side {
    struct cudaArray *a; /* NULL: buf */
    char *buf;
    size_t x, y, row;    /* row: bytes per row of a */
} linear_side;

static cudaError_t linear_side_of(cudaArray_const_t array, size_t x, size_t y, void *buf, size_t count,
                                  linear_side *side)
{
    memset(side, 0, sizeof *side);
    if (!array) {
        side->buf = buf;
        return cudaSuccess;
    }
    struct cudaArray *a = array_of(array);
    if (!a)
        return cudaErrorInvalidResourceHandle;
    size_t rows = (a->height ? a->height : 1) * (a->depth ? a->depth : 1), row = a->width * a->element_size;
    /* the offset inside a row, and the bytes from it to the array's end */
    if (x >= row || y >= rows || count > (rows - y) * row - x)
        return cudaErrorInvalidValue;
    side->a = a;
    side->x = x;
    side->y = y;
    side->row = row;
    return cudaSuccess;
}

/* count bytes from src to dst, where an array side wraps from the end of
 * a row to the start of the next, as CUDA's cudaMemcpyToArray,
 * cudaMemcpyFromArray and cudaMemcpyArrayToArray do; a row at a time. */
static cudaError_t array_copy_linear(cudaArray_const_t dst_array, size_t dx, size_t dy, void *dst_buf,
                                     cudaArray_const_t src_array, size_t sx, size_t sy, const void *src_buf,
                                     size_t count, int kind, int sync, cudaStream_t stream)
{
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_begin_copy(&dev, sync, stream);
    linear_side d, s;
    if (!e)
        e = linear_side_of(dst_array, dx, dy, dst_buf, count, &d);
    if (!e)
        e = linear_side_of(src_array, sx, sy, (void *)src_buf, count, &s);
    /* arrays are device memory: a buffer side decides the direction */
    if (!e) {
        int ok = kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault;
        if (d.a && !s.a)
            ok = ok || kind == cudaMemcpyHostToDevice;
        else if (!d.a && s.a)
            ok = ok || kind == cudaMemcpyDeviceToHost;
        if (!ok)
            e = cudaErrorInvalidMemcpyDirection;
    }
    for (size_t done = 0; !e && done < count;) {
        size_t n = count - done;
        if (d.a && n > d.row - d.x)
            n = d.row - d.x;
        if (s.a && n > s.row - s.x)
            n = s.row - s.x;
        char *to = d.a ? (char *)d.a->data + d.y * d.a->pitch + d.x : d.buf + done;
        const char *from = s.a ? (const char *)s.a->data + s.y * s.a->pitch + s.x : s.buf + done;
        e = cudart_copy_2d(dev, to, n, from, n, n, 1, kind);
        done += n;
        linear_side *sides[2] = {&d, &s};
        for (int i = 0; i < 2; i++)
            if (sides[i]->a && (sides[i]->x += n) == sides[i]->row) {
                sides[i]->x = 0;
                sides[i]->y++;
            }
    }
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void *src,
                                         size_t count, int kind)
{
    if (!dst)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return array_copy_linear(dst, w_offset, h_offset, NULL, NULL, 0, 0, src, count, kind, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void *src,
                                              size_t count, int kind, cudaStream_t stream)
{
    if (!dst)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return array_copy_linear(dst, w_offset, h_offset, NULL, NULL, 0, 0, src, count, kind, 0, stream);
}

CUDART_API cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                           size_t count, int kind)
{
    if (!src)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return array_copy_linear(NULL, 0, 0, dst, src, w_offset, h_offset, NULL, count, kind, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                                size_t count, int kind, cudaStream_t stream)
{
    if (!src)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return array_copy_linear(NULL, 0, 0, dst, src, w_offset, h_offset, NULL, count, kind, 0, stream);
}

CUDART_API cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                              cudaArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                              size_t count, int kind)
{
    if (!dst || !src)
        return cudart_result(cudaErrorInvalidResourceHandle);
    return array_copy_linear(dst, w_offset_dst, h_offset_dst, NULL, src, w_offset_src, h_offset_src, NULL, count,
                             kind, 1, NULL);
}

/* A pitched view of one side of a 3D copy. */
typedef struct copy_side {
    char *base;
    size_t pitch, rows_per_slice;
} copy_side;

static cudaError_t side_of(cudaArray_t array, struct cudaPos pos, struct cudaPitchedPtr ptr, copy_side *side,
                           size_t *element, struct cudaExtent extent)
{
    if (array) {
        struct cudaArray *a = array_of(array);
        if (!a)
            return cudaErrorInvalidResourceHandle;
        /* layers and cubemap faces are the depth dimension */
        size_t rows = a->height ? a->height : 1, slices = a->depth ? a->depth : 1;
        if (pos.x + extent.width > a->width || pos.y + extent.height > rows || pos.z + extent.depth > slices)
            return cudaErrorInvalidValue;
        side->pitch = a->pitch;
        side->rows_per_slice = a->height ? a->height : 1;
        side->base = (char *)a->data + (pos.z * side->rows_per_slice + pos.y) * a->pitch + pos.x * a->element_size;
        *element = a->element_size;
        return cudaSuccess;
    }
    side->pitch = ptr.pitch;
    side->rows_per_slice = ptr.ysize;
    side->base = (char *)ptr.ptr + (pos.z * ptr.ysize + pos.y) * ptr.pitch + pos.x;
    return cudaSuccess;
}

static cudaError_t memcpy3d_common(const struct cudaMemcpy3DParms *p, int sync, cudaStream_t stream)
{
    if (!p || (p->srcArray && p->srcPtr.ptr) || (p->dstArray && p->dstPtr.ptr))
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudaSuccess;
    if (!sync && cudart_stream_valid(stream) && cudart_capture_stream(stream, &e) == 1) {
        e = cudart_capture_node(stream, cudaGraphNodeTypeMemcpy, p, NULL); /* a memcpy node */
        cudart_unlock();
        return cudart_result(e);
    }
    if (!e)
        e = cudart_begin_copy(&dev, sync, stream);
    copy_side src, dst;
    size_t element = 1; /* extents count elements when an array is involved, else bytes */
    if (!e)
        e = side_of(p->srcArray, p->srcPos, p->srcPtr, &src, &element, p->extent);
    if (!e)
        e = side_of(p->dstArray, p->dstPos, p->dstPtr, &dst, &element, p->extent);
    size_t width = p->extent.width * element;
    for (size_t z = 0; !e && z < p->extent.depth; z++)
        e = cudart_copy_2d(dev, dst.base + z * dst.rows_per_slice * dst.pitch, dst.pitch,
                    src.base + z * src.rows_per_slice * src.pitch, src.pitch, width, p->extent.height, p->kind);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return memcpy3d_common(p, 1, NULL);
}

CUDART_API cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return memcpy3d_common(p, 0, stream);
}

CUDART_ALIAS(cudaMemcpy2DToArray_ptds, cudaMemcpy2DToArray)
CUDART_ALIAS(cudaMemcpy2DToArrayAsync_ptsz, cudaMemcpy2DToArrayAsync)
CUDART_ALIAS(cudaMemcpy2DFromArray_ptds, cudaMemcpy2DFromArray)
CUDART_ALIAS(cudaMemcpy2DFromArrayAsync_ptsz, cudaMemcpy2DFromArrayAsync)
CUDART_ALIAS(cudaMemcpyToArray_ptds, cudaMemcpyToArray)
CUDART_ALIAS(cudaMemcpyFromArray_ptds, cudaMemcpyFromArray)
CUDART_ALIAS(cudaMemcpyToArrayAsync_ptsz, cudaMemcpyToArrayAsync)
CUDART_ALIAS(cudaMemcpyFromArrayAsync_ptsz, cudaMemcpyFromArrayAsync)
CUDART_ALIAS(cudaMemcpyArrayToArray_ptds, cudaMemcpyArrayToArray)
CUDART_ALIAS(cudaMemcpy3D_ptds, cudaMemcpy3D)
CUDART_ALIAS(cudaMemcpy3DAsync_ptsz, cudaMemcpy3DAsync)
