#!/usr/bin/env bash
# Session 18, call 2: build (and the peers for d 2 and 64 beside it), the d 4 096 profile, then peer rows.
cd "$(dirname "$0")/.."
t0=$(date +%s)
python3 scripts/bench-joins --build-peers 2,64 >/tmp/peers.log 2>&1 &
scripts/gpu-check --build 2>&1 | tail -1
wait
tail -2 /tmp/peers.log
echo "built $(( $(date +%s) - t0 )) s"
wip/s18-prof.sh
echo "profiled $(( $(date +%s) - t0 )) s"
for c in expo-1000000-d64 expo-1000000-d2; do
  timeout 200 python3 scripts/bench-joins --cli build-gpu/twobody --codes cuda,fasted,gdsjoin,tedjoin --timeout 60 --no-peak --out $OUT/bj $c 2>&1 | grep -E "twobody|fasted|gds|ted|FaSTED|GDS|TED" | grep -v plan | tail -5
  echo "$c done $(( $(date +%s) - t0 )) s"
done
