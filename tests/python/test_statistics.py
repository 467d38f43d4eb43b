"""Every statistic against an independent float64 brute force in NumPy, on fresh random inputs."""

import numpy as np
import pytest

import twobody as tb
from oracle import angular_counts, histogram_sq, pair_d2, unit


def box_points(rng, n, L=100.0, d=3):
    return rng.random((n, d)) * L


def test_paircount_auto_cross_box_weights(rng):
    a, b = box_points(rng, 300), box_points(rng, 200)
    edges = np.sort(rng.random(6) * 40)
    d2, _ = pair_d2(a)
    np.testing.assert_array_equal(tb.paircount(a, edges).npairs, histogram_sq(d2, edges))
    d2, _ = pair_d2(a, b)
    np.testing.assert_array_equal(tb.paircount(a, edges, data2=b).npairs, histogram_sq(d2, edges))
    L = [100.0, 100.0, 100.0]
    d2, _ = pair_d2(a, box=L)
    r = tb.paircount(a, edges, box=100.0)
    np.testing.assert_array_equal(r.npairs, histogram_sq(d2, edges))
    w = rng.random(len(a)) + 0.5
    d2, (i, j) = pair_d2(a)
    counts, wsum = histogram_sq(d2, edges, w[i] * w[j])
    r = tb.paircount(a, edges, weights=w)
    np.testing.assert_array_equal(r.npairs, counts)
    np.testing.assert_allclose(r.wnpairs, wsum, rtol=1e-13)
    assert list(r.columns) == ["lo", "hi", "npairs", "wnpairs"]
    np.testing.assert_array_equal(r.lo, edges[:-1])
    np.testing.assert_array_equal(r.hi, edges[1:])


def test_sdh_default_and_given_bins(rng):
    a = box_points(rng, 400, 10.0)
    r = tb.sdh(a, nbins=16)
    assert r.npairs.sum() == 400 * 399 // 2  # the default bins span every pair
    assert r.lo[0] == 0 and r.hi[-1] >= np.sqrt(pair_d2(a)[0].max())
    edges = [0, 1, 2.5, 4, 9]
    np.testing.assert_array_equal(tb.sdh(a, edges).npairs, histogram_sq(pair_d2(a)[0], edges))


def test_rdf(rng):
    L, n = 20.0, 400
    a = box_points(rng, n, L)
    edges = np.linspace(0, 5, 6)
    r = tb.rdf(a, edges, L)
    d2, _ = pair_d2(a, box=[L] * 3)
    np.testing.assert_array_equal(r.npairs, histogram_sq(d2, edges))
    shell = 4 / 3 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    expected = n * (n - 1) / 2 * shell / L**3
    np.testing.assert_allclose(r.expected, expected, rtol=1e-12)
    np.testing.assert_allclose(r.g_r, r.npairs / expected, rtol=1e-12)


def sky_points(rng, n):
    ra = rng.random(n) * 360
    dec = np.degrees(np.arcsin(rng.random(n) * 2 - 1))
    return np.stack([ra, dec], axis=1)


def test_angular(rng):
    a, b = sky_points(rng, 300), sky_points(rng, 250)
    edges = [0.5, 3, 10, 30, 90]
    np.testing.assert_array_equal(tb.angular(a, edges).npairs, angular_counts(a, edges))
    np.testing.assert_array_equal(tb.angular(a, edges, data2=b).npairs, angular_counts(a, edges, b))


def test_xi_with_randoms_and_analytic(rng):
    d, r = box_points(rng, 250), box_points(rng, 400)
    edges = [2, 5, 10, 20, 30]
    x = tb.xi(d, edges, randoms=r)
    dd = histogram_sq(pair_d2(d)[0], edges)
    dr = histogram_sq(pair_d2(d, r)[0], edges)
    rr = histogram_sq(pair_d2(r)[0], edges)
    np.testing.assert_array_equal(x.npairs, dd)
    np.testing.assert_array_equal(x.dr, dr)
    np.testing.assert_array_equal(x.rr, rr)
    nd, nr = len(d), len(r)
    DD, DR, RR = dd / (nd * (nd - 1) / 2), dr / (nd * nr), rr / (nr * (nr - 1) / 2)
    np.testing.assert_allclose(x.xi_landy_szalay, (DD - 2 * DR + RR) / RR, rtol=1e-12)
    np.testing.assert_allclose(x.xi_natural, DD / RR - 1, rtol=1e-12)
    # A periodic box without randoms: the analytic RR, one column xi.
    x = tb.xi(d, edges, box=100)
    shell = 4 / 3 * np.pi * (np.array(edges[1:]) ** 3 - np.array(edges[:-1]) ** 3)
    rr = nd * (nd - 1) / 2 * shell / 100**3
    np.testing.assert_allclose(x.rr, rr, rtol=1e-12)
    np.testing.assert_allclose(x.xi, histogram_sq(pair_d2(d, box=[100] * 3)[0], edges) / rr - 1, rtol=1e-12)


def test_xi_jackknife(rng):
    d, r = box_points(rng, 300), box_points(rng, 600)
    x = tb.xi(d, [2, 5, 10, 20], randoms=r, jackknife=4)
    j = x.jackknife
    assert j.regions == 4 and j.samples.shape == (4, 3) and x.covariance.shape == (3, 3)
    R = 4
    mean = j.samples.mean(axis=0)
    dev = j.samples - mean
    np.testing.assert_allclose(x.covariance, (R - 1) / R * dev.T @ dev, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(x.xi_jk_sigma, np.sqrt(np.diag(x.covariance)), rtol=1e-10)
    # The data's own labels.
    labels = (d[:, 0] > 50).astype(int) + 2 * (d[:, 1] > 50)
    rl = (r[:, 0] > 50).astype(int) + 2 * (r[:, 1] > 50)
    x = tb.xi(d, [2, 5, 10, 20], randoms=tb.Catalogue(r, regions=rl), regions=labels)
    assert x.jackknife.regions == 4


def test_wtheta(rng):
    d, r = sky_points(rng, 300), sky_points(rng, 500)
    edges = [1, 5, 20, 60]
    w = tb.wtheta(d, edges, randoms=r, jackknife=3)
    np.testing.assert_array_equal(w.npairs, angular_counts(d, edges))
    np.testing.assert_array_equal(w.dr, angular_counts(d, edges, r))
    np.testing.assert_array_equal(w.rr, angular_counts(r, edges))
    assert {"w_landy_szalay", "w_jk_mean", "w_jk_sigma"} <= set(w.columns)
    assert w.covariance.shape == (3, 3)


def rppi_oracle(a, rp_edges, pimax, npi, box=None):
    auto_i, auto_j = np.triu_indices(len(a), 1)
    dx = [a[auto_i, k] - a[auto_j, k] for k in range(3)]
    if box is not None:
        dx = [np.where(np.abs(x) > box / 2, box - np.abs(x), np.abs(x)) for x in dx]
    rp2 = dx[0] * dx[0] + dx[1] * dx[1]
    pi = np.abs(dx[2])
    e2 = np.asarray(rp_edges, float) ** 2
    i = np.searchsorted(e2, rp2, side="right") - 1
    pe = pimax * np.arange(npi + 1) / npi
    k = np.searchsorted(pe, pi, side="right") - 1
    ok = (i >= 0) & (i < len(rp_edges) - 1) & (k >= 0) & (k < npi)
    return np.bincount(i[ok] * npi + k[ok], minlength=(len(rp_edges) - 1) * npi)


def test_rppi_smu(rng):
    a = box_points(rng, 300)
    edges = [1, 5, 10, 20]
    r = tb.rppi(a, edges, 20.0, npibins=4)
    np.testing.assert_array_equal(r.npairs, rppi_oracle(a, edges, 20.0, 4))
    assert list(r.columns)[:5] == ["rp_lo", "rp_hi", "pi_lo", "pi_hi", "npairs"]
    r = tb.rppi(a, edges, 20.0, npibins=4, box=100)
    np.testing.assert_array_equal(r.npairs, rppi_oracle(a, edges, 20.0, 4, box=100.0))
    s = tb.smu(a, edges, 5)
    i, j = np.triu_indices(len(a), 1)
    dx = a[i] - a[j]
    s2 = (dx * dx).sum(axis=1)
    mu = np.sqrt(dx[:, 2] ** 2 / s2)
    si = np.searchsorted(np.asarray(edges, float) ** 2, s2, side="right") - 1
    mk = np.minimum(np.floor(mu * 5).astype(int), 4)
    ok = (si >= 0) & (si < 3)
    np.testing.assert_array_equal(s.npairs, np.bincount(si[ok] * 5 + mk[ok], minlength=15))


def test_xi_rppi_wp_xi_smu(rng):
    a = box_points(rng, 400)
    edges = [1, 5, 10, 20]
    x = tb.xi_rppi(a, edges, 20.0, npibins=4, box=100)
    dd = rppi_oracle(a, edges, 20.0, 4, box=100.0)
    np.testing.assert_array_equal(x.npairs, dd)
    vol = np.pi * (x.rp_hi**2 - x.rp_lo**2) * 2 * (x.pi_hi - x.pi_lo)
    rr = 400 * 399 / 2 * vol / 100**3
    np.testing.assert_allclose(x.rr, rr, rtol=1e-12)
    np.testing.assert_allclose(x.xi, dd / rr - 1, rtol=1e-12)
    w = tb.wp(a, edges, 20.0, npibins=4, box=100)
    np.testing.assert_allclose(w.wp, 2 * (x.xi * (x.pi_hi - x.pi_lo)).reshape(3, 4).sum(axis=1), rtol=1e-12)
    m = tb.xi_smu(a, edges, 4, box=100, multipoles=True)
    f = tb.xi_smu(a, edges, 4, box=100)
    mu = 0.5 * (f.mu_lo + f.mu_hi)
    xi0 = (f.xi * (f.mu_hi - f.mu_lo)).reshape(3, 4).sum(axis=1)
    p2 = 0.5 * (3 * mu**2 - 1)
    xi2 = 5 * (f.xi * p2 * (f.mu_hi - f.mu_lo)).reshape(3, 4).sum(axis=1)
    np.testing.assert_allclose(m.xi0, xi0, rtol=1e-12)
    np.testing.assert_allclose(m.xi2, xi2, rtol=1e-10, atol=1e-14)
    # randoms and a jackknife of w_p
    r = box_points(rng, 600)
    w = tb.wp(a, edges, 20.0, npibins=4, randoms=r, jackknife=4)
    assert w.covariance.shape == (3, 3) and "wp_jk_sigma" in w.columns


def test_kk_nk(rng):
    a = box_points(rng, 300)
    kappa = rng.normal(size=300)
    edges = [2, 10, 20, 40]
    r = tb.kk(a, kappa, edges)
    d2, (i, j) = pair_d2(a)
    e2 = np.asarray(edges, float) ** 2
    k = np.searchsorted(e2, d2, side="right") - 1
    ok = (k >= 0) & (k < 3)
    num = np.bincount(k[ok], weights=(kappa[i] * kappa[j])[ok], minlength=3)
    np.testing.assert_array_equal(r.npairs, np.bincount(k[ok], minlength=3))
    np.testing.assert_allclose(r.xi_kk, num / r.npairs, rtol=1e-12)
    field = box_points(rng, 200)
    kf = rng.normal(size=200)
    r = tb.nk(a, field, kf, edges)
    d2, _ = pair_d2(a, field)
    k = np.searchsorted(e2, d2, side="right") - 1
    ok = (k >= 0) & (k < 3)
    kj = np.broadcast_to(kf[None, :], (300, 200)).ravel()
    np.testing.assert_allclose(r.xi_nk, np.bincount(k[ok], weights=kj[ok], minlength=3) / r.npairs, rtol=1e-12)


def test_neighbours_matrix_kde(rng):
    a = box_points(rng, 200, 10.0)
    b = box_points(rng, 150, 10.0)
    full = np.sqrt(((a[:, None, :] - a[None, :, :]) ** 2).sum(axis=2))
    d2 = ((a[:, None, :] - a[None, :, :]) ** 2).sum(axis=2)
    n = tb.neighbours(a, 2.0, rmin=0.5)
    expected = ((d2 >= 0.25) & (d2 < 4.0)).sum(axis=1) - 0  # the diagonal (0) is below rmin
    np.testing.assert_array_equal(n.count, expected)
    assert list(n.columns) == ["set", "index", "count"]
    m = tb.matrix(a, data2=b)
    np.testing.assert_allclose(m.matrix, np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)), rtol=1e-15)
    assert m.matrix.shape == (200, 150)
    np.testing.assert_allclose(tb.matrix(a).matrix, full, rtol=1e-15)
    s = sky_points(rng, 50)
    u = unit(s)
    ang = np.degrees(np.arccos(np.clip(u @ u.T, -1, 1)))
    np.testing.assert_allclose(tb.matrix(s, sky=True).matrix, ang, atol=1e-5)
    h = 0.7
    k = tb.kde(a, h)
    K = np.exp(-d2 / (2 * h * h)) * (d2 < (5 * h) ** 2)
    np.fill_diagonal(K, 0)
    np.testing.assert_allclose(k.density, K.sum(axis=1), rtol=1e-12)
    y = rng.normal(size=200)
    k = tb.kde(a, h, kernel="epanechnikov", values=y)
    K = np.clip(1 - d2 / (h * h), 0, None) * (d2 < h * h)
    np.fill_diagonal(K, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        reg = (K * y[None, :]).sum(axis=1) / K.sum(axis=1)
    np.testing.assert_allclose(k.regression, reg, rtol=1e-12)


def test_devices_split_equals_one_run(rng, monkeypatch):
    """devices= splits the pairs over devices: here 3 simulated ones (each the CPU backend on one
    thread), the same bits as one run; bad lists are ConfigError."""
    a, b = box_points(rng, 2000), box_points(rng, 1500)
    w = rng.random(len(a)) + 0.5
    edges = np.linspace(0.5, 12, 7)
    one = tb.paircount(a, edges, weights=w)
    one_cross = tb.paircount(a, edges, data2=b)
    monkeypatch.setenv("TWOBODY_SIMULATED_DEVICES", "3")
    assert tb.visible_devices() == [0, 1, 2]
    for devices in ("all", [0, 2], [1, 1, 0], 2):
        r = tb.paircount(a, edges, weights=w, devices=devices)
        np.testing.assert_array_equal(r.npairs, one.npairs)
        np.testing.assert_array_equal(r.wnpairs, one.wnpairs)  # exact sums: bit for bit
        np.testing.assert_array_equal(tb.paircount(a, edges, data2=b, devices=devices).npairs, one_cross.npairs)
    for bad in ([0, 3], "some", [0.5], True):
        with pytest.raises(tb.ConfigError):
            tb.paircount(a, edges, devices=bad)
