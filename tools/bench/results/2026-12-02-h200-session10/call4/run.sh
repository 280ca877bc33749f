#!/bin/bash
# Session 10, call 4: the stream scenario's lookahead row, default hold, with timelines, as many
# runs as the device time left allows (the library at 215b19a).
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
date -u > $W/date.txt; uptime > $W/uptime.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream"
for r in 1 2 3 4 5 6; do
  s stream-$r 40 $M --timeline $W/stream-$r --json $W/stream-$r.json
done
