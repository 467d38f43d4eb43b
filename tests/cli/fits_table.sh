#!/usr/bin/env bash
# A FITS binary table written by hand (big-endian float64 columns), to test the FITS reader against
# a writer other than cfitsio: fits_table FILE EXTNAME NAME,NAME,... < rows of numbers.
fits_table() {
  python3 -c '
import struct, sys
path, extname, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
rows = [[float(v) for v in l.split()[:len(names)]] for l in sys.stdin if l.strip() and not l.startswith("#")]
def card(k, v):
    if isinstance(v, str):
        return ("%-8s= %s" % (k, "\x27%-8s\x27" % v)).ljust(80)
    return ("%-8s= %20s" % (k, "T" if v is True else v)).ljust(80)
def block(cards):
    h = "".join(cards) + "END".ljust(80)
    return (h + " " * (-len(h) % 2880)).encode()
out = block([card("SIMPLE", True), card("BITPIX", 8), card("NAXIS", 0), card("EXTEND", True)])
cards = [card("XTENSION", "BINTABLE"), card("BITPIX", 8), card("NAXIS", 2), card("NAXIS1", 8 * len(names)),
         card("NAXIS2", len(rows)), card("PCOUNT", 0), card("GCOUNT", 1), card("TFIELDS", len(names))]
for i, n in enumerate(names):
    cards += [card("TTYPE%d" % (i + 1), n), card("TFORM%d" % (i + 1), "D")]
cards.append(card("EXTNAME", extname))
data = b"".join(struct.pack(">%dd" % len(names), *r) for r in rows)
open(path, "wb").write(out + block(cards) + data + b"\0" * (-len(data) % 2880))
' "$@"
}
