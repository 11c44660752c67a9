#!/bin/sh
# The NCCL benchmark (bench/nccl/nccl_bench.cu; docs/multigpu.md "Cost per
# collective byte"): AllReduce bytes per second in one process with 1, 2
# and 4 devices and, where Open MPI is there, across 2 processes of 1
# device; kernel throughput with 1 and 2 devices. Needs nvcc and kemu's
# libnccl.so.2; run from the build directory (or set KEMU, NVCC). Not part
# of `make check`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/.." && pwd)
top_builddir=${top_builddir:-$PWD}
KEMU=${KEMU:-$top_builddir/src/kemu}
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
library=$top_builddir/lib/kemu/libnccl.so.2
[ -f "$library" ] || { echo "nccl_bench: $library is not built (configure found no nccl.h)"; exit 1; }
nccl_include=$(sed -n 's/^NCCL_INCLUDE = //p' "$top_builddir/Makefile" 2>/dev/null)
work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-nccl-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib"
ln -s "$(cd "$(dirname "$library")" && pwd)/libnccl.so.2" "$work/lib/libnccl.so"
flags="-O2 -cudart shared -arch=sm_80 -Xcompiler -pthread -I$top_srcdir/tests/nccl -I$top_srcdir/tests/cuda -I${nccl_include:-/usr/local/cuda/include}"
# shellcheck disable=SC2086
"$NVCC" $flags -o "$work/nccl_bench" "$here/nccl/nccl_bench.cu" -L"$work/lib" -lnccl
for d in 1 2 4; do
    "$KEMU" exec --devices $d -- "$work/nccl_bench" | grep -v '^PASS'
done
# each device on one host thread: what running devices at once gives
echo "with --threads 1 (one host thread per device):"
"$KEMU" exec --devices 2 --threads 1 -- "$work/nccl_bench" | grep '^kernels'

if ldd "$library" | grep -q libmpi && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # shellcheck disable=SC2086,SC2046
    "$NVCC" $flags -DNCCL_TEST_MPI $(mpicc --showme:compile) -o "$work/nccl_bench_mpi" "$here/nccl/nccl_bench.cu" \
        -L"$work/lib" -lnccl $(mpicc --showme:link)
    mpirun --oversubscribe -n 2 "$KEMU" exec --devices 1 -- "$work/nccl_bench_mpi" | grep -v '^PASS'
    echo "with --threads 1 (each process on one host thread):"
    mpirun --oversubscribe -n 2 "$KEMU" exec --devices 1 --threads 1 -- "$work/nccl_bench_mpi" | grep -v '^PASS'
else
    echo "nccl_bench: no Open MPI build or mpirun: the run across processes is skipped"
fi
