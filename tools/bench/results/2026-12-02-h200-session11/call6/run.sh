#!/bin/bash
# Session 11, call 6: the library at b18f27d (unchanged since) and scaling as committed after
# call 5 (query(set) interleaved; ~3x10^4 untimed ranges before each declaration slice):
# the declaration table alone to 10^4 twice, then the whole of scaling to 10^6 twice.
TREE=s11 source tools/bench/h200-call.sh
L=$D/core
for r in 1 2; do step decl-$r 60 $L $D/bench/scaling --runtime cuda --max 10000 --reps 5 --declare-only; done
for r in 1 2; do step scaling-$r 280 $L $D/bench/scaling --runtime cuda --max 1000000 --reps 3; done
uptime >> $W/uptime.txt
for r in 1 2; do head -7 $W/scaling-$r.txt; done
summary_declare
summary_declare scaling-
