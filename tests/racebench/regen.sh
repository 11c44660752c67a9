#!/usr/bin/env bash
# Regenerates the committed PTX of the racebench kernels:
#   kernels/NAME.cu -> kernels/NAME.ptx   nvcc -ptx -arch=sm_80 -O3 -std=c++17 -lineinfo
# Debug info names sources by absolute path; this directory's path is
# stripped so the files (and the reports quoting them) do not depend on
# the machine. Every result is assembled with ptxas when it is present.
# Usage: tests/racebench/regen.sh        Env: NVCC (default nvcc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/kernels" && pwd)"
NVCC="${NVCC:-nvcc}"

for src in "$here"/*.cu; do
    name=$(basename "$src" .cu)
    tmp="$here/$name.ptx.tmp"
    (cd "$here" && "$NVCC" -ptx -arch=sm_80 -O3 -std=c++17 -lineinfo "$name.cu" -o "$tmp")
    sed -i "s|\"$here/|\"|" "$tmp"
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch=sm_80 "$tmp" -o /dev/null
    fi
    mv "$tmp" "$here/$name.ptx"
    echo "  kernels/$name.ptx"
done
