#pragma once
// Exact k nearest neighbours on the FP16 Gram tiles (issue 22, milestone 6): the tensor cores give
// every pair a float32 distance s̃, and the bound in distance space (exact/gram_bounds.hpp:
// gram_knn_bound) turns it into an interval [lower, upper] that holds the float64 rule's key. Per
// query the tiles keep the entries of smallest upper key, and U = the k-th smallest upper key is at
// least the true k-th key; every partner of the true k nearest then has lower <= U, so the kept
// entries with lower <= U, re-ranked by the rule itself (float64, the CPU's arithmetic) and
// ordered by (key, index), are the float64 brute force's list bit for bit. A query whose list had
// to drop an entry with lower <= U is handed back (`fallback`) for the float64 kernel
// (vector_knn.hpp): never a wrong answer. docs/exactness.md gives the argument.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "twobody/detail/cuda/gram_knn_rows.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"

namespace twobody::cuda {

struct GramKnnInput {
  const double* a = nullptr;  // queries, na x dim, the rule's rows in the set's order
  const double* b = nullptr;  // partners, nb x dim; equals a for a self-k-NN
  std::size_t na = 0, nb = 0;
  int dim = 0;
  bool is_auto = true;  // partners are a's other rows (a query's own row excluded by index)
  // The cosine distance: the rows normalised (the rule's), prepared without centring
  // (make_cosine_gram_rows); the tiles' keys are then 2·key (exact::gram_cosine_knn_bound), the
  // re-rank the rule's 1 − a·b, and the sweep skips no tile by the norm gap (every norm is near 1).
  bool cosine = false;
  int k = 1;            // 1 <= k <= kMaxDeviceNearest, and at most the partners a query has
  std::size_t capacity = 0;      // entries a query's list keeps (gram_knn_capacity, gram_knn_rows.hpp)
  std::size_t slab_queries = 0;  // queries a launch at most (0: by device memory and occupancy)
  std::function<void(double)> progress;  // between launches; an exception it throws ends the run
};

struct GramKnnResult {
  std::vector<std::uint32_t> index;     // na x k, nearest first (rows of fallback queries: unset)
  std::vector<double> key;              // na x k, the rule's keys
  std::vector<std::uint32_t> fallback;  // queries (set indices, increasing) to run by the float64 kernel
  std::uint64_t candidates = 0;         // pairs re-ranked in float64
  std::uint64_t tiles = 0, pruned = 0;  // partner tiles swept, and skipped by the norm gap
  std::size_t capacity = 0, slab_queries = 0, launches = 0;
  double kernel_seconds = 0;
};

// The rows prepared about one centre and sorted by norm on the device, with their rule rows
// (prepare_gram_rows_on_device: the norm gap's pruning relies on the order), and their k-NN terms
// (make_gram_knn_rows_on_device); db and kb null for a self-k-NN. Rows must be fewer than 2^31.
GramKnnResult run_gram_knn(const GramKnnInput& in, const DeviceGramRows& da, const DeviceGramKnnRows& ka,
                           const DeviceGramRows* db, const DeviceGramKnnRows* kb);
// The same from the host's preparation (make_gram_rows or make_cosine_gram_rows, sort_by_norm,
// make_gram_knn_rows) and in's rule rows, uploaded: the reference path.
GramKnnResult run_gram_knn(const GramKnnInput& in, const GramRows& ga, const GramKnnRows& ka, const GramRows* gb,
                           const GramKnnRows* kb);

}  // namespace twobody::cuda
