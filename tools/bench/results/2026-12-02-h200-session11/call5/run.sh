#!/bin/bash
# Session 11, call 5: does the 10^5-range row, interleaved with the others, raise the 10^4 row?
# `cur` = scaling as call 4 ran it; `warm3` = the same with untimed calls naming >= 3x10^4 ranges
# before each slice instead of one call (measured-change.diff). --declare-only throughout.
TREE=s11 source tools/bench/h200-call.sh
L=$D/core
step decl-cur-max5-1 90 $L $D/bench/scaling --runtime cuda --max 100000 --reps 3 --declare-only
step decl-warm3-max5-1 90 $L $D/bench/scaling-warm3 --runtime cuda --max 100000 --reps 3 --declare-only
step decl-cur-max4-1 60 $L $D/bench/scaling --runtime cuda --max 10000 --reps 5 --declare-only
step decl-cur-max5-2 90 $L $D/bench/scaling --runtime cuda --max 100000 --reps 3 --declare-only
step decl-warm3-max5-2 90 $L $D/bench/scaling-warm3 --runtime cuda --max 100000 --reps 3 --declare-only
step decl-cur-max4-2 60 $L $D/bench/scaling --runtime cuda --max 10000 --reps 5 --declare-only
uptime >> $W/uptime.txt
summary_declare
