#!/bin/bash
# Session 6, call 6: the new default ([copy] slot_stores = "auto": demote from 16 MiB on a
# processor with CLDEMOTE) against the old one ("streaming"), full sweeps, interleaved, twice.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
s() { local n=$1 l=$2; shift 2; local t0=$(date +%s); echo "== $n"; timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; }
printf "runtime = \"cuda\"\n" > $W/c.toml; $D/tools/tidal config check $W/c.toml | grep -A7 "^.copy." > $W/config-copy.txt
for i in 1 2; do
  s sweep-auto$i 120 $D/bench/copy-bandwidth --sweep --reps 5
  s sweep-streaming$i 120 $D/bench/copy-bandwidth --config $R/.device-out/cfg/streaming.toml --sweep --reps 5
done
s sweep-auto-json 120 $D/bench/copy-bandwidth --sweep --reps 5 --json
tar czf $OUT/results.tgz -C $OUT w
echo "== summary (size dir pinned hostN tidal ratio)"
cat $W/config-copy.txt
for f in sweep-auto1 sweep-streaming1 sweep-auto2 sweep-streaming2; do echo "-- $f"; grep -E "^[0-9]+ +h2d" $W/$f.txt | awk '{printf "%s:%s/%s/%s %s  ", $1/1048576, $7, $3, $6, $9} END {print ""}'; done
python3 -c "
import json; j=json.load(open('$W/sweep-auto-json.txt'))
print({k: j[k] for k in j if not isinstance(j[k], list)})
" 2>&1 | cut -c1-600
