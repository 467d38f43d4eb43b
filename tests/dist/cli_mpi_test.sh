#!/usr/bin/env bash
# `mpiexec -n P twobody CMD ...` writes exactly what `twobody CMD ...` writes (P = 1 to 4), rank 0
# alone writes, --explain says how the work was split, and a bad input fails on every rank alike.
set -euo pipefail
twobody=$1 mpiexec=$2 np_flag=${3:--n}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$twobody" generate clustered -n 20000 --box 100 --seed 11 -o "$dir/d.txt"
"$twobody" generate uniform -n 15000 --box 100 --seed 12 -o "$dir/r.txt"
"$twobody" generate clustered --sky -n 10000 --seed 13 -o "$dir/s.txt"
"$twobody" generate uniform --sky -n 10000 --seed 14 -o "$dir/sr.txt"
awk '{print $0, 0.5 + (NR % 7) / 4}' "$dir/d.txt" > "$dir/dw.txt"

check() {  # name, then the command's arguments
  local name=$1; shift
  "$twobody" "$@" --threads 1 > "$dir/one.csv"
  for np in 1 2 3 4; do
    "$mpiexec" "$np_flag" "$np" "$twobody" "$@" --threads 1 > "$dir/many.csv" 2> "$dir/err.txt" ||
      { cat "$dir/err.txt" >&2; fail "$name on $np ranks exited non-zero"; }
    cmp -s "$dir/one.csv" "$dir/many.csv" || { diff "$dir/one.csv" "$dir/many.csv" | head >&2; fail "$name on $np ranks differs"; }
  done
  echo "ok: $name (one process = mpiexec 1, 2, 3, 4 ranks, $(wc -l < "$dir/one.csv") lines)"
}

check paircount paircount --data "$dir/d.txt" --rmin 0.5 --rmax 20 --nbins 12 --log
check paircount-cross-periodic paircount --data "$dir/d.txt" --data2 "$dir/r.txt" --rmax 25 --nbins 10 --box 100
check sdh sdh --data "$dir/r.txt" --nbins 32
check rdf rdf --data "$dir/r.txt" --box 100 --rmax 30 --nbins 15
check angular angular --data "$dir/s.txt" --rmin 0.01 --rmax 10 --nbins 12 --log
check xi-jackknife xi --data "$dir/d.txt" --randoms "$dir/r.txt" --box 100 --rmin 1 --rmax 25 --nbins 8 --log --jackknife 8
check wtheta wtheta --data "$dir/s.txt" --randoms "$dir/sr.txt" --rmin 0.1 --rmax 10 --nbins 8 --log
check neighbours neighbours --data "$dir/d.txt" --rmin 0.5 --rmax 6
check neighbours-cross-periodic neighbours --data "$dir/d.txt" --data2 "$dir/r.txt" --box 100 --rmax 8

# Weighted sums may differ in the last bits between rank counts: counts must not.
"$twobody" paircount --data "$dir/dw.txt" --columns 1,2,3 --weights-column 4 --rmax 20 --nbins 8 --threads 1 | cut -d, -f1-3 > "$dir/one.csv"
"$mpiexec" "$np_flag" 4 "$twobody" paircount --data "$dir/dw.txt" --columns 1,2,3 --weights-column 4 --rmax 20 --nbins 8 --threads 1 |
  cut -d, -f1-3 > "$dir/many.csv"
cmp -s "$dir/one.csv" "$dir/many.csv" || fail "weighted paircount counts differ on 4 ranks"
echo "ok: weighted paircount counts"
"$twobody" neighbours --data "$dir/dw.txt" --columns 1,2,3 --weights-column 4 --rmax 5 --threads 1 | cut -d, -f1-3 > "$dir/one.csv"
"$mpiexec" "$np_flag" 3 "$twobody" neighbours --data "$dir/dw.txt" --columns 1,2,3 --weights-column 4 --rmax 5 --threads 1 |
  cut -d, -f1-3 > "$dir/many.csv"
cmp -s "$dir/one.csv" "$dir/many.csv" || fail "weighted neighbours counts differ on 3 ranks"
echo "ok: weighted neighbours counts"

# --explain: the split, one line per rank.
"$mpiexec" "$np_flag" 4 "$twobody" paircount --data "$dir/d.txt" --rmax 20 --nbins 8 --threads 1 --explain \
  > /dev/null 2> "$dir/explain.txt"
grep -q "^mpi: 4 ranks" "$dir/explain.txt" || { cat "$dir/explain.txt" >&2; fail "--explain does not say how the work was split"; }
[[ $(grep -c "^mpi: rank [0-3] on" "$dir/explain.txt") == 4 ]] || { cat "$dir/explain.txt" >&2; fail "--explain lacks a line per rank"; }
echo "ok: --explain"

# -o: one file, written once; a bad input: the same exit code as one process, one message.
"$mpiexec" "$np_flag" 3 "$twobody" paircount --data "$dir/d.txt" --rmax 20 --nbins 8 -o "$dir/out.csv"
"$twobody" paircount --data "$dir/d.txt" --rmax 20 --nbins 8 > "$dir/one.csv"
cmp -s "$dir/one.csv" "$dir/out.csv" || fail "-o under mpiexec"
set +e
"$mpiexec" "$np_flag" 3 "$twobody" rdf --data "$dir/d.txt" --box 50 --rmax 10 --nbins 4 > /dev/null 2> "$dir/err.txt"
code=$?
set -e
[[ $code == 3 ]] || { cat "$dir/err.txt" >&2; fail "points outside the box: exit $code, not 3"; }
[[ $(grep -c "twobody: error:" "$dir/err.txt") == 1 ]] || { cat "$dir/err.txt" >&2; fail "the error is not reported once"; }
echo "ok: errors"
