"""Triton kernels whose PTX kemu must load and run (tests/e2e/cases/frontend-triton-*).

Run with Triton installed (pip install triton numpy; no GPU needed):
    python3 kernels.py
It compiles each kernel for sm_80 (Triton 3.x, num_warps=4), and the
matmul for sm_90 too, and writes NAME.smXX.ptx, the inputs (seeded NumPy data) and the references NumPy
computes, REF_*.npy. For Hopper it also compiles matmul_sm90 in variants
that cover wgmma.mma_async's forms (f16/bf16/tf32/e4m3/s8 inputs, f32, f16
and s32 accumulators, K-major and MN-major operands, the 32, 64 and 128 B
swizzles, A in registers) as sm90_VARIANT.sm90.ptx with their own inputs
and references (sm90_*.npy), and a matmul that loads its tiles through
tensor descriptors (TMA), sm90_tma.sm90.ptx. The committed files are its output, so the tests run
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
def matmul_sm90(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                AT: tl.constexpr, BT: tl.constexpr, ACC16: tl.constexpr):
    """C = A @ B; AT: A is given as K x M (A^T row-major), BT: B as N x K;
    ACC16: accumulate in f16 (tl.dot out_dtype)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if ACC16:
        acc = tl.zeros((BM, BN), dtype=tl.float16)
    else:
        acc = tl.zeros((BM, BN), dtype=c_ptr.dtype.element_ty)
    for k in range(0, K, BK):
        if AT:
            at = tl.load(a_ptr + (k + rk)[:, None] * M + rm[None, :],
                         mask=((k + rk)[:, None] < K) & (rm[None, :] < M), other=0.0)
            a = tl.trans(at)
        else:
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                        mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        if BT:
            bt = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :],
                         mask=(rn[:, None] < N) & ((k + rk)[None, :] < K), other=0.0)
            b = tl.trans(bt)
        else:
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                        mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        if ACC16:
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        else:
            acc = tl.dot(a, b, acc, input_precision="tf32")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def twodot_sm90(a_ptr, b_ptr, d_ptr, c_ptr, M, K: tl.constexpr, N: tl.constexpr, P: tl.constexpr,
                BM: tl.constexpr):
    """C = (A @ B).to(f16) @ D: the second dot takes its A operand from registers."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.arange(0, K)
    rn = tl.arange(0, N)
    rp = tl.arange(0, P)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    t = tl.dot(a, b).to(tl.float16)
    d = tl.load(d_ptr + rn[:, None] * P + rp[None, :])
    tl.store(c_ptr + rm[:, None] * P + rp[None, :], tl.dot(t, d), mask=rm[:, None] < M)


@triton.jit
def matmul_tma_sm90(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B with A and B read through tensor descriptors (TMA,
    cp.async.bulk.tensor into 128-byte swizzled tiles that wgmma reads)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
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


def compile_ptx(fn, signature, constexprs, cc=80, name=None):
    # Hopper kernels say PTX ISA 9.0 (what CUDA 13.0 drivers JIT-compile), not
    # the newer version Triton's own ptxas allows: the code is the same (Triton
    # generates it for PTX 9.0 at most and only rewrites .version), and the
    # GPU cross-check (tests/gpu/crosscheck.sh) can then run it on such drivers
    options = {"ptx_version": 90} if cc >= 90 else {}
    k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs),
                       target=GPUTarget("cuda", cc, 32), options=options)
    with open(f"{name or fn.__name__}.sm{cc}.ptx", "w") as f:
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
        # for Hopper, tl.dot becomes wgmma.mma_async
        "matmul_kernel.sm90": compile_ptx(matmul_kernel, matmul_signature, matmul_tiles, cc=90),
    }
    meta.update(compile_sm90())
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
    save_sm90_data()


# ---- Hopper (wgmma) ------------------------------------------------------------
# variant: (A, B, C types, tiles BM BN BK, AT, BT, ACC16); the comment says
# which wgmma form and shared-memory layouts Triton 3.9 picks
SM90_VARIANTS = {
    "f16": ("fp16", "fp16", "fp32", 64, 64, 32, 0, 0, 0),      # A K-major 64 B swizzle, B MN-major 128 B
    "f16_n128": ("fp16", "fp16", "fp32", 64, 128, 64, 0, 0, 0),  # A 128 B; B MN-major 128 B in two blocks (LBO)
    "f16_n16": ("fp16", "fp16", "fp32", 64, 16, 32, 0, 0, 0),    # B MN-major 32 B swizzle
    "f16_n32": ("fp16", "fp16", "fp32", 64, 32, 32, 0, 0, 0),    # B MN-major 64 B swizzle
    "f16_bt": ("fp16", "fp16", "fp32", 64, 64, 64, 0, 1, 0),     # B K-major 128 B swizzle
    "f16_bt_k16": ("fp16", "fp16", "fp32", 64, 32, 16, 0, 1, 0),  # A and B K-major 32 B swizzle
    "f16_at": ("fp16", "fp16", "fp32", 64, 64, 32, 1, 0, 0),     # A MN-major (imm-trans-a)
    "f16_acc16": ("fp16", "fp16", "fp16", 64, 64, 32, 0, 0, 1),  # .f16 accumulator
    "bf16": ("bf16", "bf16", "fp32", 64, 128, 64, 0, 0, 0),
    "tf32": ("fp32", "fp32", "fp32", 64, 64, 32, 0, 0, 0),       # k8, both K-major; cp.async loads
    "e4m3": ("fp8e4nv", "fp8e4nv", "fp32", 64, 64, 64, 0, 1, 0),  # k32
    "s8": ("i8", "i8", "i32", 64, 64, 64, 0, 1, 0),              # k32, s32 accumulator
}
SM90_M, SM90_N, SM90_K = 100, 150, 70


def compile_sm90():
    meta = {}
    for name, (ta, tb, tc, bm, bn, bk, at, bt, acc16) in SM90_VARIANTS.items():
        sig = {"a_ptr": "*" + ta, "b_ptr": "*" + tb, "c_ptr": "*" + tc, "M": "i32", "N": "i32", "K": "i32",
               "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "AT": "constexpr", "BT": "constexpr",
               "ACC16": "constexpr"}
        meta["sm90_" + name] = compile_ptx(matmul_sm90, sig, {"BM": bm, "BN": bn, "BK": bk, "AT": at, "BT": bt,
                                                               "ACC16": acc16}, cc=90, name="sm90_" + name)
    meta["sm90_twodot"] = compile_ptx(twodot_sm90, {"a_ptr": "*fp16", "b_ptr": "*fp16", "d_ptr": "*fp16",
                                                    "c_ptr": "*fp32", "M": "i32", "K": "constexpr",
                                                    "N": "constexpr", "P": "constexpr", "BM": "constexpr"},
                                      {"K": 32, "N": 64, "P": 32, "BM": 64}, cc=90, name="sm90_twodot")
    # each descriptor is a 128-byte CUtensorMap parameter followed by its
    # shape (2 x i32) and strides (2 x i64); kemu run passes the map as
    # tmap=64x64,swizzle=128:in:... (Triton's nvmma_shared layout: 128-byte swizzle)
    desc = "tensordesc<fp16[64, 64]>"
    meta["sm90_tma"] = compile_ptx(matmul_tma_sm90, {"a_desc": desc, "b_desc": desc, "c_ptr": "*fp32", "M": "i32",
                                                     "N": "i32", "K": "i32", "BM": "constexpr", "BN": "constexpr",
                                                     "BK": "constexpr"},
                                   {"BM": 64, "BN": 64, "BK": 64}, cc=90, name="sm90_tma")
    return meta


def e4m3_values():
    """The 256 e4m3 values by bit pattern (NaN for S.1111.111)."""
    v = []
    for b in range(256):
        e, m = (b >> 3) & 15, b & 7
        x = np.nan if (e == 15 and m == 7) else (m * 2.0 ** -9 if e == 0 else (8 + m) * 2.0 ** (e - 10))
        v.append(-x if b & 0x80 else x)
    return np.array(v)


def to_e4m3(x):
    """Nearest e4m3 bit pattern of each value (|x| well inside the range)."""
    vals = e4m3_values()
    finite = np.where(~np.isnan(vals))[0]
    return finite[np.abs(vals[finite][None, :] - x.reshape(-1, 1)).argmin(1)].astype(np.uint8).reshape(x.shape)


def save_sm90_data():
    """Inputs sm90_a_*.npy / sm90_b_*.npy and references sm90_ref_*.npy
    (float64 products of the exact inputs, rounded to the output type)."""
    rng = np.random.default_rng(90)
    M, N, K = SM90_M, SM90_N, SM90_K
    a16 = rng.standard_normal((M, K)).astype(np.float16)
    b16 = rng.standard_normal((K, N)).astype(np.float16)
    ref16 = a16.astype(np.float64) @ b16.astype(np.float64)
    np.save("sm90_a_f16.npy", a16)
    np.save("sm90_at_f16.npy", np.ascontiguousarray(a16.T))
    np.save("sm90_b_f16.npy", b16)
    np.save("sm90_bt_f16.npy", np.ascontiguousarray(b16.T))
    np.save("sm90_ref_f16.npy", ref16.astype(np.float32))
    np.save("sm90_ref_f16_acc16.npy", ref16.astype(np.float16))
    abf = to_bf16(rng.standard_normal((M, K)))
    bbf = to_bf16(rng.standard_normal((K, N)))
    np.save("sm90_a_bf16.npy", abf.view("V2"))
    np.save("sm90_b_bf16.npy", bbf.view("V2"))
    np.save("sm90_ref_bf16.npy", (from_bf16(abf).astype(np.float64) @ from_bf16(bbf).astype(np.float64))
            .astype(np.float32))
    # tf32 keeps 10 mantissa bits: inputs that have no more are used exactly
    tf = [(rng.standard_normal(s).astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
          for s in ((M, K), (K, N))]
    np.save("sm90_a_tf32.npy", tf[0])
    np.save("sm90_b_tf32.npy", tf[1])
    np.save("sm90_ref_tf32.npy", (tf[0].astype(np.float64) @ tf[1].astype(np.float64)).astype(np.float32))
    a8 = to_e4m3(rng.standard_normal((M, K)) * 4)
    b8 = to_e4m3(rng.standard_normal((K, N)) * 4)
    np.save("sm90_a_e4m3.npy", a8)
    np.save("sm90_bt_e4m3.npy", np.ascontiguousarray(b8.T))
    vals = e4m3_values()
    np.save("sm90_ref_e4m3.npy", (vals[a8] @ vals[b8]).astype(np.float32))
    ai = rng.integers(-128, 128, (M, K)).astype(np.int8)
    bi = rng.integers(-128, 128, (K, N)).astype(np.int8)
    np.save("sm90_a_s8.npy", ai)
    np.save("sm90_bt_s8.npy", np.ascontiguousarray(bi.T))
    np.save("sm90_ref_s8.npy", (ai.astype(np.int64) @ bi.astype(np.int64)).astype(np.int32))
    a2 = rng.standard_normal((M, 32)).astype(np.float16)
    b2 = rng.standard_normal((32, 64)).astype(np.float16)
    d2 = rng.standard_normal((64, 32)).astype(np.float16)
    np.save("sm90_a_twodot.npy", a2)
    np.save("sm90_b_twodot.npy", b2)
    np.save("sm90_d_twodot.npy", d2)
    t = (a2.astype(np.float64) @ b2.astype(np.float64)).astype(np.float32).astype(np.float16)
    np.save("sm90_ref_twodot.npy", (t.astype(np.float64) @ d2.astype(np.float64)).astype(np.float32))
    # TMA needs row strides that are multiples of 16 bytes: K = 72, N = 152
    at = rng.standard_normal((100, 72)).astype(np.float16)
    bt = rng.standard_normal((72, 152)).astype(np.float16)
    np.save("sm90_a_tma.npy", at)
    np.save("sm90_b_tma.npy", bt)
    np.save("sm90_ref_tma.npy", (at.astype(np.float64) @ bt.astype(np.float64)).astype(np.float32))


if __name__ == "__main__":
    main()
