#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/cpu_estimate.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/detail/cpu/pair_function_runs.hpp"
#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/detail/cpu/run_vectors.hpp"
#include "twobody/detail/engine/metric_dispatch.hpp"
#include "twobody/detail/engine/memory.hpp"

namespace twobody {

namespace {

// PerPoint keeps one private array per thread (cpu::PerPointSink): counts, and sums when weighted,
// for the anchors' set and, cross, the partners' set, plus the merged result.
// PointSums (forces) keeps a count and D + 1 exact 128-bit sums a point.
double per_point_bytes(const Plan& plan) {
  const double points = static_cast<double>(plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()));
  const bool sums = std::holds_alternative<reduce::PointSums>(plan.stat->reduction);
  const double each = sums ? 8.0 + 16.0 * (plan.a->dim() + 1) : plan.stat->weighted ? 16.0 : 8.0;
  return points * each * (std::max(1, plan.threads) + 1);
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string device() const override {
    return "host, " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  }
  std::string describe(const Plan& plan) const override {
    if (plan.stat->binning2d().active()) return cpu::describe_binned2d(plan);
    // After a run (the engine describes the plan it ran), the choice that run made, and after an
    // estimate (auto's, explained), the estimate's: choosing again would sort the points by cell
    // again (about a second at 10^7 points).
    cpu::GridChoice known;
    const bool estimated = estimated_for(plan);
    known.chosen = estimated ? estimated_->chosen : ran_grid_;
    known.why = estimated ? estimated_->why : ran_why_;
    const cpu::GridChoice grid = &plan == ran_plan_ || estimated ? std::move(known) : cpu::choose_grid(plan);
    const std::size_t tile = cpu::choose_tile(std::max(plan.a->size(), plan.b->size()), plan.threads);
    const bool fast = plan.stat->output() != OutputKind::Matrix && cpu::fast_rows_fit(plan.edges) &&
                      !std::holds_alternative<reduce::PointSums>(plan.stat->reduction) &&
                      visit_pair_function(*plan.stat, plan.a->dim(), [](const auto& f) {
                        return cpu::has_fast_path<std::decay_t<decltype(f)>>;
                      });
    return fmt::format(
        "cpu path: {}\ncpu kernel: {}, {}, {} OpenMP threads (dynamic schedule), a vectorised row per anchor, "
        "per-thread private outputs merged once{}",
        grid.why,
        grid.chosen ? std::string("both sets sorted by cell (counting sort in two cache-sized passes), cell pairs in cell order (largest first when one dominates)")
                    : fmt::format("tiles of {} x {} points", tile, tile),
        fast ? "float32 proxies with guard bands, pairs near an edge settled in float64" : "float64", plan.threads,
        plan.stat->regions() > 0
            ? fmt::format("; {} jackknife regions: each pair also counted once per region of its points ({} x {} counters a thread)",
                          plan.stat->regions(), plan.stat->regions(), plan.edges.nbins)
        : std::holds_alternative<reduce::PointSums>(plan.stat->reduction)
            ? fmt::format("; forces: each pair within the cutoff evaluated once in float64, (F, E/2) added to one point and "
                          "(-F, E/2) to the other as exact sums, per thread {} points x {} 128-bit sums, summed point by "
                          "point ({:.3g} MB in all)",
                          plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()), plan.a->dim() + 1, per_point_bytes(plan) / 1e6)
        : plan.stat->output() == OutputKind::PerPoint
            ? fmt::format("; per point: a private array of {} counters a thread (a row adds its anchor once, each partner "
                          "in range its own entry), summed point by point in thread order ({:.3g} MB in all)",
                          plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()), per_point_bytes(plan) / 1e6)
            : std::string());
  }
  std::string refuses_vectors(const Statistic&) const override { return {}; }
  bool runs_lattice() const override { return true; }
  void run_lattice(const LatticePlan& plan, LatticeMap& out) override { cpu::run_lattice(plan, out); }
  std::string describe_lattice(const LatticePlan& plan) const override {
    return fmt::format("tiles of 8 nodes per axis gathered by {} threads, each tile's sums in its thread's integers",
                       plan.threads);
  }
  Result run_vectors(const VectorPlan& plan) override {
    ran_vector_plan_ = &plan;
    return cpu::run_vectors(plan, ran_vector_path_);
  }
  std::string describe_vectors(const VectorPlan& plan) const override {
    return cpu::describe_vectors(plan, &plan == ran_vector_plan_ ? &ran_vector_path_ : nullptr);
  }
  Result run(const Plan& plan) override {
    if (plan.stat->binning2d().active()) return cpu::run_binned2d(plan);
    if (plan.stat->output() == OutputKind::PerPoint)
      require_memory(per_point_bytes(plan), fmt::format("per-point counts on {} threads", plan.threads));
    const bool same = estimated_for(plan);
    const std::unique_ptr<cpu::GridChoice> estimated = std::move(estimated_);
    const cpu::GridChoice grid = same ? std::move(*estimated) : cpu::choose_grid(plan);
    ran_plan_ = &plan;
    ran_why_ = grid.why;
    ran_grid_ = grid.chosen;
    return visit_pair_function(*plan.stat, plan.a->dim(),
                               [&](const auto& f) { return cpu::run_pair_function(f, plan, &grid); });
  }
  // estimate_cpu_run's seconds: the pairs the traversal will evaluate (the grid's candidates, or
  // all pairs) at kEvaluationsPerThreadSecond a thread.
  double estimate(const Plan& plan) {
    if (plan.stat->binning2d().active() || plan.stat->output() == OutputKind::Matrix) return -1;
    if (plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()) > kEstimatedPoints) return -1;
    estimated_ = std::make_unique<cpu::GridChoice>(cpu::choose_grid(plan));
    estimated_plan_ = &plan;
    estimated_sets_ = {plan.a, plan.b};
    const double evaluations = estimated_->chosen ? static_cast<double>(estimated_->plan.evaluations)
                                                  : static_cast<double>(pair_total(plan.a->size(), plan.b->size(), plan.is_auto()));
    return evaluations / (kEvaluationsPerThreadSecond * std::max(1, plan.threads));
  }

 private:
  // Whether estimate() indexed this very plan (its address and sets) and its index is still here.
  bool estimated_for(const Plan& plan) const {
    return estimated_ && estimated_plan_ == &plan && estimated_sets_ == std::pair{plan.a, plan.b};
  }
  // A paircount's rate on 16 threads was 4.4·10^9 evaluations a second (2.2·10^9 pairs found, ~2
  // evaluations each; bench/RESULTS.md, 2026-11-29): this is below it, for the slower outputs
  // (regions, weights, per-point counts).
  static constexpr double kEvaluationsPerThreadSecond = 1.5e8;
  static constexpr std::size_t kEstimatedPoints = std::size_t(1) << 18;
  std::unique_ptr<cpu::GridChoice> estimated_;  // estimate()'s cell index, for the same plan's run
  const Plan* estimated_plan_ = nullptr;
  std::pair<const PointSet*, const PointSet*> estimated_sets_{nullptr, nullptr};
  const Plan* ran_plan_ = nullptr;  // the plan run() last ran, and its grid choice
  std::string ran_why_;
  bool ran_grid_ = false;
  const VectorPlan* ran_vector_plan_ = nullptr;  // the vector plan run_vectors() last ran, and its path
  std::string ran_vector_path_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

EstimatedCpuRun estimate_cpu_run(const Plan& plan) {
  auto cpu = std::make_unique<CpuBackend>();
  const double seconds = cpu->estimate(plan);
  return {std::move(cpu), seconds};
}

}  // namespace twobody
