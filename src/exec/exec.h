/* Devices, modules and kernels behind the public API, and the launch of a
 * grid over host threads. Knows nothing about PTX syntax. */
#ifndef KEMU_EXEC_H
#define KEMU_EXEC_H

#include <pthread.h>
#include "kemu/kemu.h"
#include "bc/bc.h"
#include "mem/mem.h"
#include "ptx/ptx.h"
#include "exec/watchdog.h"

/* What an emulated GPU architecture allows. */
typedef struct exec_arch {
    const char *name;       /* "sm_80" */
    int sm;                 /* 80 */
    int sm_count;
    unsigned max_threads_per_block;
    unsigned max_block_dim[3];
    unsigned max_grid_dim[3];
    uint64_t max_shared_default;  /* without opt-in */
    uint64_t max_shared_optin;    /* per block with opt-in */
    int has_clusters;
    /* per SM, as the CUDA programming guide's compute capability table
     * gives them (for occupancy and the device properties) */
    int threads_per_sm;
    int blocks_per_sm;
    uint64_t shared_per_sm;
} exec_arch;

/* Looks an architecture up by name ("sm_80", "sm_90a"); NULL if unknown. */
const exec_arch *exec_arch_find(const char *name);
/* The closest known architecture at or below sm (for .target). */
const exec_arch *exec_arch_for_sm(int sm);
/* Blocks of block_size threads using `shared` bytes of shared memory
 * (static and dynamic) that fit on one SM of architecture a, as limited by
 * threads, blocks, shared memory and registers (kemu assumes 32 per
 * thread); 0 when one block does not fit. The occupancy calls of the host
 * and device runtimes answer with this. */
int exec_arch_blocks_per_sm(const exec_arch *a, int block_size, uint64_t shared);

typedef struct exec_native_binding { char *name; void (*fn)(void); } exec_native_binding;

#define EXEC_PRINTF_FIFO_DEFAULT ((size_t)1 << 20) /* cudaLimitPrintfFifoSize's default */

#define EXEC_CLUSTER_CACHE 64 /* host threads whose clusters a device keeps between launches */

struct vm_cluster;

struct kemu_device {
    exec_native_binding *natives;
    int nnatives;
    mem_space mem;
    kemu_device_config cfg;
    char arch_name[32];
    const exec_arch *arch;       /* NULL: from each module's .target */
    kemu_module **modules;
    int nmodules;
    uint64_t heap_base, heap_size, heap_used;
    uint64_t heap_request;       /* cudaLimitMallocHeapSize before the heap is made (0: 8 MiB) */
    pthread_mutex_t heap_lock;
    int random_schedule;
    uint64_t schedule_seed;
    struct check_session *checks;    /* enabled checkers, or NULL */
    struct exec_fidelity *fidelity;  /* the fidelity report (fidelity.c), or NULL */
    struct vm_texture *textures;     /* texture/surface objects by handle - 1 */
    int ntextures;
    /* set around one launch by kemu call: out-of-bounds loads return the
     * uninit fill instead of faulting; an image of the dynamic shared
     * memory copied into every block after the fill (typed scratch fill) */
    int oob_reads_fill;
    int oob_shared_class;            /* 1 + fill class of out-of-bounds shared loads, 0: by load type */
    const uint8_t *shared_init;
    uint64_t shared_init_size;
    /* device printf keeps at most this many bytes per launch, as a GPU's
     * printf FIFO (cudaLimitPrintfFifoSize, 1 MiB by default) */
    size_t printf_fifo_size;
    exec_watchdog watchdog;          /* --timeout deadlines of this device's launches */
    /* host threads may write device memory while a kernel runs (kemu
     * exec once the program has pinned or managed memory): a spinning
     * kernel may be waiting for them, so it is never proven stuck */
    int host_may_write;
    /* --progress: a line on stderr every progress_interval seconds of a
     * long launch (0: none) */
    double progress_interval;
    uint64_t step_limit;             /* warp-instructions a block may run before it faults; 0: no limit
                                      * (kemu_device_set_step_limit, KEMU_STEP_LIMIT) */
    /* dynamic parallelism (devrt.c): device launches made and not started
     * yet (atomic) and their limit (cudaLimitDevRuntimePendingLaunchCount,
     * 0: the default 2048); the region parameter buffers are taken from */
    uint64_t cdp_pending, cdp_pending_limit;
    uint64_t cdp_pool_base, cdp_pool_size, cdp_pool_used;
    uint64_t cdp_strings_base;         /* the device runtime's error names and messages (cudaGetErrorString) */
    int cdp_pool_users;                /* grids running that may take parameter buffers */
    int cdp_runtime_version;           /* cudaRuntimeGetVersion in device code (0: 13000) */
    /* several devices (kemu_device_set_ordinal / _set_peer_access): the
     * range of addresses this device maps, and the devices whose memory its
     * kernels know, with whether peer access to each is enabled */
    int ordinal;
    struct exec_peer { kemu_device *dev; int access; } *peers;
    int npeers;
    /* the clusters (blocks, warps, frames, shared and local memory) the
     * host threads of the last top-level launches ran, kept for the next
     * one by host thread number (vm_cluster_park); taken and given back
     * atomically */
    struct vm_cluster *cluster_cache[EXEC_CLUSTER_CACHE];
};

/* Frees the clusters the device keeps between launches (kemu_device_destroy;
 * and tests that count frames). Not while the device launches. */
void exec_device_release_clusters(kemu_device *d);

struct kemu_kernel {
    kemu_module *mod;
    bc_function *fn;
};

struct kemu_module {
    kemu_device *dev;
    ptx_module *ptx;
    bc_module *bc;
    uint64_t globals;            /* device address of module .global variables */
    uint8_t *const_bank;
    kemu_kernel *kernels;
    int nkernels;
    const char **loc_files;      /* by .file id */
    int nloc_files;
    int uses_malloc;
    int uses_devrt;              /* calls the device runtime (dynamic parallelism) */
    struct exec_native_call **natives; /* by function index: prepared libffi calls, or NULL */
};

/* Calls native function fn_index of module mod with argument pointers
 * args (one per PTX parameter) and stores the result at ret (may be NULL).
 * The signature of vm_launch.call_native. */
int exec_call_native(void *mod, int fn_index, void **args, void *ret);
/* Prepares the libffi calls of the natives a module uses. */
kemu_status exec_natives_prepare(kemu_module *mod, kemu_error *err);
void exec_natives_free(kemu_module *mod);

/* Checks a launch of k with cfg against arch and the kernel's directives;
 * fills the effective grid, block and cluster dimensions. */
kemu_status exec_validate_launch(kemu_kernel *k, const kemu_launch_config *cfg, unsigned grid[3], unsigned block[3],
                                 unsigned cluster[3], const exec_arch *arch, kemu_error *err);

/* The vm_launch.peer_find of a launch on dev (a kemu_device *ctx): the
 * peers' allocations its kernels may reach. */
int exec_peer_find(void *ctx, uint64_t address, uint64_t size, mem_allocation *out, char *why, size_t n);

/* The architecture a launch of module mod runs as. */
const exec_arch *exec_module_arch(const kemu_module *mod);

/* For a report of a program that may not live to print its own (kemu exec):
 * the number of findings so far (0 without checkers), and the report of
 * them as kemu_check_results renders it, without the leak check (the
 * allocations still live are not leaks yet). */
size_t exec_check_count(kemu_device *dev);
kemu_status exec_check_snapshot(kemu_device *dev, int print_limit, kemu_check_summary *out, kemu_error *err);

#endif
