"""Corrfunc.mocks on twobody: DDtheta_mocks (RA, DEC) and DDrppi_mocks, DDsmu_mocks (RA, DEC, CZ)."""

from .DDrppi_mocks import DDrppi_mocks
from .DDsmu_mocks import DDsmu_mocks
from .DDtheta_mocks import DDtheta_mocks

__all__ = ["DDtheta_mocks", "DDrppi_mocks", "DDsmu_mocks"]
