/* The Debug Adapter Protocol server of the debugger (dap.c), for editors
 * (VS Code, nvim-dap, Emacs dap-mode), in two forms:
 *
 *  - `kemu dap` (launch): the protocol on stdin/stdout; the launch request
 *    names a kemu command line ({"command": "run", "args": [...]}) that the
 *    front door's runner executes in this process, as often as the
 *    debugger restarts it (replay).
 *  - attach: a server inside a running program (`kemu exec --dap PORT`,
 *    KEMU_DEBUG=dap:[HOST:]PORT, started by the program's first launch):
 *    it waits for an editor to connect and attach, takes its breakpoints,
 *    and lets the program go on to its kernels. */
#ifndef KEMU_DEBUG_DAP_H
#define KEMU_DEBUG_DAP_H

#include <stddef.h>

/* Runs a kemu command line (argv[0]: run or call) once; its exit status. */
typedef int (*dbg_dap_runner)(void *ctx, int argc, const char **argv);

/* kemu dap: serves stdin/stdout until the client disconnects. 0, or 1 when
 * the session could not start (said on stderr). */
int dbg_dap_serve_stdio(dbg_dap_runner run, void *ctx);

/* Listens on [HOST:]PORT (port 0: any free port; the address is printed
 * on stderr and written to $KEMU_DEBUG_PORT_FILE), accepts one client and
 * serves it until its configurationDone; then dbg_active is its debugger.
 * 0; 1 when the client left before configuring (the program runs
 * undebugged); -1 with msg. */
int dbg_dap_attach_server(const char *where, char *msg, size_t n);

/* The program is ending with status: tells the attached client (exited,
 * terminated). */
void dbg_dap_attached_ended(int status);

#endif
