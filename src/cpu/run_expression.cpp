#include "twobody/detail/cpu/run_expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/cpu/grid_index.hpp"
#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/detail/cpu/output_sinks.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/cpu/value_sinks.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/traversal_cost.hpp"
#include "twobody/detail/expr/ops.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

namespace {

// One thread's evaluator: the interpreter's row of values handed to the thread's sink. `order`
// (an auto run on the grid, which visits both orientations of a pair): the original index of
// each sorted point; a pair is kept in the orientation whose anchor had the lower index (the
// brute force's a), the other orientation's values made NaN (no value).
template <class Sink>
class ValueRows {
 public:
  ValueRows(const ExpressionRows& rows, std::size_t max_row, Sink& sink, const std::uint32_t* order = nullptr)
      : rows_(rows), ws_(rows.workspace()), values_(std::max<std::size_t>(max_row, 1)), sink_(sink), order_(order) {}
  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    rows_.row(i, j0, j1 - j0, values_.data(), ws_);
    if (order_) {
      const std::uint32_t oi = order_[i];
      for (std::size_t t = 0; t < j1 - j0; ++t)
        if (order_[j0 + t] <= oi) values_[t] = expr::nan_value();
    }
    sink_.consume(i, j0, values_.data(), j1 - j0, [](double v) { return v; });
  }

 private:
  const ExpressionRows& rows_;
  ExpressionRows::Workspace ws_;
  std::vector<double> values_;
  Sink& sink_;
  const std::uint32_t* order_;
};

// The pair distance a grid is built for: the cutoff widened by a relative margin far above the
// few roundings between the exact distance and any float64 evaluation of it, so the cells hold
// every pair the expression could keep (the expression itself then decides each, exactly).
constexpr double kCutoffMargin = 1 + 1.0 / (1 << 20);

PointSet points_of(const PairTable& t) {
  PointSet p(t.dim(), t.size());
  std::vector<double> row(static_cast<std::size_t>(t.dim()));
  for (std::size_t i = 0; i < t.size(); ++i) {
    t.coordinates().row_f64(i, row.data());
    for (int d = 0; d < t.dim(); ++d) p.coord(d)[i] = row[static_cast<std::size_t>(d)];
  }
  return p;
}

PairTable sorted_table(const PairTable& t, const GridIndex& g) {
  const std::size_t n = t.size(), d = static_cast<std::size_t>(t.dim());
  std::vector<double> rows(n * d);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t c = 0; c < d; ++c) rows[k * d + c] = g.sorted.coord(static_cast<int>(c))[k];
  std::vector<std::vector<double>> columns(t.schema().names.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const auto src = t.column(c);
    columns[c].resize(n);
    for (std::size_t k = 0; k < n; ++k) columns[c][k] = src[g.order[k]];
  }
  return PairTable(VectorSet::from_rows(std::move(rows), n, t.dim()), t.schema().names, std::move(columns));
}

// Per-point values of sorted points put back at their original indices (out[order[k]] = in[k]).
template <class T>
std::vector<T> unsorted(const std::vector<T>& in, const std::vector<std::uint32_t>& order) {
  std::vector<T> out(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) out[order[k]] = in[k];
  return out;
}

}  // namespace

// The grid when the plan has a cutoff and the grid's evaluations cost less than all pairs (the
// shared cost model, engine/traversal_cost.hpp); `tables`: the sorted tables too (a run's, not an
// explanation's).
std::unique_ptr<ExpressionGrid> choose_expression_grid(const ExpressionPlan& plan, bool tables, const TraversalCost& cost) {
  auto g = std::make_unique<ExpressionGrid>();
  const PairTable& A = *plan.a;
  const PairTable& B = *plan.b;
  const std::uint64_t brute = pair_total(A.size(), B.size(), plan.is_auto);
  if (!(plan.cutoff > 0)) {
    g->why = "brute-force tiles, 256 partners a row at a time (no cutoff on the points' distance: every pair counts)";
    return g;
  }
  const std::string source = fmt::format("the cutoff {} on the points' distance ({})", plan.cutoff, plan.cutoff_source);
  if (plan.path == "brute") {
    g->why = fmt::format("brute-force tiles (requested), 256 partners a row at a time; {}", source);
    return g;
  }
  if (A.dim() < 1 || A.dim() > kMaxDim) {
    g->why = fmt::format("brute-force tiles: {}, but the points have {} coordinates (a cell grid takes 1 to {})", source,
                         A.dim(), kMaxDim);
    return g;
  }
  const PointSet pa = points_of(A);
  const PointSet pb = plan.is_auto ? PointSet() : points_of(B);
  const PointSet& partners = plan.is_auto ? pa : pb;
  for (const PointSet* p : {&pa, &partners})
    for (int d = 0; d < p->dim(); ++d)
      for (const double x : p->coord(d))
        if (!std::isfinite(x)) {
          g->why = fmt::format("brute-force tiles: {}, but a coordinate is not finite", source);
          return g;
        }
  const std::int64_t n_points = static_cast<std::int64_t>(A.size() + B.size());
  const std::int64_t max_cells =
      std::max<std::int64_t>(1, std::min<std::int64_t>(std::int64_t(1) << 26, n_points / kPointsPerCell));
  g->geometry = make_grid_geometry(pa, partners, plan.cutoff * kCutoffMargin, nullptr, 1, max_cells, true);
  const int threads = std::max(1, plan.threads);
  g->a = std::make_unique<GridIndex>(pa, g->geometry, 1, threads);
  if (!plan.is_auto) g->b = std::make_unique<GridIndex>(pb, g->geometry, 1, threads);
  g->half = plan.is_auto && plan.symmetric;
  g->plan = plan_grid(g->geometry, *g->a, g->b ? *g->b : *g->a, g->half, false, threads);
  g->chosen = plan.path == "grid" || (brute >= cost.min_pairs_for_grid && grid_pays(g->plan.evaluations, brute, cost));
  std::string cells;
  for (int d = 0; d < g->geometry.dim; ++d) cells += fmt::format("{}{}", d ? " x " : "", g->geometry.cells[d]);
  g->why = fmt::format("{}: {}; a cell grid of {} cells, {} evaluations ({}) against {} pairs{}{}",
                       g->chosen ? "a cell grid" : "brute-force tiles", source, cells, g->plan.evaluations,
                       g->half     ? "the half shell: the expression is symmetric, each pair once"
                       : plan.is_auto ? "both orientations of each pair of cells, each pair kept in the brute force's"
                                      : "the full shell",
                       brute, g->chosen ? (plan.path == "grid" ? " (requested)" : "") : ": brute force costs less",
                       g->chosen ? "" : fmt::format(" ({})", cost.why));
  if (g->chosen && tables) {
    g->ta = sorted_table(A, *g->a);
    if (!plan.is_auto) g->tb = sorted_table(B, *g->b);
  }
  return g;
}

SumGrid expression_value_grid(double largest_abs_value) {
  if (!std::isfinite(largest_abs_value))
    throw_input("the pair function's value is infinite for some pair, so its sum is: give a --where that "
                "excludes those pairs, or a function that stays finite");
  return SumGrid::for_bound(largest_abs_value);
}

void put_back_in_order(PointReductions& x, std::vector<FixedSum>& exact, const std::vector<std::uint32_t>& order) {
  x.counts = unsorted(x.counts, order);
  x.values = unsorted(x.values, order);
  exact = unsorted(exact, order);
}

std::string describe_expression_traversal(const ExpressionPlan& plan, const TraversalCost& cost) {
  return choose_expression_grid(plan, false, cost)->why;
}

Result run_expression_cpu(const ExpressionPlan& plan) {
  const std::unique_ptr<ExpressionGrid> grid = choose_expression_grid(plan, true, kCpuTraversalCost);
  const bool on_grid = grid->chosen;
  const PairTable& ta = on_grid ? grid->ta : *plan.a;
  const PairTable& tb = on_grid ? (plan.is_auto ? grid->ta : grid->tb) : *plan.b;
  ExpressionRows rows(*plan.f, ta, tb, plan.threads);
  rows.use_compiled(plan.compiled);
  const std::size_t na = rows.size_a(), nb = rows.size_b();
  // On the grid every run is a cross of the sorted sets (an auto run: of the set with itself, its
  // orientation kept by ValueRows), so the sinks keep both points' arrays.
  const bool sinks_auto = plan.is_auto && (!on_grid || grid->half);
  static const std::vector<std::uint32_t> kNoOrder;
  const std::vector<std::uint32_t>& order_a = on_grid ? grid->a->order : kNoOrder;
  const std::vector<std::uint32_t>& order_b = on_grid ? (grid->b ? grid->b->order : grid->a->order) : order_a;
  const std::uint32_t* orientation = on_grid && plan.is_auto && !grid->half ? order_a.data() : nullptr;
  TraversalShape shape;
  shape.is_auto = plan.is_auto;
  shape.threads = plan.threads;
  shape.tile = choose_tile(std::max(na, nb), shape.threads);
  shape.progress = plan.progress;
  const auto run_with = [&](auto make_sink) {
    using Sink = decltype(make_sink());
    if (on_grid) {
      const std::size_t row = std::max(grid->plan.longest_row, std::size_t{1});
      return traverse_blocks(grid->plan.unit_count(), GridPlan::Units{grid->plan}, shape, make_sink,
                             [&](Sink& sink) { return ValueRows<Sink>(rows, row, sink, orientation); });
    }
    return traverse(na, nb, shape, make_sink, [&](Sink& sink) { return ValueRows<Sink>(rows, shape.tile, sink); });
  };
  // The grid of the exact sums, from the largest |value| (a first pass over the pairs).
  const auto value_grid = [&] {
    double m = 0;
    for (const auto& s : run_with([] { return MaxAbsSink(); })) m = std::max(m, s.max());
    return expression_value_grid(m);
  };
  const PairWeights none{};
  Result r;
  r.output = plan.stat->output();
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
            const auto sinks = run_with([&] { return PerPointSink(plan.edges, none, na, nb, sinks_auto); });
            merge_per_point(sinks, false, on_grid ? order_a.data() : nullptr, r.per_point_a, r.exact.point_weighted_a,
                            shape.threads);
            if (!plan.is_auto) {
              merge_per_point(sinks, true, on_grid ? order_b.data() : nullptr, r.per_point_b, r.exact.point_weighted_b,
                              shape.threads);
            } else if (on_grid && !grid->half) {
              // (an auto run's partners are the same points: their counts join the anchors')
              PointReductions second;
              std::vector<FixedSum> none_exact;
              merge_per_point(sinks, true, order_a.data(), second, none_exact, shape.threads);
              for (std::size_t k = 0; k < second.counts.size(); ++k) r.per_point_a.counts[k] += second.counts[k];
            }
          },
          [&](const reduce::PairList&) {
            if (plan.stat && plan.max_pairs == 0) throw Error(ErrorKind::Internal, "a pair list without a limit");
            auto sinks = run_with([&] { return PairListSink(plan.edges, plan.max_pairs, nullptr); });
            gather_pairs(sinks, plan.max_pairs, r, nullptr);
            if (on_grid)
              for (PairRecord& x : r.pairs) {
                x.i = order_a[x.i], x.j = order_b[x.j];
                if (plan.is_auto && x.i > x.j) std::swap(x.i, x.j);  // (the half shell: a symmetric value)
              }
            std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
          },
          [&](const reduce::Sum&) {
            r.exact.grids.value = value_grid();
            const SumGrid g = r.exact.grids.value;
            for (auto& k : run_with([&] { return ValueSumSink(g); })) k.merge_into(r);
            if (r.counts.empty()) r.counts.assign(1, 0);
            if (r.exact.value_sum.empty()) r.exact.value_sum.assign(1, 0);
          },
          [&](const reduce::PerPointValue& p) {
            using Of = PerPointValueSink::Of;
            const Of of = p.of == reduce::PerPointValue::Of::Sum ? Of::Sum : p.of == reduce::PerPointValue::Of::Min ? Of::Min : Of::Max;
            if (of == Of::Sum) r.exact.grids.value = value_grid();
            const SumGrid g = r.exact.grids.value;
            const auto sinks = run_with([&] { return PerPointValueSink(of, g, na, nb, sinks_auto); });
            merge_point_values(sinks, false, of, r.per_point_a, r.exact.point_value_a);
            if (!sinks_auto) merge_point_values(sinks, true, of, r.per_point_b, r.exact.point_value_b);
            if (!on_grid) return;
            put_back_in_order(r.per_point_a, r.exact.point_value_a, order_a);
            if (sinks_auto) return;  // (the half shell: the auto sinks hold both points of a pair)
            put_back_in_order(r.per_point_b, r.exact.point_value_b, order_b);
            if (!plan.is_auto) return;
            // An auto run's partners are the same points: join their counts, sums and extremes.
            PointReductions& a = r.per_point_a;
            const PointReductions& b = r.per_point_b;
            for (std::size_t k = 0; k < a.counts.size(); ++k) {
              if (of == Of::Sum) {
                r.exact.point_value_a[k] += r.exact.point_value_b[k];
              } else if (b.counts[k] && (!a.counts[k] || (of == Of::Min ? ordered_bits(b.values[k]) < ordered_bits(a.values[k])
                                                                           : ordered_bits(b.values[k]) > ordered_bits(a.values[k])))) {
                a.values[k] = b.values[k];
              }
              a.counts[k] += b.counts[k];
            }
            r.per_point_b = PointReductions();
            r.exact.point_value_b.clear();
          },
          [](const auto&) { throw Error(ErrorKind::Internal, "a reduction run_expression refuses reached the cpu"); }},
      plan.stat->reduction);
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = on_grid ? grid->plan.evaluations : pair_total(na, nb, plan.is_auto);
  r.info.plan = grid->why;  // (the traversal's line of the plan: the engine puts it in its place)
  round_exact_sums(r);
  return r;
}

}  // namespace twobody::cpu
