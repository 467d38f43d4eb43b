"""twobody.potential, density, gridding and forces against NumPy float64 brute forces: every
source against every node (maps), every pair against every pair (forces)."""

import numpy as np
import pytest

import twobody


def _nodes(m):
    x, y, z = m.axes()
    Z, Y, X = np.meshgrid(z, y, x, indexing="ij")  # (nz, ny, nx): C order, x fastest
    return X, Y, Z


def test_potential_against_brute_force(rng):
    atoms = rng.uniform(0, 6, size=(60, 3))
    q = rng.uniform(-1, 1, size=60)
    m = twobody.potential(atoms, q, spacing=0.5, cutoff=2.5, padding=0.5, precision="double", threads=2)
    assert m.values.shape == tuple(reversed(m.shape)) and m.values.dtype == np.float64
    assert m.values.flags["C_CONTIGUOUS"]
    X, Y, Z = _nodes(m)
    ref = np.zeros(m.values.shape)
    near = np.zeros(m.values.shape, bool)
    for a, qa in zip(atoms, q):
        r2 = (X - a[0]) ** 2 + (Y - a[1]) ** 2 + (Z - a[2]) ** 2
        near |= r2 < 1.0
        inside = r2 < 2.5 * 2.5
        r = np.sqrt(np.where(inside, r2, 1.0))
        ref += np.where(inside, qa * (1 - r2 / 6.25) ** 2 / r, 0.0)
    ref[near] = 0.0
    assert np.array_equal(m.excluded, near)
    np.testing.assert_allclose(m.values, ref, rtol=0, atol=1e-10 * np.abs(q).sum())
    single = twobody.potential(atoms, q, spacing=0.5, cutoff=2.5, padding=0.5)
    assert single.values.dtype == np.float32
    np.testing.assert_allclose(single.values, ref, rtol=0, atol=1e-4 * np.abs(q).sum())
    assert m.origin == pytest.approx(tuple(atoms.min(axis=0) - 0.5))


def test_density_against_brute_force(rng):
    pts = rng.uniform(0, 4, size=(40, 3))
    radii = rng.uniform(0.5, 1.0, size=40)
    m = twobody.density(pts, radii, spacing=0.25, cutoff=1.5, blobbiness=2.0, precision="double",
                        origin=(0, 0, 0), shape=(17, 17, 17))
    X, Y, Z = _nodes(m)
    ref = np.zeros(m.values.shape)
    for p, R in zip(pts, radii):
        r2 = (X - p[0]) ** 2 + (Y - p[1]) ** 2 + (Z - p[2]) ** 2
        ref += np.where(r2 < 1.5 ** 2, np.exp(2.0 * (1 - r2 / R ** 2)), 0.0)
    np.testing.assert_allclose(m.values, ref, rtol=1e-12, atol=1e-12)
    assert m.excluded is None and m.spacing == (0.25, 0.25, 0.25) and m.shape == (17, 17, 17)


@pytest.mark.parametrize("separable", [True, False])
def test_gridding_complex(rng, separable):
    scipy_special = pytest.importorskip("scipy.special")
    k = rng.uniform(-7, 7, size=(30, 3))
    v = rng.normal(size=30) + 1j * rng.normal(size=30)
    m = twobody.gridding(k, v, grid=16, width=4, beta=8.0, precision="double",
                         kernel_shape="separable" if separable else "radial")
    assert m.values.dtype == np.complex128 and m.values.shape == (16, 16, 16)
    X, Y, Z = _nodes(m)
    ref = np.zeros(m.values.shape, complex)

    def kb(d2):
        return scipy_special.i0(8.0 * np.sqrt(np.maximum(1 - d2 / 4.0, 0))) / scipy_special.i0(8.0)

    for kk, vv in zip(k, v):
        ds = []
        for node, c in zip((X, Y, Z), kk):
            d = node - c
            d = d - 16 * np.round(d / 16)  # the periodic grid's nearest image
            ds.append(d)
        if separable:
            w = np.ones(m.values.shape)
            for d in ds:
                w = w * np.where(np.abs(d) < 2, kb(d * d), 0.0)
        else:
            r2 = ds[0] ** 2 + ds[1] ** 2 + ds[2] ** 2
            w = np.where(r2 < 4, kb(r2), 0.0)
        ref += vv * w
    np.testing.assert_allclose(m.values, ref, rtol=0, atol=1e-9)


def _forces_brute(x, cutoff, box=None, eps=1.0, sigma=1.0, q=None, shift=False):
    """Per body F, E, and Σ|term| of each (for the tolerance), the total energy and the virial."""
    n, dim = x.shape
    F = np.zeros((n, dim))
    E = np.zeros(n)
    Fa = np.zeros((n, dim))
    Ea = np.zeros(n)
    total = 0.0
    virial = 0.0
    for i in range(n):
        d = x[i] - x[i + 1:]
        if box is not None:
            d = d - box * np.round(d / box)
        r2 = (d * d).sum(axis=1)
        m = r2 < cutoff * cutoff
        d, r2 = d[m], r2[m]
        j = np.arange(i + 1, n)[m]
        if q is None:
            s6 = (sigma * sigma / r2) ** 3
            e = 4 * eps * (s6 * s6 - s6)
            if shift:
                sc = (sigma / cutoff) ** 6
                e = e - 4 * eps * (sc * sc - sc)
            f = 24 * eps * (2 * s6 * s6 - s6) / r2
        else:
            qq = q[i] * q[j]
            s = 1 - r2 / cutoff ** 2
            r = np.sqrt(r2)
            e = qq * s * s / r
            f = qq * (s * s / r2 + 4 * s / cutoff ** 2) / r
        F[i] += (f[:, None] * d).sum(axis=0)
        np.subtract.at(F, j, f[:, None] * d)
        E[i] += e.sum() / 2
        np.add.at(E, j, e / 2)
        Fa[i] += np.abs(f[:, None] * d).sum(axis=0)
        np.add.at(Fa, j, np.abs(f[:, None] * d))
        Ea[i] += np.abs(e).sum() / 2
        np.add.at(Ea, j, np.abs(e) / 2)
        total += e.sum()
        virial += (f * r2).sum()
    return F, E, Fa, Ea, total, virial


def _step(bound):
    """The exact sums' grid step for terms up to `bound` (twobody/exact_sums.hpp)."""
    import math
    return math.ldexp(1.0, math.frexp(bound * (1 + 1e-9))[1] - 62)


def _check(r, x, cutoff, box=None, eps=1.0, sigma=1.0, q=None, shift=False):
    """Each body within a few ulps of its terms plus half a grid step a partner (docs/exactness.md#forces)."""
    F, E, Fa, Ea, total, virial = _forces_brute(x, cutoff, box, eps, sigma, q, shift)
    c = max(r.fine, r.closest)
    if q is None:
        x6 = (sigma / c) ** 6
        bf = abs(eps) * 24 * (2 * x6 * x6 + x6) / c
        sc = (sigma / cutoff) ** 6
        be = 0.5 * (abs(eps) * 4 * (x6 * x6 + x6) + (abs(4 * eps * (sc * sc - sc)) if shift else 0))
    else:
        q2 = np.abs(q).max() ** 2
        bf = q2 * (1 / c ** 2 + 4 / cutoff ** 2)
        be = 0.5 * q2 / c
    p = r.partners[:, None]
    assert np.all(np.abs(r.forces - F) <= 1e-12 * Fa + p * _step(bf))
    assert np.all(np.abs(r.energy - E) <= 1e-12 * Ea + r.partners * _step(be))
    assert abs(r.total_energy - total) <= 1e-12 * Ea.sum() + 4 * r.partners.sum() * _step(be)
    assert r.virial == pytest.approx(virial, rel=1e-10, abs=r.partners.sum() * _step(bf * cutoff))


def _spread(rng, n, side, gap):
    x = []
    while len(x) < n:
        p = rng.uniform(0, side, 3)
        if all(((p - y) ** 2).sum() >= gap * gap for y in x):
            x.append(p)
    return np.array(x)


def test_forces_lennard_jones_periodic(rng):
    x = _spread(rng, 200, 6.0, 0.8)
    r = twobody.forces(x, cutoff=2.5, epsilon=1.2, sigma=1.0, box=6.0, threads=2)
    _check(r, x, 2.5, box=6.0, eps=1.2)
    forces, energy, totals = r
    assert forces.shape == (200, 3) and energy.shape == (200,) and set(totals) == {"energy", "virial"}
    # The same bits on one thread, and with the bodies in another order.
    one = twobody.forces(x, cutoff=2.5, epsilon=1.2, sigma=1.0, box=6.0, threads=1)
    assert np.array_equal(one.forces, r.forces) and np.array_equal(one.energy, r.energy)
    p = rng.permutation(200)
    shuffled = twobody.forces(x[p], cutoff=2.5, epsilon=1.2, sigma=1.0, box=6.0)
    assert np.array_equal(shuffled.forces, r.forces[p]) and shuffled.total_energy == r.total_energy


def test_forces_coulomb_open_and_shift(rng):
    x = _spread(rng, 150, 8.0, 0.3)
    q = rng.uniform(-1, 1, 150)
    r = twobody.forces(x, cutoff=3.0, potential="coulomb", charges=q)
    _check(r, x, 3.0, q=q)
    s = twobody.forces(x, cutoff=2.5, shift=True)
    _check(s, x, 2.5, shift=True)


def test_forces_errors():
    x = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 0, 0]])
    with pytest.raises(twobody.InputError, match="bodies 1 and 3 coincide"):
        twobody.forces(x, cutoff=2.5)
    with pytest.raises(twobody.ConfigError, match="half the periodic box"):
        twobody.forces(np.array([[0.5, 0.5, 0.5], [1.5, 0.5, 0.5]]), cutoff=2.5, box=4.0)
    with pytest.raises(twobody.ConfigError, match="charge"):
        twobody.forces(x[:2], cutoff=2.5, potential="coulomb")
