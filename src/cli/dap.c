/* placeholder, replaced below */
#include "config.h"
#include "cli/cli.h"
const char cli_dap_usage[] = "usage: kemu dap\n";
int cli_dap_main(int argc, char **argv) { (void)argc; (void)argv; return 2; }
