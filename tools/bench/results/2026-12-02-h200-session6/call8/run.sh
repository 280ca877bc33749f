#!/bin/bash
# Session 6, call 8: the managed stream scenario four more times (this tree).
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
for i in 1 2 3 4; do s stream$i 60 $D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream --json $W/stream$i.json; done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
for i in 1 2 3 4; do echo "-- stream$i"; grep -E "^(prefetch whole|tidal: declare per)" $W/stream$i.txt | cut -c1-100; grep "lookahead: >= 0.95x" $W/stream$i.txt | cut -c1-140; done
