// run_in_chunks (chunked_run.hpp), which the CUDA backend uses for sets beyond one launch: with the
// CPU backend running each chunk pair, every output must equal one run over the whole sets, for
// chunks that do and do not divide the sets, auto and cross.
#include <gtest/gtest.h>

#include <random>

#include "twobody/detail/engine/planner.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/chunked_run.hpp"
#include "twobody/engine.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

// Chunk pairs one at a time, or several at once on host threads (as the CUDA backend runs them).
int in_flight = 1;

Result chunked(const Statistic& s, const PointSet& a, const PointSet* b, std::size_t chunk) {
  RunOptions o;
  o.backend = "cpu";
  const Plan plan = make_plan(s, a, b, o);
  return run_in_chunks(
      plan, chunk, [&](const Plan& p) { return make_cpu_backend()->run(p); }, in_flight);
}

void expect_same(const Result& c, const Result& w) {
  EXPECT_EQ(c.counts, w.counts);
  ASSERT_EQ(c.weighted.size(), w.weighted.size());
  // Exact sums (twobody/exact_sums.hpp): the same bits however the pairs were split.
  for (std::size_t k = 0; k < w.weighted.size(); ++k) EXPECT_EQ(c.weighted[k], w.weighted[k]) << k;
  EXPECT_EQ(c.region_weighted, w.region_weighted);
  EXPECT_EQ(c.region_counts, w.region_counts);
}

}  // namespace

TEST(ChunkedRun, EveryOutputEqualsOneRun) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto A = to_pointset(uniform_points(1000, 3, 0, 10, rng, true));
  const auto B = to_pointset(uniform_points(377, 3, 0, 10, rng, true));
  std::vector<std::int32_t> labels(A.size());
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int>(rng() % 5);
  RunOptions cpu;
  cpu.backend = "cpu";
  for (auto [chunk, flight] : std::initializer_list<std::pair<std::size_t, int>>{
           {100, 1}, {333, 1}, {999, 1}, {1000, 1}, {100, 3}, {333, 2}, {999, 2}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk) + ", " + std::to_string(flight) + " in flight");
    in_flight = flight;
    Statistic s;
    s.reduction = reduce::Histogram{Binning::linear(0.0, 12.0, 17)};
    for (bool w : {false, true}) {
      s.weighted = w;
      s.traversal = Traversal::Auto;
      expect_same(chunked(s, A, nullptr, chunk), run(s, A, nullptr, cpu));
      s.traversal = Traversal::Cross;
      expect_same(chunked(s, A, &B, chunk), run(s, A, &B, cpu));
    }
    // Jackknife regions (auto).
    PointSet L = A;
    L.set_regions(labels);
    Statistic j;
    j.reduction = reduce::Histogram{.bins = Binning::linear(0.0, 12.0, 17), .regions = 5};
    expect_same(chunked(j, L, nullptr, chunk), run(j, L, nullptr, cpu));
    // A count, a pair list, per-point counts and a matrix.
    Statistic c;
    const Binning range = Binning::from_edges({0.5, 2.0});
    c.reduction = reduce::Count{range};
    expect_same(chunked(c, A, nullptr, chunk), run(c, A, nullptr, cpu));
    c.reduction = reduce::PairList{range};
    for (auto t : {Traversal::Auto, Traversal::Cross}) {
      c.traversal = t;
      const PointSet* b = t == Traversal::Auto ? nullptr : &B;
      const auto x = chunked(c, A, b, chunk), y = run(c, A, b, cpu);
      ASSERT_EQ(x.pairs.size(), y.pairs.size());
      for (std::size_t k = 0; k < y.pairs.size(); ++k) {
        ASSERT_EQ(x.pairs[k].i, y.pairs[k].i);
        ASSERT_EQ(x.pairs[k].j, y.pairs[k].j);
        ASSERT_EQ(x.pairs[k].value, y.pairs[k].value);
      }
    }
    c.reduction = reduce::PerPoint{range};
    c.weighted = true;
    for (auto t : {Traversal::Auto, Traversal::Cross}) {
      c.traversal = t;
      const PointSet* b = t == Traversal::Auto ? nullptr : &B;
      const auto x = chunked(c, A, b, chunk), y = run(c, A, b, cpu);
      EXPECT_EQ(x.per_point_a.counts, y.per_point_a.counts);
      EXPECT_EQ(x.per_point_b.counts, y.per_point_b.counts);
      ASSERT_EQ(x.per_point_a.weighted.size(), y.per_point_a.weighted.size());
      for (std::size_t k = 0; k < y.per_point_a.weighted.size(); ++k)
        EXPECT_EQ(x.per_point_a.weighted[k], y.per_point_a.weighted[k]) << k;
      EXPECT_EQ(x.per_point_b.weighted, y.per_point_b.weighted);
    }
    c.reduction = reduce::Matrix{};
    c.weighted = false;
    c.traversal = Traversal::Cross;
    EXPECT_EQ(chunked(c, B, &A, chunk).matrix, run(c, B, &A, cpu).matrix);
    c.traversal = Traversal::Auto;  // symmetric: the blocks below the diagonal are transposes
    EXPECT_EQ(chunked(c, A, nullptr, chunk).matrix, run(c, A, nullptr, cpu).matrix);
  }
}
