#!/bin/bash
# Session 5, call 1: diagnostics. Staged pageable copies by [copy] setting; VMM calls against
# launches on another thread; elastic out of core by elastic chunk size (grouped moves).
set -u
R=$(pwd); D=$R/.device-out/s5
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s sync-probe 60 $D/tools/sync-probe
s cb-default 60 $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
for c in threads8 threads12 spin0 chunk4 chunk64 ring8; do
  s cb-$c 60 $D/bench/copy-bandwidth --config $R/.device-out/cfg/$c.toml --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
done
for e in 64MiB 16MiB 8MiB; do
  s ooc-$e 150 $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 3 --elastic-chunk $e --json $W/ooc-$e.json
done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
grep -E "launch\+record" $W/sync-probe.txt
for f in $W/cb-*.txt; do echo "-- $(basename $f)"; grep -E "^(16777216|33554432|67108864|134217728) " $f; done
for e in 64MiB 16MiB 8MiB; do echo "-- ooc $e"; grep -E "^(double|elastic)|\] elastic" $W/ooc-$e.txt | cut -c1-130; done
