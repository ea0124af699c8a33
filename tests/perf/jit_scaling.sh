#!/bin/sh
# Time and peak memory of the one-lane translation to host code
# (runtime-sim/src/jit/) as the code grows, against the interpreter:
#
#   tests/perf/jit_scaling.sh [N…]      # default N: 250 500 1000 2000
#
# For each N, a CLIF function with N simultaneously live i64 values (N
# `iadd`s of the argument, then an `bxor` chain over all of them: straight-
# line code with spill stores and reloads once N passes the register file)
# is run by `ursa test --no-differential` twice: as usual (interpreter; the
# `; run:` line's call is short) and with `--jit-check` (the same call also
# through the translation, every region of the function translated once).
# Prints N, the machine instructions of the function, and seconds and peak
# resident KB of both runs (GNU time). Needs `cargo build --release` first
# (target/release/ursa, or $URSA). Run from the repository root.
set -eu
ursa=${URSA:-target/release/ursa}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- 250 500 1000 2000
echo "N insts interp_s interp_KB jit_check_s jit_check_KB"
for n in "$@"; do
    f="$tmp/live$n.clif"
    awk -v n="$n" '
    function bxor(a, b,   r, bit) {
        r = 0; bit = 1
        while (a > 0 || b > 0) { if ((a % 2) != (b % 2)) r += bit; a = int(a / 2); b = int(b / 2); bit *= 2 }
        return r
    }
    BEGIN {
        print "test run"; print "function %f(i64) -> i64 {"; print "block0(v0: i64):"
        for (i = 1; i <= n; i++) { printf "    v%d = iconst.i64 %d\n    v%d = iadd v0, v%d\n", n + i, i, i, n + i }
        acc = "v1"; k = 2 * n + 1
        for (i = 2; i <= n; i++) { printf "    v%d = bxor %s, v%d\n", k, acc, i; acc = "v" k; k++ }
        printf "    return %s\n}\n", acc
        # xor of 3+1 … 3+n: the test only needs a line to run; both runs
        # must pass, so the expected value is computed here.
        x = 0; for (i = 1; i <= n; i++) x = bxor(x, 3 + i)
        printf "; run: %%f(3) == %d\n", x
    }' >"$f"
    insts=$("$ursa" compile "$f" -o "$tmp/o.o" --stats 2>&1 | sed -n 's/^%f: \([0-9]*\) instructions.*/\1/p')
    a=$(/usr/bin/time -f "%e %M" "$ursa" test --no-differential "$f" 2>&1 >/dev/null | tail -1)
    b=$(/usr/bin/time -f "%e %M" "$ursa" test --no-differential --jit-check "$f" 2>&1 >/dev/null | tail -1)
    echo "$n $insts $a $b"
done
