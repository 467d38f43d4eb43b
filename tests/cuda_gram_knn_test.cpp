// k nearest neighbours on the FP16 Gram tiles (cuda/gram_knn.hpp) against the CPU backend (itself
// tested against the float64 rule in joins_test.cpp): the same partner indices, keys and distances
// bit for bit, and the run's plan naming the path: clustered data in d = 16, 17, 128, 960 (n not a
// multiple of the tiles' 128), k = 1, 10, 64, 65, 1024, self and cross; duplicates and forced
// small lists (queries falling back to the float64 kernel), offsets of 10^6, norms over six
// decades and far-apart shells (the norm gap skipping tiles), a forced small slab with progress
// and cancellation, the precision policy. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::on;
using testing_support::ScopedEnv;

namespace {

class CudaGramKnn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

constexpr const char* kGram = "FP16 Gram tiles k-NN";

// n vectors about 100 centres drawn from N(0, 1), each centre + N(0, spread^2): the issue's
// clustered high-d sets (scripts/bench-joins), far from the common centre.
VectorSet clustered(std::size_t n, int d, double spread, std::mt19937_64& rng, double offset = 0) {
  const VectorSet centres = gaussian_vectors(100, d, rng, offset);
  std::normal_distribution<double> g(0.0, spread);
  std::vector<double> v(n * static_cast<std::size_t>(d)), c(static_cast<std::size_t>(d));
  for (std::size_t i = 0; i < n; ++i) {
    centres.row_f64(rng() % 100, c.data());
    for (std::size_t k = 0; k < c.size(); ++k) v[i * c.size() + k] = c[k] + g(rng);
  }
  return VectorSet::from_rows(std::move(v), n, d);
}

// The number after `what` in the plan ("... 12 of 300 queries fell back ..." -> 12 for "of").
std::uint64_t number_before(const std::string& plan, const std::string& what) {
  const std::size_t at = plan.find(what);
  if (at == std::string::npos || at < 2) return ~0ull;
  std::size_t b = at - 1;
  while (b > 0 && std::isdigit(static_cast<unsigned char>(plan[b - 1]))) --b;
  return std::stoull(plan.substr(b, at - 1 - b));
}

// The same lists on both backends, keys and values bit for bit; the GPU's plan returned.
std::string expect_same_knn(const VectorSet& a, const VectorSet* b, int k, const std::string& what,
                            const char* path = kGram, const RunOptions& gpu_run = on("cuda")) {
  const Statistic s = knn_statistic(b != nullptr, k, Metric::Euclidean);
  // The CPU's brute force: its lists are the EGO trees' too (CPU tests), and its count of pairs is
  // the GPU's (the trees evaluate fewer).
  RunOptions brute = on("cpu");
  brute.path = "brute";
  const Result cpu = run(s, a, b, brute);
  const Result gpu = run(s, a, b, gpu_run);
  const std::string where = what + " k=" + std::to_string(k);
  EXPECT_EQ(gpu.info.backend, "cuda") << where;
  EXPECT_NE(gpu.info.plan.find(path), std::string::npos) << where << "\n" << gpu.info.plan;
  EXPECT_EQ(gpu.nearest.k, k) << where;
  if (gpu.nearest.index.size() != cpu.nearest.index.size() || gpu.nearest.key.size() != cpu.nearest.key.size() ||
      gpu.nearest.value.size() != cpu.nearest.value.size()) {
    ADD_FAILURE() << where << ": sizes differ";
    return gpu.info.plan;
  }
  for (std::size_t t = 0; t < cpu.nearest.index.size(); ++t) {
    const std::string at = where + " query " + std::to_string(t / static_cast<std::size_t>(k)) + " rank " +
                           std::to_string(t % static_cast<std::size_t>(k));
    if (gpu.nearest.index[t] != cpu.nearest.index[t] ||
        std::bit_cast<std::uint64_t>(gpu.nearest.key[t]) != std::bit_cast<std::uint64_t>(cpu.nearest.key[t]) ||
        std::bit_cast<std::uint64_t>(gpu.nearest.value[t]) != std::bit_cast<std::uint64_t>(cpu.nearest.value[t])) {
      ADD_FAILURE() << at << ": index " << gpu.nearest.index[t] << " vs " << cpu.nearest.index[t] << ", key "
                    << gpu.nearest.key[t] << " vs " << cpu.nearest.key[t] << "\n" << gpu.info.plan;
      return gpu.info.plan;
    }
  }
  EXPECT_EQ(gpu.info.pairs_evaluated, cpu.info.pairs_evaluated) << where;
  return gpu.info.plan;
}

void expect_same_for_every_k(const VectorSet& a, const VectorSet* b, const std::string& what) {
  const std::size_t partners = b ? b->size() : a.size() - 1;
  for (int k : {1, 10, 64, 65, 1024})
    if (static_cast<std::size_t>(k) <= partners) expect_same_knn(a, b, k, what);
}

}  // namespace

TEST_F(CudaGramKnn, EqualsTheCpuOnClusteredData) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 300 : 1500;
    const VectorSet a = clustered(n, d, 0.15, rng), b = clustered(1100, d, 0.3, rng);
    expect_same_for_every_k(a, nullptr, "clustered self d=" + std::to_string(d));
    expect_same_for_every_k(a, &b, "clustered cross d=" + std::to_string(d));
    // Every partner there is (at most the kernel's k of 1024): the lists hold them all.
    const VectorSet few = a.slice(0, std::min<std::size_t>(a.size(), 1000));
    expect_same_knn(b, &few, static_cast<int>(few.size()), "clustered, k = every partner d=" + std::to_string(d));
  }
}

TEST_F(CudaGramKnn, TiesOnLatticesGoByIndex) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {17, 128}) {
    const VectorSet l = lattice_vectors(1700, d, rng), q = lattice_vectors(400, d, rng);
    expect_same_for_every_k(l, nullptr, "lattice d=" + std::to_string(d));
    expect_same_knn(q, &l, 65, "lattice cross d=" + std::to_string(d));
  }
}

TEST_F(CudaGramKnn, DuplicatesFallBackToTheFloat64Kernel) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 100 copies of 20 rows: every query has 99 partners at key 0, more than a list of 64 holds.
  const VectorSet base = gaussian_vectors(20, 128, rng);
  std::vector<double> v, r(128);
  for (int c = 0; c < 2000; ++c) {
    base.row_f64(static_cast<std::size_t>(c) % 20, r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 2000, 128);
  for (int k : {1, 10, 99, 100, 1024}) {
    const std::string plan = expect_same_knn(dup, nullptr, k, "100 copies of 20 rows");
    if (k <= 64) EXPECT_EQ(number_before(plan, "of 2000 queries fell back"), 2000u) << plan;
  }
  // A few copies among clustered rows: only their queries fall back.
  const VectorSet src = clustered(1500, 64, 0.15, rng);
  std::vector<double> w(1500 * 64);
  for (std::size_t i = 0; i < 1500; ++i) src.row_f64(i, w.data() + i * 64);
  for (std::size_t i = 1; i < 80; ++i) std::copy_n(w.data(), 64, w.data() + i * 64);  // 80 copies of row 0
  const VectorSet mixed = VectorSet::from_rows(std::move(w), 1500, 64);
  const std::string plan = expect_same_knn(mixed, nullptr, 10, "80 copies among clustered rows");
  const std::uint64_t fell = number_before(plan, "of 1500 queries fell back");
  EXPECT_GE(fell, 80u) << plan;
  EXPECT_LT(fell, 1500u) << plan;
}

TEST_F(CudaGramKnn, ForcedSmallListsFallBackAndStayExact) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = clustered(2000, 128, 0.15, rng), b = clustered(700, 128, 0.15, rng);
  ScopedEnv cap("TWOBODY_GRAM_KNN_CAPACITY", "10");  // lists of exactly k: any candidate beyond drops
  const std::string plan = expect_same_knn(a, nullptr, 10, "lists of 10, self");
  EXPECT_GT(number_before(plan, "of 2000 queries fell back"), 0u) << plan;
  expect_same_knn(b, &a, 10, "lists of 10, cross");
  expect_same_knn(a, &b, 1, "lists of 10, k = 1, cross");
}

TEST_F(CudaGramKnn, OffsetsSpreadNormsAndFarShells) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 10^6 + a small spread: the centring keeps the FP16 rows' precision.
  const VectorSet far = clustered(1300, 128, 0.01, rng, 1e6), far_b = clustered(500, 128, 0.01, rng, 1e6);
  for (int k : {1, 10, 65}) {
    expect_same_knn(far, nullptr, k, "offset 1e6");
    expect_same_knn(far_b, &far, k, "offset 1e6 cross");
  }
  // Rows scaled by 10^-3 .. 10^3: per-row scales, FP16 subnormals, tiles of very different bounds.
  std::normal_distribution<double> g;
  std::vector<double> v(1400 * 128);
  for (std::size_t t = 0; t < v.size(); ++t) v[t] = g(rng) * std::pow(10.0, static_cast<double>(t / 128 % 7) - 3);
  const VectorSet norms = VectorSet::from_rows(std::move(v), 1400, 128);
  for (int k : {1, 10, 64, 65}) expect_same_knn(norms, nullptr, k, "norms 1e-3..1e3");
  expect_same_knn(far_b, &norms, 10, "offset rows against spread norms");
  // Two shells, of radius 1 and 1000 about the origin: the norm gap skips the other shell's tiles.
  std::vector<double> s(3000 * 32);
  for (std::size_t i = 0; i < 3000; ++i) {
    double nn = 0;
    for (std::size_t k = 0; k < 32; ++k) nn += (s[i * 32 + k] = g(rng)) * s[i * 32 + k];
    const double radius = i % 2 ? 1000.0 : 1.0;
    for (std::size_t k = 0; k < 32; ++k) s[i * 32 + k] *= radius / std::sqrt(nn);
  }
  const VectorSet shells = VectorSet::from_rows(std::move(s), 3000, 32);
  const std::string plan = expect_same_knn(shells, nullptr, 10, "two shells");
  EXPECT_GT(number_before(plan, "skipped by the norm gap"), 0u) << plan;
}

TEST_F(CudaGramKnn, SlabsProgressAndCancellation) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = clustered(3000, 48, 0.2, rng), q = clustered(1000, 48, 0.2, rng);
  ScopedEnv slabs("TWOBODY_KNN_SLAB_QUERIES", "300");  // launches of 256 queries (the last partial)
  RunOptions run = on("cuda");
  int calls = 0;
  run.progress = [&](double) { ++calls; };
  const std::string plan = expect_same_knn(a, nullptr, 10, "launches of 256 queries", kGram, run);
  EXPECT_NE(plan.find("12 launches of 256 queries"), std::string::npos) << plan;
  EXPECT_GE(calls, 12);
  expect_same_knn(q, &a, 65, "launches of 256 queries, cross");
  {
    ScopedEnv cap("TWOBODY_GRAM_KNN_CAPACITY", "12");  // fallbacks from several launches
    expect_same_knn(a, nullptr, 10, "launches of 256 queries, lists of 12");
  }
  const Statistic s = knn_statistic(false, 10, Metric::Euclidean);
  run.progress = [](double) { throw std::runtime_error("stop"); };
  EXPECT_THROW(twobody::run(s, a, nullptr, run), std::runtime_error);
  expect_same_knn(a, nullptr, 10, "after a cancelled run");
}

TEST_F(CudaGramKnn, PrecisionPolicyChoosesThePathAndSaysWhy) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = clustered(900, 128, 0.2, rng), low = lattice_vectors(900, 3, rng);
  {
    ScopedEnv fp64("TWOBODY_VECTOR_PRECISION", "fp64");
    expect_same_knn(a, nullptr, 10, "fp64 forced", "float64 knn kernel (TWOBODY_VECTOR_PRECISION=fp64)");
    EXPECT_NE(explain(knn_statistic(false, 10, Metric::Euclidean), a, nullptr, on("cuda")).find("not the FP16 Gram tiles"),
              std::string::npos);
  }
  // Below d = 16 the float64 kernel, unless FP16 is forced: then the tiles at d = 3 (ties galore).
  expect_same_knn(low, nullptr, 10, "d = 3", "float64 knn kernel (d = 3 < 16");
  {
    ScopedEnv fp16("TWOBODY_VECTOR_PRECISION", "fp16");
    for (int k : {1, 10, 65}) expect_same_knn(low, nullptr, k, "d = 3 on the tiles");
  }
  // Cosine takes the tiles too, on unit rows (CudaGramCosine tests them in depth), and equals the
  // CPU; the explanation names the Gram path and the list size.
  const Statistic cosine = knn_statistic(false, 10, Metric::Cosine);
  const Result c = run(cosine, a, nullptr, on("cuda")), c_cpu = run(cosine, a, nullptr, on("cpu"));
  EXPECT_NE(c.info.plan.find("FP16 Gram tiles k-NN on the tensor cores (cosine"), std::string::npos) << c.info.plan;
  EXPECT_EQ(c.nearest.index, c_cpu.nearest.index);
  EXPECT_EQ(c.nearest.key, c_cpu.nearest.key);
  const std::string e = explain(knn_statistic(false, 10, Metric::Euclidean), a, nullptr, on("cuda"));
  EXPECT_NE(e.find("FP16 Gram tiles"), std::string::npos) << e;
  EXPECT_NE(e.find("keeps the 64 entries"), std::string::npos) << e;
}
