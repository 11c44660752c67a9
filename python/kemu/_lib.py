"""ctypes declarations of libkemu's C API (include/kemu/kemu.h and
include/kemu/plan.h). Only this module knows the C layouts; the rest of the
package uses these names. Keep it in step with the headers."""
import ctypes
import ctypes.util
import os

c_size = ctypes.c_size_t

KEMU_OK = 0
KEMU_ERR_INVALID_ARGUMENT = 1
KEMU_ERR_KERNEL_FAULT = 6

OPERAND_IN, OPERAND_OUT, OPERAND_INOUT, OPERAND_SCRATCH, OPERAND_SHARED, OPERAND_VALUE = range(6)
BACKEND_EMULATOR, BACKEND_CUDA = 1, 2
TOOLS = {"memcheck": 1, "racecheck": 2, "initcheck": 4, "synccheck": 8}
UNINIT = {"nan": 0, "zero": 1, "pattern": 2}
CHECK_LEVELS = {"off": 0, "warn": 1, "error": 2, "auto": 3}
PLAN_MAX_DIMS = 8


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 2048), ("file", ctypes.c_char * 512),
                ("line", ctypes.c_int), ("column", ctypes.c_int)]


class DeviceConfig(ctypes.Structure):
    _fields_ = [("arch", ctypes.c_char_p), ("threads", ctypes.c_int), ("schedule", ctypes.c_char_p),
                ("timeout", ctypes.c_double), ("uninit", ctypes.c_int)]


class ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_char_p), ("size", c_size), ("align", c_size),
                ("offset", c_size), ("is_array", ctypes.c_int)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("cluster", ctypes.c_uint * 3),
                ("shared_bytes", c_size), ("cooperative", ctypes.c_int)]


class Report(ctypes.Structure):
    _fields_ = [("faulted", ctypes.c_int), ("fault_message", ctypes.c_char * 2048),
                ("printf_output", ctypes.POINTER(ctypes.c_char)), ("printf_length", c_size),
                ("warp_instructions", ctypes.c_uint64), ("thread_instructions", ctypes.c_uint64),
                ("seconds", ctypes.c_double)]


class CheckConfig(ctypes.Structure):
    _fields_ = [("tools", ctypes.c_uint), ("racecheck_warp", ctypes.c_int), ("racecheck_benign", ctypes.c_int),
                ("leak_check", ctypes.c_int)]


class CheckSummary(ctypes.Structure):
    _fields_ = [("errors", c_size), ("warnings", c_size), ("text", ctypes.c_char_p), ("json", ctypes.c_char_p)]


class TensorMap(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_uint), ("box", ctypes.c_uint32 * 5), ("element_strides", ctypes.c_uint32 * 5),
                ("swizzle", ctypes.c_int), ("nan_fill", ctypes.c_int), ("tf32", ctypes.c_int)]


class Operand(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_char_p), ("ndim", ctypes.c_int),
                ("shape", c_size * PLAN_MAX_DIMS), ("data", ctypes.c_void_p), ("value", ctypes.c_void_p),
                ("size", c_size), ("aliased", ctypes.c_int), ("alias_input", ctypes.c_int),
                ("source_file", ctypes.c_char_p), ("output_file", ctypes.c_char_p), ("label", ctypes.c_char_p),
                ("tensor_map", ctypes.POINTER(TensorMap))]


class Tolerance(ctypes.Structure):
    _fields_ = [("ulps", ctypes.c_uint64), ("rtol", ctypes.c_double), ("atol", ctypes.c_double)]


class PlanConfig(ctypes.Structure):
    _fields_ = [("launch", LaunchConfig), ("backends", ctypes.c_int), ("cuda_device", ctypes.c_int),
                ("ptx_path", ctypes.c_char_p), ("spec_file", ctypes.c_char_p), ("ptx_text", ctypes.c_char_p),
                ("ptx_length", c_size), ("uninit", ctypes.c_int), ("oob_reads_fill", ctypes.c_int),
                ("keep_outputs", ctypes.c_int), ("tolerance", ctypes.POINTER(Tolerance)),
                ("printf_stream", ctypes.c_void_p)]


class Comparison(ctypes.Structure):
    _fields_ = [("compared", ctypes.c_int), ("line", ctypes.c_char * 2048), ("mismatches", ctypes.c_uint64),
                ("max_ulps", ctypes.c_uint64), ("first_mismatch", ctypes.c_longlong)]


class PlanResult(ctypes.Structure):
    _fields_ = [("stage", ctypes.c_int), ("operand", ctypes.c_int), ("other_operand", ctypes.c_int),
                ("path_problem", ctypes.c_int), ("emulator_ran", ctypes.c_int), ("emulator_faulted", ctypes.c_int),
                ("report", Report), ("gpu_ran", ctypes.c_int), ("gpu_faulted", ctypes.c_int),
                ("gpu_unavailable", ctypes.c_int), ("gpu_message", ctypes.c_char * 2048),
                ("gpu_jit_log", ctypes.c_char_p), ("gpu_name", ctypes.c_char * 256), ("gpu_sm", ctypes.c_int),
                ("gpu_wrapped", ctypes.c_int), ("gpu_seconds", ctypes.c_double), ("shared_bytes", c_size),
                ("outputs_written", ctypes.c_int), ("compared", ctypes.c_int), ("differing", ctypes.c_int),
                ("ncompared", ctypes.c_int), ("tolerance", ctypes.c_char * 512),
                ("comparisons", ctypes.POINTER(Comparison))]


def _candidates():
    env = os.environ.get("KEMU_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libkemu.so.0")                       # bundled by pip install from a built tree
    yield os.path.join(here, "..", "..", ".libs", "libkemu.so.0")  # python/ of an in-tree build
    found = ctypes.util.find_library("kemu")
    if found:
        yield found
    yield "libkemu.so.0"


def load():
    """Loads libkemu: $KEMU_LIBRARY, the copy bundled with the package, the
    build tree around python/, or the system's (ld.so's search path)."""
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        _declare(lib)
        return lib
    raise ImportError("kemu: cannot load libkemu (set KEMU_LIBRARY to its path): " + "; ".join(errors))


def _declare(lib):
    P = ctypes.c_void_p
    E = ctypes.POINTER(Error)
    sigs = {
        "kemu_device_create": ([ctypes.POINTER(DeviceConfig), ctypes.POINTER(P), E], ctypes.c_int),
        "kemu_device_destroy": ([P], None),
        "kemu_device_set_checks": ([P, ctypes.POINTER(CheckConfig), E], ctypes.c_int),
        "kemu_module_load_ptx": ([P, ctypes.c_char_p, c_size, ctypes.c_char_p, ctypes.POINTER(P), E], ctypes.c_int),
        "kemu_module_load_ptx_file": ([P, ctypes.c_char_p, ctypes.POINTER(P), E], ctypes.c_int),
        "kemu_module_unload": ([P], None),
        "kemu_module_kernel_count": ([P], ctypes.c_int),
        "kemu_module_kernel_at": ([P, ctypes.c_int], P),
        "kemu_module_get_kernel": ([P, ctypes.c_char_p, ctypes.POINTER(P), E], ctypes.c_int),
        "kemu_kernel_name": ([P], ctypes.c_char_p),
        "kemu_kernel_param_count": ([P], ctypes.c_int),
        "kemu_kernel_param": ([P, ctypes.c_int, ctypes.POINTER(ParamInfo)], ctypes.c_int),
        "kemu_check_results": ([P, ctypes.c_int, ctypes.POINTER(CheckSummary), E], ctypes.c_int),
        "kemu_check_summary_free": ([ctypes.POINTER(CheckSummary)], None),
        "kemu_plan_create": ([P, ctypes.POINTER(PlanConfig), ctypes.POINTER(P), E], ctypes.c_int),
        "kemu_plan_destroy": ([P], None),
        "kemu_plan_add": ([P, ctypes.POINTER(Operand), E], ctypes.c_int),
        "kemu_plan_run": ([P, ctypes.POINTER(PlanResult), E], ctypes.c_int),
        "kemu_plan_result_free": ([ctypes.POINTER(PlanResult)], None),
        "kemu_version": ([], ctypes.c_char_p),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
