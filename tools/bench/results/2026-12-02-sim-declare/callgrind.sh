#!/bin/bash
# usage: D=./d OUT=/tmp [CGX='--LL=1048576,16,64'] callgrind.sh LIBDIR TAG
# exp-declare (D) under callgrind at N = 10 (REPS 20), 100, 10^4, 10^5 (REPS 2), counting only
# declares(): instructions, D1 misses and LL misses per declared range.
LIB=$1; TAG=$2
for n in 10 100 10000 100000; do
  reps=2; [ $n = 10 ] && reps=20
  LD_LIBRARY_PATH=$LIB valgrind --tool=callgrind --cache-sim=yes $CGX --toggle-collect='declares*' --callgrind-out-file=${OUT:-/tmp}/cg-$TAG-$n.out ${D:-./d} $n $reps >/dev/null 2>&1
  python3 - "$n" "$reps" ${OUT:-/tmp}/cg-$TAG-$n.out <<'PY'
import sys,re
n=int(sys.argv[1]); reps=int(sys.argv[2])
for line in open(sys.argv[3]):
    if line.startswith('events:'): ev=line.split()[1:]
    if line.startswith('totals:') or line.startswith('summary:'):
        v=list(map(int,line.split()[1:])); d=dict(zip(ev,v))
        per=n*reps
        print(f"N={n} Ir/range={d['Ir']/per:.0f} D1mr/range={(d['D1mr']+d['D1mw'])/per:.2f} DLmr/range={(d.get('DLmr',0)+d.get('DLmw',0))/per:.3f}")
        break
PY
done
