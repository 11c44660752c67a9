#!/bin/sh
# Regenerates samples/call/reverse_scale.ptx from reverse_scale.cu (sm_90,
# -O3) and checks it with ptxas when that is available.
# Usage: samples/call/regen.sh        Env: NVCC (default nvcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-nvcc}
for name in reverse_scale; do
    (cd "$here" && "$NVCC" -ptx -arch=sm_90 -O3 -std=c++17 "$name.cu" -o "$name.ptx.tmp")
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch=sm_90 "$here/$name.ptx.tmp" -o /dev/null
    fi
    mv "$here/$name.ptx.tmp" "$here/$name.ptx"
    echo "  samples/call/$name.ptx"
done
