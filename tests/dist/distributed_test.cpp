// The MPI decomposition against one process: on fresh random data (rank 0's clock seed, broadcast)
// every rank runs each statistic split over MPI_COMM_WORLD and alone; counts and floating sums
// (exact sums, twobody/exact_sums.hpp) must be identical, bit for bit. Run under mpiexec with any
// number of ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <random>

#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/correlation.hpp"
#include "twobody/distributed.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;

namespace {

std::uint64_t shared_seed() {
  static std::uint64_t seed = [] {
    std::uint64_t s = static_cast<std::uint64_t>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return s;
  }();
  static std::uint64_t k = 0;
  return seed + 7919 * (k++);
}

int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

std::vector<double> random_weights(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> w(n);
  for (auto& x : w) x = u(rng);
  return w;
}

std::vector<std::int32_t> random_regions(std::size_t n, int R, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> u(0, R - 1);
  std::vector<std::int32_t> r(n);
  for (auto& x : r) x = u(rng);
  return r;
}

void expect_same_bits(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], want[k]) << k;
}

// Splits the run over the world and compares it with this process alone.
// With `devices`, each rank runs its jobs over them (RunOptions::devices).
Result compare(const Statistic& s, const PointSet& a, const PointSet* b, DistributedOptions d = {},
               std::vector<int> devices = {}) {
  RunOptions o;
  o.threads = 1;
  const Result one = run(s, a, b, o);
  o.devices = devices;
  const Result many = run_distributed(s, a, b, o, MPI_COMM_WORLD, d);
  EXPECT_EQ(many.output, one.output);
  EXPECT_EQ(many.counts, one.counts);
  EXPECT_EQ(many.regions, one.regions);
  EXPECT_EQ(many.region_counts, one.region_counts);
  expect_same_bits(many.weighted, one.weighted);
  expect_same_bits(many.region_weighted, one.region_weighted);
  EXPECT_EQ(many.pairs.size(), one.pairs.size());
  for (std::size_t k = 0; k < std::min(many.pairs.size(), one.pairs.size()); ++k) {
    EXPECT_EQ(many.pairs[k].i, one.pairs[k].i) << k;
    EXPECT_EQ(many.pairs[k].j, one.pairs[k].j) << k;
    EXPECT_EQ(many.pairs[k].value, one.pairs[k].value) << k;
  }
  EXPECT_EQ(many.matrix, one.matrix);
  EXPECT_EQ(many.per_point_a.counts, one.per_point_a.counts);
  EXPECT_EQ(many.per_point_b.counts, one.per_point_b.counts);
  expect_same_bits(many.per_point_a.weighted, one.per_point_a.weighted);
  expect_same_bits(many.per_point_b.weighted, one.per_point_b.weighted);
  expect_same_bits(many.separation_sum, one.separation_sum);
  expect_same_bits(many.log_separation_sum, one.log_separation_sum);
  EXPECT_EQ(many.info.n_a, a.size());
  return many;
}

Statistic histogram(Traversal t, Metric m, const Binning& bins) {
  Statistic s;
  s.traversal = t;
  s.metric = m;
  s.reduction = reduce::Histogram{bins};
  return s;
}

TEST(Distributed, AutoClusteredWithinReach) {
  const std::uint64_t seed = shared_seed();
  const PointSet a = generate_clustered_box(4000, 3, 100.0, ClusterOptions{}, seed);
  compare(histogram(Traversal::Auto, Metric::Euclidean, Binning::logarithmic(0.1, 10, 15)), a, nullptr);
}

TEST(Distributed, AutoAllPairsEveryChunking) {
  const PointSet a = generate_uniform_box(1500, 2, 10.0, shared_seed());
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, sdh_default_binning(a, 64));
  for (int c : {1, 2, 3}) compare(s, a, nullptr, {c});
}

TEST(Distributed, CrossWeighted) {
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_uniform_box(1800, 3, 50.0, seed), b = generate_clustered_box(2100, 3, 50.0, {}, seed + 1);
  a.set_weights(random_weights(a.size(), seed + 2));
  b.set_weights(random_weights(b.size(), seed + 3));
  Statistic s = histogram(Traversal::Cross, Metric::Euclidean, Binning::linear(0, 12, 24));
  s.weighted = true;
  compare(s, a, &b);
}

TEST(Distributed, PeriodicWeightedRegions) {
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_uniform_box(2500, 3, 100.0, seed), b = generate_uniform_box(1700, 3, 100.0, seed + 1);
  a.set_weights(random_weights(a.size(), seed + 2));
  b.set_weights(random_weights(b.size(), seed + 3));
  a.set_regions(random_regions(a.size(), 5, seed + 4));
  b.set_regions(random_regions(b.size(), 5, seed + 5));
  Statistic s = histogram(Traversal::Auto, Metric::Periodic, Binning::linear(1, 20, 19));
  s.box = Box::cube(3, 100.0);
  s.weighted = true;
  s.set_regions(5);
  compare(s, a, nullptr);
  s.traversal = Traversal::Cross;
  compare(s, a, &b);
}

// Mean separations (--ravg): Σs and Σ ln s per bin summed over the ranks, weighted and with
// regions, auto and cross, equal to one process bit for bit (and present: not silently empty).
TEST(Distributed, MeanSeparations) {
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_clustered_box(2200, 3, 80.0, ClusterOptions{}, seed), b = generate_uniform_box(1300, 3, 80.0, seed + 1);
  a.set_weights(random_weights(a.size(), seed + 2));
  b.set_weights(random_weights(b.size(), seed + 3));
  a.set_regions(random_regions(a.size(), 4, seed + 4));
  b.set_regions(random_regions(b.size(), 4, seed + 5));
  for (bool weighted : {false, true}) {
    Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::logarithmic(0.5, 20, 9));
    s.set_mean_separation(true);
    s.weighted = weighted;
    s.set_regions(weighted ? 4 : 0);
    const Result r = compare(s, a, nullptr);
    ASSERT_EQ(r.separation_sum.size(), 9u);
    EXPECT_GT(r.separation_sum.back(), 0.0);
    s.traversal = Traversal::Cross;
    compare(s, a, &b);
  }
}

TEST(Distributed, AngularAutoAndCross) {
  const std::uint64_t seed = shared_seed();
  const PointSet a = sky_to_unit_vectors(generate_clustered_sky(3000, {}, seed));
  const PointSet b = sky_to_unit_vectors(generate_uniform_sky(2000, seed + 1));
  compare(histogram(Traversal::Auto, Metric::Angular, Binning::logarithmic(0.01, 10, 20)), a, nullptr);
  compare(histogram(Traversal::Cross, Metric::Angular, Binning::linear(0, 180, 18)), a, &b);
}

TEST(Distributed, ReductionAndPairList) {
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_uniform_box(1200, 3, 20.0, seed);
  a.set_weights(random_weights(a.size(), seed + 1));
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0.5, 2.5, 1));
  s.reduction = reduce::Count{s.binning()};
  s.weighted = true;
  compare(s, a, nullptr);
  s.weighted = false;
  s.reduction = reduce::PairList{s.binning()};
  const Result r = compare(s, a, nullptr);
  EXPECT_GT(r.pairs.size(), 0u);
  const PointSet b = generate_uniform_box(900, 3, 20.0, seed + 2);
  s.traversal = Traversal::Cross;
  compare(s, a, &b);
}

// Per-point reductions: every job's arrays go back to the callers' points (an auto run's cross
// jobs add to both of their chunks of A) and are summed over the ranks.
TEST(Distributed, PerPointCounts) {
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_clustered_box(3000, 3, 100.0, {}, seed), b = generate_uniform_box(2200, 3, 100.0, seed + 1);
  a.set_weights(random_weights(a.size(), seed + 2));
  b.set_weights(random_weights(b.size(), seed + 3));
  Statistic s = histogram(Traversal::Auto, Metric::Periodic, Binning::linear(0.5, 8, 1));
  s.box = Box::cube(3, 100.0);
  s.reduction = reduce::PerPoint{s.binning()};
  for (int c : {1, 3}) {
    s.weighted = c == 1;
    s.traversal = Traversal::Auto;
    const Result r = compare(s, a, nullptr, {c});
    EXPECT_EQ(r.per_point_a.counts.size(), a.size());
    EXPECT_TRUE(r.counts.empty());
    s.traversal = Traversal::Cross;
    compare(s, a, &b, {c});
  }
  s.metric = Metric::Euclidean;
  s.weighted = true;
  compare(s, b, &a);
}

TEST(Distributed, TwoDimensionalBinsAndMatrix) {
  const std::uint64_t seed = shared_seed();
  const PointSet a = generate_clustered_box(2000, 3, 100.0, {}, seed);
  Statistic s;
  s.reduction = reduce::Histogram2D{Binning2D::rp_pi(Binning::logarithmic(0.5, 15, 8), 10.0)};
  compare(s, a, nullptr);
  Statistic m = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 1, 1));
  m.reduction = reduce::Matrix{};
  compare(m, generate_uniform_box(200, 3, 1.0, seed + 1), nullptr);
}

TEST(Distributed, CorrelationWithJackknifeThroughRunOptions) {
  const std::uint64_t seed = shared_seed();
  const PointSet d = generate_uniform_box(1500, 3, 100.0, seed);
  const std::vector<PointSet> r{generate_uniform_box(2000, 3, 100.0, seed + 1),
                                generate_uniform_box(1800, 3, 100.0, seed + 2)};
  const Binning bins = Binning::logarithmic(1, 25, 10);
  JackknifeRequest jk;
  jk.regions = 8;
  RunOptions o;
  const CorrelationResult one = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 100.0), false, o, jk);
  o.distribution = mpi_distribution(MPI_COMM_WORLD);
  const CorrelationResult many = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 100.0), false, o, jk);
  EXPECT_EQ(many.raw.counts, one.raw.counts);
  ASSERT_EQ(many.derived.size(), one.derived.size());
  for (std::size_t c = 0; c < one.derived.size(); ++c) expect_same_bits(many.derived[c].values, one.derived[c].values);
  ASSERT_TRUE(many.jackknife && one.jackknife);
  EXPECT_EQ(many.jackknife->dd, one.jackknife->dd);
  EXPECT_EQ(many.jackknife->dr, one.jackknife->dr);
  EXPECT_EQ(many.jackknife->rr, one.jackknife->rr);
}

// Ranks x devices: every rank splits its jobs over two simulated devices (each the CPU backend on
// one thread: TWOBODY_SIMULATED_DEVICES), the same bits as one process.
TEST(Distributed, RanksTimesDevices) {
  setenv("TWOBODY_SIMULATED_DEVICES", "2", 1);
  const std::uint64_t seed = shared_seed();
  PointSet a = generate_clustered_box(3000, 3, 100.0, ClusterOptions{}, seed), b = generate_uniform_box(2000, 3, 100.0, seed + 1);
  a.set_weights(random_weights(a.size(), seed + 2));
  b.set_weights(random_weights(b.size(), seed + 3));
  a.set_regions(random_regions(a.size(), 5, seed + 4));
  b.set_regions(random_regions(b.size(), 5, seed + 5));
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::logarithmic(0.5, 15, 10));
  s.weighted = true;
  s.set_regions(5);
  const Result r = compare(s, a, nullptr, {}, {0, 1});
  if (world_size() > 1) EXPECT_NE(r.info.plan.find("imbalance"), std::string::npos) << r.info.plan;
  s.traversal = Traversal::Cross;
  compare(s, a, &b, {}, {1, 0});
  Statistic p = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0.5, 3, 1));
  p.reduction = reduce::PerPoint{p.binning()};
  compare(p, a, nullptr, {}, {0, 1});
  p.reduction = reduce::PairList{p.binning()};
  compare(p, a, nullptr, {}, {0, 1});
  unsetenv("TWOBODY_SIMULATED_DEVICES");
}

TEST(Distributed, EveryRankThrowsTheSameError) {
  PointSet a = generate_uniform_box(500, 3, 10.0, shared_seed());
  a.coord(0)[7] = 11.0;  // outside the periodic box
  Statistic s = histogram(Traversal::Auto, Metric::Periodic, Binning::linear(0, 2, 4));
  s.box = Box::cube(3, 10.0);
  try {
    run_distributed(s, a, nullptr, {}, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
  }
  // A job that fails on one rank only: the pair list limit reached by every job is a Resource
  // error everywhere, not a hang.
  Statistic p = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 100, 1));
  p.reduction = reduce::PairList{p.binning()};
  RunOptions o;
  o.max_pairs = 10;
  EXPECT_THROW(run_distributed(p, a, nullptr, o, MPI_COMM_WORLD), Error);
}

// The decomposition itself: without a reach, the jobs' pairs add up to the run's, each pair once.
TEST(Decomposition, EveryPairInExactlyOneJob) {
  const PointSet a = generate_uniform_box(997, 3, 1.0, shared_seed()), b = generate_uniform_box(613, 3, 1.0, 5);
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 2, 2));
  for (int ranks : {1, 2, 3, 4, 7})
    for (int cross = 0; cross < 2; ++cross) {
      const dist::Decomposition D = dist::decompose(s, a, cross ? &b : nullptr, ranks, 2);
      std::uint64_t pairs = 0;
      std::vector<std::uint64_t> seen_a(a.size(), 0);
      for (const auto& j : D.jobs) {
        const auto& sb = cross ? D.b : D.a;
        pairs += j.is_auto ? D.a.size(j.a) * (D.a.size(j.a) - 1) / 2 : D.a.size(j.a) * sb.size(j.b);
        EXPECT_LT(j.rank, ranks);
      }
      EXPECT_EQ(D.dropped, 0u);
      EXPECT_EQ(pairs, cross ? a.size() * b.size() : a.size() * (a.size() - 1) / 2) << ranks;
      for (std::size_t c = 0; c < D.a.chunks(); ++c)
        for (std::size_t i = D.a.begin[c]; i < D.a.begin[c + 1]; ++i) ++seen_a[D.a.order[i]];
      for (auto n : seen_a) ASSERT_EQ(n, 1u);
    }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS() != 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("distributed test on %d MPI ranks: %s\n", world_size(), any ? "FAILED" : "passed");
  MPI_Finalize();
  return any;
}
