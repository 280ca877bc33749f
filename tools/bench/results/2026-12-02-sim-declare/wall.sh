#!/bin/bash
# usage: D=./d [NS="10 100 1000 10000"] wall.sh RUNS LIBDIR_A NAME_A LIBDIR_B NAME_B ...
# exp-declare (D) at N = 10 ... 10^5, 200 000 ranges declared per run, RUNS runs per size with the
# libraries interleaved; prints the median ns/range per N and library, then every run.
RUNS=$1; shift
declare -A res
for n in ${NS:-10 100 1000 10000 100000}; do
  reps=$((200000 / n)); [ $reps -lt 3 ] && reps=3
  for r in $(seq $RUNS); do
    args=("$@")
    for ((i=0;i<${#args[@]};i+=2)); do
      lib=${args[i]}; name=${args[i+1]}
      v=$(LD_LIBRARY_PATH=$lib ${D:-./d} $n $reps | awk '{print $3}')
      res[$name,$n]="${res[$name,$n]} $v"
    done
  done
done
args=("$@")
for ((i=0;i<${#args[@]};i+=2)); do
  name=${args[i+1]}
  printf "%-8s" $name
  for n in ${NS:-10 100 1000 10000 100000}; do
    med=$(echo ${res[$name,$n]} | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    printf " %6s:%-7s" $n $med
  done
  echo "   runs: $(for n in ${NS:-10 100 1000 10000 100000}; do echo -n "[${res[$name,$n]} ] "; done)"
done
