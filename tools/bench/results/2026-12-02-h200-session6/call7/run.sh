#!/bin/bash
# Session 6, call 7: staged copies to pageable memory (device->host): P = this tree (memcpy into
# the destination), Q = the same with non-temporal stores into the destination. Sweeps,
# interleaved, twice each.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lib() { case $1 in P) echo $R/.device-out/lib:$D/core;; Q) echo $R/.device-out/lib:$R/.device-out/libQ;; esac; }
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
for i in 1 2; do
  s sweep-P$i 120 P $D/bench/copy-bandwidth --sweep --reps 5
  s sweep-Q$i 120 Q $D/bench/copy-bandwidth --sweep --reps 5
done
tar czf $OUT/results.tgz -C $OUT w
echo "== summary (size: tidal/pinned/hostN ratio)"
for f in sweep-P1 sweep-Q1 sweep-P2 sweep-Q2; do for d in d2h h2d; do echo "-- $f $d"; grep -E "^[0-9]+ +$d" $W/$f.txt | awk '{printf "%s:%s/%s/%s %s  ", $1/1048576, $7, $3, $6, $9} END {print ""}'; done; done
