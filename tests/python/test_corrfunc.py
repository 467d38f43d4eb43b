"""twobody.corrfunc against Corrfunc 2.5 itself (PyPI `corrfunc`, its double-precision kernels:
float64 inputs), bin by bin and field by field: the same structured arrays, npairs equal, and the
averages equal to the rounding of their sums.

Tolerances. npairs: exact. ravg / rpavg / savg / thetaavg / weightavg: each is a sum over the bin's
ordered pairs divided by npairs; Corrfunc adds its terms one by one in float64 (per thread, per
SIMD lane), twobody in its own order, so the two sums differ by at most about n * 2^-52 relative
(n terms, each add rounding once); per-pair separations are the same float64 sqrt of the same
squared distance (an ulp apart at most). The tests take 4 n * 2^-52 per bin. In a periodic box
a wrapped pair's dx is x1 - (x2 +- L) in Corrfunc and (x1 - x2) +- L in twobody: each rounds to
an ulp of L, so a separation may differ by about 2^-52 L, absolute; those averages get 4 * 2^-52 L. thetaavg is an
arccosine: near cos = 1 an ulp of the cosine moves theta by 2^-53 / theta radians, a relative
2^-53 / theta^2, so its bins get that bound too (for theta >= 0.01 deg, below 4e-9). xi and wp
follow from the counts by Corrfunc's own expression: 1 + xi and 1 + wp / (2 pimax), DD / RR,
to the same bound plus 1e-13. Positions from cz (the *_mocks
functions without is_comoving_dist): Corrfunc's distances interpolate a table, within 2e-6 Mpc/h
of twobody's integral, so pairs closer than 1e-5 to an edge may change bins, and the counts are
checked against that bound from a brute force.
"""

import os
from pathlib import Path

import numpy as np
import pytest

import twobody
from twobody.corrfunc import mocks as tm
from twobody.corrfunc import theory as tt

from oracle import histogram_sq, pair_d2

Corrfunc = pytest.importorskip("Corrfunc", reason="Corrfunc (pip install corrfunc) is needed to compare with it")
from Corrfunc import mocks as cm  # noqa: E402
from Corrfunc import theory as ct  # noqa: E402

EPS = 2.0 ** -52
SHARED = Path(os.environ.get("TWOBODY_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


def assert_same(ours, theirs, what, avg_floor=None, twice_pimax=None, box=None):
    """Every field of Corrfunc's structured array, bin by bin (tolerances: the module docstring;
    xi and wp through 1 + xi and 1 + wp / (2 pimax), DD / RR, whose rounding they inherit)."""
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != Corrfunc's {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: {ours.shape} rows, Corrfunc {theirs.shape}"
    n = theirs["npairs"].astype(np.float64)
    np.testing.assert_array_equal(ours["npairs"], theirs["npairs"], err_msg=f"{what}: npairs")
    for field in ours.dtype.names:
        if field == "npairs":
            continue
        a, b = ours[field], theirs[field]
        if field in ("wp", "xi"):
            scale = twice_pimax if field == "wp" else 1.0
            a, b = a / scale + 1.0, b / scale + 1.0
            rtol = 4 * np.maximum(n, 1) * EPS + 1e-13
        elif field.endswith("avg"):
            rtol = 4 * np.maximum(n, 1) * EPS + 1e-15
            if avg_floor is not None and field != "weightavg":
                rtol = np.maximum(rtol, avg_floor)
        else:
            rtol = np.zeros(a.shape)  # bin edges: the same doubles
        atol = 4 * EPS * box if box is not None and field.endswith("avg") and field != "weightavg" else 0.0
        bad = np.abs(a - b) > rtol * np.abs(b) + atol
        assert not bad.any(), f"{what}: {field} differs in bins {np.nonzero(bad)[0]}: {a[bad]} vs Corrfunc {b[bad]}"


def box_points(rng, n, L, offset=0.0):
    return tuple(rng.random(n) * L + offset for _ in range(3))


def weights_of(rng, n):
    return rng.random(n) + 0.5


BINS = np.array([0.0, 0.7, 1.5, 3.0, 6.0, 9.5])  # from 0: Corrfunc's self-pairs


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("avg", [False, True])
def test_theory_random_catalogues(rng, weighted, avg):
    L = 60.0
    n, n2 = 2500, 700
    x, y, z = box_points(rng, n, L)
    x2, y2, z2 = box_points(rng, n2, L)
    w, w2 = weights_of(rng, n), weights_of(rng, n2)
    kw = dict(weights1=w, weight_type="pair_product") if weighted else {}
    kw2 = dict(kw, weights2=w2) if weighted else {}
    bins = BINS if rng.random() < 0.5 else BINS[1:]  # with and without the self-pairs
    for periodic in (True, False):
        wrap = L if periodic else None  # the bound of a wrapped separation (assert_same)
        common = dict(periodic=periodic, boxsize=L, output_ravg=avg)
        assert_same(tt.DD(1, 2, bins, x, y, z, **common, **kw), ct.DD(1, 2, bins, x, y, z, **common, **kw),
                    f"DD auto periodic={periodic}", box=wrap)
        assert_same(tt.DD(0, 2, bins, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2),
                    ct.DD(0, 2, bins, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2), f"DD cross periodic={periodic}", box=wrap)
        common = dict(periodic=periodic, boxsize=L, output_rpavg=avg)
        assert_same(tt.DDrppi(1, 2, 12.0, bins, x, y, z, **common, **kw),
                    ct.DDrppi(1, 2, 12.0, bins, x, y, z, **common, **kw), f"DDrppi auto periodic={periodic}", box=wrap)
        assert_same(tt.DDrppi(0, 2, 12.0, bins, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2),
                    ct.DDrppi(0, 2, 12.0, bins, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2),
                    f"DDrppi cross periodic={periodic}", box=wrap)
        common = dict(periodic=periodic, boxsize=L, output_savg=avg)
        for mu_max, nmu in ((1.0, 10), (0.55, 4)):
            assert_same(tt.DDsmu(1, 2, bins, mu_max, nmu, x, y, z, **common, **kw),
                        ct.DDsmu(1, 2, bins, mu_max, nmu, x, y, z, **common, **kw),
                        f"DDsmu auto periodic={periodic} mu_max={mu_max}", box=wrap)
        assert_same(tt.DDsmu(0, 2, bins, 1.0, 8, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2),
                    ct.DDsmu(0, 2, bins, 1.0, 8, x, y, z, X2=x2, Y2=y2, Z2=z2, **common, **kw2),
                    f"DDsmu cross periodic={periodic}", box=wrap)
    kw = dict(weights=w, weight_type="pair_product") if weighted else {}
    assert_same(tt.xi(L, 2, bins, x, y, z, output_ravg=avg, **kw), ct.xi(L, 2, bins, x, y, z, output_ravg=avg, **kw),
                "xi", box=L)
    assert_same(tt.wp(L, 12.0, 2, bins, x, y, z, output_rpavg=avg, **kw),
                ct.wp(L, 12.0, 2, bins, x, y, z, output_rpavg=avg, **kw), "wp", twice_pimax=24.0, box=L)


def test_lattice_pairs_on_every_edge():
    """Integer lattice, integer edges: many pairs at exactly r = 1, 2, 3, 4 (and pi = 1, 2, 3).
    Corrfunc's double build bins them as twobody does (r^2 and the squared edges are exact);
    twobody's DD equals a float64 brute force. DDsmu differs on purpose: the pairs along the z
    axis (mu = 1) are in twobody's last mu bin, and Corrfunc drops them (dz^2 >= s^2 mu_max^2)."""
    g = np.arange(10.0)
    x, y, z = (a.ravel().copy() for a in np.meshgrid(g, g, g, indexing="ij"))
    L, bins = 10.0, np.arange(0.0, 5.0, 1.0)
    ours = tt.DD(1, 2, bins, x, y, z, boxsize=L, output_ravg=True)
    assert_same(ours, ct.DD(1, 2, bins, x, y, z, boxsize=L, output_ravg=True), "DD lattice")
    brute = histogram_sq(pair_d2(np.column_stack([x, y, z]), box=[L] * 3)[0], bins)
    brute[0] = 0  # no distinct pair at r = 0; the first bin holds Corrfunc's N self-pairs
    np.testing.assert_array_equal(ours["npairs"], 2 * brute + np.array([x.size, 0, 0, 0], np.uint64))
    for shift in (0.0, 1e8):  # open space, far from the origin: dx is exact in both codes
        assert_same(tt.DD(1, 2, bins, x + shift, y, z - shift, periodic=False, output_ravg=True),
                    ct.DD(1, 2, bins, x + shift, y, z - shift, periodic=False, output_ravg=True), f"DD open +{shift}")
    assert_same(tt.DDrppi(1, 2, 4.0, bins, x, y, z, boxsize=L, output_rpavg=True),
                ct.DDrppi(1, 2, 4.0, bins, x, y, z, boxsize=L, output_rpavg=True), "DDrppi lattice")
    assert_same(tt.wp(L, 4.0, 2, bins, x, y, z), ct.wp(L, 4.0, 2, bins, x, y, z), "wp lattice", twice_pimax=8.0)
    assert_same(tt.xi(L, 2, bins, x, y, z), ct.xi(L, 2, bins, x, y, z), "xi lattice")
    ours = tt.DDsmu(1, 2, bins, 1.0, 10, x, y, z, boxsize=L)
    theirs = ct.DDsmu(1, 2, bins, 1.0, 10, x, y, z, boxsize=L)
    along_z = np.zeros((4, 10), np.uint64)
    along_z[1:, 9] = 2 * x.size  # each point's partners at dz = +-k, k = 1, 2, 3, ordered pairs
    np.testing.assert_array_equal(ours["npairs"] - theirs["npairs"], along_z.ravel())


def radec_cz(rng, n):
    ra = rng.uniform(120.0, 170.0, n)
    dec = np.degrees(np.arcsin(rng.uniform(0.0, 0.6, n)))
    return ra, dec, rng.uniform(6000.0, 20000.0, n)


@pytest.mark.parametrize("weighted", [False, True])
def test_mocks_random_catalogues(rng, weighted):
    n, n2 = 2500, 600
    ra, dec, cz = radec_cz(rng, n)
    ra2, dec2, cz2 = radec_cz(rng, n2)
    w, w2 = weights_of(rng, n), weights_of(rng, n2)
    kw = dict(weights1=w, weight_type="pair_product") if weighted else {}
    kw2 = dict(kw, weights2=w2) if weighted else {}
    tbins = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0])
    floor = 2.0 ** -53 / np.radians(0.05) ** 2  # thetaavg beyond the first bin (see the docstring)
    for avg in (False, True):
        ours = tm.DDtheta_mocks(1, 2, tbins, ra, dec, output_thetaavg=avg, **kw)
        theirs = cm.DDtheta_mocks(1, 2, tbins, ra, dec, output_thetaavg=avg, **kw)
        # the first bin holds the self-pairs and pairs at any small angle: its thetaavg to 1e-6
        assert_same(ours[:1], theirs[:1], "DDtheta_mocks auto, first bin", avg_floor=1e-6)
        assert_same(ours[1:], theirs[1:], "DDtheta_mocks auto", avg_floor=floor)
        assert_same(tm.DDtheta_mocks(0, 2, tbins[1:], ra, dec, RA2=ra2, DEC2=dec2, output_thetaavg=avg, **kw2),
                    cm.DDtheta_mocks(0, 2, tbins[1:], ra, dec, RA2=ra2, DEC2=dec2, output_thetaavg=avg, **kw2),
                    "DDtheta_mocks cross", avg_floor=floor)
    # 3-D mocks from comoving distances: the same positions in both codes, so every field equal
    # (Corrfunc refuses a first edge of 0 here)
    bins = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 12.0])
    d, d2 = cz / 100.0, cz2 / 100.0
    # r_p about the midpoint is sqrt(s^2 - pi^2) in both codes, by different expressions: an ulp of
    # s^2 is 2^-52 (s / r_p)^2 of r_p, with s^2 < r_p,max^2 + pi_max^2
    rp_floor = np.repeat(8 * EPS * (bins[-1] ** 2 + 10.0 ** 2) / bins[:-1] ** 2, 10)
    for cosmology in (1, 2):
        common = dict(is_comoving_dist=True, output_rpavg=True)
        assert_same(tm.DDrppi_mocks(1, cosmology, 2, 10.0, bins, ra, dec, d, **common, **kw),
                    cm.DDrppi_mocks(1, cosmology, 2, 10.0, bins, ra, dec, d, **common, **kw), "DDrppi_mocks auto",
                    avg_floor=rp_floor)
    common = dict(is_comoving_dist=True, output_rpavg=True)
    assert_same(tm.DDrppi_mocks(0, 1, 2, 10.0, bins, ra, dec, d, RA2=ra2, DEC2=dec2, CZ2=d2, **common, **kw2),
                cm.DDrppi_mocks(0, 1, 2, 10.0, bins, ra, dec, d, RA2=ra2, DEC2=dec2, CZ2=d2, **common, **kw2),
                "DDrppi_mocks cross", avg_floor=rp_floor)
    common = dict(is_comoving_dist=True, output_savg=True)
    assert_same(tm.DDsmu_mocks(1, 1, 2, 1.0, 10, bins, ra, dec, d, **common, **kw),
                cm.DDsmu_mocks(1, 1, 2, 1.0, 10, bins, ra, dec, d, **common, **kw), "DDsmu_mocks auto")
    assert_same(tm.DDsmu_mocks(0, 1, 2, 0.8, 5, bins, ra, dec, d, RA2=ra2, DEC2=dec2, CZ2=d2, **common, **kw2),
                cm.DDsmu_mocks(0, 1, 2, 0.8, 5, bins, ra, dec, d, RA2=ra2, DEC2=dec2, CZ2=d2, **common, **kw2),
                "DDsmu_mocks cross")


def midpoint_rp_pi(p):
    """r_p and pi of every distinct pair about its midpoint's line of sight, float64."""
    i, j = np.triu_indices(len(p), 1)
    s, m = p[j] - p[i], 0.5 * (p[i] + p[j])
    pi = np.abs(np.einsum("ij,ij->i", s, m)) / np.linalg.norm(m, axis=1)
    return np.sqrt(np.maximum(np.einsum("ij,ij->i", s, s) - pi * pi, 0.0)), pi


def test_mocks_from_cz(rng):
    """From cz, Corrfunc's tabulated distances are within 2e-6 Mpc/h of twobody's integral: the
    counts may differ only by pairs within 1e-5 of an r_p or pi edge (counted by brute force)."""
    n = 1500
    ra, dec, cz = radec_cz(rng, n)
    bins, pimax = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 12.0]), 10.0
    ours = tm.DDrppi_mocks(1, 1, 2, pimax, bins, ra, dec, cz, output_rpavg=True)
    theirs = cm.DDrppi_mocks(1, 1, 2, pimax, bins, ra, dec, cz, output_rpavg=True)
    p = np.column_stack(twobody.corrfunc._conventions.sky_to_cartesian(ra, dec, cz, 1, False, "data"))
    rp, pi = midpoint_rp_pi(p)
    near = (np.abs(rp[:, None] - bins[None, :]).min(axis=1) < 1e-5) | \
           (np.abs(pi[:, None] - np.arange(1.0, pimax + 1)[None, :]).min(axis=1) < 1e-5)
    moved = np.abs(ours["npairs"].astype(np.int64) - theirs["npairs"].astype(np.int64)).sum()
    assert moved <= 4 * np.count_nonzero(near), f"{moved} ordered pairs moved, {np.count_nonzero(near)} near an edge"
    if moved == 0:
        assert_same(ours, theirs, "DDrppi_mocks from cz", avg_floor=4e-5)  # 2e-6 Mpc/h per point, rp >= 0.5
    # cz below 10 everywhere is taken for redshifts, as Corrfunc does
    np.testing.assert_array_equal(tm.DDrppi_mocks(1, 1, 2, pimax, bins, ra, dec, cz / 299800.0)["npairs"],
                                  tm.DDrppi_mocks(1, 1, 2, pimax, bins, ra, dec, (cz / 299800.0) * 299800.0)["npairs"])


def test_comoving_distance_against_a_fine_quadrature():
    cz = np.array([0.0, 100.0, 3000.0, 30000.0, 150000.0, 899400.0])
    ours = twobody.corrfunc._conventions.comoving_distance(cz, 0.25)
    for v, d in zip(cz, ours):
        z = np.linspace(0.0, v / 299800.0, 200001)
        f = 1.0 / np.sqrt(0.25 * (1 + z) ** 3 + 0.75)
        simpson = (z[1] - z[0]) / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
        assert d == pytest.approx(2998.0 * simpson, rel=1e-12, abs=1e-12)


def read_ff_radec(path):
    cat = twobody.read(str(path), columns=[1, 2])
    p = np.asarray(cat.points)
    return np.ascontiguousarray(p[:, 0]), np.ascontiguousarray(p[:, 1])


def test_the_shared_mock_in_its_angular_bins():
    mock, binfile = SHARED / "Mr19_mock_northonly.rdcz.ff", SHARED / "angular_bins_corrfunc.txt"
    if not (mock.is_file() and binfile.is_file()):
        pytest.skip(f"the shared mock is not in {SHARED}")
    ra, dec = read_ff_radec(mock)
    ours = tm.DDtheta_mocks(1, 2, str(binfile), ra, dec, output_thetaavg=True)
    theirs = cm.DDtheta_mocks(1, 2, str(binfile), ra, dec, output_thetaavg=True)
    theta_lo = np.radians(theirs["thetamin"])
    assert_same(ours, theirs, "the shared mock", avg_floor=4 * 2.0 ** -53 / theta_lo ** 2)


def test_call_conventions(rng):
    x, y, z = box_points(rng, 300, 20.0)
    bins = [0.5, 1.0, 3.0]
    results, api_time = tt.DD(1, 1, bins, x, y, z, boxsize=20.0, c_api_timer=True)
    assert results.dtype == ct.DD(1, 1, bins, x, y, z, boxsize=20.0).dtype and api_time >= 0
    results, api_time, cells = tt.wp(20.0, 5.0, 1, bins, x, y, z, c_api_timer=True, c_cell_timer=True)
    assert cells.dtype.names == ("N1", "N2", "time_in_ns", "cellidx1", "cellidx2", "tid") and len(cells) == 0
    # Corrfunc's tuning arguments are accepted and ignored; a bin file; scalar weights
    ignored = dict(verbose=False, xbin_refine_factor=3, ybin_refine_factor=1, zbin_refine_factor=2,
                   max_cells_per_dim=7, copy_particles=False, enable_min_sep_opt=False, isa="avx512f")
    assert_same(tt.DD(1, 1, bins, x, y, z, boxsize=20.0, **ignored), ct.DD(1, 1, bins, x, y, z, boxsize=20.0),
                "DD with tuning arguments")
    assert_same(tt.DD(1, 1, bins, x, y, z, boxsize=20.0, weights1=2.0, weight_type="pair_product"),
                ct.DD(1, 1, bins, x, y, z, boxsize=20.0, weights1=2.0, weight_type="pair_product"), "scalar weight")
    # weights without weight_type are ignored (weightavg 0), as in Corrfunc
    assert not tt.DD(1, 1, bins, x, y, z, boxsize=20.0, weights1=np.ones(300))["weightavg"].any()
    with pytest.raises(ValueError):
        tt.DD(0, 1, bins, x, y, z, boxsize=20.0)  # cross without X2
    with pytest.raises(ValueError):
        tt.DD(1, 1, bins, x, y, z)  # periodic without boxsize
    with pytest.raises(ValueError):
        tt.DDsmu(1, 1, bins, 1.5, 4, x, y, z, boxsize=20.0)  # mu_max outside (0, 1]
    # boxsize as a 3-tuple
    assert_same(tt.DD(1, 1, bins, x, y, z, boxsize=(20.0, 20.0, 20.0)), ct.DD(1, 1, bins, x, y, z, boxsize=20.0),
                "3-tuple box")


def test_module_layout():
    from twobody.corrfunc.mocks.DDrppi_mocks import DDrppi_mocks
    from twobody.corrfunc.mocks.DDsmu_mocks import DDsmu_mocks
    from twobody.corrfunc.mocks.DDtheta_mocks import DDtheta_mocks
    from twobody.corrfunc.theory.DD import DD
    from twobody.corrfunc.theory.DDrppi import DDrppi
    from twobody.corrfunc.theory.DDsmu import DDsmu
    from twobody.corrfunc.theory.wp import wp
    from twobody.corrfunc.theory.xi import xi
    assert (DD, DDrppi, DDsmu, wp, xi) == (tt.DD, tt.DDrppi, tt.DDsmu, tt.wp, tt.xi)
    assert (DDtheta_mocks, DDrppi_mocks, DDsmu_mocks) == (tm.DDtheta_mocks, tm.DDrppi_mocks, tm.DDsmu_mocks)
