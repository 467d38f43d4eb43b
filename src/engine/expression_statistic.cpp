// expression_statistic (twobody/expression.hpp): the statistic behind each output a run over a
// pair expression can give, one place for the command line and Python.
#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/expression.hpp"

namespace twobody {

ExpressionEmit parse_expression_emit(std::string_view s) {
  if (s == "sum") return ExpressionEmit::Sum;
  if (s == "count") return ExpressionEmit::Count;
  if (s == "histogram") return ExpressionEmit::Histogram;
  if (s == "pairs") return ExpressionEmit::Pairs;
  if (s == "per-point") return ExpressionEmit::PerPoint;
  throw_config(fmt::format("emit must be sum, count, histogram, pairs or per-point, not '{}'", s));
}

const char* to_string(ExpressionEmit e) {
  switch (e) {
    case ExpressionEmit::Sum: return "sum";
    case ExpressionEmit::Count: return "count";
    case ExpressionEmit::Histogram: return "histogram";
    case ExpressionEmit::Pairs: return "pairs";
    case ExpressionEmit::PerPoint: return "per-point";
  }
  return "?";
}

Statistic expression_statistic(const PairExpression& f, bool cross, const ExpressionOutput& out) {
  const bool predicate = f.result() == ValueType::Bool;
  const char* emit = to_string(out.emit);
  const std::string per_point = out.per_point.empty() ? (predicate ? "count" : "sum") : out.per_point;
  if (!out.per_point.empty() && out.emit != ExpressionEmit::PerPoint)
    throw_config(fmt::format("per-point '{}' goes with the per-point output, not {}", out.per_point, emit));
  if (per_point != "count" && per_point != "sum" && per_point != "min" && per_point != "max")
    throw_config(fmt::format("per-point must be count, sum, min or max, not '{}'", per_point));
  // Predicates are counted where true; a value is counted (or listed) where it falls in the range.
  const bool takes_range = !predicate && out.emit != ExpressionEmit::Sum &&
                           (out.emit != ExpressionEmit::PerPoint || per_point == "count");
  if (takes_range && !out.range)
    throw_config(fmt::format("--emit {} of a value needs a range (--rmin, --rmax) or bins (--bins), or a Bool --pair", emit));
  if (!takes_range && out.range)
    throw_config(predicate ? fmt::format("a predicate's {} takes no range or bins: it counts the pairs where it is true", emit)
                           : fmt::format("{} of the values takes no range or bins", emit));
  const Binning range = takes_range ? *out.range : Binning{};
  Statistic st;
  st.traversal = cross ? Traversal::Cross : Traversal::Auto;
  switch (out.emit) {
    case ExpressionEmit::Sum: st.reduction = reduce::Sum{}; break;
    case ExpressionEmit::Count: st.reduction = reduce::Count{range}; break;
    case ExpressionEmit::Histogram: st.reduction = reduce::Histogram{range}; break;
    case ExpressionEmit::Pairs: st.reduction = reduce::PairList{range}; break;
    case ExpressionEmit::PerPoint:
      if (per_point == "count") st.reduction = reduce::PerPoint{range};
      else
        st.reduction = reduce::PerPointValue{per_point == "min"   ? reduce::PerPointValue::Of::Min
                                             : per_point == "max" ? reduce::PerPointValue::Of::Max
                                                                  : reduce::PerPointValue::Of::Sum};
      break;
  }
  return st;
}

}  // namespace twobody
