"""Triton kernels whose PTX kemu must load and run (tests/e2e/cases/frontend-triton-*).

Run with Triton installed (pip install triton numpy; no GPU needed):
    python3 kernels.py
It compiles each kernel for sm_80 (Triton 3.x, num_warps=4), and the
matmul for sm_90 too, and writes NAME.smXX.ptx, the inputs (seeded NumPy data) and the references NumPy
computes, REF_*.npy. The committed files are its output, so the tests run
where Triton is absent. Triton's PTX differs from nvcc's: `.ptr .global
.align 1` parameters, one-element vector operands `{ %r1 }` in its ld/st
inline assembly, two extra pointer parameters (global and profile scratch)
after the kernel's own, and the shared memory in one `.extern .shared`
array sized at launch (`--shared`, the compile's metadata.shared).
"""
import json
import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    s = tl.sum(e, axis=0)
    tl.store(out_ptr + row * n_cols + offs, e / s, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=m, other=0.).to(tl.float32)
    mean = tl.sum(x, 0) / n
    d = tl.where(m, x - mean, 0.)
    var = tl.sum(d * d, 0) / n
    w = tl.load(w_ptr + offs, mask=m, other=0.).to(tl.float32)
    tl.store(y_ptr + row * n + offs, (d * tl.rsqrt(var + eps) * w).to(tl.bfloat16), mask=m)


@triton.jit
def histogram_kernel(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(h_ptr + (v & 63), 1, mask=m)


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), 0))


@triton.jit
def argmax_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
    tl.store(o_ptr + row, tl.argmax(x, 0))


def to_bf16(a):
    """float32 -> bfloat16 bits, round to nearest even (as tl.bfloat16)."""
    u = np.asarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


def compile_ptx(fn, signature, constexprs, cc=80):
    k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs),
                       target=GPUTarget("cuda", cc, 32))
    with open(f"{fn.__name__}.sm{cc}.ptx", "w") as f:
        f.write(k.asm["ptx"])
    return {"shared": k.metadata.shared, "num_warps": k.metadata.num_warps}


def main():
    matmul_signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                        "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    matmul_tiles = {"BM": 64, "BN": 64, "BK": 32}
    meta = {
        "triton": triton.__version__,
        "add_kernel": compile_ptx(add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                               "BLOCK": "constexpr"}, {"BLOCK": 256}),
        "softmax_kernel": compile_ptx(softmax_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "n_cols": "i32",
                                                       "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "matmul_kernel": compile_ptx(matmul_kernel, matmul_signature, matmul_tiles),
        "layernorm_kernel": compile_ptx(layernorm_kernel, {"x_ptr": "*bf16", "y_ptr": "*bf16", "w_ptr": "*bf16",
                                                           "n": "i32", "eps": "fp32", "BLOCK": "constexpr"},
                                        {"BLOCK": 256}),
        "histogram_kernel": compile_ptx(histogram_kernel, {"x_ptr": "*i32", "h_ptr": "*i32", "n": "i32",
                                                           "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "cumsum_kernel": compile_ptx(cumsum_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "BLOCK": "constexpr"},
                                     {"BLOCK": 256}),
        "argmax_kernel": compile_ptx(argmax_kernel, {"x_ptr": "*fp32", "o_ptr": "*i32", "n": "i32",
                                                     "BLOCK": "constexpr"}, {"BLOCK": 128}),
        # for Hopper, tl.dot becomes wgmma.mma_async, which kemu does not run
        # yet: the e2e case checks that it says so
        "matmul_kernel.sm90": compile_ptx(matmul_kernel, matmul_signature, matmul_tiles, cc=90),
    }
    with open("metadata.json", "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    rng = np.random.default_rng(2026)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    np.save("x.npy", x)
    np.save("y.npy", y)
    np.save("REF_add.npy", x + y)
    a = rng.standard_normal((100, 300)).astype(np.float32)
    np.save("a.npy", a)
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    np.save("REF_softmax.npy", (e / e.sum(1, keepdims=True)).astype(np.float32))
    A = rng.standard_normal((100, 70)).astype(np.float16)
    B = rng.standard_normal((70, 150)).astype(np.float16)
    np.save("A.npy", A)
    np.save("B.npy", B)
    np.save("REF_matmul.npy", (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32))
    # layernorm over bf16 rows (saved as '<V2', kemu's bf16); the reference
    # rounds the float result to bf16 as the kernel's store does
    xb = to_bf16(rng.standard_normal((50, 200)))
    wb = to_bf16(rng.standard_normal(200))
    np.save("xb.npy", xb.view("V2"))
    np.save("wb.npy", wb.view("V2"))
    xf = from_bf16(xb).astype(np.float64)
    mu = xf.mean(1, keepdims=True)
    var = ((xf - mu) ** 2).mean(1, keepdims=True)
    ln = (xf - mu) / np.sqrt(var + 1e-5) * from_bf16(wb)
    np.save("REF_layernorm.npy", to_bf16(ln.astype(np.float32)).view("V2"))
    v = rng.integers(0, 1000, 5000).astype(np.int32)
    np.save("v.npy", v)
    np.save("REF_histogram.npy", np.bincount(v & 63, minlength=64).astype(np.int32))
    c = rng.integers(-100, 100, 256).astype(np.int32)
    np.save("c.npy", c)
    np.save("REF_cumsum.npy", np.cumsum(c).astype(np.int32))
    am = rng.standard_normal((30, 100)).astype(np.float32)
    np.save("am.npy", am)
    np.save("REF_argmax.npy", am.argmax(1).astype(np.int32))


if __name__ == "__main__":
    main()
