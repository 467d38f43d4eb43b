#pragma once
// Euclidean join counts (total, per vector) on the tensor cores, exact: FP16 Gram tiles give each
// pair a float32 distance s̃ within a proven bound E of the float64 rule's key
// (exact/gram_bounds.hpp); a pair farther than E from the range's edges takes s̃'s verdict, the
// others are settled by the rule itself on the CUDA cores (the arithmetic of vector_join.cu), so
// the counts are the float64 brute force's bit for bit. docs/exactness.md gives the argument.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/cuda/vector_join.hpp"

namespace twobody::cuda {

struct GramJoinResult {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> count_a, count_b;  // PerPoint (count_b empty for a self-join)
  std::uint64_t settled = 0;         // undecided pairs settled by the rule
  std::uint64_t settled_inline = 0;  // of those, settled inside the tiles because the queue was full
  std::size_t queue_capacity = 0;
  double kernel_seconds = 0;
};

// `in` as for run_vector_join (rule rows, range, Total or PerPoint, Euclidean, progress); `ga` and
// `gb` the Gram rows of its sets about one centre (gb null for a self-join). `queue_capacity`
// undecided pairs are held per slab of tiles; beyond it the tiles settle pairs themselves (slower,
// never wrong).
GramJoinResult run_gram_join(const VectorJoinInput& in, const GramRows& ga, const GramRows* gb,
                             std::size_t queue_capacity);

// For the bound test: of every pair (i, j) of the sets' indices, ga.n x gb.n row-major, from the
// same tiles: s̃, and the tensor cores' sum G of the FP16 products (scaled units).
struct GramDistances {
  std::vector<float> distances, products;
};
GramDistances gram_distances(const GramRows& ga, const GramRows& gb);

}  // namespace twobody::cuda
