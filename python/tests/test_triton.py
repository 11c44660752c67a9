"""Unchanged @triton.jit kernels launched on kemu through kemu.triton
(Triton compiles them for sm_80/sm_90 without a GPU; kemu runs the PTX)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

if os.environ.get("KEMU_TEST_NO_TRITON"):
    pytest.skip("Triton is not run against a sanitizer build of libkemu", allow_module_level=True)
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

import kemu  # noqa: E402
import kemu.triton as kt  # noqa: E402


@pytest.fixture
def on_kemu():
    """Triton launches go to a fresh kemu.Device for the test."""
    with kt.enabled() as drv:
        yield drv
    assert not kt.is_enabled()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_vector_add(on_kemu):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    add_kernel[(triton.cdiv(1000, 256),)](x, y, out, 1000, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)
    r = kt.last_launch()
    assert r.warp_instructions > 0


def test_grid_lambda_num_warps_and_kemu_wrappers(on_kemu):
    x = np.arange(3000, dtype=np.float32)
    y = np.full(3000, 0.5, np.float32)
    out = np.zeros_like(x)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]), )  # noqa: E731
    add_kernel[grid](kemu.In(x), kemu.In(y), kemu.Out(out), 3000, BLOCK=1024, num_warps=8, num_stages=2)
    np.testing.assert_array_equal(out, x + y)


def test_in_place_same_array_twice(on_kemu):
    x = np.arange(500, dtype=np.float32)
    y = np.ones(500, np.float32)
    add_kernel[(4,)](x, y, x, 500, BLOCK=128)  # x += y, x passed as input and output
    np.testing.assert_array_equal(x, np.arange(500) + 1)


def test_strided_view_is_the_memory_a_gpu_kernel_sees(on_kemu):
    # a pointer argument is the address of the first element, as on a GPU: a
    # kernel that ignores strides walks the memory from there
    base = np.arange(2000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    add_kernel[(8,)](y, y, base[::2], np.int32(1000), BLOCK=128)  # a NumPy scalar argument too
    np.testing.assert_array_equal(base[:1000], 2.0)
    np.testing.assert_array_equal(base[1000:], np.arange(1000, 2000))


def test_strided_rows_through_their_strides(on_kemu):
    # row slices of wider arrays, with the strides passed as Triton code does
    rng = np.random.default_rng(5)
    big = rng.standard_normal((37, 300)).astype(np.float32)
    x = big[:, 50:250]
    out_base = np.full((37, 256), 7.0, np.float32)
    out = out_base[:, :200]
    softmax_kernel[(37,)](kemu.Out(out), x, x.strides[0] // 4, out.strides[0] // 4, 200, BLOCK=256)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert (out_base[:, 200:] == 7.0).all()  # between the rows: left as it was, not the Out fill
    y = np.ones(8, np.float32)
    with pytest.raises(kemu.KemuError, match="negative strides"):
        add_kernel[(1,)](y, y, y[::-1], 8, BLOCK=8)


def test_torch_tensors(on_kemu):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(6)
    x = torch.randn(1000, generator=g)
    y = torch.randn(1000, generator=g)
    out = torch.empty(1000)
    ptr = out.data_ptr()
    add_kernel[(4,)](x, y, out, 1000, BLOCK=256)
    assert out.data_ptr() == ptr
    np.testing.assert_array_equal(out.numpy(), x.numpy() + y.numpy())
    want = x.numpy() + y.numpy()
    add_kernel[(4,)](x, y, x, 1000, BLOCK=256)  # in place: one tensor as input and output
    np.testing.assert_array_equal(x.numpy(), want)
    # bfloat16 tensors (NumPy has no bfloat16): the bits go through
    xb, yb = torch.randn(300, generator=g).bfloat16(), torch.randn(300, generator=g).bfloat16()
    ob = torch.zeros(300, dtype=torch.bfloat16)
    add_kernel[(3,)](xb, yb, ob, 300, BLOCK=128)
    assert torch.equal(ob, (xb.float() + yb.float()).bfloat16())
    # a row slice of a wider tensor, with its strides, as Triton code passes them
    big = torch.randn(16, 300, generator=g)
    xs = big[:, 40:240]
    o = torch.zeros(16, 200)
    softmax_kernel[(16,)](o, xs, xs.stride(0), o.stride(0), 200, BLOCK=256)
    torch.testing.assert_close(o, torch.softmax(xs, dim=1), rtol=1e-5, atol=1e-7)


def test_row_softmax(on_kemu):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((37, 200)).astype(np.float32)
    out = np.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.shape[1], out.shape[1], x.shape[1], BLOCK=256)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(m, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n
    w = tl.load(w_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * stride + offs, d * tl.rsqrt(var + eps) * w + b, mask=m)


def test_layernorm(on_kemu):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((19, 300)) * 3 + 1).astype(np.float32)
    w = rng.standard_normal(300).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    y = np.empty_like(x)
    layernorm_kernel[(x.shape[0],)](x, y, w, b, x.shape[1], x.shape[1], 1e-5, BLOCK=512)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("num_stages", [1, 3])
def test_matmul_sm80_mma(on_kemu, num_stages):
    rng = np.random.default_rng(3)
    M, N, K = 96, 80, 72
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))  # noqa: E731
    k = matmul_kernel[grid](a, b, c, M, N, K, a.shape[1], b.shape[1], c.shape[1], BM=32, BN=32, BK=32,
                            num_warps=4, num_stages=num_stages)
    assert "mma.sync" in k.asm["ptx"]
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_matmul_sm90_wgmma():
    rng = np.random.default_rng(4)
    M, N, K = 128, 64, 64
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    with kt.enabled(target="sm_90"):
        k = matmul_kernel[(2, 1)](a, b, c, M, N, K, K, N, N, BM=64, BN=64, BK=32, num_warps=4)
    assert "wgmma" in k.asm["ptx"]
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


_configs = [triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 64}, num_warps=2)]


@triton.autotune(configs=_configs, key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def test_autotune_keeps_first_config(on_kemu):
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    scale_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )](x, out, 1000, 2.5)
    assert scale_kernel.best_config is _configs[0]
    np.testing.assert_array_equal(out, x * 2.5)


@triton.jit
def block_sum_racy(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(total_ptr, tl.load(total_ptr) + s)  # every program reads and writes total: a race


@triton.jit
def block_sum_atomic(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.atomic_add(total_ptr, s)


def test_racecheck_catches_cross_program_race():
    x = np.ones(1024, np.float32)
    total = np.zeros(1, np.float32)
    with kt.enabled(tools=["racecheck"]):
        with pytest.raises(kemu.CheckerError) as e:
            block_sum_racy[(8,)](x, total, 1024, BLOCK=128)
    findings = e.value.report.findings
    assert findings and all(f["tool"] == "racecheck" for f in findings)
    assert "between blocks" in e.value.report.text and "__global__" in e.value.report.text


def test_racecheck_clean_with_atomics():
    x = np.ones(1024, np.float32)
    total = np.zeros(1, np.float32)
    with kt.enabled(tools=["racecheck"]):
        block_sum_atomic[(8,)](x, total, 1024, BLOCK=128)
        assert kt.last_launch().checks.errors == 0
    assert total[0] == 1024.0


@triton.jit
def oob_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1.0)  # no mask: runs past the array's end


def test_out_of_bounds_faults(on_kemu):
    x = np.zeros(100, np.float32)
    with pytest.raises(kemu.KernelFault, match=r"illegal address(.|\n)*test_triton.py"):
        oob_kernel[(1,)](x, 100, BLOCK=128)


@triton.jit
def axpy_half(x_ptr, y_ptr, a: tl.float16, b: tl.int1, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r = tl.load(x_ptr + offs, mask=m) * a
    if b:
        r += tl.load(y_ptr + offs, mask=m)
    tl.store(y_ptr + offs, r, mask=m)


def test_annotated_fp16_and_bool_scalars(on_kemu):
    x = np.arange(256, dtype=np.float16)
    y = np.ones(256, np.float16)
    axpy_half[(2,)](x, y, 0.5, True, 256, BLOCK=128)
    np.testing.assert_array_equal(y, x * np.float16(0.5) + np.float16(1))


@triton.jit
def scale_desc(x_desc, y_desc, alpha, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    y_desc.store([pm * BM, pn * BN], x_desc.load([pm * BM, pn * BN]) * alpha)


def test_host_tensor_descriptor_sm80(on_kemu):
    from triton.tools.tensor_descriptor import TensorDescriptor
    x = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    y = np.zeros_like(x)
    # TensorDescriptor asks its base for data_ptr() when it is made: wrap by hand
    xd = TensorDescriptor.from_tensor(kt.TritonArray.of(x), [32, 16])
    yd = TensorDescriptor.from_tensor(kt.TritonArray.of(y), [32, 16])
    scale_desc[(2, 3)](xd, yd, 3.0, BM=32, BN=16)
    np.testing.assert_array_equal(y, 3 * x)


@triton.jit
def copy_device_desc(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    xd = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    yd.store([pm * BM, pn * BN], xd.load([pm * BM, pn * BN]) * 2)


@pytest.mark.parametrize("target", ["sm_80", pytest.param("sm_90", marks=pytest.mark.xfail(
    raises=kemu.PTXError, strict=True, reason="kemu lacks tensormap.replace (device-built TMA descriptors, "
    "which also take Triton's global scratch buffer)"))])
def test_device_tensor_descriptor(target):
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.zeros_like(x)
    with kt.enabled(target=target):
        k = copy_device_desc[(2, 2)](x, y, 64, 64, BM=32, BN=32)
    if target == "sm_90":
        assert k.metadata.global_scratch_size > 0
    np.testing.assert_array_equal(y, 2 * x)


def test_disable_restores_triton():
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction
    run = JITFunction.run
    before = kt._active_driver()
    drv = kt.enable()
    assert driver.active is drv and JITFunction.run is not run
    kt.disable()
    assert kt._active_driver() is before and JITFunction.run is run


_SCRIPT = textwrap.dedent("""
    import numpy as np, triton, triton.language as tl
    {imports}
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
    x = np.arange(100, dtype=np.float32); out = np.zeros_like(x)
    add_kernel[(1,)](x, x, out, 100, BLOCK=128)
    print("sum", out.sum())
""")


@pytest.mark.parametrize("how", ["KEMU=1 import", "python -m kemu.triton"])
def test_enable_from_environment(tmp_path, how):
    env = dict(os.environ)
    script = tmp_path / "script.py"
    if how == "KEMU=1 import":
        env["KEMU"] = "1"
        script.write_text(_SCRIPT.format(imports="import kemu.triton"))
        cmd = [sys.executable, str(script)]
    else:
        env.pop("KEMU", None)
        script.write_text(_SCRIPT.format(imports=""))
        cmd = [sys.executable, "-m", "kemu.triton", str(script)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "sum 9900.0" in p.stdout
