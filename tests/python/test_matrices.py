"""twobody.matrix(kernel=...) against SciPy (cdist, pdist + squareform, pearsonr, spearmanr) in
float64: distances to 1e-12 relative, correlations and cosine distances to 1e-12 absolute (values
near 0 make a relative bound meaningless). Dimensions 1 to 5,419, float16/32/64, auto and cross,
ties, constant rows, offsets; the .npy and HDF5 outputs streamed with tiny blocks equal memory
byte for byte; bad inputs raise the right error and leave no file; and the CLI's matrix --kernel
and custom --emit matrix."""

import os
import subprocess

import numpy as np
import pytest

try:
    import h5py
except ImportError:  # the HDF5 file is then written, not read back
    h5py = None

import twobody as tb
from support import gpu_usable

scipy = pytest.importorskip("scipy")
from scipy.spatial.distance import cdist, pdist, squareform  # noqa: E402
from scipy.stats import pearsonr, rankdata, spearmanr  # noqa: E402

DISTANCES = {"l2": "euclidean", "sqeuclidean": "sqeuclidean", "l1": "cityblock", "chebyshev": "chebyshev"}


def corr(x, y):
    """SciPy's correlation distance turned back into r."""
    return 1 - cdist(x, y, "correlation")


def spearman(x, y):
    return corr(rankdata(x, axis=1), rankdata(y, axis=1))


def reference(kernel, x, y, p=3.0):
    if kernel in DISTANCES:
        return cdist(x, y, DISTANCES[kernel])
    if kernel == "lp":
        return cdist(x, y, "minkowski", p=p)
    if kernel == "cosine":
        return cdist(x, y, "cosine")
    if kernel == "dot":
        return x @ y.T
    if kernel == "pearson":
        return corr(x, y)
    return spearman(x, y)


def check(kernel, x, y=None, p=3.0, **kw):
    m = tb.matrix(x, data2=y, kernel=kernel, p=p, **kw)
    xx = np.asarray(x, dtype=np.float64)
    yy = xx if y is None else np.asarray(y, dtype=np.float64)
    ref = reference(kernel, xx, yy, p)
    assert m.shape == ref.shape and m.dtype == np.float64
    if kernel in DISTANCES or kernel == "lp":
        np.testing.assert_allclose(m, ref, rtol=1e-12, atol=0, err_msg=kernel)
    else:
        scale = 1.0 if kernel != "dot" else np.outer(np.linalg.norm(xx, axis=1), np.linalg.norm(yy, axis=1))
        assert np.all(np.abs(m - ref) <= 1e-12 * scale), kernel
    if y is None:
        assert np.array_equal(m, m.T), f"{kernel}: the mirrored half"
    return m


KERNELS = ["l2", "sqeuclidean", "lp", "l1", "chebyshev", "cosine", "dot", "pearson", "spearman"]


@pytest.mark.parametrize("d", [1, 3, 17, 960])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_against_scipy(rng, kernel, d):
    if d == 1 and kernel in ("pearson", "spearman", "cosine"):
        pytest.skip("one dimension: every row is constant (NaN), tested below")
    x = rng.standard_normal((41, d))
    y = rng.standard_normal((23, d))
    check(kernel, x)
    check(kernel, x, y)


@pytest.mark.parametrize("kernel", ["l2", "cosine", "pearson", "spearman", "lp"])
def test_seed_dimensions_small_n(rng, kernel):
    for d in (5419, 40000):
        check(kernel, rng.standard_normal((6, d)), rng.standard_normal((4, d)))


def test_pdist_and_scipy_stats(rng):
    x = rng.standard_normal((30, 50))
    np.testing.assert_allclose(tb.matrix(x, kernel="l2"), squareform(pdist(x)), rtol=1e-12, atol=0)
    np.testing.assert_allclose(tb.matrix(x, kernel="minkowski", p=1.5), squareform(pdist(x, "minkowski", p=1.5)),
                               rtol=1e-12, atol=0)
    r = tb.matrix(x, kernel="pearson")
    s = tb.matrix(x, kernel="spearman")
    for i, j in [(0, 1), (3, 17), (29, 5)]:
        assert abs(r[i, j] - pearsonr(x[i], x[j])[0]) <= 1e-12
        assert abs(s[i, j] - spearmanr(x[i], x[j])[0]) <= 1e-12
    np.testing.assert_allclose(s, spearmanr(x, axis=1)[0], rtol=0, atol=1e-12)


def test_float16_float32_inputs(rng):
    x32 = rng.standard_normal((25, 40)).astype(np.float32)
    x16 = (rng.integers(-64, 64, size=(19, 40)) / 16).astype(np.float16)
    for k in KERNELS:
        check(k, x32)
        check(k, x16)


def test_ties_offsets_constant_rows(rng):
    # Values on a grid of 1/8 around 1e6: the means are exact, so SciPy's pairwise sums and the
    # rule's ordered ones give the same centred rows.
    x = 1e6 + rng.integers(0, 5, size=(12, 31)) / 8
    for k in KERNELS:
        check(k, x)
    x[0] = 3.5  # a constant row: its correlations are NaN (0/0), as SciPy's
    x[1] = 0.0  # a zero row: its cosine distances are NaN
    with np.errstate(all="ignore"):
        r = tb.matrix(x, kernel="pearson")
        assert np.isnan(r[0]).all() and np.isnan(r[:, 0]).all() and not np.isnan(r[2:, 2:]).any()
        assert np.isnan(tb.matrix(x, kernel="spearman")[0, 3])
        c = tb.matrix(x, kernel="cosine")
        assert np.isnan(c[1]).all() and not np.isnan(c[2:, 2:]).any()
    one = x[2:3]
    for k in KERNELS:
        check(k, one)
        check(k, one, x[3:9])


def test_expression_kernel(rng):
    x = rng.standard_normal((20, 30))
    y = rng.standard_normal((9, 30))
    np.testing.assert_allclose(tb.matrix(x, data2=y, kernel="sum(abs(a - b)) / d"), cdist(x, y, "cityblock") / 30,
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(tb.matrix(x, kernel="sum(abs(a - b)^p)", p=3), cdist(x, x, "minkowski", p=3) ** 3,
                               rtol=1e-12, atol=0)
    asym = tb.matrix(x, kernel="sum(a - b)")
    np.testing.assert_allclose(asym, x.sum(1)[:, None] - x.sum(1)[None, :], rtol=0, atol=1e-12)


def test_streamed_files_equal_memory(rng, tmp_path, monkeypatch):
    x = rng.standard_normal((37, 64))
    y = rng.standard_normal((11, 64))
    for b in (None, y):
        mem = tb.matrix(x, data2=b, kernel="pearson")
        files = []
        for rows in ("1", "5", None):
            if rows:
                monkeypatch.setenv("TWOBODY_MATRIX_BLOCK_ROWS", rows)
            else:
                monkeypatch.delenv("TWOBODY_MATRIX_BLOCK_ROWS", raising=False)
            path = tmp_path / f"m{rows}.npy"
            m = tb.matrix(x, data2=b, kernel="pearson", out=path)
            assert isinstance(m, np.memmap) and np.array_equal(m, mem)
            files.append(path.read_bytes())
        assert files[0] == files[1] == files[2]
        f32 = tb.matrix(x, data2=b, kernel="pearson", out=tmp_path / "f.npy", dtype="float32")
        assert f32.dtype == np.float32 and np.array_equal(f32, mem.astype(np.float32))
        assert np.array_equal(tb.matrix(x, data2=b, kernel="pearson", dtype="float32"), mem.astype(np.float32))
        tb.matrix(x, data2=b, kernel="pearson", out=tmp_path / "m.h5")
        if h5py is not None:
            with h5py.File(tmp_path / "m.h5") as f:
                assert np.array_equal(f["matrix"][:], mem)


def test_zero_copy_input_and_host_budget(rng, monkeypatch, tmp_path):
    x = rng.standard_normal((30, 8))
    monkeypatch.setenv("TWOBODY_MATRIX_HOST_BYTES", "1000")
    with pytest.raises(tb.ResourceError, match="FILE.npy"):
        tb.matrix(x, kernel="l2")
    m = tb.matrix(x, kernel="l2", out=tmp_path / "ok.npy")  # a file is not bound by it
    np.testing.assert_allclose(m, cdist(x, x), rtol=1e-12, atol=0)


def test_errors_leave_no_file(rng, tmp_path):
    x = rng.standard_normal((6, 4))
    out = tmp_path / "m.npy"
    with pytest.raises(tb.InputError, match="dimensions"):
        tb.matrix(x, data2=rng.standard_normal((3, 5)), kernel="l2", out=out)
    bad = x.copy()
    bad[2, 1] = np.nan
    with pytest.raises(tb.InputError, match="row 3, column 2"):
        tb.matrix(bad, kernel="l2", out=out)
    with pytest.raises(tb.ConfigError, match="p >= 1"):
        tb.matrix(x, kernel="lp", p=0.5, out=out)
    with pytest.raises(tb.ConfigError, match="unknown kernel"):
        tb.matrix(x, kernel="pearsn", out=out)
    with pytest.raises(tb.BackendError):
        tb.matrix(x, kernel="mi", backend="cuda", out=out)  # (mutual information runs on the CPU only)
    with pytest.raises(tb.BackendError):
        tb.matrix(x, kernel="l2", backend="hybrid", out=out)
    with pytest.raises(tb.OutputError):
        tb.matrix(x, kernel="l2", out=tmp_path / "no" / "m.npy")
    # The GEMM route is the GPU's, for the dot-like kernels only; summation= goes with kernel=.
    with pytest.raises(tb.BackendError, match="--backend cuda"):
        tb.matrix(x, kernel="pearson", summation="gemm", backend="cpu", out=out)
    with pytest.raises(tb.ConfigError, match="dot-like"):
        tb.matrix(x, kernel="l1", summation="gemm", out=out)
    with pytest.raises(tb.ConfigError, match="auto, ordered or gemm"):
        tb.matrix(x, kernel="l2", summation="pairwise", out=out)
    with pytest.raises(tb.ConfigError, match="summation"):
        tb.matrix(x[:, :3], summation="gemm")
    assert list(tmp_path.iterdir()) == []
    # On the CPU, auto and ordered are the rule's bits.
    np.testing.assert_array_equal(tb.matrix(x, kernel="cosine", summation="ordered"), tb.matrix(x, kernel="cosine"))


def test_cli(cli, rng, tmp_path):
    x = rng.standard_normal((15, 70))
    y = rng.standard_normal((8, 70)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    run = lambda *a: subprocess.run([cli, *map(str, a)], capture_output=True, text=True)  # noqa: E731
    r = run("matrix", "--data", tmp_path / "x.npy", "--data2", tmp_path / "y.npy", "--kernel", "cosine",
            "-o", tmp_path / "c.npy", "--explain")
    assert r.returncode == 0, r.stderr
    assert "kernel: cosine" in r.stderr and "register tile" in r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), cdist(x, y.astype(np.float64), "cosine"), rtol=0, atol=1e-12)
    r = run("matrix", "--data", tmp_path / "x.npy", "--kernel", "spearman")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.loadtxt(r.stdout.splitlines()), spearman(x, x), rtol=0, atol=1e-12)
    r = run("custom", "--data", tmp_path / "x.npy", "--pair", "sum(abs(a-b)^q)^(1/q)", "--param", "q=3",
            "--emit", "matrix", "-o", tmp_path / "e.npy")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "e.npy"), cdist(x, x, "minkowski", p=3), rtol=1e-12, atol=0)
    r = run("matrix", "--data", tmp_path / "x.npy", "--kernel", "lp", "--p", "0.5", "-o", tmp_path / "bad.npy")
    assert r.returncode == 4 and "p >= 1" in r.stderr and not (tmp_path / "bad.npy").exists()
    r = run("matrix", "--data", tmp_path / "x.npy", "--kernel", "l2", "--backend", "cuda", "-o", tmp_path / "g.npy")
    if gpu_usable():  # (the module's build and the CLI's are the same one in every run of this suite)
        assert r.returncode == 0, r.stderr
        np.testing.assert_allclose(np.load(tmp_path / "g.npy"), cdist(x, x), rtol=0, atol=1e-12)
    else:
        assert r.returncode == 6 and not (tmp_path / "g.npy").exists()
    r = run("matrix", "--data", tmp_path / "x.npy", "--kernel", "pearson", "--summation", "gemm", "-o", tmp_path / "bad.npy")
    assert r.returncode == 6 and "--backend cuda" in r.stderr and not (tmp_path / "bad.npy").exists()
    r = run("matrix", "--data", tmp_path / "x.npy", "--kernel", "pearson", "--summation", "pairwise")
    assert r.returncode == 2 and "--summation" in r.stderr


def test_custom_emit_matrix(rng, tmp_path):
    x = rng.standard_normal((17, 12))
    y = rng.standard_normal((6, 12))
    table = {"x": x[:, 0], "y": x[:, 1], "w": np.abs(x[:, 2])}
    m = tb.custom(table, "a.w * b.w * sqrt((a.x - b.x)^2 + (a.y - b.y)^2)", emit="matrix", coordinates=["x", "y"])
    d = cdist(x[:, :2], x[:, :2])
    np.testing.assert_allclose(m, np.outer(table["w"], table["w"]) * d, rtol=1e-12, atol=0)
    m = tb.custom(x, "sum(abs(a - b)^q)^(1/q)", params={"q": 3}, data2=y, emit="matrix", out=tmp_path / "c.npy")
    assert isinstance(m, np.memmap)
    np.testing.assert_allclose(m, cdist(x, y, "minkowski", p=3), rtol=1e-12, atol=0)
    assert "register tile" in tb.custom(x, "dot(a, b)", emit="matrix", explain=True)
    with pytest.raises(tb.ConfigError, match="no bins"):
        tb.custom(x, "dot(a, b)", emit="matrix", bins=[0, 1])
    with pytest.raises(tb.ConfigError, match="emit='matrix'"):
        tb.custom(x, "dot(a, b)", emit="sum", out=tmp_path / "x.npy")
