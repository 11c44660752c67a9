"""kemu.triton: run unchanged @triton.jit kernels on kemu, without a GPU.

    import numpy as np, kemu.triton
    kemu.triton.enable()                 # or KEMU=1 in the environment
    add_kernel[grid](x, y, out, n, BLOCK=1024)   # x, y, out: NumPy arrays

After enable(), a launch compiles the kernel through Triton's own CUDA
pipeline for the chosen target (sm_80 by default; Triton builds PTX without
a GPU) and runs that PTX on a kemu.Device: arrays are copied to the
emulated device and back, as kemu.Kernel calls do. Faults raise
kemu.KernelFault, checker findings kemu.CheckerError.

How it hooks into Triton (verified with Triton 3.4.0, 3.5.1 and 3.9.0, SUPPORTED):
- a driver, KemuDriver (triton.backends.driver.DriverBase), made active
  with triton.runtime.driver.set_active(): it names the target
  (GPUTarget("cuda", 80|90, 32)), a device key of its own (so Triton's
  per-device kernel caches never mix kemu and a real GPU), and its
  launcher_cls, whose instances run each launch on kemu;
- the launcher reads the PTX from Triton's cache group of the compiled
  kernel (the binary Triton hands drivers is the cubin; kemu runs the PTX
  next to it), strips constexprs, flattens tuples, passes the two hidden
  trailing pointers (global and profile scratch: 0, or a zeroed buffer of
  grid x size bytes when the metadata asks for one), block = 32*num_warps,
  shared = metadata.shared;
- NumPy arrays have no data_ptr(), which Triton's argument specialization
  needs, so while enabled JITFunction.run wraps NumPy arrays (and
  kemu.In/Out/InOut around them) in TritonArray, an ndarray view with
  data_ptr(). This is the one place kemu.triton replaces a Triton
  function; disable() puts it back. torch CPU tensors need no wrapper.
- autotuning: the driver's benchmarker times nothing and reports every
  config alike, so the autotuner keeps the first (pruned) config.

KEMU=1 in the environment enables it when kemu.triton is imported
(KEMU_TARGET=sm_90 picks the target); `python -m kemu.triton script.py
ARGS` runs an unchanged script with it enabled.
"""
import functools
import os
import sys

import numpy as np

import kemu

try:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase
    from triton.runtime.jit import JITFunction
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("kemu.triton needs Triton (pip install triton); " + str(e)) from e

__all__ = ["enable", "disable", "enabled", "is_enabled", "TritonArray", "KemuDriver", "last_launch", "SUPPORTED"]

# the Triton releases python/tests/test_triton.py passed with; enable() warns outside 3.4-3.9
SUPPORTED = ("3.4.0", "3.5.1", "3.9.0")

_MAX_SHARED = {80: 166912, 86: 101376, 89: 101376, 90: 232448}


def _parse_target(target):
    if isinstance(target, int):
        cc = target
    else:
        t = str(target).lower()
        t = (t[3:] if t.startswith("sm_") else t[2:] if t.startswith("sm") else t).rstrip("a")
        if not t.isdigit():
            raise ValueError(f"target wants 'sm_80', 'sm_90' or a compute capability like 80, got {target!r}")
        cc = int(t)
    if cc < 80:
        raise ValueError(f"kemu.triton compiles for sm_80 or newer (Triton's minimum for its CUDA backend), got sm_{cc}")
    return cc


class TritonArray(np.ndarray):
    """A NumPy view Triton can take as a pointer argument: it has data_ptr()
    (and numel()/element_size() like a torch tensor). kemu.triton makes
    these from NumPy arrays while enabled; kemu.triton.TritonArray.of(a)
    makes one by hand. The launch copies it to kemu and back into the
    array it views."""

    _kemu_kind = None

    @classmethod
    def of(cls, array, kind=None):
        v = np.asarray(array).view(cls)
        v._kemu_kind = kind
        return v

    def __array_finalize__(self, obj):
        self._kemu_kind = None

    def data_ptr(self):
        return self.__array_interface__["data"][0]

    def numel(self):
        return self.size

    def element_size(self):
        return self.itemsize

    def stride(self, dim=None):
        """Strides in elements, as torch.Tensor.stride() (TensorDescriptor.from_tensor uses it)."""
        s = tuple(b // self.itemsize for b in self.strides)
        return s if dim is None else s[dim]


def _wrap(arg):
    if isinstance(arg, TritonArray):
        return arg
    if isinstance(arg, np.ndarray):
        return TritonArray.of(arg)
    if isinstance(arg, kemu._Wrapped) and isinstance(arg.array, np.ndarray):
        return TritonArray.of(arg.array, type(arg))
    if isinstance(arg, np.generic):  # Triton cannot specialize NumPy scalars
        return arg.item()
    if isinstance(arg, tuple):
        return tuple(_wrap(a) for a in arg)
    return arg


# ---------------------------------------------------------------------------
# the launcher: one per compiled kernel (Triton makes it through launcher_cls)

class _Bits(int):
    """A 16-bit float's bits: Triton declares such parameters .b8 x[2] (bytes) or .b16."""


def _scalar(ty, value):
    """A Python value for a non-pointer argument of Triton type ty; kemu
    packs it as the PTX parameter declares."""
    if ty == "i1":
        return int(bool(value))
    if ty[0] in "iu":
        return int(value)
    if ty == "fp16":
        return _Bits(np.array(value, np.float16).view(np.uint16))
    if ty == "bf16":
        bits = int(np.array(value, np.float32).view(np.uint32))
        return _Bits(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)  # round to nearest even
    if ty in ("fp32", "f32", "fp64"):
        return float(value)
    raise NotImplementedError(f"kemu.triton cannot pass arguments of Triton type {ty!r}")


def _flatten(sig, arg, out):
    if isinstance(sig, tuple):
        for s, a in zip(sig, arg):
            _flatten(s, a, out)
    elif sig != "constexpr":
        out.append((sig, arg))


def _decompose_descriptor(arg):
    """Triton's own decomposition of a host TensorDescriptor for a kernel
    compiled without TMA (its launcher passes these values)."""
    try:  # Triton 3.9 (and perhaps earlier)
        from triton.backends.driver import decompose_descriptor
        return decompose_descriptor(arg)
    except ImportError:  # 3.5: base, shape, strides, padding == "nan", shape, strides
        from triton.backends.nvidia.driver import make_tensordesc_arg
        return make_tensordesc_arg(arg, None)


def _span(array, kind=None):
    """What a pointer argument hands the kernel on a GPU is the address of
    the first element, and the kernel reaches the others through the strides
    the caller passes along (x.stride(0), ...). So a non-contiguous array
    goes to kemu as the whole stretch of memory from its first to its last
    element (a contiguous view of the same memory, copied in and back),
    not as a packed copy, whose layout the strides would not describe.
    Negative strides are refused: the first element is not the lowest
    address, and Triton (like torch) never makes such pointers."""
    if array.flags.c_contiguous or array.size == 0:
        return array if kind is None else kind(array)
    if any(st < 0 for st in array.strides):
        raise kemu.KemuError(f"kemu.triton: an array with negative strides {array.strides} was given; "
                             "pass a copy (np.ascontiguousarray) instead")
    if any(st % array.itemsize for st in array.strides):
        raise kemu.KemuError(f"kemu.triton: strides {array.strides} are not multiples of the element size "
                             f"{array.itemsize}; pass a copy (np.ascontiguousarray) instead")
    count = 1 + sum((n - 1) * st for n, st in zip(array.shape, array.strides)) // array.itemsize
    stretch = np.lib.stride_tricks.as_strided(array, shape=(count,), strides=(array.itemsize,),
                                              writeable=array.flags.writeable)
    if kind is kemu.Out:
        kind = kemu.InOut  # the elements between the view's keep their values
    return stretch if kind is None else kind(stretch)


def _pointer(ty, arg):
    if arg is None:
        return 0
    if isinstance(arg, TritonArray):
        return _span(arg.view(np.ndarray), arg._kemu_kind)
    if isinstance(arg, (int, np.integer)):
        return int(arg)  # a raw device address (kemu takes these for .u64 parameters)
    if type(arg).__module__.startswith("torch"):
        if getattr(arg, "device", None) is not None and arg.device.type != "cpu":
            raise kemu.KemuError(f"kemu.triton runs on the CPU; a tensor on {arg.device} was given")
        # a NumPy view of the tensor's memory, so that one tensor passed as
        # several arguments is merged like an array (bfloat16 has no NumPy view)
        view, dtype = kemu._torch_view(arg)
        if dtype is not None:  # bfloat16: a uint16 view, and kemu told the type
            if not view.flags.c_contiguous:
                raise kemu.KemuError("kemu.triton: non-contiguous bfloat16 tensors are not supported; "
                                     "pass .contiguous() and copy the result back")
            return arg.detach()
        return _span(view)
    if hasattr(arg, "__dlpack__") or hasattr(arg, "__array_interface__"):
        return arg
    raise TypeError(f"kemu.triton: a {ty} argument wants a NumPy array, a DLPack tensor or an int address, "
                    f"got {type(arg).__name__}")


def _alias_groups(args):
    """Indices of array arguments that are the same NumPy memory, grouped
    (kemu copies each array into a buffer of its own)."""
    seen = {}
    arrays = []
    for i, a in enumerate(args):
        arr = a.array if isinstance(a, kemu._Wrapped) else a
        if not isinstance(arr, np.ndarray):
            continue
        key = (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str)
        for j, other in arrays:
            if np.may_share_memory(arr, other) and key != seen[j]:
                raise kemu.KemuError(
                    f"arguments {j} and {i} overlap without being the same array; kemu.triton copies each "
                    "array argument to a device buffer of its own, so partly overlapping views cannot be passed")
        seen[i] = key
        arrays.append((i, arr))
    groups = {}
    for i, key in seen.items():
        groups.setdefault(key, []).append(i)
    return [g for g in groups.values() if len(g) > 1]


class KemuLauncher:
    """Runs one compiled Triton kernel on the driver's kemu.Device."""

    def __init__(self, driver, src, metadata):
        self.driver = driver
        self.metadata = metadata
        if getattr(metadata, "tensordesc_meta", None):
            raise NotImplementedError("kemu.triton: host TensorDescriptor arguments compiled for TMA (sm_90) "
                                      "are not supported (they need a CUtensorMap); sm_80 takes them")
        # src.signature: {name: "*fp32" | "i32" | "constexpr" | (tuple) ...}, in parameter order
        self.signature = list(src.signature.values())
        self.ptx = _find_ptx(src, metadata)
        self.num_ctas = getattr(metadata, "num_ctas", 1)
        self.block = 32 * metadata.num_warps
        self.scratch = [(getattr(metadata, "global_scratch_size", 0) or 0),
                        (getattr(metadata, "profile_scratch_size", 0) or 0)]
        self.cooperative = bool(getattr(metadata, "launch_cooperative_grid", False))
        self._kernels = {}

    def kernel(self, device):
        k = self._kernels.get(id(device))
        if k is None:
            module = device.load_ptx(self.ptx, name=f"<triton {self.metadata.name}>")
            k = self._kernels[id(device)] = (device, module[self.metadata.name])
        return k[1]

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata, launch_enter_hook,
                 launch_exit_hook, *args):
        if launch_enter_hook is not None:
            launch_enter_hook(launch_metadata)
        flat = []
        for sig, arg in zip(self.signature, args):
            _flatten(sig, arg, flat)
        kargs = []
        for ty, arg in flat:
            if ty.startswith("tensordesc"):
                # without TMA (sm_80) Triton lowers a host TensorDescriptor to its base
                # pointer, then shapes, strides and flags, as Triton's own launcher does
                base, *rest = _decompose_descriptor(arg)
                kargs.append(_pointer(ty, base))
                kargs.extend(int(v) for v in rest)
                continue
            kargs.append(_pointer(ty, arg) if ty[0] == "*" else _scalar(ty, arg))
        grid = (gridX * self.num_ctas, gridY, gridZ)
        device = self.driver.device
        kernel = self.kernel(device)
        # the hidden trailing parameters recent Triton appends (global, then profile scratch)
        hidden = len(kernel.params) - len(kargs)
        if not 0 <= hidden <= 2:
            raise kemu.KemuError(f"kemu.triton: {self.metadata.name} has {len(kernel.params)} PTX parameters "
                                 f"for {len(kargs)} kernel arguments")
        for i, (param, value) in enumerate(zip(kernel.params, kargs)):
            if isinstance(value, _Bits) and param.is_array:
                kargs[i] = int(value).to_bytes(param.size, "little")
        for size in self.scratch[:hidden]:
            kargs.append(np.zeros(gridX * gridY * gridZ * self.num_ctas * size, np.uint8) if size else 0)
        if gridX * gridY * gridZ == 0:
            return None  # as Triton's CUDA launcher: an empty grid launches nothing
        groups = _alias_groups(kargs)
        merges = []
        for group in groups:
            # one array passed as several arguments: each gets a copy; what the
            # kernel wrote through any of them is merged back afterwards
            first = kargs[group[0]]
            target = first.array if isinstance(first, kemu._Wrapped) else first
            original = np.ascontiguousarray(target).copy()
            copies = []
            for i in group:
                c = original.copy()
                copies.append(c)
                kargs[i] = type(kargs[i])(c) if isinstance(kargs[i], kemu._Wrapped) else c
            merges.append((target, original, copies))
        result = kernel(*kargs, grid=grid, block=self.block, shared=self.metadata.shared,
                        cluster=(self.num_ctas, 1, 1) if self.num_ctas > 1 else None, cooperative=self.cooperative)
        for target, original, copies in merges:
            merged = original.copy()
            mb = merged.reshape(-1).view(np.uint8)
            ob = original.reshape(-1).view(np.uint8)
            for c in copies:
                cb = c.reshape(-1).view(np.uint8)
                changed = cb != ob
                mb[changed] = cb[changed]
            target[...] = merged
        self.driver.last_result = result
        if launch_exit_hook is not None:
            launch_exit_hook(launch_metadata)
        return result


def _find_ptx(src, metadata):
    """The PTX of a compiled kernel, from Triton's cache group (the driver
    itself is handed only the cubin)."""
    from triton.runtime.cache import get_cache_manager
    name = getattr(src, "name", metadata.name)
    group = get_cache_manager(metadata.hash).get_group(f"{name[:150]}.json") or {}
    path = next((p for f, p in group.items() if f.endswith(".ptx")), None)
    if path is None:
        raise kemu.KemuError(f"kemu.triton: no PTX for {metadata.name} in Triton's cache (hash {metadata.hash}); "
                             "kemu runs the PTX, so TRITON_STORE_BINARY_ONLY must be off")
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------------------
# the driver


class _Utils:
    """What Triton's CompiledKernel asks of driver.utils."""

    def __init__(self, driver):
        self.driver = driver

    def load_binary(self, name, kernel, shared, device):
        # the launcher loads the PTX; (module, function, n_regs, n_spills, n_max_threads)
        return None, 0, 0, 0, 1024

    def unload_module(self, module):
        pass

    def get_device_properties(self, device):
        cc = self.driver.target.arch
        return {"max_shared_mem": _MAX_SHARED.get(cc, 101376), "max_num_regs": 65536,
                "multiprocessor_count": 132 if cc >= 90 else 108, "warpSize": 32, "sm_clock_rate": 1410000,
                "mem_clock_rate": 1215000, "mem_bus_width": 5120}

    def set_printf_fifo_size(self, size):
        pass

    def is_stream_capturing(self, stream):
        return False


def _bench_first_config(kernel_call, quantiles=None, **kwargs):
    """The autotuner's benchmarker: emulated time says nothing about a GPU,
    so every config scores the same and the autotuner keeps the first."""
    return [0.0] * len(quantiles) if quantiles else 0.0


class KemuDriver(DriverBase):
    """A Triton driver that launches on a kemu.Device (see the module's doc)."""

    _count = 0

    def __init__(self, device=None, target="sm_80"):
        super().__init__()
        cc = _parse_target(target)
        self.target = GPUTarget("cuda", cc, 32)
        self.device = device if device is not None else kemu.Device()
        KemuDriver._count += 1
        self.key = f"kemu{KemuDriver._count}:sm_{cc}"
        self.utils = _Utils(self)
        self.launcher_cls = functools.partial(KemuLauncher, self)
        self.last_result = None

    @classmethod
    def is_active(cls):
        return False  # never picked by Triton's own driver discovery; set_active() only

    def map_python_to_cpp_type(self, ty):
        from triton.backends.nvidia.driver import ty_to_cpp
        return ty_to_cpp(ty)

    def get_current_target(self):
        return self.target

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_current_device(self):
        return self.key

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_capability(self, device=None):
        return divmod(self.target.arch, 10)

    def get_benchmarker(self):
        return _bench_first_config

    def get_empty_cache_for_benchmark(self):
        return np.empty(0, np.uint8)

    def clear_cache(self, cache):
        pass

    def allocate_default_profile_scratch(self, size, alignment, stream):
        return None


# ---------------------------------------------------------------------------
# enable / disable

_state = {"driver": None, "previous": None, "run": None}


def _active_driver():
    """The driver Triton has active now, without making one (reading
    driver.active would create the default, which fails without a GPU): in
    Triton 3.5+ DriverConfig keeps it in _active (None: the default, made
    when first used), in 3.4 in active (a lazy proxy of the default)."""
    from triton.runtime import driver as drivers
    d = vars(drivers)
    return d["_active"] if "_active" in d else d.get("active")


def _run_wrapping_arrays(self, *args, grid, warmup, **kwargs):
    args = tuple(_wrap(a) for a in args)
    kwargs = {k: _wrap(v) for k, v in kwargs.items()}
    return _state["run"](self, *args, grid=grid, warmup=warmup, **kwargs)


def enable(target="sm_80", device=None, **device_options):
    """Routes Triton launches to kemu until disable(). target: "sm_80"
    (default) or "sm_90" (or a compute capability, 80/90); device: the
    kemu.Device to run on (default: a new one made with device_options,
    e.g. tools=["racecheck"]). Returns the KemuDriver."""
    from triton.runtime import driver as drivers
    if device is not None and device_options:
        raise TypeError("pass either device= or options for a new kemu.Device, not both")
    major_minor = tuple(int(p) for p in triton.__version__.split(".")[:2] if p.isdigit())
    if not (3, 4) <= major_minor <= (3, 9) and not _state.get("warned"):
        import warnings
        warnings.warn(f"kemu.triton was verified with Triton {', '.join(SUPPORTED)}; this is "
                      f"{triton.__version__} (its driver and launcher interfaces change between releases)")
        _state["warned"] = True
    drv = KemuDriver(device if device is not None else kemu.Device(**device_options), target)
    if _state["driver"] is None:
        _state["previous"] = _active_driver()
        _state["run"] = JITFunction.run
        JITFunction.run = _run_wrapping_arrays
    drivers.set_active(drv)
    _state["driver"] = drv
    return drv


def disable():
    """Gives Triton back the driver it had before enable()."""
    from triton.runtime import driver as drivers
    if _state["driver"] is None:
        return
    JITFunction.run = _state["run"]
    drivers.set_active(_state["previous"])
    _state.update(driver=None, previous=None, run=None)


def is_enabled():
    return _state["driver"] is not None


class enabled:
    """with kemu.triton.enabled(target=..., device=...) as driver: ... —
    enable() for the block, then the previous state back."""

    def __init__(self, target="sm_80", device=None, **device_options):
        self.args = (target, device, device_options)

    def __enter__(self):
        self.saved = dict(_state), _active_driver()
        target, device, options = self.args
        return enable(target, device, **options)

    def __exit__(self, *exc):
        from triton.runtime import driver as drivers
        state, active = self.saved
        if state["driver"] is None:
            disable()
        else:
            _state.update(state)
            drivers.set_active(active)


def last_launch():
    """The kemu.LaunchResult of the latest launch (instruction counts, checks)."""
    return _state["driver"].last_result if _state["driver"] is not None else None


if os.environ.get("KEMU") == "1" and __name__ != "__main__":
    enable(os.environ.get("KEMU_TARGET", "sm_80"))


def _main(argv):
    import runpy
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m kemu.triton [--target sm_80|sm_90] SCRIPT [ARG...]\n"
              "runs SCRIPT with its Triton launches on kemu", file=sys.stderr)
        return 2
    target = os.environ.get("KEMU_TARGET", "sm_80")
    if argv[0] == "--target":
        target, argv = argv[1], argv[2:]
    import kemu.triton as kt  # the importable copy (this one runs as __main__)
    kt.enable(target)
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
