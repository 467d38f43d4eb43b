// The CUDA backend's k nearest neighbours in the engine's terms: which k it takes, the path — the
// FP16 Gram tiles with their bound (gram_knn.hpp) for Euclidean and cosine k-NN from
// policy.gram_min_dim coordinates, their fallback queries and every other k-NN on the float64
// kernel (vector_knn.cu) — and the CPU's layout of the lists (Result::nearest), the values
// computed from the keys by the CPU's own function. The Gram path's rows go up as stored and are
// prepared on the device (gram_rows_device.hpp, gram_knn_rows_device.hpp); the float64 kernel's
// on the host (cpu/vector_rows.hpp).
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/gram_knn.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
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
  if (policy.vector_precision == P::Fp64)
    return {false, plan.precision == "fp64" ? "precision fp64 requested" : "TWOBODY_VECTOR_PRECISION=fp64"};
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
// kernel against every partner, their lists written into `g`'s: the queries' rule rows copied back
// (one copy a row when they are few, else the whole set once: a copy costs ~10 µs, the set's
// download ~0.1 ns a byte), the partners read where the device already holds them.
void run_fallback(const VectorPlan& plan, const DeviceGramSets& rows, GramKnnResult& g) {
  const std::size_t d = static_cast<std::size_t>(plan.a->dim()), k = static_cast<std::size_t>(plan.k);
  const std::size_t n = g.fallback.size();
  std::vector<double> queries(n * d);
  if (n * 12500 > plan.a->size() * d) {
    const std::vector<double> all = rows.a.rule.download();
    for (std::size_t t = 0; t < n; ++t)
      std::copy_n(all.data() + static_cast<std::size_t>(g.fallback[t]) * d, d, queries.data() + t * d);
  } else {
    for (std::size_t t = 0; t < n; ++t)
      TWOBODY_CUDA_CHECK(cudaMemcpy(queries.data() + t * d, rows.a.rule.get() + static_cast<std::size_t>(g.fallback[t]) * d,
                                    d * sizeof(double), cudaMemcpyDeviceToHost));
  }
  VectorKnnInput in;
  in.a = queries.data();
  in.na = n;
  in.device_b = plan.is_auto() ? rows.a.rule.get() : rows.b.rule.get();
  in.nb = plan.b->size();
  in.dim = plan.a->dim();
  in.is_auto = plan.is_auto();
  if (plan.is_auto()) in.own_index = g.fallback.data();
  in.cosine = plan.stat->metric == Metric::Cosine;
  in.k = plan.k;
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
std::string run_on_gram_tiles(const VectorPlan& plan, const TuningPolicy& policy, Result& out) {
  const bool self = plan.is_auto(), cosine = plan.stat->metric == Metric::Cosine;
  const std::size_t na = plan.a->size(), nb = plan.b->size();
  const auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  const auto t0 = std::chrono::steady_clock::now();
  GramPreparation how;
  how.cosine = cosine;
  const DeviceGramSets rows = prepare_gram_rows_on_device(*plan.a, self ? nullptr : plan.b, how);
  if (!rows.refusal.empty()) return rows.refusal;
  const DeviceGramKnnRows ka = make_gram_knn_rows_on_device(rows.a, rows.centre);
  const DeviceGramKnnRows kb = self ? DeviceGramKnnRows() : make_gram_knn_rows_on_device(rows.b, rows.centre);
  TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());  // (the preparation's time, apart from the tiles')
  GramKnnInput in;
  in.na = na;
  in.nb = nb;
  in.dim = plan.a->dim();
  in.is_auto = self;
  in.cosine = cosine;
  in.k = plan.k;
  in.capacity = gram_knn_capacity(plan.k, self ? nb - 1 : nb, policy.gram_knn_capacity);
  in.slab_queries = policy.knn_slab_queries;
  if (plan.progress) in.progress = [&plan](double f) { plan.progress(0.9 * f); };
  const auto t1 = std::chrono::steady_clock::now();
  GramKnnResult g = run_gram_knn(in, rows.a, ka, self ? nullptr : &rows.b, self ? nullptr : &kb);
  const auto t2 = std::chrono::steady_clock::now();
  if (!g.fallback.empty()) run_fallback(plan, rows, g);
  const auto t3 = std::chrono::steady_clock::now();
  out = nearest_result(plan, g.index, std::move(g.key));
  out.info.pairs_settled_fp64 = g.candidates;
  out.info.plan = fmt::format(
      "FP16 Gram tiles k-NN on the tensor cores{}: lists of {} entries, {} candidates re-ranked in float64 ({:.2f} a "
      "query), {} of {} queries fell back to the float64 kernel (their lists full within the bound){}; {} partner "
      "tiles swept, {} skipped by the norm gap; {} launches of {} queries; rows prepared on the device {:.4f} s "
      "(their upload {:.4f} s), Gram tiles {:.3f} s (kernels {:.4f} s), fallback {:.3f} s",
      cosine ? " (cosine: unit rows, keys 2(1 - a.b))" : "", g.capacity, g.candidates,
      static_cast<double>(g.candidates) / static_cast<double>(std::max<std::size_t>(na - g.fallback.size(), 1)),
      g.fallback.size(), na, g.fallback.empty() ? "" : " (run there against every partner)", g.tiles, g.pruned,
      g.launches, g.slab_queries, seconds(t0, t1), rows.upload_seconds, seconds(t1, t2), g.kernel_seconds,
      seconds(t2, t3));
  return {};
}

}  // namespace

std::string refuses_nearest_on_device(const Statistic& s) {
  const int k = std::get<reduce::Nearest>(s.reduction).k;
  if (k > kMaxDeviceNearest)
    return fmt::format("has no k-nearest-neighbour kernel for k = {} (above {}) yet", k, kMaxDeviceNearest);
  return {};
}

Result run_nearest_on_device(const VectorPlan& plan, const TuningPolicy& policy) {
  const NearestPath path = choose_nearest_path(plan, policy);
  std::string why_not = path.why_not;
  if (path.gram) {
    Result r;
    why_not = run_on_gram_tiles(plan, policy, r);
    if (why_not.empty()) return r;
  }
  const Metric m = plan.stat->metric;
  const std::vector<double> a = cpu::rule_rows_f64(*plan.a, m, plan.threads, plan.is_auto() ? "" : "first set: ");
  const std::vector<double> b =
      plan.is_auto() ? std::vector<double>{} : cpu::rule_rows_f64(*plan.b, m, plan.threads, "second set: ");
  VectorKnnInput in = float64_input(plan, a, b);
  in.progress = plan.progress;
  VectorKnnResult knn = run_vector_knn(in);
  Result r = nearest_result(plan, knn.index, std::move(knn.key));
  r.info.plan = fmt::format("float64 knn kernel ({}): {:.4f} s ({} launches, slabs of {} queries)", why_not,
                            knn.kernel_seconds, knn.launches, knn.slab_queries);
  return r;
}

std::string describe_nearest_on_device(const VectorPlan& plan, const TuningPolicy& policy) {
  const NearestPath path = choose_nearest_path(plan, policy);
  const std::string overrides = policy.overrides();
  const std::string tail = overrides.empty() ? "" : "; " + overrides;
  const std::size_t partners = plan.is_auto() ? plan.b->size() - 1 : plan.b->size();
  const bool cosine = plan.stat->metric == Metric::Cosine;
  if (path.gram)
    return fmt::format(
        "cuda kernel: FP16 Gram tiles on the tensor cores (mma.sync m16n8k16, float32 accumulation), rows uploaded "
        "as stored and, on the device, {}, scaled by powers of two, rounded to FP16 and sorted by norm, their "
        "rounding measured there; a block of 256 threads owns 128 queries and sweeps the partner tiles of 128 {}{}; "
        "each pair's float32 distance gives its key an interval (the bound in distance space: FP16 rounding of both "
        "rows measured, accumulation, float32{}), each query keeps the {} entries of "
        "smallest upper key (its k-th the bound U) through a filtered warp select, and the entries whose lower key "
        "is within U are re-ranked by the rule in float64 (the CPU's keys bit for bit), ties by index; a query whose "
        "list had to drop a possible candidate, and rows out of the FP16 path's range, go to the float64 kernel, as "
        "the run's plan says{}",
        cosine ? "normalised in float64 (the rule's rows, not centred)" : "centred",
        cosine ? "one after another (unit rows: no norm gap to prune by)"
               : "outward from the nearest norms, a direction ending where the norm gap puts every pair beyond every "
                 "query's k-th bound",
        plan.is_auto() ? " (itself excluded by index)" : "",
        cosine ? "; for the cosine distance 2(1 - a.b) against the squared distance of the unit rows, their norms' "
                 "rounding bounded"
               : "",
        gram_knn_capacity(plan.k, partners, policy.gram_knn_capacity), tail);
  return fmt::format(
      "cuda kernel: float64 on the CUDA cores (the rule itself, no FMA; not the FP16 Gram tiles: {}), the join "
      "kernel's keys: a block of 256 threads owns 64 queries and sweeps every partner tile of 64{}, 4 x 4 keys a "
      "thread; each query keeps its {} best (key, index) sorted in device memory, buffers the candidates before its "
      "k-th (128 at a time) and merges them by a warp's bitonic sort; queries in slabs whose lists fit in device "
      "memory{}",
      path.why_not, plan.is_auto() ? " (itself excluded by index)" : "", plan.k, tail);
}

}  // namespace twobody::cuda
