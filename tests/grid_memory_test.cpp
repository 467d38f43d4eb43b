// What the CPU grid holds and where a run's time and memory go: cells of several points whatever
// the cutoff (no grid of one point a cell and 3·10^7 cell pairs), blocks made cell by cell as the
// traversal goes (every block once, the plan's count), the same counts as brute force, and the
// phases each run's plan reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "test_support.hpp"
#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/detail/engine/memory.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"

using namespace twobody;

namespace {

Statistic histogram(double rmax, int nbins, std::optional<Box> box = std::nullopt) {
  Statistic s;
  s.traversal = Traversal::Auto;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = testing_support::reduction_of(OutputKind::Histogram, Binning::linear(0.0, rmax, nbins));
  return s;
}

RunOptions on_cpu(const char* path = "auto") {
  RunOptions o;
  o.backend = "cpu";
  o.path = path;
  o.threads = 2;
  return o;
}

// Every block of every unit, once: the blocks and pair evaluations the plan counted.
void expect_units_make_the_plan(const cpu::GridPlan& plan) {
  std::uint64_t blocks = 0, evaluations = 0;
  for (std::size_t w = 0; w < plan.unit_count(); ++w)
    plan.for_each_unit(w, [&](const cpu::BlockPair& b, const cpu::BlockCells&) {
      ++blocks;
      evaluations += b.triangle ? std::uint64_t(b.a1 - b.a0) * (b.a1 - b.a0 - 1) / 2 : std::uint64_t(b.a1 - b.a0) * (b.b1 - b.b0);
    });
  EXPECT_EQ(blocks, plan.blocks);
  EXPECT_EQ(evaluations, plan.evaluations);
}

}  // namespace

TEST(GridMemory, CellsHoldSeveralPointsWhateverTheCutoff) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(seed);
  const std::size_t n = 40000;
  const PointSet p = generate_uniform_box(n, 3, 100.0, seed);
  for (const double rmax : {1e-6, 0.05, 0.5}) {
    SCOPED_TRACE(rmax);
    const Statistic s = histogram(rmax, 4);
    const Plan plan = make_plan(s, p, nullptr, on_cpu("grid"));
    const cpu::GridChoice g = cpu::choose_grid(plan);
    ASSERT_TRUE(g.chosen);
    // At most one cell per kPointsPerCell points (an auto set counts twice), and not far fewer:
    // the capped width grows in 2 % steps.
    const auto cap = static_cast<std::int64_t>(2 * n) / cpu::kPointsPerCell;
    EXPECT_LE(g.geometry.total, cap);
    EXPECT_GE(g.geometry.total, cap * 8 / 10);
    // The half shell of a cell: at most 14 blocks in 3-D (refine 1, runs along the last axis merged).
    EXPECT_LE(g.plan.blocks, 14 * static_cast<std::uint64_t>(g.geometry.total));
    EXPECT_TRUE(g.plan.units.empty()) << "uniform points: cells in cell order, no list of units";
    expect_units_make_the_plan(g.plan);
  }
}

TEST(GridMemory, ClusteredCellsSplitIntoTheirBlocks) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(seed);
  // Half of the points in 1/1000 of the box: a few cells hold most of the work.
  const PointSet p = generate_concentrated_box(20000, 3, 100.0, 0.5, 0.001, seed);
  const Statistic s = histogram(5.0, 4);
  const Plan plan = make_plan(s, p, nullptr, on_cpu("grid"));
  const cpu::GridChoice g = cpu::choose_grid(plan);
  ASSERT_TRUE(g.chosen);
  ASSERT_FALSE(g.plan.units.empty());
  EXPECT_TRUE(std::any_of(g.plan.units.begin(), g.plan.units.end(), [](const cpu::GridUnit& u) { return u.block >= 0; }));
  expect_units_make_the_plan(g.plan);
}

TEST(GridMemory, TinyCutoffCountsAsBruteForce) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(seed);
  // Cells far wider than r_max, in open space and in a periodic box, with duplicated points
  // (pairs at distance 0) and pairs exactly at an edge.
  PointSet p = generate_uniform_box(6000, 3, 10.0, seed);
  for (std::size_t i = 0; i < 200; ++i) {
    const double x[3] = {p.coord(0)[i], p.coord(1)[i], p.coord(2)[i]};
    p.push_back(x);
    const double y[3] = {x[0] + 0.01, x[1], x[2]};
    if (y[0] < 10.0) p.push_back(y);
  }
  for (const bool periodic : {false, true}) {
    SCOPED_TRACE(periodic);
    const Statistic s = histogram(0.02, 4, periodic ? std::optional<Box>(Box::cube(3, 10.0)) : std::nullopt);
    const Result grid = run(s, p, nullptr, on_cpu("grid"));
    const Result brute = run(s, p, nullptr, on_cpu("brute"));
    EXPECT_EQ(grid.counts, brute.counts);
    EXPECT_NE(grid.info.plan.find("cpu path: grid"), std::string::npos) << grid.info.plan;
  }
}

TEST(PhaseReport, EveryRunNamesItsPhasesAndThePeak) {
  const PointSet p = generate_uniform_box(20000, 3, 100.0, 7);
  std::string seen;
  RunOptions o = on_cpu("grid");
  o.on_plan = [&](const std::string& plan) { seen = plan; };
  const Result r = run(histogram(3.0, 4), p, nullptr, o);
  const std::size_t at = seen.find("phases (wall time, the process's peak resident memory after each): ");
  ASSERT_NE(at, std::string::npos) << seen;
  const std::string phases = seen.substr(at);
  for (const char* name : {"plan ", "grid shape ", "cell index ", "cell pairs ", "float32 proxies ", "traversal ", "merge "})
    EXPECT_NE(phases.find(name), std::string::npos) << name << " in " << phases;
  EXPECT_NE(phases.find(" MB)"), std::string::npos) << phases;
  EXPECT_EQ(seen, r.info.plan);
  // Brute force has no grid phases.
  o.path = "brute";
  run(histogram(3.0, 4), p, nullptr, o);
  EXPECT_EQ(seen.find("cell index"), std::string::npos) << seen;
  EXPECT_NE(seen.find("traversal "), std::string::npos) << seen;
}

TEST(PhaseReport, ResidentMemoryIsMeasured) {
  const double before = peak_resident_bytes();
  EXPECT_GT(before, 1e6);
  EXPECT_GT(current_resident_bytes(), 1e6);
  std::vector<double> block(std::size_t(64) << 20 >> 3, 1.0);  // 64 MB, touched
  EXPECT_GE(peak_resident_bytes(), before);
  EXPECT_GE(peak_resident_bytes(), current_resident_bytes() * 0.99);
  EXPECT_EQ(block.back(), 1.0);
}
