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
        } else if (!strncmp(a, "--ulps", 6) || !strncmp(a, "--rtol", 6) || !strncmp(a, "--atol", 6)) {
            /* --ulps N or --ulps=N (likewise --rtol, --atol) */
            char name[8];
            memcpy(name, a, 6);
            name[6] = 0;
            const char *v;
            if (a[6] == '=') {
                v = a + 7;
            } else if (a[6]) {
                return cli_usage_error("compare", "unknown option '%s'", a);
            } else {
                if (i + 1 >= argc)
                    return cli_usage_error("compare", "option %s needs a value", a);
                v = argv[++i];
            }
            char *end;
            errno = 0;
            if (!strcmp(name, "--ulps")) {
                opts.ulps = strtoull(v, &end, 10);
                if (*end || end == v || errno || v[0] == '-')
                    return cli_usage_error("compare", "--ulps wants a non-negative integer, got '%s'", v);
            } else {
                double d = strtod(v, &end);
                if (*end || end == v || !(d >= 0))
                    return cli_usage_error("compare", "%s wants a non-negative number, got '%s'", name, v);
                if (!strcmp(name, "--rtol")) opts.rtol = d; else opts.atol = d;
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
    /* for integers and bool io_array_compare reports the largest absolute
     * difference, which is not a ULP distance */
    printf("%s vs %s: %s[%s], %zu elements, %zu mismatch%s, max %s %llu\n", pa, pb, io_dtype_name(A.dtype),
           shape, A.count, r.mismatches, r.mismatches == 1 ? "" : "es",
           io_dtype_is_float(A.dtype) ? "ULP distance" : "difference", (unsigned long long)r.max_ulps);
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
