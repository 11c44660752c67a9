/* The public API (include/kemu/kemu.h): devices, modules, kernels, device
 * memory and launches. A launch validates its configuration against the
 * architecture, lays out the parameter buffer with the CUDA ABI, then runs
 * the blocks of the grid over host threads with OpenMP, each host thread
 * with its own reusable block state. Results do not depend on the number
 * of threads: printf output is ordered by block, and a fault is reported
 * for the lowest faulting block. */
#include "config.h"
#include "exec/exec.h"
#include "exec/fidelity.h"
#include "vm/vm.h"
#include "check/check.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const exec_arch arches[] = {
    {"sm_75", 75, 40, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 64 * 1024, 0,
     1024, 16, 64 * 1024},
    {"sm_80", 80, 108, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 163 * 1024, 0,
     2048, 32, 164 * 1024},
    {"sm_86", 86, 84, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 99 * 1024, 0,
     1536, 16, 100 * 1024},
    {"sm_87", 87, 16, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 163 * 1024, 0,
     1536, 16, 164 * 1024},
    {"sm_89", 89, 128, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 99 * 1024, 0,
     1536, 24, 100 * 1024},
    {"sm_90", 90, 132, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 227 * 1024, 1,
     2048, 32, 228 * 1024},
    {"sm_100", 100, 148, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 227 * 1024, 1,
     2048, 32, 228 * 1024},
    {"sm_120", 120, 84, 1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024, 99 * 1024, 1,
     1536, 24, 100 * 1024},
};

const exec_arch *exec_arch_find(const char *name)
{
    int sm;
    char suffix[8] = "";
    if (!name || sscanf(name, "sm_%d%7s", &sm, suffix) < 1)
        return NULL;
    if (suffix[0] && strcmp(suffix, "a") && strcmp(suffix, "f"))
        return NULL;
    for (size_t i = 0; i < KEMU_ARRAY_LEN(arches); i++)
        if (arches[i].sm == sm)
            return &arches[i];
    return NULL;
}

const exec_arch *exec_arch_for_sm(int sm)
{
    const exec_arch *best = &arches[0];
    for (size_t i = 0; i < KEMU_ARRAY_LEN(arches); i++)
        if (arches[i].sm <= sm)
            best = &arches[i];
    return best;
}

int exec_arch_blocks_per_sm(const exec_arch *a, int block_size, uint64_t shared)
{
    /* a kernel's __launch_bounds__ (.maxntid) does not enter: an H200 (runtime
     * 13.0) reports blocks for a block size above it */
    if (block_size <= 0 || (unsigned)block_size > a->max_threads_per_block)
        return 0;
    int warps = (block_size + 31) / 32;
    int by_threads = a->threads_per_sm / (warps * 32);
    int by_registers = 65536 / (32 * warps * 32);
    int n = a->blocks_per_sm;
    if (by_threads < n)
        n = by_threads;
    if (by_registers < n)
        n = by_registers;
    if (shared) {
        if (shared > a->max_shared_optin)
            return 0;
        uint64_t reserved = a->sm >= 80 ? 1024 : 0;
        uint64_t by_shared = a->shared_per_sm / (shared + reserved);
        if (by_shared < (uint64_t)n)
            n = (int)by_shared;
    }
    return n;
}

const exec_arch *exec_module_arch(const kemu_module *mod)
{
    if (mod->dev->arch)
        return mod->dev->arch;
    return exec_arch_for_sm(mod->bc->arch_sm ? mod->bc->arch_sm : 80);
}

const char *kemu_version(void) { return PACKAGE_VERSION; }

const char *kemu_status_string(kemu_status s)
{
    switch (s) {
    case KEMU_OK: return "success";
    case KEMU_ERR_INVALID_ARGUMENT: return "invalid argument";
    case KEMU_ERR_PARSE: return "PTX error";
    case KEMU_ERR_NOT_FOUND: return "not found";
    case KEMU_ERR_OUT_OF_MEMORY: return "out of memory";
    case KEMU_ERR_LAUNCH_CONFIG: return "invalid launch configuration";
    case KEMU_ERR_KERNEL_FAULT: return "kernel fault";
    case KEMU_ERR_UNSUPPORTED: return "not supported";
    case KEMU_ERR_IO: return "I/O error";
    }
    return "unknown status";
}

/* ---- devices ------------------------------------------------------------- */

kemu_status kemu_device_create(const kemu_device_config *cfg, kemu_device **out, kemu_error *err)
{
    if (!out)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_create: out is NULL");
    kemu_device *d = calloc(1, sizeof *d);
    if (!d)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    if (cfg)
        d->cfg = *cfg;
    d->printf_fifo_size = EXEC_PRINTF_FIFO_DEFAULT;
    if (cfg && cfg->arch) {
        d->arch = exec_arch_find(cfg->arch);
        if (!d->arch) {
            free(d);
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                              "unknown architecture '%s' (known: sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_120)",
                              cfg->arch);
        }
        snprintf(d->arch_name, sizeof d->arch_name, "%s", cfg->arch);
    }
    d->cfg.arch = NULL;
    if (cfg && cfg->schedule && strcmp(cfg->schedule, "default") && strncmp(cfg->schedule, "random:", 7)) {
        free(d);
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "unknown schedule '%s' (use default or random:SEED)",
                          cfg->schedule);
    }
    d->cfg.schedule = NULL;
    if (cfg && cfg->schedule && !strncmp(cfg->schedule, "random:", 7)) {
        char *end;
        unsigned long long seed = strtoull(cfg->schedule + 7, &end, 0);
        if (!cfg->schedule[7] || *end) {
            free(d);
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "bad schedule seed in '%s'", cfg->schedule);
        }
        d->random_schedule = 1;
        d->schedule_seed = seed;
    }
    const char *limit = getenv("KEMU_STEP_LIMIT");
    if (limit && *limit) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(limit, &end, 0);
        if (*end || errno || limit[0] == '-') {
            free(d);
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                              "KEMU_STEP_LIMIT wants a number of warp-instructions (0: no limit), got '%s'", limit);
        }
        d->step_limit = n;
    }
    mem_space_init(&d->mem);
    exec_watchdog_init(&d->watchdog);
    *out = d;
    return KEMU_OK;
}

kemu_status kemu_device_set_step_limit(kemu_device *dev, uint64_t warp_instructions, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_set_step_limit: NULL device");
    dev->step_limit = warp_instructions;
    return KEMU_OK;
}

void exec_device_release_clusters(kemu_device *d)
{
    for (int i = 0; i < EXEC_CLUSTER_CACHE; i++) {
        vm_cluster *c = __atomic_exchange_n(&d->cluster_cache[i], NULL, __ATOMIC_ACQ_REL);
        if (c) {
            vm_cluster_free(c);
            free(c);
        }
    }
}

void kemu_device_destroy(kemu_device *d)
{
    if (!d)
        return;
    while (d->nmodules)
        kemu_module_unload(d->modules[d->nmodules - 1]);
    free(d->modules);
    for (int i = 0; i < d->nnatives; i++)
        free(d->natives[i].name);
    free(d->natives);
    exec_device_release_clusters(d);
    check_session_destroy(d->checks);
    exec_fidelity_free(d->fidelity);
    free(d->textures);
    free(d->peers);
    mem_space_destroy(&d->mem);
    exec_watchdog_destroy(&d->watchdog);
    free(d);
}

/* ---- native functions ------------------------------------------------------ */

static int device_has_native(void *ctx, const char *name)
{
    kemu_device *d = ctx;
    for (int i = 0; i < d->nnatives; i++)
        if (!strcmp(d->natives[i].name, name))
            return 1;
    return 0;
}

kemu_status kemu_device_bind_native(kemu_device *dev, const char *name, void (*fn)(void), kemu_error *err)
{
    if (!dev || !name || !fn)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_bind_native: NULL argument");
    for (int i = 0; i < dev->nnatives; i++)
        if (!strcmp(dev->natives[i].name, name)) {
            dev->natives[i].fn = fn;
            return KEMU_OK;
        }
    exec_native_binding *n = realloc(dev->natives, (size_t)(dev->nnatives + 1) * sizeof *n);
    if (!n)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    dev->natives = n;
    n[dev->nnatives].name = strdup(name);
    n[dev->nnatives].fn = fn;
    if (!n[dev->nnatives].name)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    dev->nnatives++;
    return KEMU_OK;
}

/* ---- modules ------------------------------------------------------------- */

static int module_uses_malloc(const bc_module *m)
{
    for (int i = 0; i < m->nfunctions; i++)
        if (m->functions[i]->builtin == BC_BUILTIN_MALLOC + 1 ||
            (m->functions[i]->builtin == BC_BUILTIN_DEVRT + 1 && m->functions[i]->devrt == BC_DEVRT_MALLOC))
            return 1;
    return 0;
}

kemu_status kemu_module_load_ptx(kemu_device *dev, const char *text, size_t len, const char *filename,
                                 kemu_module **out, kemu_error *err)
{
    if (!dev || !text || !out)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_module_load_ptx: NULL argument");
    kemu_module *mod = calloc(1, sizeof *mod);
    if (!mod)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    mod->dev = dev;
    kemu_status st = ptx_parse(text, len, filename ? filename : "<ptx>", &mod->ptx, err);
    if (st != KEMU_OK) {
        free(mod);
        return st;
    }
    st = bc_module_layout(mod->ptx, device_has_native, dev, &mod->bc, err);
    if (st != KEMU_OK)
        goto fail;
    if (mem_alloc(&dev->mem, mod->bc->global_size ? mod->bc->global_size : 1, 0, MEM_KIND_MODULE_GLOBALS,
                  &mod->globals)) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of device memory for module globals");
        goto fail;
    }
    st = bc_module_lower(mod->bc, mod->globals, err);
    if (st != KEMU_OK)
        goto fail;
    memcpy((void *)(uintptr_t)mod->globals, mod->bc->global_init, mod->bc->global_size);
    mod->const_bank = malloc(mod->bc->const_size ? mod->bc->const_size : 1);
    if (!mod->const_bank) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    memcpy(mod->const_bank, mod->bc->const_init, mod->bc->const_size);
    for (int i = 0; i < mod->bc->nfunctions; i++)
        if (mod->bc->functions[i]->is_entry)
            mod->nkernels++;
    mod->kernels = calloc((size_t)mod->nkernels + 1, sizeof *mod->kernels);
    int maxfile = 0;
    for (int i = 0; i < mod->ptx->nfiles; i++)
        if (mod->ptx->files[i].id > maxfile)
            maxfile = mod->ptx->files[i].id;
    mod->nloc_files = maxfile + 1;
    mod->loc_files = calloc((size_t)mod->nloc_files, sizeof *mod->loc_files);
    if (!mod->kernels || !mod->loc_files) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    for (int i = 0; i < mod->ptx->nfiles; i++)
        if (mod->ptx->files[i].id >= 0)
            mod->loc_files[mod->ptx->files[i].id] = mod->ptx->files[i].path;
    int k = 0;
    for (int i = 0; i < mod->bc->nfunctions; i++)
        if (mod->bc->functions[i]->is_entry)
            mod->kernels[k++] = (kemu_kernel){mod, mod->bc->functions[i]};
    mod->uses_malloc = module_uses_malloc(mod->bc);
    /* cudaGraphSetConditional needs no device runtime of its own (src/vm/devrt.c) */
    for (int i = 0; i < mod->bc->nfunctions; i++)
        if (mod->bc->functions[i]->builtin == BC_BUILTIN_DEVRT + 1 &&
            mod->bc->functions[i]->devrt != BC_DEVRT_GRAPH_SET_CONDITIONAL)
            mod->uses_devrt = 1;
    st = exec_natives_prepare(mod, err);
    if (st != KEMU_OK)
        goto fail;
    kemu_module **nm = realloc(dev->modules, (size_t)(dev->nmodules + 1) * sizeof *nm);
    if (!nm) {
        st = util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    dev->modules = nm;
    dev->modules[dev->nmodules++] = mod;
    *out = mod;
    return KEMU_OK;
fail:
    exec_natives_free(mod);
    if (mod->globals)
        mem_free(&dev->mem, mod->globals);
    bc_module_free(mod->bc);
    ptx_module_free(mod->ptx);
    free(mod->const_bank);
    free(mod->kernels);
    free(mod->loc_files);
    free(mod);
    return st;
}

kemu_status kemu_module_load_ptx_file(kemu_device *dev, const char *path, kemu_module **out, kemu_error *err)
{
    char *text;
    size_t len;
    kemu_status st = util_read_file(path, &text, &len, err);
    if (st != KEMU_OK)
        return st;
    st = kemu_module_load_ptx(dev, text, len, path, out, err);
    free(text);
    return st;
}

void kemu_module_unload(kemu_module *mod)
{
    if (!mod)
        return;
    kemu_device *dev = mod->dev;
    for (int i = 0; i < dev->nmodules; i++)
        if (dev->modules[i] == mod) {
            memmove(&dev->modules[i], &dev->modules[i + 1], (size_t)(dev->nmodules - i - 1) * sizeof *dev->modules);
            dev->nmodules--;
            break;
        }
    exec_natives_free(mod);
    mem_free(&dev->mem, mod->globals);
    bc_module_free(mod->bc);
    ptx_module_free(mod->ptx);
    free(mod->const_bank);
    free(mod->kernels);
    free(mod->loc_files);
    free(mod);
}

int kemu_module_kernel_count(const kemu_module *mod) { return mod ? mod->nkernels : 0; }

kemu_kernel *kemu_module_kernel_at(kemu_module *mod, int i)
{
    return mod && i >= 0 && i < mod->nkernels ? &mod->kernels[i] : NULL;
}

kemu_status kemu_module_get_kernel(kemu_module *mod, const char *name, kemu_kernel **out, kemu_error *err)
{
    for (int i = 0; mod && name && i < mod->nkernels; i++)
        if (!strcmp(mod->kernels[i].fn->name, name)) {
            *out = &mod->kernels[i];
            return KEMU_OK;
        }
    return util_error(err, KEMU_ERR_NOT_FOUND, "no kernel named '%s' in %s", name ? name : "(null)",
                      mod ? mod->ptx->filename : "(null)");
}

kemu_status kemu_module_get_global(kemu_module *mod, const char *name, uint64_t *address, size_t *size,
                                   kemu_error *err)
{
    for (int i = 0; mod && name && i < mod->bc->nsymbols; i++) {
        const bc_symbol *s = &mod->bc->symbols[i];
        if (strcmp(s->name, name))
            continue;
        if (s->space == BC_SPACE_GLOBAL)
            *address = s->address;
        else if (s->space == BC_SPACE_CONST)
            *address = (uint64_t)(uintptr_t)(mod->const_bank + s->address);
        else
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "'%s' is not a .global or .const variable", name);
        if (size)
            *size = (size_t)s->size;
        return KEMU_OK;
    }
    return util_error(err, KEMU_ERR_NOT_FOUND, "no variable named '%s'", name ? name : "(null)");
}

const char *kemu_kernel_name(const kemu_kernel *k) { return k ? k->fn->name : NULL; }
int kemu_kernel_param_count(const kemu_kernel *k) { return k ? k->fn->nparams : 0; }

kemu_status kemu_kernel_param(const kemu_kernel *k, int i, kemu_param_info *info)
{
    if (!k || !info || i < 0 || i >= k->fn->nparams)
        return KEMU_ERR_INVALID_ARGUMENT;
    const bc_param *p = &k->fn->params[i];
    info->name = p->name;
    info->type = ptx_type_name(p->type);
    info->size = (size_t)p->size;
    info->align = (size_t)p->align;
    info->offset = (size_t)p->offset;
    info->is_array = p->is_array;
    return KEMU_OK;
}

/* ---- memory ---------------------------------------------------------------- */

kemu_status kemu_malloc(kemu_device *dev, size_t size, kemu_uninit uninit, uint64_t *address, kemu_error *err)
{
    if (!dev || !address)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_malloc: NULL argument");
    int fill = uninit == KEMU_UNINIT_ZERO ? 0 : uninit == KEMU_UNINIT_PATTERN ? 0xcd : 0xff;
    if (mem_alloc(&dev->mem, size, fill, MEM_KIND_USER, address))
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of device memory allocating %zu bytes", size);
    if (dev->checks)
        check_note_alloc(dev->checks, &dev->mem, *address);
    return KEMU_OK;
}

kemu_status kemu_free(kemu_device *dev, uint64_t address, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_free: NULL device");
    const mem_allocation *a = mem_find_containing(&dev->mem, address);
    if (dev->checks)
        check_note_free(dev->checks, &dev->mem, address, "kemu_free");
    if (!a || a->base != address || a->kind != MEM_KIND_USER)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_free: 0x%llx is not the start of a live allocation", (unsigned long long)address);
    mem_free(&dev->mem, address);
    return KEMU_OK;
}

static kemu_status check_range(kemu_device *dev, uint64_t addr, size_t size, const char *what, kemu_error *err)
{
    if (size == 0)
        return KEMU_OK;
    if (!mem_find(&dev->mem, addr, size))
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "%s: [0x%llx, +%zu) is not inside one device allocation",
                          what, (unsigned long long)addr, size);
    return KEMU_OK;
}

static int is_const_bank(kemu_device *dev, uint64_t addr, size_t size)
{
    for (int i = 0; i < dev->nmodules; i++) {
        kemu_module *m = dev->modules[i];
        uint64_t base = (uint64_t)(uintptr_t)m->const_bank;
        if (addr >= base && addr + size <= base + m->bc->const_size)
            return 1;
    }
    return 0;
}

kemu_status kemu_memcpy_htod(kemu_device *dev, uint64_t dst, const void *src, size_t size, kemu_error *err)
{
    if (!is_const_bank(dev, dst, size)) {
        kemu_status st = check_range(dev, dst, size, "kemu_memcpy_htod", err);
        if (st)
            return st;
    }
    if (size)
        memcpy((void *)(uintptr_t)dst, src, size);
    if (dev->checks)
        check_note_host_write(dev->checks, &dev->mem, dst, size);
    return KEMU_OK;
}

kemu_status kemu_fill_uninit(kemu_device *dev, uint64_t dst, const void *src, size_t size, kemu_error *err)
{
    kemu_status st = check_range(dev, dst, size, "kemu_fill_uninit", err);
    if (st)
        return st;
    if (size)
        memcpy((void *)(uintptr_t)dst, src, size);
    return KEMU_OK;
}

kemu_status kemu_memcpy_dtoh(kemu_device *dev, void *dst, uint64_t src, size_t size, kemu_error *err)
{
    if (!is_const_bank(dev, src, size)) {
        kemu_status st = check_range(dev, src, size, "kemu_memcpy_dtoh", err);
        if (st)
            return st;
    }
    if (size)
        memcpy(dst, (const void *)(uintptr_t)src, size);
    return KEMU_OK;
}

kemu_status kemu_memcpy_dtod(kemu_device *dev, uint64_t dst, uint64_t src, size_t size, kemu_error *err)
{
    kemu_status st = check_range(dev, dst, size, "kemu_memcpy_dtod", err);
    if (!st)
        st = check_range(dev, src, size, "kemu_memcpy_dtod", err);
    if (st)
        return st;
    if (size)
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
    if (dev->checks)
        check_note_host_write(dev->checks, &dev->mem, dst, size);
    return KEMU_OK;
}

kemu_status kemu_memset(kemu_device *dev, uint64_t dst, int value, size_t size, kemu_error *err)
{
    kemu_status st = check_range(dev, dst, size, "kemu_memset", err);
    if (st)
        return st;
    if (size)
        memset((void *)(uintptr_t)dst, value, size);
    if (dev->checks)
        check_note_host_write(dev->checks, &dev->mem, dst, size);
    return KEMU_OK;
}

kemu_status kemu_note_host_write(kemu_device *dev, uint64_t address, size_t size, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_note_host_write: NULL device");
    kemu_status st = check_range(dev, address, size, "kemu_note_host_write", err);
    if (st)
        return st;
    if (dev->checks)
        check_note_host_write(dev->checks, &dev->mem, address, size);
    return KEMU_OK;
}

kemu_status kemu_note_host_read(kemu_device *dev, uint64_t address, size_t width, size_t height, size_t pitch,
                                const char *who, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_note_host_read: NULL device");
    if (!width || !height)
        return KEMU_OK;
    if (height > 1 && pitch < width)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_note_host_read: pitch %zu below width %zu", pitch,
                          width);
    kemu_status st = check_range(dev, address, (height - 1) * pitch + width, "kemu_note_host_read", err);
    if (st)
        return st;
    if (dev->checks)
        check_note_host_read(dev->checks, &dev->mem, address, width, height, pitch, who ? who : "host code");
    return KEMU_OK;
}

/* ---- several devices -------------------------------------------------------- */

kemu_status kemu_device_set_ordinal(kemu_device *dev, int ordinal, kemu_error *err)
{
    if (!dev || ordinal < 0 || ordinal >= KEMU_MAX_DEVICES)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_set_ordinal: ordinal %d is not in 0..%d",
                          ordinal, KEMU_MAX_DEVICES - 1);
    pthread_mutex_lock(&dev->mem.lock);
    int fresh = dev->mem.next_address == MEM_DEVICE_BASE + (uint64_t)dev->ordinal * MEM_DEVICE_STRIDE;
    if (fresh) {
        dev->ordinal = ordinal;
        dev->mem.next_address = MEM_DEVICE_BASE + (uint64_t)ordinal * MEM_DEVICE_STRIDE;
    }
    pthread_mutex_unlock(&dev->mem.lock);
    if (!fresh)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_device_set_ordinal: the device has allocated memory already");
    return KEMU_OK;
}

kemu_status kemu_device_set_peer_access(kemu_device *dev, kemu_device *peer, int access, kemu_error *err)
{
    if (!dev || !peer || dev == peer)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_set_peer_access: %s",
                          dev == peer && dev ? "a device is not its own peer" : "NULL device");
    for (int i = 0; i < dev->npeers; i++)
        if (dev->peers[i].dev == peer) {
            if (access < 0)
                dev->peers[i] = dev->peers[--dev->npeers];
            else
                dev->peers[i].access = access != 0;
            return KEMU_OK;
        }
    if (access < 0)
        return KEMU_OK;
    struct exec_peer *p = realloc(dev->peers, (size_t)(dev->npeers + 1) * sizeof *p);
    if (!p)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    dev->peers = p;
    p[dev->npeers++] = (struct exec_peer){peer, access != 0};
    return KEMU_OK;
}

kemu_status kemu_device_share_allocation(kemu_device *dev, uint64_t address, kemu_error *err)
{
    if (!dev)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_share_allocation: NULL device");
    pthread_mutex_lock(&dev->mem.lock);
    mem_allocation *a = (mem_allocation *)mem_find_containing(&dev->mem, address);
    if (a && a->base == address)
        a->shared = 1;
    pthread_mutex_unlock(&dev->mem.lock);
    if (!a || a->base != address)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_device_share_allocation: 0x%llx is not the start of a live allocation",
                          (unsigned long long)address);
    return KEMU_OK;
}

int exec_peer_find(void *ctx, uint64_t address, uint64_t size, mem_allocation *out, char *why, size_t n)
{
    kemu_device *dev = ctx;
    for (int i = 0; i < dev->npeers; i++) {
        kemu_device *p = dev->peers[i].dev;
        if (mem_find_copy(&p->mem, address, size, out))
            continue;
        if (dev->peers[i].access || out->shared)
            return 1;
        snprintf(why, n, "allocation #%llu of device %d (%llu bytes at 0x%llx), offset %llu; peer access from "
                 "device %d to device %d is not enabled", (unsigned long long)out->id, p->ordinal,
                 (unsigned long long)out->size, (unsigned long long)out->base,
                 (unsigned long long)(address - out->base), dev->ordinal, p->ordinal);
        return -1;
    }
    return 0;
}

/* ---- checkers -------------------------------------------------------------- */

void kemu_device_set_host_writes(kemu_device *dev, int may_write)
{
    if (dev)
        dev->host_may_write = may_write != 0;
}

void kemu_device_set_progress(kemu_device *dev, double interval)
{
    if (dev)
        dev->progress_interval = interval > 0 && interval < 1e9 ? interval : 0;
}

kemu_status kemu_device_set_checks(kemu_device *dev, const kemu_check_config *cfg, kemu_error *err)
{
    if (!dev || !cfg)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_device_set_checks: NULL argument");
    check_session_destroy(dev->checks);
    dev->checks = NULL;
    /* allocations made from now on keep their mapped granule to themselves */
    dev->mem.granule = check_mapped_granule(cfg->tools);
    if (!cfg->tools)
        return KEMU_OK;
    dev->checks = check_session_create(cfg);
    if (!dev->checks)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    return KEMU_OK;
}

kemu_status kemu_check_results(kemu_device *dev, int print_limit, kemu_check_summary *out, kemu_error *err)
{
    if (!dev || !out)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_check_results: NULL argument");
    memset(out, 0, sizeof *out);
    if (!dev->checks)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "no checkers are enabled on this device");
    check_note_leaks(dev->checks, &dev->mem);
    util_buffer text = {0}, json = {0};
    check_session_report(dev->checks, print_limit, &text, &json, &out->errors, &out->warnings);
    out->text = text.data;
    out->json = json.data;
    return KEMU_OK;
}

size_t exec_check_count(kemu_device *dev)
{
    return dev && dev->checks ? check_session_count(dev->checks) : 0;
}

kemu_status exec_check_snapshot(kemu_device *dev, int print_limit, kemu_check_summary *out, kemu_error *err)
{
    if (!dev || !out || !dev->checks)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "exec_check_snapshot: no checkers");
    memset(out, 0, sizeof *out);
    util_buffer text = {0}, json = {0};
    check_session_report(dev->checks, print_limit, &text, &json, &out->errors, &out->warnings);
    out->text = text.data;
    out->json = json.data;
    return KEMU_OK;
}

void kemu_check_summary_free(kemu_check_summary *s)
{
    if (!s)
        return;
    free(s->text);
    free(s->json);
    s->text = s->json = NULL;
}

/* ---- textures and surfaces ------------------------------------------------ */

/* Checks one level's extent against the device allocations and fills it
 * in; the caller names the level in the error. */
static int texture_level_fill(kemu_device *dev, vm_texture_level *lv, uint64_t address, unsigned width,
                              unsigned height, unsigned depth, size_t pitch, uint64_t elem)
{
    uint64_t p = pitch ? pitch : width * elem;
    uint64_t rows = height ? height : 1, slices = depth ? depth : 1;
    uint64_t extent = p * rows * (slices - 1) + p * (rows - 1) + width * elem;
    if (width == 0 || p < width * elem || !mem_find(&dev->mem, address, extent))
        return -1;
    lv->address = address;
    lv->width = width;
    lv->height = height;
    lv->depth = depth;
    lv->pitch = p;
    lv->slice = p * rows;
    return 0;
}

kemu_status kemu_texture_create(kemu_device *dev, const kemu_texture_desc *d, uint64_t *handle, kemu_error *err)
{
    if (!dev || !d || !handle)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_texture_create: NULL argument");
    if ((d->channels != 1 && d->channels != 2 && d->channels != 4) ||
        (d->channel_bits != 8 && d->channel_bits != 16 && d->channel_bits != 32) || d->width == 0 ||
        (d->channel_kind == KEMU_CHANNEL_FLOAT && d->channel_bits == 8))
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_texture_create: unsupported format (%d channels of %d bits, kind %d, width %u)",
                          d->channels, d->channel_bits, d->channel_kind, d->width);
    if (d->layout & ~(unsigned)(KEMU_TEXTURE_LAYERED | KEMU_TEXTURE_CUBEMAP) || d->num_levels < 0 ||
        d->num_levels > KEMU_TEXTURE_MAX_LEVELS)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_texture_create: layout 0x%x with %d levels",
                          d->layout, d->num_levels);
    if ((d->layout & KEMU_TEXTURE_LAYERED) && d->depth == 0)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_texture_create: a layered texture needs depth layers");
    if ((d->layout & KEMU_TEXTURE_CUBEMAP) &&
        (d->width != d->height || d->depth == 0 || d->depth % 6 ||
         (!(d->layout & KEMU_TEXTURE_LAYERED) && d->depth != 6)))
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_texture_create: a cubemap needs square faces and depth 6 (layered: a multiple of 6), "
                          "not %ux%ux%u", d->width, d->height, d->depth);
    uint64_t elem = (uint64_t)d->channels * (uint64_t)d->channel_bits / 8;
    vm_texture t;
    memset(&t, 0, sizeof t);
    if (texture_level_fill(dev, &t.level[0], d->address, d->width, d->height, d->depth, d->pitch, elem))
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "kemu_texture_create: [0x%llx, %ux%ux%u, pitch %zu) is not inside one device allocation",
                          (unsigned long long)d->address, d->width, d->height, d->depth, d->pitch);
    t.num_levels = d->num_levels > 1 ? d->num_levels : 1;
    for (int i = 1; i < t.num_levels; i++) {
        const kemu_texture_level *l = &d->levels[i - 1];
        if (texture_level_fill(dev, &t.level[i], l->address, l->width, l->height, l->depth, l->pitch, elem))
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                              "kemu_texture_create: mipmap level %d [0x%llx, %ux%ux%u) is not inside one device "
                              "allocation", i, (unsigned long long)l->address, l->width, l->height, l->depth);
    }
    vm_texture *n = realloc(dev->textures, (size_t)(dev->ntextures + 1) * sizeof *n);
    if (!n)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    dev->textures = n;
    t.live = 1;
    t.layout = d->layout;
    t.channels = d->channels;
    t.channel_bits = d->channel_bits;
    t.channel_kind = d->channel_kind;
    memcpy(t.address_mode, d->address_mode, sizeof t.address_mode);
    t.filter_mode = d->filter_mode;
    t.read_mode = d->read_mode;
    t.normalized_coords = d->normalized_coords;
    memcpy(t.border, d->border_color, sizeof t.border);
    t.mipmap_filter = d->mipmap_filter_mode;
    t.lod_bias = d->lod_bias;
    t.min_lod = d->min_lod;
    t.max_lod = d->max_lod;
    n[dev->ntextures++] = t;
    *handle = (uint64_t)dev->ntextures;
    return KEMU_OK;
}

kemu_status kemu_texture_destroy(kemu_device *dev, uint64_t handle, kemu_error *err)
{
    if (!dev || handle == 0 || handle > (uint64_t)dev->ntextures || !dev->textures[handle - 1].live)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_texture_destroy: 0x%llx is not a live texture object",
                          (unsigned long long)handle);
    dev->textures[handle - 1].live = 0;
    return KEMU_OK;
}
