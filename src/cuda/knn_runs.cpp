// The CUDA backend's k nearest neighbours in the engine's terms: which k it takes, the path — the
// FP16 Gram tiles with their bound (gram_knn.hpp) for Euclidean k-NN from policy.gram_min_dim
// coordinates, their fallback queries and every other k-NN on the float64 kernel (vector_knn.cu) —
// on the rows vector_runs.cpp prepared, and the CPU's layout of the lists (Result::nearest), the
// values computed from the keys by the CPU's own function.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/gram_knn.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cuda {

namespace {

// Whether a k-NN takes the Gram tiles, and if not why (for the plan). The rows' range is checked
// as they are prepared (gram_rows.hpp), so a run may still go to the float64 kernel.
struct NearestPath {
  bool gram = false;
  std::string why_not;
};

NearestPath choose_nearest_path(const VectorPlan& plan, const TuningPolicy& policy) {
  using P = TuningPolicy::VectorPrecision;
  if (policy.vector_precision == P::Fp64) return {false, "TWOBODY_VECTOR_PRECISION=fp64"};
  if (plan.stat->metric == Metric::Cosine) return {false, "cosine distances have no Gram tiles yet"};
  if (std::max(plan.a->size(), plan.b->size()) >= (std::size_t(1) << 31)) return {false, "2^31 rows or more"};
  if (policy.vector_precision == P::Auto && plan.a->dim() < policy.gram_min_dim)
    return {false, fmt::format("d = {} < {}: the float64 kernel is the cheaper", plan.a->dim(), policy.gram_min_dim)};
  return {true, {}};
}

VectorKnnInput float64_input(const VectorPlan& plan, const std::vector<double>& a, const std::vector<double>& b) {
  VectorKnnInput in;
  in.a = a.data();
  in.b = plan.is_auto() ? a.data() : b.data();
  in.na = plan.a->size();
  in.nb = plan.b->size();
  in.dim = plan.a->dim();
  in.is_auto = plan.is_auto();
  in.cosine = plan.stat->metric == Metric::Cosine;
  in.k = plan.k;
  return in;
}

// The queries the Gram tiles handed back (their lists may have lost a candidate), by the float64
// kernel against every partner, their lists written into `g`'s.
void run_fallback(const VectorPlan& plan, const std::vector<double>& a, const std::vector<double>& b, GramKnnResult& g,
                  std::vector<std::uint32_t>& self_index) {
  const std::size_t d = static_cast<std::size_t>(plan.a->dim()), k = static_cast<std::size_t>(plan.k);
  const std::size_t n = g.fallback.size();
  std::vector<double> rows(n * d);
  for (std::size_t t = 0; t < n; ++t)
    std::copy_n(a.data() + static_cast<std::size_t>(g.fallback[t]) * d, d, rows.data() + t * d);
  VectorKnnInput in = float64_input(plan, a, b);
  in.a = rows.data();
  in.na = n;
  if (plan.is_auto()) {
    self_index = g.fallback;
    in.own_index = self_index.data();
  }
  if (plan.progress) in.progress = [&plan](double f) { plan.progress(0.9 + 0.1 * f); };
  const VectorKnnResult f = run_vector_knn(in);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t q = g.fallback[t];
    std::copy_n(f.index.data() + t * k, k, g.index.data() + q * k);
    std::copy_n(f.key.data() + t * k, k, g.key.data() + q * k);
  }
}

// The lists in the engine's layout: indices widened, values from the keys by the CPU's function.
Result nearest_result(const VectorPlan& plan, const std::vector<std::uint32_t>& index, std::vector<double> key) {
  const Metric m = plan.stat->metric;
  Result r;
  r.output = OutputKind::Nearest;
  r.nearest.k = plan.k;
  const std::size_t n = key.size();
  r.nearest.index.resize(n);
  r.nearest.key = std::move(key);
  r.nearest.value.resize(n);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(plan.threads) schedule(static)
  for (std::ptrdiff_t t = 0; t < count; ++t) {
    r.nearest.index[static_cast<std::size_t>(t)] = index[static_cast<std::size_t>(t)];
    r.nearest.value[static_cast<std::size_t>(t)] = cpu::natural_of_vector_key(m, r.nearest.key[static_cast<std::size_t>(t)]);
  }
  r.info.threads = plan.threads;
  const std::size_t na = plan.a->size(), nb = plan.b->size();
  r.info.pairs_evaluated =
      plan.is_auto() ? static_cast<std::uint64_t>(na) * (na - 1) : static_cast<std::uint64_t>(na) * nb;
  return r;
}

// The Gram path, or "" and a filled `out` — else why not (the rows out of its range).
std::string run_on_gram_tiles(const VectorPlan& plan, const std::vector<double>& a, const std::vector<double>& b,
                              const TuningPolicy& policy, Result& out) {
  const bool self = plan.is_auto();
  const std::size_t na = plan.a->size(), nb = plan.b->size();
  const int dim = plan.a->dim();
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> centre = gram_centre(a.data(), na, self ? nullptr : b.data(), self ? 0 : nb, dim, plan.threads);
  GramRows ga = make_gram_rows(a.data(), na, dim, centre, plan.threads);
  if (!ga.refusal.empty()) return (self ? "" : "first set: ") + ga.refusal;
  GramRows gb;
  if (!self) {
    gb = make_gram_rows(b.data(), nb, dim, centre, plan.threads);
    if (!gb.refusal.empty()) return "second set: " + gb.refusal;
    sort_by_norm(gb, plan.threads);
  }
  sort_by_norm(ga, plan.threads);
  const GramKnnRows ka = make_gram_knn_rows(ga, a.data(), centre, plan.threads);
  GramKnnRows kb;
  if (!self) kb = make_gram_knn_rows(gb, b.data(), centre, plan.threads);
  GramKnnInput in;
  in.a = a.data();
  in.b = self ? a.data() : b.data();
  in.na = na;
  in.nb = nb;
  in.dim = dim;
  in.is_auto = self;
  in.k = plan.k;
  in.capacity = gram_knn_capacity(plan.k, self ? nb - 1 : nb, policy.gram_knn_capacity);
  in.slab_queries = policy.knn_slab_queries;
  if (plan.progress) in.progress = [&plan](double f) { plan.progress(0.9 * f); };
  const auto t1 = std::chrono::steady_clock::now();
  GramKnnResult g = run_gram_knn(in, ga, ka, self ? nullptr : &gb, self ? nullptr : &kb);
  const auto t2 = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> self_index;
  if (!g.fallback.empty()) run_fallback(plan, a, b, g, self_index);
  const auto t3 = std::chrono::steady_clock::now();
  const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  out = nearest_result(plan, g.index, std::move(g.key));
  out.info.pairs_settled_fp64 = g.candidates;
  out.info.plan = fmt::format(
      "FP16 Gram tiles k-NN on the tensor cores: lists of {} entries, {} candidates re-ranked in float64 ({:.2f} a "
      "query), {} of {} queries fell back to the float64 kernel (their lists full within the bound){}; {} partner "
      "tiles swept, {} skipped by the norm gap; {} launches of {} queries; host preparation {:.3f} s, Gram tiles {:.3f} "
      "s (kernels {:.4f} s), fallback {:.3f} s",
      g.capacity, g.candidates, static_cast<double>(g.candidates) / static_cast<double>(std::max<std::size_t>(na - g.fallback.size(), 1)),
      g.fallback.size(), na, g.fallback.empty() ? "" : " (run there against every partner)", g.tiles, g.pruned, g.launches,
      g.slab_queries, seconds(t0, t1), seconds(t1, t2), g.kernel_seconds, seconds(t2, t3));
  return {};
}

}  // namespace

std::string refuses_nearest_on_device(const Statistic& s) {
  const int k = std::get<reduce::Nearest>(s.reduction).k;
  if (k > kMaxDeviceNearest)
    return fmt::format("has no k-nearest-neighbour kernel for k = {} (above {}) yet", k, kMaxDeviceNearest);
  return {};
}

Result run_nearest_on_device(const VectorPlan& plan, const std::vector<double>& a, const std::vector<double>& b) {
  const TuningPolicy policy = TuningPolicy::current();
  const NearestPath path = choose_nearest_path(plan, policy);
  std::string why_not = path.why_not;
  if (path.gram) {
    Result r;
    why_not = run_on_gram_tiles(plan, a, b, policy, r);
    if (why_not.empty()) return r;
  }
  VectorKnnInput in = float64_input(plan, a, b);
  in.progress = plan.progress;
  VectorKnnResult knn = run_vector_knn(in);
  Result r = nearest_result(plan, knn.index, std::move(knn.key));
  r.info.plan = fmt::format("float64 knn kernel ({}): {:.4f} s ({} launches, slabs of {} queries)", why_not,
                            knn.kernel_seconds, knn.launches, knn.slab_queries);
  return r;
}

std::string describe_nearest_on_device(const VectorPlan& plan) {
  const TuningPolicy policy = TuningPolicy::current();
  const NearestPath path = choose_nearest_path(plan, policy);
  const std::string overrides = policy.overrides();
  const std::string tail = overrides.empty() ? "" : "; " + overrides;
  const std::size_t partners = plan.is_auto() ? plan.b->size() - 1 : plan.b->size();
  if (path.gram)
    return fmt::format(
        "cuda kernel: FP16 Gram tiles on the tensor cores (mma.sync m16n8k16, float32 accumulation), rows centred, "
        "scaled by powers of two and sorted by norm; a block of 256 threads owns 128 queries and sweeps the partner "
        "tiles of 128 outward from the nearest norms{}, a direction ending where the norm gap puts every pair beyond "
        "every query's k-th bound; each pair's float32 distance gives its key an interval (the bound in distance "
        "space: FP16 rounding of both rows measured, accumulation, float32), each query keeps the {} entries of "
        "smallest upper key (its k-th the bound U) through a filtered warp select, and the entries whose lower key "
        "is within U are re-ranked by the rule in float64 (the CPU's keys bit for bit), ties by index; a query whose "
        "list had to drop a possible candidate, and rows out of the FP16 path's range, go to the float64 kernel, as "
        "the run's plan says{}",
        plan.is_auto() ? " (itself excluded by index)" : "", gram_knn_capacity(plan.k, partners, policy.gram_knn_capacity),
        tail);
  return fmt::format(
      "cuda kernel: float64 on the CUDA cores (the rule itself, no FMA; not the FP16 Gram tiles: {}), the join "
      "kernel's keys: a block of 256 threads owns 64 queries and sweeps every partner tile of 64{}, 4 x 4 keys a "
      "thread; each query keeps its {} best (key, index) sorted in device memory, buffers the candidates before its "
      "k-th (128 at a time) and merges them by a warp's bitonic sort; queries in slabs whose lists fit in device "
      "memory{}",
      path.why_not, plan.is_auto() ? " (itself excluded by index)" : "", plan.k, tail);
}

}  // namespace twobody::cuda
