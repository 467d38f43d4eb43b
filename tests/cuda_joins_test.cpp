// Joins over vectors on the CUDA backend against the CPU backend (itself tested against the
// float64 rule in joins_test.cpp): the same pairs, distances, counts and totals, bit for bit, on
// random, lattice, duplicate and float16 sets in d = 1 to 960. Label: gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;

namespace {

class CudaJoins : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

RunOptions on(const char* backend) {
  RunOptions o;
  o.backend = backend;
  return o;
}

// eps with about `fraction` of the pairs within it, from the CPU's own distances.
double eps_for(const VectorSet& v, Metric m, double fraction) {
  JoinOptions o;
  o.metric = m;
  o.eps = m == Metric::Cosine ? 2.0 : 1e150;
  std::vector<double> d;
  for (const PairRecord& p : similarity_join(v, nullptr, o, on("cpu")).pairs) d.push_back(p.value);
  std::sort(d.begin(), d.end());
  return d[static_cast<std::size_t>(fraction * static_cast<double>(d.size() - 1))];
}

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
  const VectorSet a = gaussian_vectors(40000, 8, rng);
  JoinOptions o;
  o.eps = 0.8;
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
