#!/bin/sh
# Regenerates the committed PTX of the e2e kernels (NAME.cu -> NAME.ptx,
# sm_80, -O3; cdp_*.cu with -rdc=true, for their device launches) and checks
# it with ptxas when that is available.
# Usage: tests/e2e/kernels/regen.sh        Env: NVCC (default nvcc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-nvcc}
for cu in "$here"/*.cu; do
    name=$(basename "$cu" .cu)
    rdc=
    case "$name" in cdp_*) rdc=-rdc=true ;; esac
    (cd "$here" && "$NVCC" -ptx -arch=sm_80 -O3 -std=c++17 $rdc "$name.cu" -o "$name.ptx.tmp")
    if command -v ptxas >/dev/null 2>&1; then
        if [ -n "$rdc" ]; then
            ptxas -arch=sm_80 -c "$here/$name.ptx.tmp" -o /dev/null
        else
            ptxas -arch=sm_80 "$here/$name.ptx.tmp" -o /dev/null
        fi
    fi
    mv "$here/$name.ptx.tmp" "$here/$name.ptx"
    echo "  tests/e2e/kernels/$name.ptx"
done
