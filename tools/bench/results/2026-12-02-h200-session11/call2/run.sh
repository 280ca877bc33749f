#!/bin/bash
# Session 11, call 2: library and scaling at b18f27d. The declaration table (interleaved slices)
# six times; the lookahead row eight times and the overlap row twice (issue 17); the pageable
# copy sweep once (issue 17: host->device >= 0.8x from 16 MiB).
TREE=s11 source tools/bench/h200-call.sh
L=$D/core
N="$D/bench/scaling --runtime cuda --max 10000 --reps 5 --declare-only"
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3; do step decl-$r 60 $L $N; done
for r in 1 2 3 4; do step stream-$r 60 $L $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json; done
step overlap-1 40 $L $M --scenario overlap --json $W/overlap-1.json
step copy-sweep 240 $L $D/bench/copy-bandwidth --sweep --reps 5
for r in 4 5 6; do step decl-$r 60 $L $N; done
for r in 5 6 7 8; do step stream-$r 60 $L $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json; done
step overlap-2 40 $L $M --scenario overlap --json $W/overlap-2.json
uptime >> $W/uptime.txt
echo "== summary"
summary_declare
summary_stream
grep -h "overlapped <=" $W/overlap-*.txt
grep -E '^[0-9]+ +h2d' $W/copy-sweep.txt | awk '$1>=16777216 {print $1, $9, $10}'
