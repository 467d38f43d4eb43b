"""Inputs (dtypes, layouts, columns, adversarial points), errors, cancellation, the GIL, the
result's extras, and the CLI's columns on the same data."""

import _thread
import csv
import io
import json
import subprocess
import time

import numpy as np
import pytest

import twobody as tb
from support import assert_gil_released
from oracle import histogram_sq, pair_d2


def test_lattice_on_bin_edges():
    # Integer lattice: every squared distance is an integer, exact in float64, and the edges are
    # square roots of integers, many pairs exactly on an edge (half-open: counted in the upper bin).
    g = np.arange(6.0)
    a = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    edges = np.sqrt(np.array([0.5, 1, 2, 3, 4, 5, 9]))
    d2, _ = pair_d2(a)
    e2 = edges**2
    assert np.isin(d2, e2).sum() > 1000
    for path in ("brute", "grid"):
        r = tb.paircount(a, edges, path=path)
        # the engine compares d2 with the squared edges as float64 rounds them
        np.testing.assert_array_equal(r.npairs, histogram_sq(d2, edges))
    r = tb.paircount(a, [1, 2, 3], box=6.0)
    np.testing.assert_array_equal(r.npairs, histogram_sq(pair_d2(a, box=[6.0] * 3)[0], [1, 2, 3]))


def test_huge_offsets(rng):
    # Points far from the origin: differences of large coordinates; the engine must not lose them.
    a = rng.random((300, 3)) * 10 + 1e8
    edges = [0.5, 2, 4, 8]
    np.testing.assert_array_equal(tb.paircount(a, edges).npairs, histogram_sq(pair_d2(a)[0], edges))


def test_float32_and_layouts_and_columns(rng):
    a64 = rng.random((500, 3)) * 50
    a32 = a64.astype(np.float32)
    edges = [1, 3, 7, 12]
    ref32 = tb.paircount(a32.astype(np.float64), edges).npairs
    np.testing.assert_array_equal(tb.paircount(a32, edges).npairs, ref32)
    ref = tb.paircount(a64, edges).npairs
    for x in (np.asfortranarray(a64), np.ascontiguousarray(a64), a64[::1], (a64[:, 0], a64[:, 1], a64[:, 2]),
              np.asfortranarray(a64).astype(">f8"), (a64 * 1).tolist()):
        np.testing.assert_array_equal(tb.paircount(x, edges).npairs, ref)
    # a strided view (every other point) and integers
    np.testing.assert_array_equal(tb.paircount(a64[::2], edges).npairs, tb.paircount(a64[::2].copy(), edges).npairs)
    ints = rng.integers(0, 20, size=(200, 3))
    np.testing.assert_array_equal(tb.paircount(ints, edges).npairs, histogram_sq(pair_d2(ints * 1.0)[0], edges))


def test_inputs_are_not_modified_and_read_only_is_fine(rng):
    a = rng.random((200, 3)) * 10
    a.setflags(write=False)
    before = a.copy()
    tb.paircount(a, [0, 1, 2], box=10)
    np.testing.assert_array_equal(a, before)


def test_bin_file(tmp_path, rng):
    a = rng.random((200, 3))
    f = tmp_path / "bins.txt"
    f.write_text("0.1 0.2\n0.2 0.5\n0.5 0.9\n")
    r = tb.paircount(a, f)
    np.testing.assert_array_equal(r.lo, [0.1, 0.2, 0.5])
    np.testing.assert_array_equal(r.npairs, tb.paircount(a, [0.1, 0.2, 0.5, 0.9]).npairs)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda a: tb.paircount(np.zeros((2, 2, 2)), [0, 1]), tb.InputError),
        (lambda a: tb.paircount(a.astype(complex), [0, 1]), tb.InputError),
        (lambda a: tb.paircount(np.array([["a", "b"]]), [0, 1]), tb.InputError),
        (lambda a: tb.paircount(np.where(np.arange(30)[:, None] == 7, np.nan, a), [0, 1]), tb.InputError),
        (lambda a: tb.paircount(np.where(np.arange(30)[:, None] == 7, np.inf, a), [0, 1]), tb.InputError),
        (lambda a: tb.paircount((a[:, 0], a[:5, 1]), [0, 1]), tb.InputError),
        (lambda a: tb.paircount(a, [0, 1], weights=np.ones(3)), tb.InputError),
        (lambda a: tb.paircount(a, [1, 0.5]), tb.ConfigError),
        (lambda a: tb.paircount(a, [0, np.nan]), tb.ConfigError),
        (lambda a: tb.paircount(a, [0.5]), tb.ConfigError),
        (lambda a: tb.paircount(a, [0, 0.6], box=1.0), tb.ConfigError),
        (lambda a: tb.paircount(a, [0, 0.1], box=[1.0, 1.0]), tb.ConfigError),
        (lambda a: tb.paircount(np.zeros((3, 9)), [0, 1]), tb.ConfigError),
        (lambda a: tb.paircount(a, "/nonexistent/bins.txt"), tb.InputError),
        (lambda a: tb.xi(a, [0.1, 0.2]), tb.ConfigError),
        (lambda a: tb.xi(a, [0.1, 0.2], randoms=a, jackknife=1), tb.ConfigError),
        (lambda a: tb.xi(a, [0.1, 0.2], randoms=a, estimator="best"), tb.ConfigError),
        (lambda a: tb.angular(np.array([[0.0, 95.0], [1.0, 2.0]]), [0, 1]), tb.InputError),
        (lambda a: tb.kde(a, -1.0), tb.ConfigError),
        (lambda a: tb.paircount(a, [0, 1], backend="gpu"), tb.ConfigError),
    ],
)
def test_error_classes(call, error):
    a = np.random.default_rng(3).random((30, 3))
    with pytest.raises(error) as e:
        call(a)
    assert str(e.value)
    assert isinstance(e.value, tb.TwobodyError)


def test_error_bases_and_backend_error():
    assert issubclass(tb.InputError, ValueError) and issubclass(tb.ConfigError, ValueError)
    assert issubclass(tb.ResourceError, MemoryError) and issubclass(tb.BackendError, RuntimeError)
    if "cuda" not in tb.available_backends():
        with pytest.raises(tb.BackendError, match="cuda"):
            tb.paircount(np.zeros((4, 3)), [0, 1], backend="cuda")


def test_resource_error():
    # A dense matrix larger than the machine's memory is refused before anything is allocated.
    n = 4_000_000
    a = np.broadcast_to(np.zeros(1), (n,))  # one coordinate, no memory of its own
    with pytest.raises(tb.ResourceError):
        tb.matrix(a)


def test_message_is_the_engines():
    with pytest.raises(tb.ConfigError, match=r"bin edges must increase strictly"):
        tb.paircount(np.zeros((3, 3)), [2, 1])


def test_ctrl_c_stops_the_run_cleanly(rng):
    a = rng.random((40000, 3))
    calls = []

    def interrupt(f):  # as a Ctrl-C arriving during the run
        calls.append(f)
        if len(calls) == 1:
            _thread.interrupt_main()

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tb.paircount(a, [0, 0.5], threads=2, path="brute", progress=interrupt)
    assert time.monotonic() - t0 < 20
    # the engine is whole afterwards
    small = a[:300]
    np.testing.assert_array_equal(tb.paircount(small, [0, 0.5]).npairs, histogram_sq(pair_d2(small)[0], [0, 0.5]))


def test_progress_callable_and_its_exception(rng):
    a = rng.random((20000, 3))
    seen = []
    tb.paircount(a, [0, 0.1], path="brute", progress=seen.append)
    assert seen and all(0 <= f <= 1 for f in seen) and seen == sorted(seen)

    def fail(f):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tb.paircount(a, [0, 0.1], path="brute", progress=fail)


def test_gil_released_while_the_engine_runs(rng):
    a = rng.random((30000, 3))
    assert_gil_released(lambda: tb.paircount(a, [0, 0.5], path="brute", threads=1, progress=False))


def test_metadata_pandas_plot(rng):
    d, r = rng.random((300, 3)) * 100, rng.random((600, 3)) * 100
    x = tb.xi(d, [2, 5, 10, 20], randoms=r, jackknife=4)  # backend 'auto': the GPU where there is one
    assert x.backend in tb.available_backends() and x.pairs > 0 and x.seconds >= 0 and "backend" in x.plan and x.device
    assert "xi_landy_szalay" in dir(x) and len(x) == 3
    with pytest.raises(AttributeError, match="no column"):
        x.nonexistent
    pd = pytest.importorskip("pandas")
    df = x.to_pandas()
    assert list(df.columns) == list(x.columns) and df.attrs["meta"]["backend"] == x.backend
    assert isinstance(df, pd.DataFrame)


def test_plot(rng):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    d, r = rng.random((300, 3)) * 100, rng.random((600, 3)) * 100
    ax = tb.xi(d, tb.log_bins(2, 20, 4), randoms=r, jackknife=4).plot()
    assert ax.get_xlabel() == "r" and ax.get_ylabel() == "ξ(r)" and ax.get_xscale() == "log"
    ax = tb.xi_rppi(d, [1, 5, 10], 10.0, npibins=2, box=100).plot()
    assert ax.get_ylabel() == "π"


# ---- the CLI's columns on the same data -------------------------------------------------------

def cli_table(cli, args):
    """The CLI's table: its CSV header's order and its JSON values (doubles that round-trip)."""
    header = subprocess.run([cli, *args, "--format", "csv"], check=True, capture_output=True, text=True).stdout
    names = next(csv.reader(io.StringIO(header)))
    out = json.loads(subprocess.run([cli, *args, "--format", "json"], check=True, capture_output=True,
                                    text=True).stdout)
    return names, {k: np.array([np.nan if v is None else v for v in vals]) for k, vals in out["columns"].items()}


def same_as_cli(result, names, cols):
    assert list(result.columns) == names
    for name in names:
        np.testing.assert_array_equal(np.asarray(result.columns[name], float), cols[name], err_msg=name)


def test_columns_equal_the_clis(cli, tmp_path, rng):
    d = rng.random((400, 4)) * 100
    d[:, 3] += 0.5
    r = rng.random((700, 3)) * 100
    np.savetxt(tmp_path / "d.txt", d, fmt="%.17g")
    np.savetxt(tmp_path / "r.txt", r, fmt="%.17g")
    D, R = str(tmp_path / "d.txt"), str(tmp_path / "r.txt")
    bins = ["--rmin", "1", "--rmax", "30", "--nbins", "6", "--log"]
    edges = tb.log_bins(1, 30, 6)
    xyz, w = d[:, :3], d[:, 3]

    names, cols = cli_table(cli, ["paircount", "--data", D, "--columns", "1,2,3", "--weights-column", "4", *bins,
                                  "--box", "100"])
    same_as_cli(tb.paircount(xyz, edges, weights=w, box=100), names, cols)

    names, cols = cli_table(cli, ["rdf", "--data", D, "--columns", "1,2,3", *bins, "--box", "100"])
    same_as_cli(tb.rdf(xyz, edges, 100), names, cols)

    names, cols = cli_table(cli, ["xi", "--data", D, "--columns", "1,2,3", "--randoms", R, *bins, "--jackknife", "4"])
    same_as_cli(tb.xi(xyz, edges, randoms=r, jackknife=4), names, cols)

    names, cols = cli_table(cli, ["wp", "--data", D, "--columns", "1,2,3", *bins, "--pimax", "20", "--npibins", "4",
                                  "--box", "100"])
    same_as_cli(tb.wp(xyz, edges, 20.0, npibins=4, box=100), names, cols)

    names, cols = cli_table(cli, ["xi-smu", "--data", D, "--columns", "1,2,3", *bins, "--nmu-bins", "4", "--box",
                                  "100", "--multipoles"])
    same_as_cli(tb.xi_smu(xyz, edges, 4, box=100, multipoles=True), names, cols)

    names, cols = cli_table(cli, ["kk", "--data", D, "--columns", "1,2", "--kappa-column", "3", *bins])
    same_as_cli(tb.kk(d[:, :2], d[:, 2], edges), names, cols)

    names, cols = cli_table(cli, ["neighbours", "--data", D, "--columns", "1,2,3", "--rmax", "10"])
    same_as_cli(tb.neighbours(xyz, 10.0), names, cols)

    names, cols = cli_table(cli, ["kde", "--data", D, "--columns", "1,2,3", "--bandwidth", "3"])
    same_as_cli(tb.kde(xyz, 3.0), names, cols)

    sky = np.stack([rng.random(300) * 360, np.degrees(np.arcsin(rng.random(300) * 2 - 1))], axis=1)
    sr = np.stack([rng.random(500) * 360, np.degrees(np.arcsin(rng.random(500) * 2 - 1))], axis=1)
    np.savetxt(tmp_path / "s.txt", sky, fmt="%.17g")
    np.savetxt(tmp_path / "sr.txt", sr, fmt="%.17g")
    tbins = ["--rmin", "1", "--rmax", "40", "--nbins", "5", "--log"]
    names, cols = cli_table(cli, ["wtheta", "--data", str(tmp_path / "s.txt"), "--randoms", str(tmp_path / "sr.txt"),
                                  *tbins])
    same_as_cli(tb.wtheta(sky, tb.log_bins(1, 40, 5), randoms=sr), names, cols)


def test_device_memory_limit_sizes_and_refusals(rng):
    """set_device_memory_limit takes bytes, a size text or None, refuses anything else with the
    package's errors, and leaves a CPU run's results as they were."""
    a = rng.random((2000, 3)) * 10
    edges = tb.linear_bins(0.1, 2, 5)
    before = tb.paircount(a, edges, backend="cpu")
    try:
        tb.set_device_memory_limit("2G")
        assert tb.device_memory_limit() == 2 << 30
        tb.set_device_memory_limit(3 << 30)
        assert tb.device_memory_limit() == 3 << 30
        tb.set_device_memory_limit("1.5GiB")
        assert tb.device_memory_limit() == 3 << 29
        np.testing.assert_array_equal(tb.paircount(a, edges, backend="cpu").npairs, before.npairs)
        for bad in ("2X", "", "100", "-1G", "nan"):
            with pytest.raises(tb.ConfigError, match="device memory limit"):
                tb.set_device_memory_limit(bad)
        for bad in (1.5, True, [1]):
            with pytest.raises(TypeError):
                tb.set_device_memory_limit(bad)
        tb.set_device_memory_limit(None)
        assert tb.device_memory_limit() == 0
    finally:
        tb.set_device_memory_limit(0)
