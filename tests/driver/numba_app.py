# An unmodified Numba CUDA program (tests/driver/numba.sh runs it under
# `kemu exec python`): device arrays, a vector add, a shared-memory block
# sum with atomics, a 2-D matmul, streams and events, each compared with
# NumPy. Prints PASS numba_app.
import math
import sys

import numpy as np
from numba import cuda


@cuda.jit
def vadd(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def block_sum(x, total):
    part = cuda.shared.array(128, dtype=np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    part[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            part[t] += part[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(total, 0, part[0])


TILE = 16


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array((TILE, TILE), dtype=np.float32)
    sb = cuda.shared.array((TILE, TILE), dtype=np.float32)
    x, y = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    acc = np.float32(0.0)
    for k0 in range(0, a.shape[1], TILE):
        sa[ty, tx] = a[y, k0 + tx] if y < a.shape[0] and k0 + tx < a.shape[1] else 0
        sb[ty, tx] = b[k0 + ty, x] if x < b.shape[1] and k0 + ty < b.shape[0] else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sa[ty, k] * sb[k, tx]
        cuda.syncthreads()
    if y < c.shape[0] and x < c.shape[1]:
        c[y, x] = acc


def main():
    failures = []
    n = 5000
    a = np.arange(n, dtype=np.float32)
    b = np.float32(2.0) * a + 1
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array(n, dtype=np.float32)
    vadd[(n + 127) // 128, 128](da, db, dc)
    if not np.array_equal(dc.copy_to_host(), a + b):
        failures.append("vadd")

    x = (np.arange(n, dtype=np.int32) % 23) - 7
    total = cuda.to_device(np.zeros(1, dtype=np.int32))
    block_sum[(n + 127) // 128, 128](cuda.to_device(x), total)
    if total.copy_to_host()[0] != x.sum():
        failures.append("block_sum")

    rng = np.random.default_rng(7)
    m, k, p = 70, 45, 33
    ma = rng.standard_normal((m, k)).astype(np.float32)
    mb = rng.standard_normal((k, p)).astype(np.float32)
    mc = cuda.device_array((m, p), dtype=np.float32)
    matmul[(math.ceil(p / TILE), math.ceil(m / TILE)), (TILE, TILE)](cuda.to_device(ma), cuda.to_device(mb), mc)
    if not np.allclose(mc.copy_to_host(), ma @ mb, rtol=1e-4, atol=1e-4):
        failures.append("matmul")

    stream = cuda.stream()
    start, stop = cuda.event(), cuda.event()
    start.record(stream)
    sa = cuda.to_device(a, stream=stream)
    sc = cuda.device_array_like(sa, stream=stream)
    vadd[(n + 255) // 256, 256, stream](sa, sa, sc)
    out = np.empty_like(a)
    sc.copy_to_host(out, stream=stream)
    stop.record(stream)
    stream.synchronize()
    stop.synchronize()
    if not np.array_equal(out, a + a):
        failures.append("stream")
    if cuda.event_elapsed_time(start, stop) < 0:
        failures.append("event")

    for f in failures:
        print("FAIL:", f)
    print("FAIL numba_app" if failures else "PASS numba_app")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
