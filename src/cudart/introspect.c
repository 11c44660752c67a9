/* What the libcudart replacement needs to know about the emulated
 * architecture and about a loaded kernel (static shared memory, local
 * memory, .maxntid, PTX version) that the public kemu API does not tell
 * yet. This is the only cudart file that reads libkemu's internal structs
 * (exec/, bc/); when the public API grows these facts, it shrinks. */
#include "config.h"
#include "cudart/runtime.h"
#include "exec/exec.h"

#include <stdio.h>
#include <string.h>

static void fill_arch(const exec_arch *a, cudart_arch_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", a->name);
    info->sm = a->sm;
    info->sm_count = a->sm_count;
    info->max_threads_per_block = (int)a->max_threads_per_block;
    for (int i = 0; i < 3; i++) {
        info->max_block_dim[i] = (int)a->max_block_dim[i];
        info->max_grid_dim[i] = (int)a->max_grid_dim[i];
    }
    info->shared_default = (size_t)a->max_shared_default;
    info->shared_optin = (size_t)a->max_shared_optin;
    info->has_clusters = a->has_clusters;
    info->threads_per_sm = a->threads_per_sm;
    info->blocks_per_sm = a->blocks_per_sm;
    info->shared_per_sm = (size_t)a->shared_per_sm;
}

int cudart_arch_lookup(const char *arch, cudart_arch_info *info)
{
    const exec_arch *a = exec_arch_find(arch);
    if (!a)
        return -1;
    fill_arch(a, info);
    return 0;
}

void cudart_arch_for_sm(unsigned sm, cudart_arch_info *info)
{
    fill_arch(exec_arch_for_sm((int)sm), info);
}

int cudart_arch_blocks_per_sm(unsigned sm, int block_size, size_t shared)
{
    return exec_arch_blocks_per_sm(exec_arch_for_sm((int)sm), block_size, (uint64_t)shared);
}

void cudart_kernel_introspect(const kemu_kernel *k, cudart_kernel_info *info)
{
    memset(info, 0, sizeof *info);
    if (!k || !k->fn || !k->mod || !k->mod->bc)
        return;
    const bc_function *fn = k->fn;
    const bc_module *bc = k->mod->bc;
    info->static_shared = (size_t)fn->shared_static_size; /* per entry: what a launch reserves */
    info->const_bytes = (size_t)bc->const_size;
    info->local_bytes = (size_t)fn->local_size;
    if (fn->maxntid[0])
        info->max_threads = (int)(fn->maxntid[0] * (fn->maxntid[1] ? fn->maxntid[1] : 1) *
                                  (fn->maxntid[2] ? fn->maxntid[2] : 1));
    for (int i = 0; i < 3; i++)
        info->reqntid[i] = (int)fn->reqntid[i];
    if (k->mod->ptx)
        info->ptx_version = k->mod->ptx->version_major * 10 + k->mod->ptx->version_minor;
    info->target_sm = bc->arch_sm;
}
