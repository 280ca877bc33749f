#!/bin/bash
# Session 12, call 3: the alloc+free pair and the declarations, new (this tree) against old
# (d1cebb1), interleaved: alloc-latency (1 and 2 threads, every kind and size), and scaling
# up to 10^4 live allocations.
TREE=s12 source tools/bench/h200-call.sh
A="$D/bench/alloc-latency --runtime cuda --rounds 5"
S="$D/bench/scaling --runtime cuda --max 10000 --reps 5"
for k in 1 2 3 4; do
    step alloc-old-$k 60 $R/.device-out/oldlib $A
    step alloc-new-$k 60 $D/core $A
done
for k in 1 2 3; do
    step scaling-old-$k 100 $R/.device-out/oldlib $S
    step scaling-new-$k 100 $D/core $S
done
uptime >> $W/uptime.txt
for f in $W/alloc-*.txt; do echo "$(basename $f .txt) $(grep -E '^device +4096 ' $f) | $(tail -1 $f)"; done
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) af $(sed -n 3,4p $f | awk '{printf "%s ", $2}') decl $(awk '/tidal_declare of N/ {t=1; next} t && $1 == "ranges" {next} t && NF == 0 {t=0} t && $1+0 > 0 {printf "%s ", $2}' $f)"; done
