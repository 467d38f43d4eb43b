#pragma once
// Pair functions written at run time: an expression over the pair's two points a and b, their
// named columns and parameters (docs/expressions.md has the language and its rule), parsed and
// type-checked once, then run through the engine's traversal with any reduction:
//
//   twobody::ExpressionParams p;
//   p.scalars["h"] = 0.5;
//   auto f = twobody::PairExpression::parse("exp(-dot(a-b, a-b)/(2*h^2))", table.schema(), nullptr, p);
//   twobody::Statistic s;
//   s.reduction = twobody::reduce::Sum{};
//   twobody::Result r = twobody::run_expression(f, s, table, nullptr);   // r.value_sum[0]
//
// The value is the expression evaluated literally in float64 (docs/exactness.md): operations in
// written order, reductions over the dimension in stored order, no FMA, exp/log/pow from
// twobody::portable. Every evaluator gives those bits.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twobody/binning.hpp"
#include "twobody/engine.hpp"
#include "twobody/pair_table.hpp"
#include "twobody/result.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

namespace expr {
struct Compiled;  // the IR and its analysis (src/expr/compiled.hpp), for the backends
}

// Run-time arguments: a new value never changes the expression's canonical form.
struct ExpressionParams {
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<double>> vectors;  // each of the points' dimension
};

// What a pair produces: a value (histograms, sums, ranges) or a predicate (pairs, counts).
enum class ValueType { Scalar, Bool };

// How a backend can evaluate it: Pointwise (no vectors between a and b: a few scalar columns a
// pair), Decomposable (up to four reductions over the dimension of both rows, then scalar
// work), DotLike (one sum of products of a transform of a and one of b: a matrix product).
enum class FunctionClass { Pointwise, Decomposable, DotLike };

class PairExpression {
 public:
  // Error(Config) with the column and a caret for a malformed or ill-typed text. `b` null: both
  // points come from `a`'s table. `where`, when not empty, is a predicate: pairs where it is
  // false produce nothing (a value of NaN, in no bin, summed nowhere).
  static PairExpression parse(std::string_view text, const Schema& a, const Schema* b = nullptr,
                              const ExpressionParams& params = {}, std::string_view where = {});

  ValueType result() const;
  FunctionClass function_class() const;
  // Fully parenthesised, names resolved, parameters as slots: equal texts, equal functions.
  std::string canonical() const;
  // The canonical form, the per-point columns hoisted out of the pair loop, the class and traits.
  std::string explain() const;
  const std::string& text() const;
  const std::string& where() const;  // the predicate's text, empty without one
  const expr::Compiled& compiled() const { return *c_; }

 private:
  std::shared_ptr<const expr::Compiled> c_;
};

const char* to_string(FunctionClass c);

// How the CPU evaluates a pair expression: Off, the interpreter; On, the expression compiled by
// the system compiler ($TWOBODY_CXX, else $CXX, else the one that built twobody) into a shared
// object kept in the kernel cache ($TWOBODY_CACHE_DIR, `twobody cache`) whenever that works;
// Auto, compiled when the object is cached or the run is long enough to repay a compile. The
// same bits every way; a compiler that is missing or fails leaves the interpreter, and the plan
// (Result::info.plan, --explain) says which evaluator ran and why.
enum class CpuCodegen { Auto, On, Off };
// "auto", "on", "off"; Error(Config) otherwise.
CpuCodegen parse_cpu_codegen(std::string_view s);

// Runs the expression as the statistic's pair function over `a` (auto) or `a` × `b` (cross);
// stat.traversal must agree. Reductions: Count, PairList, PerPoint (a predicate, or a value's
// range), Histogram (a value's bins), Sum and PerPointValue; weights and jackknife regions are
// not taken. RunOptions::backend "cpu" or "auto": the CPU (the interpreter or the compiled object,
// CpuCodegen); "cuda": the current CUDA device, the expression generated as CUDA, compiled by
// NVRTC and linked into the reduction's kernel by nvJitLink at run time (cached on disk like the
// CPU's objects), every pair evaluated in float64 as the CPU does, so the results are the CPU's
// bits; Error(Backend) with the reason where there is no device, NVRTC or nvJitLink.
Result run_expression(const PairExpression& f, const Statistic& stat, const PairTable& a, const PairTable* b,
                      const RunOptions& opt = {}, CpuCodegen codegen = CpuCodegen::Auto);
// What a run over an expression gives, as `twobody custom --emit` and twobody.custom name it: the
// sum of the values, the count of pairs (a predicate's true pairs, or the values in `range`), a
// histogram of the values over `range`, the pairs themselves, or per-point values. `per_point`:
// "count" (the partners), "sum", "min" or "max" of the partners' values; empty is "sum" for a
// value and "count" for a predicate.
enum class ExpressionEmit { Sum, Count, Histogram, Pairs, PerPoint };
struct ExpressionOutput {
  ExpressionEmit emit = ExpressionEmit::Histogram;
  std::optional<Binning> range;  // a value's bins (histogram) or range (count, pairs, per-point count)
  std::string per_point;
};
// "sum", "count", "histogram", "pairs", "per-point"; Error(Config) otherwise.
ExpressionEmit parse_expression_emit(std::string_view s);
const char* to_string(ExpressionEmit e);
// The statistic that gives `out` for `f` over one table (cross false) or two. Error(Config) for a
// value's count, histogram, pairs or per-point count without a range, a range given to a
// predicate's histogram, or `per_point` other than count/sum/min/max or without per-point.
Statistic expression_statistic(const PairExpression& f, bool cross, const ExpressionOutput& out);

// What run_expression would do: the expression's explain() and the run's plan.
std::string explain_expression(const PairExpression& f, const Statistic& stat, const PairTable& a,
                               const PairTable* b, const RunOptions& opt = {}, CpuCodegen codegen = CpuCodegen::Auto);

}  // namespace twobody
