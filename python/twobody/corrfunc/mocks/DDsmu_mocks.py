"""Corrfunc.mocks.DDsmu_mocks on twobody: (s, mu) pair counts of a survey, about each pair's line of sight."""

import numpy as np

from ... import _api
from .._conventions import (SELF_NONE, bin_edges, check_mu, count, inner_upper_edges, mock_catalogues, ordered,
                            returned, structured)

RESULTS_DTYPE = np.dtype([("smin", np.float64), ("smax", np.float64), ("savg", np.float64), ("mumax", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def DDsmu_mocks(autocorr, cosmology, nthreads, mu_max, nmu_bins, binfile, RA1, DEC1, CZ1, weights1=None, RA2=None,
                DEC2=None, CZ2=None, weights2=None, is_comoving_dist=False, verbose=False, output_savg=False,
                fast_divide_and_NR_steps=0, xbin_refine_factor=2, ybin_refine_factor=2, zbin_refine_factor=1,
                max_cells_per_dim=100, copy_particles=True, enable_min_sep_opt=True, c_api_timer=False,
                isa="fastest", weight_type=None):
    """DD(s, mu) of survey points as Corrfunc.mocks.DDsmu_mocks.DDsmu_mocks: positions as
    DDrppi_mocks, mu about the pair's midpoint. Rows (smin, smax, savg, mumax, npairs,
    weightavg); auto counts hold each pair twice (no self-pairs show, as in Corrfunc). A pair
    along its line of sight (mu = 1) is in the last bin with mu_max = 1 (Corrfunc drops it)."""
    mu_max, nmu_bins = check_mu(mu_max, nmu_bins)
    edges = bin_edges(binfile)
    data, data2, w1, w2 = mock_catalogues(autocorr, RA1, DEC1, CZ1, RA2, DEC2, CZ2, cosmology, is_comoving_dist,
                                          weights1, weights2, weight_type)
    t = count(_api.smu, data, data2, w1, w2, output_savg, "savg", nthreads, verbose, edges, nmu_bins,
              mu_max=mu_max, line_of_sight="midpoint")
    npairs, weightavg, savg = ordered(t, bool(autocorr), SELF_NONE, edges[0], 0, data[0].size, 0.0)
    results = structured(RESULTS_DTYPE, smin=np.repeat(edges[:-1], nmu_bins), smax=np.repeat(edges[1:], nmu_bins),
                         savg=savg, mumax=inner_upper_edges(mu_max, nmu_bins, edges.size - 1), npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
