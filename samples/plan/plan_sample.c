/* plan_sample: one launch through a launch plan (<kemu/plan.h>), the layer
 * that `kemu run`, `kemu call`, the Python package and `kemu debug` share.
 * It loads samples/saxpy/saxpy.ptx, describes saxpy(n, a, x, y) as four
 * operands (two values, an input, an in/out buffer written to
 * plan_sample_y.npy in the current directory), runs it on the emulator
 * and checks y against a plain C loop. docs/plan.md walks through it.
 *
 * Usage: plan_sample [SAXPY.ptx]   (default: $top_srcdir/samples/saxpy/saxpy.ptx
 * when top_srcdir is set, else samples/saxpy/saxpy.ptx)
 * Prints one line; exits 0 when every element matches, 1 otherwise. */
#include <kemu/kemu.h>
#include <kemu/plan.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

int main(int argc, char **argv)
{
    char path[4096];
    const char *top = getenv("top_srcdir");
    if (argc > 1)
        snprintf(path, sizeof path, "%s", argv[1]);
    else
        snprintf(path, sizeof path, "%s%ssamples/saxpy/saxpy.ptx", top ? top : "", top ? "/" : "");

    static float x[N], y[N], want[N];
    unsigned n = N;
    float a = 2.0f;
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
        want[i] = a * x[i] + y[i];
    }

    kemu_error err;
    kemu_device_config dc = {0};
    kemu_device *dev = NULL;
    kemu_module *mod;
    kemu_kernel *k;
    kemu_plan *plan = NULL;
    kemu_plan_result result;
    memset(&result, 0, sizeof result);
    int bad = 1;
    if (kemu_device_create(&dc, &dev, &err) || kemu_module_load_ptx_file(dev, path, &mod, &err) ||
        kemu_module_get_kernel(mod, "saxpy", &k, &err))
        goto done;

    /* the launch: 4 blocks of 256 threads on the emulator */
    kemu_plan_config pc = {0};
    pc.launch.grid[0] = 4;
    pc.launch.block[0] = 256;
    pc.backends = KEMU_BACKEND_EMULATOR; /* | KEMU_BACKEND_CUDA on a machine with a GPU */
    pc.ptx_path = path;
    if (kemu_plan_create(k, &pc, &plan, &err))
        goto done;

    /* the operands, in parameter order */
    kemu_operand ops[4] = {
        {.kind = KEMU_OPERAND_VALUE, .value = &n, .size = sizeof n},
        {.kind = KEMU_OPERAND_VALUE, .value = &a, .size = sizeof a},
        {.kind = KEMU_OPERAND_IN, .dtype = "f32", .ndim = 1, .shape = {N}, .data = x},
        {.kind = KEMU_OPERAND_INOUT, .dtype = "f32", .ndim = 1, .shape = {N}, .data = y,
         .output_file = "plan_sample_y.npy"},
    };
    for (int i = 0; i < 4; i++)
        if (kemu_plan_add(plan, &ops[i], &err))
            goto done;

    /* allocate, upload, launch, read back, write plan_sample_y.npy */
    if (kemu_plan_run(plan, &result, &err))
        goto done;
    bad = memcmp(y, want, sizeof y) != 0;
    printf("plan_sample: saxpy over %d floats: %s (%llu warp-instructions), wrote plan_sample_y.npy\n", N,
           bad ? "MISMATCH" : "ok", (unsigned long long)result.report.warp_instructions);
done:
    if (bad && err.message[0] && !result.emulator_ran)
        fprintf(stderr, "plan_sample: %s: %s\n", kemu_status_string(err.status), err.message);
    kemu_plan_result_free(&result);
    kemu_plan_destroy(plan);
    kemu_device_destroy(dev);
    return bad;
}
