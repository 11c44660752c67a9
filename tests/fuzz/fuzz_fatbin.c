/* libFuzzer target for kemu's CUDA fatbinary reader (src/cudart/fatbin.c),
 * which `kemu exec` runs on the fatbinaries of programs it is given: the
 * container and entry headers (cudart_fatbin_parse), the zstd and LZ4
 * decompression of each entry (cudart_fatbin_entry_decompress) and the
 * choice of the PTX (cudart_fatbin_extract_ptx). The input is the container,
 * ending right before an inaccessible page (guarded.h). Entries must lie
 * inside the input; a decompressed entry must have its declared size and a
 * NUL after it; every failure must come with a message. Built and run by
 * tests/fuzz/run.sh (FUZZ_TARGETS=fatbin). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudart/fatbin.h"
#include "guarded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ENTRIES = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_guarded buffer;
    if (size == 0 || fuzz_guarded_copy(&buffer, data, size, 0))
        return 0;
    cudart_fatbin_entry entries[MAX_ENTRIES];
    int count = 0;
    char err[1024];
    err[0] = 0;
    if (cudart_fatbin_parse(buffer.data, size, entries, MAX_ENTRIES, &count, err, sizeof err) == 0) {
        if (count < 0 || count > MAX_ENTRIES)
            __builtin_trap();
        const char *begin = buffer.data, *end = buffer.data + size;
        for (int i = 0; i < count; i++) {
            const char *p = entries[i].data;
            if (entries[i].size && (p < begin || p > end || entries[i].size > (size_t)(end - p)))
                __builtin_trap();
            char *image = NULL;
            size_t image_size = 0;
            err[0] = 0;
            if (cudart_fatbin_entry_decompress(&entries[i], &image, &image_size, err, sizeof err) == 0) {
                if (!image || image_size != entries[i].uncompressed_size || image[image_size] != 0)
                    __builtin_trap();
                free(image);
            } else {
                fuzz_check_message(err, sizeof err);
            }
        }
        static const unsigned max_sms[] = {75, 90, 1000};
        for (size_t m = 0; m < sizeof max_sms / sizeof max_sms[0]; m++) {
            char *ptx = NULL;
            unsigned sm = 0;
            err[0] = 0;
            if (cudart_fatbin_extract_ptx(entries, count, max_sms[m], &ptx, &sm, err, sizeof err) == 0) {
                if (!ptx || sm > max_sms[m])
                    __builtin_trap();
                free(ptx);
            } else {
                fuzz_check_message(err, sizeof err);
            }
        }
    } else {
        fuzz_check_message(err, sizeof err);
    }
    fuzz_guarded_free(&buffer);
    return 0;
}
