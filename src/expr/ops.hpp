#pragma once
// What each operation of the language computes on one float64 (docs/expressions.md, "the rule"):
// the one definition that constant folding, the per-point prepass and the interpreter's lanes
// share, so that every evaluator of an expression rounds the same way. +, −, ×, / and sqrt are
// IEEE's correctly rounded operations; exp, log and pow are twobody::portable's (the same bits
// under any compiler and on the GPU); nothing here may be contracted into an FMA (the library is
// compiled with -ffp-contract=off).
#include <cmath>

#include "twobody/detail/expr/ir.hpp"
#include "twobody/extend/portable_math.hpp"

namespace twobody::expr {

inline double nan_value() { return portable::detail::nan(); }

// min and max propagate NaN (a NaN value is in no bin and sums to nothing), else the smaller
// (larger) operand, the first on a tie (so min(0, −0) is 0 and min(−0, 0) is −0).
inline double op_min(double x, double y) { return (x != x || y != y) ? nan_value() : (y < x ? y : x); }
inline double op_max(double x, double y) { return (x != x || y != y) ? nan_value() : (y > x ? y : x); }

// x^n for a literal integer n: x·x·…·x left to right (n − 1 roundings), 1/x^|n| for n < 0, 1 for 0.
inline double op_pow_int(double x, int n) {
  const int m = n < 0 ? -n : n;
  double p = m == 0 ? 1.0 : x;
  for (int k = 1; k < m; ++k) p = p * x;
  return n < 0 ? 1.0 / p : p;
}

inline double truth(bool b) { return b ? 1.0 : 0.0; }

// The scalar value of an element-wise op (not a leaf, not a reduction) on arguments x, y, z.
inline double apply_op(Op op, int index, double x, double y, double z) {
  switch (op) {
    case Op::Neg: return -x;
    case Op::Add: return x + y;
    case Op::Sub: return x - y;
    case Op::Mul: return x * y;
    case Op::Div: return x / y;
    case Op::PowInt: return op_pow_int(x, index);
    case Op::Pow: return portable::pow(x, y);
    case Op::Abs: return std::fabs(x);
    case Op::Sqrt: return std::sqrt(x);
    case Op::Exp: return portable::exp(x);
    case Op::Log: return portable::log_any(x);
    case Op::Min2: return op_min(x, y);
    case Op::Max2: return op_max(x, y);
    case Op::Less: return truth(x < y);
    case Op::LessEq: return truth(x <= y);
    case Op::Greater: return truth(x > y);
    case Op::GreaterEq: return truth(x >= y);
    case Op::Equal: return truth(x == y);
    case Op::NotEqual: return truth(x != y);
    case Op::And: return truth(x != 0 && y != 0);
    case Op::Or: return truth(x != 0 || y != 0);
    case Op::Not: return truth(x == 0);
    case Op::If: return x != 0 ? y : z;
    case Op::Filter: return x != 0 ? y : nan_value();
    default: return nan_value();
  }
}

// A reduction's running value after element k (k = 0 starts it): a sum starts from +0 (as the
// built-in Euclidean key's does), a min or max from element 0.
inline double reduce_step(Op op, double acc, double x, bool first) {
  switch (op) {
    case Op::Sum: return (first ? 0.0 : acc) + x;
    case Op::ReduceMin: return first ? x : op_min(acc, x);
    default: return first ? x : op_max(acc, x);
  }
}

}  // namespace twobody::expr
