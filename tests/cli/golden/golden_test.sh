#!/usr/bin/env bash
# Golden test of the command line: every case of cases.txt run with BINARY must give the stdout,
# stderr, exit code and output files in expected/ byte for byte (JSON less its volatile keys, see
# lib.sh), as made by a build of commit e0378da, so that the engine-shape refactor changes no output
# (cases.txt lists the intended changes since), and the same again on another thread count.
# Usage: golden_test.sh BINARY. Prints a line per failing case and "N passed, N failed".
set -u
tb=$(realpath "$1")
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
check_one() {
  run_case "$tb" "$1" "$2" "$work"
  local f d='' files
  files=$(cd "$golden/expected" && ls -d "$1".* 2>/dev/null; cd "$work" && ls -d "$1".* 2>/dev/null)
  for f in $(sort -u <<<"$files"); do
    if [[ ! -e $golden/expected/$f || ! -e $work/$f ]]; then
      d+="$f: only in one of expected/ and this run"$'\n'
    elif ! cmp -s "$golden/expected/$f" "$work/$f"; then
      d+="$f:"$'\n'"$(diff "$golden/expected/$f" "$work/$f" | head -n 6)"$'\n'
    fi
  done
  if [[ -z $d ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $1: $2"
    printf '%s' "$d" | head -n 12 | cut -c 1-200 | sed 's/^/  /'
  fi
}
each_case check_one
# The same outputs on another thread count (1 for 2, 2 for 1): counts and (exact) floating sums
# alike; only JSON's "threads" may differ.
other=$(mktemp -d)
trap 'rm -rf "$work" "$other"' EXIT
other_threads() {
  [[ $2 =~ --threads\ ([0-9]+) ]] || return 0
  local t=1 f d=''
  [[ ${BASH_REMATCH[1]} == 1 ]] && t=2
  run_case "$tb" "$1" "${2/--threads ${BASH_REMATCH[1]}/--threads $t}" "$other"
  for f in "$golden/expected/$1".*; do
    f=${f##*/}
    cmp -s <(grep -v '"threads":' "$golden/expected/$f") <(grep -vs '"threads":' "$other/$f") || d+=" $f"
  done
  if [[ -z $d ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $1 on --threads $t:$d differ(s) from --threads ${BASH_REMATCH[1]}"
  fi
}
each_case other_threads
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
