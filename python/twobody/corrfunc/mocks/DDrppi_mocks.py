"""Corrfunc.mocks.DDrppi_mocks on twobody: (r_p, pi) pair counts of a survey, about each pair's line of sight."""

import numpy as np

from ... import _api
from .._conventions import (SELF_NONE, bin_edges, count, inner_upper_edges, mock_catalogues, ordered, pi_bins, returned,
                            structured)

RESULTS_DTYPE = np.dtype([("rmin", np.float64), ("rmax", np.float64), ("rpavg", np.float64), ("pimax", np.float64),
                          ("npairs", np.uint64), ("weightavg", np.float64)])


def DDrppi_mocks(autocorr, cosmology, nthreads, pimax, binfile, RA1, DEC1, CZ1, weights1=None, RA2=None, DEC2=None,
                 CZ2=None, weights2=None, is_comoving_dist=False, verbose=False, output_rpavg=False,
                 fast_divide_and_NR_steps=0, xbin_refine_factor=2, ybin_refine_factor=2, zbin_refine_factor=1,
                 max_cells_per_dim=100, copy_particles=True, enable_min_sep_opt=True, c_api_timer=False,
                 isa="fastest", weight_type=None):
    """DD(r_p, pi) of survey points as Corrfunc.mocks.DDrppi_mocks.DDrppi_mocks: RA, DEC in
    degrees and CZ in km/s turned into comoving positions in Mpc/h of Corrfunc's ``cosmology`` (1
    LasDamas, 2 Planck; with ``is_comoving_dist`` CZ is the comoving distance); pi and r_p about
    the pair's midpoint. Rows as DDrppi: (rmin, rmax, rpavg, pimax, npairs, weightavg); auto
    counts hold each pair twice (Corrfunc's self-pairs at r_min = 0 go to a bin it does not
    return, so none show here either)."""
    edges = bin_edges(binfile)
    npibins = pi_bins(pimax)
    data, data2, w1, w2 = mock_catalogues(autocorr, RA1, DEC1, CZ1, RA2, DEC2, CZ2, cosmology, is_comoving_dist,
                                          weights1, weights2, weight_type)
    t = count(_api.rppi, data, data2, w1, w2, output_rpavg, "rpavg", nthreads, verbose, edges, float(pimax),
              npibins=npibins, line_of_sight="midpoint")
    npairs, weightavg, rpavg = ordered(t, bool(autocorr), SELF_NONE, edges[0], 0, data[0].size, 0.0)
    results = structured(RESULTS_DTYPE, rmin=np.repeat(edges[:-1], npibins), rmax=np.repeat(edges[1:], npibins),
                         rpavg=rpavg, pimax=inner_upper_edges(float(pimax), npibins, edges.size - 1), npairs=npairs,
                         weightavg=weightavg)
    return returned(results, c_api_timer, t.seconds)
