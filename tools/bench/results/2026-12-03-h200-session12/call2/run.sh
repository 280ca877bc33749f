#!/bin/bash
# Session 12, call 2: call 1 again with the order turned (old first), three of each.
TREE=s12 source tools/bench/h200-call.sh
S="$D/bench/scaling --runtime cuda --max 1000000 --reps 3"
for k in 1 2 3; do
    step scaling-old-$k 200 $R/.device-out/oldlib $S
    step scaling-new-$k 200 $D/core $S
done
uptime >> $W/uptime.txt
for f in $W/scaling-*.txt; do echo "$(basename $f .txt)"; sed -n 3,6p $f | awk '{print "  ", $1, "query", $3, "query(set)", $5, "ovl", $6, "dep", $7, "bytes", $10}'; done
