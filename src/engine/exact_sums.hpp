#pragma once
// The engine's side of exact sums (twobody/exact_sums.hpp): the grids a run's sums go on, fixed
// from the whole input before the run, and the float64 sums a Result reports, made from them.
#include "twobody/points.hpp"
#include "twobody/result.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

// The grids for `s` on sets a and b (b null: auto): bounds from the largest |weight| of each set
// and the outer bin edge. Error(Input) when a bound overflows float64 (weights beyond ~1e154).
SumGrids sum_grids_for(const Statistic& s, const PointSet& a, const PointSet* b);

// Result's float64 sums set from its exact ones (each rounded once); sums with no exact entries
// are left as they are.
void round_exact_sums(Result& r);

// The grids set, and any float64 sum a backend gave without its exact sum put on the grid (so
// that pieces of a split run still add as exact sums); exact sums already there are kept. The
// CUDA backend gives every sum exactly; this keeps a path that sums in float64 from losing its
// sums in a merge.
void exact_from_float64(Result& r, const SumGrids& grids);

}  // namespace twobody
