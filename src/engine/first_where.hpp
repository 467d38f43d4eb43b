#pragma once
// The first index of x[0, n) whose value is bad (a predicate), or n: one parallel pass, so that a
// check of every value of a large column reports the first offender as a sequential scan would
// (the lattice maps' 3·10^7 sources took 0.36 s of planning in sequential passes).
#include <cstddef>

namespace twobody {

template <class Bad>
std::size_t first_where(const double* x, std::size_t n, Bad bad) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  std::ptrdiff_t first = m;
#pragma omp parallel for reduction(min : first) if (m > 100000)
  for (std::ptrdiff_t i = 0; i < m; ++i)
    if (bad(x[i]) && i < first) first = i;
  return static_cast<std::size_t>(first);
}

}  // namespace twobody
