#!/bin/sh
# Regenerates call_kernels.ptx from call_kernels.cu (sm_90, -O3) and checks
# it with ptxas when that is available.
# Usage: tests/e2e/cases/call-kernels/regen.sh        Env: NVCC (default nvcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-nvcc}
(cd "$here" && "$NVCC" -ptx -arch=sm_90 -O3 -std=c++17 call_kernels.cu -o call_kernels.ptx.tmp)
if command -v ptxas >/dev/null 2>&1; then
    ptxas -arch=sm_90 "$here/call_kernels.ptx.tmp" -o /dev/null
fi
mv "$here/call_kernels.ptx.tmp" "$here/call_kernels.ptx"
echo "  tests/e2e/cases/call-kernels/call_kernels.ptx"
