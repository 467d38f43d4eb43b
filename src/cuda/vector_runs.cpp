// The CUDA backend's statistics over vectors: the rows prepared on the host as the rule reads them
// (cpu/vector_rows.hpp: promoted, normalised for the cosine distance), the kernel chosen — the FP16
// Gram tiles (gram_tiles.hpp) for Euclidean counts and pair lists, else the float64 join kernel
// (vector_join.hpp) — and the result in the engine's layout. Pair lists leave either kernel batch
// by batch (PairTaker): to RunOptions::pair_sink, each batch sorted by (i, j), or into
// Result::pairs, sorted at the end. A band of a hybrid run (VectorPlan::band) runs the same
// kernels on the band's rows: a cross band, its rows against the second set; an auto band, its
// own triangle and its rows against the rows after it (two runs), numbered as band_placement says.
// The rows are prepared once per backend object (VectorRows), so a hybrid worker's bands share them.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/gram_tiles.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_join.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/pair_limit.hpp"

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

// Rows i0.. of the prepared rows of a set (row-major, dim wide), n of them: the operand of a run.
struct RowSpan {
  const double* rows = nullptr;
  std::size_t n = 0;
};
RowSpan rows_from(const std::vector<double>& rows, int dim, std::size_t first, std::size_t n) {
  return {rows.data() + first * static_cast<std::size_t>(dim), n};
}

// Whether a join takes the FP16 Gram tiles, and if not why (for the plan). The rows' range is
// checked as they are prepared (gram_rows.hpp), so a run may still fall back.
struct VectorPath {
  bool gram = false;
  std::string why_not;
};

VectorPath choose_vector_path(const VectorPlan& plan, const TuningPolicy& policy) {
  const Statistic& s = *plan.stat;
  using P = TuningPolicy::VectorPrecision;
  if (policy.vector_precision == P::Fp64) return {false, "TWOBODY_VECTOR_PRECISION=fp64"};
  if (s.metric == Metric::Cosine) return {false, "cosine distances have no Gram tiles yet"};
  if (s.output() != OutputKind::Reduction && s.output() != OutputKind::PerPoint && s.output() != OutputKind::PairList)
    return {false, "not a count or a pair list"};
  if (std::max(plan.a->size(), plan.b->size()) >= (std::size_t(1) << 31)) return {false, "2^31 rows or more"};
  if (policy.vector_precision == P::Auto && plan.a->dim() < policy.gram_min_dim)
    return {false, fmt::format("d = {} < {}: the float64 kernel is the cheaper", plan.a->dim(), policy.gram_min_dim)};
  return {true, {}};
}

// The batches of a pair list as a kernel drains them: max_pairs checked on the running total, then
// to the plan's sink sorted by (i, j), or kept for Result::pairs.
struct PairTaker {
  const VectorPlan& plan;
  std::vector<PairRecord>& kept;
  std::uint64_t j_shift = 0;  // partners numbered from this (an auto band's rows after the band)
  std::uint64_t total = 0;
  std::uint64_t batches = 0;
  void operator()(std::vector<PairRecord>& batch) {
    if (j_shift)
      for (PairRecord& p : batch) p.j += j_shift;
    total += batch.size();
    if (total > plan.max_pairs)
      throw_pair_limit(plan.max_pairs, "eps");
    ++batches;
    if (plan.pair_sink) {
      std::sort(batch.begin(), batch.end(), pair_order);
      plan.pair_sink(batch);
    } else {
      kept.insert(kept.end(), batch.begin(), batch.end());
    }
  }
  std::string note() const {
    return fmt::format("; {} pairs in {} batches{}", total, batches, plan.pair_sink ? " to the pair sink" : "");
  }
};

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

namespace {

// One run of the join kernels: rows x against rows y (is_auto: y is x, the pairs j > i), the
// result numbered from the spans' first rows, partners shifted by j_shift.
Result join_rows(const VectorPlan& plan, RowSpan x, RowSpan y, bool is_auto, std::uint64_t j_shift) {
  const Statistic& s = *plan.stat;
  VectorJoinInput in;
  in.a = x.rows;
  in.b = y.rows;
  in.na = x.n;
  in.nb = y.n;
  in.dim = plan.a->dim();
  in.is_auto = is_auto;
  in.cosine = s.metric == Metric::Cosine;
  in.lo = plan.edges.lo();
  in.hi = plan.edges.hi();
  in.max_pairs = plan.max_pairs;
  in.progress = plan.progress;
  const OutputKind out = s.output();
  in.output = out == OutputKind::PerPoint ? VectorJoinOutput::PerPoint
              : out == OutputKind::PairList ? VectorJoinOutput::Pairs
                                            : VectorJoinOutput::Total;
  Result r;
  r.output = out;
  r.info.threads = plan.threads;
  PairTaker taker{plan, r.pairs, j_shift};
  if (out == OutputKind::PairList) in.take = [&taker](std::vector<PairRecord>& batch) { taker(batch); };
  const TuningPolicy policy = TuningPolicy::current();
  const VectorPath path = choose_vector_path(plan, policy);
  std::string fallback = path.why_not;
  if (path.gram) {
    const std::vector<double> centre = gram_centre(in.a, in.na, is_auto ? nullptr : in.b,
                                                   is_auto ? 0 : in.nb, in.dim, plan.threads);
    GramRows ga = make_gram_rows(in.a, in.na, in.dim, centre, plan.threads);
    GramRows gb;
    if (!is_auto && ga.refusal.empty()) gb = make_gram_rows(in.b, in.nb, in.dim, centre, plan.threads);
    fallback = !ga.refusal.empty() ? (is_auto ? "" : "first set: ") + ga.refusal
               : !gb.refusal.empty() ? "second set: " + gb.refusal
                                     : "";
    if (fallback.empty()) {
      sort_by_norm(ga, plan.threads);
      if (!is_auto) sort_by_norm(gb, plan.threads);
      if (out == OutputKind::PairList) {
        const GramPairsResult g =
            run_gram_pairs(in, ga, is_auto ? nullptr : &gb, policy.gram_pair_buffer, in.take);
        if (!plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
        r.info.pairs_evaluated = pair_total(in.na, in.nb, in.is_auto);
        r.info.pairs_settled_fp64 = g.settled;
        r.info.plan = fmt::format(
            "FP16 Gram tiles on the tensor cores, pair list: {} undecided pairs settled in float64, every listed pair's "
            "distance by the rule; a buffer of {} pairs, {} tile launches ({} resuming tiles stopped by a full buffer){}; "
            "kernels {:.4f} s",
            g.settled, g.buffer_pairs, g.launches, g.resumed, taker.note(), g.kernel_seconds);
        return r;
      }
      GramJoinResult g = run_gram_join(in, ga, is_auto ? nullptr : &gb, policy.gram_queue_pairs);
      if (out == OutputKind::Reduction) r.counts = {g.total};
      if (out == OutputKind::PerPoint) {
        r.per_point_a.counts = std::move(g.count_a);
        r.per_point_b.counts = std::move(g.count_b);
      }
      r.info.pairs_evaluated = pair_total(in.na, in.nb, in.is_auto);
      r.info.plan = fmt::format(
          "FP16 Gram tiles on the tensor cores: {} undecided pairs settled in float64{}; kernels {:.4f} s",
          g.settled,
          g.settled_inline ? fmt::format(" ({} inside the tiles: the settle queue of {} pairs was full)", g.settled_inline,
                                         g.queue_capacity)
                           : "",
          g.kernel_seconds);
      return r;
    }
  }
  VectorJoinResult j = run_vector_join(in);
  if (out == OutputKind::Reduction) r.counts = {j.total};
  if (out == OutputKind::PerPoint) {
    r.per_point_a.counts = std::move(j.count_a);
    r.per_point_b.counts = std::move(j.count_b);
  }
  if (out == OutputKind::PairList && !plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  // Pairs: each slab with pairs is evaluated twice (counted, then written).
  r.info.pairs_evaluated = pair_total(in.na, in.nb, in.is_auto) * (out == OutputKind::PairList && j.total > 0 ? 2 : 1);
  r.info.plan = fmt::format("float64 join kernel{}: {:.4f} s{}", fallback.empty() ? "" : " (" + fallback + ")",
                            j.kernel_seconds, out == OutputKind::PairList ? taker.note() : "");
  return r;
}

}  // namespace

void VectorRows::prepare(const VectorPlan& plan) {
  const Metric m = plan.stat->metric;
  const bool same_a = a_ == plan.a && metric_ == m && n_a_ == plan.a->size() && !a_rows_.empty();
  if (!same_a) {
    a_rows_ = rule_rows(*plan.a, m, plan.threads, plan.is_auto() ? "" : "first set: ");
    a_ = plan.a;
    n_a_ = plan.a->size();
  }
  if (!plan.is_auto() && !(same_a && b_ == plan.b && n_b_ == plan.b->size() && !b_rows_.empty())) {
    b_rows_ = rule_rows(*plan.b, m, plan.threads, "second set: ");
    b_ = plan.b;
    n_b_ = plan.b->size();
  }
  metric_ = m;
}

Result run_vectors_on_device(const VectorPlan& plan, VectorRows& rows) {
  rows.prepare(plan);
  const std::vector<double>& a = rows.a();
  const std::vector<double>& b = plan.is_auto() ? a : rows.b();
  if (plan.stat->output() == OutputKind::Nearest) return run_nearest_on_device(plan, a, b);
  const int dim = plan.a->dim();
  const std::size_t n = plan.a->size(), r0 = plan.band.begin, r1 = plan.band.end, m = plan.band.size();
  if (!plan.is_auto()) return join_rows(plan, rows_from(a, dim, r0, m), rows_from(b, dim, 0, plan.b->size()), false, 0);
  if (!plan.banded()) return join_rows(plan, rows_from(a, dim, 0, n), rows_from(a, dim, 0, n), true, 0);
  // An auto band: its triangle, then its rows against the rows after it, numbered from r0 (the
  // partners of the second from r1 - r0): band_placement's numbering.
  Result r = join_rows(plan, rows_from(a, dim, r0, m), rows_from(a, dim, r0, m), true, 0);
  if (r1 == n) return r;
  const Result x = join_rows(plan, rows_from(a, dim, r0, m), rows_from(a, dim, r1, n - r1), false, m);
  if (!x.counts.empty()) r.counts[0] += x.counts[0];
  if (plan.stat->output() == OutputKind::PerPoint) {
    std::vector<std::uint64_t>& c = r.per_point_a.counts;  // the triangle's, m entries
    c.resize(n - r0, 0);
    for (std::size_t i = 0; i < m; ++i) c[i] += x.per_point_a.counts[i];
    for (std::size_t j = 0; j < n - r1; ++j) c[m + j] += x.per_point_b.counts[j];
  }
  r.pairs.insert(r.pairs.end(), x.pairs.begin(), x.pairs.end());
  std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  r.info.pairs_evaluated += x.info.pairs_evaluated;
  r.info.pairs_settled_fp64 += x.info.pairs_settled_fp64;
  r.info.plan = fmt::format("band rows {}..{}: its triangle: {}; against the rows after it: {}", r0, r1, r.info.plan, x.info.plan);
  return r;
}

std::string describe_vectors_on_device(const VectorPlan& plan) {
  if (plan.stat->output() == OutputKind::Nearest) return describe_nearest_on_device(plan);
  const TuningPolicy policy = TuningPolicy::current();
  const VectorPath path = choose_vector_path(plan, policy);
  const std::string overrides = policy.overrides();
  const std::string tail = overrides.empty() ? "" : "; " + overrides;
  const bool list = plan.stat->output() == OutputKind::PairList;
  const std::string to = plan.pair_sink ? "to the pair sink, each batch sorted by (i, j)" : "into the result, sorted at the end";
  if (path.gram)
    return "cuda kernel: FP16 Gram tiles on the tensor cores (mma.sync m16n8k16, float32 accumulation), blocks of 128 x "
           "128 pairs" + std::string(plan.is_auto() ? " (the triangle's tiles only)" : "") +
           ", rows centred and scaled by powers of two; each pair's float32 distance within a proven bound of the rule's "
           "key, the pairs within the bound of an edge settled in float64 (the rule itself); rows out of the FP16 "
           "path's range fall back to the float64 kernel, as the run's plan says" +
           (list ? fmt::format("; pairs (certain and undecided) into a device buffer of {} pairs, each slab (or full "
                               "buffer) settled and compacted in float64, the distances the rule's, drained {}",
                               policy.gram_pair_buffer, to)
                 : std::string()) +
           tail;
  return fmt::format(
      "cuda kernel: float64 on the CUDA cores (the rule itself, no FMA; not the FP16 Gram tiles: {}): blocks of 64 x 64 "
      "pairs{}, 256 threads with 4 x 4 keys each, rows staged 16 coordinates at a time in order{}{}",
      path.why_not, plan.is_auto() ? " (the triangle's tiles only)" : "",
      list ? "; pairs per slab counted, then written into a buffer of the slab's size and drained " + to : "", tail);
}

}  // namespace twobody::cuda
