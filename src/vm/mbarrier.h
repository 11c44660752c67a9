/* kemu's mbarrier object (8 bytes of shared memory) and the one step of
 * every mbarrier operation, shared by the interpreter and the checkers
 * (which replay it on copies of the objects).
 *
 * Layout: bits 0-19 pending arrivals of the current phase, 20-39 expected
 * arrivals per phase, 40-60 the transaction count (21-bit two's
 * complement, -(2^20-1) .. 2^20-1: expect_tx adds, complete_tx and the
 * bulk copies subtract), 61-63 the phase (counted modulo 8). A phase
 * completes when its pending arrivals and its transaction count are both
 * zero; the next phase starts with the expected arrivals pending. The
 * state token of arrive is the object before the arrival (its phase in
 * bits 61-63). */
#ifndef KEMU_VM_MBARRIER_H
#define KEMU_VM_MBARRIER_H

#include <stdint.h>

#include "bc/bc.h"

enum { VM_MBAR_OK = 0, VM_MBAR_TOO_MANY_ARRIVALS, VM_MBAR_TX_RANGE };

#define VM_MBAR_TX_MAX ((1 << 20) - 1)

static inline uint64_t vm_mbar_pending(uint64_t v) { return v & 0xfffff; }
static inline int64_t vm_mbar_tx(uint64_t v)
{
    int64_t tx = (int64_t)((v >> 40) & 0x1fffff);
    return tx >= (1 << 20) ? tx - (1 << 21) : tx;
}
static inline uint64_t vm_mbar_phase(uint64_t v) { return v >> 61; }

/* One lane's op `sub` (BC_MB_*) on state v; arg is its b operand (the
 * count of init and arrive, the transaction bytes of the _TX ops, the
 * token or parity of the waits). Sets *completed when the op completed the
 * phase and *done for a successful test/try wait; returns the new state in
 * *out and VM_MBAR_OK, or an error (the state is then unchanged). */
static inline int vm_mbar_step(uint64_t v, int sub, uint64_t arg, uint64_t *out, int *completed, int *done)
{
    uint64_t pending = v & 0xfffff, expected = (v >> 20) & 0xfffff, phase = v >> 61;
    int64_t tx = vm_mbar_tx(v);
    uint64_t arrivals = 0;
    *completed = *done = 0;
    *out = v;
    switch (sub) {
    case BC_MB_INIT:
        *out = ((uint32_t)arg & 0xfffff) | (uint64_t)((uint32_t)arg & 0xfffff) << 20;
        return VM_MBAR_OK;
    case BC_MB_INVAL:
        *out = 0;
        return VM_MBAR_OK;
    case BC_MB_PENDING:
        return VM_MBAR_OK;
    case BC_MB_ARRIVE:
    case BC_MB_ARRIVE_DROP:
        arrivals = (uint32_t)arg;
        break;
    case BC_MB_ARRIVE_EXPECT_TX:
        arrivals = 1;
        tx += (int64_t)(uint32_t)arg;
        break;
    case BC_MB_EXPECT_TX:
        tx += (int64_t)(uint32_t)arg;
        break;
    case BC_MB_COMPLETE_TX:
        tx -= (int64_t)(uint32_t)arg;
        break;
    default:
        *done = (sub == BC_MB_TEST_PARITY || sub == BC_MB_TRY_PARITY) ? (phase & 1) != ((uint32_t)arg & 1)
                                                                      : phase != (arg >> 61);
        return VM_MBAR_OK;
    }
    if (sub == BC_MB_ARRIVE_DROP && expected)
        expected--;
    if (arrivals > pending)
        return VM_MBAR_TOO_MANY_ARRIVALS;
    if (tx > VM_MBAR_TX_MAX || tx < -VM_MBAR_TX_MAX)
        return VM_MBAR_TX_RANGE;
    pending -= arrivals;
    if (pending == 0 && tx == 0) {
        phase = (phase + 1) & 7;
        pending = expected;
        *completed = 1;
    }
    *out = pending | expected << 20 | ((uint64_t)tx & 0x1fffff) << 40 | phase << 61;
    return VM_MBAR_OK;
}

#endif
