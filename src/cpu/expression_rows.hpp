#pragma once
// The CPU's interpreter of pair expressions (src/expr): the per-point prepass that computes the
// hoisted row columns once, and the evaluation of one anchor against a row of partners, up to
// 256 lanes at a time, each operation a loop over the lanes that the compiler vectorises.
// Reductions over the dimension run the loop body once per k = 0 … d−1, lanes inside, in stored
// order; every operation is ops.hpp's, so the values are the rule's bits.
#include <cstddef>
#include <vector>

#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/rows_abi.hpp"
#include "twobody/pair_table.hpp"

namespace twobody::cpu {

class ExpressionRows {
 public:
  static constexpr std::size_t kLanes = 256;

  // `b` may be `a` (auto). The tables must outlive this object. Runs the prepass (OpenMP).
  ExpressionRows(const expr::Compiled& c, const PairTable& a, const PairTable& b, int threads);

  // Registers of one thread.
  struct Workspace {
    std::vector<double> regs;
  };
  Workspace workspace() const { return Workspace{std::vector<double>(regs_ * kLanes)}; }

  // Evaluates rows with `fn`, the expression compiled (compiled_rows.hpp) over this object's
  // prepass columns, instead of the interpreter; null: the interpreter again. Same values.
  void use_compiled(expr::TbRowsFn fn) { compiled_ = fn; }

  // out[t] = value of pair (i, j0 + t), t < n: the value, or for a predicate 1 (true) and NaN
  // (false); NaN also where a --where predicate is false.
  void row(std::size_t i, std::size_t j0, std::size_t n, double* out, Workspace& w) const;

  // What the matrix tiles (matrix_tiles.hpp) read of the prepass: a row node's column (n values,
  // or n x d k-major for a vector: element k of point i at k * n + i), and the value of a
  // constant or scalar parameter node.
  const double* column(int id) const { return column_of_[static_cast<std::size_t>(id)]; }
  double value(int id) const { return slot_value_[static_cast<std::size_t>(id)]; }

  // The arguments of a generated evaluator (TbRowArgs, TbPairArgs): node → its column or a
  // parameter vector's d values (null for other nodes), and node → its constant or parameter value.
  const std::vector<const double*>& argument_columns() const { return slot_column_; }
  const std::vector<double>& argument_values() const { return slot_value_; }

  std::size_t size_a() const { return na_; }
  std::size_t size_b() const { return nb_; }

 private:
  // Where an operand's values are: a constant, a parameter vector's element k, a column of a
  // (one value a row: the anchor's), a column of b (lanes from j0), or a register (lanes).
  enum class From : unsigned char { Value, ParamVector, RowA, RowB, Register };
  struct Operand {
    From from = From::Value;
    double value = 0;
    const double* data = nullptr;  // ParamVector: d values; RowA/RowB: n (scalar) or n × d (vector, k-major)
    bool vector = false;
    int reg = 0;
  };
  struct Step {
    expr::Op op;
    int index = 0;
    int dst = 0;
    int nargs = 0;
    Operand args[3];
  };

  Operand operand(int id) const;
  // Element k of a constant or parameter node (a scalar's value whatever k).
  double constant_at(int id, std::size_t k) const;
  void prepass(const std::vector<int>& wanted, const PairTable& t, bool side_a, int threads);
  void run_steps(const std::vector<Step>& steps, std::size_t i, std::size_t j0, std::size_t n, std::size_t k,
                 double* regs) const;

  const expr::Compiled& c_;
  std::size_t na_ = 0, nb_ = 0;
  int dim_ = 0;
  std::vector<std::vector<double>> store_;      // columns the prepass computed (and coordinates, k-major)
  std::vector<const double*> column_of_;        // node → its per-point column (row nodes), or null
  std::vector<double> constant_;                // node → value (constants and parameters, scalars)
  std::vector<std::vector<double>> constant_vec_;  // node → d values (parameter vectors)
  std::vector<int> reg_of_;                     // pair node → register
  std::size_t regs_ = 0;
  std::vector<Step> before_, per_k_, after_;     // pair scalars, the loop over k, the finalise
  std::vector<int> reductions_;                  // pair reductions (their registers accumulate)
  Operand root_;
  expr::TbRowsFn compiled_ = nullptr;
  std::vector<const double*> slot_column_;  // node → column or parameter vector (TbRowArgs::column)
  std::vector<double> slot_value_;          // node → scalar constant or parameter (TbRowArgs::value)
};

}  // namespace twobody::cpu
