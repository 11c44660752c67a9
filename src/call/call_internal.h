/* Internal interface of the call room (src/call/): error helpers shared by
 * the structural checks, the interpret-mode limits and the runner. */
#ifndef KEMU_CALL_INTERNAL_H
#define KEMU_CALL_INTERNAL_H

#include "io/array.h"
#include "kemu/call.h"

#include <stddef.h>
#include <stdint.h>

/* Fills err with "PATH: message" (just the message when path is NULL or
 * empty) and result->path with path; returns status. result and err may
 * be NULL. */
kemu_status call_fail(kemu_call_result *result, kemu_error *err, kemu_status status, const char *path,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Parses a dtype name, kemu's ("f32") or NumPy's ("float32"). Returns 0,
 * or -1 for an unknown or NULL name. */
int call_dtype_parse(const char *name, io_dtype *out);

/* The NumPy name of a dtype ("float32", "bfloat16", "bool"), as JAX
 * prints it in messages; a static string, "?" outside the enum. */
const char *call_dtype_numpy_name(io_dtype dt);

/* Writes dims as Python writes a tuple of ints: "()", "(4,)", "(4, 2)".
 * Truncates to len. */
void call_format_tuple(const unsigned long long *dims, int n, char *buf, size_t len);

/* Checks what needs no file: field values, index ranges, names, and which
 * fields go together. Returns KEMU_OK or KEMU_ERR_INVALID_ARGUMENT with the
 * field's path. */
kemu_status call_validate(const kemu_call_spec *spec, kemu_call_result *result, kemu_error *err);

/* Interpret-mode limits 1-4 (the mpmd_map checks). Returns KEMU_OK or
 * KEMU_ERR_UNSUPPORTED with the limit reported in result and err. */
kemu_status call_limits_mpmd(const kemu_call_spec *spec, kemu_call_result *result, kemu_error *err);

/* Limit 5 (scratch operands in an mpmd_map): the caller decides that it
 * applies; this fills result and err and returns KEMU_ERR_UNSUPPORTED. */
kemu_status call_limit_mpmd_scratch(kemu_call_result *result, kemu_error *err);

/* Limits 6-8 (dynamic grid bounds, mesh size, scalar operands). Returns
 * KEMU_OK or KEMU_ERR_UNSUPPORTED with the limit reported as above. */
kemu_status call_limits_grid(const kemu_call_spec *spec, kemu_call_result *result, kemu_error *err);

/* The mesh a call launches over: the top-level one or the mpmd pair's
 * (NULL when there is none). */
const kemu_call_mesh *call_launch_mesh(const kemu_call_spec *spec);

#endif
