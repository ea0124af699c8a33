#!/bin/sh
# Writes DIR/trivial.clif: 200 functions of one `iadd` of two `i32` parameters
# (each with a run line), the set on which `compile_loop` measures what any
# function costs each compiler (docs/performance.md 6.1):
#   sh tests/perf/trivial_set.sh /tmp/trivial
#   URSA_VS_CRANELIFT=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.t \
#       target/release/examples/compile_loop /tmp/trivial 1
set -e
dir=${1:?usage: trivial_set.sh DIR}
mkdir -p "$dir"
out="$dir/trivial.clif"
printf 'test run\ntarget x86_64\n' > "$out"
i=0
while [ $i -lt 200 ]; do
    printf 'function %%f%d(i32, i32) -> i32 {\nblock0(v0: i32, v1: i32):\n    v2 = iadd v0, v1\n    return v2\n}\n; run: %%f%d(1, 2) == 3\n\n' $i $i >> "$out"
    i=$((i + 1))
done
