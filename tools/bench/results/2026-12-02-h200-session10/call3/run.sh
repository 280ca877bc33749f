#!/bin/bash
# Session 10, call 3: the declaration table with 10^6 ranges timed per repetition (was 10^5),
# the library at 215b19a, three runs.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
for r in 1 2 3; do
  s decl-$r 80 $D/bench/scaling --runtime cuda --max 10000 --reps 5
done
echo "== summary"
for f in $W/decl-*.txt; do echo "$(basename $f .txt) $(grep -A5 'tidal_declare of N' $f | tail -4 | awk '{print $2"/"$3}' | tr '\n' ' ')"; done
