#pragma once
// Histograms with jackknife regions (Statistic::regions > 0) on the CPU: the same traversals
// (brute-force tiles or the cell grid) and the same float32 fast path as run_plan, with the
// RegionHistogramSink (output_sinks.hpp) as the output. The labels follow the points into the
// grid's cell order, so the sink sees each pair's labels under the indices it is handed.
//
// This mirrors run_plan's traversal choice rather than being one more case of its switch only
// because run_plan.hpp was being reworked by another change at the same time; folding it into
// run_plan (one `case` with this sink) is the intended home.
#include <cstdint>
#include <memory>
#include <vector>

#include "twobody/cpu/run_plan.hpp"

namespace twobody::cpu {

template <int D, class PairFunction>
Result run_region_histogram(const PairFunction& f, const Plan& plan, const GridChoice* grid = nullptr) {
  const Statistic& s = *plan.stat;
  const bool use_grid = grid && grid->chosen;
  const PointSet& pa = use_grid ? grid->a->sorted : *plan.a;
  const PointSet& pb = use_grid ? (grid->b ? grid->b->sorted : grid->a->sorted) : *plan.b;
  const SoaView<D> A(pa), B(pb);
  TraversalShape shape;
  shape.is_auto = plan.is_auto();
  shape.threads = std::max(1, plan.threads);
  shape.tile = choose_tile(std::max(A.n, B.n), shape.threads);
  shape.progress = &plan.progress;
  const PairWeights w = s.weighted ? PairWeights{pa.weights().data(), pb.weights().data()} : PairWeights{};

  // Labels in traversal order: the grid sorts points by cell (GridIndex::order[k] is the caller's
  // index of sorted point k) and carries weights but not labels.
  std::vector<std::int32_t> la, lb;
  RegionLabels labels{plan.a->regions().data(), plan.b->regions().data(), s.regions};
  if (use_grid) {
    const auto permuted = [](const PointSet& p, const std::vector<std::uint32_t>& order) {
      std::vector<std::int32_t> l(order.size());
      const auto src = p.regions();
      for (std::size_t k = 0; k < order.size(); ++k) l[k] = src[order[k]];
      return l;
    };
    la = permuted(*plan.a, grid->a->order);
    labels.a = labels.b = la.data();
    if (grid->b) {
      lb = permuted(*plan.b, grid->b->order);
      labels.b = lb.data();
    }
  }

  const std::size_t max_row = use_grid ? std::max<std::size_t>(grid->plan.longest_row, 1) : shape.tile;
  std::unique_ptr<FastRowsSetup<PairFunction>> fast;
  if constexpr (has_fast_path<PairFunction>) {
    if (fast_rows_fit(plan.edges)) {
      fast = std::make_unique<FastRowsSetup<PairFunction>>(f, plan.edges, pa, pb, &pa == &pb, shape.threads);
      if (!fast->usable()) fast.reset();
    }
  }
  using Sink = RegionHistogramSink;
  const auto make_sink = [&] { return Sink(plan.edges, w, labels, s.mean_separation); };
  const auto go = [&](auto make_rows) {
    if (!use_grid) return traverse(A.n, B.n, shape, make_sink, make_rows);
    const auto& items = grid->plan.items;
    if (grid->plan.windowed) {
      const GridWindows<D> windows(grid->geometry, grid->plan, grid->b ? *grid->b : *grid->a, A, s.binning.hi());
      return traverse_blocks(items.size(), windows, shape, make_sink, make_rows, windows);
    }
    return traverse_blocks(items.size(), [&](std::size_t k) { return items[k]; }, shape, make_sink, make_rows);
  };
  const auto sinks = [&] {
    if constexpr (has_fast_path<PairFunction>) {
      if (fast) return go([&](Sink& sink) { return FastRows<PairFunction, Sink>(*fast, A, B, max_row, sink); });
    }
    return go([&](Sink& sink) { return KeyRows<D, PairFunction, Sink>(f, A, B, max_row, sink); });
  }();

  Result r;
  r.output = s.output;
  for (const auto& k : sinks) k.merge_into(r);
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = use_grid ? grid->plan.evaluations : pair_total(A.n, B.n, shape.is_auto);
  if (fast) r.info.pairs_settled_fp64 = fast->settled_total();
  return r;
}

}  // namespace twobody::cpu
