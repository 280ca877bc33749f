#!/bin/bash
# Session 6, call 5: [copy] slot_stores streaming (default) / cached / demote, interleaved,
# three rounds, one library (this tree); the model once more.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
for i in 1 2 3; do
  s cb-streaming$i 60 $D/bench/copy-bandwidth --sizes 4MiB,16MiB,32MiB,64MiB,128MiB,256MiB --reps 7
  s cb-cached$i 60 $D/bench/copy-bandwidth --config $R/.device-out/cfg/cached.toml --sizes 4MiB,16MiB,32MiB,64MiB,128MiB,256MiB --reps 7
  s cb-demote$i 60 $D/bench/copy-bandwidth --config $R/.device-out/cfg/demote.toml --sizes 4MiB,16MiB,32MiB,64MiB,128MiB,256MiB --reps 7
done
s model 120 $D/tools/staging-contention
tar czf $OUT/results.tgz -C $OUT w
echo "== summary (h2d: size pinned pageable host1 hostN tidal)"
for i in 1 2 3; do for m in streaming cached demote; do echo "-- $m$i"; grep -E "^[0-9]+ +h2d" $W/cb-$m$i.txt | awk '{printf "%s:%s/%s  ", $1/1048576, $7, $6} END {print ""}'; done; done
sed -n '/staged-copy model/,$p' $W/model.txt
