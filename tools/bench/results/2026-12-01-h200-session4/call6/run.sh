#!/bin/bash
set -u
R=$(pwd); D=$R/.device-out/s4; G=$R/.device-out/diag
export LD_LIBRARY_PATH=$R/.device-out/lib:$D/core TIDAL_RUNTIME=cuda TIDAL_RUNTIME_PATH=$D/core/runtime/cuda TIDAL_POLICY_PATH=$D/policies TIDAL_LOG_LEVEL=warn
date -u
echo "== jacobi, ranges on"; TIDAL_CONFIG=$G/ranges.toml NVTX_INJECTION64_PATH=$G/libnvtx_count.so timeout 60 $D/tools/jacobi 2>&1 | tail -12
echo "== jacobi, ranges off (default)"; NVTX_INJECTION64_PATH=$G/libnvtx_count.so timeout 60 $D/tools/jacobi 2>&1 | grep nvtx-count
echo "== tidal bench --quick, ranges on"; NVTX_INJECTION64_PATH=$G/libnvtx_count.so timeout 120 $D/tools/tidal bench --quick --runtime cuda --config $G/ranges.toml --no-progress > /dev/null 2> $OUT/bench.err; echo rc=$?; grep nvtx-count $OUT/bench.err
