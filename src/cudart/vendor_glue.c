/* The door through which kemu's vendor libraries (libcublas, libcublasLt,
 * libnccl: src/vendor/) reach the runtime's state: the device, the sticky error, the
 * streams and stream capture, and the allocation table. These few
 * functions are exported under the `__kemu_vendor_` prefix by the version
 * scripts (libcudart.map, libcudart12.map) and are for kemu's own
 * libraries only; src/vendor/vendor.h declares them. No CUDA program
 * calls them. */
#include "config.h"

#include <stdio.h>

#include "cudart/runtime.h"
#include "check/check.h"

#include <stdlib.h>

/* Starts a library call that works on `stream`, as a kernel launch would:
 * takes the runtime lock (held on success until __kemu_vendor_end), and
 * returns the error that keeps the call from running: the sticky error of
 * an earlier kernel fault, an invalid stream
 * (cudaErrorInvalidResourceHandle), the capture errors of work on the
 * legacy stream or an invalidated capture, and for a capturing stream
 * cudaErrorStreamCaptureUnsupported (the capture is invalidated: kemu does
 * not record library calls as graph nodes; `api` names the call in the
 * message). *dev is the emulated device. */
CUDART_API cudaError_t __kemu_vendor_begin(cudaStream_t stream, const char *api, kemu_device **dev);
CUDART_API cudaError_t __kemu_vendor_begin(cudaStream_t stream, const char *api, kemu_device **dev)
{
    cudart_lock();
    kemu_device *d = NULL;
    cudaError_t e = cudart_device(&d);
    if (!e && !cudart_stream_valid(stream))
        e = cudaErrorInvalidResourceHandle;
    if (!e) {
        int r = cudart_capture_stream(stream, &e);
        if (r == 1) {
            fprintf(stderr, "kemu: %s on a capturing stream: kemu does not capture library calls into graphs; "
                            "the capture is invalidated\n", api ? api : "a library call");
            fflush(stderr);
            e = cudart_capture_refuse(stream);
        }
    }
    if (!e)
        e = cudart_check_sticky();
    if (e) {
        cudart_unlock();
        return e;
    }
    *dev = d;
    return cudaSuccess;
}

/* As __kemu_vendor_begin, on device `device` (an ordinal) rather than the
 * calling thread's current one, for libraries whose handles name their
 * device (libnccl's communicators): cudaErrorInvalidDevice for an ordinal
 * out of range, cudaErrorInvalidResourceHandle for a stream of another
 * device, the sticky error of that device. Waits until no other thread's
 * launch runs on it. Ends with __kemu_vendor_end. */
CUDART_API cudaError_t __kemu_vendor_begin_on(int device, cudaStream_t stream, const char *api, kemu_device **dev);
CUDART_API cudaError_t __kemu_vendor_begin_on(int device, cudaStream_t stream, const char *api, kemu_device **dev)
{
    cudart_lock();
    if (device < 0 || device >= cudart_global.ndevices) {
        cudart_unlock();
        return cudaErrorInvalidDevice;
    }
    kemu_device *d = NULL;
    cudaError_t e = cudart_device_at(device, &d);
    if (!e && !cudart_stream_valid(stream))
        e = cudaErrorInvalidResourceHandle;
    if (!e) {
        struct CUstream_st *record = cudart_stream_record(stream);
        if (record && stream != CUDART_STREAM_PER_THREAD && record->device != device)
            e = cudaErrorInvalidResourceHandle;
    }
    if (!e) {
        int r = cudart_capture_stream(stream, &e);
        if (r == 1) {
            fprintf(stderr, "kemu: %s on a capturing stream: kemu does not capture library calls into graphs; "
                            "the capture is invalidated\n", api ? api : "a library call");
            fflush(stderr);
            e = cudart_capture_refuse(stream);
        }
    }
    if (!e)
        e = cudart_global.devs[device].sticky_error;
    if (e) {
        cudart_unlock();
        return e;
    }
    *dev = d;
    return cudaSuccess;
}

/* Ends a call that __kemu_vendor_begin started: releases the lock, after
 * refreshing the checkers' snapshot (the call may have marked memory). */
CUDART_API void __kemu_vendor_end(void);
CUDART_API void __kemu_vendor_end(void)
{
    cudart_check_snapshot();
    cudart_unlock();
}

/* 1 when [address, address + size) lies inside one live allocation that a
 * kernel could reach (not cudaHostRegister'ed memory, not a CUDA array's
 * storage), else 0. size 0 asks about the address alone. */
CUDART_API int __kemu_vendor_range(const void *address, size_t size);
CUDART_API int __kemu_vendor_range(const void *address, size_t size)
{
    cudart_lock();
    const cudart_allocation *a = cudart_allocation_find((uint64_t)(uintptr_t)address, size ? size : 1);
    int ok = a && a->kind != CUDART_MEM_REGISTERED && a->kind != CUDART_MEM_ARRAY;
    cudart_unlock();
    return ok;
}

/* "kemu: NAME is not supported yet", once per name, as for cudart's stubs. */
CUDART_API void __kemu_vendor_unsupported(const char *name);
CUDART_API void __kemu_vendor_unsupported(const char *name)
{
    cudart_warn_unsupported(name);
}

/* racecheck across streams: one library operation of n parties (an NCCL
 * collective, a send/recv pair), party i on `streams[i]` of `devices[i]`,
 * reading ranges[4i + 1] bytes at ranges[4i] and writing ranges[4i + 3]
 * bytes at ranges[4i + 2] (0 bytes: none). Each party's part is an
 * operation of its stream; afterwards every party's stream is ordered
 * after every party's earlier work (the parties wait for each other).
 * Nothing without racecheck. */
CUDART_API void __kemu_vendor_stream_ops(int n, const int *devices, const cudaStream_t *streams, const char *api,
                                         const uint64_t *ranges);
CUDART_API void __kemu_vendor_stream_ops(int n, const int *devices, const cudaStream_t *streams, const char *api,
                                         const uint64_t *ranges)
{
    if (!cudart_order_on() || n <= 0 || n > 4096)
        return;
    cudart_lock();
    check_stream *st = calloc((size_t)n, sizeof *st);
    char(*names)[128] = calloc((size_t)n, sizeof *names);
    for (int i = 0; st && names && i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "%s (rank's part on device %d)", api ? api : "a library call", devices[i]);
        cudart_order_begin(streams[i], devices[i], what, 0);
        check_order_access(ranges[4 * i], ranges[4 * i + 1], 0);
        check_order_access(ranges[4 * i + 2], ranges[4 * i + 3], 1);
        check_order_end();
        cudart_order_stream(streams[i], devices[i], &st[i], names[i], sizeof names[i]);
    }
    if (st && names)
        check_order_join(st, n);
    free(st);
    free(names);
    cudart_unlock();
}
