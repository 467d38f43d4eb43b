#pragma once
// A pair expression whose value is the points' Euclidean distance, or its square, computed with
// the built-in key's bits (expr::key_form: sum((a-b)^2) in stored order, under sqrt for the
// distance) runs as the built-in Euclidean statistic on key edges (engine/key_edge_run.hpp):
// the cell grids, the float32 proxies with their guard bands and the GPU's counting tiles instead
// of a generated function evaluated in float64 on every pair. The bins are the expression's:
//   distance: fl(sqrt(key)) >= e  <=>  key >= t(e), t(e) the least double whose correctly rounded
//             square root is at least e (found by bisection over the bit patterns; sqrt is
//             monotone), so each key edge is the exact image of a value edge;
//   square:   the value is the key, so the key edges are the value edges themselves.
// Counts, histograms and per-point counts take it; pair lists of the distance too (the point
// paths report sqrt(key), the expression's own value). So do the counts and per-point counts of a
// predicate D < K or D <= K (expr::key_predicate): the values below K, or up to it. Not a
// square's pair list (its value would be the distance), nor a --where, sums or per-point values.
#include <optional>
#include <string>
#include <vector>

#include "twobody/engine.hpp"
#include "twobody/expression.hpp"
#include "twobody/pair_table.hpp"
#include "twobody/points.hpp"

namespace twobody {

struct PointsRoute {
  Statistic stat;            // the built-in Euclidean statistic: its edges in distance give the reach
  std::vector<double> keys;  // the expression's edges as keys
  std::string why;           // for the plan
  PointSet a, b;             // the tables' coordinates (b empty for one table)
};

// The route, when the expression, the statistic and the run take it; nullopt otherwise (the
// generated function then runs). `value_edges` are the expression's edges as its plan holds them
// (a range's include_hi applied).
std::optional<PointsRoute> points_route(const PairExpression& f, const Statistic& s, const std::vector<double>& value_edges,
                                        const PairTable& a, const PairTable* b, const RunOptions& opt);

// t(e) above: the least double t with fl(sqrt(t)) >= e, for finite e > 0 (+inf when none is finite).
double least_key_of_root(double e);

}  // namespace twobody
