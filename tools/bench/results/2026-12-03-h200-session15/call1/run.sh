#!/bin/bash
# Session 15, call 1: page hints that carry a copy of the record's head (one line a query)
# against HEAD's library (882e135: the hint names the node, then the node's line), both from the
# same release build folder, the same bench binaries; interleaved new, old, new, old.
TREE=s15 source tools/bench/h200-call.sh
O=$R/.device-out/oldlib15
step scaling-new-1 110 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-1 110 $O $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-2 110 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-2 110 $O $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step alloc-new-1 25 $D/core $D/bench/alloc-latency --runtime cuda --rounds 5
step alloc-old-1 25 $O $D/bench/alloc-latency --runtime cuda --rounds 5
step threads-new 40 $D/core $D/bench/scaling --runtime cuda --threads-only --max 1000000 --threads 16 --seconds 1
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}') pair $(sed -n 3,6p $f | awk '{printf "%s ", $2}') ovl $(sed -n 6p $f | awk '{print $6}') bytes $(sed -n 6p $f | awk '{print $10}')"; done
summary_declare scaling-
for f in $W/alloc-*.txt; do echo "$(basename $f .txt)"; head -12 $f; done
cat $W/threads-new.txt
