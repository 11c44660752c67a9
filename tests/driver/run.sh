#!/bin/sh
# End-to-end tests of kemu's CUDA driver API (lib/kemu/libcuda.so.1,
# docs/driver.md): compiles kernels.cu, link_a.cu and link_b.cu to PTX (and
# kernels.cu to a cubin) with nvcc, the C programs drv_*.c with the host C
# compiler against the toolkit's cuda.h and its stub libcuda.so, and
# mixed.cu with nvcc; runs each under `kemu exec` and checks its PASS line,
# its exit status and the messages kemu prints (the cubin refusal, the
# fault). Exits 77 (automake's SKIP) when nvcc or the toolkit's cuda.h and
# stub libcuda.so are absent.
#
# Environment: KEMU, NVCC, CC, top_srcdir, top_builddir, KEMU_KEEP=1 (keep
# the build directory), KEMU_DRIVER_TESTS (names to run only those),
# KEMU_DRIVER_NATIVE=1 (run the programs directly, on a GPU through
# NVIDIA's driver, with the same expectations).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
KEMU=${KEMU:-$top_builddir/src/kemu}
NVCC=${NVCC:-}
[ -z "$NVCC" ] && NVCC=$(command -v nvcc 2>/dev/null || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -z "$NVCC" ] || ! "$NVCC" --version >/dev/null 2>&1; then
    echo "SKIP: nvcc not found; the driver API tests need it"
    exit 77
fi
nvcc_path=$NVCC
case $nvcc_path in */*) ;; *) nvcc_path=$(command -v "$NVCC" 2>/dev/null || echo "$NVCC") ;; esac
cuda_root=$(cd "$(dirname "$(readlink -f "$nvcc_path")")/.." && pwd)
stubs=
for d in lib64/stubs lib/stubs targets/x86_64-linux/lib/stubs; do
    [ -f "$cuda_root/$d/libcuda.so" ] && stubs=$cuda_root/$d && break
done
if [ ! -f "$cuda_root/include/cuda.h" ] || [ -z "$stubs" ]; then
    echo "SKIP: the toolkit's cuda.h or stub libcuda.so is missing"
    exit 77
fi
CC=${CC:-cc}
native=${KEMU_DRIVER_NATIVE:-0}
if [ "$native" != 1 ] && [ ! -x "$KEMU" ]; then
    echo "FAIL: $KEMU is not built"
    exit 1
fi
if [ "$native" != 1 ] && [ ! -f "$top_builddir/lib/kemu/libcuda.so.1" ]; then
    echo "FAIL: $top_builddir/lib/kemu/libcuda.so.1 is not built"
    exit 1
fi
# in a sanitizer build, the programs need the sanitizer runtimes preloaded
exec_env=
libkemu=$(ls "$top_builddir"/.libs/libkemu.so.[0-9]* 2>/dev/null | head -n 1)
if [ -n "$libkemu" ] && ldd "$libkemu" 2>/dev/null | grep -q libasan; then
    preload=$(ldd "$libkemu" | awk '/libasan|libubsan/ {printf "%s:", $3}')
    exec_env="env LD_PRELOAD=${preload%:} ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-driver-tests.XXXXXX")
if [ "${KEMU_KEEP:-0}" = 1 ]; then
    echo "keeping $work"
else
    trap 'rm -rf "$work"' EXIT
fi
passed=0
failed=0

selected() {
    [ -z "${KEMU_DRIVER_TESTS:-}" ] && return 0
    for t in $KEMU_DRIVER_TESTS; do [ "$t" = "$1" ] && return 0; done
    return 1
}
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL: $1"
    [ -f "$work/$1.out" ] && sed 's/^/    /' "$work/$1.out" | head -n 40
    failed=$((failed + 1))
}

# ---- build ----------------------------------------------------------------------
arch=sm_80
build_log=$work/build.log
if ! "$NVCC" -ptx -arch=compute_80 -o "$work/kernels.ptx" "$here/kernels.cu" >"$build_log" 2>&1 ||
   ! "$NVCC" -cubin -arch=$arch -o "$work/kernels.cubin" "$here/kernels.cu" >>"$build_log" 2>&1 ||
   ! "$NVCC" -ptx -rdc=true -arch=compute_80 -o "$work/link_a.ptx" "$here/link_a.cu" >>"$build_log" 2>&1 ||
   ! "$NVCC" -ptx -rdc=true -arch=compute_80 -o "$work/link_b.ptx" "$here/link_b.cu" >>"$build_log" 2>&1; then
    echo "FAIL: nvcc could not build the test kernels:"
    cat "$build_log"
    exit 1
fi
for p in drv_basic drv_link drv_streams drv_errors drv_texture drv_multigpu drv_graph; do
    if ! $CC -std=c11 -Wall -Wextra -Werror -Wno-deprecated-declarations -I"$cuda_root/include" -I"$here" -o "$work/$p" "$here/$p.c" \
        -L"$stubs" -lcuda >>"$build_log" 2>&1; then
        echo "FAIL: cannot compile $p.c:"
        cat "$build_log"
        exit 1
    fi
done
if ! "$NVCC" -cudart shared -arch=$arch -o "$work/mixed" "$here/mixed.cu" -L"$stubs" -lcuda >>"$build_log" 2>&1; then
    echo "FAIL: nvcc could not build mixed.cu:"
    cat "$build_log"
    exit 1
fi

# run NAME ARGS...: runs the program under kemu exec (or natively)
run() {
    name=$1
    shift
    if [ "$native" = 1 ]; then
        KEMU_DRIVER_NATIVE=1 "$work/$name" "$@" >"$work/$name.out" 2>&1
    else
        $exec_env "$KEMU" exec "$work/$name" "$@" >"$work/$name.out" 2>&1
    fi
}

# check NAME ARGS...: the program prints "PASS NAME", exits 0, and the
# loader printed no warnings
check() {
    name=$1
    selected "$name" || return 0
    run "$@"
    rc=$?
    if [ $rc -eq 0 ] && grep -qx "PASS $name" "$work/$name.out" && ! grep -q 'no version information' "$work/$name.out"; then
        pass "$name"
    else
        echo "    (exit status $rc)" >>"$work/$name.out"
        fail "$name"
    fi
}

check drv_basic "$work/kernels.ptx"
check drv_link "$work/link_a.ptx" "$work/link_b.ptx"
check drv_streams "$work/kernels.ptx"
check drv_graph "$work/kernels.ptx"
check drv_errors "$work/kernels.ptx" "$work/kernels.cubin"
check drv_texture "$work/kernels.ptx"
check mixed "$work/kernels.ptx"
# several devices (docs/multigpu.md): two emulated ones, or two GPUs natively
KEMU_DEVICES=2
export KEMU_DEVICES
check drv_multigpu "$work/kernels.ptx"
unset KEMU_DEVICES

if [ "$native" != 1 ]; then
    # the messages: the cubin refusal names the fix, the fault names the kernel
    if selected drv_errors_messages; then
        if grep -q 'is a cubin (SASS for sm_80) without PTX; kemu runs PTX' "$work/drv_errors.out" &&
           grep -q "kernel 'write_far' faulted: illegal address" "$work/drv_errors.out"; then
            pass drv_errors_messages
        else
            fail drv_errors
        fi
    fi
    # unimplemented driver functions say so by name and return 801
    if selected drv_stub; then
        cat >"$work/drv_stub.c" <<'PROG'
#include <cuda.h>
#include <stdio.h>
int main(void)
{
    CUresult r1 = cuInit(0), r2 = cuIpcCloseMemHandle(0), r3 = cuIpcCloseMemHandle(0);
    printf("%d %d %d\n", (int)r1, (int)r2, (int)r3);
    return 0;
}
PROG
        if $CC -I"$cuda_root/include" -o "$work/drv_stub" "$work/drv_stub.c" -L"$stubs" -lcuda >>"$build_log" 2>&1 &&
           run drv_stub && grep -qx '0 801 801' "$work/drv_stub.out" &&
           [ "$(grep -c 'kemu: cuIpcCloseMemHandle is not supported yet' "$work/drv_stub.out")" = 1 ]; then
            pass drv_stub
        else
            fail drv_stub
        fi
    fi
    # racecheck sees launches made through the driver API
    if selected drv_racecheck; then
        if $exec_env "$KEMU" exec --tool racecheck "$work/drv_basic" "$work/kernels.ptx" >"$work/drv_racecheck.out" 2>&1 &&
           grep -qx 'PASS drv_basic' "$work/drv_racecheck.out" && grep -q 'RACECHECK SUMMARY: 0 hazards displayed' "$work/drv_racecheck.out"; then
            pass drv_racecheck
        else
            fail drv_racecheck
        fi
    fi
fi

echo "driver API tests: $passed passed, $failed failed"
[ $failed -eq 0 ]
