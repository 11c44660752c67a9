/* The `kemu` command's entry point: global options (--version, --help),
 * `kemu help <subcommand>`, and dispatch to one file per subcommand. Only
 * src/cli/ may call exit(). */
#include "config.h"
#include "cli/cli.h"
#include "kemu/kemu.h"

#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static const char run_usage[] =
    "usage: kemu run FILE.ptx [--kernel NAME] [--grid X[,Y[,Z]]] --block X[,Y[,Z]]\n"
    "                [--cluster X[,Y[,Z]]] [--cooperative] [--shared BYTES] [--arch sm_XX] [--threads N]\n"
    "                [--schedule MODE] [--uninit nan|zero|pattern] [--timeout SECONDS]\n"
    "                [--json] [--keep-outputs] [--progress|--no-progress] [--tool NAME]\n"
    "                [--backend emu|cuda|both] [--device N]\n"
    "                [--ulps N] [--rtol R] [--atol A] [--fidelity-report] [--] ARG...\n"
    "\n"
    "Runs one kernel of a PTX module on the emulator. One ARG per kernel parameter:\n"
    "  in:PATH.npy                 a device buffer initialized from a NumPy file\n"
    "  in:GEN:DTYPE:SHAPE          a generated input; GEN: arange zeros ones fill=V rand[=SEED]\n"
    "  out:PATH.npy:DTYPE:SHAPE    a fresh buffer (uninitialized pattern) written to PATH after the launch\n"
    "  inout:SOURCE:OUT.npy        initialized from SOURCE (a .npy path or GEN:DTYPE:SHAPE), written to OUT\n"
    "  scratch:DTYPE:SHAPE         a device buffer that is neither read from nor written to a file\n"
    "  TYPE:VALUE                  a scalar; TYPE: u8 u16 u32 u64 s8 s16 s32 s64 f16 bf16 f32 f64 b8..b64\n"
    "  bytes:HEX | bytes@PATH      an aggregate passed by value\n"
    "  tmap=BOX[,OPT...]:BUFFER    a tensor map (CUtensorMap) over BUFFER (one of the forms above) for\n"
    "                              cp.async.bulk.tensor; BOX like SHAPE; OPT: swizzle=32|64|128|none\n"
    "                              fill=nan|zero estride=S dtype=tf32\n"
    "DTYPE: f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool; SHAPE: N or AxBxC.\n"
    "--backend cuda runs the same PTX and launch on CUDA device --device N (the driver is\n"
    "loaded at run time); both runs the emulator and the GPU from identical inputs, writes\n"
    "the GPU's outputs to NAME.cuda.npy and compares every output buffer (docs/fidelity.md).\n"
    "--cooperative launches as cudaLaunchCooperativeKernel does (every block co-resident,\n"
    "grid-wide synchronization allowed).\n"
    "--progress prints a line on stderr every 10 s of a long launch (blocks done, warp-\n"
    "instructions per second); it is on by default when stderr is a terminal.\n"
    "--tool memcheck|racecheck|initcheck|synccheck runs checkers (see README).\n"
    "--fidelity-report says, per kernel, how many of the executed instructions kemu computes\n"
    "bit for bit as the hardware, approximately (with the bound measured on an H200), in an\n"
    "order that depends on the threads (atomics), or as a model of the machine (clocks)\n"
    "(docs/fidelity.md); with --json, as \"fidelity\".\n"
    "Exit status: 0 success, 1 the kernel faulted or the backends disagree, 2 usage, PTX\n"
    "or input error, 3 no usable GPU for --backend cuda|both.\n";

static const char info_usage[] =
    "usage: kemu info FILE.ptx [--json]\n"
    "\n"
    "Prints the PTX version and target, each entry with its parameters (name, type,\n"
    "size, alignment, offset), shared and local memory, registers, performance\n"
    "directives and the extern functions it calls.\n";

static const char dis_usage[] =
    "usage: kemu dis FILE.ptx [--kernel NAME]\n"
    "\n"
    "Prints the lowered kernel bytecode, each op annotated with its PTX source line\n"
    "(and the CUDA file:line where .loc is present).\n";

static const char compare_usage[] =
    "usage: kemu compare A.npy B.npy [--ulps N] [--rtol R] [--atol A] [--nan-strict]\n"
    "\n"
    "Compares two arrays of the same dtype and shape: integers exactly, floats by\n"
    "ULP distance or tolerance; NaN equals NaN unless --nan-strict. Exit status 0\n"
    "when equal within tolerance, 1 otherwise, 2 on error.\n";

static const char exec_usage[] =
    "usage: kemu exec [--arch sm_XX] [--devices N] [--threads N] [--schedule MODE] [--timeout SECONDS]\n"
    "                 [--progress] [--uninit nan|zero|pattern] [--dump-ptx DIR] [--trace] [--dap [HOST:]PORT]\n"
    "                 [--tool memcheck|racecheck|initcheck|synccheck ...] [--fidelity-report]\n"
    "                 [--] PROGRAM [ARG...]\n"
    "\n"
    "Runs an unmodified CUDA program on the emulator: its CUDA runtime library\n"
    "(libcudart.so.13 or .so.12) is replaced by kemu's, so its kernels run on the\n"
    "CPU and its output, self-checks and exit status come out as on a GPU. The\n"
    "program must link the CUDA runtime dynamically: build it with\n"
    "`nvcc -cudart shared` and embed PTX (nvcc does by default; with -gencode add\n"
    "arch=compute_XX,code=compute_XX). Driver-API programs (libcuda.so.1) and\n"
    "Numba programs (`kemu exec python app.py`) run on kemu's libcuda.so.1, which\n"
    "shares the runtime's device (docs/driver.md).\n"
    "  --arch sm_XX        the emulated GPU (default: the highest PTX the program has)\n"
    "  --devices N         emulate N devices of the same GPU (default 1; docs/multigpu.md)\n"
    "  --threads N         host threads running blocks (default: all cores)\n"
    "  --schedule MODE     default or random:SEED (warp scheduling order)\n"
    "  --timeout SECONDS   fail a launch that runs longer (cudaErrorLaunchTimeout)\n"
    "  --progress          a line on stderr every 10 s of a long launch (default when stderr\n"
    "                      is a terminal; --no-progress turns it off)\n"
    "  --uninit MODE       fill of fresh device and shared memory: nan (default), zero, pattern\n"
    "  --dump-ptx DIR      write the PTX found in the program to DIR\n"
    "  --trace             log the CUDA runtime calls to stderr\n"
    "  --dap [HOST:]PORT   at the first launch, wait for an editor to attach its debugger\n"
    "                      (Debug Adapter Protocol over TCP; HOST defaults to 127.0.0.1,\n"
    "                      PORT 0 picks a free port, printed on stderr)\n"
    "  --tool ...          run the checkers on every launch, with --log-file, --report-file,\n"
    "                      --error-exitcode, --print-limit, --leak-check, --racecheck-warp,\n"
    "                      --racecheck-benign as for `kemu run`\n"
    "  --fidelity-report   at exit, say per kernel how exactly kemu reproduced the hardware\n"
    "                      (as for `kemu run`)\n"
    "Options go before PROGRAM; everything after it is the program's.\n"
    "Exit status: the program's; 2 for usage errors and programs kemu cannot run\n"
    "(statically linked CUDA runtime, no CUDA at all); 3 when kemu's runtime library\n"
    "is missing.\n";

const cli_command cli_commands[] = {
    {"run", "run a PTX kernel on the emulator", run_usage, cli_run_main},
    {"info", "describe the kernels of a PTX module", info_usage, cli_info_main},
    {"dis", "print the lowered bytecode of a PTX module", dis_usage, cli_dis_main},
    {"call", "run a Pallas-style kernel call described in JSON", cli_call_usage, cli_call_main},
    {"exec", "run an unmodified CUDA program (nvcc -cudart shared) on the emulator", exec_usage, cli_exec_main},
    {"compare", "compare two .npy arrays with ULP/tolerance rules", compare_usage, cli_compare_main},
    {"debug", "debug a kernel launched by run, call or exec (gdb-style commands)", cli_debug_usage, cli_debug_main},
    {"dap", "serve the Debug Adapter Protocol on stdio (for editors)", cli_dap_usage, cli_dap_main},
    {NULL, NULL, NULL, NULL},
};

static void print_usage(FILE *f)
{
    fprintf(f, "usage: kemu [--version] [--help] <command> [<args>]\n\n"
               "kemu runs NVIDIA GPU kernels (PTX) on the CPU.\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\nSee 'kemu help <command>' for the options of a command.\n");
}

const cli_command *cli_find_command(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void cli_fidelity_print(kemu_device *dev, FILE *out)
{
    char *text = NULL;
    kemu_error err;
    if (kemu_fidelity_report(dev, &text, NULL, &err))
        fprintf(stderr, "kemu: %s\n", err.message);
    else
        fputs(text, out);
    free(text);
}

double cli_progress_interval(int asked)
{
    const char *env = getenv("KEMU_PROGRESS_SECONDS"); /* for tests: a shorter period */
    double every = env && atof(env) > 0 ? atof(env) : CLI_PROGRESS_SECONDS;
    if (asked < 0)
        asked = isatty(STDERR_FILENO);
    return asked ? every : 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kemu%s%s: error: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (cmd)
        fprintf(stderr, "Run 'kemu help %s' for usage.\n", cmd);
    else
        fprintf(stderr, "Run 'kemu --help' for usage.\n");
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *a = argv[1];
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
        printf("kemu %s\n", PACKAGE_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(a, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return CLI_EXIT_OK;
        }
        const cli_command *c = cli_find_command(argv[2]);
        if (!c)
            return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        fputs(c->usage, stdout);
        return CLI_EXIT_OK;
    }
    if (a[0] == '-')
        return cli_usage_error(NULL, "unknown option '%s'", a);
    const cli_command *c = cli_find_command(a);
    if (!c)
        return cli_usage_error(NULL, "unknown command '%s'", a);
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        fputs(c->usage, stdout);
        return CLI_EXIT_OK;
    }
    return c->run(argc - 1, argv + 1);
}
