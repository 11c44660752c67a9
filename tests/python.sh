#!/bin/sh
# make check: the Python package's tests (python/tests) with pytest, over
# the libkemu just built. Skips (exit 77) when no Python 3 here has numpy
# and pytest; CI installs python3-numpy and python3-pytest so they run.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import numpy, pytest' 2>/dev/null; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    echo "SKIP: no Python 3 with numpy and pytest"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
lib=$top_builddir/.libs/libkemu.so.0
[ -f "$lib" ] || { echo "FAIL: $lib is not built"; exit 1; }
# a sanitizer build of libkemu: its runtime must come first in the process
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
    export LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 # the interpreter's own allocations
    export KEMU_TEST_NO_TRITON=1 # Triton's LLVM is not built for a preloaded sanitizer runtime
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1
KEMU_LIBRARY=$lib KEMU_TEST_STANDIN=$top_builddir/tests/cuda-standin/.libs/libcuda.so.1 \
PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH} top_srcdir=$top_srcdir \
    "$py" -m pytest -q -p no:cacheprovider "$top_srcdir/python/tests"
