// The precision of a GPU join over vectors (src/cuda/vector_choice.hpp) without a GPU: the
// sample's undecided fraction against an independent count, the cost model's constants, and the
// choices — float64 when ε is far below what FP16 resolves at the rows' norms, FP16 on ordinary
// data, and the GPU suite's Gram cases kept on the Gram tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_choice.hpp"
#include "twobody/error.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

namespace twobody::cuda {
namespace {

using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;

constexpr int kThreads = 2;

// Keys in [0, eps], as a join asks (the last edge the next double above eps²).
PrecisionChoice choose_join(const VectorSet& a, const VectorSet* b, double eps, const TuningPolicy& p = {}) {
  return choose_precision(a, b, 0.0, std::nextafter(eps * eps, HUGE_VAL), Metric::Euclidean, p, kThreads);
}

// Two clusters 2000 apart with a spread of 10^-3: the pairs within a cluster are 10^-3 apart
// while FP16's bound at norms of 1000 is about 10^3 (in squared distance).
VectorSet far_clusters(std::size_t n, int d, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1e-3);
  std::vector<double> v(n * static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < d; ++k) v[i * static_cast<std::size_t>(d) + static_cast<std::size_t>(k)] = (k == 0 ? (i % 2 ? 1e3 : -1e3) : 0.0) + g(rng);
  return VectorSet::from_rows(std::move(v), n, d);
}

}  // namespace

TEST(VectorChoice, CostModelFollowsTheMeasurements) {
  const TuningPolicy p;
  EXPECT_DOUBLE_EQ(fp64_pair_seconds(p, 128), 128 / 2.0e12);
  EXPECT_DOUBLE_EQ(fp64_pair_seconds(p, 960), 960 / 8.5e11);
  EXPECT_DOUBLE_EQ(fp64_pair_seconds(p, 16), 16 / 2.0e12);
  EXPECT_LT(fp64_pair_seconds(p, 128), fp64_pair_seconds(p, 384));
  EXPECT_LT(fp64_pair_seconds(p, 384), fp64_pair_seconds(p, 960));
  EXPECT_DOUBLE_EQ(gram_pair_seconds(p, 128), 1 / 3.9e11);
  EXPECT_DOUBLE_EQ(gram_pair_seconds(p, 16), 1 / 3.9e11);
  EXPECT_DOUBLE_EQ(gram_pair_seconds(p, 960), 7.5 / 3.9e11);
  EXPECT_DOUBLE_EQ(settle_pair_seconds(p, 128), 16.0 * 128 / 3e12);
  // The break-even undecided fraction at d = 128: about 9%.
  const double f = (fp64_pair_seconds(p, 128) - gram_pair_seconds(p, 128)) / settle_pair_seconds(p, 128);
  EXPECT_GT(f, 0.08);
  EXPECT_LT(f, 0.10);
}

TEST(VectorChoice, TinyEpsFarBelowTheNormsChoosesFloat64) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = far_clusters(std::size_t(1) << 14, 32, rng);  // 1.3e8 pairs: sampled
  const PrecisionChoice c = choose_join(a, nullptr, 0.01);
  EXPECT_TRUE(c.sampled) << c.why;
  EXPECT_FALSE(c.gram) << c.why;
  // Every pair within a cluster (half of them) is undecided, none across.
  EXPECT_GT(c.undecided_fraction, 0.45) << c.why;
  EXPECT_LT(c.undecided_fraction, 0.55) << c.why;
  EXPECT_GT(c.seconds_gram, c.seconds_fp64);
  EXPECT_NE(c.why.find("undecided"), std::string::npos);
  // Cross: the same.
  const VectorSet b = far_clusters(std::size_t(1) << 13, 32, rng);
  const PrecisionChoice x = choose_join(a, &b, 0.01);
  EXPECT_TRUE(x.sampled);
  EXPECT_FALSE(x.gram) << x.why;
}

TEST(VectorChoice, OrdinaryDataChoosesFp16) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Unit Gaussians in d = 128: keys about 256 ± 32; eps² = 181 holds about 1% of the pairs, and
  // the bound (about 0.26) leaves a few in 10^4 undecided.
  const VectorSet a = gaussian_vectors(std::size_t(1) << 14, 128, rng);
  const PrecisionChoice c = choose_join(a, nullptr, std::sqrt(181.0));
  EXPECT_TRUE(c.sampled) << c.why;
  EXPECT_TRUE(c.gram) << c.why;
  EXPECT_LT(c.undecided_fraction, 1e-2) << c.why;
  EXPECT_LT(c.seconds_gram, c.seconds_fp64 / 5) << c.why;
  // The sample is bounded by the host's budget: 128 queries x 4096 partners at d = 128.
  EXPECT_EQ(c.sample_queries, 128);
  EXPECT_EQ(c.sample_partners, 4096);
  EXPECT_GE(c.sample_pairs, 128u * 4096u - 128u);  // (a row is never paired with itself)
  EXPECT_LE(c.sample_pairs, 128u * 4096u);
  // Deterministic: the same sample, the same count.
  const PrecisionChoice again = choose_join(a, nullptr, std::sqrt(181.0));
  EXPECT_EQ(again.sample_pairs, c.sample_pairs);
  EXPECT_EQ(again.sample_undecided, c.sample_undecided);
}

TEST(VectorChoice, UndecidedFractionMatchesAnIndependentCountAtBothEdges) {
  // Integer keys (coordinates in {0, 1, 2}) and a bound below 1: exactly the pairs with key 9 or
  // 25 are undecided for the range [3, 5) (keys [9, 25)); their share of all pairs, counted by
  // brute force on 1500 rows, against the sample's.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int d = 20;
  const VectorSet l = lattice_vectors(12000, d, rng);  // 7.2e7 pairs: sampled
  const PrecisionChoice c = choose_precision(l, nullptr, 9.0, 25.0, Metric::Euclidean, TuningPolicy{}, kThreads);
  ASSERT_TRUE(c.sampled) << c.why;
  std::vector<double> x(d), y(d);
  std::uint64_t all = 0, at_edges = 0;
  for (std::size_t i = 0; i < 1500; ++i) {
    l.row_f64(i, x.data());
    for (std::size_t j = i + 1; j < 1500; ++j) {
      l.row_f64(j, y.data());
      double key = 0;
      for (int k = 0; k < d; ++k) key += (x[k] - y[k]) * (x[k] - y[k]);
      ++all;
      at_edges += key == 9 || key == 25;
    }
  }
  const double expected = static_cast<double>(at_edges) / static_cast<double>(all);
  ASSERT_GT(expected, 0.01);
  EXPECT_NEAR(c.undecided_fraction, expected, 0.15 * expected) << c.why;
  // The upper edge only (a join's range [0, 5]: keys <= 25).
  const PrecisionChoice hi = choose_join(l, nullptr, 5.0);
  EXPECT_LT(hi.undecided_fraction, c.undecided_fraction);
  EXPECT_GT(hi.undecided_fraction, 0.0);
}

TEST(VectorChoice, CosineJoinsChooseByTheirOwnBound) {
  // The cosine distance's keys in [-1, eps] (the planner's range from 0): unit Gaussians in d = 128
  // have keys about 1 ± 0.09 and the cosine bound (about 1e-3 in key) leaves few undecided: FP16.
  // A large common component makes every pair nearly parallel (keys about 1e-6), all within the
  // bound of eps = 1e-6: float64.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto cosine_join = [](const VectorSet& a, const VectorSet* b, double eps) {
    return choose_precision(a, b, -1.0, std::nextafter(eps, HUGE_VAL), Metric::Cosine, TuningPolicy{}, kThreads);
  };
  const VectorSet a = gaussian_vectors(std::size_t(1) << 14, 128, rng);
  const PrecisionChoice c = cosine_join(a, nullptr, 0.8);
  EXPECT_TRUE(c.sampled) << c.why;
  EXPECT_TRUE(c.gram) << c.why;
  EXPECT_GT(c.undecided_fraction, 0.0) << c.why;
  EXPECT_LT(c.undecided_fraction, 1e-2) << c.why;
  const VectorSet near = gaussian_vectors(std::size_t(1) << 14, 128, rng, 1e3);
  const PrecisionChoice n = cosine_join(near, nullptr, 1e-6);
  EXPECT_TRUE(n.sampled) << n.why;
  EXPECT_FALSE(n.gram) << n.why;
  EXPECT_GT(n.undecided_fraction, 0.9) << n.why;
  const VectorSet b = gaussian_vectors(std::size_t(1) << 13, 128, rng, 1e3);
  EXPECT_FALSE(cosine_join(near, &b, 1e-6).gram);
}

TEST(VectorChoice, ForcedLowDimensionAndSmallJoins) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet big = gaussian_vectors(std::size_t(1) << 14, 12, rng), small = gaussian_vectors(2000, 64, rng);
  TuningPolicy p;
  EXPECT_FALSE(choose_join(big, nullptr, 1.0, p).gram);
  EXPECT_NE(choose_join(big, nullptr, 1.0, p).why.find("d = 12 < 16"), std::string::npos);
  const PrecisionChoice s = choose_join(small, nullptr, 1.0, p);
  EXPECT_TRUE(s.gram);
  EXPECT_FALSE(s.sampled);
  EXPECT_NE(s.why.find("too few for a sample"), std::string::npos) << s.why;
  p.vector_precision = TuningPolicy::VectorPrecision::Fp16;
  EXPECT_TRUE(choose_join(big, nullptr, 1.0, p).gram);
  p.vector_precision = TuningPolicy::VectorPrecision::Fp64;
  EXPECT_FALSE(choose_join(small, nullptr, 1.0, p).gram);
  // Rows far out of the FP16 path's range make every sampled pair of theirs undecided.
  std::vector<double> v(std::size_t(1) << 19);
  for (std::size_t t = 0; t < v.size(); ++t) v[t] = t % 32 == 0 ? 1e15 * static_cast<double>(t % 3) : 0.5 * static_cast<double>(t % 7);
  const VectorSet wide = VectorSet::from_rows(std::move(v), std::size_t(1) << 14, 32);
  const PrecisionChoice w = choose_join(wide, nullptr, 1.5);
  EXPECT_TRUE(w.sampled);
  EXPECT_FALSE(w.gram) << w.why;
}

TEST(VectorChoice, TheRunsPrecisionIsChecked) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(300, 20, rng);
  JoinOptions o;
  o.eps = 3;
  o.output = JoinOutput::Total;
  RunOptions run;
  run.backend = "cpu";
  const std::uint64_t total = similarity_join(a, nullptr, o, run).total;
  for (const char* p : {"auto", "fp16", "fp64"}) {
    run.precision = p;
    EXPECT_EQ(similarity_join(a, nullptr, o, run).total, total) << p;  // (the CPU's arithmetic is the rule's)
  }
  run.precision = "fp32";
  testing_support::expect_error(ErrorKind::Config, "unknown precision 'fp32'", [&] { similarity_join(a, nullptr, o, run); });
}

TEST(VectorChoice, TheGpuSuitesGramCasesStayOnTheGramTiles) {
  // The sampled sizes among tests/cuda_joins_test.cpp's and cuda_join_pairs_test.cpp's cases that
  // must run on the Gram tiles (the others have fewer pairs than a sample needs).
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = gaussian_vectors(60000, 128, rng);
  const double eps = testing_support::eps_for(a.slice(0, 3000), Metric::Euclidean, 0.01);
  const PrecisionChoice c = choose_join(a, nullptr, eps);
  EXPECT_TRUE(c.sampled);
  EXPECT_TRUE(c.gram) << c.why;
  const VectorSet p = gaussian_vectors(40000, 16, rng);
  const PrecisionChoice q = choose_join(p, nullptr, testing_support::eps_for(p, Metric::Euclidean, 0.0002, 2000));
  EXPECT_TRUE(q.sampled);
  EXPECT_TRUE(q.gram) << q.why;
}

}  // namespace twobody::cuda
