#!/usr/bin/env bash
# Regenerate bench/kernels/NAME.ptx from NAME.cu (sm_80, -O3, C++17) for the
# kernels of the benchmark suite, checking each with ptxas when available.
# (many_templates.cu is compiled by bench/gen_nvcc_ptx.sh instead.)
# Usage: bench/kernels/regen.sh        Env: NVCC (default nvcc)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"
KERNELS=(scan transpose mandelbrot half_axpby styles tensor)

for name in "${KERNELS[@]}"; do
    (cd "$here" && "$NVCC" -ptx -arch=sm_80 -std=c++17 -O3 "$name.cu" -o "$name.ptx.tmp")
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch=sm_80 "$here/$name.ptx.tmp" -o /dev/null
    fi
    mv "$here/$name.ptx.tmp" "$here/$name.ptx"
    echo "  bench/kernels/$name.ptx"
done
