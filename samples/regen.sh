#!/usr/bin/env bash
# Regenerate samples/*/NAME.ptx from samples/*/NAME.cu (sm_80, -O3) and
# check each result with ptxas when it is available.
# Usage: samples/regen.sh        Env: NVCC (default nvcc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"

# The samples this script owns (samples/api/ is built differently).
SAMPLES=(saxpy reduce matmul histogram softmax)

for name in "${SAMPLES[@]}"; do
    dir="$here/$name"
    (cd "$dir" && "$NVCC" -ptx -arch=sm_80 -std=c++17 -O3 "$name.cu" -o "$name.ptx.tmp")
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch=sm_80 "$dir/$name.ptx.tmp" -o /dev/null
    fi
    mv "$dir/$name.ptx.tmp" "$dir/$name.ptx"
    echo "  $name/$name.ptx"
done
