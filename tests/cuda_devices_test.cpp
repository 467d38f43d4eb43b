// A run split over several CUDA devices of one process (RunOptions::devices) against one device and
// against the CPU backend, bit for bit: devices {0, 0} (two host threads sharing one GPU, so it runs
// on a one-GPU machine) and every visible device when there are two or more. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "same_result.hpp"
#include "test_support.hpp"
#include "twobody/correlation.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"

using namespace twobody;
using testing_support::expect_same_result;
using testing_support::fresh_seed;
using testing_support::ScopedEnv;

namespace {

class CudaDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

// The device lists each case runs on: {0, 0}, and all visible devices when there are two or more.
std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists{{0, 0}};
  if (visible_devices().size() >= 2) lists.push_back(visible_devices());
  return lists;
}

std::vector<double> random_weights(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> w(n);
  for (auto& x : w) x = u(rng);
  return w;
}

// The split run against one CUDA run and one CPU run.
void compare(const Statistic& s, const PointSet& a, const PointSet* b) {
  RunOptions cuda = testing_support::on("cuda"), cpu = testing_support::on("cpu");
  const Result one = run(s, a, b, cuda);
  const Result host = run(s, a, b, cpu);
  // Both splits: the devices sharing the kernels' items (where the run takes shares) and pair jobs.
  for (const char* split : {"items", "jobs"})
    for (const std::vector<int>& devices : device_lists()) {
      SCOPED_TRACE(std::string(split) + ", devices " + std::to_string(devices.size()));
      const ScopedEnv mode("TWOBODY_DEVICE_SPLIT", split);
      RunOptions o = cuda;
      o.devices = devices;
      const Result many = run(s, a, b, o);
      EXPECT_EQ(many.info.backend, "cuda") << many.info.plan;
      EXPECT_NE(many.info.plan.find("devices: " + std::to_string(devices.size()) + " devices"), std::string::npos)
          << many.info.plan;
      const bool shared = many.info.plan.find("ranges taken from one queue") != std::string::npos;
      if (std::string(split) == "jobs" || s.output() == OutputKind::PairList) EXPECT_FALSE(shared) << many.info.plan;
      else EXPECT_TRUE(shared) << many.info.plan;
      expect_same_result(many, one);
      expect_same_result(many, host);
    }
}

Statistic histogram(Traversal t, Metric m, const Binning& bins) {
  Statistic s;
  s.traversal = t;
  s.metric = m;
  s.reduction = reduce::Histogram{bins};
  return s;
}

}  // namespace

TEST_F(CudaDevices, AllPairsWeightedHistogram) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet a = generate_uniform_box(60000, 3, 10.0, seed);
  a.set_weights(random_weights(a.size(), rng));
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, sdh_default_binning(a, 256));
  compare(s, a, nullptr);
  s.weighted = true;
  compare(s, a, nullptr);
}

TEST_F(CudaDevices, CutoffCountsWithRegionsAutoAndCross) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet a = generate_clustered_box(200000, 3, 500.0, ClusterOptions{}, seed);
  PointSet b = generate_uniform_box(150000, 3, 500.0, seed + 1);
  a.set_weights(random_weights(a.size(), rng));
  b.set_weights(random_weights(b.size(), rng));
  std::vector<std::int32_t> ra(a.size()), rb(b.size());
  for (auto& x : ra) x = static_cast<std::int32_t>(rng() % 20);
  for (auto& x : rb) x = static_cast<std::int32_t>(rng() % 20);
  a.set_regions(ra);
  b.set_regions(rb);
  for (Metric m : {Metric::Euclidean, Metric::Periodic}) {
    Statistic s = histogram(Traversal::Auto, m, Binning::logarithmic(0.5, 20, 15));
    s.box = Box::cube(3, 500.0);
    s.weighted = true;
    s.set_regions(20);
    s.set_mean_separation(true);
    compare(s, a, nullptr);
    s.traversal = Traversal::Cross;
    compare(s, a, &b);
  }
}

TEST_F(CudaDevices, AnglesCountsPerPointAndPairLists) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet sky = sky_to_unit_vectors(generate_clustered_sky(100000, {}, seed));
  const PointSet sky2 = sky_to_unit_vectors(generate_uniform_sky(80000, seed + 1));
  compare(histogram(Traversal::Auto, Metric::Angular, Binning::logarithmic(0.01, 5, 20)), sky, nullptr);
  compare(histogram(Traversal::Cross, Metric::Angular, Binning::logarithmic(0.01, 5, 20)), sky, &sky2);
  std::mt19937_64 rng(seed + 2);
  PointSet a = generate_uniform_box(100000, 3, 200.0, seed + 3);
  a.set_weights(random_weights(a.size(), rng));
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0.5, 3, 1));
  s.weighted = true;
  s.reduction = reduce::Count{s.binning()};
  compare(s, a, nullptr);
  s.reduction = reduce::PerPoint{s.binning()};
  compare(s, a, nullptr);
  s.weighted = false;
  s.reduction = reduce::PairList{s.binning()};
  compare(s, a, nullptr);
}

TEST_F(CudaDevices, TwoDimensionalBins) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet a = generate_clustered_box(150000, 3, 300.0, {}, seed);
  Statistic s;
  s.reduction = reduce::Histogram2D{Binning2D::rp_pi(Binning::logarithmic(0.5, 20, 10), 20.0)};
  compare(s, a, nullptr);
}

// The pair sink from device threads: every pair once, in the callers' indices.
TEST_F(CudaDevices, PairSink) {
  const PointSet a = generate_uniform_box(120000, 3, 200.0, fresh_seed());
  Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 2, 1));
  s.reduction = reduce::PairList{s.binning()};
  const Result one = run(s, a, nullptr, testing_support::on("cuda"));
  for (const std::vector<int>& devices : device_lists()) {
    RunOptions o = testing_support::on("cuda");
    o.devices = devices;
    std::vector<PairRecord> got;
    o.pair_sink = [&](std::span<const PairRecord> batch) { got.insert(got.end(), batch.begin(), batch.end()); };
    run(s, a, nullptr, o);
    std::sort(got.begin(), got.end(), pair_order);
    ASSERT_EQ(got.size(), one.pairs.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].i, one.pairs[k].i) << k;
      ASSERT_EQ(got[k].j, one.pairs[k].j) << k;
      ASSERT_EQ(got[k].value, one.pairs[k].value) << k;
    }
  }
}

TEST_F(CudaDevices, CorrelationWithJackknife) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PointSet d = generate_clustered_box(100000, 3, 500.0, {}, seed);
  const std::vector<PointSet> r{generate_uniform_box(200000, 3, 500.0, seed + 1),
                                generate_uniform_box(150000, 3, 500.0, seed + 2)};
  const Binning bins = Binning::logarithmic(1, 40, 12);
  JackknifeRequest jk;
  jk.regions = 27;
  RunOptions o = testing_support::on("cuda");
  const CorrelationResult one = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 500.0), false, o, jk);
  for (const std::vector<int>& devices : device_lists()) {
    o.devices = devices;
    const CorrelationResult many = correlation(d, r, bins, CorrelationSpace::Box, Box::cube(3, 500.0), false, o, jk);
    EXPECT_EQ(many.raw.counts, one.raw.counts);
    ASSERT_EQ(many.derived.size(), one.derived.size());
    for (std::size_t c = 0; c < one.derived.size(); ++c)
      testing_support::expect_same_doubles(many.derived[c].values, one.derived[c].values, "derived");
    ASSERT_TRUE(many.jackknife && one.jackknife);
    EXPECT_EQ(many.jackknife->dd, one.jackknife->dd);
    EXPECT_EQ(many.jackknife->dr, one.jackknife->dr);
    EXPECT_EQ(many.jackknife->rr, one.jackknife->rr);
    EXPECT_NE(many.raw.info.plan.find("whole counts shared out"), std::string::npos) << many.raw.info.plan;
  }
}

TEST_F(CudaDevices, OneDeviceAndBadIndices) {
  const PointSet a = generate_uniform_box(20000, 3, 50.0, fresh_seed());
  const Statistic s = histogram(Traversal::Auto, Metric::Euclidean, Binning::linear(0, 5, 10));
  RunOptions o = testing_support::on("cuda");
  const Result one = run(s, a, nullptr, o);
  const int n = static_cast<int>(visible_devices().size());
  o.devices = {n - 1};
  expect_same_result(run(s, a, nullptr, o), one);
  o.devices = {0, n};
  testing_support::expect_error(ErrorKind::Config, "is not visible", [&] { run(s, a, nullptr, o); });
}
