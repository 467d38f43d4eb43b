// A run split over several devices of one process (RunOptions::devices, device_distribution.hpp),
// without a GPU: TWOBODY_SIMULATED_DEVICES makes each device the CPU backend on one thread, so the
// queue, the decomposition, the merge, the exact sums and the pair sink run as they do on GPUs. Every
// output must equal one plain run bit for bit, on fresh random data (the seed is printed with any
// failure), and on a lattice whose pairs lie on the bin edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "same_result.hpp"
#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/detail/engine/work_share.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::expect_same_result;
using testing_support::fresh_seed;
using testing_support::ScopedEnv;

namespace {

std::vector<double> random_weights(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> w(n);
  for (auto& x : w) x = u(rng);
  return w;
}

std::vector<std::int32_t> random_regions(std::size_t n, int R, std::mt19937_64& rng) {
  std::vector<std::int32_t> r(n);
  for (auto& x : r) x = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(R));
  return r;
}

Statistic histogram(Traversal t, Metric m, const Binning& bins) {
  Statistic s;
  s.traversal = t;
  s.metric = m;
  s.reduction = reduce::Histogram{bins};
  return s;
}

// The plain run (the CPU backend on 2 threads) against the same run over simulated `devices`.
Result compare(const Statistic& s, const PointSet& a, const PointSet* b, std::vector<int> devices = {0, 1, 2}) {
  RunOptions plain;
  plain.backend = "cpu";
  plain.threads = 2;
  const Result one = run(s, a, b, plain);
  const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
  RunOptions split;
  split.devices = devices;
  const Result many = run(s, a, b, split);
  expect_same_result(many, one);
  if (devices.size() > 1 && s.output() != OutputKind::Matrix) {
    EXPECT_NE(many.info.plan.find("devices: " + std::to_string(devices.size()) + " devices"), std::string::npos)
        << many.info.plan;
    for (std::size_t w = 0; w < devices.size(); ++w)
      EXPECT_NE(many.info.plan.find("devices: device " + std::to_string(devices[w])), std::string::npos)
          << many.info.plan;
    EXPECT_NE(many.info.plan.find("imbalance |max - min| / max"), std::string::npos);
  }
  return many;
}

struct Sets {
  PointSet a, b;
};

// Clustered A and uniform B in a box of side 100, weighted, with jackknife labels.
Sets weighted_sets(std::uint64_t seed, std::size_t na, std::size_t nb, int regions) {
  std::mt19937_64 rng(seed);
  Sets s{generate_clustered_box(na, 3, 100.0, ClusterOptions{}, seed), generate_uniform_box(nb, 3, 100.0, seed + 1)};
  s.a.set_weights(random_weights(na, rng));
  s.b.set_weights(random_weights(nb, rng));
  if (regions > 0) {
    s.a.set_regions(random_regions(na, regions, rng));
    s.b.set_regions(random_regions(nb, regions, rng));
  }
  return s;
}

}  // namespace

TEST(DeviceDistribution, AllPairsHistogramOnEveryDeviceList) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet a = generate_uniform_box(1500, 2, 10.0, seed);
  a.set_weights(random_weights(a.size(), rng));
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, sdh_default_binning(a, 64));
  s.weighted = true;
  for (const std::vector<int>& devices : {std::vector<int>{0, 1, 2}, {0, 0}, {2, 0}, {1}}) compare(s, a, nullptr, devices);
}

TEST(DeviceDistribution, CutoffAutoAndCrossWeightedWithRegions) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Sets p = weighted_sets(seed, 3000, 2200, 6);
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::logarithmic(0.5, 12, 11));
  s.weighted = true;
  s.set_regions(6);
  const Result r = compare(s, p.a, nullptr);
  EXPECT_NE(r.info.plan.find("dropped"), std::string::npos) << r.info.plan;  // slabs beyond the reach
  s.traversal = Traversal::Cross;
  compare(s, p.a, &p.b);
}

TEST(DeviceDistribution, PeriodicWithMeanSeparations) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Sets p = weighted_sets(seed, 2500, 1700, 4);
  for (bool weighted : {false, true}) {
    Statistic s = histogram(Traversal::Auto, Metric::Periodic, Binning::linear(1, 20, 19));
    s.box = Box::cube(3, 100.0);
    s.weighted = weighted;
    s.set_regions(weighted ? 4 : 0);
    s.set_mean_separation(true);
    const Result r = compare(s, p.a, nullptr);
    EXPECT_GT(r.separation_sum.back(), 0.0);
    s.traversal = Traversal::Cross;
    compare(s, p.a, &p.b);
  }
}

TEST(DeviceDistribution, AnglesAutoAndCross) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet a = sky_to_unit_vectors(generate_clustered_sky(3000, {}, seed));
  const PointSet b = sky_to_unit_vectors(generate_uniform_sky(2000, seed + 1));
  compare(histogram(Traversal::Auto, Metric::Angular, Binning::logarithmic(0.01, 10, 20)), a, nullptr);
  compare(histogram(Traversal::Cross, Metric::Angular, Binning::linear(0, 180, 18)), a, &b);
}

// A lattice of spacing 1/2 with edges at multiples of 1/2: most pairs lie exactly on an edge.
TEST(DeviceDistribution, LatticeOnTheEdges) {
  const PointSet a = testing_support::to_pointset(testing_support::half_lattice(9, 8, 7));
  compare(histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 2.5, 5)), a, nullptr);
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0.5, 1.5, 1));
  s.reduction = reduce::PairList{s.binning()};
  compare(s, a, nullptr, {0, 1});
}

TEST(DeviceDistribution, CountsPairListsAndPerPoint) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Sets p = weighted_sets(seed, 1800, 1300, 0);
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0.5, 4, 1));
  s.weighted = true;
  for (Traversal t : {Traversal::Auto, Traversal::Cross}) {
    s.traversal = t;
    const PointSet* b = t == Traversal::Cross ? &p.b : nullptr;
    s.reduction = reduce::Count{s.binning()};
    compare(s, p.a, b);
    s.reduction = reduce::PerPoint{s.binning()};
    const Result r = compare(s, p.a, b);
    EXPECT_EQ(r.per_point_a.counts.size(), p.a.size());
    s.weighted = false;
    s.reduction = reduce::PairList{s.binning()};
    EXPECT_GT(compare(s, p.a, b).pairs.size(), 0u);
    s.weighted = true;
  }
}

TEST(DeviceDistribution, TwoDimensionalBins) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Sets p = weighted_sets(seed, 2000, 1500, 0);
  Statistic s;
  s.weighted = true;
  s.reduction = reduce::Histogram2D{Binning2D::rp_pi(Binning::logarithmic(0.5, 15, 8), 10.0)};
  compare(s, p.a, nullptr);
  s.reduction = reduce::Histogram2D{Binning2D::s_mu(Binning::linear(1, 20, 6), 1.0, 5)};
  s.traversal = Traversal::Cross;
  compare(s, p.a, &p.b);
}

TEST(DeviceDistribution, MatrixRunsWholeOnTheFirstDevice) {
  const PointSet a = generate_uniform_box(120, 3, 1.0, fresh_seed());
  Statistic m = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 1, 1));
  m.reduction = reduce::Matrix{};
  const Result r = compare(m, a, nullptr);
  EXPECT_NE(r.info.plan.find("devices: not split over 3 devices: a matrix"), std::string::npos) << r.info.plan;
}

// The pair sink gets every pair once, in the callers' indices, from one thread at a time.
TEST(DeviceDistribution, PairSinkOneCallAtATime) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Sets p = weighted_sets(seed, 2000, 1500, 0);
  for (bool cross : {false, true}) {
    Statistic s = histogram(cross ? Traversal::Cross : Traversal::Auto, Metric::Euclidean, Binning::linear(0, 5, 1));
    s.reduction = reduce::PairList{s.binning()};
    const PointSet* b = cross ? &p.b : nullptr;
    RunOptions plain;
    plain.backend = "cpu";
    const Result one = run(s, p.a, b, plain);
    const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
    RunOptions o;
    o.devices = {0, 1, 2};
    std::vector<PairRecord> got;
    std::atomic<int> inside{0};
    bool overlapped = false, batch_sorted = true;
    o.pair_sink = [&](std::span<const PairRecord> batch) {
      if (inside++ != 0) overlapped = true;
      batch_sorted = batch_sorted && std::is_sorted(batch.begin(), batch.end(), pair_order);
      std::this_thread::yield();
      got.insert(got.end(), batch.begin(), batch.end());
      --inside;
    };
    const Result r = run(s, p.a, b, o);
    EXPECT_TRUE(r.pairs.empty());
    EXPECT_FALSE(overlapped);
    EXPECT_TRUE(batch_sorted);
    std::sort(got.begin(), got.end(), pair_order);
    ASSERT_EQ(got.size(), one.pairs.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].i, one.pairs[k].i) << k;
      ASSERT_EQ(got[k].j, one.pairs[k].j) << k;
      ASSERT_EQ(got[k].value, one.pairs[k].value) << k;
      if (!cross) ASSERT_LT(got[k].i, got[k].j);
    }
    // max_pairs over all the jobs together, and a sink that throws: the error leaves run().
    o.max_pairs = got.size() - 1;
    expect_error(ErrorKind::Resource, "exceeds the limit", [&] { run(s, p.a, b, o); });
    o.max_pairs = std::size_t(1) << 31;
    o.pair_sink = [](std::span<const PairRecord>) { throw Error(ErrorKind::Output, "disk full"); };
    expect_error(ErrorKind::Output, "disk full", [&] { run(s, p.a, b, o); });
    o.pair_sink = nullptr;
    o.max_pairs = 10;
    expect_error(ErrorKind::Resource, "exceeds the limit", [&] { run(s, p.a, b, o); });
  }
}

TEST(DeviceDistribution, ProgressOneCallAtATimeNeverBack) {
  const PointSet a = generate_uniform_box(3000, 3, 10.0, fresh_seed());
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 18, 30));
  const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
  RunOptions o;
  o.devices = {0, 1, 2};
  o.path = "brute";  // (the CPU's tiles report within a job too)
  std::mutex m;
  std::vector<double> seen;
  o.progress = [&](double f) {
    const std::unique_lock<std::mutex> lock(m, std::try_to_lock);
    ASSERT_TRUE(lock.owns_lock()) << "two progress calls at once";
    seen.push_back(f);
  };
  run(s, a, nullptr, o);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GE(seen.front(), 0.0);
  EXPECT_EQ(seen.back(), 1.0);  // every job done
}

TEST(DeviceDistribution, CorrelationWithJackknifeThroughRunOptions) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet d = generate_clustered_box(1500, 3, 100.0, {}, seed);
  const std::vector<PointSet> r{generate_uniform_box(2000, 3, 100.0, seed + 1),
                                generate_uniform_box(1800, 3, 100.0, seed + 2)};
  const Binning bins = Binning::logarithmic(1, 25, 10);
  JackknifeRequest jk;
  jk.regions = 8;
  RunOptions o;
  o.backend = "cpu";
  const CorrelationResult one = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 100.0), false, o, jk);
  const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
  o.backend = "auto";
  o.devices = {0, 1, 2};
  std::vector<std::string> plans;
  o.on_plan = [&](const std::string& plan) { plans.push_back(plan); };
  const CorrelationResult many = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 100.0), false, o, jk);
  EXPECT_EQ(many.raw.counts, one.raw.counts);
  ASSERT_EQ(many.derived.size(), one.derived.size());
  for (std::size_t c = 0; c < one.derived.size(); ++c)
    testing_support::expect_same_doubles(many.derived[c].values, one.derived[c].values, "derived");
  ASSERT_TRUE(many.jackknife && one.jackknife);
  EXPECT_EQ(many.jackknife->dd, one.jackknife->dd);
  EXPECT_EQ(many.jackknife->dr, one.jackknife->dr);
  EXPECT_EQ(many.jackknife->rr, one.jackknife->rr);
  // The counts (DD, RR_1, RR_2, and the joined DR) shared out whole over the devices, each an
  // ordinary run on one of them.
  EXPECT_EQ(plans.size(), 4u);
  for (const std::string& p : plans) EXPECT_EQ(p.find("not split"), std::string::npos) << p;
  EXPECT_NE(many.raw.info.plan.find("over 3 devices, whole counts shared out"), std::string::npos) << many.raw.info.plan;
}

TEST(DeviceDistribution, ExplainSaysHowTheRunIsSplit) {
  const PointSet a = generate_uniform_box(2000, 3, 100.0, fresh_seed());
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 10, 5));
  const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "2");
  RunOptions o;
  o.devices = {0, 1};
  const std::string e = explain(s, a, nullptr, o);
  EXPECT_NE(e.find("devices: the set cut into 8 slabs"), std::string::npos) << e;
  EXPECT_NE(e.find("devices: each job runs as:\nbackend: cpu"), std::string::npos) << e;
  EXPECT_EQ(visible_devices(), (std::vector<int>{0, 1}));
}

TEST(DeviceDistribution, DevicesBeyondTheVisibleOnesAreRefused) {
  const PointSet a = generate_uniform_box(200, 3, 10.0, fresh_seed());
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 2, 4));
  RunOptions o;
  {
    const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
    o.devices = {0, 3};
    expect_error(ErrorKind::Config, "device 3 is not visible: this process sees 3 simulated devices (0 to 2)",
                 [&] { run(s, a, nullptr, o); });
    o.devices = {-1};
    expect_error(ErrorKind::Config, "device -1 is not visible", [&] { explain(s, a, nullptr, o); });
  }
  {
    const ScopedEnv bad("TWOBODY_SIMULATED_DEVICES", "many");
    o.devices = {0};
    expect_error(ErrorKind::Config, "TWOBODY_SIMULATED_DEVICES=many", [&] { run(s, a, nullptr, o); });
  }
  o.backend = "cpu";
  o.devices = {0};
  expect_error(ErrorKind::Config, "the backend is cpu", [&] { run(s, a, nullptr, o); });
  // The whole run's errors come first, as in one run: an empty second set, a point outside the box.
  const ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "2");
  o.backend = "auto";
  o.devices = {0, 1};
  Statistic c = s;
  c.traversal = Traversal::Cross;
  const PointSet empty(3, 0);
  expect_error(ErrorKind::Input, "second point set is empty", [&] { run(c, a, &empty, o); });
}

// The decomposition's queue order: longest first, ties in job order.
TEST(DeviceDistribution, QueueIsLongestFirst) {
  const PointSet a = generate_clustered_box(5000, 3, 100.0, {}, fresh_seed());
  const dist::Decomposition D =
      dist::decompose(histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 10, 5)), a, nullptr, 1, 12);
  const std::vector<std::size_t> q = D.longest_first();
  ASSERT_EQ(q.size(), D.jobs.size());
  for (std::size_t k = 1; k < q.size(); ++k) {
    ASSERT_GE(D.jobs[q[k - 1]].estimate, D.jobs[q[k]].estimate);
    if (D.jobs[q[k - 1]].estimate == D.jobs[q[k]].estimate) ASSERT_LT(q[k - 1], q[k]);
  }
}

// The shared items of one run (work_share.hpp): the ranges cover the items once, whichever
// threads take them; a run of another item space takes none and leaves them to the others.
TEST(WorkShare, RangesCoverTheItemsOnceAcrossThreads) {
  for (const std::uint64_t items : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{1000003}}) {
    WorkShare share(24);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
    std::mutex m;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        while (const auto r = share.next(42, items)) {
          std::lock_guard<std::mutex> lock(m);
          taken.push_back(*r);
        }
      });
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(taken.size(), 24u);
    std::sort(taken.begin(), taken.end());
    std::uint64_t at = 0;
    for (const auto& [b, e] : taken) {
      ASSERT_EQ(b, at);
      ASSERT_LE(b, e);
      at = e;
    }
    EXPECT_EQ(at, items);
    EXPECT_EQ(share.taken(), 24);
  }
  WorkShare share(4);
  ASSERT_TRUE(share.next(7, 100));
  EXPECT_FALSE(share.next(8, 100)) << "another item space";
  EXPECT_FALSE(share.next(7, 99)) << "another item count";
  EXPECT_EQ(share.taken_by(std::this_thread::get_id()), 1);
  int more = 0;
  while (share.next(7, 100)) ++more;
  EXPECT_EQ(more, 3);
}
