#!/bin/sh
# Unmodified Numba CUDA programs on kemu's driver API: `kemu exec python
# numba_app.py` (device arrays, shared memory, atomics, a matmul, streams
# and events, compared with NumPy), and the missing-syncthreads twin
# numba_race.py under `kemu exec --tool racecheck`, which must report the
# race with the Python source line, while its fixed twin is clean.
# Exits 77 (automake's SKIP) when no Python at hand imports numba.cuda
# (numba-cuda from PyPI) or the CUDA toolkit's NVVM is missing.
# Environment: KEMU, top_srcdir, top_builddir, PYTHON (tried first).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_builddir=${top_builddir:-$(cd "$here/../.." && pwd)}
KEMU=${KEMU:-$top_builddir/src/kemu}
python=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$cand" -c 'import numpy, numba.cuda' >/dev/null 2>&1; then
        python=$(command -v "$cand")
        break
    fi
done
if [ -z "$python" ]; then
    echo "SKIP: no Python here imports numba.cuda (pip install numba-cuda)"
    exit 77
fi
if ! "$python" -c 'from cuda.pathfinder import load_nvidia_dynamic_lib; load_nvidia_dynamic_lib("nvvm")' >/dev/null 2>&1; then
    echo "SKIP: Numba compiles through the CUDA toolkit's NVVM (libnvvm), which is not found here"
    exit 77
fi
# in a sanitizer build, kemu's libraries are instrumented: the interpreter
# needs the sanitizer runtimes preloaded
exec_env=
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -n "$libkemu" ] && ldd "$libkemu" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$libkemu" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi
export PYTHONDONTWRITEBYTECODE=1
work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-numba-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL: $1"
    sed 's/^/    /' "$work/$1.out" | tail -n 40
    failed=$((failed + 1))
}

if $exec_env "$KEMU" exec "$python" "$here/numba_app.py" >"$work/numba_app.out" 2>&1 &&
   grep -qx 'PASS numba_app' "$work/numba_app.out"; then
    pass numba_app
else
    fail numba_app
fi

race_line=$(grep -n '# RACE' "$here/numba_race.py" | cut -d: -f1)
$exec_env "$KEMU" exec --tool racecheck "$python" "$here/numba_race.py" >"$work/numba_race.out" 2>&1
if grep -qx 'done racy' "$work/numba_race.out" && grep -q 'RAW hazard\|WAR hazard\|WAW hazard' "$work/numba_race.out" &&
   grep -q "numba_race.py:$race_line" "$work/numba_race.out"; then
    pass numba_race
else
    fail numba_race
fi
$exec_env "$KEMU" exec --tool racecheck "$python" "$here/numba_race.py" --fixed >"$work/numba_fixed.out" 2>&1
if grep -qx 'done fixed' "$work/numba_fixed.out" && grep -q 'RACECHECK SUMMARY: 0 hazards displayed' "$work/numba_fixed.out"; then
    pass numba_fixed
else
    fail numba_fixed
fi
echo "Numba tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
