#!/bin/bash
# Session 11, call 7: tidal_pointer_query with fewer stores and instructions (the record
# filled in place, placed_by copied whole, the elastic test inline: ~200 instructions a query,
# was ~290) against the library at b18f27d, interleaved; scaling as committed in 75092e5.
TREE=s11 source tools/bench/h200-call.sh
S="$D/bench/scaling --runtime cuda --max 1000000 --reps 3"
step scaling-new-1 200 $R/.device-out/newlib $S
step scaling-old-1 200 $D/core $S
step scaling-new-2 200 $R/.device-out/newlib $S
step scaling-old-2 200 $D/core $S
uptime >> $W/uptime.txt
for f in $W/scaling-*.txt; do echo "$(basename $f .txt)"; sed -n 3,6p $f | awk '{print "  ", $1, "query", $3, "query(set)", $5, "floor(dep)", $7}'; done
