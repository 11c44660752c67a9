#!/usr/bin/env python3
"""Compares a bench/suite run with the committed baseline (make bench-check).

    bench/check.py BASELINE.json CURRENT.json [--band X]

Both files are bench/suite --json tables. For every kernel in both, the
ratios that do not depend on how fast the machine is are compared: kemu's
1-thread time over the native twin's (slowdown_1t), and racecheck's and
memcheck's time over the unchecked run's. A ratio that grew by more than
the band (default 2: 100% slower; back-to-back runs of one build differ
by up to about 1.5x) is a regression; one that shrank by
more than the band is reported as an improvement (update the baseline with
`make bench-baseline`). Prints one line per kernel and measure that moved,
then the geomeans, and exits 1 when anything regressed, 2 on bad input.
Standard library only.
"""
import json
import math
import sys

MEASURES = (
    ("slowdown_1t", "kemu 1 thread / native"),
    ("racecheck_over_1t", "racecheck / unchecked"),
    ("memcheck_over_1t", "memcheck / unchecked"),
)


def load(path):
    try:
        with open(path) as f:
            table = json.load(f)
        return {k["name"]: k for k in table["kernels"]}, table
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bench-check: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)


def main(argv):
    band = 2.0
    paths = []
    i = 1
    while i < len(argv):
        if argv[i] == "--band" and i + 1 < len(argv):
            band = float(argv[i + 1])
            i += 2
            continue
        paths.append(argv[i])
        i += 1
    if len(paths) != 2 or not band > 1:
        print("usage: bench/check.py BASELINE.json CURRENT.json [--band X>1]", file=sys.stderr)
        return 2
    base, _ = load(paths[0])
    cur, cur_table = load(paths[1])
    regressed = improved = 0
    logs = {"base": [], "cur": []}
    for name in base:
        if name not in cur:
            print(f"bench-check: {name}: in the baseline, not measured now (failed or skipped)")
            regressed += 1
            continue
        for key, what in MEASURES:
            b, c = base[name].get(key), cur[name].get(key)
            if not isinstance(b, (int, float)) or not isinstance(c, (int, float)) or b <= 0 or c <= 0:
                continue
            if key == "slowdown_1t":
                logs["base"].append(math.log(b))
                logs["cur"].append(math.log(c))
            if c > b * band:
                print(f"bench-check: {name}: {what} {b:.2f} -> {c:.2f} ({c / b:.2f}x): REGRESSED")
                regressed += 1
            elif c * band < b:
                print(f"bench-check: {name}: {what} {b:.2f} -> {c:.2f} ({b / c:.2f}x faster): improved")
                improved += 1
    for name in cur:
        if name not in base:
            print(f"bench-check: {name}: new, not in the baseline")
    if logs["base"]:
        gb = math.exp(sum(logs["base"]) / len(logs["base"]))
        gc = math.exp(sum(logs["cur"]) / len(logs["cur"]))
        print(f"bench-check: geomean slowdown (1 thread) over {len(logs['base'])} kernels: "
              f"baseline {gb:.2f}, now {gc:.2f}")
    if cur_table.get("failed"):
        print(f"bench-check: {cur_table['failed']} kernel(s) failed in this run")
        regressed += 1
    print(f"bench-check: {regressed} regressed, {improved} improved beyond a band of {band}x")
    return 1 if regressed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
