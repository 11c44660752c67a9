/* The binary interface of the CUDA runtime API (CUDA 13) as programs built
 * by nvcc see it: the enum values, handle types and struct layouts that
 * kemu's libcudart replacement reads and writes. Declared here, not taken
 * from CUDA's headers, so that kemu builds where CUDA is not installed; the
 * layouts were transcribed from CUDA 13.0's driver_types.h and
 * texture_types.h, and tests/cuda/abi_layout.c compares every size and
 * field offset against CUDA's own headers where nvcc is present. The names
 * are CUDA's, because they are the names of the specification. */
#ifndef KEMU_CUDART_CUDA_ABI_H
#define KEMU_CUDART_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The CUDA version this library answers as (cudaRuntimeGetVersion), and so
 * the ABI it implements: 13000 builds libcudart.so.13, 12080 builds
 * libcudart.so.12, whose structs differ where noted below. */
#ifndef CUDART_VERSION_NUMBER
#define CUDART_VERSION_NUMBER 13000
#endif
#define CUDART_ABI_MAJOR (CUDART_VERSION_NUMBER / 1000)

/* Error codes that CUDA 13's runtime returns where CUDA 12's returned others,
 * as seen on an H200 (runtime 13.0, driver 580.159.04): a launch
 * configuration beyond the device's limits (a block over 1024 threads, a
 * zero or too large grid or block dimension) is cudaErrorInvalidValue, not
 * cudaErrorInvalidConfiguration; a host function pointer that is no
 * registered kernel is cudaErrorInvalidResourceHandle, not
 * cudaErrorInvalidDeviceFunction. */
#if CUDART_ABI_MAJOR >= 13
#define CUDART_ERROR_LAUNCH_CONFIG cudaErrorInvalidValue
#define CUDART_ERROR_NOT_A_KERNEL cudaErrorInvalidResourceHandle
#else
#define CUDART_ERROR_LAUNCH_CONFIG cudaErrorInvalidConfiguration
#define CUDART_ERROR_NOT_A_KERNEL cudaErrorInvalidDeviceFunction
#endif

typedef int cudaError_t; /* enum cudaError: values in errors.def */

enum {
#define CUDART_ERROR(value, name, text) name = value,
#include "cudart/errors.def"
#undef CUDART_ERROR
};

typedef struct dim3 {
    unsigned int x, y, z;
} dim3;
typedef dim3 uint3;

/* Handles. Streams and events point to the runtime's own records. */
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct cudart_kernel_record *cudaKernel_t;
typedef struct cudaArray *cudaArray_t;
typedef const struct cudaArray *cudaArray_const_t;
typedef struct cudaMipmappedArray *cudaMipmappedArray_t;
typedef const struct cudaMipmappedArray *cudaMipmappedArray_const_t;
typedef unsigned long long cudaTextureObject_t;
typedef void (*cudaHostFn_t)(void *user_data);
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void *user_data);

#define CUDART_STREAM_LEGACY ((cudaStream_t)0x1)
#define CUDART_STREAM_PER_THREAD ((cudaStream_t)0x2)

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

enum cudaMemoryType {
    cudaMemoryTypeUnregistered = 0,
    cudaMemoryTypeHost = 1,
    cudaMemoryTypeDevice = 2,
    cudaMemoryTypeManaged = 3
};

enum cudaLimit {
    cudaLimitStackSize = 0,
    cudaLimitPrintfFifoSize = 1,
    cudaLimitMallocHeapSize = 2,
    cudaLimitDevRuntimeSyncDepth = 3,
    cudaLimitDevRuntimePendingLaunchCount = 4,
    cudaLimitMaxL2FetchGranularity = 5,
    cudaLimitPersistingL2CacheSize = 6
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
    cudaFuncAttributeClusterDimMustBeSet = 10,
    cudaFuncAttributeRequiredClusterWidth = 11,
    cudaFuncAttributeRequiredClusterHeight = 12,
    cudaFuncAttributeRequiredClusterDepth = 13,
    cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
    cudaFuncAttributeClusterSchedulingPolicyPreference = 15
};

enum cudaLaunchAttributeID {
    cudaLaunchAttributeIgnore = 0,
    cudaLaunchAttributeAccessPolicyWindow = 1,
    cudaLaunchAttributeCooperative = 2,
    cudaLaunchAttributeSynchronizationPolicy = 3,
    cudaLaunchAttributeClusterDimension = 4,
    cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
    cudaLaunchAttributeProgrammaticStreamSerialization = 6,
    cudaLaunchAttributeProgrammaticEvent = 7,
    cudaLaunchAttributePriority = 8,
    cudaLaunchAttributeMemSyncDomainMap = 9,
    cudaLaunchAttributeMemSyncDomain = 10,
    cudaLaunchAttributePreferredClusterDimension = 11,
    cudaLaunchAttributeLaunchCompletionEvent = 12,
    cudaLaunchAttributeDeviceUpdatableKernelNode = 13,
    cudaLaunchAttributePreferredSharedMemoryCarveout = 14,
    cudaLaunchAttributeNvlinkUtilCentricScheduling = 16
};

/* Flags. */
#define CUDART_HOST_ALLOC_MAPPED 0x02u
#define CUDART_STREAM_NON_BLOCKING 0x01u
#define CUDART_EVENT_BLOCKING_SYNC 0x01u
#define CUDART_EVENT_DISABLE_TIMING 0x02u
#define CUDART_EVENT_INTERPROCESS 0x04u
#define CUDART_MEM_ATTACH_GLOBAL 0x01u
#define CUDART_MEM_ATTACH_HOST 0x02u
#define CUDART_DEVICE_FLAGS_MASK 0xffu

/* The device attributes kemu answers (enum cudaDeviceAttr). */
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxPitch = 11,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrTextureAlignment = 14,
    cudaDevAttrGpuOverlap = 15,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrKernelExecTimeout = 17,
    cudaDevAttrIntegrated = 18,
    cudaDevAttrCanMapHostMemory = 19,
    cudaDevAttrComputeMode = 20,
    cudaDevAttrMaxTexture1DWidth = 21,
    cudaDevAttrMaxTexture2DWidth = 22,
    cudaDevAttrMaxTexture2DHeight = 23,
    cudaDevAttrMaxTexture3DWidth = 24,
    cudaDevAttrMaxTexture3DHeight = 25,
    cudaDevAttrMaxTexture3DDepth = 26,
    cudaDevAttrSurfaceAlignment = 30,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrEccEnabled = 32,
    cudaDevAttrPciBusId = 33,
    cudaDevAttrPciDeviceId = 34,
    cudaDevAttrTccDriver = 35,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrAsyncEngineCount = 40,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrPciDomainId = 50,
    cudaDevAttrTexturePitchAlignment = 51,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrStreamPrioritiesSupported = 78,
    cudaDevAttrGlobalL1CacheSupported = 79,
    cudaDevAttrLocalL1CacheSupported = 80,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrManagedMemory = 83,
    cudaDevAttrIsMultiGpuBoard = 84,
    cudaDevAttrMultiGpuBoardGroupID = 85,
    cudaDevAttrHostNativeAtomicSupported = 86,
    cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
    cudaDevAttrPageableMemoryAccess = 88,
    cudaDevAttrConcurrentManagedAccess = 89,
    cudaDevAttrComputePreemptionSupported = 90,
    cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrCanFlushRemoteWrites = 98,
    cudaDevAttrHostRegisterSupported = 99,
    cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
    cudaDevAttrDirectManagedMemAccessFromHost = 101,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMaxPersistingL2CacheSize = 108,
    cudaDevAttrMaxAccessPolicyWindowSize = 109,
    cudaDevAttrReservedSharedMemoryPerBlock = 111,
    cudaDevAttrSparseCudaArraySupported = 112,
    cudaDevAttrHostRegisterReadOnlySupported = 113,
    cudaDevAttrTimelineSemaphoreInteropSupported = 114,
    cudaDevAttrMemoryPoolsSupported = 115,
    cudaDevAttrGPUDirectRDMASupported = 116,
    cudaDevAttrClusterLaunch = 120,
    cudaDevAttrDeferredMappingCudaArraySupported = 121,
    cudaDevAttrIpcEventSupport = 125,
    cudaDevAttrMemSyncDomainCount = 126,
    cudaDevAttrNumaConfig = 130,
    cudaDevAttrNumaId = 131,
    cudaDevAttrMpsEnabled = 133,
    cudaDevAttrHostNumaId = 134,
    cudaDevAttrMax = 148
};

typedef struct CUuuid_st {
    char bytes[16];
} cudaUUID_t;

/* struct cudaDeviceProp of CUDA 13 (1008 bytes). */
typedef struct cudaDeviceProp {
    char name[256];
    cudaUUID_t uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int deviceNumaConfig;
    int deviceNumaId;
    int mpsEnabled;
    int hostNumaId;
    unsigned int gpuPciDeviceID;
    unsigned int gpuPciSubsystemID;
    int hostNumaMultinodeIpcSupported;
    int reserved[56];
} cudaDeviceProp;

struct cudaPointerAttributes {
    int type; /* enum cudaMemoryType */
    int device;
    void *devicePointer;
    void *hostPointer;
    long reserved[8];
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
    int clusterDimMustBeSet;
    int requiredClusterWidth;
    int requiredClusterHeight;
    int requiredClusterDepth;
    int clusterSchedulingPolicyPreference;
    int nonPortableClusterSizeAllowed;
    int reserved[16];
};

struct cudaChannelFormatDesc {
    int x, y, z, w;
    int f; /* enum cudaChannelFormatKind: 0 signed, 1 unsigned, 2 float */
};

struct cudaExtent {
    size_t width, height, depth;
};

struct cudaPos {
    size_t x, y, z;
};

struct cudaPitchedPtr {
    void *ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
};

struct cudaMemcpy3DParms {
    cudaArray_t srcArray;
    struct cudaPos srcPos;
    struct cudaPitchedPtr srcPtr;
    cudaArray_t dstArray;
    struct cudaPos dstPos;
    struct cudaPitchedPtr dstPtr;
    struct cudaExtent extent;
    int kind; /* enum cudaMemcpyKind */
};

enum cudaResourceType {
    cudaResourceTypeArray = 0,
    cudaResourceTypeMipmappedArray = 1,
    cudaResourceTypeLinear = 2,
    cudaResourceTypePitch2D = 3
};

struct cudaResourceDesc {
    int resType; /* enum cudaResourceType */
    union {
        struct {
            cudaArray_t array;
        } array;
        struct {
            void *mipmap;
        } mipmap;
        struct {
            void *devPtr;
            struct cudaChannelFormatDesc desc;
            size_t sizeInBytes;
        } linear;
        struct {
            void *devPtr;
            struct cudaChannelFormatDesc desc;
            size_t width;
            size_t height;
            size_t pitchInBytes;
        } pitch2D;
        struct {
            int reserved[32];
        } reserved;
    } res;
    unsigned int flags;
};

struct cudaArrayMemoryRequirements {
    size_t size;
    size_t alignment;
    unsigned int reserved[4];
};

struct cudaResourceViewDesc {
    int format;
    size_t width, height, depth;
    unsigned int firstMipmapLevel, lastMipmapLevel, firstLayer, lastLayer;
    unsigned int reserved[16];
};

struct cudaTextureDesc {
    int addressMode[3]; /* enum cudaTextureAddressMode */
    int filterMode;     /* enum cudaTextureFilterMode */
    int readMode;       /* enum cudaTextureReadMode */
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    int mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};

typedef union cudaLaunchAttributeValue {
    char pad[64];
    int cooperative;
    struct {
        unsigned int x, y, z;
    } clusterDim;
    int priority;
} cudaLaunchAttributeValue;

typedef struct cudaLaunchAttribute_st {
    int id; /* enum cudaLaunchAttributeID */
    char pad[8 - sizeof(int)];
    cudaLaunchAttributeValue val;
} cudaLaunchAttribute;

typedef struct cudaLaunchConfig_st {
    dim3 gridDim;
    dim3 blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cudaLaunchAttribute *attrs;
    unsigned int numAttrs;
} cudaLaunchConfig_t;

/* ---- CUDA graphs and stream capture (driver_types.h of CUDA 13.0) ---- */

typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphNode_st *cudaGraphNode_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
typedef struct CUuserObject_st *cudaUserObject_t;

#define CUDART_USER_OBJECT_NO_DESTRUCTOR_SYNC 0x1u /* cudaUserObjectNoDestructorSync */
#define CUDART_GRAPH_USER_OBJECT_MOVE 0x1u         /* cudaGraphUserObjectMove */

enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
};

enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2
};

enum cudaStreamUpdateCaptureDependenciesFlags {
    cudaStreamAddCaptureDependencies = 0,
    cudaStreamSetCaptureDependencies = 1
};

enum cudaGraphNodeType {
    cudaGraphNodeTypeKernel = 0,
    cudaGraphNodeTypeMemcpy = 1,
    cudaGraphNodeTypeMemset = 2,
    cudaGraphNodeTypeHost = 3,
    cudaGraphNodeTypeGraph = 4,
    cudaGraphNodeTypeEmpty = 5,
    cudaGraphNodeTypeWaitEvent = 6,
    cudaGraphNodeTypeEventRecord = 7,
    cudaGraphNodeTypeExtSemaphoreSignal = 8,
    cudaGraphNodeTypeExtSemaphoreWait = 9,
    cudaGraphNodeTypeMemAlloc = 10,
    cudaGraphNodeTypeMemFree = 11,
    cudaGraphNodeTypeConditional = 13
};

enum cudaGraphExecUpdateResult {
    cudaGraphExecUpdateSuccess = 0,
    cudaGraphExecUpdateError = 1,
    cudaGraphExecUpdateErrorTopologyChanged = 2,
    cudaGraphExecUpdateErrorNodeTypeChanged = 3,
    cudaGraphExecUpdateErrorFunctionChanged = 4,
    cudaGraphExecUpdateErrorParametersChanged = 5,
    cudaGraphExecUpdateErrorNotSupported = 6,
    cudaGraphExecUpdateErrorUnsupportedFunctionChange = 7,
    cudaGraphExecUpdateErrorAttributesChanged = 8
};

enum cudaGraphInstantiateResult {
    cudaGraphInstantiateSuccess = 0,
    cudaGraphInstantiateError = 1,
    cudaGraphInstantiateInvalidStructure = 2,
    cudaGraphInstantiateNodeOperationNotSupported = 3,
    cudaGraphInstantiateMultipleDevicesNotSupported = 4,
    cudaGraphInstantiateConditionalHandleUnused = 5
};

enum cudaGraphInstantiateFlags {
    cudaGraphInstantiateFlagAutoFreeOnLaunch = 1,
    cudaGraphInstantiateFlagUpload = 2,
    cudaGraphInstantiateFlagDeviceLaunch = 4,
    cudaGraphInstantiateFlagUseNodePriority = 8
};

enum cudaGraphMemAttributeType {
    cudaGraphMemAttrUsedMemCurrent = 0,
    cudaGraphMemAttrUsedMemHigh = 1,
    cudaGraphMemAttrReservedMemCurrent = 2,
    cudaGraphMemAttrReservedMemHigh = 3
};

#define CUDART_EVENT_RECORD_EXTERNAL 0x01u /* cudaEventRecordExternal */
#define CUDART_EVENT_WAIT_EXTERNAL 0x01u   /* cudaEventWaitExternal */

struct cudaKernelNodeParams {
    void *func;
    dim3 gridDim;
    dim3 blockDim;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
};

struct cudaMemsetParams {
    void *dst;
    size_t pitch;
    unsigned int value;
    unsigned int elementSize;
    size_t width;
    size_t height;
};

struct cudaHostNodeParams {
    cudaHostFn_t fn;
    void *userData;
};

typedef struct cudaGraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} cudaGraphEdgeData;

typedef struct cudaGraphInstantiateParams_st {
    unsigned long long flags;
    cudaStream_t uploadStream;
    cudaGraphNode_t errNode_out;
    int result_out; /* enum cudaGraphInstantiateResult */
} cudaGraphInstantiateParams;

typedef struct cudaGraphExecUpdateResultInfo_st {
    int result; /* enum cudaGraphExecUpdateResult */
    cudaGraphNode_t errorNode;
    cudaGraphNode_t errorFromNode;
} cudaGraphExecUpdateResultInfo;

/* Conditional nodes (CUDA 12.4+; if/else and switch: 12.8+). */
typedef unsigned long long cudaGraphConditionalHandle;

enum cudaGraphConditionalHandleFlags {
    cudaGraphCondAssignDefault = 1
};

enum cudaGraphConditionalNodeType {
    cudaGraphCondTypeIf = 0,
    cudaGraphCondTypeWhile = 1,
    cudaGraphCondTypeSwitch = 2
};

struct cudaConditionalNodeParams {
    cudaGraphConditionalHandle handle;
    int type;             /* enum cudaGraphConditionalNodeType */
    unsigned int size;    /* body graphs: 1 (while), 1 or 2 (if, else), any above 0 (switch) */
    cudaGraph_t *phGraph_out; /* set by the runtime: the node's body graphs */
};

/* ---- stream-ordered memory pools ---- */


enum cudaMemPoolAttr {
    cudaMemPoolReuseFollowEventDependencies = 1,
    cudaMemPoolReuseAllowOpportunistic = 2,
    cudaMemPoolReuseAllowInternalDependencies = 3,
    cudaMemPoolAttrReleaseThreshold = 4,
    cudaMemPoolAttrReservedMemCurrent = 5,
    cudaMemPoolAttrReservedMemHigh = 6,
    cudaMemPoolAttrUsedMemCurrent = 7,
    cudaMemPoolAttrUsedMemHigh = 8
};

enum cudaMemLocationType {
    cudaMemLocationTypeInvalid = 0,
    cudaMemLocationTypeDevice = 1,
    cudaMemLocationTypeHost = 2,
    cudaMemLocationTypeHostNuma = 3,
    cudaMemLocationTypeHostNumaCurrent = 4
};

enum cudaMemAllocationType {
    cudaMemAllocationTypeInvalid = 0,
    cudaMemAllocationTypePinned = 1,
    cudaMemAllocationTypeManaged = 2
};

enum cudaMemAccessFlags {
    cudaMemAccessFlagsProtNone = 0,
    cudaMemAccessFlagsProtRead = 1,
    cudaMemAccessFlagsProtReadWrite = 3
};

struct cudaMemLocation {
    int type; /* enum cudaMemLocationType */
    int id;
};

struct cudaMemAccessDesc {
    struct cudaMemLocation location;
    int flags; /* enum cudaMemAccessFlags */
};

struct cudaMemPoolProps {
    int allocType;   /* enum cudaMemAllocationType */
    int handleTypes; /* enum cudaMemAllocationHandleType */
    struct cudaMemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
};

struct cudaMemAllocNodeParams {
    struct cudaMemPoolProps poolProps;
    const struct cudaMemAccessDesc *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    void *dptr;
};

/* The generic node parameters (cudaGraphAddNode), for the node types
 * kemu runs; the V2 structs of CUDA 13 have the V1 layouts. */
struct cudaGraphNodeParams {
    int type; /* enum cudaGraphNodeType */
    int reserved0[3];
    union {
        long long reserved1[29];
        struct cudaKernelNodeParams kernel;
        struct {
            int flags;
            int reserved[3];
            struct cudaMemcpy3DParms copyParams;
        } memcpy;
        struct cudaMemsetParams memset;
        struct cudaHostNodeParams host;
        struct {
            cudaGraph_t graph;
            int ownership; /* enum cudaGraphChildGraphNodeOwnership: 0 clone, 1 move */
        } graph;
        struct {
            cudaEvent_t event;
        } eventWait;
        struct {
            cudaEvent_t event;
        } eventRecord;
        struct cudaMemAllocNodeParams alloc;
        struct {
            void *dptr;
        } free;
        struct cudaConditionalNodeParams conditional;
    };
    long long reserved2;
};

/* struct cudaDeviceProp of CUDA 12 (1032 bytes), filled by the
 * libcudart.so.12 flavour (cudaGetDeviceProperties_v2). Transcribed from
 * CUDA 12.9's driver_types.h; offsets checked against it once. */
typedef struct cudaDeviceProp12 {
    char name[256];
    cudaUUID_t uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture1DLinear;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int singleToDoublePrecisionPerfRatio;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int reserved[63];
} cudaDeviceProp12;

_Static_assert(sizeof(cudaDeviceProp12) == 1032, "CUDA 12 cudaDeviceProp is 1032 bytes");
_Static_assert(offsetof(cudaDeviceProp12, clockRate) == 348, "CUDA 12 cudaDeviceProp.clockRate");
_Static_assert(offsetof(cudaDeviceProp12, multiProcessorCount) == 388, "CUDA 12 cudaDeviceProp.multiProcessorCount");
_Static_assert(offsetof(cudaDeviceProp12, maxTexture1DLinear) == 416, "CUDA 12 cudaDeviceProp.maxTexture1DLinear");
_Static_assert(offsetof(cudaDeviceProp12, memoryClockRate) == 608, "CUDA 12 cudaDeviceProp.memoryClockRate");
_Static_assert(offsetof(cudaDeviceProp12, l2CacheSize) == 616, "CUDA 12 cudaDeviceProp.l2CacheSize");
_Static_assert(offsetof(cudaDeviceProp12, cooperativeLaunch) == 688, "CUDA 12 cudaDeviceProp.cooperativeLaunch");
_Static_assert(offsetof(cudaDeviceProp12, sharedMemPerBlockOptin) == 696, "CUDA 12 cudaDeviceProp.sharedMemPerBlockOptin");
_Static_assert(offsetof(cudaDeviceProp12, clusterLaunch) == 772, "CUDA 12 cudaDeviceProp.clusterLaunch");
_Static_assert(offsetof(cudaDeviceProp12, reserved) == 780, "CUDA 12 cudaDeviceProp.reserved");

/* How many bytes of the structs that grew in CUDA 13 a program of this
 * library's ABI passes: CUDA 12's cudaPointerAttributes has no reserved
 * words, its cudaResourceDesc no flags and a 56-byte union, and its
 * cudaResourceViewDesc no reserved words. */
#if CUDART_ABI_MAJOR >= 13
#define CUDART_POINTER_ATTRIBUTES_SIZE sizeof(struct cudaPointerAttributes)
#define CUDART_RESOURCE_DESC_SIZE sizeof(struct cudaResourceDesc)
#define CUDART_RESOURCE_VIEW_DESC_SIZE sizeof(struct cudaResourceViewDesc)
#else
#define CUDART_POINTER_ATTRIBUTES_SIZE ((size_t)24)
#define CUDART_RESOURCE_DESC_SIZE ((size_t)64)
#define CUDART_RESOURCE_VIEW_DESC_SIZE ((size_t)48)
#endif

/* Sizes checked against CUDA 13.0's headers (see tests/cuda/abi_layout.c). */
_Static_assert(sizeof(cudaDeviceProp) == 1008, "cudaDeviceProp is 1008 bytes in CUDA 13");
_Static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == 288, "cudaDeviceProp.totalGlobalMem");
_Static_assert(offsetof(cudaDeviceProp, multiProcessorCount) == 384, "cudaDeviceProp.multiProcessorCount");
_Static_assert(sizeof(struct cudaPointerAttributes) == 88, "cudaPointerAttributes");
_Static_assert(sizeof(struct cudaFuncAttributes) == 144, "cudaFuncAttributes");
_Static_assert(sizeof(struct cudaChannelFormatDesc) == 20, "cudaChannelFormatDesc");
_Static_assert(sizeof(struct cudaMemcpy3DParms) == 160, "cudaMemcpy3DParms");
_Static_assert(sizeof(struct cudaResourceDesc) == 144, "cudaResourceDesc");
_Static_assert(sizeof(struct cudaTextureDesc) == 72, "cudaTextureDesc");
_Static_assert(sizeof(cudaLaunchAttribute) == 72, "cudaLaunchAttribute");
_Static_assert(sizeof(cudaLaunchConfig_t) == 56, "cudaLaunchConfig_t");

_Static_assert(sizeof(struct cudaKernelNodeParams) == 56, "cudaKernelNodeParams");
_Static_assert(sizeof(struct cudaMemsetParams) == 40, "cudaMemsetParams");
_Static_assert(sizeof(cudaGraphEdgeData) == 8, "cudaGraphEdgeData");
_Static_assert(sizeof(cudaGraphInstantiateParams) == 32, "cudaGraphInstantiateParams");
_Static_assert(sizeof(struct cudaMemPoolProps) == 88, "cudaMemPoolProps");
_Static_assert(sizeof(struct cudaMemAllocNodeParams) == 120, "cudaMemAllocNodeParams");
_Static_assert(sizeof(struct cudaGraphNodeParams) == 256, "cudaGraphNodeParams");
_Static_assert(sizeof(struct cudaConditionalNodeParams) == 24, "cudaConditionalNodeParams");
_Static_assert(offsetof(struct cudaGraphNodeParams, conditional) == 16, "cudaGraphNodeParams.conditional");

#endif /* KEMU_CUDART_CUDA_ABI_H */
