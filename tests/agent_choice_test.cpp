// The CUDA backend's dispatch (src/cuda/agent_choice.hpp) without a GPU: recorded H100 properties
// in, the agent and its shape out; the shared grid-or-all-pairs cost model; the tuning policy's
// environment overrides.
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_support.hpp"
#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/engine/traversal_cost.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/pair_function.hpp"

namespace twobody::cuda {
namespace {

// The H100 SXM (80 GB HBM3) as cudaGetDeviceProperties reports it, and the blocks a multiprocessor
// holds by registers for each kernel: its __launch_bounds__ minimum on sm_90's 64 K registers
// (pair_kernel: 4 of 256 threads, 2 of 512; the grid agent's 256 threads at 64 registers: 4;
// the counting tiles' histogram: 3; the FP64 tensor-core histogram: 3).
DeviceProperties h100() {
  DeviceProperties d;
  d.info.sms = 132;
  d.info.smem_optin = 232448;
  d.info.name = "NVIDIA H100 80GB HBM3";
  d.info.smem_per_sm = 233472;
  d.info.threads_per_sm = 2048;
  d.info.blocks_per_sm = 32;
  d.info.smem_reserved = 1024;
  d.info.l2_bytes = 52428800;
  d.blocks_by_registers = [](AgentKernel k) {
    switch (k) {
      case AgentKernel::Grid: return 4;
      case AgentKernel::Generic256: return 4;
      case AgentKernel::Generic512: return 2;
      case AgentKernel::CountingTilesHistogram: return 3;
      case AgentKernel::Fp64TensorHistogram: return 3;
    }
    return 1;
  };
  return d;
}

// Points in the unit cube (shifted to its centre: |x| <= 0.5), auto, 3-D Euclidean.
PairProblem cube_problem(OutputMode mode, const Binning& bins, std::uint64_t n) {
  PairProblem p;
  p.dim = 3;
  p.mode = mode;
  p.grid_metric = true;
  p.euclidean_tiles = true;
  p.n_a = p.n_b = n;
  p.nbins = static_cast<int>(bins.nbins());
  p.model.dim = 3;
  p.model.M = 0.5;
  p.model.offset = 1.0;
  p.guard = make_guard_bands(KeyEdges::make(bins, Euclidean<3>{}), p.model);
  p.edges = bins.edges();
  return p;
}

GridMeasure no_grid(const OutputLayout& l) {
  GridMeasure g;
  g.why = l.no_grid_why.empty() ? "brute force: the cutoff spans the whole extent, or too few pairs for a grid to pay"
                                : l.no_grid_why;
  return g;
}

TEST(TraversalCost, GridPaysBelowItsConstantTimesFewerPairs) {
  // CUDA: a candidate costs four brute-force pairs, exactly at the boundary.
  EXPECT_FALSE(grid_pays(250, 1000, kCudaTraversalCost));
  EXPECT_TRUE(grid_pays(249, 1000, kCudaTraversalCost));
  EXPECT_FALSE(grid_pays(250, 999, kCudaTraversalCost));
  // The CPU: two.
  EXPECT_FALSE(grid_pays(500, 1000, kCpuTraversalCost));
  EXPECT_TRUE(grid_pays(499, 1000, kCpuTraversalCost));
  EXPECT_FALSE(grid_pays(0, 0, kCpuTraversalCost));
  // No overflow at the largest counts.
  const std::uint64_t big = ~std::uint64_t(0);
  EXPECT_TRUE(grid_pays(big / 4 - 1, big, kCudaTraversalCost));
  EXPECT_FALSE(grid_pays(big / 2, big, kCudaTraversalCost));
}

TEST(AgentChoice, SdhOverAllPairsTakesTheFp64TensorHistogram) {
  const TuningPolicy policy;
  for (int nb : {8, 256, 8192}) {
    const PairProblem p = cube_problem(OutputMode::Histogram, Binning::linear(0, 1.8, nb), 1u << 22);
    const OutputLayout l = choose_layout(p, h100());
    EXPECT_TRUE(l.key_table);
    EXPECT_EQ(l.stride % 2, 1);
    const AgentChoice c = choose_agent(p, l, no_grid(l), h100(), policy);
    EXPECT_EQ(c.agent, Agent::Fp64TensorHistogram) << nb << c.describe();
    EXPECT_EQ(c.anchors_per_item, kTensorAnchors);
    EXPECT_GE(c.tiles.copies, 1);
    EXPECT_LE(c.smem + kFp64TensorStaticSmem, h100().info.smem_optin);
    // The whole extent fits in the last bin: no clamp at the top where no tile is ragged.
    EXPECT_EQ(c.fp64_clamp, kNoClamp) << nb;
    EXPECT_NE(c.describe().find("counting tiles on FP64 tensor cores"), std::string::npos) << c.describe();
  }
}

TEST(AgentChoice, PolicyOverridesChangeTheAgent) {
  const PairProblem p = cube_problem(OutputMode::Histogram, Binning::linear(0, 1.8, 256), 1u << 22);
  const OutputLayout l = choose_layout(p, h100());
  TuningPolicy policy;
  policy.fp64_tensor_histogram = false;
  AgentChoice c = choose_agent(p, l, no_grid(l), h100(), policy);
  EXPECT_EQ(c.agent, Agent::CountingTiles) << c.describe();
  EXPECT_EQ(c.anchors_per_item, kAnchors);
  policy.histogram_copies = 4;
  c = choose_agent(p, l, no_grid(l), h100(), policy);
  EXPECT_EQ(c.tiles.copies, 4);
  policy.counting_tiles = false;
  c = choose_agent(p, l, no_grid(l), h100(), policy);
  EXPECT_EQ(c.agent, Agent::Generic) << c.describe();
  EXPECT_NE(c.describe().find("by seed 000's copies model"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("threads by seed 000's occupancy model"), std::string::npos) << c.describe();
  EXPECT_TRUE(c.threads == 256 || c.threads == 512);
  EXPECT_EQ(c.anchors_per_item, c.threads * kPerThread);
  EXPECT_GE(c.copies, 1);
  EXPECT_LE(c.copies, l.copies);  // the fitting rule's budget
  policy.generic_block = 512;
  EXPECT_EQ(choose_agent(p, l, no_grid(l), h100(), policy).threads, 512);
  policy.generic_block = 256;
  EXPECT_EQ(choose_agent(p, l, no_grid(l), h100(), policy).threads, 256);
  policy.generic_copies_model = false;
  c = choose_agent(p, l, no_grid(l), h100(), policy);
  EXPECT_EQ(c.copies, l.copies);
  EXPECT_EQ(c.describe().find("copies model"), std::string::npos);
}

TEST(AgentChoice, CountsTakeTheGridWhereItsCandidatesCostLessThanAllPairs) {
  const std::uint64_t n = 1u << 22;
  const PairProblem p = cube_problem(OutputMode::Reduce, Binning::from_edges({0.0, 0.1}), n);
  const OutputLayout l = choose_layout(p, h100());
  ASSERT_TRUE(l.grid_wanted);
  EXPECT_FALSE(l.grid_forced);
  GridMeasure g;
  g.built = true;
  g.shape = "a grid of 10x10x10 cells (reach 1x1x1, windows along the last axis)";
  g.units = 1000;
  g.evaluations = p.all_pairs() / 4 - 1;
  AgentChoice c = choose_agent(p, l, g, h100(), TuningPolicy{});
  EXPECT_EQ(c.agent, Agent::Grid);
  EXPECT_EQ(c.threads, kGridThreads);
  EXPECT_EQ(c.describe().rfind("grid: a grid of 10x10x10", 0), 0u) << c.describe();
  g.evaluations = p.all_pairs() / 4 + 1;
  c = choose_agent(p, l, g, h100(), TuningPolicy{});
  EXPECT_NE(c.agent, Agent::Grid);
  EXPECT_EQ(c.describe().rfind("brute force: a grid of", 0), 0u) << c.describe();
  // All pairs: the counts on the tensor cores (FP16 where σ²r² fits, else split TF32).
  EXPECT_EQ(c.agent, Agent::TensorCount) << c.describe();
  TuningPolicy tf32;
  tf32.tensor_count = TuningPolicy::TensorCount::Tf32;
  c = choose_agent(p, l, g, h100(), tf32);
  EXPECT_EQ(c.agent, Agent::TensorCount);
  EXPECT_FALSE(c.tensor_half);
  EXPECT_NE(c.describe().find("tensor-core counts: Gram form on split TF32"), std::string::npos) << c.describe();
  TuningPolicy off;
  off.tensor_count = TuningPolicy::TensorCount::Off;
  EXPECT_EQ(choose_agent(p, l, g, h100(), off).agent, Agent::CountingTiles);
}

TEST(AgentChoice, JackknifeRegionsForceTheGridAndWeightsTheGenericAgents) {
  PairProblem p = cube_problem(OutputMode::Histogram, Binning::logarithmic(0.01, 0.2, 20), 100000);
  p.regions = 10;
  OutputLayout l = choose_layout(p, h100());
  EXPECT_TRUE(l.grid_wanted);
  EXPECT_TRUE(l.grid_forced);
  EXPECT_EQ(l.grid_copies, 32);  // a sub-histogram a lane
  GridMeasure g;
  g.built = true;
  g.evaluations = p.all_pairs();  // even where the grid costs more
  EXPECT_EQ(choose_agent(p, l, g, h100(), TuningPolicy{}).agent, Agent::Grid);
  // Regions need the grid's cutoff: a pair function without one cannot take them.
  p.grid_metric = false;
  EXPECT_THROW(choose_layout(p, h100()), Error);
  // Weighted histograms over all pairs: the generic agent, never the tiles.
  p.grid_metric = true;
  p.regions = 0;
  p.weighted = true;
  p.path = "brute";
  l = choose_layout(p, h100());
  EXPECT_FALSE(l.grid_wanted);
  const AgentChoice c = choose_agent(p, l, no_grid(l), h100(), TuningPolicy{});
  EXPECT_EQ(c.agent, Agent::Generic);
  EXPECT_EQ(c.describe().rfind("brute force (requested)", 0), 0u) << c.describe();
}

TEST(AgentChoice, MeanSeparationsAndTwoDimensionalBinsChooseTheirOutputs) {
  PairProblem p = cube_problem(OutputMode::Histogram, Binning::linear(0, 1.8, 20), 1u << 20);
  p.means = true;
  OutputLayout l = choose_layout(p, h100());
  AgentChoice c = choose_agent(p, l, no_grid(l), h100(), TuningPolicy{});
  EXPECT_EQ(c.agent, Agent::Generic);  // sums need every pair's float64 key
  EXPECT_TRUE(c.sums_shared);
  EXPECT_NE(c.describe().find("per block in shared memory"), std::string::npos) << c.describe();
  // 2-D bins with regions: counted in global memory, pair by pair.
  PairProblem b = cube_problem(OutputMode::Histogram, Binning::from_edges({0.0, 0.3}), 1u << 20);
  b.binned = true;
  b.nbins = 400;
  b.regions = 8;
  l = choose_layout(b, h100());
  EXPECT_FALSE(l.key_table);
  EXPECT_FALSE(l.grid_forced);  // a binned pair function counts its regions on either traversal
  c = choose_agent(b, l, no_grid(l), h100(), TuningPolicy{});
  EXPECT_TRUE(c.hist_global);
  EXPECT_EQ(c.copies, 0);
  EXPECT_NE(c.describe().find("counted by 64-bit atomics in global memory (8 jackknife regions)"), std::string::npos)
      << c.describe();
}

TEST(AgentChoice, TooManyBinsForTheTableAreAConfigurationError) {
  const PairProblem p = cube_problem(OutputMode::Histogram, Binning::linear(0, 1.8, kMaxTableBins + 1), 1000);
  EXPECT_THROW(choose_layout(p, h100()), Error);
}

using testing_support::ScopedEnv;

TEST(TuningPolicy, ReadsEveryOverrideFromTheEnvironmentInOnePlace) {
  EXPECT_EQ(TuningPolicy::current().overrides(), "");
  {
    ScopedEnv a("TWOBODY_TENSOR_COUNT", "tf32"), b("TWOBODY_HIST_COPIES", "99"), c("TWOBODY_GENERIC_COPIES", "fit"),
        d("TWOBODY_PAIR_PAGE_SIZE", "5"), e("TWOBODY_PAIR_POOL_PAGES", "3"), f("TWOBODY_MATRIX_HOST", "plain"),
        g("TWOBODY_GRID_REACH", "2"), h("TWOBODY_CUDA_CHUNK_POINTS", "6000");
    const TuningPolicy p = TuningPolicy::current();
    EXPECT_EQ(p.tensor_count, TuningPolicy::TensorCount::Tf32);
    EXPECT_EQ(p.histogram_copies, 32);  // clamped to 1..32
    EXPECT_FALSE(p.generic_copies_model);
    EXPECT_EQ(p.pair_page_size, 5u);
    EXPECT_EQ(p.pair_pool_pages, 3u);
    EXPECT_EQ(p.matrix_host, TuningPolicy::MatrixHost::Plain);
    EXPECT_EQ(p.grid_reach, 2);
    EXPECT_EQ(p.chunk_points, 6000u);
    EXPECT_NE(p.overrides().find("TF32 tensor-core counts"), std::string::npos) << p.overrides();
  }
  for (const char* bad : {"0", "-3", "abc", "", "12x", "99999999999"}) {
    ScopedEnv a("TWOBODY_PAIR_PAGE_SIZE", bad);
    EXPECT_THROW(TuningPolicy::current(), Error) << bad;
  }
  {
    ScopedEnv a("TWOBODY_PAIR_POOL_PAGES", "0");
    EXPECT_THROW(TuningPolicy::current(), Error);
  }
  {
    ScopedEnv a("TWOBODY_GRID_REACH", "7");
    EXPECT_THROW(TuningPolicy::current(), Error);
  }
  EXPECT_EQ(TuningPolicy::current().overrides(), "");
}

TEST(TuningPolicy, GramPartialSumsFromD2048AndForcedByTheEnvironment) {
  const TuningPolicy p = TuningPolicy::current();
  EXPECT_EQ(p.gram_fold_for(2047), 0);
  EXPECT_EQ(p.gram_fold_for(2048), 32);
  EXPECT_EQ(p.gram_fold_for(4096), 32);
  {
    ScopedEnv a("TWOBODY_GRAM_FOLD", "16");
    const TuningPolicy q = TuningPolicy::current();
    EXPECT_EQ(q.gram_fold_for(300), 16);  // forced at every d
    EXPECT_NE(q.overrides().find("partial sums of 16 MMAs"), std::string::npos) << q.overrides();
  }
  {
    ScopedEnv a("TWOBODY_GRAM_FOLD", "0");
    EXPECT_EQ(TuningPolicy::current().gram_fold_for(4096), 0);
    EXPECT_NE(TuningPolicy::current().overrides().find("one Gram accumulator"), std::string::npos);
  }
  for (const char* bad : {"3", "-2", "x", "2048"}) {  // odd, negative, not a number, beyond kMaxGramFold
    ScopedEnv a("TWOBODY_GRAM_FOLD", bad);
    EXPECT_THROW(TuningPolicy::current(), Error) << bad;
  }
}

}  // namespace
}  // namespace twobody::cuda
