// Per-point reductions (OutputKind::PerPoint) on the CPU against the float64 oracle: for every
// point its partners in [lo, hi) and the sum of their weights, auto and cross, open and periodic
// (r_max up to half the box, boxes of fewer than 3 cells a side), uniform, clustered and lattice
// data, both traversals and several thread counts. Counts must be identical, weighted sums equal
// to rounding.
#include <gtest/gtest.h>

#include <numeric>

#include "test_support.hpp"
#include "twobody/extend/run_custom.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_oracle;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

Statistic per_point_stat(bool cross, double lo, double hi, std::optional<Box> box, bool weighted) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = reduce::PerPoint{Binning::from_edges({lo, hi})};
  s.weighted = weighted;
  return s;
}

RunOptions on_cpu(const char* path, int threads) {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  o.threads = threads;
  return o;
}


void expect_near_all(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) ASSERT_NEAR(got[k], want[k], 1e-10 * (1 + std::abs(want[k]))) << k;
}

void expect_equal(const Result& r, const oracle::PerPoint& o, bool cross, bool weighted) {
  EXPECT_EQ(r.output, OutputKind::PerPoint);
  EXPECT_EQ(r.per_point_a.counts, o.counts_a);
  EXPECT_EQ(r.per_point_b.counts, cross ? o.counts_b : std::vector<std::uint64_t>{});
  if (weighted) {
    expect_near_all(r.per_point_a.weighted, o.wsum_a);
    if (cross) expect_near_all(r.per_point_b.weighted, o.wsum_b);
  } else {
    EXPECT_TRUE(r.per_point_a.weighted.empty());
    EXPECT_TRUE(r.per_point_b.weighted.empty());
  }
  EXPECT_TRUE(r.counts.empty());
}

// Runs `s` on both traversals and several thread counts, each against the oracle.
void expect_every_path(const Statistic& s, const PointSet& a, const PointSet* b, const oracle::PerPoint& o,
                       std::initializer_list<int> threads = {1, 2, 3}) {
  for (const char* path : {"brute", "grid"})
    for (int t : threads) {
      SCOPED_TRACE(std::string(path) + ", " + std::to_string(t) + " threads");
      const Result r = run(s, a, b, on_cpu(path, t));
      expect_equal(r, o, b != nullptr, s.weighted);
      EXPECT_NE(r.info.plan.find(std::string("cpu path: ") + (path[0] == 'g' ? "grid" : "brute force")),
                std::string::npos)
          << r.info.plan;
    }
}

}  // namespace

TEST(PerPoint, OpenSpaceUniformEveryDimension) {
  for (int dim : {1, 2, 3, 5, 8}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + " dim " + std::to_string(dim));
    std::mt19937_64 rng(seed);
    const auto pa = uniform_points(901, dim, -3.0, 7.0, rng, true);
    const auto pb = uniform_points(457, dim, -3.0, 7.0, rng, true);
    const auto A = to_pointset(pa), B = to_pointset(pb);
    const double hi = dim <= 2 ? 0.9 : 2.5, lo = dim == 3 ? 0.4 : 0.0;
    for (bool weighted : {false, true}) {
      expect_every_path(per_point_stat(false, lo, hi, std::nullopt, weighted), A, nullptr,
                        oracle::per_point(pa, nullptr, lo, hi, 0));
      expect_every_path(per_point_stat(true, lo, hi, std::nullopt, weighted), A, &B,
                        oracle::per_point(pa, &pb, lo, hi, 0));
    }
  }
}

TEST(PerPoint, PeriodicUpToHalfTheBoxAndFewCells) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<double> L{10.0, 14.0, 7.5};
  const auto scaled = [&](std::size_t n) {
    auto p = uniform_points(n, 3, 0.0, 1.0, rng, true);
    for (auto& x : p.x)
      for (int d = 0; d < 3; ++d) x[d] = std::min(x[d] * L[d], std::nextafter(L[d], 0.0));
    return p;
  };
  const auto pa = scaled(1500), pb = scaled(777);
  const auto A = to_pointset(pa), B = to_pointset(pb);
  const Box box = Box::from_lengths(L);
  // r_max = L_min / 2 (two cells along z), just below it, and a short reach (many cells).
  for (double hi : {3.75, std::nextafter(3.75, 0.0), 2.6, 0.8}) {
    SCOPED_TRACE("rmax " + std::to_string(hi));
    for (bool weighted : {false, true}) {
      expect_every_path(per_point_stat(false, 0.0, hi, box, weighted), A, nullptr,
                        oracle::per_point(pa, nullptr, 0.0, hi, 1, L));
      expect_every_path(per_point_stat(true, 0.3, hi, box, weighted), A, &B,
                        oracle::per_point(pa, &pb, 0.3, hi, 1, L));
    }
  }
}

TEST(PerPoint, ClusteredEveryThreadCount) {
  const double L = 100.0;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_clustered_box(3000, 3, L, ClusterOptions{}, seed);
  ClusterOptions blobs;
  blobs.kind = ClusterOptions::Kind::GaussianBlobs;
  blobs.blobs = 4;
  blobs.sigma = 0.02;
  PointSet b = generate_clustered_box(1800, 3, L, blobs, seed + 1);
  a = testing_support::with_weights(std::move(a), seed + 2, 0.5, 2.0);
  b = testing_support::with_weights(std::move(b), seed + 3, 0.5, 2.0);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  for (double hi : {2.0, 9.0}) {
    SCOPED_TRACE("rmax " + std::to_string(hi));
    const Box box = Box::cube(3, L);
    expect_every_path(per_point_stat(false, 0.0, hi, box, true), a, nullptr,
                      oracle::per_point(oa, nullptr, 0.0, hi, 1, {L, L, L}), {1, 2, 4, 7});
    expect_every_path(per_point_stat(true, 0.0, hi, std::nullopt, true), a, &b,
                      oracle::per_point(oa, &ob, 0.0, hi, 0), {1, 2, 4, 7});
  }
}

// Integer lattice: squared distances and edges are integers, so many pairs lie exactly on an edge:
// distance 1 is in [1, 2), distance 2 is not (nor is sqrt(4) across the periodic seam).
TEST(PerPoint, LatticePairsOnTheEdges) {
  PointSet p(3, 0);
  for (int x = 0; x < 12; ++x)
    for (int y = 0; y < 10; ++y)
      for (int z = 0; z < 8; ++z) p.push_back(std::vector<double>{double(x), double(y), double(z)});
  const auto o = to_oracle(p);
  expect_every_path(per_point_stat(false, 1.0, 2.0, std::nullopt, false), p, nullptr,
                    oracle::per_point(o, nullptr, 1.0, 2.0, 0));
  const Box box = Box::from_lengths(std::vector<double>{12, 10, 8});
  const Result r = run(per_point_stat(false, 1.0, 2.0, box, false), p, nullptr, on_cpu("grid", 2));
  expect_equal(r, oracle::per_point(o, nullptr, 1.0, 2.0, 1, {12, 10, 8}), false, false);
  // In the periodic lattice every point has 6 neighbours at 1 and 12 at sqrt(2), sqrt(3) < 2: 26.
  for (auto c : r.per_point_a.counts) ASSERT_EQ(c, 6u + 12u + 8u);
}

TEST(PerPoint, LargeOffsetsSmallSpread) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = uniform_points(1200, 3, 1e4, 1e4 + 5.0, rng, true);
  const auto pb = uniform_points(600, 3, 1e4, 1e4 + 5.0, rng, true);
  const auto A = to_pointset(pa), B = to_pointset(pb);
  expect_every_path(per_point_stat(true, 0.0, 0.7, std::nullopt, true), A, &B, oracle::per_point(pa, &pb, 0.0, 0.7, 0));
}

// The per-point counts add up to the pairs in range (twice in auto: a pair adds to both points).
TEST(PerPoint, SumsAgreeWithTheReduction) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_uniform_box(4000, 3, 50.0, seed);
  PointSet b = generate_uniform_box(2500, 3, 50.0, seed + 1);
  for (bool cross : {false, true}) {
    Statistic s = per_point_stat(cross, 0.5, 4.0, Box::cube(3, 50.0), false);
    const Result r = run(s, a, cross ? &b : nullptr, on_cpu("auto", 0));
    s.reduction = reduce::Count{s.binning()};
    const std::uint64_t pairs = run(s, a, cross ? &b : nullptr, on_cpu("auto", 0)).counts[0];
    const auto sum = [](const std::vector<std::uint64_t>& v) { return std::accumulate(v.begin(), v.end(), std::uint64_t(0)); };
    EXPECT_EQ(sum(r.per_point_a.counts), cross ? pairs : 2 * pairs);
    if (cross) EXPECT_EQ(sum(r.per_point_b.counts), pairs);
  }
  // Angles (brute force only): the same identity.
  std::mt19937_64 rng(seed);
  const PointSet sky = sky_to_unit_vectors(to_pointset(testing_support::sky_points(1500, rng)));
  Statistic s;
  s.metric = Metric::Angular;
  s.reduction = reduce::PerPoint{Binning::from_edges({0.0, 5.0})};
  const Result r = run(s, sky, nullptr, on_cpu("auto", 2));
  s.reduction = reduce::Count{s.binning()};
  EXPECT_EQ(std::accumulate(r.per_point_a.counts.begin(), r.per_point_a.counts.end(), std::uint64_t(0)),
            2 * run(s, sky, nullptr, on_cpu("auto", 2)).counts[0]);
}

// A user's pair function (no float32 fast path: the float64 rows) through the same sink.
struct SquaredDistance3 {
  static constexpr int dim = 3;
  template <class T>
  T key(const T* a, const T* b) const {
    T s = 0;
    for (int d = 0; d < 3; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
  }
  double key_of(double r) const { return r * r; }
  double natural_of(double k) const { return std::sqrt(k); }
};

TEST(PerPoint, UserPairFunctionTakesTheFloat64Rows) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = uniform_points(800, 3, 0.0, 10.0, rng, true);
  const auto pb = uniform_points(500, 3, 0.0, 10.0, rng, true);
  const auto A = to_pointset(pa), B = to_pointset(pb);
  for (int threads : {1, 3}) {
    RunOptions o = on_cpu("auto", threads);
    expect_equal(run_custom(SquaredDistance3{}, per_point_stat(false, 0.5, 2.0, std::nullopt, true), A, nullptr, o),
                 oracle::per_point(pa, nullptr, 0.5, 2.0, 0), false, true);
    expect_equal(run_custom(SquaredDistance3{}, per_point_stat(true, 0.5, 2.0, std::nullopt, true), A, &B, o),
                 oracle::per_point(pa, &pb, 0.5, 2.0, 0), true, true);
  }
}

TEST(PerPoint, ExplainAndBadRequests) {
  const PointSet a = generate_uniform_box(3000, 3, 100.0, 5);
  Statistic s = per_point_stat(false, 0.0, 5.0, Box::cube(3, 100.0), false);
  const std::string plan = explain(s, a, nullptr, on_cpu("auto", 2));
  EXPECT_NE(plan.find("per-point reduction"), std::string::npos) << plan;
  EXPECT_NE(plan.find("cpu path: grid"), std::string::npos) << plan;
  EXPECT_NE(explain(s, a, nullptr, on_cpu("brute", 2)).find("cpu path: brute force (requested)"), std::string::npos);
  s.weighted = true;  // no weights
  EXPECT_THROW(run(s, a, nullptr, on_cpu("auto", 2)), Error);
  s.weighted = false;
  // Jackknife regions and mean separations: a per-point reduction has neither to set, and asking
  // for them is a Config error saying why (before reduction types, the run refused them).
  testing_support::expect_config_error([&] { s.set_regions(4); },
                                       "jackknife regions are counted for histograms, not for a per-point reduction");
  EXPECT_EQ(s.regions(), 0);
  EXPECT_NO_THROW(s.set_regions(0));
  testing_support::expect_config_error([&] { s.set_mean_separation(true); },
                                       "mean separations are summed per histogram bin, not for a per-point reduction");
  EXPECT_FALSE(s.mean_separation());
  EXPECT_NO_THROW(s.set_mean_separation(false));
  EXPECT_NO_THROW(run(s, a, nullptr, on_cpu("auto", 2)));
  s.reduction = reduce::PerPoint{Binning::from_edges({0.0, 60.0})};  // beyond half the box
  EXPECT_THROW(run(s, a, nullptr, on_cpu("auto", 2)), Error);
}

TEST(PerPoint, NeighbourCountsStatistic) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = uniform_points(700, 2, 0.0, 20.0, rng, true);
  const auto A = to_pointset(pa);
  const Result r = neighbour_counts(A, nullptr, Binning::from_edges({0.0, 1.5}), Box::cube(2, 20.0), true, on_cpu("auto", 2));
  expect_equal(r, oracle::per_point(pa, nullptr, 0.0, 1.5, 1, {20.0, 20.0}), false, true);
}
