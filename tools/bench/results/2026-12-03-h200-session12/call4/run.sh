#!/bin/bash
# Session 12, call 4: the declaration's record prefetch aimed at the head's line (call 3 read
# the 10^4-range row 6 % above d1cebb1's with it aimed at the node's first lines), then the
# 10^6 query row again; new (this tree) against old (d1cebb1), interleaved.
TREE=s12 source tools/bench/h200-call.sh
for k in 1 2 3; do
    step decl-old-$k 100 $R/.device-out/oldlib $D/bench/scaling --runtime cuda --max 10000 --reps 5
    step decl-new-$k 100 $D/core $D/bench/scaling --runtime cuda --max 10000 --reps 5
done
for k in 1 2; do
    step scaling-new-$k 200 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
    step scaling-old-$k 200 $R/.device-out/oldlib $D/bench/scaling --runtime cuda --max 1000000 --reps 3
done
uptime >> $W/uptime.txt
for f in $W/decl-*.txt; do echo "$(basename $f .txt) af $(sed -n 3,4p $f | awk '{printf "%s ", $2}') decl $(awk '/tidal_declare of N/ {t=1; next} t && $1 == "ranges" {next} t && NF == 0 {t=0} t && $1+0 > 0 {printf "%s ", $2}' $f)"; done
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}') ovl $(sed -n 6p $f | awk '{print $6}') decl $(awk '/tidal_declare of N/ {t=1; next} t && $1 == "ranges" {next} t && NF == 0 {t=0} t && $1+0 > 0 {printf "%s ", $2}' $f)"; done
