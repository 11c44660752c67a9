/* libFuzzer target for `kemu call`'s input: the JSON call spec reader
 * (src/call/spec.c) and what kemu_call_run checks before and while it
 * launches (the spec's consistency, the Mosaic GPU interpret-mode limits,
 * operand and parameter matching, aliasing, launch geometry, scratch
 * layout), ending in a launch of one of two real modules.
 *
 * Each input is written to SPEC.json in a scratch directory and read with
 * call_spec_load. A spec that reads is made safe to run: its "ptx" becomes
 * the text of samples/call/reverse_scale.ptx or the e2e call kernels
 * (tests/e2e/cases/call-kernels/call_kernels.ptx) when it names either by
 * file name (FUZZ_CALL_PTX_DIR holds them; run.sh copies them there), and a
 * file that does not exist otherwise; inputs are not read from .npy files
 * and outputs are not written; launches over 2^18 threads or operands over
 * 64 MiB are not run (a user may ask for those; the fuzzer should not wait
 * for them). Every failure must come with a message. Built and run by
 * tests/fuzz/run.sh (FUZZ_TARGETS=call). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call/spec.h"
#include "guarded.h"
#include "kemu/call.h"
#include "kemu/kemu.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char scratch_dir[64], spec_path[4200], missing_path[4200];
static struct {
    const char *name;
    char *text;
    size_t length;
} modules[] = {{"reverse_scale.ptx", NULL, 0}, {"call_kernels.ptx", NULL, 0}};

static void remove_scratch(void)
{
    unlink(spec_path);
    rmdir(scratch_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("FUZZ_CALL_PTX_DIR");
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", modules[i].name);
        kemu_error error;
        if (util_read_file(path, &modules[i].text, &modules[i].length, &error) != KEMU_OK) {
            fprintf(stderr, "fuzz_call: %s (set FUZZ_CALL_PTX_DIR)\n", error.message);
            abort();
        }
    }
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/kemu-fuzz-call.XXXXXX");
    if (!mkdtemp(scratch_dir))
        abort();
    snprintf(spec_path, sizeof spec_path, "%s/spec.json", scratch_dir);
    snprintf(missing_path, sizeof missing_path, "%s/missing/file", scratch_dir);
    atexit(remove_scratch);
    return 0;
}

static unsigned long long elements(int ndim, const unsigned long long *shape)
{
    unsigned long long n = 1;
    for (int i = 0; i < ndim && i < KEMU_CALL_MAX_DIMS; i++) {
        if (shape[i] && n > (1ull << 40) / shape[i])
            return 1ull << 40;
        n *= shape[i];
    }
    return n;
}

/* Roughly how many threads the launch has (at least), saturating. */
static unsigned long long launch_threads(const kemu_call_spec *s)
{
    const kemu_call_mesh *m = s->mesh ? s->mesh : s->has_mpmd && s->nmpmd > 0 ? &s->mpmd[0].mesh : NULL;
    unsigned long long blocks = 1, per_block;
    if (m) {
        for (int i = 0; i < m->grid_ndim && i < 3; i++)
            blocks *= m->grid[i] ? m->grid[i] : 1;
        for (int i = 0; i < m->cluster_ndim && i < 3; i++)
            blocks *= m->cluster[i] ? m->cluster[i] : 1;
        per_block = 128ull * (m->num_threads ? m->num_threads : 1);
    } else {
        for (int i = 0; s->has_grid && i < s->grid_ndim && i < KEMU_CALL_MAX_DIMS; i++) {
            unsigned long long g = s->grid[i].dynamic ? 1 : s->grid[i].size;
            if (g > (1ull << 32))
                return 1ull << 40;
            blocks *= g ? g : 1;
            if (blocks > (1ull << 32))
                return 1ull << 40;
        }
        per_block = (unsigned long long)(s->block[0] ? s->block[0] : 1) * (s->block[1] ? s->block[1] : 1) *
                    (s->block[2] ? s->block[2] : 1);
        if (!s->block[0] && !s->block[1] && !s->block[2])
            per_block = 128;
    }
    if (blocks > (1ull << 32) || per_block > (1ull << 32))
        return 1ull << 40;
    return blocks * per_block;
}

static int too_big(const call_spec_doc *d)
{
    const kemu_call_spec *s = &d->spec;
    const unsigned long long max_elements = (64ull << 20) / 8;
    if (launch_threads(s) > (1ull << 18))
        return 1;
    for (int i = 0; i < s->ninputs; i++)
        if (elements(s->inputs[i].ndim, s->inputs[i].shape) > max_elements)
            return 1;
    for (int i = 0; i < s->noutputs; i++)
        if (elements(s->outputs[i].ndim, s->outputs[i].shape) > max_elements)
            return 1;
    for (int i = 0; i < s->nscratch; i++)
        if (elements(s->scratch[i].ndim, s->scratch[i].shape) > max_elements)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(spec_path, "wb");
    if (!f)
        return 0;
    size_t wrote = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || wrote != size)
        return 0;

    call_spec_doc doc;
    char err[2048];
    err[0] = 0;
    if (call_spec_load(spec_path, NULL, &doc, err, sizeof err)) {
        fuzz_check_message(err, sizeof err);
        return 0;
    }
    /* never read or write files the spec names */
    kemu_call_spec *s = &doc.spec;
    const char *base = s->ptx ? strrchr(s->ptx, '/') : NULL;
    base = base ? base + 1 : s->ptx;
    s->ptx_text = NULL;
    for (size_t i = 0; base && i < sizeof modules / sizeof modules[0]; i++)
        if (!strcmp(base, modules[i].name)) {
            s->ptx_text = modules[i].text;
            s->ptx_length = modules[i].length;
        }
    if (!s->ptx_text && s->ptx)
        s->ptx = missing_path;
    for (int i = 0; i < s->ninputs; i++)
        if (doc.inputs[i].npy)
            doc.inputs[i].npy = missing_path;
    for (int i = 0; i < s->noutputs; i++)
        doc.outputs[i].npy = NULL;

    if (!too_big(&doc)) {
        kemu_device_config cfg = {NULL, 1, NULL, 2.0, s->interpret.uninitialized_memory};
        kemu_device *dev = NULL;
        kemu_error error;
        memset(&error, 0, sizeof error);
        if (kemu_device_create(&cfg, &dev, &error) == KEMU_OK) {
            kemu_call_result result;
            kemu_status st = kemu_call_run(dev, s, &result, &error);
            if (st != KEMU_OK)
                fuzz_check_message(error.message, sizeof error.message);
            else if (result.noutputs != s->noutputs)
                __builtin_trap();
            kemu_call_result_free(&result);
            kemu_device_destroy(dev);
        }
    }
    call_spec_free(&doc);
    return 0;
}
