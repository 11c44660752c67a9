#!/bin/sh
# The kemu command's global behaviour: --version, --help, help <cmd>,
# unknown commands and options (one-line error plus usage, exit 2).
set -u
: "${KEMU:=src/kemu}"
pass=0 fail=0
check() { # name expected-status expected-substring command...
    name=$1 want=$2 needle=$3
    shift 3
    out=$("$@" 2>&1)
    st=$?
    if [ "$st" -eq "$want" ] && printf '%s' "$out" | grep -qF -- "$needle"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $name (status $st, want $want; output: $out)"
        fail=$((fail + 1))
    fi
}
check version 0 "kemu 0.1.0" "$KEMU" --version
check help 0 "commands:" "$KEMU" --help
check help-run 0 "usage: kemu run FILE.ptx" "$KEMU" help run
check help-info 0 "usage: kemu info FILE.ptx" "$KEMU" help info
check help-unknown 2 "kemu: error: unknown command 'nope'" "$KEMU" help nope
check unknown-command 2 "kemu: error: unknown command 'frobnicate'" "$KEMU" frobnicate
check unknown-option 2 "kemu: error: unknown option '--bogus'" "$KEMU" --bogus
check no-args 2 "usage: kemu" "$KEMU"
check run-unknown-option 2 "kemu run: error: unknown option '--frob'" "$KEMU" run x.ptx --frob
check run-no-block 2 "kemu run: error: --block is required" "$KEMU" run x.ptx
check run-bad-grid 2 "--grid wants X[,Y[,Z]] with positive integers, got '0'" "$KEMU" run x.ptx --grid 0 --block 1
check run-missing-file 2 "nope.ptx: cannot open" "$KEMU" run nope.ptx --block 1
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
