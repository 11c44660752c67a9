/* kemu's CUDA driver API, part 2: modules and libraries (PTX text, a
 * fatbinary holding PTX, or what kemu's cuLinkComplete made), the linker
 * (cuLink* over PTX inputs, through the runtime's PTX linker ptxlink.c),
 * functions and kernels and their attributes, launches (cuLaunchKernel,
 * cuLaunchKernelEx with clusters and the cooperative attribute,
 * cuLaunchCooperativeKernel) and occupancy. A module is a fatbin record
 * of the runtime, loaded already, and a function is a runtime kernel record
 * (registered under its own address), so launches, faults, printf and the
 * checkers take the runtime's path. */
#include "config.h"
#include "cudart/driver.h"
#include "cudart/fatbin.h"
#include "cudart/ptxlink.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MODULE_MAGIC 0x4b4d4f44u /* "KMOD" */
#define LINK_MAGIC 0x4b4c4e4bu   /* "KLNK" */

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev); /* driver.c */

static cudart_ptrmap modules; /* live modules and libraries (handle -> handle) */
static int module_counter;

/* ---- logs -------------------------------------------------------------------------- */

/* The JIT options of a load or link that carry logs. */
typedef struct jit_logs {
    char *info, *error;
    size_t info_size, error_size;
    void **info_size_slot, **error_size_slot; /* where the written sizes go back */
} jit_logs;

enum {
    JIT_INFO_LOG_BUFFER = 3,
    JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    JIT_ERROR_LOG_BUFFER = 5,
    JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

static void read_logs(jit_logs *l, unsigned n, const int *options, void **values)
{
    memset(l, 0, sizeof *l);
    if (!options || !values)
        return;
    for (unsigned i = 0; i < n; i++)
        switch (options[i]) {
        case JIT_INFO_LOG_BUFFER:
            l->info = values[i];
            break;
        case JIT_INFO_LOG_BUFFER_SIZE_BYTES:
            l->info_size = (size_t)(uintptr_t)values[i];
            l->info_size_slot = &values[i];
            break;
        case JIT_ERROR_LOG_BUFFER:
            l->error = values[i];
            break;
        case JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            l->error_size = (size_t)(uintptr_t)values[i];
            l->error_size_slot = &values[i];
            break;
        default:
            break;
        }
    if (l->info && l->info_size)
        l->info[0] = 0;
    if (l->error && l->error_size)
        l->error[0] = 0;
    if (l->info_size_slot)
        *l->info_size_slot = (void *)(uintptr_t)0;
    if (l->error_size_slot)
        *l->error_size_slot = (void *)(uintptr_t)0;
}

/* Prints a load or link error to stderr ("kemu: ...") and into the error
 * log buffer the caller gave, if any. */
static void log_error(const jit_logs *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_error(const jit_logs *l, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kemu: %s\n", msg);
    fflush(stderr);
    if (l && l->error && l->error_size) {
        snprintf(l->error, l->error_size, "%s", msg);
        if (l->error_size_slot)
            *l->error_size_slot = (void *)(uintptr_t)(strlen(l->error) + 1);
    }
}

/* ---- images --------------------------------------------------------------------------- */

static int is_elf(const void *image)
{
    return !memcmp(image, "\x7f" "ELF", 4);
}

static uint32_t read32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The SM of a cubin (e_flags of CUDA's ELF), for the refusal message. */
static unsigned cubin_sm(const void *image)
{
    const unsigned char *p = image;
    if (p[4] != 2) /* ELFCLASS64 */
        return 0;
    uint32_t flags = read32(p + 48);
    unsigned sm = (flags >> 8) & 0xff; /* CUDA 12+ layout */
    if (!sm)
        sm = flags & 0xff;
    return sm;
}

/* The PTX text of a fatbin container (malloc'd), or NULL after logging. */
static char *ptx_of_container(const void *container, const jit_logs *logs, const char *what, CUresult *r)
{
    int count = 0;
    char msg[2048];
    if (cudart_fatbin_parse(container, 0, NULL, 0, &count, msg, sizeof msg) && count <= 0) {
        log_error(logs, "%s: not a fatbinary kemu can read: %s", what, msg);
        *r = CUDA_ERROR_INVALID_IMAGE;
        return NULL;
    }
    cudart_fatbin_entry *entries = calloc((size_t)(count > 0 ? count : 1), sizeof *entries);
    char *ptx = NULL;
    unsigned sm = 0;
    if (!entries) {
        *r = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    if (cudart_fatbin_parse(container, 0, entries, count, &count, msg, sizeof msg)) {
        log_error(logs, "%s: not a fatbinary kemu can read: %s", what, msg);
        *r = CUDA_ERROR_INVALID_IMAGE;
    } else if (cudart_fatbin_extract_ptx(entries, count, cudart_global.device_sm, &ptx, &sm, msg, sizeof msg)) {
        log_error(logs, "%s: %s", what, msg);
        *r = CUDA_ERROR_NO_BINARY_FOR_GPU;
        ptx = NULL;
    }
    free(entries);
    return ptx;
}

/* The PTX text of an image given to cuModuleLoadData or cuLinkAddData:
 * PTX itself, a fatbin container or an nvcc fatbin wrapper (malloc'd).
 * A cubin is refused: kemu runs PTX. NULL after logging. */
static char *ptx_of_image(const void *image, size_t size, const jit_logs *logs, const char *what, CUresult *r)
{
    *r = CUDA_SUCCESS;
    if (!image) {
        *r = CUDA_ERROR_INVALID_VALUE;
        return NULL;
    }
    /* a cubin and a fatbinary start with 4 non-zero bytes: anything shorter
     * is (bad) text, and is not read past its end */
    int short_text = strnlen(image, 4) < 4;
    if (!short_text && is_elf(image)) {
        unsigned sm = cubin_sm(image);
        char smtext[32] = "";
        if (sm)
            snprintf(smtext, sizeof smtext, " for sm_%u", sm);
        log_error(logs,
                  "%s: the image is a cubin (SASS%s) without PTX; kemu runs PTX, so load the PTX instead (nvcc -ptx, "
                  "or a fatbinary holding it: nvcc -fatbin -gencode arch=compute_XX,code=compute_XX)",
                  what, smtext);
        *r = CUDA_ERROR_NO_BINARY_FOR_GPU;
        return NULL;
    }
    uint32_t magic = short_text ? 0 : read32(image);
    if (magic == CUDART_FATBIN_MAGIC)
        return ptx_of_container(image, logs, what, r);
    if (magic == CUDART_FATBIN_WRAPPER_MAGIC) {
        const void *containers[64];
        int n = 0;
        char msg[1024];
        if (cudart_fatbin_from_wrapper(image, containers, 64, &n, msg, sizeof msg) || n < 1) {
            log_error(logs, "%s: not a fatbinary kemu can read: %s", what, msg);
            *r = CUDA_ERROR_INVALID_IMAGE;
            return NULL;
        }
        return ptx_of_container(containers[0], logs, what, r);
    }
    /* PTX text: NUL-terminated, or `size` bytes when the caller gave it */
    size_t len = size ? strnlen(image, size) : strlen(image);
    char *text = malloc(len + 1);
    if (!text) {
        *r = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    memcpy(text, image, len);
    text[len] = 0;
    if (!strstr(text, ".version") || !strstr(text, ".target")) {
        log_error(logs, "%s: the image is neither PTX (no .version/.target) nor a fatbinary nor a cubin", what);
        free(text);
        *r = CUDA_ERROR_INVALID_IMAGE;
        return NULL;
    }
    return text;
}

/* Loads an image as a module (or library). Locked inside. */
static CUresult load_image(struct drv_module **out, const void *image, size_t size, unsigned nopts,
                           const int *options, void **values, int is_library, const char *what)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    jit_logs logs;
    read_logs(&logs, nopts, options, values);
    cudart_lock();
    kemu_device *dev;
    cudaError_t e = cudart_device(&dev);
    if (e) {
        cudart_unlock();
        return drv_error(e);
    }
    char *ptx = ptx_of_image(image, size, &logs, what, &r);
    if (!ptx) {
        cudart_unlock();
        return r;
    }
    struct drv_module *m = calloc(1, sizeof *m);
    kemu_module **mods = calloc(1, sizeof *mods);
    if (!m || !mods) {
        free(m);
        free(mods);
        free(ptx);
        cudart_unlock();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int index = module_counter++;
    char name[64];
    snprintf(name, sizeof name, "drv%d.ptx", index);
    cudart_dump_ptx(name, ptx, strlen(ptx));
    kemu_error kerr;
    memset(&kerr, 0, sizeof kerr);
    kemu_status st = kemu_module_load_ptx(dev, ptx, strlen(ptx), name, &mods[0], &kerr);
    free(ptx);
    if (st) {
        char *nl = kerr.message + strlen(kerr.message);
        while (nl > kerr.message && nl[-1] == '\n')
            *--nl = 0;
        log_error(&logs, "%s: cannot load the PTX (%s): %s", what, name, kerr.message);
        free(m);
        free(mods);
        cudart_unlock();
        return st == KEMU_ERR_PARSE ? CUDA_ERROR_INVALID_PTX : drv_error(cudart_error_from_status(st));
    }
    m->magic = MODULE_MAGIC;
    m->is_library = is_library;
    m->fb.index = 1000 + index;
    m->device = cudart_current();
    m->fb.on[m->device].state = 1;
    m->fb.on[m->device].modules = mods;
    m->fb.on[m->device].nmodules = 1;
    m->fb.ptx_sm = cudart_global.device_sm;
    cudart_ptrmap_put(&modules, m, m);
    cudart_trace("%s -> module %s", what, name);
    cudart_unlock();
    *out = m;
    return CUDA_SUCCESS;
}

static struct drv_module *module_of(CUmodule h)
{
    struct drv_module *m = cudart_ptrmap_get(&modules, h);
    return m && m->magic == MODULE_MAGIC ? m : NULL;
}

static CUresult read_file(const char *path, char **data, size_t *size)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return path ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    fclose(f);
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY;
    buf[n] = 0;
    *data = buf;
    *size = n;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int nopts, int *options,
                                       void **values)
{
    return load_image(module, image, 0, nopts, options, values, 0, "cuModuleLoadDataEx");
}

DRIVER_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return load_image(module, image, 0, 0, NULL, NULL, 0, "cuModuleLoadData");
}

DRIVER_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *image)
{
    return load_image(module, image, 0, 0, NULL, NULL, 0, "cuModuleLoadFatBinary");
}

DRIVER_API CUresult cuModuleLoad(CUmodule *module, const char *path)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    char *data;
    size_t size;
    if ((r = read_file(path, &data, &size))) {
        if (r == CUDA_ERROR_FILE_NOT_FOUND)
            fprintf(stderr, "kemu: cuModuleLoad: cannot read %s: %s\n", path, strerror(errno));
        return r;
    }
    char what[512];
    snprintf(what, sizeof what, "cuModuleLoad(%s)", path);
    r = load_image(module, data, size, 0, NULL, NULL, 0, what);
    free(data);
    return r;
}

/* Forgets a module's functions and globals and unloads it. Locked. */
static void unload(struct drv_module *m)
{
    for (int i = 0; i < m->nfunctions; i++) {
        cudart_kernel_record *kr = m->functions[i];
        cudart_ptrmap_remove(&cudart_global.kernels, kr);
        free(kr->name);
        free(kr);
    }
    for (int i = 0; i < m->nglobals; i++) {
        const cudart_allocation *a = cudart_allocation_find(m->globals[i], 1);
        if (a && a->base == m->globals[i] && a->kind == CUDART_MEM_SYMBOL)
            cudart_allocation_remove(m->globals[i]);
    }
    for (int i = 0; i < m->fb.on[m->device].nmodules; i++)
        kemu_module_unload(m->fb.on[m->device].modules[i]);
    cudart_ptrmap_remove(&modules, m);
    free(m->functions);
    free(m->globals);
    free(m->fb.on[m->device].modules);
    m->magic = 0;
    free(m);
}

void drv_forget_modules(void)
{
    /* those of the current device, which is being reset */
    for (;;) {
        struct drv_module *m = NULL;
        for (size_t i = 0; i < modules.cap && !m; i++)
            if (modules.keys[i] && ((struct drv_module *)modules.values[i])->device == cudart_current())
                m = modules.values[i];
        if (!m)
            break;
        unload(m);
    }
}

static CUresult unload_handle(CUmodule module)
{
    CUresult r = drv_check_init();
    if (r)
        return r;
    cudart_lock();
    struct drv_module *m = module_of(module);
    if (m)
        unload(m);
    cudart_unlock();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuModuleUnload(CUmodule module)
{
    return unload_handle(module);
}

/* The function record of `name` in m, made on first request. Locked. */
static CUresult function_of(struct drv_module *m, const char *name, cudart_kernel_record **out)
{
    for (int i = 0; i < m->nfunctions; i++)
        if (!strcmp(m->functions[i]->name, name)) {
            *out = m->functions[i];
            return CUDA_SUCCESS;
        }
    kemu_kernel *k = NULL;
    if (kemu_module_get_kernel(m->fb.on[m->device].modules[0], name, &k, NULL))
        return CUDA_ERROR_NOT_FOUND;
    if (m->nfunctions == m->capfunctions) {
        int cap = m->capfunctions ? m->capfunctions * 2 : 8;
        cudart_kernel_record **grown = realloc(m->functions, (size_t)cap * sizeof *grown);
        if (!grown)
            return CUDA_ERROR_OUT_OF_MEMORY;
        m->functions = grown;
        m->capfunctions = cap;
    }
    cudart_kernel_record *kr = calloc(1, sizeof *kr);
    char *copy = strdup(name);
    if (!kr || !copy || cudart_ptrmap_put(&cudart_global.kernels, kr, kr)) {
        free(kr);
        free(copy);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    kr->host_function = kr;
    kr->name = copy;
    kr->fatbin = &m->fb;
    kr->kernel = k;
    kr->kernels[m->device] = k;
    kr->max_dynamic_shared = -1;
    kr->carveout = -1;
    m->functions[m->nfunctions++] = kr;
    *out = kr;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!function || !name)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    struct drv_module *m = module_of(module);
    r = m ? function_of(m, name, function) : CUDA_ERROR_INVALID_HANDLE;
    cudart_unlock();
    return r;
}

static CUresult global_of(struct drv_module *m, const char *name, CUdeviceptr *dptr, size_t *bytes)
{
    uint64_t address;
    size_t size;
    if (kemu_module_get_global(m->fb.on[m->device].modules[0], name, &address, &size, NULL))
        return CUDA_ERROR_NOT_FOUND;
    if (size && !cudart_allocation_find(address, 1)) {
        /* enter it in the memory table, so copies to it are device copies */
        if (m->nglobals == m->capglobals) {
            int cap = m->capglobals ? m->capglobals * 2 : 8;
            uint64_t *grown = realloc(m->globals, (size_t)cap * sizeof *grown);
            if (!grown)
                return CUDA_ERROR_OUT_OF_MEMORY;
            m->globals = grown;
            m->capglobals = cap;
        }
        if (cudart_allocation_add(address, size, CUDART_MEM_SYMBOL))
            return CUDA_ERROR_OUT_OF_MEMORY;
        m->globals[m->nglobals++] = address;
    }
    if (dptr)
        *dptr = address;
    if (bytes)
        *bytes = size;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule module, const char *name)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    struct drv_module *m = module_of(module);
    r = m ? global_of(m, name, dptr, bytes) : CUDA_ERROR_INVALID_HANDLE;
    cudart_unlock();
    return r;
}

DRIVER_API CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule module)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    struct drv_module *m = module_of(module);
    if (m)
        *count = (unsigned)kemu_module_kernel_count(m->fb.on[m->device].modules[0]);
    cudart_unlock();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuModuleGetLoadingMode(int *mode)
{
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = 2; /* CU_MODULE_EAGER_LOADING */
    return CUDA_SUCCESS;
}

/* ---- libraries (context-independent modules) ------------------------------------------ */

DRIVER_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, int *jit_options, void **jit_values,
                                      unsigned int njit, int *lib_options, void **lib_values, unsigned int nlib)
{
    (void)lib_options, (void)lib_values, (void)nlib;
    return load_image(library, code, 0, njit, jit_options, jit_values, 1, "cuLibraryLoadData");
}

DRIVER_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *path, int *jit_options, void **jit_values,
                                          unsigned int njit, int *lib_options, void **lib_values, unsigned int nlib)
{
    (void)lib_options, (void)lib_values, (void)nlib;
    CUresult r = drv_check_context();
    if (r)
        return r;
    char *data;
    size_t size;
    if ((r = read_file(path, &data, &size)))
        return r;
    r = load_image(library, data, size, njit, jit_options, jit_values, 1, "cuLibraryLoadFromFile");
    free(data);
    return r;
}

DRIVER_API CUresult cuLibraryUnload(CUlibrary library)
{
    return unload_handle(library);
}

DRIVER_API CUresult cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    return cuModuleGetFunction(kernel, library, name);
}

DRIVER_API CUresult cuLibraryGetModule(CUmodule *module, CUlibrary library)
{
    CUresult r = drv_check_init();
    if (r)
        return r;
    if (!module)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    struct drv_module *m = module_of(library);
    cudart_unlock();
    *module = m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    return cuModuleGetGlobal_v2(dptr, bytes, library, name);
}

DRIVER_API CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    return cuModuleGetGlobal_v2(dptr, bytes, library, name);
}

DRIVER_API CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary library)
{
    return cuModuleGetFunctionCount(count, library);
}

DRIVER_API CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int n, CUlibrary library)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!kernels)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    struct drv_module *m = module_of(library);
    r = m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    int count = m ? kemu_module_kernel_count(m->fb.on[m->device].modules[0]) : 0;
    for (int i = 0; i < count && (unsigned)i < n && !r; i++) {
        kemu_kernel *k = kemu_module_kernel_at(m->fb.on[m->device].modules[0], i);
        r = k ? function_of(m, kemu_kernel_name(k), &kernels[i]) : CUDA_ERROR_INVALID_VALUE;
    }
    cudart_unlock();
    return r;
}

DRIVER_API CUresult cuKernelGetFunction(CUfunction *function, CUkernel kernel)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!function)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(kernel);
    cudart_unlock();
    *function = kr;
    return kr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- functions --------------------------------------------------------------------------- */

cudart_kernel_record *drv_function(CUfunction f)
{
    cudart_kernel_record *kr = f ? cudart_find_kernel(f) : NULL;
    return kr == f ? kr : NULL; /* a function handle, not a host stub */
}

enum {
    FA_MAX_THREADS = 0, FA_SHARED, FA_CONST, FA_LOCAL, FA_NUM_REGS, FA_PTX_VERSION, FA_BINARY_VERSION,
    FA_CACHE_MODE_CA, FA_MAX_DYNAMIC_SHARED, FA_CARVEOUT, FA_CLUSTER_MUST_BE_SET, FA_CLUSTER_W, FA_CLUSTER_H,
    FA_CLUSTER_D, FA_NON_PORTABLE_CLUSTER, FA_CLUSTER_POLICY
};

DRIVER_API CUresult cuFuncGetAttribute(int *value, int attribute, CUfunction f)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    struct cudaFuncAttributes a;
    cudaError_t saved = drv_rt_save();
    if ((r = drv_rt_done(saved, cudaFuncGetAttributes(&a, kr))))
        return r;
    switch (attribute) {
    case FA_MAX_THREADS: *value = a.maxThreadsPerBlock; break;
    case FA_SHARED: *value = (int)a.sharedSizeBytes; break;
    case FA_CONST: *value = (int)a.constSizeBytes; break;
    case FA_LOCAL: *value = (int)a.localSizeBytes; break;
    case FA_NUM_REGS: *value = a.numRegs; break;
    case FA_PTX_VERSION: *value = a.ptxVersion; break;
    case FA_BINARY_VERSION: *value = a.binaryVersion; break;
    case FA_CACHE_MODE_CA: *value = a.cacheModeCA; break;
    case FA_MAX_DYNAMIC_SHARED: *value = a.maxDynamicSharedSizeBytes; break;
    case FA_CARVEOUT: *value = a.preferredShmemCarveout; break;
    case FA_CLUSTER_MUST_BE_SET: *value = a.clusterDimMustBeSet; break;
    case FA_CLUSTER_W: *value = a.requiredClusterWidth; break;
    case FA_CLUSTER_H: *value = a.requiredClusterHeight; break;
    case FA_CLUSTER_D: *value = a.requiredClusterDepth; break;
    case FA_NON_PORTABLE_CLUSTER: *value = a.nonPortableClusterSizeAllowed; break;
    case FA_CLUSTER_POLICY: *value = a.clusterSchedulingPolicyPreference; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuFuncSetAttribute(CUfunction f, int attribute, int value)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaFuncSetAttribute(kr, attribute, value));
}

DRIVER_API CUresult cuFuncSetCacheConfig(CUfunction f, int config)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    return config >= 0 && config <= 3 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

DRIVER_API CUresult cuFuncSetSharedMemConfig(CUfunction f, int config)
{
    return cuFuncSetCacheConfig(f, config);
}

DRIVER_API CUresult cuFuncGetName(const char **name, CUfunction f)
{
    CUresult r = drv_check_init();
    if (r)
        return r;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    *name = kr ? kr->name : NULL;
    return kr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuFuncGetModule(CUmodule *module, CUfunction f)
{
    CUresult r = drv_check_init();
    if (r)
        return r;
    if (!module)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    struct drv_module *m = NULL;
    for (size_t i = 0; kr && i < modules.cap && !m; i++) {
        struct drv_module *c = modules.keys[i] ? modules.values[i] : NULL;
        if (c && &c->fb == kr->fatbin)
            m = c;
    }
    cudart_unlock();
    *module = m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
    CUresult r = drv_check_init();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    kemu_param_info info;
    int ok = kr && kr->kernel && index < (size_t)kemu_kernel_param_count(kr->kernel) &&
             !kemu_kernel_param(kr->kernel, (int)index, &info);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = info.offset;
    if (size)
        *size = info.size;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuFuncIsLoaded(int *state, CUfunction f)
{
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    *state = 1; /* CU_FUNCTION_LOADING_STATE_LOADED */
    return kr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

DRIVER_API CUresult cuFuncLoad(CUfunction f)
{
    int state;
    return cuFuncIsLoaded(&state, f);
}

DRIVER_API CUresult cuKernelGetAttribute(int *value, int attribute, CUkernel kernel, CUdevice dev)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    return cuFuncGetAttribute(value, attribute, kernel);
}

DRIVER_API CUresult cuKernelSetAttribute(int attribute, int value, CUkernel kernel, CUdevice dev)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    return cuFuncSetAttribute(kernel, attribute, value);
}

DRIVER_API CUresult cuKernelSetCacheConfig(CUkernel kernel, int config, CUdevice dev)
{
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    return cuFuncSetCacheConfig(kernel, config);
}

DRIVER_API CUresult cuKernelGetName(const char **name, CUkernel kernel)
{
    return cuFuncGetName(name, kernel);
}

DRIVER_API CUresult cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size)
{
    return cuFuncGetParamInfo(kernel, index, offset, size);
}

DRIVER_API CUresult cuKernelGetLibrary(CUlibrary *library, CUkernel kernel)
{
    return cuFuncGetModule(library, kernel);
}

/* ---- launches ------------------------------------------------------------------------------ */

#define LAUNCH_PARAM_END ((void *)0x00)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define LAUNCH_PARAM_END_AS_INT ((void *)0x03)

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream stream, void **params, void **extra, const unsigned *cluster,
                       int cooperative)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    void **args = params;
    void *local_args[64];
    void **heap_args = NULL;
    if (!params && extra) { /* one buffer, laid out as the kernel's parameters */
        char *buffer = NULL;
        size_t size = 0;
        for (int i = 0; extra[i] != LAUNCH_PARAM_END && extra[i] != LAUNCH_PARAM_END_AS_INT; i += 2) {
            if (extra[i] == LAUNCH_PARAM_BUFFER_POINTER)
                buffer = extra[i + 1];
            else if (extra[i] == LAUNCH_PARAM_BUFFER_SIZE)
                size = *(size_t *)extra[i + 1];
            else
                return CUDA_ERROR_INVALID_VALUE;
        }
        int n = kemu_kernel_param_count(kr->kernel);
        if (!buffer && n > 0)
            return CUDA_ERROR_INVALID_VALUE;
        args = n <= 64 ? local_args : (heap_args = calloc((size_t)n, sizeof *heap_args));
        if (!args)
            return CUDA_ERROR_OUT_OF_MEMORY;
        for (int i = 0; i < n; i++) {
            kemu_param_info info;
            if (kemu_kernel_param(kr->kernel, i, &info) || info.offset + info.size > size) {
                free(heap_args);
                return CUDA_ERROR_INVALID_VALUE;
            }
            args[i] = buffer + info.offset;
        }
    } else if (params && extra) {
        return CUDA_ERROR_INVALID_VALUE;
    } else if (!params && kemu_kernel_param_count(kr->kernel) > 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    dim3 grid = {gx, gy, gz}, block = {bx, by, bz};
    cudaError_t saved = drv_rt_save();
    r = drv_rt_done(saved, cudart_launch(kr, grid, block, args, shared, stream, cluster, cooperative));
    free(heap_args);
    return r;
}

DRIVER_API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                                   void **params, void **extra)
{
    return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, NULL, 0);
}
DRIVER_ALIAS(cuLaunchKernel_ptsz, cuLaunchKernel)

DRIVER_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                              unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                              CUstream stream, void **params)
{
    return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, NULL, NULL, 1);
}
DRIVER_ALIAS(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel)

/* CUlaunchConfig (cuda.h of CUDA 13.0); its attributes are laid out as
 * the runtime's cudaLaunchAttribute. */
typedef struct drv_launch_config {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    cudaLaunchAttribute *attrs;
    unsigned numAttrs;
} drv_launch_config;

_Static_assert(sizeof(drv_launch_config) == 56, "CUlaunchConfig");

enum { LA_COOPERATIVE = 2, LA_CLUSTER_DIMENSION = 4 };

DRIVER_API CUresult cuLaunchKernelEx(const drv_launch_config *config, CUfunction f, void **params, void **extra)
{
    if (!config || (config->numAttrs && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned cluster[3] = {0, 0, 0};
    int has_cluster = 0, cooperative = 0;
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == LA_COOPERATIVE)
            cooperative = a->val.cooperative != 0;
        else if (a->id == LA_CLUSTER_DIMENSION) {
            cluster[0] = a->val.clusterDim.x;
            cluster[1] = a->val.clusterDim.y;
            cluster[2] = a->val.clusterDim.z;
            has_cluster = 1;
        }
    }
    return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                  config->blockDimZ, config->sharedMemBytes, config->hStream, params, extra,
                  has_cluster ? cluster : NULL, cooperative);
}
DRIVER_ALIAS(cuLaunchKernelEx_ptsz, cuLaunchKernelEx)

/* ---- occupancy ------------------------------------------------------------------------------- */

DRIVER_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *blocks, CUfunction f, int block_size,
                                                                         size_t dynamic_shared, unsigned int flags)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved,
                       cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, kr, block_size, dynamic_shared,
                                                                              flags));
}

DRIVER_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f, int block_size,
                                                                size_t dynamic_shared)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, f, block_size, dynamic_shared, 0);
}

typedef size_t (*block_to_shared_fn)(int block_size);

DRIVER_API CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block_size, CUfunction f,
                                                              block_to_shared_fn to_shared, size_t dynamic_shared,
                                                              int limit, unsigned int flags)
{
    if (!min_grid || !block_size)
        return CUDA_ERROR_INVALID_VALUE;
    int max_threads = 0, sm_count = 0;
    CUresult r = cuFuncGetAttribute(&max_threads, FA_MAX_THREADS, f);
    if (r)
        return r;
    if ((r = cuDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0)))
        return r;
    if (limit > 0 && limit < max_threads)
        max_threads = limit;
    int best_threads = 0, best_size = 0, best_blocks = 0;
    for (int size = (max_threads / 32) * 32; size > 0; size -= 32) {
        int blocks = 0;
        size_t shared = to_shared ? to_shared(size) : dynamic_shared;
        if (cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, f, size, shared, flags))
            continue;
        if (blocks * size > best_threads) {
            best_threads = blocks * size;
            best_size = size;
            best_blocks = blocks;
        }
    }
    *block_size = best_size;
    *min_grid = best_blocks * sm_count;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block_size, CUfunction f,
                                                     block_to_shared_fn to_shared, size_t dynamic_shared, int limit)
{
    return cuOccupancyMaxPotentialBlockSizeWithFlags(min_grid, block_size, f, to_shared, dynamic_shared, limit, 0);
}

DRIVER_API CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamic_shared, CUfunction f, int blocks,
                                                            int block_size)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    cudart_lock();
    cudart_kernel_record *kr = drv_function(f);
    cudart_unlock();
    if (!kr)
        return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t saved = drv_rt_save();
    return drv_rt_done(saved, cudaOccupancyAvailableDynamicSMemPerBlock(dynamic_shared, kr, blocks, block_size));
}

/* ---- the linker ------------------------------------------------------------------------------ */

struct drv_link {
    unsigned magic;
    char **texts;
    int ntexts, captexts;
    char *linked;
    size_t linked_len;
    jit_logs logs;
};

enum { INPUT_CUBIN = 0, INPUT_PTX, INPUT_FATBINARY, INPUT_OBJECT, INPUT_LIBRARY, INPUT_NVVM };

static cudart_ptrmap links;

DRIVER_API CUresult cuLinkCreate_v2(unsigned int nopts, int *options, void **values, CUlinkState *state)
{
    CUresult r = drv_check_context();
    if (r)
        return r;
    if (!state)
        return CUDA_ERROR_INVALID_VALUE;
    struct drv_link *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = LINK_MAGIC;
    read_logs(&l->logs, nopts, options, values);
    cudart_lock();
    int failed = cudart_ptrmap_put(&links, l, l);
    cudart_unlock();
    if (failed) {
        free(l);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *state = l;
    return CUDA_SUCCESS;
}
DRIVER_ALIAS(cuLinkCreate, cuLinkCreate_v2)

static struct drv_link *link_of(CUlinkState state)
{
    cudart_lock();
    struct drv_link *l = cudart_ptrmap_get(&links, state);
    cudart_unlock();
    return l && l->magic == LINK_MAGIC ? l : NULL;
}

static CUresult add_input(struct drv_link *l, int type, const void *data, size_t size, const char *name)
{
    char what[600];
    snprintf(what, sizeof what, "cuLinkAdd%s(%s)", "Data", name && *name ? name : "unnamed input");
    CUresult r;
    switch (type) {
    case INPUT_PTX:
    case INPUT_FATBINARY:
    case INPUT_CUBIN:
        break;
    case INPUT_LIBRARY:
        if (name && strstr(name, "cudadevrt")) {
            /* libcudadevrt's SASS objects: what PTX needs of it (grid sync,
             * device-side launch stubs) kemu provides itself */
            cudart_trace("%s: skipped (libcudadevrt)", what);
            return CUDA_SUCCESS;
        }
        /* fall through */
    case INPUT_OBJECT:
        log_error(&l->logs, "%s: host objects and libraries hold SASS; kemu links PTX inputs only", what);
        return CUDA_ERROR_NOT_SUPPORTED;
    case INPUT_NVVM:
        log_error(&l->logs, "%s: NVVM IR (LTO) inputs are not supported; kemu links PTX inputs only", what);
        return CUDA_ERROR_NOT_SUPPORTED;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    char *ptx = ptx_of_image(data, type == INPUT_PTX ? size : 0, &l->logs, what, &r);
    if (!ptx)
        return r;
    if (l->ntexts == l->captexts) {
        int cap = l->captexts ? l->captexts * 2 : 4;
        char **grown = realloc(l->texts, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(ptx);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        l->texts = grown;
        l->captexts = cap;
    }
    l->texts[l->ntexts++] = ptx;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuLinkAddData_v2(CUlinkState state, int type, void *data, size_t size, const char *name,
                                     unsigned int nopts, int *options, void **values)
{
    (void)nopts, (void)options, (void)values;
    struct drv_link *l = link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    return add_input(l, type, data, size, name);
}
DRIVER_ALIAS(cuLinkAddData, cuLinkAddData_v2)

DRIVER_API CUresult cuLinkAddFile_v2(CUlinkState state, int type, const char *path, unsigned int nopts, int *options,
                                     void **values)
{
    (void)nopts, (void)options, (void)values;
    struct drv_link *l = link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    if (type == INPUT_LIBRARY && path && strstr(path, "cudadevrt"))
        return add_input(l, type, "", 0, path);
    char *data;
    size_t size;
    CUresult r = read_file(path, &data, &size);
    if (r) {
        log_error(&l->logs, "cuLinkAddFile: cannot read %s", path ? path : "(null)");
        return r;
    }
    r = add_input(l, type, data, size, path);
    free(data);
    return r;
}
DRIVER_ALIAS(cuLinkAddFile, cuLinkAddFile_v2)

DRIVER_API CUresult cuLinkComplete(CUlinkState state, void **image, size_t *size)
{
    struct drv_link *l = link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!image || !size)
        return CUDA_ERROR_INVALID_VALUE;
    if (!l->ntexts) {
        log_error(&l->logs, "cuLinkComplete: nothing to link");
        return CUDA_ERROR_INVALID_VALUE;
    }
    free(l->linked);
    l->linked = NULL;
    if (l->ntexts == 1) {
        l->linked = strdup(l->texts[0]);
        if (!l->linked)
            return CUDA_ERROR_OUT_OF_MEMORY;
        l->linked_len = strlen(l->linked);
    } else {
        char msg[2048];
        if (cudart_ptx_link((const char *const *)l->texts, l->ntexts, &l->linked, &l->linked_len, msg, sizeof msg)) {
            log_error(&l->logs, "cuLinkComplete: cannot link the %d PTX inputs: %s", l->ntexts, msg);
            l->linked = NULL;
            return CUDA_ERROR_INVALID_PTX;
        }
    }
    if (l->logs.info && l->logs.info_size) {
        snprintf(l->logs.info, l->logs.info_size, "kemu: linked %d PTX input%s", l->ntexts,
                 l->ntexts == 1 ? "" : "s");
        if (l->logs.info_size_slot)
            *l->logs.info_size_slot = (void *)(uintptr_t)(strlen(l->logs.info) + 1);
    }
    /* kemu's "cubin" is the linked PTX text, which cuModuleLoadData takes */
    *image = l->linked;
    *size = l->linked_len + 1;
    return CUDA_SUCCESS;
}

DRIVER_API CUresult cuLinkDestroy(CUlinkState state)
{
    struct drv_link *l = link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    cudart_lock();
    cudart_ptrmap_remove(&links, l);
    cudart_unlock();
    for (int i = 0; i < l->ntexts; i++)
        free(l->texts[i]);
    free(l->texts);
    free(l->linked);
    l->magic = 0;
    free(l);
    return CUDA_SUCCESS;
}
