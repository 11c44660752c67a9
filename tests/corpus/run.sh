#!/bin/sh
# The corpus of issue #19 (tests/corpus/corpus.list): builds each program
# with nvcc as the survey of public CUDA programs built them, runs it under
# `kemu exec` and reports pass or fail per program and pattern. A program
# passes when it exits 0, prints a PASS line and no FAIL, and its output
# (with --dump-ptx's PTX, for patterns that are about the PTX) holds the
# line's extra check. Exits 77 (SKIP) without nvcc.
#
# Environment: KEMU, NVCC, top_srcdir, KEMU_CORPUS (names to run only
# those), KEMU_KEEP=1 (keep the build directory).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
KEMU=${KEMU:-$top_builddir/src/kemu}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || true)}
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ] || ! "$NVCC" --version >/dev/null 2>&1; then
    echo "SKIP: nvcc not found; the corpus needs it"
    exit 77
fi
# in a sanitizer build, the program needs the sanitizer runtimes preloaded
# for kemu's instrumented libcudart (as tests/cuda/run.sh does)
exec_env=
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -n "$libkemu" ] && ldd "$libkemu" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$libkemu" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi
work=$(mktemp -d)
[ "${KEMU_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
pass=0 failed=0
trim() { printf '%s' "$1" | sed -e 's/^ *//' -e 's/ *$//'; }
while IFS='|' read -r name pattern sources flags check; do
    name=$(trim "$name")
    case $name in '' | '#'*) continue ;; esac
    if [ -n "${KEMU_CORPUS:-}" ]; then
        case " $KEMU_CORPUS " in *" $name "*) ;; *) continue ;; esac
    fi
    pattern=$(trim "$pattern")
    check=$(trim "$check")
    case $flags in *-lcublas*)
        if [ ! -f "${KEMU_CUDART_DIR:-$top_builddir/lib/kemu}/libcublas.so.13" ]; then
            echo "SKIP: corpus $name ($pattern): kemu's libcublas was not built (no OpenBLAS)"
            continue
        fi ;;
    esac
    srcs=
    for s in $sources; do srcs="$srcs $top_srcdir/$s"; done
    # shellcheck disable=SC2086
    if ! "$NVCC" -O2 -cudart shared -arch=sm_80 $(trim "$flags") -o "$work/$name" $srcs \
        >"$work/$name.build" 2>&1; then
        echo "FAIL: corpus $name ($pattern): nvcc could not build it:"
        sed 's/^/    /' "$work/$name.build" | head -20
        failed=$((failed + 1))
        continue
    fi
    mkdir -p "$work/$name.ptx"
    # shellcheck disable=SC2086
    timeout 600 $exec_env "$KEMU" exec --dump-ptx "$work/$name.ptx" "$work/$name" >"$work/$name.out" 2>&1
    st=$?
    cat "$work/$name.ptx"/*.ptx >"$work/$name.allptx" 2>/dev/null
    problem=
    if [ $st != 0 ]; then
        problem="exit status $st"
    elif ! grep -qw PASS "$work/$name.out" || grep -qw FAIL "$work/$name.out"; then
        problem="no PASS line (or a FAIL)"
    elif [ -n "$check" ] && ! grep -qE -- "$check" "$work/$name.out" "$work/$name.allptx"; then
        problem="neither its output nor its PTX holds /$check/"
    fi
    if [ -z "$problem" ]; then
        echo "PASS: corpus $name ($pattern)"
        pass=$((pass + 1))
    else
        echo "FAIL: corpus $name ($pattern): $problem"
        sed 's/^/    /' "$work/$name.out" | tail -20
        failed=$((failed + 1))
    fi
done <"$here/corpus.list"
echo "corpus: $pass passed, $failed failed"
[ $failed = 0 ]
