#!/usr/bin/env python3
"""An editor attaching to a CUDA program that runs under `kemu exec --dap 0`
(the Debug Adapter Protocol over TCP, served by kemu's runtime inside the
program): initialize, attach, setBreakpoints, configurationDone, stopped,
stackTrace, evaluate, stepBack (the launch is replayed), continue, exited,
terminated; the program prints its own PASS. Usage: dap_attach.py KEMU APP
OUTDIR (APP: app.cu built with dbg.cu)."""
import os
import subprocess
import sys
import time

kemu, app, outdir = sys.argv[1:4]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dap_client  # noqa: E402
from dap_client import event, expect, response, send  # noqa: E402

port_file = os.path.join(outdir, "dap.port")
env = dict(os.environ, KEMU_DEBUG_PORT_FILE=port_file)
if os.environ.get("KEMU_CHILD_PRELOAD"):  # a sanitizer build: the program needs its runtimes
    env.update(LD_PRELOAD=os.environ["KEMU_CHILD_PRELOAD"].rstrip(":"),
               ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0")
out = open(os.path.join(outdir, "attach.out"), "wb")
child = subprocess.Popen([kemu, "exec", "--dap", "127.0.0.1:0", app], stdout=out, stderr=subprocess.STDOUT, env=env)
for _ in range(600):
    if os.path.exists(port_file) and open(port_file).read().endswith("\n"):
        break
    if child.poll() is not None:
        break
    time.sleep(0.1)
if not os.path.exists(port_file):
    child.kill()
    print("FAIL: kemu exec --dap did not listen:", open(os.path.join(outdir, "attach.out")).read())
    sys.exit(1)
host, port = open(port_file).read().strip().rsplit(":", 1)
dap_client.attach(host, int(port), child)

caps = response(send("initialize", {"adapterID": "kemu", "linesStartAt1": True}), "initialize")
expect(caps.get("supportsStepBack"), "capabilities")
event("initialized")
response(send("attach", {}), "attach")
bps = response(send("setBreakpoints", {"source": {"path": "dbg.cu"},
                                       "breakpoints": [{"line": 16, "condition": "threadIdx.x == 5"}]}),
               "setBreakpoints")["breakpoints"]
expect(len(bps) == 1, "setBreakpoints answer: %r" % bps)
response(send("configurationDone"), "configurationDone")
stop = event("stopped")["body"]
expect(stop["reason"] == "breakpoint", "stopped at the breakpoint: %r" % stop)
tid = stop["threadId"]
frames = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"]
expect(frames[0]["line"] == 16 and "lane 5" in frames[0]["name"], "frame 0: %r" % frames[0])
ev = response(send("evaluate", {"expression": "%f3", "frameId": frames[0]["id"]}), "evaluate")
expect(ev["result"] == "11", "evaluate %%f3: %r" % ev)
response(send("next", {"threadId": tid}), "next")
event("stopped")
pc_after = response(send("stackTrace", {"threadId": tid}), "stackTrace")["stackFrames"][0]
response(send("stepBack", {"threadId": tid}), "stepBack")
stop = event("stopped")["body"]
back = response(send("stackTrace", {"threadId": stop["threadId"]}), "stackTrace")["stackFrames"][0]
expect(int(back["instructionPointerReference"]) < int(pc_after["instructionPointerReference"]),
       "stepBack went back inside the launch: %r then %r" % (pc_after, back))
response(send("setBreakpoints", {"source": {"path": "dbg.cu"}, "breakpoints": []}), "setBreakpoints")
response(send("continue", {"threadId": tid}), "continue")
exited = event("exited")["body"]
expect(exited["exitCode"] == 0, "exit code: %r" % exited)
event("terminated")
child.wait(timeout=60)
text = open(os.path.join(outdir, "attach.out")).read()
expect("app: PASS" in text and "waiting for a debugger" in text, "the program's output: %r" % text[-500:])
expect(child.returncode == 0, "kemu exec's status: %r" % child.returncode)
print("ok: DAP attach to kemu exec --dap")
