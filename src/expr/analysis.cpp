// Hoisting, the normal form, the class and the canonical text of a pair expression
// (compiled.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "twobody/detail/expr/build.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/error.hpp"

namespace twobody::expr {

namespace {

std::string op_symbol(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Less: return "<";
    case Op::LessEq: return "<=";
    case Op::Greater: return ">";
    case Op::GreaterEq: return ">=";
    case Op::Equal: return "==";
    case Op::NotEqual: return "!=";
    case Op::And: return "and";
    case Op::Or: return "or";
    default: return "?";
  }
}

std::string function_name(Op op) {
  switch (op) {
    case Op::Pow: return "pow";
    case Op::Abs: return "abs";
    case Op::Sqrt: return "sqrt";
    case Op::Exp: return "exp";
    case Op::Log: return "log";
    case Op::Min2:
    case Op::ReduceMin: return "min";
    case Op::Max2:
    case Op::ReduceMax: return "max";
    case Op::Sum: return "sum";
    case Op::If: return "if";
    case Op::Filter: return "where";
    default: return "?";
  }
}

// The nodes reachable from the root, in topological (id) order.
std::vector<int> reachable(const Graph& g) {
  std::vector<char> seen(g.nodes.size(), 0);
  std::function<void(int)> visit = [&](int id) {
    if (seen[id]) return;
    seen[id] = 1;
    for (int a : g.nodes[id].arg)
      if (a >= 0) visit(a);
  };
  visit(g.root);
  std::vector<int> out;
  for (std::size_t k = 0; k < seen.size(); ++k)
    if (seen[k]) out.push_back(static_cast<int>(k));
  return out;
}

bool is_difference_of_rows(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  return n.op == Op::Sub && g.nodes[n.arg[0]].op == Op::VecA && g.nodes[n.arg[1]].op == Op::VecB;
}

// Σ_k (a_k − b_k)² written as sum((a-b)^2) or sum((a-b)*(a-b)) (or dot(a-b, a-b)).
bool is_squared_distance(const Graph& g) {
  const Node& r = g.nodes[g.root];
  if (r.op != Op::Sum || g.dim > 3) return false;
  const Node& t = g.nodes[r.arg[0]];
  if (t.op == Op::PowInt && t.index == 2) return is_difference_of_rows(g, t.arg[0]);
  if (t.op == Op::Mul && t.arg[0] == t.arg[1]) return is_difference_of_rows(g, t.arg[0]);
  return false;
}

}  // namespace

std::string canonical_text(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  const auto arg = [&](int k) { return canonical_text(g, n.arg[k]); };
  switch (n.op) {
    case Op::Const: return n.boolean ? (n.value != 0 ? "(0 == 0)" : "(0 != 0)") : fmt::format("{}", n.value);
    case Op::Param:
    case Op::ParamVec: return fmt::format("${}", n.index);
    case Op::ColA: return "a." + g.columns_a[n.index];
    case Op::ColB: return "b." + g.columns_b[n.index];
    case Op::CoordA: return fmt::format("a[{}]", n.index);
    case Op::CoordB: return fmt::format("b[{}]", n.index);
    case Op::VecA: return "a";
    case Op::VecB: return "b";
    case Op::Neg: return "(-" + arg(0) + ")";
    case Op::Not: return "(not " + arg(0) + ")";
    case Op::PowInt: return fmt::format("({} ^ {})", arg(0), n.index);
    default: break;
  }
  if (n.op == Op::Add || n.op == Op::Sub || n.op == Op::Mul || n.op == Op::Div || n.op == Op::And || n.op == Op::Or ||
      (n.op >= Op::Less && n.op <= Op::NotEqual))
    return fmt::format("({} {} {})", arg(0), op_symbol(n.op), arg(1));
  std::string s = function_name(n.op) + "(";
  for (int k = 0; k < n.arity(); ++k) s += (k ? ", " : "") + arg(k);
  return s + ")";
}

Compiled analyse(Source text, Source where, Graph g) {
  Compiled c;
  c.text = std::move(text);
  c.where = std::move(where);
  c.g = std::move(g);
  const Graph& gr = c.g;
  const auto fail = [&](const Node& n, const std::string& what) { fail_at(n.origin ? c.where : c.text, n.column, what); };
  const std::vector<int> live = reachable(gr);
  // Consumers: which kinds of node read each node.
  std::vector<std::uint8_t> read_by(gr.nodes.size(), 0);
  for (int id : live)
    for (int a : gr.nodes[id].arg)
      if (a >= 0) read_by[a] |= gr.nodes[id].side | kSideParam;  // a bit set: read by a node of that side
  const auto side = [&](int id) { return gr.nodes[id].side & kSidePair; };
  for (int id : live) {
    const Node& n = gr.nodes[id];
    const bool root = id == gr.root;
    const bool read_by_pair = (read_by[id] & kSidePair) == kSidePair || root;
    if (side(id) == kSidePair) {
      c.pair_nodes.push_back(id);
      if (is_reduction(n.op)) c.pair_reductions.push_back(id);
    } else if (side(id) == kSideA || side(id) == kSideB) {
      // A row node read by a pair node (or the root): a per-point column.
      if (read_by_pair) (side(id) == kSideA ? c.rows_a : c.rows_b).push_back(id);
    } else if (n.op != Op::Const && read_by[id] != 0) {
      c.constants.push_back(id);
    } else if (n.op != Op::Const && root) {
      c.constants.push_back(id);
    }
  }
  // The normal form: no pair reduction inside another, at most four.
  for (int r : c.pair_reductions) {
    std::vector<int> stack{gr.nodes[r].arg[0]};
    std::set<int> seen;
    while (!stack.empty()) {
      const int id = stack.back();
      stack.pop_back();
      if (!c.is_pair(id) || !seen.insert(id).second) continue;
      if (is_reduction(gr.nodes[id].op))
        fail(gr.nodes[id], "a reduction over the dimension inside another, both of a and b (d² work a pair): "
                           "reduce one row first or write the two reductions side by side");
      for (int a : gr.nodes[id].arg)
        if (a >= 0) stack.push_back(a);
    }
  }
  if (c.pair_reductions.size() > 4)
    fail(gr.nodes[c.pair_reductions[4]],
         fmt::format("{} reductions over the dimension of both a and b; at most 4 (each holds registers a pair)",
                     c.pair_reductions.size()));
  const bool vectors = std::any_of(c.pair_nodes.begin(), c.pair_nodes.end(), [&](int id) { return gr.nodes[id].vector; });
  if (!vectors) {
    c.function_class = FunctionClass::Pointwise;
    c.columns = static_cast<int>(std::max(c.rows_a.size(), c.rows_b.size()));
  } else {
    c.function_class = FunctionClass::Decomposable;
    if (c.pair_reductions.size() == 1) {
      const Node& r = gr.nodes[c.pair_reductions[0]];
      const Node& m = gr.nodes[r.arg[0]];
      if (r.op == Op::Sum && m.op == Op::Mul && m.vector) {
        const int x = side(m.arg[0]), y = side(m.arg[1]);
        if ((x == kSideA && y == kSideB) || (x == kSideB && y == kSideA)) c.function_class = FunctionClass::DotLike;
      }
    }
  }
  c.result = gr.nodes[gr.root].boolean ? ValueType::Bool : ValueType::Scalar;
  c.squared_distance = is_squared_distance(gr);
  c.sqrt_top = gr.nodes[gr.root].op == Op::Sqrt;
  c.canonical = canonical_text(gr, gr.root);
  return c;
}

}  // namespace twobody::expr
