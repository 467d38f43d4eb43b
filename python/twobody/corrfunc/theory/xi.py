"""Corrfunc.theory.xi on twobody: the 3-D correlation function of a periodic box."""

import math

import numpy as np

from ... import _api
from .._conventions import (SELF_WITH_WEIGHT, analytic_estimates, analytic_random_terms, bin_edges, box_side, columns,
                            count, ordered, pair_weights, returned, self_weight_sum, structured, wrapped)

RESULTS_DTYPE = np.dtype([("rmin", np.float64), ("rmax", np.float64), ("ravg", np.float64), ("xi", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def xi(boxsize, nthreads, binfile, X, Y, Z, weights=None, weight_type=None, verbose=False, output_ravg=False,
       xbin_refine_factor=2, ybin_refine_factor=2, zbin_refine_factor=1, max_cells_per_dim=100,
       copy_particles=True, enable_min_sep_opt=True, c_api_timer=False, isa="fastest"):
    """xi(r) as Corrfunc.theory.xi.xi: rows (rmin, rmax, ravg, xi, npairs, weightavg) of a periodic
    cube with Corrfunc's analytic RR, xi = DD / RR - 1 (DD the weighted sum with
    weight_type='pair_product'); npairs as Corrfunc's auto counts."""
    L = box_side(boxsize)
    edges = bin_edges(binfile)
    box = [L, L, L]
    data = wrapped(columns("X/Y/Z", X, Y, Z), box)
    n = data[0].size
    w, _ = pair_weights(weights, None, n, 0, weight_type, True)
    t = count(_api.paircount, data, None, w, None, output_ravg, "ravg", nthreads, verbose, edges, box=box)
    npairs, weightavg, ravg = ordered(t, True, SELF_WITH_WEIGHT, edges[0], 0, n, self_weight_sum(w))
    prefac, weight_sqr_sum = analytic_random_terms(w, n, L)
    values = analytic_estimates(npairs, weightavg, w is not None, edges, prefac, weight_sqr_sum,
                                lambda rlow, rupp: 4.0 / 3.0 * math.pi * (rupp * rupp * rupp - rlow * rlow * rlow))
    results = structured(RESULTS_DTYPE, rmin=edges[:-1], rmax=edges[1:], ravg=ravg, xi=values, npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
