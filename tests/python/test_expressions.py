"""twobody.custom, pair functions written as expressions, against the expression's literal float64
evaluation written out in NumPy: every emit, values and predicates, named columns from dicts and
structured arrays, parameters (scalars and vectors), where, cross sets, d = 1 to 17, offsets and
duplicates, the compiled and interpreted evaluators, the plan, and the errors."""

import math

import numpy as np
import pytest

import twobody as tb
from support import gpu_usable


def auto_pairs(n):
    i, j = np.triu_indices(n, 1)
    return i, j


def cross_pairs(n1, n2):
    i, j = np.meshgrid(np.arange(n1), np.arange(n2), indexing="ij")
    return i.ravel(), j.ravel()


def distance(a, b, i, j):
    """sqrt(sum((a - b)^2)) as the rule evaluates it: the dimension summed in stored order."""
    s = np.zeros(len(i))
    for k in range(a.shape[1]):
        d = a[i, k] - b[j, k]
        s = s + d * d
    return np.sqrt(s)


def histogram(values, edges):
    k = np.searchsorted(edges, values, side="right") - 1
    inside = (k >= 0) & (k < len(edges) - 1)
    return np.bincount(k[inside], minlength=len(edges) - 1)


@pytest.fixture(params=[1, 3, 17])
def points(request):
    rng = np.random.default_rng(1000 + request.param)
    a = rng.uniform(-1, 1, size=(300, request.param))
    a[:40] = np.round(a[:40] * 4) / 4  # a lattice: many equal distances, pairs on bin edges
    a[40:45] = a[0]  # duplicates
    return a


def test_histogram_of_a_distance(points):
    edges = np.linspace(0, 2.5, 11)
    r = tb.custom(points, "sqrt(sum((a - b)^2))", emit="histogram", bins=edges)
    i, j = auto_pairs(len(points))
    np.testing.assert_array_equal(r.count, histogram(distance(points, points, i, j), edges))
    np.testing.assert_array_equal(r.lo, edges[:-1])
    assert r.meta["emit"] == "histogram" and r.meta["class"] in ("decomposable", "dot-like", "pointwise")


def test_sum_of_a_kernel_with_a_parameter(points):
    h = 0.3
    r = tb.custom(points, "exp(-dot(a-b, a-b)/(2*h^2))", emit="sum", params={"h": h})
    i, j = auto_pairs(len(points))
    d = distance(points, points, i, j)
    expected = math.fsum(np.exp(-(d * d) / (2 * h * h)))
    assert r["pairs"][0] == len(i)  # (r.pairs is the metadata's pairs evaluated)
    assert r.sum[0] == pytest.approx(expected, rel=1e-12)


def test_vector_parameter_and_cross_sets():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(120, 5)) + 1e6, rng.normal(size=(90, 5)) + 1e6  # offsets of 10^6
    w = rng.uniform(0.5, 2, size=5)
    r = tb.custom(a, "sum(w*(a-b)^2)", data2=b, emit="pairs", bins=[0, 4], params={"w": w})
    i, j = cross_pairs(len(a), len(b))
    v = np.zeros(len(i))
    for k in range(5):
        d = a[i, k] - b[j, k]
        v = v + w[k] * (d * d)
    keep = (v >= 0) & (v < 4)
    np.testing.assert_array_equal(r.i, i[keep])
    np.testing.assert_array_equal(r.j, j[keep])
    np.testing.assert_array_equal(r.value, v[keep])


def table():
    rng = np.random.default_rng(11)
    n = 400
    t = np.zeros(n, dtype=[("x", "f8"), ("y", "f8"), ("t", "f8")])
    t["x"] = np.round(rng.uniform(0, 10, n), 1)
    t["y"] = rng.uniform(0, 10, n)
    t["t"] = rng.integers(0, 50, n).astype(float)
    return t


def test_non_equi_join_on_named_columns():
    t = table()
    pred = "a.t < b.t and abs(a.x - b.x) < 1"
    i, j = auto_pairs(len(t))
    keep = (t["t"][i] < t["t"][j]) & (np.abs(t["x"][i] - t["x"][j]) < 1)
    as_dict = {name: t[name] for name in t.dtype.names}
    for data in (t, as_dict):
        r = tb.custom(data, pred, emit="pairs")
        np.testing.assert_array_equal(r.i, i[keep])
        np.testing.assert_array_equal(r.j, j[keep])
        assert tb.custom(data, pred, emit="count").count[0] == keep.sum()
    # Coordinates chosen by name, the other columns still named.
    r = tb.custom(t, "sqrt(sum((a-b)^2)) < 2 and a.t == b.t", coordinates=["x", "y"], emit="count")
    d = distance(np.column_stack([t["x"], t["y"]]), np.column_stack([t["x"], t["y"]]), i, j)
    assert r.count[0] == ((d < 2) & (t["t"][i] == t["t"][j])).sum()


def test_per_point_max_with_where_over_two_sets():
    t = table()
    rng = np.random.default_rng(3)
    b = rng.uniform(0, 10, size=(150, 2))
    r = tb.custom(np.column_stack([t["x"], t["y"]]), "a[0] - b[0]", data2=b, where="a[1] < b[1]",
                  emit="per-point", per_point="max")
    i, j = cross_pairs(len(t), len(b))
    keep = t["y"][i] < b[j, 1]
    v = t["x"][i] - b[j, 0]
    n1 = len(t)
    expected_a = np.full(n1, np.nan)
    np.fmax.at(expected_a, i[keep], v[keep])
    count_a = np.bincount(i[keep], minlength=n1)
    assert np.array_equal(r.set, np.r_[np.zeros(n1), np.ones(len(b))])
    np.testing.assert_array_equal(r.count[:n1], count_a)
    np.testing.assert_array_equal(r.max[:n1], expected_a)
    expected_b = np.full(len(b), np.nan)
    np.fmax.at(expected_b, j[keep], v[keep])
    np.testing.assert_array_equal(r.max[n1:], expected_b)


def test_columns_beside_an_array_and_per_point_sum():
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, size=(200, 3))
    m = rng.uniform(1, 2, size=200)
    r = tb.custom(x, "a.m * b.m", columns={"m": m}, where="sqrt(sum((a-b)^2)) < 0.3", emit="per-point")
    i, j = auto_pairs(len(x))
    keep = distance(x, x, i, j) < 0.3
    v = (m[i] * m[j])[keep]
    expected = [math.fsum(v[(i[keep] == p) | (j[keep] == p)]) for p in range(len(x))]
    np.testing.assert_allclose(r.sum, expected, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(r.count, np.bincount(np.r_[i[keep], j[keep]], minlength=len(x)))


@pytest.mark.parametrize("codegen", ["off", "on"])
def test_the_evaluators_agree(codegen, points):
    edges = np.linspace(0, 2 * points.shape[1] + 1, 7)  # above the largest L3 distance, 2 d^(1/3)
    expected = tb.custom(points, "sum(abs(a-b)^p)^(1/p)", params={"p": 3}, bins=edges, cpu_codegen="off")
    r = tb.custom(points, "sum(abs(a-b)^p)^(1/p)", params={"p": 3}, bins=edges, cpu_codegen=codegen)
    np.testing.assert_array_equal(r.count, expected.count)
    assert r.count.sum() == len(points) * (len(points) - 1) // 2


@pytest.mark.parametrize("emit", ["sum", "count", "pairs", "per-point"])
def test_the_cells_of_a_cutoff_give_what_every_pair_gives(emit):
    # A --where on the points' distance lets the CPU visit neighbouring cells only; the brute
    # force (path='brute') and a float64 NumPy oracle agree with it. An asymmetric value: each
    # pair keeps the orientation of the brute force (a the point of lower index).
    rng = np.random.default_rng(11)
    x = np.round(rng.uniform(0, 20, size=(1500, 3)) * 4) / 4  # a lattice: distances on the cutoff
    t = rng.integers(0, 5, 1500).astype(float)
    pair, where = "a.t - 2 * b.t + a[0] * b[1]", "norm(a - b) <= 1.5"
    kw = dict(columns={"t": t}, where=where, emit=emit)
    if emit == "count":
        kw["bins"] = [-50, 50]
    if emit == "pairs":
        kw["bins"] = [-50, 50]
    if emit == "per-point":
        kw["per_point"] = "max"
    grid = tb.custom(x, pair, path="grid", **kw)
    brute = tb.custom(x, pair, path="brute", **kw)
    for name in grid.columns:
        np.testing.assert_array_equal(grid.columns[name], brute.columns[name], err_msg=name)
    assert "a cell grid" in tb.custom(x, pair, path="grid", explain=True, **kw)
    i, j = np.triu_indices(len(x), 1)
    d = np.sqrt(((x[i] - x[j]) ** 2).sum(axis=1))
    keep = d <= 1.5
    v = t[i] - 2 * t[j] + x[i, 0] * x[j, 1]
    if emit == "sum":
        assert int(grid.columns["pairs"][0]) == keep.sum()
        np.testing.assert_allclose(grid.columns["sum"][0], math.fsum(v[keep]), rtol=1e-14)
    if emit == "pairs":
        keep &= (v >= -50) & (v < 50)  # (the value's range, bins=[-50, 50])
        got = set(zip(grid.i.tolist(), grid.j.tolist()))
        assert got == set(zip(i[keep].tolist(), j[keep].tolist()))


def test_explain_says_what_runs():
    plan = tb.custom(np.ones((10, 2)) * np.arange(10)[:, None], "a[0] < b[0]", emit="count", explain=True)
    assert isinstance(plan, str) and "cpu" in plan.lower()


def test_errors():
    a = np.random.default_rng(0).uniform(size=(20, 2))
    with pytest.raises(tb.ConfigError, match="unknown name 'q'"):
        tb.custom(a, "a[0] + q", emit="sum")
    with pytest.raises(tb.ConfigError, match="needs a range"):
        tb.custom(a, "a[0] - b[0]", emit="count")
    with pytest.raises(tb.ConfigError, match="predicate"):
        tb.custom(a, "a[0] < b[0]", emit="count", bins=[0, 1])
    with pytest.raises(tb.ConfigError, match="emit"):
        tb.custom(a, "a[0] < b[0]", emit="matrix-ish")
    with pytest.raises(tb.ConfigError, match="per-point"):
        tb.custom(a, "a[0] - b[0]", emit="sum", per_point="max")
    with pytest.raises(tb.InputError, match="'m' has 3 values for 20 points"):
        tb.custom(a, "a.m", columns={"m": [1.0, 2.0, 3.0]}, emit="sum")
    bad = a.copy()
    bad[4, 1] = np.nan
    with pytest.raises(tb.InputError):
        tb.custom(bad, "a[0] - b[0]", emit="sum")
    with pytest.raises(tb.ConfigError, match="no column 'z'"):
        tb.custom(table(), "a.x - b.x", coordinates=["x", "z"], emit="sum")
    with pytest.raises(tb.ConfigError, match="parameter"):
        tb.custom(a, "a[0] * h", params={"h": "big"}, emit="sum")
    if not gpu_usable():  # (with a GPU the same call runs: test_gpu.py compares it with the CPU)
        with pytest.raises(tb.BackendError):
            tb.custom(a, "a[0] - b[0]", emit="sum", backend="cuda")
