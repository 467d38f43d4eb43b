#pragma once
// The typed IR of a pair expression: a hash-consed DAG (equal subexpressions are one node, so
// common subexpressions are computed once), built from the syntax tree with every name resolved,
// every type checked and every constant subexpression folded by the evaluator's own operations
// (ops.hpp), so that folding rounds as evaluation would. Nodes are in topological order: a
// node's arguments come before it.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace twobody::expr {

enum class Op : std::uint8_t {
  Const,     // value
  Param,     // scalar parameter, slot index
  ParamVec,  // vector parameter of length d, slot index
  ColA, ColB,      // a named scalar column, index into the schema's names
  CoordA, CoordB,  // a[index], b[index]
  VecA, VecB,      // the whole vectors a, b
  Neg, Add, Sub, Mul, Div,
  PowInt,    // x^index, index a literal integer (repeated multiplication, docs/expressions.md)
  Pow,       // portable::pow
  Abs, Sqrt, Exp, Log,
  Min2, Max2,
  Less, LessEq, Greater, GreaterEq, Equal, NotEqual,
  And, Or, Not,
  If,        // if(arg0, arg1, arg2)
  Sum, ReduceMin, ReduceMax,  // over the dimension, k = 0 … d−1 in stored order
  Filter,    // the --where predicate arg0 over the value arg1: the value where true, NaN where not
};

// What a node depends on, as bits: a parameter, a's row, b's row. A pair node depends on both
// rows; a node of one row only is hoisted out of the pair loop into a per-point column.
enum SideBits : std::uint8_t { kSideParam = 1, kSideA = 2, kSideB = 4, kSidePair = kSideA | kSideB };

struct Node {
  Op op = Op::Const;
  bool vector = false;  // a Vector (length d) rather than a Scalar
  bool boolean = false;  // a Bool (0 or 1) rather than a value
  std::uint8_t side = 0;
  int arg[3] = {-1, -1, -1};
  double value = 0;  // Const
  int index = 0;     // Param/ParamVec slot, column, coordinate, PowInt exponent
  int column = 0;    // where the text first wrote it (1-based), for errors
  std::uint8_t origin = 0;  // which text wrote it: 0 the pair function, 1 the where predicate
  int arity() const { return arg[0] < 0 ? 0 : arg[1] < 0 ? 1 : arg[2] < 0 ? 2 : 3; }
};

// The DAG and what the front end learnt about it.
struct Graph {
  std::vector<Node> nodes;
  int root = -1;
  int dim = 0;
  std::vector<std::string> columns_a, columns_b;  // the schemas' names
  std::vector<std::string> param_names;          // slot → name (scalar and vector slots share numbering)
  std::vector<double> scalars;                    // slot → value (scalar slots)
  std::vector<std::vector<double>> vectors;       // slot → value (vector slots)

  // The node for (op, args, value, index), created when new: hash-consing.
  int intern(const Node& n);

 private:
  std::map<std::tuple<int, int, int, int, std::uint64_t, int, bool, bool>, int> index_;
};

// Whether a node is a reduction over the dimension.
inline bool is_reduction(Op op) { return op == Op::Sum || op == Op::ReduceMin || op == Op::ReduceMax; }

// The canonical text of node `id`: fully parenthesised, names resolved, parameters as slots ($0),
// literals to 17 significant digits. Equal texts are equal functions (the kernel cache's key).
std::string canonical_text(const Graph& g, int id);

}  // namespace twobody::expr
