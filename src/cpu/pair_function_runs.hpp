#pragma once
// The CPU backend's runs of the built-in pair functions, each compiled in translation units of its
// own: run_pair_function once a metric and dimension (src/CMakeLists.txt writes the units,
// cpu/run_<metric>_<dim>.cpp, from cpu/run_pair_function.hpp), the 2-D histograms in
// cpu/binned2d.cpp, the forces' sums of each dimension in cpu/point_sums.cpp. Instantiated together
// in cpu_backend.cpp they were the build's longest step (10 minutes on 2 cores, over 25 under the
// sanitizers); apart, they build in parallel and the backend sees declarations only.
#include <string>

#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {

struct GridChoice;

// run_plan<F::dim>(f, plan, grid), or run_point_sums for the forces.
template <class PairFunction>
Result run_pair_function(const PairFunction& f, const Plan& plan, const GridChoice* grid);

// The 2-D histograms (r_p, pi) and (s, mu): their own traversal of the binned pair functions.
Result run_binned2d(const Plan& plan);
// For --explain: the traversal the 2-D histogram's reach would get.
std::string describe_binned2d(const Plan& plan);

}  // namespace twobody::cpu
