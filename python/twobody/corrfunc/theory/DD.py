"""Corrfunc.theory.DD on twobody: pair counts in real space, periodic box or open."""

import numpy as np

from ... import _api
from .._conventions import (SELF_WITH_WEIGHT, bin_edges, box_catalogues, box_lengths, count, ordered, returned,
                            self_weight_sum, structured)

RESULTS_DTYPE = np.dtype([("rmin", np.float64), ("rmax", np.float64), ("ravg", np.float64), ("npairs", np.uint64),
                          ("weightavg", np.float64)])


def DD(autocorr, nthreads, binfile, X1, Y1, Z1, weights1=None, periodic=True, boxsize=None, X2=None, Y2=None,
       Z2=None, weights2=None, verbose=False, output_ravg=False, xbin_refine_factor=2, ybin_refine_factor=2,
       zbin_refine_factor=1, max_cells_per_dim=100, copy_particles=True, enable_min_sep_opt=True,
       c_api_timer=False, isa="fastest", weight_type=None):
    """DD(r) as Corrfunc.theory.DD.DD: a structured array (rmin, rmax, ravg, npairs, weightavg),
    one row per bin; auto counts hold each pair twice and, when the first edge is 0, the N
    self-pairs in the first bin; ``(results, api_time)`` with ``c_api_timer``. The refine factors,
    max_cells_per_dim, copy_particles, enable_min_sep_opt and isa are accepted and ignored."""
    edges = bin_edges(binfile)
    box = box_lengths(periodic, boxsize)
    data, data2, w1, w2 = box_catalogues(autocorr, box, X1, Y1, Z1, X2, Y2, Z2, weights1, weights2, weight_type)
    t = count(_api.paircount, data, data2, w1, w2, output_ravg, "ravg", nthreads, verbose, edges, box=box)
    npairs, weightavg, ravg = ordered(t, bool(autocorr), SELF_WITH_WEIGHT, edges[0], 0, data[0].size,
                                      self_weight_sum(w1))
    results = structured(RESULTS_DTYPE, rmin=edges[:-1], rmax=edges[1:], ravg=ravg, npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
