#pragma once
// A pair expression's run on the CPU: the brute-force tiles of the engine's traversal
// (tiled_traversal.hpp), the interpreter's rows (expression_rows.hpp) and the reduction's sink.
#include <string>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/expr/rows_abi.hpp"
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
};

Result run_expression_cpu(const ExpressionPlan& plan);

}  // namespace twobody::cpu
