/* kemu — a GPU kernel emulator: the public C API.
 *
 * kemu loads PTX (the virtual ISA that nvcc, clang, Triton, Numba and
 * JAX/Pallas emit), lowers it once to an internal bytecode and interprets it
 * on the CPU over a model of the GPU: devices, grids, clusters, blocks, warps
 * and threads with global, shared, local, constant and parameter memory.
 *
 * Every call returns a kemu_status; on failure it fills the caller's
 * kemu_error (when not NULL) with a message. The library never exits or
 * aborts the host process.
 */
#ifndef KEMU_KEMU_H
#define KEMU_KEMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEMU_VERSION_STRING "0.1.0"

typedef enum kemu_status {
    KEMU_OK = 0,
    KEMU_ERR_INVALID_ARGUMENT, /* a bad argument from the caller */
    KEMU_ERR_PARSE,            /* malformed or unsupported PTX */
    KEMU_ERR_NOT_FOUND,        /* no such kernel, symbol or file */
    KEMU_ERR_OUT_OF_MEMORY,    /* host or emulated device memory exhausted */
    KEMU_ERR_LAUNCH_CONFIG,    /* grid/block/cluster/shared memory out of limits */
    KEMU_ERR_KERNEL_FAULT,     /* the kernel faulted (see kemu_report.fault) */
    KEMU_ERR_UNSUPPORTED,      /* a feature kemu does not implement yet */
    KEMU_ERR_IO                /* a file could not be read or written */
} kemu_status;

/* An error record: the status, a one-line message and, for PTX errors, the
 * position of the offending token. */
typedef struct kemu_error {
    kemu_status status;
    char message[2048];
    char file[512];
    int line, column;
} kemu_error;

/* A short, static, human-readable name for a status ("parse error", ...). */
const char *kemu_status_string(kemu_status status);

/* The library's version as "MAJOR.MINOR.PATCH" (static string). */
const char *kemu_version(void);

typedef struct kemu_device kemu_device;
typedef struct kemu_module kemu_module;
typedef struct kemu_kernel kemu_kernel;

/* How uninitialized device memory (fresh allocations, shared memory) is
 * filled so that reads of it are visible. */
typedef enum kemu_uninit {
    KEMU_UNINIT_NAN = 0,   /* byte pattern 0xFF: NaN for floats, max for ints */
    KEMU_UNINIT_ZERO,      /* zero bytes */
    KEMU_UNINIT_PATTERN    /* byte pattern 0xCD */
} kemu_uninit;

typedef struct kemu_device_config {
    const char *arch;     /* "sm_80" ...; NULL: take the PTX .target */
    int threads;          /* host threads for blocks; 0: KEMU_THREADS or all cores */
    const char *schedule; /* NULL or "default", or "random:SEED" */
    double timeout;       /* seconds per launch; 0: none */
    kemu_uninit uninit;   /* fill of shared memory */
} kemu_device_config;

/* Creates an emulated device. cfg may be NULL for defaults. The caller owns
 * *out and releases it with kemu_device_destroy. */
kemu_status kemu_device_create(const kemu_device_config *cfg, kemu_device **out,
                               kemu_error *err);

/* Bounds every later launch on dev by steps instead of wall time: a block
 * that has executed `warp_instructions` warp-instructions faults at its
 * next loop back edge, indirect branch or call, naming where its warps are
 * (status 702, as a --timeout). The same launch stops at the same place on
 * any machine. 0 (the default, unless the environment variable
 * KEMU_STEP_LIMIT gives one at kemu_device_create) means no limit.
 * Returns KEMU_ERR_INVALID_ARGUMENT for a NULL device. */
kemu_status kemu_device_set_step_limit(kemu_device *dev, uint64_t warp_instructions, kemu_error *err);

/* The fidelity report (docs/fidelity.md, "How far to trust a run"): with
 * on = 1, every later launch on dev counts the thread-instructions it
 * executes, filed per kernel as exact, approximate (with the bound
 * measured on hardware), order-dependent (atomics), model-dependent
 * (clocks, timers, SM ids) or refused; on = 0 stops and forgets.
 * kemu_fidelity_report renders the launches so far: *text as lines
 * starting "kemu: fidelity", *json as a JSON array with one object per
 * kernel (either pointer may be NULL; free both with free()).
 * KEMU_ERR_INVALID_ARGUMENT for a NULL device, or one without the report. */
kemu_status kemu_device_set_fidelity_report(kemu_device *dev, int on, kemu_error *err);
kemu_status kemu_fidelity_report(kemu_device *dev, char **text, char **json, kemu_error *err);

/* Frees the device, its memory and every module loaded on it. */
void kemu_device_destroy(kemu_device *dev);

/* Says whether host threads may write the device's memory while a kernel
 * runs (a host thread setting a flag in pinned or managed memory that a
 * kernel polls). While they may, kemu never reports a spinning kernel as a
 * livelock (docs/robustness.md); by default they may not. */
void kemu_device_set_host_writes(kemu_device *dev, int may_write);

/* ---- several devices in one process (docs/multigpu.md) ----------------------
 * Devices created in one process are independent: each has its own memory,
 * modules and host threads. To let their kernels reach each other's memory
 * with one address space (unified addressing), give each an ordinal: */
#define KEMU_MAX_DEVICES 16
/* Maps dev's allocations into the ordinal-th range of device addresses
 * (0..KEMU_MAX_DEVICES-1; every device starts with range 0), so the
 * allocations of devices with different ordinals never overlap and an
 * address names its device. Only before the device's first allocation
 * (module load, kemu_malloc): KEMU_ERR_INVALID_ARGUMENT afterwards. */
kemu_status kemu_device_set_ordinal(kemu_device *dev, int ordinal, kemu_error *err);
/* Makes peer's memory known to the kernels launched on dev: with access 1
 * they load, store and do atomics on it (peer access enabled); with 0 such
 * an access faults as an illegal address whose message names the peer's
 * allocation and says that peer access is not enabled; a negative access
 * forgets the peer (before destroying it). Shared allocations of a known
 * peer (kemu_device_share_allocation) are reachable whatever the access.
 * Not while a kernel runs on dev. */
kemu_status kemu_device_set_peer_access(kemu_device *dev, kemu_device *peer, int access, kemu_error *err);
/* Marks the allocation that starts at address reachable from the kernels
 * of every device that knows dev as a peer (pinned host and managed
 * memory, which every GPU of a system maps). */
kemu_status kemu_device_share_allocation(kemu_device *dev, uint64_t address, kemu_error *err);

/* Writes a progress line to stderr every `interval` seconds of a launch
 * still running (blocks done of the total, warp-instructions per second);
 * 0, the default, writes none. */
void kemu_device_set_progress(kemu_device *dev, double interval);

/* Binds the PTX `.extern .func` named `name` to the host function `fn`, so
 * that kernels calling it run fn on the host through libffi, once per
 * calling thread in lane order, with arguments and return value converted
 * from the PTX parameter types (.u8-.u64/.s8-.s64/.b8-.b64 as integers of
 * that width, .f32 as float, .f64 as double, .b8 arrays as a pointer to
 * the bytes). Pointers a kernel passes are device addresses; global memory
 * addresses are directly usable host pointers. Bind before loading the
 * modules that call the function. With several host threads, blocks call
 * fn concurrently: it must be thread-safe (or use threads = 1). A name bound
 * twice is rebound. Returns KEMU_ERR_INVALID_ARGUMENT for NULL arguments. */
kemu_status kemu_device_bind_native(kemu_device *dev, const char *name, void (*fn)(void), kemu_error *err);

/* Parses and lowers PTX text (len bytes; need not be NUL-terminated).
 * `filename` is used in error messages only. On a PTX error returns
 * KEMU_ERR_PARSE with err->file/line/column set. The module belongs to the
 * device and is freed with it or by kemu_module_unload. */
kemu_status kemu_module_load_ptx(kemu_device *dev, const char *text, size_t len,
                                 const char *filename, kemu_module **out,
                                 kemu_error *err);

/* As kemu_module_load_ptx, reading the PTX from a file. */
kemu_status kemu_module_load_ptx_file(kemu_device *dev, const char *path,
                                      kemu_module **out, kemu_error *err);

/* Unloads a module: its kernels become invalid, its globals are freed. */
void kemu_module_unload(kemu_module *mod);

/* The number of .entry kernels in the module and the i-th one (NULL when i
 * is out of range). Kernels are owned by their module. */
int kemu_module_kernel_count(const kemu_module *mod);
kemu_kernel *kemu_module_kernel_at(kemu_module *mod, int index);

/* Looks a kernel up by its PTX entry name. KEMU_ERR_NOT_FOUND if absent. */
kemu_status kemu_module_get_kernel(kemu_module *mod, const char *name,
                                   kemu_kernel **out, kemu_error *err);

/* The device address of a module-scope .global or .const variable and its
 * size in bytes (for cudaMemcpyToSymbol-like use). */
kemu_status kemu_module_get_global(kemu_module *mod, const char *name,
                                   uint64_t *address, size_t *size,
                                   kemu_error *err);

/* Describes one kernel parameter as the PTX declares it. */
typedef struct kemu_param_info {
    const char *name;     /* PTX parameter name; owned by the kernel */
    const char *type;     /* ".u64", ".f32", ".b8" ... */
    size_t size;          /* bytes */
    size_t align;         /* bytes */
    size_t offset;        /* byte offset in the parameter buffer (CUDA ABI) */
    int is_array;         /* declared as .b8 name[N] (an aggregate by value) */
} kemu_param_info;

const char *kemu_kernel_name(const kemu_kernel *k);
int kemu_kernel_param_count(const kemu_kernel *k);
/* Fills *info for parameter i. KEMU_ERR_INVALID_ARGUMENT if i is out of range. */
kemu_status kemu_kernel_param(const kemu_kernel *k, int i, kemu_param_info *info);

/* Device memory. Addresses are 64-bit device addresses valid in kernels.
 * Fresh allocations are filled according to `uninit`. */
kemu_status kemu_malloc(kemu_device *dev, size_t size, kemu_uninit uninit,
                        uint64_t *address, kemu_error *err);
/* Frees an allocation made by kemu_malloc; an address that is not the start
 * of a live allocation returns KEMU_ERR_INVALID_ARGUMENT. */
kemu_status kemu_free(kemu_device *dev, uint64_t address, kemu_error *err);
kemu_status kemu_memcpy_htod(kemu_device *dev, uint64_t dst, const void *src,
                             size_t size, kemu_error *err);
/* As kemu_memcpy_htod, for the "uninitialized" fill of a fresh buffer:
 * the bytes it writes still count as never written for initcheck. */
kemu_status kemu_fill_uninit(kemu_device *dev, uint64_t dst, const void *src, size_t size, kemu_error *err);
kemu_status kemu_memcpy_dtoh(kemu_device *dev, void *dst, uint64_t src,
                             size_t size, kemu_error *err);
kemu_status kemu_memcpy_dtod(kemu_device *dev, uint64_t dst, uint64_t src,
                             size_t size, kemu_error *err);
kemu_status kemu_memset(kemu_device *dev, uint64_t dst, int value,
                        size_t size, kemu_error *err);
/* For host-side code that reads or writes device memory in place (kemu's
 * device addresses are host addresses), such as kemu's cuBLAS: tells the
 * checkers. A write marks [address, address + size) initialized for
 * initcheck, as a copy into it would. A read of `height` rows of `width`
 * bytes, `pitch` bytes apart, makes initcheck report (once) the bytes of it
 * never written, naming `who` ("cublasSgemm_v2 argument A"). The ranges
 * must lie inside one allocation (KEMU_ERR_INVALID_ARGUMENT). */
kemu_status kemu_note_host_write(kemu_device *dev, uint64_t address, size_t size, kemu_error *err);
kemu_status kemu_note_host_read(kemu_device *dev, uint64_t address, size_t width, size_t height, size_t pitch,
                                const char *who, kemu_error *err);

typedef struct kemu_launch_config {
    unsigned grid[3];      /* blocks per grid; 0 is taken as 1 */
    unsigned block[3];     /* threads per block; 0 is taken as 1 */
    unsigned cluster[3];   /* blocks per cluster; all 0: none (or .reqnctapercluster) */
    size_t shared_bytes;   /* dynamic shared memory */
    int cooperative;       /* all blocks co-resident, grid-wide sync (cudaLaunchCooperativeKernel) */
} kemu_launch_config;

/* The outcome of a launch. Strings are owned by the report and freed by
 * kemu_report_free. */
typedef struct kemu_report {
    int faulted;                /* the kernel faulted; fault_message says how */
    char fault_message[2048];
    char *printf_output;        /* device printf text, in deterministic order */
    size_t printf_length;
    uint64_t warp_instructions; /* warp-instructions executed */
    uint64_t thread_instructions; /* lane-instructions executed */
    double seconds;             /* wall time of the launch */
} kemu_report;

/* Launches kernel k. `args` holds one pointer per parameter to its value, as
 * cuLaunchKernel takes them. Blocks until the kernel completes. A kernel
 * fault returns KEMU_ERR_KERNEL_FAULT with report->fault_message set (report
 * may be NULL). Device printf output is collected in the report, or written
 * to stdout when report is NULL. */
kemu_status kemu_launch(kemu_kernel *k, const kemu_launch_config *cfg,
                        void **args, kemu_report *report, kemu_error *err);

/* Frees the strings held by a report (not the report itself). */
void kemu_report_free(kemu_report *report);

/* ---- textures and surfaces ------------------------------------------------- */

/* Address modes, filter modes and read modes, with the values of the CUDA
 * runtime's enums (cudaTextureAddressMode, cudaTextureFilterMode,
 * cudaTextureReadMode). */
enum { KEMU_ADDRESS_WRAP = 0, KEMU_ADDRESS_CLAMP = 1, KEMU_ADDRESS_MIRROR = 2, KEMU_ADDRESS_BORDER = 3 };
enum { KEMU_FILTER_POINT = 0, KEMU_FILTER_LINEAR = 1 };
enum { KEMU_READ_ELEMENT_TYPE = 0, KEMU_READ_NORMALIZED_FLOAT = 1 };
/* Channel kinds (cudaChannelFormatKind values). */
enum { KEMU_CHANNEL_SIGNED = 0, KEMU_CHANNEL_UNSIGNED = 1, KEMU_CHANNEL_FLOAT = 2 };

/* Layout flags of a texture (kemu_texture_desc.layout): a layered texture
 * has `depth` layers of 1D (height 0) or 2D images; a cubemap has six
 * square faces as layers 0-5 (+x, -x, +y, -y, +z, -z); a layered cubemap
 * has depth = 6 * cubemaps. */
enum { KEMU_TEXTURE_LAYERED = 1, KEMU_TEXTURE_CUBEMAP = 4 };
#define KEMU_TEXTURE_MAX_LEVELS 16

/* One mipmap level below the base level: its own memory and extent (the
 * layer count stays the base level's depth for layered textures). */
typedef struct kemu_texture_level {
    uint64_t address;
    unsigned width, height, depth;
    size_t pitch;                    /* 0: packed */
} kemu_texture_level;

/* A texture or surface over device memory: width (x height x depth)
 * elements of `channels` channels of `channel_bits` bits each, rows
 * `pitch` bytes apart (0: packed), slices pitch * height apart. */
typedef struct kemu_texture_desc {
    uint64_t address;
    unsigned width, height, depth;   /* height/depth 0 for fewer dimensions */
    size_t pitch;
    int channels;                    /* 1, 2 or 4 */
    int channel_bits;                /* 8, 16 or 32 */
    int channel_kind;                /* KEMU_CHANNEL_*; 16-bit float is f16 */
    int address_mode[3];             /* KEMU_ADDRESS_* per dimension */
    int filter_mode;                 /* KEMU_FILTER_* */
    int read_mode;                   /* KEMU_READ_* */
    int normalized_coords;
    float border_color[4];
    unsigned layout;                 /* KEMU_TEXTURE_LAYERED | KEMU_TEXTURE_CUBEMAP, or 0 */
    /* mipmaps: levels[0..num_levels-2] are levels 1.. (num_levels 0 or 1:
     * only the base level); the level of detail is clamped to
     * [min_lod, max_lod] after adding lod_bias; mipmap_filter_mode is
     * KEMU_FILTER_POINT (nearest level) or KEMU_FILTER_LINEAR (blend two) */
    int num_levels;
    kemu_texture_level levels[KEMU_TEXTURE_MAX_LEVELS - 1];
    int mipmap_filter_mode;
    float lod_bias, min_lod, max_lod;
} kemu_texture_desc;

/* Creates a texture/surface object; *handle is the 64-bit value kernels
 * receive as cudaTextureObject_t / cudaSurfaceObject_t. The memory must
 * stay allocated while the object is used. */
kemu_status kemu_texture_create(kemu_device *dev, const kemu_texture_desc *desc, uint64_t *handle, kemu_error *err);
kemu_status kemu_texture_destroy(kemu_device *dev, uint64_t handle, kemu_error *err);

/* ---- tensor maps (TMA) ------------------------------------------------------ */

/* A CUtensorMap is 128 bytes, 64-byte aligned; kernels take it as a
 * `.param .align 64 .b8 p[128]` (__grid_constant__) or read it from global
 * memory, and cp.async.bulk.tensor copies boxes of the tensor it describes
 * between global and shared memory. */
#define KEMU_TENSOR_MAP_BYTES 128

/* The values of CUDA's CUtensorMapDataType, CUtensorMapInterleave,
 * CUtensorMapSwizzle, CUtensorMapL2promotion and CUtensorMapFloatOOBfill. */
enum { KEMU_TMAP_UINT8 = 0, KEMU_TMAP_UINT16, KEMU_TMAP_UINT32, KEMU_TMAP_INT32, KEMU_TMAP_UINT64, KEMU_TMAP_INT64,
       KEMU_TMAP_FLOAT16, KEMU_TMAP_FLOAT32, KEMU_TMAP_FLOAT64, KEMU_TMAP_BFLOAT16, KEMU_TMAP_FLOAT32_FTZ,
       KEMU_TMAP_TFLOAT32, KEMU_TMAP_TFLOAT32_FTZ };
enum { KEMU_TMAP_INTERLEAVE_NONE = 0, KEMU_TMAP_INTERLEAVE_16B, KEMU_TMAP_INTERLEAVE_32B };
enum { KEMU_TMAP_SWIZZLE_NONE = 0, KEMU_TMAP_SWIZZLE_32B, KEMU_TMAP_SWIZZLE_64B, KEMU_TMAP_SWIZZLE_128B };
enum { KEMU_TMAP_OOB_FILL_ZERO = 0, KEMU_TMAP_OOB_FILL_NAN = 1 };

/* cuTensorMapEncodeTiled for kemu: writes into tensor_map (128 bytes) the
 * map of a tensor of `rank` (1..5) dimensions at global_address, dimension
 * 0 innermost: global_dim[rank] elements, global_strides[rank-1] bytes
 * between neighbours in dimensions 1.., box_dim[rank] elements copied per
 * dimension, element_strides[rank] traversal steps. It checks what the
 * driver checks (alignments, ranges, box and swizzle sizes) and returns
 * KEMU_ERR_INVALID_ARGUMENT with the rule broken in err, or
 * KEMU_ERR_UNSUPPORTED for interleaved layouts and the packed types. The
 * L2 promotion is accepted and ignored. */
kemu_status kemu_tensor_map_encode_tiled(void *tensor_map, int data_type, unsigned rank, uint64_t global_address,
                                         const uint64_t *global_dim, const uint64_t *global_strides,
                                         const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                         int swizzle, int l2_promotion, int oob_fill, kemu_error *err);

/* ---- checkers ------------------------------------------------------------ */

/* Tools (bit flags) that observe every launch on a device. */
enum { KEMU_TOOL_MEMCHECK = 1, KEMU_TOOL_RACECHECK = 2, KEMU_TOOL_INITCHECK = 4, KEMU_TOOL_SYNCCHECK = 8 };

/* How a class of findings is reported. KEMU_CHECK_AUTO (racecheck_warp
 * only; elsewhere it means KEMU_CHECK_WARN) decides per launch: an error
 * when the kernel runs with independent thread scheduling (its PTX
 * .target and the device both sm_70 or newer), a warning otherwise (a
 * .target below sm_70 keeps Pascal's lockstep warps, as nvcc's
 * -arch=compute_60 -code=sm_70 does on a GPU). */
typedef enum kemu_check_level { KEMU_CHECK_OFF = 0, KEMU_CHECK_WARN, KEMU_CHECK_ERROR, KEMU_CHECK_AUTO } kemu_check_level;

typedef struct kemu_check_config {
    unsigned tools;                     /* KEMU_TOOL_* flags; 0 turns checking off */
    kemu_check_level racecheck_warp;    /* lanes of one warp without __syncwarp (the CLI's default: auto) */
    kemu_check_level racecheck_benign;  /* write-write conflicts storing the same value (default: warn) */
    int leak_check;                     /* memcheck: report allocations still live at kemu_check_results */
} kemu_check_config;

/* Enables (or, with tools == 0, disables) checkers on a device. Findings
 * accumulate over the following launches until kemu_check_results. */
kemu_status kemu_device_set_checks(kemu_device *dev, const kemu_check_config *cfg, kemu_error *err);

/* The findings so far, sorted deterministically: `text` in the format
 * compute-sanitizer users know ("========= Error: ...", ending with
 * "========= ERROR SUMMARY: N errors"), printing at most print_limit
 * findings (0: all), and `json` with every finding. Owned by the summary. */
typedef struct kemu_check_summary {
    size_t errors, warnings;
    char *text;
    char *json;
} kemu_check_summary;
kemu_status kemu_check_results(kemu_device *dev, int print_limit, kemu_check_summary *out, kemu_error *err);
void kemu_check_summary_free(kemu_check_summary *s);

#ifdef __cplusplus
}
#endif
#endif /* KEMU_KEMU_H */
