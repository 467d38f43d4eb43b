#pragma once
// Join counts (total, per vector) on the tensor cores, exact: FP16 Gram tiles give each pair a
// float32 distance s̃ within a proven bound E of the float64 rule's key (exact/gram_bounds.hpp);
// a pair farther than E from the range's edges takes s̃'s verdict, the others are settled by the
// rule itself on the CUDA cores (the arithmetic of vector_join.cu), so the counts are the float64
// brute force's bit for bit. Euclidean rows about a common centre, or (in.cosine) the cosine
// distance's normalised rows with unit N (make_cosine_gram_rows): s̃ is then 2·fl32(1 − D), twice
// the key, and the bound gram_cosine_bound. docs/exactness.md gives the argument.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/cuda/vector_join.hpp"

namespace twobody::cuda {

struct GramJoinResult {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> count_a, count_b;  // PerPoint (count_b empty for a self-join)
  std::uint64_t settled = 0;         // undecided pairs settled by the rule
  std::uint64_t settled_inline = 0;  // of those, settled inside the tiles because the queue was full
  std::uint64_t first_look = 0;      // of those, decided by the FP16 rows' float64 distance (the rest by the rule)
  std::size_t queue_capacity = 0;
  int fold = 0;                      // the MMAs' partial sums (exact::GramFormat::fold; 0: one accumulator)
  double kernel_seconds = 0;
};

// `in` as for run_vector_join (range, Total or PerPoint, metric, progress); `da` and `db` the
// device rows of its sets about one centre (prepared for in's metric), Gram rows and rule rows (gram_rows_device.hpp; db null
// for a self-join). `queue_capacity` undecided pairs are held per slab of tiles; beyond it the
// tiles settle pairs themselves (slower, never wrong). `ka`, `kb` (Euclidean; kb null for a
// self-join): the rows' terms of the bound in distance space (make_gram_knn_rows_on_device), with
// which the tiles decide on the rounded rows' norms by exact::gram_knn_tile_thresholds, a band of
// undecided pairs narrower than E's by about the distance over the norms; null: E.
GramJoinResult run_gram_join(const VectorJoinInput& in, const DeviceGramRows& da, const DeviceGramRows* db,
                             std::size_t queue_capacity, const DeviceGramKnnRows* ka = nullptr,
                             const DeviceGramKnnRows* kb = nullptr);
// The same from the host preparation (make_gram_rows, sort_by_norm) and `in`'s rule rows, uploaded.
GramJoinResult run_gram_join(const VectorJoinInput& in, const GramRows& ga, const GramRows* gb,
                             std::size_t queue_capacity);

// Pair lists on the same tiles (gram_pairs.cu): every certain-in pair and every undecided
// one (flagged) goes to a device buffer of `buffer_pairs`; when a slab of tiles is done, or the
// buffer is full, a settle kernel computes each buffered pair's key in float64 by the rule (the
// value the CPU's: a distance's square root, the cosine distance itself), drops the undecided pairs that are out, and
// compacts the rest, which `take` receives as one batch: the sets' indices, i < j for a
// self-join, in no order. A full buffer stops the warps that could not write; the next launch
// resumes their tiles after the pairs they wrote (each warp emits its pairs in one fixed order),
// so no pair is lost or written twice and memory stays bounded whatever the list's length. `ka`,
// `kb` as for run_gram_join.
struct GramPairsResult {
  std::uint64_t pairs = 0;     // handed to `take`
  std::uint64_t settled = 0;   // undecided pairs settled by the rule (in or out)
  std::uint64_t launches = 0;  // tile launches: one a slab, more when the buffer filled
  std::uint64_t resumed = 0;   // of those, launches of tiles a full buffer stopped
  std::uint64_t batches = 0;   // drains (settle, compaction, copy to the host)
  std::size_t buffer_pairs = 0;
  int fold = 0;                // as GramJoinResult's
  double kernel_seconds = 0;
};
GramPairsResult run_gram_pairs(const VectorJoinInput& in, const DeviceGramRows& da, const DeviceGramRows* db,
                               std::size_t buffer_pairs, const std::function<void(std::vector<PairRecord>&)>& take,
                               const DeviceGramKnnRows* ka = nullptr, const DeviceGramKnnRows* kb = nullptr);
GramPairsResult run_gram_pairs(const VectorJoinInput& in, const GramRows& ga, const GramRows* gb,
                               std::size_t buffer_pairs, const std::function<void(std::vector<PairRecord>&)>& take);

// For the bound test: of every pair (i, j) of the sets' indices, ga.n x gb.n row-major, from the
// same tiles: s̃, and the tensor cores' sum G of the FP16 products (scaled units), G summed in
// partials of `fold` MMAs as the joins' tiles (0: one accumulator; gram_join_format).
struct GramDistances {
  std::vector<float> distances, products;
};
GramDistances gram_distances(const GramRows& ga, const GramRows& gb, int fold = 16);

}  // namespace twobody::cuda
