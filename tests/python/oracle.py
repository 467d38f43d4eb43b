"""Independent float64 brute forces in NumPy: every pair, the README's binning rule (squared
distance, or cosine of the angle, against squared or cosine edges; half-open bins)."""

import numpy as np


def pair_d2(a, b=None, box=None):
    """Squared distances of the distinct pairs i < j (auto) or of every (i, j) (cross), float64,
    summed in coordinate order (as the engine), minimum image in a periodic box."""
    auto = b is None
    b = a if auto else b
    d2 = np.zeros((len(a), len(b)))
    for k in range(a.shape[1]):
        dx = a[:, k][:, None] - b[:, k][None, :]
        if box is not None:
            L = box[k]
            dx = np.abs(dx)
            dx = np.where(dx > 0.5 * L, L - dx, dx)
        d2 = d2 + dx * dx
    if auto:
        i, j = np.triu_indices(len(a), 1)
        return d2[i, j], (i, j)
    return d2.ravel(), None


def histogram_sq(d2, edges, weights=None):
    e2 = np.asarray(edges, float) ** 2
    k = np.searchsorted(e2, d2, side="right") - 1
    inside = (k >= 0) & (k < len(edges) - 1)
    counts = np.bincount(k[inside], minlength=len(edges) - 1).astype(np.uint64)
    if weights is None:
        return counts
    return counts, np.bincount(k[inside], weights=weights[inside], minlength=len(edges) - 1)


def unit(radec):
    ra, dec = np.radians(radec[:, 0]), np.radians(radec[:, 1])
    return np.stack([np.cos(dec) * np.cos(ra), np.cos(dec) * np.sin(ra), np.sin(dec)], axis=1)


def angular_counts(radec, edges, radec2=None):
    u = unit(radec)
    v = u if radec2 is None else unit(radec2)
    cos = u @ v.T
    if radec2 is None:
        i, j = np.triu_indices(len(u), 1)
        cos = cos[i, j]
    else:
        cos = cos.ravel()
    ce = np.cos(np.radians(np.asarray(edges, float)))
    # theta in [e_k, e_k+1) <=> cos in (cos e_k+1, cos e_k]
    counts = np.zeros(len(edges) - 1, np.uint64)
    for k in range(len(edges) - 1):
        counts[k] = np.count_nonzero((cos <= ce[k]) & (cos > ce[k + 1]))
    return counts


# ---- vectors (twobody.join, twobody.knn): the float64 rule of docs/exactness.md ----------------

def _ordered_sum(terms, d):
    """sum over k = 0..d-1 of terms(k), added in that order (never reassociated)."""
    s = terms(0).copy()
    for k in range(1, d):
        s += terms(k)
    return s


def unit_rows(x):
    """Rows divided by their norm sqrt(sum_k x_k^2), the sum in column order."""
    x = np.asarray(x, np.float64)
    norm = np.sqrt(_ordered_sum(lambda k: x[:, k] * x[:, k], x.shape[1]))
    return x / norm[:, None]


def vector_keys(a, b, metric="euclidean"):
    """Every (i, j)'s float64 key: sum over k of (a_k - b_k)^2, or for cosine 1 - sum_k a_k b_k of
    the unit rows; each sum in column order."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if metric == "cosine":
        ua, ub = unit_rows(a), unit_rows(b)
        return 1.0 - _ordered_sum(lambda k: ua[:, None, k] * ub[None, :, k], a.shape[1])

    def square(k):
        d = a[:, None, k] - b[None, :, k]
        return d * d

    return _ordered_sum(square, a.shape[1])


def natural(keys, metric="euclidean"):
    return keys if metric == "cosine" else np.sqrt(keys)


def join_pairs(a, eps, b=None, metric="euclidean"):
    """(i, j, distance) of every pair within eps, sorted by (i, j); one set: i < j. Within eps:
    key <= fl(eps * eps) (a Python float product), for cosine key <= eps."""
    keys = vector_keys(a, a if b is None else b, metric)
    within = keys <= (eps * eps if metric == "euclidean" else eps)
    if b is None:
        within = np.triu(within, 1)
    i, j = np.nonzero(within)  # row by row: sorted by (i, j)
    return i, j, natural(keys[i, j], metric)


def knn(a, k, b=None, metric="euclidean"):
    """(distances, indices), each (n, k): by (key, index), a vector of one set not its own."""
    keys = vector_keys(a, a if b is None else b, metric)
    if b is None:
        np.fill_diagonal(keys, np.inf)
    order = np.argsort(keys, axis=1, kind="stable")[:, :k]  # stable: equal keys by index
    return natural(np.take_along_axis(keys, order, axis=1), metric), order
