"""Lattice maps (potential, density, MRI gridding) and short-range forces over NumPy arrays: the
CLI's ``potential``, ``density``, ``gridding`` and ``forces`` commands (docs/lattice.md,
docs/molecular-dynamics.md)."""

from typing import Optional, Sequence, Union

import numpy as np

from . import _twobody
from ._api import _DEFAULT_MAX_PAIRS, ArrayLike, BoxLike, _box, _raw, _real_array, _run, _sample
from ._errors import ConfigError


class LatticeMap:
    """A map on a regular lattice: ``values`` (an ndarray in C order ``(nz, ny, nx)``, x fastest;
    float32 or float64 by ``precision``, complex for gridding), ``origin``, ``spacing``, ``shape``
    (per axis x, y, z), ``periodic``, ``axes()`` (the nodes' coordinates per axis), ``error_bound``
    (a node with n terms is within n times it of the exact sum of its exact terms, before the last
    rounding), ``excluded`` (a bool mask of the Coulomb potential's excluded nodes, or None),
    ``terms`` and ``meta`` (the plan, the run's time)."""

    def __init__(self, raw):
        self.origin = tuple(raw["origin"])
        self.spacing = tuple(raw["spacing"])
        self.shape = tuple(int(n) for n in raw["shape"])
        self.periodic = tuple(bool(p) for p in raw["periodic"])
        self.precision = raw["precision"]
        grid = self.shape[::-1]  # (nz, ny, nx): C order, x fastest
        v = raw["values"]  # float64, nodes x components, moved from the engine (no copy)
        if raw["components"] == 2:
            v = v.view(np.complex128)
            self.values = v.reshape(grid) if self.precision == "double" else v.astype(np.complex64).reshape(grid)
        else:
            self.values = v.reshape(grid) if self.precision == "double" else v.astype(np.float32).reshape(grid)
        self.error_bound = float(raw["error_term"]) + 0.5 * float(raw["error_step"])
        self.terms = int(raw["terms"])
        ex = raw["excluded"]
        self.excluded = ex.astype(bool).reshape(grid) if ex.size else None
        self.excluded_count = int(raw["excluded_count"])
        self.meta = {"plan": raw["plan"], "wall_seconds": raw["seconds"], "error_term": raw["error_term"],
                     "error_step": raw["error_step"], "grid_bound": raw["grid_bound"]}

    def axes(self):
        """The nodes' coordinates along each axis (x, y, z): origin + i * spacing, as the engine
        places them."""
        return tuple(o + np.arange(n, dtype=np.float64) * h for o, h, n in zip(self.origin, self.spacing, self.shape))

    def __repr__(self):
        return (f"<LatticeMap {'x'.join(map(str, self.shape))} {self.values.dtype}, origin {self.origin}, "
                f"spacing {self.spacing}>")


class BodyForces:
    """Per body ``forces`` (n x d), ``energy`` (n: its half of each pair's energy) and
    ``partners`` (n), with ``total_energy``, ``virial`` (sum over pairs of d.F), ``closest`` (a
    lower bound on the closest pair's separation), ``fine`` (99% of the pairs are farther apart:
    the sums' grid keeps 62 bits of their terms) and ``meta``. Unpacks as (forces, energy,
    totals) with totals = {"energy", "virial"}."""

    def __init__(self, raw):
        import json
        self.forces = raw["forces"]
        self.energy = raw["energy"]
        self.partners = raw["partners"]
        self.total_energy = float(raw["total_energy"])
        self.virial = float(raw["virial"])
        self.closest = float(raw["closest"])
        self.fine = float(raw["fine"])
        self.meta = json.loads(raw["meta"])

    def __iter__(self):
        return iter((self.forces, self.energy, {"energy": self.total_energy, "virial": self.virial}))

    def __repr__(self):
        return f"<BodyForces {self.forces.shape[0]} bodies, total energy {self.total_energy:.9g}>"


def _placement(origin, shape):
    if (origin is None) != (shape is None):
        raise ConfigError("origin and shape go together")
    if origin is None:
        return None, None
    return [float(v) for v in origin], [int(v) for v in shape]


def potential(atoms: ArrayLike, charges: ArrayLike, *, spacing: float, cutoff: float, padding: float = 0.0,
              origin: Optional[Sequence[float]] = None, shape: Optional[Sequence[int]] = None, periodic: bool = False,
              exclusion: float = 1.0, precision: str = "single", backend: str = "auto", threads: int = 0,
              progress=None) -> LatticeMap:
    """The electrostatic potential V = sum q/r (1 - r^2/C^2)^2 over the atoms within the cutoff,
    on the lattice spanning the atoms (less ``padding``) or at ``origin`` with ``shape``."""
    o, s = _placement(origin, shape)
    run = _run("potential", backend, threads, "auto", _DEFAULT_MAX_PAIRS, progress)
    return LatticeMap(_raw(_twobody.potential, run, _sample(atoms, "atoms"), _real_array(charges, "charges", 1),
                           float(spacing), float(cutoff), float(padding), o, s, bool(periodic), float(exclusion),
                           precision))


def density(points: ArrayLike, radii: ArrayLike, *, spacing: float, cutoff: float, blobbiness: float = 1.0,
            weights: Optional[ArrayLike] = None, padding: float = 0.0, origin: Optional[Sequence[float]] = None,
            shape: Optional[Sequence[int]] = None, periodic: bool = False, precision: str = "single",
            backend: str = "auto", threads: int = 0, progress=None) -> LatticeMap:
    """Blinn's blob density D = sum w exp(B (1 - r^2/R^2)) over the points within the cutoff."""
    o, s = _placement(origin, shape)
    run = _run("density", backend, threads, "auto", _DEFAULT_MAX_PAIRS, progress)
    w = None if weights is None else _real_array(weights, "weights", 1)
    return LatticeMap(_raw(_twobody.density, run, _sample(points, "points"), _real_array(radii, "radii", 1), w,
                           float(spacing), float(cutoff), float(blobbiness), float(padding), o, s, bool(periodic),
                           precision))


def gridding(k: ArrayLike, values: ArrayLike, *, grid: Union[int, Sequence[int]], width: float = 4.0,
             kernel: str = "kaiser-bessel", beta: Optional[float] = None, oversampling: float = 2.0,
             weights: Optional[ArrayLike] = None, kernel_shape: str = "separable", wrap: bool = True,
             precision: str = "single", backend: str = "auto", threads: int = 0, progress=None) -> LatticeMap:
    """Complex k-space samples (``values``, a complex array; ``k`` in grid units about the grid's
    centre) gridded with the Kaiser-Bessel window onto ``grid`` nodes per axis (complex map)."""
    if kernel != "kaiser-bessel":
        raise ConfigError(f"kernel must be 'kaiser-bessel', not {kernel!r}")
    if kernel_shape not in ("separable", "radial"):
        raise ConfigError(f"kernel_shape must be 'separable' or 'radial', not {kernel_shape!r}")
    v = np.asarray(values)
    re = np.ascontiguousarray(v.real, dtype=np.float64)
    im = np.ascontiguousarray(v.imag if np.iscomplexobj(v) else np.zeros_like(re), dtype=np.float64)
    g = [int(grid)] if np.isscalar(grid) else [int(n) for n in grid]
    run = _run("gridding", backend, threads, "auto", _DEFAULT_MAX_PAIRS, progress)
    w = None if weights is None else _real_array(weights, "weights", 1)
    return LatticeMap(_raw(_twobody.gridding, run, _sample(k, "k"), re, im, w, g, float(width),
                           0.0 if beta is None else float(beta), float(oversampling), kernel_shape == "separable",
                           bool(wrap), precision))


def forces(bodies: ArrayLike, *, cutoff: float, potential: str = "lennard-jones", epsilon: float = 1.0,
           sigma: float = 1.0, shift: bool = False, charges: Optional[ArrayLike] = None, box: BoxLike = None,
           backend: str = "auto", threads: int = 0, path: str = "auto", progress=None) -> BodyForces:
    """Per body the short-range force and energy of its pairs within ``cutoff``: Lennard-Jones
    (``epsilon``, ``sigma``, ``shift``) or ``potential="coulomb"`` with ``charges`` (the switched
    form of :func:`potential`), open or in a periodic orthorhombic ``box``. Sums are exact: the
    forces sum to 0 on the sums' grid and do not depend on threads or the bodies' order."""
    run = _run("forces", backend, threads, path, _DEFAULT_MAX_PAIRS, progress)
    q = None if charges is None else _real_array(charges, "charges", 1)
    return BodyForces(_raw(_twobody.forces, run, _sample(bodies, "bodies"), q, potential, float(cutoff), float(epsilon),
                           float(sigma), bool(shift), _box(box)))
