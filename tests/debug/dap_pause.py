#!/usr/bin/env python3
"""`kemu dap`: pause a kernel that never ends, change its registers and
memory (setVariable, setExpression) so that it ends, and continue to the
end of the run. Usage: dap_pause.py KEMU PTX OUTDIR (PTX: spin.ptx)."""
import os
import sys
import time

kemu, ptx, outdir = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dap_client import event, expect, pending, response, send, start, wait  # noqa: E402

proc = start(kemu)
caps = response(send("initialize", {"adapterID": "kemu", "linesStartAt1": True}), "initialize")
expect(caps.get("supportsSetVariable") and caps.get("supportsSetExpression"), "capabilities: %r" % caps)
event("initialized")
count = os.path.join(outdir, "dap_count.npy")
response(send("launch", {"command": "run", "args": [ptx, "--block", "32", "--", "in:zeros:i32:1",
                                                     "out:%s:i32:32" % count]}), "launch")
response(send("configurationDone"), "configurationDone")
time.sleep(0.5)  # the kernel spins on its flag by now
response(send("pause", {"threadId": 1}), "pause")
stop = event("stopped")["body"]
expect(stop["reason"] == "pause", "stopped by the pause: %r" % stop)
tid = stop["threadId"]
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(frames[0]["source"]["name"] == "spin.cu" and frames[0]["line"] in (6, 7), "in the loop: %r" % frames[0])
scopes = response(send("scopes", {"frameId": frames[0]["id"]}), "scopes")["scopes"]
regs = scopes[0]["variablesReference"]
listed = response(send("variables", {"variablesReference": regs}), "variables")["variables"]
reg = next(v for v in listed if v.get("type") in (".u32", ".b32", ".s32"))
got = response(send("setVariable", {"variablesReference": regs, "name": reg["name"], "value": "1234"}),
               "setVariable")
expect(got["value"] == "1234", "setVariable answers the new value: %r" % got)
listed = response(send("variables", {"variablesReference": regs}), "variables")["variables"]
expect(next(v for v in listed if v["name"] == reg["name"])["value"] == "1234", "the register holds 1234")
s = send("setVariable", {"variablesReference": scopes[3]["variablesReference"], "name": "threadIdx.x", "value": "1"})
bad = wait(lambda m: m.get("type") == "response" and m.get("request_seq") == s, "setVariable response")
expect(not bad["success"] and "can be set" in bad["message"], "built-ins cannot be set: %r" % bad)
# the flag the kernel waits for, through its pointer parameter
got = response(send("setExpression", {"expression": "*(int *)spin_param_0", "value": "1",
                                      "frameId": frames[0]["id"]}), "setExpression")
expect(got["value"] == "1", "setExpression: %r" % got)
response(send("continue", {"threadId": tid}), "continue")
exited = event("exited")["body"]
expect(exited["exitCode"] == 0, "the kernel ended: %r" % exited)
event("terminated")
response(send("disconnect"), "disconnect")
proc.stdin.close()
proc.wait(timeout=30)
out = "".join(m["body"]["output"] for m in pending if m.get("event") == "output")
expect("dap_count.npy" in out and os.path.getsize(count) > 128, "the run wrote its output: %r" % out[-300:])
print("ok: DAP pause, setVariable and setExpression")
