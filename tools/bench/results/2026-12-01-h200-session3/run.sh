#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s3
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_LOG_LEVEL=warn
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $OUT/gpu.txt 2>&1; date -u > $OUT/date.txt
echo "== out-of-core"; timeout 300 $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --json $OUT/out-of-core.json > $OUT/out-of-core.txt 2>&1; echo rc=$?; grep -A30 "targets" $OUT/out-of-core.txt | head -30
echo "== context-startup"; timeout 60 $D/bench/context-startup --runtime cuda --reps 20 --json $OUT/context-startup.json > $OUT/context-startup.txt 2>&1; cat $OUT/context-startup.txt
echo "== trace-cost"; timeout 60 $D/bench/trace-cost --runtime cuda --json > $OUT/trace-cost.json 2> $OUT/trace-cost.err; tail -c 600 $OUT/trace-cost.json
echo "== scaling threads"; timeout 120 $D/bench/scaling --runtime sim --threads-only --max 1000000 --threads 16 --churn 2 --json > $OUT/scaling-threads.json 2> $OUT/scaling-threads.err; python3 -c "
import json,sys
j=json.load(open('$OUT/scaling-threads.json'))
for r in j.get('threads',[]):
    if r.get('readers') in (1,16): print(r)
" 2>&1 | head -12
