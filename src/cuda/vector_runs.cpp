// The CUDA backend's statistics over vectors: the rows prepared on the host as the rule reads them
// (cpu/vector_rows.hpp: promoted, normalised for the cosine distance), the float64 join kernel
// (vector_join.cu), and the result in the engine's layout.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/vector_join.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cuda {

namespace {

// The set's rows as the rule reads them, contiguous float64 (one upload).
std::vector<double> rule_rows(const VectorSet& v, Metric m, int threads, const char* which) {
  const cpu::RuleRows rows(v, m, threads, which);
  const std::size_t dim = static_cast<std::size_t>(v.dim());
  std::vector<double> out(v.size() * dim);
  const auto n = static_cast<std::ptrdiff_t>(v.size());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) rows.load(static_cast<std::size_t>(i), out.data() + static_cast<std::size_t>(i) * dim);
  return out;
}

}  // namespace

std::string refuses_vectors_on_device(const Statistic& s) {
  switch (s.output()) {
    case OutputKind::Reduction:
    case OutputKind::PerPoint:
    case OutputKind::PairList: return {};
    case OutputKind::Nearest: return refuses_nearest_on_device(s);
    case OutputKind::Matrix: return "has no matrix kernel for vectors yet";
    case OutputKind::Histogram: return "has no histogram kernel for vectors yet";
  }
  return "does not run this statistic over vectors";
}

Result run_vectors_on_device(const VectorPlan& plan) {
  const Statistic& s = *plan.stat;
  VectorJoinInput in;
  const std::vector<double> a = rule_rows(*plan.a, s.metric, plan.threads, plan.is_auto() ? "" : "first set: ");
  std::vector<double> b;
  if (!plan.is_auto()) b = rule_rows(*plan.b, s.metric, plan.threads, "second set: ");
  if (s.output() == OutputKind::Nearest) return run_nearest_on_device(plan, a, b);
  in.a = a.data();
  in.b = plan.is_auto() ? a.data() : b.data();
  in.na = plan.a->size();
  in.nb = plan.b->size();
  in.dim = plan.a->dim();
  in.is_auto = plan.is_auto();
  in.cosine = s.metric == Metric::Cosine;
  in.lo = plan.edges.lo();
  in.hi = plan.edges.hi();
  in.max_pairs = plan.max_pairs;
  in.progress = plan.progress;
  const OutputKind out = s.output();
  in.output = out == OutputKind::PerPoint ? VectorJoinOutput::PerPoint
              : out == OutputKind::PairList ? VectorJoinOutput::Pairs
                                            : VectorJoinOutput::Total;
  VectorJoinResult j = run_vector_join(in);
  Result r;
  r.output = out;
  if (out == OutputKind::Reduction) r.counts = {j.total};
  if (out == OutputKind::PerPoint) {
    r.per_point_a.counts = std::move(j.count_a);
    r.per_point_b.counts = std::move(j.count_b);
  }
  if (out == OutputKind::PairList) {
    r.pairs = std::move(j.pairs);
    std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  }
  r.info.threads = plan.threads;
  r.info.pairs_evaluated = pair_total(in.na, in.nb, in.is_auto) * (out == OutputKind::PairList && j.total > 0 ? 2 : 1);
  r.info.plan = fmt::format("join kernel {:.4f} s", j.kernel_seconds);
  return r;
}

std::string describe_vectors_on_device(const VectorPlan& plan) {
  if (plan.stat->output() == OutputKind::Nearest) return describe_nearest_on_device(plan);
  return fmt::format(
      "cuda kernel: float64 on the CUDA cores (the rule itself, no FMA): blocks of 64 x 64 pairs{}, 256 threads with "
      "4 x 4 keys each, rows staged 16 coordinates at a time in order{}",
      plan.is_auto() ? " (the triangle's tiles only)" : "",
      plan.stat->output() == OutputKind::PairList ? "; pairs counted, then written into a buffer of that size" : "");
}

}  // namespace twobody::cuda
