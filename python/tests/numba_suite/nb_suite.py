# A Numba suite for test_numba.py: run by pytest -p kemu.pytest --kemu-tool racecheck,
# test_racy must fail with the race report and test_fixed pass.
import numpy as np
from numba import cuda


@cuda.jit(lineinfo=True)
def shift_racy(x, out):
    buf = cuda.shared.array(64, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    out[t] = buf[(t + 1) % 64]


@cuda.jit(lineinfo=True)
def shift_fixed(x, out):
    buf = cuda.shared.array(64, dtype=np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    out[t] = buf[(t + 1) % 64]


def run(kernel):
    x = np.arange(64, dtype=np.float32)
    out = cuda.device_array(64, dtype=np.float32)
    kernel[1, 64](cuda.to_device(x), out)
    return out.copy_to_host(), x


def test_fixed():
    got, x = run(shift_fixed)
    assert np.array_equal(got, np.roll(x, -1))


def test_racy():
    run(shift_racy)
