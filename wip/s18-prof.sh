#!/usr/bin/env bash
# Session 18: where the time of the d = 4 096 join goes (nsys per kernel; ncu on one Gram tile launch).
cd "$(dirname "$0")/.."
B=build-gpu
timeout 90 python3 scripts/bench-joins --cli $B/twobody --codes cuda --no-peak --out /tmp/bj --eps 13.378530850296343 gauss-100000-d4096 | tail -1
timeout 100 nsys profile -o /tmp/p4096 --force-overwrite true $B/twobody join --data /tmp/bj/gauss-100000-d4096.npy --eps 13.378530850296343 --emit total --backend cuda >/dev/null 2>&1
nsys stats --report cuda_gpu_kern_sum --format csv /tmp/p4096.nsys-rep 2>/dev/null | cut -c1-220 | head -14
timeout 120 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum -k regex:gram_tiles -c 1 $B/twobody join --data /tmp/bj/gauss-100000-d4096.npy --eps 13.378530850296343 --emit total --backend cuda 2>&1 | grep -E "gram|Duration|Throughput|hmma|Registers|Achieved Occ|inst_executed|Ipc" | head -20
