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

#include "guarded.h"
#include "kemu/kemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int nul_terminate = -1;
    if (nul_terminate < 0) {
        const char *setting = getenv("KEMU_FUZZ_NUL_TERMINATE");
        nul_terminate = setting && strcmp(setting, "1") == 0;
    }
    fuzz_guarded buffer;
    if (fuzz_guarded_copy(&buffer, data, size, (size_t)nul_terminate))
        return 0;
    const char *text = buffer.data;

    kemu_device *device = NULL;
    kemu_error error;
    memset(&error, 0, sizeof error);
    if (kemu_device_create(NULL, &device, &error) != KEMU_OK) {
        fuzz_guarded_free(&buffer);
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
        fuzz_check_message(error.message, sizeof error.message);
    }
    kemu_device_destroy(device);
    fuzz_guarded_free(&buffer);
    return 0;
}
