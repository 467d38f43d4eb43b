"""twobody: exact 2-body statistics (pair counts, SDH, g(r), xi(r), w(theta), w_p, xi(r_p, pi),
xi(s, mu), KK/NK, neighbours, matrices, kernel sums, similarity joins and k nearest neighbours of
vectors, pair functions written as expressions, lattice maps and short-range forces) over NumPy arrays, on CPU and GPU.

Every function is the command line's command of the same name (``twobody paircount`` is
``twobody.paircount``), returning a :class:`Result` whose attributes are the CLI table's columns.
See docs/python.md.
"""

from . import _twobody
from ._api import (Catalogue, angular, join, kde, kk, knn, linear_bins, log_bins, matrix, neighbours, nk, paircount,
                   rdf, rppi, sdh, smu, wp, wtheta, xi, xi_rppi, xi_smu)
from ._devices import available_backends, device_memory_limit, set_device_memory_limit, visible_devices
from ._expressions import custom
from ._information import MutualInformation, mutual_information
from ._errors import (BackendError, ConfigError, InputError, InternalError, OutputError, ResourceError,
                      TwobodyError, BY_KIND as _BY_KIND)
from ._files import generate, randoms_like, read
from ._lattice import BodyForces, LatticeMap, density, forces, gridding, potential
from ._joins import JoinCounts, JoinCsr, JoinFile, JoinPairs, JoinTotal, KnnResult
from ._results import Jackknife, Result
from . import md  # noqa: E402  (twobody.md.rdf: g(r) over MDAnalysis trajectories)
from . import corrfunc  # noqa: E402  (twobody.corrfunc: a drop-in for Corrfunc 2.5's Python API)

_twobody.set_error_classes(_BY_KIND)

__version__ = _twobody.version

__all__ = ["Catalogue", "Jackknife", "Result", "TwobodyError", "InputError", "ConfigError", "ResourceError",
           "BackendError", "OutputError", "InternalError", "available_backends", "visible_devices",
           "set_device_memory_limit", "device_memory_limit", "read", "generate", "randoms_like", "linear_bins", "log_bins", "sdh",
           "paircount", "rdf", "angular", "xi", "wtheta", "rppi", "smu", "xi_rppi", "wp", "xi_smu", "kk", "nk",
           "neighbours", "matrix", "kde", "join", "knn", "custom", "mutual_information", "MutualInformation", "JoinPairs", "JoinCsr", "JoinCounts", "JoinTotal", "JoinFile",
           "KnnResult", "potential", "density", "gridding", "forces", "LatticeMap", "BodyForces"]
