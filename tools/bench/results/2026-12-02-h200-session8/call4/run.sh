#!/bin/bash
# Session 8, call 4: scaling with the query(set) column (the query over a fixed working set of
# 1 000 allocations spread through the N live), three runs to 10^6.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
s scaling-1 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 5
s scaling-2 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 5
s scaling-3 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 5 --json
head -7 $W/scaling-1.txt; head -7 $W/scaling-2.txt | tail -4
python3 -c "
import json; d=json.load(open('$W/scaling-3.txt'))
for s in d['sizes']: print(s['live'], s['query_ns'], s['query_set_ns'], s['floor_overlapped_ns'], s['floor_dependent_ns'])
"
