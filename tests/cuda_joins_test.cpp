// Joins over vectors on the CUDA backend against the CPU backend (itself tested against the
// float64 rule in joins_test.cpp): the same pairs, distances, counts and totals, bit for bit, on
// random, lattice, duplicate and float16 sets in d = 1 to 2 100. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::ScopedEnv;
using testing_support::eps_for;
using testing_support::on;
using testing_support::gaussian_mixture;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;

namespace {

class CudaJoins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

void expect_same_join(const VectorSet& a, const VectorSet* b, double eps, Metric m, const std::string& what) {
  for (JoinOutput out : {JoinOutput::Pairs, JoinOutput::Csr, JoinOutput::Counts, JoinOutput::Total}) {
    JoinOptions o;
    o.eps = eps;
    o.metric = m;
    o.output = out;
    const JoinResult cpu = similarity_join(a, b, o, on("cpu"));
    const JoinResult gpu = similarity_join(a, b, o, on("cuda"));
    ASSERT_EQ(gpu.info.backend, "cuda") << what;
    EXPECT_EQ(gpu.total, cpu.total) << what;
    ASSERT_EQ(gpu.pairs.size(), cpu.pairs.size()) << what;
    for (std::size_t t = 0; t < cpu.pairs.size(); ++t) {
      ASSERT_EQ(gpu.pairs[t].i, cpu.pairs[t].i) << what << " pair " << t;
      ASSERT_EQ(gpu.pairs[t].j, cpu.pairs[t].j) << what << " pair " << t;
      ASSERT_EQ(gpu.pairs[t].value, cpu.pairs[t].value) << what << " pair " << t;
    }
    EXPECT_EQ(gpu.indptr, cpu.indptr) << what;
    EXPECT_EQ(gpu.indices, cpu.indices) << what;
    EXPECT_EQ(gpu.distances, cpu.distances) << what;
    EXPECT_EQ(gpu.counts, cpu.counts) << what;
    EXPECT_EQ(gpu.counts_b, cpu.counts_b) << what;
  }
}

}  // namespace

TEST_F(CudaJoins, EqualTheCpuInEveryDimension) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 300 : 1500;
    const VectorSet a = gaussian_vectors(n, d, rng), b = gaussian_vectors(n / 3 + 5, d, rng);
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      const double eps = eps_for(a, m, 0.02);
      expect_same_join(a, nullptr, eps, m, "auto d=" + std::to_string(d));
      expect_same_join(a, &b, eps, m, "cross d=" + std::to_string(d));
    }
  }
}

TEST_F(CudaJoins, LatticesDuplicatesOffsetsAndHalfStorage) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {3, 17, 128}) {
    const VectorSet l = lattice_vectors(2000, d, rng);
    expect_same_join(l, nullptr, std::sqrt(static_cast<double>(std::max(1, d / 3))), Metric::Euclidean,
                     "lattice d=" + std::to_string(d));
  }
  std::vector<double> v;
  std::vector<double> r(40);
  const VectorSet base = gaussian_vectors(9, 40, rng);
  for (int c = 0; c < 300; ++c) {
    base.row_f64(rng() % 9, r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 300, 40);
  expect_same_join(dup, nullptr, 0.0, Metric::Euclidean, "duplicates eps 0");
  expect_same_join(dup, nullptr, 0.0, Metric::Cosine, "duplicates eps 0 cosine");
  const VectorSet far = gaussian_vectors(1200, 33, rng, 1e6);
  expect_same_join(far, nullptr, eps_for(far, Metric::Euclidean, 0.05), Metric::Euclidean, "offset 1e6");
  std::vector<std::uint16_t> h(1000 * 24);
  for (auto& x : h) x = static_cast<std::uint16_t>(0x3800 + (rng() % 0x0a00));  // halves in [0.5, 2.5)
  const VectorSet half = VectorSet::from_half_bits(h, 1000, 24);
  expect_same_join(half, nullptr, eps_for(half, Metric::Euclidean, 0.03), Metric::Euclidean, "float16");
}

TEST_F(CudaJoins, ManySlabsProgressAndCancellation) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // d = 9: above the point engine's 8 dimensions and below the Gram tiles' 16, so the float64
  // join kernel runs (the vector grid kept out: tests/cuda_vector_grid_test.cpp has its own), in
  // slabs of tiles with a progress call between them.
  const ScopedEnv no_grid("TWOBODY_VECTOR_GRID", "off");
  const VectorSet a = gaussian_vectors(40000, 9, rng);
  JoinOptions o;
  o.eps = 1.0;
  o.output = JoinOutput::Counts;
  RunOptions run = on("cuda");
  int calls = 0;
  run.progress = [&](double) { ++calls; };
  const JoinResult gpu = similarity_join(a, nullptr, o, run);
  EXPECT_GT(calls, 1);
  EXPECT_EQ(gpu.counts, similarity_join(a, nullptr, o, on("cpu")).counts);
  run.progress = [](double) { throw std::runtime_error("stop"); };
  EXPECT_THROW(similarity_join(a, nullptr, o, run), std::runtime_error);
  // The device is usable afterwards.
  o.output = JoinOutput::Total;
  EXPECT_EQ(similarity_join(a, nullptr, o, on("cuda")).total, gpu.total);
}

// The FP16 Gram tiles (gram_tiles.hpp): Euclidean totals and per-vector counts from d = 16 on,
// equal to the CPU's bit for bit whatever the data does to the tensor cores' rounding.
namespace {

// Counts and totals of the CUDA backend (which must have run the Gram tiles) against the CPU's;
// returns the plan of the last run.
std::string expect_same_gram_counts(const VectorSet& a, const VectorSet* b, double eps, const std::string& what) {
  std::string plan;
  for (JoinOutput out : {JoinOutput::Counts, JoinOutput::Total}) {
    JoinOptions o;
    o.eps = eps;
    o.output = out;
    const JoinResult cpu = similarity_join(a, b, o, on("cpu"));
    const JoinResult gpu = similarity_join(a, b, o, on("cuda"));
    EXPECT_NE(gpu.info.plan.find("FP16 Gram tiles"), std::string::npos) << what << "\n" << gpu.info.plan;
    EXPECT_EQ(gpu.total, cpu.total) << what;
    EXPECT_EQ(gpu.counts, cpu.counts) << what;
    EXPECT_EQ(gpu.counts_b, cpu.counts_b) << what;
    plan = gpu.info.plan;
  }
  return plan;
}

}  // namespace

TEST_F(CudaJoins, GramCountsEqualTheCpuOnMixtures) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 700 : 1500;
    // One mixture cut in two: the cross join's sets share clusters, so it has pairs.
    const VectorSet both = gaussian_mixture(n + n / 3 + 5, d, rng);
    const VectorSet a = both.slice(0, n), b = both.slice(n, n / 3 + 5);
    for (double fraction : {0.001, 0.05, 0.3}) {
      const double eps = eps_for(a, Metric::Euclidean, fraction);
      const std::string what = "d=" + std::to_string(d) + " fraction " + std::to_string(fraction);
      const std::string plan = expect_same_gram_counts(a, nullptr, eps, "auto " + what);
      std::cout << "auto " << what << ": " << plan.substr(std::min(plan.size(), plan.find("ran:"))) << "\n";
      expect_same_gram_counts(a, &b, eps, "cross " + what);
    }
  }
}

TEST_F(CudaJoins, GramCountsOnLatticesDuplicatesOffsetsAndHalves) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Keys are integers: many pairs exactly at eps², every one of them undecided and settled.
  for (int d : {16, 17, 128}) {
    const VectorSet l = lattice_vectors(1300, d, rng), l2 = lattice_vectors(300, d, rng);
    // A whole eps (eps² exact) about two standard deviations below the mean key 4d/3.
    const double eps = std::floor(std::sqrt(4.0 * d / 3 - 2 * std::sqrt(2.22 * d)));
    const std::string plan = expect_same_gram_counts(l, nullptr, eps, "lattice d=" + std::to_string(d));
    EXPECT_EQ(plan.find(" 0 undecided pairs"), std::string::npos) << "no pair at eps settled?\n" << plan;
    expect_same_gram_counts(l, &l2, eps, "lattice cross d=" + std::to_string(d));
  }
  // Duplicates: eps = 0 ([0, the smallest double)) and a tiny eps.
  std::vector<double> v, r(40);
  const VectorSet base = gaussian_vectors(9, 40, rng);
  for (int c = 0; c < 300; ++c) {
    base.row_f64(rng() % 9, r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 300, 40);
  expect_same_gram_counts(dup, nullptr, 0.0, "duplicates eps 0");
  expect_same_gram_counts(dup, nullptr, 1e-9, "duplicates eps 1e-9");
  // Offsets of 1e6 with unit spread: the centring keeps the FP16 rows' precision.
  const VectorSet far = gaussian_vectors(1200, 33, rng, 1e6), far2 = gaussian_vectors(200, 33, rng, 1e6);
  const double eps_far = eps_for(far, Metric::Euclidean, 0.05);
  expect_same_gram_counts(far, nullptr, eps_far, "offset 1e6");
  expect_same_gram_counts(far, &far2, eps_far, "offset 1e6 cross");
  // float16 storage, and (forced) below the automatic choice's smallest d.
  std::vector<std::uint16_t> h(1000 * 24);
  for (auto& x : h) x = static_cast<std::uint16_t>(0x3800 + (rng() % 0x0a00));  // halves in [0.5, 2.5)
  const VectorSet half = VectorSet::from_half_bits(h, 1000, 24);
  expect_same_gram_counts(half, nullptr, eps_for(half, Metric::Euclidean, 0.03), "float16");
  const ScopedEnv fp16("TWOBODY_VECTOR_PRECISION", "fp16");
  const VectorSet small = gaussian_vectors(900, 9, rng);
  expect_same_gram_counts(small, nullptr, eps_for(small, Metric::Euclidean, 0.03), "forced fp16 d=9");
}

TEST_F(CudaJoins, TheBoundInDistanceSpaceSettlesFewerPairsAndAgrees) {
  // Clusters far from the centre with eps inside them (gaussian_mixture: spreads 1 to 10^-3, centres
  // 4 apart a coordinate): the tiles on the bound in distance space (the default) and on E of the
  // norms (TWOBODY_GRAM_BOUND=norms) give the CPU's counts and pair lists; the first settles fewer.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv fp16("TWOBODY_VECTOR_PRECISION", "fp16"), no_grid("TWOBODY_VECTOR_GRID", "off");
  for (int d : {24, 128, 700}) {
    const VectorSet both = gaussian_mixture(1700, d, rng);
    const VectorSet a = both.slice(0, 1400), b = both.slice(1400, 300);
    const double eps = eps_for(a, Metric::Euclidean, 0.01);
    const std::string what = "d=" + std::to_string(d);
    JoinOptions o;
    o.eps = eps;
    o.output = JoinOutput::Total;
    const JoinResult first = similarity_join(a, nullptr, o, on("cuda"));
    const std::uint64_t settled = first.info.pairs_settled_fp64;
    // The settle queue's first look (the FP16 rows' distance in float64) decides some of them:
    // at d = 700 the tiles' band holds the MMAs' accumulation term, which the first look has not.
    std::cout << what << ": " << first.info.plan.substr(std::min(first.info.plan.size(), first.info.plan.find("ran:"))) << "\n";
    if (d == 700)
      EXPECT_NE(first.info.plan.find("by the FP16 rows' distance summed in float64"), std::string::npos) << first.info.plan;
    expect_same_gram_counts(a, nullptr, eps, "distance space " + what);
    expect_same_gram_counts(a, &b, eps, "distance space cross " + what);
    expect_same_join(a, &b, eps, Metric::Euclidean, "distance space cross " + what);
    const ScopedEnv norms("TWOBODY_GRAM_BOUND", "norms");
    const std::uint64_t settled_e = similarity_join(a, nullptr, o, on("cuda")).info.pairs_settled_fp64;
    expect_same_gram_counts(a, nullptr, eps, "norms " + what);
    expect_same_join(a, nullptr, eps, Metric::Euclidean, "norms " + what);
    std::cout << what << ": settled " << settled << " in distance space, " << settled_e << " on E\n";
    EXPECT_LT(settled, settled_e) << what;
  }
}

TEST_F(CudaJoins, PartialSumsGiveTheCpusCountsAndPairLists) {
  // The joins' tiles sum the MMAs in partials of F from d = 2 048 (TuningPolicy::gram_fold_for:
  // 32); TWOBODY_GRAM_FOLD=N forces N at every d (2: a fold every stage; 0: one accumulator).
  // Every choice gives the CPU's counts and pair lists: d = 300 (one fold, a short last partial
  // under 16), 1 100 (five partials of 16, two of 32 with a short last) and, under the default,
  // 2 100 (five partials of 32: the plan says so). How many pairs each settles is printed: on these
  // mixtures the band is the rows' rounding more than the accumulation (on the H200: 41 497 /
  // 41 449 / 41 497 at d = 300 under 16 / 2 / none); the benchmark's d = 4 096 set is where
  // partials settle fewer (43 M → 8.1 M under 32).
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv fp16("TWOBODY_VECTOR_PRECISION", "fp16"), no_grid("TWOBODY_VECTOR_GRID", "off");
  for (int d : {300, 1100, 2100}) {
    const std::size_t n = d > 2000 ? 700 : 1500;
    const VectorSet both = gaussian_mixture(n, d, rng);
    const VectorSet a = both.slice(0, n - 250), b = both.slice(n - 250, 250);
    const double eps = eps_for(a, Metric::Euclidean, 0.01);
    JoinOptions o;
    o.eps = eps;
    o.output = JoinOutput::Total;
    const std::vector<const char*> folds = d > 2000 ? std::vector<const char*>{nullptr, "2"}
                                                    : std::vector<const char*>{"16", "32", "2", "0"};
    for (const char* f : folds) {
      std::optional<ScopedEnv> fold;  // (f null: unset, the default policy)
      if (f) fold.emplace("TWOBODY_GRAM_FOLD", f);
      const std::string what = "d=" + std::to_string(d) + " fold " + (f ? f : "default");
      const JoinResult first = similarity_join(a, nullptr, o, on("cuda"));
      std::cout << what << ": settled " << first.info.pairs_settled_fp64 << "\n";
      if (!f) EXPECT_NE(first.info.plan.find("partials of 32 MMAs"), std::string::npos) << first.info.plan;
      if (f && std::string(f) == "0") EXPECT_EQ(first.info.plan.find("partials of"), std::string::npos) << first.info.plan;
      expect_same_gram_counts(a, nullptr, eps, what);
      expect_same_join(a, &b, eps, Metric::Euclidean, "cross " + what);
    }
  }
}

TEST_F(CudaJoins, GramCountsStayExactWithATinySettleQueue) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv queue("TWOBODY_GRAM_QUEUE_PAIRS", "3");
  const VectorSet l = lattice_vectors(1500, 32, rng), l2 = lattice_vectors(400, 32, rng);
  const std::string plan = expect_same_gram_counts(l, nullptr, 5.0, "lattice, queue of 3");
  EXPECT_NE(plan.find("inside the tiles"), std::string::npos) << plan;
  expect_same_gram_counts(l, &l2, 5.0, "lattice cross, queue of 3");
}

TEST_F(CudaJoins, GramCountsOfARangeAboveZero) {
  // A count over [lo, hi) with lo > 0 (not a join's range): both edges settled, lo exactly on keys.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet l = lattice_vectors(1200, 20, rng);
  for (bool per_point : {false, true}) {
    Statistic s;
    s.metric = Metric::Euclidean;
    const Binning range = Binning::from_edges({3.0, 5.0});  // keys [9, 25)
    if (per_point)
      s.reduction = reduce::PerPoint{range};
    else
      s.reduction = reduce::Count{range};
    const Result cpu = twobody::run(s, l, nullptr, on("cpu"));
    const Result gpu = twobody::run(s, l, nullptr, on("cuda"));
    EXPECT_NE(gpu.info.plan.find("FP16 Gram tiles"), std::string::npos) << gpu.info.plan;
    EXPECT_EQ(gpu.counts, cpu.counts);
    EXPECT_EQ(gpu.per_point_a.counts, cpu.per_point_a.counts);
  }
}

TEST_F(CudaJoins, VectorPrecisionPolicyChoosesTheKernel) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(500, 64, rng);
  JoinOptions o;
  o.eps = eps_for(a, Metric::Euclidean, 0.02);
  o.output = JoinOutput::Total;
  const JoinResult cpu = similarity_join(a, nullptr, o, on("cpu"));
  {
    const ScopedEnv fp64("TWOBODY_VECTOR_PRECISION", "fp64");
    const JoinResult gpu = similarity_join(a, nullptr, o, on("cuda"));
    EXPECT_NE(gpu.info.plan.find("float64 join kernel (TWOBODY_VECTOR_PRECISION=fp64)"), std::string::npos) << gpu.info.plan;
    EXPECT_EQ(gpu.total, cpu.total);
  }
  // Pair lists take the Gram tiles, for the cosine distance too (tests/cuda_gram_cosine_test.cpp).
  o.output = JoinOutput::Pairs;
  const JoinResult pairs = similarity_join(a, nullptr, o, on("cuda"));
  EXPECT_NE(pairs.info.plan.find("FP16 Gram tiles on the tensor cores, pair list"), std::string::npos) << pairs.info.plan;
  o.metric = Metric::Cosine;
  o.eps = eps_for(a, Metric::Cosine, 0.02);
  const JoinResult cosine = similarity_join(a, nullptr, o, on("cuda"));
  EXPECT_NE(cosine.info.plan.find("FP16 Gram tiles on the tensor cores, pair list"), std::string::npos) << cosine.info.plan;
  EXPECT_EQ(cosine.pairs.size(), similarity_join(a, nullptr, o, on("cpu")).pairs.size());
  o.metric = Metric::Euclidean;
  // Rows beyond the FP16 path's range fall back to the float64 kernel, exact all the same.
  std::vector<double> v(300 * 20);
  for (std::size_t t = 0; t < v.size(); ++t) v[t] = t % 20 == 0 ? 1e15 * static_cast<double>(t % 3) : 0.5 * static_cast<double>(rng() % 4);
  const VectorSet wide = VectorSet::from_rows(std::move(v), 300, 20);
  o.output = JoinOutput::Total;
  o.eps = 1.5;
  const JoinResult w = similarity_join(wide, nullptr, o, on("cuda"));
  EXPECT_NE(w.info.plan.find("outside [2^-40, 2^40]"), std::string::npos) << w.info.plan;
  EXPECT_EQ(w.total, similarity_join(wide, nullptr, o, on("cpu")).total);
}

TEST_F(CudaJoins, GramTilesAgainstTheFloat64KernelOnALargerSet) {
  // Both GPU kernels on 60000 vectors of d = 128 (1.8e9 pairs): the same total, and their times
  // printed (the plan's kernel seconds) for the record. Gaussian rows: the distances within 1% of
  // eps sit far above FP16's bound, so few pairs are settled (tight clusters far from the centre,
  // as in gaussian_mixture, leave most of their close pairs to the rule: exact, slower).
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(60000, 128, rng);
  JoinOptions o;
  o.eps = eps_for(a.slice(0, 3000), Metric::Euclidean, 0.01);
  o.output = JoinOutput::Total;
  const JoinResult gram = similarity_join(a, nullptr, o, on("cuda"));
  EXPECT_NE(gram.info.plan.find("FP16 Gram tiles"), std::string::npos) << gram.info.plan;
  const ScopedEnv fp64("TWOBODY_VECTOR_PRECISION", "fp64");
  const JoinResult exact = similarity_join(a, nullptr, o, on("cuda"));
  EXPECT_EQ(gram.total, exact.total);
  std::cout << "60000 x 128, " << gram.total << " pairs\n  " << gram.info.plan.substr(std::min(gram.info.plan.size(), gram.info.plan.find("ran:")))
            << "\n  " << exact.info.plan.substr(std::min(exact.info.plan.size(), exact.info.plan.find("ran:"))) << "\n";
}
