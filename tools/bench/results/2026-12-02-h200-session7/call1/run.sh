#!/bin/bash
# Session 7, call 1: the managed stream's lookahead row with timelines, default / 1 / 4 streams / hold 0, interleaved.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream"
for r in 1 2; do
 s default-$r 70 $M --timeline $W/default-$r --json $W/default-$r.json
 s streams1-$r 70 $M --streams 1 --timeline $W/streams1-$r --json $W/streams1-$r.json
 s streams4-$r 70 $M --streams 4 --timeline $W/streams4-$r --json $W/streams4-$r.json
 s hold0-$r 70 $M --lookahead-hold-us 0 --timeline $W/hold0-$r --json $W/hold0-$r.json
done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
for f in $W/*.txt; do echo "-- $f"; grep -E "^(prefetch whole|tidal: declare per)" $f | cut -c1-100; grep "lookahead: >= 0.95x" $f | cut -c1-140; grep timeline $W/$(basename $f .txt).err 2>/dev/null| cut -c1-200; done 2>/dev/null | head -80
