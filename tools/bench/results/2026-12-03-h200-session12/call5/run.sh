#!/bin/bash
# Session 13, call 5: the 10^6 query row again on a fresh machine, new (8785cdb's library)
# against old (d1cebb1), interleaved new, old, new, old, new.
TREE=s12 source tools/bench/h200-call.sh
step scaling-new-1 120 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-1 120 $R/.device-out/oldlib $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-2 120 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-2 120 $R/.device-out/oldlib $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-3 120 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}') ovl $(sed -n 6p $f | awk '{print $6}') bytes $(sed -n 6p $f | awk '{print $10}')"; done
