// The hybrid backend (--backend hybrid: the CPU and the GPU on one work queue, engine/hybrid_run.hpp)
// without a GPU: TWOBODY_HYBRID_FAKE_GPU=1 makes the "GPU" worker the CPU backend on one thread, so
// the queue, the bands, the merge and the report run here, and the result must be the CPU-only
// run's bit for bit (itself tested against the float64 rule in joins_test.cpp): joins (totals,
// per-vector counts, pairs in memory and through a pair sink) and k-NN, self and cross, on random
// and adversarial sets (duplicates, pairs exactly at eps, offsets of 10^6; d = 1, 3, 17, 128),
// with bands forced down to a few rows; point statistics (d <= 8) through the slab pairs; and the
// queue itself. tests/cuda_hybrid_test.cpp runs the same comparisons with the real GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "test_support.hpp"
#include "vector_test_data.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/hybrid_queue.hpp"
#include "twobody/joins.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::fresh_seed;
using testing_support::gaussian_vectors;
using testing_support::lattice_vectors;
using testing_support::on;
using testing_support::ScopedEnv;

namespace {

// Every field a join, k-NN or point statistic fills, compared bit for bit.
void expect_same(const Result& want, const Result& got, const std::string& what) {
  ASSERT_EQ(got.output, want.output) << what;
  EXPECT_EQ(got.counts, want.counts) << what;
  EXPECT_EQ(got.per_point_a.counts, want.per_point_a.counts) << what;
  EXPECT_EQ(got.per_point_b.counts, want.per_point_b.counts) << what;
  const auto bits = [](const std::vector<double>& v) {
    std::vector<std::uint64_t> b;
    for (double x : v) b.push_back(std::bit_cast<std::uint64_t>(x));
    return b;
  };
  EXPECT_EQ(bits(got.weighted), bits(want.weighted)) << what;
  EXPECT_EQ(bits(got.per_point_a.weighted), bits(want.per_point_a.weighted)) << what;
  EXPECT_EQ(bits(got.per_point_b.weighted), bits(want.per_point_b.weighted)) << what;
  ASSERT_EQ(got.pairs.size(), want.pairs.size()) << what;
  for (std::size_t t = 0; t < want.pairs.size(); ++t) {
    ASSERT_EQ(got.pairs[t].i, want.pairs[t].i) << what << " pair " << t;
    ASSERT_EQ(got.pairs[t].j, want.pairs[t].j) << what << " pair " << t;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(got.pairs[t].value), std::bit_cast<std::uint64_t>(want.pairs[t].value))
        << what << " pair " << t;
  }
  EXPECT_EQ(got.nearest.k, want.nearest.k) << what;
  EXPECT_EQ(got.nearest.index, want.nearest.index) << what;
  EXPECT_EQ(bits(got.nearest.key), bits(want.nearest.key)) << what;
  EXPECT_EQ(bits(got.nearest.value), bits(want.nearest.value)) << what;
}

// A fake-GPU hybrid run with bands of `band_rows` rows (vectors) or `slabs` slabs (points).
struct FakeGpu {
  explicit FakeGpu(const char* band_rows = "3", const char* slabs = "5")
      : fake("TWOBODY_HYBRID_FAKE_GPU", "1"), rows("TWOBODY_HYBRID_BAND_ROWS", band_rows),
        slab("TWOBODY_HYBRID_SLABS", slabs), gpu("TWOBODY_HYBRID_GPU_SECONDS", "0.001"),
        cpu("TWOBODY_HYBRID_CPU_SECONDS", "0.0005") {}
  ScopedEnv fake, rows, slab, gpu, cpu;
};

RunOptions hybrid(int threads = 3) {
  RunOptions o = on("hybrid");
  o.threads = threads;
  return o;
}

// Both sides worked and the report adds up: the bands' rows are the first set's rows (vectors).
void expect_shared(const Result& r, std::size_t rows, const std::string& what) {
  ASSERT_EQ(r.info.backend, "hybrid") << what << "\n" << r.info.plan;
  ASSERT_EQ(r.info.workers.size(), 2u) << what;
  std::uint64_t sum = 0, pairs = 0;
  for (const WorkerShare& w : r.info.workers) {
    sum += w.rows;
    pairs += w.pairs;
    EXPECT_GE(w.seconds, 0.0) << what;
  }
  if (rows) EXPECT_EQ(sum, rows) << what;
  EXPECT_EQ(pairs, r.info.pairs_evaluated) << what;
  EXPECT_GE(r.info.load_imbalance, 0.0) << what;
  EXPECT_LE(r.info.load_imbalance, 1.0) << what;
  EXPECT_NE(r.info.plan.find("hybrid shares:"), std::string::npos) << r.info.plan;
  EXPECT_NE(r.info.plan.find("load imbalance"), std::string::npos) << r.info.plan;
}

// Every join output and the k-NN, hybrid against CPU-only.
void expect_hybrid_equals_cpu(const VectorSet& a, const VectorSet* b, double eps, Metric m, const std::string& what) {
  JoinOptions o;
  o.eps = eps;
  o.metric = m;
  for (const JoinOutput out : {JoinOutput::Total, JoinOutput::Counts, JoinOutput::Pairs}) {
    o.output = out;
    const Statistic s = join_statistic(b != nullptr, o);
    const std::string at = what + " output " + to_string(s.output());
    const Result want = run(s, a, b, on("cpu"));
    const Result got = run(s, a, b, hybrid());
    expect_same(want, got, at);
    expect_shared(got, a.dim() > kMaxDim ? a.size() : 0, at);
  }
  // Pairs through a sink: every pair once, each batch sorted; together the list in memory.
  o.output = JoinOutput::Pairs;
  const Statistic s = join_statistic(b != nullptr, o);
  const Result want = run(s, a, b, on("cpu"));
  RunOptions sunk = hybrid();
  std::vector<PairRecord> got;
  sunk.pair_sink = [&](std::span<const PairRecord> batch) {
    EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end(), pair_order)) << what;
    got.insert(got.end(), batch.begin(), batch.end());
  };
  const Result r = run(s, a, b, sunk);
  EXPECT_TRUE(r.pairs.empty()) << what;
  std::sort(got.begin(), got.end(), pair_order);
  Result as_list = r;
  as_list.pairs = got;
  expect_same(want, as_list, what + " through a pair sink");
  // k-NN (it never runs as points).
  const std::size_t partners = b ? b->size() : a.size() - 1;
  for (const int k : {1, 4}) {
    if (static_cast<std::size_t>(k) > partners) continue;
    const Statistic knn = knn_statistic(b != nullptr, k, m);
    const Result w = run(knn, a, b, on("cpu"));
    const Result g = run(knn, a, b, hybrid());
    expect_same(w, g, what + " knn k=" + std::to_string(k));
    expect_shared(g, a.size(), what + " knn");
  }
}

// Rows of v, each repeated `copies` times (exact duplicates: keys of 0, ties everywhere).
VectorSet with_duplicates(const VectorSet& v, int copies) {
  const std::size_t d = static_cast<std::size_t>(v.dim());
  std::vector<double> rows, r(d);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v.row_f64(i, r.data());
    for (int c = 0; c < copies; ++c) rows.insert(rows.end(), r.begin(), r.end());
  }
  return VectorSet::from_rows(std::move(rows), v.size() * static_cast<std::size_t>(copies), v.dim());
}

}  // namespace

TEST(HybridQueue, EveryUnitTakenOnceFromBothEnds) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 1 + rng() % 200;
    std::vector<double> work(n);
    std::exponential_distribution<double> e(1.0);
    for (double& w : work) w = rng() % 7 == 0 ? 0.0 : e(rng);
    std::sort(work.rbegin(), work.rend());
    HybridQueue q(work);
    std::vector<int> taken(n, 0);
    std::size_t front = 0, back = n;
    for (;;) {
      const bool heavy = rng() % 2;
      const double target = e(rng) * (heavy ? 5 : 1);
      const std::size_t min_units = 1 + rng() % 3;
      const HybridQueue::Take t =
          q.take(heavy ? HybridQueue::End::Heavy : HybridQueue::End::Light, target, 0.5, min_units);
      if (t.empty()) break;
      ASSERT_LT(t.first, t.last) << "seed " << seed;
      // Contiguous, from the side asked, never past the other side's index.
      if (heavy) {
        ASSERT_EQ(t.first, front) << "seed " << seed;
        front = t.last;
      } else {
        ASSERT_EQ(t.last, back) << "seed " << seed;
        back = t.first;
      }
      ASSERT_LE(front, back) << "seed " << seed;
      ASSERT_TRUE(t.last - t.first >= min_units || front == back) << "seed " << seed;
      double w = 0;
      for (std::size_t u = t.first; u < t.last; ++u) {
        ++taken[u];
        w += work[u];
      }
      EXPECT_NEAR(t.work, w, 1e-9 * (1 + w)) << "seed " << seed;
    }
    EXPECT_EQ(front, back) << "seed " << seed;
    for (std::size_t u = 0; u < n; ++u) ASSERT_EQ(taken[u], 1) << "unit " << u << " seed " << seed;
    EXPECT_TRUE(q.take(HybridQueue::End::Heavy, 1).empty());
    EXPECT_TRUE(q.take(HybridQueue::End::Light, 1).empty());
  }
}

TEST(HybridQueue, ATakeHoldsWhatWasAskedAndAtMostTheCap) {
  HybridQueue q(std::vector<double>{8, 7, 6, 5, 4, 3, 2, 1});  // 36 in all
  HybridQueue::Take t = q.take(HybridQueue::End::Heavy, 14);
  EXPECT_EQ(t.first, 0u);
  EXPECT_EQ(t.last, 2u);  // 8 + 7 >= 14
  t = q.take(HybridQueue::End::Light, 2.5);
  EXPECT_EQ(t.first, 6u);  // 2 + 1 >= 2.5
  EXPECT_EQ(t.last, 8u);
  t = q.take(HybridQueue::End::Heavy, 100, 0.5);  // left: 6 5 4 3 = 18, at most 9
  EXPECT_EQ(t.first, 2u);
  EXPECT_EQ(t.last, 4u);  // 6 + 5 (the first sum at or above 9)
  t = q.take(HybridQueue::End::Light, 0);  // at least one unit
  EXPECT_EQ(t.first, 5u);
  EXPECT_EQ(t.last, 6u);
  t = q.take(HybridQueue::End::Heavy, 0);
  EXPECT_EQ(t.first, 4u);
  EXPECT_EQ(t.last, 5u);
  EXPECT_TRUE(q.take(HybridQueue::End::Light, 1).empty());
  // At least min_units units (a CPU team's rows for its threads), or what is left.
  HybridQueue few(std::vector<double>{1, 1, 1, 1, 1});
  t = few.take(HybridQueue::End::Light, 0, 1.0, 3);
  EXPECT_EQ(t.first, 2u);
  EXPECT_EQ(t.last, 5u);
  t = few.take(HybridQueue::End::Heavy, 0, 1.0, 3);
  EXPECT_EQ(t.first, 0u);
  EXPECT_EQ(t.last, 2u);
}

TEST(Hybrid, JoinsAndKnnEqualTheCpuInEveryDimension) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const int d : {1, 3, 17, 128}) {
    const FakeGpu fake(std::to_string(1 + rng() % 7).c_str());
    const std::string what = "d=" + std::to_string(d) + " seed " + std::to_string(seed);
    const VectorSet a = gaussian_vectors(d == 128 ? 150 : 260, d, rng);
    const VectorSet b = gaussian_vectors(d == 128 ? 90 : 170, d, rng);
    const double eps = testing_support::eps_for(a, Metric::Euclidean, 0.05);
    expect_hybrid_equals_cpu(a, nullptr, eps, Metric::Euclidean, what + " self");
    expect_hybrid_equals_cpu(a, &b, eps, Metric::Euclidean, what + " cross");
    if (d >= 3) {
      const double c = testing_support::eps_for(a, Metric::Cosine, 0.05);
      expect_hybrid_equals_cpu(a, nullptr, c, Metric::Cosine, what + " cosine self");
      expect_hybrid_equals_cpu(a, &b, c, Metric::Cosine, what + " cosine cross");
    }
  }
}

TEST(Hybrid, AdversarialSetsEqualTheCpu) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  for (const int d : {1, 3, 17, 128}) {
    const FakeGpu fake(std::to_string(1 + rng() % 5).c_str(), std::to_string(2 + rng() % 9).c_str());
    const std::string what = "d=" + std::to_string(d) + " seed " + std::to_string(seed);
    // Lattice rows {0, 1, 2}^d: many pairs exactly at eps^2 = 2 (and key ties for the k-NN).
    const VectorSet lattice = lattice_vectors(d == 128 ? 120 : 200, d, rng);
    expect_hybrid_equals_cpu(lattice, nullptr, std::sqrt(2.0), Metric::Euclidean, what + " lattice");
    const VectorSet lattice2 = lattice_vectors(70, d, rng);
    expect_hybrid_equals_cpu(lattice, &lattice2, std::sqrt(2.0), Metric::Euclidean, what + " lattice cross");
    // Exact duplicates at eps = 0.
    const VectorSet dup = with_duplicates(gaussian_vectors(40, d, rng), 4);
    expect_hybrid_equals_cpu(dup, nullptr, 0.0, Metric::Euclidean, what + " duplicates eps 0");
    // Offsets of 10^6 with a spread of 10^-3.
    const VectorSet far = gaussian_vectors(d == 128 ? 100 : 180, d, rng, 1e6, 1e-3);
    expect_hybrid_equals_cpu(far, nullptr, testing_support::eps_for(far, Metric::Euclidean, 0.1), Metric::Euclidean,
                             what + " offset 1e6");
  }
}

TEST(Hybrid, BandsOfOneRowAndOneBandForTheWholeSet) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const VectorSet a = testing_support::gaussian_mixture(97, 20, rng);
  const double eps = testing_support::eps_for(a, Metric::Euclidean, 0.1);
  for (const char* rows : {"1", "97", "1000"}) {
    const FakeGpu fake(rows);
    expect_hybrid_equals_cpu(a, nullptr, eps, Metric::Euclidean, std::string("band rows ") + rows + " seed " + std::to_string(seed));
  }
}

TEST(Hybrid, PointStatisticsSplitIntoSlabPairs) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const PointSet a = testing_support::with_weights(testing_support::to_pointset(testing_support::uniform_points(900, 3, 0, 100, rng)), rng);
  const PointSet b = testing_support::with_weights(testing_support::to_pointset(testing_support::uniform_points(500, 3, 0, 100, rng)), rng);
  for (const char* slabs : {"1", "4", "13"}) {
    const FakeGpu fake("3", slabs);
    const std::string what = std::string("slabs ") + slabs + " seed " + std::to_string(seed);
    for (const bool cross : {false, true}) {
      for (const OutputKind out : {OutputKind::Histogram, OutputKind::Reduction, OutputKind::PerPoint, OutputKind::PairList}) {
        Statistic s;
        s.traversal = cross ? Traversal::Cross : Traversal::Auto;
        s.weighted = out == OutputKind::Histogram;
        s.reduction = testing_support::reduction_of(out, Binning::linear(0, 12, out == OutputKind::Histogram ? 12 : 1));
        const std::string at = what + (cross ? " cross " : " auto ") + to_string(out);
        const Result want = run(s, a, cross ? &b : nullptr, on("cpu"));
        const Result got = run(s, a, cross ? &b : nullptr, hybrid());
        expect_same(want, got, at);
        expect_shared(got, 0, at);
      }
    }
    // Periodic, where slabs at both ends of the box are neighbours.
    Statistic p;
    p.metric = Metric::Periodic;
    p.box = Box::cube(3, 100);
    p.reduction = reduce::Histogram{Binning::linear(0, 30, 6)};
    expect_same(run(p, a, nullptr, on("cpu")), run(p, a, nullptr, hybrid()), what + " periodic");
  }
}

TEST(Hybrid, WithoutAGpuTheCpuRunsAloneAndSaysSo) {
  if (make_cuda_backend()) GTEST_SKIP() << "a GPU is present";
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const VectorSet a = gaussian_vectors(120, 24, rng);
  JoinOptions o;
  o.eps = testing_support::eps_for(a, Metric::Euclidean, 0.1);
  const Statistic s = join_statistic(false, o);
  const Result got = run(s, a, nullptr, on("hybrid"));
  expect_same(run(s, a, nullptr, on("cpu")), got, "no gpu");
  EXPECT_EQ(got.info.backend, "cpu");
  ASSERT_EQ(got.info.workers.size(), 1u);
  EXPECT_NE(got.info.plan.find("no GPU"), std::string::npos) << got.info.plan;
  EXPECT_NE(got.info.plan.find("the cpu runs it alone"), std::string::npos) << got.info.plan;
  EXPECT_NE(explain(s, a, nullptr, on("hybrid")).find("the cpu runs it alone"), std::string::npos);
  EXPECT_EQ(runs_on(s, on("hybrid")), "hybrid");
}

TEST(Hybrid, WhatItDoesNotSplitRunsWholeAndThePlanSaysSo) {
  const FakeGpu fake;
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const VectorSet a = gaussian_vectors(60, 12, rng);
  Statistic h;
  h.metric = Metric::Euclidean;
  h.reduction = reduce::Histogram{Binning::linear(0, 8, 8)};
  const Result got = run(h, a, nullptr, on("hybrid"));
  expect_same(run(h, a, nullptr, on("cpu")), got, "vector histogram");
  EXPECT_NE(got.info.plan.find("runs whole on the auto backend"), std::string::npos) << got.info.plan;
  Statistic m;
  m.reduction = reduce::Matrix{};
  const PointSet p = testing_support::to_pointset(testing_support::uniform_points(50, 3, 0, 1, rng));
  const Result mm = run(m, p, nullptr, on("hybrid"));
  EXPECT_EQ(mm.matrix.size(), 2500u);
  EXPECT_NE(mm.info.plan.find("a matrix is not split"), std::string::npos) << mm.info.plan;
}

TEST(Hybrid, ThePlanNamesTheWorkersAndTheQueue) {
  const FakeGpu fake("8", "6");
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(64, 40, rng);
  const Statistic knn = knn_statistic(false, 3, Metric::Euclidean);
  const std::string text = explain(knn, a, nullptr, hybrid(1));
  EXPECT_NE(text.find("backend: hybrid"), std::string::npos) << text;
  EXPECT_NE(text.find("fake gpu"), std::string::npos) << text;
  EXPECT_NE(text.find("heavy end"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu: 1 thread "), std::string::npos) << text;  // (one thread: at least one for the team)
  EXPECT_NE(text.find("8 units of 8 rows"), std::string::npos) << text;
  EXPECT_NE(text.find("TWOBODY_HYBRID_BAND_ROWS=8"), std::string::npos) << text;
  std::string seen;
  RunOptions o = hybrid(3);
  o.on_plan = [&](const std::string& plan) { seen = plan; };
  const Result r = run(knn, a, nullptr, o);
  EXPECT_EQ(seen, r.info.plan);
  EXPECT_NE(seen.find("ran: hybrid shares: fake gpu"), std::string::npos) << seen;
  const PointSet p = testing_support::to_pointset(testing_support::uniform_points(300, 2, 0, 10, rng));
  Statistic c;
  c.reduction = reduce::Count{Binning::linear(0, 1, 1)};
  const std::string points = explain(c, p, nullptr, hybrid(3));
  EXPECT_NE(points.find("cut into 6 slabs"), std::string::npos) << points;
}

TEST(Hybrid, ErrorsCancellationAndTheLimitOfPairs) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian_vectors(200, 16, rng);
  JoinOptions o;
  o.eps = 1e9;  // every pair
  const Statistic s = join_statistic(false, o);
  {
    const ScopedEnv bad("TWOBODY_HYBRID_BAND_ROWS", "0");
    expect_error(ErrorKind::Config, "TWOBODY_HYBRID_BAND_ROWS", [&] { run(s, a, nullptr, on("hybrid")); });
  }
  {
    const ScopedEnv bad("TWOBODY_HYBRID_FAKE_GPU", "yes");
    expect_error(ErrorKind::Config, "TWOBODY_HYBRID_FAKE_GPU", [&] { run(s, a, nullptr, on("hybrid")); });
  }
  expect_error(ErrorKind::Config, "hybrid", [&] { run(s, a, nullptr, on("gpu")); });
  const FakeGpu fake("2");
  RunOptions few = hybrid();
  few.max_pairs = 1000;
  expect_error(ErrorKind::Resource, "exceeds the limit", [&] { run(s, a, nullptr, few); });
  few.pair_sink = [](std::span<const PairRecord>) {};
  expect_error(ErrorKind::Resource, "exceeds the limit", [&] { run(s, a, nullptr, few); });
  // A progress callback that throws stops both workers; the exception leaves run().
  RunOptions cancel = hybrid();
  int calls = 0;
  cancel.progress = [&](double) {
    if (++calls == 3) throw std::runtime_error("cancelled");
  };
  EXPECT_THROW(run(knn_statistic(false, 2, Metric::Euclidean), a, nullptr, cancel), std::runtime_error);
  // The sets' own errors keep the whole set's numbering.
  std::vector<double> rows(60 * 4, 1.0);
  std::fill(rows.begin() + 37 * 4, rows.begin() + 38 * 4, 0.0);
  const VectorSet zero = VectorSet::from_rows(std::move(rows), 60, 4);
  expect_error(ErrorKind::Input, "vector 38 has norm 0",
               [&] { run(knn_statistic(false, 2, Metric::Cosine), zero, nullptr, hybrid()); });
}

TEST(Hybrid, EveryDeviceIsAWorkerAtTheHeavyEnd) {
  // RunOptions::devices with TWOBODY_SIMULATED_DEVICES (each device the CPU backend on one thread):
  // a worker a device at the heavy end, the CPU team at the light end, the result the CPU's.
  const ScopedEnv sim("TWOBODY_SIMULATED_DEVICES", "2");
  const ScopedEnv rows("TWOBODY_HYBRID_BAND_ROWS", "4");
  const ScopedEnv slabs("TWOBODY_HYBRID_SLABS", "6");
  const ScopedEnv gpu("TWOBODY_HYBRID_GPU_SECONDS", "0.001");
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  RunOptions o = hybrid();
  o.devices = {1, 0};
  const auto expect_three = [&](const Result& r, const std::string& what) {
    ASSERT_EQ(r.info.workers.size(), 3u) << what << "\n" << r.info.plan;
    EXPECT_EQ(r.info.workers[0].name.rfind("simulated device 1: ", 0), 0u) << r.info.workers[0].name;
    EXPECT_EQ(r.info.workers[1].name.rfind("simulated device 0: ", 0), 0u) << r.info.workers[1].name;
    EXPECT_EQ(r.info.workers[2].name.rfind("cpu: ", 0), 0u) << r.info.workers[2].name;
  };
  const VectorSet a = gaussian_vectors(300, 20, rng);
  JoinOptions j;
  j.eps = testing_support::eps_for(a, Metric::Euclidean, 0.05);
  j.output = JoinOutput::Counts;
  const Statistic join = join_statistic(false, j);
  const Result got = run(join, a, nullptr, o);
  expect_same(run(join, a, nullptr, on("cpu")), got, "join seed " + std::to_string(seed));
  expect_three(got, "join");
  const Statistic knn = knn_statistic(false, 3, Metric::Euclidean);
  const Result k = run(knn, a, nullptr, o);
  expect_same(run(knn, a, nullptr, on("cpu")), k, "knn seed " + std::to_string(seed));
  expect_three(k, "knn");
  const PointSet p = testing_support::to_pointset(testing_support::uniform_points(800, 3, 0, 50, rng));
  Statistic h;
  h.reduction = reduce::Histogram{Binning::linear(0, 8, 4)};
  const Result ph = run(h, p, nullptr, o);
  expect_same(run(h, p, nullptr, on("cpu")), ph, "points seed " + std::to_string(seed));
  expect_three(ph, "points");
  o.devices = {2};
  expect_error(ErrorKind::Config, "device 2 is not visible", [&] { run(h, p, nullptr, o); });
}
