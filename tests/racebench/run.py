#!/usr/bin/env python3
"""racebench: kemu's checkers over the graph codes of tests/racebench/kernels.

Every kernel NAME_VARIANT of kernels/*.ptx (see kernels/common.h) runs on
every input graph under every tool; a run counts as a detection when the
tool reports at least one error ("ERROR SUMMARY: N errors", N > 0). The
truth comes from the variant: atomic, race, sync and guard kernels are
racy (racecheck should report them), bounds kernels read out of bounds
(memcheck should), clean kernels are neither (nothing should report
them). Prints, per tool, true and false positives and negatives,
precision and recall, over all inputs and per input.

  tests/racebench/run.py [--kemu PATH] [--inputs a,b] [--tools a,b]
                         [--kernels PREFIX,...] [--verbose] [--check]

--check (what `make check` runs, through check.sh): fails unless racecheck
reports an error for every racy kernel on every input and reports nothing
at all (no error, no warning) for every clean and every bounds kernel (an
out-of-bounds read is no race: race suites count such codes race-free),
and memcheck reports every bounds kernel. Only the Python standard library is needed: the input
graphs are generated here (deterministically) and written as .npy files.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")

RACY = ("atomic", "race", "sync", "guard")
GRID, BLOCK = 4, 256
UNSEEN = 0x3FFFFFFF

# tool name -> (kemu options, the variants it should report)
TOOLS = {
    "racecheck": (["--tool", "racecheck"], RACY),
    "racecheck-warp-warn": (["--tool", "racecheck", "--racecheck-warp", "warn"], RACY),
    "memcheck": (["--tool", "memcheck"], ("bounds",)),
}


# ---- input graphs (CSR, neighbour lists sorted) ------------------------------------

def csr(n, edges):
    adj = [sorted(set(u for (a, u) in edges if a == v)) for v in range(n)]
    nindex, nlist = [0], []
    for v in range(n):
        nlist += adj[v]
        nindex.append(len(nlist))
    return n, nindex, nlist


def tiny_chain():
    """5 nodes, 5 edges: a short chain with a shortcut (0->2)."""
    return csr(5, [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4)])


def tiny_star():
    """5 nodes, 5 edges: four nodes point at node 4, which points back at 0."""
    return csr(5, [(0, 4), (1, 4), (2, 4), (3, 4), (4, 0)])


def mesh():
    """32 x 32 grid, each node linked both ways to its 4 neighbours."""
    s, e = 32, []
    for y in range(s):
        for x in range(s):
            v = y * s + x
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < s and 0 <= y + dy < s:
                    e.append((v, (y + dy) * s + x + dx))
    return csr(s * s, e)


def random_graph():
    """2000 nodes, 4 random out-neighbours each (a fixed linear congruential sequence)."""
    n, state, e = 2000, 12345, []
    for v in range(n):
        for _ in range(4):
            state = (state * 1103515245 + 12345) % (1 << 31)
            u = state % n
            if u != v:
                e.append((v, u))
    return csr(n, e)


def hub():
    """1000 nodes: node 0 linked both ways to every node, and a ring."""
    n, e = 1000, []
    for v in range(1, n):
        e += [(0, v), (v, 0)]
    for v in range(n):
        e.append((v, (v + 1) % n))
    return csr(n, e)


INPUTS = {"tiny-chain": tiny_chain, "tiny-star": tiny_star, "mesh": mesh, "random": random_graph, "hub": hub}


def initial_data(algo, n):
    """The per-node state a code starts from (kernels/*.cu say what data holds)."""
    if algo == "bfs":
        return [v // 2 if v % 2 == 0 else UNSEEN for v in range(n)]
    if algo == "cc":
        return list(range(n))
    if algo == "pagerank":
        return [1000] * n
    return [0] * n


def write_npy(path, values):
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%di" % len(values), *values))


# ---- runs ----------------------------------------------------------------------------

def kernels(prefixes):
    """(ptx path, kernel name, algorithm, variant) for every kernel."""
    out = []
    for f in sorted(os.listdir(KERNELS)):
        if not f.endswith(".ptx"):
            continue
        path = os.path.join(KERNELS, f)
        with open(path) as h:
            for name in re.findall(r"^\.visible \.entry (\w+)\(", h.read(), re.M):
                algo, variant = name.rsplit("_", 1)
                if not prefixes or any(name.startswith(p) for p in prefixes):
                    out.append((path, name, algo, variant))
    return out


def run_one(kemu, ptx, kernel, algo, graph, files, tool_opts, tmp):
    n, nindex, nlist = graph
    data = os.path.join(tmp, "data.%s.npy" % algo)
    if not os.path.exists(data):
        write_npy(data, initial_data(algo, n))
    cmd = [kemu, "run", ptx, "--kernel", kernel, "--grid", str(GRID), "--block", str(BLOCK), "--threads", "1"]
    cmd += tool_opts
    cmd += ["--", "s32:%d" % n, "s32:%d" % len(nlist), "in:" + files[0], "in:" + files[1],
            "inout:%s:%s" % (data, os.path.join(tmp, "data.out.npy")),
            "inout:%s:%s" % (files[2], os.path.join(tmp, "aux.out.npy")),
            "inout:%s:%s" % (files[3], os.path.join(tmp, "out.out.npy"))]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp, timeout=600)
    text = p.stdout.decode("utf-8", "replace")
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    w = re.search(r"SUMMARY: \d+ hazards? displayed \(\d+ errors?, (\d+) warnings?\)", text)
    if not m:
        raise RuntimeError("no checker summary from: %s\n%s" % (" ".join(cmd), text))
    return int(m.group(1)), int(w.group(1)) if w else 0, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kemu", default=os.environ.get("KEMU", os.path.join(HERE, "..", "..", "src", "kemu")))
    ap.add_argument("--inputs", default=",".join(INPUTS))
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--kernels", default="")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    inputs = [i for i in a.inputs.split(",") if i]
    tools = [t for t in a.tools.split(",") if t]
    for i in inputs:
        if i not in INPUTS:
            sys.exit("run.py: unknown input %r (%s)" % (i, ", ".join(INPUTS)))
    for t in tools:
        if t not in TOOLS:
            sys.exit("run.py: unknown tool %r (%s)" % (t, ", ".join(TOOLS)))
    ks = kernels([p for p in a.kernels.split(",") if p])
    failures = []
    # counts[tool][input] = [tp, fn, fp, tn]
    counts = {t: {i: [0, 0, 0, 0] for i in inputs} for t in tools}
    with tempfile.TemporaryDirectory(prefix="racebench.") as tmp:
        for inp in inputs:
            graph = INPUTS[inp]()
            n, nindex, nlist = graph
            d = os.path.join(tmp, inp)
            os.mkdir(d)
            files = [os.path.join(d, x) for x in ("nindex.npy", "nlist.npy", "aux.npy", "out.npy")]
            write_npy(files[0], nindex)
            write_npy(files[1], nlist)
            write_npy(files[2], [0] * n)
            write_npy(files[3], [0] * 4)
            for ptx, name, algo, variant in ks:
                for t in tools:
                    opts, positive = TOOLS[t]
                    errors, warnings, text = run_one(a.kemu, ptx, name, algo, graph, files, opts, d)
                    truth = variant in positive
                    found = errors > 0
                    c = counts[t][inp]
                    c[0 if truth and found else 1 if truth else 2 if found else 3] += 1
                    if a.verbose:
                        print("%-10s %-18s %-20s %s%s" % (inp, name, t, "ERROR" if found else "-",
                                                         " (%d warnings)" % warnings if warnings else ""))
                    if a.check:
                        if t == "racecheck" and variant in RACY and not found:
                            failures.append("%s on %s: racecheck reports no error" % (name, inp))
                        if t == "racecheck" and variant in ("clean", "bounds") and (errors or warnings):
                            failures.append("%s on %s: racecheck reports %d errors, %d warnings:\n%s"
                                            % (name, inp, errors, warnings, text))
                        if t == "memcheck" and variant == "bounds" and not found:
                            failures.append("%s on %s: memcheck reports no error" % (name, inp))
                        if t == "memcheck" and variant == "clean" and found:
                            failures.append("%s on %s: memcheck reports an error:\n%s" % (name, inp, text))
    nk = len(ks)
    nr = sum(1 for k in ks if k[3] in RACY)
    nb = sum(1 for k in ks if k[3] == "bounds")
    print("racebench: %d kernels (%d racy, %d out of bounds, %d clean) x %d inputs, grid %d x block %d"
          % (nk, nr, nb, nk - nr - nb, len(inputs), GRID, BLOCK))
    print("%-20s %-12s %5s %5s %5s %5s %10s %8s" % ("tool", "input", "TP", "FN", "FP", "TN", "precision", "recall"))

    def row(t, label, c):
        tp, fn, fp, tn = c
        prec = "%.3f" % (tp / (tp + fp)) if tp + fp else "-"
        rec = "%.3f" % (tp / (tp + fn)) if tp + fn else "-"
        print("%-20s %-12s %5d %5d %5d %5d %10s %8s" % (t, label, tp, fn, fp, tn, prec, rec))

    for t in tools:
        total = [0, 0, 0, 0]
        for inp in inputs:
            c = counts[t][inp]
            total = [x + y for x, y in zip(total, c)]
            row(t, inp, c)
        if len(inputs) > 1:
            row(t, "all", total)
    if failures:
        print("\nracebench: %d failures:" % len(failures))
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
