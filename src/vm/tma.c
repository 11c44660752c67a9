/* The bulk copies of sm_90, run when issued: cp.async.bulk (vm_bulk_copy)
 * and, below, cp.async.bulk.tensor (TMA) in tile mode: a box of the tensor a tensor map
 * describes (src/vm/tensor_map.h) copied between global and shared memory
 * when the instruction is issued, lane by lane.
 *
 * Shared memory holds the box densely, dimension 0 fastest (extent
 * ceil(box[i] / elementStrides[i]) in dimension i), starting at the 128-byte
 * aligned destination; a swizzled map then XORs the 16-byte chunk bits
 * (4..) of each shared address with its bits 7.. (1, 2 or 3 bits for the
 * 32, 64 and 128-byte modes), the pattern wgmma's descriptors read. Element
 * j of the box is the tensor element at coordinates c[i] + j[i] *
 * elementStrides[i]; outside the tensor (coordinates may be negative) a load
 * gives 0 (or NaN with the NaN fill) and a store writes nothing. A load
 * completes the mbarrier's transaction count with the whole box's bytes. */
#include "vm/mbarrier.h"
#include "vm/tensor_map.h"
#include "vm/vm_internal.h"

#include <string.h>

enum { TMA_LOAD = 0, TMA_STORE = 1 };

/* The element's fill value when it lies outside the tensor. */
static uint64_t fill_value(const vm_tensor_map *m)
{
    if (!m->nan_fill)
        return 0;
    switch (m->elem_size) {
    case 2: return 0x7fff;
    case 4: return 0x7fffffffu;
    default: return 0x7fffffffffffffffull;
    }
}

/* A shared-memory chunk cache: resolves each 16-byte chunk once. */
typedef struct smem_cursor {
    uint32_t chunk;
    uint8_t *host;
} smem_cursor;

static uint8_t *smem_at(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, int space, int lane, int kind,
                        uint64_t addr, smem_cursor *c)
{
    if ((uint32_t)(addr & ~15ull) != c->chunk || !c->host) {
        uint64_t a[VM_WARP] = {0};
        uint8_t *ptrs[VM_WARP];
        a[lane] = addr & ~15ull;
        if (vm_resolve(b, w, f, pc, space, 1u << lane, a, 0, 16, kind, ptrs))
            return NULL;
        c->chunk = (uint32_t)(addr & ~15ull);
        c->host = ptrs[lane];
    }
    return c->host + (addr & 15);
}

int vm_mbar_fault(vm_block *b, vm_warp *w, const vm_frame *f, uint32_t pc, uint32_t lane, int e, int sub,
                  uint64_t arg, uint64_t v)
{
    if (e == VM_MBAR_TOO_MANY_ARRIVALS)
        return vm_fault_at(b, w, f, pc, lane, 719,
                           "mbarrier arrive of %llu with only %llu arrivals pending (more arrivals than expected)",
                           (unsigned long long)(sub == BC_MB_ARRIVE_EXPECT_TX ? 1 : (uint32_t)arg),
                           (unsigned long long)vm_mbar_pending(v));
    return vm_fault_at(b, w, f, pc, lane, 719,
                       "mbarrier transaction count out of range: %lld %s %llu bytes leaves the range +-%d",
                       (long long)vm_mbar_tx(v), sub == BC_MB_COMPLETE_TX ? "-" : "+", (unsigned long long)(uint32_t)arg,
                       VM_MBAR_TX_MAX);
}

/* The complete_tx of a bulk or tensor copy: `bytes` off the transaction
 * count of lane l's mbarrier at addr[l] in `space`. Returns 0, or -1 after
 * a fault. */
static int complete_tx(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, int space, const uint64_t *addr, int l,
                       uint64_t bytes)
{
    uint8_t *mp[VM_WARP];
    uint64_t v, nv;
    int completed, done;
    if (vm_resolve(b, w, f, pc, space, 1u << l, addr, 0, 8, VM_ACCESS_ATOMIC, mp))
        return -1;
    memcpy(&v, mp[l], 8);
    int e = vm_mbar_step(v, BC_MB_COMPLETE_TX, bytes, &nv, &completed, &done);
    if (e)
        return vm_mbar_fault(b, w, f, pc, (uint32_t)l, e, BC_MB_COMPLETE_TX, bytes, v);
    memcpy(mp[l], &nv, 8);
    return 0;
}

int vm_bulk_copy(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    /* lane by lane, 16-byte chunk by chunk (bulk copies need 16-byte
     * alignment and sizes), then the mbarrier's complete_tx */
    uint64_t *R = f->regs;
    const uint64_t *A = SLOT(R, op->a), *B = SLOT(R, op->b), *C = SLOT(R, op->c);
    const uint64_t *E = op->e != BC_NONE ? SLOT(R, op->e) : NULL;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint32_t size = (uint32_t)C[l];
        if (size % 16)
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 716,
                               "misaligned size: cp.async.bulk copies a multiple of 16 bytes, not %u", size);
        uint64_t sa[VM_WARP], da[VM_WARP];
        uint8_t *sp[VM_WARP], *dp[VM_WARP];
        uint8_t chunk[16];
        for (uint32_t o = 0; o < size; o += 16) {
            sa[l] = B[l] + o;
            da[l] = A[l] + o;
            if (vm_resolve(b, w, f, pc, op->mode2, 1u << l, sa, 0, 16, VM_ACCESS_LOAD, sp))
                return -1;
            memcpy(chunk, sp[l], 16);
            if (vm_resolve(b, w, f, pc, op->mode, 1u << l, da, 0, 16, VM_ACCESS_STORE, dp))
                return -1;
            memcpy(dp[l], chunk, 16);
        }
        if (E && complete_tx(b, w, f, pc, op->n, E, l, size))
            return -1;
    }
    return 0;
}

int vm_tensor_copy(vm_block *b, vm_warp *w, vm_frame *f, uint32_t pc, const bc_op *op, uint32_t m)
{
    uint64_t *R = f->regs;
    const uint64_t *A = SLOT(R, op->a), *B = SLOT(R, op->b);
    const uint32_t *coords = f->fn->lists + op->list;
    int dir = op->mode2;
    for (uint32_t mm = m; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        /* the tensor map, 128 bytes at a generic address */
        uint8_t raw[VM_TMAP_BYTES];
        for (unsigned o = 0; o < VM_TMAP_BYTES; o += 16) {
            uint64_t a[VM_WARP] = {0};
            uint8_t *ptrs[VM_WARP];
            a[l] = B[l] + o;
            if (vm_resolve(b, w, f, pc, BC_SPACE_GENERIC, 1u << l, a, 0, 16, VM_ACCESS_LOAD, ptrs))
                return -1;
            memcpy(raw + o, ptrs[l], 16);
        }
        vm_tensor_map tm;
        if (vm_tensor_map_read(raw, &tm))
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 719,
                               "cp.async.bulk.tensor: the 128 bytes at 0x%llx are not a tensor map made by kemu "
                               "(kemu_tensor_map_encode_tiled, or cuTensorMapEncodeTiled under kemu exec)",
                               (unsigned long long)B[l]);
        if (tm.rank != op->n)
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 719,
                               "cp.async.bulk.tensor.%ud: the tensor map has %u dimensions", op->n, tm.rank);
        uint64_t base = A[l];
        if (base % 128)
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 716,
                               "misaligned address: cp.async.bulk.tensor's shared memory at 0x%llx is not 128-byte "
                               "aligned", (unsigned long long)base);
        unsigned ext[VM_TMAP_MAX_RANK];
        uint64_t total = 1;
        int64_t c[VM_TMAP_MAX_RANK];
        for (unsigned i = 0; i < tm.rank; i++) {
            ext[i] = (tm.box[i] + tm.estride[i] - 1) / tm.estride[i];
            total *= ext[i];
            c[i] = (int32_t)(uint32_t)SLOT(R, coords[i])[l];
        }
        /* the box must start on a 16-byte boundary in its innermost
         * dimension: an H200 raised an illegal instruction for an f32 box at
         * x = 50 (load and store, any swizzle) and ran x = -8, 0, 8, 48, 56 */
        if ((c[0] * (int64_t)tm.elem_size) % 16)
            return vm_fault_at(b, w, f, pc, (uint32_t)l, 715,
                               "illegal instruction: cp.async.bulk.tensor's innermost coordinate %lld times the element "
                               "size (%u bytes) is not a multiple of 16 bytes", (long long)c[0], tm.elem_size);
        unsigned es = tm.elem_size, W = tm.swizzle;
        uint64_t fill = fill_value(&tm);
        smem_cursor sc = {0, NULL};
        unsigned j[VM_TMAP_MAX_RANK] = {0};
        for (uint64_t idx = 0; idx < total; idx++) {
            uint64_t saddr = base + idx * es;
            if (W)
                saddr ^= ((saddr >> 7) & (W / 16 - 1)) << 4;
            int inside = 1;
            uint64_t gaddr = tm.address;
            for (unsigned i = 0; i < tm.rank; i++) {
                int64_t g = c[i] + (int64_t)j[i] * tm.estride[i];
                if (g < 0 || (uint64_t)g >= tm.dim[i])
                    inside = 0;
                else
                    gaddr += (uint64_t)g * tm.stride[i];
            }
            uint8_t *s = smem_at(b, w, f, pc, op->mode, l, dir == TMA_LOAD ? VM_ACCESS_STORE : VM_ACCESS_LOAD, saddr,
                                 &sc);
            if (!s)
                return -1;
            if (inside) {
                uint64_t ga[VM_WARP] = {0};
                uint8_t *gp[VM_WARP];
                ga[l] = gaddr;
                if (vm_resolve(b, w, f, pc, BC_SPACE_GLOBAL, 1u << l, ga, 0, es,
                               dir == TMA_LOAD ? VM_ACCESS_LOAD : VM_ACCESS_STORE, gp))
                    return -1;
                if (dir == TMA_LOAD)
                    memcpy(s, gp[l], es);
                else
                    memcpy(gp[l], s, es);
            } else if (dir == TMA_LOAD) {
                memcpy(s, &fill, es);
            }
            for (unsigned i = 0; i < tm.rank && ++j[i] == ext[i]; i++)
                j[i] = 0;
        }
        if (dir == TMA_LOAD && op->e != BC_NONE) {
            uint64_t bytes = total * es;
            SLOT(R, op->c)[l] = bytes; /* the checkers read the byte count here */
            if (complete_tx(b, w, f, pc, op->src_size, SLOT(R, op->e), l, bytes))
                return -1;
        }
    }
    return 0;
}
