#include "twobody/detail/cpu/run_expression.hpp"

#include <algorithm>
#include <optional>

#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/cpu/output_sinks.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/cpu/value_sinks.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

namespace {

// One thread's evaluator: the interpreter's row of values handed to the thread's sink.
template <class Sink>
class ValueRows {
 public:
  ValueRows(const ExpressionRows& rows, std::size_t max_row, Sink& sink)
      : rows_(rows), ws_(rows.workspace()), values_(max_row), sink_(sink) {}
  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    rows_.row(i, j0, j1 - j0, values_.data(), ws_);
    sink_.consume(i, j0, values_.data(), j1 - j0, [](double v) { return v; });
  }

 private:
  const ExpressionRows& rows_;
  ExpressionRows::Workspace ws_;
  std::vector<double> values_;
  Sink& sink_;
};

}  // namespace

Result run_expression_cpu(const ExpressionPlan& plan) {
  ExpressionRows rows(*plan.f, *plan.a, *plan.b, plan.threads);
  rows.use_compiled(plan.compiled);
  const std::size_t na = rows.size_a(), nb = rows.size_b();
  TraversalShape shape;
  shape.is_auto = plan.is_auto;
  shape.threads = plan.threads;
  shape.tile = choose_tile(std::max(na, nb), shape.threads);
  shape.progress = plan.progress;
  const auto run_with = [&](auto make_sink) {
    using Sink = decltype(make_sink());
    return traverse(na, nb, shape, make_sink, [&](Sink& sink) { return ValueRows<Sink>(rows, shape.tile, sink); });
  };
  // The grid of the exact sums, from the largest |value| (a first pass over the pairs).
  const auto value_grid = [&] {
    double m = 0;
    for (const auto& s : run_with([] { return MaxAbsSink(); })) m = std::max(m, s.max());
    if (!std::isfinite(m))
      throw_input("the pair function's value is infinite for some pair, so its sum is: give a --where that "
                  "excludes those pairs, or a function that stays finite");
    return SumGrid::for_bound(m);
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
            const auto sinks = run_with([&] { return PerPointSink(plan.edges, none, na, nb, shape.is_auto); });
            merge_per_point(sinks, false, nullptr, r.per_point_a, r.exact.point_weighted_a, shape.threads);
            if (!shape.is_auto) merge_per_point(sinks, true, nullptr, r.per_point_b, r.exact.point_weighted_b, shape.threads);
          },
          [&](const reduce::PairList&) {
            std::optional<PairStream> stream;
            if (plan.stat && plan.max_pairs == 0) throw Error(ErrorKind::Internal, "a pair list without a limit");
            auto sinks = run_with([&] { return PairListSink(plan.edges, plan.max_pairs, nullptr); });
            gather_pairs(sinks, plan.max_pairs, r, nullptr);
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
            const auto sinks = run_with([&] { return PerPointValueSink(of, g, na, nb, shape.is_auto); });
            merge_point_values(sinks, false, of, r.per_point_a, r.exact.point_value_a);
            if (!shape.is_auto) merge_point_values(sinks, true, of, r.per_point_b, r.exact.point_value_b);
          },
          [](const auto&) { throw Error(ErrorKind::Internal, "a reduction run_expression refuses reached the cpu"); }},
      plan.stat->reduction);
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = pair_total(na, nb, shape.is_auto);
  round_exact_sums(r);
  return r;
}

}  // namespace twobody::cpu
