"""twobody.read: the CLI's readers from Python (formats, columns by number and name, weights and
regions, errors), and a statistic of what it read equal to the CLI's on the same file."""

import json
import subprocess

import numpy as np
import pytest

import twobody
from conftest import ROOT


def test_text_npy_columns_weights_regions(tmp_path, rng):
    pts = rng.random((300, 3)) * 10 + 1e8  # a huge offset: read as written, bit for bit
    w = rng.random(300) + 0.5
    lab = rng.integers(0, 5, 300)
    text = tmp_path / "cat.txt"
    with open(text, "w") as f:
        f.write("x y z w region\n")
        for p, wi, li in zip(pts, w, lab):
            f.write(f"{float(p[0])!r} {float(p[1])!r} {float(p[2])!r} {float(wi)!r} {li}\n")
    c = twobody.read(text, [1, 2, 3], weights=4, regions=5)
    assert np.array_equal(c.points, pts) and np.array_equal(c.weights, w)
    assert np.array_equal(c.regions, lab)
    assert np.array_equal(twobody.read(text, ["z", "x"]).points, pts[:, [2, 0]])
    npy = tmp_path / "cat.npy"
    np.save(npy, pts.astype(np.float32))
    assert np.array_equal(twobody.read(npy).points, pts.astype(np.float32).astype(np.float64))


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(twobody.InputError, match="cannot open"):
        twobody.read(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 3\n4 1e400 6\n")
    with pytest.raises(twobody.InputError, match="bad.txt:2: column 2"):
        twobody.read(bad)
    with pytest.raises(twobody.ConfigError, match="numbers or names"):
        twobody.read(bad, [1, "y"])


def test_the_shared_mock_as_the_cli_reads_it(cli):
    mock = ROOT.parent / "shared" / "data" / "Mr19_mock_northonly.rdcz.ff"
    if not mock.exists():
        pytest.skip("the shared mock is not here")
    c = twobody.read(mock, [1, 2])
    assert c.points.shape == (84383, 2)
    bins = twobody.log_bins(0.1, 10.0, 8)
    r = twobody.angular(c.points, bins, backend="cpu")
    out = subprocess.run([cli, "angular", "--data", f"{mock}", "--columns", "1,2", "--rmin", "0.1", "--rmax", "10",
                          "--nbins", "8", "--log", "--backend", "cpu", "--format", "json"],
                         capture_output=True, text=True, check=True)
    assert np.array_equal(np.array(json.loads(out.stdout)["columns"]["npairs"]), r.npairs)


def test_generate_and_randoms_like_equal_the_cli(cli, tmp_path):
    for args, kw in ((["uniform", "-n", "500", "--box", "50", "--seed", "4"], dict(box=50.0, seed=4)),
                     (["clustered", "-n", "400", "--dim", "2", "--seed", "9", "--cluster", "blobs", "--blobs", "5"],
                      dict(dim=2, seed=9, cluster="blobs", blobs=5)),
                     (["clustered", "-n", "300", "--sky", "--seed", "2"], dict(sky=True, seed=2)),
                     (["concentrated", "-n", "300", "--seed", "3"], dict(seed=3))):
        path = tmp_path / "g.npy"
        subprocess.run([cli, "generate", *args, "-o", str(path)], check=True, capture_output=True)
        n = int(args[args.index("-n") + 1])
        assert np.array_equal(twobody.generate(args[0], n, **kw), np.load(path)), args
    sky = twobody.generate("clustered", 2000, sky=True, seed=5)
    np.save(tmp_path / "sky.npy", sky)
    subprocess.run([cli, "generate", "randoms", "--like", str(tmp_path / "sky.npy"), "--sky", "-n", "3000", "--seed",
                    "7", "-o", str(tmp_path / "r.npy")], check=True, capture_output=True)
    r = twobody.randoms_like(sky, 3000, footprint="sky", seed=7)
    assert np.array_equal(r.points, np.load(tmp_path / "r.npy"))
    box = twobody.randoms_like(twobody.generate("uniform", 100, box=10.0), 1000, box=10.0, seed=1).points
    assert box.shape == (1000, 3) and box.min() >= 0 and box.max() < 10
    with pytest.raises(twobody.ConfigError, match="kind must be"):
        twobody.generate("gaussian", 10)
