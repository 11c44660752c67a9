/* kemu's CUDA driver API (libcuda.so.1): the cu* entry points, built into
 * kemu's libcudart so that the driver API and the runtime share one
 * emulated device, one memory table, the same streams, events and sticky
 * errors (docs/driver.md). This header holds the driver's ABI types that
 * the implementation needs (laid out as in CUDA 13.0's cuda.h) and the
 * helpers shared by driver.c and driver_module.c. */
#ifndef KEMU_CUDART_DRIVER_H
#define KEMU_CUDART_DRIVER_H

#include "cudart/runtime.h"

#include <stddef.h>
#include <stdint.h>

#define DRIVER_API __attribute__((visibility("default")))
/* Exports `name` as another name of `target` (same file). */
#define DRIVER_ALIAS(name, target) DRIVER_API __typeof__(target) name __attribute__((alias(#target)));

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct drv_context *CUcontext;
typedef struct drv_module *CUmodule;
typedef struct drv_module *CUlibrary;
typedef struct cudart_kernel_record *CUfunction;
typedef struct cudart_kernel_record *CUkernel;
typedef struct drv_link *CUlinkState;
typedef cudaStream_t CUstream;
typedef cudaEvent_t CUevent;

/* CUresult values used by name in the implementation */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_INVALID_SOURCE = 300,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999
};

/* A context. kemu has one device and one address space: every context of
 * it sees the same memory, modules, streams and events (docs/driver.md). */
struct drv_context {
    unsigned magic;
    int primary;
    unsigned flags;
    int refcount; /* primary: retains */
    int alive;
    int device;   /* the device it stands for: a call in it works on that device */
};

/* A module (cuModuleLoad*) or library (cuLibraryLoad*): one PTX text
 * loaded on the device, wrapped in a fatbin record that is loaded already
 * so that the runtime's launch path takes its kernels as it takes nvcc's. */
struct drv_module {
    unsigned magic;
    int is_library;
    int device;        /* the device of the context it was loaded in */
    cudart_fatbin_record fb;
    cudart_kernel_record **functions;
    int nfunctions, capfunctions;
    uint64_t *globals; /* bases entered in the memory table */
    int nglobals, capglobals;
};

/* CUDA_MEMCPY3D (cuda.h of CUDA 13.0). */
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} drv_memcpy3d;

_Static_assert(sizeof(drv_memcpy3d) == 200, "CUDA_MEMCPY3D");

/* The runtime functions the driver calls (defined in the runtime's files). */
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device);
cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device);
cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *bus_id);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags);
cudaError_t cudaDeviceDisablePeerAccess(int peer);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceSetLimit(int limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t *value, int limit);
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaHostGetDevicePointer(void **device_ptr, void *host_ptr, unsigned int flags);
cudaError_t cudaHostGetFlags(unsigned int *flags, void *host_ptr);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t stream);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                   size_t height, int kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                   size_t height, int kind, cudaStream_t stream);
cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags);
cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority);
cudaError_t cudaStreamSetAttribute(cudaStream_t stream, int attr, const cudaLaunchAttributeValue *value);
cudaError_t cudaStreamGetAttribute(cudaStream_t stream, int attr, cudaLaunchAttributeValue *value);
cudaError_t cudaCtxResetPersistingL2Cache(void);
cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long *id);
cudaError_t cudaStreamGetDevice(cudaStream_t stream, int *device);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *user_data,
                   unsigned int flags);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user_data);
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *ptr, size_t length, unsigned int flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *function);
cudaError_t cudaFuncSetAttribute(const void *function, int attr, int value);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *num_blocks, const void *function,
                   int block_size, size_t dynamic_shared, unsigned int flags);
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamic_shared, const void *function,
                   int num_blocks, int block_size);

/* The runtime's error as a CUresult (the codes coincide above 100). */
CUresult drv_error(cudaError_t e);

/* Whether cuInit has run (CUDA_ERROR_NOT_INITIALIZED before), and a
 * current context exists (CUDA_ERROR_INVALID_CONTEXT otherwise). */
CUresult drv_check_context(void);
CUresult drv_check_init(void);

/* The start of one side of a driver copy (CU_MEMORYTYPE_*: host, device,
 * unified or a CUDA array, whose storage, row pitch and rows it gives:
 * kemu's arrays are pitched linear memory; rows may be NULL); -2 when
 * invalid. */
int drv_copy_side(int type, const void *host, CUdeviceptr device, void *array, size_t *pitch, size_t *rows,
                  const char **out);

/* Runtime calls made for the driver must not change the runtime's
 * per-thread last error: drv_rt_save before, drv_rt_done after (it maps
 * the error). */
cudaError_t drv_rt_save(void);
CUresult drv_rt_done(cudaError_t saved, cudaError_t e);

/* Runs one runtime call for the driver and returns its result: context
 * check, the runtime's last error kept. */
#define RT_CALL(call)                                                                                                  \
    do {                                                                                                               \
        CUresult r_ = drv_check_context();                                                                             \
        if (r_)                                                                                                        \
            return r_;                                                                                                 \
        cudaError_t saved_ = drv_rt_save();                                                                            \
        return drv_rt_done(saved_, (call));                                                                            \
    } while (0)

/* CUmemorytype */
enum { MEMTYPE_HOST = 1, MEMTYPE_DEVICE = 2, MEMTYPE_ARRAY = 3, MEMTYPE_UNIFIED = 4 };

/* The function record of a CUfunction / CUkernel handle, or NULL. Locked. */
cudart_kernel_record *drv_function(CUfunction f);

#endif /* KEMU_CUDART_DRIVER_H */
