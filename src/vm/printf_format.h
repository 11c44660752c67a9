/* Host-side formatter for the device `vprintf` call (CUDA in-kernel printf).
 *
 * A kernel's printf becomes `vprintf(fmt, args)`, where `args` points to a
 * buffer holding the arguments after C default promotions (char/short ->
 * int, float -> double), each at its natural alignment, in order; `%s` and
 * `%p` take 8-byte device pointers (PTX-SEMANTICS.md section 10). This
 * module walks the format string, decodes each argument from that buffer and
 * produces the text the GPU's host-side printf would print.
 */
#ifndef KEMU_VM_PRINTF_FORMAT_H
#define KEMU_VM_PRINTF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* At most this many arguments are taken from the buffer (PG B.20.2); the
 * specifiers after that are printed as written. */
#define VM_PRINTF_MAX_ARGS 32

/* Return values of vm_printf_format besides the argument count. */
#define VM_PRINTF_NULL_FORMAT (-1)
#define VM_PRINTF_INTERNAL_ERROR (-2)

/* Field widths and precisions (literal or from `*`) are clamped to this,
 * and a `%s` string is read up to this many bytes, so a hostile format or a
 * missing terminator cannot make the host allocate without bound. It equals
 * the default device printf FIFO size (1 MiB). */
#define VM_PRINTF_MAX_FIELD (1 << 20)

/* Reads the NUL-terminated string at device address `addr` into `buf`,
 * writing at most `cap` bytes including the terminator (so a longer string
 * comes back truncated to cap - 1 characters). Returns 0 on success, -1 if
 * the address is not readable; then `buf` need not be touched. */
typedef int (*vm_printf_read_string)(void *ctx, uint64_t addr, char *buf, size_t cap);

/* Formats `fmt` (a host copy of the format string) with arguments decoded
 * from the device argument buffer `args` (`args_size` bytes; NULL when there
 * are none) and appends the text to the growable buffer *out / *out_len /
 * *out_cap (realloc'd as needed, kept NUL-terminated; the caller frees it;
 * `%c` of 0 puts a NUL byte inside, counted in *out_len).
 * Returns the number of argument slots taken from the buffer (each `*`
 * counts as one), VM_PRINTF_NULL_FORMAT for a NULL `fmt` (nothing appended)
 * or VM_PRINTF_INTERNAL_ERROR when memory runs out or an output pointer is
 * NULL (text appended so far stays valid).
 * Never reads outside args[0, args_size). Choices where CUDA is unknown:
 *   - an argument that does not fit in the buffer, an unknown conversion,
 *     an incomplete specifier at the end, and any specifier past the 32nd
 *     argument are printed exactly as written and take nothing;
 *   - `%n` writes nothing: it is printed as written but skips its 8-byte
 *     pointer slot (counted), so later arguments stay in place;
 *   - `h`/`hh` arguments are 4-byte ints (the compiler promotes them),
 *     narrowed when printed; `l ll z j t q L` integers are 8 bytes; `L` on
 *     a floating conversion and `l` on `c`/`s` are ignored;
 *   - `*` width and precision each take a 4-byte int (negative width means
 *     `-` flag, negative precision means none); the PG lists `*` for the
 *     width only, `.*` follows glibc since the compiler packs its int;
 *   - `%s` of address 0 or without a callback prints "(null)" under the
 *     same width and precision; of an unreadable address, "(invalid %s
 *     pointer 0x...)" under the width only (a GPU would print what it can,
 *     and this says what was wrong);
 *   - `%p` is formatted by the host C library (glibc: 0x... and "(nil)").
 * Everything else is formatted by the host snprintf, as CUDA does. */
int vm_printf_format(const char *fmt, const uint8_t *args, size_t args_size,
                     vm_printf_read_string read_string, void *ctx,
                     char **out, size_t *out_len, size_t *out_cap);

/* vm_printf_format that also says what could not be printed as the kernel
 * meant: the first such problem (a wild %s pointer, an unknown conversion,
 * missing arguments, %n, more than 32 arguments) as one line without a
 * newline in problem[0..cap) (empty when there was none; problem may be
 * NULL). */
int vm_printf_format_checked(const char *fmt, const uint8_t *args, size_t args_size,
                             vm_printf_read_string read_string, void *ctx,
                             char **out, size_t *out_len, size_t *out_cap,
                             char *problem, size_t cap);

#endif /* KEMU_VM_PRINTF_FORMAT_H */
