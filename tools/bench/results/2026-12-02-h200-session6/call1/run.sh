#!/bin/bash
# Session 6, call 1. One library (5c10fc2 + --worker-spin-us): the migration worker spinning for
# its next job (default, 2000 us) against sleeping (--worker-spin-us 0), interleaved, same run.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for i in 1 2; do
  s ooc-spin$i 120 $M --scenario out-of-core --elastic-only --reps 5 --json $W/ooc-spin$i.json
  s ooc-zero$i 120 $M --scenario out-of-core --elastic-only --reps 5 --worker-spin-us 0 --json $W/ooc-zero$i.json
done
for i in 1 2; do
  s stream-spin$i 90 $M --scenario stream --json $W/stream-spin$i.json
  s stream-zero$i 90 $M --scenario stream --worker-spin-us 0 --json $W/stream-zero$i.json
done
s overlap-spin 60 $M --scenario overlap --reps 7 --json $W/overlap-spin.json
s scaling 200 $D/bench/scaling --runtime cuda --max 1000000 --reps 3 --json
s sweep 120 $D/bench/copy-bandwidth --sweep --reps 5
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
for f in ooc-spin1 ooc-zero1 ooc-spin2 ooc-zero2; do echo "-- $f"; grep -E "^elastic|\] elastic" $W/$f.txt | cut -c1-120 | head -7; done
for f in stream-spin1 stream-zero1 stream-spin2 stream-zero2 overlap-spin; do echo "-- $f"; grep -E "NOT MET|  met" $W/$f.txt | cut -c1-150; done
echo "-- scaling"; grep -v "^{" $W/scaling.txt | head -30
echo "-- sweep"; grep -E "^(16777216|33554432|67108864|134217728|268435456|536870912|1073741824) |host" $W/sweep.txt | cut -c1-130 | head -20
