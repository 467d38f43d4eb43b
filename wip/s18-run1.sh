#!/usr/bin/env bash
# Session 18, device call 1: build, then the three unrun Gram changes' tests and timings.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
scripts/gpu-check --build 2>&1 | tail -3
echo "build $(( $(date +%s) - t0 )) s"
B=build-gpu
timeout 150 $B/tests/twobody_gpu_tests --gtest_filter='CudaJoins.*:CudaJoinPairs.*:CudaGram*:CudaKnn*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" | tail -12
echo "tests done $(( $(date +%s) - t0 )) s"
run() { timeout 90 python3 scripts/bench-joins --cli $B/twobody --codes cuda --no-peak --out $OUT/bj "$@" 2>&1 | grep -vE "^\s*$" | tail -6; }
run --eps 13.378530850296343 gauss-100000-d4096
run --eps 3.955021208541023 gauss-100000-d384
run --eps 0.29503902482824806 expo-1000000-d128
run gauss-200000-d1024
echo "joins done $(( $(date +%s) - t0 )) s"
timeout 60 $B/bench/twobody_expression_bench gpu-rdf 2>&1 | tail -8
