#pragma once
// User pair functions on the GPU: include this from a .cu file (compiled by nvcc) and call
// twobody::cuda::run_custom with a twobody::PairFunction (twobody/extend/pair_function.hpp) whose
// key() is TWOBODY_HD. The engine validates and plans as for a built-in
// metric and instantiates its own pair kernel, outputs and privatisation for the function.
// Without a FastPath specialisation (a float32 proxy and its error bound) every pair is evaluated
// with the function in float64, so counts equal the CPU backend's exactly (compile with nvcc's
// --fmad=false, as the library is: a fused multiply-add would round the float64 key differently
// from the CPU's).
#include <chrono>

#include "twobody/detail/cuda/run_on_device.cuh"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/extend/run_custom.hpp"

namespace twobody::cuda {

template <PairFunction F>
Result run_custom(const F& f, const Statistic& stat, const PointSet& a, const PointSet* b,
                  const RunOptions& opt = {}) {
  Plan plan = make_plan_base(stat, a, b, opt, F::dim);
  if (stat.output() != OutputKind::Matrix) plan.edges = KeyEdges::make(stat.binning(), f, stat.includes_hi());
  const auto t0 = std::chrono::steady_clock::now();
  Result r = run_on_device(f, plan);
  exact_from_float64(r, plan.grids);
  round_exact_sums(r);
  r.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.info.backend = "cuda";
  r.info.device = device_info().name;
  r.info.plan = plan.explanation;
  r.info.n_a = a.size();
  r.info.n_b = b ? b->size() : 0;
  return r;
}

}  // namespace twobody::cuda
