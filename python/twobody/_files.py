"""Catalogues from files, read by the command line's readers (the same formats, checks and
messages as ``twobody ... --data FILE``)."""

import os
from typing import Optional, Sequence, Union

from . import _twobody
from ._api import Catalogue
from ._errors import ConfigError

Columns = Optional[Sequence[Union[int, str]]]


def read(path: Union[str, "os.PathLike[str]"], columns: Columns = None, *, weights: Optional[int] = None,
         regions: Optional[int] = None) -> Catalogue:
    """Reads a catalogue: text (a first line of names is a header), ``.npy``, Corrfunc's fast-food
    ``.ff``, HDF5 (``"file.h5:/path"``; a dataset, a table or a group of columns) or FITS
    (``"file.fits:HDU"``; a table or an image).

    columns: 1-based column numbers, or names (a text header's, an HDF5 table's or group's, a FITS
    table's); by default every column that is not weights or regions. weights, regions: 1-based
    columns of per-point weights and integer jackknife region labels.
    Returns a :class:`Catalogue` (``points`` an (n, d) float64 array, ``weights``, ``regions``),
    which every statistic takes where it takes points.
    """
    numbers, names = [], []
    for c in columns or []:
        if isinstance(c, str):
            names.append(c)
        elif isinstance(c, int) and not isinstance(c, bool):
            numbers.append(c)
        else:
            raise ConfigError(f"columns: expected 1-based numbers or names, not {c!r}")
    if numbers and names:
        raise ConfigError("columns: give numbers or names, not both")
    raw = _twobody.read(os.fspath(path), numbers, names, int(weights or 0), int(regions or 0))
    return Catalogue(raw["points"], raw.get("weights"), raw.get("regions"))


def generate(kind: str, n: int, *, dim: int = 3, box: float = 1000.0, sky: bool = False, seed: int = 1,
             cluster: str = "soneira-peebles", blobs: int = 32, sigma: float = 0.02, eta: int = 4,
             lam: float = 2.2, levels: int = 6, radius: float = 0.25, fraction: float = 0.9,
             volume: float = 0.01):
    """A test catalogue, as ``twobody generate KIND`` writes it (the same points for the same seed):
    ``kind`` 'uniform', 'clustered' (``cluster`` 'soneira-peebles': ``eta``, ``lam``, ``levels``,
    ``radius``; or 'blobs': ``blobs``, ``sigma``) or 'concentrated' (``fraction`` of the points in
    a cube of ``volume`` of the box), n points in ``[0, box)^dim``, or with ``sky=True`` on the
    sphere as (RA, Dec) in degrees. Returns an (n, dim) float64 array."""
    return _twobody.generate(kind, int(n), int(dim), float(box), bool(sky), int(seed), cluster, int(blobs),
                             float(sigma), int(eta), float(lam), int(levels), float(radius), float(fraction),
                             float(volume))


def randoms_like(data, n: int, *, footprint: str = "box", box=None, resolution: float = 1.0, min_count: int = 1,
                 weights=None, seed: int = 1) -> Catalogue:
    """Random points over the data's footprint, as ``twobody generate randoms --like DATA``:
    ``footprint`` 'box' (uniform in ``box``, one side or one a coordinate, else the data's bounding
    box), 'sky' (the data are (RA, Dec) in degrees: uniform over the equal-area pixels of side
    ``resolution`` degrees holding at least ``min_count`` of them) or 'mocks' (RA, Dec and a radial
    column: angles over that mask, the radial value drawn from the data's own, with their
    ``weights`` when given). Returns a :class:`Catalogue` (``weights`` set for weighted mocks);
    """
    from ._api import _sample

    b = [] if box is None else [float(v) for v in (box if hasattr(box, "__len__") else [box])]
    raw = _twobody.randoms_like(_sample(data, "data", weights), int(n), footprint, b, float(resolution),
                                int(min_count), int(seed))
    return Catalogue(raw["points"], raw.get("weights"))
