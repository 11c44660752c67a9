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
 * Device-side cudaMemcpy(2D)Async and cudaMemset(2D)Async are queued the
 * same way, as work of their stream, and done in their turn.
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

/* Device-side cudaMemcpyAsync, cudaMemcpy2DAsync, cudaMemsetAsync and
 * cudaMemset2DAsync: checked now (device-to-device copies of device
 * memory only, as the device runtime documents), queued in the order of
 * their stream and done by src/exec/launch.c when their turn comes. */
static uint64_t queue_memory_op(exec_grid_cdp *g, vm_devrt_request *r)
{
    exec_cdp_child c;
    memset(&c, 0, sizeof c);
    uint64_t stream = 0;
    unsigned kind = 3; /* cudaMemcpyDeviceToDevice */
    c.height = 1;
    switch (r->which) {
    case BC_DEVRT_MEMCPY_ASYNC: /* (dst, src, count, kind, stream) */
        c.op = EXEC_CDP_OP_COPY;
        c.dst = arg_u64(r, 0);
        c.src = arg_u64(r, 1);
        c.width = c.dpitch = c.spitch = arg_u64(r, 2);
        kind = arg_u32(r, 3);
        stream = arg_u64(r, 4);
        break;
    case BC_DEVRT_MEMCPY_2D_ASYNC: /* (dst, dpitch, src, spitch, width, height, kind, stream) */
        c.op = EXEC_CDP_OP_COPY;
        c.dst = arg_u64(r, 0);
        c.dpitch = arg_u64(r, 1);
        c.src = arg_u64(r, 2);
        c.spitch = arg_u64(r, 3);
        c.width = arg_u64(r, 4);
        c.height = arg_u64(r, 5);
        kind = arg_u32(r, 6);
        stream = arg_u64(r, 7);
        break;
    case BC_DEVRT_MEMSET_ASYNC: /* (devPtr, value, count, stream) */
        c.op = EXEC_CDP_OP_SET;
        c.dst = arg_u64(r, 0);
        c.value = (int)arg_u32(r, 1);
        c.width = c.dpitch = arg_u64(r, 2);
        stream = arg_u64(r, 3);
        break;
    default: /* BC_DEVRT_MEMSET_2D_ASYNC: (devPtr, pitch, value, width, height, stream) */
        c.op = EXEC_CDP_OP_SET;
        c.dst = arg_u64(r, 0);
        c.dpitch = arg_u64(r, 1);
        c.value = (int)arg_u32(r, 2);
        c.width = arg_u64(r, 3);
        c.height = arg_u64(r, 4);
        stream = arg_u64(r, 5);
        break;
    }
    if (c.op == EXEC_CDP_OP_COPY && kind != 3 && kind != 4) /* DeviceToDevice, Default */
        return CUDA_INVALID_MEMCPY_DIRECTION;
    int skind = stream_kind(g, stream);
    if (skind < 0)
        return CUDA_INVALID_RESOURCE_HANDLE;
    if (!c.width || !c.height)
        return CUDA_SUCCESS;
    if (c.height > 1 && (c.dpitch < c.width || (c.op == EXEC_CDP_OP_COPY && c.spitch < c.width)))
        return CUDA_INVALID_PITCH_VALUE;
    if (c.height > 1 && (c.height - 1 > (UINT64_MAX - c.width) / c.dpitch ||
                         (c.op == EXEC_CDP_OP_COPY && c.height - 1 > (UINT64_MAX - c.width) / c.spitch)))
        return CUDA_INVALID_VALUE;
    if (!device_range(g, c.dst, (c.height - 1) * c.dpitch + c.width) ||
        (c.op == EXEC_CDP_OP_COPY && !device_range(g, c.src, (c.height - 1) * c.spitch + c.width)))
        return CUDA_INVALID_VALUE;
    c.block_id = r->b->linear_id;
    c.kind = skind;
    for (int i = 0; i < 3; i++) {
        c.ctaid[i] = r->b->ctaid[i];
        c.tid[i] = r->w->tid[i][r->lane];
    }
    pthread_mutex_lock(&g->lock);
    int oom = util_grow(&g->children, &g->capchildren, g->nchildren + 1, sizeof *g->children);
    if (!oom) {
        c.order = g->next_order++;
        g->children[g->nchildren++] = c;
    }
    pthread_mutex_unlock(&g->lock);
    return oom ? CUDA_MEMORY_ALLOCATION : CUDA_SUCCESS;
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
        ret = queue_memory_op(g, r);
        break;
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
