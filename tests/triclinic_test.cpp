// Triclinic periodic cells on the CPU against the float64 brute force over all images
// (oracle/triclinic.hpp): histograms, counts, per-point counts, pair lists and the statistics
// that take a box (paircount, rdf, neighbour counts), auto and cross, brute force and the grid,
// random cells up to and beyond GROMACS' skew limits, lattices whose pairs sit on bin edges, points
// on the cell's faces; an orthogonal cell given as a triclinic one is the orthorhombic box bit for
// bit; cells and cutoffs the engine refuses.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <random>

#include <fmt/format.h>

#include "oracle/triclinic.hpp"
#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/pair_function.hpp"
#include "twobody/kde.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::fresh_seed;
using testing_support::points_in_cell;
using testing_support::to_oracle;

namespace {

Box matrix_box(double ax, double bx, double by, double cx, double cy, double cz) {
  const double m[9] = {ax, 0, 0, bx, by, 0, cx, cy, cz};
  return Box::from_matrix(m);
}

oracle::Cell cell_of(const Box& b) { return {b.length[0], b.xy, b.length[1], b.xz, b.yz, b.length[2]}; }


// Points of the fractional lattice k/n (k = 0..n-1) in a cell with dyadic entries: every
// coordinate and image exact, most separations repeated exactly, many on the faces (k = 0).
PointSet lattice_in(const Box& box, int n) {
  PointSet p(3, static_cast<std::size_t>(n) * n * n);
  std::size_t i = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < n; ++c, ++i) {
        const double fa = double(a) / n, fb = double(b) / n, fc = double(c) / n;
        p.coord(0)[i] = fa * box.length[0] + fb * box.xy + fc * box.xz;
        p.coord(1)[i] = fb * box.length[1] + fc * box.yz;
        p.coord(2)[i] = fc * box.length[2];
      }
  return p;
}

Statistic stat_of(OutputKind out, bool cross, const Binning& bins, const Box& box) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = Metric::Periodic;
  s.box = box;
  s.reduction = testing_support::reduction_of(out, bins);
  return s;
}

RunOptions on_cpu(const char* path) {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  return o;
}

// Every output kind, brute force and grid, against the oracle.
void expect_all_outputs(const Box& box, const PointSet& a, const PointSet* b, const Binning& bins) {
  const auto oa = to_oracle(a);
  const auto ob = b ? to_oracle(*b) : oracle::Points{};
  const auto want = oracle::triclinic_counts(cell_of(box), oa, b ? &ob : nullptr, bins.edges());
  std::uint64_t total = 0;
  for (auto c : want.counts) total += c;
  for (const char* path : {"brute", "grid"}) {
    SCOPED_TRACE(std::string("path ") + path);
    const RunOptions o = on_cpu(path);
    const Result h = run(stat_of(OutputKind::Histogram, b, bins, box), a, b, o);
    EXPECT_EQ(h.counts, want.counts);
    if (std::string(path) == "grid") EXPECT_NE(h.info.plan.find("cpu path: grid"), std::string::npos) << h.info.plan;
    const Binning range = Binning::from_edges({bins.lo(), bins.hi()});
    const Result c = run(stat_of(OutputKind::Reduction, b, range, box), a, b, o);
    ASSERT_EQ(c.counts.size(), 1u);
    EXPECT_EQ(c.counts[0], total);
    const Result pp = run(stat_of(OutputKind::PerPoint, b, range, box), a, b, o);
    EXPECT_EQ(pp.per_point_a.counts, want.point_a);
    if (b) EXPECT_EQ(pp.per_point_b.counts, want.point_b);
    const Result pl = run(stat_of(OutputKind::PairList, b, range, box), a, b, o);
    ASSERT_EQ(pl.pairs.size(), want.pairs.size());
    for (std::size_t k = 0; k < want.pairs.size(); ++k) {
      ASSERT_EQ(pl.pairs[k].i, want.pairs[k].first) << k;
      ASSERT_EQ(pl.pairs[k].j, want.pairs[k].second) << k;
      ASSERT_EQ(pl.pairs[k].value, std::sqrt(want.pair_d2[k])) << k;
    }
  }
}

// Cells from MDAnalysis-style dimensions and from matrices at and beyond GROMACS' limits
// (|bx| <= ax/2, |cx| <= ax/2, |cy| <= by/2).
std::vector<Box> test_cells(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> len(8.0, 14.0), ang(60.0, 120.0);
  std::vector<Box> cells;
  for (int k = 0; k < 3; ++k) {
    const double d[6] = {len(rng), len(rng), len(rng), ang(rng), ang(rng), ang(rng)};
    try {
      cells.push_back(Box::from_dimensions(d));
    } catch (const Error&) {  // an impossible triple of angles: another draw next time
    }
  }
  cells.push_back(matrix_box(10, 5, 9, -5, 4.5, 8));        // at GROMACS' limits
  cells.push_back(matrix_box(10, -5, 9, 5, -4.5, 8));       // the other sides
  cells.push_back(matrix_box(10, 9.5, 4, 13, -7.5, 3.5));   // far beyond them (no reduction of the cell)
  const double hcp[6] = {10, 10, 10, 90, 90, 120};          // a hexagonal cell
  cells.push_back(Box::from_dimensions(hcp));
  const double rhomb[6] = {10, 10, 10, 60, 60, 60};         // rhombic dodecahedron-like (fcc primitive)
  cells.push_back(Box::from_dimensions(rhomb));
  return cells;
}

}  // namespace

TEST(Triclinic, RandomCellsEveryOutputEqualsBruteForceOverImages) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Box& box : test_cells(rng)) {
    SCOPED_TRACE(box.describe());
    ASSERT_TRUE(box.triclinic());
    const PointSet a = points_in_cell(box, 500, rng), b = points_in_cell(box, 300, rng);
    // Up to the inscribed-sphere radius itself, and a small cutoff (many cells in the grid).
    for (double rmax : {box.max_cutoff(), 0.3 * box.max_cutoff()}) {
      SCOPED_TRACE("rmax " + std::to_string(rmax));
      const Binning bins = Binning::linear(0.0, rmax, 12);
      expect_all_outputs(box, a, nullptr, bins);
      expect_all_outputs(box, a, &b, bins);
    }
  }
}

TEST(Triclinic, LatticeOnBinEdgesAndFacesEqualsBruteForce) {
  // Dyadic cells: the lattice's separations are exact and repeat, sitting on the edges of bins
  // of width 1/4; a quarter of the points lie on a face (fractional coordinate 0).
  for (const Box& box : {matrix_box(8, 4, 8, 4, 4, 8), matrix_box(8, -4, 6, 4, -3, 5), matrix_box(6, 5, 4, -5.5, 3.5, 4)}) {
    SCOPED_TRACE(box.describe());
    const PointSet p = lattice_in(box, 8);
    const double rmax = std::floor(4 * box.max_cutoff()) / 4;
    const Binning bins = Binning::linear(0.0, rmax, static_cast<std::size_t>(4 * rmax));
    expect_all_outputs(box, p, nullptr, bins);
    const PointSet q = lattice_in(box, 4);
    expect_all_outputs(box, p, &q, bins);
  }
}

TEST(Triclinic, PairFunctionIsTheLeastImageWithinTheInscribedSphere) {
  // Many pairs, one key at a time, in cells of every skew: the key equals the least of all 125
  // images whenever that is within the cutoff, and is never below it otherwise.
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> len(1.0, 3.0), tilt(-1.0, 1.0);
  for (int c = 0; c < 200; ++c) {
    const double ax = len(rng), by = len(rng), cz = len(rng);
    const Box box = matrix_box(ax, tilt(rng) * ax, by, tilt(rng) * 1.5 * ax, tilt(rng) * by, cz);
    const PeriodicTriclinic f(box);
    const oracle::Cell cell = cell_of(box);
    const double r2 = box.max_cutoff() * box.max_cutoff();
    const PointSet p = points_in_cell(box, 60, rng);
    for (std::size_t i = 0; i < p.size(); ++i)
      for (std::size_t j = 0; j < p.size(); ++j) {
        const double a[3] = {p.coord(0)[i], p.coord(1)[i], p.coord(2)[i]};
        const double b[3] = {p.coord(0)[j], p.coord(1)[j], p.coord(2)[j]};
        const double want = oracle::d2_triclinic(cell, {a[0], a[1], a[2]}, {b[0], b[1], b[2]});
        const double got = f.key(a, b);
        if (want <= r2) ASSERT_EQ(got, want) << box.describe() << " pair " << i << ", " << j;
        else ASSERT_GE(got, want);
      }
  }
}

TEST(Triclinic, NearTiesAtTheInscribedSphereTakeTheLeastImage) {
  // Pairs half a face distance apart along a face normal, jittered by a few ulps: two images of
  // almost the same length at the inscribed-sphere radius, where rounding decides which is shorter.
  // The key must be the least of all images' float64 keys, as the brute force's.
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> len(1.0, 3.0), tilt(-1.0, 1.0), u(0.0, 1.0), jitter(-1e-13, 1e-13);
  std::size_t ties = 0;
  for (int c = 0; c < 300; ++c) {
    const double ax = len(rng), by = len(rng), cz = len(rng);
    const Box box = matrix_box(ax, tilt(rng) * ax, by, tilt(rng) * ax, tilt(rng) * by, cz);
    const PeriodicTriclinic f(box);
    const oracle::Cell cell = cell_of(box);
    const auto h = box.face_distances();
    const double r2 = box.max_cutoff() * box.max_cutoff();
    // Unit normals of the face pairs: the reciprocal vectors (b x c, c x a, a x b) normalised.
    const double A[3] = {ax, 0, 0}, B[3] = {box.xy, by, 0}, C[3] = {box.xz, box.yz, cz};
    const auto cross = [](const double* p, const double* q) {
      return std::array<double, 3>{p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]};
    };
    const std::array<std::array<double, 3>, 3> normal{cross(B, C), cross(C, A), cross(A, B)};
    PointSet p = points_in_cell(box, 40, rng);
    PointSet q(3, p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      const int axis = static_cast<int>(u(rng) * 3) % 3;
      const auto& n = normal[axis];
      const double norm = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int d = 0; d < 3; ++d)
        q.coord(d)[i] = p.coord(d)[i] + (u(rng) < 0.5 ? -0.5 : 0.5) * h[axis] * n[d] / norm + jitter(rng);
    }
    wrap_into_box(q, box);
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double a[3] = {p.coord(0)[i], p.coord(1)[i], p.coord(2)[i]};
      const double b[3] = {q.coord(0)[i], q.coord(1)[i], q.coord(2)[i]};
      const double want = oracle::d2_triclinic(cell, {a[0], a[1], a[2]}, {b[0], b[1], b[2]});
      const double got = f.key(a, b);
      if (want <= r2 * (1 + 1e-6)) {
        ++ties;
        ASSERT_EQ(got, want) << box.describe() << " pair " << i;
      } else {
        ASSERT_GE(got, want);
      }
    }
  }
  EXPECT_GT(ties, 100u);  // the pairs along the closest faces' normal are within reach
}

TEST(Triclinic, ZeroTiltsAreTheOrthorhombicBoxBitForBit) {
  const double dims[6] = {10, 12, 14, 90, 90, 90};
  const Box from_dims = Box::from_dimensions(dims);
  const Box from_matrix = matrix_box(10, 0, 12, 0, 0, 14);
  const Box ortho = Box::from_lengths(std::vector<double>{10, 12, 14});
  EXPECT_EQ(from_dims, ortho);
  EXPECT_EQ(from_matrix, ortho);
  EXPECT_FALSE(from_matrix.triclinic());
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet p = points_in_cell(ortho, 2000, rng);
  const Binning bins = Binning::logarithmic(0.1, 5.0, 20);
  const auto r1 = paircount(p, nullptr, bins, ortho, false);
  const auto r2 = paircount(p, nullptr, bins, from_matrix, false);
  EXPECT_EQ(r1.raw.counts, r2.raw.counts);
  // The triclinic function itself, tilts zero, gives PeriodicEuclidean's keys bit for bit on every
  // pair (the per-axis image is among its eight).
  const PeriodicTriclinic t(ortho);
  const PeriodicEuclidean<3> e(ortho);
  for (std::size_t i = 0; i < 300; ++i)
    for (std::size_t j = 0; j < 300; ++j) {
      const double a[3] = {p.coord(0)[i], p.coord(1)[i], p.coord(2)[i]};
      const double b[3] = {p.coord(0)[j], p.coord(1)[j], p.coord(2)[j]};
      ASSERT_EQ(t.key(a, b), e.key(a, b));
    }
}

TEST(Triclinic, StatisticsTakingABoxEqualBruteForce) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double dims[6] = {20, 18, 22, 75, 100, 110};
  const Box box = Box::from_dimensions(dims);
  const PointSet a = points_in_cell(box, 900, rng), b = points_in_cell(box, 500, rng);
  const Binning bins = Binning::linear(0.0, box.max_cutoff(), 16);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  const auto auto_want = oracle::triclinic_counts(cell_of(box), oa, nullptr, bins.edges());
  const auto cross_want = oracle::triclinic_counts(cell_of(box), oa, &ob, bins.edges());

  EXPECT_EQ(paircount(a, nullptr, bins, box, false).raw.counts, auto_want.counts);
  EXPECT_EQ(paircount(a, &b, bins, box, false).raw.counts, cross_want.counts);
  const BinnedResult g = rdf(a, nullptr, bins, box);
  EXPECT_EQ(g.raw.counts, auto_want.counts);
  // The ideal-gas expectation uses the cell's volume, ax by cz.
  const double volume = box.length[0] * box.length[1] * box.length[2];
  EXPECT_DOUBLE_EQ(box.volume(), volume);
  ASSERT_EQ(g.derived.front().name, "expected");
  const auto& expected = g.derived.front().values;
  const double n = static_cast<double>(a.size());
  for (std::size_t k = 0; k < bins.nbins(); ++k)
    EXPECT_NEAR(expected[k], n * (n - 1) / 2 * shell_volume(3, bins.edges()[k], bins.edges()[k + 1]) / volume,
                1e-9 * expected[k]);
  const Binning range = Binning::from_edges({0.5, box.max_cutoff()});
  const auto range_want = oracle::triclinic_counts(cell_of(box), oa, &ob, range.edges());
  const Result nb = neighbour_counts(a, &b, range, box, false);
  EXPECT_EQ(nb.per_point_a.counts, range_want.point_a);
  EXPECT_EQ(nb.per_point_b.counts, range_want.point_b);
}

TEST(Triclinic, CellsFromDimensionsFollowMDAnalysis) {
  // MDAnalysis.lib.mdamath.triclinic_vectors([10, 11, 12, 80, 95, 105], dtype=numpy.float64).
  const double d[6] = {10, 11, 12, 80, 95, 105};
  const Box b = Box::from_dimensions(d);
  EXPECT_EQ(b.length[0], 10.0);
  EXPECT_NEAR(b.xy, -2.8470094961, 1e-9);
  EXPECT_NEAR(b.length[1], 10.6251840892, 1e-9);
  EXPECT_NEAR(b.xz, -1.0458689130, 1e-9);
  EXPECT_NEAR(b.yz, 1.8770461347, 1e-9);
  EXPECT_NEAR(b.length[2], 11.8060516696, 1e-9);
  // Right angles are exact: a monoclinic cell keeps zero tilts where MDAnalysis does.
  const double mono[6] = {10, 11, 12, 90, 100, 90};
  const Box m = Box::from_dimensions(mono);
  EXPECT_EQ(m.xy, 0.0);
  EXPECT_EQ(m.yz, 0.0);
  EXPECT_NE(m.xz, 0.0);
  // The 6 and 9 value forms of Box::from_values, resolved by the data's dimension.
  const std::vector<double> six{10, 11, 12, 80, 95, 105};
  EXPECT_EQ(Box::from_values(six, 3), b);
  EXPECT_FALSE(Box::from_values(six, 6).triclinic());
  EXPECT_EQ(Box::from_values(six, 6).dim, 6);
  const std::vector<double> nine{b.length[0], 0, 0, b.xy, b.length[1], 0, b.xz, b.yz, b.length[2]};
  EXPECT_EQ(Box::from_values(nine, 3), b);
}

TEST(Triclinic, InscribedSphereRadius) {
  // A cube sheared by half a side along x: faces 1 apart along y and z, and along x the distance
  // between the planes spanned by b and c.
  const Box b = matrix_box(1, 0.5, 1, 0, 0, 1);
  const auto h = b.face_distances();
  EXPECT_NEAR(h[0], 1 / std::sqrt(1.25), 1e-15);
  EXPECT_NEAR(h[1], 1.0, 1e-15);
  EXPECT_NEAR(h[2], 1.0, 1e-15);
  EXPECT_NEAR(b.max_cutoff(), 0.5 / std::sqrt(1.25), 1e-15);
}

TEST(Triclinic, RefusesWhatItCannotAnswerExactly) {
  const Box box = matrix_box(10, 5, 9, 0, 0, 8);
  std::mt19937_64 rng(1);
  const PointSet p = points_in_cell(box, 50, rng);
  const double too_far = box.max_cutoff() * 1.01;
  expect_error(ErrorKind::Config, "inscribed-sphere radius", [&] {
    run(stat_of(OutputKind::Histogram, false, Binning::linear(0, too_far, 4), box), p, nullptr, on_cpu("auto"));
  });
  expect_error(ErrorKind::Config, fmt::format("rmax {}", too_far), [&] {
    run(stat_of(OutputKind::Histogram, false, Binning::linear(0, too_far, 4), box), p, nullptr, on_cpu("auto"));
  });
  expect_error(ErrorKind::Config, "distance matrix", [&] { distance_matrix(p, nullptr, box); });
  expect_error(ErrorKind::Config, "angle gamma must lie in (0, 180)", [] {
    const double d[6] = {10, 10, 10, 90, 90, 180};
    Box::from_dimensions(d);
  });
  expect_error(ErrorKind::Config, "make no cell", [] {
    const double d[6] = {10, 10, 10, 30, 30, 90};  // beta + alpha < gamma: no cell
    Box::from_dimensions(d);
  });
  expect_error(ErrorKind::Config, "lower-triangular", [] {
    const double m[9] = {10, 1, 0, 0, 10, 0, 0, 0, 10};
    Box::from_matrix(m);
  });
  expect_error(ErrorKind::Config, "positive diagonal", [] {
    const double m[9] = {10, 0, 0, 0, -10, 0, 0, 0, 10};
    Box::from_matrix(m);
  });
  expect_error(ErrorKind::Config, "6 (a, b, c, alpha, beta, gamma", [] {
    Box::from_values(std::vector<double>{1, 2, 3, 4}, 3);
  });
  expect_error(ErrorKind::Config, "the box has 3 sides but the points have 2 coordinates", [&] {
    PointSet q(2, 4);
    run(stat_of(OutputKind::Histogram, false, Binning::linear(0, 1, 4), box), q, nullptr, on_cpu("auto"));
  });
}

TEST(Triclinic, PointsOutsideAreRefusedOrWrapped) {
  const Box box = matrix_box(10, 5, 9, -3, 4, 8);
  std::mt19937_64 rng(2);
  PointSet p = points_in_cell(box, 200, rng);
  // Shift some points by whole cell vectors and a little beyond (outside the cell).
  std::uniform_int_distribution<int> n(-3, 3);
  for (std::size_t i = 0; i < p.size(); i += 3) {
    const int na = n(rng), nb = n(rng), nc = n(rng);
    p.coord(0)[i] += na * 10 + nb * 5 + nc * -3.0;
    p.coord(1)[i] += nb * 9 + nc * 4;
    p.coord(2)[i] += nc * 8;
  }
  p.coord(0)[1] = -1e-300;  // a hair outside the face at the origin: wraps to ax, then back to 0
  p.coord(1)[1] = 0;
  p.coord(2)[1] = 0;
  const Binning bins = Binning::linear(0, 3, 6);
  expect_error(ErrorKind::Input, "outside the periodic cell", [&] { paircount(p, nullptr, bins, box, false); });
  wrap_into_box(p, box);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto f = box.cell_coordinates(p.coord(0)[i], p.coord(1)[i], p.coord(2)[i]);
    for (double s : f) {
      ASSERT_GE(s, 0.0) << i;
      ASSERT_LT(s, 1.0) << i;
    }
  }
  const auto want = oracle::triclinic_counts(cell_of(box), to_oracle(p), nullptr, bins.edges());
  EXPECT_EQ(paircount(p, nullptr, bins, box, false).raw.counts, want.counts);
}

TEST(Triclinic, ExplainSaysTheCellAndTheGrid) {
  const Box box = matrix_box(30, 10, 28, 5, -6, 25);
  std::mt19937_64 rng(3);
  const PointSet p = points_in_cell(box, 3000, rng);
  const Result r = run(stat_of(OutputKind::Histogram, false, Binning::linear(0, 3, 6), box), p, nullptr, on_cpu("grid"));
  EXPECT_NE(r.info.plan.find("triclinic a = (30, 0, 0)"), std::string::npos) << r.info.plan;
  EXPECT_NE(r.info.plan.find("fractional coordinates"), std::string::npos) << r.info.plan;
}

TEST(Triclinic, SavedCountsKeepTheCell) {
  // The cell goes to the counts file as its matrix and comes back equal, so that a reuse of the
  // counts checks the whole cell, not its diagonal.
  const Box box = matrix_box(30, 10, 28, 5, -6, 25);
  std::mt19937_64 rng(4);
  const PointSet d = points_in_cell(box, 500, rng);
  const std::vector<PointSet> randoms{points_in_cell(box, 600, rng)};
  const Binning bins = Binning::linear(0.5, 5, 5);
  const CorrelationResult r = correlation(d, randoms, bins, CorrelationSpace::Box, box, false, on_cpu("auto"));
  const SavedCounts c = saved_counts(r, CorrelationSpace::Box, box, false);
  const std::string path = ::testing::TempDir() + "/triclinic_counts.json";
  write_counts(path, c);
  const SavedCounts back = read_counts(path);
  ASSERT_TRUE(back.box);
  EXPECT_EQ(*back.box, box);
  EXPECT_TRUE(back.box->triclinic());
}

TEST(Triclinic, KernelSumsCountThePartnersOfTheBruteForce) {
  // kde takes the cell like every pair statistic: each point's partners within the cutoff are the
  // brute force's, and a cutoff beyond the inscribed sphere is refused with its radius.
  const Box box = matrix_box(20, 8, 18, -6, 5, 16);
  std::mt19937_64 rng(5);
  const PointSet p = points_in_cell(box, 600, rng);
  KdeOptions o;
  o.kernel = KdeKernel::Epanechnikov;
  o.bandwidth = 3.0;
  const KernelSums k = kernel_sums(p, nullptr, o, box, on_cpu("auto"));
  const auto want = oracle::triclinic_counts(cell_of(box), to_oracle(p), nullptr, {0.0, 3.0});
  EXPECT_EQ(k.partners_a, want.point_a);
  o.bandwidth = box.max_cutoff() * 1.01;
  expect_error(ErrorKind::Config, "inscribed-sphere radius", [&] { kernel_sums(p, nullptr, o, box, on_cpu("auto")); });
}
