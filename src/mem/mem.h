/* Emulated device memory: the allocation table of global memory and the
 * generic address space windows. Device addresses of global allocations are
 * the host addresses of their backing storage, so the interpreter reaches
 * them without translation, but every access is first checked against the
 * table: a kernel's bad pointer never touches host memory outside an
 * allocation. Shared, local, const and kernel-parameter memory live in
 * windows of the generic space above the 48-bit user range, where no host
 * pointer can be. This room knows nothing about opcodes. */
#ifndef KEMU_MEM_H
#define KEMU_MEM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "kemu/kemu.h"

/* Generic-address windows (64-bit). A generic address below
 * MEM_WINDOW_SHARED is a global address. */
#define MEM_WINDOW_SHARED   0x0001000000000000ull
#define MEM_WINDOW_LOCAL    0x0002000000000000ull
#define MEM_WINDOW_CONST    0x0003000000000000ull
#define MEM_WINDOW_PARAM    0x0004000000000000ull
#define MEM_WINDOW_FUNCTION 0x0005000000000000ull
#define MEM_WINDOW_SIZE     0x0001000000000000ull
/* Allocations are mapped at deterministic addresses from MEM_DEVICE_BASE
 * up, each followed by an unmapped gap of MEM_GUARD bytes, so the same
 * program gets the same device addresses run after run and small overruns
 * hit no allocation. */
#define MEM_DEVICE_BASE 0x0000200000000000ull
/* Several devices in one process (kemu_device_set_ordinal): device N maps
 * its allocations from MEM_DEVICE_BASE + N * MEM_DEVICE_STRIDE up, so the
 * ranges of devices never meet and an address names its device. */
#define MEM_DEVICE_STRIDE 0x0000040000000000ull
#define MEM_GUARD (64u * 1024u)
#define MEM_ALIGN 256

typedef struct mem_allocation {
    uint64_t base;      /* device address == host address */
    uint64_t size;      /* bytes requested */
    int kind;           /* MEM_KIND_* */
    uint64_t id;        /* allocation number, for reports */
    int fill_class;     /* kemu call operands: 1 + the VM_OOB_FILL class of the dtype
                         * (out-of-bounds reads past it return that fill); 0 unknown */
    int shared;         /* reachable from the kernels of every device that knows this space's
                         * device as a peer, whatever the peer access (pinned host and managed
                         * memory: kemu_device_share_allocation) */
} mem_allocation;

/* MEM_KIND_GRAPH_CONDITIONAL: the 4-byte value of a CUDA graph
 * conditional handle (the handle is its address; cudaGraphSetConditional
 * in device code stores to it). */
enum { MEM_KIND_USER = 0, MEM_KIND_MODULE_GLOBALS, MEM_KIND_HEAP, MEM_KIND_GRAPH_CONDITIONAL };

typedef struct mem_space {
    mem_allocation *allocs;  /* sorted by base */
    size_t count, cap;
    uint64_t next_id;
    uint64_t next_address;   /* where the next allocation is mapped */
    uint64_t granule;        /* 0, or bytes: each later allocation owns the address range of its size
                              * rounded up to this (the rest unmapped) and the next one starts right
                              * after it, with no guard (a checker that lets accesses past an
                              * allocation go on inside that range sets it), so an access there
                              * never lands in another allocation */
    pthread_mutex_t lock;    /* guards changes; launches read without it */
    mem_allocation *freed;   /* freed allocations, in the order freed; their
                              * address ranges are never mapped again */
    size_t nfreed, capfreed;
} mem_space;

void mem_space_init(mem_space *m);
/* Copies the allocation containing [address, address + size) into *out
 * under the space's lock (for readers on other threads than the space's
 * own launches, which may allocate meanwhile); 0, or -1 when none. */
int mem_find_copy(mem_space *m, uint64_t address, uint64_t size, mem_allocation *out);
void mem_space_destroy(mem_space *m);

/* Allocates size bytes (at least 1) aligned to 256, filled with `fill`.
 * Returns 0 on success (device address in *address), -1 when out of memory. */
int mem_alloc(mem_space *m, uint64_t size, int fill, int kind, uint64_t *address);
/* Frees the allocation starting at address; -1 if none starts there. */
int mem_free(mem_space *m, uint64_t address);

/* The allocation containing [address, address + size), or NULL. */
const mem_allocation *mem_find(const mem_space *m, uint64_t address, uint64_t size);
/* The allocation containing address (any size), or NULL. */
const mem_allocation *mem_find_containing(const mem_space *m, uint64_t address);
/* The live allocation with the highest base <= address, or NULL. */
const mem_allocation *mem_find_below(const mem_space *m, uint64_t address);
/* The freed allocation whose range contained address (the latest freed if
 * several did), or NULL. Freed ranges stay unmapped (a quarantine), so
 * checkers can name them in reports. */
const mem_allocation *mem_find_freed(const mem_space *m, uint64_t address);
/* The live allocation with the lowest base > address, or NULL. */
const mem_allocation *mem_find_above(const mem_space *m, uint64_t address);

/* Where address lies, for a fault message (as compute-sanitizer words it):
 * "a null pointer", "allocation #N (S bytes at 0x...), offset K",
 * "K bytes past the end of allocation #N (...)" or "K bytes before the
 * start of allocation #N (...)" when a live allocation lies within
 * MEM_NEAR_BYTES (the nearer one when both do), "K bytes into allocation
 * #N (...), freed" for a use after free, else "no allocation". */
#define MEM_NEAR_BYTES (1u << 20)
void mem_describe_address(const mem_space *m, uint64_t address, char *buf, size_t n);

#endif
