#!/bin/bash
# Session 6, call 4: the staged copy's model (nt / cached / demote stores, slot sizes) twice,
# with the contention table; copy-bandwidth for tidal's own rate in the same call.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
grep -o -w -E "cldemote|movdir64b|serialize" /proc/cpuinfo | sort | uniq -c > $W/cpuflags.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
s model1 120 $D/tools/staging-contention
s cb1 60 $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB,256MiB --reps 7
s model2 120 $D/tools/staging-contention
s cb2 60 $D/bench/copy-bandwidth --sizes 16MiB,32MiB,64MiB,128MiB,256MiB --reps 7
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
cat $W/cpuflags.txt
sed -n '/staged-copy model/,$p' $W/model1.txt; sed -n '/staged-copy model/,$p' $W/model2.txt
for f in cb1 cb2; do echo "-- $f"; grep -E "^[0-9]+ +h2d" $W/$f.txt | cut -c1-90; done
