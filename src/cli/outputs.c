/* Summary lines for output arrays (see outputs.h). Formatting only; no
 * file is read or written here; and the option values and file names of
 * --backend both, shared by `kemu run` and `kemu call`. */
#include "cli/outputs.h"
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether two doubles are the same value once stored as dtype dt. */
static int same_in_dtype(double x, double y, io_dtype dt)
{
    switch (dt) {
    case IO_DT_F16: return io_double_to_f16(x) == io_double_to_f16(y);
    case IO_DT_BF16: return io_double_to_bf16(x) == io_double_to_bf16(y);
    case IO_DT_F32: return (float)x == (float)y;
    default: return x == y;
    }
}

void cli_format_element_value(double v, io_dtype dt, char *buf, size_t len)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0) { /* whole numbers below 2^53: all digits */
        snprintf(buf, len, "%.0f", v);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (isnan(v) || isinf(v) || same_in_dtype(strtod(buf, NULL), v, dt))
            return;
    }
}

void cli_print_array_summary(FILE *f, const char *label, const io_array *a)
{
    io_stats s;
    char shape[128], min_text[40], max_text[40];
    io_array_stats(a, &s);
    io_shape_format(a, shape, sizeof shape);
    cli_format_element_value(s.min, a->dtype, min_text, sizeof min_text);
    cli_format_element_value(s.max, a->dtype, max_text, sizeof max_text);
    fprintf(f, "  %s: %s[%s]  min %s  max %s  mean %.9g  nan %zu\n", label, io_dtype_name(a->dtype), shape,
            min_text, max_text, s.mean, s.nan_count);
}

void cli_print_jit_log(const char *log)
{
    if (!log || !*log)
        return;
    fprintf(stderr, "  JIT error log:\n");
    for (const char *p = log; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "    %.*s\n", n, p);
        p += n + (nl ? 1 : 0);
    }
}

int cli_parse_backend(const char *cmd, const char *val, int *use_emu, int *use_cuda)
{
    if (!strcmp(val, "emu")) *use_emu = 1, *use_cuda = 0;
    else if (!strcmp(val, "cuda")) *use_emu = 0, *use_cuda = 1;
    else if (!strcmp(val, "both")) *use_emu = 1, *use_cuda = 1;
    else return cli_usage_error(cmd, "--backend wants emu, cuda or both, got '%s'", val);
    return 0;
}

int cli_parse_device(const char *cmd, const char *val, int *ordinal)
{
    char *end;
    errno = 0;
    long d = strtol(val, &end, 10);
    if (end == val || *end || errno || d < 0 || d > 1000000)
        return cli_usage_error(cmd, "--device wants a CUDA device number (0, 1, ...), got '%s'", val);
    *ordinal = (int)d;
    return 0;
}

int cli_parse_tolerance(const char *cmd, const char *name, const char *val, io_compare_opts *opts)
{
    char *end;
    errno = 0;
    if (!strcmp(name, "--ulps")) {
        unsigned long long u = strtoull(val, &end, 10);
        if (end == val || *end || errno || val[0] == '-')
            return cli_usage_error(cmd, "--ulps wants a non-negative integer, got '%s'", val);
        opts->ulps = u;
        return 0;
    }
    double d = strtod(val, &end);
    if (end == val || *end || !(d >= 0) || isinf(d))
        return cli_usage_error(cmd, "%s wants a non-negative number, got '%s'", name, val);
    if (!strcmp(name, "--rtol"))
        opts->rtol = d;
    else
        opts->atol = d;
    return 0;
}
