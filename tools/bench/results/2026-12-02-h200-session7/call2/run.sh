#!/bin/bash
# Session 7, call 2: the managed stream's lookahead row under host load (CPU: 14 busy threads;
# memory: 8 dd writers), lookahead_depth 1 (default) / 2 / 3, interleaved, with timelines.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps --scenario stream"
HOG=()
cpu_hog() { for i in $(seq 14); do timeout 200 sh -c 'while :; do :; done' & HOG+=($!); done; }
mem_hog() { for i in $(seq 8); do timeout 200 dd if=/dev/zero of=/dev/null bs=512M count=100000 2>/dev/null & HOG+=($!); done; }
stop_hog() { kill ${HOG[@]} 2>/dev/null; wait ${HOG[@]} 2>/dev/null; HOG=(); }
run3() { # tag, depths...
  local tag=$1; shift
  for d in "$@"; do s $tag-d$d 70 $M --lookahead-depth $d --timeline $W/$tag-d$d --json $W/$tag-d$d.json; done
}
run3 idle 1 2 3
cpu_hog; run3 cpu 1 2 3; run3 cpu2 2 1; stop_hog
mem_hog; run3 mem 1 2 3; stop_hog
run3 idle2 2 1
# Issue 15: pinned copies from 1..16 threads with an elastic allocation live, the library before
# (oldlib: b1b465a) and after the registry routes elastic copies, interleaved (simulated runtime:
# the copies are the host path, no GPU call).
for r in 1 2; do for L in old new; do
  if [ $L = old ]; then LP=$R/.device-out/lib:$R/.device-out/oldlib; else LP=$R/.device-out/lib:$D/core; fi
  s threads-$L-$r 90 env LD_LIBRARY_PATH=$LP TIDAL_RUNTIME=sim $D/bench/scaling --runtime sim --threads-only --max 100000 --threads 16 --seconds 0.5
done; done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary"
for f in $W/*.txt; do b=$(basename $f .txt); case $b in date|gpu|threads*) continue;; esac; printf "%-9s " $b; a=$(grep -E "^prefetch whole" $f | awk '{print $2}'); c=$(grep -E "^tidal: declare per" $f | awk '{print $(NF-7)}'); r=$(grep "lookahead: >= 0.95x" $f | awk '{print $(NF-3)}'); echo "whole=$a ratio=$r $(grep timeline $W/$b.err | cut -c30-140)"; done
for f in $W/threads*.txt; do echo "-- $f"; grep -E "pinned|elastic" $f; done
