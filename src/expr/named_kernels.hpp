#pragma once
// The matrix kernels' table (twobody/matrices.hpp, matrix_kernels()) and the lookup of a --kernel.
#include <string>
#include <string_view>

#include "twobody/matrices.hpp"

namespace twobody::expr {

struct KernelChoice {
  const NamedKernel* named = nullptr;  // null: `text` is the user's expression
  std::string text;                    // the expression to parse
};

// A name or alias of matrix_kernels(), else the text as an expression. A single word that names
// no kernel is Error(Config) listing the names (a typo, not an expression of one variable).
KernelChoice resolve_kernel(std::string_view kernel);

}  // namespace twobody::expr
