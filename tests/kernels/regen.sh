#!/usr/bin/env bash
# Regenerate the committed PTX for every tests/kernels/*.cu with nvcc.
#
# Output names, beside each NAME.cu:
#   NAME.sm_75.O3.ptx  NAME.sm_80.O3.ptx  NAME.sm_90.O3.ptx   optimized (the default)
#   NAME.sm_XX.G.ptx                                          device debug (-G; no optimization)
#   NAME.sm_80.lineinfo.ptx                                   optimized + .loc (-lineinfo)
#   NAME.sm_90a.*.ptx      for the files of SM90A_FILES (sm_90a-only instructions)
# Combinations that cannot compile are listed in SKIP below. Kernels that
# need a newer target than sm_75 are fenced with #if __CUDA_ARCH__ >= N in
# the .cu, so the older PTX simply lacks them.
#
# Every generated file is also assembled with ptxas (when present) so that
# invalid inline asm is caught here rather than in kemu's tests.
#
# Usage: tests/kernels/regen.sh [NAME.cu ...]     (default: all *.cu)
# Env:   NVCC (default nvcc), JOBS (parallel jobs, default 2)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC="${NVCC:-nvcc}"
JOBS="${JOBS:-2}"
export NVCC here

# Combinations that are not generated, as "FILE VARIANT" (VARIANT as in the
# output name). Each with its reason.
SKIP=(
    # thread block clusters, %cluster_* registers and mapa exist only on sm_90+
    "cluster.cu sm_75.O3"
    "cluster.cu sm_80.O3"
    "cluster.cu sm_80.G"
    "cluster.cu sm_80.lineinfo"
    "cluster.cu sm_75.G"
    "cluster.cu sm_75.lineinfo"
)
VARIANTS=(sm_75.O3 sm_80.O3 sm_90.O3 sm_75.G sm_80.G sm_90.G sm_75.lineinfo sm_80.lineinfo sm_90.lineinfo)
# Files of architecture-specific instructions (wgmma needs sm_90a): only
# these variants, instead of VARIANTS.
SM90A_FILES=(hopper.cu)
SM90A_VARIANTS=(sm_90a.O3 sm_90a.G sm_90a.lineinfo)

is_skipped() {
    local entry
    for entry in "${SKIP[@]}"; do
        [[ "$entry" == "$1 $2" ]] && return 0
    done
    return 1
}

# compile_one FILE VARIANT: writes FILE's base name.VARIANT.ptx in $here.
compile_one() {
    local file="$1" variant="$2" name arch flags out tmp
    name="${file%.cu}"
    arch="${variant%%.*}"
    case "${variant#*.}" in
        O3)       flags=(-O3) ;;
        G)        flags=(-G) ;;
        lineinfo) flags=(-O3 -lineinfo) ;;
        *) echo "regen.sh: unknown variant $variant" >&2; return 1 ;;
    esac
    out="$here/$name.$variant.ptx"
    tmp="$out.tmp.$$"
    (cd "$here" && "$NVCC" -ptx -arch="$arch" -std=c++17 "${flags[@]}" "$file" -o "$tmp") || { rm -f "$tmp"; return 1; }
    # Debug info names the source by absolute path; keep the files machine-independent.
    sed -i "s|\"$here/|\"|" "$tmp" || return 1
    if command -v ptxas >/dev/null 2>&1; then
        ptxas -arch="$arch" "$tmp" -o /dev/null || { echo "regen.sh: ptxas rejects $out" >&2; rm -f "$tmp"; return 1; }
    fi
    mv "$tmp" "$out"
    echo "  $name.$variant.ptx"
}
export -f compile_one

if (($# > 0)); then
    files=()
    for f in "$@"; do files+=("$(basename "$f")"); done
else
    files=()
    for f in "$here"/*.cu; do files+=("$(basename "$f")"); done
fi

tasks=()
for f in "${files[@]}"; do
    [[ -f "$here/$f" ]] || { echo "regen.sh: no such kernel file: $f" >&2; exit 1; }
    rm -f "$here/${f%.cu}".sm_*.ptx
    variants=("${VARIANTS[@]}")
    for a in "${SM90A_FILES[@]}"; do
        [[ "$a" == "$f" ]] && variants=("${SM90A_VARIANTS[@]}")
    done
    for v in "${variants[@]}"; do
        is_skipped "$f" "$v" || tasks+=("$f $v")
    done
done

echo "regen.sh: $("$NVCC" --version | tail -n 2 | head -n 1)"
# shellcheck disable=SC2016  # $0 $1 expand in the child bash, on purpose
printf '%s\n' "${tasks[@]}" | xargs -P "$JOBS" -L 1 bash -c 'compile_one "$0" "$1"'
echo "regen.sh: ${#tasks[@]} files written"
