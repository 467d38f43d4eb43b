"""Corrfunc.theory.DDrppi on twobody: pair counts in (r_p, pi) about the z axis."""

import numpy as np

from ... import _api
from .._conventions import (SELF_WITHOUT_WEIGHT, bin_edges, box_catalogues, box_lengths, count, inner_upper_edges,
                            ordered, pi_bins, returned, structured)

RESULTS_DTYPE = np.dtype([("rmin", np.float64), ("rmax", np.float64), ("rpavg", np.float64), ("pimax", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def DDrppi(autocorr, nthreads, pimax, binfile, X1, Y1, Z1, weights1=None, periodic=True, boxsize=None, X2=None,
           Y2=None, Z2=None, weights2=None, verbose=False, output_rpavg=False, xbin_refine_factor=2,
           ybin_refine_factor=2, zbin_refine_factor=1, max_cells_per_dim=100, copy_particles=True,
           enable_min_sep_opt=True, c_api_timer=False, isa="fastest", weight_type=None):
    """DD(r_p, pi) as Corrfunc.theory.DDrppi.DDrppi: rows (rmin, rmax, rpavg, pimax, npairs,
    weightavg), r_p bins outer, int(pimax) pi bins of pimax / int(pimax) inner (``pimax`` the
    bin's upper pi edge); pi = |dz|. Auto counts hold each pair twice and, when the first edge
    is 0, the N self-pairs in the first (r_p, pi) bin (without their weight, as Corrfunc)."""
    edges = bin_edges(binfile)
    npibins = pi_bins(pimax)
    box = box_lengths(periodic, boxsize)
    data, data2, w1, w2 = box_catalogues(autocorr, box, X1, Y1, Z1, X2, Y2, Z2, weights1, weights2, weight_type)
    t = count(_api.rppi, data, data2, w1, w2, output_rpavg, "rpavg", nthreads, verbose, edges, float(pimax),
              npibins=npibins, box=box)
    npairs, weightavg, rpavg = ordered(t, bool(autocorr), SELF_WITHOUT_WEIGHT, edges[0], 0, data[0].size, 0.0)
    results = structured(RESULTS_DTYPE, rmin=np.repeat(edges[:-1], npibins), rmax=np.repeat(edges[1:], npibins),
                         rpavg=rpavg, pimax=inner_upper_edges(float(pimax), npibins, edges.size - 1), npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
