"""A small Debug Adapter Protocol client for the tests of `kemu dap`
(dap_session.py, dap_locals.py): starts `KEMU dap`, sends requests,
waits for responses and events (keeping the others for later), and fails
with the first difference."""
import json
import subprocess
import sys


def start(kemu):
    global proc
    proc = subprocess.Popen([kemu, "dap"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return proc


class _Attached:
    """A DAP server inside a program (kemu exec --dap): the wire is a TCP
    connection; the program is the child process."""

    def __init__(self, sock, child):
        self.stdin = sock.makefile("wb")
        self.stdout = sock.makefile("rb")
        self.child = child

    def kill(self):
        self.child.kill()

    def wait(self, timeout=None):
        return self.child.wait(timeout=timeout)


def attach(host, port, child):
    import socket
    global proc
    proc = _Attached(socket.create_connection((host, port), timeout=120), child)
    return proc


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


