#!/bin/bash
# Static and executed instruction counts of the kernels of tests/perf/unaligned.clif
# (docs/performance.md, section 7, "Misaligned loads and stores"). From the project root:
#   tests/perf/unaligned_counts.sh
set -eu
cargo build --release -q -p ursa-cli --bin ursa
obj=$(mktemp)
trap 'rm -f "$obj"' EXIT
stats=$(target/release/ursa compile --kernel --stats -o "$obj" tests/perf/unaligned.clif 2>&1)
echo "| kernel | static instrs | executed, offset 0 | executed, offset 1 |"
echo "|---|---:|---:|---:|"
for ty in i16 i32 i64; do
  for kind in aligned checked bytewise; do
    k=${kind}_$ty
    s=$(grep "^%$k:" <<<"$stats" | sed -E 's/.*: ([0-9]+) instructions.*/\1/')
    e=()
    for off in 0 1; do
      if out=$(target/release/ursa run --kernel "$k" --arg buf:b=u8[32] --arg i32:$off --stats "$obj" 2>&1); then
        e+=("$(sed -nE 's/^instructions issued: *([0-9]+)/\1/p' <<<"$out")")
      else
        e+=("trap")
      fi
    done
    echo "| $k | $s | ${e[0]} | ${e[1]} |"
  done
done
