#!/bin/bash
# Session 10, call 1: the stream scenario's lookahead row with the default hold (50 us), six runs
# with timelines (issue 17: which driver state is this machine in?); the overlap row twice; the
# declaration table with the working tree ("new": units named in runs need no table) against
# 3ab138f ("head") and a33ebcb ("old": before the prefetch-plan fast path), interleaved, and
# "new" pinned to one CPU and on the simulated device; scaling to 10^6 once (query rows).
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
lib() { case $1 in old) echo $R/.device-out/lib:$R/.device-out/oldlib10;; head) echo $R/.device-out/lib:$R/.device-out/headlib10;; *) echo $R/.device-out/lib:$D/core;; esac; }
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lscpu > $W/lscpu.txt 2>&1; uptime > $W/uptime.txt
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3 4 5 6; do
  s stream-$r 60 new $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json
done
for r in 1 2; do
  s overlap-$r 60 new $M --scenario overlap --json $W/overlap-$r.json
done
for r in 1 2 3; do
  s decl-new-$r 60 new $D/bench/scaling --runtime cuda --max 10000 --reps 5
  s decl-head-$r 60 head $D/bench/scaling --runtime cuda --max 10000 --reps 5
  s decl-old-$r 60 old $D/bench/scaling --runtime cuda --max 10000 --reps 5
  s decl-pin-$r 60 new taskset -c $((2 + r)) $D/bench/scaling --runtime cuda --max 10000 --reps 5
  s decl-sim-$r 60 new $D/bench/scaling --runtime sim --max 10000 --reps 5
done
uptime >> $W/uptime.txt
s scaling-1 200 new $D/bench/scaling --runtime cuda --max 1000000 --reps 3
echo "== summary"
for f in $W/decl-*.txt; do echo "$(basename $f .txt) $(grep -A5 'tidal_declare of N' $f | tail -4 | awk '{print $2"/"$3}' | tr '\n' ' ')"; done
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream-*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
PY
for f in $W/overlap-*.txt; do echo "$(basename $f)"; grep -i "overlap\|ratio\|max(" $f | tail -4; done
head -8 $W/scaling-1.txt
