"""What :func:`twobody.join` and :func:`twobody.knn` return: NumPy arrays (indices and counts
int64, distances float64) with the run's metadata."""

import json

from ._results import RunMetadata


def _timing(r):
    return f"{r.backend}, {r.seconds:.3g} s"


class JoinPairs(RunMetadata):
    """Every pair within eps (``emit='pairs'``): ``i``, ``j`` and ``distance``, sorted by
    (i, j); a self-join lists each unordered pair once, with i < j. ``len(r) == r.total``."""

    def __init__(self, raw):
        self.meta = json.loads(raw["meta"])
        self.i = raw["i"]
        self.j = raw["j"]
        self.distance = raw["distance"]
        self.total = int(raw["total"])

    def __len__(self):
        return self.total

    def __repr__(self):
        return f"<twobody.JoinPairs: {self.total} pairs within eps = {self.meta['eps']}; {_timing(self)}>"


class JoinFile(RunMetadata):
    """The pairs within eps written to a file (``join(..., out=path)``): ``path``, ``total`` (the
    number of pairs, each once) and the run's metadata. The file holds columns i, j, distance,
    sorted by (i, j) unless ``meta['pairs_order']`` says they are in the order found."""

    def __init__(self, path, total, meta):
        self.path = path
        self.total = total
        self.meta = meta

    def __len__(self):
        return self.total

    def __repr__(self):
        return f"<twobody.JoinFile: {self.total} pairs within eps = {self.meta['eps']} in {self.path}; {_timing(self)}>"


class JoinCsr(RunMetadata):
    """The neighbour lists (``emit='csr'``): vector i's neighbours are
    ``indices[indptr[i]:indptr[i + 1]]``, increasing, at ``distances[...]``. A self-join lists
    every pair under both of its vectors; ``total`` counts each pair once. ``shape`` is
    (len(data), len(data2 or data))."""

    def __init__(self, raw, shape):
        self.meta = json.loads(raw["meta"])
        self.indptr = raw["indptr"]
        self.indices = raw["indices"]
        self.distances = raw["distances"]
        self.total = int(raw["total"])
        self.shape = shape

    def to_scipy(self):
        """The distances as a ``scipy.sparse.csr_matrix`` of this shape (needs scipy). An exact
        duplicate (distance 0) stays an explicitly stored zero, so ``nnz`` counts every pair."""
        try:
            from scipy.sparse import csr_matrix
        except ImportError as e:
            raise ImportError("to_scipy() needs scipy: pip install scipy") from e
        # Built from (data, indices, indptr), scipy keeps the explicit zeros as given.
        return csr_matrix((self.distances, self.indices, self.indptr), shape=self.shape)

    def __repr__(self):
        return (f"<twobody.JoinCsr: {self.shape[0]} x {self.shape[1]}, {len(self.indices)} entries, "
                f"{self.total} pairs within eps = {self.meta['eps']}; {_timing(self)}>")


class JoinCounts(RunMetadata):
    """Per vector, its neighbours within eps (``emit='counts'``): ``counts`` per vector of data
    (a self-join: among data, itself excluded), and for a cross join ``counts2`` per vector of
    data2 (None for a self-join). ``total`` is the number of pairs."""

    def __init__(self, raw):
        self.meta = json.loads(raw["meta"])
        self.counts = raw["counts"]
        self.counts2 = raw.get("counts2")
        self.total = int(raw["total"])

    def __repr__(self):
        return f"<twobody.JoinCounts: {len(self.counts)} vectors, {self.total} pairs; {_timing(self)}>"


class JoinTotal(int, RunMetadata):
    """The number of pairs within eps (``emit='total'``): an int, with the run's metadata and
    ``total`` (the same int)."""

    def __new__(cls, total, meta):
        obj = super().__new__(cls, total)
        obj.meta = meta
        return obj

    def __getnewargs__(self):  # (pickle, copy)
        return (int(self), self.meta)

    @property
    def total(self):
        return int(self)

    __str__ = int.__repr__

    def __repr__(self):
        return f"<twobody.JoinTotal: {int(self)} pairs; {_timing(self)}>"


class KnnResult(tuple, RunMetadata):
    """``(distances, indices)``, each (n, k), row q the k nearest neighbours of query q, nearest
    first, ties by the smaller index (the order of scikit-learn's ``kneighbors`` and of FAISS's
    ``search``): unpack it, ``d, i = twobody.knn(x, k)``, or read ``.distances`` and ``.indices``;
    the run's metadata as for the other results."""

    def __new__(cls, distances, indices, meta):
        obj = super().__new__(cls, (distances, indices))
        obj.meta = meta
        return obj

    def __getnewargs__(self):  # (pickle, copy)
        return (self[0], self[1], self.meta)

    distances = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    k = property(lambda self: self[0].shape[1])

    def __repr__(self):
        n, k = self[0].shape
        return f"<twobody.KnnResult: {n} queries, k = {k}; {_timing(self)}>"
