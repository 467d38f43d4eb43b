#!/usr/bin/env bash
# End-to-end tests of the twobody command line: every bad input gets its exit code and a message
# that says what is wrong; good inputs give the documented columns. Prints "N passed, N failed".
set -u
tb=$1
shared=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

# expect CODE REGEX -- command...: exit status CODE and stderr matching REGEX.
expect() {
  local code=$1 regex=$2
  shift 3
  local err
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  if [[ $rc -eq $code && $err =~ $regex ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $* -> exit $rc (want $code), stderr: $err (want /$regex/)"
  fi
}
check() {  # check DESCRIPTION COMMAND: passes when COMMAND succeeds
  local what=$1
  shift
  if eval "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

printf '1 2 3\n4 5 6\n7 nan 9\n' >"$work/nan.txt"
printf '1 2 3\n4 5 6\n7 8\n' >"$work/cols.txt"
: >"$work/empty.txt"
printf '1 2 3\n4 5 6\n12 1 1\n' >"$work/outside.txt"
printf '0.1 0.2\n0.2 0.2\n' >"$work/flat_bins.txt"
printf -- '-1 0.2\n0.2 0.5\n' >"$work/neg_bins.txt"
printf '1 2 3 4 5 6 7 8 9\n2 3 4 5 6 7 8 9 1\n' >"$work/nine.txt"
printf '10 20\n30 95\n' >"$work/baddec.txt"

expect 3 'nan.txt:3' -- "$tb" paircount --data "$work/nan.txt" --rmax 5 --nbins 4
expect 3 'cols.txt:3: 2 columns' -- "$tb" paircount --data "$work/cols.txt" --rmax 5 --nbins 4
expect 3 'empty' -- "$tb" paircount --data "$work/empty.txt" --rmax 5 --nbins 4
expect 3 'cannot open: No such file or directory' -- "$tb" paircount --data "$work/missing.txt" --rmax 5 --nbins 4
expect 3 'outside the periodic box.*--wrap' -- "$tb" paircount --data "$work/outside.txt" --box 10 --rmax 5 --nbins 4
expect 0 '' -- "$tb" paircount --data "$work/outside.txt" --box 10 --wrap --rmax 5 --nbins 4
expect 4 'increase strictly' -- "$tb" paircount --data "$work/outside.txt" --bins "$work/flat_bins.txt"
expect 4 'negative' -- "$tb" paircount --data "$work/outside.txt" --bins "$work/neg_bins.txt"
expect 4 'exceeds half the periodic box' -- "$tb" rdf --data "$work/outside.txt" --box 20 --rmax 10.5 --nbins 4
expect 4 'at most 8' -- "$tb" paircount --data "$work/nine.txt" --columns 1,2,3,4,5,6,7,8,9 --rmax 5 --nbins 4
expect 4 'RA and Dec' -- "$tb" angular --data "$work/nine.txt" --columns 1,2,3 --rmax 5 --nbins 4
expect 3 'declination 95' -- "$tb" angular --data "$work/baddec.txt" --rmax 5 --nbins 4
expect 4 'rmax .* must exceed rmin' -- "$tb" paircount --data "$work/outside.txt" --rmin 3 --rmax 2 --nbins 4
expect 4 'bins are needed' -- "$tb" paircount --data "$work/outside.txt"
expect 2 'not expected|unrecognized' -- "$tb" paircount --data "$work/outside.txt" --rmax 5 --nbins 4 --bogus
expect 2 'required' -- "$tb" paircount --rmax 5 --nbins 4
expect 2 '' -- "$tb" paircount --data "$work/outside.txt" --rmax 5 --nbins 0
expect 5 'needs .* GiB, more than this machine' -- "$tb" generate uniform -n 100000000000 -o "$work/huge.txt"
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect 6 'cuda backend was requested' -- "$tb" paircount --data "$work/outside.txt" --rmax 5 --nbins 4 --backend cuda
fi

# Good runs: generated catalogues through every statistic, CSV header and JSON metadata.
"$tb" generate uniform -n 3000 --box 50 --seed 3 -o "$work/box.txt"
"$tb" generate clustered --sky -n 3000 --seed 3 -o "$work/sky.npy"
check "paircount csv header" "\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmax 10 --nbins 5 | head -1 | grep -qx 'lo,hi,npairs'"
check "paircount bins rows" "[ \$(\"$tb\" paircount --data \"$work/box.txt\" --rmax 10 --nbins 5 | wc -l) -eq 6 ]"
check "rdf columns" "\"$tb\" rdf --data \"$work/box.txt\" --box 50 --rmax 10 --nbins 5 | head -1 | grep -qx 'lo,hi,npairs,expected,g_r'"
check "sdh total pairs" "[ \$(\"$tb\" sdh --data \"$work/box.txt\" --nbins 64 | awk -F, 'NR>1{s+=\$3} END{print s}') -eq 4498500 ]"
check "angular npy json metadata" "\"$tb\" angular --data \"$work/sky.npy\" --rmin 0.1 --rmax 10 --nbins 5 --log --format json -o \"$work/a.json\" && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j[\"backend\"] and j[\"pairs_evaluated\"]==4498500 and j[\"pairs_per_second\"]>0 and len(j[\"columns\"][\"npairs\"])==5 and j[\"version\"]' \"$work/a.json\""
check "cross with data2" "[ \$(\"$tb\" paircount --data \"$work/box.txt\" --data2 \"$work/box.txt\" --rmax 100 --nbins 1 | tail -1 | cut -d, -f3) -eq 9000000 ]"
check "weights column" "\"$tb\" paircount --data \"$work/outside.txt\" --weights-column 3 --columns 1,2 --rmax 20 --nbins 2 | head -1 | grep -qx 'lo,hi,npairs,wnpairs'"
check "explain" "\"$tb\" angular --data builtin:uniform-sky:500 --rmax 10 --nbins 3 --explain 2>&1 >/dev/null | grep -q 'traversal auto'"
check "builtin clustered sky table" "\"$tb\" angular --data builtin:clustered-sky:2000 --rmin 0.01 --rmax 10 --nbins 4 --log --format table | head -1 | grep -q npairs"
check "no progress bar off a terminal" "[ -z \"\$(\"$tb\" sdh --data \"$work/box.txt\" --nbins 8 2>&1 >/dev/null)\" ]"
check "grid and brute force agree" "cmp <(\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmin 0.5 --rmax 6 --nbins 7 --log --path grid) <(\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmin 0.5 --rmax 6 --nbins 7 --log --path brute)"
check "explain names the traversal" "\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 7 --path grid --backend cpu --explain 2>&1 >/dev/null | grep -q 'path: grid'"
# --explain's phases: each run's (index, traversal, ...) in its plan, the process's (read, each run,
# write) after the output, and the peak memory against the catalogue.
"$tb" paircount --data "$work/box.txt" --box 50 --rmax 6 --nbins 7 --path grid --backend cpu --explain 2>"$work/phases.err" >/dev/null
check "explain names each run's phases" "grep -q '^phases (wall time, the process.s peak resident memory after each): plan .*cell index .*traversal .*merge ' \"$work/phases.err\""
check "explain names the process's phases" "grep -q '^twobody: process phases (wall time, peak resident memory after each): read .*box.txt .*run 1 .*write output ' \"$work/phases.err\""
check "explain gives the peak against the catalogue" "grep -Eq '^twobody: peak resident memory [0-9.]+ [MG]B = [0-9.]+x the catalogues' \"$work/phases.err\""
expect 2 "path" -- "$tb" paircount --data "$work/box.txt" --rmax 6 --nbins 7 --path sideways
# auto on a small file: the CPU (rented before a GPU is started, engine/auto_choice.hpp, or for want
# of one), without waiting for a device's start-up; the counts the explicit CPU's.
"$tb" paircount --data "$work/box.txt" --box 50 --rmax 6 --nbins 7 --explain 2>"$work/auto.err" >"$work/auto.csv"
check "auto takes the cpu for a small run" "grep -q '^backend: cpu' \"$work/auto.err\" && ! grep -q 'waiting for the device' \"$work/auto.err\""
check "auto's small run counts as the cpu's" "cmp \"$work/auto.csv\" <(\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 7 --backend cpu)"
check "concentrated catalogue" "\"$tb\" generate concentrated -n 1000 --box 100 --seed 3 -o \"$work/conc.txt\" && [ \$(grep -vc '^#' \"$work/conc.txt\") -eq 1000 ]"
expect 4 'not on the sky' -- "$tb" generate concentrated --sky -n 10 -o "$work/conc-sky.txt"
check "xi columns" "\"$tb\" xi --data \"$work/box.txt\" --randoms \"$work/box.txt\" --randoms builtin:uniform-box:500 --box 1000 --rmax 20 --nbins 3 | head -1 | grep -qx 'lo,hi,npairs,dr,rr,xi_natural,xi_davis_peebles,xi_hamilton,xi_landy_szalay'"
# Cross-correlations: a second sample with its own random catalogues.
"$tb" generate clustered -n 1500 --box 50 --seed 11 -o "$work/box2.txt"
"$tb" generate uniform -n 2500 --box 50 --seed 12 -o "$work/ran2.txt"
check "xi cross: four counts and four estimators" "\"$tb\" xi --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --randoms \"$work/ran2.txt\" --randoms2 builtin:uniform-box:2000 --rmin 1 --rmax 10 --nbins 3 | head -1 | grep -qx 'lo,hi,npairs,d1r2,r1d2,r1r2,xi_natural,xi_davis_peebles,xi_hamilton,xi_landy_szalay'"
check "xi cross in a box without randoms is analytic" "\"$tb\" xi --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --jackknife 8 | head -1 | grep -q 'npairs,rr,xi,xi_jk_mean,xi_jk_sigma'"
check "xi cross --ravg: the D1D2 pairs' ravg" "\"$tb\" xi --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --randoms \"$work/ran2.txt\" --randoms2 builtin:uniform-box:2000 --rmin 1 --rmax 10 --nbins 3 --ravg | head -1 | grep -qx 'lo,hi,npairs,d1r2,r1d2,r1r2,xi_natural,xi_davis_peebles,xi_hamilton,xi_landy_szalay,ravg,meanlogr'"
# Jackknife regions are fitted on the randoms: randoms covering each sample's footprint.
"$tb" generate randoms --like "$work/sky.npy" --sky --resolution 4 -n 2500 --seed 7 -o "$work/sky_like.txt" 2>/dev/null
"$tb" generate randoms --like builtin:clustered-sky:2000 --sky --resolution 4 -n 2200 --seed 8 -o "$work/sky2_like.txt" 2>/dev/null
check "wtheta cross with a jackknife" "\"$tb\" wtheta --data \"$work/sky.npy\" --data2 builtin:clustered-sky:2000 --randoms \"$work/sky_like.txt\" --randoms2 \"$work/sky2_like.txt\" --rmin 0.1 --rmax 5 --nbins 4 --log --jackknife 4 | head -1 | grep -q 'w_landy_szalay,w_jk_mean,w_jk_sigma'"
check "wp cross: projected cross-correlation" "\"$tb\" wp --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --randoms \"$work/ran2.txt\" --randoms2 builtin:uniform-box:2000 --rmin 1 --rmax 10 --nbins 3 --pimax 10 | head -1 | grep -qx 'rp_lo,rp_hi,wp'"
check "xi-smu cross in a box, analytic, with a jackknife" "\"$tb\" xi-smu --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --box 50 --rmax 10 --nbins 2 --nmu-bins 4 --jackknife 8 | head -1 | grep -q 'npairs,rr,xi,xi_jk_mean,xi_jk_sigma'"
expect 4 'goes with --data2' -- "$tb" xi --data "$work/box.txt" --randoms "$work/ran2.txt" --randoms2 "$work/ran2.txt" --rmax 5 --nbins 2
expect 4 'second sample has no random catalogues' -- "$tb" xi --data "$work/box.txt" --data2 "$work/box2.txt" --randoms "$work/ran2.txt" --rmax 5 --nbins 2
check "xi cross --rr (R1R2) equals a full run" "\"$tb\" xi --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --randoms \"$work/ran2.txt\" --randoms2 \"$work/ran2.txt\" --rmax 5 --nbins 2 --jackknife 8 --save-counts \"$work/c.json\" >\"$work/cross-full.csv\" && grep -q '\"statistic\": \"xi-cross\"' \"$work/c.json\" && \"$tb\" xi --data \"$work/box.txt\" --data2 \"$work/box2.txt\" --randoms \"$work/ran2.txt\" --randoms2 \"$work/ran2.txt\" --rmax 5 --nbins 2 --jackknife 8 --rr \"$work/c.json\" | cmp - \"$work/cross-full.csv\""
expect 4 "this run is an auto-correlation" -- "$tb" xi --data "$work/box.txt" --randoms "$work/ran2.txt" --rmax 5 --nbins 2 --jackknife 8 --rr "$work/c.json"
check "wtheta runs" "\"$tb\" wtheta --data \"$work/sky.npy\" --randoms builtin:uniform-sky:2000 --rmin 0.1 --rmax 5 --nbins 4 --log | wc -l | grep -qx 5"
expect 4 "needs random catalogues .* or a periodic box" -- "$tb" xi --data "$work/box.txt" --rmax 6 --nbins 7
check "xi analytic in a box" "\"$tb\" xi --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 3 | head -1 | grep -qx 'lo,hi,npairs,rr,xi'"
check "xi analytic equals rdf g-1" "python3 -c 'import sys,csv; x=list(csv.DictReader(open(sys.argv[1]))); g=list(csv.DictReader(open(sys.argv[2]))); assert all(abs(float(a[\"xi\"])-(float(b[\"g_r\"])-1))<=1e-9*max(1,abs(float(a[\"xi\"]))) for a,b in zip(x,g)) and len(x)==3' <(\"$tb\" xi --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 3) <(\"$tb\" rdf --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 3)"
check "xi analytic jackknife columns" "\"$tb\" xi --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 3 --jackknife 8 | head -1 | grep -qx 'lo,hi,npairs,rr,xi,xi_jk_mean,xi_jk_sigma'"
expect 4 "analytic RR of a box is not counted" -- "$tb" xi --data "$work/box.txt" --box 50 --rmax 6 --nbins 3 --save-counts "$work/never.json"
# Jackknife errors (seed 003): regions from a column or assigned; covariance file and JSON.
"$tb" generate clustered --sky -n 1500 --seed 5 -o "$work/jd.txt"
"$tb" generate randoms --like "$work/jd.txt" --sky --resolution 4 -n 3000 --seed 6 -o "$work/jr.txt" 2>/dev/null
check "wtheta jackknife columns" "\"$tb\" wtheta --data \"$work/jd.txt\" --randoms \"$work/jr.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --jackknife 6 | head -1 | grep -qx 'lo,hi,npairs,dr,rr,w_natural,w_davis_peebles,w_hamilton,w_landy_szalay,w_jk_mean,w_jk_sigma'"
check "wtheta covariance file and json" "\"$tb\" wtheta --data \"$work/jd.txt\" --randoms \"$work/jr.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --jackknife 6 --covariance \"$work/cov.txt\" --format json -o \"$work/jk.json\" && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); k=j[\"jackknife\"]; c=[[float(v) for v in l.split()] for l in open(sys.argv[2]) if not l.startswith(\"#\")]; assert k[\"regions\"]==6 and k[\"estimator\"]==\"landy-szalay\" and len(c)==4 and all(len(r)==4 for r in c) and all(abs(c[i][i]**0.5-j[\"columns\"][\"w_jk_sigma\"][i])<=1e-12*abs(c[i][i]**0.5) for i in range(4)) and c==k[\"covariance\"]' \"$work/jk.json\" \"$work/cov.txt\""
# Randoms matched to the data's footprint (a cap, Dec > 20), then w(theta) with regions fitted on them.
"$tb" generate clustered --sky -n 6000 --seed 41 -o "$work/cap_all.txt" 2>/dev/null
awk '$2 > 20' "$work/cap_all.txt" >"$work/cap.txt"
check "generate randoms --like --sky notes the mask's area" "\"$tb\" generate randoms --like \"$work/cap.txt\" --sky --resolution 3 -n 20000 --seed 42 -o \"$work/cap_randoms.txt\" 2>&1 | grep -q 'deg2, .* % of the sky'"
check "generate randoms --like --sky stays near the cap" "awk '\$2 < 20 - 6 { bad = 1 } END { exit bad || NR != 20000 }' \"$work/cap_randoms.txt\""
check "generate randoms: same seed, same file" "\"$tb\" generate randoms --like \"$work/cap.txt\" --sky --resolution 3 -n 20000 --seed 42 -o \"$work/cap_randoms2.txt\" 2>/dev/null && cmp -s \"$work/cap_randoms.txt\" \"$work/cap_randoms2.txt\""
check "wtheta with randoms like the data, regions fitted on them" "\"$tb\" wtheta --data \"$work/cap.txt\" --randoms \"$work/cap_randoms.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --jackknife 6 --format json -o \"$work/cap_wt.json\" && python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))[\"jackknife\"]; assert k[\"regions\"]==6 and \"random catalogues\" in k[\"layout\"], k[\"layout\"]' \"$work/cap_wt.json\""
check "generate randoms --like --mocks keeps the data's radial values" "awk '{ print \$1, \$2, 1000 + NR % 97 }' \"$work/cap.txt\" >\"$work/cap_rdcz.txt\" && \"$tb\" generate randoms --like \"$work/cap_rdcz.txt\" --mocks --resolution 3 -n 5000 --seed 3 -o \"$work/cap_rdcz_r.txt\" 2>/dev/null && awk 'NR == FNR { seen[\$3] = 1; next } !(\$3 in seen) { exit 1 }' \"$work/cap_rdcz.txt\" \"$work/cap_rdcz_r.txt\""
check "generate randoms --like in a box" "\"$tb\" generate randoms --like \"$work/box.txt\" --box 50 -n 3000 --seed 4 -o \"$work/box_randoms.txt\" 2>/dev/null && awk '{ for (i = 1; i <= 3; ++i) if (\$i < 0 || \$i >= 50) exit 1 } END { exit NR != 3000 }' \"$work/box_randoms.txt\""
# The 2x2x2 cells of --jackknife 8, written as labels (row-major, the last axis fastest).
awk '!/^#/{print $1, $2, $3, 4*int($1/25) + 2*int($2/25) + int($3/25)}' "$work/box.txt" >"$work/boxl.txt"
"$tb" generate uniform -n 3000 --box 50 --seed 4 -o "$work/boxr.txt"
awk '!/^#/{print $1, $2, $3, 4*int($1/25) + 2*int($2/25) + int($3/25)}' "$work/boxr.txt" >"$work/boxrl.txt"
check "xi regions column equals the same cells assigned" "cmp <(\"$tb\" xi --data \"$work/boxl.txt\" --randoms \"$work/boxrl.txt\" --box 50 --rmax 6 --nbins 3 --regions-column 4 --estimator natural) <(\"$tb\" xi --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmax 6 --nbins 3 --jackknife 8 --estimator natural)"
check "xi jackknife says when it changes the count" "\"$tb\" xi --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmax 6 --nbins 3 --jackknife 7 2>&1 >/dev/null | grep -q 'asked for 7'"
# Saved counts (issue 5): RR counted once, reused by --rr; the output equals a full run's.
check "xi --rr equals a full run" "\"$tb\" xi --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmax 6 --nbins 3 --jackknife 8 --save-counts \"$work/xi-counts.json\" >\"$work/xi-full.csv\" && \"$tb\" xi --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmax 6 --nbins 3 --jackknife 8 --rr \"$work/xi-counts.json\" | cmp - \"$work/xi-full.csv\""
check "wtheta --rr equals a full run" "\"$tb\" wtheta --data \"$work/jd.txt\" --randoms \"$work/jr.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --save-counts \"$work/w-counts.json\" >\"$work/w-full.csv\" && \"$tb\" wtheta --data \"$work/jd.txt\" --randoms \"$work/jr.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --rr \"$work/w-counts.json\" | cmp - \"$work/w-full.csv\""
check "saved counts are JSON with the format" "python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j[\"format\"]==\"twobody-counts\" and j[\"version\"]==1 and j[\"statistic\"]==\"xi\" and j[\"box\"]==[50,50,50] and len(j[\"rr\"])==3 and j[\"jackknife\"][\"regions\"]==8' \"$work/xi-counts.json\""
expect 4 'saved RR cannot be reused: counted in 3 bins' -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 4 --jackknife 8 --rr "$work/xi-counts.json"
expect 4 'saved RR cannot be reused: counted in the box' -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 60 --rmax 6 --nbins 3 --jackknife 8 --rr "$work/xi-counts.json"
expect 4 'saved RR cannot be reused: the counts have jackknife regions' -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 3 --rr "$work/xi-counts.json"
expect 4 'saved RR cannot be reused: counted in box space, this run is in sky' -- "$tb" wtheta --data "$work/jd.txt" --randoms "$work/jr.txt" --rmax 6 --nbins 3 --rr "$work/xi-counts.json"
expect 3 'not a readable counts file' -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 3 --rr "$work/box.txt"
check "paircount --ravg columns" "\"$tb\" paircount --data \"$work/box.txt\" --rmax 6 --nbins 3 --ravg | head -1 | grep -qx 'lo,hi,npairs,ravg,meanlogr'"
check "wtheta --ravg columns" "\"$tb\" wtheta --data \"$work/jd.txt\" --randoms \"$work/jr.txt\" --rmin 0.5 --rmax 10 --nbins 4 --log --ravg | head -1 | grep -qx 'lo,hi,npairs,dr,rr,w_natural,w_davis_peebles,w_hamilton,w_landy_szalay,ravg,meanlogr'"
printf '1 2 3 0\n4 5 6 -2\n' >"$work/neglabel.txt"
printf '1 2 3 0\n4 5 6 1.5\n' >"$work/fraclabel.txt"
printf '1 2 3 0\n4 5 6 9\n' >"$work/otherlabel.txt"
printf '1 2 3 0\n4 5 6 1\n7 8 9 1\n' >"$work/labels.txt"
expect 3 'neglabel.txt:2: region label' -- "$tb" xi --data "$work/neglabel.txt" --randoms "$work/labels.txt" --rmax 5 --nbins 2 --regions-column 4
expect 3 'fraclabel.txt:2: region label .* not a non-negative integer' -- "$tb" xi --data "$work/fraclabel.txt" --randoms "$work/labels.txt" --rmax 5 --nbins 2 --regions-column 4
expect 3 'region label 9, which no data point has' -- "$tb" xi --data "$work/labels.txt" --randoms "$work/otherlabel.txt" --rmax 5 --nbins 2 --regions-column 4
expect 4 'at least 2 regions' -- "$tb" wtheta --data "$work/jd.txt" --randoms "$work/jr.txt" --rmax 5 --nbins 2 --jackknife 1
expect 0 'jackknife regions .* of 8 hold no data points' -- "$tb" xi --data "$work/labels.txt" --randoms "$work/box.txt" --box 50 --rmax 5 --nbins 2 --jackknife 8
expect 4 'need jackknife regions' -- "$tb" wtheta --data "$work/jd.txt" --randoms "$work/jr.txt" --rmax 5 --nbins 2 --covariance "$work/c.txt"
expect 2 'excludes' -- "$tb" xi --data "$work/labels.txt" --randoms "$work/labels.txt" --rmax 5 --nbins 2 --regions-column 4 --jackknife 3

# 2-D bins about the z axis: (r_p, pi) and (s, mu) counts, w_p, xi(r_p, pi), xi(s, mu) and multipoles.
check "rppi columns and rows" "\"$tb\" rppi --data \"$work/box.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --pimax 5 >\"$work/rppi.csv\" && head -1 \"$work/rppi.csv\" | grep -qx 'rp_lo,rp_hi,pi_lo,pi_hi,npairs' && [ \$(wc -l <\"$work/rppi.csv\") -eq 16 ]"
check "rppi cross of a set with itself: twice the auto pairs plus the self-pairs" "[ \$(\"$tb\" rppi --data \"$work/box.txt\" --data2 \"$work/box.txt\" --box 50 --rmax 6 --nbins 2 --pimax 4 | awk -F, 'NR>1{s+=\$5} END{print s}') -eq \$((2 * \$(\"$tb\" rppi --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 2 --pimax 4 | awk -F, 'NR>1{s+=\$5} END{print s}') + 3000)) ]"
check "smu over all mu equals paircount" "cmp <(\"$tb\" smu --data \"$work/box.txt\" --box 50 --rmin 0.5 --rmax 8 --nbins 4 --nmu-bins 6 | awk -F, 'NR>1{s[\$1]+=\$5} END{for(k in s) print k, s[k]}' | sort -g) <(\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmin 0.5 --rmax 8 --nbins 4 | awk -F, 'NR>1{print \$1, \$3}' | sort -g)"
check "smu grid and brute force agree" "cmp <(\"$tb\" smu --data \"$work/box.txt\" --rmax 7 --nbins 3 --nmu-bins 4 --path grid) <(\"$tb\" smu --data \"$work/box.txt\" --rmax 7 --nbins 3 --nmu-bins 4 --path brute)"
check "wp analytic in a box" "\"$tb\" wp --data \"$work/box.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --pimax 10 | head -1 | grep -qx 'rp_lo,rp_hi,wp'"
check "xi-rppi with randoms" "\"$tb\" xi-rppi --data \"$work/box.txt\" --randoms \"$work/box.txt\" --rmin 1 --rmax 10 --nbins 3 --pimax 4 --estimator natural | head -1 | grep -qx 'rp_lo,rp_hi,pi_lo,pi_hi,npairs,dr,rr,xi'"
check "xi-smu multipoles" "\"$tb\" xi-smu --data \"$work/box.txt\" --box 50 --rmax 10 --nbins 2 --nmu-bins 5 --multipoles | head -1 | grep -qx 's_lo,s_hi,xi0,xi2,xi4'"
check "rppi --ravg: rpavg per bin, within its r_p bin" "\"$tb\" rppi --data \"$work/box.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --pimax 5 --ravg | awk -F, 'NR==1{ok=(\$6==\"rpavg\")} NR>1 && \$5>0 {n++; if (!(\$6>=\$1 && \$6<\$2)) ok=0} END{exit !(ok && n>5)}'"
check "wp --ravg: rpavg per r_p bin" "\"$tb\" wp --data \"$work/box.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --pimax 5 --ravg | head -1 | grep -qx 'rp_lo,rp_hi,wp,rpavg'"
check "xi-smu --ravg: savg" "\"$tb\" smu --data \"$work/box.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --nmu-bins 4 --ravg | head -1 | grep -qx 's_lo,s_hi,mu_lo,mu_hi,npairs,savg'"
check "explain names the binned pair function" "\"$tb\" rppi --data \"$work/box.txt\" --box 50 --rmax 6 --nbins 2 --pimax 4 --explain 2>&1 >/dev/null | grep -q RpPiBins"
expect 4 'pimax must be positive' -- "$tb" rppi --data "$work/box.txt" --rmax 5 --nbins 2 --pimax 0
expect 4 'number of pi bins' -- "$tb" rppi --data "$work/box.txt" --rmax 5 --nbins 2 --pimax 0.5
expect 4 'mu_max must lie in' -- "$tb" smu --data "$work/box.txt" --rmax 5 --nbins 2 --nmu-bins 3 --mu-max 1.5
# Survey mocks: RA, Dec, cz in a patch (the box's points mapped to 150..200 deg, 0..30 deg, 9000..15000 km/s).
awk '!/^#/ && NF>=3 {printf "%.12g %.12g %.12g\n", 150 + $1, 0.6 * $2, 9000 + 120 * $3}' "$work/box.txt" >"$work/mock.txt"
check "mocks: --cosmology 1 is --omega-m 0.25" "cmp <(\"$tb\" rppi --mocks --cosmology 1 --data \"$work/mock.txt\" --rmin 0.5 --rmax 10 --nbins 3 --pimax 10) <(\"$tb\" rppi --mocks --omega-m 0.25 --data \"$work/mock.txt\" --rmin 0.5 --rmax 10 --nbins 3 --pimax 10)"
check "mocks: rppi counts pairs" "[ \$(\"$tb\" rppi --mocks --cosmology 2 --data \"$work/mock.txt\" --rmax 10 --nbins 3 --pimax 10 | awk -F, 'NR>1{s+=\$5} END{print s}') -gt 100 ]"
check "mocks: smu grid and brute force agree" "cmp <(\"$tb\" smu --mocks --comoving --data \"$work/mock.txt\" --rmax 300 --nbins 3 --nmu-bins 4 --path grid) <(\"$tb\" smu --mocks --comoving --data \"$work/mock.txt\" --rmax 300 --nbins 3 --nmu-bins 4 --path brute)"
check "mocks: wp with randoms" "\"$tb\" wp --mocks --cosmology 1 --data \"$work/mock.txt\" --randoms \"$work/mock.txt\" --rmin 1 --rmax 10 --nbins 3 --pimax 10 | head -1 | grep -qx 'rp_lo,rp_hi,wp'"
check "mocks: explain names RpPiBinsMock" "\"$tb\" rppi --mocks --cosmology 1 --data \"$work/mock.txt\" --rmax 6 --nbins 2 --pimax 4 --explain 2>&1 >/dev/null | grep -q RpPiBinsMock"
# xi(r) of mocks: its DD is the (s, mu) counts summed over mu (s = r), and its jackknife regions are
# patches of sky about the observer.
awk '!/^#/ && NF>=3 {printf "%.12g %.12g %.12g\n", 151 + $3, 0.5 * $1, 9100 + 110 * $2}' "$work/box.txt" >"$work/mock2.txt"
check "mocks: xi's DD is smu's summed over mu" "cmp <(\"$tb\" xi --mocks --cosmology 1 --data \"$work/mock.txt\" --randoms \"$work/mock2.txt\" --rmin 1 --rmax 20 --nbins 4 | awk -F, 'NR==1{for(i=1;i<=NF;i++) if(\$i==\"npairs\") c=i} NR>1{print \$1, \$c}') <(\"$tb\" smu --mocks --cosmology 1 --data \"$work/mock.txt\" --rmin 1 --rmax 20 --nbins 4 --nmu-bins 5 | awk -F, 'NR>1{s[\$1]+=\$5} END{for(k in s) print k, s[k]}' | sort -g)"
check "mocks: xi's jackknife regions are on the sky" "\"$tb\" xi --mocks --cosmology 1 --data \"$work/mock.txt\" --randoms \"$work/mock2.txt\" --rmin 1 --rmax 20 --nbins 4 --jackknife 4 --format json | grep -q 'sky regions by k-means'"
expect 4 'a periodic box has no observer' -- "$tb" xi --mocks --cosmology 1 --data "$work/mock.txt" --randoms "$work/mock2.txt" --box 50 --rmax 5 --nbins 2
expect 4 'a periodic box has no observer' -- "$tb" rppi --mocks --cosmology 1 --data "$work/mock.txt" --box 50 --rmax 5 --nbins 2 --pimax 4
expect 4 'give one of --omega-m and --cosmology' -- "$tb" smu --mocks --data "$work/mock.txt" --rmax 5 --nbins 2 --nmu-bins 3
expect 4 'go with --mocks' -- "$tb" smu --omega-m 0.3 --data "$work/box.txt" --rmax 5 --nbins 2 --nmu-bins 3
expect 2 'required' -- "$tb" smu --data "$work/box.txt" --rmax 5 --nbins 2
expect 4 'random catalogues' -- "$tb" wp --data "$work/box.txt" --rmax 5 --nbins 2 --pimax 5
expect 4 '3-D points' -- "$tb" rppi --data "$work/flat_bins.txt" --rmax 5 --nbins 2 --pimax 5
expect 4 'pimax 30 exceeds half the periodic box' -- "$tb" rppi --data "$work/box.txt" --box 50 --rmax 5 --nbins 2 --pimax 30
# Jackknife errors and saved counts of the 2-D estimators (issue 5): columns, covariance files,
# labels equal to the same cells assigned, --rr equal to a full run, and the errors.
check "wp jackknife columns, covariance file and json" "\"$tb\" wp --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmin 1 --rmax 10 --nbins 3 --pimax 10 --jackknife 8 --covariance \"$work/wpcov.txt\" --format json -o \"$work/wpjk.json\" && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); k=j[\"jackknife\"]; c=[[float(v) for v in l.split()] for l in open(sys.argv[2]) if not l.startswith(\"#\")]; assert sorted(j[\"columns\"])==[\"rp_hi\",\"rp_lo\",\"wp\",\"wp_jk_mean\",\"wp_jk_sigma\"] and k[\"regions\"]==8 and len(c)==3 and all(len(r)==3 for r in c) and c==k[\"covariance\"] and all(abs(c[i][i]**0.5-j[\"columns\"][\"wp_jk_sigma\"][i])<=1e-12*c[i][i]**0.5 for i in range(3))' \"$work/wpjk.json\" \"$work/wpcov.txt\""
check "xi-rppi jackknife columns and flat covariance" "\"$tb\" xi-rppi --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --rmin 1 --rmax 10 --nbins 2 --pimax 3 --jackknife 4 --weights-column 3 --columns 1,2,3 --covariance \"$work/xrcov.txt\" | head -1 | grep -qx 'rp_lo,rp_hi,pi_lo,pi_hi,npairs,wnpairs,dr,rr,wdr,wrr,xi,xi_jk_mean,xi_jk_sigma' && [ \$(grep -vc '^#' \"$work/xrcov.txt\") -eq 6 ] && grep -q '^# pi edges: 0 1 2 3' \"$work/xrcov.txt\""
check "xi-smu multipoles jackknife, analytic RR: stacked covariance" "\"$tb\" xi-smu --data \"$work/box.txt\" --box 50 --rmax 10 --nbins 2 --nmu-bins 5 --multipoles --jackknife 8 --covariance \"$work/mpcov.txt\" | head -1 | grep -qx 's_lo,s_hi,xi0,xi2,xi4,xi0_jk_mean,xi0_jk_sigma,xi2_jk_mean,xi2_jk_sigma,xi4_jk_mean,xi4_jk_sigma' && [ \$(grep -vc '^#' \"$work/mpcov.txt\") -eq 6 ] && grep -q 'analytic RR' \"$work/mpcov.txt\""
check "wp regions column equals the same cells assigned" "cmp <(\"$tb\" wp --data \"$work/boxl.txt\" --randoms \"$work/boxrl.txt\" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 6 --regions-column 4 --estimator natural) <(\"$tb\" wp --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 6 --jackknife 8 --estimator natural)"
check "wp --rr equals a full run" "\"$tb\" wp --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 6 --jackknife 8 --save-counts \"$work/wp-counts.json\" >\"$work/wp-full.csv\" && \"$tb\" wp --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 6 --jackknife 8 --rr \"$work/wp-counts.json\" | cmp - \"$work/wp-full.csv\""
check "xi-smu --rr equals a full run" "\"$tb\" xi-smu --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --rmax 8 --nbins 3 --nmu-bins 4 --mu-max 0.9 --save-counts \"$work/smu-counts.json\" >\"$work/smu-full.csv\" && \"$tb\" xi-smu --data \"$work/box.txt\" --randoms \"$work/boxr.txt\" --rmax 8 --nbins 3 --nmu-bins 4 --mu-max 0.9 --rr \"$work/smu-counts.json\" | cmp - \"$work/smu-full.csv\""
check "2-D saved counts describe their bins" "python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); b=j[\"bins2d\"]; assert j[\"statistic\"]==\"xi-rppi\" and b[\"kind\"]==\"rppi\" and b[\"pimax\"]==6 and b[\"npibins\"]==6 and len(b[\"rp_edges\"])==4 and len(j[\"rr\"])==18 and j[\"jackknife\"][\"regions\"]==8; k=json.load(open(sys.argv[2]))[\"bins2d\"]; assert k[\"kind\"]==\"smu\" and k[\"mu_max\"]==0.9 and k[\"nmu_bins\"]==4' \"$work/wp-counts.json\" \"$work/smu-counts.json\""
expect 4 'saved RR cannot be reused: counted in \(r_p, pi\): 3 r_p bins .* this run.s are \(r_p, pi\): 3 r_p bins .* x 5 pi bins' -- "$tb" wp --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 5 --jackknife 8 --rr "$work/wp-counts.json"
expect 4 'saved RR cannot be reused: counted in 3 bins .* this run.s are \(r_p, pi\)' -- "$tb" wp --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 3 --pimax 6 --jackknife 8 --rr "$work/xi-counts.json"
expect 4 'saved RR cannot be reused: counted in \(r_p, pi\)' -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmin 1 --rmax 8 --nbins 3 --jackknife 8 --rr "$work/wp-counts.json"
expect 4 'need random catalogues' -- "$tb" wp --data "$work/box.txt" --box 50 --rmin 1 --rmax 8 --nbins 3 --pimax 6 --rr "$work/wp-counts.json"
expect 4 'at least 2 regions' -- "$tb" wp --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 5 --nbins 2 --pimax 5 --jackknife 1
expect 4 'at least 2 regions' -- "$tb" xi-smu --data "$work/box.txt" --box 50 --rmax 5 --nbins 2 --nmu-bins 3 --multipoles --jackknife 1
expect 4 'needs jackknife regions' -- "$tb" xi-rppi --data "$work/box.txt" --box 50 --rmax 5 --nbins 2 --pimax 5 --covariance "$work/c.txt"
expect 0 'jackknife regions .* of 8 hold no data points' -- "$tb" wp --data "$work/labels.txt" --randoms "$work/box.txt" --box 50 --rmax 5 --nbins 2 --pimax 5 --jackknife 8
expect 2 'excludes' -- "$tb" wp --data "$work/labels.txt" --randoms "$work/labels.txt" --rmax 5 --nbins 2 --pimax 5 --regions-column 4 --jackknife 3

# Scalar-field correlations (issue 5): kk, nk; kappa column 4, weight column 5.
awk '!/^#/{print $1, $2, $3, -1.5, 0.5 + (NR % 3)}' "$work/box.txt" >"$work/kconst.txt"
awk '!/^#/{print $1, $2, ((NR * 7919) % 1000) / 500 - 1}' "$work/jd.txt" >"$work/skyk.txt"
check "kk columns" "\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --rmax 10 --nbins 3 | head -1 | grep -qx 'lo,hi,npairs,weight,xi_kk,varxi'"
check "kk of a constant kappa is its square, weighted, in a box" "\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --weights-column 5 --box 50 --rmin 1 --rmax 10 --nbins 3 | awk -F, 'NR>1{d=\$5-2.25; if (d<0) d=-d; if (d>1e-12) bad=1} END{exit bad}'"
check "kk cross of a catalogue with itself: npairs twice the auto's plus none at r >= 1" "[ \$(\"$tb\" kk --data \"$work/kconst.txt\" --data2 \"$work/kconst.txt\" --kappa-column 4 --rmin 1 --rmax 10 --nbins 1 | tail -1 | cut -d, -f3) -eq \$((2 * \$(\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --rmin 1 --rmax 10 --nbins 1 | tail -1 | cut -d, -f3))) ]"
check "kk grid and brute force agree on npairs" "cmp <(\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --box 50 --rmax 6 --nbins 3 --path grid | cut -d, -f1-3) <(\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --box 50 --rmax 6 --nbins 3 --path brute | cut -d, -f1-3)"
check "kk --ravg columns" "\"$tb\" kk --data \"$work/kconst.txt\" --kappa-column 4 --rmax 10 --nbins 3 --ravg | head -1 | grep -qx 'lo,hi,npairs,weight,xi_kk,varxi,ravg,meanlogr'"
check "kk on the sky" "\"$tb\" kk --data \"$work/skyk.txt\" --kappa-column 3 --sky --rmin 0.5 --rmax 10 --nbins 4 --log | wc -l | grep -qx 5"
check "nk with randoms: compensated columns, constant kappa gives 0" "\"$tb\" nk --data \"$work/box.txt\" --data2 \"$work/kconst.txt\" --columns 1,2,3 --kappa-column 4 --randoms \"$work/boxr.txt\" --box 50 --rmin 1 --rmax 10 --nbins 2 >\"$work/nk.csv\" && head -1 \"$work/nk.csv\" | grep -qx 'lo,hi,npairs,weight,xi_nk,varxi,xi_nk_raw,rk_npairs,rk_weight,xi_rk' && awk -F, 'NR>1{d=\$5; if (d<0) d=-d; if (d>1e-12 || \$7 != -1.5) bad=1} END{exit bad}' \"$work/nk.csv\""
expect 2 'kappa-column' -- "$tb" kk --data "$work/kconst.txt" --rmax 5 --nbins 2
expect 2 'data2' -- "$tb" nk --data "$work/box.txt" --kappa-column 4 --rmax 5 --nbins 2
expect 3 'column 7 was asked for' -- "$tb" kk --data "$work/kconst.txt" --kappa-column 7 --rmax 5 --nbins 2
expect 4 'no kappa column' -- "$tb" kk --data builtin:uniform-box:100 --kappa-column 4 --rmax 5 --nbins 2
expect 4 'column 4 is both a coordinate and a value column' -- "$tb" kk --data "$work/kconst.txt" --columns 1,2,4 --kappa-column 4 --rmax 5 --nbins 2
expect 4 'exclude each other' -- "$tb" kk --data "$work/skyk.txt" --kappa-column 3 --sky --box 50 --rmax 5 --nbins 2

# Per-point neighbour counts (issue 3): set,index,count[,wsum]; a pair counts for both of its points.
check "neighbours columns and rows" "\"$tb\" neighbours --data \"$work/box.txt\" --box 50 --rmax 4 >\"$work/nb.csv\" && head -1 \"$work/nb.csv\" | grep -qx 'set,index,count' && [ \$(wc -l <\"$work/nb.csv\") -eq 3001 ] && awk -F, 'NR>1 && (\$1 != 1 || \$2 != NR - 2){bad=1} END{exit bad}' \"$work/nb.csv\""
check "neighbours add up to twice the pairs" "[ \$(awk -F, 'NR>1{s+=\$3} END{print s}' \"$work/nb.csv\") -eq \$((2 * \$(\"$tb\" paircount --data \"$work/box.txt\" --box 50 --rmax 4 --nbins 1 | tail -1 | cut -d, -f3))) ]"
check "neighbours with --rmin" "[ \$(\"$tb\" neighbours --data \"$work/box.txt\" --rmin 2 --rmax 6 | awk -F, 'NR>1{s+=\$3} END{print s}') -eq \$((2 * \$(\"$tb\" paircount --data \"$work/box.txt\" --rmin 2 --rmax 6 --nbins 1 | tail -1 | cut -d, -f3))) ]"
check "neighbours cross: both sets, each summing to the cross pairs" "\"$tb\" neighbours --data \"$work/box.txt\" --data2 \"$work/boxr.txt\" --box 50 --rmax 5 >\"$work/nbx.csv\" && [ \$(wc -l <\"$work/nbx.csv\") -eq 6001 ] && p=\$(\"$tb\" paircount --data \"$work/box.txt\" --data2 \"$work/boxr.txt\" --box 50 --rmax 5 --nbins 1 | tail -1 | cut -d, -f3) && [ \$(awk -F, '\$1==1{s+=\$3} END{print s}' \"$work/nbx.csv\") -eq \$p ] && [ \$(awk -F, '\$1==2{s+=\$3} END{print s}' \"$work/nbx.csv\") -eq \$p ]"
check "neighbours grid and brute force agree" "cmp <(\"$tb\" neighbours --data \"$work/box.txt\" --data2 \"$work/boxr.txt\" --box 50 --rmax 5 --path grid) <(\"$tb\" neighbours --data \"$work/box.txt\" --data2 \"$work/boxr.txt\" --box 50 --rmax 5 --path brute)"
printf '1 2 3\n4 5 6\n0 0 1\n' >"$work/m3.txt"
check "matrix text: symmetric, distances, zero diagonal" "\"$tb\" matrix --data \"$work/m3.txt\" >\"$work/m3.out\" && python3 -c 'import sys,math; m=[[float(v) for v in l.split()] for l in open(sys.argv[1])]; assert len(m)==3 and all(len(r)==3 for r in m) and all(m[i][i]==0 for i in range(3)) and all(m[i][j]==m[j][i] for i in range(3) for j in range(3)) and m[0][1]==math.sqrt(27) and m[0][2]==3' \"$work/m3.out\""
check "matrix npy cross: shape and values" "head -200 \"$work/boxr.txt\" >\"$work/b200.txt\" && \"$tb\" matrix --data \"$work/box.txt\" --data2 \"$work/b200.txt\" -o \"$work/m.npy\" && python3 -c 'import sys,struct,math,ast; b=open(sys.argv[1],\"rb\").read(); assert b[:6]==b\"\\x93NUMPY\"; h=struct.unpack(\"<H\",b[8:10])[0]; d=ast.literal_eval(b[10:10+h].decode()); assert d[\"shape\"]==(3000,200) and d[\"descr\"]==\"<f8\"; v=struct.unpack(\"<%dd\" % (3000*200), b[10+h:]); A=[[float(x) for x in l.split()] for l in open(sys.argv[2])]; B=[[float(x) for x in l.split()] for l in open(sys.argv[3])]; assert all(abs(v[i*200+j]-math.dist(A[i],B[j]))<=1e-12*max(1,math.dist(A[i],B[j])) for i in range(0,3000,97) for j in range(0,200,7))' \"$work/m.npy\" \"$work/box.txt\" \"$work/b200.txt\""
check "matrix periodic: minimum images" "\"$tb\" matrix --data \"$work/b200.txt\" --box 50 | awk '{for(i=1;i<=NF;i++) if(\$i>25*sqrt(3)+1e-9) bad=1} END{exit bad || NR!=200}'"
check "matrix --sky: angles in degrees" "printf '10 20\\n10 30\\n190 -20\\n' >\"$work/s3.txt\" && \"$tb\" matrix --data \"$work/s3.txt\" --sky | python3 -c 'import sys; m=[[float(v) for v in l.split()] for l in sys.stdin]; assert abs(m[0][1]-10)<1e-9 and abs(m[0][2]-180)<1e-6 and m[1][1]<1e-5'"
expect 4 'no --box' -- "$tb" matrix --data "$work/s3.txt" --sky --box 50
expect 3 'empty' -- "$tb" matrix --data "$work/empty.txt"
expect 2 'nbins' -- "$tb" matrix --data "$work/m3.txt" --nbins 4
awk '!/^#/{print $1, $2, $3, 1}' "$work/box.txt" >"$work/ones.txt"
check "neighbours wsum of unit weights is the count" "\"$tb\" neighbours --data \"$work/ones.txt\" --weights-column 4 --rmax 5 >\"$work/nbw.csv\" && head -1 \"$work/nbw.csv\" | grep -qx 'set,index,count,wsum' && awk -F, 'NR>1 && \$3 != \$4 {bad=1} END{exit bad}' \"$work/nbw.csv\""
check "neighbours --bins takes the file's span" "printf '1 2\n2 4\n' >\"$work/nb_bins.txt\" && cmp <(\"$tb\" neighbours --data \"$work/box.txt\" --bins \"$work/nb_bins.txt\") <(\"$tb\" neighbours --data \"$work/box.txt\" --rmin 1 --rmax 4)"
check "neighbours json" "\"$tb\" neighbours --data \"$work/box.txt\" --rmax 3 --format json -o \"$work/nb.json\" && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); c=j[\"columns\"]; assert len(c[\"count\"])==3000 and c[\"index\"][:3]==[0,1,2] and set(c[\"set\"])=={1} and j[\"rmax\"]==3 and j[\"rmin\"]==0' \"$work/nb.json\""
check "neighbours explain names the output and the path" "\"$tb\" neighbours --data \"$work/box.txt\" --box 50 --rmax 4 --backend cpu --path grid --explain 2>&1 >/dev/null | grep -q 'per-point reduction' && \"$tb\" neighbours --data \"$work/box.txt\" --box 50 --rmax 4 --backend cpu --path grid --explain 2>&1 >/dev/null | grep -q 'path: grid'"
expect 4 'a range is needed' -- "$tb" neighbours --data "$work/box.txt"
expect 4 'either --bins FILE or --rmin/--rmax' -- "$tb" neighbours --data "$work/box.txt" --bins "$work/flat_bins.txt" --rmax 3
expect 4 'rmax .* must exceed rmin' -- "$tb" neighbours --data "$work/box.txt" --rmin 3 --rmax 2
expect 4 'exceeds half the periodic box' -- "$tb" neighbours --data "$work/box.txt" --box 50 --rmax 26
expect 3 'outside the periodic box' -- "$tb" neighbours --data "$work/outside.txt" --box 10 --rmax 2
expect 3 'column 5' -- "$tb" neighbours --data "$work/box.txt" --weights-column 5 --rmax 2
expect 2 'not expected|unrecognized|nbins' -- "$tb" neighbours --data "$work/box.txt" --rmax 2 --nbins 4
expect 2 'required' -- "$tb" neighbours --rmax 2

# --explain on every command that counts pairs: the plan of each run it makes (a correlation
# function's DD, DR and RR; kk's weight run), on stderr, and the table as without it.
explains() {  # explains N -- command...: exit 0, N plans on stderr, the table on stdout
  local n=$1
  shift 2
  local err out rc
  out=$("$@" --explain 2>"$work/explain.err")
  rc=$?
  err=$(cat "$work/explain.err")
  if [[ $rc -eq 0 && -n $out && $(grep -c '^twobody: plan of run [0-9]*:$' <<<"$err") -eq $n &&
        $(grep -c '^backend: ' <<<"$err") -eq $n && $err == *traversal* && $out == "$("$@" 2>/dev/null)" ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $* --explain -> exit $rc, stderr: $(head -c 600 <<<"$err") (want $n plans)"
  fi
}
explains 1 -- "$tb" sdh --data "$work/box.txt" --nbins 8 --backend cpu --threads 2
explains 1 -- "$tb" paircount --data "$work/box.txt" --data2 "$work/boxr.txt" --box 50 --rmax 6 --nbins 3 --backend cpu
explains 1 -- "$tb" rdf --data "$work/box.txt" --box 50 --rmax 6 --nbins 3 --backend cpu
explains 1 -- "$tb" angular --data "$work/jd.txt" --rmax 10 --nbins 3 --backend cpu
explains 3 -- "$tb" xi --data "$work/box.txt" --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 3 --backend cpu
explains 1 -- "$tb" xi --data "$work/box.txt" --box 50 --rmax 6 --nbins 3 --backend cpu
explains 3 -- "$tb" wtheta --data "$work/jd.txt" --randoms "$work/jr.txt" --rmax 5 --nbins 3 --backend cpu
explains 1 -- "$tb" rppi --data "$work/box.txt" --box 50 --rmax 6 --nbins 2 --pimax 4 --backend cpu
explains 1 -- "$tb" smu --data "$work/box.txt" --box 50 --rmax 6 --nbins 2 --nmu-bins 3 --backend cpu
explains 3 -- "$tb" xi-rppi --data "$work/box.txt" --randoms "$work/boxr.txt" --rmax 6 --nbins 2 --pimax 4 --backend cpu
explains 1 -- "$tb" wp --data "$work/box.txt" --box 50 --rmax 6 --nbins 2 --pimax 4 --backend cpu
explains 3 -- "$tb" xi-smu --data "$work/box.txt" --randoms "$work/boxr.txt" --rmax 6 --nbins 2 --nmu-bins 3 --backend cpu
explains 1 -- "$tb" kk --data "$work/kconst.txt" --kappa-column 4 --rmax 6 --nbins 3 --backend cpu
explains 2 -- "$tb" kk --data "$work/kconst.txt" --kappa-column 4 --weights-column 5 --rmax 6 --nbins 3 --backend cpu
explains 2 -- "$tb" nk --data "$work/box.txt" --data2 "$work/kconst.txt" --columns 1,2,3 --kappa-column 4 --randoms "$work/boxr.txt" --box 50 --rmax 6 --nbins 2 --backend cpu
explains 1 -- "$tb" neighbours --data "$work/box.txt" --box 50 --rmax 4 --backend cpu
explains 1 -- "$tb" matrix --data "$work/b200.txt" --backend cpu
explains 1 -- "$tb" matrix --data "$work/s3.txt" --sky --backend cpu
expect 2 'explain' -- "$tb" generate uniform -n 10 -o "$work/g.txt" --explain

# kde: kernel sums and regression from the command line against a float64 brute force (1e-12).
python3 - "$work/kde.txt" <<'PY'
import random, sys
random.seed(11)
with open(sys.argv[1], "w") as f:
    for i in range(300):
        f.write(f"{random.uniform(0, 20)!r} {random.uniform(0, 20)!r} {random.uniform(0, 20)!r} "
                f"{0.5 + (i % 3) * 0.25} {random.gauss(0, 1)!r}\n")
PY
kde_check() {  # kde_check KERNEL EXTRA...: the table against the brute force
  local kernel=$1
  shift
  "$tb" kde --data "$work/kde.txt" --columns 1,2,3 --weights-column 4 --value-column 5 --bandwidth 1.5 \
    --kernel "$kernel" "$@" --backend cpu >"$work/kde.csv" 2>/dev/null &&
    python3 - "$work/kde.txt" "$work/kde.csv" "$kernel" "$@" <<'PY'
import csv, math, sys
pts = [list(map(float, l.split())) for l in open(sys.argv[1])]
rows = list(csv.DictReader(open(sys.argv[2])))
kernel, extra = sys.argv[3], sys.argv[4:]
box = float(extra[extra.index("--box") + 1]) if "--box" in extra else None
h = 1.5
cut = 5 * h if kernel == "gaussian" else h
def dist2(a, b):
    s = 0.0
    for k in range(3):
        d = a[k] - b[k]
        if box:
            d -= box * round(d / box)
        s += d * d
    return s
bad = 0
for i, p in enumerate(pts):
    den = num = 0.0
    for j, q in enumerate(pts):
        r2 = dist2(p, q)
        if j == i or r2 >= cut * cut:
            continue
        r = math.sqrt(r2)
        k = math.exp(-r * r / (2 * h * h)) if kernel == "gaussian" else max(0.0, 1 - r * r / (h * h))
        den += q[3] * k
        num += q[3] * k * q[4]
    got = float(rows[i]["density"])
    reg = float(rows[i]["regression"])
    want_reg = num / den if den else float("nan")
    if abs(got - den) > 1e-12 * abs(den) + 1e-300:
        bad += 1
    if not (math.isnan(reg) and math.isnan(want_reg)) and abs(reg - want_reg) > 1e-12 * abs(want_reg) + 1e-12:
        bad += 1
sys.exit(1 if bad or len(rows) != len(pts) else 0)
PY
}
check "kde gaussian, open, weighted, regression = brute force" kde_check gaussian
check "kde epanechnikov, periodic box = brute force" kde_check epanechnikov --box 20
expect 2 '--bandwidth: -1 must be positive and finite' -- "$tb" kde --data "$work/kde.txt" --bandwidth -1
expect 4 'the value column and the weight column must differ' -- "$tb" kde --data "$work/kde.txt" --bandwidth 1 --weights-column 4 --value-column 4
explains 1 -- "$tb" kde --data "$work/kde.txt" --columns 1,2,3 --bandwidth 1 --backend cpu

# Every subcommand's --help ends with examples, and each example runs (in order, in a scratch folder).
# custom: a predicate's count equals a brute force; a bad expression is a config error with its caret.
printf 'x y t\n0 0 1\n0.5 0 2\n3 1 0\n0.2 0.1 2\n' > "$work/custom.csv"
check "custom count of a predicate = brute force" \
  "[[ \$(\"$tb\" custom --data \"$work/custom.csv\" --pair 'a.t < b.t and abs(a.x - b.x) < 1' --emit count --format csv | tail -n 1) == 2 ]]"
expect 4 "pair function, column 5: unknown name 'q'" -- "$tb" custom --data "$work/custom.csv" --pair 'a.x+q' --emit sum
expect 4 '--emit count of a value needs a range' -- "$tb" custom --data "$work/custom.csv" --pair 'a.x-b.x' --emit count
explains 1 -- "$tb" custom --data "$work/custom.csv" --pair 'a.x-b.x' --emit sum
# The distance as a value: the built-in point paths on key edges (said in the plan), the same
# histogram as the same rule written term by term (the generated function).
rdf_expr=(custom --data builtin:uniform-box:3000 --emit histogram --rmin 0 --rmax 80 --nbins 16 --format csv)
check "custom sqrt(sum((a-b)^2)): the built-in point paths, the generated function's bins" \
  "cmp <(\"$tb\" ${rdf_expr[*]@Q} --pair 'sqrt(sum((a-b)^2))') <(\"$tb\" ${rdf_expr[*]@Q} --pair 'sqrt((a[0]-b[0])^2 + (a[1]-b[1])^2 + (a[2]-b[2])^2)')"
check "custom sqrt(sum((a-b)^2)): the route in the plan" \
  "\"$tb\" ${rdf_expr[*]@Q} --pair 'norm(a-b)' --explain 2>&1 >/dev/null | grep -q 'route: the value is the points. Euclidean distance'"
# The compiled evaluator: the same count, the plan says which evaluator ran; a missing compiler
# leaves the interpreter; the cache lists and clears its entry.
export TWOBODY_CACHE_DIR="$work/kernel-cache"
nlj=(custom --data "$work/custom.csv" --pair 'a.t < b.t and abs(a.x - b.x) < 1' --emit count --format csv)
check "custom --cpu-codegen on: the same count" "[[ \$(\"$tb\" ${nlj[*]@Q} --cpu-codegen on | tail -n 1) == 2 ]]"
check "custom --cpu-codegen on: compiled, said in the plan" \
  "\"$tb\" ${nlj[*]@Q} --cpu-codegen on --explain 2>&1 >/dev/null | grep -q 'evaluator: a compiled object from the kernel cache'"
check "custom without a compiler: the interpreter, and why" \
  "TWOBODY_CXX=/nonexistent/c++ \"$tb\" ${nlj[*]@Q} --cpu-codegen on --explain 2>&1 >/dev/null | grep -q 'evaluator: the interpreter (no compiled object: no compiler /nonexistent/c++'"
check "cache list shows the entry" "\"$tb\" cache list | grep -q '((a.t < b.t) and (abs((a.x - b.x)) < 1))'"
check "cache clear removes it" "\"$tb\" cache clear | grep -q 'removed 1 entry from'"
expect 2 'cpu-codegen: sometimes not in' -- "$tb" "${nlj[@]}" --cpu-codegen sometimes
unset TWOBODY_CACHE_DIR

# Lattice maps: the .npy and its sidecar, the summary, bad requests with their kind and reason.
printf '1 1 1 0.5\n2.2 1.5 1 -0.25\n1.5 2 2.5 0.75\n' > "$work/atoms.txt"
check "potential writes the map and its sidecar" \
  "\"$tb\" potential --data \"$work/atoms.txt\" --charge-column 4 --spacing 0.5 --cutoff 2 --padding 1 -o \"$work/v.npy\" && grep -q shape_xyz \"$work/v.npy.json\""
check "potential's .npy is float32 of shape (nz, ny, nx)" "head -c 128 \"$work/v.npy\" | grep -aq \"'<f4'.*'shape': (8, 7, 8)\""
check "double precision writes float64" \
  "\"$tb\" potential --data \"$work/atoms.txt\" --charge-column 4 --spacing 0.5 --cutoff 2 --precision double -o \"$work/v8.npy\" && head -c 128 \"$work/v8.npy\" | grep -aq \"'<f8'\""
explains 1 -- "$tb" potential --data "$work/atoms.txt" --charge-column 4 --spacing 0.5 --cutoff 2
# A map's process phases under --explain: the reading, (with a device) the wait for its start-up,
# the map, the writing.
check "explain names a map's process phases" \
  "\"$tb\" potential --data \"$work/atoms.txt\" --charge-column 4 --spacing 0.5 --cutoff 2 -o \"$work/vp.npy\" --explain 2>&1 >/dev/null | grep -q '^twobody: process phases (wall time, peak resident memory after each): read .*atoms.txt .*map .*write output '"
expect 4 'the exclusion radius must be > 0 and at most the cutoff' -- "$tb" potential --data "$work/atoms.txt" --charge-column 4 --cutoff 2 --exclusion 3
expect 4 '--charge-column is needed' -- "$tb" potential --data "$work/atoms.txt" --cutoff 2
expect 4 'exceeds half the period' -- "$tb" potential --data "$work/atoms.txt" --charge-column 4 --cutoff 2 --periodic --origin 0,0,0 --shape 4,4,4
expect 6 'one backend' -- "$tb" potential --data "$work/atoms.txt" --charge-column 4 --cutoff 2 --backend hybrid
expect 3 'radius -0.25 is not finite and > 0' -- "$tb" density --data "$work/atoms.txt" --radius-column 4 --cutoff 1
printf '0 0 0 1 0\n1.5 -2 0.5 0 1\n' > "$work/kspace.txt"
check "gridding writes a complex64 map" \
  "\"$tb\" gridding --data \"$work/kspace.txt\" --re-column 4 --im-column 5 --grid 16x16x8 -o \"$work/g.npy\" && head -c 128 \"$work/g.npy\" | grep -aq \"'<c8'.*'shape': (8, 16, 16)\""
expect 4 "--grid '16x0'" -- "$tb" gridding --data "$work/kspace.txt" --re-column 4 --im-column 5 --grid 16x0
check "gridding's --samples is --data" \
  "\"$tb\" gridding --samples \"$work/kspace.txt\" --re-column 4 --im-column 5 --grid 16x16x8 -o \"$work/g2.npy\" && cmp \"$work/g.npy\" \"$work/g2.npy\""

# Forces: the n x 4 .npy and its totals, the summary, coincident bodies named, bad requests.
printf '1 1 1 0.5\n2.2 1.5 1 -0.25\n1.5 2 2.5 0.75\n3 3 3 0.1\n' > "$work/bodies.txt"
check "forces writes an n x 4 float64 .npy and its totals" \
  "\"$tb\" forces --data \"$work/bodies.txt\" --columns 1,2,3 --cutoff 2.5 -o \"$work/f.npy\" && head -c 128 \"$work/f.npy\" | grep -aq \"'<f8'.*'shape': (4, 4)\" && grep -q total_energy \"$work/f.npy.json\""
check "forces' CSV has fx,fy,fz,energy,partners" \
  "\"$tb\" forces --data \"$work/bodies.txt\" --columns 1,2,3 --cutoff 2.5 -o \"$work/f.csv\" && head -n 1 \"$work/f.csv\" | grep -q '^fx,fy,fz,energy,partners'"
check "forces: the summary" "\"$tb\" forces --data \"$work/bodies.txt\" --columns 1,2,3 --cutoff 2.5 | grep -q '4 bodies, 4 pairs within 2.5'"
explains 2 -- "$tb" forces --data "$work/bodies.txt" --columns 1,2,3 --cutoff 2.5
printf '1 1 1\n2 2 2\n1 1 1\n' > "$work/dup.txt"
expect 3 'bodies 1 and 3 coincide' -- "$tb" forces --data "$work/dup.txt" --cutoff 2.5 -o "$work/dup.npy"
check "forces: nothing written after an error" "[[ ! -e \"$work/dup.npy\" ]]"
expect 4 'exceeds half the periodic box' -- "$tb" forces --data "$work/bodies.txt" --columns 1,2,3 --cutoff 2.5 --box 4
expect 4 'triclinic' -- "$tb" forces --data "$work/bodies.txt" --columns 1,2,3 --cutoff 1 --box 4,4,4,90,90,60
expect 4 '--potential coulomb needs --charge-column' -- "$tb" forces --data "$work/bodies.txt" --potential coulomb --cutoff 2
check "forces: Coulomb with charges" "\"$tb\" forces --data \"$work/bodies.txt\" --potential coulomb --charge-column 4 --cutoff 2.5 | grep -q '4 bodies'"

for cmd in sdh paircount rdf angular xi wtheta rppi smu xi-rppi wp xi-smu kk nk neighbours kde matrix custom generate potential density gridding forces cache; do
  mkdir -p "$work/examples-$cmd"
  examples=$("$tb" "$cmd" --help | sed -n '/^Examples:/,$p' | sed -n 's/^  twobody //p')
  check "$cmd --help has examples" "[[ -n \"\$examples\" ]]"
  while read -r line; do
    [[ -z $line ]] && continue
    read -ra args <<<"$line"
    check "example: twobody $line" "(cd \"$work/examples-$cmd\" && \"$tb\" ${args[*]} >/dev/null 2>&1)"
  done <<<"$examples"
done

if [[ -n "$shared" && -f "$shared/Mr19_mock_northonly.rdcz.ff" ]]; then
  check "shared mock angular first bin" "[ \$(\"$tb\" angular --data \"$shared/Mr19_mock_northonly.rdcz.ff\" --bins \"$shared/angular_bins_corrfunc.txt\" | sed -n 2p | cut -d, -f3) -eq 1468 ]"
fi

# HDF5 and FITS catalogues, .h5 and .npz outputs: the same counts as from the same points in text.
source "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/fits_table.sh"
if "$tb" generate clustered -n 2000 --box 100 --seed 8 -o "$work/cat.h5" 2>/dev/null; then
  "$tb" generate clustered -n 2000 --box 100 --seed 8 -o "$work/cat.txt"
  "$tb" paircount --data "$work/cat.txt" --rmax 10 --nbins 4 -o "$work/cat_txt.csv"
  check "paircount of an .h5 catalogue (its only dataset, and by path) equals the text's" "\"$tb\" paircount --data \"$work/cat.h5\" --rmax 10 --nbins 4 | cmp -s - \"$work/cat_txt.csv\" && \"$tb\" paircount --data \"$work/cat.h5:/points\" --rmax 10 --nbins 4 | cmp -s - \"$work/cat_txt.csv\""
  check "an .h5 result table reads back by column name" "\"$tb\" paircount --data \"$work/cat.h5\" --rmax 10 --nbins 4 -o \"$work/r.h5\" && \"$tb\" paircount --data \"$work/r.h5:/table\" --columns lo,npairs --rmax 1e9 --nbins 1 | sed -n 2p | grep -qx '0,1000000000,6'"
  check "matrix -o .h5 and .npz" "head -50 \"$work/cat.txt\" >\"$work/c50.txt\" && \"$tb\" matrix --data \"$work/c50.txt\" -o \"$work/m.h5\" && \"$tb\" matrix --data \"$work/c50.txt\" -o \"$work/m.npz\" && \"$tb\" matrix --data \"$work/c50.txt\" -o \"$work/m.txt\" && \"$tb\" paircount --data \"$work/m.h5:/matrix\" --columns 1,2,3 --rmax 1e9 --nbins 1 >/dev/null"
  if python3 -c 'import numpy' 2>/dev/null; then
    check "paircount -o .npz reads in numpy as the csv" "\"$tb\" paircount --data \"$work/cat.h5\" --rmax 10 --nbins 4 -o \"$work/r.npz\" && python3 -c 'import numpy,sys; z=numpy.load(sys.argv[1]); c=numpy.genfromtxt(sys.argv[2],delimiter=\",\",names=True); assert list(z.files)==[\"lo\",\"hi\",\"npairs\"] and z[\"npairs\"].dtype==numpy.uint64 and (z[\"npairs\"]==c[\"npairs\"]).all() and (z[\"hi\"]==c[\"hi\"]).all()' \"$work/r.npz\" \"$work/cat_txt.csv\""
    check "matrix .npz equals the text matrix" "python3 -c 'import numpy,sys; assert (numpy.load(sys.argv[1])[\"matrix\"]==numpy.loadtxt(sys.argv[2])).all()' \"$work/m.npz\" \"$work/m.txt\""
  fi
fi
awk '{print $1 * 3.6, $2 * 0.9 - 45, $3}' "$work/cat.txt" | fits_table "$work/gal.fits" GALAXIES RA,DEC,Z
awk '{print $1 * 3.6, $2 * 0.9 - 45, $3}' "$work/cat.txt" >"$work/gal.txt"
if "$tb" angular --data "$work/gal.fits" --rmax 5 --nbins 3 >/dev/null 2>&1; then
  "$tb" angular --data "$work/gal.txt" --rmax 5 --nbins 3 -o "$work/gal_txt.csv"
  gzip -kf "$work/gal.fits"
  check "angular of a FITS table (first table, by EXTNAME) equals the text's" "\"$tb\" angular --data \"$work/gal.fits\" --rmax 5 --nbins 3 | cmp -s - \"$work/gal_txt.csv\" && \"$tb\" angular --data \"$work/gal.fits:GALAXIES\" --columns RA,DEC --rmax 5 --nbins 3 | cmp -s - \"$work/gal_txt.csv\""
  # One CI run (2026-11-28) saw cfitsio report "tried to move past end of file" opening the .gz,
  # which never happened here: on failure, say what gzip and the files were.
  check "angular of a gzip'd FITS table equals the text's" "\"$tb\" angular --data \"$work/gal.fits.gz:1\" --columns RA,DEC --rmax 5 --nbins 3 | cmp -s - \"$work/gal_txt.csv\" || { ls -l \"$work\"/gal.fits*; gzip -lv \"$work/gal.fits.gz\"; gzip -tv \"$work/gal.fits.gz\"; df -h \"$work\"; false; }"
  # A sound gzip of a table cut short, and a gzip stream cut short: input errors, as a plain file's.
  head -c 9000 "$work/gal.fits" | gzip >"$work/cut.fits.gz"
  expect 3 'tried to move past end of file' -- "$tb" angular --data "$work/cut.fits.gz:1" --columns RA,DEC --rmax 5 --nbins 3
  head -c 1000 "$work/gal.fits.gz" >"$work/trunc.fits.gz"
  expect 3 'not a readable gzip file' -- "$tb" angular --data "$work/trunc.fits.gz" --rmax 5 --nbins 3
  expect 5 'a temporary file for its decompressed copy' -- env TMPDIR="$work/no-such-dir" "$tb" angular --data "$work/gal.fits.gz" --rmax 5 --nbins 3
fi

# Triclinic cells: --box with 6 values (a,b,c,alpha,beta,gamma) or 9 (the cell matrix, rows a, b, c)
# for 3-D points; refusals name the cell's limit; the forms agree with each other and with the
# orthorhombic box where the cell is one; brute force and the grid agree.
"$tb" generate uniform -n 2000 --box 50 --seed 5 -o "$work/tri.txt"
tri_matrix=50,0,0,10,45,0,-5,8,40
expect 3 'outside the periodic cell.*--wrap' -- "$tb" paircount --data "$work/tri.txt" --box $tri_matrix --rmax 5 --nbins 4
expect 4 'inscribed-sphere radius' -- "$tb" rdf --data "$work/tri.txt" --box $tri_matrix --wrap --rmax 20.5 --nbins 4
expect 4 'angle gamma must lie in \(0, 180\)' -- "$tb" rdf --data "$work/tri.txt" --box 50,50,50,90,90,180 --wrap --rmax 5 --nbins 4
expect 4 'make no cell' -- "$tb" rdf --data "$work/tri.txt" --box 50,50,50,30,30,90 --wrap --rmax 5 --nbins 4
expect 4 'lower-triangular' -- "$tb" rdf --data "$work/tri.txt" --box 50,1,0,0,50,0,0,0,50 --wrap --rmax 5 --nbins 4
expect 4 '--box has 4 lengths .*triclinic cell takes 6 values' -- "$tb" rdf --data "$work/tri.txt" --box 50,50,50,90 --rmax 5 --nbins 4
expect 4 '2-D .* not a triclinic cell' -- "$tb" rppi --data "$work/tri.txt" --box $tri_matrix --wrap --rmax 5 --nbins 2 --pimax 5
expect 4 'distance matrix' -- "$tb" matrix --data "$work/tri.txt" --box $tri_matrix --wrap
check "triclinic --box: commas and spaces alike" "cmp -s <(\"$tb\" rdf --data \"$work/tri.txt\" --box $tri_matrix --wrap --rmax 12 --nbins 6) <(\"$tb\" rdf --data \"$work/tri.txt\" --box ${tri_matrix//,/ } --wrap --rmax 12 --nbins 6)"
check "triclinic --box: brute force equals the grid" "cmp -s <(\"$tb\" paircount --data \"$work/tri.txt\" --box $tri_matrix --wrap --rmax 12 --nbins 6 --path brute) <(\"$tb\" paircount --data \"$work/tri.txt\" --box $tri_matrix --wrap --rmax 12 --nbins 6 --path grid)"
check "triclinic --box: right angles are the orthorhombic box" "cmp -s <(\"$tb\" rdf --data \"$work/tri.txt\" --box 50,50,50,90,90,90 --rmax 12 --nbins 6) <(\"$tb\" rdf --data \"$work/tri.txt\" --box 50 --rmax 12 --nbins 6) && cmp -s <(\"$tb\" rdf --data \"$work/tri.txt\" --box 50,0,0,0,50,0,0,0,50 --rmax 12 --nbins 6) <(\"$tb\" rdf --data \"$work/tri.txt\" --box 50 --rmax 12 --nbins 6)"
check "triclinic --box: dimensions run, every pair counted once" "[ \$(\"$tb\" paircount --data \"$work/tri.txt\" --box 50,45,40,80,95,105 --wrap --rmax 19 --nbins 4 | awk -F, 'NR>1{s+=\$3} END{print s}') -gt 0 ]"
check "triclinic --explain names the cell" "\"$tb\" rdf --data \"$work/tri.txt\" --box $tri_matrix --wrap --rmax 12 --nbins 6 --explain 2>&1 | grep -q 'triclinic a = (50, 0, 0)'"

# --devices: the pairs split over devices, here 3 simulated ones (TWOBODY_SIMULATED_DEVICES: the CPU
# backend on one thread each), byte-identical to one run; the plan names each device.
"$tb" generate clustered -n 6000 --box 100 --seed 11 -o "$work/dev.txt"
"$tb" generate uniform -n 3000 --box 100 --seed 12 -o "$work/dev2.txt"
"$tb" generate uniform --sky -n 3000 --seed 13 -o "$work/devsky.txt"
"$tb" generate uniform --sky -n 4000 --seed 14 -o "$work/devsky_r.txt"
sim3=(env TWOBODY_SIMULATED_DEVICES=3)
for args in "sdh --data $work/dev.txt --nbins 64" \
            "paircount --data $work/dev.txt --data2 $work/dev2.txt --rmin 0.5 --rmax 12 --nbins 8 --log --ravg" \
            "rdf --data $work/dev.txt --box 100 --rmax 15 --nbins 10" \
            "wtheta --data $work/devsky.txt --randoms $work/devsky_r.txt --rmin 0.1 --rmax 10 --nbins 6 --log --jackknife 8" \
            "xi-rppi --data $work/dev.txt --randoms $work/dev2.txt --rmin 1 --rmax 15 --nbins 5 --pimax 10 --box 100" \
            "neighbours --data $work/dev.txt --data2 $work/dev2.txt --rmax 3" \
            "join --data $work/dev.txt --eps 2 --emit counts"; do
  check "--devices all is one run: ${args%% *}" "cmp -s <("$tb" $args) <(${sim3[*]} "$tb" $args --devices all)"
done
check "--devices 0,0,2 pair list to a file" ""$tb" join --data "$work/dev.txt" --eps 2 -o "$work/pairs1.csv" && ${sim3[*]} "$tb" join --data "$work/dev.txt" --eps 2 --devices 0,0,2 -o "$work/pairs3.csv" && cmp -s "$work/pairs1.csv" "$work/pairs3.csv""
check "--devices --explain: a line per device" "[ \$(${sim3[*]} "$tb" paircount --data "$work/dev.txt" --rmax 10 --nbins 4 --devices all --explain 2>&1 >/dev/null | grep -c '^devices: device [0-2] ') -eq 3 ]"
expect 4 'device 3 is not visible: this process sees 3 simulated devices' -- "${sim3[@]}" "$tb" sdh --data "$work/dev.txt" --nbins 8 --devices 0,3
expect 4 'expected all or device indices' -- "$tb" sdh --data "$work/dev.txt" --nbins 8 --devices 0,one
expect 4 'the backend is cpu' -- "$tb" sdh --data "$work/dev.txt" --nbins 8 --devices 0 --backend cpu

# --backend hybrid: with TWOBODY_HYBRID_FAKE_GPU=1 the "GPU" worker is the CPU backend on one
# thread, so the queue, bands and merge run here, and every output equals the CPU's; without a GPU
# (and without the fake) the CPU runs alone and a note says so.
"$tb" generate uniform -n 3000 --box 50 --seed 7 -o "$work/hyb.txt"
hyb="TWOBODY_HYBRID_FAKE_GPU=1 TWOBODY_HYBRID_BAND_ROWS=5 TWOBODY_HYBRID_SLABS=6"
check "join --backend hybrid equals the cpu (3-D: slab pairs)" "cmp -s <(\"$tb\" join --data \"$work/hyb.txt\" --eps 2 --backend cpu) <(env $hyb \"$tb\" join --data \"$work/hyb.txt\" --eps 2 --backend hybrid)"
check "join --backend hybrid equals the cpu (cosine: bands of rows)" "cmp -s <(\"$tb\" join --data \"$work/hyb.txt\" --eps 0.001 --metric cosine --emit counts --backend cpu) <(env $hyb \"$tb\" join --data \"$work/hyb.txt\" --eps 0.001 --metric cosine --emit counts --backend hybrid)"
check "knn --backend hybrid equals the cpu" "cmp -s <(\"$tb\" knn --data \"$work/hyb.txt\" -k 4 --backend cpu) <(env $hyb \"$tb\" knn --data \"$work/hyb.txt\" -k 4 --backend hybrid)"
check "paircount --backend hybrid equals the cpu" "cmp -s <(\"$tb\" paircount --data \"$work/hyb.txt\" --rmax 10 --nbins 5 --backend cpu) <(env $hyb \"$tb\" paircount --data \"$work/hyb.txt\" --rmax 10 --nbins 5 --backend hybrid)"
check "--backend hybrid --explain reports both workers and the imbalance" "env $hyb \"$tb\" knn --data \"$work/hyb.txt\" -k 4 --backend hybrid --explain 2>&1 >/dev/null | grep -q 'load imbalance'"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  expect 0 'hybrid found no GPU.*the CPU runs alone' -- "$tb" join --data "$work/hyb.txt" --eps 2 --emit total --backend hybrid
fi

echo "cli: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
