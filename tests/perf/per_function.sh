#!/bin/sh
# Compile cost of each function of a folder of CLIF files, Ursa against
# Cranelift's x86-64 backend, in instructions (callgrind: independent of the
# machine's load). One line per function, the largest excess first:
#   ursa  cranelift  excess  name
# then the total, and the totals by the lane count of the widest vector type
# each function uses (1: no vector).
# Usage: tests/perf/per_function.sh DIR [COUNT]   (from the repository root,
# after `cargo build --release --workspace --all-targets`)
set -e
dir=${1:?usage: per_function.sh DIR [COUNT]}
count=${2:-1}
out=$(mktemp -d)
URSA_VS_CRANELIFT=1 URSA_EACH=1 valgrind --tool=callgrind \
    --dump-after='compile_loop::ursa_side' --dump-after='compile_loop::cranelift_side' \
    --callgrind-out-file="$out/cg" target/release/examples/compile_loop "$dir" "$count" 2> "$out/names"
python3 - "$out" "$count" <<'PY'
import glob, os, re, sys
out, count = sys.argv[1], int(sys.argv[2])
# Each name line: the function's name and its widest lane count.
named = [l.split() for l in open(os.path.join(out, 'names')) if l.startswith('%')]
names = [n[0] for n in named]
lanes = [int(n[1]) for n in named]
def total(path):
    for line in open(path):
        if line.startswith('summary:') or line.startswith('totals:'):
            return int(line.split()[1])
    return 0
# The dumps cg.1, cg.2, ... in order (cg itself is the end of the program).
dumps = sorted((p for p in glob.glob(os.path.join(out, 'cg.*')) if re.search(r'\.\d+$', p)), key=lambda p: int(p.rsplit('.', 1)[1]))
per = dumps[2:]  # the round over the set: one dump per side
rows = []
for i, n in enumerate(names):
    u = sum(total(d) for d in per[2 * count * i: 2 * count * i + count])
    c = sum(total(d) for d in per[2 * count * i + count: 2 * count * (i + 1)])
    rows.append((u - c, u, c, n, lanes[i]))
rows.sort(reverse=True)
tu = sum(r[1] for r in rows); tc = sum(r[2] for r in rows)
for e, u, c, n, _ in rows:
    print('%10d %10d %10d %s' % (u, c, e, n))
print('%10d %10d %10d total of %d functions (ratio %.3f)' % (tu, tc, tu - tc, len(rows), tu / tc if tc else 0))
for k in sorted(set(lanes)):
    group = [r for r in rows if r[4] == k]
    gu = sum(r[1] for r in group); gc = sum(r[2] for r in group)
    print('%10d %10d %10d %d functions of %d lanes (ratio %.3f)' % (gu, gc, gu - gc, len(group), k, gu / gc if gc else 0))
PY
rm -rf "$out"
