#pragma once
// Runs a validated plan with a concrete pair function on the CPU: picks the sink for the output
// kind, traverses, merges. Shared by the built-in metrics and by user pair functions.

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <optional>
#include <span>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "twobody/detail/engine/angular_reach.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/cpu/fast_rows.hpp"
#include "twobody/detail/cpu/grid_index.hpp"
#include "twobody/detail/cpu/output_sinks.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/traversal_cost.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

// The grid path, when the plan allows it and its cost model wins: the cell geometry, both sets
// sorted by cell, and the block pairs of the half (auto) or full (cross) shell.
struct GridChoice {
  GridGeometry geometry;
  std::unique_ptr<GridIndex> a, b;  // b is null for auto
  GridPlan plan;
  double cutoff = 0;  // in the points' coordinates: r_max, or for angles a bound on the chord
  std::uint64_t brute_evaluations = 0;
  bool chosen = false;
  std::string why;
};

// The number of points of `p` in a point's cell, itself included, averaged over the points
// (Σ n_c² / N), from a sample of up to 65536 points: the sample's same-cell pairs, scaled.
inline double pair_occupancy(const PointSet& p, const GridGeometry& g) {
  const std::size_t n = p.size(), k = std::min<std::size_t>(n, 65536);
  if (k < 2) return 1.0;
  std::vector<std::int64_t> ids(k);
  for (std::size_t s = 0; s < k; ++s) ids[s] = g.cell_of(p, s * n / k);
  std::sort(ids.begin(), ids.end());
  double same = 0;
  for (std::size_t s = 0, e; s < k; s = e) {
    for (e = s; e < k && ids[e] == ids[s];) ++e;
    same += static_cast<double>(e - s) * static_cast<double>(e - s - 1);
  }
  return 1.0 + same / static_cast<double>(k) * (static_cast<double>(n) - 1) / static_cast<double>(k - 1);
}

// Cells hold at least about this many points each (of the two sets together, an auto set counted
// twice) however small the cutoff: a cell pair costs some 50 pair evaluations (its item, a row
// setup per anchor, the windows), and with r_max far below the points' spacing, cells of r_max
// held under one point each (uniform 10^7, r < 0.05 in a box of 215: 251^3 cells, 3.1·10^7 cell
// pairs for 8.5·10^7 evaluations, most of the run's time and 1.6 GB of cell pairs).
inline constexpr std::int64_t kPointsPerCell = 8;

// A grid needs a cutoff metric (open or periodic Euclidean, or angles below 180°) and an output
// that ignores pairs beyond the last edge. It is chosen by the shared cost model (engine/traversal_cost.hpp) with the
// CPU's constants; the counts of the cells make its evaluations exact.
inline GridChoice choose_grid(const Plan& plan) {
  GridChoice g;
  const Statistic& s = *plan.stat;
  g.brute_evaluations = pair_total(plan.a->size(), plan.b->size(), plan.is_auto());
  if (plan.path == "brute") {
    g.why = "brute force (requested)";
    return g;
  }
  if (s.output() == OutputKind::Matrix) {
    g.why = "brute force: a matrix holds every pair (the grid path serves cutoffs)";
    return g;
  }
  // Angles: cells of the unit vectors' Cartesian coordinates, as wide as the chord of θ_max
  // (engine/angular_reach.hpp proves the bound for rounding), the GPU's cells.
  std::string angles;
  g.cutoff = s.binning().hi();
  if (s.metric == Metric::Angular) {
    if (s.binning().hi() >= 180.0) {
      g.why = "brute force: the cutoff reaches the whole sphere";
      return g;
    }
    const AngularReach reach = angular_reach(plan.edges.hi(), *plan.a, *plan.b, std::max(1, plan.threads));
    if (!std::isfinite(reach.chord)) {
      g.why = "brute force: a coordinate is not finite, so no chord bounds the pairs";
      return g;
    }
    g.cutoff = reach.chord;
    // (No fmt in this header: nvcc compiles it too, through extend/run_custom.hpp, and rejects fmt's.)
    char text[96];
    std::snprintf(text, sizeof text, " on the unit vectors' chord %.6g (theta < %g deg)", reach.chord, s.binning().hi());
    angles = text;
  }
  const int dim = plan.a->dim();
  // Cells about as many as points at most. Finer cells (refine r: cells of rmax/r, a (2r+1)^D
  // neighbourhood) make tighter windows but more rows; they pay while a pair still sees about 64
  // points in its partner's cell (uniform 10^6, r < 100, one thread: refine 3, 41 points, 5.29 s;
  // refine 2, 146 points, 4.96 s; bench/RESULTS.md). That occupancy is pair-weighted (Σ n_c² / N, estimated from a
  // sample of the partner set on the cells of refine 1): on clustered data most pairs sit in a
  // few dense cells, which the mean (N / cells) hides.
  const std::int64_t n_points = static_cast<std::int64_t>(plan.a->size() + plan.b->size());
  std::int64_t max_cells = std::max<std::int64_t>(1, std::min<std::int64_t>(std::int64_t(1) << 26, n_points / kPointsPerCell));
  const Box* box = s.metric == Metric::Periodic ? &s.box : nullptr;
  GridGeometry coarse = make_grid_geometry(*plan.a, *plan.b, g.cutoff, box, 1, max_cells, true);
  double seen = pair_occupancy(*plan.b, coarse);
  // Angles' unit vectors lie on a sphere and fill few of their bounding box's cells, so the cap on
  // all cells leaves many points in each cell they do fill (uniform sky, 10^7 points, theta < 1
  // deg: 135^3 cells, the largest with 296 points, 6.8 evaluations a pair found against 3.6 at
  // 10^5; 9.5 s). Where a point's cell holds over four times what a box-filling set's would
  // (1 + N / cells), the cap grows by that ratio, up to a cell a point (there: 114^3 cells, 3.4
  // evaluations a pair found, 7.0 s). Not for points in space: a concentrated catalogue (90% of
  // 2·10^6 points in 1% of the box) ran 10-25% slower on the finer cells, its windows already
  // pruning what they save (bench/RESULTS.md).
  const double filling = 1.0 + static_cast<double>(plan.b->size()) / static_cast<double>(coarse.total);
  const std::int64_t most_cells = std::min<std::int64_t>(std::int64_t(1) << 26, n_points / 2);
  if (s.metric == Metric::Angular && seen > 4 * filling && max_cells < most_cells) {
    max_cells = std::min<std::int64_t>(most_cells, static_cast<std::int64_t>(static_cast<double>(max_cells) * seen / filling));
    coarse = make_grid_geometry(*plan.a, *plan.b, g.cutoff, box, 1, max_cells, true);
    seen = pair_occupancy(*plan.b, coarse);
  }
  int refine = 1;
  double occupancy = seen;
  g.geometry = coarse;
  for (int r = 2; r <= 3 && dim <= 3; ++r) {
    const GridGeometry fine = make_grid_geometry(*plan.a, *plan.b, g.cutoff, box, r, max_cells, true);
    if (fine.total == g.geometry.total) break;  // capped by max_cells: the same cells, a wider neighbourhood
    double volume = 1;
    for (int d = 0; d < dim; ++d) volume *= fine.width[d] / coarse.width[d];
    if ((seen - 1) * volume + 1 < 64) break;
    refine = r;
    occupancy = (seen - 1) * volume + 1;
    g.geometry = fine;
  }
  // Per-anchor windows (GridWindows) cost about as much as 20 to 30 partners per row; they pay
  // when a pair's block holds many more (a run of 2·refine + 1 cells). Uniform 10^6, r < 25
  // (refine 1, about 54 partners a block), 2 threads: 0.294 s with windows, 0.223 s without.
  // (Not in a triclinic cell: the windows prune by distance in the grid's coordinates, which are
  // sheared there; the cells alone are exact, GridGeometry.)
  const bool windows = occupancy * (2 * refine + 1) >= 128 && !g.geometry.sheared;
  // Slices along the last axis (GridWindows): about two points each, at most 64 a cell.
  const int threads = std::max(1, plan.threads);
  plan.lap("grid shape");
  g.a = std::make_unique<GridIndex>(*plan.a, g.geometry, 64, threads);
  if (!plan.is_auto()) g.b = std::make_unique<GridIndex>(*plan.b, g.geometry, 64, threads);
  plan.lap("cell index");
  g.plan = plan_grid(g.geometry, *g.a, g.b ? *g.b : *g.a, plan.is_auto(), windows, threads);
  plan.lap("cell pairs");
  g.chosen = plan.path == "grid" || (plan.path == "auto" && grid_pays(g.plan.evaluations, g.brute_evaluations, kCpuTraversalCost));
  std::string& w = g.why;
  w = g.chosen ? "grid" : "brute force";
  w += ": a grid of ";
  for (int d = 0; d < dim; ++d) {
    if (d) w += 'x';
    w += std::to_string(g.geometry.cells[d]);
  }
  w += g.geometry.sheared ? " cells of the triclinic cell's fractional coordinates (refine " : " cells (refine ";
  w += std::to_string(refine);
  w += angles;
  if (g.plan.windowed) w += ", per-anchor windows along the last axis";
  w += ", largest cell ";
  w += std::to_string(g.plan.largest_cell);
  w += " points) would evaluate ";
  w += std::to_string(g.plan.evaluations);
  w += " pairs in ";
  w += std::to_string(g.plan.blocks);
  w += " cell pairs; brute force ";
  w += std::to_string(g.brute_evaluations);
  if (!g.chosen) {
    // Brute force needs none of it: the sorted copies and the cell pairs would sit beside its run.
    g.a.reset();
    g.b.reset();
    g.plan = {};
  }
  return g;
}

// Jackknife labels in traversal order: the grid sorts points by cell (GridIndex::order[k] is the
// caller's index of sorted point k) and carries coordinates and weights, not labels, so the sinks
// (which see sorted indices) get permuted copies. `view` points into this object: not copyable.
struct TraversalLabels {
  std::vector<std::int32_t> a, b;
  RegionLabels view;

  TraversalLabels(const Plan& plan, const GridChoice* grid)
      : view{plan.a->regions().data(), plan.b->regions().data(), plan.stat->regions()} {
    if (!grid || !grid->chosen) return;
    const auto permuted = [](const PointSet& p, const std::vector<std::uint32_t>& order) {
      std::vector<std::int32_t> l(order.size());
      const auto src = p.regions();
      for (std::size_t k = 0; k < order.size(); ++k) l[k] = src[order[k]];
      return l;
    };
    a = permuted(*plan.a, grid->a->order);
    view.a = view.b = a.data();
    if (grid->b) {
      b = permuted(*plan.b, grid->b->order);
      view.b = b.data();
    }
  }
  TraversalLabels(const TraversalLabels&) = delete;
  TraversalLabels& operator=(const TraversalLabels&) = delete;
};

// A plan's traversal: the grid's units (with per-anchor windows when the plan has them) or, without
// a grid, the tiles; one sink a thread from make_sink(), one row evaluator a thread from
// make_rows(sink). Every output of the points' paths runs through it (run_plan, point_sums.hpp).
template <int D, class MakeSink, class MakeRows>
auto traverse_plan(const GridChoice* grid, const SoaView<D>& A, const SoaView<D>& B, const TraversalShape& shape,
                   MakeSink make_sink, MakeRows make_rows) {
  if (!grid || !grid->chosen) return traverse(A.n, B.n, shape, make_sink, make_rows);
  const std::size_t units = grid->plan.unit_count();
  if (grid->plan.windowed) {
    const GridWindows<D> windows(grid->geometry, grid->plan, grid->b ? *grid->b : *grid->a, A, grid->cutoff);
    return traverse_blocks(units, windows, shape, make_sink, make_rows, windows);
  }
  return traverse_blocks(units, GridPlan::Units{grid->plan}, shape, make_sink, make_rows);
}

// What a run over a plan traverses: the grid's sorted copies when the grid was chosen (else the
// plan's sets), their views, the traversal's shape and the longest partner row a row evaluator
// holds. Pair functions (run_plan) and per-point force sums (point_sums.hpp) start from it.
template <int D>
struct PlanSets {
  bool use_grid;
  const PointSet& pa;
  const PointSet& pb;
  SoaView<D> A, B;
  TraversalShape shape;
  std::size_t max_row;
  PlanSets(const Plan& plan, const GridChoice* grid)
      : use_grid(grid && grid->chosen),
        pa(use_grid ? grid->a->sorted : *plan.a),
        pb(use_grid ? (grid->b ? grid->b->sorted : grid->a->sorted) : *plan.b),
        A(pa),
        B(pb) {
    shape.is_auto = plan.is_auto();
    shape.threads = std::max(1, plan.threads);
    shape.tile = choose_tile(std::max(A.n, B.n), shape.threads);
    shape.progress = &plan.progress;
    max_row = use_grid ? std::max<std::size_t>(grid->plan.longest_row, 1) : shape.tile;
  }
};

template <int D, class PairFunction>
Result run_plan(const PairFunction& f, const Plan& plan, const GridChoice* grid = nullptr) {
  const Statistic& s = *plan.stat;
  const PlanSets<D> sets(plan, grid);
  const bool use_grid = sets.use_grid;
  const PointSet &pa = sets.pa, &pb = sets.pb;
  const SoaView<D>&A = sets.A, &B = sets.B;
  const TraversalShape& shape = sets.shape;
  const PairWeights w = s.weighted ? PairWeights{pa.weights().data(), pb.weights().data(), plan.grids}
                                   : PairWeights{nullptr, nullptr, plan.grids};
  const std::size_t max_row = sets.max_row;
  // The float32 fast path for the pair functions that have one (every output but the matrix).
  std::unique_ptr<FastRowsSetup<PairFunction>> fast;
  if constexpr (has_fast_path<PairFunction>) {
    if (s.output() != OutputKind::Matrix && fast_rows_fit(plan.edges)) {
      fast = std::make_unique<FastRowsSetup<PairFunction>>(f, plan.edges, pa, pb, &pa == &pb, shape.threads);
      if (!fast->usable()) fast.reset();
      plan.lap("float32 proxies");
    }
  }
  const auto run_with = [&](auto make_sink) {
    using Sink = decltype(make_sink());
    const auto go = [&](auto make_rows) { return traverse_plan<D>(use_grid ? grid : nullptr, A, B, shape, make_sink, make_rows); };
    const auto traversed = [&](auto sinks) {
      plan.lap("traversal");
      return sinks;
    };
    if constexpr (has_fast_path<PairFunction>) {
      if (fast)
        return traversed(go([&](Sink& sink) { return FastRows<PairFunction, Sink>(*fast, A, B, max_row, sink); }));
    }
    return traversed(go([&](Sink& sink) { return KeyRows<D, PairFunction, Sink>(f, A, B, max_row, sink); }));
  };

  // The reduction's sink: one per reduction type (a 2-D histogram arrives here as the 1-D
  // histogram of its flat bins, cpu/binned2d.hpp).
  Result r;
  r.output = s.output();
  std::visit(
      Overloaded{
          [&](const reduce::Histogram& h) {
            if (h.regions > 0) {
              // Jackknife regions (seed 003's inverse jackknives): the region sink, same traversal.
              const TraversalLabels labels(plan, grid);
              for (auto& k : run_with([&] { return RegionHistogramSink(plan.edges, w, labels.view, h.mean_separation); }))
                k.merge_into(r);
            } else if (h.mean_separation) {
              for (auto& k : run_with([&] { return MeanHistogramSink(plan.edges, w); })) k.merge_into(r);
            } else {
              for (auto& k : run_with([&] { return HistogramSink(plan.edges, w); })) k.merge_into(r);
            }
            if (r.counts.empty()) r.counts.assign(plan.edges.nbins, 0);
            if (s.weighted && r.weighted.empty()) {
              r.weighted.assign(plan.edges.nbins, 0.0);
              r.exact.weighted.assign(plan.edges.nbins, 0);
            }
          },
          [&](const reduce::Count&) {
            auto sinks = run_with([&] { return ReductionSink(plan.edges, w); });
            for (auto& k : sinks) k.merge_into(r);
          },
          [&](const reduce::PerPoint&) {
            const auto sinks = run_with([&] { return PerPointSink(plan.edges, w, A.n, B.n, shape.is_auto); });
            // The grid's arrays are in cell order: entry k belongs to the caller's point order[k].
            const std::uint32_t* oa = use_grid ? grid->a->order.data() : nullptr;
            merge_per_point(sinks, false, oa, r.per_point_a, r.exact.point_weighted_a, shape.threads);
            if (!shape.is_auto) {
              const std::uint32_t* ob = use_grid ? grid->b->order.data() : nullptr;
              merge_per_point(sinks, true, ob, r.per_point_b, r.exact.point_weighted_b, shape.threads);
            }
          },
          [&](const reduce::PairList&) {
            // Back to the callers' indices (the grid's arrays are in cell order); auto pairs keep i < j.
            const auto to_callers = [&](std::span<PairRecord> pairs) {
              const auto& oa = grid->a->order;
              const auto& ob = grid->b ? grid->b->order : grid->a->order;
              for (auto& p : pairs) {
                p.i = oa[p.i];
                p.j = ob[p.j];
                if (shape.is_auto && p.i > p.j) std::swap(p.i, p.j);
              }
            };
            // With RunOptions::pair_sink the pairs stream out as they are found (in no set order).
            std::optional<PairStream> stream;
            if (plan.pair_sink)
              stream.emplace(plan.pair_sink, plan.max_pairs, use_grid ? PairStream::ToCallers(to_callers) : nullptr);
            auto sinks = run_with([&] { return PairListSink(plan.edges, plan.max_pairs, stream ? &*stream : nullptr); });
            gather_pairs(sinks, plan.max_pairs, r, stream ? &*stream : nullptr);
            if (use_grid) to_callers(r.pairs);
            std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
          },
          [&](const reduce::Matrix&) {
            r.rows = A.n;
            r.cols = B.n;
            r.matrix.assign(r.rows * r.cols, 0.0);
            if (shape.is_auto) {
              for (std::size_t i = 0; i < A.n; ++i) {
                double a[D > 0 ? D : 1];
                for (int d = 0; d < D; ++d) a[d] = A.x[d][i];
                r.matrix[i * r.cols + i] = f.natural_of(f.key(a, a));
              }
            }
            double* m = r.matrix.data();
            traverse(A.n, B.n, shape, [&] { return MatrixSink(m, r.cols, shape.is_auto); },
                     [&](MatrixSink& sink) { return KeyRows<D, PairFunction, MatrixSink>(f, A, B, shape.tile, sink); });
            plan.lap("traversal");
          },
          [](const reduce::Histogram2D&) {
            throw Error(ErrorKind::Internal, "a 2-D histogram reached the 1-D traversal (cpu/binned2d.hpp runs it)");
          },
          [](const reduce::Nearest&) {
            throw Error(ErrorKind::Internal, "k nearest neighbours reached the point traversal (vectors only)");
          },
          [](const auto&) {
            throw Error(ErrorKind::Internal, "a sum of values reached a built-in metric's traversal");
          }},
      s.reduction);
  plan.lap("merge");
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = use_grid ? grid->plan.evaluations : pair_total(A.n, B.n, shape.is_auto);
  if (fast) r.info.pairs_settled_fp64 = fast->settled_total();
  r.exact.grids = plan.grids;
  round_exact_sums(r);
  return r;
}

}  // namespace twobody::cpu
