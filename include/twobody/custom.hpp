#pragma once
// User pair functions: any struct shaped like the built-in ones (see pair_function.hpp) with a
// compile-time dimension `dim`. The engine validates and plans as for a built-in metric; the
// traversal, binning and outputs are the engine's own, instantiated for the user's function.
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

#include "twobody/backend.hpp"
#include "twobody/cpu/run_plan.hpp"

namespace twobody {

// Validation and planning shared with run(); the key edges are mapped through `key_of`.
Plan make_plan_base(const Statistic& stat, const PointSet& a, const PointSet* b,
                    const RunOptions& opt, int dim);

template <class PairFunction>
Result run_custom(const PairFunction& f, const Statistic& stat, const PointSet& a,
                  const PointSet* b, const RunOptions& opt = {}) {
  Plan plan = make_plan_base(stat, a, b, opt, PairFunction::dim);
  if (stat.output != OutputKind::Matrix) plan.edges = KeyEdges::make(stat.binning, f);
  const auto t0 = std::chrono::steady_clock::now();
  Result r = cpu::run_plan<PairFunction::dim>(f, plan);
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = "cpu";
  r.info.device = "host";
  r.info.plan = plan.explanation;
  r.info.n_a = a.size();
  r.info.n_b = b ? b->size() : 0;
  return r;
}

}  // namespace twobody
