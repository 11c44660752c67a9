/* How the kemu command reports the arrays a kernel wrote: one summary line
 * per array (dtype, shape, min, max, mean, NaN count) with element values
 * printed in the fewest digits that read back as the same element. Shared
 * by `kemu call` (and meant for `kemu run`, whose copy is the same). */
#ifndef KEMU_CLI_OUTPUTS_H
#define KEMU_CLI_OUTPUTS_H

#include <stdio.h>
#include "io/array.h"

/* Writes v, an element value of dtype dt (a min or max), into buf: whole
 * numbers below 2^53 in full, others with the fewest significant digits
 * that give back the same dtype value ("0.1" for f32 0.1). */
void cli_format_element_value(double v, io_dtype dt, char *buf, size_t len);

/* Prints "  LABEL: f32[1024]  min A  max B  mean C  nan N" to f: the
 * statistics of io_array_stats (NaNs left out of min/max/mean). */
void cli_print_array_summary(FILE *f, const char *label, const io_array *a);

/* Prints a GPU JIT error log under "  JIT error log:", each line indented;
 * nothing for an empty or NULL log. */
void cli_print_jit_log(const char *log);

/* Parses a --ulps (integer) or --rtol/--atol (number) value, >= 0, into
 * opts; a bad value is a usage error of command `cmd` (the exit status is
 * returned, else 0). */
int cli_parse_tolerance(const char *cmd, const char *name, const char *val, io_compare_opts *opts);

/* Parses --backend emu|cuda|both into which backends run, and --device N
 * (a CUDA device number, 0 to 1000000); a bad value is a usage error of
 * command `cmd` (the exit status is returned, else 0). */
int cli_parse_backend(const char *cmd, const char *val, int *use_emu, int *use_cuda);
int cli_parse_device(const char *cmd, const char *val, int *ordinal);

#endif
