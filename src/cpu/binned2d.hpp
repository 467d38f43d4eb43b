#pragma once
// 2-D binned statistics (Statistic::binning2d) on the CPU: the engine's own traversals (brute-
// force tiles, or the cell grid built for Binning2D::cutoff() with its per-anchor windows) and
// its own sinks (HistogramSink, RegionHistogramSink over the flat bins); the only thing per
// statistic is the binned pair function (RpPiBins, SMuBins), which gives each pair its flat bin
// in float64. BinRows is the row evaluator: a whole partner row of bins into a buffer, then the
// pairs inside handed to the sink's accept(k, i, j).
//
// The grid is the 1-D one asked for the reach cutoff(): its cells and windows only decide which
// pairs are evaluated (every pair closer than the cutoff is), never their bin.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "twobody/detail/engine/binned_pair_functions.hpp"
#include "twobody/error.hpp"
#include "twobody/detail/cpu/run_plan.hpp"

namespace twobody::cpu {

// Means: each pair's separation along the outer axis (r_p or s) goes to the sink too, as the
// "natural" value its accept() sums (Statistic::mean_separation: Corrfunc's rpavg and savg).
template <class BinFunction, class Sink, bool Means = false>
class BinRows {
 public:
  BinRows(const BinFunction& f, const SoaView<3>& A, const SoaView<3>& B, std::size_t max_row, Sink& sink)
      : f_(f), A_(A), B_(B), bins_(std::max<std::size_t>(max_row, 1)), seps_(Means ? bins_.size() : 0), sink_(sink) {}
  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    const double a[3] = {A_.x[0][i], A_.x[1][i], A_.x[2][i]};
    const std::size_t n = j1 - j0;
    int* bins = bins_.data();
    for (std::size_t t = 0; t < n; ++t) {
      const double b[3] = {B_.x[0][j0 + t], B_.x[1][j0 + t], B_.x[2][j0 + t]};
      if constexpr (Means)
        bins[t] = f_.bin(a, b, seps_[t]);
      else
        bins[t] = f_.bin(a, b);
    }
    const auto as_is = [](double s) { return s; };
    for (std::size_t t = 0; t < n; ++t)
      if (bins[t] >= 0) sink_.accept(bins[t], i, j0 + t, [&] { return Means ? seps_[t] : 0.0; }, as_is);
  }

 private:
  const BinFunction& f_;
  const SoaView<3>& A_;
  const SoaView<3>& B_;
  std::vector<int> bins_;
  std::vector<double> seps_;
  Sink& sink_;
};

// The plan seen by the traversal: the same points and threads, a 1-D statistic of one bin
// [0, cutoff) in the same metric (what choose_grid and GridWindows read).
struct Binned2DReach {
  Statistic stat;
  Plan plan;
  explicit Binned2DReach(const Plan& p) : stat(*p.stat), plan(p) {
    stat.reduction = reduce::Histogram{Binning::from_edges({0.0, p.stat->binning2d().cutoff()}), 0,
                                       p.stat->mean_separation()};
    plan.stat = &stat;
  }
};

template <class BinFunction>
Result run_binned2d(const BinFunction& f, const Plan& plan) {
  const Statistic& s = *plan.stat;
  const Binned2DReach reach(plan);
  const GridChoice grid = choose_grid(reach.plan);
  const bool use_grid = grid.chosen;
  const PointSet& pa = use_grid ? grid.a->sorted : *plan.a;
  const PointSet& pb = use_grid ? (grid.b ? grid.b->sorted : grid.a->sorted) : *plan.b;
  const SoaView<3> A(pa), B(pb);
  TraversalShape shape;
  shape.is_auto = plan.is_auto();
  shape.threads = std::max(1, plan.threads);
  shape.tile = choose_tile(std::max(A.n, B.n), shape.threads);
  shape.progress = &plan.progress;
  const PairWeights w = s.weighted ? PairWeights{pa.weights().data(), pb.weights().data(), plan.grids}
                                   : PairWeights{nullptr, nullptr, plan.grids};
  const std::size_t max_row = use_grid ? std::max<std::size_t>(grid.plan.longest_row, 1) : shape.tile;

  const auto run_with = [&]<bool Means = false>(auto make_sink) {
    using Sink = decltype(make_sink());
    const auto make_rows = [&](Sink& sink) { return BinRows<BinFunction, Sink, Means>(f, A, B, max_row, sink); };
    if (!use_grid) return traverse(A.n, B.n, shape, make_sink, make_rows);
    const std::size_t units = grid.plan.unit_count();
    if (grid.plan.windowed) {
      const GridWindows<3> windows(grid.geometry, grid.plan, grid.b ? *grid.b : *grid.a, A, grid.cutoff);
      return traverse_blocks(units, windows, shape, make_sink, make_rows, windows);
    }
    return traverse_blocks(units, GridPlan::Units{grid.plan}, shape, make_sink, make_rows);
  };

  Result r;
  r.output = OutputKind::Histogram;
  if (s.regions() > 0) {
    const TraversalLabels labels(plan, &grid);
    const auto sink = [&] { return RegionHistogramSink(plan.edges, w, labels.view, s.mean_separation()); };
    for (const auto& k : s.mean_separation() ? run_with.template operator()<true>(sink) : run_with(sink)) k.merge_into(r);
  } else if (s.mean_separation()) {
    for (const auto& k : run_with.template operator()<true>([&] { return MeanHistogramSink(plan.edges, w); }))
      k.merge_into(r);
  } else {
    for (const auto& k : run_with([&] { return HistogramSink(plan.edges, w); })) k.merge_into(r);
  }
  const std::size_t nb = static_cast<std::size_t>(plan.edges.nbins);
  if (r.counts.empty()) r.counts.assign(nb, 0);
  if (s.weighted && r.weighted.empty()) {
    r.weighted.assign(nb, 0.0);
    r.exact.weighted.assign(nb, 0);
  }
  r.exact.grids = plan.grids;
  round_exact_sums(r);
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = use_grid ? grid.plan.evaluations : pair_total(A.n, B.n, shape.is_auto);
  r.info.plan = grid.why;
  return r;
}

// Calls v(bin_function) with the binned pair function the plan's statistic declares; `tables`
// must outlive the call.
template <class Visitor>
decltype(auto) visit_binned2d(const Plan& plan, const Binned2DTables& tables, Visitor&& v) {
  const Statistic& s = *plan.stat;
  const bool periodic = s.metric == Metric::Periodic;
  if (s.binning2d().midpoint_los()) {
    if (periodic)
      throw_config("the midpoint line of sight (survey mocks) is for open space: a periodic box has no observer");
    if (s.binning2d().kind() == Binning2D::Kind::RpPi) return v(RpPiBinsMock(tables));
    return v(SMuBinsMock(tables));
  }
  if (s.binning2d().kind() == Binning2D::Kind::RpPi) {
    if (periodic) return v(RpPiBins<true>(tables, s.box));
    return v(RpPiBins<false>(tables, s.box));
  }
  if (periodic) return v(SMuBins<true>(tables, s.box));
  return v(SMuBins<false>(tables, s.box));
}

}  // namespace twobody::cpu
