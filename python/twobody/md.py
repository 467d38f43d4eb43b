"""Molecular dynamics: g(r) over trajectories, from MDAnalysis or from plain arrays.

``twobody.md.rdf(group_a, group_b=None, rmax=..., ...)`` takes MDAnalysis ``AtomGroup``s (any
trajectory format MDAnalysis reads: twobody has no readers of its own) or positions as NumPy
arrays (one frame ``(n, 3)`` or several ``(frames, n, 3)``, with ``box=``), counts every pair of
each frame exactly with the engine (``twobody.rdf``: minimum image in the periodic cell, on the CPU
or the GPU), and averages over the frames.

g(r) is the frames' pairs in each shell over the frames' ideal-gas counts in it (each frame's
N_A N_B V_shell / V, or N (N - 1) / 2 V_shell / V for one group): exact for a changing volume
(NPT), and MDAnalysis' ``InterRDF`` (which divides by the mean volume) where it is constant. An
atom is never its own partner, also where two groups overlap.
"""

import json
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from . import _twobody
from ._api import _DEFAULT_MAX_PAIRS, _columns, _edges, _run, linear_bins
from ._errors import ConfigError, InputError

__all__ = ["rdf", "RDF"]


@dataclass
class RDF:
    """g(r) averaged over frames, with what it was made of.

    ``edges`` (nbins + 1), ``lo``, ``hi``, ``r`` (shell centres); ``npairs`` (pairs in each shell,
    summed over frames; for one group each pair once), ``expected`` (the ideal gas's count, summed
    over frames), ``g`` (their ratio); ``g_frames`` (frames x nbins: each frame's g),
    ``g_std`` (the frames' standard deviation) and ``g_err`` (standard error of the mean, g_std /
    sqrt(frames)); ``coordination`` (the mean number of partners within r of an atom of the first
    group: the cumulative count at each shell's upper edge) and ``coordination_b`` (of an atom of
    the second group; equal to ``coordination`` for one group); ``frames`` (the frame indices),
    ``n_a``, ``n_b``, ``volume`` (the frames' mean volume), ``seconds`` (the engine's time, summed over
    frames: frames run several at once, so it can exceed the wall time),
    ``backend``. ``partials``: with ``by_type=True``, one RDF for each pair of atom types
    (keys ``(type_a, type_b)``, type_a <= type_b), the result itself being over all atoms.
    """

    edges: np.ndarray
    npairs: np.ndarray
    expected: np.ndarray
    g_frames: np.ndarray
    frames: np.ndarray
    n_a: int
    n_b: int
    self_pairs: bool
    volume: float
    seconds: float
    backend: str
    partials: Dict[Tuple[Any, Any], "RDF"] = field(default_factory=dict)

    @property
    def lo(self):
        return self.edges[:-1]

    @property
    def hi(self):
        return self.edges[1:]

    @property
    def r(self):
        return 0.5 * (self.edges[:-1] + self.edges[1:])

    @property
    def g(self):
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.npairs / self.expected

    @property
    def g_std(self):
        n = len(self.g_frames)
        return self.g_frames.std(axis=0, ddof=1) if n > 1 else np.full(self.g_frames.shape[1], np.nan)

    @property
    def g_err(self):
        return self.g_std / np.sqrt(len(self.g_frames))

    @property
    def coordination(self):
        per_pair = 2.0 if self.self_pairs else 1.0  # one group: a pair is a partner of both atoms
        return per_pair * np.cumsum(self.npairs) / (self.n_a * len(self.frames))

    @property
    def coordination_b(self):
        per_pair = 2.0 if self.self_pairs else 1.0
        return per_pair * np.cumsum(self.npairs) / (self.n_b * len(self.frames))

    def to_pandas(self):
        import pandas as pd

        return pd.DataFrame({"lo": self.lo, "hi": self.hi, "npairs": self.npairs, "expected": self.expected,
                             "g": self.g, "g_err": self.g_err, "coordination": self.coordination})

    def plot(self, ax=None, **kwargs):
        """g(r) against the shells' centres, with the frames' standard errors as error bars."""
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.gca()
        err = self.g_err if len(self.frames) > 1 else None
        ax.errorbar(self.r, self.g, yerr=err, **kwargs)
        ax.set_xlabel("r")
        ax.set_ylabel("g(r)")
        ax.axhline(1.0, color="0.7", lw=0.8, zorder=0)
        return ax

    def __repr__(self):
        return (f"<RDF: {len(self.edges) - 1} shells to r = {self.edges[-1]:g}, {len(self.frames)} frame(s), "
                f"{self.n_a} x {self.n_b} atoms{', ' + str(len(self.partials)) + ' partials' if self.partials else ''}>")


# ---- frames ------------------------------------------------------------------------------------

def _is_atom_group(x):
    return hasattr(x, "universe") and hasattr(x, "positions") and hasattr(x, "ix")


def _cell(box):
    """The engine's box from one frame's box: [a, b, c] (orthorhombic) or [a, b, c, alpha, beta,
    gamma] (triclinic, degrees: MDAnalysis' ``dimensions``), or a 3x3 matrix of cell vectors."""
    b = np.asarray(box, dtype=np.float64)
    if b.shape == (3, 3):
        if np.count_nonzero(b - np.diag(np.diag(b))) == 0:
            return [float(v) for v in np.diag(b)]
        return [float(v) for v in b.ravel()]
    if b.shape == (6,):
        if np.all(b[3:] == 90.0):
            return [float(v) for v in b[:3]]
        return [float(v) for v in b]
    if b.shape in ((1,), (3,), ()):
        return [float(v) for v in np.broadcast_to(b, (3,))]
    raise InputError(f"box: expected a, b, c [alpha, beta, gamma], or a 3x3 matrix, not shape {b.shape}")


def _volume(cell):
    """The cell's volume: a b c for [a, b, c]; the determinant of the cell vectors otherwise (a
    lower-triangular matrix: the product of its diagonal)."""
    if len(cell) == 3:
        return float(np.prod(cell))
    if len(cell) == 9:
        return float(abs(np.linalg.det(np.asarray(cell).reshape(3, 3))))
    a, b, c, alpha, beta, gamma = cell
    ca, cb, cg = np.cos(np.radians([alpha, beta, gamma]))
    return float(a * b * c * np.sqrt(max(1 - ca * ca - cb * cb - cg * cg + 2 * ca * cb * cg, 0.0)))


def _frames_of(a, b, box, start, stop, step, frames):
    """(frame index, positions a, positions b or None, cell) for each frame."""
    if _is_atom_group(a):
        if b is not None and not _is_atom_group(b):
            raise ConfigError("group_b: give an AtomGroup with an AtomGroup group_a")
        if b is not None and b.universe is not a.universe:
            raise ConfigError("group_a and group_b must belong to the same Universe")
        trajectory = a.universe.trajectory
        selected = trajectory[frames] if frames is not None else trajectory[start:stop:step]
        for ts in selected:
            dims = box if box is not None else ts.dimensions
            if dims is None:
                raise InputError(f"frame {ts.frame}: the trajectory has no periodic box (give box=)")
            yield ts.frame, a.positions, None if b is None else b.positions, _cell(dims)
        return
    pa = np.asarray(a)
    pb = None if b is None else np.asarray(b)
    if pa.ndim == 2:
        pa = pa[None]
        pb = None if pb is None else pb[None]
    if pa.ndim != 3 or pa.shape[2] != 3:
        raise InputError(f"positions: expected (n, 3) or (frames, n, 3), not shape {np.asarray(a).shape}")
    if pb is not None and (pb.ndim != 3 or pb.shape[0] != pa.shape[0] or pb.shape[2] != 3):
        raise InputError(f"positions b: expected {pa.shape[0]} frames of (n, 3), not shape {np.asarray(b).shape}")
    if box is None:
        raise ConfigError("positions need box= (a, b, c; a, b, c, alpha, beta, gamma; or a 3x3 matrix), "
                          "one for all frames or one a frame")
    boxes = np.asarray(box, dtype=np.float64)
    # One box a frame: (frames, 3), (frames, 6) or (frames, 3, 3). A (3, 3) array is one matrix of
    # cell vectors when lower triangular (lengths a frame never are: they are all positive).
    matrix = boxes.shape == (3, 3) and boxes[0, 1] == boxes[0, 2] == boxes[1, 2] == 0.0
    per_frame = boxes.ndim == 3 or (boxes.ndim == 2 and not matrix)
    if per_frame and boxes.shape[0] != pa.shape[0]:
        raise InputError(f"box: {boxes.shape[0]} boxes for {pa.shape[0]} frames")
    index = np.arange(pa.shape[0])
    if frames is not None:
        index = index[frames]
    else:
        index = index[start:stop:step]
    for f in np.atleast_1d(index):
        yield int(f), pa[f], None if pb is None else pb[f], _cell(boxes[f] if per_frame else boxes)


# ---- the count -----------------------------------------------------------------------------------

def _wrapped(positions, cell):
    """The positions with every atom outside the cell moved in by whole cell vectors, by the
    engine's own test of inside (trajectories keep atoms that left the box unwrapped); atoms
    inside are left bit for bit."""
    return _twobody.wrap((_columns(positions, "positions"), None, None), cell)


def _count(pa, pb, edges, cell, run):
    """One frame's npairs and expected counts of wrapped positions (pb None: one group, each pair
    once)."""
    sample_a = (_columns(pa, "positions"), None, None)
    sample_b = None if pb is None else (_columns(pb, "positions b"), None, None)
    raw = _twobody.rdf(sample_a, sample_b, edges, cell, run=run)
    cols = dict(raw["columns"])
    meta = json.loads(raw["meta"])
    return cols["npairs"].astype(np.float64), cols["expected"], meta


class _Accumulator:
    def __init__(self, nbins, n_a, n_b, self_pairs, common, zero_bin):
        self.npairs = np.zeros(nbins)
        self.expected = np.zeros(nbins)
        self.g_frames = []
        self.frames = []
        self.volumes = []
        self.seconds = 0.0
        self.backend = ""
        self.n_a, self.n_b, self.self_pairs = n_a, n_b, self_pairs
        # Overlapping groups: the atoms in both are pairs with themselves at r = 0 (removed from
        # the shell holding 0), and the ideal gas has N_A N_B - common pairs.
        self.common, self.zero_bin = common, zero_bin

    def add(self, frame, npairs, expected, meta, volume):
        if self.common:
            if self.zero_bin is not None:
                npairs[self.zero_bin] -= self.common
            expected = expected * (1.0 - self.common / (float(self.n_a) * self.n_b))
        self.npairs += npairs
        self.expected += expected
        with np.errstate(divide="ignore", invalid="ignore"):
            self.g_frames.append(npairs / expected)
        self.frames.append(frame)
        self.volumes.append(volume)
        self.seconds += float(meta.get("wall_seconds", 0.0))
        self.backend = meta.get("backend", self.backend)

    def result(self, edges):
        return RDF(edges=np.asarray(edges), npairs=self.npairs, expected=self.expected,
                   g_frames=np.array(self.g_frames).reshape(len(self.g_frames), len(edges) - 1),
                   frames=np.array(self.frames), n_a=self.n_a, n_b=self.n_b, self_pairs=self.self_pairs,
                   volume=float(np.mean(self.volumes)) if self.volumes else float("nan"), seconds=self.seconds,
                   backend=self.backend)


def _indices(group, n):
    return np.asarray(group.ix) if _is_atom_group(group) else np.arange(n)


def rdf(group_a, group_b=None, *, rmax: Optional[float] = None, nbins: int = 75, rmin: float = 0.0, bins=None,
        box=None, start: Optional[int] = None, stop: Optional[int] = None, step: Optional[int] = None,
        frames: Optional[Sequence[int]] = None, by_type: bool = False, types=None, backend: str = "auto",
        threads: int = 0, progress=None, batch: Optional[bool] = None) -> RDF:
    """g(r) of group_a (with itself) or between group_a and group_b, averaged over frames.

    group_a, group_b: MDAnalysis AtomGroups (of one Universe; frames from its trajectory, boxes
    from each frame's ``dimensions``, orthorhombic or triclinic), or positions ``(n, 3)`` /
    ``(frames, n, 3)`` with ``box=`` (one box, or one a frame: ``[a, b, c]``,
    ``[a, b, c, alpha, beta, gamma]`` or a 3x3 matrix of cell vectors).
    Shells: ``nbins`` equal shells from ``rmin`` to ``rmax`` (the edges of ``twobody.linear_bins``),
    or ``bins`` (an array of edges). ``rmax`` may be at most the cell's inscribed-sphere radius.
    Frames: ``start:stop:step`` or a list ``frames``. ``by_type=True`` (one group) adds
    ``partials``: g(r) of every pair of atom types (``types=``, one a position, for arrays; the
    AtomGroup's ``types`` otherwise). Atoms outside the cell are wrapped in; the engine counts
    every frame exactly (``backend``: 'auto', 'cpu', 'cuda'). ``batch``: count consecutive frames
    of one orthorhombic cell together in one engine run (default: on the GPU), each frame's pairs
    still apart and exact (``twobody``'s frame_paircounts).
    """
    if bins is not None:
        edges = _edges(bins)
    else:
        if rmax is None:
            raise ConfigError("rdf needs rmax (with nbins and rmin) or bins")
        edges = [float(v) for v in linear_bins(rmin, rmax, nbins)]
    if by_type and group_b is not None:
        raise ConfigError("by_type=True takes one group (its atoms' types pair up); give group_b=None")
    first = next(_frames_of(group_a, group_b, box, start, stop, step, frames), None)
    if first is None:
        raise ConfigError("no frames selected")
    n_a = len(first[1])
    n_b = n_a if group_b is None else len(first[2])
    same = group_b is None
    common = 0
    if not same and _is_atom_group(group_a):
        common = int(np.intersect1d(_indices(group_a, n_a), _indices(group_b, n_b)).size)
        if common == n_a == n_b and np.array_equal(np.sort(group_a.ix), np.sort(group_b.ix)):
            same, common = True, 0  # the same atoms: one group
    zero_bin = next((k for k in range(len(edges) - 1) if edges[k] <= 0.0 < edges[k + 1]), None)
    if same and n_a < 2:
        raise InputError(f"group_a has {n_a} atom(s): g(r) of one group needs at least 2")

    partial_sets = []
    if by_type:
        t = np.asarray(group_a.types if _is_atom_group(group_a) and types is None else types)
        if t is None or t.shape != (n_a,):
            raise InputError(f"types: expected one type a position ({n_a}), not {None if t is None else t.shape}")
        kinds = sorted(set(t.tolist()))
        for i, ta in enumerate(kinds):
            for tb in kinds[i:]:
                ma, mb = np.flatnonzero(t == ta), np.flatnonzero(t == tb)
                if ta == tb and len(ma) < 2:
                    continue
                partial_sets.append(((ta, tb), ma, None if ta == tb else mb))

    total = _Accumulator(len(edges) - 1, n_a, n_b, same, 0 if same else common, zero_bin)
    parts = {key: _Accumulator(len(edges) - 1, len(ma), len(ma) if mb is None else len(mb), mb is None, 0, None)
             for key, ma, mb in partial_sets}

    def count_frames(batch, run):
        """[(frame, volume, whole, [partial, ...]), ...] for a list of (frame, pa, pb, cell)."""
        # Wrapped once a frame (float64 rows), for the whole count and every partial.
        wrapped = [(f, _wrapped(pa, cell), None if same or pb is None else _wrapped(pb, cell), cell)
                   for f, pa, pb, cell in batch]
        if len(batch) == 1:
            f, pa, pb, cell = wrapped[0]
            return [(f, _volume(cell), _count(pa, pb, edges, cell, run),
                     [_count(pa[ma], None if mb is None else pa[mb], edges, cell, run) for _, ma, mb in partial_sets])]
        cell = batch[0][3]
        whole = _count_frames([w[1] for w in wrapped], None if same else [w[2] for w in wrapped], edges, cell, run)
        partial = [_count_frames([w[1][ma] for w in wrapped], None if mb is None else [w[1][mb] for w in wrapped],
                                 edges, cell, run) for _, ma, mb in partial_sets]
        volume = _volume(cell)
        return [(w[0], volume, whole[i], [p[i] for p in partial]) for i, w in enumerate(wrapped)]

    def add(counted):
        for frame, volume, whole, partial in counted:
            total.add(frame, *whole, volume)
            for (key, _, _), one in zip(partial_sets, partial):
                parts[key].add(frame, *one, volume)
            if bar is not None:
                bar.update(1)

    bar = _frame_bar(progress)
    frames_in = _frames_of(group_a, group_b, box, start, stop, step, frames)
    try:
        # The first frame alone, on every thread: its backend decides how the others run.
        add(count_frames([next(frames_in)], _run("rdf", backend, threads, "auto", _DEFAULT_MAX_PAIRS, False)))
        atoms = n_a + (0 if same else n_b)
        depth, per_run = _frames_in_flight(total.backend, atoms, threads)
        run = _run("rdf", total.backend or backend, per_run, "auto", _DEFAULT_MAX_PAIRS, False)
        if batch is None:
            batch = total.backend == "cuda"
        size = _batch_size(atoms, len(edges) - 1) if batch else 1
        # Frames in flight at once (the engine releases the GIL), one run a batch: on the GPU each
        # run's upload, cell index and kernels overlap the others' and the reading of the next
        # frames; on the CPU small frames run one a thread instead of spreading one frame thinly
        # over all. Added in frame order, so every sum is the one frame-by-frame gives.
        with ThreadPoolExecutor(max_workers=depth) as pool:
            inflight = deque()
            for one in _batches(frames_in, size):
                if len(inflight) >= 2 * depth:
                    add(inflight.popleft().result())
                inflight.append(pool.submit(count_frames, one, run))
            while inflight:
                add(inflight.popleft().result())
    finally:
        if bar is not None:
            bar.close()
    result = total.result(edges)
    result.partials = {key: acc.result(edges) for key, acc in parts.items()}
    return result


def _batches(frames_in, size):
    """Consecutive frames, up to `size` a list, of one orthorhombic cell (a batch is one run)."""
    pending = []
    for one in frames_in:
        if pending and (len(pending) == size or one[3] != pending[0][3] or len(one[3]) != 3):
            yield pending
            pending = []
        pending.append(one)
    if pending:
        yield pending


def _batch_size(atoms, nbins):
    """Frames a batch: enough to fill the GPU (about 4·10^6 atoms a run, 64 frames at most); the
    engine's frame_paircounts splits a batch further where the backend's region counters (one
    jackknife region a frame, nbins counters each) ask for it."""
    return max(1, min(64, 4_000_000 // max(atoms, 1)))


def _count_frames(pa, pb, edges, cell, run):
    """npairs and expected counts of several frames of one cell in one engine run (their wrapped
    positions, lists pa and pb: twobody's frame_paircounts). The batch's time is the first frame's."""
    raw = _twobody.rdf_frames([(_columns(p, "positions"), None, None) for p in pa],
                              None if pb is None else [(_columns(p, "positions b"), None, None) for p in pb],
                              edges, cell, run=run)
    meta = json.loads(raw["meta"])
    idle = dict(meta, wall_seconds=0.0)
    counts, expected = raw["counts"].astype(np.float64), raw["expected"]
    return [(counts[i], expected, meta if i == 0 else idle) for i in range(len(pa))]


def _frames_in_flight(backend, atoms, threads):
    """(frames in flight, threads a run) after the first frame: on the GPU four (each run's host
    work and small kernels leave it idle between them); on the CPU, frames whose pairs one thread
    counts in a few milliseconds one a thread, larger ones one at a time over every thread."""
    cores = threads if threads > 0 else (os.cpu_count() or 1)
    if backend == "cuda":
        return 4, threads
    depth = max(1, min(cores, 2_000_000 // max(atoms, 1)))
    return (depth, max(1, cores // depth)) if depth > 1 else (1, threads)


def _frame_bar(progress):
    if progress is False or progress is None:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(unit="frame", desc="rdf", leave=False)
