#!/usr/bin/env python3
"""Parboil's cutcp and mri-gridding beside `twobody potential` and `twobody gridding`: our inputs
in the peers' formats, the options that make our run compute the same map, readers of the peers'
maps in our node order (z, y, x; x fastest), and the comparison. NumPy only (it runs on the
device machine).

  cutcp-input ATOMS.npy DIR    atoms (x, y, z, q) -> DIR/atoms.pqr for cutcp, DIR/atoms-f32.npy
                               (the same atoms rounded to float32, as cutcp reads them) for
                               twobody, DIR/cutcp.json: cutcp's lattice and twobody's options
  mri-input KSPACE.npy N DIR   samples (kx, ky, kz in grid units about the centre, re, im, w) ->
                               DIR/kspace.uks(+.data) for mri-gridding onto N^3, DIR/kspace-grid.npy
                               (the samples at the grid nodes mri-gridding floors them to) for
                               twobody, DIR/mri.json: the options
  compare-cutcp DUMP OURS.npy  cutcp's whole lattice (PARBOIL_LATTICE_OUT) against our map
  compare-mri DUMP OURS.npy    mri-gridding's grid (PARBOIL_GRID_OUT) against our map x I0(beta)
  cutcp-summary FILE OURS.npy  cutcp's own output (sum of |V|, planes z = 0 and z = nz - 1)
  kernel-error W SIGMA         mri-gridding's rational I0 against NumPy's I0 over [0, beta]
  report DIR OURS_DIR          scripts/bench-lattice --peers' table: Parboil's timers and process
                               times (DIR/{cutcp,mri}.log, .seconds) against ours
                               (OURS_DIR/{cutcp,mri}-parboil-cuda.npy(.json), .seconds) and the maps'
                               agreement

How the peers' definitions meet ours (docs/lattice.md, "Comparing with Parboil"):
- cutcp: lattice origin lo = min(atoms) - padding and n = floor((hi - lo)/h) + 1 per axis, in
  float32 (main.c); V = sum q (1 - r^2/C^2)^2 / r over r < C in float32 (rsqrtf on the GPU), then
  nodes with r^2 < 1 (float32) of an atom of non-zero charge set to 0 (excl.c). Ours is given
  --origin/--shape/--spacing of exactly that lattice and --exclusion 1; zero charges are refused
  here (cutcp skips them in its exclusions, ours does not).
- mri-gridding: sample positions are floored to grid indices g = floor(k*a + b) in float32 (main.cu,
  a = kScale(N-1)/2, b = (N-1)/2); the window is radial, w = I0~(beta sqrt(1 - r^2/c^2)) * sdc for
  r^2 < c^2, c = W/2, with I0~ a rational approximation of I0 and no normalisation; beta =
  pi sqrt(4 W^2/s^2 (s - 1/2)^2 - 0.8) (s the oversampling); nodes beyond the grid are dropped (no
  wrap). We write each sample at g + 1/2 (so the flooring cannot go either way), give twobody the
  integer positions g - N/2, --kernel-shape radial --no-wrap and beta rounded to float32 as
  mri-gridding holds it; our window is I0(.)/I0(beta), so ours x I0(beta) is compared.
"""
import json
import os
import struct
import sys

import numpy as np

F32 = np.float32

# mri-gridding's kernel_value_CPU / kernel_value (CPU_kernels.c, GPU_kernels.cu): I0 by a rational
# approximation in z = x^2 (from CCRMA's kbdwindow.cpp).
_NUM = [0.210580722890567e-22, 0.380715242345326e-19, 0.479440257548300e-16, 0.435125971262668e-13,
        0.300931127112960e-10, 0.160224679395361e-7, 0.654858370096785e-5, 0.202591084143397e-2,
        0.463076284721000e0, 0.754337328948189e2, 0.830792541809429e4, 0.571661130563785e6,
        0.216415572361227e8, 0.356644482244025e9, 0.144048298227235e10]


def parboil_i0(x):
    z = np.asarray(x, dtype=np.float64) ** 2
    num = np.zeros_like(z)
    for c in _NUM:
        num = num * z + c
    den = z * (z * (z - 0.307646912682801e4) + 0.347626332405882e7) - 0.144048298227235e10
    return -num / den


def parboil_beta(width, sigma):
    """beta as CUDA_interface.cu and CPU_kernels.c hold it: double arithmetic on the float
    parameters with their PI, stored in a float."""
    w, s = float(F32(width)), float(F32(sigma))
    return float(F32(3.14159265359 * np.sqrt(4 * w * w / (s * s) * (s - .5) * (s - .5) - .8)))


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def cutcp_input(atoms_path, out, spacing=0.5, cutoff=12.0, padding=0.5, exclusion=1.0):
    a = np.load(atoms_path)
    if a.ndim != 2 or a.shape[1] < 4:
        sys.exit(f"{atoms_path}: need columns x, y, z, q")
    a32 = a[:, :4].astype(F32)
    if not np.isfinite(a32).all():
        sys.exit(f"{atoms_path}: non-finite values")
    if (a32[:, 3] == 0).any():
        sys.exit(f"{atoms_path}: {(a32[:, 3] == 0).sum()} atoms of zero charge (cutcp leaves them out of its exclusions)")
    os.makedirs(out, exist_ok=True)
    # readatom.c: sscanf("%*s %*d %*s %*s %*d %f %f %f %f") on lines of at most 95 characters;
    # %.9g gives each float32 back exactly.
    with open(os.path.join(out, "atoms.pqr"), "w") as f:
        for i, (x, y, z, q) in enumerate(a32):
            f.write(f"ATOM  {i + 1} C RES {1 + i // 1000} {x:.9g} {y:.9g} {z:.9g} {q:.9g} 1.0\n")
    np.save(os.path.join(out, "atoms-f32.npy"), a32.astype(np.float64))
    # main.c's lattice: lo = min - padding, hi = max + padding, n = floor((hi - lo)/h) + 1, float32.
    h, pad = F32(spacing), F32(padding)
    lo = a32[:, :3].min(axis=0) - pad
    hi = a32[:, :3].max(axis=0) + pad
    n = [int(np.floor((hi[k] - lo[k]) / h)) + 1 for k in range(3)]
    origin = [float(v) for v in lo]
    meta = {
        "atoms": int(len(a32)), "origin": origin, "shape_xyz": n, "spacing": float(h), "cutoff": cutoff,
        "exclusion": exclusion,
        "twobody": ["--charge-column", "4", "--spacing", repr(float(h)), "--cutoff", repr(cutoff), "--exclusion",
                    repr(exclusion), "--origin", ",".join(repr(v) for v in origin), "--shape", ",".join(map(str, n))],
    }
    write_json(os.path.join(out, "cutcp.json"), meta)
    return meta


def mri_input(kspace_path, N, out, width=4.0, sigma=2.0):
    if N < 8 or N % 8:
        sys.exit(f"grid {N}: mri-gridding's CUDA version needs N a multiple of 8 (tiles of 8 x 4 x 8 nodes)")
    s = np.load(kspace_path)
    if s.ndim != 2 or s.shape[1] < 5:
        sys.exit(f"{kspace_path}: need columns kx, ky, kz, re, im[, w]")
    k = s[:, :3]
    re, im = s[:, 3].astype(F32), s[:, 4].astype(F32)
    w = s[:, 5].astype(F32) if s.shape[1] > 5 else np.ones(len(s), F32)
    # Our node i is at i - N/2: the sample's floor node. mri-gridding's grid needs 0 <= g <= N - 1.
    g = np.floor(k + N // 2).astype(np.int64)
    bad = ((g < 0) | (g > N - 1)).any(axis=1)
    if bad.any():
        sys.exit(f"{kspace_path}: {bad.sum()} samples beyond the {N}^3 grid (k must be in [-N/2, N/2))")
    # kmax = N/2 and matrix sizes N: mri-gridding maps k to k*a + b, a = kScale*(N-1)/2 with
    # kScale = N/(N*kmax), b = (N-1)/2, all float32; it reads k_p = (g + 1/2 - b)/a and floors.
    kmax = F32(N / 2)
    kscale = F32(F32(N) / (F32(N) * kmax))
    a = F32(kscale * F32(N - 1) / F32(2))
    b = F32(F32(N - 1) / F32(2))
    kp = ((g + 0.5 - float(b)) / float(a)).astype(F32)
    back = np.floor((kp * a) + b).astype(np.int64)  # float32 products and sums, as main.cu
    if not (back == g).all():
        sys.exit("internal: mri-gridding would floor some samples elsewhere")
    pad = (-len(s)) % 4  # its sort reads and writes keys 4 at a time: n a multiple of 4
    rec = np.zeros(len(s) + pad, dtype=[("real", F32), ("imag", F32), ("kX", F32), ("kY", F32), ("kZ", F32),
                                        ("sdc", F32)])
    rec["real"][:len(s)], rec["imag"][:len(s)], rec["sdc"][:len(s)] = re, im, w
    rec["kX"][:len(s)], rec["kY"][:len(s)], rec["kZ"][:len(s)] = kp[:, 0], kp[:, 1], kp[:, 2]
    centre = F32((N // 2 + 0.5 - float(b)) / float(a))  # padding samples: value 0, skipped by both
    rec["kX"][len(s):] = rec["kY"][len(s):] = rec["kZ"][len(s):] = centre
    rec["sdc"][len(s):] = 1
    os.makedirs(out, exist_ok=True)
    uks = os.path.join(out, "kspace.uks")
    with open(uks, "w") as f:
        f.write(f"aquisition.numsamples={len(rec)}\n")
        f.write(f"aquisition.kmax={kmax:.9g} {kmax:.9g} {kmax:.9g}\n")
        f.write(f"aquisition.matrixSize={N} {N} {N}\n")
        f.write(f"reconstruction.matrixSize={N} {N} {N}\n")
        f.write(f"gridding.matrixSize={N} {N} {N}\n")
        f.write(f"gridding.oversampling={sigma:.9g}\n")
        f.write(f"kernel.width={width:.9g}\n")
        f.write("kernel.useLUT=0\n")
    rec.tofile(uks + ".data")
    ours = np.zeros((len(rec), 6))
    ours[:, 0] = np.concatenate([g[:, 0], np.full(pad, N // 2)]) - N // 2
    ours[:, 1] = np.concatenate([g[:, 1], np.full(pad, N // 2)]) - N // 2
    ours[:, 2] = np.concatenate([g[:, 2], np.full(pad, N // 2)]) - N // 2
    ours[:, 3], ours[:, 4], ours[:, 5] = rec["real"], rec["imag"], rec["sdc"]
    np.save(os.path.join(out, "kspace-grid.npy"), ours)
    beta = parboil_beta(width, sigma)
    meta = {
        "samples": int(len(s)), "padding_samples": int(pad), "grid": N, "width": width, "oversampling": sigma,
        "beta": beta, "i0_beta": float(np.i0(beta)),
        "twobody": ["--re-column", "4", "--im-column", "5", "--weights-column", "6", "--grid", str(N), "--width",
                    repr(width), "--beta", repr(beta), "--kernel-shape", "radial", "--no-wrap"],
    }
    write_json(os.path.join(out, "mri.json"), meta)
    return meta


def read_cutcp_dump(path):
    """cutcp's whole lattice (parboil-map-dump.patch): (values (nz, ny, nx), origin, h)."""
    with open(path, "rb") as f:
        nx, ny, nz = struct.unpack("3i", f.read(12))
        lo = struct.unpack("3f", f.read(12))
        (h,) = struct.unpack("f", f.read(4))
        v = np.fromfile(f, dtype=F32, count=nx * ny * nz)
    if v.size != nx * ny * nz:
        sys.exit(f"{path}: short file")
    return v.reshape(nz, ny, nx), lo, h


def read_cutcp_summary(path):
    """cutcp's own output (output.c): float32 sum of |V|, uint32 nx*ny, planes z = 0 and nz - 1."""
    with open(path, "rb") as f:
        (total,) = struct.unpack("f", f.read(4))
        (plane,) = struct.unpack("I", f.read(4))
        v = np.fromfile(f, dtype=F32)
    if v.size != 2 * plane:
        sys.exit(f"{path}: {v.size} values for two planes of {plane}")
    return total, v[:plane], v[plane:]


def read_mri_dump(path):
    """mri-gridding's grid (parboil-map-dump.patch): complex (nz, ny, nx)."""
    with open(path, "rb") as f:
        nx, ny, nz = struct.unpack("3i", f.read(12))
        v = np.fromfile(f, dtype=F32, count=2 * nx * ny * nz)
    if v.size != 2 * nx * ny * nz:
        sys.exit(f"{path}: short file")
    return (v[0::2].astype(np.float64) + 1j * v[1::2]).reshape(nz, ny, nx)


def agreement(peer, ours):
    """The largest difference relative to the map's largest magnitude, and the largest relative
    difference at nodes holding at least 1% of it (smaller nodes are sums that mostly cancel)."""
    peer = np.asarray(peer)
    ours = np.asarray(ours)
    if peer.shape != ours.shape:
        sys.exit(f"shapes differ: peer {peer.shape}, ours {ours.shape}")
    diff = np.abs(peer.astype(np.complex128) - ours.astype(np.complex128))
    scale = float(np.abs(ours).max()) or 1.0
    big = np.abs(ours) >= 0.01 * scale
    rel = diff[big] / np.abs(ours[big]) if big.any() else np.zeros(1)
    return {"nodes": int(ours.size), "max_abs_diff": float(diff.max()), "largest": scale,
            "max_diff_rel_to_largest": float(diff.max() / scale), "nodes_over_1pct": int(big.sum()),
            "max_rel_diff_over_1pct": float(rel.max()), "p999_rel_diff_over_1pct": float(np.quantile(rel, 0.999))}


def load_ours(path):
    v = np.load(path)
    meta_path = path + ".json"
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    return v, meta


def compare_cutcp(dump, ours_path):
    peer, lo, h = read_cutcp_dump(dump)
    ours, meta = load_ours(ours_path)
    if meta:
        if list(meta["shape_xyz"]) != [peer.shape[2], peer.shape[1], peer.shape[0]]:
            sys.exit(f"lattices differ: cutcp {peer.shape[::-1]}, ours {meta['shape_xyz']}")
        off = max(abs(a - float(b)) for a, b in zip(meta["origin"], lo))
        if off > 0 or meta["spacing"][0] != h:
            sys.exit(f"lattice origins or spacings differ: cutcp {lo}, {h}; ours {meta['origin']}, {meta['spacing']}")
    zp, zo = peer == 0, ours == 0
    # A node both exclude is 0 in both; one only one excludes (an atom within a float32 rounding of
    # the exclusion radius) is listed, not compared.
    only = zp ^ zo
    r = agreement(np.where(only, 0, peer), np.where(only, 0, ours))
    r["excluded_peer"], r["excluded_ours"], r["excluded_by_one_only"] = int(zp.sum()), int(zo.sum()), int(only.sum())
    return r


def compare_mri(dump, ours_path, beta=None):
    peer = read_mri_dump(dump)
    ours, meta = load_ours(ours_path)
    if beta is None:
        beta = float(meta.get("beta", 0)) or sys.exit("give beta")
    r = agreement(peer, ours.astype(np.complex128) * np.i0(beta))
    r["scale_i0_beta"] = float(np.i0(beta))
    return r


def kernel_error(width, sigma):
    beta = parboil_beta(width, sigma)
    x = np.linspace(0, beta, 100001)
    e = np.abs(parboil_i0(x) / np.i0(x) - 1)
    return {"beta": beta, "max_rel_error_of_parboil_i0": float(e.max()), "at_x": float(x[e.argmax()])}


def parboil_timers(log):
    """Parboil's pb_PrintTimerSet lines ("Kernel    : 0.123", "Timer Wall Time: 0.5")."""
    t = {}
    for line in open(log, errors="replace"):
        name, sep, value = line.rpartition(":")
        if sep and name.strip() in ("IO", "Kernel", "Copy", "Driver", "Copy Async", "Compute", "Timer Wall Time"):
            try:
                t[name.strip()] = float(value)
            except ValueError:
                pass
    return t


def report(peer_dir, ours_dir):
    lines = []
    for name, dump, cmp in (("cutcp", "cutcp-map.bin", compare_cutcp), ("mri", "mri-map.bin", compare_mri)):
        log = os.path.join(peer_dir, f"{name}.log")
        ours_npy = os.path.join(ours_dir, f"{name}-parboil-cuda.npy")
        missing = [f for f in (log, ours_npy, os.path.join(peer_dir, dump)) if not os.path.exists(f)]
        if missing:
            lines.append(f"{name}: missing {', '.join(missing)}")
            continue
        t = parboil_timers(log)
        their_process = float(open(os.path.join(peer_dir, f"{name}.seconds")).read())
        our_process = float(open(os.path.join(ours_dir, f"{name}-parboil-cuda.seconds")).read())
        ours_meta = json.load(open(ours_npy + ".json"))
        # Parboil's whole computation: its timers but IO (reading the input, writing the output);
        # ours: the engine's seconds (plan, binning, upload, kernels, download; no file I/O).
        their_compute = sum(t.get(k, 0.0) for k in ("Kernel", "Copy", "Compute", "Copy Async", "Driver"))
        if name == "mri":
            r = cmp(os.path.join(peer_dir, dump), ours_npy, json.load(open(os.path.join(peer_dir, "mri.json")))["beta"])
        else:
            r = cmp(os.path.join(peer_dir, dump), ours_npy)
        agree = (f"max |diff| {r['max_diff_rel_to_largest']:.2e} of the largest, max relative {r['max_rel_diff_over_1pct']:.2e}"
                 f" (99.9%: {r['p999_rel_diff_over_1pct']:.2e}) at the {r['nodes_over_1pct']} nodes >= 1% of it")
        if name == "cutcp":
            agree += f", {r['excluded_by_one_only']} nodes excluded by one only"
            # The dump is the map cutcp's own output summarises (sum of |V|, first and last planes).
            total, first, last = read_cutcp_summary(os.path.join(peer_dir, "cutcp.out"))
            peer, _, _ = read_cutcp_dump(os.path.join(peer_dir, dump))
            same = (np.array_equal(first, peer[0].ravel()) and np.array_equal(last, peer[-1].ravel())
                    and total == F32(np.abs(peer.astype(np.float64)).sum()))
            agree += "; its own output matches the dump" if same else "; its own output DIFFERS from the dump"
        lines += [f"{name}: twobody cuda  engine {ours_meta['seconds']:.4f} s  process {our_process:.3f} s  "
                  f"({ours_meta.get('terms', 0):.4g} terms)",
                  f"{name}: Parboil cuda  kernel {t.get('Kernel', 0):.4f} s  kernel+copy+CPU {their_compute:.4f} s  "
                  f"process {their_process:.3f} s  (IO {t.get('IO', 0):.3f} s)",
                  f"{name}: speed-up  {their_compute / ours_meta['seconds']:.2f}x (engine vs Parboil's computation), "
                  f"{their_process / our_process:.2f}x (process)",
                  f"{name}: maps agree  {agree}"]
    return lines


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "cutcp-input" and len(args) == 2:
        r = cutcp_input(*args)
    elif cmd == "mri-input" and len(args) in (3, 5):
        r = mri_input(args[0], int(args[1]), args[2], *(float(a) for a in args[3:]))
    elif cmd == "compare-cutcp" and len(args) == 2:
        r = compare_cutcp(*args)
    elif cmd == "compare-mri" and len(args) in (2, 3):
        r = compare_mri(args[0], args[1], *(float(a) for a in args[2:]))
    elif cmd == "cutcp-summary" and len(args) == 2:
        total, first, last = read_cutcp_summary(args[0])
        ours, _ = load_ours(args[1])
        r = {"sum_abs_peer": float(total), "sum_abs_ours": float(np.abs(ours.astype(np.float64)).sum()),
             "plane_z0": agreement(first.reshape(ours.shape[1:]), ours[0]),
             "plane_zlast": agreement(last.reshape(ours.shape[1:]), ours[-1])}
    elif cmd == "kernel-error" and len(args) == 2:
        r = kernel_error(float(args[0]), float(args[1]))
    elif cmd == "report" and len(args) == 2:
        print("\n".join(report(*args)))
        return
    else:
        sys.exit(__doc__)
    print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main(sys.argv)
