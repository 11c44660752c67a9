/* The kemu command's entry point (src/cli/main.c) with its main renamed
 * kemu_cli_main, so that fuzz_run.c can call the command as a function
 * with the very argument handling `kemu` has. */
int kemu_cli_main(int argc, char **argv);
#define main kemu_cli_main
#include "cli/main.c"
