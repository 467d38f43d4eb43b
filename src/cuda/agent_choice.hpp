#pragma once
// The CUDA backend's dispatch (CUB's dispatch layer): which agent runs a pair problem on this
// device, and with what shape. Two pure host functions of the problem, the device's properties and
// the tuning policy, unit-tested on the CPU with recorded H100 properties:
//   choose_layout  seed 000's Fig. 15 for the outputs: the bin table, the private sub-histograms
//                  the brute-force and grid agents can hold (the fitting rule), whether the grid
//                  agent fits at all, and whether the problem may or must take a grid;
//   choose_agent   once the grid index has counted its candidate pairs on the device: grid or all
//                  pairs (the shared cost model, engine/traversal_cost.hpp), then among all pairs
//                  the counting tiles, the tensor-core counts and histograms or the generic agent,
//                  and the copies and block size by seed 000's copies model.
// The agents (agents/*.cuh) only run what the choice says; the run's plan prints the choice.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "twobody/detail/cuda/device_info.hpp"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"
#include "twobody/detail/exact/fast_path.hpp"
#include "twobody/exact_sums.hpp"

namespace twobody::cuda {

// The kernels whose registers bound the blocks a multiprocessor holds, as this problem would
// instantiate them.
enum class AgentKernel { Grid, Generic256, Generic512, CountingTilesHistogram, Fp64TensorHistogram };

struct DeviceProperties {
  DeviceInfo info;
  // Blocks of a kernel a multiprocessor holds by its registers (the occupancy API at no shared
  // memory); asked only for the kernels the choice weighs.
  std::function<int(AgentKernel)> blocks_by_registers;
};

// The problem as the dispatch sees it.
struct PairProblem {
  int dim = 3;
  OutputMode mode = OutputMode::Histogram;
  bool weighted = false;
  int regions = 0;             // jackknife regions
  bool means = false;          // mean separations per bin
  bool binned = false;         // a binned pair function (2-D bins): the bins are float64's alone
  bool grid_metric = false;    // a cutoff the grid index serves (distances, chords on the sphere)
  bool triclinic = false;      // a triclinic cell (no grid on the device: brute force, said so)
  bool euclidean_tiles = false;  // Euclidean<D>, D <= 3: the counting tiles and tensor-core agents
  bool is_auto = true;
  std::uint64_t n_a = 0, n_b = 0;
  int nbins = 1;               // the histogram's bins (2-D: the flat bins)
  GuardBands guard;            // the key edges' float32 guard bands (key_edges + the proxy's error)
  std::vector<double> edges;   // the binning's edges in the natural variable (the tiles' plans)
  DistanceErrorModel model;    // the float32 proxies' error, Euclidean (the tiles' plans)
  std::string path = "auto";   // RunOptions::path
  SumGrids grids;              // the run's exact-sum grids (Plan::grids)
  std::uint64_t all_pairs() const;
};

// Stage one: the outputs' shared memory.
struct OutputLayout {
  std::size_t budget = 0;  // half a block's shared memory less 1 KB: two blocks a multiprocessor
  bool key_table = false;  // the float-bits bin table (1-D histograms)
  GuardTable table;        // its cells
  int shared_regions = 0;  // jackknife regions counted in shared memory (binned: in global memory)
  int stride = 1;          // a sub-histogram's counters: nbins + 2, odd (banks)
  int copies = 1;          // the brute-force agent's sub-histograms a block, by the fitting rule
  std::size_t smem = 0;
  int grid_copies = 1;     // the grid agent's sub-histograms a warp
  std::size_t grid_smem = 0;
  // The grid index: whether to build it, whether it must be taken, and why not.
  bool grid_wanted = false, grid_forced = false;
  std::string no_grid_why;
};
OutputLayout choose_layout(const PairProblem& p, const DeviceProperties& d);

// What the grid index found on the device (grid_index.cuh), when it was built.
struct GridMeasure {
  bool built = false;
  std::string why;              // not built: why (brute force)
  std::string shape;            // "a grid of ... cells (reach ...)"
  std::uint64_t evaluations = 0;  // candidate pairs its cells hold
  std::uint64_t units = 0;        // warp units of the work queue
};

// Grid or all pairs: the grid when the layout forces it (jackknife regions, --path grid) or the
// shared cost model (engine/traversal_cost.hpp) finds its candidates cheaper than all pairs.
bool grid_taken(const OutputLayout& layout, const GridMeasure& grid, std::uint64_t all_pairs);

enum class Agent { Generic, Grid, CountingTiles, TensorCount, Fp64TensorHistogram, TensorHistogram };

struct AgentChoice {
  Agent agent = Agent::Generic;
  std::string grid_why;            // grid or all pairs, and why ("grid: ...", "brute force: ...")
  int threads = kThreads;          // a block's threads
  int anchors_per_item = kAnchors;  // all pairs: an item's anchors (its partners: kChunk)
  // The generic and grid agents' outputs.
  int copies = 1;                  // sub-histograms a block (generic) or a warp (grid)
  std::size_t smem = 0;            // dynamic shared memory a block
  bool direct = false;             // the bin table's cells decide most pairs (one load)
  bool hist_global = false;        // 2-D bins counted by atomics in global memory
  bool sums_shared = false;        // mean separation sums per block in shared memory
  // The counting tiles and tensor-core agents.
  CountingTilesShape tiles;
  bool pair_flags = false;         // a flag bit a pair in the guard (else a marked word)
  double fp64_scale = 1;           // the FP64 histogram's σ
  Fp64Clamp fp64_clamp = kTop;
  TensorCountShape tensor;
  bool tensor_half = false;        // FP16 (else split TF32)
  TensorHistogramShape thist;
  bool thist_clamp = true;
  std::string notes;               // the agent's part of the run's plan
  bool grid() const { return agent == Agent::Grid; }
  std::string describe() const { return grid_why + notes; }
};
AgentChoice choose_agent(const PairProblem& p, const OutputLayout& layout, const GridMeasure& grid,
                         const DeviceProperties& d, const TuningPolicy& policy);

}  // namespace twobody::cuda
