// Pair lists of joins over vectors on the CUDA backend: the FP16 Gram tiles' pairs (gram_pairs.cu)
// and the float64 kernel's, against the CPU's bit for bit (i, j, distance); a tiny forced buffer
// that makes the tiles stop and resume many times; RunOptions::pair_sink's sorted batches;
// max_pairs; cancellation through progress. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::ScopedEnv;
using testing_support::on;
using testing_support::fresh_seed;
using testing_support::gaussian_mixture;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;

namespace {

class CudaJoinPairs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

const char* const kGramPairs = "FP16 Gram tiles on the tensor cores, pair list";

// eps with about `fraction` of the Euclidean pairs within it (of the first 2000 vectors).
double eps_for(const VectorSet& v, double fraction) {
  return testing_support::eps_for(v, Metric::Euclidean, fraction, 2000);
}

// The join's pair list as a statistic (so that RunOptions reach the backend whole).
Statistic pair_list(double eps, Metric m = Metric::Euclidean, bool cross = false) {
  Statistic s;
  s.metric = m;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.reduction = reduce::PairList{Binning::from_edges({0.0, eps > 0 ? eps : 4.9406564584124654e-324}), true};
  return s;
}

void expect_same_pairs(const std::vector<PairRecord>& gpu, const std::vector<PairRecord>& cpu, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (std::size_t t = 0; t < cpu.size(); ++t) {
    ASSERT_EQ(gpu[t].i, cpu[t].i) << what << " pair " << t;
    ASSERT_EQ(gpu[t].j, cpu[t].j) << what << " pair " << t;
    ASSERT_EQ(gpu[t].value, cpu[t].value) << what << " pair " << t;
  }
}

// The CUDA backend's pairs (which must come from the Gram tiles when `gram`) against the CPU's;
// returns the GPU run's plan.
std::string expect_same_join_pairs(const VectorSet& a, const VectorSet* b, double eps, const std::string& what,
                                   bool gram = true) {
  const Statistic s = pair_list(eps, Metric::Euclidean, b != nullptr);
  const Result cpu = twobody::run(s, a, b, on("cpu"));
  const Result gpu = twobody::run(s, a, b, on("cuda"));
  EXPECT_EQ(gpu.info.backend, "cuda") << what;
  if (gram) EXPECT_NE(gpu.info.plan.find(kGramPairs), std::string::npos) << what << "\n" << gpu.info.plan;
  expect_same_pairs(gpu.pairs, cpu.pairs, what);
  return gpu.info.plan;
}

// The settled count in a Gram pair list's plan ("... pair list: N undecided pairs settled").
std::uint64_t settled_in(const std::string& plan) {
  const std::size_t at = plan.find("pair list: ");
  return at == std::string::npos ? 0 : std::strtoull(plan.c_str() + at + 11, nullptr, 10);
}

bool by_ij(const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; }

}  // namespace

TEST_F(CudaJoinPairs, GramPairsEqualTheCpuOnMixtures) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 700 : 1500;
    // One mixture cut in two: the cross join's sets share clusters, so it has pairs.
    const VectorSet both = gaussian_mixture(n + n / 3 + 5, d, rng);
    const VectorSet a = both.slice(0, n), b = both.slice(n, n / 3 + 5);
    for (double fraction : {0.001, 0.05, 0.3}) {
      const double eps = eps_for(a, fraction);
      const std::string what = "d=" + std::to_string(d) + " fraction " + std::to_string(fraction);
      expect_same_join_pairs(a, nullptr, eps, "auto " + what);
      expect_same_join_pairs(a, &b, eps, "cross " + what);
    }
  }
}

TEST_F(CudaJoinPairs, GramPairsOnLatticesDuplicatesAndOffsets) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Keys are integers: many pairs exactly at eps², every one of them undecided and settled.
  for (int d : {16, 17, 128}) {
    const VectorSet l = lattice_vectors(1300, d, rng), l2 = lattice_vectors(300, d, rng);
    const double eps = std::floor(std::sqrt(4.0 * d / 3 - 2 * std::sqrt(2.22 * d)));
    const std::string plan = expect_same_join_pairs(l, nullptr, eps, "lattice d=" + std::to_string(d));
    EXPECT_GT(settled_in(plan), 0u) << "no pair at eps settled?\n" << plan;
    expect_same_join_pairs(l, &l2, eps, "lattice cross d=" + std::to_string(d));
  }
  // Duplicates at eps = 0 ([0, the smallest double]) and a tiny eps.
  std::vector<double> v, r(40);
  const VectorSet base = gaussian_vectors(9, 40, rng);
  for (int c = 0; c < 300; ++c) {
    base.row_f64(rng() % 9, r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 300, 40);
  expect_same_join_pairs(dup, nullptr, 0.0, "duplicates eps 0");
  expect_same_join_pairs(dup, nullptr, 1e-9, "duplicates eps 1e-9");
  // Offsets of 1e6 with unit spread.
  const VectorSet far = gaussian_vectors(1200, 33, rng, 1e6), far2 = gaussian_vectors(200, 33, rng, 1e6);
  const double eps_far = eps_for(far, 0.05);
  expect_same_join_pairs(far, nullptr, eps_far, "offset 1e6");
  expect_same_join_pairs(far, &far2, eps_far, "offset 1e6 cross");
}

TEST_F(CudaJoinPairs, TinyBuffersGiveEveryPairOnce) {
  // The buffer fills again and again: warps stop mid-tile and resume after the pairs they wrote.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet l = lattice_vectors(600, 32, rng), l2 = lattice_vectors(250, 32, rng);
  const VectorSet mix = gaussian_mixture(2000, 48, rng);
  const double eps_mix = eps_for(mix, 0.02);
  for (const char* size : {"1", "7", "1000"}) {
    const ScopedEnv buffer("TWOBODY_GRAM_PAIR_BUFFER", size);
    const std::string what = std::string("buffer of ") + size;
    const std::string plan = expect_same_join_pairs(l, nullptr, 5.0, "lattice, " + what);
    EXPECT_EQ(plan.find("(0 resuming"), std::string::npos) << "the buffer never filled?\n" << plan;
    EXPECT_NE(plan.find("a Gram pair buffer of " + std::string(size) + " pairs"), std::string::npos) << plan;
    expect_same_join_pairs(l, &l2, 5.0, "lattice cross, " + what);
    if (std::string(size) != "1") expect_same_join_pairs(mix, nullptr, eps_mix, "mixture, " + what);
  }
}

TEST_F(CudaJoinPairs, PairSinkReceivesSortedBatchesOfTheWholeList) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // One mixture cut in two, so that the cross join has pairs (two mixtures' clusters lie apart).
  const VectorSet both = gaussian_mixture(3900, 40, rng);
  const VectorSet a = both.slice(0, 3000), b = both.slice(3000, 900);
  const double eps = eps_for(a, 0.03);
  // The Gram tiles with a buffer that fills (many batches), then the float64 kernel: Euclidean
  // forced (TWOBODY_VECTOR_PRECISION=fp64), and cosine, on a set of 20000 so that it has several slabs.
  const VectorSet big = gaussian_vectors(20000, 12, rng);
  struct Case {
    const char* what;
    const VectorSet* a;
    const VectorSet* b;
    Statistic s;
    const char* env;
    const char* value;
  };
  const std::vector<Case> cases = {
      {"gram auto", &a, nullptr, pair_list(eps), "TWOBODY_GRAM_PAIR_BUFFER", "5000"},
      {"gram cross", &a, &b, pair_list(eps, Metric::Euclidean, true), "TWOBODY_GRAM_PAIR_BUFFER", "5000"},
      {"float64 euclidean", &big, nullptr, pair_list(eps_for(big, 0.0005)), "TWOBODY_VECTOR_PRECISION", "fp64"},
      {"float64 cosine", &big, nullptr, pair_list(0.2, Metric::Cosine), "TWOBODY_VECTOR_PRECISION", "auto"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const ScopedEnv env(c.env, c.value);
    const Result cpu = twobody::run(c.s, *c.a, c.b, on("cpu"));
    const Result whole = twobody::run(c.s, *c.a, c.b, on("cuda"));
    expect_same_pairs(whole.pairs, cpu.pairs, std::string(c.what) + " in memory");
    RunOptions o = on("cuda");
    std::vector<PairRecord> streamed;
    std::size_t batches = 0;
    o.pair_sink = [&](std::span<const PairRecord> batch) {
      ++batches;
      EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end(), by_ij)) << "batch " << batches;
      streamed.insert(streamed.end(), batch.begin(), batch.end());
    };
    const Result sunk = twobody::run(c.s, *c.a, c.b, o);
    EXPECT_TRUE(sunk.pairs.empty());
    EXPECT_NE(sunk.info.plan.find("batches to the pair sink"), std::string::npos) << sunk.info.plan;
    EXPECT_GT(batches, 1u) << sunk.info.plan;
    std::sort(streamed.begin(), streamed.end(), by_ij);
    expect_same_pairs(streamed, cpu.pairs, std::string(c.what) + " streamed");
  }
}

TEST_F(CudaJoinPairs, MaxPairsIsRefused) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_mixture(1500, 32, rng);
  const Statistic s = pair_list(eps_for(a, 0.05));
  const std::size_t n = twobody::run(s, a, nullptr, on("cpu")).pairs.size();
  ASSERT_GT(n, 10u);
  for (const char* precision : {"auto", "fp64"}) {
    SCOPED_TRACE(precision);
    const ScopedEnv env("TWOBODY_VECTOR_PRECISION", precision);
    const ScopedEnv buffer("TWOBODY_GRAM_PAIR_BUFFER", "300");
    RunOptions o = on("cuda");
    o.max_pairs = n;
    EXPECT_EQ(twobody::run(s, a, nullptr, o).pairs.size(), n);
    o.max_pairs = n - 1;
    expect_error(ErrorKind::Resource, "exceeds the limit", [&] { twobody::run(s, a, nullptr, o); });
    o.pair_sink = [](std::span<const PairRecord>) {};
    expect_error(ErrorKind::Resource, "exceeds the limit", [&] { twobody::run(s, a, nullptr, o); });
  }
}

TEST_F(CudaJoinPairs, ProgressAndCancellation) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 40000 vectors: 313 tile rows of 128, several slabs of Gram tiles.
  const VectorSet a = gaussian_vectors(40000, 16, rng);
  const Statistic s = pair_list(eps_for(a, 0.0002));
  RunOptions o = on("cuda");
  int calls = 0;
  o.progress = [&](double) { ++calls; };
  const Result gram = twobody::run(s, a, nullptr, o);
  EXPECT_NE(gram.info.plan.find(kGramPairs), std::string::npos) << gram.info.plan;
  EXPECT_GT(calls, 1);
  o.progress = [](double) { throw std::runtime_error("stop"); };
  EXPECT_THROW(twobody::run(s, a, nullptr, o), std::runtime_error);
  o.pair_sink = [](std::span<const PairRecord>) {};
  EXPECT_THROW(twobody::run(s, a, nullptr, o), std::runtime_error);
  // The device is usable afterwards, and the float64 kernel lists the same pairs.
  const ScopedEnv fp64("TWOBODY_VECTOR_PRECISION", "fp64");
  const Result exact = twobody::run(s, a, nullptr, on("cuda"));
  EXPECT_NE(exact.info.plan.find("float64 join kernel"), std::string::npos) << exact.info.plan;
  expect_same_pairs(gram.pairs, exact.pairs, "Gram tiles against the float64 kernel");
}
