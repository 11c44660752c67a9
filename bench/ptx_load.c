/* PTX load benchmark: how fast kemu parses and lowers PTX, in MB/s.
 *
 * Reads one PTX file into memory, then loads it through the public API
 * (kemu_module_load_ptx: lex, parse, lay out and lower to bytecode) and
 * unloads it, RUNS times, keeping the fastest run. Only the load is timed:
 * not the file read, not the unload, not process start-up. MB is 10^6
 * bytes. Used by `make bench` on the module bench/gen_large_ptx.py writes.
 *
 *   ptx_load FILE.ptx [RUNS]      (RUNS defaults to 5)
 *
 * Prints one line, `ptx load: X.X MB/s (N bytes, min of K runs)`, and exits
 * non-zero if the file cannot be read or does not load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kemu/kemu.h"

/* Reads a whole file into a malloc'd buffer; returns NULL with a message on
 * stderr when it cannot. */
static char *read_whole_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "ptx_load: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t capacity = 1 << 20, used = 0;
    char *buffer = malloc(capacity);
    while (buffer) {
        used += fread(buffer + used, 1, capacity - used, file);
        if (used < capacity)
            break;
        capacity *= 2;
        char *grown = realloc(buffer, capacity);
        if (!grown)
            free(buffer);
        buffer = grown;
    }
    int failed = ferror(file);
    fclose(file);
    if (!buffer || failed) {
        fprintf(stderr, "ptx_load: cannot read %s\n", path);
        free(buffer);
        return NULL;
    }
    *length = used;
    return buffer;
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s FILE.ptx [RUNS]\n", argv[0]);
        return 2;
    }
    int runs = 5;
    if (argc == 3) {
        char *end;
        long value = strtol(argv[2], &end, 10);
        if (*end || value < 1 || value > 100000) {
            fprintf(stderr, "ptx_load: RUNS must be a positive integer\n");
            return 2;
        }
        runs = (int)value;
    }
    size_t length = 0;
    char *text = read_whole_file(argv[1], &length);
    if (!text)
        return 1;

    kemu_error error;
    memset(&error, 0, sizeof error);
    kemu_device *device = NULL;
    if (kemu_device_create(NULL, &device, &error) != KEMU_OK) {
        fprintf(stderr, "ptx_load: %s\n", error.message);
        free(text);
        return 1;
    }
    double best = 0;
    int kernels = 0;
    for (int run = 0; run < runs; run++) {
        kemu_module *module = NULL;
        double start = seconds_now();
        kemu_status status = kemu_module_load_ptx(device, text, length, argv[1], &module, &error);
        double elapsed = seconds_now() - start;
        if (status != KEMU_OK) {
            fprintf(stderr, "ptx_load: %s\n", error.message);
            kemu_device_destroy(device);
            free(text);
            return 1;
        }
        kernels = kemu_module_kernel_count(module);
        kemu_module_unload(module);
        if (run == 0 || elapsed < best)
            best = elapsed;
    }
    kemu_device_destroy(device);
    free(text);

    double megabytes_per_second = best > 0 ? (double)length / best / 1e6 : 0;
    printf("ptx load: %.1f MB/s (%zu bytes, min of %d runs)\n", megabytes_per_second, length, runs);
    fprintf(stderr, "ptx_load: %d kernels, fastest load %.3f s\n", kernels, best);
    return 0;
}
