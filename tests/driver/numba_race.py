# A Numba kernel that forgets cuda.syncthreads() between writing shared
# memory and reading a neighbour's entry (tests/driver/numba.sh runs it
# under `kemu exec --tool racecheck python`, which must report the race at
# the line marked RACE), and its fixed twin (with --fixed: no race).
import sys

import numpy as np
from numba import cuda

FIXED = "--fixed" in sys.argv


@cuda.jit(lineinfo=True)
def shift_racy(x, out):
    buf = cuda.shared.array(64, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    out[t] = buf[(t + 1) % 64]  # RACE: read without cuda.syncthreads()


@cuda.jit(lineinfo=True)
def shift_fixed(x, out):
    buf = cuda.shared.array(64, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    out[t] = buf[(t + 1) % 64]


x = cuda.to_device(np.arange(64, dtype=np.float32))
out = cuda.device_array(64, dtype=np.float32)
(shift_fixed if FIXED else shift_racy)[1, 64](x, out)
cuda.synchronize()
print("done", "fixed" if FIXED else "racy")
