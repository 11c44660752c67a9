/* libFuzzer target that runs fuzzed PTX, not only loads it: each input is
 * two bytes of launch settings followed by PTX text, which is loaded
 * (lexer, parser, layout, lowering, as fuzz_ptx.c does) and then every
 * kernel it holds (up to four) is launched on a small grid with arguments
 * made up from its parameter list, under the checkers the settings choose.
 *
 * The settings, so that a seed can choose them with two printable bytes:
 *   byte 0  bits 0-3  tools: memcheck, racecheck, initcheck, synccheck
 *           bit 4     random schedule (seed: byte 1)
 *           bits 5-6  fill of fresh memory: nan, zero, pattern (3: nan)
 *           bit 7     memcheck's leak check
 *   byte 1  bit 0     two blocks instead of one
 *           bits 1-3  threads per block: 1 2 32 33 64 96 128 256
 *           bit 4     1 KiB of dynamic shared memory
 *           bits 5-6  what a 4-byte parameter holds: 0, 1, 16, 0xffffffff
 *           bit 7     a pointer parameter points 8 bytes before its buffer's end
 *                     instead of at its start
 * Pointer-sized parameters (8 bytes) point into one 64 KiB device buffer
 * (filled with the settings' fill); other parameters hold small values.
 *
 * Launches are bounded by steps, not time: kemu_device_set_step_limit
 * faults a block after STEP_LIMIT warp-instructions, so a kernel that
 * never ends stops at the same place on every run. Bad PTX must only ever
 * return an error, and a kernel only ever fault with a message; a crash, a
 * sanitizer report, a hang (over 10 s), a leak or an allocation over 2 GB is
 * a bug. Built and run by tests/fuzz/run.sh (FUZZ_TARGETS=launch); seeds
 * tests/fuzz/corpus-launch/, reproducers tests/fuzz/regressions-launch/. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guarded.h"
#include "kemu/kemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
    STEP_LIMIT = 20000,        /* warp-instructions per block */
    MAX_KERNELS = 4,
    BUFFER_BYTES = 64 * 1024,
    MAX_PARAM_BYTES = 4096     /* larger parameter lists are not launched */
};

static void launch_kernel(kemu_kernel *kernel, uint64_t buffer, unsigned config)
{
    static const unsigned block_sizes[8] = {1, 2, 32, 33, 64, 96, 128, 256};
    static const uint32_t word_values[4] = {0, 1, 16, 0xffffffffu};
    int count = kemu_kernel_param_count(kernel);
    if (count < 0 || count > 64)
        return;
    size_t total = 0;
    kemu_param_info infos[64];
    for (int p = 0; p < count; p++) {
        if (kemu_kernel_param(kernel, p, &infos[p]) != KEMU_OK)
            __builtin_trap();
        total += infos[p].size;
    }
    if (total > MAX_PARAM_BYTES)
        return;
    unsigned char *values = calloc(1, total + 1);
    void *args[64];
    if (!values)
        return;
    uint64_t pointer = buffer + ((config >> 15) & 1 ? BUFFER_BYTES - 8 : 0);
    uint32_t word = word_values[(config >> 13) & 3];
    size_t at = 0;
    for (int p = 0; p < count; p++) {
        args[p] = values + at;
        if (infos[p].size == 8 && !infos[p].is_array)
            memcpy(values + at, &pointer, 8);
        else if (infos[p].size == 4 && !infos[p].is_array)
            memcpy(values + at, &word, 4);
        else if (infos[p].size)
            memset(values + at, (int)(word & 0xff), infos[p].size);
        at += infos[p].size;
    }
    kemu_launch_config launch;
    memset(&launch, 0, sizeof launch);
    launch.grid[0] = (config >> 8) & 1 ? 2 : 1;
    launch.block[0] = block_sizes[(config >> 9) & 7];
    launch.shared_bytes = (config >> 12) & 1 ? 1024 : 0;
    kemu_report report;
    memset(&report, 0, sizeof report);
    kemu_error error;
    memset(&error, 0, sizeof error);
    kemu_status status = kemu_launch(kernel, &launch, args, &report, &error);
    if (status != KEMU_OK) {
        fuzz_check_message(error.message, sizeof error.message);
        if (status == KEMU_ERR_KERNEL_FAULT && !report.faulted)
            __builtin_trap();
    }
    if (report.printf_length && !report.printf_output)
        __builtin_trap();
    kemu_report_free(&report);
    free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned config = data[0] | (unsigned)data[1] << 8;
    data += 2;
    size -= 2;
    fuzz_guarded text;
    if (fuzz_guarded_copy(&text, data, size, 0))
        return 0;

    static const kemu_uninit fills[4] = {KEMU_UNINIT_NAN, KEMU_UNINIT_ZERO, KEMU_UNINIT_PATTERN, KEMU_UNINIT_NAN};
    char schedule[32];
    snprintf(schedule, sizeof schedule, "random:%u", config >> 8);
    kemu_device_config device_config;
    memset(&device_config, 0, sizeof device_config);
    device_config.threads = 1;
    device_config.schedule = config & 0x10 ? schedule : NULL;
    device_config.uninit = fills[(config >> 5) & 3];
    kemu_device *device = NULL;
    kemu_error error;
    memset(&error, 0, sizeof error);
    if (kemu_device_create(&device_config, &device, &error) != KEMU_OK) {
        fuzz_guarded_free(&text);
        return 0;
    }
    if (kemu_device_set_step_limit(device, STEP_LIMIT, &error) != KEMU_OK)
        __builtin_trap();
    unsigned tools = config & 0xf;
    if (tools) {
        kemu_check_config checks;
        memset(&checks, 0, sizeof checks);
        checks.tools = tools;
        checks.racecheck_warp = KEMU_CHECK_WARN;
        checks.racecheck_benign = KEMU_CHECK_WARN;
        checks.leak_check = (config >> 7) & 1;
        if (kemu_device_set_checks(device, &checks, &error) != KEMU_OK)
            fuzz_check_message(error.message, sizeof error.message);
    }
    kemu_module *module = NULL;
    if (kemu_module_load_ptx(device, text.data, size, "fuzz.ptx", &module, &error) == KEMU_OK) {
        uint64_t buffer = 0;
        if (kemu_malloc(device, BUFFER_BYTES, device_config.uninit, &buffer, &error) == KEMU_OK) {
            int kernel_count = kemu_module_kernel_count(module);
            for (int i = 0; i < kernel_count && i < MAX_KERNELS; i++) {
                kemu_kernel *kernel = kemu_module_kernel_at(module, i);
                if (!kernel)
                    __builtin_trap();
                launch_kernel(kernel, buffer, config);
            }
            (void)kemu_free(device, buffer, &error);
        }
        if (tools) {
            kemu_check_summary summary;
            if (kemu_check_results(device, 0, &summary, &error) == KEMU_OK) {
                if (!summary.text)
                    __builtin_trap();
                kemu_check_summary_free(&summary);
            } else {
                fuzz_check_message(error.message, sizeof error.message);
            }
        }
        kemu_module_unload(module);
    } else {
        fuzz_check_message(error.message, sizeof error.message);
    }
    kemu_device_destroy(device);
    fuzz_guarded_free(&text);
    return 0;
}
