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
