/* Registration and loading of a CUDA program's device code in kemu's
 * libcudart replacement: the hooks that nvcc's host code calls from its
 * constructors (__cudaRegisterFatBinary, __cudaRegisterFunction,
 * __cudaRegisterVar, __cudaRegisterManagedVar ...), and the lazy loading of
 * the PTX found in each fatbinary (one module per translation unit; the
 * units of a -rdc=true program are linked into one by ptxlink.c) on the
 * emulated device, at first use. */
#include "config.h"
#include "cudart/runtime.h"
#include "cudart/fatbin.h"
#include "cudart/ptxlink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- registration ---------------------------------------------------------- */

/* Whether a container is libcudadevrt's, which an -rdc program's wrapper
 * also lists: its PTX (the device runtime, whose kernels nvcc names after
 * cuda_device_runtime.cu) is for the newest SM the toolkit knows and must
 * not choose the emulated GPU. */
static int container_is_device_runtime(const cudart_fatbin_entry *entries, int count)
{
    char *ptx = NULL;
    char msg[256];
    if (cudart_fatbin_extract_ptx(entries, count, ~0u, &ptx, NULL, msg, sizeof msg))
        return 0;
    int is = strstr(ptx, "_cuda_device_runtime_cu_") != NULL;
    free(ptx);
    return is;
}

/* The highest SM of any PTX in a registered fatbin (0 if none), leaving out
 * libcudadevrt's container when the program has PTX of its own. */
static unsigned fatbin_max_ptx_sm(const void *wrapper)
{
    int n = 0;
    unsigned best = 0, best_kernels = 0;
    cudart_fatbin_from_wrapper(wrapper, NULL, 0, &n, NULL, 0);
    const void **containers = calloc((size_t)(n > 0 ? n : 1), sizeof *containers);
    if (!containers || cudart_fatbin_from_wrapper(wrapper, containers, n, &n, NULL, 0)) {
        free(containers);
        return 0;
    }
    for (int c = 0; c < n; c++) {
        int count = 0;
        cudart_fatbin_parse(containers[c], 0, NULL, 0, &count, NULL, 0);
        if (count <= 0)
            continue;
        cudart_fatbin_entry *entries = calloc((size_t)count, sizeof *entries);
        if (!entries)
            continue;
        if (!cudart_fatbin_parse(containers[c], 0, entries, count, &count, NULL, 0)) {
            unsigned here = 0;
            for (int i = 0; i < count; i++)
                if (entries[i].kind == CUDART_FATBIN_KIND_PTX && entries[i].sm > here &&
                    !(entries[i].flags & (CUDART_FATBIN_FLAG_ARCH_SPECIFIC | CUDART_FATBIN_FLAG_FAMILY_SPECIFIC)))
                    here = entries[i].sm;
            if (here > best)
                best = here;
            if (here > best_kernels && (n == 1 || !container_is_device_runtime(entries, count)))
                best_kernels = here;
        }
        free(entries);
    }
    free(containers);
    return best_kernels ? best_kernels : best;
}


static cudart_fatbin_record *fatbin_of(void **handle)
{
    cudart_state *s = &cudart_global;
    for (int i = 0; i < s->nfatbins; i++)
        if ((void **)s->fatbins[i] == handle)
            return s->fatbins[i];
    return NULL;
}

CUDART_API void **__cudaRegisterFatBinary(void *wrapper)
{
    cudart_lock();
    cudart_state *s = &cudart_global;
    cudart_fatbin_record *fb = calloc(1, sizeof *fb);
    if (fb && s->nfatbins == s->capfatbins) {
        int cap = s->capfatbins ? s->capfatbins * 2 : 16;
        cudart_fatbin_record **grown = realloc(s->fatbins, (size_t)cap * sizeof *grown);
        if (grown) {
            s->fatbins = grown;
            s->capfatbins = cap;
        }
    }
    if (!fb || s->nfatbins == s->capfatbins) {
        free(fb);
        cudart_unlock();
        fprintf(stderr, "kemu: out of memory registering a fatbinary\n");
        return NULL;
    }
    fb->wrapper = wrapper;
    fb->index = s->nfatbins;
    fb->max_ptx_sm = fatbin_max_ptx_sm(wrapper);
    s->fatbins[s->nfatbins++] = fb;
    cudart_trace("__cudaRegisterFatBinary(%p) -> module %d (highest PTX: compute_%u)", wrapper, fb->index,
                 fb->max_ptx_sm);
    cudart_unlock();
    return (void **)fb;
}

CUDART_API void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle; /* the PTX is loaded at its first use */
}

static void unbind_variables(cudart_fatbin_record *fb);

cudart_fatbin_on *cudart_fatbin_here(cudart_fatbin_record *fb)
{
    return &fb->on[cudart_current()];
}

/* Unloads fb from every device. */
static void fatbin_unload(cudart_fatbin_record *fb)
{
    int current = cudart_current();
    for (int d = 0; d < CUDART_MAX_DEVICES; d++) {
        cudart_fatbin_on *l = &fb->on[d];
        if (cudart_global.devs[d].device) {
            cudart_set_current(d);
            unbind_variables(fb);
            for (int i = 0; i < l->nmodules; i++)
                if (l->modules[i])
                    kemu_module_unload(l->modules[i]);
        }
        free(l->modules);
        free(l->load_message);
        memset(l, 0, sizeof *l);
    }
    cudart_set_current(current);
}

/* Removes a fatbin's entries from a registration map; with free_records,
 * also frees the records (each once: under its primary key). */
static void forget_records_of(cudart_ptrmap *m, cudart_fatbin_record *fb, int kernels, int free_records)
{
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        void *v = m->values[i];
        cudart_fatbin_record *owner = kernels ? ((cudart_kernel_record *)v)->fatbin : ((cudart_var_record *)v)->fatbin;
        if (owner != fb)
            continue;
        const void *key = m->keys[i];
        int primary = kernels ? key == ((cudart_kernel_record *)v)->host_function
                              : key == ((cudart_var_record *)v)->host_variable;
        cudart_ptrmap_remove(m, key);
        if (primary && free_records) {
            free(kernels ? ((cudart_kernel_record *)v)->name : ((cudart_var_record *)v)->name);
            free(v);
        }
        i = (size_t)-1; /* the table moved entries: start over */
    }
}

CUDART_API void __cudaUnregisterFatBinary(void **handle)
{
    cudart_lock();
    cudart_state *s = &cudart_global;
    cudart_fatbin_record *fb = fatbin_of(handle);
    if (fb) {
        cudart_synchronize();
        /* kernel records are also stored under their own address */
        for (size_t i = 0; i < s->kernels.cap; i++) {
            cudart_kernel_record *kr = s->kernels.keys[i] ? s->kernels.values[i] : NULL;
            if (kr && kr->fatbin == fb && s->kernels.keys[i] == kr) {
                cudart_ptrmap_remove(&s->kernels, kr);
                i = (size_t)-1;
            }
        }
        cudart_wait_idle(~0u);
        fatbin_unload(fb);
        forget_records_of(&s->kernels, fb, 1, 1);
        forget_records_of(&s->managed_slots, fb, 0, 0);
        forget_records_of(&s->vars, fb, 0, 1);
        for (int i = 0; i < s->nfatbins; i++)
            if (s->fatbins[i] == fb) {
                memmove(&s->fatbins[i], &s->fatbins[i + 1], (size_t)(s->nfatbins - i - 1) * sizeof *s->fatbins);
                s->nfatbins--;
                break;
            }
        free(fb);
    }
    cudart_unlock();
}

CUDART_API void __cudaRegisterFunction(void **handle, const char *host_function, char *device_function,
                                       const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                                       dim3 *block_dim, dim3 *grid_dim, int *warp_size)
{
    (void)device_function, (void)thread_limit, (void)tid, (void)bid, (void)block_dim, (void)grid_dim,
        (void)warp_size;
    cudart_lock();
    cudart_fatbin_record *fb = fatbin_of(handle);
    cudart_kernel_record *kr = calloc(1, sizeof *kr);
    char *name = device_name ? strdup(device_name) : NULL;
    if (!fb || !kr || !name) {
        free(kr);
        free(name);
        cudart_unlock();
        return;
    }
    kr->host_function = host_function;
    kr->name = name;
    kr->fatbin = fb;
    kr->max_dynamic_shared = -1;
    kr->carveout = -1;
    cudart_kernel_record *old = cudart_ptrmap_get(&cudart_global.kernels, host_function);
    if (old) { /* registered twice (a library loaded twice): keep the first */
        free(kr->name);
        free(kr);
    } else {
        cudart_ptrmap_put(&cudart_global.kernels, host_function, kr);
        cudart_ptrmap_put(&cudart_global.kernels, kr, kr);
        cudart_trace("__cudaRegisterFunction(%p, %s)", (const void *)host_function, device_name);
    }
    cudart_unlock();
}

static void register_variable(void **handle, const void *host, const char *name, size_t size, int constant,
                              int managed)
{
    cudart_lock();
    cudart_fatbin_record *fb = fatbin_of(handle);
    cudart_var_record *vr = calloc(1, sizeof *vr);
    char *copy = name ? strdup(name) : NULL;
    if (!fb || !vr || !copy || cudart_ptrmap_get(&cudart_global.vars, host)) {
        free(vr);
        free(copy);
        cudart_unlock();
        return;
    }
    vr->host_variable = host;
    vr->name = copy;
    vr->size = size;
    vr->constant = constant;
    vr->managed = managed;
    vr->fatbin = fb;
    cudart_ptrmap_put(&cudart_global.vars, host, vr);
    if (managed)
        cudart_ptrmap_put(&cudart_global.managed_slots, host, vr);
    cudart_trace("__cudaRegisterVar(%p, %s, %zu bytes%s%s)", host, name, size, constant ? ", constant" : "",
                 managed ? ", managed" : "");
    cudart_unlock();
}

CUDART_API void __cudaRegisterVar(void **handle, char *host_variable, char *device_address, const char *device_name,
                                  int ext, size_t size, int constant, int global)
{
    (void)device_address, (void)ext, (void)global;
    register_variable(handle, host_variable, device_name, size, constant, 0);
}

CUDART_API void __cudaRegisterManagedVar(void **handle, void **host_pointer_slot, char *device_address,
                                         const char *device_name, int ext, size_t size, int constant, int global)
{
    (void)device_address, (void)ext, (void)global;
    register_variable(handle, host_pointer_slot, device_name, size, constant, 1);
}

CUDART_API char __cudaInitModule(void **handle)
{
    cudart_lock();
    cudart_fatbin_record *fb = fatbin_of(handle);
    cudaError_t e = fb ? cudart_fatbin_load(fb) : cudaErrorInvalidResourceHandle;
    cudart_unlock();
    return e == cudaSuccess;
}

/* ---- loading the PTX --------------------------------------------------------- */

static void load_failed(cudart_fatbin_record *fb, cudaError_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void load_failed(cudart_fatbin_record *fb, cudaError_t code, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cudart_fatbin_on *l = cudart_fatbin_here(fb);
    l->state = -1;
    l->load_error = code;
    free(l->load_message);
    l->load_message = strdup(msg);
    fprintf(stderr, "kemu: %s\n", msg);
    fflush(stderr);
}

void cudart_dump_ptx(const char *name, const char *ptx, size_t len)
{
    const char *dir = cudart_global.dump_ptx_dir;
    if (!dir[0])
        return;
    mkdir(dir, 0777);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kemu: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fwrite(ptx, 1, len, f);
    fclose(f);
    fprintf(stderr, "kemu: wrote %s\n", path);
}

/* Enters the registered variables of a freshly loaded fatbin in the memory
 * table (so that copies through their addresses are device copies), and
 * points the host's pointer slots of __managed__ variables at their storage. */
static void bind_variables(cudart_fatbin_record *fb)
{
    cudart_ptrmap *m = &cudart_global.vars;
    for (size_t i = 0; i < m->cap; i++) {
        cudart_var_record *vr = m->keys[i] ? m->values[i] : NULL;
        if (!vr || vr->fatbin != fb)
            continue;
        cudart_fatbin_on *l = cudart_fatbin_here(fb);
        for (int j = 0; j < l->nmodules; j++) {
            uint64_t address;
            size_t size;
            if (kemu_module_get_global(l->modules[j], vr->name, &address, &size, NULL))
                continue;
            /* several devices: a __managed__ variable is the storage of the
             * first device that loaded its module */
            if (vr->managed && (cudart_current() == 0 || !*(void **)vr->host_variable))
                *(void **)vr->host_variable = (void *)(uintptr_t)address;
            if (size && !cudart_allocation_find(address, 1))
                cudart_allocation_add(address, size, CUDART_MEM_SYMBOL);
            break;
        }
    }
}

/* Forgets the memory-table entries of a fatbin's variables. */
static void unbind_variables(cudart_fatbin_record *fb)
{
    cudart_ptrmap *m = &cudart_global.vars;
    for (size_t i = 0; i < m->cap; i++) {
        cudart_var_record *vr = m->keys[i] ? m->values[i] : NULL;
        if (!vr || vr->fatbin != fb)
            continue;
        cudart_fatbin_on *l = cudart_fatbin_here(fb);
        for (int j = 0; j < l->nmodules; j++) {
            uint64_t address;
            size_t size;
            if (!kemu_module_get_global(l->modules[j], vr->name, &address, &size, NULL)) {
                const cudart_allocation *a = cudart_allocation_find(address, 1);
                if (a && a->base == address && a->kind == CUDART_MEM_SYMBOL)
                    cudart_allocation_remove(address);
                break;
            }
        }
    }
}

/* Loads one PTX text as a module of fb. Returns 0, or -1 after load_failed. */
static int load_module(cudart_fatbin_record *fb, kemu_device *dev, char *ptx, const char *name, unsigned sm)
{
    size_t len = strlen(ptx);
    cudart_dump_ptx(name, ptx, len);
    kemu_module *mod = NULL;
    kemu_error kerr;
    memset(&kerr, 0, sizeof kerr);
    kemu_status st = kemu_module_load_ptx(dev, ptx, len, name, &mod, &kerr);
    if (st) {
        char *nl = kerr.message + strlen(kerr.message);
        while (nl > kerr.message && nl[-1] == '\n')
            *--nl = 0;
        load_failed(fb, st == KEMU_ERR_PARSE ? cudaErrorInvalidPtx : cudart_error_from_status(st),
                    "cannot load the PTX of module %d (%s): %s%s", fb->index, name, kerr.message,
                    cudart_global.dump_ptx_dir[0] ? "" : "\nkemu: (KEMU_DUMP_PTX=DIR writes the PTX to DIR)");
        return -1;
    }
    cudart_fatbin_on *l = cudart_fatbin_here(fb);
    kemu_module **grown = realloc(l->modules, (size_t)(l->nmodules + 1) * sizeof *grown);
    if (!grown) {
        kemu_module_unload(mod);
        load_failed(fb, cudaErrorMemoryAllocation, "out of memory loading module %d", fb->index);
        return -1;
    }
    l->modules = grown;
    l->modules[l->nmodules++] = mod;
    if (sm > fb->ptx_sm)
        fb->ptx_sm = sm;
    cudart_trace("loaded %s", name);
    return 0;
}

cudaError_t cudart_fatbin_load(cudart_fatbin_record *fb)
{
    cudart_fatbin_on *l = cudart_fatbin_here(fb);
    if (l->state == 1)
        return cudaSuccess;
    if (l->state == -1)
        return l->load_error;
    kemu_device *dev;
    cudaError_t e = cudart_device(&dev);
    if (e)
        return e;
    int ncontainers = 0;
    char msg[2048] = "";
    /* a -rdc=true program lists one container per translation unit */
    cudart_fatbin_from_wrapper(fb->wrapper, NULL, 0, &ncontainers, NULL, 0);
    const void **containers = calloc((size_t)(ncontainers > 0 ? ncontainers : 1), sizeof *containers);
    char **texts = calloc((size_t)(ncontainers > 0 ? ncontainers : 1), sizeof *texts);
    unsigned *sms = calloc((size_t)(ncontainers > 0 ? ncontainers : 1), sizeof *sms);
    if (!containers || !texts || !sms) {
        free(containers);
        free(texts);
        free(sms);
        load_failed(fb, cudaErrorMemoryAllocation, "out of memory loading module %d", fb->index);
        return l->load_error;
    }
    if (cudart_fatbin_from_wrapper(fb->wrapper, containers, ncontainers, &ncontainers, msg, sizeof msg)) {
        free(containers);
        free(texts);
        free(sms);
        load_failed(fb, cudaErrorInvalidKernelImage, "cannot read the fatbinary of module %d: %s", fb->index, msg);
        return l->load_error;
    }
    /* the PTX of every container: one for a translation unit, several
     * (one per unit) for the device-linked program of -rdc=true */
    unsigned best_sm = 0;
    int ntexts = 0;
    char first_failure[2048] = "";
    for (int c = 0; c < ncontainers; c++) {
        int count = 0;
        cudart_fatbin_parse(containers[c], 0, NULL, 0, &count, NULL, 0);
        if (count <= 0)
            continue;
        cudart_fatbin_entry *entries = calloc((size_t)count, sizeof *entries);
        if (!entries)
            continue;
        char *ptx = NULL;
        unsigned sm = 0;
        if (cudart_fatbin_parse(containers[c], 0, entries, count, &count, msg, sizeof msg) ||
            cudart_fatbin_extract_ptx(entries, count, cudart_global.device_sm, &ptx, &sm, msg, sizeof msg)) {
            /* -rdc=true programs also list libcudadevrt's container, whose
             * PTX is for a newer SM: only fail if no container has PTX */
            if (!first_failure[0])
                snprintf(first_failure, sizeof first_failure, "%s", msg);
            free(entries);
            continue;
        }
        free(entries);
        texts[ntexts] = ptx;
        sms[ntexts++] = sm;
        if (sm > best_sm)
            best_sm = sm;
    }
    int failed = 0;
    if (ntexts == 1) {
        char name[128];
        snprintf(name, sizeof name, "module%d.compute_%u.ptx", fb->index, sms[0]);
        failed = load_module(fb, dev, texts[0], name, sms[0]);
    } else if (ntexts > 1) {
        char *linked = NULL;
        size_t len = 0;
        char name[128];
        snprintf(name, sizeof name, "module%d.linked.compute_%u.ptx", fb->index, best_sm);
        if (cudart_ptx_link((const char *const *)texts, ntexts, &linked, &len, msg, sizeof msg)) {
            load_failed(fb, cudaErrorInvalidPtx, "cannot link the PTX of the %d translation units of module %d: %s",
                        ntexts, fb->index, msg);
            failed = 1;
        } else {
            failed = load_module(fb, dev, linked, name, best_sm);
            free(linked);
        }
    }
    for (int i = 0; i < ntexts; i++)
        free(texts[i]);
    free(texts);
    free(sms);
    free(containers);
    if (failed) {
        for (int i = 0; i < l->nmodules; i++)
            kemu_module_unload(l->modules[i]);
        l->nmodules = 0;
        return l->load_error;
    }
    if (l->nmodules == 0) {
        int empty = !first_failure[0];
        load_failed(fb, cudaErrorNoKernelImageForDevice, "module %d: %s", fb->index,
                    empty ? "the fatbinary holds no device code" : first_failure);
        return l->load_error;
    }
    l->state = 1;
    bind_variables(fb);
    return cudaSuccess;
}

cudart_kernel_record *cudart_find_kernel(const void *host_function)
{
    return cudart_ptrmap_get(&cudart_global.kernels, host_function);
}

cudaError_t cudart_kernel_resolve(cudart_kernel_record *kr)
{
    int d = cudart_current();
    if (kr->kernels[d])
        return cudaSuccess;
    if (!kr->fatbin->wrapper) /* a driver module's function, launched on another device than its context's */
        return cudaErrorInvalidResourceHandle;
    cudaError_t e = cudart_fatbin_load(kr->fatbin);
    if (e)
        return e;
    cudart_fatbin_on *l = cudart_fatbin_here(kr->fatbin);
    for (int i = 0; i < l->nmodules; i++)
        if (!kemu_module_get_kernel(l->modules[i], kr->name, &kr->kernels[d], NULL)) {
            if (!kr->kernel)
                kr->kernel = kr->kernels[d];
            return cudaSuccess;
        }
    fprintf(stderr, "kemu: kernel '%s' is registered but module %d's PTX does not define it\n", kr->name,
            kr->fatbin->index);
    return cudaErrorInvalidDeviceFunction;
}

