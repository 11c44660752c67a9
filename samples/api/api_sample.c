/* api_sample: embeds kemu through its C API (<kemu/kemu.h>). It creates an
 * emulated device, loads samples/saxpy/saxpy.ptx, copies two vectors to
 * device memory, launches saxpy (y = a*x + y) with a cuLaunchKernel-style
 * args array, copies y back and checks it against a plain C loop.
 *
 * Usage: api_sample [SAXPY.ptx]
 * Without an argument the PTX is $top_srcdir/samples/saxpy/saxpy.ptx when
 * top_srcdir is set (make check sets it), else samples/saxpy/saxpy.ptx
 * relative to the current directory (the repository root).
 * Prints one line; exits 0 when every element matches, 1 otherwise. */
#include <kemu/kemu.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000u /* elements; the grid has a few more threads than that */
#define BLOCK 256u

/* Reports a failed kemu call with its status and message; returns 1 so
 * that callers can write `return fail("...", &err);`. */
static int fail(const char *what, const kemu_error *err)
{
    fprintf(stderr, "api_sample: %s failed: %s: %s\n", what, kemu_status_string(err->status), err->message);
    return 1;
}

/* The whole sample; main only owns the device so that every path below
 * can return early and still have it destroyed. */
static int run_saxpy(kemu_device *dev, const char *ptx_path)
{
    kemu_error err;
    memset(&err, 0, sizeof err);

    /* 1. Load the module. PTX errors come back with file, line and column
     *    in err (the message already starts with "file:line:col:"). */
    kemu_module *mod;
    if (kemu_module_load_ptx_file(dev, ptx_path, &mod, &err) != KEMU_OK)
        return fail("loading the PTX", &err);

    /* 2. Find the kernel and look at its parameters as the PTX declares
     *    them: saxpy(unsigned n, float a, const float *x, float *y). */
    kemu_kernel *saxpy;
    if (kemu_module_get_kernel(mod, "saxpy", &saxpy, &err) != KEMU_OK)
        return fail("finding kernel 'saxpy'", &err);
    if (kemu_kernel_param_count(saxpy) != 4) {
        fprintf(stderr, "api_sample: saxpy has %d parameters, expected 4\n", kemu_kernel_param_count(saxpy));
        return 1;
    }
    static const size_t expected_size[4] = {4, 4, 8, 8};
    for (int i = 0; i < 4; i++) {
        kemu_param_info info;
        kemu_kernel_param(saxpy, i, &info);
        if (info.size != expected_size[i]) {
            fprintf(stderr, "api_sample: parameter %d (%s %s) is %zu bytes, expected %zu\n", i, info.type,
                    info.name, info.size, expected_size[i]);
            return 1;
        }
    }

    /* 3. Host data: x = 0, 1, 2, ...; y = 1; and the result computed in C.
     *    The values are small whole numbers, so the kernel's fused
     *    multiply-add and C's a*x+y agree exactly. */
    static float x[N], y[N], reference[N];
    const float a = 2.0f;
    for (unsigned i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
        reference[i] = a * x[i] + y[i];
    }

    /* 4. Device buffers. Fresh memory is filled with the "uninitialized"
     *    pattern (NaN for floats), so a kernel that forgot an element would
     *    leave a visible NaN behind. */
    uint64_t dx = 0, dy = 0;
    int status = 1;
    if (kemu_malloc(dev, sizeof x, KEMU_UNINIT_NAN, &dx, &err) != KEMU_OK ||
        kemu_malloc(dev, sizeof y, KEMU_UNINIT_NAN, &dy, &err) != KEMU_OK) {
        fail("allocating device memory", &err);
        goto free_buffers;
    }
    if (kemu_memcpy_htod(dev, dx, x, sizeof x, &err) != KEMU_OK ||
        kemu_memcpy_htod(dev, dy, y, sizeof y, &err) != KEMU_OK) {
        fail("copying to the device", &err);
        goto free_buffers;
    }

    /* 5. Launch: one pointer per parameter, pointing at the value, exactly
     *    as cuLaunchKernel takes them. Buffers are passed by their 64-bit
     *    device address. */
    unsigned n = N;
    void *args[] = {&n, (void *)&a, &dx, &dy};
    kemu_launch_config launch;
    memset(&launch, 0, sizeof launch);
    launch.grid[0] = (N + BLOCK - 1) / BLOCK;
    launch.block[0] = BLOCK;
    kemu_report report;
    kemu_status st = kemu_launch(saxpy, &launch, args, &report, &err);
    if (st == KEMU_ERR_KERNEL_FAULT) {
        fprintf(stderr, "api_sample: the kernel faulted: %s\n", report.fault_message);
        kemu_report_free(&report);
        goto free_buffers;
    }
    if (st != KEMU_OK) {
        fail("launching saxpy", &err);
        goto free_buffers;
    }
    unsigned long long warp_instructions = (unsigned long long)report.warp_instructions;
    kemu_report_free(&report);

    /* 6. Copy the result back and check it against the C reference. */
    if (kemu_memcpy_dtoh(dev, y, dy, sizeof y, &err) != KEMU_OK) {
        fail("copying from the device", &err);
        goto free_buffers;
    }
    unsigned mismatches = 0;
    for (unsigned i = 0; i < N; i++) {
        if (y[i] != reference[i]) {
            if (mismatches < 5)
                fprintf(stderr, "api_sample: y[%u] = %g, expected %g\n", i, y[i], reference[i]);
            mismatches++;
        }
    }
    if (mismatches)
        printf("api_sample: FAIL: %u of %u elements differ from the C reference\n", mismatches, N);
    else
        printf("api_sample: ok: saxpy of %u elements matches the C reference (%llu warp-instructions)\n", N,
               warp_instructions);
    status = mismatches ? 1 : 0;

free_buffers:
    /* kemu_free reports an address that is not a live allocation; 0 was
     * never allocated here, so only free what was. */
    if (dx && kemu_free(dev, dx, &err) != KEMU_OK)
        status = fail("freeing x", &err);
    if (dy && kemu_free(dev, dy, &err) != KEMU_OK)
        status = fail("freeing y", &err);
    return status;
}

int main(int argc, char **argv)
{
    char path[4096];
    const char *top = getenv("top_srcdir");
    if (argc > 1)
        snprintf(path, sizeof path, "%s", argv[1]);
    else if (top && *top)
        snprintf(path, sizeof path, "%s/samples/saxpy/saxpy.ptx", top);
    else
        snprintf(path, sizeof path, "samples/saxpy/saxpy.ptx");

    /* The device: arch NULL takes the PTX .target, threads 0 uses
     * KEMU_THREADS or every core, a 60-second timeout per launch turns a
     * hang into a fault. Every call returns a status; nothing exits. */
    kemu_device_config config;
    memset(&config, 0, sizeof config);
    config.timeout = 60.0;
    config.uninit = KEMU_UNINIT_NAN;
    kemu_device *dev;
    kemu_error err;
    memset(&err, 0, sizeof err);
    if (kemu_device_create(&config, &dev, &err) != KEMU_OK)
        return fail("creating the device", &err);
    int status = run_saxpy(dev, path);
    kemu_device_destroy(dev); /* frees its memory and modules too */
    return status;
}
