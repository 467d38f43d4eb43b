// Angles on the CPU's cell grid (cells of the unit vectors' chord, engine/angular_reach.hpp)
// against the CPU's brute force, bit for bit, and the float64 oracle: uniform and clustered skies,
// poles and RA = 0/360, antipodes, duplicates, pairs exactly on a bin edge and an ulp inside the
// last one, θ_max from 0.001° to 179.9°, auto and cross, every output the grid serves (histograms
// with weights, regions and mean separations, counts, per-point counts, pair lists), and w(θ) and
// KK on the sky through the same runs.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "same_result.hpp"
#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/detail/engine/angular_reach.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/extend/pair_function.hpp"
#include "twobody/generate.hpp"
#include "twobody/scalar_correlation.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::expect_same_result;
using testing_support::fresh_seed;

namespace {

RunOptions on_path(const std::string& path, int threads = 2) {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  o.threads = threads;
  return o;
}

Statistic angular_stat(Traversal t, Reduction r, bool weighted = false) {
  Statistic s;
  s.traversal = t;
  s.metric = Metric::Angular;
  s.reduction = std::move(r);
  s.weighted = weighted;
  return s;
}

void expect_same_columns(const BinnedResult& got, const BinnedResult& want) {
  ASSERT_EQ(got.derived.size(), want.derived.size());
  for (std::size_t c = 0; c < got.derived.size(); ++c)
    testing_support::expect_same_doubles(got.derived[c].values, want.derived[c].values, got.derived[c].name.c_str());
}

bool ran_grid(const Result& r) { return r.info.plan.find("cpu path: grid") != std::string::npos; }

// The grid run equals the brute-force run bit for bit; returns the grid's result.
Result expect_grid_equals_brute(const Statistic& s, const PointSet& a, const PointSet* b, bool must_grid = true) {
  const Result grid = run(s, a, b, on_path("grid"));
  const Result brute = run(s, a, b, on_path("brute", 1));
  if (must_grid) EXPECT_TRUE(ran_grid(grid)) << grid.info.plan;
  EXPECT_FALSE(ran_grid(brute)) << brute.info.plan;
  expect_same_result(grid, brute);
  return grid;
}

// Unit vectors with a weight in [0.5, 1.5) and a region label in [0, regions) each.
PointSet sky(const PointSet& radec, std::mt19937_64& rng, int regions = 0) {
  PointSet u = sky_to_unit_vectors(radec);
  u = testing_support::with_weights(std::move(u), rng);
  if (regions > 0) {
    std::uniform_int_distribution<std::int32_t> r(0, regions - 1);
    std::vector<std::int32_t> l(u.size());
    for (auto& x : l) x = r(rng);
    u.set_regions(std::move(l));
  }
  return u;
}

PointSet radec_of(const std::vector<std::pair<double, double>>& p) {
  PointSet s(2, p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    s.coord(0)[i] = p[i].first;
    s.coord(1)[i] = p[i].second;
  }
  return s;
}

// Every output of the grid on one pair of sets with bins ending at theta_max.
void expect_every_output(const PointSet& a, const PointSet* b, double theta_min, double theta_max, int regions) {
  const Traversal t = b ? Traversal::Cross : Traversal::Auto;
  const Binning bins = Binning::logarithmic(theta_min, theta_max, 12);
  const Binning range = Binning::from_edges({0.0, theta_max});
  expect_grid_equals_brute(angular_stat(t, reduce::Histogram{bins}), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::Histogram{bins}, true), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::Histogram{bins, regions, true}, true), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::Histogram{bins, 0, true}), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::Count{range}, true), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::PerPoint{range}, true), a, b);
  expect_grid_equals_brute(angular_stat(t, reduce::PairList{range}), a, b);
  reduce::Count closed{range};
  closed.include_hi = true;
  expect_grid_equals_brute(angular_stat(t, closed), a, b);
}

}  // namespace

// The bound itself: every pair the rule counts lies within the chord, on unit vectors from RA/Dec
// and on vectors far from unit length.
TEST(AngularGrid, ReachBoundsEveryCountedPair) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet u = sky_to_unit_vectors(generate_clustered_sky(3000, ClusterOptions{}, seed));
  for (const double theta : {1e-4, 0.01, 1.0, 30.0, 120.0, 179.9}) {
    const double hi = AngularSeparation{}.key_of(theta);
    const AngularReach r = angular_reach(hi, u, u, 1);
    EXPECT_NEAR(r.chord, 2 * std::sin(0.5 * theta * std::numbers::pi / 180), 1e-7) << theta;
    for (std::size_t i = 0; i < u.size(); ++i)
      for (std::size_t j = i + 1; j < u.size(); ++j) {
        const double a[3] = {u.coord(0)[i], u.coord(1)[i], u.coord(2)[i]};
        const double b[3] = {u.coord(0)[j], u.coord(1)[j], u.coord(2)[j]};
        if (!(AngularSeparation{}.key(a, b) < hi)) continue;
        const long double dx = (long double)a[0] - b[0], dy = (long double)a[1] - b[1], dz = (long double)a[2] - b[2];
        ASSERT_LT(std::sqrt(dx * dx + dy * dy + dz * dz), (long double)r.chord) << theta << " " << i << " " << j;
      }
  }
  // Vectors of length 3: the chord grows with the norms, and a value that is not finite gives none.
  PointSet big(3, 2);
  for (int d = 0; d < 3; ++d) big.coord(d)[0] = big.coord(d)[1] = std::sqrt(3.0);
  EXPECT_GT(angular_reach(AngularSeparation{}.key_of(1.0), big, big, 1).chord, 4.0);
  big.coord(1)[1] = NAN;
  EXPECT_TRUE(std::isinf(angular_reach(AngularSeparation{}.key_of(1.0), big, big, 1).chord));
}

TEST(AngularGrid, UniformAndClusteredSkiesEqualBruteForceAndOracle) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet ra = generate_uniform_sky(2500, seed), rb = generate_clustered_sky(2000, ClusterOptions{}, seed + 1);
  const PointSet a = sky(ra, rng, 7), b = sky(rb, rng, 7);
  const auto oa = testing_support::to_oracle(ra), ob = testing_support::to_oracle(rb);
  for (const double theta_max : {0.5, 4.0, 25.0, 90.0}) {
    SCOPED_TRACE("theta_max " + std::to_string(theta_max));
    const Binning bins = Binning::logarithmic(theta_max / 200, theta_max, 15);
    const Result auto_grid = expect_grid_equals_brute(angular_stat(Traversal::Auto, reduce::Histogram{bins}), b, nullptr);
    EXPECT_EQ(auto_grid.counts, oracle::histogram(ob, nullptr, bins.edges(), 2).counts);
    const Result cross_grid = expect_grid_equals_brute(angular_stat(Traversal::Cross, reduce::Histogram{bins}), a, &b);
    EXPECT_EQ(cross_grid.counts, oracle::histogram(oa, &ob, bins.edges(), 2).counts);
  }
  expect_every_output(a, nullptr, 0.01, 6.0, 7);
  expect_every_output(b, nullptr, 0.01, 6.0, 7);
  expect_every_output(a, &b, 0.01, 6.0, 7);
}

// The poles (every RA at Dec ±90), RA = 0 and 360 (the same meridian), points an ulp from them,
// and a crowd around each, so that pairs straddle the pole and the RA = 0 seam.
TEST(AngularGrid, PolesAndTheRaSeam) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<double, double>> p;
  for (const double dec : {90.0, -90.0, std::nextafter(90.0, 0.0), -std::nextafter(90.0, 0.0), 89.99, -89.99})
    for (const double ra : {0.0, 45.0, 180.0, 359.999, 360.0}) p.push_back({ra, dec});
  for (const double dec : {-30.0, 0.0, 1e-9, 45.0})
    for (const double ra : {0.0, 360.0, std::nextafter(360.0, 0.0), 1e-12, 359.99}) p.push_back({ra, dec});
  std::uniform_real_distribution<double> near_pole(85.0, 90.0), any_ra(0.0, 360.0), seam(-2.0, 2.0), dec(-60, 60);
  for (int k = 0; k < 600; ++k) p.push_back({any_ra(rng), near_pole(rng)});
  for (int k = 0; k < 600; ++k) p.push_back({any_ra(rng), -near_pole(rng)});
  for (int k = 0; k < 800; ++k) p.push_back({std::fmod(seam(rng) + 360.0, 360.0), dec(rng)});
  const PointSet radec = radec_of(p);
  const PointSet a = sky(radec, rng, 5);
  const auto o = testing_support::to_oracle(radec);
  for (const double theta_max : {0.3, 3.0, 10.0}) {
    const Binning bins = Binning::logarithmic(1e-4, theta_max, 10);
    const Result g = expect_grid_equals_brute(angular_stat(Traversal::Auto, reduce::Histogram{bins}), a, nullptr);
    EXPECT_EQ(g.counts, oracle::histogram(o, nullptr, bins.edges(), 2).counts);
  }
  expect_every_output(a, nullptr, 1e-4, 5.0, 5);
}

// Antipodal pairs and bins up to 179.9° (the grid's cells then span the sphere: it must still be
// exact when forced, and the cost model chooses brute force); 180° itself takes brute force.
TEST(AngularGrid, AntipodesAndThetaNear180) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet half = generate_uniform_sky(700, seed);
  std::vector<std::pair<double, double>> p;
  for (std::size_t i = 0; i < half.size(); ++i) {
    const double ra = half.coord(0)[i], dec = half.coord(1)[i];
    p.push_back({ra, dec});
    p.push_back({std::fmod(ra + 180.0, 360.0), -dec});  // its antipode, to rounding
  }
  const PointSet radec = radec_of(p);
  const PointSet a = sky(radec, rng, 4);
  const auto o = testing_support::to_oracle(radec);
  for (const double theta_max : {150.0, 179.0, 179.9}) {
    const Binning bins = Binning::linear(theta_max - 10, theta_max, 8);
    const Result g = expect_grid_equals_brute(angular_stat(Traversal::Auto, reduce::Histogram{bins}), a, nullptr);
    EXPECT_EQ(g.counts, oracle::histogram(o, nullptr, bins.edges(), 2).counts);
    const Result chosen = run(angular_stat(Traversal::Auto, reduce::Histogram{bins}), a, nullptr, on_path("auto"));
    EXPECT_FALSE(ran_grid(chosen)) << chosen.info.plan;
  }
  expect_every_output(a, nullptr, 170.0, 179.9, 4);
  const Binning to_180 = Binning::linear(170.0, 180.0, 5);
  const Result whole = run(angular_stat(Traversal::Auto, reduce::Histogram{to_180}), a, nullptr, on_path("grid"));
  EXPECT_NE(whole.info.plan.find("cutoff reaches the whole sphere"), std::string::npos) << whole.info.plan;
  EXPECT_EQ(whole.counts, oracle::histogram(o, nullptr, to_180.edges(), 2).counts);
}

// Duplicates (pairs at θ = 0, whose keys may fall an ulp either side of −1) and tiny θ_max with
// pairs spread over a few thousandths of a degree.
TEST(AngularGrid, DuplicatesAndTinyThetaMax) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> ra(0.0, 360.0), dec(-80.0, 80.0), jitter(-0.002, 0.002);
  std::vector<std::pair<double, double>> p;
  for (int c = 0; c < 40; ++c) {
    const double r0 = ra(rng), d0 = dec(rng);
    for (int k = 0; k < 30; ++k) p.push_back({r0 + jitter(rng), d0 + jitter(rng)});
    for (int k = 0; k < 5; ++k) p.push_back({r0, d0});  // duplicates
  }
  const PointSet radec = radec_of(p);
  const PointSet a = sky(radec, rng, 3);
  const auto o = testing_support::to_oracle(radec);
  for (const double theta_max : {0.001, 0.003, 0.01}) {
    const Binning bins = Binning::linear(0.0, theta_max, 10);
    const Result g = expect_grid_equals_brute(angular_stat(Traversal::Auto, reduce::Histogram{bins}), a, nullptr);
    EXPECT_EQ(g.counts, oracle::histogram(o, nullptr, bins.edges(), 2).counts);
  }
  expect_every_output(a, nullptr, 1e-5, 0.004, 3);
}

// Pairs exactly on bin edges: anchors on the axes (±e_x, ±e_y, ±e_z, exact unit vectors) and
// partners whose coordinate along an axis is cos θ_k exactly as the edges are mapped, so a·b is
// the edge's key to the bit; and partners an ulp inside θ_max, the pairs a too narrow grid would
// lose. The unit vectors are given to the engine directly.
TEST(AngularGrid, PairsExactlyOnBinEdgesAndAnUlpInsideTheLast) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> angle(0.0, 2 * std::numbers::pi);
  for (const double theta_max : {0.001, 0.2, 7.0, 60.0, 179.5}) {
    SCOPED_TRACE("theta_max " + std::to_string(theta_max));
    const Binning bins = Binning::linear(theta_max / 4, theta_max, 6);
    std::vector<double> cosines;
    for (const double e : bins.edges()) cosines.push_back(-AngularSeparation{}.key_of(e));
    const double last = cosines.back();
    cosines.push_back(std::nextafter(last, 2.0));  // an ulp inside θ_max
    cosines.push_back(std::nextafter(std::nextafter(last, 2.0), 2.0));
    std::vector<std::array<double, 3>> v;
    for (int axis = 0; axis < 3; ++axis)
      for (const double sign : {1.0, -1.0}) {
        std::array<double, 3> e{};
        e[axis] = sign;
        v.push_back(e);
        for (const double c : cosines)
          for (int k = 0; k < 6; ++k) {
            // Along the axis: sign·c (so that e·b = c exactly); across it, the rest of a unit vector.
            const double s = std::sqrt(std::max(0.0, 1 - c * c)), phi = angle(rng);
            std::array<double, 3> b{};
            b[axis] = sign * c;
            b[(axis + 1) % 3] = s * std::cos(phi);
            b[(axis + 2) % 3] = s * std::sin(phi);
            v.push_back(b);
          }
      }
    PointSet a(3, v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      for (int d = 0; d < 3; ++d) a.coord(d)[i] = v[i][d];
    a = testing_support::with_weights(std::move(a), rng);
    const Result g = expect_grid_equals_brute(angular_stat(Traversal::Auto, reduce::Histogram{bins}), a, nullptr);
    // Each axis anchor sees its 6 partners of every edge k < nbins in bin k, and those of the last
    // edge outside; the two ulps inside θ_max land in the last bin.
    std::vector<std::uint64_t> floor(bins.nbins(), 6 * 6);
    floor.back() += 6 * 6 * 2;
    for (int k = 0; k < bins.nbins(); ++k) EXPECT_GE(g.counts[k], floor[k]) << k;
    PointSet b(3, 6);
    for (int i = 0; i < 6; ++i)
      for (int d = 0; d < 3; ++d) b.coord(d)[i] = v[static_cast<std::size_t>(i) * (1 + 6 * cosines.size())][d];
    b = testing_support::with_weights(std::move(b), rng);
    // Cross, the axis anchors against everything: exactly those counts.
    const Result c = expect_grid_equals_brute(angular_stat(Traversal::Cross, reduce::Histogram{bins}), b, &a);
    for (int k = 0; k + 1 < bins.nbins(); ++k) EXPECT_GE(c.counts[k], 36u) << k;
    expect_every_output(a, nullptr, theta_max / 4, theta_max, 0);
  }
}

// w(θ) with random catalogues and jackknife regions, and KK on the sky: every run through the
// grid equals the brute force's.
TEST(AngularGrid, WthetaAndKkOnTheSky) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet data = testing_support::with_weights(generate_clustered_sky(2000, ClusterOptions{}, seed), seed + 7);
  const std::vector<PointSet> randoms{testing_support::with_weights(generate_uniform_sky(2500, seed + 1), seed + 8),
                                      testing_support::with_weights(generate_uniform_sky(2200, seed + 2), seed + 9)};
  const Binning bins = Binning::logarithmic(0.05, 8.0, 10);
  JackknifeRequest jk;
  jk.regions = 6;
  RunOptions grid = on_path("grid"), brute = on_path("brute", 1);
  grid.mean_separation = brute.mean_separation = true;
  const auto g = correlation(data, randoms, bins, CorrelationSpace::Sky, std::nullopt, true, grid, jk);
  const auto b = correlation(data, randoms, bins, CorrelationSpace::Sky, std::nullopt, true, brute, jk);
  expect_same_result(g.raw, b.raw);
  ASSERT_TRUE(g.jackknife && b.jackknife);
  EXPECT_EQ(g.jackknife->dd, b.jackknife->dd);
  EXPECT_EQ(g.jackknife->dr, b.jackknife->dr);
  EXPECT_EQ(g.jackknife->rr, b.jackknife->rr);
  testing_support::expect_same_doubles(g.jackknife->wrr, b.jackknife->wrr, "wrr");
  testing_support::expect_same_doubles(g.jackknife->sigma, b.jackknife->sigma, "sigma");
  expect_same_columns(g, b);

  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> kappa(data.size());
  for (auto& k : kappa) k = n01(rng);
  const ScalarCatalogue cat{data, kappa};
  const auto kg = kk_correlation(cat, nullptr, bins, CorrelationSpace::Sky, std::nullopt, true, grid);
  const auto kb = kk_correlation(cat, nullptr, bins, CorrelationSpace::Sky, std::nullopt, true, brute);
  expect_same_columns(kg, kb);
}

// The cost model takes the grid for a catalogue where it pays, and the plan says so and why.
TEST(AngularGrid, ChosenWhereItPaysAndExplained) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet radec = generate_uniform_sky(20000, seed);
  const BinnedResult r = angular(radec, nullptr, Binning::logarithmic(0.01, 10.0, 20), false, on_path("auto"));
  EXPECT_TRUE(ran_grid(r.raw)) << r.raw.info.plan;
  EXPECT_NE(r.raw.info.plan.find("chord"), std::string::npos) << r.raw.info.plan;
  EXPECT_LT(r.raw.info.pairs_evaluated, pair_total(radec.size(), radec.size(), true) / 10);
}
