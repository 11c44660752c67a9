/* The part of the CUDA driver API's binary interface that kemu's thin GPU
 * path uses: handle and value types, the few enum values it passes or
 * tests, the launch-configuration structs and the prototypes of the entry
 * points it resolves with dlsym. Declared here, not taken from cuda.h, so
 * that kemu builds where CUDA is not installed; the values and layouts were
 * transcribed from CUDA 13.0's cuda.h (CUDA_VERSION 13000), and the
 * static assertions below pin the struct layouts on LP64 hosts. The names
 * are CUDA's, because they are the names of the specification.
 *
 * The stand-in driver (tests/cuda-standin/) implements these same
 * prototypes, so it includes this header too. Entry points whose cuda.h
 * name is a macro for a versioned symbol are listed with the symbol name
 * that the library exports (cuMemAlloc is cuMemAlloc_v2, and so on). */
#ifndef KEMU_CUDA_DRIVER_ABI_H
#define KEMU_CUDA_DRIVER_ABI_H

#include <stddef.h>

typedef int CUresult;                 /* enum cudaError_enum */
typedef int CUdevice;                 /* CUdevice_v1 */
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 (64-bit hosts) */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

/* CUresult values that kemu reacts to or that the stand-in returns, with
 * the name cuGetErrorName gives and a short description (used when the
 * driver cannot name a code itself). X(name, value, description). */
#define CUDA_DRIVER_ERRORS(X) \
    X(CUDA_SUCCESS, 0, "no error") \
    X(CUDA_ERROR_INVALID_VALUE, 1, "invalid argument") \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2, "out of memory") \
    X(CUDA_ERROR_NOT_INITIALIZED, 3, "initialization error") \
    X(CUDA_ERROR_DEINITIALIZED, 4, "driver shutting down") \
    X(CUDA_ERROR_STUB_LIBRARY, 34, "CUDA driver is a stub library") \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36, "API call is not supported in the installed CUDA driver") \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46, "CUDA-capable device(s) is/are busy or unavailable") \
    X(CUDA_ERROR_NO_DEVICE, 100, "no CUDA-capable device is detected") \
    X(CUDA_ERROR_INVALID_DEVICE, 101, "invalid device ordinal") \
    X(CUDA_ERROR_INVALID_IMAGE, 200, "device kernel image is invalid") \
    X(CUDA_ERROR_INVALID_CONTEXT, 201, "invalid device context") \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209, "no kernel image is available for execution on the device") \
    X(CUDA_ERROR_INVALID_PTX, 218, "a PTX JIT compilation failed") \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221, "PTX JIT compiler library not found") \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222, "the provided PTX was compiled with an unsupported toolchain") \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223, "PTX JIT compilation was disabled") \
    X(CUDA_ERROR_INVALID_HANDLE, 400, "invalid resource handle") \
    X(CUDA_ERROR_NOT_FOUND, 500, "named symbol not found") \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700, "an illegal memory access was encountered") \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701, "too many resources requested for launch") \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702, "the launch timed out and was terminated") \
    X(CUDA_ERROR_ASSERT, 710, "device-side assert triggered") \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715, "an illegal instruction was encountered") \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716, "misaligned address") \
    X(CUDA_ERROR_LAUNCH_FAILED, 719, "unspecified launch failure") \
    X(CUDA_ERROR_NOT_SUPPORTED, 801, "operation not supported") \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803, "system has unsupported display driver / cuda driver combination") \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804, "forward compatibility was attempted on non supported HW") \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912, "invalid cluster size") \
    X(CUDA_ERROR_UNKNOWN, 999, "unknown error")

enum {
#define CUDA_DRIVER_ERROR_ENUM(name, value, text) name = value,
    CUDA_DRIVER_ERRORS(CUDA_DRIVER_ERROR_ENUM)
#undef CUDA_DRIVER_ERROR_ENUM
};

/* CUdevice_attribute values. */
typedef int CUdevice_attribute;
enum {
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120
};

/* CUfunction_attribute values. */
typedef int CUfunction_attribute;
enum {
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
};

/* CUjit_option values (the option value is passed in a void *: a pointer
 * for the buffers, an unsigned int cast to a pointer for the sizes; the
 * driver writes the number of log bytes it filled back into the size
 * option's slot). */
typedef int CUjit_option;
enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_LOG_VERBOSE = 12
};

/* CUlaunchAttributeID values and the attribute record: a 4-byte id, 4
 * bytes of padding and a 64-byte value union, of which kemu only uses the
 * cooperative flag and the cluster dimensions. */
typedef int CUlaunchAttributeID;
enum { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

typedef union CUlaunchAttributeValue_union {
    char pad[64];
    int cooperative;
    struct {
        unsigned int x;
        unsigned int y;
        unsigned int z;
    } clusterDim;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute_st {
    CUlaunchAttributeID id;
    char pad[8 - sizeof(CUlaunchAttributeID)];
    CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; /* dynamic shared memory per block */
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__)
_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes in CUDA 13");
_Static_assert(offsetof(CUlaunchAttribute, value) == 8, "CUlaunchAttribute.value at offset 8");
_Static_assert(offsetof(CUlaunchConfig, hStream) == 32, "CUlaunchConfig.hStream at offset 32");
_Static_assert(offsetof(CUlaunchConfig, attrs) == 40, "CUlaunchConfig.attrs at offset 40");
_Static_assert(offsetof(CUlaunchConfig, numAttrs) == 48, "CUlaunchConfig.numAttrs at offset 48");
_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig is 56 bytes in CUDA 13");
#endif

/* The entry points, by the symbol names the driver library exports. */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuGetErrorName(CUresult error, const char **name);
CUresult cuGetErrorString(CUresult error, const char **text);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice device);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device);
CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device);
CUresult cuCtxSetCurrent(CUcontext context);
CUresult cuCtxSynchronize(void);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int num_options,
                            CUjit_option *options, void **option_values);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name);
CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function);
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value);
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr pointer);
CUresult cuMemcpyHtoD_v2(CUdeviceptr destination, const void *source, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *destination, CUdeviceptr source, size_t bytes);
CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y, unsigned int block_z,
                        unsigned int shared_bytes, CUstream stream, void **params, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function, void **params, void **extra);

/* Tensor maps (CUDA 12.0): CUtensorMap is 128 opaque bytes, 64-aligned; the
 * enums (data type, interleave, swizzle, L2 promotion, out-of-bounds fill)
 * are ints with the values of kemu.h's KEMU_TMAP_*. */
typedef struct CUtensorMap_st {
    _Alignas(64) unsigned long long opaque[16];
} CUtensorMap;
CUresult cuTensorMapEncodeTiled(CUtensorMap *map, int data_type, unsigned int rank, void *global_address,
                                const unsigned long long *global_dim, const unsigned long long *global_strides,
                                const unsigned int *box_dim, const unsigned int *element_strides, int interleave,
                                int swizzle, int l2_promotion, int oob_fill);

#endif
