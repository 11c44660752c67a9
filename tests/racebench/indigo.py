#!/usr/bin/env python3
"""Measure kemu's racecheck on the Indigo codes of an external checkout.

Nothing of the suite is part of kemu: give the path of a checkout that
holds the Indigo 1.3 codes as the HiRace (SC24) artifact ships them
(ARTIFACT/indigo/indigo_sources/<family>/<code>.cu,
ARTIFACT/indigo/indigo_include/indigo_cuda.h, ARTIFACT/indigo/input/*.egr).
Not run by `make check`.

Ground truth is the code's name, as in the artifact's own tables: a code
is racy when its name holds atomicBug, guardBug, raceBug or syncBug (346
of 590), race-free otherwise (244; boundsBug alone is a memory error, not
a race). Every code runs as the artifact runs it, `prog INPUT 256 1024`,
under `kemu exec --tool racecheck`.

Building 590 programs one nvcc each costs minutes of CPU apiece on a small
machine, so the codes of one family are built together: one translation
unit per family (in WORK, generated, not kept in kemu) includes each code
in a namespace of its own, with its main renamed, and a main that runs the
code that KEMU_INDIGO_CODE names. Each kernel is still compiled on its own
(it shares no device function with the others); a run launches only that
code's kernel, with that code's host code, with the same argv.

    tests/racebench/indigo.py --artifact /tmp/hirace --work /tmp/indigo-work \\
        --inputs DAG_5n_5e,counterDAG_5n_5e [--timeout 120] [--only SUBSTR]

Results are appended to WORK/results.jsonl (a run already there is not
run again) and summed per input.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RACY = re.compile(r"atomicBug|guardBug|raceBug|syncBug")


def codes(artifact):
    src = os.path.join(artifact, "indigo", "indigo_sources")
    fams = {}
    for path in sorted(glob.glob(os.path.join(src, "*", "*.cu"))):
        fams.setdefault(os.path.basename(os.path.dirname(path)), []).append(path)
    if not fams:
        sys.exit("no Indigo codes under %s" % src)
    return fams


def build(artifact, work, fam, paths, nvcc_flags):
    exe = os.path.join(work, "bundle_" + fam)
    if os.path.exists(exe):
        return exe
    tu = os.path.join(work, "bundle_%s.cu" % fam)
    with open(tu, "w") as f:
        f.write("#include <cuda.h>\n#include <cstdlib>\n#include <cstdio>\n#include <cstring>\n")
        for i, p in enumerate(paths):
            f.write("namespace c%d {\n#define main indigo_main\n#include \"%s\"\n#undef main\n}\n" % (i, p))
        f.write("int main(int argc, char* argv[])\n{\n  const char* w = getenv(\"KEMU_INDIGO_CODE\");\n"
                "  if (w == NULL) {fprintf(stderr, \"set KEMU_INDIGO_CODE\\n\"); return 2;}\n")
        for i, p in enumerate(paths):
            f.write("  if (strcmp(w, \"%s\") == 0) return c%d::indigo_main(argc, argv);\n"
                    % (os.path.basename(p)[:-3], i))
        f.write("  fprintf(stderr, \"no code %s\\n\", w);\n  return 2;\n}\n")
    cmd = ["nice", "-n", "10", "nvcc"] + nvcc_flags + [
        "-I" + os.path.join(artifact, "indigo", "indigo_include"), tu, "-o", exe + ".tmp"]
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode("utf-8", "replace"))
        sys.exit("build of %s failed: %s" % (fam, " ".join(cmd)))
    os.rename(exe + ".tmp", exe)
    print("built %s (%d codes) in %.0f s" % (fam, len(paths), time.time() - t), flush=True)
    return exe


def run_one(kemu, exe, code, graph, timeout, extra):
    env = dict(os.environ, KEMU_INDIGO_CODE=code)
    cmd = ["timeout", "-s", "TERM", "-k", "10", str(timeout), kemu, "exec", "--tool", "racecheck"] + extra + [
        exe, graph, "256", "1024"]
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    text = p.stdout.decode("utf-8", "replace")
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    w = re.search(r"SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    notes = sorted(set(re.findall(r"^(?:=+ )?(?:kemu: )?(.*(?:hazard|Race reported|error|note)[^\n]{0,60})", text,
                                  re.M)))[:6]
    return {"rc": p.returncode, "secs": round(time.time() - t, 1),
            "errors": int(m.group(1)) if m else None, "races": int(w.group(1)) if w else 0,
            "warnings": int(w.group(2)) if w else 0,
            "timeout": p.returncode in (124, 137), "lines": notes}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifact", required=True, help="checkout holding indigo/indigo_sources")
    ap.add_argument("--work", required=True, help="folder for the built programs and results.jsonl")
    ap.add_argument("--kemu", default=os.environ.get("KEMU", os.path.join(HERE, "..", "..", "src", "kemu")))
    ap.add_argument("--inputs", default="DAG_5n_5e,counterDAG_5n_5e")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--only", default="", help="codes whose name holds this")
    ap.add_argument("--kemu-args", default="", help="more kemu exec options, space-separated")
    ap.add_argument("--tag", default="", help="label stored with each run (a kemu version)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--report", action="store_true", help="only sum results.jsonl")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    res_path = os.path.join(a.work, "results.jsonl")
    done = {}
    if os.path.exists(res_path):
        with open(res_path) as f:
            for line in f:
                r = json.loads(line)
                done[(r["tag"], r["code"], r["input"])] = r
    fams = codes(a.artifact)
    inputs = a.inputs.split(",")
    extra = a.kemu_args.split()
    if not a.report:
        with open(res_path, "a") as out:
            for fam, paths in fams.items():
                sel = [p for p in paths if a.only in os.path.basename(p)]
                if not sel:
                    continue
                exe = build(a.artifact, a.work, fam, paths, ["-O2", "-arch=sm_80", "-cudart", "shared"])
                if a.build_only:
                    continue
                for inp in inputs:
                    graph = os.path.join(a.artifact, "indigo", "input", inp + ".egr")
                    for p in sel:
                        code = os.path.basename(p)[:-3]
                        if (a.tag, code, inp) in done:
                            continue
                        r = run_one(os.path.abspath(a.kemu), exe, code, graph, a.timeout, extra)
                        r.update(tag=a.tag, code=code, input=inp, racy=bool(RACY.search(code)))
                        done[(a.tag, code, inp)] = r
                        out.write(json.dumps(r) + "\n")
                        out.flush()
                        print("%-18s %-60s %s e=%s w=%s %s %.0fs" % (
                            inp, code, "RACY" if r["racy"] else "free", r["errors"], r["warnings"],
                            "TIMEOUT" if r["timeout"] else "", r["secs"]), flush=True)
    print("\n%-20s %-8s %6s %14s %16s %12s %9s %9s" % (
        "input", "tag", "runs", "racy: race err", "racy: warn only", "free: race/warn", "no summ.", "timeouts"))
    for inp in inputs:
        rs = [r for (t, c, i), r in done.items() if i == inp and t == a.tag]
        if not rs:
            continue
        racy = [r for r in rs if r["racy"]]
        free = [r for r in rs if not r["racy"]]
        print("%-20s %-8s %6d %8d / %3d %10d / %3d %6d / %3d %9d %9d" % (
            inp, a.tag or "-", len(rs),
            sum(1 for r in racy if r["races"]), len(racy),
            sum(1 for r in racy if not r["races"] and r["warnings"]), len(racy),
            sum(1 for r in free if r["races"] or r["warnings"]), len(free),
            sum(1 for r in rs if r["errors"] is None), sum(1 for r in rs if r["timeout"])))


if __name__ == "__main__":
    main()
