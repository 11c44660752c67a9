#!/bin/sh
# End-to-end tests of kemu's libnccl.so.2 (docs/multigpu.md, "NCCL"):
# builds the self-checking CUDA programs of tests/nccl/ with nvcc, against
# NVIDIA's nccl.h and -lnccl (linked against kemu's libnccl.so.2, which
# `kemu exec` also puts first on the library path), runs each under
# `kemu exec --devices N`, and checks its PASS line, its exit status and
# the messages kemu prints for refused calls. Checks too that the library
# exports every entry point of nccl.h that NVIDIA's does
# (src/vendor/libnccl2.symbols). Exits 77 (automake's SKIP), saying why,
# when nvcc or kemu's libnccl.so.2 (configure found no nccl.h) is absent.
#
# Environment: KEMU, NVCC, top_srcdir, top_builddir, KEMU_NCCL_TESTS
# (space-separated names to run only those), KEMU_KEEP=1 (keep the build
# directory).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
KEMU=${KEMU:-$top_builddir/src/kemu}
NVCC=${NVCC:-}
if [ -z "$NVCC" ]; then
    NVCC=$(command -v nvcc 2>/dev/null || true)
    [ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
fi
library=$top_builddir/lib/kemu/libnccl.so.2
if [ ! -f "$library" ]; then
    echo "SKIP: kemu's libnccl.so.2 is not built: configure found no nccl.h (--with-nccl-include=DIR)"
    exit 77
fi
if [ -z "$NVCC" ] || ! "$NVCC" --version >/dev/null 2>&1; then
    echo "SKIP: nvcc not found; the NCCL program tests need it"
    exit 77
fi
if [ ! -x "$KEMU" ]; then
    echo "FAIL: $KEMU is not built"
    exit 1
fi
# the nccl.h the library was built against (configure's choice)
nccl_include=$(sed -n 's/^NCCL_INCLUDE = //p' "$top_builddir/Makefile" 2>/dev/null)
[ -n "$nccl_include" ] || nccl_include=/usr/local/cuda/include

# a sanitizer build: the programs need the sanitizer runtimes preloaded
exec_env=
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -n "$libkemu" ] && ldd "$libkemu" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$libkemu" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-nccl-tests.XXXXXX")
if [ "${KEMU_KEEP:-0}" = 1 ]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
# -lnccl resolves against kemu's library (no toolkit libnccl needed)
mkdir -p "$work/lib"
ln -s "$(cd "$(dirname "$library")" && pwd)/libnccl.so.2" "$work/lib/libnccl.so"

passed=0
failed=0
failures=""
selected() {
    [ -z "${KEMU_NCCL_TESTS:-}" ] && return 0
    for want in $KEMU_NCCL_TESTS; do
        case "$1" in "$want"*) return 0 ;; esac
    done
    return 1
}
pass() {
    passed=$((passed + 1))
    echo "PASS: $1"
}
fail() {
    failed=$((failed + 1))
    failures="$failures $1"
    echo "FAIL: $1: $2"
    for f in out err; do
        [ -f "$work/$1.$f" ] || continue
        echo "---- std$f of $1 (last lines)"
        tail -n 15 "$work/$1.$f"
    done
}

# the exports: every nccl.h entry point of NVIDIA's library
if selected symbols; then
    nm -D --defined-only "$library" | awk '{print $3}' | sort > "$work/exports"
    missing=$(sort "$top_srcdir/src/vendor/libnccl2.symbols" | comm -23 - "$work/exports" | tr '\n' ' ')
    if [ -z "$missing" ]; then pass symbols; else fail symbols "not exported: $missing"; fi
fi

# build NAME: tests/nccl/NAME.cu into $work/NAME
build() {
    "$NVCC" -cudart shared -arch=sm_80 -Xcompiler -pthread -I"$here" -I"$here/../cuda" -I"$nccl_include" \
        -o "$work/$1" "$here/$1.cu" -L"$work/lib" -lnccl > "$work/$1.build" 2>&1
}

# a program whose DT_RPATH names NVIDIA's libnccl.so.2 (which outranks
# LD_PRELOAD-less LD_LIBRARY_PATH): kemu exec preloads kemu's
nvidia_nccl=
for d in "$(dirname "$NVCC")/../lib" "$(dirname "$NVCC")/../lib64" /usr/local/cuda/lib /usr/local/cuda/lib64; do
    [ -f "$d/libnccl.so.2" ] && { nvidia_nccl=$(cd "$d" && pwd); break; }
done
if selected allreduce-rpath; then
    if [ -z "$nvidia_nccl" ]; then
        echo "SKIP: allreduce-rpath (no NVIDIA libnccl.so.2 to name in a DT_RPATH)"
    elif "$NVCC" -cudart shared -arch=sm_80 -I"$here" -I"$here/../cuda" -I"$nccl_include" \
        -o "$work/nccl_allreduce_rpath" "$here/nccl_allreduce.cu" -L"$nvidia_nccl" -lnccl \
        -Xlinker --disable-new-dtags -Xlinker -rpath="$nvidia_nccl" > "$work/rpath.build" 2>&1; then
        :
    else
        fail allreduce-rpath "nvcc failed"
        cat "$work/rpath.build"
    fi
fi

# check NAME PROGRAM "DEVICES [kemu exec options]" [patterns...]: the
# stderr must hold each grep pattern, and must not hold those written !PATTERN
check() {
    name=$1
    program=$2
    devices=$3
    shift 3
    selected "$name" || selected "$program" || return 0
    if [ ! -x "$work/$program" ] && ! build "$program"; then
        fail "$name" "nvcc failed"
        cat "$work/$program.build"
        return 0
    fi
    # shellcheck disable=SC2086
    timeout "${KEMU_NCCL_EXEC_LIMIT:-300}" $exec_env "$KEMU" exec --devices $devices --timeout 120 -- \
        "$work/$program" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name" "exit status $rc"
        return 0
    fi
    if ! grep -q "^PASS" "$work/$name.out"; then
        fail "$name" "no PASS line"
        return 0
    fi
    for pattern in "$@"; do
        case $pattern in
        '!'*)
            if grep -q -- "${pattern#!}" "$work/$name.err"; then
                fail "$name" "stderr holds: ${pattern#!}"
                return 0
            fi
            ;;
        *)
            if ! grep -q -- "$pattern" "$work/$name.err"; then
                fail "$name" "stderr lacks: $pattern"
                return 0
            fi
            ;;
        esac
    done
    pass "$name"
}

check allreduce-2 nccl_allreduce 2
check allreduce-4 nccl_allreduce 4
check allreduce-8 nccl_allreduce 8
# what NCCL wrote counts as initialized (the kernel after it reads it)
check allreduce-initcheck nccl_allreduce "2 --tool initcheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
[ -x "$work/nccl_allreduce_rpath" ] && check allreduce-rpath nccl_allreduce_rpath 2
# racecheck across streams (docs/checkers.md "Streams, events and devices"):
# event-ordered compute and communication streams are clean, a missing wait
# before or after the collective is a race naming both sides; the other
# programs stay clean under racecheck
export NCCL_RACE_MODE=fixed
check stream-race-fixed nccl_stream_race "2 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
export NCCL_RACE_MODE=input_racy
check stream-race-input nccl_stream_race "2 --tool racecheck" \
    "Error: Race reported between Write access at _Z9gradientsPfii" \
    "and Read access by ncclAllReduce (rank's part on device 1) \[RAW hazard\]"
export NCCL_RACE_MODE=output_racy
check stream-race-output nccl_stream_race "2 --tool racecheck" \
    "Error: Race reported between Write access by ncclAllReduce (rank's part on device 0)" \
    "and Read access at _Z5scalePKfPfi"
unset NCCL_RACE_MODE
check allreduce-racecheck nccl_allreduce "2 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
check tensor-parallel-racecheck nccl_tensor_parallel "2 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
check p2p-racecheck nccl_p2p "2 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
check matrix-racecheck nccl_matrix "3 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
check matrix-3 nccl_matrix 3
check matrix-4 nccl_matrix 4
check tensor-parallel-2 nccl_tensor_parallel 2
check tensor-parallel-4 nccl_tensor_parallel 4
check p2p-2 nccl_p2p 2
check p2p-5 nccl_p2p 5
check comms-4 nccl_comms 4
check comms-5 nccl_comms 5
check errors nccl_errors 2 \
    "kemu: ncclBroadcast: root 5 is not a rank of this communicator (0..1)" \
    "kemu: ncclSend: peer 2 is not a rank of this communicator" \
    "kemu: ncclAllReduce: datatype 42 is not an ncclDataType_t" \
    "kemu: ncclAllReduce: op 17 is not an ncclRedOp_t" \
    "kemu: ncclAllReduce: comm is NULL" \
    "kemu: ncclAllReduce: sendbuff 0x[0-9a-f]* is not device memory of 4 elements" \
    "kemu: ncclAllReduce: sendbuff 0x[0-9a-f]* is not device memory of 65 elements" \
    "kemu: ncclAllReduce: stream 0x[0-9a-f]* is not a stream of CUDA device 0" \
    "kemu: ncclGroupEnd: no ncclGroupStart to end" \
    "kemu: ncclCommInitAll: device 0 is in devlist twice" \
    "kemu: ncclCommInitAll: device 2 (rank 2) is not one of the 2 devices" \
    "kemu: ncclCommInitRank: commId was not made by ncclGetUniqueId" \
    "kemu: ncclCommInitRank: nranks 3 is more than the 2 devices" \
    "kemu: ncclCommInitRank: ranks 0 and 1 both use CUDA device 0" \
    "kemu: ncclCommInitRank: rank 0 of this ncclUniqueId already has a communicator" \
    "kemu: ncclCommCount: comm 0x[0-9a-f]* is not a live communicator" \
    "kemu: ncclCommInitRankConfig: config was not set up with NCCL_CONFIG_INITIALIZER" \
    "kemu: ncclGroupEnd: a call in the group failed (invalid argument): the group does nothing" \
    "kemu: ncclAllReduce: rank 0 waits for rank 1, whose calls come from this same thread" \
    "kemu: ncclSend: rank 0 waits for rank 1, whose calls come from this same thread" \
    "kemu: ncclAllReduce: the ranks' calls differ in count or datatype: rank 0 called ncclAllReduce(count 4" \
    "kemu: ncclAllReduce: op [0-9]* was made for ncclFloat64, not ncclFloat32" \
    "kemu: ncclRedOpCreatePreMulSum: scalar 0x[0-9a-f]* is not device memory" \
    "kemu: ncclAllReduce on a capturing stream: kemu does not capture library calls into graphs" \
    "kemu: ncclGather: root 2 is not a rank of this communicator" \
    "kemu: ncclScatter: sendbuff 0x[0-9a-f]* is not device memory of 2 elements" \
    "kemu: ncclCommShrink is not supported yet" \
    "kemu: ncclBroadcast: CUDA error on device 0: cudaErrorIllegalAddress"

check ring-split-2 nccl_ring_split 2
check ring-split-5 nccl_ring_split 5

# The same programs across processes (docs/multigpu.md, "Ranks across
# processes and machines"): built with -DNCCL_TEST_MPI against Open MPI,
# run as `mpirun --oversubscribe -n P kemu exec --devices D`; every process
# must print PASS. Skipped (said) where kemu's libnccl was built without
# Open MPI or mpirun/mpicc are missing.
mpi_ready=
if ! ldd "$library" 2>/dev/null | grep -q libmpi; then
    echo "SKIP: the programs under mpirun (kemu's libnccl.so.2 was built without Open MPI: libopenmpi-dev)"
elif ! command -v mpirun >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1; then
    echo "SKIP: the programs under mpirun (mpirun or mpicc not found: openmpi-bin)"
else
    mpi_ready=1
    # mpirun refuses root without these (CI runs as root); one slot per
    # process whatever the cores
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi

# check_mpi NAME PROGRAM PROCESSES DEVICES [patterns...]: PROGRAM built for
# MPI; each process prints PASS, stderr holds each pattern (!PATTERN: not)
check_mpi() {
    name=$1
    program=$2
    procs=$3
    devices=$4
    shift 4
    [ -n "$mpi_ready" ] || return 0
    selected "$name" || selected "$program" || return 0
    if [ ! -x "$work/$program-mpi" ] &&
        ! "$NVCC" -cudart shared -arch=sm_80 -Xcompiler -pthread -DNCCL_TEST_MPI $(mpicc --showme:compile) \
            -I"$here" -I"$here/../cuda" -I"$nccl_include" -o "$work/$program-mpi" "$here/$program.cu" \
            -L"$work/lib" -lnccl $(mpicc --showme:link) > "$work/$program-mpi.build" 2>&1; then
        fail "$name" "nvcc failed"
        cat "$work/$program-mpi.build"
        return 0
    fi
    # shellcheck disable=SC2086
    timeout "${KEMU_NCCL_EXEC_LIMIT:-300}" $exec_env mpirun --oversubscribe -n "$procs" \
        "$KEMU" exec --devices $devices --timeout 120 -- "$work/$program-mpi" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "$name" "exit status $rc"
        return 0
    fi
    passes=$(grep -c "^PASS" "$work/$name.out")
    if [ "$passes" -ne "$procs" ] || grep -q "^FAIL" "$work/$name.out"; then
        fail "$name" "$passes of $procs processes passed"
        return 0
    fi
    for pattern in "$@"; do
        case $pattern in
        '!'*) ! grep -q -- "${pattern#!}" "$work/$name.err" || { fail "$name" "stderr holds: ${pattern#!}"; return 0; } ;;
        *) grep -q -- "$pattern" "$work/$name.err" || { fail "$name" "stderr lacks: $pattern"; return 0; } ;;
        esac
    done
    pass "$name"
}

check_mpi mpi-allreduce-2x1 nccl_allreduce 2 1
check_mpi mpi-allreduce-2x2 nccl_allreduce 2 2
check_mpi mpi-allreduce-4x1 nccl_allreduce 4 1
check_mpi mpi-matrix-2x1 nccl_matrix 2 1
check_mpi mpi-matrix-3x2 nccl_matrix 3 2
check_mpi mpi-ring-split-2x1 nccl_ring_split 2 1
check_mpi mpi-ring-split-4x1 nccl_ring_split 4 1
check_mpi mpi-ring-split-3x2 nccl_ring_split 3 2
check_mpi mpi-errors nccl_mpi_errors 2 1 \
    "kemu: ncclAllReduce: the ranks' calls differ in count or datatype: rank 0 called ncclAllReduce(count 4" \
    "kemu: ncclCommInitRank: MPI rank 1 joined rank 1 with nranks 3; the ranks that joined this id first said 2" \
    "kemu: ncclCommInitRank: the communicator could not be made (see MPI rank 0's message)"
# what NCCL wrote from another process counts as initialized
check_mpi mpi-allreduce-initcheck nccl_allreduce 2 "1 --tool initcheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"
# and racecheck orders each process's kernels with the collectives
check_mpi mpi-ring-split-racecheck nccl_ring_split 2 "2 --tool racecheck" "ERROR SUMMARY: 0 errors" "!ERROR SUMMARY: [1-9]"

# kemu exec warns when a program links libnccl.so.2 and kemu's was not
# built: a runtime directory without it ($KEMU_CUDART_DIR)
if selected warn-unbuilt && [ -x "$work/nccl_allreduce" ]; then
    mkdir -p "$work/runtime-without-nccl"
    for f in "$(dirname "$library")"/*; do
        case $f in */libnccl.so.2) ;; *) ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$work/runtime-without-nccl/" ;; esac
    done
    KEMU_CUDART_DIR=$work/runtime-without-nccl timeout 120 "$KEMU" exec --devices 2 -- "$work/nccl_allreduce" \
        > "$work/warn-unbuilt.out" 2> "$work/warn-unbuilt.err"
    if grep -q "kemu exec: warning: .*nccl_allreduce links libnccl.so.2, but kemu's was not built" "$work/warn-unbuilt.err"; then
        pass warn-unbuilt
    else
        fail warn-unbuilt "no warning about the missing libnccl.so.2"
    fi
fi

echo "nccl tests: $passed passed, $failed failed"
[ $failed -eq 0 ] || { echo "failed:$failures"; exit 1; }
exit 0
