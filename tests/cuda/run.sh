#!/bin/sh
# End-to-end tests of `kemu exec` and kemu's libcudart replacement: builds
# the self-checking CUDA programs of tests/cuda/ with nvcc (`-cudart shared`,
# sm_80 unless said otherwise, and the fatbinary variants: zstd (default),
# raw (--no-compress), LZ4 (--compress-mode=speed), several translation
# units, -rdc=true), runs each under `kemu exec`, and checks its PASS line
# and exit status, plus the messages for programs kemu cannot run.
# Exits 77 (automake's SKIP) when nvcc is absent.
#
# With KEMU_CUDA_NATIVE=1 the same programs run directly, on the machine's
# GPU through NVIDIA's runtime, with the same expectations: on a GPU machine
# that checks the programs (and so what kemu is held to) against the
# hardware. Runs that only make sense under kemu (kemu exec options, kemu's
# own messages and ABI checks) are skipped then.
#
# Environment: KEMU (the kemu command), NVCC, top_srcdir, top_builddir,
# KEMU_CUDA_TESTS (space-separated names to run only those), KEMU_KEEP=1
# (keep the build directory), KEMU_CUDA_NATIVE=1, KEMU_CUDA_BUILD_DIR (build
# there, and reuse what an earlier run built there, even if its sources have
# changed since: give it a fresh directory).
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
if [ -z "$NVCC" ] || ! "$NVCC" --version >/dev/null 2>&1; then
    echo "SKIP: nvcc not found; the CUDA program tests need it"
    exit 77
fi
# a bare command name: the toolkit's directories are found from its path
case $NVCC in */*) ;; *) NVCC=$(command -v "$NVCC") ;; esac
native=${KEMU_CUDA_NATIVE:-0}
if [ "$native" != 1 ] && [ ! -x "$KEMU" ]; then
    echo "FAIL: $KEMU is not built"
    exit 1
fi
# natively, the programs load NVIDIA's libcudart.so.13: the toolkit's, where
# the loader would not find it by itself
if [ "$native" = 1 ]; then
    for d in lib64 lib targets/x86_64-linux/lib; do
        d=$(cd "$(dirname "$NVCC")/../$d" 2>/dev/null && pwd) || continue
        [ -f "$d/libcudart.so.13" ] || [ -f "$d/libcudart.so.12" ] || continue
        LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        export LD_LIBRARY_PATH
        break
    done
fi
cuda_include=$(cd "$(dirname "$NVCC")/../include" 2>/dev/null && pwd)

# In a sanitizer build, kemu's libcudart is instrumented: the programs it is
# loaded into need the sanitizer runtimes preloaded (only for `kemu exec`).
exec_env=
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -n "$libkemu" ] && ldd "$libkemu" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$libkemu" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi

# KEMU_CUDA_BUILD_DIR: build there and keep the builds; a program already
# built there (by an earlier run: crosscheck.sh -p runs the programs on the
# GPU, then under kemu exec) is not built again
if [ -n "${KEMU_CUDA_BUILD_DIR:-}" ]; then
    mkdir -p "$KEMU_CUDA_BUILD_DIR" || { echo "FAIL: cannot create $KEMU_CUDA_BUILD_DIR"; exit 1; }
    work=$(cd "$KEMU_CUDA_BUILD_DIR" && pwd)
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-cuda-tests.XXXXXX")
    if [ "${KEMU_KEEP:-0}" = 1 ]; then
        echo "keeping $work"
    else
        trap 'rm -rf "$work"' EXIT
    fi
fi

passed=0
failed=0
skipped=0
xfailed=0
failures=""

# Whether test or build $1 was asked for: names in KEMU_CUDA_TESTS match
# when one is a prefix of the other (faults_assert needs the faults build).
selected() {
    [ -z "${KEMU_CUDA_TESTS:-}" ] && return 0
    for want in $KEMU_CUDA_TESTS; do
        case "$want" in "$1"*) return 0 ;; esac
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
    if [ -f "$work/$1.out" ]; then
        echo "---- stdout of $1 (last lines)"
        tail -n 15 "$work/$1.out"
    fi
    if [ -f "$work/$1.err" ]; then
        echo "---- stderr of $1 (last lines)"
        tail -n 15 "$work/$1.err"
    fi
}

# ---- building ----------------------------------------------------------------
# Builds run in parallel: "build NAME FLAGS SOURCES..." queues one.
jobs_file="$work/builds"
: > "$jobs_file"
build() {
    name=$1
    flags=$2
    shift 2
    selected "$name" || return 0
    # built by an earlier run into KEMU_CUDA_BUILD_DIR
    [ -x "$work/$name" ] && [ ! -f "$work/$name.buildfail" ] && return 0
    srcs=""
    for s in "$@"; do
        srcs="$srcs $here/$s"
    done
    echo "$name|$flags|$srcs" >> "$jobs_file"
}

run_builds() {
    parallel=$(nproc 2>/dev/null || echo 2)
    [ "$parallel" -gt 8 ] && parallel=8
    running=0
    while IFS='|' read -r name flags srcs; do
        (
            rm -f "$work/$name.buildfail"
            # shellcheck disable=SC2086
            if ! "$NVCC" $flags -I"$here" -o "$work/$name" $srcs > "$work/$name.build" 2>&1; then
                echo "build failed" > "$work/$name.buildfail"
            fi
        ) &
        running=$((running + 1))
        if [ "$running" -ge "$parallel" ]; then
            wait
            running=0
        fi
    done < "$jobs_file"
    wait
}

built() {
    if [ -f "$work/$1.buildfail" ] || [ ! -x "$work/$1" ]; then
        failed=$((failed + 1))
        failures="$failures $1"
        echo "FAIL: $1: nvcc failed:"
        tail -n 20 "$work/$1.build"
        return 1
    fi
    return 0
}

# ---- running -------------------------------------------------------------------
# check NAME BINARY [xfail:REASON] [kemu exec options...] -- [program args...]
# expects exit status 0, a "PASS" line, and no loader warnings
check() {
    name=$1
    binary=$2
    shift 2
    xfail=""
    case "${1:-}" in xfail:*) xfail=${1#xfail:}; shift ;; esac
    opts=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        opts="$opts $1"
        shift
    done
    [ $# -gt 0 ] && shift
    selected "$name" || selected "$binary" || return 0
    if [ "$native" = 1 ] && [ -n "$opts" ]; then
        skipped=$((skipped + 1))
        echo "SKIP: $name (kemu exec$opts)"
        return 0
    fi
    built "$binary" || return 0
    if [ "$native" = 1 ]; then
        timeout 300 "$work/$binary" "$@" > "$work/$name.out" 2> "$work/$name.err"
    else
        # shellcheck disable=SC2086
        timeout "${KEMU_CUDA_EXEC_LIMIT:-300}" $exec_env "$KEMU" exec $opts -- "$work/$binary" "$@" > "$work/$name.out" 2> "$work/$name.err"
    fi
    rc=$?
    problem=""
    if [ $rc -ne 0 ]; then
        problem="exit status $rc"
    elif ! grep -q "^PASS" "$work/$name.out"; then
        problem="no PASS line"
    elif grep -q "no version information available" "$work/$name.err"; then
        problem="the loader warned about symbol versions"
    fi
    if [ -n "$xfail" ]; then
        if [ -n "$problem" ]; then
            xfailed=$((xfailed + 1))
            echo "XFAIL: $name ($xfail)"
        else
            pass "$name"
            echo "note: $name passes now; remove its expected-failure mark in tests/cuda/run.sh"
        fi
        return 0
    fi
    if [ -n "$problem" ]; then
        fail "$name" "$problem"
    else
        pass "$name"
    fi
}

# expect_message NAME BINARY STATUS TEXT [kemu exec options...] -- [args...]
# expects exit status STATUS and TEXT in stderr
expect_message() {
    name=$1
    binary=$2
    status=$3
    text=$4
    shift 4
    opts=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        opts="$opts $1"
        shift
    done
    [ $# -gt 0 ] && shift
    selected "$name" || selected "$binary" || return 0
    if [ "$native" = 1 ]; then
        skipped=$((skipped + 1))
        echo "SKIP: $name (a kemu message)"
        return 0
    fi
    built "$binary" || return 0
    # shellcheck disable=SC2086
    timeout 300 $exec_env "$KEMU" exec $opts -- "$work/$binary" "$@" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    if [ $rc -ne "$status" ]; then
        fail "$name" "exit status $rc, expected $status"
    elif ! grep -qF -- "$text" "$work/$name.err"; then
        fail "$name" "stderr lacks: $text"
    else
        pass "$name"
    fi
}

shared="-cudart shared -arch=sm_80"

build elementwise "$shared" elementwise.cu
build elementwise_raw "$shared --no-compress" elementwise.cu
build elementwise_lz4 "$shared --compress-mode=speed" elementwise.cu
build elementwise_rdc "$shared -rdc=true" elementwise.cu
build elementwise_lineinfo "$shared -lineinfo" elementwise.cu
build elementwise_multi "-cudart shared -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=compute_90 -gencode arch=compute_80,code=sm_80" elementwise.cu
build elementwise_sm90ptx "-cudart shared -gencode arch=compute_90,code=compute_90" elementwise.cu
build elementwise_static "-arch=sm_80" elementwise.cu
build reduce_shared "$shared" reduce_shared.cu
build reduce_shuffle "$shared" reduce_shuffle.cu
build gemm_tiled "$shared" gemm_tiled.cu
build histogram "$shared" histogram.cu
build scan "$shared" scan.cu
build transpose "$shared" transpose.cu
build softmax "$shared" softmax.cu
build half_bf16 "$shared" half_bf16.cu
build divergence_votes "$shared" divergence_votes.cu
build threadfence_reduction "$shared" threadfence_reduction.cu
build printf "$shared" printf.cu
build grid3d "$shared" grid3d.cu
build dynshared_const "$shared" dynshared_const.cu
build int64_double "$shared" int64_double.cu
build streams_events "$shared" streams_events.cu
build graph_capture "$shared" graph_capture.cu
build graph_explicit "$shared" graph_explicit.cu
build graph_errors "$shared" graph_errors.cu
build graph_conditional "$shared" graph_conditional.cu
build mempool "$shared" mempool.cu
build host_threads "$shared" host_threads.cu
build multi_tu "$shared" multi_tu_main.cu multi_tu_kernels.cu
build rdc "$shared -rdc=true" rdc_main.cu rdc_lib.cu
build rdc_lineinfo "$shared -rdc=true -lineinfo" rdc_main.cu rdc_lib.cu
build faults "$shared" faults.cu
build api_errors "$shared" api_errors.cu
build device_api "$shared" device_api.cu
build multigpu_shards "$shared" multigpu_shards.cu
build peer_access "$shared" peer_access.cu
build multigpu_threads "$shared -Xcompiler -pthread" multigpu_threads.cu
build stream_race "$shared" stream_race.cu
build memory_api "$shared" memory_api.cu
build launch_api "$shared" launch_api.cu
build texture "$shared" texture.cu
build texture_layered "$shared" texture_layered.cu
build cluster "-cudart shared -arch=sm_90" cluster.cu
build cooperative "$shared" cooperative.cu
build cubin_only "-cudart shared -gencode arch=compute_80,code=sm_80" cubin_only.cu
build reduce_shared_sm90 "-cudart shared -arch=sm_90" reduce_shared.cu
build async_copy "-cudart shared -arch=sm_90a -std=c++17" async_copy.cu
build tma "-cudart shared -arch=sm_90a -std=c++17" tma.cu
build killed "$shared" killed.cu
# cuRAND's host API: under kemu exec, kemu's libcurand.so.10 (src/vendor/)
build curand_host "$shared -lcurand" curand_host.cu
# a DT_RPATH to the toolkit outranks LD_LIBRARY_PATH: kemu exec preloads kemu's libraries then
cuda_lib=$(cd "$(dirname "$NVCC")/../lib64" 2>/dev/null && pwd)
build curand_host_rpath "$shared -lcurand -Xlinker --disable-new-dtags -Xlinker -rpath=${cuda_lib:-/usr/local/cuda/lib64}" curand_host.cu
# cuBLAS / cuBLASLt programs: kemu's libcublas is built only with OpenBLAS
cublas_dir=${KEMU_CUDART_DIR:-$top_builddir/lib/kemu}
have_cublas=0
if [ "$native" = 1 ] || [ -f "$cublas_dir/libcublas.so.13" ]; then
    have_cublas=1
    build cublas_gemm "$shared -lcublas" cublas_gemm.cu
    build cublaslt_matmul "$shared -lcublasLt" cublaslt_matmul.cu
    build cublaslt_epilogues "$shared -lcublasLt" cublaslt_epilogues.cu
    build cublas_errors "$shared -lcublas -lcublasLt" cublas_errors.cu
    build cublas_level3 "$shared -lcublas" cublas_level3.cu
    # a DT_RPATH to the toolkit's libraries outranks LD_LIBRARY_PATH: kemu
    # exec preloads its libcublasLt then
    build cublaslt_rpath "$shared -lcublasLt -Xlinker --disable-new-dtags -Xlinker -rpath=$(cd "$(dirname "$NVCC")/../lib64" 2>/dev/null && pwd)" cublaslt_matmul.cu
fi
build cdp_sort "$shared -rdc=true -lcudadevrt" cdp_sort.cu
build cdp_streams "$shared -rdc=true -lcudadevrt" cdp_streams.cu
build cdp_limits "$shared -rdc=true -lcudadevrt" cdp_limits.cu
build heap_limit "$shared" heap_limit.cu
build array_linear "$shared" array_linear.cu
build stream_attrs "$shared" stream_attrs.cu
build cdp_fault "$shared -rdc=true -lcudadevrt" cdp_fault.cu
build cdp_fault_cdp1 "$shared -rdc=true -lcudadevrt -DCUDA_FORCE_CDP1_IF_SUPPORTED -D__CDPRT_SUPPRESS_SYNC_DEPRECATION_WARNING" cdp_fault.cu
build cdp_race "$shared -rdc=true -lcudadevrt" cdp_race.cu
build cdp_memcpy "$shared -rdc=true -lcudadevrt" cdp_memcpy.cu
build cdp_memcpy3d "$shared -rdc=true -lcudadevrt" cdp_memcpy3d.cu
run_builds

# the self-checking programs
check elementwise elementwise # nvcc 13 compresses PTX with zstd by default
check elementwise_raw elementwise_raw
check elementwise_lz4 elementwise_lz4
check elementwise_rdc elementwise_rdc
# kemu exec --fidelity-report: the report at exit, per kernel
expect_message elementwise_fidelity elementwise 0 "kemu: fidelity of _Z" --fidelity-report --
check elementwise_lineinfo elementwise_lineinfo
check elementwise_multi elementwise_multi
check elementwise_multi_sm80 elementwise_multi --arch sm_80
check elementwise_threads1 elementwise --threads 1
check elementwise_random_schedule elementwise --schedule random:7
check elementwise_memcheck elementwise --tool memcheck
check reduce_shared reduce_shared
check reduce_shared_sm90 reduce_shared_sm90
check reduce_shuffle reduce_shuffle
check reduce_shuffle_racecheck reduce_shuffle --tool racecheck
check gemm_tiled gemm_tiled
check histogram histogram
check scan scan
check transpose transpose
check softmax softmax
check half_bf16 half_bf16
check divergence_votes divergence_votes
check threadfence_reduction threadfence_reduction
check grid3d grid3d
check dynshared_const dynshared_const
check int64_double int64_double
check streams_events streams_events
check graph_capture graph_capture
check graph_capture_racecheck graph_capture --tool racecheck,memcheck --error-exitcode 9
check graph_explicit graph_explicit
check graph_explicit_memcheck graph_explicit --tool memcheck,initcheck --error-exitcode 9
check graph_errors graph_errors
check graph_conditional graph_conditional
check graph_conditional_checkers graph_conditional --tool memcheck,initcheck --leak-check full --error-exitcode 9
# cudaGraphSetConditional with device memory that is no handle faults the kernel
expect_message graph_conditional_badhandle graph_conditional 0 "is not a conditional handle" -- badhandle
check mempool mempool
check host_threads host_threads
check multi_tu multi_tu
check rdc rdc
check rdc_lineinfo rdc_lineinfo
check api_errors api_errors
check device_api device_api
# several devices (docs/multigpu.md)
check multigpu_shards_2 multigpu_shards --devices 2 -- 2
check multigpu_shards_4 multigpu_shards --devices 4 -- 4
if [ "$native" != 1 ]; then # KEMU_DEVICES does what --devices does
    KEMU_DEVICES=3
    export KEMU_DEVICES
    check multigpu_shards_env multigpu_shards -- 3
    unset KEMU_DEVICES
fi
check peer_access_allowed peer_access --devices 2 -- allowed
for mode in refused disabled; do
    check "peer_access_$mode" peer_access --devices 2 -- "$mode"
    [ "$native" != 1 ] && selected "peer_access_$mode" && [ -f "$work/peer_access_$mode.err" ] &&
        ! grep -q "^kemu: kernel '.*read_kernel.*' faulted: illegal address: global load of 4 bytes at 0x[0-9a-f]* (allocation #[0-9]* of device 1 (4000 bytes at 0x[0-9a-f]*), offset [0-9]*; peer access from device 0 to device 1 is not enabled)" "$work/peer_access_$mode.err" &&
        fail "peer_access_$mode" "no kemu fault message naming the peer access on stderr"
done
check multigpu_threads multigpu_threads --devices 2 --timeout 120 --
# racecheck across streams and devices (docs/checkers.md): planted missing
# waits, and their fixed twins clean
for mode in kernels_fixed memcpy_fixed legacy_blocking host_sync event_sync many strided; do
    check "stream_race_$mode" stream_race --tool racecheck --error-exitcode 9 -- "$mode"
done
check stream_race_peer_fixed stream_race --devices 2 --tool racecheck --error-exitcode 9 -- peer_fixed
expect_message stream_race_kernels_racy stream_race 9 "and Read access at _Z5twicePKiPii" --tool racecheck --error-exitcode 9 -- kernels_racy
expect_message stream_race_strided_racy stream_race 9 "and Read access at _Z10twice_evenPKiPii" --tool racecheck --error-exitcode 9 -- strided_racy
expect_message stream_race_memcpy_racy stream_race 9 "and Read access by cudaMemcpyAsync [RAW hazard]" --tool racecheck --error-exitcode 9 -- memcpy_racy
expect_message stream_race_legacy_nonblocking stream_race 9 "between kernel '_Z4fillPiii' on the legacy default stream of device 0 and kernel '_Z5twicePKiPii' on non-blocking stream" --tool racecheck --error-exitcode 9 -- legacy_nonblocking
expect_message stream_race_peer_racy stream_race 9 "(allocation #1 + 0 of device 1), between kernel '_Z4fillPiii' on stream 2 (cudaStreamGetId) of device 0 and kernel '_Z5twicePKiPii' on stream 1 (cudaStreamGetId) of device 1" --devices 2 --tool racecheck --error-exitcode 9 -- peer_racy
# without racecheck the racy program passes under kemu (issue order); not
# run natively, where a GPU may overlap its kernels
[ "$native" != 1 ] && check stream_race_kernels_racy_unchecked stream_race -- kernels_racy
# a graph's nodes are operations of its launch's stream (with 2 devices the
# runtime's lock is released around each kernel node, after a copy node)
check stream_race_graph_fixed stream_race --devices 2 --tool racecheck --error-exitcode 9 -- graph_fixed
expect_message stream_race_graph_racy stream_race 9 "between kernel '_Z4fillPiii' on stream 1 (cudaStreamGetId) of device 0 and kernel '_Z5twicePKiPii' on stream 2" --devices 2 --tool racecheck --error-exitcode 9 -- graph_racy
# programs with several streams, devices and host threads: clean under racecheck
check streams_events_racecheck streams_events --tool racecheck --error-exitcode 9
check host_threads_racecheck host_threads --tool racecheck --error-exitcode 9
check multigpu_shards_racecheck multigpu_shards --devices 2 --tool racecheck --error-exitcode 9 -- 2
check peer_access_racecheck peer_access --devices 2 --tool racecheck --error-exitcode 9 -- allowed
check multigpu_threads_racecheck multigpu_threads --devices 2 --timeout 120 --tool racecheck --error-exitcode 9 --
check graph_conditional_racecheck graph_conditional --tool racecheck --error-exitcode 9
check memory_api_racecheck memory_api --tool racecheck --error-exitcode 9
check launch_api_racecheck launch_api --tool racecheck --error-exitcode 9
expect_message multigpu_devices_bad multigpu_shards 2 "--devices wants a number of devices from 1 to 16, got '0'" --devices 0 -- 2
check memory_api memory_api
check launch_api launch_api
check texture texture
check texture_layered texture_layered
check cluster cluster
check async_copy async_copy
check async_copy_racecheck async_copy --tool racecheck,synccheck --error-exitcode 9
check tma tma
check tma_checkers tma --tool racecheck,synccheck,initcheck,memcheck --error-exitcode 9
# grid.sync(): the grid workspace (%envreg1/%envreg2) and every block
# co-resident (docs/cudart.md, "Cooperative launches")
check cooperative cooperative
check cooperative_checkers cooperative --tool racecheck,synccheck,initcheck,memcheck --error-exitcode 9
# dynamic parallelism (docs/cudart.md, "Dynamic parallelism")
check cdp_sort cdp_sort
check cdp_sort_threads1 cdp_sort --threads 1
check cdp_sort_racecheck cdp_sort --tool racecheck --error-exitcode 9
# libcudadevrt's container (PTX for the newest SM) does not choose the emulated GPU
expect_message cdp_default_arch cdp_sort 0 "(highest PTX: compute_80)" --trace --
check cdp_streams cdp_streams
check cdp_streams_checkers cdp_streams --tool racecheck,memcheck,initcheck,synccheck --error-exitcode 9
check cdp_limits cdp_limits
check heap_limit heap_limit
check array_linear array_linear
check array_linear_memcheck array_linear --tool memcheck,initcheck --error-exitcode 9
check stream_attrs stream_attrs
check cdp_fault cdp_fault
[ "$native" != 1 ] && selected cdp_fault && [ -f "$work/cdp_fault.err" ] &&
    ! grep -q "launched from device code by block (0,0,0), thread (0,0,0) of kernel '_Z6parentPiS_'" "$work/cdp_fault.err" &&
    fail cdp_fault "the fault message does not name the launching kernel"
expect_message cdp_fault_cdp1 cdp_fault_cdp1 0 "device-side cudaDeviceSynchronize is not supported" -- sync
check cdp_race_clean cdp_race --tool racecheck --error-exitcode 9 -- clean
expect_message cdp_race_planted cdp_race 9 "after it launched" --tool racecheck --error-exitcode 9 -- racy
check cdp_memcpy cdp_memcpy
check cdp_memcpy_checkers cdp_memcpy --tool memcheck,initcheck,racecheck --error-exitcode 9
check cdp_memcpy3d cdp_memcpy3d
check cdp_memcpy3d_checkers cdp_memcpy3d --tool memcheck,initcheck,racecheck --error-exitcode 9
for mode in illegal misaligned assert trap reset; do
    if [ "$native" = 1 ] && [ "$mode" = reset ]; then
        # kemu recovers as the documentation says; on the H200 tried, it did not
        check faults_reset faults "xfail:on an H200 (driver 580.159.04) cudaMalloc after cudaDeviceReset following a fault returned cudaErrorDevicesUnavailable" -- reset
        continue
    fi
    check "faults_$mode" faults -- "$mode"
    [ "$native" != 1 ] && selected "faults_$mode" && [ -f "$work/faults_$mode.err" ] &&
        ! grep -q "^kemu: kernel '.*' faulted" "$work/faults_$mode.err" &&
        fail "faults_$mode" "no kemu fault message on stderr"
done

# --timeout bounds a launch of 2^31-1 blocks (each block checks the watchdog's
# flag): cudaErrorLaunchTimeout within seconds (timeout(1) gives it 20)
KEMU_CUDA_EXEC_LIMIT=20
check faults_timeout faults --timeout 1 -- timeout
KEMU_CUDA_EXEC_LIMIT=
[ "$native" != 1 ] && selected faults_timeout && [ -f "$work/faults_timeout.err" ] &&
    ! grep -q "^kemu: kernel '.*nothing.*' faulted: the launch timed out after 1 seconds (--timeout)" "$work/faults_timeout.err" &&
    fail faults_timeout "no kemu timeout message on stderr"

# cuRAND's host API against its device API (docs/cudart.md, "cuRAND"); what
# it generates is initialized memory for a kernel that reads it
check curand_host curand_host
check curand_host_checkers curand_host --tool initcheck,memcheck --error-exitcode 9
check curand_host_rpath curand_host_rpath
expect_message curand_host_unsupported curand_host 0 "kemu: curandCreateGenerator: CURAND_RNG_TEST is not supported yet" -- unsupported
expect_message curand_host_capture curand_host 0 "kemu: curandGenerateUniform: generating into a stream that is being captured is not supported yet" -- unsupported
# cuBLAS and cuBLASLt against host loops; a kernel reading a GEMM result
# is clean under initcheck (the library marks its outputs written); the
# messages for what kemu's libraries refuse (docs/cudart.md, "cuBLAS")
if [ "$have_cublas" = 1 ]; then
    check cublas_gemm cublas_gemm
    check cublas_gemm_checkers cublas_gemm --tool initcheck,memcheck,racecheck --error-exitcode 9
    check cublaslt_matmul cublaslt_matmul
    check cublaslt_epilogues cublaslt_epilogues
    # what the epilogues write (the auxiliary matrix, bias gradients) is
    # initialized for the backward ones that read it
    check cublaslt_epilogues_checkers cublaslt_epilogues --tool initcheck,memcheck --error-exitcode 9
    check cublaslt_rpath cublaslt_rpath
    check cublas_level3 cublas_level3
    # only the triangles a routine reads are checked by initcheck, and what
    # it writes is initialized for what reads it next
    check cublas_level3_checkers cublas_level3 --tool initcheck,memcheck --error-exitcode 9
    expect_message cublas_64_big cublas_level3 0 "cublasSaxpy_v2_64: sizes, increments or leading dimensions above 2^31-1 are not supported by kemu" -- big
    check cublas_errors cublas_errors
    check cublas_threads cublas_errors --threads 1 -- threads 1
    expect_message cublas_unsupported cublas_errors 0 "kemu: cublasStpsv_v2 is not supported yet" -- unsupported
    expect_message cublas_row_order cublas_errors 0 "CUBLASLT_ORDER_ROW is not supported" -- row
    expect_message cublas_bad_pointer cublas_errors 0 "cublasSgemm_v2: argument C: " -- badptr
    expect_message cublas_capture cublas_errors 0 "kemu does not capture library calls" -- capture
    expect_message cublas_uninit cublas_errors 9 "Uninitialized __global__ memory read by cublasSgemm_v2 argument B: 1024 of its 1024 bytes never written" --tool initcheck --error-exitcode 9 -- uninit
    # where kemu's libcublas is missing, kemu exec says so
    if [ "$native" != 1 ] && selected cublas_missing && built cublas_errors; then
        mkdir -p "$work/cudart_only"
        cp "$cublas_dir/libcudart.so.13" "$work/cudart_only/"
        KEMU_CUDART_DIR="$work/cudart_only" timeout 300 $exec_env "$KEMU" exec "$work/cublas_errors" \
            > "$work/cublas_missing.out" 2> "$work/cublas_missing.err"
        if grep -q "links libcublas.so.13, but kemu's was not built" "$work/cublas_missing.err"; then
            pass cublas_missing
        else
            fail cublas_missing "no warning that kemu's libcublas is missing"
        fi
    fi
else
    for name in cublas_gemm cublaslt_matmul cublaslt_epilogues cublas_level3 cublas_errors; do
        selected "$name" || continue
        skipped=$((skipped + 1))
        echo "SKIP: $name (kemu's libcublas is not built: configure found no OpenBLAS)"
    done
fi

# device printf: the whole stdout, in order
check printf printf
if selected printf && [ -f "$work/printf.out" ]; then
    if diff "$here/printf.expected" "$work/printf.out" > "$work/printf.diff"; then
        pass printf_output
    else
        fail printf_output "stdout differs from printf.expected: $(head -n 6 "$work/printf.diff")"
    fi
fi

# the checkers' report of a program that does not return from main (a racy
# launch, then it waits or leaves): killed by SIGTERM sent to kemu exec
# (which passes it on), by SIGTERM from timeout(1) (to both), by SIGINT sent
# to the program, or leaving through _exit() (kemu exec prints the report
# its runtime left), or exit() (the program prints it)
killed_case() {
    name=$1
    how=$2
    selected "$name" || selected killed || return 0
    if [ "$native" = 1 ]; then
        skipped=$((skipped + 1))
        echo "SKIP: $name (kemu's report)"
        return 0
    fi
    built killed || return 0
    out="$work/$name.out"
    err="$work/$name.err"
    want=9
    case "$how" in
    exit | _exit)
        timeout 300 $exec_env "$KEMU" exec --tool racecheck --error-exitcode 9 -- "$work/killed" "$how" > "$out" 2> "$err"
        rc=$?
        ;;
    timeout)
        # long enough for the launch even in a sanitizer build; what is
        # checked is that a report comes, whatever the launch had reached
        want=124
        timeout -s TERM 10 $exec_env "$KEMU" exec --tool racecheck --error-exitcode 9 -- "$work/killed" wait > "$out" 2> "$err"
        rc=$?
        ;;
    term-kemu | int-program)
        # a background job of a non-interactive shell ignores SIGINT: env
        # gives the program the default action back
        defint=""
        if [ "$how" = int-program ]; then
            if ! env --default-signal=INT true 2> /dev/null; then
                skipped=$((skipped + 1))
                echo "SKIP: $name (env --default-signal is missing)"
                return 0
            fi
            defint="env --default-signal=INT"
        fi
        $defint $exec_env "$KEMU" exec --tool racecheck --error-exitcode 9 -- "$work/killed" wait > "$out" 2> "$err" &
        pid=$!
        tries=0
        while ! grep -q "^launched" "$out" 2> /dev/null && [ $tries -lt 600 ]; do
            sleep 0.2
            tries=$((tries + 1))
        done
        if [ "$how" = term-kemu ]; then
            kill -TERM "$pid"
        else
            kill -INT "$(sed -n 's/^launched //p' "$out")"
        fi
        wait "$pid"
        rc=$?
        ;;
    esac
    if [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want"
    elif ! grep -q "^========= ERROR SUMMARY: " "$err"; then
        fail "$name" "no checkers' report"
    elif [ "$how" != timeout ] && ! grep -q "^========= ERROR SUMMARY: [1-9]" "$err"; then
        fail "$name" "the report lacks the race"
    elif [ "$how" != exit ] && ! grep -q "^kemu exec: .* before printing its checkers' report" "$err"; then
        fail "$name" "no note that kemu exec printed the report"
    else
        pass "$name"
    fi
}
killed_case killed_term_kemu term-kemu
killed_case killed_int_program int-program
killed_case killed_timeout timeout
killed_case killed__exit _exit
killed_case killed_exit exit

# programs kemu cannot run, and the messages that say so
expect_message static_runtime elementwise_static 2 "rebuild it with \`nvcc -cudart shared\`"
expect_message cubin_only_message cubin_only 0 "embed it with -gencode arch=compute_XX,code=compute_XX"
# racecheck sees the kernels that graph launches run
expect_message graph_explicit_race graph_explicit 9 "RAW hazard" --tool racecheck --error-exitcode 9 -- race
expect_message ptx_too_new elementwise_sm90ptx 1 "above the emulated sm_80" --arch sm_80
if [ "$native" = 1 ]; then
    for name in not_cuda abi_layout cudart12; do
        selected "$name" || continue
        skipped=$((skipped + 1))
        echo "SKIP: $name (about kemu itself)"
    done
elif selected not_cuda; then
    $exec_env "$KEMU" exec /bin/true > "$work/not_cuda.out" 2> "$work/not_cuda.err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "does not use the CUDA runtime" "$work/not_cuda.err"; then
        pass not_cuda
    else
        fail not_cuda "exit status $rc"
    fi
fi

# kemu's struct layouts against CUDA's headers
if [ "$native" != 1 ] && selected abi_layout; then
    CC=${CC:-cc}
    if [ -n "$cuda_include" ] && [ -f "$cuda_include/cuda_runtime_api.h" ] &&
        $CC -I"$top_srcdir/src" -I"$top_builddir" -o "$work/abi_kemu" "$here/abi_layout.c" 2> "$work/abi_layout.err" &&
        $CC -DUSE_CUDA_HEADERS -I"$cuda_include" -o "$work/abi_cuda" "$here/abi_layout.c" 2>> "$work/abi_layout.err"; then
        "$work/abi_kemu" > "$work/abi_kemu.txt"
        "$work/abi_cuda" > "$work/abi_cuda.txt"
        if diff "$work/abi_cuda.txt" "$work/abi_kemu.txt" > "$work/abi_layout.out"; then
            pass abi_layout
        else
            fail abi_layout "layouts differ from CUDA's"
        fi
    else
        skipped=$((skipped + 1))
        echo "SKIP: abi_layout (CUDA headers or a C compiler missing)"
    fi
fi

# the libcudart.so.12 flavour exports the CUDA 12 symbol versions
if [ "$native" != 1 ] && selected cudart12; then
    dir=${KEMU_CUDART_DIR:-$top_builddir/lib/kemu}
    if [ -f "$dir/libcudart.so.12" ] && command -v readelf > /dev/null 2>&1; then
        if readelf -dV "$dir/libcudart.so.12" | grep -q "Name: libcudart.so.12" &&
            readelf -d "$dir/libcudart.so.12" | grep -q "SONAME.*libcudart.so.12"; then
            pass cudart12
        else
            fail cudart12 "libcudart.so.12 lacks its soname or version node"
        fi
    else
        skipped=$((skipped + 1))
        echo "SKIP: cudart12 ($dir/libcudart.so.12 or readelf missing)"
    fi
fi

# kemu's libcublas / libcublasLt carry the soname and version node of their
# flavour (what nvcc-built programs import: "Name: libcublas.so.13")
if [ "$native" != 1 ] && selected cublas_versions; then
    dir=${KEMU_CUDART_DIR:-$top_builddir/lib/kemu}
    if [ -f "$dir/libcublas.so.13" ] && command -v readelf > /dev/null 2>&1; then
        bad=""
        for lib in libcublas.so.13 libcublas.so.12 libcublasLt.so.13 libcublasLt.so.12; do
            readelf -dV "$dir/$lib" 2> /dev/null | grep -q "Name: $lib" &&
                readelf -d "$dir/$lib" | grep -q "SONAME.*\[$lib\]" || bad="$bad $lib"
        done
        if [ -z "$bad" ]; then
            pass cublas_versions
        else
            fail cublas_versions "lacking their soname or version node:$bad"
        fi
    else
        skipped=$((skipped + 1))
        echo "SKIP: cublas_versions (kemu's libcublas or readelf missing)"
    fi
fi

echo "tests/cuda: $passed passed, $failed failed, $skipped skipped, $xfailed expected failures"
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
