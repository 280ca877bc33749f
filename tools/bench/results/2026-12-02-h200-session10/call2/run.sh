#!/bin/bash
# Session 10, call 2: the declaration table with the working tree ("new": units named in runs
# need no table, and a declaration's per-call costs cut) against 3ab138f ("head"), interleaved;
# then the stream scenario's lookahead row four times with timelines, and the overlap row once.
set -u
R=$(pwd); D=$R/.device-out/s5
export TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
lib() { case $1 in head) echo $R/.device-out/lib:$R/.device-out/headlib10;; *) echo $R/.device-out/lib:$D/core;; esac; }
W=$OUT/w; mkdir -p $W
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv > $W/gpu.txt 2>&1; date -u > $W/date.txt
lscpu > $W/lscpu.txt 2>&1; uptime > $W/uptime.txt
s() { local n=$1 l=$2 v=$3; shift 3; local t0=$(date +%s); echo "== $n ($v)"; LD_LIBRARY_PATH=$(lib $v) timeout $l "$@" > $W/$n.txt 2> $W/$n.err; echo "rc=$? $(( $(date +%s)-t0 ))s"; tar czf $OUT/results.tgz -C $OUT w; }
S="$D/bench/scaling --runtime cuda --max 10000 --reps 5"
s decl-new-1 60 new $S
s decl-head-1 60 head $S
s decl-new-2 60 new $S
s decl-new-3 60 new $S
s decl-head-2 60 head $S
s decl-new-4 60 new $S
M="$D/bench/migration-scenarios --runtime cuda --no-sweeps"
for r in 1 2 3 4; do
  s stream-$r 60 new $M --scenario stream --timeline $W/stream-$r --json $W/stream-$r.json
done
s overlap-1 40 new $M --scenario overlap --json $W/overlap-1.json
uptime >> $W/uptime.txt
echo "== summary"
for f in $W/decl-*.txt; do echo "$(basename $f .txt) $(grep -A5 'tidal_declare of N' $f | tail -4 | awk '{print $2"/"$3}' | tr '\n' ' ')"; done
python3 - $W <<'PY'
import json,glob,sys
for f in sorted(glob.glob(sys.argv[1]+'/stream-*.json')):
    d=json.load(open(f)); v={r['name']:r for r in d['variants']}
    pf=v['prefetch whole range + kernel']; ch=[r for n,r in v.items() if n.startswith('tidal: declare per')][0]
    print(f.split('/')[-1][:-5].ljust(12),'whole %.1f chunked %.1f ratio %.3f'%(pf['median_s']*1e3,ch['median_s']*1e3,pf['median_s']/ch['median_s']))
PY
grep -h "overlapped <=" $W/overlap-*.txt
