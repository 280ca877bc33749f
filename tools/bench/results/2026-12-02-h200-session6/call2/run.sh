#!/bin/bash
# Session 6, call 2. N = this tree (declarations start their registry misses ahead; the
# gpu-aware-mpi probe), O = 5c10fc2 (call 1's library). Same binaries.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in O) echo $R/.device-out/lib:$R/.device-out/libO;; N) echo $R/.device-out/lib:$D/core;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s gpu-aware-mpi 60 N $D/tools/gpu-aware-mpi
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
s ooc-N1 120 N $M --scenario out-of-core --elastic-only --reps 5 --json $W/ooc-N1.json
s scaling-N1 120 N $D/bench/scaling --runtime cuda --max 100000 --reps 5 --json
s scaling-O1 120 O $D/bench/scaling --runtime cuda --max 100000 --reps 5 --json
s ooc-N2 120 N $M --scenario out-of-core --elastic-only --reps 5 --json $W/ooc-N2.json
s scaling-N2 120 N $D/bench/scaling --runtime cuda --max 100000 --reps 5 --json
s scaling-O2 120 O $D/bench/scaling --runtime cuda --max 100000 --reps 5 --json
for i in 1 2; do
  s cb-default$i 60 N $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
  s cb-threads8-$i 60 N $D/bench/copy-bandwidth --config $R/.device-out/cfg/threads8.toml --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
cat $W/gpu-aware-mpi.txt
for f in ooc-N1 ooc-N2; do echo "-- $f"; grep -E "\] elastic" $W/$f.txt | cut -c1-120 | head -3; done
for f in scaling-N1 scaling-O1 scaling-N2 scaling-O2; do echo "-- $f"; grep -E "declare_ns|query_ns" $W/$f.txt | sed 's/"copy_ns.*//;s/"alloc_free_ns[^,]*,//' | tr -d '\n'; echo; done
for f in cb-default1 cb-threads8-1 cb-default2 cb-threads8-2; do echo "-- $f"; grep -E "^[0-9]+ +(h2d|d2h)" $W/$f.txt | cut -c1-100; done
