#!/usr/bin/env bash
# The next session's first device call (issue 22): build, the tests this session could not run, the
# cheaper fold's measurement (predictions in bench/RESULTS.md, 16:35 UTC 2026-11-29), then the
# table's first part. Carry: peer-src/FaSTED peer-src/gpu_self_join peer-src/ted-join .whl
cd "$(dirname "$0")/.."
t0=$(date +%s)
python3 scripts/bench-joins --build-peers 64,2,8 >/tmp/peers.log 2>&1 &
scripts/gpu-check --build 2>&1 | tail -1
echo "built $(( $(date +%s) - t0 )) s"
B=build-gpu
timeout 240 $B/tests/twobody_gpu_tests --gtest_filter='CudaJoins.*:CudaJoinPairs.*:CudaGram*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|settled|fold [0-9]+: max" | tail -24
echo "tests $(( $(date +%s) - t0 )) s"
j() { timeout 60 python3 scripts/bench-joins --cli $B/twobody --codes cuda --no-peak --out /tmp/bj "$@" 2>&1 | grep -oE "ran: FP16 Gram tiles[^;]*;[^;]*;|twobody cuda +[0-9.]+ s" | sed -E 's/ran: FP16 Gram tiles on the tensor cores//; s/ undecided pairs settled in float64 \(/ settled (/; s/by the FP16 rows. distance summed in float64 within its bound, the rest by the rule/first look/' | sort -u | tr '\n' ' '; echo; }
for f in 32 0; do echo "d4096 F $f: $(TWOBODY_GRAM_FOLD=$f j --eps 13.378530850296343 gauss-100000-d4096)"; done
for f in 32 0; do echo "d2048 F $f: $(TWOBODY_GRAM_FOLD=$f j gauss-100000-d2048)"; done
for f in 32 16 0; do echo "d1024 F $f: $(TWOBODY_GRAM_FOLD=$f j gauss-200000-d1024)"; done
echo "expo d128 (interior tiles): $(j --eps 0.29503902482824806 expo-1000000-d128)"
echo "measured $(( $(date +%s) - t0 )) s"
wait; tail -1 /tmp/peers.log
