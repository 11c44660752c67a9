#!/bin/sh
# make check: the racebench fast subset (tests/racebench/run.py --check):
# racecheck reports an error for every racy kernel and nothing for every
# clean twin, memcheck reports every out-of-bounds kernel, on the two
# 5-node inputs (racing pairs inside one warp) and the 32 x 32 mesh.
# Skips (exit 77) without Python 3.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
if [ -z "$py" ]; then
    echo "SKIP: no Python 3"
    exit 77
fi
KEMU=${KEMU:-$top_builddir/src/kemu}
exec "$py" "$top_srcdir/tests/racebench/run.py" --kemu "$KEMU" --check \
    --inputs tiny-chain,tiny-star,mesh --tools racecheck,memcheck
