#!/bin/bash
# Session 5, call 7. C = 2699d95 (the worker sleeps between jobs), G = this tree (463fb8d: the
# worker spins for its next job once jobs come at a steady pace). Same binaries.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in C) echo $R/.device-out/lib:$R/.device-out/libC;; G) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s device-tests 120 G $D/tools/tidal-device-tests
s ooc-G 120 G $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-G.csv --json $W/ooc-G.json
s ooc-C 120 C $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --timeline $W/timeline-C.csv --json $W/ooc-C.json
s overlap-G 60 G $D/bench/migration-scenarios --runtime cuda --scenario overlap --reps 7 --json $W/overlap-G.json
s stream-G 90 G $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --json $W/stream-G.json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
tail -1 $W/device-tests.txt
for v in G C; do echo "-- ooc $v"; grep -E "^elastic|\] elastic" $W/ooc-$v.txt | cut -c1-110 | head -7; grep timeline $W/ooc-$v.err; done
grep -E "NOT MET|  met" $W/overlap-G.txt $W/stream-G.txt | cut -c1-150
