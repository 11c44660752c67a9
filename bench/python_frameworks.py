#!/usr/bin/env python3
"""Times the same kernels under kemu and under each Python GPU framework's
own interpreter, and prints a table (not part of make check).

    PYTHONPATH=python KEMU_LIBRARY=.libs/libkemu.so.0 python3 bench/python_frameworks.py \
        [--n 1048576] [--rows 1024] [--cols 1024] [--mnk 256] [--repeat 2] [--only triton,pallas]

Kernels: vector add (n float32), row softmax (rows x cols float32), matmul
(mnk^3, float16 in, float32 accumulate and out for Triton; float32 for Pallas).
Frameworks, each where it is importable:
- Triton: kemu.triton (Triton compiles to PTX for sm_80, kemu runs it) vs
  TRITON_INTERPRET=1 (Triton's NumPy interpreter);
- JAX Pallas (Triton lowering): kemu.pallas vs pallas_call(interpret=True);
- Numba: kemu.numba (unmodified @cuda.jit kernels on kemu's driver API,
  docs/python/numba.md) vs NUMBA_ENABLE_CUDASIM=1 (Numba's simulator, each
  thread as Python code); float32 throughout; the simulator gets sizes
  divided by --sim-div (it is slow), and its times are scaled back up
  (marked "x") so the rows compare per element.
Each configuration runs in a process of its own (the interpreters are chosen
by environment variables read at import). Times are the best of --repeat
runs after one warm-up run (which compiles), launch plus copies in and out;
every result is checked against NumPy.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np


def best(fn, repeat):
    fn()  # warm-up: compiles
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def inputs(args):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.n).astype(np.float32)
    y = rng.standard_normal(args.n).astype(np.float32)
    s = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    a = rng.standard_normal((args.mnk, args.mnk)).astype(np.float32)
    b = rng.standard_normal((args.mnk, args.mnk)).astype(np.float32)
    return x, y, s, a, b


def softmax_ref(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------
# Triton


def run_triton(args, mode):
    import triton
    import triton.language as tl
    if mode == "kemu":
        import kemu.triton
        kemu.triton.enable("sm_80")
        wrap = np.asarray
    else:
        import torch  # the interpreter takes torch tensors
        wrap = torch.from_numpy

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    x, y, s, a, b = inputs(args)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    out = np.empty_like(x)
    so = np.empty_like(s)
    c = np.empty((args.mnk, args.mnk), np.float32)
    BLOCK = 1024
    block_cols = triton.next_power_of_2(args.cols)
    tx, ty, tout, ts, tso, ta, tb, tc = map(wrap, (x, y, out, s, so, a16, b16, c))
    res = {}
    res["vector add"] = best(lambda: add_kernel[(triton.cdiv(args.n, BLOCK),)](tx, ty, tout, args.n, BLOCK=BLOCK),
                             args.repeat)
    np.testing.assert_allclose(out, x + y)
    res["row softmax"] = best(lambda: softmax_kernel[(args.rows,)](tso, ts, args.cols, args.cols, BLOCK=block_cols,
                                                                   num_warps=4), args.repeat)
    np.testing.assert_allclose(so, softmax_ref(s), rtol=1e-4, atol=1e-6)
    m = args.mnk
    res["matmul"] = best(lambda: matmul_kernel[(m // 64, m // 64)](ta, tb, tc, m, m, m, BM=64, BN=64, BK=32,
                                                                   num_warps=4), args.repeat)
    np.testing.assert_allclose(c, a16.astype(np.float32) @ b16.astype(np.float32), rtol=1e-2, atol=1e-2)
    return res


# ---------------------------------------------------------------------------
# JAX Pallas (Triton lowering)


def run_pallas(args, mode):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as pltriton
    interpret = mode == "interpret"
    params = pltriton.CompilerParams(num_warps=4)
    BLOCK = 1024

    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    def add(x, y):
        return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(x.shape[0] // BLOCK,), in_specs=[pl.BlockSpec((BLOCK,), lambda i: (i,))] * 2,
                              out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)), compiler_params=params,
                              interpret=interpret)(x, y)

    def softmax_kernel(x_ref, o_ref):
        v = x_ref[...]
        e = jnp.exp(v - jnp.max(v, axis=1, keepdims=True))
        o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)

    def softmax(s):
        return pl.pallas_call(softmax_kernel, out_shape=jax.ShapeDtypeStruct(s.shape, s.dtype),
                              grid=(s.shape[0],), in_specs=[pl.BlockSpec((1, s.shape[1]), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((1, s.shape[1]), lambda i: (i, 0)), compiler_params=params,
                              interpret=interpret)(s)

    def matmul_kernel(a_ref, b_ref, o_ref):
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    def matmul(a, b):
        m, t = a.shape[0], 64
        return pl.pallas_call(matmul_kernel, out_shape=jax.ShapeDtypeStruct((m, m), jnp.float32),
                              grid=(m // t, m // t),
                              in_specs=[pl.BlockSpec((t, m), lambda i, j: (i, 0)),
                                        pl.BlockSpec((m, t), lambda i, j: (0, j))],
                              out_specs=pl.BlockSpec((t, t), lambda i, j: (i, j)), compiler_params=params,
                              interpret=interpret)(a, b)

    x, y, s, a, b = inputs(args)
    if interpret:
        fa, fs, fm = jax.jit(add), jax.jit(softmax), jax.jit(matmul)
        run = {"add": lambda: np.asarray(fa(x, y)), "softmax": lambda: np.asarray(fs(s)),
               "matmul": lambda: np.asarray(fm(a, b))}
    else:
        import kemu
        import kemu.pallas
        dev = kemu.Device()
        run = {"add": lambda: kemu.pallas.call(add, x, y, device=dev),
               "softmax": lambda: kemu.pallas.call(softmax, s, device=dev),
               "matmul": lambda: kemu.pallas.call(matmul, a, b, device=dev)}
    res = {}
    got = {}

    def keep(name):
        def f():
            got[name] = run[name]()
        return f
    res["vector add"] = best(keep("add"), args.repeat)
    np.testing.assert_allclose(got["add"], x + y)
    res["row softmax"] = best(keep("softmax"), args.repeat)
    np.testing.assert_allclose(got["softmax"], softmax_ref(s), rtol=1e-4, atol=1e-6)
    res["matmul"] = best(keep("matmul"), args.repeat)
    np.testing.assert_allclose(got["matmul"], a @ b, rtol=2e-2, atol=0.1)  # tf32 dots on sm_80
    return res


def run_numba(args, mode):
    if mode == "kemu":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
        import kemu.numba
        kemu.numba.enable()
    global cuda, float32  # module globals, so that the simulator can swap them in the kernels
    from numba import cuda, float32
    import math
    div = args.sim_div if mode == "sim" else 1
    n = max(1024, args.n // div)
    rows = max(1, args.rows // div)
    cols = args.cols
    mnk = args.mnk if mode != "sim" else max(32, args.mnk // max(1, int(round(div ** (1 / 3)))) // 16 * 16)

    @cuda.jit
    def add(x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + y[i]

    @cuda.jit
    def softmax(x, out):  # a block per row, 128 threads striding over it
        row = cuda.blockIdx.x
        t = cuda.threadIdx.x
        red = cuda.shared.array(128, dtype=float32)
        m = -3.0e38
        for j in range(t, x.shape[1], 128):
            m = max(m, x[row, j])
        red[t] = m
        cuda.syncthreads()
        s = 64
        while s > 0:
            if t < s:
                red[t] = max(red[t], red[t + s])
            cuda.syncthreads()
            s //= 2
        m = red[0]
        cuda.syncthreads()
        acc = 0.0
        for j in range(t, x.shape[1], 128):
            acc += math.exp(x[row, j] - m)
        red[t] = acc
        cuda.syncthreads()
        s = 64
        while s > 0:
            if t < s:
                red[t] += red[t + s]
            cuda.syncthreads()
            s //= 2
        total = red[0]
        for j in range(t, x.shape[1], 128):
            out[row, j] = math.exp(x[row, j] - m) / total

    @cuda.jit
    def matmul(a, b, c):  # 16x16 shared-memory tiles
        sa = cuda.shared.array((16, 16), dtype=float32)
        sb = cuda.shared.array((16, 16), dtype=float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row, col = cuda.blockIdx.y * 16 + ty, cuda.blockIdx.x * 16 + tx
        acc = float32(0.0)
        for k0 in range(0, a.shape[1], 16):
            sa[ty, tx] = a[row, k0 + tx]
            sb[ty, tx] = b[k0 + ty, col]
            cuda.syncthreads()
            for k in range(16):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        c[row, col] = acc

    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    sm = rng.standard_normal((rows, cols)).astype(np.float32)
    a = rng.standard_normal((mnk, mnk)).astype(np.float32)
    b = rng.standard_normal((mnk, mnk)).astype(np.float32)
    got = {}

    def k_add():
        out = cuda.device_array_like(x)
        add[(n + 255) // 256, 256](cuda.to_device(x), cuda.to_device(y), out)
        got["add"] = out.copy_to_host()

    def k_softmax():
        out = cuda.device_array_like(sm)
        softmax[rows, 128](cuda.to_device(sm), out)
        got["softmax"] = out.copy_to_host()

    def k_matmul():
        c = cuda.device_array((mnk, mnk), dtype=np.float32)
        matmul[(mnk // 16, mnk // 16), (16, 16)](cuda.to_device(a), cuda.to_device(b), c)
        got["matmul"] = c.copy_to_host()

    res = {"vector add": best(k_add, args.repeat) * args.n / n,
           "row softmax": best(k_softmax, args.repeat) * args.rows / rows,
           "matmul": best(k_matmul, args.repeat) * (args.mnk / mnk) ** 3}
    np.testing.assert_allclose(got["add"], x + y, rtol=1e-6)
    e = np.exp(sm - sm.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got["softmax"], e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["matmul"], a @ b, rtol=1e-3, atol=1e-3)
    res["scaled"] = div > 1
    return res


# ---------------------------------------------------------------------------

CONFIGS = [  # (framework, mode, environment, what must import)
    ("triton", "kemu", {}, ["triton"]),
    ("triton", "interpreter", {"TRITON_INTERPRET": "1"}, ["triton", "torch"]),
    ("pallas", "kemu", {}, ["jax", "triton"]),
    ("pallas", "interpret", {}, ["jax"]),
    ("numba", "kemu", {}, ["numba"]),
    ("numba", "sim", {"NUMBA_ENABLE_CUDASIM": "1"}, ["numba"]),
]

LABELS = {("triton", "kemu"): "Triton on kemu", ("triton", "interpreter"): "TRITON_INTERPRET=1",
          ("pallas", "kemu"): "Pallas on kemu", ("pallas", "interpret"): "Pallas interpret=True",
          ("numba", "kemu"): "Numba on kemu", ("numba", "sim"): "NUMBA_ENABLE_CUDASIM=1"}


def importable(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--rows", type=int, default=1024)
    p.add_argument("--cols", type=int, default=1024)
    p.add_argument("--mnk", type=int, default=256)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--only", default="", help="frameworks to run: triton,pallas,numba")
    p.add_argument("--sim-div", type=int, default=64, help="size divisor for Numba's simulator")
    p.add_argument("--run", help=argparse.SUPPRESS)  # FRAMEWORK:MODE, in a child process
    args = p.parse_args()
    if args.mnk % 64 or args.n % 1024:
        p.error("--mnk must be a multiple of 64 and --n of 1024")
    if args.run:
        fw, mode = args.run.split(":")
        res = {"triton": run_triton, "pallas": run_pallas, "numba": run_numba}[fw](args, mode)
        print("RESULT " + json.dumps(res))
        return 0
    only = set(filter(None, args.only.split(",")))
    rows = []
    for fw, mode, env, needs in CONFIGS:
        if only and fw not in only:
            continue
        missing = [n for n in needs if not importable(n)]
        if missing:
            rows.append((LABELS[fw, mode], None, "needs " + ", ".join(missing)))
            continue
        argv = [sys.executable, os.path.abspath(__file__), "--run", f"{fw}:{mode}", "--n", str(args.n),
                "--rows", str(args.rows), "--cols", str(args.cols), "--mnk", str(args.mnk),
                "--repeat", str(args.repeat), "--sim-div", str(args.sim_div)]
        out = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True)
        line = next((ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if out.returncode or line is None:
            tail = (out.stderr.strip().splitlines() or ["?"])[-1]
            rows.append((LABELS[fw, mode], None, f"failed: {tail}"))
            continue
        rows.append((LABELS[fw, mode], json.loads(line[7:]), ""))
    kernels = ["vector add", "row softmax", "matmul"]
    head = f"{'':24}" + "".join(f"{k:>14}" for k in kernels)
    print(f"sizes: vector add n={args.n}, row softmax {args.rows}x{args.cols}, matmul {args.mnk}^3; "
          f"best of {args.repeat} after a warm-up, seconds")
    print(head)
    for label, res, note in rows:
        if res is None:
            print(f"{label:24}  {note}")
        else:
            mark = " (x: scaled from --sim-div smaller sizes)" if res.get("scaled") else ""
            print(f"{label:24}" + "".join(f"{res[k]:14.4f}" for k in kernels) + mark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
