#!/bin/bash
# Instruction counts of integer division (docs/performance.md, "Integer division").
# From the project root:
#   tests/perf/div_counts.sh
# Static: `ursa compile --stats` of a function `OP.TY` that returns `OP a, b`
# (zero and overflow checks and `RET` included; i64 counts both paths).
# Executed: `ursa run --stats` "instructions issued" of a one-thread kernel that
# stores `OP a, b`, minus the same kernel with `iadd`.
set -eu
cargo build --release -q -p ursa-cli --bin ursa
ursa=target/release/ursa
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "| static instrs | udiv | sdiv | urem | srem |"
echo "|---|---:|---:|---:|---:|"
for ty in i32 i64; do
  row="| $ty |"
  for op in udiv sdiv urem srem; do
    printf 'function %%f(%s, %s) -> %s {\nblock0(v0: %s, v1: %s):\n    v2 = %s v0, v1\n    return v2\n}\n' \
      $ty $ty $ty $ty $ty $op > "$dir/f.clif"
    n=$("$ursa" compile --stats -o "$dir/f.o" "$dir/f.clif" 2>&1 | sed -nE 's/^%f: ([0-9]+) instructions.*/\1/p')
    row="$row $n |"
  done
  echo "$row"
done
for ty in i32 i64; do
  for op in iadd udiv sdiv urem srem; do
    printf 'function %%k(i64, %s, %s) {\nblock0(v0: i64, v1: %s, v2: %s):\n    v3 = %s v1, v2\n    store v3, v0\n    return\n}\n' \
      $ty $ty $ty $ty $op > "$dir/k_${op}_$ty.clif"
    "$ursa" compile --kernel -o "$dir/k_${op}_$ty.o" "$dir/k_${op}_$ty.clif"
  done
done
issued() { # op ty a b
  "$ursa" run "$dir/k_$1_$2.o" --kernel k --arg "buf:o=$2[1]" --arg "$2:$3" --arg "$2:$4" --stats |
    sed -nE 's/^instructions issued: *([0-9]+).*/\1/p'
}
echo
echo "| executed, operands | udiv | sdiv | urem | srem |"
echo "|---|---:|---:|---:|---:|"
while read -r ty a b; do
  base=$(issued iadd "$ty" "$a" "$b")
  row="| $ty \`$a, $b\` |"
  for op in udiv sdiv urem srem; do
    row="$row $(($(issued $op "$ty" "$a" "$b") - base)) |"
  done
  echo "$row"
done <<'CASES'
i32 1000000007 12345
i64 1000000007 12345
i64 -1000000007 12345
i64 1000000000000000007 123456789012
CASES
