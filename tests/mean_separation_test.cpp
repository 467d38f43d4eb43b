// Mean separation per bin (Statistic::mean_separation, --ravg): Σ s and Σ ln s per bin against an
// independent brute force over every pair, unweighted and weighted, auto and cross, open, periodic
// and on the sky, on the CPU's all-pairs and grid paths, with and without jackknife regions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"

using namespace twobody;
using testing_support::with_weights;

namespace {

struct Brute {
  std::vector<std::uint64_t> counts;
  std::vector<double> norm, sum, log_sum;
};

// Every pair, its separation in double from the coordinates: r (minimum image when periodic), or
// θ in degrees between unit vectors. θ as the engine defines it, from cos θ = a·b: at 0.1° the
// float64 cosine alone leaves ~1e-12 of θ uncertain, so a chord-based θ would differ by that.
Brute brute(const PointSet& a, const PointSet* b, const Binning& bins, Metric m, const Box& box, bool weighted) {
  const std::size_t nb = bins.nbins();
  Brute r{std::vector<std::uint64_t>(nb, 0), std::vector<double>(nb, 0), std::vector<double>(nb, 0),
          std::vector<double>(nb, 0)};
  const PointSet& c = b ? *b : a;
  const int dim = a.dim();
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = b ? 0 : i + 1; j < c.size(); ++j) {
      double s2 = 0, dot = 0;
      for (int d = 0; d < dim; ++d) {
        dot += a.coord(d)[i] * c.coord(d)[j];
        double x = std::abs(a.coord(d)[i] - c.coord(d)[j]);
        if (m == Metric::Periodic) x = std::min(x, box.length[d] - x);
        s2 += x * x;
      }
      double s = std::sqrt(s2);
      if (m == Metric::Angular) s = std::acos(std::clamp(dot, -1.0, 1.0)) * 180.0 / std::numbers::pi;
      if (s < bins.lo() || s >= bins.hi()) continue;
      std::size_t k = 0;
      while (k + 1 < nb && s >= bins.hi(k)) ++k;
      const double w = weighted ? a.weights()[i] * c.weights()[j] : 1.0;
      ++r.counts[k];
      r.norm[k] += w;
      r.sum[k] += w * s;
      r.log_sum[k] += w * std::log(s);
    }
  return r;
}

void expect_means(const Result& x, const Brute& want) {
  ASSERT_EQ(x.counts, want.counts);
  ASSERT_EQ(x.separation_sum.size(), want.sum.size());
  for (std::size_t k = 0; k < want.sum.size(); ++k) {
    if (want.counts[k] == 0) continue;
    const double mean = x.separation_sum[k] / want.norm[k], mean_log = x.log_separation_sum[k] / want.norm[k];
    const double m0 = want.sum[k] / want.norm[k], l0 = want.log_sum[k] / want.norm[k];
    EXPECT_NEAR(mean, m0, 1e-12 * std::abs(m0)) << "bin " << k;
    EXPECT_NEAR(mean_log, l0, 1e-12 * std::max(1.0, std::abs(l0))) << "bin " << k;
  }
}

}  // namespace

TEST(MeanSeparation, AgainstBruteForceBoxSkyAutoCrossWeightedPathsRegions) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const double L = 50.0;
  const Box box = Box::cube(3, L);
  for (Metric m : {Metric::Euclidean, Metric::Periodic, Metric::Angular})
    for (bool cross : {false, true})
      for (bool weighted : {false, true})
        for (const char* path : {"brute", "grid"})
          for (int regions : {0, 3}) {
            SCOPED_TRACE(::testing::Message() << to_string(m) << (cross ? " cross" : " auto") << " weighted "
                                              << weighted << " path " << path << " regions " << regions);
            const bool sky = m == Metric::Angular;
            PointSet a = sky ? sky_to_unit_vectors(generate_clustered_sky(900, ClusterOptions{}, seed))
                             : generate_clustered_box(900, 3, L, ClusterOptions{}, seed);
            PointSet b = sky ? sky_to_unit_vectors(generate_uniform_sky(700, seed + 1))
                             : generate_uniform_box(700, 3, L, seed + 1);
            if (weighted) {
              a = with_weights(a, seed + 2);
              b = with_weights(b, seed + 3);
            }
            if (regions) {
              std::vector<std::int32_t> la(a.size()), lb(b.size());
              for (std::size_t i = 0; i < la.size(); ++i) la[i] = std::int32_t(i % 3);
              for (std::size_t i = 0; i < lb.size(); ++i) lb[i] = std::int32_t((i * 7) % 3);
              a.set_regions(std::move(la));
              b.set_regions(std::move(lb));
            }
            Statistic s;
            s.traversal = cross ? Traversal::Cross : Traversal::Auto;
            s.metric = m;
            if (m == Metric::Periodic) s.box = box;
            s.reduction = reduce::Histogram{
                .bins = sky ? Binning::logarithmic(0.05, 8.0, 7) : Binning::logarithmic(0.3, 9.0, 7),
                .regions = regions,
                .mean_separation = true};
            s.weighted = weighted;
            RunOptions o;
            o.backend = "cpu";
            o.path = path;
            const Result x = run(s, a, cross ? &b : nullptr, o);
            expect_means(x, brute(a, cross ? &b : nullptr, s.binning(), m, box, weighted));
            if (regions) EXPECT_EQ(x.region_counts.size(), std::size_t(regions) * s.binning().nbins());
          }
}

TEST(MeanSeparation, ColumnsOfTheStatistics) {
  const auto seed = testing_support::fresh_seed();
  const PointSet a = generate_uniform_box(600, 3, 40.0, seed);
  const Binning bins = Binning::linear(1, 8, 5);
  RunOptions o;
  o.backend = "cpu";
  o.mean_separation = true;
  const BinnedResult p = paircount(a, nullptr, bins, std::nullopt, false, o);
  ASSERT_EQ(p.derived.size(), 2u);
  EXPECT_EQ(p.derived[0].name, "ravg");
  EXPECT_EQ(p.derived[1].name, "meanlogr");
  const Brute want = brute(a, nullptr, bins, Metric::Euclidean, Box{}, false);
  for (std::size_t k = 0; k < bins.nbins(); ++k) {
    EXPECT_NEAR(p.derived[0].values[k], want.sum[k] / want.norm[k], 1e-12 * want.sum[k] / want.norm[k]);
    EXPECT_GE(p.derived[0].values[k], bins.lo(k));
    EXPECT_LT(p.derived[0].values[k], bins.hi(k));
  }
  const BinnedResult g = rdf(a, nullptr, bins, Box::cube(3, 40.0), o);
  EXPECT_EQ(g.derived[1].name, "g_r");
  EXPECT_EQ(g.derived[2].name, "ravg");
  // ξ: the data pairs' means, the same as paircount's.
  const BinnedResult x = correlation(a, {generate_uniform_box(500, 3, 40.0, seed + 1)}, bins, CorrelationSpace::Open,
                                     std::nullopt, false, o);
  EXPECT_EQ(x.derived[x.derived.size() - 2].name, "ravg");
  // (Equal to rounding: the threads' partial sums are added in the order they finish.)
  ASSERT_EQ(x.derived[x.derived.size() - 2].values.size(), p.derived[0].values.size());
  for (std::size_t k = 0; k < bins.nbins(); ++k)
    EXPECT_NEAR(x.derived[x.derived.size() - 2].values[k], p.derived[0].values[k], 1e-12 * p.derived[0].values[k]) << k;
  // Not for other outputs: a count has no mean separations to set, and asking for them is a Config
  // error saying why (before reduction types, the run refused the statistic).
  Statistic s;
  s.reduction = reduce::Count{bins};
  testing_support::expect_config_error([&] { s.set_mean_separation(true); },
                                       "mean separations are summed per histogram bin, not for a reduction");
  EXPECT_FALSE(s.mean_separation());
  EXPECT_NO_THROW(s.set_mean_separation(false));
}

// The CUDA backend sums them itself (tests/cuda_backend_test.cpp compares it with the CPU's).
TEST(MeanSeparation, CudaRequestRunsOnTheGpu) {
  if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA device";
  const PointSet a = generate_uniform_box(500, 3, 40.0, 5);
  Statistic s;
  s.reduction = reduce::Histogram{.bins = Binning::linear(1, 8, 5), .mean_separation = true};
  EXPECT_EQ(make_cuda_backend()->refuses(s), "");
  RunOptions o;
  o.backend = "cuda";
  const Result x = run(s, a, nullptr, o);
  EXPECT_EQ(x.info.backend, "cuda");
  EXPECT_EQ(x.info.plan.find("this statistic runs on the cpu"), std::string::npos) << x.info.plan;
  ASSERT_EQ(x.separation_sum.size(), 5u);
  o.backend = "cpu";
  const Result c = run(s, a, nullptr, o);
  EXPECT_EQ(x.counts, c.counts);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR(x.separation_sum[k], c.separation_sum[k], 1e-12 * c.separation_sum[k]);
}
