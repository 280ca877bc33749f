#!/bin/bash
# Session 6, call 3: staging-contention (the machine: pinned DMA and host copies, alone and at
# once); scaling to 10^6 with the memory floors; copy settings.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s contention1 60 $D/tools/staging-contention
s scaling1 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 3
for c in default chunk4 chunk64 ring8 spin0; do
  if [ $c = default ]; then s cb-$c 60 $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB --reps 7
  else s cb-$c 60 $D/bench/copy-bandwidth --config $R/.device-out/cfg/$c.toml --sizes 16MiB,32MiB,64MiB,128MiB --reps 7; fi
done
s contention2 60 $D/tools/staging-contention
s scaling2 150 $D/bench/scaling --runtime cuda --max 1000000 --reps 3
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
cat $W/contention1.txt $W/contention2.txt
grep -v "^#" $W/scaling1.txt | head -6; grep -v "^#" $W/scaling2.txt | head -6
for c in default chunk4 chunk64 ring8 spin0; do echo "-- $c"; grep -E "^[0-9]+ +h2d" $W/cb-$c.txt | cut -c1-90; done
