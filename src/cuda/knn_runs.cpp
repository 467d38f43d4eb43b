// The CUDA backend's k nearest neighbours in the engine's terms: which k it takes, the float64
// kernel (vector_knn.cu) on the rows vector_runs.cpp prepared, and the CPU's layout of the lists
// (Result::nearest), the values computed from the keys by the CPU's own function.
#include <fmt/format.h>
#include <omp.h>

#include <utility>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cuda {

std::string refuses_nearest_on_device(const Statistic& s) {
  const int k = std::get<reduce::Nearest>(s.reduction).k;
  if (k > kMaxDeviceNearest)
    return fmt::format("has no k-nearest-neighbour kernel for k = {} (above {}) yet", k, kMaxDeviceNearest);
  return {};
}

Result run_nearest_on_device(const VectorPlan& plan, const std::vector<double>& a, const std::vector<double>& b) {
  const Metric m = plan.stat->metric;
  VectorKnnInput in;
  in.a = a.data();
  in.b = b.data();
  in.na = plan.a->size();
  in.nb = plan.b->size();
  // A band's queries: a cross band's rows alone; an auto band's among the whole set, which holds
  // their partners and excludes each query by its index.
  if (!plan.is_auto()) {
    in.a = a.data() + plan.band.begin * static_cast<std::size_t>(plan.a->dim());
    in.na = plan.band.size();
  } else {
    in.first_query = plan.band.begin;
    in.last_query = plan.band.end;
  }
  in.dim = plan.a->dim();
  in.is_auto = plan.is_auto();
  in.cosine = m == Metric::Cosine;
  in.k = plan.k;
  in.progress = plan.progress;
  VectorKnnResult knn = run_vector_knn(in);
  Result r;
  r.output = OutputKind::Nearest;
  r.nearest.k = plan.k;
  const std::size_t n = knn.key.size();
  r.nearest.index.resize(n);
  r.nearest.key = std::move(knn.key);
  r.nearest.value.resize(n);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(plan.threads) schedule(static)
  for (std::ptrdiff_t t = 0; t < count; ++t) {
    r.nearest.index[static_cast<std::size_t>(t)] = knn.index[static_cast<std::size_t>(t)];
    r.nearest.value[static_cast<std::size_t>(t)] = cpu::natural_of_vector_key(m, r.nearest.key[static_cast<std::size_t>(t)]);
  }
  r.info.threads = plan.threads;
  r.info.pairs_evaluated = static_cast<std::uint64_t>(plan.band.size()) * (in.is_auto ? in.nb - 1 : in.nb);
  r.info.plan = fmt::format("knn kernel {:.4f} s ({} launches, slabs of {} queries)", knn.kernel_seconds, knn.launches,
                            knn.slab_queries);
  return r;
}

std::string describe_nearest_on_device(const VectorPlan& plan) {
  return fmt::format(
      "cuda kernel: float64 on the CUDA cores (the rule itself, no FMA), the join kernel's keys: a block of 256 threads "
      "owns 64 queries and sweeps every partner tile of 64{}, 4 x 4 keys a thread; each query keeps its {} best "
      "(key, index) sorted in device memory, buffers the candidates before its k-th (128 at a time) and merges them by a "
      "warp's bitonic sort; queries in slabs whose lists fit in device memory",
      plan.is_auto() ? " (itself excluded by index)" : "", plan.k);
}

}  // namespace twobody::cuda
