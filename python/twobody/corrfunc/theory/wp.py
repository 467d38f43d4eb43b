"""Corrfunc.theory.wp on twobody: the projected correlation function of a periodic box."""

import math

import numpy as np

from ... import _api
from .._conventions import (SELF_WITH_WEIGHT, analytic_estimates, analytic_random_terms, bin_edges, box_side, columns,
                            count, ordered, pair_weights, self_weight_sum, structured, wrapped)

RESULTS_DTYPE = np.dtype([("rmin", np.float64), ("rmax", np.float64), ("rpavg", np.float64), ("wp", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])

# Corrfunc's per-cell timings (c_cell_timer); twobody has no cells to time, so the array is empty.
CELL_TIMER_DTYPE = np.dtype([("N1", np.int64), ("N2", np.int64), ("time_in_ns", np.int64), ("cellidx1", np.int32),
                             ("cellidx2", np.int32), ("tid", np.int32)])


def wp(boxsize, pimax, nthreads, binfile, X, Y, Z, weights=None, weight_type=None, verbose=False,
       output_rpavg=False, xbin_refine_factor=2, ybin_refine_factor=2, zbin_refine_factor=1,
       max_cells_per_dim=100, copy_particles=True, enable_min_sep_opt=True, c_api_timer=False,
       c_cell_timer=False, isa="fastest"):
    """w_p(r_p) as Corrfunc.theory.wp.wp: rows (rmin, rmax, rpavg, wp, npairs, weightavg) from the
    pairs with |dz| < pimax in a periodic cube and Corrfunc's analytic RR,
    w_p = (DD / RR - 1) 2 pimax (DD the weighted sum with weight_type='pair_product'). npairs as
    Corrfunc's auto counts (each pair twice, N self-pairs in a first bin starting at 0).
    ``c_api_timer`` adds api_time, ``c_cell_timer`` an (empty) cell-timings array."""
    L = box_side(boxsize)
    edges = bin_edges(binfile)
    box = [L, L, L]
    data = wrapped(columns("X/Y/Z", X, Y, Z), box)
    n = data[0].size
    w, _ = pair_weights(weights, None, n, 0, weight_type, True)
    t = count(_api.rppi, data, None, w, None, output_rpavg, "rpavg", nthreads, verbose, edges, float(pimax),
              npibins=1, box=box)
    npairs, weightavg, rpavg = ordered(t, True, SELF_WITH_WEIGHT, edges[0], 0, n, self_weight_sum(w))
    prefac, weight_sqr_sum = analytic_random_terms(w, n, L)
    twice_pimax = 2.0 * float(pimax)
    values = analytic_estimates(npairs, weightavg, w is not None, edges, prefac, weight_sqr_sum,
                                lambda rlow, rupp: math.pi * (rupp * rupp - rlow * rlow) * twice_pimax, twice_pimax)
    results = structured(RESULTS_DTYPE, rmin=edges[:-1], rmax=edges[1:], rpavg=rpavg, wp=values, npairs=npairs,
                         weightavg=weightavg)
    if not (c_api_timer or c_cell_timer):
        return results
    ret = (results,)
    if c_api_timer:
        ret += (t.seconds,)
    if c_cell_timer:
        ret += (np.zeros(0, dtype=CELL_TIMER_DTYPE),)
    return ret
