#!/usr/bin/env bash
# Regenerate the committed PTX of the launch-plan test kernels:
#   plan.ptx   nvcc -ptx -arch=sm_80 -O3 plan.cu
# Assembled with ptxas when it is present.
# Usage: tests/plan/regen.sh        Env: NVCC (default nvcc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"
tmp="$here/plan.ptx.tmp"
(cd "$here" && "$NVCC" -ptx -arch=sm_80 -O3 plan.cu -o "$tmp")
if command -v ptxas >/dev/null 2>&1; then
    ptxas -arch=sm_80 "$tmp" -o /dev/null
fi
mv "$tmp" "$here/plan.ptx"
echo "  plan.ptx (sm_80)"
