#!/bin/sh
# make check: every fuzz target of tests/fuzz/, built with the ordinary
# compiler and replay.c as its main (tests/fuzz/replay_*), replays its seed
# corpus and its reproducers; a crash, a trap or (in the sanitizer build) a
# sanitizer report fails the test. Fuzzing itself is tests/fuzz/run.sh.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
src=$(cd "$top_srcdir" && pwd)
build=$(cd "$top_builddir" && pwd)
fuzz=$src/tests/fuzz
work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-replay.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# fuzz_call finds its two modules by file name in FUZZ_CALL_PTX_DIR, and
# its seeds name them by file name (as run.sh rewrites them)
mkdir -p "$work/call-ptx" "$work/call-seeds"
cp "$src/samples/call/reverse_scale.ptx" "$src/tests/e2e/cases/call-kernels/call_kernels.ptx" "$work/call-ptx/"
n=0
for f in "$src"/samples/call/*.json "$src"/samples/call/limits/*.json "$src"/tests/e2e/cases/call-*/*.json; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    sed 's|"ptx": *"[^"]*/\([^"/]*\)"|"ptx": "\1"|' "$f" > "$work/call-seeds/seed-$n.json"
done
export FUZZ_CALL_PTX_DIR="$work/call-ptx"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1"

status=0
replay() { # target input...
    t=$1
    shift
    if "$build/tests/fuzz/replay_$t" "$@" > "$work/$t.log" 2>&1; then
        echo "fuzz replay: $t: $(tail -n 1 "$work/$t.log")"
    else
        echo "FAIL: fuzz replay: $t (exit $?); the last lines:"
        tail -n 30 "$work/$t.log" | sed 's/^/    | /'
        status=1
    fi
}
replay ptx "$fuzz/corpus" "$fuzz/regressions"
replay npy "$src/tests/fixtures/npy" "$fuzz/regressions-npy"
replay fatbin "$src/tests/fixtures/fatbin" "$fuzz/regressions-fatbin"
replay call "$work/call-seeds" "$fuzz/regressions-call"
replay launch "$fuzz/corpus-launch" "$fuzz/regressions-launch"
replay run "$fuzz/corpus-run" "$fuzz/regressions-run"
exit $status
