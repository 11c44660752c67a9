"""Numba CUDA kernels whose PTX kemu must load and run (tests/e2e/cases/frontend-numba-*).

Run with numba-cuda installed (pip install numba-cuda numpy; CUDA's NVVM,
no GPU needed):
    python3 kernels.py
It compiles each kernel for sm_80 with numba.cuda.compile_ptx and writes
NAME.ptx, the inputs (seeded NumPy data) and the references NumPy computes,
REF_*.npy. The committed files are its output, so the tests run where Numba
is absent. Numba passes each array as 7 parameters (meminfo, parent, nitems,
itemsize, data, shape, strides): on the kemu command line
`u64:0 u64:0 s64:N s64:ITEMSIZE in:FILE s64:N s64:ITEMSIZE` for a 1-d array.
"""
import numpy as np
import numba
from numba import cuda, float32


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def block_sum(x, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    k = 64
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def main():
    for fn, sig in [(saxpy, "void(float32, float32[:], float32[:], float32[:])"),
                    (block_sum, "void(float32[:], float32[:])")]:
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(8, 0))
        with open(fn.__name__ + ".ptx", "w") as f:
            f.write(ptx)
    with open("VERSION", "w") as f:
        f.write(f"numba {numba.__version__}\n")
    rng = np.random.default_rng(2026)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    np.save("x.npy", x)
    np.save("y.npy", y)
    # NVVM contracts a * x[i] + y[i] into fma.rn.f32: one rounding (the
    # product of two floats is exact in double, and so is this sum here)
    np.save("REF_saxpy.npy", (2.5 * x.astype(np.float64) + y).astype(np.float32))
    sums = [x[b * 128:(b + 1) * 128].astype(np.float64).sum() for b in range(8)]
    np.save("REF_block_sum.npy", np.array(sums, dtype=np.float32))


if __name__ == "__main__":
    main()
