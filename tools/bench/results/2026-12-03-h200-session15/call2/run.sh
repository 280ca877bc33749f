#!/bin/bash
# Session 15, call 2: the declaration table alone, new and old interleaved three times each
# (call 1 read new 18-58 % above old in both of its pairs, where callgrind on the simulated
# device counts 775 instructions a range for new against 851); alloc+free twice more each; the
# whole scaling table once more each (new, old, new).
TREE=s15 source tools/bench/h200-call.sh
O=$R/.device-out/oldlib15
for i in 1 2 3; do
    step decl-new-$i 40 $D/core $D/bench/scaling --runtime cuda --declare-only --max 10000 --reps 5
    step decl-old-$i 40 $O $D/bench/scaling --runtime cuda --declare-only --max 10000 --reps 5
done
step alloc-new-2 15 $D/core $D/bench/alloc-latency --runtime cuda --rounds 5
step alloc-old-2 15 $O $D/bench/alloc-latency --runtime cuda --rounds 5
step alloc-new-3 15 $D/core $D/bench/alloc-latency --runtime cuda --rounds 5
step alloc-old-3 15 $O $D/bench/alloc-latency --runtime cuda --rounds 5
step scaling-new-3 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-old-3 75 $O $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step scaling-new-4 75 $D/core $D/bench/scaling --runtime cuda --max 1000000 --reps 3
step mlp-1000000 30 $D/core $D/bench/mlp 1000000
step mlp-1000 30 $D/core $D/bench/mlp 1000
summary_declare decl-
for f in $W/scaling-*.txt; do echo "$(basename $f .txt) query $(sed -n 3,6p $f | awk '{printf "%s ", $3}') set $(sed -n 3,6p $f | awk '{printf "%s ", $5}') pair $(sed -n 3,6p $f | awk '{printf "%s ", $2}') ovl $(sed -n 6p $f | awk '{print $6}') dep $(sed -n 6p $f | awk '{print $7}')"; done
summary_declare scaling-
for f in $W/alloc-*.txt; do echo "$(basename $f .txt) $(grep -E '^device +4096' $f)"; done
cat $W/mlp-*.txt
