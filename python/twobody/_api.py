"""The statistics over NumPy arrays: one function per command of the CLI, same names and meanings.

Points are an ``(n, d)`` array (one point a row; any order, float32 or float64, integers are
converted), a tuple of 1-D columns such as ``(x, y, z)`` or ``(ra, dec)``, or a :class:`Catalogue`
carrying weights and jackknife region labels with them. Bins are an array of edges or the path of
a Corrfunc bin file; :func:`linear_bins` and :func:`log_bins` give the CLI's edges of ``--rmin
--rmax --nbins [--log]`` bit for bit. Vectors of any dimension (:func:`join`, :func:`knn`) are an
``(n, d)`` array, float16, float32 or float64.

Common keywords: ``backend`` ('auto', 'cpu', 'cuda', or 'hybrid': the CPU and the GPU sharing one
run, docs/cli.md#cpu-and-gpu-together---backend-hybrid), ``devices`` (None: one GPU; 'all' or a list
such as [0, 2]: the pairs split over those GPUs, the same bits as one), ``threads`` (0: all), ``path`` (traversal:
'auto', 'brute', 'grid'), ``max_pairs``, ``progress`` (None: a tqdm bar for a run longer than a
second when tqdm is installed; True, False, or a callable taking the fraction done). Ctrl-C stops
a run cleanly (KeyboardInterrupt) between two progress steps.
"""

import json
import os
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _twobody
from ._errors import ConfigError, InputError
from ._joins import JoinCounts, JoinCsr, JoinFile, JoinPairs, JoinTotal, KnnResult
from ._progress import make_progress
from ._results import Result

ArrayLike = Any
Bins = Union[str, "os.PathLike[str]", Sequence[float], np.ndarray]
# A periodic box: one side (a cube), one length a coordinate, and for 3-D points a triclinic cell
# as MDAnalysis' dimensions [a, b, c, alpha, beta, gamma] (degrees) or a 3x3 matrix of cell vectors.
BoxLike = Union[None, float, Sequence[float], np.ndarray]


@dataclass
class Catalogue:
    """Points with their per-point weights and jackknife region labels (any non-negative
    integers), for the arguments that take several catalogues (random catalogues)."""

    points: ArrayLike
    weights: Optional[ArrayLike] = None
    regions: Optional[ArrayLike] = None


def linear_bins(lo: float, hi: float, nbins: int) -> np.ndarray:
    """nbins equal bins from lo to hi: the CLI's --rmin lo --rmax hi --nbins n edges."""
    return np.asarray(_twobody.linear_edges(lo, hi, nbins))


def log_bins(lo: float, hi: float, nbins: int) -> np.ndarray:
    """nbins logarithmic bins from lo to hi: the CLI's --rmin lo --rmax hi --nbins n --log edges."""
    return np.asarray(_twobody.log_edges(lo, hi, nbins))


# ---- inputs -----------------------------------------------------------------------------------

def _real_array(x, what, ndim=None):
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        a = a.astype(np.float64)  # integers: exact in float64 below 2^53
    elif a.dtype.kind == "f":
        if a.dtype.itemsize not in (4, 8):
            a = a.astype(np.float64)  # float16, long double
        elif not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
    else:
        raise InputError(f"{what}: expected real numbers (float32 or float64), not dtype {a.dtype}")
    if ndim is not None and a.ndim != ndim:
        raise InputError(f"{what}: expected a {ndim}-D array, not shape {a.shape}")
    return a


def _columns(points, what):
    """1-D column views of the points: an (n, d) array's columns are strided views, not copies."""
    if isinstance(points, tuple):
        cols = [_real_array(c, f"{what} column {k + 1}", 1) for k, c in enumerate(points)]
    else:
        a = _real_array(points, what)
        if a.ndim == 1:
            cols = [a]
        elif a.ndim == 2:
            cols = [a[:, k] for k in range(a.shape[1])]
        else:
            raise InputError(f"{what}: expected an (n, d) array, not shape {a.shape}")
    if not cols:
        raise InputError(f"{what}: no coordinates")
    return cols


def _labels(regions, what):
    r = np.asarray(regions)
    if r.dtype.kind not in "iu" or r.ndim != 1:
        raise InputError(f"{what}: region labels must be a 1-D array of integers")
    if r.size and (r.min() < 0 or r.max() > np.iinfo(np.int32).max):
        raise InputError(f"{what}: region labels must be non-negative 32-bit integers")
    return np.ascontiguousarray(r, dtype=np.int32)


def _sample(points, what, weights=None, regions=None):
    if isinstance(points, Catalogue):
        if weights is not None or regions is not None:
            raise ConfigError(f"{what}: give weights and regions in the Catalogue or as keywords, not both")
        points, weights, regions = points.points, points.weights, points.regions
    cols = _columns(points, what)
    w = None if weights is None else _real_array(weights, f"{what} weights", 1)
    lab = None if regions is None else _labels(regions, f"{what} regions")
    return (cols, w, lab)


def _maybe_sample(points, what, weights=None):
    return None if points is None else _sample(points, what, weights)


def _is_weighted(points, weights):
    return weights is not None or (isinstance(points, Catalogue) and points.weights is not None)


def _catalogues(x, what):
    if x is None:
        return []
    if isinstance(x, list):
        return [_sample(c, f"{what} {k + 1}" if len(x) > 1 else what) for k, c in enumerate(x)]
    return [_sample(x, what)]


def _edges(bins, what="bins"):
    if isinstance(bins, (str, os.PathLike)):
        return list(_twobody.edges_from_file(os.fspath(bins)))
    e = _real_array(bins, what, 1)
    return [float(v) for v in e]


def _box(box):
    if box is None:
        return None
    b = np.atleast_1d(_real_array(box, "box"))
    # A 3x3 cell matrix (rows a, b, c) travels as its 9 entries row by row; [a, b, c, alpha, beta,
    # gamma] (MDAnalysis' dimensions) as 6 values. The engine resolves them by the data's dimension.
    if b.shape == (3, 3):
        b = b.reshape(9)
    if b.ndim != 1:
        raise InputError(f"box: expected one length, one per coordinate, [a, b, c, alpha, beta, gamma] or a 3x3 "
                         f"cell matrix, not shape {b.shape}")
    return [float(v) for v in b]


def _devices(devices):
    """None, 'all' or a sequence of device indices, as the engine's RunOptions::devices takes them."""
    if devices is None or (isinstance(devices, str) and devices == "all"):
        return devices
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        devices = [devices]
    if isinstance(devices, str) or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                           for d in np.atleast_1d(np.asarray(devices, dtype=object))):
        raise ConfigError(f"devices must be None, 'all' or a list of device indices such as [0, 2], not {devices!r}")
    return [int(d) for d in devices]


def _run(statistic, backend, threads, path, max_pairs, progress, ravg=False, devices=None):
    if not isinstance(backend, str):
        raise ConfigError(f"backend must be 'auto', 'cpu', 'cuda' or 'hybrid', not {backend!r}")
    return {"backend": backend, "threads": int(threads), "path": path, "max_pairs": int(max_pairs),
            "ravg": bool(ravg), "progress": make_progress(progress, statistic), "devices": _devices(devices)}


def _raw(fn, run, *args):
    try:
        return fn(*args, run=run)
    finally:
        close = getattr(run["progress"], "close", None)
        if close is not None:
            close()


def _call(statistic, fn, run, *args, plot=None):
    return Result(statistic, _raw(fn, run, *args), plot)


def _jackknife(jackknife, regions, estimator, seed=1, about_origin=False):
    if jackknife is not None and (isinstance(jackknife, bool) or not isinstance(jackknife, (int, np.integer))):
        raise ConfigError(f"jackknife is the number of regions, not {jackknife!r}")
    return {"regions": int(jackknife or 0), "use_labels": regions is not None, "estimator": estimator,
            "seed": int(seed), "about_origin": bool(about_origin)}


_DEFAULT_MAX_PAIRS = 1 << 31


def _plot_1d(y, ylabel, xlabel="r", yerr=None, log_y=False, varxi=None, prefix=""):
    return {"y": y, "ylabel": ylabel, "xlabel": xlabel, "yerr": yerr, "log_y": log_y, "varxi": varxi,
            "prefix": prefix}


# ---- the statistics ---------------------------------------------------------------------------

def sdh(data: ArrayLike, bins: Optional[Bins] = None, *, nbins: int = 256, backend: str = "auto", devices=None,
        threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None,
        ravg: bool = False) -> Result:
    """Spatial distance histogram of one point set: distinct pairs per distance bin. Without
    bins, nbins equal bins from 0 to just above the data's bounding-box diagonal (every pair)."""
    run = _run("sdh", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    edges = None if bins is None else _edges(bins)
    return _call("sdh", _twobody.sdh, run, _sample(data, "data"), edges, int(nbins),
                 plot=_plot_1d("npairs", "pairs", log_y=True))


def paircount(data: ArrayLike, bins: Bins, *, data2: Optional[ArrayLike] = None, box: BoxLike = None,
              weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None,
              backend: str = "auto", devices=None, threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS,
              progress=None, ravg: bool = False) -> Result:
    """DD(r): pair counts per bin, auto (distinct pairs) or cross (data x data2), in open space
    or a periodic box (minimum image); with weights also wnpairs = sum of w_i w_j."""
    run = _run("paircount", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("paircount", _twobody.paircount, run, _sample(data, "data", weights),
                 _maybe_sample(data2, "data2", weights2), _edges(bins), _box(box), _is_weighted(data, weights),
                 plot=_plot_1d("npairs", "DD(r)", log_y=True))


def rdf(data: ArrayLike, bins: Bins, box: BoxLike, *, data2: Optional[ArrayLike] = None, backend: str = "auto", devices=None,
        threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None,
        ravg: bool = False) -> Result:
    """Radial distribution function g(r) in a periodic box: columns npairs, expected (the ideal
    gas's count in the shell) and g_r."""
    if box is None:
        raise ConfigError("rdf needs the periodic box")
    run = _run("rdf", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("rdf", _twobody.rdf, run, _sample(data, "data"), _maybe_sample(data2, "data2"), _edges(bins),
                 _box(box), plot=_plot_1d("g_r", "g(r)"))


def angular(radec: ArrayLike, bins: Bins, *, data2: Optional[ArrayLike] = None, weights: Optional[ArrayLike] = None,
            weights2: Optional[ArrayLike] = None, backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
            max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """DD(theta) on the sphere from (RA, Dec) in degrees; theta bins in degrees."""
    run = _run("angular", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("angular", _twobody.angular, run, _sample(radec, "data", weights),
                 _maybe_sample(data2, "data2", weights2), _edges(bins, "bins (degrees)"),
                 _is_weighted(radec, weights), plot=_plot_1d("npairs", "DD(θ)", "θ (degrees)", log_y=True))


def _correlation(statistic, space, data, bins, randoms, data2, randoms2, box, weights, regions, jackknife, estimator,
                 seed, about_origin, run):
    jk = _jackknife(jackknife, regions, estimator, seed, about_origin)
    sky = space == "sky"
    main = "w" if sky else "xi"
    plot = _plot_1d(main + "_" + estimator.replace("-", "_"), "w(θ)" if sky else "ξ(r)",
                    "θ (degrees)" if sky else "r", yerr=main + "_jk_sigma")
    result = _call(statistic, _twobody.correlation, run, space, _sample_with_regions(data, weights, regions),
                   _catalogues(randoms, "randoms"), _maybe_sample(data2, "data2"), _catalogues(randoms2, "randoms2"),
                   _edges(bins, "bins (degrees)" if sky else "bins"), _box(box), _is_weighted(data, weights),
                   jk, plot=plot)
    if main not in result.columns and plot["y"] not in result.columns:
        plot["y"] = main  # the analytic RR of a box: one column xi
    return result


def _sample_with_regions(data, weights, regions):
    return _sample(data, "data", weights, regions)


def xi(data: ArrayLike, bins: Bins, *, randoms=None, box: BoxLike = None, weights: Optional[ArrayLike] = None,
       regions: Optional[ArrayLike] = None, jackknife: Optional[int] = None, estimator: str = "landy-szalay",
       data2=None, randoms2=None, seed: int = 1, about_origin: bool = False, backend: str = "auto", devices=None, threads: int = 0,
       path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """xi(r) from data and random catalogues (one, or a list; each an array or a Catalogue):
    columns npairs, dr, rr and the four estimators xi_natural, xi_davis_peebles, xi_hamilton,
    xi_landy_szalay; in a periodic box without randoms the analytic RR and one column xi. Jackknife
    errors with ``jackknife=N`` regions (or the data's own ``regions`` labels): xi_jk_mean,
    xi_jk_sigma and ``r.covariance`` of ``estimator``. Cross-correlation with data2 (and randoms2)."""
    run = _run("xi", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _correlation("xi", "box" if box is not None else "open", data, bins, randoms, data2, randoms2, box,
                        weights, regions, jackknife, estimator, seed, about_origin, run)


def wtheta(radec: ArrayLike, bins: Bins, *, randoms, weights: Optional[ArrayLike] = None,
           regions: Optional[ArrayLike] = None, jackknife: Optional[int] = None, estimator: str = "landy-szalay",
           data2=None, randoms2=None, seed: int = 1, backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
           max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """w(theta) on the sky from (RA, Dec) in degrees and random catalogues: columns npairs, dr,
    rr, w_natural, w_davis_peebles, w_hamilton, w_landy_szalay (and w_jk_mean, w_jk_sigma with a
    jackknife)."""
    if randoms is None:
        raise ConfigError("wtheta needs random catalogues (randoms=...)")
    run = _run("wtheta", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _correlation("wtheta", "sky", radec, bins, randoms, data2, randoms2, None, weights, regions, jackknife,
                        estimator, seed, False, run)


def _plot_2d(kind, y, ylabel):
    rppi = kind == "rppi"
    return {"kind": "2d", "outer": "rp" if rppi else "s", "inner": "pi" if rppi else "mu", "y": y,
            "ylabel": ylabel, "xlabel": "r_p" if rppi else "s", "inner_label": "π" if rppi else "μ"}


def rppi(data: ArrayLike, bins: Bins, pimax: float, *, npibins: int = 0, data2: Optional[ArrayLike] = None,
         box: BoxLike = None, weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None,
         line_of_sight: str = "z", backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
         max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """DD(r_p, pi) about the z axis (Corrfunc's DDrppi; line_of_sight='midpoint': DDrppi_mocks
    on Cartesian mocks): one row per (r_p, pi) bin, pi fastest. npibins=0: floor(pimax) bins."""
    run = _run("rppi", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("rppi", _twobody.paircount_2d, run, "rppi", _sample(data, "data", weights),
                 _maybe_sample(data2, "data2", weights2), _edges(bins), float(pimax), int(npibins), line_of_sight,
                 _box(box), _is_weighted(data, weights), plot=_plot_2d("rppi", "npairs", "DD(r_p, π)"))


def smu(data: ArrayLike, bins: Bins, nmu_bins: int, *, mu_max: float = 1.0, data2: Optional[ArrayLike] = None,
        box: BoxLike = None, weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None,
        line_of_sight: str = "z", backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
        max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """DD(s, mu) about the z axis (Corrfunc's DDsmu): one row per (s, mu) bin, mu fastest."""
    run = _run("smu", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("smu", _twobody.paircount_2d, run, "smu", _sample(data, "data", weights),
                 _maybe_sample(data2, "data2", weights2), _edges(bins), float(mu_max), int(nmu_bins), line_of_sight,
                 _box(box), _is_weighted(data, weights), plot=_plot_2d("smu", "npairs", "DD(s, μ)"))


def _correlation_2d(statistic, kind, per_outer, data, bins, inner_max, n_inner, randoms, data2, randoms2, box,
                    weights, regions, jackknife, estimator, seed, line_of_sight, run, plot):
    jk = _jackknife(jackknife, regions, estimator, seed)
    return _call(statistic, _twobody.correlation_2d, run, kind, per_outer, _sample(data, "data", weights, regions),
                 _catalogues(randoms, "randoms"), _maybe_sample(data2, "data2"), _catalogues(randoms2, "randoms2"),
                 _edges(bins), float(inner_max), int(n_inner), line_of_sight, _box(box), _is_weighted(data, weights),
                 jk, plot=plot)


def xi_rppi(data: ArrayLike, bins: Bins, pimax: float, *, npibins: int = 0, randoms=None, box: BoxLike = None,
            weights: Optional[ArrayLike] = None, regions: Optional[ArrayLike] = None,
            jackknife: Optional[int] = None, estimator: str = "landy-szalay", data2=None, randoms2=None,
            line_of_sight: str = "z", seed: int = 1, backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
            max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """xi(r_p, pi) from random catalogues, or with the analytic RR of a periodic box: one row per
    flat bin (pi fastest), columns npairs, [dr,] rr, xi (of ``estimator``)."""
    run = _run("xi-rppi", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _correlation_2d("xi-rppi", "rppi", False, data, bins, pimax, npibins, randoms, data2, randoms2, box,
                           weights, regions, jackknife, estimator, seed, line_of_sight, run,
                           _plot_2d("rppi", "xi", "ξ(r_p, π)"))


def wp(data: ArrayLike, bins: Bins, pimax: float, *, npibins: int = 0, randoms=None, box: BoxLike = None,
       weights: Optional[ArrayLike] = None, regions: Optional[ArrayLike] = None, jackknife: Optional[int] = None,
       estimator: str = "landy-szalay", data2=None, randoms2=None, line_of_sight: str = "z", seed: int = 1,
       backend: str = "auto", devices=None, threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS,
       progress=None, ravg: bool = False) -> Result:
    """The projected correlation function w_p(r_p) = 2 sum_pi xi(r_p, pi) dpi: one row per r_p
    bin, columns rp_lo, rp_hi, wp (and wp_jk_mean, wp_jk_sigma with a jackknife)."""
    run = _run("wp", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _correlation_2d("wp", "rppi", True, data, bins, pimax, npibins, randoms, data2, randoms2, box, weights,
                           regions, jackknife, estimator, seed, line_of_sight, run,
                           _plot_1d("wp", "w_p(r_p)", "r_p", yerr="wp_jk_sigma", prefix="rp_"))


def xi_smu(data: ArrayLike, bins: Bins, nmu_bins: int, *, mu_max: float = 1.0, multipoles: bool = False,
           randoms=None, box: BoxLike = None, weights: Optional[ArrayLike] = None,
           regions: Optional[ArrayLike] = None, jackknife: Optional[int] = None, estimator: str = "landy-szalay",
           data2=None, randoms2=None, line_of_sight: str = "z", seed: int = 1, backend: str = "auto", devices=None,
           threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None,
           ravg: bool = False) -> Result:
    """xi(s, mu) per flat bin (mu fastest), or with ``multipoles=True`` one row per s bin with
    xi0, xi2, xi4 (midpoint rule in mu)."""
    run = _run("xi-smu", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    plot = (_plot_1d("xi0", "ξ_0(s)", "s", yerr="xi0_jk_sigma", prefix="s_") if multipoles
            else _plot_2d("smu", "xi", "ξ(s, μ)"))
    return _correlation_2d("xi-smu", "smu", multipoles, data, bins, mu_max, nmu_bins, randoms, data2, randoms2, box,
                           weights, regions, jackknife, estimator, seed, line_of_sight, run, plot)


def _space(sky, box):
    if sky and box is not None:
        raise ConfigError("sky and box exclude each other")
    return "sky" if sky else ("box" if box is not None else "open")


def kk(data: ArrayLike, kappa: ArrayLike, bins: Bins, *, data2: Optional[ArrayLike] = None,
       kappa2: Optional[ArrayLike] = None, box: BoxLike = None, sky: bool = False,
       weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None, backend: str = "auto", devices=None,
       threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None,
       ravg: bool = False) -> Result:
    """Scalar-field correlation xi_kk = <kappa_i kappa_j> per bin (TreeCorr's KK), auto or cross
    (data2 with kappa2): columns npairs, weight, xi_kk, varxi. ``sky``: (RA, Dec), bins in degrees."""
    if data2 is not None and kappa2 is None:
        raise ConfigError("kk of two catalogues needs kappa2")
    run = _run("kk", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("kk", _twobody.kk, run, _sample(data, "data", weights), _real_array(kappa, "kappa", 1),
                 _maybe_sample(data2, "data2", weights2), None if kappa2 is None else _real_array(kappa2, "kappa2", 1),
                 _edges(bins), _space(sky, box), _box(box), _is_weighted(data, weights),
                 plot=_plot_1d("xi_kk", "ξ_κκ", "θ (degrees)" if sky else "r", varxi="varxi"))


def nk(data: ArrayLike, field: ArrayLike, kappa: ArrayLike, bins: Bins, *, randoms: Optional[ArrayLike] = None,
       box: BoxLike = None, sky: bool = False, weights: Optional[ArrayLike] = None,
       field_weights: Optional[ArrayLike] = None, backend: str = "auto", devices=None, threads: int = 0, path: str = "auto",
       max_pairs: int = _DEFAULT_MAX_PAIRS, progress=None, ravg: bool = False) -> Result:
    """Count-field correlation xi_nk = <kappa_j> around the points of data (TreeCorr's NK), the
    field's points with their kappa; with randoms, TreeCorr's compensated NK - RK."""
    run = _run("nk", backend, threads, path, max_pairs, progress, ravg, devices=devices)
    return _call("nk", _twobody.nk, run, _sample(data, "data", weights), _sample(field, "field", field_weights),
                 _real_array(kappa, "kappa", 1), _maybe_sample(randoms, "randoms"), _edges(bins), _space(sky, box),
                 _box(box), _is_weighted(data, weights),
                 plot=_plot_1d("xi_nk", "ξ_nκ", "θ (degrees)" if sky else "r", varxi="varxi"))


def neighbours(data: ArrayLike, rmax: float, *, rmin: float = 0.0, data2: Optional[ArrayLike] = None,
               box: BoxLike = None, weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None,
               backend: str = "auto", devices=None, threads: int = 0, path: str = "auto", max_pairs: int = _DEFAULT_MAX_PAIRS,
               progress=None) -> Result:
    """Per point, its partners at a distance in [rmin, rmax) (a point is never its own):
    columns set (1 or 2), index, count, [wsum = the partners' weights]."""
    run = _run("neighbours", backend, threads, path, max_pairs, progress, devices=devices)
    return _call("neighbours", _twobody.neighbours, run, _sample(data, "data", weights),
                 _maybe_sample(data2, "data2", weights2), float(rmin), float(rmax), _box(box),
                 _is_weighted(data, weights), plot={"kind": "hist", "y": "count", "ylabel": "neighbours"})


def matrix(data: ArrayLike, *, data2: Optional[ArrayLike] = None, kernel: Optional[str] = None, p: float = 2.0,
           out=None, dtype: str = "float64", sky: bool = False, box: BoxLike = None, backend: str = "auto",
           summation: str = "auto", devices=None, threads: int = 0, progress=None):
    """The dense matrix of every pair's value, rows = data, columns = data2 (or data).

    Without ``kernel``: points of 1 to 8 dimensions, every pair's distance (open or periodic) or,
    with ``sky``, angle in degrees from (RA, Dec); returns a :class:`Result` with ``r.matrix``.

    With ``kernel``: vectors of any dimension, ``data`` an (n, d) array (float16/32/64 read in
    place, without a copy, where its rows are contiguous), and ``kernel`` a name ('l2',
    'sqeuclidean', 'lp' with ``p`` >= 1, 'l1'/'cityblock', 'chebyshev', 'cosine', 'dot',
    'pearson', 'spearman') or a pair expression over a and b (docs/expressions.md; ``p`` is its
    parameter p). Each entry is the kernel's expression evaluated by the float64 rule
    (docs/matrices.md): SciPy's ``cdist`` to ~1e-15 relative. Returns the (n1, n2) ndarray
    (``dtype='float32'``: each value rounded once), or with ``out='m.npy'`` (or '.h5') writes the
    file a block of rows at a time, never holding the matrix, and returns
    ``np.load(out, mmap_mode="r")`` (other files: the path). A matrix beyond
    TWOBODY_MATRIX_HOST_BYTES (default half the memory) without ``out`` raises
    :class:`ResourceError`. ``backend='cuda'``: a kernel generated for the expression on the GPU
    (NVRTC and nvJitLink), the CPU's entries bit for bit; 'mi' runs on the CPU only. There the
    dot-like kernels ('dot', 'cosine', 'pearson', 'spearman', 'l2', 'sqeuclidean') with d >= 64
    take a float64 GEMM (cuBLAS, FP64 tensor cores) instead, each entry within a stated bound
    (docs/exactness.md): ``summation='ordered'`` keeps the rule's bits, ``'gemm'`` forces the GEMM."""
    run = _run("matrix", backend, threads, "auto", _DEFAULT_MAX_PAIRS, progress, devices=devices)
    if kernel is None:
        if out is not None or dtype != "float64" or summation != "auto":
            raise ConfigError("out=, dtype= and summation= go with kernel= (vectors of any dimension)")
        return _call("matrix", _twobody.matrix, run, _sample(data, "data"), _maybe_sample(data2, "data2"), bool(sky),
                     _box(box))
    if sky or box is not None:
        raise ConfigError("kernel= pairs vectors: it takes no sky or box")
    a = _vectors(data, "data")
    b = None if data2 is None else _vectors(data2, "data2")
    path = "" if out is None else os.fspath(out)
    raw = _raw(_twobody.matrix_vectors, run, a, b, str(kernel), float(p), path, str(dtype), str(summation))
    if path:
        return np.load(path, mmap_mode="r") if path.endswith(".npy") else path
    m = raw["matrix"]
    return m.astype(np.float32) if dtype == "float32" else m


def kde(data: ArrayLike, bandwidth: float, *, kernel: str = "gaussian", cutoff: Optional[float] = None,
        values: Optional[ArrayLike] = None, data2: Optional[ArrayLike] = None, values2: Optional[ArrayLike] = None,
        box: BoxLike = None, weights: Optional[ArrayLike] = None, weights2: Optional[ArrayLike] = None,
        backend: str = "auto", devices=None, threads: int = 0, path: str = "auto", progress=None) -> Result:
    """Per point, the kernel sum S_i = sum_j w_j K(r_ij) over its partners within the cutoff
    (default 5h Gaussian, h Epanechnikov) and, with ``values``, the Nadaraya-Watson regression:
    columns set, index, density, [regression]."""
    run = _run("kde", backend, threads, path, _DEFAULT_MAX_PAIRS, progress, devices=devices)
    return _call("kde", _twobody.kde, run, _sample(data, "data", weights), _maybe_sample(data2, "data2", weights2),
                 None if values is None else _real_array(values, "values", 1),
                 None if values2 is None else _real_array(values2, "values2", 1), kernel, float(bandwidth),
                 None if cutoff is None else float(cutoff), _box(box), _is_weighted(data, weights),
                 plot={"kind": "hist", "y": "density", "ylabel": "kernel sum"})


# ---- vectors: similarity joins and k nearest neighbours ---------------------------------------

def _vectors(x, what):
    """An (n, d) array of n vectors as the engine reads it: float16, float32 and float64 kept as
    given (in native byte order), other real dtypes converted to float64; 1-D is (n, 1)."""
    a = np.asarray(x)
    if a.dtype.kind == "f" and a.dtype.itemsize in (2, 4, 8):
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
    elif a.dtype.kind in "fiub":
        a = a.astype(np.float64)  # integers: exact in float64 below 2^53
    else:
        raise InputError(f"{what}: expected real numbers, not dtype {a.dtype}")
    if a.ndim == 1:
        a = a[:, None]
    elif a.ndim != 2:
        raise InputError(f"{what}: expected an (n, d) array of n vectors, not shape {a.shape}")
    if any(s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)  # byte steps that are no whole number of elements (a structured field)
    return a


JoinResult = Union[JoinPairs, JoinCsr, JoinCounts, JoinTotal, JoinFile]


_TABLE_FORMATS = {".csv": "csv", ".json": "json", ".h5": "hdf5", ".hdf5": "hdf5", ".npz": "npz", ".txt": "table"}


def join(data: ArrayLike, eps: float, *, data2: Optional[ArrayLike] = None, metric: str = "euclidean",
         emit: str = "pairs", backend: str = "auto", devices=None, threads: int = 0, max_pairs: int = _DEFAULT_MAX_PAIRS,
         progress=None, out=None, format: Optional[str] = None) -> JoinResult:
    """The similarity join: every pair of vectors within ``eps`` (inclusive), of ``data`` with
    itself (each unordered pair once, a vector never its own partner) or, with ``data2``, every
    (i, j) of data x data2. Exact: each pair is decided in float64 on its key, the sum over k of
    (a_k - b_k)^2 in column order against fl(eps * eps), or for ``metric='cosine'`` the cosine
    distance 1 - a.b of the rows divided by their norms against eps (docs/exactness.md).

    ``data``: (n, d) array of n vectors (1-D: n vectors of one value), float16, float32 or float64
    read as given (without a copy when its rows are contiguous), other real dtypes as float64.
    ``emit``: 'pairs' (:class:`JoinPairs`: ``i``, ``j``, ``distance`` sorted by (i, j)), 'csr'
    (:class:`JoinCsr`: ``indptr``, ``indices``, ``distances``, ``to_scipy()``), 'counts'
    (:class:`JoinCounts`: ``counts``, ``counts2``) or 'total' (:class:`JoinTotal`, an int). Each
    has ``total``, the number of pairs, and the run's metadata. More than ``max_pairs`` pairs
    (emit 'pairs' or 'csr') raise :class:`ResourceError`.

    ``out``: a file for the pairs (emit 'pairs'), written as they are found through a temporary
    file beside it and never held in memory, so a join larger than memory fits the disk:
    columns i, j, distance in the format of ``format`` or the extension (.csv, .json, .h5, .npz,
    .txt for an aligned table), sorted by (i, j) when they fit a quarter of memory. Returns
    :class:`JoinFile` (``path``, ``total``, metadata); ``max_pairs`` does not apply.

    ``backend='hybrid'``: the GPU and the CPU's other threads share the join on one work queue (the
    GPU the heaviest bands of rows, the CPU the lightest), the same result bit for bit; the
    metadata's ``workers`` and ``load_imbalance`` say how it was shared. It pays for joins of few
    dimensions (cell grids); in high dimensions the GPU's tensor cores leave the CPU under 1%."""
    run = _run("join", backend, threads, "auto", max_pairs, progress, devices=devices)
    a = _vectors(data, "data")
    b = None if data2 is None else _vectors(data2, "data2")
    if out is not None:
        if emit != "pairs":
            raise ConfigError(f"out= writes the pairs (emit='pairs'), not emit={emit!r}")
        path = os.fspath(out)
        fmt = format or _TABLE_FORMATS.get(os.path.splitext(path)[1].lower())
        if fmt is None:
            raise ConfigError(f"out={path!r}: give format= (csv, json, hdf5, npz, table) or one of the extensions "
                              f"{', '.join(sorted(_TABLE_FORMATS))}")
        raw = _raw(_twobody.join_to_file, run, a, b, float(eps), metric, path, fmt)
        return JoinFile(path, int(raw["total"]), json.loads(raw["meta"]))
    raw = _raw(_twobody.join, run, a, b, float(eps), metric, emit)
    if emit == "pairs":
        return JoinPairs(raw)
    if emit == "csr":
        return JoinCsr(raw, (len(a), len(a) if b is None else len(b)))
    if emit == "counts":
        return JoinCounts(raw)
    return JoinTotal(int(raw["total"]), json.loads(raw["meta"]))


def knn(queries: ArrayLike, k: int, *, data2: Optional[ArrayLike] = None, metric: str = "euclidean",
        backend: str = "auto", devices=None, threads: int = 0, progress=None) -> KnnResult:
    """The k nearest neighbours of every vector of ``queries`` among ``data2`` or, without it,
    among the queries' other vectors (a vector is not its own neighbour; its duplicates are).
    Returns ``(distances, indices)``, each (n, k), nearest first, ties by the smaller index: the
    order of scikit-learn's ``kneighbors`` and FAISS's ``search``. Exact: ordered by the float64
    key of :func:`join` (Euclidean distance, or ``metric='cosine'`` the cosine distance). Inputs
    as :func:`join`'s; k larger than the candidates raises :class:`ConfigError`. ``backend='hybrid'``
    shares the queries between the GPU and the CPU as :func:`join` does."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ConfigError(f"k is the number of neighbours, an integer, not {k!r}")
    if not 1 <= k <= np.iinfo(np.int32).max:
        raise ConfigError(f"k nearest neighbours need 1 <= k <= 2^31 - 1, not {k}")
    run = _run("knn", backend, threads, "auto", _DEFAULT_MAX_PAIRS, progress, devices=devices)
    a = _vectors(queries, "queries")
    b = None if data2 is None else _vectors(data2, "data2")
    raw = _raw(_twobody.knn, run, a, b, int(k), metric)
    return KnnResult(raw["distances"], raw["indices"], json.loads(raw["meta"]))
