// Pair expressions over NumPy arrays (twobody/expression.hpp): a table of the call's coordinates
// and named columns, the expression parsed against it, the run with the GIL released, and the
// table `twobody custom` writes for the same run (or, emit "matrix", every pair's value).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"
#include "twobody/matrices.hpp"
#include "twobody/pair_table.hpp"

namespace twobody::python {

namespace {

// Coordinates (an (n, d) array) and named columns ({name: 1-D array}, each of n values).
PairTable to_table(nb::handle coordinates, const nb::dict& named, const std::string& name) {
  VectorSet v = to_vectors(coordinates, name);
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  for (auto [key, column] : named) {
    names.push_back(nb::cast<std::string>(key));
    columns.push_back(to_doubles(column, fmt::format("{} column '{}'", name, names.back())));
    if (columns.back().size() != v.size())
      throw_input(fmt::format("{} column '{}' has {} values for {} points", name, names.back(), columns.back().size(),
                              v.size()));
  }
  return PairTable(std::move(v), std::move(names), std::move(columns));
}

ExpressionParams to_params(const nb::dict& scalars, const nb::dict& vectors) {
  ExpressionParams p;
  for (auto [key, value] : scalars) p.scalars[nb::cast<std::string>(key)] = nb::cast<double>(value);
  for (auto [key, value] : vectors) {
    const std::string name = nb::cast<std::string>(key);
    p.vectors[name] = to_doubles(value, fmt::format("parameter '{}'", name));
  }
  return p;
}

// A call as python/twobody/_expressions.py passes it: {"data", "named", "data2", "named2", "pair",
// "where", "scalars", "vectors", "emit", "edges", "per_point"}, the parsed expression and the
// statistic its output needs.
struct Call {
  PairTable a, b;
  bool cross = false;
  PairExpression f;
  ExpressionOutput out;
  Statistic st;
};

// The tables and the parsed expression (emit "matrix" needs no statistic).
Call to_expression(const nb::dict& c) {
  Call call;
  call.cross = !c["data2"].is_none();
  call.a = to_table(c["data"], nb::cast<nb::dict>(c["named"]), "data");
  if (call.cross) call.b = to_table(c["data2"], nb::cast<nb::dict>(c["named2"]), "data2");
  const ExpressionParams params = to_params(nb::cast<nb::dict>(c["scalars"]), nb::cast<nb::dict>(c["vectors"]));
  call.f = PairExpression::parse(nb::cast<std::string>(c["pair"]), call.a.schema(), call.cross ? &call.b.schema() : nullptr,
                                 params, nb::cast<std::string>(c["where"]));
  return call;
}

Call to_call(const nb::dict& c) {
  Call call = to_expression(c);
  call.out.emit = parse_expression_emit(nb::cast<std::string>(c["emit"]));
  call.out.per_point = nb::cast<std::string>(c["per_point"]);
  if (!c["edges"].is_none()) call.out.range = Binning::of_values(nb::cast<std::vector<double>>(c["edges"]));
  call.st = expression_statistic(call.f, call.cross, call.out);
  return call;
}

nb::dict custom_py(const nb::dict& c, const std::string& codegen, const nb::dict& run) {
  const Call call = to_call(c);
  const RunOptions opt = to_run_options(run);
  const CpuCodegen cg = parse_cpu_codegen(codegen);
  const Result r = without_gil([&] { return run_expression(call.f, call.st, call.a, call.cross ? &call.b : nullptr, opt, cg); });
  return to_python(expression_table(call.f, call.st, r, call.out));
}

// What the run would do, without running it: the expression's analysis and the run's plan.
std::string explain_custom_py(const nb::dict& c, const std::string& codegen, const nb::dict& run) {
  const Call call = to_call(c);
  return explain_expression(call.f, call.st, call.a, call.cross ? &call.b : nullptr, to_run_options(run),
                            parse_cpu_codegen(codegen));
}

// emit "matrix": every pair's value (twobody/matrices.hpp), in memory or streamed to `out`.
nb::dict custom_matrix_py(const nb::dict& c, const std::string& codegen, const std::string& out, const std::string& dtype,
                          const nb::dict& run) {
  const Call call = to_expression(c);
  MatrixOptions m;
  m.codegen = parse_cpu_codegen(codegen);
  m.output = out;
  m.dtype = parse_matrix_dtype(dtype);
  const RunOptions opt = to_run_options(run);
  MatrixResult r = without_gil([&] { return expression_matrix(call.f, call.a, call.cross ? &call.b : nullptr, m, opt); });
  nb::dict d;
  d["plan"] = r.info.plan;
  d["matrix"] = out.empty() ? to_numpy_matrix(std::move(r.values), r.rows, r.cols) : nb::none();
  return d;
}

std::string explain_custom_matrix_py(const nb::dict& c, const std::string& codegen, const std::string& out,
                                     const std::string& dtype, const nb::dict& run) {
  const Call call = to_expression(c);
  MatrixOptions m;
  m.codegen = parse_cpu_codegen(codegen);
  m.output = out;
  m.dtype = parse_matrix_dtype(dtype);
  return explain_expression_matrix(call.f, call.a, call.cross ? &call.b : nullptr, m, to_run_options(run));
}

}  // namespace

void bind_expressions(nb::module_& m) {
  using namespace nb::literals;
  m.def("custom", &custom_py, "call"_a, "codegen"_a, "run"_a);
  m.def("custom_matrix", &custom_matrix_py, "call"_a, "codegen"_a, "out"_a, "dtype"_a, "run"_a);
  m.def("explain_custom_matrix", &explain_custom_matrix_py, "call"_a, "codegen"_a, "out"_a, "dtype"_a, "run"_a);
  m.def("explain_custom", &explain_custom_py, "call"_a, "codegen"_a, "run"_a);
}

}  // namespace twobody::python
