#!/usr/bin/env python3
"""Compare our pair counts (CSV with header lo,hi,npairs; npairs = distinct
unordered pairs, auto-correlation) against Corrfunc (double precision unless --precision float).

  compare_corrfunc.py theta CATALOG BINFILE OURS.csv [--nthreads N]
      CATALOG: .ff fast-food file (RA, DEC = first two columns) or text "ra dec".
      Runs Corrfunc.mocks.DDtheta_mocks(autocorr=1, ...).
  compare_corrfunc.py dd CATALOG BINFILE OURS.csv [--boxsize L] [--nthreads N]
      CATALOG: text columns "x y z". --boxsize L => periodic, else non-periodic.
      Runs Corrfunc.theory.DD(autocorr=1, ...).

BINFILE: two columns "lo hi" per line (Corrfunc uses only the first lo and
every hi, i.e. it assumes contiguous bins).  Corrfunc's auto-correlation
npairs counts every unordered pair twice, so it is divided by 2 here.
Exit status: 0 all bins match, 1 any mismatch (counts, bin count or edges).
"""
import argparse
import sys

import numpy as np


def read_ff(path):
    """Fortran-unformatted fast-food file -> list of float64 column arrays."""
    b = open(path, 'rb').read()
    recs, off = [], 0
    while off < len(b):
        n = int(np.frombuffer(b, '<i4', 1, off)[0])
        if int(np.frombuffer(b, '<i4', 1, off + 4 + n)[0]) != n:
            sys.exit(f"bad Fortran record marker at byte {off}")
        recs.append(b[off + 4:off + 4 + n])
        off += n + 8
    ngal = int(np.frombuffer(recs[0], '<i4')[1])          # idat[1]
    cols = []
    for r in recs[3:]:                                     # skip idat, fdat, znow
        dt = {4 * ngal: '<f4', 8 * ngal: '<f8'}.get(len(r))
        if dt is None:
            sys.exit(f"column record of {len(r)} bytes does not fit ngal={ngal}")
        cols.append(np.frombuffer(r, dt).astype(np.float64))   # writable float64 copy
    return cols


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('mode', choices=['theta', 'dd'])
    ap.add_argument('catalog')
    ap.add_argument('binfile')
    ap.add_argument('ours')
    ap.add_argument('--boxsize', type=float, default=None,
                    help='dd only: periodic box side (omit for non-periodic)')
    ap.add_argument('--nthreads', type=int, default=2)
    ap.add_argument('--precision', choices=['double', 'float'], default='double',
                    help="Corrfunc's kernels: double (exact) or float (its default build)")
    a = ap.parse_args()

    if a.catalog.endswith('.ff'):
        cols = read_ff(a.catalog)
    else:
        cols = list(np.loadtxt(a.catalog, dtype=np.float64, ndmin=2).T)
    dtype = np.float64 if a.precision == 'double' else np.float32
    cols = [np.ascontiguousarray(c, dtype=dtype) for c in cols]   # the dtype picks Corrfunc's kernels

    if a.mode == 'theta':
        from Corrfunc.mocks.DDtheta_mocks import DDtheta_mocks
        res = DDtheta_mocks(autocorr=1, nthreads=a.nthreads, binfile=a.binfile,
                            RA1=cols[0], DEC1=cols[1])
        lo_cf, hi_cf = res['thetamin'], res['thetamax']
    else:
        from Corrfunc.theory.DD import DD
        res = DD(autocorr=1, nthreads=a.nthreads, binfile=a.binfile,
                 X1=cols[0], Y1=cols[1], Z1=cols[2],
                 periodic=a.boxsize is not None, boxsize=a.boxsize)
        lo_cf, hi_cf = res['rmin'], res['rmax']
    cf = res['npairs'].astype(np.int64)
    if np.any(cf % 2):
        print("WARNING: odd Corrfunc auto count (self-pairs added? first edge <= 0)")
    cf_unordered = cf // 2

    ours = np.genfromtxt(a.ours, delimiter=',', names=True, dtype=None, encoding=None)
    ours = np.atleast_1d(ours)
    for k in ('lo', 'hi', 'npairs'):
        if k not in ours.dtype.names:
            sys.exit(f"{a.ours}: missing column '{k}' (have {ours.dtype.names})")

    bad = 0
    if len(ours) != len(cf):
        print(f"MISMATCH: {len(ours)} bins in ours vs {len(cf)} in Corrfunc")
        bad += 1
    print(f"{'lo':>14} {'hi':>14} {'corrfunc/2':>14} {'ours':>14} {'diff':>10}  status")
    for i in range(min(len(ours), len(cf))):
        lo, hi, n = float(ours['lo'][i]), float(ours['hi'][i]), int(ours['npairs'][i])
        edge_ok = np.isclose(lo, lo_cf[i], rtol=1e-9, atol=0) and \
            np.isclose(hi, hi_cf[i], rtol=1e-9, atol=0)
        ok = edge_ok and n == cf_unordered[i]
        bad += not ok
        status = 'ok' if ok else ('EDGE MISMATCH' if not edge_ok else 'MISMATCH')
        print(f"{lo:14.9g} {hi:14.9g} {cf_unordered[i]:14d} {n:14d} "
              f"{n - cf_unordered[i]:10d}  {status}")
    print(f"total: corrfunc/2 = {cf_unordered.sum()}, ours = {int(np.sum(ours['npairs']))}; "
          f"{bad} problem(s)")
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
