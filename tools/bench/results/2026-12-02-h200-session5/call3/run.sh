#!/bin/bash
# Session 5, call 3: A/B in one run. A = b2ac786 (last session's end), B = 85e9d92 (elastic
# moves by groups, victim unmapped first), C = this tree (victims unmapped after the copy,
# streamed staging). Same binaries (bench, runtime module, policies); only libtidal differs.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in A) echo $R/.device-out/lib:$R/.device-out/libA;; B) echo $R/.device-out/lib:$R/.device-out/libB;; C) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s sync-probe 60 C $D/tools/sync-probe
for v in C A B; do
  s ooc-$v 120 $v $D/bench/migration-scenarios --runtime cuda --scenario out-of-core --no-sweeps --elastic-only --reps 5 --json $W/ooc-$v.json
done
for r in 1 2; do for v in A C; do
  s cb-$v$r 60 $v $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
done; done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
grep -E "aliased|idle range" $W/sync-probe.txt
for v in C A B; do echo "-- ooc $v"; grep -E "^elastic (compute|overlapped)|overlapped / max" $W/ooc-$v.txt | cut -c1-110; done
for f in A1 C1 A2 C2; do echo "-- cb $f"; grep -E "^(16777216|33554432|67108864|134217728) " $W/cb-$f.txt; done
