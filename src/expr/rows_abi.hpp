#pragma once
// The C ABI between the CPU backend and a pair expression compiled into a shared object
// (emit_rows.cpp writes the source, compiled_rows.cpp loads it): one function,
//   extern "C" void tb_rows(const TbRowArgs*);
// computing the values of one anchor against a run of partners, exactly what
// ExpressionRows::row computes. Only pointers and integers cross the boundary, so neither the
// traversal nor the sinks nor any C++ type of the library depends on the compiler that built the
// object. The fields are written once, here, and pasted as text into the generated source.
#include <cstdint>

#define TWOBODY_ROW_ARGS_FIELDS                                                                     \
  const double* const* column; /* node -> its per-point column (k-major for a Vector), or a      \
                                  parameter vector's d values */                                  \
  const double* value;         /* node -> its value (parameters and what they alone compute) */   \
  unsigned long long na, nb, d, i, j0, n; /* set sizes, dimension, anchor, first partner, count */ \
  double* out;                 /* n values */

namespace twobody::expr {

struct TbRowArgs {
  TWOBODY_ROW_ARGS_FIELDS
};

using TbRowsFn = void (*)(const TbRowArgs*);

// Raised when the struct or the function's meaning changes: it is part of every cache key and
// the object's tb_rows_abi() must return it.
inline constexpr int kRowsAbi = 1;

}  // namespace twobody::expr
