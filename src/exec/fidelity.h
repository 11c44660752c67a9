/* The fidelity report (fidelity.c): counts what each launch executes, by
 * how exactly kemu reproduces the hardware there, per kernel. */
#ifndef KEMU_EXEC_FIDELITY_H
#define KEMU_EXEC_FIDELITY_H

#include "vm/vm.h"

typedef struct exec_fidelity exec_fidelity;
typedef struct exec_fidelity_launch exec_fidelity_launch;

exec_fidelity *exec_fidelity_new(void);
void exec_fidelity_free(exec_fidelity *f);
/* Around a launch: puts the counting hooks in front of *hooks (which it
 * passes every event on to); NULL (and *hooks unchanged) when out of
 * memory. exec_fidelity_end files the launch's counts and frees fl. */
exec_fidelity_launch *exec_fidelity_begin(exec_fidelity *f, vm_launch *L, const vm_hooks **hooks);
void exec_fidelity_end(exec_fidelity_launch *fl, vm_launch *L);
/* The report so far: text (lines starting "kemu: fidelity") and a JSON
 * array of kernels; malloc'd, NULL when out of memory. */
char *exec_fidelity_text(exec_fidelity *f);
char *exec_fidelity_json(exec_fidelity *f);

#endif
