// Name resolution, type checking and folding (ir.hpp). Types: a node is a Scalar or a Vector of
// length d, and a value or a Bool. Arithmetic, abs, sqrt, exp, log, pow, min(x, y), max(x, y),
// if and the comparisons map over Vectors, a Scalar broadcast against a Vector; sum, min(v),
// max(v), dot, norm and mean reduce a Vector to a Scalar.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "twobody/detail/expr/build.hpp"
#include "twobody/detail/expr/ops.hpp"
#include "twobody/error.hpp"
#include "twobody/pair_table.hpp"

namespace twobody::expr {

int Graph::intern(const Node& n) {
  std::uint64_t bits;
  std::memcpy(&bits, &n.value, sizeof bits);
  const auto key = std::make_tuple(static_cast<int>(n.op), n.arg[0], n.arg[1], n.arg[2], bits, n.index, n.vector, n.boolean);
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  nodes.push_back(n);
  const int id = static_cast<int>(nodes.size()) - 1;
  index_.emplace(key, id);
  return id;
}

namespace {

constexpr const char* kFunctions = "abs, sqrt, exp, log, pow, min, max, sum, dot, norm, mean, if";

class Builder {
 public:
  Builder(Graph& g, const Schema& a, const Schema& b, const ExpressionParams& p) : g_(g), a_(a), b_(b), p_(p) {}

  int build(const Source& src, const Syntax& s, std::uint8_t origin) {
    src_ = &src;
    origin_ = origin;
    return node(s);
  }

 private:
  [[noreturn]] void fail(int column, const std::string& what) const { fail_at(*src_, column, what); }

  static const char* type_name(const Node& n) {
    if (n.boolean) return n.vector ? "a Vector of Bools" : "a Bool";
    return n.vector ? "a Vector" : "a Scalar";
  }

  // A node from its op and arguments: shape and side from the arguments, folded when constant.
  int make(Op op, std::initializer_list<int> args, int column, bool boolean, int index = 0) {
    Node n;
    n.op = op;
    n.boolean = boolean;
    n.index = index;
    n.column = column;
    n.origin = origin_;
    int k = 0;
    for (int a : args) {
      n.arg[k++] = a;
      n.side |= g_.nodes[a].side;
      n.vector = n.vector || g_.nodes[a].vector;
    }
    if (is_reduction(op)) n.vector = false;
    // Fold: every argument a literal scalar; a parameter is a run-time argument and stays.
    bool constant = true;
    for (int a : args) constant = constant && g_.nodes[a].op == Op::Const;
    if (constant && !is_reduction(op)) {
      const auto v = [&](int i) { return i < k ? g_.nodes[n.arg[i]].value : 0.0; };
      Node c;
      c.op = Op::Const;
      c.boolean = boolean;
      c.value = apply_op(op, index, v(0), v(1), v(2));
      c.column = column;
      return g_.intern(c);
    }
    return g_.intern(n);
  }
  int constant(double v, int column) {
    Node c;
    c.op = Op::Const;
    c.value = v;
    c.column = column;
    return g_.intern(c);
  }
  const Node& at(int id) const { return g_.nodes[id]; }

  void need_value(int id, const Syntax& s, const char* what) const {
    if (at(id).boolean) fail(s.start, fmt::format("{} takes values, not {}", what, type_name(at(id))));
  }
  void need_bool(int id, const Syntax& s, const char* what) const {
    if (!at(id).boolean) fail(s.start, fmt::format("{} takes Bools (comparisons), not {}", what, type_name(at(id))));
  }

  int parameter(const std::string& name, int column) {
    const auto it = std::find(g_.param_names.begin(), g_.param_names.end(), name);
    int slot = static_cast<int>(it - g_.param_names.begin());
    Node n;
    n.side = kSideParam;
    n.column = column;
    if (const auto s = p_.scalars.find(name); s != p_.scalars.end()) {
      if (it == g_.param_names.end()) {
        g_.param_names.push_back(name);
        g_.scalars.push_back(s->second);
        g_.vectors.emplace_back();
      }
      n.op = Op::Param;
    } else {
      const auto& v = p_.vectors.at(name);
      if (it == g_.param_names.end()) {
        g_.param_names.push_back(name);
        g_.scalars.push_back(0.0);
        g_.vectors.push_back(v);
      }
      n.op = Op::ParamVec;
      n.vector = true;
    }
    n.index = slot;
    return g_.intern(n);
  }

  std::string known_names() const {
    std::vector<std::string> params;
    for (const auto& [k, v] : p_.scalars) params.push_back(k);
    for (const auto& [k, v] : p_.vectors) params.push_back(k);
    std::vector<std::string> cols = a_.names;
    for (const auto& n : b_.names)
      if (std::find(cols.begin(), cols.end(), n) == cols.end()) cols.push_back(n);
    return fmt::format("parameters: {}; columns of a and b: {}", params.empty() ? "none" : fmt::format("{}", fmt::join(params, ", ")),
                       cols.empty() ? "none" : fmt::format("{}", fmt::join(cols, ", ")));
  }

  int name(const Syntax& s) {
    if (s.text == "a" || s.text == "b") {
      Node n;
      n.op = s.text == "a" ? Op::VecA : Op::VecB;
      n.vector = true;
      n.side = s.text == "a" ? kSideA : kSideB;
      n.column = s.column;
      return g_.intern(n);
    }
    if (s.text == "d") return constant(g_.dim, s.column);
    if (p_.scalars.count(s.text) || p_.vectors.count(s.text)) return parameter(s.text, s.column);
    if (s.text == "if" || s.text == "not" || s.text == "and" || s.text == "or")
      fail(s.column, fmt::format("'{}' is a keyword", s.text));
    fail(s.column, fmt::format("unknown name '{}' ({})", s.text, known_names()));
  }

  int member(const Syntax& s) {
    const Syntax& base = *s.children[0];
    if (base.kind != SyntaxKind::Name || (base.text != "a" && base.text != "b"))
      fail(s.column, fmt::format("only a and b have columns: write a.{} or b.{}", s.text, s.text));
    const bool is_a = base.text == "a";
    const Schema& sc = is_a ? a_ : b_;
    const int k = sc.find(s.text);
    if (k < 0)
      fail(static_cast<int>(s.index), fmt::format("{} has no column '{}' ({})", base.text, s.text,
                                 sc.names.empty() ? "its data names no columns"
                                                  : fmt::format("its columns: {}", fmt::join(sc.names, ", "))));
    Node n;
    n.op = is_a ? Op::ColA : Op::ColB;
    n.side = is_a ? kSideA : kSideB;
    n.index = k;
    n.column = s.column;
    return g_.intern(n);
  }

  int index(const Syntax& s) {
    const Syntax& base = *s.children[0];
    if (base.kind != SyntaxKind::Name || (base.text != "a" && base.text != "b"))
      fail(s.column, "only a and b are indexed: write a[0], b[2]");
    if (s.index >= g_.dim)
      fail(s.column + 1, fmt::format("index {} is beyond the dimension {} ({}[0] … {}[{}])", s.index, g_.dim, base.text,
                                     base.text, g_.dim - 1));
    Node n;
    const bool is_a = base.text == "a";
    n.op = is_a ? Op::CoordA : Op::CoordB;
    n.side = is_a ? kSideA : kSideB;
    n.index = static_cast<int>(s.index);
    n.column = base.column;
    return g_.intern(n);
  }

  int call(const Syntax& s) {
    const std::string& f = s.text;
    const std::size_t n = s.children.size();
    const auto arity = [&](std::size_t want, const char* how) {
      if (n != want) fail(s.column, fmt::format("{} takes {} ({}), got {}", f, how, want, n));
    };
    const auto arg = [&](std::size_t k) { return node(*s.children[k]); };
    const auto value_arg = [&](std::size_t k) {
      const int id = arg(k);
      need_value(id, *s.children[k], f.c_str());
      return id;
    };
    const auto vector_arg = [&](std::size_t k) {
      const int id = value_arg(k);
      if (!at(id).vector)
        fail(s.children[k]->start, fmt::format("{} reduces a Vector over the dimension; this is a Scalar", f));
      return id;
    };
    if (f == "abs" || f == "sqrt" || f == "exp" || f == "log") {
      arity(1, "one argument");
      const Op op = f == "abs" ? Op::Abs : f == "sqrt" ? Op::Sqrt : f == "exp" ? Op::Exp : Op::Log;
      return make(op, {value_arg(0)}, s.column, false);
    }
    if (f == "pow") {
      arity(2, "two arguments");
      return make(Op::Pow, {value_arg(0), value_arg(1)}, s.column, false);
    }
    if (f == "min" || f == "max") {
      if (n == 1) return make(f == "min" ? Op::ReduceMin : Op::ReduceMax, {vector_arg(0)}, s.column, false);
      if (n != 2) fail(s.column, fmt::format("{} takes one Vector (its least element) or two values, got {} arguments", f, n));
      return make(f == "min" ? Op::Min2 : Op::Max2, {value_arg(0), value_arg(1)}, s.column, false);
    }
    if (f == "sum") {
      arity(1, "one Vector");
      return make(Op::Sum, {vector_arg(0)}, s.column, false);
    }
    if (f == "mean") {
      arity(1, "one Vector");
      return make(Op::Div, {make(Op::Sum, {vector_arg(0)}, s.column, false), constant(g_.dim, s.column)}, s.column, false);
    }
    if (f == "norm") {
      arity(1, "one Vector");
      const int v = vector_arg(0);
      return make(Op::Sqrt, {make(Op::Sum, {make(Op::Mul, {v, v}, s.column, false)}, s.column, false)}, s.column, false);
    }
    if (f == "dot") {
      arity(2, "two Vectors");
      const int u = vector_arg(0), v = vector_arg(1);
      return make(Op::Sum, {make(Op::Mul, {u, v}, s.column, false)}, s.column, false);
    }
    if (f == "if") {
      arity(3, "a condition and two values");
      const int c = arg(0);
      need_bool(c, *s.children[0], "if's condition");
      const int x = arg(1), y = arg(2);
      if (at(x).boolean != at(y).boolean)
        fail(s.children[2]->start, fmt::format("if's branches must be alike: {} and {}", type_name(at(x)), type_name(at(y))));
      return make(Op::If, {c, x, y}, s.column, at(x).boolean);
    }
    if (f == "a" || f == "b" || f == "d" || p_.scalars.count(f) || p_.vectors.count(f))
      fail(s.column, fmt::format("'{}' is not a function", f));
    fail(s.column, fmt::format("unknown function '{}' (functions: {})", f, kFunctions));
  }

  int binary(const Syntax& s) {
    const std::string& o = s.text;
    const int x = node(*s.children[0]);
    const int y = node(*s.children[1]);
    if (o == "and" || o == "or") {
      need_bool(x, *s.children[0], o.c_str());
      need_bool(y, *s.children[1], o.c_str());
      return make(o == "and" ? Op::And : Op::Or, {x, y}, s.column, true);
    }
    const auto both_values = [&] {
      if (at(x).boolean || at(y).boolean)
        fail(s.column, fmt::format("'{}' of {} and {}: arithmetic and comparisons take values", o, type_name(at(x)), type_name(at(y))));
    };
    if (o == "<" || o == "<=" || o == ">" || o == ">=" || o == "==" || o == "!=") {
      both_values();
      const Op op = o == "<" ? Op::Less : o == "<=" ? Op::LessEq : o == ">" ? Op::Greater : o == ">=" ? Op::GreaterEq
                  : o == "==" ? Op::Equal : Op::NotEqual;
      return make(op, {x, y}, s.column, true);
    }
    both_values();
    if (o == "^") {
      // A literal integer exponent is code: repeated multiplication (a negative one, its reciprocal).
      const Syntax* e = s.children[1].get();
      bool negative = false;
      if (e->kind == SyntaxKind::Unary && e->text == "-") {
        negative = true;
        e = e->children[0].get();
      }
      if (e->kind == SyntaxKind::Number && e->integer && e->value <= 64) {
        const int k = static_cast<int>(e->value);
        return make(Op::PowInt, {x}, s.column, false, negative ? -k : k);
      }
      return make(Op::Pow, {x, y}, s.column, false);
    }
    const Op op = o == "+" ? Op::Add : o == "-" ? Op::Sub : o == "*" ? Op::Mul : Op::Div;
    return make(op, {x, y}, s.column, false);
  }

  int node(const Syntax& s) {
    switch (s.kind) {
      case SyntaxKind::Number: return constant(s.value, s.column);
      case SyntaxKind::Name: return name(s);
      case SyntaxKind::Member: return member(s);
      case SyntaxKind::Index: return index(s);
      case SyntaxKind::Call: return call(s);
      case SyntaxKind::Unary: {
        const int x = node(*s.children[0]);
        if (s.text == "not") {
          need_bool(x, *s.children[0], "not");
          return make(Op::Not, {x}, s.column, true);
        }
        need_value(x, *s.children[0], "'-'");
        return make(Op::Neg, {x}, s.column, false);
      }
      case SyntaxKind::Binary: return binary(s);
    }
    return -1;
  }

  Graph& g_;
  const Schema& a_;
  const Schema& b_;
  const ExpressionParams& p_;
  const Source* src_ = nullptr;
  std::uint8_t origin_ = 0;
};

// The top must be a Scalar: a value or a predicate.
void check_top(const Source& src, const Graph& g, int id, const Syntax& s) {
  const Node& n = g.nodes[id];
  if (!n.vector) return;
  if (n.boolean) fail_at(src, s.start, "the expression is a Vector of Bools: compare scalars; reduce the vectors first");
  fail_at(src, s.start, "the expression is a Vector: reduce it with sum, dot, norm, min, max or mean");
}

void check_params(const ExpressionParams& p, int dim) {
  const auto check_name = [](const std::string& n) {
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') ||
        !std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      throw_config(fmt::format("parameter name '{}' is not a name (letters, digits and '_', not starting with a digit)", n));
    for (const char* reserved : {"a", "b", "d", "if", "and", "or", "not", "abs", "sqrt", "exp", "log", "pow", "min", "max",
                                 "sum", "dot", "norm", "mean"})
      if (n == reserved) throw_config(fmt::format("parameter name '{}' is taken by the language", n));
  };
  for (const auto& [n, v] : p.scalars) {
    check_name(n);
    if (!std::isfinite(v)) throw_config(fmt::format("parameter {} is not finite ({})", n, v));
    if (p.vectors.count(n)) throw_config(fmt::format("parameter {} is given twice (a scalar and a vector)", n));
  }
  for (const auto& [n, v] : p.vectors) {
    check_name(n);
    if (static_cast<int>(v.size()) != dim)
      throw_config(fmt::format("vector parameter {} has {} values; the points have dimension {}", n, v.size(), dim));
    for (double x : v)
      if (!std::isfinite(x)) throw_config(fmt::format("vector parameter {} has a non-finite value ({})", n, x));
  }
}

}  // namespace

Graph build_graph(const Source& text, const Source* where, const Schema& a, const Schema& b,
                  const ExpressionParams& params) {
  if (a.dim < 1) throw_config("a pair expression needs points of at least one coordinate");
  if (b.dim != a.dim) throw_config(fmt::format("the two sets' dimensions differ ({} and {})", a.dim, b.dim));
  check_params(params, a.dim);
  Graph g;
  g.dim = a.dim;
  g.columns_a = a.names;
  g.columns_b = b.names;
  Builder builder(g, a, b, params);
  const auto top = parse_syntax(text);
  int root = builder.build(text, *top, 0);
  check_top(text, g, root, *top);
  if (where) {
    const auto w = parse_syntax(*where);
    const int pred = builder.build(*where, *w, 1);
    check_top(*where, g, pred, *w);
    if (!g.nodes[pred].boolean) fail_at(*where, w->start, "the predicate is a value: compare it (x < y, x == y)");
    Node f;
    f.op = Op::Filter;
    f.arg[0] = pred;
    f.arg[1] = root;
    f.side = static_cast<std::uint8_t>(g.nodes[pred].side | g.nodes[root].side);
    f.boolean = g.nodes[root].boolean;
    root = g.intern(f);
  }
  g.root = root;
  return g;
}

}  // namespace twobody::expr
