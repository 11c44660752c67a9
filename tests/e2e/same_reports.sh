#!/bin/sh
# Checker reports are identical, content and order, across host threads
# and schedules. Used by the e2e cases check-*-determinism.
#
# usage: same_reports.sh PATTERN OPTIONS... < LIST
#   LIST    one launch per line: PTX KERNEL TOOLS LAUNCH ARG...
#           (LAUNCH: kemu run options joined by commas, e.g. --grid=6,--block=16,16)
#   OPTIONS each a set of options run against the --threads 1 report
# Prints "KERNEL: N" per launch (N: lines of its --threads 1 report that
# match PATTERN) and "compared N reports"; exits 1 when a report differs.
# The PTX files are read from the current directory; $KEMU is the kemu command.
pattern=$1
shift
report() { $KEMU run "$@" 2>&1 | grep '^=========' ; }
n=0 bad=0
while read -r ptx kernel tools launch args; do
    launch=$(printf '%s' "$launch" | sed 's/,--/ --/g')
    # shellcheck disable=SC2086
    base=$(report $ptx --kernel $kernel $launch --tool $tools --threads 1 -- $args)
    for opt in "$@"; do
        # shellcheck disable=SC2086
        other=$(report $ptx --kernel $kernel $launch --tool $tools $opt -- $args)
        n=$((n + 1))
        if [ "$other" != "$base" ]; then
            echo "report of $kernel ($tools) differs with $opt"
            bad=1
        fi
    done
    printf '%s\n' "$base" | grep -c "$pattern" | sed "s/^/$kernel: /"
done
echo "compared $n reports"
exit $bad
