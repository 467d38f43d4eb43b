#pragma once
// User pair functions on the CPU: any type that satisfies twobody::PairFunction
// (twobody/extend/pair_function.hpp). The engine validates and plans as for a built-in metric; the
// traversal, binning and outputs are the engine's own, instantiated for the user's function.
// (twobody/extend/run_custom.cuh does the same on the GPU.)
//
//   struct Manhattan2 {
//     static constexpr int dim = 2;
//     template <class T> TWOBODY_HD T key(const T* a, const T* b) const {
//       return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]); }
//     double key_of(double v) const { return v; }
//     double natural_of(double k) const { return k; }
//   };
//   auto r = twobody::run_custom(Manhattan2{}, stat, points, nullptr);
#include <chrono>

#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/extend/pair_function.hpp"

namespace twobody {

template <PairFunction F>
Result run_custom(const F& f, const Statistic& stat, const PointSet& a,
                  const PointSet* b, const RunOptions& opt = {}) {
  Plan plan = make_plan_base(stat, a, b, opt, F::dim);
  if (stat.output() != OutputKind::Matrix) plan.edges = KeyEdges::make(stat.binning(), f, stat.includes_hi());
  const auto t0 = std::chrono::steady_clock::now();
  Result r = cpu::run_plan<F::dim>(f, plan);
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = "cpu";
  r.info.device = "host";
  r.info.plan = plan.explanation;
  r.info.n_a = a.size();
  r.info.n_b = b ? b->size() : 0;
  return r;
}

}  // namespace twobody
