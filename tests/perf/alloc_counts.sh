#!/bin/bash
# Register-allocation totals over the conformance runtests (docs/performance.md,
# "Register allocation"): `ursa compile --stats` of every file of the int-core,
# int-wide, memory, calls and float categories that compiles whole, summed.
# From the project root:
#   tests/perf/alloc_counts.sh
# The runtests are $URSA_CONFORMANCE, default ../shared/conformance/runtests.
set -eu
cargo build --release -q -p ursa-cli --bin ursa
ursa=target/release/ursa
conf=${URSA_CONFORMANCE:-../shared/conformance/runtests}
[ -d "$conf" ] || { echo "alloc_counts.sh: no conformance runtests at $conf (set URSA_CONFORMANCE)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
files=0 skipped=0
for f in "$conf"/{int-core,int-wide,memory,calls,float}/*.clif; do
  if "$ursa" compile --stats -o "$dir/x.o" "$f" 2>"$dir/one.txt"; then
    files=$((files + 1))
    cat "$dir/one.txt" >>"$dir/all.txt"
  else
    skipped=$((skipped + 1))
  fi
done
echo "files compiled: $files (not compiled whole, e.g. an unsupported function: $skipped)"
awk '/^%/ {
  n++
  for (i = 2; i <= NF; i++) {
    if ($(i) ~ /^instructions,?$/) ins += $(i - 1)
    if ($(i) ~ /^moves,?$/) mov += $(i - 1)
    if ($(i) ~ /^spills,?$/) sp += $(i - 1)
    if ($(i) ~ /^reloads,?$/) rl += $(i - 1)
  }
} END { printf "functions: %d, instructions: %d, moves: %d, spills: %d, reloads: %d\n", n, ins, mov, sp, rl }' "$dir/all.txt"
