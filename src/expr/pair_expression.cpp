// The public face of the front end (twobody/expression.hpp).
#include <fmt/format.h>

#include "twobody/detail/expr/build.hpp"
#include "twobody/detail/expr/compiled.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"

namespace twobody {

const char* to_string(FunctionClass c) {
  switch (c) {
    case FunctionClass::Pointwise: return "pointwise";
    case FunctionClass::Decomposable: return "decomposable";
    case FunctionClass::DotLike: return "dot-like";
  }
  return "?";
}

CpuCodegen parse_cpu_codegen(std::string_view s) {
  if (s == "auto") return CpuCodegen::Auto;
  if (s == "on") return CpuCodegen::On;
  if (s == "off") return CpuCodegen::Off;
  throw_config(fmt::format("--cpu-codegen {}: auto, on or off", s));
}

PairExpression PairExpression::parse(std::string_view text, const Schema& a, const Schema* b,
                                     const ExpressionParams& params, std::string_view where) {
  expr::Source src{"pair function", std::string(text)};
  expr::Source pred{"where predicate", std::string(where)};
  const bool has_where = !where.empty();
  expr::Graph g = expr::build_graph(src, has_where ? &pred : nullptr, a, b ? *b : a, params);
  PairExpression e;
  e.c_ = std::make_shared<const expr::Compiled>(expr::analyse(std::move(src), std::move(pred), std::move(g)));
  return e;
}

ValueType PairExpression::result() const { return c_->result; }
FunctionClass PairExpression::function_class() const { return c_->function_class; }
std::string PairExpression::canonical() const { return c_->canonical; }
const std::string& PairExpression::text() const { return c_->text.text; }
const std::string& PairExpression::where() const { return c_->where.text; }

std::string PairExpression::explain() const {
  const expr::Compiled& c = *c_;
  std::string s = fmt::format("pair function: {}\n", c.text.text);
  if (!c.where.text.empty()) s += fmt::format("where: {}\n", c.where.text);
  s += fmt::format("canonical: {}\n", c.canonical);
  s += fmt::format("value: {}; class: {}", c.result == ValueType::Bool ? "Bool (a predicate)" : "Scalar", to_string(c.function_class));
  if (c.function_class == FunctionClass::Pointwise) s += fmt::format(" ({} per-point columns a side)", c.columns);
  else s += fmt::format(" ({} reduction(s) over the dimension of both a and b)", c.pair_reductions.size());
  s += "\n";
  for (std::size_t k = 0; k < c.g.param_names.size(); ++k) {
    if (c.g.vectors[k].empty()) s += fmt::format("parameter ${} = {} = {}\n", k, c.g.param_names[k], c.g.scalars[k]);
    else s += fmt::format("parameter ${} = {} (a vector of {})\n", k, c.g.param_names[k], c.g.vectors[k].size());
  }
  const auto rows = [&](const std::vector<int>& ids, char side) {
    for (int id : ids) {
      const expr::Node& n = c.node(id);
      const bool leaf = n.op == expr::Op::ColA || n.op == expr::Op::ColB || n.op == expr::Op::CoordA ||
                        n.op == expr::Op::CoordB || n.op == expr::Op::VecA || n.op == expr::Op::VecB;
      s += fmt::format("per point of {}: {} ({}{})\n", side, expr::canonical_text(c.g, id), n.vector ? "a row of d" : "a scalar",
                       leaf ? ", the data" : ", computed once a point");
    }
  };
  rows(c.rows_a, 'a');
  rows(c.rows_b, 'b');
  if (c.squared_distance) s += "trait: the squared Euclidean distance (the built-in key's bits)\n";
  if (c.sqrt_top) s += "trait: sqrt at the top (monotone)\n";
  s += "evaluation: the float64 rule on every pair (docs/exactness.md)\n";
  return s;
}

}  // namespace twobody
