#pragma once
// What the code generators of pair expressions share (emit_rows.cpp for the CPU, emit_pair_cuda.cpp
// for the GPU): a literal written exactly, and each element-wise operation of ops.hpp as text. The
// two dialects differ only in the names of the functions they call, so both generated evaluators
// compute what ops.hpp computes, operation for operation.
#include <string>
#include <vector>

#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/ir.hpp"

namespace twobody::expr {

// The names a generated source calls: its prefix for ops.hpp's helpers (op_min, op_max,
// op_pow_int, truth, nan_value, from_bits) and its fabs, sqrt and twobody::portable's exp, log_any
// and pow.
struct Dialect {
  const char* helpers;  // "tb::" (CPU) or "tb_" (GPU)
  const char* fabs;
  const char* sqrt;
  const char* exp;
  const char* log;
  const char* pow;
};
extern const Dialect kHostDialect, kDeviceDialect;

// The order of a pair's program, which both generators (and the interpreter, expression_rows.cpp)
// follow: the pair scalars that read no reduction over the dimension (`before`), the Vector nodes
// and the reductions' steps inside the loop over k (`per_k`), then the scalars that read a
// reduction (`after`); `late[id]`: node id is a reduction or reads one. Topological order in each.
struct PairSchedule {
  std::vector<char> late;
  std::vector<int> before, per_k, after;
};
PairSchedule pair_schedule(const Compiled& c);

// A float64 literal with its exact bits: a hexadecimal float, or from_bits for inf and NaN.
std::string literal(double v, const Dialect& d);

// The expression of one element-wise operation on argument texts x, y, z (ops.hpp's apply_op).
std::string apply_text(Op op, int index, const std::string& x, const std::string& y, const std::string& z,
                       const Dialect& d);

}  // namespace twobody::expr
