"""Numba on kemu: unmodified `@cuda.jit` programs run their kernels on
kemu's CUDA driver API (lib/kemu/libcuda.so.1, docs/driver.md).

    import kemu.numba                      # with KEMU=1 in the environment this enables kemu
    kemu.numba.enable(tools=["racecheck"]) # or explicitly, before Numba first uses the GPU
    from numba import cuda
    ...

enable() points Numba at kemu's driver (NUMBA_CUDA_DRIVER), loads kemu's
runtime and its nvJitLink (so Numba links PTX through kemu, not SASS
through NVIDIA's), and passes the checkers, schedule and architecture to
kemu's runtime as `kemu exec` does. `kemu exec [--tool ...] python app.py`
does the same without any import. The checkers' report comes at exit;
with the pytest plugin (`pytest -p kemu.pytest --kemu-tool racecheck`) a
test whose Numba launches produced a finding fails with the report.
"""
import ctypes
import os

from . import _lib

_enabled = None


def runtime_dir():
    """The directory of kemu's CUDA libraries (libcudart, libcuda.so.1):
    $KEMU_CUDART_DIR, lib/kemu of the build tree around libkemu, or
    LIBDIR/kemu beside an installed libkemu."""
    env = os.environ.get("KEMU_CUDART_DIR")
    if env:
        return env
    tried = []
    for lib in _lib._candidates():
        if os.sep not in lib:
            continue
        lib = os.path.realpath(lib)
        here = os.path.dirname(lib)
        for d in (os.path.join(here, "..", "lib", "kemu"), os.path.join(here, "kemu")):
            if os.path.exists(os.path.join(d, "libcuda.so.1")):
                return os.path.realpath(d)
            tried.append(d)
    raise RuntimeError("kemu.numba: kemu's libcuda.so.1 was not found (looked in %s); set KEMU_CUDART_DIR"
                       % ", ".join(tried or ["nowhere: set KEMU_LIBRARY or KEMU_CUDART_DIR"]))


def _bound_elsewhere(driver_path):
    """Why Numba can no longer be pointed at kemu (its driver module already
    loaded another libcuda), or None."""
    import sys
    mod = sys.modules.get("numba.cuda.cudadrv.driver")
    if mod is None:
        return None
    drv = getattr(mod, "driver", None)
    lib = vars(drv).get("lib") if drv is not None else None  # its __getattr__ raises once it failed
    name = getattr(lib, "_name", None)
    if name and os.path.realpath(name) == os.path.realpath(driver_path):
        return None
    return ("Numba's CUDA driver module was imported before kemu.numba and "
            + (f"loaded {name}" if name else "found no driver"))


def enable(tools=(), schedule=None, arch=None, threads=None):
    """Runs Numba's CUDA kernels on kemu from here on. tools: checkers
    ("memcheck", "racecheck", "initcheck", "synccheck"); schedule:
    "default" or "random:SEED"; arch: "sm_80", "sm_90", ...; threads: host
    threads running blocks. Must come before Numba first uses the GPU."""
    global _enabled
    if _enabled is not None:
        return _enabled
    for t in tools:
        if t not in ("memcheck", "racecheck", "initcheck", "synccheck"):
            raise ValueError(f"kemu.numba: unknown checker {t!r} (memcheck, racecheck, initcheck, synccheck)")
    d = runtime_dir()
    settings = {"KEMU_TOOL": ",".join(tools) if tools else None, "KEMU_SCHEDULE": schedule, "KEMU_ARCH": arch,
                "KEMU_THREADS": str(threads) if threads else None}
    for k, v in settings.items():
        if v:
            os.environ[k] = v
    driver = os.path.join(d, "libcuda.so.1")
    why = _bound_elsewhere(driver)
    if why:
        raise RuntimeError("kemu.numba.enable() must come before numba.cuda is imported: " + why)
    os.environ["NUMBA_CUDA_DRIVER"] = driver
    import sys
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba read its environment already
        config.CUDA_DRIVER = driver
    # loaded first, so the names Numba and cuda.core look for are kemu's
    for name in ("libcudart.so.13", "libcuda.so.1", "libnvJitLink.so.13"):
        path = os.path.join(d, name)
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    _enabled = d
    return d


def enabled():
    """kemu's library directory when enable() ran, else None."""
    return _enabled


if os.environ.get("KEMU") == "1" and __name__ != "__main__":
    enable(tuple(t for t in os.environ.get("KEMU_TOOL", "").split(",") if t),
           os.environ.get("KEMU_SCHEDULE") or None, os.environ.get("KEMU_ARCH") or None)
