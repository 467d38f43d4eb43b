"""A drop-in for Corrfunc 2.5's Python API on twobody's engine: change the import line.

    from Corrfunc.theory.DD import DD              ->  from twobody.corrfunc.theory import DD
    from Corrfunc.mocks.DDtheta_mocks import ...   ->  from twobody.corrfunc.mocks import DDtheta_mocks

(``twobody.corrfunc.theory.DD.DD``-style imports work as well.) Same arguments, same structured
arrays, Corrfunc's conventions: ordered-pair counts in auto mode, its self-pairs at r_min = 0,
weightavg with weight_type='pair_product', c_api_timer. Corrfunc's tuning arguments (isa, refine
factors, max_cells_per_dim, copy_particles, enable_min_sep_opt, fast_acos, ...) are accepted and
ignored. The counts are twobody's, exact in float64: equal to Corrfunc's double-precision build
bin for bin; where Corrfunc's float32 kernels or its edge rules differ, docs/python.md says how.
"""

from . import mocks, theory

__all__ = ["theory", "mocks"]
