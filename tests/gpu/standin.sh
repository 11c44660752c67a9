#!/bin/sh
# make check: tests/gpu/crosscheck.sh and tests/gpu/bundle.sh against the
# libcuda stand-in (tests/cuda-standin/), so that the one script meant for a
# GPU machine is known to work before it gets there.
#  - kernels.txt has a line (run, call or skip) for every kernel of
#    tests/kernels/, samples/ and tests/e2e/cases/call-kernels/;
#  - every line of kernels.txt launches on both backends: the table has one
#    row per line, nothing differs or fails (the stand-in is the emulator);
#  - a perturbed copy back (KEMU_STANDIN_PERTURB) is a DIFFER row, exit 1,
#    with the kernel's output in TABLE.md.log;
#  - no driver library: exit 3 and kemu's one line, no table;
#  - -p: a CUDA program's row gives its verdicts on the GPU (here, without
#    one, a failure) and under kemu exec (a pass);
#  - a bundle (bundle.sh) runs the cross-check with the machine's C library
#    and with the bundled loader, and kemu exec with it.
#
# Environment: KEMU, top_srcdir, top_builddir (set by make check).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
KEMU=${KEMU:-$top_builddir/src/kemu}
standin=$top_builddir/tests/cuda-standin/.libs/libcuda.so.1
[ -x "$KEMU" ] || { echo "FAIL: $KEMU is not built"; exit 1; }
[ -f "$standin" ] || { echo "FAIL: the stand-in $standin is not built"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
xc() { # xc TABLE ARGS...: the cross-check against the stand-in, exit status in $st
    out=$1
    shift
    KEMU_CUDA_LIBRARY=$standin KEMU=${XC_KEMU:-$KEMU} sh "$top_srcdir/tests/gpu/crosscheck.sh" -o "$out" "$@" \
        > "$out.stderr" 2>&1
    st=$?
}

# ---- kernels.txt names every kernel of tests/kernels/, samples/ and the
# kemu call kernels (run, call or skip): a kernel added there without a line
# would go unchecked. A `call SPEC` line covers the spec's PTX file and kernel.
called=$tmp/called
: > "$called"
grep '^call ' "$top_srcdir/tests/gpu/kernels.txt" | while read -r _ spec _; do
    ptx=$(sed -n 's/.*"ptx": *"\([^"]*\)".*/\1/p' "$top_srcdir/$spec" | head -n 1)
    kernel=$(sed -n 's/.*"kernel": *"\([^"]*\)".*/\1/p' "$top_srcdir/$spec" | head -n 1)
    abs=$(cd "$(dirname "$top_srcdir/$spec")" && cd "$(dirname "$ptx")" && pwd)/$(basename "$ptx")
    echo "${abs#"$(cd "$top_srcdir" && pwd)"/} $kernel" >> "$called"
done
for ptx in "$top_srcdir"/tests/kernels/*.O3.ptx "$top_srcdir"/samples/*/*.ptx \
    "$top_srcdir"/tests/e2e/cases/call-kernels/call_kernels.ptx; do
    rel=${ptx#"$top_srcdir"/}
    stem=${rel%%.*}
    entries=$(sed -n 's/^\.\(visible \)\{0,1\}\.entry \([A-Za-z_][A-Za-z0-9_$]*\).*/\2/p' "$ptx")
    count=$(printf '%s\n' "$entries" | grep -c .)
    for e in $entries; do
        grep -v '^#' "$top_srcdir/tests/gpu/kernels.txt" | grep -q -e "^$stem\.[^ ]* .*--kernel $e " \
            -e "^skip $stem\.[^ ]* $e " || grep -qx "$rel $e" "$called" || {
            # a file of one kernel needs no --kernel
            [ "$count" -eq 1 ] && grep -q "^$rel " "$top_srcdir/tests/gpu/kernels.txt"
        } || fail "tests/gpu/kernels.txt has no line for $rel: $e"
    done
done

# ---- every kernel ---------------------------------------------------------
xc "$tmp/all.md"
lines=$(grep -c -v -e '^#' -e '^[[:space:]]*$' "$top_srcdir/tests/gpu/kernels.txt")
rows=$(grep -c '^| [a-z]*/' "$tmp/all.md" 2>/dev/null || echo 0)
if [ "$st" -ne 0 ]; then
    fail "crosscheck over every kernel exited $st"
    cat "$tmp/all.md.stderr"
    [ -f "$tmp/all.md.log" ] && cat "$tmp/all.md.log"
fi
[ "$rows" -eq "$lines" ] || fail "the table has $rows rows for $lines lines of kernels.txt"
grep -q '^- GPU: kemu stand-in sm_90 (CUDA device 0)$' "$tmp/all.md" || fail "no GPU line in the table"
grep -q "^- $lines of $lines kernels in [0-9]* s: [0-9]* agree, 0 differ, [0-9]* order-dependent, 0 failed, 0 unavailable, [0-9]* skipped$" \
    "$tmp/all.md" || fail "the counts line: $(grep '^- [0-9]* of [0-9]* kernels' "$tmp/all.md")"
# every line not marked skip or order-dependent agrees (a kernel marked
# order-dependent may agree too), every line not marked skip runs
unmarked=$(grep -v -e '^#' -e '^[[:space:]]*$' -e '^skip ' -e ' # order:' "$top_srcdir/tests/gpu/kernels.txt" | grep -c .)
runs=$(grep -v -e '^#' -e '^[[:space:]]*$' -e '^skip ' "$top_srcdir/tests/gpu/kernels.txt" | grep -c .)
agree=$(grep -c '| agree |' "$tmp/all.md")
order=$(grep -c '| order-dependent:' "$tmp/all.md")
[ "$agree" -ge "$unmarked" ] || fail "$agree rows agree, at least $unmarked expected"
[ $((agree + order)) -eq "$runs" ] || fail "$agree rows agree and $order are order-dependent, of $runs run"
grep -q '^| samples/saxpy/saxpy.ptx:saxpy | y.npy f32\[1000\] | 0 | agree | [0-9.]* | [0-9.]* |$' "$tmp/all.md" ||
    fail "no saxpy row: $(grep saxpy "$tmp/all.md")"
grep -q '^| tests/kernels/texture.sm_80.O3.ptx:tex1d_fetch | - | - | skipped: ' "$tmp/all.md" ||
    fail "no skipped row for tex1d_fetch"
# kemu call lines: smem scratch through the wrapper entry on the "GPU"
grep -q '^| samples/call/call.json:reverse_scale | ./y.npy f32\[1024\] | 0 | agree | [0-9.]* | [0-9.]* |$' "$tmp/all.md" ||
    fail "no call row for reverse_scale: $(grep reverse_scale "$tmp/all.md")"
grep -q '^| tests/e2e/cases/call-scratch-u32/spec.json:scratch_u32 | ./y.npy i32\[256\] | - | agree |' "$tmp/all.md" ||
    fail "no call row for scratch_u32: $(grep scratch_u32 "$tmp/all.md")"

grep -q 'incomplete' "$tmp/all.md" && fail "a finished table is marked incomplete"

# ---- -J: kernels at a time, the same rows in the same order ------------------
xc "$tmp/par.md" -J 4
[ "$st" -eq 0 ] || fail "crosscheck -J 4 exited $st"
# the rows without their time columns
untimed() { grep '^| [a-z]*/' "$1" | sed 's/ [0-9.-]* | [0-9.-]* |$//'; }
untimed "$tmp/all.md" > "$tmp/all.rows"
untimed "$tmp/par.md" > "$tmp/par.rows"
cut -d '|' -f 2 "$tmp/all.rows" > "$tmp/all.names"
cut -d '|' -f 2 "$tmp/par.rows" | cmp -s - "$tmp/all.names" || fail "-J 4 rows are not in kernels.txt's order"
# an order-dependent kernel may agree in one run and not in the other
grep -h 'order-dependent:' "$tmp/all.rows" "$tmp/par.rows" | cut -d '|' -f 2 | sort -u > "$tmp/order.names"
grep -v -F -f "$tmp/order.names" "$tmp/all.rows" > "$tmp/all.fixed"
grep -v -F -f "$tmp/order.names" "$tmp/par.rows" | cmp -s - "$tmp/all.fixed" ||
    fail "-J 4 rows differ from -J 1: $(grep -v -F -f "$tmp/order.names" "$tmp/par.rows" | diff "$tmp/all.fixed" - | head -5)"
grep -q '^- 4 kernels at a time: the time columns include waiting for the others$' "$tmp/par.md" ||
    fail "-J 4: the table does not say 4 kernels ran at a time"
grep -q "^- $lines of $lines kernels in " "$tmp/par.md" || fail "-J 4: the counts line"
KEMU=$KEMU sh "$top_srcdir/tests/gpu/crosscheck.sh" -o "$tmp/bad.md" -J 0 > "$tmp/bad.stderr" 2>&1
[ $? -eq 2 ] && grep -q -- '-J takes a number' "$tmp/bad.stderr" || fail "-J 0 is not refused: $(cat "$tmp/bad.stderr")"

# ---- a run stopped part-way leaves the rows it finished, marked incomplete ---
KEMU_CUDA_LIBRARY=$standin KEMU=$KEMU sh "$top_srcdir/tests/gpu/crosscheck.sh" -o "$tmp/stop.md" \
    > "$tmp/stop.stderr" 2>&1 &
xc_pid=$!
tries=0
finished() { n=$(grep -c '^| [a-z]*/' "$tmp/stop.md" 2>/dev/null); echo "${n:-0}"; }
while [ "$(finished)" -lt 3 ] && [ "$tries" -lt 600 ]; do
    sleep 0.1
    tries=$((tries + 1))
done
kill -KILL "$xc_pid" 2>/dev/null
wait "$xc_pid" 2>/dev/null
done_rows=$(finished)
if [ "$done_rows" -ge "$lines" ]; then
    echo "SKIP part: the cross-check finished before it could be stopped"
else
    grep -q "^- \*\*incomplete\*\*: written while the cross-check ran ($done_rows of $lines kernels done)" "$tmp/stop.md" ||
        fail "a stopped run's table: $(head -n 4 "$tmp/stop.md")"
    grep -q "^- $done_rows of $lines kernels in " "$tmp/stop.md" || fail "a stopped run's counts line"
    head -n "$done_rows" "$tmp/all.rows" > "$tmp/first.rows"
    untimed "$tmp/stop.md" | cmp -s - "$tmp/first.rows" || fail "a stopped run's rows are not the first $done_rows"
fi

# ---- one element differs ----------------------------------------------------
KEMU_STANDIN_PERTURB=0 xc "$tmp/perturb.md" -k samples/saxpy/ -s "$tmp/kept"
[ "$st" -eq 1 ] || fail "a perturbed output: crosscheck exited $st, not 1"
grep -q '^| samples/saxpy/saxpy.ptx:saxpy | y.npy f32\[1000\] (1 differ) | [1-9][0-9]* | \*\*DIFFER\*\* |' "$tmp/perturb.md" ||
    fail "no DIFFER row: $(grep saxpy "$tmp/perturb.md")"
grep -q '^- 1 of 1 kernels in [0-9]* s: 0 agree, 1 differ,' "$tmp/perturb.md" || fail "the perturbed counts line"
grep -q 'first at \[0\]' "$tmp/perturb.md.log" 2>/dev/null || fail "the log lacks the kernel's comparison line"
# -s keeps both backends' outputs of the kernel that differed
[ -f "$tmp/kept/1-saxpy/y.npy" ] && [ -f "$tmp/kept/1-saxpy/y.cuda.npy" ] &&
    grep -q 'first at \[0\]' "$tmp/kept/1-saxpy/output.txt" || fail "-s kept: $(ls -R "$tmp/kept" 2>&1)"
"$KEMU" compare "$tmp/kept/1-saxpy/y.npy" "$tmp/kept/1-saxpy/y.cuda.npy" > /dev/null 2>&1 &&
    fail "-s: the kept outputs do not differ"

# ---- no driver library --------------------------------------------------------
KEMU_CUDA_LIBRARY=$tmp/none/libcuda.so.1 KEMU=$KEMU sh "$top_srcdir/tests/gpu/crosscheck.sh" -o "$tmp/none.md" \
    > "$tmp/none.stderr" 2>&1
st=$?
[ "$st" -eq 3 ] || fail "without a driver library crosscheck exited $st, not 3"
grep -q 'cuda backend unavailable: ' "$tmp/none.stderr" || fail "no unavailable line: $(cat "$tmp/none.stderr")"
[ ! -e "$tmp/none.md" ] || fail "a table was written without a GPU"

# ---- the CUDA programs (-p) -------------------------------------------------
# natively they need a GPU: here they fail (or pass, on a machine with one);
# under kemu exec they pass; the table has a row per run with both verdicts
# (elementwise_threads1 selects it and the other runs of its program)
KEMU_CUDA_TESTS=elementwise_threads1 xc "$tmp/programs.md" -k samples/saxpy/ -p
if grep -q '^CUDA programs (tests/cuda/): not run, nvcc not found$' "$tmp/programs.md"; then
    echo "SKIP part: nvcc not found, crosscheck -p runs no CUDA programs"
else
    grep -q '^## CUDA programs (tests/cuda/)$' "$tmp/programs.md" || fail "-p: no CUDA programs table"
    runs=$(sed -n 's/^- \([0-9]*\) runs in [0-9]* s: .*/\1/p' "$tmp/programs.md")
    prow=$(sed -n '/^## CUDA programs/,$p' "$tmp/programs.md" | grep -v '^| program |' | grep -c '^| [a-z0-9_]* | ')
    [ -n "$runs" ] && [ "$runs" -eq "$prow" ] && [ "$prow" -ge 2 ] ||
        fail "-p: $prow rows; the counts line: $(grep '^- [0-9]* runs' "$tmp/programs.md")"
    grep -q -e '^| elementwise | PASS | PASS | agree |$' -e '^| elementwise | FAIL: [^|]* | PASS | \*\*the GPU fails\*\* |$' \
        "$tmp/programs.md" || fail "-p: the elementwise row: $(grep '^| elementwise ' "$tmp/programs.md")"
    grep -q '^| elementwise_threads1 | SKIP (kemu exec --threads 1) | PASS | kemu only |$' "$tmp/programs.md" ||
        fail "-p: the elementwise_threads1 row: $(grep '^| elementwise_threads1 ' "$tmp/programs.md")"
    if grep -q '^| elementwise | PASS | PASS | agree |$' "$tmp/programs.md"; then
        [ "$st" -eq 0 ] || fail "-p: everything agrees, yet crosscheck exited $st"
    else
        [ "$st" -eq 1 ] || fail "-p: a program fails on the GPU, yet crosscheck exited $st"
        grep -q '^==== tests/cuda/run.sh on the GPU' "$tmp/programs.md.log" 2>/dev/null ||
            fail "-p: the log lacks the programs' output"
    fi
fi

# ---- a bundle ---------------------------------------------------------------
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -z "$libkemu" ] || ! command -v ldd >/dev/null 2>&1; then
    echo "SKIP part: no shared libkemu or no ldd, the bundle is not tested"
elif ldd "$libkemu" | grep -q -e libasan -e libubsan; then
    echo "SKIP part: a sanitizer build, the bundle is not tested"
else
    if ! top_builddir=$top_builddir sh "$top_srcdir/tests/gpu/bundle.sh" "$tmp/bundle" > "$tmp/bundle.out" 2>&1; then
        fail "bundle.sh failed: $(cat "$tmp/bundle.out")"
    else
        for f in bin/kemu lib/libkemu.so.0 lib/libffi.so.8 kemu; do
            [ -f "$tmp/bundle/$f" ] || fail "the bundle lacks $f"
        done
        ls "$tmp/bundle/glibc"/ld-linux* > /dev/null 2>&1 || fail "the bundle lacks the loader"
        for mode in system bundled; do
            v=$(KEMU_BUNDLE_LOADER=$mode "$tmp/bundle/kemu" --version 2>&1)
            [ "$v" = "$("$KEMU" --version)" ] || fail "bundle ($mode): --version said: $v"
            KEMU_BUNDLE_LOADER=$mode XC_KEMU=$tmp/bundle/kemu xc "$tmp/b-$mode.md" -k samples/
            [ "$st" -eq 0 ] || { fail "bundle ($mode): crosscheck exited $st"; cat "$tmp/b-$mode.md.stderr"; }
            grep -q '^- 6 of 6 kernels in [0-9]* s: 6 agree, 0 differ,' "$tmp/b-$mode.md" 2>/dev/null ||
                fail "bundle ($mode): the counts line"
            grep -q "^- kemu: .*, revision $(cat "$tmp/bundle/REVISION")\$" "$tmp/b-$mode.md" 2>/dev/null ||
                fail "bundle ($mode): the table does not give the bundle's revision"
            # kemu exec finds kemu's libcudart in the bundle (lib/kemu/)
            if command -v "${NVCC:-nvcc}" > /dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
                KEMU_BUNDLE_LOADER=$mode KEMU=$tmp/bundle/kemu KEMU_CUDA_TESTS=elementwise_raw \
                    sh "$top_srcdir/tests/cuda/run.sh" > "$tmp/b-$mode.exec" 2>&1 &&
                    grep -q '^PASS: elementwise_raw$' "$tmp/b-$mode.exec" ||
                    fail "bundle ($mode): kemu exec: $(tail -n 5 "$tmp/b-$mode.exec")"
            fi
        done
    fi
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "PASS: crosscheck.sh over $lines kernels against the stand-in; perturbed, no-driver and bundle runs"
