"""Corrfunc.theory.DDsmu on twobody: pair counts in (s, mu) about the z axis."""

import numpy as np

from ... import _api
from .._conventions import (SELF_WITHOUT_WEIGHT, bin_edges, box_catalogues, box_lengths, check_mu, count,
                            inner_upper_edges, ordered, returned, structured)

RESULTS_DTYPE = np.dtype([("smin", np.float64), ("smax", np.float64), ("savg", np.float64), ("mu_max", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def DDsmu(autocorr, nthreads, binfile, mu_max, nmu_bins, X1, Y1, Z1, weights1=None, periodic=True, boxsize=None,
          X2=None, Y2=None, Z2=None, weights2=None, verbose=False, output_savg=False, fast_divide_and_NR_steps=0,
          xbin_refine_factor=2, ybin_refine_factor=2, zbin_refine_factor=1, max_cells_per_dim=100,
          copy_particles=True, enable_min_sep_opt=True, c_api_timer=False, isa="fastest", weight_type=None):
    """DD(s, mu) as Corrfunc.theory.DDsmu.DDsmu: rows (smin, smax, savg, mu_max, npairs,
    weightavg), s bins outer, nmu_bins mu bins of mu_max / nmu_bins inner (``mu_max`` the bin's
    upper mu edge); mu = |dz| / s. Auto counts hold each pair twice and, when the first edge is 0,
    the N self-pairs in the first (s, mu) bin (without their weight, as Corrfunc). Differences:
    a pair along the z axis (mu = 1) is in the last bin with mu_max = 1 (Corrfunc drops it), and
    two distinct points at the same place are in the first bin when s starts at 0 (Corrfunc drops
    them); fast_divide_and_NR_steps is ignored (exact division)."""
    mu_max, nmu_bins = check_mu(mu_max, nmu_bins)
    edges = bin_edges(binfile)
    box = box_lengths(periodic, boxsize)
    data, data2, w1, w2 = box_catalogues(autocorr, box, X1, Y1, Z1, X2, Y2, Z2, weights1, weights2, weight_type)
    t = count(_api.smu, data, data2, w1, w2, output_savg, "savg", nthreads, verbose, edges, nmu_bins,
              mu_max=mu_max, box=box)
    npairs, weightavg, savg = ordered(t, bool(autocorr), SELF_WITHOUT_WEIGHT, edges[0], 0, data[0].size, 0.0)
    results = structured(RESULTS_DTYPE, smin=np.repeat(edges[:-1], nmu_bins), smax=np.repeat(edges[1:], nmu_bins),
                         savg=savg, mu_max=inner_upper_edges(mu_max, nmu_bins, edges.size - 1), npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
