/* What the launch plans (src/plan/) need to know about a kernel's launch
 * layout that the public API does not say. */
#ifndef KEMU_EXEC_CALL_SUPPORT_H
#define KEMU_EXEC_CALL_SUPPORT_H

#include <stdint.h>
#include "kemu/kemu.h"

/* The offset in a block's shared memory (.shared state space) where the
 * dynamic shared memory of a launch of k starts: after the kernel's static
 * shared memory, rounded up to the module's dynamic shared alignment when
 * the module declares extern .shared. Matches what kemu_launch lays out. */
uint64_t exec_kernel_dynamic_shared_base(const kemu_kernel *k);

/* Out-of-bounds loads under interpret.out_of_bounds_reads "uninitialized":
 * a load past the end of the allocation at address returns the fill of
 * class fill_class (see VM_OOB_FILL_CLASSES), its operand's dtype's. */
void exec_set_fill_class(kemu_device *dev, uint64_t address, int fill_class);

/* How many bytes of device printf output a launch keeps (the printf FIFO,
 * cudaLimitPrintfFifoSize; 1 MiB by default): output past it is dropped,
 * in block order, with a note at the end. 0 restores the default. */
void exec_set_printf_fifo(kemu_device *dev, size_t bytes);
/* cudaLimitMallocHeapSize: the size of the device malloc heap, made at the
 * first launch of a kernel that calls malloc. Returns 0, or -1 when the
 * heap was made already with another size (it keeps that size). */
int exec_set_heap_size(kemu_device *dev, size_t bytes);
/* Dynamic parallelism: the most device launches pending at once
 * (cudaLimitDevRuntimePendingLaunchCount; 0: 2048) and the version
 * cudaRuntimeGetVersion answers in device code (0: 13000). */
void exec_set_device_runtime(kemu_device *dev, uint64_t pending_launches, int runtime_version);

/* CUDA graph conditional handles (src/cudart/graph_cond.c): 4 bytes of
 * device memory, zeroed, that hold a condition's value; the handle is
 * their address, where cudaGraphSetConditional in device code stores
 * (src/vm/devrt.c checks that it is one). Not a user allocation: no leak
 * report, no copies into it. Made and freed between launches. Alloc
 * returns 0, or -1 when out of memory. */
int exec_conditional_alloc(kemu_device *dev, uint64_t *address);
void exec_conditional_free(kemu_device *dev, uint64_t address);

#endif
