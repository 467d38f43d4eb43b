#pragma once
// A pair expression's run on the CPU: the brute-force tiles of the engine's traversal
// (tiled_traversal.hpp), the interpreter's rows (expression_rows.hpp) and the reduction's sink.
#include <functional>
#include <string>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/expr/rows_abi.hpp"
#include "twobody/exact_sums.hpp"
#include "twobody/expression.hpp"

namespace twobody::cpu {

struct ExpressionPlan {
  const expr::Compiled* f = nullptr;
  const Statistic* stat = nullptr;
  const PairTable* a = nullptr;
  const PairTable* b = nullptr;  // a for auto
  bool is_auto = true;
  KeyEdges edges;                // Count, Histogram, PairList, PerPoint
  int threads = 1;
  expr::TbRowsFn compiled = nullptr;  // the compiled evaluator (compiled_rows.hpp); null: the interpreter
  std::size_t max_pairs = 0;
  const std::function<void(double)>* progress = nullptr;
  // The distance on the coordinates beyond which no pair gives anything (expr/cutoff.hpp), 0 for
  // none: the CPU then traverses a cell grid when its cost model says it pays.
  double cutoff = 0;
  std::string cutoff_source;  // what set it, for the plan
  std::string path = "auto";  // RunOptions::path: "auto" (the cost model), "brute" or "grid"
};

// The traversal a CPU run takes: brute-force tiles, or a grid for the cutoff; `how` for the plan.
std::string describe_expression_traversal(const ExpressionPlan& plan);

Result run_expression_cpu(const ExpressionPlan& plan);

// The grid of a run's exact sums of values from the largest |value| over its pairs (a first pass,
// on either backend); Error(Input) when that is infinite.
SumGrid expression_value_grid(double largest_abs_value);

}  // namespace twobody::cpu
