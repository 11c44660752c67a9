#!/usr/bin/env python3
"""Drives `kemu dap` through a whole debugging session over the Debug
Adapter Protocol, as an editor does: initialize, launch, setBreakpoints,
configurationDone, stopped, threads, stackTrace, scopes, variables,
evaluate, next, stepIn, stepOut, stepBack, continue, exited, terminated.
Usage: dap_session.py KEMU PTX OUTDIR. Exits 0 when every step answered
as expected; prints the first difference otherwise."""
import os
import sys

kemu, ptx, outdir = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dap_client import event, expect, pending, response, send, start  # noqa: E402

proc = start(kemu)

caps = response(send("initialize", {"adapterID": "kemu", "linesStartAt1": True}), "initialize")
expect(caps.get("supportsStepBack") and caps.get("supportsConfigurationDoneRequest"), "capabilities")
event("initialized")
args = [ptx, "--kernel", "saxpy", "--grid", "1", "--block", "64", "--", "s32:50", "f32:2",
        "in:arange:f32:64", "inout:ones:f32:64:" + os.path.join(outdir, "dap_y.npy")]
response(send("launch", {"command": "run", "args": args}), "launch")
bps = response(send("setBreakpoints", {"source": {"path": "/elsewhere/dbg.cu"},
                                       "breakpoints": [{"line": 15, "condition": "threadIdx.x == 3"}]}),
               "setBreakpoints")["breakpoints"]
expect(len(bps) == 1 and bps[0]["line"] == 15, "setBreakpoints answer")
response(send("setExceptionBreakpoints", {"filters": ["fault"]}), "setExceptionBreakpoints")
response(send("configurationDone"), "configurationDone")

stop = event("stopped")["body"]
expect(stop["reason"] == "breakpoint", "stopped at the breakpoint: %r" % stop)
tid = stop["threadId"]
threads = response(send("threads"), "threads")["threads"]
expect(any(t["id"] == tid and t["name"] == "block (0,0,0) warp 0" for t in threads), "threads: %r" % threads)
expect(len(threads) == 2, "two warps: %r" % threads)
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(frames[0]["line"] == 15 and frames[0]["source"]["name"] == "dbg.cu", "frame 0: %r" % frames[0])
expect("lane 3" in frames[0]["name"], "the condition's lane is in focus: %r" % frames[0]["name"])
scopes = response(send("scopes", {"frameId": frames[0]["id"]}), "scopes")["scopes"]
names = [s["name"] for s in scopes]
expect(names[:2] == ["Registers (focused lane)", "Registers (all lanes)"], "scopes: %r" % names)
builtins = response(send("variables", {"variablesReference": scopes[3]["variablesReference"]}),
                    "variables")["variables"]
expect({"name": "threadIdx.x", "value": "3"}.items() <= next(v for v in builtins if v["name"] == "threadIdx.x").items(),
       "threadIdx.x of the focused lane: %r" % builtins[:3])
lanes = response(send("variables", {"variablesReference": scopes[1]["variablesReference"]}),
                 "variables")["variables"]
r1 = next(v for v in lanes if v["name"] == "%r1")
expect(r1["value"].startswith("[") and r1["value"].count(",") == 31, "all lanes of %%r1: %r" % r1)
params = response(send("variables", {"variablesReference": scopes[2]["variablesReference"]}),
                  "variables")["variables"]
expect(params[0]["value"] == "50" and params[1]["value"] == "2", "parameters: %r" % params)
ev = response(send("evaluate", {"expression": "threadIdx.x * 10 + blockIdx.x", "frameId": frames[0]["id"]}),
              "evaluate")
expect(ev["result"] == "30", "evaluate: %r" % ev)

response(send("stepIn", {"threadId": tid}), "stepIn")
stop = event("stopped")["body"]
expect(stop["reason"] == "step", "stepIn stops: %r" % stop)
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(len(frames) == 2 and frames[0]["name"].startswith("_Z5scaleff"), "stepped into scale: %r" % frames)
response(send("stepOut", {"threadId": tid}), "stepOut")
event("stopped")
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(len(frames) == 1 and frames[0]["line"] == 15, "back in saxpy: %r" % frames)
response(send("next", {"threadId": tid}), "next")
event("stopped")
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(frames[0]["line"] == 16, "next reaches line 16: %r" % frames[0])
pc_after = frames[0]["instructionPointerReference"]
response(send("stepBack", {"threadId": tid}), "stepBack")
stop = event("stopped")["body"]
frames = response(send("stackTrace", {"threadId": stop["threadId"]}), "stackTrace")["stackFrames"]
expect(int(frames[0]["instructionPointerReference"]) < int(pc_after) or frames[0]["line"] == 15,
       "stepBack goes back: %r" % frames[0])

response(send("setBreakpoints", {"source": {"path": "/elsewhere/dbg.cu"}, "breakpoints": []}), "setBreakpoints")
response(send("continue", {"threadId": tid}), "continue")
exited = event("exited")["body"]
expect(exited["exitCode"] == 0, "exit code: %r" % exited)
event("terminated")
out = "".join(m["body"]["output"] for m in pending if m.get("event") == "output")
expect("wrote" in out and "dap_y.npy" in out, "the run's output came as output events: %r" % out[-300:])
response(send("disconnect"), "disconnect")
proc.stdin.close()
proc.wait(timeout=30)
print("ok: DAP session (initialize .. terminated)")
