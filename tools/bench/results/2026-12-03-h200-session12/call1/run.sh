#!/bin/bash
# Session 12, call 1: registry nodes laid out so a query reads one line of the node (record
# head + flags in the node's last 64-byte line, 64-byte node blocks) against d1cebb1, interleaved.
TREE=s12 source tools/bench/h200-call.sh
S="$D/bench/scaling --runtime cuda --max 1000000 --reps 3"
step scaling-new-1 200 $D/core $S
step scaling-old-1 200 $R/.device-out/oldlib $S
step scaling-new-2 200 $D/core $S
step scaling-old-2 200 $R/.device-out/oldlib $S
step scaling-new-3 200 $D/core $S
uptime >> $W/uptime.txt
for f in $W/scaling-*.txt; do echo "$(basename $f .txt)"; sed -n 3,6p $f | awk '{print "  ", $1, "query", $3, "query(set)", $5, "ovl", $6, "dep", $7, "bytes", $10}'; done
