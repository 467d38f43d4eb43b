# shellcheck shell=bash
# Sourced by make_expected.sh and golden_test.sh: reads cases.txt and runs one case into a folder.
golden=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# JSON keys that differ from run to run (timings, and the plan text, which holds timings) or from
# machine to machine (device: the host's hardware threads); removed at any depth. Everything else,
# JSON or not, is compared byte for byte (the CSV, table and covariance outputs hold no timings).
volatile_json_keys='wall_seconds pairs_per_second plan device'

# each_case FUNCTION: calls FUNCTION NAME ARGS for every case line of cases.txt ("NAME ARGS...";
# '#' comments and blank lines skipped).
each_case() {
  local name args
  while read -r name args; do
    [[ -z $name || $name == \#* ]] && continue
    "$1" "$name" "$args"
  done <"$golden/cases.txt"
}

# run_case BINARY NAME ARGS DIR: runs BINARY ARGS in a scratch folder, @IN@ standing for the inputs
# and @OUT@ for a folder of output files, and leaves in DIR: NAME.stdout and NAME.stderr (each if not
# empty), NAME.status (the exit code, if not 0) and NAME.out.FILE for each file written, JSON
# canonicalised. Paths in messages read in/... and out/....
run_case() {
  local tb=$1 name=$2 args=$3 dir=$4 work rc=0 f
  work=$(mktemp -d)
  ln -s "$golden/inputs" "$work/in"
  mkdir "$work/out"
  args=${args//@IN@/in}
  local -a argv
  read -ra argv <<<"${args//@OUT@/out}"
  (cd "$work" && exec "$tb" "${argv[@]}" </dev/null >stdout 2>stderr) || rc=$?
  mkdir -p "$dir"
  rm -f "$dir/$name".*
  [[ $rc -eq 0 ]] || echo "$rc" >"$dir/$name.status"
  for f in stdout stderr; do [[ -s $work/$f ]] && mv "$work/$f" "$dir/$name.$f"; done
  for f in "$work"/out/*; do [[ -e $f ]] && mv "$f" "$dir/$name.out.${f##*/}"; done
  rm -rf "$work"
  if grep -qs '^{' "$dir/$name".*; then canonical_json "$dir/$name".*; fi
}

# canonical_json FILE...: rewrites each file that holds a JSON object without the volatile keys,
# keys in their order, numbers exactly as written.
canonical_json() {
  python3 - "$volatile_json_keys" "$@" <<'EOF'
import json, re, sys
drop = set(sys.argv[1].split())
raw = lambda text: "\0" + text  # a number's own text, unquoted again after the dump
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in drop}
    return [strip(x) for x in v] if isinstance(v, list) else v
for path in sys.argv[2:]:
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        if not text.lstrip().startswith("{"):
            continue
        obj = json.loads(text, parse_float=raw, parse_int=raw, parse_constant=raw)
    except (OSError, UnicodeDecodeError, ValueError):
        continue
    out = json.dumps(strip(obj), indent=1, ensure_ascii=False)
    with open(path, "w", encoding="utf-8") as f:
        f.write(re.sub(r'"\\u0000([^"]*)"', r"\1", out) + "\n")
EOF
}
