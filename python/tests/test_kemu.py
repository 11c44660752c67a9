"""Tests of the kemu Python package over libkemu (make check runs them
through tests/python.sh when Python 3 has numpy and pytest)."""
import os
import pathlib

import numpy as np
import pytest

import kemu

SRC = pathlib.Path(os.environ.get("top_srcdir", pathlib.Path(__file__).resolve().parents[2]))
SAXPY = SRC / "samples" / "saxpy" / "saxpy.ptx"
PLAN = SRC / "tests" / "plan" / "plan.ptx"
RACE = SRC / "tests" / "check" / "race.ptx"

ADD_ONE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry add_one(.param .u64 x, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<5>; .reg .f32 %f<3>; .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [x]; ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
    mad.lo.s32 %r2, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r2, %r1; @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4]; add.f32 %f2, %f1, 0f3F800000; st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
"""


@pytest.fixture
def dev():
    with kemu.Device(threads=1) as d:
        yield d


def test_saxpy_updates_the_array_in_place(dev):
    saxpy = dev.load_ptx_file(SAXPY)["saxpy"]
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    r = saxpy(1000, 2.0, x, y, grid=4, block=256)
    np.testing.assert_array_equal(y, 2.0 * np.arange(1000, dtype=np.float32) + 1.0)
    np.testing.assert_array_equal(x, np.arange(1000, dtype=np.float32))  # an input stays as it was
    assert r.warp_instructions > 0 and r.thread_instructions >= r.warp_instructions
    assert repr(saxpy).startswith("<kemu kernel saxpy(.u32 saxpy_param_0")


def test_ptx_from_text_and_the_only_kernel(dev):
    mod = dev.load_ptx(ADD_ONE)
    assert mod.kernels == ["add_one"]
    x = np.linspace(0, 1, 100, dtype=np.float32)
    want = x + 1
    mod.kernel()(x, 100, grid=1, block=128)
    np.testing.assert_array_equal(x, want)


def test_out_starts_with_the_fill_and_in_is_not_copied_back(dev):
    k = dev.load_ptx_file(PLAN)["maybe_fault"]
    out = np.zeros(300, dtype=np.int32)
    k(kemu.Out(out), 200, 0, grid=4, block=64)
    np.testing.assert_array_equal(out[:200], np.arange(200))
    assert (out[200:] == np.iinfo(np.int32).max).all()  # never written: the fill shows
    ro = np.zeros(256, dtype=np.int32)
    k(kemu.In(ro), 256, 0, grid=4, block=64)
    assert not ro.any()


def test_non_contiguous_and_read_only_arrays(dev):
    k = dev.load_ptx(ADD_ONE)["add_one"]
    base = np.zeros(20, dtype=np.float32)
    view = base[::2]  # strided: copied in, copied back into the view
    k(view, 10, grid=1, block=32)
    np.testing.assert_array_equal(base[::2], np.ones(10))
    np.testing.assert_array_equal(base[1::2], np.zeros(10))
    ro = np.zeros(10, dtype=np.float32)
    ro.flags.writeable = False
    k(ro, 10, grid=1, block=32)  # read-only arrays are inputs
    assert not ro.any()
    with pytest.raises(ValueError, match="read-only"):
        k(kemu.Out(ro), 10, grid=1, block=32)


def test_scalars_are_typed_from_the_ptx(dev):
    k = dev.load_ptx(ADD_ONE)["add_one"]
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match="wants an integer"):
        k(x, 2.5, grid=1, block=32)
    with pytest.raises(OverflowError):
        k(x, 1 << 40, grid=1, block=32)
    with pytest.raises(TypeError, match="not a pointer"):
        k(x, np.zeros(4, np.float32), grid=1, block=32)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        k(x, grid=1, block=32)
    k(x, np.uint32(3), grid=1, block=32)  # NumPy scalars are numbers too
    np.testing.assert_array_equal(x, [1, 1, 1, 0])


def test_fault_raises_with_kernel_block_and_thread(dev):
    k = dev.load_ptx_file(PLAN)["maybe_fault"]
    out = np.zeros(256, dtype=np.int32)
    with pytest.raises(kemu.KernelFault) as e:
        k(out, 256, 1, grid=4, block=64)
    assert "maybe_fault" in str(e.value) and "block" in str(e.value) and "thread" in str(e.value)
    assert not out.any()  # nothing was copied back


def test_bad_ptx_names_line_and_column(dev):
    with pytest.raises(kemu.PTXError) as e:
        dev.load_ptx(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n",
                     name="bad.ptx")
    assert "bad.ptx:4:" in str(e.value)
    with pytest.raises(KeyError, match="add_one"):
        dev.load_ptx(ADD_ONE)["nope"]


def test_launch_configuration_errors(dev):
    k = dev.load_ptx(ADD_ONE)["add_one"]
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(kemu.KemuError, match="block"):
        k(x, 4, grid=1, block=4096)
    with pytest.raises(ValueError):
        k(x, 4, grid=(1, 1, 1, 1), block=32)


def test_racecheck_finds_the_missing_barrier():
    with kemu.Device(threads=1, tools=["racecheck"]) as d:
        mod = d.load_ptx_file(RACE)
        x = np.arange(64, dtype=np.float32)
        with pytest.raises(kemu.CheckerError) as e:
            mod["shared_raw"](x, np.zeros(64, np.float32), grid=1, block=64)
        report = e.value.report
        assert report.errors >= 1
        assert any(f["tool"] == "racecheck" for f in report.findings)
        assert "ERROR SUMMARY" in report.text
        # the fixed twin is clean
        r = mod["shared_raw_fixed"](x, np.zeros(64, np.float32), grid=1, block=64)
        assert r.checks is not None and r.checks.errors == 0


def test_findings_without_raising():
    with kemu.Device(threads=1, tools=["racecheck"], raise_on_findings=False) as d:
        mod = d.load_ptx_file(RACE)
        r = mod["shared_raw"](np.arange(64, dtype=np.float32), np.zeros(64, np.float32), grid=1, block=64)
        assert r.checks.errors >= 1


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    with kemu.Device(threads=1) as d:
        saxpy = d.load_ptx_file(SAXPY)["saxpy"]
        x = torch.arange(1000, dtype=torch.float32)
        y = torch.ones(1000, dtype=torch.float32)
        ptr = y.data_ptr()
        saxpy(1000, 2.0, x, y, grid=4, block=256)
        assert y.data_ptr() == ptr  # written back into the caller's tensor, not a new one
        np.testing.assert_array_equal(y.numpy(), 2.0 * np.arange(1000, dtype=np.float32) + 1.0)
        np.testing.assert_array_equal(x.numpy(), np.arange(1000, dtype=np.float32))
        # kemu.Out of a tensor starts with the fill; tensors that need grad go in detached
        k = d.load_ptx_file(PLAN)["maybe_fault"]
        out = torch.zeros(300, dtype=torch.int32)
        k(kemu.Out(out), 200, 0, grid=4, block=64)
        assert out[:200].tolist() == list(range(200)) and (out[200:] == np.iinfo(np.int32).max).all()
        w = torch.zeros(8, requires_grad=True)
        d.load_ptx(ADD_ONE)["add_one"](kemu.In(w), 8, grid=1, block=32)
        assert not w.detach().any()


def test_torch_non_contiguous_tensor_is_written_back():
    torch = pytest.importorskip("torch")
    with kemu.Device(threads=1) as d:
        k = d.load_ptx(ADD_ONE)["add_one"]
        m = torch.zeros(10, 3)
        k(m[:, 1], 10, grid=1, block=32)  # a column: packed, run, copied back into m
        assert (m[:, 1] == 1).all() and (m[:, 0] == 0).all() and (m[:, 2] == 0).all()
        t = torch.zeros(4, 5).t()  # transposed
        k(t, 20, grid=1, block=32)
        assert (t == 1).all()


def test_torch_tensor_errors():
    torch = pytest.importorskip("torch")
    with kemu.Device(threads=1) as d:
        k = d.load_ptx(ADD_ONE)["add_one"]
        with pytest.raises(ValueError, match="kemu runs on the CPU"):
            k(torch.zeros(4, device="meta"), 4, grid=1, block=32)
        with pytest.raises(TypeError, match="not supported"):
            k(torch.zeros(4, dtype=torch.complex64), 4, grid=1, block=32)


class _DLPackOnly:
    """A producer NumPy knows only through the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_other_dlpack_producers(dev):
    k = dev.load_ptx(ADD_ONE)["add_one"]
    a = np.zeros(8, np.float32)
    src = _DLPackOnly(a)
    if np.from_dlpack(src).flags.writeable:  # NumPy 2.1+: DLPack 1.0 says whether it is read-only
        k(src, 8, grid=1, block=32)
        np.testing.assert_array_equal(a, 1.0)
    else:  # older NumPy imports every DLPack buffer read-only: an input only
        k(src, 8, grid=1, block=32)
        assert not a.any()
        with pytest.raises(ValueError, match="read-only through DLPack"):
            k(kemu.Out(src), 8, grid=1, block=32)


def test_both_backends_through_the_standin():
    standin = os.environ.get("KEMU_TEST_STANDIN")
    if not standin or not os.path.exists(standin):
        pytest.skip("the libcuda stand-in is not built")
    os.environ["KEMU_CUDA_LIBRARY"] = standin
    with kemu.Device(threads=1) as d:
        saxpy = d.load_ptx_file(SAXPY)["saxpy"]
        y = np.ones(100, dtype=np.float32)
        r = saxpy(100, 3.0, kemu.In(np.arange(100, dtype=np.float32)), y, grid=1, block=128, backend="both")
        assert r.differing == 0 and len(r.comparisons) == 1, r.comparisons
        assert r.comparisons[0].startswith("argument 3 (saxpy_param_3): f32[100]: ") and "0 mismatches" in r.comparisons[0]
        np.testing.assert_array_equal(y, 3.0 * np.arange(100, dtype=np.float32) + 1.0)
        # text modules reach the GPU too
        x = np.zeros(10, dtype=np.float32)
        d.load_ptx(ADD_ONE)["add_one"](x, 10, grid=1, block=32, backend="cuda")
        assert (x == 1).all()


PLUGIN_SUITE = """
import numpy as np, kemu

def test_racy(kemu_device):
    mod = kemu_device.load_ptx_file({race!r})
    mod["shared_raw"](np.arange(64, dtype=np.float32), np.zeros(64, np.float32), grid=1, block=64)

def test_clean():
    mod = kemu.Device().load_ptx_file({race!r})
    mod["shared_raw_fixed"](np.arange(64, dtype=np.float32), np.zeros(64, np.float32), grid=1, block=64)
"""


def test_pytest_plugin_fails_the_racy_test(tmp_path):
    import subprocess
    import sys
    suite = tmp_path / "test_suite.py"
    suite.write_text(PLUGIN_SUITE.format(race=str(RACE)))
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "kemu.pytest", str(suite)]
    out = subprocess.run(base + ["--kemu-tool", "racecheck", "--kemu-schedule", "random:7"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
    assert "CheckerError" in out.stdout and "RACECHECK SUMMARY" in out.stdout
    assert "checkers racecheck, schedule random:7" in out.stdout
    # without checkers both pass
    out = subprocess.run(base, capture_output=True, text=True, cwd=tmp_path)
    assert "2 passed" in out.stdout, out.stdout + out.stderr
    out = subprocess.run(base + ["--kemu-tool", "bogus"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode != 0 and "unknown checker 'bogus'" in out.stderr
