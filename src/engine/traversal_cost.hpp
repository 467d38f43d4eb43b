#pragma once
// Grid or all pairs: one cost model for both backends. The grid index leaves `evaluations`
// candidate pairs (counted exactly from its cells' occupancy once the points are sorted); each
// costs `grid_evaluation` times a pair of the brute-force traversal, which visits all pairs.
// The grid is taken when it costs less. Each backend has its measured constants.
#include <cstdint>
#include <string>

namespace twobody {

struct TraversalCost {
  // A grid candidate's cost in brute-force pairs.
  std::uint64_t grid_evaluation = 2;
  // Below this many pairs in all, brute force without building a grid (the index's fixed cost).
  std::uint64_t min_pairs_for_grid = 0;
  const char* why = "";
};

// The CPU: the cell sort and the shorter rows of the grid's blocks cost about a pair each.
inline constexpr TraversalCost kCpuTraversalCost{2, 0, "the cpu's grid costs about twice a brute-force pair"};
// The GPU: the brute-force agents hold eight anchors a thread against tiles in shared memory, about
// four times the grid agent's rate per pair; a grid over fewer than 2^24 pairs never pays its sort.
inline constexpr TraversalCost kCudaTraversalCost{4, std::uint64_t(1) << 24,
                                                  "the gpu's grid agent costs about four brute-force pairs a candidate"};

// Pair expressions on the GPU (cuda/expr): a grid block's candidate costs about two pairs of the
// brute-force tiles (shorter partner runs, the orientation's index loads); below 2^24 pairs the
// host's cell sort is not repaid.
inline constexpr TraversalCost kCudaExpressionTraversalCost{
    2, std::uint64_t(1) << 24, "the gpu's grid blocks cost about two brute-force pairs a candidate"};

// Whether the grid's `evaluations` cost less than brute force's `all_pairs`: c·e < n, exact in
// integers without overflow (c·e < n ⟺ e ≤ (n − 1) / c).
inline bool grid_pays(std::uint64_t evaluations, std::uint64_t all_pairs, const TraversalCost& c) {
  return all_pairs > 0 && evaluations <= (all_pairs - 1) / c.grid_evaluation;
}

}  // namespace twobody
