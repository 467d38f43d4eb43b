// The built-in matrix kernels, each declared once as a pair expression: its value is that
// expression's float64 rule (docs/exactness.md), whether the tiles or the interpreter evaluate
// it. SciPy's names are aliases where SciPy has the same function.
#include "twobody/detail/expr/named_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "twobody/error.hpp"

namespace twobody {

namespace {

constexpr const char* kPearson = "dot(a - mean(a), b - mean(b)) / (norm(a - mean(a)) * norm(b - mean(b)))";

constexpr std::array<NamedKernel, 9> kKernels{{
    {"l2", "euclidean", "sqrt(sum((a - b)^2))", false, "Euclidean distance (SciPy euclidean)"},
    {"sqeuclidean", "", "sum((a - b)^2)", false, "squared Euclidean distance (SciPy sqeuclidean)"},
    {"lp", "minkowski", "sum(abs(a - b)^p)^(1/p)", false, "Minkowski distance of order --p >= 1 (SciPy minkowski)"},
    {"l1", "cityblock,manhattan", "sum(abs(a - b))", false, "sum of absolute differences (SciPy cityblock)"},
    {"chebyshev", "linf", "max(abs(a - b))", false, "largest absolute difference (SciPy chebyshev)"},
    {"cosine", "", "1 - dot(a, b) / (norm(a) * norm(b))", false,
     "cosine distance (SciPy cosine); NaN where a row is zero"},
    {"dot", "", "dot(a, b)", false, "dot product"},
    {"pearson", "", kPearson, false,
     "Pearson correlation r (SciPy's correlation distance is 1 - r); NaN where a row is constant"},
    {"spearman", "", kPearson, true,
     "Spearman correlation: Pearson of the rows' ranks (ties averaged, as scipy.stats.rankdata); NaN where a row is constant"},
}};

bool answers_to(const NamedKernel& k, std::string_view name) {
  if (name == k.name) return true;
  const std::string_view aliases = k.aliases;
  for (std::size_t s = 0; s < aliases.size();) {
    const std::size_t e = std::min(aliases.find(',', s), aliases.size());
    if (aliases.substr(s, e - s) == name) return true;
    s = e + 1;
  }
  return false;
}

// A word of letters, digits and '_': a kernel's name as opposed to an expression.
bool is_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::span<const NamedKernel> matrix_kernels() { return kKernels; }

namespace expr {

KernelChoice resolve_kernel(std::string_view kernel) {
  for (const NamedKernel& k : kKernels)
    if (answers_to(k, kernel)) return KernelChoice{&k, k.expression};
  if (is_name(kernel)) {
    std::string names;
    for (const NamedKernel& k : kKernels) names += fmt::format("{}{}", names.empty() ? "" : ", ", k.name);
    throw_config(fmt::format("--kernel {}: unknown kernel (named kernels: {}; or write an expression over a and b, "
                             "e.g. 'sum(abs(a - b))')",
                             kernel, names));
  }
  return KernelChoice{nullptr, std::string(kernel)};
}

}  // namespace expr

}  // namespace twobody
