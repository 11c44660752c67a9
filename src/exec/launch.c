/* kemu_launch: validates a launch against the architecture and the
 * kernel's directives, builds the parameter buffer, and runs the grid's
 * blocks over host threads (OpenMP). Blocks are independent; the result is
 * the same for every thread count: printf output is concatenated in block
 * order and the fault reported is the one of the lowest faulting block. */
#include "config.h"
#include "exec/exec.h"
#include "exec/fidelity.h"
#include "exec/devrt.h"
#include "vm/vm.h"
#include "check/check.h"
#include "debug/debug.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CALL_STACK_BYTES (32u * 1024u)
/* The least stack a call takes on the GPU, locals or not: ptxas (CUDA
 * 13.0, sm_80) gives a recursive __noinline__ function with no locals and
 * no parameters a 16-byte stack frame (its return address and a saved
 * register). kemu's call stack of CALL_STACK_BYTES holds as many of those
 * (2048) nested calls; deeper, a call faults as a call stack overflow. */
#define CALL_MIN_FRAME_BYTES 16u
#define HEAP_BYTES (8u * 1024u * 1024u)

typedef struct block_output {
    uint64_t id;
    char *text;
    size_t len, dropped;
    char *notes;            /* "kemu: note: ..." lines, or NULL */
    uint32_t nnotes, notes_dropped;
} block_output;

/* Notes written to stderr per launch; the rest are counted in one line. */
#define LAUNCH_MAX_NOTES 10

static int host_threads(const kemu_device *dev)
{
    int n = dev->cfg.threads;
    if (n <= 0) {
        const char *env = getenv("KEMU_THREADS");
        if (env && atoi(env) > 0)
            n = atoi(env);
    }
#ifdef _OPENMP
    if (n <= 0)
        n = omp_get_num_procs();
#endif
    return n > 0 ? n : 1;
}

/* The progress line of a long launch (kemu_device_set_progress), written
 * by the watchdog thread while the launch runs. */
typedef struct launch_progress {
    const vm_launch *L;
    uint64_t nblocks;
    uint64_t blocks_done;       /* atomic: blocks run to the end */
    double start, last_time;
    uint64_t last_instructions;
} launch_progress;

static void progress_tick(void *ctx)
{
    launch_progress *p = ctx;
    double now = vm_now();
    uint64_t done = __atomic_load_n(&p->blocks_done, __ATOMIC_RELAXED);
    uint64_t instr = __atomic_load_n(&p->L->progress_warp_instructions, __ATOMIC_RELAXED);
    double rate = now > p->last_time ? (double)(instr - p->last_instructions) / (now - p->last_time) : 0;
    fprintf(stderr, "kemu: kernel '%s' running for %.0f s: %llu of %llu blocks done, %.3g warp-instructions/s\n",
            p->L->kernel->name, now - p->start, (unsigned long long)done, (unsigned long long)p->nblocks, rate);
    fflush(stderr);
    p->last_time = now;
    p->last_instructions = instr;
}

static int cmp_output(const void *a, const void *b)
{
    const block_output *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

kemu_status exec_validate_launch(kemu_kernel *k, const kemu_launch_config *cfg, unsigned grid[3], unsigned block[3],
                                 unsigned cluster[3], const exec_arch *arch, kemu_error *err)
{
    const bc_function *fn = k->fn;
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++) {
        grid[i] = cfg->grid[i] ? cfg->grid[i] : 1;
        block[i] = cfg->block[i] ? cfg->block[i] : 1;
        cluster[i] = cfg->cluster[i];
        if (grid[i] > arch->max_grid_dim[i])
            return util_error(err, KEMU_ERR_LAUNCH_CONFIG, "grid %c dimension %u exceeds the %s limit of %u",
                              axis[i], grid[i], arch->name, arch->max_grid_dim[i]);
        if (block[i] > arch->max_block_dim[i])
            return util_error(err, KEMU_ERR_LAUNCH_CONFIG, "block %c dimension %u exceeds the %s limit of %u",
                              axis[i], block[i], arch->name, arch->max_block_dim[i]);
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > arch->max_threads_per_block)
        return util_error(err, KEMU_ERR_LAUNCH_CONFIG, "%llu threads per block exceed the %s limit of %u",
                          (unsigned long long)threads, arch->name, arch->max_threads_per_block);
    if (fn->reqntid[0]) {
        for (int i = 0; i < 3; i++)
            if (block[i] != (fn->reqntid[i] ? fn->reqntid[i] : 1))
                return util_error(err, KEMU_ERR_LAUNCH_CONFIG,
                                  "kernel '%s' requires a block of %u,%u,%u threads (.reqntid); the launch has %u,%u,%u",
                                  fn->name, fn->reqntid[0], fn->reqntid[1] ? fn->reqntid[1] : 1,
                                  fn->reqntid[2] ? fn->reqntid[2] : 1, block[0], block[1], block[2]);
    }
    if (fn->maxntid[0]) {
        uint64_t mx = (uint64_t)fn->maxntid[0] * (fn->maxntid[1] ? fn->maxntid[1] : 1) * (fn->maxntid[2] ? fn->maxntid[2] : 1);
        if (threads > mx)
            return util_error(err, KEMU_ERR_LAUNCH_CONFIG,
                              "kernel '%s' allows at most %llu threads per block (.maxntid); the launch has %llu",
                              fn->name, (unsigned long long)mx, (unsigned long long)threads);
    }
    if (!cluster[0] && !cluster[1] && !cluster[2] && fn->reqnctapercluster[0])
        for (int i = 0; i < 3; i++)
            cluster[i] = fn->reqnctapercluster[i] ? fn->reqnctapercluster[i] : 1;
    if (cluster[0] || cluster[1] || cluster[2]) {
        if (!arch->has_clusters)
            return util_error(err, KEMU_ERR_LAUNCH_CONFIG, "clusters need sm_90 or later (the device is %s)", arch->name);
        uint64_t n = 1;
        for (int i = 0; i < 3; i++) {
            if (!cluster[i])
                cluster[i] = 1;
            if (grid[i] % cluster[i])
                return util_error(err, KEMU_ERR_LAUNCH_CONFIG,
                                  "grid %c dimension %u is not a multiple of the cluster dimension %u", axis[i],
                                  grid[i], cluster[i]);
            n *= cluster[i];
        }
        if (n > 8)
            return util_error(err, KEMU_ERR_LAUNCH_CONFIG, "a cluster of %llu blocks exceeds the portable limit of 8",
                              (unsigned long long)n);
    }
    uint64_t shared = fn->shared_static_size + cfg->shared_bytes;
    if (shared > arch->max_shared_optin)
        return util_error(err, KEMU_ERR_LAUNCH_CONFIG,
                          "%llu bytes of shared memory per block (%llu static + %zu dynamic) exceed the %s limit of %llu",
                          (unsigned long long)shared, (unsigned long long)fn->shared_static_size,
                          cfg->shared_bytes, arch->name, (unsigned long long)arch->max_shared_optin);
    if (cfg->shared_bytes && !k->mod->bc->has_dynamic_shared)
        (void)0; /* dynamic shared memory nobody declares is allowed (CUDA allows it) */
    return KEMU_OK;
}

static kemu_status launch(kemu_kernel *k, const kemu_launch_config *cfg, void **args, kemu_report *report,
                          kemu_error *err, unsigned depth, check_cdp *race_parent, check_cdp **race_out);

/* Runs the launches the threads of a grid of kernel `parent` made (CUDA
 * dynamic parallelism), in the order exec_cdp_grid_done put them, each
 * with all its own descendants before the next. Their printf output is
 * appended to text and their instruction counts added. A child's fault
 * stops the rest and becomes the parent's: KEMU_ERR_KERNEL_FAULT with the
 * child's message (in msg too), which says who launched it. */
/* A queued device-side copy or set (cudaMemcpy(2D)Async, cudaMemset(2D)Async),
 * row by row through the checked copies that tell the checkers (initcheck
 * sees what it reads and writes). Its ranges were checked when it was
 * queued; one that is no longer inside an allocation (freed since, with
 * device-side cudaFree) faults the launch of kernel `parent`. */
static kemu_status run_memory_op(exec_grid_cdp *g, const exec_cdp_child *c, const bc_function *parent, char *msg,
                                 size_t msg_size, kemu_error *err)
{
    kemu_device *dev = g->dev;
    const char *what = c->op == EXEC_CDP_OP_COPY ? "cudaMemcpyAsync" : "cudaMemsetAsync";
    kemu_error e;
    memset(&e, 0, sizeof e);
    kemu_status st = KEMU_OK;
    if (c->op == EXEC_CDP_OP_COPY)
        st = kemu_note_host_read(dev, c->src, c->width, c->height, c->spitch, "a device-side cudaMemcpyAsync", &e);
    for (uint64_t row = 0; !st && row < c->height; row++)
        st = c->op == EXEC_CDP_OP_COPY
                 ? kemu_memcpy_dtod(dev, c->dst + row * c->dpitch, c->src + row * c->spitch, c->width, &e)
                 : kemu_memset(dev, c->dst + row * c->dpitch, c->value, c->width, &e);
    if (!st)
        return KEMU_OK;
    int len = snprintf(msg, msg_size, "kernel '%s' faulted: illegal address: a device-side %s of %llu x %llu bytes: "
                       "%s\n  made by block (%u,%u,%u), thread (%u,%u,%u)", parent->name, what,
                       (unsigned long long)c->height, (unsigned long long)c->width, e.message, c->ctaid[0],
                       c->ctaid[1], c->ctaid[2], c->tid[0], c->tid[1], c->tid[2]);
    if (len < 0 || (size_t)len >= msg_size)
        msg[msg_size - 1] = 0;
    return util_error(err, KEMU_ERR_KERNEL_FAULT, "%s", msg);
}

static kemu_status run_children(exec_grid_cdp *g, const bc_function *parent, util_buffer *text, uint64_t *winstr,
                                uint64_t *tinstr, char *msg, size_t msg_size, kemu_error *err)
{
    for (size_t i = 0; i < g->nchildren; i++) {
        exec_cdp_child *c = &g->children[i];
        if (c->op != EXEC_CDP_OP_LAUNCH) {
            kemu_status st = run_memory_op(g, c, parent, msg, msg_size, err);
            if (st)
                return st;
            continue;
        }
        const bc_function *fn = c->kernel->fn;
        void *argv[256];
        void **args = fn->nparams <= 256 ? argv : malloc((size_t)fn->nparams * sizeof *args);
        if (!args)
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
        for (int p = 0; p < fn->nparams; p++)
            args[p] = c->params + fn->params[p].offset;
        exec_cdp_started(g->dev);
        kemu_report r;
        kemu_error e;
        memset(&e, 0, sizeof e);
        check_cdp *child_race = NULL;
        kemu_status st = launch(c->kernel, &c->cfg, args, &r, &e, g->depth + 1, g->race,
                                g->race ? &child_race : NULL);
        check_cdp_child_done(g->race, c->mark, child_race, fn->name);
        check_cdp_free(child_race);
        if (args != argv)
            free(args);
        free(c->params);
        c->params = NULL;
        if (r.printf_length)
            util_buffer_append(text, r.printf_output, r.printf_length);
        *winstr += r.warp_instructions;
        *tinstr += r.thread_instructions;
        kemu_report_free(&r);
        if (st == KEMU_ERR_KERNEL_FAULT) {
            int len = snprintf(msg, msg_size, "%s\n  in a grid of '%s' launched from device code by block (%u,%u,%u), "
                     "thread (%u,%u,%u) of kernel '%s'", e.message, fn->name, c->ctaid[0], c->ctaid[1],
                     c->ctaid[2], c->tid[0], c->tid[1], c->tid[2], parent->name);
            if (len < 0 || (size_t)len >= msg_size)
                msg[msg_size - 1] = 0; /* cut: the child's own message comes first */
            return util_error(err, KEMU_ERR_KERNEL_FAULT, "%s", msg);
        }
        if (st)
            return util_error(err, st, "device launch of '%s' from kernel '%s': %s", fn->name, parent->name,
                              e.message);
    }
    return KEMU_OK;
}

static kemu_status launch(kemu_kernel *k, const kemu_launch_config *cfg, void **args, kemu_report *report,
                          kemu_error *err, unsigned depth, check_cdp *race_parent, check_cdp **race_out)
{
    if (race_out)
        *race_out = NULL;
    if (report)
        memset(report, 0, sizeof *report);
    if (!k || !cfg)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kemu_launch: NULL kernel or configuration");
    kemu_module *mod = k->mod;
    kemu_device *dev = mod->dev;
    const exec_arch *arch = exec_module_arch(mod);
    vm_launch L;
    memset(&L, 0, sizeof L);
    kemu_status st = exec_validate_launch(k, cfg, L.grid, L.block, L.cluster, arch, err);
    if (st)
        return st;
    const bc_function *fn = k->fn;
    if (fn->nparams && !args)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "kernel '%s' takes %d parameters but args is NULL",
                          fn->name, fn->nparams);
    L.mod = mod->bc;
    L.kernel = fn;
    L.mem = &dev->mem;
    if (dev->npeers) {
        L.peer_find = exec_peer_find;
        L.peer_ctx = dev;
    }
    L.ptx_filename = mod->ptx->filename;
    L.loc_files = mod->loc_files;
    L.nloc_files = mod->nloc_files;
    L.nthreads_per_block = (uint64_t)L.block[0] * L.block[1] * L.block[2];
    L.param_size = fn->param_size;
    L.params = calloc(1, fn->param_size ? fn->param_size : 1);
    if (!L.params)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < fn->nparams; i++) {
        if (!args[i]) {
            free(L.params);
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "argument %d ('%s') is NULL", i, fn->params[i].name);
        }
        memcpy(L.params + fn->params[i].offset, args[i], fn->params[i].size);
    }
    L.const_bank = mod->const_bank;
    L.const_size = mod->bc->const_size;
    L.shared_static = fn->shared_static_size;
    if (mod->bc->has_dynamic_shared) {
        uint64_t a = mod->bc->shared_align;
        L.shared_static = (L.shared_static + a - 1) / a * a;
    }
    L.shared_dynamic = cfg->shared_bytes;
    int uses_calls = 0;
    uint64_t max_frame = 0;
    for (int i = 0; i < mod->bc->nfunctions; i++) {
        if (mod->bc->functions[i]->uses_calls)
            uses_calls = 1;
        if (mod->bc->functions[i]->local_size > max_frame)
            max_frame = mod->bc->functions[i]->local_size;
    }
    L.local_stride = fn->local_size + (uses_calls ? CALL_STACK_BYTES + max_frame : 0);
    L.local_stride = (L.local_stride + 15) & ~15ull;
    L.uninit_byte = dev->cfg.uninit == KEMU_UNINIT_ZERO ? 0 : dev->cfg.uninit == KEMU_UNINIT_PATTERN ? 0xcd : 0xff;
    /* the uninitialized fill by load type: what out-of-bounds loads read
     * in kemu call's interpret mode, and in a mapped granule under the
     * checkers (check_launch_begin) */
    uint8_t oob_fill[VM_OOB_FILL_CLASSES * VM_OOB_FILL_BYTES];
    memset(oob_fill, L.uninit_byte, sizeof oob_fill);
    if (dev->cfg.uninit != KEMU_UNINIT_ZERO && dev->cfg.uninit != KEMU_UNINIT_PATTERN) {
        for (int k = 1; k < 5; k++) /* the largest signed value (NaN for floats) of 1 << (k-1) bytes */
            for (int i = (1 << (k - 1)) - 1; i < VM_OOB_FILL_BYTES; i += 1 << (k - 1))
                oob_fill[k * VM_OOB_FILL_BYTES + i] = 0x7f;
        memset(oob_fill + 5 * VM_OOB_FILL_BYTES, 1, VM_OOB_FILL_BYTES); /* bools: true */
    }
    L.fill_patterns = oob_fill;
    if (dev->oob_reads_fill) {
        L.oob_fill = oob_fill;
        L.oob_shared_class = dev->oob_shared_class;
    }
    L.shared_init = dev->shared_init;
    L.shared_init_size = dev->shared_init_size;
    static uint64_t launch_serial;
    L.serial = __atomic_add_fetch(&launch_serial, 1, __ATOMIC_RELAXED);
    L.random_schedule = dev->random_schedule;
    L.schedule_seed = dev->schedule_seed;
    L.timeout = dev->cfg.timeout;
    L.step_limit = dev->step_limit;
    L.printf_fifo = dev->printf_fifo_size;
    L.start_time = vm_now();
    L.max_call_depth = CALL_STACK_BYTES / CALL_MIN_FRAME_BYTES;
    L.abort_id = UINT64_MAX;
    L.arch_sm = arch->sm;
    /* a spinning cluster may be proven stuck only where the run is closed:
     * a deterministic schedule, and no input from outside (clocks, host
     * functions, host threads writing device memory) */
    int reads_outside = 0;
    for (int i = 0; i < mod->bc->nfunctions && !reads_outside; i++) {
        const bc_function *f = mod->bc->functions[i];
        if (f->is_entry && f != fn)
            continue; /* other kernels: never called */
        if (f->builtin == BC_BUILTIN_NATIVE + 1)
            reads_outside = 1;
        for (uint32_t pc = 0; pc < f->ncode && !reads_outside; pc++)
            if (f->code[pc].code == BC_S2R && f->code[pc].mode >= BC_SR_CLOCK &&
                f->code[pc].mode <= BC_SR_GLOBALTIMER_HI)
                reads_outside = 1;
            else if (f->code[pc].code == BC_S2R && f->code[pc].mode == BC_SR_PM)
                reads_outside = 1;
    }
    L.livelock_check = !dev->random_schedule && !dev->host_may_write && !reads_outside;
    /* how long a cluster runs before the check starts (a tuning knob;
     * the tests shorten it) */
    const char *grace = getenv("KEMU_LIVELOCK_GRACE");
    L.livelock_grace = grace && atof(grace) >= 0 ? atof(grace) : 1.0;
    L.textures = dev->textures;
    L.ntextures = dev->ntextures;
    L.call_native = exec_call_native;
    L.native_ctx = mod;
    if (mod->uses_malloc && !dev->heap_base) {
        uint64_t bytes = dev->heap_request ? dev->heap_request : HEAP_BYTES;
        if (mem_alloc(&dev->mem, bytes, 0, MEM_KIND_HEAP, &dev->heap_base)) {
            free(L.params);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory for the device heap (%llu bytes)",
                              (unsigned long long)bytes);
        }
        dev->heap_size = bytes;
        pthread_mutex_init(&dev->heap_lock, NULL);
    }
    L.heap_base = dev->heap_base;
    L.heap_size = dev->heap_size;
    L.heap_used = dev->heap_used;
    L.heap_lock = dev->heap_base ? &dev->heap_lock : NULL;

    uint64_t nblocks = (uint64_t)L.grid[0] * L.grid[1] * L.grid[2];
    uint64_t coop_workspace = 0;
    if (cfg->cooperative) {
        /* every block co-resident: the whole grid runs as one group on one
         * host thread; %envreg1:%envreg2 hold the grid-sync workspace */
        uint64_t per_sm = 2048 / (L.nthreads_per_block ? L.nthreads_per_block : 1);
        if (per_sm > 32)
            per_sm = 32;
        uint64_t limit = per_sm * (uint64_t)arch->sm_count;
        const char *why = NULL;
        if (nblocks > limit)
            why = "more blocks than can be co-resident";
        else if (L.cluster[0] || L.cluster[1] || L.cluster[2])
            why = "clusters";
        if (why) {
            free(L.params);
            return util_error(err, why[0] == 'm' ? KEMU_ERR_LAUNCH_CONFIG : KEMU_ERR_UNSUPPORTED,
                              "cooperative launch of %llu blocks: %s%s (at most %llu blocks on %s)",
                              (unsigned long long)nblocks, why[0] == 'm' ? "" : "not supported with ", why,
                              (unsigned long long)limit, arch->name);
        }
        /* racecheck keeps a vector clock over the group's warps for each of
         * them, twice (clocks and clocks at the last fence): 8 * U * U bytes
         * for U warps. 2048 warps (a cooperative grid of 64K threads) take
         * 32 MiB; a thread-block cluster has at most 16 * 32 = 512. */
        const uint64_t race_max_warps = 2048;
        uint64_t warps_per_block = (L.nthreads_per_block + VM_WARP - 1) / VM_WARP;
        if ((check_session_tools(dev->checks) & KEMU_TOOL_RACECHECK) && nblocks * warps_per_block > race_max_warps) {
            free(L.params);
            return util_error(err, KEMU_ERR_UNSUPPORTED,
                              "cooperative launch of %llu blocks: racecheck supports cooperative launches of at "
                              "most %llu warps in all (%llu blocks of %llu warp%s here)",
                              (unsigned long long)nblocks, (unsigned long long)race_max_warps,
                              (unsigned long long)nblocks, (unsigned long long)warps_per_block,
                              warps_per_block == 1 ? "" : "s");
        }
        if (mem_alloc(&dev->mem, 256, 0, MEM_KIND_MODULE_GLOBALS, &coop_workspace)) {
            free(L.params);
            return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory for the grid-sync workspace");
        }
        L.envreg[1] = (uint32_t)(coop_workspace >> 32);
        L.envreg[2] = (uint32_t)coop_workspace;
    }
    /* --timeout: the watchdog flags the launch at start_time + timeout;
     * blocks stop at their next check of the flag */
    exec_watchdog_timer deadline;
    launch_progress progress = {&L, nblocks, 0, L.start_time, L.start_time, 0};
    /* no deadline while a debugger's user looks at a stopped kernel */
    double deadline_at = L.timeout > 0 && dbg_keeps_timeout(dbg_active) ? L.start_time + L.timeout : 0;
    L.deadline = deadline_at;
    st = exec_watchdog_arm_ticking(&dev->watchdog, &deadline, deadline_at, &L.expired, dev->progress_interval,
                                   progress_tick, &progress, err);
    if (st) {
        if (coop_workspace)
            mem_free(&dev->mem, coop_workspace);
        free(L.params);
        return st;
    }
    /* dynamic parallelism: the launches the grid's threads make */
    exec_grid_cdp cdp;
    int cdp_on = mod->uses_devrt;
    if (cdp_on) {
        st = exec_cdp_begin(&cdp, mod, depth, err);
        if (st) {
            exec_watchdog_disarm(&dev->watchdog, &deadline);
            if (coop_workspace)
                mem_free(&dev->mem, coop_workspace);
            free(L.params);
            return st;
        }
        L.devrt = &cdp.devrt;
    }
    if (dev->checks)
        L.hooks = check_launch_begin(dev->checks, &L);
    if (cdp_on && dev->checks)
        cdp.race = check_cdp_begin(dev->checks, &L, race_parent, dev->cdp_pool_base, dev->cdp_pool_size);
    /* the debugger (or --trace) wraps the checkers' hooks; the launch
     * then runs on one host thread, so runs replay identically */
    dbg_environment_start();
    dbg *debugger = dbg_active;
    if (debugger)
        L.hooks = dbg_launch_begin(debugger, &L, L.hooks, L.fault_hooks);
    /* the fidelity report counts in front of them all */
    exec_fidelity_launch *fidelity = dev->fidelity ? exec_fidelity_begin(dev->fidelity, &L, &L.hooks) : NULL;
    /* the livelock proof waits a wall-clock grace: not while a user may sit
     * at a stop, and not where a run must replay identically (Ctrl-C stops
     * a spinning kernel under the debugger) */
    if (debugger && !dbg_keeps_timeout(debugger))
        L.livelock_check = 0;
    unsigned cl[3];
    for (int i = 0; i < 3; i++)
        cl[i] = cfg->cooperative ? L.grid[i] : L.cluster[i] ? L.cluster[i] : 1;
    unsigned ncl[3] = {L.grid[0] / cl[0], L.grid[1] / cl[1], L.grid[2] / cl[2]};
    uint64_t nclusters = (uint64_t)ncl[0] * ncl[1] * ncl[2];
    int nthreads = debugger ? 1 : host_threads(dev);
    if ((uint64_t)nthreads > nclusters)
        nthreads = (int)nclusters;
    L.single_host_thread = nthreads == 1;
    L.clusters_unfinished = nclusters;
    block_output **outs = calloc((size_t)nthreads, sizeof *outs);
    size_t *nouts = calloc((size_t)nthreads, sizeof *nouts), *capouts = calloc((size_t)nthreads, sizeof *capouts);
    vm_fault best_fault;
    memset(&best_fault, 0, sizeof best_fault);
    uint64_t best_fault_id = UINT64_MAX;
    uint64_t winstr = 0, tinstr = 0;
    int oom = 0;
    if (!outs || !nouts || !capouts) {
        exec_fidelity_end(fidelity, &L);
        if (cdp_on) {
            check_cdp_free(cdp.race);
            exec_cdp_free(&cdp);
        }
        exec_watchdog_disarm(&dev->watchdog, &deadline);
        free(outs);
        free(nouts);
        free(capouts);
        free(L.params);
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* clusters taken at a time: one for small grids (balance); for large
     * grids of short blocks, enough that taking them is not what the
     * threads wait on, still at least 64 chunks a thread */
    uint64_t chunk64 = nclusters / ((uint64_t)nthreads * 64);
    uint64_t chunk = chunk64 < 1 ? 1 : chunk64 > 16 ? 16 : chunk64;
    /* each thread takes the next chunk of clusters until none is left, a
     * block faulted before them, or the watchdog expired the launch (so a
     * grid of 2^31 blocks stops as soon as the others do) */
    uint64_t next_cluster = 0, blocks_done = 0;
    int stopped_by_timeout = 0;
    double t0 = vm_now();
#pragma omp parallel num_threads(nthreads) reduction(+ : winstr, tinstr, blocks_done)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        int group = (int)(cl[0] * cl[1] * cl[2]);
        /* a top-level launch takes this host thread's cluster of the last
         * one, when it has room (a cooperative launch runs the whole grid
         * as one cluster: allocating and clearing it every time cost more
         * than small kernels ran) */
        int cached = depth == 0 && tid < EXEC_CLUSTER_CACHE;
        vm_cluster *cluster = cached ? __atomic_exchange_n(&dev->cluster_cache[tid], NULL, __ATOMIC_ACQ_REL) : NULL;
        if (cluster && cluster->cap < group) {
            vm_cluster_free(cluster);
            free(cluster);
            cluster = NULL;
        }
        if (!cluster) {
            cluster = calloc(1, sizeof *cluster);
            if (cluster) {
                cluster->blocks = calloc((size_t)group, sizeof *cluster->blocks);
                cluster->cap = cluster->blocks ? group : 0;
            }
        }
        unsigned (*ctaids)[3] = malloc((size_t)group * sizeof *ctaids);
        uint64_t *ids = malloc((size_t)group * sizeof *ids);
        if (!cluster || !cluster->blocks || !ctaids || !ids) {
            __atomic_store_n(&oom, 1, __ATOMIC_RELAXED);
            if (cluster) {
                vm_cluster_free(cluster);
                free(cluster->blocks);
            }
            free(cluster);
            cluster = NULL;
        }
        int stop = !cluster;
        while (!stop) {
            uint64_t first = __atomic_fetch_add(&next_cluster, chunk, __ATOMIC_RELAXED);
            if (first >= nclusters)
                break;
            uint64_t end = nclusters - first < chunk ? nclusters : first + chunk;
            for (uint64_t ci = first; ci < end && !stop; ci++) {
                unsigned cx = (unsigned)(ci % ncl[0]), cy = (unsigned)(ci / ncl[0] % ncl[1]);
                unsigned cz = (unsigned)(ci / ((uint64_t)ncl[0] * ncl[1]));
                int n = 0;
                for (unsigned rz = 0; rz < cl[2]; rz++)
                    for (unsigned ry = 0; ry < cl[1]; ry++)
                        for (unsigned rx = 0; rx < cl[0]; rx++) {
                            ctaids[n][0] = cx * cl[0] + rx;
                            ctaids[n][1] = cy * cl[1] + ry;
                            ctaids[n][2] = cz * cl[2] + rz;
                            ids[n] = ctaids[n][0] + (uint64_t)ctaids[n][1] * L.grid[0] +
                                     (uint64_t)ctaids[n][2] * L.grid[0] * L.grid[1];
                            n++;
                        }
                /* a thread's clusters come in increasing block order: once a
                 * block before this one faulted, so did one before the rest */
                if (__atomic_load_n(&L.abort_id, __ATOMIC_RELAXED) < ids[0]) {
                    stop = 1;
                    break;
                }
                if (vm_launch_expired(&L, NULL)) {
                    __atomic_store_n(&stopped_by_timeout, 1, __ATOMIC_RELAXED);
                    stop = 1;
                    break;
                }
                for (int i = 0; i < n; i++)
                    cluster->blocks[i].warp_instructions = cluster->blocks[i].thread_instructions = 0;
                int rc = vm_cluster_run(cluster, &L, n, (const unsigned (*)[3])ctaids, ids);
                __atomic_sub_fetch(&L.clusters_unfinished, 1, __ATOMIC_RELAXED);
                if (!rc) {
                    blocks_done += (uint64_t)n;
                    __atomic_add_fetch(&progress.blocks_done, (uint64_t)n, __ATOMIC_RELAXED);
                }
                for (int i = 0; i < n; i++) {
                    vm_block *blk = &cluster->blocks[i];
                    winstr += blk->warp_instructions;
                    tinstr += blk->thread_instructions;
                    if (blk->printf_out.len || blk->printf_dropped || blk->nnotes || blk->notes_dropped) {
                        if (util_grow(&outs[tid], &capouts[tid], nouts[tid] + 1, sizeof(block_output))) {
                            __atomic_store_n(&oom, 1, __ATOMIC_RELAXED);
                        } else {
                            outs[tid][nouts[tid]++] = (block_output){ids[i],          blk->printf_out.data,
                                                                     blk->printf_out.len, blk->printf_dropped,
                                                                     blk->notes.data,  blk->nnotes,
                                                                     blk->notes_dropped};
                            memset(&blk->printf_out, 0, sizeof blk->printf_out);
                            memset(&blk->notes, 0, sizeof blk->notes);
                        }
                    }
                    util_buffer_free(&blk->printf_out);
                    util_buffer_free(&blk->notes);
                    blk->printf_dropped = 0;
                    blk->nnotes = blk->notes_dropped = 0;
                    if (rc && blk->fault.faulted) {
#pragma omp critical(kemu_fault)
                        {
                            if (ids[i] < best_fault_id) {
                                best_fault_id = ids[i];
                                best_fault = blk->fault;
                            }
                        }
                    }
                }
            }
        }
        if (cluster && cached) {
            vm_cluster_park(cluster);
            cluster = __atomic_exchange_n(&dev->cluster_cache[tid], cluster, __ATOMIC_ACQ_REL);
        }
        if (cluster) {
            vm_cluster_free(cluster);
            free(cluster);
        }
        free(ctaids);
        free(ids);
    }
    exec_watchdog_disarm(&dev->watchdog, &deadline);
    double seconds = vm_now() - t0;
    /* expired between blocks, with no warp running to name: the fault
     * says how far the grid got (printf output of every completed block
     * is kept) */
    int timed_out_between_blocks = best_fault_id == UINT64_MAX && stopped_by_timeout;
    if (timed_out_between_blocks) {
        best_fault.faulted = 1;
        best_fault.status = 702;
        snprintf(best_fault.message, sizeof best_fault.message,
                 "kernel '%s' faulted: the launch timed out after %g seconds (--timeout) between blocks; "
                 "%llu of %llu blocks completed",
                 fn->name, L.timeout, (unsigned long long)blocks_done, (unsigned long long)nblocks);
    }
    if (coop_workspace)
        mem_free(&dev->mem, coop_workspace);
    int debugger_end = debugger ? dbg_launch_end(debugger, &L, best_fault.faulted ? &best_fault : NULL) : 0;
    if (dev->checks)
        check_launch_end(dev->checks, &L, best_fault.faulted ? &best_fault : NULL);
    exec_fidelity_end(fidelity, &L);
    if (cdp_on)
        exec_cdp_grid_done(&cdp);
    dev->heap_used = L.heap_used;
    /* gather printf output in block order */
    size_t total = 0;
    for (int t = 0; t < nthreads; t++)
        total += nouts[t];
    block_output *all = calloc(total + 1, sizeof *all);
    size_t n = 0;
    for (int t = 0; t < nthreads; t++) {
        if (all && nouts[t])
            memcpy(all + n, outs[t], nouts[t] * sizeof *all);
        n += nouts[t];
        free(outs[t]);
    }
    /* in block order, up to the FIFO size; the rest is dropped with a note */
    util_buffer text = {0};
    size_t dropped = 0;
    uint64_t notes_shown = 0, notes_left = 0;
    if (all) {
        qsort(all, total, sizeof *all, cmp_output);
        for (size_t i = 0; i < total; i++) {
            if (all[i].id <= best_fault_id || best_fault_id == UINT64_MAX) {
                dropped += all[i].dropped;
                if (text.len + all[i].len <= L.printf_fifo)
                    util_buffer_append(&text, all[i].text, all[i].len);
                else
                    dropped += all[i].len;
                /* notes (stderr): the first of the launch in block order */
                const char *line = all[i].notes;
                for (uint32_t k = 0; k < all[i].nnotes && line; k++) {
                    const char *end = strchr(line, '\n');
                    size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
                    if (notes_shown < LAUNCH_MAX_NOTES) {
                        fwrite(line, 1, n, stderr);
                        notes_shown++;
                    } else {
                        notes_left++;
                    }
                    line += n;
                }
                notes_left += all[i].notes_dropped;
            }
            free(all[i].text);
            free(all[i].notes);
        }
    }
    if (notes_left)
        fprintf(stderr, "kemu: note: %llu more note%s like these in kernel '%s' not shown\n",
                (unsigned long long)notes_left, notes_left == 1 ? "" : "s", fn->name);
    if (debugger_end & 1)
        text.len = 0; /* a replayed or killed run: already printed, or not wanted */
    if (dropped && !(debugger_end & 1))
        util_buffer_printf(&text, "[kemu] the printf FIFO (cudaLimitPrintfFifoSize, %zu bytes) was full: %zu bytes of "
                                  "printf output were dropped\n",
                           L.printf_fifo, dropped);
    free(all);
    free(outs);
    free(nouts);
    free(capouts);
    free(L.params);
    /* the grid has ended: now the grids its threads launched, unless it
     * faulted (a GPU's context is lost then) */
    kemu_status child_st = KEMU_OK;
    char child_fault[sizeof best_fault.message];
    if (cdp_on) {
        if (best_fault_id == UINT64_MAX && !timed_out_between_blocks && !oom && !debugger_end)
            child_st = run_children(&cdp, fn, &text, &winstr, &tinstr, child_fault, sizeof child_fault, err);
        if (race_out)
            *race_out = cdp.race;
        else
            check_cdp_free(cdp.race);
        exec_cdp_free(&cdp);
    }
    if (report) {
        report->printf_output = text.data;
        report->printf_length = text.len;
        report->warp_instructions = winstr;
        report->thread_instructions = tinstr;
        report->seconds = seconds;
    } else {
        if (text.len)
            fwrite(text.data, 1, text.len, stdout);
        util_buffer_free(&text);
    }
    if (oom)
        return util_error(err, KEMU_ERR_OUT_OF_MEMORY, "out of memory collecting printf output");
    if (child_st == KEMU_ERR_KERNEL_FAULT && report) {
        report->faulted = 1;
        snprintf(report->fault_message, sizeof report->fault_message, "%s", child_fault);
    }
    if (child_st)
        return child_st;
    if (best_fault_id != UINT64_MAX || timed_out_between_blocks) {
        if (report) {
            report->faulted = 1;
            snprintf(report->fault_message, sizeof report->fault_message, "%s", best_fault.message);
        }
        return util_error(err, KEMU_ERR_KERNEL_FAULT, "%s", best_fault.message);
    }
    if (debugger_end & 2)
        return util_error(err, KEMU_ERR_KERNEL_FAULT, "kernel '%s' faulted: killed by the debugger", fn->name);
    return KEMU_OK;
}

void kemu_report_free(kemu_report *r)
{
    if (!r)
        return;
    free(r->printf_output);
    r->printf_output = NULL;
    r->printf_length = 0;
}

/* Device memory as it was before a launch, for the debugger to go back
 * inside the launch (dbg_launch_replay_*): every live allocation's bytes
 * and the device heap's fill level. */
typedef struct replay_snapshot {
    size_t n;
    uint64_t *base, *size;
    uint8_t **bytes;
    uint64_t heap_used;
} replay_snapshot;

static void snapshot_free(replay_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->bytes[i]);
    free(s->base);
    free(s->size);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

/* 0, or -1 with why (too much memory to copy, out of host memory). */
static int snapshot_take(kemu_device *dev, replay_snapshot *s, char *why, size_t n)
{
    memset(s, 0, sizeof *s);
    const mem_space *m = &dev->mem;
    uint64_t total = 0, limit = 1024ull << 20;
    const char *e = getenv("KEMU_DEBUG_REPLAY_MB");
    if (e && *e)
        limit = strtoull(e, NULL, 10) << 20;
    for (size_t i = 0; i < m->count; i++)
        total += m->allocs[i].size;
    if (total > limit) {
        snprintf(why, n, "the device holds %llu MiB, more than the %llu MiB a replay may copy (KEMU_DEBUG_REPLAY_MB)",
                 (unsigned long long)(total >> 20), (unsigned long long)(limit >> 20));
        return -1;
    }
    s->base = calloc(m->count + 1, sizeof *s->base);
    s->size = calloc(m->count + 1, sizeof *s->size);
    s->bytes = calloc(m->count + 1, sizeof *s->bytes);
    if (!s->base || !s->size || !s->bytes)
        goto oom;
    for (size_t i = 0; i < m->count; i++) {
        const mem_allocation *a = &m->allocs[i];
        s->bytes[i] = malloc(a->size ? a->size : 1);
        if (!s->bytes[i])
            goto oom;
        memcpy(s->bytes[i], (const void *)(uintptr_t)a->base, a->size);
        s->base[i] = a->base;
        s->size[i] = a->size;
        s->n = i + 1;
    }
    s->heap_used = dev->heap_used;
    return 0;
oom:
    snapshot_free(s);
    snprintf(why, n, "out of host memory copying the device's %llu MiB", (unsigned long long)(total >> 20));
    return -1;
}

/* Puts memory back as it was (allocations the launch cannot create or
 * free, so the same ones are live). */
static void snapshot_restore(kemu_device *dev, const replay_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (mem_find(&dev->mem, s->base[i], s->size[i] ? s->size[i] : 1))
            memcpy((void *)(uintptr_t)s->base[i], s->bytes[i], s->size[i]);
    dev->heap_used = s->heap_used;
}

kemu_status kemu_launch(kemu_kernel *k, const kemu_launch_config *cfg, void **args, kemu_report *report,
                        kemu_error *err)
{
    dbg_environment_start();
    dbg *d = dbg_active;
    replay_snapshot snap;
    memset(&snap, 0, sizeof snap);
    int replayable = 0;
    if (d && k && dbg_launch_replay_enabled(d)) {
        char why[160] = "";
        replayable = snapshot_take(k->mod->dev, &snap, why, sizeof why) == 0;
        dbg_launch_replay_unavailable(d, replayable ? NULL : why);
    }
    kemu_status st;
    check_session *checks = replayable ? k->mod->dev->checks : NULL;
    for (;;) {
        check_mark mark = {0, 0};
        if (checks)
            mark = check_mark_now(checks);
        st = launch(k, cfg, args, report, err, 0, NULL, NULL);
        if (!replayable || !dbg_launch_replay_pending(d))
            break;
        /* the debugger goes back inside this launch: run it again from
         * the memory it started with, quietly up to the point asked for;
         * the checkers forget what the abandoned run found */
        if (report)
            kemu_report_free(report);
        if (checks)
            check_rollback(checks, mark);
        snapshot_restore(k->mod->dev, &snap);
        dbg_launch_replay_begin(d);
    }
    snapshot_free(&snap);
    dbg_environment_after_launch();
    return st;
}
