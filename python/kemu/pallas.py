"""kemu.pallas: run JAX Pallas GPU kernels (the Triton lowering) on kemu.

    import jax, jax.numpy as jnp, numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as pltriton
    import kemu.pallas

    def add(x, y):
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=...,
                              in_specs=..., out_specs=...,
                              compiler_params=pltriton.CompilerParams(num_warps=4))(x, y)

    out = kemu.pallas.call(add, x, y)          # NumPy arrays (or JAX CPU arrays) in, NumPy out

No GPU and no CUDA plugin are needed: JAX lowers a Pallas call for the
"cuda" platform on a CPU-only jaxlib (jit(...).trace(...).lower(
lowering_platforms=("cuda",))), which runs Pallas' own Triton lowering and
leaves the kernel as Triton IR (TTIR) in the StableHLO custom call
"__gpu$xla.gpu.triton", with its grid, num_warps and num_stages. kemu.pallas
takes that TTIR, prints it as text with jaxlib's MLIR (which has the Triton
dialect), compiles the text with Triton's own CUDA pipeline (pip install
triton) for sm_80 or sm_90, and runs the PTX on a kemu.Device: inputs are
copied in, each output is a fresh NumPy array (a copy of its input for
input_output_aliases).

What it takes: a function whose lowered body is one or more Triton Pallas
calls on the function's own arguments, each result returned as it is
(anything else, e.g. jnp arithmetic around the call, is refused: only
the kernels run on kemu). Verified with jax/jaxlib 0.10.2 and Triton 3.9.0
(VERIFIED). jaxlib releases after 0.10.2 compile the TTIR to PTX in the
CUDA plugin at lowering time (a "triton_kernel_call" custom call), which a
CPU-only jaxlib cannot do; see docs/python/pallas.md. Mosaic GPU kernels
(plgpu) are not supported: see the same page for what blocks them.
"""
import os
import re
import tempfile

import numpy as np

import kemu

try:
    import jax
    from jaxlib.mlir import ir
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("kemu.pallas needs JAX (pip install jax); " + str(e)) from e

__all__ = ["call", "lower", "PallasKernel", "VERIFIED"]

VERIFIED = {"jax": ("0.10.2",), "triton": ("3.9.0",)}

TRITON_CALL = "__gpu$xla.gpu.triton"

# (fn, argument shapes and dtypes): (kernels, output specs), so that calling
# the same function again neither lowers nor compiles again
_lowered = {}


class PallasKernel:
    """One Triton Pallas call lowered for CUDA: name, ttir (text), grid,
    num_warps, num_stages, operands (indices of the function's arguments),
    results (the function's result index of each kernel output) and
    aliases ({output: operand})."""

    def __init__(self, name, ttir, grid, num_warps, num_stages, operands, results, aliases, out_avals):
        self.name = name
        self.ttir = ttir
        self.grid = grid
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.operands = operands
        self.results = results
        self.aliases = aliases
        self.out_avals = out_avals
        self._compiled = {}

    def __repr__(self):
        return f"<kemu.pallas kernel {self.name} grid={self.grid} num_warps={self.num_warps}>"

    def compile(self, target="sm_80"):
        """Triton's CompiledKernel for the target (PTX in .asm["ptx"])."""
        from kemu.triton import _parse_target
        cc = _parse_target(target)
        k = self._compiled.get(cc)
        if k is None:
            try:
                import triton
                from triton.backends.compiler import GPUTarget
            except ImportError as e:
                raise ImportError("kemu.pallas compiles Pallas' Triton IR with Triton (pip install triton); "
                                  + str(e)) from e
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, f"{self.name}.ttir")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(self.ttir)
                try:
                    k = triton.compile(path, target=GPUTarget("cuda", cc, 32),
                                       options={"num_warps": self.num_warps, "num_stages": self.num_stages})
                except Exception as e:
                    raise kemu.KemuError(f"kemu.pallas: Triton {triton.__version__} could not compile the Triton IR "
                                         f"jaxlib {jax.__version__} made for {self.name}: {e}") from e
            self._compiled[cc] = k
        return k


def _custom_calls(op, out):
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                out.append(o.operation)
                _custom_calls(o.operation, out)
    return out


def _ttir_text(data):
    """Pallas serializes the kernel's Triton module as MLIR bytecode; its
    text is what Triton's compiler parses best across LLVM versions."""
    from jaxlib.triton import dialect as ttd
    ctx = ir.Context()
    ttd.register_dialect(ctx)
    with ctx:
        return ir.Module.parse(data).operation.get_asm(enable_debug_info=True)


def lower(fn, *args):
    """The Pallas kernels of fn(*args) lowered for CUDA, as PallasKernels
    (args: arrays or jax.ShapeDtypeStructs)."""
    specs = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in args]
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    try:
        lowered = jitted.trace(*specs).lower(lowering_platforms=("cuda",))
    except ValueError as e:
        raise kemu.KemuError(f"kemu.pallas: JAX could not lower the function for CUDA: {e}") from e
    module = lowered.compiler_ir("stablehlo")
    main = next(op.operation for op in module.body.operations
                if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value
                == "main")
    block = main.regions[0].blocks[0]
    params = {block.arguments[i]: i for i in range(len(block.arguments))}
    kernels = []
    results_of = {}
    for op in _custom_calls(main, []):
        name = op.name
        if name == "func.return":
            continue
        if name != "stablehlo.custom_call":
            raise kemu.KemuError(f"kemu.pallas: the lowered function holds {name}; kemu.pallas runs a function "
                                 "whose body is Pallas calls on its own arguments, nothing else")
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target != TRITON_CALL:
            hint = (" (a Mosaic GPU kernel: not supported, see docs/python/pallas.md)" if "mosaic" in target
                    else " (a newer jaxlib compiles Pallas kernels in its CUDA plugin: see docs/python/pallas.md)"
                    if target == "triton_kernel_call" else "")
            raise kemu.KemuError(f"kemu.pallas: custom call {target!r} is not a Triton Pallas call{hint}")
        operands = []
        for v in op.operands:
            if v not in params:
                raise kemu.KemuError("kemu.pallas: a Pallas call operand is not an argument of the function")
            operands.append(params[v])
        cfg = op.attributes["mhlo.backend_config"]
        grid = tuple(ir.IntegerAttr(cfg[f"grid_{a}"]).value for a in "xyz")
        aliases = {}
        if "output_operand_aliases" in op.attributes:
            text = str(op.attributes["output_operand_aliases"])
            for m in re.finditer(r"output_tuple_indices = \[(\d*)\], operand_index = (\d+)", text):
                aliases[int(m.group(1) or 0)] = int(m.group(2))
        k = PallasKernel(ir.StringAttr(cfg["name"]).value, _ttir_text(ir.StringAttr(cfg["ir"]).value_bytes), grid,
                         ir.IntegerAttr(cfg["num_warps"]).value, ir.IntegerAttr(cfg["num_stages"]).value, operands,
                         [None] * len(op.results), aliases,
                         [(tuple(ir.RankedTensorType(r.type).shape), r.type) for r in op.results])
        for j, r in enumerate(op.results):
            results_of[r] = (k, j)
        kernels.append(k)
    ret = next(op for op in _custom_calls(main, []) if op.name == "func.return")
    for i, v in enumerate(ret.operands):
        if v not in results_of:
            raise kemu.KemuError(f"kemu.pallas: result {i} of the function is not a Pallas call's output")
        k, j = results_of[v]
        k.results[j] = i
    if not kernels:
        raise kemu.KemuError("kemu.pallas: the function holds no Pallas call")
    return kernels, [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in jax.tree_util.tree_leaves(lowered.out_info)]


def _host(a):
    array = kemu._as_numpy(a)
    if array is None:
        array = np.asarray(a)
    return np.ascontiguousarray(array)


def call(fn, *args, target="sm_80", device=None, **device_options):
    """Runs the Pallas kernels of fn(*args) on kemu and returns fn's
    results as NumPy arrays (one array, or a list when fn returns several).
    target: "sm_80" (default) or "sm_90"; device: a kemu.Device (default:
    a new one with device_options, e.g. tools=["racecheck"]). Checker
    errors raise kemu.CheckerError, faults kemu.KernelFault."""
    if device is not None and device_options:
        raise TypeError("pass either device= or options for a new kemu.Device, not both")
    key = (fn, tuple((np.shape(a), np.dtype(a.dtype).str) for a in args))
    try:
        kernels, outs = _lowered[key]
    except (KeyError, TypeError):  # TypeError: fn is not hashable
        kernels, outs = lower(fn, *args)
        try:
            _lowered[key] = kernels, outs
        except TypeError:
            pass
    dev = device if device is not None else kemu.Device(**device_options)
    hosts = [_host(a) for a in args]
    results = [None] * len(outs)
    call.last_launches = []
    for k in kernels:
        compiled = k.compile(target)
        loaded = dev.__dict__.setdefault("_pallas_kernels", {})  # dies with the device
        kernel = loaded.get((k, target))
        if kernel is None:
            module = dev.load_ptx(compiled.asm["ptx"], name=f"<pallas {k.name}>")
            kernel = loaded[k, target] = module[compiled.metadata.name]
        kargs = [kemu.In(hosts[i]) for i in k.operands]
        outputs = []
        for j, r in enumerate(k.results):
            spec = outs[r] if r is not None else None
            if j in k.aliases:
                buf = hosts[k.operands[k.aliases[j]]].copy()
                arg = kemu.InOut(buf)
            else:
                buf = np.empty(spec.shape, spec.dtype)
                arg = kemu.Out(buf)
            outputs.append(buf)
            kargs.append(arg)
        # Triton's hidden trailing pointers (global and profile scratch)
        grid = k.grid
        for size in (getattr(compiled.metadata, "global_scratch_size", 0) or 0,
                     getattr(compiled.metadata, "profile_scratch_size", 0) or 0)[:len(kernel.params) - len(kargs)]:
            kargs.append(np.zeros(grid[0] * grid[1] * grid[2] * size, np.uint8) if size else 0)
        if len(kargs) != len(kernel.params):
            raise kemu.KemuError(f"kemu.pallas: {k.name} has {len(kernel.params)} PTX parameters for "
                                 f"{len(kargs)} arguments")
        call.last_launches.append(kernel(*kargs, grid=grid, block=32 * compiled.metadata.num_warps,
                                         shared=compiled.metadata.shared))
        for j, r in enumerate(k.results):
            if r is not None:
                results[r] = outputs[j]
    return results[0] if len(results) == 1 else results


call.last_launches = []
