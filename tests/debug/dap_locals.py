#!/usr/bin/env python3
"""Drives `kemu dap` to a breakpoint in an nvcc -G kernel (DWARF in the
PTX) and checks the "Locals" scope: source variables by their CUDA names,
with their types and values, and evaluate of a source expression.
Usage: dap_locals.py KEMU PTX OUTDIR. Exits 0 when every step answered as
expected; prints the first difference otherwise."""
import json
import os
import subprocess
import sys

kemu, ptx, outdir = sys.argv[1:4]
proc = subprocess.Popen([kemu, "dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
seq = 0
pending = []


def send(command, arguments=None):
    global seq
    seq += 1
    msg = {"seq": seq, "type": "request", "command": command}
    if arguments is not None:
        msg["arguments"] = arguments
    data = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
    proc.stdin.flush()
    return seq


def read():
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            fail("kemu dap closed its output")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(length))


def fail(why):
    print("FAIL:", why)
    for m in pending:
        print("  unconsumed:", json.dumps(m)[:300])
    proc.kill()
    sys.exit(1)


def wait(pred, what):
    for i, m in enumerate(pending):
        if pred(m):
            return pending.pop(i)
    while True:
        m = read()
        if pred(m):
            return m
        pending.append(m)
        if len(pending) > 500:
            fail("no " + what)


def response(s, command):
    r = wait(lambda m: m.get("type") == "response" and m.get("request_seq") == s, command + " response")
    if not r.get("success"):
        fail("%s failed: %s" % (command, r.get("message")))
    return r.get("body", {})


def event(name):
    return wait(lambda m: m.get("type") == "event" and m.get("event") == name, name + " event")


def expect(cond, why):
    if not cond:
        fail(why)


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
        "n": ("30", "int"), "pr": ("{a = 5, b = 2}", "Pair"), "hist": ("{5, 6, 0, 0}", "int [4]")}
for name, v in want.items():
    expect(values.get(name) == v, "%s: %r, want %r" % (name, values.get(name), v))
expect(values.get("p", ("", ""))[1] == "const float *", "p's type: %r" % (values.get("p"),))
ev = response(send("evaluate", {"expression": "p[j] * scale", "frameId": frames[0]["id"]}), "evaluate")
expect(ev["result"] == "12", "evaluate p[j] * scale: %r" % ev)
response(send("disconnect"), "disconnect")
proc.wait(timeout=30)
print("ok: DAP Locals scope of an nvcc -G kernel")
