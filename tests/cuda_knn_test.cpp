// k nearest neighbours on the CUDA backend against the CPU backend (itself tested against the
// float64 rule in joins_test.cpp): the same partner indices, keys and distances, bit for bit, for
// k from 1 to 1024 (and k = every partner there is), self and cross, Euclidean and cosine, on
// Gaussian mixtures, lattices (massive ties: broken by index), duplicates, offsets of 10^6 and
// float16 storage in d = 1 to 960; progress, cancellation and slabs. From d = 16 the runs (both
// metrics) take the FP16 Gram tiles (cuda_gram_knn_test.cpp and cuda_gram_cosine_test.cpp test
// that path's own cases), below it the float64 kernel. Label: gpu.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::ScopedEnv;
using testing_support::on;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;

namespace {

class CudaKnn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

// n vectors about `clusters` centres drawn from N(0, 1), each centre + N(0, spread^2).
VectorSet mixture_vectors(std::size_t n, int d, int clusters, double spread, std::mt19937_64& rng) {
  const VectorSet centres = gaussian_vectors(static_cast<std::size_t>(clusters), d, rng);
  std::normal_distribution<double> g(0.0, spread);
  std::vector<double> v(n * static_cast<std::size_t>(d)), c(static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < n; ++i) {
    centres.row_f64(rng() % static_cast<std::size_t>(clusters), c.data());
    for (std::size_t k = 0; k < c.size(); ++k) v[i * c.size() + k] = c[k] + g(rng);
  }
  return VectorSet::from_rows(std::move(v), n, d);
}

// The same lists on both backends, keys and values compared bit for bit.
void expect_same_knn(const VectorSet& a, const VectorSet* b, int k, Metric m, const std::string& what,
                     const RunOptions& gpu_run = on("cuda")) {
  const Statistic s = knn_statistic(b != nullptr, k, m);
  // The CPU's brute force: its lists are the EGO trees' too (CPU tests), and its count of pairs is
  // the GPU's (the trees evaluate fewer).
  RunOptions brute = on("cpu");
  brute.path = "brute";
  const Result cpu = run(s, a, b, brute);
  const Result gpu = run(s, a, b, gpu_run);
  const std::string where = what + " k=" + std::to_string(k) + (m == Metric::Cosine ? " cosine" : " euclidean");
  ASSERT_EQ(gpu.info.backend, "cuda") << where << "\n" << gpu.info.plan;
  ASSERT_EQ(gpu.nearest.k, k) << where;
  ASSERT_EQ(gpu.nearest.index.size(), a.size() * static_cast<std::size_t>(k)) << where;
  ASSERT_EQ(gpu.nearest.key.size(), cpu.nearest.key.size()) << where;
  ASSERT_EQ(gpu.nearest.value.size(), cpu.nearest.value.size()) << where;
  for (std::size_t t = 0; t < cpu.nearest.index.size(); ++t) {
    const std::string at = where + " query " + std::to_string(t / static_cast<std::size_t>(k)) + " rank " +
                           std::to_string(t % static_cast<std::size_t>(k));
    ASSERT_EQ(gpu.nearest.index[t], cpu.nearest.index[t]) << at;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(gpu.nearest.key[t]), std::bit_cast<std::uint64_t>(cpu.nearest.key[t]))
        << at << ": " << gpu.nearest.key[t] << " vs " << cpu.nearest.key[t];
    ASSERT_EQ(std::bit_cast<std::uint64_t>(gpu.nearest.value[t]), std::bit_cast<std::uint64_t>(cpu.nearest.value[t]))
        << at;
  }
  EXPECT_EQ(gpu.info.pairs_evaluated, cpu.info.pairs_evaluated) << where;
}

// Every k of the suite that the sets allow, and k = every partner a query has.
void expect_same_for_every_k(const VectorSet& a, const VectorSet* b, Metric m, const std::string& what) {
  const std::size_t partners = b ? b->size() : a.size() - 1;
  for (int k : {1, 10, 64, 65, 1024})
    if (static_cast<std::size_t>(k) <= partners) expect_same_knn(a, b, k, m, what);
  if (partners <= 1024) expect_same_knn(a, b, static_cast<int>(partners), m, what + " (every partner)");
}

}  // namespace

TEST_F(CudaKnn, EqualsTheCpuInEveryDimension) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 300 : 1500;
    const VectorSet a = mixture_vectors(n, d, 7, 0.2, rng), b = mixture_vectors(1100, d, 5, 0.3, rng);
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      expect_same_for_every_k(a, nullptr, m, "mixture self d=" + std::to_string(d));
      expect_same_for_every_k(a, &b, m, "mixture cross d=" + std::to_string(d));
    }
  }
}

TEST_F(CudaKnn, LatticesBreakTiesByIndex) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 3, 17, 128}) {
    const VectorSet l = lattice_vectors(2000, d, rng);
    expect_same_for_every_k(l, nullptr, Metric::Euclidean, "lattice d=" + std::to_string(d));
    const VectorSet q = lattice_vectors(700, d, rng);
    expect_same_knn(q, &l, 1024, Metric::Euclidean, "lattice cross d=" + std::to_string(d));
    // Coordinates in {1, 2, 3} for the cosine distance (no zero rows): parallel rows tie.
    std::vector<double> v(2000 * static_cast<std::size_t>(d)), r(static_cast<std::size_t>(d));
    for (std::size_t i = 0; i < 2000; ++i) {
      l.row_f64(i, r.data());
      for (std::size_t k = 0; k < r.size(); ++k) v[i * r.size() + k] = r[k] + 1;
    }
    const VectorSet shifted = VectorSet::from_rows(std::move(v), 2000, d);
    expect_same_for_every_k(shifted, nullptr, Metric::Cosine, "lattice + 1 d=" + std::to_string(d));
  }
}

TEST_F(CudaKnn, DuplicatesOffsetsHalfStorageAndSmallSets) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 300 copies of 9 rows: a query's duplicates are its nearest (key 0, or about 0 for the cosine).
  std::vector<double> v, r(40);
  const VectorSet base = gaussian_vectors(9, 40, rng);
  for (int c = 0; c < 300; ++c) {
    base.row_f64(rng() % 9, r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 300, 40);
  for (Metric m : {Metric::Euclidean, Metric::Cosine}) expect_same_for_every_k(dup, nullptr, m, "duplicates");
  // Offsets of 10^6: Euclidean keys lose low bits, cosine keys sit about 0 (some below it).
  const VectorSet far = gaussian_vectors(1200, 33, rng, 1e6);
  const VectorSet far_b = gaussian_vectors(1100, 33, rng, 1e6);
  for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
    expect_same_for_every_k(far, nullptr, m, "offset 1e6");
    expect_same_knn(far, &far_b, 1024, m, "offset 1e6 cross");
  }
  std::vector<std::uint16_t> h(1500 * 24);
  for (auto& x : h) x = static_cast<std::uint16_t>(0x3800 + (rng() % 0x0a00));  // halves in [0.5, 2.5)
  const VectorSet half = VectorSet::from_half_bits(h, 1500, 24);
  for (Metric m : {Metric::Euclidean, Metric::Cosine}) expect_same_for_every_k(half, nullptr, m, "float16");
  // Tile edges: 2 vectors, 65 (one past a tile), a second set of exactly k.
  for (std::size_t n : {std::size_t(2), std::size_t(64), std::size_t(65), std::size_t(129)}) {
    const VectorSet s = gaussian_vectors(n, 5, rng), t = gaussian_vectors(n, 5, rng);
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      expect_same_knn(s, nullptr, 1, m, "n=" + std::to_string(n));
      expect_same_knn(s, nullptr, static_cast<int>(n - 1), m, "n=" + std::to_string(n) + " every partner");
      expect_same_knn(s, &t, static_cast<int>(n), m, "n=" + std::to_string(n) + " cross, every partner");
    }
  }
}

TEST_F(CudaKnn, ManyLaunchesSlabsProgressAndCancellation) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = mixture_vectors(40000, 8, 20, 0.5, rng);
  // Several launches a slab: the lists' state kept between them, with merges across them at k = 1024.
  RunOptions run = on("cuda");
  int calls = 0;
  run.progress = [&](double) { ++calls; };
  expect_same_knn(a, nullptr, 1024, Metric::Euclidean, "40000 vectors", run);
  EXPECT_GT(calls, 1);
  {
    // Several slabs (their last one partial).
    ScopedEnv slabs("TWOBODY_KNN_SLAB_QUERIES", "3000");
    expect_same_knn(a, nullptr, 65, Metric::Cosine, "slabs of 2944 queries");
    const VectorSet q = gaussian_vectors(7000, 8, rng);
    expect_same_knn(q, &a, 10, Metric::Euclidean, "slabs of 2944 queries, cross");
  }
  const Statistic s = knn_statistic(false, 10, Metric::Euclidean);
  run.progress = [](double) { throw std::runtime_error("stop"); };
  EXPECT_THROW(twobody::run(s, a, nullptr, run), std::runtime_error);
  // The device is usable afterwards.
  expect_same_knn(a, nullptr, 10, Metric::Euclidean, "after a cancelled run");
}

TEST_F(CudaKnn, RunsOnTheGpuUpToK1024AndSaysWhy) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(1100, 16, rng);
  const KnnResult r = nearest_neighbours(a, nullptr, 5, Metric::Euclidean, on("cuda"));
  EXPECT_EQ(r.info.backend, "cuda");
  EXPECT_NE(r.info.plan.find("FP16 Gram tiles k-NN"), std::string::npos) << r.info.plan;  // (d = 16)
  EXPECT_EQ(r.indices, nearest_neighbours(a, nullptr, 5, Metric::Euclidean, on("cpu")).indices);
  // Above k = 1024 the CPU runs it, and the plan says why.
  const KnnResult big = nearest_neighbours(a, nullptr, 1025, Metric::Euclidean, on("cuda"));
  EXPECT_EQ(big.info.backend, "cpu");
  EXPECT_NE(big.info.plan.find("no k-nearest-neighbour kernel for k = 1025"), std::string::npos) << big.info.plan;
  // More neighbours than partners is the planner's error on either backend.
  EXPECT_THROW(nearest_neighbours(a, nullptr, 1100, Metric::Euclidean, on("cuda")), Error);
}
