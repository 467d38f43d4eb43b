#!/usr/bin/env bash
# The robustness suite: malformed inputs of every class, for every reader and subcommand, and
# faults of the outputs. Each case must exit with a code in 1..127 (no signal), say what is wrong
# (stderr matching a pattern) and leave no output file (nor a temporary one beside it); outputs that
# fail keep a good file that was there before. Prints "N passed, N failed".
# Usage: robustness.sh BINARY
set -u
tb=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# refused REGEX ARGS...: exit 1..127, stderr matching REGEX, nothing written to out/.
refused() {
  local regex=$1
  shift
  rm -rf out && mkdir out
  local err rc
  err=$("$tb" "$@" 2>&1 >out/stdout)
  rc=$?
  rm -f out/stdout
  if ((rc < 1 || rc > 127)); then bad "$* -> exit $rc (a signal or success), stderr: $err"; return; fi
  if [[ ! $err =~ $regex ]]; then bad "$* -> stderr '$err' does not match /$regex/"; return; fi
  if [[ -n $(ls -A out) ]]; then bad "$* -> left $(ls -A out) in the output folder"; return; fi
  ok
}

# Inputs: good ones, and one malformed file per class.
python3 - <<'PY'
import random, struct
random.seed(7)
def write(name, rows):
    with open(name, "w") as f:
        f.write("".join(" ".join(repr(v) for v in r) + "\n" for r in rows))
pts = [(random.random() * 10, random.random() * 10, random.random() * 10) for _ in range(200)]
write("good.txt", pts)
with open("hdr.txt", "w") as f:
    f.write("x y z\n" + "".join(" ".join(repr(v) for v in r) + "\n" for r in pts))
write("sky.txt", [(random.random() * 360, random.random() * 60 - 30) for _ in range(200)])
with open("overflow.txt", "w") as f: f.write("1 2 3\n4 1e400 6\n")
with open("empty_field.txt", "w") as f: f.write("1,2,3\n4,,6\n")
with open("trailing_comma.txt", "w") as f: f.write("1,2,3,\n")
with open("word.txt", "w") as f: f.write("1 2 3\n4 five 6\n")
with open("nul.txt", "wb") as f: f.write(b"1 2 3\n4 \x00 6\n")
with open("utf16.txt", "wb") as f: f.write("1 2 3\n".encode("utf-16"))
with open("ragged.txt", "w") as f: f.write("1 2 3\n4 5\n")
with open("nan.txt", "w") as f: f.write("1 2 3\nnan 5 6\n")
with open("inf.txt", "w") as f: f.write("1 2 3\ninf 5 6\n")
with open("empty.txt", "w") as f: pass
with open("comments.txt", "w") as f: f.write("# only a comment\n\n")
with open("header_only.txt", "w") as f: f.write("x y z\n")
with open("mixed_header.txt", "w") as f: f.write("x 2 z\n1 2 3\n")
with open("huge.txt", "w") as f: f.write("".join(f"{s}e308 {i} 0\n" for i, s in enumerate([1, -1, 1.5, -1.5])))
with open("bad_bins.txt", "w") as f: f.write("0.1 0.2\n0.3 0.2\n")
with open("big_edges.txt", "w") as f: f.write("1e200 1e201\n")
with open("notnpy.npy", "wb") as f: f.write(b"this is not numpy")
def npy(name, descr, shape, payload):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + payload)
npy("uint.npy", "<u2", "(2, 3)", b"\0" * 12)
npy("complex.npy", "<c16", "(1, 3)", b"\0" * 48)
npy("short.npy", "<f8", "(100, 3)", b"\0" * 80)
npy("fortran.npy", "<f8", "(2, 3)", b"\0" * 48)
with open("fortran.npy", "r+b") as f:
    d = f.read().replace(b"False", b"True ")
    f.seek(0); f.write(d)
with open("short.ff", "wb") as f: f.write(b"\x04\x00\x00\x00abcd")
PY
cp good.txt GOOD.NPY 2>/dev/null || true

# Readers: every malformed file, through a box command and a sky command.
for cmd in "paircount --rmax 2 --nbins 3" "angular --rmax 5 --nbins 3"; do
  read -ra c <<<"$cmd"
  refused "overflow.txt:2: column 2: '1e400' is beyond float64's range" "${c[@]}" --data overflow.txt -o out/r.csv
  refused "empty_field.txt:2: column 2 is empty" "${c[@]}" --data empty_field.txt -o out/r.csv
  refused "trailing_comma.txt:1: column 4 is empty" "${c[@]}" --data trailing_comma.txt -o out/r.csv
  refused "word.txt:2: column 2: 'five' is not a number" "${c[@]}" --data word.txt -o out/r.csv
  refused "nul.txt:2: column 2: a NUL byte" "${c[@]}" --data nul.txt -o out/r.csv
  refused "UTF-16" "${c[@]}" --data utf16.txt -o out/r.csv
  refused "ragged.txt:2: 2 columns, but the first data line has 3" "${c[@]}" --data ragged.txt -o out/r.csv
  refused "nan.txt:2: non-finite value" "${c[@]}" --data nan.txt -o out/r.csv
  refused "inf.txt:2: non-finite value" "${c[@]}" --data inf.txt -o out/r.csv
  refused "empty.txt: the file is empty" "${c[@]}" --data empty.txt -o out/r.csv
  refused "comments.txt: no data lines" "${c[@]}" --data comments.txt -o out/r.csv
  refused "header_only.txt: no data lines" "${c[@]}" --data header_only.txt -o out/r.csv
  refused "mixed_header.txt:1: column 1: 'x' is not a number" "${c[@]}" --data mixed_header.txt -o out/r.csv
  refused "missing.txt: cannot open: No such file or directory" "${c[@]}" --data missing.txt -o out/r.csv
  refused "is a directory" "${c[@]}" --data . -o out/r.csv
  refused "notnpy.npy" "${c[@]}" --data notnpy.npy -o out/r.csv
  refused "uint.npy: .npy dtype .<u2. \\(unsigned integer" "${c[@]}" --data uint.npy -o out/r.csv
  refused "complex.npy: .npy dtype .<c16. \\(complex" "${c[@]}" --data complex.npy -o out/r.csv
  refused "short.npy" "${c[@]}" --data short.npy -o out/r.csv
  refused "short.ff" "${c[@]}" --data short.ff -o out/r.csv
  refused "no column named 'w'" "${c[@]}" --data hdr.txt --columns x,y,w -o out/r.csv
  refused "column 7 was asked for but the file has 3" "${c[@]}" --data good.txt --columns 1,2,7 -o out/r.csv
done

# Every subcommand with a malformed --data (the reader's message, no output).
for args in "sdh --nbins 4" "paircount --rmax 2 --nbins 3" "rdf --box 10 --rmax 2 --nbins 3" \
  "angular --rmax 5 --nbins 3" "xi --box 10 --rmax 2 --nbins 3" "wtheta --randoms sky.txt --rmax 5 --nbins 3" \
  "rppi --rmax 2 --nbins 3 --pimax 2" "smu --rmax 2 --nbins 3 --nmu-bins 2" "xi-rppi --box 10 --rmax 2 --nbins 3 --pimax 2" \
  "wp --box 10 --rmax 2 --nbins 3 --pimax 2" "xi-smu --box 10 --rmax 2 --nbins 3 --nmu-bins 2" \
  "kk --kappa-column 3 --rmax 2 --nbins 3" "nk --data2 good.txt --kappa-column 3 --rmax 2 --nbins 3" \
  "neighbours --rmax 1" "kde --bandwidth 0.5" "matrix"; do
  read -ra a <<<"$args"
  refused "empty_field.txt:2: column 2 is empty" "${a[@]}" --data empty_field.txt -o out/r.csv
  refused "overflow.txt:2: column 2: '1e400' is beyond" "${a[@]}" --data overflow.txt -o out/r.csv
done
refused "nan.txt:2: non-finite value" wtheta --data sky.txt --randoms nan.txt --rmax 5 --nbins 3 -o out/r.csv

# Requests that used to crash or mislead.
refused "too large for the pair function" paircount --data good.txt --rmax 1e200 --nbins 3 -o out/r.csv
refused "too large for the pair function" paircount --data good.txt --bins big_edges.txt -o out/r.csv
refused "span more than float64 can square" sdh --data huge.txt --nbins 4 -o out/r.csv
refused "span more than float64 can square" matrix --data huge.txt -o out/m.txt
refused "--bins FILE or --rmin/--rmax/--nbins/--log" paircount --data good.txt --bins bad_bins.txt --log -o out/r.csv
refused "unknown subcommand 'paircounts'" paircounts --data good.txt
refused "threads" paircount --data good.txt --rmax 2 --nbins 3 --threads -4 -o out/r.csv
refused "is the input of --data" paircount --data good.txt --rmax 2 --nbins 3 -o good.txt
refused "device-memory.*not a size" paircount --data good.txt --rmax 2 --nbins 3 --device-memory 2X -o out/r.csv
refused "device-memory.*below 1 MiB" paircount --data good.txt --rmax 2 --nbins 3 --device-memory 100 -o out/r.csv
refused "device-memory.*not a size" potential --data good.txt --spacing 1 --cutoff 2 --device-memory -1G -o out/p.npy
cp sky.txt sky_r.txt
refused "is the input of --randoms" wtheta --data sky.txt --randoms sky_r.txt --rmax 5 --nbins 3 --covariance sky_r.txt --jackknife 4
ln -sf good.txt alias.txt
refused "is the input of --data" paircount --data alias.txt --rmax 2 --nbins 3 -o good.txt

# A thread count beyond the machine: capped with a note, and the right answer.
"$tb" paircount --data good.txt --rmax 2 --nbins 3 --threads 100000 >t_many.csv 2>t_many.err
rc=$?
"$tb" paircount --data good.txt --rmax 2 --nbins 3 --threads 1 >t_one.csv 2>/dev/null
if [[ $rc -eq 0 ]] && grep -q "capped" t_many.err && cmp -s t_many.csv t_one.csv; then ok; else bad "--threads 100000: exit $rc, $(cat t_many.err)"; fi

# A device-memory budget leaves a CPU run's answer as it was.
"$tb" paircount --data good.txt --rmax 2 --nbins 3 --backend cpu --device-memory 2G >t_budget.csv 2>/dev/null
rc=$?
if [[ $rc -eq 0 ]] && cmp -s t_budget.csv t_one.csv; then ok; else bad "--device-memory 2G on the CPU: exit $rc"; fi

# Outputs: a failed write is an error, never a success; a good file is never spoiled.
if [[ -w /dev/full ]]; then
  for o in "-o /dev/full" ""; do
    err=$("$tb" paircount --data good.txt --rmax 2 --nbins 3 $o 2>&1 >/dev/full)
    rc=$?
    if ((rc >= 1 && rc <= 127)) && [[ $err =~ "No space left on device" ]]; then ok; else bad "write to /dev/full ($o): exit $rc, $err"; fi
  done
  err=$("$tb" matrix --data good.txt 2>&1 >/dev/full); rc=$?
  if ((rc >= 1 && rc <= 127)) && [[ $err =~ "No space left" ]]; then ok; else bad "matrix to /dev/full: exit $rc, $err"; fi
fi
err=$("$tb" paircount --data good.txt --rmax 2 --nbins 3 2>&1 >&-); rc=$?
if ((rc >= 1 && rc <= 127)) && [[ $err =~ "standard output" ]]; then ok; else bad "closed stdout: exit $rc, $err"; fi
# A read-only folder: no output, a message with the reason.
mkdir -p ro && chmod 555 ro
if [[ $(id -u) -ne 0 ]]; then
  refused "ro/r.csv: cannot create the output: Permission denied" paircount --data good.txt --rmax 2 --nbins 3 -o ro/r.csv
fi
refused "nodir/r.csv: cannot create the output: No such file or directory" paircount --data good.txt --rmax 2 --nbins 3 -o nodir/r.csv
# A failing run keeps the good file that was there, and leaves no temporary file.
mkdir -p keep && echo "good result" >keep/r.csv
"$tb" paircount --data overflow.txt --rmax 2 --nbins 3 -o keep/r.csv 2>/dev/null
if [[ $(cat keep/r.csv) == "good result" && $(ls -A keep) == "r.csv" ]]; then ok; else bad "a failed run changed keep/: $(ls -A keep)"; fi
# Appending to standard output appends.
echo first >app.txt
"$tb" paircount --data good.txt --rmax 2 --nbins 3 >>app.txt 2>/dev/null
if [[ $(head -1 app.txt) == first && $(sed -n 2p app.txt) == lo,hi,npairs ]]; then ok; else bad ">> appended wrongly: $(head -3 app.txt)"; fi
# A complete output replaces the file and leaves nothing beside it.
"$tb" paircount --data good.txt --rmax 2 --nbins 3 -o keep/r.csv 2>/dev/null
if [[ $(head -1 keep/r.csv) == lo,hi,npairs && $(ls -A keep) == "r.csv" ]]; then ok; else bad "-o keep/r.csv: $(ls -A keep)"; fi
# Standard input as data; upper-case extensions.
if "$tb" paircount --data - --rmax 2 --nbins 3 <good.txt >stdin.csv 2>/dev/null &&
  "$tb" paircount --data good.txt --rmax 2 --nbins 3 >file.csv 2>/dev/null && cmp -s stdin.csv file.csv; then ok; else bad "--data - differs from the file"; fi
"$tb" generate uniform -n 50 --box 1 --seed 3 -o up.NPY 2>/dev/null
if "$tb" sdh --data up.NPY --nbins 4 >/dev/null 2>&1; then ok; else bad "an upper-case .NPY is not read as .npy"; fi

# Default columns: the first three, with a note naming the others; a header's names select.
printf 'x y z w\n1 2 3 4\n2 3 4 5\n3 4 5 6\n' >named.txt
err=$("$tb" paircount --data named.txt --rmax 10 --nbins 2 2>&1 >named.csv)
if [[ $err =~ "column 4 not used" && $(sed -n 2p named.csv) == "0,5,3" ]]; then ok; else bad "default columns: $err $(cat named.csv)"; fi
if "$tb" paircount --data named.txt --columns x,y,w --rmax 10 --nbins 2 >named2.csv 2>/dev/null; then ok; else bad "--columns by name"; fi

# generate randoms --like: bad requests and inputs name the problem and write nothing.
refused "needs --like" generate randoms --sky -n 100 -o out/r.txt
refused "missing.txt" generate randoms --like missing.txt --sky -n 100 -o out/r.txt
refused "npoints|-n" generate randoms --like sky.txt --sky -n 0 -o out/r.txt
refused "--like goes with generate randoms" generate uniform --like sky.txt -n 100 -o out/r.txt
refused "RA, Dec: 2 coordinates, the data have 3" generate randoms --like good.txt --sky --columns 1,2,3 -n 100 -o out/r.txt
refused "Dec must lie in \[-90, 90\]" generate randoms --like huge.txt --sky --columns 2,1 -n 100 -o out/r.txt
refused "outside the box" generate randoms --like good.txt --box 5 -n 100 -o out/r.txt
refused "no pixel of 1 deg holds 1000 data points" generate randoms --like sky.txt --sky --min-count 1000 -n 100 -o out/r.txt
refused "empty" generate randoms --like empty.txt -n 100 -o out/r.txt

# A NaN in a result (one data point: no pairs, so no mean separation) is said on stderr.
printf '1 2 3\n' >one.txt
err=$("$tb" paircount --data one.txt --rmax 2 --nbins 2 --ravg 2>&1 >/dev/null)
if [[ $err =~ "NaN in ravg (rows 1, 2)" ]]; then ok; else bad "NaN not said: $err"; fi

# HDF5 and FITS inputs (issue 20): broken files, wrong paths and columns name the problem; -o .h5
# and .npz outputs are whole or absent. A build without a library refuses its files (exit 4).
source "$here/fits_table.sh"
: >empty.h5
printf '1 2 3\n4 5 6\n' >text.h5
cp text.h5 text.fits
: >empty.fits
if "$tb" generate uniform -n 200 --box 10 --seed 5 -o good.h5 2>/dev/null; then
  "$tb" paircount --data good.txt --rmax 2 --nbins 3 --ravg -o table.h5 2>/dev/null
  "$tb" paircount --data one.txt --rmax 2 --nbins 2 --ravg -o nan.h5 2>/dev/null
  head -c 1000 good.h5 >cut.h5
  for h in "paircount --rmax 2 --nbins 3" "xi --box 10 --rmax 2 --nbins 3"; do
    read -ra c <<<"$h"
    refused "text.h5: not an HDF5 file" "${c[@]}" --data text.h5 -o out/r.h5
    refused "empty.h5: the file is empty" "${c[@]}" --data empty.h5 -o out/r.h5
    refused "cut.h5.*(truncated|cannot open)" "${c[@]}" --data cut.h5 -o out/r.npz
    refused "good.h5:/nope: no such dataset or group \(the file's datasets: /points\)" "${c[@]}" --data good.h5:/nope -o out/r.h5
    refused "missing.h5: cannot open: No such file" "${c[@]}" --data missing.h5:/points -o out/r.h5
    refused "no column named 'w' \(the file has: lo, hi, npairs, ravg, meanlogr\)" "${c[@]}" --data table.h5:/table --columns lo,hi,w -o out/r.h5
  done
  refused "nan.h5: row 1 has a non-finite value 'nan' in column 4" paircount --data nan.h5 --columns lo,hi,ravg --rmax 2 --nbins 3 -o out/r.h5
  refused "nodir/r.h5: cannot create the output: No such file or directory" paircount --data good.h5 --rmax 2 --nbins 3 -o nodir/r.h5
  refused "FITS output is not written" paircount --data good.h5 --rmax 2 --nbins 3 -o out/r.fits
  refused "is the input of --data" paircount --data good.h5:/points --rmax 2 --nbins 3 -o good.h5
  # Files on which libhdf5 1.10.8 itself faults (tests/fuzz/libhdf5-crashes, less the fuzzer's mode
  # byte): the crash is reported as the input's error, naming the file. (A libhdf5 that refuses
  # them instead names the file too; under AddressSanitizer its negative memcpy is ASan's report.)
  for f in "$here"/../fuzz/libhdf5-crashes/*; do
    [[ $(basename "$f") == README.md ]] && continue
    tail -c +2 "$f" >"crash-$(basename "$f").h5"
    refused "crash-$(basename "$f").h5: (the file is corrupt: libhdf5 crashed reading it|.*)|AddressSanitizer" \
      paircount --data "crash-$(basename "$f").h5" --rmax 2 --nbins 3 -o out/r.h5
  done
else
  refused "built without HDF5 support" paircount --data text.h5 --rmax 2 --nbins 3 -o out/r.csv
fi
awk '{print $1 * 36, $2 * 9 - 45, $3}' good.txt | fits_table sky.fits GALAXIES RA,DEC,Z
if "$tb" angular --data sky.fits --rmax 5 --nbins 3 >/dev/null 2>&1; then
  head -c 5000 sky.fits >cut.fits
  refused "text.fits: not a readable FITS file" angular --data text.fits --rmax 5 --nbins 3 -o out/r.csv
  refused "empty.fits: the file is empty" angular --data empty.fits --rmax 5 --nbins 3 -o out/r.csv
  refused "cut.fits" angular --data cut.fits --rmax 5 --nbins 3 -o out/r.csv
  refused "sky.fits:4: no such HDU" angular --data sky.fits:4 --rmax 5 --nbins 3 -o out/r.csv
  refused "sky.fits:STARS: no HDU of that EXTNAME" angular --data sky.fits:STARS --rmax 5 --nbins 3 -o out/r.csv
  refused "sky.fits:0: the HDU holds no data" angular --data sky.fits:0 --rmax 5 --nbins 3 -o out/r.csv
  # Files on which cfitsio itself aborts (tests/fuzz/cfitsio-crashes, less the fuzzer's mode byte;
  # mode 21 reads HDU 1): reported as the input's error, naming the file.
  for f in "$here"/../fuzz/cfitsio-crashes/*; do
    [[ $(basename "$f") == README.md ]] && continue
    tail -c +2 "$f" >"crash-$(basename "$f").fits"
    refused "crash-$(basename "$f").fits: " angular --data "crash-$(basename "$f").fits:1" --rmax 5 --nbins 3 -o out/r.csv
  done
  refused "no column named 'MAG' \(the file has: RA, DEC, Z\)" angular --data sky.fits --columns RA,MAG --rmax 5 --nbins 3 -o out/r.csv
else
  refused "built without FITS support" angular --data sky.fits --rmax 5 --nbins 3 -o out/r.csv
fi

echo "$pass passed, $fail failed"
((fail == 0))
