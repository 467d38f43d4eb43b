#!/usr/bin/env bash
# Session 18, call 3: build; the partial sums' tests; then d 4 096 with partials of 16, 32 and none
# (the before, same run), d 1 024, d 384 and expo d 128 (unchanged expected).
cd "$(dirname "$0")/.."
t0=$(date +%s)
scripts/gpu-check --build 2>&1 | tail -1
echo "built $(( $(date +%s) - t0 )) s"
B=build-gpu
run() { timeout 100 python3 scripts/bench-joins --cli $B/twobody --codes cuda --no-peak --out /tmp/bj "$@" 2>&1 | grep -E "twobody cuda|ran:" | sed -E 's/.*\| ran: //; s/; no vector grid.*//' | tail -2; }
echo "== d 4096, partials of 16"; run --eps 13.378530850296343 gauss-100000-d4096
echo "== d 4096, one accumulator"; TWOBODY_GRAM_FOLD=0 run --eps 13.378530850296343 gauss-100000-d4096
echo "== d 4096, partials of 32"; TWOBODY_GRAM_FOLD=32 run --eps 13.378530850296343 gauss-100000-d4096
echo "bench 1 $(( $(date +%s) - t0 )) s"
timeout 200 $B/tests/twobody_gpu_tests --gtest_filter='CudaJoins.*:CudaJoinPairs.*:CudaGram*:CudaKnn*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|settled .* partials|tests ran" | tail -12
echo "tests $(( $(date +%s) - t0 )) s"
echo "== d 1024"; run gauss-200000-d1024
echo "== d 384"; run --eps 3.955021208541023 gauss-100000-d384
echo "== expo d 128"; run --eps 0.29503902482824806 expo-1000000-d128
echo "done $(( $(date +%s) - t0 )) s"
echo "== ncu, d 4096 tiles with partials of 16"
timeout 90 ncu --clock-control none --section SpeedOfLight --section Occupancy --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum -k regex:gram_tiles -c 1 $B/twobody join --data /tmp/bj/gauss-100000-d4096.npy --eps 13.378530850296343 --emit total --backend cuda 2>&1 | grep -E "hmma|Duration|L2 Cache Th|DRAM Th|Registers Per|Achieved Occ|inst_executed|Dynamic Shared" | head -12
echo "all $(( $(date +%s) - t0 )) s"
