// The CPU grid path (compact cell index, half-shell traversal) against the float64 oracle: open and
// periodic boxes, auto and cross, clustered and lattice data, rmax up to half the box (fewer than
// 2·refine + 1 cells per side), weights, counts and pair lists.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;

namespace {

RunOptions cpu() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}

oracle::Points to_oracle(const PointSet& p) {
  oracle::Points o;
  o.dim = p.dim();
  for (std::size_t i = 0; i < p.size(); ++i) {
    std::vector<double> x(p.dim());
    for (int d = 0; d < p.dim(); ++d) x[d] = p.coord(d)[i];
    o.x.push_back(x);
  }
  if (p.has_weights()) o.w.assign(p.weights().begin(), p.weights().end());
  return o;
}

Statistic stat(Traversal t, const Binning& b, std::optional<Box> box, OutputKind out = OutputKind::Histogram,
               bool weighted = false) {
  Statistic s;
  s.traversal = t;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.binning = b;
  s.output = out;
  s.weighted = weighted;
  return s;
}

void expect_grid(const Result& r) { EXPECT_NE(r.info.plan.find("cpu path: grid"), std::string::npos) << r.info.plan; }

}  // namespace

TEST(Grid, PeriodicAutoAndCrossEqualOracleForManyRmax) {
  const double L = 100.0;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_clustered_box(4000, 3, L, ClusterOptions{}, seed);
  PointSet b = generate_uniform_box(2500, 3, L, seed + 1);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  for (double rmax : {3.0, 11.0, 24.0, 50.0}) {
    SCOPED_TRACE("rmax " + std::to_string(rmax));
    const Binning bins = Binning::logarithmic(0.5, rmax, 9);
    // The grid path itself (the cost model may prefer brute force for some clustered seeds).
    RunOptions grid = cpu();
    grid.path = "grid";
    const auto ra = run(stat(Traversal::Auto, bins, Box::cube(3, L)), a, nullptr, grid);
    EXPECT_EQ(ra.counts, oracle::histogram(oa, nullptr, bins.edges(), 1, {L, L, L}).counts);
    const auto rc = run(stat(Traversal::Cross, bins, Box::cube(3, L)), a, &b, grid);
    EXPECT_EQ(rc.counts, oracle::histogram(oa, &ob, bins.edges(), 1, {L, L, L}).counts);
    expect_grid(ra);
    expect_grid(rc);
  }
}

TEST(Grid, OpenSpaceWeightedClustered) {
  const auto seed = fresh_seed();
  ClusterOptions c;
  c.kind = ClusterOptions::Kind::GaussianBlobs;
  c.blobs = 5;
  c.sigma = 0.01;
  PointSet a = generate_clustered_box(5000, 3, 10.0, c, seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uw(0.5, 2.0);
  std::vector<double> w(a.size());
  for (auto& x : w) x = uw(rng);
  a.set_weights(w);
  const auto oa = to_oracle(a);
  const Binning bins = Binning::linear(0.0, 0.3, 6);
  const auto r = run(stat(Traversal::Auto, bins, std::nullopt, OutputKind::Histogram, true), a, nullptr, cpu());
  const auto o = oracle::histogram(oa, nullptr, bins.edges(), 0, {}, true);
  expect_grid(r);
  EXPECT_EQ(r.counts, o.counts);
  for (std::size_t k = 0; k < o.weighted.size(); ++k) EXPECT_NEAR(r.weighted[k], o.weighted[k], 1e-9 * (1 + o.weighted[k]));
}

TEST(Grid, LatticeOnEdgesOpenAndPeriodic) {
  PointSet p(2, 0);
  for (int x = 0; x < 60; ++x)
    for (int y = 0; y < 50; ++y) p.push_back(std::vector<double>{double(x), double(y)});
  const Binning bins = Binning::linear(0.0, 4.0, 4);
  const auto r = run(stat(Traversal::Auto, bins, std::nullopt), p, nullptr, cpu());
  expect_grid(r);
  EXPECT_EQ(r.counts, oracle::histogram(to_oracle(p), nullptr, bins.edges(), 0).counts);
  const auto rp = run(stat(Traversal::Auto, bins, Box::from_lengths(std::vector<double>{60, 50})), p, nullptr, cpu());
  EXPECT_EQ(rp.counts, oracle::histogram(to_oracle(p), nullptr, bins.edges(), 1, {60, 50}).counts);
}

TEST(Grid, PairListsAndCountsKeepCallerIndices) {
  const auto seed = fresh_seed();
  PointSet a = generate_uniform_box(6000, 3, 50.0, seed);
  PointSet b = generate_uniform_box(3000, 3, 50.0, seed + 7);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  const Binning range = Binning::from_edges({0.0, 2.0});
  for (bool cross : {false, true}) {
    auto s = stat(cross ? Traversal::Cross : Traversal::Auto, range, Box::cube(3, 50.0), OutputKind::PairList);
    const auto r = run(s, a, cross ? &b : nullptr, cpu());
    expect_grid(r);
    std::size_t expected = 0;
    for (std::size_t i = 0; i < oa.x.size(); ++i)
      for (std::size_t j = cross ? 0 : i + 1; j < (cross ? ob.x.size() : oa.x.size()); ++j)
        if (oracle::d2_periodic(oa.x[i], cross ? ob.x[j] : oa.x[j], {50, 50, 50}) < 4.0) ++expected;
    ASSERT_EQ(r.pairs.size(), expected);
    for (const auto& p : r.pairs) {
      if (!cross) ASSERT_LT(p.i, p.j);
      const double d2 = oracle::d2_periodic(oa.x[p.i], cross ? ob.x[p.j] : oa.x[p.j], {50, 50, 50});
      ASSERT_LT(d2, 4.0);
      ASSERT_DOUBLE_EQ(p.value, std::sqrt(d2));
    }
    s.output = OutputKind::Reduction;
    EXPECT_EQ(run(s, a, cross ? &b : nullptr, cpu()).counts[0], expected);
  }
}

TEST(Grid, BruteForceWhenTheCutoffSpansTheData) {
  const auto p = generate_uniform_box(3000, 3, 10.0, fresh_seed());
  const auto r = run(stat(Traversal::Auto, Binning::linear(0.0, 20.0, 4), std::nullopt), p, nullptr, cpu());
  EXPECT_NE(r.info.plan.find("cpu path: brute force"), std::string::npos) << r.info.plan;
  EXPECT_EQ(r.counts[0] + r.counts[1] + r.counts[2] + r.counts[3], 3000u * 2999u / 2);
}
