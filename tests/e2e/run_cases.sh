#!/bin/sh
# Data-driven end-to-end cases. Each case is a directory under
# tests/e2e/cases/ holding:
#   cmd        one shell command line; $KEMU, $SRC (the source tree) and
#              $CASE (the case directory) are set; it runs in a fresh
#              temporary directory
#   status     the expected exit status (default 0)
#   expect     lines that must each appear in stdout+stderr (grep -F)
#   check      optional shell commands run afterwards in the same
#              directory (e.g. kemu compare on the outputs); must exit 0
# Adding a case means adding files, not code. E2E_ONLY=PATTERN (a shell
# pattern, e.g. 'frontend-triton-*') runs only the cases whose name matches.
set -u
: "${KEMU:=$(pwd)/src/kemu}" "${top_srcdir:=.}"
SRC=$(cd "$top_srcdir" && pwd)
export KEMU SRC
pass=0 fail=0
for dir in "$SRC"/tests/e2e/cases/*/; do
    [ -f "$dir/cmd" ] || continue
    name=$(basename "$dir")
    case "$name" in ${E2E_ONLY:-*}) ;; *) continue ;; esac
    CASE=${dir%/}
    export CASE
    tmp=$(mktemp -d)
    want=0
    [ -f "$dir/status" ] && want=$(cat "$dir/status")
    out=$(cd "$tmp" && sh -c "$(cat "$dir/cmd")" 2>&1)
    st=$?
    ok=1
    if [ "$st" -ne "$want" ]; then
        echo "FAIL: $name: exit status $st, expected $want"
        ok=0
    fi
    if [ -f "$dir/expect" ]; then
        while IFS= read -r line; do
            [ -n "$line" ] || continue
            if ! printf '%s\n' "$out" | grep -qF -- "$line"; then
                echo "FAIL: $name: output lacks: $line"
                ok=0
            fi
        done < "$dir/expect"
    fi
    if [ "$ok" -eq 1 ] && [ -f "$dir/check" ]; then
        if ! chk=$(cd "$tmp" && sh -c "$(cat "$dir/check")" 2>&1); then
            echo "FAIL: $name: check failed: $chk"
            ok=0
        fi
    fi
    if [ "$ok" -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf '%s\n' "$out" | head -20 | sed 's/^/    | /'
    fi
    rm -rf "$tmp"
done
echo "e2e cases: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
