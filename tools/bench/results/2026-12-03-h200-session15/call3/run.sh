#!/bin/bash
# Session 15, call 3: the scaling table with its floor(+q) column (a lookup of one 64-byte line
# followed by a query's worth of work that does not wait for it: the machine's own limit for a
# query-sized lookup of a random block), new twice and old once.
TREE=s15 source tools/bench/h200-call.sh
O=$R/.device-out/oldlib15
step scaling-new-5 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-4 75 $O $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-6 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}') ovl $(sed -n 3,6p $f | awk '{printf "%s ", $6}') dep $(sed -n 3,6p $f | awk '{printf "%s ", $7}') +q $(sed -n 3,6p $f | awk '{printf "%s ", $12}') bytes $(sed -n 6p $f | awk '{print $10}')"; done
summary_declare scaling-
