// Correlation functions: the estimators against their formulas from independently counted DD, DR
// and RR; random catalogues summed with their normalisations; ξ of uniform data against uniform
// randoms consistent with zero, and of clustered data positive at small separations.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"

using namespace twobody;
using testing_support::with_weights;

namespace {

RunOptions cpu_opts() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}

const std::vector<double>& column(const BinnedResult& r, const std::string& name) {
  for (const auto& c : r.derived)
    if (c.name == name) return c.values;
  // w(θ)'s estimates are named w_* (estimate_name): the same column under its sky name.
  if (name.rfind("xi_", 0) == 0)
    for (const auto& c : r.derived)
      if (c.name == "w_" + name.substr(3)) return c.values;
  throw std::runtime_error("no column " + name);
}

}  // namespace

TEST(Correlation, EstimatorsFromIndependentCountsWithSeveralRandomSets) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  const Box box = Box::cube(3, L);
  for (bool weighted : {false, true}) {
    PointSet d = generate_clustered_box(2500, 3, L, ClusterOptions{}, seed);
    std::vector<PointSet> rs = {generate_uniform_box(3000, 3, L, seed + 1), generate_uniform_box(4000, 3, L, seed + 2)};
    if (weighted) {
      d = with_weights(d, seed + 3);
      for (auto& r : rs) r = with_weights(r, seed + 4 + r.size());
    }
    const Binning bins = Binning::logarithmic(0.5, 30.0, 9);
    const BinnedResult x = correlation(d, rs, bins, CorrelationSpace::Box, box, weighted, cpu_opts());
    // Independent counts, summed by hand.
    const auto dd = paircount(d, nullptr, bins, box, weighted, cpu_opts()).raw;
    std::vector<double> dr(9, 0), rr(9, 0);
    double ndr = 0, nrr = 0;
    for (const auto& r : rs) {
      const auto a = paircount(d, &r, bins, box, weighted, cpu_opts()).raw;
      const auto b = paircount(r, nullptr, bins, box, weighted, cpu_opts()).raw;
      for (int k = 0; k < 9; ++k) {
        dr[k] += weighted ? a.weighted[k] : double(a.counts[k]);
        rr[k] += weighted ? b.weighted[k] : double(b.counts[k]);
      }
      ndr += pair_norm(d, &r, weighted);
      nrr += pair_norm(r, nullptr, weighted);
    }
    EXPECT_EQ(x.raw.counts, dd.counts);
    const double ndd = pair_norm(d, nullptr, weighted);
    for (int k = 0; k < 9; ++k) {
      const double DD = (weighted ? dd.weighted[k] : double(dd.counts[k])) / ndd, DR = dr[k] / ndr, RR = rr[k] / nrr;
      if (RR == 0 || DR == 0) continue;
      // Weighted sums are added in thread order: equal to ~1e-15, not bit for bit.
      const auto near = [](double got, double want) { EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want))); };
      near(column(x, "xi_natural")[k], DD / RR - 1);
      near(column(x, "xi_davis_peebles")[k], DD / DR - 1);
      near(column(x, "xi_hamilton")[k], DD * RR / (DR * DR) - 1);
      near(column(x, "xi_landy_szalay")[k], (DD - 2 * DR + RR) / RR);
    }
    // Clustered data: strongly positive at the smallest separations.
    EXPECT_GT(column(x, "xi_landy_szalay")[2], 1.0);
  }
}

TEST(Correlation, UniformDataHasXiConsistentWithZero) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  const auto d = generate_uniform_box(5000, 3, L, seed);
  const std::vector<PointSet> rs = {generate_uniform_box(10000, 3, L, seed + 1)};
  const Binning bins = Binning::linear(5.0, 25.0, 4);
  const BinnedResult x = correlation(d, rs, bins, CorrelationSpace::Box, Box::cube(3, L), false, cpu_opts());
  for (int k = 0; k < 4; ++k) {
    // DD per bin is a few 10^4 pairs: Poisson scatter ~1/sqrt(DD); allow 6 sigma.
    const double sigma = 1.0 / std::sqrt(double(x.raw.counts[k]));
    EXPECT_LT(std::abs(column(x, "xi_landy_szalay")[k]), 6 * sigma) << k;
    EXPECT_LT(std::abs(column(x, "xi_natural")[k]), 6 * sigma) << k;
  }
}

TEST(Correlation, SkyAndBadInput) {
  const auto seed = testing_support::fresh_seed();
  const PointSet d = generate_clustered_sky(3000, ClusterOptions{}, seed);
  const std::vector<PointSet> rs = {generate_uniform_sky(6000, seed + 1)};
  const Binning bins = Binning::logarithmic(0.05, 10.0, 8);
  const BinnedResult w = correlation(d, rs, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts());
  EXPECT_EQ(w.raw.counts, angular(d, nullptr, bins, false, cpu_opts()).raw.counts);
  EXPECT_EQ(column(w, "rr").size(), 8u);
  EXPECT_THROW(correlation(d, {}, bins, CorrelationSpace::Sky, std::nullopt, false, cpu_opts()), Error);
  EXPECT_THROW(correlation(d, rs, bins, CorrelationSpace::Box, std::nullopt, false, cpu_opts()), Error);
}

// ξ in a periodic box without random catalogues (Corrfunc's theory xi): DD over the box's analytic
// random pairs, N(N−1)/2 · V_shell/V, or (Σw)²(1 − 1/N)/2 · V_shell/V weighted; equal to rdf's
// g(r) − 1; consistent with zero for uniform data; its jackknife samples equal explicit
// leave-one-region-out counts against the analytic RR of the data left.
TEST(Correlation, AnalyticRandomsInAPeriodicBox) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 100.0;
  const Box box = Box::cube(3, L);
  const Binning bins = Binning::linear(2.0, 20.0, 9);
  const PointSet u = generate_uniform_box(6000, 3, L, seed);
  for (bool weighted : {false, true}) {
    const PointSet d = weighted ? with_weights(u, seed + 1) : u;
    const CorrelationResult x = correlation(d, {}, bins, CorrelationSpace::Box, box, weighted, cpu_opts());
    EXPECT_TRUE(x.analytic_rr);
    const auto dd = paircount(d, nullptr, bins, box, weighted, cpu_opts());
    double n = static_cast<double>(d.size()), w = 0;
    for (double v : d.weights()) w += v;
    const double pairs = weighted ? 0.5 * w * w * (1 - 1 / n) : 0.5 * n * (n - 1);
    for (std::size_t k = 0; k < bins.nbins(); ++k) {
      const double r0 = bins.lo(k), r1 = bins.hi(k);
      const double rr = pairs * (4.0 / 3.0 * M_PI * (r1 * r1 * r1 - r0 * r0 * r0)) / (L * L * L);
      const double DD = weighted ? dd.raw.weighted[k] : static_cast<double>(dd.raw.counts[k]);
      EXPECT_NEAR(column(x, weighted ? "wrr" : "rr")[k], rr, 1e-9 * rr);
      EXPECT_NEAR(column(x, "xi")[k], DD / rr - 1, 1e-12);
      EXPECT_LT(std::abs(column(x, "xi")[k]) * std::sqrt(rr), 6.0) << "bin " << k;  // Poisson: ξ ≈ 0
    }
    if (!weighted) {
      const auto g = rdf(d, nullptr, bins, box, cpu_opts());
      for (std::size_t k = 0; k < bins.nbins(); ++k) EXPECT_NEAR(column(x, "xi")[k], column(g, "g_r")[k] - 1, 1e-12);
    }
  }
  // Jackknife: 8 equal cells; sample r against a recount of the data without region r.
  JackknifeRequest jk;
  jk.regions = 8;
  const CorrelationResult x = correlation(u, {}, bins, CorrelationSpace::Box, box, false, cpu_opts(), jk);
  ASSERT_TRUE(x.jackknife);
  const JackknifeResult& J = *x.jackknife;
  ASSERT_EQ(J.regions, 8u);
  std::vector<std::int32_t> labels(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    int cell = 0;
    for (int d = 0; d < 3; ++d) cell = cell * 2 + (u.coord(d)[i] >= 0.5 * L ? 1 : 0);
    labels[i] = cell;
  }
  std::size_t checked = 0;
  for (int r = 0; r < 8; ++r) {
    const PointSet left = testing_support::without_region(u, labels, r);
    const auto dd = paircount(left, nullptr, bins, box, false, cpu_opts());
    const double n = static_cast<double>(left.size());
    // The library's regions are numbered its own way: match sample rows by their DD.
    for (std::size_t row = 0; row < 8; ++row) {
      bool same = true;
      for (std::size_t k = 0; k < bins.nbins() && same; ++k) {
        const double r0 = bins.lo(k), r1 = bins.hi(k);
        const double rr = 0.5 * n * (n - 1) * (4.0 / 3.0 * M_PI * (r1 * r1 * r1 - r0 * r0 * r0)) / (L * L * L);
        same = std::abs(J.samples[row * bins.nbins() + k] - (static_cast<double>(dd.raw.counts[k]) / rr - 1)) < 1e-12;
      }
      checked += same;
    }
  }
  EXPECT_EQ(checked, 8u);
  EXPECT_EQ(column(x, "xi_jk_sigma").size(), bins.nbins());
  // No box: random catalogues are needed; saving an analytic RR is refused.
  EXPECT_THROW(correlation(u, {}, bins, CorrelationSpace::Open, std::nullopt, false, cpu_opts()), Error);
  EXPECT_THROW(saved_counts(x, CorrelationSpace::Box, box, false), Error);
}
