/* `kemu compare A.npy B.npy`: integers exactly, floats by ULP distance or
 * tolerance, NaN-aware; prints the mismatch count, worst ULP distance and
 * the first mismatches with their indices. */
#include "config.h"
#include "cli/cli.h"
#include "io/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_index(const io_array *a, size_t flat)
{
    size_t idx[IO_MAX_DIMS];
    io_index_unflatten(a, flat, idx);
    printf("[");
    for (int d = 0; d < a->ndim; d++)
        printf("%s%zu", d ? "," : "", idx[d]);
    printf("]");
}

int cli_compare_main(int argc, char **argv)
{
    const char *pa = NULL, *pb = NULL;
    io_compare_opts opts = {0, 0.0, 0.0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--nan-strict")) {
            opts.nan_strict = 1;
        } else if (!strcmp(a, "--ulps") || !strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
            if (i + 1 >= argc)
                return cli_usage_error("compare", "option %s needs a value", a);
            const char *v = argv[++i];
            char *end;
            errno = 0;
            if (!strcmp(a, "--ulps")) {
                opts.ulps = strtoull(v, &end, 10);
                if (*end || errno || v[0] == '-')
                    return cli_usage_error("compare", "--ulps wants a non-negative integer, got '%s'", v);
            } else {
                double d = strtod(v, &end);
                if (*end || d < 0)
                    return cli_usage_error("compare", "%s wants a non-negative number, got '%s'", a, v);
                if (!strcmp(a, "--rtol")) opts.rtol = d; else opts.atol = d;
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("compare", "unknown option '%s'", a);
        } else if (!pa) {
            pa = a;
        } else if (!pb) {
            pb = a;
        } else {
            return cli_usage_error("compare", "unexpected argument '%s'", a);
        }
    }
    if (!pa || !pb)
        return cli_usage_error("compare", "two .npy files are needed");
    io_array A, B;
    char err[1024];
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    if (io_npy_read(pa, &A, err, sizeof err) || io_npy_read(pb, &B, err, sizeof err)) {
        fprintf(stderr, "kemu compare: error: %s\n", err);
        io_array_free(&A);
        io_array_free(&B);
        return CLI_EXIT_USAGE;
    }
    io_compare_result r;
    if (io_array_compare(&A, &B, &opts, &r, err, sizeof err)) {
        fprintf(stderr, "kemu compare: error: %s\n", err);
        io_array_free(&A);
        io_array_free(&B);
        return CLI_EXIT_USAGE;
    }
    char shape[128];
    io_shape_format(&A, shape, sizeof shape);
    printf("%s vs %s: %s[%s], %zu elements, %zu mismatch%s, max ULP distance %llu\n", pa, pb,
           io_dtype_name(A.dtype), shape, A.count, r.mismatches, r.mismatches == 1 ? "" : "es",
           (unsigned long long)r.max_ulps);
    for (int i = 0; i < r.n_first; i++) {
        char va[64], vb[64];
        io_format_element(&A, r.first_mismatch[i], va, sizeof va);
        io_format_element(&B, r.first_mismatch[i], vb, sizeof vb);
        printf("  at ");
        print_index(&A, r.first_mismatch[i]);
        printf(": %s != %s\n", va, vb);
    }
    io_array_free(&A);
    io_array_free(&B);
    return r.mismatches ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
