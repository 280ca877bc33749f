#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s4
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
date -u > $W/date.txt
echo "== device-tests"; timeout 150 stdbuf -oL $D/tools/tidal-device-tests > $W/device-tests.txt 2>&1; echo "rc=$?"
for i in 1 2 3; do timeout 30 $D/bench/trace-cost --runtime cuda --json > $W/trace-cost-$i.txt 2>&1; done
tar czf $OUT/results.tgz -C $OUT w
cat $W/device-tests.txt | tail -30; cat $W/trace-cost-*.txt
