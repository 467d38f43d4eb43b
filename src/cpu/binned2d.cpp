// The 2-D histograms' run and explanation (cpu/pair_function_runs.hpp declares them): every
// binned pair function is instantiated here, apart from the backend.
#include "twobody/detail/cpu/binned2d.hpp"

#include "twobody/detail/cpu/pair_function_runs.hpp"

namespace twobody::cpu {

Result run_binned2d(const Plan& plan) {
  const Binned2DTables tables = Binned2DTables::make(plan.stat->binning2d());
  return visit_binned2d(plan, tables, [&](const auto& f) { return run_binned2d(f, plan); });
}

std::string describe_binned2d(const Plan& plan) {
  const Binned2DReach reach(plan);
  const GridChoice grid = choose_grid(reach.plan);
  return fmt::format(
      "cpu path: {}\ncpu kernel: {}, float64 bins of each pair (binned pair function {}), {} OpenMP threads "
      "(dynamic schedule), per-thread private histograms of {} flat bins merged once{}",
      grid.why,
      grid.chosen ? "both sets sorted by cell, grid cells for the reach sqrt(rpmax^2 + pimax^2) or smax"
                  : fmt::format("tiles of {} x {} points", choose_tile(std::max(plan.a->size(), plan.b->size()), plan.threads),
                                choose_tile(std::max(plan.a->size(), plan.b->size()), plan.threads)),
      fmt::format("{}{}", plan.stat->binning2d().kind() == Binning2D::Kind::RpPi ? "RpPiBins" : "SMuBins",
                  plan.stat->binning2d().midpoint_los() ? "Mock" : ""),
      plan.threads, plan.edges.nbins,
      plan.stat->regions() > 0 ? fmt::format("; {} jackknife regions ({} x {} counters a thread)", plan.stat->regions(),
                                           plan.stat->regions(), plan.edges.nbins)
                             : std::string());
}

}  // namespace twobody::cpu
