// "auto" before a GPU is started (engine/auto_choice.hpp): small runs go to the CPU, the same
// result, until the CPU time spent that way reaches a GPU's start-up.
#include <gtest/gtest.h>

#include <random>

#include "test_support.hpp"
#include "twobody/detail/engine/auto_choice.hpp"
#include "twobody/detail/engine/cpu_estimate.hpp"
#include "twobody/detail/engine/device_start_up.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/engine.hpp"
#include "twobody/joins.hpp"
#include "twobody/vectors.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

Statistic paircount_stat(double rmax) {
  Statistic s;
  s.metric = Metric::Euclidean;
  s.traversal = Traversal::Auto;
  s.reduction = reduce::Histogram{Binning::logarithmic(0.1, rmax, 12)};
  return s;
}

RunOptions on(const std::string& backend) {
  RunOptions o;
  o.backend = backend;
  return o;
}

constexpr const char* kRented = "less than a GPU's start-up";

}  // namespace

TEST(AutoChoice, RentsTheCpuUntilItsTimeReachesTheStartUp) {
  EXPECT_TRUE(rents_the_cpu(0, 0.01));
  EXPECT_TRUE(rents_the_cpu(0.2, kDeviceStartUpSeconds - 0.2));  // up to the start-up's cost itself
  EXPECT_FALSE(rents_the_cpu(0.2, kDeviceStartUpSeconds - 0.19));
  EXPECT_FALSE(rents_the_cpu(0, kDeviceStartUpSeconds * 1.01));
  EXPECT_FALSE(rents_the_cpu(0, -1));  // not estimated: no rental
  // A loop of small runs rents while the sum fits, then stops: at most the start-up's cost spent.
  double spent = 0;
  int rented = 0;
  for (int k = 0; k < 100; ++k)
    if (rents_the_cpu(spent, 0.007)) {
      spent += 0.007;
      ++rented;
    }
  EXPECT_EQ(rented, static_cast<int>(kDeviceStartUpSeconds / 0.007));
  EXPECT_LE(spent, kDeviceStartUpSeconds);
}

TEST(AutoChoice, TheCpuEstimateCountsTheGridsCandidatesAndRunsItsIndex) {
  std::mt19937_64 rng(fresh_seed());
  const PointSet a = to_pointset(uniform_points(20000, 3, -500, 500, rng));
  const Statistic s = paircount_stat(20);
  RunOptions o = on("auto");
  o.threads = 2;
  const Plan plan = make_plan(s, a, nullptr, o);
  EstimatedCpuRun est = estimate_cpu_run(plan);
  ASSERT_NE(est.backend, nullptr);
  // The grid's candidates (~20000 · 4/3·π·20³/10^9 · 20000 / 2 · a few) at 1.5·10^8 a thread-second:
  // far below a second, above zero.
  EXPECT_GT(est.seconds, 0);
  EXPECT_LT(est.seconds, 0.05);
  // The same plan's run on that backend: the CPU's result.
  const Result r = est.backend->run(plan);
  EXPECT_EQ(r.counts, run(s, a, nullptr, on("cpu")).counts);
  // All pairs of a brute-force path cost more.
  RunOptions brute = o;
  brute.path = "brute";
  const Plan all = make_plan(s, a, nullptr, brute);
  EXPECT_GT(estimate_cpu_run(all).seconds, 20 * est.seconds);
  // Sets beyond the estimate's size are not estimated (their cell index is not milliseconds).
  const PointSet big = to_pointset(uniform_points((std::size_t(1) << 18) + 1, 3, 0, 1, rng));
  EXPECT_LT(estimate_cpu_run(make_plan(s, big, nullptr, o)).seconds, 0);
}

TEST(AutoChoice, ASmallAutoRunTakesTheCpuBeforeAnyGpuIsStarted) {
  if (!device_start_up_ahead()) GTEST_SKIP() << "this process has tried a CUDA backend (or has none built): no rental";
  if (!CpuRental::process().would_rent(0.05)) GTEST_SKIP() << "earlier runs of this process spent the account";
  std::mt19937_64 rng(fresh_seed());
  const PointSet a = to_pointset(uniform_points(5000, 3, 0, 100, rng));
  const Statistic s = paircount_stat(5);
  const double before = CpuRental::process().spent();
  const Result r = run(s, a, nullptr, on("auto"));
  EXPECT_EQ(r.info.backend, "cpu");
  EXPECT_NE(r.info.plan.find(kRented), std::string::npos) << r.info.plan;
  EXPECT_EQ(r.counts, run(s, a, nullptr, on("cpu")).counts);
  // The account holds the run's own seconds (the estimate replaced by them), no GPU started.
  EXPECT_GT(CpuRental::process().spent(), before);
  EXPECT_TRUE(device_start_up_ahead());
  // An explicit backend is never second-guessed, and explaining books nothing.
  EXPECT_EQ(run(s, a, nullptr, on("cpu")).info.plan.find(kRented), std::string::npos);
  const double after = CpuRental::process().spent();
  EXPECT_NE(explain(s, a, nullptr, on("auto")).find(kRented), std::string::npos);
  EXPECT_EQ(CpuRental::process().spent(), after);
}

TEST(AutoChoice, ASmallVectorRunTakesTheCpuBeforeAnyGpuIsStarted) {
  if (!device_start_up_ahead()) GTEST_SKIP() << "this process has tried a CUDA backend (or has none built): no rental";
  if (!CpuRental::process().would_rent(0.05)) GTEST_SKIP() << "earlier runs of this process spent the account";
  std::mt19937_64 rng(fresh_seed());
  std::normal_distribution<double> g(0, 1);
  const std::size_t n = 1500;
  const int d = 24;  // beyond the points' 8 dimensions: the vector paths
  std::vector<double> rows(n * d);
  for (double& x : rows) x = g(rng);
  const VectorSet v = VectorSet::from_rows(rows, n, d);
  const KnnResult r = nearest_neighbours(v, nullptr, 5, Metric::Euclidean, on("auto"));
  EXPECT_EQ(r.info.backend, "cpu");
  EXPECT_NE(r.info.plan.find(kRented), std::string::npos) << r.info.plan;
  const KnnResult c = nearest_neighbours(v, nullptr, 5, Metric::Euclidean, on("cpu"));
  EXPECT_EQ(r.indices, c.indices);
  EXPECT_EQ(r.distances, c.distances);
  EXPECT_TRUE(device_start_up_ahead());
}
