// Cross-correlations (cross_correlation, issue 5): the four counts and estimators against the
// float64 brute force of tests/oracle (open space, periodic box, sky; weighted and not; several
// random catalogues a sample), every jackknife sample against an explicit recount without its
// region, the analytic box, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "oracle/brute_force.hpp"
#include "test_support.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::to_pointset;

namespace {

RunOptions cpu_opts() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}

const std::vector<double>& column(const CorrelationResult& r, const std::string& name) {
  for (const auto& c : r.derived)
    if (c.name == name) return c.values;
  // w(θ)'s estimates are named w_* (estimate_name): the same column under its sky name.
  if (name.rfind("xi_", 0) == 0)
    for (const auto& c : r.derived)
      if (c.name == "w_" + name.substr(3)) return c.values;
  ADD_FAILURE() << "no column " << name;
  static const std::vector<double> none;
  return none;
}

void expect_close(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want))) << what;
}

oracle::Points weighted_points(oracle::Points p, std::mt19937_64& rng, bool weighted) {
  std::uniform_real_distribution<double> u(0.5, 1.5);
  p.w.assign(p.x.size(), 1.0);
  if (weighted)
    for (auto& w : p.w) w = u(rng);
  return p;
}

// The points with their weights only when weighted (the brute force ignores them otherwise).
PointSet as_set(const oracle::Points& p, bool weighted) {
  oracle::Points q = p;
  if (!weighted) q.w.clear();
  return to_pointset(q);
}

double size_of(const oracle::Points& p, bool weighted) {
  if (!weighted) return static_cast<double>(p.x.size());
  double s = 0;
  for (double w : p.w) s += w;
  return s;
}

}  // namespace

TEST(CrossCorrelation, EstimatorsEqualBruteForceOpenBoxSky) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 20.0;
  for (int kind : {0, 1, 2})
    for (bool weighted : {false, true}) {
      SCOPED_TRACE("kind " + std::to_string(kind) + (weighted ? " weighted" : ""));
      const auto gen = [&](std::size_t n) {
        oracle::Points p = kind == 2 ? testing_support::sky_points(n, rng, -30, 40)
                                     : testing_support::uniform_points(n, 3, 0.0, L, rng);
        return weighted_points(p, rng, weighted);
      };
      const oracle::Points d1 = gen(260), d2 = gen(230), r1a = gen(300), r1b = gen(210), r2 = gen(350);
      const std::vector<double> edges = kind == 2 ? std::vector<double>{0.5, 2, 5, 12, 30} : std::vector<double>{0.5, 1.5, 3, 5, 8};
      const Binning bins = Binning::from_edges(edges);
      const CorrelationSpace space = kind == 2 ? CorrelationSpace::Sky : kind == 1 ? CorrelationSpace::Box : CorrelationSpace::Open;
      const std::optional<Box> box = kind == 1 ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
      const CorrelationResult x =
          cross_correlation(as_set(d1, weighted), as_set(d2, weighted), {as_set(r1a, weighted), as_set(r1b, weighted)},
                            {as_set(r2, weighted)}, bins, space, box, weighted, cpu_opts());
      const std::vector<double> Lv = kind == 1 ? std::vector<double>{L, L, L} : std::vector<double>{};
      const auto h = [&](const oracle::Points& a, const oracle::Points& b) {
        return oracle::histogram(a, &b, edges, kind, Lv, weighted);
      };
      const auto DD = h(d1, d2), DR = h(d1, r2), RDa = h(r1a, d2), RDb = h(r1b, d2), RRa = h(r1a, r2), RRb = h(r1b, r2);
      const double n_dd = size_of(d1, weighted) * size_of(d2, weighted);
      const double n_dr = size_of(d1, weighted) * size_of(r2, weighted);
      const double n_rd = (size_of(r1a, weighted) + size_of(r1b, weighted)) * size_of(d2, weighted);
      const double n_rr = (size_of(r1a, weighted) + size_of(r1b, weighted)) * size_of(r2, weighted);
      const std::size_t nb = edges.size() - 1;
      EXPECT_EQ(x.raw.counts, DD.counts);
      for (std::size_t k = 0; k < nb; ++k) {
        const auto v = [&](const oracle::Histogram& o) { return weighted ? o.weighted[k] : static_cast<double>(o.counts[k]); };
        EXPECT_EQ(column(x, "d1r2")[k], static_cast<double>(DR.counts[k]));
        EXPECT_EQ(column(x, "r1d2")[k], static_cast<double>(RDa.counts[k] + RDb.counts[k]));
        EXPECT_EQ(column(x, "r1r2")[k], static_cast<double>(RRa.counts[k] + RRb.counts[k]));
        const double dd = v(DD) / n_dd, dr = v(DR) / n_dr, rd = (v(RDa) + v(RDb)) / n_rd, rr = (v(RRa) + v(RRb)) / n_rr;
        const double nan = std::nan("");
        expect_close(column(x, "xi_natural")[k], rr != 0 ? dd / rr - 1 : nan, "natural");
        expect_close(column(x, "xi_davis_peebles")[k], dr != 0 ? dd / dr - 1 : nan, "davis-peebles");
        expect_close(column(x, "xi_hamilton")[k], dr * rd != 0 ? dd * rr / (dr * rd) - 1 : nan, "hamilton");
        expect_close(column(x, "xi_landy_szalay")[k], rr != 0 ? (dd - dr - rd + rr) / rr : nan, "landy-szalay");
        if (weighted) expect_close(column(x, "wr1r2")[k], v(RRa) + v(RRb), "wr1r2");
      }
    }
}

// Every leave-one-region-out estimate equals the cross-correlation recounted without the region's
// points in every catalogue (regions from the catalogues' labels).
TEST(CrossCorrelation, JackknifeEqualsRecountWithoutEachRegion) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 4;
  const Binning bins = Binning::from_edges({0.5, 2, 4, 7});
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    struct Labelled {
      oracle::Points p;
      std::vector<std::int32_t> l;
    };
    const auto gen = [&](std::size_t n) {
      Labelled c{weighted_points(testing_support::uniform_points(n, 3, 0.0, 15.0, rng), rng, weighted), {}};
      for (std::size_t i = 0; i < n; ++i) c.l.push_back(static_cast<std::int32_t>(rng() % R));
      return c;
    };
    const Labelled d1 = gen(220), d2 = gen(200), r1 = gen(300), r2a = gen(250), r2b = gen(180);
    const auto with_labels = [&](const Labelled& c) {
      PointSet s = as_set(c.p, weighted);
      s.set_regions(c.l);
      return s;
    };
    const auto without = [&](const Labelled& c, int r) {
      oracle::Points q{c.p.dim, {}, {}};
      for (std::size_t i = 0; i < c.p.x.size(); ++i)
        if (c.l[i] != r) {
          q.x.push_back(c.p.x[i]);
          q.w.push_back(c.p.w[i]);
        }
      return as_set(q, weighted);
    };
    JackknifeRequest jk;
    jk.use_labels = true;
    const CorrelationResult x = cross_correlation(with_labels(d1), with_labels(d2), {with_labels(r1)},
                                                  {with_labels(r2a), with_labels(r2b)}, bins, CorrelationSpace::Open,
                                                  std::nullopt, weighted, cpu_opts(), jk);
    ASSERT_TRUE(x.jackknife);
    ASSERT_EQ(x.jackknife->regions, static_cast<std::size_t>(R));
    const std::size_t nb = bins.nbins();
    for (int r = 0; r < R; ++r) {
      const CorrelationResult y = cross_correlation(without(d1, r), without(d2, r), {without(r1, r)},
                                                    {without(r2a, r), without(r2b, r)}, bins, CorrelationSpace::Open,
                                                    std::nullopt, weighted, cpu_opts());
      for (std::size_t k = 0; k < nb; ++k)
        expect_close(x.jackknife->samples[r * nb + k], column(y, "xi_landy_szalay")[k],
                     "region " + std::to_string(r) + " bin " + std::to_string(k));
    }
    EXPECT_EQ(x.jackknife->covariance.size(), nb * nb);
    EXPECT_EQ(column(x, "xi_jk_sigma").size(), nb);
  }
}

// A periodic box without random catalogues: D1D2 against N1 N2 V_bin / V_box; its jackknife
// against a recount without each region.
TEST(CrossCorrelation, AnalyticBox) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 25.0;
  const oracle::Points d1 = testing_support::uniform_points(400, 3, 0.0, L, rng),
                       d2 = testing_support::uniform_points(350, 3, 0.0, L, rng);
  const std::vector<double> edges = {1, 2, 4, 6};
  const Binning bins = Binning::from_edges(edges);
  const Box box = Box::cube(3, L);
  const CorrelationResult x = cross_correlation(to_pointset(d1), to_pointset(d2), {}, {}, bins, CorrelationSpace::Box,
                                                box, false, cpu_opts());
  const auto DD = oracle::histogram(d1, &d2, edges, 1, {L, L, L});
  EXPECT_EQ(x.raw.counts, DD.counts);
  for (std::size_t k = 0; k + 1 < edges.size(); ++k) {
    const double rr = 400.0 * 350.0 * shell_volume(3, edges[k], edges[k + 1]) / (L * L * L);
    expect_close(column(x, "rr")[k], rr, "rr");
    expect_close(column(x, "xi")[k], static_cast<double>(DD.counts[k]) / rr - 1, "xi");
  }
  // Its jackknife: each sample the analytic cross-correlation of the catalogues without the region.
  std::vector<std::int32_t> l1, l2;
  for (std::size_t i = 0; i < d1.x.size(); ++i) l1.push_back(static_cast<std::int32_t>(rng() % 3));
  for (std::size_t i = 0; i < d2.x.size(); ++i) l2.push_back(static_cast<std::int32_t>(rng() % 3));
  PointSet s1 = to_pointset(d1), s2 = to_pointset(d2);
  s1.set_regions(l1);
  s2.set_regions(l2);
  JackknifeRequest jk;
  jk.use_labels = true;
  const CorrelationResult j = cross_correlation(s1, s2, {}, {}, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
  ASSERT_TRUE(j.jackknife);
  for (int r = 0; r < 3; ++r) {
    const auto keep = [&](const oracle::Points& p, const std::vector<std::int32_t>& l) {
      oracle::Points q{p.dim, {}, {}};
      for (std::size_t i = 0; i < p.x.size(); ++i)
        if (l[i] != r) q.x.push_back(p.x[i]);
      return to_pointset(q);
    };
    const CorrelationResult y =
        cross_correlation(keep(d1, l1), keep(d2, l2), {}, {}, bins, CorrelationSpace::Box, box, false, cpu_opts());
    for (std::size_t k = 0; k + 1 < edges.size(); ++k)
      expect_close(j.jackknife->samples[r * (edges.size() - 1) + k], column(y, "xi")[k], "analytic jackknife");
  }
}

TEST(CrossCorrelation, Errors) {
  const PointSet a = generate_uniform_box(100, 3, 10.0, 1), b = generate_uniform_box(100, 3, 10.0, 2);
  const Binning bins = Binning::from_edges({1, 2});
  const auto config_error = [&](auto&& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Config) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  config_error([&] { cross_correlation(a, b, {}, {}, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts()); },
               "random catalogues for both samples");
  config_error([&] { cross_correlation(a, b, {a}, {}, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts()); },
               "second sample has no random catalogues");
  config_error([&] { cross_correlation(a, b, {}, {b}, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts()); },
               "first sample has no random catalogues");
}

// Over 2-D bins (xi-rppi, wp, xi-smu --data2): the four counts equal the engine's plain 2-D cross
// counts, ξ per flat bin the Landy–Szalay estimate from them, w_p its projection, and every
// jackknife sample the cross-correlation recounted without the region.
TEST(CrossCorrelation, TwoDimensionalBins) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 3;
  const Binning2D bins = Binning2D::rp_pi(Binning::from_edges({0.5, 2, 4}), 6.0, 3, LineOfSight::ZAxis);
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    const auto gen = [&](std::size_t n, std::vector<std::int32_t>& l) {
      oracle::Points p = weighted_points(testing_support::uniform_points(n, 3, 0.0, 15.0, rng), rng, weighted);
      l.clear();
      for (std::size_t i = 0; i < n; ++i) l.push_back(static_cast<std::int32_t>(rng() % R));
      return p;
    };
    std::vector<std::int32_t> l1, l2, lr1, lr2;
    const oracle::Points d1 = gen(240, l1), d2 = gen(210, l2), r1 = gen(320, lr1), r2 = gen(280, lr2);
    const auto labelled = [&](const oracle::Points& p, const std::vector<std::int32_t>& l) {
      PointSet s = as_set(p, weighted);
      s.set_regions(l);
      return s;
    };
    JackknifeRequest jk;
    jk.use_labels = true;
    const Binned2DResult x = cross_correlation_2d(labelled(d1, l1), labelled(d2, l2), {labelled(r1, lr1)},
                                                  {labelled(r2, lr2)}, bins, std::nullopt, weighted,
                                                  Estimator::LandySzalay, cpu_opts(), jk);
    const auto pc = [&](const oracle::Points& a, const oracle::Points& b) {
      const PointSet sb = as_set(b, weighted);
      return paircount_2d(as_set(a, weighted), &sb, bins, std::nullopt, weighted, cpu_opts()).raw;
    };
    const Result DD = pc(d1, d2), DR = pc(d1, r2), RD = pc(r1, d2), RR = pc(r1, r2);
    EXPECT_EQ(x.raw.counts, DD.counts);
    const auto col = [&](const std::string& name) -> const std::vector<double>& {
      for (const auto& c : x.derived)
        if (c.name == name) return c.values;
      ADD_FAILURE() << "no column " << name;
      static const std::vector<double> none;
      return none;
    };
    const double n1 = size_of(d1, weighted), n2 = size_of(d2, weighted), m1 = size_of(r1, weighted), m2 = size_of(r2, weighted);
    std::vector<double> xi(bins.nbins());
    for (std::size_t k = 0; k < bins.nbins(); ++k) {
      EXPECT_EQ(col("d1r2")[k], static_cast<double>(DR.counts[k]));
      EXPECT_EQ(col("r1d2")[k], static_cast<double>(RD.counts[k]));
      EXPECT_EQ(col("r1r2")[k], static_cast<double>(RR.counts[k]));
      const auto v = [&](const Result& r) { return weighted ? r.weighted[k] : static_cast<double>(r.counts[k]); };
      const double dd = v(DD) / (n1 * n2), dr = v(DR) / (n1 * m2), rd = v(RD) / (m1 * n2), rr = v(RR) / (m1 * m2);
      xi[k] = rr != 0 ? (dd - dr - rd + rr) / rr : std::nan("");
      expect_close(col("xi")[k], xi[k], "xi bin " + std::to_string(k));
    }
    ASSERT_FALSE(x.per_outer.empty());
    const std::vector<double> wp = projected_wp(bins, xi);
    for (std::size_t i = 0; i < wp.size(); ++i) expect_close(x.per_outer[0].values[i], wp[i], "wp");
    ASSERT_TRUE(x.jackknife);
    for (int r = 0; r < R; ++r) {
      const auto keep = [&](const oracle::Points& p, const std::vector<std::int32_t>& l) {
        oracle::Points q{p.dim, {}, {}};
        for (std::size_t i = 0; i < p.x.size(); ++i)
          if (l[i] != r) {
            q.x.push_back(p.x[i]);
            q.w.push_back(p.w[i]);
          }
        return as_set(q, weighted);
      };
      const Binned2DResult y = cross_correlation_2d(keep(d1, l1), keep(d2, l2), {keep(r1, lr1)}, {keep(r2, lr2)}, bins,
                                                    std::nullopt, weighted, Estimator::LandySzalay, cpu_opts());
      for (std::size_t k = 0; k < bins.nbins(); ++k)
        for (const auto& c : y.derived)
          if (c.name == "xi") expect_close(x.jackknife->samples[r * bins.nbins() + k], c.values[k], "sample");
    }
    EXPECT_FALSE(x.per_outer_samples.empty());
  }
}

// --ravg on cross-correlations: the D1D2 pairs' mean separations, the same as a cross pair count's
// (whose sums tests/mean_separation_test.cpp checks against a brute force), 1-D and 2-D, with a
// jackknife and the analytic box.
TEST(CrossCorrelation, MeanSeparationsAreTheDataPairs) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 20.0;
  for (bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unweighted");
    const PointSet d1 = as_set(weighted_points(testing_support::uniform_points(300, 3, 0.0, L, rng), rng, weighted), weighted),
                   d2 = as_set(weighted_points(testing_support::uniform_points(260, 3, 0.0, L, rng), rng, weighted), weighted),
                   r1 = as_set(weighted_points(testing_support::uniform_points(400, 3, 0.0, L, rng), rng, weighted), weighted),
                   r2 = as_set(weighted_points(testing_support::uniform_points(380, 3, 0.0, L, rng), rng, weighted), weighted);
    RunOptions opt = cpu_opts();
    opt.mean_separation = true;
    JackknifeRequest jk;
    jk.regions = 4;
    const Binning bins = Binning::logarithmic(0.5, 6.0, 5);
    Statistic pc;
    pc.traversal = Traversal::Cross;
    pc.reduction = reduce::Histogram{.bins = bins, .mean_separation = true};
    pc.weighted = weighted;
    const Result want = run(pc, d1, &d2, cpu_opts());
    for (bool analytic : {false, true}) {
      const CorrelationResult x =
          analytic ? cross_correlation(d1, d2, {}, {}, bins, CorrelationSpace::Box, Box::cube(3, L), weighted, opt)
                   : cross_correlation(d1, d2, {r1}, {r2}, bins, CorrelationSpace::Open, std::nullopt, weighted, opt, jk);
      if (analytic) {
        // (The box's minimum image: compare the sums only where no pair reaches half the box.)
        EXPECT_FALSE(x.raw.separation_sum.empty());
        continue;
      }
      ASSERT_EQ(x.raw.separation_sum.size(), bins.nbins());
      for (std::size_t k = 0; k < bins.nbins(); ++k) {
        expect_close(x.raw.separation_sum[k], want.separation_sum[k], "separation sum");
        const double n = weighted ? want.weighted[k] : static_cast<double>(want.counts[k]);
        if (n > 0) expect_close(column(x, "ravg")[k], want.separation_sum[k] / n, "ravg");
      }
    }
    const Binning2D b2 = Binning2D::rp_pi(Binning::from_edges({0.5, 2, 4}), 5.0, 5, LineOfSight::ZAxis);
    const Binned2DResult y = cross_correlation_2d(d1, d2, {r1}, {r2}, b2, std::nullopt, weighted, Estimator::LandySzalay, opt);
    const Binned2DResult p = paircount_2d(d1, &d2, b2, std::nullopt, weighted, opt);
    ASSERT_EQ(y.raw.separation_sum.size(), p.raw.separation_sum.size());
    for (std::size_t k = 0; k < p.raw.separation_sum.size(); ++k)
      expect_close(y.raw.separation_sum[k], p.raw.separation_sum[k], "2-D separation sum");  // (another summation order)
    EXPECT_EQ(y.per_outer.back().name, "rpavg");
    for (std::size_t i = 0; i < p.per_outer.back().values.size(); ++i)
      expect_close(y.per_outer.back().values[i], p.per_outer.back().values[i], "rpavg per r_p bin");
  }
}
