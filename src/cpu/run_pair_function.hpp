#pragma once
// The definition of cpu::run_pair_function (cpu/pair_function_runs.hpp), for the units that
// instantiate it, one a metric and dimension (src/CMakeLists.txt writes them).
#include <variant>

#include "twobody/detail/cpu/pair_function_runs.hpp"
#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/extend/pair_function.hpp"

namespace twobody::cpu {

// The forces' sums depend on the dimension only: instantiated once each in cpu/point_sums.cpp.
template <int D>
Result run_point_sums(const Plan& plan, const GridChoice* grid);

template <class PairFunction>
Result run_pair_function(const PairFunction& f, const Plan& plan, const GridChoice* grid) {
  constexpr int D = PairFunction::dim;
  if constexpr (D >= 1 && D <= 3) {
    if (std::holds_alternative<reduce::PointSums>(plan.stat->reduction)) return run_point_sums<D>(plan, grid);
  }
  return run_plan<D>(f, plan, grid);
}

}  // namespace twobody::cpu
