// The CPU backend's float32 fast path (cpu/fast_rows.hpp) against the float64 oracle, on fresh
// random inputs and on the inputs that stress it: lattices with most distances exactly on an edge,
// coordinates far from the origin (1e4 + a small spread), periodic boxes with r_max close to L/2,
// clustered data, bins narrower than float32 resolution, both traversals (grid and brute force),
// every output that takes the fast path (histogram, count, pair list), and angles.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_oracle;
using testing_support::to_pointset;

namespace {

RunOptions cpu(const std::string& path = "auto") {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  return o;
}


Statistic stat(Traversal t, const Binning& b, const std::vector<double>& box = {},
               OutputKind out = OutputKind::Histogram, bool weighted = false) {
  Statistic s;
  s.traversal = t;
  s.metric = box.empty() ? Metric::Euclidean : Metric::Periodic;
  if (!box.empty()) s.box = Box::from_lengths(box);
  s.reduction = testing_support::reduction_of(out, b);
  s.weighted = weighted;
  return s;
}

// Histograms of auto and cross traversals, grid and brute force, equal to the oracle.
void expect_histograms(const PointSet& a, const PointSet& b, const Binning& bins, const std::vector<double>& box,
                       bool weighted = false) {
  const auto oa = to_oracle(a), ob = to_oracle(b);
  const int kind = box.empty() ? 0 : 1;
  const auto oauto = oracle::histogram(oa, nullptr, bins.edges(), kind, box, weighted);
  const auto ocross = oracle::histogram(oa, &ob, bins.edges(), kind, box, weighted);
  for (const char* path : {"grid", "brute"}) {
    SCOPED_TRACE(path);
    const auto ra = run(stat(Traversal::Auto, bins, box, OutputKind::Histogram, weighted), a, nullptr, cpu(path));
    EXPECT_EQ(ra.counts, oauto.counts);
    const auto rc = run(stat(Traversal::Cross, bins, box, OutputKind::Histogram, weighted), a, &b, cpu(path));
    EXPECT_EQ(rc.counts, ocross.counts);
    if (weighted)
      for (std::size_t k = 0; k < oauto.weighted.size(); ++k) {
        EXPECT_NEAR(ra.weighted[k], oauto.weighted[k], 1e-9 * (1 + oauto.weighted[k]));
        EXPECT_NEAR(rc.weighted[k], ocross.weighted[k], 1e-9 * (1 + ocross.weighted[k]));
      }
  }
}

PointSet lattice(int nx, int ny, int nz, double step, double offset = 0.0) {
  PointSet p(3, 0);
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y)
      for (int z = 0; z < nz; ++z) p.push_back(std::vector<double>{offset + step * x, offset + step * y, offset + step * z});
  return p;
}

}  // namespace

TEST(CpuFastPath, UniformPeriodicManyRmaxUpToHalfTheBox) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> L{60, 80, 70};
  std::mt19937_64 rng(seed);
  auto pa = testing_support::uniform_points(2500, 3, 0, 1, rng), pb = testing_support::uniform_points(1500, 3, 0, 1, rng);
  for (auto* p : {&pa, &pb})
    for (auto& x : p->x)
      for (int d = 0; d < 3; ++d) x[d] *= L[d];
  const PointSet a = to_pointset(pa), b = to_pointset(pb);
  for (double rmax : {4.0, 13.0, 29.999}) {
    SCOPED_TRACE("rmax " + std::to_string(rmax));
    expect_histograms(a, b, Binning::logarithmic(0.2, rmax, 15), L);
  }
  // A pair settled in float64 shows the fast path ran.
  const auto r = run(stat(Traversal::Auto, Binning::linear(0.0, 30.0, 3000), L), a, nullptr, cpu("grid"));
  EXPECT_GT(r.info.pairs_settled_fp64, 0u);
}

TEST(CpuFastPath, LatticeOnEdgesOpenAndPeriodic) {
  // Distances sqrt(k)·0.25 with bin edges at multiples of 0.25: most pairs of a short range lie
  // exactly on an edge, so the float32 verdict must defer to float64 for them.
  const PointSet p = lattice(14, 12, 12, 0.25);
  const PointSet q = lattice(6, 7, 8, 0.25, 0.5);
  const Binning bins = Binning::linear(0.0, 1.5, 6);
  expect_histograms(p, q, bins, {});
  expect_histograms(p, q, bins, {3.5, 3.0, 3.0});  // r_max = L/2 along two axes
  const auto r = run(stat(Traversal::Auto, bins), p, nullptr, cpu());
  EXPECT_GT(r.info.pairs_settled_fp64, 1000u);
  // Squared edges on the lattice's squared distances too (k·0.0625 exactly representable).
  std::vector<double> e;
  for (int k = 0; k <= 20; ++k) e.push_back(0.25 * std::sqrt(double(k)));
  expect_histograms(p, q, Binning::from_edges(e), {});
}

TEST(CpuFastPath, LargeOffsetsSmallSpread) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet a = to_pointset(testing_support::uniform_points(3000, 3, 1e4, 1e4 + 1, rng));
  const PointSet b = to_pointset(testing_support::uniform_points(2000, 3, 1e4 + 0.5, 1e4 + 1.5, rng));
  expect_histograms(a, b, Binning::linear(0.0, 0.2, 40), {});
  expect_histograms(a, b, Binning::logarithmic(1e-3, 0.1, 25), {});
  // Lattice far from the origin: edges exactly met, after the shift to the data's centre.
  expect_histograms(lattice(10, 9, 8, 0.125, 1e4), lattice(5, 5, 5, 0.125, 1e4 + 0.25), Binning::linear(0.0, 0.5, 4),
                    {});
}

TEST(CpuFastPath, ClusteredWeighted) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ClusterOptions c;
  c.kind = ClusterOptions::Kind::GaussianBlobs;
  c.blobs = 4;
  c.sigma = 0.02;
  PointSet a = generate_clustered_box(3000, 3, 10.0, c, seed);
  PointSet b = generate_clustered_box(2000, 3, 10.0, ClusterOptions{}, seed + 1);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uw(0.5, 2.0);
  for (PointSet* p : {&a, &b}) {
    std::vector<double> w(p->size());
    for (auto& x : w) x = uw(rng);
    p->set_weights(w);
  }
  expect_histograms(a, b, Binning::logarithmic(0.01, 1.0, 12), {}, true);
  expect_histograms(a, b, Binning::logarithmic(0.01, 4.9, 12), {10.0, 10.0, 10.0}, true);
}

TEST(CpuFastPath, NarrowBinsAndManyBins) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Bins narrower than float32 resolves at 1e4: the guard bands overlap.
  const PointSet off = to_pointset(testing_support::uniform_points(800, 2, 1e4, 1e4 + 1, rng));
  const PointSet off2 = to_pointset(testing_support::uniform_points(500, 2, 1e4, 1e4 + 1, rng));
  expect_histograms(off, off2, Binning::linear(0.7, 0.7 + 1e-6, 50), {});
  // Up to the table's 32766 bins the fast path, past them the float64 rows.
  const PointSet u = to_pointset(testing_support::uniform_points(240, 3, 0, 10, rng));
  const PointSet v = to_pointset(testing_support::uniform_points(130, 3, 0, 10, rng));
  expect_histograms(u, v, Binning::linear(0.0, 17.4, 32766), {});
  expect_histograms(u, v, Binning::linear(0.0, 17.4, 40000), {});
  expect_histograms(u, v, Binning::linear(0.0, 17.4, 70000), {});
  expect_histograms(u, v, Binning::linear(0.0, 4.9, 20000), {10.0, 10.0, 10.0});
}

TEST(CpuFastPath, CountsAndPairListsThroughTheFastPath) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet p = lattice(12, 11, 9, 0.5);
  std::mt19937_64 rng(seed);
  const std::vector<double> L{6.0, 5.5, 4.5};
  auto uq = testing_support::uniform_points(900, 3, 0, 1, rng);
  for (auto& x : uq.x)
    for (int d = 0; d < 3; ++d) x[d] *= L[d];
  const PointSet q = to_pointset(uq);
  const Binning range = Binning::from_edges({0.5, 1.5});
  for (bool periodic : {false, true}) {
    for (bool cross : {false, true}) {
      for (const char* path : {"grid", "brute"}) {
        SCOPED_TRACE(std::string(periodic ? "periodic " : "open ") + (cross ? "cross " : "auto ") + path);
        const auto box = periodic ? L : std::vector<double>{};
        auto s = stat(cross ? Traversal::Cross : Traversal::Auto, range, box, OutputKind::PairList);
        const auto r = run(s, p, cross ? &q : nullptr, cpu(path));
        const auto op = to_oracle(p), oq = to_oracle(q);
        const auto& ob = cross ? oq : op;
        std::vector<std::pair<std::size_t, std::size_t>> expected;
        for (std::size_t i = 0; i < op.x.size(); ++i)
          for (std::size_t j = cross ? 0 : i + 1; j < ob.x.size(); ++j) {
            const double d2 = periodic ? oracle::d2_periodic(op.x[i], ob.x[j], L) : oracle::d2_open(op.x[i], ob.x[j]);
            if (0.25 <= d2 && d2 < 2.25) expected.emplace_back(i, j);
          }
        ASSERT_EQ(r.pairs.size(), expected.size());
        for (std::size_t k = 0; k < expected.size(); ++k) {
          ASSERT_EQ(r.pairs[k].i, expected[k].first);
          ASSERT_EQ(r.pairs[k].j, expected[k].second);
        }
        s.reduction = reduce::Count{s.binning()};
        EXPECT_EQ(run(s, p, cross ? &q : nullptr, cpu(path)).counts[0], expected.size());
      }
    }
  }
}

TEST(CpuFastPath, AngularChords) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto sa = testing_support::sky_points(1500, rng, 10, 14), sb = testing_support::sky_points(900, rng, 11, 13);
  const Binning bins = Binning::logarithmic(0.01, 5.0, 20);
  const PointSet a = to_pointset(sa), b = to_pointset(sb);
  const auto ra = angular(a, nullptr, bins, false, cpu());
  EXPECT_EQ(ra.raw.counts, oracle::histogram(sa, nullptr, bins.edges(), 2).counts);
  const auto rc = angular(a, &b, bins, false, cpu());
  EXPECT_EQ(rc.raw.counts, oracle::histogram(sa, &sb, bins.edges(), 2).counts);
}

TEST(CpuFastPath, WindowedGridAtItsLimits) {
  // The grid's per-anchor windows (GridWindows) through the whole fast path: exactly 2·refine + 1
  // cells along an axis (refine 2: 5 cells of side 10 at r_max 3.9; refine 1: 3 cells at 3.2),
  // r_max close to L/2 (the plain blocks), an anisotropic box, points on cell and slice
  // boundaries and at the box's faces, clustered points, open space; histograms, counts and pair
  // lists, auto and cross, against the float64 oracle.
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto scaled = [&](std::size_t n, const std::vector<double>& L) {
    auto u = testing_support::uniform_points(n, 3, 0, 1, rng);
    for (auto& x : u.x)
      for (int d = 0; d < 3; ++d) x[d] = std::min(x[d] * L[d], std::nextafter(L[d], 0.0));
    return to_pointset(u);
  };
  PointSet faces = lattice(16, 16, 16, 0.625);
  for (double x : {0.0, std::nextafter(10.0, 0.0)})
    for (double y : {0.0, std::nextafter(10.0, 0.0)})
      for (double z : {0.0, 5.0, std::nextafter(10.0, 0.0)}) faces.push_back(std::vector<double>{x, y, z});
  ClusterOptions c;
  c.kind = ClusterOptions::Kind::GaussianBlobs;
  c.blobs = 3;
  c.sigma = 0.03;
  const PointSet clustered = generate_clustered_box(2500, 3, 10.0, c, seed);
  const std::vector<double> cube{10, 10, 10}, slab{10, 13, 7.9};
  const PointSet u = scaled(2000, cube), v = scaled(1200, cube), w = scaled(2000, slab), x = scaled(900, slab);
  for (double rmax : {3.9, 3.2, 2.5, 4.99}) {
    SCOPED_TRACE("rmax " + std::to_string(rmax));
    const Binning bins = Binning::linear(0.0, rmax, 8);
    expect_histograms(u, v, bins, cube);
    expect_histograms(faces, u, bins, cube);
    expect_histograms(clustered, v, bins, cube);
    expect_histograms(faces, clustered, bins, {});
    if (rmax < 3.9) expect_histograms(w, x, Binning::logarithmic(0.1, rmax, 7), slab);
  }
  // The cube's uniform sets at r_max 3.2 take the windows (3 cells of refine 1 per side: exactly
  // 2·refine + 1); a denser set takes them at refine 2 with 5 cells per side (r_max 3.9).
  const auto windowed = [](const Result& r) {
    return r.info.plan.find("per-anchor windows") != std::string::npos;
  };
  const Binning b32 = Binning::linear(0.0, 3.2, 8);
  EXPECT_TRUE(windowed(run(stat(Traversal::Auto, b32, cube), u, nullptr, cpu("grid"))));
  EXPECT_TRUE(windowed(run(stat(Traversal::Cross, b32, cube), u, &v, cpu("grid"))));
  const PointSet dense = scaled(9000, cube);
  const Binning b39 = Binning::logarithmic(0.05, 3.9, 9);
  const auto rd = run(stat(Traversal::Auto, b39, cube), dense, nullptr, cpu("grid"));
  EXPECT_TRUE(windowed(rd)) << rd.info.plan;
  EXPECT_NE(rd.info.plan.find("refine 2"), std::string::npos) << rd.info.plan;
  EXPECT_EQ(rd.counts, oracle::histogram(to_oracle(dense), nullptr, b39.edges(), 1, cube).counts);
  // Pair lists on the lattice: distances on the edges 0.625·k.
  const Binning range = Binning::from_edges({0.625, 3.125});
  for (bool periodic : {true, false})
    for (bool cross : {false, true}) {
      SCOPED_TRACE(std::string(periodic ? "periodic " : "open ") + (cross ? "cross" : "auto"));
      const auto box = periodic ? cube : std::vector<double>{};
      auto s = stat(cross ? Traversal::Cross : Traversal::Auto, range, box, OutputKind::PairList);
      const auto r = run(s, faces, cross ? &u : nullptr, cpu("grid"));
      const auto op = to_oracle(faces), ou = to_oracle(u);
      const auto& ob = cross ? ou : op;
      std::vector<std::pair<std::size_t, std::size_t>> expected;
      for (std::size_t i = 0; i < op.x.size(); ++i)
        for (std::size_t j = cross ? 0 : i + 1; j < ob.x.size(); ++j) {
          const double d2 = periodic ? oracle::d2_periodic(op.x[i], ob.x[j], cube) : oracle::d2_open(op.x[i], ob.x[j]);
          if (0.625 * 0.625 <= d2 && d2 < 3.125 * 3.125) expected.emplace_back(i, j);
        }
      ASSERT_EQ(r.pairs.size(), expected.size());
      for (std::size_t k = 0; k < expected.size(); ++k) {
        ASSERT_EQ(r.pairs[k].i, expected[k].first);
        ASSERT_EQ(r.pairs[k].j, expected[k].second);
      }
    }
}
