#!/usr/bin/env python3
"""Drives `kemu dap` to a breakpoint in an nvcc -G kernel (DWARF in the
PTX) and checks the "Locals" scope: source variables by their CUDA names,
with their types and values, and evaluate of a source expression.
Usage: dap_locals.py KEMU PTX OUTDIR. Exits 0 when every step answered as
expected; prints the first difference otherwise."""
import os
import sys

kemu, ptx, outdir = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dap_client import event, expect, pending, response, send, start  # noqa: E402

proc = start(kemu)

caps = response(send("initialize", {"adapterID": "kemu", "linesStartAt1": True}), "initialize")
event("initialized")
args = [ptx, "--kernel", "accumulate", "--grid", "1", "--block", "32", "--",
        "out:" + os.path.join(outdir, "dap_locals.npy") + ":f32:32", "in:arange:f32:40", "s32:30", "f32:2"]
response(send("launch", {"command": "run", "args": args}), "launch")
response(send("setBreakpoints", {"source": {"path": "dwarf.cu"},
                                 "breakpoints": [{"line": 26, "condition": "threadIdx.x == 5 && j == 1"}]}),
         "setBreakpoints")
response(send("configurationDone"), "configurationDone")
stop = event("stopped")["body"]
expect(stop["reason"] == "breakpoint", "stopped at the breakpoint: %r" % stop)
frames = response(send("stackTrace", {"threadId": stop["threadId"]}), "stackTrace")["stackFrames"]
scopes = response(send("scopes", {"frameId": frames[0]["id"]}), "scopes")["scopes"]
expect(scopes and scopes[0]["name"] == "Locals", "a Locals scope first: %r" % [s["name"] for s in scopes])
got = response(send("variables", {"variablesReference": scopes[0]["variablesReference"]}), "variables")
values = {v["name"]: (v["value"], v.get("type")) for v in got["variables"]}
want = {"j": ("1", "int"), "i": ("5", "int"), "acc": ("10", "float"), "scale": ("2", "float"),
        "n": ("30", "int"), "pr": ("{a = 5, b = 2}", "Pair"), "hist": ("{5, 6, -1, -1}", "int [4]")}
for name, v in want.items():
    expect(values.get(name) == v, "%s: %r, want %r" % (name, values.get(name), v))
expect(values.get("p", ("", ""))[1] == "const float *", "p's type: %r" % (values.get("p"),))
ev = response(send("evaluate", {"expression": "p[j] * scale", "frameId": frames[0]["id"]}), "evaluate")
expect(ev["result"] == "12", "evaluate p[j] * scale: %r" % ev)
response(send("disconnect"), "disconnect")
proc.wait(timeout=30)
print("ok: DAP Locals scope of an nvcc -G kernel")
