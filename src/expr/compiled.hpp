#pragma once
// A parsed pair expression and what the analysis found (docs/expressions.md, "How it runs"):
// which nodes are per-point columns hoisted out of the pair loop, the reductions over the
// dimension of both rows (the normal form: finalise(R_1 … R_m, row scalars), m ≤ 4), the class
// and the traits the backends choose by.
#include <string>
#include <vector>

#include "twobody/detail/expr/ir.hpp"
#include "twobody/detail/expr/syntax.hpp"
#include "twobody/expression.hpp"

namespace twobody::expr {

struct Compiled {
  Source text, where;  // where.text empty: no predicate
  Graph g;
  ValueType result = ValueType::Scalar;
  FunctionClass function_class = FunctionClass::Pointwise;
  // Nodes of one row (a's or b's, parameters allowed) that a pair node or the root reads: each a
  // column of n values (a Scalar) or n × d values (a Vector) computed once per point before the
  // pair loop. Leaves (a.t, a[2], a) are the table's own columns. Topological order.
  std::vector<int> rows_a, rows_b;
  // Nodes of parameters and literals only that a row or pair node reads: evaluated once a run.
  std::vector<int> constants;
  // Nodes of both rows, topological order, and among them the reductions over the dimension.
  std::vector<int> pair_nodes, pair_reductions;
  int columns = 0;  // Pointwise: per-point scalar columns the pair part reads (the larger side's)
  bool squared_distance = false;  // the root is Σ_k (a_k − b_k)², d ≤ 3: the built-in Euclidean key
  bool sqrt_top = false;          // the root is sqrt(·): monotone, a backend may bin its argument
  std::string canonical;

  const Node& node(int id) const { return g.nodes[static_cast<std::size_t>(id)]; }
  bool is_pair(int id) const { return (node(id).side & kSidePair) == kSidePair; }
};

// The analysis of a built graph; Error(Config) (at the column) for a reduction over the
// dimension that holds another of both rows, or more than four of them.
Compiled analyse(Source text, Source where, Graph g);

}  // namespace twobody::expr
