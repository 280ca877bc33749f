#!/bin/bash
# Session 16, call 1: the pooled alloc+free pair after 884c7e2 (586 instructions a 4 KiB pair,
# callgrind) against session 15's library (4c0a116, 661) and 882e135's (625), interleaved three
# times; then the scaling table at 10^6 twice, to see that queries did not move.
TREE=s16 source tools/bench/h200-call.sh
P=$R/.device-out/s15/core     # 4c0a116
O=$R/.device-out/oldlib15     # 882e135
for i in 1 2 3; do
    step alloc-new-$i 20 $D/core $D/bench/alloc-latency --runtime cuda --rounds 5
    step alloc-s15-$i 20 $P $D/bench/alloc-latency --runtime cuda --rounds 5
    step alloc-882-$i 20 $O $D/bench/alloc-latency --runtime cuda --rounds 5
done
step scaling-new-1 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-s15-1 75 $P $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-2 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
for f in $W/alloc-*.txt; do echo "$(basename $f .txt) $(grep -E '^device +(256|4096|65536) ' $f | tr -s ' ' | tr '\n' '|')"; done
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) pair $(sed -n 3,6p $f | awk '{printf "%s ", $2}') query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}')"; done
