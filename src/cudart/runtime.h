/* Shared state of kemu's libcudart replacement: the registered fatbinaries,
 * kernels and variables of the host program, the emulated device, the
 * error state (sticky kernel faults, the per-thread last error), device
 * memory bookkeeping, and the helpers that every API file uses. One
 * recursive lock guards it all; work runs synchronously in issue order. */
#ifndef KEMU_CUDART_RUNTIME_H
#define KEMU_CUDART_RUNTIME_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cudart/cuda_abi.h"
#include "kemu/kemu.h"

#define CUDART_API __attribute__((visibility("default")))
/* Exports `name` as another name of the API function `target` defined in
 * the same file (the _ptsz / _ptds per-thread-stream variants). */
#define CUDART_ALIAS(name, target) CUDART_API __typeof__(target) name __attribute__((alias(#target)));

/* Several emulated devices (KEMU_DEVICES, docs/multigpu.md). */
#define CUDART_MAX_DEVICES KEMU_MAX_DEVICES

/* A fatbin's PTX as loaded on one device. */
typedef struct cudart_fatbin_on {
    int state;             /* 0 not loaded, 1 loaded, -1 failed to load */
    cudaError_t load_error;
    char *load_message;    /* why loading failed */
    kemu_module **modules; /* one per PTX found (several for -rdc=true) */
    int nmodules;
} cudart_fatbin_on;

/* One __cudaRegisterFatBinary call: a translation unit (or, for -rdc=true,
 * the whole device-linked program). Its PTX is loaded on a device at its
 * first use there. */
typedef struct cudart_fatbin_record {
    const void *wrapper;
    int index;             /* registration order, for names in messages */
    cudart_fatbin_on on[CUDART_MAX_DEVICES]; /* by device */
    unsigned ptx_sm;       /* the SM of the PTX chosen (highest PTX seen) */
    unsigned max_ptx_sm;   /* highest PTX SM in the fatbin, 0 if none */
} cudart_fatbin_record;

/* One __cudaRegisterFunction call: a host stub and the kernel it launches. */
typedef struct cudart_kernel_record {
    const void *host_function;
    char *name;
    cudart_fatbin_record *fatbin;
    kemu_kernel *kernel;         /* resolved on some device (for what all devices share: parameters,
                                  * attributes); NULL: on none */
    kemu_kernel *kernels[CUDART_MAX_DEVICES]; /* resolved on each device at its first launch there */
    int max_dynamic_shared;      /* cudaFuncAttributeMaxDynamicSharedMemorySize; -1: default */
    int carveout;
    int required_cluster[3];
    int non_portable_cluster;
} cudart_kernel_record;

/* One __cudaRegisterVar / __cudaRegisterManagedVar call. */
typedef struct cudart_var_record {
    const void *host_variable;   /* the host shadow (or managed pointer slot) */
    char *name;
    size_t size;
    int constant;
    int managed;
    cudart_fatbin_record *fatbin;
} cudart_var_record;

/* A pointer-keyed hash map (open addressing; NULL keys are not stored).
 * A zeroed struct is an empty map. Values are not owned by the map. */
typedef struct cudart_ptrmap {
    const void **keys;
    void **values;
    size_t cap, count;
} cudart_ptrmap;

/* The value stored under key, or NULL when absent. */
void *cudart_ptrmap_get(const cudart_ptrmap *m, const void *key);
/* Stores value under key (replacing); returns 0, or -1 when out of memory
 * or key is NULL. */
int cudart_ptrmap_put(cudart_ptrmap *m, const void *key, void *value);
/* Removes key (no-op when absent). Other entries may move. */
void cudart_ptrmap_remove(cudart_ptrmap *m, const void *key);
/* Frees the map's tables (not the values) and empties it. */
void cudart_ptrmap_free(cudart_ptrmap *m);

/* A stream (cudaStreamCreate*) and an event (cudaEventCreate*), with what
 * stream capture keeps on them (capture.c): the capture sequence a stream
 * takes part in and the graph nodes its next captured operation depends
 * on; for an event recorded during a capture, that capture and the nodes
 * the record stood for. */
/* cudaDeviceProp.accessPolicyMaxWindowSize (cudaStreamSetAttribute checks
 * access policy windows against it) */
#define CUDART_ACCESS_POLICY_MAX_WINDOW 134213632

struct CUstream_st {
    unsigned magic;
    unsigned flags;
    int device;         /* the device current when it was made */
    int priority;
    unsigned long long id;
    /* cudaStreamSetAttribute's values: access policy window,
     * synchronization policy, memory-sync domain map and domain (kept and
     * read back; kemu models no L2 or sync domains) */
    cudaLaunchAttributeValue attrs[4];
    struct cudart_capture *capture;
    cudaGraphNode_t *capture_deps;
    cudaGraphEdgeData *capture_edges; /* zeroed, as long as capture_deps */
    size_t ncapture_deps, capcapture_deps;
};

struct CUevent_st {
    unsigned magic;
    unsigned flags;
    int device;
    int recorded;
    double milliseconds; /* CLOCK_MONOTONIC at the record */
    unsigned long long capture_id; /* the capture its last record was captured in, 0 none */
    cudaGraphNode_t *capture_deps;
    size_t ncapture_deps;
};

/* The record behind a stream handle: a created stream, the calling thread's
 * per-thread default stream for cudaStreamPerThread, NULL for the legacy
 * stream (0, cudaStreamLegacy) and unknown handles. Call locked. */
struct CUstream_st *cudart_stream_record(cudaStream_t stream);

/* ---- stream capture hooks (capture.c) --------------------------------------
 * Every API call that enqueues work asks cudart_capture_stream first:
 * 0: run it now; 1: the stream is capturing, so record it as a graph node
 * with cudart_capture_node instead; -1: the call is illegal now (*err: the
 * legacy stream used while a blocking stream captures, an invalidated
 * capture). All locked. Work run by cudaGraphLaunch bypasses them. */
int cudart_capture_stream(cudaStream_t stream, cudaError_t *err);
/* Adds a node of `type` (enum cudaGraphNodeType; params as for
 * cudart_graph_add_node in graph.h) to the capture graph of `stream`,
 * depending on the stream's current dependencies, which it then replaces. */
cudaError_t cudart_capture_node(cudaStream_t stream, int type, const void *params, cudaGraphNode_t *out);
/* Work on a capturing stream that kemu cannot capture: invalidates the
 * capture and returns cudaErrorStreamCaptureUnsupported. */
cudaError_t cudart_capture_refuse(cudaStream_t stream);
/* For "potentially unsafe" calls (cudaMalloc, cudaFree, synchronous
 * copies ...): cudaErrorStreamCaptureUnsupported, invalidating the
 * captures concerned, when the calling thread's capture mode forbids them. */
cudaError_t cudart_capture_unsafe(void);
/* For cudaStreamSynchronize / cudaStreamQuery, cudaDeviceSynchronize, and
 * cudaEventSynchronize / cudaEventQuery: the error when the stream, the
 * device or the event is part of an active capture (which is invalidated). */
cudaError_t cudart_capture_sync_stream(cudaStream_t stream);
cudaError_t cudart_capture_sync_device(void);
cudaError_t cudart_capture_sync_event(cudaEvent_t event);
/* cudaEventRecord / cudaStreamWaitEvent on a capturing stream (or a wait on
 * an event captured elsewhere): *handled = 1 when capture took the call. */
cudaError_t cudart_capture_event_record(cudaEvent_t event, cudaStream_t stream, unsigned flags, int *handled);
cudaError_t cudart_capture_event_wait(cudaStream_t stream, cudaEvent_t event, unsigned flags, int *handled);
/* Forgets what a destroyed stream or event holds of capture. */
void cudart_capture_forget_stream(struct CUstream_st *s);
void cudart_capture_forget_event(struct CUevent_st *ev);

/* ---- stream-ordered memory (mempool.c) ---------------------------------------
 * cudaMallocAsync / cudaFreeAsync through the device's current pool, which
 * keeps freed blocks for reuse until a synchronization releases what lies
 * above its release threshold. cudart_pool_free returns 1 when ptr is no
 * pool allocation (the caller frees it as cudaFree would). Locked. */
cudaError_t cudart_pool_allocate(cudaMemPool_t pool, void **ptr, size_t size, cudaStream_t stream);
int cudart_pool_free(void *ptr, cudaStream_t stream, cudaError_t *err);
/* At synchronization points: pools give back what lies above their
 * release threshold. */
void cudart_pools_release(void);
/* Memory of graph allocation nodes: reserved when the node is made (its
 * address is fixed for good), live in the allocation table from the
 * node's launch until a free node's launch or cudaFree / cudaFreeAsync. */
cudaError_t cudart_graph_memory_reserve(size_t size, void **dptr);
int cudart_graph_memory_known(const void *dptr);
cudaError_t cudart_graph_memory_set_live(void *dptr, int live);
/* Device memory that pools keep and graph memory not live now (which
 * cudaMemGetInfo counts as used). */
size_t cudart_pools_reserved_unused(void);
/* cudaDeviceReset: forgets pools and graph memory (freed with the device). */
void cudart_pools_reset(void);
/* cudaDeviceReset: the memory of graph conditional handles on `device`
 * goes with it; those handles become unknown (graph_cond.c). Locked. */
void cudart_graph_conditionals_reset(const kemu_device *device);
/* The fatbin's load on the current device. */
cudart_fatbin_on *cudart_fatbin_here(cudart_fatbin_record *fb);
/* cudaDeviceReset: unloads the modules loaded through the driver API
 * (driver_module.c), which die with the device. Locked. */
void drv_forget_modules(void);

/* What kind of memory an allocation is (for cudaPointerGetAttributes). */
enum {
    CUDART_MEM_DEVICE = 0, /* cudaMalloc */
    CUDART_MEM_HOST,       /* cudaMallocHost, cudaHostAlloc */
    CUDART_MEM_MANAGED,    /* cudaMallocManaged */
    CUDART_MEM_REGISTERED, /* cudaHostRegister: host memory kernels cannot reach */
    CUDART_MEM_ARRAY,      /* the storage of a CUDA array */
    CUDART_MEM_SYMBOL,     /* a __device__ / __constant__ variable of a loaded module */
    CUDART_MEM_GRAPH       /* made live by a graph allocation node; its memory stays reserved */
};

typedef struct cudart_allocation {
    uint64_t base;
    size_t size;
    int kind;
    int device;         /* the device it was made on (current at the time) */
} cudart_allocation;

/* One emulated device: its kemu device (made at first use), its error
 * state, and whether a launch runs on it with the runtime's lock released
 * (several devices: launches of different host threads run concurrently). */
typedef struct cudart_dev {
    kemu_device *device;
    int failed;                  /* its creation failed */
    cudaError_t sticky_error;    /* a kernel fault seen by a synchronizing call */
    cudaError_t pending_error;   /* a kernel fault not yet seen */
    char *pending_message;
    int busy;                    /* a launch runs on it, the lock released */
    pthread_t busy_thread;
    unsigned char peer[CUDART_MAX_DEVICES]; /* peer access to device i enabled (cudaDeviceEnablePeerAccess) */
} cudart_dev;

typedef struct cudart_state {
    pthread_mutex_t lock; /* recursive */
    int initialized;
    /* configuration from the environment (kemu exec sets it) */
    char arch[32];          /* "sm_80"; empty: chosen from the PTX */
    int threads;
    char schedule[64];
    double timeout;
    double progress;          /* KEMU_PROGRESS: seconds between progress lines, 0: none */
    kemu_uninit uninit;
    int trace;              /* KEMU_CUDART_TRACE: log API calls to stderr */
    char dump_ptx_dir[512]; /* KEMU_DUMP_PTX: write the extracted PTX here */
    /* the devices: all emulate the same GPU */
    int ndevices;           /* KEMU_DEVICES, 1 by default */
    cudart_dev devs[CUDART_MAX_DEVICES];
    pthread_cond_t idle;    /* signalled when a device's launch ends */
    unsigned device_sm;     /* SM of the emulated devices */
    unsigned device_flags;
    size_t limits[7];
    /* registrations */
    cudart_fatbin_record **fatbins;
    int nfatbins, capfatbins;
    cudart_ptrmap kernels;  /* host stub -> cudart_kernel_record */
    cudart_ptrmap vars;     /* host shadow -> cudart_var_record */
    cudart_ptrmap managed_slots; /* managed pointer slot -> cudart_var_record */
    cudart_ptrmap streams;  /* live streams and events (handle -> handle) */
    cudart_ptrmap events;
    cudart_ptrmap arrays;   /* live CUDA arrays */
    cudart_ptrmap graphs;   /* live graphs, graph nodes, executable graphs, memory pools */
    cudart_ptrmap graph_nodes;
    cudart_ptrmap graph_execs;
    cudart_ptrmap pools;
    /* device printf output of launches not yet synchronized */
    char *printf_pending;
    size_t printf_length, printf_cap;
    /* memory */
    cudart_allocation *allocations; /* sorted by base */
    size_t nallocations, capallocations;
    size_t bytes_allocated;
} cudart_state;

extern cudart_state cudart_global;

/* Locks the runtime state (initializing it from the environment on first
 * use) and unlocks it. Every API entry point brackets its work with them. */
void cudart_lock(void);
void cudart_unlock(void);

/* The calling thread's current device (cudaSetDevice; 0 at first) and
 * its record. */
int cudart_current(void);
void cudart_set_current(int device);
cudart_dev *cudart_cur(void);

/* Creates the current emulated device (cudart_device_at: device `index`)
 * if needed and waits until no launch of another thread runs on it.
 * Returns cudaSuccess or an error (printed once to stderr) when kemu
 * cannot create it. Call locked. */
cudaError_t cudart_device(kemu_device **out);
cudaError_t cudart_device_at(int index, kemu_device **out);
/* Around a launch on device `device` (locked): with several devices, marks
 * it busy and releases the lock (however deep it is held), so that
 * launches on other devices run meanwhile; returns what the end takes (-1
 * with one device: nothing is released). */
int cudart_run_unlocked_begin(int device);
void cudart_run_unlocked_end(int device, int depth);
/* Waits (releasing the lock meanwhile) until no launch of another thread
 * runs on the devices of `mask` (bit i: device i; ~0u: all). Locked. */
void cudart_wait_idle(unsigned mask);
/* The device of an address in the memory table, or -1. Locked. */
int cudart_device_of(const void *ptr);
/* The kemu device that holds the memory at ptr: its allocation's device,
 * else the current one (may be NULL when not made yet). Locked. */
kemu_device *cudart_kemu_device_of(const void *ptr);

/* Records `err` as the calling thread's last error (unless cudaSuccess) and
 * returns it: `return cudart_result(e);` ends every API function. */
cudaError_t cudart_result(cudaError_t err);

/* For the start of an API call: returns the current device's sticky
 * error (a kernel fault already reported), or cudaSuccess. */
cudaError_t cudart_check_sticky(void);

/* A synchronization point: writes pending device printf output to stdout,
 * turns a pending kernel fault of the current device into its sticky
 * error (printing its message to stderr), and returns the sticky error.
 * cudart_synchronize_device does so for device `index`. Call locked. */
cudaError_t cudart_synchronize(void);
cudaError_t cudart_synchronize_device(int index);

/* Prints the checkers' findings on the device so far as `kemu exec --tool`
 * asked (KEMU_TOOL, KEMU_CHECK_* variables) and adds their counts to the
 * status file kemu exec reads. At exit and before cudaDeviceReset. Locked. */
void cudart_report_checks(void);

/* Under `kemu exec --tool`: when the findings changed, writes their report
 * to $KEMU_CHECK_SNAPSHOT_FILE, which kemu exec prints if the program ends
 * without printing its own (killed by a signal, _exit, a crash). After
 * each launch and host-side memory event. Locked. */
void cudart_check_snapshot(void);

/* Writes pending device printf output to stdout. Call locked. */
void cudart_flush_printf(void);
/* With --dump-ptx DIR (KEMU_DUMP_PTX): writes len bytes of PTX to DIR/name
 * and says so on stderr. */
void cudart_dump_ptx(const char *name, const char *ptx, size_t len);

/* Prints "kemu: cudaXxx is not supported yet" once per name (thread-safe). */
void cudart_warn_unsupported(const char *name);

/* Looks up the kernel record of a host stub (or a cudaKernel_t); NULL if
 * unknown. Call locked. */
cudart_kernel_record *cudart_find_kernel(const void *host_function);

/* Loads the PTX of a fatbin record if not loaded yet. Returns cudaSuccess
 * or the load error (message printed once). Call locked. */
cudaError_t cudart_fatbin_load(cudart_fatbin_record *fb);

/* Resolves the kemu kernel of a record, loading its module. Call locked. */
cudaError_t cudart_kernel_resolve(cudart_kernel_record *kr);

/* Launches a kernel: validates the configuration as CUDA does, runs it on
 * the emulator and records a fault as pending. cluster may be NULL.
 * Call unlocked (takes the lock). */
cudaError_t cudart_launch(cudart_kernel_record *kr, dim3 grid, dim3 block, void **args, size_t shared,
                          cudaStream_t stream, const unsigned *cluster, int cooperative);

/* racecheck across streams (stream.c, src/check/race_stream.c): the
 * calling thread's next stream operation on `stream` of `device` (what:
 * "kernel 'name'", "cudaMemcpyAsync"; host_waits: a synchronous copy),
 * its accesses (check_order_access) and its end. cudart_begin_copy begins
 * one for copies and sets (named by cudart_copy_api when a caller sets
 * it), which ends when the thread's outermost lock is released. A graph
 * launch runs its nodes as operations of its own stream
 * (cudart_order_graph_stream, set while it runs). No-ops without
 * racecheck. Locked. */
struct check_stream;
int cudart_order_on(void);
void cudart_order_begin(cudaStream_t stream, int device, const char *what, int host_waits);
void cudart_order_end(void);
/* Ends a launch's operation on kemu device dev (the parameter buffers of
 * its device launches are the runtime's, not the kernel's). */
void cudart_order_launch_end(kemu_device *dev);
void cudart_order_stream(cudaStream_t stream, int device, struct check_stream *out, char *name, size_t n);
extern _Thread_local const char *cudart_copy_api;
extern _Thread_local int cudart_copy_open;
extern _Thread_local cudaStream_t cudart_order_graph_stream;
extern _Thread_local int cudart_order_graph;

/* Whether a stream handle is valid (0, the legacy/per-thread handles, or a
 * live stream). Call locked. */
int cudart_stream_valid(cudaStream_t stream);

/* The memory table (sorted by base): records an allocation of a
 * CUDART_MEM_* kind (0, or -1 when out of memory) and forgets the one that
 * starts at base. Call locked. */
int cudart_allocation_add(uint64_t base, size_t size, int kind);
void cudart_allocation_remove(uint64_t base);
/* The allocation that contains [address, address + size) or NULL. */
const cudart_allocation *cudart_allocation_find(uint64_t address, size_t size);
/* Forgets every allocation of a device (cudaDeviceReset frees them with it). */
void cudart_allocations_clear(int device);

/* Allocation helpers shared by memory.c and array.c. cudart_allocate makes
 * an allocation of a CUDART_MEM_* kind (size 0 gives NULL); cudart_release
 * frees one that starts at ptr and is of kind1 or kind2 (synchronizing
 * first if asked). Both take the lock and record the last error. */
cudaError_t cudart_allocate(void **ptr, size_t size, int kind);
cudaError_t cudart_release(void *ptr, int kind1, int kind2, int synchronize);
/* Starts a copy or set, locked: the device, a valid stream, and pending
 * output and faults released when `synchronizing`. Returns the error. */
cudaError_t cudart_begin_copy(kemu_device **dev, int synchronizing, cudaStream_t stream);
/* A height-row copy of width bytes per row between pitched buffers, each
 * row checked as cudaMemcpy checks it. Locked. */
cudaError_t cudart_copy_2d(kemu_device *dev, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, int kind);

/* The memory behind a CUDA array handle: address, extent in elements
 * (height/depth 0 for fewer dimensions; layered: depth counts layers),
 * row pitch in bytes, channel format and cudaArray* flags. Returns 0, or
 * -1 for an unknown handle. Call locked. */
int cudart_array_describe(cudaArray_const_t array, uint64_t *address, size_t *width, size_t *height,
                          size_t *depth, size_t *pitch, struct cudaChannelFormatDesc *desc, unsigned *flags);
/* Level `level` of a mipmapped array and the level count; returns 0, or -1
 * for an unknown handle or a level past the last. Call locked. */
int cudart_mipmap_level(cudaMipmappedArray_const_t mipmap, unsigned level, cudaArray_t *array, unsigned *levels);

/* Facts about the emulated architecture and kernels that the public kemu
 * API does not give (introspect.c, which reads libkemu's internals). */
typedef struct cudart_arch_info {
    char name[16];
    int sm;
    int sm_count;
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    size_t shared_default;  /* per block without opt-in */
    size_t shared_optin;    /* per block with opt-in */
    int has_clusters;
    int threads_per_sm, blocks_per_sm;
    size_t shared_per_sm;
} cudart_arch_info;

/* Fills *info for the architecture named `arch` ("sm_80"); -1 if unknown. */
int cudart_arch_lookup(const char *arch, cudart_arch_info *info);
/* The nearest known architecture at or below sm, or the lowest known. */
void cudart_arch_for_sm(unsigned sm, cudart_arch_info *info);
/* Resident blocks per SM of architecture sm for a block size and shared
 * memory (static and dynamic); the device runtime's occupancy too. */
int cudart_arch_blocks_per_sm(unsigned sm, int block_size, size_t shared);

typedef struct cudart_kernel_info {
    size_t static_shared;   /* .shared bytes of the module */
    size_t const_bytes;
    size_t local_bytes;     /* per thread */
    int max_threads;        /* .maxntid product, or 0 */
    int reqntid[3];
    int ptx_version;        /* 90 for .version 9.0 */
    int target_sm;
} cudart_kernel_info;

/* Fills *info for a resolved kemu kernel. */
void cudart_kernel_introspect(const kemu_kernel *k, cudart_kernel_info *info);

/* The name ("cudaErrorIllegalAddress") and message of an error code, as
 * CUDA's runtime gives them (static strings; "unrecognized error code"
 * for unknown codes). */
const char *cudart_error_name(cudaError_t err);
const char *cudart_error_string(cudaError_t err);

/* The device properties of the emulated device (device.c), in CUDA 13's
 * layout and in CUDA 12's. */
void cudart_fill_properties(cudaDeviceProp *prop);
void cudart_fill_properties12(cudaDeviceProp12 *prop);
/* The global memory the device reports (and cudaMalloc allows in all). */
size_t cudart_device_memory_bytes(void);

/* Converts a kemu status of a host-side call into a CUDA error. */
cudaError_t cudart_error_from_status(kemu_status st);

/* Logs one API call to stderr when KEMU_CUDART_TRACE is set. */
void cudart_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* KEMU_CUDART_RUNTIME_H */
