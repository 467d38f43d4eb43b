// The CUDA backend against the CPU backend and the float64 oracle: the float32 fast path with its
// guard bands must give the float64 counts exactly, on random data, on lattices where most pairs
// lie exactly on an edge, and on coordinates with large offsets. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <future>
#include <span>

#include "oracle/kernel_sums.hpp"
#include "twobody/device_memory.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/correlation.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/cosmology.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"
#include "twobody/kde.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::on;
using testing_support::points_in_cell;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

Statistic stat(Metric m, Traversal t, const Binning& b, OutputKind out = OutputKind::Histogram, bool w = false) {
  Statistic s;
  s.metric = m;
  s.traversal = t;
  s.reduction = testing_support::reduction_of(out, b);
  s.weighted = w;
  return s;
}

// The most 1-D bins over [0, hi) the backend runs `s` with (its weights and jackknife regions
// kept): the largest number Backend::refuses lets through, by bisection; the refusal of one bin
// more names that limit.
std::size_t most_histogram_bins(const Backend& backend, Statistic s, double hi) {
  const auto refusal = [&](std::size_t nb) {
    testing_support::set_binning(s, Binning::linear(0.0, hi, nb));
    return backend.refuses(s);
  };
  std::size_t runs = 1, refused = std::size_t(1) << 16;
  EXPECT_EQ(refusal(runs), "");
  EXPECT_NE(refusal(refused), "");
  while (refused - runs > 1) {
    const std::size_t mid = runs + (refused - runs) / 2;
    (refusal(mid).empty() ? runs : refused) = mid;
  }
  const std::string why = refusal(runs + 1);
  EXPECT_NE(why.find(std::to_string(runs)), std::string::npos) << why;
  return runs;
}

// What the backend decided while running (the plan's "ran:" part, after the description), less
// the environment's tuning overrides it repeats ("no counting tiles" names an agent that did not run).
std::string ran(const Result& r) {
  const auto at = r.info.plan.find("\nran: ");
  if (at == std::string::npos) return {};
  std::string s = r.info.plan.substr(at);
  const std::string overrides = "tuning overrides (environment): ";
  for (auto o = s.find(overrides); o != std::string::npos; o = s.find(overrides, o)) {
    const auto end = s.find(';', o);
    s.erase(o, end == std::string::npos ? std::string::npos : end - o + 1);
  }
  return s;
}

// Sums (weighted histograms, separations) equal to `rel` of the CPU's, plus `abs`.
void expect_near_sums(const std::vector<double>& g, const std::vector<double>& c, const std::string& what,
                      double rel = 1e-12, double abs = 0.0) {
  ASSERT_EQ(g.size(), c.size()) << what;
  for (std::size_t k = 0; k < c.size(); ++k)
    EXPECT_NEAR(g[k], c[k], rel * std::abs(c[k]) + abs) << what << " bin " << k;
}

// Exact sums (twobody/exact_sums.hpp): weighted sums equal to the CPU's bit for bit (the same
// float64 products on the same grid, added as integers on both sides).
void expect_same_sums(const std::vector<double>& g, const std::vector<double>& c, const std::string& what) {
  ASSERT_EQ(g.size(), c.size()) << what;
  for (std::size_t k = 0; k < c.size(); ++k) EXPECT_EQ(g[k], c[k]) << what << " bin " << k;
}

void expect_same(const Result& gpu, const Result& cpu) {
  EXPECT_EQ(gpu.info.backend, "cuda");
  EXPECT_EQ(gpu.counts, cpu.counts);
  expect_same_sums(gpu.weighted, cpu.weighted, "weighted");
}

}  // namespace

TEST_F(Cuda, EuclideanHistogramsEqualCpuAcrossDimsAndSizes) {
  for (int dim : {1, 2, 3, 5, 8})
    for (std::size_t n : {1u, 2u, 17u, 1023u, 1025u, 4099u}) {
      const auto seed = fresh_seed();
      SCOPED_TRACE("seed " + std::to_string(seed) + " dim " + std::to_string(dim) + " n " + std::to_string(n));
      std::mt19937_64 rng(seed);
      const auto A = to_pointset(uniform_points(n, dim, -20, 20, rng, true));
      const auto B = to_pointset(uniform_points(n / 3 + 5, dim, -20, 20, rng, true));
      const Binning bins = Binning::logarithmic(0.5, 40.0, 23);
      for (bool w : {false, true}) {
        if (n >= 2) {
          const auto s = stat(Metric::Euclidean, Traversal::Auto, bins, OutputKind::Histogram, w);
          expect_same(run(s, A, nullptr, on("cuda")), run(s, A, nullptr, on("cpu")));
        }
        const auto c = stat(Metric::Euclidean, Traversal::Cross, bins, OutputKind::Histogram, w);
        expect_same(run(c, A, &B, on("cuda")), run(c, A, &B, on("cpu")));
      }
    }
}

TEST_F(Cuda, PeriodicUpToHalfTheBox) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<double> L{100.0, 80.0, 120.0};
  auto pa = uniform_points(6000, 3, 0, 1, rng);
  auto pb = uniform_points(3001, 3, 0, 1, rng);
  for (auto* p : {&pa, &pb})
    for (auto& x : p->x)
      for (int d = 0; d < 3; ++d) x[d] = std::min(x[d] * L[d], std::nextafter(L[d], 0.0));
  const auto A = to_pointset(pa), B = to_pointset(pb);
  auto s = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 40.0, 64));
  s.box = Box::from_lengths(L);
  expect_same(run(s, A, nullptr, on("cuda")), run(s, A, nullptr, on("cpu")));
  s.traversal = Traversal::Cross;
  expect_same(run(s, A, &B, on("cuda")), run(s, A, &B, on("cpu")));
  // A 2-D box, thin bins.
  auto p2 = uniform_points(5000, 2, 0, 10, rng);
  auto s2 = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 5.0, 500));
  s2.box = Box::cube(2, 10.0);
  expect_same(run(s2, to_pointset(p2), nullptr, on("cuda")), run(s2, to_pointset(p2), nullptr, on("cpu")));
}

TEST_F(Cuda, LatticePairsOnEdgesAreSettledExactly) {
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto A = to_pointset(p);
  const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 6.0, 12));
  const auto g = run(s, A, nullptr, on("cuda"));
  EXPECT_EQ(g.counts, oracle::histogram(p, nullptr, s.binning().edges(), 0).counts);
  EXPECT_GT(g.info.pairs_settled_fp64, 0u);
  auto ps = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 4.25, 17));
  ps.box = Box::from_lengths(std::vector<double>{12.0, 10.0, 8.5});
  EXPECT_EQ(run(ps, A, nullptr, on("cuda")).counts, run(ps, A, nullptr, on("cpu")).counts);
}

TEST_F(Cuda, LargeOffsetsStayExact) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto p = uniform_points(3000, 3, 1e4, 1e4 + 1.0, rng);
  const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 1.0, 50));
  const auto g = run(s, to_pointset(p), nullptr, on("cuda"));
  EXPECT_EQ(g.counts, oracle::histogram(p, nullptr, s.binning().edges(), 0).counts);
  // With the centre shift only pairs near an edge need float64: a small fraction.
  EXPECT_LT(g.info.pairs_settled_fp64, g.info.pairs_evaluated / 20);
}

TEST_F(Cuda, AngularEqualsCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto a = to_pointset(testing_support::sky_points(7000, rng, -10, 30));
  const auto b = to_pointset(testing_support::sky_points(2500, rng, -10, 30));
  const auto bins = Binning::logarithmic(0.001, 30.0, 25);
  EXPECT_EQ(angular(a, nullptr, bins, false, on("cuda")).raw.counts, angular(a, nullptr, bins, false, on("cpu")).raw.counts);
  EXPECT_EQ(angular(a, &b, bins, false, on("cuda")).raw.counts, angular(a, &b, bins, false, on("cpu")).raw.counts);
}

TEST_F(Cuda, SharedMockEqualsCorrfunc) {
  const std::string dir = TWOBODY_SHARED_DATA;
  const std::string mock = dir + "/Mr19_mock_northonly.rdcz.ff";
  if (!std::ifstream(mock)) GTEST_SKIP() << "shared mock not present";
  ReadOptions o;
  o.columns = {1, 2};
  const auto r = angular(read_points(mock, o), nullptr, Binning::from_file(dir + "/angular_bins_corrfunc.txt"), false, on("cuda"));
  const std::vector<std::uint64_t> corrfunc_half = {1468, 2531, 4253, 6889, 11524, 19264, 32763, 55136, 93517, 156754,
                                                    265331, 465107, 835864, 1549521, 2914326, 5488205, 10423582,
                                                    19664059, 37193924, 69948062};
  EXPECT_EQ(r.raw.counts, corrfunc_half);
}

TEST_F(Cuda, EveryBinCountFromOneTo8192) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(12000, 3, 0, 100, rng));
  for (std::size_t nb : {1u, 8u, 32u, 256u, 1000u, 1024u, 8192u}) {
    SCOPED_TRACE("bins " + std::to_string(nb));
    const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 175.0, nb));
    expect_same(run(s, A, nullptr, on("cuda")), run(s, A, nullptr, on("cpu")));
  }
}

// The largest 1-D histogram the GPU takes (one copy and the smallest bin table in a block's shared
// memory) runs there, unweighted and weighted; one bin more runs on the CPU, saying why (it was
// refused until session 9). Both equal the CPU's counts.
// The generic agents' sub-histogram copies by seed 000's model (weighted histograms: no counting
// tiles), on both paths and from few bins to a thousand (the 16-byte exact sums of 1 500 bins
// leave room for one copy only), against the CPU; the fitting rule on request.
TEST_F(Cuda, GenericCopiesByTheModelEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = testing_support::with_weights(to_pointset(uniform_points(7000, 3, 0, 100, rng, true)), rng);
  for (const char* rule : {"model", "fit"}) {
    if (std::string(rule) == "fit") setenv("TWOBODY_GENERIC_COPIES", "fit", 1);
    for (const char* path : {"brute", "grid"})
      for (std::size_t nb : {std::size_t(6), std::size_t(300), std::size_t(1000)}) {
        SCOPED_TRACE(std::string(rule) + " " + path + " " + std::to_string(nb) + " bins");
        const double hi = std::string(path) == "grid" ? 20.0 : 180.0;
        const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, hi, nb), OutputKind::Histogram, true);
        RunOptions o = on("cuda");
        o.path = path;
        const Result g = run(s, A, nullptr, o);
        EXPECT_EQ(g.info.backend, "cuda");
        EXPECT_EQ(g.info.plan.find("by seed 000's copies model") != std::string::npos, std::string(rule) == "model")
            << g.info.plan;
        const Result c = run(s, A, nullptr, on("cpu"));
        EXPECT_EQ(g.counts, c.counts);
        expect_same_sums(g.weighted, c.weighted, "weighted");
      }
    unsetenv("TWOBODY_GENERIC_COPIES");
  }
}

// The brute-force agent's block size by the same model (256 or 512 threads: a block's
// sub-histograms cost the same shared memory either way): the plan says which and why, and both,
// forced, give the CPU's counts and sums (ragged items of 4 096 anchors, auto and cross).
TEST_F(Cuda, GenericBlockSizeByTheModelEqualsCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = testing_support::with_weights(to_pointset(uniform_points(9001, 3, 0, 100, rng, true)), rng);
  const auto B = testing_support::with_weights(to_pointset(uniform_points(5003, 3, 0, 100, rng, true)), rng);
  RunOptions o = on("cuda");
  o.path = "brute";
  for (const char* block : {"", "256", "512"})
    for (std::size_t nb : {std::size_t(100), std::size_t(300), std::size_t(1000)})
      for (bool cross : {false, true}) {
        SCOPED_TRACE(std::string("TWOBODY_GENERIC_BLOCK=") + block + ", " + std::to_string(nb) + " bins" +
                     (cross ? ", cross" : ""));
        if (*block) setenv("TWOBODY_GENERIC_BLOCK", block, 1);
        const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, Binning::linear(0.0, 180.0, nb),
                            OutputKind::Histogram, true);
        const Result g = run(s, A, cross ? &B : nullptr, o);
        unsetenv("TWOBODY_GENERIC_BLOCK");
        EXPECT_NE(g.info.plan.find("threads by seed 000's occupancy model"), std::string::npos) << g.info.plan;
        if (*block) EXPECT_EQ(g.info.threads, std::atoi(block)) << g.info.plan;
        const Result c = run(s, A, cross ? &B : nullptr, on("cpu"));
        EXPECT_EQ(g.counts, c.counts);
        expect_same_sums(g.weighted, c.weighted, "weighted");
      }
}

TEST_F(Cuda, HistogramsAtTheSharedMemoryLimitAndBeyond) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto backend = make_cuda_backend();
  // 8-D: the widest partner tile, for which the limit is computed, so the largest histogram fills
  // the shared memory to within a few bytes (the kernels' static words included).
  for (int dim : {3, 8})
  for (bool weighted : {false, true}) {
    const auto A = to_pointset(uniform_points(dim == 3 ? 6000 : 2000, dim, 0, 100, rng, true));
    const double hi = 100 * std::sqrt(double(dim)) * 1.01;
    auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, hi, 10), OutputKind::Histogram, weighted);
    const std::size_t most = most_histogram_bins(*backend, s, hi);
    // (Weighted: 28 bytes a bin — bands, counter, a 16-byte exact sum — so about 7 900 bins in 8-D.)
    EXPECT_GT(most, weighted ? 7000u : 15000u);
    EXPECT_LE(most, 32766u);
    for (std::size_t nb : {most, most + 1}) {
      SCOPED_TRACE(std::to_string(dim) + "-D " + std::string(weighted ? "weighted " : "") + std::to_string(nb) + " bins");
      testing_support::set_binning(s, Binning::linear(0.0, hi, nb));
      const Result g = run(s, A, nullptr, on("cuda"));
      EXPECT_EQ(g.info.backend, nb == most ? "cuda" : "cpu") << g.info.plan;
      if (nb > most) EXPECT_NE(g.info.plan.find("this statistic runs on the cpu"), std::string::npos) << g.info.plan;
      const Result c = run(s, A, nullptr, on("cpu"));
      EXPECT_EQ(g.counts, c.counts);
      expect_same_sums(g.weighted, c.weighted, "weighted");
    }
  }
}

// Jackknife regions: the grid agent keeps 32 sub-histograms a warp beside the region x bin
// counters, so fewer bins fit; the largest such histogram runs on the GPU, one bin more on the CPU
// (it was a Config error), with the same counts and region counts.
TEST_F(Cuda, RegionHistogramsAtTheSharedMemoryLimitAndBeyond) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 40;
  auto A = to_pointset(uniform_points(5000, 3, 0, 100, rng, true));
  std::vector<std::int32_t> labels(A.size());
  std::uniform_int_distribution<int> u(0, R - 1);
  for (auto& l : labels) l = u(rng);
  A.set_regions(std::move(labels));
  const auto backend = make_cuda_backend();
  for (bool weighted : {false, true}) {
    auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 175.0, 10), OutputKind::Histogram, weighted);
    s.set_regions(R);
    const std::size_t most = most_histogram_bins(*backend, s, 175.0);
    EXPECT_GT(most, 20u);
    EXPECT_LT(most, 2000u);
    for (std::size_t nb : {most, most + 1}) {
      SCOPED_TRACE(std::string(weighted ? "weighted " : "") + std::to_string(nb) + " bins");
      testing_support::set_binning(s, Binning::linear(0.0, 175.0, nb));
      const Result g = run(s, A, nullptr, on("cuda"));
      EXPECT_EQ(g.info.backend, nb == most ? "cuda" : "cpu") << g.info.plan;
      const Result c = run(s, A, nullptr, on("cpu"));
      EXPECT_EQ(g.counts, c.counts);
      EXPECT_EQ(g.region_counts, c.region_counts);
    }
  }
}

TEST_F(Cuda, ReductionPairListAndMatrix) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(9000, 3, 0, 10, rng, true));
  const auto B = to_pointset(uniform_points(700, 3, 0, 10, rng, true));
  auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 1.5}), OutputKind::Reduction, true);
  expect_same(run(s, A, nullptr, on("cuda")), run(s, A, nullptr, on("cpu")));
  s.traversal = Traversal::Cross;
  expect_same(run(s, A, &B, on("cuda")), run(s, A, &B, on("cpu")));

  // Pair lists: one small, one of millions of pairs (the default pool, one launch).
  s.weighted = false;
  for (double r : {0.7, 6.0}) {
    s.traversal = Traversal::Auto;
    s.reduction = reduce::PairList{Binning::from_edges({0.0, r})};
    const auto g = run(s, A, nullptr, on("cuda"));
    const auto c = run(s, A, nullptr, on("cpu"));
    ASSERT_EQ(g.pairs.size(), c.pairs.size());
    for (std::size_t k = 0; k < c.pairs.size(); ++k) {
      ASSERT_EQ(g.pairs[k].i, c.pairs[k].i);
      ASSERT_EQ(g.pairs[k].j, c.pairs[k].j);
      ASSERT_EQ(g.pairs[k].value, c.pairs[k].value);
    }
  }

  s.reduction = reduce::Matrix{};
  s.traversal = Traversal::Cross;
  const auto gm = run(s, B, &A, on("cuda"));
  const auto cm = run(s, B, &A, on("cpu"));
  ASSERT_EQ(gm.matrix.size(), cm.matrix.size());
  for (std::size_t k = 0; k < cm.matrix.size(); ++k) ASSERT_EQ(gm.matrix[k], cm.matrix[k]) << k;
}

TEST_F(Cuda, StatisticsRunOnCudaByDefault) {
  std::mt19937_64 rng(fresh_seed());
  const auto p = to_pointset(uniform_points(3000, 3, 0, 50, rng));
  const auto r = rdf(p, nullptr, Binning::linear(0.5, 25, 10), Box::cube(3, 50.0));
  EXPECT_EQ(r.raw.info.backend, "cuda");
  EXPECT_EQ(r.raw.counts, rdf(p, nullptr, Binning::linear(0.5, 25, 10), Box::cube(3, 50.0), on("cpu")).raw.counts);
}

// --explain's phases: the engine's (planning, the whole CUDA run, with the host's peak memory after
// each) after the CUDA run's own in its "ran:" line.
TEST_F(Cuda, PlanReportsThePhasesAndTheHostPeak) {
  std::mt19937_64 rng(fresh_seed());
  const auto p = to_pointset(uniform_points(20000, 3, 0, 50, rng));
  const auto r = rdf(p, nullptr, Binning::linear(0.5, 5, 10), Box::cube(3, 50.0), on("cuda"));
  const std::string& plan = r.raw.info.plan;
  EXPECT_NE(plan.find("\nran: "), std::string::npos) << plan;
  EXPECT_NE(plan.find("phases: "), std::string::npos) << plan;
  const std::size_t at = plan.find("\nphases (wall time, the process's peak resident memory after each): plan ");
  ASSERT_NE(at, std::string::npos) << plan;
  EXPECT_NE(plan.find("cuda run ", at), std::string::npos) << plan;
  EXPECT_NE(plan.find(" MB)", at), std::string::npos) << plan;
  EXPECT_EQ(r.raw.counts, rdf(p, nullptr, Binning::linear(0.5, 5, 10), Box::cube(3, 50.0), on("cpu")).raw.counts);
}

// Small enough for compute-sanitizer's memcheck and racecheck: every output mode once.
TEST_F(Cuda, SmallMixedOutputs) {
  std::mt19937_64 rng(fresh_seed());
  const auto A = to_pointset(uniform_points(700, 3, 0, 4, rng, true));
  const auto B = to_pointset(uniform_points(300, 3, 0, 4, rng, true));
  auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 3.0, 40), OutputKind::Histogram, true);
  expect_same(run(s, A, nullptr, on("cuda")), run(s, A, nullptr, on("cpu")));
  s.traversal = Traversal::Cross;
  expect_same(run(s, A, &B, on("cuda")), run(s, A, &B, on("cpu")));
  s.reduction = reduce::Count{s.binning()};
  expect_same(run(s, A, &B, on("cuda")), run(s, A, &B, on("cpu")));
  s.reduction = reduce::PairList{s.binning()};
  s.weighted = false;
  EXPECT_EQ(run(s, A, &B, on("cuda")).pairs.size(), run(s, A, &B, on("cpu")).pairs.size());
  // The grid path too (every output mode through the grid agent).
  RunOptions g = on("cuda");
  g.path = "grid";
  s.reduction = reduce::PairList{Binning::linear(0.0, 0.7, 7)};
  EXPECT_EQ(run(s, A, &B, g).pairs.size(), run(s, A, &B, on("cpu")).pairs.size());
  s.reduction = reduce::Histogram{s.binning()};
  s.weighted = true;
  expect_same(run(s, A, &B, g), run(s, A, &B, on("cpu")));
  s.traversal = Traversal::Auto;
  expect_same(run(s, A, nullptr, g), run(s, A, nullptr, on("cpu")));
  s.reduction = reduce::Count{s.binning()};
  expect_same(run(s, A, nullptr, g), run(s, A, nullptr, on("cpu")));
}

// ---- The grid path on the GPU (issue 3): forced with path = "grid", against the CPU's brute force.

namespace {

RunOptions grid_on_cuda() {
  RunOptions o = on("cuda");
  o.path = "grid";
  return o;
}
RunOptions brute_on_cpu() {
  RunOptions o = on("cpu");
  o.path = "brute";
  return o;
}

// 90% of the points in a cube of 1% of the volume, the rest uniform; all inside [0, L).
PointSet concentrated(std::size_t n, double L, std::mt19937_64& rng, bool weights) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  PointSet p(3, n);
  const double side = L * std::cbrt(0.01);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      p.coord(d)[i] = std::min(i % 10 == 0 ? u(rng) * L : 0.3 * L + u(rng) * side, std::nextafter(L, 0.0));
  if (weights) {
    std::vector<double> w(n);
    for (auto& x : w) x = 0.5 + u(rng);
    p.set_weights(std::move(w));
  }
  return p;
}

void expect_grid_matches(const Statistic& s, const PointSet& A, const PointSet* B) {
  const Result g = run(s, A, B, grid_on_cuda());
  const Result c = run(s, A, B, brute_on_cpu());
  EXPECT_NE(g.info.plan.find("ran: grid"), std::string::npos) << g.info.plan;
  if (s.output() == OutputKind::PairList) {
    ASSERT_EQ(g.pairs.size(), c.pairs.size());
    for (std::size_t k = 0; k < c.pairs.size(); ++k) {
      ASSERT_EQ(g.pairs[k].i, c.pairs[k].i) << k;
      ASSERT_EQ(g.pairs[k].j, c.pairs[k].j) << k;
      ASSERT_EQ(g.pairs[k].value, c.pairs[k].value) << k;
    }
  } else {
    expect_same(g, c);
  }
}

}  // namespace

TEST_F(Cuda, GridEqualsBruteForceOpenAndPeriodicEveryOutput) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  for (bool clustered : {false, true}) {
    const PointSet A = clustered ? generate_clustered_box(9000, 3, L, ClusterOptions{}, seed)
                                 : to_pointset(uniform_points(9000, 3, 0, L, rng, true));
    const PointSet B = to_pointset(uniform_points(4000, 3, 0, L, rng, true));
    // r_max from a few percent of the box (many cells, refine 2) to just under half (two cells).
    for (double rmax : {3.0, 9.5, 26.0, 49.9}) {
      for (bool periodic : {false, true}) {
        SCOPED_TRACE("clustered " + std::to_string(clustered) + " rmax " + std::to_string(rmax) + " periodic " +
                     std::to_string(periodic));
        auto s = stat(periodic ? Metric::Periodic : Metric::Euclidean, Traversal::Auto,
                      Binning::logarithmic(0.1, rmax, 20));
        if (periodic) s.box = Box::cube(3, L);
        expect_grid_matches(s, A, nullptr);
        s.traversal = Traversal::Cross;
        expect_grid_matches(s, A, &B);
        if (!clustered) {
          s.weighted = true;
          expect_grid_matches(s, A, &B);
          s.traversal = Traversal::Auto;
          expect_grid_matches(s, A, nullptr);
          s.weighted = false;
          s.reduction = reduce::Count{s.binning()};
          expect_grid_matches(s, A, nullptr);
          s.reduction = reduce::PairList{Binning::linear(0.0, rmax / 4, 1)};
          expect_grid_matches(s, A, nullptr);
          s.traversal = Traversal::Cross;
          expect_grid_matches(s, A, &B);
        }
      }
    }
  }
}

TEST_F(Cuda, GridOnLatticeEdgesAndOtherDimensions) {
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto A = to_pointset(p);
  const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 2.0, 8));
  const auto g = run(s, A, nullptr, grid_on_cuda());
  EXPECT_EQ(g.counts, oracle::histogram(p, nullptr, s.binning().edges(), 0).counts);
  EXPECT_GT(g.info.pairs_settled_fp64, 0u);
  auto ps = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 4.25, 17));
  ps.box = Box::from_lengths(std::vector<double>{12.0, 10.0, 8.5});
  expect_grid_matches(ps, A, nullptr);
  std::mt19937_64 rng(fresh_seed());
  for (int dim : {1, 2, 4}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const auto P = to_pointset(uniform_points(6000, dim, 0, 40, rng));
    auto sd = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.5, 6.0, 11));
    sd.box = Box::cube(dim, 40.0);
    expect_grid_matches(sd, P, nullptr);
    sd.metric = Metric::Euclidean;
    expect_grid_matches(sd, P, nullptr);
  }
}

TEST_F(Cuda, GridOnConcentratedData) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet A = concentrated(20000, 1000.0, rng, true);
  auto s = stat(Metric::Periodic, Traversal::Auto, Binning::logarithmic(0.1, 25.0, 20), OutputKind::Histogram, true);
  s.box = Box::cube(3, 1000.0);
  expect_grid_matches(s, A, nullptr);
}

TEST_F(Cuda, PlannerPicksTheGridForShortCutoffs) {
  std::mt19937_64 rng(fresh_seed());
  const auto A = to_pointset(uniform_points(200000, 3, 0, 1000, rng));
  auto s = stat(Metric::Periodic, Traversal::Auto, Binning::logarithmic(0.1, 25.0, 20));
  s.box = Box::cube(3, 1000.0);
  const Result g = run(s, A, nullptr, on("cuda"));
  EXPECT_NE(g.info.plan.find("ran: grid"), std::string::npos) << g.info.plan;
  EXPECT_LT(g.info.pairs_evaluated, pair_total(A.size(), A.size(), true) / 100);
  EXPECT_EQ(g.counts, run(s, A, nullptr, on("cpu")).counts);
}

// The windowed grid (3-D columns r_max / R wide, windows along the last axis): every R the planner
// may pick, dense and clustered data, periodic (down to three cells of r_max along an axis) and
// open, auto and cross, against the CPU's brute force.
TEST_F(Cuda, WindowedGridEveryReach) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  const PointSet U = to_pointset(uniform_points(24000, 3, 0, L, rng, true));
  const PointSet C = generate_clustered_box(24000, 3, L, ClusterOptions{}, seed);
  const PointSet B = to_pointset(uniform_points(7000, 3, 0, L, rng, true));
  for (const char* reach : {"1", "2", "3", "5"}) {
    setenv("TWOBODY_GRID_REACH", reach, 1);
    // Two anchors a lane (units of 64) on the unweighted histograms, one on the rest.
    setenv("TWOBODY_GRID_ANCHORS", reach[0] == '1' || reach[0] == '3' ? "2" : "1", 1);
    for (double rmax : {6.0, 17.0, 33.0}) {
      for (bool periodic : {false, true}) {
        for (const PointSet* A : {&U, &C}) {
          SCOPED_TRACE(std::string("reach ") + reach + " rmax " + std::to_string(rmax) + " periodic " +
                       std::to_string(periodic) + (A == &C ? " clustered" : " uniform"));
          auto s = stat(periodic ? Metric::Periodic : Metric::Euclidean, Traversal::Auto,
                        Binning::logarithmic(0.1, rmax, 20));
          if (periodic) s.box = Box::cube(3, L);
          const Result g = run(s, *A, nullptr, grid_on_cuda());
          EXPECT_NE(g.info.plan.find("windows"), std::string::npos) << g.info.plan;
          // (At r_max 6 reach 3 would need more cells than points: the planner keeps cubic cells.)
          if ((reach[0] == '1' || reach[0] == '3') && rmax > 10)
            EXPECT_NE(g.info.plan.find("two anchors a lane"), std::string::npos) << g.info.plan;
          expect_grid_matches(s, *A, nullptr);
          s.traversal = Traversal::Cross;
          expect_grid_matches(s, *A, &B);
          if (A == &U) {
            s.weighted = true;
            expect_grid_matches(s, *A, &B);
            s.weighted = false;
            s.traversal = Traversal::Auto;
            s.reduction = reduce::PairList{Binning::linear(0.0, rmax / 3, 1)};
            expect_grid_matches(s, *A, nullptr);
          }
        }
      }
    }
  }
  unsetenv("TWOBODY_GRID_REACH");
  unsetenv("TWOBODY_GRID_ANCHORS");
}

// Angles through the grid: unit vectors in 3-D cells of the chord 2 sin(θ_max / 2), against the
// CPU's brute force, auto and cross, small and large θ_max, a patch and the whole sky.
TEST_F(Cuda, AngularThroughTheGrid) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double dec_lo : {-90.0, 10.0}) {
    const auto a = to_pointset(testing_support::sky_points(30000, rng, dec_lo, 60));
    const auto b = to_pointset(testing_support::sky_points(9000, rng, dec_lo, 60));
    for (double theta : {0.5, 3.0, 12.0, 50.0}) {
      SCOPED_TRACE("dec from " + std::to_string(dec_lo) + " theta_max " + std::to_string(theta));
      const auto bins = Binning::logarithmic(theta / 300, theta, 20);
      const auto g = angular(a, nullptr, bins, false, grid_on_cuda());
      EXPECT_NE(g.raw.info.plan.find("ran: grid"), std::string::npos) << g.raw.info.plan;
      EXPECT_EQ(g.raw.counts, angular(a, nullptr, bins, false, brute_on_cpu()).raw.counts);
      EXPECT_EQ(angular(a, &b, bins, false, grid_on_cuda()).raw.counts,
                angular(a, &b, bins, false, brute_on_cpu()).raw.counts);
    }
  }
}

// Jackknife regions on the GPU (seed 003's inverse jackknives, through the grid kernels): the
// per-region histograms equal the CPU's, in a box, in open space and on the sky, auto and cross,
// weighted and not.
TEST_F(Cuda, JackknifeRegionsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto labels = [&](std::size_t n, int R) {
    std::vector<std::int32_t> l(n);
    std::uniform_int_distribution<int> u(0, R - 1);
    for (auto& x : l) x = u(rng);
    return l;
  };
  const int R = 7;
  PointSet A = to_pointset(uniform_points(20000, 3, 0, 100, rng, true));
  PointSet B = to_pointset(uniform_points(6000, 3, 0, 100, rng, true));
  A.set_regions(labels(A.size(), R));
  B.set_regions(labels(B.size(), R));
  for (bool periodic : {true, false}) {
    for (bool weighted : {false, true}) {
      for (bool cross : {false, true}) {
        SCOPED_TRACE(std::string(periodic ? "periodic" : "open") + (weighted ? " weighted" : "") + (cross ? " cross" : " auto"));
        auto s = stat(periodic ? Metric::Periodic : Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto,
                      Binning::logarithmic(0.2, 12.0, 15), OutputKind::Histogram, weighted);
        if (periodic) s.box = Box::cube(3, 100.0);
        s.set_regions(R);
        const Result g = run(s, A, cross ? &B : nullptr, on("cuda"));
        const Result c = run(s, A, cross ? &B : nullptr, brute_on_cpu());
        EXPECT_EQ(g.info.backend, "cuda");
        expect_same(g, c);
        ASSERT_EQ(g.regions, std::size_t(R));
        EXPECT_EQ(g.region_counts, c.region_counts);
        expect_same_sums(g.region_weighted, c.region_weighted, "region weighted");
      }
    }
  }
  // On the sky, through angular().
  PointSet u = sky_to_unit_vectors(to_pointset(testing_support::sky_points(15000, rng, -30, 60)));
  u.set_regions(labels(u.size(), R));
  Statistic sky;
  sky.metric = Metric::Angular;
  sky.reduction = reduce::Histogram{.bins = Binning::logarithmic(0.05, 8.0, 12), .regions = R};
  EXPECT_EQ(run(sky, u, nullptr, on("cuda")).region_counts, run(sky, u, nullptr, brute_on_cpu()).region_counts);
}

// 2-D (r_p, pi) and (s, mu) bins run on the GPU (Backend::refuses none), and --explain says how; the
// comparisons with the CPU are the Binned2D* tests at the end of this file.
TEST_F(Cuda, Binned2DRunsOnTheGpuAndSaysHow) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet A = to_pointset(uniform_points(5000, 3, 0, 100, rng));
  Statistic s;
  s.metric = Metric::Periodic;
  s.box = Box::cube(3, 100.0);
  s.reduction = reduce::Histogram2D{Binning2D::rp_pi(Binning::logarithmic(0.5, 20.0, 8), 20.0)};
  EXPECT_EQ(make_cuda_backend()->refuses(s), "");
  const Result g = run(s, A, nullptr, on("cuda"));
  EXPECT_EQ(g.info.backend, "cuda");
  EXPECT_EQ(g.info.plan.find("this statistic runs on the cpu"), std::string::npos) << g.info.plan;
  EXPECT_NE(g.info.plan.find("2-D bins: every pair within the reach"), std::string::npos) << g.info.plan;
  const std::string e = explain(s, A, nullptr, on("cuda"));
  EXPECT_NE(e.find("backend: cuda"), std::string::npos) << e;
  EXPECT_NE(e.find("binned in float64 on the device by RpPiBins"), std::string::npos) << e;
  EXPECT_EQ(g.counts, run(s, A, nullptr, brute_on_cpu()).counts);
  EXPECT_EQ(paircount_2d(A, nullptr, s.binning2d(), s.box, false, on("cuda")).raw.counts, g.counts);
}

// ---- Per-point reductions (OutputKind::PerPoint, issue 3): per point, its partners in [lo, hi) and
// the sum of their weights. The CUDA arrays must equal the CPU's brute force exactly (weighted sums
// too: exact sums), through the brute-force tiles and the grid, auto and cross, open and periodic.

namespace {

Statistic per_point_stat(Metric m, Traversal t, double lo, double hi, bool weighted, double box = 0) {
  Statistic s = stat(m, t, Binning::from_edges({lo, hi}), OutputKind::PerPoint, weighted);
  if (box > 0) s.box = Box::cube(3, box);
  return s;
}

RunOptions brute_on_cuda() {
  RunOptions o = on("cuda");
  o.path = "brute";
  return o;
}

void expect_same_points(const PointReductions& g, const PointReductions& c) {
  EXPECT_EQ(g.counts, c.counts);
  expect_same_sums(g.weighted, c.weighted, "weighted");
}

// The CUDA run on `opt`'s path against the CPU's brute force.
void expect_per_point_matches(const Statistic& s, const PointSet& A, const PointSet* B, const RunOptions& opt) {
  const Result g = run(s, A, B, opt);
  const Result c = run(s, A, B, brute_on_cpu());
  EXPECT_EQ(g.info.backend, "cuda");
  if (opt.path == "grid") EXPECT_NE(g.info.plan.find("ran: grid"), std::string::npos) << g.info.plan;
  if (opt.path == "brute") EXPECT_NE(g.info.plan.find("ran: brute force (requested)"), std::string::npos) << g.info.plan;
  ASSERT_EQ(g.per_point_a.counts.size(), A.size());
  ASSERT_EQ(g.per_point_b.counts.size(), B ? B->size() : 0);
  expect_same_points(g.per_point_a, c.per_point_a);
  expect_same_points(g.per_point_b, c.per_point_b);
}

}  // namespace

TEST_F(Cuda, PerPointEqualsCpuBruteAndGrid) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  for (bool clustered : {false, true}) {
    PointSet A = clustered ? generate_clustered_box(9000, 3, L, ClusterOptions{}, seed)
                           : to_pointset(uniform_points(9000, 3, 0, L, rng, true));
    if (clustered) {
      std::uniform_real_distribution<double> u(0.5, 2.0);
      std::vector<double> w(A.size());
      for (auto& x : w) x = u(rng);
      A.set_weights(std::move(w));
    }
    const PointSet B = to_pointset(uniform_points(4001, 3, 0, L, rng, true));
    // r_max from a few percent of the box (many cells) to just under half (two cells a side).
    for (double rmax : {3.0, 9.5, 26.0, 49.9}) {
      for (bool periodic : {false, true}) {
        for (bool weighted : {false, true}) {
          SCOPED_TRACE("clustered " + std::to_string(clustered) + " rmax " + std::to_string(rmax) + " periodic " +
                       std::to_string(periodic) + " weighted " + std::to_string(weighted));
          const Metric m = periodic ? Metric::Periodic : Metric::Euclidean;
          const double lo = rmax / 10;
          for (const RunOptions& opt : {brute_on_cuda(), grid_on_cuda()}) {
            expect_per_point_matches(per_point_stat(m, Traversal::Auto, 0.0, rmax, weighted, periodic ? L : 0), A,
                                     nullptr, opt);
            expect_per_point_matches(per_point_stat(m, Traversal::Cross, lo, rmax, weighted, periodic ? L : 0), A, &B,
                                     opt);
          }
        }
      }
    }
  }
}

// Sizes that fill no tile, unit or warp evenly, and other dimensions, on both paths.
TEST_F(Cuda, PerPointOddSizesAndDimensions) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int dim : {1, 2, 3, 5}) {
    for (std::size_t n : {1u, 2u, 33u, 2049u, 6001u}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " n " + std::to_string(n));
      const PointSet A = to_pointset(uniform_points(n, dim, 0, 20, rng, true));
      const PointSet B = to_pointset(uniform_points(n / 2 + 4097, dim, 0, 20, rng, true));
      const double rmax = dim == 1 ? 0.05 : dim == 2 ? 0.6 : 2.5;
      for (const RunOptions& opt : {brute_on_cuda(), grid_on_cuda()}) {
        if (n >= 2)
          expect_per_point_matches(per_point_stat(Metric::Euclidean, Traversal::Auto, 0.0, rmax, true), A, nullptr, opt);
        expect_per_point_matches(per_point_stat(Metric::Euclidean, Traversal::Cross, 0.0, rmax, true), A, &B, opt);
      }
    }
  }
}

// A lattice: most pairs lie exactly on an edge and are settled in float64.
TEST_F(Cuda, PerPointLatticeEdgesSettledExactly) {
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto A = to_pointset(p);
  for (const RunOptions& opt : {brute_on_cuda(), grid_on_cuda()}) {
    const auto s = per_point_stat(Metric::Euclidean, Traversal::Auto, 0.5, 1.0, false);
    const Result g = run(s, A, nullptr, opt);
    EXPECT_GT(g.info.pairs_settled_fp64, 0u);
    expect_per_point_matches(s, A, nullptr, opt);
    Statistic ps = per_point_stat(Metric::Periodic, Traversal::Auto, 1.0, 4.25, false);
    ps.box = Box::from_lengths(std::vector<double>{12.0, 10.0, 8.5});
    expect_per_point_matches(ps, A, nullptr, opt);
  }
}

// The windowed grid at every reach the planner may pick, and concentrated data (a few dense cells).
TEST_F(Cuda, PerPointWindowedGridAndDenseCells) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  const PointSet U = to_pointset(uniform_points(24000, 3, 0, L, rng, true));
  const PointSet C = generate_clustered_box(24000, 3, L, ClusterOptions{}, seed);
  const PointSet B = to_pointset(uniform_points(7000, 3, 0, L, rng, true));
  for (const char* reach : {"1", "2", "3", "5"}) {
    setenv("TWOBODY_GRID_REACH", reach, 1);
    for (double rmax : {6.0, 33.0}) {
      for (bool periodic : {false, true}) {
        SCOPED_TRACE(std::string("reach ") + reach + " rmax " + std::to_string(rmax) + " periodic " +
                     std::to_string(periodic));
        const Metric m = periodic ? Metric::Periodic : Metric::Euclidean;
        const Result g = run(per_point_stat(m, Traversal::Auto, 0.0, rmax, false, periodic ? L : 0), U, nullptr,
                             grid_on_cuda());
        EXPECT_NE(g.info.plan.find("windows"), std::string::npos) << g.info.plan;
        expect_per_point_matches(per_point_stat(m, Traversal::Auto, 0.0, rmax, false, periodic ? L : 0), C, nullptr,
                                 grid_on_cuda());
        expect_per_point_matches(per_point_stat(m, Traversal::Cross, 0.0, rmax, true, periodic ? L : 0), U, &B,
                                 grid_on_cuda());
      }
    }
  }
  unsetenv("TWOBODY_GRID_REACH");
  const PointSet D = concentrated(30000, 1000.0, rng, true);
  expect_per_point_matches(per_point_stat(Metric::Periodic, Traversal::Auto, 0.0, 20.0, true, 1000.0), D, nullptr,
                           grid_on_cuda());
  expect_per_point_matches(per_point_stat(Metric::Periodic, Traversal::Cross, 0.0, 20.0, true, 1000.0), D, &U,
                           grid_on_cuda());
}

// Angles (unit vectors, the grid on chords), and the statistic function on the default path.
TEST_F(Cuda, PerPointAngularAndNeighbourCounts) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet a = sky_to_unit_vectors(to_pointset(testing_support::sky_points(20000, rng, 10, 60)));
  const PointSet b = sky_to_unit_vectors(to_pointset(testing_support::sky_points(7000, rng, 10, 60)));
  for (double theta : {0.5, 4.0}) {
    SCOPED_TRACE("theta " + std::to_string(theta));
    const auto s = per_point_stat(Metric::Angular, Traversal::Auto, 0.0, theta, false);
    expect_per_point_matches(s, a, nullptr, grid_on_cuda());
    expect_per_point_matches(s, a, nullptr, brute_on_cuda());
    expect_per_point_matches(per_point_stat(Metric::Angular, Traversal::Cross, 0.0, theta, false), a, &b,
                             grid_on_cuda());
  }
  const PointSet p = to_pointset(uniform_points(200000, 3, 0, 1000, rng, true));
  const Result g = neighbour_counts(p, nullptr, Binning::from_edges({0.0, 12.0}), Box::cube(3, 1000.0), true, on("cuda"));
  const Result c = neighbour_counts(p, nullptr, Binning::from_edges({0.0, 12.0}), Box::cube(3, 1000.0), true, on("cpu"));
  EXPECT_EQ(g.info.backend, "cuda");
  EXPECT_NE(g.info.plan.find("ran: grid"), std::string::npos) << g.info.plan;
  expect_same_points(g.per_point_a, c.per_point_a);
}

// ---- Pair lists through the direct output buffer (issues 3 and 4, include/twobody/cuda/pair_pool.hpp):
// pages claimed by one atomic, and a pool that runs out drained and the kernel resumed over the
// units left, without a pair lost or repeated. Tiny pools (TWOBODY_PAIR_PAGE_SIZE,
// TWOBODY_PAIR_POOL_PAGES) force dozens of launches; every list must equal the CPU's: the same
// (i, j) in the same order, the same float64 values.

namespace {

RunOptions cuda_on_path(const std::string& path) {
  RunOptions o = on("cuda");
  o.path = path;
  return o;
}

// The pair-list pool's shape for one scope (null: the default).
class PoolShape {
 public:
  PoolShape(const char* page_size, const char* pages) {
    set("TWOBODY_PAIR_PAGE_SIZE", page_size);
    set("TWOBODY_PAIR_POOL_PAGES", pages);
  }
  ~PoolShape() {
    unsetenv("TWOBODY_PAIR_PAGE_SIZE");
    unsetenv("TWOBODY_PAIR_POOL_PAGES");
  }
  PoolShape(const PoolShape&) = delete;
  PoolShape& operator=(const PoolShape&) = delete;

 private:
  static void set(const char* name, const char* v) {
    if (v)
      setenv(name, v, 1);
    else
      unsetenv(name);
  }
};

// The launches a CUDA pair list took, from its plan ("pair list: ... pairs, N launches"); -1 if absent.
int list_launches(const Result& r) {
  const auto at = r.info.plan.find(" pairs, ", r.info.plan.find("pair list: "));
  return at == std::string::npos ? -1 : std::atoi(r.info.plan.c_str() + at + 8);
}

// The same (i, j) in the same order; values equal, or for angles to a few ulps: θ = acos(…) in
// degrees comes from the device's acos, which may differ from the host's in the last bit (the
// pair's bin, decided on the float64 key, does not).
void expect_same_pairs(const Result& g, const Result& c, bool angles = false) {
  ASSERT_EQ(g.pairs.size(), c.pairs.size());
  for (std::size_t k = 0; k < c.pairs.size(); ++k) {
    ASSERT_EQ(g.pairs[k].i, c.pairs[k].i) << k;
    ASSERT_EQ(g.pairs[k].j, c.pairs[k].j) << k;
    if (angles)
      ASSERT_NEAR(g.pairs[k].value, c.pairs[k].value, 1e-14 * std::max(1.0, std::abs(c.pairs[k].value))) << k;
    else
      ASSERT_EQ(g.pairs[k].value, c.pairs[k].value) << k;
  }
}

// The CUDA list on `path` ("brute" or "grid") against the CPU's `c`, through a pool of pages of
// `page_size` pairs holding about 1/launches of the list (page_size null: the default pool, which
// holds it all); returns the launches taken.
int expect_list_through_pool(const Statistic& s, const PointSet& A, const PointSet* B, const std::string& path,
                             const Result& c, const char* page_size, unsigned launches) {
  const std::size_t n = c.pairs.size();
  std::string pages;
  if (page_size) pages = std::to_string(std::max<std::size_t>(1, n / launches / std::strtoull(page_size, nullptr, 10)));
  SCOPED_TRACE(path + " path, " + std::to_string(n) + " pairs, pool " + (page_size ? pages + " x " + page_size : "default"));
  const PoolShape shape(page_size, page_size ? pages.c_str() : nullptr);
  const Result g = run(s, A, B, cuda_on_path(path));
  EXPECT_EQ(g.info.backend, "cuda");
  EXPECT_NE(g.info.plan.find(path == "grid" ? "ran: grid" : "ran: brute force"), std::string::npos) << g.info.plan;
  expect_same_pairs(g, c, s.metric == Metric::Angular);
  const int taken = list_launches(g);
  if (page_size) {
    // Each launch writes at most the pool: at least n / pool launches.
    const std::size_t pool = std::stoull(pages) * std::strtoull(page_size, nullptr, 10);
    EXPECT_GE(static_cast<std::size_t>(taken), n / pool) << g.info.plan;
  } else {
    EXPECT_EQ(taken, 1) << g.info.plan;
  }
  return taken;
}

Statistic list_stat(Metric m, Traversal t, double rmax, double box = 0) {
  Statistic s = stat(m, t, Binning::from_edges({0.0, rmax}), OutputKind::PairList);
  if (box > 0) s.box = Box::cube(3, box);
  return s;
}

}  // namespace

// Brute-force tiles and grid units, auto and cross, open and periodic, uniform and clustered, through
// tiny pools (dozens of resumes; pages of 1, 5 and 33 pairs, the last more than a warp writes at
// once) and through the default pool (one launch).
TEST_F(Cuda, PairListsResumeThroughTinyPoolsAndEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  const PointSet U = to_pointset(uniform_points(5000, 3, 0, L, rng));
  const PointSet C = generate_clustered_box(5000, 3, L, ClusterOptions{}, seed);
  const PointSet B = to_pointset(uniform_points(3000, 3, 0, L, rng));
  int resumed = 0;
  for (const PointSet* A : {&U, &C}) {
    for (bool periodic : {false, true}) {
      SCOPED_TRACE(std::string(A == &C ? "clustered" : "uniform") + (periodic ? " periodic" : " open"));
      const Metric m = periodic ? Metric::Periodic : Metric::Euclidean;
      // Clustered auto pairs are dense at small r; a cross with the uniform set needs the larger r.
      const Statistic sa = list_stat(m, Traversal::Auto, A == &C ? 1.5 : 5.0, periodic ? L : 0);
      const Statistic sc = list_stat(m, Traversal::Cross, 5.0, periodic ? L : 0);
      const Result ca = run(sa, *A, nullptr, brute_on_cpu());
      const Result cc = run(sc, *A, &B, brute_on_cpu());
      ASSERT_GT(ca.pairs.size(), 1000u);
      ASSERT_GT(cc.pairs.size(), 1000u);
      for (const char* path : {"brute", "grid"}) {
        for (const char* page_size : {"5", "33", static_cast<const char*>(nullptr)}) {
          resumed += expect_list_through_pool(sa, *A, nullptr, path, ca, page_size, 40) > 1;
          resumed += expect_list_through_pool(sc, *A, &B, path, cc, page_size, 40) > 1;
        }
      }
    }
  }
  EXPECT_EQ(resumed, 32);
  // A pool of one page of one pair: a launch a pair.
  const PointSet S = to_pointset(uniform_points(400, 3, 0, L, rng));
  const Statistic ss = list_stat(Metric::Periodic, Traversal::Auto, 10.0, L);
  const Result cs = run(ss, S, nullptr, brute_on_cpu());
  ASSERT_GT(cs.pairs.size(), 50u);
  for (const char* path : {"brute", "grid"})
    EXPECT_EQ(expect_list_through_pool(ss, S, nullptr, path, cs, "1", static_cast<unsigned>(cs.pairs.size())),
              static_cast<int>(cs.pairs.size()));
}

// Angles: unit vectors, brute force and the grid on chords, auto and cross.
TEST_F(Cuda, PairListsOfAnglesResumeAndEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet a = sky_to_unit_vectors(to_pointset(testing_support::sky_points(4000, rng, 10, 60)));
  const PointSet b = sky_to_unit_vectors(to_pointset(testing_support::sky_points(2500, rng, 10, 60)));
  const Statistic sa = list_stat(Metric::Angular, Traversal::Auto, 2.0);
  const Statistic sc = list_stat(Metric::Angular, Traversal::Cross, 2.0);
  const Result ca = run(sa, a, nullptr, brute_on_cpu());
  const Result cc = run(sc, a, &b, brute_on_cpu());
  ASSERT_GT(ca.pairs.size(), 1000u);
  ASSERT_GT(cc.pairs.size(), 1000u);
  for (const char* path : {"brute", "grid"}) {
    for (const char* page_size : {"7", static_cast<const char*>(nullptr)}) {
      expect_list_through_pool(sa, a, nullptr, path, ca, page_size, 30);
      expect_list_through_pool(sc, a, &b, path, cc, page_size, 30);
    }
  }
}

// More pairs than the pool holds many times over (pages of warp-scale and default size), on both
// paths, against the CPU (its grid: the brute force would take long).
TEST_F(Cuda, PairListManyTimesThePool) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  const PointSet A = to_pointset(uniform_points(100000, 3, 0, L, rng));
  const Statistic s = list_stat(Metric::Periodic, Traversal::Auto, 2.5, L);
  const Result c = run(s, A, nullptr, on("cpu"));
  ASSERT_GT(c.pairs.size(), 200000u);
  for (const char* path : {"grid", "brute"}) {
    EXPECT_GE(expect_list_through_pool(s, A, nullptr, path, c, "4096", 20), 20);
    EXPECT_GE(expect_list_through_pool(s, A, nullptr, path, c, "64", 20), 20);
  }
  expect_list_through_pool(s, A, nullptr, "grid", c, nullptr, 1);
}

// RunOptions::pair_sink: the batches of each drain, each sorted, every pair once, Result::pairs empty;
// and RunOptions::max_pairs refuses a longer list with Error(Resource), whatever the pool.
TEST_F(Cuda, PairListSinkAndLimit) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet A = to_pointset(uniform_points(6000, 3, 0, 100, rng));
  const Statistic s = list_stat(Metric::Periodic, Traversal::Auto, 5.0, 100);
  const Result c = run(s, A, nullptr, brute_on_cpu());
  ASSERT_GT(c.pairs.size(), 1000u);
  for (const char* path : {"brute", "grid"}) {
    for (const char* pages : {"4", static_cast<const char*>(nullptr)}) {
      SCOPED_TRACE(std::string(path) + (pages ? " tiny pool" : " default pool"));
      const PoolShape shape(pages ? "32" : nullptr, pages);
      RunOptions o = cuda_on_path(path);
      std::vector<PairRecord> sunk;
      int batches = 0;
      o.pair_sink = [&](std::span<const PairRecord> b) {
        ++batches;
        EXPECT_TRUE(std::is_sorted(b.begin(), b.end(), [](const PairRecord& x, const PairRecord& y) {
          return x.i != y.i ? x.i < y.i : x.j < y.j;
        }));
        sunk.insert(sunk.end(), b.begin(), b.end());
      };
      const Result g = run(s, A, nullptr, o);
      EXPECT_TRUE(g.pairs.empty());
      EXPECT_EQ(g.info.backend, "cuda");
      if (pages) EXPECT_GT(batches, 10);
      std::sort(sunk.begin(), sunk.end(), [](const PairRecord& x, const PairRecord& y) {
        return x.i != y.i ? x.i < y.i : x.j < y.j;
      });
      Result got;
      got.pairs = std::move(sunk);
      expect_same_pairs(got, c);
      o.pair_sink = nullptr;
      o.max_pairs = c.pairs.size() - 1;
      try {
        run(s, A, nullptr, o);
        ADD_FAILURE() << "no error past max_pairs";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Resource);
        EXPECT_NE(std::string(e.what()).find("exceeds the limit"), std::string::npos) << e.what();
      }
      o.max_pairs = c.pairs.size();
      expect_same_pairs(run(s, A, nullptr, o), c);
    }
  }
}

// The counting tiles (counting_tiles.cuh): Euclidean counts and equal-width histograms over all
// pairs. The plan must say they ran, and every count must be the CPU backend's: ragged tiles,
// auto and cross, 1–3 dimensions, pairs below and beyond the bins, large offsets, forced copies.
TEST_F(Cuda, CountingTilesEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  setenv("TWOBODY_TENSOR_COUNT", "0", 1);  // the CUDA-core counting tiles (TensorCountsEqualCpu: the others)
  RunOptions brute = on("cuda");
  brute.path = "brute";  // short ranges would go to the grid
  // Histograms both ways: d² from differences (TWOBODY_FP64_TENSOR_HISTOGRAM=0) and, where the
  // plan takes it, from the FP64 tensor cores (Fp64TensorHistogramsEqualCpu: more of those).
  auto check = [&](const Statistic& s, const PointSet& A, const PointSet* B) {
    const auto cpu = run(s, A, B, on("cpu"));
    for (const char* fp64 : {"0", "1"}) {
      setenv("TWOBODY_FP64_TENSOR_HISTOGRAM", fp64, 1);
      const auto g = run(s, A, B, brute);
      EXPECT_NE(ran(g).find("counting tiles"), std::string::npos) << g.info.plan;
      if (*fp64 == '0') EXPECT_EQ(ran(g).find("FP64 tensor"), std::string::npos) << g.info.plan;
      expect_same(g, cpu);
    }
    unsetenv("TWOBODY_FP64_TENSOR_HISTOGRAM");
  };
  for (int dim : {1, 2, 3})
    for (double offset : {0.0, 1e4}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " offset " + std::to_string(offset));
      const auto A = to_pointset(uniform_points(9001, dim, offset, offset + 1.0, rng));
      const auto B = to_pointset(uniform_points(3001, dim, offset, offset + 1.0, rng));
      const double diag = std::sqrt(double(dim)) * 1.000001;
      for (const Binning& bins : {Binning::linear(0.0, diag, 1), Binning::linear(0.0, diag, 8), Binning::linear(0.0, diag, 256),
                                  Binning::linear(0.0, diag, 1024), Binning::linear(0.2, 0.9, 70)}) {
        check(stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr);
        check(stat(Metric::Euclidean, Traversal::Cross, bins), A, &B);
      }
      for (const Binning& range : {Binning::from_edges({0.0, 0.1}), Binning::from_edges({0.05, 0.3})}) {
        check(stat(Metric::Euclidean, Traversal::Auto, range, OutputKind::Reduction), A, nullptr);
        check(stat(Metric::Euclidean, Traversal::Cross, range, OutputKind::Reduction), A, &B);
      }
    }
  // Whole tiles (no sentinels, no clamp) and forced numbers of copies.
  const auto P = to_pointset(uniform_points(8192, 3, 0, 1, rng));
  for (const char* h : {"1", "4", "32"}) {
    setenv("TWOBODY_HIST_COPIES", h, 1);
    check(stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 100)), P, nullptr);
  }
  unsetenv("TWOBODY_HIST_COPIES");
  // Thousands of bins (~1% of the pairs settled out of line), ragged tiles and pairs beyond the
  // bins too.
  // (Both sets near 1e4: a cross count against P, at the origin, spans 10^4 and declines.)
  const auto Q = to_pointset(uniform_points(6001, 3, 1e4, 1e4 + 1.0, rng));
  const auto Q2 = to_pointset(uniform_points(3001, 3, 1e4, 1e4 + 1.0, rng));
  for (const Binning& bins : {Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 8192), Binning::linear(0.3, 0.9, 3000)}) {
    check(stat(Metric::Euclidean, Traversal::Auto, bins), Q, nullptr);
    check(stat(Metric::Euclidean, Traversal::Cross, bins), Q, &Q2);
  }
  // Both ways of finding the pairs near an edge, forced (the plan picks one by the guard's width):
  // a marked word an anchor, revisited a warp step an anchor; a flag bit a pair.
  for (const char* pf : {"0", "1"}) {
    setenv("TWOBODY_HIST_PAIR_FLAGS", pf, 1);
    for (const Binning& bins : {Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 256), Binning::linear(0.3, 0.9, 3000),
                                Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 8192)}) {
      SCOPED_TRACE(std::string("TWOBODY_HIST_PAIR_FLAGS=") + pf + ", " + std::to_string(bins.nbins()) + " bins");
      check(stat(Metric::Euclidean, Traversal::Auto, bins), Q, nullptr);
      check(stat(Metric::Euclidean, Traversal::Cross, bins), Q, &Q2);
      check(stat(Metric::Euclidean, Traversal::Auto, bins), P, nullptr);
    }
  }
  unsetenv("TWOBODY_HIST_PAIR_FLAGS");
  // TWOBODY_COUNTING_TILES=0: the generic agent, the same counts.
  setenv("TWOBODY_COUNTING_TILES", "0", 1);
  const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 1.0, 64));
  const auto g = run(s, P, nullptr, on("cuda"));
  unsetenv("TWOBODY_COUNTING_TILES");
  unsetenv("TWOBODY_TENSOR_COUNT");
  EXPECT_EQ(ran(g).find("counting tiles"), std::string::npos) << g.info.plan;
  EXPECT_EQ(g.counts, run(s, P, nullptr, on("cuda")).counts);
}

// w(θ) with three random catalogues and a jackknife on the GPU: each catalogue is prepared on a
// host thread while the previous one is counted; every count, region count and estimate equals the
// CPU backend's (which prepares them in turn).
TEST_F(Cuda, CorrelationOverlapsPreparationWithCounts) {
  const PointSet data = generate_uniform_sky(6000, 11);
  const std::vector<PointSet> randoms = {generate_uniform_sky(7000, 12), generate_uniform_sky(5000, 13),
                                         generate_uniform_sky(8000, 14)};
  const Binning bins = Binning::logarithmic(0.1, 20.0, 12);
  JackknifeRequest jk;
  jk.regions = 8;
  const auto g = correlation(data, randoms, bins, CorrelationSpace::Sky, std::nullopt, false, on("cuda"), jk);
  const auto c = correlation(data, randoms, bins, CorrelationSpace::Sky, std::nullopt, false, on("cpu"), jk);
  EXPECT_NE(g.raw.info.plan.find("on a host thread beside the counts"), std::string::npos) << g.raw.info.plan;
  EXPECT_EQ(c.raw.info.plan.find("on a host thread beside the counts"), std::string::npos) << c.raw.info.plan;
  EXPECT_EQ(g.raw.counts, c.raw.counts);
  ASSERT_EQ(g.derived.size(), c.derived.size());
  for (std::size_t k = 0; k < g.derived.size(); ++k) {
    SCOPED_TRACE(g.derived[k].name);
    EXPECT_EQ(g.derived[k].values, c.derived[k].values);
  }
  ASSERT_TRUE(g.jackknife && c.jackknife);
  EXPECT_EQ(g.jackknife->dr, c.jackknife->dr);
  EXPECT_EQ(g.jackknife->rr, c.jackknife->rr);
  EXPECT_EQ(g.jackknife->samples, c.jackknife->samples);
}

// A ResidentSet (a correlation's data catalogue): the first run uploads the set in its frame, the
// first cross count that takes the grid indexes it, later cross counts against partners inside the
// frame reuse both, partners beyond it make their own; runs on two threads at once share it. Every
// count equals the CPU's brute force: open space, a periodic box and the sky, weighted with
// regions and not, through the grid and by brute force.
TEST_F(Cuda, ResidentSetIsUploadedAndIndexedOnce) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 5;
  auto labelled = [&](PointSet p) {
    std::vector<std::int32_t> l(p.size());
    std::uniform_int_distribution<int> u(0, R - 1);
    for (auto& x : l) x = u(rng);
    p.set_regions(std::move(l));
    return p;
  };
  const auto has = [](const Result& r, const char* what) { return r.info.plan.find(what) != std::string::npos; };
  for (const char* space : {"open", "periodic", "sky"}) {
    const bool sky = std::string(space) == "sky", periodic = std::string(space) == "periodic";
    auto make = [&](std::size_t n, double hi) {
      if (!sky) return labelled(to_pointset(uniform_points(n, 3, 0, hi, rng, true)));
      PointSet u = sky_to_unit_vectors(to_pointset(testing_support::sky_points(n, rng, -20, 50)));
      std::vector<double> w(n);
      std::uniform_real_distribution<double> uw(0.5, 2.0);
      for (auto& x : w) x = uw(rng);
      u.set_weights(std::move(w));
      return labelled(std::move(u));
    };
    const PointSet A = make(20000, 100);
    const std::vector<PointSet> Bs = {make(15000, 100), make(12000, 100), make(15000, 100)};
    // Partners beyond the data's frame (open space; on the sky and in the box they stay inside).
    const PointSet far = make(10000, 130);
    for (bool weighted : {false, true}) {
      for (int regions : {0, R}) {
        for (double hi : {6.0, 45.0}) {  // the grid (and regions: always), brute force
          SCOPED_TRACE(std::string(space) + (weighted ? " weighted" : "") + " regions " + std::to_string(regions) +
                       " hi " + std::to_string(hi));
          Statistic s = stat(sky ? Metric::Angular : periodic ? Metric::Periodic : Metric::Euclidean, Traversal::Auto,
                             Binning::logarithmic(hi / 40, hi, 14), OutputKind::Histogram, weighted);
          if (periodic) s.box = Box::cube(3, 100.0);
          s.set_regions(regions);
          RunOptions o = on("cuda");
          o.resident = std::make_shared<const ResidentSet>(A);
          const auto same = [&](const Result& g, const Result& c) {
            expect_same(g, c);
            EXPECT_EQ(g.region_counts, c.region_counts);
          };
          const Result dd = run(s, A, nullptr, o);
          EXPECT_TRUE(has(dd, "the first set uploaded for this and later runs")) << dd.info.plan;
          same(dd, run(s, A, nullptr, brute_on_cpu()));
          Statistic x = s;
          x.traversal = Traversal::Cross;
          bool indexed = false;  // an earlier cross count took the grid
          for (std::size_t i = 0; i < Bs.size(); ++i) {
            const Result g = run(x, A, &Bs[i], o);
            EXPECT_TRUE(has(g, "the first set as an earlier run uploaded it")) << g.info.plan;
            if (indexed && has(g, "ran: grid")) EXPECT_TRUE(has(g, "the first set's cells as an earlier run made them")) << g.info.plan;
            indexed = indexed || has(g, "ran: grid");
            if (regions > 0) EXPECT_TRUE(has(g, "ran: grid")) << g.info.plan;
            same(g, run(x, A, &Bs[i], brute_on_cpu()));
          }
          if (!sky && !periodic) {
            const Result g = run(x, A, &far, o);
            EXPECT_TRUE(has(g, "uploaded afresh: the partners reach beyond the frame")) << g.info.plan;
            same(g, run(x, A, &far, brute_on_cpu()));
          }
          // Two runs at once on a fresh ResidentSet: one uploads (and indexes), the other waits and reuses.
          RunOptions fresh = on("cuda");
          fresh.resident = std::make_shared<const ResidentSet>(A);
          const int dev = current_cuda_device();
          auto other = std::async(std::launch::async, [&] {
            set_current_cuda_device(dev);
            return run(x, A, &Bs[1], fresh);
          });
          const Result first = run(x, A, &Bs[0], fresh);
          same(first, run(x, A, &Bs[0], brute_on_cpu()));
          same(other.get(), run(x, A, &Bs[1], brute_on_cpu()));
          if (periodic) {
            // The same ResidentSet in another box: the kept copy was shifted by the first box's
            // half (its coordinates' frame), so it is made again.
            Statistic y = x;
            y.box = Box::cube(3, 130.0);
            const Result g = run(y, A, &Bs[0], o);
            EXPECT_TRUE(has(g, "the first set uploaded for this and later runs")) << g.info.plan;
            same(g, run(y, A, &Bs[0], brute_on_cpu()));
          }
        }
      }
    }
  }
}

// Dense matrices in seed 001's tiles: one chunk, and many chunks (two in flight) copied into the
// page-locked result, through pinned staging buffers, and plainly; auto and cross,
// 1-3 dimensions, a periodic box and angles; sizes that fill no tile exactly. Every entry equals
// the CPU backend's.
TEST_F(Cuda, MatrixTilesInChunksEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto check = [&](const Statistic& s, const PointSet& A, const PointSet* B, const char* mode) {
    const Result g = run(s, A, B, on("cuda"));
    const Result c = run(s, A, B, on("cpu"));
    EXPECT_EQ(g.info.backend, "cuda");
    EXPECT_NE(g.info.plan.find(mode), std::string::npos) << g.info.plan;
    ASSERT_EQ(g.rows, c.rows);
    ASSERT_EQ(g.cols, c.cols);
    ASSERT_EQ(g.matrix.size(), c.matrix.size());
    // Distances bit for bit; angles to the last bit or two (θ from the device's acos, as pair lists').
    for (std::size_t k = 0; k < c.matrix.size(); ++k) {
      if (s.metric == Metric::Angular)
        ASSERT_NEAR(g.matrix[k], c.matrix[k], 1e-14 * std::max(1.0, std::abs(c.matrix[k]))) << k / c.cols << ' ' << k % c.cols;
      else
        ASSERT_EQ(g.matrix[k], c.matrix[k]) << k / c.cols << ' ' << k % c.cols;
    }
  };
  struct Mode {
    const char* chunk_bytes;
    const char* host;
    const char* says;
  };
  for (const Mode m : {Mode{nullptr, nullptr, "1 chunk of"}, Mode{"40000", nullptr, "through two pinned staging buffers"},
                       Mode{"40000", "registered", "copied straight into the page-locked result"},
                       Mode{"40000", "plain", "copied chunk by chunk into pageable memory"}}) {
    SCOPED_TRACE(std::string(m.chunk_bytes ? m.chunk_bytes : "default") + " " + (m.host ? m.host : "default"));
    if (m.chunk_bytes) setenv("TWOBODY_MATRIX_CHUNK_BYTES", m.chunk_bytes, 1);
    if (m.host) setenv("TWOBODY_MATRIX_HOST", m.host, 1);
    for (int dim : {1, 2, 3}) {
      const auto A = to_pointset(uniform_points(1001, dim, -5, 15, rng));
      const auto B = to_pointset(uniform_points(333, dim, -5, 15, rng));
      Statistic s = stat(Metric::Euclidean, Traversal::Cross, Binning::from_edges({0.0, 1.0}), OutputKind::Matrix);
      check(s, A, &B, m.says);
      s.traversal = Traversal::Auto;
      check(s, A, nullptr, m.says);
    }
    const auto P = to_pointset(uniform_points(777, 3, 0, 10, rng));
    const auto Q = to_pointset(uniform_points(95, 3, 0, 10, rng));
    Statistic per = stat(Metric::Periodic, Traversal::Cross, Binning::from_edges({0.0, 1.0}), OutputKind::Matrix);
    per.box = Box::cube(3, 10.0);
    check(per, P, &Q, m.says);
    const PointSet u = sky_to_unit_vectors(to_pointset(testing_support::sky_points(900, rng)));
    const PointSet v = sky_to_unit_vectors(to_pointset(testing_support::sky_points(120, rng)));
    Statistic ang = stat(Metric::Angular, Traversal::Auto, Binning::from_edges({0.0, 1.0}), OutputKind::Matrix);
    check(ang, u, nullptr, m.says);
    ang.traversal = Traversal::Cross;
    check(ang, u, &v, m.says);
    unsetenv("TWOBODY_MATRIX_CHUNK_BYTES");
    unsetenv("TWOBODY_MATRIX_HOST");
  }
  // Through the statistics API.
  const auto A = to_pointset(uniform_points(500, 3, 0, 10, rng));
  EXPECT_EQ(distance_matrix(A, nullptr, Box::cube(3, 10.0), on("cuda")).matrix,
            distance_matrix(A, nullptr, Box::cube(3, 10.0), on("cpu")).matrix);
}

// Counts on the tensor cores (the default where their bound allows): equal to the CPU
// in 1–3 dimensions, auto (ragged, diagonal blocks) and cross, ranges from zero and above it,
// offsets, and on a lattice with thousands of pairs exactly on the edges.
TEST_F(Cuda, TensorCountsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  RunOptions brute = on("cuda");
  brute.path = "brute";
  // Both forms: half precision (the default where it fits) and split TF32 (forced).
  for (const char* form : {"FP16", "TF32"}) {
    SCOPED_TRACE(form);
    const std::string expect = std::string("tensor-core counts: Gram form on split ") + form;
    if (std::string(form) == "TF32") setenv("TWOBODY_TENSOR_COUNT", "tf32", 1);
    for (int dim : {1, 2, 3})
      for (double offset : {0.0, 1e4}) {
        SCOPED_TRACE("dim " + std::to_string(dim) + " offset " + std::to_string(offset));
        const auto A = to_pointset(uniform_points(9001, dim, offset, offset + 1.0, rng));
        const auto B = to_pointset(uniform_points(3001, dim, offset, offset + 1.0, rng));
        for (const Binning& range : {Binning::from_edges({0.0, 0.1}), Binning::from_edges({0.05, 0.3})}) {
          for (bool cross : {false, true}) {
            const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, range, OutputKind::Reduction);
            const auto g = run(s, A, cross ? &B : nullptr, brute);
            EXPECT_NE(ran(g).find(expect), std::string::npos) << g.info.plan;
            EXPECT_EQ(g.counts, run(s, A, cross ? &B : nullptr, on("cpu")).counts);
          }
        }
      }
    // Small coordinates (scaled by 2^10 for FP16, lo parts subnormal) and large ones.
    for (double scale : {1e-3, 1e5}) {
      SCOPED_TRACE("scale " + std::to_string(scale));
      const auto A = to_pointset(uniform_points(4001, 3, 0.0, scale, rng));
      const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 0.1 * scale}), OutputKind::Reduction);
      const auto g = run(s, A, nullptr, brute);
      EXPECT_NE(ran(g).find(expect), std::string::npos) << g.info.plan;
      EXPECT_EQ(g.counts, run(s, A, nullptr, on("cpu")).counts);
    }
    const oracle::Points p = testing_support::half_lattice(24, 20, 17);
    const auto L = to_pointset(p);
    const auto range = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({1.0, 2.5}), OutputKind::Reduction);
    const auto g = run(range, L, nullptr, brute);
    EXPECT_NE(ran(g).find(expect), std::string::npos) << g.info.plan;
    EXPECT_EQ(g.counts, run(range, L, nullptr, on("cpu")).counts);
    EXPECT_GT(g.info.pairs_settled_fp64, 0u);
    unsetenv("TWOBODY_TENSOR_COUNT");
  }
}

// A histogram of one bin runs as the count in its range (the tensor-core counts where they apply):
// the same counts as the CPU's histogram, auto and cross, from zero and above it.
TEST_F(Cuda, OneBinHistogramRunsAsACount) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(5001, 3, 0.0, 1.0, rng));
  const auto B = to_pointset(uniform_points(2003, 3, 0.0, 1.0, rng));
  RunOptions brute = on("cuda");
  brute.path = "brute";
  for (const Binning& bins : {Binning::from_edges({0.0, 0.1}), Binning::from_edges({0.05, 0.3})})
    for (bool cross : {false, true}) {
      const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, bins);
      const auto g = run(s, A, cross ? &B : nullptr, brute);
      EXPECT_EQ(g.output, OutputKind::Histogram);
      EXPECT_NE(g.info.plan.find("a one-bin histogram counted as its range"), std::string::npos) << g.info.plan;
      EXPECT_NE(g.info.plan.find("tensor-core counts: Gram form"), std::string::npos) << g.info.plan;
      EXPECT_EQ(g.counts, run(s, A, cross ? &B : nullptr, on("cpu")).counts);
    }
}

// One histogram copy and an odd number of slots (bins + 2): the per-warp queue of pairs to settle
// must still sit on an 8-byte boundary (it did not: a misaligned shared store). Small enough for
// compute-sanitizer (scripts/gpu-check).
TEST_F(Cuda, CountingTilesOddSlotsOneCopy) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(3001, 3, 0.0, 1.0, rng));
  setenv("TWOBODY_HIST_COPIES", "1", 1);
  for (const char* fp64 : {"0", "1"})
    for (std::size_t nb : {std::size_t(1), std::size_t(1001), std::size_t(3001)}) {
      SCOPED_TRACE("bins " + std::to_string(nb) + ", TWOBODY_FP64_TENSOR_HISTOGRAM=" + fp64);
      setenv("TWOBODY_FP64_TENSOR_HISTOGRAM", fp64, 1);
      const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb));
      const auto g = run(s, A, nullptr, on("cuda"));
      EXPECT_NE(ran(g).find("counting tiles"), std::string::npos) << g.info.plan;
      EXPECT_EQ(g.counts, run(s, A, nullptr, on("cpu")).counts);
    }
  unsetenv("TWOBODY_FP64_TENSOR_HISTOGRAM");
  unsetenv("TWOBODY_HIST_COPIES");
}

// The tensor-core count on a few blocks (ragged tails, a diagonal block, a cross pair): small
// enough for compute-sanitizer's memcheck and racecheck (scripts/gpu-check).
TEST_F(Cuda, SmallTensorCounts) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  RunOptions brute = on("cuda");
  brute.path = "brute";
  const auto A = to_pointset(uniform_points(1301, 3, 0.0, 1.0, rng));
  const auto B = to_pointset(uniform_points(517, 3, 0.0, 1.0, rng));
  for (const char* form : {"FP16", "TF32"}) {
    if (std::string(form) == "TF32") setenv("TWOBODY_TENSOR_COUNT", "tf32", 1);
    for (bool cross : {false, true}) {
      const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, Binning::from_edges({0.02, 0.3}),
                          OutputKind::Reduction);
      const auto g = run(s, A, cross ? &B : nullptr, brute);
      EXPECT_NE(ran(g).find(std::string("tensor-core counts: Gram form on split ") + form), std::string::npos) << g.info.plan;
      EXPECT_EQ(g.counts, run(s, A, cross ? &B : nullptr, on("cpu")).counts);
    }
    unsetenv("TWOBODY_TENSOR_COUNT");
  }
}

// Histograms on the tensor cores (on request: TWOBODY_TENSOR_HISTOGRAM=1): equal to the CPU in 1–3
// dimensions, auto (ragged items, diagonal blocks) and cross, bins from zero and above it (clamped
// pairs), offsets, forced numbers of copies, and on a lattice with thousands of pairs exactly on
// the edges.
TEST_F(Cuda, TensorHistogramsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  setenv("TWOBODY_TENSOR_HISTOGRAM", "1", 1);
  auto check = [&](const Statistic& s, const PointSet& A, const PointSet* B) {
    const auto g = run(s, A, B, on("cuda"));
    if (s.binning().nbins() == 1) {  // (counted as its range, on the tensor cores' counts)
      EXPECT_NE(ran(g).find("a one-bin histogram counted as its range"), std::string::npos) << g.info.plan;
    } else {
      EXPECT_NE(ran(g).find("tensor-core histogram: recentred"), std::string::npos) << g.info.plan;
      EXPECT_NE(ran(g).find("Morton order"), std::string::npos) << g.info.plan;
    }
    expect_same(g, run(s, A, B, on("cpu")));
    return g;
  };
  for (int dim : {1, 2, 3})
    for (double offset : {0.0, 1e4}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " offset " + std::to_string(offset));
      const auto A = to_pointset(uniform_points(9001, dim, offset, offset + 1.0, rng));
      const auto B = to_pointset(uniform_points(3001, dim, offset, offset + 1.0, rng));
      const double diag = std::sqrt(double(dim)) * 1.000001;
      for (const Binning& bins : {Binning::linear(0.0, diag, 1), Binning::linear(0.0, diag, 8), Binning::linear(0.0, diag, 200),
                                  Binning::linear(0.2, 0.9, 70)}) {
        check(stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr);
        check(stat(Metric::Euclidean, Traversal::Cross, bins), A, &B);
      }
    }
  // Whole items (no sentinels, no clamp: a set of 2^k points, bins beyond the diameter) and forced
  // numbers of copies.
  const auto P = to_pointset(uniform_points(16384, 3, 0, 1, rng));
  for (const char* h : {"1", "4", "32"}) {
    setenv("TWOBODY_HIST_COPIES", h, 1);
    check(stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 2.0, 255)), P, nullptr);
  }
  unsetenv("TWOBODY_HIST_COPIES");
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto L = to_pointset(p);
  for (const Binning& bins : {Binning::linear(0.0, 6.0, 12), Binning::linear(1.0, 4.0, 6)}) {
    const auto g = check(stat(Metric::Euclidean, Traversal::Auto, bins), L, nullptr);
    EXPECT_EQ(g.counts, oracle::histogram(p, nullptr, bins.edges(), 0).counts);
    EXPECT_GT(g.info.pairs_settled_fp64, 0u);
  }
  // Thousands of bins: the guard is too wide; the counting tiles run.
  const auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 8192));
  const auto g = run(s, P, nullptr, on("cuda"));
  EXPECT_NE(ran(g).find("no tensor-core histogram (bins too narrow"), std::string::npos) << g.info.plan;
  unsetenv("TWOBODY_TENSOR_HISTOGRAM");
}

// Histograms with d² on the FP64 tensor cores (the default for equal-width bins where few pairs
// fall in the guard): equal to the CPU in 1–3 dimensions, auto (ragged items, diagonal blocks) and
// cross, bins from zero and above it (clamped pairs), offsets, forced numbers of copies, points a
// few ulps apart (flushed coordinates), and a lattice with thousands of pairs exactly on edges.
TEST_F(Cuda, Fp64TensorHistogramsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto check = [&](const Statistic& s, const PointSet& A, const PointSet* B) {
    const auto g = run(s, A, B, on("cuda"));
    if (s.binning().nbins() > 1) EXPECT_NE(ran(g).find("counting tiles on FP64 tensor cores"), std::string::npos) << g.info.plan;
    expect_same(g, run(s, A, B, on("cpu")));
    return g;
  };
  for (int dim : {1, 2, 3})
    for (double offset : {0.0, 1e4}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " offset " + std::to_string(offset));
      const auto A = to_pointset(uniform_points(9001, dim, offset, offset + 1.0, rng));
      const auto B = to_pointset(uniform_points(3001, dim, offset, offset + 1.0, rng));
      const double diag = std::sqrt(double(dim)) * 1.000001;
      for (const Binning& bins : {Binning::linear(0.0, diag, 8), Binning::linear(0.0, diag, 256), Binning::linear(0.2, 0.9, 70),
                                  Binning::linear(0.0, 0.5 * diag, 100)}) {
        check(stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr);
        check(stat(Metric::Euclidean, Traversal::Cross, bins), A, &B);
      }
    }
  // Whole items (no sentinels: a set of 2^k points) and forced numbers of copies.
  const auto P = to_pointset(uniform_points(16384, 3, 0, 1, rng));
  for (const char* h : {"1", "4", "32"}) {
    setenv("TWOBODY_HIST_COPIES", h, 1);
    check(stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 2.0, 255)), P, nullptr);
  }
  unsetenv("TWOBODY_HIST_COPIES");
  // Points a few ulps apart about the centre (coordinates flushed to zero: d² near 2^-246) and far.
  oracle::Points t;
  t.dim = 3;
  for (int k = 0; k < 3000; ++k) t.x.push_back({0.5 + (k % 3) * 1e-39, 0.5 - (k % 5) * 1e-30, 0.5 + (k % 700) * 1e-9});
  t.x.push_back({0.0, 0.0, 0.0});
  t.x.push_back({1.0, 1.0, 1.0});
  check(stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 2.0, 64)), to_pointset(t), nullptr);
  // Thousands of bins (a flag bit a pair, the plan's choice there) and the lattice both ways.
  check(stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 8192)), P, nullptr);
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto L = to_pointset(p);
  for (const char* pf : {"0", "1"})
    for (const Binning& bins : {Binning::linear(0.0, 6.0, 12), Binning::linear(1.0, 4.0, 6)}) {
      setenv("TWOBODY_HIST_PAIR_FLAGS", pf, 1);
      const auto g = check(stat(Metric::Euclidean, Traversal::Auto, bins), L, nullptr);
      EXPECT_EQ(g.counts, oracle::histogram(p, nullptr, bins.edges(), 0).counts);
      EXPECT_GT(g.info.pairs_settled_fp64, 0u);
    }
  unsetenv("TWOBODY_HIST_PAIR_FLAGS");
}

// The FP64 tensor-core histogram on a few items (ragged tails, diagonal blocks, a cross pair, one
// copy and an odd number of slots): small enough for compute-sanitizer (scripts/gpu-check).
TEST_F(Cuda, SmallFp64TensorHistograms) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(1301, 3, 0.0, 1.0, rng));
  const auto B = to_pointset(uniform_points(517, 3, 0.0, 1.0, rng));
  setenv("TWOBODY_HIST_COPIES", "1", 1);
  for (const char* pf : {"0", "1"})  // marked words a block, or a flag bit a pair
    for (const Binning& bins : {Binning::linear(0.1, 1.2, 31), Binning::linear(0.0, 1.8, 40)})
      for (bool cross : {false, true}) {
        setenv("TWOBODY_HIST_PAIR_FLAGS", pf, 1);
        const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, bins);
        const auto g = run(s, A, cross ? &B : nullptr, on("cuda"));
        EXPECT_NE(ran(g).find("counting tiles on FP64 tensor cores"), std::string::npos) << g.info.plan;
        EXPECT_EQ(g.counts, run(s, A, cross ? &B : nullptr, on("cpu")).counts);
      }
  unsetenv("TWOBODY_HIST_PAIR_FLAGS");
  unsetenv("TWOBODY_HIST_COPIES");
}

// The tensor-core histogram on a few items (ragged tails, diagonal blocks, a cross pair, one copy
// and an odd number of slots): small enough for compute-sanitizer (scripts/gpu-check).
TEST_F(Cuda, SmallTensorHistograms) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto A = to_pointset(uniform_points(1301, 3, 0.0, 1.0, rng));
  const auto B = to_pointset(uniform_points(517, 3, 0.0, 1.0, rng));
  setenv("TWOBODY_HIST_COPIES", "1", 1);
  setenv("TWOBODY_TENSOR_HISTOGRAM", "1", 1);
  for (bool cross : {false, true}) {
    const auto s = stat(Metric::Euclidean, cross ? Traversal::Cross : Traversal::Auto, Binning::linear(0.1, 1.2, 31));
    const auto g = run(s, A, cross ? &B : nullptr, on("cuda"));
    EXPECT_NE(ran(g).find("tensor-core histogram: recentred"), std::string::npos) << g.info.plan;
    EXPECT_EQ(g.counts, run(s, A, cross ? &B : nullptr, on("cpu")).counts);
  }
  unsetenv("TWOBODY_HIST_COPIES");
  unsetenv("TWOBODY_TENSOR_HISTOGRAM");
}

// A lattice of spacing 1/2 with bins and a range on its distances: the counting tiles settle every
// pair on an edge and keep every other verdict.
TEST_F(Cuda, CountingTilesOnLatticeEdges) {
  const oracle::Points p = testing_support::half_lattice(24, 20, 17);
  const auto A = to_pointset(p);
  for (const Binning& bins : {Binning::linear(0.0, 6.0, 12), Binning::linear(1.0, 4.0, 6), Binning::linear(0.0, 6.0, 1200)}) {
    const auto expected = oracle::histogram(p, nullptr, bins.edges(), 0).counts;
    // The plan's choice (d² on the FP64 tensor cores where it takes them), then both ways of
    // finding the pairs near an edge with d² from differences.
    for (const char* pf : {"", "0", "1"}) {
      SCOPED_TRACE(std::string("TWOBODY_HIST_PAIR_FLAGS=") + pf + ", " + std::to_string(bins.nbins()) + " bins");
      if (*pf) setenv("TWOBODY_HIST_PAIR_FLAGS", pf, 1);
      if (*pf) setenv("TWOBODY_FP64_TENSOR_HISTOGRAM", "0", 1);
      const auto g = run(stat(Metric::Euclidean, Traversal::Auto, bins), A, nullptr, on("cuda"));
      unsetenv("TWOBODY_HIST_PAIR_FLAGS");
      unsetenv("TWOBODY_FP64_TENSOR_HISTOGRAM");
      if (!*pf && bins.nbins() < 1000) EXPECT_NE(ran(g).find("FP64 tensor cores"), std::string::npos) << g.info.plan;
      EXPECT_NE(ran(g).find("counting tiles"), std::string::npos) << g.info.plan;
      EXPECT_EQ(g.counts, expected);
      EXPECT_GT(g.info.pairs_settled_fp64, 0u);
    }
  }
  const auto range = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({1.0, 2.5}), OutputKind::Reduction);
  RunOptions brute = on("cuda");
  brute.path = "brute";
  setenv("TWOBODY_TENSOR_COUNT", "0", 1);  // the CUDA-core counting tiles
  const auto g = run(range, A, nullptr, brute);
  unsetenv("TWOBODY_TENSOR_COUNT");
  EXPECT_NE(ran(g).find("counting tiles"), std::string::npos) << g.info.plan;
  EXPECT_EQ(g.counts, run(range, A, nullptr, on("cpu")).counts);
  EXPECT_GT(g.info.pairs_settled_fp64, 0u);
}

// Sets beyond one launch (2^32 points, or device memory) run in chunk pairs (chunked_run.hpp);
// TWOBODY_CUDA_CHUNK_POINTS makes small sets take that path. Every output equals the CPU's.
TEST_F(Cuda, ChunkedLaunchesEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto A = to_pointset(uniform_points(20000, 3, 0, 10, rng, true));
  const auto B = to_pointset(uniform_points(7001, 3, 0, 10, rng, true));
  setenv("TWOBODY_CUDA_CHUNK_POINTS", "6000", 1);
  for (bool w : {false, true}) {
    auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 12.0, 40), OutputKind::Histogram, w);
    const auto g = run(s, A, nullptr, on("cuda"));
    EXPECT_NE(g.info.plan.find("in chunks of at most 6000 points: 10 launches"), std::string::npos) << g.info.plan;
    expect_same(g, run(s, A, nullptr, on("cpu")));
    s.traversal = Traversal::Cross;
    expect_same(run(s, A, &B, on("cuda")), run(s, A, &B, on("cpu")));
    auto c = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 0.8}), OutputKind::Reduction, w);
    expect_same(run(c, A, nullptr, on("cuda")), run(c, A, nullptr, on("cpu")));
    c.reduction = reduce::PerPoint{c.binning()};
    const auto gp = run(c, A, nullptr, on("cuda")), cp = run(c, A, nullptr, on("cpu"));
    EXPECT_EQ(gp.per_point_a.counts, cp.per_point_a.counts);
  }
  auto l = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 0.3}), OutputKind::PairList);
  const auto gl = run(l, A, nullptr, on("cuda")), cl = run(l, A, nullptr, on("cpu"));
  ASSERT_EQ(gl.pairs.size(), cl.pairs.size());
  for (std::size_t k = 0; k < cl.pairs.size(); ++k) {
    ASSERT_EQ(gl.pairs[k].i, cl.pairs[k].i);
    ASSERT_EQ(gl.pairs[k].j, cl.pairs[k].j);
  }
  std::vector<std::int32_t> labels(A.size());
  for (auto& x : labels) x = static_cast<std::int32_t>(rng() % 7);
  A.set_regions(labels);
  auto j = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 3.0, 12));
  j.set_regions(7);
  const auto gj = run(j, A, nullptr, on("cuda")), cj = run(j, A, nullptr, on("cpu"));
  EXPECT_EQ(gj.counts, cj.counts);
  EXPECT_EQ(gj.region_counts, cj.region_counts);
  unsetenv("TWOBODY_CUDA_CHUNK_POINTS");
}

// A budget of device memory (set_device_memory_limit, the CLI's --device-memory) below what the sets
// need in one piece runs them in chunks, with the counts of the run without it, byte for byte:
// histograms with jackknife regions, weighted sums, per-point counts, and a correlation function
// whose counts (DD, DR_i, RR_i) each stream through the budget.
TEST_F(Cuda, DeviceMemoryBudgetRunsInChunksWithTheSameCounts) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet A = to_pointset(uniform_points(300000, 3, 0, 100, rng, true));
  std::vector<std::int32_t> labels(A.size());
  for (auto& x : labels) x = static_cast<std::int32_t>(rng() % 9);
  A.set_regions(labels);
  std::vector<double> weights(A.size());
  for (auto& w : weights) w = 0.5 + static_cast<double>(rng() % 1000) / 1000.0;
  A.set_weights(weights);
  auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 3.0, 12), OutputKind::Histogram, true);
  s.set_regions(9);
  auto per_point = stat(Metric::Euclidean, Traversal::Auto, Binning::from_edges({0.0, 1.5}), OutputKind::Reduction);
  per_point.reduction = reduce::PerPoint{per_point.binning()};
  const Result whole = run(s, A, nullptr, on("cuda")), whole_pp = run(per_point, A, nullptr, on("cuda"));
  EXPECT_EQ(whole.info.plan.find("in chunks"), std::string::npos) << whole.info.plan;
  set_device_memory_limit(16u << 20);
  const Result budget = run(s, A, nullptr, on("cuda")), budget_pp = run(per_point, A, nullptr, on("cuda"));
  set_device_memory_limit(0);
  EXPECT_NE(budget.info.plan.find("in chunks of at most 65536 points"), std::string::npos) << budget.info.plan;
  EXPECT_EQ(budget.counts, whole.counts);
  EXPECT_EQ(budget.region_counts, whole.region_counts);
  ASSERT_EQ(budget.weighted.size(), whole.weighted.size());
  for (std::size_t b = 0; b < whole.weighted.size(); ++b) EXPECT_EQ(budget.weighted[b], whole.weighted[b]) << b;
  EXPECT_EQ(budget_pp.per_point_a.counts, whole_pp.per_point_a.counts);
  EXPECT_EQ(budget.counts, run(s, A, nullptr, on("cpu")).counts);
}

// ---- 2-D bins on the GPU (Backend::refuses none): (r_p, pi) and (s, mu) about the z axis, periodic and
// open, and the survey mocks' midpoint line of sight, through the brute-force tiles and the grid,
// against the CPU's brute force: counts and region counts equal, weighted sums to 1e-12.

namespace {

RunOptions cuda_path(const std::string& path) {
  RunOptions o = on("cuda");
  o.path = path;
  return o;
}

std::vector<std::int32_t> random_labels(std::size_t n, int R, std::mt19937_64& rng) {
  std::vector<std::int32_t> l(n);
  std::uniform_int_distribution<int> u(0, R - 1);
  for (auto& x : l) x = u(rng);
  return l;
}

Statistic binned2d_stat(const Binning2D& bins, const std::optional<Box>& box, bool cross, bool weighted, int regions = 0) {
  Statistic s;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.traversal = cross ? Traversal::Cross : Traversal::Auto;
  s.reduction = reduce::Histogram2D{.bins = bins, .regions = regions};
  s.weighted = weighted;
  return s;
}

// The GPU's run of `s` on `path` against the CPU's brute force; returns the GPU's result.
Result expect_2d_matches(const Statistic& s, const PointSet& A, const PointSet* B, const std::string& path,
                         const Result& c, const std::string& what) {
  const Result g = run(s, A, B, cuda_path(path));
  EXPECT_EQ(g.info.backend, "cuda") << what;
  EXPECT_NE(g.info.plan.find(path == "grid" ? "ran: grid" : "ran: brute force (requested)"), std::string::npos)
      << what << "\n" << g.info.plan;
  EXPECT_NE(g.info.plan.find("2-D bins: every pair within the reach"), std::string::npos) << what << "\n" << g.info.plan;
  EXPECT_EQ(g.counts, c.counts) << what;
  expect_same_sums(g.weighted, c.weighted, what + " weighted");
  EXPECT_EQ(g.regions, c.regions) << what;
  EXPECT_EQ(g.region_counts, c.region_counts) << what;
  expect_same_sums(g.region_weighted, c.region_weighted, what + " region weighted");
  // Mean separations (r_p or s of each pair, Corrfunc's rpavg and savg): exact sums of the same
  // terms (the logarithm: twobody/extend/portable_math.hpp on both sides), so the same bits.
  expect_same_sums(g.separation_sum, c.separation_sum, what + " separation sums");
  expect_same_sums(g.log_separation_sum, c.log_separation_sum, what + " log separation sums");
  return g;
}

std::uint64_t total(const std::vector<std::uint64_t>& v) {
  std::uint64_t t = 0;
  for (auto x : v) t += x;
  return t;
}

}  // namespace

TEST_F(Cuda, Binned2DEqualsCpuBoxAndOpenSpace) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  PointSet A = generate_clustered_box(8000, 3, L, ClusterOptions{}, seed);
  A = testing_support::with_weights(std::move(A), rng);
  const PointSet B = to_pointset(uniform_points(3001, 3, 0, L, rng, true));
  const Binning2D rppi = Binning2D::rp_pi(Binning::logarithmic(0.5, 20.0, 8), 25.0);  // 25 pi bins of 1
  const Binning2D smu = Binning2D::s_mu(Binning::linear(0.0, 22.0, 11), 1.0, 12);
  for (const Binning2D* bins : {&rppi, &smu})
    for (bool periodic : {true, false})
      for (bool cross : {false, true})
        for (bool weighted : {false, true}) {
          const std::string what = std::string(bins == &rppi ? "rp-pi" : "s-mu") + (periodic ? " periodic" : " open") +
                                   (cross ? " cross" : " auto") + (weighted ? " weighted" : "");
          const auto box = periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
          const Statistic s = binned2d_stat(*bins, box, cross, weighted);
          const Result c = run(s, A, cross ? &B : nullptr, brute_on_cpu());
          EXPECT_GT(total(c.counts), 10000u) << what;
          for (const char* path : {"brute", "grid"}) {
            const Result g = expect_2d_matches(s, A, cross ? &B : nullptr, path, c, what + " " + path);
            EXPECT_NE(g.info.plan.find("sub-histograms in shared memory"), std::string::npos) << what << "\n" << g.info.plan;
          }
        }
}

// 2-D bins with mean separations (Corrfunc's rpavg, savg; TreeCorr's meanr): on the GPU, both
// paths, box, open space and the mocks' midpoint line of sight, auto and cross, weighted, with
// regions; sums equal to the CPU's to rounding, counts exactly.
TEST_F(Cuda, MeanSeparationsOf2DBinsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 60.0;
  PointSet A = testing_support::with_weights(to_pointset(uniform_points(4000, 3, 0.0, L, rng, true)), rng);
  A.set_regions(random_labels(A.size(), 4, rng));
  PointSet B = testing_support::with_weights(to_pointset(uniform_points(2500, 3, 0.0, L, rng, true)), rng);
  B.set_regions(random_labels(B.size(), 4, rng));
  // Mocks: points away from the observer at the origin.
  PointSet MA = testing_support::with_weights(to_pointset(uniform_points(3000, 3, 200.0, 200.0 + L, rng, true)), rng);
  MA.set_regions(random_labels(MA.size(), 4, rng));
  PointSet MB = testing_support::with_weights(to_pointset(uniform_points(2000, 3, 200.0, 200.0 + L, rng, true)), rng);
  MB.set_regions(random_labels(MB.size(), 4, rng));
  for (int kind = 0; kind < 3; ++kind) {
    const bool mock = kind == 2;
    const Binning2D bins = kind == 0   ? Binning2D::rp_pi(Binning::linear(0.5, 8.0, 5), 8.0, 4)
                           : kind == 1 ? Binning2D::s_mu(Binning::linear(0.5, 9.0, 6), 1.0, 5)
                                       : Binning2D::rp_pi(Binning::linear(0.5, 8.0, 5), 8.0, 4, LineOfSight::PairMidpoint);
    for (bool periodic : {false, true}) {
      if (mock && periodic) continue;
      for (bool cross : {false, true})
        for (int regions : {0, 4}) {
          const std::string what = std::string(kind == 0 ? "rp-pi" : kind == 1 ? "s-mu" : "rp-pi mock") +
                                   (periodic ? " periodic" : " open") + (cross ? " cross" : " auto") +
                                   (regions ? " regions" : "");
          const auto box = periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
          Statistic s = binned2d_stat(bins, box, cross, regions == 0, regions);
          s.set_mean_separation(true);
          const PointSet& a = mock ? MA : A;
          const PointSet* b = cross ? (mock ? &MB : &B) : nullptr;
          const Result c = run(s, a, b, brute_on_cpu());
          ASSERT_FALSE(c.separation_sum.empty()) << what;
          EXPECT_GT(total(c.counts), 1000u) << what;
          for (const char* path : {"brute", "grid"}) {
            const Result g = expect_2d_matches(s, a, b, path, c, what + " " + path);
            EXPECT_NE(g.info.plan.find("mean separations"), std::string::npos) << what << "\n" << g.info.plan;
          }
        }
    }
  }
}

// Small enough for compute-sanitizer's memcheck and racecheck (scripts/gpu-check): 2-D bins in
// shared and in global memory, and mean separations in shared and global memory, on both paths.
TEST_F(Cuda, SmallBinned2DAndMeanSeparations) {
  std::mt19937_64 rng(fresh_seed());
  PointSet A = to_pointset(uniform_points(700, 3, 0, 10, rng, true));
  A.set_regions(random_labels(A.size(), 3, rng));
  const Binning2D rppi = Binning2D::rp_pi(Binning::linear(0.0, 3.0, 6), 3.0, 6);
  for (const char* path : {"brute", "grid"})
    for (int regions : {0, 3})
      for (bool means : {false, true}) {
        Statistic s = binned2d_stat(rppi, Box::cube(3, 10.0), false, true, regions);
        s.set_mean_separation(means);
        const Result c = run(s, A, nullptr, brute_on_cpu());
        expect_2d_matches(s, A, nullptr, path, c, std::string("small ") + path + (means ? " means" : ""));
      }
  for (const char* path : {"brute", "grid"})
    for (std::size_t nb : {10u, 8192u}) {
      auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, 3.0, nb), OutputKind::Histogram, true);
      s.set_mean_separation(true);
      s.set_regions(nb == 10 ? 3 : 0);  // (1-D regions need per-lane histograms: few bins)
      const Result g = run(s, A, nullptr, cuda_path(path));
      EXPECT_EQ(g.counts, run(s, A, nullptr, brute_on_cpu()).counts) << path << " " << nb;
    }
}

// The rp_max and pi_max of a periodic box up to half its sides: the reach sqrt(rpmax^2 + pimax^2)
// then exceeds L/2 and the grid has one or two cells an axis (minimum images, no windows).
TEST_F(Cuda, Binned2DReachBeyondHalfTheBox) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<double> L{60.0, 50.0, 40.0};
  auto p = uniform_points(5000, 3, 0, 1, rng, true);
  for (auto& x : p.x)
    for (int d = 0; d < 3; ++d) x[d] = std::min(x[d] * L[d], std::nextafter(L[d], 0.0));
  const PointSet A = to_pointset(p);
  const Box box = Box::from_lengths(L);
  for (const Binning2D& bins : {Binning2D::rp_pi(Binning::linear(0.0, 25.0, 10), 20.0, 10),
                                Binning2D::s_mu(Binning::linear(0.0, 20.0, 10), 0.9, 9)}) {
    const Statistic s = binned2d_stat(bins, box, false, true);
    const Result c = run(s, A, nullptr, brute_on_cpu());
    for (const char* path : {"brute", "grid"}) expect_2d_matches(s, A, nullptr, path, c, std::string("reach ") + path);
  }
}

// Jackknife regions: T[r][k] of both points' regions, in global memory, on both traversals.
TEST_F(Cuda, Binned2DJackknifeRegionsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 7;
  const double L = 100.0;
  PointSet A = to_pointset(uniform_points(9000, 3, 0, L, rng, true));
  PointSet B = to_pointset(uniform_points(4000, 3, 0, L, rng, true));
  A.set_regions(random_labels(A.size(), R, rng));
  B.set_regions(random_labels(B.size(), R, rng));
  const Binning2D rppi = Binning2D::rp_pi(Binning::logarithmic(0.5, 15.0, 6), 15.0);
  const Binning2D smu = Binning2D::s_mu(Binning::logarithmic(0.5, 15.0, 6), 1.0, 10);
  for (const Binning2D* bins : {&rppi, &smu})
    for (bool periodic : {true, false})
      for (bool cross : {false, true})
        for (bool weighted : {false, true}) {
          const std::string what = std::string(bins == &rppi ? "rp-pi" : "s-mu") + (periodic ? " periodic" : " open") +
                                   (cross ? " cross" : " auto") + (weighted ? " weighted" : "");
          const auto box = periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
          const Statistic s = binned2d_stat(*bins, box, cross, weighted, R);
          const Result c = run(s, A, cross ? &B : nullptr, brute_on_cpu());
          ASSERT_EQ(c.region_counts.size(), R * bins->nbins());
          for (const char* path : {"brute", "grid"}) {
            const Result g = expect_2d_matches(s, A, cross ? &B : nullptr, path, c, what + " " + path);
            EXPECT_NE(g.info.plan.find("64-bit atomics in global memory (7 jackknife regions)"), std::string::npos)
                << what << "\n" << g.info.plan;
          }
        }
}

// Survey mocks: RA, Dec, cz turned into comoving Cartesian points (a flat LCDM), pi and mu about
// each pair's midpoint line of sight; auto and cross, weighted, with regions, both traversals.
TEST_F(Cuda, Binned2DMocksEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto patch = [&](std::size_t n) {
    std::uniform_real_distribution<double> ura(150, 190), usin(std::sin(5 * M_PI / 180), std::sin(35 * M_PI / 180)),
        ucz(9000, 15000);
    PointSet sky(3, n);
    for (std::size_t i = 0; i < n; ++i) {
      sky.coord(0)[i] = ura(rng);
      sky.coord(1)[i] = std::asin(usin(rng)) * 180 / M_PI;
      sky.coord(2)[i] = ucz(rng);
    }
    return testing_support::with_weights(std::move(sky), rng);
  };
  const FlatLcdm cosmo = FlatLcdm::corrfunc(2);
  PointSet A = sky_to_cartesian(patch(12000), cosmo, false);
  PointSet B = sky_to_cartesian(patch(5000), cosmo, false);
  const int R = 5;
  A.set_regions(random_labels(A.size(), R, rng));
  B.set_regions(random_labels(B.size(), R, rng));
  const Binning2D rppi = Binning2D::rp_pi(Binning::logarithmic(0.5, 20.0, 10), 20.0, 20, LineOfSight::PairMidpoint);
  const Binning2D smu = Binning2D::s_mu(Binning::logarithmic(0.5, 25.0, 10), 1.0, 10, LineOfSight::PairMidpoint);
  for (const Binning2D* bins : {&rppi, &smu})
    for (bool cross : {false, true})
      for (bool weighted : {false, true})
        for (int regions : {0, R}) {
          const std::string what = std::string(bins == &rppi ? "mock rp-pi" : "mock s-mu") + (cross ? " cross" : " auto") +
                                   (weighted ? " weighted" : "") + (regions ? " regions" : "");
          const Statistic s = binned2d_stat(*bins, std::nullopt, cross, weighted, regions);
          const Result c = run(s, A, cross ? &B : nullptr, brute_on_cpu());
          EXPECT_GT(total(c.counts), 10000u) << what;
          for (const char* path : {"brute", "grid"}) {
            const Result g = expect_2d_matches(s, A, cross ? &B : nullptr, path, c, what + " " + path);
            EXPECT_NE(explain(s, A, cross ? &B : nullptr, cuda_path(path)).find(bins == &rppi ? "RpPiBinsMock" : "SMuBinsMock"),
                      std::string::npos);
          }
        }
}

// Lattice points on the edges: r_p, s, pi and mu edges that many pairs lie on exactly (multiples
// of 1/2, and mu = 0, 1/2, 1), open and periodic.
TEST_F(Cuda, Binned2DLatticeEdgesEqualCpu) {
  const auto A = to_pointset(testing_support::half_lattice(20, 18, 16));
  const Box box = Box::from_lengths(std::vector<double>{10.0, 9.0, 8.0});
  for (const Binning2D& bins : {Binning2D::rp_pi(Binning::linear(0.0, 4.0, 8), 4.0, 8),
                                Binning2D::s_mu(Binning::linear(0.5, 4.0, 7), 1.0, 4)})
    for (bool periodic : {false, true}) {
      const auto b = periodic ? std::optional<Box>(box) : std::nullopt;
      const Statistic s = binned2d_stat(bins, b, false, false);
      const Result c = run(s, A, nullptr, brute_on_cpu());
      for (const char* path : {"brute", "grid"})
        expect_2d_matches(s, A, nullptr, path, c, std::string("lattice ") + (periodic ? "periodic " : "open ") + path);
    }
}

// Bins beyond shared memory (30 000: not even one sub-histogram a block fits) go to 64-bit atomics
// in global memory on both traversals; 800 bins (20 r_p x 40 pi) fit.
TEST_F(Cuda, Binned2DManyBinsInGlobalMemory) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet A = to_pointset(uniform_points(9000, 3, 0, 100, rng, true));
  const Box box = Box::cube(3, 100.0);
  const Binning2D many = Binning2D::rp_pi(Binning::linear(0.0, 20.0, 100), 30.0, 300);
  const Binning2D usual = Binning2D::rp_pi(Binning::logarithmic(0.1, 20.0, 20), 40.0, 40);
  for (bool weighted : {false, true}) {
    const Statistic s = binned2d_stat(many, box, false, weighted);
    const Result c = run(s, A, nullptr, brute_on_cpu());
    for (const char* path : {"brute", "grid"}) {
      const Result g = expect_2d_matches(s, A, nullptr, path, c, std::string("30000 bins ") + path);
      EXPECT_NE(g.info.plan.find("64-bit atomics in global memory (too many for shared memory)"), std::string::npos)
          << g.info.plan;
    }
    const Statistic u = binned2d_stat(usual, box, false, weighted);
    const Result cu = run(u, A, nullptr, brute_on_cpu());
    for (const char* path : {"brute", "grid"}) {
      const Result g = expect_2d_matches(u, A, nullptr, path, cu, std::string("800 bins ") + path);
      EXPECT_NE(g.info.plan.find("sub-histograms in shared memory"), std::string::npos) << g.info.plan;
    }
  }
}

// Sets beyond one launch (run_in_chunks) with 2-D bins and regions.
TEST_F(Cuda, Binned2DChunkedLaunchesEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet A = to_pointset(uniform_points(9000, 3, 0, 50, rng, true));
  PointSet B = to_pointset(uniform_points(3500, 3, 0, 50, rng, true));
  A.set_regions(random_labels(A.size(), 4, rng));
  B.set_regions(random_labels(B.size(), 4, rng));
  setenv("TWOBODY_CUDA_CHUNK_POINTS", "4000", 1);
  for (int regions : {0, 4}) {
    const Statistic s = binned2d_stat(Binning2D::s_mu(Binning::linear(0.0, 10.0, 5), 1.0, 5), Box::cube(3, 50.0), false,
                                      true, regions);
    const Result g = run(s, A, nullptr, on("cuda"));
    EXPECT_NE(g.info.plan.find("in chunks of at most 4000 points"), std::string::npos) << g.info.plan;
    const Result c = run(s, A, nullptr, brute_on_cpu());
    EXPECT_EQ(g.counts, c.counts);
    expect_same_sums(g.weighted, c.weighted, "chunked weighted");
    EXPECT_EQ(g.region_counts, c.region_counts);
    Statistic x = s;
    x.traversal = Traversal::Cross;
    const Result gx = run(x, A, &B, on("cuda")), cx = run(x, A, &B, brute_on_cpu());
    EXPECT_EQ(gx.counts, cx.counts);
    EXPECT_EQ(gx.region_counts, cx.region_counts);
    expect_same_sums(gx.region_weighted, cx.region_weighted, "chunked cross region weighted");
  }
  unsetenv("TWOBODY_CUDA_CHUNK_POINTS");
}

// ---- Mean separation per bin on the GPU (Backend::refuses none): Σ s and Σ log s (times
// w_i w_j) equal the CPU's to 1e-12 of Σ |term| per bin, counts equal, for sdh, paircount, rdf and
// angular, brute force and grid, with jackknife regions, through the sums in shared memory and
// in global memory.

namespace {

// Σ s and Σ log s: exact sums of the same terms on both sides (the logarithm and, for angles,
// the arc cosine from twobody/extend/portable_math.hpp), so the same bits; `edges` and `rel` are
// kept for the callers (the old tolerance, no longer used).
void expect_same_means(const Result& g, const Result& c, const std::vector<double>& edges, const std::string& what,
                       double rel = 1e-12) {
  (void)rel;
  EXPECT_EQ(g.info.backend, "cuda") << what;
  EXPECT_EQ(g.counts, c.counts) << what;
  expect_same_sums(g.weighted, c.weighted, what + " weighted");
  EXPECT_EQ(g.region_counts, c.region_counts) << what;
  expect_same_sums(g.region_weighted, c.region_weighted, what + " region weighted");
  ASSERT_EQ(c.separation_sum.size() + 1, edges.size()) << what;
  expect_same_sums(g.separation_sum, c.separation_sum, what + " separation sums");
  expect_same_sums(g.log_separation_sum, c.log_separation_sum, what + " log separation sums");
  EXPECT_EQ(ran(g).find("counting tiles"), std::string::npos) << what << "\n" << g.info.plan;
  EXPECT_NE(ran(g).find("mean separations: the float64 key of every pair"), std::string::npos) << what << "\n" << g.info.plan;
}

}  // namespace

TEST_F(Cuda, MeanSeparationStatisticsEqualCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double L = 100.0;
  const PointSet A = to_pointset(uniform_points(12000, 3, 0, L, rng, true));
  const PointSet B = to_pointset(uniform_points(4001, 3, 0, L, rng, true));
  const PointSet sky_a = to_pointset(testing_support::sky_points(9000, rng, -20, 40));
  const PointSet sky_b = testing_support::with_weights(to_pointset(testing_support::sky_points(3000, rng, -20, 40)), rng);
  const PointSet sky_aw = testing_support::with_weights(sky_a, rng);
  for (const char* path : {"brute", "grid"}) {
    RunOptions g = cuda_path(path), c = brute_on_cpu();
    g.mean_separation = c.mean_separation = true;
    const std::string p = std::string(" ") + path;
    {
      const Binning bins = Binning::linear(0.0, 30.0, 15);  // equal widths: the counting tiles' case
      const auto gs = sdh(A, bins, g), cs = sdh(A, bins, c);
      expect_same_means(gs.raw, cs.raw, bins.edges(), "sdh" + p);
      ASSERT_EQ(gs.derived.size(), cs.derived.size());
    }
    const Binning logb = Binning::logarithmic(0.3, 25.0, 12);
    for (bool weighted : {false, true})
      for (bool periodic : {false, true}) {
        const auto box = periodic ? std::optional<Box>(Box::cube(3, L)) : std::nullopt;
        const std::string w = std::string(weighted ? " weighted" : "") + (periodic ? " periodic" : " open") + p;
        expect_same_means(paircount(A, nullptr, logb, box, weighted, g).raw, paircount(A, nullptr, logb, box, weighted, c).raw,
                          logb.edges(), "paircount auto" + w);
        expect_same_means(paircount(A, &B, logb, box, weighted, g).raw, paircount(A, &B, logb, box, weighted, c).raw,
                          logb.edges(), "paircount cross" + w);
      }
    expect_same_means(rdf(A, nullptr, logb, Box::cube(3, L), g).raw, rdf(A, nullptr, logb, Box::cube(3, L), c).raw,
                      logb.edges(), "rdf" + p);
    expect_same_means(rdf(A, &B, logb, Box::cube(3, L), g).raw, rdf(A, &B, logb, Box::cube(3, L), c).raw, logb.edges(),
                      "rdf cross" + p);
    const Binning theta = Binning::logarithmic(0.01, 5.0, 14);
    expect_same_means(angular(sky_a, nullptr, theta, false, g).raw, angular(sky_a, nullptr, theta, false, c).raw,
                      theta.edges(), "angular" + p);
    expect_same_means(angular(sky_aw, &sky_b, theta, true, g).raw, angular(sky_aw, &sky_b, theta, true, c).raw,
                      theta.edges(), "angular cross weighted" + p);
  }
}

// With jackknife regions (the grid kernels' per-lane region counts beside the sums), and on
// lattice edges (pairs settled in float64 must still add their separations once).
TEST_F(Cuda, MeanSeparationWithRegionsAndOnEdgesEqualsCpu) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int R = 6;
  PointSet A = to_pointset(uniform_points(10000, 3, 0, 100, rng, true));
  PointSet B = to_pointset(uniform_points(3000, 3, 0, 100, rng, true));
  A.set_regions(random_labels(A.size(), R, rng));
  B.set_regions(random_labels(B.size(), R, rng));
  for (Metric m : {Metric::Euclidean, Metric::Periodic})
    for (bool weighted : {false, true})
      for (bool cross : {false, true}) {
        auto s = stat(m, cross ? Traversal::Cross : Traversal::Auto, Binning::logarithmic(0.2, 12.0, 15),
                      OutputKind::Histogram, weighted);
        if (m == Metric::Periodic) s.box = Box::cube(3, 100.0);
        s.set_regions(R);
        s.set_mean_separation(true);
        const std::string what = std::string(m == Metric::Periodic ? "periodic" : "open") + (weighted ? " weighted" : "") +
                                 (cross ? " cross" : " auto");
        const Result g = run(s, A, cross ? &B : nullptr, on("cuda"));
        EXPECT_NE(g.info.plan.find("ran: grid"), std::string::npos) << g.info.plan;
        expect_same_means(g, run(s, A, cross ? &B : nullptr, brute_on_cpu()), s.binning().edges(), what);
      }
  PointSet u = sky_to_unit_vectors(to_pointset(testing_support::sky_points(12000, rng, -30, 60)));
  u.set_regions(random_labels(u.size(), R, rng));
  Statistic sky;
  sky.metric = Metric::Angular;
  sky.reduction = reduce::Histogram{.bins = Binning::logarithmic(0.05, 8.0, 12), .regions = R, .mean_separation = true};
  expect_same_means(run(sky, u, nullptr, on("cuda")), run(sky, u, nullptr, brute_on_cpu()), sky.binning().edges(), "sky");

  // A lattice has a few distinct separations, each met by up to a million pairs: the rounding of
  // such a sum does not average out, and two orders of summation differ by up to ~n u of it (n the
  // bin's pairs, u = 2^-53; measured on the H100: 2.4e-12 at 1.2e6 pairs). Hence 2 n u here.
  const auto lattice = to_pointset(testing_support::half_lattice(22, 20, 17));
  for (const char* path : {"brute", "grid"}) {
    auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.5, 6.0, 11));
    s.set_mean_separation(true);
    const Result g = run(s, lattice, nullptr, cuda_path(path));
    EXPECT_GT(g.info.pairs_settled_fp64, 0u);
    std::uint64_t most = 0;
    for (auto n : g.counts) most = std::max(most, n);
    expect_same_means(g, run(s, lattice, nullptr, brute_on_cpu()), s.binning().edges(), std::string("lattice ") + path,
                      std::max(1e-12, 2.0 * static_cast<double>(most) * 0x1p-53));
  }
}

// Sums beyond shared memory (6000 bins: 188 KB of exact sums, 32 bytes a bin) go to global memory
// by atomics; 20 bins keep them per block in shared memory. And through chunked launches. (8192
// weighted bins no longer fit at all: bands, counter and a 16-byte weighted sum are 28 bytes a bin.)
TEST_F(Cuda, MeanSeparationSumsInSharedOrGlobalMemory) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const PointSet A = to_pointset(uniform_points(12000, 3, 0, 100, rng, true));
  for (std::size_t nb : {20u, 6000u})
    for (const char* path : {"brute", "grid"})
      for (bool weighted : {false, true}) {
        auto s = stat(Metric::Euclidean, Traversal::Auto, Binning::linear(0.0, nb == 20 ? 10.0 : 175.0, nb),
                      OutputKind::Histogram, weighted);
        s.set_mean_separation(true);
        const Result g = run(s, A, nullptr, cuda_path(path));
        const std::string what = std::to_string(nb) + " bins " + path + (weighted ? " weighted" : "");
        EXPECT_NE(g.info.plan.find(nb == 20 ? "per block in shared memory" : "by atomics in global memory"),
                  std::string::npos)
            << what << "\n" << g.info.plan;
        expect_same_means(g, run(s, A, nullptr, brute_on_cpu()), s.binning().edges(), what);
      }
  setenv("TWOBODY_CUDA_CHUNK_POINTS", "5000", 1);
  auto s = stat(Metric::Periodic, Traversal::Auto, Binning::logarithmic(0.5, 20.0, 10), OutputKind::Histogram, true);
  s.box = Box::cube(3, 100.0);
  s.set_mean_separation(true);
  const Result g = run(s, A, nullptr, on("cuda"));
  EXPECT_NE(g.info.plan.find("in chunks of at most 5000 points"), std::string::npos) << g.info.plan;
  expect_same_means(g, run(s, A, nullptr, brute_on_cpu()), s.binning().edges(), "chunked");
  unsetenv("TWOBODY_CUDA_CHUNK_POINTS");
}

namespace {

void expect_same_kernel_sums(const KernelSums& g, const KernelSums& c) {
  const auto bits = [](const std::vector<double>& v) {
    std::vector<std::uint64_t> b;
    for (double x : v) b.push_back(std::bit_cast<std::uint64_t>(x));
    return b;
  };
  EXPECT_EQ(bits(g.density_a), bits(c.density_a));
  EXPECT_EQ(bits(g.density_b), bits(c.density_b));
  EXPECT_EQ(bits(g.regression_a), bits(c.regression_a));
  EXPECT_EQ(bits(g.regression_b), bits(c.regression_b));
  EXPECT_EQ(g.partners_a, c.partners_a);
  EXPECT_EQ(g.partners_b, c.partners_b);
}

}  // namespace

// Kernel sums (twobody/kde.hpp) on the GPU: the pair list's r has the CPU's bits and every point
// adds its terms in partner order, so the sums are the CPU's bit for bit however the drained
// batches arrive (tiny pools: dozens of launches), in chunks of the first set and through the
// backend's chunked launches; and the float64 brute force's to 1e-12.
TEST_F(Cuda, KernelSumsEqualCpuBitForBitAndTheBruteForce) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto a = uniform_points(3000, 3, 0, 20, rng, true), b = uniform_points(2000, 3, 0, 20, rng, true);
  const PointSet A = to_pointset(a), B = to_pointset(b);
  std::uniform_real_distribution<double> u(-1.0, 3.0);
  std::vector<double> ya(a.x.size()), yb(b.x.size());
  for (auto* y : {&ya, &yb})
    for (auto& v : *y) v = u(rng);
  for (bool periodic : {false, true})
    for (bool cross : {false, true})
      for (KdeKernel kernel : {KdeKernel::Gaussian, KdeKernel::Epanechnikov}) {
        SCOPED_TRACE(std::string(periodic ? "periodic " : "open ") + (cross ? "cross " : "auto ") + to_string(kernel));
        KdeOptions o;
        o.kernel = kernel;
        o.bandwidth = kernel == KdeKernel::Gaussian ? 0.5 : 1.5;
        o.weighted = true;
        const std::optional<Box> box = periodic ? std::optional<Box>(Box::cube(3, 20.0)) : std::nullopt;
        const PointSet* pb = cross ? &B : nullptr;
        const std::vector<double> y_b = cross ? yb : std::vector<double>{};
        const KernelSums c = kernel_regression(A, pb, ya, y_b, o, box, brute_on_cpu());
        oracle::KernelSumsCase oc;
        oc.kernel = kernel;
        oc.h = o.bandwidth;
        oc.cutoff = kde_cutoff(o);
        if (periodic) oc.L = {20.0, 20.0, 20.0};
        oc.weighted = true;
        for (const char* path : {"brute", "grid"})
          for (const char* page_size : {"5", static_cast<const char*>(nullptr)}) {
            SCOPED_TRACE(std::string(path) + (page_size ? ", pool of 200 pages of 5 pairs" : ", default pool"));
            const PoolShape shape(page_size, page_size ? "200" : nullptr);
            const KernelSums g = kernel_regression(A, pb, ya, y_b, o, box, cuda_on_path(path));
            EXPECT_EQ(g.info.backend, "cuda");
            expect_same_kernel_sums(g, c);
            // The tiny pool drains in many launches, each a batch of its own.
            if (page_size) EXPECT_NE(g.info.plan.find(" launches"), std::string::npos) << g.info.plan;
            if (!page_size) oracle::expect_kernel_sums(g, a, cross ? &b : nullptr, ya, y_b, oc);
          }
        o.pairs_in_memory = 4000;
        const KernelSums chunked = kernel_regression(A, pb, ya, y_b, o, box, on("cuda"));
        EXPECT_GT(chunked.runs, 1u);
        expect_same_kernel_sums(chunked, c);
        setenv("TWOBODY_CUDA_CHUNK_POINTS", "700", 1);
        o.pairs_in_memory = KdeOptions{}.pairs_in_memory;
        expect_same_kernel_sums(kernel_regression(A, pb, ya, y_b, o, box, on("cuda")), c);
        unsetenv("TWOBODY_CUDA_CHUNK_POINTS");
      }
}

namespace {

// Every output of `s` on the GPU equal to the CPU's brute force bit for bit, and the GPU's plan
// saying why it ran brute force.
void expect_triclinic_matches(Statistic s, const PointSet& A, const PointSet* B) {
  for (OutputKind out : {OutputKind::Histogram, OutputKind::Reduction, OutputKind::PerPoint, OutputKind::PairList}) {
    SCOPED_TRACE(to_string(out));
    const Binning bins = s.binning();
    s.reduction = testing_support::reduction_of(
        out, out == OutputKind::Histogram ? bins : Binning::from_edges({bins.lo(), bins.hi()}));
    for (const char* path : {"auto", "grid"}) {
      RunOptions o = on("cuda");
      o.path = path;
      const Result g = run(s, A, B, o);
      const Result c = run(s, A, B, brute_on_cpu());
      EXPECT_EQ(g.info.backend, "cuda");
      EXPECT_NE(g.info.plan.find("does not take triclinic cells"), std::string::npos) << g.info.plan;
      if (out == OutputKind::PairList) {
        ASSERT_EQ(g.pairs.size(), c.pairs.size());
        for (std::size_t k = 0; k < c.pairs.size(); ++k) {
          ASSERT_EQ(g.pairs[k].i, c.pairs[k].i) << k;
          ASSERT_EQ(g.pairs[k].j, c.pairs[k].j) << k;
          ASSERT_EQ(g.pairs[k].value, c.pairs[k].value) << k;
        }
      } else if (out == OutputKind::PerPoint) {
        expect_same_points(g.per_point_a, c.per_point_a);
        expect_same_points(g.per_point_b, c.per_point_b);
      } else {
        expect_same(g, c);
      }
    }
    s.reduction = reduce::Histogram{bins};
  }
}

}  // namespace

TEST_F(Cuda, TriclinicCellsEqualCpuEveryOutput) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double dims[6] = {40, 36, 44, 75, 100, 110};
  const double skewed[9] = {40, 0, 0, 38, 20, 0, -50, 15, 18};  // far beyond GROMACS' limits
  for (const Box& box : {Box::from_dimensions(dims), Box::from_matrix(skewed)}) {
    SCOPED_TRACE(box.describe());
    const PointSet A = points_in_cell(box, 6000, rng, true), B = points_in_cell(box, 2500, rng, true);
    for (double rmax : {box.max_cutoff(), 0.2 * box.max_cutoff()}) {
      for (bool weighted : {false, true}) {
        SCOPED_TRACE("rmax " + std::to_string(rmax) + " weighted " + std::to_string(weighted));
        Statistic s = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, rmax, 24), OutputKind::Histogram, weighted);
        s.box = box;
        expect_triclinic_matches(s, A, nullptr);
        s.traversal = Traversal::Cross;
        expect_triclinic_matches(s, A, &B);
      }
    }
  }
}

TEST_F(Cuda, TriclinicLatticeOnBinEdgesEqualsCpu) {
  // A dyadic cell and the fractional lattice k/16: exact coordinates, separations on the edges
  // of bins a quarter wide, a sixteenth of the points on each face.
  const double m[9] = {8, 0, 0, 4, 8, 0, 4, 4, 8};
  const Box box = Box::from_matrix(m);
  PointSet p(3, 16 * 16 * 16);
  std::size_t i = 0;
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b)
      for (int c = 0; c < 16; ++c, ++i) {
        p.coord(0)[i] = a / 16.0 * 8 + b / 16.0 * 4 + c / 16.0 * 4;
        p.coord(1)[i] = b / 16.0 * 8 + c / 16.0 * 4;
        p.coord(2)[i] = c / 16.0 * 8;
      }
  const double rmax = std::floor(4 * box.max_cutoff()) / 4;
  Statistic s = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, rmax, static_cast<std::size_t>(4 * rmax)));
  s.box = box;
  expect_triclinic_matches(s, p, nullptr);
}

TEST_F(Cuda, TriclinicJackknifeRegionsRunOnTheCpu) {
  // The device counts regions on its grid only, which takes no triclinic cell: the engine hands
  // the statistic to the CPU and says so.
  std::mt19937_64 rng(7);
  const double dims[6] = {40, 36, 44, 75, 100, 110};
  const Box box = Box::from_dimensions(dims);
  PointSet A = points_in_cell(box, 3000, rng, false);
  std::vector<std::int32_t> labels(A.size());
  for (std::size_t k = 0; k < labels.size(); ++k) labels[k] = static_cast<std::int32_t>(k % 4);
  A.set_regions(std::move(labels));
  Statistic s = stat(Metric::Periodic, Traversal::Auto, Binning::linear(0.0, 8.0, 8));
  s.box = box;
  s.set_regions(4);
  const Result g = run(s, A, nullptr, on("cuda"));
  EXPECT_NE(g.info.plan.find("takes no triclinic cell"), std::string::npos) << g.info.plan;
  EXPECT_EQ(g.region_counts, run(s, A, nullptr, on("cpu")).region_counts);
}

TEST_F(Cuda, FramesInOneRunEqualCpu) {
  // A trajectory's frames of one box counted together (frame_paircounts: frames along one more
  // periodic axis, one jackknife region each): every frame's histogram equal to the CPU's, on
  // frames whose lattice points sit on the bins' edges; 70 frames of 80 bins take several runs
  // (64 frames at most, fewer where the device's region x bin counters ask for it: 16 on an H100).
  std::mt19937_64 rng(testing_support::fresh_seed());
  const double L = 12.0;
  std::vector<PointSet> a, b;
  for (int f = 0; f < 70; ++f) {
    auto p = uniform_points(1500, 3, 0.0, L, rng);
    for (std::size_t i = 0; i < 300; ++i)
      for (auto& x : p.x[i]) x = 0.5 * std::floor(2.0 * x);
    a.push_back(to_pointset(p));
    b.push_back(to_pointset(uniform_points(500, 3, 0.0, L, rng)));
  }
  const Binning bins = Binning::linear(0.0, 4.0, 80);
  for (bool cross : {false, true}) {
    const std::span<const PointSet> second = cross ? std::span<const PointSet>(b) : std::span<const PointSet>{};
    const FrameCounts g = frame_paircounts(a, second, bins, Box::cube(3, L), on("cuda"));
    const FrameCounts c = frame_paircounts(a, second, bins, Box::cube(3, L), on("cpu"));
    EXPECT_EQ(g.info.backend, "cuda") << g.info.plan;
    EXPECT_EQ(g.counts, c.counts) << "cross " << cross;
    std::cout << g.info.plan.substr(0, g.info.plan.find('\n')) << "\n";
  }
}
