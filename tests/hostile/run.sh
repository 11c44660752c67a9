#!/bin/sh
# The hostile-input suite: what kemu does with input a careless or hostile
# user gives it. Each line of tests/hostile/cases is one case:
#
#   NAME | STATUS | CLASS | CHANGES | SETUP | COMMAND
#
#   STATUS   the exit status kemu must give
#   CLASS    what the output (stdout and stderr together) must say: a class
#            name from the table below, or /ERE/ for a regular expression of
#            its own. Classes are loose on purpose (the wording of messages
#            may improve; what kind of answer it is may not change)
#   CHANGES  the files the command may create or change in the case
#            directory (shell patterns, space-separated), or -
#   SETUP    a shell command run before the case directory is snapshotted
#            (make a FIFO, a directory, a symlink, a huge sparse file), or -
#   COMMAND  the command line, run by sh; '|' may appear in it
#
# Every case runs in a fresh directory holding a copy of the files of
# tests/hostile/inputs/, a link ptx/ to its PTX files (read only: the
# whole source tree is checked after the run) and k.ptx
# (tests/fuzz/fuzz_run.ptx), with $KEMU (the kemu command), $SRC
# (the source tree), $FUZZ ($SRC/tests/fuzz) and $CASES ($SRC/tests/hostile)
# set. Besides STATUS and CLASS, each case must
#   - not be killed by a signal (status 128 or more) unless STATUS says so,
#     nor run past 30 s;
#   - print no sanitizer report ("Sanitizer", "runtime error:") and, under
#     valgrind, no valgrind error (status 97);
#   - change no file of its directory that CHANGES does not name (checksums of
#     every file, and the type, mode, size, time and link target of
#     everything, before and after).
# After all cases, the source tree's inputs and /dev/null, /dev/full and
# /dev/zero must be as they were.
#
#   tests/hostile/run.sh                 every case
#   tests/hostile/run.sh NAME...         the cases whose name matches one of
#                                        the shell patterns given
#   VALGRIND=1 tests/hostile/run.sh ...  kemu under valgrind (memcheck)
#   HOSTILE_VERBOSE=1                    print each case's output
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
SRC=$(cd "$top_srcdir" && pwd)
BUILD=$(cd "$top_builddir" && pwd)
: "${KEMU:=$BUILD/src/kemu}"
CASES=$SRC/tests/hostile
FUZZ=$SRC/tests/fuzz
SCALE="run k.ptx --kernel scale --block 16"
export SRC FUZZ CASES SCALE

work=$(mktemp -d "${TMPDIR:-/tmp}/kemu-hostile.XXXXXX")
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT INT TERM

if [ -n "${VALGRIND:-}" ]; then
    # the real binary behind libtool's wrapper, run by valgrind; 97 marks
    # a valgrind error
    cat > "$work/kemu" <<EOF
#!/bin/sh
exec "$BUILD/libtool" --mode=execute valgrind -q --error-exitcode=97 --leak-check=no "$KEMU" "\$@"
EOF
    chmod +x "$work/kemu"
    KEMU=$work/kemu
fi
export KEMU

# class name -> extended regular expression
class_regex() {
    case $1 in
    ok) echo '^kernel [A-Za-z_0-9$]+: grid \(' ;;                 # a launch that completed
    ptx) echo ':[0-9]+:[0-9]+: (error|warning)' ;;                # a PTX error at file:line:col
    ptx-file) echo '^[^ ]*: (error|cannot|not)' ;;                # a PTX file refused as a whole
    usage) echo '^kemu( [a-z]+)?: error: ' ;;                      # one error line of the command
    fault) echo "kernel '[^']+' faulted: " ;;                     # a named fault of a kernel
    wild) echo "faulted: .*(out of bounds|out-of-bounds|illegal address|misaligned|invalid)" ;;
    timeout) echo 'timed out after [0-9.e+-]+ seconds \(--timeout\)' ;;
    steps) echo 'ran past the step limit of [0-9]+ warp-instructions' ;;
    stack) echo 'call stack overflow' ;;
    deadlock) echo 'deadlock' ;;
    checker) echo '^========= ERROR SUMMARY: [1-9]' ;;              # checkers found errors
    npy) echo '\.npy: ' ;;                                        # an .npy file named in an error
    spec) echo '^kemu call: error: ' ;;
    exec) echo '^kemu exec: ' ;;
    output) echo '(would overwrite|both write|not a regular file|cannot write|is a directory|No space left)' ;;
    any) echo '' ;;                                               # only the other checks
    /*/) printf '%s\n' "$1" | sed 's|^/||; s|/$||' ;;
    *) echo "hostile: unknown class '$1'" >&2; echo '^$NEVER' ;;
    esac
}

# what a directory holds: every path with its type, mode and link target,
# and a checksum of each regular file (its size and time over 1 MiB). The
# test driver's own .log and .trs files are left out: in an in-tree build
# `make check -j` writes tests/fuzz/replay.log while this suite runs.
snapshot() {
    (
        cd "$1" || exit 1
        find . ! -name . ! -name '*.log' ! -name '*.trs' -printf '%p %y %m %l\n' | LC_ALL=C sort
        find . -type f ! -name '*.log' ! -name '*.trs' -size -1025k -exec cksum {} + | LC_ALL=C sort -k3
        find . -type f ! -name '*.log' ! -name '*.trs' -size +1024k -printf '%p %s %T@\n' | LC_ALL=C sort
    )
}

# keeps lines of a snapshot diff whose path CHANGES does not allow
unexpected_changes() { # diff-file changes
    allowed=$2
    set -f
    while IFS= read -r line; do
        case $line in '<'* | '>'*) ;; *) continue ;; esac
        # the path is the first word after the marker (after the checksum
        # and size for cksum lines)
        set -- $line
        shift
        case $1 in . | ./*) path=$1 ;; *) path=${3:-} ;; esac
        path=${path#./}
        [ "$path" = "." ] && continue
        ok=0
        if [ "$allowed" != "-" ]; then
            for pattern in $allowed; do
                # shellcheck disable=SC2254
                case $path in $pattern | $pattern/*) ok=1 ;; esac
            done
        fi
        [ $ok -eq 1 ] || printf '%s\n' "$line"
    done < "$1"
    set +f
}

# strips leading and trailing blanks, without a subprocess
trim() {
    t=$1
    t=${t#"${t%%[![:space:]]*}"}
    t=${t%"${t##*[![:space:]]}"}
    printf '%s' "$t"
}

specials() { ls -lL /dev/null /dev/full /dev/zero 2>&1 | awk '{print $1, $NF}'; }

snapshot "$SRC/tests/hostile" > "$work/tree.before"
snapshot "$FUZZ" > "$work/fuzz.before"
specials > "$work/dev.before"

pass=0 fail=0 n=0
started=$(date +%s)
while IFS='|' read -r name want class changes setup cmd; do
    case $name in '#'* | '') continue ;; esac
    name=$(trim "$name")
    want=$(trim "$want")
    class=$(trim "$class")
    changes=$(trim "$changes")
    setup=$(trim "$setup")
    cmd=$(trim "$cmd")
    if [ $# -gt 0 ]; then
        chosen=0
        for pattern in "$@"; do
            # shellcheck disable=SC2254
            case $name in $pattern) chosen=1 ;; esac
        done
        [ $chosen -eq 1 ] || continue
    fi
    n=$((n + 1))
    dir=$work/case-$n
    mkdir "$dir"
    # the files a case may write to, copied; the PTX files it only reads
    # (ptx/), linked
    cp "$CASES"/inputs/* "$dir/" 2>/dev/null # all but ptx/
    ln -s "$CASES/inputs/ptx" "$dir/ptx"
    cp "$FUZZ/fuzz_run.ptx" "$dir/k.ptx"
    if [ "$setup" != "-" ] && ! (cd "$dir" && sh -c "$setup") > "$work/setup.out" 2>&1; then
        echo "FAIL: $name: setup failed: $(cat "$work/setup.out")"
        fail=$((fail + 1))
        continue
    fi
    snapshot "$dir" > "$work/before"
    [ -n "${HOSTILE_VERBOSE:-}" ] && t0=$(date +%s%N)
    out=$(cd "$dir" && timeout -k 5 30 sh -c "$cmd" 2>&1 < /dev/null)
    st=$?
    [ -n "${HOSTILE_VERBOSE:-}" ] && echo "$((($(date +%s%N) - t0) / 1000000)) ms $name" >> "$work/times"
    snapshot "$dir" > "$work/after"
    problems=""
    if [ "$st" -eq 124 ] || [ "$st" -eq 137 ]; then
        [ "$want" = "$st" ] || problems="$problems; ran past 30 s (status $st)"
    elif [ "$st" != "$want" ]; then
        problems="$problems; exit status $st, expected $want"
    fi
    if [ "$st" -ge 128 ] && [ "$st" != "$want" ]; then
        problems="$problems; killed by signal $((st - 128))"
    fi
    if printf '%s\n' "$out" | grep -qE 'Sanitizer|runtime error:|^==[0-9]+== '; then
        problems="$problems; a sanitizer or valgrind report"
    fi
    regex=$(class_regex "$class")
    if [ -n "$regex" ] && ! printf '%s\n' "$out" | grep -qE -- "$regex"; then
        problems="$problems; output is not of class $class"
    fi
    diff "$work/before" "$work/after" > "$work/diff"
    extra=$(unexpected_changes "$work/diff" "$changes")
    if [ -n "$extra" ]; then
        problems="$problems; files changed that may not: $(printf '%s' "$extra" | tr '\n' ' ')"
    fi
    if [ -n "$problems" ]; then
        fail=$((fail + 1))
        echo "FAIL: $name${problems}"
        echo "    command: $cmd"
        printf '%s\n' "$out" | head -n 15 | cut -c1-300 | sed 's/^/    | /'
    else
        pass=$((pass + 1))
        if [ -n "${HOSTILE_VERBOSE:-}" ]; then
            echo "ok: $name (status $st)"
            printf '%s\n' "$out" | head -n 6 | cut -c1-200 | sed 's/^/    | /'
        fi
    fi
    chmod -R u+rwx "$dir" 2>/dev/null
    rm -rf "$dir"
done < "$CASES/cases"

snapshot "$SRC/tests/hostile" > "$work/tree.after"
snapshot "$FUZZ" > "$work/fuzz.after"
specials > "$work/dev.after"
for what in tree fuzz dev; do
    if ! cmp -s "$work/$what.before" "$work/$what.after"; then
        echo "FAIL: the suite changed files it only reads:"
        diff "$work/$what.before" "$work/$what.after" | head -n 20 | sed 's/^/    | /'
        fail=$((fail + 1))
    fi
done
if [ -n "${HOSTILE_VERBOSE:-}" ] && [ -f "$work/times" ]; then
    echo "the slowest cases:"
    sort -rn "$work/times" | head -n 8 | sed 's/^/    /'
fi
echo "hostile inputs: $pass passed, $fail failed ($(($(date +%s) - started)) s)"
[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
