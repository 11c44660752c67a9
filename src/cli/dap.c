/* `kemu dap`: the debugger's Debug Adapter Protocol server on stdin and
 * stdout (src/debug/dap.c), launching `kemu run` and `kemu call` command
 * lines in this process. */
#include "config.h"
#include "cli/cli.h"
#include "debug/dap.h"

#include <stdio.h>
#include <string.h>

const char cli_dap_usage[] =
    "usage: kemu dap\n"
    "\n"
    "Serves the Debug Adapter Protocol on stdin/stdout: an editor (VS Code, nvim-dap,\n"
    "Emacs dap-mode) starts it and sends a launch request whose arguments name the\n"
    "kemu command to debug:\n"
    "  {\"command\": \"run\", \"args\": [\"k.ptx\", \"--kernel\", \"k\", \"--block\", \"64\", \"--\", ...],\n"
    "   \"stopOnEntry\": false, \"cwd\": \"DIR\"}\n"
    "(\"command\" is run or call). To debug a CUDA or Python program, run it with\n"
    "`kemu exec --dap [HOST:]PORT ./app` and attach the editor to that port.\n"
    "docs/debugger.md has a VS Code launch.json.\n";

static int run_command(void *ctx, int argc, const char **argv)
{
    (void)ctx;
    return (!strcmp(argv[0], "run") ? cli_run_main : cli_call_main)(argc, (char **)argv);
}

int cli_dap_main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fputs(cli_dap_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    return dbg_dap_serve_stdio(run_command, NULL) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
