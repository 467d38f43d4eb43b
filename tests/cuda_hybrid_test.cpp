// The hybrid backend with the real GPU (engine/hybrid_run.hpp): the CUDA backend takes bands from
// the heavy end of the queue, the CPU team from the light end, and the merged result must be the
// CPU-only run's bit for bit (tests/hybrid_test.cpp checks the same machinery with a fake GPU):
// joins (totals, per-vector counts, pairs in memory and through a sink) on the float64 kernel
// (d = 17) and the FP16 Gram tiles (d = 128), k-NN, and 3- and 8-D joins through the point
// engine's slab pairs; self and cross; Gaussian mixtures, lattices with pairs exactly at eps, duplicates;
// bands of 37 rows (not a multiple of the kernels' 64- and 128-row tiles) and the default. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <random>
#include <string>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::gaussian_mixture;
using testing_support::lattice_vectors;
using testing_support::on;
using testing_support::ScopedEnv;

namespace {

class CudaHybrid : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b;
  for (double x : v) b.push_back(std::bit_cast<std::uint64_t>(x));
  return b;
}

void expect_same(const Result& want, const Result& got, const std::string& what) {
  EXPECT_EQ(got.counts, want.counts) << what;
  EXPECT_EQ(got.per_point_a.counts, want.per_point_a.counts) << what;
  EXPECT_EQ(got.per_point_b.counts, want.per_point_b.counts) << what;
  ASSERT_EQ(got.pairs.size(), want.pairs.size()) << what;
  for (std::size_t t = 0; t < want.pairs.size(); ++t) {
    ASSERT_EQ(got.pairs[t].i, want.pairs[t].i) << what << " pair " << t;
    ASSERT_EQ(got.pairs[t].j, want.pairs[t].j) << what << " pair " << t;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(got.pairs[t].value), std::bit_cast<std::uint64_t>(want.pairs[t].value))
        << what << " pair " << t;
  }
  EXPECT_EQ(got.nearest.index, want.nearest.index) << what;
  EXPECT_EQ(bits(got.nearest.key), bits(want.nearest.key)) << what;
  EXPECT_EQ(bits(got.nearest.value), bits(want.nearest.value)) << what;
}

// The GPU worked, the report adds up, and the plan names the device.
void expect_gpu_share(const Result& r, const std::string& what) {
  ASSERT_EQ(r.info.backend, "hybrid") << what << "\n" << r.info.plan;
  ASSERT_EQ(r.info.workers.size(), 2u) << what << "\n" << r.info.plan;
  EXPECT_EQ(r.info.workers[0].name.rfind("cuda: ", 0), 0u) << r.info.workers[0].name;
  EXPECT_GE(r.info.workers[0].bands, 1u) << what << "\n" << r.info.plan;
  std::uint64_t pairs = 0;
  for (const WorkerShare& w : r.info.workers) pairs += w.pairs;
  EXPECT_EQ(pairs, r.info.pairs_evaluated) << what;
  EXPECT_GE(r.info.load_imbalance, 0.0) << what;
  EXPECT_LE(r.info.load_imbalance, 1.0) << what;
}

void expect_joins(const VectorSet& a, const VectorSet* b, double eps, const std::string& what) {
  JoinOptions o;
  o.eps = eps;
  for (const JoinOutput out : {JoinOutput::Total, JoinOutput::Counts, JoinOutput::Pairs}) {
    o.output = out;
    const Statistic s = join_statistic(b != nullptr, o);
    const std::string at = what + " " + to_string(s.output());
    const Result want = run(s, a, b, on("cpu"));
    const Result got = run(s, a, b, on("hybrid"));
    expect_same(want, got, at);
    expect_gpu_share(got, at);
  }
  o.output = JoinOutput::Pairs;
  const Statistic s = join_statistic(b != nullptr, o);
  RunOptions sunk = on("hybrid");
  std::vector<PairRecord> got;
  sunk.pair_sink = [&](std::span<const PairRecord> batch) {
    EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end(), pair_order)) << what;
    got.insert(got.end(), batch.begin(), batch.end());
  };
  Result r = run(s, a, b, sunk);
  std::sort(got.begin(), got.end(), pair_order);
  r.pairs = got;
  expect_same(run(s, a, b, on("cpu")), r, what + " through a pair sink");
}

void expect_knn(const VectorSet& a, const VectorSet* b, int k, const std::string& what) {
  const Statistic s = knn_statistic(b != nullptr, k, Metric::Euclidean);
  const Result got = run(s, a, b, on("hybrid"));
  expect_same(run(s, a, b, on("cpu")), got, what + " knn k=" + std::to_string(k));
  expect_gpu_share(got, what + " knn");
}

}  // namespace

TEST_F(CudaHybrid, JoinsOnTheFloat64KernelAndTheGramTilesEqualTheCpu) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const char* rows : std::vector<const char*>{"37", nullptr}) {
    std::optional<ScopedEnv> band;
    if (rows) band.emplace("TWOBODY_HYBRID_BAND_ROWS", rows);
    for (const int d : {17, 128}) {
      const std::string what = "d=" + std::to_string(d) + (rows ? " bands of 37 rows" : "") + " seed " + std::to_string(seed);
      const VectorSet a = gaussian_mixture(d == 128 ? 3000 : 5000, d, rng);
      const VectorSet b = gaussian_mixture(1200, d, rng);
      const double eps = testing_support::eps_for(a, Metric::Euclidean, 0.01, 1500);
      expect_joins(a, nullptr, eps, what + " self");
      expect_joins(a, &b, eps, what + " cross");
      const VectorSet lattice = lattice_vectors(2500, d, rng);
      expect_joins(lattice, nullptr, std::sqrt(std::floor(d / 2.0)), what + " lattice");
    }
  }
}

TEST_F(CudaHybrid, KnnEqualsTheCpu) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const ScopedEnv band("TWOBODY_HYBRID_BAND_ROWS", "37");
  for (const int d : {17, 128}) {
    const std::string what = "d=" + std::to_string(d) + " seed " + std::to_string(seed);
    const VectorSet a = gaussian_mixture(4000, d, rng);
    const VectorSet b = gaussian_mixture(1500, d, rng);
    for (const int k : {1, 10, 100}) {
      expect_knn(a, nullptr, k, what + " self");
      expect_knn(a, &b, k, what + " cross");
    }
    expect_knn(lattice_vectors(3000, d, rng), nullptr, 16, what + " lattice ties");
  }
  // A self-k-NN of k = 1024: a band's k + 1 would exceed the kernels' 1024, so the GPU takes no
  // bands of it and the CPU runs alone, saying why.
  const VectorSet small = gaussian_mixture(1100, 17, rng);
  const Statistic big_k = knn_statistic(false, 1024, Metric::Euclidean);
  const Result alone = run(big_k, small, nullptr, on("hybrid"));
  expect_same(run(big_k, small, nullptr, on("cpu")), alone, "k = 1024");
  EXPECT_EQ(alone.info.workers.size(), 1u) << alone.info.plan;
  EXPECT_NE(alone.info.plan.find("self-k-NN for k up to 1023"), std::string::npos) << alone.info.plan;
}

TEST_F(CudaHybrid, PointJoinsThroughSlabPairsEqualTheCpu) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const char* slabs : std::vector<const char*>{"7", nullptr}) {
    std::optional<ScopedEnv> cut;
    if (slabs) cut.emplace("TWOBODY_HYBRID_SLABS", slabs);
    for (const int d : {3, 8}) {
      // 3-D: a Gaussian mixture; 8-D: the seed's exponential set (HEGJoin's data, lambda = 40).
      const VectorSet a = d == 3 ? gaussian_mixture(60000, d, rng) : testing_support::exponential_vectors(60000, d, rng);
      const VectorSet b = d == 3 ? gaussian_mixture(20000, d, rng) : testing_support::exponential_vectors(20000, d, rng);
      const double eps = testing_support::eps_for(a, Metric::Euclidean, 0.001, 3000);
      const std::string what = std::to_string(d) + "-D" + (slabs ? " 7 slabs" : "") + " seed " + std::to_string(seed);
      expect_joins(a, nullptr, eps, what + " self");
      expect_joins(a, &b, eps, what + " cross");
    }
  }
}
