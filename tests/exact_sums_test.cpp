// Exact floating sums (twobody/exact_sums.hpp): the grid's rounding rule and its bound, sums that
// do not depend on the order of their terms, and the engine's floating outputs the same bit for
// bit on any thread count, traversal (grid or all pairs) and split into chunks, within the
// stated bound of a float64 brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "oracle/brute_force.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/chunked_run.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/engine.hpp"
#include "twobody/exact_sums.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_oracle;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

__extension__ typedef __float128 Quad;  // a reference sum with 113 bits

TEST(ExactSums, GridHoldsEveryTermAndTheLargestExactly) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double bound : {1.0, 3.7e-200, 0.75, 6.02e23, 1e300, 5e-324}) {
    const SumGrid g = SumGrid::for_bound(bound);
    EXPECT_LE(std::abs(static_cast<double>(g.steps(bound))), 0x1p62) << bound;
    EXPECT_LE(std::abs(static_cast<double>(g.steps(-bound))), 0x1p62) << bound;
    // Terms within 2^9 of the bound keep all 53 bits: a sum of one is the term itself.
    std::uniform_real_distribution<double> u(bound / 512, bound);
    for (int k = 0; k < 100; ++k) {
      const double t = u(rng);
      EXPECT_EQ(g.value(g.steps(t)), t) << bound;
      EXPECT_EQ(g.value(g.steps(-t)), -t) << bound;
    }
  }
  EXPECT_EQ(SumGrid::for_bound(0.0).steps(0.0), 0);
}

TEST(ExactSums, AnyOrderGivesTheSameSumWithinTheBound) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Mixed signs over twelve decades, the largest term first in some orders and last in others.
  std::vector<double> terms(20000);
  std::uniform_real_distribution<double> mant(-1.0, 1.0), decade(-12.0, 0.0);
  for (double& t : terms) t = mant(rng) * std::pow(10.0, decade(rng));
  double bound = 0;
  for (double t : terms) bound = std::max(bound, std::abs(t));
  const SumGrid g = SumGrid::for_bound(bound);
  FixedSum first = 0;
  for (double t : terms) first += g.steps(t);
  Quad reference = 0;
  for (double t : terms) reference += static_cast<Quad>(t);
  for (int order = 0; order < 8; ++order) {
    std::shuffle(terms.begin(), terms.end(), rng);
    FixedSum s = 0;
    for (double t : terms) s += g.steps(t);
    EXPECT_TRUE(s == first) << "order " << order;
    // The float64 sum of the same terms in this order: not the same bits every time.
  }
  // Within n·B·2^−63 of the exact sum of the terms (plus the final rounding to float64).
  const double got = g.value(first), want = static_cast<double>(reference);
  EXPECT_LE(std::abs(got - want), static_cast<double>(terms.size()) * bound * 0x1p-63 + std::abs(want) * 0x1p-52);
}

// A run's floating outputs, for comparing bit for bit.
struct Floats {
  std::vector<double> weighted, region_weighted, sep, log_sep, point_a, point_b;
  bool operator==(const Floats&) const = default;
};
Floats floats(const Result& r) {
  return {r.weighted, r.region_weighted, r.separation_sum, r.log_separation_sum, r.per_point_a.weighted,
          r.per_point_b.weighted};
}

Result run_with(const Statistic& s, const PointSet& a, const PointSet* b, int threads, const std::string& path) {
  RunOptions o;
  o.backend = "cpu";
  o.threads = threads;
  o.path = path;
  return run(s, a, b, o);
}

Result chunked(const Statistic& s, const PointSet& a, const PointSet* b, std::size_t chunk) {
  RunOptions o;
  o.backend = "cpu";
  const Plan plan = make_plan(s, a, b, o);
  return run_in_chunks(plan, chunk, [](const Plan& p) { return make_cpu_backend()->run(p); }, 2);
}

TEST(ExactSums, EngineSumsIgnoreThreadsPathAndChunks) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Weights over six decades, so that float64 sums would depend on the order.
  const auto weigh = [&](PointSet p) {
    std::uniform_real_distribution<double> e(-3.0, 3.0);
    std::vector<double> w(p.size());
    for (double& x : w) x = std::pow(10.0, e(rng));
    p.set_weights(std::move(w));
    std::vector<std::int32_t> labels(p.size());
    for (auto& l : labels) l = static_cast<std::int32_t>(rng() % 4);
    p.set_regions(std::move(labels));
    return p;
  };
  const PointSet A = weigh(to_pointset(uniform_points(1500, 3, 0, 20, rng)));
  const PointSet B = weigh(to_pointset(uniform_points(700, 3, 0, 20, rng)));
  Statistic h;
  h.reduction = reduce::Histogram{.bins = Binning::logarithmic(0.2, 6.0, 9), .regions = 4, .mean_separation = true};
  h.weighted = true;
  Statistic c;
  c.reduction = reduce::Count{Binning::from_edges({0.5, 3.0})};
  c.weighted = true;
  Statistic pp;
  pp.reduction = reduce::PerPoint{Binning::from_edges({0.0, 2.5})};
  pp.weighted = true;
  for (const Statistic* base : {&h, &c, &pp})
    for (Traversal t : {Traversal::Auto, Traversal::Cross}) {
      Statistic s = *base;
      s.traversal = t;
      const PointSet* b = t == Traversal::Auto ? nullptr : &B;
      const Floats one = floats(run_with(s, A, b, 1, "brute"));
      EXPECT_FALSE(one.weighted.empty() && one.point_a.empty());
      for (int threads : {2, 3})
        for (const char* path : {"brute", "grid"})
          EXPECT_TRUE(floats(run_with(s, A, b, threads, path)) == one) << threads << " threads, " << path;
      for (std::size_t chunk : {256, 333, 1000})
        EXPECT_TRUE(floats(chunked(s, A, b, chunk)) == one) << "chunks of " << chunk;
    }
}

TEST(ExactSums, WeightedHistogramWithinTheBoundOfTheExactSum) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const oracle::Points a = uniform_points(900, 3, -1e6, -1e6 + 30, rng, true);
  const std::vector<double> edges{0.0, 1.0, 2.5, 5.0, 10.0};
  Statistic s;
  s.reduction = reduce::Histogram{Binning::from_edges(edges)};
  s.weighted = true;
  const Result r = run_with(s, to_pointset(a), nullptr, 2, "auto");
  // The pairs' float64 products w_i w_j summed with 113 bits, over the float64 brute force's bins.
  std::vector<Quad> want(edges.size() - 1, 0);
  std::vector<std::uint64_t> counts(edges.size() - 1, 0);
  double wmax = 0;
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    wmax = std::max(wmax, a.w[i]);
    for (std::size_t j = i + 1; j < a.x.size(); ++j) {
      const int k = oracle::bin_of_d2(oracle::d2_open(a.x[i], a.x[j]), edges);
      if (k < 0) continue;
      ++counts[k];
      want[k] += static_cast<Quad>(a.w[i] * a.w[j]);
    }
  }
  EXPECT_EQ(r.counts, counts);
  ASSERT_EQ(r.weighted.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    // The grid's rounding (n B 2^−63) and the one rounding to float64.
    const double exact = static_cast<double>(want[k]);
    const double n = static_cast<double>(counts[k]);
    EXPECT_NEAR(r.weighted[k], exact, n * wmax * wmax * 0x1p-63 + std::abs(exact) * 0x1p-53) << k;
  }
}

}  // namespace
