/* kemu_tensor_map_encode_tiled: cuTensorMapEncodeTiled's checks (the rules
 * its documentation in cuda.h states) and kemu's encoding
 * (src/vm/tensor_map.h). */
#include "kemu/kemu.h"
#include "util.h"
#include "vm/tensor_map.h"

#include <string.h>

static unsigned element_size(int t)
{
    switch (t) {
    case KEMU_TMAP_UINT8: return 1;
    case KEMU_TMAP_UINT16: case KEMU_TMAP_FLOAT16: case KEMU_TMAP_BFLOAT16: return 2;
    case KEMU_TMAP_UINT32: case KEMU_TMAP_INT32: case KEMU_TMAP_FLOAT32: case KEMU_TMAP_FLOAT32_FTZ:
    case KEMU_TMAP_TFLOAT32: case KEMU_TMAP_TFLOAT32_FTZ: return 4;
    case KEMU_TMAP_UINT64: case KEMU_TMAP_INT64: case KEMU_TMAP_FLOAT64: return 8;
    default: return 0;
    }
}

kemu_status kemu_tensor_map_encode_tiled(void *tensor_map, int data_type, unsigned rank, uint64_t global_address,
                                         const uint64_t *global_dim, const uint64_t *global_strides,
                                         const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                         int swizzle, int l2_promotion, int oob_fill, kemu_error *err)
{
    if (!tensor_map || !global_dim || !box_dim || !element_strides || (rank > 1 && !global_strides))
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: NULL argument");
    if ((uintptr_t)tensor_map % 64)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: the CUtensorMap must be 64-byte aligned");
    if (data_type >= 13 && data_type <= 15)
        return util_error(err, KEMU_ERR_UNSUPPORTED, "tensor map: the packed data types (16U4, 16U6) are not "
                                                     "implemented");
    unsigned es = element_size(data_type);
    if (!es)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: unknown data type %d", data_type);
    if (rank < 1 || rank > VM_TMAP_MAX_RANK)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: rank %u is not 1 to 5", rank);
    if (interleave != KEMU_TMAP_INTERLEAVE_NONE)
        return util_error(err, interleave == KEMU_TMAP_INTERLEAVE_16B || interleave == KEMU_TMAP_INTERLEAVE_32B
                                   ? KEMU_ERR_UNSUPPORTED : KEMU_ERR_INVALID_ARGUMENT,
                          "tensor map: interleave %d: interleaved layouts are not implemented", interleave);
    static const unsigned widths[4] = {0, 32, 64, 128};
    if (swizzle < 0 || swizzle > 6)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: unknown swizzle %d", swizzle);
    if (swizzle > KEMU_TMAP_SWIZZLE_128B)
        return util_error(err, KEMU_ERR_UNSUPPORTED, "tensor map: swizzle %d (the 128B atom variants) is not "
                                                     "implemented", swizzle);
    if (l2_promotion < 0 || l2_promotion > 3)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: unknown L2 promotion %d", l2_promotion);
    int is_float = data_type >= KEMU_TMAP_FLOAT16; /* FLOAT16 .. TFLOAT32_FTZ */
    if (oob_fill != KEMU_TMAP_OOB_FILL_ZERO && oob_fill != KEMU_TMAP_OOB_FILL_NAN)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: unknown out-of-bounds fill %d", oob_fill);
    if (oob_fill == KEMU_TMAP_OOB_FILL_NAN && !is_float)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "tensor map: the NaN out-of-bounds fill needs a floating-point data type");
    if (global_address % 16)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: the global address 0x%llx is not 16-byte "
                                                          "aligned", (unsigned long long)global_address);
    vm_tensor_map m;
    memset(&m, 0, sizeof m);
    m.magic = VM_TMAP_MAGIC;
    m.address = global_address;
    m.rank = (uint8_t)rank;
    m.dtype = (uint8_t)data_type;
    m.elem_size = (uint8_t)es;
    m.swizzle = (uint8_t)widths[swizzle];
    m.nan_fill = oob_fill == KEMU_TMAP_OOB_FILL_NAN;
    m.is_float = (uint8_t)is_float;
    for (unsigned i = 0; i < rank; i++) {
        if (global_dim[i] == 0 || global_dim[i] > (1ull << 32))
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: globalDim[%u] = %llu is not 1 to 2^32", i,
                              (unsigned long long)global_dim[i]);
        if (box_dim[i] == 0 || box_dim[i] > 256)
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: boxDim[%u] = %u is not 1 to 256", i,
                              box_dim[i]);
        if (element_strides[i] == 0 || element_strides[i] > 8)
            return util_error(err, KEMU_ERR_INVALID_ARGUMENT, "tensor map: elementStrides[%u] = %u is not 1 to 8", i,
                              element_strides[i]);
        m.dim[i] = global_dim[i];
        m.box[i] = (uint16_t)box_dim[i];
        m.estride[i] = (uint8_t)(i ? element_strides[i] : 1); /* ignored in dimension 0 */
        if (i == 0)
            m.stride[0] = es;
        else {
            uint64_t s = global_strides[i - 1];
            if (s % 16 || s >= (1ull << 40))
                return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                                  "tensor map: globalStrides[%u] = %llu is not a multiple of 16 below 2^40", i - 1,
                                  (unsigned long long)s);
            m.stride[i] = s;
        }
    }
    unsigned inner = box_dim[0] * es;
    if (inner % 16)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "tensor map: the box's inner dimension is %u bytes (boxDim[0] * %u), not a multiple of 16",
                          inner, es);
    if (m.swizzle && inner > m.swizzle)
        return util_error(err, KEMU_ERR_INVALID_ARGUMENT,
                          "tensor map: the box's inner dimension is %u bytes, more than the %u-byte swizzle", inner,
                          m.swizzle);
    memset(tensor_map, 0, KEMU_TENSOR_MAP_BYTES);
    memcpy(tensor_map, &m, sizeof m);
    return KEMU_OK;
}
