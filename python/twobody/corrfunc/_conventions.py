"""Corrfunc 2.5's conventions over twobody's counts, shared by the theory and mocks functions.

twobody counts each distinct pair once and never pairs a point with itself; Corrfunc's auto
counts hold every pair twice, (i, j) and (j, i), and some of its functions add the N self-pairs
(i, i) when the first bin starts at 0. Each function here turns twobody's per-bin count, weight
sum and separation sum into Corrfunc's ``npairs``, ``weightavg`` and ``ravg``-like fields.
"""

import math
import os
import time
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from .._api import _edges

ArrayLike = Any
BinsLike = Union[str, "os.PathLike[str]", Sequence[float], np.ndarray]

# Corrfunc's speed of light (utils/set_cosmo_dist.h), used for z = cz / c and the distance's c/H0.
SPEED_OF_LIGHT = 299800.0
# Corrfunc's `cosmology` presets (utils/cosmology_params.c): 1 LasDamas, 2 Planck; flat, Omega_L = 1 - Omega_m.
OMEGA_M = {1: 0.25, 2: 0.302}

# Self-pairs (i, i) at r_min = 0, as Corrfunc 2.5.3 adds them in auto mode (its *_impl.c.src):
# to the first bin with their weight (DD, xi, wp, DDtheta_mocks); to the first (r_p, pi) or
# (s, mu) bin without it (DDrppi, DDsmu: the weight lands in an unused slot); or to its unused
# bin 0, so they never show (DDrppi_mocks, DDsmu_mocks, which refuse a first edge of 0 anyway).
SELF_WITH_WEIGHT, SELF_WITHOUT_WEIGHT, SELF_NONE = "with weight", "without weight", "none"


def bin_edges(binfile: BinsLike) -> np.ndarray:
    """The bin edges of Corrfunc's ``binfile``: a bin file (one ``lo hi`` per line) or the edges,
    sorted as Corrfunc sorts them."""
    if isinstance(binfile, (str, os.PathLike)):
        if not os.path.isfile(binfile):
            raise IOError(f"Could not find file = `{os.fspath(binfile)}` containing the bins")
        return np.asarray(_edges(binfile), dtype=np.float64)
    edges = np.sort(np.asarray(binfile, dtype=np.float64).ravel())
    if edges.size < 2:
        raise TypeError(f"Input `binfile` was not a valid array (>= 2 edges). Num elements = {edges.size}")
    return edges


def columns(what: str, *arrays) -> Tuple[np.ndarray, ...]:
    """Coordinate arrays as 1-D columns of one length (float32 stays float32: twobody reads it exactly)."""
    cols = tuple(np.asarray(a).ravel() if np.ndim(a) else np.atleast_1d(a) for a in arrays)
    if len({c.size for c in cols}) != 1:
        raise ValueError(f"{what}: the coordinate arrays have different lengths {[c.size for c in cols]}")
    return cols


def _one_weight_array(w, n: int, what: str) -> Optional[np.ndarray]:
    if w is None:
        return None
    a = np.atleast_1d(np.asarray(w, dtype=np.float64))
    if a.ndim == 2:
        a = a[0]  # (n_weights, n): pair_product uses the first weight of each point
    if a.shape[-1] == 1:
        a = np.full(n, a.ravel()[0])  # one weight for every point
    if a.ndim != 1 or a.size != n:
        raise ValueError(f"{what}: expected {n} weights, not shape {np.shape(w)}")
    return a


def pair_weights(weights1, weights2, n1: int, n2: int, weight_type: Optional[str],
                 autocorr: bool) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
    """Corrfunc's utils.process_weights: weights count only with weight_type='pair_product'
    (without it they are ignored and weightavg is 0); a scalar weight applies to every point; in
    a cross count a missing side weighs 1."""
    if weight_type is None:
        return None, None
    if weight_type != "pair_product":
        raise ValueError(f"weight_type must be None or 'pair_product', not {weight_type!r}")
    w1 = _one_weight_array(weights1, n1, "weights1")
    if autocorr:
        if w1 is None:
            raise ValueError("weight_type='pair_product' needs weights1")
        return w1, None
    w2 = _one_weight_array(weights2, n2, "weights2")
    if w1 is None and w2 is None:
        raise ValueError("weight_type='pair_product' needs weights1 or weights2")
    return (np.ones(n1) if w1 is None else w1), (np.ones(n2) if w2 is None else w2)


def box_lengths(periodic: bool, boxsize) -> Optional[list]:
    """twobody's box from Corrfunc's periodic and boxsize (a scalar or one length per axis)."""
    if not periodic:
        return None
    if boxsize is None:
        raise ValueError("Must specify a boxsize if periodic=True")
    b = np.atleast_1d(np.asarray(boxsize, dtype=np.float64))
    if b.size == 1:
        b = np.repeat(b, 3)
    if b.size != 3:
        raise ValueError(f"boxsize must be a scalar or a 3-tuple, not {boxsize!r}")
    if np.any(b <= 0):
        raise NotImplementedError("boxsize <= 0 in one dimension (Corrfunc: a period taken from the particles' "
                                  "extent, or no period in that dimension) is not supported; "
                                  "give every side length, or periodic=False")
    return [float(v) for v in b]


def wrapped(cols: Tuple[np.ndarray, ...], box: Optional[list]) -> Tuple[np.ndarray, ...]:
    """Points outside [0, L) moved into the box by whole periods (twobody refuses them; Corrfunc
    wraps pairs by whole periods too). Points already inside are left bit for bit as given."""
    if box is None:
        return cols
    out = []
    for c, L in zip(cols, box):
        if c.size and (c.min() < 0 or c.max() >= L):
            c = np.asarray(c, dtype=np.float64)
            c = np.where((c < 0) | (c >= L), c - L * np.floor(c / L), c)
            c = np.where(c >= L, c - L, c)  # c - L*floor(c/L) may round up to L
        out.append(c)
    return tuple(out)


class Tally:
    """One statistic's per-bin sums as twobody counts them: distinct pairs in auto mode, each (i, j)
    once in a cross count; ``wsum`` the sum of w_i w_j, ``ssum`` the sum of separations (unweighted,
    as Corrfunc's ravg), each None when not asked for."""

    def __init__(self, npairs, wsum=None, ssum=None, seconds=0.0):
        self.npairs, self.wsum, self.ssum, self.seconds = npairs, wsum, ssum, seconds


def tally(run: Callable[..., Any], weighted: bool, need_avg: bool, avg_column: str) -> Tally:
    """Counts from ``run(weighted=, ravg=)`` (a twobody call). twobody's mean separation is
    weighted by w_i w_j when the count is; Corrfunc's is not, so a weighted count with averages
    takes a second, unweighted run for them."""
    t0 = time.perf_counter()
    r = run(weighted=weighted, ravg=need_avg and not weighted)
    n = np.asarray(r.npairs, dtype=np.uint64)
    wsum = np.asarray(r.wnpairs, dtype=np.float64) if weighted else None
    ssum = None
    if need_avg:
        ra = run(weighted=False, ravg=True) if weighted else r
        ssum = np.where(n > 0, np.nan_to_num(np.asarray(ra[avg_column], dtype=np.float64)) * n, 0.0)
    return Tally(n, wsum, ssum, time.perf_counter() - t0)


def ordered(t: Tally, autocorr: bool, self_pairs: str, first_edge: float, self_index: int, n_points: int,
            self_weight: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Corrfunc's npairs, weightavg and average separation from a Tally: auto counts doubled, the
    self-pairs added as ``self_pairs`` says when the first edge is <= 0, the averages over the
    ordered pairs (0 in an empty bin, and 0 when not asked for, as Corrfunc)."""
    factor = 2 if autocorr else 1
    npairs = t.npairs * np.uint64(factor)
    wsum = None if t.wsum is None else t.wsum * factor
    if autocorr and first_edge <= 0 and self_pairs != SELF_NONE:
        npairs[self_index] += np.uint64(n_points)
        if wsum is not None and self_pairs == SELF_WITH_WEIGHT:
            wsum[self_index] += self_weight
    nz = npairs > 0
    denominator = np.where(nz, npairs, 1).astype(np.float64)
    weightavg = np.zeros(npairs.size) if wsum is None else np.where(nz, wsum / denominator, 0.0)
    avg = np.zeros(npairs.size) if t.ssum is None else np.where(nz, t.ssum * factor / denominator, 0.0)
    return npairs, weightavg, avg


def self_weight_sum(w: Optional[np.ndarray]) -> float:
    """The self-pairs' weight: sum of w_i w_i, in order (Corrfunc adds them one by one)."""
    return 0.0 if w is None else float(math.fsum(w * w))


def structured(dtype: np.dtype, **fields) -> np.ndarray:
    out = np.zeros(len(next(iter(fields.values()))), dtype=dtype)
    for name, values in fields.items():
        out[name] = values
    return out


def returned(results: np.ndarray, c_api_timer: bool, seconds: float):
    """Corrfunc's return: the results, or (results, api_time) with c_api_timer (seconds)."""
    return (results, seconds) if c_api_timer else results


# ---- survey coordinates ------------------------------------------------------------------------

_GL_X, _GL_W = np.polynomial.legendre.leggauss(20)
_GL_PIECE = 0.25  # z per Gauss-Legendre panel: the integrand's nearest pole is ~1 away, so 20 nodes are exact


def comoving_distance(cz: np.ndarray, omega_m: float, speed_of_light: float = SPEED_OF_LIGHT) -> np.ndarray:
    """Comoving distance in Mpc/h of recession velocities cz (km/s) in a flat LCDM cosmology:
    (c/100) int_0^{cz/c} dz / sqrt(Omega_m (1+z)^3 + 1 - Omega_m), by 20-point Gauss-Legendre on
    panels of 0.25 in z (accurate to rounding; Corrfunc tabulates the integral every 1e-4 in z and
    interpolates linearly, within 2e-6 Mpc/h of this)."""
    z = np.asarray(cz, dtype=np.float64) / speed_of_light
    if z.size == 0:
        return z.copy()
    panels = max(1, int(math.ceil(float(z.max()) / _GL_PIECE)))
    out = np.empty_like(z)
    chunk = max(1, 2_000_000 // (panels * _GL_X.size))
    for s in range(0, z.size, chunk):
        zc = z[s:s + chunk]
        h = zc / panels  # each point's own panels: [k h, (k+1) h]
        total = np.zeros_like(zc)
        for k in range(panels):
            mid = (k + 0.5) * h
            zz = mid[:, None] + 0.5 * h[:, None] * _GL_X[None, :]
            a = 1.0 + zz
            total += 0.5 * h * ((1.0 / np.sqrt(omega_m * a * a * a + (1.0 - omega_m))) @ _GL_W)
        out[s:s + chunk] = total
    return speed_of_light / 100.0 * out


def check_ra_dec(ra: np.ndarray, dec: np.ndarray, what: str) -> None:
    if ra.size and not (np.all(np.isfinite(ra)) and np.all(np.isfinite(dec))):
        raise ValueError(f"{what}: RA and DEC must be finite")
    if dec.size and (dec.min() < -90 or dec.max() > 90):
        raise ValueError(f"{what}: DEC must lie in [-90, 90] degrees")


def sky_to_cartesian(ra, dec, cz, cosmology: int, is_comoving_dist: bool, what: str):
    """(RA, DEC, CZ) to Cartesian (x, y, z) about the observer, as Corrfunc's *_mocks: CZ is cz
    in km/s (or, when all of it is below 10, the redshift z, times c), or with is_comoving_dist
    the comoving distance in Mpc/h; x = d cos(DEC) cos(RA), y = d cos(DEC) sin(RA), z = d sin(DEC)."""
    ra, dec, cz = (np.asarray(a, dtype=np.float64).ravel() for a in (ra, dec, cz))
    if not (ra.size == dec.size == cz.size):
        raise ValueError(f"{what}: RA, DEC and CZ have different lengths {ra.size}, {dec.size}, {cz.size}")
    check_ra_dec(ra, dec, what)
    if not np.all(np.isfinite(cz)) or (cz.size and cz.min() < 0):
        raise ValueError(f"{what}: CZ must be finite and >= 0")
    if is_comoving_dist:
        d = cz
    else:
        if cosmology not in OMEGA_M:
            raise ValueError(f"cosmology must be 1 (LasDamas) or 2 (Planck), not {cosmology!r}")
        if cz.size and cz.max() < 10.0:
            cz = cz * SPEED_OF_LIGHT  # Corrfunc takes CZ below 10 everywhere for redshifts
        d = comoving_distance(cz, OMEGA_M[cosmology])
    r_dec, r_ra = np.radians(dec), np.radians(ra)
    cos_dec = np.cos(r_dec)
    return (d * cos_dec * np.cos(r_ra), d * cos_dec * np.sin(r_ra), d * np.sin(r_dec))


def count(statistic: Callable[..., Any], data, data2, weights1, weights2, need_avg: bool, avg_column: str,
          nthreads: int, verbose: bool, *args, **kwargs) -> Tally:
    """A twobody statistic (``paircount``, ``rppi``, ``smu``, ``angular``) as a Tally: auto when
    data2 is None, weighted when weights1 is not None."""

    def run(weighted, ravg):
        return statistic(data, *args, data2=data2, weights=weights1 if weighted else None,
                         weights2=weights2 if weighted else None, threads=max(0, int(nthreads)),
                         progress=bool(verbose), ravg=ravg, **kwargs)

    return tally(run, weights1 is not None, need_avg, avg_column)


def _require_second(what: str, *arrays) -> None:
    if any(a is None for a in arrays):
        raise ValueError(f"Must pass valid arrays for {what} for computing cross-correlation")


def second_set(autocorr: bool, what: str, *arrays):
    """The second catalogue's columns of a cross count (None in auto mode, as Corrfunc ignores it)."""
    if autocorr:
        return None
    _require_second(what, *arrays)
    return columns(what, *arrays)


def weights_of(data, data2, weights1, weights2, weight_type, autocorr) -> Tuple[Optional[np.ndarray], ...]:
    """pair_weights for the catalogues of a count (data2 None in auto mode)."""
    return pair_weights(weights1, weights2, data[0].size, 0 if data2 is None else data2[0].size, weight_type,
                        bool(autocorr))


def box_catalogues(autocorr, box, X1, Y1, Z1, X2, Y2, Z2, weights1, weights2, weight_type):
    """The theory functions' catalogues, wrapped into the box (data2 None in auto mode), and their
    pair weights: (data, data2, w1, w2)."""
    data = wrapped(columns("X1/Y1/Z1", X1, Y1, Z1), box)
    data2 = second_set(autocorr, "X2/Y2/Z2", X2, Y2, Z2)
    data2 = None if data2 is None else wrapped(data2, box)
    return (data, data2) + weights_of(data, data2, weights1, weights2, weight_type, autocorr)


def mock_catalogues(autocorr, RA1, DEC1, CZ1, RA2, DEC2, CZ2, cosmology, is_comoving_dist, weights1, weights2,
                    weight_type):
    """The 3-D mocks' catalogues as Cartesian positions about the observer (data2 None in auto
    mode), and their pair weights: (data, data2, w1, w2)."""
    data = sky_to_cartesian(RA1, DEC1, CZ1, cosmology, is_comoving_dist, "RA1/DEC1/CZ1")
    data2 = None
    if not autocorr:
        _require_second("RA2/DEC2/CZ2", RA2, DEC2, CZ2)
        data2 = sky_to_cartesian(RA2, DEC2, CZ2, cosmology, is_comoving_dist, "RA2/DEC2/CZ2")
    return (data, data2) + weights_of(data, data2, weights1, weights2, weight_type, autocorr)


def analytic_estimates(npairs, weightavg, weighted: bool, edges, prefac: float, weight_sqr_sum: float,
                       volume: Callable[[float, float], float], scale: float = 1.0) -> np.ndarray:
    """Corrfunc's estimate of wp and xi from its analytic RR, operation for operation: per bin
    (DD / RR - 1) * scale, DD the pairs times their mean weight, RR = prefac * volume(rlow, rupp)
    plus the self-pairs' weight in a bin from 0, and -2 * scale in a bin of no volume (scale
    2 pimax for wp, 1 for xi)."""
    values = np.empty(npairs.size)
    for i in range(npairs.size):
        weight0 = float(npairs[i])
        if weighted:
            weight0 *= weightavg[i]
        rlow, rupp = edges[i], edges[i + 1]
        vol = volume(rlow, rupp)
        if vol > 0.0:
            weightrandom = prefac * vol
            if rlow <= 0.0:
                weightrandom += weight_sqr_sum
            values[i] = (weight0 / weightrandom - 1.0) * scale
        else:
            values[i] = -2.0 * scale
    return values


def check_mu(mu_max, nmu_bins) -> Tuple[float, int]:
    if not np.isscalar(mu_max):
        raise TypeError(f"The parameter `mu_max` = {mu_max}, has size = {np.size(mu_max)}. "
                        "The code is expecting a scalar quantity (and not a list, array)")
    if mu_max <= 0.0 or mu_max > 1.0:
        raise ValueError(f"The parameter `mu_max` = {mu_max}, is the max. of cosine of an angle and should be "
                         "within (0.0, 1.0]")
    if int(nmu_bins) < 1:
        raise ValueError(f"nmu_bins must be at least 1, not {nmu_bins}")
    return float(mu_max), int(nmu_bins)


def pi_bins(pimax) -> int:
    """Corrfunc's number of pi bins: int(pimax), each pimax / int(pimax) wide."""
    n = int(pimax)
    if n < 1:
        raise ValueError(f"pimax must be at least 1 (Corrfunc makes int(pimax) bins of pi), not {pimax}")
    return n


def inner_upper_edges(inner_max: float, n_inner: int, n_outer: int) -> np.ndarray:
    """Corrfunc's pimax / mu_max field of 2-D counts: (j + 1) * (inner_max / n_inner) per inner bin j."""
    step = inner_max / n_inner
    return np.tile(np.arange(1, n_inner + 1, dtype=np.float64) * step, n_outer)


def box_side(boxsize) -> float:
    """The cube's side of Corrfunc's wp and xi (a scalar there)."""
    if np.size(boxsize) != 1:
        raise TypeError(f"boxsize must be a scalar for wp and xi, not {boxsize!r}")
    L = float(np.asarray(boxsize, dtype=np.float64).ravel()[0])
    if not L > 0:
        raise ValueError(f"boxsize must be positive, not {boxsize!r}")
    return L


def analytic_random_terms(w: Optional[np.ndarray], n_points: int, boxsize: float) -> Tuple[float, float]:
    """Corrfunc's RR of wp and xi (countpairs_wp_impl.c.src, countpairs_xi_impl.c.src): the
    density prefactor sum_w (sum_w - sum_w / N) / L^3 of random points of the mean weight, and the
    self-pairs' weight added to a bin that starts at 0. Corrfunc 2.5.3 starts the latter at N and
    adds sum w_i^2 to it when weighted (N + sum w^2, where sum w^2 is meant); kept, so that the
    results are Corrfunc's."""
    weightsum, weight_sqr_sum = float(n_points), float(n_points)
    if w is not None:
        weightsum = 0.0
        for v in w.tolist():  # in order, as Corrfunc's loop
            weightsum += v
            weight_sqr_sum += v * v
    prefac = weightsum * (weightsum - weightsum / n_points) / (boxsize * boxsize * boxsize)
    return prefac, weight_sqr_sum
