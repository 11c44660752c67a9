#!/usr/bin/env bash
# Builds the libFuzzer target tests/fuzz/fuzz_ptx.c with clang, ASan and
# UBSan against the library sources listed in Makefile.am's
# libkemu_la_SOURCES, then fuzzes the PTX front end for a bounded time.
#
#   tests/fuzz/run.sh                 fuzz for FUZZ_SECONDS (default 60)
#   tests/fuzz/run.sh FILE...         run only the given inputs (reproduce)
#
# Environment: FUZZ_SECONDS, FUZZ_JOBS (parallel fuzzing processes, default
# 1), CC (default clang), FUZZ_WORKDIR (keep the build and the grown corpus
# there instead of a temporary directory), FUZZ_EXTRA_CFLAGS (e.g.
# -fno-sanitize=float-cast-overflow to step past a known bug),
# KEMU_FUZZ_NUL_TERMINATE=1 (end the text with a NUL byte, to step past
# over-reads of it; see fuzz_ptx.c), top_builddir (where config.h is).
# Exits non-zero when the fuzzer finds a crash, a sanitizer error, a hang
# (-timeout=10), a leak or an over-limit allocation (-rss_limit_mb=2048) and
# prints the reproducer. Every file in tests/fuzz/regressions/ is replayed
# first and must pass.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${top_builddir:-$top}
cc=${CC:-clang}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
fi

if [ -n "${FUZZ_WORKDIR:-}" ]; then
    work=$FUZZ_WORKDIR
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-fuzz.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi

# The library's C sources, as Makefile.am lists them (continuation lines
# joined), so the fuzzer follows the build when files are added.
sources=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$top/Makefile.am" |
          sed -n 's/^libkemu_la_SOURCES[[:space:]]*=//p' | tr -s ' \t' '\n' | grep '\.c$' || true)
if [ -z "$sources" ]; then
    echo "fuzz: no libkemu_la_SOURCES found in $top/Makefile.am" >&2
    exit 2
fi

# config.h comes from configure; a stub will do where the tree is not
# configured (the library uses it only for its version strings).
incdirs=(-I"$top/include" -I"$top/src")
if [ -f "$builddir/config.h" ]; then
    incdirs+=(-I"$builddir")
elif [ -f "$top/config.h" ]; then
    incdirs+=(-I"$top")
else
    version=$(sed -n 's/^AC_INIT(\[[^]]*\],[[:space:]]*\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
    printf '#define PACKAGE_VERSION "%s"\n#define VERSION "%s"\n' "${version:-0}" "${version:-0}" > "$work/config.h"
    incdirs+=(-I"$work")
fi

libs=(-lm -lpthread)
if command -v pkg-config >/dev/null 2>&1; then
    # shellcheck disable=SC2207
    libs+=($(pkg-config --libs libffi libzstd liblz4 2>/dev/null || echo -lffi -lzstd -llz4))
    # shellcheck disable=SC2207
    pkgcflags=($(pkg-config --cflags libffi libzstd liblz4 2>/dev/null || true))
else
    libs+=(-lffi -lzstd -llz4)
    pkgcflags=()
fi

# The library gets coverage instrumentation (fuzzer-no-link); only the
# target links libFuzzer's main.
sanitizers="address,undefined"
flags=(-std=gnu11 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all
       -Wno-unused-command-line-argument)
# after -fsanitize, so that they can switch single checks off
# shellcheck disable=SC2206 # FUZZ_EXTRA_CFLAGS is a list of flags
extra=(${FUZZ_EXTRA_CFLAGS:-})
echo "fuzz: building $work/fuzz_ptx with $cc" >&2
mkdir -p "$work/obj"
objs=()
for src in $sources; do
    objs+=("$work/obj/${src//\//_}.o")
done
# one compiler per core; xargs fails if any compile fails
# shellcheck disable=SC2016,SC2086 # one source per word; $1 and $@ are for sh -c
printf '%s\n' $sources | TOP="$top" WORK="$work" xargs -P "$(nproc)" -I{} sh -c \
    'src="$1"; shift; obj=$(printf %s "$src" | tr / _); exec "$@" -c "$TOP/$src" -o "$WORK/obj/$obj.o"' \
    sh {} "$cc" "${flags[@]}" -fsanitize="fuzzer-no-link,$sanitizers" "${extra[@]}" "${incdirs[@]}" "${pkgcflags[@]}"
"$cc" "${flags[@]}" -fsanitize="fuzzer,$sanitizers" "${extra[@]}" "${incdirs[@]}" "$here/fuzz_ptx.c" "${objs[@]}" \
    "${libs[@]}" -o "$work/fuzz_ptx"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -detect_leaks=1
        -dict="$here/ptx.dict" -print_final_stats=1)

# Reproduce mode: run only the given files.
if [ $# -gt 0 ]; then
    exec "$work/fuzz_ptx" "${common[@]}" "$@"
fi

# Known bugs first: each regression input must now load or fail cleanly.
shopt -s nullglob
regressions=("$here"/regressions/*)
failed=0
for f in "${regressions[@]}"; do
    if "$work/fuzz_ptx" "${common[@]}" "$f" >"$work/regression.log" 2>&1; then
        echo "fuzz: regression ok:   ${f#"$top"/}" >&2
    else
        grep -E 'ERROR|SUMMARY|^    #[0-9]+ .* in (kemu|ptx|bc|lex|util|mem|exec|vm|parse|lower)' "$work/regression.log" | head -n 12 >&2 || true
        echo "fuzz: regression FAIL: ${f#"$top"/}" >&2
        failed=1
    fi
done
if [ $failed -ne 0 ]; then
    echo "fuzz: regression inputs fail (reproduce with: tests/fuzz/run.sh FILE)" >&2
    exit 1
fi

# The seed corpus is copied so fuzzing never writes into the source tree.
mkdir -p "$work/corpus" "$work/artifacts"
cp "$here"/corpus/* "$work/corpus/"
parallel=()
if [ "$jobs" -gt 1 ]; then
    parallel=(-jobs="$jobs" -workers="$jobs")
fi
status=0
(cd "$work" && ./fuzz_ptx "${common[@]}" -max_len=32768 -max_total_time="$seconds" "${parallel[@]}" \
     -artifact_prefix="$work/artifacts/" corpus) >"$work/fuzz.log" 2>&1 || status=$?
# with -jobs>1 the per-job logs hold the details; the recommended
# dictionary libFuzzer prints at exit is left out
cat "$work"/fuzz.log "$work"/fuzz-*.log 2>/dev/null | grep -v -e '^"' -e '^###### ' | tail -n 60 >&2

found=("$work"/artifacts/*)
if [ $status -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
    echo "fuzz: FAILED (status $status)" >&2
    for f in "${found[@]}"; do
        echo "---- reproducer $f ($(wc -c <"$f") bytes), base64:" >&2
        base64 "$f" >&2
        echo "---- as text:" >&2
        head -c 2000 "$f" | cat -v >&2
        echo >&2
    done
    trap - EXIT
    echo "fuzz: work directory kept: $work; reproduce with: tests/fuzz/run.sh FILE" >&2
    exit 1
fi
echo "fuzz: no crash, hang or leak in ${seconds}s" >&2
