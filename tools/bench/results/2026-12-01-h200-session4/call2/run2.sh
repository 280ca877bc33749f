#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s4
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
L=$OUT/diag.log
{ date -u; which nsys ncu; ls /usr/local/cuda/bin | tr '\n' ' '; echo
echo "== sync_probe"; timeout 60 $R/.device-out/diag/sync_probe
for args in "" "--chunk 256MiB" "--streams 2" "--chunk 16MiB"; do
  echo "== overlap $args"; timeout 60 $D/bench/migration-scenarios --runtime cuda --scenario overlap $args 2>&1 | grep -E "alone|overlapped|compute /" 
done
echo "== stream --streams 2"; timeout 60 $D/bench/migration-scenarios --runtime cuda --scenario stream --no-sweeps --streams 2 2>&1 | grep -E "prefetch whole|lookahead|declare whole"
} > $L 2>&1
cat $L
