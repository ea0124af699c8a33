#!/bin/sh
# Snapshot `ursa compile -S --stats` of every .clif the compile-time work must
# leave unchanged, so a speed-up can be checked byte for byte:
#
#   tests/perf/snapshot_outputs.sh URSA OUTDIR   # e.g. a build of main, then of the branch
#   diff -r OUTDIR_MAIN OUTDIR_BRANCH            # must print nothing
#
# Files: tests/filetests, tests/precise, examples (also with --kernel for
# examples/*.clif and examples/kernels/*.clif), and the conformance runtests
# ($URSA_CONFORMANCE, default ../shared/conformance/runtests beside the
# repository) when present. stdout, stderr and the exit code are all kept.
# The last line gives the instructions and stall cycles of all the code.
# Run from the repository root.
set -u
ursa=$1
out=$2
conf=${URSA_CONFORMANCE:-../shared/conformance/runtests}
mkdir -p "$out"
one() { # name, args...
    name=$1; shift
    f="$out/$(echo "$name" | tr '/' '_')"
    "$ursa" compile -S --stats -o /dev/null "$@" >"$f.out" 2>"$f.err"
    echo "exit $?" >>"$f.out"
}
for p in $(find tests/filetests tests/precise examples -name '*.clif' | sort); do
    one "$p" "$p"
done
for p in $(find examples -maxdepth 2 -name '*.clif' | sort); do
    one "kernel/$p" --kernel "$p"
done
if [ -d "$conf" ]; then
    for p in $(find "$conf" -name '*.clif' | sort); do
        one "conformance/${p#"$conf"/}" "$p"
    done
fi
# Totals over the code printed: instructions and the stall cycles of their
# control bits (a static measure of what the schedule leaves to wait).
cat "$out"/*.out | awk -v n="$(ls "$out" | grep -c '\.out$')" -v out="$out" '
    match($0, /&stall=[0-9]+/) { i++; s += substr($0, RSTART + 7, RLENGTH - 7) }
    END { printf "%d outputs in %s: %d instructions, %d stall cycles\n", n, out, i, s }'

