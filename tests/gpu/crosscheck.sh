#!/bin/sh
# The one script to run on a machine that has an NVIDIA GPU: builds kemu,
# runs `kemu run --backend both` (emulator and GPU from identical inputs)
# over every kernel listed in tests/gpu/kernels.txt (all of tests/kernels/
# and samples/, and the `kemu call` kernels with `kemu call --backend
# both`), and writes a Markdown table: kernel, output buffers, max
# ULP distance, verdict, and the time on each backend. With -p it also runs
# the self-checking CUDA programs of tests/cuda/ on the GPU (NVIDIA's runtime)
# and under `kemu exec`, and adds a table of both verdicts. docs/fidelity.md
# explains the tables and keeps the latest ones.
#
# usage: tests/gpu/crosscheck.sh [-o TABLE.md] [-d DEVICE] [-k TEXT] [-j JOBS] [-J N] [-s DIR] [-p]
#   -o FILE    where the table goes (default: ./fidelity-table.md); the full
#              output of every kernel that did not agree goes to FILE.log.
#              FILE is rewritten as kernels finish, marked incomplete until
#              the end: a run stopped part-way leaves the rows it finished
#   -d N       the CUDA device to use (default 0)
#   -k TEXT    only the lines of kernels.txt that contain TEXT
#   -j N       make -j for the build (default: the number of CPUs)
#   -J N       cross-check N kernels at a time (default 1); each is its own
#              process on the one GPU, so the time columns then include
#              waiting for the others (the table says so)
#   -s DIR     keep the outputs of every kernel that does not agree, both
#              backends' (NAME.npy and NAME.cuda.npy), in DIR/N-KERNEL/ (N:
#              its line among those run), to study the differences later
#   -p         the CUDA programs too (needs nvcc; KEMU_CUDA_TESTS picks some,
#              as for tests/cuda/run.sh); they are built once, for both runs
# environment:
#   KEMU=PATH             use this kemu instead of building one
#   KEMU_CUDA_LIBRARY     the driver library to load (default libcuda.so.1)
#   CROSSCHECK_TIMEOUT    seconds per kernel (default 60)
#
# Exit status: 0 when every kernel agrees (or differs only where kernels.txt
# marks it order-dependent), 1 when some kernel disagrees, faults or fails
# (or, with -p, a CUDA program fails on the GPU or under kemu exec),
# 3 when no GPU can be used (the one line from kemu says why).
# It needs about a minute of GPU time for the ~130 kernels (each one is a
# separate process: driver initialization and the PTX JIT dominate); -p adds
# a few minutes, mostly nvcc.
set -u
set -f # kernel arguments are split on blanks, never globbed

here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../.." && pwd)
table=fidelity-table.md
device=0
filter=
jobs=$(nproc 2>/dev/null || echo 2)
programs=0
parallel=1
keep=
while getopts o:d:k:j:J:s:p opt; do
    case $opt in
    o) table=$OPTARG ;;
    d) device=$OPTARG ;;
    k) filter=$OPTARG ;;
    j) jobs=$OPTARG ;;
    p) programs=1 ;;
    J) parallel=$OPTARG ;;
    s) keep=$OPTARG ;;
    *) sed -n '12,29p' "$0" >&2; exit 2 ;;
    esac
done
case $parallel in '' | *[!0-9]* | 0) echo "crosscheck: -J takes a number of kernels, 1 or more" >&2; exit 2 ;; esac
timeout_s=${CROSSCHECK_TIMEOUT:-60}
case $table in /*) ;; *) table=$(pwd)/$table ;; esac
case $keep in '' | /*) ;; *) keep=$(pwd)/$keep ;; esac
log=$table.log

# ---- build -------------------------------------------------------------------
if [ -z "${KEMU:-}" ]; then
    echo "crosscheck: building kemu in $SRC" >&2
    (
        cd "$SRC" || exit 1
        if [ ! -x configure ]; then autoreconf -fi || exit 1; fi
        if [ ! -f Makefile ]; then ./configure -q || exit 1; fi
        make -j"$jobs" >/dev/null
    ) || { echo "crosscheck: the build failed" >&2; exit 1; }
    KEMU=$SRC/src/kemu
fi
[ -x "$KEMU" ] || { echo "crosscheck: no kemu at $KEMU" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# ---- is there a GPU? ---------------------------------------------------------
probe=$(cd "$tmp" && "$KEMU" run --backend cuda --device "$device" "$SRC/samples/saxpy/saxpy.ptx" --block 32 -- \
    u32:32 f32:1 in:zeros:f32:32 out:probe.npy:f32:32 2>&1)
st=$?
if [ "$st" -eq 3 ]; then
    printf '%s\n' "$probe" >&2
    exit 3
fi
gpu=$(printf '%s\n' "$probe" | sed -n 's/.* on CUDA device [0-9]* (\(.*\))$/\1/p' | head -1)
if [ "$st" -ne 0 ] || [ -z "$gpu" ]; then
    echo "crosscheck: the probe run on CUDA device $device failed:" >&2
    printf '%s\n' "$probe" >&2
    exit 1
fi
driver=
if command -v nvidia-smi >/dev/null 2>&1; then
    driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i "$device" 2>/dev/null | head -1)
fi
# the revision of the sources (a bundle made by bundle.sh says which it was
# built from: the tree it runs in may have no .git)
revision=$(cd "$SRC" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -f "$(dirname "$KEMU")/REVISION" ]; then
    revision=$(cat "$(dirname "$KEMU")/REVISION")
fi

# ---- one kernel ----------------------------------------------------------------
# one_kernel N LINE: cross-checks one line of kernels.txt in $tmp/kN and
# leaves $tmp/rN.row (its table row), $tmp/rN.cat (agree, differ, order,
# failed, unavailable or skipped) and, unless it agreed, $tmp/rN.log
row() { # kernel buffers maxulp verdict emu cuda
    printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" "$6" > "$tmp/r$k.row"
}
one_kernel() {
    k=$1 line=$2
    if [ "${line%% *}" = skip ]; then
        # shellcheck disable=SC2086 # split on blanks on purpose (set -f)
        set -- $line
        file=$2 kernel=$3
        shift 3
        row "$file:$kernel" "-" "-" "skipped: $*" "-" "-"
        echo skipped > "$tmp/r$k.cat"
        return
    fi
    note=
    case $line in *' # order:'*) note=${line#* \# order:}; line=${line%% \# order:*} ;; esac
    # {SRC} in an argument is the source tree (input files committed there)
    args=$(printf '%s\n' "$line" | sed "s|{SRC}|$SRC|g")
    # shellcheck disable=SC2086 # split on blanks on purpose (set -f)
    set -- $args
    command=run
    if [ "$1" = call ]; then # call SPEC.json [options]: kemu call, outputs in the scratch directory
        command=call
        shift
        file=$1
        shift
        set -- "$@" --out-dir .
        kernel=$(sed -n 's/.*"kernel": *"\([^"]*\)".*/\1/p' "$SRC/$file" | head -1)
    else
        file=$1
        shift
        kernel=$(printf '%s\n' "$line" | sed -n 's/.*--kernel \([^ ]*\).*/\1/p')
        [ -n "$kernel" ] || kernel=$(basename "$file" .ptx)
    fi
    dir=$tmp/k$k
    mkdir -p "$dir"
    if command -v timeout >/dev/null 2>&1; then
        (cd "$dir" && timeout "$timeout_s" "$KEMU" $command --backend both --device "$device" "$SRC/$file" "$@") \
            < /dev/null > "$dir/out" 2>&1
    else
        (cd "$dir" && "$KEMU" $command --backend both --device "$device" "$SRC/$file" "$@") < /dev/null > "$dir/out" 2>&1
    fi
    st=$?
    out=$dir/out
    emu_s=$(sed -n 's/.*, emu \([0-9.]*\) s, cuda \([0-9.]*\) s on CUDA device.*/\1/p' "$out" | head -1)
    cuda_s=$(sed -n 's/.*, emu \([0-9.]*\) s, cuda \([0-9.]*\) s on CUDA device.*/\2/p' "$out" | head -1)
    # "  NAME: DTYPE[SHAPE]: max ULP distance D, M mismatches..." (or "max difference" for integers)
    buffers=$(sed -n 's/^  \([^ ]*\): \([a-z0-9]*\[[^]]*\]\): max [a-zA-Z ]* \([0-9]*\), \([0-9]*\) mismatch.*/\1 \2 \4/p' "$out" |
        awk '{ printf "%s%s %s%s", (NR > 1 ? ", " : ""), $1, $2, ($3 > 0 ? " (" $3 " differ)" : "") }')
    maxulp=$(sed -n 's/^  [^ ]*: [a-z0-9]*\[[^]]*\]: max ULP distance \([0-9]*\),.*/\1/p' "$out" |
        awk 'BEGIN { m = -1 } { if ($1 + 0 > m) m = $1 + 0 } END { if (m < 0) print "-"; else print m }')
    if grep -q ': max difference [1-9]' "$out"; then
        maxulp="$maxulp; integers differ"
    fi
    [ -n "$buffers" ] || buffers="(no outputs)"
    case $st in
    0) verdict=agree cat=agree ;;
    1)
        if grep -q 'disagree on' "$out"; then
            if [ -n "$note" ]; then
                verdict="order-dependent:$note" cat=order
            else
                verdict="**DIFFER**" cat=differ
            fi
        elif grep -q 'faulted' "$out"; then
            verdict="**FAULT**: $(grep -m1 'faulted' "$out" | sed 's/|/\\|/g')" cat=failed
        else
            verdict="**FAILED** (exit 1)" cat=failed
        fi
        ;;
    3)
        buffers=-
        verdict="unavailable: $(grep -m1 'unavailable' "$out" | sed 's/^kemu [a-z]*: cuda backend unavailable: //; s/|/\\|/g')"
        cat=unavailable
        ;;
    124) verdict="**TIMEOUT** (${timeout_s} s)" cat=failed ;;
    *) verdict="**ERROR** (exit $st): $(grep -m1 'error' "$out" | sed 's/|/\\|/g')" cat=failed ;;
    esac
    if [ "$st" -ne 0 ]; then
        { printf '==== %s:%s (exit %s)\n$ kemu %s --backend both %s\n' "$file" "$kernel" "$st" "$command" "$line"
          cat "$out"; } > "$tmp/r$k.log"
        if [ -n "$keep" ]; then
            mkdir -p "$keep/$k-$kernel" && cp "$out" "$keep/$k-$kernel/output.txt" &&
                find "$dir" -name '*.npy' -exec cp {} "$keep/$k-$kernel/" \;
        fi
    fi
    row "$file:$kernel" "$buffers" "$maxulp" "$verdict" "${emu_s:--}" "${cuda_s:--}"
    echo "$cat" > "$tmp/r$k.cat"
    rm -rf "$dir"
}

# ---- the table -------------------------------------------------------------------
# write_table [STILL RUNNING]: (re)writes the table and its log from what has
# finished; with an argument, it is marked incomplete and says what was
# still running
prows=$tmp/program-rows
pn=0 pagree=0 pgpu=0 pkemu=0 pboth=0 ponly=0
count() { # CAT: how many finished kernels are in it
    printf '%s\n' "$cats" | grep -c -x "$1"
}
write_table() {
    set +f
    cats=$(cat "$tmp"/r*.cat 2>/dev/null)
    set -f
    agree=$(count agree) differ=$(count differ) order=$(count order) failed=$(count failed)
    unavailable=$(count unavailable) skipped=$(count skipped)
    done_n=$((agree + differ + order + failed + unavailable + skipped))
    elapsed=$((${kernels_ended:-$(date +%s)} - started))
    {
        echo "## Cross-check table"
        echo
        if [ $# -gt 0 ]; then
            echo "- **incomplete**: written while the cross-check ran ($1); if the run ends here, it was stopped"
        fi
        echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "- GPU: $gpu (CUDA device $device)${driver:+, driver $driver}"
        echo "- kemu: $("$KEMU" --version 2>/dev/null | sed 's/^kemu //'), revision $revision"
        echo "- $done_n of $total kernels in ${elapsed} s: $agree agree, $differ differ, $order order-dependent," \
            "$failed failed, $unavailable unavailable, $skipped skipped"
        if [ "$parallel" -gt 1 ]; then
            echo "- $parallel kernels at a time: the time columns include waiting for the others"
        fi
        echo
        echo "| kernel | buffers | max ULP | verdict | emu s | cuda s |"
        echo "|---|---|---|---|---|---|"
        i=1
        while [ "$i" -le "$total" ]; do
            [ -f "$tmp/r$i.cat" ] && cat "$tmp/r$i.row"
            i=$((i + 1))
        done
        if [ "$programs" = 1 ] && [ -f "$prows" ]; then
            echo
            echo "## CUDA programs (tests/cuda/)"
            echo
            echo "- $pn runs in ${pelapsed} s: $pagree agree, $pgpu fail on the GPU only, $pkemu fail under kemu only," \
                "$pboth fail on both, $ponly run under kemu only"
            echo
            echo "| program | GPU | kemu exec | verdict |"
            echo "|---|---|---|---|"
            cat "$prows"
        elif [ "$programs" = skipped ]; then
            echo
            echo "CUDA programs (tests/cuda/): not run, nvcc not found"
        fi
    } > "$table.new"
    mv "$table.new" "$table"
    {
        i=1
        while [ "$i" -le "$total" ]; do
            [ -f "$tmp/r$i.log" ] && cat "$tmp/r$i.log"
            i=$((i + 1))
        done
        [ -f "$tmp/programs-log" ] && cat "$tmp/programs-log"
    } > "$log"
}

# ---- every kernel --------------------------------------------------------------
lines=$tmp/lines
grep -v -e '^#' -e '^[[:space:]]*$' "$here/kernels.txt" | while IFS= read -r line || [ -n "$line" ]; do
    if [ -n "$filter" ]; then
        case $line in *"$filter"*) ;; *) continue ;; esac
    fi
    printf '%s\n' "$line"
done > "$lines"
total=$(grep -c . "$lines")
started=$(date +%s)
n=0
running=0
write_table "0 of $total kernels done"
while IFS= read -r line; do
    n=$((n + 1))
    if [ "$parallel" -le 1 ]; then
        one_kernel "$n" "$line"
        write_table "$n of $total kernels done"
        continue
    fi
    one_kernel "$n" "$line" &
    running=$((running + 1))
    if [ "$running" -ge "$parallel" ]; then
        wait
        running=0
        write_table "$n of $total kernels done"
    fi
done < "$lines"
wait
kernels_ended=$(date +%s)

# ---- the CUDA programs (-p) --------------------------------------------------------
# tests/cuda/run.sh twice: natively on the GPU, then under kemu exec, built
# once. Each prints "PASS: NAME", "FAIL: NAME: WHY", "SKIP: NAME (WHY)" or
# "XFAIL: NAME (WHY)" per program run; a program's own lines ("PASS name",
# "FAIL: FILE:...") do not match NAME's form.
program_status() { # FILE NAME: PASS, FAIL: WHY, SKIP (WHY), XFAIL (WHY) or -
    awk -v name="$2" '
        ($1 == "PASS:" || $1 == "FAIL:" || $1 == "SKIP:" || $1 == "XFAIL:") {
            n = $2; sub(/[:,]$/, "", n)
            if (n != name) next
            st = substr($1, 1, length($1) - 1)
            rest = $0; sub(/^[A-Z]*: [a-z0-9_]*[:,]? */, "", rest)
            found = rest == "" ? st : st == "FAIL" ? st ": " rest : st " " rest
        }
        END { print (found == "" ? "-" : found) }' "$1" | sed 's/|/\\|/g'
}
if [ "$programs" = 1 ]; then
    echo "crosscheck: the CUDA programs of tests/cuda/ on the GPU, then under kemu exec" >&2
    write_table "all $total kernels done; the CUDA programs are running"
    pstarted=$(date +%s)
    builds=${KEMU_CUDA_BUILD_DIR:-$tmp/cuda-build}
    CUDA_VISIBLE_DEVICES=$device KEMU_CUDA_NATIVE=1 KEMU_CUDA_BUILD_DIR=$builds sh "$SRC/tests/cuda/run.sh" \
        > "$tmp/programs-gpu" 2>&1
    pgpu_status=$?
    KEMU=$KEMU KEMU_CUDA_BUILD_DIR=$builds sh "$SRC/tests/cuda/run.sh" > "$tmp/programs-kemu" 2>&1
    pkemu_status=$?
    pelapsed=$(($(date +%s) - pstarted))
    if [ "$pgpu_status" -eq 77 ] || [ "$pkemu_status" -eq 77 ]; then
        echo "crosscheck: -p needs nvcc: $(head -n 1 "$tmp/programs-gpu")" >&2
        programs=skipped
    else
        : > "$prows.new"
        names=$(cat "$tmp/programs-gpu" "$tmp/programs-kemu" |
            sed -n 's/^\(PASS\|FAIL\|SKIP\|XFAIL\): \([a-z0-9_][a-z0-9_]*\)\([:, ].*\)\{0,1\}$/\2/p' |
            awk '!seen[$0]++')
        for name in $names; do
            g=$(program_status "$tmp/programs-gpu" "$name")
            k=$(program_status "$tmp/programs-kemu" "$name")
            pn=$((pn + 1))
            case "$g/$k" in
            PASS/PASS) verdict=agree; pagree=$((pagree + 1)) ;;
            PASS/*) verdict="**kemu fails**"; pkemu=$((pkemu + 1)) ;;
            FAIL*/PASS | XFAIL*/PASS) verdict="**the GPU fails**"; pgpu=$((pgpu + 1)) ;;
            FAIL*/FAIL* | FAIL*/XFAIL* | XFAIL*/FAIL* | XFAIL*/XFAIL*) verdict="**both fail**"; pboth=$((pboth + 1)) ;;
            *) verdict="kemu only"; ponly=$((ponly + 1)) ;;
            esac
            printf '| %s | %s | %s | %s |\n' "$name" "$g" "$k" "$verdict" >> "$prows.new"
        done
        mv "$prows.new" "$prows"
        if [ $((pgpu + pkemu + pboth)) -gt 0 ]; then
            { echo "==== tests/cuda/run.sh on the GPU (KEMU_CUDA_NATIVE=1)"; cat "$tmp/programs-gpu"
              echo "==== tests/cuda/run.sh under kemu exec"; cat "$tmp/programs-kemu"; } > "$tmp/programs-log"
        fi
    fi
fi

write_table
echo "crosscheck: $total kernels: $agree agree, $differ differ, $order order-dependent, $failed failed," \
    "$unavailable unavailable, $skipped skipped; table in $table" >&2
[ -s "$log" ] && echo "crosscheck: the output of what did not agree: $log" >&2
[ "$programs" = 1 ] && echo "crosscheck: $pn CUDA program runs: $pagree agree, $pgpu fail on the GPU only," \
    "$pkemu fail under kemu only, $pboth fail on both, $ponly run under kemu only" >&2
[ -s "$log" ] || rm -f "$log"
[ "$differ" -eq 0 ] && [ "$failed" -eq 0 ] && { [ "$programs" != 1 ] || [ $((pgpu + pkemu + pboth)) -eq 0 ]; }
