/* Device management of kemu's libcudart replacement: the emulated devices
 * (one, or KEMU_DEVICES of them, all the same GPU) whose properties and
 * attributes describe the emulated architecture (KEMU_ARCH, or the highest
 * PTX the program embeds), the current device, peer access, synchronization,
 * reset, limits, flags and version queries. */
#include "config.h"
#include "cudart/runtime.h"
#include "check/check.h"
#include "exec/call_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Facts of real GPUs of each architecture, for properties kemu itself does
 * not need (the per-SM limits are in exec/device.c's table, with the
 * occupancy they give). */
typedef struct arch_facts {
    int sm;
    const char *gpu;
    int l2_bytes;
    int bus_width;
    int clock_khz;
    int memory_clock_khz;
} arch_facts;

static const arch_facts facts_table[] = {
    {75, "Tesla T4", 4 << 20, 256, 1590000, 5001000},
    {80, "A100", 40 << 20, 5120, 1410000, 1215000},
    {86, "RTX 3090", 6 << 20, 384, 1695000, 9751000},
    {87, "Jetson AGX Orin", 4 << 20, 256, 1300000, 3200000},
    {89, "L40", 96 << 20, 384, 2490000, 9001000},
    {90, "H100", 50 << 20, 5120, 1980000, 2619000},
    {100, "B200", 126 << 20, 8192, 1965000, 3996000},
    {120, "RTX 5090", 96 << 20, 512, 2407000, 14001000},
};

static const arch_facts *facts_for(int sm)
{
    const arch_facts *best = &facts_table[0];
    for (size_t i = 0; i < sizeof facts_table / sizeof facts_table[0]; i++)
        if (facts_table[i].sm <= sm)
            best = &facts_table[i];
    return best;
}

/* The global memory the device reports: half the host's RAM, at most 80 GiB. */
size_t cudart_device_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t total = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : (size_t)16 << 30;
    size_t cap = (size_t)80 << 30;
    return total < cap ? total : cap;
}

/* Makes sure the device exists; returns the sticky error or a creation error. */
static cudaError_t ensure_device(void)
{
    kemu_device *dev;
    return cudart_device(&dev);
}

void cudart_fill_properties(cudaDeviceProp *p)
{
    cudart_arch_info a;
    cudart_arch_for_sm(cudart_global.device_sm ? cudart_global.device_sm : 80, &a);
    const arch_facts *f = facts_for(a.sm);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "kemu emulated %s (%s)", a.name, f->gpu);
    char uuid[24];
    snprintf(uuid, sizeof uuid, "kemu-emulated-%d", cudart_current());
    memcpy(p->uuid.bytes, uuid, 16);
    p->pciBusID = cudart_current();
    p->totalGlobalMem = cudart_device_memory_bytes();
    p->sharedMemPerBlock = a.shared_default;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = a.max_threads_per_block;
    for (int i = 0; i < 3; i++) {
        p->maxThreadsDim[i] = a.max_block_dim[i];
        p->maxGridSize[i] = a.max_grid_dim[i];
    }
    p->totalConstMem = 65536;
    p->major = a.sm / 10;
    p->minor = a.sm % 10;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = a.sm_count;
    p->canMapHostMemory = 1;
    p->maxTexture1D = 131072;
    p->maxTexture1DMipmap = 32768;
    p->maxTexture2D[0] = 131072;
    p->maxTexture2D[1] = 65536;
    p->maxTexture2DMipmap[0] = p->maxTexture2DMipmap[1] = 32768;
    p->maxTexture2DLinear[0] = p->maxTexture2DLinear[1] = 131072;
    p->maxTexture2DLinear[2] = 2097120;
    p->maxTexture2DGather[0] = p->maxTexture2DGather[1] = 32768;
    p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
    p->maxTexture3DAlt[0] = p->maxTexture3DAlt[1] = 8192;
    p->maxTexture3DAlt[2] = 32768;
    p->maxTextureCubemap = 32768;
    p->maxTexture1DLayered[0] = 32768;
    p->maxTexture1DLayered[1] = 2048;
    p->maxTexture2DLayered[0] = p->maxTexture2DLayered[1] = 32768;
    p->maxTexture2DLayered[2] = 2048;
    p->maxTextureCubemapLayered[0] = 32768;
    p->maxTextureCubemapLayered[1] = 2046;
    p->maxSurface1D = 32768;
    p->maxSurface2D[0] = 131072;
    p->maxSurface2D[1] = 65536;
    p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = 16384;
    p->maxSurface1DLayered[0] = 32768;
    p->maxSurface1DLayered[1] = 2048;
    p->maxSurface2DLayered[0] = p->maxSurface2DLayered[1] = 32768;
    p->maxSurface2DLayered[2] = 2048;
    p->maxSurfaceCubemap = 32768;
    p->maxSurfaceCubemapLayered[0] = 32768;
    p->maxSurfaceCubemapLayered[1] = 2046;
    p->surfaceAlignment = 512;
    p->concurrentKernels = 1;
    p->asyncEngineCount = 2;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = f->bus_width;
    p->l2CacheSize = f->l2_bytes;
    p->persistingL2CacheMaxSize = f->l2_bytes / 4 * 3;
    p->maxThreadsPerMultiProcessor = a.threads_per_sm;
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->sharedMemPerMultiprocessor = a.shared_per_sm;
    p->regsPerMultiprocessor = 65536;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->computePreemptionSupported = 1;
    p->canUseHostPointerForRegisteredMem = 1;
    p->cooperativeLaunch = 1; /* all blocks of a cooperative launch run co-resident */
    p->sharedMemPerBlockOptin = a.shared_optin;
    p->directManagedMemAccessFromHost = 1;
    p->maxBlocksPerMultiProcessor = a.blocks_per_sm;
    p->accessPolicyMaxWindowSize = CUDART_ACCESS_POLICY_MAX_WINDOW;
    p->reservedSharedMemPerBlock = a.sm >= 80 ? 1024 : 0;
    p->memoryPoolsSupported = 1;
    p->clusterLaunch = a.has_clusters;
    p->deviceNumaId = -1;
    p->hostNumaId = -1;
}

static int attribute_value(int attr, int *value)
{
    cudaDeviceProp p;
    cudart_fill_properties(&p);
    const arch_facts *f = facts_for(p.major * 10 + p.minor);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxPitch: *value = (int)p.memPitch; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = f->clock_khz; break;
    case cudaDevAttrTextureAlignment: *value = (int)p.textureAlignment; break;
    case cudaDevAttrGpuOverlap: *value = 1; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrKernelExecTimeout: *value = 0; break;
    case cudaDevAttrIntegrated: *value = 0; break;
    case cudaDevAttrCanMapHostMemory: *value = 1; break;
    case cudaDevAttrComputeMode: *value = 0; break;
    case cudaDevAttrMaxTexture1DWidth: *value = p.maxTexture1D; break;
    case cudaDevAttrMaxTexture2DWidth: *value = p.maxTexture2D[0]; break;
    case cudaDevAttrMaxTexture2DHeight: *value = p.maxTexture2D[1]; break;
    case cudaDevAttrMaxTexture3DWidth: *value = p.maxTexture3D[0]; break;
    case cudaDevAttrMaxTexture3DHeight: *value = p.maxTexture3D[1]; break;
    case cudaDevAttrMaxTexture3DDepth: *value = p.maxTexture3D[2]; break;
    case cudaDevAttrSurfaceAlignment: *value = (int)p.surfaceAlignment; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrEccEnabled: *value = 0; break;
    case cudaDevAttrPciBusId: *value = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
    case cudaDevAttrTccDriver: *value = 0; break;
    case cudaDevAttrMemoryClockRate: *value = f->memory_clock_khz; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    case cudaDevAttrPciDomainId: *value = p.pciDomainID; break;
    case cudaDevAttrTexturePitchAlignment: *value = (int)p.texturePitchAlignment; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = 1; break;
    case cudaDevAttrGlobalL1CacheSupported: *value = 1; break;
    case cudaDevAttrLocalL1CacheSupported: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrManagedMemory: *value = 1; break;
    case cudaDevAttrIsMultiGpuBoard: *value = 0; break;
    case cudaDevAttrMultiGpuBoardGroupID: *value = 0; break;
    case cudaDevAttrHostNativeAtomicSupported: *value = 0; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = 2; break;
    case cudaDevAttrPageableMemoryAccess: *value = 0; break;
    case cudaDevAttrConcurrentManagedAccess: *value = 1; break;
    case cudaDevAttrComputePreemptionSupported: *value = 1; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *value = 1; break;
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrCanFlushRemoteWrites: *value = 0; break;
    case cudaDevAttrHostRegisterSupported: *value = 1; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *value = 0; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *value = 1; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *value = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *value = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = (int)p.reservedSharedMemPerBlock; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    case cudaDevAttrClusterLaunch: *value = p.clusterLaunch; break;
    case cudaDevAttrMemSyncDomainCount: *value = 1; break;
    case cudaDevAttrNumaConfig: *value = 0; break;
    case cudaDevAttrNumaId: *value = -1; break;
    case cudaDevAttrHostNumaId: *value = -1; break;
    default:
        if (attr <= 0 || attr >= cudaDevAttrMax)
            return -1;
        *value = 0; /* texture limits and features kemu does not model */
    }
    return 0;
}

/* The number of devices (cudart_lock initializes it from KEMU_DEVICES). */
static int device_count(void)
{
    cudart_lock();
    int n = cudart_global.ndevices;
    cudart_unlock();
    return n;
}

CUDART_API cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return cudart_result(cudaErrorInvalidValue);
    *count = device_count();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return cudart_result(cudaErrorInvalidValue);
    *device = cudart_current();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaSetDevice(int device)
{
    cudart_lock();
    cudaError_t e = cudaErrorInvalidDevice;
    if (device >= 0 && device < cudart_global.ndevices) {
        cudart_set_current(device);
        e = ensure_device();
        if (!e)
            e = cudart_check_sticky();
    }
    cudart_unlock();
    return cudart_result(e);
}

/* Runs the rest of a query about `device` as if it were current (locked);
 * returns the device to restore, or -1 for an invalid one. */
static int query_begin(int device)
{
    if (device < 0 || device >= cudart_global.ndevices)
        return -1;
    int current = cudart_current();
    cudart_set_current(device);
    return current;
}

CUDART_API cudaError_t cudaInitDevice(int device, unsigned int device_flags, unsigned int flags)
{
    (void)device_flags, (void)flags;
    return cudaSetDevice(device);
}

CUDART_API cudaError_t cudaSetValidDevices(int *devices, int count)
{
    for (int i = 0; devices && i < count; i++)
        if (devices[i] < 0 || devices[i] >= device_count())
            return cudart_result(cudaErrorInvalidDevice);
    return cudaSuccess;
}

CUDART_API cudaError_t cudaChooseDevice(int *device, const cudaDeviceProp *prop)
{
    (void)prop; /* every device is the same GPU: the current one fits as well as any */
    if (!device)
        return cudart_result(cudaErrorInvalidValue);
    *device = cudart_current();
    return cudaSuccess;
}

void cudart_fill_properties12(cudaDeviceProp12 *q)
{
    cudaDeviceProp p;
    cudart_fill_properties(&p);
    const arch_facts *f = facts_for(p.major * 10 + p.minor);
    memset(q, 0, sizeof *q);
#define SAME(field) memcpy(&q->field, &p.field, sizeof q->field)
    SAME(name); SAME(uuid); SAME(luid); SAME(luidDeviceNodeMask); SAME(totalGlobalMem); SAME(sharedMemPerBlock);
    SAME(regsPerBlock); SAME(warpSize); SAME(memPitch); SAME(maxThreadsPerBlock); SAME(maxThreadsDim);
    SAME(maxGridSize); SAME(totalConstMem); SAME(major); SAME(minor); SAME(textureAlignment);
    SAME(texturePitchAlignment); SAME(multiProcessorCount); SAME(integrated); SAME(canMapHostMemory);
    SAME(maxTexture1D); SAME(maxTexture1DMipmap); SAME(maxTexture2D); SAME(maxTexture2DMipmap);
    SAME(maxTexture2DLinear); SAME(maxTexture2DGather); SAME(maxTexture3D); SAME(maxTexture3DAlt);
    SAME(maxTextureCubemap); SAME(maxTexture1DLayered); SAME(maxTexture2DLayered); SAME(maxTextureCubemapLayered);
    SAME(maxSurface1D); SAME(maxSurface2D); SAME(maxSurface3D); SAME(maxSurface1DLayered); SAME(maxSurface2DLayered);
    SAME(maxSurfaceCubemap); SAME(maxSurfaceCubemapLayered); SAME(surfaceAlignment); SAME(concurrentKernels);
    SAME(ECCEnabled); SAME(pciBusID); SAME(pciDeviceID); SAME(pciDomainID); SAME(tccDriver); SAME(asyncEngineCount);
    SAME(unifiedAddressing); SAME(memoryBusWidth); SAME(l2CacheSize); SAME(persistingL2CacheMaxSize);
    SAME(maxThreadsPerMultiProcessor); SAME(streamPrioritiesSupported); SAME(globalL1CacheSupported);
    SAME(localL1CacheSupported); SAME(sharedMemPerMultiprocessor); SAME(regsPerMultiprocessor); SAME(managedMemory);
    SAME(isMultiGpuBoard); SAME(multiGpuBoardGroupID); SAME(hostNativeAtomicSupported); SAME(pageableMemoryAccess);
    SAME(concurrentManagedAccess); SAME(computePreemptionSupported); SAME(canUseHostPointerForRegisteredMem);
    SAME(cooperativeLaunch); SAME(sharedMemPerBlockOptin); SAME(pageableMemoryAccessUsesHostPageTables);
    SAME(directManagedMemAccessFromHost); SAME(maxBlocksPerMultiProcessor); SAME(accessPolicyMaxWindowSize);
    SAME(reservedSharedMemPerBlock); SAME(hostRegisterSupported); SAME(sparseCudaArraySupported);
    SAME(hostRegisterReadOnlySupported); SAME(timelineSemaphoreInteropSupported); SAME(memoryPoolsSupported);
    SAME(gpuDirectRDMASupported); SAME(gpuDirectRDMAFlushWritesOptions); SAME(gpuDirectRDMAWritesOrdering);
    SAME(memoryPoolSupportedHandleTypes); SAME(deferredMappingCudaArraySupported); SAME(ipcEventSupported);
    SAME(clusterLaunch); SAME(unifiedFunctionPointers);
#undef SAME
    /* the fields CUDA 13 moved to attributes */
    q->clockRate = f->clock_khz;
    q->deviceOverlap = 1;
    q->maxTexture1DLinear = 268435456;
    q->memoryClockRate = f->memory_clock_khz;
    q->singleToDoublePrecisionPerfRatio = 2;
}

/* Fills the properties in the layout of this library's ABI. */
static cudaError_t get_properties(void *prop, int device, int layout12)
{
    if (!prop)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    int current = query_begin(device);
    if (current < 0) {
        cudart_unlock();
        return cudart_result(cudaErrorInvalidDevice);
    }
    cudaError_t e = ensure_device();
    if (!e && layout12)
        cudart_fill_properties12(prop);
    else if (!e)
        cudart_fill_properties(prop);
    cudart_set_current(current);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device)
{
    return get_properties(prop, device, CUDART_ABI_MAJOR < 13);
}

/* CUDA 12 headers turn cudaGetDeviceProperties into this, with CUDA 12's layout. */
CUDART_API cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp12 *prop, int device)
{
    return get_properties(prop, device, 1);
}

CUDART_API cudaError_t cudaDeviceGetAttribute(int *value, int attr, int device)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    int current = query_begin(device);
    if (current < 0) {
        cudart_unlock();
        return cudart_result(cudaErrorInvalidDevice);
    }
    cudaError_t e = ensure_device();
    if (!e && attribute_value(attr, value))
        e = cudaErrorInvalidValue;
    cudart_set_current(current);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device)
{
    if (!bus_id || len <= 0)
        return cudart_result(cudaErrorInvalidValue);
    if (device < 0 || device >= device_count())
        return cudart_result(cudaErrorInvalidDevice);
    snprintf(bus_id, (size_t)len, "0000:%02x:00.0", device); /* device N on bus N, as cudaDevAttrPciBusId says */
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *bus_id)
{
    if (!device || !bus_id)
        return cudart_result(cudaErrorInvalidValue);
    unsigned domain = 0, bus = 0, dev = 0, fn = 0;
    int n = 0;
    /* domain:bus:device.function, or bus:device.function; hexadecimal */
    if (sscanf(bus_id, "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &n) != 4 || bus_id[n]) {
        domain = 0;
        n = 0;
        if (sscanf(bus_id, "%x:%x.%x%n", &bus, &dev, &fn, &n) != 3 || bus_id[n])
            return cudart_result(cudaErrorInvalidValue);
    }
    if (domain || dev || fn || (int)bus >= device_count())
        return cudart_result(cudaErrorInvalidDevice);
    *device = (int)bus;
    return cudaSuccess;
}

/* ---- peer access ------------------------------------------------------------ */

CUDART_API cudaError_t cudaDeviceCanAccessPeer(int *can_access, int device, int peer)
{
    if (!can_access)
        return cudart_result(cudaErrorInvalidValue);
    int n = device_count();
    if (device < 0 || device >= n || peer < 0 || peer >= n)
        return cudart_result(cudaErrorInvalidDevice);
    *can_access = device != peer; /* every emulated device reaches every other one; no device is its own peer */
    return cudaSuccess;
}

/* Enables or disables peer access from the current device to `peer`, as
 * CUDA does: the kernels launched on the current device may then load and
 * store peer's memory. */
cudaError_t cudart_peer_access(int peer, int enable)
{
    cudart_state *s = &cudart_global;
    int current = cudart_current();
    if (peer < 0 || peer >= s->ndevices || peer == current)
        return cudaErrorInvalidDevice;
    cudart_dev *d = &s->devs[current];
    if (enable && d->peer[peer])
        return cudaErrorPeerAccessAlreadyEnabled;
    if (!enable && !d->peer[peer])
        return cudaErrorPeerAccessNotEnabled;
    kemu_device *here, *there;
    cudaError_t e = cudart_device_at(current, &here);
    if (!e)
        e = cudart_device_at(peer, &there);
    if (e)
        return e;
    cudart_wait_idle(1u << current); /* its launches read the peer list */
    if (kemu_device_set_peer_access(here, there, enable, NULL))
        return cudaErrorMemoryAllocation;
    d->peer[peer] = (unsigned char)(enable != 0);
    cudart_trace("peer access from device %d to device %d %s", current, peer, enable ? "enabled" : "disabled");
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    if (!e && flags)
        e = cudaErrorInvalidValue;
    if (!e)
        e = cudart_peer_access(peer, 1);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    cudart_lock();
    cudaError_t e = cudart_check_sticky();
    if (!e)
        e = cudart_peer_access(peer, 0);
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaDeviceSynchronize(void)
{
    cudart_lock();
    cudaError_t e = cudart_capture_sync_device();
    cudart_wait_idle(1u << cudart_current());
    if (!e)
        e = cudart_synchronize();
    if (!e && cudart_order_on())
        check_order_device_sync(cudart_current());
    if (!e)
        cudart_pools_release();
    cudart_unlock();
    return cudart_result(e);
}

CUDART_API cudaError_t cudaThreadSynchronize(void)
{
    return cudaDeviceSynchronize();
}

CUDART_API cudaError_t cudaDeviceReset(void)
{
    cudart_lock();
    cudart_state *s = &cudart_global;
    int current = cudart_current();
    cudart_dev *d = cudart_cur();
    /* other devices' kernels may be reading its memory */
    cudart_wait_idle(~0u);
    cudart_synchronize();
    cudart_order_end();
    cudart_report_checks(); /* the findings die with the device */
    if (d->device) {
        drv_forget_modules();
        for (int i = 0; i < s->nfatbins; i++) {
            cudart_fatbin_on *l = cudart_fatbin_here(s->fatbins[i]);
            free(l->modules); /* the modules die with the device */
            free(l->load_message);
            memset(l, 0, sizeof *l);
        }
        for (size_t i = 0; i < s->kernels.cap; i++)
            if (s->kernels.keys[i]) {
                cudart_kernel_record *kr = s->kernels.values[i];
                if (kr->kernel == kr->kernels[current]) { /* another device's, if it has one */
                    kr->kernel = NULL;
                    for (int j = 0; j < CUDART_MAX_DEVICES && !kr->kernel; j++)
                        if (j != current)
                            kr->kernel = kr->kernels[j];
                }
                kr->kernels[current] = NULL;
                if (s->ndevices == 1)
                    kr->max_dynamic_shared = -1;
            }
        for (int i = 0; i < s->ndevices; i++)
            if (i != current && s->devs[i].device)
                kemu_device_set_peer_access(s->devs[i].device, d->device, -1, NULL);
        cudart_graph_conditionals_reset(d->device);
        kemu_device_destroy(d->device);
        d->device = NULL;
        /* the device's peer access goes with it; others' to it is kept
         * (as it is set up again when the device is next made) */
        memset(d->peer, 0, sizeof d->peer);
    }
    cudart_allocations_clear(current);
    cudart_pools_reset(); /* (several devices: the other devices' pool blocks stay allocated, unused) */
    d->sticky_error = cudaSuccess;
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaThreadExit(void)
{
    return cudaDeviceReset();
}

CUDART_API cudaError_t cudaDeviceSetLimit(int limit, size_t value)
{
    if (limit < 0 || limit > cudaLimitPersistingL2CacheSize)
        return cudart_result(cudaErrorUnsupportedLimit);
    cudart_lock();
    /* (one value for all devices) */
    int heap_made = 0;
    for (int i = 0; i < cudart_global.ndevices; i++) {
        kemu_device *dev = cudart_global.devs[i].device;
        if (!dev)
            continue;
        cudart_wait_idle(1u << i);
        if (limit == cudaLimitPrintfFifoSize)
            exec_set_printf_fifo(dev, value);
        if (limit == cudaLimitDevRuntimePendingLaunchCount)
            exec_set_device_runtime(dev, value, CUDART_VERSION_NUMBER);
        if (limit == cudaLimitMallocHeapSize)
            heap_made |= exec_set_heap_size(dev, value) != 0;
    }
    if (heap_made)
        /* as on a GPU, the heap is sized before the first kernel that
         * calls malloc runs; it keeps its size from then on */
        fprintf(stderr, "kemu: cudaLimitMallocHeapSize: the device malloc heap was made at the first launch of a "
                        "kernel that calls malloc and keeps its %zu bytes; set the limit before that launch\n",
                cudart_global.limits[limit]);
    else
        cudart_global.limits[limit] = value;
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceGetLimit(size_t *value, int limit)
{
    if (!value)
        return cudart_result(cudaErrorInvalidValue);
    if (limit < 0 || limit > cudaLimitPersistingL2CacheSize)
        return cudart_result(cudaErrorUnsupportedLimit);
    cudart_lock();
    *value = cudart_global.limits[limit];
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDriverGetVersion(int *version)
{
    if (!version)
        return cudart_result(cudaErrorInvalidValue);
    *version = CUDART_VERSION_NUMBER;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaRuntimeGetVersion(int *version)
{
    if (!version)
        return cudart_result(cudaErrorInvalidValue);
    *version = CUDART_VERSION_NUMBER;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    if (flags & ~CUDART_DEVICE_FLAGS_MASK)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    cudart_global.device_flags = flags;
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    if (!flags)
        return cudart_result(cudaErrorInvalidValue);
    cudart_lock();
    *flags = cudart_global.device_flags;
    cudart_unlock();
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceSetCacheConfig(int config)
{
    return config >= 0 && config <= 3 ? cudaSuccess : cudart_result(cudaErrorInvalidValue);
}

CUDART_API cudaError_t cudaDeviceGetCacheConfig(int *config)
{
    if (!config)
        return cudart_result(cudaErrorInvalidValue);
    *config = 0;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return cudaSuccess;
}

CUDART_API cudaError_t cudaProfilerStart(void)
{
    return cudaSuccess;
}

CUDART_API cudaError_t cudaProfilerStop(void)
{
    return cudaSuccess;
}

/* names that CUDA 12 still exports */
CUDART_ALIAS(cudaThreadSetLimit, cudaDeviceSetLimit)
CUDART_ALIAS(cudaThreadGetLimit, cudaDeviceGetLimit)
CUDART_ALIAS(cudaThreadSetCacheConfig, cudaDeviceSetCacheConfig)
CUDART_ALIAS(cudaThreadGetCacheConfig, cudaDeviceGetCacheConfig)
