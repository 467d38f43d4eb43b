#pragma once
// Exact k nearest neighbours on the GPU in float64 (issue 22, milestone 6, first version): every
// key is the join kernel's (vector_key_tiles.cuh: summed over k in stored order, no FMA), so the
// lists are the CPU's bit for bit: per query the k partners of smallest (key, index), ties to the
// smaller index, a query never its own partner in a self-k-NN (its duplicates are). The tensor-core
// k-NN with its error bound (wip/issue-22-plan.md §3) will re-rank its candidates with this rule.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace twobody {
struct VectorPlan;
struct Statistic;
struct Result;
}  // namespace twobody

namespace twobody::cuda {

struct TuningPolicy;

// The largest k the kernel takes (each query keeps 3k entries in device memory); above it the
// engine runs the k-NN on the CPU.
constexpr int kMaxDeviceNearest = 1024;

struct VectorKnnInput {
  const double* a = nullptr;  // queries, na x dim, row-major, as the rule reads them
  const double* b = nullptr;  // partners, nb x dim; equals a for a self-k-NN
  // The partners' rows already on the device (gram_rows_device.hpp's rule rows), or null: then b
  // is uploaded (and need not be set when this is). Read apart from a (own_index or cross).
  const double* device_b = nullptr;
  std::size_t na = 0, nb = 0;
  int dim = 0;
  bool is_auto = true;   // partners are a's other rows (or b's, with own_index)
  // With is_auto: null when the queries are the partners themselves (b = a), else each query's own
  // index among b's rows, excluded from its partners (the queries a subset of the set: the Gram
  // k-NN's fallback, gram_knn.hpp).
  const std::uint32_t* own_index = nullptr;
  bool cosine = false;   // key 1 - a.b (rows normalised), else the squared distance
  int k = 1;             // 1 <= k <= kMaxDeviceNearest, and at most the partners a query has
  std::function<void(double)> progress;  // between launches; an exception it throws ends the run
};

struct VectorKnnResult {
  std::vector<std::uint32_t> index;  // na x k, nearest first
  std::vector<double> key;           // na x k, their float64 keys
  double kernel_seconds = 0;
  std::size_t slab_queries = 0;      // queries whose lists are in device memory at once
  std::size_t launches = 0;
};

VectorKnnResult run_vector_knn(const VectorKnnInput& in);

// The CUDA backend's k-NN in the engine's terms (knn_runs.cpp), called by vector_runs.cpp with the
// run's policy (its precision over the environment's).
std::string refuses_nearest_on_device(const Statistic& s);
Result run_nearest_on_device(const VectorPlan& plan, const TuningPolicy& policy);
std::string describe_nearest_on_device(const VectorPlan& plan, const TuningPolicy& policy);

}  // namespace twobody::cuda
