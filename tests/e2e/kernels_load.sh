#!/bin/sh
# Every committed PTX file under tests/kernels/ and samples/ loads and
# lowers (kemu info succeeds), except instructions listed as not yet
# implemented in tests/e2e/load_expected_failures.txt.
set -u
: "${KEMU:=src/kemu}" "${top_srcdir:=.}"
pass=0 fail=0
expected="$top_srcdir/tests/e2e/load_expected_failures.txt"
for f in "$top_srcdir"/tests/kernels/*.ptx "$top_srcdir"/samples/*/*.ptx; do
    name=$(basename "$f")
    if out=$("$KEMU" info "$f" 2>&1 >/dev/null); then
        pass=$((pass + 1))
    elif [ -f "$expected" ] && grep -qx "$name" "$expected"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $name"
        echo "$out" | head -5
        fail=$((fail + 1))
    fi
done
echo "kernels_load: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
