// Statistics against closed forms. In a periodic box (and on the full sphere) the indicator of
// pair (i, j) is independent of that of (i, k), so a count with expectation E has variance
// E(1 - p) < E: six standard deviations is sqrt(E) * 6.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;

namespace {
RunOptions cpu_opts() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}
}  // namespace

TEST(PairCount, UniformPeriodicBoxMatchesExpectedCounts) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  const std::size_t n = 6000;
  const auto p = generate_uniform_box(n, 3, L, seed);
  const Binning bins = Binning::logarithmic(1.0, 50.0, 12);
  const auto r = paircount(p, nullptr, bins, Box::cube(3, L), false, cpu_opts());
  const double pairs = 0.5 * n * (n - 1.0);
  for (std::size_t k = 0; k < bins.nbins(); ++k) {
    const double e = pairs * shell_volume(3, bins.lo(k), bins.hi(k)) / (L * L * L);
    EXPECT_NEAR(static_cast<double>(r.raw.counts[k]), e, 6 * std::sqrt(e)) << "bin " << k;
  }
}

TEST(Rdf, IdealGasIsOne) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<double> L{20.0, 30.0, 25.0};
  const Box box = Box::from_lengths(L);
  PointSet a = generate_uniform_box(5000, 3, 1.0, seed);
  PointSet b = generate_uniform_box(3000, 3, 1.0, seed + 1);
  for (auto* p : {&a, &b})
    for (int d = 0; d < 3; ++d)
      for (double& x : p->coord(d)) x *= L[d];
  const Binning bins = Binning::linear(0.5, 10.0, 19);
  for (const PointSet* second : {static_cast<const PointSet*>(nullptr), static_cast<const PointSet*>(&b)}) {
    const auto r = rdf(a, second, bins, box, cpu_opts());
    ASSERT_EQ(r.derived.size(), 2u);
    const auto& expected = r.derived[0].values;
    const auto& g = r.derived[1].values;
    for (std::size_t k = 0; k < bins.nbins(); ++k)
      EXPECT_NEAR(g[k], 1.0, 6.0 / std::sqrt(expected[k])) << "bin " << k << (second ? " cross" : " auto");
  }
}

TEST(Rdf, TwoDimensionalShells) {
  const auto seed = testing_support::fresh_seed();
  const auto p = generate_uniform_box(8000, 2, 50.0, seed);
  const auto r = rdf(p, nullptr, Binning::linear(0.0, 25.0, 10), Box::cube(2, 50.0), cpu_opts());
  for (std::size_t k = 0; k < 10; ++k) EXPECT_NEAR(r.derived[1].values[k], 1.0, 6.0 / std::sqrt(r.derived[0].values[k]));
}

TEST(Angular, UniformSkyMatchesSphericalCapAreas) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 8000;
  const auto p = generate_uniform_sky(n, seed);
  const Binning bins = Binning::logarithmic(0.5, 120.0, 10);
  const auto r = angular(p, nullptr, bins, false, cpu_opts());
  const double pairs = 0.5 * n * (n - 1.0);
  for (std::size_t k = 0; k < bins.nbins(); ++k) {
    const double e = pairs * 0.5 * (std::cos(bins.lo(k) * M_PI / 180) - std::cos(bins.hi(k) * M_PI / 180));
    EXPECT_NEAR(static_cast<double>(r.raw.counts[k]), e, 6 * std::sqrt(e)) << "bin " << k;
  }
}

TEST(Angular, WeightedCountsAreProductsOfWeights) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  auto pts = testing_support::sky_points(700, rng);
  std::uniform_real_distribution<double> uw(0.1, 3.0);
  for (std::size_t i = 0; i < pts.x.size(); ++i) pts.w.push_back(uw(rng));
  const Binning bins = Binning::linear(0.0, 60.0, 6);
  const auto r = angular(testing_support::to_pointset(pts), nullptr, bins, true, cpu_opts());
  const auto o = oracle::histogram(pts, nullptr, bins.edges(), 2, {}, true);
  EXPECT_EQ(r.raw.counts, o.counts);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(r.raw.weighted[k], o.weighted[k], 1e-9 * o.weighted[k]);
}

TEST(Validation, ClearErrorsForBadRequests) {
  const auto p = generate_uniform_box(100, 3, 10.0, 5);
  auto kind = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  // rmax beyond half the box.
  EXPECT_EQ(kind([&] { paircount(p, nullptr, Binning::linear(0, 5.5, 3), Box::cube(3, 10.0), false, cpu_opts()); }), ErrorKind::Config);
  // Points outside the box, and --wrap curing it.
  PointSet q = p;
  q.coord(1)[17] = 10.0;
  EXPECT_EQ(kind([&] { paircount(q, nullptr, Binning::linear(0, 4, 3), Box::cube(3, 10.0), false, cpu_opts()); }), ErrorKind::Input);
  q.coord(1)[18] = -0.25;
  wrap_into_box(q, Box::cube(3, 10.0));
  EXPECT_EQ(q.coord(1)[17], 0.0);
  EXPECT_EQ(q.coord(1)[18], 9.75);
  EXPECT_NO_THROW(paircount(q, nullptr, Binning::linear(0, 4, 3), Box::cube(3, 10.0), false, cpu_opts()));
  // Weighted counts without weights; a box of the wrong dimension; declination beyond 90.
  EXPECT_EQ(kind([&] { paircount(p, nullptr, Binning::linear(0, 4, 3), std::nullopt, true, cpu_opts()); }), ErrorKind::Config);
  EXPECT_EQ(kind([&] { paircount(p, nullptr, Binning::linear(0, 4, 3), Box::cube(2, 10.0), false, cpu_opts()); }), ErrorKind::Config);
  PointSet sky = generate_uniform_sky(10, 3);
  sky.coord(1)[4] = 91.0;
  EXPECT_EQ(kind([&] { angular(sky, nullptr, Binning::linear(0, 4, 3), false, cpu_opts()); }), ErrorKind::Input);
  EXPECT_EQ(kind([&] { angular(p, nullptr, Binning::linear(0, 4, 3), false, cpu_opts()); }), ErrorKind::Config);
  // An unknown backend; an empty point set.
  RunOptions bad = cpu_opts();
  bad.backend = "fpga";
  EXPECT_EQ(kind([&] { sdh(p, Binning::linear(0, 4, 3), bad); }), ErrorKind::Config);
  EXPECT_EQ(kind([&] { sdh(PointSet(3, 0), Binning::linear(0, 4, 3), cpu_opts()); }), ErrorKind::Input);
}

TEST(Sdh, DefaultBinsHoldEveryPair) {
  const auto seed = testing_support::fresh_seed();
  const auto p = generate_clustered_box(2000, 3, 1.0, ClusterOptions{}, seed);
  const auto bins = sdh_default_binning(p, 256);
  const auto r = sdh(p, bins, cpu_opts());
  std::uint64_t total = 0;
  for (auto c : r.raw.counts) total += c;
  EXPECT_EQ(total, 2000u * 1999u / 2);
}

// Dense matrices through the statistics API: every entry against a float64 brute force (open and
// periodic distances, auto and cross; angular separations from RA, Dec in degrees).
TEST(Matrix, DistanceAndAngularMatricesEqualBruteForce) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pa = testing_support::uniform_points(301, 3, 0, 20, rng);
  const auto pb = testing_support::uniform_points(77, 3, 0, 20, rng);
  const PointSet A = testing_support::to_pointset(pa), B = testing_support::to_pointset(pb);
  const std::vector<double> L(3, 20.0);
  for (bool periodic : {false, true}) {
    SCOPED_TRACE(periodic ? "periodic" : "open");
    const std::optional<Box> box = periodic ? std::optional<Box>(Box::cube(3, 20.0)) : std::nullopt;
    const auto d = [&](const auto& x, const auto& y) {
      return std::sqrt(periodic ? oracle::d2_periodic(x, y, L) : oracle::d2_open(x, y));
    };
    const Result cross = distance_matrix(A, &B, box, cpu_opts());
    ASSERT_EQ(cross.rows, A.size());
    ASSERT_EQ(cross.cols, B.size());
    for (std::size_t i = 0; i < cross.rows; ++i)
      for (std::size_t j = 0; j < cross.cols; ++j) ASSERT_DOUBLE_EQ(cross.matrix[i * cross.cols + j], d(pa.x[i], pb.x[j]));
    const Result self = distance_matrix(B, nullptr, box, cpu_opts());
    ASSERT_EQ(self.rows, B.size());
    ASSERT_EQ(self.cols, B.size());
    for (std::size_t i = 0; i < self.rows; ++i)
      for (std::size_t j = 0; j < self.cols; ++j) ASSERT_DOUBLE_EQ(self.matrix[i * self.cols + j], d(pb.x[i], pb.x[j]));
  }
  const auto sa = testing_support::sky_points(150, rng), sb = testing_support::sky_points(40, rng);
  const Result ang = angular_matrix(testing_support::to_pointset(sa), nullptr, cpu_opts());
  ASSERT_EQ(ang.rows, sa.x.size());
  const PointSet SB = testing_support::to_pointset(sb);
  const Result angx = angular_matrix(testing_support::to_pointset(sa), &SB, cpu_opts());
  for (std::size_t i = 0; i < angx.rows; ++i)
    for (std::size_t j = 0; j < angx.cols; ++j) {
      const auto u = oracle::unit_vector(sa.x[i][0], sa.x[i][1]), v = oracle::unit_vector(sb.x[j][0], sb.x[j][1]);
      const double chord = std::sqrt(oracle::d2_open(u, v));
      const double theta = 2 * std::asin(std::min(1.0, chord / 2)) * 180 / std::numbers::pi;
      ASSERT_NEAR(angx.matrix[i * angx.cols + j], theta, 1e-9) << i << ' ' << j;
    }
  // (The angle of a point with itself, from acos of the rounded dot product: within ~3 mas of 0.)
  for (std::size_t i = 0; i < ang.rows; ++i) EXPECT_LT(ang.matrix[i * ang.cols + i], 1e-5);
}
