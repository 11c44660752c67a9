#!/bin/sh
# Runs the tensor-core kernels of tests/kernels/mma.cu and hopper.cu on the
# inputs in in/ and compares every output bit for bit with what an NVIDIA
# H200 computed for them (out/; README.md says how they were made).
# usage: check.sh KEMU [KEMU RUN OPTIONS...]   (e.g. --backend cuda on a GPU)
# Prints one line per run; exit status 1 when any output differs.
set -u
[ $# -ge 1 ] || { echo "usage: $0 KEMU [options...]" >&2; exit 2; }
KEMU=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/../../.." && pwd)
M=$SRC/tests/kernels/mma.sm_80.O3.ptx
H=$SRC/tests/kernels/hopper.sm_90a.O3.ptx
i=$here/in
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0 runs=0
one() { # NAME KEMU-RUN-ARGS... : the run writes NAME.npy
    name=$1
    shift
    runs=$((runs + 1))
    if ! (cd "$tmp" && "$KEMU" run "$@") > "$tmp/log" 2>&1; then
        echo "FAIL: $name: kemu run failed:"
        cat "$tmp/log"
        failed=$((failed + 1))
        return
    fi
    if "$KEMU" compare "$tmp/$name.npy" "$here/out/$name.npy" > "$tmp/cmp" 2>&1; then
        echo "ok: $name"
    else
        echo "FAIL: $name differs from the H200: $(cat "$tmp/cmp")"
        failed=$((failed + 1))
    fi
}
for s in 2 4 7; do
    one wmma_f16_f32_$s "$@" "$M" --kernel wmma_f16_f32 --block 32 -- in:$i/f16_a16x16_$s.npy \
        in:$i/f16_b16x16_$s.npy in:$i/f32_c256_$s.npy out:wmma_f16_f32_$s.npy:f32:256
    one wmma_f16_f16_colb_$s "$@" "$M" --kernel wmma_f16_f16_colb --block 32 -- in:$i/f16_a16x16_$s.npy \
        in:$i/f16_b16x16_$s.npy out:wmma_f16_f16_colb_$s.npy:f16:256
    one mma_m16n8k8_f16_$s "$@" "$M" --kernel mma_m16n8k8_f16 --block 32 -- in:$i/f16_a128_$s.npy \
        in:$i/f16_b64_$s.npy out:mma_m16n8k8_f16_$s.npy:f32:128
    one mma_m16n8k16_f16_$s "$@" "$M" --kernel mma_m16n8k16_f16 --block 32 -- in:$i/f16_a16x16_$s.npy \
        in:$i/f16_b128_$s.npy in:$i/f32_c128_$s.npy out:mma_m16n8k16_f16_$s.npy:f32:128
    one wmma_bf16_f32_$s "$@" "$M" --kernel wmma_bf16_f32 --block 32 -- in:$i/bf16_a256_$s.npy \
        in:$i/bf16_b256_$s.npy in:$i/f32_c256_$s.npy out:wmma_bf16_f32_$s.npy:f32:256
    one wmma_tf32_f32_$s "$@" "$M" --kernel wmma_tf32_f32 --block 32 -- in:$i/f32_a128_$s.npy \
        in:$i/f32_b128_$s.npy out:wmma_tf32_f32_$s.npy:f32:256
done
for s in 4 7; do
    for v in kk1:wgmma_kmajor_kmajor:1 kk0:wgmma_kmajor_kmajor:0 km1:wgmma_kmajor_mnmajor:1; do
        tag=${v%%:*} rest=${v#*:}
        kernel=${rest%:*} accumulate=${rest#*:}
        one wgmma_${tag}_$s "$@" "$H" --kernel "$kernel" --block 128 -- in:$i/f16_a64x16_$s.npy \
            in:$i/f16_b16x64_$s.npy in:$i/f32_c64x64_$s.npy out:wgmma_${tag}_$s.npy:f32:64x64 s32:$accumulate
    done
done
echo "tensor cores against the H200: $runs runs, $failed differ"
[ "$failed" -eq 0 ]
