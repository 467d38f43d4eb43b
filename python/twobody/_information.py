"""Mutual information between variables: :func:`mutual_information`."""

import json
from typing import Optional

import numpy as np

from . import _twobody
from ._api import ArrayLike, _raw, _run, _vectors
from ._errors import ConfigError
from ._results import RunMetadata


class MutualInformation(RunMetadata):
    """``matrix`` (n1 x n2, float64), the rows' entropies ``entropy`` (and ``entropy2`` of data2's
    rows, else None) in the unit asked for, and the run's metadata."""

    def __init__(self, raw):
        self.matrix = raw["matrix"]
        self.entropy = raw["entropy"]
        self.entropy2 = raw["entropy2"]
        self.meta = json.loads(raw["meta"])

    def __repr__(self):
        r, c = self.matrix.shape
        return f"<twobody.MutualInformation {r} x {c}, {self.meta['unit']}; {self.backend}, {self.seconds:.3g} s>"


def mutual_information(data: ArrayLike, *, data2: Optional[ArrayLike] = None, bins: int = 10, order: int = 3,
                       unit: str = "bits", threads: int = 0, progress=None) -> MutualInformation:
    """The mutual information of every pair of rows of ``data`` (or of data x data2), each row a
    variable and its columns paired samples (genes x arrays, as gene-network reconstruction has
    them), by the B-spline estimator of Daub et al. (2004): each row scaled to its range and its
    samples spread over ``order`` B-splines on ``bins`` bins. ``order=1`` is the histogram
    estimator. ``unit``: 'bits' (Daub et al.) or 'nats'. A constant row has entropy 0 and no
    information with any row. Runs on the CPU; the same bits on any number of threads."""
    for name, v in (("bins", bins), ("order", order)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ConfigError(f"{name} is an integer, not {v!r}")
    run = _run("mutual information", "cpu", threads, "auto", 0, progress)
    a = _vectors(data, "data")
    b = None if data2 is None else _vectors(data2, "data2")
    return MutualInformation(_raw(_twobody.mutual_information, run, a, b, int(bins), int(order), unit))
