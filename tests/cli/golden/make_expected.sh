#!/usr/bin/env bash
# Regenerates expected/ from BINARY. Only for an intended change of the outputs: the golden test
# exists to prove that refactors keep every output of the CLI byte-identical to commit e0378da.
# Usage: make_expected.sh BINARY
set -eu
tb=$(realpath "$1")
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rm -rf "$golden/expected"
make_one() { run_case "$tb" "$1" "$2" "$golden/expected"; }
each_case make_one
echo "wrote $(ls "$golden/expected" | wc -l) files to $golden/expected"
