#!/bin/bash
# Session 11, call 3: what page hints of 4 bytes (a node's index) instead of 16 (two pointers)
# would save an interior query's lookup at 10^3-10^6 live blocks, in a stand-alone model
# (.device-out/mlp.cpp; not tidal code), twice.
TREE=s11 source tools/bench/h200-call.sh
step mlp-1 90 $D/core $R/.device-out/mlp
step mlp-2 90 $D/core $R/.device-out/mlp
cat $W/mlp-*.txt
