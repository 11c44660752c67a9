/* libFuzzer target for kemu's PTX front end: the lexer, the parser, the
 * module layout and the lowering to bytecode. Each input is handed to
 * kemu_module_load_ptx as PTX text that is not NUL-terminated and ends
 * right before an inaccessible page, so that any read past the end faults
 * at once, also from uninstrumented libc code such as sscanf or strtod
 * (AddressSanitizer alone misses those). With KEMU_FUZZ_NUL_TERMINATE=1 in
 * the environment a NUL byte follows the text instead (not counted in the
 * length), to keep fuzzing past a known over-read. A module that loads is
 * unloaded again. Nothing is launched. A crash, a sanitizer report, a hang or a leak
 * on any input is a bug in the library, since bad PTX must only ever return
 * an error status. Built and run by tests/fuzz/run.sh. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kemu/kemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Maps size bytes (rounded up to pages) plus one PROT_NONE guard page and
 * returns where a buffer of `size` bytes must start to end at the guard.
 * *mapping and *mapping_size receive what to munmap. NULL on failure. */
static char *map_guarded(size_t size, void **mapping, size_t *mapping_size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (size + page - 1) / page;
    if (data_pages == 0)
        data_pages = 1;
    size_t total = (data_pages + 1) * page;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (mprotect(base + data_pages * page, page, PROT_NONE) != 0) {
        munmap(base, total);
        return NULL;
    }
    *mapping = base;
    *mapping_size = total;
    return base + data_pages * page - size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int nul_terminate = -1;
    if (nul_terminate < 0) {
        const char *setting = getenv("KEMU_FUZZ_NUL_TERMINATE");
        nul_terminate = setting && strcmp(setting, "1") == 0;
    }
    void *mapping = NULL;
    size_t mapping_size = 0;
    char *text = map_guarded(size + (size_t)nul_terminate, &mapping, &mapping_size);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    if (nul_terminate)
        text[size] = 0;

    kemu_device *device = NULL;
    kemu_error error;
    memset(&error, 0, sizeof error);
    if (kemu_device_create(NULL, &device, &error) != KEMU_OK) {
        munmap(mapping, mapping_size);
        return 0;
    }
    kemu_module *module = NULL;
    kemu_status status = kemu_module_load_ptx(device, text, size, "fuzz.ptx", &module, &error);
    if (status == KEMU_OK) {
        /* Walk what the loader produced so inconsistent tables show up. */
        int kernel_count = kemu_module_kernel_count(module);
        for (int i = 0; i < kernel_count; i++) {
            kemu_kernel *kernel = kemu_module_kernel_at(module, i);
            if (!kernel)
                continue;
            const char *name = kemu_kernel_name(kernel);
            kemu_kernel *again = NULL;
            if (name)
                (void)kemu_module_get_kernel(module, name, &again, &error);
            int param_count = kemu_kernel_param_count(kernel);
            for (int p = 0; p < param_count; p++) {
                kemu_param_info info;
                (void)kemu_kernel_param(kernel, p, &info);
            }
        }
        kemu_module_unload(module);
    } else {
        /* An error must come with a terminated, non-empty message. */
        size_t message_length = strnlen(error.message, sizeof error.message);
        if (message_length == 0 || message_length == sizeof error.message)
            __builtin_trap();
    }
    kemu_device_destroy(device);
    munmap(mapping, mapping_size);
    return 0;
}
