/* Launch-layout queries for the call room: where a kernel's dynamic shared
 * memory starts, computed exactly as kemu_launch lays a block out (see
 * src/exec/launch.c). Read-only; nothing here changes a kernel. */
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
