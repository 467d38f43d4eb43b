// Statistics over vectors on the CPU: the brute-force traversal of cpu/tiled_traversal.hpp with
// the float64 rule's keys (cpu/vector_rows.hpp) handed to the point statistics' sinks
// (cpu/output_sinks.hpp), and the k nearest neighbours, whose anchors each belong to one thread.
#include "twobody/detail/cpu/run_vectors.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "twobody/detail/cpu/ego_join.hpp"
#include "twobody/detail/cpu/ego_knn.hpp"
#include "twobody/detail/cpu/gram_key_rows.hpp"
#include "twobody/detail/cpu/gram_knn.hpp"
#include "twobody/detail/cpu/block_progress.hpp"
#include "twobody/detail/cpu/nearest_heap.hpp"
#include "twobody/detail/cpu/output_sinks.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/engine/overloaded.hpp"

namespace twobody::cpu {

namespace {

// One thread's evaluator of anchor rows against a partner block (the traversal's rows(i, j0, j1,
// bp)). The traversal asks for a block's anchors one after the other: the keys of four anchors
// are computed together (PartnerBlock::keys<4>) and handed out as their rows come.
template <class Sink>
class VectorKeyRows {
 public:
  static constexpr int kGroup = 4;
  VectorKeyRows(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile, Sink& sink)
      : m_(plan.stat->metric), A_(A), B_(B), block_(A.dim(), tile), tile_(tile),
        anchors_(kGroup * static_cast<std::size_t>(A.dim())), keys_(kGroup * tile), sink_(sink) {}
  void operator()(std::size_t i, std::size_t j0, std::size_t j1, const BlockPair& bp) {
    block_.load(B_, bp.b0, bp.b1);
    if (!(bp.a0 == group_a0_ && bp.b0 == group_b0_ && i >= group_i0_ && i < group_i0_ + kGroup)) compute_group(i, bp);
    const std::size_t q = i - group_i0_;
    const double* keys = keys_.data() + q * tile_ + (j0 - group_j0_);
    const Metric m = m_;
    sink_.consume(i, j0, keys, j1 - j0, [m](double k) { return natural_of_vector_key(m, k); });
  }

 private:
  // Anchors [i, i + 4) of the block (fewer at its end; a missing one repeats the last) against
  // the partners every one of them needs: from the first anchor's start on, taken down to the
  // first partner of its panel of 8 (PartnerBlock::keys).
  void compute_group(std::size_t i, const BlockPair& bp) {
    const std::size_t dim = static_cast<std::size_t>(A_.dim());
    const double* rows[kGroup];
    for (int q = 0; q < kGroup; ++q) {
      const std::size_t at = std::min(i + static_cast<std::size_t>(q), bp.a1 - 1);
      A_.load(at, anchors_.data() + static_cast<std::size_t>(q) * dim);
      rows[q] = anchors_.data() + static_cast<std::size_t>(q) * dim;
    }
    group_j0_ = bp.triangle ? std::max(i + 1, bp.b0) : bp.b0;
    group_j0_ = bp.b0 + (group_j0_ - bp.b0) / 8 * 8;
    if (group_j0_ < bp.b1) block_.keys<kGroup>(m_, rows, group_j0_, bp.b1, keys_.data(), tile_);
    group_a0_ = bp.a0;
    group_b0_ = bp.b0;
    group_i0_ = i;
  }

  Metric m_;
  const RuleRows& A_;
  const RuleRows& B_;
  PartnerBlock block_;
  std::size_t tile_;
  std::vector<double> anchors_, keys_;
  std::size_t group_a0_ = static_cast<std::size_t>(-1), group_b0_ = static_cast<std::size_t>(-1), group_i0_ = 0,
              group_j0_ = 0;
  Sink& sink_;
};

// The binned reductions (and the join's outputs) by the brute force, or, given `ego`, over the EGO
// join's leaf pairs, whose positions are in EGO order: per-vector counts and pairs are mapped back
// to the callers' indices. `evaluated`: the pairs whose keys were computed.
// Without `ego`, `gram_centre` (gram_key_rows.hpp) has the brute force's rows take the Gram form.
Result run_binned(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile, const EgoJoin* ego,
                  const std::vector<double>* gram_centre, std::uint64_t& evaluated) {
  const Statistic& s = *plan.stat;
  TraversalShape shape;
  shape.is_auto = plan.is_auto();
  shape.threads = plan.threads;
  shape.tile = tile;
  shape.progress = &plan.progress;
  const std::size_t na = A.size(), nb = B.size();
  std::atomic<std::uint64_t> ego_evaluated{0}, settled{0};
  const GramExactness exactness =
      std::holds_alternative<reduce::PairList>(s.reduction) ? GramExactness::InRange : GramExactness::OnEdges;
  const auto run_with = [&](auto make_sink) {
    if (ego) {
      return traverse_blocks(
          ego->items.size(), [&](std::size_t k) { return ego->items[k]; }, shape, make_sink,
          [&](auto& sink) { return EgoLeafRows<std::decay_t<decltype(sink)>>(*ego, ego_evaluated, sink); });
    }
    if (gram_centre) {
      return traverse(na, nb, shape, make_sink, [&](auto& sink) {
        return GramKeyRows<std::decay_t<decltype(sink)>>(plan.edges, exactness, A, B, tile, *gram_centre, settled, sink);
      });
    }
    return traverse(na, nb, shape, make_sink, [&](auto& sink) {
      return VectorKeyRows<std::decay_t<decltype(sink)>>(plan, A, B, tile, sink);
    });
  };
  // EGO positions back to the callers' indices; a self-join's pairs keep i < j.
  const std::uint32_t* order_a = ego ? ego->a->order().data() : nullptr;
  const std::uint32_t* order_b = ego ? ego->partners().order().data() : nullptr;
  const auto to_callers = [&](std::span<PairRecord> pairs) {
    for (auto& p : pairs) {
      p.i = order_a[p.i];
      p.j = order_b[p.j];
      if (shape.is_auto && p.i > p.j) std::swap(p.i, p.j);
    }
  };
  Result r;
  r.output = s.output();
  const PairWeights none{};
  std::visit(
      Overloaded{
          [&](const reduce::Histogram&) {
            for (auto& k : run_with([&] { return HistogramSink(plan.edges, none); })) k.merge_into(r);
            if (r.counts.empty()) r.counts.assign(plan.edges.nbins, 0);
          },
          [&](const reduce::Count&) {
            for (auto& k : run_with([&] { return ReductionSink(plan.edges, none); })) k.merge_into(r);
            if (r.counts.empty()) r.counts.assign(1, 0);
          },
          [&](const reduce::PerPoint&) {
            // (Auto: both ends count in one array over the partners, which a band's anchors begin.)
            const auto sinks =
                run_with([&] { return PerPointSink(plan.edges, none, shape.is_auto ? nb : na, nb, shape.is_auto); });
            merge_per_point(sinks, false, order_a, r.per_point_a, r.exact.point_weighted_a, shape.threads);
            if (!shape.is_auto) merge_per_point(sinks, true, order_b, r.per_point_b, r.exact.point_weighted_b, shape.threads);
          },
          [&](const reduce::PairList&) {
            // With RunOptions::pair_sink the pairs stream out as they are found (in no set order).
            std::optional<PairStream> stream;
            if (plan.pair_sink) stream.emplace(plan.pair_sink, plan.max_pairs, ego ? PairStream::ToCallers(to_callers) : nullptr);
            auto sinks = run_with([&] { return PairListSink(plan.edges, plan.max_pairs, stream ? &*stream : nullptr); });
            gather_pairs(sinks, plan.max_pairs, r, stream ? &*stream : nullptr);
            if (ego) to_callers(r.pairs);
            std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
          },
          [&](const reduce::Matrix&) {
            r.rows = na;
            r.cols = nb;
            r.matrix.resize(na * nb);
            if (shape.is_auto) {
              // The diagonal by the rule too (for the cosine distance it may be an ulp from 0).
              std::vector<double> a(static_cast<std::size_t>(A.dim()));
              PartnerBlock self(A.dim(), 1);
              for (std::size_t i = 0; i < na; ++i) {
                self.load(A, i, i + 1);
                A.load(i, a.data());
                double key = 0;
                self.keys(s.metric, a.data(), i, i + 1, &key);
                r.matrix[i * nb + i] = natural_of_vector_key(s.metric, key);
              }
            }
            double* m = r.matrix.data();
            run_with([&] { return MatrixSink(m, nb, shape.is_auto); });
          },
          [](const auto&) { throw Error(ErrorKind::Internal, "a reduction the vector planner refuses reached the cpu"); }},
      s.reduction);
  // (Auto: the anchors are the first na partners, each against the partners after it: a band's.)
  evaluated = ego ? ego_evaluated.load()
              : shape.is_auto ? static_cast<std::uint64_t>(na) * (nb - 1) - pair_total(na, na, true)
                              : pair_total(na, nb, false);
  r.info.pairs_evaluated = evaluated;
  if (gram_centre) r.info.pairs_settled_fp64 = settled.load();
  return r;
}

// k nearest neighbours: every anchor block belongs to one thread, which streams every partner
// block past it, keeping for each anchor a max-heap of its k best (key, index) pairs.
Result run_nearest(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile) {
  const std::size_t na = A.size(), nb = B.size(), k = static_cast<std::size_t>(plan.k);
  const bool is_auto = plan.is_auto();
  const std::size_t self = plan.band.begin;  // anchor i is partner i + self (auto)
  const Metric m = plan.stat->metric;
  const std::size_t atile = query_tile(na, plan.threads, tile);
  const std::size_t blocks_a = (na + atile - 1) / atile, blocks_b = (nb + tile - 1) / tile;
  Result r = nearest_result(na, plan.k);
  BlockProgress progress(plan.progress, blocks_a);
#pragma omp parallel num_threads(plan.threads)
  {
    PartnerBlock block(A.dim(), tile);
    std::vector<double> anchors(tile * static_cast<std::size_t>(A.dim())), keys(4 * tile);
    std::vector<std::vector<NearEntry>> heaps(tile);
#pragma omp for schedule(dynamic, 1)
    for (std::size_t I = 0; I < blocks_a; ++I) {
      if (progress.stopped()) continue;
      const std::size_t a0 = I * atile, a1 = std::min(na, a0 + atile);
      for (std::size_t i = a0; i < a1; ++i) {
        A.load(i, anchors.data() + (i - a0) * static_cast<std::size_t>(A.dim()));
        heaps[i - a0].clear();
      }
      for (std::size_t J = 0; J < blocks_b; ++J) {
        const std::size_t b0 = J * tile, b1 = std::min(nb, b0 + tile);
        block.load(B, b0, b1);
        for (std::size_t g = a0; g < a1; g += 4) {
          // Four anchors' keys together (PartnerBlock::keys<4>); past the block's end the last repeats.
          const double* rows[4];
          for (std::size_t q = 0; q < 4; ++q)
            rows[q] = anchors.data() + (std::min(g + q, a1 - 1) - a0) * static_cast<std::size_t>(A.dim());
          block.keys<4>(m, rows, b0, b1, keys.data(), tile);
          for (std::size_t i = g; i < std::min(a1, g + 4); ++i) {
          auto& heap = heaps[i - a0];
          const double* ki = keys.data() + (i - g) * tile;
          keep_nearest_of(heap, k, ki, b1 - b0, [b0](std::size_t t) { return std::uint64_t{b0 + t}; },
                          is_auto ? i + self : std::numeric_limits<std::uint64_t>::max());
          }
        }
      }
      for (std::size_t i = a0; i < a1; ++i) put_nearest(heaps[i - a0], k, m, i, r.nearest);
      progress.block_done();
    }
  }
  progress.rethrow();
  r.info.pairs_evaluated = static_cast<std::uint64_t>(na) * (is_auto ? nb - 1 : nb);
  return r;
}

// A band (VectorPlan::band) over slices of the sets, which share their storage: its anchors, and
// its partners — an auto join's rows from the band's first on (the traversal's triangle, cut to
// the anchors' rows, is then the band's pairs j > i), else the whole partner set. The result is
// numbered as band_placement says.
Result run_band(const VectorPlan& plan) {
  const OutputKind out = plan.stat->output();
  if (out != OutputKind::Reduction && out != OutputKind::PerPoint && out != OutputKind::PairList &&
      out != OutputKind::Nearest)
    throw Error(ErrorKind::Internal, fmt::format("a band of a {} run", to_string(out)));
  const Metric m = plan.stat->metric;
  const VectorSet anchors = plan.a->slice(plan.band.begin, plan.band.size());
  const bool trapezoid = plan.is_auto() && out != OutputKind::Nearest;
  const VectorSet partners = trapezoid ? plan.a->slice(plan.band.begin, plan.a->size() - plan.band.begin) : *plan.b;
  const RuleRows A(anchors, m, plan.threads, plan.is_auto() ? "" : "first set: ", plan.band.begin);
  const RuleRows B(partners, m, plan.threads, plan.is_auto() ? "" : "second set: ", trapezoid ? plan.band.begin : 0);
  const std::size_t tile = vector_tile(plan.a->dim(), std::max(anchors.size(), partners.size()), plan.threads);
  std::uint64_t evaluated = 0;
  Result r = out == OutputKind::Nearest ? run_nearest(plan, A, B, tile)
                                         : run_binned(plan, A, B, tile, nullptr, nullptr, evaluated);
  r.info.threads = plan.threads;
  return r;
}

// A band of a hybrid run (VectorPlan::band) takes the brute force: the EGO join sorts and cuts
// the whole sets, not a band's rows against their partners.
constexpr const char* kBandPath = "brute force (a band of a hybrid run)";

// The outputs the EGO join or k-NN may serve: a matrix has no "cpu path" to choose.
bool has_path(const VectorPlan& plan) { return plan.stat->output() != OutputKind::Matrix; }

// The k-NN's traversal: the EGO trees, or the brute force and why.
constexpr const char* kEgoKnn = "EGO k-NN";
constexpr const char* kGramKnnPath =
    "brute force by the Gram form (q_i + q_j - 2 x_i.x_j by fused multiply-adds, each pair's key bounded; the rule's "
    "keys for the partners whose bounds reach a query's k-th)";
constexpr const char* kGramJoinPath =
    "brute force by the Gram form (q_i + q_j - 2 x_i.x_j by fused multiply-adds, each pair's key bounded; the rule's "
    "keys where a pair's bound meets an edge of the bins, or, for a pair list, the range)";
// A brute-force path ("brute force: why") said as the Gram form's, with the same why.
std::string gram_path(const char* gram, const std::string& path) {
  const std::string why = path.rfind("brute force: ", 0) == 0 ? path.substr(13) : path;
  return gram + (why.empty() ? std::string() : ": " + why);
}
std::string nearest_path(const VectorPlan& plan) {
  const std::string no = ego_knn_refusal(plan);
  return no.empty() ? kEgoKnn : "brute force: " + no;
}

}  // namespace

Result run_vectors(const VectorPlan& plan, std::string& path) {
  if (plan.banded()) {
    path = kBandPath;
    return run_band(plan);
  }
  if (plan.stat->output() == OutputKind::Nearest) {
    path = nearest_path(plan);
    if (path == kEgoKnn) {
      if (std::optional<Result> r = run_ego_nearest(plan, path)) {
        r->info.threads = plan.threads;
        return std::move(*r);
      }
    }
  }
  const RuleRows A(*plan.a, plan.stat->metric, plan.threads, plan.is_auto() ? "" : "first set: ");
  std::optional<RuleRows> second;
  if (!plan.is_auto()) second.emplace(*plan.b, plan.stat->metric, plan.threads, "second set: ");
  const RuleRows& B = second ? *second : A;
  const std::size_t tile = vector_tile(plan.a->dim(), std::max(plan.a->size(), plan.b->size()), plan.threads);
  if (plan.stat->output() == OutputKind::Nearest) {
    // The brute force: by the Gram form (its bound, the rule's keys near each k-th) where it
    // applies, else the rule's keys throughout.
    const std::string gram = gram_knn_refusal(plan);
    if (gram.empty()) path = gram_path(kGramKnnPath, path);
    Result r = gram.empty() ? run_gram_nearest(plan, A, B, tile) : run_nearest(plan, A, B, tile);
    r.info.threads = plan.threads;
    return r;
  }
  EgoChoice ego;
  if (has_path(plan)) ego = choose_ego(plan);
  path = ego.why;
  // The brute force: by the Gram form (its bound, the rule's keys where the result depends on
  // them) where it applies, else the rule's keys throughout.
  std::optional<std::vector<double>> centre;
  if (!ego.chosen && gram_join_refusal(plan).empty()) {
    centre = gram::centre_of(A, B, plan.is_auto(), plan.threads);
    path = gram_path(kGramJoinPath, path);
  }
  std::uint64_t evaluated = 0;
  Result r = run_binned(plan, A, B, tile, ego.chosen ? ego.join.get() : nullptr, centre ? &*centre : nullptr, evaluated);
  if (ego.chosen) {
    const std::uint64_t brute = pair_total(A.size(), B.size(), plan.is_auto());
    r.info.plan = fmt::format("EGO join: {} pairs evaluated ({:.3g}% of the brute force's {}; anchors beyond eps of a "
                              "partner leaf's box skipped)",
                              evaluated, 100.0 * static_cast<double>(evaluated) / static_cast<double>(std::max<std::uint64_t>(brute, 1)),
                              brute);
  }
  r.info.threads = plan.threads;
  return r;
}

std::string describe_vectors(const VectorPlan& plan, const std::string* ran) {
  const std::size_t tile = vector_tile(plan.a->dim(), std::max(plan.a->size(), plan.b->size()), plan.threads);
  std::string path;
  if (has_path(plan)) {
    const bool nearest = plan.stat->output() == OutputKind::Nearest;
    const std::string why = ran ? *ran : plan.banded() ? kBandPath : nearest ? nearest_path(plan) : choose_ego(plan).why;
    path = "cpu path: " + why + "\n";
    if (why == kEgoKnn) return path + "cpu kernel: " + describe_ego_knn(plan);
    if (why.rfind("EGO join", 0) == 0)
      return path + "cpu kernel: " + describe_ego(plan) +
             fmt::format(", {} OpenMP threads (dynamic schedule over the leaf pairs); per-thread private outputs merged once",
                         plan.threads);
  }
  const bool nearest = plan.stat->output() == OutputKind::Nearest;
  if ((nearest ? gram_knn_refusal(plan) : gram_join_refusal(plan)).empty())  // (each refuses bands; the join, matrices)
    return path + fmt::format(
        "cpu kernel: brute force by the Gram form, {} OpenMP threads (dynamic schedule); partner blocks of {} vectors "
        "centred and held in panels of 8, the dots of 8 anchors x 8 partners in registers by fused multiply-adds, each "
        "pair's rule key bounded around q_i + q_j - 2 x_i.x_j and computed only where {}",
        plan.threads, tile,
        nearest ? "its bound reaches a query's k-th; a heap of the k best per anchor"
                : "the result depends on it; per-thread private outputs merged once");
  return path + fmt::format(
      "cpu kernel: brute force in float64 (the rule itself), {} OpenMP threads (dynamic schedule); partner blocks of {} "
      "vectors held in panels of 8, the keys of 4 anchors x 8 partners in registers{}",
      plan.threads, tile,
      plan.stat->output() == OutputKind::Nearest
          ? "; an anchor block per thread, every partner block streamed past it, a heap of the k best (key, index) per anchor"
          : "; per-thread private outputs merged once");
}

}  // namespace twobody::cpu
