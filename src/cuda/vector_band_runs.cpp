// A band of a hybrid run (VectorPlan::band) on the GPU, as ordinary runs of the vector kernels
// (vector_runs.cpp) over slices of the sets, which share their storage: a cross band is its rows
// against the second set; an auto band its own triangle, then its rows against the rows after it;
// a k-NN band its queries against every partner (a self-k-NN's: the k + 1 nearest, the query's
// own row then dropped, exact since the lists are ordered by (key, index)). The piece is numbered
// as band_placement (engine/vector_bands.hpp) says. Each band uploads and prepares its rows and
// their partners again: simple, and a GPU band holds ~0.1 s of work or more (hybrid_policy.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "twobody/detail/cuda/vector_join.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cuda {

namespace {

// rows x against rows y (auto when y is x) under `s`, the partners' indices shifted by j_shift.
Result run_slices(const VectorPlan& plan, const Statistic& s, const VectorSet& x, const VectorSet& y, std::uint64_t j_shift) {
  VectorPlan p = plan;
  p.stat = &s;
  p.a = &x;
  p.b = &y;
  p.band = {0, x.size()};
  if (plan.pair_sink && j_shift)
    p.pair_sink = [&plan, j_shift](std::span<const PairRecord> batch) {
      std::vector<PairRecord> shifted(batch.begin(), batch.end());
      for (PairRecord& q : shifted) q.j += j_shift;
      plan.pair_sink(shifted);
    };
  Result r = run_vectors_on_device(p);
  for (PairRecord& q : r.pairs) q.j += j_shift;
  return r;
}

Result join_band(const VectorPlan& plan) {
  const std::size_t n = plan.a->size(), r0 = plan.band.begin, r1 = plan.band.end, m = plan.band.size();
  const VectorSet rows = plan.a->slice(r0, m);
  if (!plan.is_auto()) return run_slices(plan, *plan.stat, rows, *plan.b, 0);
  Result r = run_slices(plan, *plan.stat, rows, rows, 0);
  if (r1 == n) return r;
  Statistic cross = *plan.stat;
  cross.traversal = Traversal::Cross;
  const VectorSet after = plan.a->slice(r1, n - r1);
  const Result x = run_slices(plan, cross, rows, after, m);
  if (!x.counts.empty()) r.counts[0] += x.counts[0];
  if (plan.stat->output() == OutputKind::PerPoint) {
    std::vector<std::uint64_t>& c = r.per_point_a.counts;  // the triangle's, m entries; then the rows after
    c.resize(n - r0, 0);
    for (std::size_t i = 0; i < m; ++i) c[i] += x.per_point_a.counts[i];
    for (std::size_t j = 0; j < n - r1; ++j) c[m + j] += x.per_point_b.counts[j];
  }
  r.pairs.insert(r.pairs.end(), x.pairs.begin(), x.pairs.end());
  std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  r.info.pairs_evaluated += x.info.pairs_evaluated;
  r.info.pairs_settled_fp64 += x.info.pairs_settled_fp64;
  r.info.plan = fmt::format("band rows {}..{}: its triangle: {}; against the rows after it: {}", r0, r1, r.info.plan,
                            x.info.plan);
  return r;
}

Result nearest_band(const VectorPlan& plan) {
  const std::size_t r0 = plan.band.begin, m = plan.band.size();
  const VectorSet queries = plan.a->slice(r0, m);
  Statistic cross = *plan.stat;
  cross.traversal = Traversal::Cross;
  if (!plan.is_auto()) return run_slices(plan, cross, queries, *plan.b, 0);
  // The queries against the whole set, one more neighbour each: the query's own row is among its
  // k + 1 nearest (then dropped) or beyond them (then the (k + 1)-th is).
  const std::size_t k = static_cast<std::size_t>(plan.k), k1 = k + 1;
  cross.reduction = reduce::Nearest{plan.k + 1};
  VectorPlan p = plan;
  p.stat = &cross;
  p.a = &queries;
  p.b = plan.a;
  p.k = plan.k + 1;
  p.band = {0, m};
  Result r = run_vectors_on_device(p);
  NearestLists& l = r.nearest;
  for (std::size_t q = 0; q < m; ++q) {
    std::size_t kept = 0;
    for (std::size_t t = 0; t < k1 && kept < k; ++t) {
      if (l.index[q * k1 + t] == r0 + q) continue;
      l.index[q * k + kept] = l.index[q * k1 + t];
      l.key[q * k + kept] = l.key[q * k1 + t];
      l.value[q * k + kept] = l.value[q * k1 + t];
      ++kept;
    }
  }
  l.k = plan.k;
  l.index.resize(m * k);
  l.key.resize(m * k);
  l.value.resize(m * k);
  r.info.pairs_evaluated = static_cast<std::uint64_t>(m) * (plan.a->size() - 1);
  r.info.plan = fmt::format("band rows {}..{}, the k + 1 = {} nearest of every row, its own dropped: {}", r0,
                            plan.band.end, k1, r.info.plan);
  return r;
}

}  // namespace

std::string refuses_bands_on_device(const Statistic& s) {
  if (s.output() == OutputKind::Nearest && s.traversal == Traversal::Auto &&
      std::get<reduce::Nearest>(s.reduction).k >= kMaxDeviceNearest)
    return fmt::format("takes the bands of a self-k-NN for k up to {} (each band's k + 1 nearest, its own row dropped)",
                       kMaxDeviceNearest - 1);
  return {};
}

Result run_band_on_device(const VectorPlan& plan) {
  return plan.stat->output() == OutputKind::Nearest ? nearest_band(plan) : join_band(plan);
}

}  // namespace twobody::cuda
