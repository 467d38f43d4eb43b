// 2-D bins about the z axis, (r_p, π) and (s, μ): the engine's counts against a float64 brute force
// written here (the README's "2-D binning rule", applied literally with linear bin searches), on
// fresh random inputs (open and periodic, auto and cross, weighted, grid and all-pairs traversals,
// jackknife regions), on lattices whose pairs sit exactly on edges, μ = 1 and s = 0; uniform
// catalogues against the closed forms (DD ≈ N(N−1)/2 · V_bin/V, w_p ≈ 0, ξ_ℓ ≈ 0); the
// estimators against their formulas; and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include <fmt/format.h>

#include "test_support.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/cosmology.hpp"
#include "twobody/error.hpp"
#include "twobody/jackknife.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

RunOptions opts(const char* path = "auto") {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  return o;
}

// The oracle: 2-D bins from the rule, nothing from the engine.
struct Oracle2D {
  bool rppi = true;
  std::vector<double> outer;  // r_p or s edges
  double inner_max = 0;       // π_max or μ_max
  int n_inner = 0;
  std::vector<double> box;    // empty: open

  double diff(double a, double b, int d) const {
    double x = a - b;
    if (!box.empty()) {
      if (x > box[d] / 2) x -= box[d];
      if (x < -box[d] / 2) x += box[d];
    }
    return x;
  }
  double inner_edge(int k) const { return k == n_inner ? inner_max : inner_max * k / n_inner; }
  int bin(const std::vector<double>& a, const std::vector<double>& b) const {
    const double dx = diff(a[0], b[0], 0), dy = diff(a[1], b[1], 1), dz = diff(a[2], b[2], 2);
    double o2, v;
    if (rppi) {
      o2 = dx * dx + dy * dy;
      v = std::fabs(dz);
    } else {
      o2 = dx * dx + dy * dy + dz * dz;
      v = o2 > 0 ? std::sqrt(dz * dz / o2) : 0.0;
    }
    int i = -1;
    for (std::size_t t = 0; t + 1 < outer.size(); ++t)
      if (outer[t] * outer[t] <= o2 && o2 < outer[t + 1] * outer[t + 1]) i = static_cast<int>(t);
    int k = -1;
    for (int t = 0; t < n_inner; ++t) {
      const bool closed_top = !rppi && t == n_inner - 1 && inner_max == 1.0;  // μ = 1 belongs to the last bin
      if (inner_edge(t) <= v && (v < inner_edge(t + 1) || (closed_top && v <= 1.0))) k = t;
    }
    return (i < 0 || k < 0) ? -1 : i * n_inner + k;
  }
  std::size_t nbins() const { return (outer.size() - 1) * n_inner; }

  struct Counts {
    std::vector<std::uint64_t> n;
    std::vector<double> w;
    std::vector<std::uint64_t> region;  // R x nbins
  };
  Counts count(const oracle::Points& a, const oracle::Points* b, const std::vector<int>* la = nullptr,
               const std::vector<int>* lb = nullptr, int R = 0) const {
    Counts c{std::vector<std::uint64_t>(nbins(), 0), std::vector<double>(nbins(), 0.0),
             std::vector<std::uint64_t>(R * nbins(), 0)};
    const oracle::Points& B = b ? *b : a;
    for (std::size_t i = 0; i < a.x.size(); ++i)
      for (std::size_t j = b ? 0 : i + 1; j < B.x.size(); ++j) {
        const int k = bin(a.x[i], B.x[j]);
        if (k < 0) continue;
        ++c.n[k];
        if (!a.w.empty() && !B.w.empty()) c.w[k] += a.w[i] * B.w[j];
        if (R) {
          const int ri = (*la)[i], rj = b ? (*lb)[j] : (*la)[j];
          ++c.region[ri * nbins() + k];
          if (rj != ri) ++c.region[rj * nbins() + k];
        }
      }
    return c;
  }
};

Binning2D bins_of(const Oracle2D& o) {
  const Binning outer = Binning::from_edges(o.outer);
  return o.rppi ? Binning2D::rp_pi(outer, o.inner_max, o.n_inner) : Binning2D::s_mu(outer, o.inner_max, o.n_inner);
}

void expect_same(const Oracle2D::Counts& want, const Result& got, bool weighted, const std::string& what) {
  ASSERT_EQ(got.counts.size(), want.n.size()) << what;
  for (std::size_t k = 0; k < want.n.size(); ++k) EXPECT_EQ(got.counts[k], want.n[k]) << what << " bin " << k;
  if (!weighted) return;
  ASSERT_EQ(got.weighted.size(), want.w.size()) << what;
  for (std::size_t k = 0; k < want.w.size(); ++k)
    EXPECT_NEAR(got.weighted[k], want.w[k], 1e-9 * (1 + std::abs(want.w[k]))) << what << " bin " << k;
}

Statistic stat_of(const Binning2D& bins, bool periodic, double L, bool cross, bool weighted) {
  Statistic s;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.metric = periodic ? Metric::Periodic : Metric::Euclidean;
  if (periodic) s.box = Box::cube(3, L);
  s.weighted = weighted;
  s.reduction = reduce::Histogram2D{bins};
  return s;
}

}  // namespace

// Random catalogues: every flat bin equals the brute force, open and periodic, auto and cross,
// weighted, through the grid and through all pairs.
TEST(Clustering2D, RandomInputsMatchBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 60;
  const oracle::Points a = uniform_points(900, 3, 0, L, rng, true), b = uniform_points(700, 3, 0, L, rng, true);
  const PointSet pa = to_pointset(a), pb = to_pointset(b);
  for (bool rppi : {true, false})
    for (bool periodic : {false, true})
      for (bool cross : {false, true}) {
        Oracle2D o;
        o.rppi = rppi;
        o.outer = rppi ? std::vector<double>{0.0, 1.5, 3.0, 6.0, 12.0, 20.0} : std::vector<double>{0.5, 2.0, 7.0, 15.0, 25.0};
        o.inner_max = rppi ? 17.0 : 1.0;
        o.n_inner = rppi ? 17 : 7;
        if (periodic) o.box = {L, L, L};
        const auto want = o.count(a, cross ? &b : nullptr);
        const std::string what = fmt::format("{} {} {}", rppi ? "rp-pi" : "s-mu", periodic ? "periodic" : "open",
                                             cross ? "cross" : "auto");
        for (const char* path : {"grid", "brute"}) {
          const Statistic s = stat_of(bins_of(o), periodic, L, cross, true);
          const Result r = run(s, pa, cross ? &pb : nullptr, opts(path));
          expect_same(want, r, true, what + " " + path);
        }
        const auto via_api = paircount_2d(pa, cross ? &pb : nullptr, bins_of(o),
                                          periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt, false, opts());
        expect_same(want, via_api.raw, false, what + " paircount_2d");
      }
}

// --ravg over 2-D bins (Corrfunc's rpavg and savg): per flat bin the mean r_p or s of its pairs,
// weighted by w_i w_j, and per outer bin over its inner bins, against the brute force; open and
// periodic, auto and cross, grid and all pairs; and beside a jackknife, whose columns stay whole.
TEST(Clustering2D, MeanSeparationsMatchBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 50;
  const oracle::Points a = uniform_points(700, 3, 0, L, rng, true), b = uniform_points(500, 3, 0, L, rng, true);
  const PointSet pa = to_pointset(a), pb = to_pointset(b);
  for (bool rppi : {true, false})
    for (bool periodic : {false, true})
      for (bool cross : {false, true})
        for (bool weighted : {false, true}) {
          Oracle2D o;
          o.rppi = rppi;
          o.outer = rppi ? std::vector<double>{0.0, 2.0, 5.0, 11.0} : std::vector<double>{0.5, 3.0, 8.0, 14.0};
          o.inner_max = rppi ? 9.0 : 1.0;
          o.n_inner = rppi ? 9 : 5;
          if (periodic) o.box = {L, L, L};
          const std::size_t nb = o.nbins(), ni = static_cast<std::size_t>(o.n_inner), no = nb / ni;
          std::vector<double> sum(nb, 0.0), n(nb, 0.0);
          const oracle::Points& B = cross ? b : a;
          for (std::size_t i = 0; i < a.x.size(); ++i)
            for (std::size_t j = cross ? 0 : i + 1; j < B.x.size(); ++j) {
              const int k = o.bin(a.x[i], B.x[j]);
              if (k < 0) continue;
              double s2 = 0;
              for (int d = 0; d < (rppi ? 2 : 3); ++d) s2 += o.diff(a.x[i][d], B.x[j][d], d) * o.diff(a.x[i][d], B.x[j][d], d);
              const double w = weighted ? a.w[i] * B.w[j] : 1.0;
              sum[k] += w * std::sqrt(s2);
              n[k] += w;
            }
          const std::string what = fmt::format("{} {} {} {}", rppi ? "rp-pi" : "s-mu", periodic ? "periodic" : "open",
                                               cross ? "cross" : "auto", weighted ? "weighted" : "unweighted");
          const std::string name = rppi ? "rpavg" : "savg";
          for (const char* path : {"grid", "brute"}) {
            RunOptions opt = opts(path);
            opt.mean_separation = true;
            const auto r = paircount_2d(pa, cross ? &pb : nullptr, bins_of(o),
                                        periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt, weighted, opt);
            const auto col = std::find_if(r.derived.begin(), r.derived.end(), [&](const NamedColumn& c) { return c.name == name; });
            ASSERT_NE(col, r.derived.end()) << what;
            ASSERT_EQ(col->values.size(), nb);
            for (std::size_t k = 0; k < nb; ++k) {
              if (n[k] == 0) {
                EXPECT_TRUE(std::isnan(col->values[k])) << what << " bin " << k;
                continue;
              }
              EXPECT_NEAR(col->values[k], sum[k] / n[k], 1e-12 * (1 + sum[k] / n[k])) << what << " " << path << " bin " << k;
            }
            ASSERT_EQ(r.per_outer.size(), 1u);
            for (std::size_t i = 0; i < no; ++i) {
              double s_i = 0, n_i = 0;
              for (std::size_t k = i * ni; k < (i + 1) * ni; ++k) {
                s_i += sum[k];
                n_i += n[k];
              }
              if (n_i > 0) EXPECT_NEAR(r.per_outer[0].values[i], s_i / n_i, 1e-12 * (1 + s_i / n_i)) << what;
            }
          }
        }
  // Beside a jackknife and the analytic RR of a box: w_p's jackknife columns, then rpavg.
  RunOptions opt = opts();
  opt.mean_separation = true;
  JackknifeRequest jk;
  jk.regions = 8;
  const Binning2D bins = Binning2D::rp_pi(Binning::linear(0.5, 10.0, 4), 8.0, 8);
  const auto r = correlation_2d(pa, {}, bins, Box::cube(3, L), false, Estimator::LandySzalay, opt, jk);
  std::vector<std::string> names;
  for (const auto& c : r.per_outer) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"wp", "wp_jk_mean", "wp_jk_sigma", "rpavg"}));
  for (double v : r.per_outer.back().values) EXPECT_TRUE(v > 0.5 && v < 10.0) << v;
}

// Non-integer pi_max with its own number of bins, mu_max < 1, log r_p bins.
TEST(Clustering2D, OtherBinShapesMatchBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const oracle::Points a = uniform_points(800, 3, -20, 20, rng);
  const PointSet pa = to_pointset(a);
  Oracle2D o;
  o.outer = Binning::logarithmic(0.3, 9.0, 6).edges();
  o.inner_max = 7.3;
  o.n_inner = 5;
  expect_same(o.count(a, nullptr), run(stat_of(bins_of(o), false, 0, false, false), pa, nullptr, opts()), false,
              "rp-pi, pimax 7.3 in 5 bins");
  Oracle2D m;
  m.rppi = false;
  m.outer = {0.0, 4.0, 8.0, 12.0};
  m.inner_max = 0.55;
  m.n_inner = 4;
  expect_same(m.count(a, nullptr), run(stat_of(bins_of(m), false, 0, false, false), pa, nullptr, opts()), false,
              "s-mu, mu_max 0.55");
}

// A lattice with duplicated points: pairs exactly on r_p, s, π and μ edges, pairs along the line
// of sight (μ = 1), pairs at s = 0, and minimum images at exactly L/2.
TEST(Clustering2D, LatticeEdgesMuOneAndZeroSeparation) {
  oracle::Points a;
  a.dim = 3;
  for (int x = 0; x < 6; ++x)
    for (int y = 0; y < 6; ++y)
      for (int z = 0; z < 8; ++z) a.x.push_back({double(x), double(y), double(z)});
  for (int k = 0; k < 10; ++k) a.x.push_back(a.x[k * 17]);  // coincident pairs: s = 0
  const PointSet pa = to_pointset(a);
  for (bool periodic : {false, true}) {
    Oracle2D o;
    o.outer = {0.0, 1.0, 2.0, std::sqrt(5.0), 3.0};
    o.inner_max = 4;
    o.n_inner = 4;
    Oracle2D m;
    m.rppi = false;
    m.outer = {0.0, 1.0, 2.0, 3.0};
    m.inner_max = 1.0;
    m.n_inner = 5;
    if (periodic) o.box = m.box = {6.0, 6.0, 8.0};
    for (const Oracle2D* q : {&o, &m}) {
      Statistic s = stat_of(bins_of(*q), false, 0, false, false);
      if (periodic) {
        s.metric = Metric::Periodic;
        s.box = Box::from_lengths(std::vector<double>{6.0, 6.0, 8.0});
      }
      const std::string what = fmt::format("lattice {} {}", q->rppi ? "rp-pi" : "s-mu", periodic ? "periodic" : "open");
      for (const char* path : {"grid", "brute"}) expect_same(q->count(a, nullptr), run(s, pa, nullptr, opts(path)), false, what);
    }
  }
  // The cases by hand: (0,0,0)-(0,0,3) has μ = 1 (last μ bin when μ_max = 1, outside for μ_max < 1),
  // r_p = 0 and π = 3; (0,0,0)-(0,0,0) has s = 0, μ = 0, r_p = 0, π = 0; (0,0,0)-(0,0,2) has π = 2,
  // on an edge: π bin 2.
  PointSet two(3, 0);
  for (const auto& p : {std::vector<double>{0, 0, 0}, {0, 0, 3}, {0, 0, 0}, {0, 0, 2}}) two.push_back(p);
  const Binning s_bins = Binning::from_edges({0.0, 2.5, 5.0});
  const Result mu1 = run(stat_of(Binning2D::s_mu(s_bins, 1.0, 4), false, 0, false, false), two, nullptr, opts());
  // s bin 0 (s < 2.5): the coincident pair (μ = 0), (0,0,0)-(0,0,2) twice and (0,0,3)-(0,0,2) (μ = 1);
  // s bin 1: (0,0,0)-(0,0,3) twice (μ = 1).
  const std::vector<std::uint64_t> want_mu1{1, 0, 0, 3, 0, 0, 0, 2};
  EXPECT_EQ(mu1.counts, want_mu1);
  const Result mu_half = run(stat_of(Binning2D::s_mu(s_bins, 0.5, 2), false, 0, false, false), two, nullptr, opts());
  const std::vector<std::uint64_t> want_half{1, 0, 0, 0};
  EXPECT_EQ(mu_half.counts, want_half);
  const Result rppi = run(stat_of(Binning2D::rp_pi(Binning::from_edges({0.0, 1.0}), 3.0), false, 0, false, false), two,
                          nullptr, opts());
  // π = 0 (once), π = 1 (once: (0,0,3)-(0,0,2)), π = 2 (twice), π = 3 outside (π < π_max only).
  const std::vector<std::uint64_t> want_rppi{1, 1, 2};
  EXPECT_EQ(rppi.counts, want_rppi);
}

// Jackknife regions through the engine: T[r][k] for every region and flat bin.
TEST(Clustering2D, RegionsMatchBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 40;
  const oracle::Points a = uniform_points(600, 3, 0, L, rng, true), b = uniform_points(500, 3, 0, L, rng, true);
  std::vector<int> la, lb;
  std::vector<std::int32_t> la32, lb32;
  for (const auto& p : a.x) la.push_back(p[0] < L / 2 ? (p[1] < L / 2 ? 0 : 1) : 2);
  for (const auto& p : b.x) lb.push_back(p[0] < L / 2 ? (p[1] < L / 2 ? 0 : 1) : 2);
  la32.assign(la.begin(), la.end());
  lb32.assign(lb.begin(), lb.end());
  PointSet pa = to_pointset(a), pb = to_pointset(b);
  pa.set_regions(la32);
  pb.set_regions(lb32);
  Oracle2D o;
  o.outer = {0.0, 2.0, 5.0, 9.0};
  o.inner_max = 6;
  o.n_inner = 6;
  o.box = {L, L, L};
  for (bool cross : {false, true}) {
    const auto want = o.count(a, cross ? &b : nullptr, &la, &lb, 3);
    Statistic s = stat_of(bins_of(o), true, L, cross, true);
    s.set_regions(3);
    for (const char* path : {"grid", "brute"}) {
      const Result r = run(s, pa, cross ? &pb : nullptr, opts(path));
      expect_same(want, r, true, cross ? "regions cross" : "regions auto");
      EXPECT_EQ(r.regions, 3u);
      EXPECT_EQ(r.region_counts, want.region);
    }
  }
}

// Uniform points in a periodic box: DD in every (r_p, π) bin within 5σ of N(N−1)/2 · V_bin/V,
// w_p within 5σ of 0 (analytic RR, Corrfunc's theory wp), and ξ_0, ξ_2 of (s, μ) likewise.
TEST(Clustering2D, UniformBoxAgreesWithClosedForms) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100;
  const std::size_t N = 6000;
  const PointSet p = to_pointset(uniform_points(N, 3, 0, L, rng));
  const Box box = Box::cube(3, L);
  const Binning2D rppi = Binning2D::rp_pi(Binning::from_edges({2.0, 5.0, 10.0, 15.0}), 8.0);
  const Binned2DResult x = correlation_2d(p, {}, rppi, box, false, Estimator::LandySzalay, opts());
  const double pairs = 0.5 * double(N) * double(N - 1);
  for (std::size_t k = 0; k < rppi.nbins(); ++k) {
    const double expected = pairs * bin_volume_2d(rppi, k / 8, k % 8) / box.volume();
    EXPECT_NEAR(double(x.raw.counts[k]), expected, 5 * std::sqrt(expected) + 1) << "bin " << k;
  }
  ASSERT_EQ(x.per_outer.size(), 1u);
  EXPECT_EQ(x.per_outer[0].name, "wp");
  for (std::size_t i = 0; i < 3; ++i) {
    double rr = 0;
    for (std::size_t k = 0; k < 8; ++k) rr += pairs * bin_volume_2d(rppi, i, k) / box.volume();
    const double sigma = 2 * 8.0 / std::sqrt(rr);
    EXPECT_NEAR(x.per_outer[0].values[i], 0.0, 5 * sigma) << "wp bin " << i;
  }
  // Corrfunc's wp: 2 π_max (ΣDD/ΣRR − 1) over the whole π range, equal to 2 Σ ξ Δπ for equal π bins.
  for (std::size_t i = 0; i < 3; ++i) {
    double dd = 0, rr = 0;
    for (std::size_t k = 0; k < 8; ++k) {
      dd += double(x.raw.counts[i * 8 + k]);
      rr += pairs * bin_volume_2d(rppi, i, k) / box.volume();
    }
    EXPECT_NEAR(x.per_outer[0].values[i], 2 * 8.0 * (dd / rr - 1), 1e-9);
  }
  const Binning2D smu = Binning2D::s_mu(Binning::from_edges({5.0, 10.0, 15.0}), 1.0, 10);
  const Binned2DResult y = correlation_2d(p, {}, smu, box, false, Estimator::Natural, opts());
  ASSERT_EQ(y.per_outer.size(), 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    double rr = 0;
    for (std::size_t k = 0; k < 10; ++k) rr += pairs * bin_volume_2d(smu, i, k) / box.volume();
    EXPECT_NEAR(y.per_outer[0].values[i], 0.0, 5 / std::sqrt(rr)) << "xi0 bin " << i;
    EXPECT_NEAR(y.per_outer[1].values[i], 0.0, 5 * std::sqrt(5.0) / std::sqrt(rr)) << "xi2 bin " << i;
  }
}

// The estimators from independently counted DD, DR, RR (two random sets, weighted), w_p and the
// multipoles from their formulas.
TEST(Clustering2D, EstimatorsFromIndependentCounts) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const oracle::Points d = uniform_points(500, 3, 0, 30, rng, true);
  const std::vector<oracle::Points> rs{uniform_points(700, 3, 0, 30, rng, true), uniform_points(400, 3, 0, 30, rng, true)};
  const PointSet pd = to_pointset(d);
  const std::vector<PointSet> prs{to_pointset(rs[0]), to_pointset(rs[1])};
  for (bool rppi : {true, false}) {
    Oracle2D o;
    o.rppi = rppi;
    o.outer = {1.0, 3.0, 6.0, 10.0};
    o.inner_max = rppi ? 5.0 : 1.0;
    o.n_inner = 5;
    for (Estimator e : {Estimator::Natural, Estimator::LandySzalay}) {
      const Binned2DResult r = correlation_2d(pd, prs, bins_of(o), std::nullopt, true, e, opts());
      const auto dd = o.count(d, nullptr);
      std::vector<double> dr(o.nbins(), 0.0), rr(o.nbins(), 0.0);
      double ndr = 0, nrr = 0;
      const auto wsum = [](const oracle::Points& p) {
        double s = 0, s2 = 0;
        for (double w : p.w) {
          s += w;
          s2 += w * w;
        }
        return std::pair{s, s2};
      };
      const auto [sd, sd2] = wsum(d);
      for (const auto& r0 : rs) {
        const auto x = o.count(d, &r0), y = o.count(r0, nullptr);
        const auto [s, s2] = wsum(r0);
        for (std::size_t k = 0; k < o.nbins(); ++k) {
          dr[k] += x.w[k];
          rr[k] += y.w[k];
        }
        ndr += sd * s;
        nrr += 0.5 * (s * s - s2);
      }
      const double ndd = 0.5 * (sd * sd - sd2);
      std::vector<double> xi(o.nbins());
      for (std::size_t k = 0; k < o.nbins(); ++k) {
        const double a = dd.w[k] / ndd, b = dr[k] / ndr, c = rr[k] / nrr;
        xi[k] = e == Estimator::Natural ? a / c - 1 : (a - 2 * b + c) / c;
      }
      const auto& got = r.derived.back();
      ASSERT_EQ(got.name, "xi");
      for (std::size_t k = 0; k < o.nbins(); ++k) {
        if (std::isnan(xi[k])) {
          EXPECT_TRUE(std::isnan(got.values[k]));
          continue;
        }
        EXPECT_NEAR(got.values[k], xi[k], 1e-9 * (1 + std::abs(xi[k]))) << "bin " << k;
      }
      for (std::size_t i = 0; i < 3; ++i) {
        if (rppi) {
          double wp = 0;
          for (int k = 0; k < 5; ++k) wp += 2 * xi[i * 5 + k] * 1.0;
          if (!std::isnan(wp)) EXPECT_NEAR(r.per_outer[0].values[i], wp, 1e-9 * (1 + std::abs(wp)));
        } else {
          double x2 = 0;
          for (int k = 0; k < 5; ++k) {
            const double mu = 0.1 + 0.2 * k;
            x2 += 5 * xi[i * 5 + k] * 0.5 * (3 * mu * mu - 1) * 0.2;
          }
          if (!std::isnan(x2)) EXPECT_NEAR(r.per_outer[1].values[i], x2, 1e-9 * (1 + std::abs(x2)));
        }
      }
    }
  }
}

TEST(Clustering2D, BadInputIsRefusedClearly) {
  const Binning rp = Binning::linear(0, 10, 5);
  const auto config_error = [](auto f, const char* needle) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  config_error([&] { Binning2D::rp_pi(rp, 0.0); }, "pimax");
  config_error([&] { Binning2D::rp_pi(rp, -3.0); }, "pimax");
  config_error([&] { Binning2D::rp_pi(rp, std::nan("")); }, "pimax");
  config_error([&] { Binning2D::rp_pi(rp, INFINITY); }, "pimax");
  config_error([&] { Binning2D::rp_pi(rp, 0.5); }, "number of pi bins");
  config_error([&] { Binning2D::s_mu(rp, 1.5, 5); }, "mu_max");
  config_error([&] { Binning2D::s_mu(rp, 0.0, 5); }, "mu_max");
  config_error([&] { Binning2D::s_mu(rp, std::nan(""), 5); }, "mu_max");
  config_error([&] { Binning2D::s_mu(rp, 1.0, 0); }, "mu bins");
  config_error([&] { Binning::from_edges({0.0, 2.0, 1.0}); }, "increase");
  config_error([&] { Binning::from_edges({0.0, std::nan("")}); }, "finite");
  // Auto traversal of 2-D points, a periodic box too small for the bins, angles, a matrix.
  std::mt19937_64 rng(fresh_seed());
  const PointSet p3 = to_pointset(uniform_points(50, 3, 0, 10, rng)), p2 = to_pointset(uniform_points(50, 2, 0, 10, rng));
  const PointSet p7 = to_pointset(uniform_points(50, 3, 0, 7, rng));
  const Binning2D b = Binning2D::rp_pi(Binning::linear(0, 4, 2), 4.0);
  config_error([&] { run(stat_of(b, false, 0, false, false), p2, nullptr, opts()); }, "3-D points");
  config_error([&] { run(stat_of(b, true, 7.0, false, false), p7, nullptr, opts()); }, "rpmax");
  config_error([&] { run(stat_of(Binning2D::rp_pi(Binning::linear(0, 2, 2), 4.0), true, 7.0, false, false), p7, nullptr, opts()); },
               "pimax");
  config_error([&] { run(stat_of(Binning2D::s_mu(Binning::linear(0, 4, 2), 1, 2), true, 7.0, false, false), p7, nullptr, opts()); },
               "smax");
  Statistic ang = stat_of(b, false, 0, false, false);
  ang.metric = Metric::Angular;
  config_error([&] { run(ang, p3, nullptr, opts()); }, "Cartesian");
  // 2-D bins on a pair list: no longer a statement a run can refuse, since reduce::PairList holds a
  // 1-D range only. Making a 2-D statistic a pair list drops its 2-D bins, and a histogram's
  // options are refused on the pair list with an error naming histograms.
  static_assert(!std::is_constructible_v<reduce::PairList, Binning2D>);
  Statistic mat = stat_of(b, false, 0, false, false);
  mat.reduction = reduce::PairList{Binning::linear(0, 4, 1)};
  EXPECT_FALSE(mat.is_2d());
  EXPECT_FALSE(mat.binning2d().active());
  EXPECT_EQ(mat.output(), OutputKind::PairList);
  testing_support::expect_config_error([&] { mat.set_regions(3); },
                                       "jackknife regions are counted for histograms, not for a pair list");
  testing_support::expect_config_error([&] { mat.set_mean_separation(true); },
                                       "mean separations are summed per histogram bin, not for a pair list");
  config_error([&] { correlation_2d(p3, {}, b, std::nullopt, false); }, "random catalogues");
  config_error([&] { paircount_2d(p3, nullptr, b, std::nullopt, true); }, "weight");
  PointSet nan_points = p3;
  nan_points.coord(2)[3] = std::nan("");
  config_error([&] { run(stat_of(b, true, 10.0, false, false), nan_points, nullptr, opts()); }, "outside the periodic box");
}

// --explain (and the run's plan) name the 2-D traversal and its reach.
TEST(Clustering2D, ExplainNamesTheBinnedPairFunction) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet p = to_pointset(uniform_points(3000, 3, 0, 100, rng));
  const Statistic s = stat_of(Binning2D::s_mu(Binning::linear(0, 10, 5), 1, 4), true, 100, false, false);
  const std::string e = explain(s, p, nullptr, opts("grid"));
  EXPECT_NE(e.find("SMuBins"), std::string::npos) << e;
  EXPECT_NE(e.find("path: grid"), std::string::npos) << e;
  EXPECT_NE(e.find("20 2-D bins"), std::string::npos) << e;
}

// Survey mocks: the midpoint line of sight (Corrfunc's DDrppi_mocks / DDsmu_mocks). The oracle
// takes Corrfunc's definitions as its documentation states them, l = (v1 + v2)/2, π = |s·l|/|l|,
// r_p² = |s|² − π², μ = π/|s| (in float64; halving l is exact, so the README's rule with l = v1 + v2
// must give the same bits), and bins them by linear search.
namespace {

struct MockOracle {
  bool rppi = true;
  std::vector<double> outer;
  double inner_max = 0;
  int n_inner = 0;

  int bin(const std::vector<double>& a, const std::vector<double>& b) const {
    double s[3], l[3];
    for (int d = 0; d < 3; ++d) {
      s[d] = a[d] - b[d];
      l[d] = (a[d] + b[d]) / 2;
    }
    const double ss = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
    const double ll = l[0] * l[0] + l[1] * l[1] + l[2] * l[2];
    const double sl = s[0] * l[0] + s[1] * l[1] + s[2] * l[2];
    double o2, v;
    if (rppi) {
      const double pi2 = (sl * sl) / ll;
      o2 = std::max(ss - pi2, 0.0);
      v = std::sqrt(pi2);
    } else {
      o2 = ss;
      v = std::sqrt(std::min((sl * sl) / (ll * ss), 1.0));
    }
    int i = -1, k = -1;
    for (std::size_t t = 0; t + 1 < outer.size(); ++t)
      if (outer[t] * outer[t] <= o2 && o2 < outer[t + 1] * outer[t + 1]) i = static_cast<int>(t);
    for (int t = 0; t < n_inner; ++t) {
      const double lo = inner_max * t / n_inner, hi = t + 1 == n_inner ? inner_max : inner_max * (t + 1) / n_inner;
      const bool closed_top = !rppi && t + 1 == n_inner && inner_max == 1.0;
      if (lo <= v && (v < hi || (closed_top && v <= 1.0))) k = t;
    }
    return (i < 0 || k < 0) ? -1 : i * n_inner + k;
  }
  Oracle2D::Counts count(const oracle::Points& a, const oracle::Points* b) const {
    const std::size_t nb = (outer.size() - 1) * n_inner;
    Oracle2D::Counts c{std::vector<std::uint64_t>(nb, 0), std::vector<double>(nb, 0.0), {}};
    const oracle::Points& B = b ? *b : a;
    for (std::size_t i = 0; i < a.x.size(); ++i)
      for (std::size_t j = b ? 0 : i + 1; j < B.x.size(); ++j) {
        const int k = bin(a.x[i], B.x[j]);
        if (k < 0) continue;
        ++c.n[k];
        c.w[k] += a.w[i] * B.w[j];
      }
    return c;
  }
};

// RA, Dec (degrees) and cz (km/s) in a patch of sky, with weights.
oracle::Points mock_patch(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> ura(150, 190), usin(std::sin(5 * M_PI / 180), std::sin(35 * M_PI / 180)),
      ucz(9000, 15000), uw(0.5, 2.0);
  oracle::Points p;
  p.dim = 3;
  for (std::size_t i = 0; i < n; ++i) {
    p.x.push_back({ura(rng), std::asin(usin(rng)) * 180 / M_PI, ucz(rng)});
    p.w.push_back(uw(rng));
  }
  return p;
}

// Cartesian copies of the oracle's points, through the library's conversion (tested on its own
// below): the pair bins are what is under test here.
oracle::Points cartesian(const oracle::Points& sky, const FlatLcdm& c) {
  const PointSet x = sky_to_cartesian(to_pointset(sky), c, false);
  oracle::Points p;
  p.dim = 3;
  p.w = sky.w;
  for (std::size_t i = 0; i < x.size(); ++i) p.x.push_back({x.coord(0)[i], x.coord(1)[i], x.coord(2)[i]});
  return p;
}

}  // namespace

TEST(Clustering2DMocks, ComovingDistanceMatchesClosedFormsAndCorrfunc) {
  // Ω_m = 1: d = (c/100) 2 (1 − 1/sqrt(1 + z)); Ω_m = 0: d = (c/100) z.
  for (double cz : {0.0, 150.0, 12345.6, 3e5, 1.2e6}) {
    const double z = cz / 299792.458, dh = 2997.92458;
    EXPECT_NEAR(FlatLcdm{1.0}.comoving_distance(cz), dh * 2 * (1 - 1 / std::sqrt(1 + z)), 1e-13 * dh * (1 + z));
    EXPECT_NEAR(FlatLcdm{0.0}.comoving_distance(cz), dh * z, 1e-13 * dh * (1 + z));
  }
  // Corrfunc's own conversion (utils/set_cosmo_dist.c tabulated by Simpson's rule every 1e-4 in z,
  // then gsl_interp_linear, c = 299800 km/s), printed by a small C program linked to it. Its
  // linear interpolation errs by up to Δz²/8 · max d'' ≈ 1e-8/8 · 1350 ≈ 1.7e-6 Mpc/h, so
  // agreement to 2e-6 Mpc/h.
  struct Ref {
    int preset;
    double cz, d;
  };
  const Ref refs[] = {{1, 1000.0, 9.9937384695727314},  {1, 12345.6, 122.49168671558539},
                      {1, 30000.0, 294.21957445877172}, {1, 60000.0, 576.37429616649661},
                      {2, 1000.0, 9.9924380411215132},  {2, 12345.6, 122.29487528855827},
                      {2, 30000.0, 293.07247121760287}, {2, 60000.0, 571.91402891147777}};
  for (const Ref& r : refs) {
    FlatLcdm c = FlatLcdm::corrfunc(r.preset);
    c.speed_of_light = 299800.0;
    EXPECT_NEAR(c.comoving_distance(r.cz), r.d, 2e-6) << "cosmology " << r.preset << " cz " << r.cz;
  }
  EXPECT_DOUBLE_EQ(FlatLcdm::corrfunc(1).omega_m, 0.25);
  EXPECT_DOUBLE_EQ(FlatLcdm::corrfunc(2).omega_m, 0.302);
  EXPECT_THROW(FlatLcdm::corrfunc(3), Error);
  EXPECT_THROW(FlatLcdm{0.3}.comoving_distance(-1.0), Error);

  // (RA, Dec, d) to Cartesian, and --comoving passing d through.
  PointSet sky(3, 2);
  const double ra[2] = {0.0, 90.0}, dec[2] = {0.0, 90.0};
  for (int i = 0; i < 2; ++i) {
    sky.coord(0)[i] = ra[i];
    sky.coord(1)[i] = dec[i];
    sky.coord(2)[i] = 100.0;
  }
  const PointSet x = sky_to_cartesian(sky, FlatLcdm{}, true);
  EXPECT_DOUBLE_EQ(x.coord(0)[0], 100.0);
  EXPECT_NEAR(x.coord(1)[0], 0.0, 1e-12);
  EXPECT_NEAR(x.coord(0)[1], 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(x.coord(2)[1], 100.0);
  sky.coord(1)[0] = 91;
  EXPECT_THROW(sky_to_cartesian(sky, FlatLcdm{}, true), Error);
}

TEST(Clustering2DMocks, RandomMockCataloguesMatchBruteForce) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const FlatLcdm cosmo = FlatLcdm::corrfunc(2);
  const oracle::Points a = cartesian(mock_patch(1200, rng), cosmo), b = cartesian(mock_patch(900, rng), cosmo);
  const PointSet pa = to_pointset(a), pb = to_pointset(b);
  for (bool rppi : {true, false})
    for (bool cross : {false, true}) {
      MockOracle o;
      o.rppi = rppi;
      o.outer = rppi ? std::vector<double>{0.0, 1.0, 2.5, 5.0, 10.0, 20.0} : std::vector<double>{0.5, 2.0, 7.0, 15.0, 25.0};
      o.inner_max = rppi ? 20.0 : 1.0;
      o.n_inner = rppi ? 20 : 8;
      const auto want = o.count(a, cross ? &b : nullptr);
      const Binning outer = Binning::from_edges(o.outer);
      const Binning2D bins = rppi ? Binning2D::rp_pi(outer, o.inner_max, o.n_inner, LineOfSight::PairMidpoint)
                                  : Binning2D::s_mu(outer, o.inner_max, o.n_inner, LineOfSight::PairMidpoint);
      const std::string what = fmt::format("mock {} {}", rppi ? "rp-pi" : "s-mu", cross ? "cross" : "auto");
      std::uint64_t total = 0;
      for (auto n : want.n) total += n;
      EXPECT_GT(total, 1000u) << what;
      for (const char* path : {"grid", "brute"}) {
        const Statistic s = stat_of(bins, false, 0, cross, true);
        expect_same(want, run(s, pa, cross ? &pb : nullptr, opts(path)), true, what + " " + path);
      }
      const auto via_api = paircount_2d(pa, cross ? &pb : nullptr, bins, std::nullopt, false, opts());
      expect_same(want, via_api.raw, false, what + " paircount_2d");
    }
  // Pairs along the line of sight (same RA, Dec): π = |s|, r_p = 0, μ = 1, counted in the last
  // μ bin; a coincident pair (s = 0) has μ = 0.
  PointSet line(3, 3);
  const double d[3] = {100.0, 103.0, 103.0};
  for (int i = 0; i < 3; ++i) {
    line.coord(0)[i] = 0.6 * d[i];
    line.coord(1)[i] = 0.0;
    line.coord(2)[i] = 0.8 * d[i];
  }
  const Binning2D smu = Binning2D::s_mu(Binning::from_edges({0.0, 5.0}), 1.0, 4, LineOfSight::PairMidpoint);
  const Result r = paircount_2d(line, nullptr, smu, std::nullopt, false, opts()).raw;
  EXPECT_EQ(r.counts[3], 2u);
  EXPECT_EQ(r.counts[0], 1u);
  EXPECT_THROW(paircount_2d(line, nullptr, smu, Box::cube(3, 1000), false, opts()), Error);
  Statistic periodic = stat_of(smu, true, 1000, false, false);
  EXPECT_THROW(run(periodic, line, nullptr, opts()), Error);
}

// ---- jackknife errors of the 2-D estimators ---------------------------------------------------
// Every leave-one-region-out sample against an explicit recount: the region's points removed from
// every catalogue and correlation_2d run again, ξ per flat bin and w_p or the multipoles compared
// to 1e-12 (relative to 1 + |value|: the rebuilt counts differ from the recount only by the
// rounding of DD − T and of the weight sums). Randoms (labels, box cells, k-means on mocks) and
// the analytic RR of a box, weighted and unweighted.
namespace {

using testing_support::without_region;

void expect_close(double got, double want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want))) << what;
}

const std::vector<double>& column_of(const std::vector<NamedColumn>& cols, const std::string& name) {
  for (const auto& c : cols)
    if (c.name == name) return c.values;
  throw std::runtime_error("no column " + name);
}

void expect_equals_recount_2d(const Binned2DResult& x, const PointSet& data, const std::vector<std::int32_t>& ld,
                              const std::vector<PointSet>& randoms, const std::vector<std::vector<std::int32_t>>& lr,
                              const std::optional<Box>& box, bool weighted, Estimator e) {
  ASSERT_TRUE(x.jackknife.has_value());
  const JackknifeResult& J = *x.jackknife;
  const Binning2D& bins = x.binning;
  const std::size_t R = J.regions, nb = bins.nbins(), no = bins.outer().nbins();
  const std::vector<std::string> names =
      bins.kind() == Binning2D::Kind::RpPi ? std::vector<std::string>{"wp"} : std::vector<std::string>{"xi0", "xi2", "xi4"};
  const std::size_t n = names.size() * no;
  ASSERT_EQ(J.samples.size(), R * nb);
  ASSERT_EQ(x.per_outer_samples.size(), R * n);
  std::size_t finite = 0;
  for (double v : J.samples) finite += std::isfinite(v) ? 1 : 0;
  EXPECT_GT(finite, R * nb * 3 / 4) << "most bins hold pairs: the comparison is not one of NaNs";
  for (std::size_t r = 0; r < R; ++r) {
    const int q = static_cast<int>(r);
    std::vector<PointSet> rs;
    for (std::size_t i = 0; i < randoms.size(); ++i) rs.push_back(without_region(randoms[i], lr[i], q));
    const Binned2DResult y = correlation_2d(without_region(data, ld, q), rs, bins, box, weighted, e, opts());
    const auto& xi = column_of(y.derived, "xi");
    for (std::size_t k = 0; k < nb; ++k)
      expect_close(J.samples[r * nb + k], xi[k], fmt::format("xi sample r={} bin {}", r, k));
    for (std::size_t m = 0; m < names.size(); ++m) {
      const auto& v = column_of(y.per_outer, names[m]);
      for (std::size_t i = 0; i < no; ++i)
        expect_close(x.per_outer_samples[r * n + m * no + i], v[i], fmt::format("{} sample r={} bin {}", names[m], r, i));
    }
  }
  // The columns: the summaries of those samples (jackknife_summary's formula is tested on its own).
  const JackknifeSummary flat = jackknife_summary(J.samples, R, nb), outer = jackknife_summary(x.per_outer_samples, R, n);
  EXPECT_EQ(column_of(x.derived, "xi_jk_mean"), flat.mean);
  EXPECT_EQ(column_of(x.derived, "xi_jk_sigma"), flat.sigma);
  EXPECT_EQ(J.covariance, flat.covariance);
  EXPECT_EQ(x.per_outer_jackknife.covariance, outer.covariance);
  for (std::size_t m = 0; m < names.size(); ++m) {
    const auto& mean = column_of(x.per_outer, names[m] + "_jk_mean");
    const auto& sigma = column_of(x.per_outer, names[m] + "_jk_sigma");
    for (std::size_t i = 0; i < no; ++i) {
      EXPECT_EQ(mean[i], outer.mean[m * no + i]);
      EXPECT_EQ(sigma[i], std::sqrt(outer.covariance[(m * no + i) * n + m * no + i]));
    }
  }
}

}  // namespace

TEST(Clustering2DJackknife, RandomsLabelsEqualRecount) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 50;
  const int R = 4;
  const auto labels = [&](std::size_t n) {
    std::uniform_int_distribution<int> u(0, R - 1);
    std::vector<std::int32_t> l(n);
    for (auto& x : l) x = u(rng);
    return l;
  };
  for (bool weighted : {false, true}) {
    PointSet d = to_pointset(uniform_points(1500, 3, 0, L, rng));
    std::vector<PointSet> rs = {to_pointset(uniform_points(1200, 3, 0, L, rng)),
                                to_pointset(uniform_points(900, 3, 0, L, rng))};
    if (weighted) {
      d = testing_support::with_weights(d, rng);
      for (auto& r : rs) r = testing_support::with_weights(r, rng);
    }
    // Labels as a file gives them (any non-negative integers): 7, 17, 27, 37.
    const auto ld = labels(d.size());
    std::vector<std::vector<std::int32_t>> lr = {labels(rs[0].size()), labels(rs[1].size())};
    const auto scaled = [](std::vector<std::int32_t> l) {
      for (auto& x : l) x = 10 * x + 7;
      return l;
    };
    d.set_regions(scaled(ld));
    for (std::size_t i = 0; i < rs.size(); ++i) rs[i].set_regions(scaled(lr[i]));
    JackknifeRequest jk;
    jk.use_labels = true;
    for (bool rppi : {true, false}) {
      SCOPED_TRACE(fmt::format("{} {}", rppi ? "rp-pi" : "s-mu", weighted ? "weighted" : "unweighted"));
      const Binning2D bins = rppi ? Binning2D::rp_pi(Binning::from_edges({1.0, 3.0, 6.0, 10.0}), 6.0, 3)
                                  : Binning2D::s_mu(Binning::from_edges({2.0, 5.0, 9.0}), 1.0, 4);
      const Estimator e = rppi ? Estimator::LandySzalay : Estimator::Hamilton;
      const std::optional<Box> box = rppi ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
      const Binned2DResult x = correlation_2d(d, rs, bins, box, weighted, e, opts(), jk);
      ASSERT_EQ(x.jackknife->regions, std::size_t(R));
      EXPECT_EQ(x.jackknife->labels, (std::vector<std::int32_t>{7, 17, 27, 37}));
      EXPECT_EQ(x.jackknife->estimator, e);
      expect_equals_recount_2d(x, d, ld, rs, lr, box, weighted, e);
      // The estimate itself is the run's without a jackknife.
      const Binned2DResult plain = correlation_2d(d, rs, bins, box, weighted, e, opts());
      EXPECT_EQ(x.raw.counts, plain.raw.counts);
      for (std::size_t k = 0; k < bins.nbins(); ++k)
        expect_close(column_of(x.derived, "xi")[k], column_of(plain.derived, "xi")[k], "xi");
    }
  }
}

TEST(Clustering2DJackknife, BoxCellsEqualRecountWithRandomsAndAnalytic) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 40;
  const Box box = Box::cube(3, L);
  JackknifeRequest jk;
  jk.regions = 8;
  const CellLayout cells = cell_layout(8, {0, 0, 0}, {L, L, L});
  for (bool weighted : {false, true}) {
    PointSet d = to_pointset(uniform_points(2000, 3, 0, L, rng));
    PointSet r0 = to_pointset(uniform_points(2500, 3, 0, L, rng));
    if (weighted) {
      d = testing_support::with_weights(d, rng);
      r0 = testing_support::with_weights(r0, rng);
    }
    const auto ld = cell_regions(d, cells);
    for (bool rppi : {true, false})
      for (bool analytic : {false, true}) {
        SCOPED_TRACE(fmt::format("{} {} {}", rppi ? "rp-pi" : "s-mu", analytic ? "analytic RR" : "randoms",
                                 weighted ? "weighted" : "unweighted"));
        const Binning2D bins = rppi ? Binning2D::rp_pi(Binning::from_edges({0.5, 2.0, 4.0, 8.0}), 5.0, 5)
                                    : Binning2D::s_mu(Binning::from_edges({1.0, 4.0, 8.0}), 1.0, 5);
        const std::vector<PointSet> rs = analytic ? std::vector<PointSet>{} : std::vector<PointSet>{r0};
        const std::vector<std::vector<std::int32_t>> lr =
            analytic ? std::vector<std::vector<std::int32_t>>{} : std::vector<std::vector<std::int32_t>>{cell_regions(r0, cells)};
        const Binned2DResult x = correlation_2d(d, rs, bins, box, weighted, Estimator::LandySzalay, opts(), jk);
        ASSERT_EQ(x.jackknife->regions, 8u);
        EXPECT_EQ(x.analytic_rr, analytic);
        expect_equals_recount_2d(x, d, ld, rs, lr, box, weighted, Estimator::LandySzalay);
        if (analytic) {
          // RR_{-r} is the box's analytic RR of the data left: its pair total is in norm_rr.
          const JackknifeResult& J = *x.jackknife;
          EXPECT_TRUE(J.rr.empty());
          for (std::size_t r = 0; r < 8; ++r) {
            const double m = static_cast<double>(d.size() - J.n_data[r]);
            if (!weighted) EXPECT_EQ(J.norm_rr[r], 0.5 * m * (m - 1));
          }
        }
      }
  }
}

// Survey mocks: regions are patches of sky, k-means on the random catalogue's directions from the
// observer (as w(θ) does), every catalogue labelled by the nearest centre.
TEST(Clustering2DJackknife, MockSkyRegionsEqualRecount) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const FlatLcdm cosmo = FlatLcdm::corrfunc(1);
  const PointSet d = to_pointset(cartesian(mock_patch(1500, rng), cosmo));
  const std::vector<PointSet> rs = {to_pointset(cartesian(mock_patch(2000, rng), cosmo))};
  const Binning2D bins =
      Binning2D::rp_pi(Binning::from_edges({1.0, 5.0, 10.0, 20.0}), 20.0, 4, LineOfSight::PairMidpoint);
  JackknifeRequest jk;
  jk.regions = 5;
  jk.seed = 11;
  const Binned2DResult x = correlation_2d(d, rs, bins, std::nullopt, true, Estimator::LandySzalay, opts(), jk);
  ASSERT_EQ(x.jackknife->regions, 5u);
  EXPECT_NE(x.jackknife->layout.find("k-means"), std::string::npos) << x.jackknife->layout;
  // Fitted on the random catalogue's directions (as TreeCorr's patches from randoms).
  const PointSet& r0 = rs[0];
  PointSet u(3, r0.size());
  for (std::size_t i = 0; i < r0.size(); ++i) {
    const double n = std::hypot(r0.coord(0)[i], r0.coord(1)[i], r0.coord(2)[i]);
    for (int k = 0; k < 3; ++k) u.coord(k)[i] = r0.coord(k)[i] / n;
  }
  const auto centres = sky_region_centres(u, 5, 11);
  expect_equals_recount_2d(x, d, nearest_centre(d, centres), rs, {nearest_centre(rs[0], centres)}, std::nullopt, true,
                           Estimator::LandySzalay);
}
