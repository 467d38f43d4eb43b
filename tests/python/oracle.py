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
