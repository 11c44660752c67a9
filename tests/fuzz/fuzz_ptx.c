/* libFuzzer target for kemu's PTX front end: the lexer, the parser, the
 * module layout and the lowering to bytecode. Each input is handed to
 * kemu_module_load_ptx as PTX text (not NUL-terminated, so reads past the
 * end are caught by AddressSanitizer); a module that loads is unloaded
 * again. Nothing is launched. A crash, a sanitizer report, a hang or a leak
 * on any input is a bug in the library, since bad PTX must only ever return
 * an error status. Built and run by tests/fuzz/run.sh. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kemu/kemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy: the fuzzer's own buffer may be followed by
     * readable bytes, a malloc'd one is followed by an ASan redzone. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);

    kemu_device *device = NULL;
    kemu_error error;
    memset(&error, 0, sizeof error);
    if (kemu_device_create(NULL, &device, &error) != KEMU_OK) {
        free(text);
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
    free(text);
    return 0;
}
