/* The thin real-GPU path: run the very PTX text and launch that the
 * emulator runs, on a GPU through the CUDA driver API (loaded at run time,
 * see driver.h). One backend holds one device's primary context, at most
 * one loaded module with its kernel, and the device buffers allocated
 * through it. */
#ifndef KEMU_CUDA_BACKEND_H
#define KEMU_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "kemu/kemu.h"

typedef enum cuda_status {
    CUDA_STATUS_OK = 0,
    CUDA_STATUS_UNAVAILABLE,  /* no usable GPU: no driver library, no device, the driver
                                 or the device too old for this PTX or launch */
    CUDA_STATUS_FAILED,       /* a driver call failed: JIT error, bad launch configuration,
                                 out of device memory */
    CUDA_STATUS_KERNEL_FAULT  /* the kernel faulted; the context is unusable afterwards */
} cuda_status;

typedef struct cuda_backend cuda_backend;

/* Loads the driver, initializes it and makes device `ordinal`'s primary
 * context current. The caller owns *out (close it with cuda_backend_close).
 * Returns CUDA_STATUS_UNAVAILABLE with one line in msg saying which (no
 * library, cuInit failed and why, no such device), or CUDA_STATUS_OK. */
cuda_status cuda_backend_open(int ordinal, cuda_backend **out, char *msg, size_t len);

/* Frees the backend's buffers, unloads its module, releases the context
 * and unloads the driver. NULL is fine. */
void cuda_backend_close(cuda_backend *backend);

/* The device: its name as the driver gives it, its compute capability as
 * major*10+minor (90 for sm_90), its ordinal, and the driver version
 * (cuDriverGetVersion: 13000 for CUDA 13.0). Strings belong to the backend. */
const char *cuda_backend_device_name(const cuda_backend *backend);
int cuda_backend_device_sm(const cuda_backend *backend);
int cuda_backend_device_ordinal(const cuda_backend *backend);
int cuda_backend_driver_version(const cuda_backend *backend);

/* JIT-compiles PTX text (len bytes, need not be NUL-terminated) with
 * cuModuleLoadDataEx and looks up the kernel `kernel`. On a JIT error
 * returns CUDA_STATUS_FAILED (CUDA_STATUS_UNAVAILABLE when the driver is too
 * old for the PTX version or cannot JIT at all) with the driver error in
 * msg; the JIT's error log is then cuda_backend_jit_log. Replaces a module
 * loaded before. */
cuda_status cuda_backend_load_ptx(cuda_backend *backend, const char *text, size_t len, const char *kernel,
                                  char *msg, size_t msg_len);

/* The JIT error log of the last cuda_backend_load_ptx ("" when none); the
 * string belongs to the backend. */
const char *cuda_backend_jit_log(const cuda_backend *backend);

/* Allocates bytes of device memory (at least one byte) and stores its
 * address in *address; the backend frees it on close. Copies between host
 * and device memory. All return CUDA_STATUS_OK or CUDA_STATUS_FAILED (with
 * the driver error in msg). */
cuda_status cuda_backend_alloc(cuda_backend *backend, size_t bytes, uint64_t *address, char *msg, size_t len);
cuda_status cuda_backend_copy_to_device(cuda_backend *backend, uint64_t address, const void *source, size_t bytes,
                                        char *msg, size_t len);
cuda_status cuda_backend_copy_to_host(cuda_backend *backend, void *destination, uint64_t address, size_t bytes,
                                      char *msg, size_t len);

/* Launches the loaded kernel with the grid, block, cluster and dynamic
 * shared memory of cfg (zeros as in kemu_launch: grid/block 0 is 1, an
 * all-zero cluster is none) and `args` (one pointer per parameter, as
 * cuLaunchKernel takes them), and waits for it. Dynamic shared memory that
 * brings the kernel above 48 KiB raises the function's limit first.
 * *seconds gets the wall time from the launch call to the end of the
 * synchronization. Returns CUDA_STATUS_FAILED when the launch is refused,
 * CUDA_STATUS_UNAVAILABLE when it needs a driver feature that is missing
 * (clusters before CUDA 12), CUDA_STATUS_KERNEL_FAULT when the kernel
 * faulted (msg holds the driver's error name and text). */
cuda_status cuda_backend_launch(cuda_backend *backend, const kemu_launch_config *cfg, void **args, double *seconds,
                                char *msg, size_t len);

/* cuTensorMapEncodeTiled over device memory of this backend (dimension 0
 * innermost; no interleave, no L2 promotion). Returns CUDA_STATUS_OK,
 * CUDA_STATUS_UNAVAILABLE when the driver lacks it (before CUDA 12.0), or
 * CUDA_STATUS_FAILED with the driver's error in msg. */
cuda_status cuda_backend_encode_tensor_map(cuda_backend *backend, void *map, int data_type, unsigned rank,
                                           uint64_t address, const uint64_t *dims, const uint64_t *strides,
                                           const uint32_t *box, const uint32_t *element_strides, int swizzle,
                                           int oob_fill, char *msg, size_t len);

#endif
