#!/usr/bin/env python3
"""The Python module's benchmark (issue 21), in one run on one machine:

  md.rdf      twobody.md.rdf of one frame of 10^6 atoms (a uniform box at water's atom density,
              0.1 / Å^3, side 215.4 Å), r_max 6 Å and 10 Å, against freud's RDF and MDAnalysis'
              InterRDF (6 Å, on a tenth of the atoms at the same density: one core, every pair's
              distance held in memory) on the same positions
  overhead    the time of one small call (100 points, paircount) from Python, the engine's own time
              subtracted: what the module adds to a call
  engine=CLI  twobody.rdf from Python against `twobody rdf` on the same .npy file: the engine's
              seconds as each reports them
  DD          twobody.corrfunc.theory.DD (when the drop-in is installed) on 10^6 and 10^7 uniform
              points in a periodic box of 1000, 20 log bins 0.1..25

Prints a table last; --csv FILE writes it too. Peers that are not installed are skipped, said.
Usage: python3 bench/python_bench.py [--cli PATH] [--threads N] [--quick] [--csv FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

import twobody

rows = []


def row(case, code, seconds, note=""):
    rows.append((case, code, seconds, note))
    print(f"{case:34s} {code:28s} {seconds:10.4f} s  {note}", file=sys.stderr, flush=True)


def timed(f, repeat=1):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def md_rows(n, threads, cli):
    rng = np.random.default_rng(21)
    side = (n / 0.1) ** (1.0 / 3.0)
    pos = (rng.random((n, 3)) * side).astype(np.float32)  # as trajectories hold them
    for rmax in (6.0, 10.0):
        case = f"g(r) {n:.0e} atoms r<{rmax:g}"
        nbins = int(rmax * 10)
        backends = [b for b in ("cuda", "cpu") if b in twobody.available_backends()]
        ref = None
        for backend in backends:
            twobody.md.rdf(pos[:1000], box=side, rmax=rmax, nbins=nbins, backend=backend)  # warm-up
            t, r = timed(lambda: twobody.md.rdf(pos, box=side, rmax=rmax, nbins=nbins, backend=backend,
                                                threads=threads), 2)
            row(case, f"twobody.md.rdf {backend}", t, f"engine {r.seconds:.4f} s")
            ref = r if ref is None else ref
        try:
            import freud

            freud.parallel.set_num_threads(threads or os.cpu_count())
            box = freud.box.Box.cube(side)
            centred = box.wrap(pos - 0.5 * side)
            f = freud.density.RDF(bins=nbins, r_max=rmax)
            t, _ = timed(lambda: f.compute(system=(box, centred)), 2)
            diff = np.abs(f.bin_counts - 2 * ref.npairs).sum()
            row(case, f"freud {freud.__version__}", t, f"{int(diff)} ordered pairs binned otherwise (float32)")
        except ImportError:
            row(case, "freud", float("nan"), "not installed")
        if rmax <= 6.0:
            # MDAnalysis runs on one core and holds every pair: a tenth of the atoms (the same
            # density), beside twobody's time on the same tenth.
            m_n = n // 10
            m_side = (m_n / 0.1) ** (1.0 / 3.0)
            m_pos = pos[:m_n] * np.float32(m_side / side)
            m_case = f"g(r) {m_n:.0e} atoms r<{rmax:g}"
            m_ref = twobody.md.rdf(m_pos, box=m_side, rmax=rmax, nbins=nbins, threads=threads)
            t, _ = timed(lambda: twobody.md.rdf(m_pos, box=m_side, rmax=rmax, nbins=nbins, threads=threads), 2)
            row(m_case, f"twobody.md.rdf {m_ref.backend}", t)
            try:
                import MDAnalysis as mda
                from MDAnalysis.analysis.rdf import InterRDF

                u = mda.Universe.empty(m_n, trajectory=True)
                u.atoms.positions = m_pos
                u.dimensions = [m_side, m_side, m_side, 90, 90, 90]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t, m = timed(lambda: InterRDF(u.atoms, u.atoms, nbins=nbins, range=(0.0, rmax),
                                                  exclusion_block=(1, 1)).run())
                diff = np.abs(m.results.count - 2 * m_ref.npairs).sum()
                row(m_case, f"MDAnalysis {mda.__version__} InterRDF", t, f"{int(diff)} ordered pairs binned otherwise")
            except ImportError:
                row(m_case, "MDAnalysis", float("nan"), "not installed")
    # The engine from Python and from the CLI, same file, same backend.
    if cli:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "frame.npy")
            np.save(path, pos.astype(np.float64))
            edges = twobody.linear_bins(0.0, 6.0, 60)
            twobody.rdf(np.load(path), edges, side, threads=threads)
            r = twobody.rdf(np.load(path), edges, side, threads=threads)
            seconds = float("inf")
            for _ in range(3):  # each a fresh process: the best of three
                out = subprocess.run([cli, "rdf", "--data", path, "--box", str(side), "--rmin", "0", "--rmax", "6",
                                      "--nbins", "60", "--format", "json"] + (["--threads", str(threads)] if threads else []),
                                     capture_output=True, text=True, check=True)
                meta = json.loads(out.stdout)
                seconds = min(seconds, meta["wall_seconds"])
            same = np.array_equal(np.array(meta["columns"]["npairs"]), r.npairs)
            row(f"engine seconds, rdf {n:.0e} r<6", f"python ({r.backend})", r.seconds)
            row(f"engine seconds, rdf {n:.0e} r<6", "CLI", float(seconds), f"same counts: {same}")


def frames_rows(threads):
    """Many frames of a small system: what a call costs beside its pairs."""
    rng = np.random.default_rng(22)
    n, frames = 10_000, 200
    side = (n / 0.1) ** (1.0 / 3.0)
    traj = (rng.random((frames, n, 3)) * side).astype(np.float32)
    for backend in [b for b in ("cuda", "cpu") if b in twobody.available_backends()]:
        for batch in (True, False):
            twobody.md.rdf(traj[:3], box=side, rmax=8.0, nbins=80, backend=backend, threads=threads, batch=batch)
            t, r = timed(lambda: twobody.md.rdf(traj, box=side, rmax=8.0, nbins=80, backend=backend,
                                                threads=threads, batch=batch))
            row(f"g(r) {n:.0e} atoms x {frames} frames", f"twobody.md.rdf {backend}" + (" batch" if batch else ""),
                t, f"{t / frames * 1e3:.2f} ms a frame, engine {r.seconds / frames * 1e3:.2f} (runs overlap)")
        # One frame alone, and where its engine time goes (the plan's phases).
        one = twobody.rdf(traj[0], twobody.linear_bins(0.0, 8.0, 80), side, backend=backend, threads=threads)
        t1, _ = timed(lambda: twobody.md.rdf(traj[0], box=side, rmax=8.0, nbins=80, backend=backend,
                                             threads=threads), 5)
        print(f"  one frame, {backend}: {t1 * 1e3:.2f} ms; plan: {one.plan}", file=sys.stderr, flush=True)
        row(f"g(r) {n:.0e} atoms, one frame", f"twobody.md.rdf {backend}", t1, f"engine {one.seconds * 1e3:.2f} ms")


def overhead_rows():
    p = np.random.default_rng(5).random((100, 3))
    edges = twobody.linear_bins(0.0, 0.5, 10)
    twobody.paircount(p, edges, backend="cpu")
    calls = 300
    t0 = time.perf_counter()
    engine = 0.0
    for _ in range(calls):
        engine += twobody.paircount(p, edges, backend="cpu", threads=1).seconds
    total = (time.perf_counter() - t0) / calls
    row("one call, 100 points (cpu)", "twobody.paircount", total, f"engine {engine / calls * 1e3:.3f} ms, "
        f"module {(total - engine / calls) * 1e3:.3f} ms")


def dd_rows(threads, quick):
    try:
        from twobody.corrfunc.theory import DD
    except ImportError:
        row("DD", "twobody.corrfunc.theory.DD", float("nan"), "not installed")
        return
    edges = twobody.log_bins(0.1, 25.0, 20)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("".join(f"{lo:.17g} {hi:.17g}\n" for lo, hi in zip(edges[:-1], edges[1:])))
        binfile = f.name
    for n in (10**6,) if quick else (10**6, 10**7):
        rng = np.random.default_rng(n)
        x, y, z = (rng.random(n) * 1000.0 for _ in range(3))
        t, res = timed(lambda: DD(1, threads or os.cpu_count(), binfile, x, y, z, periodic=True, boxsize=1000.0))
        row(f"DD {n:.0e} points r<25 box 1000", "twobody.corrfunc.theory.DD", t, f"{int(res['npairs'].sum())} pairs")
    os.unlink(binfile)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.environ.get("TWOBODY_CLI"))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--csv")
    a = ap.parse_args()
    print(f"twobody {twobody.__version__}, backends {twobody.available_backends()}", file=sys.stderr)
    overhead_rows()
    md_rows(10**5 if a.quick else 10**6, a.threads, a.cli)
    frames_rows(a.threads)
    dd_rows(a.threads, a.quick)
    print(f"\n{'case':34s} {'code':34s} {'seconds':>10s}  note")
    for case, code, s, note in rows:
        print(f"{case:34s} {code:34s} {s:10.4f}  {note}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("case,code,seconds,note\n")
            for case, code, s, note in rows:
                f.write(f'"{case}","{code}",{s},"{note}"\n')


if __name__ == "__main__":
    main()
