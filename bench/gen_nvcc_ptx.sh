#!/bin/sh
# Compiles bench/kernels/many_templates.cu (3072 template instantiations)
# to PTX with nvcc, for running the PTX load benchmark on real nvcc output
# instead of the generator's imitation of it. The PTX (about 9 MB) is not
# committed; this writes it where asked.
#
#   bench/gen_nvcc_ptx.sh OUT.ptx [ARCH]     (ARCH defaults to sm_80)
#
# Uses $NVCC, else nvcc from PATH; exits 77 (skip) when there is none.
set -eu
out=${1:?usage: gen_nvcc_ptx.sh OUT.ptx [ARCH]}
arch=${2:-sm_80}
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${NVCC:-$(command -v nvcc || true)}
if [ -z "$nvcc" ]; then
    echo "gen_nvcc_ptx: nvcc not found (set NVCC)" >&2
    exit 77
fi
"$nvcc" -arch="$arch" -O3 -ptx "$here/kernels/many_templates.cu" -o "$out"
