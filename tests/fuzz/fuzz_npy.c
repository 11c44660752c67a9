/* libFuzzer target for kemu's .npy reader (io_npy_read_mem): the header
 * dict's parser (descr, fortran_order, shape), the version fields, the size
 * arithmetic and the byte-order and Fortran-order conversions. The input
 * ends right before an inaccessible page (guarded.h). An input that reads
 * must give an array whose element count is the product of its shape and
 * whose data can be read to the end; one that does not must give a message.
 * Built and run by tests/fuzz/run.sh (FUZZ_TARGETS=npy). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "guarded.h"
#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_guarded buffer;
    if (fuzz_guarded_copy(&buffer, data, size, 0))
        return 0;
    io_array a;
    char err[512];
    err[0] = 0;
    if (io_npy_read_mem(buffer.data, size, &a, err, sizeof err) == 0) {
        size_t count = 1;
        for (int i = 0; i < a.ndim; i++)
            count *= a.shape[i];
        if (a.ndim < 0 || a.ndim > IO_MAX_DIMS || count != a.count || (count && !a.data))
            __builtin_trap();
        /* read every element (ASan sees a short allocation) and the summary */
        io_stats stats;
        io_array_stats(&a, &stats);
        char text[64];
        if (a.count)
            (void)io_format_element(&a, a.count - 1, text, sizeof text);
        (void)io_shape_format(&a, text, sizeof text);
        io_array_free(&a);
    } else {
        fuzz_check_message(err, sizeof err);
        if (a.data)
            __builtin_trap();
    }
    fuzz_guarded_free(&buffer);
    return 0;
}
