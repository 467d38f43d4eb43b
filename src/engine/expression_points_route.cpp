#include "twobody/detail/engine/expression_points_route.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>

#include "twobody/detail/engine/first_where.hpp"
#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/cutoff.hpp"

namespace twobody {

double least_key_of_root(double e) {
  // Non-negative doubles ordered as their bit patterns: sqrt(lo) < e <= sqrt(hi) throughout.
  std::uint64_t lo = 0, hi = std::bit_cast<std::uint64_t>(HUGE_VAL);
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (std::sqrt(std::bit_cast<double>(mid)) >= e)
      hi = mid;
    else
      lo = mid;
  }
  return std::bit_cast<double>(hi);
}

namespace {

// Strictly increasing, finite, and squares (the planner's own keys of these distance edges) that
// neither overflow nor, past the first, underflow to zero.
bool usable_distance_edges(const std::vector<double>& d) {
  for (std::size_t k = 0; k < d.size(); ++k) {
    if (!(d[k] >= 0) || !std::isfinite(d[k] * d[k])) return false;
    if (k > 0 && !(d[k] > d[k - 1] && d[k] * d[k] > 0)) return false;
  }
  return d.size() >= 2;
}

bool strictly_increasing_finite(const std::vector<double>& k) {
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!std::isfinite(k[i])) return false;
    if (i > 0 && !(k[i] > k[i - 1])) return false;
  }
  return true;
}

}  // namespace

std::optional<PointsRoute> points_route(const PairExpression& f, const Statistic& s, const std::vector<double>& value_edges,
                                        const PairTable& a, const PairTable* b, const RunOptions& opt) {
  const expr::Compiled& c = f.compiled();
  // One backend (the key edges are this run's plan), points of the point paths' dimensions.
  if (opt.distribution || opt.devices.size() > 1 || opt.backend == "hybrid") return std::nullopt;
  if (a.dim() < 1 || a.dim() > kMaxDim || (b && b->dim() != a.dim())) return std::nullopt;
  const OutputKind out = s.output();
  if (!std::holds_alternative<reduce::Histogram>(s.reduction) && !std::holds_alternative<reduce::Count>(s.reduction) &&
      !std::holds_alternative<reduce::PerPoint>(s.reduction) && !std::holds_alternative<reduce::PairList>(s.reduction))
    return std::nullopt;
  // The form, the edges in the value's units as the rule compares them (a range's include_hi
  // applied: `value_edges`) and as the statistic gave them. A predicate D < K (D <= K) is the
  // count of the values below K (up to K): edges 0 and K (the next double above K).
  expr::DistanceForm form = expr::DistanceForm::None;
  std::vector<double> edges, given;
  if (c.result == ValueType::Bool) {
    const auto p = expr::key_predicate(c);
    if (!p || (out != OutputKind::Reduction && out != OutputKind::PerPoint)) return std::nullopt;
    form = p->form;
    edges = given = {0.0, p->inclusive ? std::nextafter(p->bound, HUGE_VAL) : p->bound};
  } else {
    form = expr::key_form(c);
    edges = value_edges;
    given = s.binning().edges();
  }
  if (form == expr::DistanceForm::None) return std::nullopt;
  const bool squared = form == expr::DistanceForm::Squared;
  if (squared && out == OutputKind::PairList) return std::nullopt;
  if (edges.size() < 2 || edges.size() != given.size() || !(edges.front() >= 0)) return std::nullopt;

  PointsRoute r;
  // The keys: the value edges' exact images.
  r.keys.reserve(edges.size());
  for (double v : edges) r.keys.push_back(squared ? v : (v == 0 ? 0.0 : least_key_of_root(v)));
  if (!strictly_increasing_finite(r.keys)) return std::nullopt;
  // The edges in distance: the statistic's reach (its last edge bounds every pair in range) and
  // the fast paths' shape. A square's are the roots, the last rounded up.
  std::vector<double> d = given;
  if (squared) {
    for (double& e : d) e = std::sqrt(e);
    d.back() = std::nextafter(std::sqrt(edges.back()), HUGE_VAL);
  } else {
    d.back() = std::max(d.back(), edges.back());
  }
  if (!usable_distance_edges(d)) return std::nullopt;
  const Binning bins = Binning::from_edges(std::move(d));

  r.stat.traversal = s.traversal;
  r.stat.metric = Metric::Euclidean;
  std::visit(Overloaded{[&](const reduce::Histogram&) { r.stat.reduction = reduce::Histogram{bins}; },
                        [&](const reduce::Count&) { r.stat.reduction = reduce::Count{bins, false}; },
                        [&](const reduce::PerPoint&) { r.stat.reduction = reduce::PerPoint{bins, false}; },
                        [&](const reduce::PairList&) { r.stat.reduction = reduce::PairList{bins, false}; },
                        [](const auto&) {}},
             s.reduction);
  r.why = fmt::format(
      "route: the value is the points' {} with the built-in key's bits (the squared differences summed over the "
      "coordinates in stored order), so the built-in Euclidean point paths run it on key edges {}; every pair "
      "decided by its float64 key as the expression's rule decides it",
      squared ? "squared Euclidean distance" : "Euclidean distance",
      squared ? "equal to the value edges" : "t(e), the least double whose square root rounds to at least e");
  r.a = a.coordinates().to_points();
  if (b) r.b = b->coordinates().to_points();
  // The point paths take finite coordinates (their grids and float32 copies); the generated
  // function bins a NaN nowhere, so a table with one keeps it.
  for (const PointSet* set : {&r.a, b ? &r.b : nullptr}) {
    if (!set) continue;
    for (int d = 0; d < set->dim(); ++d) {
      const std::span<const double> c = set->coord(d);
      if (first_where(c.data(), c.size(), [](double v) { return !std::isfinite(v); }) < c.size()) return std::nullopt;
    }
  }
  return r;
}

}  // namespace twobody
