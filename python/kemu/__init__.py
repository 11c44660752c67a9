"""kemu: run GPU kernels (PTX) on the CPU from Python.

    import numpy as np, kemu
    dev = kemu.Device()
    saxpy = dev.load_ptx_file("saxpy.ptx")["saxpy"]
    x = np.arange(1000, dtype=np.float32); y = np.ones(1000, np.float32)
    saxpy(1000, 2.0, x, y, grid=4, block=256)      # y is updated in place

Arrays are NumPy arrays or anything with DLPack (torch CPU tensors, JAX CPU
arrays): each is copied to the emulated device and, unless it is read-only
or wrapped in kemu.In, copied back into the caller's array after the launch.
kemu.Out marks an array the kernel only writes (it starts with the NaN fill,
so elements never written are visible, and initcheck sees it as unwritten).
Scalars are converted to the type the PTX parameter declares.

Every launch goes through libkemu's launch plan (include/kemu/plan.h), the
same code as `kemu run`; this package holds no emulator logic.
"""
import ctypes
import json
import struct
import sys

from . import _lib

__all__ = ["Device", "Module", "Kernel", "In", "Out", "InOut", "LaunchResult", "CheckReport", "KemuError",
           "PTXError", "KernelFault", "CheckerError", "version"]

_L = _lib.load()

# what a Device takes when it names no tools or schedule (the pytest plugin sets these)
_DEFAULTS = {}


def version():
    return _L.kemu_version().decode()


class KemuError(Exception):
    """An error libkemu reported (bad argument, launch configuration, ...)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class PTXError(KemuError):
    """The PTX could not be loaded; the message names file, line and column."""


class KernelFault(KemuError):
    """The kernel faulted; the message names kernel, block, thread and instruction."""


class CheckerError(KemuError):
    """A checker (racecheck, memcheck, initcheck, synccheck) found errors;
    .report is the CheckReport."""

    def __init__(self, report):
        super().__init__(report.text.rstrip() or f"{report.errors} checker errors")
        self.report = report


def _raise(err, cls=KemuError):
    raise cls(err.message.decode(errors="replace").rstrip(), err.status)


def _dims(v, name):
    if v is None:
        return (1, 1, 1)
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(d) for d in v)
    if not 1 <= len(v) <= 3 or any(d <= 0 for d in v):
        raise ValueError(f"{name} wants 1 to 3 positive sizes, got {v!r}")
    return v + (1,) * (3 - len(v))


class _Wrapped:
    kind = None

    def __init__(self, array):
        self.array = array


class In(_Wrapped):
    """An array the kernel only reads: copied in, never copied back."""
    kind = _lib.OPERAND_IN


class Out(_Wrapped):
    """An array the kernel only writes: starts with the uninitialized fill
    (NaN for floats, the largest value for integers), copied back."""
    kind = _lib.OPERAND_OUT


class InOut(_Wrapped):
    """An array the kernel reads and writes (the default for writable arrays)."""
    kind = _lib.OPERAND_INOUT


_DTYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
           "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
           "bfloat16": "bf16"}

# PTX scalar types: struct format and whether it holds floats
_SCALARS = {".u8": "B", ".s8": "b", ".b8": "B", ".u16": "H", ".s16": "h", ".b16": "H", ".u32": "I", ".s32": "i",
            ".b32": "I", ".u64": "Q", ".s64": "q", ".b64": "Q", ".f32": "f", ".f64": "d", ".f16": "e",
            ".pred": "I"}


def _torch_view(t):
    """A NumPy view of a torch CPU tensor's own memory (writes through it
    reach the tensor) and the kemu dtype name, or raises with why not."""
    import numpy as np
    device = getattr(t, "device", None)
    if device is not None and device.type != "cpu":
        raise ValueError(f"a torch tensor on {device} was given; kemu runs on the CPU and takes CPU tensors "
                         "(move it with .cpu() and copy the result back)")
    t = t.detach()
    if t.is_conj() or t.is_neg():
        raise ValueError("a torch tensor with a lazy conjugate/negation bit was given; call .resolve_conj() / "
                         ".resolve_neg() first")
    if str(t.dtype) == "torch.bfloat16":  # NumPy has no bfloat16: the same bits as uint16
        import torch
        return t.view(torch.int16).numpy().view(np.uint16), "bf16"
    try:
        return t.numpy(), None
    except (RuntimeError, TypeError) as e:
        raise TypeError(f"torch tensors of {t.dtype} are not supported ({e})") from None


def _host_view(obj):
    """(a NumPy view of obj's memory, kemu dtype name or None for the view's
    own) for a NumPy array, a torch CPU tensor or another DLPack producer;
    (None, None) for anything else. Views share the caller's memory, so
    outputs are written back into the caller's array or tensor."""
    import numpy as np
    if isinstance(obj, np.ndarray):
        return obj, None
    if type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "numpy"):
        return _torch_view(obj)
    if hasattr(obj, "__dlpack__"):
        # NumPy marks what it imports read-only when the producer says so (JAX
        # arrays, which are immutable) and, before NumPy 2.1, always: such
        # arrays are inputs only
        return np.from_dlpack(obj), None
    if hasattr(obj, "__array_interface__"):
        return np.asarray(obj), None
    return None, None


def _as_numpy(obj):
    """A NumPy view of obj (a NumPy array or a DLPack producer), or None."""
    return _host_view(obj)[0]


class CheckReport:
    """What the checkers found: errors, warnings, the compute-sanitizer-style
    text and the findings as dicts (tool, severity, text, details)."""

    def __init__(self, errors, warnings, text, findings):
        self.errors = errors
        self.warnings = warnings
        self.text = text
        self.findings = findings

    def __repr__(self):
        return f"CheckReport(errors={self.errors}, warnings={self.warnings})"


class LaunchResult:
    """One launch: seconds, warp_instructions, thread_instructions, printf
    (the kernel's printf output), checks (a CheckReport when checkers are on)
    and, with backend="both", comparisons (one line per output) and
    differing (how many outputs the emulator and the GPU disagree on)."""

    def __init__(self, report, checks=None, comparisons=(), differing=0):
        self.seconds = report.seconds
        self.warp_instructions = report.warp_instructions
        self.thread_instructions = report.thread_instructions
        self.printf = ctypes.string_at(report.printf_output, report.printf_length).decode(errors="replace") \
            if report.printf_length else ""
        self.checks = checks
        self.comparisons = list(comparisons)
        self.differing = differing

    def __repr__(self):
        return f"LaunchResult(seconds={self.seconds:.3f}, warp_instructions={self.warp_instructions})"


class Device:
    """An emulated GPU. threads: host threads for blocks (default: all
    cores); schedule: "default" or "random:SEED"; timeout: seconds per
    launch; arch: "sm_80"... (default: each module's .target); uninit: the
    fill of fresh memory ("nan", "zero", "pattern"); tools: checkers to run
    on every launch ("memcheck", "racecheck", "initcheck", "synccheck";
    without tools or schedule, those of the pytest plugin, kemu.pytest);
    racecheck_warp: races between lanes of one warp, "auto" (errors on
    sm_70+), "error", "warn" or "off"; racecheck_benign: stores of the
    same value, "warn", "error" or "off" (docs/checkers.md);
    raise_on_findings: raise CheckerError after a launch with checker
    errors (otherwise they are in the LaunchResult's checks)."""

    def __init__(self, threads=0, schedule=None, timeout=0.0, arch=None, uninit="nan", tools=None,
                 racecheck_warp="auto", racecheck_benign="warn", leak_check=False, raise_on_findings=True):
        if tools is None:
            tools = _DEFAULTS.get("tools", ())
        if schedule is None:
            schedule = _DEFAULTS.get("schedule")
        if uninit not in _lib.UNINIT:
            raise ValueError(f"uninit wants one of {sorted(_lib.UNINIT)}, got {uninit!r}")
        self._uninit = _lib.UNINIT[uninit]
        self._keep = []  # strings the config points to
        cfg = _lib.DeviceConfig(self._c(arch), int(threads), self._c(schedule), float(timeout), self._uninit)
        err = _lib.Error()
        handle = ctypes.c_void_p()
        if _L.kemu_device_create(ctypes.byref(cfg), ctypes.byref(handle), ctypes.byref(err)):
            _raise(err)
        self._handle = handle
        self.raise_on_findings = raise_on_findings
        self.tools = tuple(tools)
        if self.tools:
            bits = 0
            for t in self.tools:
                if t not in _lib.TOOLS:
                    raise ValueError(f"unknown checker {t!r} (memcheck, racecheck, initcheck, synccheck)")
                bits |= _lib.TOOLS[t]
            self._checks = _lib.CheckConfig(bits, _lib.CHECK_LEVELS[racecheck_warp],
                                            _lib.CHECK_LEVELS[racecheck_benign], int(bool(leak_check)))
            self._start_checks()

    def _start_checks(self):
        err = _lib.Error()
        if _L.kemu_device_set_checks(self._handle, ctypes.byref(self._checks), ctypes.byref(err)):
            _raise(err)

    def _c(self, s):
        if s is None:
            return None
        b = s.encode()
        self._keep.append(b)
        return b

    def close(self):
        if getattr(self, "_handle", None):
            _L.kemu_device_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def load_ptx(self, text, name="<ptx>"):
        """Loads a module from PTX text; errors raise PTXError naming line and column."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        handle = ctypes.c_void_p()
        err = _lib.Error()
        if _L.kemu_module_load_ptx(self._handle, data, len(data), name.encode(), ctypes.byref(handle),
                                   ctypes.byref(err)):
            _raise(err, PTXError)
        return Module(self, handle, None, data)

    def load_ptx_file(self, path):
        """Loads a module from a .ptx file."""
        handle = ctypes.c_void_p()
        err = _lib.Error()
        path = str(path)
        if _L.kemu_module_load_ptx_file(self._handle, path.encode(), ctypes.byref(handle), ctypes.byref(err)):
            _raise(err, PTXError)
        return Module(self, handle, path, None)

    def check_results(self, print_limit=0, reset=True):
        """The checkers' findings since they were last reset; reset=True
        starts them afresh for the next launches."""
        summary = _lib.CheckSummary()
        err = _lib.Error()
        if _L.kemu_check_results(self._handle, int(print_limit), ctypes.byref(summary), ctypes.byref(err)):
            _raise(err)
        try:
            text = (summary.text or b"").decode(errors="replace")
            data = json.loads(summary.json.decode()) if summary.json else {"findings": []}
            return CheckReport(summary.errors, summary.warnings, text, data.get("findings", []))
        finally:
            _L.kemu_check_summary_free(ctypes.byref(summary))
            if reset:
                self._start_checks()


class Module:
    """A loaded PTX module: module["name"] or module.kernel("name") is a
    Kernel; module.kernels lists their names."""

    def __init__(self, device, handle, path, text):
        self.device = device
        self._handle = handle
        self.path = path
        self._text = text

    @property
    def kernels(self):
        n = _L.kemu_module_kernel_count(self._handle)
        return [_L.kemu_kernel_name(_L.kemu_module_kernel_at(self._handle, i)).decode() for i in range(n)]

    def kernel(self, name=None):
        if name is None:
            names = self.kernels
            if len(names) != 1:
                raise KemuError(f"the module has {len(names)} kernels; name one of: {' '.join(names)}")
            name = names[0]
        handle = ctypes.c_void_p()
        err = _lib.Error()
        if _L.kemu_module_get_kernel(self._handle, name.encode(), ctypes.byref(handle), ctypes.byref(err)):
            raise KeyError(f"no kernel {name!r} in the module; it has: {' '.join(self.kernels)}")
        return Kernel(self, handle)

    __getitem__ = kernel


class Param:
    def __init__(self, info):
        self.name = info.name.decode()
        self.type = info.type.decode()
        self.size = info.size
        self.is_array = bool(info.is_array)

    def __repr__(self):
        return f"{self.type} {self.name}" if not self.is_array else f".b8 {self.name}[{self.size}]"


class Kernel:
    """A kernel of a module. Call it with one argument per PTX parameter and
    the launch shape: kernel(*args, grid=, block=, cluster=None, shared=0,
    cooperative=False, backend="emu", device=0)."""

    def __init__(self, module, handle):
        self.module = module
        self._handle = handle
        self.name = _L.kemu_kernel_name(handle).decode()
        self.params = []
        for i in range(_L.kemu_kernel_param_count(handle)):
            info = _lib.ParamInfo()
            _L.kemu_kernel_param(handle, i, ctypes.byref(info))
            self.params.append(Param(info))

    def __repr__(self):
        return f"<kemu kernel {self.name}({', '.join(map(repr, self.params))})>"

    def _operand(self, i, param, arg, keep, copies):
        import numpy as np
        op = _lib.Operand()
        kind = None
        if isinstance(arg, _Wrapped):
            kind, arg = arg.kind, arg.array
        array, dtype = _host_view(arg) if not isinstance(arg, (int, float, bool, bytes, np.generic)) else (None, None)
        if array is not None:
            if param.size != 8 or param.is_array:
                raise TypeError(f"argument {i}: parameter {param!r} is not a pointer; an array was given")
            dtype = dtype or _DTYPES.get(array.dtype.name)
            if dtype is None:
                raise TypeError(f"argument {i}: arrays of {array.dtype} are not supported")
            if kind is None:
                kind = _lib.OPERAND_INOUT if array.flags.writeable else _lib.OPERAND_IN
            if kind != _lib.OPERAND_IN and not array.flags.writeable:
                raise ValueError(f"argument {i}: the kernel writes this array but it is read-only"
                                 + ("" if isinstance(arg, np.ndarray) else
                                    f" (NumPy imported this {type(arg).__name__} read-only through DLPack)"))
            if array.ndim > _lib.PLAN_MAX_DIMS:
                raise ValueError(f"argument {i}: {array.ndim} dimensions (at most {_lib.PLAN_MAX_DIMS})")
            host = array if array.flags.c_contiguous else np.ascontiguousarray(array)
            if host is not array and kind != _lib.OPERAND_IN:
                copies.append((array, host))
            keep.append(host)
            op.kind = kind
            op.dtype = dtype.encode()
            # a 0-d array is one element
            shape = host.shape or (1,)
            op.ndim = len(shape)
            for d, n in enumerate(shape):
                op.shape[d] = n
            op.data = host.ctypes.data
            label = f"argument {i} ({param.name})".encode()
            keep.append(label)
            op.label = label
            return op
        if kind is not None:
            raise TypeError(f"argument {i}: kemu.In/Out/InOut wrap arrays, not {type(arg).__name__}")
        if param.is_array:
            if not isinstance(arg, (bytes, bytearray)) or len(arg) != param.size:
                raise TypeError(f"argument {i}: parameter {param!r} wants {param.size} bytes")
            data = bytes(arg)
        else:
            fmt = _SCALARS.get(param.type)
            if fmt is None:
                raise TypeError(f"argument {i}: parameter {param!r} has a type kemu cannot fill from Python")
            if isinstance(arg, np.generic):
                arg = arg.item()
            if fmt in "fde":
                if not isinstance(arg, (int, float)) or isinstance(arg, bool):
                    raise TypeError(f"argument {i}: parameter {param!r} wants a number, got {arg!r}")
                data = struct.pack("<" + fmt, float(arg))
            else:
                if not isinstance(arg, int):
                    raise TypeError(f"argument {i}: parameter {param!r} wants an integer, got {arg!r}")
                try:
                    data = struct.pack("<" + fmt, arg)
                except struct.error:
                    # two's complement for signed values given to unsigned/bit types and back
                    bits = 8 * struct.calcsize(fmt)
                    if not -(1 << (bits - 1)) <= arg < (1 << bits):
                        raise OverflowError(f"argument {i}: {arg} does not fit in {param.type}") from None
                    data = struct.pack("<" + fmt.swapcase() if fmt.isupper() else "<" + fmt.upper(), arg)
        buf = ctypes.create_string_buffer(data, len(data))
        keep.append(buf)
        op.kind = _lib.OPERAND_VALUE
        op.value = ctypes.cast(buf, ctypes.c_void_p)
        op.size = len(data)
        return op

    def __call__(self, *args, grid=1, block=1, cluster=None, shared=0, cooperative=False, backend="emu", device=0,
                 tolerance=None):
        if len(args) != len(self.params):
            raise TypeError(f"kernel {self.name} takes {len(self.params)} arguments "
                            f"({', '.join(map(repr, self.params))}), {len(args)} given")
        if backend not in ("emu", "cuda", "both"):
            raise ValueError(f"backend wants 'emu', 'cuda' or 'both', got {backend!r}")
        dev = self.module.device
        pc = _lib.PlanConfig()
        pc.launch.grid[:] = _dims(grid, "grid")
        pc.launch.block[:] = _dims(block, "block")
        pc.launch.cluster[:] = _dims(cluster, "cluster") if cluster else (0, 0, 0)
        pc.launch.shared_bytes = int(shared)
        pc.launch.cooperative = int(bool(cooperative))
        pc.backends = {"emu": _lib.BACKEND_EMULATOR, "cuda": _lib.BACKEND_CUDA,
                       "both": _lib.BACKEND_EMULATOR | _lib.BACKEND_CUDA}[backend]
        pc.cuda_device = int(device)
        if self.module.path:
            pc.ptx_path = self.module.path.encode()
        else:
            pc.ptx_text = self.module._text
            pc.ptx_length = len(self.module._text)
        pc.uninit = dev._uninit
        if tolerance is not None:
            tol = _lib.Tolerance(int(tolerance.get("ulps", 0)), float(tolerance.get("rtol", 0.0)),
                                 float(tolerance.get("atol", 0.0)))
            pc.tolerance = ctypes.pointer(tol)
        err = _lib.Error()
        plan = ctypes.c_void_p()
        if _L.kemu_plan_create(self._handle, ctypes.byref(pc), ctypes.byref(plan), ctypes.byref(err)):
            _raise(err)
        keep, copies = [], []
        result = _lib.PlanResult()
        try:
            for i, (param, arg) in enumerate(zip(self.params, args)):
                op = self._operand(i, param, arg, keep, copies)
                if _L.kemu_plan_add(plan, ctypes.byref(op), ctypes.byref(err)):
                    _raise(err)
            st = _L.kemu_plan_run(plan, ctypes.byref(result), ctypes.byref(err))
            if st and st != _lib.KEMU_ERR_KERNEL_FAULT:
                msg = err.message.decode(errors="replace")
                if result.gpu_message and result.stage == 4:
                    msg = result.gpu_message.decode(errors="replace")
                if result.operand >= 0:
                    msg = f"argument {result.operand}: {msg}"
                raise KemuError(msg, st)
            comparisons = []
            if result.compared:
                comparisons = [result.comparisons[i].line.decode() for i in range(len(args))
                               if result.comparisons[i].compared]
            launch = LaunchResult(result.report, comparisons=comparisons, differing=result.differing)
            if launch.printf:
                sys.stdout.write(launch.printf)
            checks = dev.check_results() if dev.tools else None
            launch.checks = checks
            if st == _lib.KEMU_ERR_KERNEL_FAULT:
                fault = KernelFault(err.message.decode(errors="replace"), st)
                fault.result = launch
                raise fault
            for array, host in copies:
                array[...] = host
            if checks is not None and checks.errors and dev.raise_on_findings:
                raise CheckerError(checks)
            return launch
        finally:
            _L.kemu_plan_result_free(ctypes.byref(result))
            _L.kemu_plan_destroy(plan)
