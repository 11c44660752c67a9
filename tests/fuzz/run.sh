#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan
# against the library sources listed in Makefile.am's libkemu_la_SOURCES,
# then fuzzes each for a bounded time:
#   ptx     fuzz_ptx.c: the PTX front end (lexer, parser, layout, lowering);
#           seeds tests/fuzz/corpus/, reproducers tests/fuzz/regressions/
#   npy     fuzz_npy.c: the .npy reader; seeds tests/fixtures/npy/,
#           reproducers tests/fuzz/regressions-npy/
#   fatbin  fuzz_fatbin.c: the CUDA fatbinary reader and its zstd/LZ4
#           decompression; seeds tests/fixtures/fatbin/, reproducers
#           tests/fuzz/regressions-fatbin/
#   call    fuzz_call.c: `kemu call`'s JSON spec reader and kemu_call_run's
#           checks and launch (needs jansson); seeds the specs of
#           samples/call/ and tests/e2e/cases/call-*/, reproducers
#           tests/fuzz/regressions-call/
#   launch  fuzz_launch.c: PTX loaded and launched (small grids, a step
#           limit, checkers chosen by the input); seeds
#           tests/fuzz/corpus-launch/, reproducers tests/fuzz/regressions-launch/
#   run     fuzz_run.c: `kemu run` argument lists over a fixed module
#           (the kemu command's own sources, needs jansson); seeds
#           tests/fuzz/corpus-run/, reproducers tests/fuzz/regressions-run/
#
#   tests/fuzz/run.sh                 fuzz each target for FUZZ_SECONDS (default 60)
#   tests/fuzz/run.sh FILE...         run only the given inputs (reproduce); the
#                                     target is the one FUZZ_TARGETS names, else
#                                     the one whose regressions folder holds FILE,
#                                     else ptx
#
# Environment: FUZZ_TARGETS (default "ptx npy fatbin call launch run"), FUZZ_SECONDS (per
# target), FUZZ_JOBS (parallel fuzzing processes, default 1), CC (default
# clang), FUZZ_WORKDIR (keep the builds and the grown corpora there instead of
# a temporary directory), FUZZ_EXTRA_CFLAGS (e.g.
# -fno-sanitize=float-cast-overflow to step past a known bug),
# KEMU_FUZZ_NUL_TERMINATE=1 (end the PTX text with a NUL byte, to step past
# over-reads of it; see fuzz_ptx.c), top_builddir (where config.h is).
# Exits non-zero when a fuzzer finds a crash, a sanitizer error, a hang
# (-timeout=10), a leak or an over-limit allocation (-rss_limit_mb=2048) and
# prints the reproducer. Every reproducer of a target's regressions folder is
# replayed before it is fuzzed and must pass.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=${top_builddir:-$top}
cc=${CC:-clang}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
targets=${FUZZ_TARGETS:-ptx npy fatbin call launch run}
for t in $targets; do
    case $t in ptx | npy | fatbin | call | launch | run) ;;
    *) echo "fuzz: unknown target '$t' (ptx, npy, fatbin, call, launch, run)" >&2; exit 2 ;;
    esac
done

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
# the kemu command's sources for the run target, its main.c replaced by
# cli_main.c (the same file with main renamed)
cli_sources=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$top/Makefile.am" |
              sed -n 's/^src_kemu_SOURCES[[:space:]]*=//p' | tr -s ' \t' '\n' | grep '\.c$' | grep -v '^src/cli/main\.c$' || true)

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
    # shellcheck disable=SC2207
    jansson_libs=($(pkg-config --libs jansson 2>/dev/null || echo -ljansson))
    # shellcheck disable=SC2207
    jansson_cflags=($(pkg-config --cflags jansson 2>/dev/null || true))
else
    libs+=(-lffi -lzstd -llz4)
    pkgcflags=()
    jansson_libs=(-ljansson)
    jansson_cflags=()
fi

# libkemu itself uses jansson (the debugger's DAP server), so every target
# links it, and the library's sources see its headers.
libs+=("${jansson_libs[@]}")
pkgcflags+=("${jansson_cflags[@]}")

# The library gets coverage instrumentation (fuzzer-no-link); only the
# target links libFuzzer's main.
sanitizers="address,undefined"
flags=(-std=gnu11 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all
       -Wno-unused-command-line-argument)
# after -fsanitize, so that they can switch single checks off
# shellcheck disable=SC2206 # FUZZ_EXTRA_CFLAGS is a list of flags
extra=(${FUZZ_EXTRA_CFLAGS:-})
echo "fuzz: building the library for $targets with $cc" >&2
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
for t in $targets; do
    # the call target also takes the kemu program's spec reader, and jansson
    more=()
    [ "$t" = call ] && more=("$top/src/call/spec.c")
    if [ "$t" = run ]; then
        more=("$here/cli_main.c" -DFUZZ_RUN_PTX="\"$here/fuzz_run.ptx\"")
        for src in $cli_sources; do more+=("$top/$src"); done
        # kemu debug's prompt uses libedit where configure found it
        # shellcheck disable=SC2207
        grep -q 'HAVE_LIBEDIT 1' "${incdirs[2]#-I}/config.h" 2>/dev/null && more+=($(pkg-config --libs libedit 2>/dev/null || echo -ledit))
    fi
    "$cc" "${flags[@]}" -fsanitize="fuzzer,$sanitizers" "${extra[@]}" "${incdirs[@]}" "${pkgcflags[@]}" \
        "$here/fuzz_$t.c" "${more[@]}" "${objs[@]}" "${libs[@]}" -o "$work/fuzz_$t"
done
# the modules fuzz_call runs the specs with
mkdir -p "$work/call-ptx"
cp "$top/samples/call/reverse_scale.ptx" "$top/tests/e2e/cases/call-kernels/call_kernels.ptx" "$work/call-ptx/"
export FUZZ_CALL_PTX_DIR="$work/call-ptx"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -detect_leaks=1 -print_final_stats=1)
shopt -s nullglob

# per target: its options, seed files and reproducers
target_options() {
    case $1 in
    ptx) echo "-dict=$here/ptx.dict -max_len=32768" ;;
    npy) echo "-max_len=4096" ;;
    fatbin) echo "-max_len=16384" ;;
    call) echo "-dict=$here/call.dict -max_len=8192" ;;
    launch) echo "-dict=$here/ptx.dict -max_len=32768" ;;
    # kemu run prints a line or two per input: stdout and stderr closed
    # (libFuzzer keeps its own copy of stderr for its reports)
    run) echo "-dict=$here/run.dict -max_len=2048 -close_fd_mask=3" ;;
    esac
}
target_seeds() {
    case $1 in
    ptx) printf '%s\n' "$here"/corpus/* ;;
    npy) printf '%s\n' "$top"/tests/fixtures/npy/*.npy ;;
    fatbin) printf '%s\n' "$top"/tests/fixtures/fatbin/*.fatbin "$top"/tests/fixtures/fatbin/*.bin ;;
    call) printf '%s\n' "$top"/samples/call/*.json "$top"/samples/call/limits/*.json "$top"/tests/e2e/cases/call-*/*.json ;;
    launch) printf '%s\n' "$here"/corpus-launch/* ;;
    run) printf '%s\n' "$here"/corpus-run/* ;;
    esac
}
target_regressions() {
    case $1 in
    ptx) printf '%s\n' "$here"/regressions/* ;;
    *) printf '%s\n' "$here/regressions-$1"/* ;;
    esac
}

# Reproduce mode: run only the given files.
if [ $# -gt 0 ]; then
    status=0
    for f in "$@"; do
        t=ptx
        read -ra named <<< "$targets"
        if [ "${#named[@]}" -eq 1 ]; then
            t=$targets
        else
            case $f in
            *regressions-npy/*) t=npy ;; *regressions-fatbin/*) t=fatbin ;; *regressions-call/*) t=call ;;
            *regressions-launch/* | *corpus-launch/*) t=launch ;; *regressions-run/* | *corpus-run/*) t=run ;;
            esac
        fi
        [ -x "$work/fuzz_$t" ] || { echo "fuzz: target $t was not built (FUZZ_TARGETS)" >&2; exit 2; }
        # shellcheck disable=SC2046 # options split on purpose
        "$work/fuzz_$t" "${common[@]}" $(target_options "$t") "$f" || status=$?
    done
    exit $status
fi

# Known bugs first: each regression input must now be read or refused cleanly.
failed=0
for t in $targets; do
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        # shellcheck disable=SC2046
        if "$work/fuzz_$t" "${common[@]}" $(target_options "$t") "$f" >"$work/regression.log" 2>&1; then
            echo "fuzz: regression ok:   ${f#"$top"/}" >&2
        else
            grep -E 'ERROR|SUMMARY|^    #[0-9]+ .* in (kemu|ptx|bc|lex|util|mem|exec|vm|parse|lower|io|cudart|call|cli|check|plan)' \
                "$work/regression.log" | head -n 12 >&2 || true
            echo "fuzz: regression FAIL: ${f#"$top"/}" >&2
            failed=1
        fi
    done < <(target_regressions "$t")
done
if [ $failed -ne 0 ]; then
    echo "fuzz: regression inputs fail (reproduce with: tests/fuzz/run.sh FILE)" >&2
    exit 1
fi

parallel=()
if [ "$jobs" -gt 1 ]; then
    parallel=(-jobs="$jobs" -workers="$jobs")
fi
for t in $targets; do
    # The seeds are copied so fuzzing never writes into the source tree.
    mkdir -p "$work/corpus-$t" "$work/artifacts-$t"
    n=0
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        n=$((n + 1))
        # call specs name their PTX by a path of the tree: fuzz_call knows
        # the modules by file name
        if [ "$t" = call ]; then
            sed 's|"ptx": *"[^"]*/\([^"/]*\)"|"ptx": "\1"|' "$f" > "$work/corpus-$t/seed-$n.json"
        else
            cp "$f" "$work/corpus-$t/"
        fi
    done < <(target_seeds "$t")
    status=0
    # shellcheck disable=SC2046
    (cd "$work" && "./fuzz_$t" "${common[@]}" $(target_options "$t") -max_total_time="$seconds" "${parallel[@]}" \
         -artifact_prefix="$work/artifacts-$t/" "corpus-$t") >"$work/fuzz-$t.log" 2>&1 || status=$?
    # with -jobs>1 the per-job logs hold the details; the recommended
    # dictionary libFuzzer prints at exit is left out
    echo "fuzz: ---- $t" >&2
    cat "$work/fuzz-$t.log" "$work"/fuzz-[0-9]*.log 2>/dev/null | grep -v -e '^"' -e '^###### ' | tail -n 30 >&2
    rm -f "$work"/fuzz-[0-9]*.log

    found=("$work/artifacts-$t"/*)
    if [ $status -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
        echo "fuzz: $t FAILED (status $status)" >&2
        for f in "${found[@]}"; do
            echo "---- reproducer $f ($(wc -c <"$f") bytes), base64:" >&2
            base64 "$f" >&2
            echo "---- as text:" >&2
            head -c 2000 "$f" | cat -v >&2
            echo >&2
        done
        trap - EXIT
        echo "fuzz: work directory kept: $work; reproduce with: FUZZ_TARGETS=$t tests/fuzz/run.sh FILE" >&2
        exit 1
    fi
    echo "fuzz: $t: no crash, hang or leak in ${seconds}s" >&2
done
