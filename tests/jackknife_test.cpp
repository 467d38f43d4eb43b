// Jackknife regions (seed 003's inverse jackknives): the engine's per-region histograms against an
// independent brute force that applies the definition (T[r][k]: pairs of bin k with at least one
// point in region r), and the correlation functions' jackknife samples, errors and covariance
// against an explicit leave-one-region-out recount (the region's points removed, DD, DR and RR
// recounted, the estimator recomputed). Sky and box, weighted and unweighted; the error cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "jackknife_recount.hpp"
#include "test_support.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/cosmology.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"
#include "twobody/jackknife.hpp"

using namespace twobody;
using testing_support::with_weights;
using testing_support::without_region;
using jackknife_recount::expect_equals_recount;

namespace {

RunOptions cpu_opts(const std::string& path = "auto") {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  return o;
}

std::vector<std::int32_t> random_labels(std::size_t n, int R, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(0, R - 1);
  std::vector<std::int32_t> l(n);
  for (auto& x : l) x = u(rng);
  return l;
}

// The definition, pair by pair: T[r][k] counts a pair of bin k once for each r in {r_i, r_j}
// (as a set). Written without the engine's "r_i, and r_j when different" rule.
struct RegionOracle {
  std::vector<std::uint64_t> t;
  std::vector<double> w;
};
RegionOracle region_oracle(const oracle::Points& a, const std::vector<std::int32_t>& la, const oracle::Points* b,
                           const std::vector<std::int32_t>* lb, const std::vector<double>& edges, int kind,
                           const std::vector<double>& L, int R, bool weighted) {
  const std::size_t nb = edges.size() - 1;
  RegionOracle o{std::vector<std::uint64_t>(R * nb, 0), std::vector<double>(R * nb, 0.0)};
  const oracle::Points& B = b ? *b : a;
  const auto& LB = lb ? *lb : la;
  const auto prep = [&](const oracle::Points& p) {
    if (kind != 2) return p.x;
    std::vector<std::vector<double>> u;
    for (const auto& x : p.x) u.push_back(oracle::unit_vector(x[0], x[1]));
    return u;
  };
  const auto ua = prep(a), ub = b ? prep(B) : ua;
  for (std::size_t i = 0; i < ua.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < ub.size(); ++j) {
      const int k = kind == 2 ? oracle::bin_of_cos(ua[i][0] * ub[j][0] + ua[i][1] * ub[j][1] + ua[i][2] * ub[j][2], edges)
                              : oracle::bin_of_d2(kind == 1 ? oracle::d2_periodic(ua[i], ub[j], L)
                                                            : oracle::d2_open(ua[i], ub[j]),
                                                  edges);
      if (k < 0) continue;
      for (int r = 0; r < R; ++r)
        if (la[i] == r || LB[j] == r) {
          ++o.t[r * nb + k];
          if (weighted) o.w[r * nb + k] += a.w[i] * B.w[j];
        }
    }
  return o;
}

}  // namespace

// ---- the engine ------------------------------------------------------------------------------

TEST(RegionHistogram, AgainstBruteForceEveryMetricAndPath) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 6;
  struct Case {
    int kind;  // 0 open, 1 periodic, 2 angular
    bool cross, weighted;
    std::string path;
  };
  const std::vector<Case> cases = {{0, false, false, "brute"}, {0, false, true, "grid"},  {0, true, false, "grid"},
                                   {0, true, true, "brute"},   {1, false, false, "grid"}, {1, true, true, "grid"},
                                   {1, false, true, "brute"},  {2, false, false, "auto"}, {2, true, true, "auto"},
                                   {2, false, true, "auto"}};
  for (const Case& c : cases) {
    SCOPED_TRACE("kind " + std::to_string(c.kind) + (c.cross ? " cross" : " auto") + (c.weighted ? " weighted" : "") +
                 " path " + c.path);
    const double L = 40.0;
    const oracle::Points oa = c.kind == 2 ? testing_support::sky_points(700, rng)
                                          : testing_support::uniform_points(900, 3, 0, L, rng, c.weighted);
    const oracle::Points ob = c.kind == 2 ? testing_support::sky_points(500, rng)
                                          : testing_support::uniform_points(600, 3, 0, L, rng, c.weighted);
    oracle::Points wa = oa, wb = ob;
    if (c.kind == 2 && c.weighted) {
      std::uniform_real_distribution<double> uw(0.5, 2.0);
      for (std::size_t i = 0; i < wa.x.size(); ++i) wa.w.push_back(uw(rng));
      for (std::size_t i = 0; i < wb.x.size(); ++i) wb.w.push_back(uw(rng));
    }
    const auto la = random_labels(wa.x.size(), R, rng), lb = random_labels(wb.x.size(), R, rng);
    PointSet a = testing_support::to_pointset(wa), b = testing_support::to_pointset(wb);
    if (c.kind == 2) {
      a = sky_to_unit_vectors(a);
      b = sky_to_unit_vectors(b);
    }
    a.set_regions(la);
    b.set_regions(lb);
    const std::vector<double> edges = c.kind == 2 ? std::vector<double>{0.5, 2, 5, 10, 20, 40}
                                                  : std::vector<double>{0.5, 1.5, 3, 5, 7.5};
    Statistic s;
    s.traversal = c.cross ? Traversal::Cross : Traversal::Auto;
    s.metric = c.kind == 0 ? Metric::Euclidean : c.kind == 1 ? Metric::Periodic : Metric::Angular;
    if (c.kind == 1) s.box = Box::cube(3, L);
    s.reduction = reduce::Histogram{.bins = Binning::from_edges(edges), .regions = R};
    s.weighted = c.weighted;
    const Result r = run(s, a, c.cross ? &b : nullptr, cpu_opts(c.path));
    const std::vector<double> Ls(3, L);
    const auto h = oracle::histogram(wa, c.cross ? &wb : nullptr, edges, c.kind, Ls, c.weighted);
    const auto t = region_oracle(wa, la, c.cross ? &wb : nullptr, c.cross ? &lb : nullptr, edges, c.kind, Ls, R,
                                 c.weighted);
    EXPECT_EQ(r.regions, std::size_t(R));
    EXPECT_EQ(r.counts, h.counts);
    EXPECT_EQ(r.region_counts, t.t);
    if (c.weighted) {
      ASSERT_EQ(r.region_weighted.size(), t.w.size());
      for (std::size_t q = 0; q < t.w.size(); ++q) EXPECT_NEAR(r.region_weighted[q], t.w[q], 1e-9 * (1 + t.w[q]));
    } else {
      EXPECT_TRUE(r.region_weighted.empty());
    }
    // The same statistic without labels gives the same histogram.
    Statistic plain = s;
    plain.set_regions(0);
    EXPECT_EQ(run(plain, a, c.cross ? &b : nullptr, cpu_opts(c.path)).counts, r.counts);
  }
}

TEST(RegionHistogram, BadLabelsAndRequests) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  PointSet a = testing_support::to_pointset(testing_support::uniform_points(50, 3, 0, 10, rng));
  Statistic s;
  s.reduction = reduce::Histogram{.bins = Binning::linear(0, 5, 4), .regions = 3};
  const auto kind_of = [&](const Statistic& st, const PointSet& p) {
    try {
      run(st, p, nullptr, cpu_opts());
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of(s, a), ErrorKind::Config);  // no labels
  std::vector<std::int32_t> l(50, 1);
  l[17] = 3;  // outside [0, 3)
  a.set_regions(l);
  EXPECT_EQ(kind_of(s, a), ErrorKind::Input);
  l[17] = -1;
  a.set_regions(l);
  EXPECT_EQ(kind_of(s, a), ErrorKind::Input);
  l[17] = 2;
  a.set_regions(l);
  EXPECT_NO_THROW(run(s, a, nullptr, cpu_opts()));
  // Regions on a pair list: a pair list has none to set, and asking for them is a Config error
  // saying why (before reduction types, the run refused the statistic with the same message).
  Statistic list = s;
  list.reduction = reduce::PairList{s.binning()};
  testing_support::expect_config_error([&] { list.set_regions(3); },
                                       "jackknife regions are counted for histograms, not for a pair list");
  EXPECT_EQ(list.regions(), 0);
  EXPECT_NO_THROW(list.set_regions(0));
  EXPECT_NO_THROW(run(list, a, nullptr, cpu_opts()));
  Statistic negative = s;
  negative.set_regions(-2);
  EXPECT_EQ(kind_of(negative, a), ErrorKind::Config);
  EXPECT_THROW(a.set_regions(std::vector<std::int32_t>(49, 0)), Error);
}

// ---- region assignment -------------------------------------------------------------------------

TEST(JackknifeRegions, CellLayouts) {
  EXPECT_EQ(cell_layout(8, {0, 0, 0}, {1, 1, 1}).cells, (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(cell_layout(27, {0, 0, 0}, {5, 5, 5}).cells, (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(cell_layout(12, {0, 0, 0}, {1, 1, 1}).total(), 12);
  EXPECT_EQ(cell_layout(2, {0, 0, 0}, {200, 100, 100}).cells, (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(cell_layout(5, {0}, {1}).cells, (std::vector<int>{5}));
  // 7 in a cube only factors into slabs: the nearest count with cells within 2:1, and it says so.
  const CellLayout seven = cell_layout(7, {0, 0, 0}, {1, 1, 1});
  EXPECT_EQ(seven.total(), 8);
  EXPECT_NE(seven.describe().find("asked for 7"), std::string::npos) << seven.describe();
  EXPECT_THROW(cell_layout(1, {0, 0, 0}, {1, 1, 1}), Error);
  // Cells: row-major, edges to the edge cells.
  PointSet p(2, 3);
  p.coord(0)[0] = 0.0, p.coord(1)[0] = 0.0;
  p.coord(0)[1] = 9.99, p.coord(1)[1] = 0.1;
  p.coord(0)[2] = 10.0, p.coord(1)[2] = 10.0;
  const CellLayout two{{2, 2}, {0, 0}, {10, 10}, 4};
  EXPECT_EQ(cell_regions(p, two), (std::vector<std::int32_t>{0, 2, 3}));
}

TEST(JackknifeRegions, SkyKMeansDeterministicAndBalanced) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet u = sky_to_unit_vectors(generate_uniform_sky(20000, seed));
  const auto c1 = sky_region_centres(u, 12, 7), c2 = sky_region_centres(u, 12, 7);
  EXPECT_EQ(c1, c2);
  const auto l = nearest_centre(u, c1);
  std::vector<int> n(12, 0);
  for (auto x : l) ++n[x];
  for (int k = 0; k < 12; ++k) {
    // Uniform points: about equal areas (k-means on the sphere does not make them exactly equal).
    EXPECT_GT(n[k], 20000 / 12 / 2) << k;
    EXPECT_LT(n[k], 20000 / 12 * 2) << k;
  }
  // More regions than distinct positions.
  PointSet few(3, 3);
  for (int i = 0; i < 3; ++i) few.coord(2)[i] = 1.0;
  EXPECT_THROW(sky_region_centres(few, 2), Error);
}

TEST(JackknifeRegions, JackknifeSummaryFormula) {
  // Three samples of two bins: mean, (R−1)/R Σ(x−x̄)², covariance.
  const std::vector<double> x = {1, 10, 2, 20, 3, 60};
  const JackknifeSummary s = jackknife_summary(x, 3, 2);
  EXPECT_DOUBLE_EQ(s.mean[0], 2);
  EXPECT_DOUBLE_EQ(s.mean[1], 30);
  EXPECT_DOUBLE_EQ(s.covariance[0], 2.0 / 3 * 2);
  EXPECT_DOUBLE_EQ(s.covariance[1], 2.0 / 3 * (-1 * -20 + 0 + 1 * 30));
  EXPECT_DOUBLE_EQ(s.covariance[2], s.covariance[1]);
  EXPECT_DOUBLE_EQ(s.sigma[1], std::sqrt(2.0 / 3 * (400 + 100 + 900)));
}

// ---- correlation functions with jackknife errors ----------------------------------------------

TEST(CorrelationJackknife, BoxLabelsEqualRecountWeightedAndNot) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 60.0;
  const Box box = Box::cube(3, L);
  const Binning bins = Binning::logarithmic(1.0, 12.0, 5);
  std::mt19937_64 rng(seed);
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    PointSet d = generate_clustered_box(500, 3, L, ClusterOptions{}, seed);
    std::vector<PointSet> rs = {generate_uniform_box(600, 3, L, seed + 1), generate_uniform_box(450, 3, L, seed + 2)};
    if (weighted) {
      d = with_weights(d, seed + 3);
      for (std::size_t i = 0; i < rs.size(); ++i) rs[i] = with_weights(rs[i], seed + 4 + i);
    }
    // Labels as a file would give them: any non-negative integers (here 10, 20, ... 50).
    const int R = 5;
    const auto ld = random_labels(d.size(), R, rng);
    std::vector<std::vector<std::int32_t>> lr;
    for (auto& r : rs) lr.push_back(random_labels(r.size(), R, rng));
    const auto scaled = [](std::vector<std::int32_t> l) {
      for (auto& x : l) x = 10 * (x + 1);
      return l;
    };
    d.set_regions(scaled(ld));
    for (std::size_t i = 0; i < rs.size(); ++i) rs[i].set_regions(scaled(lr[i]));
    for (Estimator est : {Estimator::LandySzalay, Estimator::Natural, Estimator::DavisPeebles, Estimator::Hamilton}) {
      SCOPED_TRACE(to_string(est));
      JackknifeRequest jk;
      jk.use_labels = true;
      jk.estimator = est;
      const CorrelationResult x = correlation(d, rs, bins, CorrelationSpace::Box, box, weighted, cpu_opts(), jk);
      ASSERT_EQ(x.jackknife->regions, std::size_t(R));
      EXPECT_EQ(x.jackknife->labels, (std::vector<std::int32_t>{10, 20, 30, 40, 50}));
      std::size_t nd = 0;
      for (auto n : x.jackknife->n_data) nd += n;
      EXPECT_EQ(nd, d.size());
      expect_equals_recount(x, d, ld, rs, lr, bins, CorrelationSpace::Box, box, weighted, est);
      // Per-region DD counts are the engine's T[r][k] (and the whole DD is unchanged).
      const BinnedResult plain = correlation(d, rs, bins, CorrelationSpace::Box, box, weighted, cpu_opts());
      EXPECT_EQ(x.raw.counts, plain.raw.counts);
      EXPECT_EQ(x.jackknife->dd.size(), R * bins.nbins());
    }
  }
}

TEST(CorrelationJackknife, BoxCellsEqualRecount) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  const Box box = Box::cube(3, L);
  const Binning bins = Binning::linear(1.0, 10.0, 4);
  const PointSet d = generate_uniform_box(700, 3, L, seed);
  const std::vector<PointSet> rs = {generate_uniform_box(900, 3, L, seed + 1)};
  JackknifeRequest jk;
  jk.regions = 8;
  const CorrelationResult x = correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
  ASSERT_EQ(x.jackknife->regions, 8u);
  const CellLayout cells = cell_layout(8, {0, 0, 0}, {L, L, L});
  const auto ld = cell_regions(d, cells);
  const std::vector<std::vector<std::int32_t>> lr = {cell_regions(rs[0], cells)};
  expect_equals_recount(x, d, ld, rs, lr, bins, CorrelationSpace::Box, box, false, Estimator::LandySzalay);

  // Open space: Euclidean k-means on the random catalogue (all of it: fewer points than the
  // sample), every catalogue labelled by the nearest centre.
  const CorrelationResult o = correlation(d, rs, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts(), jk);
  const auto centres = space_region_centres(rs[0], 8, jk.seed);
  EXPECT_NE(o.jackknife->layout.find("k-means on 900 points of the random catalogues"), std::string::npos)
      << o.jackknife->layout;
  EXPECT_FALSE(o.jackknife->fitted_on_data);
  expect_equals_recount(o, d, nearest_space_centre(d, centres), rs, {nearest_space_centre(rs[0], centres)}, bins,
                        CorrelationSpace::Open, std::nullopt, false, Estimator::LandySzalay);
}

// Clustered data leave cells without data points: their samples drop random points only, and
// still equal the recount (xi --jackknife 8 on a clustered box used to fail).
TEST(CorrelationJackknife, BoxCellsWithoutDataEqualRecount) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  const Box box = Box::cube(3, L);
  const Binning bins = Binning::linear(1.0, 10.0, 4);
  PointSet d = generate_uniform_box(600, 3, L, seed);
  for (double& x : d.coord(0)) x *= 0.45;  // every data point in the cells of the lower half in x
  const std::vector<PointSet> rs = {generate_uniform_box(900, 3, L, seed + 1)};
  JackknifeRequest jk;
  jk.regions = 8;
  const CorrelationResult x = correlation(d, rs, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
  ASSERT_EQ(x.jackknife->regions, 8u);
  std::size_t empty = 0;
  for (auto n : x.jackknife->n_data) empty += n == 0;
  EXPECT_EQ(empty, 4u);
  const CellLayout cells = cell_layout(8, {0, 0, 0}, {L, L, L});
  expect_equals_recount(x, d, cell_regions(d, cells), rs, {cell_regions(rs[0], cells)}, bins, CorrelationSpace::Box, box,
                        false, Estimator::LandySzalay);
}

TEST(CorrelationJackknife, SkyKMeansEqualRecountWeightedAndNot) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Binning bins = Binning::logarithmic(1.0, 20.0, 5);
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    // Clustered over the whole sky (32 blobs): the regions, fitted on the randoms, all keep data
    // outside them (600 points of one Soneira–Peebles hierarchy could lie in one region).
    ClusterOptions blobs;
    blobs.kind = ClusterOptions::Kind::GaussianBlobs;
    PointSet d = generate_clustered_sky(600, blobs, seed);
    std::vector<PointSet> rs = {generate_uniform_sky(700, seed + 1), generate_uniform_sky(500, seed + 2)};
    if (weighted) {
      d = with_weights(d, seed + 3);
      for (std::size_t i = 0; i < rs.size(); ++i) rs[i] = with_weights(rs[i], seed + 4 + i);
    }
    JackknifeRequest jk;
    jk.regions = 6;
    jk.seed = 3;
    const CorrelationResult x = correlation(d, rs, bins, CorrelationSpace::Sky, std::nullopt, weighted, cpu_opts(), jk);
    // The regions the library found, rebuilt from its public pieces: k-means on the random
    // catalogues' unit vectors (joined in order), every catalogue labelled by the nearest centre.
    const auto centres = sky_region_centres(sky_to_unit_vectors(PointSet::concat(rs[0], rs[1])), 6, 3);
    EXPECT_EQ(x.jackknife->centres, centres);
    const auto ld = nearest_centre(sky_to_unit_vectors(d), centres);
    std::vector<std::vector<std::int32_t>> lr;
    for (const auto& r : rs) lr.push_back(nearest_centre(sky_to_unit_vectors(r), centres));
    expect_equals_recount(x, d, ld, rs, lr, bins, CorrelationSpace::Sky, std::nullopt, weighted,
                          Estimator::LandySzalay);
  }
}

// Survey mocks (xi --mocks): comoving Cartesian points about the observer, regions cut on the sky
// (k-means on the points' directions), every leave-one-out estimate equal to a recount.
TEST(CorrelationJackknife, MockSkyRegionsEqualRecount) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto mock = [](std::size_t n, std::uint64_t s) {
    const PointSet sky = generate_uniform_sky(n, s);
    PointSet p(3, n);
    std::mt19937_64 rng(s + 1000);
    std::uniform_real_distribution<double> dist(500.0, 700.0);
    for (std::size_t i = 0; i < n; ++i) {
      p.coord(0)[i] = sky.coord(0)[i];
      p.coord(1)[i] = sky.coord(1)[i];
      p.coord(2)[i] = dist(rng);
    }
    return sky_to_cartesian(p, FlatLcdm{}, true);
  };
  const PointSet d = mock(700, seed);
  const std::vector<PointSet> rs = {mock(800, seed + 1), mock(600, seed + 2)};
  const Binning bins = Binning::logarithmic(5.0, 120.0, 5);
  JackknifeRequest jk;
  jk.regions = 6;
  jk.seed = 3;
  jk.sky_about_origin = true;
  const CorrelationResult x = correlation(d, rs, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts(), jk);
  ASSERT_TRUE(x.jackknife);
  EXPECT_NE(x.jackknife->layout.find("sky regions"), std::string::npos) << x.jackknife->layout;
  // The regions rebuilt from public pieces: k-means on the random catalogues' directions, every
  // catalogue labelled by the nearest centre (by direction: the Cartesian points as they are).
  const PointSet joined = PointSet::concat(rs[0], rs[1]);
  PointSet dirs(3, joined.size());
  for (std::size_t i = 0; i < joined.size(); ++i) {
    const double a = joined.coord(0)[i], b = joined.coord(1)[i], c = joined.coord(2)[i];
    const double n = std::sqrt(a * a + b * b + c * c);
    const double f = n > 0 ? 1 / n : 0.0;
    dirs.coord(0)[i] = a * f;
    dirs.coord(1)[i] = b * f;
    dirs.coord(2)[i] = c * f;
  }
  const auto centres = sky_region_centres(dirs, 6, 3);
  EXPECT_EQ(x.jackknife->centres, centres);
  std::vector<std::vector<std::int32_t>> lr;
  for (const auto& r : rs) lr.push_back(nearest_centre(r, centres));
  expect_equals_recount(x, d, nearest_centre(d, centres), rs, lr, bins, CorrelationSpace::Open, std::nullopt, false,
                        Estimator::LandySzalay);
  // Sky regions about an observer are for open space only.
  try {
    correlation(d, rs, bins, CorrelationSpace::Box, Box::cube(3, 2000.0), false, cpu_opts(), jk);
    ADD_FAILURE() << "sky regions about an observer accepted outside open space";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    EXPECT_NE(std::string(e.what()).find("open space only"), std::string::npos) << e.what();
  }
}

TEST(CorrelationJackknife, Errors) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  const Box box = Box::cube(3, L);
  const Binning bins = Binning::linear(1.0, 10.0, 3);
  PointSet d = generate_uniform_box(200, 3, L, seed);
  std::vector<PointSet> rs = {generate_uniform_box(200, 3, L, seed + 1)};
  const auto kind_of = [&](const JackknifeRequest& jk, const PointSet& data, const std::vector<PointSet>& randoms) {
    try {
      correlation(data, randoms, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  JackknifeRequest one;
  one.regions = 1;
  EXPECT_EQ(kind_of(one, d, rs), ErrorKind::Config);
  JackknifeRequest labels;
  labels.use_labels = true;
  EXPECT_EQ(kind_of(labels, d, rs), ErrorKind::Config);  // no labels on the data
  JackknifeRequest both = labels;
  both.regions = 4;
  EXPECT_EQ(kind_of(both, d, rs), ErrorKind::Config);
  d.set_regions(std::vector<std::int32_t>(d.size(), 4));
  rs[0].set_regions(std::vector<std::int32_t>(rs[0].size(), 4));
  EXPECT_EQ(kind_of(labels, d, rs), ErrorKind::Input);  // one region only
  std::vector<std::int32_t> l(d.size(), 4);
  l[0] = 2;
  d.set_regions(l);
  std::vector<std::int32_t> lr(rs[0].size(), 4);
  lr[5] = 3;  // a region the data do not have
  rs[0].set_regions(lr);
  EXPECT_EQ(kind_of(labels, d, rs), ErrorKind::Input);
  rs[0].set_regions({});
  EXPECT_EQ(kind_of(labels, d, rs), ErrorKind::Config);  // randoms without labels
  // Automatic cells with empty ones (all data in one corner of the box) are no error any more
  // (kind_of's Internal: it ran): BoxCellsWithoutDataEqualRecount checks their samples.
  PointSet corner = generate_uniform_box(100, 3, L / 2 - 1, seed + 5);
  JackknifeRequest eight;
  eight.regions = 8;
  EXPECT_EQ(kind_of(eight, corner, {generate_uniform_box(100, 3, L, seed + 6)}), ErrorKind::Internal);
}

// The 2-D estimators share the jackknife of `correlation` (one region counting, one labeller):
// the same errors, with the analytic RR of a box too.
TEST(CorrelationJackknife, Errors2D) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  const Box box = Box::cube(3, L);
  const Binning2D bins = Binning2D::rp_pi(Binning::linear(1.0, 10.0, 3), 6.0, 3);
  PointSet d = generate_uniform_box(300, 3, L, seed);
  std::vector<PointSet> rs = {generate_uniform_box(300, 3, L, seed + 1)};
  const auto kind_of = [&](const JackknifeRequest& jk, const PointSet& data, const std::vector<PointSet>& randoms) {
    try {
      correlation_2d(data, randoms, bins, box, false, Estimator::LandySzalay, cpu_opts(), jk);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  for (bool analytic : {false, true}) {
    SCOPED_TRACE(analytic ? "analytic RR" : "randoms");
    const std::vector<PointSet> randoms = analytic ? std::vector<PointSet>{} : rs;
    JackknifeRequest one;
    one.regions = 1;
    EXPECT_EQ(kind_of(one, d, randoms), ErrorKind::Config);
    JackknifeRequest labels;
    labels.use_labels = true;
    EXPECT_EQ(kind_of(labels, d, randoms), ErrorKind::Config);  // no labels on the data
    PointSet corner = generate_uniform_box(100, 3, L / 2 - 1, seed + 5);
    JackknifeRequest eight;
    eight.regions = 8;
    EXPECT_EQ(kind_of(eight, corner, randoms), ErrorKind::Internal);  // cells without data: it runs
    PointSet one_label = d;
    one_label.set_regions(std::vector<std::int32_t>(d.size(), 3));
    EXPECT_EQ(kind_of(labels, one_label, randoms), ErrorKind::Input);  // a single region
  }
}

TEST(CorrelationJackknife, RegionColumnFromFile) {
  const std::string path = ::testing::TempDir() + "/jk_regions.txt";
  {
    std::ofstream f(path);
    f << "1 2 3 7\n4 5 6 0\n";
  }
  ReadOptions o;
  o.region_column = 4;
  const PointSet p = read_points(path, o);
  EXPECT_EQ(p.dim(), 3);
  ASSERT_TRUE(p.has_regions());
  EXPECT_EQ(p.regions()[0], 7);
  EXPECT_EQ(p.regions()[1], 0);
  for (const char* bad : {"1 2 3 -1\n", "1 2 3 1.5\n"}) {
    {
      std::ofstream f(path);
      f << "1 2 3 1\n" << bad;
    }
    try {
      read_points(path, o);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find(":2"), std::string::npos) << e.what();
    }
  }
}
