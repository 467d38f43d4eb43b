// The GPU's vector grid (src/cuda/vector_grid.hpp) against the float64 rule written apart
// (oracle/vector_brute_force.hpp): pairs bit for bit (indices and distances), totals, per-vector
// counts and neighbour lists, self and cross, on the seed's exponential sets at d = 9, 16, 33, 64
// and on adversarial ones — lattices with pairs exactly at eps, rows on cell edges and an ulp off
// them, duplicates at eps = 0, offsets of 10^6, eps beyond the data — with the grid forced, its
// dimensions forced from 1 to 6, runs cut into tiny pieces and pair buffers of a few pairs (the
// units resumed where the buffer stopped them); then the choice without forcing. Label: gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "join_checks.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

using namespace twobody;
using testing_support::exponential_vectors;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::on;
using testing_support::ScopedEnv;

namespace {

class CudaVectorGrid : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

// Every output of the forced grid equals the rule's, and the run says the grid ran.
void expect_grid_equals_oracle(const VectorSet& a, const VectorSet* b, double eps, const std::string& what) {
  const ScopedEnv grid("TWOBODY_VECTOR_GRID", "grid");
  testing_support::expect_join_equals_oracle(a, b, eps, Metric::Euclidean, what, on("cuda"));
  JoinOptions o;
  o.eps = eps;
  o.output = JoinOutput::Total;
  const JoinResult r = similarity_join(a, b, o, on("cuda"));
  EXPECT_EQ(r.info.backend, "cuda") << what;
  EXPECT_NE(r.info.plan.find("ran: the vector grid on"), std::string::npos) << what << "\n" << r.info.plan;
}

double eps_for_neighbours(const VectorSet& v, double neighbours) {
  return testing_support::eps_for(v, Metric::Euclidean, neighbours / static_cast<double>(v.size() - 1), 800);
}

}  // namespace

TEST_F(CudaVectorGrid, ExponentialSetsEqualTheRule) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {9, 16, 33, 64}) {
    const VectorSet a = exponential_vectors(3000, d, rng), b = exponential_vectors(1100, d, rng);
    for (double neighbours : {4.0, 40.0}) {
      const double eps = eps_for_neighbours(a, neighbours);
      const std::string what = "d=" + std::to_string(d) + " eps=" + std::to_string(eps);
      expect_grid_equals_oracle(a, nullptr, eps, "auto " + what);
      expect_grid_equals_oracle(a, &b, eps, "cross " + what);
      expect_grid_equals_oracle(b, &a, eps, "cross swapped " + what);
    }
  }
}

TEST_F(CudaVectorGrid, EveryDimensionCountTinyPiecesAndTinyPairBuffers) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = exponential_vectors(2500, 12, rng), b = exponential_vectors(700, 12, rng);
  const double eps = eps_for_neighbours(a, 30);
  for (const char* m : {"1", "2", "6"}) {
    const ScopedEnv dims("TWOBODY_VECTOR_GRID_DIMS", m);
    expect_grid_equals_oracle(a, nullptr, eps, std::string("m=") + m);
    expect_grid_equals_oracle(a, &b, eps, std::string("cross m=") + m);
  }
  // Runs cut every 3 partners, buffers of 1, 5 and 64 pairs: every pair once.
  const ScopedEnv piece("TWOBODY_VECTOR_GRID_PIECE", "3");
  for (const char* pairs : {"1", "5", "64"}) {
    const ScopedEnv buffer("TWOBODY_VECTOR_GRID_PAIRS", pairs);
    expect_grid_equals_oracle(a.slice(0, 900), nullptr, eps, std::string("buffer ") + pairs);
    expect_grid_equals_oracle(a.slice(0, 600), &b, eps, std::string("cross buffer ") + pairs);
  }
  // The plan tells the resumed launches.
  const ScopedEnv grid("TWOBODY_VECTOR_GRID", "grid");
  const ScopedEnv buffer("TWOBODY_VECTOR_GRID_PAIRS", "5");
  JoinOptions o;
  o.eps = eps;
  const JoinResult r = similarity_join(a.slice(0, 900), nullptr, o, on("cuda"));
  EXPECT_NE(r.info.plan.find("a pair buffer of 5 pairs"), std::string::npos) << r.info.plan;
  EXPECT_EQ(r.info.plan.find("(0 after a full buffer)"), std::string::npos) << r.info.plan;
}

TEST_F(CudaVectorGrid, LatticesCellEdgesDuplicatesOffsetsAndWideEps) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet lat = lattice_vectors(2000, 9, rng), lat2 = lattice_vectors(500, 9, rng);
  for (double eps : {1.0, 2.0, std::sqrt(3.0)}) {
    expect_grid_equals_oracle(lat, nullptr, eps, "lattice eps=" + std::to_string(eps));
    expect_grid_equals_oracle(lat, &lat2, eps, "lattice cross eps=" + std::to_string(eps));
  }
  for (double eps : {0.25, 0.1}) {
    std::uniform_int_distribution<int> k(0, 6);
    std::vector<double> v(1500 * 10);
    for (double& x : v) x = k(rng) * eps;
    for (std::size_t i = 0; i < v.size(); i += 2) v[i] = std::nextafter(v[i], (rng() & 1) ? HUGE_VAL : -HUGE_VAL);
    const VectorSet a = VectorSet::from_rows(std::move(v), 1500, 10);
    for (double e : {eps, std::nextafter(eps, 0.0), std::nextafter(eps, 1.0)})
      expect_grid_equals_oracle(a, nullptr, e, "cell edges eps=" + std::to_string(e));
  }
  const VectorSet base = exponential_vectors(20, 33, rng);
  std::vector<double> v, r(33);
  for (int c = 0; c < 1200; ++c) {
    base.row_f64(static_cast<std::size_t>(rng() % 20), r.data());
    v.insert(v.end(), r.begin(), r.end());
  }
  const VectorSet dup = VectorSet::from_rows(std::move(v), 1200, 33);
  expect_grid_equals_oracle(dup, nullptr, 0.0, "duplicates eps 0");
  expect_grid_equals_oracle(dup, &base, 0.0, "duplicates cross eps 0");
  const VectorSet far = gaussian_vectors(2000, 17, rng, 1e6, 1e-3), far2 = gaussian_vectors(600, 17, rng, 1e6, 1e-3);
  const double eps = eps_for_neighbours(far, 10);
  expect_grid_equals_oracle(far, nullptr, eps, "offset 1e6");
  expect_grid_equals_oracle(far, &far2, eps, "offset 1e6 cross");
  const VectorSet small = exponential_vectors(700, 9, rng), small2 = exponential_vectors(300, 9, rng);
  expect_grid_equals_oracle(small, nullptr, 10.0, "eps beyond the data");
  expect_grid_equals_oracle(small, &small2, 10.0, "eps beyond the data, cross");
  // Float32 storage, promoted exactly.
  std::vector<float> f(1500 * 20);
  std::exponential_distribution<float> e(40.f);
  for (float& x : f) x = e(rng);
  const VectorSet f32 = VectorSet::from_rows(f, 1500, 20);
  expect_grid_equals_oracle(f32, nullptr, eps_for_neighbours(f32, 8), "float32");
}

TEST_F(CudaVectorGrid, TheChoiceAndALargerJoin) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Tight clusters: the grid, unforced, and the CPU's counts.
  const VectorSet mix = testing_support::gaussian_mixture(30000, 16, rng);
  JoinOptions o;
  o.eps = 1e-3;
  o.output = JoinOutput::Counts;
  const JoinResult gpu = similarity_join(mix, nullptr, o, on("cuda"));
  EXPECT_NE(gpu.info.plan.find("ran: the vector grid on"), std::string::npos) << gpu.info.plan;
  EXPECT_NE(gpu.info.plan.find("chosen: the vector grid:"), std::string::npos) << gpu.info.plan;
  const JoinResult cpu = similarity_join(mix, nullptr, o, on("cpu"));
  EXPECT_EQ(gpu.counts, cpu.counts);
  EXPECT_EQ(gpu.total, cpu.total);
  // Independent exponential coordinates in 64 dimensions: all pairs, the estimates in the plan.
  const VectorSet expo = exponential_vectors(12000, 64, rng);
  o.eps = eps_for_neighbours(expo, 40);
  o.output = JoinOutput::Total;
  const JoinResult all = similarity_join(expo, nullptr, o, on("cuda"));
  EXPECT_NE(all.info.plan.find("all pairs: the vector grid's"), std::string::npos) << all.info.plan;
  EXPECT_EQ(all.total, similarity_join(expo, nullptr, o, on("cpu")).total);
  // --path brute keeps it out; TWOBODY_VECTOR_GRID=off too, even against --path grid.
  RunOptions brute = on("cuda");
  brute.path = "brute";
  o.eps = 1e-3;
  EXPECT_EQ(similarity_join(mix, nullptr, o, brute).info.plan.find("ran: the vector grid"), std::string::npos);
  const ScopedEnv off("TWOBODY_VECTOR_GRID", "off");
  RunOptions grid = on("cuda");
  grid.path = "grid";
  const JoinResult no = similarity_join(mix, nullptr, o, grid);
  EXPECT_EQ(no.info.plan.find("ran: the vector grid"), std::string::npos) << no.info.plan;
  EXPECT_EQ(no.total, cpu.total);
}

TEST_F(CudaVectorGrid, ProgressAndCancellation) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv grid("TWOBODY_VECTOR_GRID", "grid");
  const VectorSet a = gaussian_vectors(40000, 9, rng);
  JoinOptions o;
  o.eps = 1.0;
  o.output = JoinOutput::Counts;
  RunOptions run = on("cuda");
  int calls = 0;
  run.progress = [&](double) { ++calls; };
  const JoinResult gpu = similarity_join(a, nullptr, o, run);
  EXPECT_NE(gpu.info.plan.find("ran: the vector grid on"), std::string::npos) << gpu.info.plan;
  EXPECT_GT(calls, 1);
  EXPECT_EQ(gpu.counts, similarity_join(a, nullptr, o, on("cpu")).counts);
  run.progress = [](double) { throw std::runtime_error("stop"); };
  EXPECT_THROW(similarity_join(a, nullptr, o, run), std::runtime_error);
  o.output = JoinOutput::Pairs;
  EXPECT_THROW(similarity_join(a, nullptr, o, run), std::runtime_error);
  // The device is usable afterwards.
  o.output = JoinOutput::Total;
  EXPECT_EQ(similarity_join(a, nullptr, o, on("cuda")).total, gpu.total);
}

TEST_F(CudaVectorGrid, ClustersEqualTheRule) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet mix = testing_support::gaussian_mixture(3000, 24, rng), mix2 = testing_support::gaussian_mixture(900, 24, rng);
  for (double eps : {0.01, 0.3}) {
    expect_grid_equals_oracle(mix, nullptr, eps, "mixture eps=" + std::to_string(eps));
    expect_grid_equals_oracle(mix, &mix2, eps, "mixture cross eps=" + std::to_string(eps));
  }
}
