"""twobody.md.rdf: against a float64 brute force (exact), and against MDAnalysis' InterRDF and
freud's RDF on a real trajectory that MDAnalysisTests ships (to their float32 precision)."""

import warnings

import numpy as np
import pytest

import twobody
from oracle import histogram_sq, pair_d2
from support import gpu_usable


def brute(frames, boxes, edges, frames_b=None):
    """npairs and expected (summed over frames) by the float64 brute force."""
    npairs = np.zeros(len(edges) - 1)
    expected = np.zeros(len(edges) - 1)
    shell = 4.0 / 3.0 * np.pi * np.diff(np.asarray(edges, float) ** 3)
    for f, (a, L) in enumerate(zip(frames, boxes)):
        b = None if frames_b is None else frames_b[f]
        d2, _ = pair_d2(a, b, L)
        npairs += histogram_sq(d2, edges)
        pairs = len(a) * (len(a) - 1) / 2 if b is None else len(a) * len(b)
        expected += pairs * shell / np.prod(L)
    return npairs, expected


def test_frames_equal_the_float64_brute_force(rng):
    # Three frames of a box whose side changes (NPT), one group and two.
    boxes = [np.array([10.0, 11.0, 12.0]) * s for s in (1.0, 1.02, 0.97)]
    frames = np.stack([rng.random((400, 3)) * L for L in boxes])
    edges = twobody.linear_bins(0.0, 4.5, 30)
    r = twobody.md.rdf(frames, box=np.stack(boxes), rmax=4.5, nbins=30, backend="cpu")
    npairs, expected = brute(frames, boxes, edges)
    assert np.array_equal(r.npairs, npairs)
    np.testing.assert_allclose(r.expected, expected, rtol=1e-12)
    np.testing.assert_allclose(r.g, npairs / expected, rtol=1e-12)
    assert r.g_frames.shape == (3, 30) and list(r.frames) == [0, 1, 2]
    np.testing.assert_allclose(r.coordination[-1] * 400 * 3, 2 * npairs.sum(), rtol=1e-12)
    # Cross: A-B pairs, each once.
    other = np.stack([rng.random((250, 3)) * L for L in boxes])
    rx = twobody.md.rdf(frames, other, box=np.stack(boxes), rmax=4.5, nbins=30, backend="cpu")
    npairs, expected = brute(frames, boxes, edges, other)
    assert np.array_equal(rx.npairs, npairs)
    np.testing.assert_allclose(rx.expected, expected, rtol=1e-12)
    np.testing.assert_allclose(rx.coordination_b[-1] * 250 * 3, npairs.sum(), rtol=1e-12)
    # The same frames in one box, counted in one run (batch): each frame's pairs apart, exact.
    one_box = [boxes[0]] * 3
    inside = frames % boxes[0], other % boxes[0]
    rb = twobody.md.rdf(*inside, box=boxes[0], rmax=4.5, nbins=30, backend="cpu", batch=True)
    npairs, expected = brute(inside[0], one_box, edges, inside[1])
    assert np.array_equal(rb.npairs, npairs)
    np.testing.assert_allclose(rb.expected, expected, rtol=1e-12)
    ra = twobody.md.rdf(inside[0], box=boxes[0], rmax=4.5, nbins=30, backend="cpu", batch=True)
    assert np.array_equal(ra.npairs, brute(inside[0], one_box, edges)[0])


def test_frames_in_flight_and_batched_equal_frames_one_at_a_time(rng):
    # Many small frames run several at once (threads, the engine without the GIL) and several in
    # one run (batch); every frame's g, the sums and the partials equal those of one frame at a
    # time, in frame order, on every backend.
    boxes = np.stack([np.array([9.0, 9.5, 10.0]) * s for s in rng.uniform(0.97, 1.03, 24)])
    frames = np.stack([rng.random((300, 3)) * L for L in boxes])
    frames[:, :20] = np.floor(frames[:, :20])  # integer sites: pairs on the shells' edges
    types = rng.choice(["O", "H"], 300)
    runs = [("cpu", False), ("cpu", True)] + ([("cuda", None), ("cuda", False)] if gpu_usable() else [])
    for backend, batch in runs:
        # batch: frames of one cell counted in one engine run (the GPU's default); the boxes of
        # the first 16 frames are one box, then they change (NPT) and batches break.
        boxes[:16] = boxes[0]
        frames[:16] %= boxes[0]
        r = twobody.md.rdf(frames, box=boxes, rmax=4.0, nbins=16, by_type=True, types=types, backend=backend,
                           batch=batch)
        assert r.backend == backend and list(r.frames) == list(range(24))
        for f in (0, 7, 23):
            one = twobody.md.rdf(frames[f], box=boxes[f], rmax=4.0, nbins=16, by_type=True, types=types,
                                 backend=backend)
            assert np.array_equal(r.g_frames[f], one.g_frames[0], equal_nan=True)
            for key, part in one.partials.items():
                assert np.array_equal(r.partials[key].g_frames[f], part.g_frames[0], equal_nan=True)
        npairs, expected = brute(frames, boxes, twobody.linear_bins(0.0, 4.0, 16))
        assert np.array_equal(r.npairs, npairs)
        np.testing.assert_allclose(r.expected, expected, rtol=1e-12)
        serial = twobody.md.rdf(frames, box=boxes, rmax=4.0, nbins=16, backend=backend, threads=1, batch=False)
        assert np.array_equal(serial.npairs, r.npairs) and np.array_equal(serial.expected, r.expected)


def test_lattice_on_the_edges_and_unwrapped_atoms(rng):
    # Atoms on a cubic lattice of spacing 1 in a box of 8: every distance sqrt(k), many exactly on
    # the edges 1, 2, 3; then the same atoms shifted by whole boxes (an unwrapped trajectory).
    g = np.arange(8.0)
    lattice = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    box = [8.0, 8.0, 8.0]
    edges = [0.0, 1.0, 1.5, 2.0, 3.0, 4.0]
    r = twobody.md.rdf(lattice, box=box, bins=edges, backend="cpu")
    npairs, _ = brute([lattice], [np.array(box)], edges)
    assert np.array_equal(r.npairs, npairs)
    assert r.npairs[0] == 0 and r.npairs[1] == 9 * 512  # 6 neighbours at exactly 1 and 12 at sqrt 2, a pair once
    shifts = rng.integers(-3, 4, size=lattice.shape) * 8.0
    ru = twobody.md.rdf(lattice + shifts, box=box, bins=edges, backend="cpu")
    assert np.array_equal(ru.npairs, r.npairs)


def test_overlapping_groups_never_pair_an_atom_with_itself(rng):
    mda = pytest.importorskip("MDAnalysis")
    n = 300
    u = mda.Universe.empty(n, trajectory=True)
    u.add_TopologyAttr("type", ["O" if k % 3 == 0 else "H" for k in range(n)])
    pos = rng.random((n, 3)) * 9.0
    u.atoms.positions = pos
    u.dimensions = [9.0, 9.0, 9.0, 90, 90, 90]
    edges = twobody.linear_bins(0.0, 4.0, 16)
    oxygens = u.select_atoms("type O")
    r = twobody.md.rdf(u.atoms, oxygens, rmax=4.0, nbins=16, backend="cpu")
    # Every (atom, oxygen) pair of distinct atoms: the brute force over all x O, less the self pairs.
    d2, _ = pair_d2(pos, pos[oxygens.ix], np.array([9.0] * 3))
    self_pair = (np.arange(n)[:, None] == oxygens.ix[None, :]).ravel()
    assert np.array_equal(r.npairs, histogram_sq(d2[~self_pair], edges))
    # The same group twice is one group.
    assert np.array_equal(twobody.md.rdf(oxygens, oxygens, rmax=4.0, nbins=16, backend="cpu").npairs,
                          twobody.md.rdf(oxygens, rmax=4.0, nbins=16, backend="cpu").npairs)
    # Partials by type add up to the whole.
    whole = twobody.md.rdf(u.atoms, rmax=4.0, nbins=16, by_type=True, backend="cpu")
    assert set(whole.partials) == {("H", "H"), ("H", "O"), ("O", "O")}
    assert np.array_equal(sum(p.npairs for p in whole.partials.values()), whole.npairs)
    oo = whole.partials[("O", "O")]
    assert np.array_equal(oo.npairs, twobody.md.rdf(oxygens, rmax=4.0, nbins=16, backend="cpu").npairs)


def test_refusals():
    pos = np.random.default_rng(3).random((50, 3)) * 10
    with pytest.raises(twobody.ConfigError, match="box="):
        twobody.md.rdf(pos, rmax=2.0)
    with pytest.raises(twobody.ConfigError, match="rmax"):
        twobody.md.rdf(pos, box=10.0)
    with pytest.raises(twobody.TwobodyError, match="half"):
        twobody.md.rdf(pos, box=10.0, rmax=6.0)
    with pytest.raises(twobody.InputError, match="frames, n, 3"):
        twobody.md.rdf(pos[:, :2], box=10.0, rmax=2.0)
    with pytest.raises(twobody.InputError, match="at least 2"):
        twobody.md.rdf(pos[:1], box=10.0, rmax=2.0)


@pytest.fixture(scope="module")
def water_box():
    """MDAnalysisTests' TRZ trajectory: 8 184 atoms, 6 frames, a cubic box of 55.4 Å."""
    mda = pytest.importorskip("MDAnalysis")
    datafiles = pytest.importorskip("MDAnalysisTests.datafiles")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mda.Universe(datafiles.TRZ_psf, datafiles.TRZ)


def near_an_edge(u, group, edges, tolerance):
    """Pairs (each once) whose float64 distance lies within `tolerance` of an edge, per bin, over
    the trajectory: where a float32 code may bin differently."""
    e = np.asarray(edges)
    near = np.zeros(len(edges) - 1)
    for ts in u.trajectory:
        d = np.sqrt(pair_d2(group.positions.astype(np.float64), None, ts.dimensions[:3].astype(np.float64))[0])
        d = d[d < e[-1] + tolerance]
        k = np.searchsorted(e, d, side="right") - 1
        close = np.min(np.abs(d[:, None] - e[None, :]), axis=1) < tolerance
        for kk in (k[close], k[close] - 1):  # the bins on both sides of the edge
            ok = (kk >= 0) & (kk < len(near))
            np.add.at(near, kk[ok], 1)
    return near


def test_against_mdanalysis_interrdf(water_box):
    from MDAnalysis.analysis.rdf import InterRDF

    u = water_box
    group = u.atoms[:2500]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = InterRDF(group, group, nbins=40, range=(0.0, 12.0), exclusion_block=(1, 1)).run()
    edges = m.results.edges  # numpy's linspace: the same edges on both sides
    r = twobody.md.rdf(group, bins=edges)
    assert len(r.frames) == len(u.trajectory)
    # InterRDF counts each pair twice (both orders); its distances are float32's.
    near = near_an_edge(u, group, edges, 1e-4)
    assert np.all(np.abs(m.results.count - 2 * r.npairs) <= 2 * near)
    assert np.abs(m.results.count - 2 * r.npairs).sum() <= 2 * near.sum()
    # Constant volume: the same normalisation.
    np.testing.assert_allclose(r.g, m.results.rdf, rtol=1e-3, atol=1e-9 + 2 * near.max() / r.expected.min())
    # Cross groups (different types): InterRDF counts each pair once.
    a, b = u.select_atoms("type 2"), u.select_atoms("type 5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mx = InterRDF(a, b, nbins=30, range=(0.0, 9.0)).run(start=0, stop=4)
    rx = twobody.md.rdf(a, b, bins=mx.results.edges, start=0, stop=4)
    assert list(rx.frames) == [0, 1, 2, 3]
    assert np.abs(mx.results.count - rx.npairs).sum() <= 4  # a few float32 edge cases at most
    np.testing.assert_allclose(rx.g, mx.results.rdf, rtol=2e-3, atol=1e-6)


def test_against_freud(water_box):
    freud = pytest.importorskip("freud")
    u = water_box
    group = u.atoms[:2500]
    r = twobody.md.rdf(group, rmax=12.0, nbins=40, frames=[0, 2, 5])
    f = freud.density.RDF(bins=40, r_max=12.0)
    for ts in u.trajectory[[0, 2, 5]]:
        box = freud.box.Box.cube(float(ts.dimensions[0]))  # freud's cell is centred on the origin
        f.compute(system=(box, box.wrap(group.positions - 0.5 * ts.dimensions[:3])), reset=False)
    near = near_an_edge(u, group, r.edges, 1e-4)
    # freud counts each pair in both orders, its bin edges in float32.
    assert np.abs(f.bin_counts - 2 * r.npairs).sum() <= 2 * near.sum()
    np.testing.assert_allclose(r.g, f.rdf, rtol=2e-3, atol=1e-3)


@pytest.fixture(scope="module")
def water_around_a_protein():
    """MDAnalysisTests' GROMACS TPR/XTC: adenylate kinase in 11 084 TIP4P waters, 10 frames, a
    triclinic cell (a = b = c = 80 Å, α = β = 60°, γ = 90°: a rhombic dodecahedron)."""
    mda = pytest.importorskip("MDAnalysis")
    datafiles = pytest.importorskip("MDAnalysisTests.datafiles")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mda.Universe(datafiles.TPR, datafiles.XTC)


def test_triclinic_trajectory_against_mdanalysis(water_around_a_protein):
    from MDAnalysis.analysis.rdf import InterRDF
    from MDAnalysis.lib.distances import self_distance_array

    u = water_around_a_protein
    assert not np.allclose(u.dimensions[3:], 90.0)  # the cell is triclinic
    ow = u.select_atoms("name OW")[:3000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = InterRDF(ow, ow, nbins=40, range=(0.0, 10.0), exclusion_block=(1, 1)).run()
    edges = m.results.edges
    r = twobody.md.rdf(ow, bins=edges)
    assert len(r.frames) == len(u.trajectory)
    # Pairs within 1e-4 Å of an edge (float32 distances in MDAnalysis), over the frames.
    near = np.zeros(len(edges) - 1)
    for ts in u.trajectory:
        d = self_distance_array(ow.positions.astype(np.float64), box=ts.dimensions)
        d = d[d < edges[-1] + 1e-4]
        close = np.min(np.abs(d[:, None] - edges[None, :]), axis=1) < 1e-4
        k = np.searchsorted(edges, d[close], side="right") - 1
        for kk in (k, k - 1):
            ok = (kk >= 0) & (kk < len(near))
            np.add.at(near, kk[ok], 1)
    assert np.all(np.abs(m.results.count - 2 * r.npairs) <= 2 * near)
    np.testing.assert_allclose(r.g, m.results.rdf, rtol=1e-3, atol=1e-9 + 2 * near.max() / r.expected.min())
    # The first O-O peak of water, at 2.8 Å.
    assert 2.6 < r.r[np.argmax(r.g)] < 3.0
