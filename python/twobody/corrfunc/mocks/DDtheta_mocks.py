"""Corrfunc.mocks.DDtheta_mocks on twobody: angular pair counts from RA, DEC in degrees."""

import numpy as np

from ... import _api
from .._conventions import (SELF_WITH_WEIGHT, bin_edges, check_ra_dec, columns, count, ordered, returned, second_set,
                            self_weight_sum, structured, weights_of)

RESULTS_DTYPE = np.dtype([("thetamin", np.float64), ("thetamax", np.float64), ("thetaavg", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def DDtheta_mocks(autocorr, nthreads, binfile, RA1, DEC1, weights1=None, RA2=None, DEC2=None, weights2=None,
                  link_in_dec=True, link_in_ra=True, verbose=False, output_thetaavg=False, fast_acos=False,
                  ra_refine_factor=2, dec_refine_factor=2, max_cells_per_dim=100, copy_particles=True,
                  enable_min_sep_opt=True, c_api_timer=False, isa="fastest", weight_type=None):
    """DD(theta) as Corrfunc.mocks.DDtheta_mocks.DDtheta_mocks: rows (thetamin, thetamax,
    thetaavg, npairs, weightavg), theta in degrees; auto counts hold each pair twice and, when the
    first edge is 0, the N self-pairs in the first bin. link_in_dec, link_in_ra, fast_acos
    (thetaavg here is always the exact arccosine) and the refine factors are ignored. The input
    arrays are never modified (Corrfunc shifts negative RA by 180 degrees in place; a shift of
    every RA leaves the separations as they are)."""
    edges = bin_edges(binfile)
    data = columns("RA1/DEC1", RA1, DEC1)
    check_ra_dec(data[0], data[1], "RA1/DEC1")
    data2 = second_set(autocorr, "RA2/DEC2", RA2, DEC2)
    if data2 is not None:
        check_ra_dec(data2[0], data2[1], "RA2/DEC2")
    w1, w2 = weights_of(data, data2, weights1, weights2, weight_type, autocorr)
    t = count(_api.angular, data, data2, w1, w2, output_thetaavg, "ravg", nthreads, verbose, edges)
    npairs, weightavg, thetaavg = ordered(t, bool(autocorr), SELF_WITH_WEIGHT, edges[0], 0, data[0].size,
                                          self_weight_sum(w1))
    results = structured(RESULTS_DTYPE, thetamin=edges[:-1], thetamax=edges[1:], thetaavg=thetaavg, npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
