#!/bin/sh
# Cycles of the compiler's code against ptxas's, both under the compiler's
# control-bit policy:
#
#   tests/perf/cycles_vs_ptxas.sh [cycles.py args, e.g. --large]
#
# The ptxas translations (../shared/anchors/ptxas-ursa/K.s, or
# $URSA_ANCHORS/ptxas-ursa) carry control bits filled when they were made,
# and the anchors are read-only: the folder (and its sibling ptxas/, where
# cycles.py finds the .ll files) is copied to a temporary directory, every
# K.s there is refilled with `ursa asm --auto-control --text` (the
# compiler's calc_instr_deps; comments kept), and that copy's cycles.py
# runs from the repository root. Needs `cargo build --release` first
# (target/release/ursa, or $URSA). Run from the repository root.
set -eu
anchors=${URSA_ANCHORS:-../shared/anchors}
ursa=${URSA:-target/release/ursa}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$anchors/ptxas-ursa" "$anchors/ptxas" "$tmp/"
for s in "$tmp"/ptxas-ursa/*.s; do
    "$ursa" asm --auto-control --text "$s" -o "$s.new"
    mv "$s.new" "$s"
done
echo "control bits: both codes filled by calc_instr_deps of $ursa (ptxas translations refilled with ursa asm --auto-control)"
python3 "$tmp/ptxas-ursa/cycles.py" --ursa "$ursa" "$@"
