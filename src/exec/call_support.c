/* What the call room needs below the public API: where a kernel's dynamic
 * shared memory starts, computed exactly as kemu_launch lays a block out
 * (see src/exec/launch.c), and the dtype of each operand's allocation for
 * out-of-bounds reads that return the fill value. */
#include "exec/call_support.h"
#include "exec/exec.h"

uint64_t exec_kernel_dynamic_shared_base(const kemu_kernel *k)
{
    if (!k)
        return 0;
    uint64_t base = k->fn->shared_static_size;
    const bc_module *bc = k->mod->bc;
    if (bc->has_dynamic_shared && bc->shared_align > 1)
        base = (base + bc->shared_align - 1) / bc->shared_align * bc->shared_align;
    return base;
}

void exec_set_fill_class(kemu_device *dev, uint64_t address, int fill_class)
{
    mem_allocation *a = (mem_allocation *)mem_find_containing(&dev->mem, address);
    if (a)
        a->fill_class = fill_class + 1;
}

void exec_set_printf_fifo(kemu_device *dev, size_t bytes)
{
    if (dev)
        dev->printf_fifo_size = bytes ? bytes : EXEC_PRINTF_FIFO_DEFAULT;
}

int exec_set_heap_size(kemu_device *dev, size_t bytes)
{
    if (!dev)
        return 0;
    if (dev->heap_base)
        return bytes == dev->heap_size ? 0 : -1;
    dev->heap_request = bytes;
    return 0;
}

void exec_set_device_runtime(kemu_device *dev, uint64_t pending_launches, int runtime_version)
{
    if (dev) {
        dev->cdp_pending_limit = pending_launches;
        dev->cdp_runtime_version = runtime_version;
    }
}

int exec_conditional_alloc(kemu_device *dev, uint64_t *address)
{
    return dev && address ? mem_alloc(&dev->mem, sizeof(uint32_t), 0, MEM_KIND_GRAPH_CONDITIONAL, address) : -1;
}

void exec_conditional_free(kemu_device *dev, uint64_t address)
{
    const mem_allocation *a = dev ? mem_find_containing(&dev->mem, address) : NULL;
    if (a && a->base == address && a->kind == MEM_KIND_GRAPH_CONDITIONAL)
        mem_free(&dev->mem, address);
}
