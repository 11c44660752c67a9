/* `kemu dis`: prints the lowered bytecode of every function of a module,
 * or of one kernel with --kernel. */
#include "config.h"
#include "cli/cli.h"
#include "exec/exec.h"

#include <stdio.h>
#include <string.h>

int cli_dis_main(int argc, char **argv)
{
    const char *file = NULL, *kernel = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kernel")) {
            if (i + 1 >= argc)
                return cli_usage_error("dis", "option --kernel needs a value");
            kernel = argv[++i];
        } else if (!strncmp(argv[i], "--kernel=", 9)) {
            kernel = argv[i] + 9;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("dis", "unknown option '%s'", argv[i]);
        } else if (!file) {
            file = argv[i];
        } else {
            return cli_usage_error("dis", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!file)
        return cli_usage_error("dis", "no PTX file given");
    kemu_error err;
    kemu_device *dev;
    kemu_module *mod;
    if (kemu_device_create(NULL, &dev, &err))
        return CLI_EXIT_USAGE;
    if (kemu_module_load_ptx_file(dev, file, &mod, &err)) {
        fprintf(stderr, "%s", err.message);
        if (err.message[0] && err.message[strlen(err.message) - 1] != '\n')
            fputc('\n', stderr);
        kemu_device_destroy(dev);
        return CLI_EXIT_USAGE;
    }
    int found = 0;
    util_buffer b = {0};
    for (int i = 0; i < mod->bc->nfunctions; i++) {
        const bc_function *fn = mod->bc->functions[i];
        if (fn->is_extern || (kernel && strcmp(fn->name, kernel)))
            continue;
        found = 1;
        if (b.len)
            util_buffer_printf(&b, "\n");
        bc_disassemble(mod->bc, fn, &b);
    }
    if (!found) {
        fprintf(stderr, "kemu dis: error: no kernel named '%s' in %s\n", kernel, file);
        util_buffer_free(&b);
        kemu_device_destroy(dev);
        return CLI_EXIT_USAGE;
    }
    if (b.data)
        fputs(b.data, stdout);
    util_buffer_free(&b);
    kemu_device_destroy(dev);
    return CLI_EXIT_OK;
}
