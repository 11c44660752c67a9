#!/usr/bin/env bash
# Regenerate the committed PTX of the checker test kernels (tests/check/):
#   race.ptx sync.ptx mem.ptx coop.ptx warp.ptx bounds.ptx barrier.ptx
#                               nvcc -ptx -arch=sm_80 -O3 -std=c++17 -lineinfo
#   cluster.ptx dsmem.ptx       the same for sm_90 (thread block clusters)
# regs.ptx is written by hand (CUDA C cannot express reading a register
# before writing it) and is not regenerated.
# Debug info names sources by absolute path; the path of this directory is
# stripped so the files (and the reports that quote them) do not depend on
# the machine. Every result is assembled with ptxas when it is present.
# Usage: tests/check/regen.sh        Env: NVCC (default nvcc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"

compile() {
    local name="$1" arch="$2" tmp="$here/$1.ptx.tmp"
    (cd "$here" && "$NVCC" -ptx -arch="$arch" -O3 -std=c++17 -lineinfo "$name.cu" -o "$tmp")
    sed -i "s|\"$here/|\"|" "$tmp"
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch="$arch" "$tmp" -o /dev/null
    fi
    mv "$tmp" "$here/$name.ptx"
    echo "  $name.ptx ($arch)"
}

compile race sm_80
compile sync sm_80
compile mem sm_80
compile coop sm_80
compile warp sm_80
compile bounds sm_80
compile barrier sm_80
compile cluster sm_90
compile dsmem sm_90
