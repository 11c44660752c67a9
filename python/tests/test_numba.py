"""Numba on kemu through the package: kemu.numba.enable() (or KEMU=1 with
`import kemu.numba`) and the pytest plugin's checkers on @cuda.jit
launches. Skips where numba-cuda or kemu's CUDA libraries are missing.
Each case runs in a Python of its own: enabling binds Numba's driver."""
import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

if importlib.util.find_spec("numba") is None:
    pytest.skip("numba-cuda is not installed", allow_module_level=True)
if os.environ.get("KEMU_TEST_NO_TRITON"):  # tests/python.sh in a sanitizer build
    pytest.skip("a sanitizer build: Numba's LLVM under a preloaded sanitizer runtime is not tested here "
                "(tests/driver/numba.sh covers kemu exec python)", allow_module_level=True)

import kemu.numba  # noqa: E402

try:
    kemu.numba.runtime_dir()
except RuntimeError as e:
    pytest.skip(str(e), allow_module_level=True)


def _run(args, **env):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [os.path.dirname(HERE), os.environ.get("PYTHONPATH")] if p))
    e.update(env)
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, env=e, timeout=600, cwd=HERE)


ADD = """
import numpy as np
{enable}
from numba import cuda

@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 2 * y[i]

x = np.arange(1000, dtype=np.float32)
y = np.linspace(0, 1, 1000).astype(np.float32)
out = cuda.device_array_like(x)
add[8, 128](cuda.to_device(x), cuda.to_device(y), out)
assert np.array_equal(out.copy_to_host(), x + 2 * y)
print("device:", cuda.get_current_device().name)
"""


def test_enable_runs_numba_on_kemu():
    r = _run(["-c", ADD.format(enable="import kemu.numba; kemu.numba.enable()")])
    assert r.returncode == 0, r.stderr
    assert "device: kemu emulated" in r.stdout


def test_kemu_1_switch():
    r = _run(["-c", ADD.format(enable="import kemu.numba")], KEMU="1")
    assert r.returncode == 0, r.stderr
    assert "device: kemu emulated" in r.stdout


def test_enable_after_numba_cuda_is_refused():
    r = _run(["-c", "from numba import cuda\nimport kemu.numba\ntry:\n    kemu.numba.enable()\n"
                    "except RuntimeError as e:\n    print('refused:', e)\n"])
    assert r.returncode == 0, r.stderr
    assert "refused: kemu.numba.enable() must come before numba.cuda is imported" in r.stdout, r.stdout


def test_pytest_plugin_fails_the_racy_numba_test():
    r = _run(["-m", "pytest", "-q", "-p", "kemu.pytest", "--kemu-tool", "racecheck", "-p", "no:cacheprovider",
              os.path.join("numba_suite", "nb_suite.py")])
    out = r.stdout + r.stderr
    assert "1 failed, 1 passed" in out, out
    assert "FAILED numba_suite/nb_suite.py::test_racy" in out, out
    assert "kemu's checkers found errors in this test's Numba launches" in out
    assert "Race reported between Write access" in out and "nb_suite.py:12" in out, out
