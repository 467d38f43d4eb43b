"""Corrfunc.theory on twobody: DD, DDrppi, DDsmu, wp and xi of points in a box (Cartesian X, Y, Z)."""

from .DD import DD
from .DDrppi import DDrppi
from .DDsmu import DDsmu
from .wp import wp
from .xi import xi

__all__ = ["DD", "DDrppi", "DDsmu", "wp", "xi"]
