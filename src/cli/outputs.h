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

#endif
