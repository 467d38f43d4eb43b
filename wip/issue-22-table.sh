#!/usr/bin/env bash
# Issue 22's table, the rows still missing (next device session; two calls, each under 600 s):
#   wip/issue-22-table.sh A   build + peers (d 64, 2, 8), the real set and the other neighbour counts
#   wip/issue-22-table.sh B   the 10^7 exponential rows against GDS-Join, scikit-learn on 16 cores
# carry: peer-src/FaSTED peer-src/gpu_self_join peer-src/ted-join (scripts/fetch-join-peers first),
# and .whl (the faiss-cpu wheel: see the device README's wheel recipe; .whl/ is in .git/info/exclude).
cd "$(dirname "$0")/.."
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
B=build-gpu
bj() { python3 scripts/bench-joins --cli $B/twobody --no-peak --out $OUT/bj "$@" 2>&1 | grep -E "^(digits|gauss|expo)" | grep -v plan | sort -u | tail -12; echo "-- $(( $(date +%s) - t0 )) s"; }
if [[ ${1:-A} == A ]]; then
  python3 scripts/bench-joins --build-peers 64,2,8 >/tmp/peers.log 2>&1 &
  scripts/gpu-check --build 2>&1 | tail -1
  wait; tail -1 /tmp/peers.log
  bj --codes cuda,fasted,gdsjoin,tedjoin,torch,faiss-cpu --neighbours 16,64,256 --timeout 60 digits-1797-d64
  bj --codes cuda,fasted,torch --neighbours 16,256 --timeout 60 gauss-100000-d128
  bj --codes cuda,fasted --neighbours 16,256 --timeout 60 gauss-100000-d384
  bj --codes cuda,fasted --neighbours 16,64,256 --timeout 60 gauss-100000-d960
else
  bj --codes cuda,gdsjoin,tedjoin,fasted --timeout 150 expo-10000000-d2
  bj --codes cuda,gdsjoin --timeout 150 expo-10000000-d8
  bj --codes cpu,faiss-cpu,sklearn --threads 16 --timeout 120 gauss-100000-d128
  bj --codes cpu,faiss-cpu,sklearn --threads 16 --timeout 120 expo-200000-d16
fi
