#pragma once
// A pair expression's run on the CPU: the brute-force tiles of the engine's traversal
// (tiled_traversal.hpp), the interpreter's rows (expression_rows.hpp) and the reduction's sink.
#include <functional>
#include <memory>
#include <string>

#include "twobody/detail/cpu/grid_index.hpp"
#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/engine/traversal_cost.hpp"
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
  bool symmetric = false;     // f(a, b) and f(b, a) have the same bits (expr::is_symmetric)
};

// A run's cell grid for its cutoff: the tables' points sorted by cell and the units of the full
// shell (both orientations of each pair of cells: an auto run keeps each pair in the brute force's
// orientation, the anchor of lower original index) or, for a symmetric expression, the half
// shell; with the tables' rows in cell order. `why`
// says which traversal and why, for the plan.
struct ExpressionGrid {
  GridGeometry geometry;
  std::unique_ptr<GridIndex> a, b;  // b null for auto
  GridPlan plan;
  PairTable ta, tb;  // (tables: the sorted rows)
  bool chosen = false;
  // An auto run of a symmetric expression: the half shell (each pair of cells once, a cell with
  // itself as a triangle), each pair visited once in some orientation, which the value ignores.
  bool half = false;
  std::string why;
};

// The grid when the plan has a cutoff and `cost` (engine/traversal_cost.hpp, a backend's
// constants) says its evaluations cost less than every pair, or plan.path asks for it; `tables`:
// the sorted tables too (a run's, not an explanation's). Shared by the CPU and the GPU.
std::unique_ptr<ExpressionGrid> choose_expression_grid(const ExpressionPlan& plan, bool tables, const TraversalCost& cost);

// Per-point outputs of a grid's sorted points put back at the points' original indices (counts,
// values and exact sums: out[order[k]] = in[k]).
void put_back_in_order(PointReductions& x, std::vector<FixedSum>& exact, const std::vector<std::uint32_t>& order);

// The traversal a run takes with `cost`: brute-force tiles, or a grid for the cutoff (for the plan).
std::string describe_expression_traversal(const ExpressionPlan& plan, const TraversalCost& cost);

Result run_expression_cpu(const ExpressionPlan& plan);

// The grid of a run's exact sums of values from the largest |value| over its pairs (a first pass,
// on either backend); Error(Input) when that is infinite.
SumGrid expression_value_grid(double largest_abs_value);

}  // namespace twobody::cpu
