#include "twobody/detail/expr/cutoff.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "twobody/detail/expr/ops.hpp"

namespace twobody::expr {

namespace {

// Whether node `id` is a − b or b − a of whole rows; of coordinate k when `k` is given.
bool row_difference(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  if (n.op != Op::Sub) return false;
  const Op x = g.nodes[n.arg[0]].op, y = g.nodes[n.arg[1]].op;
  return (x == Op::VecA && y == Op::VecB) || (x == Op::VecB && y == Op::VecA);
}
int coordinate_difference(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  if (n.op != Op::Sub) return -1;
  const Node &x = g.nodes[n.arg[0]], &y = g.nodes[n.arg[1]];
  if (x.index != y.index) return -1;
  if ((x.op == Op::CoordA && y.op == Op::CoordB) || (x.op == Op::CoordB && y.op == Op::CoordA)) return x.index;
  return -1;
}

// t = x^2 or x * x: x, else −1.
int square_of(const Graph& g, int id) {
  const Node& t = g.nodes[id];
  if (t.op == Op::PowInt && t.index == 2) return t.arg[0];
  if (t.op == Op::Mul && t.arg[0] == t.arg[1]) return t.arg[0];
  return -1;
}

// The coordinates whose squared differences an Add tree sums (each once), into `seen`; false when a
// term is anything else.
bool squared_terms(const Graph& g, int id, std::vector<int>& seen) {
  const Node& n = g.nodes[id];
  if (n.op == Op::Add) return squared_terms(g, n.arg[0], seen) && squared_terms(g, n.arg[1], seen);
  const int x = square_of(g, id);
  if (x < 0) return false;
  const int k = coordinate_difference(g, x);
  if (k < 0 || k >= static_cast<int>(seen.size()) || seen[k]) return false;
  seen[k] = 1;
  return true;
}

// sum((a-b)^2) (or of (a-b)*(a-b), b - a as well): the built-in key's sum, whole rows in stored order.
bool is_stored_squared_sum(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  if (n.op != Op::Sum) return false;
  const int x = square_of(g, n.arg[0]);
  return x >= 0 && row_difference(g, x);
}

bool is_squared_distance_at(const Graph& g, int id) {
  if (g.nodes[id].op == Op::Sum) return is_stored_squared_sum(g, id);
  if (g.dim < 1) return false;
  std::vector<int> seen(static_cast<std::size_t>(g.dim), 0);
  if (!squared_terms(g, id, seen)) return false;
  for (int s : seen)
    if (!s) return false;
  return true;
}

// The value of a node of literals and scalar parameters (NaN for anything else), by ops.hpp's own
// operations.
double constant_value(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  if (n.vector) return nan_value();
  if (n.op == Op::Const) return n.value;
  if (n.op == Op::Param) return g.scalars[static_cast<std::size_t>(n.index)];
  if ((n.side & kSidePair) != 0 || is_reduction(n.op) || n.op == Op::ParamVec) return nan_value();
  double x[3] = {0, 0, 0};
  for (int k = 0; k < n.arity(); ++k) x[k] = constant_value(g, n.arg[k]);
  return apply_op(n.op, n.index, x[0], x[1], x[2]);
}

// A comparison x < K, x <= K, K > x or K >= x, K of literals and scalar parameters, finite and
// positive: x's node, K and whether K itself is in. `value` -1: not one.
struct BoundTerm {
  int value = -1;
  double bound = 0;
  bool inclusive = false;
};
BoundTerm bound_term(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  int x = -1, k = -1;
  if (n.op == Op::Less || n.op == Op::LessEq) x = n.arg[0], k = n.arg[1];
  else if (n.op == Op::Greater || n.op == Op::GreaterEq) x = n.arg[1], k = n.arg[0];
  else return {};
  const double K = constant_value(g, k);
  if (!(K > 0) || !std::isfinite(K)) return {};
  return {x, K, n.op == Op::LessEq || n.op == Op::GreaterEq};
}

// Node `id` as D (sqrt over a squared distance) or D², a squared distance being what `squared` says.
template <class Squared>
DistanceForm form_at(const Graph& g, int id, Squared squared) {
  const Node& n = g.nodes[id];
  if (n.op == Op::Sqrt && squared(g, n.arg[0])) return DistanceForm::Distance;
  if (squared(g, id)) return DistanceForm::Squared;
  return DistanceForm::None;
}

// The cutoff one term of a conjunction gives, or NaN.
double term_cutoff(const Graph& g, int id) {
  const BoundTerm t = bound_term(g, id);
  const DistanceForm form = t.value < 0 ? DistanceForm::None : distance_form(g, t.value);
  if (form == DistanceForm::None) return nan_value();
  return form == DistanceForm::Distance ? t.bound : std::sqrt(t.bound);
}

// The least cutoff of the terms of an And tree, or NaN.
double conjunction_cutoff(const Graph& g, int id) {
  const Node& n = g.nodes[id];
  if (n.op == Op::And) {
    const double x = conjunction_cutoff(g, n.arg[0]), y = conjunction_cutoff(g, n.arg[1]);
    if (x != x) return y;
    if (y != y) return x;
    return std::fmin(x, y);
  }
  return term_cutoff(g, id);
}

std::optional<double> finite(double x) {
  if (x == x && std::isfinite(x) && x > 0) return x;
  return std::nullopt;
}

}  // namespace

DistanceForm distance_form(const Graph& g, int id) { return form_at(g, id, is_squared_distance_at); }

DistanceForm key_form(const Compiled& c) { return form_at(c.g, c.g.root, is_stored_squared_sum); }

std::optional<KeyPredicate> key_predicate(const Compiled& c) {
  const BoundTerm t = bound_term(c.g, c.g.root);
  const DistanceForm form = t.value < 0 ? DistanceForm::None : form_at(c.g, t.value, is_stored_squared_sum);
  if (form == DistanceForm::None) return std::nullopt;
  return KeyPredicate{form, t.bound, t.inclusive};
}

std::optional<double> predicate_cutoff(const Compiled& c) {
  const Graph& g = c.g;
  const Node& root = g.nodes[g.root];
  double cut = nan_value();
  if (root.op == Op::Filter) cut = conjunction_cutoff(g, root.arg[0]);
  if (cut != cut && c.result == ValueType::Bool) {
    // (a predicate under a --where: the Filter's value is the predicate)
    cut = conjunction_cutoff(g, root.op == Op::Filter ? root.arg[1] : g.root);
  }
  return finite(cut);
}

std::optional<double> value_cutoff(const Compiled& c, double hi) {
  const Graph& g = c.g;
  const Node& root = g.nodes[g.root];
  const int value = root.op == Op::Filter ? root.arg[1] : g.root;
  const DistanceForm form = distance_form(g, value);
  if (form == DistanceForm::None || !(hi > 0)) return std::nullopt;
  return finite(form == DistanceForm::Distance ? hi : std::sqrt(hi));
}

namespace {

// The text of a node with a and b swapped or not, operands of commutative operations sorted.
class SymmetricText {
 public:
  SymmetricText(const Graph& g, bool swap) : g_(g), swap_(swap) {}

  // `even`: the node is the direct operand of an even function, so a − b may be written either way.
  std::string text(int id, bool even) {
    const auto key = std::make_pair(id, even);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::string t = make(id, even);
    memo_.emplace(key, t);
    return t;
  }

 private:
  // (fmt rather than operator+: GCC 12 at -O3 warns falsely of overlapping copies in "(" + s.)
  const char* side(Op op, Op a) const { return (op == a) != swap_ ? "A" : "B"; }
  static std::string sorted(const char* op, std::string x, std::string y) {
    if (y < x) std::swap(x, y);
    return fmt::format("({} {} {})", x, op, y);
  }
  std::string make(int id, bool even) {
    const Node& n = g_.nodes[static_cast<std::size_t>(id)];
    const auto arg = [&](int k, bool e = false) { return text(n.arg[k], e); };
    switch (n.op) {
      case Op::Const: {
        std::uint64_t u;
        std::memcpy(&u, &n.value, sizeof u);
        return fmt::format("{}{}", u, n.boolean ? 'b' : 'c');
      }
      case Op::Param: return fmt::format("${}", n.index);
      case Op::ParamVec: return fmt::format("$v{}", n.index);
      case Op::ColA:
      case Op::ColB: return fmt::format("{}.c{}", side(n.op, Op::ColA), n.index);
      case Op::CoordA:
      case Op::CoordB: return fmt::format("{}[{}]", side(n.op, Op::CoordA), n.index);
      case Op::VecA:
      case Op::VecB: return side(n.op, Op::VecA);
      case Op::Sub: {
        std::string x = arg(0), y = arg(1);
        if (even && y < x) std::swap(x, y);
        return fmt::format("({} - {})", x, y);
      }
      case Op::Abs: return fmt::format("abs({})", arg(0, true));
      case Op::PowInt: return fmt::format("({} ^ {})", arg(0, n.index % 2 == 0), n.index);
      case Op::Mul:
        if (n.arg[0] == n.arg[1]) return fmt::format("({} * same)", arg(0, true));
        return sorted("*", arg(0), arg(1));
      case Op::Add: return sorted("+", arg(0), arg(1));
      case Op::And: return sorted("and", arg(0), arg(1));
      case Op::Or: return sorted("or", arg(0), arg(1));
      case Op::Equal: return sorted("==", arg(0), arg(1));
      case Op::NotEqual: return sorted("!=", arg(0), arg(1));
      case Op::Greater: return fmt::format("({} < {})", arg(1), arg(0));
      case Op::GreaterEq: return fmt::format("({} <= {})", arg(1), arg(0));
      default: break;
    }
    std::string s = fmt::format("op{}.{}(", static_cast<int>(n.op), n.index);
    for (int k = 0; k < n.arity(); ++k) s += fmt::format("{}{}", k ? ", " : "", arg(k));
    s += ')';
    return s;
  }

  const Graph& g_;
  bool swap_;
  std::map<std::pair<int, bool>, std::string> memo_;
};

}  // namespace

bool is_symmetric(const Compiled& c) {
  if (c.g.columns_a != c.g.columns_b) return false;
  return SymmetricText(c.g, false).text(c.g.root, false) == SymmetricText(c.g, true).text(c.g.root, false);
}

}  // namespace twobody::expr
