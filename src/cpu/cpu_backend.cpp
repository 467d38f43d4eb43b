#include <algorithm>
#include <thread>

#include "twobody/backend.hpp"
#include "twobody/cpu/run_plan.hpp"
#include "twobody/metric_dispatch.hpp"

namespace twobody {

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string device() const override {
    return "host, " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  }
  std::string describe(const Plan& plan) const override {
    const std::size_t tile = cpu::choose_tile(std::max(plan.a->size(), plan.b->size()), plan.threads);
    return "cpu path: float64 brute force in tiles of " + std::to_string(tile) + " x " + std::to_string(tile) +
           " points, " + std::to_string(plan.threads) +
           " OpenMP threads (dynamic schedule), a vectorised key row per anchor, per-thread private outputs merged once";
  }
  Result run(const Plan& plan) override {
    return visit_pair_function(*plan.stat, plan.a->dim(), [&](const auto& f) {
      return cpu::run_plan<std::decay_t<decltype(f)>::dim>(f, plan);
    });
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace twobody
