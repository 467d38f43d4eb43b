#pragma once
// Similarity joins on the GPU in float64 (the rule itself, docs/exactness.md): every pair's key
// summed over k in stored order on the CUDA cores, without FMA (--fmad=false), so the pairs are
// the CPU's bit for bit. The caller hands over the rows as the rule reads them (promoted, and for
// the cosine distance normalised, on the host). The first GPU path of issue 22: the tensor-core
// Gram tiles (gram_tiles.hpp) settle their undecided pairs with this arithmetic.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "twobody/result.hpp"

namespace twobody::cuda {

enum class VectorJoinOutput { Total, PerPoint, Pairs };

struct VectorJoinInput {
  const double* a = nullptr;  // na x dim, row-major
  const double* b = nullptr;  // nb x dim; equals a for a self-join
  // The same rows already on the device (gram_rows_device.hpp's rule rows), or null: then a and b
  // are uploaded (and need not be set when these are).
  const double* device_a = nullptr;
  const double* device_b = nullptr;
  std::size_t na = 0, nb = 0;
  int dim = 0;
  bool is_auto = true;   // pairs i < j of one set
  bool cosine = false;   // key 1 - a.b (rows normalised), else the squared distance
  double lo = 0, hi = 0;  // keys in [lo, hi)
  VectorJoinOutput output = VectorJoinOutput::Total;
  std::size_t max_pairs = 0;  // Pairs: more is Error(Resource)
  int gram_fold = 0;          // the Gram tiles' partial sums (TuningPolicy::gram_fold_for)
  std::function<void(double)> progress;
  // Pairs: each batch as it is drained (the sets' indices, unsorted); the taker may keep or empty it.
  std::function<void(std::vector<PairRecord>&)> take;
};

struct VectorJoinResult {
  std::uint64_t total = 0;
  std::vector<std::uint64_t> count_a, count_b;  // PerPoint (count_b empty for a self-join)
  std::uint64_t batches = 0;                    // Pairs: the slabs that had pairs, each one batch to `take`
  double kernel_seconds = 0;
};

VectorJoinResult run_vector_join(const VectorJoinInput& in);

}  // namespace twobody::cuda

namespace twobody {
struct VectorPlan;
struct Statistic;
}  // namespace twobody

namespace twobody::cuda {
// The CUDA backend's side of Backend::refuses_vectors / run_vectors / describe_vectors
// (vector_runs.cpp): joins (Count, PerPoint, PairList) and k-NN (vector_knn.hpp) run here; the others on the CPU.
std::string refuses_vectors_on_device(const Statistic& s);
Result run_vectors_on_device(const VectorPlan& plan);
std::string describe_vectors_on_device(const VectorPlan& plan);
// A band of a hybrid run (VectorPlan::band; vector_band_runs.cpp), which run_vectors_on_device
// hands on, and the bands it does not take.
Result run_band_on_device(const VectorPlan& plan);
std::string refuses_bands_on_device(const Statistic& s);
}  // namespace twobody::cuda
