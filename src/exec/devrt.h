/* CUDA dynamic parallelism (CDP2): the launch layer's side of the device
 * runtime. A grid whose module calls the device runtime gets an
 * exec_grid_cdp; its threads' launches are recorded there (parameters
 * copied at the launch) and run by src/exec/launch.c after the grid's
 * blocks have all finished. */
#ifndef KEMU_EXEC_DEVRT_H
#define KEMU_EXEC_DEVRT_H

#include "exec/exec.h"
#include "vm/vm.h"

/* The most nested levels of device launches below a host launch. */
#define EXEC_CDP_MAX_DEPTH 24
#define EXEC_CDP_PENDING_DEFAULT 2048

enum { EXEC_CDP_STREAM = 0, EXEC_CDP_TAIL, EXEC_CDP_FIRE_AND_FORGET };

/* What a queued piece of device work does: a kernel launch, or the copy
 * or set of device memory of a device-side cudaMemcpy(2D/3D)Async /
 * cudaMemset(2D/3D)Async (a 3D one: a piece per slice), which runs in its
 * stream's order like a launch. */
enum { EXEC_CDP_OP_LAUNCH = 0, EXEC_CDP_OP_COPY, EXEC_CDP_OP_SET };

/* One device launch (or copy, or set), waiting for its parent grid to end. */
typedef struct exec_cdp_child {
    uint64_t block_id, order;    /* launching block, and the launch's order in the grid (sort key) */
    int kind;                    /* EXEC_CDP_* */
    int op;                      /* EXEC_CDP_OP_* */
    uint64_t dst, src;           /* copies and sets: height rows of width bytes, pitches apart */
    uint64_t dpitch, spitch, width, height;
    int value;                   /* sets: the byte value */
    kemu_kernel *kernel;         /* launches */
    kemu_launch_config cfg;
    uint8_t *params;             /* the kernel's parameter buffer, copied at the launch */
    unsigned ctaid[3], tid[3];   /* who launched it */
    uint64_t mark[4];            /* racecheck: the launch's place in the parent grid (check_cdp_mark) */
} exec_cdp_child;

/* A parameter buffer handed out by GetParameterBuffer, not launched yet. */
typedef struct exec_cdp_buffer {
    uint64_t address, size;
    kemu_kernel *kernel;         /* NULL: GetParameterBuffer (LaunchDevice names the kernel) */
    kemu_launch_config cfg;
} exec_cdp_buffer;

typedef struct exec_grid_cdp {
    kemu_module *mod;
    kemu_device *dev;
    unsigned depth;              /* 0: launched by the host */
    vm_devrt devrt;              /* installed as vm_launch.devrt */
    pthread_mutex_t lock;
    exec_cdp_child *children;
    size_t nchildren, capchildren;
    exec_cdp_buffer *buffers;
    size_t nbuffers, capbuffers;
    uint64_t next_order;
    uint64_t streams, events;    /* handles made by cudaStreamCreateWithFlags / cudaEventCreateWithFlags */
    int uses_pool;
    struct check_cdp *race;      /* racecheck's record of the grid's accesses, or NULL */
} exec_grid_cdp;

/* Sets g up for a grid of module mod at nesting depth `depth` (the
 * parameter-buffer region is made on first use). */
kemu_status exec_cdp_begin(exec_grid_cdp *g, kemu_module *mod, unsigned depth, kemu_error *err);
/* The grid's blocks have ended: its parameter buffers are given back and
 * its launches sorted into their run order (by launching block, then in
 * the order each block made them; tail launches after the others). */
void exec_cdp_grid_done(exec_grid_cdp *g);
/* Frees g and the launches it still holds (not run: they stop pending). */
void exec_cdp_free(exec_grid_cdp *g);
/* One launch leaves the pending count (it starts, or is dropped). */
void exec_cdp_started(kemu_device *dev);

#endif
