"""Triclinic cells through box=: MDAnalysis' dimensions [a, b, c, alpha, beta, gamma] and 3x3 cell
matrices, against a NumPy float64 brute force over all 125 images (the formula of
docs/molecular-dynamics.md, evaluated in the same order)."""

import numpy as np
import pytest

import twobody as tb
from oracle import histogram_sq


def cell_matrix(dims):
    """MDAnalysis.lib.mdamath.triclinic_vectors(dims, dtype=np.float64), step for step."""
    lx, ly, lz, alpha, beta, gamma = (float(v) for v in dims)
    ca = 0.0 if alpha == 90 else np.cos(np.deg2rad(alpha))
    cb = 0.0 if beta == 90 else np.cos(np.deg2rad(beta))
    cg, sg = (0.0, 1.0) if gamma == 90 else (np.cos(np.deg2rad(gamma)), np.sin(np.deg2rad(gamma)))
    h = np.zeros((3, 3))
    h[0, 0] = lx
    h[1] = ly * cg, ly * sg, 0
    h[2, 0] = lz * cb
    h[2, 1] = lz * (ca - cb * cg) / sg
    h[2, 2] = np.sqrt(lz * lz - h[2, 0] ** 2 - h[2, 1] ** 2)
    return h


def in_cell(rng, h, n):
    f = rng.random((n, 3))
    x = np.empty((n, 3))
    x[:, 0] = f[:, 0] * h[0, 0] + f[:, 1] * h[1, 0] + f[:, 2] * h[2, 0]
    x[:, 1] = f[:, 1] * h[1, 1] + f[:, 2] * h[2, 1]
    x[:, 2] = f[:, 2] * h[2, 2]
    # The engine's own test of "inside" (fractional coordinates in [0, 1)).
    sc = x[:, 2] / h[2, 2]
    sb = (x[:, 1] - sc * h[2, 1]) / h[1, 1]
    sa = (x[:, 0] - sb * h[1, 0] - sc * h[2, 0]) / h[0, 0]
    s = np.stack([sa, sb, sc], axis=1)
    return x[np.all((s >= 0) & (s < 1), axis=1)]


def d2_triclinic(a, b, h):
    """Least squared separation over the images n in [-2, 2]^3, pairs i < j (auto) or all (cross)."""
    if b is None:
        i, j = np.triu_indices(len(a), 1)
        d = a[i] - a[j]
    else:
        d = (a[:, None, :] - b[None, :, :]).reshape(-1, 3)
    best = np.full(len(d), np.inf)
    for na in range(-2, 3):
        for nb in range(-2, 3):
            for nc in range(-2, 3):
                z = d[:, 2] - nc * h[2, 2]
                y = (d[:, 1] - nc * h[2, 1]) - nb * h[1, 1]
                x = ((d[:, 0] - nc * h[2, 0]) - nb * h[1, 0]) - na * h[0, 0]
                best = np.minimum(best, (x * x + y * y) + z * z)
    return best


def inscribed_radius(h):
    v = abs(np.linalg.det(h))
    a, b, c = h
    return 0.5 * min(v / np.linalg.norm(np.cross(b, c)), v / np.linalg.norm(np.cross(c, a)),
                     v / np.linalg.norm(np.cross(a, b)))


@pytest.mark.parametrize("dims", [[20.0, 18.0, 22.0, 75.0, 100.0, 110.0], [15.0, 15.0, 15.0, 60.0, 60.0, 90.0]])
def test_dimensions_and_matrix_equal_brute_force(rng, dims):
    h = cell_matrix(dims)
    a, b = in_cell(rng, h, 500), in_cell(rng, h, 300)
    edges = np.linspace(0, inscribed_radius(h) * 0.999, 9)
    want = histogram_sq(d2_triclinic(a, None, h), edges)
    np.testing.assert_array_equal(tb.paircount(a, edges, box=dims).npairs, want)
    np.testing.assert_array_equal(tb.paircount(a, edges, box=h).npairs, want)
    want = histogram_sq(d2_triclinic(a, b, h), edges)
    np.testing.assert_array_equal(tb.paircount(a, edges, data2=b, box=h).npairs, want)
    g = tb.rdf(a, edges, box=dims)
    shell = 4 / 3 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    n = len(a)
    np.testing.assert_allclose(g.expected, n * (n - 1) / 2 * shell / np.linalg.det(h), rtol=1e-12)


def test_right_angles_are_the_orthorhombic_box(rng):
    a = rng.random((400, 3)) * 10
    edges = np.linspace(0, 5, 11)
    want = tb.paircount(a, edges, box=[10.0, 10.0, 10.0]).npairs
    np.testing.assert_array_equal(tb.paircount(a, edges, box=[10, 10, 10, 90, 90, 90]).npairs, want)
    np.testing.assert_array_equal(tb.paircount(a, edges, box=np.diag([10.0, 10.0, 10.0])).npairs, want)


def test_refusals(rng):
    h = cell_matrix([20, 18, 22, 75, 100, 110])
    a = in_cell(rng, h, 50)
    with pytest.raises(tb.ConfigError, match="inscribed-sphere radius"):
        tb.paircount(a, [0, inscribed_radius(h) * 1.01], box=h)
    with pytest.raises(tb.ConfigError, match="angle gamma"):
        tb.paircount(a, [0, 1], box=[20, 18, 22, 75, 100, 190])
    with pytest.raises(tb.ConfigError, match="lower-triangular"):
        tb.paircount(a, [0, 1], box=h.T)
    with pytest.raises(tb.InputError, match="shape"):
        tb.paircount(a, [0, 1], box=np.ones((2, 3)))
    with pytest.raises(tb.InputError, match="outside the periodic cell"):
        tb.paircount(a + 100, [0, 1], box=h)
