/* CUDA dynamic parallelism (CDP2), the launch layer's side: answers the
 * device runtime calls a kernel's threads make (src/vm/devrt.c hands them
 * over) and records their launches. A device launch is two calls, as nvcc
 * compiles `child<<<g, b, shm, s>>>(args)`: GetParameterBufferV2(kernel,
 * grid, block, shared) hands out a buffer in device memory, laid out as
 * the child's .param list; the thread stores the arguments there and
 * LaunchDeviceV2(buffer, stream) queues the launch. The parameters are
 * copied at that moment, and the buffer goes back to the region it came
 * from when the grid ends.
 *
 * Device-side cudaMemcpy(2D/3D)Async and cudaMemset(2D/3D)Async are
 * queued the same way, as work of their stream, and done in their turn (a
 * 3D one as one 2D piece per slice). cudaFuncGetAttributes, the occupancy
 * calls and cudaGetErrorString/Name are answered here too; the strings
 * live in device memory made with the parameter-buffer region.
 *
 * Nothing runs inline: src/exec/launch.c runs a grid's launches after all
 * its blocks have ended (see docs/cudart.md, "Dynamic parallelism", for
 * why that order is one CDP2 allows). Handles of device streams and
 * events are small numbers per grid; device streams need no queue of their
 * own, since every launch of a block runs in the order the block made it.
 * This file must not run kernels. */
#include "exec/devrt.h"
#include "check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    CUDA_SUCCESS = 0, CUDA_INVALID_VALUE = 1, CUDA_MEMORY_ALLOCATION = 2, CUDA_INVALID_CONFIGURATION = 9,
    CUDA_INVALID_PITCH_VALUE = 12, CUDA_INVALID_MEMCPY_DIRECTION = 21,
    CUDA_LAUNCH_MAX_DEPTH_EXCEEDED = 65, CUDA_LAUNCH_PENDING_COUNT_EXCEEDED = 69,
    CUDA_INVALID_DEVICE_FUNCTION = 98, CUDA_INVALID_DEVICE = 101, CUDA_UNSUPPORTED_LIMIT = 215,
    CUDA_INVALID_RESOURCE_HANDLE = 400, CUDA_NOT_SUPPORTED = 801
};

/* device stream handles: the implicit streams, the two special streams of
 * CDP2 (cuda_device_runtime_api.h: cudaStreamTailLaunch 0x3,
 * cudaStreamFireAndForget 0x4), and streams and events made in a grid */
#define STREAM_TAIL 3u
#define STREAM_FIRE_AND_FORGET 4u
#define STREAM_HANDLE_BASE 0x10000ull
#define EVENT_HANDLE_BASE 0x20000ull
#define HANDLES_PER_GRID 0x10000ull

#define POOL_BYTES (16u * 1024u * 1024u)
#define BUFFER_ALIGN 64u   /* a parameter buffer is aligned for any parameter (CUDA: 64 bytes) */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t pending_limit(const kemu_device *dev)
{
    return dev->cdp_pending_limit ? dev->cdp_pending_limit : EXEC_CDP_PENDING_DEFAULT;
}

void exec_cdp_started(kemu_device *dev)
{
    __atomic_sub_fetch(&dev->cdp_pending, 1, __ATOMIC_RELAXED);
}

static uint64_t arg_u64(const vm_devrt_request *r, int i)
{
    uint64_t v = 0;
    if (i < r->nargs)
        memcpy(&v, r->args[i], sizeof v);
    return v;
}

static uint32_t arg_u32(const vm_devrt_request *r, int i)
{
    uint32_t v = 0;
    if (i < r->nargs)
        memcpy(&v, r->args[i], sizeof v);
    return v;
}

static void arg_dim3(const vm_devrt_request *r, int i, unsigned out[3])
{
    memset(out, 0, 3 * sizeof *out);
    if (i < r->nargs)
        memcpy(out, r->args[i], 3 * sizeof *out);
}

/* The kernel at function address addr of the grid's module, or NULL. */
static kemu_kernel *kernel_at(const exec_grid_cdp *g, uint64_t addr)
{
    kemu_module *mod = g->mod;
    if (addr < MEM_WINDOW_FUNCTION || addr - MEM_WINDOW_FUNCTION >= (uint64_t)mod->bc->nfunctions)
        return NULL;
    const bc_function *fn = mod->bc->functions[addr - MEM_WINDOW_FUNCTION];
    for (int i = 0; i < mod->nkernels; i++)
        if (mod->kernels[i].fn == fn)
            return &mod->kernels[i];
    return NULL;
}

/* A parameter buffer of size bytes from the device's region: its address,
 * or 0 when the region is full. */
static uint64_t pool_take(exec_grid_cdp *g, uint64_t size)
{
    kemu_device *dev = g->dev;
    uint64_t need = (size + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
    if (!need)
        need = BUFFER_ALIGN;
    uint64_t at = 0;
    pthread_mutex_lock(&pool_lock);
    if (dev->cdp_pool_base && dev->cdp_pool_used + need <= dev->cdp_pool_size) {
        at = dev->cdp_pool_base + dev->cdp_pool_used;
        dev->cdp_pool_used += need;
    }
    pthread_mutex_unlock(&pool_lock);
    return at;
}

static uint64_t devrt_call(void *ctx, vm_devrt_request *r, int *error);
static int error_strings_make(kemu_device *dev);

kemu_status exec_cdp_begin(exec_grid_cdp *g, kemu_module *mod, unsigned depth, kemu_error *err)
{
    memset(g, 0, sizeof *g);
    g->mod = mod;
    g->dev = mod->dev;
    g->depth = depth;
    g->devrt.ctx = g;
    g->devrt.call = devrt_call;
    g->devrt.runtime_version = g->dev->cdp_runtime_version ? g->dev->cdp_runtime_version : 13000;
    pthread_mutex_init(&g->lock, NULL);
    kemu_device *dev = mod->dev;
    pthread_mutex_lock(&pool_lock);
    if (!dev->cdp_pool_base) {
        /* made between launches: the allocation table changes only then */
        if (mem_alloc(&dev->mem, POOL_BYTES, 0, MEM_KIND_MODULE_GLOBALS, &dev->cdp_pool_base)) {
            pthread_mutex_unlock(&pool_lock);
            pthread_mutex_destroy(&g->lock);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory for the device launch parameter buffers");
        }
        dev->cdp_pool_size = POOL_BYTES;
        dev->cdp_pool_used = 0;
    }
    if (error_strings_make(dev)) {
        pthread_mutex_unlock(&pool_lock);
        pthread_mutex_destroy(&g->lock);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory for the device runtime's error strings");
    }
    /* buffers go back when no grid that may hold one runs */
    if (dev->cdp_pool_users++ == 0)
        dev->cdp_pool_used = 0;
    pthread_mutex_unlock(&pool_lock);
    g->uses_pool = 1;
    return KEMU_OK;
}

static int cmp_child(const void *a, const void *b)
{
    const exec_cdp_child *x = a, *y = b;
    int tx = x->kind == EXEC_CDP_TAIL, ty = y->kind == EXEC_CDP_TAIL;
    if (tx != ty)
        return tx - ty;
    if (x->block_id != y->block_id)
        return x->block_id < y->block_id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void exec_cdp_grid_done(exec_grid_cdp *g)
{
    if (g->uses_pool) {
        pthread_mutex_lock(&pool_lock);
        g->dev->cdp_pool_users--;
        pthread_mutex_unlock(&pool_lock);
        g->uses_pool = 0;
    }
    free(g->buffers);
    g->buffers = NULL;
    g->nbuffers = g->capbuffers = 0;
    /* the order a block made its launches in is the order of their
     * `order` numbers, whatever the host threads did meanwhile */
    if (g->nchildren > 1)
        qsort(g->children, g->nchildren, sizeof *g->children, cmp_child);
}

void exec_cdp_free(exec_grid_cdp *g)
{
    exec_cdp_grid_done(g);
    for (size_t i = 0; i < g->nchildren; i++) {
        if (g->children[i].params) {
            free(g->children[i].params);
            exec_cdp_started(g->dev);
        }
    }
    free(g->children);
    g->children = NULL;
    g->nchildren = g->capchildren = 0;
    pthread_mutex_destroy(&g->lock);
}

/* GetParameterBuffer(V2): a buffer for the launch's parameters, or 0. */
static uint64_t get_buffer(exec_grid_cdp *g, const vm_devrt_request *r, int *error)
{
    exec_cdp_buffer buf;
    memset(&buf, 0, sizeof buf);
    if (r->which == BC_DEVRT_GET_PARAMETER_BUFFER_V2) {
        buf.kernel = kernel_at(g, arg_u64(r, 0));
        if (!buf.kernel) {
            *error = CUDA_INVALID_DEVICE_FUNCTION;
            return 0;
        }
        arg_dim3(r, 1, buf.cfg.grid);
        arg_dim3(r, 2, buf.cfg.block);
        buf.cfg.shared_bytes = arg_u32(r, 3);
        buf.size = buf.kernel->fn->param_size;
    } else {
        uint64_t align = arg_u64(r, 0);
        buf.size = arg_u64(r, 1);
        if (align > BUFFER_ALIGN || (align & (align - 1))) {
            *error = CUDA_INVALID_VALUE;
            return 0;
        }
    }
    /* a buffer is a pending launch's slot: none past the limit */
    if (__atomic_load_n(&g->dev->cdp_pending, __ATOMIC_RELAXED) >= pending_limit(g->dev)) {
        *error = CUDA_LAUNCH_PENDING_COUNT_EXCEEDED;
        return 0;
    }
    buf.address = pool_take(g, buf.size);
    if (!buf.address) {
        *error = CUDA_MEMORY_ALLOCATION;
        return 0;
    }
    pthread_mutex_lock(&g->lock);
    int oom = util_grow(&g->buffers, &g->capbuffers, g->nbuffers + 1, sizeof *g->buffers);
    if (!oom)
        g->buffers[g->nbuffers++] = buf;
    pthread_mutex_unlock(&g->lock);
    if (oom) {
        *error = CUDA_MEMORY_ALLOCATION;
        return 0;
    }
    return buf.address;
}

/* The kind of launch a device stream handle makes, or -1 when it is no
 * stream of this grid. */
static int stream_kind(const exec_grid_cdp *g, uint64_t s)
{
    if (s <= 2) /* NULL, cudaStreamLegacy, cudaStreamPerThread: the block's implicit stream */
        return EXEC_CDP_STREAM;
    if (s == STREAM_TAIL)
        return EXEC_CDP_TAIL;
    if (s == STREAM_FIRE_AND_FORGET)
        return EXEC_CDP_FIRE_AND_FORGET;
    if (s >= STREAM_HANDLE_BASE && s - STREAM_HANDLE_BASE < __atomic_load_n(&g->streams, __ATOMIC_RELAXED))
        return EXEC_CDP_STREAM;
    return -1;
}

/* LaunchDevice(V2): queues the launch of a buffer's parameters. */
static uint64_t launch_device(exec_grid_cdp *g, vm_devrt_request *r)
{
    exec_cdp_buffer buf;
    uint64_t address, stream;
    kemu_kernel *kernel = NULL;
    if (r->which == BC_DEVRT_LAUNCH_DEVICE_V2) {
        address = arg_u64(r, 0);
        stream = arg_u64(r, 1);
    } else {
        kernel = kernel_at(g, arg_u64(r, 0));
        address = arg_u64(r, 1);
        stream = arg_u64(r, 5);
        if (!kernel)
            return CUDA_INVALID_DEVICE_FUNCTION;
    }
    int found = 0;
    pthread_mutex_lock(&g->lock);
    for (size_t i = g->nbuffers; i-- > 0;)
        if (g->buffers[i].address == address) {
            buf = g->buffers[i];
            g->buffers[i] = g->buffers[--g->nbuffers];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&g->lock);
    if (!found)
        return CUDA_INVALID_VALUE;
    if (kernel) {
        buf.kernel = kernel;
        arg_dim3(r, 2, buf.cfg.grid);
        arg_dim3(r, 3, buf.cfg.block);
        buf.cfg.shared_bytes = arg_u32(r, 4);
        if (buf.size < kernel->fn->param_size)
            return CUDA_INVALID_VALUE;
    } else if (!buf.kernel) {
        return CUDA_INVALID_VALUE; /* a GetParameterBuffer buffer needs LaunchDevice */
    }
    int kind = stream_kind(g, stream);
    if (kind < 0)
        return CUDA_INVALID_RESOURCE_HANDLE;
    if (g->depth + 1 > EXEC_CDP_MAX_DEPTH)
        return CUDA_LAUNCH_MAX_DEPTH_EXCEEDED;
    for (int i = 0; i < 3; i++)
        if (!buf.cfg.grid[i] || !buf.cfg.block[i])
            return CUDA_INVALID_CONFIGURATION;
    unsigned grid[3], block[3], cluster[3];
    if (exec_validate_launch(buf.kernel, &buf.cfg, grid, block, cluster, exec_module_arch(g->mod), NULL))
        return CUDA_INVALID_CONFIGURATION;
    kemu_device *dev = g->dev;
    if (__atomic_add_fetch(&dev->cdp_pending, 1, __ATOMIC_RELAXED) > pending_limit(dev)) {
        exec_cdp_started(dev);
        return CUDA_LAUNCH_PENDING_COUNT_EXCEEDED;
    }
    exec_cdp_child c;
    memset(&c, 0, sizeof c);
    c.block_id = r->b->linear_id;
    c.kind = kind;
    c.kernel = buf.kernel;
    c.cfg = buf.cfg;
    size_t n = buf.kernel->fn->param_size;
    c.params = malloc(n ? n : 1);
    for (int i = 0; i < 3; i++) {
        c.ctaid[i] = r->b->ctaid[i];
        c.tid[i] = r->w->tid[i][r->lane];
    }
    check_cdp_mark(g->race, r->b, r->w, r->lane, c.mark);
    pthread_mutex_lock(&g->lock);
    int oom = !c.params || util_grow(&g->children, &g->capchildren, g->nchildren + 1, sizeof *g->children);
    if (!oom) {
        /* the parameters as the thread stored them, now */
        memcpy(c.params, (const void *)(uintptr_t)buf.address, n);
        c.order = g->next_order++;
        g->children[g->nchildren++] = c;
    }
    pthread_mutex_unlock(&g->lock);
    if (oom) {
        free(c.params);
        exec_cdp_started(dev);
        return CUDA_MEMORY_ALLOCATION;
    }
    return CUDA_SUCCESS;
}

/* Whether [addr, addr + n) is global memory a device-side copy or set may
 * reach: inside one allocation (user memory, the device heap, __device__
 * variables), not shared or local memory. */
static int device_range(const exec_grid_cdp *g, uint64_t addr, uint64_t n)
{
    if (!addr || addr >= MEM_WINDOW_SHARED || n > MEM_WINDOW_SHARED - addr)
        return 0;
    const mem_allocation *a = mem_find(&g->dev->mem, addr, n);
    return a && a->kind != MEM_KIND_GRAPH_CONDITIONAL;
}

/* A device-side copy or set before it is checked: depth slices of height
 * rows of width bytes; rows are pitch bytes apart, slices slice bytes. */
typedef struct memory_op {
    int op;                      /* EXEC_CDP_OP_COPY or _SET */
    uint64_t dst, dpitch, dslice, src, spitch, sslice;
    uint64_t width, height, depth;
    int value;
    unsigned kind;               /* cudaMemcpyKind of a copy */
    uint64_t stream;
} memory_op;

/* The bytes from the first to the last of a side's region, or 0 when that
 * does not fit in 64 bits. */
static uint64_t region_span(uint64_t pitch, uint64_t slice, const memory_op *m)
{
    uint64_t rows, slices, span;
    if (__builtin_mul_overflow(m->height - 1, pitch, &rows) || __builtin_mul_overflow(m->depth - 1, slice, &slices) ||
        __builtin_add_overflow(rows, slices, &span) || __builtin_add_overflow(span, m->width, &span))
        return 0;
    return span;
}

/* Checks a device-side copy or set (device-to-device copies of device
 * memory only, as the device runtime documents) and queues it in the
 * order of its stream, a slice at a time, to be done by src/exec/launch.c
 * when its turn comes. */
static uint64_t queue_memory_op(exec_grid_cdp *g, vm_devrt_request *r, const memory_op *m)
{
    int copy = m->op == EXEC_CDP_OP_COPY;
    if (copy && m->kind != 3 && m->kind != 4) /* DeviceToDevice, Default */
        return CUDA_INVALID_MEMCPY_DIRECTION;
    int skind = stream_kind(g, m->stream);
    if (skind < 0)
        return CUDA_INVALID_RESOURCE_HANDLE;
    if (!m->width || !m->height || !m->depth)
        return CUDA_SUCCESS;
    if ((m->height > 1 || m->depth > 1) && (m->dpitch < m->width || (copy && m->spitch < m->width)))
        return CUDA_INVALID_PITCH_VALUE;
    uint64_t dspan = region_span(m->dpitch, m->dslice, m), sspan = copy ? region_span(m->spitch, m->sslice, m) : 1;
    if (!dspan || !sspan || !device_range(g, m->dst, dspan) || (copy && !device_range(g, m->src, sspan)))
        return CUDA_INVALID_VALUE;
    /* slices that follow each other without a gap are one run of rows */
    int whole = m->depth == 1 || (m->dslice == m->height * m->dpitch && (!copy || m->sslice == m->height * m->spitch));
    uint64_t pieces = whole ? 1 : m->depth;
    exec_cdp_child c;
    memset(&c, 0, sizeof c);
    c.op = m->op;
    c.dpitch = m->dpitch;
    c.spitch = m->spitch;
    c.width = m->width;
    c.height = whole ? m->height * m->depth : m->height;
    c.value = m->value;
    c.block_id = r->b->linear_id;
    c.kind = skind;
    for (int i = 0; i < 3; i++) {
        c.ctaid[i] = r->b->ctaid[i];
        c.tid[i] = r->w->tid[i][r->lane];
    }
    pthread_mutex_lock(&g->lock);
    int oom = util_grow(&g->children, &g->capchildren, g->nchildren + pieces, sizeof *g->children);
    for (uint64_t z = 0; !oom && z < pieces; z++) {
        c.dst = m->dst + z * m->dslice;
        c.src = copy ? m->src + z * m->sslice : 0;
        c.order = g->next_order++;
        g->children[g->nchildren++] = c;
    }
    pthread_mutex_unlock(&g->lock);
    return oom ? CUDA_MEMORY_ALLOCATION : CUDA_SUCCESS;
}

/* cudaPitchedPtr, cudaPos, cudaExtent and cudaMemcpy3DParms as
 * driver_types.h lays them out for the device (64-bit size_t). */
typedef struct { uint64_t ptr, pitch, xsize, ysize; } devrt_pitched_ptr;
typedef struct { uint64_t x, y, z; } devrt_pos;
typedef struct { uint64_t width, height, depth; } devrt_extent;
typedef struct {
    uint64_t src_array;
    devrt_pos src_pos;
    devrt_pitched_ptr src_ptr;
    uint64_t dst_array;
    devrt_pos dst_pos;
    devrt_pitched_ptr dst_ptr;
    devrt_extent extent;
    uint32_t kind, pad;
} devrt_memcpy3d_parms;
_Static_assert(sizeof(devrt_memcpy3d_parms) == 160, "cudaMemcpy3DParms");

/* The first byte of a 3D side at pos (x in bytes, y rows, z slices of
 * ysize rows), its slice stride; -1 when the region leaves the pitch or
 * the slice, or the address does not fit in 64 bits. */
static int side_at(const devrt_pitched_ptr *p, const devrt_pos *pos, const devrt_extent *e, uint64_t *base,
                   uint64_t *slice)
{
    uint64_t rows, off;
    if (e->height > 1 || e->depth > 1) {
        if (pos->x > p->pitch || e->width > p->pitch - pos->x)
            return p->pitch < e->width ? 0 : -1; /* a pitch below the width: cudaErrorInvalidPitchValue later */
    }
    if (e->depth > 1 && (pos->y > p->ysize || e->height > p->ysize - pos->y))
        return -1;
    if (__builtin_mul_overflow(p->pitch, p->ysize, slice) || __builtin_mul_overflow(pos->z, p->ysize, &rows) ||
        __builtin_add_overflow(rows, pos->y, &rows) || __builtin_mul_overflow(rows, p->pitch, &off) ||
        __builtin_add_overflow(off, pos->x, &off) || __builtin_add_overflow(off, p->ptr, base))
        return -1;
    return 0;
}

/* The copy or set of a device-side cudaMemcpyAsync, cudaMemcpy2DAsync,
 * cudaMemcpy3DAsync, cudaMemsetAsync, cudaMemset2DAsync or
 * cudaMemset3DAsync call; its error, or 0. */
static uint64_t memory_call(exec_grid_cdp *g, vm_devrt_request *r)
{
    memory_op m;
    memset(&m, 0, sizeof m);
    m.kind = 3; /* cudaMemcpyDeviceToDevice */
    m.height = m.depth = 1;
    switch (r->which) {
    case BC_DEVRT_MEMCPY_ASYNC: /* (dst, src, count, kind, stream) */
        m.op = EXEC_CDP_OP_COPY;
        m.dst = arg_u64(r, 0);
        m.src = arg_u64(r, 1);
        m.width = m.dpitch = m.spitch = arg_u64(r, 2);
        m.kind = arg_u32(r, 3);
        m.stream = arg_u64(r, 4);
        break;
    case BC_DEVRT_MEMCPY_2D_ASYNC: /* (dst, dpitch, src, spitch, width, height, kind, stream) */
        m.op = EXEC_CDP_OP_COPY;
        m.dst = arg_u64(r, 0);
        m.dpitch = arg_u64(r, 1);
        m.src = arg_u64(r, 2);
        m.spitch = arg_u64(r, 3);
        m.width = arg_u64(r, 4);
        m.height = arg_u64(r, 5);
        m.kind = arg_u32(r, 6);
        m.stream = arg_u64(r, 7);
        break;
    case BC_DEVRT_MEMCPY_3D_ASYNC: { /* (const cudaMemcpy3DParms *p, stream) */
        devrt_memcpy3d_parms p;
        m.op = EXEC_CDP_OP_COPY;
        m.stream = arg_u64(r, 1);
        if (vm_devrt_read(r->b, r->w, r->lane, arg_u64(r, 0), &p, sizeof p))
            return CUDA_INVALID_VALUE;
        /* device code has no CUDA arrays: pitched pointers only */
        if (p.src_array || p.dst_array)
            return CUDA_INVALID_VALUE;
        m.kind = p.kind;
        m.width = p.extent.width;
        m.height = p.extent.height;
        m.depth = p.extent.depth;
        m.dpitch = p.dst_ptr.pitch;
        m.spitch = p.src_ptr.pitch;
        if (m.kind != 3 && m.kind != 4)
            return CUDA_INVALID_MEMCPY_DIRECTION;
        if (!m.width || !m.height || !m.depth)
            break;
        if (side_at(&p.dst_ptr, &p.dst_pos, &p.extent, &m.dst, &m.dslice) ||
            side_at(&p.src_ptr, &p.src_pos, &p.extent, &m.src, &m.sslice))
            return stream_kind(g, m.stream) < 0 ? CUDA_INVALID_RESOURCE_HANDLE : CUDA_INVALID_VALUE;
        break;
    }
    case BC_DEVRT_MEMSET_ASYNC: /* (devPtr, value, count, stream) */
        m.op = EXEC_CDP_OP_SET;
        m.dst = arg_u64(r, 0);
        m.value = (int)arg_u32(r, 1);
        m.width = m.dpitch = arg_u64(r, 2);
        m.stream = arg_u64(r, 3);
        break;
    case BC_DEVRT_MEMSET_2D_ASYNC: /* (devPtr, pitch, value, width, height, stream) */
        m.op = EXEC_CDP_OP_SET;
        m.dst = arg_u64(r, 0);
        m.dpitch = arg_u64(r, 1);
        m.value = (int)arg_u32(r, 2);
        m.width = arg_u64(r, 3);
        m.height = arg_u64(r, 4);
        m.stream = arg_u64(r, 5);
        break;
    default: { /* BC_DEVRT_MEMSET_3D_ASYNC: (cudaPitchedPtr p, value, cudaExtent extent, stream), by value */
        devrt_pitched_ptr p;
        devrt_extent e;
        devrt_pos origin = {0, 0, 0};
        memcpy(&p, r->args[0], sizeof p);
        memcpy(&e, r->args[2], sizeof e);
        m.op = EXEC_CDP_OP_SET;
        m.value = (int)arg_u32(r, 1);
        m.stream = arg_u64(r, 3);
        m.width = e.width;
        m.height = e.height;
        m.depth = e.depth;
        m.dpitch = p.pitch;
        if (!m.width || !m.height || !m.depth)
            break;
        if (side_at(&p, &origin, &e, &m.dst, &m.dslice))
            return stream_kind(g, m.stream) < 0 ? CUDA_INVALID_RESOURCE_HANDLE : CUDA_INVALID_VALUE;
        break;
    }
    }
    return queue_memory_op(g, r, &m);
}

static int write_out(const vm_devrt_request *r, uint64_t addr, const void *v, size_t n)
{
    return vm_devrt_write(r->b, r->w, r->lane, addr, v, n);
}

/* cudaDeviceGetAttribute in device code: the limits kemu's architecture
 * table has; -1 for an attribute it does not answer. */
static int attribute(const exec_arch *a, int attr, int *v)
{
    switch (attr) {
    case 1: *v = (int)a->max_threads_per_block; return 0;
    case 2: case 3: case 4: *v = (int)a->max_block_dim[attr - 2]; return 0;
    case 5: case 6: case 7: *v = (int)a->max_grid_dim[attr - 5]; return 0;
    case 8: *v = (int)a->max_shared_default; return 0;
    case 10: *v = 32; return 0;
    case 16: *v = a->sm_count; return 0;
    case 75: *v = a->sm / 10; return 0;
    case 76: *v = a->sm % 10; return 0;
    case 97: *v = (int)a->max_shared_optin; return 0;
    default: return -1;
    }
}

/* struct cudaFuncAttributes as driver_types.h lays it out. */
typedef struct {
    uint64_t shared_size_bytes, const_size_bytes, local_size_bytes;
    int32_t max_threads_per_block, num_regs, ptx_version, binary_version, cache_mode_ca;
    int32_t max_dynamic_shared_size_bytes, preferred_shmem_carveout, cluster_dim_must_be_set;
    int32_t required_cluster[3], cluster_scheduling_policy_preference, non_portable_cluster_size_allowed;
    int32_t reserved[16];
} devrt_func_attributes;
_Static_assert(sizeof(devrt_func_attributes) == 144, "cudaFuncAttributes");

/* cudaFuncGetAttributes in device code: what the kernel's PTX says, with
 * the defaults for what only the host sets (cudaFuncSetAttribute). */
static uint64_t func_attributes(exec_grid_cdp *g, vm_devrt_request *r)
{
    kemu_kernel *k = kernel_at(g, arg_u64(r, 1));
    if (!k)
        return CUDA_INVALID_DEVICE_FUNCTION;
    const exec_arch *a = exec_module_arch(g->mod);
    const bc_function *fn = k->fn;
    devrt_func_attributes at;
    memset(&at, 0, sizeof at);
    at.shared_size_bytes = fn->shared_static_size;
    at.const_size_bytes = g->mod->bc->const_size;
    at.local_size_bytes = fn->local_size;
    at.max_threads_per_block = (int32_t)a->max_threads_per_block;
    if (fn->maxntid[0])
        at.max_threads_per_block = (int32_t)(fn->maxntid[0] * (fn->maxntid[1] ? fn->maxntid[1] : 1) *
                                             (fn->maxntid[2] ? fn->maxntid[2] : 1));
    at.num_regs = 32; /* kemu has no register allocation; the host runtime says the same */
    at.ptx_version = at.binary_version = g->mod->bc->arch_sm ? (int32_t)g->mod->bc->arch_sm : a->sm;
    at.max_dynamic_shared_size_bytes =
        a->max_shared_default > fn->shared_static_size ? (int32_t)(a->max_shared_default - fn->shared_static_size) : 0;
    at.preferred_shmem_carveout = -1;
    if (write_out(r, arg_u64(r, 0), &at, sizeof at))
        return CUDA_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* cudaOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags) in device code. */
static uint64_t occupancy(exec_grid_cdp *g, vm_devrt_request *r)
{
    /* (int *numBlocks, const void *func, int blockSize, size_t dynamicSmemSize[, unsigned flags]) */
    int32_t block_size = (int32_t)arg_u32(r, 2);
    uint32_t flags = r->which == BC_DEVRT_OCCUPANCY_WITH_FLAGS ? arg_u32(r, 4) : 0;
    if (!arg_u64(r, 0) || block_size <= 0 || flags > 1) /* cudaOccupancyDefault, cudaOccupancyDisableCachingOverride */
        return CUDA_INVALID_VALUE;
    kemu_kernel *k = kernel_at(g, arg_u64(r, 1));
    if (!k)
        return CUDA_INVALID_DEVICE_FUNCTION;
    uint64_t dynamic_shared = arg_u64(r, 3), shared = k->fn->shared_static_size + dynamic_shared;
    int32_t n = shared < dynamic_shared ? 0 : exec_arch_blocks_per_sm(exec_module_arch(g->mod), block_size, shared);
    if (write_out(r, arg_u64(r, 0), &n, sizeof n))
        return CUDA_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The runtime's error names and messages (the table cudaGetErrorName and
 * cudaGetErrorString answer from on the host), for device code. */
static const struct {
    int value;
    const char *name, *text;
} error_table[] = {
#define CUDART_ERROR(value, name, text) {value, #name, text},
#include "cudart/errors.def"
#undef CUDART_ERROR
};
#define UNRECOGNIZED_ERROR "unrecognized error code"

/* Device memory holding every name and message, NUL-terminated, in table
 * order (name, then message), then UNRECOGNIZED_ERROR. */
static uint64_t error_strings_size(void)
{
    uint64_t n = sizeof UNRECOGNIZED_ERROR;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(error_table); i++)
        n += strlen(error_table[i].name) + 1 + strlen(error_table[i].text) + 1;
    return n;
}

/* Makes the device's copy of the strings (call with pool_lock held,
 * between launches); 0 or -1 when out of memory. */
static int error_strings_make(kemu_device *dev)
{
    if (dev->cdp_strings_base)
        return 0;
    uint64_t base;
    if (mem_alloc(&dev->mem, error_strings_size(), 0, MEM_KIND_MODULE_GLOBALS, &base))
        return -1;
    char *p = (char *)(uintptr_t)base;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(error_table); i++) {
        size_t a = strlen(error_table[i].name) + 1, b = strlen(error_table[i].text) + 1;
        memcpy(p, error_table[i].name, a);
        memcpy(p + a, error_table[i].text, b);
        p += a + b;
    }
    memcpy(p, UNRECOGNIZED_ERROR, sizeof UNRECOGNIZED_ERROR);
    dev->cdp_strings_base = base;
    return 0;
}

/* cudaGetErrorString / cudaGetErrorName in device code: the address of
 * the device's copy of the string (as on the host, an unknown code is
 * "unrecognized error code"). */
static uint64_t error_string(const exec_grid_cdp *g, const vm_devrt_request *r)
{
    int code = (int)arg_u32(r, 0), name = r->which == BC_DEVRT_GET_ERROR_NAME;
    uint64_t at = g->dev->cdp_strings_base;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(error_table); i++) {
        size_t a = strlen(error_table[i].name) + 1, b = strlen(error_table[i].text) + 1;
        if (error_table[i].value == code)
            return name ? at : at + a;
        at += a + b;
    }
    return at;
}

static uint64_t devrt_call(void *ctx, vm_devrt_request *r, int *error)
{
    exec_grid_cdp *g = ctx;
    uint64_t ret = CUDA_SUCCESS;
    switch (r->which) {
    case BC_DEVRT_GET_PARAMETER_BUFFER:
    case BC_DEVRT_GET_PARAMETER_BUFFER_V2:
        return get_buffer(g, r, error);
    case BC_DEVRT_LAUNCH_DEVICE:
    case BC_DEVRT_LAUNCH_DEVICE_V2:
        ret = launch_device(g, r);
        break;
    case BC_DEVRT_MEMCPY_ASYNC:
    case BC_DEVRT_MEMCPY_2D_ASYNC:
    case BC_DEVRT_MEMSET_ASYNC:
    case BC_DEVRT_MEMSET_2D_ASYNC:
    case BC_DEVRT_MEMCPY_3D_ASYNC:
    case BC_DEVRT_MEMSET_3D_ASYNC:
        ret = memory_call(g, r);
        break;
    case BC_DEVRT_FUNC_GET_ATTRIBUTES:
        ret = func_attributes(g, r);
        break;
    case BC_DEVRT_OCCUPANCY:
    case BC_DEVRT_OCCUPANCY_WITH_FLAGS:
        ret = occupancy(g, r);
        break;
    case BC_DEVRT_GET_ERROR_STRING:
    case BC_DEVRT_GET_ERROR_NAME:
        return error_string(g, r);
    case BC_DEVRT_STREAM_CREATE_WITH_FLAGS:
    case BC_DEVRT_EVENT_CREATE_WITH_FLAGS: {
        int stream = r->which == BC_DEVRT_STREAM_CREATE_WITH_FLAGS;
        /* device streams must be non-blocking (cudaStreamNonBlocking) */
        if (stream && arg_u32(r, 1) != 1) {
            ret = CUDA_INVALID_VALUE;
            break;
        }
        uint64_t n = __atomic_fetch_add(stream ? &g->streams : &g->events, 1, __ATOMIC_RELAXED);
        uint64_t h = (stream ? STREAM_HANDLE_BASE : EVENT_HANDLE_BASE) + n;
        if (n >= HANDLES_PER_GRID)
            ret = CUDA_MEMORY_ALLOCATION;
        else if (write_out(r, arg_u64(r, 0), &h, sizeof h))
            ret = CUDA_INVALID_VALUE;
        break;
    }
    case BC_DEVRT_STREAM_DESTROY:
        if (stream_kind(g, arg_u64(r, 0)) != EXEC_CDP_STREAM || arg_u64(r, 0) < STREAM_HANDLE_BASE)
            ret = CUDA_INVALID_RESOURCE_HANDLE;
        break;
    case BC_DEVRT_EVENT_RECORD:
    case BC_DEVRT_EVENT_RECORD_WITH_FLAGS:
    case BC_DEVRT_EVENT_DESTROY:
    case BC_DEVRT_STREAM_WAIT_EVENT: {
        /* a block's launches run in the order it made them, so an event
         * orders nothing that is not ordered already */
        uint64_t e = arg_u64(r, r->which == BC_DEVRT_STREAM_WAIT_EVENT ? 1 : 0);
        uint64_t s = r->which == BC_DEVRT_STREAM_WAIT_EVENT ? arg_u64(r, 0)
                   : r->which == BC_DEVRT_EVENT_DESTROY ? 0 : arg_u64(r, 1);
        if (e < EVENT_HANDLE_BASE || e - EVENT_HANDLE_BASE >= __atomic_load_n(&g->events, __ATOMIC_RELAXED) ||
            stream_kind(g, s) < 0)
            ret = CUDA_INVALID_RESOURCE_HANDLE;
        break;
    }
    case BC_DEVRT_DEVICE_GET_ATTRIBUTE: {
        int v = 0;
        if (arg_u32(r, 2) != 0) {
            ret = CUDA_INVALID_DEVICE;
        } else if (attribute(exec_module_arch(g->mod), (int)arg_u32(r, 1), &v)) {
            fprintf(stderr, "kemu: cudaDeviceGetAttribute of attribute %d in device code is not supported yet; "
                            "it returns cudaErrorNotSupported\n", (int)arg_u32(r, 1));
            ret = CUDA_NOT_SUPPORTED;
        } else if (write_out(r, arg_u64(r, 0), &v, sizeof v)) {
            ret = CUDA_INVALID_VALUE;
        }
        break;
    }
    case BC_DEVRT_DEVICE_GET_LIMIT: {
        uint64_t v;
        switch (arg_u32(r, 1)) {
        case 0: v = 1024; break;                              /* cudaLimitStackSize */
        case 1: v = g->dev->printf_fifo_size; break;          /* cudaLimitPrintfFifoSize */
        case 2: v = 8u * 1024u * 1024u; break;                /* cudaLimitMallocHeapSize */
        case 3: v = 2; break;                                 /* cudaLimitDevRuntimeSyncDepth */
        case 4: v = pending_limit(g->dev); break;             /* cudaLimitDevRuntimePendingLaunchCount */
        default: ret = CUDA_UNSUPPORTED_LIMIT; v = 0; break;
        }
        if (!ret && write_out(r, arg_u64(r, 0), &v, sizeof v))
            ret = CUDA_INVALID_VALUE;
        break;
    }
    default:
        ret = CUDA_NOT_SUPPORTED;
        break;
    }
    if (ret)
        *error = (int)ret;
    return ret;
}
