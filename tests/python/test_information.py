"""twobody.mutual_information against Daub et al.'s estimator written with SciPy's B-splines
(scipy.interpolate.BSpline.design_matrix on the clamped uniform knots): orders 1 to 4, dependent,
independent, tied and constant rows, cross sets, units, and errors."""

import numpy as np
import pytest

import twobody as tb

scipy_interpolate = pytest.importorskip("scipy.interpolate")


def weights(row, bins, order):
    lo, hi = row.min(), row.max()
    top = bins - order + 1
    z = np.zeros_like(row) if hi == lo else (row - lo) / (hi - lo) * top
    knots = np.r_[np.zeros(order), np.arange(1, top), np.full(order, top)].astype(float)
    return scipy_interpolate.BSpline.design_matrix(z, knots, order - 1).toarray()  # d x bins


def entropy(p):
    p = p[p > 0]
    return -np.sum(p * np.log(p))


def reference(a, b, bins, order):
    wa = [weights(r, bins, order) for r in a]
    wb = [weights(r, bins, order) for r in b]
    d = a.shape[1]
    ha = np.array([entropy(w.mean(axis=0)) for w in wa])
    hb = np.array([entropy(w.mean(axis=0)) for w in wb])
    mi = np.array([[ha[i] + hb[j] - entropy(wa[i].T @ wb[j] / d) for j in range(len(b))] for i in range(len(a))])
    return mi, ha, hb


def data(n, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x[1] = np.sin(3 * x[0]) + 0.2 * rng.normal(size=d)  # dependent on row 0
    x[2] = np.round(x[2])                              # ties
    x[3] = 7.5                                          # constant
    x[4] = 1e6 + x[0] ** 2                              # an offset
    return x


@pytest.mark.parametrize("bins,order", [(10, 3), (6, 1), (8, 2), (7, 4)])
def test_equals_the_scipy_splines(bins, order):
    x = data(19, 300, bins * order)
    r = tb.mutual_information(x, bins=bins, order=order, unit="nats")
    mi, h, _ = reference(x, x, bins, order)
    np.testing.assert_allclose(r.entropy, h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.matrix, mi, rtol=1e-11, atol=1e-13)
    assert np.array_equal(r.matrix, r.matrix.T)
    assert r.matrix[0, 1] > r.matrix[0, 5] and r.matrix[3].max() == 0 and r.entropy[3] == 0


def test_cross_sets_and_bits():
    a, b = data(9, 200, 1), data(6, 200, 2)
    r = tb.mutual_information(a, data2=b)
    mi, ha, hb = reference(a, b, 10, 3)
    np.testing.assert_allclose(r.matrix, mi / np.log(2), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(r.entropy2, hb / np.log(2), rtol=1e-12, atol=1e-14)
    assert r.matrix.shape == (9, 6) and r.meta["unit"] == "bits"
    one = tb.mutual_information(a, threads=1)
    two = tb.mutual_information(a, threads=2)
    assert np.array_equal(one.matrix, two.matrix)


def test_errors():
    x = data(5, 20, 3)
    with pytest.raises(tb.ConfigError, match="order"):
        tb.mutual_information(x, order=0)
    with pytest.raises(tb.ConfigError, match="bins"):
        tb.mutual_information(x, bins=2, order=3)
    with pytest.raises(tb.ConfigError, match="unit"):
        tb.mutual_information(x, unit="bans")
    with pytest.raises(tb.InputError, match="paired"):
        tb.mutual_information(x, data2=data(5, 21, 4))
    x[2, 3] = np.inf
    with pytest.raises(tb.InputError):
        tb.mutual_information(x)
