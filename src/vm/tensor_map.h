/* kemu's tensor map (CUtensorMap, 128 bytes, 64-byte aligned): what
 * kemu_tensor_map_encode_tiled writes and the TMA copies
 * (cp.async.bulk.tensor, src/vm/tma.c) read. The layout is kemu's own, as
 * the driver's is opaque; a map made by NVIDIA's driver does not work under
 * kemu and the other way round. Dimension 0 is the innermost (contiguous)
 * one, as in cuTensorMapEncodeTiled. */
#ifndef KEMU_VM_TENSOR_MAP_H
#define KEMU_VM_TENSOR_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VM_TMAP_MAGIC 0x50414d544b4d454bull /* "KEMTMAP" */
#define VM_TMAP_BYTES 128
#define VM_TMAP_MAX_RANK 5

typedef struct vm_tensor_map {
    uint64_t magic;
    uint64_t address;                  /* global address of element 0 */
    uint64_t dim[VM_TMAP_MAX_RANK];    /* elements per dimension */
    uint64_t stride[VM_TMAP_MAX_RANK]; /* bytes between neighbours in each dimension (stride[0] = element size) */
    uint16_t box[VM_TMAP_MAX_RANK];    /* box extent per dimension, 1..256 */
    uint8_t estride[VM_TMAP_MAX_RANK]; /* traversal step per dimension, 1..8 (ignored in dimension 0) */
    uint8_t rank;                      /* 1..5 */
    uint8_t dtype;                     /* CUtensorMapDataType */
    uint8_t elem_size;                 /* bytes */
    uint8_t swizzle;                   /* swizzle width in bytes: 0 (none), 32, 64, 128 */
    uint8_t nan_fill;                  /* out-of-bounds floats read as NaN, else 0 */
    uint8_t is_float;
} vm_tensor_map;

_Static_assert(sizeof(vm_tensor_map) <= VM_TMAP_BYTES, "a tensor map fits in a CUtensorMap");
_Static_assert(offsetof(vm_tensor_map, box) == 96, "tests/unit/test_matrix.c forges the box at byte 96");

/* Decodes the 128 bytes at p; returns 0, or -1 when they are not a kemu map. */
static inline int vm_tensor_map_read(const uint8_t *p, vm_tensor_map *m)
{
    memcpy(m, p, sizeof *m);
    /* the encoder's ranges: a kernel may hand over any 128 bytes */
    if (m->magic != VM_TMAP_MAGIC || m->rank < 1 || m->rank > VM_TMAP_MAX_RANK ||
        (m->elem_size != 1 && m->elem_size != 2 && m->elem_size != 4 && m->elem_size != 8) ||
        (m->swizzle != 0 && m->swizzle != 32 && m->swizzle != 64 && m->swizzle != 128))
        return -1;
    for (unsigned i = 0; i < m->rank; i++)
        if (!m->box[i] || m->box[i] > 256 || !m->estride[i] || m->estride[i] > 8)
            return -1;
    return 0;
}

#endif
