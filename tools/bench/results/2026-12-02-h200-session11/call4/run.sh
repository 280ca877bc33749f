#!/bin/bash
# Session 11, call 4: the library at b18f27d (unchanged since), scaling with the query(set)
# column timed in interleaved slices: the whole of scaling to 10^6 live allocations, twice.
TREE=s11 source tools/bench/h200-call.sh
for r in 1 2; do step scaling-$r 280 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3; done
uptime >> $W/uptime.txt
for r in 1 2; do head -7 $W/scaling-$r.txt; done
summary_declare scaling-
