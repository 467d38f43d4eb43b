"""twobody.join and twobody.knn against the float64 rule computed independently in NumPy (oracle.py):
dimensions 1 to 128, float16/32/64, every layout, lattices with pairs exactly at eps, duplicates,
ties by index, every emit, scikit-learn's NearestNeighbors, errors, the array read in place, and
the CUDA backend equal to the CPU's."""

import _thread
import gc
import pickle
import sys
import weakref

import numpy as np
import pytest

import twobody as tb
import oracle
from support import assert_gil_released, gpu_usable


def assert_pairs(r, expected, what=""):
    i, j, d = expected
    np.testing.assert_array_equal(r.i, i, err_msg=f"{what}: i")
    np.testing.assert_array_equal(r.j, j, err_msg=f"{what}: j")
    np.testing.assert_array_equal(r.distance, d, err_msg=f"{what}: distance")
    assert r.total == len(r) == len(i), what


def expected_csr(i, j, d, n, symmetric):
    rows, cols, vals = (np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([d, d])) if symmetric \
        else (i, j, d)
    order = np.lexsort((cols, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    return indptr, cols[order], vals[order]


def assert_every_emit(a, eps, b=None, metric="euclidean", what="", **run):
    """Each emit of tb.join equal to what the oracle's pairs give."""
    i, j, d = oracle.join_pairs(a, eps, b, metric)
    n, n2 = len(a), len(a if b is None else b)
    assert_pairs(tb.join(a, eps, data2=b, metric=metric, **run), (i, j, d), what)
    csr = tb.join(a, eps, data2=b, metric=metric, emit="csr", **run)
    indptr, indices, distances = expected_csr(i, j, d, n, b is None)
    np.testing.assert_array_equal(csr.indptr, indptr, err_msg=f"{what}: indptr")
    np.testing.assert_array_equal(csr.indices, indices, err_msg=f"{what}: indices")
    np.testing.assert_array_equal(csr.distances, distances, err_msg=f"{what}: distances")
    assert csr.total == len(i) and csr.shape == (n, n2), what
    counts = tb.join(a, eps, data2=b, metric=metric, emit="counts", **run)
    if b is None:
        np.testing.assert_array_equal(counts.counts, np.bincount(i, minlength=n) + np.bincount(j, minlength=n))
        assert counts.counts2 is None
    else:
        np.testing.assert_array_equal(counts.counts, np.bincount(i, minlength=n), err_msg=what)
        np.testing.assert_array_equal(counts.counts2, np.bincount(j, minlength=n2), err_msg=what)
    assert counts.total == len(i), what
    total = tb.join(a, eps, data2=b, metric=metric, emit="total", **run)
    assert total == total.total == len(i), what


def eps_at_a_pair(a, b, metric, rng, quantile=0.05):
    """eps equal to one pair's distance near the given quantile: pairs at the boundary, where
    fl(eps * eps) may fall either side of their key."""
    keys = np.sort(oracle.vector_keys(a, b, metric).ravel())
    key = keys[int(quantile * (len(keys) - 1))]
    return float(np.sqrt(key)) if metric == "euclidean" else float(key)


# ---- joins against the oracle -----------------------------------------------------------------

@pytest.mark.parametrize("d", [1, 3, 17, 128])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_join_random_float64(rng, d, metric):
    a = rng.normal(size=(240, d)) * 3 + 1
    b = rng.normal(size=(170, d)) * 3 + 1
    assert_every_emit(a, eps_at_a_pair(a, a, metric, rng), metric=metric, what=f"self d={d}")
    assert_every_emit(a, eps_at_a_pair(a, b, metric, rng), b, metric=metric, what=f"cross d={d}")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_join_float32_and_float16_as_their_exact_float64(rng, dtype, metric):
    # The rule promotes each stored value exactly to float64: the oracle on the promoted values.
    a = (rng.normal(size=(200, 9)) * 4).astype(dtype)
    b = (rng.normal(size=(150, 9)) * 4).astype(dtype)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    eps = eps_at_a_pair(a64, a64, metric, rng, 0.1)
    assert_pairs(tb.join(a, eps, metric=metric), oracle.join_pairs(a64, eps, metric=metric), str(dtype))
    eps = eps_at_a_pair(a64, b64, metric, rng, 0.1)
    assert_pairs(tb.join(a, eps, data2=b, metric=metric), oracle.join_pairs(a64, eps, b64, metric), str(dtype))
    # Mixed element types in one cross join.
    other = b.astype(np.float32 if dtype == np.float16 else np.float16)
    assert_pairs(tb.join(a, eps, data2=other, metric=metric),
                 oracle.join_pairs(a64, eps, other.astype(np.float64), metric), "mixed")


def layouts(a):
    """The same vectors in every layout the engine reads in place or copies."""
    wide = np.zeros((a.shape[0], a.shape[1] + 3), a.dtype)
    wide[:, 1:a.shape[1] + 1] = a
    every_other = np.zeros((2 * a.shape[0], a.shape[1]), a.dtype)
    every_other[::2] = a
    spread = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
    spread[:, ::2] = a
    raw = np.zeros(a.nbytes + a.itemsize + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, a.dtype, a.size, offset=1).reshape(a.shape)
    unaligned[...] = a
    read_only = a.copy()
    read_only.flags.writeable = False
    reversed_rows = np.ascontiguousarray(a[::-1])[::-1]
    return {
        "fortran": np.asfortranarray(a),
        "row stride (columns of a wider array)": wide[:, 1:a.shape[1] + 1],
        "every other row": every_other[::2],
        "every other column": spread[:, ::2],
        "unaligned": unaligned,
        "big-endian": a.astype(a.dtype.newbyteorder(">")),
        "reversed rows": reversed_rows,
        "read-only": read_only,
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_layouts_give_the_c_order_result(rng, dtype):
    a = (rng.random((150, 6)) * 10).astype(dtype)
    b = (rng.random((90, 6)) * 10).astype(dtype)
    eps = 3.5
    ref = tb.join(a, eps)
    ref_cross = tb.join(a, eps, data2=b, emit="csr")
    ref_knn = tb.knn(a, 4)
    for name, x in layouts(a).items():
        np.testing.assert_array_equal(x, a)
        r = tb.join(x, eps)
        for col in ("i", "j", "distance"):
            np.testing.assert_array_equal(getattr(r, col), getattr(ref, col), err_msg=f"{name}: {col}")
        c = tb.join(a, eps, data2=layouts(b)[name], emit="csr")
        np.testing.assert_array_equal(c.indices, ref_cross.indices, err_msg=name)
        np.testing.assert_array_equal(c.distances, ref_cross.distances, err_msg=name)
        d, i = tb.knn(x, 4)
        np.testing.assert_array_equal(i, ref_knn.indices, err_msg=name)
        np.testing.assert_array_equal(d, ref_knn.distances, err_msg=name)


def test_broadcast_and_one_dimensional_and_integer_inputs(rng):
    row = rng.random(5)
    r = tb.join(np.broadcast_to(row, (7, 5)), 0.0, emit="total")  # stride 0: 7 equal rows, copied
    assert r == 21
    x = rng.random(300) * 100
    assert_pairs(tb.join(x, 0.7), oracle.join_pairs(x[:, None], 0.7), "1-D")
    lattice = rng.integers(0, 4, size=(120, 3))
    assert_pairs(tb.join(lattice, 2.0), oracle.join_pairs(lattice.astype(np.float64), 2.0), "int")
    assert_pairs(tb.join(lattice.astype(np.uint8), 2.0), oracle.join_pairs(lattice.astype(np.float64), 2.0), "uint8")
    assert_pairs(tb.join(lattice.tolist(), 2.0), oracle.join_pairs(lattice.astype(np.float64), 2.0), "lists")


def lattice(d, side=3):
    g = np.arange(float(side))
    return np.stack(np.meshgrid(*[g] * d, indexing="ij"), axis=-1).reshape(-1, d)


@pytest.mark.parametrize("d", [2, 4])
def test_lattice_with_pairs_exactly_at_eps(d):
    # Every key is an integer, exact in float64; with eps^2 an integer, many pairs lie exactly at
    # eps and are inside (inclusive). sqrt(2) and sqrt(3) square to just above or below 2 and 3.
    a = lattice(d)
    keys = oracle.vector_keys(a, a)
    for eps in (1.0, 2.0, np.sqrt(2.0), np.sqrt(3.0), np.sqrt(5.0)):
        if float(eps) ** 2 == round(float(eps) ** 2):
            assert np.count_nonzero(keys == float(eps) ** 2) > len(a)
        assert_every_emit(a, float(eps), what=f"lattice d={d} eps={eps}")
    half = a[::2]
    assert_every_emit(a, 2.0, half, what=f"lattice cross d={d}")


def test_duplicates_at_eps_zero(rng):
    pool = rng.normal(size=(40, 5))
    a = pool[rng.integers(0, len(pool), 300)]
    b = pool[rng.integers(0, len(pool), 200)]
    for metric in ("euclidean", "cosine"):
        assert_every_emit(a, 0.0, metric=metric, what=f"duplicates {metric}")
        assert_every_emit(a, 0.0, b, metric=metric, what=f"duplicates cross {metric}")
    r = tb.join(a, 0.0)
    assert r.total > 0 and np.all(r.distance == 0)
    assert np.all(np.all(a[r.i] == a[r.j], axis=1))


def test_csr_to_scipy_keeps_exact_duplicates():
    pytest.importorskip("scipy.sparse")
    a = np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 4.0], [3.0, 4.5]])
    csr = tb.join(a, 1.0, emit="csr")
    m = csr.to_scipy()
    assert m.shape == (4, 4) and m.nnz == 4 == 2 * csr.total  # (0, 1) at distance 0 stays stored
    np.testing.assert_array_equal(m.toarray(), [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0.5], [0, 0, 0.5, 0]])
    assert m[0, 1] == 0 and m.indices.tolist() == [1, 0, 3, 2]
    cross = tb.join(a, 5.0, data2=a[:2], emit="csr").to_scipy()
    assert cross.shape == (4, 2) and cross.nnz == 6


# ---- k nearest neighbours ---------------------------------------------------------------------

@pytest.mark.parametrize("d", [1, 3, 17, 128])
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_knn_random(rng, d, metric):
    a = rng.normal(size=(230, d))
    b = rng.normal(size=(160, d))
    for k in (1, 7):
        dist, idx = tb.knn(a, k, metric=metric)
        ed, ei = oracle.knn(a, k, metric=metric)
        np.testing.assert_array_equal(idx, ei)
        np.testing.assert_array_equal(dist, ed)
        dist, idx = tb.knn(a, k, data2=b, metric=metric)
        ed, ei = oracle.knn(a, k, b, metric)
        np.testing.assert_array_equal(idx, ei)
        np.testing.assert_array_equal(dist, ed)
    assert idx.shape == dist.shape == (230, 7) and idx.dtype == np.int64 and dist.dtype == np.float64


def test_knn_ties_by_index():
    # On a lattice most distances tie: the smaller index comes first; a point is not its own
    # neighbour, its duplicate is (at distance 0, first).
    a = lattice(3)
    for k in (6, 26):
        dist, idx = tb.knn(a, k)
        ed, ei = oracle.knn(a, k)
        np.testing.assert_array_equal(idx, ei)
        np.testing.assert_array_equal(dist, ed)
        assert not np.any(idx == np.arange(len(a))[:, None])
    dup = np.concatenate([a, a[:5]])
    dist, idx = tb.knn(dup, 3)
    assert idx[0, 0] == len(a) and dist[0, 0] == 0 and idx[len(a), 0] == 0
    dist, idx = tb.knn(a, 5, data2=a[::-1])
    ed, ei = oracle.knn(a, 5, a[::-1])
    np.testing.assert_array_equal(idx, ei)
    np.testing.assert_array_equal(dist, ed)


def test_knn_float16_and_float32(rng):
    for dtype in (np.float16, np.float32):
        a = rng.normal(size=(180, 12)).astype(dtype)
        ed, ei = oracle.knn(a.astype(np.float64), 5)
        dist, idx = tb.knn(a, 5)
        np.testing.assert_array_equal(idx, ei)
        np.testing.assert_array_equal(dist, ed)


def test_knn_equals_scikit_learn(rng):
    neighbors = pytest.importorskip("sklearn.neighbors")
    a = rng.normal(size=(500, 8))  # continuous: no ties
    q = rng.normal(size=(120, 8))
    nn = neighbors.NearestNeighbors(n_neighbors=6, algorithm="brute").fit(a)
    sd, si = nn.kneighbors(q)
    dist, idx = tb.knn(q, 6, data2=a)
    np.testing.assert_array_equal(idx, si)
    np.testing.assert_allclose(dist, sd, rtol=1e-12, atol=1e-12)
    sd, si = nn.kneighbors()  # the fitted set without each point itself
    dist, idx = tb.knn(a, 6)
    np.testing.assert_array_equal(idx, si)
    np.testing.assert_allclose(dist, sd, rtol=1e-12, atol=1e-12)
    cos = neighbors.NearestNeighbors(n_neighbors=4, algorithm="brute", metric="cosine").fit(a)
    sd, si = cos.kneighbors(q)
    dist, idx = tb.knn(q, 4, data2=a, metric="cosine")
    np.testing.assert_array_equal(idx, si)
    np.testing.assert_allclose(dist, sd, rtol=1e-10, atol=1e-12)


# ---- results, metadata, errors ----------------------------------------------------------------

def test_results_and_metadata(rng):
    a = rng.random((100, 4))
    r = tb.join(a, 0.3, backend="cpu", threads=1)
    assert r.backend == "cpu" and r.threads == 1 and r.seconds >= 0 and "vectors" in r.plan
    assert r.meta["n_points"] == 100 and r.meta["eps"] == 0.3 and r.meta["metric"] == "euclidean"
    assert r.i.dtype == r.j.dtype == np.int64 and r.distance.dtype == np.float64
    assert "JoinPairs" in repr(r) and "JoinCsr" in repr(tb.join(a, 0.3, emit="csr"))
    assert "JoinCounts" in repr(tb.join(a, 0.3, emit="counts"))
    total = tb.join(a, 0.3, emit="total")
    assert isinstance(total, int) and str(total) == str(r.total) and "JoinTotal" in repr(total)
    assert pickle.loads(pickle.dumps(total)) == total and pickle.loads(pickle.dumps(total)).backend == total.backend
    k = tb.knn(a, 3)
    d, i = k
    assert k.k == 3 and k.distances is d and k.indices is i and k.meta["k"] == 3 and "KnnResult" in repr(k)
    k2 = pickle.loads(pickle.dumps(k))
    np.testing.assert_array_equal(k2.indices, i)
    # The engine reports progress from its first thread, a join every 64 tiles of the pair space:
    # one thread, and enough vectors to make the tiles.
    big = rng.random((1000, 4))
    for f in (lambda p: tb.join(big, 0.05, threads=1, progress=p), lambda p: tb.knn(big, 3, threads=1, progress=p)):
        seen = []
        f(seen.append)
        assert seen and all(0 <= x <= 1 for x in seen)


def test_errors(rng):
    a = rng.random((20, 3))
    with pytest.raises(tb.ConfigError, match="3 and 4 dimensions"):
        tb.join(a, 0.5, data2=rng.random((5, 4)))
    with pytest.raises(tb.ConfigError, match="dimensions"):
        tb.knn(a, 2, data2=rng.random((5, 2)))
    with pytest.raises(tb.ConfigError, match="k = 20"):
        tb.knn(a, 20)  # 19 others
    with pytest.raises(tb.ConfigError, match="k = 6"):
        tb.knn(a, 6, data2=a[:5])
    for k in (0, -1, 2.5, True):
        with pytest.raises(tb.ConfigError):
            tb.knn(a, k)
    with pytest.raises(tb.ConfigError, match="eps"):
        tb.join(a, -0.1)
    with pytest.raises(tb.ConfigError, match="eps"):
        tb.join(a, float("nan"))
    bad = a.copy()
    bad[2, 1] = np.nan
    with pytest.raises(tb.InputError, match="data: row 3, column 2"):
        tb.join(bad, 0.5)
    with pytest.raises(tb.InputError, match="data2: row 3, column 2"):
        tb.knn(a, 2, data2=np.asfortranarray(bad))
    with pytest.raises(tb.InputError, match="queries: row 3, column 2"):
        tb.knn(bad, 2)
    bad16 = a.astype(np.float16)
    bad16[7, 0] = np.inf
    with pytest.raises(tb.InputError, match="row 8, column 1"):
        tb.join(bad16, 0.5)
    zero = a.copy()
    zero[4] = 0
    with pytest.raises(tb.InputError, match="vector 5 has norm 0"):
        tb.join(zero, 0.5, metric="cosine")
    with pytest.raises(tb.InputError, match="norm 0"):
        tb.knn(a, 2, data2=zero, metric="cosine")
    with pytest.raises(tb.ConfigError, match="metric"):
        tb.join(a, 0.5, metric="manhattan")
    with pytest.raises(tb.ConfigError, match="emit"):
        tb.join(a, 0.5, emit="dense")
    with pytest.raises(tb.InputError, match="dtype"):
        tb.join(a.astype(complex), 0.5)
    with pytest.raises(tb.InputError, match="shape"):
        tb.join(rng.random((4, 3, 2)), 0.5)
    with pytest.raises(tb.InputError, match="empty"):
        tb.join(np.empty((0, 3)), 0.5)
    with pytest.raises(tb.ResourceError):
        tb.join(a, 10.0, max_pairs=10)
    with pytest.raises(ValueError):  # every error class is also the built-in one
        tb.knn(a, 50)


def test_ctrl_c_and_the_gil(rng):
    # A join reports progress every 64 tiles of its pair space, k-NN after every block of queries:
    # sizes that make several reports on one thread.
    a = rng.random((20000, 2))

    def interrupt(f):  # as a Ctrl-C arriving during the run
        _thread.interrupt_main()

    for run in (lambda: tb.join(a, 0.001, threads=1, progress=interrupt),
                lambda: tb.knn(a[:3000], 5, threads=1, progress=interrupt)):
        with pytest.raises(KeyboardInterrupt):
            run()
    small = a[:200]
    assert_pairs(tb.join(small, 0.3), oracle.join_pairs(small, 0.3), "after Ctrl-C")

    b = rng.random((6000, 16))
    assert_gil_released(lambda: tb.join(b, 0.5, emit="total", threads=1, progress=False))


# ---- the array read in place ------------------------------------------------------------------

def test_c_order_rows_are_read_in_place(rng):
    # While the engine runs, it holds a reference to an array it reads in place and none to one
    # it copied: seen from the progress callable (called with the GIL, during the run).
    def held_during_run(x):
        counts = []
        tb.join(x, 0.2, emit="total", threads=1, progress=lambda f: counts.append(sys.getrefcount(x)))
        assert counts
        return counts[0] - sys.getrefcount(x)

    a32 = rng.random((1000, 8)).astype(np.float32)
    strided = rng.random((1000, 16)).astype(np.float32)[:, ::2]
    assert held_during_run(a32) > held_during_run(strided)
    # The same result as the float64 conversion, and the array free to go after the call.
    r = tb.join(a32, 0.2)
    ref = tb.join(a32.astype(np.float64), 0.2)
    for col in ("i", "j", "distance"):
        np.testing.assert_array_equal(getattr(r, col), getattr(ref, col))
    d, i = tb.knn(a32, 3)
    expected = oracle.knn(a32.astype(np.float64), 3)
    alive = weakref.ref(a32)
    del a32
    gc.collect()
    assert alive() is None  # the engine's reference was released
    np.testing.assert_array_equal(i, expected[1])  # the results own their memory
    np.testing.assert_array_equal(d, expected[0])


# ---- the CUDA backend -------------------------------------------------------------------------

@pytest.mark.skipif(not gpu_usable(), reason="no CUDA backend or no GPU")
def test_cuda_equals_cpu(rng):
    a = rng.normal(size=(400, 24)).astype(np.float32)
    b = rng.normal(size=(300, 24))
    for metric, eps in (("euclidean", 5.0), ("cosine", 0.6)):
        for emit in ("pairs", "csr", "counts", "total"):
            for second in (None, b):
                cpu = tb.join(a, eps, data2=second, metric=metric, emit=emit, backend="cpu")
                gpu = tb.join(a, eps, data2=second, metric=metric, emit=emit, backend="cuda")
                assert gpu.total == cpu.total
                assert "FP16 Gram tiles" in gpu.plan, gpu.plan  # d = 24: both metrics on the tensor cores
                for name in ("i", "j", "distance", "indptr", "indices", "distances", "counts", "counts2"):
                    if getattr(cpu, name, None) is not None:
                        np.testing.assert_array_equal(getattr(gpu, name), getattr(cpu, name),
                                                      err_msg=f"{metric} {emit} {name}")
        for second in (None, b):
            cd, ci = tb.knn(a, 8, data2=second, metric=metric, backend="cpu")
            gd, gi = tb.knn(a, 8, data2=second, metric=metric, backend="cuda")
            np.testing.assert_array_equal(gi, ci)
            np.testing.assert_array_equal(gd, cd)


def test_hybrid_equals_cpu(rng, monkeypatch):
    # Without a GPU: TWOBODY_HYBRID_FAKE_GPU makes the "GPU" worker the CPU backend on one thread,
    # so the queue of bands, the merge and the report run; bands of 7 rows.
    if not gpu_usable():
        monkeypatch.setenv("TWOBODY_HYBRID_FAKE_GPU", "1")
    monkeypatch.setenv("TWOBODY_HYBRID_BAND_ROWS", "7")
    a = rng.normal(size=(300, 24))
    b = rng.normal(size=(120, 24)).astype(np.float32)
    for second in (None, b):
        for emit in ("pairs", "counts", "total"):
            cpu = tb.join(a, 4.5, data2=second, emit=emit, backend="cpu")
            hyb = tb.join(a, 4.5, data2=second, emit=emit, backend="hybrid")
            assert hyb.total == cpu.total
            for name in ("i", "j", "distance", "counts", "counts2"):
                if getattr(cpu, name, None) is not None:
                    np.testing.assert_array_equal(getattr(hyb, name), getattr(cpu, name), err_msg=f"{emit} {name}")
            if emit != "total":
                assert hyb.meta["backend"] == "hybrid"
                assert len(hyb.meta["workers"]) == 2
                assert 0 <= hyb.meta["load_imbalance"] <= 1
                assert sum(w["rows"] for w in hyb.meta["workers"]) == len(a)
        cd, ci = tb.knn(a, 5, data2=second, backend="cpu")
        hd, hi = tb.knn(a, 5, data2=second, backend="hybrid")
        np.testing.assert_array_equal(hi, ci)
        np.testing.assert_array_equal(hd, cd)
    # 3-D: the point engine's slab pairs.
    p = rng.uniform(0, 10, size=(2000, 3))
    np.testing.assert_array_equal(tb.join(p, 0.4, emit="counts", backend="hybrid").counts,
                                  tb.join(p, 0.4, emit="counts", backend="cpu").counts)


def test_cli_join_streams_its_pairs_through_a_file(cli, tmp_path, rng):
    # `twobody join` spools the pairs to a temporary file as they are found and writes the output
    # from it: sorted by (i, j) when they fit the sort budget, else in the order found
    # (TWOBODY_PAIR_SORT_BYTES=0: every batch sorted, each pair once). Every format, the same pairs.
    import os
    import subprocess
    a = rng.standard_normal((3000, 24)) * 0.3 + rng.integers(0, 4, (3000, 1))
    a[:40] = np.round(a[:40])  # lattice rows: pairs exactly at eps
    np.save(tmp_path / "a.npy", a)
    eps = 2.0
    want = tb.join(a, eps, backend="cpu")
    assert len(want) > 2 * 65536  # several batches a thread
    for budget in (None, "0"):
        env = dict(os.environ)
        if budget is not None:
            env["TWOBODY_PAIR_SORT_BYTES"] = budget
        for ext in ("npz", "csv", "json"):
            out = tmp_path / f"p{budget}.{ext}"
            subprocess.run([cli, "join", "--data", str(tmp_path / "a.npy"), "--eps", str(eps), "--backend", "cpu",
                            "-o", str(out)], check=True, env=env)
            if ext == "npz":
                f = np.load(out)
                i, j, d = f["i"], f["j"], f["distance"]
            elif ext == "csv":
                t = np.loadtxt(out, delimiter=",", skiprows=1)
                i, j, d = t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2]
            else:
                import json
                c = json.loads(out.read_text())["columns"]
                i, j, d = np.array(c["i"]), np.array(c["j"]), np.array(c["distance"], dtype=float)
            if budget is None:
                assert np.all(np.diff(i * len(a) + j) > 0), ext  # sorted by (i, j)
            order = np.lexsort((j, i))
            np.testing.assert_array_equal(i[order], want.i, err_msg=ext)
            np.testing.assert_array_equal(j[order], want.j, err_msg=ext)
            np.testing.assert_array_equal(d[order], want.distance, err_msg=ext)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".twobody")]


def test_join_out_writes_the_pairs_through_a_file(rng, tmp_path, monkeypatch):
    # join(out=...) streams the pairs to the file (never all in memory): the same pairs as the
    # in-memory join, sorted within the sort budget, in the order found beyond it.
    a = rng.standard_normal((2500, 20)) * 0.3 + rng.integers(0, 3, (2500, 1))
    b = rng.standard_normal((900, 20)) * 0.3 + rng.integers(0, 3, (900, 1))
    for data2 in (None, b):
        want = tb.join(a, 1.9, data2=data2, backend="cpu")
        for budget in (None, "0"):
            if budget is None:
                monkeypatch.delenv("TWOBODY_PAIR_SORT_BYTES", raising=False)
            else:
                monkeypatch.setenv("TWOBODY_PAIR_SORT_BYTES", budget)
            r = tb.join(a, 1.9, data2=data2, backend="cpu", out=tmp_path / "p.npz")
            assert isinstance(r, tb.JoinFile) and r.total == len(want) and r.path.endswith("p.npz")
            f = np.load(tmp_path / "p.npz")
            order = np.lexsort((f["j"], f["i"]))
            if budget is None:
                assert np.array_equal(order, np.arange(len(order)))
            else:
                assert r.meta["pairs_order"].startswith("as found")
            np.testing.assert_array_equal(f["i"][order], want.i)
            np.testing.assert_array_equal(f["j"][order], want.j)
            np.testing.assert_array_equal(f["distance"][order], want.distance)
    r = tb.join(a, 1.9, backend="cpu", out=str(tmp_path / "p.csv"))
    t = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)
    assert len(t) == r.total
    with pytest.raises(tb.ConfigError, match="emit='pairs'"):
        tb.join(a, 1.0, emit="counts", out=tmp_path / "c.npz")
    with pytest.raises(tb.ConfigError, match="format="):
        tb.join(a, 1.0, out=tmp_path / "p.xyz")
    with pytest.raises(tb.OutputError):
        tb.join(a, 1.0, out=tmp_path / "missing" / "p.npz")
