#pragma once
// Euclidean joins over vectors of 9 <= d <= 64 on the GPU's vector grid (seed 004 ch. 3,
// GDS-Join, on the engine's shape): cells of width >= eps on the m <= 6 dimensions of largest
// variance (vector_grid_cells.hpp: why no pair in range is ever dropped), both sets sorted by
// cell on the device, the units of the refine (vector_grid_index.cuh: neighbour runs found by
// binary search, the half shell for a self-join, a work queue heaviest first), and the refine
// (vector_grid_join.cu): every candidate pair's key by the rule itself, the same float64 sum in
// stored order without FMA as the brute force (vector_key_tiles.cuh), so totals, per-vector counts
// and pair lists equal the CPU's bit for bit. Which joins take it: vector_grid_choice.hpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_grid_cells.hpp"
#include "twobody/detail/cuda/vector_join.hpp"

namespace twobody::cuda {

struct VectorGridResult {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> count_a, count_b;  // PerPoint (count_b empty for a self-join)
  std::uint64_t candidates = 0;                 // pairs whose keys the refine computed
  std::uint64_t chunks = 0, units = 0;
  std::uint64_t launches = 0, resumed = 0;       // refine launches; of them, after a full pair buffer
  std::uint64_t batches = 0;                     // Pairs: drains to `take`
  std::size_t buffer_pairs = 0;
  std::string refusal;  // not empty: the grid did not run (why); run all pairs instead
  double index_seconds = 0, kernel_seconds = 0;
};

// `in` as for run_vector_join, Euclidean, its rows on the device (device_a, device_b: the rule's
// rows); `g` from the choice. Pairs go to in.take batch by batch (the sets' indices, i < j for a
// self-join, unordered), at most policy.vector_grid_pairs a batch.
VectorGridResult run_vector_grid(const VectorJoinInput& in, const VectorGridGeometry& g, const TuningPolicy& policy);

}  // namespace twobody::cuda
