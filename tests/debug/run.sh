#!/bin/sh
# The debugger's tests: scripted `kemu debug` sessions (cases/NAME.gdb run
# on the command line in cases/NAME.args) compared with their golden
# transcripts (cases/NAME.expect), the instruction trace and its filters,
# a whole Debug Adapter Protocol session (dap_session.py) and the source
# variables of an nvcc -G kernel over it (dap_locals.py), pause and
# setVariable (dap_pause.py), and, where nvcc
# can build a CUDA program, `kemu debug exec` and `kemu exec --trace=FILE`.
# KEMU_DEBUG_REGEN=1 rewrites the transcripts (read the diff before
# committing it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
KEMU=${KEMU:-$top_builddir/src/kemu}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cd "$here" || exit 1

normalize() {
    sed -e "s|$tmp|TMP|g" -e 's/, [0-9.]* s, /, T s, /' "$1"
}

for gdb in cases/*.gdb; do
    name=$(basename "$gdb" .gdb)
    args=$(sed "s|@TMP@|$tmp|g" "cases/$name.args")
    # shellcheck disable=SC2086
    "$KEMU" debug -batch -x "$gdb" $args >"$tmp/$name.out" 2>&1
    echo "[exit status $?]" >>"$tmp/$name.out"
    normalize "$tmp/$name.out" >"$tmp/$name.got"
    if [ "${KEMU_DEBUG_REGEN:-0}" = 1 ]; then
        cp "$tmp/$name.got" "cases/$name.expect"
    elif diff -u "cases/$name.expect" "$tmp/$name.got" >"$tmp/$name.diff"; then
        echo "ok: debug session $name"
    else
        echo "FAIL: debug session $name differs from cases/$name.expect:"
        cat "$tmp/$name.diff"
        fail=1
    fi
done

# --trace: one line per warp-instruction, filtered by block, warp and line
trace_check() {
    what=$1
    shift
    if "$@"; then echo "ok: trace $what"; else echo "FAIL: trace $what"; fail=1; fi
}
"$KEMU" run dbg.ptx --kernel reduce --grid 2 --block 64 --trace "$tmp/all.trace" -- \
    in:arange:f32:128 out:"$tmp/o.npy":f32:2 s32:64 >/dev/null 2>&1
"$KEMU" run dbg.ptx --kernel reduce --grid 2 --block 64 --trace "$tmp/f.trace" --trace-block 1 --trace-warp 1 \
    --trace-lines 27-28 -- in:arange:f32:128 out:"$tmp/o.npy":f32:2 s32:64 >/dev/null 2>&1
all=$(wc -l <"$tmp/all.trace")
warp_insns=$("$KEMU" run dbg.ptx --kernel reduce --grid 2 --block 64 --json -- in:arange:f32:128 \
    out:"$tmp/o.npy":f32:2 s32:64 2>/dev/null | sed -n 's/.*"warp_instructions": *\([0-9]*\).*/\1/p')
trace_check "has a line per warp-instruction ($all, --json says $warp_insns)" [ "$all" = "$warp_insns" ]
trace_check "lines name block, warp, mask, pc, source, PTX and values" \
    grep -q '^block (0,0,0) warp 0 mask ffffffff reduce pc 0 dbg.ptx:[0-9]* dbg.cu:20 | ld.param.u64 .* | %rd[0-9]*=0x' \
    "$tmp/all.trace"
trace_check "filters keep only block (1,0,0) warp 1 lines 27-28" \
    sh -c "[ -s '$tmp/f.trace' ] && ! grep -v '^block (1,0,0) warp 1 .* dbg.cu:2[78] |' '$tmp/f.trace'"
trace_check "per-lane values where lanes differ" grep -q '%f[0-9]*=\[.* .*\]' "$tmp/all.trace"
"$KEMU" run dbg.ptx --kernel reduce --block 64 --trace "$tmp/x.trace" --trace-warp 40 -- in:arange:f32:64 \
    out:"$tmp/o.npy":f32:1 s32:64 >"$tmp/bad.out" 2>&1
trace_check "a bad filter is a usage error" sh -c "[ $? = 2 ] && grep -q 'trace-warp wants' '$tmp/bad.out'"

cp dbg.ptx "$tmp/keep.ptx"
"$KEMU" run "$tmp/keep.ptx" --kernel reduce --block 64 --trace "$tmp/keep.ptx" -- in:arange:f32:64 \
    out:"$tmp/o.npy":f32:1 s32:64 >"$tmp/bad.out" 2>&1
trace_check "never overwrites the module (exit 2)" sh -c "[ $? = 2 ] && grep -q 'would overwrite' '$tmp/bad.out' &&
    cmp -s dbg.ptx '$tmp/keep.ptx'"

# Ctrl-C (SIGINT) stops a kernel that runs forever, at its next instruction
mkfifo "$tmp/in"
: >"$tmp/int.out"
"$KEMU" debug run spin.ptx --block 32 -- in:zeros:i32:1 out:"$tmp/count.npy":i32:32 <"$tmp/in" >"$tmp/int.out" 2>&1 &
pid=$!
exec 3>"$tmp/in"
printf 'run\n' >&3
waited=0
until grep -q 'Launch of CUDA Kernel' "$tmp/int.out" || [ $waited -ge 300 ]; do sleep 0.1; waited=$((waited + 1)); done
sleep 0.5
kill -INT $pid
waited=0
until grep -q 'SIGINT' "$tmp/int.out" || [ $waited -ge 300 ]; do sleep 0.1; waited=$((waited + 1)); done
printf 'p *(int *)spin_param_0\ninfo cuda warps\nkill\nquit\n' >&3
exec 3>&-
wait $pid
st=$?
if [ $st = 0 ] && grep -q '^Program received signal SIGINT, Interrupt.' "$tmp/int.out" && grep -q '\$1 = 0' "$tmp/int.out" &&
    grep -q '^\*  0 0xffffffff  0xffffffff .* spin.cu:[67] ' "$tmp/int.out" &&
    grep -q 'killed' "$tmp/int.out"; then
    echo "ok: Ctrl-C stops a running kernel"
else
    echo "FAIL: Ctrl-C (status $st):"
    cat "$tmp/int.out"
    fail=1
fi

# the Debug Adapter Protocol, as an editor speaks it
if command -v python3 >/dev/null 2>&1; then
    if python3 dap_session.py "$KEMU" dbg.ptx "$tmp"; then :; else fail=1; fi
    if python3 dap_locals.py "$KEMU" dwarf.ptx "$tmp"; then :; else fail=1; fi
    if python3 dap_pause.py "$KEMU" spin.ptx "$tmp"; then :; else fail=1; fi
else
    echo "SKIP: python3 not found; the DAP session needs it"
fi

# kemu debug python: a Python program's launches through the kemu package
py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import numpy' 2>/dev/null; then
        py=$cand
        break
    fi
done
lib=$top_builddir/.libs/libkemu.so.0
if [ -n "$py" ] && [ -f "$lib" ] && ! ldd "$lib" 2>/dev/null | grep -q libasan; then
    printf 'break dbg.cu:16 if threadIdx.x == 9\nrun\np threadIdx.x\np %%f3\nstepi\nreverse-stepi\np %%f3\ncontinue\n' >"$tmp/py.gdb"
    PYTHON=$py KEMU_LIBRARY=$lib PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1 \
        "$KEMU" debug -batch -x "$tmp/py.gdb" python py_saxpy.py >"$tmp/py.out" 2>&1
    st=$?
    if [ $st = 0 ] && grep -q '^Breakpoint 1, saxpy at dbg.cu:16' "$tmp/py.out" && grep -q '^\$1 = 9$' "$tmp/py.out" &&
        grep -q '^\$2 = 19$' "$tmp/py.out" && grep -q '^\$3 = 19$' "$tmp/py.out" && grep -q 'py_saxpy: PASS' "$tmp/py.out" &&
        grep -q 'Inferior 1 (python) exited normally' "$tmp/py.out"; then
        echo "ok: kemu debug python"
    else
        echo "FAIL: kemu debug python (status $st):"
        cat "$tmp/py.out"
        fail=1
    fi
else
    echo "SKIP: kemu debug python (no Python 3 with numpy, or a sanitizer build)"
fi

# kemu debug exec and kemu exec --trace=FILE on a CUDA program (needs nvcc);
# in a sanitizer build, the program needs the sanitizer runtimes preloaded
# for kemu's instrumented libcudart
exec_env=
preload=
if [ -f "$lib" ] && ldd "$lib" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$lib" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || true)}
if [ -n "$NVCC" ] && "$NVCC" -cudart shared -arch=sm_80 -lineinfo -o "$tmp/app" app.cu dbg.cu -rdc=true \
    >"$tmp/nvcc.out" 2>&1; then
    printf 'break dbg.cu:16 if threadIdx.x == 5\nrun\np threadIdx.x\np %%f3\ncontinue\n' >"$tmp/exec.gdb"
    $exec_env "$KEMU" debug -batch -x "$tmp/exec.gdb" exec "$tmp/app" >"$tmp/exec.out" 2>&1
    st=$?
    if [ $st = 0 ] && grep -q '^Breakpoint 1, saxpy at dbg.cu:16' "$tmp/exec.out" && grep -q '^\$1 = 5$' "$tmp/exec.out" &&
        grep -q 'app: PASS' "$tmp/exec.out"; then
        echo "ok: kemu debug exec"
    else
        echo "FAIL: kemu debug exec (status $st):"
        cat "$tmp/exec.out"
        fail=1
    fi
    # going back inside a launch of a program that cannot be run again:
    # the launch is replayed from a snapshot of device memory (the program's
    # PASS shows the replays left memory as one run would)
    printf '%s\n' 'break dbg.cu:16 if threadIdx.x == 5' run stepi stepi 'p $pc' reverse-stepi 'p $pc' \
        'watch ((float *)saxpy_param_3)[5]' continue 'info last-writer ((float *)saxpy_param_3)[5]' \
        reverse-continue 'p $pc' 'p threadIdx.x' 'set var %f3 = 11' reverse-stepi delete continue >"$tmp/rev.gdb"
    $exec_env "$KEMU" debug -batch -x "$tmp/rev.gdb" exec "$tmp/app" >"$tmp/rev.out" 2>&1
    st=$?
    if [ $st = 0 ] && grep -q '^\$1 = 24$' "$tmp/rev.out" && grep -q '^\$2 = 23$' "$tmp/rev.out" &&
        grep -q '^New value = 12$' "$tmp/rev.out" && grep -q '^last writer of 4 bytes .* thread (5,0,0) .* dbg.cu:16' "$tmp/rev.out" &&
        grep -q '^\$3 = 22$' "$tmp/rev.out" && grep -q '^\$4 = 5$' "$tmp/rev.out" &&
        grep -q 'Target cannot go back: set var changed' "$tmp/rev.out" && grep -q 'app: PASS' "$tmp/rev.out"; then
        echo "ok: kemu debug exec goes back inside a launch"
    else
        echo "FAIL: going back under kemu debug exec (status $st):"
        cat "$tmp/rev.out"
        fail=1
    fi
    # ... and the checkers forget what the abandoned run found: one race
    if "$NVCC" -cudart shared -arch=sm_80 -lineinfo -o "$tmp/race_app" race_app.cu dbg.cu -rdc=true \
        >"$tmp/nvcc.out" 2>&1; then
        printf '%s\n' 'break on race' run reverse-stepi continue continue >"$tmp/race.gdb"
        $exec_env "$KEMU" debug -batch -x "$tmp/race.gdb" exec --tool racecheck "$tmp/race_app" >"$tmp/race.out" 2>&1
        st=$?
        if [ $st = 0 ] && [ "$(grep -c 'racecheck found a new race at racy at dbg.cu:42' "$tmp/race.out")" = 2 ] &&
            grep -q 'RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)' "$tmp/race.out" &&
            grep -q 'race_app: ran' "$tmp/race.out"; then
            echo "ok: going back from a race under kemu debug exec reports it once"
        else
            echo "FAIL: going back from a race under kemu debug exec (status $st):"
            cat "$tmp/race.out"
            fail=1
        fi
    fi
    # an editor attached over TCP to the program under kemu exec --dap
    if command -v python3 >/dev/null 2>&1; then
        if KEMU_CHILD_PRELOAD=${preload:-} python3 dap_attach.py "$KEMU" "$tmp/app" "$tmp"; then :; else fail=1; fi
    fi
    printf 'break dbg.cu:16\nrun\nkill\n' >"$tmp/kill.gdb"
    $exec_env "$KEMU" debug -batch -x "$tmp/kill.gdb" exec "$tmp/app" >"$tmp/kill.out" 2>&1
    st=$?
    if [ $st = 137 ] && grep -q 'killed' "$tmp/kill.out" && ! grep -q 'app: PASS' "$tmp/kill.out"; then
        echo "ok: kill ends a kemu exec program"
    else
        echo "FAIL: kill under kemu debug exec (status $st):"
        cat "$tmp/kill.out"
        fail=1
    fi
    $exec_env "$KEMU" exec --trace="$tmp/exec.trace" --trace-warp 1 "$tmp/app" >/dev/null 2>&1
    if grep -q '^block (0,0,0) warp 1 mask' "$tmp/exec.trace" && ! grep -q ' warp 0 ' "$tmp/exec.trace"; then
        echo "ok: kemu exec --trace=FILE"
    else
        echo "FAIL: kemu exec --trace=FILE"
        head -5 "$tmp/exec.trace"
        fail=1
    fi
else
    echo "SKIP: kemu debug exec (nvcc cannot build the test program here)"
fi
exit $fail
